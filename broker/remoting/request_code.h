// RequestCode: the numbers a RemotingCommand's `code` carries in a request,
// spelled as RocketMQ spells them (apache/rocketmq 4.9.x
// common/…/common/protocol/RequestCode.java), so a log line, a packet capture
// and RocketMQ's source grep together.
//
// They are plain int32 constants rather than an enum class because the wire
// carries any int: a request with a code we do not know must still decode,
// be logged by number and be answered REQUEST_CODE_NOT_SUPPORTED.
//
// Which side handles what: the NameServer serves 100..106, 205..224, 304,
// 311..313, 318/319, 322, 327; the broker serves the rest; 39, 40, 220, 221,
// 307 and 309 go from the broker to a client. ali-ons 3.12.0 sends only 11,
// 14, 15, 29, 30, 34, 35, 36, 38, 105 and 310 (reference section 8.4).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mqlab::remoting {

struct RequestCode {
  // --- broker: messages and offsets
  static constexpr int32_t SEND_MESSAGE = 10;
  static constexpr int32_t PULL_MESSAGE = 11;
  static constexpr int32_t QUERY_MESSAGE = 12;
  static constexpr int32_t QUERY_BROKER_OFFSET = 13;
  static constexpr int32_t QUERY_CONSUMER_OFFSET = 14;
  static constexpr int32_t UPDATE_CONSUMER_OFFSET = 15;
  static constexpr int32_t UPDATE_AND_CREATE_TOPIC = 17;
  static constexpr int32_t GET_ALL_TOPIC_CONFIG = 21;
  static constexpr int32_t GET_TOPIC_CONFIG_LIST = 22;
  static constexpr int32_t GET_TOPIC_NAME_LIST = 23;
  static constexpr int32_t UPDATE_BROKER_CONFIG = 25;
  static constexpr int32_t GET_BROKER_CONFIG = 26;
  static constexpr int32_t TRIGGER_DELETE_FILES = 27;
  static constexpr int32_t GET_BROKER_RUNTIME_INFO = 28;
  static constexpr int32_t SEARCH_OFFSET_BY_TIMESTAMP = 29;
  static constexpr int32_t GET_MAX_OFFSET = 30;
  static constexpr int32_t GET_MIN_OFFSET = 31;
  static constexpr int32_t GET_EARLIEST_MSG_STORETIME = 32;
  static constexpr int32_t VIEW_MESSAGE_BY_ID = 33;
  static constexpr int32_t HEART_BEAT = 34;
  static constexpr int32_t UNREGISTER_CLIENT = 35;
  static constexpr int32_t CONSUMER_SEND_MSG_BACK = 36;
  static constexpr int32_t END_TRANSACTION = 37;
  static constexpr int32_t GET_CONSUMER_LIST_BY_GROUP = 38;
  static constexpr int32_t CHECK_TRANSACTION_STATE = 39;
  static constexpr int32_t NOTIFY_CONSUMER_IDS_CHANGED = 40;
  static constexpr int32_t LOCK_BATCH_MQ = 41;
  static constexpr int32_t UNLOCK_BATCH_MQ = 42;
  static constexpr int32_t GET_ALL_CONSUMER_OFFSET = 43;
  static constexpr int32_t GET_ALL_DELAY_OFFSET = 45;
  static constexpr int32_t CHECK_CLIENT_CONFIG = 46;
  // --- ACL (4.4+)
  static constexpr int32_t UPDATE_AND_CREATE_ACL_CONFIG = 50;
  static constexpr int32_t DELETE_ACL_CONFIG = 51;
  static constexpr int32_t GET_BROKER_CLUSTER_ACL_INFO = 52;
  static constexpr int32_t UPDATE_GLOBAL_WHITE_ADDRS_CONFIG = 53;
  static constexpr int32_t GET_BROKER_CLUSTER_ACL_CONFIG = 54;
  // --- NameServer
  static constexpr int32_t PUT_KV_CONFIG = 100;
  static constexpr int32_t GET_KV_CONFIG = 101;
  static constexpr int32_t DELETE_KV_CONFIG = 102;
  static constexpr int32_t REGISTER_BROKER = 103;
  static constexpr int32_t UNREGISTER_BROKER = 104;
  static constexpr int32_t GET_ROUTEINFO_BY_TOPIC = 105;
  static constexpr int32_t GET_BROKER_CLUSTER_INFO = 106;
  // --- admin (mqadmin, the dashboard)
  static constexpr int32_t UPDATE_AND_CREATE_SUBSCRIPTIONGROUP = 200;
  static constexpr int32_t GET_ALL_SUBSCRIPTIONGROUP_CONFIG = 201;
  static constexpr int32_t GET_TOPIC_STATS_INFO = 202;
  static constexpr int32_t GET_CONSUMER_CONNECTION_LIST = 203;
  static constexpr int32_t GET_PRODUCER_CONNECTION_LIST = 204;
  static constexpr int32_t WIPE_WRITE_PERM_OF_BROKER = 205;
  static constexpr int32_t GET_ALL_TOPIC_LIST_FROM_NAMESERVER = 206;
  static constexpr int32_t DELETE_SUBSCRIPTIONGROUP = 207;
  static constexpr int32_t GET_CONSUME_STATS = 208;
  static constexpr int32_t SUSPEND_CONSUMER = 209;
  static constexpr int32_t RESUME_CONSUMER = 210;
  static constexpr int32_t RESET_CONSUMER_OFFSET_IN_CONSUMER = 211;
  static constexpr int32_t RESET_CONSUMER_OFFSET_IN_BROKER = 212;
  static constexpr int32_t ADJUST_CONSUMER_THREAD_POOL = 213;
  static constexpr int32_t WHO_CONSUME_THE_MESSAGE = 214;
  static constexpr int32_t DELETE_TOPIC_IN_BROKER = 215;
  static constexpr int32_t DELETE_TOPIC_IN_NAMESRV = 216;
  // ali-ons' name; RocketMQ 4.x leaves 217 unused and 5.x reuses it for
  // REGISTER_TOPIC_IN_NAMESRV. ali-ons' only caller is commented out.
  static constexpr int32_t GET_KV_CONFIG_BY_VALUE = 217;
  static constexpr int32_t GET_KVLIST_BY_NAMESPACE = 219;
  static constexpr int32_t RESET_CONSUMER_CLIENT_OFFSET = 220;
  static constexpr int32_t GET_CONSUMER_STATUS_FROM_CLIENT = 221;
  static constexpr int32_t INVOKE_BROKER_TO_RESET_OFFSET = 222;
  static constexpr int32_t INVOKE_BROKER_TO_GET_CONSUMER_STATUS = 223;
  static constexpr int32_t GET_TOPICS_BY_CLUSTER = 224;
  static constexpr int32_t QUERY_TOPIC_CONSUME_BY_WHO = 300;
  static constexpr int32_t REGISTER_FILTER_SERVER = 301;
  static constexpr int32_t REGISTER_MESSAGE_FILTER_CLASS = 302;
  static constexpr int32_t QUERY_CONSUME_TIME_SPAN = 303;
  static constexpr int32_t GET_SYSTEM_TOPIC_LIST_FROM_NS = 304;
  static constexpr int32_t GET_SYSTEM_TOPIC_LIST_FROM_BROKER = 305;
  static constexpr int32_t CLEAN_EXPIRED_CONSUMEQUEUE = 306;
  static constexpr int32_t GET_CONSUMER_RUNNING_INFO = 307;
  static constexpr int32_t QUERY_CORRECTION_OFFSET = 308;
  static constexpr int32_t CONSUME_MESSAGE_DIRECTLY = 309;
  static constexpr int32_t SEND_MESSAGE_V2 = 310;
  static constexpr int32_t GET_UNIT_TOPIC_LIST = 311;
  static constexpr int32_t GET_HAS_UNIT_SUB_TOPIC_LIST = 312;
  static constexpr int32_t GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST = 313;
  static constexpr int32_t CLONE_GROUP_OFFSET = 314;
  static constexpr int32_t VIEW_BROKER_STATS_DATA = 315;
  static constexpr int32_t CLEAN_UNUSED_TOPIC = 316;
  static constexpr int32_t GET_BROKER_CONSUME_STATS = 317;
  static constexpr int32_t UPDATE_NAMESRV_CONFIG = 318;
  static constexpr int32_t GET_NAMESRV_CONFIG = 319;
  static constexpr int32_t SEND_BATCH_MESSAGE = 320;
  static constexpr int32_t QUERY_CONSUME_QUEUE = 321;
  static constexpr int32_t QUERY_DATA_VERSION = 322;
  static constexpr int32_t RESUME_CHECK_HALF_MESSAGE = 323;
  static constexpr int32_t SEND_REPLY_MESSAGE = 324;
  static constexpr int32_t SEND_REPLY_MESSAGE_V2 = 325;
  static constexpr int32_t PUSH_REPLY_MESSAGE_TO_CLIENT = 326;
  static constexpr int32_t ADD_WRITE_PERM_OF_BROKER = 327;
  // 5.x only: a 5.x broker's heartbeat to a controller-mode NameServer. Named
  // so a 5.x peer's traffic shows up readably in our logs.
  static constexpr int32_t BROKER_HEARTBEAT = 904;
};

// "SEND_MESSAGE_V2" for 310; "UNKNOWN" for a code not listed above.
std::string_view request_code_name(int32_t code);
// "SEND_MESSAGE_V2(310)", or "UNKNOWN(4242)": what a log line should show.
std::string describe_request_code(int32_t code);

}  // namespace mqlab::remoting
