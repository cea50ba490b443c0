// MessageStore start-up, recovery and clean shutdown (RocketMQ's
// DefaultMessageStore.load / recover / shutdown).
//
// Recovery policy:
//   1. ConsumeQueues recover first: each keeps its entries up to the last
//      well-formed one.
//   2. The CommitLog is verified record by record (magic, sizes, CRC when
//      checkCRCOnRecover, PHYSICALOFFSET) from a safe point: the 3rd-last
//      segment after a clean shutdown; after a crash (abort file present) the
//      newest segment whose first message is older than the checkpoint's
//      min(physic, logics) - 3 s, else the first segment.
//   3. The first record that fails verification ends the log. Everything at
//      and past it is truncated, and the reason, file and position are logged
//      at ERROR and kept in the RecoveryReport: a torn tail after a power
//      loss is expected and handled; corruption in older data is reported the
//      same way, loudly, never skipped over silently (records past a corrupt
//      one cannot be trusted to be aligned).
//   4. ConsumeQueue entries and index files pointing at or past the recovered
//      end are dropped; then every record from the safe point on is
//      re-dispatched (duplicates are skipped), so ConsumeQueues and the index
//      agree with the CommitLog exactly before the first put.
//   5. The checkpoint is a hint, not a fact. When it claims a CommitLog flush
//      newer than every record the scan verified (the data it describes is
//      gone, or the clock jumped), abnormal recovery ignores it and verifies
//      and re-dispatches from the first segment.
//   6. ConsumeQueues lost while the broker was stopped are rebuilt from the
//      whole CommitLog, not only from the safe point: when no ConsumeQueue
//      entry loaded at all, or when the re-dispatch had to create a queue whose
//      first record is not its queue offset 0 (its files are gone), the lost
//      queues are dropped and everything is re-dispatched from the oldest
//      record (duplicates skipped). A lost queue none of whose records lies
//      past the safe point would leave no such trace, nor would a queue that
//      lost only some of its files, so after the re-dispatch the
//      ConsumeQueues are audited against the whole CommitLog
//      (consume_queue_coverage.h): every consumable record must have an
//      entry, and a record without one names a queue to rebuild.
//
// Before any of this, start-up checks that the store directories are
// writable and takes {storePathRootDir}/lock, so a second broker pointed at
// the same store is refused with the directory and the holder named.
#include <algorithm>
#include <set>

#include "broker/common/log.h"
#include "broker/env/path.h"
#include "broker/store/clean_commit_log_service.h"
#include "broker/store/consume_queue_coverage.h"
#include "broker/store/message_store.h"
#include "broker/store/schedule_message_service.h"

