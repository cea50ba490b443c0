// Bad input to a broker (unreadable frames, missing or absurd fields, unknown codes, randomized requests) closes only
// its connection or gets an error naming the problem; raw attacker connections, then a good client's send + pull.
#include <gtest/gtest.h>

#include <map>
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "broker/client/message.h"
#include "broker/client/mq_client_api.h"
#include "broker/client/test/cluster_harness.h"
#include "broker/common/big_endian.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"
#include "broker/remoting/route_data.h"
#include "broker/store/message_codec.h"

namespace mqlab::broker::hostile_input_test {
namespace {

using client::testing::ClusterHarness;
using client::testing::RawConnection;
using remoting::RemotingCommand;
using remoting::RequestCode;
using remoting::ResponseCode;
using Bytes = std::vector<uint8_t>;

constexpr const char* kTopic = "T";
constexpr int32_t kQueues = 4;
constexpr int32_t kOpaque = 4242;
constexpr size_t kMaxFrameBytes = 16 * 1024 * 1024;

Bytes to_bytes(std::string_view text) { return Bytes(text.begin(), text.end()); }

// The 8 bytes in front of a header: totalLength and headerLengthEx, as given.
Bytes frame_prefix(uint32_t total_length, uint32_t header_length_field) {
  Bytes bytes(8);
  put_u32_be(bytes.data(), total_length);
  put_u32_be(bytes.data() + 4, header_length_field);
  return bytes;
}

// A frame around header text, lengths computed, serialize type as given.
Bytes frame_with_header(std::string_view header, std::string_view body = "", uint8_t serialize_type = 0) {
  Bytes frame = frame_prefix(static_cast<uint32_t>(4 + header.size() + body.size()),
                             (uint32_t{serialize_type} << 24) | static_cast<uint32_t>(header.size()));
  frame.insert(frame.end(), header.begin(), header.end());
  frame.insert(frame.end(), body.begin(), body.end());
  return frame;
}

// SEND_MESSAGE_V2 as the Java client builds it.
RemotingCommand send_request(const std::string& topic, int32_t queue_id, const std::string& body,
                             const std::string& key) {
  client::api::SendMessageRequestHeader header;
  header.producerGroup = "good-producer";
  header.topic = topic;
  header.defaultTopic = "TBW102";
  header.queueId = queue_id;
  header.bornTimestamp = 1'700'000'000'000;
  header.properties = store::encode_properties({{"KEYS", key}});
  return client::api::build_send_message_v2(header, to_bytes(body));
}

RemotingCommand pull_request(const std::string& topic, int32_t queue_id, int64_t offset) {
  client::api::PullMessageRequestHeader header;
  header.consumerGroup = "good-consumer";
  header.topic = topic;
  header.queueId = queue_id;
  header.queueOffset = offset;
  header.maxMsgNums = 1;
  header.sysFlag = client::api::kPullFlagSubscription;
  header.subscription = "*";
  return client::api::build_pull_message(header);
}

RemotingCommand without(RemotingCommand request, const std::string& field) {
  EXPECT_EQ(request.ext_fields.erase(field), 1u) << field;
  return request;
}

RemotingCommand with(RemotingCommand request, const std::string& field, const std::string& value) {
  request.ext_fields.insert_or_assign(field, value);
  return request;
}

RemotingCommand request_of(int32_t code, remoting::ExtFields ext, std::string body = "") {
  RemotingCommand request = RemotingCommand::make_request(code, std::move(ext));
  request.body = to_bytes(body);
  return request;
}

class BrokerHostileInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(cluster_.start());
    ASSERT_NO_FATAL_FAILURE(cluster_.create_topic(kTopic, kQueues));
    attacker_ = &cluster_.add_bare_process("attacker", "10.0.1.66");
    ASSERT_NO_FATAL_FAILURE(expect_still_serving());
  }

  std::string broker_address() const { return cluster_.broker_spec(0).address(); }
  remoting::RemotingServer& server() { return cluster_.broker(0).remoting_server(); }
  std::unique_ptr<RawConnection> connect() { return cluster_.connect_raw(*attacker_, broker_address()); }

