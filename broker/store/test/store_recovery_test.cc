// MessageStore start-up and recovery: clean and abnormal restarts, torn tails, old corruption, stray files, lost
// ConsumeQueues, idempotence. Each test damages the stopped store's files on the SimDisk, restarts, and reads back.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "broker/common/log.h"
#include "broker/store/message_store.h"
#include "broker/store/test/store_checker.h"
#include "broker/store/test/store_log_test.h"
#include "broker/store/test/store_sim_world.h"

namespace mqlab::store::testing::store_recovery_test {
namespace {

const std::string kCommitLogDir = "/store/commitlog";
const std::string kConsumeQueueDir = "/store/consumequeue";

// --- raw access to the stopped store's files, straight on the SimDisk --------

std::shared_ptr<env::File> open_raw(StoreSimWorld& world, const std::string& path, bool create = false) {
  Result<std::shared_ptr<env::File>> file =
      world.disk().open(path, env::OpenOptions{.create = create}, sim::kWorldOwner, path);
  EXPECT_TRUE(file.ok()) << file.status().to_string();
  return file.ok() ? *file : nullptr;
}

void write_raw(StoreSimWorld& world, const std::string& path, uint64_t position, const std::vector<uint8_t>& bytes) {
  std::shared_ptr<env::File> file = open_raw(world, path, /*create=*/true);
  ASSERT_NE(file, nullptr);
  ASSERT_TRUE(file->pwrite(position, bytes).ok());
}

std::vector<uint8_t> read_raw(StoreSimWorld& world, const std::string& path, uint64_t position, size_t length) {
  std::vector<uint8_t> bytes(length);
  std::shared_ptr<env::File> file = open_raw(world, path);
  if (!file) return {};
  Result<size_t> got = file->pread(position, bytes);
  EXPECT_TRUE(got.ok());
  bytes.resize(got.ok() ? *got : 0);
  return bytes;
}

std::vector<uint8_t> garbage(size_t length, uint64_t seed) {
  env::Random random(seed);
  std::vector<uint8_t> bytes(length);
  for (uint8_t& byte : bytes) byte = static_cast<uint8_t>(random.uniform(256));
  return bytes;
}

std::string segment_path(int64_t offset) { return kCommitLogDir + "/" + MappedFile::file_name(offset); }

// --- writing a store -----------------------------------------------------------

// Puts ~1 KiB messages round-robin over TopicA queues 0..2 (key "k<i>") until
// the CommitLog has `segments` files and `extra` records in the last one.
std::vector<PutMessageResult> fill_segments(StoreSimWorld& world, size_t segments, int extra = 5) {
  std::vector<PutMessageResult> puts;
  int in_last = 0;
  for (int i = 0; in_last < extra; ++i) {
    const size_t before = world.store().commit_log().file_queue().files().size();
    const std::string body = "m" + std::to_string(i) + "|" + std::string(1000, static_cast<char>('a' + i % 26));
    puts.push_back(world.put(make_message("TopicA", i % 3, body, "k" + std::to_string(i))));
    EXPECT_EQ(puts.back().status, PutMessageStatus::PUT_OK);
    const size_t after = world.store().commit_log().file_queue().files().size();
    if (after > segments) ADD_FAILURE() << "overshot to " << after << " segments";
    if (after == segments) in_last = after > before ? 1 : in_last + 1;
    if (puts.back().status != PutMessageStatus::PUT_OK) break;
  }
  world.run_until([&] { return world.store().dispatched_phy_offset() == world.store().max_phy_offset(); });
  return puts;
}

// Everything a restart must reproduce: the log, every queue's bounds and entries.
struct StoreState {
  std::vector<std::vector<uint8_t>> records;
  std::vector<std::string> queues;
  PhyOffset min_phy;
  PhyOffset max_phy;
  bool operator==(const StoreState&) const = default;
};

StoreState state_of(MessageStore& store) {
  StoreState state;
  for (const LoggedRecord& record : scan_log(store)) state.records.push_back(record.bytes);
  for (const auto& [topic, queue_id] : store.queues()) {
    ConsumeQueue* queue = store.find_consume_queue(topic, queue_id);
    std::string line = topic + "-" + std::to_string(queue_id) + " [" + queue->min_offset().to_string() + ", " +
                       queue->max_offset().to_string() + "):";
    for (QueueOffset at = queue->min_offset(); at < queue->max_offset(); at += 1) {
      auto entry = queue->get(at);
      if (entry.ok() && entry->has_value()) {
        line += " " + (*entry)->offset.to_string() + "/" + std::to_string((*entry)->size) + "/" +
                std::to_string((*entry)->tags_code);
      } else {
        line += " ?";
      }
    }
    state.queues.push_back(line);
  }
  state.min_phy = store.min_phy_offset();
  state.max_phy = store.max_phy_offset();
  return state;
}

::testing::AssertionResult consistent(MessageStore& store, size_t expected_records) {
  const std::vector<LoggedRecord> log = scan_log(store);
  if (log.size() != expected_records) {
    return ::testing::AssertionFailure() << "log holds " << log.size() << " records, expected " << expected_records;
  }
  if (auto agree = consume_queues_agree(store, log); !agree) return agree;
  return index_agrees(store, log);
}

class StoreRecoveryTest : public StoreLogTest {};

// --- clean and abnormal restarts ---------------------------------------------------

TEST_F(StoreRecoveryTest, CleanShutdownThenNormalRecoveryKeepsEverything) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  const std::vector<PutMessageResult> puts = fill_segments(world, 2);
  const StoreState before = state_of(world.store());
  ASSERT_TRUE(world.shutdown().ok());
  EXPECT_FALSE(world.disk().exists("/store/abort"));

