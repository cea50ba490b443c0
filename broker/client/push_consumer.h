// PushConsumer: subscribes a consumer group to topics and hands their
// messages to a handler, balancing the queues among the group's consumers
// (RocketMQ's DefaultMQPushConsumer / DefaultMQPushConsumerImpl and
// RebalancePushImpl; reference 8.4).
//
// start(): registers with the instance, subscribes %RETRY%<group> ("*") in
// clustering mode, fetches the subscribed topics' routes, sends a heartbeat
// and asks for a rebalance at once; the instance rebalances again every
// rebalanceInterval.
//
// Rebalance of a topic: its readable queues (every queueData's ids
// 0..readQueueNums-1). Clustering: the group's consumer ids from
// GET_CONSUMER_LIST_BY_GROUP to one of the topic's brokers, then
// AllocateMessageQueueAveragely; a failed lookup changes nothing.
// Broadcasting: every queue. A queue taken away has its offset persisted,
// then is dropped. A queue given gets its start offset (computePullFromWhere):
// the stored offset; or, with none, CONSUME_FROM_LAST_OFFSET's GET_MAX_OFFSET
// (0 for a retry topic), CONSUME_FROM_FIRST_OFFSET's 0, or
// CONSUME_FROM_TIMESTAMP's SEARCH_OFFSET_BY_TIMESTAMP; if the broker cannot
// be asked, the queue waits for the next rebalance. Then a QueueConsumer
// (queue_consumer.h) pulls and consumes it.
//
// Offsets (offset_store.h) are persisted every persistConsumerOffsetInterval
// by the instance, when a queue is taken away, and at shutdown (done comes
// once a broadcasting consumer's offsets.json is durable). A broadcasting
// consumer with localOffsetStoreDir loads that file at start(); a file that
// neither it nor its .bak can give back fails the start.
//
// Invariants: every queue in queues_ belongs to a subscribed topic and was
// assigned by the latest rebalance of that topic; one rebalance per topic is
// in flight at a time; nothing is pulled or consumed after shutdown().
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "broker/client/message_queue.h"
#include "broker/client/mq_client_instance.h"
#include "broker/client/offset_store.h"
#include "broker/client/push_consumer_config.h"
#include "broker/client/queue_consumer.h"
#include "broker/common/lifetime.h"
#include "broker/common/name_order.h"

namespace mqlab::client {

class PushConsumer final : public MQConsumerInner {
 public:
  // Requires: instance outlives the consumer.
  PushConsumer(MQClientInstance& instance, PushConsumerConfig config);
  ~PushConsumer() override;
  PushConsumer(const PushConsumer&) = delete;
  PushConsumer& operator=(const PushConsumer&) = delete;

  // expression: "*" or "TagA || TagB". InvalidArgument for a bad topic name or
  // an expression without tags. Allowed after start (the next heartbeat and
  // rebalance pick it up).
  Status subscribe(const std::string& topic, const std::string& expression);
  // Requires: before start().
  void register_message_listener(MessageHandler handler);

  // InvalidArgument without subscriptions or a handler; AlreadyExists when
  // the group is taken on this instance.
  void start(StatusCallback done);
  // Stops pulling, persists the offsets of the assigned queues and sends
  // UNREGISTER_CLIENT for the group. Handler results arriving later are ignored.
  void shutdown(DoneCallback done);
  bool running() const { return running_; }

  // Queues being consumed (start offset known), sorted.
  std::vector<MessageQueue> assigned_queues() const;
  const OffsetStore& offset_store() const { return offset_store_; }
  // The queue's consumer, or null.
  const QueueConsumer* queue_consumer(const MessageQueue& queue) const;

  // --- MQConsumerInner
  const std::string& group_name() const override { return config_.consumerGroup; }
  remoting::ConsumerData consumer_data() const override;
  std::vector<std::string> subscribed_topics() const override;
  void do_rebalance() override;
  void persist_consumer_offset() override;

 private:
  void on_started();
  void rebalance_topic(const std::string& topic);
  std::vector<MessageQueue> readable_queues(const remoting::TopicRouteData& route, const std::string& topic) const;
  void update_process_queue_table(const std::string& topic, const std::set<MessageQueue>& assigned);
  void add_queue(const MessageQueue& queue);
  void remove_queue(const MessageQueue& queue);
  void compute_pull_from_where(const MessageQueue& queue, std::function<void(Result<int64_t>)> done);
  void query_broker_offset(const MessageQueue& queue, remoting::RemotingCommand request,
                           std::function<void(Result<int64_t>)> done);
  std::set<MessageQueue> started_queues() const;

  MQClientInstance& instance_;
  const PushConsumerConfig config_;
  OffsetStore offset_store_;
  MessageHandler handler_;
  std::map<std::string, remoting::SubscriptionData, NameLess> subscriptions_;  // by topic
  ConsumerContext context_;
  std::map<MessageQueue, std::shared_ptr<QueueConsumer>> queues_;
  std::set<std::string> rebalancing_;  // topics with a consumer-list lookup in flight
  bool running_ = false;
  bool registered_ = false;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::client
