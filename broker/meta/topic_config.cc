#include "broker/meta/topic_config.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "broker/common/log.h"
#include "broker/env/path.h"

namespace mqlab::meta {
namespace {

constexpr const char* kTopicConfigLog = "meta";
// What a loaded entry may hold before the broker would misbehave (negative
// counts break queue selection; absurd ones allocate absurdly).
constexpr int32_t kMaxLoadedQueueNums = 65535;
constexpr int32_t kAllPermBits = PermName::PERM_READ | PermName::PERM_WRITE | PermName::PERM_INHERIT;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '%' || c == '|' ||
         c == '_' || c == '-';
}

Status validate_name(const char* kind, std::string_view name, size_t max_length) {
  if (name.empty()) return Status::InvalidArgument(std::string(kind) + " name is empty");
  if (name.size() > max_length) {
    return Status::InvalidArgument(std::string(kind) + " name '" + printable_name(name) + "' is " +
                                   std::to_string(name.size()) + " characters long; at most " +
                                   std::to_string(max_length) + " are allowed");
  }
  for (size_t i = 0; i < name.size(); ++i) {
    if (!is_name_char(name[i])) {
      return Status::InvalidArgument(std::string(kind) + " name '" + printable_name(name) + "' has '" +
                                     printable_name(name.substr(i, 1)) + "' at index " + std::to_string(i) +
                                     "; only characters of %|a-zA-Z0-9_- are allowed");
    }
  }
  return Status::Ok();
}

Status check_queue_nums(const char* field, int32_t value, int32_t max) {
  if (value < 1 || value > max) {
    return Status::InvalidArgument(std::string(field) + " " + std::to_string(value) + " is outside [1, " +
                                   std::to_string(max) + "]");
  }
  return Status::Ok();
}

// Entries read from disk: only what would break the broker is refused.
Status check_loaded_topic(const TopicConfig& config, const std::string& key, const std::string& where) {
  if (key.empty()) return Status::Corruption(where + ": empty topic name");
  if (config.topicName != key) {
    return Status::Corruption(where + ": holds topicName '" + printable_name(config.topicName) + "'");
  }
  for (int32_t nums : {config.readQueueNums, config.writeQueueNums}) {
    if (nums < 0 || nums > kMaxLoadedQueueNums) {
      return Status::Corruption(where + ": queue count " + std::to_string(nums) + " outside [0, " +
                                std::to_string(kMaxLoadedQueueNums) + "]");
    }
  }
  if (config.perm < 0 || config.perm > 15) {
    return Status::Corruption(where + ": perm " + std::to_string(config.perm) + " outside [0, 15]");
  }
  return Status::Ok();
}

}  // namespace

std::string retry_topic(std::string_view group) { return std::string(kRetryGroupTopicPrefix) + std::string(group); }
std::string dlq_topic(std::string_view group) { return std::string(kDlqGroupTopicPrefix) + std::string(group); }

Status validate_topic_name(std::string_view topic) { return validate_name("topic", topic, kTopicMaxLength); }
Status validate_group_name(std::string_view group) { return validate_name("group", group, kGroupMaxLength); }

// --- TopicConfig

nlohmann::json TopicConfig::to_json() const {
  nlohmann::json value = nlohmann::json::object();
  value["topicName"] = topicName;
  value["readQueueNums"] = readQueueNums;
  value["writeQueueNums"] = writeQueueNums;
  value["perm"] = perm;
  value["topicFilterType"] = topicFilterType;
  value["topicSysFlag"] = topicSysFlag;
  value["order"] = order;
  return value;
}

Result<TopicConfig> TopicConfig::from_json(const nlohmann::json& value, std::string_view where) {
  if (!value.is_object()) {
    return Status::Corruption(std::string(where) + ": expected an object, found " + std::string(value.type_name()));
  }
  TopicConfig config;
  MQ_RETURN_IF_ERROR(read_json_field(value, "topicName", &config.topicName, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "readQueueNums", &config.readQueueNums, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "writeQueueNums", &config.writeQueueNums, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "perm", &config.perm, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "topicFilterType", &config.topicFilterType, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "topicSysFlag", &config.topicSysFlag, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "order", &config.order, where));
  return config;
}

