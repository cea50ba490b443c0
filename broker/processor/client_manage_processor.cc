#include "broker/processor/client_manage_processor.h"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "broker/common/log.h"
#include "broker/processor/broker_controller.h"
#include "broker/remoting/response_code.h"
#include "broker/remoting/wire_text.h"

namespace mqlab::broker {
namespace {

using remoting::RemotingCommand;
using remoting::ResponseCode;

constexpr const char* kClientManageProcessorLog = "broker";
constexpr int32_t kTopicSysFlagUnitSub = 2;  // TopicSysFlag.buildSysFlag(false, true)

// The (group, topic, queueId) every offset request names.
struct OffsetKey {
  std::string group;
  std::string topic;
  int32_t queue_id = 0;
};

Result<OffsetKey> parse_offset_key(const RemotingCommand& request) {
  OffsetKey key;
  MQ_ASSIGN_OR_RETURN(key.group, request.ext_string("consumerGroup"));
  MQ_ASSIGN_OR_RETURN(key.topic, request.ext_string("topic"));
  MQ_ASSIGN_OR_RETURN(key.queue_id, request.ext_int32("queueId"));
  return key;
}

}  // namespace

void ClientManageProcessor::heart_beat(const RemotingCommand& request, remoting::ResponseChannel channel) {
  const std::string_view text(reinterpret_cast<const char*>(request.body.data()), request.body.size());
  Result<remoting::HeartbeatData> parsed = remoting::HeartbeatData::parse(text);
  if (!parsed.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, parsed.status().message());
  const remoting::HeartbeatData& heartbeat = *parsed;
  if (heartbeat.clientID.empty()) return channel.reply(ResponseCode::SYSTEM_ERROR, "HeartbeatData.clientID is empty");
  ClientChannelInfo info;
  info.client_id = heartbeat.clientID;
  info.remote_address = channel.remote_address();
  info.language = request.language;
  info.version = request.version;
  info.last_update_ns = controller_.env().clock().now_ns();
  for (const remoting::ConsumerData& consumer : heartbeat.consumerDataSet) {
    if (consumer.groupName.empty()) continue;  // nothing to file it under
    prepare_consumer_group(consumer);
    controller_.consumer_manager().register_consumer(consumer, info);
  }
  for (const remoting::ProducerData& producer : heartbeat.producerDataSet) {
    if (!producer.groupName.empty()) controller_.producer_manager().register_producer(producer.groupName, info);
  }
  channel.reply(ResponseCode::SUCCESS);
}

bool ClientManageProcessor::prepare_consumer_group(const remoting::ConsumerData& consumer) {
  Result<meta::SubscriptionGroupConfig> group =
      controller_.subscription_group_manager().find_or_create(consumer.groupName);
  if (!group.ok()) {
    MQ_LOG(kDebug, kClientManageProcessorLog, "heartbeat of group " << consumer.groupName << ": " << group.status().message());
    return false;
  }
  if (group->retryQueueNums <= 0) return true;  // retries disabled: no retry topic
  meta::TopicConfigManager& topics = controller_.topic_config_manager();
  const std::string retry = meta::retry_topic(consumer.groupName);
  if (topics.find(retry) != nullptr) return true;
  Result<meta::TopicConfig> created = topics.create_topic_of_retry(consumer.groupName, group->retryQueueNums);
  if (!created.ok()) {
    MQ_LOG(kWarn, kClientManageProcessorLog, "cannot create " << retry << ": " << created.status().message());
    return true;
  }
  if (consumer.unitMode) {
    meta::TopicConfig with_flag = *created;
    with_flag.topicSysFlag = kTopicSysFlagUnitSub;
    (void)topics.create_or_update(with_flag);
  }
  controller_.register_broker_all_soon();
  return true;
}

void ClientManageProcessor::unregister_client(const RemotingCommand& request, remoting::ResponseChannel channel) {
  Result<std::string> client_id = request.ext_string("clientID");
  if (!client_id.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, client_id.status().message());
  if (std::optional<std::string> group = request.optional_ext_string("producerGroup"); group && !group->empty()) {
    controller_.producer_manager().unregister_producer(*group, *client_id);
  }
  if (std::optional<std::string> group = request.optional_ext_string("consumerGroup"); group && !group->empty()) {
    controller_.consumer_manager().unregister_consumer(*group, *client_id);
  }
  channel.reply(ResponseCode::SUCCESS);
}

void ClientManageProcessor::get_consumer_list_by_group(const RemotingCommand& request,
                                                       remoting::ResponseChannel channel) {
  Result<std::string> group = request.ext_string("consumerGroup");
  if (!group.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, group.status().message());
  const ConsumerGroupInfo* info = controller_.consumer_manager().find(*group);
  const std::vector<std::string> ids = info ? info->client_ids() : std::vector<std::string>{};
  if (ids.empty()) return channel.reply(ResponseCode::SYSTEM_ERROR, "no consumer for this group, " + *group);
  RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
  const std::string body = remoting::dump_json_text(nlohmann::json{{"consumerIdList", ids}});
  response.body.assign(body.begin(), body.end());
  channel.reply(std::move(response));
}

void ClientManageProcessor::query_consumer_offset(const RemotingCommand& request, remoting::ResponseChannel channel) {
  Result<OffsetKey> key = parse_offset_key(request);
  if (!key.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, key.status().message());
  std::optional<int64_t> offset =
      controller_.consumer_offset_manager().query_offset(key->group, key->topic, key->queue_id);
  if (!offset.has_value() || *offset < 0) {
    const QueueOffset min = controller_.message_store().min_offset_in_queue(key->topic, key->queue_id);
    if (min.value() > 0) {
      return channel.reply(ResponseCode::QUERY_NOT_FOUND,
                           "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first");
    }
    offset = 0;  // a young queue: a new group starts from its beginning
  }
  RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
  response.set_ext_int("offset", *offset);
  channel.reply(std::move(response));
}

void ClientManageProcessor::update_consumer_offset(const RemotingCommand& request, remoting::ResponseChannel channel) {
  Result<OffsetKey> key = parse_offset_key(request);
  if (!key.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, key.status().message());
  Result<int64_t> offset = request.ext_int("commitOffset");
  if (!offset.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, offset.status().message());
  if (*offset >= 0) {
    Status status = controller_.consumer_offset_manager().commit_offset(key->group, key->topic, key->queue_id, *offset);
    if (!status.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, status.message());
  }
  channel.reply(ResponseCode::SUCCESS);
}

}  // namespace mqlab::broker
