// PosixFile::map_for_appends: pwrites inside the mapping are copies into the
// page cache that pread, other descriptors and sync see as they see a
// pwrite's bytes; writes outside it, a file too short to map, truncation
// below it and unmap() all fall back to the system call. A death test shows
// the copy really bypasses pwrite: the same write past a file cut behind the
// PosixFile's back faults, where pwrite would have extended the file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "broker/env/file_offloader.h"
#include "broker/env/mapped_write_fault.h"
#include "broker/env/path.h"
#include "broker/env/posix_env.h"
#include "broker/env/posix_file_system.h"
#include "broker/env/test/temp_dir.h"

namespace mqlab::env::posix_file_mapping_test {
namespace {

constexpr std::chrono::milliseconds kLimit(10'000);  // generous: a loaded CI machine
constexpr uint64_t kSize = uint64_t{1} << 20;

std::vector<uint8_t> pattern(size_t size, uint8_t seed) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(seed + i * 7);
  return bytes;
}

class PosixFileMappingTest : public ::testing::Test {
 protected:
  std::shared_ptr<File> open(std::string_view name) {
    Result<std::shared_ptr<File>> file = env_.files().open(join_path(dir_, name), OpenOptions{.create = true});
    EXPECT_TRUE(file.ok()) << file.status().to_string();
    return file.ok() ? *file : nullptr;
  }
  static uint64_t mapped_size(File& file) { return dynamic_cast<PosixFile&>(file).mapped_size(); }
  static std::vector<uint8_t> read(File& file, uint64_t offset, size_t size) {
    std::vector<uint8_t> bytes(size);
    Result<size_t> read = file.pread(offset, bytes);
    EXPECT_TRUE(read.ok() && *read == size) << (read.ok() ? std::to_string(*read) : read.status().to_string());
    return bytes;
  }
  // A file mapped to kSize, then cut to one page behind the PosixFile's
  // back: the mapping's later pages lie past the end of the file. Null on a
  // failed step (reported).
  std::shared_ptr<File> mapped_then_cut(std::string_view name) {
    std::shared_ptr<File> file = open(name);
    const bool mapped = file != nullptr && file->allocate(kSize).ok() && file->map_for_appends(kSize);
    EXPECT_TRUE(mapped);
    const bool cut = mapped && ::truncate(file->path().c_str(), 4096) == 0;
    EXPECT_TRUE(cut);
    return cut ? file : nullptr;
  }
  Status sync(File& file) {
    std::optional<Status> result;
    file.sync([&](Status status) { result = std::move(status); });
    EXPECT_TRUE(env_.run_until([&] { return result.has_value(); }, kLimit));
    return result.value_or(Status::Timeout("sync did not complete"));
  }

