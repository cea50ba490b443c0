#include "broker/store/consume_queue.h"

#include <algorithm>
#include <array>
#include <memory>
#include <span>

#include "broker/common/big_endian.h"
#include "broker/common/log.h"
#include "broker/common/same_bytes.h"
#include "broker/env/path.h"

namespace mqlab::store {

namespace {

constexpr const char* kConsumeQueueLog = "consumequeue";
// Recovery reads a segment this many whole entries at a time (~64 KiB).
constexpr int64_t kConsumeQueueScanChunkBytes = 3276 * kConsumeQueueEntrySize;

using EntryBytes = std::array<uint8_t, kConsumeQueueEntrySize>;

EntryBytes encode_entry(PhyOffset commit_log_offset, int32_t size, int64_t tags_code) {
  EntryBytes bytes{};
  put_u64_be(bytes.data(), static_cast<uint64_t>(commit_log_offset.value()));
  put_u32_be(bytes.data() + 8, static_cast<uint32_t>(size));
  put_u64_be(bytes.data() + 12, static_cast<uint64_t>(tags_code));
  return bytes;
}

ConsumeQueueEntry decode_entry(const uint8_t* bytes, QueueOffset at) {
  return ConsumeQueueEntry{.queue_offset = at,
                           .offset = PhyOffset(get_i64_be(bytes)),
                           .size = get_i32_be(bytes + 8),
                           .tags_code = get_i64_be(bytes + 12)};
}

bool is_exact_placeholder(const ConsumeQueueEntry& entry) {
  return entry.offset == PhyOffset(0) && entry.is_placeholder() && entry.tags_code == 0;
}

// A real entry's fields are sane: it names a record that could exist.
bool is_plausible_real(const ConsumeQueueEntry& entry) {
  return entry.offset >= PhyOffset(0) && entry.size > 0 && !entry.is_placeholder() &&
         entry.offset.value() <= INT64_MAX - entry.size;
}

bool all_zero(const uint8_t* bytes) {
  return std::all_of(bytes, bytes + kConsumeQueueEntrySize, [](uint8_t b) { return b == 0; });
}

// What recovery has seen so far across the files it scans.
struct RecoveryScan {
  bool placeholders_allowed = false;  // only before the first real entry of the first file
  std::optional<PhyOffset> last_end;  // end of the last real entry
  std::string stop_reason;            // why the scan stopped, when not on zeros
};

bool accept_entry(const uint8_t* bytes, RecoveryScan& scan) {
  const ConsumeQueueEntry entry = decode_entry(bytes, QueueOffset(0));
  if (is_exact_placeholder(entry)) {
    if (scan.placeholders_allowed) return true;
    scan.stop_reason = "placeholder entry after real entries";
    return false;
  }
  if (!is_plausible_real(entry)) {
    if (!all_zero(bytes)) {
      scan.stop_reason = "invalid entry (offset " + entry.offset.to_string() + ", size " +
                         std::to_string(entry.size) + ")";
    }
    return false;
  }
  if (scan.last_end && entry.end_offset() <= *scan.last_end) {
    // Entries of one queue are dispatched in CommitLog order.
    scan.stop_reason = "entry ending at " + entry.end_offset().to_string() + " does not follow the previous end " +
                       scan.last_end->to_string();
    return false;
  }
  scan.last_end = entry.end_offset();
  scan.placeholders_allowed = false;
  return true;
}

// How many bytes at the start of file hold valid entries.
Result<int64_t> scan_valid_prefix(const MappedFile& file, RecoveryScan& scan) {
  std::vector<uint8_t> chunk;
  for (int64_t position = 0; position < file.file_size();) {
    const int64_t length = std::min(kConsumeQueueScanChunkBytes, file.file_size() - position);
    chunk.resize(static_cast<size_t>(length));
    MQ_ASSIGN_OR_RETURN(size_t got, file.read(position, chunk));
    if (static_cast<int64_t>(got) != length) {
      return Status::Corruption(file.path() + ": short read at " + std::to_string(position));
    }
    for (int64_t i = 0; i < length; i += kConsumeQueueEntrySize) {
      if (!accept_entry(chunk.data() + i, scan)) return position + i;
    }
    position += length;
  }
  return file.file_size();
}

std::string queue_name(const std::string& topic, int32_t queue_id) {
  return topic + "/" + std::to_string(queue_id);
}

}  // namespace

ConsumeQueue::ConsumeQueue(env::Env& env, const MessageStoreConfig& config, std::string topic, int32_t queue_id)
    : env_(env),
      topic_(std::move(topic)),
      queue_id_(queue_id),
      files_(env, env::join_path(env::join_path(config.consume_queue_dir(), topic_), std::to_string(queue_id)),
             config.consume_queue_file_size()) {
  MQ_ASSERT(!topic_.empty());
  MQ_ASSERT(queue_id_ >= 0);
  MQ_ASSERT(files_.file_size() % kConsumeQueueEntrySize == 0);  // an entry never straddles two files
  files_.use_sparse_files();  // one file per queue: allocated, 1,000 topics took 48 GB
}

void ConsumeQueue::enable_write_behind() { files_.enable_write_behind(static_cast<size_t>(kOsPageSize)); }

Status ConsumeQueue::load() {
  MQ_ASSERT(!loaded_);
  // Whether the queue's directories are durable cannot be known after a
  // crash (a previous incarnation may have made them and died before a
  // flush): the first flush syncs them all, every time the queue is loaded.
  {
    const std::string topic_dir = env::parent_dir(files_.dir());
    const std::string queues_dir = env::parent_dir(topic_dir);
    for (const std::string& dir : {env::parent_dir(queues_dir), queues_dir, topic_dir}) {
      if (!dir.empty()) dirs_to_sync_.push_back(dir);
    }
  }
  MQ_RETURN_IF_ERROR(files_.load().with_context("loading consumequeue " + queue_name(topic_, queue_id_)));
  loaded_ = true;
  needs_recovery_ = !files_.empty();
  min_offset_ = first_file_start();
  max_physical_end_ = PhyOffset(0);
  return Status::Ok();
}

Status ConsumeQueue::recover() {
  MQ_ASSERT(loaded_);
  needs_recovery_ = false;
  if (files_.empty()) {
    min_offset_ = max_offset();
    max_physical_end_ = PhyOffset(0);
    return Status::Ok();
  }
  const auto& files = files_.files();
  const size_t start = files.size() >= 3 ? files.size() - 3 : 0;  // RocketMQ's "3rd-last file"
  RecoveryScan scan{.placeholders_allowed = start == 0};
  int64_t valid_end = files[start]->file_from_offset();
  for (size_t i = start; i < files.size(); ++i) {
    MQ_ASSIGN_OR_RETURN(int64_t valid_bytes, scan_valid_prefix(*files[i], scan));
    valid_end = files[i]->file_from_offset() + valid_bytes;
    if (valid_bytes < files[i]->file_size()) break;
  }
  if (!scan.stop_reason.empty()) {
    MQ_LOG(kWarn, kConsumeQueueLog, queue_name(topic_, queue_id_) << ": recovery stops at byte " << valid_end << ": "
                                                                << scan.stop_reason << "; the rest is dropped");
  }
  if (valid_end < files_.max_offset()) MQ_RETURN_IF_ERROR(files_.truncate_dirty_files(valid_end));
  if (scan.last_end) {
    max_physical_end_ = *scan.last_end;
  } else {
    MQ_RETURN_IF_ERROR(recompute_max_physical_end());  // the last entry lies before the scanned files
  }
  return update_min_offset(PhyOffset(0));
}

Status ConsumeQueue::put(const DispatchRequest& request) {
  MQ_ASSERT(same_text(request.topic, topic_));  // inline: no memcmp call a dispatch
  MQ_ASSERT(request.queue_id == queue_id_);
  const QueueOffset offset = request.consume_queue_offset;
  if (offset < QueueOffset(0) || offset.value() > INT64_MAX / kConsumeQueueEntrySize - 1 ||
      request.commit_log_offset < PhyOffset(0) || request.msg_size <= 0 ||
      request.msg_size == kConsumeQueuePlaceholderSize ||
      request.commit_log_offset.value() > INT64_MAX - request.msg_size) {
    return Status::Corruption("consumequeue " + queue_name(topic_, queue_id_) + ": impossible dispatch (queue offset " +
                              offset.to_string() + ", commitlog offset " + request.commit_log_offset.to_string() +
                              ", size " + std::to_string(request.msg_size) + ")");
  }
  // The store creates a queue on its topic's first dispatch without load().
  if (!loaded_) MQ_RETURN_IF_ERROR(load());
  if (needs_recovery_) MQ_RETURN_IF_ERROR(recover());
  // A re-dispatch after recovery replays records this queue already holds.
  if (request.end_offset() <= max_physical_end_) return Status::Ok();
  if (files_.empty() && offset > QueueOffset(0)) {
    MQ_RETURN_IF_ERROR(create_first_file_at(offset));
  } else if (offset != max_offset()) {
    return Status::Corruption("consumequeue " + queue_name(topic_, queue_id_) + ": record at commitlog offset " +
                              request.commit_log_offset.to_string() + " expected queue offset " +
                              max_offset().to_string() + ", got " + offset.to_string());
  }
  return append_entry(request);
}

Status ConsumeQueue::append_entry(const DispatchRequest& request) {
  MQ_ASSERT(request.consume_queue_offset == max_offset());
  MQ_ASSERT(request.end_offset() > max_physical_end_);
  const EntryBytes bytes = encode_entry(request.commit_log_offset, request.msg_size, request.tags_code);
  MQ_ASSIGN_OR_RETURN(MappedFile* file, files_.last_file_or_create(0));
  MQ_ASSERT(file->free_bytes() >= kConsumeQueueEntrySize);
  MQ_RETURN_IF_ERROR(file->append(bytes));
  max_physical_end_ = request.end_offset();
  MQ_ASSERT(max_offset() == request.consume_queue_offset + 1);
  return Status::Ok();
}

// RocketMQ's fillPreBlank: the first file of a queue that starts late is
// still named by its segment boundary, so the entries before `offset` in it
// are placeholders.
Status ConsumeQueue::create_first_file_at(QueueOffset offset) {
  MQ_ASSERT(files_.empty());
  MQ_ASSERT(offset > QueueOffset(0));
  const int64_t byte = offset.value() * kConsumeQueueEntrySize;
  const int64_t start = byte / files_.file_size() * files_.file_size();
  MQ_ASSIGN_OR_RETURN(MappedFile* file, files_.last_file_or_create(start));
  MQ_ASSERT(file->file_from_offset() == start && file->wrote_position() == 0);
  std::vector<uint8_t> placeholders;
  placeholders.reserve(static_cast<size_t>(byte - start));
  const EntryBytes placeholder = encode_entry(PhyOffset(0), kConsumeQueuePlaceholderSize, 0);
  for (int64_t at = start; at < byte; at += kConsumeQueueEntrySize) {
    placeholders.insert(placeholders.end(), placeholder.begin(), placeholder.end());
  }
  // Written at once even with write-behind: a file that outlived its
  // placeholders (a crash) would start the queue at offset 0.
  Status status = file->append(placeholders);
  if (status.ok()) status = file->commit();
  if (!status.ok()) {
    // Leave no empty file behind: it would make the retried put a mismatch.
    (void)files_.destroy();
    return status;
  }
  min_offset_ = offset;
  MQ_LOG(kInfo, kConsumeQueueLog, queue_name(topic_, queue_id_) << ": first file starts at queue offset " << offset.value()
                                                             << " (" << (byte - start) / kConsumeQueueEntrySize
                                                             << " placeholders)");
  MQ_ASSERT(max_offset() == offset);
  return Status::Ok();
}

QueueOffset ConsumeQueue::max_offset() const {
  MQ_ASSERT(files_.max_offset() % kConsumeQueueEntrySize == 0);
  return QueueOffset(files_.max_offset() / kConsumeQueueEntrySize);
}

QueueOffset ConsumeQueue::first_file_start() const {
  return QueueOffset(files_.min_offset() / kConsumeQueueEntrySize);
}

Result<ConsumeQueueEntry> ConsumeQueue::read_entry(QueueOffset offset) const {
  MQ_ASSERT(offset >= first_file_start());
  MQ_ASSERT(offset < max_offset());
  EntryBytes bytes{};
  MQ_ASSIGN_OR_RETURN(size_t got, files_.read(offset.value() * kConsumeQueueEntrySize, bytes));
  if (got != bytes.size()) {
    return Status::Corruption("consumequeue " + queue_name(topic_, queue_id_) + ": short read of entry " +
                              offset.to_string());
  }
  return decode_entry(bytes.data(), offset);
}

Result<std::vector<ConsumeQueueEntry>> ConsumeQueue::read(QueueOffset from, int32_t max_entries) const {
  std::vector<ConsumeQueueEntry> entries;
  MQ_RETURN_IF_ERROR(read_into(from, max_entries, entries));
  return entries;
}

Status ConsumeQueue::read_into(QueueOffset from, int32_t max_entries, std::vector<ConsumeQueueEntry>& entries) const {
  MQ_ASSERT(max_entries > 0);
  entries.clear();
  if (from < min_offset_) {
    return Status::NotFound("consumequeue " + queue_name(topic_, queue_id_) + ": offset " + from.to_string() +
                            " is below the min offset " + min_offset_.to_string());
  }
  if (from >= max_offset()) return Status::Ok();
  const QueueOffset end = std::min(max_offset(), from + max_entries);
  entries.reserve(static_cast<size_t>(end - from));
  // Read through a buffer on the stack, left uninitialized (a vector's
  // zero-fill of up to maxMsgNums entries cost more than the read itself).
  constexpr int64_t kChunkEntries = 64;
  std::array<uint8_t, kChunkEntries * kConsumeQueueEntrySize> buffer;
  for (QueueOffset at = from; at < end;) {
    const int64_t want = std::min<int64_t>(end - at, kChunkEntries);
    const std::span<uint8_t> chunk(buffer.data(), static_cast<size_t>(want * kConsumeQueueEntrySize));
    // One read stops at a file's end; the loop continues in the next file.
    MQ_ASSIGN_OR_RETURN(size_t got, files_.read(at.value() * kConsumeQueueEntrySize, chunk));
    // Positions are whole entries, so only a short pread leaves a part.
    if (got == 0 || got % kConsumeQueueEntrySize != 0) {
      return Status::Corruption("consumequeue " + queue_name(topic_, queue_id_) + ": short read at entry " +
                                at.to_string() + " below the max offset " + max_offset().to_string());
    }
    for (size_t i = 0; i < got; i += kConsumeQueueEntrySize) {
      entries.push_back(decode_entry(buffer.data() + i, at));
      at += 1;
    }
  }
  MQ_ASSERT(entries.size() == static_cast<size_t>(end - from));
  return Status::Ok();
}

Result<std::optional<ConsumeQueueEntry>> ConsumeQueue::get(QueueOffset offset) const {
  if (offset < min_offset_ || offset >= max_offset()) return std::optional<ConsumeQueueEntry>();
  MQ_ASSIGN_OR_RETURN(ConsumeQueueEntry entry, read_entry(offset));
  return std::optional<ConsumeQueueEntry>(entry);
}

Result<QueueOffset> ConsumeQueue::lower_bound_physical(PhyOffset phy) const {
  QueueOffset low = first_file_start();
  QueueOffset high = max_offset();
  while (low < high) {
    const QueueOffset mid = low + (high - low) / 2;
    MQ_ASSIGN_OR_RETURN(ConsumeQueueEntry entry, read_entry(mid));
    if (!entry.is_placeholder() && entry.offset >= phy) {
      high = mid;
    } else {
      low = mid + 1;
    }
  }
  MQ_ASSERT(low == high);
  return low;
}

Status ConsumeQueue::recompute_max_physical_end() {
  max_physical_end_ = PhyOffset(0);
  if (max_offset() <= first_file_start()) return Status::Ok();
  MQ_ASSIGN_OR_RETURN(ConsumeQueueEntry last, read_entry(max_offset() - 1));
  // Placeholders only precede real entries: a placeholder last means none.
  if (!last.is_placeholder()) max_physical_end_ = last.end_offset();
  return Status::Ok();
}

void ConsumeQueue::correct_min_offset(PhyOffset commitlog_min) {
  if (Status status = update_min_offset(commitlog_min); !status.ok()) {
    MQ_LOG(kError, kConsumeQueueLog, queue_name(topic_, queue_id_) << ": min offset stays at " << min_offset_.value()
                                                                << ": " << status.to_string());
  }
}

Status ConsumeQueue::update_min_offset(PhyOffset commitlog_min) {
  MQ_ASSIGN_OR_RETURN(QueueOffset first_valid, lower_bound_physical(commitlog_min));
  min_offset_ = first_valid;
  MQ_ASSERT(first_file_start() <= min_offset_);
  MQ_ASSERT(min_offset_ <= max_offset());
  return Status::Ok();
}

Status ConsumeQueue::truncate_dirty(PhyOffset phy_end) {
  MQ_ASSERT(!needs_recovery_);
  MQ_ASSIGN_OR_RETURN(QueueOffset cut, lower_bound_physical(phy_end));
  if (cut == max_offset()) return Status::Ok();
  MQ_LOG(kWarn, kConsumeQueueLog, queue_name(topic_, queue_id_) << ": dropping entries [" << cut.value() << ", "
                                                             << max_offset().value() << ") that point at or past "
                                                             << "commitlog offset " << phy_end.value());
  MQ_RETURN_IF_ERROR(files_.truncate_dirty_files(cut.value() * kConsumeQueueEntrySize));
  MQ_ASSERT(max_offset() == cut);
  min_offset_ = std::min(min_offset_, cut);
  return recompute_max_physical_end();
}

Result<int> ConsumeQueue::delete_expired_files(PhyOffset commitlog_min) {
  int deleted = 0;
  while (files_.files().size() > 1) {  // never the last file
    const std::shared_ptr<MappedFile> first = files_.first_file();
    MQ_ASSERT(first->is_full());  // only the last file is written to
    EntryBytes bytes{};
    MQ_ASSIGN_OR_RETURN(size_t got, first->read(first->file_size() - kConsumeQueueEntrySize, bytes));
    if (got != bytes.size()) return Status::Corruption(first->path() + ": short read of its last entry");
    if (PhyOffset(get_i64_be(bytes.data())) >= commitlog_min) break;
    MQ_RETURN_IF_ERROR(files_.delete_first_file().status());
    MQ_LOG(kInfo, kConsumeQueueLog, "deleted expired " << first->path() << " (commitlog min " << commitlog_min.value()
                                                    << ")");
    ++deleted;
  }
  MQ_RETURN_IF_ERROR(update_min_offset(commitlog_min));
  return deleted;
}

void ConsumeQueue::flush(int32_t least_pages, std::function<void(Status)> done) {
  MQ_ASSERT(least_pages >= 0);
  // Every pass hands buffered entries to the file, synced or not.
  if (Status status = files_.commit(); !status.ok()) {
    env_.executor().post([done = std::move(done), status = std::move(status)] { done(status); });
    return;
  }
  const int64_t dirty_pages = files_.max_offset() / kOsPageSize - files_.flushed_where() / kOsPageSize;
  if (least_pages > 0 && dirty_pages < least_pages) {
    env_.executor().post([done = std::move(done)] { done(Status::Ok()); });
    return;
  }
  // The directory syncs and the file syncs run side by side; done hears ok
  // only when every one of them succeeded.
  struct Pending {
    size_t remaining;
    Status first_error;
    std::function<void(Status)> done;
  };
  const std::vector<std::string> dirs = dirs_to_sync_;
  auto pending = std::make_shared<Pending>(Pending{dirs.size() + 1, Status::Ok(), std::move(done)});
  auto on_one = lifetime_.guard([this, pending, synced_dirs = !dirs.empty()](Status status) {
    if (!status.ok() && pending->first_error.ok()) pending->first_error = status;
    MQ_ASSERT(pending->remaining > 0);
    if (--pending->remaining > 0) return;
    if (pending->first_error.ok() && synced_dirs) dirs_to_sync_.clear();
    pending->done(pending->first_error);
  });
  for (const std::string& dir : dirs) env_.files().sync_dir(dir, on_one);
  files_.flush(on_one);
}

Result<QueueOffset> ConsumeQueue::offset_by_timestamp(
    int64_t timestamp_ms, const std::function<Result<int64_t>(PhyOffset, int32_t)>& store_time_of) const {
  QueueOffset low = min_offset_;
  QueueOffset high = max_offset();
  while (low < high) {
    const QueueOffset mid = low + (high - low) / 2;
    MQ_ASSIGN_OR_RETURN(ConsumeQueueEntry entry, read_entry(mid));
    bool older = true;
    if (!entry.is_placeholder()) {
      Result<int64_t> store_time = store_time_of(entry.offset, entry.size);
      if (!store_time.ok() && store_time.status().code() != StatusCode::kNotFound) return store_time.status();
      older = !store_time.ok() || *store_time < timestamp_ms;  // NotFound: the record was deleted
    }
    if (older) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  MQ_ASSERT(min_offset_ <= low && low <= max_offset());
  return low;
}

Status ConsumeQueue::destroy() {
  MQ_RETURN_IF_ERROR(files_.destroy());
  min_offset_ = QueueOffset(0);
  max_physical_end_ = PhyOffset(0);
  needs_recovery_ = false;
  MQ_ASSERT(max_offset() == QueueOffset(0));
  return Status::Ok();
}

}  // namespace mqlab::store
