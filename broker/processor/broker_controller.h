// BrokerController: one broker (RocketMQ's BrokerController). It owns the
// MessageStore, the metadata managers (topics, consumer offsets,
// subscription groups), the client tables (ConsumerManager,
// ProducerManager), the RemotingServer on brokerIP1:listenPort with the
// request processors behind it, the long-polling PullRequestHoldService, and
// the BrokerOuterAPI that registers with the NameServers.
//
// Life cycle:
//   start(done)     validate the config; load topics.json, consumerOffset.json,
//                   subscriptionGroup.json; start the store (recovery); start
//                   the hold service, the server and the periodic tasks;
//                   register with every NameServer (not awaited: a broker
//                   whose NameServers are down still serves); done(ok).
//   periodic        REGISTER_BROKER every registerNameServerPeriod (clamped
//                   10..60 s; the first 10 s after start, as RocketMQ);
//                   consumer offsets persisted every flushConsumerOffsetInterval;
//                   client channels without a heartbeat for 120 s dropped
//                   (checked every 10 s).
//   on change       a topic created (auto-create on send, a heartbeat's retry
//                   topic, UPDATE_AND_CREATE_TOPIC, send-back's retry/DLQ
//                   topics) re-registers with the NameServers, coalesced into
//                   one registration per executor turn.
//   shutdown(done)  stop timers and the server (parked pulls are dropped, as
//                   RocketMQ drops them), UNREGISTER_BROKER with every
//                   NameServer, clean store shutdown, persist the metadata
//                   (offsets in particular); done with the first error.
// The destructor does no I/O: destroying a started controller without
// shutdown() is a crash (kill -9), and the next start recovers.
//
// Invariants: processors run only while running() (the server is started
// after the store and shut down before it); every callback is guarded by a
// LifetimeToken, so one that outlives the controller (the real Env) does
// nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "broker/common/latency_buckets.h"
#include "broker/common/lifetime.h"
#include "broker/common/status.h"
#include "broker/env/env.h"
#include "broker/meta/consumer_offset_manager.h"
#include "broker/meta/subscription_group.h"
#include "broker/meta/topic_config.h"
#include "broker/processor/broker_config.h"
#include "broker/processor/broker_outer_api.h"
#include "broker/processor/consumer_manager.h"
#include "broker/processor/producer_manager.h"
#include "broker/processor/pull_request_hold_service.h"
#include "broker/remoting/remoting_server.h"
#include "broker/store/message_store.h"

namespace mqlab::ha {
class HAService;
class HAClient;
class SlaveSynchronize;
}  // namespace mqlab::ha

namespace mqlab::broker {

class SendMessageProcessor;
class PullMessageProcessor;
class ClientManageProcessor;
class ConsumerInfoProcessor;
class ConsumerSendMsgBackProcessor;
class AdminBrokerProcessor;
class QueryMessageProcessor;

// Counters for GET_BROKER_RUNTIME_INFO and tests.
struct BrokerStats {
  uint64_t msg_put_total = 0;  // messages stored by SEND_MESSAGE(_V2) and send-back
  uint64_t msg_put_failed = 0;
  uint64_t msg_get_total = 0;    // messages returned by PULL_MESSAGE
  uint64_t pulls_suspended = 0;  // PULL_NOT_FOUND parked for long polling
  uint64_t pulls_zero_copy = 0;  // FOUND bodies sent as file regions (sendfile)
  uint64_t pulls_copied = 0;     // FOUND bodies copied (transferMsgByHeap, or a region not sendable)
  uint64_t registrations_requested = 0;
  // SEND_MESSAGE(_V2) puts that reached the store, request to reply
  // (send_message_processor.cc); /metrics' put latency.
  LatencyBuckets put_latency;
};

class BrokerController {
 public:
  BrokerController(env::Env& env, BrokerConfig config, store::MessageStoreConfig store_config);
  // No I/O: a controller destroyed while running is a crashed broker.
  ~BrokerController();
  BrokerController(const BrokerController&) = delete;
  BrokerController& operator=(const BrokerController&) = delete;

  // Requires: not started before (one start per controller; a restart is a
  // new controller over the same disks).
  void start(std::function<void(Status)> done);
  // Requires: running().
  void shutdown(std::function<void(Status)> done);
  bool running() const { return running_; }

