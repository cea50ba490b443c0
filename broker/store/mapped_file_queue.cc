#include "broker/store/mapped_file_queue.h"

#include <algorithm>

#include "broker/common/log.h"
#include "broker/env/path.h"

namespace mqlab::store {

MappedFileQueue::MappedFileQueue(env::Env& env, std::string dir, int64_t file_size)
    : env_(env), dir_(std::move(dir)), file_size_(file_size) {
  MQ_ASSERT(file_size_ > 0);
  MQ_ASSERT(!dir_.empty());
}

Status MappedFileQueue::load() {
  MQ_ASSERT(files_.empty());
  MQ_RETURN_IF_ERROR(env_.files().mkdirs(dir_));
  MQ_ASSIGN_OR_RETURN(std::vector<std::string> names, env_.files().list(dir_));
  for (const std::string& name : names) {  // sorted: 20-digit names sort numerically
    const std::string path = env::join_path(dir_, name);
    if (AllocateMappedFileService::is_temp_name(name)) {
      // A segment being pre-allocated, or an expired one kept for reuse,
      // when the process stopped: never part of the log.
      MQ_LOG(kInfo, "store", "removing unfinished pre-allocated or recycled file " << path);
      MQ_RETURN_IF_ERROR(env_.files().remove(path));
      ++dir_changes_;
      continue;
    }
    const auto offset = MappedFile::parse_file_name(name);
    if (!offset || env_.files().is_directory(path)) {
      MQ_LOG(kWarn, "store", "ignoring stray entry " << path << " (not a 20-digit segment name)");
      continue;
    }
    if (*offset % file_size_ != 0) {
      MQ_LOG(kWarn, "store", "ignoring " << path << ": offset not a multiple of the segment size " << file_size_);
      continue;
    }
    if (!files_.empty() && *offset != files_.back()->file_from_offset() + file_size_) {
      MQ_LOG(kError, "store", "segment gap before " << path << ": expected offset "
                                                   << files_.back()->file_from_offset() + file_size_
                                                   << "; this file and later ones are ignored");
      break;
    }
    MQ_ASSIGN_OR_RETURN(std::shared_ptr<env::File> file, env_.files().open(path, env::OpenOptions{}));
    hint_syncs(*file);
    MQ_ASSIGN_OR_RETURN(uint64_t size, file->size());
    if (static_cast<int64_t>(size) > file_size_) {
      return Status::Corruption(path + ": size " + std::to_string(size) + " exceeds the configured segment size " +
                                std::to_string(file_size_) + " (was the store written with another mappedFileSize?)");
    }
    if (static_cast<int64_t>(size) < file_size_) {
      MQ_LOG(kWarn, "store", path << ": short segment (" << size << " bytes), extending to " << file_size_);
      MQ_RETURN_IF_ERROR(extend(*file));
    }
    auto mapped = std::make_shared<MappedFile>(std::move(file), *offset, file_size_);
    if (write_behind_bytes_ > 0) mapped->enable_write_behind(write_behind_bytes_, keep_last_commit_);
    mapped->set_commit_on_flush(commit_on_flush_);
    mapped->set_end_marker(recycling_);
    mapped->set_wrote_position(file_size_);
    mapped->set_flushed_position(file_size_);
    files_.push_back(std::move(mapped));
  }
  flushed_where_ = max_offset();
  // A crashed predecessor may have created entries it never made durable:
  // the first flush after a load syncs the directory.
  ++dir_changes_;
  return Status::Ok();
}

Result<std::shared_ptr<MappedFile>> MappedFileQueue::create_file(int64_t start_offset) {
  MQ_ASSERT(start_offset >= 0);
  MQ_ASSERT(start_offset % file_size_ == 0);
  const std::string path = env::join_path(dir_, MappedFile::file_name(start_offset));
  std::shared_ptr<env::File> file = allocator_ ? allocator_->take(path) : nullptr;
  if (file == nullptr) {
    MQ_ASSIGN_OR_RETURN(file,
                        env_.files().open(path, env::OpenOptions{.create = true, .exclusive = false, .truncate = true}));
    if (Status status = extend(*file); !status.ok()) {
      (void)env_.files().remove(path);  // leave no half-made segment behind
      return status;
    }
  }
  hint_syncs(*file);
  ++dir_changes_;
  auto mapped = std::make_shared<MappedFile>(std::move(file), start_offset, file_size_);
  if (write_behind_bytes_ > 0) mapped->enable_write_behind(write_behind_bytes_, keep_last_commit_);
  mapped->set_commit_on_flush(commit_on_flush_);
  mapped->set_end_marker(recycling_);
  return mapped;
}

void MappedFileQueue::use_sparse_files() {
  MQ_ASSERT(files_.empty());
  MQ_ASSERT(allocator_ == nullptr);  // pre-allocation is the opposite
  sparse_files_ = true;
}

Status MappedFileQueue::extend(env::File& file) const {
  const auto size = static_cast<uint64_t>(file_size_);
  if (!sparse_files_) return file.allocate(size);
  // Never shrinks: a file already this long keeps its bytes.
  MQ_ASSIGN_OR_RETURN(const uint64_t current, file.size());
  return current >= size ? Status::Ok() : file.truncate(size);
}

void MappedFileQueue::enable_recycling() {
  MQ_ASSERT(allocator_ != nullptr);  // recycled files are handed over as pre-allocations
  MQ_ASSERT(files_.empty());
  recycling_ = true;
}

void MappedFileQueue::hint_syncs(env::File& file) const {
  if (isolate_syncs_) file.isolate_syncs();
  if (syncs_on_caller_) file.sync_on_caller();
}

void MappedFileQueue::isolate_syncs() {
  MQ_ASSERT(files_.empty());  // each file hears it before its first sync
  isolate_syncs_ = true;
}

void MappedFileQueue::sync_on_caller() {
  MQ_ASSERT(files_.empty());  // each file hears it before its first sync
  syncs_on_caller_ = true;
}

void MappedFileQueue::enable_write_behind(size_t max_pending_bytes, bool keep_last_commit) {
  MQ_ASSERT(max_pending_bytes > 0);
  write_behind_bytes_ = max_pending_bytes;
  keep_last_commit_ = keep_last_commit;
  for (const auto& file : files_) file->enable_write_behind(max_pending_bytes, keep_last_commit);
}

void MappedFileQueue::set_commit_on_flush(bool commit_on_flush) {
  commit_on_flush_ = commit_on_flush;
  for (const auto& file : files_) file->set_commit_on_flush(commit_on_flush);
}

int64_t MappedFileQueue::committed_offset() const {
  if (files_.empty()) return flushed_where_;
  const int64_t committed = files_.back()->file_from_offset() + files_.back()->committed_position();
  MQ_ASSERT(committed <= max_offset());
  return committed;
}

Status MappedFileQueue::commit() {
  if (files_.empty()) return Status::Ok();
  for (size_t i = 0; i + 1 < files_.size(); ++i) MQ_ASSERT(!files_[i]->has_pending());
  return files_.back()->commit();
}

void MappedFileQueue::enable_preallocation(bool warm) {
  MQ_ASSERT(allocator_ == nullptr);
  allocator_ = std::make_unique<AllocateMappedFileService>(env_, warm);
}

bool MappedFileQueue::request_first_file(int64_t start_offset) {
  MQ_ASSERT(start_offset >= 0 && start_offset % file_size_ == 0);
  if (allocator_ == nullptr || !files_.empty()) return false;
  first_file_offset_ = start_offset;
  allocator_->request(env::join_path(dir_, MappedFile::file_name(start_offset)), file_size_);
  return true;
}

bool MappedFileQueue::first_file_preparing() const {
  return allocator_ != nullptr && files_.empty() && first_file_offset_ >= 0 &&
         allocator_->preparing(env::join_path(dir_, MappedFile::file_name(first_file_offset_)));
}

Result<MappedFile*> MappedFileQueue::last_file_or_create(int64_t start_offset) {
  if (!files_.empty() && !files_.back()->is_full()) {
    // One pointer compare per put: the last file of a load is mapped at its first append.
    if (map_appends_ && mapped_file_ != files_.back()->file()) map_last_file();
    // One integer compare per put; a request once per segment.
    const int64_t next = files_.back()->file_from_offset() + file_size_;
    if (allocator_ && requested_next_ != next) {
      requested_next_ = next;
      std::string recycled;
      if (recycled_ && dir_changes_synced_ >= recycled_->dir_change) {
        recycled = std::move(recycled_->path);
        recycled_.reset();
      }
      allocator_->request(env::join_path(dir_, MappedFile::file_name(next)), file_size_, recycled);
    }
    return files_.back().get();
  }
  // The full file's buffered tail goes first, so only the last file buffers.
  if (!files_.empty()) MQ_RETURN_IF_ERROR(files_.back()->commit());
  const int64_t next = files_.empty() ? start_offset : files_.back()->file_from_offset() + file_size_;
  if (files_.empty()) flushed_where_ = next;
  MQ_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> created, create_file(next));
  files_.push_back(std::move(created));
  if (map_appends_) map_last_file();
  return files_.back().get();
}

