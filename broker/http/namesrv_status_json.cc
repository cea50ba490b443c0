#include "broker/http/namesrv_status_json.h"

#include <charconv>

#include "broker/common/assert.h"
#include "broker/http/prometheus_text.h"

namespace mqlab::http {
namespace {

using nlohmann::json;

json clusters_json(const namesrv::NamesrvStatus& status) {
  // Rebuilt from the broker list: cluster -> brokerNames, both sorted
  // (the brokers come ordered by brokerName, so names arrive sorted).
  std::map<std::string, std::vector<std::string>> clusters;
  for (const namesrv::NamesrvStatus::Broker& broker : status.brokers) {
    std::vector<std::string>& names = clusters[broker.clusterName];
    if (names.empty() || names.back() != broker.brokerName) names.push_back(broker.brokerName);
  }
  json result = json::array();
  for (const auto& [name, broker_names] : clusters) {
    result.push_back(json{{"name", name}, {"broker_names", broker_names}});
  }
  return result;
}

json brokers_json(const namesrv::NamesrvStatus& status) {
  json result = json::array();
  for (const namesrv::NamesrvStatus::Broker& broker : status.brokers) {
    const std::optional<std::string> url = broker_console_url(broker.brokerAddr);
    result.push_back(json{{"cluster", broker.clusterName},
                          {"broker_name", broker.brokerName},
                          {"broker_id", broker.brokerId},
                          {"role", broker.brokerId == namesrv::kMasterId ? "MASTER" : "SLAVE"},
                          {"broker_addr", broker.brokerAddr},
                          {"ha_server_addr", broker.haServerAddr},
                          {"console_url", url ? json(*url) : json(nullptr)},
                          {"last_update_ms_ago", broker.since_last_update_ns / kNanosPerMilli},
                          {"data_version", json{{"timestamp", broker.dataVersion.timestamp},
                                                {"counter", broker.dataVersion.counter}}}});
  }
  return result;
}

json topics_json(const namesrv::NamesrvStatus& status) {
  json result = json::array();
  for (const namesrv::NamesrvStatus::Topic& topic : status.topics) {
    json queue_datas = json::array();
    for (const remoting::QueueData& queue : topic.queueDatas) {
      queue_datas.push_back(json{{"broker_name", queue.brokerName},
                                 {"read_queue_nums", queue.readQueueNums},
                                 {"write_queue_nums", queue.writeQueueNums},
                                 {"perm", queue.perm}});
    }
    result.push_back(json{{"topic", topic.topic}, {"queue_datas", queue_datas}});
  }
  return result;
}

}  // namespace

std::optional<std::string> broker_console_url(std::string_view broker_addr) {
  const size_t colon = broker_addr.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  const std::string_view port_text = broker_addr.substr(colon + 1);
  int32_t port = 0;
  const auto [end, error] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (error != std::errc() || end != port_text.data() + port_text.size() || port <= 0 ||
      port > 65535 - kBrokerHttpPortOffset) {
    return std::nullopt;
  }
  return "http://" + std::string(broker_addr.substr(0, colon)) + ":" + std::to_string(port + kBrokerHttpPortOffset) +
         "/";
}

json namesrv_status_json(const namesrv::NamesrvStatus& status) {
  return json{{"namesrv", json{{"address", status.address},
                               {"running", status.running},
                               {"connections", status.connections},
                               {"registrations", status.routes.registrations},
                               {"unregistrations", status.routes.unregistrations},
                               {"brokers_expired", status.routes.brokers_expired},
                               {"brokers_dropped_on_close", status.routes.brokers_dropped_on_close},
                               {"requests", status.remoting.requests}}},
              {"clusters", clusters_json(status)},
              {"brokers", brokers_json(status)},
              {"topics", topics_json(status)}};
}

std::string render_namesrv_metrics(const namesrv::NamesrvStatus& status) {
  PrometheusText out;
  out.family("mqlab_namesrv_brokers", MetricType::kGauge, "Broker addresses registered, by cluster and role.");
  std::map<std::pair<std::string, std::string>, int64_t> brokers;  // (cluster, role) -> count
  for (const auto& broker : status.brokers) {
    ++brokers[{broker.clusterName, broker.brokerId == namesrv::kMasterId ? "MASTER" : "SLAVE"}];
  }
  for (const auto& [key, count] : brokers) {
    out.sample("mqlab_namesrv_brokers", {{"cluster", key.first}, {"role", key.second}}, count);
  }
  out.family("mqlab_namesrv_topics", MetricType::kGauge, "Topics with a route.");
  out.sample("mqlab_namesrv_topics", {}, static_cast<uint64_t>(status.topics.size()));
  out.family("mqlab_namesrv_connections", MetricType::kGauge, "Open remoting connections.");
  out.sample("mqlab_namesrv_connections", {}, static_cast<uint64_t>(status.connections));
  out.family("mqlab_namesrv_registrations_total", MetricType::kCounter, "REGISTER_BROKER requests handled.");
  out.sample("mqlab_namesrv_registrations_total", {}, status.routes.registrations);
  out.family("mqlab_namesrv_brokers_expired_total", MetricType::kCounter,
             "Brokers dropped for not registering within brokerChannelExpiredTime.");
  out.sample("mqlab_namesrv_brokers_expired_total", {}, status.routes.brokers_expired);
  out.family("mqlab_namesrv_requests_total", MetricType::kCounter, "Remoting requests received.");
  out.sample("mqlab_namesrv_requests_total", {}, status.remoting.requests);
  return out.text();
}

}  // namespace mqlab::http
