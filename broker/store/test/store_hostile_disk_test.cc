// What an unlucky or misconfigured disk does to MessageStore: two stores on one directory (refused by the lock),
// a read-only store directory, a disk that fills in the middle of a segment. Sim processes share one SimDisk; a
// thin FileSystem wrapper injects the faults the SimDisk itself does not model (EROFS, ENOSPC inside an allocated
// segment).
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "broker/env/path.h"
#include "broker/store/message_store.h"
#include "broker/store/test/store_checker.h"
#include "broker/store/test/store_sim_world.h"

namespace mqlab::store::testing::store_hostile_disk_test {
namespace {

// --- a FileSystem with injected faults over another one -------------------------

struct FaultPlan {
  std::set<std::string> read_only_dirs;  // creating, removing or writing files there fails (EROFS)
  bool commit_log_full = false;          // pwrite to a CommitLog segment fails with NoSpace (ENOSPC)
  std::string commit_log_dir;
};

class FaultyFile final : public env::File {
 public:
  FaultyFile(std::shared_ptr<env::File> inner, const FaultPlan& plan) : inner_(std::move(inner)), plan_(plan) {}
  const std::string& path() const override { return inner_->path(); }
  Status pwrite(uint64_t offset, std::span<const uint8_t> data) override {
    if (plan_.read_only_dirs.contains(env::parent_dir(path()))) {
      return Status::IoError(path() + ": pwrite: Read-only file system");
    }
    if (plan_.commit_log_full && env::parent_dir(path()) == plan_.commit_log_dir) {
      return Status::NoSpace(path() + ": pwrite at " + std::to_string(offset) + ": No space left on device");
    }
    return inner_->pwrite(offset, data);
  }
  Result<size_t> pread(uint64_t offset, std::span<uint8_t> out) override { return inner_->pread(offset, out); }
  Status truncate(uint64_t size) override { return inner_->truncate(size); }
  Result<uint64_t> size() override { return inner_->size(); }
  Status allocate(uint64_t size) override { return inner_->allocate(size); }
  void sync(env::SyncCallback done) override { inner_->sync(std::move(done)); }

 private:
  std::shared_ptr<env::File> inner_;
  const FaultPlan& plan_;
};

class FaultyFileSystem final : public env::FileSystem {
 public:
  FaultyFileSystem(env::FileSystem& inner, const FaultPlan& plan) : inner_(inner), plan_(plan) {}
  Result<std::shared_ptr<env::File>> open(const std::string& path, env::OpenOptions options) override {
    if (read_only(path) && (options.create || options.truncate)) {
      return Status::IoError(path + ": open: Read-only file system");
    }
    MQ_ASSIGN_OR_RETURN(std::shared_ptr<env::File> file, inner_.open(path, options));
    return std::shared_ptr<env::File>(std::make_shared<FaultyFile>(std::move(file), plan_));
  }
  Status remove(const std::string& path) override {
    if (read_only(path)) return Status::IoError(path + ": unlink: Read-only file system");
    return inner_.remove(path);
  }
  Status rename(const std::string& from, const std::string& to) override { return inner_.rename(from, to); }
  Result<std::vector<std::string>> list(const std::string& dir) override { return inner_.list(dir); }
  Status mkdirs(const std::string& dir) override { return inner_.mkdirs(dir); }
  bool exists(const std::string& path) override { return inner_.exists(path); }
  bool is_directory(const std::string& path) override { return inner_.is_directory(path); }
  void sync_dir(const std::string& dir, env::SyncCallback done) override { inner_.sync_dir(dir, std::move(done)); }
  Result<env::SpaceInfo> space(const std::string& path) override { return inner_.space(path); }
  Result<std::unique_ptr<env::FileLock>> lock(const std::string& path) override {
    if (read_only(path)) return Status::IoError(path + ": open lock file: Read-only file system");
    return inner_.lock(path);
  }

