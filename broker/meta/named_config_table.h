// NamedConfigTable<Config>: what RocketMQ's two named metadata tables share
// (TopicConfigManager and SubscriptionGroupManager both extend
// ConfigManager): a name -> config map persisted whole as one JSON file
//   {"dataVersion":{...}, "<table key>":{"<name>":{...config...}}}
// through ConfigFile, and a DataVersion bumped on every change.
//
// The managers keep their own rules (validation, auto-creation, system
// entries); this class keeps the table, the file and the version.
//
// Invariants: every entry's key equals the config's name field; every
// change bumps the data version (wall-clock timestamp, counter + 1) and
// persists the whole table; decode installs a file's content only when every
// entry in it is good, so a rejected file changes nothing.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "broker/common/assert.h"
#include "broker/common/name_order.h"
#include "broker/common/printable.h"
#include "broker/common/remembered_entries.h"
#include "broker/common/status.h"
#include "broker/env/env.h"
#include "broker/env/path.h"
#include "broker/meta/config_file.h"

namespace mqlab::meta {

// A name as it may appear in a message (common/printable.h): long names cut
// after kShownNameChars.
inline constexpr size_t kShownNameChars = 80;
inline std::string printable_name(std::string_view name) { return printable_excerpt(name, kShownNameChars); }

template <class Config>
class NamedConfigTable {
 public:
  using Table = std::map<std::string, Config, NameLess>;
  // Entries read from disk are checked only for what would break the broker
  // (RocketMQ wrote them without our limits): key, the entry, and where it is.
  using LoadedCheck = std::function<Status(const Config&, const std::string& key, const std::string& where)>;

  // table_key: "topicConfigTable" or "subscriptionGroupTable"; name: the
  // config's name member (topicName, groupName).
  NamedConfigTable(env::Env& env, const std::string& config_dir, const char* file_name, const char* table_key,
                   std::string Config::*name, LoadedCheck check_loaded)
      : env_(env),
        file_(env, env::join_path(config_dir, file_name)),
        table_key_(table_key),
        name_(name),
        check_loaded_(std::move(check_loaded)) {}

  // Not copied: find's memo points into this table.
  NamedConfigTable(const NamedConfigTable&) = delete;
  NamedConfigTable& operator=(const NamedConfigTable&) = delete;

  Result<LoadSource> load() {
    return file_.load([this](const std::string& content) { return decode(content); });
  }

  // The entry found last is looked at first: a send and a pull each look up
  // their topic (and a pull its group), nearly always the one before.
  const Config* find(std::string_view name) const {
    const typename Table::value_type* entry = found_.find(table_, name);
    return entry == nullptr ? nullptr : &entry->second;
  }
  const Table& all() const { return table_; }
  const DataVersion& data_version() const { return data_version_; }
  const std::string& path() const { return file_.path(); }

  // An entry present before the file is loaded (TBW102): the file's entries
  // overlay it, as in RocketMQ. Neither bumps the version nor persists.
  void seed(Config config) {
    std::string name = config.*name_;
    MQ_ASSERT(!name.empty());
    table_.insert_or_assign(std::move(name), std::move(config));
  }

  // Stores config (replacing an entry of that name) and persists.
  void put(Config config, PersistCallback done) {
    seed(std::move(config));
    changed(std::move(done));
  }

  // False (nothing changes) when there is no such entry.
  bool erase(std::string_view name, PersistCallback done) {
    auto it = table_.find(name);
    if (it == table_.end()) return false;
    found_.forget();
    table_.erase(it);
    changed(std::move(done));
    return true;
  }

  nlohmann::json to_json() const {
    nlohmann::json entries = nlohmann::json::object();
    for (const auto& [name, config] : table_) {
      MQ_ASSERT(name == config.*name_);
      entries[name] = config.to_json();
    }
    nlohmann::json root = nlohmann::json::object();
    root[table_key_] = std::move(entries);
    root["dataVersion"] = data_version_.to_json();
    return root;
  }
  // The file's text; also the body of the GET_ALL_* admin request.
  std::string encode() const { return dump_json(to_json()); }
  void persist(PersistCallback done) { file_.persist(encode(), std::move(done)); }

  // The file's format, or a master's GET_ALL_* body on a slave: every entry
  // in content replaces ours (others stay), the data version becomes
  // content's. On error (Corruption naming the file and the entry) nothing
  // changes.
  Status decode(std::string_view content) {
    const std::string& where = path();
    MQ_ASSIGN_OR_RETURN(nlohmann::json root, parse_json(content, where));
    if (!root.is_object()) {
      return Status::Corruption(where + ": expected a JSON object, found " + std::string(root.type_name()));
    }
    DataVersion version;
    if (auto it = root.find("dataVersion"); it != root.end() && !it->is_null()) {
      MQ_ASSIGN_OR_RETURN(version, DataVersion::from_json(*it, where));
    }
    Table table = table_;
    if (auto entries = root.find(table_key_); entries != root.end() && !entries->is_null()) {
      if (!entries->is_object()) {
        return Status::Corruption(where + ": " + table_key_ + ": expected an object, found " +
                                  std::string(entries->type_name()));
      }
      for (const auto& item : entries->items()) {
        const std::string context = where + ": " + table_key_ + ": \"" + printable_name(item.key()) + "\"";
        MQ_ASSIGN_OR_RETURN(Config config, Config::from_json(item.value(), context));
        if ((config.*name_).empty()) config.*name_ = item.key();
        MQ_RETURN_IF_ERROR(check_loaded_(config, item.key(), context));
        table.insert_or_assign(item.key(), std::move(config));
      }
    }
    found_.forget();  // every entry is a new node
    table_ = std::move(table);
    data_version_ = version;
    return Status::Ok();
  }

 private:
  void changed(PersistCallback done) {
    data_version_.next(env_.clock().wall_ms());
    persist(std::move(done));
  }

  env::Env& env_;
  ConfigFile file_;
  const char* table_key_;
  std::string Config::*name_;
  LoadedCheck check_loaded_;
  Table table_;
  mutable RememberedEntries<Table> found_;  // find's; forgotten by erase and decode
  DataVersion data_version_;
};

}  // namespace mqlab::meta
