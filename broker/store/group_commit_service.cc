#include "broker/store/group_commit_service.h"

#include <algorithm>

#include "broker/common/log.h"

namespace mqlab::store {

GroupCommitService::GroupCommitService(env::Env& env, CommitLog& log, Nanos timeout,
                                       std::function<void(int64_t)> on_flushed,
                                       std::function<void(const Status&)> on_error)
    : env_(env), log_(log), timeout_(timeout), on_flushed_(std::move(on_flushed)), on_error_(std::move(on_error)) {
  MQ_ASSERT(timeout_ > 0);
}

GroupCommitService::~GroupCommitService() {
  if (watchdog_ != env::kNoTimer) env_.executor().cancel(watchdog_);
}

void GroupCommitService::submit(PhyOffset next_offset, Done done) {
  MQ_ASSERT(requests_.empty() || requests_.back().next_offset <= next_offset);
  MQ_ASSERT(next_offset <= log_.max_offset());
  if (log_.flushed_offset() >= next_offset) {  // an earlier flush already covers it
    env_.executor().post([done = std::move(done)] { done(FlushOutcome::kFlushed); });
    return;
  }
  requests_.push_back(Request{next_offset, env_.clock().now_ns() + timeout_, std::move(done)});
  arm_watchdog();
  // Start the flush from a later task, so every put appended in this task
  // (a burst of replies issuing new puts) joins the same group.
  if (!flush_in_flight_ && !flush_scheduled_) {
    flush_scheduled_ = true;
    env_.executor().post(lifetime_.guard([this] {
      flush_scheduled_ = false;
      maybe_start_flush();
    }));
  }
}

void GroupCommitService::maybe_start_flush() {
  if (flush_in_flight_ || requests_.empty()) return;
  flush_in_flight_ = true;
  const int64_t timestamp_ms = log_.last_append_timestamp_ms();
  log_.flush(lifetime_.guard([this, timestamp_ms](Status status) { on_flush_done(std::move(status), timestamp_ms); }));
}

void GroupCommitService::on_flush_done(Status status, int64_t timestamp_ms) {
  MQ_ASSERT(flush_in_flight_);
  flush_in_flight_ = false;
  ++flushes_;
  if (!status.ok()) {
    MQ_LOG(kError, "flush", "group commit fsync failed, acknowledging nothing: " << status.to_string());
    on_error_(status);
    fail_all();
    return;
  }
  on_flushed_(timestamp_ms);
  complete_flushed();
  maybe_start_flush();  // requests that arrived meanwhile form the next group
}

void GroupCommitService::complete_flushed() {
  const PhyOffset flushed = log_.flushed_offset();
  while (!requests_.empty() && requests_.front().next_offset <= flushed) {
    Done done = std::move(requests_.front().done);
    requests_.pop_front();
    done(FlushOutcome::kFlushed);
  }
}

void GroupCommitService::fail_all() {
  std::deque<Request> failed;
  failed.swap(requests_);
  for (Request& request : failed) request.done(FlushOutcome::kError);
}

void GroupCommitService::arm_watchdog() {
  if (requests_.empty()) return;
  const Nanos deadline = requests_.front().deadline;
  if (watchdog_ != env::kNoTimer && watchdog_deadline_ <= deadline) return;
  if (watchdog_ != env::kNoTimer) env_.executor().cancel(watchdog_);
  watchdog_deadline_ = deadline;
  const Nanos delay = std::max<Nanos>(0, deadline - env_.clock().now_ns());
  watchdog_ = env_.executor().run_after(delay, lifetime_.guard([this] { on_watchdog(); }));
}

void GroupCommitService::on_watchdog() {
  watchdog_ = env::kNoTimer;
  const Nanos now = env_.clock().now_ns();
  while (!requests_.empty() && requests_.front().deadline <= now) {
    Done done = std::move(requests_.front().done);
    requests_.pop_front();
    done(FlushOutcome::kTimeout);
  }
  arm_watchdog();
}

}  // namespace mqlab::store
