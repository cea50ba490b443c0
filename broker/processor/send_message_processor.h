// SendMessageProcessor: SEND_MESSAGE (10) and SEND_MESSAGE_V2 (310), a
// producer storing one message (RocketMQ's SendMessageProcessor.sendMessage
// and AbstractSendMessageProcessor.msgCheck, 4.9.7).
//
// Request ext fields (V2 uses the short names; required ones marked *):
//   a producerGroup*  b topic*  c defaultTopic*  d defaultTopicQueueNums*
//   e queueId*  f sysFlag*  g bornTimestamp*  h flag*  i properties
//   j reconsumeTimes  k unitMode  l maxReconsumeTimes  m batch  n brokerName
// A missing or malformed required field is answered SYSTEM_ERROR with the
// field named as the client spelled it ("the custom field a is null").
//
// Checks, in RocketMQ's order: broker without WRITE refuses order topics
// (NO_PERMISSION); topic name valid (SYSTEM_ERROR) and not a system topic
// producers may not write (NO_PERMISSION); unknown topic auto-created from
// the defaultTopic template when it has INHERIT (TBW102 while
// autoCreateTopicEnable), or, for "%RETRY%" topics, created with one queue;
// else TOPIC_NOT_EXIST; queueId >= max(read, write queues) SYSTEM_ERROR;
// queueId < 0 picks a random write queue. For "%RETRY%group" topics the
// group must exist (SUBSCRIPTION_GROUP_NOT_EXIST) and a message with
// reconsumeTimes >= maxReconsumeTimes (the request's, else the group's
// retryMaxTimes) goes to "%DLQ%group" instead.
//
// Stored: the producer's properties plus CLUSTER=brokerClusterName; WAIT is
// passed to the store for the flush decision and not stored; BORNHOST from
// the connection (host_address.h); STOREHOST brokerIP1:listenPort.
// Transactional half messages (TRAN_MSG=true) are refused with NO_PERMISSION,
// as a RocketMQ broker with rejectTransactionMessage=true does: mqlab has no
// transaction service, and storing them as plain messages would deliver
// what the producer may yet roll back. A DELAY property is stored as given
// but the message is delivered at once (no scheduled delivery yet).
//
// Response: ext msgId (the offset msgId of the store host), queueId,
// queueOffset, MSG_REGION "DefaultRegion", TRACE_ON "true" whenever the
// message was stored (codes 0, 10, 11, 12); error codes per
// put_status_response for the rest. A store that refuses a write never
// yields SUCCESS.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "broker/common/lifetime.h"
#include "broker/common/name_order.h"
#include "broker/common/status.h"
#include "broker/meta/topic_config.h"
#include "broker/remoting/lineage_memo.h"
#include "broker/remoting/remoting_command.h"
#include "broker/remoting/remoting_server.h"
#include "broker/store/message_codec.h"
#include "broker/store/store_types.h"

namespace mqlab::broker {

class BrokerController;

// The text fields are views into the request's ext_fields, not copies (four
// string copies per send): valid while the request lives and is not changed.
struct SendMessageRequestHeader {
  std::string_view producerGroup;
  std::string_view topic;
  std::string_view defaultTopic;
  int32_t defaultTopicQueueNums = 0;
  int32_t queueId = 0;
  int32_t sysFlag = 0;
  int64_t bornTimestamp = 0;
  int32_t flag = 0;
  std::string_view properties;
  int32_t reconsumeTimes = 0;
  bool unitMode = false;
  std::optional<int32_t> maxReconsumeTimes;

  bool operator==(const SendMessageRequestHeader&) const = default;  // views by their text
};

// Reads SEND_MESSAGE's long names or SEND_MESSAGE_V2's short ones.
// InvalidArgument naming the field for a missing or malformed one.
Result<SendMessageRequestHeader> parse_send_message_header(const remoting::RemotingCommand& request);

// RocketMQ's code and remark for a put's outcome (reference 4.3): 0 / 10 /
// 11 / 12 for stored messages, 14 / 13 / 1 otherwise; the store's own
// remark is appended after the RocketMQ wording.
struct PutResponse {
  int32_t code = 0;
  std::string remark;
  bool stored = false;
};
PutResponse put_status_response(const store::PutMessageResult& result);

// RocketMQ's maxReconsumeTimes rule: the request's value when present and the
// sender is at least V3_4_9 (121), else the group's retryMaxTimes.
int32_t effective_max_reconsume_times(const remoting::RemotingCommand& request, std::optional<int32_t> from_request,
                                      int32_t group_retry_max_times);

// parse_send_message_header for the requests of many connections: a
// request that follows one read before in its lineage
// (remoting/lineage_memo.h) has only its changed values read, and its views
// set. The same header, or the same error, as the full read.
class SendMessageHeaderReader {
 public:
  // As parse_send_message_header; the views are into request.
  Result<SendMessageRequestHeader> read(const remoting::RemotingCommand& request);

 private:
  // What a lineage's last request read as (its views into that request,
  // set anew before use), whether it was SEND_MESSAGE_V2, and which field
  // each place of its table holds.
  struct Memo {
    SendMessageRequestHeader header;
    bool v2 = false;
    std::array<uint8_t, remoting::ExtFieldsLineage::kMaxFields> field_at{};  // a SendField
  };
  remoting::LineageMemo<Memo> memo_;
};

class SendMessageProcessor {
 public:
  explicit SendMessageProcessor(BrokerController& controller) : controller_(controller) {}

  // Takes the request's body: it moves into the stored message.
  void process(remoting::RemotingCommand& request, remoting::ResponseChannel channel);

 private:
  struct Refusal {
    int32_t code;
    std::string remark;
  };
  struct Destination {
    std::string topic;
    int32_t queue_id = 0;
  };
  // RocketMQ's msgCheck: the topic's permission, name and queue id, the
  // topic created when the broker may (autoCreateTopicEnable). On no
  // refusal, topic is the header's topic's config: process needs it next,
  // and a second lookup by name cost a map search a send.
  std::optional<Refusal> check_message(const SendMessageRequestHeader& header, const std::string& remote_address,
                                       const meta::TopicConfig*& topic);
  std::optional<Refusal> route_retry_and_dlq(const remoting::RemotingCommand& request,
                                             const SendMessageRequestHeader& header, Destination& destination);
  // Moves request.body into the message.
  store::MessageToStore build_message(remoting::RemotingCommand& request, const SendMessageRequestHeader& header,
                                      const Destination& destination, const std::string& remote_address);
  // Answers a put with its outcome.
  void reply_put(remoting::ResponseChannel channel, const store::PutMessageResult& result,
                 const Destination& destination);
  // born_host_of(remote_address), remembered: every send of a connection
  // has the same remote address, and parsing it was 1.4K instructions of a
  // put's ~40K. Lookup only (an ordered map: no order reaches anything),
  // by NameLess: std::less compared by a call to std::string's compare.
  const store::HostAddress& born_host(const std::string& remote_address);

  // Past this many remote addresses the cache starts over: connections come
  // and go, and a long-lived broker must not keep every address it saw.
  static constexpr size_t kMaxBornHosts = 4096;

  BrokerController& controller_;
  SendMessageHeaderReader header_reader_;
  std::map<std::string, store::HostAddress, NameLess> born_hosts_;
  // The last topic name that passed meta::validate_topic_name: a producer
  // sends to one topic over and over, and checking its every byte per
  // message was 130 instructions a put.
  std::string valid_topic_;
  LifetimeToken lifetime_;  // put completions that outlive us do nothing
};

}  // namespace mqlab::broker
