// Strongly typed offsets and durations, so the compiler catches a CommitLog
// physical offset passed where a ConsumeQueue logical offset was meant.
//
//   PhyOffset    absolute byte offset in the CommitLog (file start + position)
//   QueueOffset  logical index of an entry in one ConsumeQueue
//   Nanos        a duration or a monotonic instant, in nanoseconds
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

namespace mqlab {

template <typename Tag>
class StrongOffset {
 public:
  constexpr StrongOffset() = default;
  constexpr explicit StrongOffset(int64_t value) : value_(value) {}
  constexpr int64_t value() const { return value_; }

  constexpr auto operator<=>(const StrongOffset&) const = default;
  constexpr StrongOffset operator+(int64_t delta) const { return StrongOffset(value_ + delta); }
  constexpr StrongOffset operator-(int64_t delta) const { return StrongOffset(value_ - delta); }
  constexpr int64_t operator-(StrongOffset other) const { return value_ - other.value_; }
  constexpr StrongOffset& operator+=(int64_t delta) {
    value_ += delta;
    return *this;
  }
  std::string to_string() const { return std::to_string(value_); }

 private:
  int64_t value_ = 0;
};

using PhyOffset = StrongOffset<struct PhyOffsetTag>;
using QueueOffset = StrongOffset<struct QueueOffsetTag>;

using Nanos = int64_t;
constexpr Nanos kNanosPerMicro = 1'000;
constexpr Nanos kNanosPerMilli = 1'000'000;
constexpr Nanos kNanosPerSecond = 1'000'000'000;
constexpr Nanos millis(int64_t ms) { return ms * kNanosPerMilli; }
constexpr Nanos seconds(int64_t s) { return s * kNanosPerSecond; }
// For reports and summaries only: a double loses nanoseconds past ~104 days.
constexpr double seconds_of(Nanos ns) { return static_cast<double>(ns) / kNanosPerSecond; }

// The most bytes an int64 takes as decimal text: 19 digits and a sign.
inline constexpr size_t kInt64Bytes = std::numeric_limits<int64_t>::digits10 + 2;

}  // namespace mqlab