  ASSERT_TRUE(world.start().ok());
  const RecoveryReport& report = world.store().recovery_report();
  EXPECT_FALSE(report.abnormal);
  EXPECT_EQ(report.scan_from, PhyOffset(0));
  EXPECT_EQ(report.recovered_end, before.max_phy);
  EXPECT_EQ(report.stop_reason, "");
  EXPECT_EQ(report.records_verified, static_cast<int64_t>(puts.size()));
  EXPECT_EQ(report.records_dispatched, 0) << "the ConsumeQueues were intact: nothing to add";
  EXPECT_EQ(state_of(world.store()), before);
  EXPECT_TRUE(consistent(world.store(), puts.size()));
  EXPECT_TRUE(world.disk().exists("/store/abort")) << "running again";

  // Puts continue where the log and each queue left off.
  const PutMessageResult next = world.put(make_message("TopicA", 0, "after restart"));
  ASSERT_EQ(next.status, PutMessageStatus::PUT_OK);
  EXPECT_EQ(next.append.wrote_offset, before.max_phy);
  EXPECT_EQ(next.append.queue_offset, QueueOffset(static_cast<int64_t>((puts.size() + 2) / 3)));
}

TEST_F(StoreRecoveryTest, KillThenAbnormalRecoveryKeepsEveryWrittenMessage) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  const std::vector<PutMessageResult> puts = fill_segments(world, 2);
  const StoreState before = state_of(world.store());
  ASSERT_LT(world.store().flushed_phy_offset(), world.store().max_phy_offset()) << "some data only in the page cache";
  world.crash();  // kill -9: the page cache survives

  ASSERT_TRUE(world.start().ok());
  const RecoveryReport& report = world.store().recovery_report();
  EXPECT_TRUE(report.abnormal);
  EXPECT_EQ(report.recovered_end, before.max_phy);
  EXPECT_EQ(report.stop_reason, "");
  EXPECT_EQ(state_of(world.store()), before);
  EXPECT_TRUE(consistent(world.store(), puts.size()));
}

TEST_F(StoreRecoveryTest, PowerLossUnderSyncFlushKeepsEveryAcknowledgedMessage) {
  StoreSimWorld world(small_store_config(FlushDiskType::SYNC_FLUSH), sim::DiskProfile::sata_ssd(), 7,
                      /*torn_sector_probability=*/0.0);
  ASSERT_TRUE(world.start().ok());
  const std::vector<PutMessageResult> puts = fill_segments(world, 2);
  world.power_loss();
  ASSERT_TRUE(world.start().ok());
  EXPECT_TRUE(world.store().recovery_report().abnormal);
  EXPECT_TRUE(consistent(world.store(), puts.size()));
}

// --- torn tails -----------------------------------------------------------------

