// The MessageStore on the real POSIX Env: puts (ASYNC and SYNC), gets, clean and crash restarts, a torn tail.
// Each test uses a fresh /tmp directory and small segments, drives the io_context with run_until, then removes it.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/common/log.h"
#include "broker/env/posix_env.h"
#include "broker/store/message_store.h"
#include "broker/store/test/store_checker.h"
#include "broker/store/test/store_log_test.h"
#include "broker/store/test/store_sim_world.h"

namespace mqlab::store::testing::message_store_posix_test {
namespace {

constexpr std::chrono::milliseconds kLimit(10'000);  // generous for a loaded machine; never asserted on

class MessageStorePosixTest : public StoreLogTest {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/mqlab_message_store_posix_test_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    store_.reset();
    env_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    StoreLogTest::TearDown();
  }

  MessageStoreConfig config(FlushDiskType flush, const std::string& name = "store") const {
    MessageStoreConfig config = small_store_config(flush);
    config.storePathRootDir = dir_ + "/" + name;
    // No retention run during a test: the host's /tmp may be fuller than
    // diskSpaceWarningLevelRatio, which is not what these tests are about.
    config.cleanResourceInterval = 3'600'000;
    return config;
  }

  Status start(const MessageStoreConfig& config) {
    if (!env_) env_ = std::make_unique<env::PosixEnv>(uint64_t{42});
    store_ = std::make_unique<MessageStore>(*env_, config, kStoreHost);
    std::optional<Status> started;
    store_->start([&](Status status) { started = status; });
    env_->run_until([&] { return started.has_value(); }, kLimit);
    return started.value_or(Status::Timeout("start did not complete"));
  }

  Status shutdown() {
    std::optional<Status> stopped;
    store_->shutdown([&](Status status) { stopped = status; });
    env_->run_until([&] { return stopped.has_value(); }, kLimit);
    store_.reset();
    return stopped.value_or(Status::Timeout("shutdown did not complete"));
  }

  // The process dies without shutdown(): the store and its Env go (pending
  // completions are dropped unrun); what it wrote stays in the page cache.
  void crash() {
    store_.reset();
    env_.reset();
  }

  PutMessageResult put(MessageToStore message) {
    std::optional<PutMessageResult> result;
    store_->put_message(std::move(message), [&](PutMessageResult r) { result = std::move(r); });
    env_->run_until([&] { return result.has_value(); }, kLimit);
    EXPECT_TRUE(result.has_value()) << "no reply";
    return result.value_or(PutMessageResult{});
  }

  std::vector<PutMessageResult> put_many(int count) {
    std::vector<PutMessageResult> puts;
    for (int i = 0; i < count; ++i) {
      puts.push_back(put(make_message("TopicA", i % 2, "m" + std::to_string(i) + "|" + std::string(1500, 'p'),
                                      "k" + std::to_string(i), i % 3 == 0 ? "TagA" : "TagB")));
      EXPECT_EQ(puts.back().status, PutMessageStatus::PUT_OK) << puts.back().remark;
    }
    env_->run_until([&] { return store_->dispatched_phy_offset() == store_->max_phy_offset(); }, kLimit);
    return puts;
  }

  ::testing::AssertionResult consistent(size_t expected_records) {
    const std::vector<LoggedRecord> log = scan_log(*store_);
    if (log.size() != expected_records) {
      return ::testing::AssertionFailure() << "log holds " << log.size() << " records, expected " << expected_records;
    }
    if (auto agree = consume_queues_agree(*store_, log); !agree) return agree;
    return index_agrees(*store_, log);
  }

  std::string dir_;
  std::unique_ptr<env::PosixEnv> env_;
  std::unique_ptr<MessageStore> store_;
};

TEST_F(MessageStorePosixTest, AsyncAndSyncFlushPutsAreReadBack) {
  for (const FlushDiskType flush : {FlushDiskType::ASYNC_FLUSH, FlushDiskType::SYNC_FLUSH}) {
    SCOPED_TRACE(flush_disk_type_name(flush));
    ASSERT_TRUE(start(config(flush, flush_disk_type_name(flush))).ok());
    std::optional<PutMessageResult> first;
    PhyOffset flushed_at_reply;
    store_->put_message(make_message("TopicA", 0, "first", "key-1", "TagA"), [&](PutMessageResult r) {
      flushed_at_reply = store_->flushed_phy_offset();
      first = r;
    });
    ASSERT_TRUE(env_->run_until([&] { return first.has_value(); }, kLimit));
    ASSERT_EQ(first->status, PutMessageStatus::PUT_OK) << first->remark;
    EXPECT_EQ(first->append.wrote_offset, PhyOffset(0));
    EXPECT_EQ(first->append.msg_id(), "0A00000100002A9F0000000000000000");
    if (flush == FlushDiskType::SYNC_FLUSH) {
      EXPECT_GE(flushed_at_reply, first->append.end_offset()) << "acknowledged before its fdatasync completed";
    }

    const std::vector<PutMessageResult> puts = put_many(60);  // rolls into a second segment
    EXPECT_EQ(store_->commit_log().file_queue().files().size(), 2u);
    const GetMessageResult got = store_->get_message("g", "TopicA", 0, QueueOffset(0), 32);
    ASSERT_EQ(got.status, GetMessageStatus::FOUND);
    ASSERT_EQ(got.messages.size(), 31u);  // "first", then the even puts
    for (size_t i = 0; i < got.messages.size(); ++i) {
      Result<std::vector<uint8_t>> bytes = MessageStore::read_region(got.messages[i]);
      ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
      Result<DecodedRecord> decoded = decode_record(*bytes);
      ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
      const std::string body(decoded->message.body.begin(), decoded->message.body.end());
      const std::string expected = i == 0 ? "first" : "m" + std::to_string(2 * (i - 1)) + "|" + std::string(1500, 'p');
      EXPECT_EQ(body, expected);
      EXPECT_EQ(decoded->message.queue_offset, QueueOffset(static_cast<int64_t>(i)));
    }
    Result<std::vector<std::vector<uint8_t>>> by_key = store_->query_message("TopicA", "key-1", 8, 0, INT64_MAX);
    ASSERT_TRUE(by_key.ok());
    EXPECT_EQ(by_key->size(), 1u);
    EXPECT_TRUE(consistent(puts.size() + 1));
    ASSERT_TRUE(shutdown().ok());
  }
}

TEST_F(MessageStorePosixTest, CleanShutdownThenNormalRecovery) {
  const MessageStoreConfig cfg = config(FlushDiskType::ASYNC_FLUSH);
  ASSERT_TRUE(start(cfg).ok());
  const std::vector<PutMessageResult> puts = put_many(60);
  const PhyOffset end = store_->max_phy_offset();
  ASSERT_TRUE(shutdown().ok());
  EXPECT_FALSE(std::filesystem::exists(cfg.abort_file_path()));

  ASSERT_TRUE(start(cfg).ok());
  const RecoveryReport& report = store_->recovery_report();
  EXPECT_FALSE(report.abnormal);
  EXPECT_EQ(report.recovered_end, end);
  EXPECT_EQ(report.stop_reason, "");
  EXPECT_TRUE(consistent(puts.size()));
  const PutMessageResult next = put(make_message("TopicA", 0, "after restart"));
  EXPECT_EQ(next.append.wrote_offset, end);
  EXPECT_EQ(next.append.queue_offset, QueueOffset(30));
  ASSERT_TRUE(shutdown().ok());
}

TEST_F(MessageStorePosixTest, DestroyWithoutShutdownThenAbnormalRecovery) {
  const MessageStoreConfig cfg = config(FlushDiskType::ASYNC_FLUSH);
  ASSERT_TRUE(start(cfg).ok());
  const std::vector<PutMessageResult> puts = put_many(60);
  const PhyOffset end = store_->max_phy_offset();
  crash();
  EXPECT_TRUE(std::filesystem::exists(cfg.abort_file_path()));

  ASSERT_TRUE(start(cfg).ok());
  const RecoveryReport& report = store_->recovery_report();
  EXPECT_TRUE(report.abnormal);
  EXPECT_EQ(report.recovered_end, end) << "the page cache kept every write";
  EXPECT_EQ(report.stop_reason, "");
  EXPECT_TRUE(consistent(puts.size()));
  ASSERT_TRUE(shutdown().ok());
}

// Recycling on the real file system, with ASYNC_FLUSH's mapped appends: the
// kept segment is renamed back into the log, written through its mapping
// with the end marker after each group write, and a crash recovers to the
// last new record with no stop reason, though the file holds old records.
TEST_F(MessageStorePosixTest, ARecycledSegmentRecoversCleanlyAfterACrash) {
  MessageStoreConfig cfg = config(FlushDiskType::ASYNC_FLUSH);
  cfg.recycleExpiredCommitLogEnable = true;
  cfg.warmMapedFileEnable = true;
  cfg.fileReservedTime = 0;
  cfg.diskMaxUsedSpaceRatio = 95;  // deletion by age (run_clean_now), not for the host's space
  ASSERT_TRUE(start(cfg).ok());
  std::vector<PutMessageResult> puts = put_many(100);
  ASSERT_EQ(store_->commit_log().file_queue().files().size(), 3u);
  store_->run_clean_now();
  ASSERT_EQ(store_->commit_log().file_queue().files().size(), 1u);
  ASSERT_TRUE(store_->commit_log().file_queue().holds_recycled());
  env_->run_until([] { return false; }, std::chrono::milliseconds(1'200));  // a flush syncs the directory
  const std::vector<PutMessageResult> more = put_many(100);
  puts.insert(puts.end(), more.begin(), more.end());
  EXPECT_EQ(store_->commit_log().file_queue().allocator()->recycled(), 1u);
  for (const auto& entry : std::filesystem::directory_iterator(cfg.commit_log_dir())) {
    EXPECT_FALSE(entry.path().string().ends_with(".recycled")) << entry.path();
  }
  const PhyOffset end = store_->max_phy_offset();
  const PhyOffset min = store_->min_phy_offset();
  crash();

  ASSERT_TRUE(start(cfg).ok());
  const RecoveryReport& report = store_->recovery_report();
  EXPECT_TRUE(report.abnormal);
  EXPECT_EQ(report.recovered_end, end);
  EXPECT_EQ(report.stop_reason, "") << "the end marker ends the log";
  const size_t kept = static_cast<size_t>(
      std::count_if(puts.begin(), puts.end(), [&](const PutMessageResult& p) { return p.append.wrote_offset >= min; }));
  EXPECT_TRUE(consistent(kept));
  ASSERT_TRUE(shutdown().ok());
}

TEST_F(MessageStorePosixTest, GarbageAppendedToTheLastSegmentIsTruncated) {
  const MessageStoreConfig cfg = config(FlushDiskType::ASYNC_FLUSH);
  ASSERT_TRUE(start(cfg).ok());
  const std::vector<PutMessageResult> puts = put_many(60);
  const PhyOffset end = store_->max_phy_offset();
  const int64_t segment_start = end.value() / cfg.mappedFileSizeCommitLog * cfg.mappedFileSizeCommitLog;
  const std::string segment = cfg.commit_log_dir() + "/" + MappedFile::file_name(segment_start);
  ASSERT_TRUE(shutdown().ok());
  {
    std::fstream file(segment, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(file.is_open()) << segment;
    file.seekp(end.value() - segment_start);
    const std::string garbage = "\x01\x02\x03\x04 not a record, just bytes after the end of the log \xFF\xFE";
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
    ASSERT_TRUE(file.good());
  }

  ASSERT_TRUE(start(cfg).ok());
  const RecoveryReport& report = store_->recovery_report();
  EXPECT_FALSE(report.abnormal);
  EXPECT_EQ(report.recovered_end, end);
  EXPECT_NE(report.stop_reason.find(segment + " position " + std::to_string(end.value() - segment_start)),
            std::string::npos)
      << report.stop_reason;
  EXPECT_TRUE(consistent(puts.size()));
  const PutMessageResult next = put(make_message("TopicA", 1, "over the garbage"));
  ASSERT_EQ(next.status, PutMessageStatus::PUT_OK);
  EXPECT_EQ(next.append.wrote_offset, end);
  ASSERT_TRUE(shutdown().ok());
  ASSERT_TRUE(start(cfg).ok());
  EXPECT_EQ(store_->recovery_report().stop_reason, "");
  EXPECT_TRUE(consistent(puts.size() + 1));
  ASSERT_TRUE(shutdown().ok());
}

}  // namespace
}  // namespace mqlab::store::testing::message_store_posix_test
