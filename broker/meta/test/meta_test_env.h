// MetaTestEnv: a small in-memory Env for the metadata and checkpoint tests,
// with a power-loss model in the spirit of leveldb's fault_injection_test.
//
// Model: a tree of nodes. A file node keeps its live bytes and the bytes its
// last completed sync() covered; a directory node keeps its live entries and
// the entries its last completed sync_dir() covered. A power loss decides,
// per node, whether its unsynced state reached the disk (kept) or not (lost);
// kLoseUnsynced and kKeepUnsynced are the two extremes, kRandom draws per node
// from a seed. Sync completions are tasks on a FIFO executor the test drains,
// so "crash before the fsync reported" is expressible.
//
// Cut points: every mutating call (open with create/truncate, pwrite,
// truncate, rename, remove, mkdirs) and every sync/sync_dir completion is one
// numbered step. arm_crash_after(k) snapshots the disk right after k more
// steps; crash() then restores that snapshot before applying the power loss,
// while the code under test may have run on past it. After crash() the old
// File handles fail and queued completions are dropped: a new process starts.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/common/log.h"
#include "broker/common/status.h"
#include "broker/env/env.h"
#include "broker/env/in_process_lock_table.h"
#include "broker/env/loopback_network.h"
#include "broker/env/random.h"

namespace mqlab::meta::testenv {

enum class PowerLoss { kLoseUnsynced, kKeepUnsynced, kRandom };

struct MemNode {
  bool is_dir = false;
  std::vector<uint8_t> data;
  std::vector<uint8_t> synced_data;
  std::map<std::string, std::shared_ptr<MemNode>> children;
  std::map<std::string, std::shared_ptr<MemNode>> synced_children;
};

class ManualClock : public env::Clock {
 public:
  Nanos now_ns() override { return now_ns_; }
  int64_t wall_ms() override { return wall_ms_; }
  void advance(Nanos delta) {
    now_ns_ += delta;
    wall_ms_ += delta / kNanosPerMilli;
  }
  void set_wall_ms(int64_t ms) { wall_ms_ = ms; }

 private:
  Nanos now_ns_ = 0;
  int64_t wall_ms_ = 1'700'000'000'000;  // Nov 2023: a plausible store timestamp
};

// FIFO tasks; timers fire only when the test advances time.
class FifoExecutor : public env::Executor {
 public:
  explicit FifoExecutor(ManualClock& clock) : clock_(clock) {}
  void post(env::Task&& task) override { tasks_.push_back(std::move(task)); }
  env::TimerId run_after(Nanos delay, env::Task&& task) override {
    const env::TimerId id = ++last_timer_id_;
    timers_.emplace(std::make_pair(clock_.now_ns() + delay, id), std::move(task));
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
  // Runs tasks (and tasks they post) until none is left; returns how many ran.
  size_t run_all() {
    size_t ran = 0;
    while (!tasks_.empty()) {
      env::Task task = std::move(tasks_.front());
      tasks_.pop_front();
      task();
      ++ran;
    }
    return ran;
  }
  void advance(Nanos delta) {
    const Nanos until = clock_.now_ns() + delta;
    run_all();
    while (!timers_.empty() && timers_.begin()->first.first <= until) {
      auto node = timers_.extract(timers_.begin());
      clock_.advance(node.key().first - clock_.now_ns());
      node.mapped()();
      run_all();
    }
    clock_.advance(until - clock_.now_ns());
  }
  void clear() {
    tasks_.clear();
    timers_.clear();
  }
  size_t pending() const { return tasks_.size(); }

 private:
  ManualClock& clock_;
  std::deque<env::Task> tasks_;
  std::map<std::pair<Nanos, env::TimerId>, env::Task> timers_;
  env::TimerId last_timer_id_ = 0;
};

class MemFileSystem;

class MemFile : public env::File {
 public:
  MemFile(MemFileSystem& fs, std::string path, std::shared_ptr<MemNode> node, uint64_t generation)
      : fs_(fs), path_(std::move(path)), node_(std::move(node)), generation_(generation) {}
  const std::string& path() const override { return path_; }
  Status pwrite(uint64_t offset, std::span<const uint8_t> data) override;
  Result<size_t> pread(uint64_t offset, std::span<uint8_t> out) override;
  Status truncate(uint64_t size) override;
  Result<uint64_t> size() override;
  Status allocate(uint64_t) override { return live(); }
  void sync(env::SyncCallback done) override;

