// NamesrvConfig: the NameServer's settings, named as RocketMQ names them
// (apache/rocketmq namesrv/…/NamesrvConfig.java, NettyServerConfig's
// listenPort; the liveness numbers are RouteInfoManager's and
// NamesrvController's constants in 4.x, settings in 5.x). Defaults are
// RocketMQ 4.9.x's (rocketmq-reference.md 7.5).
//
// Invariants (checked by NamesrvController): every interval is positive.
#pragma once

#include <cstdint>
#include <string>

namespace mqlab::namesrv {

struct NamesrvConfig {
  // host:port; 9876 is RocketMQ's default listenPort. Port 0 picks a free one.
  std::string listenAddress = "0.0.0.0:9876";

  // How often brokers not heard from are dropped. 4.x schedules the scan at
  // a fixed rate of 10 s, the first one 5 s after start.
  int64_t scanNotActiveBrokerInterval = 10'000;  // ms
  int64_t scanNotActiveBrokerFirstDelay = 5'000;  // ms
  // A broker not refreshed (REGISTER_BROKER, or QUERY_DATA_VERSION saying
  // unchanged) for this long is dropped: four missed 30 s registrations.
  int64_t brokerChannelExpiredTime = 120'000;  // ms (RouteInfoManager.BROKER_CHANNEL_EXPIRED_TIME)

  // When set, routes carry orderTopicConf from the KV namespace
  // ORDER_TOPIC_CONFIG (key = topic).
  bool orderMessageEnable = false;
};

}  // namespace mqlab::namesrv
