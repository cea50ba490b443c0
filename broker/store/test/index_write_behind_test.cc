// IndexFile write-behind: queries see buffered entries; the file on disk
// changes only in whole runs of entries and at write_back (entries, slots,
// header, in that order); the checkpoint's index timestamp follows a
// completed write-back and sync; a refused write keeps the entries and is a
// clear error; kill -9 and power loss with buffered entries lose no
// acknowledged key. IndexFile/IndexService on the in-memory Env, the whole
// store on the simulated disk.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "broker/common/big_endian.h"
#include "broker/store/index_file.h"
#include "broker/store/index_service.h"
#include "broker/store/test/memory_env.h"
#include "broker/store/test/store_sim_world.h"

namespace mqlab::store::index_write_behind_test {
namespace {

using testing::MemoryEnv;

constexpr int64_t kT0 = 1'700'000'000'000;
constexpr int64_t kForever = INT64_MAX;
const std::string kTopic = "TopicW";

// A file whose writes fail with ENOSPC while `full` is set.
class FillableFile final : public env::File {
 public:
  explicit FillableFile(std::shared_ptr<env::File> inner) : inner_(std::move(inner)) {}
  const std::string& path() const override { return inner_->path(); }
  Status pwrite(uint64_t offset, std::span<const uint8_t> data) override {
    if (full) return Status::NoSpace(path() + ": pwrite at " + std::to_string(offset) + ": No space left on device");
    ++writes;
    return inner_->pwrite(offset, data);
  }
  Result<size_t> pread(uint64_t offset, std::span<uint8_t> out) override {
    ++reads;
    return inner_->pread(offset, out);
  }
  Status truncate(uint64_t size) override { return inner_->truncate(size); }
  Result<uint64_t> size() override { return inner_->size(); }
  Status allocate(uint64_t size) override { return inner_->allocate(size); }
  void sync(env::SyncCallback done) override { inner_->sync(std::move(done)); }

  bool full = false;
  int writes = 0;
  int reads = 0;

 private:
  std::shared_ptr<env::File> inner_;
};

// The header as the file on disk says it.
IndexHeader header_on_disk(MemoryEnv& env, const std::string& path) {
  const std::vector<uint8_t>& bytes = *env.memory_files().bytes(path);
  EXPECT_GE(bytes.size(), static_cast<size_t>(kIndexHeaderSize));
  return IndexHeader{.begin_timestamp_ms = get_i64_be(bytes.data()),
                     .end_timestamp_ms = get_i64_be(bytes.data() + 8),
                     .begin_phy_offset = PhyOffset(get_i64_be(bytes.data() + 16)),
                     .end_phy_offset = PhyOffset(get_i64_be(bytes.data() + 24)),
                     .hash_slot_count = get_i32_be(bytes.data() + 32),
                     .index_count = get_i32_be(bytes.data() + 36)};
}

class IndexFileWriteBehindTest : public ::testing::Test {
 protected:
  static constexpr int32_t kSlots = 2048;  // two slot pages and a bit
  static constexpr int32_t kEntries = 60'000;
  const std::string path_ = "/index/20231114221320000";

  IndexFileWriteBehindTest() { env_.memory_files().make_durable_dir("/index"); }

  // A fresh file, written through a FillableFile.
  std::shared_ptr<IndexFile> make_file(int32_t entries = kEntries) {
    auto opened = env_.files().open(path_, env::OpenOptions{.create = true});
    EXPECT_TRUE(opened.ok());
    EXPECT_TRUE((*opened)->allocate(static_cast<uint64_t>(IndexFile::file_size_bytes(kSlots, entries))).ok());
    file_ = std::make_shared<FillableFile>(*opened);
    return std::make_shared<IndexFile>(file_, kSlots, entries, IndexHeader{});
  }

  static std::string key(int64_t i) { return kTopic + "#key-" + std::to_string(i); }

