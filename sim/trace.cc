#include "sim/trace.h"

#include <cstdio>

namespace mqlab::sim {

std::string format_virtual_time(Nanos at) {
  char text[40];
  std::snprintf(text, sizeof(text), "%12.6f", static_cast<double>(at) / kNanosPerSecond);
  return text;
}

void Trace::line(Nanos at, std::string_view machine, std::string_view process, std::string_view event) {
  std::string text = format_virtual_time(at);
  text += ' ';
  text += machine.empty() ? "-" : machine;
  text += ' ';
  text += process.empty() ? "-" : process;
  text += ' ';
  text += event;
  text += '\n';
  for (unsigned char c : text) {
    digest_ ^= c;
    digest_ *= 0x100000001b3ull;  // FNV-1a 64 prime
  }
  ++lines_;
  if (out_) *out_ << text;
}

std::string Trace::digest_hex() const {
  char text[24];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(digest_));
  return text;
}

}  // namespace mqlab::sim