  // A well-behaved client on its own connection: the route of T, a send to
  // broker-a and a pull of what it stored.
  void expect_still_serving() {
    ++probes_;
    const RemotingCommand route = cluster_.must_call(client::testing::kNamesrvAddr, client::api::build_get_route_info(kTopic));
    const Result<remoting::TopicRouteData> parsed = client::api::parse_route_info(route, kTopic);
    ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
    EXPECT_EQ(parsed->queueDatas.size(), 2u);

    const int32_t queue_id = probes_ % kQueues;
    const std::string body = "probe " + std::to_string(probes_);
    const RemotingCommand sent =
        cluster_.must_call(broker_address(), send_request(kTopic, queue_id, body, "probe-" + std::to_string(probes_)));
    ASSERT_EQ(sent.code, ResponseCode::SUCCESS) << sent.remark;
    const client::api::SendMessageResponseHeader stored = client::api::read_send_message_response(sent);
    EXPECT_EQ(stored.queueId, queue_id);

    const RemotingCommand pulled = cluster_.must_call(broker_address(), pull_request(kTopic, queue_id, stored.queueOffset));
    ASSERT_EQ(pulled.code, ResponseCode::SUCCESS) << pulled.remark;
    const client::PulledMessages messages = client::decode_pulled_messages(pulled.body);
    ASSERT_TRUE(messages.error.ok()) << messages.error.to_string();
    ASSERT_EQ(messages.messages.size(), 1u);
    EXPECT_EQ(messages.messages[0].body_text(), body);
    EXPECT_EQ(messages.messages[0].queueOffset, stored.queueOffset);
  }

  // Sends request (opaque kOpaque) on a fresh raw connection and returns the
  // answer; then proves the connection still works with GET_MAX_OFFSET.
  RemotingCommand answer_on_kept_connection(RemotingCommand request) {
    const std::unique_ptr<RawConnection> raw = connect();
    request.opaque = kOpaque;
    raw->send(request);
    EXPECT_TRUE(cluster_.run_until([&] { return !raw->responses().empty() || raw->closed_by_server(); }, seconds(5)));
    RemotingCommand follow_up = request_of(RequestCode::GET_MAX_OFFSET, {{"topic", kTopic}, {"queueId", "0"}});
    follow_up.opaque = kOpaque + 1;
    raw->send(follow_up);
    EXPECT_TRUE(cluster_.run_until([&] { return raw->responses().size() >= 2 || raw->closed_by_server(); }, seconds(5)));
    EXPECT_FALSE(raw->closed_by_server()) << raw->close_reason().to_string();
    const std::vector<RemotingCommand> responses = raw->responses();
    if (responses.size() != 2) {
      ADD_FAILURE() << responses.size() << " responses on the raw connection";
      return RemotingCommand{};
    }
    EXPECT_EQ(responses[0].opaque, kOpaque);
    EXPECT_TRUE(responses[0].is_response());
    EXPECT_EQ(responses[1].opaque, kOpaque + 1);
    EXPECT_EQ(responses[1].code, ResponseCode::SUCCESS) << responses[1].remark;
    return responses[0];
  }

  // Feeds bytes on a fresh connection and expects the broker to close it, and only it.
  void expect_closed_for(const Bytes& bytes) {
    const size_t connections = server().connection_count();
    const uint64_t closed_before = server().stats().connections_closed_for_bad_input;
    const std::unique_ptr<RawConnection> raw = connect();
    ASSERT_TRUE(cluster_.run_until([&] { return server().connection_count() == connections + 1; }, seconds(1)));
    raw->send(bytes);
    ASSERT_TRUE(cluster_.run_until([&] { return raw->closed_by_server(); }, seconds(5)));
    EXPECT_EQ(raw->close_reason().code(), StatusCode::kUnavailable) << raw->close_reason().to_string();
    EXPECT_EQ(raw->received_bytes(), 0u);
    EXPECT_EQ(server().stats().connections_closed_for_bad_input, closed_before + 1);
    EXPECT_EQ(server().connection_count(), connections);
  }

  ClusterHarness cluster_;
  sim::SimEnv* attacker_ = nullptr;
  int probes_ = 0;
};

// --- frames that cannot be read -------------------------------------------------------

struct BadFrame {
  std::string name;
  Bytes bytes;
};

void PrintTo(const BadFrame& frame, std::ostream* out) { *out << frame.name; }

std::vector<BadFrame> bad_frames() {
  return {
      {"oversized_frame", frame_prefix(kMaxFrameBytes + 1, 10)},
      {"one_byte_over_the_limit", frame_prefix(kMaxFrameBytes - 4 + 1, 10)},
      {"negative_length", frame_prefix(0xFFFFFFFF, 0)},
      {"length_below_the_header_length_field", frame_prefix(2, 0)},
      {"header_length_larger_than_the_frame", frame_prefix(4 + 10, 100)},
      {"http_request", to_bytes("GET / HTTP/1.1\r\nHost: broker\r\n\r\n")},
      {"invalid_json_header", frame_with_header(R"({"code":10,"extFields":{"b":)")},
      {"json_header_not_an_object", frame_with_header("[310, 10]")},
      {"json_header_without_code", frame_with_header(R"({"opaque":1,"flag":0})")},
      {"json_code_of_the_wrong_type", frame_with_header(R"({"code":"SEND_MESSAGE"})")},
      {"json_ext_field_an_object", frame_with_header(R"({"code":310,"extFields":{"b":{"x":1}}})")},
      {"unknown_serialize_type", frame_with_header(R"({"code":310})", "", 9)},
      {"rocketmq_header_too_short", frame_with_header(std::string("\x00\x0a\x00", 3), "", 1)},
  };
}

