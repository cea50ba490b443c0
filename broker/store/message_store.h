// MessageStore: the store facade the rest of the broker uses (RocketMQ's
// DefaultMessageStore). It owns the CommitLog, the ConsumeQueues, the
// IndexService, the checkpoint and the abort file, and runs the services
// around them on the Env's executor: flushing (group commit or periodic),
// dispatching new records into ConsumeQueues and the index (reput),
// ConsumeQueue flushing with checkpoint updates, retention, and (masters
// only) delayed delivery by level (ScheduleMessageService).
//
// Life cycle: start() loads and recovers (normal recovery after a clean
// shutdown, abnormal when the abort file is present), creates the abort file,
// and reports ready; shutdown() flushes everything, writes the checkpoint and
// removes the abort file. Destroying a store without shutdown() is a crash:
// the destructor does no I/O.
//
// Acknowledgement rules, the heart of what mqsim measures:
//   ASYNC_FLUSH  PUT_OK once the record is in the page cache. Puts arriving
//                in one turn of the executor are written together: each is
//                appended (offsets assigned) into the CommitLog's write
//                buffer, and one task later a single pwrite commits them all
//                before any of them is acknowledged (group write).
//                With transientStorePoolEnable (an ASYNC_FLUSH master):
//                PUT_OK once the record is in the CommitLog's write buffer;
//                CommitRealTimeService writes the buffer to the file on its
//                schedule, and only then do dispatch, pulls and the HA
//                stream see the record. kill -9 loses what was not yet
//                committed.
//   SYNC_FLUSH   PUT_OK once a flush covering the record completed;
//                FLUSH_DISK_TIMEOUT after syncFlushTimeout; never PUT_OK
//                after a failed fsync.
//   Disk full / failed device: an error status, nothing acknowledged that was
//   not stored; puts succeed again when space returns.
//   SYNC_MASTER  additionally waits for a slave's ack (ReplicationHook):
//                SLAVE_NOT_AVAILABLE at once when no slave can confirm,
//                FLUSH_SLAVE_TIMEOUT after slaveTimeout; combined with the
//                flush as RocketMQ 4.9.x does (a non-OK flush status
//                overrides PUT_OK, a non-OK replication status overrides that).
//   SLAVE        refuses puts; its CommitLog grows only by append_replica.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/common/lifetime.h"
#include "broker/common/name_order.h"
#include "broker/common/status.h"
#include "broker/env/env.h"
#include "broker/store/commit_log.h"
#include "broker/store/commit_real_time_service.h"
#include "broker/store/consume_queue.h"
#include "broker/store/dispatch_request.h"
#include "broker/store/group_commit_service.h"
#include "broker/store/handed_over_dispatch_requests.h"
#include "broker/store/index_service.h"
#include "broker/store/message_codec.h"
#include "broker/store/message_store_config.h"
#include "broker/store/replication_hook.h"
#include "broker/store/store_checkpoint.h"
#include "broker/store/store_types.h"

namespace mqlab::store {

class CleanCommitLogService;
class ScheduleMessageService;

class MessageStore {
 public:
  MessageStore(env::Env& env, MessageStoreConfig config, HostAddress store_host);
  ~MessageStore();
  MessageStore(const MessageStore&) = delete;
  MessageStore& operator=(const MessageStore&) = delete;

  // Loads, recovers and starts the services; done(ok) when puts may flow.
  void start(std::function<void(Status)> done);
  // Clean shutdown: stop services, flush all, checkpoint, remove the abort file.
  void shutdown(std::function<void(Status)> done);
  bool running() const { return running_; }
  const RecoveryReport& recovery_report() const { return recovery_; }

  // done is taken by reference and always consumed (called once, now or
  // later): a send's completion is 112 bytes inline, and each by-value hop
  // on its way to the put's entry relocated it.
  void put_message(MessageToStore&& message, PutCallback&& done);

  // Up to max_msgs messages of (topic, queue_id) from offset, as regions of
  // the CommitLog files (no re-encoding). tags_filter: accepted tag codes,
  // empty for all.
  GetMessageResult get_message(const std::string& group, const std::string& topic, int32_t queue_id,
                               QueueOffset offset, int32_t max_msgs, const std::vector<int64_t>& tags_filter = {});
  // The same into result, whatever it held, keeping the room of its region
  // list: a pull processor's one allocation per pull that found messages.
  void get_message_into(const std::string& group, const std::string& topic, int32_t queue_id, QueueOffset offset,
                        int32_t max_msgs, const std::vector<int64_t>& tags_filter, GetMessageResult& result);
  // Copies the bytes of a region (the simulator and tests; mqbroker sends
  // regions with sendfile).
  static Result<std::vector<uint8_t>> read_region(const FileRegion& region);

