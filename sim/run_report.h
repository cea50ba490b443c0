// A run's report: the JSON document mqsim writes (every figure, the
// scenario, seed and replay key that produced it) and the readable summary
// table it prints.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "sim/sim_world.h"

namespace mqlab::sim {

nlohmann::json run_to_json(const RunResult& result);
// The table a person reads after `mqsim run`.
void print_run_summary(std::ostream& out, const RunResult& result, const std::string& scenario_path);
// "mqsim replay FILE --seed N --trace trace.txt"
std::string replay_command(const std::string& scenario_path, uint64_t seed);

}  // namespace mqlab::sim
