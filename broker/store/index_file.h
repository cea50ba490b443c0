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
// Invariants: the file on disk is the source of truth (the header is cached
// and written through; slots and entries are read from the file); every
// valid entry number is in [1, indexCount); a chain strictly decreases, which
// lookups check, so a damaged file ends a walk instead of looping. Keys are
// hashed, not stored: a lookup may return offsets of other keys with the
// same hash, and the caller compares the message's keys (RocketMQ's client
// does the same).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
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

  // Adds key -> phy_offset. Requires: !is_full(). On error the header is
  // unchanged, and a slot already pointing at the unfinished entry is
  // ignored by readers (its number is not below indexCount).
  Status put_key(std::string_view key, PhyOffset phy_offset, int64_t store_timestamp_ms);

  // Whether [begin_ms, end_ms] overlaps this file's [begin, end] timestamps.
  bool is_time_matched(int64_t begin_ms, int64_t end_ms) const;
  // Appends to out, newest first, the offsets of entries whose hash equals
  // key's and whose time lies in [begin_ms, end_ms], until out holds max_num
  // offsets; an offset already in out is not added again. Entry times are
  // whole seconds after beginTimestamp (RocketMQ's precision).
  Status select_phy_offsets(std::string_view key, size_t max_num, int64_t begin_ms, int64_t end_ms,
                            std::vector<PhyOffset>& out) const;

  bool has_unflushed_writes() const { return writes_ > flushed_writes_; }
  // Makes every write so far durable (not the directory entry: the
  // IndexService syncs the directory). done runs on the executor.
  void flush(std::function<void(Status)> done);
  // Removes the file from its directory.
  Status destroy(env::FileSystem& files);

 private:
  int64_t slot_position(int32_t key_hash) const;
  int64_t entry_position(int32_t entry_number) const;
  Result<int32_t> read_slot(int64_t position) const;

  std::shared_ptr<env::File> file_;
  int32_t hash_slot_num_;
  int32_t index_num_;
  IndexHeader header_;
  uint64_t writes_ = 0;          // pwrites issued
  uint64_t flushed_writes_ = 0;  // pwrites covered by a completed sync
};

}  // namespace mqlab::store
