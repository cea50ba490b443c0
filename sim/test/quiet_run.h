// run_quietly: runs a SimWorld with the log silenced (a cluster run logs
// thousands of lines no test reads), then puts the default sink back for
// the tests that follow.
#pragma once

#include <string_view>

#include "broker/common/log.h"
#include "sim/sim_world.h"

namespace mqlab::sim {

inline RunResult run_quietly(SimWorld& world) {
  set_log_level(LogLevel::kError);
  set_log_sink([](LogLevel, std::string_view, std::string_view) {});
  RunResult result = world.run();
  set_log_sink(nullptr);
  return result;
}

}  // namespace mqlab::sim