 private:
  bool read_only(const std::string& path) const { return plan_.read_only_dirs.contains(env::parent_dir(path)); }
  env::FileSystem& inner_;
  const FaultPlan& plan_;
};

class FaultyEnv final : public env::Env {
 public:
  FaultyEnv(env::Env& inner, const FaultPlan& plan) : inner_(inner), files_(inner.files(), plan) {}
  env::Clock& clock() override { return inner_.clock(); }
  env::Executor& executor() override { return inner_.executor(); }
  env::FileSystem& files() override { return files_; }
  env::Network& network() override { return inner_.network(); }
  env::Random& random() override { return inner_.random(); }

 private:
  env::Env& inner_;
  FaultyFileSystem files_;
};

// --- a machine with one disk and two broker process slots ------------------------

class SharedDiskWorld {
 public:
  explicit SharedDiskWorld(MessageStoreConfig config)
      : config_(std::move(config)),
        random_(7),
        clock_(scheduler_),
        disk_(scheduler_, sim::DiskProfile::sata_ssd(),
              sim::SimDiskOptions{.name = "disk0", .capacity_bytes = 1ull << 30, .torn_sector_probability = 0.5},
              random_.split()),
        first_("broker-a", scheduler_, clock_, {sim::Mount{"/", &disk_}}, random_.split()),
        second_("broker-b", scheduler_, clock_, {sim::Mount{"/", &disk_}}, random_.split()) {
    plan_.commit_log_dir = config_.commit_log_dir();
  }
  ~SharedDiskWorld() {
    stores_[0].reset();
    stores_[1].reset();
  }

  sim::SimProcess& process(int which) { return which == 0 ? first_ : second_; }

  // Starts a store in process `which` (a fresh incarnation), through the fault plan.
  Status start(int which) {
    MQ_ASSERT(!stores_[which]);
    sim::SimEnv& env = process(which).start();
    envs_[which] = std::make_unique<FaultyEnv>(env, plan_);
    stores_[which] = std::make_unique<MessageStore>(*envs_[which], config_, kStoreHost);
    std::optional<Status> started;
    stores_[which]->start([&](Status status) { started = status; });
    scheduler_.run_until_true([&] { return started.has_value(); }, seconds(600));
    MQ_ASSERT(started.has_value());
    if (!started->ok()) crash(which);
    return *started;
  }
  Status shutdown(int which) {
    std::optional<Status> stopped;
    stores_[which]->shutdown([&](Status status) { stopped = status; });
    scheduler_.run_until_true([&] { return stopped.has_value(); }, seconds(600));
    MQ_ASSERT(stopped.has_value());
    crash(which);
    return *stopped;
  }
  void crash(int which) {
    if (process(which).running()) process(which).kill();
    stores_[which].reset();
    envs_[which].reset();
  }
  PutMessageResult put(int which, MessageToStore message) {
    std::optional<PutMessageResult> result;
    stores_[which]->put_message(std::move(message), [&](PutMessageResult r) { result = std::move(r); });
    scheduler_.run_until_true([&] { return result.has_value(); }, seconds(600));
    MQ_ASSERT(result.has_value());
    return *result;
  }
  void run_until_dispatched(int which) {
    MessageStore& s = store(which);
    scheduler_.run_until_true([&] { return s.dispatched_phy_offset() == s.max_phy_offset(); }, seconds(60));
  }

  void run_for(Nanos duration) { scheduler_.run_until(scheduler_.now() + duration); }

  MessageStore& store(int which) { return *stores_[which]; }
  FaultPlan& plan() { return plan_; }
  sim::SimDisk& disk() { return disk_; }

