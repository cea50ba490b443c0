// MessageStore: the put path, the get path and lookups. Start-up, recovery
// and shutdown live in store_recovery.cc; the background services (flush,
// dispatch, checkpoint) in store_services.cc.
#include "broker/store/message_store.h"

#include <algorithm>

#include "broker/common/assign_text.h"
#include "broker/common/log.h"
#include "broker/common/same_bytes.h"
#include "broker/store/clean_commit_log_service.h"
#include "broker/store/schedule_message_service.h"

namespace mqlab::store {
namespace {
// RocketMQ's per-pull limits for data in the page cache
// (maxTransferCountOnMessageInMemory, maxTransferBytesOnMessageInMemory) and
// how much ConsumeQueue one pull may scan.
constexpr int32_t kMaxTransferCount = 32;
constexpr int64_t kMaxTransferBytes = 256 * 1024;
constexpr int32_t kMaxScanEntries = 16000 / 20;
constexpr int32_t kPlaceholderSize = INT32_MAX;

PutMessageResult failed_put(PutMessageStatus status, std::string remark) {
  PutMessageResult result;
  result.status = status;
  result.remark = std::move(remark);
  return result;
}

struct PutMessageRefusal {
  PutMessageStatus status;
  std::string remark;
};

// A put the device refused (its write, a commit, the next segment).
PutMessageRefusal refusal_for(const Status& status) {
  MQ_ASSERT(!status.ok());
  if (status.code() == StatusCode::kNoSpace) {
    return {PutMessageStatus::SERVICE_NOT_AVAILABLE, "disk full: " + status.message()};
  }
  return {PutMessageStatus::UNKNOWN_ERROR, status.to_string()};
}
}  // namespace

const char* put_message_status_name(PutMessageStatus status) {
  switch (status) {
    case PutMessageStatus::PUT_OK: return "PUT_OK";
    case PutMessageStatus::FLUSH_DISK_TIMEOUT: return "FLUSH_DISK_TIMEOUT";
    case PutMessageStatus::FLUSH_SLAVE_TIMEOUT: return "FLUSH_SLAVE_TIMEOUT";
    case PutMessageStatus::SLAVE_NOT_AVAILABLE: return "SLAVE_NOT_AVAILABLE";
    case PutMessageStatus::SERVICE_NOT_AVAILABLE: return "SERVICE_NOT_AVAILABLE";
    case PutMessageStatus::CREATE_MAPEDFILE_FAILED: return "CREATE_MAPEDFILE_FAILED";
    case PutMessageStatus::MESSAGE_ILLEGAL: return "MESSAGE_ILLEGAL";
    case PutMessageStatus::PROPERTIES_SIZE_EXCEEDED: return "PROPERTIES_SIZE_EXCEEDED";
    case PutMessageStatus::OS_PAGECACHE_BUSY: return "OS_PAGECACHE_BUSY";
    case PutMessageStatus::UNKNOWN_ERROR: return "UNKNOWN_ERROR";
  }
  return "?";
}

bool put_message_stored(PutMessageStatus status) {
  return status == PutMessageStatus::PUT_OK || status == PutMessageStatus::FLUSH_DISK_TIMEOUT ||
         status == PutMessageStatus::FLUSH_SLAVE_TIMEOUT || status == PutMessageStatus::SLAVE_NOT_AVAILABLE;
}

const char* get_message_status_name(GetMessageStatus status) {
  switch (status) {
    case GetMessageStatus::FOUND: return "FOUND";
    case GetMessageStatus::NO_MATCHED_MESSAGE: return "NO_MATCHED_MESSAGE";
    case GetMessageStatus::MESSAGE_WAS_REMOVING: return "MESSAGE_WAS_REMOVING";
    case GetMessageStatus::OFFSET_FOUND_NULL: return "OFFSET_FOUND_NULL";
    case GetMessageStatus::OFFSET_OVERFLOW_BADLY: return "OFFSET_OVERFLOW_BADLY";
    case GetMessageStatus::OFFSET_OVERFLOW_ONE: return "OFFSET_OVERFLOW_ONE";
    case GetMessageStatus::OFFSET_TOO_SMALL: return "OFFSET_TOO_SMALL";
    case GetMessageStatus::NO_MATCHED_LOGIC_QUEUE: return "NO_MATCHED_LOGIC_QUEUE";
    case GetMessageStatus::NO_MESSAGE_IN_QUEUE: return "NO_MESSAGE_IN_QUEUE";
  }
  return "?";
}

MessageStore::MessageStore(env::Env& env, MessageStoreConfig config, HostAddress store_host)
    : env_(env),
      config_(std::move(config)),
      store_host_(store_host),
      commit_log_(env, config_),
      index_(std::make_unique<IndexService>(env, config_)),
      checkpoint_(env, config_.checkpoint_path()),
      schedule_(std::make_unique<ScheduleMessageService>(env, *this, config_)) {}

// No I/O here: destroying a store without shutdown() is a crash.
MessageStore::~MessageStore() { cancel_timers(); }

void MessageStore::cancel_timers() {
  if (async_flush_timer_ != env::kNoTimer) env_.executor().cancel(async_flush_timer_);
  if (commit_real_time_) commit_real_time_->stop();
  if (cq_flush_timer_ != env::kNoTimer) env_.executor().cancel(cq_flush_timer_);
  if (reput_retry_timer_ != env::kNoTimer) env_.executor().cancel(reput_retry_timer_);
  async_flush_timer_ = cq_flush_timer_ = reput_retry_timer_ = env::kNoTimer;
  if (clean_service_) clean_service_->cancel();
  schedule_->stop();
}

void MessageStore::put_message(MessageToStore&& message, PutCallback&& done) {
  auto reply = [this, &done](PutMessageStatus status, std::string remark) {
    ++stats_.puts_failed;
    env_.executor().post([done = std::move(done), result = failed_put(status, std::move(remark))] { done(result); });
  };
  if (!running_) return reply(PutMessageStatus::SERVICE_NOT_AVAILABLE, "message store is not running");
  if (config_.brokerRole == BrokerRole::SLAVE) {
    return reply(PutMessageStatus::SERVICE_NOT_AVAILABLE, "broker role is SLAVE: it does not accept puts");
  }
  if (!writable_) {
    return reply(PutMessageStatus::SERVICE_NOT_AVAILABLE,
                 flush_failed_ ? "message store is not writable: a flush failed" : "message store is not writable: disk full");
  }
  bool wait_store_ok = true;
  if (const auto wait = message.properties.find(kPropertyWaitStoreMsgOk); wait != message.properties.end()) {
    wait_store_ok = !same_text(wait->second, "false");  // not std::string's compare call
    message.properties.erase(wait);  // 4.9.x does not store WAIT
  }
  if (Status delayed = transform_delay_level_message(message, schedule_->max_delay_level()); !delayed.ok()) {
    return reply(PutMessageStatus::MESSAGE_ILLEGAL, delayed.message());
  }
  message.store_host = store_host_;
  // Checked and sized here; the CommitLog writes the record in place.
  RecordPlan plan = plan_record(message, config_.maxMessageSize, valid_topic_);
  if (plan.error == EncodeError::kNone && !same_text(valid_topic_, message.topic)) {
    assign_text(valid_topic_, message.topic);
  }
  if (plan.error == EncodeError::kMessageIllegal) {
    return reply(PutMessageStatus::MESSAGE_ILLEGAL, std::move(plan.reason));
  }
  if (plan.error == EncodeError::kPropertiesSizeExceeded) {
    return reply(PutMessageStatus::PROPERTIES_SIZE_EXCEEDED, std::move(plan.reason));
  }
  MQ_ASSERT(plan.error == EncodeError::kNone);
  Result<AppendMessageResult> appended = commit_log_.append(message, plan);
  if (!appended.ok()) {
    const Status& status = appended.status();
    MQ_LOG(kWarn, "store", "put refused: " << status.to_string());
    // The CommitLog dropped every record still waiting for its commit;
    // with a transient store pool it dropped none (they stay buffered, and
    // this turn's are acknowledged as usual).
    if (!commit_log_.transient_store_pool()) fail_dropped_puts(status);
    // A roll that failed to create the next segment still wrote the BLANK
    // ending the last one: let the dispatcher pass it (once flushed, when
    // dispatch follows the flush: no put waits for that flush, so ask for it).
    // Not here: the puts the BLANK's write committed are still to be
    // acknowledged, and their flush requests end before the BLANK's.
    if (dispatch_waits_for_flush() && commit_log_.flushed_offset() < commit_log_.committed_offset()) {
      flush_for_dispatch_wanted_ = true;
      commit_soon();
    }
    reput_soon();
    const PutMessageRefusal refusal = refusal_for(status);
    return reply(refusal.status, refusal.remark);
  }
  const bool wait_flush =
      config_.flushDiskType == FlushDiskType::SYNC_FLUSH && wait_store_ok && !config_.testOnlyAckBeforeSync;
  const bool wait_slave = config_.brokerRole == BrokerRole::SYNC_MASTER && wait_store_ok;
  MQ_ASSERT(puts_awaiting_commit_.empty() || puts_awaiting_commit_.back().appended.end_offset() <= appended->wrote_offset);
  hand_over_dispatch_request(message, *appended);
  puts_awaiting_commit_.emplace_back(std::move(appended).value(), wait_flush, wait_slave, std::move(done));
  commit_soon();
}

void MessageStore::hand_over_dispatch_request(const MessageToStore& message, const AppendMessageResult& appended) {
  // Full: the dispatcher is stuck or far behind, and reads these records
  // when it catches up. Properties that would not read back as written:
  // only the record's bytes say what a rebuild will see.
  if (handed_over_.full() || (!message.properties_round_trip_known && !properties_round_trip(message.properties))) {
    return;
  }
  DispatchRequest& request = handed_over_.next_slot();
  dispatch_request_of_put(message, appended, request);
  if (request.topic == kScheduleTopic) {
    request.tags_code = schedule_->deliver_timestamp_of(message.properties, request.store_timestamp_ms);
  }
  handed_over_.push();
}

void MessageStore::commit_soon() {
  if (commit_scheduled_) return;
  commit_scheduled_ = true;
  // One task later: every put of this turn (a burst of frames, or replies
  // issuing new puts) joins the same pwrite.
  env_.executor().post(lifetime_.guard([this] {
    commit_scheduled_ = false;
    commit_and_acknowledge();
  }));
}

void MessageStore::commit_and_acknowledge() {
  if (commit_log_.transient_store_pool()) return acknowledge_buffered();
  if (Status status = commit_log_.commit(); !status.ok()) {
    MQ_LOG(kWarn, "store", "group write refused: " << status.to_string());
    fail_dropped_puts(status);
  }
  const PhyOffset committed = commit_log_.committed_offset();
  MQ_ASSERT(committed == commit_log_.max_offset());
  // Last, after every put's own flush request (see flush_for_dispatch_wanted_).
  auto request_flush_for_dispatch = [this, committed] {
    if (!flush_for_dispatch_wanted_) return;
    flush_for_dispatch_wanted_ = false;
    if (dispatch_waits_for_flush() && commit_log_.flushed_offset() < committed) {
      group_commit_->submit(committed, [](FlushOutcome) {});
    }
  };
  if (puts_awaiting_commit_.empty()) return request_flush_for_dispatch();
  if (running_) reput_soon();
  if (replication_hook_ != nullptr) replication_hook_->notify_appended(committed);
  if (dispatch_waits_for_flush() && std::none_of(puts_awaiting_commit_.begin(), puts_awaiting_commit_.end(),
                                                 [](const PutAwaitingCommit& put) { return put.wait_flush; })) {
    // No put of this batch waits for the flush (WAIT_STORE_MSG_OK=false),
    // yet its records become visible only through one: ask the group commit
    // for it, or they would wait for the next waiting put to be dispatched.
    flush_for_dispatch_wanted_ = true;
  }
  // Replies may issue new puts: they gather for the next group write. The
  // two vectors trade places, so neither is reallocated per batch.
  std::vector<PutAwaitingCommit> committed_puts = std::move(spare_puts_);
  committed_puts.clear();
  committed_puts.swap(puts_awaiting_commit_);
  for (PutAwaitingCommit& put : committed_puts) {
    MQ_ASSERT(put.appended.end_offset() <= committed);
    acknowledge(put);
  }
  committed_puts.clear();
  spare_puts_ = std::move(committed_puts);
  request_flush_for_dispatch();
}

void MessageStore::acknowledge_buffered() {
  MQ_ASSERT(commit_log_.transient_store_pool());
  // No commit here: CommitRealTimeService writes the buffer on its own
  // schedule (on_commit_log_committed then wakes dispatch and the HA stream).
  std::vector<PutAwaitingCommit> buffered_puts = std::move(spare_puts_);
  buffered_puts.clear();
  buffered_puts.swap(puts_awaiting_commit_);
  for (PutAwaitingCommit& put : buffered_puts) {
    MQ_ASSERT(put.appended.end_offset() <= commit_log_.max_offset());
    MQ_ASSERT(!put.wait_flush);  // a transient store pool means ASYNC_FLUSH
    acknowledge(put);
  }
  buffered_puts.clear();
  spare_puts_ = std::move(buffered_puts);
  // A full buffer was committed by an append this turn (commit_log.cc):
  // readers may see it now rather than at the next tick.
  if (commit_log_.committed_offset() > notified_committed_) on_commit_log_committed();
}

void MessageStore::on_commit_log_committed() {
  MQ_ASSERT(commit_log_.transient_store_pool());
  const PhyOffset committed = commit_log_.committed_offset();
  MQ_ASSERT(committed <= commit_log_.max_offset());
  notified_committed_ = committed;
  if (running_) {
    reput_soon();
    // RocketMQ's commit service wakes the flush service: its least-pages
    // rule still applies (run_async_flush).
    run_async_flush();
  }
  if (replication_hook_ != nullptr) replication_hook_->notify_appended(committed);
}

void MessageStore::fail_dropped_puts(const Status& status) {
  MQ_ASSERT(!status.ok());
  const PhyOffset committed = commit_log_.committed_offset();
  // Before another record takes their offsets.
  handed_over_.drop_from(committed);
  // In offset order: the dropped ones are a suffix.
  auto first_dropped = std::find_if(puts_awaiting_commit_.begin(), puts_awaiting_commit_.end(),
                                    [&](const PutAwaitingCommit& put) { return put.appended.end_offset() > committed; });
  const PutMessageRefusal refusal = refusal_for(status);
  for (auto it = first_dropped; it != puts_awaiting_commit_.end(); ++it) {
    MQ_ASSERT(it->appended.wrote_offset >= committed);
    ++stats_.puts_failed;
    env_.executor().post([done = std::move(it->done), result = failed_put(refusal.status, refusal.remark)] {
      done(result);
    });
  }
  puts_awaiting_commit_.erase(first_dropped, puts_awaiting_commit_.end());
}

void MessageStore::acknowledge(PutAwaitingCommit& put) {
  stats_.bytes_appended += static_cast<uint64_t>(put.appended.wrote_bytes);
  if (put.wait_slave) return complete_put_waiting(put.appended, put.wait_flush, /*wait_slave=*/true, std::move(put.done));
  if (put.wait_flush) return complete_put(put.appended, std::move(put.done));
  ++stats_.puts_ok;
  PutMessageResult result;
  result.status = PutMessageStatus::PUT_OK;
  result.append = std::move(put.appended);
  put.done(std::move(result));
}

// SYNC_FLUSH: the reply waits for the group commit covering the record.
void MessageStore::complete_put(const AppendMessageResult& appended, PutCallback done) {
  group_commit_->submit(appended.end_offset(), [this, appended, done = std::move(done)](FlushOutcome outcome) {
    PutMessageResult result;
    result.append = appended;
    switch (outcome) {
      case FlushOutcome::kFlushed:
        result.status = PutMessageStatus::PUT_OK;
        ++stats_.puts_ok;
        break;
      case FlushOutcome::kTimeout:
        result.status = PutMessageStatus::FLUSH_DISK_TIMEOUT;
        result.remark = "flush did not complete within syncFlushTimeout";
        ++stats_.flush_timeouts;
        break;
      case FlushOutcome::kError:
        result.status = PutMessageStatus::FLUSH_DISK_TIMEOUT;
        result.remark = "flush failed: stored in the page cache, not confirmed durable";
        ++stats_.flush_timeouts;
        break;
    }
    done(result);
  });
}

ConsumeQueue* MessageStore::find_consume_queue(const std::string& topic, int32_t queue_id) {
  if (last_topic_ == nullptr || !same_text(*last_topic_, topic)) {  // inline: no memcmp call
    auto topic_it = consume_queues_.find(topic);
    if (topic_it == consume_queues_.end()) return nullptr;
    last_topic_ = &topic_it->first;
    last_topic_queues_ = &topic_it->second;
  }
  MQ_ASSERT(last_topic_queues_ != nullptr);
  auto it = last_topic_queues_->find(queue_id);
  return it == last_topic_queues_->end() ? nullptr : it->second.get();
}

ConsumeQueue& MessageStore::consume_queue(const std::string& topic, int32_t queue_id) {
  if (ConsumeQueue* existing = find_consume_queue(topic, queue_id)) return *existing;
  auto created = std::make_unique<ConsumeQueue>(env_, config_, topic, queue_id);
  // Entries are buffered within one dispatch task, committed at its end.
  created->enable_write_behind();
  ConsumeQueue& queue = *created;
  consume_queues_[topic][queue_id] = std::move(created);
  return queue;
}

std::vector<std::pair<std::string, int32_t>> MessageStore::queues() const {
  std::vector<std::pair<std::string, int32_t>> all;
  for (const auto& [topic, by_id] : consume_queues_) {
    for (const auto& [queue_id, queue] : by_id) all.emplace_back(topic, queue_id);
  }
  return all;
}

GetMessageResult MessageStore::get_message(const std::string& group, const std::string& topic, int32_t queue_id,
                                           QueueOffset offset, int32_t max_msgs,
                                           const std::vector<int64_t>& tags_filter) {
  GetMessageResult result;
  get_message_into(group, topic, queue_id, offset, max_msgs, tags_filter, result);
  return result;
}

void MessageStore::get_message_into(const std::string& /*group*/, const std::string& topic, int32_t queue_id,
                                    QueueOffset offset, int32_t max_msgs, const std::vector<int64_t>& tags_filter,
                                    GetMessageResult& result) {
  // A default result, but for its region list's room.
  std::vector<FileRegion> regions = std::move(result.messages);
  regions.clear();
  result = GetMessageResult{};
  result.messages = std::move(regions);
  ConsumeQueue* queue = find_consume_queue(topic, queue_id);
  if (queue == nullptr) {
    result.status = GetMessageStatus::NO_MATCHED_LOGIC_QUEUE;
    return;
  }
  result.min_offset = queue->min_offset();
  result.max_offset = queue->max_offset();
  result.next_begin_offset = offset;
  if (result.max_offset.value() == 0) {
    result.status = GetMessageStatus::NO_MESSAGE_IN_QUEUE;
    result.next_begin_offset = QueueOffset(0);
  } else if (offset < result.min_offset) {
    result.status = GetMessageStatus::OFFSET_TOO_SMALL;
    result.next_begin_offset = result.min_offset;
  } else if (offset == result.max_offset) {
    result.status = GetMessageStatus::OFFSET_OVERFLOW_ONE;
  } else if (offset > result.max_offset) {
    result.status = GetMessageStatus::OFFSET_OVERFLOW_BADLY;
    result.next_begin_offset = result.min_offset.value() == 0 ? result.min_offset : result.max_offset;
  } else {
    const int32_t wanted = std::clamp(max_msgs, 1, kMaxTransferCount);
    std::vector<ConsumeQueueEntry>& entries = read_entries_;
    const Status read = queue->read_into(offset, std::max(kMaxScanEntries, wanted), entries);
    if (!read.ok() || entries.empty()) {
      result.status = GetMessageStatus::OFFSET_FOUND_NULL;
      if (!read.ok()) MQ_LOG(kWarn, "store", "consume queue read failed: " << read.to_string());
      return;
    }
    bool removing = false;
    int64_t scanned = 0;
    for (const ConsumeQueueEntry& entry : entries) {
      if (static_cast<int32_t>(result.messages.size()) >= wanted) break;
      if (!result.messages.empty() && result.total_bytes + entry.size > kMaxTransferBytes) break;
      ++scanned;
      if (entry.size == kPlaceholderSize) continue;
      if (entry.offset < commit_log_.min_offset()) {
        removing = true;
        continue;
      }
      if (!tags_filter.empty() &&
          std::find(tags_filter.begin(), tags_filter.end(), entry.tags_code) == tags_filter.end()) {
        continue;
      }
      std::shared_ptr<MappedFile> file = commit_log_.file_at(entry.offset);
      if (!file || entry.offset + entry.size > commit_log_.max_offset()) {
        removing = true;
        continue;
      }
      FileRegion region{file->file(), static_cast<uint64_t>(entry.offset.value() - file->file_from_offset()),
                        static_cast<uint32_t>(entry.size), entry.offset};
      result.messages.push_back(std::move(region));
      result.total_bytes += entry.size;
    }
    result.next_begin_offset = offset + scanned;
    result.status = !result.messages.empty() ? GetMessageStatus::FOUND
                    : removing               ? GetMessageStatus::MESSAGE_WAS_REMOVING
                                             : GetMessageStatus::NO_MATCHED_MESSAGE;
  }
  MQ_ASSERT(result.min_offset <= result.max_offset);
}

Result<std::vector<uint8_t>> MessageStore::read_region(const FileRegion& region) {
  MQ_ASSERT(region.file != nullptr);
  std::vector<uint8_t> bytes(region.length);
  MQ_ASSIGN_OR_RETURN(size_t got, region.file->pread(region.position, bytes));
  if (got != bytes.size()) {
    return Status::IoError(region.file->path() + ": short read of a message region at " +
                           std::to_string(region.position));
  }
  return bytes;
}

QueueOffset MessageStore::max_offset_in_queue(const std::string& topic, int32_t queue_id) {
  ConsumeQueue* queue = find_consume_queue(topic, queue_id);
  return queue ? queue->max_offset() : QueueOffset(0);
}

QueueOffset MessageStore::min_offset_in_queue(const std::string& topic, int32_t queue_id) {
  ConsumeQueue* queue = find_consume_queue(topic, queue_id);
  return queue ? queue->min_offset() : QueueOffset(0);
}

Result<QueueOffset> MessageStore::offset_in_queue_by_time(const std::string& topic, int32_t queue_id,
                                                          int64_t timestamp_ms) {
  ConsumeQueue* queue = find_consume_queue(topic, queue_id);
  if (!queue) return QueueOffset(0);
  return queue->offset_by_timestamp(timestamp_ms, [this](PhyOffset offset, int32_t size) {
    return commit_log_.store_timestamp_at(offset, size);
  });
}

Result<std::vector<uint8_t>> MessageStore::look_message_by_offset(PhyOffset offset) const {
  // Only committed records: one still in the write buffer (transient store
  // pool) may yet die with the process, and its offset go to another record.
  if (offset < commit_log_.min_offset() || offset >= commit_log_.committed_offset()) {
    return Status::NotFound("no message at commitlog offset " + offset.to_string());
  }
  return commit_log_.read_record_bytes(offset);
}

Result<std::vector<std::vector<uint8_t>>> MessageStore::query_message(const std::string& topic, const std::string& key,
                                                                      int32_t max_num, int64_t begin_ms,
                                                                      int64_t end_ms) {
  MQ_ASSIGN_OR_RETURN(std::vector<PhyOffset> offsets, index_->query(topic, key, max_num, begin_ms, end_ms));
  std::vector<std::vector<uint8_t>> records;
  for (PhyOffset offset : offsets) {
    // Dispatch indexes only committed records; reading stops there too, so a
    // stale entry cannot reach bytes still in the write buffer.
    if (offset < commit_log_.min_offset() || offset >= commit_log_.committed_offset()) continue;
    Result<std::vector<uint8_t>> record = commit_log_.read_record_bytes(offset);
    if (!record.ok()) continue;  // removed or rewritten since it was indexed
    // The index stores hashes: confirm the record really is topic#key.
    Result<DecodedRecord> decoded = decode_record(*record, DecodeOptions{.check_crc = false});
    if (!decoded.ok() || decoded->message.topic != topic) continue;
    const MessageProperties properties = decoded->message.properties();
    bool matches = false;
    if (auto it = properties.find(std::string(kPropertyUniqKey)); it != properties.end() && it->second == key) {
      matches = true;
    }
    if (auto it = properties.find(std::string(kPropertyKeys)); it != properties.end()) {
      size_t start = 0;
      const std::string& keys = it->second;
      while (!matches && start <= keys.size()) {
        const size_t space = std::min(keys.find(' ', start), keys.size());
        matches = keys.compare(start, space - start, key) == 0 && space - start == key.size();
        start = space + 1;
      }
    }
    if (matches) records.push_back(std::move(record).value());
  }
  return records;
}

void MessageStore::run_clean_now() {
  if (clean_service_) clean_service_->run_once(/*manual=*/true);
}

}  // namespace mqlab::store