  testing::TempDir temp_{"mqlab_posix_file_mapping_test"};
  const std::string dir_ = temp_.path();
  PosixEnv env_{uint64_t{42}};
};

TEST_F(PosixFileMappingTest, WritesInsideTheMappingAreSeenByReadsOtherDescriptorsAndSync) {
  std::shared_ptr<File> file = open("segment");
  ASSERT_TRUE(file->allocate(kSize).ok());
  ASSERT_TRUE(file->map_for_appends(kSize));
  EXPECT_EQ(mapped_size(*file), kSize);
  EXPECT_TRUE(file->map_for_appends(kSize / 2));  // already mapped, large enough
  EXPECT_EQ(mapped_size(*file), kSize);

  const std::vector<uint8_t> first = pattern(1100, 1);
  const std::vector<uint8_t> last = pattern(100, 2);
  ASSERT_TRUE(file->pwrite(0, first).ok());
  ASSERT_TRUE(file->pwrite(kSize - last.size(), last).ok());  // ends exactly at the mapping's end
  EXPECT_EQ(read(*file, 0, first.size()), first);
  EXPECT_EQ(read(*file, kSize - last.size(), last.size()), last);
  std::shared_ptr<File> other = open("segment");  // another descriptor: the same page cache
  EXPECT_EQ(read(*other, 0, first.size()), first);
  EXPECT_TRUE(sync(*file).ok());

  // Crossing the mapping's end: the system call, which extends the file.
  const std::vector<uint8_t> crossing = pattern(300, 3);
  ASSERT_TRUE(file->pwrite(kSize - 100, crossing).ok());
  EXPECT_EQ(*file->size(), kSize + 200);
  EXPECT_EQ(read(*other, kSize - 100, crossing.size()), crossing);

  // Gone with the File (its munmap is the offloader's): the bytes stay.
  file.reset();
  FileOffloader::instance().wait_idle();
  std::shared_ptr<File> reopened = open("segment");
  EXPECT_EQ(read(*reopened, 0, first.size()), first);
  EXPECT_EQ(read(*reopened, kSize - 100, crossing.size()), crossing);
}

TEST_F(PosixFileMappingTest, AFileShorterThanTheMappingIsNotMapped) {
  std::shared_ptr<File> file = open("short");
  ASSERT_TRUE(file->allocate(4096).ok());
  EXPECT_FALSE(file->map_for_appends(kSize));
  EXPECT_EQ(mapped_size(*file), 0u);
  const std::vector<uint8_t> bytes = pattern(8192, 4);
  ASSERT_TRUE(file->pwrite(kSize, bytes).ok());  // a pwrite as ever, past the end
  EXPECT_EQ(read(*file, kSize, bytes.size()), bytes);
}

TEST_F(PosixFileMappingTest, TruncatingBelowTheMappingAndUnmapEndIt) {
  std::shared_ptr<File> file = open("cut");
  ASSERT_TRUE(file->allocate(kSize).ok());
  ASSERT_TRUE(file->map_for_appends(kSize));
  ASSERT_TRUE(file->truncate(kSize).ok());  // not below: kept
  EXPECT_EQ(mapped_size(*file), kSize);
  ASSERT_TRUE(file->truncate(4096).ok());
  EXPECT_EQ(mapped_size(*file), 0u);
  const std::vector<uint8_t> bytes = pattern(1000, 5);
  ASSERT_TRUE(file->pwrite(kSize / 2, bytes).ok());  // past the cut: extends, no fault
  EXPECT_EQ(*file->size(), kSize / 2 + bytes.size());

  ASSERT_TRUE(file->allocate(kSize).ok());
  ASSERT_TRUE(file->map_for_appends(kSize));
  file->unmap();
  EXPECT_EQ(mapped_size(*file), 0u);
  file->unmap();  // twice: nothing more to do
  FileOffloader::instance().wait_idle();
  ASSERT_TRUE(file->pwrite(0, bytes).ok());
  EXPECT_EQ(read(*file, 0, bytes.size()), bytes);
}

// Whether the page at address is in this process's page table
// (/proc/self/pagemap: 8 bytes a page, bit 63 "present").
bool page_present(const void* address) {
  const uint64_t page = system_page_bytes();
  const int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  uint64_t entry = 0;
  const auto index = reinterpret_cast<uintptr_t>(address) / page;
  EXPECT_EQ(::pread(fd, &entry, sizeof entry, static_cast<off_t>(index * sizeof entry)),
            static_cast<ssize_t>(sizeof entry));
  ::close(fd);
  return (entry >> 63) != 0;
}

// Copies into the mapping have the pages ahead of them faulted in on the
// offloader's thread, a window at a time, without changing a byte; a
// pwrite populates nothing.
TEST_F(PosixFileMappingTest, PagesAheadOfTheCopiesArePopulatedOffTheWritersThread) {
  constexpr uint64_t kAhead = PosixFile::kPopulateAheadBytes;
  constexpr uint64_t kFile = 4 * kAhead;
  const uint64_t page = system_page_bytes();
  std::shared_ptr<File> file = open("ahead");
  const std::vector<uint8_t> before = pattern(kFile, 11);
  ASSERT_TRUE(file->pwrite(0, before).ok());  // not mapped yet: the system call
  ASSERT_TRUE(file->map_for_appends(kFile));
  const uint8_t* const mapped = dynamic_cast<PosixFile&>(*file).mapped_address();
  FileOffloader& offloader = FileOffloader::instance();
  offloader.wait_idle();
  const uint64_t populated = offloader.pages_populated();
  EXPECT_FALSE(page_present(mapped + kAhead / 2));

  // The first copy: the window after its own page, [page, kAhead).
  const std::vector<uint8_t> put = pattern(1100, 12);
  ASSERT_TRUE(file->pwrite(0, put).ok());
  offloader.wait_idle();
  EXPECT_EQ(offloader.pages_populated() - populated, kAhead / page - 1);
  EXPECT_TRUE(page_present(mapped + page));
  EXPECT_TRUE(page_present(mapped + kAhead - page));
  // (Pages past the window may be present too: a fault maps the whole of
  // a large folio, as ext4's page cache has since Linux 6.16.)
  std::vector<uint8_t> expected = before;
  std::copy(put.begin(), put.end(), expected.begin());
  EXPECT_EQ(read(*file, 0, kFile), expected);  // populating wrote nothing

  // Within half a window of the last populate's end: nothing more.
  ASSERT_TRUE(file->pwrite(kAhead / 2 - 2 * put.size(), put).ok());
  offloader.wait_idle();
  EXPECT_EQ(offloader.pages_populated() - populated, kAhead / page - 1);
  // Past it: the next window, from where the last one ended.
  ASSERT_TRUE(file->pwrite(kAhead / 2, put).ok());
  offloader.wait_idle();
  EXPECT_EQ(offloader.pages_populated() - populated, (kAhead / 2 + put.size() + kAhead) / page - 1);
  EXPECT_TRUE(page_present(mapped + kAhead + kAhead / 4));

  // A write of a page or more (a pwrite, not a copy) populates nothing;
  // the copy after it populates from the page after its own on, none of
  // the pages the pwrite wrote.
  const uint64_t before_group = offloader.pages_populated();
  const std::vector<uint8_t> group = pattern(kAhead + 8 * page, 13);
  ASSERT_TRUE(file->pwrite(kAhead, group).ok());
  const uint64_t group_end = kAhead + group.size();
  offloader.wait_idle();
  const uint64_t after_group = offloader.pages_populated();
  EXPECT_EQ(after_group, before_group);
  ASSERT_TRUE(file->pwrite(group_end, put).ok());
  offloader.wait_idle();
  EXPECT_EQ(offloader.pages_populated() - after_group, (group_end + put.size() + kAhead) / page - group_end / page - 1);

  // At the mapping's end the window stops there.
  ASSERT_TRUE(file->pwrite(kFile - put.size(), put).ok());
  offloader.wait_idle();
  EXPECT_TRUE(page_present(mapped + kFile - page));
  std::copy(put.begin(), put.end(), expected.begin() + static_cast<ptrdiff_t>(kAhead / 2 - 2 * put.size()));
  std::copy(put.begin(), put.end(), expected.begin() + static_cast<ptrdiff_t>(kAhead / 2));
  std::copy(group.begin(), group.end(), expected.begin() + static_cast<ptrdiff_t>(kAhead));
  std::copy(put.begin(), put.end(), expected.begin() + static_cast<ptrdiff_t>(group_end));
  std::copy(put.begin(), put.end(), expected.begin() + static_cast<ptrdiff_t>(kFile - put.size()));
  EXPECT_EQ(read(*file, 0, kFile), expected);
}

// A truncate below the mapping waits for the pages being populated, whose
// reads past the new end would fault (SIGBUS) on the offloader's thread:
// when it returns, the window handed over just before was populated whole,
// from the file as it was.
TEST_F(PosixFileMappingTest, TruncatingBelowTheMappingWaitsForItsPopulates) {
  constexpr uint64_t kAhead = PosixFile::kPopulateAheadBytes;
  const uint64_t page = system_page_bytes();
  std::shared_ptr<File> file = open("shrinking");
  const std::vector<uint8_t> put = pattern(1100, 14);
  FileOffloader& offloader = FileOffloader::instance();
  for (int round = 0; round < 20; ++round) {
    ASSERT_TRUE(file->allocate(4 * kAhead).ok());
    ASSERT_TRUE(file->map_for_appends(4 * kAhead));
    const uint64_t populated = offloader.pages_populated();
    ASSERT_TRUE(file->pwrite(0, put).ok());  // a window handed over
    ASSERT_TRUE(file->truncate(page).ok());
    EXPECT_EQ(offloader.pages_populated() - populated, kAhead / page - 1) << "round " << round;
    EXPECT_EQ(mapped_size(*file), 0u);
  }
  FileOffloader::instance().wait_idle();
  EXPECT_EQ(read(*file, 0, put.size()), put);
}

using PosixFileMappingDeathTest = PosixFileMappingTest;

TEST_F(PosixFileMappingDeathTest, AWriteIntoTheMappingIsACopyNotASystemCall) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::shared_ptr<File> file = mapped_then_cut("mapped");
  ASSERT_NE(file, nullptr);
  // A pwrite past the cut would extend the file; a copy faults.
  const std::vector<uint8_t> bytes = pattern(100, 6);
  EXPECT_DEATH(
      {
        temp_.remove_now();  // the dying child's directory: its destructor will not run
        (void)file->pwrite(kSize / 2, bytes);
      },
      "");
  ASSERT_TRUE(file->pwrite(0, bytes).ok());  // the page still inside the file is fine
  EXPECT_EQ(read(*file, 0, bytes.size()), bytes);
}

TEST_F(PosixFileMappingDeathTest, AWriteOfAPageOrMoreIsASystemCallEvenInsideTheMapping) {
  std::shared_ptr<File> file = mapped_then_cut("large");
  ASSERT_NE(file, nullptr);
  // Where a copy faults (the test above), the system call extends the file.
  const std::vector<uint8_t> page = pattern(PosixFile::kMappedWriteMaxBytes, 8);
  ASSERT_TRUE(file->pwrite(kSize / 2, page).ok());
  EXPECT_EQ(*file->size(), kSize / 2 + page.size());
  EXPECT_EQ(read(*file, kSize / 2, page.size()), page);
  // One byte less is copied: past the file's new end, it faults.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::vector<uint8_t> under = pattern(PosixFile::kMappedWriteMaxBytes - 1, 9);
  EXPECT_DEATH(
      {
        temp_.remove_now();
        (void)file->pwrite(kSize / 4 * 3, under);
      },
      "");
  // Copies and system calls meet in one page cache: a small write over a
  // large one reads back as both.
  const std::vector<uint8_t> small = pattern(100, 10);
  ASSERT_TRUE(file->pwrite(kSize / 2 + 50, small).ok());
  std::vector<uint8_t> expected = page;
  std::copy(small.begin(), small.end(), expected.begin() + 50);
  EXPECT_EQ(read(*file, kSize / 2, page.size()), expected);
}

// mqbroker's SIGBUS report: the same fault, now with a line that says what it was.
TEST_F(PosixFileMappingDeathTest, TheFaultReportNamesTheSignalAndWhatItMeans) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::shared_ptr<File> file = mapped_then_cut("reported");
  ASSERT_NE(file, nullptr);
  const std::vector<uint8_t> bytes = pattern(100, 7);
  EXPECT_DEATH(
      {
        install_mapped_write_fault_report("mapping_test");
        temp_.remove_now();
        (void)file->pwrite(kSize / 2, bytes);
      },
      "mapping_test: SIGBUS at 0x[0-9a-f]+: a page of a mapped file could not be backed.*the next start recovers");
}

}  // namespace
}  // namespace mqlab::env::posix_file_mapping_test