namespace mqlab::store {

void MessageStore::start(std::function<void(Status)> done) {
  MQ_ASSERT(!running_);
  Status status = load_and_recover();
  if (!status.ok()) {
    MQ_LOG(kError, "store", "start failed: " << status.to_string());
    env_.executor().post([done = std::move(done), status] { done(status); });
    return;
  }
  finish_start(std::move(done));
}

Status MessageStore::load_and_recover() {
  MQ_RETURN_IF_ERROR(config_.validate());
  MQ_RETURN_IF_ERROR(env_.files().mkdirs(config_.storePathRootDir).with_context("creating the store directory"));
  MQ_RETURN_IF_ERROR(check_directories_writable());
  MQ_RETURN_IF_ERROR(lock_store_directory());
  // Before the re-dispatch: SCHEDULE_TOPIC_XXXX entries need the levels.
  MQ_RETURN_IF_ERROR(schedule_->load());
  const bool last_exit_ok = !env_.files().exists(config_.abort_file_path());
  MQ_RETURN_IF_ERROR(checkpoint_.load().with_context("loading the checkpoint"));
  MQ_RETURN_IF_ERROR(commit_log_.load().with_context("loading the commitlog"));
  MQ_RETURN_IF_ERROR(load_consume_queues().with_context("loading consume queues"));
  // Queues that came back with entries; an empty one (its files never made
  // durable, or deleted) needs rebuilding like a missing one.
  std::vector<std::pair<std::string, int32_t>> loaded_queues;
  for (const auto& [topic, queue_id] : queues()) {
    if (find_consume_queue(topic, queue_id)->max_offset() > QueueOffset(0)) loaded_queues.emplace_back(topic, queue_id);
  }
  if (config_.messageIndexEnable) {
    MQ_RETURN_IF_ERROR(index_->load(last_exit_ok, checkpoint_.index_msg_timestamp()).with_context("loading the index"));
  }
  MQ_RETURN_IF_ERROR(recover_commit_log(last_exit_ok));
  if (loaded_queues.empty() && reput_from_ > commit_log_.min_offset()) {
    MQ_LOG(kWarn, "recovery", "no consume queue entry on disk: rebuilding every queue from commitlog offset "
                                  << commit_log_.min_offset().to_string());
    reput_from_ = commit_log_.min_offset();
  }
  // Re-dispatch from the safe point so ConsumeQueues and index are complete.
  const PhyOffset dispatched_from = reput_from_;
  MQ_RETURN_IF_ERROR(redispatch_to_end());
  MQ_RETURN_IF_ERROR(rebuild_lost_consume_queues(loaded_queues, dispatched_from));
  commit_log_.clear_topic_queue_table();
  for (auto& [topic, by_id] : consume_queues_) {
    for (auto& [queue_id, queue] : by_id) {
      queue->correct_min_offset(commit_log_.min_offset());
      commit_log_.set_topic_queue_offset(topic, queue_id, queue->max_offset());
    }
  }
  return Status::Ok();
}

Status MessageStore::redispatch_to_end() {
  while (reput_from_ < commit_log_.max_offset()) {
    const PhyOffset before = reput_from_;
    const Status status = reput();
    if (reput_from_ == before) {
      const std::string where = "dispatch at start-up stopped at commitlog offset " + reput_from_.to_string();
      return status.ok() ? Status::Corruption(where) : status.with_context(where);
    }
  }
  MQ_ASSERT(reput_from_ == commit_log_.max_offset());
  return Status::Ok();
}

Status MessageStore::rebuild_lost_consume_queues(const std::vector<std::pair<std::string, int32_t>>& loaded,
                                                 PhyOffset dispatched_from) {
  // A queue the re-dispatch created, starting past queue offset 0: its files
  // were lost, and its older records lie before the safe point.
  std::set<std::pair<std::string, int32_t>> lost;
  if (commit_log_.min_offset() < dispatched_from) {
    for (const auto& [topic, queue_id] : queues()) {
      if (std::binary_search(loaded.begin(), loaded.end(), std::pair(topic, queue_id))) continue;
      if (find_consume_queue(topic, queue_id)->min_offset() > QueueOffset(0)) lost.emplace(topic, queue_id);
    }
  }
  // A queue with no record inside the window leaves no such trace, and a
  // queue that lost only some files is not re-created at all (the
  // re-dispatch skips records below its last entry): the ConsumeQueues must
  // index every record of the log, and the records they miss name the
  // queues that lost them.
  MQ_ASSIGN_OR_RETURN(const ConsumeQueueCoverage coverage,
                      audit_consume_queue_coverage(*this, commit_log_.min_offset(), commit_log_.max_offset()));
  if (!coverage.stopped_at.empty()) {
    MQ_LOG(kWarn, "recovery", "consume queue audit stopped: " << coverage.stopped_at);
  }
  if (coverage.records_unindexed > 0) {
    MQ_LOG(kWarn, "recovery", coverage.records_unindexed << " commitlog records are in no consume queue ("
                                  << coverage.incomplete_queues.size() << " queues lack records)");
  }
  lost.insert(coverage.incomplete_queues.begin(), coverage.incomplete_queues.end());
  if (lost.empty()) return Status::Ok();
  for (const auto& [topic, queue_id] : lost) {  // std::set: in name order
    ConsumeQueue* queue = find_consume_queue(topic, queue_id);
    MQ_LOG(kWarn, "recovery", "consume queue " << topic << "-" << queue_id << " was lost or lacks records ("
                                               << (queue ? "queue offsets [" + queue->min_offset().to_string() + ", " +
                                                               queue->max_offset().to_string() + ") at start-up"
                                                         : std::string("no files"))
                                               << "): rebuilding it from commitlog offset "
                                               << commit_log_.min_offset().to_string());
    if (queue == nullptr) continue;
    MQ_RETURN_IF_ERROR(queue->destroy());
    consume_queues_[topic].erase(queue_id);
    if (consume_queues_[topic].empty()) {
      forget_consume_queue_topic();
      consume_queues_.erase(topic);
    }
  }
  // Every other queue already holds the records before the safe point, so
  // their re-dispatch is skipped as duplicates; so is the index's.
  reput_from_ = commit_log_.min_offset();
  MQ_RETURN_IF_ERROR(redispatch_to_end());
  for (const auto& [topic, queue_id] : lost) MQ_ASSERT(find_consume_queue(topic, queue_id) != nullptr);
  return Status::Ok();
}

Status MessageStore::check_directories_writable() {
  // A probe file in each directory the store creates files in: a read-only
  // mount or a missing permission fails here, naming the directory, before
  // recovery has changed anything.
  const std::vector<std::string> dirs = {config_.storePathRootDir, config_.commit_log_dir(),
                                         config_.consume_queue_dir(), config_.index_dir()};
  for (const std::string& dir : dirs) {
    if (!env_.files().is_directory(dir)) continue;  // created later, inside a directory checked here
    const std::string probe = env::join_path(dir, ".write_probe");
    Result<std::shared_ptr<env::File>> created =
        env_.files().open(probe, env::OpenOptions{.create = true, .truncate = true});
    Status status = created.status();
    if (status.ok()) status = env_.files().remove(probe);
    if (!status.ok()) return Status::IoError("store directory " + dir + " is not writable: " + status.to_string());
  }
  return Status::Ok();
}

Status MessageStore::lock_store_directory() {
  if (store_lock_) return Status::Ok();  // a start() retried after a failure
  const std::string path = env::join_path(config_.storePathRootDir, "lock");
  Result<std::unique_ptr<env::FileLock>> locked = env_.files().lock(path);
  if (!locked.ok()) {
    if (locked.status().code() == StatusCode::kUnavailable) {
      // "Lock failed,MQ already started" is what RocketMQ prints; operators grep for it.
      return Status::Unavailable("Lock failed, MQ already started: store directory " + config_.storePathRootDir +
                                 " is in use by another broker: " + locked.status().message());
    }
    return locked.status().with_context("locking store directory " + config_.storePathRootDir);
  }
  store_lock_ = std::move(locked).value();
  MQ_ASSERT(store_lock_ != nullptr);
  return Status::Ok();
}

Status MessageStore::load_consume_queues() {
  const std::string root = config_.consume_queue_dir();
  MQ_RETURN_IF_ERROR(env_.files().mkdirs(root));
  MQ_ASSIGN_OR_RETURN(std::vector<std::string> topics, env_.files().list(root));
  for (const std::string& topic : topics) {
    const std::string topic_dir = env::join_path(root, topic);
    if (!env_.files().is_directory(topic_dir) || !validate_topic_name(topic).ok()) {
      MQ_LOG(kWarn, "store", "ignoring stray entry " << topic_dir << " in the consume queue directory");
      continue;
    }
    MQ_ASSIGN_OR_RETURN(std::vector<std::string> ids, env_.files().list(topic_dir));
    for (const std::string& id : ids) {
      const bool numeric = !id.empty() && id.size() < 10 && std::all_of(id.begin(), id.end(), ::isdigit);
      if (!numeric || !env_.files().is_directory(env::join_path(topic_dir, id))) {
        MQ_LOG(kWarn, "store", "ignoring stray entry " << env::join_path(topic_dir, id));
        continue;
      }
      ConsumeQueue& queue = consume_queue(topic, std::stoi(id));
      MQ_RETURN_IF_ERROR(queue.load());
      MQ_RETURN_IF_ERROR(queue.recover());
    }
  }
  return Status::Ok();
}

MessageStore::VerifiedLog MessageStore::verify_commit_log(PhyOffset limit) {
  CommitLogScanner scanner(commit_log_, recovery_.scan_from, limit, config_.checkCRCOnRecover);
  VerifiedLog verified;
  while (std::optional<ScannedRecord> scanned = scanner.next()) {
    ++recovery_.records_verified;
    verified.newest_ms = std::max(verified.newest_ms, scanned->record.message.store_timestamp_ms);
  }
  recovery_.recovered_end = scanner.position();
  recovery_.stop_reason = scanner.stop_reason();
  verified.corrupt = scanner.stopped_on_corruption();
  return verified;
}

PhyOffset MessageStore::choose_abnormal_start() const {
  const auto& files = commit_log_.file_queue().files();
  MQ_ASSERT(!files.empty());
  const int64_t safe_ms = config_.messageIndexEnable && config_.messageIndexSafe ? checkpoint_.min_timestamp_index()
                                                                                : checkpoint_.min_timestamp();
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    const PhyOffset start((*it)->file_from_offset());
    CommitLogScanner scanner(commit_log_, start, start + (*it)->file_size(), /*check_crc=*/false);
    std::optional<ScannedRecord> first = scanner.next();
    if (!first || first->offset != start) continue;  // starts with a blank or garbage
    const int64_t stored_ms = first->record.message.store_timestamp_ms;
    if (stored_ms != 0 && stored_ms <= safe_ms) return start;
  }
  return PhyOffset(files.front()->file_from_offset());
}

