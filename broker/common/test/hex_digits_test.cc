#include "broker/common/hex_digits.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <optional>
#include <string>

namespace mqlab {
namespace {

// A digit at a time, as hex_digit_value reads them.
std::optional<uint64_t> expected_value(const std::string& text) {
  uint64_t value = 0;
  for (const char c : text) {
    const int digit = hex_digit_value(c);
    if (digit < 0) return std::nullopt;
    value = (value << 4) | static_cast<uint64_t>(digit);
  }
  return value;
}

TEST(HexDigits, DigitValues) {
  EXPECT_EQ(hex_digit_value('0'), 0);
  EXPECT_EQ(hex_digit_value('9'), 9);
  EXPECT_EQ(hex_digit_value('a'), 10);
  EXPECT_EQ(hex_digit_value('F'), 15);
  for (const char c : {'g', 'G', '/', ':', '@', '`', ' ', '\0', '\x80', '\xC1', '\xE1'}) {
    EXPECT_EQ(hex_digit_value(c), -1);
  }
}

TEST(HexDigits, SixteenDigitsOfAMessageId) {
  EXPECT_EQ(read_16_hex_digits("0000000000001000"), 0x1000u);
  EXPECT_EQ(read_16_hex_digits("FFFFFFFFFFFFFFFF"), ~uint64_t{0});
  EXPECT_EQ(read_16_hex_digits("0123456789abcdef"), 0x0123456789ABCDEFu);
  EXPECT_EQ(read_16_hex_digits("0123456789ABCDEF"), 0x0123456789ABCDEFu);
  EXPECT_EQ(read_16_hex_digits("0123456789ABCDEG"), std::nullopt);
  EXPECT_EQ(read_16_hex_digits("G123456789ABCDEF"), std::nullopt);
}

// Every byte value, at every one of the sixteen places, among digits.
TEST(HexDigits, SixteenDigitsRefuseEveryOtherByteAnywhere) {
  for (int byte = 0; byte < 256; ++byte) {
    for (size_t place = 0; place < 16; ++place) {
      std::string text = "0123456789abcdef";
      text[place] = static_cast<char>(byte);
      ASSERT_EQ(read_16_hex_digits(text.data()), expected_value(text)) << "byte " << byte << " at " << place;
    }
  }
}

RC_GTEST_PROP(HexDigits, SixteenDigitsAsOneAtATime, ()) {
  const std::string text = *rc::gen::container<std::string>(
      16, rc::gen::oneOf(rc::gen::element('0', '5', '9', 'a', 'c', 'f', 'A', 'D', 'F'), rc::gen::arbitrary<char>()));
  RC_ASSERT(read_16_hex_digits(text.data()) == expected_value(text));
}

}  // namespace
}  // namespace mqlab
