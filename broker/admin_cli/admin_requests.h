// The admin requests mqadmin sends beyond what producers and consumers need
// (RocketMQ's MQClientAPIImpl admin half and DefaultMQAdminExtImpl), with
// the parsers of their answers. Pure functions over RemotingCommand, plus
// fan_out(), which asks several servers at once and hands back the answers
// in the order asked.
//
//   GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206)  body {"topicList":[...]}
//   GET_BROKER_RUNTIME_INFO (28)   body KVTable {"table":{"k":"v",...}}
//   GET_TOPIC_STATS_INFO (202)     ext topic; body {"offsetTable":[{brokerName,
//                                  queueId, topic, minOffset, maxOffset,
//                                  lastUpdateTimestamp}]} (mqlab's list form,
//                                  admin_broker_processor.h)
//   GET_CONSUME_STATS (208)        ext consumerGroup, topic; body {"consumeTps",
//                                  "diffTotal", "offsetTable":[{brokerName,
//                                  queueId, topic, brokerOffset, consumerOffset,
//                                  lastTimestamp}]}
//   QUERY_MESSAGE (12)             ext topic, key, maxNum, beginTimestamp,
//                                  endTimestamp, _UNIQUE_KEY_QUERY; body records
//   VIEW_MESSAGE_BY_ID (33)        ext offset; body one record
//   QUERY_TOPIC_CONSUME_BY_WHO (300) ext topic; body {"groupList":[...]}
//   GET_CONSUMER_CONNECTION_LIST (203) ext consumerGroup; body
//                                  ConsumerConnection, or CONSUMER_NOT_ONLINE
// Parsers read untrusted bytes: a bad answer is a Status naming the request
// and the field, never an assertion.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "broker/client/message.h"
#include "broker/client/mq_client_api.h"
#include "broker/client/mq_client_instance.h"
#include "broker/common/status.h"
#include "broker/remoting/remoting_command.h"
#include "broker/remoting/route_data.h"

namespace mqlab::admin_cli {

using remoting::RemotingCommand;

RemotingCommand build_get_all_topic_list();
Result<std::vector<std::string>> parse_topic_list(const RemotingCommand& response);

RemotingCommand build_get_broker_runtime_info();
Result<std::map<std::string, std::string>> parse_kv_table(const RemotingCommand& response);

struct TopicOffset {
  std::string brokerName;
  int32_t queueId = 0;
  int64_t minOffset = 0;
  int64_t maxOffset = 0;
  int64_t lastUpdateTimestamp = 0;  // ms; 0 when the queue is empty
};
RemotingCommand build_get_topic_stats_info(const std::string& topic);
Result<std::vector<TopicOffset>> parse_topic_stats(const RemotingCommand& response);

struct OffsetWrapper {
  std::string topic;
  std::string brokerName;
  int32_t queueId = 0;
  int64_t brokerOffset = 0;
  int64_t consumerOffset = 0;
  int64_t lastTimestamp = 0;  // store time of the last consumed message; 0 = none
};
// topic empty: every topic the group has offsets on.
RemotingCommand build_get_consume_stats(const std::string& group, const std::string& topic);
Result<std::vector<OffsetWrapper>> parse_consume_stats(const RemotingCommand& response);

// unique_key: key is a UNIQ_KEY (a client msgId), not a KEYS entry.
RemotingCommand build_query_message(const std::string& topic, const std::string& key, int32_t max_num,
                                    int64_t begin_ms, int64_t end_ms, bool unique_key);
// The matching messages; an empty list for QUERY_NOT_FOUND.
Result<std::vector<client::MessageExt>> parse_query_message(const RemotingCommand& response);

RemotingCommand build_view_message_by_id(int64_t commit_log_offset);
Result<client::MessageExt> parse_view_message(const RemotingCommand& response);

RemotingCommand build_query_topic_consume_by_who(const std::string& topic);
Result<std::vector<std::string>> parse_group_list(const RemotingCommand& response);

// What consumerProgress shows of a group's live clients.
struct ConsumerConnection {
  size_t connections = 0;
  int32_t min_version = 0;  // the oldest client's MQVersion ordinal
  std::string consumeType;  // CONSUME_ACTIVELY | CONSUME_PASSIVELY
  std::string messageModel;
};
RemotingCommand build_get_consumer_connection_list(const std::string& group);
// NotFound when the broker answers CONSUMER_NOT_ONLINE (no live client).
Result<ConsumerConnection> parse_consumer_connection(const RemotingCommand& response);

// The address requests about a broker group go to: its master, else its
// lowest-id slave (DefaultMQAdminExt's BrokerData.selectBrokerAddr, minus the
// randomness). Empty when the group lists no address.
std::string select_broker_addr(const remoting::BrokerData& broker);

// GET_BROKER_CLUSTER_INFO and GET_ROUTEINFO_BY_TOPIC from the NameServers
// (NotFound for a topic without a route).
void fetch_cluster_info(client::MQClientInstance& instance,
                        std::function<void(Result<client::api::ClusterInfo>)> done);
void fetch_topic_route(client::MQClientInstance& instance, const std::string& topic,
                       std::function<void(Result<remoting::TopicRouteData>)> done);

// Sends each (address, request) and calls done once with every answer, in
// the order of requests. An empty list answers at once (posted).
using Answers = std::vector<Result<RemotingCommand>>;
void fan_out(client::MQClientInstance& instance, std::vector<std::pair<std::string, RemotingCommand>> requests,
             std::function<void(Answers)> done);

}  // namespace mqlab::admin_cli
