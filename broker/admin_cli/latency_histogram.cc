#include "broker/admin_cli/latency_histogram.h"

#include <algorithm>
#include <bit>

#include "broker/common/assert.h"

namespace mqlab::admin_cli {

static_assert(LatencyHistogram::kBucketCount == 32 + 58 * 32);  // exact 0..31, then 2^5 .. 2^62

size_t LatencyHistogram::bucket_of(Nanos value) {
  MQ_ASSERT(value >= 0);
  const uint64_t v = static_cast<uint64_t>(value);
  if (v < static_cast<uint64_t>(kSubBuckets)) return static_cast<size_t>(v);
  const int exponent = std::bit_width(v) - 1;  // 2^exponent <= v < 2^(exponent+1), exponent >= 5
  const int shift = exponent - kSubBucketBits;
  const uint64_t sub = (v >> shift) - static_cast<uint64_t>(kSubBuckets);  // 0..31
  const size_t bucket = static_cast<size_t>(kSubBuckets) + static_cast<size_t>(shift) * kSubBuckets + sub;
  MQ_ASSERT(bucket < kBucketCount);
  return bucket;
}

Nanos LatencyHistogram::bucket_upper_bound(size_t bucket) {
  MQ_ASSERT(bucket < kBucketCount);
  if (bucket < static_cast<size_t>(kSubBuckets)) return static_cast<Nanos>(bucket);
  const size_t shift = (bucket - kSubBuckets) / kSubBuckets;
  const uint64_t sub = (bucket - kSubBuckets) % kSubBuckets;
  const uint64_t lower = (static_cast<uint64_t>(kSubBuckets) + sub) << shift;
  const uint64_t upper = lower + ((uint64_t{1} << shift) - 1);
  return static_cast<Nanos>(std::min<uint64_t>(upper, static_cast<uint64_t>(INT64_MAX)));
}

void LatencyHistogram::record(Nanos value) {
  MQ_ASSERT(value >= 0);
  ++counts_[bucket_of(value)];
  min_ = count_ == 0 ? value : std::min(min_, value);
  max_ = std::max(max_, value);
  sum_ += value;
  ++count_;
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  for (size_t i = 0; i < kBucketCount; ++i) counts_[i] += other.counts_[i];
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
  count_ += other.count_;
}

Nanos LatencyHistogram::percentile(double q) const {
  MQ_ASSERT(q > 0.0 && q <= 1.0);
  if (count_ == 0) return 0;
  // The rank rule of sim/checker.cc's summarize_latency, so a real run's
  // percentiles and a simulated run's mean the same thing.
  const uint64_t rank =
      std::clamp<uint64_t>(static_cast<uint64_t>(q * static_cast<double>(count_) + 0.999999), 1, count_);
  uint64_t seen = 0;
  for (size_t bucket = 0; bucket < kBucketCount; ++bucket) {
    seen += counts_[bucket];
    if (seen >= rank) return std::min(bucket_upper_bound(bucket), max_);
  }
  MQ_UNREACHABLE("histogram counts sum to less than count_");
}

}  // namespace mqlab::admin_cli
