// MemoryEnv: a small deterministic env::Env for store unit tests, until the
// simulator's SimDisk can stand in. Files live in memory; the executor is a
// FIFO of tasks plus timers that the test drives with run_all(); the clock
// moves only when a test (or a due timer) moves it.
//
// It models durability the way env.h promises it, so "write, lose power,
// recover" tests mean something: a file's bytes are durable once a sync()
// issued after them completes, a directory entry once sync_dir() of its
// parent completes. power_loss() drops pending tasks and keeps only what was
// durable (an entry survives only if every ancestor directory's entry did).
// "/" always exists durably.
#pragma once

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "broker/env/env.h"
#include "broker/env/in_process_lock_table.h"
#include "broker/env/loopback_network.h"
#include "broker/env/path.h"

namespace mqlab {
// GoogleTest prints PhyOffset and QueueOffset as numbers, not as bytes.
template <typename Tag>
void PrintTo(const StrongOffset<Tag>& offset, std::ostream* out) {
  *out << offset.value();
}
}  // namespace mqlab

namespace mqlab::store::testing {

class MemoryExecutor final : public env::Executor {
 public:
  explicit MemoryExecutor(Nanos& now_ns) : now_ns_(now_ns) {}

  void post(env::Task&& task) override { tasks_.push_back(std::move(task)); }
  env::TimerId run_after(Nanos delay, env::Task&& task) override {
    MQ_ASSERT(delay >= 0);
    const env::TimerId id = ++last_id_;
    timers_.emplace(std::make_pair(now_ns_ + delay, id), std::move(task));
    return id;
  }
  bool cancel(env::TimerId id) override {
    for (auto it = timers_.begin(); it != timers_.end(); ++it) {
      if (it->first.second == id) {
        timers_.erase(it);
        return true;
      }
    }
    return false;
  }

  // Runs the first posted task, if any; returns whether one ran.
  bool run_one() {
    if (tasks_.empty()) return false;
    env::Task task = std::move(tasks_.front());
    tasks_.pop_front();
    task();
    return true;
  }

  // Runs posted tasks, then due timers (moving the clock to them), until
  // nothing is left. Returns how many tasks ran.
  size_t run_all() {
    size_t ran = 0;
    while (!tasks_.empty() || !timers_.empty()) {
      MQ_ASSERT(ran < 10'000'000);  // a task that reposts itself forever
      if (tasks_.empty()) {
        auto first = timers_.begin();
        now_ns_ = std::max(now_ns_, first->first.first);
        tasks_.push_back(std::move(first->second));
        timers_.erase(first);
      }
      env::Task task = std::move(tasks_.front());
      tasks_.pop_front();
      task();
      ++ran;
    }
    return ran;
  }
  void drop_all() {
    tasks_.clear();
    timers_.clear();
  }

 private:
  Nanos& now_ns_;
  std::deque<env::Task> tasks_;
  std::map<std::pair<Nanos, env::TimerId>, env::Task> timers_;  // due, then scheduling order
  env::TimerId last_id_ = env::kNoTimer;
};

class MemoryClock final : public env::Clock {
 public:
  Nanos now_ns() override { return now_ns_; }
  int64_t wall_ms() override { return wall_offset_ms_ + now_ns_ / kNanosPerMilli; }
  void set_wall_ms(int64_t ms) { wall_offset_ms_ = ms - now_ns_ / kNanosPerMilli; }
  void advance(Nanos delta) { now_ns_ += delta; }
  Nanos& now_ref() { return now_ns_; }

 private:
  Nanos now_ns_ = 0;
  int64_t wall_offset_ms_ = 1'700'000'000'000;  // 2023-11-14
};

// One file's contents: what reads see, and what survives a power loss.
struct MemoryInode {
  std::vector<uint8_t> data;
  std::vector<uint8_t> durable;
  bool syncs_isolated = false;  // a handle took File::isolate_syncs
  bool syncs_on_caller = false;  // a handle took File::sync_on_caller
};

class MemoryFile final : public env::File {
 public:
  MemoryFile(std::string path, std::shared_ptr<MemoryInode> inode, env::Executor& executor)
      : path_(std::move(path)), inode_(std::move(inode)), executor_(executor) {}