  QueueOffset max_offset_in_queue(const std::string& topic, int32_t queue_id);
  QueueOffset min_offset_in_queue(const std::string& topic, int32_t queue_id);
  Result<QueueOffset> offset_in_queue_by_time(const std::string& topic, int32_t queue_id, int64_t timestamp_ms);
  // The record at a CommitLog offset (VIEW_MESSAGE_BY_ID). Committed records
  // only: with transientStorePoolEnable an acknowledged record still in the
  // write buffer is NotFound until its commit, as in RocketMQ.
  Result<std::vector<uint8_t>> look_message_by_offset(PhyOffset offset) const;
  // QUERY_MESSAGE: committed records indexed under topic#key in the time window.
  Result<std::vector<std::vector<uint8_t>>> query_message(const std::string& topic, const std::string& key,
                                                          int32_t max_num, int64_t begin_ms, int64_t end_ms);

  PhyOffset min_phy_offset() const { return commit_log_.min_offset(); }
  // The end of what the CommitLog's files hold: records appended in this
  // turn and not yet committed are not stored yet (none is acknowledged).
  PhyOffset max_phy_offset() const { return commit_log_.committed_offset(); }
  PhyOffset flushed_phy_offset() const { return commit_log_.flushed_offset(); }
  PhyOffset dispatched_phy_offset() const { return reput_from_; }
  bool writable() const { return writable_; }
  const MessageStoreConfig& config() const { return config_; }
  env::Env& env() { return env_; }
  CommitLog& commit_log() { return commit_log_; }
  // transientStorePoolEnable in effect and serving: the commit schedule;
  // nullptr otherwise.
  CommitRealTimeService* commit_real_time_service() { return commit_real_time_.get(); }
  const StoreStats& stats() const { return stats_; }

  // Every (topic, queue) with a ConsumeQueue, in sorted order.
  std::vector<std::pair<std::string, int32_t>> queues() const;
  ConsumeQueue* find_consume_queue(const std::string& topic, int32_t queue_id);  // nullptr when none
  IndexService& index_service() { return *index_; }
  // Delayed delivery by level (schedule_message_service.h); runs on masters.
  ScheduleMessageService& schedule_message_service() { return *schedule_; }

  // Called for each record the dispatcher adds to a ConsumeQueue (the broker
  // wakes long-polling pulls with it).
  void set_message_arriving_listener(std::function<void(const DispatchRequest&)> listener) {
    message_arriving_ = std::move(listener);
  }

  // Forgets the requests the put path handed to the dispatcher, as a restart
  // does: the dispatcher then reads those records back and decodes them
  // (tests of that path: a record damaged on the device before dispatch).
  void forget_handed_over_dispatch_requests() { handed_over_.clear(); }
  // Retention: one run of the clean services now (tests and TRIGGER_DELETE_FILES).
  void run_clean_now();

  // --- replication (store_replication.cc) ----------------------------------
  // Master: the hook SYNC_MASTER puts wait on and every append notifies;
  // nullptr uninstalls. Not owned.
  void set_replication_hook(ReplicationHook* hook) { replication_hook_ = hook; }
  // Master: CommitLog bytes from `from`, at most max_bytes, cut at the end of
  // from's segment and at the max offset, as a region of the segment file
  // (the HA transfer sends it like a pull: sendfile). Empty (length 0) when
  // from is the max offset; NotFound when no segment holds from.
  Result<FileRegion> commit_log_region(PhyOffset from, int32_t max_bytes) const;
  // Slave: appends bytes the master sent for offset `at`. Requires: role
  // SLAVE. `at` must be the max offset (or, for an empty store, the start of
  // a segment: a fresh slave starts at the master's newest segment). The
  // bytes must stay inside at's segment (the master cuts chunks there), and
  // every record header they complete must be well formed (size fits the
  // segment, magic is a message or BLANK, a message's PHYSICALOFFSET is its
  // position): otherwise nothing of this call stays and the error says why
  // (InvalidArgument for a misplaced chunk, Corruption for bad records).
  // New complete records are then dispatched as on a master.
  Status append_replica(PhyOffset at, std::span<const uint8_t> bytes);
  // Slave: drops bytes past the last complete record (a chunk cut mid-record
  // before the connection broke), so a resumed stream restarts at a record
  // boundary the master can be checked against. Those bytes never completed
  // a message, so no put was acknowledged on their account.
  Status truncate_replica_tail();
  // Slave: the end of the last complete record (== max offset on a master).
  PhyOffset replica_complete_end() const { return replica_partial_tail_ ? replica_complete_end_ : max_phy_offset(); }

