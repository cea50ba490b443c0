// QueueConsumer: the pull loop and the consumption of one queue assigned to a
// push consumer (RocketMQ's DefaultMQPushConsumerImpl.pullMessage with its
// PullCallback, and ConsumeMessageConcurrentlyService; reference 8.4 steps
// 6-7). The PushConsumer creates one per assigned queue once the start
// offset is known, and drops it when rebalancing takes the queue away.
//
// Pull loop: one PULL_MESSAGE at a time, long-polling (SUSPEND, held by the
// broker up to brokerSuspendMaxTimeMillis, our timeout
// consumerTimeoutMillisWhenSuspend), with the subscription and, when we have
// one and talk to a master, the consumed offset to commit. It goes to
// brokerAddrs[suggestWhichBrokerId of the previous answer], or any address
// of the group. Every answer moves the next offset to nextBeginOffset:
//   FOUND            tag-filter, queue the messages, pull again at once;
//   NO_NEW_MSG       pull again at once (the broker held the request);
//   NO_MATCHED_MSG   pull again at once;
//   OFFSET_ILLEGAL   forget what is queued and restart there, committing
//                    that offset (ali-ons' rule: Java instead drops the
//                    queue for 10 s);
//   anything else    pull again after pullTimeDelayMillsWhenException.
// Flow control: a queue holding too many messages, bytes or too wide an
// offset span waits pullTimeDelayMillsWhenFlowControl before pulling.
//
// Consumption: at most consumeConcurrentlyPerQueue handler calls in flight,
// handed out in offset order. SUCCESS consumes the message. RECONSUME_LATER
// sends it back (CONSUMER_SEND_MSG_BACK, delay level 0, to the master it
// came from); if that fails, the instance's inner producer sends a copy to
// %RETRY%<group>; if that fails too, the message is parked and consumed again
// here after suspendCurrentQueueTimeMillis. Only then is it consumed. After
// each consumption the consumed offset (process_queue.h) goes to the
// OffsetStore; the consumer persists it.
//
// Invariants: at most one pull is in flight or scheduled; nothing happens
// after drop() (late answers and handler results are ignored: the queue's
// next owner starts from the committed offset); every handler call's done
// is called at most once (twice is the handler's bug: MQ_ASSERT).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "broker/client/message.h"
#include "broker/client/message_queue.h"
#include "broker/client/mq_client_instance.h"
#include "broker/client/offset_store.h"
#include "broker/client/process_queue.h"
#include "broker/client/push_consumer_config.h"
#include "broker/common/inline_function.h"
#include "broker/common/name_order.h"
#include "broker/remoting/remoting_command.h"

namespace mqlab::client {

// Reports how one message's consumption went. Move-only: one owner may
// report, once (a second call is a bug, asserted); std::function allocated
// one per message for its captures and a shared flag for that check.
using ConsumeCallback = InlineFunction<void(ConsumeResult)>;
// Called with one message; reports through done, now or later, exactly once.
using MessageHandler = std::function<void(const MessageExt& message, ConsumeCallback done)>;

// What a QueueConsumer uses of its PushConsumer. Everything outlives the
// queue consumers (the PushConsumer drops them before it goes).
struct ConsumerContext {
  MQClientInstance& instance;
  const PushConsumerConfig& config;
  OffsetStore& offset_store;
  const MessageHandler& handler;
  const std::map<std::string, remoting::SubscriptionData, NameLess>& subscriptions;  // by topic
};

class QueueConsumer : public std::enable_shared_from_this<QueueConsumer> {
 public:
  QueueConsumer(ConsumerContext& context, MessageQueue queue);

  // Begins pulling at offset. Requires: not started, not dropped.
  void start(int64_t offset);
  void drop() { dropped_ = true; }

  bool started() const { return process_queue_.has_value(); }
  bool dropped() const { return dropped_; }
  const MessageQueue& queue() const { return queue_; }
  int64_t next_offset() const { return next_offset_; }
  // Requires: started().
  const ProcessQueue& process_queue() const { return *process_queue_; }

 private:
  void pull();
  void pull_later(int64_t delay_ms);
  void pull_now();
  void send_pull(const MQClientInstance::FindBrokerResult& broker, const remoting::SubscriptionData& subscription);
  void on_pull(Result<remoting::RemotingCommand>&& response, int64_t request_offset);
  void on_found(std::vector<uint8_t> body, int64_t next_begin_offset, int64_t min_offset, int64_t max_offset);
  bool flow_controlled() const;

  void dispatch();
  void call_handler(std::shared_ptr<const MessageExt> message);
  void on_consumed(std::shared_ptr<const MessageExt> message, ConsumeResult result);
  void consumed(int64_t queue_offset);
  void send_message_back(std::shared_ptr<const MessageExt> message, std::function<void(bool)> done);
  void resend_to_retry_topic(std::shared_ptr<const MessageExt> message, std::function<void(bool)> done);
  void retry_locally(int64_t queue_offset);
  void commit_consumed_offset();

  ConsumerContext& context_;
  const MessageQueue queue_;
  std::optional<ProcessQueue> process_queue_;
  int64_t next_offset_ = 0;
  int64_t suggest_broker_id_ = 0;  // where the broker said to pull from next (0 = master)
  bool pull_pending_ = false;       // a pull is scheduled or in flight
  bool dropped_ = false;
  int64_t committed_offset_ = -1;  // the last offset given to the OffsetStore; -1 before the first
  HostTextCache host_texts_;  // kept across pulls: most bring one message
  // A pull's MIN_OFFSET / MAX_OFFSET text and its decoded messages, kept for
  // their room: most pulls bring one message, and each allocated both anew.
  std::string offset_properties_;
  std::vector<std::shared_ptr<MessageExt>> pulled_;
  MessageExtShelf shelf_;  // what pulls decode into: messages consumed before, kept for their room
};

}  // namespace mqlab::client
