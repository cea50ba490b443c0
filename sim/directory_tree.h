// DirectoryTree: a simulated file system's names, in two views. The live view
// is what open/list/exists see; the durable view is what a power cut leaves.
// A directory's entries move from live to durable only when that directory is
// synced (sync_dir) or, if the profile enables it, at a journal commit.
//
// Paths are disk-relative and normalised by the caller: "/" or "/a/b", no
// empty, "." or ".." components, no trailing '/'. Entries are keyed by full
// path; a file entry names an Inode, shared with the other view, with open
// handles and with in-flight directory syncs.
//
// Simplification: a non-empty directory cannot be renamed (the broker never
// does it); keying entries by path would otherwise need every child moved.
//
// Invariants:
//   - "/" is a directory in both views and is never removed;
//   - in the live view every entry's parent is a directory;
//   - the durable view may hold entries whose parent is not durable (a synced
//     child of an unsynced directory); revert() drops them, as fsck would.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "broker/common/status.h"
#include "sim/inode.h"

namespace mqlab::sim {

struct DirEntry {
  bool is_directory = false;
  std::shared_ptr<Inode> inode;  // set iff a file
};

class DirectoryTree {
 public:
  // A directory's direct children (full path -> entry), as sync_dir found them.
  using Children = std::map<std::string, DirEntry>;

  DirectoryTree() { clear(); }

  // An empty file system (mkfs): just "/", durable.
  void clear();

  // The live entry at path, or null.
  const DirEntry* find(const std::string& path) const;
  bool is_directory(const std::string& path) const;

  // Requires: path is missing. NotFound when its parent is not a directory.
  Status add_file(const std::string& path, std::shared_ptr<Inode> inode);
  Status mkdirs(const std::string& path);
  Status remove(const std::string& path);
  Status rename(const std::string& from, const std::string& to);
  Result<std::vector<std::string>> list(const std::string& dir) const;

  // The live children of dir, to be made durable when its sync completes.
  Result<Children> snapshot_dir(const std::string& dir) const;
  void apply_dir(const std::string& dir, const Children& children);
  // A journal commit: the whole live view becomes durable.
  void commit_all();
  // A power cut: the live view becomes the durable one, minus orphans.
  void revert();
  // Some change since the last commit_all() or revert().
  bool uncommitted() const { return uncommitted_; }

  // Live entries, "/" included.
  size_t entry_count() const { return live_.size(); }

 private:
  static Children children_of(const std::map<std::string, DirEntry>& view, const std::string& dir);
  bool has_children(const std::string& dir) const;
  Status check_parent(const std::string& path) const;

  std::map<std::string, DirEntry> live_;
  std::map<std::string, DirEntry> durable_;
  bool uncommitted_ = false;
};

// "/a/b" -> "/a"; "/a" -> "/".
std::string parent_path(const std::string& path);
// Whether path is normalised as DirectoryTree expects.
bool is_normal_path(const std::string& path);

}  // namespace mqlab::sim
