// PosixFilePreparer: the real Env's prepare_file (env.h): background
// threads that allocate and pre-touch new segment files, so the broker
// core never waits for a file's first write to a thin-provisioned disk.
// RocketMQ's AllocateMappedFileService thread, with its warmMappedFile.
//
// Threading: prepare() is called on the io_context thread. A job runs in
// two stages, each on its own thread, touching only the File it was given
// (pwrite and fdatasync on its fd are safe from any thread): the writer
// allocates the file and writes its zeros, then hands it to the syncer,
// which fdatasyncs it and posts the completion back to the io_context.
// Each stage takes jobs in request order, so completions come in request
// order. Two threads because a 64 MiB segment's fdatasync takes 100-200 ms
// on this disk: on one thread the next segment's job waited behind it, and
// a broker writing faster than that found its next segment not even
// allocated at the roll, and made one on the put path.
// stop() (io_context thread) sets a job's flag, which the writer reads
// between 64 KiB writes and the syncer before the fdatasync, and waits until
// the job says it writes no more: at most one write (or the allocate in
// progress). A stopped segment costs the disk nothing more, and the jobs
// behind it start.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "broker/env/asio.h"
#include "broker/env/env.h"

namespace mqlab::env {

class PosixFilePreparer {
 public:
  // The syncer's step, a parameter so that a test can hold it: makes a
  // pre-touched file's zeros durable.
  using SyncData = std::function<Status(File&)>;
  // fdatasync of a PosixFile on the calling thread (any other File: ok,
  // nothing to do: its zeros are already what it holds).
  static Status fdatasync_file(File& file);

  explicit PosixFilePreparer(boost::asio::io_context& io, SyncData sync_data = fdatasync_file);
  // Joins the threads after the work in progress; queued jobs and
  // completions not yet run are dropped (their files stay as they are: a
  // segment that was being prepared is only a temporary file its owner
  // discards).
  ~PosixFilePreparer();

  PosixFilePreparer(const PosixFilePreparer&) = delete;
  PosixFilePreparer& operator=(const PosixFilePreparer&) = delete;

  void prepare(std::shared_ptr<File> file, uint64_t size, bool pretouch, SyncCallback done);
  // Env::stop_preparing_file: stops the preparations of file not yet
  // completed (queued: skipped; being written: at its next write, waited
  // for; written: its fdatasync skipped unless begun) and returns whether
  // the one started had allocated the file. Their done reports Aborted
  // (or, when the fdatasync had begun, how it ended).
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

  // A job whose writes are done, waiting for (or in) its fdatasync.
  struct Written {
    Job job;
    Status status;  // of the writer's stage
  };

  void run_writer();
  void run_syncer();
  Status write_now(const Job& job);
  // fdatasync, unless stopped first; the job's final status.
  Status sync_now(const Written& written);
  // Records, under mutex_, a step of job's progress (and wakes stop()).
  void mark(const Job& job, bool Job::Progress::*step);

  boost::asio::io_context& io_;
  const SyncData sync_data_;
  const std::shared_ptr<std::atomic<bool>> open_;  // false once destroyed: completions run nothing
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;  // guarded by mutex_: not started
  std::condition_variable progressed_;  // a job marked a step (stop() waits on it)
  // The writer's job's file and progress (empty between jobs), guarded by mutex_.
  std::shared_ptr<File> running_file_;
  std::shared_ptr<Job::Progress> running_progress_;
  // Written, in request order; the front is the one the syncer works on.
  std::deque<Written> written_;  // guarded by mutex_
  std::condition_variable written_ready_;
  bool stopping_ = false;  // guarded by mutex_
  // Both started by the first prepare(), under mutex_.
  std::thread writer_;
  std::thread syncer_;
};

}  // namespace mqlab::env
