// Bad input to a NameServer (unreadable frames, missing fields, bad bodies, unknown codes, randomized requests) closes
// only its connection or gets an error naming the problem; raw attacker connections, then route lookups still right.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/client/mq_client_api.h"
#include "broker/client/test/cluster_harness.h"
#include "broker/common/big_endian.h"
#include "broker/common/crc32.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"
#include "broker/remoting/route_data.h"

namespace mqlab::namesrv::namesrv_hostile_input_test {
namespace {

using client::testing::ClusterHarness;
using client::testing::kNamesrvAddr;
using client::testing::RawConnection;
using remoting::RemotingCommand;
using remoting::RequestCode;
using remoting::ResponseCode;
using Bytes = std::vector<uint8_t>;
using namespace std::string_view_literals;

constexpr const char* kTopic = "T";
constexpr int32_t kOpaque = 4242;
constexpr size_t kMaxFrameBytes = 16 * 1024 * 1024;

Bytes to_bytes(std::string_view text) { return Bytes(text.begin(), text.end()); }

Bytes frame_prefix(uint32_t total_length, uint32_t header_length_field) {
  Bytes bytes(8);
  put_u32_be(bytes.data(), total_length);
  put_u32_be(bytes.data() + 4, header_length_field);
  return bytes;
}

Bytes frame_with_header(std::string_view header, std::string_view body = "", uint8_t serialize_type = 0) {
  Bytes frame = frame_prefix(static_cast<uint32_t>(4 + header.size() + body.size()),
                             (uint32_t{serialize_type} << 24) | static_cast<uint32_t>(header.size()));
  frame.insert(frame.end(), header.begin(), header.end());
  frame.insert(frame.end(), body.begin(), body.end());
  return frame;
}

RemotingCommand request_of(int32_t code, remoting::ExtFields ext, std::string body = "") {
  RemotingCommand request = RemotingCommand::make_request(code, std::move(ext));
  request.body = to_bytes(body);
  return request;
}

RemotingCommand without(RemotingCommand request, const std::string& field) {
  EXPECT_EQ(request.ext_fields.erase(field), 1u) << field;
  return request;
}

RemotingCommand with(RemotingCommand request, const std::string& field, const std::string& value) {
  request.ext_fields.insert_or_assign(field, value);
  return request;
}

// REGISTER_BROKER as a 4.9.x broker sends it, for a broker nobody runs.
RemotingCommand register_request(const std::string& name, const std::string& address, const std::string& topic,
                                 int32_t read_queue_nums = 2, int32_t write_queue_nums = 2) {
  remoting::RegisterBrokerBody body;
  remoting::TopicConfig config;
  config.topicName = topic;
  config.readQueueNums = read_queue_nums;
  config.writeQueueNums = write_queue_nums;
  body.topicConfigSerializeWrapper.topicConfigTable.emplace(topic, config);
  body.topicConfigSerializeWrapper.dataVersion = remoting::DataVersion{1'700'000'000'000, 1};
  RemotingCommand request = request_of(RequestCode::REGISTER_BROKER, {{"brokerName", name},
                                                                      {"brokerAddr", address},
                                                                      {"clusterName", "DefaultCluster"},
                                                                      {"haServerAddr", address},
                                                                      {"brokerId", "0"},
                                                                      {"compressed", "false"}});
  request.body = to_bytes(body.to_json());
  request.set_ext_int("bodyCrc32", static_cast<int32_t>(crc32_ieee(0, request.body) & 0x7FFFFFFF));
  return request;
}

class NamesrvHostileInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(cluster_.start());
    ASSERT_NO_FATAL_FAILURE(cluster_.create_topic(kTopic, 4));
    attacker_ = &cluster_.add_bare_process("attacker", "10.0.1.66");
    ASSERT_NO_FATAL_FAILURE(expect_still_serving());
  }

  NamesrvStatus status() { return cluster_.namesrv().status(); }
  std::unique_ptr<RawConnection> connect() { return cluster_.connect_raw(*attacker_, kNamesrvAddr); }