 private:
  Status live() const;
  MemFileSystem& fs_;
  std::string path_;
  std::shared_ptr<MemNode> node_;
  uint64_t generation_;
};

class MemFileSystem : public env::FileSystem {
 public:
  explicit MemFileSystem(FifoExecutor& executor) : executor_(executor), root_(std::make_shared<MemNode>()) {
    root_->is_dir = true;
  }

  // Returns a non-ok Status to fail an operation: (op, path), op one of open,
  // pwrite, truncate, rename, remove, mkdirs, sync, sync_dir.
  std::function<Status(std::string_view op, const std::string& path)> fault;
  // "op path" for every mutating call, in order.
  std::vector<std::string> op_log;

  Result<std::shared_ptr<env::File>> open(const std::string& path, env::OpenOptions options) override {
    std::string name;
    std::shared_ptr<MemNode> parent = lookup_parent(path, &name);
    if (!parent) return Status::NotFound(path + ": no such directory");
    auto it = parent->children.find(name);
    if (it != parent->children.end() && it->second->is_dir) return Status::IoError(path + ": is a directory");
    if (it == parent->children.end() && !options.create) return Status::NotFound(path + ": no such file");
    if (it != parent->children.end() && options.create && options.exclusive) {
      return Status::AlreadyExists(path + ": exists");
    }
    const bool mutates = options.create || options.truncate;
    if (mutates) MQ_RETURN_IF_ERROR(allow("open", path));
    if (it == parent->children.end()) it = parent->children.emplace(name, std::make_shared<MemNode>()).first;
    if (options.truncate) it->second->data.clear();
    if (mutates) record("open", path);
    return std::shared_ptr<env::File>(std::make_shared<MemFile>(*this, path, it->second, generation_));
  }
  Status remove(const std::string& path) override {
    std::string name;
    std::shared_ptr<MemNode> parent = lookup_parent(path, &name);
    if (!parent || !parent->children.contains(name)) return Status::NotFound(path + ": no such file");
    if (!parent->children[name]->children.empty()) return Status::IoError(path + ": directory not empty");
    MQ_RETURN_IF_ERROR(allow("remove", path));
    parent->children.erase(name);
    record("remove", path);
    return Status::Ok();
  }
  Status rename(const std::string& from, const std::string& to) override {
    std::string from_name;
    std::string to_name;
    std::shared_ptr<MemNode> from_parent = lookup_parent(from, &from_name);
    std::shared_ptr<MemNode> to_parent = lookup_parent(to, &to_name);
    if (!from_parent || !from_parent->children.contains(from_name)) return Status::NotFound(from + ": no such file");
    if (!to_parent) return Status::NotFound(to + ": no such directory");
    MQ_RETURN_IF_ERROR(allow("rename", from));
    std::shared_ptr<MemNode> node = from_parent->children[from_name];
    from_parent->children.erase(from_name);
    to_parent->children[to_name] = std::move(node);
    record("rename", from + " " + to);
    return Status::Ok();
  }
  Result<std::vector<std::string>> list(const std::string& dir) override {
    std::shared_ptr<MemNode> node = lookup(dir);
    if (!node || !node->is_dir) return Status::NotFound(dir + ": no such directory");
    std::vector<std::string> names;
    for (const auto& [name, child] : node->children) names.push_back(name);
    return names;
  }
  Status mkdirs(const std::string& dir) override {
    std::shared_ptr<MemNode> node = root_;
    for (const std::string& part : split(dir)) {
      auto it = node->children.find(part);
      if (it == node->children.end()) {
        MQ_RETURN_IF_ERROR(allow("mkdirs", dir));
        auto child = std::make_shared<MemNode>();
        child->is_dir = true;
        it = node->children.emplace(part, std::move(child)).first;
        record("mkdirs", dir);
      }
      if (!it->second->is_dir) return Status::IoError(dir + ": " + part + " is a file");
      node = it->second;
    }
    return Status::Ok();
  }
  bool exists(const std::string& path) override { return lookup(path) != nullptr; }
  bool is_directory(const std::string& path) override {
    std::shared_ptr<MemNode> node = lookup(path);
    return node && node->is_dir;
  }
  void sync_dir(const std::string& dir, env::SyncCallback done) override {
    std::shared_ptr<MemNode> node = lookup(dir);
    if (!node || !node->is_dir) {
      executor_.post([dir, done] { done(Status::NotFound(dir + ": no such directory")); });
      return;
    }
    executor_.post([this, node, entries = node->children, dir, done, generation = generation_] {
      if (generation != generation_) return;
      Status status = allow("sync_dir", dir);
      if (status.ok()) {
        node->synced_children = entries;
        record("sync_dir", dir);
      }
      done(status);
    });
  }
  Result<env::SpaceInfo> space(const std::string&) override {
    return env::SpaceInfo{uint64_t{1} << 40, uint64_t{1} << 39};
  }
  Result<std::unique_ptr<env::FileLock>> lock(const std::string& path) override {
    MQ_RETURN_IF_ERROR(open(path, env::OpenOptions{.create = true}).status());
    return locks_.try_take(path);
  }

