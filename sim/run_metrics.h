// A run's metrics by the names scenario files use in `expect:` (lost,
// p99_send_ms, ...; scenario.h known_metrics()), and the expectations
// evaluated against them. Shared by mqsim run and the checks of real runs
// (sim/history_check.h), so `expect: {lost: 0}` means one thing in both.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/scenario.h"
#include "sim/sim_world.h"

namespace mqlab::sim {

// Requires: metric is one of known_metrics() (the scenario loader checked it).
double run_metric_value(const std::string& metric, const RunResult& result);
std::vector<ExpectationResult> evaluate_run_expectations(const std::map<std::string, Expectation>& expect,
                                                         const RunResult& result);

}  // namespace mqlab::sim
