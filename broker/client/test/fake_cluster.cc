#include "broker/client/test/fake_cluster.h"

#include <utility>

#include "broker/client/subscription.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"
#include "broker/remoting/wire_text.h"
#include "sim/disk_profile.h"

namespace mqlab::client::testing {

using remoting::RequestCode;
using remoting::ResponseCode;

// --- SimWorld -----------------------------------------------------------------------------

SimWorld::SimWorld(uint64_t seed)
    : random_(seed),
      clock_(scheduler_),
      disk_(scheduler_, sim::DiskProfile::instant(), sim::SimDiskOptions{}, random_.split()),
      world_executor_(scheduler_, sim::kWorldOwner),
      network_(world_executor_, "10.0.0.254") {}

SimWorld::~SimWorld() { processes_.clear(); }

sim::SimEnv& SimWorld::start_process(const std::string& name, const std::string& host) {
  processes_.push_back(std::make_unique<sim::SimProcess>(name, scheduler_, clock_, std::vector<sim::Mount>{{"/", &disk_}},
                                                         random_.split(), &network_, host));
  return processes_.back()->start();
}

bool SimWorld::run_until(const std::function<bool()>& pred, Nanos limit) {
  return scheduler_.run_until_true(pred, limit);
}

// --- FakeServer ---------------------------------------------------------------------------

FakeServer::FakeServer(env::Env& env, const std::string& name, const std::string& address)
    : env_(env), server_(env, name) {
  const Status started = server_.start(address);
  MQ_ASSERT_MSG(started.ok(), started.to_string());
  address_ = server_.address();
}

FakeServer::~FakeServer() { server_.shutdown(); }

void FakeServer::set_handler(int32_t code, Handler handler) {
  if (handler) {
    overrides_[code] = std::move(handler);
  } else {
    overrides_.erase(code);
  }
  ensure_registered(code);
}

void FakeServer::set_default(int32_t code, Handler handler) {
  defaults_[code] = std::move(handler);
  ensure_registered(code);
}

void FakeServer::ensure_registered(int32_t code) {
  if (!registered_.insert(code).second) return;
  server_.register_processor(code, [this, code](const RemotingCommand& request, ResponseChannel channel) {
    received_.push_back(request);
    if (const auto it = overrides_.find(code); it != overrides_.end()) return it->second(request, std::move(channel));
    if (const auto it = defaults_.find(code); it != defaults_.end()) return it->second(request, std::move(channel));
    channel.reply(ResponseCode::REQUEST_CODE_NOT_SUPPORTED, "request type " + std::to_string(code) + " not supported");
  });
}

std::vector<RemotingCommand> FakeServer::received(int32_t code) const {
  std::vector<RemotingCommand> out;
  for (const RemotingCommand& request : received_) {
    if (request.code == code) out.push_back(request);
  }
  return out;
}

// --- FakeNameServer -----------------------------------------------------------------------

FakeNameServer::FakeNameServer(env::Env& env, const std::string& address) : FakeServer(env, "namesrv", address) {
  set_default(RequestCode::GET_ROUTEINFO_BY_TOPIC, [this](const RemotingCommand& request, ResponseChannel channel) {
    const std::string topic = request.optional_ext_string("topic").value_or("");
    const auto it = routes_.find(topic);
    if (it == routes_.end()) {
      return channel.reply(ResponseCode::TOPIC_NOT_EXIST, "No topic route info in name server for the topic: " + topic);
    }
    RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
    const std::string json = it->second.to_json();
    response.body.assign(json.begin(), json.end());
    channel.reply(std::move(response));
  });
  set_default(RequestCode::GET_BROKER_CLUSTER_INFO, [this](const RemotingCommand& request, ResponseChannel channel) {
    RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
    const std::string json = cluster_info.to_json();
    response.body.assign(json.begin(), json.end());
    channel.reply(std::move(response));
  });
}

remoting::TopicRouteData make_route(const std::vector<std::pair<std::string, std::string>>& brokers, int32_t queues,
                                    int32_t perm) {
  remoting::TopicRouteData route;
  for (const auto& [name, address] : brokers) {
    route.queueDatas.push_back({name, queues, queues, perm, 0});
    route.brokerDatas.push_back({"DefaultCluster", name, {{0, address}}});
  }
  return route;
}

// --- FakeBroker ---------------------------------------------------------------------------

namespace {

RemotingCommand offset_response(const RemotingCommand& request, int64_t offset) {
  RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
  response.set_ext_int("offset", offset);
  return response;
}

std::pair<std::string, int32_t> queue_key(const RemotingCommand& request) {
  return {request.optional_ext_string("topic").value_or(""),
          static_cast<int32_t>(request.ext_int("queueId").value())};
}

}  // namespace

FakeBroker::FakeBroker(env::Env& env, std::string broker_name, const std::string& address,
                       store::HostAddress store_host)
    : FakeServer(env, broker_name, address), broker_name_(std::move(broker_name)), store_host_(store_host) {
  set_default(RequestCode::SEND_MESSAGE_V2, [this](const auto& r, auto c) { on_send(r, std::move(c)); });
  set_default(RequestCode::PULL_MESSAGE, [this](const auto& r, auto c) { on_pull(r, std::move(c)); });
  set_default(RequestCode::CONSUMER_SEND_MSG_BACK, [this](const auto& r, auto c) { on_send_back(r, std::move(c)); });
  set_default(RequestCode::HEART_BEAT, [this](const RemotingCommand& request, ResponseChannel channel) {
    Result<remoting::HeartbeatData> data =
        remoting::HeartbeatData::parse(std::string(request.body.begin(), request.body.end()));
    if (!data.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, data.status().to_string());
    for (const remoting::ConsumerData& consumer : data->consumerDataSet) consumers[consumer.groupName].insert(data->clientID);
    channel.reply(ResponseCode::SUCCESS);
  });
  set_default(RequestCode::UNREGISTER_CLIENT, [this](const RemotingCommand& request, ResponseChannel channel) {
    const auto group = request.optional_ext_string("consumerGroup");
    if (group) consumers[*group].erase(request.optional_ext_string("clientID").value_or(""));
    channel.reply(ResponseCode::SUCCESS);
  });
  set_default(RequestCode::GET_CONSUMER_LIST_BY_GROUP, [this](const RemotingCommand& request, ResponseChannel channel) {
    const std::string group = request.optional_ext_string("consumerGroup").value_or("");
    const auto it = consumers.find(group);
    if (it == consumers.end() || it->second.empty()) {
      return channel.reply(ResponseCode::SYSTEM_ERROR, "no consumer for this group, " + group);
    }
    RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
    const std::string body = api::consumer_list_body({it->second.begin(), it->second.end()});
    response.body.assign(body.begin(), body.end());
    channel.reply(std::move(response));
  });
  set_default(RequestCode::QUERY_CONSUMER_OFFSET, [this](const RemotingCommand& request, ResponseChannel channel) {
    const auto [topic, queue_id] = queue_key(request);
    const auto it = committed.find({request.optional_ext_string("consumerGroup").value_or(""), topic, queue_id});
    if (it == committed.end()) return channel.reply(ResponseCode::QUERY_NOT_FOUND, "Not found, V3_0_6_SNAPSHOT maybe");
    channel.reply(offset_response(request, it->second));
  });
  set_default(RequestCode::UPDATE_CONSUMER_OFFSET, [this](const RemotingCommand& request, ResponseChannel channel) {
    const auto [topic, queue_id] = queue_key(request);
    committed[{request.optional_ext_string("consumerGroup").value_or(""), topic, queue_id}] =
        request.ext_int("commitOffset").value();
    channel.reply(ResponseCode::SUCCESS);
  });
  set_default(RequestCode::GET_MAX_OFFSET, [this](const RemotingCommand& request, ResponseChannel channel) {
    const auto [topic, queue_id] = queue_key(request);
    channel.reply(offset_response(request, max_offset(topic, queue_id)));
  });
  set_default(RequestCode::UPDATE_AND_CREATE_TOPIC, [](const RemotingCommand&, ResponseChannel channel) {
    channel.reply(ResponseCode::SUCCESS);
  });
  set_default(RequestCode::GET_MIN_OFFSET, [](const RemotingCommand& request, ResponseChannel channel) {
    channel.reply(offset_response(request, 0));
  });
}

FakeBroker::Stored FakeBroker::put(store::MessageToStore message) {
  message.store_host = store_host_;
  if (message.born_timestamp_ms == 0) message.born_timestamp_ms = env_.clock().wall_ms();
  const std::string topic = message.topic;
  const int32_t queue_id = message.queue_id;
  store::EncodeOutcome encoded = store::encode_message(message, 4 * 1024 * 1024);
  MQ_ASSERT_MSG(encoded.error == store::EncodeError::kNone, encoded.reason);
  std::vector<std::vector<uint8_t>>& records = queues_[{topic, queue_id}];
  const Stored stored{static_cast<int64_t>(records.size()), next_physical_offset_};
  encoded.message.patch(QueueOffset(stored.queue_offset), PhyOffset(stored.physical_offset), env_.clock().wall_ms());
  next_physical_offset_ += encoded.message.size();
  by_physical_offset_[stored.physical_offset] = encoded.message.bytes;
  records.push_back(std::move(encoded.message.bytes));
  wake(topic, queue_id);
  return stored;
}

int64_t FakeBroker::max_offset(const std::string& topic, int32_t queue_id) const {
  const auto it = queues_.find({topic, queue_id});
  return it == queues_.end() ? 0 : static_cast<int64_t>(it->second.size());
}

std::vector<store::MessageProperties> FakeBroker::properties_of(const std::string& topic, int32_t queue_id) const {
  std::vector<store::MessageProperties> out;
  const auto it = queues_.find({topic, queue_id});
  if (it == queues_.end()) return out;
  for (const auto& record : it->second) out.push_back(store::decode_record(record).value().message.properties());
  return out;
}

std::vector<std::string> FakeBroker::bodies_of(const std::string& topic, int32_t queue_id) const {
  std::vector<std::string> out;
  const auto it = queues_.find({topic, queue_id});
  if (it == queues_.end()) return out;
  for (const auto& record : it->second) {
    const auto body = store::decode_record(record).value().message.body;
    out.emplace_back(body.begin(), body.end());
  }
  return out;
}

void FakeBroker::on_send(const RemotingCommand& request, ResponseChannel channel) {
  store::MessageToStore message;
  message.topic = request.ext_string("b").value();
  message.queue_id = request.ext_int32("e").value();
  message.sysflag = request.ext_int32("f").value();
  message.born_timestamp_ms = request.ext_int("g").value();
  message.flag = request.ext_int32("h").value();
  message.properties = store::decode_properties(request.optional_ext_string("i").value_or(""));
  message.reconsume_times = request.optional_ext_int32("j").value().value_or(0);
  message.body = request.body;
  message.born_host = store::HostAddress::ipv4(10, 0, 0, 10, 40000);
  const Stored stored = put(std::move(message));
  RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
  response.set_ext_string("msgId", store::create_offset_message_id(store_host_, PhyOffset(stored.physical_offset)));
  response.set_ext_int("queueId", request.ext_int32("e").value());
  response.set_ext_int("queueOffset", stored.queue_offset);
  channel.reply(std::move(response));
}

void FakeBroker::on_pull(const RemotingCommand& request, ResponseChannel channel) {
  const int32_t sys_flag = request.ext_int32("sysFlag").value();
  if ((sys_flag & api::kPullFlagCommitOffset) != 0) {
    const auto [topic, queue_id] = queue_key(request);
    committed[{request.ext_string("consumerGroup").value(), topic, queue_id}] = request.ext_int("commitOffset").value();
  }
  if (answer_pull(request, channel, (sys_flag & api::kPullFlagSuspend) != 0)) return;
  const uint64_t id = next_parked_id_++;
  const int64_t suspend_ms = request.ext_int("suspendTimeoutMillis").value();
  ParkedPull parked{request, std::make_shared<ResponseChannel>(std::move(channel)), env::kNoTimer};
  parked.timer = env_.executor().run_after(millis(suspend_ms), [this, id] {
    const auto it = parked_.find(id);
    if (it == parked_.end()) return;
    ParkedPull pull = std::move(it->second);
    parked_.erase(it);
    answer_pull(pull.request, *pull.channel, false);
  });
  parked_.emplace(id, std::move(parked));
}

bool FakeBroker::answer_pull(const RemotingCommand& request, ResponseChannel& channel, bool may_park) {
  const auto [topic, queue_id] = queue_key(request);
  const int64_t offset = request.ext_int("queueOffset").value();
  const int64_t max = max_offset(topic, queue_id);
  RemotingCommand response = request.make_response(ResponseCode::PULL_NOT_FOUND);
  int64_t next = offset;
  if (offset > max || offset < 0) {
    response.code = ResponseCode::PULL_OFFSET_MOVED;
    next = offset < 0 ? 0 : max;
  } else if (offset < max) {
    const auto subscription = build_subscription_data(topic, request.optional_ext_string("subscription").value_or("*"), 0);
    const auto& records = queues_.at({topic, queue_id});
    const int64_t limit = std::min<int64_t>(max, offset + request.ext_int("maxMsgNums").value());
    for (next = offset; next < limit; ++next) {
      const auto& record = records[static_cast<size_t>(next)];
      const std::string tags = store::decode_record(record).value().message.properties()[std::string(store::kPropertyTags)];
      if (subscription.ok() && !tags_match(*subscription, tags)) continue;
      response.body.insert(response.body.end(), record.begin(), record.end());
    }
    response.code = response.body.empty() ? ResponseCode::PULL_RETRY_IMMEDIATELY : ResponseCode::SUCCESS;
  } else if (may_park) {
    return false;
  }
  response.set_ext_int("suggestWhichBrokerId", suggest_broker_id);
  response.set_ext_int("nextBeginOffset", next);
  response.set_ext_int("minOffset", 0);
  response.set_ext_int("maxOffset", max);
  channel.reply(std::move(response));
  return true;
}

void FakeBroker::wake(const std::string& topic, int32_t queue_id) {
  std::vector<uint64_t> ready;
  for (const auto& [id, pull] : parked_) {
    if (queue_key(pull.request) == std::pair{topic, queue_id}) ready.push_back(id);
  }
  for (uint64_t id : ready) {
    ParkedPull pull = std::move(parked_.at(id));
    parked_.erase(id);
    env_.executor().cancel(pull.timer);
    answer_pull(pull.request, *pull.channel, false);
  }
}

// The broker's consumerSendMsgBack, without the delay: the copy lands in
// %RETRY%<group> queue 0 at once.
void FakeBroker::on_send_back(const RemotingCommand& request, ResponseChannel channel) {
  const auto it = by_physical_offset_.find(request.ext_int("offset").value());
  if (it == by_physical_offset_.end()) return channel.reply(ResponseCode::SYSTEM_ERROR, "look message by offset failed");
  const store::DecodedMessage original = store::decode_record(it->second).value().message;
  store::MessageToStore copy;
  copy.topic = "%RETRY%" + request.ext_string("group").value();
  copy.queue_id = 0;
  copy.flag = original.flag;
  copy.body.assign(original.body.begin(), original.body.end());
  copy.properties = original.properties();
  copy.properties.emplace(std::string(store::kPropertyRetryTopic), std::string(original.topic));
  copy.properties.emplace(std::string(store::kPropertyOriginMessageId), request.ext_string("originMsgId").value());
  copy.reconsume_times = original.reconsume_times + 1;
  copy.born_timestamp_ms = original.born_timestamp_ms;
  copy.born_host = original.born_host;
  put(std::move(copy));
  channel.reply(ResponseCode::SUCCESS);
}

// --- TestCluster --------------------------------------------------------------------------

TestCluster::TestCluster(int broker_count, uint64_t seed) : world_(seed) {
  namesrv_ = std::make_unique<FakeNameServer>(world_.start_process("namesrv", "10.0.0.1"), "10.0.0.1:9876");
  for (int i = 0; i < broker_count; ++i) {
    const std::string name = "broker-" + std::string(1, static_cast<char>('a' + i));
    const uint8_t host_byte = static_cast<uint8_t>(2 + i);
    const std::string host = "10.0.0." + std::to_string(host_byte);
    brokers_.push_back(std::make_unique<FakeBroker>(world_.start_process(name, host), name, host + ":10911",
                                                    store::HostAddress::ipv4(10, 0, 0, host_byte, 10911)));
    namesrv_->cluster_info.brokerAddrTable[name] = {"DefaultCluster", name, {{0, host + ":10911"}}};
    namesrv_->cluster_info.clusterAddrTable["DefaultCluster"].insert(name);
  }
}

TestCluster::~TestCluster() {
  clients_.clear();
  brokers_.clear();
  namesrv_.reset();
}

MQClientInstance& TestCluster::add_client(const std::string& instance_name, const std::string& host,
                                          const std::function<void(ClientConfig&)>& tweak) {
  ClientConfig config;
  config.namesrvAddr = {namesrv_->address()};
  config.clientIP = host;
  config.instanceName = instance_name;
  if (tweak) tweak(config);
  clients_.push_back(std::make_unique<MQClientInstance>(world_.start_process("client-" + instance_name, host), config));
  return *clients_.back();
}

void TestCluster::route(const std::string& topic, int32_t queues, size_t broker_count, int32_t perm) {
  if (broker_count == 0) broker_count = brokers_.size();
  std::vector<std::pair<std::string, std::string>> members;
  for (size_t i = 0; i < broker_count; ++i) members.emplace_back(brokers_[i]->broker_name(), brokers_[i]->address());
  namesrv_->set_route(topic, make_route(members, queues, perm));
}

}  // namespace mqlab::client::testing