void MappedFileQueue::map_last_file() {
  MQ_ASSERT(map_appends_ && !files_.empty());
  // The full file's pages are written: its munmap is the Env's, off this thread.
  release_mapping();
  mapped_file_ = files_.back()->file();
  // Allocated to file_size_ at creation or load; an Env that declines
  // (or a failed mmap) leaves pwrite as it was.
  (void)mapped_file_->map_for_appends(static_cast<uint64_t>(file_size_));
}

void MappedFileQueue::release_mapping() {
  if (mapped_file_ == nullptr) return;
  mapped_file_->unmap();
  mapped_file_.reset();
}

std::shared_ptr<MappedFile> MappedFileQueue::find_file(int64_t offset) const {
  if (files_.empty() || offset < min_offset()) return nullptr;
  const int64_t index = (offset - files_.front()->file_from_offset()) / file_size_;
  if (index >= static_cast<int64_t>(files_.size())) return nullptr;
  const auto& file = files_[static_cast<size_t>(index)];
  MQ_ASSERT(file->file_from_offset() <= offset && offset < file->file_from_offset() + file_size_);
  return file;
}

int64_t MappedFileQueue::min_offset() const { return files_.empty() ? 0 : files_.front()->file_from_offset(); }

int64_t MappedFileQueue::max_offset() const {
  if (files_.empty()) return flushed_where_;
  return files_.back()->file_from_offset() + files_.back()->wrote_position();
}

