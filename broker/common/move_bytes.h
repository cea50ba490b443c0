// move_bytes: a copy of a few bytes, inline, where a memcpy or memmove call
// costs several times the copy (a store record's host and property texts,
// a JSON string's runs between escapes: a dozen such copies a message).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mqlab {

// Copies n bytes from from to to, which may overlap them only from before
// (to at or before from: a string decoded in place moves its runs left).
// Up to 32 bytes are all loaded before any is stored, in overlapping words;
// more go to memmove.
[[gnu::always_inline]] inline void move_bytes(void* to_bytes, const void* from_bytes, size_t n) {
  auto* const to = static_cast<char*>(to_bytes);
  const auto* const from = static_cast<const char*>(from_bytes);
  const auto load = [](const char* p, auto word) {
    std::memcpy(&word, p, sizeof(word));
    return word;
  };
  const auto store = [](char* p, auto word) { std::memcpy(p, &word, sizeof(word)); };
  if (n >= 8 && n <= 16) {
    const uint64_t head = load(from, uint64_t{});
    const uint64_t tail = load(from + n - 8, uint64_t{});
    store(to, head);
    store(to + n - 8, tail);
  } else if (n > 16 && n <= 32) {
    const uint64_t w0 = load(from, uint64_t{});
    const uint64_t w1 = load(from + 8, uint64_t{});
    const uint64_t w2 = load(from + n - 16, uint64_t{});
    const uint64_t w3 = load(from + n - 8, uint64_t{});
    store(to, w0);
    store(to + 8, w1);
    store(to + n - 16, w2);
    store(to + n - 8, w3);
  } else if (n >= 4 && n < 8) {
    const uint32_t head = load(from, uint32_t{});
    const uint32_t tail = load(from + n - 4, uint32_t{});
    store(to, head);
    store(to + n - 4, tail);
  } else if (n < 4) {
    for (size_t i = 0; i < n; ++i) to[i] = from[i];  // forward: to is not after from
  } else {
    std::memmove(to, from, n);
  }
}

}  // namespace mqlab
