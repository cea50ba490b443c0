// FaultSchedule: the faults of one run, in time order, and the timeline of
// start and end actions an injector carries out. Two ways to make one: a
// fixed list from a scenario file, or generate_nemesis() from rates and
// constraints. mqsim shrink removes events from a schedule (without()).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "broker/common/status.h"
#include "broker/env/random.h"
#include "faults/fault.h"

namespace mqlab::faults {

struct FaultSchedule {
  std::vector<FaultEvent> events;  // sorted by at (then by the event itself)

  void sort();
  // The schedule with only the events whose keep[i] is true.
  FaultSchedule without(const std::vector<bool>& keep) const;
  // One line per event.
  std::string describe() const;
};

// A fault starting or ending: what an injector does at one instant.
struct FaultAction {
  Nanos at = 0;
  bool start = true;  // false: the end of the event (restart, heal, power on)
  size_t event = 0;   // index into FaultSchedule::events
};

// Every start and every end (for events with a duration), by time; at one
// instant ends come before starts, so a heal is applied before a new fault.
std::vector<FaultAction> timeline(const FaultSchedule& schedule);

// What the nemesis may hit.
struct NemesisTarget {
  std::string machine;
  std::vector<std::string> processes;  // processes on the machine (kill, pause)
  int disks = 1;                       // disk indexes 0..disks-1
  bool raid10 = false;                 // disks are RAID10 members: i and i^1 mirror each other
};

struct NemesisRate {
  FaultKind kind = FaultKind::kKillProcess;
  double per_minute = 0;  // Poisson arrival rate
  Nanos min_duration = seconds(5);
  Nanos max_duration = seconds(30);
};

struct NemesisConfig {
  std::vector<NemesisRate> rates;
  Nanos window_start = 0;     // faults start at or after this
  Nanos window_end = 0;       // ... and before this (0: the run's end)
  Nanos quiet_period = 0;     // no fault is active during the run's last quiet_period
  int max_machines_down = 1;  // machines unavailable at once (killed, paused, crashed, isolated)
  bool never_both_disks_of_a_mirror = true;
};

Status validate_nemesis(const NemesisConfig& config, Nanos run_duration);

// Draws a schedule from config over [0, run_duration). Deterministic in
// random. A candidate that would break a constraint is dropped (not moved),
// so rates are upper bounds; the result says how many were dropped.
struct NemesisResult {
  FaultSchedule schedule;
  int candidates = 0;
  int dropped_by_constraints = 0;
};
NemesisResult generate_nemesis(const NemesisConfig& config, const std::vector<NemesisTarget>& targets,
                               Nanos run_duration, env::Random& random);

}  // namespace mqlab::faults