class BrokerBadFrameTest : public BrokerHostileInputTest, public ::testing::WithParamInterface<BadFrame> {};

TEST_P(BrokerBadFrameTest, ClosesOnlyThatConnectionAndKeepsServing) {
  ASSERT_NO_FATAL_FAILURE(expect_closed_for(GetParam().bytes));
  expect_still_serving();
}

INSTANTIATE_TEST_SUITE_P(Frames, BrokerBadFrameTest, ::testing::ValuesIn(bad_frames()),
                         [](const ::testing::TestParamInfo<BadFrame>& info) { return info.param.name; });

TEST_F(BrokerHostileInputTest, RandomGarbageNeverCrashesIt) {
  env::Random random(0x6a7ba6e);
  const size_t connections = server().connection_count();
  for (int round = 0; round < 100; ++round) {
    Bytes garbage(1 + random.uniform(4096));
    for (uint8_t& byte : garbage) byte = static_cast<uint8_t>(random.uniform(256));
    if (round % 2 == 1) {
      // A plausible prefix in front, so the garbage reaches the header decoders.
      const uint32_t header_length = static_cast<uint32_t>(garbage.size());
      const uint8_t serialize_type = static_cast<uint8_t>(round % 4 == 1 ? 0 : 1);
      Bytes framed = frame_prefix(4 + header_length, (uint32_t{serialize_type} << 24) | header_length);
      framed.insert(framed.end(), garbage.begin(), garbage.end());
      garbage = std::move(framed);
    }
    const std::unique_ptr<RawConnection> raw = connect();
    raw->send(garbage);
    cluster_.run_for(millis(10));
    raw->close();  // if the broker is still waiting for the rest of a "frame"
  }
  ASSERT_TRUE(cluster_.run_until([&] { return server().connection_count() == connections; }, seconds(1)));
  EXPECT_GT(server().stats().connections_closed_for_bad_input, 90u);
  expect_still_serving();
}

TEST_F(BrokerHostileInputTest, HalfFrameThenCloseIsDroppedQuietly) {
  const uint64_t requests = server().stats().requests;
  const size_t connections = server().connection_count();
  for (const Bytes& frame : {remoting::encode_frame(send_request(kTopic, 0, "torn", "torn")),
                             remoting::encode_frame(pull_request(kTopic, 0, 0))}) {
    for (const size_t cut : {size_t{3}, size_t{8}, frame.size() / 2, frame.size() - 1}) {
      const std::unique_ptr<RawConnection> raw = connect();
      raw->send(Bytes(frame.begin(), frame.begin() + static_cast<ptrdiff_t>(cut)));
      cluster_.run_for(millis(5));
      raw->close();
      ASSERT_TRUE(cluster_.run_until([&] { return server().connection_count() == connections; }, seconds(1)));
    }
  }
  EXPECT_EQ(server().stats().requests, requests);  // no torn request reached a processor
  EXPECT_EQ(server().stats().connections_closed_for_bad_input, 0u);
  expect_still_serving();
  // The probes use queues 1..3; the torn SENDs were for queue 0.
  EXPECT_EQ(cluster_.broker(0).message_store().max_offset_in_queue(kTopic, 0).value(), 0) << "a torn SEND was stored";
}

// --- requests the broker can read but not serve ------------------------------------------

struct BadRequest {
  std::string name;
  RemotingCommand request;
  int32_t code;
  std::string remark;  // a part of the expected remark
};

void PrintTo(const BadRequest& request, std::ostream* out) { *out << request.name; }

