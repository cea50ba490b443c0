// CompareReport: the JSON document `mqsim compare` writes as report.json,
// and the short text summary it prints. reports/schema.json is its schema and
// reports/README.md its prose; reports/render.py turns it into summary.md,
// summary.csv and index.html.
//
//   report            "mqsim-compare"
//   schema_version    1
//   scenario, description, scenario_file, scenario_hash, scenario_text,
//   mqlab_version     what was run: the matrix file's own bytes and version
//   duration_s, workload, broker    what the figures are relative to
//   matrix            {topologies, flush, faults: [{name, single_failure, events}], seeds}
//   shard             {index, count}: this report runs only that share; null when whole
//   runs              one record per (cell, seed), in matrix order then seed:
//                     cell, topology, flush, fault, seed, verdict, crash, replay, run
//                     (the run's JSON report, lost messages summarised as lost_classes
//                     and read windows merged per broker)
//   configurations    one per (topology, flush), in matrix order, each with one
//                     cell per fault (see make_compare_report for the figures)
//   lost_classes      every (cell, fault that caused it) that lost messages, with
//                     the seed that lost most and the replay command showing it
//   totals            {runs, passed, failed, crashed, missing}
//   missing_runs      [{cell, seed}] of this report's share with no run; the first 100
//   wall_seconds
//
// Everything but wall_seconds (and each run's own wall_seconds) is computed
// from the per-run records, so merging shard reports gives exactly what an
// unsharded compare reports.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "sim/forked_runs.h"
#include "sim/scenario.h"
#include "sim/sweep.h"

namespace mqlab::sim {

inline constexpr char kCompareReportKind[] = "mqsim-compare";
inline constexpr int kCompareSchemaVersion = 1;

// One concrete scenario of the matrix.
struct CompareCell {
  std::string name;  // "topology/flush/fault"
  std::string topology;  // the row's label: the preset, or "preset+client" (MatrixSpec::Row)
  std::string flush;
  std::string fault;
};

// The header keys of a report (scenario ... broker, matrix, shard) for base,
// a matrix scenario read from scenario_path whose bytes are scenario_text.
// Requires: base.matrix.
nlohmann::json compare_header(const Scenario& base, const std::string& scenario_path, const std::string& scenario_text,
                              const SeedRange& seeds, const Shard& shard);

// "mqsim replay FILE --cell CELL --seed N --trace trace.txt"
std::string cell_replay_command(const std::string& scenario_path, const std::string& cell, uint64_t seed);

// A run's record in `runs`, from its forked run.
nlohmann::json compare_run_record(const CompareCell& cell, uint64_t seed, const TaskOutcome& outcome,
                                  const std::string& scenario_path);

// The whole report: header plus runs (sorted here into matrix order), the
// configurations' cells, lost classes, totals and missing runs.
// Requires: no (cell, seed) twice; every run's cell is in header.matrix.
nlohmann::json make_compare_report(const nlohmann::json& header, std::vector<nlohmann::json> runs,
                                   double wall_seconds);

// Every run passed and none is missing.
bool compare_passed(const nlohmann::json& report);

// Totals, a lost / unavailable overview per configuration and fault, the
// failing runs with their replay commands.
void print_compare_summary(std::ostream& out, const nlohmann::json& report);

}  // namespace mqlab::sim
