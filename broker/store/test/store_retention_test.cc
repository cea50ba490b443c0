// Retention: which CommitLog segments the clean service deletes (fileReservedTime at a deleteWhen hour, disk
// ratios, the manual trigger), and what follows (min offsets, ConsumeQueue trims, refused puts), in virtual time.
#include <gtest/gtest.h>

#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "broker/common/log.h"
#include "broker/store/message_store.h"
#include "broker/store/test/store_checker.h"
#include "broker/store/test/store_log_test.h"
#include "broker/store/test/store_sim_world.h"

namespace mqlab::store::testing::store_retention_test {
namespace {

constexpr int64_t kHourMs = 3'600'000;
const std::string kQueueDir = "/store/consumequeue/TopicA/0";

MessageStoreConfig retention_config() {
  MessageStoreConfig config = small_store_config(FlushDiskType::ASYNC_FLUSH);
  config.fileReservedTime = 1;  // hours
  config.deleteWhen = "04";
  config.cleanResourceInterval = 10'000;
  // Fewer timer events over hours of virtual time; flushing is not under test.
  config.flushIntervalCommitLog = 5'000;
  config.flushIntervalConsumeQueue = 5'000;
  return config;
}

// Puts ~1 KiB messages to TopicA queue 0 until the CommitLog has `segments`
// files with 5 records in the last one.
std::vector<PutMessageResult> fill_to(StoreSimWorld& world, size_t segments) {
  std::vector<PutMessageResult> puts;
  int in_last = 0;
  while (in_last < 5) {
    const size_t before = world.store().commit_log().file_queue().files().size();
    const std::string body = "m" + std::to_string(puts.size()) + "|" + std::string(1000, 'r');
    puts.push_back(world.put(make_message("TopicA", 0, body, "k" + std::to_string(puts.size()))));
    if (puts.back().status != PutMessageStatus::PUT_OK) {
      ADD_FAILURE() << put_message_status_name(puts.back().status) << ": " << puts.back().remark;
      break;
    }
    const size_t after = world.store().commit_log().file_queue().files().size();
    if (after == segments) in_last = after > before ? 1 : in_last + 1;
  }
  world.run_until([&] { return world.store().dispatched_phy_offset() == world.store().max_phy_offset(); });
  return puts;
}

size_t segment_count(StoreSimWorld& world) { return world.store().commit_log().file_queue().files().size(); }

size_t files_in(StoreSimWorld& world, const std::string& dir) {
  Result<std::vector<std::string>> names = world.disk().list(dir);
  return names.ok() ? names->size() : 0;
}

int64_t wall_ms(StoreSimWorld& world) { return world.store().env().clock().wall_ms(); }
int64_t hour_of_day(StoreSimWorld& world) { return wall_ms(world) / kHourMs % 24; }

// Sets the disk's capacity so the store's disk is `ratio` full.
void make_disk_used_ratio(StoreSimWorld& world, double ratio) {
  world.disk().set_capacity_bytes(static_cast<uint64_t>(static_cast<double>(world.disk().used_bytes()) / ratio));
}

class StoreRetentionTest : public StoreLogTest {};

// The virtual wall clock starts at 2023-11-14T22:13:20Z; 04:00 UTC comes 5 h
// 46 min 40 s later.
TEST_F(StoreRetentionTest, ExpiredSegmentsGoAtTheDeleteWhenHourNeverTheLastOne) {
  const MessageStoreConfig config = retention_config();
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  ASSERT_EQ(hour_of_day(world), 22);
  const std::vector<PutMessageResult> puts = fill_to(world, 5);
  const size_t queue_files_before = files_in(world, kQueueDir);
  ASSERT_GE(queue_files_before, 4u);

  world.run_for(seconds(2 * 3600));  // every segment is now older than fileReservedTime
  EXPECT_EQ(hour_of_day(world), 0);
  EXPECT_EQ(segment_count(world), 5u) << "expired, but 00:xx is not a deleteWhen hour";
  EXPECT_EQ(world.store().stats().segments_deleted, 0u);

  world.run_until([&] { return hour_of_day(world) == 4; }, seconds(24 * 3600));
  world.run_for(seconds(11));  // the first clean run inside 04:xx
  EXPECT_EQ(hour_of_day(world), 4);
  EXPECT_EQ(segment_count(world), 1u) << "every segment but the last";
  EXPECT_EQ(world.store().stats().segments_deleted, 4u);
  const PhyOffset min_phy(4 * config.mappedFileSizeCommitLog);
  EXPECT_EQ(world.store().min_phy_offset(), min_phy);

  // The ConsumeQueue follows: leading files go, the min offset moves to the
  // first entry still in the CommitLog.
  EXPECT_LT(files_in(world, kQueueDir), queue_files_before);
  QueueOffset first_kept;
  for (const PutMessageResult& put : puts) {
    if (put.append.wrote_offset >= min_phy) {
      first_kept = put.append.queue_offset;
      break;
    }
  }
  EXPECT_EQ(world.store().min_offset_in_queue("TopicA", 0), first_kept);
  const GetMessageResult too_small = world.store().get_message("g", "TopicA", 0, QueueOffset(0), 32);
  EXPECT_EQ(too_small.status, GetMessageStatus::OFFSET_TOO_SMALL);
  EXPECT_EQ(too_small.next_begin_offset, first_kept);
  EXPECT_EQ(too_small.min_offset, first_kept);
  const GetMessageResult kept = world.store().get_message("g", "TopicA", 0, first_kept, 32);
  ASSERT_EQ(kept.status, GetMessageStatus::FOUND);
  EXPECT_EQ(kept.messages.size(), 5u);
  EXPECT_EQ(kept.messages.front().phy_offset, min_phy);
  // Lookups below the new min offset find nothing.
  EXPECT_EQ(world.store().look_message_by_offset(PhyOffset(0)).status().code(), StatusCode::kNotFound);
  Result<std::vector<std::vector<uint8_t>>> old_key = world.store().query_message("TopicA", "k0", 32, 0, INT64_MAX);
  ASSERT_TRUE(old_key.ok());
  EXPECT_TRUE(old_key->empty());

  // Puts go on; the clean service never takes the active segment, however old it gets.
  ASSERT_EQ(world.put(make_message("TopicA", 0, "after retention")).status, PutMessageStatus::PUT_OK);
  world.run_for(seconds(3 * 3600));
  world.store().run_clean_now();
  EXPECT_EQ(segment_count(world), 1u);

  // A restart keeps the trimmed state.
  const QueueOffset min_before = world.store().min_offset_in_queue("TopicA", 0);
  ASSERT_TRUE(world.shutdown().ok());
  ASSERT_TRUE(world.start().ok());
  EXPECT_EQ(world.store().min_phy_offset(), min_phy);
  EXPECT_EQ(world.store().min_offset_in_queue("TopicA", 0), min_before);
  EXPECT_EQ(world.store().get_message("g", "TopicA", 0, QueueOffset(0), 32).status, GetMessageStatus::OFFSET_TOO_SMALL);
  EXPECT_TRUE(consume_queues_agree(world.store(), scan_log(world.store())));
}

// A segment holding records the dispatcher has not read yet is not deleted,
// however old: their ConsumeQueue entries would never be written, and after
// a crash the queue's next put reused their queue offsets (found by the
// recycling store property: "record 1 has queue offset 6, expected 9").
// SYNC_FLUSH on a disk with slow syncs: records are dispatched only once
// flushed, so puts in flight are appended and not yet dispatched.
TEST_F(StoreRetentionTest, RecordsNotYetDispatchedAreNeverDeleted) {
  MessageStoreConfig config = retention_config();
  config.flushDiskType = FlushDiskType::SYNC_FLUSH;
  config.fileReservedTime = 0;
  StoreSimWorld world(config, sim::DiskProfile::hdd());
  ASSERT_TRUE(world.start().ok());
  fill_to(world, 2);
  int answered = 0;
  int sent = 0;
  // Unanswered puts until a third and fourth segment hold records in flight.
  while (segment_count(world) < 4) {
    world.store().put_message(make_message("TopicA", 0, "f" + std::to_string(sent) + "|" + std::string(1000, 'f')),
                              [&](PutMessageResult) { ++answered; });
    ++sent;
    world.run_for(1'000);  // 1 us: the group write, not the flush
  }
  const PhyOffset dispatched = world.store().dispatched_phy_offset();
  ASSERT_LT(dispatched, world.store().max_phy_offset()) << "the flush was not slow enough to test anything";
  world.store().run_clean_now();
  EXPECT_LE(world.store().min_phy_offset(), dispatched) << "deleted records the dispatcher had not read";
  world.run_until([&] { return answered == sent; });
  world.run_until([&] { return world.store().dispatched_phy_offset() == world.store().max_phy_offset(); });
  world.store().run_clean_now();
  EXPECT_EQ(segment_count(world), 1u) << "once dispatched, every segment but the active one goes";
  EXPECT_TRUE(consume_queues_agree(world.store(), scan_log(world.store())));
}

TEST_F(StoreRetentionTest, DeleteWhenMayListSeveralHours) {
  MessageStoreConfig config = retention_config();
  config.deleteWhen = "01;23";
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  fill_to(world, 3);
  world.run_for(seconds(3600 + 1200));  // 23:33: expired, and 23 is listed
  EXPECT_EQ(hour_of_day(world), 23);
  EXPECT_EQ(segment_count(world), 1u);
}

TEST_F(StoreRetentionTest, OneRunDeletesAtMostTenSegments) {
  MessageStoreConfig config = retention_config();
  config.fileReservedTime = 0;  // everything is expired at once
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  fill_to(world, 14);
  ASSERT_EQ(segment_count(world), 14u);
  world.store().run_clean_now();
  EXPECT_EQ(segment_count(world), 4u);
  EXPECT_EQ(world.store().min_phy_offset(), PhyOffset(10 * config.mappedFileSizeCommitLog));
  world.store().run_clean_now();
  EXPECT_EQ(segment_count(world), 1u);
  EXPECT_EQ(world.store().stats().segments_deleted, 13u);
  EXPECT_EQ(world.store().min_phy_offset(), PhyOffset(13 * config.mappedFileSizeCommitLog));
}

TEST_F(StoreRetentionTest, ManualTriggerDeletesExpiredSegmentsOutsideTheDeleteWhenHour) {
  const MessageStoreConfig config = retention_config();
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  fill_to(world, 3);
  world.store().run_clean_now();
  EXPECT_EQ(segment_count(world), 3u) << "a manual trigger still respects fileReservedTime";

  world.run_for(seconds(2 * 3600));
  ASSERT_NE(hour_of_day(world), 4);
  ASSERT_EQ(segment_count(world), 3u);
  fill_to(world, 5);  // two fresh segments behind the expired ones
  world.store().run_clean_now();
  // Segments 0 and 1 are expired. Segment 2's newest record is fresh (the
  // second fill started in it): deletion stops there, oldest first.
  EXPECT_EQ(segment_count(world), 3u);
  EXPECT_EQ(world.store().min_phy_offset(), PhyOffset(2 * config.mappedFileSizeCommitLog));
}

// Segments loaded at start-up have no in-memory newest timestamp; their age
// is bounded by the first record of the next segment.
TEST_F(StoreRetentionTest, SegmentsLoadedFromDiskAgeByTheNextSegmentsFirstRecord) {
  const MessageStoreConfig config = retention_config();
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  fill_to(world, 3);
  world.run_for(seconds(2 * 3600));
  fill_to(world, 5);
  ASSERT_TRUE(world.shutdown().ok());
  ASSERT_TRUE(world.start().ok());
  world.store().run_clean_now();
  EXPECT_EQ(segment_count(world), 3u);
  EXPECT_EQ(world.store().min_phy_offset(), PhyOffset(2 * config.mappedFileSizeCommitLog));
}

TEST_F(StoreRetentionTest, DiskAboveMaxUsedRatioDeletesExpiredSegmentsOutsideDeleteWhen) {
  const MessageStoreConfig config = retention_config();
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  fill_to(world, 3);
  world.run_for(seconds(2 * 3600));
  fill_to(world, 6);
  ASSERT_EQ(segment_count(world), 6u);
  ASSERT_NE(hour_of_day(world), 4);

  make_disk_used_ratio(world, 0.80);  // over diskMaxUsedSpaceRatio (75), under the forced level (0.85)
  world.run_for(seconds(10));
  EXPECT_EQ(segment_count(world), 4u) << "the two expired segments, then a fresh one stops the run";
  EXPECT_EQ(world.store().min_phy_offset(), PhyOffset(2 * config.mappedFileSizeCommitLog));
  EXPECT_TRUE(world.store().writable());
  world.run_for(seconds(60));
  EXPECT_EQ(segment_count(world), 4u) << "fresh segments are kept below the forced level";
}

// Above diskSpaceCleanForciblyRatio age no longer matters. As in RocketMQ,
// the forced run deletes a whole batch (up to 10, never the last), even
// though the first deletion already brought usage below the ratio: fresh,
// maybe unconsumed, messages go.
TEST_F(StoreRetentionTest, DiskAboveCleanForciblyRatioDeletesRegardlessOfAge) {
  const MessageStoreConfig config = retention_config();
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  fill_to(world, 6);
  make_disk_used_ratio(world, 0.87);
  world.run_for(seconds(10));
  EXPECT_EQ(segment_count(world), 1u);
  EXPECT_EQ(world.store().stats().segments_deleted, 5u);
  EXPECT_TRUE(world.store().writable()) << "0.87 is below diskSpaceWarningLevelRatio";
  EXPECT_EQ(world.store().get_message("g", "TopicA", 0, QueueOffset(0), 1).status, GetMessageStatus::OFFSET_TOO_SMALL);
}

// cleanFileForciblyEnable=false (a store on a disk shared with other data):
// above the forced level only expired segments go, so what fills the disk
// cannot delete young, maybe unconsumed, messages; the disk-full rule still
// refuses puts above the warning level.
TEST_F(StoreRetentionTest, ForcedCleaningOffKeepsYoungSegmentsOnAFullDisk) {
  MessageStoreConfig config = retention_config();
  config.cleanFileForciblyEnable = false;
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  fill_to(world, 2);
  world.run_for(seconds(2 * 3600));
  fill_to(world, 6);
  make_disk_used_ratio(world, 0.87);
  world.run_for(seconds(30));
  EXPECT_EQ(segment_count(world), 5u) << "only the expired first segment goes";
  EXPECT_EQ(world.store().stats().segments_deleted, 1u);
  EXPECT_TRUE(world.store().writable());
  make_disk_used_ratio(world, 0.95);
  world.run_for(seconds(10));
  EXPECT_FALSE(world.store().writable()) << "above diskSpaceWarningLevelRatio puts are refused";
  EXPECT_EQ(segment_count(world), 5u);
}

// The forced level deletes unconsumed data because of what else fills the
// partition, so crossing it is a warning an operator sees: once per
// crossing, naming the ratio, not once per clean pass.
TEST_F(StoreRetentionTest, CrossingTheForcedCleanLevelIsWarnedOncePerCrossing) {
  std::vector<std::string> warnings;
  set_log_sink([&](LogLevel level, std::string_view component, std::string_view message) {
    if (level == LogLevel::kWarn && component == "clean") warnings.emplace_back(message);
  });
  StoreSimWorld world(retention_config());
  ASSERT_TRUE(world.start().ok());
  fill_to(world, 3);
  // The ConsumeQueue's entries written first: its files have holes until
  // then (MappedFileQueue::use_sparse_files), and filling them would move
  // the ratio set next.
  world.run_for(seconds(5));
  make_disk_used_ratio(world, 0.87);
  world.run_for(seconds(60));  // several clean passes above the level
  make_disk_used_ratio(world, 0.50);
  world.run_for(seconds(20));
  make_disk_used_ratio(world, 0.88);
  world.run_for(seconds(20));
  set_log_sink(nullptr);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("87% used, above diskSpaceCleanForciblyRatio 0.85"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("88% used"), std::string::npos) << warnings[1];
}

// ConsumeQueue files are sized with holes, as RocketMQ's are: a store with
// many queues and few messages takes the disk its entries need, not a file
// per queue. Allocated, 1,000 topics of 8 queues took 48 GB (broker_bench's
// 1,000-topic case), the disk-usage rule refused every put, and here 200
// queues of 6 MB files would not fit the 1 GiB disk.
TEST_F(StoreRetentionTest, ConsumeQueueFilesTakeOnlyTheDiskTheirEntriesNeed) {
  MessageStoreConfig config = retention_config();
  config.mappedFileSizeConsumeQueue = 300'000 * kConsumeQueueEntrySize;  // RocketMQ's default: 6 MB a file
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  constexpr int kQueues = 200;
  const auto topic_of = [](int queue) { return "Topic" + std::to_string(queue / 8); };
  const uint64_t before = world.disk().used_bytes();
  for (int queue = 0; queue < kQueues; ++queue) {
    const PutMessageResult put = world.put(make_message(topic_of(queue), queue % 8, "m" + std::to_string(queue)));
    ASSERT_EQ(put.status, PutMessageStatus::PUT_OK) << put.remark;
  }
  world.run_for(seconds(10));  // dispatched and flushed
  EXPECT_EQ(files_in(world, "/store/consumequeue"), static_cast<size_t>(kQueues / 8));
  const uint64_t grew = world.disk().used_bytes() - before;
  EXPECT_LT(grew, uint64_t{kQueues} * 64 * 1024) << "a few pages a queue, not " << config.consume_queue_file_size();
  for (int queue = 0; queue < kQueues; ++queue) {
    const GetMessageResult got = world.store().get_message("g", topic_of(queue), queue % 8, QueueOffset(0), 1);
    EXPECT_EQ(got.status, GetMessageStatus::FOUND) << topic_of(queue) << ":" << queue % 8;
  }
}

// The IndexFile too: 420 MB at RocketMQ's default layout (5M slots, 20M
// entries), of which a few keys touch a few pages.
TEST_F(StoreRetentionTest, AnIndexFileTakesOnlyTheDiskItsEntriesNeed) {
  MessageStoreConfig config = retention_config();
  config.maxHashSlotNum = 5'000'000;
  config.maxIndexNum = 20'000'000;
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  const uint64_t before = world.disk().used_bytes();
  for (int i = 0; i < 10; ++i) {
    const std::string key = "key-" + std::to_string(i);
    const PutMessageResult put = world.put(make_message("TopicA", 0, "m" + std::to_string(i), key));
    ASSERT_EQ(put.status, PutMessageStatus::PUT_OK) << put.remark;
  }
  world.run_for(seconds(10));  // dispatched and flushed
  EXPECT_EQ(files_in(world, "/store/index"), 1u);
  const uint64_t grew = world.disk().used_bytes() - before;
  EXPECT_LT(grew, uint64_t{4} << 20) << "10 keys: a few pages, not the file's 420 MB";
  const Result<std::vector<std::vector<uint8_t>>> found =
      world.store().query_message("TopicA", "key-7", 32, 0, std::numeric_limits<int64_t>::max());
  ASSERT_TRUE(found.ok()) << found.status().to_string();
  EXPECT_EQ(found->size(), 1u);
}

// Above diskSpaceWarningLevelRatio the store refuses puts. The flag is set
// and cleared only by a clean run, so it lags: puts stay refused for up to
// one cleanResourceInterval after usage dropped.
TEST_F(StoreRetentionTest, DiskAboveWarningLevelRefusesPutsUntilUsageDrops) {
  StoreSimWorld world(retention_config());
  ASSERT_TRUE(world.start().ok());
  fill_to(world, 1);
  make_disk_used_ratio(world, 0.95);
  world.run_for(seconds(10));
  EXPECT_FALSE(world.store().writable());
  EXPECT_EQ(segment_count(world), 1u) << "nothing can be deleted: usage stays high";
  const PhyOffset end = world.store().max_phy_offset();
  const PutMessageResult refused = world.put(make_message("TopicA", 0, "refused"));
  EXPECT_EQ(refused.status, PutMessageStatus::SERVICE_NOT_AVAILABLE);
  EXPECT_NE(refused.remark.find("disk full"), std::string::npos) << refused.remark;
  EXPECT_EQ(world.store().max_phy_offset(), end);
  EXPECT_EQ(world.store().get_message("g", "TopicA", 0, QueueOffset(0), 32).status, GetMessageStatus::FOUND);
  world.run_for(seconds(60));
  EXPECT_EQ(world.put(make_message("TopicA", 0, "still refused")).status, PutMessageStatus::SERVICE_NOT_AVAILABLE);

  make_disk_used_ratio(world, 0.50);  // an operator freed space elsewhere
  EXPECT_EQ(world.put(make_message("TopicA", 0, "lags")).status, PutMessageStatus::SERVICE_NOT_AVAILABLE);
  world.run_for(seconds(10));
  EXPECT_TRUE(world.store().writable());
  EXPECT_EQ(world.put(make_message("TopicA", 0, "accepted")).status, PutMessageStatus::PUT_OK);
}

TEST_F(StoreRetentionTest, DiskAboveWarningLevelWithDeletableSegmentsRecoversAtTheNextRun) {
  StoreSimWorld world(retention_config());
  ASSERT_TRUE(world.start().ok());
  fill_to(world, 6);
  make_disk_used_ratio(world, 0.95);
  world.run_for(seconds(10));
  // One run: marked full (usage was 0.95), then forced deletion freed most
  // of the disk. The space comes back only once the removals are durable:
  // the clean service syncs the directories itself, since on a full disk no
  // put comes along to trigger a flush.
  EXPECT_EQ(segment_count(world), 1u);
  world.run_for(millis(100));  // the directory syncs complete
  EXPECT_LT(static_cast<double>(world.disk().used_bytes()) / static_cast<double>(world.disk().capacity_bytes()), 0.5);
  EXPECT_FALSE(world.store().writable());
  EXPECT_EQ(world.put(make_message("TopicA", 0, "refused")).status, PutMessageStatus::SERVICE_NOT_AVAILABLE);
  world.run_for(seconds(10));
  EXPECT_TRUE(world.store().writable());
  EXPECT_EQ(world.put(make_message("TopicA", 0, "accepted")).status, PutMessageStatus::PUT_OK);
}

}  // namespace
}  // namespace mqlab::store::testing::store_retention_test
