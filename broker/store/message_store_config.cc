#include "broker/store/message_store_config.h"

#include "broker/env/path.h"
#include "broker/store/message_codec.h"

namespace mqlab::store {

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
  return Status::Ok();
}

}  // namespace mqlab::store
