// BrokerOuterAPI: what the broker says to NameServers (RocketMQ's
// BrokerOuterAPI): REGISTER_BROKER with every topic it serves, which in 4.x
// is also its heartbeat, and UNREGISTER_BROKER at shutdown.
//
// REGISTER_BROKER (103), sent to every NameServer of namesrvAddr:
//   ext  brokerName, brokerAddr (brokerIP1:listenPort), clusterName,
//        haServerAddr, brokerId, compressed=false,
//        bodyCrc32 = crc32(body) & 0x7FFFFFFF (UtilAll.crc32; 0 would skip
//        the NameServer's check, so we always send it)
//   body RegisterBrokerBody JSON {"filterServerList":[],
//        "topicConfigSerializeWrapper":{"dataVersion":{...},"topicConfigTable":{...}}}
//   version 407 (>= 37, so the NameServer reads the RegisterBrokerBody form)
// UNREGISTER_BROKER (104): ext brokerName, brokerAddr, clusterName, brokerId.
//
// Failures (timeouts, refused connections, error codes) are logged, never
// fatal: the next periodic registration retries, as in RocketMQ.
//
// Invariants: each call's done runs exactly once, after every NameServer
// answered or timed out (RemotingClient's contract), on the executor.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "broker/common/lifetime.h"
#include "broker/common/status.h"
#include "broker/env/env.h"
#include "broker/meta/topic_config.h"
#include "broker/processor/broker_config.h"
#include "broker/remoting/remoting_client.h"
#include "broker/remoting/route_data.h"

namespace mqlab::broker {

// A topic as registrations and GET_ALL_TOPIC_CONFIG carry it.
remoting::TopicConfig to_wire_topic_config(const meta::TopicConfig& config);
// Every topic of the table with its data version. When brokerPermission
// lacks READ or WRITE, each topic's perm is masked with it (registerBrokerAll),
// so clients stop routing sends (or pulls) to this broker.
remoting::TopicConfigSerializeWrapper topic_config_wrapper(const meta::TopicConfigManager& topics,
                                                           int32_t broker_permission);

struct RegistrationOutcome {
  std::string namesrv_addr;
  Status status;  // ok when the NameServer answered SUCCESS
  // REGISTER_BROKER's answer to a slave: its master's addresses, when the
  // NameServer knows a master of the group (empty otherwise).
  std::string master_addr;
  std::string ha_server_addr;
};

struct BrokerOuterAPIStats {
  uint64_t registrations_sent = 0;
  uint64_t registrations_ok = 0;
  uint64_t registrations_failed = 0;
};

class BrokerOuterAPI {
 public:
  BrokerOuterAPI(env::Env& env, const BrokerConfig& config);
  BrokerOuterAPI(const BrokerOuterAPI&) = delete;
  BrokerOuterAPI& operator=(const BrokerOuterAPI&) = delete;

  // Registers with every NameServer; done gets one outcome per address, in
  // namesrvAddr order. With no NameServer configured done runs (posted) with none.
  void register_broker_all(const remoting::TopicConfigSerializeWrapper& wrapper,
                           std::function<void(std::vector<RegistrationOutcome>)> done = {});
  void unregister_broker_all(std::function<void(std::vector<RegistrationOutcome>)> done = {});
  // Closes the NameServer connections; pending calls complete with Aborted.
  void shutdown() { client_.shutdown(); }

  const BrokerOuterAPIStats& stats() const { return stats_; }

 private:
  using Done = std::function<void(std::vector<RegistrationOutcome>)>;
  struct Pending;
  // Sends request (a copy per NameServer) to all and collects the outcomes.
  void invoke_all(const remoting::RemotingCommand& request, const char* what, Done done);
  void on_response(Pending& pending, size_t index, Result<remoting::RemotingCommand> response);

  env::Env& env_;
  const BrokerConfig& config_;
  remoting::RemotingClient client_;
  BrokerOuterAPIStats stats_;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::broker
