// Which files sync apart (env::File::isolate_syncs): every CommitLog
// segment, whether loaded, created on the put path or prepared ahead by the
// AllocateMappedFileService, and no ConsumeQueue file. On the real Env the
// CommitLog's syncs then run on a flush thread of their own, so a SYNC_FLUSH
// group commit no longer waits behind the ConsumeQueues' syncs
// (broker/env/test/posix_file_sync_lanes_test.cc shows the threads). And
// which sync on the caller (env::File::sync_on_caller): a master's CommitLog
// segments under SYNC_FLUSH, unless groupCommitOnPutThreadEnable is off.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "broker/env/path.h"
#include "broker/store/commit_log.h"
#include "broker/store/consume_queue.h"
#include "broker/store/mapped_file_queue.h"
#include "broker/store/test/memory_env.h"

namespace mqlab::store::sync_isolation_test {
namespace {

using testing::MemoryEnv;
using testing::MemoryFileSystem;

constexpr int64_t kFileSize = 4096;

// Creates dir/name as a file of size bytes (a segment a predecessor left).
void leave_file(MemoryEnv& env, const std::string& dir, const std::string& name, uint64_t size) {
  ASSERT_TRUE(env.files().mkdirs(dir).ok());
  auto file = env.files().open(env::join_path(dir, name), env::OpenOptions{.create = true});
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  ASSERT_TRUE((*file)->allocate(size).ok());
}

// Fills the last file and returns the next one (a roll).
MappedFile* roll(MappedFileQueue& queue) {
  auto last = queue.last_file_or_create(0);
  EXPECT_TRUE(last.ok());
  (*last)->set_wrote_position((*last)->file_size());
  auto next = queue.last_file_or_create(0);
  EXPECT_TRUE(next.ok()) << next.status().to_string();
  return next.ok() ? *next : nullptr;
}

// A queue given one hint (isolate_syncs or sync_on_caller) passes it to
// every segment it holds: loaded, created on the put path, and prepared
// ahead by the AllocateMappedFileService; and no other hint. marked says
// whether the file took the hint, other whether it took the other one.
using QueueHint = void (MappedFileQueue::*)();
using FileMarked = bool (MemoryFileSystem::*)(const std::string&) const;
void expect_every_segment_marked(QueueHint hint, FileMarked marked, FileMarked other) {
  MemoryEnv env;
  const MemoryFileSystem& files = env.memory_files();
  const std::string dir = "/store/log";
  leave_file(env, dir, MappedFile::file_name(0), kFileSize);
  MappedFileQueue queue(env, dir, kFileSize);
  (queue.*hint)();
  ASSERT_TRUE(queue.load().ok());
  EXPECT_TRUE((files.*marked)(env::join_path(dir, MappedFile::file_name(0))));  // loaded
  EXPECT_FALSE((files.*other)(env::join_path(dir, MappedFile::file_name(0))));

  MappedFile* created = roll(queue);  // no allocator: made on the put path
  ASSERT_NE(created, nullptr);
  EXPECT_TRUE((files.*marked)(created->file()->path()));

  MappedFileQueue prepared_queue(env, "/store/prepared", kFileSize);
  (prepared_queue.*hint)();
  prepared_queue.enable_preallocation(/*warm=*/true);
  ASSERT_TRUE(prepared_queue.load().ok());
  ASSERT_TRUE(prepared_queue.last_file_or_create(0).ok());  // the first segment, on the put path
  ASSERT_TRUE(prepared_queue.last_file_or_create(0).ok());  // it has room: the next one is requested
  env.run_all();                                            // and prepared ahead
  MappedFile* taken = roll(prepared_queue);
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ(prepared_queue.allocator()->taken(), 1u);
  EXPECT_TRUE((files.*marked)(taken->file()->path()));
}

TEST(SyncIsolation, AnIsolatingQueueMarksLoadedCreatedAndPreparedFiles) {
  expect_every_segment_marked(&MappedFileQueue::isolate_syncs, &MemoryFileSystem::syncs_isolated,
                              &MemoryFileSystem::syncs_on_caller);
}

TEST(SyncIsolation, AQueueSyncingOnTheCallerMarksLoadedCreatedAndPreparedFiles) {
  expect_every_segment_marked(&MappedFileQueue::sync_on_caller, &MemoryFileSystem::syncs_on_caller,
                              &MemoryFileSystem::syncs_isolated);
}

TEST(SyncIsolation, AQueueLeftAloneMarksNothing) {
  MemoryEnv env;
  MappedFileQueue queue(env, "/store/plain", kFileSize);
  ASSERT_TRUE(queue.load().ok());
  MappedFile* created = roll(queue);
  ASSERT_NE(created, nullptr);
  EXPECT_FALSE(env.memory_files().syncs_isolated(created->file()->path()));
  EXPECT_FALSE(env.memory_files().syncs_on_caller(created->file()->path()));
  bool flushed = false;
  queue.flush([&](Status status) { flushed = status.ok(); });
  env.run_all();
  EXPECT_TRUE(flushed);
  EXPECT_GT(env.memory_files().dir_syncs(), 0);
  EXPECT_EQ(env.memory_files().isolated_dir_syncs(), 0);
}

// Its flush after a new segment syncs the directory apart too.
TEST(SyncIsolation, AnIsolatingQueueSyncsItsDirectoryApart) {
  MemoryEnv env;
  MappedFileQueue queue(env, "/store/log", kFileSize);
  queue.isolate_syncs();
  ASSERT_TRUE(queue.load().ok());
  ASSERT_NE(roll(queue), nullptr);
  bool flushed = false;
  queue.flush([&](Status status) { flushed = status.ok(); });
  env.run_all();
  EXPECT_TRUE(flushed);
  EXPECT_GT(env.memory_files().isolated_dir_syncs(), 0);
}

TEST(SyncIsolation, TheCommitLogsSegmentsAreIsolatedAndTheConsumeQueuesAreNot) {
  MemoryEnv env;
  MessageStoreConfig config;
  config.mappedFileSizeCommitLog = 1 << 20;
  config.mappedFileSizeConsumeQueue = 300 * 20;
  leave_file(env, config.commit_log_dir(), MappedFile::file_name(0), 1 << 20);
  const std::string queue_dir = env::join_path(env::join_path(config.consume_queue_dir(), "TopicA"), "0");
  leave_file(env, queue_dir, MappedFile::file_name(0), 300 * 20);

  CommitLog log(env, config);
  ASSERT_TRUE(log.load().ok());
  EXPECT_TRUE(env.memory_files().syncs_isolated(env::join_path(config.commit_log_dir(), MappedFile::file_name(0))));

  ConsumeQueue queue(env, config, "TopicA", 0);
  ASSERT_TRUE(queue.load().ok());
  EXPECT_FALSE(env.memory_files().syncs_isolated(env::join_path(queue_dir, MappedFile::file_name(0))));
}

// A master's SYNC_FLUSH group commit syncs on the put thread; ASYNC_FLUSH's
// flush service keeps its thread, and so does a SLAVE (which reports its
// offset to the master as it writes); the key turns it off.
TEST(SyncIsolation, OnlyAMastersSyncFlushCommitLogSyncsOnTheCaller) {
  struct Case {
    FlushDiskType flush;
    BrokerRole role;
    bool key;
    bool on_caller;
  };
  for (const Case& c : {Case{FlushDiskType::SYNC_FLUSH, BrokerRole::ASYNC_MASTER, true, true},
                        Case{FlushDiskType::SYNC_FLUSH, BrokerRole::ASYNC_MASTER, false, false},
                        Case{FlushDiskType::ASYNC_FLUSH, BrokerRole::ASYNC_MASTER, true, false},
                        Case{FlushDiskType::SYNC_FLUSH, BrokerRole::SYNC_MASTER, true, true},
                        Case{FlushDiskType::SYNC_FLUSH, BrokerRole::SLAVE, true, false}}) {
    MemoryEnv env;
    MessageStoreConfig config;
    config.mappedFileSizeCommitLog = 1 << 20;
    config.flushDiskType = c.flush;
    config.brokerRole = c.role;
    config.groupCommitOnPutThreadEnable = c.key;
    const std::string segment = env::join_path(config.commit_log_dir(), MappedFile::file_name(0));
    leave_file(env, config.commit_log_dir(), MappedFile::file_name(0), 1 << 20);
    CommitLog log(env, config);
    ASSERT_TRUE(log.load().ok());
    EXPECT_EQ(env.memory_files().syncs_on_caller(segment), c.on_caller)
        << flush_disk_type_name(c.flush) << " " << broker_role_name(c.role) << " key " << c.key;
    EXPECT_TRUE(env.memory_files().syncs_isolated(segment));
  }
}

}  // namespace
}  // namespace mqlab::store::sync_isolation_test
