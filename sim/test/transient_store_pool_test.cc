// transientStorePoolEnable in a whole cluster. kill -9 of a master loses
// the acknowledged messages still in the CommitLog's write buffer, and the
// loss bound (sim/loss_bound.h) predicts exactly those; without the pool the
// same kill loses nothing. With a slave (ASYNC_MASTER), the HA stream carries
// only committed bytes, so the slave is never ahead of the killed master and
// the buffer is still all that dies. A slave promoted to master restarts with
// the master role, so it runs the pool as RocketMQ 4.x's restarted broker
// does (isTransientStorePoolEnable() = enable && ASYNC_FLUSH && role !=
// SLAVE), and the bound counts its kill window, exactly. The store-level
// rules are in broker/store/test/transient_store_pool_test.cc.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "broker/ha/ha_client.h"
#include "broker/processor/broker_controller.h"
#include "sim/scenario.h"
#include "sim/sim_world.h"
#include "sim/test/quiet_run.h"

namespace mqlab::sim::transient_store_pool_test {
namespace {

constexpr char kScenario[] = "single-master-async-transient-pool-kill.yaml";
constexpr char kReplicatedScenario[] = "async-replication-transient-pool-kill.yaml";

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

const BrokerStoreState& state_of(const FaultInstant& instant, const std::string& machine) {
  for (const BrokerStoreState& state : instant.brokers) {
    if (state.machine == machine) return state;
  }
  MQ_ASSERT_MSG(false, "no broker machine " + machine);
  return instant.brokers.front();
}

TEST(TransientStorePool, WithASlaveTheKillLosesOnlyTheBufferTheSlaveNeverHad) {
  const Scenario scenario = load(kReplicatedScenario);
  ASSERT_TRUE(scenario.broker.store.is_transient_store_pool_enable());
  ASSERT_EQ(scenario.topology.slaves_per_group, 1);
  for (uint64_t seed = scenario.seeds.first; seed <= scenario.seeds.last; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    SimWorld world(scenario, seed);
    const RunResult result = run_quietly(world);
    ASSERT_EQ(world.fault_instants().size(), 1u);
    // The slave holds only what the master had committed: its page cache
    // keeps all of that through the kill, so the two logs still agree.
    const BrokerStoreState& master = state_of(world.fault_instants()[0], "broker-a-0");
    const BrokerStoreState& slave = state_of(world.fault_instants()[0], "broker-a-1");
    ASSERT_TRUE(master.running);
    ASSERT_TRUE(slave.running);
    EXPECT_LE(slave.max_phy_offset, master.max_phy_offset);
    EXPECT_LE(slave.confirmed_offset, master.max_phy_offset);
    EXPECT_LE(master.push2slave_max_offset, master.max_phy_offset);
    broker::BrokerController* restarted_slave = world.running_broker("broker-a-1");
    ASSERT_NE(restarted_slave, nullptr);
    ASSERT_NE(restarted_slave->ha_client(), nullptr);
    EXPECT_EQ(restarted_slave->ha_client()->stats().refusals, 0u) << "the restarted master's log never fell behind it";

    EXPECT_GT(result.report.lost, 0) << "the write buffer died with the process";
    ASSERT_EQ(result.loss_bound.faults.size(), 1u);
    const FaultLossBound& kill = result.loss_bound.faults[0];
    EXPECT_NE(kill.reason.find("write buffer"), std::string::npos) << kill.reason;
    EXPECT_EQ(kill.destroyed, result.report.lost) << "the bound is exact";
    EXPECT_EQ(kill.skipped, 0);
    EXPECT_EQ(result.report.lost_outside_bound, 0);
    EXPECT_EQ(result.report.corrupted, 0);
    EXPECT_TRUE(result.passed);
  }
}

// The promoted slave comes back with brokerId 0 and the configured master
// role: the pool is in effect on it (the SLAVE rule no longer applies), so
// its kill -9 loses its uncommitted buffer, and the bound's kill_process rule
// (which asks the broker's role at the instant, not its role at start)
// counts exactly that. The promotion's own loss is the old master's
// unreplicated tail (its buffer included: the slave never had it).
Scenario promote_then_kill(int broker_groups) {
  Scenario scenario = load(kReplicatedScenario);
  scenario.topology.broker_groups = broker_groups;
  using faults::FaultEvent;
  using faults::FaultKind;
  scenario.faults.schedule.events = {
      FaultEvent{.kind = FaultKind::kPromoteSlave, .at = seconds(20), .target = "broker-a"},
      FaultEvent{.kind = FaultKind::kKillProcess, .at = seconds(40), .duration = seconds(10), .target = "broker-a-1"}};
  scenario.expect.erase("lost");  // the promotion adds its own loss
  return scenario;
}

std::set<uint64_t> lost_to_fault(const RunResult& result, int fault_index) {
  EXPECT_LT(result.report.lost_messages.size(), 1000u) << "the list is complete";
  std::set<uint64_t> seqs;
  for (const LostMessage& m : result.report.lost_messages) {
    if (m.fault_index == fault_index) seqs.insert(m.seq);
  }
  return seqs;
}

TEST(TransientStorePool, APromotedSlaveRunsThePoolAndTheBoundCountsItsKillExactly) {
  // One group: the producer has nowhere else to send, so the promoted
  // master acknowledges from its buffer until the kill.
  const Scenario scenario = promote_then_kill(/*broker_groups=*/1);
  for (uint64_t seed = scenario.seeds.first; seed <= scenario.seeds.last; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    SimWorld world(scenario, seed);
    const RunResult result = run_quietly(world);
    broker::BrokerController* promoted = world.running_broker("broker-a-1");
    ASSERT_NE(promoted, nullptr);
    EXPECT_EQ(promoted->store_config().brokerRole, store::BrokerRole::ASYNC_MASTER);
    EXPECT_NE(promoted->message_store().commit_real_time_service(), nullptr) << "the promoted master runs the pool";
    EXPECT_TRUE(promoted->message_store().commit_log().transient_store_pool());
    broker::BrokerController* demoted = world.running_broker("broker-a-0");
    ASSERT_NE(demoted, nullptr) << "the old master came back in the healing, as a slave";
    EXPECT_EQ(demoted->message_store().commit_real_time_service(), nullptr) << "a SLAVE never buffers";
    ASSERT_EQ(world.fault_instants().size(), 2u);
    EXPECT_EQ(state_of(world.fault_instants()[1], "broker-a-1").broker_id, 0);

    ASSERT_EQ(result.loss_bound.faults.size(), 2u);
    const FaultLossBound& promotion = result.loss_bound.faults[0];
    const FaultLossBound& kill = result.loss_bound.faults[1];
    EXPECT_NE(kill.reason.find("write buffer"), std::string::npos) << kill.reason;
    EXPECT_GT(kill.destroyed, 0) << "the promoted master acknowledged from its buffer";
    EXPECT_EQ(static_cast<int64_t>(lost_to_fault(result, 1).size()), kill.messages) << "exact for the kill";
    EXPECT_EQ(static_cast<int64_t>(lost_to_fault(result, 0).size()), promotion.messages) << "exact for the promotion";
    EXPECT_EQ(result.report.lost, result.loss_bound.messages);
    EXPECT_EQ(result.report.lost_outside_bound, 0);
    EXPECT_TRUE(result.within_bound);
    EXPECT_EQ(result.report.corrupted, 0);
  }
}

// Two groups: the producer isolates broker-a for 10 minutes after a failed
// send (sendLatencyFaultEnable), so the promoted master acknowledges
// nothing before its kill. The kill then loses nothing, and the bound says
// so: the old master's lost tail lies past the promoted master's committed
// offset, but it was never in this process's buffer (it is the promotion's).
TEST(TransientStorePool, APromotedMasterThatAcknowledgedNothingLosesNothingToItsKill) {
  const Scenario scenario = promote_then_kill(/*broker_groups=*/2);
  SimWorld world(scenario, scenario.seeds.first);
  const RunResult result = run_quietly(world);
  ASSERT_EQ(result.loss_bound.faults.size(), 2u);
  EXPECT_GT(result.loss_bound.faults[0].destroyed, 0) << "the old master's buffer and unreplicated tail";
  EXPECT_EQ(result.loss_bound.faults[1].destroyed, 0) << result.loss_bound.faults[1].reason;
  EXPECT_TRUE(lost_to_fault(result, 1).empty());
  EXPECT_EQ(result.report.lost, result.loss_bound.messages);
  EXPECT_TRUE(result.within_bound);
}

}  // namespace
}  // namespace mqlab::sim::transient_store_pool_test
