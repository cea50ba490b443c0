#include "broker/common/crc32.h"

#include <array>
#include <bit>
#include <cstring>

namespace mqlab {
namespace {
constexpr uint32_t kPolynomial = 0xEDB88320u;

// tables[k][b]: the CRC of byte b followed by k zero bytes.
constexpr std::array<std::array<uint32_t, 256>, 8> make_tables() {
  std::array<std::array<uint32_t, 256>, 8> tables{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? kPolynomial : 0u);
    tables[0][b] = crc;
  }
  for (uint32_t b = 0; b < 256; ++b) {
    for (size_t k = 1; k < 8; ++k) tables[k][b] = (tables[k - 1][b] >> 8) ^ tables[0][tables[k - 1][b] & 0xFFu];
  }
  return tables;
}
constexpr auto kTables = make_tables();
static_assert(kTables[0][1] == 0x77073096u, "the standard CRC-32 table");
}  // namespace

uint32_t crc32_ieee(uint32_t crc, std::span<const uint8_t> bytes) {
  crc = ~crc;
  const uint8_t* p = bytes.data();
  size_t n = bytes.size();
  // Eight bytes per step: little-endian loads, as the tables assume.
  while (n >= 8) {
    uint32_t low;
    uint32_t high;
    std::memcpy(&low, p, 4);
    std::memcpy(&high, p + 4, 4);
    low ^= crc;
    crc = kTables[7][low & 0xFF] ^ kTables[6][(low >> 8) & 0xFF] ^ kTables[5][(low >> 16) & 0xFF] ^
          kTables[4][low >> 24] ^ kTables[3][high & 0xFF] ^ kTables[2][(high >> 8) & 0xFF] ^
          kTables[1][(high >> 16) & 0xFF] ^ kTables[0][high >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = (crc >> 8) ^ kTables[0][(crc ^ *p++) & 0xFF];
  return ~crc;
}

static_assert(std::endian::native == std::endian::little, "crc32_ieee's slicing assumes a little-endian host");

}  // namespace mqlab
