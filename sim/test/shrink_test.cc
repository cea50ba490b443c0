// Shrink: ddmin finds exactly the culprits of a monotone failure (examples
// and a RapidCheck property over plain index sets), the printed YAML parses
// back to the same fault events, and shrinking a scenario built in code keeps
// the power cut that loses data and drops the kill -9 that does not.
#include "sim/shrink.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <set>

#include "sim/scenario.h"

namespace mqlab::sim::shrink_test {
namespace {

using faults::FaultEvent;
using faults::FaultKind;

// A failure that needs every culprit: fails iff the candidate holds them all.
struct Culprits {
  std::set<size_t> needed;
  int calls = 0;

  FirstFailing tester() {
    return [this](const std::vector<std::vector<size_t>>& candidates) -> std::optional<size_t> {
      for (size_t i = 0; i < candidates.size(); ++i) {
        ++calls;
        const std::set<size_t> have(candidates[i].begin(), candidates[i].end());
        if (std::includes(have.begin(), have.end(), needed.begin(), needed.end())) return i;
      }
      return std::nullopt;
    };
  }
};

TEST(Minimize, FindsThePairThatFailsTogether) {
  Culprits culprits{{2, 5}};
  EXPECT_EQ(minimize_failing_set(8, culprits.tester()), (std::vector<size_t>{2, 5}));
  EXPECT_LT(culprits.calls, 40);
}

TEST(Minimize, KeepsNothingWhenTheFailureNeedsNothing) {
  Culprits culprits{{}};
  EXPECT_TRUE(minimize_failing_set(6, culprits.tester()).empty());
  EXPECT_EQ(culprits.calls, 1);  // the empty set, tried first
}

TEST(Minimize, KeepsTheOnlyElement) {
  Culprits culprits{{0}};
  EXPECT_EQ(minimize_failing_set(1, culprits.tester()), (std::vector<size_t>{0}));
}

RC_GTEST_PROP(Minimize, FindsExactlyTheCulpritsOfAMonotoneFailure, ()) {
  const size_t n = *rc::gen::inRange<size_t>(1, 24);
  const std::vector<bool> chosen = *rc::gen::container<std::vector<bool>>(n, rc::gen::arbitrary<bool>());
  Culprits culprits;
  for (size_t i = 0; i < n; ++i) {
    if (chosen[i]) culprits.needed.insert(i);
  }
  const std::vector<size_t> kept = minimize_failing_set(n, culprits.tester());
  RC_ASSERT(std::set<size_t>(kept.begin(), kept.end()) == culprits.needed);
  RC_ASSERT(std::is_sorted(kept.begin(), kept.end()));
}

FaultEvent event(FaultKind kind, Nanos at, Nanos duration, const std::string& target) {
  FaultEvent e;
  e.kind = kind;
  e.at = at;
  e.duration = duration;
  e.target = target;
  return e;
}

TEST(FaultScheduleYaml, ParsesBackToTheSameEvents) {
  faults::FaultSchedule schedule;
  schedule.events.push_back(event(FaultKind::kKillProcess, 1'234'567'891, 2'000'000'001, "producer-0"));
  schedule.events.push_back(event(FaultKind::kPauseProcess, seconds(2), seconds(1), "broker-b-0"));
  schedule.events.push_back(event(FaultKind::kCrashMachine, seconds(3), 0, "broker-a-0"));
  schedule.events.push_back(event(FaultKind::kPowerLossAll, seconds(4), seconds(5), ""));
  schedule.events.push_back(event(FaultKind::kFailDisk, seconds(5), seconds(6), "broker-a-0"));
  schedule.events.back().disk_index = 3;
  schedule.events.push_back(event(FaultKind::kSlowDisk, seconds(6), seconds(2), "broker-b-0"));
  schedule.events.back().factor = 2.5;
  schedule.events.push_back(event(FaultKind::kStallDisk, seconds(7), 1, "broker-b-0"));
  schedule.events.push_back(event(FaultKind::kPartition, seconds(8), seconds(3), ""));
  schedule.events.back().side_a = {"broker-a-0"};
  schedule.events.back().side_b = {"client-0", "namesrv-0"};
  schedule.events.back().one_way = true;
  schedule.events.push_back(event(FaultKind::kIsolateMachine, seconds(9), seconds(1), "namesrv-0"));
  schedule.events.push_back(event(FaultKind::kClockSkew, seconds(10), 0, "client-0"));
  schedule.events.back().skew_ms = -1500;
  schedule.events.push_back(event(FaultKind::kDestroyMachine, seconds(11), 0, "broker-b-0"));
  schedule.sort();

  const std::string yaml = fault_schedule_yaml(schedule);
  const std::string text = "duration: 1m\ntopology: {preset: multi_master_raid10}\n" + yaml;
  Result<Scenario> scenario = parse_scenario(text, "roundtrip.yaml");
  ASSERT_TRUE(scenario.ok()) << scenario.status().to_string() << "\n" << text;
  EXPECT_EQ(scenario->faults.schedule.events, schedule.events) << yaml;
}

TEST(FaultScheduleYaml, EmptyScheduleIsAnEmptyList) {
  EXPECT_EQ(fault_schedule_yaml(faults::FaultSchedule{}), "faults: []\n");
}

// kill -9 keeps the page cache, so ASYNC_FLUSH loses nothing to it; the
// power cut loses the last flush interval. Only the cut may remain.
TEST(ShrinkSchedule, KeepsThePowerCutAndDropsTheKill) {
  const char* const yaml = R"(
name: shrink-me
duration: 20s
topology: {preset: single_master}
broker: {flushDiskType: ASYNC_FLUSH}
workload:
  producers: {count: 1, rate: 200/s}
faults:
  - {at: 4s, kind: kill_process, target: broker-a-0, duration: 2s}
  - {at: 10s, kind: crash_machine, target: broker-a-0, duration: 2s}
  - {at: 14s, kind: slow_disk, target: broker-a-0, factor: 3, duration: 2s}
expect:
  lost: 0
)";
  Result<Scenario> scenario = parse_scenario(yaml, "shrink-me.yaml");
  ASSERT_TRUE(scenario.ok()) << scenario.status().to_string();
  ShrinkOptions options;
  options.seed = 1;
  options.jobs = 2;
  Result<ShrinkResult> result = shrink_schedule(*scenario, "shrink-me.yaml", options);
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  ASSERT_TRUE(result->failed) << "ASYNC_FLUSH through a power cut lost nothing";
  EXPECT_EQ(result->original.events.size(), 3u);
  ASSERT_EQ(result->minimal.events.size(), 1u) << result->minimal.describe();
  EXPECT_EQ(result->minimal.events[0].kind, FaultKind::kCrashMachine);
  EXPECT_FALSE(result->fails_as_fixed_list.has_value());  // no nemesis: nothing to check
}

}  // namespace
}  // namespace mqlab::sim::shrink_test