std::vector<BadRequest> bad_requests() {
  const RemotingCommand send = send_request(kTopic, 0, "x", "k");
  const RemotingCommand pull = pull_request(kTopic, 0, 0);
  const RemotingCommand offset_query =
      request_of(RequestCode::QUERY_CONSUMER_OFFSET, {{"consumerGroup", "G"}, {"topic", kTopic}, {"queueId", "0"}});
  const RemotingCommand offset_update = request_of(
      RequestCode::UPDATE_CONSUMER_OFFSET, {{"consumerGroup", "G"}, {"topic", kTopic}, {"queueId", "0"}, {"commitOffset", "1"}});
  const RemotingCommand send_back = request_of(RequestCode::CONSUMER_SEND_MSG_BACK,
                                               {{"offset", "0"}, {"group", "G"}, {"delayLevel", "0"}, {"maxReconsumeTimes", "2"}});
  const RemotingCommand query = request_of(RequestCode::QUERY_MESSAGE, {{"topic", kTopic},
                                                                         {"key", "k"},
                                                                         {"maxNum", "32"},
                                                                         {"beginTimestamp", "0"},
                                                                         {"endTimestamp", "9999999999999"}});
  const int32_t system_error = ResponseCode::SYSTEM_ERROR;
  const auto missing = [](const char* field) { return std::string("the custom field <") + field + "> is null"; };
  return {
      // Required fields missing: SYSTEM_ERROR naming the field.
      {"send_v2_without_topic", without(send, "b"), system_error, missing("b")},
      {"send_v2_without_producer_group", without(send, "a"), system_error, missing("a")},
      {"send_v2_without_queue_id", without(send, "e"), system_error, missing("e")},
      {"send_v1_without_topic",
       request_of(RequestCode::SEND_MESSAGE, {{"producerGroup", "PG"}, {"defaultTopic", "TBW102"}}), system_error,
       missing("topic")},
      {"pull_without_queue_offset", without(pull, "queueOffset"), system_error, missing("queueOffset")},
      {"pull_without_consumer_group", without(pull, "consumerGroup"), system_error, missing("consumerGroup")},
      {"query_offset_without_queue_id", without(offset_query, "queueId"), system_error, missing("queueId")},
      {"query_offset_without_topic", without(offset_query, "topic"), system_error, missing("topic")},
      {"update_offset_without_commit_offset", without(offset_update, "commitOffset"), system_error,
       missing("commitOffset")},
      {"send_back_without_group", without(send_back, "group"), system_error, missing("group")},
      {"query_message_without_key", without(query, "key"), system_error, missing("key")},
      {"view_by_id_without_offset", request_of(RequestCode::VIEW_MESSAGE_BY_ID, {}), system_error, missing("offset")},
      {"unregister_without_client_id", request_of(RequestCode::UNREGISTER_CLIENT, {{"consumerGroup", "G"}}),
       system_error, missing("clientID")},
      {"consumer_list_without_group", request_of(RequestCode::GET_CONSUMER_LIST_BY_GROUP, {}), system_error,
       missing("consumerGroup")},
      {"max_offset_without_topic", request_of(RequestCode::GET_MAX_OFFSET, {{"queueId", "0"}}), system_error,
       missing("topic")},
      {"create_topic_without_perm",
       request_of(RequestCode::UPDATE_AND_CREATE_TOPIC,
                  {{"topic", "X"}, {"readQueueNums", "1"}, {"writeQueueNums", "1"}, {"topicFilterType", "SINGLE_TAG"}}),
       system_error, missing("perm")},
      // Fields that do not parse: SYSTEM_ERROR naming the field.
      {"send_v2_queue_id_not_a_number", with(send, "e", "zero"), system_error, "<e>"},
      {"pull_queue_id_too_big_for_an_int", with(pull, "queueId", "4294967296"), system_error, "<queueId>"},
      {"pull_max_msg_nums_not_a_number", with(pull, "maxMsgNums", "lots"), system_error, "<maxMsgNums>"},
      {"heartbeat_body_not_json", request_of(RequestCode::HEART_BEAT, {}, "{clientID: oops"), system_error, ""},
      {"heartbeat_without_client_id", request_of(RequestCode::HEART_BEAT, {}, R"({"consumerDataSet":[]})"),
       system_error, "clientID"},
      // Values that parse but make no sense.
      {"send_to_a_queue_the_topic_lacks", with(send, "e", "99"), system_error, "queueId[99] is illegal"},
      {"send_to_an_invalid_topic_name", with(send, "b", "no spaces allowed"), system_error, ""},
      {"send_to_a_system_topic", with(send, "b", "SCHEDULE_TOPIC_XXXX"), ResponseCode::NO_PERMISSION, "forbidden"},
      {"pull_a_queue_the_topic_lacks", with(pull, "queueId", "99"), system_error, "queueId[99] is illegal"},
      {"pull_a_negative_queue", with(pull, "queueId", "-1"), system_error, "queueId[-1] is illegal"},
      {"pull_an_unknown_topic", with(pull, "topic", "NoSuchTopic"), ResponseCode::TOPIC_NOT_EXIST, "not exist"},
      {"pull_with_a_bad_subscription", with(pull, "subscription", "||"), ResponseCode::SUBSCRIPTION_PARSE_FAILED, ""},
      {"pull_without_a_registered_subscription", with(without(pull, "subscription"), "sysFlag", "0"), ResponseCode::SUBSCRIPTION_NOT_EXIST,
       ""},
      {"update_offset_of_a_negative_queue", with(offset_update, "queueId", "-3"), system_error, "negative"},
      {"view_by_id_negative_offset", request_of(RequestCode::VIEW_MESSAGE_BY_ID, {{"offset", "-1"}}), system_error,
       "can not find message by the offset, -1"},
      {"view_by_id_inside_a_record", request_of(RequestCode::VIEW_MESSAGE_BY_ID, {{"offset", "5"}}), system_error,
       "can not find message by the offset, 5"},
      {"view_by_id_far_past_the_end", request_of(RequestCode::VIEW_MESSAGE_BY_ID, {{"offset", "4611686018427387904"}}),
       system_error, "can not find message"},
      {"send_back_of_an_offset_inside_a_record", with(send_back, "offset", "7"), system_error,
       "look message by offset failed, 7"},
      {"send_back_of_a_negative_offset", with(send_back, "offset", "-100"), system_error, "look message by offset failed"},
      {"create_topic_with_negative_queues",
       request_of(RequestCode::UPDATE_AND_CREATE_TOPIC, {{"topic", "X"},
                                                         {"readQueueNums", "-1"},
                                                         {"writeQueueNums", "-1"},
                                                         {"perm", "6"},
                                                         {"topicFilterType", "SINGLE_TAG"}}),
       system_error, ""},
      {"send_with_properties_over_32k", with(send, "i", "KEYS\x01" + std::string(40'000, 'k') + "\x02"),
       ResponseCode::MESSAGE_ILLEGAL, "properties"},
      {"send_to_a_topic_name_of_300_chars", with(send, "b", std::string(300, 't')), system_error, ""},
      {"send_back_for_an_invalid_group_name", with(send_back, "group", "no spaces allowed"),
       ResponseCode::SUBSCRIPTION_GROUP_NOT_EXIST, "no spaces allowed"},
      // Extreme but well-formed values: answered like any other.
      {"pull_from_the_far_future", with(with(with(pull, "queueId", "1"), "queueOffset", "9223372036854775807"), "maxMsgNums", "2147483647"),
       ResponseCode::PULL_OFFSET_MOVED, "OFFSET_OVERFLOW_BADLY"},
      {"pull_from_a_negative_offset", with(with(pull, "queueId", "1"), "queueOffset", "-9223372036854775808"), ResponseCode::PULL_OFFSET_MOVED,
       "OFFSET_TOO_SMALL"},
      {"query_message_ending_before_it_begins", with(with(query, "beginTimestamp", "9999999999999"), "endTimestamp", "0"),
       ResponseCode::QUERY_NOT_FOUND, "can not find message"},
      {"search_offset_by_the_smallest_timestamp",
       request_of(RequestCode::SEARCH_OFFSET_BY_TIMESTAMP,
                  {{"topic", kTopic}, {"queueId", "1"}, {"timestamp", "-9223372036854775808"}}),
       ResponseCode::SUCCESS, ""},
      {"earliest_store_time_of_an_unknown_queue",
       request_of(RequestCode::GET_EARLIEST_MSG_STORETIME, {{"topic", "NoSuchTopic"}, {"queueId", "-5"}}),
       ResponseCode::SUCCESS, ""},
      // Unknown codes, and a NameServer's code sent to a broker.
      {"unknown_code", request_of(9999, {}), ResponseCode::REQUEST_CODE_NOT_SUPPORTED, "request type 9999 not supported"},
      {"negative_code", request_of(-7, {}), ResponseCode::REQUEST_CODE_NOT_SUPPORTED, "request type -7 not supported"},
      {"namesrv_code_to_a_broker", request_of(RequestCode::GET_ROUTEINFO_BY_TOPIC, {{"topic", kTopic}}),
       ResponseCode::REQUEST_CODE_NOT_SUPPORTED, "request type 105 not supported"},
  };
}

class BrokerBadRequestTest : public BrokerHostileInputTest, public ::testing::WithParamInterface<BadRequest> {};

TEST_P(BrokerBadRequestTest, ErrorResponseOnAConnectionThatStaysOpen) {
  const BadRequest& bad = GetParam();
  const uint64_t closed_before = server().stats().connections_closed_for_bad_input;
  const RemotingCommand response = answer_on_kept_connection(bad.request);
  EXPECT_EQ(response.code, bad.code) << response.remark;
  if (!bad.remark.empty()) {
    EXPECT_NE(response.remark.find(bad.remark), std::string::npos) << response.remark;
  }
  if (response.code != ResponseCode::SUCCESS) {
    EXPECT_FALSE(response.remark.empty()) << "an error response should say why";
  }
  EXPECT_EQ(server().stats().connections_closed_for_bad_input, closed_before);
  expect_still_serving();
}

INSTANTIATE_TEST_SUITE_P(Requests, BrokerBadRequestTest, ::testing::ValuesIn(bad_requests()),
                         [](const ::testing::TestParamInfo<BadRequest>& info) { return info.param.name; });

TEST_F(BrokerHostileInputTest, OversizedBodyIsRefusedAsIllegal) {
  const RemotingCommand response = answer_on_kept_connection(
      send_request(kTopic, 0, std::string(cluster_.broker(0).store_config().maxMessageSize + 1, 'x'), "big"));
  EXPECT_EQ(response.code, ResponseCode::MESSAGE_ILLEGAL) << response.remark;
  EXPECT_EQ(cluster_.broker(0).message_store().max_offset_in_queue(kTopic, 0).value(), 0);
  expect_still_serving();
}

// More keys in one message than an index file has entries: stored, and every key still found.
TEST_F(BrokerHostileInputTest, MessageWithMoreKeysThanAnIndexFileHolds) {
  const int32_t keys = cluster_.broker(0).store_config().maxIndexNum + 500;
  std::string all_keys;
  for (int32_t i = 0; i < keys; ++i) all_keys += (i == 0 ? "" : " ") + std::to_string(i);
  ASSERT_LT(all_keys.size(), 32'000u);
  RemotingCommand request = send_request(kTopic, 2, "many keys", "");
  request.ext_fields.insert_or_assign("i", store::encode_properties({{"KEYS", all_keys}}));
  const RemotingCommand stored = answer_on_kept_connection(std::move(request));
  ASSERT_EQ(stored.code, ResponseCode::SUCCESS) << stored.remark;
  cluster_.run_for(seconds(1));  // the index is built behind the acknowledgement
  for (const int32_t key : {0, keys / 2, keys - 1}) {
    const RemotingCommand found = cluster_.must_call(
        broker_address(), request_of(RequestCode::QUERY_MESSAGE, {{"topic", kTopic},
                                                                   {"key", std::to_string(key)},
                                                                   {"maxNum", "32"},
                                                                   {"beginTimestamp", "0"},
                                                                   {"endTimestamp", "9999999999999"}}));
    EXPECT_EQ(found.code, ResponseCode::SUCCESS) << "key " << key << ": " << found.remark;
  }
  expect_still_serving();
}

TEST_F(BrokerHostileInputTest, ResponsesAndOnewaysGetNoAnswerButTheConnectionStays) {
  const std::unique_ptr<RawConnection> raw = connect();
  RemotingCommand stray_response = request_of(RequestCode::SEND_MESSAGE_V2, {});
  stray_response.opaque = 1;
  stray_response.mark_response();  // nobody asked the client anything
  raw->send(stray_response);
  RemotingCommand oneway_without_fields = request_of(RequestCode::PULL_MESSAGE, {});
  oneway_without_fields.opaque = 2;
  oneway_without_fields.mark_oneway();  // an error, but the client asked for no answer
  raw->send(oneway_without_fields);
  RemotingCommand asked = request_of(RequestCode::GET_MAX_OFFSET, {{"topic", kTopic}, {"queueId", "0"}});
  asked.opaque = 3;
  raw->send(asked);
  ASSERT_TRUE(cluster_.run_until([&] { return !raw->responses().empty(); }, seconds(5)));
  cluster_.run_for(millis(100));
  const std::vector<RemotingCommand> responses = raw->responses();
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].opaque, 3);
  EXPECT_EQ(responses[0].code, ResponseCode::SUCCESS);
  EXPECT_FALSE(raw->closed_by_server());
  expect_still_serving();
}

TEST_F(BrokerHostileInputTest, ManyBadRequestsOnOneConnectionAreEachAnswered) {
  const std::unique_ptr<RawConnection> raw = connect();
  Bytes stream;
  std::vector<BadRequest> all = bad_requests();
  for (size_t i = 0; i < all.size(); ++i) {
    all[i].request.opaque = static_cast<int32_t>(1000 + i);
    const Bytes frame = remoting::encode_frame(all[i].request);
    stream.insert(stream.end(), frame.begin(), frame.end());
  }
  raw->send(stream);  // back to back, in one write
  ASSERT_TRUE(cluster_.run_until([&] { return raw->responses().size() == all.size(); }, seconds(10)))
      << raw->responses().size() << " of " << all.size() << " answered";
  std::map<int32_t, int32_t> code_by_opaque;
  for (const RemotingCommand& response : raw->responses()) code_by_opaque[response.opaque] = response.code;
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(code_by_opaque[static_cast<int32_t>(1000 + i)], all[i].code) << all[i].name;
  }
  EXPECT_FALSE(raw->closed_by_server());
  expect_still_serving();
}

