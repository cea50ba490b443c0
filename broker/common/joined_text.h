// with_joined_text: a + separator + b handed to a callback as one
// string_view, put together on the stack when it is short, so a lookup key
// built for every message ("topic#key" for the IndexFile, "topic@group" for
// a consumer offset) costs no heap string.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace mqlab {

// Returns use(joined) for joined = a + separator + b; the view is valid
// during the call only.
template <typename Use>
decltype(auto) with_joined_text(std::string_view a, char separator, std::string_view b, Use&& use) {
  constexpr size_t kStackBytes = 256;
  const size_t size = a.size() + 1 + b.size();
  if (size > kStackBytes) {
    std::string joined;
    joined.reserve(size);
    joined.append(a).append(1, separator).append(b);
    return use(std::string_view(joined));
  }
  char buffer[kStackBytes];
  if (!a.empty()) std::memcpy(buffer, a.data(), a.size());
  buffer[a.size()] = separator;
  if (!b.empty()) std::memcpy(buffer + a.size() + 1, b.data(), b.size());
  return use(std::string_view(buffer, size));
}

}  // namespace mqlab
