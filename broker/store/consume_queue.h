// ConsumeQueue: the index of one (topic, queueId) into the CommitLog, as
// RocketMQ's ConsumeQueue. Entry n (the logical QueueOffset n) lives at byte
// n x 20 of a run of fixed-size segment files under
// {consumequeue}/{topic}/{queueId}/, each named by the 20-digit byte offset of
// its first entry. Written only by the dispatcher, never on the put path; the
// CommitLog stays the source of truth and recovery rebuilds this from it.
//
// | field            | bytes | byte order | meaning                          |
// |------------------|-------|------------|----------------------------------|
// | commitlog offset | 8     | big-endian | PhyOffset of the record's start  |
// | size             | 4     | big-endian | TOTALSIZE of the record          |
// | tags code        | 8     | big-endian | tags_code(TAGS), 0 when none     |
//
// A placeholder entry (offset 0, size INT32_MAX, tags 0) fills the part of a
// queue's first file that lies before its first real entry, when the queue
// starts at a logical offset that is not a segment boundary (RocketMQ's
// fillPreBlank: a slave, or a queue re-created after retention).
//
// Invariants (after recover(), or for a queue that had no files):
//   - first file start / 20 <= min_offset() <= max_offset();
//   - placeholders appear only at the start of the first file, below
//     min_offset(); real entries follow in strictly increasing commitlog end
//     (offset + size), and max_physical_end() is the end of the last one
//     (0 when there is none);
//   - max_offset() is the next logical offset put() accepts.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "broker/common/lifetime.h"
#include "broker/common/status.h"
#include "broker/common/types.h"
#include "broker/env/env.h"
#include "broker/store/dispatch_request.h"
#include "broker/store/mapped_file_queue.h"
#include "broker/store/message_store_config.h"

namespace mqlab::store {

constexpr int32_t kConsumeQueueEntrySize = 20;
static_assert(kConsumeQueueEntrySize == 8 + 4 + 8);  // offset, size, tag hash
// RocketMQ's fillPreBlank marks an entry that stands for no message this way.
constexpr int32_t kConsumeQueuePlaceholderSize = INT32_MAX;
// FlushConsumeQueueService counts dirty pages of this size.
constexpr int64_t kOsPageSize = 4096;

struct ConsumeQueueEntry {
  QueueOffset queue_offset;  // where the entry sits (not stored: its position)
  PhyOffset offset;          // the record's CommitLog offset
  int32_t size = 0;
  int64_t tags_code = 0;

  bool is_placeholder() const { return size == kConsumeQueuePlaceholderSize; }
  PhyOffset end_offset() const { return offset + size; }
  bool operator==(const ConsumeQueueEntry&) const = default;
};

class ConsumeQueue {
 public:
  ConsumeQueue(env::Env& env, const MessageStoreConfig& config, std::string topic, int32_t queue_id);
  ConsumeQueue(const ConsumeQueue&) = delete;
  ConsumeQueue& operator=(const ConsumeQueue&) = delete;

  const std::string& topic() const { return topic_; }
  int32_t queue_id() const { return queue_id_; }
  const std::string& dir() const { return files_.dir(); }

  // Opens the segment files (creating the directories when missing).
  // Requires: called at most once, before anything else; recover() follows.
  // A queue created for a topic's first dispatch may skip both: the first
  // put() loads (and, if files turned up, recovers) it.
  Status load();
  // Scans from the 3rd-last file entry by entry and truncates after the last
  // valid one (a real entry: offset >= 0, 0 < size < INT32_MAX, ending past
  // the previous real entry; or a placeholder before any real entry of the
  // first file). Sets max_physical_end() and a provisional min_offset() (the
  // first real entry); the store then calls correct_min_offset().
  Status recover();

  // From now on put() buffers entries in memory (readers see them at once)
  // until commit(), a full 4 KiB page, or flush() hands them to the file in
  // one pwrite. A process crash loses what is still buffered, as a power
  // loss loses what is not flushed; recovery re-dispatches both from the
  // CommitLog (the checkpoint claims only flushed entries). A serving store
  // leaves entries buffered until the page fills or its flush pass (about
  // one pwrite per 204 entries); start-up and shutdown commit at the end of
  // every dispatch task. Without it, every put() is a pwrite.
  void enable_write_behind();
  // Writes the buffered entries to the file. On error they stay buffered
  // (and readable) for the next commit or flush.
  Status commit() { return files_.commit(); }