TEST_F(StoreRecoveryTest, GarbageTailIsTruncatedAndReportedWithFileAndPosition) {
  const MessageStoreConfig config = small_store_config(FlushDiskType::ASYNC_FLUSH);
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  const std::vector<PutMessageResult> puts = fill_segments(world, 2);
  const PhyOffset end = world.store().max_phy_offset();
  world.crash();
  const int64_t segment = config.mappedFileSizeCommitLog;
  const int64_t position = end.value() - segment;  // inside the last segment
  write_raw(world, segment_path(segment), position, garbage(300, 11));

  ASSERT_TRUE(world.start().ok());
  const RecoveryReport& report = world.store().recovery_report();
  EXPECT_EQ(report.recovered_end, end);
  EXPECT_NE(report.stop_reason.find(segment_path(segment) + " position " + std::to_string(position)), std::string::npos)
      << report.stop_reason;
  EXPECT_GT(report.truncated_bytes, 0);
  EXPECT_TRUE(logged("ERROR", "commitlog verification stopped at offset " + end.to_string())) << "reported loudly";
  EXPECT_TRUE(consistent(world.store(), puts.size())) << "everything before the garbage is served";
  EXPECT_EQ(read_raw(world, segment_path(segment), position, 300), std::vector<uint8_t>(300, 0))
      << "the garbage is zeroed, so it cannot come back";
  const PutMessageResult next = world.put(make_message("TopicA", 1, "over the old garbage"));
  ASSERT_EQ(next.status, PutMessageStatus::PUT_OK);
  EXPECT_EQ(next.append.wrote_offset, end);
  world.run_until([&] { return world.store().dispatched_phy_offset() == world.store().max_phy_offset(); });
  EXPECT_TRUE(consistent(world.store(), puts.size() + 1));
}

TEST_F(StoreRecoveryTest, PartiallyWrittenLastRecordIsDropped) {
  const MessageStoreConfig config = small_store_config(FlushDiskType::ASYNC_FLUSH);
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  const std::vector<PutMessageResult> puts = fill_segments(world, 1, 10);
  const PutMessageResult& last = puts.back();
  ASSERT_TRUE(world.shutdown().ok());
  // The record's head reached the medium, its tail did not (a torn sector).
  const int64_t torn_from = last.append.wrote_offset.value() + 100;
  write_raw(world, segment_path(0), torn_from,
            std::vector<uint8_t>(static_cast<size_t>(last.append.end_offset().value() - torn_from), 0));

  ASSERT_TRUE(world.start().ok());
  const RecoveryReport& report = world.store().recovery_report();
  EXPECT_FALSE(report.abnormal);
  EXPECT_EQ(report.recovered_end, last.append.wrote_offset);
  EXPECT_NE(report.stop_reason.find(segment_path(0) + " position " + last.append.wrote_offset.to_string()),
            std::string::npos)
      << report.stop_reason;
  EXPECT_TRUE(consistent(world.store(), puts.size() - 1));
  // Its queue forgets it too: the next message of that queue reuses its queue offset.
  const int32_t queue_id = static_cast<int32_t>((puts.size() - 1) % 3);
  EXPECT_EQ(world.store().max_offset_in_queue("TopicA", queue_id), last.append.queue_offset);
  const PutMessageResult next = world.put(make_message("TopicA", queue_id, "replaces the torn one"));
  EXPECT_EQ(next.append.wrote_offset, last.append.wrote_offset);
  EXPECT_EQ(next.append.queue_offset, last.append.queue_offset);
}

TEST_F(StoreRecoveryTest, QueueEmptiedByTruncationAnswersNoMessageInQueue) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  for (int i = 0; i < 3; ++i) ASSERT_EQ(world.put(make_message("TopicA", 0, "a")).status, PutMessageStatus::PUT_OK);
  const PutMessageResult only_b = world.put(make_message("TopicB", 0, "the only one"));
  ASSERT_TRUE(world.shutdown().ok());
  write_raw(world, segment_path(0), only_b.append.wrote_offset.value() + 88, {0xFF});  // its body

  ASSERT_TRUE(world.start().ok());
  EXPECT_EQ(world.store().recovery_report().recovered_end, only_b.append.wrote_offset);
  const GetMessageResult got = world.store().get_message("g", "TopicB", 0, QueueOffset(0), 32);
  EXPECT_EQ(got.status, GetMessageStatus::NO_MESSAGE_IN_QUEUE);
  EXPECT_EQ(got.next_begin_offset, QueueOffset(0));
  EXPECT_EQ(world.put(make_message("TopicB", 0, "new first")).append.queue_offset, QueueOffset(0));
}

// --- corruption in older data -----------------------------------------------------

