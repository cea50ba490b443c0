#include "broker/env/unlinked_file_closer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include "broker/common/assert.h"

namespace mqlab::env {

UnlinkedFileCloser& UnlinkedFileCloser::instance() {
  static UnlinkedFileCloser* const closer = new UnlinkedFileCloser();  // never destroyed: see the header
  return *closer;
}

void UnlinkedFileCloser::close_later(int fd) {
  MQ_ASSERT(fd >= 0);
  {
    std::lock_guard lock(mutex_);
    fds_.push_back(fd);
    if (!started_) {
      started_ = true;
      std::thread([this] { run(); }).detach();
    }
  }
  wake_.notify_one();
}

void UnlinkedFileCloser::wait_idle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return fds_.empty() && !closing_; });
}

void UnlinkedFileCloser::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return !fds_.empty(); });
    const int fd = fds_.front();
    fds_.pop_front();
    closing_ = true;
    lock.unlock();
    ::close(fd);  // nothing to do about an error: the file is gone either way
    lock.lock();
    closing_ = false;
    if (fds_.empty()) idle_.notify_all();
  }
}

void close_file_descriptor(int fd) {
  struct stat status {};
  if (::fstat(fd, &status) == 0 && status.st_nlink == 0 && status.st_size > 0) {
    UnlinkedFileCloser::instance().close_later(fd);
    return;
  }
  ::close(fd);
}

}  // namespace mqlab::env
