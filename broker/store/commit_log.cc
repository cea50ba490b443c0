#include "broker/store/commit_log.h"

#include <algorithm>

#include "broker/common/big_endian.h"
#include "broker/common/log.h"

namespace mqlab::store {
namespace {
constexpr int64_t kCommitLogScanChunkBytes = 256 * 1024;
// The largest pwrite one group write issues: 256 puts of 1 KiB in flight fit
// in one; a bigger batch is written in several, all before any is acknowledged.
constexpr size_t kGroupWriteMaxBytes = 1024 * 1024;

}  // namespace

CommitLog::CommitLog(env::Env& env, const MessageStoreConfig& config)
    : env_(env), config_(config), queue_(env, config.commit_log_dir(), config.mappedFileSizeCommitLog) {
  // SYNC_FLUSH's puts wait for the CommitLog's flushes (and so does dispatch,
  // with dispatchFlushedOnly): not behind the ConsumeQueues' syncs, which
  // come once a second, one per queue.
  queue_.isolate_syncs();
  // A master's SYNC_FLUSH puts wait for each group commit: its fdatasync
  // runs on their thread (groupCommitOnPutThreadEnable), after the tasks
  // already queued there, so a SYNC_MASTER's push to its slave goes out
  // first and overlaps it. Not a SLAVE's: it reports its offset to the
  // master as it writes.
  if (config.groupCommitOnPutThreadEnable && config.flushDiskType == FlushDiskType::SYNC_FLUSH &&
      config.brokerRole != BrokerRole::SLAVE) {
    queue_.sync_on_caller();
  }
  if (config.allocateMappedFileEnable || config.warmMapedFileEnable || config.recycleExpiredCommitLogEnable) {
    queue_.enable_preallocation(config.warmMapedFileEnable);
  }
  if (config.recycleExpiredCommitLogEnable) queue_.enable_recycling();
  // Not with SYNC_FLUSH: see commitLogMappedWriteEnable.
  if (config.commitLogMappedWriteEnable && config.flushDiskType == FlushDiskType::ASYNC_FLUSH) {
    queue_.enable_mapped_appends();
  }
  // A SLAVE's log grows by the master's bytes, written as they arrive.
  if (config.brokerRole != BrokerRole::SLAVE) {
    group_write_ = true;
    transient_store_pool_ = config.is_transient_store_pool_enable();
    // The dispatcher reads each group write's records right after it: from
    // the kept copy, not the page cache (mapped_file.h).
    // With a transient store pool the buffer is also kGroupWriteMaxBytes,
    // not RocketMQ's segment-sized slot: a full buffer is committed at once,
    // ahead of CommitRealTimeService's tick. Under load a segment-sized
    // buffer held 200 ms of puts (20 MB at 100k/s), written once into RAM
    // and read again by the pwrite long after it left the cache: store_bench
    // measured 1.5x the CPU per put of the group write at 8 and 64 in
    // flight. 1 MiB stays cached, and an early commit only narrows the
    // kill -9 window. It also bounds the memory: with the disk refusing
    // commits, puts are refused once 1 MiB waits. It is internal, not tied
    // to commitCommitLogLeastPages: that is the least a timed commit
    // writes (RocketMQ's only size rule; it has no upper trigger, its buffer
    // being the segment), and this the most a buffer holds. With a
    // least-pages value of 256 (1 MiB / 4 KiB) or more, the full buffer
    // commits before any tick may, and only the thorough interval adds
    // commits.
    queue_.enable_write_behind(kGroupWriteMaxBytes, /*keep_last_commit=*/true);
    if (transient_store_pool_) queue_.set_commit_on_flush(false);
  }
  if (transient_store_pool_) MQ_ASSERT(config.flushDiskType == FlushDiskType::ASYNC_FLUSH);
}

int64_t CommitLog::uncommitted_pages() const {
  constexpr int64_t kPageSize = 4096;
  const MappedFile* last = last_segment();
  if (!last || !last->has_pending()) return 0;
  const int64_t pages = last->wrote_position() / kPageSize - last->committed_position() / kPageSize;
  MQ_ASSERT(pages >= 0);
  return pages;
}

MappedFile* CommitLog::last_segment() const {
  // Not last_file()'s copy: this runs several times per put, and each
  // shared_ptr copy is two locked atomic operations.
  const std::vector<std::shared_ptr<MappedFile>>& files = queue_.files();
  return files.empty() ? nullptr : files.back().get();
}

PhyOffset CommitLog::committed_offset() const {
  const MappedFile* last = last_segment();
  if (last == nullptr) return max_offset();
  const PhyOffset committed(last->file_from_offset() + last->committed_position());
  MQ_ASSERT(committed <= max_offset());
  return committed;
}

void CommitLog::forget_committed() {
  const PhyOffset committed = committed_offset();
  auto first_uncommitted = std::find_if(uncommitted_.begin(), uncommitted_.end(),
                                        [&](const UncommittedRecord& record) { return record.wrote_offset >= committed; });
  uncommitted_.erase(uncommitted_.begin(), first_uncommitted);
}

Status CommitLog::drop_uncommitted(Status status) {
  MQ_ASSERT(!status.ok());
  if (transient_store_pool_) {
    // Acknowledged while buffered (or about to be, this turn): they stay
    // for the next commit; only the put that hit the error is refused.
    MQ_ASSERT(uncommitted_.empty());
    return status;
  }
  forget_committed();
  MappedFile* last = last_segment();
  if (uncommitted_.empty()) {
    if (last) MQ_ASSERT(!last->has_pending());  // every buffered byte belongs to a tracked record
    return status;
  }
  MQ_ASSERT(last != nullptr);
  // Commits always stop at a record boundary: the first dropped record starts
  // exactly where the file's bytes end.
  MQ_ASSERT(uncommitted_.front().wrote_offset == committed_offset());
  for (auto it = uncommitted_.rbegin(); it != uncommitted_.rend(); ++it) {
    if (it->next_queue_offset == nullptr) continue;
    MQ_ASSERT(*it->next_queue_offset > 0);
    *it->next_queue_offset -= 1;
  }
  last_append_timestamp_ms_ = uncommitted_.front().previous_timestamp_ms;
  MQ_LOG(kWarn, "store", "commitlog: dropped " << uncommitted_.size() << " uncommitted records from offset "
                                               << uncommitted_.front().wrote_offset.to_string() << ": "
                                               << status.to_string());
  last->set_wrote_position(last->committed_position());  // the buffered bytes go
  uncommitted_.clear();
  MQ_ASSERT(committed_offset() == max_offset());
  return status;
}

Status CommitLog::commit() {
  MappedFile* last = last_segment();
  if (!last || !last->has_pending()) {
    uncommitted_.clear();  // a flush or a full buffer committed them already
    return Status::Ok();
  }
  if (Status status = last->commit(); !status.ok()) return drop_uncommitted(std::move(status));
  uncommitted_.clear();
  committed_timestamp_ms_ = last_append_timestamp_ms_;
  MQ_ASSERT(committed_offset() == max_offset());
  return Status::Ok();
}

Status CommitLog::write_blank(MappedFile& file) {
  const int64_t free_bytes = file.free_bytes();
  MQ_ASSERT(free_bytes >= kEndFileMinBlankLength);
  uint8_t blank[kEndFileMinBlankLength];
  put_u32_be(blank, static_cast<uint32_t>(free_bytes));
  put_u32_be(blank + 4, kBlankMagicCode);
  if (Status status = file.append(blank); !status.ok()) return drop_uncommitted(std::move(status));
  // The segment's buffered records and the BLANK in one pwrite: a batch
  // never spans two segments, so only the last one ever holds buffered bytes.
  if (Status status = file.commit(); !status.ok()) {
    file.set_wrote_position(file.wrote_position() - kEndFileMinBlankLength);  // the BLANK goes first
    return drop_uncommitted(std::move(status));
  }
  uncommitted_.clear();
  committed_timestamp_ms_ = last_append_timestamp_ms_;
  // The rest of the segment is padding; it already reads as zeros.
  file.set_wrote_position(file.file_size());
  MQ_ASSERT(file.committed_position() == file.file_size());
  return Status::Ok();
}

Result<AppendMessageResult> CommitLog::append(const MessageToStore& message, const RecordPlan& plan) {
  MQ_ASSERT(plan.error == EncodeError::kNone);
  const int32_t size = plan.total_size;
  MQ_ASSERT(size >= kMessageFixedSizeIpv4);
  MQ_ASSERT(size + kEndFileMinBlankLength <= config_.mappedFileSizeCommitLog);
  MQ_ASSIGN_OR_RETURN(MappedFile* file, queue_.last_file_or_create(0));
  if (size + kEndFileMinBlankLength > file->free_bytes()) {
    MQ_RETURN_IF_ERROR(write_blank(*file));
    MQ_ASSERT(uncommitted_.empty());
    MQ_ASSIGN_OR_RETURN(file, queue_.last_file_or_create(0));
    MQ_ASSERT(file->wrote_position() == 0);
  }
  const PhyOffset wrote_offset(file->file_from_offset() + file->wrote_position());
  MQ_ASSERT(wrote_offset == max_offset());

  // One lookup per put: the entry is bumped below once the bytes are in.
  int64_t* next_queue_offset =
      is_prepared_or_rollback(message.sysflag) ? nullptr : &topic_queue_table_[message.topic][message.queue_id];
  const QueueOffset queue_offset(next_queue_offset ? *next_queue_offset : 0);
  // Store timestamps never go backwards within the log, even if the wall
  // clock does: recovery relies on file order matching time order.
  const int64_t store_timestamp = std::max(env_.clock().wall_ms(), last_append_timestamp_ms_);
  // The record is written once, in its final place, its offsets and store
  // timestamp included. A full write buffer commits first; its failure
  // drops what it held (and this record was never buffered).
  const AppendFields fields{queue_offset, wrote_offset, store_timestamp};
  // The first record buffered after a commit: everything before it is in
  // the file, so a flush may claim the newest of those.
  if (transient_store_pool_ && !file->has_pending()) committed_timestamp_ms_ = last_append_timestamp_ms_;
  Status appended = file->append_in_place(static_cast<size_t>(size), [&](std::span<uint8_t> out) {
    write_record(message, plan, fields, out);
  });
  if (!appended.ok()) return drop_uncommitted(std::move(appended));

  if (next_queue_offset) *next_queue_offset += 1;
  if (group_write_ && !transient_store_pool_ && file->has_pending()) {
    if (uncommitted_.size() >= 64 && uncommitted_.front().wrote_offset < committed_offset()) forget_committed();
    uncommitted_.push_back(UncommittedRecord{wrote_offset, next_queue_offset, last_append_timestamp_ms_});
  }
  last_append_timestamp_ms_ = store_timestamp;
  file->note_store_timestamp(store_timestamp);
  AppendMessageResult result;
  result.wrote_offset = wrote_offset;
  result.wrote_bytes = size;
  result.queue_offset = queue_offset;
  result.store_timestamp_ms = store_timestamp;
  result.store_host = message.store_host;
  MQ_ASSERT(result.end_offset() == max_offset());
  return result;
}

Result<std::vector<uint8_t>> CommitLog::read(PhyOffset offset, int32_t size) const {
  MQ_ASSERT(size >= 0);
  std::shared_ptr<MappedFile> file = queue_.find_file(offset.value());
  if (!file) return Status::NotFound("commitlog: no segment holds offset " + offset.to_string());
  const int64_t position = offset.value() - file->file_from_offset();
  // RocketMQ's MappedFile.selectMappedBuffer stops at getReadPosition(): the
  // committed position with a transient store pool. Buffered bytes are not
  // stored yet: a kill -9 takes them, and recovery may hand their offsets to
  // other records, so nothing may be read from them, by id or by key.
  const int64_t readable = file->committed_position();
  MQ_ASSERT(readable <= file->wrote_position());
  if (position + size > readable) {
    return Status::NotFound("commitlog: " + std::to_string(size) + " bytes at offset " + offset.to_string() +
                            " run past the committed end of " + file->path() +
                            (readable < file->wrote_position() ? " (the rest is still in the write buffer)" : ""));
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  MQ_ASSIGN_OR_RETURN(size_t got, file->read(position, bytes));
  if (got != bytes.size()) {
    return Status::IoError("commitlog: short read of " + file->path() + " at " + std::to_string(position));
  }
  return bytes;
}

Result<std::vector<uint8_t>> CommitLog::read_record_bytes(PhyOffset offset) const {
  MQ_ASSIGN_OR_RETURN(std::vector<uint8_t> header, read(offset, 4));
  const int32_t total = get_i32_be(header.data());
  if (total < kMessageFixedSizeIpv4 || total > config_.mappedFileSizeCommitLog) {
    return Status::Corruption("commitlog: record at offset " + offset.to_string() + " has TOTALSIZE " +
                              std::to_string(total));
  }
  MQ_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, read(offset, total));
  Result<DecodedRecord> decoded = decode_record(bytes, DecodeOptions{.check_crc = true});
  if (!decoded.ok()) return decoded.status().with_context("commitlog offset " + offset.to_string());
  if (decoded->kind != RecordKind::kMessage) {
    return Status::Corruption("commitlog: offset " + offset.to_string() + " holds a blank record, not a message");
  }
  return bytes;
}

Result<int64_t> CommitLog::store_timestamp_at(PhyOffset offset, int32_t size) const {
  MQ_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, read(offset, size));
  MQ_ASSIGN_OR_RETURN(DecodedRecord decoded, decode_record(bytes, DecodeOptions{.check_crc = false}));
  return decoded.message.store_timestamp_ms;
}

