#include "sim/run_series.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "broker/common/assert.h"

namespace mqlab::sim {
namespace {

// edge(i) = 1 us * 10^(i / kBucketsPerDecade), rounded to whole ns once, so
// every run buckets a value the same way.
const std::array<Nanos, kHistogramBuckets>& edges() {
  static const std::array<Nanos, kHistogramBuckets> table = [] {
    std::array<Nanos, kHistogramBuckets> t{};
    for (int i = 0; i < kHistogramBuckets; ++i) {
      t[static_cast<size_t>(i)] = std::llround(static_cast<double>(kHistogramMinNs) *
                                                std::pow(10.0, static_cast<double>(i) / kBucketsPerDecade));
    }
    t[0] = 0;  // bucket 0 also holds everything below 1 us
    return t;
  }();
  return table;
}

nlohmann::json histogram_json(const LatencyHistogram& histogram) {
  nlohmann::json counts = nlohmann::json::array();
  for (size_t i = 0; i < histogram.counts.size(); ++i) {
    if (histogram.counts[i] > 0) counts.push_back({i, histogram.counts[i]});
  }
  return {{"min_ms", static_cast<double>(kHistogramMinNs) / kNanosPerMilli},
          {"buckets_per_decade", kBucketsPerDecade},
          {"counts", counts}};
}

}  // namespace

Nanos histogram_edge(int bucket) {
  MQ_ASSERT(bucket >= 0);
  MQ_ASSERT(bucket < kHistogramBuckets);
  return edges()[static_cast<size_t>(bucket)];
}

void LatencyHistogram::add(Nanos value) {
  MQ_ASSERT(value >= 0);
  MQ_ASSERT(counts.size() == static_cast<size_t>(kHistogramBuckets));
  const auto& e = edges();
  // The last edge <= value: upper_bound finds the first edge above it.
  const auto above = std::upper_bound(e.begin(), e.end(), value);
  MQ_ASSERT(above != e.begin());  // edge 0 is 0 and value >= 0
  ++counts[static_cast<size_t>(above - e.begin() - 1)];
}

int64_t LatencyHistogram::total() const {
  int64_t sum = 0;
  for (const int64_t count : counts) sum += count;
  return sum;
}

RunSeries latency_series(const History& history) {
  RunSeries series;
  // The earliest receipt of each message by any group, kept by the History
  // as receipts arrived: no table over the sends here.
  MQ_ASSERT(history.earliest_receipt_at().size() == history.sends().size());
  auto earliest = history.earliest_receipt_at().begin();
  for (const SendRecord& s : history.sends()) {
    MQ_ASSERT(earliest.index() == s.seq);
    const Nanos first = *earliest;
    ++earliest;
    if (s.outcome != SendOutcome::kPending) series.send_latency.add(s.completed_at - s.invoked_at);
    if (first >= 0) series.e2e_latency.add(first - s.invoked_at);
  }
  return series;
}

nlohmann::json run_series_to_json(const RunSeries& series) {
  nlohmann::json groups = nlohmann::json::array();
  for (const ReplicationLagSeries& lag : series.replication_lag) {
    nlohmann::json bytes = nlohmann::json::array();
    for (const std::optional<int64_t>& sample : lag.bytes) {
      bytes.push_back(sample ? nlohmann::json(*sample) : nlohmann::json(nullptr));
    }
    groups.push_back({{"group", lag.broker_group}, {"bytes", bytes}});
  }
  return {{"send_latency_histogram", histogram_json(series.send_latency)},
          {"e2e_latency_histogram", histogram_json(series.e2e_latency)},
          {"replication_lag",
           {{"interval_s", static_cast<double>(kLagSampleInterval) / kNanosPerSecond}, {"groups", groups}}}};
}

}  // namespace mqlab::sim