  const std::string& path() const override { return path_; }
  Status pwrite(uint64_t offset, std::span<const uint8_t> data) override {
    auto& bytes = inode_->data;
    if (bytes.size() < offset + data.size()) bytes.resize(offset + data.size(), 0);
    std::copy(data.begin(), data.end(), bytes.begin() + static_cast<ptrdiff_t>(offset));
    return Status::Ok();
  }
  Result<size_t> pread(uint64_t offset, std::span<uint8_t> out) override {
    const auto& bytes = inode_->data;
    if (offset >= bytes.size()) return size_t{0};
    const size_t n = std::min<size_t>(out.size(), bytes.size() - offset);
    std::copy_n(bytes.begin() + static_cast<ptrdiff_t>(offset), n, out.begin());
    return n;
  }
  Status truncate(uint64_t size) override {
    inode_->data.resize(size, 0);
    return Status::Ok();
  }
  Result<uint64_t> size() override { return static_cast<uint64_t>(inode_->data.size()); }
  Status allocate(uint64_t size) override {
    if (inode_->data.size() < size) inode_->data.resize(size, 0);
    return Status::Ok();
  }
  void sync(env::SyncCallback done) override {
    executor_.post([inode = inode_, snapshot = inode_->data, done = std::move(done)]() mutable {
      inode->durable = std::move(snapshot);
      done(Status::Ok());
    });
  }
  void isolate_syncs() override { inode_->syncs_isolated = true; }
  void sync_on_caller() override { inode_->syncs_on_caller = true; }

 private:
  std::string path_;
  std::shared_ptr<MemoryInode> inode_;
  env::Executor& executor_;
};

class MemoryFileSystem final : public env::FileSystem {
 public:
  explicit MemoryFileSystem(env::Executor& executor) : executor_(executor) {}

  Result<std::shared_ptr<env::File>> open(const std::string& path, env::OpenOptions options) override {
    if (dirs_.count(path)) return Status::InvalidArgument(path + ": is a directory");
    auto it = files_.find(path);
    if (it == files_.end()) {
      if (!options.create) return Status::NotFound(path + ": no such file");
      if (!dirs_.count(env::parent_dir(path))) return Status::NotFound(path + ": no parent directory");
      it = files_.emplace(path, std::make_shared<MemoryInode>()).first;
    } else if (options.create && options.exclusive) {
      return Status::AlreadyExists(path + ": exists");
    }
    if (options.truncate) it->second->data.clear();
    return std::shared_ptr<env::File>(std::make_shared<MemoryFile>(path, it->second, executor_));
  }
  Status remove(const std::string& path) override {
    if (files_.erase(path)) return Status::Ok();
    if (!dirs_.count(path)) return Status::NotFound(path + ": no such file or directory");
    if (!children(path).empty()) return Status::IoError(path + ": directory not empty");
    dirs_.erase(path);
    return Status::Ok();
  }
  Status rename(const std::string& from, const std::string& to) override {
    auto it = files_.find(from);
    if (it == files_.end()) return Status::NotFound(from + ": no such file");
    auto inode = it->second;
    files_.erase(it);
    files_[to] = std::move(inode);
    return Status::Ok();
  }
  Result<std::vector<std::string>> list(const std::string& dir) override {
    if (!dirs_.count(dir)) return Status::NotFound(dir + ": no such directory");
    std::vector<std::string> names;
    for (const std::string& path : children(dir)) names.push_back(env::base_name(path));
    std::sort(names.begin(), names.end());
    return names;
  }
  Status mkdirs(const std::string& dir) override {
    if (files_.count(dir)) return Status::AlreadyExists(dir + ": is a file");
    for (std::string at = dir; !at.empty() && !dirs_.count(at); at = env::parent_dir(at)) dirs_.insert(at);
    return Status::Ok();
  }
  bool exists(const std::string& path) override { return files_.count(path) || dirs_.count(path); }
  bool is_directory(const std::string& path) override { return dirs_.count(path) > 0; }
  void sync_dir(const std::string& dir, env::SyncCallback done) override {
    ++dir_syncs_;
    // The entries as they are now become durable when the sync completes.
    std::map<std::string, std::shared_ptr<MemoryInode>> files;
    std::set<std::string> dirs;
    for (const std::string& path : children(dir)) {
      if (dirs_.count(path)) {
        dirs.insert(path);
      } else {
        files.emplace(path, files_.at(path));
      }
    }
    executor_.post([this, dir, files = std::move(files), dirs = std::move(dirs), done = std::move(done)] {
      std::erase_if(durable_files_, [&](const auto& entry) { return env::parent_dir(entry.first) == dir; });
      std::erase_if(durable_dirs_, [&](const std::string& path) { return env::parent_dir(path) == dir; });
      durable_files_.insert(files.begin(), files.end());
      durable_dirs_.insert(dirs.begin(), dirs.end());
      done(Status::Ok());
    });
  }
  Result<env::SpaceInfo> space(const std::string&) override {
    return env::SpaceInfo{.capacity_bytes = 1ull << 40, .available_bytes = 1ull << 39};
  }
  Result<std::unique_ptr<env::FileLock>> lock(const std::string& path) override {
    MQ_RETURN_IF_ERROR(open(path, env::OpenOptions{.create = true}).status());
    return locks_.try_take(path);
  }