Status MessageStore::recover_commit_log(bool last_exit_ok) {
  const auto& files = commit_log_.file_queue().files();
  recovery_ = RecoveryReport{};
  recovery_.abnormal = !last_exit_ok;
  if (files.empty()) {
    // No log at all: nothing a ConsumeQueue or the index says can be true.
    for (auto& [topic, by_id] : consume_queues_) {
      for (auto& [queue_id, queue] : by_id) MQ_RETURN_IF_ERROR(queue->destroy());
    }
    forget_consume_queue_topic();
    consume_queues_.clear();
    if (config_.messageIndexEnable) MQ_RETURN_IF_ERROR(index_->truncate(PhyOffset(0)).status());
    reput_from_ = PhyOffset(0);
    return Status::Ok();
  }
  const size_t first = last_exit_ok && files.size() > 3 ? files.size() - 3 : 0;
  recovery_.scan_from = last_exit_ok ? PhyOffset(files[first]->file_from_offset()) : choose_abnormal_start();
  const PhyOffset limit(files.back()->file_from_offset() + files.back()->file_size());
  VerifiedLog verified = verify_commit_log(limit);
  const PhyOffset first_segment(files.front()->file_from_offset());
  if (!last_exit_ok && recovery_.scan_from > first_segment &&
      verified.newest_ms < checkpoint_.physic_msg_timestamp()) {
    MQ_LOG(kWarn, "recovery", "checkpoint claims a commitlog flush at " << checkpoint_.physic_msg_timestamp()
                                  << " ms, newer than every record verified from " << recovery_.scan_from.to_string()
                                  << " (newest " << verified.newest_ms << " ms): not trusting it, verifying from "
                                  << first_segment.to_string());
    recovery_.scan_from = first_segment;
    recovery_.records_verified = 0;
    verified = verify_commit_log(limit);
  }
  MQ_ASSERT(recovery_.recovered_end >= recovery_.scan_from);
  if (verified.corrupt) {
    MQ_LOG(kError, "recovery", "commitlog verification stopped at offset "
                                   << recovery_.recovered_end.to_string() << ": " << recovery_.stop_reason
                                   << "; truncating the log there");
  }
  recovery_.truncated_bytes = limit - recovery_.recovered_end;
  MQ_ASSERT(handed_over_.empty());  // no put before recovery
  MQ_RETURN_IF_ERROR(commit_log_.truncate(recovery_.recovered_end).with_context("truncating the commitlog"));
  for (auto& [topic, by_id] : consume_queues_) {
    for (auto& [queue_id, queue] : by_id) MQ_RETURN_IF_ERROR(queue->truncate_dirty(recovery_.recovered_end));
  }
  reput_from_ = recovery_.scan_from;
  if (config_.messageIndexEnable) {
    MQ_ASSIGN_OR_RETURN(PhyOffset rebuild_from, index_->truncate(recovery_.recovered_end));
    // truncate() lowered the index's timestamp below the files it deleted:
    // the next checkpoint written must not vouch for their rebuilt, not yet
    // synced successors with the higher value it was loaded with.
    checkpoint_.set_index_msg_timestamp(index_->last_flushed_end_timestamp_ms());
    // Index files deleted at load (newer than the checkpoint after a crash)
    // took entries with them: rebuild from the end of what is still indexed.
    PhyOffset indexed_end(0);
    for (const auto& file : index_->files()) indexed_end = std::max(indexed_end, file->header().end_phy_offset);
    rebuild_from = std::min(rebuild_from, indexed_end);
    if (rebuild_from < reput_from_) {
      std::shared_ptr<MappedFile> file = commit_log_.file_at(rebuild_from);
      reput_from_ = file ? PhyOffset(file->file_from_offset()) : commit_log_.min_offset();
    }
  }
  reput_from_ = std::max(reput_from_, commit_log_.min_offset());
  // The recovered bytes may still sit only in the page cache (a process
  // crash keeps it): have the start-up flush sync every scanned segment.
  for (const auto& file : commit_log_.file_queue().files()) {
    if (file->file_from_offset() + file->file_size() > recovery_.scan_from.value()) file->set_flushed_position(0);
  }
  commit_log_.file_queue().set_flushed_where(std::min(recovery_.scan_from.value(), commit_log_.max_offset().value()));
  MQ_LOG(kInfo, "recovery", (recovery_.abnormal ? "abnormal" : "normal")
                                << " recovery: verified " << recovery_.records_verified << " records from "
                                << recovery_.scan_from.to_string() << ", log ends at "
                                << recovery_.recovered_end.to_string());
  return Status::Ok();
}