// A flipped body byte fails the CRC. Within the scan window (the last three
// segments after a clean shutdown) recovery cannot tell a torn tail from a
// flipped bit: it truncates the log at the first invalid record, deletes
// every later segment, and reports file and position at ERROR. RocketMQ's
// recoverNormally does the same.
TEST_F(StoreRecoveryTest, CorruptRecordInTheScanWindowTruncatesTheLogThere) {
  const MessageStoreConfig config = small_store_config(FlushDiskType::ASYNC_FLUSH);
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  const std::vector<PutMessageResult> puts = fill_segments(world, 3);
  ASSERT_TRUE(world.shutdown().ok());
  const PutMessageResult& victim = puts[2];
  const std::vector<uint8_t> body_byte = read_raw(world, segment_path(0), victim.append.wrote_offset.value() + 88, 1);
  ASSERT_EQ(body_byte.size(), 1u);
  const uint8_t flipped = static_cast<uint8_t>(body_byte[0] ^ 0x01);
  write_raw(world, segment_path(0), victim.append.wrote_offset.value() + 88, {flipped});

  ASSERT_TRUE(world.start().ok());
  const RecoveryReport& report = world.store().recovery_report();
  EXPECT_EQ(report.recovered_end, victim.append.wrote_offset);
  EXPECT_NE(report.stop_reason.find(segment_path(0) + " position " + victim.append.wrote_offset.to_string()),
            std::string::npos)
      << report.stop_reason;
  EXPECT_NE(report.stop_reason.find("CRC"), std::string::npos) << report.stop_reason;
  EXPECT_TRUE(logged("ERROR", "commitlog verification stopped at offset " + victim.append.wrote_offset.to_string()));
  EXPECT_EQ(world.store().commit_log().file_queue().files().size(), 1u) << "the later segments are gone";
  EXPECT_FALSE(world.disk().exists(segment_path(config.mappedFileSizeCommitLog)));
  EXPECT_TRUE(consistent(world.store(), 2));
  EXPECT_EQ(world.store().max_offset_in_queue("TopicA", 2), QueueOffset(0));
}

// Outside the window (older than the 3rd-last segment) a normal start does
// not read the record at all: start-up succeeds with the full log. The pull
// path does not check CRCs either (RocketMQ's does not), so consumers get the
// damaged bytes; look_message_by_offset and query_message decode with the
// CRC and refuse them.
TEST_F(StoreRecoveryTest, CorruptRecordOlderThanTheScanWindowIsNotReadAtStart) {
  const MessageStoreConfig config = small_store_config(FlushDiskType::ASYNC_FLUSH);
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  const std::vector<PutMessageResult> puts = fill_segments(world, 5);
  ASSERT_TRUE(world.shutdown().ok());
  const PutMessageResult& victim = puts[2];
  write_raw(world, segment_path(0), victim.append.wrote_offset.value() + 88, {0xFF});

  ASSERT_TRUE(world.start().ok());
  const RecoveryReport& report = world.store().recovery_report();
  EXPECT_EQ(report.scan_from, PhyOffset(2 * config.mappedFileSizeCommitLog));
  EXPECT_EQ(report.stop_reason, "");
  EXPECT_EQ(world.store().commit_log().file_queue().files().size(), 5u);
  EXPECT_EQ(world.store().max_phy_offset(), puts.back().append.end_offset());

  Result<std::vector<uint8_t>> looked = world.store().look_message_by_offset(victim.append.wrote_offset);
  ASSERT_FALSE(looked.ok());
  EXPECT_EQ(looked.status().code(), StatusCode::kCorruption);
  EXPECT_NE(looked.status().message().find(victim.append.wrote_offset.to_string()), std::string::npos)
      << looked.status().to_string();
  const GetMessageResult pulled = world.store().get_message("g", "TopicA", 2, victim.append.queue_offset, 1);
  ASSERT_EQ(pulled.status, GetMessageStatus::FOUND);
  Result<std::vector<uint8_t>> bytes = MessageStore::read_region(pulled.messages[0]);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(decode_record(*bytes).status().code(), StatusCode::kCorruption) << "served as stored, bad CRC and all";
  Result<std::vector<std::vector<uint8_t>>> queried = world.store().query_message("TopicA", "k2", 32, 0, INT64_MAX);
  ASSERT_TRUE(queried.ok());
  EXPECT_TRUE(queried->empty());
}

// After a kill -9 before the first checkpoint flush, the checkpoint holds
// zeros and abnormal recovery verifies from the first segment, so the same
// old flipped byte now truncates the log there.
TEST_F(StoreRecoveryTest, AbnormalRecoveryWithoutACheckpointVerifiesFromTheFirstSegment) {
  const MessageStoreConfig config = small_store_config(FlushDiskType::ASYNC_FLUSH);
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  const std::vector<PutMessageResult> puts = fill_segments(world, 5);
  world.crash();
  ASSERT_FALSE(world.disk().exists("/store/checkpoint")) << "the test needs a store that never checkpointed";
  write_raw(world, segment_path(0), puts[2].append.wrote_offset.value() + 88, {0xFF});

  ASSERT_TRUE(world.start().ok());
  const RecoveryReport& report = world.store().recovery_report();
  EXPECT_TRUE(report.abnormal);
  EXPECT_EQ(report.scan_from, PhyOffset(0));
  EXPECT_EQ(report.recovered_end, puts[2].append.wrote_offset);
  EXPECT_NE(report.stop_reason.find(segment_path(0) + " position " + puts[2].append.wrote_offset.to_string()),
            std::string::npos);
  EXPECT_TRUE(consistent(world.store(), 2));
}

