// GroupCommitService: SYNC_FLUSH's group commit (RocketMQ's
// GroupCommitService + FlushDiskWatcher). Each put parks a request "tell me
// when the CommitLog is durable up to next_offset"; one flush covers every
// request queued before it started, and while it runs new requests gather
// for the next one. A request whose syncFlushTimeout passes first completes
// with kTimeout (FLUSH_DISK_TIMEOUT: stored, not confirmed durable). A failed
// fsync never acknowledges anything (unlike RocketMQ 4.x, which swallowed the
// error: apache/rocketmq #2706): requests complete with kError.
//
// Invariants: requests are ordered by next_offset and by deadline (appends
// are sequential and the timeout is fixed); at most one flush is in flight.
#pragma once

#include <deque>
#include <functional>

#include "broker/common/inline_function.h"
#include "broker/common/lifetime.h"
#include "broker/common/types.h"
#include "broker/env/env.h"
#include "broker/store/commit_log.h"

namespace mqlab::store {

enum class FlushOutcome { kFlushed, kTimeout, kError };

class GroupCommitService {
 public:
  using Done = InlineFunction<void(FlushOutcome)>;  // move-only: it holds a put's PutCallback
  // on_flushed runs after every successful flush (checkpoint bookkeeping);
  // on_error after a failed one (the store stops accepting writes).
  GroupCommitService(env::Env& env, CommitLog& log, Nanos timeout, std::function<void(int64_t)> on_flushed,
                     std::function<void(const Status&)> on_error);
  ~GroupCommitService();

  void submit(PhyOffset next_offset, Done done);
  // Completes the requests an outside flush (shutdown's) already covered.
  void complete_flushed_now() { complete_flushed(); }
  // Completes every waiting request with kError (store shutting down).
  void fail_all();
  size_t waiting() const { return requests_.size(); }
  uint64_t flushes() const { return flushes_; }

 private:
  struct Request {
    PhyOffset next_offset;
    Nanos deadline;
    Done done;
  };
  void maybe_start_flush();
  void on_flush_done(Status status, int64_t timestamp_ms);
  void complete_flushed();
  void arm_watchdog();
  void on_watchdog();

  env::Env& env_;
  CommitLog& log_;
  Nanos timeout_;
  std::function<void(int64_t)> on_flushed_;
  std::function<void(const Status&)> on_error_;
  std::deque<Request> requests_;
  bool flush_in_flight_ = false;
  bool flush_scheduled_ = false;
  env::TimerId watchdog_ = env::kNoTimer;
  Nanos watchdog_deadline_ = 0;
  uint64_t flushes_ = 0;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::store
