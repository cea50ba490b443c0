// CommitRealTimeService: with transientStorePoolEnable, when the CommitLog's
// write buffer reaches its file (RocketMQ's CommitLog.CommitRealTimeService).
// Every commitIntervalCommitLog ms it commits the buffer when at least
// commitCommitLogLeastPages 4 KiB pages wait, or whatever waits once
// commitCommitLogThoroughInterval ms passed since the last commit; after a
// commit that wrote something it calls on_committed (the store wakes the
// dispatcher, the HA stream and the flush, as RocketMQ's wakes its flush
// service). Runs on the Env's timers: no thread, the same in mqsim.
//
// A failed commit (disk full, failed device) keeps every byte buffered: the
// puts were acknowledged, so nothing may be dropped while the process
// lives; the next tick retries. The first failure and the recovery are
// logged, not every retry. commit_all() is shutdown's last commit.
//
// Invariants: at most one timer pending; the CommitLog's committed offset
// only grows under it.
#pragma once

#include <cstdint>
#include <functional>

#include "broker/common/lifetime.h"
#include "broker/common/status.h"
#include "broker/common/types.h"
#include "broker/env/env.h"
#include "broker/store/commit_log.h"
#include "broker/store/message_store_config.h"

namespace mqlab::store {

struct CommitRealTimeStats {
  uint64_t commits = 0;          // commits that wrote bytes
  uint64_t failed_commits = 0;   // refused by the device; the bytes stayed buffered
  uint64_t skipped_ticks = 0;    // fewer than commitCommitLogLeastPages waited
  uint64_t bytes_committed = 0;
};

class CommitRealTimeService {
 public:
  // Requires: log buffers acknowledged puts (config.is_transient_store_pool_enable()).
  CommitRealTimeService(env::Env& env, const MessageStoreConfig& config, CommitLog& log,
                        std::function<void()> on_committed);
  ~CommitRealTimeService();
  CommitRealTimeService(const CommitRealTimeService&) = delete;
  CommitRealTimeService& operator=(const CommitRealTimeService&) = delete;

  // Schedules the ticks; stop() cancels them (no I/O).
  void start();
  void stop();
  bool running() const { return timer_ != env::kNoTimer; }

  // One tick of the schedule (also for tests): commits when the rules above
  // say so. Returns the commit's error, if it ran and failed.
  Status run_once();
  // Commits everything buffered, trying up to kRetryTimesOver times
  // (RocketMQ's RETRY_TIMES_OVER) before it gives up with the last error.
  Status commit_all();

  const CommitRealTimeStats& stats() const { return stats_; }
  // The last commit that wrote bytes (Env clock), 0 before the first.
  Nanos last_commit_ns() const { return last_commit_ns_; }

  static constexpr int kRetryTimesOver = 10;

 private:
  void schedule_next();
  // Commits what is buffered; on_committed after a commit that wrote bytes.
  Status commit_now(Nanos now);

  env::Env& env_;
  const MessageStoreConfig& config_;
  CommitLog& log_;
  std::function<void()> on_committed_;
  env::TimerId timer_ = env::kNoTimer;
  // RocketMQ's lastCommitTimestamp: set by a thorough pass and by every
  // commit that wrote bytes.
  Nanos last_thorough_ns_ = 0;
  Nanos last_commit_ns_ = 0;
  bool failing_ = false;  // a commit failed and none has succeeded since
  CommitRealTimeStats stats_;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::store
