#include "broker/processor/send_message_processor.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

#include "broker/common/assign_text.h"
#include "broker/common/byte_buffer_pool.h"
#include "broker/common/log.h"
#include "broker/common/same_bytes.h"
#include "broker/meta/topic_config.h"
#include "broker/processor/broker_controller.h"
#include "broker/processor/host_address.h"
#include "broker/processor/send_message_response_header.h"
#include "broker/remoting/ext_field_value.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"
#include "broker/store/message_codec.h"

namespace mqlab::broker {
namespace {

using remoting::RemotingCommand;
using remoting::ResponseCode;

constexpr const char* kSendMessageProcessorLog = "broker";
constexpr int32_t kVersionV3_4_9 = 121;  // MQVersion.Version.V3_4_9.ordinal()
constexpr int32_t kTopicSysFlagUnit = 1;
constexpr int32_t kSendTopicSysFlagUnitSub = 2;
inline constexpr std::string_view kPropertyTransactionPrepared = "TRAN_MSG";

// TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET (4.9.7).
// Asked for every send: six equality tests, which compare lengths first
// (no topic a client sends has one of theirs, mostly), cost less than a
// search of an ordered set (four three-way compares).
bool is_not_allowed_send_topic(std::string_view topic) {
  static constexpr std::array<std::string_view, 6> kTopics = {
      "SCHEDULE_TOPIC_XXXX",        "RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRANS_OP_HALF_TOPIC",
      "TRANS_CHECK_MAX_TIME_TOPIC", "SELF_TEST_TOPIC",          "OFFSET_MOVED_EVENT"};
  return std::find(kTopics.begin(), kTopics.end(), topic) != kTopics.end();
}

// SEND_MESSAGE's header fields, in the order they are checked (the first
// missing or malformed one is the one an error names). SEND_MESSAGE_V2 calls
// field i by the letter 'a' + i (SendMessageRequestHeaderV2's a..l; m, batch,
// and n, brokerName, are not read here).
enum SendField : uint8_t {
  kProducerGroup, kSendTopic, kDefaultTopic, kDefaultTopicQueueNums, kSendQueueId, kSendSysFlag, kBornTimestamp, kFlag,
  kProperties, kReconsumeTimes, kUnitMode, kMaxReconsumeTimes, kSendFieldCount
};
constexpr std::array<std::string_view, kSendFieldCount> kSendFieldNames = {
    "producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId", "sysFlag",
    "bornTimestamp", "flag", "properties", "reconsumeTimes", "unitMode", "maxReconsumeTimes"};
constexpr std::string_view kSendFieldLetters = "abcdefghijkl";
static_assert(kSendFieldLetters.size() == kSendFieldCount);

std::string_view send_field_name(SendField field, bool v2) {
  MQ_ASSERT(field < kSendFieldCount);
  return v2 ? kSendFieldLetters.substr(field, 1) : kSendFieldNames[field];
}

// The field a name stands for, or kSendFieldCount for a name we do not read.
SendField send_field_of(std::string_view name, bool v2) {
  if (v2) {
    const bool letter = name.size() == 1 && name[0] >= 'a' && name[0] < 'a' + kSendFieldCount;
    return letter ? static_cast<SendField>(name[0] - 'a') : kSendFieldCount;
  }
  for (size_t field = 0; field < kSendFieldCount; ++field) {
    if (kSendFieldNames[field] == name) return static_cast<SendField>(field);
  }
  return kSendFieldCount;
}

// A required text field, as a view into the request (see
// SendMessageRequestHeader); the error is read_ext_string's.
Result<std::string_view> read_ext_view(std::string_view name, const std::string_view* value) {
  if (value == nullptr) return remoting::missing_ext_field(name);
  return std::string_view(*value);
}

// Boolean.parseBoolean of the TRAN_MSG property, read from the properties
// text as the stored message will have it (the CLUSTER property the broker
// adds is another name), without building a map or a lowered copy.
bool is_transaction_prepared(std::string_view properties) {
  const std::optional<std::string_view> value = store::find_property(properties, kPropertyTransactionPrepared);
  if (!value || value->size() != 4) return false;
  constexpr std::string_view kTrue = "true";
  for (size_t i = 0; i < kTrue.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>((*value)[i])) != kTrue[i]) return false;
  }
  return true;
}

