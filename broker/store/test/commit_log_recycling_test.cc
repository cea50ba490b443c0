// Recycling expired CommitLog segments (recycleExpiredCommitLogEnable): the
// segment retention deletes is kept under "<offset>.recycled", handed to the
// allocator once that name is durable, and becomes a later segment with its
// old records still in it. What must hold: the new segment really is the old
// file (its stale bytes are there past the new records), every write leaves
// an 8-byte zero end marker behind it, and recovery after kill -9 or a power
// loss ends the log at the last new record, never reading the old ones as
// the log's. Deletion for disk space does not recycle; a restart removes a
// kept file. On the simulator's disk (torn sectors on power loss).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "broker/store/mapped_file_queue.h"
#include "broker/store/message_store.h"
#include "broker/store/test/memory_env.h"
#include "broker/store/test/store_checker.h"
#include "broker/store/test/store_log_test.h"
#include "broker/store/test/store_sim_world.h"

namespace mqlab::store::testing::commit_log_recycling_test {
namespace {

const std::string kLogDir = "/store/commitlog";

MessageStoreConfig recycling_config(FlushDiskType flush) {
  MessageStoreConfig config = small_store_config(flush);
  config.recycleExpiredCommitLogEnable = true;
  config.fileReservedTime = 0;  // every segment but the active one is expired: run_clean_now deletes them
  return config;
}

size_t segment_count(StoreSimWorld& world) { return world.store().commit_log().file_queue().files().size(); }

std::vector<std::string> log_dir(StoreSimWorld& world) {
  Result<std::vector<std::string>> names = world.disk().list(kLogDir);
  return names.ok() ? *names : std::vector<std::string>{};
}

bool has_recycled_name(const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(), [](const std::string& name) {
    return name.ends_with(AllocateMappedFileService::kRecycledSuffix);
  });
}

// Puts ~1 KiB messages to TopicA queue 0 until `rolls` more segments have
// been started (an empty log's first one counts) and `after` records went
// into the last one; returns them.
std::vector<PutMessageResult> put_through_rolls(StoreSimWorld& world, int rolls, int after) {
  std::vector<PutMessageResult> puts;
  const size_t first_segment_count = segment_count(world);
  int rolled = 0;
  int in_last = 0;
  int64_t last_start = world.store().commit_log().file_queue().empty()
                           ? -1
                           : world.store().commit_log().file_queue().last_file()->file_from_offset();
  while (rolled < rolls || in_last < after) {
    const std::string body = "m" + std::to_string(puts.size()) + "|" + std::string(1000, 'r');
    puts.push_back(world.put(make_message("TopicA", 0, body, "k" + std::to_string(puts.size()))));
    if (puts.back().status != PutMessageStatus::PUT_OK) {
      ADD_FAILURE() << put_message_status_name(puts.back().status) << ": " << puts.back().remark;
      break;
    }
    const int64_t start = world.store().commit_log().file_queue().last_file()->file_from_offset();
    if (start != last_start) {
      last_start = start;
      ++rolled;
      in_last = 1;
    } else {
      ++in_last;
    }
    if (rolled > rolls + 1) {
      ADD_FAILURE() << "rolled past the wanted segment (" << first_segment_count << " segments at the start)";
      break;
    }
  }
  world.run_until([&] { return world.store().dispatched_phy_offset() == world.store().max_phy_offset(); });
  return puts;
}

// Every put at or past the log's min offset reads back as it was written.
void expect_readable(StoreSimWorld& world, const std::vector<PutMessageResult>& puts) {
  for (size_t i = 0; i < puts.size(); ++i) {
    if (puts[i].append.wrote_offset < world.store().min_phy_offset()) continue;
    Result<std::vector<uint8_t>> read = world.store().look_message_by_offset(puts[i].append.wrote_offset);
    ASSERT_TRUE(read.ok()) << "put " << i << " at " << puts[i].append.wrote_offset.to_string() << ": "
                           << read.status().to_string();
    Result<DecodedRecord> record = decode_record(*read, DecodeOptions{.check_crc = true});
    ASSERT_TRUE(record.ok()) << record.status().to_string();
    EXPECT_EQ(record->message.physical_offset, puts[i].append.wrote_offset);
    const std::span<const uint8_t> body = record->message.body;
    EXPECT_TRUE(std::string_view(reinterpret_cast<const char*>(body.data()), body.size())
                    .starts_with("m" + std::to_string(i) + "|"));
  }
}

// Three segments; retention keeps the oldest expired one for reuse (the
// other is removed), and the flush that follows makes its name durable.
void expire_all_but_the_active_segment(StoreSimWorld& world) {
  put_through_rolls(world, 3, 5);
  ASSERT_EQ(segment_count(world), 3u);
  world.store().run_clean_now();
  ASSERT_EQ(segment_count(world), 1u);
  EXPECT_TRUE(world.store().commit_log().file_queue().holds_recycled());
  EXPECT_TRUE(has_recycled_name(log_dir(world)));
  EXPECT_EQ(world.store().stats().segments_deleted, 2u);
  world.run_for(seconds(2));  // a flush: the rename reaches the disk
}

class CommitLogRecyclingTest : public StoreLogTest {};

TEST_F(CommitLogRecyclingTest, AnExpiredSegmentBecomesALaterOneAndRecoversAfterKill9) {
  StoreSimWorld world(recycling_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  expire_all_but_the_active_segment(world);
  // The next segment was requested before retention ran: it is made new.
  // The request at the first put into it gets the kept file for the one after.
  std::vector<PutMessageResult> puts = put_through_rolls(world, 2, 5);
  const auto* allocator = world.store().commit_log().file_queue().allocator();
  ASSERT_NE(allocator, nullptr);
  EXPECT_EQ(allocator->recycled(), 1u);
  EXPECT_FALSE(world.store().commit_log().file_queue().holds_recycled());
  EXPECT_FALSE(has_recycled_name(log_dir(world)));

  // The active segment is the old file: zeros right after its last record
  // (the end marker), the expired segment's bytes further on.
  const std::shared_ptr<MappedFile> last = world.store().commit_log().file_queue().last_file();
  const int64_t end = last->wrote_position();
  ASSERT_GE(last->file_size() - end, 4096);
  std::vector<uint8_t> tail(4096);
  ASSERT_TRUE(last->file()->pread(static_cast<uint64_t>(end), tail).ok());
  EXPECT_EQ(std::vector<uint8_t>(tail.begin(), tail.begin() + 8), std::vector<uint8_t>(8, 0));
  EXPECT_TRUE(std::any_of(tail.begin() + 8, tail.end(), [](uint8_t b) { return b != 0; }))
      << "a recycled segment holds its old records past the new ones";

  const PhyOffset max_before = world.store().max_phy_offset();
  world.crash();
  ASSERT_TRUE(world.start().ok());
  const RecoveryReport& report = world.store().recovery_report();
  EXPECT_TRUE(report.abnormal);
  EXPECT_EQ(report.stop_reason, "") << "the end marker ends the log cleanly";
  EXPECT_EQ(report.recovered_end, max_before);
  EXPECT_EQ(world.store().max_phy_offset(), max_before);
  expect_readable(world, puts);
  EXPECT_TRUE(consume_queues_agree(world.store(), scan_log(world.store())));
}

// SYNC_FLUSH: whatever the torn sectors of a power loss leave of a recycled
// segment, every acknowledged put is readable after the restart and nothing
// of the expired segment is.
TEST_F(CommitLogRecyclingTest, PowerLossLosesNothingAcknowledgedInARecycledSegment) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    StoreSimWorld world(recycling_config(FlushDiskType::SYNC_FLUSH), sim::DiskProfile::sata_ssd(), seed);
    ASSERT_TRUE(world.start().ok());
    expire_all_but_the_active_segment(world);
    std::vector<PutMessageResult> puts = put_through_rolls(world, 2, static_cast<int>(seed % 7) + 1);
    ASSERT_EQ(world.store().commit_log().file_queue().allocator()->recycled(), 1u);
    const PhyOffset acknowledged_end = world.store().max_phy_offset();
    world.power_loss();
    ASSERT_TRUE(world.start().ok());
    EXPECT_GE(world.store().max_phy_offset(), acknowledged_end);
    expect_readable(world, puts);
    const std::vector<LoggedRecord> log = scan_log(world.store());
    for (const LoggedRecord& record : log) {
      EXPECT_LT(record.offset, acknowledged_end) << "a record past every acknowledged put: an old one read back";
    }
    EXPECT_TRUE(consume_queues_agree(world.store(), log));
  }
}