  // Writes the entry for request at request.consume_queue_offset. A request
  // whose record ends at or before max_physical_end() is a re-dispatch and is
  // skipped (ok). Corruption when the offset does not continue the queue.
  // Requires: request is for this topic and queue.
  Status put(const DispatchRequest& request);

  // Up to max_entries entries from `from` on, in order; fewer at max_offset()
  // (none when from >= max_offset()). NotFound when from < min_offset().
  // Requires: max_entries > 0.
  Result<std::vector<ConsumeQueueEntry>> read(QueueOffset from, int32_t max_entries) const;
  // The same into entries (emptied first), which a reader keeps for its
  // room: a pull reads one entry or a few, and a vector each time was an
  // allocation per message pulled.
  Status read_into(QueueOffset from, int32_t max_entries, std::vector<ConsumeQueueEntry>& entries) const;
  // The entry at offset, or nullopt outside [min_offset(), max_offset()).
  Result<std::optional<ConsumeQueueEntry>> get(QueueOffset offset) const;

  QueueOffset min_offset() const { return min_offset_; }
  QueueOffset max_offset() const;  // the next offset to write
  PhyOffset max_physical_end() const { return max_physical_end_; }

  // Moves min_offset() to the first real entry whose commitlog offset is at
  // least commitlog_min (max_offset() when there is none): entries below it
  // point at deleted CommitLog files. A failed read is logged and leaves
  // min_offset() as it was.
  void correct_min_offset(PhyOffset commitlog_min);
  // Drops every entry whose commitlog offset is >= phy_end (recovery after
  // the CommitLog was cut). Emptying the queue keeps its logical position:
  // max_offset() stays where the first dropped entry was.
  Status truncate_dirty(PhyOffset phy_end);
  // Deletes leading files (never the last) whose last entry points below
  // commitlog_min, then corrects min_offset(). Returns how many went.
  Result<int> delete_expired_files(PhyOffset commitlog_min);

  // Makes the entries written so far durable when at least least_pages 4 KiB
  // pages are unflushed, or always when least_pages == 0; done(ok) then means
  // they survive a power loss, directory entries included. Skipping reports
  // ok too (buffered entries reach the file either way). done runs on the
  // executor.
  void flush(int32_t least_pages, std::function<void(Status)> done);

  // The first offset in [min_offset(), max_offset()) whose message was
  // stored at or after timestamp_ms, by binary search (RocketMQ's
  // getOffsetInQueueByTime; it returns the closest entry, we the lower
  // bound, so a consumer starting "from a time" misses nothing after it).
  // max_offset() when every message is older. store_time_of(offset, size)
  // reads a record's STORETIMESTAMP; NotFound from it means the record is
  // gone (treated as older), any other error is returned.
  Result<QueueOffset> offset_by_timestamp(
      int64_t timestamp_ms, const std::function<Result<int64_t>(PhyOffset, int32_t)>& store_time_of) const;

  // Removes every segment file; the queue is empty at offset 0 afterwards.
  Status destroy();

 private:
  Status append_entry(const DispatchRequest& request);
  Status create_first_file_at(QueueOffset offset);
  Result<ConsumeQueueEntry> read_entry(QueueOffset offset) const;
  // The first offset in [first file start, max_offset()) whose entry is real
  // and points at or past phy; max_offset() when none. Real entries are
  // ordered by commitlog offset, placeholders come first: a binary search.
  Result<QueueOffset> lower_bound_physical(PhyOffset phy) const;
  Status recompute_max_physical_end();
  Status update_min_offset(PhyOffset commitlog_min);
  QueueOffset first_file_start() const;

  env::Env& env_;
  std::string topic_;
  int32_t queue_id_;
  MappedFileQueue files_;
  QueueOffset min_offset_;
  PhyOffset max_physical_end_;
  bool loaded_ = false;
  bool needs_recovery_ = false;
  // When load() found no queue directory, the store root, consumequeue/ and
  // consumequeue/{topic}/: their entries for the directories below them may
  // be new (made by us, or by a sibling queue that has not flushed yet), so
  // they are synced before the first flush that reports ok. MappedFileQueue
  // syncs the queue directory itself.
  std::vector<std::string> dirs_to_sync_;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::store