  // The real brokers are registered, T is routed over both, and a broker's
  // registration is still taken.
  void expect_still_serving() {
    EXPECT_EQ(cluster_.registered_brokers(), cluster_.broker_count());
    const RemotingCommand response = cluster_.must_call(kNamesrvAddr, client::api::build_get_route_info(kTopic));
    const Result<remoting::TopicRouteData> route = client::api::parse_route_info(response, kTopic);
    ASSERT_TRUE(route.ok()) << route.status().to_string();
    ASSERT_EQ(route->brokerDatas.size(), cluster_.broker_count());
    for (size_t b = 0; b < cluster_.broker_count(); ++b) {
      EXPECT_EQ(route->brokerDatas[b].brokerName, cluster_.broker_spec(b).name);
      EXPECT_EQ(route->brokerDatas[b].brokerAddrs.at(0), cluster_.broker_spec(b).address());
      EXPECT_EQ(route->queueDatas[b].readQueueNums, 4);
    }
    std::optional<std::vector<broker::RegistrationOutcome>> outcomes;
    cluster_.broker(0).register_broker_all([&](std::vector<broker::RegistrationOutcome> o) { outcomes = std::move(o); });
    ASSERT_TRUE(cluster_.run_until([&] { return outcomes.has_value(); }, seconds(10)));
    ASSERT_EQ(outcomes->size(), 1u);
    EXPECT_TRUE(outcomes->at(0).status.ok()) << outcomes->at(0).status.to_string();
  }

  // Sends request on a fresh raw connection; returns the answer after
  // proving the connection still works with GET_ROUTEINFO_BY_TOPIC.
  RemotingCommand answer_on_kept_connection(RemotingCommand request) {
    const std::unique_ptr<RawConnection> raw = connect();
    request.opaque = kOpaque;
    raw->send(request);
    EXPECT_TRUE(cluster_.run_until([&] { return !raw->responses().empty() || raw->closed_by_server(); }, seconds(5)));
    RemotingCommand follow_up = client::api::build_get_route_info(kTopic);
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

  ClusterHarness cluster_;
  sim::SimEnv* attacker_ = nullptr;
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
      {"largest_length_field", frame_prefix(0x7FFFFFFF, 10)},
      {"negative_length", frame_prefix(0x80000000, 0)},
      {"zero_length", frame_prefix(0, 0)},
      {"header_length_larger_than_the_frame", frame_prefix(4 + 10, 11)},
      {"header_length_at_24_bits", frame_prefix(4 + 10, 0x00FFFFFF)},
      {"tls_client_hello", to_bytes("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 TLS, not RocketMQ"sv)},
      {"invalid_json_header", frame_with_header(R"({"code":105,"extFields":{"topic":"T")")},
      {"json_header_a_string", frame_with_header(R"("GET_ROUTEINFO_BY_TOPIC")")},
      {"json_code_out_of_int32", frame_with_header(R"({"code":4294967401})")},
      {"json_ext_fields_an_array", frame_with_header(R"({"code":105,"extFields":["topic","T"]})")},
      {"unknown_serialize_type", frame_with_header(R"({"code":105})", "", 2)},
      // code 105, JAVA, version 0, opaque 1, flag 0, no remark, then 256 bytes of extFields that never come.
      {"rocketmq_ext_length_past_the_header",
       frame_with_header(std::string("\x00\x69\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00"
                                     "\x00\x00\x01\x00",
                                     21),
                         "", 1)},
  };
}

class NamesrvBadFrameTest : public NamesrvHostileInputTest, public ::testing::WithParamInterface<BadFrame> {};

TEST_P(NamesrvBadFrameTest, ClosesOnlyThatConnectionAndKeepsServing) {
  const NamesrvStatus before = status();
  const std::unique_ptr<RawConnection> raw = connect();
  ASSERT_TRUE(cluster_.run_until([&] { return status().connections == before.connections + 1; }, seconds(1)));
  raw->send(GetParam().bytes);
  ASSERT_TRUE(cluster_.run_until([&] { return raw->closed_by_server(); }, seconds(5)));
  EXPECT_EQ(raw->close_reason().code(), StatusCode::kUnavailable) << raw->close_reason().to_string();
  EXPECT_EQ(raw->received_bytes(), 0u);
  EXPECT_EQ(status().remoting.connections_closed_for_bad_input, before.remoting.connections_closed_for_bad_input + 1);
  EXPECT_EQ(status().connections, before.connections);
  expect_still_serving();
}

