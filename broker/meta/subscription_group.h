// SubscriptionGroupConfig and SubscriptionGroupManager: the consumer groups a
// broker serves, persisted as {storePathRootDir}/config/subscriptionGroup.json
// in RocketMQ's shape (apache/rocketmq broker/…/subscription/SubscriptionGroupManager.java):
//   {"dataVersion":{"counter":N,"timestamp":MS},
//    "subscriptionGroupTable":{"G":{"brokerId":0,"consumeBroadcastEnable":true,
//        "consumeEnable":true,"consumeFromMinEnable":true,"groupName":"G",
//        "notifyConsumerIdsChangedEnable":true,"retryMaxTimes":16,
//        "retryQueueNums":1,"whichBrokerWhenConsumeSlowly":1}}}
// A group appears on its first heartbeat or pull when autoCreateSubscriptionGroup
// is on (or always, for RocketMQ's system groups "CID_RMQ_SYS_…").
//
// Invariants: every entry's key equals its groupName; changes made through
// this class passed validate_subscription_group_config; each change bumps
// dataVersion and persists the whole table.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "broker/common/status.h"
#include "broker/env/env.h"
#include "broker/meta/config_file.h"
#include "broker/meta/named_config_table.h"

namespace mqlab::meta {

// MixAll.CID_RMQ_SYS_PREFIX: groups with this prefix are auto-created even
// when autoCreateSubscriptionGroup is off (MixAll.isSysConsumerGroup).
inline constexpr std::string_view kSysConsumerGroupPrefix = "CID_RMQ_SYS_";

struct SubscriptionGroupConfig {
  std::string groupName;
  bool consumeEnable = true;
  bool consumeFromMinEnable = true;
  bool consumeBroadcastEnable = true;
  int32_t retryQueueNums = 1;   // 0 disables retries (send-back is dropped)
  int32_t retryMaxTimes = 16;   // reconsumes before a message goes to %DLQ%
  int64_t brokerId = 0;         // where consumers pull: MixAll.MASTER_ID
  int64_t whichBrokerWhenConsumeSlowly = 1;
  bool notifyConsumerIdsChangedEnable = true;

  nlohmann::json to_json() const;
  // Missing fields keep their defaults; a wrong type is Corruption naming where.
  static Result<SubscriptionGroupConfig> from_json(const nlohmann::json& value, std::string_view where);
  bool operator==(const SubscriptionGroupConfig&) const = default;
};

// A valid group name, retryQueueNums in [0, kMaxQueueNums], retryMaxTimes,
// brokerId and whichBrokerWhenConsumeSlowly not negative.
Status validate_subscription_group_config(const SubscriptionGroupConfig& config);

struct SubscriptionGroupManagerOptions {
  bool autoCreateSubscriptionGroup = true;  // broker.conf key
};

class SubscriptionGroupManager {
 public:
  static constexpr const char* kFileName = "subscriptionGroup.json";
  using Table = NamedConfigTable<SubscriptionGroupConfig>::Table;

  SubscriptionGroupManager(env::Env& env, std::string config_dir, SubscriptionGroupManagerOptions options = {});

  Result<LoadSource> load() { return configs_.load(); }

  const SubscriptionGroupConfig* find(std::string_view name) const { return configs_.find(name); }
  const Table& all() const { return configs_.all(); }
  const DataVersion& data_version() const { return configs_.data_version(); }

  // findSubscriptionGroupConfig: the group's config, created with defaults
  // (and persisted) when missing and auto-creation applies; NotFound otherwise.
  Result<SubscriptionGroupConfig> find_or_create(std::string_view group, PersistCallback done = nullptr);
  Result<SubscriptionGroupConfig> create_or_update(SubscriptionGroupConfig config, PersistCallback done = nullptr);
  // NotFound when there is no such group.
  Status delete_group(std::string_view group, PersistCallback done = nullptr);

  nlohmann::json to_json() const { return configs_.to_json(); }
  // The file's text; also the GET_ALL_SUBSCRIPTIONGROUP_CONFIG body.
  std::string encode() const { return configs_.encode(); }
  void persist(PersistCallback done = nullptr) { configs_.persist(std::move(done)); }
  const std::string& path() const { return configs_.path(); }
  // A slave's sync from its master's GET_ALL_SUBSCRIPTIONGROUP_CONFIG body:
  // every group in json replaces ours (others stay). On error nothing changes.
  Status replace_from_json(std::string_view json) { return configs_.decode(json); }

 private:
  SubscriptionGroupManagerOptions options_;
  NamedConfigTable<SubscriptionGroupConfig> configs_;
};

}  // namespace mqlab::meta
