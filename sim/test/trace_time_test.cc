// The trace's integer time formatting against printf, whose output it must
// reproduce byte for byte: every recorded trace digest depends on it.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdio>
#include <string>

#include "sim/trace.h"

namespace mqlab::sim::trace_time_test {
namespace {

std::string printf_fixed(Nanos nanos, int64_t micros_per_unit, int width) {
  char text[64];
  std::snprintf(text, sizeof(text), "%*.*f", width, micros_per_unit == 1'000'000 ? 6 : 3,
                static_cast<double>(nanos) / static_cast<double>(micros_per_unit * 1000));
  return text;
}

std::string appended(Nanos nanos, int64_t micros_per_unit, int width) {
  std::string text = "x";  // appends, keeping what was there
  append_micros_fixed(text, nanos, micros_per_unit, width);
  EXPECT_EQ(text[0], 'x');
  return text.substr(1);
}

TEST(TraceTime, KnownValues) {
  EXPECT_EQ(format_virtual_time(0), "    0.000000");
  EXPECT_EQ(format_virtual_time(12'503'201'000), "   12.503201");
  EXPECT_EQ(format_virtual_time(12'503'201'499), "   12.503201");
  EXPECT_EQ(format_virtual_time(12'503'201'501), "   12.503202");
  EXPECT_EQ(format_virtual_time(999'999'999'600), " 1000.000000");  // carries into the whole seconds
  EXPECT_EQ(appended(1'234'567, 1'000, 0), "1.235");                 // milliseconds
  EXPECT_EQ(appended(999'600, 1'000, 0), "1.000");
  EXPECT_EQ(appended(400, 1'000, 0), "0.000");
}

TEST(TraceTime, TiesHugeAndNegativeValuesAreLeftToPrintf) {
  for (Nanos nanos : {Nanos{500}, Nanos{1'500}, Nanos{2'500}, Nanos{12'000'000'500}, Nanos{-1}, Nanos{-1'234'567},
                      Nanos{1'000'000'000'000'000}, Nanos{4'000'000'000'000'000'123}}) {
    EXPECT_EQ(appended(nanos, 1'000'000, 12), printf_fixed(nanos, 1'000'000, 12)) << nanos;
    EXPECT_EQ(appended(nanos, 1'000, 0), printf_fixed(nanos, 1'000, 0)) << nanos;
  }
}

RC_GTEST_PROP(TraceTime, MatchesPrintfSeconds, ()) {
  // Every magnitude from nanoseconds to past the exactly-rounded range.
  const int digits = *rc::gen::inRange(1, 19);
  Nanos limit = 1;
  for (int i = 0; i < digits; ++i) limit *= 10;
  const Nanos nanos = *rc::gen::inRange<Nanos>(0, limit);
  RC_ASSERT(appended(nanos, 1'000'000, 12) == printf_fixed(nanos, 1'000'000, 12));
  RC_ASSERT(appended(nanos, 1'000, 0) == printf_fixed(nanos, 1'000, 0));
  // Near a tie: the integer path's rounding boundary.
  const Nanos near_tie = nanos - nanos % 1000 + 499 + *rc::gen::inRange<Nanos>(0, 3);
  RC_ASSERT(appended(near_tie, 1'000'000, 12) == printf_fixed(near_tie, 1'000'000, 12));
  RC_ASSERT(appended(near_tie, 1'000, 0) == printf_fixed(near_tie, 1'000, 0));
}

}  // namespace
}  // namespace mqlab::sim::trace_time_test
