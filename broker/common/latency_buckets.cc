#include "broker/common/latency_buckets.h"

#include <algorithm>

#include "broker/common/assert.h"

namespace mqlab {

static_assert(std::is_sorted(LatencyBuckets::kBoundsNs.begin(), LatencyBuckets::kBoundsNs.end()));
static_assert(LatencyBuckets::kBoundsNs.front() > 0);

void LatencyBuckets::record(Nanos value_ns) {
  MQ_ASSERT(value_ns >= 0);
  // lower_bound: the first bound >= value, so a value equal to a bound
  // counts in that bound's bucket (`le` is inclusive).
  const auto* at = std::lower_bound(kBoundsNs.begin(), kBoundsNs.end(), value_ns);
  const size_t bucket = static_cast<size_t>(at - kBoundsNs.begin());
  MQ_ASSERT(bucket <= kBoundCount);
  ++counts_[bucket];
  ++count_;
  sum_ns_ += value_ns;
  MQ_ASSERT(sum_ns_ >= 0);  // 292 years of latency before it overflows
}

uint64_t LatencyBuckets::bucket_count(size_t bucket) const {
  MQ_ASSERT(bucket <= kBoundCount);
  return counts_[bucket];
}

uint64_t LatencyBuckets::cumulative_count(size_t bucket) const {
  MQ_ASSERT(bucket <= kBoundCount);
  uint64_t total = 0;
  for (size_t i = 0; i <= bucket; ++i) total += counts_[i];
  if (bucket == kBoundCount) MQ_ASSERT(total == count_);
  return total;
}

}  // namespace mqlab