 private:
  friend class CleanCommitLogService;
  Status load_and_recover();
  Status load_consume_queues();
  Status recover_commit_log(bool last_exit_ok);
  PhyOffset choose_abnormal_start() const;
  struct VerifiedLog {
    int64_t newest_ms = 0;  // the newest store timestamp among the verified records
    bool corrupt = false;   // the scan stopped on a bad record, not at the end
  };
  // Scans from recovery_.scan_from to limit; sets records_verified,
  // recovered_end and stop_reason.
  VerifiedLog verify_commit_log(PhyOffset limit);
  // Start-up checks (store_recovery.cc): every store directory that exists
  // takes a new file; {storePathRootDir}/lock is ours alone.
  Status check_directories_writable();
  Status lock_store_directory();
  // Dispatches from reput_from_ to the end of the log, at start-up.
  Status redispatch_to_end();
  // Queues missing from disk (not in loaded, sorted) that the re-dispatch
  // from dispatched_from found incomplete are rebuilt from the oldest
  // record; see store_recovery.cc.
  Status rebuild_lost_consume_queues(const std::vector<std::pair<std::string, int32_t>>& loaded,
                                     PhyOffset dispatched_from);
  void finish_start(std::function<void(Status)> done);
  void create_abort_file(std::function<void(Status)> done);
  void prepare_first_segment(std::function<void()> then);
  void wait_for_first_segment(std::function<void()> then);
  void start_services();

  ConsumeQueue& consume_queue(const std::string& topic, int32_t queue_id);
  // Empties find_consume_queue's memo: before any topic's entry leaves consume_queues_.
  void forget_consume_queue_topic() {
    last_topic_ = nullptr;
    last_topic_queues_ = nullptr;
  }
  void reput_soon();
  void retry_reput_later();
  // Dispatches from reput_from_ on; an error means it stopped at a record it
  // could not dispatch, which stays undispatched for a later try. At
  // start-up and shutdown every ConsumeQueue it wrote is committed before it
  // returns; while serving, entries stay buffered (store_services.cc).
  Status reput();
  Status reput_batch();
  // The request for the record at reput_from_: the one the put path handed
  // over, else the record read back and decoded into `decoded` (then the
  // scanner is moved there when it is elsewhere). nullptr at the end, or
  // at a record the scanner could not read (its stop reason says why);
  // `end` is where the record ends (past a BLANK the scanner hopped).
  const DispatchRequest* next_dispatch_request(PhyOffset limit, std::optional<CommitLogScanner>& scanner,
                                               DispatchRequest& decoded, PhyOffset& end);
  // Put path: hands the request for the record just appended to the
  // dispatcher, unless it must read the record (dispatch_request.h).
  void hand_over_dispatch_request(const MessageToStore& message, const AppendMessageResult& appended);
  Status dispatch(const DispatchRequest& request);
  // Hands the entries buffered by this dispatch task to the files.
  Status commit_dispatched_queues();

  // A put appended to the CommitLog's write buffer, waiting for the group
  // write that commits it before it may be acknowledged.
  struct PutAwaitingCommit {
    AppendMessageResult appended;
    bool wait_flush = false;
    bool wait_slave = false;
    PutCallback done;
  };
  void commit_soon();
  // Transient store pool: acknowledges the puts of this turn, buffered.
  void acknowledge_buffered();
  // Transient store pool: after CommitRealTimeService wrote the buffer,
  // what a group write does once committed (dispatch, HA) plus the flush
  // RocketMQ's commit service wakes.
  void on_commit_log_committed();
  // The group write: commits the buffered records (one pwrite), then
  // acknowledges every put it covers (or fails them all when the device
  // refused), then wakes the dispatcher and the HA stream.
  void commit_and_acknowledge();
  // Fails the puts whose records the CommitLog dropped after a refused
  // commit (those past its committed offset); their replies are posted.
  void fail_dropped_puts(const Status& status);
  // Answers put (its done is consumed): by reference from the batch, as
  // put_message's done.
  void acknowledge(PutAwaitingCommit& put);
  void complete_put(const AppendMessageResult& appended, PutCallback done);
  // SYNC_FLUSH and/or SYNC_MASTER: the reply waits for the flush and the
  // slave's ack, run side by side (store_replication.cc).
  void complete_put_waiting(const AppendMessageResult& appended, bool wait_flush, bool wait_slave,
                            PutCallback done);
  // Where dispatch stops: the max offset, or on a slave mid-stream the end
  // of the last complete record; while serving with dispatchFlushedOnly, no
  // further than the flushed offset (message_store_config.h says why).
  PhyOffset dispatch_limit() const;
  // Whether this store's dispatch follows the flush: a SYNC_FLUSH master
  // with dispatchFlushedOnly.
  bool dispatch_follows_flush() const;
  // ... and does so now: only while serving. Recovery dispatches to the end
  // because nothing is served until its flush has completed; clean shutdown
  // dispatches the rest after its flush.
  bool dispatch_waits_for_flush() const { return running_ && dispatch_follows_flush(); }
  Status advance_replica_complete_end();
  void on_flush_error(const Status& status);
  void schedule_async_flush();
  void run_async_flush();
  void schedule_consume_queue_flush();
  void run_consume_queue_flush();
  void flush_all_consume_queues(int32_t least_pages, std::function<void(Status)> done);
  void update_disk_state();

