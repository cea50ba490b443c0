#include "broker/http/broker_metrics.h"

#include "broker/common/assert.h"
#include "broker/http/prometheus_text.h"

namespace mqlab::http {
namespace {

using Counters = BrokerSnapshot::Counters;

// One family with one unlabelled sample: most of the broker-wide numbers.
template <typename T>
void single(PrometheusText& out, std::string_view name, MetricType type, std::string_view help, T value) {
  out.family(name, type, help);
  out.sample(name, {}, value);
}

void render_identity(const BrokerSnapshot& s, PrometheusText& out) {
  out.family("mqlab_broker_info", MetricType::kGauge,
             "Always 1; the labels say which broker this is (brokerClusterName, brokerName, brokerId, brokerRole).");
  out.sample("mqlab_broker_info",
             {{"cluster", s.cluster_name},
              {"broker", s.broker_name},
              {"broker_id", std::to_string(s.broker_id)},
              {"role", s.broker_role},
              {"flush_disk_type", s.flush_disk_type},
              {"version", s.version},
              {"addr", s.broker_addr}},
             int64_t{1});
  single(out, "mqlab_broker_running", MetricType::kGauge, "1 while the broker serves requests.",
         int64_t{s.running ? 1 : 0});
  single(out, "mqlab_broker_writable", MetricType::kGauge,
         "1 while the store accepts puts (0 after a failed fsync or with the disk above its warning level).",
         int64_t{s.writable ? 1 : 0});
  single(out, "mqlab_broker_boot_timestamp_seconds", MetricType::kGauge, "When the broker started, Unix time.",
         static_cast<double>(s.boot_timestamp_ms) / 1000.0);
}

void render_counters(const BrokerSnapshot& s, PrometheusText& out) {
  const Counters& c = s.counters;
  out.family("mqlab_put_messages_total", MetricType::kCounter,
             "Messages producers sent, by outcome: stored (answered SUCCESS or a stored-but status) or failed.");
  out.sample("mqlab_put_messages_total", {{"result", "stored"}}, c.msg_put_total);
  out.sample("mqlab_put_messages_total", {{"result", "failed"}}, c.msg_put_failed);
  single(out, "mqlab_get_messages_total", MetricType::kCounter, "Messages returned to consumers by pulls.",
         c.msg_get_total);
  single(out, "mqlab_pulls_suspended_total", MetricType::kCounter,
         "Pulls that found nothing and were held for long polling.", c.pulls_suspended);
  out.family("mqlab_pull_bodies_total", MetricType::kCounter,
             "Pull answers with messages, by how the body went: file regions by sendfile (zero_copy) or copied "
             "(transferMsgByHeap, or a record that could not go as a region).");
  out.sample("mqlab_pull_bodies_total", {{"transfer", "zero_copy"}}, c.pulls_zero_copy);
  out.sample("mqlab_pull_bodies_total", {{"transfer", "copy"}}, c.pulls_copied);
  single(out, "mqlab_store_put_bytes_total", MetricType::kCounter, "Bytes appended to the CommitLog by puts.",
         c.store_bytes_appended);
  single(out, "mqlab_store_flush_timeouts_total", MetricType::kCounter,
         "SYNC_FLUSH puts answered FLUSH_DISK_TIMEOUT (the flush took longer than syncFlushTimeout).",
         c.flush_timeouts);
  single(out, "mqlab_store_slave_timeouts_total", MetricType::kCounter,
         "SYNC_MASTER puts answered FLUSH_SLAVE_TIMEOUT.", c.slave_timeouts);
  single(out, "mqlab_store_slave_not_available_total", MetricType::kCounter,
         "SYNC_MASTER puts answered SLAVE_NOT_AVAILABLE.", c.slave_not_available);
  single(out, "mqlab_commitlog_flushes_total", MetricType::kCounter, "CommitLog flushes (fsync rounds) completed.",
         c.commit_log_flushes);
  single(out, "mqlab_commitlog_segments_deleted_total", MetricType::kCounter,
         "CommitLog segment files deleted by retention (recycled ones included).", c.segments_deleted);
  single(out, "mqlab_commitlog_segments_recycled_total", MetricType::kCounter,
         "CommitLog segments made from an expired one (recycleExpiredCommitLogEnable) instead of a new file.",
         c.segments_recycled);
  single(out, "mqlab_ha_replica_bytes_total", MetricType::kCounter, "Slave: CommitLog bytes received from the master.",
         c.replica_bytes_appended);
}

void render_latencies(const BrokerSnapshot& s, PrometheusText& out) {
  out.family("mqlab_put_latency_seconds", MetricType::kHistogram,
             "Time from handing a producer's message to the store to its answer (page cache write, and the flush "
             "and slave ack when the broker waits for them).");
  out.histogram("mqlab_put_latency_seconds", {}, s.put_latency);
  out.family("mqlab_commitlog_flush_latency_seconds", MetricType::kHistogram,
             "Time one CommitLog flush took, from its start to every fsync's completion.");
  out.histogram("mqlab_commitlog_flush_latency_seconds", {}, s.flush_latency);
}

void render_commit_log(const BrokerSnapshot& s, PrometheusText& out) {
  single(out, "mqlab_commitlog_min_offset_bytes", MetricType::kGauge,
         "The CommitLog's first physical offset still on disk.", s.commit_log_min_offset);
  single(out, "mqlab_commitlog_max_offset_bytes", MetricType::kGauge,
         "The CommitLog's end: the physical offset the next message is written at.", s.commit_log_max_offset);
  single(out, "mqlab_commitlog_flushed_offset_bytes", MetricType::kGauge,
         "The CommitLog is durable (fsynced) up to this physical offset.", s.commit_log_flushed_offset);
  single(out, "mqlab_commitlog_dispatched_offset_bytes", MetricType::kGauge,
         "ConsumeQueues and the index are built up to this physical offset.", s.commit_log_dispatched_offset);
  single(out, "mqlab_commitlog_dirty_bytes", MetricType::kGauge,
         "CommitLog bytes written but not yet flushed: what a power loss would take now.", s.dirty_bytes);
  single(out, "mqlab_commitlog_segments", MetricType::kGauge, "CommitLog segment files.",
         static_cast<uint64_t>(s.commit_log_segments));
}

void render_replication(const BrokerSnapshot& s, PrometheusText& out) {
  single(out, "mqlab_ha_slaves", MetricType::kGauge, "Master: slave connections.",
         static_cast<uint64_t>(s.slaves.size()));
  single(out, "mqlab_ha_push2slave_max_offset_bytes", MetricType::kGauge,
         "Master: the highest CommitLog offset any slave acknowledged.", s.push2slave_max_offset);
  out.family("mqlab_ha_slave_ack_offset_bytes", MetricType::kGauge,
             "Master: the CommitLog offset each slave last acknowledged (-1 before its first report).");
  for (const BrokerSnapshot::Slave& slave : s.slaves) {
    out.sample("mqlab_ha_slave_ack_offset_bytes", {{"slave", slave.remote_address}}, slave.ack_offset);
  }
  out.family("mqlab_ha_slave_lag_bytes", MetricType::kGauge,
             "Master: CommitLog bytes each slave has not acknowledged yet (replication lag).");
  for (const BrokerSnapshot::Slave& slave : s.slaves) {
    out.sample("mqlab_ha_slave_lag_bytes", {{"slave", slave.remote_address}}, slave.lag_bytes);
  }
  out.family("mqlab_ha_master_link", MetricType::kGauge,
             "Slave: always 1; the labels name the master's HA address and the link state.");
  if (s.master) {
    out.sample("mqlab_ha_master_link", {{"master", s.master->master_address}, {"state", s.master->state}},
               int64_t{1});
  }
  out.family("mqlab_ha_confirmed_offset_bytes", MetricType::kGauge,
             "Slave: how far it has confirmed the master's CommitLog.");
  if (s.master) out.sample("mqlab_ha_confirmed_offset_bytes", {}, s.master->confirmed_offset);
}

void render_queues(const BrokerSnapshot& s, PrometheusText& out) {
  out.family("mqlab_queue_min_offset", MetricType::kGauge, "A ConsumeQueue's first logical offset still stored.");
  for (const BrokerSnapshot::Queue& queue : s.queues) {
    out.sample("mqlab_queue_min_offset", {{"topic", queue.topic}, {"queue_id", std::to_string(queue.queue_id)}},
               queue.min_offset);
  }
  out.family("mqlab_queue_max_offset", MetricType::kGauge,
             "A ConsumeQueue's end: the logical offset of its next message.");
  for (const BrokerSnapshot::Queue& queue : s.queues) {
    out.sample("mqlab_queue_max_offset", {{"topic", queue.topic}, {"queue_id", std::to_string(queue.queue_id)}},
               queue.max_offset);
  }
}

void render_consumers(const BrokerSnapshot& s, PrometheusText& out) {
  auto labels = [](const BrokerSnapshot::ConsumerQueue& queue) {
    return Labels{{"group", queue.group}, {"topic", queue.topic}, {"queue_id", std::to_string(queue.queue_id)}};
  };
  out.family("mqlab_consumer_offset", MetricType::kGauge,
             "The offset a consumer group committed on a queue (0 when it never committed).");
  for (const auto& queue : s.consumer_queues) out.sample("mqlab_consumer_offset", labels(queue), queue.consumer_offset);
  out.family("mqlab_consumer_lag_messages", MetricType::kGauge,
             "Messages of a queue a consumer group has not consumed: queue max offset - committed offset.");
  for (const auto& queue : s.consumer_queues) out.sample("mqlab_consumer_lag_messages", labels(queue), queue.lag);
  out.family("mqlab_consumer_group_lag_messages", MetricType::kGauge,
             "A consumer group's lag summed over its topics and queues on this broker.");
  for (const auto& group : s.consumer_groups) {
    out.sample("mqlab_consumer_group_lag_messages", {{"group", group.group}}, group.total_lag);
  }
  out.family("mqlab_consumer_group_online_clients", MetricType::kGauge,
             "Consumers of a group connected to this broker (by heartbeat).");
  for (const auto& group : s.consumer_groups) {
    out.sample("mqlab_consumer_group_online_clients", {{"group", group.group}},
               static_cast<uint64_t>(group.online_clients));
  }
}

}  // namespace

std::string render_broker_metrics(const BrokerSnapshot& snapshot) {
  PrometheusText out;
  render_identity(snapshot, out);
  render_counters(snapshot, out);
  render_latencies(snapshot, out);
  render_commit_log(snapshot, out);
  render_replication(snapshot, out);
  render_queues(snapshot, out);
  render_consumers(snapshot, out);
  MQ_ASSERT(!out.text().empty() && out.text().back() == '\n');
  return out.text();
}

}  // namespace mqlab::http
