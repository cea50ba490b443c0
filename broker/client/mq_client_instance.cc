#include "broker/client/mq_client_instance.h"

#include <algorithm>
#include <utility>

#include "broker/client/countdown.h"
#include "broker/client/mix_all.h"
#include "broker/client/mq_client_api.h"
#include "broker/client/producer.h"
#include "broker/common/log.h"

namespace mqlab::client {

using remoting::RemotingCommand;

namespace {
constexpr const char* kMqClientInstanceLog = "client";

// The remoting options with the config's header type, unless the caller chose one.
remoting::RemotingClientOptions with_serialize_type(remoting::RemotingClientOptions options,
                                                    const ClientConfig& config) {
  if (!options.serialize_type) options.serialize_type = config.serializeType;
  return options;
}
}  // namespace

MQClientInstance::MQClientInstance(env::Env& env, ClientConfig config, remoting::RemotingClientOptions options)
    : env_(env),
      config_(std::move(config)),
      client_id_(config_.clientId()),
      remoting_(std::make_unique<remoting::RemotingClient>(env, with_serialize_type(options, config_))) {
  // Java starts the rotation at a random NameServer, so clients spread out.
  if (!config_.namesrvAddr.empty()) namesrv_index_ = env_.random().uniform(config_.namesrvAddr.size());
}

MQClientInstance::~MQClientInstance() {
  for (const auto& [which, timer] : timers_) env_.executor().cancel(timer);
}

Producer& MQClientInstance::inner_producer() {
  MQ_ASSERT(inner_producer_ != nullptr);  // created by start()
  return *inner_producer_;
}

void MQClientInstance::start(StatusCallback done) {
  Status status;
  if (state_ == State::kCreated) {
    status = config_.validate();
    if (status.ok()) {
      state_ = State::kRunning;
      schedule(Periodic::kRoutes, config_.pollNameServerInterval);
      schedule(Periodic::kHeartbeat, config_.heartbeatBrokerInterval);
      schedule(Periodic::kRebalance, config_.rebalanceInterval);
      schedule(Periodic::kPersistOffsets, config_.persistConsumerOffsetInterval);
      inner_producer_ = std::make_unique<Producer>(*this, ProducerConfig{.producerGroup = std::string(kClientInnerProducerGroup)});
      inner_producer_->start([](Status status) { MQ_ASSERT(status.ok()); });  // registers at once: we run
      MQ_LOG(kInfo, kMqClientInstanceLog, "client " << client_id_ << " started");
    }
  } else if (state_ != State::kRunning) {
    status = Status::Unavailable("client " + client_id_ + " was shut down; an instance is not restarted");
  }
  env_.executor().post([done = std::move(done), status] { done(status); });
}

void MQClientInstance::shutdown(DoneCallback done) {
  if (state_ != State::kRunning) {
    // Never started (an admin client's instance) still has connections to close;
    // a shutdown already under way or done has nothing left to do.
    if (state_ == State::kCreated) {
      remoting_->shutdown();
      state_ = State::kShutdown;
    }
    env_.executor().post(std::move(done));
    return;
  }
  state_ = State::kShuttingDown;
  for (const auto& [which, timer] : timers_) env_.executor().cancel(timer);
  timers_.clear();
  for (const auto& [group, consumer] : consumers_) consumer->persist_consumer_offset();
  std::vector<std::pair<std::string, std::string>> groups;  // (producer, consumer)
  for (const std::string& group : producers_) groups.emplace_back(group, "");
  for (const auto& [group, consumer] : consumers_) groups.emplace_back("", group);
  producers_.clear();
  consumers_.clear();
  if (groups.empty()) {
    finish_shutdown(std::move(done));
    return;
  }
  auto arrive = make_countdown(groups.size(), lifetime_.guard([this, done = std::move(done)]() mutable {
    finish_shutdown(std::move(done));
  }));
  for (const auto& [producer, consumer] : groups) unregister_client(producer, consumer, arrive);
}

void MQClientInstance::finish_shutdown(DoneCallback done) {
  MQ_ASSERT(state_ == State::kShuttingDown);
  MQ_ASSERT(timers_.empty());
  remoting_->shutdown();
  state_ = State::kShutdown;
  MQ_LOG(kInfo, kMqClientInstanceLog, "client " << client_id_ << " shut down");
  env_.executor().post(std::move(done));
}

// --- periodic tasks -------------------------------------------------------------------

void MQClientInstance::schedule(Periodic which, int64_t interval_ms) {
  MQ_ASSERT(interval_ms > 0);
  timers_[which] = env_.executor().run_after(millis(interval_ms), lifetime_.guard([this, which, interval_ms] {
    if (!running()) return;
    run_periodic(which);
    schedule(which, interval_ms);
  }));
}

void MQClientInstance::run_periodic(Periodic which) {
  switch (which) {
    case Periodic::kRoutes: refresh_all_routes(); return;
    case Periodic::kHeartbeat: send_heartbeat_to_all_brokers([] {}); return;
    case Periodic::kRebalance:
      for (const auto& [group, consumer] : consumers_) consumer->do_rebalance();
      return;
    case Periodic::kPersistOffsets:
      for (const auto& [group, consumer] : consumers_) consumer->persist_consumer_offset();
      return;
  }
}

void MQClientInstance::refresh_all_routes() {
  std::set<std::string> topics;
  for (const auto& [topic, entry] : routes_) topics.insert(topic);
  for (const auto& [group, consumer] : consumers_) {
    for (std::string& topic : consumer->subscribed_topics()) topics.insert(std::move(topic));
  }
  for (const std::string& topic : topics) update_topic_route(topic, [](Status) {});
}

void MQClientInstance::rebalance_immediately() {
  env_.executor().post(lifetime_.guard([this] {
    if (!running()) return;
    for (const auto& [group, consumer] : consumers_) consumer->do_rebalance();
  }));
}

// --- members --------------------------------------------------------------------------

Status MQClientInstance::register_producer(const std::string& group) {
  if (group.empty()) return Status::InvalidArgument("producer group is empty");
  if (!producers_.insert(group).second) {
    return Status::AlreadyExists("producer group " + group + " is already registered on client " + client_id_);
  }
  return Status::Ok();
}

Status MQClientInstance::register_consumer(MQConsumerInner& consumer) {
  const std::string& group = consumer.group_name();
  if (group.empty()) return Status::InvalidArgument("consumer group is empty");
  if (!consumers_.emplace(group, &consumer).second) {
    return Status::AlreadyExists("consumer group " + group + " is already registered on client " + client_id_);
  }
  return Status::Ok();
}

void MQClientInstance::unregister_producer(const std::string& group, DoneCallback done) {
  producers_.erase(group);
  unregister_client(group, "", std::move(done));
}

void MQClientInstance::unregister_consumer(const std::string& group, DoneCallback done) {
  consumers_.erase(group);
  unregister_client("", group, std::move(done));
}

void MQClientInstance::unregister_client(const std::string& producer_group, const std::string& consumer_group,
                                         DoneCallback done) {
  std::set<std::string> addresses;
  for (const auto& [name, addrs] : broker_addr_table_) {
    for (const auto& [id, address] : addrs) addresses.insert(address);
  }
  if (addresses.empty()) {
    env_.executor().post(std::move(done));
    return;
  }
  auto arrive = make_countdown(addresses.size(), std::move(done));
  for (const std::string& address : addresses) {
    remoting_->invoke(address, api::build_unregister_client(client_id_, producer_group, consumer_group), api_timeout(),
                      [arrive, address](Result<RemotingCommand> response) {
                        if (!response.ok()) {
                          MQ_LOG(kWarn, kMqClientInstanceLog, "UNREGISTER_CLIENT to " << address << ": " << response.status().to_string());
                        }
                        arrive();
                      });
  }
}

// --- NameServers and routes -------------------------------------------------------------

void MQClientInstance::invoke_namesrv(RemotingCommand request, Nanos timeout, remoting::ResponseCallback done) {
  if (config_.namesrvAddr.empty()) {
    env_.executor().post([done = std::move(done)] { done(Status::Unavailable("no NameServer address configured")); });
    return;
  }
  invoke_namesrv_at(std::move(request), timeout, 0, std::move(done));
}

void MQClientInstance::invoke_namesrv_at(RemotingCommand request, Nanos timeout, size_t tried,
                                         remoting::ResponseCallback done) {
  const size_t count = config_.namesrvAddr.size();
  MQ_ASSERT(tried < count);
  const size_t index = (namesrv_index_ + tried) % count;
  const std::string& address = config_.namesrvAddr[index];
  remoting_->invoke(address, request, timeout,
                    lifetime_.guard([this, request, timeout, tried, index, count,
                                     done = std::move(done)](Result<RemotingCommand> response) mutable {
                      if (response.ok() || tried + 1 >= count || state_ == State::kShutdown) {
                        if (response.ok()) namesrv_index_ = index;  // stay with the one that answers
                        done(std::move(response));
                        return;
                      }
                      MQ_LOG(kWarn, kMqClientInstanceLog, "NameServer " << config_.namesrvAddr[index] << ": "
                                                         << response.status().to_string() << "; trying the next");
                      invoke_namesrv_at(std::move(request), timeout, tried + 1, std::move(done));
                    }));
}

void MQClientInstance::update_topic_route(const std::string& topic, StatusCallback done) {
  std::vector<StatusCallback>& waiters = route_waiters_[topic];
  waiters.push_back(std::move(done));
  if (waiters.size() > 1) return;  // a lookup of this topic is in flight; share its answer
  invoke_namesrv(api::build_get_route_info(topic), api_timeout(),
                 lifetime_.guard([this, topic](Result<RemotingCommand> response) {
                   Status status = response.ok() ? apply_route(topic, *response)
                                                 : response.status().with_context("GET_ROUTEINFO_BY_TOPIC " + topic);
                   if (!status.ok()) MQ_LOG(kDebug, kMqClientInstanceLog, "route of " << topic << ": " << status.to_string());
                   std::vector<StatusCallback> waiting = std::move(route_waiters_[topic]);
                   route_waiters_.erase(topic);
                   MQ_ASSERT(!waiting.empty());
                   for (StatusCallback& waiter : waiting) waiter(status);
                 }));
}

Status MQClientInstance::apply_route(const std::string& topic, const RemotingCommand& response) {
  Result<remoting::TopicRouteData> route = api::parse_route_info(response, topic);
  if (!route.ok()) return route.status();
  RouteEntry& entry = routes_[topic];
  if (entry.version != 0 && entry.data == *route) return Status::Ok();
  entry.data = std::move(route).value();
  entry.version = next_route_version_++;
  rebuild_broker_addr_table();
  MQ_LOG(kInfo, kMqClientInstanceLog, "route of " << topic << " changed (version " << entry.version << ")");
  return Status::Ok();
}

void MQClientInstance::rebuild_broker_addr_table() {
  broker_addrs_found_.forget();
  broker_addr_table_.clear();
  for (const auto& [topic, entry] : routes_) {
    for (const remoting::BrokerData& broker : entry.data.brokerDatas) {
      auto& addrs = broker_addr_table_[broker.brokerName];
      for (const auto& [id, address] : broker.brokerAddrs) addrs[id] = address;
    }
  }
}

const MQClientInstance::RouteEntry* MQClientInstance::route_entry(const std::string& topic) const {
  const auto* entry = routes_found_.find(routes_, topic);
  return entry == nullptr ? nullptr : &entry->second;
}

const remoting::TopicRouteData* MQClientInstance::find_route(const std::string& topic) const {
  const RouteEntry* entry = route_entry(topic);
  return entry == nullptr ? nullptr : &entry->data;
}

uint64_t MQClientInstance::route_version(const std::string& topic) const {
  const RouteEntry* entry = route_entry(topic);
  return entry == nullptr ? 0 : entry->version;
}

// --- brokers ----------------------------------------------------------------------------

std::optional<std::string> MQClientInstance::find_broker_address_in_publish(const std::string& broker_name) const {
  const BrokerAddrTable::value_type* group = broker_addrs_found_.find(broker_addr_table_, broker_name);
  if (group == nullptr) return std::nullopt;
  const auto master = group->second.find(kMasterId);
  if (master == group->second.end()) return std::nullopt;
  return master->second;
}

std::optional<MQClientInstance::FindBrokerResult> MQClientInstance::find_broker_address_in_subscribe(
    const std::string& broker_name, int64_t broker_id, bool only_this_broker) const {
  const BrokerAddrTable::value_type* group = broker_addrs_found_.find(broker_addr_table_, broker_name);
  if (group == nullptr || group->second.empty()) return std::nullopt;
  auto found = group->second.find(broker_id);
  if (found == group->second.end()) {
    if (only_this_broker) return std::nullopt;
    found = group->second.begin();  // the lowest id: the master when there is one
  }
  if (!only_this_broker && broker_unreachable(found->second)) {
    // A master that stopped answering: read from a slave meanwhile (the
    // slave's answers suggest the master again; this keeps overriding that
    // until the back-off ends).
    for (auto it = group->second.begin(); it != group->second.end(); ++it) {
      if (!broker_unreachable(it->second)) {
        found = it;
        break;
      }
    }
  }
  MQ_ASSERT(found != group->second.end());
  return FindBrokerResult{found->second, found->first, found->first != kMasterId};
}

void MQClientInstance::note_broker_unreachable(const std::string& address) {
  MQ_ASSERT(!address.empty());
  const Nanos until = env_.clock().now_ns() + kBrokerUnreachableBackoff;
  Nanos& entry = unreachable_until_[address];
  if (entry < env_.clock().now_ns()) {
    MQ_LOG(kInfo, kMqClientInstanceLog, "broker " << address << " did not answer; reading from another address of its group for "
                                  << kBrokerUnreachableBackoff / kNanosPerSecond << " s");
  }
  entry = std::max(entry, until);
  unreachable_until_latest_ = std::max(unreachable_until_latest_, entry);
}

void MQClientInstance::note_request_failure(const std::string& address, const Status& failure) {
  MQ_ASSERT(!failure.ok());
  if (!config_.slaveReadOnUnreachableMaster) return;  // RocketMQ 4.x: wait for the route to drop it
  if (failure.code() == StatusCode::kTimeout || failure.code() == StatusCode::kUnavailable) {
    note_broker_unreachable(address);
  }
}

bool MQClientInstance::broker_unreachable(const std::string& address) const {
  const Nanos now = env_.clock().now_ns();
  if (now >= unreachable_until_latest_) return false;
  const auto it = unreachable_until_.find(address);
  return it != unreachable_until_.end() && now < it->second;
}

std::optional<std::string> MQClientInstance::find_broker_addr_by_topic(const std::string& topic) {
  const remoting::TopicRouteData* route = find_route(topic);
  if (route == nullptr || route->brokerDatas.empty()) return std::nullopt;
  const remoting::BrokerData& broker = route->brokerDatas[env_.random().uniform(route->brokerDatas.size())];
  if (broker.brokerAddrs.empty()) return std::nullopt;
  return broker.brokerAddrs.begin()->second;  // lowest id: the master when present
}

remoting::HeartbeatData MQClientInstance::prepare_heartbeat_data() const {
  remoting::HeartbeatData data;
  data.clientID = client_id_;
  for (const std::string& group : producers_) data.producerDataSet.push_back({group});
  for (const auto& [group, consumer] : consumers_) data.consumerDataSet.push_back(consumer->consumer_data());
  return data;
}

void MQClientInstance::send_heartbeat_to_all_brokers(DoneCallback done) {
  const remoting::HeartbeatData data = prepare_heartbeat_data();
  const bool producer_only = data.consumerDataSet.empty();
  std::set<std::string> addresses;
  if (!data.producerDataSet.empty() || !producer_only) {
    for (const auto& [name, addrs] : broker_addr_table_) {
      for (const auto& [id, address] : addrs) {
        if (producer_only && id != kMasterId) continue;  // a slave takes no messages from producers
        addresses.insert(address);
      }
    }
  }
  if (addresses.empty()) {
    env_.executor().post(std::move(done));
    return;
  }
  auto arrive = make_countdown(addresses.size(), std::move(done));
  for (const std::string& address : addresses) {
    remoting_->invoke(address, api::build_heartbeat(data), api_timeout(),
                      [arrive, address](Result<RemotingCommand> response) {
                        const Status status =
                            response.ok() ? api::response_status(*response, "HEART_BEAT") : response.status();
                        if (!status.ok()) MQ_LOG(kWarn, kMqClientInstanceLog, "HEART_BEAT to " << address << ": " << status.to_string());
                        arrive();
                      });
  }
}

}  // namespace mqlab::client