  env::Env& env_;
  MessageStoreConfig config_;
  HostAddress store_host_;
  CommitLog commit_log_;
  std::unique_ptr<IndexService> index_;
  StoreCheckpoint checkpoint_;
  using ConsumeQueuesById = std::map<int32_t, std::unique_ptr<ConsumeQueue>>;
  std::map<std::string, ConsumeQueuesById, NameLess> consume_queues_;
  // The topic of the last put planned without error, whose name plan_record
  // need not check again: a producer's puts name one topic over and over.
  std::string valid_topic_;
  // The topic find_consume_queue found last and its queues: a put's
  // dispatch and a pull look up the same topic over and over, and the
  // topic map's name comparisons cost most of a lookup. Both point into
  // consume_queues_'s node for it (std::map nodes stay put); reset by
  // forget_consume_queue_topic() before a topic's node is erased.
  const std::string* last_topic_ = nullptr;
  ConsumeQueuesById* last_topic_queues_ = nullptr;
  // get_message's entries read from a consume queue, kept for their room
  // (at most the 800 entries one pull scans).
  std::vector<ConsumeQueueEntry> read_entries_;
  std::unique_ptr<GroupCommitService> group_commit_;
  std::unique_ptr<CommitRealTimeService> commit_real_time_;
  PhyOffset notified_committed_;  // the committed offset on_commit_log_committed last announced
  std::unique_ptr<CleanCommitLogService> clean_service_;
  std::unique_ptr<ScheduleMessageService> schedule_;

  bool running_ = false;
  bool writable_ = true;       // false after a failed fsync or above the disk warning level
  bool disk_full_ = false;
  bool flush_failed_ = false;
  PhyOffset reput_from_;
  // Start-up and shutdown: the ConsumeQueues written since the dispatch task
  // began, in first-write order, committed together at the task's end.
  std::vector<ConsumeQueue*> dispatched_queues_;
  std::vector<uint8_t> reput_buffer_;  // the dispatcher's read buffer, reused
  // What the put path appended, described for the dispatcher; at most one
  // dispatch task's worth (kDispatchBatch, store_services.cc).
  HandedOverDispatchRequests handed_over_{1024};
  bool reput_scheduled_ = false;
  // Appended, in offset order, not yet committed and acknowledged.
  std::vector<PutAwaitingCommit> puts_awaiting_commit_;
  std::vector<PutAwaitingCommit> spare_puts_;  // the acknowledging batch's vector, kept for the next
  bool commit_scheduled_ = false;
  // Committed records that only a flush makes visible, with no put waiting
  // for that flush (a refused roll's BLANK, a batch of WAIT_STORE_MSG_OK=false
  // puts): commit_and_acknowledge() asks for one, after the flush requests
  // of the batch's puts (the group commit takes requests in offset order).
  bool flush_for_dispatch_wanted_ = false;
  env::TimerId reput_retry_timer_ = env::kNoTimer;
  bool async_flush_in_flight_ = false;
  bool cq_flush_in_flight_ = false;
  Nanos last_thorough_commit_log_flush_ = 0;
  Nanos last_thorough_cq_flush_ = 0;
  env::TimerId async_flush_timer_ = env::kNoTimer;
  env::TimerId cq_flush_timer_ = env::kNoTimer;
  void cancel_timers();
  RecoveryReport recovery_;
  StoreStats stats_;
  std::function<void(const DispatchRequest&)> message_arriving_;
  ReplicationHook* replication_hook_ = nullptr;
  // Slave: whether the log ends inside a record, and where the last complete one ends.
  bool replica_partial_tail_ = false;
  PhyOffset replica_complete_end_;
  // {storePathRootDir}/lock, held from start() until shutdown completes or
  // the store is destroyed.
  std::unique_ptr<env::FileLock> store_lock_;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::store
