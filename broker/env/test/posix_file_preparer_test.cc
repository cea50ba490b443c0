// The real Env's prepare_file (PosixFilePreparer): the file is allocated to
// its size, with pretouch written with zeros (bytes already there are not
// kept: a prepared file is new), and the completion comes later on the
// executor, never inside the call.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "broker/env/path.h"
#include "broker/env/posix_env.h"
#include "broker/env/posix_file_preparer.h"
#include "broker/env/test/temp_dir.h"

namespace mqlab::env::posix_file_preparer_test {
namespace {

constexpr std::chrono::milliseconds kLimit(20'000);  // generous: a loaded CI machine

class PosixFilePreparerTest : public ::testing::TestWithParam<bool> {
 protected:
  PosixEnv env_{uint64_t{1}};
  testing::TempDir temp_{"mqlab_preparer_test"};
  const std::string dir_ = temp_.path();
};

TEST_P(PosixFilePreparerTest, AllocatesToSizeAndCompletesOnTheExecutor) {
  const bool pretouch = GetParam();
  auto file = env_.files().open(join_path(dir_, "segment"), OpenOptions{.create = true});
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  constexpr uint64_t kSize = (uint64_t{3} << 20) + 4096;  // not a multiple of the 1 MiB chunk
  std::optional<Status> result;
  env_.prepare_file(*file, kSize, pretouch, [&](Status status) { result = std::move(status); });
  EXPECT_FALSE(result.has_value());  // never inline
  ASSERT_TRUE(env_.run_until([&] { return result.has_value(); }, kLimit));
  ASSERT_TRUE(result->ok()) << result->to_string();
  EXPECT_EQ(*(*file)->size(), kSize);
  std::vector<uint8_t> bytes(kSize, 0xFF);
  ASSERT_EQ(*(*file)->pread(0, bytes), kSize);
  EXPECT_EQ(bytes, std::vector<uint8_t>(kSize, 0));
}

TEST_P(PosixFilePreparerTest, JobsCompleteInRequestOrder) {
  std::vector<int> order;
  std::vector<std::shared_ptr<File>> files;
  for (int i = 0; i < 3; ++i) {
    auto file = env_.files().open(join_path(dir_, "f" + std::to_string(i)), OpenOptions{.create = true});
    ASSERT_TRUE(file.ok());
    env_.prepare_file(*file, uint64_t{1} << 20, GetParam(), [&order, i](Status status) {
      EXPECT_TRUE(status.ok()) << status.to_string();
      order.push_back(i);
    });
  }
  ASSERT_TRUE(env_.run_until([&] { return order.size() == 3; }, kLimit));
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
}

INSTANTIATE_TEST_SUITE_P(Pretouch, PosixFilePreparerTest, ::testing::Bool());

// stop(): a queued job never starts (it reports Aborted and leaves its file
// unallocated), and a running one, once allocated, is stopped and waited
// for: after stop() returns true nothing more is written to the file, so
// bytes written then stay. 1 GiB of pre-touch takes a second or more even
// on a fast disk, and the test stops it within a poll (0.2 ms) of its
// allocation: the job is running when it is stopped. (Stopped, it writes
// only a few chunks; fallocate reserves the rest without writing it.)
TEST(PosixFilePreparerStop, AQueuedJobNeverStartsAndARunningOneWritesNoMore) {
  PosixEnv env{uint64_t{1}};
  testing::TempDir temp{"mqlab_preparer_stop_test"};
  auto running = env.files().open(join_path(temp.path(), "running"), OpenOptions{.create = true});
  auto queued = env.files().open(join_path(temp.path(), "queued"), OpenOptions{.create = true});
  auto kept = env.files().open(join_path(temp.path(), "kept"), OpenOptions{.create = true});
  ASSERT_TRUE(running.ok() && queued.ok() && kept.ok());
  constexpr uint64_t kLong = uint64_t{1} << 30;
  std::optional<Status> running_result;
  std::optional<Status> queued_result;
  std::optional<Status> kept_result;
  env.prepare_file(*running, kLong, true, [&](Status status) { running_result = std::move(status); });
  env.prepare_file(*queued, kLong, true, [&](Status status) { queued_result = std::move(status); });
  env.prepare_file(*kept, uint64_t{1} << 20, true, [&](Status status) { kept_result = std::move(status); });
  EXPECT_FALSE(env.stop_preparing_file(*queued));  // not allocated: never started
  // Once the running job has allocated its file (its size says so), stop it.
  const auto deadline = std::chrono::steady_clock::now() + kLimit;
  while (*(*running)->size() < kLong && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ASSERT_EQ(*(*running)->size(), kLong);
  ASSERT_TRUE(env.stop_preparing_file(*running));
  const std::vector<uint8_t> marker(4096, 0x7E);
  for (uint64_t offset : {uint64_t{0}, kLong / 2, kLong - 4096}) ASSERT_TRUE((*running)->pwrite(offset, marker).ok());
  EXPECT_FALSE(running_result.has_value() || queued_result.has_value());  // never inline
  ASSERT_TRUE(env.run_until([&] { return kept_result.has_value(); }, kLimit));
  ASSERT_TRUE(running_result.has_value() && queued_result.has_value());  // request order
  EXPECT_EQ(queued_result->code(), StatusCode::kAborted) << queued_result->to_string();
  EXPECT_NE(queued_result->message().find("stopped"), std::string::npos);
  EXPECT_EQ(*(*queued)->size(), 0u);
  // Stopped part way (or, on an impossibly fast disk, finished).
  EXPECT_TRUE(running_result->ok() || running_result->code() == StatusCode::kAborted) << running_result->to_string();
  for (uint64_t offset : {uint64_t{0}, kLong / 2, kLong - 4096}) {
    std::vector<uint8_t> bytes(4096);
    ASSERT_EQ(*(*running)->pread(offset, bytes), bytes.size());
    EXPECT_EQ(bytes, marker) << "overwritten after stop, at " << offset;
  }
  // A job nobody stopped is prepared as always.
  ASSERT_TRUE(kept_result->ok()) << kept_result->to_string();
  EXPECT_EQ(*(*kept)->size(), uint64_t{1} << 20);
  EXPECT_FALSE(env.stop_preparing_file(*kept));  // completed: nothing to stop
}

// The writer does not wait for the syncer: while one segment's fdatasync
// runs (held here by the test), the segments behind it are allocated and
// written, so a broker that fills segments faster than the disk syncs them
// still finds its next one allocated at the roll (on one thread, the next
// job waited 100-200 ms behind each 64 MiB sync). stop() of a written
// segment returns at once and says allocated; its sync is skipped unless it
// began. Completions still come in request order.
TEST(PosixFilePreparerSync, TheNextJobsAreWrittenWhileOneSyncs) {
  PosixEnv env{uint64_t{1}};
  testing::TempDir temp{"mqlab_preparer_sync_test"};
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> synced;  // paths, in the order their syncs began
  bool release = false;
  boost::asio::io_context io;
  PosixFilePreparer preparer(io, [&](File& file) {
    std::unique_lock lock(mutex);
    synced.push_back(file.path());
    changed.notify_all();
    changed.wait(lock, [&] { return release; });
    return Status::Ok();
  });
  // Declared after the preparer, so destroyed first: a failed assertion
  // must not leave the syncer held while the destructor joins it.
  struct ReleaseOnExit {
    std::mutex& mutex;
    std::condition_variable& changed;
    bool& release;
    ~ReleaseOnExit() {
      std::lock_guard lock(mutex);
      release = true;
      changed.notify_all();
    }
  } release_on_exit{mutex, changed, release};

  std::vector<std::shared_ptr<File>> files;
  std::vector<std::pair<int, Status>> results;
  constexpr uint64_t kSize = uint64_t{1} << 20;
  for (int i = 0; i < 3; ++i) {
    auto file = env.files().open(join_path(temp.path(), "segment" + std::to_string(i)), OpenOptions{.create = true});
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    files.push_back(*file);
    preparer.prepare(*file, kSize, true, [&results, i](Status status) { results.emplace_back(i, std::move(status)); });
  }
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, kLimit, [&] { return !synced.empty(); }));
    EXPECT_EQ(synced, std::vector<std::string>{files[0]->path()});
  }
  // The first sync is held; the last segment gets allocated all the same
  // (the writer takes jobs in order, so the second one's writes are done).
  const auto deadline = std::chrono::steady_clock::now() + kLimit;
  while (*files[2]->size() < kSize && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ASSERT_EQ(*files[2]->size(), kSize) << "the writer waited for the first segment's sync";
  EXPECT_TRUE(preparer.stop(files[1]));  // written, its sync not begun: allocated, and the sync skipped
  EXPECT_TRUE(preparer.stop(files[0]));  // in its sync: allocated; the sync goes on
  {
    std::lock_guard lock(mutex);
    release = true;
    changed.notify_all();
  }
  while (results.size() < 3 && std::chrono::steady_clock::now() < deadline + kLimit) {
    io.run_one_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(results.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(results[static_cast<size_t>(i)].first, i);  // request order
  EXPECT_TRUE(results[0].second.ok()) << results[0].second.to_string();  // its sync had begun
  EXPECT_EQ(results[1].second.code(), StatusCode::kAborted) << results[1].second.to_string();
  EXPECT_TRUE(results[2].second.ok()) << results[2].second.to_string();
  std::lock_guard lock(mutex);
  EXPECT_EQ(synced, (std::vector<std::string>{files[0]->path(), files[2]->path()}));
}

}  // namespace
}  // namespace mqlab::env::posix_file_preparer_test
