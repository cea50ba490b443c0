// IndexFile and IndexService: names, key hashing, put/query with time
// windows and hash collisions (4 slots), rolling at maxIndexNum (5 entries a
// file), recovery truncation, abnormal-exit load, retention and durability,
// on the in-memory Env.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "broker/common/big_endian.h"
#include "broker/store/index_file.h"
#include "broker/store/index_service.h"
#include "broker/store/message_codec.h"
#include "broker/store/test/memory_env.h"

namespace mqlab::store::index_file_test {
namespace {

using testing::MemoryEnv;

constexpr int64_t kT0 = 1'700'000'000'000;  // 2023-11-14T22:13:20Z
constexpr int64_t kForever = INT64_MAX;
const std::string kTopic = "TopicA";

// Message i: at commitlog offset i x 100, stored at kT0 + i seconds.
DispatchRequest message(int64_t i, std::string keys, std::string uniq_key = "") {
  DispatchRequest request;
  request.topic = kTopic;
  request.commit_log_offset = PhyOffset(i * 100);
  request.msg_size = 100;
  request.store_timestamp_ms = kT0 + i * 1000;
  request.consume_queue_offset = QueueOffset(i);
  request.keys = std::move(keys);
  request.uniq_key = std::move(uniq_key);
  return request;
}

std::vector<PhyOffset> offsets(std::initializer_list<int64_t> messages) {
  std::vector<PhyOffset> result;
  for (int64_t i : messages) result.push_back(PhyOffset(i * 100));
  return result;
}

class IndexServiceTest : public ::testing::Test {
 protected:
  IndexServiceTest() {
    config_.storePathRootDir = "/store";
    config_.maxHashSlotNum = 4;
    config_.maxIndexNum = 6;  // entry 0 unused: 5 entries a file
    env_.memory_files().make_durable_dir("/store");
    env_.memory_clock().set_wall_ms(kT0);
  }

  std::unique_ptr<IndexService> open_service(bool last_exit_ok = true, int64_t checkpoint_ms = 0) {
    auto service = std::make_unique<IndexService>(env_, config_);
    const Status loaded = service->load(last_exit_ok, checkpoint_ms);
    EXPECT_TRUE(loaded.ok()) << loaded.to_string();
    return service;
  }

  // Message i carries the single key "k<i>".
  void build_messages(IndexService& service, int64_t from, int64_t to) {
    for (int64_t i = from; i < to; ++i) {
      const Status built = service.build_index(message(i, "k" + std::to_string(i)));
      ASSERT_TRUE(built.ok()) << built.to_string();
    }
  }

  std::vector<PhyOffset> query(const IndexService& service, const std::string& key, int32_t max_num = 32,
                               int64_t begin_ms = 0, int64_t end_ms = kForever) {
    auto found = service.query(kTopic, key, max_num, begin_ms, end_ms);
    EXPECT_TRUE(found.ok()) << found.status().to_string();
    return found.ok() ? *found : std::vector<PhyOffset>{};
  }

  Status flush(IndexService& service) {
    Status result = Status::Aborted("flush did not complete");
    service.flush([&result](Status status) { result = std::move(status); });
    env_.run_all();
    return result;
  }

