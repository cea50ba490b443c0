// The frame buffers' pool: a vector given back serves the next take that
// fits (its room, not its bytes), big ones and ones past the pool's size go
// back to the allocator, and what a take returns is always empty with room
// enough. Under AddressSanitizer nothing is kept (checked as such).
#include "broker/common/byte_buffer_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace mqlab::byte_buffer_pool_test {
namespace {

TEST(ByteBufferPool, AGivenBackBufferServesTheNextTakeThatFits) {
  std::vector<uint8_t> frame = take_byte_buffer(300);
  EXPECT_TRUE(frame.empty());
  EXPECT_GE(frame.capacity(), 300u);
  frame.assign(300, 0x7f);
  const uint8_t* const room = frame.data();
  give_back_byte_buffer(std::move(frame));
  EXPECT_TRUE(frame.empty());  // NOLINT(bugprone-use-after-move): left empty by contract
  std::vector<uint8_t> next = take_byte_buffer(200);
  EXPECT_TRUE(next.empty()) << "a kept buffer comes back empty, not with the last frame's bytes";
  EXPECT_GE(next.capacity(), 200u);
  if (kKeptByteBuffers > 0) {
    EXPECT_EQ(next.data(), room);
  } else {
    EXPECT_NE(next.data(), room);
  }
  // Too small for a bigger take: that one gets new room.
  give_back_byte_buffer(std::move(next));
  std::vector<uint8_t> bigger = take_byte_buffer(10'000);
  EXPECT_GE(bigger.capacity(), 10'000u);
  EXPECT_NE(bigger.data(), room);
  // And the small one is still there for a small take.
  std::vector<uint8_t> small = take_byte_buffer(100);
  if (kKeptByteBuffers > 0) {
    EXPECT_EQ(small.data(), room);
  }
}

TEST(ByteBufferPool, BigBuffersAndOnesPastThePoolGoBackToTheAllocator) {
  std::vector<uint8_t> huge = take_byte_buffer(kKeptByteBufferBytes + 1);
  const uint8_t* const huge_room = huge.data();
  give_back_byte_buffer(std::move(huge));
  // Not kept: a small take, which any kept buffer would serve, does not get
  // it (a take as big could get its address again from the allocator).
  std::vector<uint8_t> small = take_byte_buffer(16);
  EXPECT_NE(small.data(), huge_room);
  EXPECT_LE(small.capacity(), kKeptByteBufferBytes);
  // More given back than kept: the rest are freed, and takes still work.
  std::vector<std::vector<uint8_t>> many;
  for (size_t i = 0; i < 3 * kKeptByteBuffers + 3; ++i) many.push_back(take_byte_buffer(64));
  for (std::vector<uint8_t>& buffer : many) give_back_byte_buffer(std::move(buffer));
  for (size_t i = 0; i < 3 * kKeptByteBuffers + 3; ++i) {
    std::vector<uint8_t> taken = take_byte_buffer(64);
    EXPECT_TRUE(taken.empty());
    EXPECT_GE(taken.capacity(), 64u);
  }
}

}  // namespace
}  // namespace mqlab::byte_buffer_pool_test
