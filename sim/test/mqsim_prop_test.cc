// Properties of whole simulated clusters (CI-sized: a dozen random fault
// schedules each): SYNC_FLUSH loses nothing acknowledged under random kill -9
// and machine power-loss schedules; ASYNC_FLUSH loses nothing under kill -9
// alone; a multi-master cluster keeps accepting sends while one master is
// down and reports that master's messages unreadable until it returns.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <sstream>

#include "broker/common/log.h"
#include "sim/scenario.h"
#include "sim/sim_world.h"
#include "sim/test/quiet_run.h"

namespace mqlab::sim::mqsim_prop_test {
namespace {

struct GeneratedFault {
  std::string kind;
  std::string target;
  int at_s;
  int duration_s;
};

std::string scenario_yaml(const std::string& preset, const std::string& flush, const std::vector<GeneratedFault>& faults) {
  std::ostringstream yaml;
  yaml << "name: prop-" << preset << "\nduration: 30s\nseeds: 1\nliveness_bound: 60s\n"
       << "topology: {preset: " << preset << ", disk: {preset: sata_ssd}}\n"
       << "broker: {flushDiskType: " << flush << "}\n"
       << "workload:\n  producers: {count: 1, rate: 100/s, message_size: {min: 64B, max: 512B}}\n"
       << "  consumer_groups:\n    - {name: cg, consumers: 1}\n";
  if (!faults.empty()) {
    yaml << "faults:\n";
    for (const GeneratedFault& f : faults) {
      yaml << "  - {at: " << f.at_s << "s, kind: " << f.kind << ", target: " << f.target
           << ", duration: " << f.duration_s << "s}\n";
    }
  }
  return yaml.str();
}

RunResult run_yaml(const std::string& yaml, uint64_t seed) {
  Result<Scenario> scenario = parse_scenario(yaml, "generated.yaml");
  MQ_ASSERT_MSG(scenario.ok(), scenario.status().to_string() + "\n" + yaml);
  SimWorld world(*scenario, seed);
  return run_quietly(world);
}

// Runs a property a fixed number of times (CI-sized), without shrinking:
// each case is a whole cluster run.
void check_cases(int cases, const std::function<void()>& property) {
  rc::detail::TestParams params;
  params.maxSuccess = cases;
  params.maxSize = 100;
  params.disableShrinking = false;
  rc::detail::TestMetadata metadata;
  const auto result = rc::detail::checkTestable(property, metadata, params);
  rc::detail::FailureResult failure;
  if (result.match(failure)) FAIL() << failure.description;
}

std::vector<GeneratedFault> random_faults(const std::vector<std::string>& kinds,
                                          const std::vector<std::string>& targets) {
  const int count = *rc::gen::inRange(1, 4);
  std::vector<GeneratedFault> faults;
  int at = 4;
  for (int i = 0; i < count && at < 24; ++i) {
    GeneratedFault fault;
    fault.kind = *rc::gen::elementOf(kinds);
    fault.target = *rc::gen::elementOf(targets);
    fault.at_s = at + *rc::gen::inRange(0, 5);
    fault.duration_s = *rc::gen::inRange(1, 6);
    at = fault.at_s + fault.duration_s + 1;  // one fault at a time
    faults.push_back(fault);
  }
  return faults;
}

TEST(MqsimProperties, SyncFlushLosesNothingAcknowledgedUnderKillsAndPowerLoss) {
  check_cases(12, [] {
    const auto faults = random_faults({"kill_process", "crash_machine"}, {"broker-a-0", "broker-b-0"});
    const uint64_t seed = *rc::gen::inRange<uint64_t>(1, 1000);
    const RunResult result = run_yaml(scenario_yaml("multi_master", "SYNC_FLUSH", faults), seed);
    RC_ASSERT(result.converged);
    RC_ASSERT(result.report.acknowledged > 0);
    RC_ASSERT(result.report.lost == 0);
    RC_ASSERT(result.report.corrupted == 0);
  });
}

TEST(MqsimProperties, AsyncFlushLosesNothingUnderKillAlone) {
  check_cases(12, [] {
    const auto faults = random_faults({"kill_process"}, {"broker-a-0"});
    const uint64_t seed = *rc::gen::inRange<uint64_t>(1, 1000);
    const RunResult result = run_yaml(scenario_yaml("single_master", "ASYNC_FLUSH", faults), seed);
    RC_ASSERT(result.converged);
    RC_ASSERT(result.report.lost == 0);  // the page cache survives kill -9
  });
}

TEST(MqsimProperties, MultiMasterKeepsWritingWhileOneMasterIsDown) {
  const RunResult result = run_yaml(scenario_yaml("multi_master", "SYNC_FLUSH", {{"kill_process", "broker-a-0", 8, 15}}), 5);
  ASSERT_TRUE(result.converged) << result.liveness_failure;
  EXPECT_EQ(result.report.lost, 0);
  // Writes continued during the outage: producer fault avoidance sent them to broker-b.
  EXPECT_GT(result.report.acknowledged, 0);
  double broker_a_unreadable = 0;
  for (const Window& w : result.report.read_unavailable) {
    if (w.broker_name == "broker-a") broker_a_unreadable += static_cast<double>(w.length()) / kNanosPerSecond;
  }
  double broker_b_write_down = 0;
  for (const Window& w : result.report.write_unavailable) {
    if (w.broker_name == "broker-b") broker_b_write_down += static_cast<double>(w.length()) / kNanosPerSecond;
  }
  EXPECT_GT(broker_a_unreadable, 5.0) << "broker-a's messages should be unreadable while it is down";
  EXPECT_EQ(broker_b_write_down, 0.0) << "broker-b kept taking writes";
}

}  // namespace
}  // namespace mqlab::sim::mqsim_prop_test
