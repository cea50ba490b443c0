// hex_digit_value: a hexadecimal digit's value (either case), or -1, from a
// table rather than branches: message ids are written and read for every
// message (a client names each pulled message by one; the checker reads
// each acknowledged one back), and a send's properties travel as JSON
// escapes (\u0001) whose four digits every header read decodes.
// read_16_hex_digits: sixteen digits at once, a message id's offset.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mqlab {

constexpr std::array<int8_t, 256> make_hex_digit_values() {
  std::array<int8_t, 256> values{};
  for (size_t c = 0; c < 256; ++c) {
    if (c >= '0' && c <= '9') {
      values[c] = static_cast<int8_t>(c - '0');
    } else if (c >= 'A' && c <= 'F') {
      values[c] = static_cast<int8_t>(c - 'A' + 10);
    } else if (c >= 'a' && c <= 'f') {
      values[c] = static_cast<int8_t>(c - 'a' + 10);  // Java's UtilAll.string2bytes upper-cases first
    } else {
      values[c] = -1;
    }
  }
  return values;
}
inline constexpr std::array<int8_t, 256> kHexDigitValues = make_hex_digit_values();

inline int hex_digit_value(char c) { return kHexDigitValues[static_cast<unsigned char>(c)]; }

// The 16 hexadecimal digits at p (either case) as a number, the first the
// most significant; nullopt when one of them is not a digit. The simulator
// reads every acknowledged message's id back twice (its offset, for the
// loss bound and the retention check): a digit at a time through the
// table, that was 210 instructions an id, about 0.7% of a run; with SSE2
// the sixteen are checked and combined in one register.
inline std::optional<uint64_t> read_16_hex_digits(const char* p) {
#if defined(__SSE2__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  const __m128i text = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  // Signed compares: a byte of 0x80 or more is negative, below '0' and 'a'.
  const __m128i lower = _mm_or_si128(text, _mm_set1_epi8(0x20));  // 'A'-'F' as 'a'-'f'; no other byte lands there
  const __m128i digit =
      _mm_and_si128(_mm_cmpgt_epi8(text, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(text, _mm_set1_epi8('9' + 1)));
  const __m128i letter =
      _mm_and_si128(_mm_cmpgt_epi8(lower, _mm_set1_epi8('a' - 1)), _mm_cmplt_epi8(lower, _mm_set1_epi8('f' + 1)));
  if (_mm_movemask_epi8(_mm_or_si128(digit, letter)) != 0xFFFF) return std::nullopt;
  const __m128i values = _mm_or_si128(_mm_and_si128(digit, _mm_sub_epi8(text, _mm_set1_epi8('0'))),
                                      _mm_andnot_si128(digit, _mm_sub_epi8(lower, _mm_set1_epi8('a' - 10))));
  // Each 16-bit lane holds a pair of digits, the first in its low byte:
  // first * 16 + second, then the eight bytes packed in text order.
  const __m128i pairs =
      _mm_or_si128(_mm_slli_epi16(_mm_and_si128(values, _mm_set1_epi16(0x00FF)), 4), _mm_srli_epi16(values, 8));
  const __m128i bytes = _mm_packus_epi16(pairs, pairs);
  uint64_t in_text_order;
  _mm_storel_epi64(reinterpret_cast<__m128i*>(&in_text_order), bytes);
  return __builtin_bswap64(in_text_order);  // the first byte the most significant
#else
  uint64_t value = 0;
  for (int i = 0; i < 16; ++i) {
    const int digit = hex_digit_value(p[i]);
    if (digit < 0) return std::nullopt;
    value = (value << 4) | static_cast<uint64_t>(digit);
  }
  return value;
#endif
}

}  // namespace mqlab
