// OffsetStore: a consumer group's consumed offset per queue, kept in memory
// and persisted (RocketMQ's RemoteBrokerOffsetStore for clustering and
// LocalFileOffsetStore for broadcasting).
//
// Clustering: the broker that serves the queue keeps the group's offset.
// read_offset_from_store asks it (QUERY_CONSUMER_OFFSET); persist tells it
// (UPDATE_CONSUMER_OFFSET, oneway as Java sends it), to the group's master,
// or a slave when the master is gone (the master's copy wins once it is back).
// Broadcasting: every consumer keeps its own offsets. mqlab keeps them in
// memory only (persist copies the in-memory table to a "persisted" table
// that outlives queue reassignment but not the process); Java writes
// ~/.rocketmq_offsets/<clientId>/<group>/offsets.json. A file through
// env.files() is the natural next step.
//
// Invariants: offsets are >= 0; update with increase_only never lowers one
// (handlers finishing out of order must not move a committed offset back).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "broker/client/message_queue.h"
#include "broker/client/mq_client_instance.h"
#include "broker/client/push_consumer_config.h"
#include "broker/common/lifetime.h"

namespace mqlab::client {

class OffsetStore {
 public:
  // Requires: instance outlives the store.
  OffsetStore(MQClientInstance& instance, std::string group, MessageModel model);

  void update_offset(const MessageQueue& queue, int64_t offset, bool increase_only);
  std::optional<int64_t> read_offset_in_memory(const MessageQueue& queue) const;
  // The stored offset: >= 0, or -1 when there is none (the broker answered
  // with an error code, QUERY_NOT_FOUND for a new group), or a Status when
  // the broker could not be asked: the caller skips the queue until the next
  // rebalance (Java's -2).
  void read_offset_from_store(const MessageQueue& queue, std::function<void(Result<int64_t>)> done);
  void persist(const MessageQueue& queue);
  // Persists the queues given that have an offset in memory.
  void persist_all(const std::set<MessageQueue>& queues);
  void remove_offset(const MessageQueue& queue) { offsets_.erase(queue); }

  const std::map<MessageQueue, int64_t>& offset_table() const { return offsets_; }
  // Broadcasting's stand-in for offsets.json.
  const std::map<MessageQueue, int64_t>& persisted_local() const { return persisted_local_; }

 private:
  MQClientInstance& instance_;
  const std::string group_;
  const MessageModel model_;
  std::map<MessageQueue, int64_t> offsets_;
  std::map<MessageQueue, int64_t> persisted_local_;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::client