INSTANTIATE_TEST_SUITE_P(Frames, NamesrvBadFrameTest, ::testing::ValuesIn(bad_frames()),
                         [](const ::testing::TestParamInfo<BadFrame>& info) { return info.param.name; });

TEST_F(NamesrvHostileInputTest, RandomGarbageNeverCrashesIt) {
  env::Random random(0x5eed);
  const size_t connections = status().connections;
  for (int round = 0; round < 100; ++round) {
    Bytes garbage(1 + random.uniform(2048));
    for (uint8_t& byte : garbage) byte = static_cast<uint8_t>(random.uniform(256));
    if (round % 2 == 1) {
      const uint32_t header_length = static_cast<uint32_t>(garbage.size());
      Bytes framed = frame_prefix(4 + header_length, (uint32_t{static_cast<uint8_t>(round % 4 == 1)} << 24) | header_length);
      framed.insert(framed.end(), garbage.begin(), garbage.end());
      garbage = std::move(framed);
    }
    const std::unique_ptr<RawConnection> raw = connect();
    raw->send(garbage);
    cluster_.run_for(millis(10));
    raw->close();
  }
  ASSERT_TRUE(cluster_.run_until([&] { return status().connections == connections; }, seconds(1)));
  EXPECT_GT(status().remoting.connections_closed_for_bad_input, 90u);
  expect_still_serving();
}

TEST_F(NamesrvHostileInputTest, HalfFrameThenCloseIsDroppedQuietly) {
  const NamesrvStatus before = status();
  const Bytes frame = remoting::encode_frame(register_request("broker-torn", "10.9.9.9:10911", "Torn"));
  for (const size_t cut : {size_t{1}, size_t{8}, frame.size() / 2, frame.size() - 1}) {
    const std::unique_ptr<RawConnection> raw = connect();
    raw->send(Bytes(frame.begin(), frame.begin() + static_cast<ptrdiff_t>(cut)));
    cluster_.run_for(millis(5));
    raw->close();
    ASSERT_TRUE(cluster_.run_until([&] { return status().connections == before.connections; }, seconds(1)));
  }
  EXPECT_EQ(status().remoting.requests, before.remoting.requests);  // no torn request reached a processor
  EXPECT_EQ(status().remoting.connections_closed_for_bad_input, before.remoting.connections_closed_for_bad_input);
  EXPECT_FALSE(cluster_.namesrv().route_info_manager().pickup_topic_route_data("Torn").has_value());
  expect_still_serving();
}

// --- requests the NameServer can read but not serve -------------------------------------------

struct BadRequest {
  std::string name;
  RemotingCommand request;
  int32_t code;
  std::string remark;  // a part of the expected remark
};

void PrintTo(const BadRequest& request, std::ostream* out) { *out << request.name; }

