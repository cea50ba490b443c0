// LatencyHistogram: latencies in a fixed, log-bucketed histogram, so a
// benchmark can report p50/p99/p999 over millions of sends in a few
// kilobytes (the HdrHistogram idea, cut down).
//
// Buckets: values 0..31 ns each have their own; above that every power of
// two [2^e, 2^(e+1)) is split into 32 equal buckets. A bucket's width is at
// most 1/32 of its lower bound, so a percentile read as the bucket's upper
// bound is never below the exact value and at most 1/32 (3.1%) above it
// (and never above the largest value recorded). count, min, max and the
// sum are exact.
#pragma once

#include <array>
#include <cstdint>

#include "broker/common/types.h"

namespace mqlab::admin_cli {

class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 5;
  static constexpr int64_t kSubBuckets = int64_t{1} << kSubBucketBits;  // 32
  // 32 exact buckets, then 32 per power of two from 2^5 to 2^62.
  static constexpr size_t kBucketCount = kSubBuckets + (63 - kSubBucketBits) * kSubBuckets;

  // Requires: value >= 0.
  void record(Nanos value);
  void merge(const LatencyHistogram& other);
  void reset() { *this = LatencyHistogram(); }

  uint64_t count() const { return count_; }
  Nanos min() const { return count_ == 0 ? 0 : min_; }
  Nanos max() const { return max_; }
  double mean() const { return count_ == 0 ? 0.0 : static_cast<double>(sum_) / static_cast<double>(count_); }
  // Nearest rank: the smallest recorded value v such that at least
  // ceil(q * count) values are <= v, rounded up to its bucket's upper bound
  // (see above). Requires: 0 < q <= 1. 0 when empty.
  Nanos percentile(double q) const;

  // The bucket holding value and the largest value that bucket holds.
  static size_t bucket_of(Nanos value);
  static Nanos bucket_upper_bound(size_t bucket);

 private:
  std::array<uint64_t, kBucketCount> counts_{};
  uint64_t count_ = 0;
  Nanos min_ = 0;
  Nanos max_ = 0;
  // Sum of values; int64 overflows only after 292 years of latency in total.
  Nanos sum_ = 0;
};

}  // namespace mqlab::admin_cli
