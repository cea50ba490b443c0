// LatencyBuckets: a latency distribution in fixed buckets, the shape a
// Prometheus histogram exposes (cumulative `le` buckets, a sum, a count).
// The broker records puts (SendMessageProcessor) and CommitLog flushes
// (MappedFileQueue) in one each; /metrics renders them and mqsim may read
// them, since recording is deterministic: integer nanoseconds in, integer
// counts out, no clock of its own.
//
// Bounds: 1, 2.5 and 5 per decade from 10 us to 10 s (19 bounds, log spaced,
// as Prometheus' own default buckets are), then +Inf. A put on a page cache
// takes tens of microseconds, an fsync on an SSD a millisecond, a
// SYNC_MASTER put behind a slow slave seconds; all land in a bucket that
// tells them apart.
//
// Invariants: count() == the sum of every bucket's count (the +Inf bucket
// included); sum_ns() is the exact sum of what was recorded; bounds strictly
// increase.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "broker/common/types.h"

namespace mqlab {

class LatencyBuckets {
 public:
  static constexpr size_t kBoundCount = 19;
  // Upper bounds (inclusive, as Prometheus' `le`) in nanoseconds.
  static constexpr std::array<Nanos, kBoundCount> kBoundsNs = {
      10'000,      25'000,        50'000,        100'000,       250'000,     500'000,     1'000'000,
      2'500'000,   5'000'000,     10'000'000,    25'000'000,    50'000'000,  100'000'000, 250'000'000,
      500'000'000, 1'000'000'000, 2'500'000'000, 5'000'000'000, 10'000'000'000};

  // Requires: value_ns >= 0 (a duration on a monotonic clock).
  void record(Nanos value_ns);

  uint64_t count() const { return count_; }
  Nanos sum_ns() const { return sum_ns_; }
  // Recorded values <= kBoundsNs[i]; bucket kBoundCount is +Inf (== count()).
  uint64_t cumulative_count(size_t bucket) const;
  // Recorded values in bucket i alone (kBoundCount: above the last bound).
  uint64_t bucket_count(size_t bucket) const;

 private:
  std::array<uint64_t, kBoundCount + 1> counts_{};
  uint64_t count_ = 0;
  Nanos sum_ns_ = 0;
};

}  // namespace mqlab
