// The broker's /api/status: a BrokerSnapshot as JSON, what the console page
// fetches every 2 s. Field names are the snapshot's; offsets are numbers
// (an int64 offset stays exact in a JavaScript double up to 2^53 bytes,
// 8 PiB); latencies are bucket bounds in ms with the count in each bucket
// (not cumulative), so the page can show a distribution and, from two
// fetches, the latency of the last interval alone.
//
//   {"broker": {...identity, running, writable, boot/now ms...},
//    "counters": {...}, "put_latency": {...}, "flush_latency": {...},
//    "commit_log": {min_offset, max_offset, flushed_offset, dispatched_offset, dirty_bytes, segments},
//    "replication": {push2slave_max_offset, slaves: [...], master: {...} | null},
//    "topics": [...], "queues": [...], "consumer_groups": [...], "consumer_queues": [...]}
//
// Names a client chose (topics, groups) are passed through; invalid UTF-8
// in them is replaced (U+FFFD) rather than failing the whole answer.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "broker/http/broker_snapshot.h"

namespace mqlab::http {

nlohmann::json broker_status_json(const BrokerSnapshot& snapshot);
nlohmann::json latency_buckets_json(const LatencyBuckets& buckets);
// dump() that replaces invalid UTF-8 instead of throwing.
std::string dump_json_lenient(const nlohmann::json& value);

}  // namespace mqlab::http
