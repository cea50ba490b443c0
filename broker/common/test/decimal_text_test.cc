// put_decimal writes what std::to_chars writes, for every int64 and uint64:
// at random, and at each power of ten and its neighbours, where the digit
// count changes and its estimate from the bit width is off by one.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "broker/common/decimal_text.h"

namespace mqlab::decimal_text_test {
namespace {

template <typename Int>
std::string expected_text(Int value) {
  char buffer[32];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  EXPECT_EQ(error, std::errc());
  return std::string(buffer, end);
}

std::string written(int64_t value) {
  char buffer[kMaxDecimalBytes + 8];
  return std::string(buffer, put_decimal(buffer, value));
}

std::string written_unsigned(uint64_t value) {
  char buffer[kMaxDecimalBytes + 8];
  return std::string(buffer, put_unsigned_decimal(buffer, value));
}

// Powers of ten, of two, their neighbours, and the ends of the ranges.
std::vector<uint64_t> edges() {
  std::vector<uint64_t> values = {0, std::numeric_limits<uint64_t>::max()};
  for (uint64_t power = 1;; power *= 10) {
    values.insert(values.end(), {power - 1, power, power + 1});
    if (power > std::numeric_limits<uint64_t>::max() / 10) break;
  }
  for (int bit = 0; bit < 64; ++bit) {
    const uint64_t power = uint64_t{1} << bit;
    values.insert(values.end(), {power - 1, power, power + 1});
  }
  return values;
}

TEST(DecimalText, EdgesAsToChars) {
  for (const uint64_t value : edges()) {
    EXPECT_EQ(written_unsigned(value), expected_text(value)) << value;
    const auto as_signed = static_cast<int64_t>(value);
    EXPECT_EQ(written(as_signed), expected_text(as_signed)) << as_signed;
    const auto negated = static_cast<int64_t>(0 - value);  // in unsigned arithmetic: INT64_MIN stays itself
    EXPECT_EQ(written(negated), expected_text(negated)) << negated;
  }
  EXPECT_EQ(written(std::numeric_limits<int64_t>::min()), "-9223372036854775808");
  EXPECT_EQ(written_unsigned(std::numeric_limits<uint64_t>::max()).size(), kMaxDecimalBytes);
}

TEST(DecimalText, DigitCountsAtEveryPowerOfTen) {
  uint64_t power = 1;
  for (size_t digits = 1; digits <= 20; ++digits) {
    EXPECT_EQ(decimal_text_detail::decimal_digits(power), digits) << power;
    if (digits > 1) {
      EXPECT_EQ(decimal_text_detail::decimal_digits(power - 1), digits - 1) << power - 1;
    }
    if (digits < 20) power *= 10;
  }
  EXPECT_EQ(decimal_text_detail::decimal_digits(0), 1u);
}

RC_GTEST_PROP(DecimalText, SignedAsToChars, (int64_t value)) { RC_ASSERT(written(value) == expected_text(value)); }

RC_GTEST_PROP(DecimalText, UnsignedAsToChars, (uint64_t value)) {
  RC_ASSERT(written_unsigned(value) == expected_text(value));
}

// Numbers of every length, which uniform 64-bit draws almost never give.
RC_GTEST_PROP(DecimalText, EveryLengthAsToChars, ()) {
  const int digits = *rc::gen::inRange(1, 20);
  uint64_t value = 0;
  for (int i = 0; i < digits; ++i) value = value * 10 + *rc::gen::inRange<uint64_t>(0, 10);
  RC_ASSERT(written_unsigned(value) == expected_text(value));
  const auto as_signed = static_cast<int64_t>(value);
  RC_ASSERT(written(as_signed) == expected_text(as_signed));
}

}  // namespace
}  // namespace mqlab::decimal_text_test
