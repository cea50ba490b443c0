// The checker's figures as a person and a program read them: the rows of
// the summary table and the "figures" object of the JSON report. One
// rendering for `mqsim run` (sim/run_report.h) and `mqsim check` (a real
// run's history), so their outputs compare line by line.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "sim/checker.h"

namespace mqlab::sim {

// "figure value" rows: sent, acknowledged, lost, ..., throughput msgs/s.
void print_checker_figures(std::ostream& out, const CheckerReport& report);
// {"sent": .., "acknowledged": .., "lost": .., "send_latency": {...}, ...}:
// fixed keys only (a sweep takes the spread of each); the maps keyed by
// rule, group or broker go beside it (run_to_json).
nlohmann::json checker_figures_json(const CheckerReport& report);
// [{"broker", "from_s", "to_s"}...]
nlohmann::json windows_json(const std::vector<Window>& windows);
nlohmann::json latency_json(const LatencySummary& summary);

}  // namespace mqlab::sim
