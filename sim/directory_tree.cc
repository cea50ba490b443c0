#include "sim/directory_tree.h"

#include <algorithm>

#include "broker/common/assert.h"

namespace mqlab::sim {
namespace {

// The key prefix every descendant of dir starts with.
std::string descendant_prefix(const std::string& dir) { return dir == "/" ? dir : dir + "/"; }

bool is_child_key(const std::string& key, const std::string& prefix) {
  return key.size() > prefix.size() && key.compare(0, prefix.size(), prefix) == 0 &&
         key.find('/', prefix.size()) == std::string::npos;
}

}  // namespace

std::string parent_path(const std::string& path) {
  MQ_ASSERT(is_normal_path(path));
  MQ_ASSERT(path != "/");
  const size_t slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool is_normal_path(const std::string& path) {
  if (path == "/") return true;
  if (path.empty() || path.front() != '/' || path.back() == '/') return false;
  size_t begin = 1;
  while (begin <= path.size()) {
    size_t end = path.find('/', begin);
    if (end == std::string::npos) end = path.size();
    const std::string_view part(path.data() + begin, end - begin);
    if (part.empty() || part == "." || part == "..") return false;
    begin = end + 1;
  }
  return true;
}

void DirectoryTree::clear() {
  live_.clear();
  durable_.clear();
  live_["/"] = DirEntry{true, nullptr};
  durable_["/"] = DirEntry{true, nullptr};
  uncommitted_ = false;
}

const DirEntry* DirectoryTree::find(const std::string& path) const {
  MQ_ASSERT(is_normal_path(path));
  const auto it = live_.find(path);
  return it == live_.end() ? nullptr : &it->second;
}

bool DirectoryTree::is_directory(const std::string& path) const {
  const DirEntry* entry = find(path);
  return entry != nullptr && entry->is_directory;
}

Status DirectoryTree::add_file(const std::string& path, std::shared_ptr<Inode> inode) {
  MQ_ASSERT(inode != nullptr);
  MQ_ASSERT(find(path) == nullptr);
  MQ_RETURN_IF_ERROR(check_parent(path));
  live_[path] = DirEntry{false, std::move(inode)};
  uncommitted_ = true;
  return Status::Ok();
}

Status DirectoryTree::mkdirs(const std::string& path) {
  MQ_ASSERT(is_normal_path(path));
  // Walk down from the root so each parent exists before its child.
  for (size_t slash = path.find('/', 1); ; slash = path.find('/', slash + 1)) {
    const std::string prefix = slash == std::string::npos ? path : path.substr(0, slash);
    if (const DirEntry* entry = find(prefix); entry == nullptr) {
      live_[prefix] = DirEntry{true, nullptr};
      uncommitted_ = true;
    } else if (!entry->is_directory) {
      return Status::AlreadyExists("mkdirs " + path + ": " + prefix + " is a file");
    }
    if (slash == std::string::npos) break;
  }
  MQ_ASSERT(is_directory(path));
  return Status::Ok();
}

Status DirectoryTree::remove(const std::string& path) {
  const DirEntry* entry = find(path);
  if (entry == nullptr) return Status::NotFound("remove " + path + ": no such file or directory");
  if (path == "/") return Status::InvalidArgument("remove /: the root cannot be removed");
  if (entry->is_directory && has_children(path)) {
    return Status::InvalidArgument("remove " + path + ": directory not empty");
  }
  live_.erase(path);
  uncommitted_ = true;
  return Status::Ok();
}

Status DirectoryTree::rename(const std::string& from, const std::string& to) {
  const DirEntry* source = find(from);
  const std::string what = "rename " + from + " to " + to + ": ";
  if (source == nullptr) return Status::NotFound(what + "no such file or directory");
  if (from == "/" || to == "/") return Status::InvalidArgument(what + "the root cannot move");
  MQ_RETURN_IF_ERROR(check_parent(to).with_context("rename " + from + " to " + to));
  if (from == to) return Status::Ok();
  const DirEntry* target = find(to);
  if (source->is_directory) {
    if (to.starts_with(descendant_prefix(from))) return Status::InvalidArgument(what + "into itself");
    if (has_children(from)) return Status::InvalidArgument(what + "moving a non-empty directory is not simulated");
    if (target != nullptr && !target->is_directory) return Status::InvalidArgument(what + "target is a file");
    if (target != nullptr && has_children(to)) return Status::InvalidArgument(what + "target directory not empty");
  } else if (target != nullptr && target->is_directory) {
    return Status::InvalidArgument(what + "target is a directory");
  }
  DirEntry moved = *source;
  live_.erase(from);
  live_[to] = std::move(moved);
  uncommitted_ = true;
  return Status::Ok();
}

Result<std::vector<std::string>> DirectoryTree::list(const std::string& dir) const {
  const DirEntry* entry = find(dir);
  if (entry == nullptr) return Status::NotFound("list " + dir + ": no such directory");
  if (!entry->is_directory) return Status::InvalidArgument("list " + dir + ": not a directory");
  const std::string prefix = descendant_prefix(dir);
  std::vector<std::string> names;
  for (auto it = live_.lower_bound(prefix); it != live_.end() && it->first.starts_with(prefix); ++it) {
    if (is_child_key(it->first, prefix)) names.push_back(it->first.substr(prefix.size()));
  }
  // Key order already is name order for one directory's children; sorting
  // makes the contract ("sorted bytewise") independent of that argument.
  std::sort(names.begin(), names.end());
  return names;
}

Result<DirectoryTree::Children> DirectoryTree::snapshot_dir(const std::string& dir) const {
  if (!is_directory(dir)) return Status::NotFound("sync_dir " + dir + ": no such directory");
  return children_of(live_, dir);
}

void DirectoryTree::apply_dir(const std::string& dir, const Children& children) {
  const std::string prefix = descendant_prefix(dir);
  for (const auto& [path, entry] : children_of(durable_, dir)) durable_.erase(path);
  for (const auto& [path, entry] : children) {
    MQ_ASSERT(is_child_key(path, prefix));
    durable_[path] = entry;
  }
  MQ_ASSERT(durable_.contains("/"));
}

void DirectoryTree::commit_all() {
  durable_ = live_;
  uncommitted_ = false;
}

void DirectoryTree::revert() {
  std::map<std::string, DirEntry> kept;
  // A parent's key is a prefix of its child's, so it sorts first: by the time
  // a child is seen, whether its parent survived is known.
  for (const auto& [path, entry] : durable_) {
    if (path != "/") {
      const auto parent = kept.find(parent_path(path));
      if (parent == kept.end() || !parent->second.is_directory) continue;
    }
    kept.emplace(path, entry);
  }
  MQ_ASSERT(kept.contains("/"));
  durable_ = kept;
  live_ = std::move(kept);
  uncommitted_ = false;
}

DirectoryTree::Children DirectoryTree::children_of(const std::map<std::string, DirEntry>& view,
                                                  const std::string& dir) {
  const std::string prefix = descendant_prefix(dir);
  Children children;
  for (auto it = view.lower_bound(prefix); it != view.end() && it->first.starts_with(prefix); ++it) {
    if (is_child_key(it->first, prefix)) children.emplace(it->first, it->second);
  }
  return children;
}

bool DirectoryTree::has_children(const std::string& dir) const {
  const std::string prefix = descendant_prefix(dir);
  // upper_bound skips the root's own key "/", the one key equal to a prefix.
  const auto it = live_.upper_bound(prefix);
  return it != live_.end() && it->first.starts_with(prefix);
}

Status DirectoryTree::check_parent(const std::string& path) const {
  MQ_ASSERT(path != "/");
  const std::string parent = parent_path(path);
  const DirEntry* entry = find(parent);
  if (entry == nullptr) return Status::NotFound("parent directory " + parent + " does not exist");
  if (!entry->is_directory) return Status::NotFound("parent " + parent + " is not a directory");
  return Status::Ok();
}

}  // namespace mqlab::sim