// Reads field, whose value is at value (null when absent), into header as
// the full read does from a default-constructed header.
Status read_send_field(SendField field, const std::string_view* value, bool v2, SendMessageRequestHeader& header) {
  const std::string_view name = send_field_name(field, v2);
  switch (field) {
    case kProducerGroup: return remoting::assign_read(header.producerGroup, read_ext_view(name, value));
    case kSendTopic: return remoting::assign_read(header.topic, read_ext_view(name, value));
    case kDefaultTopic: return remoting::assign_read(header.defaultTopic, read_ext_view(name, value));
    case kDefaultTopicQueueNums:
      return remoting::assign_read(header.defaultTopicQueueNums, remoting::read_ext_int32(name, value));
    case kSendQueueId: return remoting::assign_read(header.queueId, remoting::read_ext_int32(name, value));
    case kSendSysFlag: return remoting::assign_read(header.sysFlag, remoting::read_ext_int32(name, value));
    case kBornTimestamp: return remoting::assign_read(header.bornTimestamp, remoting::read_ext_int(name, value));
    case kFlag: return remoting::assign_read(header.flag, remoting::read_ext_int32(name, value));
    case kProperties: header.properties = value != nullptr ? *value : std::string_view(); break;
    case kReconsumeTimes: {
      MQ_ASSIGN_OR_RETURN(std::optional<int32_t> reconsume, remoting::read_optional_ext_int32(name, value));
      header.reconsumeTimes = reconsume.value_or(0);
      break;
    }
    case kUnitMode: {
      MQ_ASSIGN_OR_RETURN(std::optional<bool> unit_mode, remoting::read_optional_ext_bool(name, value));
      header.unitMode = unit_mode.value_or(false);
      break;
    }
    case kMaxReconsumeTimes:
      return remoting::assign_read(header.maxReconsumeTimes, remoting::read_optional_ext_int32(name, value));
    case kSendFieldCount: MQ_UNREACHABLE("no field");
  }
  return Status::Ok();
}

// The view header holds of field, or null for a field it holds as a value
// (views into the request: SendMessageRequestHeader).
std::string_view* view_of(SendField field, SendMessageRequestHeader& header) {
  switch (field) {
    case kProducerGroup: return &header.producerGroup;
    case kSendTopic: return &header.topic;
    case kDefaultTopic: return &header.defaultTopic;
    case kProperties: return &header.properties;
    default: return nullptr;
  }
}

bool is_v2(const RemotingCommand& request) { return request.code == remoting::RequestCode::SEND_MESSAGE_V2; }

}  // namespace

Result<SendMessageRequestHeader> parse_send_message_header(const RemotingCommand& request) {
  const bool v2 = is_v2(request);
  // One walk over the fields puts each known one in its slot; the reads
  // below then cost no search (remoting/ext_field_value.h says why).
  std::array<const std::string_view*, kSendFieldCount> values{};
  for (const auto& [name, value] : request.ext_fields) {
    const SendField field = send_field_of(name, v2);
    if (field != kSendFieldCount) values[field] = &value;
  }
  SendMessageRequestHeader header;
  // SendField's order is the order of checks.
  for (size_t field = 0; field < kSendFieldCount; ++field) {
    MQ_RETURN_IF_ERROR(read_send_field(static_cast<SendField>(field), values[field], v2, header));
  }
  return header;
}

Result<SendMessageRequestHeader> SendMessageHeaderReader::read(const RemotingCommand& request) {
  const remoting::ExtFields& fields = request.ext_fields;
  const bool v2 = is_v2(request);
  if (Memo* memo = memo_.follow(fields)) {
    // The last request's header, its views moved onto this request and the
    // values that changed read again; SEND_MESSAGE after SEND_MESSAGE_V2
    // (or back) has the other names, read in full.
    const uint32_t changed = fields.lineage().changed;
    bool read = memo->v2 == v2;
    for (size_t place = 0; place < fields.size() && read; ++place) {
      const auto field = static_cast<SendField>(memo->field_at[place]);
      if (field == kSendFieldCount) continue;
      const std::string_view* value = &fields.begin()[place].second;
      if (std::string_view* view = view_of(field, memo->header)) {
        *view = *value;  // present, as it was in the full read: no error to give
      } else if ((changed & (uint32_t{1} << place)) != 0) {
        read = read_send_field(field, value, v2, memo->header).ok();
      }
    }
    if (read) return memo->header;
    memo_.forget(fields);  // the full read below names the bad field
  }
  Result<SendMessageRequestHeader> header = parse_send_message_header(request);
  if (!header.ok()) return header;
  if (Memo* memo = memo_.start(fields)) {
    MQ_ASSERT(fields.size() <= memo->field_at.size());
    size_t place = 0;
    for (const auto& field : fields) memo->field_at[place++] = send_field_of(field.first, v2);
    memo->v2 = v2;
    memo->header = *header;
  }
  return header;
}

