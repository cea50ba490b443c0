// RouteInfoManager (route_info_manager.h): registration, expiry and route
// lookups over the NameServer's tables, following 4.9.x's RouteInfoManager
// except where a comment says why not.
#include "broker/namesrv/route_info_manager.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "broker/common/log.h"
#include "broker/remoting/wire_text.h"

namespace mqlab::namesrv {
namespace {

constexpr const char* kRouteInfoManagerLog = "namesrv";

using Json = nlohmann::json;
using remoting::BrokerData;
using remoting::QueueData;

// Written by hand, like TopicRouteData::to_json: fastjson's form is not
// JSON, and both forms must differ in nothing but the brokerId quotes.
std::string route_broker_data_text(const BrokerData& broker, remoting::RouteDataJsonForm form) {
  std::string text = "{\"brokerAddrs\":{";
  bool first = true;
  for (const auto& [broker_id, addr] : broker.brokerAddrs) {
    if (!first) text += ',';
    first = false;
    const std::string key = std::to_string(broker_id);
    text += form == remoting::RouteDataJsonForm::kStandardJson ? "\"" + key + "\"" : key;
    text += ':';
    text += remoting::dump_json_text(Json(addr));
  }
  text += "},\"brokerName\":" + remoting::dump_json_text(Json(broker.brokerName));
  text += ",\"cluster\":" + remoting::dump_json_text(Json(broker.cluster)) + "}";
  return text;
}

}  // namespace

std::string ClusterInfo::to_json(remoting::RouteDataJsonForm form) const {
  std::string text = "{\"brokerAddrTable\":{";
  bool first = true;
  for (const auto& [broker_name, broker] : brokerAddrTable) {
    if (!first) text += ',';
    first = false;
    text += remoting::dump_json_text(Json(broker_name)) + ":" + route_broker_data_text(broker, form);
  }
  Json clusters = Json::object();
  for (const auto& [cluster_name, broker_names] : clusterAddrTable) clusters[cluster_name] = broker_names;
  text += "},\"clusterAddrTable\":" + remoting::dump_json_text(clusters) + "}";
  return text;
}

RouteInfoManager::RouteInfoManager(Nanos broker_channel_expired_time)
    : broker_channel_expired_time_(broker_channel_expired_time) {
  MQ_ASSERT(broker_channel_expired_time_ > 0);
}

RegisterBrokerResult RouteInfoManager::register_broker(const RegisterBrokerRequest& request, Nanos now) {
  MQ_ASSERT(now >= 0);
  ++stats_.registrations;
  clusterAddrTable_[request.clusterName].insert(request.brokerName);

  auto [entry, register_first] = brokerAddrTable_.try_emplace(request.brokerName);
  BrokerData& broker_data = entry->second;
  if (register_first) {
    broker_data.cluster = request.clusterName;
    broker_data.brokerName = request.brokerName;
  }
  // A slave promoted to master re-registers its address under id 0: one
  // address holds one id, so its old id goes.
  std::erase_if(broker_data.brokerAddrs, [&](const auto& id_addr) {
    return id_addr.second == request.brokerAddr && id_addr.first != request.brokerId;
  });
  const bool new_id = broker_data.brokerAddrs.insert_or_assign(request.brokerId, request.brokerAddr).second;
  register_first = register_first || new_id;

  // Only the master's topic table is the brokerName's. Topics missing from
  // the body are kept: a 4.x broker registers a new topic alone
  // (registerIncrementBrokerData), so absence is not deletion.
  const remoting::TopicConfigSerializeWrapper& wrapper = request.topicConfigWrapper;
  if (request.brokerId == kMasterId &&
      (register_first || is_broker_topic_config_changed(request.brokerAddr, wrapper.dataVersion))) {
    for (const auto& [topic, config] : wrapper.topicConfigTable) {
      create_and_update_queue_data(request.brokerName, config);
    }
  }

  if (!brokerLiveTable_.contains(request.brokerAddr)) {
    MQ_LOG(kInfo, kRouteInfoManagerLog,
           "new broker registered: " << request.brokerAddr << " (" << request.clusterName << "/" << request.brokerName
                                     << " id " << request.brokerId << ", HAServer " << request.haServerAddr << ")");
  }
  brokerLiveTable_[request.brokerAddr] =
      BrokerLiveInfo{now, wrapper.dataVersion, request.remoteAddress, request.haServerAddr};
  if (request.filterServerList.empty()) {
    filterServerTable_.erase(request.brokerAddr);
  } else {
    filterServerTable_[request.brokerAddr] = request.filterServerList;
  }

  RegisterBrokerResult result;
  if (request.brokerId != kMasterId) {
    const auto master = broker_data.brokerAddrs.find(kMasterId);
    if (master != broker_data.brokerAddrs.end()) {
      const auto live = brokerLiveTable_.find(master->second);
      MQ_ASSERT(live != brokerLiveTable_.end());  // every listed address is live
      result.haServerAddr = live->second.haServerAddr;
      result.masterAddr = master->second;
    }
  }
  check_invariants();
  return result;
}

void RouteInfoManager::create_and_update_queue_data(const std::string& brokerName,
                                                     const remoting::TopicConfig& topicConfig) {
  if (topicConfig.topicName.empty()) return;  // a "" key in the body: no topic to route
  const QueueData queue_data{brokerName, topicConfig.readQueueNums, topicConfig.writeQueueNums, topicConfig.perm,
                             topicConfig.topicSysFlag};
  std::map<std::string, QueueData>& by_broker = topicQueueTable_[topicConfig.topicName];
  const auto found = by_broker.find(brokerName);
  if (found == by_broker.end()) {
    MQ_LOG(kInfo, kRouteInfoManagerLog, "new topic registered: " << topicConfig.topicName << " on " << brokerName);
  } else if (found->second != queue_data) {
    MQ_LOG(kInfo, kRouteInfoManagerLog, "topic changed: " << topicConfig.topicName << " on " << brokerName);
  }
  by_broker.insert_or_assign(brokerName, queue_data);
}

void RouteInfoManager::unregister_broker(const std::string& clusterName, const std::string& brokerAddr,
                                         const std::string& brokerName, int64_t brokerId) {
  ++stats_.unregistrations;
  MQ_LOG(kInfo, kRouteInfoManagerLog,
         "broker unregistered: " << brokerAddr << " (" << clusterName << "/" << brokerName << " id " << brokerId
                                 << ")");
  // 4.x removes whatever address holds brokerId; we remove the address, so
  // an id another live broker holds by now stays, and no listed address is
  // left without its live entry.
  remove_broker_address(brokerAddr);
  check_invariants();
}

bool RouteInfoManager::is_broker_topic_config_changed(const std::string& brokerAddr,
                                                      const remoting::DataVersion& dataVersion) const {
  const std::optional<remoting::DataVersion> previous = query_broker_topic_config(brokerAddr);
  return !previous.has_value() || *previous != dataVersion;
}

std::optional<remoting::DataVersion> RouteInfoManager::query_broker_topic_config(
    const std::string& brokerAddr) const {
  const auto found = brokerLiveTable_.find(brokerAddr);
  if (found == brokerLiveTable_.end()) return std::nullopt;
  return found->second.dataVersion;
}

void RouteInfoManager::update_broker_info_update_timestamp(const std::string& brokerAddr, Nanos now) {
  const auto found = brokerLiveTable_.find(brokerAddr);
  if (found == brokerLiveTable_.end()) return;
  MQ_ASSERT(now >= found->second.lastUpdateTimestamp);  // the clock is monotonic
  found->second.lastUpdateTimestamp = now;
}

std::vector<std::string> RouteInfoManager::scan_not_active_broker(Nanos now) {
  std::vector<std::string> expired;
  for (const auto& [brokerAddr, live] : brokerLiveTable_) {
    if (live.lastUpdateTimestamp + broker_channel_expired_time_ < now) expired.push_back(brokerAddr);
  }
  for (const std::string& brokerAddr : expired) {
    const Nanos silent = now - brokerLiveTable_.at(brokerAddr).lastUpdateTimestamp;
    MQ_LOG(kWarn, kRouteInfoManagerLog,
           "the broker " << brokerAddr << " was not refreshed for " << silent / kNanosPerMilli << " ms (limit "
                         << broker_channel_expired_time_ / kNanosPerMilli << " ms); dropping it");
    remove_broker_address(brokerAddr);
    ++stats_.brokers_expired;
  }
  check_invariants();
  return expired;
}

std::vector<std::string> RouteInfoManager::on_connection_closed(const std::string& remoteAddress) {
  std::vector<std::string> dropped;
  for (const auto& [brokerAddr, live] : brokerLiveTable_) {
    if (!remoteAddress.empty() && live.remoteAddress == remoteAddress) dropped.push_back(brokerAddr);
  }
  for (const std::string& brokerAddr : dropped) {
    MQ_LOG(kInfo, kRouteInfoManagerLog,
           "the connection " << remoteAddress << " of broker " << brokerAddr << " closed; dropping it at once");
    remove_broker_address(brokerAddr);
    ++stats_.brokers_dropped_on_close;
  }
  check_invariants();
  return dropped;
}

void RouteInfoManager::remove_broker_address(const std::string& brokerAddr) {
  brokerLiveTable_.erase(brokerAddr);
  filterServerTable_.erase(brokerAddr);
  std::vector<std::string> emptied;
  for (auto it = brokerAddrTable_.begin(); it != brokerAddrTable_.end();) {
    std::erase_if(it->second.brokerAddrs, [&](const auto& id_addr) { return id_addr.second == brokerAddr; });
    if (it->second.brokerAddrs.empty()) {
      emptied.push_back(it->first);
      it = brokerAddrTable_.erase(it);
    } else {
      ++it;
    }
  }
  for (const std::string& brokerName : emptied) remove_broker_name(brokerName);
  MQ_ASSERT(!brokerLiveTable_.contains(brokerAddr));
}

void RouteInfoManager::remove_broker_name(const std::string& brokerName) {
  MQ_ASSERT(!brokerAddrTable_.contains(brokerName));
  MQ_LOG(kInfo, kRouteInfoManagerLog, "no address of " << brokerName << " remains; removing its clusters' and topics' mention");
  for (auto it = clusterAddrTable_.begin(); it != clusterAddrTable_.end();) {
    it->second.erase(brokerName);
    it = it->second.empty() ? clusterAddrTable_.erase(it) : std::next(it);
  }
  for (auto it = topicQueueTable_.begin(); it != topicQueueTable_.end();) {
    it->second.erase(brokerName);
    if (it->second.empty()) MQ_LOG(kInfo, kRouteInfoManagerLog, "topic " << it->first << " has no broker left; removed");
    it = it->second.empty() ? topicQueueTable_.erase(it) : std::next(it);
  }
}

std::optional<remoting::TopicRouteData> RouteInfoManager::pickup_topic_route_data(const std::string& topic) const {
  const auto found = topicQueueTable_.find(topic);
  if (found == topicQueueTable_.end()) return std::nullopt;
  remoting::TopicRouteData route;
  for (const auto& [brokerName, queue_data] : found->second) {
    route.queueDatas.push_back(queue_data);
    const auto broker = brokerAddrTable_.find(brokerName);
    if (broker == brokerAddrTable_.end()) continue;
    route.brokerDatas.push_back(broker->second);
    for (const auto& [broker_id, brokerAddr] : broker->second.brokerAddrs) {
      const auto servers = filterServerTable_.find(brokerAddr);
      if (servers != filterServerTable_.end()) route.filterServerTable[brokerAddr] = servers->second;
    }
  }
  if (route.brokerDatas.empty()) return std::nullopt;
  MQ_ASSERT(route.brokerDatas.size() == route.queueDatas.size());  // invariant: queue data names known brokers
  return route;
}

ClusterInfo RouteInfoManager::get_all_cluster_info() const { return ClusterInfo{brokerAddrTable_, clusterAddrTable_}; }

std::vector<std::string> RouteInfoManager::get_all_topic_list() const {
  std::vector<std::string> topics;
  topics.reserve(topicQueueTable_.size());
  for (const auto& [topic, by_broker] : topicQueueTable_) topics.push_back(topic);
  return topics;
}

void RouteInfoManager::check_invariants() const {
  for (const auto& [brokerName, broker] : brokerAddrTable_) {
    MQ_ASSERT(broker.brokerName == brokerName);
    MQ_ASSERT_MSG(!broker.brokerAddrs.empty(), brokerName + " is listed without an address");
    std::set<std::string> seen;
    for (const auto& [broker_id, brokerAddr] : broker.brokerAddrs) {
      MQ_ASSERT_MSG(brokerLiveTable_.contains(brokerAddr), brokerAddr + " of " + brokerName + " is not live");
      MQ_ASSERT_MSG(seen.insert(brokerAddr).second, brokerAddr + " holds two ids of " + brokerName);
    }
  }
  for (const auto& [clusterName, brokerNames] : clusterAddrTable_) {
    MQ_ASSERT_MSG(!brokerNames.empty(), "cluster " + clusterName + " is listed without a broker");
    for (const std::string& brokerName : brokerNames) MQ_ASSERT(brokerAddrTable_.contains(brokerName));
  }
  for (const auto& [topic, by_broker] : topicQueueTable_) {
    MQ_ASSERT_MSG(!by_broker.empty(), "topic " + topic + " is listed without a broker");
    for (const auto& [brokerName, queue_data] : by_broker) {
      MQ_ASSERT(queue_data.brokerName == brokerName);
      MQ_ASSERT_MSG(brokerAddrTable_.contains(brokerName), "topic " + topic + " names the unknown " + brokerName);
    }
  }
}

}  // namespace mqlab::namesrv
