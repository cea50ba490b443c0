// UnlinkedFileCloser: closes the descriptors of files whose names are gone on
// a thread of its own. The last close of an unlinked file is when the kernel
// frees its page cache and blocks: 30-50 ms for a 64 MiB CommitLog segment on
// this machine's ext4 (2026-12-03, strace), proportionally more for RocketMQ's
// 1 GiB default. Retention deletes segments on the broker core, so closed
// there every put in flight waited for it (store_bench's segment-roll puts
// took 15-115 ms). RocketMQ deletes from its own CleanCommitLogService thread.
//
// Real Env only (PosixFile's destructor). One process-wide instance, made on
// first use and never destroyed, with its thread detached: a file may be
// closed from any static destructor, and descriptors still queued at exit
// are closed by the kernel with the process.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>

namespace mqlab::env {

class UnlinkedFileCloser {
 public:
  static UnlinkedFileCloser& instance();

  // Takes ownership of fd and closes it soon, on the closer's thread.
  void close_later(int fd);
  // Returns once every descriptor handed over before the call is closed (tests).
  void wait_idle();

 private:
  UnlinkedFileCloser() = default;
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<int> fds_;     // guarded by mutex_
  bool closing_ = false;    // guarded by mutex_: the thread is between pop and close
  bool started_ = false;    // guarded by mutex_
};

// Closes fd: inline, unless fstat says its file has no name left, when the
// closer does it (see above).
void close_file_descriptor(int fd);

}  // namespace mqlab::env
