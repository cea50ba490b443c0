// The MessageStore's background services on the executor:
//   - ReputMessageService: dispatches new CommitLog records into their
//     ConsumeQueue and the index (never on the put path, as in RocketMQ); a
//     record it cannot dispatch (a ConsumeQueue write refused, bytes that do
//     not decode) is retried every second, never skipped;
//   - FlushRealTimeService: ASYNC_FLUSH's periodic CommitLog flush;
//   - GroupCommitService: SYNC_FLUSH (group_commit_service.cc);
//   - FlushConsumeQueueService: periodic ConsumeQueue flush, and on its
//     thorough pass the checkpoint, whose timestamps then bound how far back
//     the next abnormal recovery must re-verify;
//   - CleanCommitLogService: retention (clean_commit_log_service.cc).
#include <algorithm>

#include "broker/common/log.h"
#include "broker/store/clean_commit_log_service.h"
#include "broker/store/message_store.h"
#include "broker/store/schedule_message_service.h"

namespace mqlab::store {
namespace {
constexpr int64_t kPageSize = 4096;
// One dispatch task handles at most this many records, then yields the
// executor so puts and pulls interleave with a long catch-up.
constexpr int kDispatchBatch = 1024;
// After a failed dispatch (a ConsumeQueue write refused, a record that does
// not decode), how long until the next try; RocketMQ's
// putMessagePositionInfoWrapper also retries a failed write once a second.
constexpr Nanos kDispatchRetryDelay = seconds(1);
}  // namespace

void MessageStore::start_services() {
  MQ_ASSERT(!running_);
  running_ = true;
  writable_ = true;
  group_commit_ = std::make_unique<GroupCommitService>(
      env_, commit_log_, millis(config_.syncFlushTimeout),
      [this](int64_t timestamp_ms) {
        ++stats_.commit_log_flushes;
        checkpoint_.set_physic_msg_timestamp(timestamp_ms);
        // The flush moved the dispatch limit: the records it made durable
        // may be dispatched now.
        if (dispatch_waits_for_flush()) reput_soon();
      },
      [this](const Status& status) { on_flush_error(status); });
  clean_service_ = std::make_unique<CleanCommitLogService>(*this);
  // Queues loaded at start-up buffer their entries too (consume_queue.h).
  for (auto& [topic, by_id] : consume_queues_) {
    for (auto& [queue_id, queue] : by_id) queue->enable_write_behind();
  }
  const Nanos now = env_.clock().now_ns();
  last_thorough_commit_log_flush_ = now;
  last_thorough_cq_flush_ = now;
  // A SLAVE takes no puts, so no group commit covers its replicated bytes:
  // it flushes periodically whatever its flushDiskType (RocketMQ's
  // GroupCommitService also flushes on its 10 ms tick when idle).
  if (config_.flushDiskType == FlushDiskType::ASYNC_FLUSH || config_.brokerRole == BrokerRole::SLAVE) {
    schedule_async_flush();
  }
  if (const std::string ignored = config_.transient_store_pool_warning(); !ignored.empty()) {
    MQ_LOG(kWarn, "store", ignored);
  }
  if (commit_log_.transient_store_pool()) {
    MQ_LOG(kInfo, "store", "transientStorePoolEnable: puts are acknowledged from the CommitLog's write buffer, "
                               "committed every "
                               << config_.commitIntervalCommitLog << " ms (at least "
                               << config_.commitCommitLogLeastPages << " pages, or all after "
                               << config_.commitCommitLogThoroughInterval << " ms)");
    commit_real_time_ = std::make_unique<CommitRealTimeService>(env_, config_, commit_log_,
                                                                [this] { on_commit_log_committed(); });
    commit_real_time_->start();
  }
  schedule_consume_queue_flush();
  clean_service_->schedule();
  // A SLAVE's log gets the delivered copies from its master.
  if (config_.brokerRole != BrokerRole::SLAVE) schedule_->start();
}

void MessageStore::on_flush_error(const Status& status) {
  // After a failed fsync the kernel may have dropped the dirty pages; nothing
  // written since the last good flush can be promised. Stop taking writes
  // (PostgreSQL's lesson, and apache/rocketmq #2706 unlearned).
  MQ_LOG(kError, "store", "commitlog flush failed, store no longer writable: " << status.to_string());
  flush_failed_ = true;
  writable_ = false;
}

// --- dispatch ---------------------------------------------------------------

bool MessageStore::dispatch_follows_flush() const {
  return config_.dispatchFlushedOnly && config_.flushDiskType == FlushDiskType::SYNC_FLUSH &&
         config_.brokerRole != BrokerRole::SLAVE;
}

PhyOffset MessageStore::dispatch_limit() const {
  const PhyOffset complete = replica_complete_end();
  if (!dispatch_waits_for_flush()) return complete;
  // A record past the flushed offset may still vanish in a power cut and its
  // queue offset be given to another message: no consumer may see it yet.
  MQ_ASSERT(commit_log_.flushed_offset() <= commit_log_.committed_offset());
  return std::min(complete, commit_log_.flushed_offset());
}

void MessageStore::reput_soon() {
  // While a retry is pending, dispatch is stuck on a record: posting again
  // would spin on it at once instead of waiting for the retry.
  if (reput_scheduled_ || reput_retry_timer_ != env::kNoTimer) return;
  reput_scheduled_ = true;
  env_.executor().post(lifetime_.guard([this] {
    reput_scheduled_ = false;
    const PhyOffset before = reput_from_;
    const Status status = reput();
    if (reput_from_ >= dispatch_limit()) return;
    if (!status.ok() || reput_from_ == before) return retry_reput_later();  // stuck: never spin on it
    reput_soon();  // a full batch: yield, then go on
  }));
}

void MessageStore::retry_reput_later() {
  MQ_ASSERT(reput_from_ < dispatch_limit());  // something is left to dispatch
  if (!running_ || reput_retry_timer_ != env::kNoTimer) return;
  reput_retry_timer_ = env_.executor().run_after(kDispatchRetryDelay, lifetime_.guard([this] {
    reput_retry_timer_ = env::kNoTimer;
    if (running_) reput_soon();
  }));
}

Status MessageStore::reput() {
  MQ_ASSERT(dispatched_queues_.empty());
  const Status dispatched = reput_batch();
  // While serving, the entries stay buffered (readers see them) until their
  // queue's 4 KiB page fills or the flush pass commits it: a pwrite per page,
  // not per dispatch task (RocketMQ's mapped ConsumeQueue writes are memory
  // copies too). A crash loses them as a power cut loses unflushed entries,
  // and abnormal recovery re-dispatches them the same way: the checkpoint's
  // logics timestamp only ever covers entries a flush pass made durable.
  if (running_) return dispatched;
  // Also after an error: the entries dispatched before it are final.
  const Status committed = commit_dispatched_queues();
  MQ_ASSERT(dispatched_queues_.empty());
  return dispatched.ok() ? committed : dispatched;
}

Status MessageStore::commit_dispatched_queues() {
  Status first_error;
  for (ConsumeQueue* queue : dispatched_queues_) {
    if (Status status = queue->commit(); !status.ok()) {
      // The entries stay buffered and readable; the next commit of this
      // queue (a later dispatch, the flush pass) writes them.
      MQ_LOG(kError, "store", "consume queue " << queue->topic() << "-" << queue->queue_id()
                                                << " commit failed: " << status.to_string());
      if (first_error.ok()) first_error = status;
    }
  }
  dispatched_queues_.clear();
  return first_error;
}

Status MessageStore::reput_batch() {
  const PhyOffset limit = dispatch_limit();
  // Made only for records the put path did not describe. One pread brings
  // every record committed since the last pass (up to its chunk), into a
  // buffer kept across passes.
  std::optional<CommitLogScanner> scanner;
  // One request for every decoded record of the batch: its strings keep
  // their capacity from record to record.
  DispatchRequest decoded;
  for (int i = 0; i < kDispatchBatch; ++i) {
    PhyOffset end;
    const DispatchRequest* request = next_dispatch_request(limit, scanner, decoded, end);
    if (request == nullptr) break;
    if (request->queue_id < 0 || request->consume_queue_offset.value() < 0) {
      // The store never writes these: a record that decodes but names no
      // queue is damage (found by the commitlog_recovery fuzzer). Stop here
      // with a clear error instead of building a ConsumeQueue for it.
      const std::string what = "record at commitlog offset " + request->commit_log_offset.to_string() +
                               " has queue id " + std::to_string(request->queue_id) + " and queue offset " +
                               request->consume_queue_offset.to_string();
      MQ_LOG(kError, "store", "dispatch stopped: " << what);
      return Status::Corruption("dispatch stopped: " + what);
    }
    // The record stays undispatched (reput_from_ does not pass it) and is
    // retried: skipping it would leave a gap in its ConsumeQueue that every
    // later entry of that queue trips over.
    MQ_RETURN_IF_ERROR(dispatch(*request));
    reput_from_ = end;
    if (request != &decoded) {
      handed_over_.pop_front();
      ++stats_.records_dispatched_unread;
    }
  }
  MQ_ASSERT(reput_from_ <= commit_log_.max_offset());
  if (scanner && scanner->stopped_on_corruption()) {
    // Data the store itself wrote does not decode: a device returning
    // garbage (bit rot) or a bug. Stop dispatching rather than skip.
    MQ_LOG(kError, "store", "dispatch stopped: " << scanner->stop_reason());
    return Status::Corruption("dispatch stopped: " + scanner->stop_reason());
  }
  return Status::Ok();
}

const DispatchRequest* MessageStore::next_dispatch_request(PhyOffset limit, std::optional<CommitLogScanner>& scanner,
                                                           DispatchRequest& decoded, PhyOffset& end) {
  if (reput_from_ >= limit) return nullptr;
  // Requests of records a read dispatched already (after a BLANK, say).
  handed_over_.drop_before(reput_from_);
  if (const DispatchRequest* handed = handed_over_.front(); handed && handed->commit_log_offset == reput_from_) {
    // Limits are where commits (and so flushes) ended, and commits end at
    // record boundaries: a record is below the limit whole or not at all.
    MQ_ASSERT(handed->end_offset() <= limit);
    end = handed->end_offset();
    return handed;
  }
  if (!scanner || scanner->position() != reput_from_) {
    scanner.emplace(commit_log_, reput_from_, limit, /*check_crc=*/false, &reput_buffer_);
  }
  std::optional<ScannedRecord> scanned = scanner->next();
  // The scanner also hops a BLANK at a segment's end. When no record follows
  // yet (the next segment could not be created: disk full) the dispatch
  // position must still pass it, or start-up would wait for a record that is
  // not there.
  if (!scanned) {
    reput_from_ = scanner->position();
    return nullptr;
  }
  dispatch_request_of_record(scanned->record.message, scanned->offset, decoded);
  if (decoded.topic == kScheduleTopic) {
    decoded.tags_code = schedule_->deliver_timestamp_of(scanned->record.message.properties(), decoded.store_timestamp_ms);
  }
  end = scanner->position();
  MQ_ASSERT(end == decoded.end_offset());
  return &decoded;
}

Status MessageStore::dispatch(const DispatchRequest& request) {
  if (is_prepared_or_rollback(request.sysflag)) return Status::Ok();  // not consumable
  ConsumeQueue& queue = consume_queue(request.topic, request.queue_id);
  // A batch interleaves a handful of queues: a short linear search. Only
  // start-up and shutdown commit at the task's end (reput()).
  if (!running_ &&
      std::find(dispatched_queues_.begin(), dispatched_queues_.end(), &queue) == dispatched_queues_.end()) {
    dispatched_queues_.push_back(&queue);
  }
  const QueueOffset before = queue.max_offset();
  if (Status status = queue.put(request); !status.ok()) {
    MQ_LOG(kError, "store", "consume queue dispatch failed at commitlog offset "
                                << request.commit_log_offset.to_string() << ": " << status.to_string());
    // The device refused (disk full, I/O error): the same put succeeds once
    // it recovers. Anything else would fail the same way forever; it is
    // logged and skipped rather than stopping every other queue.
    if (status.code() == StatusCode::kNoSpace || status.code() == StatusCode::kIoError) return status;
  }
  if (config_.messageIndexEnable) {
    // The index is a lookup aid: a key it misses does not hide a message
    // from consumers, so an index failure never holds up ConsumeQueues.
    if (Status status = index_->build_index(request); !status.ok()) {
      MQ_LOG(kError, "store", "index dispatch failed: " << status.to_string());
    }
  }
  if (queue.max_offset() > before) {
    ++recovery_.records_dispatched;
    checkpoint_.set_logics_msg_timestamp(request.store_timestamp_ms);
    if (message_arriving_) message_arriving_(request);
    if (request.topic == kScheduleTopic) schedule_->on_dispatched(request.queue_id);
  }
  return Status::Ok();
}

// --- CommitLog flush (ASYNC_FLUSH) -------------------------------------------

void MessageStore::schedule_async_flush() {
  async_flush_timer_ = env_.executor().run_after(millis(config_.flushIntervalCommitLog), lifetime_.guard([this] {
    async_flush_timer_ = env::kNoTimer;
    run_async_flush();
    if (running_) schedule_async_flush();
  }));
}

void MessageStore::run_async_flush() {
  if (async_flush_in_flight_) return;
  const Nanos now = env_.clock().now_ns();
  // With a transient store pool a flush covers only committed bytes.
  const PhyOffset flushable =
      commit_log_.transient_store_pool() ? commit_log_.committed_offset() : commit_log_.max_offset();
  const int64_t dirty = flushable - commit_log_.flushed_offset();
  const bool thorough = now - last_thorough_commit_log_flush_ >= millis(config_.flushCommitLogThoroughInterval);
  if (dirty <= 0) return;
  if (!thorough && dirty < int64_t{config_.flushCommitLogLeastPages} * kPageSize) return;
  if (thorough) last_thorough_commit_log_flush_ = now;
  async_flush_in_flight_ = true;
  const int64_t timestamp_ms = commit_log_.flushable_timestamp_ms();
  commit_log_.flush(lifetime_.guard([this, timestamp_ms](Status status) {
    async_flush_in_flight_ = false;
    ++stats_.commit_log_flushes;
    if (!status.ok()) return on_flush_error(status);
    checkpoint_.set_physic_msg_timestamp(timestamp_ms);
  }));
}

// --- ConsumeQueue flush and checkpoint ---------------------------------------

void MessageStore::schedule_consume_queue_flush() {
  cq_flush_timer_ = env_.executor().run_after(millis(config_.flushIntervalConsumeQueue), lifetime_.guard([this] {
    cq_flush_timer_ = env::kNoTimer;
    run_consume_queue_flush();
    if (running_) schedule_consume_queue_flush();
  }));
}

void MessageStore::flush_all_consume_queues(int32_t least_pages, std::function<void(Status)> done) {
  struct Pending {
    size_t remaining = 1;  // one for the loop below, released at its end
    Status first_error;
    std::function<void(Status)> done;
  };
  auto pending = std::make_shared<Pending>();
  pending->done = std::move(done);
  auto one_done = [pending](Status status) {
    if (!status.ok() && pending->first_error.ok()) pending->first_error = status;
    if (--pending->remaining == 0) pending->done(pending->first_error);
  };
  for (auto& [topic, by_id] : consume_queues_) {
    for (auto& [queue_id, queue] : by_id) {
      ++pending->remaining;
      queue->flush(least_pages, one_done);
    }
  }
  one_done(Status::Ok());
}

void MessageStore::run_consume_queue_flush() {
  if (cq_flush_in_flight_) return;
  const Nanos now = env_.clock().now_ns();
  const bool thorough = now - last_thorough_cq_flush_ >= millis(config_.flushConsumeQueueThoroughInterval);
  // Snapshot before flushing: the persisted logics timestamp must be covered
  // by flushed ConsumeQueue data (RocketMQ does the same).
  const int64_t logics_ms = checkpoint_.logics_msg_timestamp();
  cq_flush_in_flight_ = true;
  flush_all_consume_queues(thorough ? 0 : config_.flushConsumeQueueLeastPages,
                           lifetime_.guard([this, thorough, logics_ms, now](Status status) {
                             cq_flush_in_flight_ = false;
                             if (!status.ok()) {
                               MQ_LOG(kWarn, "store", "consume queue flush failed: " << status.to_string());
                               return;
                             }
                             if (!thorough) return;
                             last_thorough_cq_flush_ = now;
                             // The checkpoint may claim only what is durable on
                             // both sides: flushed ConsumeQueues and CommitLog.
                             checkpoint_.set_logics_msg_timestamp(logics_ms);
                             // The end of the newest full index file whose
                             // write-back and sync completed (index_service.h).
                             if (config_.messageIndexEnable) {
                               checkpoint_.set_index_msg_timestamp(index_->last_flushed_end_timestamp_ms());
                             }
                             checkpoint_.flush(lifetime_.guard([](Status status) {
                               if (!status.ok()) MQ_LOG(kWarn, "store", "checkpoint flush failed: " << status.to_string());
                             }));
                           }));
}

}  // namespace mqlab::store
