// LatencyHistogram: bucket boundaries, and the promise its percentiles keep
// against the exact nearest-rank percentile of the same values (never below,
// at most 1/32 above), checked on random samples.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <vector>

#include "broker/admin_cli/latency_histogram.h"

namespace mqlab::admin_cli::latency_histogram_test {
namespace {

// sim/checker.cc's rule.
Nanos exact_percentile(std::vector<Nanos> values, double q) {
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(q * static_cast<double>(values.size()) + 0.999999);
  rank = std::clamp<size_t>(rank, 1, values.size());
  return values[rank - 1];
}

TEST(LatencyHistogram, BucketsAreExactBelow32AndThen32PerPowerOfTwo) {
  for (Nanos v = 0; v < 32; ++v) {
    EXPECT_EQ(LatencyHistogram::bucket_of(v), static_cast<size_t>(v));
    EXPECT_EQ(LatencyHistogram::bucket_upper_bound(static_cast<size_t>(v)), v);
  }
  EXPECT_EQ(LatencyHistogram::bucket_of(32), 32u);
  EXPECT_EQ(LatencyHistogram::bucket_of(63), 63u);
  EXPECT_EQ(LatencyHistogram::bucket_of(64), 64u);  // width 2 from here
  EXPECT_EQ(LatencyHistogram::bucket_of(65), 64u);
  EXPECT_EQ(LatencyHistogram::bucket_upper_bound(64), 65);
  EXPECT_EQ(LatencyHistogram::bucket_of(INT64_MAX), LatencyHistogram::kBucketCount - 1);
  EXPECT_EQ(LatencyHistogram::bucket_upper_bound(LatencyHistogram::kBucketCount - 1), INT64_MAX);
}

TEST(LatencyHistogram, CountsMinMaxMeanAndPercentiles) {
  LatencyHistogram histogram;
  EXPECT_EQ(histogram.percentile(0.99), 0);
  for (Nanos v = 1; v <= 1000; ++v) histogram.record(v * 1000);
  EXPECT_EQ(histogram.count(), 1000u);
  EXPECT_EQ(histogram.min(), 1000);
  EXPECT_EQ(histogram.max(), 1'000'000);
  EXPECT_DOUBLE_EQ(histogram.mean(), 500'500.0);
  EXPECT_GE(histogram.percentile(0.5), 500'000);
  EXPECT_LE(histogram.percentile(0.5), 500'000 + 500'000 / 32);
  EXPECT_EQ(histogram.percentile(1.0), 1'000'000);  // capped at the max seen

  LatencyHistogram other;
  other.record(7);
  histogram.merge(other);
  EXPECT_EQ(histogram.count(), 1001u);
  EXPECT_EQ(histogram.min(), 7);
  histogram.reset();
  EXPECT_EQ(histogram.count(), 0u);
}

RC_GTEST_PROP(LatencyHistogram, PercentilesBoundTheExactValueWithin1In32, ()) {
  const auto values = *rc::gen::nonEmpty(rc::gen::container<std::vector<Nanos>>(
      rc::gen::oneOf(rc::gen::inRange<Nanos>(0, 100), rc::gen::inRange<Nanos>(0, 10'000'000),
                     rc::gen::inRange<Nanos>(0, int64_t{1} << 40))));
  LatencyHistogram histogram;
  for (Nanos v : values) histogram.record(v);
  for (double q : {0.5, 0.9, 0.99, 0.999, 1.0}) {
    const Nanos exact = exact_percentile(values, q);
    const Nanos approx = histogram.percentile(q);
    RC_ASSERT(approx >= exact);
    RC_ASSERT(approx - exact <= exact / 32);
  }
  RC_ASSERT(histogram.max() == *std::max_element(values.begin(), values.end()));
}

}  // namespace
}  // namespace mqlab::admin_cli::latency_histogram_test
