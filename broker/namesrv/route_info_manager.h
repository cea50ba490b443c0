// RouteInfoManager: the NameServer's whole state, who serves which topic
// (apache/rocketmq namesrv/…/routeinfo/RouteInfoManager.java, 4.9.x).
//
//   clusterAddrTable   clusterName -> brokerNames
//   brokerAddrTable    brokerName  -> BrokerData (cluster, brokerId -> brokerAddr)
//   topicQueueTable    topic       -> brokerName -> QueueData
//   brokerLiveTable    brokerAddr  -> BrokerLiveInfo (last refresh, dataVersion,
//                                     the registering connection, haServerAddr)
//   filterServerTable  brokerAddr  -> filter server addresses
//
// Brokers register every 30 s; that is the heartbeat in 4.x. A broker is
// dropped when it unregisters, when the connection it registered over closes,
// or when it was not refreshed for brokerChannelExpiredTime. A brokerName
// (and the cluster's and topics' mention of it) goes when its last address
// goes, so a surviving slave keeps a topic routable for reads. Queue data is
// updated from a registration only for brokerId 0 (the master) and only when
// its dataVersion changed or it is the first registration of that id.
//
// Invariants (check_invariants): no empty BrokerData, cluster set or topic
// entry is kept; every address in brokerAddrTable is in brokerLiveTable, and
// appears at most once per brokerName; every brokerName in a cluster set or
// in topicQueueTable is in brokerAddrTable. Every table is a std::map, so
// routes, cluster info and topic lists come out in one order for one history.
//
// Time is the caller's: Nanos from the Env's monotonic clock, passed in, so
// the manager is plain data and tests need no Env.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "broker/common/types.h"
#include "broker/remoting/route_data.h"

namespace mqlab::namesrv {

// MixAll.MASTER_ID: a brokerName's master registers as brokerId 0.
inline constexpr int64_t kMasterId = 0;

struct BrokerLiveInfo {
  Nanos lastUpdateTimestamp = 0;    // Env clock; the last refresh
  remoting::DataVersion dataVersion;  // of the broker's topic table, as last registered
  std::string remoteAddress;        // the connection it registered over (RocketMQ keeps the Channel)
  std::string haServerAddr;
  bool operator==(const BrokerLiveInfo&) const = default;
};

// A REGISTER_BROKER request, decoded.
struct RegisterBrokerRequest {
  std::string clusterName;
  std::string brokerAddr;
  std::string brokerName;
  int64_t brokerId = kMasterId;
  std::string haServerAddr;
  remoting::TopicConfigSerializeWrapper topicConfigWrapper;
  std::vector<std::string> filterServerList;
  std::string remoteAddress;  // of the connection the request came on
};

// What a registering slave learns about its master; both empty for a master
// or while the master is not registered.
struct RegisterBrokerResult {
  std::string haServerAddr;
  std::string masterAddr;
  bool operator==(const RegisterBrokerResult&) const = default;
};

// GET_BROKER_CLUSTER_INFO's body (ClusterInfo.java).
struct ClusterInfo {
  std::map<std::string, remoting::BrokerData> brokerAddrTable;
  std::map<std::string, std::set<std::string>> clusterAddrTable;

  // {"brokerAddrTable":{"broker-a":{BrokerData}},"clusterAddrTable":{"C":["broker-a"]}},
  // brokerAddrs keys written as form says (fastjson leaves them bare).
  std::string to_json(remoting::RouteDataJsonForm form) const;
};

struct RouteInfoStats {
  uint64_t registrations = 0;
  uint64_t unregistrations = 0;
  uint64_t brokers_expired = 0;          // by scan_not_active_broker
  uint64_t brokers_dropped_on_close = 0;  // by on_connection_closed
};

class RouteInfoManager {
 public:
  explicit RouteInfoManager(Nanos broker_channel_expired_time = seconds(120));

  RegisterBrokerResult register_broker(const RegisterBrokerRequest& request, Nanos now);
  // Drops brokerAddr (live entry, its address under brokerName).
  void unregister_broker(const std::string& clusterName, const std::string& brokerAddr,
                         const std::string& brokerName, int64_t brokerId);

  // QUERY_DATA_VERSION: whether dataVersion differs from what brokerAddr last
  // registered (true when it never registered), and, when it does not, the
  // refresh that answer implies.
  bool is_broker_topic_config_changed(const std::string& brokerAddr, const remoting::DataVersion& dataVersion) const;
  std::optional<remoting::DataVersion> query_broker_topic_config(const std::string& brokerAddr) const;
  void update_broker_info_update_timestamp(const std::string& brokerAddr, Nanos now);

  // Drops every broker not refreshed for broker_channel_expired_time before
  // now; returns their addresses, in order.
  std::vector<std::string> scan_not_active_broker(Nanos now);
  // Drops every broker that registered over the connection from
  // remoteAddress; returns their addresses, in order.
  std::vector<std::string> on_connection_closed(const std::string& remoteAddress);

  // nullopt when the topic has no queue data or none of its brokers is known.
  std::optional<remoting::TopicRouteData> pickup_topic_route_data(const std::string& topic) const;
  ClusterInfo get_all_cluster_info() const;
  std::vector<std::string> get_all_topic_list() const;  // sorted

  // Read-only views, for status pages and tests.
  const std::map<std::string, std::set<std::string>>& cluster_addr_table() const { return clusterAddrTable_; }
  const std::map<std::string, remoting::BrokerData>& broker_addr_table() const { return brokerAddrTable_; }
  const std::map<std::string, std::map<std::string, remoting::QueueData>>& topic_queue_table() const {
    return topicQueueTable_;
  }
  const std::map<std::string, BrokerLiveInfo>& broker_live_table() const { return brokerLiveTable_; }
  const RouteInfoStats& stats() const { return stats_; }
  Nanos broker_channel_expired_time() const { return broker_channel_expired_time_; }

  // Asserts the invariants in the header comment.
  void check_invariants() const;

 private:
  void create_and_update_queue_data(const std::string& brokerName, const remoting::TopicConfig& topicConfig);
  // Removes brokerAddr everywhere (live table, filter servers, every
  // brokerName's addresses), then brokerNames left without an address.
  void remove_broker_address(const std::string& brokerAddr);
  // Removes brokerName from every cluster and every topic.
  void remove_broker_name(const std::string& brokerName);

  const Nanos broker_channel_expired_time_;
  std::map<std::string, std::set<std::string>> clusterAddrTable_;
  std::map<std::string, remoting::BrokerData> brokerAddrTable_;
  std::map<std::string, std::map<std::string, remoting::QueueData>> topicQueueTable_;
  std::map<std::string, BrokerLiveInfo> brokerLiveTable_;
  std::map<std::string, std::vector<std::string>> filterServerTable_;
  RouteInfoStats stats_;
};

}  // namespace mqlab::namesrv
