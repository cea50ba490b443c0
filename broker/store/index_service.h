// IndexService: the run of IndexFiles in {storePathRootDir}/index/ and the
// dispatcher's entry point for indexing messages by key (RocketMQ's
// IndexService). For each dispatched message it adds `topic#UNIQ_KEY` and
// `topic#key` for every space-separated KEYS value to the newest file,
// rolling to a new file when that one is full and flushing the full one.
//
// Invariants: files_ is in creation order, which is name order (names are
// creation times, made strictly increasing even if the wall clock steps
// back); only the newest file is written; every directory entry created or
// removed is synced before a flush reports ok. Like the ConsumeQueue, the
// index is derived data: recovery deletes what may point past the CommitLog
// end (truncate) and re-dispatches to rebuild it.
//
// Write-behind (index_file.h): the newest file buffers its writes, which
// reach the disk when it rolls and at every flush (start-up, shutdown). The
// checkpoint's indexMsgTimestamp is the end of a full file whose write-back
// and sync both completed, so it never vouches for a buffered entry; after
// a kill -9 or power loss the newest file is newer than it and is deleted
// at load, or (never written since its creation) still says where its
// entries begin, and either way recovery re-dispatches the CommitLog from
// the end of what the kept files index.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/lifetime.h"
#include "broker/common/status.h"
#include "broker/common/types.h"
#include "broker/env/env.h"
#include "broker/store/dispatch_request.h"
#include "broker/store/index_file.h"
#include "broker/store/message_store_config.h"

namespace mqlab::store {

class IndexService {
 public:
  IndexService(env::Env& env, const MessageStoreConfig& config);
  IndexService(const IndexService&) = delete;
  IndexService& operator=(const IndexService&) = delete;

  // Opens the index files (creating the directory when missing). After an
  // abnormal exit, deletes the files whose endTimestamp is newer than the
  // checkpoint's indexMsgTimestamp: they may hold unflushed entries, and
  // recovery re-dispatches from before that time to rebuild them.
  // Requires: called once, before anything else.
  Status load(bool last_exit_ok, int64_t checkpoint_index_timestamp_ms);

  // Indexes one dispatched message. Skips prepared and rolled-back
  // transaction messages, and messages before the newest file's
  // endPhyOffset (a re-dispatch after recovery). Does nothing when
  // messageIndexEnable is false.
  Status build_index(const DispatchRequest& request);

  // CommitLog offsets of messages of topic with key stored in
  // [begin_ms, end_ms], newest first, at most max_num, without repeats.
  // Keys are matched by hash: the caller checks each message's keys.
  Result<std::vector<PhyOffset>> query(std::string_view topic, std::string_view key, int32_t max_num,
                                       int64_t begin_ms, int64_t end_ms) const;

  // For recovery after the CommitLog was cut at commit_log_end: deletes the
  // files whose endPhyOffset >= commit_log_end (they point into the cut
  // part) and returns the smallest beginPhyOffset among them, from where
  // the caller re-dispatches to rebuild them; commit_log_end when none went.
  // Lowers last_flushed_end_timestamp_ms() below the deleted files' begin,
  // so an abnormal exit before the rebuilt files are flushed deletes them.
  Result<PhyOffset> truncate(PhyOffset commit_log_end);
  // Retention: deletes the oldest files whose endPhyOffset < commitlog_min,
  // never the newest.
  Status delete_expired(PhyOffset commitlog_min);

  // Writes back every file's buffered entries, slots and header
  // (index_file.h), then makes them and every directory change durable.
  // A failed write leaves the entries buffered: done gets the error and
  // the next flush retries.
  void flush(std::function<void(Status)> done);
  // The endTimestamp of the newest full file whose flush completed (the
  // checkpoint's indexMsgTimestamp); the loaded checkpoint value until then.
  int64_t last_flushed_end_timestamp_ms() const { return last_flushed_end_timestamp_ms_; }

  // Removes every index file.
  Status destroy();

  const std::vector<std::shared_ptr<IndexFile>>& files() const { return files_; }

 private:
  Result<std::shared_ptr<IndexFile>> writable_file();
  Status put_key(std::string_view topic, std::string_view key, const DispatchRequest& request);
  Result<std::string> next_file_path();
  Status remove_file(const std::shared_ptr<IndexFile>& file, std::string_view why);
  void flush_files(std::vector<std::shared_ptr<IndexFile>> files, std::function<void(Status)> done);

  env::Env& env_;
  std::string dir_;
  int32_t hash_slot_num_;
  int32_t index_num_;
  bool index_enabled_;
  std::vector<std::shared_ptr<IndexFile>> files_;
  int64_t last_name_ms_ = -1;  // newest name ever seen or made here
  int64_t last_flushed_end_timestamp_ms_ = 0;
  bool loaded_ = false;
  // Directory changes (files created or removed) counted, and how many of
  // them a completed dir sync covers: a flush syncs the directory whenever
  // some change is not yet known durable, even if another sync is in flight.
  uint64_t dir_changes_ = 0;
  uint64_t dir_changes_synced_ = 0;
  bool parent_needs_sync_ = false;  // load() created the index directory
  LifetimeToken lifetime_;
};

}  // namespace mqlab::store