// extFields values of the wrong JSON type (numbers, booleans, floats where
// Java sends strings): read as their text, as fastjson reads them, then
// checked like any value; the answer is an error naming the field, on a
// connection that stays open.
TEST_F(BrokerHostileInputTest, ExtFieldsOfTheWrongJsonTypeAreAnsweredNotFatal) {
  const std::unique_ptr<RawConnection> raw = connect();
  const std::string ext = R"("consumerGroup":"G","topic":")" + std::string(kTopic) +
                          R"(","queueOffset":0,"maxMsgNums":1,"sysFlag":4,"commitOffset":0,)"
                          R"("suspendTimeoutMillis":0,"subscription":"*","subVersion":0)";
  const std::vector<std::pair<std::string, std::string>> queue_ids = {
      {"a boolean", "true"}, {"a float", "1.5"}, {"a huge number", "1e300"}, {"null", "null"}};
  for (size_t i = 0; i < queue_ids.size(); ++i) {
    raw->send(frame_with_header(R"({"code":11,"opaque":)" + std::to_string(100 + i) + R"(,"flag":0,"extFields":{)" +
                                ext + R"(,"queueId":)" + queue_ids[i].second + "}}"));
  }
  // A number where a string is expected is read as its text: a valid queue id.
  raw->send(frame_with_header(R"({"code":11,"opaque":200,"flag":0,"extFields":{)" + ext + R"(,"queueId":0}})"));
  ASSERT_TRUE(cluster_.run_until([&] { return raw->responses().size() == queue_ids.size() + 1; }, seconds(5)))
      << raw->responses().size() << " answered";
  for (const RemotingCommand& response : raw->responses()) {
    if (response.opaque == 200) {
      EXPECT_NE(response.code, ResponseCode::SYSTEM_ERROR) << response.remark;
      continue;
    }
    const std::string& kind = queue_ids[static_cast<size_t>(response.opaque - 100)].first;
    EXPECT_EQ(response.code, ResponseCode::SYSTEM_ERROR) << kind;
    EXPECT_NE(response.remark.find("queueId"), std::string::npos) << kind << ": " << response.remark;
  }
  EXPECT_FALSE(raw->closed_by_server());
  expect_still_serving();
}

