// Byte vectors kept for their room, a few per thread, for the frames a
// message's path writes: a send, its answer, a pull and its answer, four
// a simulated message, each a vector allocated by its writer and freed once
// the receiving end had read it. The network that delivers a frame gives
// its vector back (give_back_byte_buffer); the next writer takes it
// (take_byte_buffer) instead of allocating.
//
// Vectors are interchangeable memory, so which thread gives one back does
// not matter; a thread keeps at most kKeptByteBuffers, each of at most
// kKeptByteBufferBytes of room (a pulled batch's frame may be megabytes:
// that one goes back to the allocator). None are kept under
// AddressSanitizer, which then still catches a read of a frame after its
// delivery.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "broker/common/assert.h"
#include "broker/common/reuse_shelf.h"

namespace mqlab {

// None under AddressSanitizer (reuse_shelf.h).
inline constexpr size_t kKeptByteBuffers = kReuseFreedMemory ? 8 : 0;
inline constexpr size_t kKeptByteBufferBytes = 64 * 1024;

namespace byte_buffer_pool_detail {
// This thread's kept vectors, each empty, with room. In the header, with
// the fast paths below: a take and a give back per frame, two million a
// simulator run, each a call that found the shelf through another call.
inline thread_local ReuseShelf<std::vector<uint8_t>, kKeptByteBuffers> kept;
// A new vector for a take that found none kept (byte_buffer_pool.cc).
std::vector<uint8_t> new_byte_buffer(size_t capacity);
}  // namespace byte_buffer_pool_detail

// An empty vector with room for at least capacity bytes: a kept one when
// one is big enough (searched from the one given back last), else a new one
// (of exactly capacity bytes past kKeptByteBufferBytes, which is never kept).
inline std::vector<uint8_t> take_byte_buffer(size_t capacity) {
  std::vector<uint8_t> buffer;
  if (byte_buffer_pool_detail::kept.take(
          [capacity](const std::vector<uint8_t>& kept) { return kept.capacity() >= capacity; }, buffer)) {
    MQ_ASSERT(buffer.empty());
    return buffer;
  }
  return byte_buffer_pool_detail::new_byte_buffer(capacity);
}

// Keeps buffer's room for the next take_byte_buffer when it is small
// enough and there is space; frees it otherwise. buffer is left empty.
inline void give_back_byte_buffer(std::vector<uint8_t>&& buffer) {
  buffer.clear();
  if (buffer.capacity() == 0 || buffer.capacity() > kKeptByteBufferBytes ||
      !byte_buffer_pool_detail::kept.put(buffer)) {
    std::vector<uint8_t>().swap(buffer);  // not kept: freed now
    return;
  }
  buffer.clear();  // moved from: empty, as the header says, whatever the library leaves
}

}  // namespace mqlab
