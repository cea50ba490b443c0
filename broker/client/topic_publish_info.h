// TopicPublishInfo: the queues a producer may send a topic's messages to, and
// the choice of one for each attempt (RocketMQ's TopicPublishInfo.java,
// MQClientInstance.topicRouteData2TopicPublishInfo and
// MQFaultStrategy.selectOneMessageQueue).
//
// Publish queues: from orderTopicConf ("brokerName:n;...") when the route has
// one; otherwise, for each queueData in brokerName order whose perm has WRITE
// and whose broker group has a master (id 0) in the route, queue ids
// 0..writeQueueNums-1. A group without a master takes no messages: a slave
// cannot store them.
//
// Selection is round robin from a start the caller draws from env.random(),
// in three passes that each take the first fitting queue:
//   1. not on the previous attempt's broker, and (with fault tolerance) on a
//      broker that is not backing off;
//   2. not on the previous attempt's broker, on the broker whose back-off
//      ends first (every other broker is backing off: the least bad one);
//   3. any queue: a topic on one broker group retries that group, as Java
//      does (ali-ons instead gives up).
// Pass 1 both avoids the previous broker and honours back-offs; Java 4.9.7
// with sendLatencyFaultEnable forgets the previous broker in that pass.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "broker/client/latency_fault_tolerance.h"
#include "broker/client/message_queue.h"
#include "broker/remoting/route_data.h"

namespace mqlab::client {

class TopicPublishInfo {
 public:
  TopicPublishInfo() = default;
  // start_index: where round robin begins (Java's ThreadLocalIndex starts random).
  static TopicPublishInfo from_route(const std::string& topic, const remoting::TopicRouteData& route,
                                     uint64_t start_index);

  bool ok() const { return !queues_.empty(); }
  const std::vector<MessageQueue>& queues() const { return queues_; }
  // Whether the queues came from orderTopicConf.
  bool order_topic() const { return order_topic_; }

  // last_broker_name: the broker of the previous attempt ("" on the first).
  // faults: null when sendLatencyFaultEnable is off. Requires: ok().
  const MessageQueue& select_one_message_queue(const std::string& last_broker_name,
                                               const LatencyFaultTolerance* faults, int64_t now_ms);

 private:
  const MessageQueue& next_queue();

  std::vector<MessageQueue> queues_;
  bool order_topic_ = false;
  uint64_t send_which_queue_ = 0;
};

}  // namespace mqlab::client
