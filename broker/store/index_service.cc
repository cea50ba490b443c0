#include "broker/store/index_service.h"

#include <algorithm>

#include "broker/common/joined_text.h"
#include "broker/common/log.h"
#include "broker/env/path.h"
#include "broker/store/message_codec.h"

namespace mqlab::store {

namespace {

constexpr const char* kIndexServiceLog = "index";
// 9999-12-31 23:59:59.999 UTC: the newest time a 17-digit name can say.
constexpr int64_t kMaxFileNameMs = 253'402'300'799'999;

// RocketMQ splits KEYS on MessageConst.KEY_SEPARATOR (" ") and skips empties.
std::vector<std::string_view> split_keys(std::string_view keys) {
  std::vector<std::string_view> parts;
  while (!keys.empty()) {
    const size_t space = keys.find(' ');
    const std::string_view part = keys.substr(0, space);
    if (!part.empty()) parts.push_back(part);
    if (space == std::string_view::npos) break;
    keys.remove_prefix(space + 1);
  }
  return parts;
}

bool is_indexed_transaction_type(int32_t sysflag) {
  const int32_t type = sysflag & kSysFlagTransactionMask;
  return type != kSysFlagTransactionPrepared && type != kSysFlagTransactionRollback;
}

}  // namespace

IndexService::IndexService(env::Env& env, const MessageStoreConfig& config)
    : env_(env),
      dir_(config.index_dir()),
      hash_slot_num_(config.maxHashSlotNum),
      index_num_(config.maxIndexNum),
      index_enabled_(config.messageIndexEnable) {
  MQ_ASSERT(hash_slot_num_ > 0);
  MQ_ASSERT(index_num_ > 1);  // entry 0 is never used: a file must hold one more
}

Status IndexService::load(bool last_exit_ok, int64_t checkpoint_index_timestamp_ms) {
  MQ_ASSERT(!loaded_);
  MQ_ASSERT(files_.empty());
  loaded_ = true;
  last_flushed_end_timestamp_ms_ = checkpoint_index_timestamp_ms;
  parent_needs_sync_ = !env_.files().exists(dir_);
  MQ_RETURN_IF_ERROR(env_.files().mkdirs(dir_));
  MQ_ASSIGN_OR_RETURN(std::vector<std::string> names, env_.files().list(dir_));
  for (const std::string& name : names) {  // sorted: creation order
    const std::string path = env::join_path(dir_, name);
    const std::optional<int64_t> created_ms = IndexFile::parse_file_name(name);
    if (!created_ms || env_.files().is_directory(path)) {
      MQ_LOG(kWarn, kIndexServiceLog, "ignoring stray entry " << path << " (not a yyyyMMddHHmmssSSS index file)");
      continue;
    }
    last_name_ms_ = std::max(last_name_ms_, *created_ms);
    Result<std::shared_ptr<IndexFile>> opened = IndexFile::open(env_, path, hash_slot_num_, index_num_);
    if (!opened.ok()) return opened.status().with_context("loading the index");
    std::shared_ptr<IndexFile> file = std::move(opened).value();
    if (!last_exit_ok && file->header().end_timestamp_ms > checkpoint_index_timestamp_ms) {
      MQ_RETURN_IF_ERROR(remove_file(file, "newer than the checkpoint's index timestamp " +
                                               std::to_string(checkpoint_index_timestamp_ms) + " after an abnormal exit"));
      continue;
    }
    files_.push_back(std::move(file));
  }
  return Status::Ok();
}

Status IndexService::remove_file(const std::shared_ptr<IndexFile>& file, std::string_view why) {
  MQ_RETURN_IF_ERROR(file->destroy(env_.files()));
  ++dir_changes_;
  MQ_LOG(kInfo, kIndexServiceLog, "deleted " << file->path() << " (endPhyOffset " << file->header().end_phy_offset.value()
                                          << ", endTimestamp " << file->header().end_timestamp_ms << "): " << why);
  return Status::Ok();
}

Status IndexService::build_index(const DispatchRequest& request) {
  MQ_ASSERT(loaded_);
  MQ_ASSERT(request.commit_log_offset >= PhyOffset(0));
  if (!index_enabled_ || !is_indexed_transaction_type(request.sysflag)) return Status::Ok();
  if (request.uniq_key.empty() && request.keys.empty()) return Status::Ok();
  MQ_ASSIGN_OR_RETURN(std::shared_ptr<IndexFile> newest, writable_file());
  // Everything before the newest file's end is indexed already; the message
  // at the end itself may still lack keys (a roll in its middle), so it is
  // indexed again and query() drops the repeat.
  if (request.commit_log_offset < newest->header().end_phy_offset) return Status::Ok();
  if (!request.uniq_key.empty()) MQ_RETURN_IF_ERROR(put_key(request.topic, request.uniq_key, request));
  for (std::string_view key : split_keys(request.keys)) MQ_RETURN_IF_ERROR(put_key(request.topic, key, request));
  return Status::Ok();
}

Status IndexService::put_key(std::string_view topic, std::string_view key, const DispatchRequest& request) {
  MQ_ASSIGN_OR_RETURN(std::shared_ptr<IndexFile> file, writable_file());
  MQ_ASSERT(!file->is_full());
  // Put together on the stack: a key of every dispatched message.
  return with_joined_text(topic, '#', key, [&](std::string_view full_key) {
    return file->put_key(full_key, request.commit_log_offset, request.store_timestamp_ms);
  });
}

Result<std::shared_ptr<IndexFile>> IndexService::writable_file() {
  if (!files_.empty() && !files_.back()->is_full()) return files_.back();
  const std::shared_ptr<IndexFile> previous = files_.empty() ? nullptr : files_.back();
  MQ_ASSIGN_OR_RETURN(std::string path, next_file_path());
  const PhyOffset end_phy_offset = previous ? previous->header().end_phy_offset : PhyOffset(0);
  const int64_t end_timestamp_ms = previous ? previous->header().end_timestamp_ms : 0;
  MQ_ASSIGN_OR_RETURN(std::shared_ptr<IndexFile> created,
                      IndexFile::create(env_, path, hash_slot_num_, index_num_, end_phy_offset, end_timestamp_ms));
  files_.push_back(created);
  ++dir_changes_;
  if (previous) {
    // RocketMQ flushes a full file in the background; its completion moves
    // the checkpoint's indexMsgTimestamp (last_flushed_end_timestamp_ms).
    flush_files({previous}, [path = previous->path()](Status status) {
      if (!status.ok()) MQ_LOG(kError, kIndexServiceLog, "flushing full index file " << path << ": " << status.to_string());
    });
  }
  return created;
}

Result<std::string> IndexService::next_file_path() {
  int64_t ms = std::clamp<int64_t>(env_.clock().wall_ms(), 0, kMaxFileNameMs);
  // Names order the files: keep them unique and increasing even when two
  // files are made in one millisecond or the wall clock stepped back.
  if (ms <= last_name_ms_) ms = last_name_ms_ + 1;
  if (ms > kMaxFileNameMs) {
    return Status::InvalidArgument(dir_ + ": no index file name after " + IndexFile::file_name(last_name_ms_) +
                                   " is left (yyyyMMddHHmmssSSS ends in year 9999)");
  }
  last_name_ms_ = ms;
  return env::join_path(dir_, IndexFile::file_name(ms));
}

Result<std::vector<PhyOffset>> IndexService::query(std::string_view topic, std::string_view key, int32_t max_num,
                                                   int64_t begin_ms, int64_t end_ms) const {
  std::vector<PhyOffset> found;
  if (max_num <= 0 || begin_ms > end_ms) return found;
  const auto limit = static_cast<size_t>(max_num);
  MQ_RETURN_IF_ERROR(with_joined_text(topic, '#', key, [&](std::string_view full_key) {
    for (auto it = files_.rbegin(); it != files_.rend() && found.size() < limit; ++it) {
      const IndexFile& file = **it;
      if (file.is_time_matched(begin_ms, end_ms)) {
        MQ_RETURN_IF_ERROR(file.select_phy_offsets(full_key, limit, begin_ms, end_ms, found));
      }
      if (file.header().begin_timestamp_ms < begin_ms) break;  // older files end before the window
    }
    return Status::Ok();
  }));
  MQ_ASSERT(found.size() <= limit);
  return found;
}

Result<PhyOffset> IndexService::truncate(PhyOffset commit_log_end) {
  MQ_ASSERT(loaded_);
  PhyOffset redispatch_from = commit_log_end;
  while (!files_.empty() && files_.back()->header().end_phy_offset >= commit_log_end) {
    const std::shared_ptr<IndexFile> file = files_.back();
    redispatch_from = std::min(redispatch_from, file->header().begin_phy_offset);
    // The rebuilt files will hold messages from this file's begin on and are
    // not flushed yet: the checkpoint must not vouch for them.
    const int64_t begin_ms = file->header().begin_timestamp_ms;  // from disk: may be anything
    last_flushed_end_timestamp_ms_ = std::min(last_flushed_end_timestamp_ms_, begin_ms > 0 ? begin_ms - 1 : 0);
    MQ_RETURN_IF_ERROR(remove_file(file, "points at or past the recovered commitlog end " +
                                             commit_log_end.to_string()));
    files_.pop_back();
  }
  MQ_ASSERT(redispatch_from <= commit_log_end);
  return redispatch_from;
}

Status IndexService::delete_expired(PhyOffset commitlog_min) {
  MQ_ASSERT(loaded_);
  while (files_.size() > 1 && files_.front()->header().end_phy_offset < commitlog_min) {  // never the newest
    MQ_RETURN_IF_ERROR(remove_file(files_.front(), "expired below commitlog min " + commitlog_min.to_string()));
    files_.erase(files_.begin());
  }
  return Status::Ok();
}

void IndexService::flush(std::function<void(Status)> done) {
  std::vector<std::shared_ptr<IndexFile>> dirty;
  for (const auto& file : files_) {
    if (file->has_unflushed_writes()) dirty.push_back(file);
  }
  flush_files(std::move(dirty), std::move(done));
}

void IndexService::flush_files(std::vector<std::shared_ptr<IndexFile>> files, std::function<void(Status)> done) {
  const uint64_t dir_target = dir_changes_;
  const bool sync_dir = dir_target > dir_changes_synced_;
  const bool sync_parent = parent_needs_sync_;
  const size_t count = files.size() + (sync_dir ? 1 : 0) + (sync_parent ? 1 : 0);
  if (count == 0) {
    env_.executor().post([done = std::move(done)] { done(Status::Ok()); });
    return;
  }
  struct Pending {
    size_t remaining;
    Status first_error;
    std::function<void(Status)> done;
  };
  auto pending = std::make_shared<Pending>(Pending{count, Status::Ok(), std::move(done)});
  auto on_one = lifetime_.guard([this, pending, files, dir_target, sync_dir, sync_parent](Status status) {
    if (!status.ok() && pending->first_error.ok()) pending->first_error = status;
    MQ_ASSERT(pending->remaining > 0);
    if (--pending->remaining > 0) return;
    if (pending->first_error.ok()) {
      if (sync_dir) dir_changes_synced_ = std::max(dir_changes_synced_, dir_target);
      if (sync_parent) parent_needs_sync_ = false;
      for (const auto& file : files) {
        if (file->is_full()) {
          last_flushed_end_timestamp_ms_ = std::max(last_flushed_end_timestamp_ms_, file->header().end_timestamp_ms);
        }
      }
    }
    pending->done(pending->first_error);
  });
  if (sync_parent) env_.files().sync_dir(env::parent_dir(dir_), on_one);
  if (sync_dir) env_.files().sync_dir(dir_, on_one);
  for (const auto& file : files) {
    // Write-behind: the buffered entries, slots and header reach the file
    // before its sync, so the sync (and the checkpoint after it) covers them.
    if (Status written = file->write_back(); !written.ok()) {
      MQ_LOG(kError, kIndexServiceLog,
             "writing back " << file->path() << ": " << written.to_string()
                             << " (its entries stay buffered and are retried at the next flush)");
      env_.executor().post([on_one, written]() mutable { on_one(std::move(written)); });
      continue;
    }
    file->flush(on_one);
  }
}

Status IndexService::destroy() {
  while (!files_.empty()) {
    MQ_RETURN_IF_ERROR(remove_file(files_.back(), "destroying the index"));
    files_.pop_back();
  }
  return Status::Ok();
}

}  // namespace mqlab::store