  MemoryEnv env_;
  MessageStoreConfig config_;
};

TEST(IndexFileName, FormatsAndParsesUtcTimes) {
  EXPECT_EQ(IndexFile::file_name(0), "19700101000000000");
  EXPECT_EQ(IndexFile::file_name(kT0 + 123), "20231114221320123");
  EXPECT_EQ(IndexFile::file_name(951'782'400'000), "20000229000000000");  // a leap day
  EXPECT_EQ(IndexFile::parse_file_name("20231114221320123"), kT0 + 123);
  EXPECT_EQ(IndexFile::parse_file_name("20000229000000000"), 951'782'400'000);
  EXPECT_FALSE(IndexFile::parse_file_name("20230229000000000"));  // not a leap year
  EXPECT_FALSE(IndexFile::parse_file_name("20231114251320123"));  // hour 25
  EXPECT_FALSE(IndexFile::parse_file_name("2023111422132012"));
  EXPECT_FALSE(IndexFile::parse_file_name("2023111422132012x"));
}

TEST(IndexKeyHash, IsJavaHashCodeMadeNonNegative) {
  EXPECT_EQ(index_key_hash("a"), 97);
  EXPECT_EQ(index_key_hash(""), 0);
  EXPECT_EQ(java_string_hash("polygenelubricants"), INT32_MIN);  // Math.abs keeps it negative
  EXPECT_EQ(index_key_hash("polygenelubricants"), 0);
  const int32_t negative = java_string_hash("TopicA#key-12345678901");
  EXPECT_EQ(index_key_hash("TopicA#key-12345678901"), negative < 0 ? -negative : negative);
}

TEST(IndexFileLayout, MatchesRocketMq) {
  EXPECT_EQ(IndexFile::file_size_bytes(5'000'000, 20'000'000), 420'000'040);
}

TEST_F(IndexServiceTest, QueryByKeyNewestFirstWithinTheWindow) {
  auto service = open_service();
  ASSERT_TRUE(service->build_index(message(0, "k1", "U0")).ok());
  ASSERT_TRUE(service->build_index(message(1, "k2 k1", "U1")).ok());
  ASSERT_TRUE(service->build_index(message(2, "  k3  ")).ok());  // empties between spaces are skipped
  EXPECT_EQ(query(*service, "k1"), offsets({1, 0}));
  EXPECT_EQ(query(*service, "k1", 1), offsets({1}));
  EXPECT_EQ(query(*service, "k1", 32, kT0 + 1000, kT0 + 1000), offsets({1}));
  EXPECT_EQ(query(*service, "k1", 32, kT0, kT0 + 999), offsets({0}));
  EXPECT_EQ(query(*service, "k1", 32, kT0 + 5000, kForever), offsets({}));
  EXPECT_EQ(query(*service, "U1"), offsets({1}));
  EXPECT_EQ(query(*service, "k3"), offsets({2}));
  EXPECT_EQ(query(*service, "k9"), offsets({}));
  EXPECT_TRUE(service->query("OtherTopic", "k1", 32, 0, kForever)->empty());
  EXPECT_TRUE(service->query(kTopic, "k1", 0, 0, kForever)->empty());
}

TEST_F(IndexServiceTest, HashCollisionsShareSlotsAndChains) {
  config_.maxIndexNum = 20;
  auto service = open_service();
  // Four slots for ten keys: chains interleave several keys.
  build_messages(*service, 0, 10);
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(query(*service, "k" + std::to_string(i)), offsets({i})) << i;
  // "Aa" and "BB" have one Java hash: the index cannot tell them apart, so
  // both offsets come back and the caller compares the message keys.
  ASSERT_EQ(java_string_hash("Aa"), java_string_hash("BB"));
  ASSERT_TRUE(service->build_index(message(10, "Aa")).ok());
  ASSERT_TRUE(service->build_index(message(11, "BB")).ok());
  EXPECT_EQ(query(*service, "Aa"), offsets({11, 10}));
}

TEST_F(IndexServiceTest, RollsToANewFileAtMaxIndexNum) {
  auto service = open_service();
  build_messages(*service, 0, 12);  // the clock never moves: names must still differ
  ASSERT_EQ(service->files().size(), 3u);
  auto names = env_.files().list(config_.index_dir());
  EXPECT_EQ(*names, (std::vector<std::string>{"20231114221320000", "20231114221320001", "20231114221320002"}));
  EXPECT_EQ(service->files()[0]->header().end_phy_offset, PhyOffset(400));
  EXPECT_EQ(service->files()[1]->header().begin_phy_offset, PhyOffset(500));
  EXPECT_EQ(service->files()[1]->header().index_count, 6);
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(query(*service, "k" + std::to_string(i)), offsets({i})) << i;
  env_.run_all();  // the background flushes of the two full files
  EXPECT_EQ(service->last_flushed_end_timestamp_ms(), kT0 + 9000);
}

TEST_F(IndexServiceTest, QueryWalksFilesFromNewest) {
  auto service = open_service();
  for (int64_t i = 0; i < 12; ++i) ASSERT_TRUE(service->build_index(message(i, "same")).ok());
  EXPECT_EQ(query(*service, "same", 4), offsets({11, 10, 9, 8}));
  EXPECT_EQ(query(*service, "same", 32, kT0 + 4000, kT0 + 6000), offsets({6, 5, 4}));
}

TEST_F(IndexServiceTest, SkipsPreparedAndRolledBackTransactions) {
  auto service = open_service();
  DispatchRequest prepared = message(0, "tx");
  prepared.sysflag = kSysFlagTransactionPrepared;
  DispatchRequest rollback = message(1, "tx");
  rollback.sysflag = kSysFlagTransactionRollback;
  DispatchRequest commit = message(2, "tx");
  commit.sysflag = kSysFlagTransactionCommit;
  for (const auto& request : {prepared, rollback, commit}) ASSERT_TRUE(service->build_index(request).ok());
  EXPECT_EQ(query(*service, "tx"), offsets({2}));
}

TEST_F(IndexServiceTest, ReDispatchIsNotIndexedTwice) {
  auto service = open_service();
  build_messages(*service, 0, 4);
  build_messages(*service, 1, 6);  // abnormal recovery replays from message 1
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(query(*service, "k" + std::to_string(i)), offsets({i})) << i;
  EXPECT_EQ(service->files().back()->header().index_count + service->files().front()->header().index_count - 2,
            7);  // 6 keys, plus message 3 again (the newest end is re-indexed; the query drops the repeat)
}

TEST_F(IndexServiceTest, TruncateDeletesFilesPastTheCommitLogEnd) {
  auto service = open_service();
  build_messages(*service, 0, 12);  // ends 400, 900, 1100
  ASSERT_TRUE(flush(*service).ok());
  ASSERT_EQ(service->last_flushed_end_timestamp_ms(), kT0 + 9000);
  auto from = service->truncate(PhyOffset(5000));
  ASSERT_TRUE(from.ok());
  EXPECT_EQ(*from, PhyOffset(5000));  // nothing points past it
  from = service->truncate(PhyOffset(700));
  ASSERT_TRUE(from.ok());
  EXPECT_EQ(*from, PhyOffset(500));  // the second file began at message 5
  EXPECT_EQ(service->last_flushed_end_timestamp_ms(), kT0 + 4999);  // the checkpoint must not cover message 5
  EXPECT_EQ(service->files().size(), 1u);
  EXPECT_EQ(env_.files().list(config_.index_dir())->size(), 1u);
  EXPECT_TRUE(query(*service, "k6").empty());
  build_messages(*service, 5, 7);  // the caller re-dispatches [500, 700)
  EXPECT_EQ(query(*service, "k6"), offsets({6}));
  EXPECT_EQ(query(*service, "k2"), offsets({2}));
}

TEST_F(IndexServiceTest, AbnormalLoadDeletesFilesNewerThanTheCheckpoint) {
  {
    auto service = open_service();
    build_messages(*service, 0, 12);
    ASSERT_TRUE(flush(*service).ok());
  }
  {
    auto normal = open_service(true, 0);  // a clean exit keeps everything
    EXPECT_EQ(normal->files().size(), 3u);
    EXPECT_EQ(query(*normal, "k11"), offsets({11}));  // read back from the files
  }
  auto service = open_service(false, kT0 + 4000);  // only the first file was flushed full
  ASSERT_EQ(service->files().size(), 1u);
  EXPECT_EQ(service->files()[0]->header().end_timestamp_ms, kT0 + 4000);
  EXPECT_EQ(env_.files().list(config_.index_dir())->size(), 1u);
  EXPECT_EQ(query(*service, "k4"), offsets({4}));
  EXPECT_TRUE(query(*service, "k5").empty());
  build_messages(*service, 5, 6);  // rebuilt into a newer name than the deleted ones
  EXPECT_EQ(env_.files().list(config_.index_dir())->back(), "20231114221320003");
}

TEST_F(IndexServiceTest, DeleteExpiredNeverTheNewest) {
  auto service = open_service();
  build_messages(*service, 0, 12);
  ASSERT_TRUE(service->delete_expired(PhyOffset(400)).ok());
  EXPECT_EQ(service->files().size(), 3u);  // the first ends at 400, not below it
  ASSERT_TRUE(service->delete_expired(PhyOffset(901)).ok());
  EXPECT_EQ(service->files().size(), 1u);
  ASSERT_TRUE(service->delete_expired(PhyOffset(1'000'000)).ok());
  EXPECT_EQ(service->files().size(), 1u);
  EXPECT_EQ(query(*service, "k11"), offsets({11}));
}

TEST_F(IndexServiceTest, FlushedIndexSurvivesPowerLoss) {
  {
    auto service = open_service();
    build_messages(*service, 0, 7);
    ASSERT_TRUE(flush(*service).ok());
    build_messages(*service, 7, 12);  // not flushed
  }
  env_.power_loss();
  auto service = open_service(false, kT0 + 4000);
  EXPECT_EQ(query(*service, "k4"), offsets({4}));
  EXPECT_TRUE(query(*service, "k11").empty());
}

TEST_F(IndexServiceTest, DamagedChainEndsTheWalk) {
  config_.maxIndexNum = 20;
  {
    auto service = open_service();
    build_messages(*service, 0, 8);
    ASSERT_TRUE(flush(*service).ok());  // write-behind: the bytes reach the file here
  }
  const std::string path = config_.index_dir() + "/20231114221320000";
  std::vector<uint8_t>& bytes = *env_.memory_files().bytes(path);
  const int64_t entries_at = kIndexHeaderSize + config_.maxHashSlotNum * kIndexSlotSize;
  for (int32_t k = 1; k <= 8; ++k) {  // every prev link points at itself or forward
    put_u32_be(bytes.data() + entries_at + k * kIndexEntrySize + 16, static_cast<uint32_t>(k + (k % 2)));
  }
  auto service = open_service();
  for (int64_t i = 0; i < 8; ++i) {
    auto found = service->query(kTopic, "k" + std::to_string(i), 32, 0, kForever);
    ASSERT_TRUE(found.ok());
    EXPECT_LE(found->size(), 1u);
  }
}

TEST_F(IndexServiceTest, LoadRejectsAFileOfAnotherLayout) {
  {
    auto service = open_service();
    build_messages(*service, 0, 2);
    ASSERT_TRUE(flush(*service).ok());
  }
  config_.maxIndexNum = 7;
  IndexService service(env_, config_);
  const Status loaded = service.load(true, 0);
  EXPECT_EQ(loaded.code(), StatusCode::kCorruption);
  EXPECT_NE(loaded.message().find("20231114221320000"), std::string::npos) << loaded.message();
}

}  // namespace
}  // namespace mqlab::store::index_file_test