std::vector<BadRequest> bad_requests() {
  const RemotingCommand registration = register_request("broker-x", "10.9.9.9:10911", "X");
  const RemotingCommand route = request_of(RequestCode::GET_ROUTEINFO_BY_TOPIC, {{"topic", kTopic}});
  const RemotingCommand unregistration = request_of(
      RequestCode::UNREGISTER_BROKER,
      {{"brokerName", "broker-x"}, {"brokerAddr", "10.9.9.9:10911"}, {"clusterName", "DefaultCluster"}, {"brokerId", "0"}});
  const RemotingCommand data_version = request_of(
      RequestCode::QUERY_DATA_VERSION,
      {{"brokerName", "broker-a"}, {"brokerAddr", "10.0.0.1:10911"}, {"clusterName", "DefaultCluster"}, {"brokerId", "0"}});
  const RemotingCommand put_kv =
      request_of(RequestCode::PUT_KV_CONFIG, {{"namespace", "ORDER_TOPIC_CONFIG"}, {"key", kTopic}, {"value", "broker-a:4"}});
  const int32_t system_error = ResponseCode::SYSTEM_ERROR;
  const auto missing = [](const char* field) { return std::string("the custom field <") + field + "> is null"; };
  RemotingCommand garbage_body = registration;
  garbage_body.body = to_bytes("{\"topicConfigSerializeWrapper\": [1, 2");
  garbage_body.ext_fields.erase("bodyCrc32");
  RemotingCommand wrong_crc = registration;
  wrong_crc.set_ext_int("bodyCrc32", 12345);
  return {
      // Required fields missing: SYSTEM_ERROR naming the field.
      {"register_without_broker_addr", without(registration, "brokerAddr"), system_error, missing("brokerAddr")},
      {"register_without_broker_name", without(registration, "brokerName"), system_error, missing("brokerName")},
      {"register_without_cluster_name", without(registration, "clusterName"), system_error, missing("clusterName")},
      {"register_without_broker_id", without(registration, "brokerId"), system_error, missing("brokerId")},
      {"route_without_topic", request_of(RequestCode::GET_ROUTEINFO_BY_TOPIC, {}), system_error, missing("topic")},
      {"unregister_without_broker_id", without(unregistration, "brokerId"), system_error, missing("brokerId")},
      {"data_version_without_broker_addr", without(data_version, "brokerAddr"), system_error, missing("brokerAddr")},
      {"put_kv_without_value", without(put_kv, "value"), system_error, missing("value")},
      {"get_kv_without_key", request_of(RequestCode::GET_KV_CONFIG, {{"namespace", "N"}}), system_error, missing("key")},
      {"delete_kv_without_namespace", request_of(RequestCode::DELETE_KV_CONFIG, {{"key", "k"}}), system_error,
       missing("namespace")},
      // Fields or bodies that do not decode.
      {"register_broker_id_not_a_number", with(registration, "brokerId", "zero"), system_error, "<brokerId>"},
      {"register_compressed_flag_not_a_boolean", with(registration, "compressed", "maybe"), system_error, "<compressed>"},
      {"register_crc_not_a_number", with(registration, "bodyCrc32", "0x1F"), system_error, "<bodyCrc32>"},
      {"register_body_not_json", garbage_body, system_error, "Failed to decode RegisterBrokerBody"},
      {"register_body_crc_mismatch", wrong_crc, system_error, "crc32 not match"},
      {"register_compressed_body", with(registration, "compressed", "true"), system_error, "compressed"},
      {"route_standard_json_flag_not_a_boolean", with(route, "acceptStandardJsonOnly", "yes please"), system_error,
       "<acceptStandardJsonOnly>"},
      {"data_version_body_not_json", request_of(RequestCode::QUERY_DATA_VERSION, data_version.ext_fields, "{\"counter\":"),
       system_error, ""},
      // Queue counts no broker has: every client would loop over them (TopicPublishInfo, rebalancing).
      {"register_topic_with_2147483647_write_queues", register_request("broker-x", "10.9.9.9:10911", kTopic, 2, 2147483647),
       system_error, "writeQueueNums 2147483647 is outside [0, 1024]"},
      {"register_topic_with_negative_read_queues", register_request("broker-x", "10.9.9.9:10911", "X", -5, 2),
       system_error, "readQueueNums -5 is outside [0, 1024]"},
      // Lookups of what does not exist.
      {"route_of_an_unknown_topic", with(route, "topic", "NoSuchTopic"), ResponseCode::TOPIC_NOT_EXIST, "NoSuchTopic"},
      {"get_kv_unknown_key", request_of(RequestCode::GET_KV_CONFIG, {{"namespace", "N"}, {"key", "k"}}),
       ResponseCode::QUERY_NOT_FOUND, "No config item"},
      // Unknown codes, and a broker's code sent to a NameServer.
      {"unknown_code", request_of(9999, {}), ResponseCode::REQUEST_CODE_NOT_SUPPORTED, "request type 9999 not supported"},
      {"largest_code", request_of(0x7FFFFFFF, {}), ResponseCode::REQUEST_CODE_NOT_SUPPORTED,
       "request type 2147483647 not supported"},
      {"broker_code_to_a_namesrv", request_of(RequestCode::SEND_MESSAGE_V2, {{"b", kTopic}}),
       ResponseCode::REQUEST_CODE_NOT_SUPPORTED, "request type 310 not supported"},
  };
}