// --- requests made of the right names with wrong values ----------------------------------

// A heartbeat a consumer of group G might send, with what the fuzzer picked
// for its subscription expression.
std::string heartbeat_body(const std::string& client_id, const std::string& expression) {
  remoting::HeartbeatData data;
  data.clientID = client_id;
  remoting::ConsumerData consumer;
  consumer.groupName = "G";
  consumer.consumeType = "CONSUME_PASSIVELY";
  consumer.messageModel = "CLUSTERING";
  consumer.consumeFromWhere = "CONSUME_FROM_LAST_OFFSET";
  remoting::SubscriptionData subscription;
  subscription.topic = kTopic;
  subscription.subString = expression;
  consumer.subscriptionDataSet.push_back(subscription);
  data.consumerDataSet.push_back(consumer);
  data.producerDataSet.push_back({"PG"});
  return data.to_json();
}

// Every request code the broker serves, each with every field it reads set
// to a sensible value; the fuzzer then drops and replaces values.
std::vector<RemotingCommand> request_templates() {
  const RemotingCommand send = send_request(kTopic, 0, "fuzz", "fuzz");
  RemotingCommand send_v1 = request_of(RequestCode::SEND_MESSAGE, {});
  for (const auto& [v2, v1] : std::vector<std::pair<std::string, std::string>>{
           {"a", "producerGroup"}, {"b", "topic"}, {"c", "defaultTopic"}, {"d", "defaultTopicQueueNums"},
           {"e", "queueId"}, {"f", "sysFlag"}, {"g", "bornTimestamp"}, {"h", "flag"}, {"i", "properties"},
           {"j", "reconsumeTimes"}, {"k", "unitMode"}}) {
    if (const std::string_view* value = send.find_ext(v2)) send_v1.ext_fields.insert_or_assign(v1, *value);
  }
  send_v1.body = send.body;
  RemotingCommand pull = pull_request(kTopic, 1, 0);
  pull.ext_fields.insert_or_assign("commitOffset", "0");
  const remoting::ExtFields queue{{"topic", kTopic}, {"queueId", "1"}};
  remoting::ExtFields with_group = queue;
  with_group.insert_or_assign("consumerGroup", "G");
  remoting::ExtFields update = with_group;
  update.insert_or_assign("commitOffset", "1");
  remoting::ExtFields by_time = queue;
  by_time.insert_or_assign("timestamp", "1700000000000");
  return {
      send,
      send_v1,
      pull,
      request_of(RequestCode::QUERY_CONSUMER_OFFSET, with_group),
      request_of(RequestCode::UPDATE_CONSUMER_OFFSET, update),
      request_of(RequestCode::CONSUMER_SEND_MSG_BACK, {{"offset", "0"},
                                                       {"group", "G"},
                                                       {"delayLevel", "0"},
                                                       {"originMsgId", "X"},
                                                       {"originTopic", kTopic},
                                                       {"unitMode", "false"},
                                                       {"maxReconsumeTimes", "2"}}),
      request_of(RequestCode::QUERY_MESSAGE, {{"topic", kTopic},
                                              {"key", "probe-1"},
                                              {"maxNum", "32"},
                                              {"beginTimestamp", "0"},
                                              {"endTimestamp", "9999999999999"},
                                              {"_UNIQUE_KEY_QUERY", "false"}}),
      request_of(RequestCode::VIEW_MESSAGE_BY_ID, {{"offset", "0"}}),
      request_of(RequestCode::GET_MAX_OFFSET, queue),
      request_of(RequestCode::GET_MIN_OFFSET, queue),
      request_of(RequestCode::SEARCH_OFFSET_BY_TIMESTAMP, by_time),
      request_of(RequestCode::GET_EARLIEST_MSG_STORETIME, queue),
      request_of(RequestCode::UPDATE_AND_CREATE_TOPIC, {{"topic", "Fuzzed"},
                                                        {"readQueueNums", "2"},
                                                        {"writeQueueNums", "2"},
                                                        {"perm", "6"},
                                                        {"topicFilterType", "SINGLE_TAG"},
                                                        {"topicSysFlag", "0"},
                                                        {"order", "false"}}),
      request_of(RequestCode::GET_ALL_TOPIC_CONFIG, {}),
      request_of(RequestCode::GET_ALL_CONSUMER_OFFSET, {}),
      request_of(RequestCode::GET_ALL_SUBSCRIPTIONGROUP_CONFIG, {}),
      request_of(RequestCode::GET_BROKER_RUNTIME_INFO, {}),
      request_of(RequestCode::GET_TOPIC_STATS_INFO, {{"topic", kTopic}}),
      request_of(RequestCode::GET_CONSUME_STATS, {{"consumerGroup", "G"}, {"topic", kTopic}}),
      request_of(RequestCode::HEART_BEAT, {}, heartbeat_body("10.0.1.66@fuzz", "*")),
      request_of(RequestCode::UNREGISTER_CLIENT, {{"clientID", "10.0.1.66@fuzz"}, {"consumerGroup", "G"}}),
      request_of(RequestCode::GET_CONSUMER_LIST_BY_GROUP, {{"consumerGroup", "G"}}),
  };
}