// Makes the recovered state durable, then marks the store running with an
// abort file, made durable before the first put is accepted.
void MessageStore::finish_start(std::function<void(Status)> done) {
  auto fail = [](std::function<void(Status)>& done, const Status& status) {
    MQ_LOG(kError, "store", "start failed: " << status.to_string());
    done(status);
  };
  // Recovery's truncations must be durable before new records reuse the
  // offsets they freed: a stale ConsumeQueue entry that came back after a
  // second power loss would point at some other queue's record.
  commit_log_.flush(lifetime_.guard([this, done = std::move(done), fail](Status status) mutable {
    if (!status.ok()) return fail(done, status.with_context("flushing the recovered commitlog"));
    flush_all_consume_queues(0, lifetime_.guard([this, done = std::move(done), fail](Status status) mutable {
      if (!status.ok()) return fail(done, status.with_context("flushing the recovered consume queues"));
      if (!config_.messageIndexEnable) return create_abort_file(std::move(done));
      index_->flush(lifetime_.guard([this, done = std::move(done), fail](Status status) mutable {
        if (!status.ok()) return fail(done, status.with_context("flushing the recovered index"));
        create_abort_file(std::move(done));
      }));
    }));
  }));
}

void MessageStore::create_abort_file(std::function<void(Status)> done) {
  auto fail = [](std::function<void(Status)>& done, const Status& status) {
    MQ_LOG(kError, "store", "start failed: " << status.to_string());
    done(status);
  };
  {
    Result<std::shared_ptr<env::File>> abort =
        env_.files().open(config_.abort_file_path(), env::OpenOptions{.create = true});
    if (!abort.ok()) return fail(done, abort.status().with_context("creating the abort file"));
    // The root's own entry in its parent, then the root's entries (abort,
    // commitlog/, consumequeue/, index/): a directory that mkdirs just made
    // vanishes in a power loss until its parent is synced.
    const std::string parent = env::parent_dir(config_.storePathRootDir);
    env_.files().sync_dir(parent.empty() ? "/" : parent, lifetime_.guard([this, done = std::move(done), fail](
                                                                             Status status) mutable {
      if (!status.ok()) return fail(done, status.with_context("syncing the store's parent directory"));
      env_.files().sync_dir(config_.storePathRootDir, lifetime_.guard([this, done = std::move(done), fail](
                                                                          Status status) mutable {
        if (!status.ok()) return fail(done, status.with_context("syncing the store directory"));
        prepare_first_segment([this, done = std::move(done)] {
          start_services();
          done(Status::Ok());
        });
      }));
    }));
  }
}

