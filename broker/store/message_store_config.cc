#include "broker/store/message_store_config.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <variant>
#include <vector>

#include "broker/env/path.h"
#include "broker/store/message_codec.h"

namespace mqlab::store {
namespace {

using Config = MessageStoreConfig;

// One broker.conf key and the field it sets.
using Field = std::variant<int32_t Config::*, int64_t Config::*, bool Config::*, double Config::*,
                           std::string Config::*, FlushDiskType Config::*, BrokerRole Config::*>;
struct Key {
  std::string_view name;
  Field field;
};

// In RocketMQ's field order (MessageStoreConfig.java), then mqlab's own.
const std::vector<Key>& keys() {
  static const std::vector<Key> table = {
      {"storePathRootDir", &Config::storePathRootDir},
      {"storePathCommitLog", &Config::storePathCommitLog},
      {"mappedFileSizeCommitLog", &Config::mappedFileSizeCommitLog},
      {"mappedFileSizeConsumeQueue", &Config::mappedFileSizeConsumeQueue},
      {"flushIntervalConsumeQueue", &Config::flushIntervalConsumeQueue},
      {"flushIntervalCommitLog", &Config::flushIntervalCommitLog},
      {"maxMessageSize", &Config::maxMessageSize},
      {"checkCRCOnRecover", &Config::checkCRCOnRecover},
      {"flushCommitLogLeastPages", &Config::flushCommitLogLeastPages},
      {"flushConsumeQueueLeastPages", &Config::flushConsumeQueueLeastPages},
      {"flushCommitLogThoroughInterval", &Config::flushCommitLogThoroughInterval},
      {"flushConsumeQueueThoroughInterval", &Config::flushConsumeQueueThoroughInterval},
      {"deleteWhen", &Config::deleteWhen},
      {"diskMaxUsedSpaceRatio", &Config::diskMaxUsedSpaceRatio},
      {"fileReservedTime", &Config::fileReservedTime},
      {"cleanResourceInterval", &Config::cleanResourceInterval},
      {"diskSpaceWarningLevelRatio", &Config::diskSpaceWarningLevelRatio},
      {"diskSpaceCleanForciblyRatio", &Config::diskSpaceCleanForciblyRatio},
      {"cleanFileForciblyEnable", &Config::cleanFileForciblyEnable},
      {"messageIndexEnable", &Config::messageIndexEnable},
      {"maxHashSlotNum", &Config::maxHashSlotNum},
      {"maxIndexNum", &Config::maxIndexNum},
      {"messageIndexSafe", &Config::messageIndexSafe},
      {"haSendHeartbeatInterval", &Config::haSendHeartbeatInterval},
      {"haHousekeepingInterval", &Config::haHousekeepingInterval},
      {"haTransferBatchSize", &Config::haTransferBatchSize},
      {"haMasterAddress", &Config::haMasterAddress},
      {"haSlaveFallbehindMax", &Config::haSlaveFallbehindMax},
      {"brokerRole", &Config::brokerRole},
      {"flushDiskType", &Config::flushDiskType},
      {"transientStorePoolEnable", &Config::transientStorePoolEnable},
      {"transientStorePoolSize", &Config::transientStorePoolSize},
      {"commitIntervalCommitLog", &Config::commitIntervalCommitLog},
      {"commitCommitLogLeastPages", &Config::commitCommitLogLeastPages},
      {"commitCommitLogThoroughInterval", &Config::commitCommitLogThoroughInterval},
      {"syncFlushTimeout", &Config::syncFlushTimeout},
      {"slaveTimeout", &Config::slaveTimeout},
      {"reputIntervalMs", &Config::reputIntervalMs},
      {"messageDelayLevel", &Config::messageDelayLevel},
      {"flushDelayOffsetInterval", &Config::flushDelayOffsetInterval},
      {"warmMapedFileEnable", &Config::warmMapedFileEnable},
      {"allocateMappedFileEnable", &Config::allocateMappedFileEnable},
      {"recycleExpiredCommitLogEnable", &Config::recycleExpiredCommitLogEnable},
      {"commitLogMappedWriteEnable", &Config::commitLogMappedWriteEnable},
      {"groupCommitOnPutThreadEnable", &Config::groupCommitOnPutThreadEnable},
      {"dispatchFlushedOnly", &Config::dispatchFlushedOnly},
  };
  return table;
}

template <typename... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
// Spelled out for clang 14 (the fuzz build), which cannot deduce an aggregate's arguments.
template <typename... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

Status bad_value(std::string_view key, std::string_view value, std::string_view allowed) {
  return Status::InvalidArgument(std::string(key) + "=" + std::string(value) + ": " + std::string(allowed));
}

std::string_view trim_store_conf_text(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\r')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

Result<int64_t> parse_integer(std::string_view key, std::string_view text, int64_t min, int64_t max) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end || value < min || value > max) {
    return bad_value(key, text, "must be an integer in " + std::to_string(min) + ".." + std::to_string(max));
  }
  return value;
}

Result<double> parse_ratio(std::string_view key, std::string_view text) {
  const std::string copy(text);
  char* stop = nullptr;
  const double value = copy.empty() ? -1 : std::strtod(copy.c_str(), &stop);
  if (copy.empty() || stop != copy.c_str() + copy.size() || !(value >= 0.0 && value <= 1.0)) {
    return bad_value(key, text, "must be a number in 0..1");
  }
  return value;
}

template <typename Enum, size_t N>
Result<Enum> parse_choice(std::string_view key, std::string_view text, const Enum (&choices)[N],
                          const char* (*name_of)(Enum)) {
  std::string allowed;
  for (Enum choice : choices) {
    if (text == name_of(choice)) return choice;
    allowed += (allowed.empty() ? "" : ", ") + std::string(name_of(choice));
  }
  return bad_value(key, text, "must be one of " + allowed);
}

std::string ratio_text(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

}  // namespace

const char* flush_disk_type_name(FlushDiskType type) {
  return type == FlushDiskType::SYNC_FLUSH ? "SYNC_FLUSH" : "ASYNC_FLUSH";
}

const char* broker_role_name(BrokerRole role) {
  switch (role) {
    case BrokerRole::ASYNC_MASTER: return "ASYNC_MASTER";
    case BrokerRole::SYNC_MASTER: return "SYNC_MASTER";
    case BrokerRole::SLAVE: return "SLAVE";
  }
  return "?";
}

std::string MessageStoreConfig::commit_log_dir() const {
  return storePathCommitLog.empty() ? env::join_path(storePathRootDir, "commitlog") : storePathCommitLog;
}
std::string MessageStoreConfig::consume_queue_dir() const { return env::join_path(storePathRootDir, "consumequeue"); }
std::string MessageStoreConfig::index_dir() const { return env::join_path(storePathRootDir, "index"); }
std::string MessageStoreConfig::checkpoint_path() const { return env::join_path(storePathRootDir, "checkpoint"); }
std::string MessageStoreConfig::abort_file_path() const { return env::join_path(storePathRootDir, "abort"); }
std::string MessageStoreConfig::config_dir() const { return env::join_path(storePathRootDir, "config"); }

int64_t MessageStoreConfig::consume_queue_file_size() const {
  constexpr int64_t kEntry = 20;
  return (mappedFileSizeConsumeQueue + kEntry - 1) / kEntry * kEntry;
}

std::vector<int64_t> MessageStoreConfig::delay_levels_ms() const {
  Result<std::vector<int64_t>> levels = parse_message_delay_level(messageDelayLevel);
  MQ_ASSERT_MSG(levels.ok(), levels.status().to_string());
  return std::move(levels).value();
}

Status MessageStoreConfig::validate() const {
  auto bad = [](const char* key, int64_t value, const char* allowed) {
    return Status::InvalidArgument(std::string(key) + "=" + std::to_string(value) + ": " + allowed);
  };
  if (maxMessageSize <= 0) return bad("maxMessageSize", maxMessageSize, "must be > 0");
  // One record of the largest body plus its header and the end-of-file blank
  // must fit in a segment, or a maximal put could never be stored.
  const int64_t min_segment = int64_t{maxMessageSize} + 64 * 1024 + kEndFileMinBlankLength;
  if (mappedFileSizeCommitLog < min_segment) {
    return bad("mappedFileSizeCommitLog", mappedFileSizeCommitLog,
               ("must be at least maxMessageSize + 64 KiB + 8 = " + std::to_string(min_segment)).c_str());
  }
  if (mappedFileSizeConsumeQueue < 20) return bad("mappedFileSizeConsumeQueue", mappedFileSizeConsumeQueue, "must be >= 20");
  if (flushIntervalCommitLog <= 0) return bad("flushIntervalCommitLog", flushIntervalCommitLog, "must be > 0 ms");
  if (flushCommitLogLeastPages < 0) return bad("flushCommitLogLeastPages", flushCommitLogLeastPages, "must be >= 0");
  if (flushCommitLogThoroughInterval <= 0) return bad("flushCommitLogThoroughInterval", flushCommitLogThoroughInterval, "must be > 0 ms");
  if (syncFlushTimeout <= 0) return bad("syncFlushTimeout", syncFlushTimeout, "must be > 0 ms");
  if (flushIntervalConsumeQueue <= 0) return bad("flushIntervalConsumeQueue", flushIntervalConsumeQueue, "must be > 0 ms");
  if (fileReservedTime < 0) return bad("fileReservedTime", fileReservedTime, "must be >= 0 hours");
  if (cleanResourceInterval <= 0) return bad("cleanResourceInterval", cleanResourceInterval, "must be > 0 ms");
  if (maxHashSlotNum <= 0) return bad("maxHashSlotNum", maxHashSlotNum, "must be > 0");
  if (maxIndexNum <= 0) return bad("maxIndexNum", maxIndexNum, "must be > 0");
  if (reputIntervalMs <= 0) return bad("reputIntervalMs", reputIntervalMs, "must be > 0 ms");
  if (haSendHeartbeatInterval <= 0) return bad("haSendHeartbeatInterval", haSendHeartbeatInterval, "must be > 0 ms");
  if (haHousekeepingInterval <= 0) return bad("haHousekeepingInterval", haHousekeepingInterval, "must be > 0 ms");
  if (haTransferBatchSize <= 0) return bad("haTransferBatchSize", haTransferBatchSize, "must be > 0 bytes");
  if (haSlaveFallbehindMax < 0) return bad("haSlaveFallbehindMax", haSlaveFallbehindMax, "must be >= 0 bytes");
  if (slaveTimeout <= 0) return bad("slaveTimeout", slaveTimeout, "must be > 0 ms");
  if (storePathRootDir.empty()) return Status::InvalidArgument("storePathRootDir: must not be empty");
  if (transientStorePoolSize < 1) return bad("transientStorePoolSize", transientStorePoolSize, "must be >= 1");
  if (commitIntervalCommitLog <= 0) return bad("commitIntervalCommitLog", commitIntervalCommitLog, "must be > 0 ms");
  if (commitCommitLogLeastPages < 0) return bad("commitCommitLogLeastPages", commitCommitLogLeastPages, "must be >= 0");
  if (commitCommitLogThoroughInterval <= 0) {
    return bad("commitCommitLogThoroughInterval", commitCommitLogThoroughInterval, "must be > 0 ms");
  }
  if (flushDelayOffsetInterval <= 0) return bad("flushDelayOffsetInterval", flushDelayOffsetInterval, "must be > 0 ms");
  MQ_RETURN_IF_ERROR(parse_message_delay_level(messageDelayLevel).status());
  return Status::Ok();
}

std::string MessageStoreConfig::transient_store_pool_warning() const {
  if (!transientStorePoolEnable || is_transient_store_pool_enable()) return "";
  const char* why = brokerRole == BrokerRole::SLAVE ? "brokerRole=SLAVE (a slave's log grows by the master's bytes)"
                                                     : "flushDiskType=SYNC_FLUSH (a put waits for its fsync anyway)";
  return std::string("transientStorePoolEnable=true is ignored with ") + why +
         ": the CommitLog runs without write-behind, as RocketMQ does";
}

Result<bool> MessageStoreConfig::set_property(std::string_view key, std::string_view raw) {
  const std::string_view value = trim_store_conf_text(raw);
  auto key_it = std::find_if(keys().begin(), keys().end(), [&](const Key& k) { return k.name == key; });
  if (key_it == keys().end()) return false;
  static constexpr FlushDiskType kFlushTypes[] = {FlushDiskType::ASYNC_FLUSH, FlushDiskType::SYNC_FLUSH};
  static constexpr BrokerRole kRoles[] = {BrokerRole::ASYNC_MASTER, BrokerRole::SYNC_MASTER, BrokerRole::SLAVE};
  const Status status = std::visit(
      Overloaded{
          [&](int32_t Config::*f) -> Status {
            MQ_ASSIGN_OR_RETURN(int64_t v, parse_integer(key, value, INT32_MIN, INT32_MAX));
            this->*f = static_cast<int32_t>(v);
            return Status::Ok();
          },
          [&](int64_t Config::*f) -> Status {
            MQ_ASSIGN_OR_RETURN(this->*f, parse_integer(key, value, INT64_MIN, INT64_MAX));
            return Status::Ok();
          },
          [&](bool Config::*f) -> Status {
            if (value != "true" && value != "false") return bad_value(key, value, "must be true or false");
            this->*f = value == "true";
            return Status::Ok();
          },
          [&](double Config::*f) -> Status {
            MQ_ASSIGN_OR_RETURN(this->*f, parse_ratio(key, value));
            return Status::Ok();
          },
          [&](std::string Config::*f) -> Status {
            this->*f = std::string(value);
            return Status::Ok();
          },
          [&](FlushDiskType Config::*f) -> Status {
            MQ_ASSIGN_OR_RETURN(this->*f, parse_choice(key, value, kFlushTypes, &flush_disk_type_name));
            return Status::Ok();
          },
          [&](BrokerRole Config::*f) -> Status {
            MQ_ASSIGN_OR_RETURN(this->*f, parse_choice(key, value, kRoles, &broker_role_name));
            return Status::Ok();
          },
      },
      key_it->field);
  MQ_RETURN_IF_ERROR(status);
  return true;
}

std::map<std::string, std::string> MessageStoreConfig::to_properties() const {
  std::map<std::string, std::string> properties;
  for (const Key& key : keys()) {
    properties[std::string(key.name)] = std::visit(
        Overloaded{
            [&](int32_t Config::*f) { return std::to_string(this->*f); },
            [&](int64_t Config::*f) { return std::to_string(this->*f); },
            [&](bool Config::*f) { return std::string(this->*f ? "true" : "false"); },
            [&](double Config::*f) { return ratio_text(this->*f); },
            [&](std::string Config::*f) { return this->*f; },
            [&](FlushDiskType Config::*f) { return std::string(flush_disk_type_name(this->*f)); },
            [&](BrokerRole Config::*f) { return std::string(broker_role_name(this->*f)); },
        },
        key.field);
  }
  properties["storePathCommitLog"] = commit_log_dir();
  MQ_ASSERT(properties.size() == keys().size());  // no key listed twice
  return properties;
}

}  // namespace mqlab::store
