#include "broker/meta/subscription_group.h"

#include <utility>

#include "broker/common/log.h"
#include "broker/env/path.h"
#include "broker/meta/topic_config.h"

namespace mqlab::meta {
namespace {

constexpr const char* kSubscriptionGroupLog = "meta";

bool is_sys_consumer_group(std::string_view group) { return group.starts_with(kSysConsumerGroupPrefix); }

Status not_negative(const std::string& group, const char* field, int64_t value) {
  if (value >= 0) return Status::Ok();
  return Status::InvalidArgument("group " + group + ": " + field + " " + std::to_string(value) + " is negative");
}

// Entries read from disk: only what would break the broker is refused (a
// negative retryQueueNums would be a modulus of a random queue id).
Status check_loaded_group(const SubscriptionGroupConfig& config, const std::string& key, const std::string& where) {
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
    : options_(options),
      configs_(env, config_dir, kFileName, "subscriptionGroupTable", &SubscriptionGroupConfig::groupName,
               check_loaded_group) {}

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
  MQ_LOG(kInfo, kSubscriptionGroupLog, "auto-created subscription group " << group);
  configs_.put(config, std::move(done));
  return config;
}

Result<SubscriptionGroupConfig> SubscriptionGroupManager::create_or_update(SubscriptionGroupConfig config,
                                                                           PersistCallback done) {
  MQ_RETURN_IF_ERROR(validate_subscription_group_config(config));
  MQ_LOG(kInfo, kSubscriptionGroupLog, (find(config.groupName) ? "updated" : "created") << " subscription group "
                                                                        << config.groupName);
  configs_.put(config, std::move(done));
  return config;
}

Status SubscriptionGroupManager::delete_group(std::string_view group, PersistCallback done) {
  if (!configs_.erase(group, std::move(done))) {
    return Status::NotFound("subscription group " + printable_name(group) + " does not exist");
  }
  MQ_LOG(kInfo, kSubscriptionGroupLog, "deleted subscription group " << group);
  return Status::Ok();
}

}  // namespace mqlab::meta
