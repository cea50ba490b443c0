// The NameServer's /api/cluster and /metrics: its NamesrvStatus (who is
// registered, which topics they serve) as JSON for the cluster page and as
// Prometheus text.
//
// Each broker gets a console_url: RocketMQ's REGISTER_BROKER carries no
// field for an HTTP port, so the NameServer cannot learn it; the link
// follows mqlab's convention (broker.conf's httpPort defaults to
// listenPort + 2): http://{brokerAddr host}:{brokerAddr port + 2}/. A broker
// given another httpPort is listed without a working link to its page.
//
//   {"namesrv": {address, running, connections, registrations, ...},
//    "clusters": [{"name", "broker_names": [...]}],
//    "brokers": [{cluster, broker_name, broker_id, role, broker_addr, ha_server_addr,
//                 console_url, last_update_ms_ago, data_version}],
//    "topics": [{"topic", "queue_datas": [{broker_name, read_queue_nums, write_queue_nums, perm}]}]}
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "broker/namesrv/namesrv_controller.h"

namespace mqlab::http {

// listenPort + 2, as broker.conf's httpPort defaults (BrokerConfig::http_port).
inline constexpr int32_t kBrokerHttpPortOffset = 2;

// "http://10.0.0.1:10913/" for "10.0.0.1:10911"; nullopt when broker_addr
// is not host:port with a port that leaves room for the offset.
std::optional<std::string> broker_console_url(std::string_view broker_addr);

nlohmann::json namesrv_status_json(const namesrv::NamesrvStatus& status);
std::string render_namesrv_metrics(const namesrv::NamesrvStatus& status);

}  // namespace mqlab::http