Status validate_topic_config(const TopicConfig& config) {
  MQ_RETURN_IF_ERROR(validate_topic_name(config.topicName));
  const std::string context = "topic " + config.topicName;
  const std::string topic = context + ": ";
  MQ_RETURN_IF_ERROR(check_queue_nums("readQueueNums", config.readQueueNums, kMaxQueueNums).with_context(context));
  MQ_RETURN_IF_ERROR(check_queue_nums("writeQueueNums", config.writeQueueNums, kMaxQueueNums).with_context(context));
  if (config.perm < 0 || (config.perm & ~kAllPermBits) != 0) {
    return Status::InvalidArgument(topic + "perm " + std::to_string(config.perm) +
                                   " has bits other than READ 4, WRITE 2, INHERIT 1");
  }
  if (config.topicFilterType != "SINGLE_TAG" && config.topicFilterType != "MULTI_TAG") {
    return Status::InvalidArgument(topic + "topicFilterType '" + printable_name(config.topicFilterType) +
                                   "' is neither SINGLE_TAG nor MULTI_TAG");
  }
  if (config.topicSysFlag < 0) {
    return Status::InvalidArgument(topic + "topicSysFlag " + std::to_string(config.topicSysFlag) + " is negative");
  }
  return Status::Ok();
}

// --- TopicConfigManager

TopicConfigManager::TopicConfigManager(env::Env& env, std::string config_dir, TopicConfigManagerOptions options)
    : options_(options),
      configs_(env, config_dir, kFileName, "topicConfigTable", &TopicConfig::topicName, check_loaded_topic) {
  if (options_.defaultTopicQueueNums < 1 || options_.defaultTopicQueueNums > kMaxQueueNums) {
    const int32_t clamped = std::clamp(options_.defaultTopicQueueNums, 1, kMaxQueueNums);
    MQ_LOG(kWarn, kTopicConfigLog, "defaultTopicQueueNums=" << options_.defaultTopicQueueNums << " outside [1, "
                                                 << kMaxQueueNums << "]; using " << clamped);
    options_.defaultTopicQueueNums = clamped;
  }
  if (options_.autoCreateTopicEnable) {
    TopicConfig tbw;
    tbw.topicName = std::string(kAutoCreateTopicKeyTopic);
    tbw.readQueueNums = options_.defaultTopicQueueNums;
    tbw.writeQueueNums = options_.defaultTopicQueueNums;
    tbw.perm = PermName::PERM_READ | PermName::PERM_WRITE | PermName::PERM_INHERIT;
    MQ_ASSERT(validate_topic_config(tbw).ok());
    configs_.seed(std::move(tbw));
  }
}

Result<TopicConfig> TopicConfigManager::create_or_update(TopicConfig config, PersistCallback done) {
  MQ_RETURN_IF_ERROR(validate_topic_config(config));
  const bool existed = find(config.topicName) != nullptr;
  MQ_LOG(kInfo, kTopicConfigLog, (existed ? "updated" : "created") << " topic " << config.topicName << " (queues "
                                                         << config.readQueueNums << "/" << config.writeQueueNums
                                                         << ", perm " << config.perm << ")");
  configs_.put(config, std::move(done));
  MQ_ASSERT(find(config.topicName) != nullptr);
  return config;
}

Status TopicConfigManager::delete_topic(std::string_view topic, PersistCallback done) {
  if (!configs_.erase(topic, std::move(done))) {
    return Status::NotFound("topic " + printable_name(topic) + " does not exist");
  }
  MQ_LOG(kInfo, kTopicConfigLog, "deleted topic " << topic);
  return Status::Ok();
}

