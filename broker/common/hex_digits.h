// hex_digit_value: a hexadecimal digit's value (either case), or -1, from a
// table rather than branches: message ids are written and read for every
// message (a client names each pulled message by one; the checker reads
// each acknowledged one back), and a send's properties travel as JSON
// escapes (\u0001) whose four digits every header read decodes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace mqlab {

constexpr std::array<int8_t, 256> make_hex_digit_values() {
  std::array<int8_t, 256> values{};
  for (size_t c = 0; c < 256; ++c) {
    if (c >= '0' && c <= '9') {
      values[c] = static_cast<int8_t>(c - '0');
    } else if (c >= 'A' && c <= 'F') {
      values[c] = static_cast<int8_t>(c - 'A' + 10);
    } else if (c >= 'a' && c <= 'f') {
      values[c] = static_cast<int8_t>(c - 'a' + 10);  // Java's UtilAll.string2bytes upper-cases first
    } else {
      values[c] = -1;
    }
  }
  return values;
}
inline constexpr std::array<int8_t, 256> kHexDigitValues = make_hex_digit_values();

inline int hex_digit_value(char c) { return kHexDigitValues[static_cast<unsigned char>(c)]; }

}  // namespace mqlab
