// The broker's /metrics: a BrokerSnapshot in Prometheus text format.
//
// Names (all prefixed mqlab_; offsets and sizes in bytes, latencies in
// seconds, as Prometheus' base units):
//   mqlab_broker_info{cluster,broker,broker_id,role,flush_disk_type,version,addr} 1
//   mqlab_broker_running, mqlab_broker_writable, mqlab_broker_boot_timestamp_seconds
//   mqlab_put_messages_total{result="stored"|"failed"}       counter (rate() = put TPS)
//   mqlab_get_messages_total, mqlab_pulls_suspended_total     counters
//   mqlab_pull_bodies_total{transfer="zero_copy"|"copy"}     counter (how FOUND bodies went)
//   mqlab_store_put_bytes_total, mqlab_store_flush_timeouts_total,
//   mqlab_store_slave_timeouts_total, mqlab_store_slave_not_available_total,
//   mqlab_commitlog_flushes_total, mqlab_commitlog_segments_deleted_total,
//   mqlab_commitlog_segments_recycled_total,
//   mqlab_ha_replica_bytes_total                              counters
//   mqlab_put_latency_seconds                                 histogram (store round trip of a put)
//   mqlab_commitlog_flush_latency_seconds                     histogram (one CommitLog flush)
//   mqlab_commitlog_{min,max,flushed,dispatched}_offset_bytes gauges
//   mqlab_commitlog_dirty_bytes                               gauge (appended, not flushed)
//   mqlab_commitlog_segments                                  gauge
//   mqlab_ha_slaves, mqlab_ha_push2slave_max_offset_bytes     gauges (master)
//   mqlab_ha_slave_ack_offset_bytes{slave}, mqlab_ha_slave_lag_bytes{slave}   gauges (master)
//   mqlab_ha_master_link{master,state} 1, mqlab_ha_confirmed_offset_bytes     gauges (slave)
//   mqlab_queue_min_offset{topic,queue_id}, mqlab_queue_max_offset{topic,queue_id}  gauges
//   mqlab_consumer_offset{group,topic,queue_id}, mqlab_consumer_lag_messages{group,topic,queue_id}
//   mqlab_consumer_group_lag_messages{group}, mqlab_consumer_group_online_clients{group}
#pragma once

#include <string>

#include "broker/http/broker_snapshot.h"

namespace mqlab::http {

std::string render_broker_metrics(const BrokerSnapshot& snapshot);

}  // namespace mqlab::http
