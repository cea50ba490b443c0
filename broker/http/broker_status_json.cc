#include "broker/http/broker_status_json.h"

#include "broker/common/assert.h"

namespace mqlab::http {
namespace {

using nlohmann::json;

json identity_json(const BrokerSnapshot& s) {
  return json{{"cluster_name", s.cluster_name},
              {"broker_name", s.broker_name},
              {"broker_id", s.broker_id},
              {"broker_role", s.broker_role},
              {"flush_disk_type", s.flush_disk_type},
              {"broker_addr", s.broker_addr},
              {"ha_server_addr", s.ha_server_addr},
              {"namesrv_addr", s.namesrv_addr},
              {"version", s.version},
              {"running", s.running},
              {"writable", s.writable},
              {"boot_timestamp_ms", s.boot_timestamp_ms},
              {"now_ms", s.now_ms}};
}

json counters_json(const BrokerSnapshot::Counters& c) {
  return json{{"msg_put_total", c.msg_put_total},
              {"msg_put_failed", c.msg_put_failed},
              {"msg_get_total", c.msg_get_total},
              {"pulls_suspended", c.pulls_suspended},
              {"store_puts_ok", c.store_puts_ok},
              {"store_puts_failed", c.store_puts_failed},
              {"store_bytes_appended", c.store_bytes_appended},
              {"flush_timeouts", c.flush_timeouts},
              {"commit_log_flushes", c.commit_log_flushes},
              {"slave_timeouts", c.slave_timeouts},
              {"slave_not_available", c.slave_not_available},
              {"replica_bytes_appended", c.replica_bytes_appended},
              {"segments_deleted", c.segments_deleted},
              {"segments_recycled", c.segments_recycled}};
}

json replication_json(const BrokerSnapshot& s) {
  json slaves = json::array();
  for (const BrokerSnapshot::Slave& slave : s.slaves) {
    slaves.push_back(json{{"connection_id", slave.connection_id},
                          {"remote_address", slave.remote_address},
                          {"transferring", slave.transferring},
                          {"ack_offset", slave.ack_offset},
                          {"lag_bytes", slave.lag_bytes}});
  }
  json master = nullptr;
  if (s.master) {
    master = json{{"master_address", s.master->master_address},
                  {"state", s.master->state},
                  {"confirmed_offset", s.master->confirmed_offset},
                  {"refusal_reason", s.master->refusal_reason}};
  }
  return json{{"push2slave_max_offset", s.push2slave_max_offset}, {"slaves", slaves}, {"master", master}};
}

json topics_and_queues_json(const BrokerSnapshot& s, json& queues) {
  json topics = json::array();
  for (const BrokerSnapshot::Topic& topic : s.topics) {
    topics.push_back(json{{"name", topic.name},
                          {"read_queue_nums", topic.read_queue_nums},
                          {"write_queue_nums", topic.write_queue_nums},
                          {"perm", topic.perm},
                          {"messages", topic.messages}});
  }
  queues = json::array();
  for (const BrokerSnapshot::Queue& queue : s.queues) {
    queues.push_back(json{{"topic", queue.topic},
                          {"queue_id", queue.queue_id},
                          {"min_offset", queue.min_offset},
                          {"max_offset", queue.max_offset}});
  }
  return topics;
}

json consumers_json(const BrokerSnapshot& s, json& consumer_queues) {
  json groups = json::array();
  for (const BrokerSnapshot::ConsumerGroup& group : s.consumer_groups) {
    groups.push_back(
        json{{"group", group.group}, {"online_clients", group.online_clients}, {"total_lag", group.total_lag}});
  }
  consumer_queues = json::array();
  for (const BrokerSnapshot::ConsumerQueue& queue : s.consumer_queues) {
    consumer_queues.push_back(json{{"group", queue.group},
                                   {"topic", queue.topic},
                                   {"queue_id", queue.queue_id},
                                   {"consumer_offset", queue.consumer_offset},
                                   {"broker_offset", queue.broker_offset},
                                   {"lag", queue.lag}});
  }
  return groups;
}

}  // namespace

json latency_buckets_json(const LatencyBuckets& buckets) {
  json bounds_ms = json::array();
  json counts = json::array();
  for (size_t i = 0; i < LatencyBuckets::kBoundCount; ++i) {
    bounds_ms.push_back(static_cast<double>(LatencyBuckets::kBoundsNs[i]) / static_cast<double>(kNanosPerMilli));
    counts.push_back(buckets.bucket_count(i));
  }
  counts.push_back(buckets.bucket_count(LatencyBuckets::kBoundCount));  // past the last bound
  MQ_ASSERT(counts.size() == bounds_ms.size() + 1);
  return json{{"bounds_ms", bounds_ms},
              {"counts", counts},
              {"count", buckets.count()},
              {"sum_ms", static_cast<double>(buckets.sum_ns()) / static_cast<double>(kNanosPerMilli)}};
}

json broker_status_json(const BrokerSnapshot& s) {
  json queues;
  json consumer_queues;
  json status{{"broker", identity_json(s)},
              {"counters", counters_json(s.counters)},
              {"put_latency", latency_buckets_json(s.put_latency)},
              {"flush_latency", latency_buckets_json(s.flush_latency)},
              {"commit_log", json{{"min_offset", s.commit_log_min_offset},
                                  {"max_offset", s.commit_log_max_offset},
                                  {"flushed_offset", s.commit_log_flushed_offset},
                                  {"dispatched_offset", s.commit_log_dispatched_offset},
                                  {"dirty_bytes", s.dirty_bytes},
                                  {"segments", s.commit_log_segments}}},
              {"replication", replication_json(s)},
              {"topics", topics_and_queues_json(s, queues)},
              {"consumer_groups", consumers_json(s, consumer_queues)}};
  status["queues"] = std::move(queues);
  status["consumer_queues"] = std::move(consumer_queues);
  return status;
}

std::string dump_json_lenient(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace mqlab::http
