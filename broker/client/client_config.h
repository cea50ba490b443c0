// ClientConfig: what every producer, push consumer and admin tool sharing one
// MQClientInstance agrees on (RocketMQ's ClientConfig.java; ali-ons
// lib/client_config.js). Field names keep RocketMQ's spelling, so a Java
// client's properties file and this struct grep together; intervals and
// timeouts are milliseconds, as there.
//
// Invariants (validate()): at least one NameServer address, each "host:port";
// a non-empty clientIP and instanceName; every interval and timeout > 0.
// clientId() = "clientIP@instanceName" is what brokers key channels by and
// what rebalancing sorts, so two clients of one group must not share it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/status.h"
#include "broker/env/network.h"
#include "broker/remoting/remoting_command.h"

namespace mqlab::client {

struct ClientConfig {
  std::vector<std::string> namesrvAddr;  // tried in rotation, "host:port" each
  std::string clientIP = "127.0.0.1";
  std::string instanceName = "DEFAULT";

  int64_t pollNameServerInterval = 30'000;        // route refresh of every known topic
  int64_t heartbeatBrokerInterval = 30'000;       // HEART_BEAT to the brokers
  int64_t persistConsumerOffsetInterval = 5'000;  // UPDATE_CONSUMER_OFFSET of assigned queues
  // Java's RebalanceService waits 20 s (rocketmq.client.rebalance.waitInterval);
  // ali-ons rebalances every 10 s. We follow ali-ons: a consumer that joins is
  // given its queues sooner.
  int64_t rebalanceInterval = 10'000;
  // Timeout of NameServer and control requests (routes, heartbeats, offsets,
  // consumer lists, unregistration): Java's 3000 ms default.
  int64_t mqClientApiTimeout = 3'000;
  // mqlab's, not RocketMQ's: consumer reads move to a slave for
  // MQClientInstance::kBrokerUnreachableBackoff when the master stops
  // answering. false is RocketMQ 4.x: reads stay on the master until the
  // NameServer drops it from the route (120 s and more).
  bool slaveReadOnUnreachableMaster = true;
  // The remoting header every request goes in: RocketMQ's
  // rocketmq.serialize.type system property (ROCKETMQ_SERIALIZE_TYPE in the
  // environment), JSON by default as there. ROCKETMQ, the binary header, is
  // cheaper to write and read; every mqlab and Java server answers in kind.
  remoting::SerializeType serializeType = remoting::SerializeType::JSON;

  std::string clientId() const { return clientIP + "@" + instanceName; }

  // The keys a deployment tunes, by RocketMQ's names: what a scenario's
  // client: section and mqadmin's --clientConfig set. The intervals and
  // timeouts (milliseconds) first, as a table of members.
  struct IntervalKey {
    std::string_view name;
    int64_t ClientConfig::*field;
  };
  static const std::array<IntervalKey, 5>& interval_keys();
  // Every settable key: the intervals, slaveReadOnUnreachableMaster, serializeType.
  static std::vector<std::string_view> settable_keys();
  // Sets key from its text: an interval as milliseconds in [1, 86400000],
  // slaveReadOnUnreachableMaster as true or false, serializeType as JSON or
  // ROCKETMQ. InvalidArgument naming the key and what it takes otherwise;
  // nothing changes then.
  Status set(std::string_view key, std::string_view value);
  // Sets each "key=value" of text, separated by ';' (empty parts skipped).
  Status set_all(std::string_view text);
  // Whether every settable key is at its default.
  bool settable_keys_at_defaults() const;
  static constexpr int64_t kMaxIntervalMs = 86'400'000;  // a day

  Status validate() const {
    if (namesrvAddr.empty()) return Status::InvalidArgument("ClientConfig.namesrvAddr is empty");
    for (const std::string& address : namesrvAddr) {
      if (Result<env::HostPort> parsed = env::parse_address(address); !parsed.ok()) {
        return parsed.status().with_context("ClientConfig.namesrvAddr");
      }
    }
    if (clientIP.empty()) return Status::InvalidArgument("ClientConfig.clientIP is empty");
    if (instanceName.empty() || instanceName.find('@') != std::string::npos) {
      return Status::InvalidArgument("ClientConfig.instanceName must be non-empty and hold no '@'");
    }
    const bool positive = pollNameServerInterval > 0 && heartbeatBrokerInterval > 0 &&
                          persistConsumerOffsetInterval > 0 && rebalanceInterval > 0 && mqClientApiTimeout > 0;
    if (!positive) return Status::InvalidArgument("ClientConfig: every interval and timeout must be > 0");
    return Status::Ok();
  }
};

}  // namespace mqlab::client