// --- stray and damaged files -------------------------------------------------------

struct StrayCase {
  std::string name;
  std::function<void(StoreSimWorld&, const MessageStoreConfig&)> damage;
  bool starts;               // start() ok, or a clear error
  std::string error_substr;  // when it does not start: what the error names
  size_t records_lost = 0;   // when it starts: records recovery drops
};

TEST_F(StoreRecoveryTest, StrayFilesNeverCrashStartUp) {
  const MessageStoreConfig config = small_store_config(FlushDiskType::ASYNC_FLUSH);
  const int64_t segment = config.mappedFileSizeCommitLog;
  const std::vector<StrayCase> cases = {
      {"junk file in commitlog/",
       [](StoreSimWorld& w, const MessageStoreConfig&) { write_raw(w, kCommitLogDir + "/junk", 0, garbage(100, 1)); },
       true},
      {"empty 20-digit segment after the last",
       [&](StoreSimWorld& w, const MessageStoreConfig&) { write_raw(w, segment_path(2 * segment), 0, {}); }, true},
      {"zero-filled segment after the last",
       [&](StoreSimWorld& w, const MessageStoreConfig&) {
         write_raw(w, segment_path(2 * segment), 0, std::vector<uint8_t>(static_cast<size_t>(segment), 0));
       },
       true},
      {"garbage-filled segment after the last",
       [&](StoreSimWorld& w, const MessageStoreConfig&) {
         write_raw(w, segment_path(2 * segment), 0, garbage(static_cast<size_t>(segment), 2));
       },
       true},
      {"last segment cut short inside a record",
       [&](StoreSimWorld& w, const MessageStoreConfig&) {
         ASSERT_TRUE(open_raw(w, segment_path(segment))->truncate(1500).ok());
       },
       true, "", 4},  // 5 records of ~1.1 KiB in the last segment: one survives the cut
      {"segment longer than mappedFileSizeCommitLog",
       [&](StoreSimWorld& w, const MessageStoreConfig&) { write_raw(w, segment_path(segment), segment, {1}); }, false,
       segment_path(segment) + ": size"},
      {"20-digit directory and misaligned segment names in commitlog/",
       [&](StoreSimWorld& w, const MessageStoreConfig&) {
         ASSERT_TRUE(w.disk().mkdirs(segment_path(2 * segment)).ok());
         write_raw(w, segment_path(123), 0, garbage(64, 3));
       },
       true},
      {"segment after a gap",
       [&](StoreSimWorld& w, const MessageStoreConfig&) { write_raw(w, segment_path(5 * segment), 0, garbage(64, 4)); },
       true},
      {"non-numeric and foreign entries under consumequeue/",
       [](StoreSimWorld& w, const MessageStoreConfig&) {
         ASSERT_TRUE(w.disk().mkdirs(kConsumeQueueDir + "/TopicA/abc").ok());
         ASSERT_TRUE(w.disk().mkdirs(kConsumeQueueDir + "/TopicA/-1").ok());
         ASSERT_TRUE(w.disk().mkdirs(kConsumeQueueDir + "/TopicA/12345678901").ok());
         ASSERT_TRUE(w.disk().mkdirs(kConsumeQueueDir + "/not a topic").ok());
         write_raw(w, kConsumeQueueDir + "/junk", 0, garbage(10, 5));
         write_raw(w, kConsumeQueueDir + "/TopicA/7", 0, garbage(10, 6));
         write_raw(w, kConsumeQueueDir + "/TopicA/0/junk", 0, garbage(10, 7));
       },
       true},
      {"garbage in a consume queue file",
       [](StoreSimWorld& w, const MessageStoreConfig&) {
         write_raw(w, kConsumeQueueDir + "/TopicA/1/" + MappedFile::file_name(0), 0, garbage(1280, 8));
       },
       true},
      {"garbage checkpoint",
       [](StoreSimWorld& w, const MessageStoreConfig&) { write_raw(w, "/store/checkpoint", 0, garbage(4096, 9)); },
       true},
      {"3-byte checkpoint",
       [](StoreSimWorld& w, const MessageStoreConfig&) {
         ASSERT_TRUE(w.disk().remove("/store/checkpoint").ok());
         write_raw(w, "/store/checkpoint", 0, {1, 2, 3});
       },
       true},
      {"checkpoint is a directory",
       [](StoreSimWorld& w, const MessageStoreConfig&) {
         ASSERT_TRUE(w.disk().remove("/store/checkpoint").ok());
         ASSERT_TRUE(w.disk().mkdirs("/store/checkpoint").ok());
       },
       false, "checkpoint"},
      {"garbage index file of the right size",
       [](StoreSimWorld& w, const MessageStoreConfig& c) {
         const size_t size = 40 + 4 * static_cast<size_t>(c.maxHashSlotNum) + 20 * static_cast<size_t>(c.maxIndexNum);
         write_raw(w, "/store/index/20991231000000000", 0, garbage(size, 10));
       },
       true},
      {"oversized index file",
       [](StoreSimWorld& w, const MessageStoreConfig&) {
         write_raw(w, "/store/index/20991231000000000", 0, garbage(1 << 20, 12));
       },
       false, "/store/index/20991231000000000"},
      {"junk file in index/",
       [](StoreSimWorld& w, const MessageStoreConfig&) { write_raw(w, "/store/index/junk", 0, garbage(100, 13)); },
       true},
      {"abort file is a directory",
       [](StoreSimWorld& w, const MessageStoreConfig&) { ASSERT_TRUE(w.disk().mkdirs("/store/abort").ok()); }, false,
       "abort"},
  };
  for (const StrayCase& c : cases) {
    SCOPED_TRACE(c.name);
    StoreSimWorld world(config);
    ASSERT_TRUE(world.start().ok());
    const std::vector<PutMessageResult> puts = fill_segments(world, 2);
    ASSERT_TRUE(world.shutdown().ok());
    c.damage(world, config);
    if (::testing::Test::HasFatalFailure()) return;
    const Status started = world.start();
    if (!c.starts) {
      EXPECT_FALSE(started.ok());
      EXPECT_NE(started.to_string().find(c.error_substr), std::string::npos) << started.to_string();
      continue;
    }
    ASSERT_TRUE(started.ok()) << started.to_string();
    EXPECT_TRUE(consistent(world.store(), puts.size() - c.records_lost));
    // And it keeps working: a put, a clean restart, the same log.
    ASSERT_EQ(world.put(make_message("TopicA", 0, "still alive")).status, PutMessageStatus::PUT_OK);
    world.run_until([&] { return world.store().dispatched_phy_offset() == world.store().max_phy_offset(); });
    const StoreState state = state_of(world.store());
    ASSERT_TRUE(world.shutdown().ok());
    ASSERT_TRUE(world.start().ok());
    EXPECT_EQ(state_of(world.store()), state);
  }
}

