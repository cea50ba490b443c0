// The CommitLog's group write (commit_log.h): puts of one executor turn are
// buffered and committed with one pwrite before any is acknowledged. Checks
// that the offsets are those one-put-at-a-time gives (across segment rolls
// and their BLANK records), that a kill -9 or a power loss in the middle of
// a batch recovers a clean prefix, and the kill -9 contract of ASYNC_FLUSH.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "broker/store/test/store_checker.h"
#include "broker/store/test/store_log_test.h"
#include "broker/store/test/store_sim_world.h"

namespace mqlab::store::testing::group_write_test {
namespace {

class GroupWriteTest : public StoreLogTest {};

// Sizes chosen so that a batch crosses several segments of small_store_config
// (about 76 KiB each) and the tails left for the BLANK vary.
MessageToStore numbered_message(int i) {
  std::string body = "m" + std::to_string(i) + "|";
  body.append(static_cast<size_t>(300 + (i * 397) % 2500), static_cast<char>('a' + i % 26));
  return make_message(i % 3 == 0 ? "TopicA" : "TopicB", i % 4, body, i % 5 == 0 ? "key" + std::to_string(i) : "");
}

// Issues every put in one task (they form one batch, cut only by segment
// rolls and the write buffer's size) and runs until all are answered.
std::vector<PutMessageResult> put_all_in_one_turn(StoreSimWorld& world, int count) {
  std::vector<std::optional<PutMessageResult>> replies(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    world.store().put_message(numbered_message(i), [&replies, i](PutMessageResult r) { replies[i] = std::move(r); });
  }
  EXPECT_FALSE(replies.front().has_value()) << "a reply never runs inside put_message";
  world.run_until([&] { return replies.back().has_value(); });
  std::vector<PutMessageResult> results;
  for (auto& reply : replies) {
    EXPECT_TRUE(reply.has_value());
    if (reply) results.push_back(*reply);
  }
  return results;
}

TEST_F(GroupWriteTest, ABatchGetsTheOffsetsOnePutAtATimeGetsAcrossSegmentRolls) {
  constexpr int kCount = 150;  // about 230 KiB: three segment rolls inside one batch
  StoreSimWorld one_by_one(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(one_by_one.start().ok());
  std::vector<PutMessageResult> expected;
  for (int i = 0; i < kCount; ++i) expected.push_back(one_by_one.put(numbered_message(i)));

  StoreSimWorld batched(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(batched.start().ok());
  const std::vector<PutMessageResult> got = put_all_in_one_turn(batched, kCount);
  ASSERT_EQ(got.size(), expected.size());
  const int64_t segment = batched.config().mappedFileSizeCommitLog;
  int rolls = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].status, PutMessageStatus::PUT_OK) << got[i].remark;
    EXPECT_EQ(got[i].append.wrote_offset, expected[i].append.wrote_offset) << "put " << i;
    EXPECT_EQ(got[i].append.queue_offset, expected[i].append.queue_offset) << "put " << i;
    EXPECT_EQ(got[i].append.wrote_bytes, expected[i].append.wrote_bytes) << "put " << i;
    // No record straddles two segments.
    EXPECT_EQ(got[i].append.wrote_offset.value() / segment, (got[i].append.end_offset().value() - 1) / segment);
    if (i > 0 && got[i].append.wrote_offset != got[i - 1].append.end_offset()) {
      ++rolls;  // a BLANK ends the previous segment: this record opens the next one
      EXPECT_EQ(got[i].append.wrote_offset.value() % segment, 0) << "put " << i;
    }
  }
  EXPECT_GE(rolls, 2);
  EXPECT_EQ(batched.store().max_phy_offset(), one_by_one.store().max_phy_offset());

