#include "broker/processor/admin_broker_processor.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <utility>

#include "broker/common/log.h"
#include "broker/processor/broker_controller.h"
#include "broker/remoting/response_code.h"
#include "broker/remoting/wire_text.h"
#include "broker/store/schedule_message_service.h"

namespace mqlab::broker {
namespace {

using remoting::RemotingCommand;
using remoting::ResponseCode;

constexpr const char* kAdminBrokerProcessorLog = "broker";
constexpr std::string_view kBrokerVersionDesc = "V4_9_7";  // what remoting::kDefaultVersion (407) names
constexpr std::string_view kSystemTopicPrefix = "rmq_sys_";

// TopicValidator.SYSTEM_TOPIC_SET (4.9.7), but for BenchmarkTest: RocketMQ's
// TopicConfigManager creates that one itself (1024 queues) and so refuses it
// here; mqlab's brokers do not create it, so an operator creates it with
// mqadmin updateTopic, like any topic, before `mqadmin perf produce` (whose
// default topic it is, as in RocketMQ's benchmark).
bool is_system_topic(std::string_view topic) {
  static const std::set<std::string_view> kTopics = {"TBW102",
                                                     "SCHEDULE_TOPIC_XXXX",
                                                     "RMQ_SYS_TRANS_HALF_TOPIC",
                                                     "RMQ_SYS_TRACE_TOPIC",
                                                     "RMQ_SYS_TRANS_OP_HALF_TOPIC",
                                                     "TRANS_CHECK_MAX_TIME_TOPIC",
                                                     "SELF_TEST_TOPIC",
                                                     "OFFSET_MOVED_EVENT"};
  return kTopics.contains(topic) || topic.starts_with(kSystemTopicPrefix);
}

struct QueueRef {
  std::string topic;
  int32_t queue_id = 0;
};

Result<QueueRef> parse_queue_ref(const RemotingCommand& request) {
  QueueRef ref;
  MQ_ASSIGN_OR_RETURN(ref.topic, request.ext_string("topic"));
  MQ_ASSIGN_OR_RETURN(ref.queue_id, request.ext_int32("queueId"));
  return ref;
}

void reply_with_body(const RemotingCommand& request, remoting::ResponseChannel& channel, const std::string& body) {
  RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
  response.body.assign(body.begin(), body.end());
  channel.reply(std::move(response));
}

void reply_with_offset(const RemotingCommand& request, remoting::ResponseChannel& channel, const char* field,
                       int64_t value) {
  RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
  response.set_ext_int(field, value);
  channel.reply(std::move(response));
}

int64_t or_zero(const Result<int64_t>& value) { return value.ok() ? *value : 0; }

// "[ 0 days, 1 hours, 2 minutes, 3 seconds ]", as BrokerController.getRuntime prints it.
std::string runtime_text(int64_t ms) {
  const int64_t seconds = ms / 1000;
  return "[ " + std::to_string(seconds / 86400) + " days, " + std::to_string(seconds / 3600 % 24) + " hours, " +
         std::to_string(seconds / 60 % 60) + " minutes, " + std::to_string(seconds % 60) + " seconds ]";
}

Result<meta::TopicConfig> parse_topic_config(const RemotingCommand& request) {
  meta::TopicConfig config;
  MQ_ASSIGN_OR_RETURN(config.topicName, request.ext_string("topic"));
  MQ_ASSIGN_OR_RETURN(config.readQueueNums, request.ext_int32("readQueueNums"));
  MQ_ASSIGN_OR_RETURN(config.writeQueueNums, request.ext_int32("writeQueueNums"));
  MQ_ASSIGN_OR_RETURN(config.perm, request.ext_int32("perm"));
  MQ_ASSIGN_OR_RETURN(config.topicFilterType, request.ext_string("topicFilterType"));
  MQ_ASSIGN_OR_RETURN(std::optional<int32_t> sys_flag, request.optional_ext_int32("topicSysFlag"));
  config.topicSysFlag = sys_flag.value_or(0);
  MQ_ASSIGN_OR_RETURN(std::optional<bool> order, request.optional_ext_bool("order"));
  config.order = order.value_or(false);
  return config;
}

}  // namespace

Result<int64_t> AdminBrokerProcessor::store_time_at(const std::string& topic, int32_t queue_id, QueueOffset offset) {
  store::MessageStore& store = controller_.message_store();
  store::ConsumeQueue* queue = store.find_consume_queue(topic, queue_id);
  if (queue == nullptr) return Status::NotFound("no queue " + topic + ":" + std::to_string(queue_id));
  MQ_ASSIGN_OR_RETURN(std::optional<store::ConsumeQueueEntry> entry, queue->get(offset));
  if (!entry.has_value() || entry->is_placeholder()) {
    return Status::NotFound("no entry at " + offset.to_string() + " in " + topic + ":" + std::to_string(queue_id));
  }
  return store.commit_log().store_timestamp_at(entry->offset, entry->size);
}

void AdminBrokerProcessor::get_max_offset(const RemotingCommand& request, remoting::ResponseChannel channel) {
  Result<QueueRef> ref = parse_queue_ref(request);
  if (!ref.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, ref.status().message());
  const QueueOffset offset = controller_.message_store().max_offset_in_queue(ref->topic, ref->queue_id);
  reply_with_offset(request, channel, "offset", offset.value());
}

void AdminBrokerProcessor::get_min_offset(const RemotingCommand& request, remoting::ResponseChannel channel) {
  Result<QueueRef> ref = parse_queue_ref(request);
  if (!ref.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, ref.status().message());
  const QueueOffset offset = controller_.message_store().min_offset_in_queue(ref->topic, ref->queue_id);
  reply_with_offset(request, channel, "offset", offset.value());
}

void AdminBrokerProcessor::search_offset_by_timestamp(const RemotingCommand& request,
                                                      remoting::ResponseChannel channel) {
  Result<QueueRef> ref = parse_queue_ref(request);
  if (!ref.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, ref.status().message());
  Result<int64_t> timestamp = request.ext_int("timestamp");
  if (!timestamp.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, timestamp.status().message());
  Result<QueueOffset> offset =
      controller_.message_store().offset_in_queue_by_time(ref->topic, ref->queue_id, *timestamp);
  if (!offset.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, offset.status().message());
  reply_with_offset(request, channel, "offset", offset->value());
}

void AdminBrokerProcessor::get_earliest_msg_storetime(const RemotingCommand& request,
                                                      remoting::ResponseChannel channel) {
  Result<QueueRef> ref = parse_queue_ref(request);
  if (!ref.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, ref.status().message());
  const QueueOffset min = controller_.message_store().min_offset_in_queue(ref->topic, ref->queue_id);
  Result<int64_t> time = store_time_at(ref->topic, ref->queue_id, min);
  reply_with_offset(request, channel, "timestamp", time.ok() ? *time : -1);
}

void AdminBrokerProcessor::update_and_create_topic(const RemotingCommand& request, remoting::ResponseChannel channel) {
  Result<meta::TopicConfig> config = parse_topic_config(request);
  if (!config.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, config.status().message());
  const std::string& topic = config->topicName;
  if (Status valid = meta::validate_topic_name(topic); !valid.ok()) {
    return channel.reply(ResponseCode::SYSTEM_ERROR, valid.message());
  }
  if (is_system_topic(topic)) {
    return channel.reply(ResponseCode::SYSTEM_ERROR, "The topic[" + topic + "] is conflict with system topic.");
  }
  if (topic == controller_.config().brokerClusterName) {
    return channel.reply(ResponseCode::SYSTEM_ERROR,
                         "the topic[" + topic + "] is conflict with system reserved words.");
  }
  Result<meta::TopicConfig> stored = controller_.topic_config_manager().create_or_update(*config);
  if (!stored.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, stored.status().message());
  MQ_LOG(kInfo, kAdminBrokerProcessorLog, "UPDATE_AND_CREATE_TOPIC " << topic << " from " << channel.remote_address());
  controller_.register_broker_all_soon();
  channel.reply(ResponseCode::SUCCESS);
}

void AdminBrokerProcessor::get_all_topic_config(const RemotingCommand& request, remoting::ResponseChannel channel) {
  constexpr int32_t kUnmasked = meta::PermName::PERM_READ | meta::PermName::PERM_WRITE;
  reply_with_body(request, channel, topic_config_wrapper(controller_.topic_config_manager(), kUnmasked).to_json());
}

void AdminBrokerProcessor::get_all_consumer_offset(const RemotingCommand& request, remoting::ResponseChannel channel) {
  reply_with_body(request, channel, controller_.consumer_offset_manager().all_offsets_json());
}

void AdminBrokerProcessor::get_all_subscription_group_config(const RemotingCommand& request,
                                                             remoting::ResponseChannel channel) {
  reply_with_body(request, channel, remoting::dump_json_text(controller_.subscription_group_manager().to_json()));
}

void AdminBrokerProcessor::get_all_delay_offset(const RemotingCommand& request, remoting::ResponseChannel channel) {
  reply_with_body(request, channel, controller_.message_store().schedule_message_service().offsets_json());
}

void AdminBrokerProcessor::get_broker_runtime_info(const RemotingCommand& request, remoting::ResponseChannel channel) {
  store::MessageStore& store = controller_.message_store();
  const BrokerStats& stats = controller_.stats();
  env::Env& env = controller_.env();
  const int64_t now_ms = env.clock().wall_ms();
  std::map<std::string, std::string> table;
  table["brokerVersionDesc"] = std::string(kBrokerVersionDesc);
  table["brokerVersion"] = std::to_string(remoting::kDefaultVersion);
  table["bootTimestamp"] = std::to_string(controller_.boot_timestamp_ms());
  table["runtime"] = runtime_text(now_ms - controller_.boot_timestamp_ms());
  table["brokerRole"] = store::broker_role_name(controller_.store_config().brokerRole);
  table["msgPutTotalTodayNow"] = std::to_string(stats.msg_put_total);
  table["msgGetTotalTodayNow"] = std::to_string(stats.msg_get_total);
  table["msgPutFailedTotal"] = std::to_string(stats.msg_put_failed);
  table["commitLogMinOffset"] = std::to_string(store.min_phy_offset().value());
  table["commitLogMaxOffset"] = std::to_string(store.max_phy_offset().value());
  table["flushedCommitLogOffset"] = std::to_string(store.flushed_phy_offset().value());
  table["dispatchBehindBytes"] = std::to_string(store.max_phy_offset() - store.dispatched_phy_offset());
  table["storeWritable"] = store.writable() ? "true" : "false";
  if (Result<env::SpaceInfo> space = env.files().space(controller_.store_config().commit_log_dir());
      space.ok() && space->capacity_bytes > 0) {
    const double used = static_cast<double>(space->capacity_bytes - space->available_bytes);
    table["commitLogDiskRatio"] = std::to_string(used / static_cast<double>(space->capacity_bytes));
  }
  table["consumerGroupCount"] = std::to_string(controller_.consumer_manager().groups().size());
  table["producerChannelCount"] = std::to_string(controller_.producer_manager().channel_count());
  table["pullRequestsParked"] = std::to_string(controller_.pull_request_hold_service().parked_count());
  reply_with_body(request, channel, remoting::dump_json_text(nlohmann::json{{"table", table}}));
}

void AdminBrokerProcessor::get_topic_stats_info(const RemotingCommand& request, remoting::ResponseChannel channel) {
  Result<std::string> topic = request.ext_string("topic");
  if (!topic.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, topic.status().message());
  const meta::TopicConfig* config = controller_.topic_config_manager().find(*topic);
  if (config == nullptr) return channel.reply(ResponseCode::TOPIC_NOT_EXIST, "topic[" + *topic + "] not exist");
  store::MessageStore& store = controller_.message_store();
  nlohmann::json entries = nlohmann::json::array();
  for (int32_t queue_id = 0; queue_id < config->writeQueueNums; ++queue_id) {
    const QueueOffset min = store.min_offset_in_queue(*topic, queue_id);
    const QueueOffset max = store.max_offset_in_queue(*topic, queue_id);
    int64_t last_update_ms = 0;
    if (max.value() > 0) last_update_ms = or_zero(store_time_at(*topic, queue_id, max - 1));
    entries.push_back({{"brokerName", controller_.config().brokerName},
                       {"queueId", queue_id},
                       {"topic", *topic},
                       {"minOffset", min.value()},
                       {"maxOffset", max.value()},
                       {"lastUpdateTimestamp", last_update_ms}});
  }
  reply_with_body(request, channel, remoting::dump_json_text(nlohmann::json{{"offsetTable", entries}}));
}

void AdminBrokerProcessor::get_consume_stats(const RemotingCommand& request, remoting::ResponseChannel channel) {
  Result<std::string> group = request.ext_string("consumerGroup");
  if (!group.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, group.status().message());
  std::set<std::string> topics;
  if (std::optional<std::string> topic = request.optional_ext_string("topic"); topic && !topic->empty()) {
    topics.insert(*topic);
  } else {
    topics = controller_.consumer_offset_manager().topics_of_group(*group);
  }
  const ConsumerGroupInfo* live = controller_.consumer_manager().find(*group);
  store::MessageStore& store = controller_.message_store();
  nlohmann::json entries = nlohmann::json::array();
  int64_t diff_total = 0;
  for (const std::string& topic : topics) {
    const meta::TopicConfig* config = controller_.topic_config_manager().find(topic);
    if (config == nullptr) continue;
    // A live group that does not subscribe to the topic has nothing to report on it.
    if (live != nullptr && !live->subscriptions.empty() && live->find_subscription(topic) == nullptr) continue;
    for (int32_t queue_id = 0; queue_id < config->readQueueNums; ++queue_id) {
      const int64_t broker_offset = store.max_offset_in_queue(topic, queue_id).value();
      const int64_t consumer_offset =
          std::max<int64_t>(controller_.consumer_offset_manager().query_offset(*group, topic, queue_id).value_or(0), 0);
      int64_t last_ms = 0;
      if (consumer_offset > 0) last_ms = or_zero(store_time_at(topic, queue_id, QueueOffset(consumer_offset - 1)));
      diff_total += broker_offset - consumer_offset;
      entries.push_back({{"brokerName", controller_.config().brokerName},
                         {"queueId", queue_id},
                         {"topic", topic},
                         {"brokerOffset", broker_offset},
                         {"consumerOffset", consumer_offset},
                         {"lastTimestamp", last_ms}});
    }
  }
  const nlohmann::json body{{"consumeTps", 0}, {"diffTotal", diff_total}, {"offsetTable", entries}};
  reply_with_body(request, channel, remoting::dump_json_text(body));
}

}  // namespace mqlab::broker