// --- rebuilding ConsumeQueues ----------------------------------------------------

// The re-dispatch window after a clean shutdown starts at the 3rd-last
// CommitLog segment: ConsumeQueues deleted while the broker was stopped come
// back complete when the log has at most three segments.
TEST_F(StoreRecoveryTest, DeletedConsumeQueuesAreRebuiltFromTheCommitLog) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  const std::vector<PutMessageResult> puts = fill_segments(world, 3);
  const StoreState before = state_of(world.store());
  ASSERT_TRUE(world.shutdown().ok());
  world.remove_tree(kConsumeQueueDir);

  ASSERT_TRUE(world.start().ok());
  EXPECT_EQ(world.store().recovery_report().records_dispatched, static_cast<int64_t>(puts.size()));
  EXPECT_EQ(state_of(world.store()), before);
  EXPECT_TRUE(consistent(world.store(), puts.size()));
}

// With more segments than the re-dispatch window (from the 3rd-last one), a
// lost consume queue directory is still rebuilt from the whole CommitLog:
// consumers see every message from queue offset 0, after a clean shutdown
// (every queue gone) and after a crash (one queue gone).
TEST_F(StoreRecoveryTest, DeletedConsumeQueuesAreRebuiltFromTheWholeCommitLogPastTheWindow) {
  MessageStoreConfig config = small_store_config(FlushDiskType::ASYNC_FLUSH);
  config.flushIntervalConsumeQueue = 100;  // the checkpoint follows every ConsumeQueue flush
  config.flushConsumeQueueThoroughInterval = 100;
  for (const bool clean : {true, false}) {
    SCOPED_TRACE(clean ? "clean shutdown, every queue deleted" : "kill -9, queue 1 deleted");
    StoreSimWorld world(config);
    ASSERT_TRUE(world.start().ok());
    // Two batches 10 s apart, so that after the crash the checkpoint puts the
    // abnormal recovery window past the first segment.
    std::vector<PutMessageResult> puts = fill_segments(world, 2);
    world.run_for(seconds(10));
    for (const PutMessageResult& put : fill_segments(world, 5)) puts.push_back(put);
    world.run_for(seconds(3));
    const StoreState before = state_of(world.store());
    if (clean) {
      ASSERT_TRUE(world.shutdown().ok());
      world.remove_tree(kConsumeQueueDir);
    } else {
      world.crash();
      world.remove_tree(kConsumeQueueDir + "/TopicA/1");
    }

    ASSERT_TRUE(world.start().ok());
    EXPECT_GT(world.store().recovery_report().scan_from, PhyOffset(0)) << "the window alone would miss records";
    EXPECT_EQ(state_of(world.store()), before);
    EXPECT_TRUE(consistent(world.store(), puts.size()));
    for (int32_t queue_id = 0; queue_id < 3; ++queue_id) {
      SCOPED_TRACE(queue_id);
      EXPECT_EQ(world.store().min_offset_in_queue("TopicA", queue_id), QueueOffset(0));
      const GetMessageResult first = world.store().get_message("g", "TopicA", queue_id, QueueOffset(0), 1);
      ASSERT_EQ(first.status, GetMessageStatus::FOUND);
      EXPECT_EQ(first.messages[0].phy_offset, puts[static_cast<size_t>(queue_id)].append.wrote_offset);
    }
    // (After the crash the index rebuild may already re-dispatch from an
    // older segment; either way queue 1 comes back whole.)
    if (clean) {
      EXPECT_TRUE(logged("WARN", "no consume queue entry on disk"));
    }
    // And the next put of the rebuilt queue continues its numbering.
    const QueueOffset expected = world.store().max_offset_in_queue("TopicA", 1);
    const PutMessageResult next = world.put(make_message("TopicA", 1, "after the rebuild"));
    ASSERT_EQ(next.status, PutMessageStatus::PUT_OK);
    EXPECT_EQ(next.append.queue_offset, expected);
  }
}

