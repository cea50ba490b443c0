#include "broker/remoting/ext_fields.h"

#include <cstring>
#include <stdexcept>

#include "broker/common/assert.h"

namespace mqlab::remoting {

std::string_view ExtFields::at(std::string_view name) const {
  const auto it = find(name);
  if (it == end()) throw std::out_of_range("ExtFields::at: no field " + std::string(name));
  return it->second;
}

bool ExtFields::place(std::string_view name, std::string_view value, bool copy) {
  if (fields_.capacity() == 0) fields_.reserve(kInitialCapacity);  // one allocation for most commands
  // Past the last name (the first field, a table to grow): no search.
  const auto it = fields_.empty() || name_less(fields_.back().first, name) ? fields_.end() : mutable_lower_bound(name);
  if (it != fields_.end() && it->first == name) {
    it->second = copy ? text_.copy(value) : value;
    return false;
  }
  if (copy) {
    name = text_.copy(name);
    value = text_.copy(value);
  }
  fields_.emplace(it, name, value);
  return true;
}

void ExtFields::assign_copy_of(const ExtFields& other) {
  MQ_ASSERT(fields_.empty());
  size_t bytes = 0;
  for (const auto& [name, value] : other.fields_) bytes += name.size() + value.size();
  fields_.reserve(std::max(other.fields_.size(), kInitialCapacity));
  char* p = bytes == 0 ? nullptr : text_.allocate(bytes);
  const auto put = [&p](std::string_view text) {
    if (text.empty()) return std::string_view();
    std::memcpy(p, text.data(), text.size());
    const std::string_view copy(p, text.size());
    p += text.size();
    return copy;
  };
  // Already in order: appended as they are.
  for (const auto& [name, value] : other.fields_) {
    const std::string_view name_copy = put(name);
    fields_.emplace_back(name_copy, put(value));
  }
  MQ_ASSERT(fields_ == other.fields_);
}

}  // namespace mqlab::remoting