Result<TopicConfig> TopicConfigManager::create_topic_in_send_message(std::string_view topic,
                                                                     std::string_view default_topic,
                                                                     int32_t requested_queue_nums,
                                                                     int32_t topic_sys_flag, PersistCallback done) {
  if (const TopicConfig* existing = find(topic)) return *existing;
  MQ_RETURN_IF_ERROR(validate_topic_name(topic));
  const std::string creating = "auto-creating topic " + std::string(topic) + ": ";
  if (requested_queue_nums < 1) {
    return Status::InvalidArgument(creating + "requested " + std::to_string(requested_queue_nums) + " queues");
  }
  const TopicConfig* model = find(default_topic);
  if (model == nullptr) {
    return Status::NotFound(creating + "default topic " + printable_name(default_topic) + " does not exist");
  }
  int32_t perm = model->perm;
  // RocketMQ strips INHERIT from TBW102 while autoCreateTopicEnable is off
  // (it could have come from a file written when it was on).
  const bool disabled = default_topic == kAutoCreateTopicKeyTopic && !options_.autoCreateTopicEnable;
  if (disabled) perm &= ~PermName::PERM_INHERIT;
  if (!PermName::is_inherited(perm)) {
    return Status::InvalidArgument(creating + "default topic " + model->topicName + " lacks INHERIT (perm " +
                                   std::to_string(perm) + ")" +
                                   (disabled ? "; autoCreateTopicEnable is false" : ""));
  }
  TopicConfig config;
  config.topicName = std::string(topic);
  config.readQueueNums = std::min(requested_queue_nums, model->writeQueueNums);
  config.writeQueueNums = config.readQueueNums;
  config.perm = perm & ~PermName::PERM_INHERIT;
  config.topicSysFlag = topic_sys_flag;
  config.topicFilterType = model->topicFilterType;
  MQ_RETURN_IF_ERROR(validate_topic_config(config).with_context("auto-creating from " + model->topicName));
  MQ_ASSERT(!PermName::is_inherited(config.perm));
  MQ_LOG(kInfo, kTopicConfigLog, "auto-created topic " << topic << " from " << default_topic << " with "
                                            << config.writeQueueNums << " queues, perm " << config.perm);
  configs_.put(config, std::move(done));
  return config;
}

Result<TopicConfig> TopicConfigManager::create_topic_of_retry(std::string_view group, int32_t retry_queue_nums,
                                                              PersistCallback done) {
  MQ_RETURN_IF_ERROR(validate_group_name(group));
  MQ_RETURN_IF_ERROR(check_queue_nums("retryQueueNums", retry_queue_nums, kMaxQueueNums)
                         .with_context("retry topic of group " + std::string(group)));
  return create_in_send_message_back(retry_topic(group), retry_queue_nums,
                                     PermName::PERM_READ | PermName::PERM_WRITE, std::move(done));
}

Result<TopicConfig> TopicConfigManager::create_topic_of_dlq(std::string_view group, PersistCallback done) {
  MQ_RETURN_IF_ERROR(validate_group_name(group));
  constexpr int32_t kDlqNumsPerGroup = 1;  // SendMessageProcessor.DLQ_NUMS_PER_GROUP
  return create_in_send_message_back(dlq_topic(group), kDlqNumsPerGroup, PermName::PERM_READ | PermName::PERM_WRITE,
                                     std::move(done));
}

// createTopicInSendMessageBackMethod. The name is the group's, already
// validated; with its prefix it may pass the 127-character topic limit, which
// RocketMQ does not apply to these topics either.
Result<TopicConfig> TopicConfigManager::create_in_send_message_back(std::string topic, int32_t queue_nums,
                                                                    int32_t perm, PersistCallback done) {
  if (const TopicConfig* existing = find(topic)) return *existing;
  MQ_ASSERT(queue_nums >= 1 && queue_nums <= kMaxQueueNums);
  MQ_ASSERT((perm & ~kAllPermBits) == 0);
  TopicConfig config;
  config.topicName = std::move(topic);
  config.readQueueNums = queue_nums;
  config.writeQueueNums = queue_nums;
  config.perm = perm;
  MQ_LOG(kInfo, kTopicConfigLog, "created topic " << config.topicName << " with " << queue_nums << " queues");
  configs_.put(config, std::move(done));
  return config;
}

}  // namespace mqlab::meta
