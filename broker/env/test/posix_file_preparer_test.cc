// The real Env's prepare_file (PosixFilePreparer): the file is allocated to
// its size, with pretouch written with zeros (bytes already there are not
// kept: a prepared file is new), and the completion comes later on the
// executor, never inside the call.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <optional>
#include <string>
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

}  // namespace
}  // namespace mqlab::env::posix_file_preparer_test
