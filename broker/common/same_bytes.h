// Equality of short byte strings, inline: the literals between a JSON
// header's values (`,"b":"` and the like) and extFields names are a few
// bytes, where a memcmp call costs more than the comparison. Up to 32 bytes
// are compared by overlapping 4- and 8-byte words, shorter ones byte by
// byte; longer ones by memcmp. And where two such texts first differ.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "broker/common/assert.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mqlab {

// Whether size bytes at a and b are equal.
inline bool same_bytes(const char* a, const char* b, size_t size) {
  const auto load = [](const char* p, auto word) {
    std::memcpy(&word, p, sizeof(word));
    return word;
  };
  const auto same_words = [&](size_t at) { return load(a + at, uint64_t{}) == load(b + at, uint64_t{}); };
  if (size >= 8 && size <= 16) return same_words(0) && same_words(size - 8);
  if (size > 16 && size <= 32) return same_words(0) && same_words(8) && same_words(size - 16) && same_words(size - 8);
  if (size >= 4 && size < 8) {
    return load(a, uint32_t{}) == load(b, uint32_t{}) && load(a + size - 4, uint32_t{}) == load(b + size - 4, uint32_t{});
  }
  if (size < 4) {
    for (size_t i = 0; i < size; ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }
  return std::memcmp(a, b, size) == 0;
}

// The first i in [from, size) where a[i] != b[i], or size: 16 bytes a step
// (a JSON header against the one before it, which differs in a few values).
inline size_t first_difference(const char* a, const char* b, size_t from, size_t size) {
  MQ_ASSERT(from <= size);
  size_t i = from;
#if defined(__SSE2__)
  while (size - i >= 16) {
    const __m128i same = _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)),
                                        _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    const auto differ = static_cast<unsigned>(_mm_movemask_epi8(same)) ^ 0xFFFFu;
    if (differ != 0) return i + static_cast<size_t>(__builtin_ctz(differ));
    i += 16;
  }
#endif
  while (i < size && a[i] == b[i]) ++i;
  return i;
}

inline bool same_text(std::string_view a, std::string_view b) {
  return a.size() == b.size() && same_bytes(a.data(), b.data(), a.size());
}

// Whether text begins with prefix: string_view's starts_with is a call to
// its compare (about 45 instructions), where a prefix is a few bytes.
inline bool starts_with_text(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && same_bytes(text.data(), prefix.data(), prefix.size());
}

}  // namespace mqlab
