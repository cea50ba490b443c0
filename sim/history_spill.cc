#include "sim/history_spill.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <utility>

namespace mqlab::sim {
namespace {

// TMPDIR if set (a user with a small /tmp points it elsewhere), else /tmp.
std::string spill_template() {
  const char* dir = std::getenv("TMPDIR");
  std::string path = dir != nullptr && dir[0] != '\0' ? dir : "/tmp";
  return path + "/mqsim-history-XXXXXX";
}

}  // namespace

SpillFile::~SpillFile() {
  if (fd_ >= 0) ::close(fd_);
}

SpillFile& SpillFile::operator=(SpillFile&& other) noexcept {
  if (this == &other) return *this;
  if (fd_ >= 0) ::close(fd_);
  fd_ = std::exchange(other.fd_, -1);
  owner_pid_ = std::exchange(other.owner_pid_, 0);
  failed_ = std::exchange(other.failed_, false);
  end_ = std::exchange(other.end_, 0);
  return *this;
}

bool SpillFile::ready() {
  if (fd_ >= 0) return true;
  if (failed_) return false;
  std::string path = spill_template();
  fd_ = ::mkstemp(path.data());
  if (fd_ < 0) {
    failed_ = true;  // keep records in memory; asking again each block would cost a syscall per block
    return false;
  }
  // Unlinked at once: the file goes with the process, however it ends.
  ::unlink(path.c_str());
  owner_pid_ = ::getpid();
  return true;
}

void SpillFile::write(uint64_t offset, const void* bytes, size_t size) {
  MQ_ASSERT(fd_ >= 0);
  MQ_ASSERT(owner_pid_ == ::getpid());  // see the header: a child must not write its parent's file
  MQ_ASSERT(offset <= end_);            // appends, or rewrites of what is there
  const char* from = static_cast<const char*>(bytes);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pwrite(fd_, from + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    MQ_ASSERT_MSG(n > 0, "writing the History's spill file failed (is TMPDIR full?)");
    done += static_cast<size_t>(n);
  }
  end_ = std::max(end_, offset + size);
}

void SpillFile::read(uint64_t offset, void* bytes, size_t size) const {
  MQ_ASSERT(fd_ >= 0);
  MQ_ASSERT(offset + size <= end_);
  char* to = static_cast<char*>(bytes);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd_, to + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    MQ_ASSERT_MSG(n > 0, "reading the History's spill file failed");
    done += static_cast<size_t>(n);
  }
}

}  // namespace mqlab::sim
