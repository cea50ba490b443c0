#include "sim/trace.h"

#include <cstdio>

#include "broker/common/assert.h"

namespace mqlab::sim {
namespace {

// Below this many nanoseconds a double quotient of them by 1e9 (or 1e6) is
// within 2^-32 s (2^-22 ms) of the true value, so nearer than a nanosecond
// to every rounding boundary but a tie: integer rounding prints what printf
// would.
constexpr Nanos kExactlyRoundedNanos = 1'000'000'000'000'000;  // 11.6 days

}  // namespace

void append_micros_fixed(std::string& out, Nanos nanos, int64_t micros_per_unit, int width) {
  MQ_ASSERT(micros_per_unit == 1'000'000 || micros_per_unit == 1'000);
  const int decimals = micros_per_unit == 1'000'000 ? 6 : 3;
  char text[48];
  if (nanos < 0 || nanos >= kExactlyRoundedNanos || nanos % 1000 == 500) {
    // Negative, huge, or exactly half a microsecond (printf rounds the
    // double, which may sit either side of the tie): printf decides.
    const int length = std::snprintf(text, sizeof(text), "%*.*f", width, decimals,
                                     static_cast<double>(nanos) / static_cast<double>(micros_per_unit * 1000));
    MQ_ASSERT(length > 0 && static_cast<size_t>(length) < sizeof(text));
    out.append(text, static_cast<size_t>(length));
    return;
  }
  const int64_t micros = (nanos + 500) / 1000;  // to the nearest: ties went to printf
  int64_t whole = micros / micros_per_unit;
  int64_t fraction = micros % micros_per_unit;
  // Written backwards from the end of text: the fraction, the point, the
  // whole units (at least one digit), then spaces up to width.
  char* end = text + sizeof(text);
  char* p = end;
  for (int i = 0; i < decimals; ++i) {
    *--p = static_cast<char>('0' + fraction % 10);
    fraction /= 10;
  }
  *--p = '.';
  do {
    *--p = static_cast<char>('0' + whole % 10);
    whole /= 10;
  } while (whole > 0);
  while (end - p < width) *--p = ' ';
  out.append(p, static_cast<size_t>(end - p));
}

std::string format_virtual_time(Nanos at) {
  std::string text;
  append_virtual_time(text, at);
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
