// CommitRealTimeService: the schedule and the retries; CommitLog::commit()
// does the write (commit_real_time_service.h).
#include "broker/store/commit_real_time_service.h"

#include "broker/common/log.h"

namespace mqlab::store {

CommitRealTimeService::CommitRealTimeService(env::Env& env, const MessageStoreConfig& config, CommitLog& log,
                                             std::function<void()> on_committed)
    : env_(env), config_(config), log_(log), on_committed_(std::move(on_committed)) {
  MQ_ASSERT(config_.is_transient_store_pool_enable());
  MQ_ASSERT(log_.transient_store_pool());
  MQ_ASSERT(on_committed_ != nullptr);
}

// No I/O: a destroyed store is a crashed one.
CommitRealTimeService::~CommitRealTimeService() { stop(); }

void CommitRealTimeService::start() {
  MQ_ASSERT(!running());
  last_thorough_ns_ = env_.clock().now_ns();
  schedule_next();
}

void CommitRealTimeService::stop() {
  if (timer_ == env::kNoTimer) return;
  env_.executor().cancel(timer_);
  timer_ = env::kNoTimer;
}

void CommitRealTimeService::schedule_next() {
  MQ_ASSERT(timer_ == env::kNoTimer);
  timer_ = env_.executor().run_after(millis(config_.commitIntervalCommitLog), lifetime_.guard([this] {
    timer_ = env::kNoTimer;
    (void)run_once();  // a failure is logged and retried on the next tick
    schedule_next();
  }));
}

Status CommitRealTimeService::run_once() {
  const Nanos now = env_.clock().now_ns();
  int64_t least_pages = config_.commitCommitLogLeastPages;
  // RocketMQ: once the thorough interval has passed since the last commit
  // (or thorough pass), commit whatever waits, however little.
  if (now >= last_thorough_ns_ + millis(config_.commitCommitLogThoroughInterval)) {
    last_thorough_ns_ = now;
    least_pages = 0;
  }
  if (log_.committed_offset() == log_.max_offset()) return Status::Ok();
  // MappedFile.isAbleToCommit: the pages the buffer spans past the
  // committed position, counted by page index as RocketMQ counts them.
  if (least_pages > 0 && log_.uncommitted_pages() < least_pages) {
    ++stats_.skipped_ticks;
    return Status::Ok();
  }
  return commit_now(now);
}

Status CommitRealTimeService::commit_now(Nanos now) {
  const PhyOffset from = log_.committed_offset();
  const Status status = log_.commit();
  if (!status.ok()) {
    ++stats_.failed_commits;
    // The bytes stay buffered (CommitLog::commit with a transient store pool).
    MQ_ASSERT(log_.committed_offset() == from);
    if (!failing_) {
      MQ_LOG(kError, "store", "commitlog commit failed, " << (log_.max_offset() - from)
                                                          << " acknowledged bytes stay buffered and are retried every "
                                                          << config_.commitIntervalCommitLog
                                                          << " ms: " << status.to_string());
    }
    failing_ = true;
    return status;
  }
  const PhyOffset to = log_.committed_offset();
  MQ_ASSERT(to == log_.max_offset());
  MQ_ASSERT(to >= from);
  if (to == from) return Status::Ok();
  if (failing_) MQ_LOG(kInfo, "store", "commitlog commit succeeded again at offset " << to.to_string());
  failing_ = false;
  ++stats_.commits;
  stats_.bytes_committed += static_cast<uint64_t>(to - from);
  last_thorough_ns_ = now;  // RocketMQ: "result = false means some data committed"
  last_commit_ns_ = now;
  on_committed_();
  return Status::Ok();
}

Status CommitRealTimeService::commit_all() {
  Status last = Status::Ok();
  for (int attempt = 0; attempt < kRetryTimesOver; ++attempt) {
    if (log_.committed_offset() == log_.max_offset()) return Status::Ok();
    last = commit_now(env_.clock().now_ns());
    if (last.ok()) return last;
  }
  MQ_ASSERT(!last.ok());
  return last;
}

}  // namespace mqlab::store