void CommitLog::set_topic_queue_offset(const std::string& topic, int32_t queue_id, QueueOffset next) {
  MQ_ASSERT(next.value() >= 0);
  topic_queue_table_[topic][queue_id] = next.value();
}

QueueOffset CommitLog::topic_queue_offset(const std::string& topic, int32_t queue_id) const {
  auto by_topic = topic_queue_table_.find(topic);
  if (by_topic == topic_queue_table_.end()) return QueueOffset(0);
  auto it = by_topic->second.find(queue_id);
  return QueueOffset(it == by_topic->second.end() ? 0 : it->second);
}

Status CommitLog::truncate(PhyOffset offset) {
  MQ_ASSERT(offset.value() >= 0);
  MQ_ASSERT(committed_offset() == max_offset());
  return queue_.truncate_dirty_files(offset.value());
}

// ---------------------------------------------------------------------------

CommitLogScanner::CommitLogScanner(const CommitLog& log, PhyOffset from, PhyOffset limit, bool check_crc,
                                   std::vector<uint8_t>* buffer)
    : log_(log), position_(from), limit_(limit), check_crc_(check_crc), buffer_(buffer ? *buffer : own_buffer_) {
  MQ_ASSERT(from <= limit || limit.value() == 0);
}

bool CommitLogScanner::fill(int64_t need) {
  const int64_t at = position_.value();
  if (buffer_start_ >= 0 && at >= buffer_start_ &&
      at + need <= buffer_start_ + buffer_length_) {
    return true;
  }
  std::shared_ptr<MappedFile> file = log_.file_at(position_);
  MQ_ASSERT(file != nullptr);  // next() checked
  const int64_t position_in_file = at - file->file_from_offset();
  const int64_t file_end = std::min(file->file_from_offset() + file->file_size(), limit_.value());
  const int64_t length = std::min(std::max(need, kCommitLogScanChunkBytes), file_end - at);
  if (length < need) return false;
  // Grown, never shrunk: a reused buffer costs no allocation and no zeroing.
  if (buffer_.size() < static_cast<size_t>(length)) buffer_.resize(static_cast<size_t>(length));
  Result<size_t> got = file->read(position_in_file, std::span<uint8_t>(buffer_.data(), static_cast<size_t>(length)));
  if (!got.ok() || static_cast<int64_t>(*got) < need) {
    stop_reason_ = file->path() + ": read at " + std::to_string(position_in_file) + " failed: " +
                   (got.ok() ? "short read" : got.status().to_string());
    corrupt_ = true;
    buffer_start_ = -1;
    return false;
  }
  buffer_length_ = static_cast<int64_t>(*got);
  buffer_start_ = at;
  return true;
}

