#include "broker/store/clean_commit_log_service.h"

#include <algorithm>
#include <sstream>

#include "broker/common/log.h"
#include "broker/store/message_store.h"

namespace mqlab::store {
namespace {
constexpr int kDeleteFilesBatchMax = 10;     // DELETE_FILES_BATCH_MAX
constexpr int kManualDeleteRuns = 20;        // a TRIGGER_DELETE_FILES lasts 20 runs
constexpr int64_t kMillisPerHour = 3'600'000;

// Which rule deleted segments, in broker.conf terms: kept in the store's
// stats so an audit (mqsim's checker) tells messages retention expired
// from lost ones, and says why they went.
std::string deletion_rule(const MessageStoreConfig& config, bool by_time, bool by_space, bool forcibly, double used) {
  std::ostringstream rule;
  const int used_percent = static_cast<int>(used * 100);
  if (forcibly) {
    rule << "disk " << used_percent << "% used > diskSpaceCleanForciblyRatio " << config.diskSpaceCleanForciblyRatio
         << ", regardless of fileReservedTime";
    return rule.str();
  }
  rule << "older than fileReservedTime " << config.fileReservedTime << " h";
  if (by_time) {
    rule << ", at deleteWhen " << config.deleteWhen;
  } else if (by_space) {
    rule << ", disk " << used_percent << "% used > diskMaxUsedSpaceRatio " << config.diskMaxUsedSpaceRatio << "%";
  } else {
    rule << ", by hand (TRIGGER_DELETE_FILES)";
  }
  return rule.str();
}
}  // namespace

CleanCommitLogService::CleanCommitLogService(MessageStore& store) : store_(store) {}

void CleanCommitLogService::schedule() {
  const Nanos interval = millis(store_.config_.cleanResourceInterval);
  timer_ = store_.env_.executor().run_after(interval, lifetime_.guard([this] {
    timer_ = env::kNoTimer;
    run_once(/*manual=*/false);
    if (store_.running_) schedule();
  }));
}

void CleanCommitLogService::cancel() {
  if (timer_ != env::kNoTimer) store_.env_.executor().cancel(timer_);
  timer_ = env::kNoTimer;
}

bool CleanCommitLogService::is_delete_hour(const std::string& delete_when, int64_t wall_ms) {
  const int64_t hour = (wall_ms / kMillisPerHour) % 24;
  std::stringstream hours(delete_when);
  std::string item;
  while (std::getline(hours, item, ';')) {
    if (item.empty()) continue;
    try {
      if (std::stoi(item) == hour) return true;
    } catch (const std::exception&) {
      // a malformed hour never matches; the config loader reports it
    }
  }
  return false;
}

double CleanCommitLogService::disk_used_ratio() const {
  Result<env::SpaceInfo> space = store_.env_.files().space(store_.config_.commit_log_dir());
  if (!space.ok() || space->capacity_bytes == 0) return 0.0;
  return 1.0 - static_cast<double>(space->available_bytes) / static_cast<double>(space->capacity_bytes);
}

int64_t CleanCommitLogService::segment_age_ms(size_t index) const {
  const auto& files = store_.commit_log_.file_queue().files();
  MQ_ASSERT(index + 1 < files.size());
  int64_t newest_ms = files[index]->max_store_timestamp_ms();
  if (newest_ms == 0) {  // loaded from disk: the next segment's first record bounds it
    const PhyOffset next(files[index + 1]->file_from_offset());
    CommitLogScanner scanner(store_.commit_log_, next, next + files[index + 1]->file_size(), false);
    if (auto first = scanner.next()) newest_ms = first->record.message.store_timestamp_ms;
  }
  return store_.env_.clock().wall_ms() - newest_ms;
}

int CleanCommitLogService::run_once(bool manual) {
  if (manual) manual_runs_left_ = kManualDeleteRuns;
  const MessageStoreConfig& config = store_.config_;
  const double used = disk_used_ratio();
  // Above the warning level the store stops taking puts until usage drops.
  store_.disk_full_ = used > config.diskSpaceWarningLevelRatio;
  store_.writable_ = !store_.disk_full_ && !store_.flush_failed_;

  const double max_used = std::clamp(config.diskMaxUsedSpaceRatio, 10, 95) / 100.0;
  const bool by_space = used > max_used;
  // RocketMQ's cleanAtOnce: the level is reached and forced deletion is on.
  const bool forcibly = used > config.diskSpaceCleanForciblyRatio && config.cleanFileForciblyEnable;
  // The ratio is the whole partition's (1 - available/capacity), so a disk
  // filled by something else makes the broker delete unconsumed segments:
  // say so once, loudly, with the figures an operator needs.
  if (forcibly && !above_forced_clean_level_) {
    MQ_LOG(kWarn, "clean",
           "disk of " << config.commit_log_dir() << " is " << static_cast<int>(used * 100)
                      << "% used, above diskSpaceCleanForciblyRatio " << config.diskSpaceCleanForciblyRatio
                      << ": CommitLog segments are deleted regardless of age (and of consumers)");
  }
  above_forced_clean_level_ = forcibly;
  const bool by_time = is_delete_hour(config.deleteWhen, store_.env_.clock().wall_ms());
  const bool by_hand = manual_runs_left_ > 0;
  if (by_hand) --manual_runs_left_;
  if (!by_time && !by_space && !by_hand) return 0;

  const int64_t reserved_ms = int64_t{config.fileReservedTime} * kMillisPerHour;
  int deleted = 0;
  MappedFileQueue& queue = store_.commit_log_.file_queue();
  bool dropped_kept = false;
  if ((by_space || forcibly) && queue.holds_recycled()) {
    // Space is what retention is after: a kept segment's blocks go first.
    const std::string kept = queue.recycled_path();
    if (Status status = queue.drop_recycled(); !status.ok()) {
      MQ_LOG(kWarn, "clean", "could not delete the kept segment " << kept << ": " << status.to_string());
    } else {
      MQ_LOG(kInfo, "clean", "deleted the expired segment kept for reuse " << kept << " (disk space)");
      dropped_kept = true;
    }
  }
  while (deleted < kDeleteFilesBatchMax && queue.files().size() > 1) {
    if (!forcibly && segment_age_ms(0) < reserved_ms) break;
    // Nor records the dispatcher has not read yet (a SYNC_FLUSH master
    // dispatches only flushed ones): their ConsumeQueue entries would never
    // be written, and the queue would meet a gap in its offsets. Only a
    // disk above the forced-clean level deletes them anyway.
    const std::shared_ptr<MappedFile>& front = queue.files().front();
    if (!forcibly && PhyOffset(front->file_from_offset() + front->file_size()) > store_.reput_from_) break;
    const std::string path = front->path();
    // Kept for reuse only when space is not what retention is after: a
    // recycled segment's blocks stay allocated.
    Result<bool> kept = queue.delete_first_file(/*recycle=*/!by_space && !forcibly);
    if (!kept.ok()) {
      MQ_LOG(kWarn, "clean", "could not delete " << path << ": " << kept.status().to_string());
      break;
    }
    MQ_LOG(kInfo, "clean", (*kept ? "kept expired segment " : "deleted expired segment ")
                               << path << (*kept ? " for reuse as a later segment" : "")
                               << (forcibly ? " (disk above the forced-clean level)" : ""));
    ++deleted;
  }
  store_.stats_.segments_deleted += static_cast<uint64_t>(deleted);
  if (deleted > 0) store_.stats_.retention_rule = deletion_rule(config, by_time, by_space, forcibly, used);
  if (deleted > 0) clean_consume_queues();
  if (deleted > 0 || dropped_kept) make_removals_durable();
  return deleted;
}

// A removed file's blocks may count as used until the removal is durable
// (ext4 returns them at its journal commit; the SimDisk, the strictest
// reading of the Env contract, only at sync_dir). Nothing else syncs these
// directories soon: on a full disk puts are refused, so no flush follows,
// and the store would stay refusing puts for want of space it already freed.
void CleanCommitLogService::make_removals_durable() {
  store_.commit_log_.flush(lifetime_.guard([this](Status status) {
    // A failed CommitLog sync may have lost appended data: same rule as any flush.
    if (!status.ok()) store_.on_flush_error(status);
  }));
  store_.flush_all_consume_queues(0, lifetime_.guard([](Status status) {
    if (!status.ok()) MQ_LOG(kWarn, "clean", "syncing consume queues after retention: " << status.to_string());
  }));
  if (store_.config_.messageIndexEnable) {
    store_.index_->flush(lifetime_.guard([](Status status) {
      if (!status.ok()) MQ_LOG(kWarn, "clean", "syncing the index after retention: " << status.to_string());
    }));
  }
}

void CleanCommitLogService::clean_consume_queues() {
  const PhyOffset min = store_.commit_log_.min_offset();
  for (auto& [topic, by_id] : store_.consume_queues_) {
    for (auto& [queue_id, queue] : by_id) {
      Result<int> deleted = queue->delete_expired_files(min);
      if (!deleted.ok()) MQ_LOG(kWarn, "clean", "consume queue clean failed: " << deleted.status().to_string());
    }
  }
  if (store_.config_.messageIndexEnable) {
    if (Status status = store_.index_->delete_expired(min); !status.ok()) {
      MQ_LOG(kWarn, "clean", "index clean failed: " << status.to_string());
    }
  }
}

}  // namespace mqlab::store
