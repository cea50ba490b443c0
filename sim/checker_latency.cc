#include "sim/checker_latency.h"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>

#include "broker/common/assert.h"

namespace mqlab::sim {
namespace {

constexpr int kBucketBits = 16;
constexpr size_t kBuckets = size_t{1} << kBucketBits;
// A bucket holding at most this many values is copied and sorted rather
// than narrowed again (512 KiB of values, as much as the bucket table).
constexpr size_t kSortedAtOnce = size_t{1} << 16;

// Values as distances from the smallest one, so negative latencies (a real
// run's clocks may disagree) order as they should.
uint64_t distance(Nanos value, Nanos min) { return static_cast<uint64_t>(value) - static_cast<uint64_t>(min); }

// The rank-th smallest (1-based) of values, whose smallest is min and largest max.
Nanos select_rank(const SpilledRecords<Nanos>& values, size_t rank, Nanos min, Nanos max) {
  MQ_ASSERT(rank >= 1 && rank <= values.size());
  uint64_t lo = 0;                     // the rank-th value's distance lies in [lo, hi]
  uint64_t hi = distance(max, min);
  size_t below = 0;                    // values whose distance is below lo
  std::vector<size_t> counts(kBuckets);
  while (true) {
    MQ_ASSERT(lo <= hi);
    MQ_ASSERT(below < rank);
    const uint64_t span = hi - lo;
    const int shift = span < kBuckets ? 0 : std::bit_width(span) - kBucketBits;
    MQ_ASSERT((span >> shift) < kBuckets);
    std::fill(counts.begin(), counts.end(), 0);
    size_t inside = 0;
    for (const Nanos value : values) {
      const uint64_t d = distance(value, min);
      if (d < lo || d > hi) continue;
      ++counts[(d - lo) >> shift];
      ++inside;
    }
    MQ_ASSERT(below + inside >= rank);  // the range holds the rank
    size_t bucket = 0;
    for (; below + counts[bucket] < rank; ++bucket) below += counts[bucket];
    MQ_ASSERT(bucket < kBuckets);
    if (shift == 0) return static_cast<Nanos>(static_cast<uint64_t>(min) + lo + bucket);
    const uint64_t bucket_lo = lo + (uint64_t{bucket} << shift);
    const uint64_t bucket_hi = std::min(hi, bucket_lo + ((uint64_t{1} << shift) - 1));
    if (counts[bucket] <= kSortedAtOnce) {
      std::vector<uint64_t> in_bucket;
      in_bucket.reserve(counts[bucket]);
      for (const Nanos value : values) {
        const uint64_t d = distance(value, min);
        if (d >= bucket_lo && d <= bucket_hi) in_bucket.push_back(d);
      }
      MQ_ASSERT(in_bucket.size() == counts[bucket]);
      const size_t within = rank - below - 1;
      std::nth_element(in_bucket.begin(), in_bucket.begin() + static_cast<std::ptrdiff_t>(within), in_bucket.end());
      return static_cast<Nanos>(static_cast<uint64_t>(min) + in_bucket[within]);
    }
    lo = bucket_lo;
    hi = bucket_hi;
  }
}

}  // namespace

size_t nearest_rank(double q, size_t count) {
  MQ_ASSERT(count > 0);
  const size_t rank = static_cast<size_t>(q * static_cast<double>(count) + 0.999999);
  return std::clamp<size_t>(rank, 1, count);
}

LatencySummary summarize_latency(std::vector<Nanos>& values) {
  LatencySummary summary;
  summary.count = static_cast<int64_t>(values.size());
  if (values.empty()) return summary;
  std::sort(values.begin(), values.end());
  auto at = [&](double q) { return values[nearest_rank(q, values.size()) - 1]; };
  summary.p50 = at(0.50);
  summary.p90 = at(0.90);
  summary.p99 = at(0.99);
  summary.p999 = at(0.999);
  summary.max = values.back();
  return summary;
}

LatencySummary summarize_latency(const SpilledRecords<Nanos>& values) {
  if (values.size() <= kSortedAtOnce) {  // small enough to sort a copy
    std::vector<Nanos> copy;
    copy.reserve(values.size());
    copy.assign(values.begin(), values.end());
    return summarize_latency(copy);
  }
  LatencySummary summary;
  summary.count = static_cast<int64_t>(values.size());
  Nanos min = std::numeric_limits<Nanos>::max();
  Nanos max = std::numeric_limits<Nanos>::min();
  for (const Nanos value : values) {
    min = std::min(min, value);
    max = std::max(max, value);
  }
  const auto at = [&](double q) { return select_rank(values, nearest_rank(q, values.size()), min, max); };
  summary.p50 = at(0.50);
  summary.p90 = at(0.90);
  summary.p99 = at(0.99);
  summary.p999 = at(0.999);
  summary.max = max;
  MQ_ASSERT(summary.p50 <= summary.p90 && summary.p90 <= summary.p99);
  MQ_ASSERT(summary.p99 <= summary.p999 && summary.p999 <= summary.max);
  return summary;
}

}  // namespace mqlab::sim
