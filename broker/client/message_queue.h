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
#include "broker/common/same_bytes.h"

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
  // Equality by same_text, not compare_names: an order is not needed, and
  // a consumer asks its offset store's recent entries (OffsetStore) about a
  // queue twice a pull, three-way compares of two names each.
  bool operator==(const MessageQueue& other) const {
    return queueId == other.queueId && same_text(topic, other.topic) && same_text(brokerName, other.brokerName);
  }

  // "MessageQueue [topic=T, brokerName=broker-a, queueId=3]", Java's toString.
  std::string to_string() const {
    return "MessageQueue [topic=" + topic + ", brokerName=" + brokerName + ", queueId=" + std::to_string(queueId) +
           "]";
  }
};

}  // namespace mqlab::client
