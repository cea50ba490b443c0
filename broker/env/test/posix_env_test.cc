// The real Env against the real OS: files in a fresh directory under /tmp,
// the Asio executor's ordering and cancel, sync completions posted back.
// Each test builds a PosixEnv and drives its io_context with run_until.
#include "broker/env/posix_env.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "broker/env/path.h"
#include "broker/env/test/temp_dir.h"

namespace mqlab::env::posix_env_test {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kLimit(10'000);  // generous: a loaded CI machine

std::span<const uint8_t> bytes_of(std::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

class PosixEnvTest : public ::testing::Test {
 protected:
  std::string path(std::string_view name) const { return join_path(dir_, name); }

  std::shared_ptr<File> create(std::string_view name) {
    Result<std::shared_ptr<File>> file = env_.files().open(path(name), OpenOptions{.create = true});
    EXPECT_TRUE(file.ok()) << file.status().to_string();
    return file.ok() ? *file : nullptr;
  }

  std::string read_all(File& file) {
    std::string text(static_cast<size_t>(*file.size()), '\0');
    Result<size_t> read = file.pread(0, {reinterpret_cast<uint8_t*>(text.data()), text.size()});
    EXPECT_TRUE(read.ok());
    return text;
  }

  // Starts a sync, checks it did not complete inline, and runs the executor
  // until it completes.
  Status sync_and_wait(File& file) {
    std::optional<Status> result;
    file.sync([&](Status status) { result = std::move(status); });
    EXPECT_FALSE(result.has_value()) << "sync completed inline";
    EXPECT_TRUE(env_.run_until([&] { return result.has_value(); }, kLimit));
    return result.value_or(Status::Timeout("sync did not complete"));
  }

  testing::TempDir temp_{"mqlab_posix_env_test"};
  const std::string dir_ = temp_.path();
  PosixEnv env_{uint64_t{42}};
};

TEST_F(PosixEnvTest, WriteThenReadBackAndShortReadAtEndOfFile) {
  auto file = create("data");
  ASSERT_TRUE(file->pwrite(0, bytes_of("hello")).ok());
  ASSERT_TRUE(file->pwrite(5, bytes_of(" world")).ok());
  EXPECT_EQ(read_all(*file), "hello world");

  std::vector<uint8_t> out(8, 0xff);
  Result<size_t> read = file->pread(6, out);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, 5u);  // only "world" is left
  EXPECT_EQ(std::string(out.begin(), out.begin() + 5), "world");

  read = file->pread(100, out);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, 0u);
}

TEST_F(PosixEnvTest, WritePastEndExtendsWithZeros) {
  auto file = create("sparse");
  ASSERT_TRUE(file->pwrite(10, bytes_of("x")).ok());
  EXPECT_EQ(*file->size(), 11u);
  EXPECT_EQ(read_all(*file), std::string(10, '\0') + "x");
}

TEST_F(PosixEnvTest, TruncateShrinksAndExtends) {
  auto file = create("t");
  ASSERT_TRUE(file->pwrite(0, bytes_of("0123456789")).ok());
  ASSERT_TRUE(file->truncate(4).ok());
  EXPECT_EQ(*file->size(), 4u);
  EXPECT_EQ(read_all(*file), "0123");
  ASSERT_TRUE(file->truncate(6).ok());
  EXPECT_EQ(read_all(*file), std::string("0123") + std::string(2, '\0'));
}

TEST_F(PosixEnvTest, AllocateZeroFillsRealBlocksAndKeepsData) {
  auto file = create("segment");
  ASSERT_TRUE(file->pwrite(0, bytes_of("head")).ok());
  constexpr uint64_t kSize = 1 << 20;
  ASSERT_TRUE(file->allocate(kSize).ok());
  EXPECT_EQ(*file->size(), kSize);
  const std::string text = read_all(*file);
  EXPECT_EQ(text.substr(0, 4), "head");
  EXPECT_EQ(text.find_first_not_of('\0', 4), std::string::npos);

  struct stat info {};
  ASSERT_EQ(::stat(path("segment").c_str(), &info), 0);
  EXPECT_GE(static_cast<uint64_t>(info.st_blocks) * 512, kSize) << "blocks were not reserved";

  ASSERT_TRUE(file->allocate(16).ok());  // never shrinks
  EXPECT_EQ(*file->size(), kSize);
}

TEST_F(PosixEnvTest, SyncCompletionIsPostedOnTheExecutorThread) {
  auto file = create("s");
  ASSERT_TRUE(file->pwrite(0, bytes_of("durable")).ok());
  std::thread::id ran_on;
  std::optional<Status> result;
  file->sync([&](Status status) {
    ran_on = std::this_thread::get_id();
    result = std::move(status);
  });
  EXPECT_FALSE(result.has_value());
  ASSERT_TRUE(env_.run_until([&] { return result.has_value(); }, kLimit));
  EXPECT_TRUE(result->ok()) << result->to_string();
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST_F(PosixEnvTest, PendingSyncKeepsFileAlive) {
  std::weak_ptr<File> weak;
  std::optional<Status> result;
  {
    auto file = create("alive");
    weak = file;
    file->sync([&](Status status) { result = std::move(status); });
  }
  EXPECT_FALSE(weak.expired()) << "the queued sync must hold the file";
  ASSERT_TRUE(env_.run_until([&] { return result.has_value(); }, kLimit));
  EXPECT_TRUE(result->ok());
  EXPECT_TRUE(env_.run_until([&] { return weak.expired(); }, kLimit));
}

TEST_F(PosixEnvTest, ManySyncsOnTwoFilesAllCompleteInRequestOrderPerFile) {
  auto a = create("a");
  auto b = create("b");
  std::vector<int> a_done;
  std::vector<int> b_done;
  constexpr int kSyncs = 200;
  for (int i = 0; i < kSyncs; ++i) {
    ASSERT_TRUE(a->pwrite(static_cast<uint64_t>(i), bytes_of("a")).ok());
    a->sync([&, i](Status status) {
      EXPECT_TRUE(status.ok());
      a_done.push_back(i);
    });
    b->sync([&, i](Status status) {
      EXPECT_TRUE(status.ok());
      b_done.push_back(i);
    });
  }
  ASSERT_TRUE(env_.run_until([&] { return a_done.size() + b_done.size() == 2 * kSyncs; }, kLimit));
  for (int i = 0; i < kSyncs; ++i) {
    EXPECT_EQ(a_done[static_cast<size_t>(i)], i);
    EXPECT_EQ(b_done[static_cast<size_t>(i)], i);
  }
}

TEST_F(PosixEnvTest, SyncDirCompletesOkAndMissingDirIsNotFound) {
  create("entry");
  std::optional<Status> ok_result;
  std::optional<Status> missing_result;
  env_.files().sync_dir(dir_, [&](Status status) { ok_result = std::move(status); });
  env_.files().sync_dir(path("missing"), [&](Status status) { missing_result = std::move(status); });
  EXPECT_FALSE(ok_result.has_value());
  ASSERT_TRUE(env_.run_until([&] { return ok_result && missing_result; }, kLimit));
  EXPECT_TRUE(ok_result->ok()) << ok_result->to_string();
  EXPECT_EQ(missing_result->code(), StatusCode::kNotFound);
  EXPECT_NE(missing_result->message().find(path("missing")), std::string::npos);
}

TEST_F(PosixEnvTest, RenameReplacesTheTarget) {
  ASSERT_TRUE(create("new")->pwrite(0, bytes_of("new contents")).ok());
  ASSERT_TRUE(create("current")->pwrite(0, bytes_of("old")).ok());
  ASSERT_TRUE(env_.files().rename(path("new"), path("current")).ok());
  EXPECT_FALSE(env_.files().exists(path("new")));
  auto file = env_.files().open(path("current"), {});
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(read_all(**file), "new contents");

  Status missing = env_.files().rename(path("nothing"), path("current"));
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find(path("nothing")), std::string::npos);
}

TEST_F(PosixEnvTest, ListReturnsSortedNamesAndNotFoundForMissingDir) {
  for (const char* name : {"b", "00000000000000001024", "a", "00000000000000000000", "B"}) create(name);
  ASSERT_TRUE(env_.files().mkdirs(path("sub")).ok());
  Result<std::vector<std::string>> names = env_.files().list(dir_);
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"00000000000000000000", "00000000000000001024", "B", "a", "b", "sub"}));

  EXPECT_TRUE(env_.files().list(path("sub"))->empty());
  EXPECT_EQ(env_.files().list(path("missing")).status().code(), StatusCode::kNotFound);
}