PutResponse put_status_response(const store::PutMessageResult& result) {
  using store::PutMessageStatus;
  auto with_store_remark = [&](std::string text) {
    return result.remark.empty() ? text : text + " (" + result.remark + ")";
  };
  PutResponse response;
  response.stored = store::put_message_stored(result.status);
  switch (result.status) {
    case PutMessageStatus::PUT_OK: response.code = ResponseCode::SUCCESS; break;
    case PutMessageStatus::FLUSH_DISK_TIMEOUT: response.code = ResponseCode::FLUSH_DISK_TIMEOUT; break;
    case PutMessageStatus::FLUSH_SLAVE_TIMEOUT: response.code = ResponseCode::FLUSH_SLAVE_TIMEOUT; break;
    case PutMessageStatus::SLAVE_NOT_AVAILABLE: response.code = ResponseCode::SLAVE_NOT_AVAILABLE; break;
    case PutMessageStatus::SERVICE_NOT_AVAILABLE:
      response.code = ResponseCode::SERVICE_NOT_AVAILABLE;
      response.remark = with_store_remark(
          "service not available now. It may be caused by one of the following reasons: the broker's disk is "
          "full, messages are put to the slave, message store has been shut down, etc.");
      break;
    case PutMessageStatus::CREATE_MAPEDFILE_FAILED:
      response.code = ResponseCode::SYSTEM_ERROR;
      response.remark = with_store_remark("create mapped file failed, server is busy or broken.");
      break;
    case PutMessageStatus::MESSAGE_ILLEGAL:
    case PutMessageStatus::PROPERTIES_SIZE_EXCEEDED:
      response.code = ResponseCode::MESSAGE_ILLEGAL;
      response.remark = with_store_remark(
          "the message is illegal, maybe msg body or properties length not matched. msg properties length limit "
          "32k.");
      break;
    case PutMessageStatus::OS_PAGECACHE_BUSY:
      response.code = ResponseCode::SYSTEM_ERROR;
      response.remark = with_store_remark("[PC_SYNCHRONIZED]broker busy, start flow control for a while");
      break;
    case PutMessageStatus::UNKNOWN_ERROR:
      response.code = ResponseCode::SYSTEM_ERROR;
      response.remark = with_store_remark("UNKNOWN_ERROR");
      break;
  }
  // Only the four "stored" statuses may answer a code a client reads as stored.
  MQ_ASSERT(response.stored ==
            (response.code == ResponseCode::SUCCESS || response.code == ResponseCode::FLUSH_DISK_TIMEOUT ||
             response.code == ResponseCode::FLUSH_SLAVE_TIMEOUT || response.code == ResponseCode::SLAVE_NOT_AVAILABLE));
  return response;
}

int32_t effective_max_reconsume_times(const RemotingCommand& request, std::optional<int32_t> from_request,
                                      int32_t group_retry_max_times) {
  if (request.version >= kVersionV3_4_9 && from_request.has_value()) return *from_request;
  return group_retry_max_times;
}

void SendMessageProcessor::process(RemotingCommand& request, remoting::ResponseChannel channel) {
  Result<SendMessageRequestHeader> parsed = header_reader_.read(request);
  if (!parsed.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, parsed.status().message());
  const SendMessageRequestHeader& header = *parsed;
  // Read only before the channel moves into the put's completion.
  const std::string& remote_address = channel.remote_address();
  auto refuse = [&](const Refusal& refusal) {
    ++controller_.stats().msg_put_failed;
    RemotingCommand response = request.make_response(refusal.code, refusal.remark);
    set_send_message_response_fields(SendMessageResponseHeader{}, response);
    channel.reply(std::move(response));
  };
  const meta::TopicConfig* topic = nullptr;
  if (std::optional<Refusal> refusal = check_message(header, remote_address, topic)) return refuse(*refusal);
  MQ_ASSERT(topic != nullptr);  // check_message found or created it
  Destination destination{std::string(header.topic), header.queueId};
  if (destination.queue_id < 0) {
    if (topic->writeQueueNums <= 0) {
      return refuse({ResponseCode::NO_PERMISSION, "topic[" + std::string(header.topic) + "] has no write queue"});
    }
    destination.queue_id = static_cast<int32_t>(controller_.env().random().uniform(topic->writeQueueNums));
  }
  if (std::optional<Refusal> refusal = route_retry_and_dlq(request, header, destination)) return refuse(*refusal);
  store::MessageToStore message = build_message(request, header, destination, remote_address);
  const bool redelivery =
      message.reconsume_times > 0 && store::find_property(header.properties, store::kPropertyDelayLevel).has_value();
  if (is_transaction_prepared(header.properties) && !redelivery) {
    return refuse({ResponseCode::NO_PERMISSION,
                   "the broker[" + controller_.config().brokerIP1 + "] sending transaction message is forbidden"});
  }
  // Put latency is the store's part of the round trip: from handing it the
  // message to its answer (flush, slave ack), whatever the outcome.
  const Nanos put_started_ns = controller_.env().clock().now_ns();
  // The reply needs only the channel (it has the request's opaque and
  // serialize type), not the request with its body and ext fields (three
  // copies of them per put, through the guard and std::function).
  auto on_put = lifetime_.guard([this, channel = std::move(channel), destination = std::move(destination),
                                 put_started_ns](store::PutMessageResult result) mutable {
    controller_.stats().put_latency.record(controller_.env().clock().now_ns() - put_started_ns);
    reply_put(std::move(channel), result, destination);
  });
  static_assert(store::PutCallback::fits_inline<decltype(on_put)>, "a put's completion allocates no more");
  controller_.message_store().put_message(std::move(message), std::move(on_put));
  // The store has copied the body into its record: its room goes back for
  // the next frame (it came from the kept buffers, decode_command_into).
  give_back_byte_buffer(std::move(message.body));
}

