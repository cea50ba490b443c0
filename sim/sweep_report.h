// SweepReport: the JSON document of a sweep, or of a merge of sweeps, and
// the summary printed for it. Everything in it is computed from the per-seed
// records alone, so merging shard reports gives exactly what one unsharded
// sweep reports (but wall_seconds, which is the shards' sum).
//
//   report          "mqsim-sweep"
//   scenario, scenario_file, scenario_hash, mqlab_version    what was run
//   seed_ranges     [{first, last}]: the seeds the sweep is about
//   shard           {index, count}: this report runs only that share; null when whole
//   runs            one record per seed run, by seed: seed, verdict (passed,
//                   failed, crashed), reason, figures (null when crashed),
//                   trace_digest, history_digest, events_run, virtual_end_s, wall_seconds
//   totals          {runs, passed, failed, crashed, missing}
//   figures         {figure: {min, median, max}} over the runs that finished;
//                   nested figures are dotted ("send_latency.p99_ms")
//   failing_seeds   [{seed, verdict, reason, replay}]
//   missing_seeds   seeds of seed_ranges (this shard's share) with no run; the first 100
//   wall_seconds
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/forked_runs.h"
#include "sim/scenario.h"
#include "sim/sweep.h"

namespace mqlab::sim {

inline constexpr char kSweepReportKind[] = "mqsim-sweep";

struct SweepHeader {
  std::string scenario;
  std::string scenario_file;
  std::string scenario_hash;
  std::string mqlab_version = MQLAB_VERSION;
  std::vector<SeedRange> seed_ranges;
  std::optional<Shard> shard;
};

// A seed's record in `runs`, from its forked run.
nlohmann::json seed_record(uint64_t seed, const TaskOutcome& outcome);

// The report of runs (sorted here by seed): totals, figures, failing and
// missing seeds. Requires: no seed twice.
nlohmann::json make_sweep_report(const SweepHeader& header, std::vector<nlohmann::json> runs, double wall_seconds);

// Every run passed and no seed is missing.
bool sweep_passed(const nlohmann::json& report);

// The per-seed table, totals, figures, failing seeds with their replay
// commands, and missing seeds.
void print_sweep_summary(std::ostream& out, const nlohmann::json& report);

}  // namespace mqlab::sim
