#include "broker/client/queue_consumer.h"

#include <utility>

#include "broker/client/mix_all.h"
#include "broker/client/mq_client_api.h"
#include "broker/client/producer.h"
#include "broker/client/subscription.h"
#include "broker/common/byte_buffer_pool.h"
#include "broker/common/log.h"

namespace mqlab::client {

using remoting::RemotingCommand;

namespace {
constexpr const char* kQueueConsumerLog = "consumer";
// Java's RETRY_GROUP delay: a message sent back the first time is due after
// level 3 (10 s), one level later for every earlier retry.
constexpr int32_t kFirstRetryDelayLevel = 3;
}  // namespace

QueueConsumer::QueueConsumer(ConsumerContext& context, MessageQueue queue)
    : context_(context), queue_(std::move(queue)) {}

void QueueConsumer::start(int64_t offset) {
  MQ_ASSERT(!started());
  MQ_ASSERT(!dropped_);
  MQ_ASSERT(offset >= 0);
  process_queue_.emplace(offset);
  next_offset_ = offset;
  pull_now();
}

// --- the pull loop --------------------------------------------------------------------

void QueueConsumer::pull_now() {
  MQ_ASSERT(!pull_pending_);
  pull_pending_ = true;
  context_.instance.env().executor().post([weak = weak_from_this()] {
    if (auto self = weak.lock()) self->pull();
  });
}

void QueueConsumer::pull_later(int64_t delay_ms) {
  MQ_ASSERT(!pull_pending_);
  MQ_ASSERT(delay_ms >= 0);
  pull_pending_ = true;
  context_.instance.env().executor().run_after(millis(delay_ms), [weak = weak_from_this()] {
    if (auto self = weak.lock()) self->pull();
  });
}

bool QueueConsumer::flow_controlled() const {
  const PushConsumerConfig& config = context_.config;
  return process_queue_->message_count() > static_cast<size_t>(config.pullThresholdForQueue) ||
         process_queue_->cached_bytes() > static_cast<uint64_t>(config.pullThresholdSizeForQueue) * 1024 * 1024 ||
         process_queue_->max_span() > config.consumeConcurrentlyMaxSpan;
}

void QueueConsumer::pull() {
  MQ_ASSERT(pull_pending_);
  pull_pending_ = false;
  if (dropped_ || !context_.instance.running()) return;
  if (flow_controlled()) return pull_later(context_.config.pullTimeDelayMillsWhenFlowControl);
  const auto subscription = context_.subscriptions.find(queue_.topic);
  if (subscription == context_.subscriptions.end()) {
    MQ_LOG(kWarn, kQueueConsumerLog, "no subscription for " << queue_.to_string() << "; pulling later");
    return pull_later(context_.config.pullTimeDelayMillsWhenException);
  }
  const auto broker = context_.instance.find_broker_address_in_subscribe(queue_.brokerName, suggest_broker_id_, false);
  if (!broker) {
    // The route may have moved on: refresh it and try again after the pause.
    context_.instance.update_topic_route(queue_.topic, [](Status) {});
    MQ_LOG(kWarn, kQueueConsumerLog, "no address of broker " << queue_.brokerName << " for " << queue_.to_string());
    return pull_later(context_.config.pullTimeDelayMillsWhenException);
  }
  send_pull(*broker, subscription->second);
}

void QueueConsumer::send_pull(const MQClientInstance::FindBrokerResult& broker,
                              const remoting::SubscriptionData& subscription) {
  const PushConsumerConfig& config = context_.config;
  api::PullMessageRequestHeader header;
  header.consumerGroup = config.consumerGroup;
  header.topic = queue_.topic;
  header.queueId = queue_.queueId;
  header.queueOffset = next_offset_;
  header.maxMsgNums = config.pullBatchSize;
  header.sysFlag = api::kPullFlagSuspend;
  if (config.postSubscriptionWhenPull) header.sysFlag |= api::kPullFlagSubscription;
  if (config.messageModel == MessageModel::CLUSTERING) {
    const int64_t commit = context_.offset_store.read_offset_in_memory(queue_).value_or(0);
    // A slave ignores commits (and its copy would be overwritten by the master's).
    if (commit > 0 && !broker.slave) {
      header.sysFlag |= api::kPullFlagCommitOffset;
      header.commitOffset = commit;
    }
  }
  header.suspendTimeoutMillis = config.brokerSuspendMaxTimeMillis;
  header.subscription = subscription.subString;
  header.subVersion = subscription.subVersion;
  header.expressionType = subscription.expressionType;
  pull_pending_ = true;
  const int64_t request_offset = next_offset_;
  // The response by rvalue reference, here and in on_pull: the callback's
  // caller holds it, and each by-value hop moved a whole command.
  auto on_answer = [weak = weak_from_this(), request_offset,
                    address = broker.address](Result<RemotingCommand>&& response) {
    auto self = weak.lock();
    if (!self) return;
    // A broker that does not answer: the next pulls go to another of its group.
    if (!response.ok()) self->context_.instance.note_request_failure(address, response.status());
    self->on_pull(std::move(response), request_offset);
  };
  static_assert(remoting::ResponseCallback::fits_inline<decltype(on_answer)>, "a pull's callback allocates no more");
  remoting::RemotingClient& remoting = context_.instance.remoting();
  const Nanos timeout = millis(config.consumerTimeoutMillisWhenSuspend);
  if (remoting.sends_json_headers()) {
    // The header written straight from the struct, as a producer's sends
    // are: the bytes the command below encodes to, without its field strings.
    remoting.invoke_written(
        broker.address, remoting::RequestCode::PULL_MESSAGE,
        [&header](int32_t opaque, std::vector<uint8_t>& out) {
          api::append_pull_message_json_header(header, opaque, out);
        },
        {}, timeout, std::move(on_answer));
    return;
  }
  remoting.invoke(broker.address, api::build_pull_message(header), timeout, std::move(on_answer));
}

void QueueConsumer::on_pull(Result<RemotingCommand>&& response, int64_t request_offset) {
  MQ_ASSERT(pull_pending_);
  pull_pending_ = false;
  if (dropped_) return;
  Result<api::PullResponse> pulled =
      response.ok() ? api::parse_pull_message(std::move(response.value())) : Result<api::PullResponse>(response.status());
  if (!pulled.ok()) {
    MQ_LOG(kWarn, kQueueConsumerLog, "pull " << queue_.to_string() << " at " << request_offset << ": " << pulled.status().to_string());
    return pull_later(context_.config.pullTimeDelayMillsWhenException);
  }
  api::PullResponse& result = *pulled;
  suggest_broker_id_ = result.suggestWhichBrokerId;
  next_offset_ = result.nextBeginOffset;
  switch (result.status) {
    case api::PullStatus::FOUND:
      on_found(std::move(result.body), result.nextBeginOffset, result.minOffset, result.maxOffset);
      return pull_now();
    case api::PullStatus::NO_NEW_MSG:
      process_queue_->advance(result.nextBeginOffset);
      commit_consumed_offset();
      return pull_now();
    case api::PullStatus::NO_MATCHED_MSG:
    case api::PullStatus::OFFSET_ILLEGAL:
      if (result.status == api::PullStatus::NO_MATCHED_MSG) {
        process_queue_->advance(result.nextBeginOffset);
        commit_consumed_offset();
      } else {
        MQ_LOG(kWarn, kQueueConsumerLog, "offset " << request_offset << " of " << queue_.to_string() << " is illegal; moving to "
                                      << result.nextBeginOffset);
        process_queue_->reset(result.nextBeginOffset);
        committed_offset_ = std::max<int64_t>(0, result.nextBeginOffset);  // may move it back
        context_.offset_store.update_offset(queue_, committed_offset_, false);
        context_.offset_store.persist(queue_);
      }
      if (result.nextBeginOffset == request_offset) return pull_later(context_.config.pullTimeDelayMillsWhenNoProgress);
      return pull_now();
  }
}

void QueueConsumer::on_found(std::vector<uint8_t> body, int64_t next_begin_offset, int64_t min_offset,
                             int64_t max_offset) {
  // Encoded once per pull, added to each message's properties as it is decoded.
  encode_offset_properties(min_offset, max_offset, offset_properties_);
  // Each decoded into the shared MessageExt the ProcessQueue keeps; the
  // list is ours, kept for its room (put_messages empties it).
  std::vector<std::shared_ptr<MessageExt>>& messages = pulled_;
  MQ_ASSERT(messages.empty());
  if (Status status = decode_pulled_messages(body, host_texts_, offset_properties_, shelf_, messages); !status.ok()) {
    // Java's decoder stops at a bad record too; the offset still moves on.
    MQ_LOG(kError, kQueueConsumerLog, "pull " << queue_.to_string() << ": kept " << messages.size() << " messages; "
                                 << status.to_string());
  }
  // Every message copied what it needs: the frame's body room goes back to
  // the kept buffers it came from (decode_command_into) for the next frame.
  give_back_byte_buffer(std::move(body));
  const remoting::SubscriptionData& subscription = context_.subscriptions.at(queue_.topic);
  // A subscription to every tag ("*") keeps every message: no message's TAGS
  // is looked up then (a search of its properties per message).
  if (!tags_match(subscription, std::string_view())) {
    std::erase_if(messages, [&subscription](const std::shared_ptr<MessageExt>& message) {
      const std::optional<std::string_view> tags = store::find_property(message->properties_text, store::kPropertyTags);
      return !tags_match(subscription, tags.value_or(std::string_view()));
    });
  }
  const bool retry = is_retry_topic(queue_.topic);
  for (const std::shared_ptr<MessageExt>& message : messages) {
    message->brokerName = queue_.brokerName;
    // A message from %RETRY%<group> is handed out under its original topic.
    if (retry) {
      if (auto original = message->property(store::kPropertyRetryTopic)) message->topic = *original;
    }
  }
  process_queue_->put_messages(messages, next_begin_offset);
  commit_consumed_offset();  // everything may have been filtered out
  dispatch();
}

void QueueConsumer::commit_consumed_offset() {
  const int64_t offset = process_queue_->consumed_offset();
  // Most calls (a pull that added messages, an empty long poll) leave the
  // offset where it was: skip the store's map lookup then. The store's entry
  // for our queue is only ever written by us while we are not dropped.
  if (offset < 0 || offset == committed_offset_) return;
  context_.offset_store.update_offset(queue_, offset, true);
  committed_offset_ = offset;
}

// --- consumption ----------------------------------------------------------------------

void QueueConsumer::dispatch() {
  const size_t limit = static_cast<size_t>(std::max(1, context_.config.consumeConcurrentlyPerQueue));
  while (!dropped_ && process_queue_->in_flight_count() < limit) {
    std::shared_ptr<const MessageExt> message = process_queue_->take_next();
    if (message == nullptr) return;
    // Posted: a handler that completes inline must not recurse into dispatch.
    context_.instance.env().executor().post([weak = weak_from_this(), message] {
      if (auto self = weak.lock()) self->call_handler(message);
    });
  }
}

void QueueConsumer::call_handler(std::shared_ptr<const MessageExt> message) {
  if (dropped_) return;
  MQ_ASSERT(context_.handler != nullptr);  // PushConsumer::start refuses to start without one
  // The flag lives in the callback: it cannot be copied, so only a second
  // call of the one the handler holds can report twice.
  auto report = [weak = weak_from_this(), message, called = false](ConsumeResult result) mutable {
    MQ_ASSERT_MSG(!called, "a message handler reported twice for offset " + std::to_string(message->queueOffset));
    called = true;
    if (auto self = weak.lock()) self->on_consumed(message, result);
  };
  static_assert(ConsumeCallback::fits_inline<decltype(report)>, "a message's report allocates no more");
  context_.handler(*message, std::move(report));
}

void QueueConsumer::on_consumed(std::shared_ptr<const MessageExt> message, ConsumeResult result) {
  if (dropped_) return;  // the queue's next owner starts from the committed offset
  if (result == ConsumeResult::SUCCESS) return consumed(message->queueOffset);
  send_message_back(message, [weak = weak_from_this(), message](bool sent_back) {
    auto self = weak.lock();
    if (!self || self->dropped_) return;
    if (sent_back) return self->consumed(message->queueOffset);
    self->retry_locally(message->queueOffset);
  });
}

void QueueConsumer::consumed(int64_t queue_offset) {
  process_queue_->remove(queue_offset);
  commit_consumed_offset();
  dispatch();
}

void QueueConsumer::retry_locally(int64_t queue_offset) {
  MQ_LOG(kWarn, kQueueConsumerLog, "could not send back offset " << queue_offset << " of " << queue_.to_string()
                                                    << "; consuming it again later");
  process_queue_->park(queue_offset);
  dispatch();  // the others need not wait for it
  context_.instance.env().executor().run_after(
      millis(context_.config.suspendCurrentQueueTimeMillis), [weak = weak_from_this(), queue_offset] {
        auto self = weak.lock();
        if (!self || self->dropped_) return;
        self->process_queue_->release(queue_offset);
        self->dispatch();
      });
}

void QueueConsumer::send_message_back(std::shared_ptr<const MessageExt> message, std::function<void(bool)> done) {
  const std::optional<std::string> master = context_.instance.find_broker_address_in_publish(queue_.brokerName);
  if (!master) return resend_to_retry_topic(std::move(message), std::move(done));
  api::ConsumerSendMsgBackRequestHeader header;
  header.offset = message->commitLogOffset;
  header.group = context_.config.consumerGroup;
  header.delayLevel = 0;
  header.originMsgId = message->msgId;
  header.originTopic = message->topic;
  header.maxReconsumeTimes = context_.config.maxReconsumeTimes;
  context_.instance.remoting().invoke(
      *master, api::build_consumer_send_msg_back(header), millis(context_.config.sendMessageBackTimeoutMillis),
      [weak = weak_from_this(), message, done = std::move(done)](Result<RemotingCommand> response) mutable {
        auto self = weak.lock();
        if (!self) return;
        const Status status = response.ok() ? api::response_status(*response, "CONSUMER_SEND_MSG_BACK") : response.status();
        if (status.ok()) return done(true);
        MQ_LOG(kWarn, kQueueConsumerLog, "send back offset " << message->queueOffset << " of " << self->queue_.to_string() << ": "
                                                << status.to_string() << "; re-sending to the retry topic");
        self->resend_to_retry_topic(std::move(message), std::move(done));
      });
}

// DefaultMQPushConsumerImpl.sendMessageBack's fallback: a copy to
// %RETRY%<group> that says where it came from and how often it was tried.
void QueueConsumer::resend_to_retry_topic(std::shared_ptr<const MessageExt> message, std::function<void(bool)> done) {
  if (!context_.instance.running()) return done(false);
  Message copy;
  copy.topic = retry_topic(context_.config.consumerGroup);
  copy.body = message->body;
  copy.flag = message->flag;
  copy.properties = message->properties();
  copy.properties.erase("MIN_OFFSET");
  copy.properties.erase("MAX_OFFSET");
  const std::string origin_id(store::kPropertyOriginMessageId);
  if (!copy.properties.contains(origin_id)) copy.properties[origin_id] = message->msgId;
  copy.properties[std::string(store::kPropertyRetryTopic)] = message->topic;
  copy.properties[std::string(store::kPropertyReconsumeTime)] = std::to_string(message->reconsumeTimes + 1);
  copy.properties[std::string(store::kPropertyMaxReconsumeTimes)] = std::to_string(context_.config.maxReconsumeTimes);
  copy.delayTimeLevel = kFirstRetryDelayLevel + message->reconsumeTimes;
  context_.instance.inner_producer().send(std::move(copy), [done = std::move(done)](SendResult result) {
    done(is_stored(result.status));
  });
}

}  // namespace mqlab::client