std::optional<SendMessageProcessor::Refusal> SendMessageProcessor::check_message(const SendMessageRequestHeader& header,
                                                                                 const std::string& remote_address,
                                                                                 const meta::TopicConfig*& topic) {
  meta::TopicConfigManager& topics = controller_.topic_config_manager();
  const BrokerConfig& config = controller_.config();
  const meta::TopicConfig* existing = topics.find(header.topic);
  if (!meta::PermName::is_writeable(config.brokerPermission) && existing != nullptr && existing->order) {
    return Refusal{ResponseCode::NO_PERMISSION, "the broker[" + config.brokerIP1 + "] sending message is forbidden"};
  }
  if (!same_text(valid_topic_, header.topic)) {
    if (Status valid = meta::validate_topic_name(header.topic); !valid.ok()) {
      return Refusal{ResponseCode::SYSTEM_ERROR, valid.message()};
    }
    assign_text(valid_topic_, header.topic);
  }
  if (is_not_allowed_send_topic(header.topic)) {
    return Refusal{ResponseCode::NO_PERMISSION,
                   "Sending message to topic[" + std::string(header.topic) + "] is forbidden."};
  }
  topic = existing;
  if (topic == nullptr) {
    const bool retry = starts_with_text(header.topic, meta::kRetryGroupTopicPrefix);
    const int32_t sys_flag = !header.unitMode ? 0 : retry ? kSendTopicSysFlagUnitSub : kTopicSysFlagUnit;
    Result<meta::TopicConfig> created =
        topics.create_topic_in_send_message(header.topic, header.defaultTopic, header.defaultTopicQueueNums, sys_flag);
    if (!created.ok() && retry) {
      // createTopicInSendMessageBackMethod(topic, 1, WRITE | READ): RocketMQ
      // uses the full topic name here, not a group.
      created = topics.create_topic_of_retry(header.topic.substr(meta::kRetryGroupTopicPrefix.size()), 1);
    }
    if (!created.ok()) {
      MQ_LOG(
          kWarn, kSendMessageProcessorLog,
          "send to unknown topic " << header.topic << " from " << remote_address << ": " << created.status().message());
      return Refusal{ResponseCode::TOPIC_NOT_EXIST, "topic[" + std::string(header.topic) +
                                                        "] not exist, apply first please! (" +
                                                        created.status().message() + ")"};
    }
    controller_.register_broker_all_soon();
    topic = topics.find(header.topic);
    MQ_ASSERT(topic != nullptr);
  }
  const int32_t id_valid = std::max(topic->writeQueueNums, topic->readQueueNums);
  if (header.queueId >= id_valid) {
    return Refusal{ResponseCode::SYSTEM_ERROR, "request queueId[" + std::to_string(header.queueId) +
                                                   "] is illegal, topic " + std::string(header.topic) + " has " +
                                                   std::to_string(id_valid) + " queues. Producer: " + remote_address};
  }
  return std::nullopt;
}

