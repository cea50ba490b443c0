// BrokerConfig: the broker's own settings (RocketMQ's BrokerConfig plus the
// NettyServerConfig listenPort), named as RocketMQ's broker.conf keys so our
// code, RocketMQ's docs and a broker.conf grep together. The store's settings
// live in store::MessageStoreConfig. Defaults are RocketMQ 4.9.x's
// (rocketmq-reference.md section 6), except brokerName (RocketMQ: the host
// name, which a deterministic broker cannot ask for) and brokerIP1 (RocketMQ:
// the first non-loopback IPv4 address; ours must be given).
//
// Invariants after validate() is ok: names are non-empty and use RocketMQ's
// name characters; brokerIP1 (and brokerIP2 when set) is an IP literal, so
// every record's STOREHOST and every msgId can be encoded; listenPort is a
// real port (not 0: the store host must be known before recovery, because
// it is written into every record); every namesrvAddr entry parses as
// host:port. messageDelayLevel is a store key (store::MessageStoreConfig),
// as in RocketMQ.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/status.h"
#include "broker/common/types.h"

namespace mqlab::remoting {
struct RemotingServerOptions;
}

namespace mqlab::broker {

struct BrokerConfig {
  std::string brokerClusterName = "DefaultCluster";
  std::string brokerName = "broker-a";
  int64_t brokerId = 0;                 // 0 = master (MixAll.MASTER_ID)
  std::string brokerIP1 = "127.0.0.1";  // registered with NameServers; the store host
  std::string brokerIP2;                // HA address; empty = brokerIP1
  int32_t listenPort = 10911;           // NettyServerConfig.listenPort
  int32_t haListenPort = 0;             // 0 = listenPort + 1, as RocketMQ derives it
  // mqlab's HTTP console and /metrics (not a RocketMQ key). 0 = listenPort + 2:
  // RocketMQ uses listenPort - 2 (the VIP channel) and + 1 (HA), so + 2 is
  // free in every RocketMQ port plan.
  int32_t httpPort = 0;
  std::string namesrvAddr;              // "host:port;host:port"; empty = no registration

  bool autoCreateTopicEnable = true;
  int32_t defaultTopicQueueNums = 8;
  bool autoCreateSubscriptionGroup = true;
  int32_t brokerPermission = 6;  // PermName READ | WRITE

  int64_t registerNameServerPeriod = 30'000;    // ms; clamped to [10 s, 60 s] when used
  int64_t registerBrokerTimeoutMills = 6'000;   // ms
  int64_t flushConsumerOffsetInterval = 5'000;  // ms

  bool longPollingEnable = true;
  int64_t shortPollingTimeMills = 1'000;  // ms a pull is held when long polling is off
  bool slaveReadEnable = false;
  bool offsetCheckInSlave = false;
  // Pull responses copy the records into the response (true), or send them
  // as file regions by sendfile(2), zero copy (false). RocketMQ's default is
  // true; mqlab's is false (issue 7): the copy is kept for comparison and
  // for records whose file region cannot be sent.
  bool transferMsgByHeap = false;
  // mqlab key: zero copy only when the pull's file regions (adjacent records
  // merged) average at least this many bytes; 0 = always. Measured on
  // loopback with 1 KiB records: one sendfile per 1.2 KiB record costs the
  // broker 2.4x the CPU of a copy, one per 38 KiB run 0.8x.
  int32_t zeroCopyMinRegionBytes = 16 * 1024;

  // Limits of the client-facing RemotingServer (README "Limits").
  // RocketMQ's NettyServerConfig key: a connection with no traffic for this
  // long is closed.
  int32_t serverChannelMaxIdleTimeSeconds = 120;
  // mqlab keys. The largest frame accepted (RocketMQ's system property
  // com.rocketmq.remoting.frameMaxLength, 16 MiB).
  int32_t frameMaxLength = 16 * 1024 * 1024;
  // Connections beyond this many are closed as accepted.
  int32_t serverMaxConnections = 10'000;
  // A connection whose unsent responses would pass this is closed (a client
  // that does not read).
  int64_t serverChannelMaxPendingOutputBytes = 64ll << 20;
  // A frame begun must be complete within this long (slowloris).
  int64_t serverFrameReadTimeoutMillis = 60'000;

  // Rejects what RocketMQ would not run with, naming the key and the value.
  Status validate() const;

  // Applies one broker.conf line's key and value. Returns false for a key that
  // is not a BrokerConfig key (RocketMQ ignores those silently; the caller
  // tries MessageStoreConfig next); InvalidArgument naming the key when the
  // value does not parse.
  Result<bool> set_property(std::string_view key, std::string_view value);
  // Every key with its value as text (GET_BROKER_CONFIG's body, logs).
  std::map<std::string, std::string> to_properties() const;

  // brokerIP1:listenPort, what NameServers hand to clients.
  std::string broker_addr() const;
  // brokerIP2 (or brokerIP1):haListenPort (or listenPort + 1).
  std::string ha_server_addr() const;
  // httpPort, or listenPort + 2 when 0.
  int32_t http_port() const;
  // namesrvAddr split on ';', entries trimmed, empties dropped.
  std::vector<std::string> namesrv_addrs() const;
  // The RemotingServer limits above, as options.
  remoting::RemotingServerOptions remoting_server_options() const;
  // registerNameServerPeriod clamped to [10 s, 60 s] (BrokerController.start).
  Nanos register_period() const;
};

}  // namespace mqlab::broker
