#include "broker/meta/config_file.h"

#include <limits>
#include <utility>

#include "broker/common/log.h"
#include "broker/env/path.h"

namespace mqlab::meta {
namespace {

constexpr const char* kConfigFileLog = "meta";
// Far above any real metadata file (a broker with 10^5 groups writes a few
// MiB); a larger file is garbage, and reading it whole would be the failure.
constexpr uint64_t kMaxConfigFileBytes = 256ull * 1024 * 1024;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Reads a whole file. NotFound when it does not exist.
Result<std::string> read_whole_file(env::FileSystem& files, const std::string& path) {
  if (!files.exists(path)) return Status::NotFound(path + ": missing");
  MQ_ASSIGN_OR_RETURN(std::shared_ptr<env::File> file, files.open(path, env::OpenOptions{}));
  MQ_ASSIGN_OR_RETURN(uint64_t size, file->size());
  if (size > kMaxConfigFileBytes) {
    return Status::Corruption(path + ": " + std::to_string(size) + " bytes, more than any metadata file");
  }
  std::string content(size, '\0');
  uint64_t done = 0;
  while (done < size) {
    auto out = std::span<uint8_t>(reinterpret_cast<uint8_t*>(content.data()) + done, size - done);
    MQ_ASSIGN_OR_RETURN(size_t got, file->pread(done, out));
    if (got == 0) break;  // shrank under us: keep what was there
    done += got;
  }
  content.resize(done);
  MQ_ASSERT(content.size() <= size);
  return content;
}

Status type_error(std::string_view where, const char* key, const char* expected, const nlohmann::json& value) {
  return Status::Corruption(std::string(where) + ": \"" + key + "\": expected " + expected + ", found " +
                            std::string(value.type_name()));
}

}  // namespace

std::string_view load_source_name(LoadSource source) {
  switch (source) {
    case LoadSource::kNone: return "none";
    case LoadSource::kFile: return "file";
    case LoadSource::kBackup: return "backup";
  }
  return "?";
}

ConfigFile::ConfigFile(env::Env& env, std::string path)
    : env_(env), path_(std::move(path)), dir_(env::parent_dir(path_)) {
  MQ_ASSERT(!path_.empty());
  MQ_ASSERT_MSG(!dir_.empty(), "ConfigFile needs a path with a directory: " + path_);
}

// --- load

Result<ConfigFile::CopyState> ConfigFile::try_copy(const std::string& path, const Parser& parse,
                                                    std::string* content, std::string* why_not) {
  Result<std::string> read = read_whole_file(env_.files(), path);
  if (!read.ok()) {
    if (read.status().code() == StatusCode::kNotFound) {
      *why_not = "missing";
      return CopyState::kAbsent;
    }
    if (read.status().code() != StatusCode::kCorruption) return read.status().with_context("reading " + path);
    *why_not = read.status().message();
    return CopyState::kRejected;
  }
  if (read->empty()) {
    *why_not = "empty";
    return CopyState::kAbsent;
  }
  if (Status parsed = parse(*read); !parsed.ok()) {
    *why_not = parsed.message();
    return CopyState::kRejected;
  }
  *content = std::move(read).value();
  return CopyState::kParsed;
}

Result<LoadSource> ConfigFile::load(const Parser& parse) {
  MQ_ASSERT(!in_flight_.has_value());  // loading under a persist would race its rename
  std::string content;
  std::string why_file;
  std::string why_backup;
  MQ_ASSIGN_OR_RETURN(CopyState file_state, try_copy(path_, parse, &content, &why_file));
  if (file_state == CopyState::kParsed) {
    file_content_ = std::move(content);
    MQ_LOG(kInfo, kConfigFileLog, "loaded " << path_ << " (" << file_content_->size() << " bytes)");
    return LoadSource::kFile;
  }
  file_content_.reset();
  MQ_ASSIGN_OR_RETURN(CopyState backup_state, try_copy(backup_path(), parse, &content, &why_backup));
  if (backup_state == CopyState::kParsed) {
    MQ_LOG(kWarn, kConfigFileLog, "loaded " << backup_path() << " because " << path_ << " is unusable: " << why_file);
    return LoadSource::kBackup;
  }
  if (file_state == CopyState::kAbsent && backup_state == CopyState::kAbsent) {
    MQ_LOG(kInfo, kConfigFileLog, "no " << path_ << " (" << why_file << ") nor backup (" << why_backup << "): starting empty");
    return LoadSource::kNone;
  }
  return Status::Corruption(path_ + ": " + why_file + "; and " + backup_path() + ": " + why_backup);
}

// --- persist

void ConfigFile::persist(std::string content, PersistCallback done) {
  MQ_ASSERT(!content.empty());
  if (in_flight_) {
    // Coalesce: the pending persist writes the newest content, and its
    // completion also answers the callers whose content it superseded.
    if (!pending_) pending_.emplace();
    pending_->content = std::move(content);
    if (done) pending_->dones.push_back(std::move(done));
    return;
  }
  in_flight_.emplace();
  in_flight_->content = std::move(content);
  if (done) in_flight_->dones.push_back(std::move(done));
  start_persist();
}

Status ConfigFile::ensure_directory() {
  env::FileSystem& files = env_.files();
  if (files.is_directory(dir_)) return Status::Ok();
  // Each directory we create is an entry of its parent, durable only after
  // the parent's sync_dir: remember those parents until one succeeds.
  std::vector<std::string> missing;
  for (std::string dir = dir_; !dir.empty() && !files.is_directory(dir); dir = env::parent_dir(dir)) {
    missing.push_back(dir);
    if (dir == "/") break;
  }
  MQ_RETURN_IF_ERROR(files.mkdirs(dir_).with_context("creating " + dir_));
  for (const std::string& dir : missing) {
    const std::string parent = env::parent_dir(dir);
    if (!parent.empty() && parent != dir) unsynced_dirs_.insert(parent);
  }
  MQ_LOG(kInfo, kConfigFileLog, "created directory " << dir_);
  return Status::Ok();
}

void ConfigFile::start_persist() {
  MQ_ASSERT(in_flight_.has_value());
  MQ_ASSERT(!in_flight_->content.empty());
  if (Status status = ensure_directory(); !status.ok()) {
    fail_later([this](Status s) { finish_persist(std::move(s)); }, std::move(status));
    return;
  }
  write_and_sync(tmp_path(), in_flight_->content, [this](Status status) { after_tmp_synced(std::move(status)); });
}

void ConfigFile::write_and_sync(const std::string& path, const std::string& content, PersistCallback next) {
  MQ_ASSERT(!content.empty());
  env::OpenOptions options;
  options.create = true;
  options.truncate = true;
  Result<std::shared_ptr<env::File>> file = env_.files().open(path, options);
  if (!file.ok()) return fail_later(std::move(next), file.status().with_context("opening " + path));
  const auto* bytes = reinterpret_cast<const uint8_t*>(content.data());
  if (Status status = (*file)->pwrite(0, std::span<const uint8_t>(bytes, content.size())); !status.ok()) {
    return fail_later(std::move(next), status.with_context("writing " + path));
  }
  (*file)->sync(lifetime_.guard([path, next = std::move(next)](Status status) {
    next(status.ok() ? std::move(status) : status.with_context("syncing " + path));
  }));
}

void ConfigFile::after_tmp_synced(Status status) {
  MQ_ASSERT(in_flight_.has_value());
  if (!status.ok()) return finish_persist(std::move(status));
  if (!file_content_) {
    // <file> holds nothing good, so the .bak (if any) is the only good copy:
    // leave it alone rather than truncate and rewrite it.
    return after_backup_synced(Status::Ok());
  }
  write_and_sync(backup_path(), *file_content_, [this](Status s) { after_backup_synced(std::move(s)); });
}

void ConfigFile::after_backup_synced(Status status) {
  MQ_ASSERT(in_flight_.has_value());
  if (!status.ok()) return finish_persist(std::move(status));
  if (Status renamed = env_.files().rename(tmp_path(), path_); !renamed.ok()) {
    return finish_persist(renamed.with_context("renaming " + tmp_path() + " to " + path_));
  }
  file_content_ = in_flight_->content;
  // The rename is durable once dir_ is synced; created parents come after.
  std::vector<std::string> dirs(unsynced_dirs_.begin(), unsynced_dirs_.end());
  dirs.push_back(dir_);
  sync_next_directory(std::move(dirs), Status::Ok());
}

void ConfigFile::sync_next_directory(std::vector<std::string> dirs, Status status) {
  MQ_ASSERT(in_flight_.has_value());
  if (!status.ok()) return finish_persist(std::move(status));
  if (dirs.empty()) return finish_persist(Status::Ok());
  std::string dir = std::move(dirs.back());
  dirs.pop_back();
  env_.files().sync_dir(dir, lifetime_.guard([this, dir, dirs = std::move(dirs)](Status synced) mutable {
    if (synced.ok()) {
      unsynced_dirs_.erase(dir);
    } else {
      synced = synced.with_context("syncing directory " + dir);
    }
    sync_next_directory(std::move(dirs), std::move(synced));
  }));
}

void ConfigFile::finish_persist(Status status) {
  MQ_ASSERT(in_flight_.has_value());
  if (!status.ok()) MQ_LOG(kWarn, kConfigFileLog, "persisting " << path_ << " failed: " << status.to_string());
  std::vector<PersistCallback> dones = std::move(in_flight_->dones);
  in_flight_.reset();
  if (pending_) {
    in_flight_ = std::move(pending_);
    pending_.reset();
    start_persist();
  }
  // After starting the next persist, so a callback that persists again is
  // queued behind it instead of overtaking it.
  for (PersistCallback& done : dones) done(status);
}

void ConfigFile::fail_later(PersistCallback callback, Status status) {
  MQ_ASSERT(!status.ok());
  // Completions never run inside the call that started them.
  env_.executor().post(lifetime_.guard([callback = std::move(callback), status = std::move(status)]() mutable {
    callback(std::move(status));
  }));
}

// --- DataVersion

nlohmann::json DataVersion::to_json() const {
  nlohmann::json value = nlohmann::json::object();
  value["timestamp"] = timestamp;
  value["counter"] = counter;
  return value;
}

Result<DataVersion> DataVersion::from_json(const nlohmann::json& value, std::string_view where) {
  const std::string context = std::string(where) + ": dataVersion";
  if (!value.is_object()) {
    return Status::Corruption(context + ": expected an object, found " + std::string(value.type_name()));
  }
  DataVersion version;
  MQ_RETURN_IF_ERROR(read_json_field(value, "timestamp", &version.timestamp, context));
  MQ_RETURN_IF_ERROR(read_json_field(value, "counter", &version.counter, context));
  return version;
}

// --- JSON helpers

std::string quote_numeric_keys(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  bool in_string = false;
  bool escaped = false;
  char last = '\0';  // last non-space character outside string literals
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      ++i;
      continue;
    }
    // A key starts right after '{' or ','; an integer there followed by ':'
    // is a fastjson key. In valid JSON a number after '{' or ',' is an array
    // element or a syntax error, never followed by ':', so nothing else moves.
    if ((last == '{' || last == ',') && (c == '-' || is_digit(c))) {
      size_t end = i + (c == '-' ? 1 : 0);
      const size_t digits = end;
      while (end < text.size() && is_digit(text[end])) ++end;
      size_t colon = end;
      while (colon < text.size() && is_space(text[colon])) ++colon;
      if (end > digits && colon < text.size() && text[colon] == ':') {
        out += '"';
        out.append(text.substr(i, end - i));
        out += '"';
        last = '"';
        i = end;
        continue;
      }
    }
    if (c == '"') in_string = true;
    if (!is_space(c)) last = c;
    out += c;
    ++i;
  }
  return out;
}