// A fresh log's first segment is prepared like every later one before the
// store serves, as RocketMQ's first put waits for AllocateMappedFileService
// (warmed with warmMapedFileEnable). Made on the put path it was only
// fallocated, and until the first roll every SYNC_FLUSH fdatasync converted
// unwritten extents: 27 KiB pwrite + fdatasync p50 332-347 us on such a file
// here, 129-166 us on a pre-touched one; broker_bench's SYNC_FLUSH cases ran
// in that first segment. A failed preparation leaves the put path to create
// the segment, as for any other.
void MessageStore::prepare_first_segment(std::function<void()> then) {
  if (!commit_log_.file_queue().request_first_file(0)) return then();
  MQ_LOG(kInfo, "store", "preparing the first commitlog segment before serving");
  wait_for_first_segment(std::move(then));
}

// The service has no completion callback of its own: polled every
// millisecond, for the seconds a pre-touch of a segment takes at most.
void MessageStore::wait_for_first_segment(std::function<void()> then) {
  if (!commit_log_.file_queue().first_file_preparing()) return then();
  env_.executor().run_after(kNanosPerMilli, lifetime_.guard([this, then = std::move(then)]() mutable {
    wait_for_first_segment(std::move(then));
  }));
}

void MessageStore::shutdown(std::function<void(Status)> done) {
  if (!running_) {
    env_.executor().post([done = std::move(done)] { done(Status::Unavailable("message store is not running")); });
    return;
  }
  running_ = false;
  const bool persist_delay_offsets = schedule_->started();
  cancel_timers();
  // The last group write: the puts of this turn are stored and answered
  // (SYNC_FLUSH ones by the flush below), as they would have been a task later.
  commit_and_acknowledge();
  // Transient store pool: the buffer's last commit (RocketMQ retries it
  // RETRY_TIMES_OVER times). If the device still refuses, the acknowledged
  // bytes it holds are lost with the process: say so, and fail the
  // shutdown (the abort file stays, so the next start recovers abnormally).
  Status last_commit;
  if (commit_real_time_) {
    const PhyOffset buffered_from = commit_log_.committed_offset();
    last_commit = commit_real_time_->commit_all();
    if (!last_commit.ok()) {
      MQ_LOG(kError, "store", "clean shutdown: " << (commit_log_.max_offset() - buffered_from)
                                                 << " acknowledged bytes could not be committed and are lost: "
                                                 << last_commit.to_string());
    }
  }
  // A record that cannot be dispatched now is left for recovery, which
  // re-dispatches from its safe point. running_ is false: dispatch goes to
  // the end of the log. A SYNC_FLUSH store with dispatchFlushedOnly waits for
  // the flush below, so that no pull sees a record before it is durable.
  auto dispatch_rest = [this] {
    while (reput_from_ < commit_log_.max_offset()) {
      const PhyOffset before = reput_from_;
      if (Status status = reput(); !status.ok() || reput_from_ == before) break;
    }
  };
  const bool dispatch_after_flush = dispatch_follows_flush();
  if (!dispatch_after_flush) dispatch_rest();
  // Flush the log, then the queues and index, then the checkpoint; remove the
  // abort file last, and only when everything before succeeded.
  auto step = std::make_shared<std::function<void(int, Status)>>();
  // The chain holds itself; break the cycle from a later task, never from
  // inside the function being destroyed. The task's captures break it when
  // they are destroyed, so a process that exits right after shutdown (the
  // task dropped, never run) does not leak the chain.
  struct ChainBreaker {
    explicit ChainBreaker(std::shared_ptr<std::function<void(int, Status)>> c) : chain(std::move(c)) {}
    ~ChainBreaker() { *chain = nullptr; }
    std::shared_ptr<std::function<void(int, Status)>> chain;
  };
  auto release = [this](const std::shared_ptr<std::function<void(int, Status)>>& chain) {
    env_.executor().post([breaker = std::make_shared<ChainBreaker>(chain)] {});
  };
  *step = [this, step, release, persist_delay_offsets, dispatch_after_flush, dispatch_rest,
           done = std::move(done)](int stage, Status status) mutable {
    if (!status.ok()) {
      MQ_LOG(kError, "store", "clean shutdown failed at stage " << stage << ": " << status.to_string());
      if (group_commit_) group_commit_->fail_all();
      auto finish = std::move(done);
      release(step);
      finish(status);
      return;
    }
    auto next = lifetime_.guard([step, stage](Status s) { (*step)(stage + 1, std::move(s)); });
    switch (stage) {
      case 0: return commit_log_.flush(next);
      case 1:
        if (group_commit_) group_commit_->complete_flushed_now();
        if (dispatch_after_flush) dispatch_rest();
        checkpoint_.set_physic_msg_timestamp(commit_log_.last_append_timestamp_ms());
        return flush_all_consume_queues(0, next);
      case 2:
        if (config_.messageIndexEnable) return index_->flush(next);
        return next(Status::Ok());
      case 3:
        if (config_.messageIndexEnable) checkpoint_.set_index_msg_timestamp(index_->last_flushed_end_timestamp_ms());
        return checkpoint_.flush(next);
      case 4:
        if (persist_delay_offsets) return schedule_->persist(next);
        return next(Status::Ok());
      case 5:
        if (Status removed = env_.files().remove(config_.abort_file_path()); !removed.ok()) return next(removed);
        return env_.files().sync_dir(config_.storePathRootDir, next);
      default: {
        MQ_LOG(kInfo, "store", "clean shutdown complete at commitlog offset " << commit_log_.max_offset().to_string());
        store_lock_.reset();  // another broker may take the directory now
        auto finish = std::move(done);
        release(step);
        finish(Status::Ok());
      }
    }
  };
  (*step)(0, last_commit);
}

}  // namespace mqlab::store