  // Registers all topics with every NameServer once this executor turn ends
  // (coalesced: many topic changes in one turn give one registration).
  void register_broker_all_soon();
  // Registers now; done (optional) hears the per-NameServer outcomes.
  void register_broker_all(std::function<void(std::vector<RegistrationOutcome>)> done = {});

  env::Env& env() { return env_; }
  const BrokerConfig& config() const { return config_; }
  const store::MessageStoreConfig& store_config() const { return store_config_; }
  const store::HostAddress& store_host() const { return store_host_; }
  // The wall-clock time start() began, ms (bootTimestamp).
  int64_t boot_timestamp_ms() const { return boot_timestamp_ms_; }

  store::MessageStore& message_store() { return *store_; }
  meta::TopicConfigManager& topic_config_manager() { return topics_; }
  meta::ConsumerOffsetManager& consumer_offset_manager() { return offsets_; }
  meta::SubscriptionGroupManager& subscription_group_manager() { return groups_; }
  ConsumerManager& consumer_manager() { return consumers_; }
  ProducerManager& producer_manager() { return producers_; }
  PullRequestHoldService& pull_request_hold_service() { return *hold_service_; }
  PullMessageProcessor& pull_message_processor() { return *pull_processor_; }
  remoting::RemotingServer& remoting_server() { return server_; }
  BrokerOuterAPI& broker_outer_api() { return outer_api_; }
  BrokerStats& stats() { return stats_; }
  // Replication (broker_controller_ha.cc): a master runs an HAService, a
  // SLAVE an HAClient and a SlaveSynchronize; null when not started or not
  // that role.
  ha::HAService* ha_service() { return ha_service_.get(); }
  ha::HAClient* ha_client() { return ha_client_.get(); }
  ha::SlaveSynchronize* slave_synchronize() { return slave_synchronize_.get(); }

 private:
  void register_processors();
  Status load_metadata();
  void after_store_started(Status status, std::function<void(Status)> done);
  void start_periodic_tasks();
  void cancel_timers();
  void on_connection_closed(const std::string& remote_address);
  void scan_not_active_channels();
  void persist_consumer_offsets_periodically();
  void register_periodically();
  void finish_shutdown(Status first_error, std::function<void(Status)> done);
  void persist_metadata(std::function<void(Status)> done);
  Status start_ha();
  void shutdown_ha();
  // A SLAVE learns its master's addresses from the registration answers.
  void on_registered(const std::vector<RegistrationOutcome>& outcomes);

  env::Env& env_;
  BrokerConfig config_;
  store::MessageStoreConfig store_config_;
  store::HostAddress store_host_;
  std::unique_ptr<store::MessageStore> store_;
  meta::TopicConfigManager topics_;
  meta::ConsumerOffsetManager offsets_;
  meta::SubscriptionGroupManager groups_;
  ConsumerManager consumers_;
  ProducerManager producers_;
  remoting::RemotingServer server_;
  BrokerOuterAPI outer_api_;
  std::unique_ptr<PullRequestHoldService> hold_service_;
  std::unique_ptr<SendMessageProcessor> send_processor_;
  std::unique_ptr<PullMessageProcessor> pull_processor_;
  std::unique_ptr<ClientManageProcessor> client_processor_;
  std::unique_ptr<ConsumerInfoProcessor> consumer_info_processor_;
  std::unique_ptr<ConsumerSendMsgBackProcessor> send_back_processor_;
  std::unique_ptr<AdminBrokerProcessor> admin_processor_;
  std::unique_ptr<QueryMessageProcessor> query_processor_;
  std::unique_ptr<ha::HAService> ha_service_;
  std::unique_ptr<ha::HAClient> ha_client_;
  std::unique_ptr<ha::SlaveSynchronize> slave_synchronize_;
  env::TimerId master_lookup_timer_ = env::kNoTimer;

  bool started_ = false;
  bool running_ = false;
  bool register_soon_pending_ = false;
  int64_t boot_timestamp_ms_ = 0;
  env::TimerId register_timer_ = env::kNoTimer;
  env::TimerId offsets_timer_ = env::kNoTimer;
  env::TimerId channels_timer_ = env::kNoTimer;
  BrokerStats stats_;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::broker