class NamesrvBadRequestTest : public NamesrvHostileInputTest, public ::testing::WithParamInterface<BadRequest> {};

TEST_P(NamesrvBadRequestTest, ErrorResponseOnAConnectionThatStaysOpen) {
  const BadRequest& bad = GetParam();
  const NamesrvStatus before = status();
  const RemotingCommand response = answer_on_kept_connection(bad.request);
  EXPECT_EQ(response.code, bad.code) << response.remark;
  if (!bad.remark.empty()) {
    EXPECT_NE(response.remark.find(bad.remark), std::string::npos) << response.remark;
  }
  EXPECT_FALSE(response.remark.empty()) << "an error response should say why";
  EXPECT_EQ(status().remoting.connections_closed_for_bad_input, before.remoting.connections_closed_for_bad_input);
  EXPECT_EQ(status().brokers.size(), before.brokers.size());  // no half-registered broker
  EXPECT_EQ(status().topics.size(), before.topics.size());
  expect_still_serving();
}

INSTANTIATE_TEST_SUITE_P(Requests, NamesrvBadRequestTest, ::testing::ValuesIn(bad_requests()),
                         [](const ::testing::TestParamInfo<BadRequest>& info) { return info.param.name; });

// A broker that registers over a connection and then vanishes is dropped at
// once; the brokers registered over other connections stay.
TEST_F(NamesrvHostileInputTest, ImpostorRegisteringThenClosingDropsOnlyItself) {
  std::unique_ptr<RawConnection> raw = connect();
  RemotingCommand registration = register_request("broker-impostor", "10.6.6.6:10911", "Impostor");
  registration.opaque = kOpaque;
  raw->send(registration);
  ASSERT_TRUE(cluster_.run_until([&] { return !raw->responses().empty(); }, seconds(5)));
  EXPECT_EQ(raw->responses()[0].code, ResponseCode::SUCCESS) << raw->responses()[0].remark;
  EXPECT_EQ(cluster_.registered_brokers(), cluster_.broker_count() + 1);
  EXPECT_TRUE(cluster_.namesrv().route_info_manager().pickup_topic_route_data("Impostor").has_value());

  raw->close();
  ASSERT_TRUE(cluster_.run_until([&] { return cluster_.registered_brokers() == cluster_.broker_count(); }, seconds(1)));
  EXPECT_FALSE(cluster_.namesrv().route_info_manager().pickup_topic_route_data("Impostor").has_value());
  expect_still_serving();
}

