#include "broker/meta/named_config_table.h"

#include <cstdio>

namespace mqlab::meta {

std::string printable_name(std::string_view name) {
  constexpr size_t kShown = 80;
  std::string out;
  for (size_t i = 0; i < name.size() && i < kShown; ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'') {
      out += static_cast<char>(c);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
      out += escaped;
    }
  }
  if (name.size() > kShown) out += "...";
  return out;
}

}  // namespace mqlab::meta
