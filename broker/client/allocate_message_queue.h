// AllocateMessageQueueAveragely: how the consumers of one group split a
// topic's queues among themselves without talking to each other
// (RocketMQ's AllocateMessageQueueAveragely.java; ali-ons
// lib/consumer/rebalance/allocate_message_queue_averagely.js).
//
// Every consumer sorts the same queue list and the same consumer-id list and
// takes its own contiguous block: with q queues and c consumers each gets
// q / c, and the first q % c consumers one more. When every consumer sees the
// same lists, every queue has exactly one owner, blocks are contiguous in
// sorted order, and sizes differ by at most one. A consumer missing from the
// list (its heartbeat has not reached the broker yet) gets nothing.
#pragma once

#include <string>
#include <vector>

#include "broker/client/message_queue.h"

namespace mqlab::client {

// The queues current_cid owns. Sorts (and de-duplicates) both lists itself,
// so callers may pass them in any order.
std::vector<MessageQueue> allocate_message_queue_averagely(const std::string& current_cid,
                                                           std::vector<MessageQueue> mq_all,
                                                           std::vector<std::string> cid_all);

}  // namespace mqlab::client
