// dispatchFlushedOnly (message_store_config.h): a SYNC_FLUSH master builds
// ConsumeQueue entries only for flushed records. Without it (RocketMQ 4.x), a
// consumer reads a record whose group commit is still in flight, a power cut
// takes the record, recovery hands its queue offset to the next put, and the
// consumer, already past that offset, never reads the acknowledged message
// stored there (apache/rocketmq #8239). These tests drive that sequence on a
// StoreSimWorld with an HDD (9 ms per fsync) so the window is wide and exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "broker/store/message_store.h"
#include "broker/store/test/store_sim_world.h"

namespace mqlab::store::testing::dispatch_flushed_only_test {
namespace {

constexpr char kTopic[] = "TopicTest";

StoreSimWorld hdd_world(bool dispatch_flushed_only) {
  MessageStoreConfig config = small_store_config(FlushDiskType::SYNC_FLUSH);
  config.dispatchFlushedOnly = dispatch_flushed_only;
  // No torn sectors: the unflushed record is gone entirely after the cut.
  return StoreSimWorld(config, sim::DiskProfile::hdd(), /*seed=*/7, /*torn_sector_probability=*/0.0);
}

QueueOffset queue_max(StoreSimWorld& world) { return world.store().max_offset_in_queue(kTopic, 0); }

// Puts "in-flight" without waiting and runs until its record is committed
// (written to the page cache) but its group commit has not completed.
void put_until_written_not_flushed(StoreSimWorld& world, std::optional<PutMessageResult>& reply) {
  world.store().put_message(make_message(kTopic, 0, "in-flight"), [&](PutMessageResult r) { reply = std::move(r); });
  const PhyOffset before = world.store().max_phy_offset();
  world.run_until([&] { return world.store().max_phy_offset() > before; });
  // Let every task of this instant run (the dispatcher included), not the fsync.
  world.run_for(millis(1));
  ASSERT_FALSE(reply.has_value()) << "the fsync of the HDD takes 9 ms";
  ASSERT_LT(world.store().flushed_phy_offset(), world.store().max_phy_offset());
}

// 4.x's window, kept behind dispatchFlushedOnly=false: the failure the option exists for.
TEST(DispatchFlushedOnly, OffAConsumerReadsAnUnflushedRecordAndSkipsTheAcknowledgedOneAfterAPowerCut) {
  StoreSimWorld world = hdd_world(false);
  ASSERT_TRUE(world.start().ok());
  ASSERT_EQ(world.put(make_message(kTopic, 0, "first")).status, PutMessageStatus::PUT_OK);
  std::optional<PutMessageResult> reply;
  put_until_written_not_flushed(world, reply);
  // Dispatched before the flush: a consumer reads it and moves to offset 2.
  EXPECT_EQ(queue_max(world), QueueOffset(2));
  EXPECT_EQ(world.body_at(kTopic, 0, QueueOffset(1)), "in-flight");
  const QueueOffset consumer_next(2);

  world.power_loss();
  ASSERT_TRUE(world.start().ok());
  EXPECT_EQ(queue_max(world), QueueOffset(1)) << "the unflushed record is gone; it was never acknowledged";
  const PutMessageResult after = world.put(make_message(kTopic, 0, "after-restart"));
  ASSERT_EQ(after.status, PutMessageStatus::PUT_OK);
  // The acknowledged message took the offset the consumer already passed.
  EXPECT_EQ(after.append.queue_offset, QueueOffset(1));
  EXPECT_LT(after.append.queue_offset, consumer_next);
  EXPECT_EQ(world.body_at(kTopic, 0, QueueOffset(1)), "after-restart");
  EXPECT_EQ(world.store().get_message("cg", kTopic, 0, consumer_next, 32).status,
            GetMessageStatus::OFFSET_OVERFLOW_ONE)
      << "from its offset the consumer sees nothing: the acknowledged message is skipped";
}

TEST(DispatchFlushedOnly, OnAnUnflushedRecordIsInvisibleUntilItsGroupCommitCompletes) {
  StoreSimWorld world = hdd_world(true);
  ASSERT_TRUE(world.start().ok());
  ASSERT_EQ(world.put(make_message(kTopic, 0, "first")).status, PutMessageStatus::PUT_OK);
  std::optional<PutMessageResult> reply;
  put_until_written_not_flushed(world, reply);
  EXPECT_EQ(world.store().dispatched_phy_offset(), world.store().flushed_phy_offset());
  EXPECT_EQ(queue_max(world), QueueOffset(1));
  EXPECT_EQ(world.store().get_message("cg", kTopic, 0, QueueOffset(1), 32).status,
            GetMessageStatus::OFFSET_OVERFLOW_ONE);

  world.run_until([&] { return reply.has_value(); });
  ASSERT_EQ(reply->status, PutMessageStatus::PUT_OK);
  world.run_for(millis(1));  // the dispatch the flush woke
  EXPECT_EQ(world.store().dispatched_phy_offset(), world.store().max_phy_offset());
  EXPECT_EQ(world.body_at(kTopic, 0, QueueOffset(1)), "in-flight");
}

TEST(DispatchFlushedOnly, OnAPowerCutBeforeTheFlushLeavesNoGapAConsumerCouldHaveCrossed) {
  StoreSimWorld world = hdd_world(true);
  ASSERT_TRUE(world.start().ok());
  ASSERT_EQ(world.put(make_message(kTopic, 0, "first")).status, PutMessageStatus::PUT_OK);
  std::optional<PutMessageResult> reply;
  put_until_written_not_flushed(world, reply);
  // What a consumer can read: offset 0 only; it stands at 1.
  EXPECT_EQ(world.body_at(kTopic, 0, QueueOffset(0)), "first");
  EXPECT_EQ(world.body_at(kTopic, 0, QueueOffset(1)), "");
  const QueueOffset consumer_next(1);

  world.power_loss();
  ASSERT_TRUE(world.start().ok());
  const PutMessageResult after = world.put(make_message(kTopic, 0, "after-restart"));
  ASSERT_EQ(after.status, PutMessageStatus::PUT_OK);
  EXPECT_EQ(after.append.queue_offset, consumer_next);
  world.run_for(millis(1));
  EXPECT_EQ(world.body_at(kTopic, 0, consumer_next), "after-restart") << "the consumer reads the acknowledged message";
}

TEST(DispatchFlushedOnly, OnPutsThatDoNotWaitForTheFlushStillBecomeVisible) {
  StoreSimWorld world = hdd_world(true);
  ASSERT_TRUE(world.start().ok());
  MessageToStore message = make_message(kTopic, 0, "no-wait");
  message.properties[std::string(kPropertyWaitStoreMsgOk)] = "false";
  // PUT_OK at the group write, before any fsync; no put waits for one.
  ASSERT_EQ(world.put(std::move(message)).status, PutMessageStatus::PUT_OK);
  EXPECT_EQ(queue_max(world), QueueOffset(0));
  // The store asks the group commit for a flush itself.
  world.run_for(millis(50));
  EXPECT_EQ(world.store().flushed_phy_offset(), world.store().max_phy_offset());
  EXPECT_EQ(world.body_at(kTopic, 0, QueueOffset(0)), "no-wait");
}

TEST(DispatchFlushedOnly, OnKillAndCleanShutdownDispatchEverythingTheRecoveryKeeps) {
  StoreSimWorld world = hdd_world(true);
  ASSERT_TRUE(world.start().ok());
  ASSERT_EQ(world.put(make_message(kTopic, 0, "first")).status, PutMessageStatus::PUT_OK);
  std::optional<PutMessageResult> reply;
  put_until_written_not_flushed(world, reply);
  // kill -9: the page cache keeps the record; recovery verifies, flushes and
  // dispatches it before the store serves.
  world.crash();
  ASSERT_TRUE(world.start().ok());
  EXPECT_EQ(queue_max(world), QueueOffset(2));
  EXPECT_EQ(world.body_at(kTopic, 0, QueueOffset(1)), "in-flight");
  EXPECT_EQ(world.store().flushed_phy_offset(), world.store().max_phy_offset());

  // Clean shutdown with a record written and not flushed: it is flushed,
  // then dispatched, and the ConsumeQueue on disk holds it.
  std::optional<PutMessageResult> last;
  world.store().put_message(make_message(kTopic, 0, "last"), [&](PutMessageResult r) { last = std::move(r); });
  ASSERT_TRUE(world.shutdown().ok());
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->status, PutMessageStatus::PUT_OK);
  ASSERT_TRUE(world.start().ok());
  EXPECT_FALSE(world.store().recovery_report().abnormal);
  EXPECT_EQ(queue_max(world), QueueOffset(3));
  EXPECT_EQ(world.body_at(kTopic, 0, QueueOffset(2)), "last");
}

// A batch that crosses a roll the full disk refuses: the BLANK's write
// commits the puts before it, and the flush the BLANK needs for dispatch is
// requested after theirs (the group commit takes requests in offset order;
// the disk-full pytest found the broker asserting on it).
TEST(DispatchFlushedOnly, ARefusedRollInABatchAcknowledgesAndDispatchesThePutsBeforeIt) {
  StoreSimWorld world = hdd_world(true);
  ASSERT_TRUE(world.start().ok());
  ASSERT_EQ(world.put(make_message(kTopic, 0, "first")).status, PutMessageStatus::PUT_OK);
  // Room for a few small files, not for the next segment.
  world.disk().set_capacity_bytes(world.disk().used_bytes() + 8 * 4096);
  // One turn of puts, more than the rest of the first segment holds.
  const int64_t segment = world.config().mappedFileSizeCommitLog;
  const int count = static_cast<int>(segment / 1000) + 10;
  std::vector<std::optional<PutMessageResult>> replies(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    world.store().put_message(make_message(kTopic, 0, std::string(1000, static_cast<char>('a' + i % 26))),
                              [&replies, i](PutMessageResult r) { replies[static_cast<size_t>(i)] = std::move(r); });
  }
  world.run_until([&] {
    return std::all_of(replies.begin(), replies.end(), [](const auto& reply) { return reply.has_value(); });
  });
  int acknowledged = 1;  // "first"
  bool refused = false;
  for (const std::optional<PutMessageResult>& reply : replies) {
    if (reply->status == PutMessageStatus::PUT_OK) {
      EXPECT_FALSE(refused) << "a put acknowledged after one the full disk refused";
      ++acknowledged;
    } else {
      refused = true;
    }
  }
  ASSERT_TRUE(refused) << "the batch never reached the refused roll";
  ASSERT_GT(acknowledged, 1);
  world.run_for(millis(100));
  EXPECT_EQ(world.store().flushed_phy_offset(), PhyOffset(segment)) << "the BLANK is flushed";
  EXPECT_EQ(world.store().dispatched_phy_offset(), PhyOffset(segment)) << "and the dispatcher passed it";
  EXPECT_EQ(queue_max(world), QueueOffset(acknowledged));
}

TEST(DispatchFlushedOnly, AsyncFlushDispatchesWhatIsWritten) {
  MessageStoreConfig config = small_store_config(FlushDiskType::ASYNC_FLUSH);
  ASSERT_TRUE(config.dispatchFlushedOnly);  // the default
  StoreSimWorld world(config, sim::DiskProfile::hdd());
  ASSERT_TRUE(world.start().ok());
  ASSERT_EQ(world.put(make_message(kTopic, 0, "async")).status, PutMessageStatus::PUT_OK);
  world.run_for(millis(1));
  EXPECT_LT(world.store().flushed_phy_offset(), world.store().max_phy_offset());
  EXPECT_EQ(world.body_at(kTopic, 0, QueueOffset(0)), "async") << "ASYNC_FLUSH keeps 4.x's visibility";
}

TEST(DispatchFlushedOnly, IsABrokerConfKey) {
  MessageStoreConfig config;
  EXPECT_EQ(config.to_properties().at("dispatchFlushedOnly"), "true");
  Result<bool> set = config.set_property("dispatchFlushedOnly", "false");
  ASSERT_TRUE(set.ok() && *set);
  EXPECT_FALSE(config.dispatchFlushedOnly);
  Result<bool> bad = config.set_property("dispatchFlushedOnly", "maybe");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("dispatchFlushedOnly=maybe"), std::string::npos) << bad.status().to_string();
  EXPECT_FALSE(config.dispatchFlushedOnly) << "a bad value changes nothing";
}

}  // namespace
}  // namespace mqlab::store::testing::dispatch_flushed_only_test
