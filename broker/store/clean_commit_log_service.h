// CleanCommitLogService: retention (RocketMQ's CleanCommitLogService and
// CleanConsumeQueueService). Every cleanResourceInterval it deletes CommitLog
// segments older than fileReservedTime hours, oldest first, at most 10 per
// run and never the active (last) one, when one of these holds:
//   - the wall-clock hour (UTC here; RocketMQ uses local time) is listed in
//     deleteWhen ("04" or "04;16");
//   - the disk is fuller than diskMaxUsedSpaceRatio percent;
//   - an operator asked (run_once(manual = true), TRIGGER_DELETE_FILES).
// Above diskSpaceCleanForciblyRatio segments go regardless of age (unless
// cleanFileForciblyEnable=false); above
// diskSpaceWarningLevelRatio the store refuses puts (SERVICE_NOT_AVAILABLE)
// until usage drops. After the CommitLog's min offset moves, ConsumeQueue
// files and index files wholly below it are deleted too, and the removals
// are made durable at once (only then does the space count as free).
//
// A segment's age is the store timestamp of its newest record (the first
// record of the next segment bounds it), not a file mtime, so the rule is the
// same in the simulator and for real.
#pragma once

#include <cstdint>

#include "broker/common/lifetime.h"
#include "broker/env/env.h"

namespace mqlab::store {

class MessageStore;

class CleanCommitLogService {
 public:
  explicit CleanCommitLogService(MessageStore& store);
  ~CleanCommitLogService() { cancel(); }

  void schedule();
  void cancel();
  // One pass; returns the number of CommitLog segments deleted.
  int run_once(bool manual);

  // Whether deleteWhen lists the hour of wall_ms (UTC).
  static bool is_delete_hour(const std::string& delete_when, int64_t wall_ms);

 private:
  double disk_used_ratio() const;
  int64_t segment_age_ms(size_t index) const;
  void clean_consume_queues();
  void make_removals_durable();

  MessageStore& store_;
  env::TimerId timer_ = env::kNoTimer;
  int manual_runs_left_ = 0;
  // Whether the last pass found the disk above diskSpaceCleanForciblyRatio:
  // the warning is logged when the disk crosses that level, not every pass.
  bool above_forced_clean_level_ = false;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::store
