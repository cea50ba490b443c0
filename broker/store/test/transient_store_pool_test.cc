// transientStorePoolEnable (commit_real_time_service.h): puts acknowledged
// from the CommitLog's write buffer, committed on CommitRealTimeService's
// schedule, visible to consumers and to lookups by offset, id and key only
// once committed; what kill -9, a power cut and a clean shutdown do to the
// buffered tail. Driven on a StoreSimWorld, so every instant is exact.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "broker/store/message_store.h"
#include "broker/store/test/store_sim_world.h"

namespace mqlab::store::testing::transient_store_pool_test {
namespace {

constexpr char kTopic[] = "TopicTsp";

MessageStoreConfig pool_config() {
  MessageStoreConfig config = small_store_config(FlushDiskType::ASYNC_FLUSH);
  config.transientStorePoolEnable = true;
  return config;
}

StoreSimWorld pool_world(MessageStoreConfig config = pool_config()) {
  // No torn sectors: a power cut takes exactly the unflushed bytes.
  return StoreSimWorld(std::move(config), sim::DiskProfile::sata_ssd(), /*seed=*/11, /*torn_sector_probability=*/0.0);
}

QueueOffset queue_max(StoreSimWorld& world) { return world.store().max_offset_in_queue(kTopic, 0); }

PutMessageStatus put(StoreSimWorld& world, const std::string& body) {
  return world.put(make_message(kTopic, 0, body)).status;
}

// The write buffer's end: where the next record goes.
PhyOffset buffered_end(StoreSimWorld& world) { return world.store().commit_log().max_offset(); }

TEST(TransientStorePool, KeysAreRocketMQsAndOffByDefault) {
  MessageStoreConfig config;
  EXPECT_FALSE(config.transientStorePoolEnable);
  EXPECT_FALSE(config.is_transient_store_pool_enable());
  const std::map<std::string, std::string> properties = config.to_properties();
  EXPECT_EQ(properties.at("transientStorePoolEnable"), "false");
  EXPECT_EQ(properties.at("transientStorePoolSize"), "5");
  EXPECT_EQ(properties.at("commitIntervalCommitLog"), "200");
  EXPECT_EQ(properties.at("commitCommitLogLeastPages"), "4");
  EXPECT_EQ(properties.at("commitCommitLogThoroughInterval"), "200");
  for (const char* key : {"transientStorePoolSize", "commitIntervalCommitLog", "commitCommitLogThoroughInterval"}) {
    MessageStoreConfig bad;
    ASSERT_TRUE(bad.set_property(key, "0").ok());
    const Status status = bad.validate();
    EXPECT_FALSE(status.ok()) << key;
    EXPECT_NE(status.message().find(key), std::string::npos) << status.to_string();
  }
  Result<bool> garbled = config.set_property("transientStorePoolEnable", "yes");
  EXPECT_FALSE(garbled.ok());
  EXPECT_FALSE(config.transientStorePoolEnable) << "a bad value changes nothing";
}

TEST(TransientStorePool, IgnoredWithSyncFlushOrOnASlaveWithAWarning) {
  MessageStoreConfig config = pool_config();
  EXPECT_TRUE(config.is_transient_store_pool_enable());
  EXPECT_EQ(config.transient_store_pool_warning(), "");
  config.flushDiskType = FlushDiskType::SYNC_FLUSH;
  EXPECT_FALSE(config.is_transient_store_pool_enable());
  EXPECT_NE(config.transient_store_pool_warning().find("SYNC_FLUSH"), std::string::npos);
  config.flushDiskType = FlushDiskType::ASYNC_FLUSH;
  config.brokerRole = BrokerRole::SLAVE;
  EXPECT_FALSE(config.is_transient_store_pool_enable());
  EXPECT_NE(config.transient_store_pool_warning().find("SLAVE"), std::string::npos);

  // A SYNC_FLUSH store with the key set runs as it would without it: the
  // put is committed and flushed before PUT_OK.
  MessageStoreConfig sync = pool_config();
  sync.flushDiskType = FlushDiskType::SYNC_FLUSH;
  StoreSimWorld world = pool_world(sync);
  ASSERT_TRUE(world.start().ok());
  EXPECT_EQ(world.store().commit_real_time_service(), nullptr);
  EXPECT_FALSE(world.store().commit_log().transient_store_pool());
  ASSERT_EQ(put(world, "sync"), PutMessageStatus::PUT_OK);
  EXPECT_EQ(world.store().flushed_phy_offset(), buffered_end(world));
}

TEST(TransientStorePool, AcknowledgedFromTheBufferAndDispatchedOnlyAfterTheCommit) {
  StoreSimWorld world = pool_world();
  ASSERT_TRUE(world.start().ok());
  ASSERT_NE(world.store().commit_real_time_service(), nullptr);
  ASSERT_EQ(put(world, "first"), PutMessageStatus::PUT_OK);
  ASSERT_EQ(put(world, "second"), PutMessageStatus::PUT_OK);
  world.run_for(millis(20));
  // Acknowledged, not in the file: nothing reads it yet.
  EXPECT_EQ(world.store().max_phy_offset(), PhyOffset(0));
  EXPECT_GT(buffered_end(world), PhyOffset(0));
  EXPECT_EQ(world.store().dispatched_phy_offset(), PhyOffset(0));
  EXPECT_EQ(queue_max(world), QueueOffset(0));
  EXPECT_EQ(world.store().get_message("cg", kTopic, 0, QueueOffset(0), 32).status, GetMessageStatus::NO_MATCHED_LOGIC_QUEUE);
  Result<FileRegion> region = world.store().commit_log_region(PhyOffset(0), 1 << 20);
  ASSERT_TRUE(region.ok());
  EXPECT_EQ(region->length, 0u) << "the HA stream sees only committed bytes";

  // The first tick (commitIntervalCommitLog after start) is thorough: it
  // commits however little waits.
  world.run_for(millis(200));
  EXPECT_EQ(world.store().max_phy_offset(), buffered_end(world));
  EXPECT_EQ(world.store().commit_real_time_service()->stats().commits, 1u);
  world.run_for(millis(5));
  EXPECT_EQ(world.store().dispatched_phy_offset(), buffered_end(world));
  EXPECT_EQ(world.body_at(kTopic, 0, QueueOffset(0)), "first");
  EXPECT_EQ(world.body_at(kTopic, 0, QueueOffset(1)), "second");
}

// RocketMQ reads the CommitLog up to MappedFile.getReadPosition(), the
// committed position with a pool: VIEW_MESSAGE_BY_ID and QUERY_MESSAGE do
// not see an acknowledged record still in the write buffer (a kill -9 may
// yet take it and give its offset to another record).
TEST(TransientStorePool, LookupsByOffsetIdAndKeyReadOnlyCommittedRecords) {
  StoreSimWorld world = pool_world();
  ASSERT_TRUE(world.start().ok());
  const PutMessageResult first = world.put(make_message(kTopic, 0, "first", "order-1"));
  ASSERT_EQ(first.status, PutMessageStatus::PUT_OK);
  Result<OffsetMessageId> id = decode_offset_message_id(first.append.msg_id());
  ASSERT_TRUE(id.ok());
  ASSERT_EQ(id->offset, first.append.wrote_offset);
  ASSERT_EQ(world.store().max_phy_offset(), PhyOffset(0)) << "acknowledged, still buffered";
  auto by_key = [&](const std::string& key) {
    Result<std::vector<std::vector<uint8_t>>> found = world.store().query_message(kTopic, key, 32, 0, INT64_MAX);
    EXPECT_TRUE(found.ok()) << found.status().to_string();
    return found.ok() ? found->size() : size_t{0};
  };
  Result<std::vector<uint8_t>> by_id = world.store().look_message_by_offset(id->offset);
  EXPECT_EQ(by_id.status().code(), StatusCode::kNotFound) << "by id before the commit";
  Result<std::vector<uint8_t>> raw = world.store().commit_log().read(first.append.wrote_offset, 4);
  EXPECT_EQ(raw.status().code(), StatusCode::kNotFound) << "CommitLog::read stops at the committed end";
  EXPECT_NE(raw.status().message().find("write buffer"), std::string::npos) << raw.status().to_string();
  EXPECT_EQ(by_key("order-1"), 0u) << "by key before the commit";

  world.run_for(millis(205));  // the first (thorough) tick commits, dispatch indexes
  ASSERT_EQ(world.store().max_phy_offset(), first.append.end_offset());
  by_id = world.store().look_message_by_offset(id->offset);
  ASSERT_TRUE(by_id.ok()) << by_id.status().to_string();
  Result<DecodedRecord> decoded = decode_record(*by_id);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(std::string(decoded->message.body.begin(), decoded->message.body.end()), "first");
  EXPECT_EQ(by_key("order-1"), 1u);

  // A committed record and a buffered one in the same segment: each is
  // judged by where the commit ended.
  const PutMessageResult second = world.put(make_message(kTopic, 0, "second", "order-2"));
  ASSERT_EQ(second.status, PutMessageStatus::PUT_OK);
  ASSERT_EQ(second.append.wrote_offset, first.append.end_offset());
  EXPECT_TRUE(world.store().look_message_by_offset(first.append.wrote_offset).ok());
  EXPECT_EQ(world.store().look_message_by_offset(second.append.wrote_offset).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(by_key("order-2"), 0u);
  world.run_for(millis(205));
  EXPECT_TRUE(world.store().look_message_by_offset(second.append.wrote_offset).ok());
  EXPECT_EQ(by_key("order-2"), 1u);
}

TEST(TransientStorePool, CommitsByLeastPagesAndByTheThoroughInterval) {
  MessageStoreConfig config = pool_config();
  config.commitCommitLogThoroughInterval = 5'000;  // so least pages decides alone for a while
  StoreSimWorld world = pool_world(config);
  ASSERT_TRUE(world.start().ok());
  CommitRealTimeService& service = *world.store().commit_real_time_service();
  ASSERT_EQ(put(world, "small"), PutMessageStatus::PUT_OK);
  world.run_for(millis(1'000));
  EXPECT_EQ(world.store().max_phy_offset(), PhyOffset(0)) << "one small record spans fewer than 4 pages";
  EXPECT_GE(service.stats().skipped_ticks, 4u);
  EXPECT_EQ(service.stats().commits, 0u);

  // 4 KiB bodies until the buffer reaches past 4 page boundaries.
  while (world.store().commit_log().uncommitted_pages() < config.commitCommitLogLeastPages) {
    ASSERT_EQ(put(world, std::string(4000, 'p')), PutMessageStatus::PUT_OK);
  }
  EXPECT_EQ(world.store().max_phy_offset(), PhyOffset(0));
  world.run_for(millis(config.commitIntervalCommitLog));
  EXPECT_EQ(world.store().max_phy_offset(), buffered_end(world)) << "committed by least pages";
  EXPECT_EQ(service.stats().commits, 1u);
  const Nanos by_pages_at = service.last_commit_ns();

  // One small record again: only the thorough interval commits it, 5 s
  // after the last commit.
  ASSERT_EQ(put(world, "lonely"), PutMessageStatus::PUT_OK);
  const PhyOffset before = world.store().max_phy_offset();
  world.run_until([&] { return world.store().max_phy_offset() > before; }, seconds(30));
  EXPECT_EQ(world.store().max_phy_offset(), buffered_end(world));
  EXPECT_EQ(service.stats().commits, 2u);
  EXPECT_GE(service.last_commit_ns() - by_pages_at, millis(config.commitCommitLogThoroughInterval));
  EXPECT_LE(service.last_commit_ns() - by_pages_at,
            millis(config.commitCommitLogThoroughInterval + config.commitIntervalCommitLog));
}

TEST(TransientStorePool, KillLosesExactlyTheUncommittedTailAndRecoveryIsConsistent) {
  StoreSimWorld world = pool_world();
  ASSERT_TRUE(world.start().ok());
  for (int i = 0; i < 5; ++i) ASSERT_EQ(put(world, "kept-" + std::to_string(i)), PutMessageStatus::PUT_OK);
  world.run_for(millis(200));  // committed
  const PhyOffset committed = world.store().max_phy_offset();
  ASSERT_EQ(committed, buffered_end(world));
  for (int i = 0; i < 3; ++i) ASSERT_EQ(put(world, "lost-" + std::to_string(i)), PutMessageStatus::PUT_OK);
  ASSERT_GT(buffered_end(world), committed);
  ASSERT_EQ(world.store().max_phy_offset(), committed) << "the three are acknowledged and buffered";

  world.crash();
  ASSERT_TRUE(world.start().ok());
  EXPECT_TRUE(world.store().recovery_report().abnormal);
  EXPECT_EQ(world.store().max_phy_offset(), committed) << "exactly the committed records survive";
  EXPECT_EQ(world.store().dispatched_phy_offset(), committed);
  EXPECT_EQ(queue_max(world), QueueOffset(5));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(world.body_at(kTopic, 0, QueueOffset(i)), "kept-" + std::to_string(i));
  // No consumer saw the lost ones, so their queue offsets are free again.
  const PutMessageResult next = world.put(make_message(kTopic, 0, "after"));
  ASSERT_EQ(next.status, PutMessageStatus::PUT_OK);
  EXPECT_EQ(next.append.queue_offset, QueueOffset(5));
  EXPECT_EQ(next.append.wrote_offset, committed);
  world.run_for(millis(205));
  EXPECT_EQ(world.body_at(kTopic, 0, QueueOffset(5)), "after");
}

TEST(TransientStorePool, PowerLossLosesWhatWasNotFlushed) {
  StoreSimWorld world = pool_world();
  ASSERT_TRUE(world.start().ok());
  ASSERT_EQ(put(world, "early"), PutMessageStatus::PUT_OK);
  world.run_for(millis(200));  // committed; a small record does not reach the flush's 4 pages
  world.run_for(seconds(11));  // the thorough flush (flushCommitLogThoroughInterval 10 s) covers it
  const PhyOffset flushed = world.store().flushed_phy_offset();
  ASSERT_EQ(flushed, buffered_end(world));
  ASSERT_EQ(put(world, "committed-not-flushed"), PutMessageStatus::PUT_OK);
  world.run_for(millis(200));
  const PhyOffset committed = world.store().max_phy_offset();
  ASSERT_GT(committed, flushed);
  ASSERT_EQ(world.store().flushed_phy_offset(), flushed);
  ASSERT_EQ(put(world, "buffered"), PutMessageStatus::PUT_OK);

  world.power_loss();
  ASSERT_TRUE(world.start().ok());
  EXPECT_GE(world.store().max_phy_offset(), flushed);
  EXPECT_LE(world.store().max_phy_offset(), committed) << "the buffered record never reached the page cache";
  EXPECT_EQ(world.body_at(kTopic, 0, QueueOffset(0)), "early");
  EXPECT_EQ(world.store().dispatched_phy_offset(), world.store().max_phy_offset());
}

TEST(TransientStorePool, CleanShutdownCommitsAndFlushesEverything) {
  StoreSimWorld world = pool_world();
  ASSERT_TRUE(world.start().ok());
  std::vector<std::optional<PutMessageResult>> replies(4);
  for (size_t i = 0; i < replies.size(); ++i) {
    world.store().put_message(make_message(kTopic, 0, "m" + std::to_string(i)),
                              [&replies, i](PutMessageResult r) { replies[i] = std::move(r); });
  }
  world.run_for(millis(1));
  for (const auto& reply : replies) ASSERT_TRUE(reply.has_value() && reply->status == PutMessageStatus::PUT_OK);
  ASSERT_EQ(world.store().max_phy_offset(), PhyOffset(0));
  const PhyOffset end = buffered_end(world);
  ASSERT_TRUE(world.shutdown().ok());
  world.disk().power_loss(world.random());  // only what the shutdown flushed is left
  ASSERT_TRUE(world.start().ok());
  EXPECT_FALSE(world.store().recovery_report().abnormal);
  EXPECT_EQ(world.store().max_phy_offset(), end);
  EXPECT_EQ(queue_max(world), QueueOffset(4));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(world.body_at(kTopic, 0, QueueOffset(i)), "m" + std::to_string(i));
}

TEST(TransientStorePool, RollsIntoNewSegmentsWithTheBufferCommittedFirst) {
  StoreSimWorld world = pool_world();
  ASSERT_TRUE(world.start().ok());
  const int64_t segment = world.config().mappedFileSizeCommitLog;
  int count = 0;
  while (buffered_end(world) < PhyOffset(2 * segment + 1000)) {
    ASSERT_EQ(put(world, std::string(3000, static_cast<char>('a' + count % 26))), PutMessageStatus::PUT_OK);
    ++count;
    const auto& files = world.store().commit_log().file_queue().files();
    for (size_t i = 0; i + 1 < files.size(); ++i) EXPECT_FALSE(files[i]->has_pending()) << "only the last buffers";
  }
  EXPECT_GE(world.store().max_phy_offset(), PhyOffset(2 * segment)) << "each roll committed the full segment";
  world.run_for(millis(205));
  EXPECT_EQ(queue_max(world), QueueOffset(count));
  world.crash();
  ASSERT_TRUE(world.start().ok());
  EXPECT_EQ(queue_max(world), QueueOffset(count)) << "all committed before the kill";
}

}  // namespace
}  // namespace mqlab::store::testing::transient_store_pool_test
