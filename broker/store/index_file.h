// IndexFile: one file of RocketMQ's message-key index (IndexFile.java,
// IndexHeader.java), a hash table on disk from `topic#key` to the CommitLog
// offsets of the messages carrying that key. Named by its creation time
// (yyyyMMddHHmmssSSS, UTC) under {storePathRootDir}/index/. All integers
// big-endian.
//
// | region  | at                        | bytes | field                              |
// |---------|---------------------------|-------|------------------------------------|
// | header  | 0                         | 8     | beginTimestamp (ms, first entry)   |
// |         | 8                         | 8     | endTimestamp (ms, newest entry)    |
// |         | 16                        | 8     | beginPhyOffset (first entry)       |
// |         | 24                        | 8     | endPhyOffset (newest entry)        |
// |         | 32                        | 4     | hashSlotCount (slots in use)       |
// |         | 36                        | 4     | indexCount (next entry number, >=1)|
// | slot i  | 40 + 4i                   | 4     | newest entry number with hash%slots == i; 0 = empty |
// | entry k | 40 + 4 x slots + 20k      | 4     | keyHash = abs(java_string_hash(key)), INT_MIN -> 0 |
// |         |                           | 8     | commitlog offset                   |
// |         |                           | 4     | timeDiff: seconds since beginTimestamp, clamped to [0, INT32_MAX] |
// |         |                           | 4     | previous entry number in the slot's chain; 0 = end |
//
// Size = 40 + maxHashSlotNum x 4 + maxIndexNum x 20. Entry 0 is never used,
// so a file holds maxIndexNum - 1 entries and is full at indexCount ==
// maxIndexNum. A slot chain runs from newer to older entries.
//
// Write-behind (RocketMQ maps the file, so a put costs it memory copies; a
// pwrite per field cost us three syscalls and a pread per key): the file
// being written keeps its slot table as a cache of 4 KiB pages, loaded on
// first touch (never read at all for a file created here, whose slots start
// zero), and buffers new entries. Entries reach the file in runs of whole
// pages' worth as they fill; dirty slot pages and the header only at
// write_back(), which IndexService calls before every sync (a roll, the
// start-up and shutdown flushes). write_back() writes entries, then slots,
// then the header, so the header on disk never counts an entry or names a
// slot value whose bytes are not written before it: a file read back after
// a kill -9 is the state of its last write_back(), and recovery rebuilds the
// rest from the CommitLog (index_service.h). A full file drops its caches
// once written back: only the newest file holds memory, at most its slot
// table (maxHashSlotNum x 4 bytes, 20 MB at RocketMQ's defaults, touched
// pages only) plus the entries waiting for the next run.
//
// Invariants: the file on disk plus this object's buffers are the index
// (queries read through both); every valid entry number is in [1,
// indexCount); a chain strictly decreases, which lookups check, so a
// damaged file ends a walk instead of looping. Keys are hashed, not stored:
// a lookup may return offsets of other keys with the same hash, and the
// caller compares the message's keys (RocketMQ's client does the same).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/status.h"
#include "broker/common/types.h"
#include "broker/env/env.h"

namespace mqlab::store {

constexpr int64_t kIndexHeaderSize = 40;
constexpr int64_t kIndexSlotSize = 4;
constexpr int64_t kIndexEntrySize = 20;
// The unit of write-behind: the slot cache's page, and the run of entries
// written at once (whole entries: 204 of them, 4080 bytes).
constexpr int64_t kIndexPageSize = 4096;
static_assert(kIndexHeaderSize == 8 + 8 + 8 + 8 + 4 + 4);
static_assert(kIndexEntrySize == 4 + 8 + 4 + 4);  // hash, offset, timeDiff, prev

struct IndexHeader {
  int64_t begin_timestamp_ms = 0;
  int64_t end_timestamp_ms = 0;
  PhyOffset begin_phy_offset;
  PhyOffset end_phy_offset;
  int32_t hash_slot_count = 0;
  int32_t index_count = 1;
  bool operator==(const IndexHeader&) const = default;
};

// abs(String.hashCode()) with Integer.MIN_VALUE mapped to 0, as RocketMQ's
// indexKeyHashMethod.
int32_t index_key_hash(std::string_view key);

class IndexFile : public std::enable_shared_from_this<IndexFile> {
 public:
  static int64_t file_size_bytes(int32_t hash_slot_num, int32_t index_num);
  // "20240131235959123" for a wall time in ms since the epoch (UTC).
  static std::string file_name(int64_t wall_ms);
  // The time a 17-digit name stands for; nullopt for any other name.
  static std::optional<int64_t> parse_file_name(std::string_view name);

