// crc32_ieee against zlib's crc32 (the reference java.util.zip.CRC32 agrees
// with): known vectors, every length 0..64 at every alignment, and chaining.
#include "broker/common/crc32.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <zlib.h>

#include <string>
#include <vector>

namespace mqlab::crc32_test {
namespace {

uint32_t zlib_crc(std::span<const uint8_t> bytes) {
  return static_cast<uint32_t>(crc32(0L, bytes.data(), static_cast<uInt>(bytes.size())));
}

TEST(Crc32, KnownVectors) {
  const std::string check = "123456789";
  EXPECT_EQ(crc32_ieee(0, {reinterpret_cast<const uint8_t*>(check.data()), check.size()}), 0xCBF43926u);
  EXPECT_EQ(crc32_ieee(0, {}), 0u);
}

TEST(Crc32, EveryLengthAndAlignmentMatchesZlib) {
  std::vector<uint8_t> data(128);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 37 + 11);
  for (size_t start = 0; start < 8; ++start) {
    for (size_t length = 0; length <= 64; ++length) {
      std::span<const uint8_t> bytes(data.data() + start, length);
      ASSERT_EQ(crc32_ieee(0, bytes), zlib_crc(bytes)) << "start " << start << " length " << length;
    }
  }
}

// Bodies of 64 bytes and more take the carry-less-multiply path on x86-64.
TEST(Crc32, LongInputsAtEveryAlignmentMatchZlib) {
  std::vector<uint8_t> data(2200);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 131 + (i >> 8) * 7 + 3);
  for (size_t start = 0; start < 16; ++start) {
    for (size_t length = 60; length <= 2100; length += (length < 300 ? 1 : 97)) {
      std::span<const uint8_t> bytes(data.data() + start, length);
      ASSERT_EQ(crc32_ieee(0, bytes), zlib_crc(bytes)) << "start " << start << " length " << length;
      ASSERT_EQ(crc32_ieee(0x12345678u, bytes),
                static_cast<uint32_t>(crc32(0x12345678uL, bytes.data(), static_cast<uInt>(bytes.size()))));
    }
  }
}

RC_GTEST_PROP(Crc32, MatchesZlibAndChains, (const std::vector<uint8_t>& a, const std::vector<uint8_t>& b)) {
  std::vector<uint8_t> joined = a;
  joined.insert(joined.end(), b.begin(), b.end());
  RC_ASSERT(crc32_ieee(0, joined) == zlib_crc(joined));
  RC_ASSERT(crc32_ieee(crc32_ieee(0, a), b) == crc32_ieee(0, joined));
}

}  // namespace
}  // namespace mqlab::crc32_test
