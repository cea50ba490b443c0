// The order of names: std::string's byte order (unsigned bytes, then the
// shorter first), compared inline. Used by the small string -> string maps
// (a command's ExtFields, a message's properties in FlatStringMap), so a
// command or a record encodes to one byte string, and, through NameLess, by
// the std::maps a message's path looks up by name (topic configs, routes,
// connections by address, consume queues by topic), which keep the order
// std::less<std::string> gives them: what iterates them sees no change.
//
// Why not std::string's compare: that is a call to libc's memcmp for every
// node a lookup passes, and names are a few to a few dozen bytes that mostly
// differ early (SEND_MESSAGE_V2's "a".."n", UNIQ_KEY / KEYS / TAGS, a
// topic against "%RETRY%..."), where the call costs more than the
// comparison: 112 memcmp calls a message in the simulator's standard
// scenario, most of them from map lookups. Eight bytes at a time, read as
// big-endian words, so a word's order is its bytes' order.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace mqlab {

// <0, 0 or >0 as a sorts before, with or after b.
inline int compare_names(std::string_view a, std::string_view b) {
  static_assert(std::endian::native == std::endian::little, "words are byte-swapped to compare in byte order");
  const size_t common = a.size() < b.size() ? a.size() : b.size();
  size_t i = 0;
  for (; i + sizeof(uint64_t) <= common; i += sizeof(uint64_t)) {
    uint64_t x;
    uint64_t y;
    std::memcpy(&x, a.data() + i, sizeof x);
    std::memcpy(&y, b.data() + i, sizeof y);
    if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
  }
  for (; i < common; ++i) {
    if (a[i] != b[i]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]) ? -1 : 1;
  }
  return a.size() == b.size() ? 0 : (a.size() < b.size() ? -1 : 1);
}

inline bool name_less(std::string_view a, std::string_view b) { return compare_names(a, b) < 0; }

// std::less<std::string>'s order for a std::map or std::set keyed by
// std::string, by compare_names; transparent, so a std::string_view finds
// without a copy.
struct NameLess {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return compare_names(a, b) < 0; }
};

// The first of entries (pairs sorted by their names, .first) whose name
// does not sort before name.
template <typename Entries>
auto lower_bound_by_name(Entries& entries, std::string_view name) {
  return std::lower_bound(entries.begin(), entries.end(), name,
                          [](const auto& entry, std::string_view key) { return name_less(entry.first, key); });
}

}  // namespace mqlab
