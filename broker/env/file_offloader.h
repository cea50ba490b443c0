// FileOffloader: does, on a thread of its own, the slow parts of using a
// file that the broker core must not wait for:
// - closing the descriptors of files whose names are gone. The last close
//   of an unlinked file is when the kernel frees its page cache and blocks:
//   30-50 ms for a 64 MiB CommitLog segment on this machine's ext4
//   (2026-12-03, strace), proportionally more for RocketMQ's 1 GiB default.
//   Retention deletes segments on the broker core, so closed there every put
//   in flight waited for it (store_bench's segment-roll puts took 15-115
//   ms). RocketMQ deletes from its own CleanCommitLogService thread.
// - unmapping the mappings of segments no longer written
//   (File::map_for_appends): munmap of a 64 MiB mapping whose pages were all
//   written takes about 1 ms (2026-12-03), at every segment roll.
// - faulting in a mapping's pages ahead of the appends that will copy into
//   them (MADV_POPULATE_WRITE), as RocketMQ's warmMappedFile touches a
//   segment's pages from its AllocateMappedFileService thread. Each page of
//   a fresh mapping faults when first written: about 5 us a page on a
//   shadow-paging VM (this one, 2026-12-06: 1.34 us of a 1,100-byte copy's
//   time against 0.07 once the page is mapped), a quarter of a 1 KiB put's
//   CPU at 1 in flight. The page's contents are left as they are.
//
// One thread does all three in the order handed over, so a populate handed
// over before a mapping's unmap never runs on an address range the kernel
// has since given to another mapping.
//
// Real Env only (PosixFile). One process-wide instance, made on first use
// and never destroyed, with its thread detached: a file may be closed from
// any static destructor, and work still queued at exit is undone by the
// kernel with the process.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>

namespace mqlab::env {

class FileOffloader {
 public:
  static FileOffloader& instance();

  // Takes ownership of fd and closes it soon, on the offloader's thread.
  void close_later(int fd);
  // Takes ownership of the mapping [address, address + length) and unmaps it
  // soon. The caller no longer touches those bytes. Returns a ticket for
  // wait_done: work is done in the order handed over.
  uint64_t unmap_later(void* address, size_t length);
  // Faults in the pages of [address, address + length), part of a shared
  // read-write mapping the caller unmaps only through unmap_later, as
  // writable and dirty, without changing a byte. Where the kernel cannot
  // (before Linux 5.14), nothing is done and later calls are ignored.
  // Requires: address page-aligned; the file not cut below the range until
  // this is done (a read past its end faults: PosixFile::truncate waits
  // with wait_done).
  void populate_later(void* address, size_t length);
  // Returns once everything handed over before the call is done (tests).
  void wait_idle();
  // Returns once the work whose ticket this is (and all before it) is done:
  // a file about to shrink below a mapping waits for that mapping's
  // populates, whose reads would fault past the new end (SIGBUS).
  void wait_done(uint64_t ticket);
  // Pages populated so far, process-wide (tests, benchmarks).
  uint64_t pages_populated();

 private:
  enum class Kind : uint8_t { kClose, kUnmap, kPopulate };
  struct Work {
    Kind kind = Kind::kClose;
    int fd = -1;
    void* address = nullptr;
    size_t length = 0;
  };

  FileOffloader() = default;
  uint64_t hand_over(Work work);  // the work's ticket
  void run();
  void populate(const Work& work);

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<Work> work_;        // guarded by mutex_
  bool working_ = false;         // guarded by mutex_: the thread is between pop and done
  bool started_ = false;         // guarded by mutex_
  uint64_t handed_over_ = 0;     // guarded by mutex_: the last ticket given
  uint64_t done_ = 0;            // guarded by mutex_: the last ticket done
  uint64_t pages_populated_ = 0; // guarded by mutex_
  bool populate_unsupported_ = false;  // the offloader's thread only
};

// Closes fd: inline, unless fstat says its file has no name left, when the
// offloader does it (see above).
void close_file_descriptor(int fd);

// The system's page size (sysconf), read once: populates come in whole pages.
size_t system_page_bytes();

}  // namespace mqlab::env