void MappedFileQueue::set_flushed_where(int64_t offset) {
  MQ_ASSERT(offset >= 0);
  flushed_where_ = offset;
}

Result<size_t> MappedFileQueue::read(int64_t offset, std::span<uint8_t> out) const {
  const std::shared_ptr<MappedFile> file = find_file(offset);
  if (!file) return size_t{0};
  const int64_t position = offset - file->file_from_offset();
  const int64_t available = file->wrote_position() - position;
  if (available <= 0) return size_t{0};
  const size_t length = std::min(out.size(), static_cast<size_t>(available));
  return file->read(position, out.first(length));
}

void MappedFileQueue::flush(std::function<void(Status)> done) {
  // Without commit on flush, the buffered tail stays out of the files: the
  // flush covers only what they hold.
  const int64_t target = commit_on_flush_ ? max_offset() : committed_offset();
  std::vector<std::shared_ptr<MappedFile>> to_sync;
  for (const auto& file : files_) {
    if (file->needs_sync()) to_sync.push_back(file);
  }
  const uint64_t dir_changes = dir_changes_;
  const bool sync_dir = dir_changes_ > dir_changes_synced_;
  if (to_sync.empty() && !sync_dir) {
    env_.executor().post([done = std::move(done)] { done(Status::Ok()); });
    return;
  }
  // Every sync must succeed before flushed_where moves; collect them all.
  struct Pending {
    size_t remaining;
    Status first_error;
    std::function<void(Status)> done;
  };
  auto pending = std::make_shared<Pending>(Pending{to_sync.size() + (sync_dir ? 1 : 0), Status::Ok(), std::move(done)});
  auto on_dir = lifetime_.guard([this, dir_changes](Status status) {
    if (status.ok()) dir_changes_synced_ = std::max(dir_changes_synced_, dir_changes);
  });
  const Nanos started_ns = env_.clock().now_ns();
  auto on_one = lifetime_.guard([this, pending, target, started_ns](Status status) {
    if (!status.ok() && pending->first_error.ok()) pending->first_error = status;
    MQ_ASSERT(pending->remaining > 0);
    if (--pending->remaining > 0) return;
    flush_latency_.record(env_.clock().now_ns() - started_ns);
    if (pending->first_error.ok()) flushed_where_ = std::max(flushed_where_, target);
    pending->done(pending->first_error);
  });
  if (sync_dir) {
    auto on_dir_synced = [on_dir, on_one](Status status) mutable {
      on_dir(status);
      on_one(std::move(status));
    };
    // Apart from other syncs with the files (isolate_syncs): a roll's flush
    // waits for this one too.
    if (isolate_syncs_) {
      env_.files().sync_dir_isolated(dir_, std::move(on_dir_synced));
    } else {
      env_.files().sync_dir(dir_, std::move(on_dir_synced));
    }
  }
  for (const auto& file : to_sync) file->flush(on_one);
}

