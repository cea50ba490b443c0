#include "broker/processor/consumer_send_msg_back_processor.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "broker/common/log.h"
#include "broker/meta/topic_config.h"
#include "broker/processor/broker_controller.h"
#include "broker/processor/send_message_processor.h"
#include "broker/remoting/response_code.h"
#include "broker/store/message_codec.h"
#include "broker/store/schedule_message_service.h"

namespace mqlab::broker {
namespace {

using remoting::RemotingCommand;
using remoting::ResponseCode;

constexpr const char* kConsumerSendMsgBackProcessorLog = "broker";

struct SendBackHeader {
  int64_t offset = 0;
  std::string group;
  int32_t delayLevel = 0;
  std::optional<std::string> originMsgId;
  bool unitMode = false;
  std::optional<int32_t> maxReconsumeTimes;
};

Result<SendBackHeader> parse_send_back_header(const RemotingCommand& request) {
  SendBackHeader header;
  MQ_ASSIGN_OR_RETURN(header.offset, request.ext_int("offset"));
  MQ_ASSIGN_OR_RETURN(header.group, request.ext_string("group"));
  MQ_ASSIGN_OR_RETURN(header.delayLevel, request.ext_int32("delayLevel"));
  header.originMsgId = request.optional_ext_string("originMsgId");
  MQ_ASSIGN_OR_RETURN(std::optional<bool> unit_mode, request.optional_ext_bool("unitMode"));
  header.unitMode = unit_mode.value_or(false);
  MQ_ASSIGN_OR_RETURN(header.maxReconsumeTimes, request.optional_ext_int32("maxReconsumeTimes"));
  return header;
}

// The copy to store: the original's body, flag, properties and born fields,
// one more reconsume, the retry bookkeeping properties.
store::MessageToStore retry_copy(const store::DecodedMessage& original, const SendBackHeader& header) {
  store::MessageToStore copy;
  copy.body.assign(original.body.begin(), original.body.end());
  copy.flag = original.flag;
  copy.properties = original.properties();
  copy.properties.try_emplace(std::string(store::kPropertyRetryTopic), std::string(original.topic));
  std::string origin = header.originMsgId.value_or("");
  if (auto it = copy.properties.find(std::string(store::kPropertyOriginMessageId)); it != copy.properties.end()) {
    origin = it->second;  // MessageAccessor.getOriginMessageId: the first delivery's id wins
  }
  if (origin.empty()) origin = store::create_offset_message_id(original.store_host, original.physical_offset);
  copy.properties[std::string(store::kPropertyOriginMessageId)] = origin;
  copy.properties[std::string(store::kPropertyWaitStoreMsgOk)] = "false";
  copy.sysflag = original.sysflag & ~(store::kSysFlagBornHostV6 | store::kSysFlagStoreHostV6);
  copy.born_timestamp_ms = original.born_timestamp_ms;
  copy.born_host = original.born_host;
  copy.reconsume_times = original.reconsume_times + 1;
  return copy;
}

struct Refusal {
  int32_t code;
  std::string remark;
};

// Creates topic through create (retry or DLQ) when missing; a new topic is
// re-registered with the NameServers.
Result<meta::TopicConfig> ensure_topic(BrokerController& controller, const std::string& name,
                                       const std::function<Result<meta::TopicConfig>()>& create) {
  const bool existed = controller.topic_config_manager().find(name) != nullptr;
  Result<meta::TopicConfig> topic = create();
  if (topic.ok() && !existed) controller.register_broker_all_soon();
  return topic;
}

// Picks %DLQ% or %RETRY% for the copy and sets its topic, queue and DELAY.
std::optional<Refusal> route_copy(BrokerController& controller, const RemotingCommand& request,
                                  const SendBackHeader& header, const meta::SubscriptionGroupConfig& group,
                                  const meta::TopicConfig& retry, int32_t reconsumed, store::MessageToStore& copy) {
  env::Random& random = controller.env().random();
  const int32_t max_reconsume_times =
      effective_max_reconsume_times(request, header.maxReconsumeTimes, group.retryMaxTimes);
  if (reconsumed >= max_reconsume_times || header.delayLevel < 0) {
    const std::string name = meta::dlq_topic(header.group);
    Result<meta::TopicConfig> dlq = ensure_topic(
        controller, name, [&] { return controller.topic_config_manager().create_topic_of_dlq(header.group); });
    if (!dlq.ok()) return Refusal{ResponseCode::SYSTEM_ERROR, "topic[" + name + "] not exist"};
    MQ_LOG(kInfo, kConsumerSendMsgBackProcessorLog,
           "message at " << header.offset << " reconsumed " << reconsumed << " times (max " << max_reconsume_times
                         << "): to " << name);
    copy.topic = dlq->topicName;
    copy.queue_id = static_cast<int32_t>(random.uniform(std::max(dlq->writeQueueNums, 1)));
    copy.properties.erase(std::string(store::kPropertyDelayLevel));  // a dead letter is not delayed
    return std::nullopt;
  }
  // RocketMQ's rule: level 0 lets the broker pick 3 + reconsumeTimes (the
  // first retry after 10 s with the default levels); the store clamps a
  // level past the last to the last when it parks the copy.
  const int32_t max_level = controller.message_store().schedule_message_service().max_delay_level();
  const int32_t level = std::min(header.delayLevel == 0 ? 3 + reconsumed : header.delayLevel, max_level);
  MQ_ASSERT(level >= 1);
  MQ_ASSERT(level <= max_level);
  copy.topic = retry.topicName;
  copy.queue_id = static_cast<int32_t>(random.uniform(std::max(retry.writeQueueNums, 1)));
  copy.properties[std::string(store::kPropertyDelayLevel)] = std::to_string(level);
  return std::nullopt;
}

}  // namespace

void ConsumerSendMsgBackProcessor::process(const RemotingCommand& request, remoting::ResponseChannel channel) {
  Result<SendBackHeader> parsed = parse_send_back_header(request);
  if (!parsed.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, parsed.status().message());
  const SendBackHeader& header = *parsed;
  Result<meta::SubscriptionGroupConfig> group = controller_.subscription_group_manager().find_or_create(header.group);
  if (!group.ok()) {
    return channel.reply(ResponseCode::SUBSCRIPTION_GROUP_NOT_EXIST, "subscription group not exist, " + header.group);
  }
  const BrokerConfig& config = controller_.config();
  if (!meta::PermName::is_writeable(config.brokerPermission)) {
    return channel.reply(ResponseCode::NO_PERMISSION,
                         "the broker[" + config.brokerIP1 + "] sending message is forbidden");
  }
  if (group->retryQueueNums <= 0) return channel.reply(ResponseCode::SUCCESS);  // retries disabled: dropped
  const std::string retry_name = meta::retry_topic(header.group);
  Result<meta::TopicConfig> retry = ensure_topic(controller_, retry_name, [&] {
    return controller_.topic_config_manager().create_topic_of_retry(header.group, group->retryQueueNums);
  });
  if (!retry.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, "topic[" + retry_name + "] not exist");
  if (!meta::PermName::is_writeable(retry->perm)) {
    return channel.reply(ResponseCode::NO_PERMISSION, "the topic[" + retry_name + "] sending message is forbidden");
  }
  Result<std::vector<uint8_t>> bytes = controller_.message_store().look_message_by_offset(PhyOffset(header.offset));
  Result<store::DecodedRecord> decoded =
      bytes.ok() ? store::decode_record(*bytes) : Result<store::DecodedRecord>(bytes.status());
  if (!decoded.ok() || decoded->kind != store::RecordKind::kMessage) {
    return channel.reply(ResponseCode::SYSTEM_ERROR, "look message by offset failed, " + std::to_string(header.offset));
  }
  const store::DecodedMessage& original = decoded->message;
  store::MessageToStore copy = retry_copy(original, header);
  if (std::optional<Refusal> refusal =
          route_copy(controller_, request, header, *group, *retry, original.reconsume_times, copy)) {
    return channel.reply(refusal->code, refusal->remark);
  }
  copy.properties[std::string(store::kPropertyCluster)] = config.brokerClusterName;
  copy.store_host = controller_.store_host();
  controller_.message_store().put_message(
      std::move(copy), lifetime_.guard([this, channel = std::move(channel)](store::PutMessageResult result) mutable {
        if (result.status == store::PutMessageStatus::PUT_OK) {
          ++controller_.stats().msg_put_total;
          return channel.reply(ResponseCode::SUCCESS);
        }
        ++controller_.stats().msg_put_failed;
        channel.reply(ResponseCode::SYSTEM_ERROR, store::put_message_status_name(result.status));
      }));
}

}  // namespace mqlab::broker
