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

bool ExtFields::insert_or_assign_held_anywhere(std::string_view name, std::string_view value) {
  if (fields_.capacity() == 0) fields_.reserve(kInitialCapacity);  // one allocation for most commands
  if (fields_.empty() || name_less(fields_.back().first, name)) {
    fields_.emplace_back(name, value);
    return true;
  }
  const auto it = mutable_lower_bound(name);
  if (it != fields_.end() && it->first == name) {
    it->second = value;
    return false;
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