TEST_F(CommitLogRecyclingTest, DeletionForDiskSpaceFreesTheSegment) {
  MessageStoreConfig config = recycling_config(FlushDiskType::ASYNC_FLUSH);
  config.fileReservedTime = 72;  // not expired by age: only space deletes
  config.deleteWhen = "04";
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  put_through_rolls(world, 3, 5);
  ASSERT_EQ(segment_count(world), 3u);
  world.disk().set_capacity_bytes(static_cast<uint64_t>(static_cast<double>(world.disk().used_bytes()) / 0.97));
  world.store().run_clean_now();
  EXPECT_EQ(segment_count(world), 1u) << "above the forced-clean level: age does not matter";
  EXPECT_FALSE(world.store().commit_log().file_queue().holds_recycled());
  EXPECT_FALSE(has_recycled_name(log_dir(world)));
}

TEST_F(CommitLogRecyclingTest, DeletionForDiskSpaceAlsoDropsAKeptSegment) {
  MessageStoreConfig config = recycling_config(FlushDiskType::ASYNC_FLUSH);
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  expire_all_but_the_active_segment(world);  // by age: one kept
  ASSERT_TRUE(world.store().commit_log().file_queue().holds_recycled());
  world.disk().set_capacity_bytes(static_cast<uint64_t>(static_cast<double>(world.disk().used_bytes()) / 0.97));
  world.store().run_clean_now();
  EXPECT_FALSE(world.store().commit_log().file_queue().holds_recycled());
  EXPECT_FALSE(has_recycled_name(log_dir(world)));
}

