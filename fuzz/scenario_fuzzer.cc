// libFuzzer target: the scenario YAML loader (sim/scenario.h). Any text must
// give a Scenario or an error naming the problem, never crash, and a loaded
// scenario must describe itself and, when it is a matrix, expand or refuse.
// Seeds: fuzz/corpus/scenario/ (scenarios/*.yaml).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/log.h"
#include "broker/common/status.h"
#include "sim/scenario.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mqlab::set_log_sink([](mqlab::LogLevel, std::string_view, std::string_view) {});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  mqlab::Result<mqlab::sim::Scenario> scenario = mqlab::sim::parse_scenario(text, "fuzz.yaml");
  if (!scenario.ok()) return 0;
  (void)mqlab::sim::describe(*scenario);
  if (scenario->matrix) {
    mqlab::Result<std::vector<mqlab::sim::Scenario>> cells = mqlab::sim::expand_matrix(*scenario);
    if (cells.ok()) {
      for (const mqlab::sim::Scenario& cell : *cells) (void)mqlab::sim::describe(cell);
    }
  }
  return 0;
}
