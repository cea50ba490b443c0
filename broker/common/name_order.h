// The order of the small string -> string maps' names (a command's
// ExtFields, a message's properties in FlatStringMap): std::string's byte
// order, so a command or a record encodes to one byte string. Compared
// inline: names are a few bytes and mostly differ in the first
// (SEND_MESSAGE_V2's "a".."n", UNIQ_KEY / KEYS / TAGS), where a memcmp call
// costs more than the comparison itself.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace mqlab {

// <0, 0 or >0 as a sorts before, with or after b.
inline int compare_names(std::string_view a, std::string_view b) {
  const size_t common = a.size() < b.size() ? a.size() : b.size();
  for (size_t i = 0; i < common; ++i) {
    if (a[i] != b[i]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]) ? -1 : 1;
  }
  return a.size() == b.size() ? 0 : (a.size() < b.size() ? -1 : 1);
}

inline bool name_less(std::string_view a, std::string_view b) { return compare_names(a, b) < 0; }

// The first of entries (pairs sorted by their names, .first) whose name
// does not sort before name.
template <typename Entries>
auto lower_bound_by_name(Entries& entries, std::string_view name) {
  return std::lower_bound(entries.begin(), entries.end(), name,
                          [](const auto& entry, std::string_view key) { return name_less(entry.first, key); });
}

}  // namespace mqlab