TEST_F(PosixEnvTest, MkdirsCreatesNestedDirectoriesAndIsIdempotent) {
  const std::string nested = path("store/commitlog/deeper");
  ASSERT_TRUE(env_.files().mkdirs(nested).ok());
  EXPECT_TRUE(env_.files().is_directory(nested));
  EXPECT_TRUE(env_.files().mkdirs(nested).ok());
  EXPECT_TRUE(env_.files().mkdirs(path("store//consumequeue/")).ok());
  EXPECT_TRUE(env_.files().is_directory(path("store/consumequeue")));

  create("plain");
  EXPECT_FALSE(env_.files().mkdirs(path("plain")).ok());
  EXPECT_FALSE(env_.files().mkdirs(path("plain/below")).ok());
}

TEST_F(PosixEnvTest, RemoveFilesAndEmptyDirsButNotNonEmptyDirs) {
  ASSERT_TRUE(env_.files().mkdirs(path("full/empty")).ok());
  create("full/file");
  Status not_empty = env_.files().remove(path("full"));
  EXPECT_FALSE(not_empty.ok());
  EXPECT_NE(not_empty.message().find(path("full")), std::string::npos);
  EXPECT_TRUE(env_.files().is_directory(path("full")));

  EXPECT_TRUE(env_.files().remove(path("full/file")).ok());
  EXPECT_TRUE(env_.files().remove(path("full/empty")).ok());
  EXPECT_TRUE(env_.files().remove(path("full")).ok());
  EXPECT_FALSE(env_.files().exists(path("full")));
  EXPECT_EQ(env_.files().remove(path("full")).code(), StatusCode::kNotFound);
}

