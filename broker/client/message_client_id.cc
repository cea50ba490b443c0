#include "broker/client/message_client_id.h"

#include <array>
#include <charconv>
#include <string_view>

#include "broker/common/assert.h"
#include "broker/common/assign_text.h"

namespace mqlab::client {
namespace {

// The four bytes of a dotted IPv4 address, or false when it is not one.
bool parse_client_ipv4(std::string_view text, std::array<uint8_t, 4>& out) {
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

// Writes byte as two uppercase hex digits at out; returns the position after.
char* put_hex(char* out, uint8_t byte) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  out[0] = kDigits[byte >> 4];
  out[1] = kDigits[byte & 0xF];
  return out + 2;
}

}  // namespace

MessageClientIdGenerator::MessageClientIdGenerator(const std::string& client_ip, env::Random& random) {
  std::array<uint8_t, 4> ip{};
  if (!parse_client_ipv4(client_ip, ip)) {
    const uint64_t bits = random.next_u64();
    for (size_t i = 0; i < 4; ++i) ip[i] = static_cast<uint8_t>(bits >> (8 * i));
  }
  std::array<uint8_t, kPrefixBytes> prefix{};
  for (size_t i = 0; i < 4; ++i) prefix[i] = ip[i];
  const uint64_t bits = random.next_u64();
  for (size_t i = 0; i < 6; ++i) prefix[4 + i] = static_cast<uint8_t>(bits >> (8 * i));
  char* p = text_.data();
  for (uint8_t byte : prefix) p = put_hex(p, byte);
  MQ_ASSERT(p == text_.data() + 2 * kPrefixBytes);
}

std::string MessageClientIdGenerator::next() {
  std::string id;
  next_into(id);
  return id;
}

void MessageClientIdGenerator::next_into(std::string& out) {
  MQ_ASSERT(sequence_ < (uint64_t{1} << 48));  // 2^48 sends: never, in practice
  // Written into the kept text and copied once: appending 32 characters
  // one by one cost more than the rest of preparing a send, and the
  // prefix's digits never change.
  char* p = text_.data() + 2 * kPrefixBytes;
  for (int shift = 40; shift >= 0; shift -= 8) p = put_hex(p, static_cast<uint8_t>(sequence_ >> shift));
  MQ_ASSERT(p == text_.data() + kIdChars);
  ++sequence_;
  assign_text(out, std::string_view(text_.data(), kIdChars));
}

}  // namespace mqlab::client