std::optional<SendMessageProcessor::Refusal> SendMessageProcessor::route_retry_and_dlq(
    const RemotingCommand& request, const SendMessageRequestHeader& header, Destination& destination) {
  if (!starts_with_text(header.topic, meta::kRetryGroupTopicPrefix)) return std::nullopt;
  const std::string group(header.topic.substr(meta::kRetryGroupTopicPrefix.size()));
  Result<meta::SubscriptionGroupConfig> group_config = controller_.subscription_group_manager().find_or_create(group);
  if (!group_config.ok()) {
    return Refusal{ResponseCode::SUBSCRIPTION_GROUP_NOT_EXIST, "subscription group not exist, " + group};
  }
  const int32_t max_reconsume_times =
      effective_max_reconsume_times(request, header.maxReconsumeTimes, group_config->retryMaxTimes);
  if (header.reconsumeTimes < max_reconsume_times) return std::nullopt;
  Result<meta::TopicConfig> dlq = controller_.topic_config_manager().create_topic_of_dlq(group);
  if (!dlq.ok()) return Refusal{ResponseCode::SYSTEM_ERROR, "topic[" + meta::dlq_topic(group) + "] not exist"};
  controller_.register_broker_all_soon();
  MQ_LOG(kInfo, kSendMessageProcessorLog,
         "message for " << header.topic << " reconsumed " << header.reconsumeTimes << " times (max "
                        << max_reconsume_times << "): to " << dlq->topicName);
  destination.topic = dlq->topicName;
  destination.queue_id = static_cast<int32_t>(controller_.env().random().uniform(std::max(dlq->writeQueueNums, 1)));
  return std::nullopt;
}

store::MessageToStore SendMessageProcessor::build_message(RemotingCommand& request,
                                                          const SendMessageRequestHeader& header,
                                                          const Destination& destination,
                                                          const std::string& remote_address) {
  store::MessageToStore message;
  message.topic = destination.topic;
  message.queue_id = destination.queue_id;
  message.flag = header.flag;
  message.body = std::move(request.body);
  // CLUSTER first: it sorts before the properties clients set (KEYS, TAGS,
  // UNIQ_KEY, ...), which then append in order instead of moving every entry
  // after CLUSTER's place; set again after when the client's text named it,
  // since ours wins over a client's.
  const std::string& cluster = controller_.config().brokerClusterName;
  message.properties.insert_or_assign(store::kPropertyCluster, cluster);
  if (store::decode_properties_into(header.properties, message.properties)) {
    message.properties.insert_or_assign(store::kPropertyCluster, cluster);
  }
  // Decoded, and a cluster name BrokerConfig::validate (in start) let
  // through holds no control byte.
  message.properties_round_trip_known = true;
  // The host v6 bits are derived from the hosts by the encoder; the client's
  // own view of them is not ours to store.
  message.sysflag = header.sysFlag & ~(store::kSysFlagBornHostV6 | store::kSysFlagStoreHostV6);
  message.born_timestamp_ms = header.bornTimestamp;
  message.born_host = born_host(remote_address);
  message.store_host = controller_.store_host();
  message.reconsume_times = header.reconsumeTimes;
  MQ_ASSERT(message.queue_id >= 0);
  return message;
}

const store::HostAddress& SendMessageProcessor::born_host(const std::string& remote_address) {
  if (const auto found = born_hosts_.find(remote_address); found != born_hosts_.end()) return found->second;
  if (born_hosts_.size() >= kMaxBornHosts) born_hosts_.clear();
  const auto [it, inserted] = born_hosts_.emplace(remote_address, born_host_of(remote_address));
  MQ_ASSERT(inserted);
  MQ_ASSERT(born_hosts_.size() <= kMaxBornHosts);
  return it->second;
}

void SendMessageProcessor::reply_put(remoting::ResponseChannel channel, const store::PutMessageResult& result,
                                     const Destination& destination) {
  const PutResponse put = put_status_response(result);
  SendMessageResponseHeader header;
  store::OffsetMessageIdText msg_id;  // what header.msgId views (no heap string per send)
  if (put.stored) {
    ++controller_.stats().msg_put_total;
    msg_id = result.append.msg_id_text();
    header = SendMessageResponseHeader{msg_id.view(), destination.queue_id, result.append.queue_offset.value()};
  } else {
    ++controller_.stats().msg_put_failed;
    MQ_LOG(kWarn, kSendMessageProcessorLog,
           "put to " << destination.topic << ":" << destination.queue_id
                     << " failed: " << store::put_message_status_name(result.status) << " " << result.remark);
  }
  if (channel.answers_json()) {
    // Written straight from the header: one answer per message sent.
    const auto write_header = [&put, &header](int32_t opaque, std::vector<uint8_t>& out) {
      append_send_message_response_json_header(put.code, put.remark, header, opaque, out);
    };
    return channel.reply_written(write_header, {});
  }
  RemotingCommand response;
  response.code = put.code;
  response.remark = put.remark;
  set_send_message_response_fields(header, response);
  channel.reply(std::move(response));
}

}  // namespace mqlab::broker
