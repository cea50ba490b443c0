// BrokerSnapshot: everything /metrics, /api/status and the console page
// show about one broker, copied out of the BrokerController in one executor
// turn (so the numbers agree with each other) as plain, ordered values.
// Collecting reads only: no I/O, no state change, nothing created (a
// queue without a ConsumeQueue reads as empty rather than being made).
//
// Sources: BrokerConfig and MessageStoreConfig (identity, role, flush
// type); BrokerStats and StoreStats (counters, put latency); the CommitLog's
// MappedFileQueue (offsets, dirty bytes, flush latency); the HAService of a
// master (one entry per slave connection, lag = max offset - the slave's
// last ack) or the HAClient of a slave; the TopicConfigManager and the
// store's ConsumeQueues (topics, queue offsets); the ConsumerOffsetManager
// and ConsumerManager (consumer lag per group, topic and queue).
//
// Consumer lag follows RocketMQ's ConsumeStats (getConsumeStats): for every
// topic@group with committed offsets, every read queue of the topic (and
// any other queue the group committed on); a queue the group never
// committed counts from 0; lag = max(0, max offset - committed offset).
//
// Invariants: vectors are sorted by their keys (std::map order), so one
// broker state gives one rendering, byte for byte; dirty_bytes ==
// commit_log_max_offset - commit_log_flushed_offset >= 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "broker/common/latency_buckets.h"
#include "broker/common/types.h"

namespace mqlab::broker {
class BrokerController;
}

namespace mqlab::http {

struct BrokerSnapshot {
  struct Counters {
    uint64_t msg_put_total = 0;   // BrokerStats: puts answered as stored
    uint64_t msg_put_failed = 0;  // refused or failed puts
    uint64_t msg_get_total = 0;   // messages returned by pulls
    uint64_t pulls_suspended = 0;
    uint64_t pulls_zero_copy = 0;  // FOUND bodies sent as file regions
    uint64_t pulls_copied = 0;     // FOUND bodies copied
    uint64_t store_puts_ok = 0;   // StoreStats
    uint64_t store_puts_failed = 0;
    uint64_t store_bytes_appended = 0;
    uint64_t flush_timeouts = 0;
    uint64_t commit_log_flushes = 0;
    uint64_t slave_timeouts = 0;
    uint64_t slave_not_available = 0;
    uint64_t replica_bytes_appended = 0;
    uint64_t segments_deleted = 0;
    // Segments made from expired ones (recycleExpiredCommitLogEnable) since start.
    uint64_t segments_recycled = 0;
  };
  // A master's view of one slave connection.
  struct Slave {
    uint64_t connection_id = 0;
    std::string remote_address;
    bool transferring = false;
    int64_t ack_offset = -1;  // -1 before the slave's first report
    int64_t lag_bytes = 0;    // commit_log_max_offset - max(ack_offset, 0)
  };
  // A slave's view of its master.
  struct MasterLink {
    std::string master_address;  // empty while unknown
    std::string state;           // ha_client_state_name
    int64_t confirmed_offset = 0;
    std::string refusal_reason;
  };
  struct Topic {
    std::string name;
    int32_t read_queue_nums = 0;
    int32_t write_queue_nums = 0;
    int32_t perm = 0;
    int64_t messages = 0;  // sum over its queues of max - min offset
  };
  struct Queue {
    std::string topic;
    int32_t queue_id = 0;
    int64_t min_offset = 0;
    int64_t max_offset = 0;
  };
  struct ConsumerQueue {
    std::string group;
    std::string topic;
    int32_t queue_id = 0;
    int64_t consumer_offset = 0;  // committed; 0 when never committed
    int64_t broker_offset = 0;    // the queue's max offset
    int64_t lag = 0;
  };
  struct ConsumerGroup {
    std::string group;
    size_t online_clients = 0;  // connected consumers (heartbeats)
    int64_t total_lag = 0;
  };

  // Identity and state.
  std::string cluster_name;
  std::string broker_name;
  int64_t broker_id = 0;
  std::string broker_role;      // ASYNC_MASTER, SYNC_MASTER, SLAVE
  std::string flush_disk_type;  // ASYNC_FLUSH, SYNC_FLUSH
  std::string broker_addr;
  std::string ha_server_addr;
  std::string namesrv_addr;
  std::string version;
  bool running = false;
  bool writable = false;
  int64_t boot_timestamp_ms = 0;  // wall clock
  int64_t now_ms = 0;             // wall clock, when collected

  Counters counters;
  LatencyBuckets put_latency;
  LatencyBuckets flush_latency;  // CommitLog flushes

  int64_t commit_log_min_offset = 0;
  int64_t commit_log_max_offset = 0;
  int64_t commit_log_flushed_offset = 0;
  int64_t commit_log_dispatched_offset = 0;  // ConsumeQueues built up to here
  int64_t dirty_bytes = 0;                   // appended, not yet flushed
  size_t commit_log_segments = 0;

  int64_t push2slave_max_offset = 0;  // master: the highest ack of any slave
  std::vector<Slave> slaves;          // master: by connection id
  std::optional<MasterLink> master;   // slave only

  std::vector<Topic> topics;                    // by name
  std::vector<Queue> queues;                    // by topic, queue id
  std::vector<ConsumerQueue> consumer_queues;   // by group, topic, queue id
  std::vector<ConsumerGroup> consumer_groups;   // by group
};

// Requires: called on the broker's executor (it reads broker state).
BrokerSnapshot collect_broker_snapshot(broker::BrokerController& controller);

}  // namespace mqlab::http