  static std::vector<PhyOffset> select(const IndexFile& file, int64_t i) {
    std::vector<PhyOffset> found;
    EXPECT_TRUE(file.select_phy_offsets(key(i), 32, 0, kForever, found).ok());
    return found;
  }

  MemoryEnv env_;
  std::shared_ptr<FillableFile> file_;
};

TEST_F(IndexFileWriteBehindTest, QueriesSeeBufferedEntriesBeforeAnyWrite) {
  auto index = make_file();
  const int reads_before = file_->reads;
  for (int64_t i = 0; i < 100; ++i) ASSERT_TRUE(index->put_key(key(i), PhyOffset(i * 100), kT0 + i).ok());
  EXPECT_EQ(file_->writes, 0);  // fewer than a run of entries: nothing written yet
  EXPECT_TRUE(index->has_buffered_writes());
  EXPECT_EQ(header_on_disk(env_, path_).index_count, 0);  // allocate() zeros: never written
  for (int64_t i = 0; i < 100; ++i) EXPECT_EQ(select(*index, i), std::vector<PhyOffset>{PhyOffset(i * 100)}) << i;
  // Slot pages are read once each (the file was not created by IndexFile::create,
  // so its slots are not known to be zero), never once per key.
  EXPECT_LE(file_->reads - reads_before, 3);
  EXPECT_EQ(index->header().index_count, 101);
}

TEST_F(IndexFileWriteBehindTest, EntriesGoOutInRunsAndTheHeaderOnlyAtWriteBack) {
  auto index = make_file();
  constexpr int64_t kRun = kIndexPageSize / kIndexEntrySize;  // 204 entries
  for (int64_t i = 0; i < kRun - 1; ++i) ASSERT_TRUE(index->put_key(key(i), PhyOffset(i * 100), kT0).ok());
  EXPECT_EQ(file_->writes, 0);
  ASSERT_TRUE(index->put_key(key(kRun - 1), PhyOffset((kRun - 1) * 100), kT0).ok());
  EXPECT_EQ(file_->writes, 1);  // one run of 204 entries, 4080 bytes
  EXPECT_EQ(header_on_disk(env_, path_).index_count, 0);  // the header does not count them yet
  EXPECT_TRUE(index->has_buffered_writes());              // slots and header still are
  ASSERT_TRUE(index->write_back().ok());
  EXPECT_EQ(file_->writes, 3);  // the dirty slot pages in one run, then the header
  EXPECT_FALSE(index->has_buffered_writes());
  EXPECT_EQ(header_on_disk(env_, path_), index->header());
  // The file alone, as a restart reads it, answers every key.
  auto reopened = IndexFile::open(env_, path_, kSlots, kEntries);
  ASSERT_TRUE(reopened.ok()) << reopened.status().to_string();
  for (int64_t i = 0; i < kRun; ++i) EXPECT_EQ(select(**reopened, i), std::vector<PhyOffset>{PhyOffset(i * 100)}) << i;
}

TEST_F(IndexFileWriteBehindTest, AFullFileFreesItsCachesOnceWrittenBack) {
  auto index = make_file(/*entries=*/301);
  for (int64_t i = 0; i < 300; ++i) ASSERT_TRUE(index->put_key(key(i), PhyOffset(i * 100), kT0).ok());
  ASSERT_TRUE(index->is_full());
  EXPECT_GT(index->buffered_bytes(), static_cast<size_t>(kIndexPageSize));
  ASSERT_TRUE(index->write_back().ok());
  EXPECT_EQ(index->buffered_bytes(), 0u);
  for (int64_t i = 0; i < 300; ++i) EXPECT_EQ(select(*index, i), std::vector<PhyOffset>{PhyOffset(i * 100)}) << i;
}

TEST_F(IndexFileWriteBehindTest, ARefusedWriteKeepsTheEntriesAndIsRetried) {
  auto index = make_file();
  file_->full = true;
  for (int64_t i = 0; i < 500; ++i) ASSERT_TRUE(index->put_key(key(i), PhyOffset(i * 100), kT0).ok()) << i;
  EXPECT_EQ(index->write_error().code(), StatusCode::kNoSpace);
  EXPECT_NE(index->write_error().message().find(path_), std::string::npos) << index->write_error().to_string();
  for (int64_t i = 0; i < 500; ++i) EXPECT_EQ(select(*index, i), std::vector<PhyOffset>{PhyOffset(i * 100)}) << i;
  const Status refused = index->write_back();
  EXPECT_EQ(refused.code(), StatusCode::kNoSpace);
  EXPECT_TRUE(index->has_buffered_writes());
  EXPECT_EQ(header_on_disk(env_, path_).index_count, 0);  // nothing claimed on disk
  file_->full = false;
  ASSERT_TRUE(index->write_back().ok());
  EXPECT_TRUE(index->write_error().ok());
  auto reopened = IndexFile::open(env_, path_, kSlots, kEntries);
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ((*reopened)->header().index_count, 501);
  for (int64_t i = 0; i < 500; ++i) EXPECT_EQ(select(**reopened, i), std::vector<PhyOffset>{PhyOffset(i * 100)}) << i;
}

TEST_F(IndexFileWriteBehindTest, ADiskFullForLongRefusesKeysWithoutLosingTheBufferedOnes) {
  auto index = make_file();
  file_->full = true;
  int64_t put = 0;
  Status status;
  while ((status = index->put_key(key(put), PhyOffset(put * 100), kT0)).ok()) {
    ++put;
    ASSERT_LT(put, kEntries - 1) << "the buffer never filled";
  }
  EXPECT_EQ(status.code(), StatusCode::kNoSpace) << status.to_string();
  EXPECT_NE(status.message().find("wait for the disk"), std::string::npos) << status.to_string();
  EXPECT_EQ(put, static_cast<int64_t>(kMaxPendingEntryBytes / kIndexEntrySize) + 1);
  EXPECT_EQ(index->header().index_count, put + 1);  // the refused key changed nothing
  EXPECT_TRUE(select(*index, put).empty());
  file_->full = false;
  ASSERT_TRUE(index->put_key(key(put), PhyOffset(put * 100), kT0).ok());  // the retry writes the backlog first
  ASSERT_TRUE(index->write_back().ok());
  for (int64_t i = 0; i <= put; i += 997) EXPECT_EQ(select(*index, i), std::vector<PhyOffset>{PhyOffset(i * 100)});
  EXPECT_EQ(select(*index, put), std::vector<PhyOffset>{PhyOffset(put * 100)});
}

// --- IndexService: the checkpoint's index timestamp ------------------------

class IndexServiceWriteBehindTest : public ::testing::Test {
 protected:
  IndexServiceWriteBehindTest() {
    config_.storePathRootDir = "/store";
    config_.maxHashSlotNum = 1024;
    config_.maxIndexNum = 301;  // 300 entries a file: rolls with a run and a half buffered
    env_.memory_files().make_durable_dir("/store");
    env_.memory_clock().set_wall_ms(kT0);
  }

