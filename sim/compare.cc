#include "sim/compare.h"

#include "broker/common/assert.h"
#include "sim/seed_run.h"

namespace mqlab::sim {

std::vector<CompareCell> compare_cells(const Scenario& base) {
  MQ_ASSERT(base.matrix.has_value());
  const MatrixSpec& m = *base.matrix;
  std::vector<CompareCell> cells;
  // The order and names of expand_matrix.
  for (const MatrixSpec::Row& row : m.rows()) {
    for (const store::FlushDiskType flush : m.flush) {
      for (const std::string& fault : m.fault_names) {
        const std::string flush_name = store::flush_disk_type_name(flush);
        cells.push_back(CompareCell{row.label + "/" + flush_name + "/" + fault, row.label, flush_name, fault});
      }
    }
  }
  MQ_ASSERT(cells.size() == m.size());
  return cells;
}

std::vector<CompareRun> compare_runs(size_t cells, const SeedRange& seeds, const Shard& shard) {
  MQ_ASSERT(shard.index < shard.count);
  std::vector<CompareRun> all;
  for (size_t cell = 0; cell < cells; ++cell) {
    for (const uint64_t seed : shard_seeds(seeds, Shard{})) all.push_back(CompareRun{cell, seed});
  }
  std::vector<CompareRun> share;
  for (size_t i = shard.index; i < all.size(); i += shard.count) share.push_back(all[i]);
  return share;
}

SeedRange compare_seeds(const Scenario& base, const CompareOptions& options) {
  if (options.seeds) return *options.seeds;
  if (base.matrix && base.matrix->seeds) return *base.matrix->seeds;
  return base.seeds;
}

Result<nlohmann::json> run_compare(const Scenario& base, const std::string& scenario_path,
                                   const std::string& scenario_text, const CompareOptions& options,
                                   const CompareRunDone& done) {
  MQ_ASSERT(base.matrix.has_value());
  MQ_ASSERT(options.jobs >= 1);
  const double wall_start = wall_clock_seconds();
  MQ_ASSIGN_OR_RETURN(std::vector<Scenario> scenarios, expand_matrix(base));
  const std::vector<CompareCell> cells = compare_cells(base);
  MQ_ASSERT(scenarios.size() == cells.size());
  for (size_t i = 0; i < cells.size(); ++i) MQ_ASSERT(scenarios[i].name == cells[i].name);

  const SeedRange seeds = compare_seeds(base, options);
  const std::vector<CompareRun> runs = compare_runs(cells.size(), seeds, options.shard);
  std::vector<RunTask> tasks;
  for (const CompareRun& run : runs) tasks.push_back(RunTask{run.seed, std::nullopt, &scenarios[run.cell]});
  Result<std::vector<TaskOutcome>> outcomes =
      run_forked(base, scenario_path, tasks, options.jobs, [&done](size_t, const TaskOutcome& outcome) {
        if (done) done(outcome);
      });
  if (!outcomes.ok()) return outcomes.status();
  MQ_ASSERT(outcomes->size() == runs.size());

  std::vector<nlohmann::json> records;
  for (size_t i = 0; i < runs.size(); ++i) {
    records.push_back(compare_run_record(cells[runs[i].cell], runs[i].seed, (*outcomes)[i], scenario_path));
  }
  const nlohmann::json header = compare_header(base, scenario_path, scenario_text, seeds, options.shard);
  return make_compare_report(header, std::move(records), wall_clock_seconds() - wall_start);
}

Result<Scenario> matrix_cell(const Scenario& base, const std::string& cell) {
  MQ_ASSERT(base.matrix.has_value());
  MQ_ASSIGN_OR_RETURN(std::vector<Scenario> scenarios, expand_matrix(base));
  std::string names;
  for (Scenario& scenario : scenarios) {
    if (scenario.name == cell) return std::move(scenario);
    names += (names.empty() ? "" : ", ") + scenario.name;
  }
  return Status::InvalidArgument("--cell: '" + cell + "' is not a cell of " + base.source + "; expected one of: " + names);
}

}  // namespace mqlab::sim
