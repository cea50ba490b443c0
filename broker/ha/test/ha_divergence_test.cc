// Divergence between a slave's log and its master's (policy: REFUSE, see
// broker/ha/README.md): a slave ahead of a master that lost its tail in a
// power loss, a slave whose last record differs from the master's bytes, and
// MessageStore::append_replica's own checks (misplaced chunks, records that
// do not line up, partial tails) that back them.
#include <gtest/gtest.h>

#include "broker/ha/test/ha_sim_world.h"

namespace mqlab::ha::testing::ha_divergence_test {
namespace {

constexpr const char* kTopic = "TopicTest";

// An ASYNC_FLUSH master that flushes rarely, so a power loss takes its tail.
HASimWorld& with_lazy_master(HASimWorld& world) {
  world.master_store_config().flushCommitLogLeastPages = 1000;
  world.master_store_config().flushCommitLogThoroughInterval = 600'000;
  return world;
}

void replicate(HASimWorld& world, int count, char fill) {
  for (int i = 0; i < count; ++i) ASSERT_EQ(world.send(kTopic, 400, fill).code, ResponseCode::SUCCESS);
  ASSERT_TRUE(world.wait_caught_up());
}

TEST(HADivergence, SlaveAheadOfAMasterThatLostItsTailRefusesAndKeepsItsLog) {
  HASimWorld world;
  with_lazy_master(world);
  ASSERT_TRUE(world.start_master().ok());
  ASSERT_TRUE(world.start_slave().ok());
  world.run_until([&] { return world.ha_client().state() == HAClientState::kTransfer; }, seconds(5));
  replicate(world, 30, 'a');
  const PhyOffset slave_end = world.slave_store().max_phy_offset();
  const auto slave_bytes = HASimWorld::log_bytes(world.slave_store(), PhyOffset(0), slave_end);

  world.power_loss_master();
  ASSERT_TRUE(world.start_master().ok());
  const PhyOffset master_end = world.master_store().max_phy_offset();
  ASSERT_LT(master_end, slave_end) << "the power loss should have taken the master's unflushed tail";

  world.run_until([&] { return world.ha_client().state() == HAClientState::kRefused; }, seconds(30));
  ASSERT_EQ(world.ha_client().state(), HAClientState::kRefused);
  EXPECT_EQ(world.ha_client().stats().refusals, 1u);
  EXPECT_EQ(world.ha_client().stats().refused_bytes_at_stake, slave_end - master_end);
  // Nothing of the slave's log was touched: those bytes may be the only copy
  // of acknowledged messages.
  EXPECT_EQ(world.slave_store().max_phy_offset(), slave_end);
  EXPECT_EQ(HASimWorld::log_bytes(world.slave_store(), PhyOffset(0), slave_end), slave_bytes);
  // It stays disconnected: no retries, while the master takes new messages.
  const uint64_t connects = world.ha_client().stats().connects;
  for (int i = 0; i < 5; ++i) EXPECT_EQ(world.send(kTopic, 400, 'b').code, ResponseCode::SUCCESS);
  world.run_for(seconds(30));
  EXPECT_EQ(world.ha_client().stats().connects, connects);
  EXPECT_EQ(world.ha_service().connection_count(), 0u);
  EXPECT_EQ(world.slave_store().max_phy_offset(), slave_end);
}

TEST(HADivergence, SlaveWhoseLastRecordDiffersFromTheMastersRefuses) {
  HASimWorld world;
  with_lazy_master(world);
  ASSERT_TRUE(world.start_master().ok());
  ASSERT_TRUE(world.start_slave().ok());
  world.run_until([&] { return world.ha_client().state() == HAClientState::kTransfer; }, seconds(5));
  replicate(world, 30, 'a');
  const PhyOffset slave_end = world.slave_store().max_phy_offset();
  // The master loses its tail and, cut off from the slave, writes other
  // messages past where the slave's log ends.
  world.net().partition({kMasterHost}, {kSlaveHost});
  world.power_loss_master();
  ASSERT_TRUE(world.start_master().ok());
  ASSERT_LT(world.master_store().max_phy_offset(), slave_end);
  while (world.master_store().max_phy_offset() <= slave_end + 1000) {
    ASSERT_EQ(world.send(kTopic, 333, 'z').code, ResponseCode::SUCCESS);
  }
  world.net().heal({kMasterHost}, {kSlaveHost});
  world.run_until([&] { return world.ha_client().state() == HAClientState::kRefused; }, seconds(60));
  ASSERT_EQ(world.ha_client().state(), HAClientState::kRefused);
  EXPECT_NE(world.ha_client().refusal_reason().find("differ"), std::string::npos)
      << world.ha_client().refusal_reason();
  EXPECT_EQ(world.slave_store().max_phy_offset(), slave_end);  // never merged
}

TEST(HADivergence, AppendReplicaChecksPlacementAndRecordAlignment) {
  HASimWorld world;
  world.slave_config().namesrvAddr = "";  // a slave that follows nobody; the test feeds it
  ASSERT_TRUE(world.start_master().ok());
  ASSERT_TRUE(world.start_slave().ok());
  for (int i = 0; i < 3; ++i) ASSERT_EQ(world.send(kTopic, 200 + i).code, ResponseCode::SUCCESS);
  store::MessageStore& slave = world.slave_store();
  const PhyOffset master_end = world.master_store().max_phy_offset();
  const auto all = HASimWorld::log_bytes(world.master_store(), PhyOffset(0), master_end);
  Result<std::vector<uint8_t>> first = world.master_store().look_message_by_offset(PhyOffset(0));
  ASSERT_TRUE(first.ok());
  const size_t record = first->size();

  // The master's second record placed at offset 0: its PHYSICALOFFSET says otherwise.
  const std::span<const uint8_t> second(all.data() + record, all.size() - record);
  Status misaligned = slave.append_replica(PhyOffset(0), second);
  EXPECT_EQ(misaligned.code(), StatusCode::kCorruption) << misaligned.to_string();
  EXPECT_EQ(slave.max_phy_offset(), PhyOffset(0));  // nothing of it stayed
  // Garbage: no record at all.
  const std::vector<uint8_t> garbage(500, 0x5A);
  EXPECT_EQ(slave.append_replica(PhyOffset(0), garbage).code(), StatusCode::kCorruption);
  EXPECT_EQ(slave.max_phy_offset(), PhyOffset(0));
  // A chunk for an offset that is not the slave's end.
  EXPECT_EQ(slave.append_replica(PhyOffset(record), second).code(), StatusCode::kInvalidArgument);

  // The real thing, cut mid-record: the complete records are dispatched,
  // the partial one waits, and is dropped before a resume.
  const size_t cut = record + 50;
  ASSERT_TRUE(slave.append_replica(PhyOffset(0), std::span<const uint8_t>(all.data(), cut)).ok());
  EXPECT_EQ(slave.max_phy_offset(), PhyOffset(static_cast<int64_t>(cut)));
  EXPECT_EQ(slave.replica_complete_end(), PhyOffset(static_cast<int64_t>(record)));
  world.run_for(millis(50));
  EXPECT_EQ(slave.dispatched_phy_offset(), PhyOffset(static_cast<int64_t>(record)));
  ASSERT_TRUE(slave.append_replica(PhyOffset(static_cast<int64_t>(cut)),
                                   std::span<const uint8_t>(all.data() + cut, all.size() - cut))
                  .ok());
  EXPECT_EQ(slave.replica_complete_end(), master_end);
  world.run_for(millis(50));
  EXPECT_EQ(slave.dispatched_phy_offset(), master_end);
  EXPECT_EQ(slave.max_offset_in_queue(kTopic, 0), world.master_store().max_offset_in_queue(kTopic, 0));

  ASSERT_EQ(world.send(kTopic, 100).code, ResponseCode::SUCCESS);
  const auto more = HASimWorld::log_bytes(world.master_store(), master_end, world.master_store().max_phy_offset());
  ASSERT_TRUE(slave.append_replica(master_end, std::span<const uint8_t>(more).first(30)).ok());
  ASSERT_TRUE(slave.truncate_replica_tail().ok());
  EXPECT_EQ(slave.max_phy_offset(), master_end);
  EXPECT_EQ(slave.replica_complete_end(), master_end);
}

}  // namespace
}  // namespace mqlab::ha::testing::ha_divergence_test
