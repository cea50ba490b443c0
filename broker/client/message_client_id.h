// MessageClientIDSetter: the UNIQ_KEY a producer stamps on every message it
// sends, so that a message stored twice (a retry after a timeout whose first
// attempt did land) can be recognised as one, and so that a consumer's retry
// of it keeps the same id.
//
// 16 bytes as 32 uppercase hex digits, in Java's outline: 4 bytes of the
// client's IPv4 address (random bytes when clientIP is not IPv4), then 6 bytes
// drawn once per generator from env.random() where Java puts its pid and class
// loader hash, then a 6-byte sequence number. Java puts milliseconds since
// the month began and a 2-byte counter in those last 6 bytes; a counter alone
// cannot repeat within one generator (2^48 ids) and needs no clock, whose
// simulated wall time may jump back. Ids of distinct generators differ in
// the 48 random bits, which the simulator's seed fixes, so a run replays.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "broker/env/random.h"

namespace mqlab::client {

class MessageClientIdGenerator {
 public:
  static constexpr size_t kIdChars = 32;

  MessageClientIdGenerator(const std::string& client_ip, env::Random& random);
  std::string next();
  // The same into out, replacing what it held (and keeping its room).
  void next_into(std::string& out);

 private:
  static constexpr size_t kPrefixBytes = 10;  // ip (4) + random (6)
  // The next id's text: the prefix's 20 digits, written once, then the
  // sequence's 12, written for each id.
  std::array<char, kIdChars> text_{};
  uint64_t sequence_ = 0;
};

}  // namespace mqlab::client
