// Sweep: one scenario over a range of seeds, each seed in a forked child
// (sim/forked_runs.h), J at a time, with a live progress line when a person
// is watching, aggregated into one report (sim/sweep_report.h).
//
// Sharding lets an existing job runner (GNU parallel, a Slurm job array, a
// Kubernetes Indexed Job) spread one sweep over many machines: shard i/n
// takes every n-th seed of the range starting at the i-th, so shards 0/n ..
// n-1/n cover the range exactly once with about equal work, and `mqsim
// merge` combines their reports into the one an unsharded sweep would write.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/status.h"
#include "sim/scenario.h"

namespace mqlab::sim {

struct Shard {
  uint64_t index = 0;  // 0 <= index < count
  uint64_t count = 1;
};

// "A-B" (or "A..B", as scenario files write it) or "N"; A <= B.
Result<SeedRange> parse_seed_range(std::string_view text);
// "i/n" with 0 <= i < n.
Result<Shard> parse_shard(std::string_view text);
// The seeds of range that shard runs, in order.
std::vector<uint64_t> shard_seeds(const SeedRange& range, const Shard& shard);

struct SweepOptions {
  SeedRange seeds;
  Shard shard;
  int jobs = 1;           // children at a time
  bool progress = false;  // redraw a progress line on stdout (a terminal)
};

// Runs the shard's seeds and returns the sweep report. Fails only when the
// machinery does (see run_forked); failing seeds are in the report.
Result<nlohmann::json> run_sweep(const Scenario& scenario, const std::string& scenario_path,
                                 const SweepOptions& options);

}  // namespace mqlab::sim
