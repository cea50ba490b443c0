#include "broker/http/broker_snapshot.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "broker/common/assert.h"
#include "broker/ha/ha_client.h"
#include "broker/ha/ha_connection.h"
#include "broker/ha/ha_service.h"
#include "broker/processor/broker_controller.h"

namespace mqlab::http {
namespace {

using broker::BrokerController;

void collect_identity(BrokerController& controller, BrokerSnapshot& snapshot) {
  const broker::BrokerConfig& config = controller.config();
  const store::MessageStoreConfig& store_config = controller.store_config();
  snapshot.cluster_name = config.brokerClusterName;
  snapshot.broker_name = config.brokerName;
  snapshot.broker_id = config.brokerId;
  snapshot.broker_role = store::broker_role_name(store_config.brokerRole);
  snapshot.flush_disk_type = store::flush_disk_type_name(store_config.flushDiskType);
  snapshot.broker_addr = config.broker_addr();
  snapshot.ha_server_addr = config.ha_server_addr();
  snapshot.namesrv_addr = config.namesrvAddr;
  snapshot.version = MQLAB_VERSION;  // CMakeLists.txt: the project version
  snapshot.running = controller.running();
  snapshot.boot_timestamp_ms = controller.boot_timestamp_ms();
  snapshot.now_ms = controller.env().clock().wall_ms();
}

void collect_counters(BrokerController& controller, BrokerSnapshot& snapshot) {
  const broker::BrokerStats& broker_stats = controller.stats();
  const store::StoreStats& store_stats = controller.message_store().stats();
  BrokerSnapshot::Counters& counters = snapshot.counters;
  counters.msg_put_total = broker_stats.msg_put_total;
  counters.msg_put_failed = broker_stats.msg_put_failed;
  counters.msg_get_total = broker_stats.msg_get_total;
  counters.pulls_suspended = broker_stats.pulls_suspended;
  counters.pulls_zero_copy = broker_stats.pulls_zero_copy;
  counters.pulls_copied = broker_stats.pulls_copied;
  counters.store_puts_ok = store_stats.puts_ok;
  counters.store_puts_failed = store_stats.puts_failed;
  counters.store_bytes_appended = store_stats.bytes_appended;
  counters.flush_timeouts = store_stats.flush_timeouts;
  counters.commit_log_flushes = store_stats.commit_log_flushes;
  counters.slave_timeouts = store_stats.slave_timeouts;
  counters.slave_not_available = store_stats.slave_not_available;
  counters.replica_bytes_appended = store_stats.replica_bytes_appended;
  counters.segments_deleted = store_stats.segments_deleted;
  snapshot.put_latency = broker_stats.put_latency;
}

void collect_commit_log(BrokerController& controller, BrokerSnapshot& snapshot) {
  store::MessageStore& store = controller.message_store();
  const store::MappedFileQueue& files = store.commit_log().file_queue();
  snapshot.writable = store.writable();
  snapshot.commit_log_min_offset = store.min_phy_offset().value();
  snapshot.commit_log_max_offset = store.max_phy_offset().value();
  snapshot.commit_log_flushed_offset = store.flushed_phy_offset().value();
  snapshot.commit_log_dispatched_offset = store.dispatched_phy_offset().value();
  snapshot.dirty_bytes = snapshot.commit_log_max_offset - snapshot.commit_log_flushed_offset;
  snapshot.commit_log_segments = files.files().size();
  snapshot.counters.segments_recycled = files.allocator() ? files.allocator()->recycled() : 0;
  snapshot.flush_latency = files.flush_latency();
  MQ_ASSERT(snapshot.dirty_bytes >= 0);  // MappedFileQueue: flushed_where <= max_offset
  MQ_ASSERT(snapshot.commit_log_min_offset <= snapshot.commit_log_max_offset);
}

void collect_replication(BrokerController& controller, BrokerSnapshot& snapshot) {
  if (const ha::HAService* service = controller.ha_service()) {
    snapshot.push2slave_max_offset = service->push2slave_max_offset().value();
    for (const auto& [id, connection] : service->connections()) {
      BrokerSnapshot::Slave& slave = snapshot.slaves.emplace_back();
      slave.connection_id = id;
      slave.remote_address = connection->remote_address();
      slave.transferring = connection->transferring();
      slave.ack_offset = connection->ack_offset().value();
      slave.lag_bytes = std::max<int64_t>(0, snapshot.commit_log_max_offset - std::max<int64_t>(slave.ack_offset, 0));
    }
  }
  if (const ha::HAClient* client = controller.ha_client()) {
    // Not emplace(): clang 14 (the fuzz build) sees MasterLink as not default-constructible there.
    snapshot.master = BrokerSnapshot::MasterLink{};
    BrokerSnapshot::MasterLink& master = *snapshot.master;
    master.master_address = client->master_address();
    master.state = ha::ha_client_state_name(client->state());
    master.confirmed_offset = client->confirmed_offset().value();
    master.refusal_reason = client->refusal_reason();
  }
}

void collect_topics_and_queues(BrokerController& controller, BrokerSnapshot& snapshot) {
  store::MessageStore& store = controller.message_store();
  std::map<std::string, int64_t> messages_by_topic;
  for (const auto& [topic, queue_id] : store.queues()) {
    BrokerSnapshot::Queue& queue = snapshot.queues.emplace_back();
    queue.topic = topic;
    queue.queue_id = queue_id;
    queue.min_offset = store.min_offset_in_queue(topic, queue_id).value();
    queue.max_offset = store.max_offset_in_queue(topic, queue_id).value();
    MQ_ASSERT(queue.min_offset <= queue.max_offset);
    messages_by_topic[topic] += queue.max_offset - queue.min_offset;
  }
  for (const auto& [name, config] : controller.topic_config_manager().all()) {
    BrokerSnapshot::Topic& topic = snapshot.topics.emplace_back();
    topic.name = name;
    topic.read_queue_nums = config.readQueueNums;
    topic.write_queue_nums = config.writeQueueNums;
    topic.perm = config.perm;
    auto messages = messages_by_topic.find(name);
    topic.messages = messages == messages_by_topic.end() ? 0 : messages->second;
  }
}

void collect_consumers(BrokerController& controller, BrokerSnapshot& snapshot) {
  store::MessageStore& store = controller.message_store();
  std::map<std::string, BrokerSnapshot::ConsumerGroup> groups;
  for (const auto& [key, committed] : controller.consumer_offset_manager().offset_table()) {
    const size_t at = key.find(meta::ConsumerOffsetManager::kTopicGroupSeparator);
    MQ_ASSERT(at != std::string::npos);  // the manager's invariant: "topic@group"
    const std::string topic = key.substr(0, at);
    const std::string group = key.substr(at + 1);
    std::set<int32_t> queue_ids;
    for (const auto& [queue_id, offset] : committed) queue_ids.insert(queue_id);
    if (const meta::TopicConfig* config = controller.topic_config_manager().find(topic)) {
      for (int32_t queue_id = 0; queue_id < config->readQueueNums; ++queue_id) queue_ids.insert(queue_id);
    }
    BrokerSnapshot::ConsumerGroup& entry = groups[group];
    entry.group = group;
    for (int32_t queue_id : queue_ids) {
      BrokerSnapshot::ConsumerQueue& queue = snapshot.consumer_queues.emplace_back();
      queue.group = group;
      queue.topic = topic;
      queue.queue_id = queue_id;
      auto offset = committed.find(queue_id);
      queue.consumer_offset = offset == committed.end() ? 0 : offset->second;
      queue.broker_offset = store.max_offset_in_queue(topic, queue_id).value();
      queue.lag = std::max<int64_t>(0, queue.broker_offset - queue.consumer_offset);
      entry.total_lag += queue.lag;
    }
  }
  for (const auto& [name, info] : controller.consumer_manager().groups()) {
    BrokerSnapshot::ConsumerGroup& entry = groups[name];
    entry.group = name;
    entry.online_clients = info.client_ids().size();
  }
  // The offset table is ordered by "topic@group"; the page wants groups together.
  std::stable_sort(snapshot.consumer_queues.begin(), snapshot.consumer_queues.end(),
                   [](const BrokerSnapshot::ConsumerQueue& a, const BrokerSnapshot::ConsumerQueue& b) {
                     return std::tie(a.group, a.topic, a.queue_id) < std::tie(b.group, b.topic, b.queue_id);
                   });
  for (auto& [name, entry] : groups) snapshot.consumer_groups.push_back(std::move(entry));
}

}  // namespace

BrokerSnapshot collect_broker_snapshot(BrokerController& controller) {
  BrokerSnapshot snapshot;
  collect_identity(controller, snapshot);
  collect_counters(controller, snapshot);
  collect_commit_log(controller, snapshot);
  collect_replication(controller, snapshot);
  collect_topics_and_queues(controller, snapshot);
  collect_consumers(controller, snapshot);
  MQ_ASSERT(snapshot.slaves.empty() || !snapshot.master.has_value());  // a broker is master or slave
  return snapshot;
}

}  // namespace mqlab::http
