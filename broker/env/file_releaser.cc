#include "broker/env/file_releaser.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include "broker/common/assert.h"

namespace mqlab::env {

FileReleaser& FileReleaser::instance() {
  static FileReleaser* const releaser = new FileReleaser();  // never destroyed: see the header
  return *releaser;
}

void FileReleaser::close_later(int fd) {
  MQ_ASSERT(fd >= 0);
  hand_over(Work{.fd = fd});
}

void FileReleaser::unmap_later(void* address, size_t length) {
  MQ_ASSERT(address != nullptr && length > 0);
  hand_over(Work{.address = address, .length = length});
}

void FileReleaser::hand_over(Work work) {
  {
    std::lock_guard lock(mutex_);
    work_.push_back(work);
    if (!started_) {
      started_ = true;
      std::thread([this] { run(); }).detach();
    }
  }
  wake_.notify_one();
}

void FileReleaser::wait_idle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return work_.empty() && !working_; });
}

void FileReleaser::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return !work_.empty(); });
    const Work work = work_.front();
    work_.pop_front();
    working_ = true;
    lock.unlock();
    // Nothing to do about an error: the file is gone, or the mapping was ours.
    if (work.address != nullptr) {
      ::munmap(work.address, work.length);
    } else {
      ::close(work.fd);
    }
    lock.lock();
    working_ = false;
    if (work_.empty()) idle_.notify_all();
  }
}

void close_file_descriptor(int fd) {
  struct stat status {};
  if (::fstat(fd, &status) == 0 && status.st_nlink == 0 && status.st_size > 0) {
    FileReleaser::instance().close_later(fd);
    return;
  }
  ::close(fd);
}

}  // namespace mqlab::env
