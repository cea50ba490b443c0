// MessageQueue: one queue of one topic on one broker group, the unit a
// producer sends to and a consumer is assigned (RocketMQ's MessageQueue.java).
//
// Ordered by (topic, brokerName, queueId), as Java's compareTo orders it:
// rebalancing sorts by this order, so every consumer of a group sees the same
// list and their allocations never overlap.
#pragma once

#include <compare>
#include <cstdint>
#include <string>

namespace mqlab::client {

struct MessageQueue {
  std::string topic;
  std::string brokerName;
  int32_t queueId = 0;

  auto operator<=>(const MessageQueue&) const = default;
  bool operator==(const MessageQueue&) const = default;

  // "MessageQueue [topic=T, brokerName=broker-a, queueId=3]", Java's toString.
  std::string to_string() const {
    return "MessageQueue [topic=" + topic + ", brokerName=" + brokerName + ", queueId=" + std::to_string(queueId) +
           "]";
  }
};

}  // namespace mqlab::client