// --- the checkpoint is a hint ----------------------------------------------------

// A checkpoint deleted while the broker was down (after a crash): abnormal
// recovery verifies from the first segment and loses nothing.
TEST_F(StoreRecoveryTest, MissingCheckpointAfterACrashVerifiesFromTheFirstSegmentAndKeepsEverything) {
  MessageStoreConfig config = small_store_config(FlushDiskType::SYNC_FLUSH);
  config.flushIntervalConsumeQueue = 100;  // the checkpoint follows every ConsumeQueue flush
  config.flushConsumeQueueThoroughInterval = 100;
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  const std::vector<PutMessageResult> puts = fill_segments(world, 4);
  world.run_for(seconds(2));  // the checkpoint is written
  ASSERT_TRUE(world.disk().exists("/store/checkpoint"));
  const StoreState before = state_of(world.store());
  world.crash();
  ASSERT_TRUE(world.disk().remove("/store/checkpoint").ok());

  ASSERT_TRUE(world.start().ok());
  EXPECT_TRUE(world.store().recovery_report().abnormal);
  EXPECT_EQ(world.store().recovery_report().scan_from, PhyOffset(0));
  EXPECT_EQ(world.store().recovery_report().records_verified, static_cast<int64_t>(puts.size()));
  EXPECT_EQ(state_of(world.store()), before);
  EXPECT_TRUE(consistent(world.store(), puts.size()));
}

// A checkpoint claiming flushes newer than any record on disk (the data it
// describes was lost, or it came from another store, or the clock jumped):
// taken at its word, recovery would start at the newest segment and never
// re-dispatch the ConsumeQueue entries the checkpoint claimed durable. Here
// a ConsumeQueue did lose entries; recovery must ignore the checkpoint,
// verify from the first segment, and give consumers every message.
TEST_F(StoreRecoveryTest, CheckpointNewerThanTheDataIsNotTrusted) {
  const MessageStoreConfig config = small_store_config(FlushDiskType::SYNC_FLUSH);
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  const std::vector<PutMessageResult> puts = fill_segments(world, 5);
  const StoreState before = state_of(world.store());
  world.crash();
  // 2090-01-01: plausible (before 2100), decades newer than every record.
  const int64_t future_ms = 3'786'912'000'000;
  std::vector<uint8_t> checkpoint(24);
  for (int field = 0; field < 3; ++field) {
    for (int i = 0; i < 8; ++i) checkpoint[field * 8 + i] = static_cast<uint8_t>(future_ms >> (56 - 8 * i));
  }
  write_raw(world, "/store/checkpoint", 0, checkpoint);
  // Queue 0 lost the entries of its last file past the 10th.
  const std::string queue_dir = kConsumeQueueDir + "/TopicA/0";
  Result<std::vector<std::string>> files = world.disk().list(queue_dir);
  ASSERT_TRUE(files.ok());
  ASSERT_GE(files->size(), 2u);
  write_raw(world, queue_dir + "/" + files->back(), 10 * 20, std::vector<uint8_t>(config.mappedFileSizeConsumeQueue - 10 * 20, 0));

  ASSERT_TRUE(world.start().ok());
  EXPECT_EQ(world.store().recovery_report().scan_from, PhyOffset(0));
  EXPECT_TRUE(logged("WARN", "not trusting it"));
  EXPECT_EQ(state_of(world.store()), before);
  EXPECT_TRUE(consistent(world.store(), puts.size()));
}

