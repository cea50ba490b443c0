#include "broker/common/move_bytes.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace mqlab {
namespace {

std::string numbered(size_t size) {
  std::string text;
  for (size_t i = 0; i < size; ++i) text.push_back(static_cast<char>('!' + i % 90));
  return text;
}

TEST(MoveBytes, CopiesEachLengthAndLeavesTheRest) {
  // Every length through each word path and past them into memmove.
  for (size_t n = 0; n <= 70; ++n) {
    const std::string from = numbered(n);
    std::string to(n + 8, '#');
    move_bytes(to.data() + 4, from.data(), n);
    EXPECT_EQ(to.substr(0, 4), "####") << n;
    EXPECT_EQ(to.substr(4, n), from) << n;
    EXPECT_EQ(to.substr(4 + n), "####") << n;
  }
}

TEST(MoveBytes, MovesLeftOverItself) {
  // As memmove does, for every length and every shift left up to 40.
  for (size_t n = 0; n <= 70; ++n) {
    for (size_t shift = 0; shift <= 40; ++shift) {
      std::string moved = numbered(n + shift);
      std::string expected = moved;
      move_bytes(moved.data(), moved.data() + shift, n);
      std::memmove(expected.data(), expected.data() + shift, n);
      ASSERT_EQ(moved, expected) << n << " " << shift;
    }
  }
}

}  // namespace
}  // namespace mqlab
