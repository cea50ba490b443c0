// The client's requests and the responses it reads, as RocketMQ spells them
// (MQClientAPIImpl.java and the common/…/protocol/header classes; reference
// sections 7.5-7.6). Pure functions over RemotingCommand: who sends what when
// is the business of the instance, producer, consumer and admin client.
//
// Every ext value goes out as a string, as Java writes it. A parse function
// reads a response whose transport succeeded: a response code other than the
// one expected becomes a Status naming the request, the code and the remark
// (NotFound for TOPIC_NOT_EXIST and QUERY_NOT_FOUND, Unavailable otherwise);
// a missing or malformed field is InvalidArgument. Nothing here asserts on a
// peer's bytes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/status.h"
#include "broker/remoting/pull_sys_flag.h"
#include "broker/remoting/remoting_command.h"
#include "broker/remoting/route_data.h"

namespace mqlab::client::api {

using remoting::RemotingCommand;

// Ok for SUCCESS; otherwise the Status described above, "<what>: <CODE(n)>: <remark>".
Status response_status(const RemotingCommand& response, std::string_view what);

// --- NameServer ---------------------------------------------------------------------

RemotingCommand build_get_route_info(const std::string& topic);
// NotFound for TOPIC_NOT_EXIST (the topic has no route yet).
Result<remoting::TopicRouteData> parse_route_info(const RemotingCommand& response, const std::string& topic);

// GET_BROKER_CLUSTER_INFO's body (ClusterInfo.java).
struct ClusterInfo {
  std::map<std::string, remoting::BrokerData> brokerAddrTable;      // brokerName -> addresses
  std::map<std::string, std::set<std::string>> clusterAddrTable;    // cluster -> brokerNames
  std::string to_json() const;
  static Result<ClusterInfo> parse(std::string_view text);
  bool operator==(const ClusterInfo&) const = default;
};
RemotingCommand build_get_broker_cluster_info();
Result<ClusterInfo> parse_broker_cluster_info(const RemotingCommand& response);

// --- producing ----------------------------------------------------------------------

// SendMessageRequestHeaderV2: the short names a..n of SEND_MESSAGE_V2.
// The names (a, b, c, n) are views: their text stays with its owners (a
// producer's config, its send's topic and chosen queue, which outlive every
// attempt of the send), not copied into four strings per send; the
// properties, built per send, are the header's own.
struct SendMessageRequestHeader {
  std::string_view producerGroup;                               // a
  std::string_view topic;                                       // b
  std::string_view defaultTopic;                                // c
  int32_t defaultTopicQueueNums = 4;                            // d
  int32_t queueId = 0;                                          // e
  int32_t sysFlag = 0;                                          // f
  int64_t bornTimestamp = 0;                                    // g
  int32_t flag = 0;                                             // h
  std::string properties;                                       // i
  int32_t reconsumeTimes = 0;                                   // j
  bool unitMode = false;                                        // k
  std::optional<int32_t> maxReconsumeTimes;                     // l (retry topics)
  bool batch = false;                                           // m
  std::string_view brokerName;                                  // n
};
RemotingCommand build_send_message_v2(const SendMessageRequestHeader& header, std::vector<uint8_t> body);
// The same request without its body, for RemotingClient::invoke's body
// argument: a producer keeps the body for its retries and frames it from there.
RemotingCommand build_send_message_v2_header(const SendMessageRequestHeader& header);
// Appends the JSON header of that request going out with opaque: byte for
// byte what remoting::append_json_header writes for
// build_send_message_v2_header(header) with that opaque, written straight
// from the struct (RemotingClient::invoke_written). Building the command
// and encoding it were 5.9K of a send's 22K client instructions
// (callgrind, mqadmin perf produce, 2026-12-03).
void append_send_message_v2_json_header(const SendMessageRequestHeader& header, int32_t opaque,
                                        std::vector<uint8_t>& out);

struct SendMessageResponseHeader {
  std::string_view msgId;  // the offset msgId: a view into the response read
  int32_t queueId = -1;
  int64_t queueOffset = -1;
};
// Reads what a stored response carries; fields that are missing keep their
// defaults (the message is stored either way). msgId views response: valid
// while it lives.
SendMessageResponseHeader read_send_message_response(const RemotingCommand& response);

// --- consuming ----------------------------------------------------------------------

using remoting::kPullFlagClassFilter;
using remoting::kPullFlagCommitOffset;
using remoting::kPullFlagSubscription;
using remoting::kPullFlagSuspend;

// Its text fields are views: a header describes one request and is written
// at once (build_pull_message, append_pull_message_json_header), so the text
// stays with its owners (a consumer's config, queue and subscription), not
// copied into four strings per pull.
struct PullMessageRequestHeader {
  std::string_view consumerGroup;
  std::string_view topic;
  int32_t queueId = 0;
  int64_t queueOffset = 0;
  int32_t maxMsgNums = 32;
  int32_t sysFlag = 0;
  int64_t commitOffset = 0;
  int64_t suspendTimeoutMillis = 15'000;
  std::string_view subscription;  // sent only with kPullFlagSubscription
  int64_t subVersion = 0;
  std::string_view expressionType = "TAG";
};
RemotingCommand build_pull_message(const PullMessageRequestHeader& header);
// Appends the JSON header of that request going out with opaque, byte for
// byte what remoting::append_json_header writes for build_pull_message(header)
// with that opaque, written straight from the struct
// (RemotingClient::invoke_written), as a producer writes its sends: a
// consumer sends one per message it is given, and building the command's
// eleven field strings was 2.2% of the simulator's instructions.
void append_pull_message_json_header(const PullMessageRequestHeader& header, int32_t opaque,
                                     std::vector<uint8_t>& out);

enum class PullStatus { FOUND, NO_NEW_MSG, NO_MATCHED_MSG, OFFSET_ILLEGAL };
std::string_view pull_status_name(PullStatus status);

struct PullResponse {
  PullStatus status = PullStatus::NO_NEW_MSG;
  int64_t nextBeginOffset = 0;
  int64_t minOffset = 0;
  int64_t maxOffset = 0;
  int64_t suggestWhichBrokerId = 0;
  std::vector<uint8_t> body;  // raw records when FOUND
};
// 0 FOUND, 19 NO_NEW_MSG, 20 NO_MATCHED_MSG, 21 OFFSET_ILLEGAL; any other code
// is an error. The four ext fields are required, as Java's @CFNotNull has them.
// Takes the response's body (an rvalue: a consumer's response is handed on,
// not moved into a parameter once more).
Result<PullResponse> parse_pull_message(RemotingCommand&& response);

RemotingCommand build_query_consumer_offset(const std::string& group, const std::string& topic, int32_t queue_id);
RemotingCommand build_update_consumer_offset(const std::string& group, const std::string& topic, int32_t queue_id,
                                             int64_t commit_offset);
RemotingCommand build_get_max_offset(const std::string& topic, int32_t queue_id);
RemotingCommand build_get_min_offset(const std::string& topic, int32_t queue_id);
RemotingCommand build_search_offset_by_timestamp(const std::string& topic, int32_t queue_id, int64_t timestamp_ms);
// The `offset` ext field of a SUCCESS response (QUERY_CONSUMER_OFFSET,
// GET_MAX/MIN_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP).
Result<int64_t> parse_offset(const RemotingCommand& response, std::string_view what);

RemotingCommand build_get_consumer_list_by_group(const std::string& group);
// {"consumerIdList":["ip@instance", ...]}
Result<std::vector<std::string>> parse_consumer_list(const RemotingCommand& response);
std::string consumer_list_body(const std::vector<std::string>& consumer_ids);

struct ConsumerSendMsgBackRequestHeader {
  int64_t offset = 0;  // the message's CommitLog offset
  std::string group;
  int32_t delayLevel = 0;  // 0: the broker picks 3 + reconsumeTimes
  std::string originMsgId;
  std::string originTopic;
  bool unitMode = false;
  int32_t maxReconsumeTimes = 16;
};
RemotingCommand build_consumer_send_msg_back(const ConsumerSendMsgBackRequestHeader& header);

// --- membership ---------------------------------------------------------------------

RemotingCommand build_heartbeat(const remoting::HeartbeatData& heartbeat);
// Empty groups are left out of the header, as Java's nulls are.
RemotingCommand build_unregister_client(const std::string& client_id, const std::string& producer_group,
                                        const std::string& consumer_group);

// --- administration -----------------------------------------------------------------

RemotingCommand build_update_and_create_topic(const remoting::TopicConfig& config);

}  // namespace mqlab::client::api