 private:
  MessageStoreConfig config_;
  FaultPlan plan_;
  env::Random random_;
  sim::Scheduler scheduler_;
  sim::SimClock clock_;
  sim::SimDisk disk_;
  sim::SimProcess first_;
  sim::SimProcess second_;
  std::unique_ptr<FaultyEnv> envs_[2];
  std::unique_ptr<MessageStore> stores_[2];
};

MessageToStore message(int i) { return make_message("TopicA", i % 3, "m" + std::to_string(i), "k" + std::to_string(i)); }

// Store 0's CommitLog holds exactly the acknowledged records, and its
// ConsumeQueues agree with it.
void expect_log_holds(SharedDiskWorld& world, int acknowledged) {
  const std::vector<LoggedRecord> log = scan_log(world.store(0));
  EXPECT_EQ(log.size(), static_cast<size_t>(acknowledged));
  EXPECT_TRUE(consume_queues_agree(world.store(0), log));
}

// --- the store lock -----------------------------------------------------------------

TEST(StoreHostileDisk, SecondStoreOnOneDirectoryIsRefusedNamingTheDirectoryAndTheHolder) {
  SharedDiskWorld world(small_store_config());
  ASSERT_TRUE(world.start(0).ok());
  ASSERT_EQ(world.put(0, message(0)).status, PutMessageStatus::PUT_OK);

  const Status refused = world.start(1);
  ASSERT_EQ(refused.code(), StatusCode::kUnavailable) << refused.to_string();
  EXPECT_NE(refused.message().find("store directory /store is in use by another broker"), std::string::npos)
      << refused.to_string();
  EXPECT_NE(refused.message().find("/store/lock"), std::string::npos) << refused.to_string();
  EXPECT_NE(refused.message().find("sim owner " + std::to_string(world.process(0).env().owner())),
            std::string::npos)
      << refused.to_string();
  // The refused store touched nothing: the first keeps working.
  ASSERT_EQ(world.put(0, message(1)).status, PutMessageStatus::PUT_OK);
  world.run_until_dispatched(0);
  EXPECT_TRUE(consume_queues_agree(world.store(0), scan_log(world.store(0))));

  // A crash releases the lock as process death releases an flock.
  world.crash(0);
  ASSERT_TRUE(world.start(1).ok());
  EXPECT_EQ(scan_log(world.store(1)).size(), 2u);
  // And a clean shutdown releases it too.
  ASSERT_TRUE(world.shutdown(1).ok());
  ASSERT_TRUE(world.start(0).ok());
  EXPECT_EQ(scan_log(world.store(0)).size(), 2u);
}

TEST(StoreHostileDisk, SecondStoreInTheSameProcessIsRefusedToo) {
  SharedDiskWorld world(small_store_config());
  ASSERT_TRUE(world.start(0).ok());
  MessageStore second(world.process(0).env(), small_store_config(), kStoreHost);
  std::optional<Status> started;
  second.start([&](Status status) { started = status; });
  ASSERT_TRUE(world.put(0, message(0)).status == PutMessageStatus::PUT_OK);  // runs the world
  ASSERT_TRUE(started.has_value());
  EXPECT_EQ(started->code(), StatusCode::kUnavailable) << started->to_string();
  EXPECT_NE(started->message().find("/store"), std::string::npos) << started->to_string();
}

// --- a read-only store directory -----------------------------------------------------

TEST(StoreHostileDisk, ReadOnlyStoreDirectoryFailsStartNamingThePathAndChangesNothing) {
  SharedDiskWorld world(small_store_config());
  // A fresh store on a read-only directory.
  ASSERT_TRUE(world.disk().mkdirs("/store").ok());
  world.plan().read_only_dirs = {"/store"};
  Status started = world.start(0);
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.to_string().find("store directory /store is not writable"), std::string::npos)
      << started.to_string();
  EXPECT_NE(started.to_string().find("Read-only file system"), std::string::npos) << started.to_string();

  // A store with data whose commitlog directory became read-only while stopped
  // (a crash: the abort file is there, so recovery would truncate and rewrite).
  world.plan().read_only_dirs.clear();
  ASSERT_TRUE(world.start(0).ok());
  for (int i = 0; i < 5; ++i) ASSERT_EQ(world.put(0, message(i)).status, PutMessageStatus::PUT_OK);
  world.crash(0);
  world.plan().read_only_dirs = {"/store/commitlog"};
  started = world.start(0);
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.to_string().find("store directory /store/commitlog is not writable"), std::string::npos)
      << started.to_string();
  world.plan().read_only_dirs.clear();
  ASSERT_TRUE(world.start(0).ok());
  EXPECT_EQ(scan_log(world.store(0)).size(), 5u);
}

