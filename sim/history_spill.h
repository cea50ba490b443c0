// SpilledRecords: an append-mostly array of fixed-size records that keeps
// only its newest records in memory and the older ones in an unlinked
// temporary file, so what a long run records costs it disk, not memory.
//
// Why: a run records a SendRecord per message sent and a ReceiptRecord per
// receipt (sim/history.h), and the checker and the loss bound read them all
// at the end. In memory that was ~150 bytes per message: 1.5 GiB of peak RSS
// at 600 simulated minutes of the standard scenario. Here a run holds
// kTailRecords records (where completions and lookups land: a send completes
// within seconds) plus a block or two, whatever its length.
//
// It reads like a const std::deque: size(), operator[] (by value), and
// iteration (an input iterator that reads a block at a time); writes are
// push_back() and set() (a send's completion). A record written to the file
// is the same bytes read back, so nothing that reads it can tell where it
// lived: the checker's figures do not change. Records hold InternedNames
// (process-wide indexes), which is fine: the file lives and dies with the
// process that wrote it, and is never read by another.
//
// If no temporary file can be made (no writable TMPDIR or /tmp), the records
// stay in memory, as before: a run never fails for want of a spill file.
//
// Invariants: records [0, spilled_) are in the file, [spilled_, size()) in
// tail_; spilled_ only grows, by whole blocks; the file is written only by
// the process that created it (asserted: a forked child writing to its
// parent's file would corrupt the parent's records; sweeps fork before
// they build a world). Not thread-safe: the simulator is single-threaded.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "broker/common/assert.h"
#include "sim/record_ring.h"

namespace mqlab::sim {

// The unlinked temporary file behind SpilledRecords (history_spill.cc).
class SpillFile {
 public:
  SpillFile() = default;
  ~SpillFile();
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;
  SpillFile(SpillFile&& other) noexcept { *this = std::move(other); }
  SpillFile& operator=(SpillFile&& other) noexcept;

  // Whether the file is usable, making it on first call.
  bool ready();
  // Requires: ready(). Whole writes and reads, or an assertion: the file is
  // ours, so a short write is the disk filling up under us, which a run
  // cannot recover from (it would lose what it recorded).
  void write(uint64_t offset, const void* bytes, size_t size);
  void read(uint64_t offset, void* bytes, size_t size) const;
  uint64_t bytes_written() const { return end_; }

 private:
  int fd_ = -1;
  int owner_pid_ = 0;  // the process that created fd_
  bool failed_ = false;
  uint64_t end_ = 0;
};

template <typename Record>
class SpilledRecords {
  static_assert(std::is_trivially_copyable_v<Record>, "records are copied to and from a file as bytes");

 public:
  // Records kept in memory past the file; completions and lookups within it
  // cost nothing. 16 Ki sends are 80 s of the standard workload, and a send
  // completes (and is received) within seconds, unless a fault holds it.
  static constexpr size_t kTailRecords = size_t{1} << 14;
  // Records moved to the file at once, and read from it at once.
  static constexpr size_t kBlockRecords = size_t{1} << 12;

  SpilledRecords() = default;
  // For tests: a small tail, so a few records reach the file.
  explicit SpilledRecords(size_t tail_records) : tail_records_(tail_records), tail_(tail_records + kBlockRecords) {
    MQ_ASSERT(tail_records_ > 0);
  }
  SpilledRecords(const SpilledRecords&) = delete;
  SpilledRecords& operator=(const SpilledRecords&) = delete;
  SpilledRecords(SpilledRecords&&) noexcept = default;  // a History is returned by value (history_file.h)
  SpilledRecords& operator=(SpilledRecords&&) noexcept = default;

  size_t size() const { return spilled_ + tail_.size(); }
  bool empty() const { return size() == 0; }
  size_t spilled() const { return spilled_; }
  // Bytes held in memory now (tail, read cache and pass buffer), for tests
  // and benches.
  size_t memory_bytes() const {
    return (tail_.capacity() + cache_.size() + pass_block_.size()) * sizeof(Record);
  }

  void push_back(const Record& record) {
    tail_.push_back(record);
    if (tail_.size() >= tail_records_ + kBlockRecords) spill_block();
  }

  Record operator[](size_t index) const {
    MQ_ASSERT(index < size());
    if (index >= spilled_) return tail_[index - spilled_];
    return cached(index);
  }
  Record back() const { return (*this)[size() - 1]; }
  Record front() const { return (*this)[0]; }

  // Replaces record index (a send completing after it reached the file).
  void set(size_t index, const Record& record) {
    MQ_ASSERT(index < size());
    if (index >= spilled_) {
      tail_[index - spilled_] = record;
      return;
    }
    file_.write(uint64_t{index} * sizeof(Record), &record, sizeof(Record));
    if (index >= cache_start_ && index < cache_start_ + cache_.size()) cache_[index - cache_start_] = record;
  }