  // Creates a new file (failing if path exists) whose header carries the
  // previous file's end, as RocketMQ's constructor does, so that a
  // re-dispatch check against an empty new file still works.
  static Result<std::shared_ptr<IndexFile>> create(env::Env& env, std::string path, int32_t hash_slot_num,
                                                   int32_t index_num, PhyOffset end_phy_offset,
                                                   int64_t end_timestamp_ms);
  // Opens an existing file and reads its header. Corruption when its size or
  // indexCount does not fit the configured layout.
  static Result<std::shared_ptr<IndexFile>> open(env::Env& env, std::string path, int32_t hash_slot_num,
                                                 int32_t index_num);

  IndexFile(std::shared_ptr<env::File> file, int32_t hash_slot_num, int32_t index_num, IndexHeader header);

  const std::string& path() const { return file_->path(); }
  const IndexHeader& header() const { return header_; }
  bool is_full() const { return header_.index_count >= index_num_; }

  // Adds key -> phy_offset, in memory: queries see it at once; the bytes
  // reach the file with the next run of entries or write_back(). A failed
  // write of a run keeps the entries buffered (write_error() says why) and
  // is retried. Errors, leaving the index unchanged: the slot's page could
  // not be read, or the entries waiting for a failing disk reached
  // kMaxPendingEntryBytes (the put is refused rather than memory growing
  // without bound). Requires: !is_full().
  Status put_key(std::string_view key, PhyOffset phy_offset, int64_t store_timestamp_ms);

  // Whether [begin_ms, end_ms] overlaps this file's [begin, end] timestamps.
  bool is_time_matched(int64_t begin_ms, int64_t end_ms) const;
  // Appends to out, newest first, the offsets of entries whose hash equals
  // key's and whose time lies in [begin_ms, end_ms], until out holds max_num
  // offsets; an offset already in out is not added again. Entry times are
  // whole seconds after beginTimestamp (RocketMQ's precision).
  Status select_phy_offsets(std::string_view key, size_t max_num, int64_t begin_ms, int64_t end_ms,
                            std::vector<PhyOffset>& out) const;

  // Buffered entries, dirty slot pages or a header not yet written.
  bool has_buffered_writes() const;
  bool has_unflushed_writes() const { return has_buffered_writes() || writes_ > flushed_writes_; }
  // Writes every buffered byte: entries, then dirty slot pages, then the
  // header. On error, what was not written stays buffered, and the header is
  // written only after everything it counts. A full file then frees its
  // caches.
  Status write_back();
  // The last write-behind write that failed and has not been retried with
  // success since; ok otherwise.
  const Status& write_error() const { return write_error_; }
  // Makes every write so far durable (not the directory entry: the
  // IndexService syncs the directory). done runs on the executor.
  // Requires: !has_buffered_writes() (write_back() succeeded).
  void flush(std::function<void(Status)> done);
  // Memory held for write-behind: cached slot pages and waiting entries.
  size_t buffered_bytes() const;
  // Removes the file from its directory.
  Status destroy(env::FileSystem& files);

 private:
  int64_t slot_position(int32_t key_hash) const;
  int64_t entry_position(int32_t entry_number) const;
  Result<int32_t> read_slot(int64_t position) const;
  Status read_entry(int32_t entry_number, std::span<uint8_t> out) const;

  // One 4 KiB page of the file, cached for its slot bytes (big-endian, as
  // on disk); bytes of the page outside the slot table are unused.
  struct SlotPage {
    std::array<uint8_t, kIndexPageSize> bytes{};
    bool dirty = false;
  };
  Result<SlotPage*> slot_page_for_write(int64_t position);
  const SlotPage* cached_slot_page(int64_t position) const;
  int64_t slots_end() const { return kIndexHeaderSize + int64_t{hash_slot_num_} * kIndexSlotSize; }
  Status write_entries();
  Status write_slot_pages();
  Status write_header();
  Status pwrite(int64_t position, std::span<const uint8_t> bytes);
  void note_write_result(const Status& status);

  std::shared_ptr<env::File> file_;
  int32_t hash_slot_num_;
  int32_t index_num_;
  IndexHeader header_;
  IndexHeader written_header_;   // what the file's header says
  uint64_t writes_ = 0;          // pwrites issued
  uint64_t flushed_writes_ = 0;  // pwrites covered by a completed sync
  // Set by create(): a slot page never cached holds zeros on disk, so the
  // first touch needs no read.
  bool slots_start_zero_ = false;
  // By page number (position / kIndexPageSize); empty until the first put
  // and again once a full file is written back.
  std::vector<std::unique_ptr<SlotPage>> slot_pages_;
  size_t cached_pages_ = 0;
  size_t dirty_pages_ = 0;
  // Entries [pending_first_entry_, header_.index_count), as on disk.
  std::vector<uint8_t> pending_entries_;
  int32_t pending_first_entry_ = 1;
  Status write_error_;
};

// Entries waiting for a disk that refuses writes: beyond this a put is
// refused (about 52k keys).
constexpr size_t kMaxPendingEntryBytes = size_t{1} << 20;

}  // namespace mqlab::store
