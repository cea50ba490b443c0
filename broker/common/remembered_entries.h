// RememberedEntries<Map, N>: the N entries of a std::map keyed by name that
// lookups found last, most recent first, looked at before the map is
// searched. A message's path looks up the same topic, group, route or
// connection again and again, and the tree's search compared the name with
// three or four others each time.
//
// A std::map's entries stay where they are until erased: the owner calls
// forget() before it erases an entry or replaces the map. Not thread-safe
// (broker code runs on one executor).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>
#include <utility>

#include "broker/common/same_bytes.h"

namespace mqlab {

template <class Map, size_t N = 1>
class RememberedEntries {
 public:
  static_assert(N >= 1);
  using Entry = typename Map::value_type;

  RememberedEntries() = default;
  // A copy or a move starts empty: whatever holds the memo is copied with
  // its map, whose copy has entries of its own (and a moved map's entries
  // may be anyone's by the time the memo is asked).
  RememberedEntries(const RememberedEntries&) {}
  RememberedEntries& operator=(const RememberedEntries&) {
    forget();
    return *this;
  }

  // map's entry for key (a remembered one first), or null; a found entry
  // becomes the most recent. Requires: map's comparator finds by a view.
  const Entry* find(const Map& map, std::string_view key) {
    for (size_t i = 0; i < N; ++i) {
      const Entry* entry = recent_[i];
      if (entry != nullptr && same_text(entry->first, key)) {
        std::rotate(recent_.begin(), recent_.begin() + i, recent_.begin() + i + 1);
        return entry;
      }
    }
    const auto it = map.find(key);
    if (it == map.end()) return nullptr;
    std::move_backward(recent_.begin(), recent_.end() - 1, recent_.end());
    recent_[0] = &*it;
    return recent_[0];
  }

  // The same in a map whose entries the caller may change (a non-const
  // map's entries are not const objects: the cast gives back what they are).
  Entry* find(Map& map, std::string_view key) { return const_cast<Entry*>(find(std::as_const(map), key)); }
  // Before any entry leaves the map.
  void forget() { recent_ = {}; }

 private:
  std::array<const Entry*, N> recent_{};
};

}  // namespace mqlab