  // The log on the device holds the records in put order, and the
  // dispatcher, reading it back, built the same ConsumeQueues.
  batched.run_until([&] { return batched.store().dispatched_phy_offset() == batched.store().max_phy_offset(); });
  const std::vector<LoggedRecord> log = scan_log(batched.store());
  ASSERT_EQ(log.size(), got.size());
  for (size_t i = 0; i < log.size(); ++i) {
    EXPECT_EQ(log[i].offset, got[i].append.wrote_offset);
    EXPECT_EQ(log[i].queue_offset, got[i].append.queue_offset);
    EXPECT_TRUE(log[i].body.starts_with("m" + std::to_string(i) + "|")) << log[i].body.substr(0, 8);
  }
  EXPECT_TRUE(consume_queues_agree(batched.store(), log));
}

TEST_F(GroupWriteTest, PutsOfOneTurnAreAnsweredTogetherAfterTheirBytesReachedTheFile) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  ASSERT_EQ(world.put(make_message("TopicA", 0, "before")).status, PutMessageStatus::PUT_OK);
  world.run_until([&] { return world.store().dispatched_phy_offset() == world.store().max_phy_offset(); });
  const PhyOffset before = world.store().max_phy_offset();
  const uint64_t written_before = world.disk().counters().bytes_written;
  int answered = 0;
  PhyOffset end_seen_by_replies;
  for (int i = 0; i < 10; ++i) {
    world.store().put_message(make_message("TopicA", i % 2, "batched-" + std::to_string(i)), [&](PutMessageResult r) {
      EXPECT_EQ(r.status, PutMessageStatus::PUT_OK);
      ++answered;
      // Every reply sees all ten on the device: they were committed as one.
      end_seen_by_replies = world.store().max_phy_offset();
    });
  }
  // Appended (offsets taken) but not yet on the device nor visible outside.
  EXPECT_GT(world.store().commit_log().max_offset(), before);
  EXPECT_EQ(world.store().max_phy_offset(), before);
  EXPECT_EQ(world.disk().counters().bytes_written, written_before);
  world.run_until([&] { return answered == 10; });
  ASSERT_EQ(answered, 10);
  EXPECT_EQ(end_seen_by_replies, world.store().commit_log().max_offset());
  // Only the CommitLog was written so far: the dispatcher runs after the replies.
  EXPECT_EQ(world.disk().counters().bytes_written - written_before,
            static_cast<uint64_t>(end_seen_by_replies.value() - before.value()));
}

// kill -9 keeps the page cache: under ASYNC_FLUSH every answered put is
// there after a restart, even though nothing was flushed.
TEST_F(GroupWriteTest, AsyncFlushAnsweredPutsSurviveKillNine) {
  MessageStoreConfig config = small_store_config(FlushDiskType::ASYNC_FLUSH);
  config.flushIntervalCommitLog = 60'000;  // no flush during the test
  config.flushCommitLogThoroughInterval = 600'000;
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  const std::vector<PutMessageResult> answered = put_all_in_one_turn(world, 40);
  for (const PutMessageResult& r : answered) ASSERT_EQ(r.status, PutMessageStatus::PUT_OK) << r.remark;
  ASSERT_LT(world.store().flushed_phy_offset(), answered.back().append.end_offset()) << "nothing flushed yet";
  world.crash();
  ASSERT_TRUE(world.start().ok());
  const std::vector<LoggedRecord> log = scan_log(world.store());
  ASSERT_EQ(log.size(), answered.size());
  for (size_t i = 0; i < log.size(); ++i) EXPECT_EQ(log[i].offset, answered[i].append.wrote_offset);
  EXPECT_TRUE(consume_queues_agree(world.store(), log));
}

// A kill -9 after puts were appended but before their group write: none was
// answered, none is in the log, and the next puts take the same offsets.
TEST_F(GroupWriteTest, KillNineBeforeTheGroupWriteLosesOnlyUnansweredPutsAndRecoversCleanly) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  const std::vector<PutMessageResult> first = put_all_in_one_turn(world, 20);
  const PhyOffset end = world.store().max_phy_offset();
  int answered = 0;
  for (int i = 20; i < 40; ++i) world.store().put_message(numbered_message(i), [&](PutMessageResult) { ++answered; });
  world.crash();  // before the task that would have written them
  EXPECT_EQ(answered, 0);
  ASSERT_TRUE(world.start().ok());
  EXPECT_EQ(world.store().max_phy_offset(), end);
  std::vector<LoggedRecord> log = scan_log(world.store());
  ASSERT_EQ(log.size(), first.size());
  EXPECT_TRUE(consume_queues_agree(world.store(), log));

  // The queue offsets they had taken were never stored: the next puts reuse them.
  const PutMessageResult again = world.put(numbered_message(20));
  ASSERT_EQ(again.status, PutMessageStatus::PUT_OK);
  EXPECT_EQ(again.append.wrote_offset, end);
  StoreSimWorld reference(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(reference.start().ok());
  for (int i = 0; i < 20; ++i) ASSERT_EQ(reference.put(numbered_message(i)).status, PutMessageStatus::PUT_OK);
  EXPECT_EQ(again.append.queue_offset, reference.put(numbered_message(20)).append.queue_offset);
}

