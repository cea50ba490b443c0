// SeedRun: one seed of one scenario, run the way every mqsim command runs it
// (run and replay, each seed of a sweep, each candidate schedule of a
// shrink). It routes the broker's log lines into the trace at virtual time,
// merges the clients' sends and receipts in (sim/message_trace.h), and
// reports what only this level knows on top of run_to_json(): the message
// digest, the scenario file and the wall time.
//
// Everything in a SeedRun but wall_seconds is a function of the scenario,
// the seed and the fault schedule: the determinism tests compare the trace
// bytes and the JSON with wall_seconds removed.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "faults/fault_schedule.h"
#include "sim/scenario.h"
#include "sim/sim_world.h"

namespace mqlab::sim {

struct SeedRunOptions {
  std::ostream* trace = nullptr;  // the full trace (events, log lines, messages); nullptr: none
  // Inject exactly these faults instead of the scenario's (see SimWorld).
  std::optional<faults::FaultSchedule> schedule;
};

struct SeedRun {
  RunResult result;
  std::string history_digest;  // of the message lines
  uint64_t history_lines = 0;
  double wall_seconds = 0;
};

SeedRun run_seed(const Scenario& scenario, uint64_t seed, const SeedRunOptions& options = {});

// run_to_json() plus scenario_file, scenario_hash, history_digest,
// history_lines and wall_seconds.
nlohmann::json seed_run_to_json(const SeedRun& run, const Scenario& scenario, const std::string& scenario_path);

// Seconds of wall time from an arbitrary origin, read through the real Env's
// clock: for wall_seconds and ETAs only, never seen by a simulation.
double wall_clock_seconds();

}  // namespace mqlab::sim
