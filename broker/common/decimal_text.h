// put_decimal, put_unsigned_decimal: an integer's decimal text, as
// std::to_chars writes it, into room the caller has (kMaxDecimalBytes);
// read_plain_decimal, the common case of reading one back.
//
// Why not std::to_chars: the remoting header writers put a score of numbers
// in every message's frames (opaque, queue ids and offsets, timestamps), and
// libstdc++'s to_chars first counts the digits in a loop of compares and
// divisions by 10,000, then writes them in a function call of its own:
// about 75 instructions a number, 2% of a simulator run. Here the count is
// a bit width, a multiply and one compare (the digits of 2^k are known to
// within one), and the digits go out two at a time from a table, inline.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "broker/common/assert.h"

namespace mqlab {

// The longest: "-9223372036854775808" and "18446744073709551615".
inline constexpr size_t kMaxDecimalBytes = 20;

namespace decimal_text_detail {

constexpr std::array<char, 200> make_digit_pairs() {
  std::array<char, 200> pairs{};
  for (int i = 0; i < 100; ++i) {
    pairs[2 * i] = static_cast<char>('0' + i / 10);
    pairs[2 * i + 1] = static_cast<char>('0' + i % 10);
  }
  return pairs;
}
// "00" "01" ... "99".
inline constexpr std::array<char, 200> kDigitPairs = make_digit_pairs();

constexpr std::array<uint64_t, 20> make_powers_of_ten() {
  std::array<uint64_t, 20> powers{};
  uint64_t power = 1;
  for (size_t i = 0; i < powers.size(); ++i) {
    powers[i] = power;
    if (i + 1 < powers.size()) power *= 10;
  }
  return powers;
}
inline constexpr std::array<uint64_t, 20> kPowersOfTen = make_powers_of_ten();  // 10^0 .. 10^19

// The number of decimal digits of value (1 for 0). log10(2) is about
// 1233 / 4096, so (bit width * 1233) >> 12 is the digit count less one, or
// that plus one when value is below the power of ten it names.
inline size_t decimal_digits(uint64_t value) {
  const auto bit_width = static_cast<unsigned>(64 - __builtin_clzll(value | 1));
  const unsigned estimate = (bit_width * 1233) >> 12;  // <= 19
  return estimate + 1 - (value < kPowersOfTen[estimate] ? 1 : 0) + (value == 0 ? 1 : 0);
}

}  // namespace decimal_text_detail

// Writes value's digits at out (decimal_digits(value) bytes); returns the end.
[[gnu::always_inline]] inline char* put_unsigned_decimal(char* out, uint64_t value) {
  using decimal_text_detail::kDigitPairs;
  if (value < 10) {
    *out = static_cast<char>('0' + value);
    return out + 1;
  }
  char* const end = out + decimal_text_detail::decimal_digits(value);
  char* p = end;
  while (value >= 100) {
    p -= 2;
    std::memcpy(p, kDigitPairs.data() + 2 * (value % 100), 2);
    value /= 100;
  }
  if (value >= 10) {
    p -= 2;
    std::memcpy(p, kDigitPairs.data() + 2 * value, 2);
  } else {
    *--p = static_cast<char>('0' + value);
  }
  MQ_ASSERT(p == out);
  return end;
}

// Writes value, with its '-' when negative; returns the end.
[[gnu::always_inline]] inline char* put_decimal(char* out, int64_t value) {
  // The magnitude in unsigned arithmetic: -INT64_MIN does not fit in int64_t.
  uint64_t magnitude = static_cast<uint64_t>(value);
  if (value < 0) {
    *out++ = '-';
    magnitude = 0 - magnitude;
  }
  return put_unsigned_decimal(out, magnitude);
}

// Reads -?[0-9]{1,18}, the text every client writes for a number, into
// out; false for anything else (empty, a '+', a stray byte, 19 digits or
// more), which the caller's full parser takes. Up to 18 digits cannot
// overflow, so they are summed without from_chars' checks, inline: the
// broker reads a dozen numbers from every send and pull header.
[[gnu::always_inline]] inline bool read_plain_decimal(std::string_view text, int64_t& out) {
  const bool negative = !text.empty() && text.front() == '-';
  const size_t first = negative ? 1 : 0;
  const size_t count = text.size() - first;
  if (count == 0 || count > 18) return false;
  int64_t sum = 0;
  for (size_t i = first; i < text.size(); ++i) {
    const auto digit = static_cast<unsigned char>(text[i] - '0');
    if (digit > 9) return false;
    sum = sum * 10 + digit;
  }
  out = negative ? -sum : sum;
  return true;
}

}  // namespace mqlab
