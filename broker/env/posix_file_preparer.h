// PosixFilePreparer: the real Env's prepare_file (env.h): one background
// thread that allocates and pre-touches new segment files, so the broker
// core never waits for a file's first write to a thin-provisioned disk.
// RocketMQ's AllocateMappedFileService thread, with its warmMappedFile.
//
// Threading: prepare() is called on the io_context thread; the job runs on
// this object's thread, touching only the File it was given (pwrite and
// fdatasync on its fd are safe from any thread); the completion is posted
// back to the io_context. Jobs run one at a time in request order.
#pragma once

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

 private:
  using WorkGuard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
  struct Job {
    std::shared_ptr<File> file;
    uint64_t size;
    bool pretouch;
    SyncCallback done;
    WorkGuard work;  // io_context::run() must not return while a job is pending
  };

  void run();
  static Status prepare_now(File& file, uint64_t size, bool pretouch);

  boost::asio::io_context& io_;
  const std::shared_ptr<std::atomic<bool>> open_;  // false once destroyed: completions run nothing
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;  // guarded by mutex_
  bool stopping_ = false;  // guarded by mutex_
  std::thread thread_;     // started by the first prepare(), under mutex_
};

}  // namespace mqlab::env
