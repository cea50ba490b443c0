#include "broker/meta/subscription_group.h"

#include <utility>

#include "broker/common/log.h"
#include "broker/env/path.h"
#include "broker/meta/topic_config.h"

namespace mqlab::meta {
namespace {

constexpr const char* kLog = "meta";

bool is_sys_consumer_group(std::string_view group) { return group.starts_with(kSysConsumerGroupPrefix); }

Status not_negative(const std::string& group, const char* field, int64_t value) {
  if (value >= 0) return Status::Ok();
  return Status::InvalidArgument("group " + group + ": " + field + " " + std::to_string(value) + " is negative");
}

// Entries read from disk: only what would break the broker is refused (a
// negative retryQueueNums would be a modulus of a random queue id).
Status check_loaded(const SubscriptionGroupConfig& config, const std::string& key, const std::string& where) {
  if (key.empty()) return Status::Corruption(where + ": empty group name");
  if (config.groupName != key) return Status::Corruption(where + ": holds groupName '" + config.groupName + "'");
  if (config.retryQueueNums < 0) {
    return Status::Corruption(where + ": retryQueueNums " + std::to_string(config.retryQueueNums) + " is negative");
  }
  return Status::Ok();
}

}  // namespace

// --- SubscriptionGroupConfig

nlohmann::json SubscriptionGroupConfig::to_json() const {
  nlohmann::json value = nlohmann::json::object();
  value["groupName"] = groupName;
  value["consumeEnable"] = consumeEnable;
  value["consumeFromMinEnable"] = consumeFromMinEnable;
  value["consumeBroadcastEnable"] = consumeBroadcastEnable;
  value["retryQueueNums"] = retryQueueNums;
  value["retryMaxTimes"] = retryMaxTimes;
  value["brokerId"] = brokerId;
  value["whichBrokerWhenConsumeSlowly"] = whichBrokerWhenConsumeSlowly;
  value["notifyConsumerIdsChangedEnable"] = notifyConsumerIdsChangedEnable;
  return value;
}

Result<SubscriptionGroupConfig> SubscriptionGroupConfig::from_json(const nlohmann::json& value,
                                                                   std::string_view where) {
  if (!value.is_object()) {
    return Status::Corruption(std::string(where) + ": expected an object, found " + std::string(value.type_name()));
  }
  SubscriptionGroupConfig config;
  MQ_RETURN_IF_ERROR(read_json_field(value, "groupName", &config.groupName, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "consumeEnable", &config.consumeEnable, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "consumeFromMinEnable", &config.consumeFromMinEnable, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "consumeBroadcastEnable", &config.consumeBroadcastEnable, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "retryQueueNums", &config.retryQueueNums, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "retryMaxTimes", &config.retryMaxTimes, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "brokerId", &config.brokerId, where));
  MQ_RETURN_IF_ERROR(
      read_json_field(value, "whichBrokerWhenConsumeSlowly", &config.whichBrokerWhenConsumeSlowly, where));
  MQ_RETURN_IF_ERROR(
      read_json_field(value, "notifyConsumerIdsChangedEnable", &config.notifyConsumerIdsChangedEnable, where));
  return config;
}

Status validate_subscription_group_config(const SubscriptionGroupConfig& config) {
  MQ_RETURN_IF_ERROR(validate_group_name(config.groupName));
  if (config.retryQueueNums < 0 || config.retryQueueNums > kMaxQueueNums) {
    return Status::InvalidArgument("group " + config.groupName + ": retryQueueNums " +
                                   std::to_string(config.retryQueueNums) + " is outside [0, " +
                                   std::to_string(kMaxQueueNums) + "]");
  }
  MQ_RETURN_IF_ERROR(not_negative(config.groupName, "retryMaxTimes", config.retryMaxTimes));
  MQ_RETURN_IF_ERROR(not_negative(config.groupName, "brokerId", config.brokerId));
  MQ_RETURN_IF_ERROR(
      not_negative(config.groupName, "whichBrokerWhenConsumeSlowly", config.whichBrokerWhenConsumeSlowly));
  return Status::Ok();
}

// --- SubscriptionGroupManager

SubscriptionGroupManager::SubscriptionGroupManager(env::Env& env, std::string config_dir,
                                                   SubscriptionGroupManagerOptions options)
    : env_(env), options_(options), file_(env, env::join_path(config_dir, kFileName)) {}

Result<LoadSource> SubscriptionGroupManager::load() {
  return file_.load([this](const std::string& content) { return decode(content); });
}

Status SubscriptionGroupManager::decode(const std::string& content) {
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
  if (auto groups = root.find("subscriptionGroupTable"); groups != root.end() && !groups->is_null()) {
    if (!groups->is_object()) {
      return Status::Corruption(where + ": subscriptionGroupTable: expected an object, found " +
                                std::string(groups->type_name()));
    }
    for (const auto& item : groups->items()) {
      const std::string context = where + ": subscriptionGroupTable: \"" + item.key() + "\"";
      MQ_ASSIGN_OR_RETURN(SubscriptionGroupConfig config, SubscriptionGroupConfig::from_json(item.value(), context));
      if (config.groupName.empty()) config.groupName = item.key();
      MQ_RETURN_IF_ERROR(check_loaded(config, item.key(), context));
      table.insert_or_assign(item.key(), std::move(config));
    }
  }
  table_ = std::move(table);
  data_version_ = version;
  return Status::Ok();
}

const SubscriptionGroupConfig* SubscriptionGroupManager::find(std::string_view group) const {
  auto it = table_.find(group);
  return it == table_.end() ? nullptr : &it->second;
}

Result<SubscriptionGroupConfig> SubscriptionGroupManager::find_or_create(std::string_view group,
                                                                         PersistCallback done) {
  if (const SubscriptionGroupConfig* existing = find(group)) return *existing;
  if (!options_.autoCreateSubscriptionGroup && !is_sys_consumer_group(group)) {
    return Status::NotFound("subscription group " + std::string(group) +
                            " does not exist and autoCreateSubscriptionGroup is false");
  }
  SubscriptionGroupConfig config;
  config.groupName = std::string(group);
  MQ_RETURN_IF_ERROR(validate_subscription_group_config(config));
  MQ_LOG(kInfo, kLog, "auto-created subscription group " << group);
  put(config, std::move(done));
  return config;
}

Result<SubscriptionGroupConfig> SubscriptionGroupManager::create_or_update(SubscriptionGroupConfig config,
                                                                           PersistCallback done) {
  MQ_RETURN_IF_ERROR(validate_subscription_group_config(config));
  MQ_LOG(kInfo, kLog, (find(config.groupName) ? "updated" : "created") << " subscription group "
                                                                        << config.groupName);
  put(config, std::move(done));
  return config;
}

Status SubscriptionGroupManager::delete_group(std::string_view group, PersistCallback done) {
  auto it = table_.find(group);
  if (it == table_.end()) return Status::NotFound("subscription group " + std::string(group) + " does not exist");
  table_.erase(it);
  data_version_.next(env_.clock().wall_ms());
  MQ_LOG(kInfo, kLog, "deleted subscription group " << group);
  persist(std::move(done));
  return Status::Ok();
}

void SubscriptionGroupManager::put(SubscriptionGroupConfig config, PersistCallback done) {
  MQ_ASSERT(!config.groupName.empty());
  std::string name = config.groupName;
  table_.insert_or_assign(std::move(name), std::move(config));
  data_version_.next(env_.clock().wall_ms());
  persist(std::move(done));
}

nlohmann::json SubscriptionGroupManager::to_json() const {
  nlohmann::json groups = nlohmann::json::object();
  for (const auto& [name, config] : table_) {
    MQ_ASSERT(name == config.groupName);
    groups[name] = config.to_json();
  }
  nlohmann::json root = nlohmann::json::object();
  root["subscriptionGroupTable"] = std::move(groups);
  root["dataVersion"] = data_version_.to_json();
  return root;
}

void SubscriptionGroupManager::persist(PersistCallback done) { file_.persist(encode(), std::move(done)); }

}  // namespace mqlab::meta
