// MQClientInstance: the machinery every producer, push consumer and admin
// client of one clientId shares (RocketMQ's MQClientInstance.java and
// MQClientAPIImpl's NameServer half; ali-ons lib/mq_client.js): one
// RemotingClient, the topic route cache, the broker address table, the
// heartbeats, and the periodic tasks.
//
// Java keeps one instance per clientId in a process-wide singleton. mqlab's
// simulator hosts many client processes in one address space, so there is no
// singleton: whoever builds the producers and consumers of one clientId
// builds one instance and hands it to each of them.
//
// Periodic tasks, on env.executor(), each first one period after start():
//   routes of every known topic    pollNameServerInterval (30 s)
//   HEART_BEAT to brokers          heartbeatBrokerInterval (30 s)
//   rebalance of every consumer    rebalanceInterval (10 s), and right away
//                                  when a consumer starts (rebalance_immediately)
//   consumer offsets persisted     persistConsumerOffsetInterval (5 s)
// NameServer requests rotate through namesrvAddr from a random start and move
// on to the next address on a transport failure (not on an error response:
// any answer is final, as in Java's invokeSync and ali-ons).
// Heartbeats go to every address of every known broker group when a consumer
// is registered, and only to masters for a producer-only client.
// The broker address table is the union of the cached routes' brokerDatas.
// Consumer reads fail over to a slave (findBrokerAddressInSubscribe): when
// the route has no master for the group (the NameServer dropped it), and,
// unlike 4.x, when the master did not answer (note_broker_unreachable): 4.x
// keeps pulling a lost master until the NameServer expires its route, up to
// brokerChannelExpiredTime (120 s) plus a scan and a route poll later, so for
// about 160 s a dead master's replicated messages go unread. mqlab avoids an
// address that broke a connection or timed out for kBrokerUnreachableBackoff
// whenever its group has another; after that one request tries it again.
// ClientConfig::slaveReadOnUnreachableMaster=false restores 4.x's waiting.
// A route lookup that fails keeps the previous route, as Java does.
//
// The instance starts its own producer (CLIENT_INNER_PRODUCER), as Java's
// does, so that group appears in every heartbeat.
//
// Invariants: every callback runs on the executor, never inside the call
// that was given it; after shutdown() completes no timer of the instance is
// pending and no callback of it runs; group names are unique per role.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "broker/client/client_config.h"
#include "broker/common/lifetime.h"
#include "broker/common/name_order.h"
#include "broker/common/remembered_entries.h"
#include "broker/common/status.h"
#include "broker/env/env.h"
#include "broker/remoting/remoting_client.h"
#include "broker/remoting/route_data.h"

namespace mqlab::client {

class Producer;

using DoneCallback = std::function<void()>;
using StatusCallback = std::function<void(Status)>;

// What the instance needs of a consumer (RocketMQ's MQConsumerInner).
class MQConsumerInner {
 public:
  virtual ~MQConsumerInner() = default;
  virtual const std::string& group_name() const = 0;
  virtual remoting::ConsumerData consumer_data() const = 0;
  virtual std::vector<std::string> subscribed_topics() const = 0;
  virtual void do_rebalance() = 0;
  virtual void persist_consumer_offset() = 0;
};

class MQClientInstance {
 public:
  MQClientInstance(env::Env& env, ClientConfig config, remoting::RemotingClientOptions options = {});
  ~MQClientInstance();
  MQClientInstance(const MQClientInstance&) = delete;
  MQClientInstance& operator=(const MQClientInstance&) = delete;

  // Validates the config and starts the periodic tasks. Ok at once when
  // already running; Unavailable after shutdown (an instance is not restarted).
  void start(StatusCallback done);
  // Persists consumer offsets, sends UNREGISTER_CLIENT for every group still
  // registered to every known broker address, stops the timers and closes
  // the connections. done runs when the unregistrations have answered (or
  // timed out).
  void shutdown(DoneCallback done);
  bool running() const { return state_ == State::kRunning; }

  env::Env& env() { return env_; }
  const ClientConfig& config() const { return config_; }
  const std::string& client_id() const { return client_id_; }
  remoting::RemotingClient& remoting() { return *remoting_; }
  Nanos api_timeout() const { return millis(config_.mqClientApiTimeout); }

  // --- members. AlreadyExists when the group is taken on this instance.
  Status register_producer(const std::string& group);
  Status register_consumer(MQConsumerInner& consumer);
  // Forgets the group and sends UNREGISTER_CLIENT for it to every known broker.
  void unregister_producer(const std::string& group, DoneCallback done);
  void unregister_consumer(const std::string& group, DoneCallback done);
  // Forgets the group without a word to the brokers (a member being destroyed).
  void forget_producer(const std::string& group) { producers_.erase(group); }
  void forget_consumer(const std::string& group) { consumers_.erase(group); }

  // --- NameServers and routes
  void invoke_namesrv(remoting::RemotingCommand request, Nanos timeout, remoting::ResponseCallback done);
  // GET_ROUTEINFO_BY_TOPIC; concurrent lookups of one topic share one request.
  // NotFound when the NameServer has no route for it.
  void update_topic_route(const std::string& topic, StatusCallback done);
  // The cached route, or null. Valid until the next route update.
  const remoting::TopicRouteData* find_route(const std::string& topic) const;
  // Changes whenever the cached route of topic changes; 0 = none cached.
  uint64_t route_version(const std::string& topic) const;

