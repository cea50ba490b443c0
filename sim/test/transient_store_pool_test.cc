// transientStorePoolEnable in a whole cluster: scenarios/single-master-async-
// transient-pool-kill.yaml over its seeds. kill -9 of the master loses the
// acknowledged messages still in the CommitLog's write buffer, and the loss
// bound (sim/loss_bound.h) predicts exactly those; without the pool the same
// kill loses nothing. The store-level rules are in
// broker/store/test/transient_store_pool_test.cc.
#include <gtest/gtest.h>

#include <string>

#include "sim/scenario.h"
#include "sim/sim_world.h"
#include "sim/test/quiet_run.h"

namespace mqlab::sim {
namespace {

constexpr char kScenario[] = "single-master-async-transient-pool-kill.yaml";

Scenario load(const std::string& file) {
  Result<Scenario> loaded = load_scenario(std::string(MQLAB_SOURCE_DIR) + "/scenarios/" + file);
  MQ_ASSERT_MSG(loaded.ok(), loaded.status().to_string());
  return *loaded;
}

TEST(TransientStorePool, KillLosesTheUncommittedBufferAndTheBoundPredictsItExactly) {
  const Scenario scenario = load(kScenario);
  ASSERT_TRUE(scenario.broker.store.is_transient_store_pool_enable());
  for (uint64_t seed = scenario.seeds.first; seed <= scenario.seeds.last; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    SimWorld world(scenario, seed);
    const RunResult result = run_quietly(world);
    EXPECT_GT(result.report.lost, 0) << "the write buffer died with the process";
    ASSERT_EQ(result.loss_bound.faults.size(), 1u);
    const FaultLossBound& kill = result.loss_bound.faults[0];
    EXPECT_NE(kill.reason.find("write buffer"), std::string::npos) << kill.reason;
    // Every acknowledged message past the committed offset is gone and no
    // other: the log restarts at that offset, and no consumer had read past
    // it (readers see only committed bytes), so nothing is skipped either.
    EXPECT_EQ(kill.destroyed, result.report.lost);
    EXPECT_EQ(kill.skipped, 0);
    EXPECT_TRUE(result.within_bound);
    EXPECT_EQ(result.report.corrupted, 0);
    EXPECT_TRUE(result.passed);
  }
}

TEST(TransientStorePool, WithoutThePoolTheSameKillLosesNothing) {
  Scenario scenario = load(kScenario);
  scenario.broker.store.transientStorePoolEnable = false;
  SimWorld world(scenario, scenario.seeds.first);
  const RunResult result = run_quietly(world);
  EXPECT_EQ(result.report.lost, 0);
  EXPECT_EQ(result.loss_bound.messages, 0);
  EXPECT_TRUE(result.within_bound);
}

}  // namespace
}  // namespace mqlab::sim