  // Copies records [from, from + count) of the file into out.
  void read_block(size_t from, size_t count, std::vector<Record>& out) const {
    MQ_ASSERT(from + count <= spilled_);
    out.resize(count);
    file_.read(uint64_t{from} * sizeof(Record), out.data(), count * sizeof(Record));
  }

  // Calls visit(std::span<const Record>) on every record in order, a
  // block at a time: the file's blocks through one buffer, then the tail.
  // What a pass over all of them should use: the iterator checks its block
  // per record, which cost a latency percentile pass (sim/checker_latency.cc)
  // several times the work it did with each value.
  // The buffer is the object's own (a pass runs once per figure, and a
  // fresh block of 400 KiB each time was memory the kernel zeroed anew);
  // visit may not start another pass over these records.
  template <typename Visit>
  void for_each_span(Visit&& visit) const {
    MQ_ASSERT(!in_pass_);
    in_pass_ = true;
    for (size_t start = 0; start < spilled_; start += kBlockRecords) {
      read_block(start, std::min(kBlockRecords, spilled_ - start), pass_block_);
      visit(std::span<const Record>(pass_block_));
    }
    in_pass_ = false;
    tail_.for_each_span(visit);
  }

  class const_iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Record;
    using difference_type = std::ptrdiff_t;
    using pointer = const Record*;
    using reference = const Record&;

    const_iterator() = default;
    const_iterator(const SpilledRecords* records, size_t index) : records_(records), index_(index) {}

    // Valid until the iterator moves on.
    const Record& operator*() const {
      MQ_ASSERT(records_ != nullptr && index_ < records_->size());
      if (index_ >= records_->spilled_) return records_->tail_[index_ - records_->spilled_];
      if (!block_ || index_ < block_start_ || index_ >= block_start_ + block_->size()) load();
      return (*block_)[index_ - block_start_];
    }
    const Record* operator->() const { return &**this; }
    const_iterator& operator++() {
      ++index_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++index_;
      return before;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.index_ == b.index_; }
    size_t index() const { return index_; }

   private:
    void load() const {
      const size_t start = index_ - index_ % kBlockRecords;
      // A new block when a copy of this iterator shares the old one (its
      // record must stay valid); else the old one's memory, read over.
      if (block_ == nullptr || block_.use_count() > 1) block_ = std::make_shared<std::vector<Record>>();
      records_->read_block(start, std::min(kBlockRecords, records_->spilled_ - start), *block_);
      block_start_ = start;
    }

    const SpilledRecords* records_ = nullptr;
    size_t index_ = 0;
    mutable std::shared_ptr<std::vector<Record>> block_;
    mutable size_t block_start_ = 0;
  };

  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size()); }

 private:
  void spill_block() {
    if (!file_.ready()) return;  // no temporary file: keep everything in memory
    MQ_ASSERT(tail_.size() > kBlockRecords);
    MQ_ASSERT(file_.bytes_written() == uint64_t{spilled_} * sizeof(Record));
    // Straight from the ring's one or two runs: a block-sized buffer in
    // between was 400 KiB allocated, zeroed and copied per spill.
    uint64_t offset = uint64_t{spilled_} * sizeof(Record);
    tail_.for_each_front_span(kBlockRecords, [this, &offset](std::span<const Record> run) {
      file_.write(offset, run.data(), run.size_bytes());
      offset += run.size_bytes();
    });
    MQ_ASSERT(offset == uint64_t{spilled_ + kBlockRecords} * sizeof(Record));
    tail_.pop_front(kBlockRecords);
    spilled_ += kBlockRecords;
  }

  // Record index of the file, through a one-block cache: lookups come in
  // runs (the liveness check walks seqs in order; receipts name recent sends).
  Record cached(size_t index) const {
    MQ_ASSERT(index < spilled_);
    if (cache_.empty() || index < cache_start_ || index >= cache_start_ + cache_.size()) {
      cache_start_ = index - index % kBlockRecords;
      read_block(cache_start_, std::min(kBlockRecords, spilled_ - cache_start_), cache_);
    }
    return cache_[index - cache_start_];
  }

  size_t tail_records_ = kTailRecords;
  mutable SpillFile file_;
  size_t spilled_ = 0;
  RecordRing<Record> tail_{kTailRecords + kBlockRecords};  // full when a block spills
  mutable std::vector<Record> cache_;
  mutable size_t cache_start_ = 0;
  mutable std::vector<Record> pass_block_;  // for_each_span's buffer
  mutable bool in_pass_ = false;
};

}  // namespace mqlab::sim
