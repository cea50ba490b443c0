#include "broker/store/allocate_mapped_file_service.h"

#include <vector>

#include "broker/common/log.h"
#include "broker/store/mapped_file.h"

namespace mqlab::store {

bool AllocateMappedFileService::is_temp_name(std::string_view name) {
  for (const std::string_view suffix : {kTempSuffix, kRecycledSuffix}) {
    if (name.ends_with(suffix) && MappedFile::parse_file_name(name.substr(0, name.size() - suffix.size()))) {
      return true;
    }
  }
  return false;
}

AllocateMappedFileService::AllocateMappedFileService(env::Env& env, bool warm) : env_(env), warm_(warm) {}

void AllocateMappedFileService::request(const std::string& path, int64_t file_size,
                                        const std::string& recycled_from) {
  MQ_ASSERT(file_size > 0);
  // Only the next segment is worth a file on disk; anything else was for a
  // log position that truncation or destruction took away.
  std::vector<std::string> ready_elsewhere;
  for (auto& [other, entry] : entries_) {
    if (other == path) continue;
    if (entry.state == State::kReady) ready_elsewhere.push_back(other);
    abandon(entry);  // the rest go when start() or on_prepared() sees it
  }
  for (const std::string& other : ready_elsewhere) discard(other);
  auto it = entries_.find(path);
  if (it != entries_.end()) {
    MQ_ASSERT(it->second.file_size == file_size);
    // Still running for the same segment: wanted again.
    if (it->second.state == State::kAbandoned) {
      it->second.state = it->second.file ? State::kPreparing : State::kOpening;
    }
    // Already on its way: the recycled file is not needed for it.
    if (!recycled_from.empty()) remove_file(recycled_from);
    return;
  }
  Entry entry;
  entry.temp_path = path + std::string(kTempSuffix);
  entry.file_size = file_size;
  entry.recycled_from = recycled_from;
  entry.generation = ++generations_;
  entries_.emplace(path, std::move(entry));
  // Opening the file is a syscall that may create an inode: its own task,
  // not the put that asked.
  env_.executor().post(lifetime_.guard([this, path] { start(path); }));
}

void AllocateMappedFileService::abandon(Entry& entry) {
  if (entry.state == State::kPreparing && !entry.stopped) {
    // Stop the Env's writes into a file nobody will take: they would compete
    // for the disk with the put path creating the segment instead.
    (void)env_.stop_preparing_file(entry.file);
    entry.stopped = true;
  }
  entry.state = State::kAbandoned;
}

void AllocateMappedFileService::start(const std::string& path) {
  auto it = entries_.find(path);
  MQ_ASSERT(it != entries_.end());
  Entry& entry = it->second;
  MQ_ASSERT(entry.file == nullptr);
  if (entry.state == State::kAbandoned) {
    if (!entry.recycled_from.empty()) remove_file(entry.recycled_from);
    entries_.erase(it);  // nothing made yet
    return;
  }
  if (!entry.recycled_from.empty() && adopt_recycled(entry)) return;
  Result<std::shared_ptr<env::File>> file =
      env_.files().open(entry.temp_path, env::OpenOptions{.create = true, .exclusive = false, .truncate = true});
  if (!file.ok()) {
    MQ_LOG(kWarn, "store", "pre-allocating " << path << " failed: " << file.status().to_string()
                                             << "; the segment will be created when the log reaches it");
    entries_.erase(it);
    return;
  }
  entry.file = *file;
  entry.state = State::kPreparing;
  env_.prepare_file(entry.file, static_cast<uint64_t>(entry.file_size), warm_,
                    lifetime_.guard([this, path, generation = entry.generation](Status status) {
                      on_prepared(path, generation, std::move(status));
                    }));
}

bool AllocateMappedFileService::adopt_recycled(Entry& entry) {
  MQ_ASSERT(entry.state == State::kOpening && entry.file == nullptr);
  const std::string recycled = std::move(entry.recycled_from);
  entry.recycled_from.clear();
  if (Status status = env_.files().rename(recycled, entry.temp_path); !status.ok()) {
    MQ_LOG(kWarn, "store", "reusing recycled " << recycled << ": " << status.to_string() << "; preparing a new file");
    remove_file(recycled);
    return false;
  }
  Result<std::shared_ptr<env::File>> file = env_.files().open(entry.temp_path, env::OpenOptions{});
  Result<uint64_t> size = file.ok() ? (*file)->size() : Result<uint64_t>(file.status());
  if (!size.ok() || *size != static_cast<uint64_t>(entry.file_size)) {
    // Another segment size (mappedFileSizeCommitLog changed): not reusable.
    MQ_LOG(kWarn, "store", "recycled " << recycled << " is not a " << entry.file_size << "-byte segment ("
                                       << (size.ok() ? std::to_string(*size) + " bytes" : size.status().to_string())
                                       << "); preparing a new file");
    remove_file(entry.temp_path);
    return false;
  }
  entry.file = *file;
  entry.state = State::kReady;
  ++recycled_;
  MQ_LOG(kInfo, "store", "next segment made from recycled " << recycled << " (no zeros written)");
  return true;
}

void AllocateMappedFileService::remove_file(const std::string& path) {
  if (Status status = env_.files().remove(path); !status.ok()) {
    MQ_LOG(kWarn, "store", "removing the unused file " << path << ": " << status.to_string());
  }
}

void AllocateMappedFileService::on_prepared(const std::string& path, uint64_t generation, Status status) {
  auto it = entries_.find(path);
  // Taken half prepared (take() stopped it and used the file), and perhaps
  // requested afresh since: this completion is no longer anyone's.
  if (it == entries_.end() || it->second.generation != generation) return;
  Entry& entry = it->second;
  MQ_ASSERT(entry.state == State::kPreparing || entry.state == State::kAbandoned);
  if (entry.state == State::kAbandoned) {
    discard(path);
    return;
  }
  if (entry.stopped) {
    // Wanted again after it was stopped: what the Env left in the file is
    // unknown (stopped part way, or completed), so it starts over.
    const int64_t file_size = entry.file_size;
    discard(path);
    request(path, file_size);
    return;
  }
  if (!status.ok()) {
    MQ_LOG(kWarn, "store", "pre-allocating " << path << " failed: " << status.to_string()
                                             << "; the segment will be created when the log reaches it");
    discard(path);
    return;
  }
  entry.state = State::kReady;
}

void AllocateMappedFileService::discard(const std::string& path) {
  auto it = entries_.find(path);
  MQ_ASSERT(it != entries_.end());
  const std::string temp_path = it->second.temp_path;
  entries_.erase(it);
  remove_file(temp_path);
}

bool AllocateMappedFileService::preparing(const std::string& path) const {
  const auto it = entries_.find(path);
  if (it == entries_.end()) return false;
  const Entry& entry = it->second;
  return entry.state == State::kOpening || (entry.state == State::kPreparing && !entry.stopped);
}

std::shared_ptr<env::File> AllocateMappedFileService::take(const std::string& path) {
  auto it = entries_.find(path);
  if (it != entries_.end() && it->second.state == State::kPreparing && !it->second.stopped) {
    // Still being pre-touched: stopped, it is taken as it is when the Env
    // has allocated it (the put path would otherwise create and allocate
    // another file while this one's writes compete for the disk).
    it->second.stopped = true;
    if (env_.stop_preparing_file(it->second.file)) {
      std::shared_ptr<env::File> file = adopt(it);
      if (file != nullptr) ++taken_half_prepared_;
      return file;
    }
  }
  if (it == entries_.end() || it->second.state != State::kReady) {
    ++missed_;
    if (it != entries_.end()) abandon(it->second);  // removed when the Env is done with it
    return nullptr;
  }
  return adopt(it);
}

std::shared_ptr<env::File> AllocateMappedFileService::adopt(std::map<std::string, Entry>::iterator it) {
  const std::string path = it->first;
  const std::string temp_path = it->second.temp_path;
  entries_.erase(it);
  if (Status status = env_.files().rename(temp_path, path); !status.ok()) {
    MQ_LOG(kWarn, "store", "renaming pre-allocated " << temp_path << " into place: " << status.to_string());
    (void)env_.files().remove(temp_path);
    ++missed_;
    return nullptr;
  }
  // Reopened under its segment name, so the File's path names the segment.
  Result<std::shared_ptr<env::File>> file = env_.files().open(path, env::OpenOptions{});
  if (!file.ok()) {
    MQ_LOG(kWarn, "store", "reopening pre-allocated " << path << ": " << file.status().to_string());
    ++missed_;
    return nullptr;
  }
  ++taken_;
  return *file;
}

bool AllocateMappedFileService::has_ready() const {
  for (const auto& [path, entry] : entries_) {
    if (entry.state == State::kReady) return true;
  }
  return false;
}

void AllocateMappedFileService::abandon_all() {
  std::vector<std::string> ready;
  for (auto& [path, entry] : entries_) {
    if (entry.state == State::kReady) ready.push_back(path);
    abandon(entry);
  }
  for (const std::string& path : ready) discard(path);
}

}  // namespace mqlab::store
