#include "sim/checker_latency.h"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

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

// Where a wanted rank's value lies: within [lo, hi] (distances from the
// smallest value), with below values under lo and inside values in it.
struct Narrowing {
  size_t rank = 0;  // 1-based
  uint64_t lo = 0;
  uint64_t hi = 0;
  size_t below = 0;
  size_t inside = 0;
  std::optional<Nanos> value;  // found
};

// One counting pass of the values in [lo, hi] into counts; returns the
// bucket width's shift.
int count_into_buckets(const SpilledRecords<Nanos>& values, Nanos min, uint64_t lo, uint64_t hi,
                       std::vector<size_t>& counts) {
  MQ_ASSERT(lo <= hi && counts.size() == kBuckets);
  const uint64_t span = hi - lo;
  const int shift = span < kBuckets ? 0 : std::bit_width(span) - kBucketBits;
  MQ_ASSERT((span >> shift) < kBuckets);
  std::fill(counts.begin(), counts.end(), 0);
  size_t* const count = counts.data();
  values.for_each_span([&](std::span<const Nanos> span) {
    for (const Nanos value : span) {
      const uint64_t d = distance(value, min);
      if (d < lo || d > hi) continue;
      ++count[(d - lo) >> shift];
    }
  });
  return shift;
}

// Narrows n to the bucket of counts (a pass over n's range, at shift)
// that holds its rank: its value when buckets are one wide.
void narrow_to_bucket(const std::vector<size_t>& counts, int shift, Nanos min, Narrowing& n) {
  MQ_ASSERT(!n.value && n.below < n.rank);
  size_t bucket = 0;
  for (; n.below + counts[bucket] < n.rank; ++bucket) n.below += counts[bucket];
  MQ_ASSERT(bucket < kBuckets);
  if (shift == 0) {
    n.value = static_cast<Nanos>(static_cast<uint64_t>(min) + n.lo + bucket);
    return;
  }
  const uint64_t bucket_lo = n.lo + (uint64_t{bucket} << shift);
  n.hi = std::min(n.hi, bucket_lo + ((uint64_t{1} << shift) - 1));
  n.lo = bucket_lo;
  n.inside = counts[bucket];
}

// The value of n's rank among the values gathered from its range.
Nanos select_within(std::vector<uint64_t>& in_range, const Narrowing& n, Nanos min) {
  MQ_ASSERT(in_range.size() == n.inside);
  const size_t within = n.rank - n.below - 1;
  std::nth_element(in_range.begin(), in_range.begin() + static_cast<std::ptrdiff_t>(within), in_range.end());
  return static_cast<Nanos>(static_cast<uint64_t>(min) + in_range[within]);
}

// One pass gathering the values in the ranges of narrowings[pending] (each
// small enough to sort) and finding each one's value among them.
void gather_and_select(const SpilledRecords<Nanos>& values, Nanos min, std::vector<Narrowing>& narrowings,
                       const std::vector<size_t>& pending) {
  std::vector<std::vector<uint64_t>> in_range(pending.size());
  for (size_t k = 0; k < pending.size(); ++k) {
    MQ_ASSERT(!narrowings[pending[k]].value && narrowings[pending[k]].inside <= kSortedAtOnce);
    in_range[k].reserve(narrowings[pending[k]].inside);
  }
  // The ranges in a local array: narrowings[pending[k]] read through two
  // vectors per value and range.
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const size_t i : pending) ranges.emplace_back(narrowings[i].lo, narrowings[i].hi);
  values.for_each_span([&](std::span<const Nanos> span) {
    for (const Nanos value : span) {
      const uint64_t d = distance(value, min);
      for (size_t k = 0; k < ranges.size(); ++k) {
        if (d >= ranges[k].first && d <= ranges[k].second) in_range[k].push_back(d);
      }
    }
  });
  for (size_t k = 0; k < pending.size(); ++k) {
    narrowings[pending[k]].value = select_within(in_range[k], narrowings[pending[k]], min);
  }
}

// The rank-th smallest value for each of ranks, whose smallest is min and
// largest max. The ranks share the first pass (every one starts from the
// whole range) and, when their buckets are small enough together, the pass
// that gathers them: two passes for them all where each took two of its own.
// A rank whose bucket is crowded, or that cannot join the shared gathering,
// is narrowed pass by pass on its own until it can be gathered.
std::vector<Nanos> select_ranks(const SpilledRecords<Nanos>& values, const std::vector<size_t>& ranks, Nanos min,
                                Nanos max) {
  std::vector<size_t> counts(kBuckets);
  const uint64_t span = distance(max, min);
  const int shift = count_into_buckets(values, min, 0, span, counts);
  std::vector<Narrowing> narrowings;
  std::vector<size_t> pending;  // gathered together in one pass
  size_t gathered = 0;
  for (const size_t rank : ranks) {
    MQ_ASSERT(rank >= 1 && rank <= values.size());
    Narrowing& n = narrowings.emplace_back(Narrowing{rank, 0, span, 0, values.size(), std::nullopt});
    narrow_to_bucket(counts, shift, min, n);
    if (!n.value && n.inside <= kSortedAtOnce) {
      pending.push_back(narrowings.size() - 1);
      gathered += n.inside;
    }
  }
  if (!pending.empty() && gathered <= kSortedAtOnce) gather_and_select(values, min, narrowings, pending);
  for (size_t i = 0; i < narrowings.size(); ++i) {
    Narrowing& n = narrowings[i];
    while (!n.value && n.inside > kSortedAtOnce) {
      narrow_to_bucket(counts, count_into_buckets(values, min, n.lo, n.hi, counts), min, n);
    }
    if (!n.value) gather_and_select(values, min, narrowings, {i});
  }
  std::vector<Nanos> found;
  for (const Narrowing& n : narrowings) found.push_back(*n.value);
  return found;
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
    values.for_each_span([&copy](std::span<const Nanos> span) { copy.insert(copy.end(), span.begin(), span.end()); });
    return summarize_latency(copy);
  }
  LatencySummary summary;
  summary.count = static_cast<int64_t>(values.size());
  Nanos min = std::numeric_limits<Nanos>::max();
  Nanos max = std::numeric_limits<Nanos>::min();
  values.for_each_span([&](std::span<const Nanos> span) {
    for (const Nanos value : span) {
      min = std::min(min, value);
      max = std::max(max, value);
    }
  });
  const size_t n = values.size();
  const std::vector<Nanos> found = select_ranks(
      values, {nearest_rank(0.50, n), nearest_rank(0.90, n), nearest_rank(0.99, n), nearest_rank(0.999, n)}, min, max);
  summary.p50 = found[0];
  summary.p90 = found[1];
  summary.p99 = found[2];
  summary.p999 = found[3];
  summary.max = max;
  MQ_ASSERT(summary.p50 <= summary.p90 && summary.p90 <= summary.p99);
  MQ_ASSERT(summary.p99 <= summary.p999 && summary.p999 <= summary.max);
  return summary;
}

}  // namespace mqlab::sim
