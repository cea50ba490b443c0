#include "broker/remoting/ext_fields.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>

#include "broker/common/assert.h"

namespace mqlab::remoting {

std::string_view ExtFields::at(std::string_view name) const {
  const auto it = find(name);
  if (it == end()) throw std::out_of_range("ExtFields::at: no field " + std::string(name));
  return it->second;
}

void ExtFields::grow_to(size_t capacity) {
  MQ_ASSERT(capacity > capacity_ && capacity <= UINT32_MAX);
  auto* const table =
      reinterpret_cast<value_type*>(text_.allocate_aligned(capacity * sizeof(value_type), alignof(value_type)));
  std::uninitialized_copy(table_, table_ + size_, table);
  table_ = table;
  capacity_ = static_cast<uint32_t>(capacity);
}

bool ExtFields::place(std::string_view name, std::string_view value, bool copy) {
  lineage_.id = 0;
  if (capacity_ == 0) grow_to(kInitialCapacity);  // one table for most commands
  // Past the last name (the first field, a table to grow): no search.
  value_type* at = size_ == 0 || name_less(table_[size_ - 1].first, name) ? table_ + size_ : mutable_lower_bound(name);
  if (at != table_ + size_ && at->first == name) {
    at->second = copy ? text_.copy(value) : value;
    return false;
  }
  if (copy) {
    name = text_.copy(name);
    value = text_.copy(value);
  }
  if (size_ == capacity_) {
    const auto index = at - table_;
    grow_to(2 * size_t{capacity_});
    at = table_ + index;
  }
  // One entry more at the end, then the entries from at on move up one.
  value_type* const last = table_ + size_;
  new (last) value_type();
  std::move_backward(at, last, last + 1);
  *at = value_type(name, value);
  ++size_;
  return true;
}

void ExtFields::assign_copy_of(const ExtFields& other) {
  MQ_ASSERT(empty() && capacity_ == 0);
  size_t bytes = 0;
  for (const auto& [name, value] : other) bytes += name.size() + value.size();
  const size_t capacity = std::max<size_t>(other.size(), kInitialCapacity);
  text_.reserve(capacity * sizeof(value_type) + alignof(value_type) + bytes);  // one block for both
  grow_to(capacity);
  char* p = bytes == 0 ? nullptr : text_.allocate(bytes);
  const auto put = [&p](std::string_view text) {
    if (text.empty()) return std::string_view();
    std::memcpy(p, text.data(), text.size());
    const std::string_view copy(p, text.size());
    p += text.size();
    return copy;
  };
  // Already in order: appended as they are.
  for (const auto& [name, value] : other) {
    const std::string_view name_copy = put(name);
    new (table_ + size_) value_type(name_copy, put(value));
    ++size_;
  }
  MQ_ASSERT(*this == other);
}

}  // namespace mqlab::remoting
