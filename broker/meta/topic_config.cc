#include "broker/meta/topic_config.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "broker/common/log.h"
#include "broker/env/path.h"

namespace mqlab::meta {
namespace {

constexpr const char* kLog = "meta";
// What a loaded entry may hold before the broker would misbehave (negative
// counts break queue selection; absurd ones allocate absurdly).
constexpr int32_t kMaxLoadedQueueNums = 65535;
constexpr int32_t kAllPermBits = PermName::PERM_READ | PermName::PERM_WRITE | PermName::PERM_INHERIT;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '%' || c == '|' ||
         c == '_' || c == '-';
}

// A name as it may appear in a message: printable ASCII kept, the rest
// escaped, long names cut, so a hostile name cannot garble a log line.
std::string printable(std::string_view name) {
  constexpr size_t kShown = 80;
  std::string out;
  for (size_t i = 0; i < name.size() && i < kShown; ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'') {
      out += static_cast<char>(c);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
      out += escaped;
    }
  }
  if (name.size() > kShown) out += "...";
  return out;
}

Status validate_name(const char* kind, std::string_view name, size_t max_length) {
  if (name.empty()) return Status::InvalidArgument(std::string(kind) + " name is empty");
  if (name.size() > max_length) {
    return Status::InvalidArgument(std::string(kind) + " name '" + printable(name) + "' is " +
                                   std::to_string(name.size()) + " characters long; at most " +
                                   std::to_string(max_length) + " are allowed");
  }
  for (size_t i = 0; i < name.size(); ++i) {
    if (!is_name_char(name[i])) {
      return Status::InvalidArgument(std::string(kind) + " name '" + printable(name) + "' has '" +
                                     printable(name.substr(i, 1)) + "' at index " + std::to_string(i) +
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
Status check_loaded(const TopicConfig& config, const std::string& key, const std::string& where) {
  if (key.empty()) return Status::Corruption(where + ": empty topic name");
  if (config.topicName != key) {
    return Status::Corruption(where + ": holds topicName '" + printable(config.topicName) + "'");
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
    return Status::InvalidArgument(topic + "topicFilterType '" + printable(config.topicFilterType) +
                                   "' is neither SINGLE_TAG nor MULTI_TAG");
  }
  if (config.topicSysFlag < 0) {
    return Status::InvalidArgument(topic + "topicSysFlag " + std::to_string(config.topicSysFlag) + " is negative");
  }
  return Status::Ok();
}

// --- TopicConfigManager

TopicConfigManager::TopicConfigManager(env::Env& env, std::string config_dir, TopicConfigManagerOptions options)
    : env_(env), options_(options), file_(env, env::join_path(config_dir, kFileName)) {
  if (options_.defaultTopicQueueNums < 1 || options_.defaultTopicQueueNums > kMaxQueueNums) {
    const int32_t clamped = std::clamp(options_.defaultTopicQueueNums, 1, kMaxQueueNums);
    MQ_LOG(kWarn, kLog, "defaultTopicQueueNums=" << options_.defaultTopicQueueNums << " outside [1, "
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
    table_.emplace(tbw.topicName, std::move(tbw));
  }
}

Result<LoadSource> TopicConfigManager::load() {
  return file_.load([this](const std::string& content) { return decode(content); });
}

Status TopicConfigManager::decode(const std::string& content) {
  const std::string& where = path();
  MQ_ASSIGN_OR_RETURN(nlohmann::json root, parse_json(content, where));
  if (!root.is_object()) {
    return Status::Corruption(where + ": expected a JSON object, found " + std::string(root.type_name()));
  }
  DataVersion version;
  if (auto it = root.find("dataVersion"); it != root.end() && !it->is_null()) {
    MQ_ASSIGN_OR_RETURN(version, DataVersion::from_json(*it, where));
  }
  // As in RocketMQ, the file's entries overlay the constructor's system topics.
  Table table = table_;
  if (auto topics = root.find("topicConfigTable"); topics != root.end() && !topics->is_null()) {
    if (!topics->is_object()) {
      return Status::Corruption(where + ": topicConfigTable: expected an object, found " +
                                std::string(topics->type_name()));
    }
    for (const auto& item : topics->items()) {
      const std::string context = where + ": topicConfigTable: \"" + printable(item.key()) + "\"";
      MQ_ASSIGN_OR_RETURN(TopicConfig config, TopicConfig::from_json(item.value(), context));
      if (config.topicName.empty()) config.topicName = item.key();
      MQ_RETURN_IF_ERROR(check_loaded(config, item.key(), context));
      table.insert_or_assign(item.key(), std::move(config));
    }
  }
  table_ = std::move(table);
  data_version_ = version;
  return Status::Ok();
}

const TopicConfig* TopicConfigManager::find(std::string_view topic) const {
  auto it = table_.find(topic);
  return it == table_.end() ? nullptr : &it->second;
}

Result<TopicConfig> TopicConfigManager::create_or_update(TopicConfig config, PersistCallback done) {
  MQ_RETURN_IF_ERROR(validate_topic_config(config));
  const bool existed = find(config.topicName) != nullptr;
  MQ_LOG(kInfo, kLog, (existed ? "updated" : "created") << " topic " << config.topicName << " (queues "
                                                         << config.readQueueNums << "/" << config.writeQueueNums
                                                         << ", perm " << config.perm << ")");
  put(config, std::move(done));
  MQ_ASSERT(find(config.topicName) != nullptr);
  return config;
}

Status TopicConfigManager::delete_topic(std::string_view topic, PersistCallback done) {
  auto it = table_.find(topic);
  if (it == table_.end()) return Status::NotFound("topic " + printable(topic) + " does not exist");
  table_.erase(it);
  data_version_.next(env_.clock().wall_ms());
  MQ_LOG(kInfo, kLog, "deleted topic " << topic);
  persist(std::move(done));
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
    return Status::NotFound(creating + "default topic " + printable(default_topic) + " does not exist");
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
  MQ_LOG(kInfo, kLog, "auto-created topic " << topic << " from " << default_topic << " with "
                                            << config.writeQueueNums << " queues, perm " << config.perm);
  put(config, std::move(done));
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
  MQ_LOG(kInfo, kLog, "created topic " << config.topicName << " with " << queue_nums << " queues");
  put(config, std::move(done));
  return config;
}

void TopicConfigManager::put(TopicConfig config, PersistCallback done) {
  MQ_ASSERT(!config.topicName.empty());
  std::string name = config.topicName;
  table_.insert_or_assign(std::move(name), std::move(config));
  data_version_.next(env_.clock().wall_ms());
  persist(std::move(done));
}

nlohmann::json TopicConfigManager::to_json() const {
  nlohmann::json topics = nlohmann::json::object();
  for (const auto& [name, config] : table_) {
    MQ_ASSERT(name == config.topicName);
    topics[name] = config.to_json();
  }
  nlohmann::json root = nlohmann::json::object();
  root["topicConfigTable"] = std::move(topics);
  root["dataVersion"] = data_version_.to_json();
  return root;
}

void TopicConfigManager::persist(PersistCallback done) { file_.persist(encode(), std::move(done)); }

}  // namespace mqlab::meta
