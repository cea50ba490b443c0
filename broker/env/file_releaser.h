// FileReleaser: releases, on a thread of its own, what a file held that is
// slow to give back:
// - the descriptors of files whose names are gone. The last close of an
//   unlinked file is when the kernel frees its page cache and blocks: 30-50
//   ms for a 64 MiB CommitLog segment on this machine's ext4 (2026-12-03,
//   strace), proportionally more for RocketMQ's 1 GiB default. Retention
//   deletes segments on the broker core, so closed there every put in flight
//   waited for it (store_bench's segment-roll puts took 15-115 ms). RocketMQ
//   deletes from its own CleanCommitLogService thread.
// - the mappings of segments no longer written (File::map_for_appends):
//   munmap of a 64 MiB mapping whose pages were all written takes about 1 ms
//   (2026-12-03), at every segment roll.
//
// Real Env only (PosixFile). One process-wide instance, made on first use
// and never destroyed, with its thread detached: a file may be closed from
// any static destructor, and work still queued at exit is undone by the
// kernel with the process. Work runs in the order handed over.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>

namespace mqlab::env {

class FileReleaser {
 public:
  static FileReleaser& instance();

  // Takes ownership of fd and closes it soon, on the releaser's thread.
  void close_later(int fd);
  // Takes ownership of the mapping [address, address + length) and unmaps it
  // soon. The caller no longer touches those bytes.
  void unmap_later(void* address, size_t length);
  // Returns once everything handed over before the call is done (tests).
  void wait_idle();

 private:
  // A descriptor to close (address null) or a mapping to unmap.
  struct Work {
    int fd = -1;
    void* address = nullptr;
    size_t length = 0;
  };

  FileReleaser() = default;
  void hand_over(Work work);
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<Work> work_;   // guarded by mutex_
  bool working_ = false;    // guarded by mutex_: the thread is between pop and done
  bool started_ = false;    // guarded by mutex_
};

// Closes fd: inline, unless fstat says its file has no name left, when the
// releaser does it (see above).
void close_file_descriptor(int fd);

}  // namespace mqlab::env
