// ExtFields: a RemotingCommand's custom header, the flat string -> string map
// of its extFields (SEND_MESSAGE_V2's "a".."n", PULL_MESSAGE's "topic",
// "queueId", ...), sorted by name so a command encodes to one byte string.
//
// Names and values are string_views into text the map owns (a TextArena).
// Every frame that arrives is decoded into one of these, and building a
// std::string per field (16 a frame, with a heap block for each long value
// and their destruction) cost more than scanning the header: a decoder
// instead copies the header into the map once and adds fields that view
// the copy (hold_text, insert_or_assign_held). insert_or_assign copies its
// arguments in, so callers may pass views of anything.
//
// It behaves as the std::map<std::string, std::string> it once was (same
// order; the last insert_or_assign of a name wins; an initializer list keeps
// the first of a repeated name). Iteration is read-only. Views a caller took
// stay valid until the map is cleared, assigned or destroyed: an
// insert_or_assign or erase never moves text, only the table of views.
//
// Invariants: names strictly increase along fields_ (hence are unique), in
// byte order; every view points into text_ (or is empty).
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/common/name_order.h"
#include "broker/common/text_arena.h"

namespace mqlab::remoting {

class ExtFields {
 public:
  using value_type = std::pair<std::string_view, std::string_view>;
  using const_iterator = std::vector<value_type>::const_iterator;
  using iterator = const_iterator;  // read-only, like a map's keys
  using size_type = size_t;

  ExtFields() = default;
  // A repeated name keeps its first value, as std::map's constructor does.
  ExtFields(std::initializer_list<value_type> fields) {
    for (const value_type& field : fields) {
      if (!contains(field.first)) insert_or_assign(field.first, field.second);
    }
  }
  // A copy holds its own text; a move takes the text along, so views into
  // it (the fields themselves) stay valid.
  ExtFields(const ExtFields& other) { assign_copy_of(other); }
  ExtFields& operator=(const ExtFields& other) {
    if (this != &other) {
      clear();
      assign_copy_of(other);
    }
    return *this;
  }
  ExtFields(ExtFields&&) noexcept = default;
  ExtFields& operator=(ExtFields&&) noexcept = default;

  const_iterator begin() const { return fields_.begin(); }
  const_iterator end() const { return fields_.end(); }
  size_t size() const { return fields_.size(); }
  bool empty() const { return fields_.empty(); }
  // Removes every field and frees the text.
  void clear() {
    fields_.clear();
    text_.clear();
  }
  // Removes every field but keeps the text: a decoder's copy of its header,
  // which fields it adds next still view (a JSON header's repeated
  // "extFields" replaces the first).
  void clear_fields() { fields_.clear(); }
  void reserve(size_t count) { fields_.reserve(count); }

  // A binary search with a three-way comparison that stops at an exact hit:
  // processors look up a dozen names a message, where the two-way search's
  // final equality test was a memcmp call of its own.
  const_iterator find(std::string_view name) const {
    auto first = fields_.begin();
    size_t count = fields_.size();
    while (count > 0) {
      const size_t half = count / 2;
      const auto middle = first + static_cast<std::ptrdiff_t>(half);
      const int order = compare_names(middle->first, name);
      if (order == 0) return middle;
      if (order < 0) {
        first = middle + 1;
        count -= half + 1;
      } else {
        count = half;
      }
    }
    return end();
  }
  // The value of name, or null: a pointer into the table, valid until the
  // next insert or erase.
  const std::string_view* find_value(std::string_view name) const {
    const auto it = find(name);
    return it == end() ? nullptr : &it->second;
  }
  bool contains(std::string_view name) const { return find(name) != end(); }
  size_t count(std::string_view name) const { return contains(name) ? 1 : 0; }
  // Throws std::out_of_range for a missing name, as std::map::at.
  std::string_view at(std::string_view name) const;

  // Sets name to a copy of value; returns whether the name is new. Either
  // may view this map's own text, which a copy leaves where it is.
  bool insert_or_assign(std::string_view name, std::string_view value) {
    return place(name, value, /*copy=*/true);
  }

  // For decoders: size bytes of storage that lives as long as the fields
  // (a copy of the header being decoded goes here), and the insert of a
  // name and value that already view it, other text this map holds, or
  // text that outlives the map (a literal such as "true").
  char* hold_text(size_t size) { return text_.allocate(size); }
  bool insert_or_assign_held(std::string_view name, std::string_view value) {
    // Appending in name order (how fields are mostly written) costs one
    // comparison, inline: a decoder adds a dozen fields a frame.
    if (!fields_.empty() && fields_.size() < fields_.capacity() && name_less(fields_.back().first, name)) {
      fields_.emplace_back(name, value);
      return true;
    }
    return place(name, value, /*copy=*/false);
  }

  // Removes name; returns how many fields went (0 or 1). Its text stays
  // until clear().
  size_t erase(std::string_view name) {
    const auto it = mutable_lower_bound(name);
    if (it == fields_.end() || it->first != name) return 0;
    fields_.erase(it);
    return 1;
  }
  // Removes the entry at it (a valid, dereferenceable iterator of this map);
  // returns the iterator after it.
  const_iterator erase(const_iterator it) { return fields_.erase(it); }

  // Equal fields, wherever their text is held.
  bool operator==(const ExtFields& other) const { return fields_ == other.fields_; }

 private:
  // SEND_MESSAGE_V2 has 14 fields, PULL_MESSAGE 11.
  static constexpr size_t kInitialCapacity = 16;

  // In name_order.h's order.
  std::vector<value_type>::iterator mutable_lower_bound(std::string_view name) {
    return lower_bound_by_name(fields_, name);
  }

  // Both inserts' general case (for insert_or_assign_held: the first
  // field, one out of order, a name already there, or a table to grow):
  // name set to value, which are copied into text_ first when copy says
  // so; returns whether the name is new.
  bool place(std::string_view name, std::string_view value, bool copy);

  // Requires: this map is empty. One block for all of other's text.
  void assign_copy_of(const ExtFields& other);

  std::vector<value_type> fields_;  // sorted by name, names unique; views into text_
  TextArena text_;
};

}  // namespace mqlab::remoting