// --- idempotence ---------------------------------------------------------------

TEST_F(StoreRecoveryTest, RecoveringTwiceGivesTheSameState) {
  const MessageStoreConfig config = small_store_config(FlushDiskType::ASYNC_FLUSH);
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  fill_segments(world, 2);
  const PhyOffset end = world.store().max_phy_offset();
  world.crash();
  write_raw(world, segment_path(config.mappedFileSizeCommitLog), end.value() - config.mappedFileSizeCommitLog,
            garbage(200, 21));

  ASSERT_TRUE(world.start().ok());
  const StoreState first = state_of(world.store());
  const RecoveryReport first_report = world.store().recovery_report();
  world.crash();
  ASSERT_TRUE(world.start().ok());
  EXPECT_EQ(state_of(world.store()), first);
  EXPECT_EQ(world.store().recovery_report().recovered_end, first_report.recovered_end);
  EXPECT_EQ(world.store().recovery_report().stop_reason, "") << "the garbage was truncated the first time";
  ASSERT_TRUE(world.shutdown().ok());
  ASSERT_TRUE(world.start().ok());
  EXPECT_EQ(state_of(world.store()), first);
  EXPECT_FALSE(world.store().recovery_report().abnormal);
}

// --- the end of a segment without a next one -----------------------------------

// Disk full at a roll: the BLANK is written, the next segment cannot be
// created. The store must still restart, cleanly or after kill -9, and take
// puts into the next segment once space returns.
TEST_F(StoreRecoveryTest, RestartsWhenTheLastSegmentEndsWithABlankAndNoNextSegment) {
  const MessageStoreConfig config = small_store_config(FlushDiskType::SYNC_FLUSH);
  for (const bool clean : {true, false}) {
    SCOPED_TRACE(clean ? "clean shutdown" : "kill -9");
    StoreSimWorld world(config);
    ASSERT_TRUE(world.start().ok());
    ASSERT_EQ(world.put(make_message("TopicA", 0, "creates the first segment", "k")).status, PutMessageStatus::PUT_OK);
    world.disk().set_capacity_bytes(world.disk().used_bytes() + 8 * 4096);
    size_t acknowledged = 1;
    PutMessageResult result;
    do {
      result = world.put(make_message("TopicA", 0, std::string(1000, 'x'), "k"));
      if (result.status == PutMessageStatus::PUT_OK) ++acknowledged;
    } while (result.status == PutMessageStatus::PUT_OK && acknowledged < 500);
    ASSERT_EQ(result.status, PutMessageStatus::SERVICE_NOT_AVAILABLE);
    ASSERT_EQ(world.store().max_phy_offset(), PhyOffset(config.mappedFileSizeCommitLog)) << "ends with the BLANK";
    if (clean) {
      ASSERT_TRUE(world.shutdown().ok());
    } else {
      world.crash();
    }
    const Status started = world.start();
    ASSERT_TRUE(started.ok()) << started.to_string();
    EXPECT_EQ(world.store().recovery_report().stop_reason, "");
    EXPECT_TRUE(consistent(world.store(), acknowledged));
    world.disk().set_capacity_bytes(1ull << 30);
    const PutMessageResult next = world.put(make_message("TopicA", 0, "next segment"));
    ASSERT_EQ(next.status, PutMessageStatus::PUT_OK) << next.remark;
    EXPECT_EQ(next.append.wrote_offset, PhyOffset(config.mappedFileSizeCommitLog));
    EXPECT_EQ(next.append.queue_offset, QueueOffset(static_cast<int64_t>(acknowledged)));
  }
}

}  // namespace
}  // namespace mqlab::store::testing::store_recovery_test
