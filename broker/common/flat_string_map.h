// FlatStringMap: a small string -> string map kept as a vector sorted by
// name: a message's properties (store/message_codec.h). (A command's
// extFields, decoded from every frame, are views instead:
// remoting/ext_fields.h.)
//
// It behaves as the std::map<std::string, std::string, std::less<>> it
// replaces (same order, so a record still encodes to one byte
// string; the last insert_or_assign of a name wins; an initializer list
// keeps the first of a repeated name; try_emplace and emplace keep what is
// there) but costs one allocation instead of one per entry: every message
// has a handful of entries, built mostly in name order and read
// a few times, so appending and binary search win over a tree's nodes.
// Iteration is read-only: names cannot be changed in place, which would
// break the order.
//
// Invariants: names strictly increase along the vector (hence are unique).
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "broker/common/name_order.h"
#include "broker/common/same_bytes.h"

namespace mqlab {

class FlatStringMap {
 public:
  using value_type = std::pair<std::string, std::string>;
  using const_iterator = std::vector<value_type>::const_iterator;
  using iterator = const_iterator;  // read-only, like a map's keys
  using size_type = size_t;

  FlatStringMap() = default;
  // A repeated name keeps its first value, as std::map's constructor does.
  FlatStringMap(std::initializer_list<value_type> fields) {
    for (const value_type& field : fields) {
      if (!contains(field.first)) insert_or_assign(field.first, field.second);
    }
  }

  const_iterator begin() const { return fields_.begin(); }
  const_iterator end() const { return fields_.end(); }
  size_t size() const { return fields_.size(); }
  bool empty() const { return fields_.empty(); }
  void clear() { fields_.clear(); }
  void reserve(size_t count) { fields_.reserve(count); }

  const_iterator find(std::string_view name) const {
    const auto it = lower_bound(name);
    return it != fields_.end() && same_text(it->first, name) ? it : end();
  }
  bool contains(std::string_view name) const { return find(name) != end(); }
  size_t count(std::string_view name) const { return contains(name) ? 1 : 0; }
  // Requires nothing; throws std::out_of_range for a missing name, as std::map::at.
  const std::string& at(std::string_view name) const {
    const auto it = find(name);
    if (it == end()) throw std::out_of_range("FlatStringMap::at: no field " + std::string(name));
    return it->second;
  }

  // Sets name to value; returns whether the name is new. Appending in name
  // order costs one comparison.
  template <typename Name, typename Value>
  bool insert_or_assign(Name&& name, Value&& value) {
    const std::string_view key(name);
    if (fields_.capacity() == 0) fields_.reserve(kInitialCapacity);  // one allocation for most messages
    // Both strings are built in place: no temporaries to move from.
    if (fields_.empty() || name_less(fields_.back().first, key)) {
      fields_.emplace_back(std::piecewise_construct, std::forward_as_tuple(std::forward<Name>(name)),
                           std::forward_as_tuple(std::forward<Value>(value)));
      return true;
    }
    const auto it = lower_bound(key);
    if (it != fields_.end() && it->first == key) {
      it->second = std::forward<Value>(value);
      return false;
    }
    fields_.emplace(it, std::piecewise_construct, std::forward_as_tuple(std::forward<Name>(name)),
                    std::forward_as_tuple(std::forward<Value>(value)));
    return true;
  }

  // The value of name, inserted empty when missing (std::map::operator[]).
  std::string& operator[](std::string_view name) {
    if (fields_.capacity() == 0) fields_.reserve(kInitialCapacity);
    auto it = lower_bound(name);
    if (it == fields_.end() || it->first != name) it = fields_.emplace(it, std::string(name), std::string());
    return it->second;
  }

  // Removes name; returns how many fields went (0 or 1).
  size_t erase(std::string_view name) {
    const auto it = lower_bound(name);
    if (it == fields_.end() || it->first != name) return 0;
    fields_.erase(it);
    return 1;
  }
  // Removes the entry at it (a valid, dereferenceable iterator of this map);
  // returns the iterator after it.
  const_iterator erase(const_iterator it) { return fields_.erase(it); }

  // Inserts name -> value unless name is there (std::map::try_emplace);
  // returns where name is and whether it was inserted. name may be moved
  // from, so it is looked at only before the insert.
  template <typename Name, typename... Args>
  std::pair<const_iterator, bool> try_emplace(Name&& name, Args&&... args) {
    const std::string_view key(name);
    if (fields_.capacity() == 0) fields_.reserve(kInitialCapacity);
    const auto at = lower_bound(key);
    if (at != fields_.end() && at->first == key) return {at, false};
    const auto inserted = fields_.emplace(at, std::piecewise_construct, std::forward_as_tuple(std::forward<Name>(name)),
                                          std::forward_as_tuple(std::forward<Args>(args)...));
    return {inserted, true};
  }
  template <typename Name, typename Value>
  std::pair<const_iterator, bool> emplace(Name&& name, Value&& value) {
    return try_emplace(std::forward<Name>(name), std::forward<Value>(value));
  }

  bool operator==(const FlatStringMap&) const = default;

 private:
  // A message has 5-10 properties; growing 1, 2, 4, 8, 16 would move
  // every string four times.
  static constexpr size_t kInitialCapacity = 16;

  // In name_order.h's order.
  std::vector<value_type>::iterator lower_bound(std::string_view name) { return lower_bound_by_name(fields_, name); }
  const_iterator lower_bound(std::string_view name) const { return lower_bound_by_name(fields_, name); }

  std::vector<value_type> fields_;  // sorted by name, names unique
};

}  // namespace mqlab