  std::unique_ptr<IndexService> open_service(bool last_exit_ok, int64_t checkpoint_ms) {
    auto service = std::make_unique<IndexService>(env_, config_);
    const Status loaded = service->load(last_exit_ok, checkpoint_ms);
    EXPECT_TRUE(loaded.ok()) << loaded.to_string();
    return service;
  }

  // Message i: offset i x 100, stored at kT0 + i ms, UNIQ_KEY "u<i>".
  static DispatchRequest message(int64_t i) {
    DispatchRequest request;
    request.topic = kTopic;
    request.commit_log_offset = PhyOffset(i * 100);
    request.msg_size = 100;
    request.store_timestamp_ms = kT0 + i;
    request.uniq_key = "u" + std::to_string(i);
    return request;
  }

  static std::vector<PhyOffset> query(const IndexService& service, int64_t i) {
    auto found = service.query(kTopic, "u" + std::to_string(i), 32, 0, kForever);
    EXPECT_TRUE(found.ok());
    return found.ok() ? *found : std::vector<PhyOffset>{};
  }

  MemoryEnv env_;
  MessageStoreConfig config_;
};

TEST_F(IndexServiceWriteBehindTest, CheckpointTimestampFollowsTheWriteBackAndSyncOfAFullFile) {
  auto service = open_service(true, 0);
  for (int64_t i = 0; i < 301; ++i) ASSERT_TRUE(service->build_index(message(i)).ok());  // message 300 rolls
  ASSERT_EQ(service->files().size(), 2u);
  const std::string full = service->files()[0]->path();
  // The roll wrote the full file back at once: its header on disk counts all
  // 300 entries ...
  EXPECT_EQ(header_on_disk(env_, full).index_count, 301);
  EXPECT_EQ(service->files()[0]->buffered_bytes(), 0u);
  // ... but until its sync reports, the checkpoint must not vouch for it.
  EXPECT_EQ(service->last_flushed_end_timestamp_ms(), 0);
  env_.run_all();
  EXPECT_EQ(service->last_flushed_end_timestamp_ms(), kT0 + 299);
  EXPECT_TRUE(service->files()[1]->has_buffered_writes());  // message 300 waits in the newest file
  // A power loss now: the checkpoint (kT0 + 299) keeps the full file, whose
  // entries are durable; the newest, newer than it, is deleted and rebuilt.
  env_.power_loss();
  service = open_service(false, kT0 + 299);
  // The newest file may stay (its creation header, or none, is not newer
  // than the checkpoint), but it counts nothing: its entry was never written.
  ASSERT_GE(service->files().size(), 1u);
  EXPECT_EQ(service->files()[0]->header().index_count, 301);
  for (size_t f = 1; f < service->files().size(); ++f) EXPECT_EQ(service->files()[f]->header().index_count, 1);
  for (int64_t i = 0; i < 300; ++i) EXPECT_EQ(query(*service, i), std::vector<PhyOffset>{PhyOffset(i * 100)}) << i;
  EXPECT_TRUE(query(*service, 300).empty());
  ASSERT_TRUE(service->build_index(message(300)).ok());  // what recovery's re-dispatch does
  EXPECT_EQ(query(*service, 300), std::vector<PhyOffset>{PhyOffset(30000)});
}

TEST_F(IndexServiceWriteBehindTest, PowerLossBeforeTheRollsSyncLeavesNothingVouchedFor) {
  auto service = open_service(true, 0);
  for (int64_t i = 0; i < 301; ++i) ASSERT_TRUE(service->build_index(message(i)).ok());
  const int64_t checkpoint_ms = service->last_flushed_end_timestamp_ms();
  EXPECT_EQ(checkpoint_ms, 0);  // the sync has not reported
  env_.power_loss();
  service = open_service(false, checkpoint_ms);
  EXPECT_TRUE(service->files().empty());  // both newer than the checkpoint: rebuilt from offset 0
}

TEST_F(IndexServiceWriteBehindTest, FlushWritesBackTheNewestFileForACleanRestart) {
  auto service = open_service(true, 0);
  for (int64_t i = 0; i < 450; ++i) ASSERT_TRUE(service->build_index(message(i)).ok());
  Status flushed = Status::Aborted("flush did not complete");
  service->flush([&flushed](Status status) { flushed = std::move(status); });
  env_.run_all();
  ASSERT_TRUE(flushed.ok()) << flushed.to_string();
  for (const auto& file : service->files()) EXPECT_FALSE(file->has_unflushed_writes()) << file->path();
  env_.power_loss();  // everything was synced
  service = open_service(true, kT0 + 299);
  ASSERT_EQ(service->files().size(), 2u);
  for (int64_t i = 0; i < 450; ++i) EXPECT_EQ(query(*service, i), std::vector<PhyOffset>{PhyOffset(i * 100)}) << i;
}

// --- the whole store: kill -9 and power loss with buffered entries ----------

using testing::StoreSimWorld;

// Puts `count` keyed messages (KEYS "k<i>" and a UNIQ_KEY) and lets them
// dispatch; returns the UNIQ_KEYs.
std::vector<std::string> put_keyed(StoreSimWorld& world, int from, int count) {
  std::vector<std::string> uniq_keys;
  for (int i = from; i < from + count; ++i) {
    MessageToStore message =
        testing::make_message("TopicK", i % 4, "body-" + std::to_string(i), "k" + std::to_string(i));
    char uniq[40];
    std::snprintf(uniq, sizeof(uniq), "0A000009C35000000000%012d", i);
    message.properties[std::string(kPropertyUniqKey)] = uniq;
    uniq_keys.push_back(uniq);
    const PutMessageResult put = world.put(std::move(message));
    EXPECT_EQ(put.status, PutMessageStatus::PUT_OK) << i;
    world.run_for(millis(1));  // distinct store times; the reput dispatches
  }
  world.run_for(millis(50));
  return uniq_keys;
}

void expect_every_key_found(StoreSimWorld& world, int count, const std::vector<std::string>& uniq_keys) {
  for (int i = 0; i < count; ++i) {
    auto by_key = world.store().query_message("TopicK", "k" + std::to_string(i), 32, 0, kForever);
    ASSERT_TRUE(by_key.ok()) << by_key.status().to_string();
    EXPECT_EQ(by_key->size(), 1u) << "k" << i;
    auto by_uniq = world.store().query_message("TopicK", uniq_keys[static_cast<size_t>(i)], 32, 0, kForever);
    ASSERT_TRUE(by_uniq.ok());
    EXPECT_EQ(by_uniq->size(), 1u) << uniq_keys[static_cast<size_t>(i)];
  }
}

TEST(StoreIndexWriteBehind, KillWithBufferedEntriesThenRecoveryFindsEveryKey) {
  // maxIndexNum 256: 300 messages x 2 keys roll twice and leave entries buffered.
  StoreSimWorld world(testing::small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  const std::vector<std::string> uniq_keys = put_keyed(world, 0, 300);
  ASSERT_GE(world.store().index_service().files().size(), 3u);
  ASSERT_TRUE(world.store().index_service().files().back()->has_buffered_writes());
  expect_every_key_found(world, 300, uniq_keys);  // before the crash, from the buffers
  world.crash();
  ASSERT_TRUE(world.start().ok());
  expect_every_key_found(world, 300, uniq_keys);
}

TEST(StoreIndexWriteBehind, PowerLossWithBufferedEntriesThenRecoveryFindsEveryAcknowledgedKey) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    StoreSimWorld world(testing::small_store_config(FlushDiskType::SYNC_FLUSH), sim::DiskProfile::sata_ssd(), seed);
    ASSERT_TRUE(world.start().ok());
    std::vector<std::string> uniq_keys = put_keyed(world, 0, 200);
    world.run_for(seconds(70));  // a thorough checkpoint pass between the batches
    const std::vector<std::string> more = put_keyed(world, 200, 100);
    uniq_keys.insert(uniq_keys.end(), more.begin(), more.end());
    ASSERT_TRUE(world.store().index_service().files().back()->has_buffered_writes());
    world.power_loss();  // SYNC_FLUSH: every acknowledged message is durable
    ASSERT_TRUE(world.start().ok());
    expect_every_key_found(world, 300, uniq_keys);
    // And a clean restart after that keeps them.
    ASSERT_TRUE(world.shutdown().ok());
    ASSERT_TRUE(world.start().ok());
    expect_every_key_found(world, 300, uniq_keys);
  }
}

}  // namespace
}  // namespace mqlab::store::index_write_behind_test