  // --- test controls

  // Snapshots the disk after `steps` more steps (now, when 0).
  void arm_crash_after(uint64_t steps) {
    frozen_.reset();
    crash_at_ = steps_ + steps;
    if (steps == 0) freeze();
  }
  uint64_t steps() const { return steps_; }

  // Power loss: restores the armed snapshot (if any), then drops or keeps each
  // node's unsynced state; old handles and queued completions die.
  void crash(PowerLoss mode, uint64_t seed = 0) {
    if (frozen_) root_ = std::move(frozen_);
    frozen_.reset();
    crash_at_.reset();
    executor_.clear();
    ++generation_;
    env::Random random(seed);
    std::set<const MemNode*> seen;
    lose_power(root_, mode, random, seen);
  }

  // Makes the whole tree durable (test setup).
  void sync_everything() {
    std::set<const MemNode*> seen;
    env::Random unused(0);  // kKeepUnsynced never draws
    lose_power(root_, PowerLoss::kKeepUnsynced, unused, seen);
  }

  // Direct access for setup and checks; not steps, no faults.
  std::optional<std::string> read_file(const std::string& path) {
    std::shared_ptr<MemNode> node = lookup(path);
    if (!node || node->is_dir) return std::nullopt;
    return std::string(node->data.begin(), node->data.end());
  }
  void write_file(const std::string& path, std::string_view content) {
    std::string name;
    std::shared_ptr<MemNode> parent = lookup_parent(path, &name);
    MQ_ASSERT_MSG(parent != nullptr, "write_file: no directory for " + path);
    auto& node = parent->children[name];
    if (!node) node = std::make_shared<MemNode>();
    node->data.assign(content.begin(), content.end());
  }

  // --- used by MemFile

  // Before a mutation: the injected fault, if any.
  Status allow(std::string_view op, const std::string& path) { return fault ? fault(op, path) : Status::Ok(); }
  // After a mutation took effect: one step; the armed snapshot includes it.
  void record(std::string_view op, const std::string& path) {
    op_log.push_back(std::string(op) + " " + path);
    ++steps_;
    if (crash_at_ && steps_ == *crash_at_) freeze();
  }
  uint64_t generation() const { return generation_; }
  FifoExecutor& executor() { return executor_; }

 private:
  static std::vector<std::string> split(std::string_view path) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (start <= path.size()) {
      size_t end = path.find('/', start);
      if (end == std::string_view::npos) end = path.size();
      if (end > start) parts.emplace_back(path.substr(start, end - start));
      start = end + 1;
    }
    return parts;
  }
  std::shared_ptr<MemNode> lookup(std::string_view path) const {
    std::shared_ptr<MemNode> node = root_;
    for (const std::string& part : split(path)) {
      if (!node->is_dir) return nullptr;
      auto it = node->children.find(part);
      if (it == node->children.end()) return nullptr;
      node = it->second;
    }
    return node;
  }
  std::shared_ptr<MemNode> lookup_parent(std::string_view path, std::string* name) const {
    std::vector<std::string> parts = split(path);
    if (parts.empty()) return nullptr;
    *name = parts.back();
    std::shared_ptr<MemNode> node = root_;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      auto it = node->children.find(parts[i]);
      if (it == node->children.end() || !it->second->is_dir) return nullptr;
      node = it->second;
    }
    return node;
  }
  static std::shared_ptr<MemNode> clone(const std::shared_ptr<MemNode>& node,
                                        std::map<const MemNode*, std::shared_ptr<MemNode>>& copies) {
    if (auto it = copies.find(node.get()); it != copies.end()) return it->second;
    auto copy = std::make_shared<MemNode>();
    copies[node.get()] = copy;  // before recursing: a node can be reached twice
    copy->is_dir = node->is_dir;
    copy->data = node->data;
    copy->synced_data = node->synced_data;
    for (const auto& [name, child] : node->children) copy->children[name] = clone(child, copies);
    for (const auto& [name, child] : node->synced_children) copy->synced_children[name] = clone(child, copies);
    return copy;
  }
  void freeze() {
    std::map<const MemNode*, std::shared_ptr<MemNode>> copies;
    frozen_ = clone(root_, copies);
  }
  static void lose_power(const std::shared_ptr<MemNode>& node, PowerLoss mode, env::Random& random,
                         std::set<const MemNode*>& seen) {
    if (!seen.insert(node.get()).second) return;
    const bool keep = mode == PowerLoss::kKeepUnsynced || (mode == PowerLoss::kRandom && random.chance(0.5));
    if (node->is_dir) {
      if (keep) node->synced_children = node->children;
      else node->children = node->synced_children;
      for (const auto& [name, child] : node->children) lose_power(child, mode, random, seen);
    } else {
      if (keep) node->synced_data = node->data;
      else node->data = node->synced_data;
    }
  }

