// RecordRing: a FIFO of trivially copyable records with random access, in
// one array used as a ring: SpilledRecords' in-memory tail.
//
// Why not std::deque: a History indexes its tail for every send, completion
// and receipt (a receipt looks up its send's times, sets two of them and
// appends itself), and a deque's operator[] divides the index into a block
// and a place in it through a map of blocks: about 15 instructions a look,
// and a few percent of a simulator run. Here a look is an add and a
// compare; whole blocks leave from the front (SpilledRecords writes them to
// its file) by moving the head.
//
// Invariants: size_ <= capacity (slots_.size()); head_ < capacity when the
// capacity is non-zero; record i (0 = the oldest) is at slot
// (head_ + i) mod capacity.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "broker/common/assert.h"

namespace mqlab::sim {

template <typename Record>
class RecordRing {
  static_assert(std::is_trivially_copyable_v<Record>, "records move between slots as bytes");

 public:
  RecordRing() = default;
  // Grows up to max_before_doubling slots in doublings that stop there (the
  // most a SpilledRecords' tail holds when it can spill), and by doubling
  // past it (a tail that cannot spill keeps everything).
  explicit RecordRing(size_t max_before_doubling) : max_before_doubling_(max_before_doubling) {
    MQ_ASSERT(max_before_doubling_ > 0);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return slots_.size(); }

  const Record& operator[](size_t index) const { return slots_[slot_of(index)]; }
  Record& operator[](size_t index) { return slots_[slot_of(index)]; }

  void push_back(const Record& record) {
    if (size_ == slots_.size()) grow();
    slots_[slot_of_unchecked(size_)] = record;
    ++size_;
  }

  // Copies the count oldest records to out, oldest first.
  void copy_front(size_t count, Record* out) const {
    MQ_ASSERT(count <= size_);
    if (count == 0) return;
    const size_t first_run = std::min(count, slots_.size() - head_);
    std::memcpy(out, slots_.data() + head_, first_run * sizeof(Record));
    std::memcpy(out + first_run, slots_.data(), (count - first_run) * sizeof(Record));
  }

  // Calls visit(std::span<const Record>) on the records oldest first, in
  // the one or two runs of slots that hold them: a scan without the index
  // arithmetic of operator[] per record.
  template <typename Visit>
  void for_each_span(Visit&& visit) const {
    for_each_front_span(size_, visit);
  }

  // The same for the count oldest records only.
  template <typename Visit>
  void for_each_front_span(size_t count, Visit&& visit) const {
    MQ_ASSERT(count <= size_);
    if (count == 0) return;
    const size_t first_run = std::min(count, slots_.size() - head_);
    visit(std::span<const Record>(slots_.data() + head_, first_run));
    if (first_run < count) visit(std::span<const Record>(slots_.data(), count - first_run));
  }

  // Drops the count oldest records.
  void pop_front(size_t count) {
    MQ_ASSERT(count <= size_);
    size_ -= count;
    head_ = size_ == 0 ? 0 : slot_of_unchecked(count);
  }

 private:
  size_t slot_of(size_t index) const {
    MQ_ASSERT(index < size_);
    return slot_of_unchecked(index);
  }
  // Requires: index <= size_ < capacity, or index < size_.
  size_t slot_of_unchecked(size_t index) const {
    const size_t slot = head_ + index;
    return slot < slots_.size() ? slot : slot - slots_.size();
  }

  void grow() {
    const size_t capacity = slots_.size();
    size_t grown = std::max<size_t>(capacity * 2, kFirstCapacity);
    if (capacity < max_before_doubling_) grown = std::min(grown, max_before_doubling_);
    MQ_ASSERT(grown > capacity);
    std::vector<Record> slots(grown);
    copy_front(size_, slots.data());
    slots_.swap(slots);
    head_ = 0;
  }

  static constexpr size_t kFirstCapacity = 16;

  size_t max_before_doubling_ = kFirstCapacity;
  std::vector<Record> slots_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace mqlab::sim
