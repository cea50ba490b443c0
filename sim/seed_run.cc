#include "sim/seed_run.h"

#include <memory>
#include <sstream>

#include "broker/common/log.h"
#include "broker/env/posix_env.h"
#include "sim/message_trace.h"
#include "sim/run_report.h"
#include "sim/trace.h"

namespace mqlab::sim {
namespace {

// The broker's log lines go into the trace, stamped with virtual time; with
// no trace they go nowhere (a sweep's children would otherwise spray every
// broker's errors over the terminal).
void route_logs_to(std::ostream* out, const Scheduler* const* scheduler_slot) {
  set_log_level(out ? LogLevel::kInfo : LogLevel::kError);
  set_log_sink([out, scheduler_slot](LogLevel level, std::string_view component, std::string_view message) {
    if (!out) return;
    const Nanos now = *scheduler_slot ? (*scheduler_slot)->now() : 0;
    *out << format_virtual_time(now) << " log " << log_level_name(level) << " [" << component << "] " << message
         << "\n";
  });
}

void restore_default_logging() {
  set_log_sink(nullptr);
  set_log_level(LogLevel::kWarn);  // log.cc's default
}

}  // namespace

SeedRun run_seed(const Scenario& scenario, uint64_t seed, const SeedRunOptions& options) {
  const double wall_start = wall_clock_seconds();
  // The run writes events and log lines here; messages are merged in after.
  std::ostringstream events;
  std::ostream* events_out = options.trace ? &events : nullptr;
  const Scheduler* scheduler = nullptr;
  route_logs_to(events_out, &scheduler);

  SeedRun run;
  auto world = std::make_unique<SimWorld>(scenario, seed, events_out, options.schedule);
  scheduler = &world->scheduler();
  run.result = world->run();
  // Nothing logs from here on; shutting the cluster down logs too, and that
  // is not part of the run.
  route_logs_to(nullptr, &scheduler);
  {
    // The message lines are read from the History as they are written (it
    // spills them: a long run's lines do not fit in memory), so before the
    // world and its History go.
    MessageLines messages(world->history(), scenario);
    if (options.trace) {
      write_merged_trace(events.view(), messages, *options.trace);
    } else {
      messages.drain();
    }
    run.history_digest = messages.digest_hex();
    run.history_lines = messages.count();
  }
  scheduler = nullptr;
  world.reset();
  restore_default_logging();

  MQ_ASSERT(run.result.seed == seed);
  run.wall_seconds = wall_clock_seconds() - wall_start;
  return run;
}

nlohmann::json seed_run_to_json(const SeedRun& run, const Scenario& scenario, const std::string& scenario_path) {
  nlohmann::json report = run_to_json(run.result);
  report["scenario_file"] = scenario_path;
  report["scenario_hash"] = scenario.hash;
  report["history_digest"] = run.history_digest;
  report["history_lines"] = run.history_lines;
  report["wall_seconds"] = run.wall_seconds;
  return report;
}

double wall_clock_seconds() {
  env::PosixClock clock;
  return static_cast<double>(clock.now_ns()) / kNanosPerSecond;
}

}  // namespace mqlab::sim
