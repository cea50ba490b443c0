// ResponseCode: the numbers a response's `code` carries, spelled as RocketMQ
// spells them (apache/rocketmq remoting/…/RemotingSysResponseCode.java for
// 0..4, common/…/common/protocol/ResponseCode.java for the rest).
//
// Plain int32 constants, like RequestCode: a response from a newer peer may
// carry a code we do not know and must still decode and log by number.
//
// What clients make of them matters more than the names: ali-ons treats 0, 10,
// 11 and 12 on a send as a stored message (no exception); retries the next
// broker on 1, 14, 16, 17, 204 and 205; throws at once on any other code
// (2 SYSTEM_BUSY, 13 MESSAGE_ILLEGAL); and reads 19/20/21 on a pull as
// "no new message", "nothing matched", "offset illegal" (reference 8.3, 8.4).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mqlab::remoting {

struct ResponseCode {
  static constexpr int32_t SUCCESS = 0;
  static constexpr int32_t SYSTEM_ERROR = 1;
  static constexpr int32_t SYSTEM_BUSY = 2;
  // Remark "request type N not supported", as Java brokers word it.
  static constexpr int32_t REQUEST_CODE_NOT_SUPPORTED = 3;
  static constexpr int32_t TRANSACTION_FAILED = 4;
  static constexpr int32_t FLUSH_DISK_TIMEOUT = 10;
  static constexpr int32_t SLAVE_NOT_AVAILABLE = 11;
  static constexpr int32_t FLUSH_SLAVE_TIMEOUT = 12;
  static constexpr int32_t MESSAGE_ILLEGAL = 13;
  static constexpr int32_t SERVICE_NOT_AVAILABLE = 14;
  static constexpr int32_t VERSION_NOT_SUPPORTED = 15;
  static constexpr int32_t NO_PERMISSION = 16;
  static constexpr int32_t TOPIC_NOT_EXIST = 17;
  static constexpr int32_t TOPIC_EXIST_ALREADY = 18;
  static constexpr int32_t PULL_NOT_FOUND = 19;
  static constexpr int32_t PULL_RETRY_IMMEDIATELY = 20;
  static constexpr int32_t PULL_OFFSET_MOVED = 21;
  static constexpr int32_t QUERY_NOT_FOUND = 22;
  static constexpr int32_t SUBSCRIPTION_PARSE_FAILED = 23;
  static constexpr int32_t SUBSCRIPTION_NOT_EXIST = 24;
  static constexpr int32_t SUBSCRIPTION_NOT_LATEST = 25;
  static constexpr int32_t SUBSCRIPTION_GROUP_NOT_EXIST = 26;
  static constexpr int32_t FILTER_DATA_NOT_EXIST = 27;
  static constexpr int32_t FILTER_DATA_NOT_LATEST = 28;
  static constexpr int32_t TRANSACTION_SHOULD_COMMIT = 200;
  static constexpr int32_t TRANSACTION_SHOULD_ROLLBACK = 201;
  static constexpr int32_t TRANSACTION_STATE_UNKNOW = 202;  // sic: RocketMQ's spelling
  static constexpr int32_t TRANSACTION_STATE_GROUP_WRONG = 203;
  static constexpr int32_t NO_BUYER_ID = 204;
  static constexpr int32_t NOT_IN_CURRENT_UNIT = 205;
  static constexpr int32_t CONSUMER_NOT_ONLINE = 206;
  static constexpr int32_t CONSUME_MSG_TIMEOUT = 207;
  static constexpr int32_t NO_MESSAGE = 208;
  static constexpr int32_t FLOW_CONTROL = 215;
};

// "TOPIC_NOT_EXIST" for 17; "UNKNOWN" for a code not listed above.
std::string_view response_code_name(int32_t code);
// "TOPIC_NOT_EXIST(17)", or "UNKNOWN(4242)": what a log line should show.
std::string describe_response_code(int32_t code);

}  // namespace mqlab::remoting
