// Forked runs: many simulations of one scenario, each in a child process,
// up to `jobs` at a time, for mqsim sweep and mqsim shrink. The simulator
// itself stays single-threaded and deterministic: fork() hands each child the
// loaded scenario, the child runs one seed, writes its run's JSON
// (seed_run_to_json) to a file in a private temporary directory and exits,
// and the parent reads the file when it reaps the child.
//
// A child that dies (an MQ_ASSERT aborts after printing its seed and virtual
// time to stderr) costs only its own run: the parent records how it died and
// carries on. Outcomes come back in task order whatever order the children
// finish in, so nothing downstream depends on `jobs`.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "broker/common/status.h"
#include "faults/fault_schedule.h"
#include "sim/scenario.h"

namespace mqlab::sim {

struct RunTask {
  uint64_t seed = 0;
  std::optional<faults::FaultSchedule> schedule;  // instead of the scenario's
  // Run this scenario instead of run_forked's (one cell of a matrix, for
  // mqsim compare); it must outlive run_forked.
  const Scenario* scenario = nullptr;
};

struct TaskOutcome {
  bool crashed = false;
  std::string crash;   // "killed by signal 6 (Aborted)", "exit status 3"
  nlohmann::json run;  // seed_run_to_json(), unless crashed
};

// Called in the parent as each task finishes (in completion order), e.g. to
// draw a progress line.
using TaskDone = std::function<void(size_t task, const TaskOutcome& outcome)>;

// Requires: jobs >= 1. Fails only when the machinery does (no temporary
// directory, fork() refused); a run that fails or crashes is an outcome.
Result<std::vector<TaskOutcome>> run_forked(const Scenario& scenario, const std::string& scenario_path,
                                            const std::vector<RunTask>& tasks, int jobs,
                                            const TaskDone& done = nullptr);

}  // namespace mqlab::sim