TEST_F(NamesrvHostileInputTest, ManyBadRequestsOnOneConnectionAreEachAnswered) {
  const std::unique_ptr<RawConnection> raw = connect();
  Bytes stream;
  std::vector<BadRequest> all = bad_requests();
  for (size_t i = 0; i < all.size(); ++i) {
    all[i].request.opaque = static_cast<int32_t>(1000 + i);
    const Bytes frame = remoting::encode_frame(all[i].request);
    stream.insert(stream.end(), frame.begin(), frame.end());
  }
  raw->send(stream);
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

// --- requests made of the right names with wrong values ----------------------------------

// Every request code the NameServer serves, each with every field it reads
// set; the brokers they name are impostors, never the real two.
std::vector<RemotingCommand> request_templates() {
  const remoting::ExtFields broker{
      {"brokerName", "broker-x"}, {"brokerAddr", "10.9.9.9:10911"}, {"clusterName", "DefaultCluster"}, {"brokerId", "0"}};
  RemotingCommand data_version = request_of(RequestCode::QUERY_DATA_VERSION, broker);
  data_version.body = to_bytes(remoting::DataVersion{1'700'000'000'000, 1}.to_json());
  return {
      register_request("broker-x", "10.9.9.9:10911", "X"),
      register_request("broker-y", "10.9.9.8:10911", kTopic),
      request_of(RequestCode::UNREGISTER_BROKER, broker),
      data_version,
      request_of(RequestCode::GET_ROUTEINFO_BY_TOPIC, {{"topic", kTopic}, {"acceptStandardJsonOnly", "true"}}),
      request_of(RequestCode::GET_BROKER_CLUSTER_INFO, {}),
      request_of(RequestCode::GET_ALL_TOPIC_LIST_FROM_NAMESERVER, {}),
      request_of(RequestCode::PUT_KV_CONFIG, {{"namespace", "ORDER_TOPIC_CONFIG"}, {"key", "X"}, {"value", "broker-x:2"}}),
      request_of(RequestCode::GET_KV_CONFIG, {{"namespace", "ORDER_TOPIC_CONFIG"}, {"key", "X"}}),
      request_of(RequestCode::DELETE_KV_CONFIG, {{"namespace", "ORDER_TOPIC_CONFIG"}, {"key", "X"}}),
  };
}

const std::vector<std::string>& fuzz_values() {
  static const std::vector<std::string> values = {
      "", "0", "1", "-1", "2", "2147483647", "-2147483648", "9223372036854775807", "-9223372036854775808",
      "99999999999999999999", "1e3", "abc", "true", "false", "T", "X", "NoSuchTopic", "broker-x", "broker-y",
      "10.9.9.9:10911", "10.9.9.8:10911", "10.9.9.9", ":0", "[::1]:9876", "DefaultCluster", "OtherCluster",
      std::string(300, 'n'), std::string("\x00", 1), "\xff", "{}", "[]", "null",
      R"({"topicConfigSerializeWrapper":{"topicConfigTable":{"X":{"topicName":"X","readQueueNums":-5}}}})",
      R"({"topicConfigSerializeWrapper":{"topicConfigTable":{"":{}},"dataVersion":{"counter":"x"}}})",
      R"({"topicConfigSerializeWrapper":{"topicConfigTable":{"X":{"perm":999999,"writeQueueNums":2147483647}}},"filterServerList":["a",1]})",
      R"({"timestamp":-1,"counter":9223372036854775807})"};
  return values;
}

TEST_F(NamesrvHostileInputTest, RandomizedRequestsToEveryProcessorAreAllAnswered) {
  constexpr int kRequests = 2'000;
  env::Random random(0x1a3e);
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
      if (!request.body.empty() && random.chance(0.3)) {
        request.body = to_bytes(values[random.uniform(values.size())]);
        request.ext_fields.erase("bodyCrc32");
      }
      const Bytes frame = remoting::encode_frame(request);
      batch.insert(batch.end(), frame.begin(), frame.end());
    }
    raw->send(std::move(batch));
    ASSERT_TRUE(cluster_.run_until([&] { return raw->responses().size() == static_cast<size_t>(sent); }, seconds(10)))
        << raw->responses().size() << " of " << sent << " answered";
    ASSERT_FALSE(raw->closed_by_server()) << raw->close_reason().to_string();
  }
  std::map<int32_t, int> by_code;
  for (const RemotingCommand& response : raw->responses()) ++by_code[response.code];
  std::printf("[ measure  ] %d randomized requests: %d answered SUCCESS, %d SYSTEM_ERROR, %zu distinct codes\n",
              kRequests, by_code[ResponseCode::SUCCESS], by_code[ResponseCode::SYSTEM_ERROR], by_code.size());
  EXPECT_GT(by_code[ResponseCode::SUCCESS], kRequests / 10);
  // Whatever the impostors registered goes with their connection.
  raw->close();
  ASSERT_TRUE(cluster_.run_until([&] { return cluster_.registered_brokers() == cluster_.broker_count(); }, seconds(1)))
      << cluster_.registered_brokers() << " brokers registered";
  expect_still_serving();
}

}  // namespace
}  // namespace mqlab::namesrv::namesrv_hostile_input_test