// Values a careless or hostile client might put in any field.
const std::vector<std::string>& fuzz_values() {
  static const std::vector<std::string> values = {
      "", "0", "1", "-1", "7", "99", "2147483647", "-2147483648", "2147483648", "9223372036854775807",
      "-9223372036854775808", "99999999999999999999", "1e3", "0x10", " 5", "5 ", "+5", "abc", "true", "false",
      "TRUE", "T", "NoSuchTopic", "%RETRY%G", "%DLQ%G", "SCHEDULE_TOPIC_XXXX", "TBW102", "no spaces allowed",
      std::string(200, 'x'), "*", "TagA || TagB", "||", " || ", "SQL92", "TAG", "G", "%RETRY%", "\x01\x02",
      std::string("KEYS\x01a b c\x02TAGS\x01TagA\x02"), std::string("\x00\x01", 2), "\xff\xfe", "{}", "[]"};
  return values;
}

TEST_F(BrokerHostileInputTest, RandomizedRequestsToEveryProcessorAreAllAnswered) {
  constexpr int kRequests = 2'000;
  env::Random random(0xf022);
  const std::vector<RemotingCommand> templates = request_templates();
  const std::vector<std::string>& values = fuzz_values();
  const std::unique_ptr<RawConnection> raw = connect();
  int sent = 0;
  while (sent < kRequests) {
    Bytes batch;
    for (int i = 0; i < 50; ++i, ++sent) {
      RemotingCommand request = templates[random.uniform(templates.size())];
      request.opaque = sent + 1;
      std::vector<std::string> names;
      for (const auto& [name, value] : request.ext_fields) names.emplace_back(name);
      for (const std::string& name : names) {
        if (random.chance(0.05)) {
          request.ext_fields.erase(name);
        } else if (random.chance(0.25)) {
          request.ext_fields.insert_or_assign(name, values[random.uniform(values.size())]);
        }
      }
      if (request.code == RequestCode::HEART_BEAT && random.chance(0.5)) {
        const std::string body = random.chance(0.5) ? heartbeat_body(values[random.uniform(values.size())],
                                                                     values[random.uniform(values.size())])
                                                    : values[random.uniform(values.size())];
        request.body = to_bytes(body);
      }
      if (random.chance(0.05)) request.body.resize(random.uniform(2 * 65'536));  // zeros, up to twice the limit
      const Bytes frame = remoting::encode_frame(request);
      batch.insert(batch.end(), frame.begin(), frame.end());
    }
    raw->send(std::move(batch));
    // A held pull is answered within kMaxSuspendTimeout (25 s).
    ASSERT_TRUE(cluster_.run_until([&] { return raw->responses().size() == static_cast<size_t>(sent); }, seconds(60)))
        << raw->responses().size() << " of " << sent << " answered";
    ASSERT_FALSE(raw->closed_by_server()) << raw->close_reason().to_string();
  }
  std::map<int32_t, int> by_code;
  for (const RemotingCommand& response : raw->responses()) ++by_code[response.code];
  std::printf("[ measure  ] %d randomized requests: %d answered SUCCESS, %d SYSTEM_ERROR, %zu distinct codes\n",
              kRequests, by_code[ResponseCode::SUCCESS], by_code[ResponseCode::SYSTEM_ERROR], by_code.size());
  EXPECT_GT(by_code[ResponseCode::SUCCESS], kRequests / 10);  // the fuzzer reaches the processors' real work
  expect_still_serving();
}

}  // namespace
}  // namespace mqlab::broker::hostile_input_test
