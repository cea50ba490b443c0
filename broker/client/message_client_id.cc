#include "broker/client/message_client_id.h"

#include <charconv>
#include <string_view>

namespace mqlab::client {
namespace {

// The four bytes of a dotted IPv4 address, or false when it is not one.
bool parse_ipv4(std::string_view text, std::array<uint8_t, 4>& out) {
  for (size_t i = 0; i < 4; ++i) {
    unsigned value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end == text.data() || value > 255) return false;
    out[i] = static_cast<uint8_t>(value);
    text.remove_prefix(static_cast<size_t>(end - text.data()));
    if (i < 3) {
      if (text.empty() || text.front() != '.') return false;
      text.remove_prefix(1);
    }
  }
  return text.empty();
}

void append_hex(std::string& out, uint8_t byte) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  out += kDigits[byte >> 4];
  out += kDigits[byte & 0xF];
}

}  // namespace

MessageClientIdGenerator::MessageClientIdGenerator(const std::string& client_ip, env::Random& random) {
  std::array<uint8_t, 4> ip{};
  if (!parse_ipv4(client_ip, ip)) {
    const uint64_t bits = random.next_u64();
    for (size_t i = 0; i < 4; ++i) ip[i] = static_cast<uint8_t>(bits >> (8 * i));
  }
  for (size_t i = 0; i < 4; ++i) prefix_[i] = ip[i];
  const uint64_t bits = random.next_u64();
  for (size_t i = 0; i < 6; ++i) prefix_[4 + i] = static_cast<uint8_t>(bits >> (8 * i));
}

std::string MessageClientIdGenerator::next() {
  MQ_ASSERT(sequence_ < (uint64_t{1} << 48));  // 2^48 sends: never, in practice
  std::string id;
  id.reserve(32);
  for (uint8_t byte : prefix_) append_hex(id, byte);
  for (int shift = 40; shift >= 0; shift -= 8) append_hex(id, static_cast<uint8_t>(sequence_ >> shift));
  ++sequence_;
  MQ_ASSERT(id.size() == 32);
  return id;
}

}  // namespace mqlab::client
