// PosixFilePreparer: the real Env's prepare_file (env.h): one background
// thread that allocates and pre-touches new segment files, so the broker
// core never waits for a file's first write to a thin-provisioned disk.
// RocketMQ's AllocateMappedFileService thread, with its warmMappedFile.
//
// Threading: prepare() is called on the io_context thread; the job runs on
// this object's thread, touching only the File it was given (pwrite and
// fdatasync on its fd are safe from any thread); the completion is posted
// back to the io_context. Jobs run one at a time in request order.
// stop() (io_context thread) sets a job's flag, which the job reads between
// 64 KiB writes and before its fdatasync, and waits until the job says it
// writes no more: at most one write (or the allocate in progress). A
// stopped segment costs the disk nothing more, and the jobs behind it start.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "broker/env/asio.h"
#include "broker/env/env.h"

namespace mqlab::env {

class PosixFilePreparer {
 public:
  explicit PosixFilePreparer(boost::asio::io_context& io);
  // Joins the thread after the job in progress; queued jobs and completions
  // not yet run are dropped (their files stay as they are: a segment that
  // was being prepared is only a temporary file its owner discards).
  ~PosixFilePreparer();

  PosixFilePreparer(const PosixFilePreparer&) = delete;
  PosixFilePreparer& operator=(const PosixFilePreparer&) = delete;

  void prepare(std::shared_ptr<File> file, uint64_t size, bool pretouch, SyncCallback done);
  // Env::stop_preparing_file: stops the preparations of file not yet
  // completed (queued: skipped; running: at its next write, waited for) and
  // returns whether the running one had allocated the file. Their done
  // reports Aborted.
  bool stop(const std::shared_ptr<File>& file);

 private:
  using WorkGuard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
  struct Job {
    std::shared_ptr<File> file;
    uint64_t size;
    bool pretouch;
    SyncCallback done;
    WorkGuard work;  // io_context::run() must not return while a job is pending
    // What stop() and the job tell each other.
    struct Progress {
      std::atomic<bool> stop_requested{false};  // set by stop(), read between writes
      bool allocated = false;     // guarded by mutex_: allocate() succeeded
      bool writes_done = false;   // guarded by mutex_: the job writes no more
    };
    std::shared_ptr<Progress> progress = std::make_shared<Progress>();
  };

  void run();
  Status prepare_now(const Job& job);
  // Records, under mutex_, a step of job's progress (and wakes stop()).
  void mark(const Job& job, bool Job::Progress::*step);

  boost::asio::io_context& io_;
  const std::shared_ptr<std::atomic<bool>> open_;  // false once destroyed: completions run nothing
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;  // guarded by mutex_
  std::condition_variable progressed_;  // a job marked a step (stop() waits on it)
  // The running job's file and progress (empty between jobs), guarded by mutex_.
  std::shared_ptr<File> running_file_;
  std::shared_ptr<Job::Progress> running_progress_;
  bool stopping_ = false;  // guarded by mutex_
  std::thread thread_;     // started by the first prepare(), under mutex_
};

}  // namespace mqlab::env
