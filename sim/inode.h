// Inode: one simulated file's bytes in two states: the page cache (what reads
// see, every write lands here at once) and the durable image (what a power cut
// leaves on the medium). A flush moves a snapshot of the cache to the image.
//
// Files are sparse: content is kept in 4 KiB pages, and a page that was never
// written reads as zeros and costs no memory, so a 1 GiB segment costs what
// was written. Pages are shared, copy-on-write, between the cache, the durable
// image and in-flight flush snapshots: a clean page costs its 4 KiB once, and
// a snapshot is a list of pointers, not a copy.
//
// Invariants:
//   - every cache page lies below size_bytes(), every durable page below
//     durable_size_bytes(), and bytes past either size inside the last page
//     are zero (so growing a file exposes zeros, as POSIX requires);
//   - a page is in dirty_ iff its cache version is newer than its durable one
//     (or it has no durable copy);
//   - versions only grow: an older snapshot never overwrites a newer one;
//   - block_count() == |[0, reserved_pages_) union cache page indexes|.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "broker/common/types.h"
#include "broker/env/random.h"

namespace mqlab::sim {

constexpr uint64_t kPageSizeBytes = 4096;
// Offsets beyond this are a caller's error (InvalidArgument), and keep every
// offset + length computation far from overflow.
constexpr uint64_t kMaxFileSizeBytes = 1ull << 44;  // 16 TiB, ext4's limit

using PageData = std::array<uint8_t, kPageSizeBytes>;

struct Page {
  std::shared_ptr<PageData> data;  // shared copy-on-write; never null
  uint64_t version = 0;            // the disk-wide write counter at its last change
};

// What one flush carries to the medium: the dirty pages and the size as they
// were when the flush was asked for.
struct InodeSnapshot {
  uint64_t size_bytes = 0;
  // The smallest size since the previous snapshot: a truncate that must reach
  // the medium before the pages do, or stale bytes would come back.
  uint64_t truncated_to_bytes = 0;
  std::vector<std::pair<uint64_t, Page>> pages;  // by ascending page index
  Nanos taken_at = 0;

  uint64_t bytes() const { return pages.size() * kPageSizeBytes; }
};

// What a power cut did to one inode's dirty sectors.
struct TearResult {
  uint64_t torn_sectors = 0;  // dirty sectors that reached the medium anyway
  uint64_t lost_bytes = 0;    // dirty bytes (whole sectors) that did not
};

class Inode {
 public:
  explicit Inode(uint64_t id) : id_(id) {}
  Inode(const Inode&) = delete;
  Inode& operator=(const Inode&) = delete;

  uint64_t id() const { return id_; }
  uint64_t size_bytes() const { return size_; }
  uint64_t durable_size_bytes() const { return durable_size_; }
  uint64_t block_count() const { return block_count_; }
  size_t dirty_page_count() const { return dirty_.size(); }
  // Something (pages, size, a truncate) is not yet on the medium, or a flush
  // of it is still in flight (a sync must then wait for that flush too).
  bool dirty() const { return changed() || in_flight_ > 0; }
  // When the inode last went from clean to dirty (Linux's dirtied_when).
  // Requires: dirty().
  Nanos dirtied_at() const;

  // Blocks a write or an allocate would add to block_count(); the caller
  // checks them against the device's free space before calling write().
  uint64_t new_blocks_for_write(uint64_t offset, uint64_t length) const;
  uint64_t new_blocks_for_allocate(uint64_t size) const;

  // Requires: offset + data.size() <= kMaxFileSizeBytes; version newer than
  // any before.
  void write(uint64_t offset, std::span<const uint8_t> data, uint64_t version, Nanos now);
  // Copies up to out.size() bytes at offset; fewer only at end of file.
  size_t read(uint64_t offset, std::span<uint8_t> out) const;
  // The indexes of the pages the cache holds (ascending): every byte outside
  // them reads as zero. What a sparse-aware copy reads.
  std::vector<uint64_t> cached_page_indexes() const;
  void truncate(uint64_t size, uint64_t version, Nanos now);
  // Reserves blocks for [0, size) and extends the size to it (zeros).
  void allocate(uint64_t size, Nanos now);

  // Captures what a flush asked for now must persist. Requires: dirty().
  InodeSnapshot snapshot(Nanos now);
  // The flush of snapshot reached the medium. Snapshots are applied in the
  // order they were taken. Requires: one is in flight.
  void apply(const InodeSnapshot& snapshot);

  // A power cut (in-flight snapshots are gone): each dirty sector below the durable size that differs from
  // the medium reaches it with probability torn_probability; then the cache
  // becomes the durable image. Requires: sector_size divides kPageSizeBytes.
  TearResult lose_power(uint32_t sector_size, double torn_probability, env::Random& random);

 private:
  static uint64_t page_count(uint64_t size) { return (size + kPageSizeBytes - 1) / kPageSizeBytes; }
  bool changed() const { return !dirty_.empty() || size_ != durable_size_ || truncated_to_ < durable_size_; }
  void mark_dirty(uint64_t index, Nanos now);
  void note_metadata_change(bool was_dirty, Nanos now);
  void recount_blocks();
  void check_invariants() const;

  const uint64_t id_;
  std::map<uint64_t, Page> cache_;    // page index -> current content
  std::map<uint64_t, Page> durable_;  // page index -> content on the medium
  std::set<uint64_t> dirty_;
  uint64_t size_ = 0;
  uint64_t durable_size_ = 0;
  uint64_t truncated_to_ = 0;  // min size since the last snapshot
  uint64_t reserved_pages_ = 0;
  uint64_t block_count_ = 0;
  uint32_t in_flight_ = 0;  // snapshots taken, not yet applied
  Nanos dirtied_at_ = 0;
};

}  // namespace mqlab::sim
