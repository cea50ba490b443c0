// The real Env's prepare_file (PosixFilePreparer): the file is allocated to
// its size, with pretouch written with zeros (bytes already there are not
// kept: a prepared file is new), and the completion comes later on the
// executor, never inside the call.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "broker/env/path.h"
#include "broker/env/posix_env.h"
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

}  // namespace
}  // namespace mqlab::env::posix_file_preparer_test
