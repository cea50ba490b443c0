// A PosixFile whose name was removed is closed on the offloader's thread (its
// last close frees its pages, which takes milliseconds); one that still has
// a name, or holds no bytes, is closed at once. Work is done in order.
// (Populating a mapping's pages: posix_file_mapping_test.cc.)
#include "broker/env/file_offloader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <gtest/gtest.h>

#include <vector>

#include "broker/env/path.h"
#include "broker/env/posix_env.h"
#include "broker/env/posix_file_system.h"
#include "broker/env/test/temp_dir.h"

namespace mqlab::env::file_offloader_test {
namespace {

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

// A file with 1 MiB written, its descriptor, and the Env's handle on it.
std::pair<std::shared_ptr<File>, int> written_file(PosixEnv& env, const std::string& path) {
  auto file = env.files().open(path, OpenOptions{.create = true});
  EXPECT_TRUE(file.ok()) << file.status().to_string();
  const std::vector<uint8_t> bytes(1 << 20, 0x5A);
  EXPECT_TRUE((*file)->pwrite(0, bytes).ok());
  auto* posix = dynamic_cast<PosixFile*>(file->get());
  EXPECT_NE(posix, nullptr);
  return {*file, posix->fd()};
}

TEST(FileOffloader, ARemovedFileIsClosedByTheOffloader) {
  PosixEnv env{uint64_t{1}};
  testing::TempDir temp{"mqlab_file_offloader_test"};
  const std::string path = join_path(temp.path(), "segment");
  auto [file, fd] = written_file(env, path);
  ASSERT_TRUE(env.files().remove(path).ok());
  file.reset();  // the last reference: handed to the offloader
  FileOffloader::instance().wait_idle();
  EXPECT_FALSE(is_open(fd));
}

TEST(FileOffloader, AFileWithANameIsClosedAtOnce) {
  PosixEnv env{uint64_t{1}};
  testing::TempDir temp{"mqlab_file_offloader_test"};
  auto [file, fd] = written_file(env, join_path(temp.path(), "kept"));
  file.reset();
  EXPECT_FALSE(is_open(fd));  // no waiting: closed inline
}

// Eight new files' descriptors, each handed to the offloader to close.
std::vector<int> descriptors_handed_over(const std::string& dir) {
  std::vector<int> fds;
  for (int i = 0; i < 8; ++i) {
    const std::string path = join_path(dir, "f" + std::to_string(i));
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    EXPECT_GE(fd, 0);
    if (fd < 0) continue;
    fds.push_back(fd);
    FileOffloader::instance().close_later(fd);
  }
  return fds;
}

TEST(FileOffloader, DescriptorsHandedOverAreAllClosed) {
  testing::TempDir temp{"mqlab_file_offloader_test"};
  const std::vector<int> fds = descriptors_handed_over(temp.path());
  FileOffloader::instance().wait_idle();
  for (int fd : fds) EXPECT_FALSE(is_open(fd));
}

// Work is done in the order handed over: once an unmap's ticket is done,
// so is every close handed over before it.
TEST(FileOffloader, AnUnmapsTicketIsDoneAfterTheWorkBeforeIt) {
  testing::TempDir temp{"mqlab_file_offloader_test"};
  const std::vector<int> fds = descriptors_handed_over(temp.path());
  void* const mapping = ::mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapping, MAP_FAILED);
  FileOffloader::instance().wait_done(FileOffloader::instance().unmap_later(mapping, 1 << 16));
  for (int fd : fds) EXPECT_FALSE(is_open(fd));
}

}  // namespace
}  // namespace mqlab::env::file_offloader_test
