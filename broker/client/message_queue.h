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

#include "broker/common/name_order.h"

namespace mqlab::client {

struct MessageQueue {
  std::string topic;
  std::string brokerName;
  int32_t queueId = 0;

  // std::string's order for the names, compared inline (name_order.h): a
  // consumer's offsets and process queues are maps keyed by queue.
  std::strong_ordering operator<=>(const MessageQueue& other) const {
    if (const int c = compare_names(topic, other.topic); c != 0) return c <=> 0;
    if (const int c = compare_names(brokerName, other.brokerName); c != 0) return c <=> 0;
    return queueId <=> other.queueId;
  }
  bool operator==(const MessageQueue& other) const {
    return queueId == other.queueId && topic.size() == other.topic.size() &&
           brokerName.size() == other.brokerName.size() && compare_names(topic, other.topic) == 0 &&
           compare_names(brokerName, other.brokerName) == 0;
  }

  // "MessageQueue [topic=T, brokerName=broker-a, queueId=3]", Java's toString.
  std::string to_string() const {
    return "MessageQueue [topic=" + topic + ", brokerName=" + brokerName + ", queueId=" + std::to_string(queueId) +
           "]";
  }
};

}  // namespace mqlab::client