Status MappedFileQueue::truncate_dirty_files(int64_t offset) {
  MQ_ASSERT(offset >= 0);
  release_mapping();  // files go and the last is cut: its next append maps it again
  while (!files_.empty() && files_.back()->file_from_offset() > offset) {
    const std::string path = files_.back()->path();
    MQ_RETURN_IF_ERROR(env_.files().remove(path));
    MQ_LOG(kWarn, "store", "truncate: removed segment " << path << " past offset " << offset);
    files_.pop_back();
    ++dir_changes_;
  }
  if (!files_.empty()) {
    const auto& last = files_.back();
    const int64_t position = offset - last->file_from_offset();
    MQ_ASSERT(position >= 0 && position <= file_size_);
    // Cut and re-extend: the tail reads as zeros, which recovery treats as
    // the end of the log, so no stale record past the cut can come back.
    MQ_RETURN_IF_ERROR(last->file()->truncate(static_cast<uint64_t>(position)));
    MQ_RETURN_IF_ERROR(extend(*last->file()));
    last->set_wrote_position(position);
    last->set_flushed_position(std::min(last->flushed_position(), position));
    last->mark_needs_sync();
  }
  flushed_where_ = std::min(flushed_where_, offset);
  return Status::Ok();
}

Result<bool> MappedFileQueue::delete_first_file(bool recycle) {
  MQ_ASSERT(files_.size() > 1);  // never the active file
  MQ_ASSERT(mapped_file_ != files_.front()->file());  // only the last file is mapped
  const std::string path = files_.front()->path();
  const bool keep = recycle && recycling_ && !recycled_;
  if (keep) {
    const std::string kept = path + std::string(AllocateMappedFileService::kRecycledSuffix);
    MQ_RETURN_IF_ERROR(env_.files().rename(path, kept));
    recycled_ = Recycled{kept, ++dir_changes_};
  } else {
    MQ_RETURN_IF_ERROR(env_.files().remove(path));
    ++dir_changes_;
  }
  files_.erase(files_.begin());
  return keep;
}

Status MappedFileQueue::drop_recycled() {
  if (!recycled_) return Status::Ok();
  MQ_RETURN_IF_ERROR(env_.files().remove(recycled_->path));
  recycled_.reset();
  ++dir_changes_;
  return Status::Ok();
}

Status MappedFileQueue::destroy() {
  release_mapping();
  if (allocator_) {
    allocator_->abandon_all();
    requested_next_ = -1;
  }
  MQ_RETURN_IF_ERROR(drop_recycled());
  while (!files_.empty()) {
    MQ_RETURN_IF_ERROR(env_.files().remove(files_.back()->path()));
    files_.pop_back();
  }
  ++dir_changes_;
  flushed_where_ = 0;
  return Status::Ok();
}

}  // namespace mqlab::store
