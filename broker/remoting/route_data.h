// Route data: the JSON bodies NameServers, brokers and clients exchange about
// who serves which topic and who is connected, in RocketMQ's shapes and field
// spellings (apache/rocketmq common/…/protocol/route/TopicRouteData.java,
// BrokerData.java, QueueData.java; protocol/heartbeat/HeartbeatData.java,
// ConsumerData.java, ProducerData.java, SubscriptionData.java;
// protocol/body/RegisterBrokerBody.java, TopicConfigSerializeWrapper.java;
// common/TopicConfig.java, DataVersion.java).
//
//   TopicRouteData      GET_ROUTEINFO_BY_TOPIC (105) response body
//   HeartbeatData       HEART_BEAT (34) request body
//   RegisterBrokerBody  REGISTER_BROKER (103) request body (uncompressed form)
//   DataVersion         QUERY_DATA_VERSION (322) request body
//
// Writing: keys sorted, as fastjson writes them, so one value gives one byte
// string. Reading: unknown fields are ignored (newer peers add some), missing
// or null fields keep their defaults (fastjson omits nulls), a wrong type is
// InvalidArgument naming the path ("HeartbeatData.consumerDataSet[0].unitMode:
// expected a boolean, found a string"). Every parser first quotes integer map
// keys that fastjson leaves bare (`{0:"10.0.0.1:10911"}`), so both forms read.
//
// These structs are the wire shapes only: broker/meta keeps its own
// TopicConfig and DataVersion for topics.json, and translating between the two
// is the caller's business (remoting does not depend on meta).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/status.h"

namespace mqlab::remoting {

// fastjson writes Map<Long, String> keys bare (`{0:"a"}`), which is not JSON.
// Returns text with every such key quoted (`{"0":"a"}`): an optionally signed
// run of digits that follows `{` or `,` and precedes `:`, outside string
// literals. Text that is already standard JSON comes back byte-identical;
// string contents are never touched.
std::string quote_unquoted_integer_keys(std::string_view text);

// --- TopicRouteData -------------------------------------------------------------

struct QueueData {
  std::string brokerName;
  int32_t readQueueNums = 0;
  int32_t writeQueueNums = 0;
  int32_t perm = 0;  // PermName bits: READ 4, WRITE 2, INHERIT 1
  // Read from "topicSysFlag", or from "topicSynFlag" (its spelling up to
  // 4.8.0) when only that is present; written as "topicSysFlag".
  int32_t topicSysFlag = 0;
  bool operator==(const QueueData&) const = default;
};

struct BrokerData {
  std::string cluster;
  std::string brokerName;
  std::map<int64_t, std::string> brokerAddrs;  // brokerId (0 = master) -> "ip:port"
  bool operator==(const BrokerData&) const = default;
};

// How brokerAddrs' integer keys are written.
enum class RouteDataJsonForm {
  kStandardJson,        // {"0":"10.0.0.1:10911"}
  kFastjsonIntegerKeys,  // {0:"10.0.0.1:10911"}: what a Java NameServer sends old clients
};

// The NameServer's choice (4.9.4+ DefaultRequestProcessor.getRouteInfoByTopic):
// standard JSON when the request's version is at least V4_9_4 (401) or it
// sets acceptStandardJsonOnly; the fastjson form otherwise, e.g. to ali-ons
// (version 121), whose eval-based parser takes either.
RouteDataJsonForm route_data_json_form_for(int32_t request_version, bool accept_standard_json_only);

struct TopicRouteData {
  std::string orderTopicConf;  // "brokerName:queueNums;..."; empty = absent (not written)
  std::vector<QueueData> queueDatas;
  std::vector<BrokerData> brokerDatas;
  std::map<std::string, std::vector<std::string>> filterServerTable;  // broker addr -> filter servers

  std::string to_json(RouteDataJsonForm form = RouteDataJsonForm::kStandardJson) const;
  static Result<TopicRouteData> parse(std::string_view text);
  bool operator==(const TopicRouteData&) const = default;
};

// --- HeartbeatData --------------------------------------------------------------

struct SubscriptionData {
  std::string topic;
  std::string subString;  // "*" or "TagA || TagB"
  bool classFilterMode = false;
  std::set<std::string> tagsSet;  // Java HashSets: sets here, written sorted
  std::set<int32_t> codeSet;      // String.hashCode() of each tag
  int64_t subVersion = 0;         // the client's subscribe time, ms
  std::string expressionType = "TAG";  // ali-ons omits it; absent means TAG
  bool operator==(const SubscriptionData&) const = default;
};

struct ProducerData {
  std::string groupName;
  bool operator==(const ProducerData&) const = default;
};

struct ConsumerData {
  std::string groupName;
  std::string consumeType;       // CONSUME_ACTIVELY (pull) | CONSUME_PASSIVELY (push)
  std::string messageModel;      // CLUSTERING | BROADCASTING
  std::string consumeFromWhere;  // CONSUME_FROM_LAST_OFFSET | ..._FIRST_OFFSET | ..._TIMESTAMP | ...
  std::vector<SubscriptionData> subscriptionDataSet;
  bool unitMode = false;
  bool operator==(const ConsumerData&) const = default;
};

struct HeartbeatData {
  std::string clientID;  // "clientIP@instanceName"
  std::vector<ProducerData> producerDataSet;
  std::vector<ConsumerData> consumerDataSet;

  std::string to_json() const;
  static Result<HeartbeatData> parse(std::string_view text);
  bool operator==(const HeartbeatData&) const = default;
};

// --- RegisterBrokerBody ---------------------------------------------------------

// {"counter":N,"timestamp":MS}: NameServers compare it to skip unchanged
// registrations (QUERY_DATA_VERSION).
struct DataVersion {
  int64_t timestamp = 0;
  int64_t counter = 0;

  std::string to_json() const;
  static Result<DataVersion> parse(std::string_view text);
  bool operator==(const DataVersion&) const = default;
};

// TopicConfig as it travels in registrations; defaults are Java's.
struct TopicConfig {
  std::string topicName;
  int32_t readQueueNums = 16;
  int32_t writeQueueNums = 16;
  int32_t perm = 6;  // READ | WRITE
  std::string topicFilterType = "SINGLE_TAG";
  int32_t topicSysFlag = 0;
  bool order = false;
  bool operator==(const TopicConfig&) const = default;
};

// Also the legacy REGISTER_BROKER body (request version < V3_0_11) and the
// GET_ALL_TOPIC_CONFIG body.
struct TopicConfigSerializeWrapper {
  std::map<std::string, TopicConfig> topicConfigTable;  // topicName -> config
  DataVersion dataVersion;

  std::string to_json() const;
  // An entry without topicName takes its key's.
  static Result<TopicConfigSerializeWrapper> parse(std::string_view text);
  bool operator==(const TopicConfigSerializeWrapper&) const = default;
};

struct RegisterBrokerBody {
  TopicConfigSerializeWrapper topicConfigSerializeWrapper;
  std::vector<std::string> filterServerList;

  std::string to_json() const;
  static Result<RegisterBrokerBody> parse(std::string_view text);
  bool operator==(const RegisterBrokerBody&) const = default;
};

}  // namespace mqlab::remoting
