// Trace: the human-readable account of a run, one line per event
// ("  12.503201 broker-a-0 broker-a-0 fault_start crash_machine"), and a
// digest of every line whether or not the text is kept. Two runs of one
// scenario and seed must produce the same digest: the CI sweep compares them
// to catch nondeterminism the day it is introduced.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "broker/common/types.h"

namespace mqlab::sim {

class Trace {
 public:
  // out: where lines go (nullptr: digest only).
  explicit Trace(std::ostream* out = nullptr) : out_(out) {}

  void line(Nanos at, std::string_view machine, std::string_view process, std::string_view event);
  uint64_t digest() const { return digest_; }
  std::string digest_hex() const;
  uint64_t lines() const { return lines_; }

 private:
  std::ostream* out_;
  uint64_t digest_ = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis
  uint64_t lines_ = 0;
};

// "   12.503201": seconds of virtual time with microseconds, as printf's
// "%12.6f" prints them.
std::string format_virtual_time(Nanos at);

// Appends what printf's "%*.*f" prints for nanos in units of
// micros_per_unit microseconds (1,000,000: seconds, 6 decimals; 1,000:
// milliseconds, 3 decimals), byte for byte, without printf's floating-point
// formatting (the message trace prints two such numbers per message).
void append_micros_fixed(std::string& out, Nanos nanos, int64_t micros_per_unit, int width);

inline void append_virtual_time(std::string& out, Nanos at) { append_micros_fixed(out, at, 1'000'000, 12); }

}  // namespace mqlab::sim