  FifoExecutor& executor_;
  std::shared_ptr<MemNode> root_;
  std::shared_ptr<MemNode> frozen_;
  std::optional<uint64_t> crash_at_;
  env::InProcessLockTable locks_;
  uint64_t steps_ = 0;
  uint64_t generation_ = 0;
};

inline Status MemFile::live() const {
  if (generation_ != fs_.generation()) return Status::IoError(path_ + ": handle from before a crash");
  return Status::Ok();
}

inline Status MemFile::pwrite(uint64_t offset, std::span<const uint8_t> data) {
  MQ_RETURN_IF_ERROR(live());
  MQ_RETURN_IF_ERROR(fs_.allow("pwrite", path_));
  if (node_->data.size() < offset + data.size()) node_->data.resize(offset + data.size(), 0);
  std::copy(data.begin(), data.end(), node_->data.begin() + static_cast<std::ptrdiff_t>(offset));
  fs_.record("pwrite", path_);
  return Status::Ok();
}

inline Result<size_t> MemFile::pread(uint64_t offset, std::span<uint8_t> out) {
  MQ_RETURN_IF_ERROR(live());
  if (offset >= node_->data.size()) return size_t{0};
  const size_t n = std::min<size_t>(out.size(), node_->data.size() - offset);
  std::copy_n(node_->data.begin() + static_cast<std::ptrdiff_t>(offset), n, out.begin());
  return n;
}

inline Status MemFile::truncate(uint64_t size) {
  MQ_RETURN_IF_ERROR(live());
  MQ_RETURN_IF_ERROR(fs_.allow("truncate", path_));
  node_->data.resize(size, 0);
  fs_.record("truncate", path_);
  return Status::Ok();
}

inline Result<uint64_t> MemFile::size() {
  MQ_RETURN_IF_ERROR(live());
  return uint64_t{node_->data.size()};
}

inline void MemFile::sync(env::SyncCallback done) {
  // The bytes written before this call are what the completion makes durable.
  fs_.executor().post([this_fs = &fs_, node = node_, snapshot = node_->data, path = path_, done = std::move(done),
                       generation = generation_] {
    if (generation != this_fs->generation()) return;
    Status status = this_fs->allow("sync", path);
    if (status.ok()) {
      node->synced_data = snapshot;
      this_fs->record("sync", path);
    }
    done(status);
  });
}

// Sets the log level for a test's lifetime and keeps the warnings and errors
// logged meanwhile; restores the level other tests (or the default) had, so
// a test that counts warnings does not depend on which test ran before it.
class LogCapture {
 public:
  explicit LogCapture(LogLevel minimum = LogLevel::kWarn) : previous_(current_level()) {
    set_log_level(minimum);
    set_log_sink([this](LogLevel level, std::string_view, std::string_view message) {
      if (level >= LogLevel::kWarn) warnings.emplace_back(message);
    });
  }
  ~LogCapture() {
    set_log_sink(nullptr);
    set_log_level(previous_);
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::vector<std::string> warnings;

 private:
  static LogLevel current_level() {
    for (LogLevel level : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn}) {
      if (log_enabled(level)) return level;
    }
    return LogLevel::kError;
  }
  LogLevel previous_;
};

class MetaTestEnv : public env::Env {
 public:
  explicit MetaTestEnv(uint64_t seed = 1) : executor_(clock_), files_(executor_), random_(seed) {}
  env::Clock& clock() override { return clock_; }
  env::Executor& executor() override { return executor_; }
  env::FileSystem& files() override { return files_; }
  env::Network& network() override { return network_; }
  env::Random& random() override { return random_; }

  ManualClock& manual_clock() { return clock_; }
  FifoExecutor& fifo() { return executor_; }
  MemFileSystem& mem() { return files_; }
  size_t run_all() { return executor_.run_all(); }

 private:
  ManualClock clock_;
  FifoExecutor executor_;
  MemFileSystem files_;
  env::LoopbackNetwork network_{executor_};
  env::Random random_;
};

}  // namespace mqlab::meta::testenv
