// The fault vocabulary and schedules: names, validation, the start/end
// timeline, and the nemesis generator's constraints as properties over random
// configurations (window, quiet period, at most K machines down, never both
// disks of one mirror) plus determinism in the seed.
#include "faults/fault_schedule.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>

namespace mqlab::faults::fault_schedule_test {
namespace {

std::vector<NemesisTarget> three_machines(bool raid10) {
  return {NemesisTarget{"m0", {"broker-a-0"}, raid10 ? 4 : 1, raid10},
          NemesisTarget{"m1", {"broker-b-0"}, raid10 ? 4 : 1, raid10},
          NemesisTarget{"m2", {"namesrv-0", "producer-0"}, 1, false}};
}

TEST(Fault, NamesRoundTripAndUnknownNamesAreListed) {
  for (FaultKind kind : {FaultKind::kKillProcess, FaultKind::kPartition, FaultKind::kPromoteSlave}) {
    auto parsed = parse_fault_kind(fault_kind_name(kind));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, kind);
  }
  auto bad = parse_fault_kind("explode");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("kill_process"), std::string::npos);
}

TEST(Fault, ValidationNamesTheProblem) {
  FaultEvent partition{.kind = FaultKind::kPartition, .at = seconds(1)};
  partition.side_a = {"m0"};
  EXPECT_FALSE(validate_fault(partition).ok());
  partition.side_b = {"m0"};
  EXPECT_NE(validate_fault(partition).message().find("both sides"), std::string::npos);
  partition.side_b = {"m1"};
  EXPECT_TRUE(validate_fault(partition).ok());
  FaultEvent pause{.kind = FaultKind::kPauseProcess, .at = 0, .duration = 0, .target = "p"};
  EXPECT_FALSE(validate_fault(pause).ok());
  FaultEvent kill{.kind = FaultKind::kKillProcess, .at = -1, .target = "p"};
  EXPECT_FALSE(validate_fault(kill).ok());
  FaultEvent no_target{.kind = FaultKind::kCrashMachine, .at = 0};
  EXPECT_FALSE(validate_fault(no_target).ok());
}

TEST(FaultSchedule, TimelinePutsEndsBeforeStartsAtTheSameInstant) {
  FaultSchedule schedule;
  schedule.events.push_back(FaultEvent{.kind = FaultKind::kKillProcess, .at = seconds(1), .duration = seconds(2), .target = "a"});
  schedule.events.push_back(FaultEvent{.kind = FaultKind::kKillProcess, .at = seconds(3), .duration = 0, .target = "b"});
  schedule.sort();
  const auto actions = timeline(schedule);
  ASSERT_EQ(actions.size(), 3u);
  EXPECT_TRUE(actions[0].start);
  EXPECT_EQ(actions[1].at, seconds(3));
  EXPECT_FALSE(actions[1].start) << "the heal of 'a' comes before the kill of 'b'";
  EXPECT_TRUE(actions[2].start);
}

TEST(FaultSchedule, WithoutKeepsTheChosenEvents) {
  FaultSchedule schedule;
  for (int i = 0; i < 4; ++i) {
    schedule.events.push_back(FaultEvent{.kind = FaultKind::kKillProcess, .at = seconds(i), .target = "p"});
  }
  const FaultSchedule kept = schedule.without({true, false, false, true});
  ASSERT_EQ(kept.events.size(), 2u);
  EXPECT_EQ(kept.events[1].at, seconds(3));
}

TEST(Nemesis, SameSeedSameScheduleOtherSeedsDiffer) {
  NemesisConfig config;
  config.rates = {{FaultKind::kKillProcess, 2.0, seconds(5), seconds(20)},
                  {FaultKind::kCrashMachine, 1.0, seconds(5), seconds(20)}};
  config.quiet_period = seconds(60);
  env::Random a(7), b(7), c(8);
  const auto first = generate_nemesis(config, three_machines(false), seconds(600), a);
  const auto second = generate_nemesis(config, three_machines(false), seconds(600), b);
  const auto other = generate_nemesis(config, three_machines(false), seconds(600), c);
  EXPECT_EQ(first.schedule.events, second.schedule.events);
  EXPECT_NE(first.schedule.events, other.schedule.events);
  EXPECT_GT(first.schedule.events.size(), 0u);
}

RC_GTEST_PROP(Nemesis, SchedulesKeepEveryConstraint, ()) {
  // Every knob from one seed: rc::gen::inRange scales with the size
  // parameter, which would leave small cases with no faults at all.
  env::Random knobs(*rc::gen::arbitrary<uint64_t>());
  const bool raid10 = knobs.chance(0.5);
  const int max_down = static_cast<int>(knobs.range(0, 2));
  const Nanos duration = seconds(knobs.range(60, 1200));
  NemesisConfig config;
  config.max_machines_down = max_down;
  config.quiet_period = seconds(knobs.range(0, 60));
  config.window_start = seconds(knobs.range(0, 30));
  const std::vector<FaultKind> kinds = {FaultKind::kKillProcess, FaultKind::kPauseProcess, FaultKind::kCrashMachine,
                                        FaultKind::kFailDisk,    FaultKind::kIsolateMachine, FaultKind::kPartition,
                                        FaultKind::kSlowDisk};
  for (FaultKind kind : kinds) {
    config.rates.push_back({kind, static_cast<double>(knobs.range(0, 5)), seconds(1), seconds(knobs.range(1, 90))});
  }
  env::Random random = knobs.split();
  const auto targets = three_machines(raid10);
  const NemesisResult result = generate_nemesis(config, targets, duration, random);
  RC_CLASSIFY(result.schedule.events.size() >= 10, "10+ faults");
  RC_CLASSIFY(result.dropped_by_constraints > 0, "some candidates dropped");
  const Nanos quiet_from = duration - config.quiet_period;
  for (const FaultEvent& event : result.schedule.events) {
    RC_ASSERT(validate_fault(event).ok());
    RC_ASSERT(event.at >= config.window_start);
    RC_ASSERT(event.end() <= quiet_from);
  }
  // Machines down at every start instant never exceed the limit.
  for (const FaultEvent& probe : result.schedule.events) {
    std::set<std::string> down;
    for (const FaultEvent& event : result.schedule.events) {
      if (!takes_machine_down(event.kind) || !(event.at <= probe.at && probe.at < event.end())) continue;
      for (const NemesisTarget& t : targets) {
        if (t.machine == event.target ||
            std::find(t.processes.begin(), t.processes.end(), event.target) != t.processes.end()) {
          down.insert(t.machine);
        }
      }
    }
    RC_ASSERT(static_cast<int>(down.size()) <= max_down);
  }
  // Never both disks of one mirror (nor one disk twice) at once.
  for (const FaultEvent& a : result.schedule.events) {
    for (const FaultEvent& b : result.schedule.events) {
      if (&a == &b || a.kind != FaultKind::kFailDisk || b.kind != FaultKind::kFailDisk || a.target != b.target) continue;
      if (!(a.at < b.end() && b.at < a.end())) continue;
      RC_ASSERT(a.disk_index != b.disk_index);
      if (raid10) RC_ASSERT((a.disk_index ^ 1) != b.disk_index);
    }
  }
}

}  // namespace
}  // namespace mqlab::faults::fault_schedule_test
