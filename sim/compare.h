// Compare: `mqsim compare FILE` runs every cell of a matrix scenario
// (topology presets x flush types x named fault schedules, scenario.h's
// expand_matrix) over its seeds, each (cell, seed) in a forked child
// (sim/forked_runs.h), J at a time, and aggregates them into one report
// (sim/compare_report.h) that reports/render.py turns into summary.md,
// summary.csv and index.html.
//
// Sharding is sweep's (sim/sweep.h): the runs, in matrix order then seed,
// are dealt out so that shard i/n runs every n-th from the i-th, and
// `mqsim merge` joins the shards' report.json files into the report one
// unsharded compare writes.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "broker/common/status.h"
#include "sim/compare_report.h"
#include "sim/forked_runs.h"
#include "sim/scenario.h"
#include "sim/sweep.h"

namespace mqlab::sim {

struct CompareOptions {
  std::optional<SeedRange> seeds;  // instead of the matrix's seeds
  Shard shard;
  int jobs = 1;  // children at a time
};

// One run of the compare: a cell and a seed.
struct CompareRun {
  size_t cell = 0;  // into the expanded cells
  uint64_t seed = 0;
};

// The matrix's cells, named as expand_matrix names them. Requires: base.matrix.
std::vector<CompareCell> compare_cells(const Scenario& base);
// The runs of options' shard, in matrix order then seed.
std::vector<CompareRun> compare_runs(size_t cells, const SeedRange& seeds, const Shard& shard);
// The seeds a compare runs: options.seeds, else the matrix's, else the file's.
SeedRange compare_seeds(const Scenario& base, const CompareOptions& options);

// Called in the parent as each run finishes (in completion order).
using CompareRunDone = std::function<void(const TaskOutcome& outcome)>;

// Runs the shard's runs of base (a matrix scenario read from scenario_path,
// whose bytes are scenario_text) and returns the report. Fails only when the
// matrix does not expand or the machinery fails (see run_forked); failing
// runs are in the report. Requires: base.matrix; options.jobs >= 1.
Result<nlohmann::json> run_compare(const Scenario& base, const std::string& scenario_path,
                                   const std::string& scenario_text, const CompareOptions& options,
                                   const CompareRunDone& done = nullptr);

// The concrete scenario named cell ("topology/flush/fault") of
// base's matrix; InvalidArgument listing the cells when there is none.
Result<Scenario> matrix_cell(const Scenario& base, const std::string& cell);

}  // namespace mqlab::sim
