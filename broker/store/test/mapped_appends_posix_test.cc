// MappedFileQueue's mapped appends on the real POSIX Env: only the last
// file is mapped (the one before is unmapped when the next takes over, a
// truncation unmaps and the next append maps again), and every byte
// appended through the mappings reads back, from the queue and from the
// files reopened afterwards. Without enable_mapped_appends nothing is mapped.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "broker/env/file_offloader.h"
#include "broker/env/posix_env.h"
#include "broker/env/posix_file_system.h"
#include "broker/env/test/temp_dir.h"
#include "broker/store/mapped_file_queue.h"

namespace mqlab::store::mapped_appends_posix_test {
namespace {

constexpr std::chrono::milliseconds kLimit(10'000);  // generous: a loaded CI machine
constexpr int64_t kFileSize = 64 * 1024;
constexpr size_t kRecordBytes = 1000;

uint64_t mapped_size(const MappedFile& file) { return dynamic_cast<env::PosixFile&>(*file.file()).mapped_size(); }

// Appends one record (cut to what the last file has left, so a file fills
// exactly) and keeps a copy of it.
void append_record(MappedFileQueue& queue, std::vector<uint8_t>& written) {
  Result<MappedFile*> last = queue.last_file_or_create(0);
  ASSERT_TRUE(last.ok()) << last.status().to_string();
  const size_t size = std::min<size_t>(kRecordBytes, static_cast<size_t>((*last)->free_bytes()));
  std::vector<uint8_t> record(size);
  for (size_t i = 0; i < size; ++i) record[i] = static_cast<uint8_t>(written.size() + i * 13);
  ASSERT_TRUE((*last)->append(record).ok());
  written.insert(written.end(), record.begin(), record.end());
}

void expect_only_the_last_mapped(const MappedFileQueue& queue) {
  for (const auto& file : queue.files()) {
    EXPECT_EQ(mapped_size(*file), file == queue.last_file() ? static_cast<uint64_t>(kFileSize) : 0u) << file->path();
  }
}

void expect_reads_back(const MappedFileQueue& queue, const std::vector<uint8_t>& written) {
  for (size_t offset = 0; offset < written.size(); offset += kRecordBytes) {
    std::vector<uint8_t> bytes(std::min(kRecordBytes, written.size() - offset));
    Result<size_t> read = queue.read(static_cast<int64_t>(offset), bytes);
    ASSERT_TRUE(read.ok()) << read.status().to_string();
    // A read stops at a file's end; the rest is the next file's.
    ASSERT_GT(*read, 0u) << "at " << offset;
    EXPECT_TRUE(std::equal(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(*read),
                           written.begin() + static_cast<std::ptrdiff_t>(offset)))
        << "at " << offset;
  }
}

TEST(MappedAppendsPosix, OnlyTheLastFileIsMappedAndEveryByteReadsBack) {
  env::PosixEnv env{uint64_t{1}};
  env::testing::TempDir temp{"mqlab_mapped_appends_test"};
  const std::string dir = temp.path() + "/commitlog";
  std::vector<uint8_t> written;
  {
    MappedFileQueue queue(env, dir, kFileSize);
    queue.enable_mapped_appends();
    ASSERT_TRUE(queue.load().ok());
    while (queue.files().size() < 3 || written.size() % kFileSize < kFileSize / 2) {
      append_record(queue, written);
      expect_only_the_last_mapped(queue);
    }
    expect_reads_back(queue, written);

    // A cut into the last file unmaps it; the next append maps it again.
    const int64_t cut = 2 * kFileSize + 5 * static_cast<int64_t>(kRecordBytes);
    ASSERT_TRUE(queue.truncate_dirty_files(cut).ok());
    EXPECT_EQ(mapped_size(*queue.last_file()), 0u);
    written.resize(static_cast<size_t>(cut));
    append_record(queue, written);
    expect_only_the_last_mapped(queue);
    expect_reads_back(queue, written);

    std::optional<Status> flushed;
    queue.flush([&](Status status) { flushed = std::move(status); });
    ASSERT_TRUE(env.run_until([&] { return flushed.has_value(); }, kLimit));
    ASSERT_TRUE(flushed->ok()) << flushed->to_string();
  }
  env::FileOffloader::instance().wait_idle();

  MappedFileQueue reloaded(env, dir, kFileSize);
  ASSERT_TRUE(reloaded.load().ok());
  ASSERT_EQ(reloaded.files().size(), 3u);
  expect_reads_back(reloaded, written);
}

TEST(MappedAppendsPosix, WithoutTheHintNothingIsMapped) {
  env::PosixEnv env{uint64_t{1}};
  env::testing::TempDir temp{"mqlab_mapped_appends_test"};
  MappedFileQueue queue(env, temp.path() + "/commitlog", kFileSize);
  ASSERT_TRUE(queue.load().ok());
  std::vector<uint8_t> written;
  while (queue.files().size() < 2) append_record(queue, written);
  for (const auto& file : queue.files()) EXPECT_EQ(mapped_size(*file), 0u);
  expect_reads_back(queue, written);
}

}  // namespace
}  // namespace mqlab::store::mapped_appends_posix_test