TEST_F(PosixEnvTest, ExistsAndIsDirectory) {
  create("file");
  EXPECT_TRUE(env_.files().exists(path("file")));
  EXPECT_FALSE(env_.files().is_directory(path("file")));
  EXPECT_TRUE(env_.files().exists(dir_));
  EXPECT_TRUE(env_.files().is_directory(dir_));
  EXPECT_FALSE(env_.files().exists(path("missing")));
  EXPECT_FALSE(env_.files().is_directory(path("missing")));
}

TEST_F(PosixEnvTest, SpaceReportsTheDevice) {
  Result<SpaceInfo> space = env_.files().space(dir_);
  ASSERT_TRUE(space.ok());
  EXPECT_GT(space->capacity_bytes, 0u);
  EXPECT_GT(space->available_bytes, 0u);
  EXPECT_EQ(env_.files().space(path("missing")).status().code(), StatusCode::kNotFound);
}

TEST_F(PosixEnvTest, OpenOptionsCreateExclusiveTruncate) {
  const std::string name = path("opts");
  Result<std::shared_ptr<File>> missing = env_.files().open(name, {});
  ASSERT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(name), std::string::npos);

  auto created = env_.files().open(name, {.create = true, .exclusive = true});
  ASSERT_TRUE(created.ok());
  EXPECT_EQ((*created)->path(), name);
  ASSERT_TRUE((*created)->pwrite(0, bytes_of("abc")).ok());
  EXPECT_EQ(env_.files().open(name, {.create = true, .exclusive = true}).status().code(),
            StatusCode::kAlreadyExists);

  auto reopened = env_.files().open(name, {.create = true});
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ(*(*reopened)->size(), 3u);
  auto truncated = env_.files().open(name, {.truncate = true});
  ASSERT_TRUE(truncated.ok());
  EXPECT_EQ(*(*truncated)->size(), 0u);
}

