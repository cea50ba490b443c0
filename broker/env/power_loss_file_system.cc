#include "broker/env/power_loss_file_system.h"

#include <algorithm>
#include <set>
#include <utility>

#include "broker/env/path.h"

namespace mqlab::env {

// One undone change: what the file held in [offset, offset + old_bytes.size())
// and how long it was, before the change with this sequence number.
struct UndoEntry {
  uint64_t sequence = 0;
  uint64_t size_before = 0;
  uint64_t offset = 0;
  std::vector<uint8_t> old_bytes;
};

struct PowerLossFileSystem::FileState {
  std::string path;
  std::string dir;
  std::shared_ptr<File> inner;  // kept open so cut_power() can write through it
  std::deque<UndoEntry> undo;   // increasing sequence
  uint64_t next_sequence = 1;
  bool created_unsynced = false;  // created here; no directory sync since

  // Records the old contents of [offset, offset + length) and the size,
  // before a change there. Requires: inner is open.
  Status record(uint64_t offset, uint64_t length) {
    MQ_ASSERT(inner != nullptr);
    MQ_ASSIGN_OR_RETURN(const uint64_t size, inner->size());
    UndoEntry entry;
    entry.sequence = next_sequence++;
    entry.size_before = size;
    entry.offset = offset;
    if (offset < size) {
      entry.old_bytes.resize(static_cast<size_t>(std::min(length, size - offset)));
      MQ_ASSIGN_OR_RETURN(const size_t got, inner->pread(offset, entry.old_bytes));
      entry.old_bytes.resize(got);
    }
    MQ_ASSERT(undo.empty() || undo.back().sequence < entry.sequence);
    undo.push_back(std::move(entry));
    return Status::Ok();
  }

  // A sync issued when next_sequence was `covered` completed ok: every change
  // before it is durable.
  void made_durable(uint64_t covered) {
    while (!undo.empty() && undo.front().sequence < covered) undo.pop_front();
  }

  // Applies the undo log newest first; returns the bytes written back.
  Result<int64_t> revert() {
    int64_t restored = 0;
    for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
      MQ_RETURN_IF_ERROR(inner->truncate(it->size_before));
      if (!it->old_bytes.empty()) MQ_RETURN_IF_ERROR(inner->pwrite(it->offset, it->old_bytes));
      restored += static_cast<int64_t>(it->old_bytes.size());
    }
    undo.clear();
    return restored;
  }
};

namespace {

// Not map_for_appends: a copy into a mapping would bypass the pwrite whose
// old bytes this file records, so the default (declined) stays.
class PowerLossFile final : public File {
 public:
  PowerLossFile(std::shared_ptr<File> inner, std::shared_ptr<PowerLossFileSystem::FileState> state)
      : inner_(std::move(inner)), state_(std::move(state)) {
    MQ_ASSERT(inner_ != nullptr);
    MQ_ASSERT(state_ != nullptr);
  }

  const std::string& path() const override { return inner_->path(); }

  Status pwrite(uint64_t offset, std::span<const uint8_t> data) override {
    MQ_RETURN_IF_ERROR(state_->record(offset, data.size()));
    return inner_->pwrite(offset, data);
  }
  Result<size_t> pread(uint64_t offset, std::span<uint8_t> out) override { return inner_->pread(offset, out); }
  Status truncate(uint64_t size) override {
    MQ_ASSIGN_OR_RETURN(const uint64_t current, inner_->size());
    MQ_RETURN_IF_ERROR(state_->record(size, current > size ? current - size : 0));
    return inner_->truncate(size);
  }
  Result<uint64_t> size() override { return inner_->size(); }
  Status allocate(uint64_t size) override {
    MQ_RETURN_IF_ERROR(state_->record(size, 0));  // only the size changes; new blocks are zeros
    return inner_->allocate(size);
  }
  void sync(SyncCallback done) override {
    MQ_ASSERT(done != nullptr);
    // Changes recorded so far are the ones this fdatasync covers.
    const uint64_t covered = state_->next_sequence;
    inner_->sync([state = state_, covered, done = std::move(done)](Status status) {
      if (status.ok()) state->made_durable(covered);
      done(std::move(status));
    });
  }
  // Where syncs queue changes nothing this file records.
  void isolate_syncs() override { inner_->isolate_syncs(); }
  void sync_on_caller() override { inner_->sync_on_caller(); }

