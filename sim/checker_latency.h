// Latency percentiles for the checker (sim/checker.h): nearest-rank p50,
// p90, p99, p999 and the max, exact, of a run's send round trips and end to
// end latencies.
//
// A long run has millions of them (one or two per message), too many to
// hold beside everything else at the end of a run, so they are kept in a
// SpilledRecords (sim/history_spill.h) and their percentiles found by
// narrowing, not by sorting: each pass over the values counts them into
// 64 Ki buckets of the range the wanted rank is known to lie in, and the
// next pass looks only inside the bucket that holds it, until a bucket is
// one value wide or small enough to sort. The percentiles share the first
// pass, and the gathering pass when their buckets hold at most 64 Ki values
// together: two passes in all, usually, and a few more for a percentile
// whose bucket is crowded. Memory a bucket table and at most 64 Ki values
// (1 MiB in all). The result is the very value sorting all of them would
// give.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "broker/common/types.h"
#include "sim/history_spill.h"

namespace mqlab::sim {

struct LatencySummary {
  int64_t count = 0;
  Nanos p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
};

// Nearest-rank percentiles of values (sorted in place).
LatencySummary summarize_latency(std::vector<Nanos>& values);
// The same figures of values as the vector form gives, by narrowing passes.
LatencySummary summarize_latency(const SpilledRecords<Nanos>& values);

// The nearest rank (1-based) of quantile q among count values: the rule of
// both forms above (and of broker/admin_cli's histogram).
size_t nearest_rank(double q, size_t count);

}  // namespace mqlab::sim
