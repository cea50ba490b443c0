// OffsetStore: a consumer group's consumed offset per queue, kept in memory
// and persisted (RocketMQ's RemoteBrokerOffsetStore for clustering and
// LocalFileOffsetStore for broadcasting).
//
// Clustering: the broker that serves the queue keeps the group's offset.
// read_offset_from_store asks it (QUERY_CONSUMER_OFFSET); persist tells it
// (UPDATE_CONSUMER_OFFSET, oneway as Java sends it), to the group's master,
// or a slave when the master is gone (the master's copy wins once it is back).
// Broadcasting: every consumer keeps its own offsets, in
// <localOffsetStoreDir>/<clientId>/<group>/offsets.json
// (local_file_offset_store.h), loaded by load() at the consumer's start and
// written on every persist. With no localOffsetStoreDir they live in memory
// only (a "persisted" table that outlives queue reassignment but not the
// process): Java's default directory is ~/.rocketmq_offsets, and broker code
// reads no HOME.
//
// Invariants: offsets are >= 0; update with increase_only never lowers one
// (handlers finishing out of order must not move a committed offset back).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "broker/client/local_file_offset_store.h"
#include "broker/client/message_queue.h"
#include "broker/client/mq_client_instance.h"
#include "broker/client/push_consumer_config.h"
#include "broker/common/lifetime.h"

namespace mqlab::client {

class OffsetStore {
 public:
  // Requires: instance outlives the store. local_offset_store_dir: where a
  // broadcasting consumer's offsets.json lives; empty keeps them in memory.
  OffsetStore(MQClientInstance& instance, std::string group, MessageModel model,
              const std::string& local_offset_store_dir = "");
  // recent_ points into offsets_: a copy would point into the original's map.
  OffsetStore(const OffsetStore&) = delete;
  OffsetStore& operator=(const OffsetStore&) = delete;

  // Broadcasting with a directory: reads offsets.json (else its .bak; which
  // one is in local_load_source()). Corruption when neither parses. Ok at
  // once otherwise, and on a second call.
  Status load();

  void update_offset(const MessageQueue& queue, int64_t offset, bool increase_only);
  std::optional<int64_t> read_offset_in_memory(const MessageQueue& queue) const;
  // The stored offset: >= 0, or -1 when there is none (the broker answered
  // with an error code, QUERY_NOT_FOUND for a new group), or a Status when
  // the broker could not be asked: the caller skips the queue until the next
  // rebalance (Java's -2).
  void read_offset_from_store(const MessageQueue& queue, std::function<void(Result<int64_t>)> done);
  void persist(const MessageQueue& queue);
  // Persists the queues given that have an offset in memory; done (optional)
  // once a broadcasting consumer's file is durable (or its write failed,
  // logged), at once otherwise (UPDATE_CONSUMER_OFFSET is oneway).
  void persist_all(const std::set<MessageQueue>& queues, std::function<void(Status)> done = {});
  void remove_offset(const MessageQueue& queue);

  const std::map<MessageQueue, int64_t>& offset_table() const { return offsets_; }
  // Broadcasting: the offsets persisted (offsets.json's table, or its
  // in-memory stand-in).
  const std::map<MessageQueue, int64_t>& persisted_local() const {
    return local_file_ ? local_file_->table() : persisted_local_;
  }
  // Which copy load() read; nullopt before load() or without a file.
  std::optional<meta::LoadSource> local_load_source() const { return local_load_source_; }
  // offsets.json's path; empty without a file.
  std::string local_file_path() const { return local_file_ ? local_file_->path() : std::string(); }

 private:
  MQClientInstance& instance_;
  const std::string group_;
  const MessageModel model_;
  using Offsets = std::map<MessageQueue, int64_t>;
  // The entry of queue (a recent one first; found ones become recent), or null.
  Offsets::value_type* find_entry(const MessageQueue& queue);
  // queue's entry among the recent ones, or null.
  Offsets::value_type* recent_entry(const MessageQueue& queue) const;
  void remember(Offsets::value_type* entry);

  Offsets offsets_;
  // Entries of offsets_ found lately (null: none), replaced in turn; all
  // forgotten by every erase. A consumer commits and pulls its queues round
  // in turn (eight in the standard scenario): the one asked for is nearly
  // always among them, where a single remembered entry seldom was, and the
  // map's search ordered MessageQueues (two strings each) four or five times.
  static constexpr size_t kRecent = 8;
  std::array<Offsets::value_type*, kRecent> recent_{};
  size_t next_recent_ = 0;  // the one remember() replaces
  std::map<MessageQueue, int64_t> persisted_local_;  // broadcasting without a file
  std::unique_ptr<LocalFileOffsetStore> local_file_;  // broadcasting with a directory
  std::optional<meta::LoadSource> local_load_source_;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::client