Result<nlohmann::json> parse_json(std::string_view text, std::string_view where) {
  try {
    return nlohmann::json::parse(quote_numeric_keys(text));
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption(std::string(where) + ": not valid JSON: " + e.what());
  }
}

std::string dump_json(const nlohmann::json& value) {
  return value.dump(4, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status read_json_field(const nlohmann::json& object, const char* key, int64_t* out, std::string_view where) {
  MQ_ASSERT(object.is_object());
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Status::Ok();
  if (it->is_number_unsigned()) {
    const uint64_t value = it->get<uint64_t>();
    if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Status::Corruption(std::string(where) + ": \"" + key + "\": " + std::to_string(value) +
                                " does not fit in a long");
    }
    *out = static_cast<int64_t>(value);
    return Status::Ok();
  }
  if (!it->is_number_integer()) return type_error(where, key, "an integer", *it);
  *out = it->get<int64_t>();
  return Status::Ok();
}

Status read_json_field(const nlohmann::json& object, const char* key, int32_t* out, std::string_view where) {
  int64_t value = *out;
  MQ_RETURN_IF_ERROR(read_json_field(object, key, &value, where));
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
    return Status::Corruption(std::string(where) + ": \"" + key + "\": " + std::to_string(value) +
                              " does not fit in an int");
  }
  *out = static_cast<int32_t>(value);
  return Status::Ok();
}

Status read_json_field(const nlohmann::json& object, const char* key, bool* out, std::string_view where) {
  MQ_ASSERT(object.is_object());
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Status::Ok();
  if (!it->is_boolean()) return type_error(where, key, "a boolean", *it);
  *out = it->get<bool>();
  return Status::Ok();
}

Status read_json_field(const nlohmann::json& object, const char* key, std::string* out, std::string_view where) {
  MQ_ASSERT(object.is_object());
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return type_error(where, key, "a string", *it);
  *out = it->get<std::string>();
  return Status::Ok();
}

}  // namespace mqlab::meta