TEST_F(CommitLogRecyclingTest, ARestartRemovesAKeptSegment) {
  StoreSimWorld world(recycling_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  expire_all_but_the_active_segment(world);
  ASSERT_TRUE(world.shutdown().ok());
  ASSERT_TRUE(world.start().ok());
  EXPECT_FALSE(has_recycled_name(log_dir(world)));
  EXPECT_EQ(segment_count(world), 1u);
  EXPECT_EQ(world.store().recovery_report().stop_reason, "");
}

TEST_F(CommitLogRecyclingTest, TheConfigKeyTurnsItOnWithPreAllocation) {
  MemoryEnv env;
  MessageStoreConfig config;
  EXPECT_FALSE(CommitLog(env, config).file_queue().recycling());
  ASSERT_TRUE(config.set_property("recycleExpiredCommitLogEnable", "true").ok());
  CommitLog log(env, config);
  EXPECT_TRUE(log.file_queue().recycling());
  ASSERT_NE(log.file_queue().allocator(), nullptr);
}

// Queue level: the kept file is handed over only once a directory sync
// covers its rename (a power loss could otherwise bring its old segment name
// back holding new records), and a recycled file is ready without being
// written: no allocation, no zeros.
TEST_F(CommitLogRecyclingTest, TheKeptFileWaitsForItsNameToBeDurable) {
  constexpr int64_t kFileSize = 4096;
  MemoryEnv env;
  MappedFileQueue queue(env, kLogDir, kFileSize);
  queue.enable_preallocation(/*warm=*/true);
  queue.enable_recycling();
  ASSERT_TRUE(queue.load().ok());
  const auto append = [&](size_t n, uint8_t value) {
    Result<MappedFile*> file = queue.last_file_or_create(0);
    ASSERT_TRUE(file.ok());
    if (static_cast<int64_t>(n) > (*file)->free_bytes()) {
      (*file)->set_wrote_position((*file)->file_size());
      file = queue.last_file_or_create(0);
      ASSERT_TRUE(file.ok());
    }
    ASSERT_TRUE((*file)->append(std::vector<uint8_t>(n, value)).ok());
  };
  for (uint8_t value = 1; value <= 3; ++value) {
    append(4000, value);
    env.run_all();
  }
  ASSERT_EQ(queue.files().size(), 3u);
  ASSERT_EQ(queue.delete_first_file(/*recycle=*/true).value(), true);
  ASSERT_TRUE(queue.holds_recycled());
  ASSERT_EQ(queue.delete_first_file(/*recycle=*/true).value(), false);  // one is kept: this one goes
  EXPECT_EQ(env.memory_files().bytes(kLogDir + "/" + MappedFile::file_name(kFileSize)), nullptr);
  append(4000, 4);  // a roll, and a request before any flush: not the kept file
  env.run_all();
  EXPECT_EQ(queue.allocator()->recycled(), 0u);
  EXPECT_TRUE(queue.holds_recycled());
  Status flushed = Status::Aborted("flush did not complete");
  queue.flush([&](Status status) { flushed = std::move(status); });
  env.run_all();
  ASSERT_TRUE(flushed.ok());
  append(10, 5);  // room left: the next segment is requested, with the kept file
  env.run_all();
  EXPECT_EQ(queue.allocator()->recycled(), 1u);
  EXPECT_FALSE(queue.holds_recycled());
  const int64_t next = queue.last_file()->file_from_offset() + kFileSize;
  std::vector<uint8_t> first_segment(kFileSize, 0);
  std::fill_n(first_segment.begin(), 4000, uint8_t{1});
  const std::vector<uint8_t>* ready = env.memory_files().bytes(kLogDir + "/" + MappedFile::file_name(next) + ".allocating");
  ASSERT_NE(ready, nullptr);
  EXPECT_EQ(*ready, first_segment) << "the first segment's file, unwritten by the preparation";
  const uint64_t taken = queue.allocator()->taken();
  append(1000, 6);  // does not fit: rolls onto it
  EXPECT_EQ(queue.allocator()->taken(), taken + 1);
  ASSERT_EQ(queue.last_file()->file_from_offset(), next);
  std::vector<uint8_t> expected = first_segment;
  std::fill_n(expected.begin(), 1000, uint8_t{6});
  std::fill_n(expected.begin() + 1000, MappedFile::kEndMarkerBytes, uint8_t{0});
  EXPECT_EQ(*env.memory_files().bytes(kLogDir + "/" + MappedFile::file_name(next)), expected)
      << "the new bytes, the end marker, then the old segment's";
}

}  // namespace
}  // namespace mqlab::store::testing::commit_log_recycling_test
