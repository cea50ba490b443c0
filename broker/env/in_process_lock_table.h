// InProcessLockTable: the locks one process (one FileSystem object) holds,
// for file systems with no OS lock to lean on (the simulator's disks, the
// in-memory test file systems). A path is locked while the FileLock handed
// out for it lives; the table keeps only weak references, so dropping the
// handle (or the process's objects) releases the lock and nothing is written.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "broker/common/assert.h"
#include "broker/common/status.h"
#include "broker/env/env.h"

namespace mqlab::env {

class InProcessLockTable {
 public:
  bool held(const std::string& path) const {
    auto it = held_.find(path);
    return it != held_.end() && !it->second.expired();
  }

  // Requires: !held(path). The lock stays held while the result lives.
  std::unique_ptr<FileLock> take(const std::string& path) {
    MQ_ASSERT(!held(path));
    auto handle = std::make_unique<Handle>(path);
    held_[path] = handle->token;
    MQ_ASSERT(held(path));
    return handle;
  }

  // take() when free; Unavailable naming the path otherwise.
  Result<std::unique_ptr<FileLock>> try_take(const std::string& path) {
    if (held(path)) return Status::Unavailable(path + ": locked by another holder in this process");
    return take(path);
  }

 private:
  class Handle final : public FileLock {
   public:
    explicit Handle(std::string path) : token(std::make_shared<const std::string>(std::move(path))) {}
    const std::string& path() const override { return *token; }
    const std::shared_ptr<const std::string> token;
  };

  // Sorted, and only ever looked up: no iteration order reaches behaviour.
  std::map<std::string, std::weak_ptr<const std::string>> held_;
};

}  // namespace mqlab::env
