// ConsumerOffsetManager: the consume offset each group committed for each
// queue, persisted as {storePathRootDir}/config/consumerOffset.json in
// RocketMQ's shape (apache/rocketmq broker/…/offset/ConsumerOffsetManager.java):
//   {"offsetTable":{"T@G":{"0":12,"1":7}}}
// RocketMQ's fastjson writes the queue ids unquoted ({0:12}); we write
// standard JSON and load both (quote_numeric_keys). Commits stay in memory
// until the next persist(): the broker calls it every
// flushConsumerOffsetInterval (5 s) and at shutdown, as RocketMQ does.
//
// Invariants: every key is "topic@group" (both parts non-empty, neither holds
// '@'), and queue ids and offsets committed through this class are >= 0.
// Iteration is sorted, so one table gives one file, byte for byte.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "broker/common/name_order.h"
#include "broker/common/status.h"
#include "broker/env/env.h"
#include "broker/meta/config_file.h"

namespace mqlab::meta {

class ConsumerOffsetManager {
 public:
  static constexpr const char* kFileName = "consumerOffset.json";
  static constexpr char kTopicGroupSeparator = '@';  // MixAll's TOPIC_GROUP_SEPARATOR
  using QueueOffsets = std::map<int32_t, int64_t>;
  using OffsetTable = std::map<std::string, QueueOffsets, NameLess>;

  ConsumerOffsetManager(env::Env& env, std::string config_dir);
  // Not copied: a copy's remembered entry (below) would be the original's.
  ConsumerOffsetManager(const ConsumerOffsetManager&) = delete;
  ConsumerOffsetManager& operator=(const ConsumerOffsetManager&) = delete;

  Result<LoadSource> load();

  // InvalidArgument for an empty or '@'-holding group or topic, or a
  // negative queue id or offset (they come from a request).
  Status commit_offset(std::string_view group, std::string_view topic, int32_t queue_id, int64_t offset);
  // nullopt when the group never committed for that queue (RocketMQ's -1).
  std::optional<int64_t> query_offset(std::string_view group, std::string_view topic, int32_t queue_id) const;
  // All of a group's offsets on a topic; nullptr when there are none.
  const QueueOffsets* query_offsets(std::string_view group, std::string_view topic) const;

  // Groups with offsets on topic (whichGroupByTopic), topics a group has
  // offsets on (whichTopicByConsumer).
  std::set<std::string> groups_of_topic(std::string_view topic) const;
  std::set<std::string> topics_of_group(std::string_view group) const;
  // Drops every topic@group entry of group; returns how many there were.
  size_t remove_group(std::string_view group);

  const OffsetTable& offset_table() const { return table_; }

  nlohmann::json to_json() const;
  // The GET_ALL_CONSUMER_OFFSET body: the file's JSON, compact.
  std::string all_offsets_json() const;
  // A slave's sync from its master's GET_ALL_CONSUMER_OFFSET body: every
  // topic@group in json replaces ours; others stay, as RocketMQ's putAll
  // does. On error (Corruption naming the key) nothing changes.
  Status replace_from_json(std::string_view json);

  void persist(PersistCallback done = nullptr);
  const std::string& path() const { return file_.path(); }

 private:
  Status decode(const std::string& content);
  // Whether last_commit_key_ is topic@group (neither holds '@').
  bool last_commit_is(std::string_view group, std::string_view topic) const;
  void forget_last_commit();

  ConfigFile file_;
  OffsetTable table_;
  // The entry the last commit went to. A consumer commits with nearly every
  // pull, for the same topic@group pull after pull, and joining the key and
  // searching the table by name was most of a commit. Map nodes stay put,
  // so the pointer holds until the table changes otherwise: decode,
  // remove_group and replace_from_json forget it.
  std::string last_commit_key_;
  QueueOffsets* last_commit_offsets_ = nullptr;  // null: none remembered
};

}  // namespace mqlab::meta
