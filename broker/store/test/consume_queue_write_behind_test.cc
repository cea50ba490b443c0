// A serving store leaves ConsumeQueue entries buffered across dispatch tasks
// (issue 8: a pwrite per 4 KiB page, not per task): readers see them at once,
// the flush pass writes them, and a kill -9 or a power cut that finds them
// buffered loses nothing recovery cannot rebuild from the CommitLog.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "broker/store/message_store.h"
#include "broker/store/test/store_checker.h"
#include "broker/store/test/store_sim_world.h"

namespace mqlab::store::testing::consume_queue_write_behind_test {
namespace {

constexpr int kPuts = 40;  // 20 per queue: 400 bytes of entries, well under a page

// The first entry of TopicA-queue_id as the device holds it (zeros: not written).
std::vector<uint8_t> first_entry_on_device(StoreSimWorld& world, int32_t queue_id) {
  const std::string path = world.config().consume_queue_dir() + "/TopicA/" + std::to_string(queue_id) + "/" +
                           MappedFile::file_name(0);
  Result<std::shared_ptr<env::File>> file = world.disk().open(path, {}, sim::kWorldOwner, path);
  std::vector<uint8_t> entry(kConsumeQueueEntrySize, 0xEE);
  if (!file.ok()) return {};  // not even created
  EXPECT_TRUE((*file)->pread(0, entry).ok());
  return entry;
}

bool all_zero(const std::vector<uint8_t>& bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b == 0; });
}

void put_and_dispatch(StoreSimWorld& world) {
  for (int i = 0; i < kPuts; ++i) {
    ASSERT_EQ(world.put(make_message("TopicA", i % 2, "m" + std::to_string(i))).status, PutMessageStatus::PUT_OK);
  }
  world.run_for(millis(5));  // dispatched; the flush pass (1 s) has not run
  ASSERT_EQ(world.store().dispatched_phy_offset(), world.store().max_phy_offset());
  for (int32_t queue_id : {0, 1}) {
    ASSERT_EQ(world.store().max_offset_in_queue("TopicA", queue_id), QueueOffset(kPuts / 2));
    const std::vector<uint8_t> on_device = first_entry_on_device(world, queue_id);
    ASSERT_TRUE(on_device.empty() || all_zero(on_device)) << "the entries are still buffered";
  }
  // Readers see the buffered entries.
  EXPECT_EQ(world.store().get_message("g", "TopicA", 1, QueueOffset(0), 32).messages.size(), size_t{kPuts / 2});
}

TEST(ConsumeQueueWriteBehind, TheFlushPassWritesBufferedEntries) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  put_and_dispatch(world);
  world.run_for(millis(1'100));
  for (int32_t queue_id : {0, 1}) EXPECT_FALSE(all_zero(first_entry_on_device(world, queue_id)));
}

TEST(ConsumeQueueWriteBehind, KillWithEntriesBufferedLosesNoEntry) {
  for (FlushDiskType flush : {FlushDiskType::ASYNC_FLUSH, FlushDiskType::SYNC_FLUSH}) {
    StoreSimWorld world(small_store_config(flush));
    ASSERT_TRUE(world.start().ok());
    put_and_dispatch(world);
    world.crash();
    ASSERT_TRUE(world.start().ok());
    EXPECT_TRUE(world.store().recovery_report().abnormal);
    for (int32_t queue_id : {0, 1}) {
      EXPECT_EQ(world.store().max_offset_in_queue("TopicA", queue_id), QueueOffset(kPuts / 2));
    }
    const std::vector<LoggedRecord> log = scan_log(world.store());
    EXPECT_EQ(log.size(), size_t{kPuts}) << "kill -9 keeps the page cache";
    EXPECT_TRUE(consume_queues_agree(world.store(), log));
  }
}

TEST(ConsumeQueueWriteBehind, PowerLossWithEntriesBufferedLeavesQueuesThatAgreeWithTheLog) {
  for (FlushDiskType flush : {FlushDiskType::ASYNC_FLUSH, FlushDiskType::SYNC_FLUSH}) {
    StoreSimWorld world(small_store_config(flush));
    ASSERT_TRUE(world.start().ok());
    put_and_dispatch(world);
    world.power_loss();
    ASSERT_TRUE(world.start().ok());
    const std::vector<LoggedRecord> log = scan_log(world.store());
    if (flush == FlushDiskType::SYNC_FLUSH) {
      EXPECT_EQ(log.size(), size_t{kPuts}) << "every put was flushed";
    }
    EXPECT_TRUE(consume_queues_agree(world.store(), log));
    // And the store goes on: a new put lands right after what survived.
    const PutMessageResult next = world.put(make_message("TopicA", 0, "after"));
    ASSERT_EQ(next.status, PutMessageStatus::PUT_OK);
    world.run_for(millis(5));
    EXPECT_TRUE(consume_queues_agree(world.store(), scan_log(world.store())));
  }
}

}  // namespace
}  // namespace mqlab::store::testing::consume_queue_write_behind_test
