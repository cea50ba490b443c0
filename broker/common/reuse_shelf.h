// ReuseShelf: a few freed things of one kind (each owning its memory: a
// vector, a unique_ptr to a block), kept for the next user that needs one
// big enough instead of going back to the allocator and coming out again.
// A user keeps one per thread (thread_local), so nothing is shared: the
// decoded frames' text blocks (text_arena.h) and the frames' byte vectors
// (byte_buffer_pool.h), four of each a simulated message.
//
// kReuseFreedMemory turns every shelf off under AddressSanitizer, which
// then still catches a read of memory after its owner let it go.
//
// Invariants: items_[0, count_) hold the kept things, the one put last at
// the end until a take fills its hole with it; the rest are empty (Item()).
#pragma once

#include <array>
#include <cstddef>
#include <utility>

namespace mqlab {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kReuseFreedMemory = false;
#else
inline constexpr bool kReuseFreedMemory = true;
#endif

template <typename Item, size_t kSlots>
class ReuseShelf {
 public:
  // Moves into out a kept item for which fits(item) holds, searched from
  // the one put last (the most likely still in the cache lines): true.
  // False, out untouched, when none fits.
  template <typename Fits>
  bool take(Fits&& fits, Item& out) {
    for (size_t i = count_; i-- > 0;) {
      if (!fits(static_cast<const Item&>(items_[i]))) continue;
      out = std::move(items_[i]);
      --count_;
      if (i != count_) items_[i] = std::move(items_[count_]);
      items_[count_] = Item();
      return true;
    }
    return false;
  }

  // Keeps item (moved from) when there is room: true. False: the caller
  // still has it, to free.
  bool put(Item& item) {
    if (count_ == kSlots) return false;
    items_[count_++] = std::move(item);
    return true;
  }

 private:
  std::array<Item, kSlots> items_{};
  size_t count_ = 0;
};

}  // namespace mqlab
