// NamesrvController (namesrv_controller.h): the NameServer's request
// processors (DefaultRequestProcessor's, code by code), its scan timer and
// its in-memory KV config.
#include "broker/namesrv/namesrv_controller.h"

#include <initializer_list>
#include <utility>

#include <nlohmann/json.hpp>

#include "broker/common/crc32.h"
#include "broker/common/log.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"
#include "broker/remoting/route_data.h"
#include "broker/remoting/wire_text.h"

namespace mqlab::namesrv {
namespace {

using remoting::RemotingCommand;
using remoting::RequestCode;
using remoting::ResponseChannel;
using remoting::ResponseCode;
using remoting::RouteDataJsonForm;
using Json = nlohmann::json;

constexpr const char* kNamesrvControllerLog = "namesrv";
// MQVersion.Version.V3_0_11.ordinal(): from this version on REGISTER_BROKER
// carries a RegisterBrokerBody; older brokers send a bare
// TopicConfigSerializeWrapper.
constexpr int32_t kVersionV3_0_11 = 37;
// UtilAll.crc32 clears the sign bit, so bodyCrc32 is a non-negative int.
constexpr uint32_t kCrc32Mask = 0x7FFFFFFF;
// Every client loops over a route's queue counts (a producer's queue list, a
// consumer's rebalance), so a count from one bad REGISTER_BROKER would reach
// them all. No broker of ours has more (broker/meta's kMaxQueueNums).
constexpr int32_t kMaxQueueNumsInRoute = 1024;

std::string body_text(const RemotingCommand& command) { return std::string(command.body.begin(), command.body.end()); }
std::vector<uint8_t> bytes_of(const std::string& text) { return std::vector<uint8_t>(text.begin(), text.end()); }

// What a Java NameServer answers when decoding a request throws: SYSTEM_ERROR
// with the reason as the remark.
void reply_error(ResponseChannel& channel, const RemotingCommand& request, const Status& reason) {
  MQ_ASSERT(!reason.ok());
  MQ_LOG(kWarn, kNamesrvControllerLog,
         remoting::describe_request_code(request.code)
             << " from " << channel.remote_address() << " refused: " << reason.message());
  channel.reply(ResponseCode::SYSTEM_ERROR, reason.message());
}

// Reads required string ext fields in order; the first missing one is the error.
Status read_required_field(const RemotingCommand& request, std::initializer_list<std::pair<const char*, std::string*>> fields) {
  for (const auto& [name, out] : fields) {
    MQ_ASSIGN_OR_RETURN(*out, request.ext_string(name));
  }
  return Status::Ok();
}

// 4.9.4+: standard JSON for new clients, fastjson's bare brokerId keys for old ones.
Result<RouteDataJsonForm> json_form_of(const RemotingCommand& request) {
  MQ_ASSIGN_OR_RETURN(const std::optional<bool> standard_only, request.optional_ext_bool("acceptStandardJsonOnly"));
  return remoting::route_data_json_form_for(request.version, standard_only.value_or(false));
}

// bodyCrc32 is the masked CRC32 of the body; 0 (or absent) means unchecked.
Status check_body_crc32(const RemotingCommand& request) {
  MQ_ASSIGN_OR_RETURN(const std::optional<int32_t> expected, request.optional_ext_int32("bodyCrc32"));
  if (!expected.has_value() || *expected == 0) return Status::Ok();
  const uint32_t actual = crc32_ieee(0, request.body) & kCrc32Mask;
  if (static_cast<int32_t>(actual) != *expected) return Status::Corruption("crc32 not match");  // Java's words
  return Status::Ok();
}

Status decode_register_broker_body(const RemotingCommand& request, RegisterBrokerRequest* out) {
  if (request.body.empty()) return Status::Ok();  // no topics, dataVersion 0/0, as Java fills in
  if (request.version < kVersionV3_0_11) {
    Result<remoting::TopicConfigSerializeWrapper> wrapper =
        remoting::TopicConfigSerializeWrapper::parse(body_text(request));
    if (!wrapper.ok()) return wrapper.status().with_context("Failed to decode TopicConfigSerializeWrapper");
    out->topicConfigWrapper = std::move(wrapper).value();
    return Status::Ok();
  }
  Result<remoting::RegisterBrokerBody> body = remoting::RegisterBrokerBody::parse(body_text(request));
  if (!body.ok()) return body.status().with_context("Failed to decode RegisterBrokerBody");
  out->topicConfigWrapper = std::move(body->topicConfigSerializeWrapper);
  out->filterServerList = std::move(body->filterServerList);
  return Status::Ok();
}

Status check_registered_queue_nums(const remoting::TopicConfigSerializeWrapper& wrapper) {
  for (const auto& [topic, config] : wrapper.topicConfigTable) {
    for (const auto& [field, value] : {std::pair{"readQueueNums", config.readQueueNums},
                                       std::pair{"writeQueueNums", config.writeQueueNums}}) {
      if (value < 0 || value > kMaxQueueNumsInRoute) {
        return Status::InvalidArgument("topic " + remoting::printable_excerpt(topic) + ": " + field + " " +
                                       std::to_string(value) + " is outside [0, " +
                                       std::to_string(kMaxQueueNumsInRoute) + "]");
      }
    }
  }
  return Status::Ok();
}

Result<RegisterBrokerRequest> decode_register_broker(const RemotingCommand& request, const std::string& remote) {
  RegisterBrokerRequest out;
  MQ_RETURN_IF_ERROR(read_required_field(request, {{"brokerName", &out.brokerName},
                                             {"brokerAddr", &out.brokerAddr},
                                             {"clusterName", &out.clusterName},
                                             {"haServerAddr", &out.haServerAddr}}));
  MQ_ASSIGN_OR_RETURN(out.brokerId, request.ext_int("brokerId"));
  MQ_ASSIGN_OR_RETURN(const std::optional<bool> compressed, request.optional_ext_bool("compressed"));
  MQ_RETURN_IF_ERROR(check_body_crc32(request));
  if (compressed.value_or(false)) {
    // RocketMQ's own deflate layout; brokers send it only with compressedRegister=true.
    return Status::InvalidArgument("compressed RegisterBrokerBody is not supported; set compressedRegister=false");
  }
  MQ_RETURN_IF_ERROR(decode_register_broker_body(request, &out));
  MQ_RETURN_IF_ERROR(check_registered_queue_nums(out.topicConfigWrapper));
  out.remoteAddress = remote;
  return out;
}

}  // namespace

NamesrvController::NamesrvController(env::Env& env, NamesrvConfig config)
    : env_(env),
      config_(std::move(config)),
      routes_(millis(config_.brokerChannelExpiredTime)),
      // No idle close: a silent broker is expired by the route scan after
      // brokerChannelExpiredTime, which counts and logs it (RocketMQ would
      // also close the idle channel at 120 s; the scan's verdict comes first).
      server_(env, "namesrv", remoting::RemotingServerOptions{.channel_max_idle = 0}) {
  MQ_ASSERT(config_.scanNotActiveBrokerInterval > 0);
  MQ_ASSERT(config_.scanNotActiveBrokerFirstDelay >= 0);
  MQ_ASSERT(config_.brokerChannelExpiredTime > 0);
  register_processors();
  // As RocketMQ's BrokerHousekeepingService: a broker's connection closing
  // drops it at once, without waiting 120 s for the scan.
  server_.set_connection_closed_listener([this](const std::string& remote_address) {
    routes_.on_connection_closed(remote_address);
  });
}

NamesrvController::~NamesrvController() { shutdown(); }

void NamesrvController::register_processors() {
  const auto bind = [this](void (NamesrvController::*process)(const RemotingCommand&, ResponseChannel)) {
    return [this, process](const RemotingCommand& request, ResponseChannel channel) {
      (this->*process)(request, std::move(channel));
    };
  };
  server_.register_processor(RequestCode::PUT_KV_CONFIG, bind(&NamesrvController::process_put_kv_config));
  server_.register_processor(RequestCode::GET_KV_CONFIG, bind(&NamesrvController::process_get_kv_config));
  server_.register_processor(RequestCode::DELETE_KV_CONFIG, bind(&NamesrvController::process_delete_kv_config));
  server_.register_processor(RequestCode::REGISTER_BROKER, bind(&NamesrvController::process_register_broker));
  server_.register_processor(RequestCode::UNREGISTER_BROKER, bind(&NamesrvController::process_unregister_broker));
  server_.register_processor(RequestCode::GET_ROUTEINFO_BY_TOPIC,
                             bind(&NamesrvController::process_get_route_info_by_topic));
  server_.register_processor(RequestCode::GET_BROKER_CLUSTER_INFO,
                             bind(&NamesrvController::process_get_broker_cluster_info));
  server_.register_processor(RequestCode::GET_ALL_TOPIC_LIST_FROM_NAMESERVER,
                             bind(&NamesrvController::process_get_all_topic_list));
  server_.register_processor(RequestCode::QUERY_DATA_VERSION, bind(&NamesrvController::process_query_data_version));
}

void NamesrvController::start(std::function<void(Status)> done) {
  MQ_ASSERT(done != nullptr);
  MQ_ASSERT_MSG(!running_, "the NameServer is already running on " + address());
  const Status status = server_.start(config_.listenAddress);
  if (status.ok()) {
    running_ = true;
    schedule_scan(millis(config_.scanNotActiveBrokerFirstDelay));
    MQ_LOG(kInfo, kNamesrvControllerLog, "NameServer started on " << address());
  } else {
    MQ_LOG(kError, kNamesrvControllerLog, "NameServer failed to start: " << status.to_string());
  }
  env_.executor().post([done = std::move(done), status] { done(status); });
}

void NamesrvController::shutdown() {
  if (scan_timer_ != env::kNoTimer) {
    env_.executor().cancel(scan_timer_);
    scan_timer_ = env::kNoTimer;
  }
  server_.shutdown();
  if (running_) MQ_LOG(kInfo, kNamesrvControllerLog, "NameServer on " << address() << " shut down");
  running_ = false;
}

void NamesrvController::schedule_scan(Nanos delay) {
  MQ_ASSERT(running_);
  MQ_ASSERT(scan_timer_ == env::kNoTimer);
  scan_timer_ = env_.executor().run_after(delay, lifetime_.guard([this] { scan_not_active_broker(); }));
}

void NamesrvController::scan_not_active_broker() {
  MQ_ASSERT(running_);  // shutdown cancels the timer
  scan_timer_ = env::kNoTimer;
  routes_.scan_not_active_broker(env_.clock().now_ns());
  schedule_scan(millis(config_.scanNotActiveBrokerInterval));
}

// --- KV config -------------------------------------------------------------------

void NamesrvController::put_kv_config(const std::string& name_space, const std::string& key,
                                      const std::string& value) {
  kv_config_[name_space].insert_or_assign(key, value);
  MQ_LOG(kInfo, kNamesrvControllerLog, "KV config put: " << name_space << " " << key << " = " << value);
}

std::optional<std::string> NamesrvController::get_kv_config(const std::string& name_space,
                                                            const std::string& key) const {
  const auto keys = kv_config_.find(name_space);
  if (keys == kv_config_.end()) return std::nullopt;
  const auto found = keys->second.find(key);
  if (found == keys->second.end()) return std::nullopt;
  return found->second;
}

void NamesrvController::delete_kv_config(const std::string& name_space, const std::string& key) {
  const auto keys = kv_config_.find(name_space);
  if (keys == kv_config_.end()) return;
  keys->second.erase(key);
  if (keys->second.empty()) kv_config_.erase(keys);  // no empty namespace is kept
  MQ_LOG(kInfo, kNamesrvControllerLog, "KV config deleted: " << name_space << " " << key);
}

std::vector<uint8_t> NamesrvController::kv_list_body(const std::string& name_space) const {
  const auto keys = kv_config_.find(name_space);
  if (keys == kv_config_.end()) return {};  // Java sends a null body
  MQ_ASSERT(!keys->second.empty());
  return bytes_of(remoting::dump_json_text(Json{{"table", keys->second}}));
}

void NamesrvController::process_put_kv_config(const RemotingCommand& request, ResponseChannel channel) {
  std::string name_space, key, value;
  if (Status status = read_required_field(request, {{"namespace", &name_space}, {"key", &key}, {"value", &value}});
      !status.ok()) {
    return reply_error(channel, request, status);
  }
  put_kv_config(name_space, key, value);
  channel.reply(ResponseCode::SUCCESS);
}

void NamesrvController::process_get_kv_config(const RemotingCommand& request, ResponseChannel channel) {
  std::string name_space, key;
  if (Status status = read_required_field(request, {{"namespace", &name_space}, {"key", &key}}); !status.ok()) {
    return reply_error(channel, request, status);
  }
  const std::optional<std::string> value = get_kv_config(name_space, key);
  if (!value.has_value()) {
    channel.reply(ResponseCode::QUERY_NOT_FOUND, "No config item, Namespace: " + name_space + " Key: " + key);
    return;
  }
  RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
  response.set_ext_string("value", *value);
  channel.reply(std::move(response));
}

void NamesrvController::process_delete_kv_config(const RemotingCommand& request, ResponseChannel channel) {
  std::string name_space, key;
  if (Status status = read_required_field(request, {{"namespace", &name_space}, {"key", &key}}); !status.ok()) {
    return reply_error(channel, request, status);
  }
  delete_kv_config(name_space, key);
  channel.reply(ResponseCode::SUCCESS);
}

// --- brokers -----------------------------------------------------------------------

void NamesrvController::process_register_broker(const RemotingCommand& request, ResponseChannel channel) {
  Result<RegisterBrokerRequest> decoded = decode_register_broker(request, channel.remote_address());
  if (!decoded.ok()) return reply_error(channel, request, decoded.status());
  const RegisterBrokerResult result = routes_.register_broker(*decoded, env_.clock().now_ns());
  RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
  // Null fields are not sent by Java, so a master's response has neither.
  if (!result.haServerAddr.empty()) response.set_ext_string("haServerAddr", result.haServerAddr);
  if (!result.masterAddr.empty()) response.set_ext_string("masterAddr", result.masterAddr);
  response.body = kv_list_body(kNamespaceOrderTopicConfig);
  channel.reply(std::move(response));
}

void NamesrvController::process_unregister_broker(const RemotingCommand& request, ResponseChannel channel) {
  std::string broker_name, broker_addr, cluster_name;
  if (Status status = read_required_field(
          request, {{"brokerName", &broker_name}, {"brokerAddr", &broker_addr}, {"clusterName", &cluster_name}});
      !status.ok()) {
    return reply_error(channel, request, status);
  }
  const Result<int64_t> broker_id = request.ext_int("brokerId");
  if (!broker_id.ok()) return reply_error(channel, request, broker_id.status());
  routes_.unregister_broker(cluster_name, broker_addr, broker_name, *broker_id);
  channel.reply(ResponseCode::SUCCESS);
}

void NamesrvController::process_query_data_version(const RemotingCommand& request, ResponseChannel channel) {
  std::string broker_name, broker_addr, cluster_name;
  if (Status status = read_required_field(
          request, {{"brokerName", &broker_name}, {"brokerAddr", &broker_addr}, {"clusterName", &cluster_name}});
      !status.ok()) {
    return reply_error(channel, request, status);
  }
  if (const Result<int64_t> broker_id = request.ext_int("brokerId"); !broker_id.ok()) {
    return reply_error(channel, request, broker_id.status());
  }
  // No body is no version: Java then answers "changed", and so do we.
  bool changed = true;
  if (!request.body.empty()) {
    const Result<remoting::DataVersion> version = remoting::DataVersion::parse(body_text(request));
    if (!version.ok()) return reply_error(channel, request, version.status());
    changed = routes_.is_broker_topic_config_changed(broker_addr, *version);
  }
  // "Unchanged" is a heartbeat too: the broker skips REGISTER_BROKER after it.
  if (!changed) routes_.update_broker_info_update_timestamp(broker_addr, env_.clock().now_ns());
  RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
  response.set_ext_bool("changed", changed);
  if (const auto known = routes_.query_broker_topic_config(broker_addr)) response.body = bytes_of(known->to_json());
  channel.reply(std::move(response));
}

// --- routes ------------------------------------------------------------------------

void NamesrvController::process_get_route_info_by_topic(const RemotingCommand& request, ResponseChannel channel) {
  const Result<std::string> topic = request.ext_string("topic");
  if (!topic.ok()) return reply_error(channel, request, topic.status());
  const Result<RouteDataJsonForm> form = json_form_of(request);
  if (!form.ok()) return reply_error(channel, request, form.status());
  std::optional<remoting::TopicRouteData> route = routes_.pickup_topic_route_data(*topic);
  if (!route.has_value()) {
    channel.reply(ResponseCode::TOPIC_NOT_EXIST, "No topic route info in name server for the topic: " + *topic);
    return;
  }
  if (config_.orderMessageEnable) {
    if (std::optional<std::string> conf = get_kv_config(kNamespaceOrderTopicConfig, *topic)) {
      route->orderTopicConf = std::move(*conf);
    }
  }
  RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
  response.body = bytes_of(route->to_json(*form));
  channel.reply(std::move(response));
}

void NamesrvController::process_get_broker_cluster_info(const RemotingCommand& request, ResponseChannel channel) {
  const Result<RouteDataJsonForm> form = json_form_of(request);
  if (!form.ok()) return reply_error(channel, request, form.status());
  RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
  response.body = bytes_of(routes_.get_all_cluster_info().to_json(*form));
  channel.reply(std::move(response));
}

void NamesrvController::process_get_all_topic_list(const RemotingCommand& request, ResponseChannel channel) {
  RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
  response.body = bytes_of(remoting::dump_json_text(Json{{"topicList", routes_.get_all_topic_list()}}));
  channel.reply(std::move(response));
}

// --- status ------------------------------------------------------------------------

NamesrvStatus NamesrvController::status() const {
  NamesrvStatus status;
  status.address = address();
  status.running = running_;
  status.connections = server_.connection_count();
  status.remoting = server_.stats();
  status.routes = routes_.stats();
  const Nanos now = env_.clock().now_ns();
  for (const auto& [broker_name, broker] : routes_.broker_addr_table()) {
    for (const auto& [broker_id, broker_addr] : broker.brokerAddrs) {
      const BrokerLiveInfo& live = routes_.broker_live_table().at(broker_addr);  // listed => live
      status.brokers.push_back(NamesrvStatus::Broker{broker.cluster, broker_name, broker_id, broker_addr,
                                                     live.haServerAddr, live.remoteAddress,
                                                     now - live.lastUpdateTimestamp, live.dataVersion});
    }
  }
  for (const auto& [topic, by_broker] : routes_.topic_queue_table()) {
    NamesrvStatus::Topic& entry = status.topics.emplace_back();
    entry.topic = topic;
    for (const auto& [broker_name, queue_data] : by_broker) entry.queueDatas.push_back(queue_data);
  }
  status.kvConfig = kv_config_;
  return status;
}

}  // namespace mqlab::namesrv
