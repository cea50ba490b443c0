#include "broker/env/file_offloader.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "broker/common/assert.h"

// Linux 5.14's; glibc 2.36 (Debian 12) names it, older headers may not.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace mqlab::env {

FileOffloader& FileOffloader::instance() {
  static FileOffloader* const offloader = new FileOffloader();  // never destroyed: see the header
  return *offloader;
}

void FileOffloader::close_later(int fd) {
  MQ_ASSERT(fd >= 0);
  hand_over(Work{.kind = Kind::kClose, .fd = fd});
}

uint64_t FileOffloader::unmap_later(void* address, size_t length) {
  MQ_ASSERT(address != nullptr && length > 0);
  return hand_over(Work{.kind = Kind::kUnmap, .address = address, .length = length});
}

void FileOffloader::populate_later(void* address, size_t length) {
  MQ_ASSERT(address != nullptr && length > 0);
  MQ_ASSERT(reinterpret_cast<uintptr_t>(address) % system_page_bytes() == 0);
  hand_over(Work{.kind = Kind::kPopulate, .address = address, .length = length});
}

uint64_t FileOffloader::hand_over(Work work) {
  uint64_t ticket = 0;
  {
    std::lock_guard lock(mutex_);
    work_.push_back(work);
    ticket = ++handed_over_;
    if (!started_) {
      started_ = true;
      std::thread([this] { run(); }).detach();
    }
  }
  wake_.notify_one();
  return ticket;
}

void FileOffloader::wait_idle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return work_.empty() && !working_; });
}

void FileOffloader::wait_done(uint64_t ticket) {
  std::unique_lock lock(mutex_);
  MQ_ASSERT(ticket <= handed_over_);
  idle_.wait(lock, [this, ticket] { return done_ >= ticket; });
}

uint64_t FileOffloader::pages_populated() {
  std::lock_guard lock(mutex_);
  return pages_populated_;
}

void FileOffloader::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return !work_.empty(); });
    const Work work = work_.front();
    work_.pop_front();
    working_ = true;
    lock.unlock();
    // Nothing to do about a close's or an unmap's error: the file is gone,
    // or the mapping was ours.
    switch (work.kind) {
      case Kind::kClose: ::close(work.fd); break;
      case Kind::kUnmap: ::munmap(work.address, work.length); break;
      case Kind::kPopulate: populate(work); break;
    }
    lock.lock();
    working_ = false;
    ++done_;
    MQ_ASSERT(done_ <= handed_over_);
    idle_.notify_all();  // wait_idle's and wait_done's waiters, rare (tests, a truncate)
  }
}

namespace {

// A load of a byte of each page of [address, address + length). Not seen
// by ThreadSanitizer: a put may be copying into the last of these pages
// when a window is handed over late (the writer caught up with it); the
// load's value is unused, and the copy is not disturbed.
__attribute__((no_sanitize_thread)) void read_a_byte_a_page(const void* address, size_t length, size_t page) {
  const auto* const bytes = static_cast<const volatile uint8_t*>(address);
  for (size_t offset = 0; offset < length; offset += page) (void)bytes[offset];
}

}  // namespace

void FileOffloader::populate(const Work& work) {
  if (populate_unsupported_) return;
  int result = 0;
  do {
    result = ::madvise(work.address, work.length, MADV_POPULATE_WRITE);
  } while (result != 0 && (errno == EINTR || errno == EAGAIN));
  if (result == 0) {
    // And a read of a byte of each page: on a shadow-paging VM the
    // kernel's page table entry is not yet the hypervisor's, and the first
    // access to a page pays for that (measured here, 2026-12-06: copies of
    // 1,100 bytes into populated pages cost 1.5 us each, into populated
    // and read ones 0.08-0.12, as into pages written before). Elsewhere it
    // costs a load a page.
    const size_t page = system_page_bytes();
    read_a_byte_a_page(work.address, work.length, page);
    std::lock_guard lock(mutex_);
    pages_populated_ += work.length / page;
    return;
  }
  // EINVAL: a kernel before 5.14. Anything else (EFAULT: a page past the
  // file's end, ENOMEM, EIO) leaves those pages to fault when written, as
  // they would have without this: an append reports its own error then.
  if (errno == EINVAL) populate_unsupported_ = true;
}

size_t system_page_bytes() {
  static const auto bytes = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return bytes;
}

void close_file_descriptor(int fd) {
  struct stat status {};
  if (::fstat(fd, &status) == 0 && status.st_nlink == 0 && status.st_size > 0) {
    FileOffloader::instance().close_later(fd);
    return;
  }
  ::close(fd);
}

}  // namespace mqlab::env
