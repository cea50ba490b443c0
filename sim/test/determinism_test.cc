// Determinism: one scenario and seed give byte-identical traces and reports
// (but wall_seconds), two seeds give different ones, and a fault schedule
// override changes the faults and nothing else. Small scenarios built in code
// (20 s of virtual time), run twice and compared.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "sim/scenario.h"
#include "sim/seed_run.h"
#include "sim/sim_world.h"

namespace mqlab::sim::determinism_test {
namespace {

// ASYNC_FLUSH through a power cut, Poisson arrivals: every random stream
// (network, disks, workload, tears at the cut) has something to decide.
const char* const kFixedFaults = R"(
name: determinism-fixed
duration: 20s
topology: {preset: single_master}
broker: {flushDiskType: ASYNC_FLUSH}
workload:
  producers: {count: 1, rate: 100/s, arrival: poisson, message_size: {min: 64B, max: 1KiB}}
faults:
  - {at: 5s, kind: kill_process, target: broker-a-0, duration: 2s}
  - {at: 10s, kind: crash_machine, target: broker-a-0, duration: 3s}
)";

const char* const kNemesis = R"(
name: determinism-nemesis
duration: 20s
topology: {preset: multi_master}
workload:
  producers: {count: 1, rate: 100/s}
nemesis:
  rates:
    - {kind: kill_process, rate: 6/min, min_duration: 1s, max_duration: 3s}
    - {kind: slow_disk, rate: 6/min, min_duration: 1s, max_duration: 3s}
  quiet_period: 5s
)";

Scenario scenario_of(const char* yaml) {
  Result<Scenario> scenario = parse_scenario(yaml, "determinism.yaml");
  MQ_ASSERT_MSG(scenario.ok(), scenario.status().to_string());
  return std::move(scenario).value();
}

struct Traced {
  std::string trace;
  std::string report;  // JSON without wall_seconds
  SeedRun run;
};

Traced run_traced(const Scenario& scenario, uint64_t seed, std::optional<faults::FaultSchedule> schedule = {}) {
  std::ostringstream trace;
  SeedRunOptions options;
  options.trace = &trace;
  options.schedule = std::move(schedule);
  Traced traced{"", "", run_seed(scenario, seed, options)};
  traced.trace = trace.str();
  nlohmann::json report = seed_run_to_json(traced.run, scenario, "determinism.yaml");
  report.erase("wall_seconds");
  traced.report = report.dump(1);
  return traced;
}

// The first line where a and b differ, for a readable failure.
std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream in_a(a), in_b(b);
  std::string line_a, line_b;
  for (int number = 1;; ++number) {
    const bool more_a = static_cast<bool>(std::getline(in_a, line_a));
    const bool more_b = static_cast<bool>(std::getline(in_b, line_b));
    if (!more_a && !more_b) return "no difference";
    if (!more_a || !more_b || line_a != line_b) {
      return "line " + std::to_string(number) + ":\n  " + (more_a ? line_a : "<end>") + "\n  " + (more_b ? line_b : "<end>");
    }
  }
}

TEST(Determinism, OneSeedTwiceGivesByteIdenticalTraceAndReport) {
  const Scenario scenario = scenario_of(kFixedFaults);
  const Traced first = run_traced(scenario, 7);
  const Traced second = run_traced(scenario, 7);
  ASSERT_GT(first.run.history_lines, 1000u) << "the workload did not run";
  EXPECT_TRUE(first.trace == second.trace) << first_difference(first.trace, second.trace);
  EXPECT_TRUE(first.report == second.report) << first_difference(first.report, second.report);
  EXPECT_EQ(first.run.result.trace_digest, second.run.result.trace_digest);
  EXPECT_EQ(first.run.history_digest, second.run.history_digest);
}

// history_digest is taken over the sends' and receipts' fields whether or
// not their lines were written: a sweep (no trace) and a replay (--trace)
// of one seed must agree.
TEST(Determinism, HistoryDigestIsTheSameWithOrWithoutATrace) {
  const Scenario scenario = scenario_of(kFixedFaults);
  const Traced traced = run_traced(scenario, 5);
  const SeedRun untraced = run_seed(scenario, 5, SeedRunOptions{});
  EXPECT_EQ(untraced.history_digest, traced.run.history_digest);
  EXPECT_EQ(untraced.history_lines, traced.run.history_lines);
  EXPECT_EQ(untraced.result.trace_digest, traced.run.result.trace_digest);
  size_t message_lines = 0;
  std::istringstream lines(traced.trace);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" send #") != std::string::npos || line.find(" receive #") != std::string::npos) ++message_lines;
  }
  EXPECT_EQ(message_lines, traced.run.history_lines);
}

TEST(Determinism, TwoSeedsGiveDifferentTraces) {
  const Scenario scenario = scenario_of(kFixedFaults);
  const Traced one = run_traced(scenario, 1);
  const Traced two = run_traced(scenario, 2);
  EXPECT_NE(one.trace, two.trace);
  EXPECT_NE(one.run.history_digest, two.run.history_digest);
}

TEST(Determinism, TraceHoldsFaultsLogLinesAndMessagesInTimeOrder) {
  const Traced traced = run_traced(scenario_of(kFixedFaults), 3);
  for (const char* part : {" fault_start ", " log INFO ", " send #", " SEND_OK ", " receive #", " process_ready"}) {
    EXPECT_NE(traced.trace.find(part), std::string::npos) << part;
  }
  std::istringstream lines(traced.trace);
  std::string line;
  double previous = 0;
  while (std::getline(lines, line)) {
    const double at = std::stod(line.substr(0, 12));
    ASSERT_GE(at, previous) << line;
    previous = at;
  }
}

TEST(Determinism, OverrideWithTheSeedsOwnScheduleChangesNothing) {
  const Scenario scenario = scenario_of(kNemesis);
  const faults::FaultSchedule drawn = SimWorld(scenario, 5).schedule();
  ASSERT_FALSE(drawn.events.empty()) << "the nemesis drew nothing: raise its rates";
  const Traced drawn_run = run_traced(scenario, 5);
  const Traced overridden = run_traced(scenario, 5, drawn);
  EXPECT_TRUE(drawn_run.trace == overridden.trace) << first_difference(drawn_run.trace, overridden.trace);
  EXPECT_EQ(drawn_run.report, overridden.report);
}

TEST(Determinism, EmptyOverrideRemovesEveryFault) {
  const Scenario scenario = scenario_of(kFixedFaults);
  const Traced traced = run_traced(scenario, 4, faults::FaultSchedule{});
  EXPECT_TRUE(traced.run.result.schedule.events.empty());
  EXPECT_EQ(traced.trace.find(" fault_start "), std::string::npos);
  EXPECT_EQ(traced.run.result.report.lost, 0);  // no power cut, nothing lost
}

}  // namespace
}  // namespace mqlab::sim::determinism_test