// /dev/full fails every write with ENOSPC: the one way to see NoSpace
// without filling a disk.
TEST_F(PosixEnvTest, WriteErrorsCarryCodePathAndOffset) {
  if (!env_.files().exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  auto full = env_.files().open("/dev/full", {});
  ASSERT_TRUE(full.ok()) << full.status().to_string();
  Status status = (*full)->pwrite(4096, bytes_of("x"));
  EXPECT_EQ(status.code(), StatusCode::kNoSpace);
  EXPECT_NE(status.message().find("/dev/full"), std::string::npos) << status.to_string();
  EXPECT_NE(status.message().find("4096"), std::string::npos) << status.to_string();
}

// fdatasync of a character device fails (EINVAL); a failed sync must poison
// every later one, since Linux may have dropped the unsynced pages.
TEST_F(PosixEnvTest, FailedSyncFailsEveryLaterSync) {
  if (!env_.files().exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  auto full = env_.files().open("/dev/full", {});
  ASSERT_TRUE(full.ok());
  Status first = sync_and_wait(**full);
  if (first.ok()) GTEST_SKIP() << "fdatasync of /dev/full succeeds here";
  EXPECT_NE(first.message().find("fdatasync"), std::string::npos);
  Status second = sync_and_wait(**full);
  EXPECT_EQ(second.code(), StatusCode::kIoError);
  EXPECT_NE(second.message().find("earlier fdatasync failed"), std::string::npos) << second.to_string();
}

TEST_F(PosixEnvTest, PostRunsTasksInPostOrder) {
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) env_.executor().post([&order, i] { order.push_back(i); });
  EXPECT_TRUE(order.empty());
  ASSERT_TRUE(env_.run_until([&] { return order.size() == 100; }, kLimit));
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[static_cast<size_t>(i)], i);
}

// Many posted tasks run inside one Asio handler (asio_executor.h): run_until
// still returns right after the task that made its condition true.
TEST_F(PosixEnvTest, RunUntilStopsRightAfterTheTaskThatMakesItsConditionTrue) {
  std::vector<int> order;
  for (int i = 0; i < 10; ++i) env_.executor().post([&order, i] { order.push_back(i); });
  ASSERT_TRUE(env_.run_until([&] { return order.size() == 4; }, kLimit));
  EXPECT_EQ(order.size(), 4u);
  ASSERT_TRUE(env_.run_until([&] { return order.size() == 10; }, kLimit));
  for (int i = 0; i < 10; ++i) EXPECT_EQ(order[static_cast<size_t>(i)], i);
}

TEST_F(PosixEnvTest, PostFromAnotherThreadRunsOnTheExecutorThread) {
  std::atomic<bool> ran = false;
  std::thread::id ran_on;
  std::thread poster([&] {
    env_.executor().post([&] {
      ran_on = std::this_thread::get_id();
      ran = true;
    });
  });
  // Keep the io_context busy while the other thread posts.
  const TimerId keepalive = env_.executor().run_after(seconds(60), [] {});
  ASSERT_TRUE(env_.run_until([&] { return ran.load(); }, kLimit));
  poster.join();
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_TRUE(env_.executor().cancel(keepalive));
}

TEST_F(PosixEnvTest, TimersRunInDeadlineThenSchedulingOrder) {
  Executor& executor = env_.executor();
  std::vector<std::string> order;
  executor.run_after(millis(30), [&] { order.push_back("30ms"); });
  executor.run_after(millis(10), [&] { order.push_back("10ms"); });
  executor.run_after(millis(20), [&] { order.push_back("20ms-first"); });
  executor.run_after(millis(20), [&] { order.push_back("20ms-second"); });
  executor.run_after(0, [&] { order.push_back("0ms"); });
  ASSERT_TRUE(env_.run_until([&] { return order.size() == 5; }, kLimit));
  EXPECT_EQ(order, (std::vector<std::string>{"0ms", "10ms", "20ms-first", "20ms-second", "30ms"}));
}

TEST_F(PosixEnvTest, TimersAlreadyDueRunInSchedulingOrder) {
  // All due long before the executor runs: equal lateness must not reorder.
  std::vector<int> order;
  for (int i = 0; i < 50; ++i) env_.executor().run_after(millis(1), [&order, i] { order.push_back(i); });
  std::this_thread::sleep_for(milliseconds(5));
  ASSERT_TRUE(env_.run_until([&] { return order.size() == 50; }, kLimit));
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[static_cast<size_t>(i)], i);
}

