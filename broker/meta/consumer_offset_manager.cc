#include "broker/meta/consumer_offset_manager.h"

#include <charconv>
#include <utility>

#include "broker/common/assign_text.h"
#include "broker/common/joined_text.h"
#include "broker/common/log.h"
#include "broker/common/same_bytes.h"
#include "broker/env/path.h"

namespace mqlab::meta {
namespace {

constexpr const char* kConsumerOffsetManagerLog = "meta";

// "T@G" -> {T, G}; nullopt unless both parts are non-empty and there is
// exactly one separator (neither topics nor groups may hold '@').
std::optional<std::pair<std::string_view, std::string_view>> split_key(std::string_view key) {
  const size_t at = key.find(ConsumerOffsetManager::kTopicGroupSeparator);
  if (at == std::string_view::npos || at == 0 || at + 1 == key.size()) return std::nullopt;
  if (key.find(ConsumerOffsetManager::kTopicGroupSeparator, at + 1) != std::string_view::npos) return std::nullopt;
  return std::make_pair(key.substr(0, at), key.substr(at + 1));
}

Status check_part(const char* what, std::string_view value) {
  if (value.empty()) return Status::InvalidArgument(std::string(what) + " is empty");
  if (value.find(ConsumerOffsetManager::kTopicGroupSeparator) != std::string_view::npos) {
    return Status::InvalidArgument(std::string(what) + " '" + std::string(value) + "' holds '@'");
  }
  return Status::Ok();
}

Result<ConsumerOffsetManager::QueueOffsets> decode_queue_offsets(const nlohmann::json& value,
                                                                 const std::string& where) {
  if (!value.is_object()) {
    return Status::Corruption(where + ": expected an object of queue offsets, found " +
                              std::string(value.type_name()));
  }
  ConsumerOffsetManager::QueueOffsets offsets;
  for (const auto& item : value.items()) {
    const std::string& key = item.key();
    int32_t queue_id = 0;
    const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), queue_id);
    if (error != std::errc() || end != key.data() + key.size()) {
      return Status::Corruption(where + ": queue id \"" + key + "\" is not an int");
    }
    int64_t offset = 0;
    MQ_RETURN_IF_ERROR(read_json_field(value, key.c_str(), &offset, where));
    offsets[queue_id] = offset;
  }
  return offsets;
}

// {"offsetTable":{...}} -> table. Entries whose key is not topic@group can
// never be queried, so they are dropped with a warning rather than refused.
Result<ConsumerOffsetManager::OffsetTable> decode_table(std::string_view text, const std::string& where) {
  MQ_ASSIGN_OR_RETURN(nlohmann::json root, parse_json(text, where));
  if (!root.is_object()) {
    return Status::Corruption(where + ": expected a JSON object, found " + std::string(root.type_name()));
  }
  ConsumerOffsetManager::OffsetTable table;
  auto entries = root.find("offsetTable");
  if (entries == root.end() || entries->is_null()) return table;
  if (!entries->is_object()) {
    return Status::Corruption(where + ": offsetTable: expected an object, found " + std::string(entries->type_name()));
  }
  for (const auto& item : entries->items()) {
    const std::string context = where + ": offsetTable: \"" + item.key() + "\"";
    if (!split_key(item.key())) {
      MQ_LOG(kWarn, kConsumerOffsetManagerLog, context << ": not topic@group; dropped");
      continue;
    }
    MQ_ASSIGN_OR_RETURN(ConsumerOffsetManager::QueueOffsets offsets, decode_queue_offsets(item.value(), context));
    table.emplace(item.key(), std::move(offsets));
  }
  return table;
}

}  // namespace

ConsumerOffsetManager::ConsumerOffsetManager(env::Env& env, std::string config_dir)
    : file_(env, env::join_path(config_dir, kFileName)) {}

Result<LoadSource> ConsumerOffsetManager::load() {
  return file_.load([this](const std::string& content) { return decode(content); });
}

Status ConsumerOffsetManager::decode(const std::string& content) {
  MQ_ASSIGN_OR_RETURN(OffsetTable table, decode_table(content, path()));
  forget_last_commit();
  table_ = std::move(table);
  return Status::Ok();
}