  // Forgets everything not durable. The caller drops pending tasks first.
  void power_loss() {
    std::set<std::string> dirs{"/"};
    for (const std::string& dir : durable_dirs_) {  // sorted: parents before children
      if (dirs.count(env::parent_dir(dir))) dirs.insert(dir);
    }
    std::map<std::string, std::shared_ptr<MemoryInode>> files;
    for (const auto& [path, inode] : durable_files_) {
      if (!dirs.count(env::parent_dir(path))) continue;
      inode->data = inode->durable;
      files.emplace(path, inode);
    }
    dirs_ = dirs;
    durable_dirs_ = std::move(dirs);
    files_ = files;
    durable_files_ = std::move(files);
  }
  // Test setup: a directory (and its ancestors) that exists durably.
  void make_durable_dir(const std::string& dir) {
    for (std::string at = dir; !at.empty(); at = env::parent_dir(at)) {
      dirs_.insert(at);
      durable_dirs_.insert(at);
      if (at == "/") break;
    }
  }
  // Test access to a file's current bytes (nullptr when missing).
  std::vector<uint8_t>* bytes(const std::string& path) {
    auto it = files_.find(path);
    return it == files_.end() ? nullptr : &it->second->data;
  }
  // Whether a handle of the file took File::isolate_syncs (false when missing).
  bool syncs_isolated(const std::string& path) const {
    auto it = files_.find(path);
    return it != files_.end() && it->second->syncs_isolated;
  }
  // Whether a handle of the file took File::sync_on_caller (false when missing).
  bool syncs_on_caller(const std::string& path) const {
    auto it = files_.find(path);
    return it != files_.end() && it->second->syncs_on_caller;
  }
  int dir_syncs() const { return dir_syncs_; }
  void sync_dir_isolated(const std::string& dir, env::SyncCallback done) override {
    ++isolated_dir_syncs_;
    sync_dir(dir, std::move(done));
  }
  int isolated_dir_syncs() const { return isolated_dir_syncs_; }

 private:
  std::vector<std::string> children(const std::string& dir) const {
    std::vector<std::string> found;
    for (const auto& [path, inode] : files_) {
      if (env::parent_dir(path) == dir) found.push_back(path);
    }
    for (const std::string& path : dirs_) {
      if (path != dir && env::parent_dir(path) == dir) found.push_back(path);
    }
    return found;
  }

  env::Executor& executor_;
  std::map<std::string, std::shared_ptr<MemoryInode>> files_;
  std::set<std::string> dirs_{"/"};
  std::map<std::string, std::shared_ptr<MemoryInode>> durable_files_;
  std::set<std::string> durable_dirs_{"/"};
  int dir_syncs_ = 0;
  int isolated_dir_syncs_ = 0;
  env::InProcessLockTable locks_;
};

class MemoryEnv final : public env::Env {
 public:
  explicit MemoryEnv(uint64_t seed = 1) : random_(seed) {}

  env::Clock& clock() override { return clock_; }
  env::Executor& executor() override { return executor_; }
  env::FileSystem& files() override { return files_; }
  env::Network& network() override { return network_; }
  env::Random& random() override { return random_; }

  MemoryClock& memory_clock() { return clock_; }
  MemoryFileSystem& memory_files() { return files_; }
  size_t run_all() { return executor_.run_all(); }
  bool run_one() { return executor_.run_one(); }
  // Preparing is one posted task (Env's default). A stop is recorded (the
  // paths of the files whose preparation was stopped); with
  // stop_allocates(true) it also allocates the file at once and says so, as
  // a real Env stopping a preparation part way through its pre-touch does.
  void prepare_file(std::shared_ptr<env::File> file, uint64_t size, bool pretouch, env::SyncCallback done) override {
    preparing_sizes_[file.get()] = size;
    env::Env::prepare_file(std::move(file), size, pretouch, std::move(done));
  }
  bool stop_preparing_file(const std::shared_ptr<env::File>& file) override {
    stopped_preparations_.push_back(file->path());
    if (!stop_allocates_) return false;
    MQ_ASSERT(preparing_sizes_.count(file.get()) == 1);
    const Status allocated = file->allocate(preparing_sizes_.at(file.get()));
    MQ_ASSERT(allocated.ok());
    return true;
  }
  void stop_allocates(bool allocates) { stop_allocates_ = allocates; }
  const std::vector<std::string>& stopped_preparations() const { return stopped_preparations_; }
  // Pending completions are lost with the machine.
  void power_loss() {
    executor_.drop_all();
    files_.power_loss();
  }

 private:
  MemoryClock clock_;
  MemoryExecutor executor_{clock_.now_ref()};
  MemoryFileSystem files_{executor_};
  env::LoopbackNetwork network_{executor_};
  env::Random random_;
  std::vector<std::string> stopped_preparations_;
  bool stop_allocates_ = false;
  std::map<const env::File*, uint64_t> preparing_sizes_;  // the size each prepare_file asked for
};

}  // namespace mqlab::store::testing
