// TopicConfig and TopicConfigManager: the broker's topic table, persisted as
// {storePathRootDir}/config/topics.json in RocketMQ's shape
// (apache/rocketmq broker/…/topic/TopicConfigManager.java):
//   {"dataVersion":{"counter":N,"timestamp":MS},
//    "topicConfigTable":{"T":{"order":false,"perm":6,"readQueueNums":4,
//        "topicFilterType":"SINGLE_TAG","topicName":"T","topicSysFlag":0,"writeQueueNums":4}}}
// Keys are written sorted, so one table gives one file, byte for byte.
//
// Invariants: every entry's key equals its topicName; every change made
// through this class passed validate_topic_config (entries loaded from disk are
// only checked for what would break the broker, since RocketMQ itself wrote
// them without our limits); each change bumps dataVersion (wall-clock
// timestamp, counter + 1) and persists the whole table.
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

// RocketMQ's PermName bits, spelled its way.
struct PermName {
  static constexpr int32_t PERM_PRIORITY = 1 << 3;
  static constexpr int32_t PERM_READ = 1 << 2;
  static constexpr int32_t PERM_WRITE = 1 << 1;
  static constexpr int32_t PERM_INHERIT = 1 << 0;
  static bool is_readable(int32_t perm) { return (perm & PERM_READ) != 0; }
  static bool is_writeable(int32_t perm) { return (perm & PERM_WRITE) != 0; }
  static bool is_inherited(int32_t perm) { return (perm & PERM_INHERIT) != 0; }
};

// TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC: the template auto-created topics copy.
inline constexpr std::string_view kAutoCreateTopicKeyTopic = "TBW102";
// MixAll.RETRY_GROUP_TOPIC_PREFIX and DLQ_GROUP_TOPIC_PREFIX.
inline constexpr std::string_view kRetryGroupTopicPrefix = "%RETRY%";
inline constexpr std::string_view kDlqGroupTopicPrefix = "%DLQ%";
// TopicValidator.TOPIC_MAX_LENGTH and the client's Validators.CHARACTER_MAX_LENGTH.
inline constexpr size_t kTopicMaxLength = 127;
inline constexpr size_t kGroupMaxLength = 255;
// Our limit for queues set through this API; RocketMQ has none, but a topic
// with more queues than this is a typo, and every queue costs files.
inline constexpr int32_t kMaxQueueNums = 1024;

std::string retry_topic(std::string_view group);  // "%RETRY%" + group
std::string dlq_topic(std::string_view group);    // "%DLQ%" + group

// RocketMQ's naming rule ^[%|a-zA-Z0-9_-]+$ with a length limit; the message
// names the offending character and its index.
Status validate_topic_name(std::string_view topic);
Status validate_group_name(std::string_view group);

struct TopicConfig {
  std::string topicName;
  int32_t readQueueNums = 16;  // RocketMQ's TopicConfig.defaultReadQueueNums
  int32_t writeQueueNums = 16;
  int32_t perm = PermName::PERM_READ | PermName::PERM_WRITE;
  std::string topicFilterType = "SINGLE_TAG";  // or MULTI_TAG
  int32_t topicSysFlag = 0;
  bool order = false;

  nlohmann::json to_json() const;
  // Missing fields keep their defaults; a wrong type is Corruption naming where.
  static Result<TopicConfig> from_json(const nlohmann::json& value, std::string_view where);
  bool operator==(const TopicConfig&) const = default;
};

// The rules a topic created or updated through the broker must meet: a valid
// name, 1..kMaxQueueNums queues each way, perm within READ|WRITE|INHERIT, a
// known filter type, a non-negative sys flag.
Status validate_topic_config(const TopicConfig& config);

struct TopicConfigManagerOptions {
  bool autoCreateTopicEnable = true;  // broker.conf keys, spelled their way
  int32_t defaultTopicQueueNums = 8;
};

class TopicConfigManager {
 public:
  static constexpr const char* kFileName = "topics.json";
  using Table = NamedConfigTable<TopicConfig>::Table;

  // With autoCreateTopicEnable, TBW102 exists from the start (perm 7,
  // defaultTopicQueueNums queues each way); load() overlays the file on it.
  TopicConfigManager(env::Env& env, std::string config_dir, TopicConfigManagerOptions options = {});

  Result<LoadSource> load() { return configs_.load(); }

  const TopicConfig* find(std::string_view name) const { return configs_.find(name); }
  const Table& all() const { return configs_.all(); }
  const DataVersion& data_version() const { return configs_.data_version(); }

  // Validates, stores (replacing a topic of that name) and persists; done
  // hears when the file is durable.
  Result<TopicConfig> create_or_update(TopicConfig config, PersistCallback done = nullptr);
  // NotFound when there is no such topic.
  Status delete_topic(std::string_view topic, PersistCallback done = nullptr);

  // A producer sent to an unknown topic (createTopicInSendMessageMethod): an
  // existing topic is returned as is; otherwise default_topic must exist and
  // carry INHERIT (TBW102 never does while autoCreateTopicEnable is off), and
  // the new topic gets its perm without INHERIT, its filter type, and
  // min(requested_queue_nums, its writeQueueNums) queues each way.
  Result<TopicConfig> create_topic_in_send_message(std::string_view topic, std::string_view default_topic,
                                                   int32_t requested_queue_nums, int32_t topic_sys_flag = 0,
                                                   PersistCallback done = nullptr);
  // "%RETRY%group": retry_queue_nums queues (the group's retryQueueNums, 1 by
  // default), perm READ|WRITE. Existing topics are returned as is.
  Result<TopicConfig> create_topic_of_retry(std::string_view group, int32_t retry_queue_nums = 1,
                                            PersistCallback done = nullptr);
  // "%DLQ%group": 1 queue, perm READ|WRITE as in 4.9.x (older 4.x releases
  // gave WRITE only, so a dead-letter queue could not be consumed until an
  // operator changed its perm).
  Result<TopicConfig> create_topic_of_dlq(std::string_view group, PersistCallback done = nullptr);

  nlohmann::json to_json() const { return configs_.to_json(); }
  // The file's text; also the GET_ALL_TOPIC_CONFIG body.
  std::string encode() const { return configs_.encode(); }
  void persist(PersistCallback done = nullptr) { configs_.persist(std::move(done)); }
  const std::string& path() const { return configs_.path(); }
  // A slave's sync from its master's GET_ALL_TOPIC_CONFIG body: every topic
  // in json replaces ours (others stay), the data version becomes the
  // master's. On error (Corruption naming the topic) nothing changes.
  Status replace_from_json(std::string_view json) { return configs_.decode(json); }

 private:
  Result<TopicConfig> create_in_send_message_back(std::string topic, int32_t queue_nums, int32_t perm,
                                                  PersistCallback done);

  TopicConfigManagerOptions options_;
  NamedConfigTable<TopicConfig> configs_;
};

}  // namespace mqlab::meta
