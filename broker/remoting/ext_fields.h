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
// The table of views lives in text_ too: a decoded frame's table and its
// header's copy take one allocation (a std::vector took a second).
//
// A decoded table may also say how it relates to the table decoded before
// it from the same connection's headers of one shape (ExtFieldsLineage), so
// a processor that kept what it parsed from that one reads again only the
// values that changed. Any change to the table after decoding forgets that.
//
// Invariants: names strictly increase along the table (hence are unique),
// in byte order; every view points into text_ (or is empty); the table
// (size_ <= capacity_ entries at table_, null when capacity_ is 0) is in
// text_.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "broker/common/assert.h"
#include "broker/common/name_order.h"
#include "broker/common/text_arena.h"

namespace mqlab::remoting {

// Where a decoded table came from: the index-th table of a lineage, a run
// of headers one connection sent in one shape (json_header_shapes.h), each
// read against the one before it. Tables of one lineage have the same names
// at the same places; table index + 1's values are index's, except at the
// places whose bit (place i: bit i) is set in changed. id 0 is no lineage:
// a table built any other way, or changed since it was decoded.
struct ExtFieldsLineage {
  static constexpr size_t kMaxFields = 32;  // the places changed can tell apart
  uint64_t id = 0;
  uint64_t index = 0;
  uint32_t changed = 0;
};

class ExtFields {
 public:
  using value_type = std::pair<std::string_view, std::string_view>;
  using const_iterator = const value_type*;
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
  // The table moves with the text it lives in, and its lineage with it (a
  // copy, above, has none: it may be changed on its own).
  ExtFields(ExtFields&& other) noexcept
      : table_(std::exchange(other.table_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        capacity_(std::exchange(other.capacity_, 0)),
        lineage_(std::exchange(other.lineage_, {})),
        text_(std::move(other.text_)) {}
  ExtFields& operator=(ExtFields&& other) noexcept {
    if (this != &other) {
      text_ = std::move(other.text_);
      table_ = std::exchange(other.table_, nullptr);
      size_ = std::exchange(other.size_, 0);
      capacity_ = std::exchange(other.capacity_, 0);
      lineage_ = std::exchange(other.lineage_, {});
    }
    return *this;
  }

  const_iterator begin() const { return table_; }
  const_iterator end() const { return table_ + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Removes every field and frees the text (the table with it).
  void clear() {
    table_ = nullptr;
    size_ = 0;
    capacity_ = 0;
    lineage_ = {};
    text_.clear();
  }
  // Removes every field but keeps the text: a decoder's copy of its header,
  // which fields it adds next still view (a JSON header's repeated
  // "extFields" replaces the first).
  void clear_fields() {
    size_ = 0;
    lineage_ = {};
  }
  void reserve(size_t count) {
    if (count > capacity_) grow_to(count);
  }

  // A binary search with a three-way comparison that stops at an exact hit:
  // processors look up a dozen names a message, where the two-way search's
  // final equality test was a memcmp call of its own.
  const_iterator find(std::string_view name) const {
    const value_type* first = table_;
    size_t count = size_;
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
  // The first call also makes the table, in the same block as the text.
  char* hold_text(size_t size) {
    if (capacity_ == 0) {
      text_.reserve(kInitialCapacity * sizeof(value_type) + alignof(value_type) + size);
      grow_to(kInitialCapacity);
    }
    return text_.allocate(size);
  }
  // For a decoder whose names are known to come in strictly increasing
  // order, each after every name held (a learned header shape's, whose
  // names were checked once, when it was learned): the insert without the
  // comparison. Requires that order; unchecked here, where it would cost a
  // comparison per field of every frame.
  void append_held_in_order(std::string_view name, std::string_view value) {
    lineage_.id = 0;
    if (size_ < capacity_) {
      new (table_ + size_) value_type(name, value);
      ++size_;
      return;
    }
    place(name, value, /*copy=*/false);
  }
  // For a decoder that knows how many such fields come: room for count
  // entries at the end of the table, unconstructed, for it to construct in
  // place (placement new), so no field costs a call. Requires that each is
  // constructed (through the pointer returned) before the map is used
  // again, to a name after every name before it, as for
  // append_held_in_order.
  value_type* append_held_unset(size_t count) {
    static_assert(std::is_trivially_destructible_v<value_type>);  // clear() need not destroy them
    lineage_.id = 0;
    if (size_ + count > capacity_) grow_to(std::max<size_t>(size_ + count, kInitialCapacity));
    value_type* const slots = table_ + size_;
    size_ += static_cast<uint32_t>(count);
    return slots;
  }
  bool insert_or_assign_held(std::string_view name, std::string_view value) {
    lineage_.id = 0;
    // Appending in name order (how fields are mostly written) costs one
    // comparison, inline: a decoder adds a dozen fields a frame.
    if (size_ != 0 && size_ < capacity_ && name_less(table_[size_ - 1].first, name)) {
      new (table_ + size_) value_type(name, value);
      ++size_;
      return true;
    }
    return place(name, value, /*copy=*/false);
  }

  // Removes name; returns how many fields went (0 or 1). Its text stays
  // until clear().
  size_t erase(std::string_view name) {
    lineage_.id = 0;
    value_type* const it = mutable_lower_bound(name);
    if (it == table_ + size_ || it->first != name) return 0;
    erase(it);
    return 1;
  }
  // Removes the entry at it (a valid, dereferenceable iterator of this map);
  // returns the iterator after it.
  const_iterator erase(const_iterator it) {
    MQ_ASSERT(it >= table_ && it < table_ + size_);
    lineage_.id = 0;
    value_type* const at = table_ + (it - table_);
    std::move(at + 1, table_ + size_, at);
    --size_;
    return at;
  }

  // The lineage this table belongs to (id 0 when none).
  const ExtFieldsLineage& lineage() const { return lineage_; }
  // For decoders, once the table is complete: what they know of it.
  // Requires: at most kMaxFields fields when lineage.id is not 0.
  void set_lineage(const ExtFieldsLineage& lineage) {
    MQ_ASSERT(lineage.id == 0 || (size_ <= ExtFieldsLineage::kMaxFields && lineage.index > 0));
    lineage_ = lineage;
  }

  // Equal fields, wherever their text is held (lineage aside).
  bool operator==(const ExtFields& other) const { return std::equal(begin(), end(), other.begin(), other.end()); }

 private:
  // SEND_MESSAGE_V2 has 14 fields, PULL_MESSAGE 11.
  static constexpr size_t kInitialCapacity = 16;

  // In name_order.h's order.
  value_type* mutable_lower_bound(std::string_view name) {
    std::span<value_type> entries(table_, size_);
    return table_ + (lower_bound_by_name(entries, name) - entries.begin());
  }
  // A table of capacity entries (more than now) in text_, holding the
  // entries so far; the old one stays in text_ until clear().
  void grow_to(size_t capacity);

  // Both inserts' general case (for insert_or_assign_held: the first
  // field, one out of order, a name already there, or a table to grow):
  // name set to value, which are copied into text_ first when copy says
  // so; returns whether the name is new.
  bool place(std::string_view name, std::string_view value, bool copy);

  // Requires: this map is empty. One block for all of other's text.
  void assign_copy_of(const ExtFields& other);

  value_type* table_ = nullptr;  // sorted by name, names unique; views into text_
  uint32_t size_ = 0;
  uint32_t capacity_ = 0;
  ExtFieldsLineage lineage_;
  TextArena text_;
};

}  // namespace mqlab::remoting
