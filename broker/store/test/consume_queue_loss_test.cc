// A ConsumeQueue lost while the broker was stopped (its directory, or one of
// its files) is rebuilt from the CommitLog even when none of its records lies
// inside recovery's re-dispatch window and every other queue survived.
// Each test writes a store on the SimDisk, removes queue files, restarts, and
// checks every record is readable through its queue again.
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "broker/common/log.h"
#include "broker/store/consume_queue_coverage.h"
#include "broker/store/message_store.h"
#include "broker/store/test/store_checker.h"
#include "broker/store/test/store_log_test.h"
#include "broker/store/test/store_sim_world.h"

namespace mqlab::store::testing::consume_queue_loss_test {
namespace {

const std::string kConsumeQueueDir = "/store/consumequeue";

std::string body_of(int i) { return "m" + std::to_string(i) + "|" + std::string(1000, static_cast<char>('a' + i % 26)); }

class ConsumeQueueLossTest : public StoreLogTest {
 protected:
  // TopicB queue 0 gets `early` messages first, then TopicA queues 0..2
  // fill the CommitLog to 3 segments and, 10 s later, to `segments` (so
  // that after a crash the checkpoint puts the window at the 3rd segment,
  // whose first record is of the first batch). Keys keep the IndexFile
  // non-empty: an empty one would have recovery re-dispatch everything.
  std::vector<PutMessageResult> write_store(StoreSimWorld& world, int early, size_t segments) {
    std::vector<PutMessageResult> early_puts;
    for (int i = 0; i < early; ++i) {
      early_puts.push_back(world.put(make_message("TopicB", 0, body_of(i), "b" + std::to_string(i))));
      EXPECT_EQ(early_puts.back().status, PutMessageStatus::PUT_OK);
    }
    int i = 0;
    const auto fill_to = [&](size_t files) {
      for (; world.store().commit_log().file_queue().files().size() < files; ++i) {
        const PutMessageResult put = world.put(make_message("TopicA", i % 3, body_of(i), "a" + std::to_string(i)));
        EXPECT_EQ(put.status, PutMessageStatus::PUT_OK);
        if (put.status != PutMessageStatus::PUT_OK) break;
      }
    };
    fill_to(3);
    world.run_for(seconds(10));
    fill_to(segments);
    world.run_for(seconds(3));
    world.run_until([&] { return world.store().dispatched_phy_offset() == world.store().max_phy_offset(); });
    return early_puts;
  }