// A power loss right after a batch's group write (answered, not flushed):
// the torn tail is cut at a record boundary and what remains is a prefix of
// the batch with ConsumeQueues that agree. SYNC_FLUSH answered puts survive.
TEST_F(GroupWriteTest, PowerLossAfterABatchRecoversAPrefixAndKeepsSyncFlushAcks) {
  for (FlushDiskType flush : {FlushDiskType::ASYNC_FLUSH, FlushDiskType::SYNC_FLUSH}) {
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      SCOPED_TRACE("flush " + std::string(flush_disk_type_name(flush)) + " seed " + std::to_string(seed));
      StoreSimWorld world(small_store_config(flush), sim::DiskProfile::sata_ssd(), seed);
      ASSERT_TRUE(world.start().ok());
      const std::vector<PutMessageResult> durable = put_all_in_one_turn(world, 30);
      std::vector<std::optional<PutMessageResult>> replies(60);
      for (int i = 30; i < 90; ++i) {
        world.store().put_message(numbered_message(i), [&replies, i](PutMessageResult r) { replies[i - 30] = r; });
      }
      // Run until the batch is on the device (its group write ran) and, for
      // ASYNC_FLUSH, answered; SYNC_FLUSH answers wait for the fsync.
      world.run_until([&] { return world.store().max_phy_offset() == world.store().commit_log().max_offset(); });
      world.power_loss();
      ASSERT_TRUE(world.start().ok());
      const std::vector<LoggedRecord> log = scan_log(world.store());
      if (flush == FlushDiskType::SYNC_FLUSH) {
        EXPECT_GE(log.size(), durable.size()) << "acknowledged before the batch";
      }
      ASSERT_LE(log.size(), 90u);
      for (size_t i = 0; i < log.size(); ++i) {
        EXPECT_TRUE(log[i].body.starts_with("m" + std::to_string(i) + "|")) << "record " << i << " out of place";
      }
      for (size_t i = 0; i < replies.size(); ++i) {
        if (flush == FlushDiskType::SYNC_FLUSH && replies[i] && replies[i]->status == PutMessageStatus::PUT_OK) {
          EXPECT_GT(log.size(), 30 + i) << "SYNC_FLUSH lost acknowledged put " << 30 + i;
        }
      }
      EXPECT_TRUE(consume_queues_agree(world.store(), log));
    }
  }
}

// A device that fails between the appends and their group write: every put
// of the batch is refused (none was answered), nothing of it is visible.
TEST_F(GroupWriteTest, ARefusedGroupWriteFailsEveryPutOfTheBatch) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  ASSERT_EQ(world.put(make_message("TopicA", 0, "stored")).status, PutMessageStatus::PUT_OK);
  const PhyOffset end = world.store().max_phy_offset();
  std::vector<PutMessageResult> replies;
  for (int i = 0; i < 5; ++i) {
    world.store().put_message(numbered_message(i), [&](PutMessageResult r) { replies.push_back(std::move(r)); });
  }
  world.disk().fail();
  world.run_until([&] { return replies.size() == 5; });
  ASSERT_EQ(replies.size(), 5u);
  for (const PutMessageResult& r : replies) {
    EXPECT_EQ(r.status, PutMessageStatus::UNKNOWN_ERROR);
    EXPECT_FALSE(put_message_stored(r.status));
  }
  EXPECT_EQ(world.store().max_phy_offset(), end);
  EXPECT_EQ(world.store().commit_log().max_offset(), end) << "the dropped records gave their offsets back";
  EXPECT_EQ(world.store().commit_log().topic_queue_offset("TopicA", 0), QueueOffset(1));
  EXPECT_TRUE(logged("dropped 5 uncommitted records"));
}

}  // namespace
}  // namespace mqlab::store::testing::group_write_test