// --- disk full inside a segment ---------------------------------------------------------

// ENOSPC on a write inside an allocated segment (a file system whose
// fallocate does not reserve, or a thin-provisioned volume): the put is
// refused as disk full, nothing acknowledged is lost, and the very next put
// after space returns lands where the refused one would have.
TEST(StoreHostileDisk, DiskFullInTheMiddleOfASegmentRefusesPutsAndRecoversWhenSpaceReturns) {
  for (const FlushDiskType flush : {FlushDiskType::SYNC_FLUSH, FlushDiskType::ASYNC_FLUSH}) {
    SCOPED_TRACE(flush == FlushDiskType::SYNC_FLUSH ? "SYNC_FLUSH" : "ASYNC_FLUSH");
    SharedDiskWorld world(small_store_config(flush));
    ASSERT_TRUE(world.start(0).ok());
    int acknowledged = 0;
    for (; acknowledged < 10; ++acknowledged) {
      ASSERT_EQ(world.put(0, message(acknowledged)).status, PutMessageStatus::PUT_OK);
    }
    const PhyOffset end_before = world.store(0).max_phy_offset();
    ASSERT_GT(end_before, PhyOffset(0));
    ASSERT_EQ(world.store(0).commit_log().file_queue().files().size(), 1u) << "still in the first segment";

    world.plan().commit_log_full = true;
    for (int i = 0; i < 3; ++i) {
      const PutMessageResult refused = world.put(0, message(100 + i));
      EXPECT_EQ(refused.status, PutMessageStatus::SERVICE_NOT_AVAILABLE);
      EXPECT_NE(refused.remark.find("disk full"), std::string::npos) << refused.remark;
      EXPECT_NE(refused.remark.find("No space left on device"), std::string::npos) << refused.remark;
    }
    EXPECT_EQ(world.store(0).max_phy_offset(), end_before) << "a refused put leaves no record";
    // Reads go on while the disk is full.
    EXPECT_EQ(world.store(0).get_message("g", "TopicA", 0, QueueOffset(0), 32).status, GetMessageStatus::FOUND);

    world.plan().commit_log_full = false;
    const PutMessageResult resumed = world.put(0, message(acknowledged++));
    ASSERT_EQ(resumed.status, PutMessageStatus::PUT_OK) << resumed.remark;
    EXPECT_EQ(resumed.append.wrote_offset, end_before);
    world.run_until_dispatched(0);
    expect_log_holds(world, acknowledged);

    // And a crash right after recovers exactly the acknowledged records (the
    // process crash keeps the page cache).
    world.crash(0);
    ASSERT_TRUE(world.start(0).ok());
    expect_log_holds(world, acknowledged);
  }
}

// The refused put's record was described to the dispatcher before its
// commit failed; the record that takes its offset next must be dispatched
// as itself, not as the refused one.
TEST(StoreHostileDisk, ARecordAtARefusedPutsOffsetIsDispatchedAsItself) {
  for (const FlushDiskType flush : {FlushDiskType::SYNC_FLUSH, FlushDiskType::ASYNC_FLUSH}) {
    SCOPED_TRACE(flush == FlushDiskType::SYNC_FLUSH ? "SYNC_FLUSH" : "ASYNC_FLUSH");
    SharedDiskWorld world(small_store_config(flush));
    ASSERT_TRUE(world.start(0).ok());
    ASSERT_EQ(world.put(0, message(0)).status, PutMessageStatus::PUT_OK);
    const PhyOffset end = world.store(0).max_phy_offset();

    world.plan().commit_log_full = true;
    ASSERT_EQ(world.put(0, make_message("Refused", 5, "refused", "kr", "TagR")).status,
              PutMessageStatus::SERVICE_NOT_AVAILABLE);
    world.plan().commit_log_full = false;
    const PutMessageResult taken = world.put(0, make_message("Taken", 2, "taken, longer", "kt", "TagT"));
    ASSERT_EQ(taken.status, PutMessageStatus::PUT_OK) << taken.remark;
    ASSERT_EQ(taken.append.wrote_offset, end);
    world.run_until_dispatched(0);

    EXPECT_EQ(world.store(0).find_consume_queue("Refused", 5), nullptr);
    ConsumeQueue* queue = world.store(0).find_consume_queue("Taken", 2);
    ASSERT_NE(queue, nullptr);
    Result<std::optional<ConsumeQueueEntry>> entry = queue->get(QueueOffset(0));
    ASSERT_TRUE(entry.ok() && entry->has_value());
    EXPECT_EQ((*entry)->offset, end);
    EXPECT_EQ((*entry)->size, taken.append.wrote_bytes);
    EXPECT_EQ((*entry)->tags_code, tags_code("TagT"));
    expect_log_holds(world, 2);
  }
}

