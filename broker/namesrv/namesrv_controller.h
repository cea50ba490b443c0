// NamesrvController: one NameServer process's core (apache/rocketmq
// namesrv/…/NamesrvController.java and processor/DefaultRequestProcessor.java,
// 4.9.x). It owns a RemotingServer serving the NameServer's request codes,
// the RouteInfoManager they read and write, an in-memory KV config, and the
// periodic scan that drops brokers not heard from.
//
//   PUT/GET/DELETE_KV_CONFIG (100-102)         the KV config (namespace, key, value)
//   REGISTER_BROKER (103)                      a broker's heartbeat and topic table
//   UNREGISTER_BROKER (104)                    a broker leaving
//   GET_ROUTEINFO_BY_TOPIC (105)               TopicRouteData, or TOPIC_NOT_EXIST
//   GET_BROKER_CLUSTER_INFO (106)              ClusterInfo
//   GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206)   {"topicList":[...]}
//   QUERY_DATA_VERSION (322)                   "changed?" (and a refresh when not)
//
// A broker is dropped when the connection it registered over closes, at once,
// or by the scan (first after scanNotActiveBrokerFirstDelay, then every
// scanNotActiveBrokerInterval) once not refreshed for brokerChannelExpiredTime.
// A malformed request (a missing or bad header field, a body that does not
// parse, a CRC mismatch, a topic with a queue count outside [0, 1024]) is
// answered SYSTEM_ERROR with the reason; nothing a peer sends can crash it.
//
// Invariants: everything runs on the Env's executor; the scan timer is
// pending exactly while running; the KV config keeps no empty namespace.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "broker/common/lifetime.h"
#include "broker/common/status.h"
#include "broker/env/env.h"
#include "broker/namesrv/namesrv_config.h"
#include "broker/namesrv/route_info_manager.h"
#include "broker/remoting/remoting_server.h"

namespace mqlab::namesrv {

// NamesrvUtil.NAMESPACE_ORDER_TOPIC_CONFIG: key = topic, value = orderTopicConf.
inline constexpr const char* kNamespaceOrderTopicConfig = "ORDER_TOPIC_CONFIG";

// A snapshot for a console page; plain values, ordered.
struct NamesrvStatus {
  struct Broker {
    std::string clusterName;
    std::string brokerName;
    int64_t brokerId = 0;
    std::string brokerAddr;
    std::string haServerAddr;
    std::string remoteAddress;  // the connection it registered over
    Nanos since_last_update_ns = 0;
    remoting::DataVersion dataVersion;
  };
  struct Topic {
    std::string topic;
    std::vector<remoting::QueueData> queueDatas;  // by brokerName
  };

  std::string address;  // bound listen address; empty before start
  bool running = false;
  size_t connections = 0;
  remoting::RemotingServerStats remoting;
  RouteInfoStats routes;
  std::vector<Broker> brokers;  // by brokerName, then brokerId
  std::vector<Topic> topics;    // by topic
  std::map<std::string, std::map<std::string, std::string>> kvConfig;  // namespace -> key -> value
};

class NamesrvController {
 public:
  // Requires: config's intervals are positive.
  NamesrvController(env::Env& env, NamesrvConfig config);
  ~NamesrvController();
  NamesrvController(const NamesrvController&) = delete;
  NamesrvController& operator=(const NamesrvController&) = delete;

  // Starts listening on config.listenAddress and schedules the scan. done
  // runs on the executor, never inline, with the listen result (a failed
  // start leaves the controller stopped). Requires: not started.
  void start(std::function<void(Status)> done);
  // Stops listening, closes every connection, cancels the scan. Idempotent.
  void shutdown();

  bool running() const { return running_; }
  // The bound address (the real port when the config said 0).
  const std::string& address() const { return server_.address(); }
  const NamesrvConfig& config() const { return config_; }
  NamesrvStatus status() const;

  RouteInfoManager& route_info_manager() { return routes_; }
  const RouteInfoManager& route_info_manager() const { return routes_; }

  // The KV config, as PUT/GET/DELETE_KV_CONFIG see it.
  void put_kv_config(const std::string& name_space, const std::string& key, const std::string& value);
  std::optional<std::string> get_kv_config(const std::string& name_space, const std::string& key) const;
  void delete_kv_config(const std::string& name_space, const std::string& key);

 private:
  void register_processors();
  void schedule_scan(Nanos delay);
  void scan_not_active_broker();

  // One per request code; each answers through its channel.
  void process_put_kv_config(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void process_get_kv_config(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void process_delete_kv_config(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void process_register_broker(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void process_unregister_broker(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void process_get_route_info_by_topic(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void process_get_broker_cluster_info(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void process_get_all_topic_list(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void process_query_data_version(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);

  // KVTable JSON ({"table":{...}}) of a namespace; empty when it has none.
  std::vector<uint8_t> kv_list_body(const std::string& name_space) const;

  env::Env& env_;
  const NamesrvConfig config_;
  RouteInfoManager routes_;
  std::map<std::string, std::map<std::string, std::string>> kv_config_;
  remoting::RemotingServer server_;  // after routes_: destroyed first, so no request outlives them
  env::TimerId scan_timer_ = env::kNoTimer;
  bool running_ = false;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::namesrv