  // Every early TopicB record is readable at its queue offset again, and
  // every queue agrees with the log.
  void expect_topic_b_whole(StoreSimWorld& world, const std::vector<PutMessageResult>& early) {
    MessageStore& store = world.store();
    EXPECT_EQ(store.min_offset_in_queue("TopicB", 0), QueueOffset(0));
    EXPECT_EQ(store.max_offset_in_queue("TopicB", 0), QueueOffset(static_cast<int64_t>(early.size())));
    for (size_t i = 0; i < early.size(); ++i) {
      const GetMessageResult got = store.get_message("g", "TopicB", 0, QueueOffset(static_cast<int64_t>(i)), 1);
      ASSERT_EQ(got.status, GetMessageStatus::FOUND) << "queue offset " << i;
      EXPECT_EQ(got.messages[0].phy_offset, early[i].append.wrote_offset);
    }
    EXPECT_TRUE(consume_queues_agree(store, scan_log(store)));
  }

};

MessageStoreConfig test_config() {
  MessageStoreConfig config = small_store_config(FlushDiskType::ASYNC_FLUSH);
  config.flushIntervalConsumeQueue = 100;  // the checkpoint follows every ConsumeQueue flush
  config.flushConsumeQueueThoroughInterval = 100;
  return config;
}

// The reported gap: TopicB-0's records all lie in the first segment, before
// the window (the 3rd-last segment after a clean shutdown; the checkpoint's
// after a kill -9), and TopicA's queues survive, so neither "no entry loaded"
// nor "a queue re-created past offset 0" fires.
TEST_F(ConsumeQueueLossTest, LostQueueWithNoRecordInTheWindowIsRebuilt) {
  for (const bool clean : {true, false}) {
    SCOPED_TRACE(clean ? "clean shutdown" : "kill -9");
    StoreSimWorld world(test_config());
    ASSERT_TRUE(world.start().ok());
    const std::vector<PutMessageResult> early = write_store(world, 20, 6);
    if (clean) {
      ASSERT_TRUE(world.shutdown().ok());
    } else {
      world.crash();
    }
    world.remove_tree(kConsumeQueueDir + "/TopicB/0");

    ASSERT_TRUE(world.start().ok());
    EXPECT_GT(world.store().recovery_report().scan_from, early.back().append.end_offset())
        << "the window alone would find TopicB's records";
    expect_topic_b_whole(world, early);
    EXPECT_TRUE(logged("consume queue TopicB-0 was lost or lacks records"));
    // And the next put continues the queue's numbering.
    const PutMessageResult next = world.put(make_message("TopicB", 0, "after the rebuild"));
    ASSERT_EQ(next.status, PutMessageStatus::PUT_OK);
    EXPECT_EQ(next.append.queue_offset, QueueOffset(static_cast<int64_t>(early.size())));
  }
}

// A queue that lost only its first file (64 entries here) comes back whole too.
TEST_F(ConsumeQueueLossTest, QueueMissingItsFirstFileIsRebuilt) {
  StoreSimWorld world(test_config());
  ASSERT_TRUE(world.start().ok());
  const std::vector<PutMessageResult> early = write_store(world, 100, 6);
  ASSERT_TRUE(world.shutdown().ok());
  const std::string first_file = kConsumeQueueDir + "/TopicB/0/" + MappedFile::file_name(0);
  ASSERT_TRUE(world.disk().exists(first_file));
  ASSERT_TRUE(world.disk().remove(first_file).ok());

  ASSERT_TRUE(world.start().ok());
  expect_topic_b_whole(world, early);
}

// No false alarm: an intact store audits clean and re-dispatches only its window.
TEST_F(ConsumeQueueLossTest, IntactStoreAuditsCleanAndKeepsItsWindow) {
  StoreSimWorld world(test_config());
  ASSERT_TRUE(world.start().ok());
  const std::vector<PutMessageResult> early = write_store(world, 20, 6);
  ASSERT_TRUE(world.shutdown().ok());

  ASSERT_TRUE(world.start().ok());
  MessageStore& store = world.store();
  Result<ConsumeQueueCoverage> coverage =
      audit_consume_queue_coverage(store, store.min_phy_offset(), store.max_phy_offset());
  ASSERT_TRUE(coverage.ok()) << coverage.status().to_string();
  EXPECT_TRUE(coverage->incomplete_queues.empty());
  EXPECT_EQ(coverage->records_unindexed, 0);
  EXPECT_EQ(coverage->entries_read, static_cast<int64_t>(scan_log(store).size()));
  EXPECT_FALSE(logged("lacks records"));
  EXPECT_GT(store.recovery_report().scan_from, store.min_phy_offset());
  expect_topic_b_whole(world, early);
}

// The audit names exactly the queue that lacks records, with a count.
TEST_F(ConsumeQueueLossTest, AuditNamesTheQueueMissingRecords) {
  StoreSimWorld world(test_config());
  ASSERT_TRUE(world.start().ok());
  const std::vector<PutMessageResult> early = write_store(world, 20, 3);
  MessageStore& store = world.store();
  ConsumeQueue* queue = store.find_consume_queue("TopicB", 0);
  ASSERT_NE(queue, nullptr);
  ASSERT_TRUE(queue->truncate_dirty(early[5].append.wrote_offset).ok());  // drops entries 5..19

  Result<ConsumeQueueCoverage> coverage =
      audit_consume_queue_coverage(store, store.min_phy_offset(), store.max_phy_offset());
  ASSERT_TRUE(coverage.ok()) << coverage.status().to_string();
  const std::set<std::pair<std::string, int32_t>> expected = {{"TopicB", 0}};
  EXPECT_EQ(coverage->incomplete_queues, expected);
  EXPECT_EQ(coverage->records_unindexed, 15);
  EXPECT_TRUE(coverage->stopped_at.empty());
}

}  // namespace
}  // namespace mqlab::store::testing::consume_queue_loss_test