Status ConsumerOffsetManager::commit_offset(std::string_view group, std::string_view topic, int32_t queue_id,
                                            int64_t offset) {
  if (queue_id < 0) return Status::InvalidArgument("queue id " + std::to_string(queue_id) + " is negative");
  if (offset < 0) return Status::InvalidArgument("offset " + std::to_string(offset) + " is negative");
  // The last commit's group and topic passed the checks below: a consumer's
  // pulls commit for the same pair over and over.
  if (last_commit_offsets_ != nullptr && last_commit_is(group, topic)) {
    (*last_commit_offsets_)[queue_id] = offset;
    return Status::Ok();
  }
  MQ_RETURN_IF_ERROR(check_part("group", group));
  MQ_RETURN_IF_ERROR(check_part("topic", topic));
  // Another entry: the key is put together on the stack for the lookup,
  // and made a string only when it is new.
  with_joined_text(topic, kTopicGroupSeparator, group, [&](std::string_view key) {
    MQ_ASSERT(split_key(key).has_value());
    auto it = table_.find(key);
    if (it == table_.end()) it = table_.emplace(std::string(key), QueueOffsets()).first;
    it->second[queue_id] = offset;
    assign_text(last_commit_key_, key);
    last_commit_offsets_ = &it->second;
  });
  return Status::Ok();
}

bool ConsumerOffsetManager::last_commit_is(std::string_view group, std::string_view topic) const {
  const std::string_view key = last_commit_key_;
  return key.size() == topic.size() + 1 + group.size() && same_bytes(key.data(), topic.data(), topic.size()) &&
         key[topic.size()] == kTopicGroupSeparator &&
         same_bytes(key.data() + topic.size() + 1, group.data(), group.size());
}

void ConsumerOffsetManager::forget_last_commit() {
  last_commit_key_.clear();
  last_commit_offsets_ = nullptr;
}

std::optional<int64_t> ConsumerOffsetManager::query_offset(std::string_view group, std::string_view topic,
                                                           int32_t queue_id) const {
  const QueueOffsets* offsets = query_offsets(group, topic);
  if (offsets == nullptr) return std::nullopt;
  auto it = offsets->find(queue_id);
  if (it == offsets->end()) return std::nullopt;
  return it->second;
}

const ConsumerOffsetManager::QueueOffsets* ConsumerOffsetManager::query_offsets(std::string_view group,
                                                                                std::string_view topic) const {
  return with_joined_text(topic, kTopicGroupSeparator, group, [this](std::string_view key) -> const QueueOffsets* {
    auto it = table_.find(key);
    return it == table_.end() ? nullptr : &it->second;
  });
}

std::set<std::string> ConsumerOffsetManager::groups_of_topic(std::string_view topic) const {
  std::set<std::string> groups;
  for (const auto& [key, offsets] : table_) {
    auto parts = split_key(key);
    MQ_ASSERT(parts.has_value());  // decode and commit_offset admit only topic@group keys
    if (parts->first == topic) groups.emplace(parts->second);
  }
  return groups;
}

std::set<std::string> ConsumerOffsetManager::topics_of_group(std::string_view group) const {
  std::set<std::string> topics;
  for (const auto& [key, offsets] : table_) {
    auto parts = split_key(key);
    MQ_ASSERT(parts.has_value());
    if (parts->second == group) topics.emplace(parts->first);
  }
  return topics;
}

size_t ConsumerOffsetManager::remove_group(std::string_view group) {
  forget_last_commit();
  size_t removed = 0;
  for (auto it = table_.begin(); it != table_.end();) {
    auto parts = split_key(it->first);
    MQ_ASSERT(parts.has_value());
    if (parts->second == group) {
      it = table_.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  if (removed > 0) MQ_LOG(kInfo, kConsumerOffsetManagerLog, "removed offsets of group " << group << " on " << removed << " topics");
  return removed;
}

nlohmann::json ConsumerOffsetManager::to_json() const {
  nlohmann::json entries = nlohmann::json::object();
  for (const auto& [key, offsets] : table_) {
    nlohmann::json queues = nlohmann::json::object();
    for (const auto& [queue_id, offset] : offsets) queues[std::to_string(queue_id)] = offset;
    entries[key] = std::move(queues);
  }
  nlohmann::json root = nlohmann::json::object();
  root["offsetTable"] = std::move(entries);
  return root;
}

std::string ConsumerOffsetManager::all_offsets_json() const {
  return to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status ConsumerOffsetManager::replace_from_json(std::string_view json) {
  MQ_ASSIGN_OR_RETURN(OffsetTable table, decode_table(json, "consumer offsets from master"));
  forget_last_commit();
  for (auto& [key, offsets] : table) table_.insert_or_assign(key, std::move(offsets));
  return Status::Ok();
}

void ConsumerOffsetManager::persist(PersistCallback done) { file_.persist(dump_json(to_json()), std::move(done)); }

}  // namespace mqlab::meta
