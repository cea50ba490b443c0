// ConfigFile: one JSON metadata file under {storePathRootDir}/config/
// (topics.json, subscriptionGroup.json, consumerOffset.json), persisted so a
// power loss at any instant leaves either the previous or the new content.
//
// RocketMQ's recipe (MixAll.string2File: write .tmp, copy the current file to
// .bak, delete, rename) has no fsync; ours adds the syncs the Env requires:
//   1. write <file>.tmp, File::sync it;
//   2. write the content <file> holds now to <file>.bak, sync it (skipped when
//      <file> holds nothing good: then .bak already is the only good copy and
//      rewriting it in place would open a window with no good copy at all);
//   3. rename <file>.tmp over <file>;
//   4. sync_dir of the directory (and of the parents of any directory we had
//      to create); then done(ok).
// Until step 4 completes a power loss may keep the old or the new directory
// entry, and both name synced bytes. A leftover .tmp is ignored by load and
// overwritten by the next persist.
//
// Load reads <file> and falls back to <file>.bak when it is missing, empty or
// rejected by the caller's parser, logging which copy it used and why.
//
// Invariants: at most one persist is in flight; a persist requested meanwhile
// is coalesced into one pending persist whose content is the newest, so files
// are never written out of order and superseded contents are skipped.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "broker/common/lifetime.h"
#include "broker/common/status.h"
#include "broker/env/env.h"

namespace mqlab::meta {

using PersistCallback = std::function<void(Status)>;

enum class LoadSource {
  kNone,    // neither <file> nor <file>.bak held anything: a fresh start
  kFile,    // <file> parsed
  kBackup,  // <file> was missing, empty or unparsable; <file>.bak parsed
};
std::string_view load_source_name(LoadSource source);

class ConfigFile {
 public:
  // Parses a file's whole content and installs it only when it is valid, so
  // a rejected <file> leaves the caller untouched for the .bak attempt.
  using Parser = std::function<Status(const std::string& content)>;

  ConfigFile(env::Env& env, std::string path);
  ConfigFile(const ConfigFile&) = delete;
  ConfigFile& operator=(const ConfigFile&) = delete;

  const std::string& path() const { return path_; }
  std::string backup_path() const { return path_ + ".bak"; }
  std::string tmp_path() const { return path_ + ".tmp"; }

  // Reads <file>, else <file>.bak. Corruption (naming both files and reasons)
  // when something is present but neither copy parses; IoError when a read
  // fails. Call before the first persist: it learns what <file> holds.
  Result<LoadSource> load(const Parser& parse);

  // Makes content the file's durable content; done(status) runs on the
  // executor once it is durable or failed. Requires: content is not empty
  // (an empty file reads as "missing" and would send load to the .bak).
  void persist(std::string content, PersistCallback done);

  bool persist_in_flight() const { return in_flight_.has_value(); }

 private:
  struct PersistOp {
    std::string content;
    std::vector<PersistCallback> dones;
  };

  enum class CopyState { kParsed, kAbsent, kRejected };
  // One copy: kParsed (installed, *content set), kAbsent (missing or empty)
  // or kRejected (*why_not says why); a Status only when reading failed.
  Result<CopyState> try_copy(const std::string& path, const Parser& parse, std::string* content,
                             std::string* why_not);
  Status ensure_directory();
  void start_persist();
  void write_and_sync(const std::string& path, const std::string& content, PersistCallback next);
  void after_tmp_synced(Status status);
  void after_backup_synced(Status status);
  void sync_next_directory(std::vector<std::string> dirs, Status status);
  void finish_persist(Status status);
  void fail_later(PersistCallback callback, Status status);

  env::Env& env_;
  std::string path_;
  std::string dir_;
  // What <file> holds when it is known good (loaded from it, or renamed over
  // it by us); nullopt when <file> is missing or garbage.
  std::optional<std::string> file_content_;
  // Directories whose entries are not yet known durable: the parents of
  // directories this object created. Retried until a sync_dir succeeds.
  std::set<std::string> unsynced_dirs_;
  std::optional<PersistOp> in_flight_;
  std::optional<PersistOp> pending_;
  LifetimeToken lifetime_;
};

// The version stamp RocketMQ keeps beside each metadata table
// (DataVersion: {"timestamp": wall ms of the last change, "counter": changes}).
// NameServers compare it to skip unchanged registrations.
struct DataVersion {
  int64_t timestamp = 0;
  int64_t counter = 0;

  void next(int64_t wall_ms) {
    timestamp = wall_ms;
    ++counter;
  }
  nlohmann::json to_json() const;
  static Result<DataVersion> from_json(const nlohmann::json& value, std::string_view where);
  bool operator==(const DataVersion&) const = default;
};

// --- JSON helpers shared by the metadata managers. None of them throws.

// fastjson writes integer map keys unquoted ({0:12}); standard JSON needs
// {"0":12}. Quotes every unquoted integer key outside string literals, so
// text already valid stays byte-identical.
std::string quote_numeric_keys(std::string_view text);

// Parses (after quote_numeric_keys) into a JSON value; Corruption naming
// `where` and the parser's position and reason on failure.
Result<nlohmann::json> parse_json(std::string_view text, std::string_view where);

// Deterministic text for a JSON value: sorted keys (nlohmann's std::map),
// 4-space indent, invalid UTF-8 replaced rather than thrown on.
std::string dump_json(const nlohmann::json& value);

// Reads object[key] into *out when present; leaves *out untouched when the key
// is missing; Corruption "where: key: expected ..." when the type or range is
// wrong. Requires: object is a JSON object.
Status read_json_field(const nlohmann::json& object, const char* key, int32_t* out, std::string_view where);
Status read_json_field(const nlohmann::json& object, const char* key, int64_t* out, std::string_view where);
Status read_json_field(const nlohmann::json& object, const char* key, bool* out, std::string_view where);
Status read_json_field(const nlohmann::json& object, const char* key, std::string* out, std::string_view where);

}  // namespace mqlab::meta
