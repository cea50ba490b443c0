// JSON text scanning shared by the header readers (json_header_fast_path.cc,
// json_header_shapes.cc): the classes of a string's bytes, the skip over a
// plain run, escapes, and int32 numbers, each exactly as the general path
// (nlohmann's parser) reads them for the ASCII headers peers send; anything
// else is refused (nullopt, nullptr) so the caller hands the header on.
// And, for the writers (json_header_fast_path.cc, written_json_header.h),
// a short plain string put as it goes out.
//
// Functions that read take the position by reference (at) and leave it
// past what they read.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "broker/common/assert.h"
#include "broker/common/hex_digits.h"
#include "broker/common/move_bytes.h"

namespace mqlab::remoting::json_scan {

// How a byte of a string value goes out, and how it is read back.
enum class ByteClass : uint8_t { kPlain, kEscaped, kNonAscii };

constexpr std::array<ByteClass, 256> make_byte_classes() {
  std::array<ByteClass, 256> classes{};
  for (size_t c = 0; c < 256; ++c) {
    if (c >= 0x80) {
      classes[c] = ByteClass::kNonAscii;
    } else if (c < 0x20 || c == '"' || c == '\\') {
      classes[c] = ByteClass::kEscaped;
    } else {
      classes[c] = ByteClass::kPlain;  // DEL (0x7F) included: nlohmann writes it as it is
    }
  }
  return classes;
}
inline constexpr std::array<ByteClass, 256> kByteClasses = make_byte_classes();

inline ByteClass byte_class(char c) { return kByteClasses[static_cast<unsigned char>(c)]; }

// Each byte's high bit: set exactly in the non-ASCII bytes.
inline constexpr uint64_t kHighBits = 0x8080808080808080ull;

// Whether none of 8 bytes needs care: no quote, backslash, control byte or
// non-ASCII byte (the classic "has a byte less than n / equal to c" word
// tricks; each is exact as an any-byte test).
inline bool word_is_plain(uint64_t word) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  const uint64_t quote = word ^ (kOnes * '"');
  const uint64_t backslash = word ^ (kOnes * '\\');
  const uint64_t masked = ((word - kOnes * 0x20) & ~word) | ((quote - kOnes) & ~quote) |
                          ((backslash - kOnes) & ~backslash) | word;
  return (masked & kHighBits) == 0;
}

#if defined(__SSE2__)
// A bit per byte of bytes whose class is not kPlain: a quote, a backslash,
// or a control or non-ASCII byte (as signed bytes, both are below 0x20, so
// one compare finds them).
inline unsigned not_plain_mask(__m128i bytes) {
  const __m128i special =
      _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('"')), _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\\'))),
                   _mm_cmplt_epi8(bytes, _mm_set1_epi8(0x20)));
  return static_cast<unsigned>(_mm_movemask_epi8(special));
}
#endif

// The first byte at or after p whose class is not kPlain, or end. Always
// inlined: unescape_to calls it after every escape (eight a send's
// properties), and out of line the call cost a third of it.
[[gnu::always_inline]] inline const char* skip_plain(const char* p, const char* end) {
#if defined(__SSE2__)
  // 16 bytes at a time while 16 remain (the header's end, not the string's:
  // strings are short, headers are not).
  while (end - p >= 16) {
    const unsigned mask = not_plain_mask(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    if (mask != 0) return p + __builtin_ctz(mask);
    p += 16;
  }
#endif
  while (end - p >= 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof(word));
    if (!word_is_plain(word)) break;
    p += 8;
  }
  while (p != end && byte_class(*p) == ByteClass::kPlain) ++p;
  return p;
}


// Writes text at p and returns its end, when text is at most 16 bytes and
// every one is kPlain; else returns null, having written nothing. Two
// overlapping word moves after the plainness test (the first, middle and
// last byte under 4), where a scan and a memcpy call cost about 50
// instructions for a dozen bytes. Requires room at p for text.
[[gnu::always_inline]] inline char* put_short_plain(std::string_view text, char* p) {
  const size_t n = text.size();
  const char* const s = text.data();
  if (n >= 8) {
    if (n > 16) return nullptr;
    uint64_t head;
    uint64_t tail;
    std::memcpy(&head, s, sizeof(head));
    std::memcpy(&tail, s + n - sizeof(tail), sizeof(tail));
    if (!word_is_plain(head) || !word_is_plain(tail)) return nullptr;
    std::memcpy(p, &head, sizeof(head));
    std::memcpy(p + n - sizeof(tail), &tail, sizeof(tail));
  } else if (n >= 4) {
    uint32_t head;
    uint32_t tail;
    std::memcpy(&head, s, sizeof(head));
    std::memcpy(&tail, s + n - sizeof(tail), sizeof(tail));
    if (!word_is_plain((uint64_t{head} << 32) | tail)) return nullptr;
    std::memcpy(p, &head, sizeof(head));
    std::memcpy(p + n - sizeof(tail), &tail, sizeof(tail));
  } else if (n > 0) {
    // The first, middle and last bytes: all of them, some twice.
    const char first = s[0];
    const char middle = s[n / 2];
    const char last = s[n - 1];
    if (byte_class(first) != ByteClass::kPlain || byte_class(middle) != ByteClass::kPlain ||
        byte_class(last) != ByteClass::kPlain) {
      return nullptr;
    }
    p[0] = first;
    p[n / 2] = middle;
    p[n - 1] = last;
  }
  return p + n;
}