TEST_F(PosixEnvTest, CancelStopsAPendingTimerOnly) {
  Executor& executor = env_.executor();
  bool cancelled_ran = false;
  bool kept_ran = false;
  const TimerId cancelled = executor.run_after(millis(5), [&] { cancelled_ran = true; });
  const TimerId kept = executor.run_after(millis(10), [&] { kept_ran = true; });
  EXPECT_NE(cancelled, kNoTimer);
  EXPECT_NE(kept, kNoTimer);
  EXPECT_NE(cancelled, kept);
  EXPECT_TRUE(executor.cancel(cancelled));
  EXPECT_FALSE(executor.cancel(cancelled));  // no longer pending
  EXPECT_FALSE(executor.cancel(kNoTimer));
  ASSERT_TRUE(env_.run_until([&] { return kept_ran; }, kLimit));
  EXPECT_FALSE(executor.cancel(kept));  // already ran
  env_.run_for(milliseconds(10));
  EXPECT_FALSE(cancelled_ran);
}

TEST_F(PosixEnvTest, TaskCanCancelATimerDueInTheSameBatch) {
  Executor& executor = env_.executor();
  bool second_ran = false;
  TimerId second = kNoTimer;
  executor.run_after(millis(1), [&] { EXPECT_TRUE(executor.cancel(second)); });
  second = executor.run_after(millis(1), [&] { second_ran = true; });
  std::this_thread::sleep_for(milliseconds(3));  // both due when the loop starts
  env_.run_for(milliseconds(20));
  EXPECT_FALSE(second_ran);
}

TEST_F(PosixEnvTest, ZeroDelayTimerScheduledByATimerStillRuns) {
  int runs = 0;
  std::function<void()> again = [&] {
    if (++runs < 10) env_.executor().run_after(0, again);
  };
  env_.executor().run_after(0, again);
  ASSERT_TRUE(env_.run_until([&] { return runs == 10; }, kLimit));
}

TEST_F(PosixEnvTest, RunUntilReportsTimeoutAndRunningOutOfWork) {
  EXPECT_FALSE(env_.run_until([] { return false; }, milliseconds(0)));
  // No work at all: returns at once rather than waiting for the limit.
  EXPECT_FALSE(env_.run_until([] { return false; }, kLimit));
  bool fired = false;
  env_.executor().run_after(seconds(60), [&] { fired = true; });
  EXPECT_FALSE(env_.run_until([&] { return fired; }, milliseconds(20)));
  EXPECT_TRUE(env_.run_until([] { return true; }, milliseconds(0)));
}

TEST(PosixEnv, DestroyingTheEnvDropsTimersTasksAndCompletionsUnrun) {
  char pattern[] = "/tmp/mqlab_posix_env_test_XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  boost::asio::io_context io;  // borrowed, and run on after the Env is gone
  bool ran = false;
  std::weak_ptr<File> weak;
  {
    PosixEnv env(io, 7);
    env.executor().run_after(millis(1), [&] { ran = true; });
    env.executor().post([&] { ran = true; });
    auto file = env.files().open(join_path(dir, "f"), {.create = true});
    ASSERT_TRUE(file.ok());
    weak = *file;
    (*file)->sync([&](Status) { ran = true; });
    env.files().sync_dir(dir, [&](Status) { ran = true; });
  }
  io.run_for(milliseconds(20));
  EXPECT_FALSE(ran);
  EXPECT_TRUE(weak.expired()) << "a dropped completion must release its file";
  std::filesystem::remove_all(dir);
}

TEST(PosixEnv, ClockIsMonotonicAndWallTimeIsRecent) {
  PosixEnv env(1);
  const Nanos before = env.clock().now_ns();
  const Nanos after = env.clock().now_ns();
  EXPECT_LE(before, after);
  EXPECT_GT(env.clock().wall_ms(), int64_t{1'577'836'800'000});  // after 2020-01-01
}

TEST(PosixEnv, SeedGivesTheSameRandomStream) {
  PosixEnv first(123);
  PosixEnv second(123);
  EXPECT_EQ(first.seed(), 123u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(first.random().next_u64(), second.random().next_u64());
  PosixEnv os_seeded;
  Random replay(os_seeded.seed());
  EXPECT_EQ(os_seeded.random().next_u64(), replay.next_u64());
}

}  // namespace
}  // namespace mqlab::env::posix_env_test
