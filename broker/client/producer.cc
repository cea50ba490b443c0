#include "broker/client/producer.h"

#include <optional>
#include <utility>

#include "broker/client/compression.h"
#include "broker/client/mq_client_api.h"
#include "broker/common/assign_text.h"
#include "broker/common/log.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/wire_text.h"
#include "broker/store/message_codec.h"

namespace mqlab::client {

using remoting::RemotingCommand;

namespace {
constexpr const char* kProducerLog = "producer";
}  // namespace

// One send in progress.
struct Producer::SendContext {
  std::string topic;
  std::string uniq_key;
  api::SendMessageRequestHeader header;  // queueId and brokerName set per attempt; views into topic, last_queue
  std::vector<uint8_t> body;             // compressed when sysFlag says so
  SendCallback done;
  Nanos begin_ns = 0;
  int32_t times_total = 1;
  int32_t attempts = 0;
  MessageQueue last_queue;  // of the last attempt; empty before the first
  bool may_be_stored = false;  // some attempt failed after its request went out
  std::optional<SendResult> stored;  // a non-SEND_OK store kept while trying another broker
  std::string last_error;
  bool delivered = false;
  // Filled in place once the send ends (its strings keep their room from
  // send to send, as the UNIQ_KEY's does), handed to done by the task
  // deliver posts: a callback taking it by reference leaves it here.
  SendResult result;
  // send(message, queue): this queue only, one attempt, no fault avoidance.
  std::optional<MessageQueue> target;
};

void Producer::reset_send_context(SendContext& context) {
  // A default context, field by field and keeping the strings' room (a
  // 32-digit UNIQ_KEY, the properties' text): moving a default SendContext
  // in cost more than the allocations the shelf saves. A field added to
  // SendContext must be reset here; producer_protocol_test's
  // EachSendStartsFromAFreshContext sends one message after another.
  context.topic.clear();
  context.uniq_key.clear();
  std::string properties = std::move(context.header.properties);
  properties.clear();
  context.header = api::SendMessageRequestHeader{};
  context.header.properties = std::move(properties);
  context.body.clear();
  context.done = nullptr;
  context.begin_ns = 0;
  context.times_total = 1;
  context.attempts = 0;
  context.last_queue.topic.clear();
  context.last_queue.brokerName.clear();
  context.last_queue.queueId = 0;
  context.may_be_stored = false;
  context.stored.reset();
  context.last_error.clear();
  context.delivered = false;
  SendResult& result = context.result;
  result.status = SendStatus::FAILED;
  result.msgId.clear();
  result.offsetMsgId.clear();
  result.messageQueue.topic.clear();
  result.messageQueue.brokerName.clear();
  result.messageQueue.queueId = 0;
  result.queueOffset = -1;
  result.attempts = 0;
  result.remark.clear();
  context.target.reset();
}

Producer::Producer(MQClientInstance& instance, ProducerConfig config)
    : instance_(instance), config_(std::move(config)), ids_(instance.config().clientIP, instance.env().random()) {}

Producer::~Producer() {
  if (running_) instance_.forget_producer(config_.producerGroup);
}

void Producer::start(StatusCallback done) {
  const bool config_ok = config_.sendMsgTimeout > 0 && config_.retryTimesWhenSendFailed >= 0 &&
                         config_.maxMessageSize > 0 && config_.compressMsgBodyOverHowmuch >= 0;
  if (!config_ok) {
    instance_.env().executor().post([done = std::move(done)] {
      done(Status::InvalidArgument("ProducerConfig: timeouts, sizes and retry counts must not be negative"));
    });
    return;
  }
  if (instance_.running()) {
    // Registering now lets the instance start its own inner producer in one step.
    const Status status = register_with_instance();
    instance_.env().executor().post([done = std::move(done), status] { done(status); });
    return;
  }
  instance_.start(lifetime_.guard([this, done = std::move(done)](Status status) mutable {
    done(status.ok() ? register_with_instance() : status);
  }));
}

Status Producer::register_with_instance() {
  if (running_) return Status::Ok();
  MQ_RETURN_IF_ERROR(instance_.register_producer(config_.producerGroup));
  running_ = true;
  instance_.send_heartbeat_to_all_brokers([] {});
  return Status::Ok();
}

void Producer::shutdown(DoneCallback done) {
  if (!running_) {
    instance_.env().executor().post(std::move(done));
    return;
  }
  running_ = false;
  instance_.unregister_producer(config_.producerGroup, std::move(done));
}

int64_t Producer::now_ms() const { return instance_.env().clock().now_ns() / kNanosPerMilli; }

Status Producer::validate(const Message& message) const {
  MQ_RETURN_IF_ERROR(store::validate_topic_name(message.topic));
  if (message.body.empty()) return Status::InvalidArgument("the message body length is zero");
  if (message.body.size() > static_cast<size_t>(config_.maxMessageSize)) {
    return Status::InvalidArgument("the message body size over max value, MAX: " +
                                   std::to_string(config_.maxMessageSize));
  }
  return Status::Ok();
}

// --- one send -----------------------------------------------------------------------

void Producer::send(Message&& message, SendCallback done) {
  MQ_ASSERT(done != nullptr);
  Status status = running_ && instance_.running()
                      ? validate(message)
                      : Status::Unavailable("producer " + config_.producerGroup + " is not running");
  if (!status.ok()) {
    SendResult result;
    result.status = SendStatus::FAILED;
    result.messageQueue.topic = message.topic;
    result.remark = status.to_string();
    instance_.env().executor().post(
        [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
    return;
  }
  send_with_route(prepare(std::move(message), std::move(done)));
}

// DefaultMQProducerImpl.send(msg, mq): the caller picked the queue, so a
// failure is final (no retry on another queue: the caller chose this one).
void Producer::send(Message&& message, MessageQueue queue, SendCallback done) {
  MQ_ASSERT(done != nullptr);
  Status status = running_ && instance_.running()
                      ? validate(message)
                      : Status::Unavailable("producer " + config_.producerGroup + " is not running");
  if (status.ok() && queue.topic != message.topic) {
    status = Status::InvalidArgument("message's topic " + message.topic + " not equal mq's topic " + queue.topic);
  }
  if (status.ok() && (queue.brokerName.empty() || queue.queueId < 0)) {
    status = Status::InvalidArgument("message queue needs a broker name and a queue id >= 0: " + queue.to_string());
  }
  if (!status.ok()) {
    SendResult result;
    result.status = SendStatus::FAILED;
    result.messageQueue = queue;
    result.remark = status.to_string();
    instance_.env().executor().post(
        [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
    return;
  }
  std::shared_ptr<SendContext> context = prepare(std::move(message), std::move(done));
  context->times_total = 1;
  context->target = std::move(queue);
  send_with_route(std::move(context));
}

// Builds the request header (sendKernelImpl): UNIQ_KEY, properties, retry
// topic fields, compression.
std::shared_ptr<Producer::SendContext> Producer::prepare(Message&& message, SendCallback done) {
  std::shared_ptr<SendContext> context = contexts_.take();
  const std::string uniq_key_name(store::kPropertyUniqKey);
  // A consumer's re-send keeps the UNIQ_KEY it has; a new message gets one.
  // Both written into the context's string: a kept context has its room.
  const auto stamped = message.properties.find(uniq_key_name);
  if (stamped != message.properties.end()) {
    context->uniq_key.assign(stamped->second);
  } else {
    ids_.next_into(context->uniq_key);
  }
  api::SendMessageRequestHeader& header = context->header;
  if (is_retry_topic(message.topic)) {
    // A consumer's re-send: the counts travel in the header, not as properties.
    message.properties[uniq_key_name] = context->uniq_key;
    store::MessageProperties properties = wire_properties(message);
    if (auto it = properties.find(std::string(store::kPropertyReconsumeTime)); it != properties.end()) {
      header.reconsumeTimes = remoting::parse_int32(it->second).value_or(0);
      properties.erase(it);
    }
    if (auto it = properties.find(std::string(store::kPropertyMaxReconsumeTimes)); it != properties.end()) {
      header.maxReconsumeTimes = remoting::parse_int32(it->second);
      properties.erase(it);
    }
    header.properties = store::encode_properties(properties);
  } else {
    encode_wire_properties_into(message, uniq_key_name, context->uniq_key, header.properties);
  }
  context->topic = std::move(message.topic);
  header.producerGroup = config_.producerGroup;
  header.topic = context->topic;
  header.defaultTopic = config_.createTopicKey;
  header.defaultTopicQueueNums = config_.defaultTopicQueueNums;
  header.bornTimestamp = instance_.env().clock().wall_ms();
  header.flag = message.flag;
  context->body = std::move(message.body);
  if (config_.compressMsgBodyEnable && context->body.size() > static_cast<size_t>(config_.compressMsgBodyOverHowmuch)) {
    context->body = deflate_body(context->body);
    header.sysFlag |= store::kSysFlagCompressed;
  }
  context->done = std::move(done);
  context->begin_ns = instance_.env().clock().now_ns();
  context->times_total = 1 + config_.retryTimesWhenSendFailed;
  return context;
}

void Producer::send_with_route(std::shared_ptr<SendContext> context) {
  if (instance_.route_version(context->topic) != 0) {
    attempt(std::move(context));
    return;
  }
  const std::string topic = context->topic;
  instance_.update_topic_route(topic, lifetime_.guard([this, context](Status status) {
    if (!status.ok()) {
      context->last_error = "No route info of this topic: " + context->topic + " (" + status.to_string() + ")";
      finish(context);
      return;
    }
    attempt(context);
  }));
}

TopicPublishInfo* Producer::publish_info(const std::string& topic) {
  const uint64_t version = instance_.route_version(topic);
  if (version == 0) return nullptr;
  // The topic sent to last, nearly always: no search of the map.
  auto* found = publish_found_.find(publish_, topic);
  if (found == nullptr) {
    publish_.try_emplace(topic);
    found = publish_found_.find(publish_, topic);
  }
  PublishEntry& entry = found->second;
  if (entry.route_version != version) {
    const remoting::TopicRouteData* route = instance_.find_route(topic);
    MQ_ASSERT(route != nullptr);  // a version is only handed out with a route
    entry.info = TopicPublishInfo::from_route(topic, *route, instance_.env().random().next_u64());
    entry.route_version = version;
  }
  return &entry.info;
}

void Producer::attempt(std::shared_ptr<SendContext> context) {
  MQ_ASSERT(context->attempts <= context->times_total);
  // One clock read serves the whole attempt (deadline, queue choice, its
  // start): a send's clock reads were a tenth of its instructions.
  const Nanos now_ns = instance_.env().clock().now_ns();
  const Nanos elapsed = now_ns - context->begin_ns;
  const Nanos timeout = millis(config_.sendMsgTimeout);
  if (context->attempts >= context->times_total) return finish(context);
  if (elapsed >= timeout) {
    context->last_error = "sendDefaultImpl call timeout after " + std::to_string(elapsed / kNanosPerMilli) + " ms";
    return finish(context);
  }
  // The queue is chosen straight into last_queue (whose broker the choice
  // avoids): a copy of it on the way cost two string copies an attempt.
  if (context->target) {
    context->last_queue = *context->target;
  } else {
    TopicPublishInfo* info = publish_info(context->topic);
    if (info == nullptr || !info->ok()) {
      context->last_error = "No writable queue of topic " + context->topic + " in its route";
      return finish(context);
    }
    context->last_queue = info->select_one_message_queue(
        context->last_queue.brokerName, config_.sendLatencyFaultEnable ? &faults_ : nullptr, now_ns / kNanosPerMilli);
  }
  ++context->attempts;
  const MessageQueue& queue = context->last_queue;
  const std::optional<std::string> address = instance_.find_broker_address_in_publish(queue.brokerName);
  if (!address) {
    // Java: MQClientException "The broker[...] not exist", an isolation.
    context->last_error = "The broker[" + queue.brokerName + "] not exist";
    if (config_.sendLatencyFaultEnable) faults_.update_fault_item(queue.brokerName, 0, true, now_ms());
    return attempt(context);
  }
  // Set in the context's own header (nothing else reads these two): a copy
  // per attempt was four string copies.
  context->header.queueId = queue.queueId;
  context->header.brokerName = queue.brokerName;
  // The body is framed from the context, which keeps it for the next
  // attempt: a request carrying a copy of it cost an allocation and a copy.
  const Nanos attempt_start = now_ns;
  // The response by rvalue reference, as on_response takes it: the
  // callback's caller holds it, and each by-value hop moved a whole command.
  auto on_answer = lifetime_.guard([this, context, attempt_start](Result<RemotingCommand>&& response) mutable {
    on_response(std::move(context), attempt_start, std::move(response));
  });
  static_assert(remoting::ResponseCallback::fits_inline<decltype(on_answer)>, "a send's callback allocates no more");
  remoting::RemotingClient& remoting = instance_.remoting();
  if (remoting.sends_json_headers()) {
    // The header written straight from the struct: the same bytes as the
    // command below would encode to, without building its fields' strings.
    const api::SendMessageRequestHeader& header = context->header;
    remoting.invoke_written(
        *address, remoting::RequestCode::SEND_MESSAGE_V2,
        [&header](int32_t opaque, std::vector<uint8_t>& out) {
          api::append_send_message_v2_json_header(header, opaque, out);
        },
        context->body, timeout - elapsed, std::move(on_answer));
    return;
  }
  RemotingCommand request = api::build_send_message_v2_header(context->header);
  remoting.invoke(*address, request, context->body, timeout - elapsed, std::move(on_answer));
}

void Producer::on_response(std::shared_ptr<SendContext> context, Nanos attempt_start,
                           Result<RemotingCommand>&& response) {
  // The attempt's queue: one attempt is in flight per send, so last_queue
  // is still the one this response answers (read before the next attempt).
  const MessageQueue& queue = context->last_queue;
  const Nanos now_ns = instance_.env().clock().now_ns();
  const int64_t latency_ms = (now_ns - attempt_start) / kNanosPerMilli;
  const AttemptOutcome outcome = classify_send_response(response);
  if (config_.sendLatencyFaultEnable) {
    faults_.update_fault_item(queue.brokerName, latency_ms, outcome.verdict != AttemptVerdict::kStored,
                              now_ns / kNanosPerMilli);
  }
  switch (outcome.verdict) {
    case AttemptVerdict::kStored: {
      SendResult& result = context->result;
      set_stored_result(*context, outcome, *response, result);
      if (result.status != SendStatus::SEND_OK && config_.retryAnotherBrokerWhenNotStoreOK) {
        context->stored = result;
        return attempt(std::move(context));
      }
      return deliver(std::move(context));
    }
    case AttemptVerdict::kRetry:
    case AttemptVerdict::kStop:
      context->may_be_stored = context->may_be_stored || outcome.may_be_stored;
      context->last_error = outcome.remark;
      MQ_LOG(kDebug, kProducerLog, "send to " << queue.to_string() << " attempt " << context->attempts << ": " << outcome.remark);
      if (outcome.verdict == AttemptVerdict::kStop) return finish(std::move(context));
      return attempt(std::move(context));
  }
}

void Producer::set_stored_result(const SendContext& context, const AttemptOutcome& outcome,
                                 const RemotingCommand& response, SendResult& result) const {
  MQ_ASSERT(outcome.verdict == AttemptVerdict::kStored);
  const api::SendMessageResponseHeader header = api::read_send_message_response(response);
  // Into the strings' kept room (the context's result): a new SendResult
  // allocated the two 32-digit ids a send.
  result.status = outcome.stored_status;
  assign_text(result.msgId, context.uniq_key);
  assign_text(result.offsetMsgId, header.msgId);
  assign_text(result.messageQueue.topic, context.last_queue.topic);
  assign_text(result.messageQueue.brokerName, context.last_queue.brokerName);
  // The broker may pick another queue.
  result.messageQueue.queueId = header.queueId >= 0 ? header.queueId : context.last_queue.queueId;
  result.queueOffset = header.queueOffset;
  result.attempts = context.attempts;
  if (result.status != SendStatus::SEND_OK) {
    assign_text(result.remark, outcome.remark);
  } else {
    result.remark.clear();
  }
}

void Producer::finish(std::shared_ptr<SendContext> context) {
  SendResult& result = context->result;
  if (context->stored) {
    result = *context->stored;
    result.attempts = context->attempts;
    return deliver(std::move(context));
  }
  const int64_t cost_ms = (instance_.env().clock().now_ns() - context->begin_ns) / kNanosPerMilli;
  result.status = context->may_be_stored ? SendStatus::UNKNOWN : SendStatus::FAILED;
  assign_text(result.msgId, context->uniq_key);
  result.offsetMsgId.clear();
  result.messageQueue = context->last_queue;
  if (result.messageQueue.topic.empty()) result.messageQueue.topic = context->topic;
  result.queueOffset = -1;
  result.attempts = context->attempts;
  result.remark = "Send [" + std::to_string(context->attempts) + "] times, still failed, cost [" +
                  std::to_string(cost_ms) + "]ms, Topic: " + context->topic + ": " + context->last_error;
  deliver(std::move(context));
}

void Producer::deliver(std::shared_ptr<SendContext> context) {
  MQ_ASSERT(!context->delivered);
  MQ_ASSERT(context->result.attempts <= context->times_total);
  context->delivered = true;
  // Always posted: on the first-attempt failure paths we are still inside send().
  // The task holds only the context (a callback and a SendResult were four
  // times env::Task's inline room, an allocation per send).
  instance_.env().executor().post([context = std::move(context)] {
    const SendCallback done = std::move(context->done);
    done(std::move(context->result));
  });
}

}  // namespace mqlab::client
