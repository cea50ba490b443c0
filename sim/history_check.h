// Judging a real run: the checker (sim/checker.h) over a history loaded from
// files (sim/history_file.h), into the RunResult that mqsim run produces, so
// `mqsim check` and mqrealrun print the same figure table and write the same
// JSON report (sim/run_report.h) as a simulated run of the same scenario.
//
// What a real run cannot know is said, not faked: there is no loss bound
// (it needs the simulator's view of replication at each fault's instant), no
// trace digest, and convergence is whether every acknowledged message
// reached every checked group (the drain), not a liveness phase.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "faults/fault_schedule.h"
#include "sim/history_file.h"
#include "sim/scenario.h"
#include "sim/sim_world.h"

namespace mqlab::sim {

struct HistoryCheckOptions {
  // Groups expected to receive every acknowledged message; empty: every
  // group that has a receipt.
  std::vector<std::string> consumer_groups;
  // When given: its machine names attribute losses to faults, and its
  // expect: section is evaluated (the run passes when every one holds).
  // Without one the run passes when nothing acknowledged was lost.
  const Scenario* scenario = nullptr;
  // The faults the run injected; default: the scenario's fixed list.
  std::optional<faults::FaultSchedule> schedule;
};

RunResult check_loaded_history(const LoadedHistory& loaded, const HistoryCheckOptions& options);
// run_to_json's report plus "source": "real", "history" (files, origin,
// counts) and each lost message's producer and producer seq.
nlohmann::json history_check_to_json(const RunResult& result, const LoadedHistory& loaded);
// The figure table (as mqsim run prints it), the lost messages by name,
// unavailable windows, per-queue reordering, expectations and the verdict.
void print_history_check(std::ostream& out, const RunResult& result, const LoadedHistory& loaded);

}  // namespace mqlab::sim
