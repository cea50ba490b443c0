// SharedShelf<T, kMaxKept, kReset>: the shared Ts one owner has handed out,
// taken back for their room once nobody else holds them.
//
// A pulled message (client::MessageExt) or a send in flight
// (client::Producer's SendContext) is made shared, passed along the
// callbacks of its path, and freed when the last of them lets go: each
// cost an allocation for itself and its count, and more for the strings
// and vectors it fills (a msgId or UNIQ_KEY is 32 hex digits, past
// std::string's inline room; a body; properties). A consumer or producer
// does little else per message.
//
// The shelf keeps the last kMaxKept it handed out, oldest first. Asked for
// one, it looks at the oldest: if the shelf's is the only reference left
// (use_count() == 1), nobody can reach it any more (the types kept here
// are never given out as weak_ptrs), so it is handed out again after
// kReset(T&) has put it back to a default T (keeping what room it likes).
// Otherwise a new T is made, and when the shelf is full the oldest, still
// in use, leaves it: its holders free it as before. Things are let go
// about in the order they were handed out, so the oldest is the likeliest
// free.
//
// Thread safety: one thread takes (the owner's); other threads may still
// hold and release what was handed out. A use count of one read here is
// final (only an owner can copy a shared_ptr, and the shelf is the only
// one left); the acquire fence after reading it orders the other threads'
// last reads of the object before kReset's writes.
//
// Invariant: kept_ holds at most kMaxKept, in the order they were last
// handed out starting at oldest_ and wrapping around (a ring).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

#include "broker/common/assert.h"

namespace mqlab {

template <typename T, size_t kMaxKept, void (*kReset)(T&)>
class SharedShelf {
  static_assert(kMaxKept > 0);

 public:
  static constexpr size_t kCapacity = kMaxKept;

  // A default T: a kept one nobody else holds, reset, or a new one.
  std::shared_ptr<T> take() {
    MQ_ASSERT(kept_.size() <= kMaxKept);
    MQ_ASSERT(kept_.empty() ? oldest_ == 0 : oldest_ < kept_.size());
    if (!kept_.empty() && kept_[oldest_].use_count() == 1) {
      std::atomic_thread_fence(std::memory_order_acquire);  // the file comment
      std::shared_ptr<T> again = kept_[oldest_];
      kReset(*again);
      advance_oldest();  // it is the newest now
      return again;
    }
    auto made = std::make_shared<T>();
    if (kept_.size() < kMaxKept) {
      // The newest goes just before the oldest, which moves up one.
      kept_.insert(kept_.begin() + static_cast<std::ptrdiff_t>(oldest_), made);
    } else {
      kept_[oldest_] = made;  // the oldest, still held, leaves the shelf
    }
    advance_oldest();
    return made;
  }

  size_t kept() const { return kept_.size(); }

 private:
  // One step around the ring, without a division (three a message).
  void advance_oldest() {
    if (++oldest_ == kept_.size()) oldest_ = 0;
  }

  std::vector<std::shared_ptr<T>> kept_;
  size_t oldest_ = 0;
};

}  // namespace mqlab
