// RunSeries: the compact distributions and time series of one run that a
// report plots but the checker's summary figures cannot give back: latency
// histograms (for CDFs that still merge exactly across seeds and faults) and
// each replicated group's replication lag sampled over the safety phase.
//
// Latency histograms have fixed log-spaced buckets, kBucketsPerDecade per
// decade from kHistogramMinNs: bucket 0 holds [0, edge(1)), bucket i holds
// [edge(i), edge(i + 1)), the last one everything from its edge up. Fixed
// edges are what let two runs' histograms be summed bucket by bucket.
//
// Replication lag is the master's CommitLog max offset minus the most
// advanced running slave's, in bytes, sampled every kLagSampleInterval of
// virtual time; a sample is absent (nullopt) while the group's master or
// every slave is down, since then there is no lag to speak of, only an
// outage (which the availability windows show).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "broker/common/types.h"
#include "sim/history.h"

namespace mqlab::sim {

inline constexpr int kBucketsPerDecade = 10;
inline constexpr Nanos kHistogramMinNs = kNanosPerMicro;  // 1 us
inline constexpr int kHistogramBuckets = 8 * kBucketsPerDecade + 1;  // up to 100 s, then one open bucket
inline constexpr Nanos kLagSampleInterval = 500 * kNanosPerMilli;

struct LatencyHistogram {
  std::vector<int64_t> counts = std::vector<int64_t>(kHistogramBuckets, 0);

  void add(Nanos value);
  int64_t total() const;
};

// The lower edge of bucket i (0 for bucket 0), in ns.
Nanos histogram_edge(int bucket);

struct ReplicationLagSeries {
  std::string broker_group;                   // "broker-a"
  std::vector<std::optional<int64_t>> bytes;  // sample k at (k + 1) * kLagSampleInterval
};

struct RunSeries {
  LatencyHistogram send_latency;  // every send that completed, as the checker counts them
  LatencyHistogram e2e_latency;   // send to first receipt by any group
  std::vector<ReplicationLagSeries> replication_lag;  // replicated groups only, by name
};

// The latency histograms of history (replication lag is sampled by SimWorld).
RunSeries latency_series(const History& history);

// {"send_latency_histogram": {...}, "e2e_latency_histogram": {...},
//  "replication_lag": {"interval_s", "groups": [{"group", "bytes": [n|null...]}]}}
// A histogram is {"min_ms", "buckets_per_decade", "counts": [[bucket, count]...]}
// with empty buckets left out.
nlohmann::json run_series_to_json(const RunSeries& series);

}  // namespace mqlab::sim