// The same as a JSON string literal, quotes included: the short values of
// a header mqlab writes (a group, a topic, "TAG", "*"), inline, where the
// call that scans and escapes any string (put_json_string_literal_if_ascii)
// cost about 80 instructions. Requires room at p for text and its quotes.
[[gnu::always_inline]] inline char* put_short_plain_literal(std::string_view text, char* p) {
  char* const end = put_short_plain(text, p + 1);
  if (end == nullptr) return nullptr;
  p[0] = '"';
  *end = '"';
  return end + 1;
}

// The character after a backslash (and its four hex digits for \u).
inline std::optional<char> read_escape(const char*& at, const char* end) {
  if (at == end) return std::nullopt;
  switch (*at++) {
    case '"': return '"';
    case '\\': return '\\';
    case '/': return '/';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'u': break;
    default: return std::nullopt;
  }
  if (end - at < 4) return std::nullopt;
  unsigned code = 0;
  for (int i = 0; i < 4; ++i) {
    const int digit = hex_digit_value(*at++);
    if (digit < 0) return std::nullopt;
    code = code * 16 + static_cast<unsigned>(digit);
  }
  if (code >= 0x80) return std::nullopt;  // UTF-8 encoding and surrogates are the general path's
  return static_cast<char>(code);
}

// Writes the decoded rest of a string literal from at (inside it; special
// is the first byte at or after at that is not plain) to out and returns
// the end written, or null (at then anywhere) when it strays; at ends past
// the closing quote. out may be at itself: every byte written stands for
// at least one read, so the writing never overtakes the reading.
inline char* unescape_to(const char*& at, const char* end, const char* special, char* const out) {
  const char* const start = at;
  MQ_ASSERT(start <= special && special <= end);
  char* p = out;
  while (true) {
    if (p != at) move_bytes(p, at, static_cast<size_t>(special - at));  // the first run is in place when out is at
    p += special - at;
    at = special;
    if (at == end) return nullptr;  // not closed
    if (*at == '"') break;
    if (*at != '\\') return nullptr;  // a raw control or non-ASCII byte
    ++at;
    // \u00XY with X below 8, an ASCII control byte: a send's properties
    // are made of them (RocketMQ's separators 0x01 and 0x02, two a
    // property), and read_escape's switch and digit loop cost twice this.
    // The same byte read_escape gives; anything else goes to it.
    // "u00" and the high digit are one 4-byte load and two compares.
    if (end - at >= 5) {
      uint32_t word;
      std::memcpy(&word, at, sizeof(word));
      if constexpr (std::endian::native != std::endian::little) word = __builtin_bswap32(word);
      const uint32_t high = (word >> 24) - '0';  // at[3]: 0-7 as a digit, else 8 or more
      constexpr uint32_t kU00 = uint32_t{'u'} | uint32_t{'0'} << 8 | uint32_t{'0'} << 16;
      const int low = hex_digit_value(at[4]);
      if ((word & 0xFFFFFF) == kU00 && high < 8 && low >= 0) {
        *p++ = static_cast<char>(high * 16 + static_cast<uint32_t>(low));
        at += 5;
        special = skip_plain(at, end);
        continue;
      }
    }
    const std::optional<char> unescaped = read_escape(at, end);
    if (!unescaped) return nullptr;
    *p++ = *unescaped;
    special = skip_plain(at, end);
  }
  // Every byte written stands for at least one read (an escape, two to six).
  MQ_ASSERT(p - out <= at - start);
  ++at;  // the closing quote
  return p;
}

// -?(0|[1-9][0-9]*) within int32, not followed by a fraction or exponent,
// read from at, which ends past the digits. The digits are summed in the
// pass that finds their end rather than parsed again by std::from_chars,
// which cost about half of the 120 instructions a call took. Past 10
// digits the sum may wrap, but such a number is refused by its count.
inline std::optional<int32_t> parse_int32(const char*& at, const char* end) {
  const bool negative = at != end && *at == '-';
  if (negative) ++at;
  const char* const digits = at;
  const char* p = digits;
  uint64_t sum = 0;
  while (p != end && static_cast<unsigned char>(*p - '0') <= 9) {
    sum = sum * 10 + static_cast<unsigned char>(*p - '0');
    ++p;
  }
  at = p;
  const size_t count = static_cast<size_t>(p - digits);
  if (count == 0 || count > 10 || (count > 1 && *digits == '0')) return std::nullopt;
  if (p != end && (*p == '.' || *p == 'e' || *p == 'E')) return std::nullopt;
  MQ_ASSERT(sum <= 9'999'999'999ull);  // at most 10 digits
  int64_t value = static_cast<int64_t>(sum);
  if (negative) value = -value;
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
    return std::nullopt;
  }
  return static_cast<int32_t>(value);
}

}  // namespace mqlab::remoting::json_scan
