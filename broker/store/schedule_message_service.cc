#include "broker/store/schedule_message_service.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "broker/common/log.h"
#include "broker/env/path.h"
#include "broker/store/message_store.h"

namespace mqlab::store {
namespace {

constexpr const char* kScheduleMessageServiceLog = "schedule";
// ConsumeQueue entries read per look at a level.
constexpr int32_t kScheduleEntriesPerRead = 32;
// After a read or put that failed for a reason that may pass (disk full, an
// I/O error), how long until the level tries the same entry again
// (RocketMQ's DELAY_FOR_A_PERIOD).
constexpr Nanos kRetryDelay = seconds(10);

Result<int32_t> parse_int32(std::string_view text) {
  int32_t value = 0;
  const auto [stop, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || stop != text.data() + text.size()) {
    return Status::InvalidArgument("'" + std::string(text) + "' is not an integer");
  }
  return value;
}

// A deliver time further away than the level's whole delay cannot come from
// this broker's clock as it is now (it stepped back, or the entry is not
// ours): deliver now rather than hold the level (correctDeliverTimestamp).
int64_t correct_deliver_timestamp(int64_t now_ms, int64_t deliver_ms, int64_t delay_ms) {
  return deliver_ms > now_ms + delay_ms ? now_ms : deliver_ms;
}

// Store statuses that the same put would get again: retrying cannot help.
bool refused_for_good(PutMessageStatus status) {
  return status == PutMessageStatus::MESSAGE_ILLEGAL || status == PutMessageStatus::PROPERTIES_SIZE_EXCEEDED;
}

}  // namespace

// --- the put side and the delivered copy --------------------------------------

Status transform_delay_level_message(MessageToStore& message, int32_t max_delay_level) {
  MQ_ASSERT(max_delay_level >= 1);
  auto delay = message.properties.find(kPropertyDelayLevel);
  if (delay == message.properties.end()) return Status::Ok();
  Result<int32_t> level = parse_int32(delay->second);
  if (!level.ok()) {
    return Status::InvalidArgument("property DELAY=" + delay->second + ": not a delay level (an integer)");
  }
  if (*level <= 0 || is_prepared_or_rollback(message.sysflag)) return Status::Ok();
  if (message.topic == kScheduleTopic) {
    // Sends to it are refused before the store; a put that gets here would
    // lose its real destination.
    return Status::InvalidArgument("a message for SCHEDULE_TOPIC_XXXX cannot be delayed");
  }
  const int32_t clamped = std::min(*level, max_delay_level);
  message.properties.insert_or_assign(std::string(kPropertyDelayLevel), std::to_string(clamped));
  message.properties[std::string(kPropertyRealTopic)] = message.topic;
  message.properties[std::string(kPropertyRealQueueId)] = std::to_string(message.queue_id);
  message.topic = std::string(kScheduleTopic);
  message.queue_id = clamped - 1;
  MQ_ASSERT(message.queue_id >= 0 && message.queue_id < max_delay_level);
  return Status::Ok();
}

Result<MessageToStore> message_time_up(const DecodedMessage& scheduled) {
  MQ_ASSERT(scheduled.topic == kScheduleTopic);
  MessageProperties properties = scheduled.properties();
  const auto real_topic = properties.find(std::string(kPropertyRealTopic));
  const auto real_queue = properties.find(std::string(kPropertyRealQueueId));
  if (real_topic == properties.end() || real_queue == properties.end()) {
    return Status::InvalidArgument("a SCHEDULE_TOPIC_XXXX message without REAL_TOPIC or REAL_QID");
  }
  if (Status valid = validate_topic_name(real_topic->second); !valid.ok()) {
    return valid.with_context("REAL_TOPIC");
  }
  if (real_topic->second == kScheduleTopic) {
    return Status::InvalidArgument("REAL_TOPIC is SCHEDULE_TOPIC_XXXX itself: it would be delivered forever");
  }
  Result<int32_t> queue_id = parse_int32(real_queue->second);
  if (!queue_id.ok() || *queue_id < 0) return Status::InvalidArgument("REAL_QID=" + real_queue->second);
  MessageToStore copy;
  copy.topic = real_topic->second;
  copy.queue_id = *queue_id;
  copy.flag = scheduled.flag;
  copy.body.assign(scheduled.body.begin(), scheduled.body.end());
  properties.erase(std::string(kPropertyDelayLevel));  // or the put would park it again
  properties[std::string(kPropertyWaitStoreMsgOk)] = "false";  // nobody waits for it
  copy.properties = std::move(properties);
  copy.sysflag = scheduled.sysflag & ~(kSysFlagBornHostV6 | kSysFlagStoreHostV6);  // derived from the hosts
  copy.born_timestamp_ms = scheduled.born_timestamp_ms;
  copy.born_host = scheduled.born_host;
  copy.store_host = scheduled.store_host;
  copy.reconsume_times = scheduled.reconsume_times;
  MQ_ASSERT(!copy.properties.contains(std::string(kPropertyDelayLevel)));
  return copy;
}

// --- life cycle -------------------------------------------------------------

ScheduleMessageService::ScheduleMessageService(env::Env& env, MessageStore& store, const MessageStoreConfig& config)
    : env_(env), store_(store), config_(config), file_(env, env::join_path(config.config_dir(), kFileName)) {}

ScheduleMessageService::~ScheduleMessageService() { stop(); }

Status ScheduleMessageService::load() {
  MQ_ASSERT(!loaded_);
  MQ_ASSIGN_OR_RETURN(delay_ms_, parse_message_delay_level(config_.messageDelayLevel));
  Result<meta::LoadSource> source = file_.load([this](const std::string& content) { return decode(content); });
  if (!source.ok()) return source.status().with_context("loading delay offsets");
  // A .bak was used: <file> is bad, so the first persist must rewrite it.
  if (*source == meta::LoadSource::kFile) last_persisted_ = offsets_json();
  loaded_ = true;
  MQ_ASSERT(max_delay_level() >= 1);
  return Status::Ok();
}

Status ScheduleMessageService::decode(const std::string& content) {
  MQ_ASSIGN_OR_RETURN(nlohmann::json root, meta::parse_json(content, path()));
  if (!root.is_object()) {
    return Status::Corruption(path() + ": expected a JSON object, found " + std::string(root.type_name()));
  }
  std::map<int32_t, int64_t> offsets;
  const auto table = root.find("offsetTable");
  if (table != root.end() && !table->is_null()) {
    if (!table->is_object()) return Status::Corruption(path() + ": offsetTable: expected an object");
    for (const auto& item : table->items()) {
      const std::string where = path() + ": offsetTable: level \"" + item.key() + "\"";
      Result<int32_t> level = parse_int32(item.key());
      if (!level.ok() || *level < 1) return Status::Corruption(where + ": not a level (an integer >= 1)");
      int64_t offset = -1;
      MQ_RETURN_IF_ERROR(meta::read_json_field(*table, item.key().c_str(), &offset, where));
      if (offset < 0) return Status::Corruption(where + ": offset " + std::to_string(offset) + " is negative");
      offsets[*level] = offset;
    }
  }
  offsets_ = std::move(offsets);
  return Status::Ok();
}

void ScheduleMessageService::start() {
  MQ_ASSERT(loaded_);
  MQ_ASSERT(!started_);
  MQ_ASSERT(store_.running());
  started_ = true;
  warn_about_stranded_queues();
  for (int32_t level = 1; level <= max_delay_level(); ++level) {
    levels_[level] = Level{};
    deliver_later(level, 0);
  }
  schedule_persist();
  MQ_LOG(kInfo, kScheduleMessageServiceLog, "delivering " << max_delay_level() << " delay levels (" << config_.messageDelayLevel << ")");
}

void ScheduleMessageService::stop() {
  started_ = false;
  for (auto& [level, state] : levels_) {
    if (state.timer != env::kNoTimer) env_.executor().cancel(state.timer);
    state.timer = env::kNoTimer;
  }
  if (persist_timer_ != env::kNoTimer) env_.executor().cancel(persist_timer_);
  persist_timer_ = env::kNoTimer;
}

void ScheduleMessageService::warn_about_stranded_queues() const {
  for (const auto& [topic, queue_id] : store_.queues()) {
    if (topic != kScheduleTopic || queue_id < max_delay_level()) continue;
    MQ_LOG(kError, kScheduleMessageServiceLog,
           "SCHEDULE_TOPIC_XXXX queue " << queue_id << " holds messages for delay level " << queue_id + 1
                                        << ", which messageDelayLevel no longer has: they wait, undelivered, until "
                                           "the level is configured again");
  }
}

// --- persistence ---------------------------------------------------------------

std::string ScheduleMessageService::offsets_json() const {
  nlohmann::json table = nlohmann::json::object();
  for (const auto& [level, offset] : offsets_) table[std::to_string(level)] = offset;
  nlohmann::json root = nlohmann::json::object();
  root["offsetTable"] = std::move(table);
  return meta::dump_json(root);
}

void ScheduleMessageService::persist(std::function<void(Status)> done) {
  MQ_ASSERT(loaded_);
  // The offsets as they are now count only deliveries whose copies are in
  // the CommitLog already: once the flush below covers them, the file may
  // say so.
  std::string content = offsets_json();
  store_.commit_log().flush(lifetime_.guard([this, content, done = std::move(done)](Status flushed) mutable {
    if (!flushed.ok()) return done(flushed.with_context("flushing the commitlog before " + path()));
    file_.persist(content, lifetime_.guard([this, content, done = std::move(done)](Status status) {
      if (status.ok()) {
        last_persisted_ = content;
        ++stats_.offsets_persisted;
      }
      done(status);
    }));
  }));
}

void ScheduleMessageService::schedule_persist() {
  MQ_ASSERT(persist_timer_ == env::kNoTimer);
  persist_timer_ = env_.executor().run_after(millis(config_.flushDelayOffsetInterval), lifetime_.guard([this] {
    persist_timer_ = env::kNoTimer;
    if (!started_) return;
    if (offsets_json() != last_persisted_) {
      persist([this](Status status) {
        if (!status.ok()) MQ_LOG(kWarn, kScheduleMessageServiceLog, "persisting " << path() << " failed: " << status.to_string());
      });
    }
    schedule_persist();
  }));
}

// --- delivery --------------------------------------------------------------------

int64_t ScheduleMessageService::delay_ms(int32_t level) const {
  MQ_ASSERT(level >= 1 && level <= max_delay_level());
  return delay_ms_[static_cast<size_t>(level - 1)];
}

int64_t ScheduleMessageService::compute_deliver_timestamp(int32_t level, int64_t store_timestamp_ms) const {
  MQ_ASSERT(loaded_);
  MQ_ASSERT(level >= 1);
  return store_timestamp_ms + delay_ms(std::min(level, max_delay_level()));
}

int64_t ScheduleMessageService::deliver_timestamp_of(const MessageProperties& properties,
                                                     int64_t store_timestamp_ms) const {
  const auto delay = properties.find(std::string(kPropertyDelayLevel));
  if (delay == properties.end()) return store_timestamp_ms;
  Result<int32_t> level = parse_int32(delay->second);
  if (!level.ok() || *level < 1) return store_timestamp_ms;
  return compute_deliver_timestamp(*level, store_timestamp_ms);
}

void ScheduleMessageService::on_dispatched(int32_t queue_id) {
  if (!started_) return;
  const auto it = levels_.find(queue_id + 1);
  if (it == levels_.end()) return;  // a stranded queue: reported at start
  // A level with a timer waits for an entry due no later than this one (a
  // level's entries come in store-time order); one with a put in flight
  // goes on when the put completes.
  if (it->second.timer == env::kNoTimer && !it->second.put_in_flight) deliver_later(it->first, 0);
}

void ScheduleMessageService::deliver_later(int32_t level, Nanos delay) {
  MQ_ASSERT(delay >= 0);
  Level& state = levels_.at(level);
  if (state.timer != env::kNoTimer) env_.executor().cancel(state.timer);
  state.timer = env_.executor().run_after(delay, lifetime_.guard([this, level] {
    levels_.at(level).timer = env::kNoTimer;
    deliver(level);
  }));
}

std::optional<int64_t> ScheduleMessageService::clamp_offset(int32_t level, const ConsumeQueue& queue) {
  int64_t& offset = offsets_[level];
  const int64_t min = queue.min_offset().value();
  const int64_t max = queue.max_offset().value();
  MQ_ASSERT(min <= max);
  if (offset < min) {
    MQ_LOG(kError, kScheduleMessageServiceLog, "delay level " << level << ": " << min - offset << " entries from offset " << offset
                                        << " were removed by retention before their time; going on at " << min);
    stats_.skipped += static_cast<uint64_t>(min - offset);
    offset = min;
  }
  if (offset > max) {
    // The file claims deliveries the recovered queue does not hold (it was
    // rebuilt shorter): the entries past max are gone or not yet written.
    MQ_LOG(kWarn, kScheduleMessageServiceLog, "delay level " << level << ": offset " << offset << " is past the queue's end " << max
                                       << "; going on from there");
    offset = max;
  }
  if (offset == max) return std::nullopt;
  return offset;
}

void ScheduleMessageService::deliver(int32_t level) {
  Level& state = levels_.at(level);
  if (!started_ || state.put_in_flight || state.timer != env::kNoTimer) return;
  const ConsumeQueue* queue = store_.find_consume_queue(std::string(kScheduleTopic), level - 1);
  if (queue == nullptr) return;  // nothing ever waited at this level; on_dispatched wakes us
  const std::optional<int64_t> from = clamp_offset(level, *queue);
  if (!from) return;  // all delivered; on_dispatched wakes us
  Result<std::vector<ConsumeQueueEntry>> entries = queue->read(QueueOffset(*from), kScheduleEntriesPerRead);
  if (!entries.ok() || entries->empty()) {
    MQ_LOG(kWarn, kScheduleMessageServiceLog, "delay level " << level << ": reading the queue at " << *from << " failed: "
                                       << (entries.ok() ? "no entry" : entries.status().to_string())
                                       << "; trying again in 10 s");
    return deliver_later(level, kRetryDelay);
  }
  for (const ConsumeQueueEntry& entry : *entries) {
    MQ_ASSERT(entry.queue_offset.value() == offsets_.at(level));
    if (deliver_due(level, entry) != Step::kIdle) return;
  }
  deliver_later(level, 0);  // a whole read skipped over: yield, then read on
}

ScheduleMessageService::Step ScheduleMessageService::deliver_due(int32_t level, const ConsumeQueueEntry& entry) {
  const int64_t offset = entry.queue_offset.value();
  if (entry.is_placeholder()) {
    advance(level, offset + 1);
    return Step::kIdle;
  }
  const int64_t now_ms = env_.clock().wall_ms();
  const int64_t due_ms = correct_deliver_timestamp(now_ms, entry.tags_code, delay_ms(level));
  if (due_ms > now_ms) {
    deliver_later(level, millis(due_ms - now_ms));
    return Step::kWaiting;
  }
  const std::string what = "delay level " + std::to_string(level) + " offset " + std::to_string(offset) +
                           " (commitlog offset " + entry.offset.to_string() + ")";
  Result<std::vector<uint8_t>> bytes = store_.look_message_by_offset(entry.offset);
  if (!bytes.ok() && bytes.status().code() == StatusCode::kIoError) {
    MQ_LOG(kWarn, kScheduleMessageServiceLog, what << ": " << bytes.status().to_string() << "; trying again in 10 s");
    deliver_later(level, kRetryDelay);
    return Step::kWaiting;
  }
  Result<DecodedRecord> decoded = bytes.ok() ? decode_record(*bytes) : Result<DecodedRecord>(bytes.status());
  Result<MessageToStore> copy = decoded.ok() ? message_time_up(decoded->message) : Result<MessageToStore>(decoded.status());
  if (!copy.ok()) {
    // Removed by retention, or bytes that will never decode: waiting would
    // hold every later message of the level behind it.
    MQ_LOG(kError, kScheduleMessageServiceLog, what << " cannot be delivered and is skipped: " << copy.status().to_string());
    ++stats_.skipped;
    advance(level, offset + 1);
    return Step::kIdle;
  }
  levels_.at(level).put_in_flight = true;
  store_.put_message(std::move(copy).value(),
                     lifetime_.guard([this, level, next = offset + 1, what](PutMessageResult result) {
                       on_put_done(level, next, what, result);
                     }));
  return Step::kDelivering;
}

void ScheduleMessageService::on_put_done(int32_t level, int64_t next_offset, const std::string& what,
                                         const PutMessageResult& result) {
  Level& state = levels_.at(level);
  MQ_ASSERT(state.put_in_flight);
  state.put_in_flight = false;
  if (put_message_stored(result.status)) {
    ++stats_.delivered;
    advance(level, next_offset);  // even when stopped: the copy is in the log
    return deliver(level);
  }
  if (refused_for_good(result.status)) {
    MQ_LOG(kError, kScheduleMessageServiceLog, what << " cannot be delivered and is skipped: the store refused it with "
                              << put_message_status_name(result.status) << ": " << result.remark);
    ++stats_.skipped;
    advance(level, next_offset);
    return deliver(level);
  }
  ++stats_.put_failures;
  MQ_LOG(kWarn, kScheduleMessageServiceLog, what << ": put failed with " << put_message_status_name(result.status) << " (" << result.remark
                           << "); trying again in 10 s");
  if (started_) deliver_later(level, kRetryDelay);
}

void ScheduleMessageService::advance(int32_t level, int64_t next_offset) {
  int64_t& offset = offsets_[level];
  MQ_ASSERT(next_offset == offset + 1);  // one entry at a time, in queue order
  offset = next_offset;
}

}  // namespace mqlab::store
