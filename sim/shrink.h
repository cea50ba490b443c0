// Shrink: reduce a failing seed's fault schedule to a minimal set of faults
// that still fails the same way, by delta debugging (Zeller's ddmin) over the
// schedule's events. The seed is rerun with subsets of its own schedule (for
// a nemesis scenario, the schedule that seed drew) through SimWorld's
// schedule override, which splits every random stream as the full run did,
// so removing faults is the only change between candidates.
//
// "The same way": a candidate still fails when one of the original run's
// failures recurs (an expectation it missed, liveness, or a crash), so a
// shrink cannot slide from the bug being chased to a different one.
//
// Candidates run in forked children (sim/forked_runs.h), `jobs` at a time,
// and the first failing candidate in ddmin's order is always the one taken,
// so the result does not depend on `jobs`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "broker/common/status.h"
#include "faults/fault_schedule.h"
#include "sim/scenario.h"

namespace mqlab::sim {

// The index of the first candidate (a sorted subset of element indexes)
// that still fails, or nullopt when none does.
using FirstFailing = std::function<std::optional<size_t>(const std::vector<std::vector<size_t>>& candidates)>;

// ddmin over elements 0..n-1. Requires: the whole set fails. Returns a
// 1-minimal failing subset, sorted: removing any one element passes (and
// the empty set, tried first, passes unless the result is empty).
std::vector<size_t> minimize_failing_set(size_t n, const FirstFailing& first_failing);

// The schedule as the YAML of a scenario's `faults:` list, one flow mapping
// per event, exact: parsing it back gives the same events.
std::string fault_schedule_yaml(const faults::FaultSchedule& schedule);

struct ShrinkOptions {
  uint64_t seed = 1;
  int jobs = 1;
  std::ostream* progress = nullptr;  // a line per candidate batch, if given
};

struct ShrinkResult {
  bool failed = false;  // whether the seed fails at all; nothing to shrink if not
  std::string failure;  // how it fails ("lost == 0 (measured 95)")
  faults::FaultSchedule original;
  faults::FaultSchedule minimal;
  int runs = 0;  // simulations run, the original included
  // For a nemesis scenario: whether the minimal list, written as the file's
  // `faults:` with the nemesis removed, fails too. It need not: without the
  // nemesis section the seed's later random streams shift.
  std::optional<bool> fails_as_fixed_list;
};

Result<ShrinkResult> shrink_schedule(const Scenario& scenario, const std::string& scenario_path,
                                     const ShrinkOptions& options);

}  // namespace mqlab::sim