 private:
  const std::shared_ptr<File> inner_;
  const std::shared_ptr<PowerLossFileSystem::FileState> state_;
};

}  // namespace

PowerLossFileSystem::PowerLossFileSystem(FileSystem& inner) : inner_(inner) {}

PowerLossFileSystem::~PowerLossFileSystem() = default;

Result<std::shared_ptr<File>> PowerLossFileSystem::open(const std::string& path, OpenOptions options) {
  MQ_ASSERT(!cut_);
  const bool existed = inner_.exists(path);
  // O_TRUNC is done as a truncate below, so its lost bytes are recorded.
  OpenOptions without_truncate = options;
  without_truncate.truncate = false;
  MQ_ASSIGN_OR_RETURN(std::shared_ptr<File> inner, inner_.open(path, without_truncate));
  std::shared_ptr<FileState>& state = files_[path];
  if (!state || !existed) {
    // New here, or removed behind our back and made again: start afresh.
    state = std::make_shared<FileState>();
    state->path = path;
    state->dir = parent_dir(path);
    state->inner = inner;
    state->created_unsynced = !existed;
  }
  auto file = std::make_shared<PowerLossFile>(std::move(inner), state);
  if (options.truncate) MQ_RETURN_IF_ERROR(file->truncate(0));
  return std::shared_ptr<File>(std::move(file));
}

Status PowerLossFileSystem::remove(const std::string& path) {
  MQ_ASSERT(!cut_);
  MQ_RETURN_IF_ERROR(inner_.remove(path));
  files_.erase(path);  // a removal is not undone (see the header)
  return Status::Ok();
}

Status PowerLossFileSystem::rename(const std::string& from, const std::string& to) {
  MQ_ASSERT(!cut_);
  MQ_RETURN_IF_ERROR(inner_.rename(from, to));
  files_.erase(to);
  auto it = files_.find(from);
  if (it != files_.end()) {
    std::shared_ptr<FileState> state = std::move(it->second);
    files_.erase(it);
    state->path = to;
    state->dir = parent_dir(to);
    files_[to] = std::move(state);
  }
  return Status::Ok();
}

void PowerLossFileSystem::sync_dir(const std::string& dir, SyncCallback done) {
  MQ_ASSERT(done != nullptr);
  // The files whose entries this sync makes durable: created before it.
  std::vector<std::shared_ptr<FileState>> entries;
  for (const auto& [path, state] : files_) {
    if (state->created_unsynced && state->dir == dir) entries.push_back(state);
  }
  inner_.sync_dir(dir, [entries = std::move(entries), done = std::move(done)](Status status) {
    if (status.ok()) {
      for (const auto& state : entries) state->created_unsynced = false;
    }
    done(std::move(status));
  });
}

Result<PowerLossStats> PowerLossFileSystem::cut_power() {
  MQ_ASSERT(!cut_);
  cut_ = true;
  PowerLossStats stats;
  std::string errors;
  for (auto& [path, state] : files_) {
    if (state->created_unsynced) {
      const Status removed = inner_.remove(path);
      if (removed.ok() || removed.code() == StatusCode::kNotFound) {
        ++stats.files_removed;
      } else {
        errors += removed.to_string() + "; ";
      }
      continue;
    }
    if (state->undo.empty()) continue;
    stats.undo_entries_applied += static_cast<int64_t>(state->undo.size());
    Result<int64_t> restored = state->revert();
    if (!restored.ok()) {
      errors += restored.status().to_string() + "; ";
      continue;
    }
    ++stats.files_reverted;
    stats.bytes_restored += *restored;
  }
  files_.clear();
  if (!errors.empty()) return Status::IoError("power loss could not revert everything: " + errors);
  return stats;
}

int64_t PowerLossFileSystem::undo_bytes() const {
  int64_t bytes = 0;
  for (const auto& [path, state] : files_) {
    for (const UndoEntry& entry : state->undo) bytes += static_cast<int64_t>(entry.old_bytes.size());
  }
  return bytes;
}

}  // namespace mqlab::env