std::optional<ScannedRecord> CommitLogScanner::next() {
  while (position_ < limit_ && stop_reason_.empty()) {
    std::shared_ptr<MappedFile> file = log_.file_at(position_);
    if (!file) {
      stop_reason_ = "no segment holds offset " + position_.to_string();
      return std::nullopt;
    }
    const int64_t position_in_file = position_.value() - file->file_from_offset();
    const int64_t left_in_file = file->file_size() - position_in_file;
    // Built only for a stop reason: a string per scanned record was one of
    // the dispatcher's allocations per put.
    auto where = [&] { return file->path() + " position " + std::to_string(position_in_file); };
    if (left_in_file < kEndFileMinBlankLength || !fill(kEndFileMinBlankLength)) {
      if (stop_reason_.empty()) stop_reason_ = where() + ": too few bytes for a record header";
      corrupt_ = true;
      return std::nullopt;
    }
    const uint8_t* head = buffer_.data() + (position_.value() - buffer_start_);
    const int32_t total = get_i32_be(head);
    const uint32_t magic = get_u32_be(head + 4);
    if (total == 0 && magic == 0) {
      stop_reason_ = "";  // zeroed tail: the clean end of the log
      return std::nullopt;
    }
    if (magic == kBlankMagicCode) {
      if (total != left_in_file) {
        stop_reason_ = where() + ": BLANK record TOTALSIZE " + std::to_string(total) + " but " +
                       std::to_string(left_in_file) + " bytes are left in the segment";
        corrupt_ = true;
        return std::nullopt;
      }
      position_ += total;
      continue;
    }
    if (total <= 0 || total > left_in_file || !fill(total)) {
      if (stop_reason_.empty()) {
        stop_reason_ = where() + ": TOTALSIZE " + std::to_string(total) + " does not fit in the " +
                       std::to_string(left_in_file) + " bytes left in the segment";
      }
      corrupt_ = true;
      return std::nullopt;
    }
    std::span<const uint8_t> bytes(buffer_.data() + (position_.value() - buffer_start_), static_cast<size_t>(total));
    Result<DecodedRecord> decoded = decode_record(bytes, DecodeOptions{.check_crc = check_crc_});
    if (!decoded.ok()) {
      stop_reason_ = where() + ": " + decoded.status().to_string();
      corrupt_ = true;
      return std::nullopt;
    }
    if (decoded->kind == RecordKind::kMessage && decoded->message.physical_offset != position_) {
      stop_reason_ = where() + ": PHYSICALOFFSET " + decoded->message.physical_offset.to_string() +
                     " does not match the record's position " + position_.to_string();
      corrupt_ = true;
      return std::nullopt;
    }
    ScannedRecord scanned{position_, std::move(decoded).value()};
    position_ += total;
    return scanned;
  }
  return std::nullopt;
}

}  // namespace mqlab::store
