// Where PosixFileSystem runs syncs. It has two flush threads: a file that
// asked for it (File::isolate_syncs, the CommitLog's segments) syncs apart
// from the others, so its sync completes while another file's sync is still
// held (here by the test; in a broker, the ConsumeQueues' once-a-second
// syncs, eight in a row, 2-40 ms each, that a SYNC_FLUSH group commit waited
// behind). Without the hint a file's sync waits in the shared queue. A file
// that asked for File::sync_on_caller (SYNC_FLUSH's CommitLog) syncs on the
// calling thread, after the tasks already queued there.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "broker/env/path.h"
#include "broker/env/posix_file_system.h"
#include "broker/env/test/temp_dir.h"

namespace mqlab::env::posix_file_sync_lanes_test {
namespace {

constexpr std::chrono::milliseconds kLimit(20'000);  // generous: a loaded CI machine

// Holds every sync of a file named "held" until released, fails the first
// sync of one named "failing", syncs the rest (without an fdatasync).
class HeldSyncs {
 public:
  PosixFileSystem::SyncFile sync_file() {
    return [this](PosixFile& file) {
      std::unique_lock lock(mutex_);
      started_.push_back(file.path());
      threads_.push_back(std::this_thread::get_id());
      changed_.notify_all();
      const std::string name = base_name(file.path());
      if (name == "held") changed_.wait(lock, [this] { return released_; });
      if (name == "failing" && !failed_) {
        failed_ = true;
        return Status::IoError(file.path() + ": fdatasync: Input/output error (injected)");
      }
      return Status::Ok();
    };
  }
  // The thread each sync ran on, in start order.
  std::vector<std::thread::id> threads() {
    std::lock_guard lock(mutex_);
    return threads_;
  }
  bool wait_started(size_t count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kLimit, [&] { return started_.size() >= count; });
  }
  std::vector<std::string> started() {
    std::lock_guard lock(mutex_);
    return started_;
  }
  void release() {
    std::lock_guard lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }

 private:
  static std::string base_name(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> started_;
  std::vector<std::thread::id> threads_;
  bool released_ = false;
  bool failed_ = false;
};

// A PosixFileSystem whose syncs of "held" wait for held.release(), or
// (real_syncs) one that runs fdatasync.
struct Fixture {
  explicit Fixture(bool real_syncs = false) {
    if (real_syncs) {
      files.emplace(io);
    } else {
      files.emplace(io, held.sync_file());
    }
  }
  testing::TempDir temp{"mqlab_sync_lanes_test"};
  HeldSyncs held;
  boost::asio::io_context io;
  std::optional<PosixFileSystem> files;
  std::shared_ptr<File> open(const std::string& name) {
    auto file = files->open(join_path(temp.path(), name), OpenOptions{.create = true});
    EXPECT_TRUE(file.ok()) << file.status().to_string();
    return file.ok() ? *file : nullptr;
  }
  // Runs completions until done() or the limit.
  template <typename Done>
  bool run_until(Done done) {
    const auto deadline = std::chrono::steady_clock::now() + kLimit;
    while (!done() && std::chrono::steady_clock::now() < deadline) io.run_one_for(std::chrono::milliseconds(20));
    return done();
  }
  ~Fixture() {
    held.release();  // before the file system joins its threads, whatever the test did
    files.reset();
  }
};

// Syncs "held" (held on its flush thread until released) and then "log",
// which took hint first; each outcome lands in its optional as it comes.
struct HeldThenHinted {
  std::optional<Status> held_done;
  std::optional<Status> log_done;
};
void sync_held_then_hinted(Fixture& f, void (File::*hint)(), HeldThenHinted& out) {
  const std::shared_ptr<File> held = f.open("held");
  const std::shared_ptr<File> log = f.open("log");
  ASSERT_TRUE(held && log);
  ((*log).*hint)();
  held->sync([&out](Status status) { out.held_done = std::move(status); });
  ASSERT_TRUE(f.held.wait_started(1));
  log->sync([&out](Status status) { out.log_done = std::move(status); });
}

TEST(PosixFileSyncLanes, AnIsolatedFileSyncsWhileAnotherFilesSyncIsHeld) {
  Fixture f;
  HeldThenHinted syncs;
  ASSERT_NO_FATAL_FAILURE(sync_held_then_hinted(f, &File::isolate_syncs, syncs));
  std::optional<Status>& held_done = syncs.held_done;
  std::optional<Status>& log_done = syncs.log_done;
  ASSERT_TRUE(f.run_until([&] { return log_done.has_value(); })) << "the isolated sync waited behind the held one";
  EXPECT_TRUE(log_done->ok()) << log_done->to_string();
  EXPECT_FALSE(held_done.has_value());
  f.held.release();
  ASSERT_TRUE(f.run_until([&] { return held_done.has_value(); }));
  EXPECT_TRUE(held_done->ok()) << held_done->to_string();
}

// The isolated files' directory syncs there too (a CommitLog flush after a
// new segment syncs its directory).
TEST(PosixFileSyncLanes, AnIsolatedDirectorySyncDoesNotWaitForAHeldFileSync) {
  Fixture f;
  const std::shared_ptr<File> held = f.open("held");
  ASSERT_TRUE(held);
  std::optional<Status> held_done;
  std::optional<Status> dir_done;
  held->sync([&](Status status) { held_done = std::move(status); });
  ASSERT_TRUE(f.held.wait_started(1));
  f.files->sync_dir_isolated(f.temp.path(), [&](Status status) { dir_done = std::move(status); });
  ASSERT_TRUE(f.run_until([&] { return dir_done.has_value(); })) << "the directory sync waited behind the held one";
  EXPECT_TRUE(dir_done->ok()) << dir_done->to_string();
  EXPECT_FALSE(held_done.has_value());
}

// The counterpart: without the hint the second file's sync does not even
// begin while the first one is held (one queue), and begins once released.
TEST(PosixFileSyncLanes, WithoutTheHintASyncWaitsInTheSharedQueue) {
  Fixture f;
  const std::shared_ptr<File> held = f.open("held");
  const std::shared_ptr<File> other = f.open("other");
  ASSERT_TRUE(held && other);
  std::vector<std::string> completed;
  held->sync([&](Status status) {
    EXPECT_TRUE(status.ok());
    completed.push_back("held");
  });
  ASSERT_TRUE(f.held.wait_started(1));
  other->sync([&](Status status) {
    EXPECT_TRUE(status.ok());
    completed.push_back("other");
  });
  // Long enough for a free flush thread to have run it many times over.
  f.io.run_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(completed.empty());
  EXPECT_EQ(f.held.started(), std::vector<std::string>{held->path()});
  f.held.release();
  ASSERT_TRUE(f.run_until([&] { return completed.size() == 2; }));
  EXPECT_EQ(completed, (std::vector<std::string>{"held", "other"}));
}

// File::sync_on_caller (SYNC_FLUSH's CommitLog): the fdatasync runs on the
// calling thread, in a task of its own after those already queued (a reply's
// or a pull response's write goes out before the thread blocks), and done
// runs after it, from the executor, as every sync's does.
TEST(PosixFileSyncLanes, AFileSyncedOnTheCallerSyncsOnItsThreadAfterTheQueuedTasks) {
  Fixture f;
  const std::shared_ptr<File> log = f.open("log");
  ASSERT_TRUE(log);
  log->isolate_syncs();
  log->sync_on_caller();
  std::vector<std::string> order;
  boost::asio::post(f.io, [&] { order.push_back("queued before: synced " + std::to_string(f.held.started().size())); });
  std::optional<Status> done;
  log->sync([&](Status status) {
    order.push_back("done");
    done = std::move(status);
  });
  EXPECT_TRUE(f.held.started().empty()) << "the fdatasync ran inside sync()";
  ASSERT_TRUE(f.run_until([&] { return done.has_value(); }));
  EXPECT_TRUE(done->ok()) << done->to_string();
  EXPECT_EQ(order, (std::vector<std::string>{"queued before: synced 0", "done"}));
  EXPECT_EQ(f.held.threads(), std::vector<std::thread::id>{std::this_thread::get_id()});
}

// It needs no flush thread, so it does not wait behind one that is held.
TEST(PosixFileSyncLanes, ASyncOnTheCallerDoesNotWaitForAHeldSync) {
  Fixture f;
  HeldThenHinted syncs;
  ASSERT_NO_FATAL_FAILURE(sync_held_then_hinted(f, &File::sync_on_caller, syncs));
  std::optional<Status>& log_done = syncs.log_done;
  ASSERT_TRUE(f.run_until([&] { return log_done.has_value(); }));
  EXPECT_TRUE(log_done->ok()) << log_done->to_string();
  const std::vector<std::thread::id> threads = f.held.threads();
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_NE(threads[0], std::this_thread::get_id());  // held: its flush thread
  EXPECT_EQ(threads[1], std::this_thread::get_id());
}

// Once an fdatasync failed, every later sync of the file fails without
// another ("fsyncgate"), on the caller as on a flush thread.
TEST(PosixFileSyncLanes, ASyncOnTheCallerRemembersAFailure) {
  Fixture f;
  const std::shared_ptr<File> file = f.open("failing");
  ASSERT_TRUE(file);
  file->sync_on_caller();
  std::vector<Status> results;
  file->sync([&](Status status) { results.push_back(std::move(status)); });
  file->sync([&](Status status) { results.push_back(std::move(status)); });
  ASSERT_TRUE(f.run_until([&] { return results.size() == 2; }));
  EXPECT_FALSE(results[0].ok());
  ASSERT_FALSE(results[1].ok());
  EXPECT_NE(results[1].to_string().find("an earlier fdatasync failed"), std::string::npos) << results[1].to_string();
  EXPECT_EQ(f.held.started().size(), 1u) << "the second sync ran an fdatasync after a failed one";
}

// A file's syncs stay on one thread, in order: a hint that moves them
// (isolate_syncs, sync_on_caller) comes before the first sync or is refused.
void die_hinting_after_a_sync(void (File::*hint)()) {
  Fixture f(/*real_syncs=*/true);
  const std::shared_ptr<File> file = f.open("late");
  bool done = false;
  file->sync([&](Status) { done = true; });
  f.run_until([&] { return done; });
  f.temp.remove_now();  // the dying child's directory: its destructor will not run
  ((*file).*hint)();
}

TEST(PosixFileSyncLanesDeathTest, IsolatingAfterASyncIsRefused) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(die_hinting_after_a_sync(&File::isolate_syncs), "synced_");
}

TEST(PosixFileSyncLanesDeathTest, SyncingOnTheCallerAfterASyncIsRefused) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(die_hinting_after_a_sync(&File::sync_on_caller), "synced_");
}

}  // namespace
}  // namespace mqlab::env::posix_file_sync_lanes_test