  // --- brokers
  // The master's address (findBrokerAddressInPublish).
  std::optional<std::string> find_broker_address_in_publish(const std::string& broker_name) const;
  struct FindBrokerResult {
    std::string address;
    int64_t brokerId = 0;
    bool slave = false;
  };
  // brokerAddrs[broker_id], or (unless only_this_broker) the group's lowest-id
  // address: its master when it has one (findBrokerAddressInSubscribe).
  // Unless only_this_broker, an unreachable address (above) gives way to the
  // group's lowest-id reachable one; when all are unreachable the choice is
  // as if none were.
  std::optional<FindBrokerResult> find_broker_address_in_subscribe(const std::string& broker_name, int64_t broker_id,
                                                                   bool only_this_broker) const;
  // A request to address failed in transport (connection refused, broken or
  // timed out, not an error answer): for kBrokerUnreachableBackoff the
  // subscribe lookup prefers the group's other addresses.
  static constexpr Nanos kBrokerUnreachableBackoff = seconds(30);
  void note_broker_unreachable(const std::string& address);
  // note_broker_unreachable when failure is a transport failure (Timeout or
  // Unavailable from the RemotingClient); anything else is ignored.
  void note_request_failure(const std::string& address, const Status& failure);
  // Whether address is inside its back-off now.
  bool broker_unreachable(const std::string& address) const;
  // An address of a random broker group of topic's route, its master when it
  // has one (findBrokerAddrByTopic): where GET_CONSUMER_LIST_BY_GROUP goes.
  std::optional<std::string> find_broker_addr_by_topic(const std::string& topic);
  const std::map<std::string, std::map<int64_t, std::string>, NameLess>& broker_addr_table() const { return broker_addr_table_; }

  void send_heartbeat_to_all_brokers(DoneCallback done);
  // Runs every consumer's rebalance soon (posted, not inline).
  void rebalance_immediately();

  // The instance's own producer, group CLIENT_INNER_PRODUCER, which a push
  // consumer re-sends a failed message through when the broker would not
  // take it back (Java's MQClientInstance.defaultMQProducer). Started with
  // the instance. Requires: running().
  Producer& inner_producer();

 private:
  enum class State { kCreated, kRunning, kShuttingDown, kShutdown };
  enum class Periodic { kRoutes, kHeartbeat, kRebalance, kPersistOffsets };
  struct RouteEntry {
    remoting::TopicRouteData data;
    uint64_t version = 0;
  };
  // routes_'s entry for topic, or null.
  const RouteEntry* route_entry(const std::string& topic) const;

  void schedule(Periodic which, int64_t interval_ms);
  void run_periodic(Periodic which);
  void refresh_all_routes();
  void invoke_namesrv_at(remoting::RemotingCommand request, Nanos timeout, size_t tried,
                         remoting::ResponseCallback done);
  Status apply_route(const std::string& topic, const remoting::RemotingCommand& response);
  void rebuild_broker_addr_table();
  remoting::HeartbeatData prepare_heartbeat_data() const;
  // UNREGISTER_CLIENT for the groups to every known broker address.
  void unregister_client(const std::string& producer_group, const std::string& consumer_group, DoneCallback done);
  void finish_shutdown(DoneCallback done);

  env::Env& env_;
  const ClientConfig config_;
  const std::string client_id_;
  std::unique_ptr<remoting::RemotingClient> remoting_;
  State state_ = State::kCreated;
  size_t namesrv_index_ = 0;
  std::set<std::string> producers_;
  std::map<std::string, MQConsumerInner*> consumers_;  // by group; not owned
  std::map<std::string, RouteEntry, NameLess> routes_;  // never erased: its entries stay put
  // route_entry's: a send asks for its topic's route twice, a pull once,
  // nearly always the same topic.
  mutable RememberedEntries<std::map<std::string, RouteEntry, NameLess>> routes_found_;
  uint64_t next_route_version_ = 1;
  std::map<std::string, std::vector<StatusCallback>> route_waiters_;
  using BrokerAddrTable = std::map<std::string, std::map<int64_t, std::string>, NameLess>;
  BrokerAddrTable broker_addr_table_;
  // The find_broker_address_*'s: a send and a pull ask for their queue's
  // group, one of a few. Forgotten when the table is rebuilt.
  mutable RememberedEntries<BrokerAddrTable, 2> broker_addrs_found_;
  std::map<std::string, Nanos, NameLess> unreachable_until_;  // address -> end of its back-off
  // The latest of unreachable_until_'s ends: once it has passed, no address
  // is backed off, and broker_unreachable answers without the search (a
  // pull asks, and the table keeps every address a fault ever touched).
  Nanos unreachable_until_latest_ = 0;
  std::map<Periodic, env::TimerId> timers_;
  std::unique_ptr<Producer> inner_producer_;  // after producers_: its destructor leaves that set
  LifetimeToken lifetime_;
};

}  // namespace mqlab::client
