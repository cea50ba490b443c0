#include "broker/client/push_consumer.h"

#include <utility>

#include "broker/client/allocate_message_queue.h"
#include "broker/client/countdown.h"
#include "broker/client/mix_all.h"
#include "broker/client/mq_client_api.h"
#include "broker/client/subscription.h"
#include "broker/common/log.h"
#include "broker/remoting/request_code.h"
#include "broker/store/message_codec.h"

namespace mqlab::client {

using remoting::RemotingCommand;

namespace {
constexpr const char* kPushConsumerLog = "consumer";
constexpr int64_t kDefaultConsumeTimestampLookbackMs = 30 * 60 * 1000;  // Java: half an hour before start
}  // namespace

PushConsumer::PushConsumer(MQClientInstance& instance, PushConsumerConfig config)
    : instance_(instance),
      config_(std::move(config)),
      offset_store_(instance, config_.consumerGroup, config_.messageModel, config_.localOffsetStoreDir),
      context_{instance, config_, offset_store_, handler_, subscriptions_} {}

PushConsumer::~PushConsumer() {
  for (auto& [queue, consumer] : queues_) consumer->drop();
  if (registered_) instance_.forget_consumer(config_.consumerGroup);
}

Status PushConsumer::subscribe(const std::string& topic, const std::string& expression) {
  MQ_RETURN_IF_ERROR(store::validate_topic_name(topic));
  MQ_ASSIGN_OR_RETURN(remoting::SubscriptionData data,
                      build_subscription_data(topic, expression, instance_.env().clock().wall_ms()));
  subscriptions_[topic] = std::move(data);
  if (running_) {
    instance_.update_topic_route(topic, [](Status) {});
    instance_.send_heartbeat_to_all_brokers([] {});
  }
  return Status::Ok();
}

void PushConsumer::register_message_listener(MessageHandler handler) {
  MQ_ASSERT(!running_);
  handler_ = std::move(handler);
}

void PushConsumer::start(StatusCallback done) {
  Status status;
  if (subscriptions_.empty()) status = Status::InvalidArgument("consumer " + config_.consumerGroup + " subscribes to nothing");
  if (!handler_) status = Status::InvalidArgument("consumer " + config_.consumerGroup + " has no message listener");
  if (config_.pullBatchSize <= 0 || config_.consumeConcurrentlyPerQueue <= 0) {
    status = Status::InvalidArgument("PushConsumerConfig: pullBatchSize and consumeConcurrentlyPerQueue must be > 0");
  }
  if (running_) status = Status::Ok();
  // Broadcasting offsets come from the local file before any queue is
  // assigned; a file that neither copy can give back stops the start.
  if (status.ok() && !running_) status = offset_store_.load();
  if (!status.ok() || running_) {
    instance_.env().executor().post([done = std::move(done), status] { done(status); });
    return;
  }
  instance_.start(lifetime_.guard([this, done = std::move(done)](Status status) mutable {
    if (status.ok()) status = instance_.register_consumer(*this);
    if (status.ok()) {
      registered_ = true;
      running_ = true;
      on_started();
    }
    done(status);
  }));
}

// Java's start: the retry subscription, the routes, a heartbeat, then a
// rebalance right away (rebalanceImmediately).
void PushConsumer::on_started() {
  if (config_.messageModel == MessageModel::CLUSTERING) {
    const std::string retry = retry_topic(config_.consumerGroup);
    if (!subscriptions_.contains(retry)) {
      subscriptions_[retry] = build_subscription_data(retry, kSubscribeAll, instance_.env().clock().wall_ms()).value();
    }
  }
  const std::vector<std::string> topics = subscribed_topics();
  auto arrive = make_countdown(topics.size(), lifetime_.guard([this] {
    if (!running_) return;
    instance_.send_heartbeat_to_all_brokers(lifetime_.guard([this] {
      if (running_) instance_.rebalance_immediately();
    }));
  }));
  for (const std::string& topic : topics) {
    instance_.update_topic_route(topic, [arrive, topic](Status status) {
      if (!status.ok()) MQ_LOG(kInfo, kPushConsumerLog, "route of " << topic << " at start: " << status.to_string());
      arrive();
    });
  }
}

void PushConsumer::shutdown(DoneCallback done) {
  if (!running_) {
    instance_.env().executor().post(std::move(done));
    return;
  }
  running_ = false;
  const std::set<MessageQueue> started = started_queues();
  for (auto& [queue, consumer] : queues_) consumer->drop();
  queues_.clear();
  // Unregister once the offsets are persisted (a broadcasting consumer's
  // file is durable), so a process that exits on done loses none.
  offset_store_.persist_all(started, lifetime_.guard([this, done = std::move(done)](Status) mutable {
    registered_ = false;
    instance_.unregister_consumer(config_.consumerGroup, std::move(done));
  }));
}

// --- what the instance asks of us ------------------------------------------------------

remoting::ConsumerData PushConsumer::consumer_data() const {
  remoting::ConsumerData data;
  data.groupName = config_.consumerGroup;
  data.consumeType = "CONSUME_PASSIVELY";
  data.messageModel = std::string(message_model_name(config_.messageModel));
  data.consumeFromWhere = std::string(consume_from_where_name(config_.consumeFromWhere));
  for (const auto& [topic, subscription] : subscriptions_) data.subscriptionDataSet.push_back(subscription);
  return data;
}

std::vector<std::string> PushConsumer::subscribed_topics() const {
  std::vector<std::string> topics;
  for (const auto& [topic, subscription] : subscriptions_) topics.push_back(topic);
  return topics;
}

void PushConsumer::persist_consumer_offset() {
  if (running_) offset_store_.persist_all(started_queues());
}

std::set<MessageQueue> PushConsumer::started_queues() const {
  std::set<MessageQueue> started;
  for (const auto& [queue, consumer] : queues_) {
    if (consumer->started()) started.insert(queue);
  }
  return started;
}

std::vector<MessageQueue> PushConsumer::assigned_queues() const {
  const std::set<MessageQueue> started = started_queues();
  return {started.begin(), started.end()};
}

const QueueConsumer* PushConsumer::queue_consumer(const MessageQueue& queue) const {
  const auto it = queues_.find(queue);
  return it == queues_.end() ? nullptr : it->second.get();
}

// --- rebalance ------------------------------------------------------------------------

void PushConsumer::do_rebalance() {
  if (!running_) return;
  for (const auto& [topic, subscription] : subscriptions_) rebalance_topic(topic);
}

std::vector<MessageQueue> PushConsumer::readable_queues(const remoting::TopicRouteData& route,
                                                        const std::string& topic) const {
  std::vector<MessageQueue> queues;
  for (const remoting::QueueData& queue_data : route.queueDatas) {
    if ((queue_data.perm & kPermRead) == 0) continue;
    for (int32_t id = 0; id < queue_data.readQueueNums; ++id) queues.push_back({topic, queue_data.brokerName, id});
  }
  return queues;
}

void PushConsumer::rebalance_topic(const std::string& topic) {
  if (rebalancing_.contains(topic)) return;
  const remoting::TopicRouteData* route = instance_.find_route(topic);
  if (route == nullptr) {
    if (!is_retry_topic(topic)) MQ_LOG(kDebug, kPushConsumerLog, "rebalance of " << topic << ": no route yet");
    return;
  }
  std::vector<MessageQueue> all = readable_queues(*route, topic);
  if (config_.messageModel == MessageModel::BROADCASTING) {
    update_process_queue_table(topic, {all.begin(), all.end()});
    return;
  }
  const std::optional<std::string> broker = instance_.find_broker_addr_by_topic(topic);
  if (!broker) return;
  rebalancing_.insert(topic);
  instance_.remoting().invoke(
      *broker, api::build_get_consumer_list_by_group(config_.consumerGroup), instance_.api_timeout(),
      lifetime_.guard([this, topic, all = std::move(all)](Result<RemotingCommand> response) mutable {
        rebalancing_.erase(topic);
        if (!running_) return;
        Result<std::vector<std::string>> ids =
            response.ok() ? api::parse_consumer_list(*response) : Result<std::vector<std::string>>(response.status());
        if (!ids.ok()) {
          MQ_LOG(kWarn, kPushConsumerLog, "rebalance of " << topic << ": " << ids.status().to_string());
          return;
        }
        const std::vector<MessageQueue> mine =
            allocate_message_queue_averagely(instance_.client_id(), std::move(all), std::move(ids).value());
        update_process_queue_table(topic, {mine.begin(), mine.end()});
      }));
}

void PushConsumer::update_process_queue_table(const std::string& topic, const std::set<MessageQueue>& assigned) {
  std::vector<MessageQueue> removed;
  for (const auto& [queue, consumer] : queues_) {
    if (queue.topic == topic && !assigned.contains(queue)) removed.push_back(queue);
  }
  for (const MessageQueue& queue : removed) remove_queue(queue);
  for (const MessageQueue& queue : assigned) {
    MQ_ASSERT(queue.topic == topic);
    if (!queues_.contains(queue)) add_queue(queue);
  }
}

void PushConsumer::remove_queue(const MessageQueue& queue) {
  const auto it = queues_.find(queue);
  MQ_ASSERT(it != queues_.end());
  it->second->drop();
  if (it->second->started()) offset_store_.persist(queue);  // the next owner starts from here
  offset_store_.remove_offset(queue);
  queues_.erase(it);
  MQ_LOG(kInfo, kPushConsumerLog, "group " << config_.consumerGroup << " dropped " << queue.to_string());
}

void PushConsumer::add_queue(const MessageQueue& queue) {
  offset_store_.remove_offset(queue);  // a stale in-memory offset from an earlier assignment
  auto consumer = std::make_shared<QueueConsumer>(context_, queue);
  queues_.emplace(queue, consumer);
  compute_pull_from_where(queue, lifetime_.guard([this, weak = std::weak_ptr<QueueConsumer>(consumer),
                                                   queue](Result<int64_t> offset) {
    const std::shared_ptr<QueueConsumer> consumer = weak.lock();
    if (!consumer || consumer->dropped()) return;
    if (!offset.ok() || *offset < 0) {
      MQ_LOG(kWarn, kPushConsumerLog, "no start offset for " << queue.to_string() << " ("
                                                 << (offset.ok() ? "-1" : offset.status().to_string())
                                                 << "); retrying at the next rebalance");
      consumer->drop();
      queues_.erase(queue);
      return;
    }
    MQ_LOG(kInfo, kPushConsumerLog, "group " << config_.consumerGroup << " consumes " << queue.to_string() << " from " << *offset);
    consumer->start(*offset);
  }));
}

void PushConsumer::compute_pull_from_where(const MessageQueue& queue, std::function<void(Result<int64_t>)> done) {
  offset_store_.read_offset_from_store(
      queue, lifetime_.guard([this, queue, done = std::move(done)](Result<int64_t> stored) mutable {
        if (!stored.ok() || *stored >= 0) return done(std::move(stored));
        const bool retry = is_retry_topic(queue.topic);
        switch (config_.consumeFromWhere) {
          case ConsumeFromWhere::CONSUME_FROM_FIRST_OFFSET: return done(int64_t{0});
          case ConsumeFromWhere::CONSUME_FROM_LAST_OFFSET:
            if (retry) return done(int64_t{0});
            return query_broker_offset(queue, api::build_get_max_offset(queue.topic, queue.queueId), std::move(done));
          case ConsumeFromWhere::CONSUME_FROM_TIMESTAMP: {
            if (retry) {
              return query_broker_offset(queue, api::build_get_max_offset(queue.topic, queue.queueId), std::move(done));
            }
            const int64_t timestamp = config_.consumeTimestamp != 0
                                          ? config_.consumeTimestamp
                                          : instance_.env().clock().wall_ms() - kDefaultConsumeTimestampLookbackMs;
            return query_broker_offset(
                queue, api::build_search_offset_by_timestamp(queue.topic, queue.queueId, timestamp), std::move(done));
          }
        }
      }));
}

void PushConsumer::query_broker_offset(const MessageQueue& queue, RemotingCommand request,
                                       std::function<void(Result<int64_t>)> done) {
  const auto broker = instance_.find_broker_address_in_subscribe(queue.brokerName, kMasterId, false);
  if (!broker) {
    instance_.env().executor().post([done = std::move(done), queue] {
      done(Status::Unavailable("The broker[" + queue.brokerName + "] not exist"));
    });
    return;
  }
  const std::string what = remoting::describe_request_code(request.code);
  instance_.remoting().invoke(broker->address, std::move(request), instance_.api_timeout(),
                              [instance = &instance_, done = std::move(done), what,
                               address = broker->address](Result<RemotingCommand> response) {
                                if (!response.ok()) {
                                  // The retry asks another address of the group.
                                  instance->note_request_failure(address, response.status());
                                  return done(response.status().with_context(what));
                                }
                                done(api::parse_offset(*response, what));
                              });
}

}  // namespace mqlab::client
