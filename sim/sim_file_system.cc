#include "sim/sim_file_system.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>
#include <utility>

#include "broker/common/assert.h"

namespace mqlab::sim {

Result<std::string> normalize_path(const std::string& path) {
  std::string normal = path.empty() || path.front() != '/' ? "/" + path : path;
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  if (!is_normal_path(normal)) {
    return Status::InvalidArgument("bad path '" + path + "': empty, '.' or '..' component");
  }
  return normal;
}

SimFileSystem::SimFileSystem(Scheduler& scheduler, std::vector<Mount> mounts, OwnerId owner)
    : scheduler_(scheduler), mounts_(std::move(mounts)), owner_(owner) {
  for (const Mount& mount : mounts_) {
    MQ_ASSERT(mount.disk != nullptr);
    MQ_ASSERT_MSG(is_normal_path(mount.path), "mount point " + mount.path);
  }
  // Longest first, so the first match is the deepest mount; ties cannot
  // happen because mount points are distinct.
  std::sort(mounts_.begin(), mounts_.end(), [](const Mount& a, const Mount& b) {
    return a.path.size() != b.path.size() ? a.path.size() > b.path.size() : a.path < b.path;
  });
  for (size_t i = 1; i < mounts_.size(); ++i) MQ_ASSERT(mounts_[i - 1].path != mounts_[i].path);
}

Result<SimFileSystem::Resolved> SimFileSystem::resolve(const std::string& path) const {
  MQ_ASSIGN_OR_RETURN(const std::string normal, normalize_path(path));
  for (const Mount& mount : mounts_) {
    if (mount.path == "/") return Resolved{mount.disk, normal};
    if (normal == mount.path) return Resolved{mount.disk, "/"};
    if (normal.starts_with(mount.path) && normal[mount.path.size()] == '/') {
      return Resolved{mount.disk, normal.substr(mount.path.size())};
    }
  }
  return Status::NotFound(path + ": no disk is mounted there");
}

Result<std::shared_ptr<env::File>> SimFileSystem::open(const std::string& path, env::OpenOptions options) {
  MQ_ASSIGN_OR_RETURN(const Resolved where, resolve(path));
  return where.disk->open(where.inner, options, owner_, path);
}

Status SimFileSystem::remove(const std::string& path) {
  MQ_ASSIGN_OR_RETURN(const Resolved where, resolve(path));
  if (where.inner == "/") return Status::InvalidArgument("remove " + path + ": a mount point");
  return where.disk->remove(where.inner);
}

Status SimFileSystem::rename(const std::string& from, const std::string& to) {
  MQ_ASSIGN_OR_RETURN(const Resolved source, resolve(from));
  MQ_ASSIGN_OR_RETURN(const Resolved target, resolve(to));
  if (source.disk != target.disk) {
    return Status::InvalidArgument("rename " + from + " to " + to + ": across disks (EXDEV)");
  }
  return source.disk->rename(source.inner, target.inner);
}

Result<std::vector<std::string>> SimFileSystem::list(const std::string& dir) {
  MQ_ASSIGN_OR_RETURN(const Resolved where, resolve(dir));
  return where.disk->list(where.inner);
}

Status SimFileSystem::mkdirs(const std::string& dir) {
  MQ_ASSIGN_OR_RETURN(const Resolved where, resolve(dir));
  return where.disk->mkdirs(where.inner);
}

bool SimFileSystem::exists(const std::string& path) {
  const Result<Resolved> where = resolve(path);
  return where.ok() && where->disk->exists(where->inner);
}

bool SimFileSystem::is_directory(const std::string& path) {
  const Result<Resolved> where = resolve(path);
  return where.ok() && where->disk->is_directory(where->inner);
}

void SimFileSystem::sync_dir(const std::string& dir, env::SyncCallback done) {
  MQ_ASSERT(done != nullptr);
  Result<Resolved> where = resolve(dir);
  if (!where.ok()) {
    // Even a bad path answers through the executor, never inline.
    scheduler_.schedule_at(scheduler_.now(), [done, status = where.status()] { done(status); }, owner_);
    return;
  }
  where->disk->sync_dir(where->inner, owner_, std::move(done));
}

Result<env::SpaceInfo> SimFileSystem::space(const std::string& path) {
  MQ_ASSIGN_OR_RETURN(const Resolved where, resolve(path));
  return where.disk->space();
}

namespace {
constexpr std::string_view kLockOwnerPrefix = "sim owner ";

// The owner id a lock file names; nullopt for anything else (the bytes may be
// anyone's).
std::optional<OwnerId> parse_lock_owner(std::string_view text) {
  if (!text.starts_with(kLockOwnerPrefix)) return std::nullopt;
  text.remove_prefix(kLockOwnerPrefix.size());
  OwnerId owner = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), owner);
  if (error != std::errc() || end == text.data() || owner == kWorldOwner) return std::nullopt;
  return owner;
}
}  // namespace

Result<std::unique_ptr<env::FileLock>> SimFileSystem::lock(const std::string& path) {
  MQ_ASSIGN_OR_RETURN(const std::string normal, normalize_path(path));
  if (locks_.held(normal)) return Status::Unavailable(path + ": locked by another holder in this process");
  MQ_ASSIGN_OR_RETURN(std::shared_ptr<env::File> file, open(normal, env::OpenOptions{.create = true}));
  std::vector<uint8_t> bytes(64, 0);
  MQ_ASSIGN_OR_RETURN(const size_t got, file->pread(0, bytes));
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), got);
  if (const std::optional<OwnerId> holder = parse_lock_owner(text); holder && *holder != owner_) {
    // Owners are numbered in creation order: one newer than us was not
    // necessarily made by our scheduler's add_owner() yet when we started,
    // and cannot be asked about safely; treat it as alive.
    if (*holder > owner_ || scheduler_.owner_alive(*holder)) {
      return Status::Unavailable(path + ": locked by another process (sim owner " + std::to_string(*holder) + ")");
    }
  }
  const std::string identity = std::string(kLockOwnerPrefix) + std::to_string(owner_) + "\n";
  MQ_RETURN_IF_ERROR(file->truncate(0));
  MQ_RETURN_IF_ERROR(file->pwrite(0, std::span(reinterpret_cast<const uint8_t*>(identity.data()), identity.size())));
  return locks_.take(normal);
}

}  // namespace mqlab::sim
