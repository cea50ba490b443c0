#include "broker/processor/pull_message_processor.h"

#include <algorithm>
#include <array>
#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/common/big_endian.h"
#include "broker/common/log.h"
#include "broker/common/same_bytes.h"
#include "broker/meta/topic_config.h"
#include "broker/processor/broker_controller.h"
#include "broker/processor/pull_message_response_header.h"
#include "broker/remoting/ext_field_value.h"
#include "broker/remoting/response_code.h"
#include "broker/store/message_codec.h"

namespace mqlab::broker {
namespace {

using remoting::RemotingCommand;
using remoting::ResponseCode;
using store::GetMessageStatus;

constexpr const char* kPullMessageProcessorLog = "broker";
constexpr int64_t kMasterId = 0;  // MixAll.MASTER_ID

// PULL_MESSAGE's header fields.
enum PullField : uint8_t {
  kCommitOffset, kConsumerGroup, kExpressionType, kMaxMsgNums, kQueueId, kQueueOffset, kSubVersion, kSubscription,
  kSuspendTimeoutMillis, kSysFlag, kTopic, kPullFieldCount
};
constexpr std::array<std::string_view, kPullFieldCount> kPullFieldNames = {
    "commitOffset", "consumerGroup", "expressionType", "maxMsgNums", "queueId", "queueOffset",
    "subVersion",   "subscription",  "suspendTimeoutMillis", "sysFlag", "topic"};

// The field a name stands for, or kPullFieldCount for a name we do not
// read. Length and first byte single out one candidate (checked for every
// field at compile time below), and one comparison by words confirms it.
constexpr PullField pull_field_candidate(size_t size, char first) {
  switch (size) {
    case 5: return kTopic;
    case 7: return first == 'q' ? kQueueId : kSysFlag;
    case 10: return first == 'm' ? kMaxMsgNums : kSubVersion;
    case 11: return kQueueOffset;
    case 12: return first == 'c' ? kCommitOffset : kSubscription;
    case 13: return kConsumerGroup;
    case 14: return kExpressionType;
    case 20: return kSuspendTimeoutMillis;
    default: return kPullFieldCount;
  }
}
constexpr bool every_pull_field_is_its_own_candidate() {
  for (size_t field = 0; field < kPullFieldCount; ++field) {
    const std::string_view name = kPullFieldNames[field];
    if (pull_field_candidate(name.size(), name[0]) != field) return false;
  }
  return true;
}
static_assert(every_pull_field_is_its_own_candidate());

PullField pull_field_of(std::string_view name) {
  if (name.empty()) return kPullFieldCount;
  const PullField field = pull_field_candidate(name.size(), name[0]);
  if (field == kPullFieldCount || !remoting::same_ext_name(kPullFieldNames[field], name)) return kPullFieldCount;
  return field;
}

bool has_flag(int32_t sys_flag, int32_t flag) { return (sys_flag & flag) != 0; }

// Reads region's record into out (region.length bytes), as
// MessageStore::read_region does into a vector of its own. IoError for a
// short read, Corruption for a record too short to hold its queue offset.
Status read_record(const store::FileRegion& region, std::span<uint8_t> out) {
  MQ_ASSERT(region.file != nullptr);
  MQ_ASSERT(out.size() == region.length);
  if (out.size() < store::kQueueOffsetPosition + 8) {
    return Status::Corruption("a record of " + std::to_string(out.size()) + " bytes is shorter than its header");
  }
  MQ_ASSIGN_OR_RETURN(size_t got, region.file->pread(region.position, out));
  if (got != out.size()) {
    return Status::IoError(region.file->path() + ": short read of a message region at " +
                           std::to_string(region.position));
  }
  return Status::Ok();
}

// Reads field, whose value is at value (null when absent), into header as
// the full read does from a default-constructed header.
Status read_pull_field(PullField field, const std::string_view* value, PullMessageRequestHeader& header) {
  const std::string_view name = kPullFieldNames[field];
  switch (field) {
    case kConsumerGroup: return remoting::assign_read(header.consumerGroup, remoting::read_ext_string(name, value));
    case kTopic: return remoting::assign_read(header.topic, remoting::read_ext_string(name, value));
    case kQueueId: return remoting::assign_read(header.queueId, remoting::read_ext_int32(name, value));
    case kQueueOffset: return remoting::assign_read(header.queueOffset, remoting::read_ext_int(name, value));
    case kMaxMsgNums: return remoting::assign_read(header.maxMsgNums, remoting::read_ext_int32(name, value));
    case kSysFlag: return remoting::assign_read(header.sysFlag, remoting::read_ext_int32(name, value));
    case kCommitOffset: return remoting::assign_read(header.commitOffset, remoting::read_ext_int(name, value));
    case kSuspendTimeoutMillis:
      return remoting::assign_read(header.suspendTimeoutMillis, remoting::read_ext_int(name, value));
    case kSubscription:
      if (value != nullptr) {
        header.subscription = *value;
      } else {
        header.subscription.reset();
      }
      break;
    case kSubVersion: return remoting::assign_read(header.subVersion, remoting::read_ext_int(name, value));
    case kExpressionType:
      if (value != nullptr && !value->empty()) {
        header.expressionType = *value;
      } else {
        header.expressionType = kDefaultExpressionType;
      }
      break;
    case kPullFieldCount: MQ_UNREACHABLE("no field");
  }
  return Status::Ok();
}

// In RocketMQ's order of checks: the first bad field is the one named.
constexpr std::array<PullField, kPullFieldCount> kPullReadOrder = {
    kConsumerGroup, kTopic,        kQueueId,          kQueueOffset,
    kMaxMsgNums,    kSysFlag,      kCommitOffset,     kSuspendTimeoutMillis,
    kSubscription,  kSubVersion,   kExpressionType};


}  // namespace

Result<PullMessageRequestHeader> parse_pull_message_header(const RemotingCommand& request) {
  PullMessageRequestHeader header;
  MQ_RETURN_IF_ERROR(read_pull_message_header(request, header));
  return header;
}

Status read_pull_message_header(const RemotingCommand& request, PullMessageRequestHeader& header) {
  // One walk over the request's fields puts each in its slot; the reads
  // below then cost no search.
  std::array<const std::string_view*, kPullFieldCount> values{};
  for (const auto& [name, value] : request.ext_fields) {
    const PullField field = pull_field_of(name);
    if (field != kPullFieldCount) values[field] = &value;
  }
  for (const PullField field : kPullReadOrder) MQ_RETURN_IF_ERROR(read_pull_field(field, values[field], header));
  return Status::Ok();
}

Status PullMessageHeaderReader::read(const RemotingCommand& request, PullMessageRequestHeader& header) {
  MQ_ASSIGN_OR_RETURN(const PullMessageRequestHeader* read, read_in_place(request, header));
  if (read != &header) header = *read;
  return Status::Ok();
}

Result<const PullMessageRequestHeader*> PullMessageHeaderReader::read_in_place(const RemotingCommand& request,
                                                                               PullMessageRequestHeader& storage) {
  const remoting::ExtFields& fields = request.ext_fields;
  if (Memo* memo = memo_.follow(fields)) {
    // The last request's header, with the values that changed read again.
    bool read = true;
    remoting::for_each_changed_place(fields.lineage().changed, [&](size_t place) {
      MQ_ASSERT(place < fields.size());
      const auto field = static_cast<PullField>(memo->field_at[place]);
      if (read && field != kPullFieldCount) {
        read = read_pull_field(field, &fields.begin()[place].second, memo->header).ok();
      }
    });
    if (read) return &memo->header;
    memo_.forget(fields);  // the full read below names the bad field
  }
  MQ_RETURN_IF_ERROR(read_pull_message_header(request, storage));
  if (Memo* memo = memo_.start(fields)) {
    MQ_ASSERT(fields.size() <= memo->field_at.size());
    size_t place = 0;
    for (const auto& field : fields) memo->field_at[place++] = pull_field_of(field.first);
    memo->header = storage;
  }
  return &storage;
}

void PullMessageProcessor::process_request(const RemotingCommand& request, remoting::ResponseChannel channel,
                                           bool broker_allow_suspend) {
  PullMessageRequestHeader storage;
  const Result<const PullMessageRequestHeader*> header = header_reader_.read_in_place(request, storage);
  if (!header.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, header.status().message());
  // Nothing process_parsed does reads another request's header (replies and
  // parked pulls go out through events), so the memo's stays as read.
  process_parsed(**header, std::move(channel), broker_allow_suspend);
}

void PullMessageProcessor::process_woken(PullRequest& pull) {
  MQ_ASSERT(pull.pull_from_offset == QueueOffset(pull.header.queueOffset));
  // The header read_pull_message_header gave at the first run: the
  // request has not changed since.
  process_parsed(pull.header, std::move(pull.channel), /*broker_allow_suspend=*/false);
}

void PullMessageProcessor::process_parsed(const PullMessageRequestHeader& header, remoting::ResponseChannel channel,
                                          bool broker_allow_suspend) {
  const meta::SubscriptionGroupConfig* group = nullptr;
  if (std::optional<Refusal> refusal = check_access(header, group)) return channel.reply(refusal->code, refusal->remark);
  MQ_ASSERT(group != nullptr);  // check_access found or created it
  SubscriptionFilter filter;
  if (std::optional<Refusal> refusal = resolve_filter(header, *group, filter)) {
    return channel.reply(refusal->code, refusal->remark);
  }
  // Into the kept result (its region list's room), borrowed for this call
  // and given back emptied on every way out: a region kept past the pull
  // would hold its CommitLog file open after retention deleted it.
  KeptGetMessageResult kept(got_);
  store::GetMessageResult& result = kept.result;
  controller_.message_store().get_message_into(header.consumerGroup, header.topic, header.queueId,
                                               QueueOffset(header.queueOffset), header.maxMsgNums,
                                               filter.store_filter(), result);
  int32_t code = code_for(result.status, header.queueOffset);
  QueueOffset next_begin = result.next_begin_offset;
  const bool slave = controller_.store_config().brokerRole == store::BrokerRole::SLAVE;
  if (code == ResponseCode::PULL_OFFSET_MOVED && slave && !controller_.config().offsetCheckInSlave) {
    code = ResponseCode::PULL_RETRY_IMMEDIATELY;  // a slave does not correct offsets
    next_begin = QueueOffset(header.queueOffset);
  }
  // Still the group's node: nothing since check_access (the store's
  // get_message included) adds or removes subscription groups.
  MQ_ASSERT(same_text(group->groupName, header.consumerGroup));
  int64_t suggest = kMasterId;
  if (controller_.config().slaveReadEnable) {
    suggest = result.suggest_pulling_from_slave ? group->whichBrokerWhenConsumeSlowly : group->brokerId;
  }
  commit_offset_if_asked(header, broker_allow_suspend);
  // Parked before any response is built: most pulls are (a consumer that
  // has caught up waits for the next message), and the response built for
  // them here was thrown away, to be built again when they are woken.
  if (code == ResponseCode::PULL_NOT_FOUND && broker_allow_suspend && has_flag(header.sysFlag, kPullFlagSuspend)) {
    const int64_t hold_ms = controller_.config().longPollingEnable ? header.suspendTimeoutMillis
                                                                    : controller_.config().shortPollingTimeMills;
    // Clamped in ms first: a client's huge value must not overflow the ns product.
    const Nanos hold = millis(std::clamp<int64_t>(hold_ms, 0, kMaxSuspendTimeout / kNanosPerMilli));
    if (hold > 0) {
      ++controller_.stats().pulls_suspended;
      const QueueOffset pull_from(header.queueOffset);
      // Built where the hold service keeps it: a PullRequest moved there
      // moved its header's strings, its filter and its channel again.
      controller_.pull_request_hold_service().suspend_pull_request(
          std::make_unique<PullRequest>(std::move(channel), pull_from, std::move(filter), 0, header), hold);
      return;
    }
  }
  // The answer's code and remark; the channel sets the request's opaque,
  // the response flag and the serialize type when it replies (what
  // request.make_response would give), so a parked pull need not keep its
  // request (copying its ext fields was most of parking one).
  PullAnswer answer{code, store::get_message_status_name(result.status)};
  // A copied body goes into a JSON answer's frame from our buffer, kept
  // for the next pull; a command takes it.
  MQ_ASSERT(copied_body_.empty());
  std::vector<remoting::BodyFileRegion> regions;
  if (answer.code == ResponseCode::SUCCESS) {
    regions = fill_body(result, answer, copied_body_, next_begin);  // may turn it into an error
  }
  const PullMessageResponseHeader response_header{result.max_offset.value(), result.min_offset.value(),
                                                  next_begin.value(), suggest};
  if (channel.answers_json()) {
    // Written straight from the header: one answer per pull.
    const auto write_header = [&answer, &response_header](int32_t opaque, std::vector<uint8_t>& out) {
      append_pull_message_response_json_header(answer.code, answer.remark, response_header, opaque, out);
    };
    channel.reply_written(write_header, copied_body_, std::move(regions));
    copied_body_.clear();
    if (copied_body_.capacity() > kKeptBodyBytes) copied_body_.shrink_to_fit();
    return;
  }
  RemotingCommand response;
  response.code = answer.code;
  response.remark = answer.remark;
  response.body.swap(copied_body_);  // copied_body_ left empty
  set_pull_message_response_fields(response_header, response);
  channel.reply(std::move(response), std::move(regions));
}

std::optional<PullMessageProcessor::Refusal> PullMessageProcessor::check_access(
    const PullMessageRequestHeader& header, const meta::SubscriptionGroupConfig*& group) {
  const BrokerConfig& config = controller_.config();
  if (!meta::PermName::is_readable(config.brokerPermission)) {
    return Refusal{ResponseCode::NO_PERMISSION, "the broker[" + config.brokerIP1 + "] pulling message is forbidden"};
  }
  meta::SubscriptionGroupManager& groups = controller_.subscription_group_manager();
  // The group's own node, found once per run: find_or_create returns a copy
  // (and the processor looked the group up twice more after it).
  group = groups.find(header.consumerGroup);
  if (group == nullptr) {
    Result<meta::SubscriptionGroupConfig> created = groups.find_or_create(header.consumerGroup);
    if (!created.ok()) {
      return Refusal{ResponseCode::SUBSCRIPTION_GROUP_NOT_EXIST,
                     "subscription group [" + header.consumerGroup + "] does not exist, " + created.status().message()};
    }
    group = groups.find(header.consumerGroup);
  }
  MQ_ASSERT(group != nullptr);
  MQ_ASSERT(same_text(group->groupName, header.consumerGroup));
  if (!group->consumeEnable) {
    return Refusal{ResponseCode::NO_PERMISSION, "subscription group no permission, " + header.consumerGroup};
  }
  const meta::TopicConfig* topic = controller_.topic_config_manager().find(header.topic);
  if (topic == nullptr) {
    return Refusal{ResponseCode::TOPIC_NOT_EXIST, "topic[" + header.topic + "] not exist, apply first please!"};
  }
  if (!meta::PermName::is_readable(topic->perm)) {
    return Refusal{ResponseCode::NO_PERMISSION, "the topic[" + header.topic + "] pulling message is forbidden"};
  }
  if (header.queueId < 0 || header.queueId >= topic->readQueueNums) {
    return Refusal{ResponseCode::SYSTEM_ERROR, "queueId[" + std::to_string(header.queueId) + "] is illegal, topic:[" +
                                                   header.topic + "] topicConfig.readQueueNums:[" +
                                                   std::to_string(topic->readQueueNums) + "]"};
  }
  return std::nullopt;
}

std::optional<PullMessageProcessor::Refusal> PullMessageProcessor::resolve_filter(
    const PullMessageRequestHeader& header, const meta::SubscriptionGroupConfig& group, SubscriptionFilter& filter) {
  // A view: every pull names it, and it is only compared.
  std::string_view expression_type = header.expressionType;
  if (has_flag(header.sysFlag, kPullFlagSubscription)) {
    const std::string_view subscription = header.subscription ? std::string_view(*header.subscription) : "";
    // Every tag ("*", what most consumers send): filter stays as it came, the
    // filter that passes everything, which building it again gives too.
    // same_text: string_view's == was a call to its compare, every pull.
    if (same_text(subscription, kSubAll)) return check_expression_type(expression_type);
    Result<SubscriptionFilter> built = build_subscription_filter(subscription);
    if (!built.ok()) {
      return Refusal{ResponseCode::SUBSCRIPTION_PARSE_FAILED,
                     "parse the consumer's subscription failed: " + built.status().message()};
    }
    filter = std::move(built).value();
  } else {
    const ConsumerGroupInfo* info = controller_.consumer_manager().find(header.consumerGroup);
    if (info == nullptr) return Refusal{ResponseCode::SUBSCRIPTION_NOT_EXIST, "the consumer's group info not exist"};
    if (!group.consumeBroadcastEnable && info->message_model == "BROADCASTING") {
      return Refusal{ResponseCode::NO_PERMISSION,
                     "the consumer group[" + header.consumerGroup + "] can not consume by broadcast way"};
    }
    const remoting::SubscriptionData* subscription = info->find_subscription(header.topic);
    if (subscription == nullptr)
      return Refusal{ResponseCode::SUBSCRIPTION_NOT_EXIST, "the consumer's subscription not exist"};
    if (subscription->subVersion < header.subVersion) {
      return Refusal{ResponseCode::SUBSCRIPTION_NOT_LATEST, "the consumer's subscription not latest"};
    }
    Result<SubscriptionFilter> built = subscription_filter_of(*subscription);
    if (!built.ok()) return Refusal{ResponseCode::SUBSCRIPTION_PARSE_FAILED, built.status().message()};
    filter = std::move(built).value();
    expression_type = subscription->expressionType.empty() ? kDefaultExpressionType
                                                           : std::string_view(subscription->expressionType);
  }
  return check_expression_type(expression_type);
}

std::optional<PullMessageProcessor::Refusal> PullMessageProcessor::check_expression_type(
    std::string_view expression_type) {
  if (!same_text(expression_type, kDefaultExpressionType)) {
    return Refusal{ResponseCode::SYSTEM_ERROR,
                   "The broker does not support consumer to filter message by " + std::string(expression_type)};
  }
  return std::nullopt;
}

int32_t PullMessageProcessor::code_for(GetMessageStatus status, int64_t requested_offset) {
  switch (status) {
    case GetMessageStatus::FOUND: return ResponseCode::SUCCESS;
    case GetMessageStatus::NO_MATCHED_MESSAGE:
    case GetMessageStatus::MESSAGE_WAS_REMOVING: return ResponseCode::PULL_RETRY_IMMEDIATELY;
    case GetMessageStatus::OFFSET_FOUND_NULL:
    case GetMessageStatus::OFFSET_OVERFLOW_ONE: return ResponseCode::PULL_NOT_FOUND;
    case GetMessageStatus::NO_MATCHED_LOGIC_QUEUE:
    case GetMessageStatus::NO_MESSAGE_IN_QUEUE:
      return requested_offset != 0 ? ResponseCode::PULL_OFFSET_MOVED : ResponseCode::PULL_NOT_FOUND;
    case GetMessageStatus::OFFSET_TOO_SMALL:
    case GetMessageStatus::OFFSET_OVERFLOW_BADLY: return ResponseCode::PULL_OFFSET_MOVED;
  }
  MQ_UNREACHABLE("unknown GetMessageStatus");
}

std::vector<remoting::BodyFileRegion> PullMessageProcessor::fill_body(const store::GetMessageResult& result,
                                                                     PullAnswer& answer, std::vector<uint8_t>& body,
                                                                     QueueOffset& next_begin) {
  MQ_ASSERT(!result.messages.empty());  // FOUND means at least one region
  MQ_ASSERT(body.empty());
  // Many small regions cost more than one copy (a sendfile per record).
  const auto min_average = static_cast<uint64_t>(controller_.config().zeroCopyMinRegionBytes);
  const auto total_bytes = static_cast<uint64_t>(std::max<int64_t>(result.total_bytes, 0));
  // A body smaller than one region's minimum is copied whatever its regions
  // (there is at least one): they are not worked out (a pull answers with
  // one small message when its consumer keeps up).
  if (!controller_.config().transferMsgByHeap && total_bytes >= min_average) {
    std::optional<std::vector<remoting::BodyFileRegion>> regions = sendable_regions(result);
    if (regions && total_bytes >= min_average * regions->size()) {
      MQ_ASSERT(!regions->empty());
      ++controller_.stats().pulls_zero_copy;
      controller_.stats().msg_get_total += result.messages.size();
      return std::move(*regions);
    }
  }
  ++controller_.stats().pulls_copied;
  copy_body(result, answer, body, next_begin);
  return {};
}

std::optional<std::vector<remoting::BodyFileRegion>> PullMessageProcessor::sendable_regions(
    const store::GetMessageResult& result) {
  std::vector<remoting::BodyFileRegion> regions;
  const env::File* checked_file = nullptr;
  uint64_t file_size = 0;
  for (const store::FileRegion& region : result.messages) {
    // A length past INT32_MAX is a negative size read from a damaged queue.
    if (region.file == nullptr || region.length == 0 || region.length > INT32_MAX) return std::nullopt;
    if (region.file.get() != checked_file) {
      // One size per segment, not per record: a record past the file's end
      // would break the stream at send time, so it goes by the copy path,
      // which reports it and answers with what it could read.
      Result<uint64_t> size = region.file->size();
      if (!size.ok()) return std::nullopt;
      checked_file = region.file.get();
      file_size = *size;
    }
    if (region.position + region.length > file_size) return std::nullopt;
    remoting::BodyFileRegion* last = regions.empty() ? nullptr : &regions.back();
    const bool adjacent = last != nullptr && last->file == region.file &&
                          last->offset + last->length == region.position &&
                          uint64_t{last->length} + region.length <= UINT32_MAX;
    if (adjacent) {
      last->length += region.length;  // consecutive records: one sendfile, not one each
    } else {
      regions.push_back(remoting::BodyFileRegion{region.file, region.position, region.length});
    }
  }
  MQ_ASSERT(remoting::body_file_region_bytes(regions) == static_cast<uint64_t>(result.total_bytes));
  return regions;
}

bool PullMessageProcessor::copy_body(const store::GetMessageResult& result, PullAnswer& answer,
                                     std::vector<uint8_t>& body, QueueOffset& next_begin) {
  MQ_ASSERT(body.empty());
  body.reserve(static_cast<size_t>(std::max<int64_t>(result.total_bytes, 0)));
  size_t records = 0;
  int64_t last_queue_offset = -1;
  for (const store::FileRegion& region : result.messages) {
    // Read where the record goes in the body: a buffer per record
    // (MessageStore::read_region) was an allocation and a copy more per
    // message pulled.
    const size_t start = body.size();
    body.resize(start + region.length);
    Status status = read_record(region, std::span<uint8_t>(body).subspan(start));
    if (!status.ok()) {
      body.resize(start);
      MQ_LOG(kWarn, kPullMessageProcessorLog,
             "pull: reading the record at commitlog offset " << region.phy_offset.value()
                                                             << " failed: " << status.to_string());
      break;
    }
    last_queue_offset = get_i64_be(body.data() + start + store::kQueueOffsetPosition);
    ++records;
  }
  if (records == 0) {
    answer.code = ResponseCode::SYSTEM_ERROR;
    answer.remark = "read message failed: the store could not read the first record";
    return false;
  }
  // Resume after what was sent: the answer's header is written from
  // next_begin (an ext field set here was overwritten, or, for a command,
  // tripped the header writer's check that it writes every field).
  if (records < result.messages.size()) {
    MQ_ASSERT(last_queue_offset >= 0 && QueueOffset(last_queue_offset + 1) <= next_begin);
    next_begin = QueueOffset(last_queue_offset + 1);
  }
  controller_.stats().msg_get_total += records;
  MQ_ASSERT(!body.empty());
  return true;
}

void PullMessageProcessor::commit_offset_if_asked(const PullMessageRequestHeader& header, bool broker_allow_suspend) {
  const bool slave = controller_.store_config().brokerRole == store::BrokerRole::SLAVE;
  if (!broker_allow_suspend || !has_flag(header.sysFlag, kPullFlagCommitOffset) || slave) return;
  if (header.commitOffset < 0) return;  // nothing consumed yet
  Status status = controller_.consumer_offset_manager().commit_offset(header.consumerGroup, header.topic,
                                                                      header.queueId, header.commitOffset);
  if (!status.ok()) MQ_LOG(kWarn, kPullMessageProcessorLog, "pull: commit offset refused: " << status.to_string());
}

}  // namespace mqlab::broker