// transientStorePoolEnable: the puts were acknowledged from the write
// buffer, so a commit the full disk refuses must keep them all, retry on
// CommitRealTimeService's schedule, and lose none while the process lives;
// only when the segment's buffer cannot take more (the roll's commit is
// refused) are new puts refused.
TEST(StoreHostileDisk, TransientStorePoolKeepsAcknowledgedPutsBufferedThroughAFullDiskAndRetries) {
  MessageStoreConfig config = small_store_config(FlushDiskType::ASYNC_FLUSH);
  config.transientStorePoolEnable = true;
  SharedDiskWorld world(config);
  ASSERT_TRUE(world.start(0).ok());
  int acknowledged = 0;
  for (; acknowledged < 5; ++acknowledged) ASSERT_EQ(world.put(0, message(acknowledged)).status, PutMessageStatus::PUT_OK);
  world.run_for(millis(200));
  const PhyOffset committed = world.store(0).max_phy_offset();
  ASSERT_EQ(committed, world.store(0).commit_log().max_offset());

  world.plan().commit_log_full = true;
  for (int i = 0; i < 3; ++i, ++acknowledged) {
    ASSERT_EQ(world.put(0, message(acknowledged)).status, PutMessageStatus::PUT_OK) << "buffered, no pwrite yet";
  }
  world.run_for(millis(1'000));
  const CommitRealTimeService& service = *world.store(0).commit_real_time_service();
  EXPECT_GE(service.stats().failed_commits, 4u) << "retried every commitIntervalCommitLog";
  EXPECT_EQ(world.store(0).max_phy_offset(), committed) << "nothing reached the file";
  EXPECT_GT(world.store(0).commit_log().max_offset(), committed) << "and nothing was dropped";

  // Fill the segment: the roll must commit the buffer first, the disk
  // refuses, and so is the put. Everything before it stays acknowledged.
  PutMessageResult refused;
  for (int i = 0; i < 100; ++i) {
    refused = world.put(0, make_message("TopicA", 0, std::string(3000, 'f')));
    if (refused.status != PutMessageStatus::PUT_OK) break;
    ++acknowledged;
  }
  ASSERT_EQ(refused.status, PutMessageStatus::SERVICE_NOT_AVAILABLE) << "the buffer never filled";
  EXPECT_NE(refused.remark.find("No space left on device"), std::string::npos) << refused.remark;

  world.plan().commit_log_full = false;
  world.run_for(millis(400));
  EXPECT_EQ(world.store(0).max_phy_offset(), world.store(0).commit_log().max_offset()) << "the retry committed it all";
  EXPECT_GE(service.stats().commits, 2u);
  world.run_until_dispatched(0);
  expect_log_holds(world, acknowledged);
  // Once committed, a kill -9 keeps them (the page cache holds them).
  world.crash(0);
  ASSERT_TRUE(world.start(0).ok());
  expect_log_holds(world, acknowledged);
}

}  // namespace
}  // namespace mqlab::store::testing::store_hostile_disk_test
