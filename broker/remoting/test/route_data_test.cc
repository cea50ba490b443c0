// Route data bodies: TopicRouteData in both key forms (fastjson's bare
// integer keys and standard JSON) parses to one structure and writes byte for
// byte what a Java NameServer writes; the key fix-up leaves strings alone;
// HeartbeatData as ali-ons sends it; RegisterBrokerBody as a Java broker
// sends it; and random route tables round-trip in both forms (RapidCheck).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "broker/remoting/frame_codec.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/route_data.h"

namespace mqlab::remoting::route_data_test {
namespace {

// Reference section 7.5's example, as fastjson writes it (bare keys).
constexpr std::string_view kRouteFastjson =
    R"({"brokerDatas":[{"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"},)"
    R"("brokerName":"broker-a","cluster":"DefaultCluster"}],"filterServerTable":{},)"
    R"("queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]})";
constexpr std::string_view kRouteStandard =
    R"({"brokerDatas":[{"brokerAddrs":{"0":"10.0.0.1:10911","1":"10.0.0.2:10911"},)"
    R"("brokerName":"broker-a","cluster":"DefaultCluster"}],"filterServerTable":{},)"
    R"("queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]})";

TopicRouteData reference_route() {
  TopicRouteData route;
  route.brokerDatas.push_back(
      BrokerData{"DefaultCluster", "broker-a", {{0, "10.0.0.1:10911"}, {1, "10.0.0.2:10911"}}});
  route.queueDatas.push_back(QueueData{"broker-a", 4, 4, 6, 0});
  return route;
}

TEST(TopicRouteData, BothKeyFormsParseToTheSameStructure) {
  Result<TopicRouteData> quirk = TopicRouteData::parse(kRouteFastjson);
  Result<TopicRouteData> standard = TopicRouteData::parse(kRouteStandard);
  ASSERT_TRUE(quirk.ok()) << quirk.status().to_string();
  ASSERT_TRUE(standard.ok()) << standard.status().to_string();
  EXPECT_EQ(*quirk, reference_route());
  EXPECT_EQ(*standard, reference_route());
}

TEST(TopicRouteData, WritesWhatAJavaNameServerWrites) {
  EXPECT_EQ(reference_route().to_json(RouteDataJsonForm::kFastjsonIntegerKeys), kRouteFastjson);
  EXPECT_EQ(reference_route().to_json(RouteDataJsonForm::kStandardJson), kRouteStandard);
  EXPECT_EQ(reference_route().to_json(), kRouteStandard);
  // The standard form is JSON as nlohmann writes it: same keys, same order.
  EXPECT_EQ(nlohmann::json::parse(kRouteStandard).dump(), kRouteStandard);
}

TEST(TopicRouteData, OptionalPartsAndOldSpellings) {
  TopicRouteData route = reference_route();
  route.orderTopicConf = "broker-a:4";
  route.filterServerTable["10.0.0.1:10911"] = {"10.0.0.1:30000"};
  const std::string text = route.to_json(RouteDataJsonForm::kFastjsonIntegerKeys);
  EXPECT_NE(text.find(R"("orderTopicConf":"broker-a:4")"), std::string::npos);
  EXPECT_EQ(TopicRouteData::parse(text).value(), route);

  // Up to 4.8.0 the field was topicSynFlag; 5.x adds fields we do not know.
  Result<TopicRouteData> old = TopicRouteData::parse(
      R"({"queueDatas":[{"brokerName":"b","perm":2,"readQueueNums":1,"writeQueueNums":1,"topicSynFlag":3}],)"
      R"("brokerDatas":[{"brokerName":"b","cluster":"c","brokerAddrs":{-1:"x"},"enableActingMaster":false}]})");
  ASSERT_TRUE(old.ok()) << old.status().to_string();
  EXPECT_EQ(old->queueDatas.at(0).topicSysFlag, 3);
  EXPECT_EQ(old->brokerDatas.at(0).brokerAddrs.at(-1), "x");
  EXPECT_TRUE(old->filterServerTable.empty());
}

TEST(TopicRouteData, ErrorsNameThePath) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"brokerDatas":[{"brokerAddrs":{"m":"x"}}]})",
       R"(TopicRouteData.brokerDatas[0].brokerAddrs["m"]: the key is not a brokerId (an integer))"},
      {R"({"brokerDatas":[{"brokerAddrs":{0:7}}]})",
       R"(TopicRouteData.brokerDatas[0].brokerAddrs["0"]: expected a string, found the integer 7)"},
      {R"({"queueDatas":{}})", "TopicRouteData.queueDatas: expected an array, found an object"},
      {R"({"queueDatas":[{"perm":"6"}]})", "TopicRouteData.queueDatas[0].perm: expected an int32, found a string"},
      {R"({"filterServerTable":{"a":"b"}})", R"(TopicRouteData.filterServerTable["a"]: expected an array)"},
      {"[]", "TopicRouteData: expected an object, found an array"},
      {"{0:", "TopicRouteData: invalid JSON"},
      {R"({"a":"[[[[[[","b":)" + std::string(100, '[') + std::string(100, ']') + "}",
       "TopicRouteData: JSON nested deeper than 64 levels at byte 81"},
  };
  for (const auto& [text, reason] : cases) {
    SCOPED_TRACE(text);
    Result<TopicRouteData> parsed = TopicRouteData::parse(text);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find(reason), std::string::npos) << parsed.status().to_string();
  }
}

TEST(TopicRouteData, FormFollowsTheRequestVersion) {
  EXPECT_EQ(route_data_json_form_for(121, false), RouteDataJsonForm::kFastjsonIntegerKeys);  // ali-ons
  EXPECT_EQ(route_data_json_form_for(400, false), RouteDataJsonForm::kFastjsonIntegerKeys);
  EXPECT_EQ(route_data_json_form_for(401, false), RouteDataJsonForm::kStandardJson);  // V4_9_4
  EXPECT_EQ(route_data_json_form_for(121, true), RouteDataJsonForm::kStandardJson);
}

TEST(QuoteUnquotedIntegerKeys, QuotesKeysOnlyOutsideStrings) {
  EXPECT_EQ(quote_unquoted_integer_keys(R"({0:"a", 12 :"b",-3:"c"})"), R"({"0":"a", "12" :"b","-3":"c"})");
  EXPECT_EQ(quote_unquoted_integer_keys("{\n  0 : 1,\n  1: [0, 1]}"), "{\n  \"0\" : 1,\n  \"1\": [0, 1]}");
  // Strings, escaped quotes inside them and array elements are left alone.
  EXPECT_EQ(quote_unquoted_integer_keys(R"({"a":"{0:1, 2:3}","b\"{0:":1,5:{6:"x"}})"),
            R"({"a":"{0:1, 2:3}","b\"{0:":1,"5":{"6":"x"}})");
  EXPECT_EQ(quote_unquoted_integer_keys(R"([0,1,{"a":[2,3]}])"), R"([0,1,{"a":[2,3]}])");
  // Not keys: a number value, a fraction, a lone minus.
  EXPECT_EQ(quote_unquoted_integer_keys(R"({"a":1,"b":-2})"), R"({"a":1,"b":-2})");
  EXPECT_EQ(quote_unquoted_integer_keys("{1.5:2}"), "{1.5:2}");
  EXPECT_EQ(quote_unquoted_integer_keys("{-:2}"), "{-:2}");
  EXPECT_EQ(quote_unquoted_integer_keys(""), "");
  EXPECT_EQ(quote_unquoted_integer_keys(kRouteStandard), kRouteStandard);
}

// ---- HeartbeatData ----------------------------------------------------------------------

// The HEART_BEAT body ali-ons 3.12.0 sent in the capture (client address
// replaced by 127.0.0.1 there too).
constexpr std::string_view kAliOnsHeartbeat =
    R"({"clientID":"127.0.0.1@24819","consumerDataSet":[{"groupName":"CG_GOLDEN","consumeType":"CONSUME_PASSIVELY",)"
    R"("messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","subscriptionDataSet":[)"
    R"({"topic":"GoldenTopic","subString":"*","classFilterMode":false,"tagsSet":[],"codeSet":[],)"
    R"("subVersion":1795946416063},{"topic":"%RETRY%CG_GOLDEN","subString":"*","classFilterMode":false,)"
    R"("tagsSet":[],"codeSet":[],"subVersion":1795946416064}],"unitMode":false}],)"
    R"("producerDataSet":[{"groupName":"PG_GOLDEN"}]})";

void expect_ali_ons_heartbeat(const HeartbeatData& heartbeat) {
  EXPECT_EQ(heartbeat.clientID, "127.0.0.1@24819");
  ASSERT_EQ(heartbeat.producerDataSet.size(), 1u);
  EXPECT_EQ(heartbeat.producerDataSet[0].groupName, "PG_GOLDEN");
  ASSERT_EQ(heartbeat.consumerDataSet.size(), 1u);
  const ConsumerData& consumer = heartbeat.consumerDataSet[0];
  EXPECT_EQ(consumer.groupName, "CG_GOLDEN");
  EXPECT_EQ(consumer.consumeType, "CONSUME_PASSIVELY");
  EXPECT_EQ(consumer.messageModel, "CLUSTERING");
  EXPECT_EQ(consumer.consumeFromWhere, "CONSUME_FROM_FIRST_OFFSET");
  EXPECT_FALSE(consumer.unitMode);
  ASSERT_EQ(consumer.subscriptionDataSet.size(), 2u);
  EXPECT_EQ(consumer.subscriptionDataSet[0].topic, "GoldenTopic");
  EXPECT_EQ(consumer.subscriptionDataSet[0].subString, "*");
  EXPECT_EQ(consumer.subscriptionDataSet[0].subVersion, 1795946416063);
  EXPECT_EQ(consumer.subscriptionDataSet[0].expressionType, "TAG") << "absent means TAG";
  EXPECT_TRUE(consumer.subscriptionDataSet[0].tagsSet.empty());
  EXPECT_EQ(consumer.subscriptionDataSet[1].topic, "%RETRY%CG_GOLDEN");
}

TEST(HeartbeatData, ParsesWhatAliOnsSends) {
  Result<HeartbeatData> heartbeat = HeartbeatData::parse(kAliOnsHeartbeat);
  ASSERT_TRUE(heartbeat.ok()) << heartbeat.status().to_string();
  expect_ali_ons_heartbeat(*heartbeat);
  EXPECT_EQ(HeartbeatData::parse(heartbeat->to_json()).value(), *heartbeat);
}

TEST(HeartbeatData, ParsesTheCapturedFrameBody) {
  std::ifstream file(MQLAB_SOURCE_DIR "/../shared/testdata/ali-ons-request-frames.json");
  if (!file) GTEST_SKIP() << "no ali-ons capture";
  const nlohmann::json capture = nlohmann::json::parse(file);
  for (const auto& frame : capture.at("frames")) {
    if (frame.at("code").get<int32_t>() != RequestCode::HEART_BEAT) continue;
    const std::string hex = frame.at("frame_hex").get<std::string>();
    std::vector<uint8_t> bytes;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) {
      bytes.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    const RemotingCommand command = decode_frame(bytes).value();
    Result<HeartbeatData> heartbeat =
        HeartbeatData::parse(std::string_view(reinterpret_cast<const char*>(command.body.data()), command.body.size()));
    ASSERT_TRUE(heartbeat.ok()) << heartbeat.status().to_string();
    expect_ali_ons_heartbeat(*heartbeat);
  }
}

TEST(HeartbeatData, WritesJavasShapeSorted) {
  HeartbeatData heartbeat;
  heartbeat.clientID = "10.0.0.5@4242";
  heartbeat.producerDataSet.push_back({"PG"});
  ConsumerData consumer{"G", "CONSUME_PASSIVELY", "CLUSTERING", "CONSUME_FROM_LAST_OFFSET", {}, false};
  consumer.subscriptionDataSet.push_back(SubscriptionData{"T", "b || a", false, {"b", "a"}, {98, 97}, 7, "TAG"});
  heartbeat.consumerDataSet.push_back(consumer);
  EXPECT_EQ(heartbeat.to_json(),
            R"({"clientID":"10.0.0.5@4242","consumerDataSet":[{"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET",)"
            R"("consumeType":"CONSUME_PASSIVELY","groupName":"G","messageModel":"CLUSTERING",)"
            R"("subscriptionDataSet":[{"classFilterMode":false,"codeSet":[97,98],"expressionType":"TAG",)"
            R"("subString":"b || a","subVersion":7,"tagsSet":["a","b"],"topic":"T"}],"unitMode":false}],)"
            R"("producerDataSet":[{"groupName":"PG"}]})");
}

TEST(HeartbeatData, ErrorsNameThePath) {
  Result<HeartbeatData> bad = HeartbeatData::parse(
      R"({"consumerDataSet":[{"subscriptionDataSet":[{"topic":"T"},{"codeSet":[1,"x"]}]}]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "HeartbeatData.consumerDataSet[0].subscriptionDataSet[1].codeSet[1]: expected an int32, found a string");
  Result<HeartbeatData> unit = HeartbeatData::parse(R"({"consumerDataSet":[{"unitMode":"false"}]})");
  ASSERT_FALSE(unit.ok());
  EXPECT_EQ(unit.status().message(), "HeartbeatData.consumerDataSet[0].unitMode: expected a boolean, found a string");
}

// ---- RegisterBrokerBody -------------------------------------------------------------------

TEST(RegisterBrokerBody, ParsesAJavaBrokersBodyAndRoundTrips) {
  // Shaped as a 4.9.x broker sends it, plus a 5.x-only field and an entry
  // without topicName.
  const std::string_view text =
      R"({"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":3,"stateVersion":0,)"
      R"("timestamp":1700000000000},"topicConfigTable":{"TBW102":{"order":false,"perm":7,"readQueueNums":8,)"
      R"("topicFilterType":"SINGLE_TAG","topicName":"TBW102","topicSysFlag":0,"writeQueueNums":8},)"
      R"("T":{"perm":6,"readQueueNums":4,"writeQueueNums":4,"attributes":{}}}}})";
  Result<RegisterBrokerBody> body = RegisterBrokerBody::parse(text);
  ASSERT_TRUE(body.ok()) << body.status().to_string();
  const TopicConfigSerializeWrapper& wrapper = body->topicConfigSerializeWrapper;
  EXPECT_EQ(wrapper.dataVersion, (DataVersion{1700000000000, 3}));
  ASSERT_EQ(wrapper.topicConfigTable.size(), 2u);
  EXPECT_EQ(wrapper.topicConfigTable.at("TBW102").perm, 7);
  const TopicConfig& topic = wrapper.topicConfigTable.at("T");
  EXPECT_EQ(topic.topicName, "T") << "taken from the key";
  EXPECT_EQ(topic.readQueueNums, 4);
  EXPECT_EQ(topic.topicFilterType, "SINGLE_TAG");
  EXPECT_TRUE(body->filterServerList.empty());

  EXPECT_EQ(RegisterBrokerBody::parse(body->to_json()).value(), *body);
  EXPECT_EQ(TopicConfigSerializeWrapper::parse(wrapper.to_json()).value(), wrapper);
  EXPECT_EQ(DataVersion::parse(R"({"counter":3,"timestamp":1700000000000})").value(), wrapper.dataVersion);
  EXPECT_EQ(wrapper.dataVersion.to_json(), R"({"counter":3,"timestamp":1700000000000})");
}

TEST(RegisterBrokerBody, WritesSortedKeys) {
  RegisterBrokerBody body;
  body.topicConfigSerializeWrapper.dataVersion = {5, 1};
  TopicConfig config;
  config.topicName = "T";
  body.topicConfigSerializeWrapper.topicConfigTable["T"] = config;
  EXPECT_EQ(body.to_json(),
            R"({"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":1,"timestamp":5},)"
            R"("topicConfigTable":{"T":{"order":false,"perm":6,"readQueueNums":16,"topicFilterType":"SINGLE_TAG",)"
            R"("topicName":"T","topicSysFlag":0,"writeQueueNums":16}}}})");
  Result<RegisterBrokerBody> bad =
      RegisterBrokerBody::parse(R"({"topicConfigSerializeWrapper":{"dataVersion":{"counter":"1"}}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "RegisterBrokerBody.topicConfigSerializeWrapper.dataVersion.counter: expected an int64, found a string");
}

// ---- property ---------------------------------------------------------------------------------

// Names rich in characters a naive key fix-up would trip on.
std::string gen_name() {
  static const std::vector<std::string> kTokens = {"a", "B", "0", "-", ":", ",", "{", "}", "\"", "\\", " ", "9:"};
  const auto count = *rc::gen::inRange<size_t>(0, 6);
  std::string name;
  for (const std::string& token : *rc::gen::container<std::vector<std::string>>(count, rc::gen::elementOf(kTokens))) {
    name += token;
  }
  return name;
}

TopicRouteData gen_route() {
  TopicRouteData route;
  const auto brokers = *rc::gen::inRange(0, 4);
  for (int i = 0; i < brokers; ++i) {
    BrokerData broker{gen_name(), gen_name(), {}};
    const auto addrs = *rc::gen::inRange(0, 4);
    for (int j = 0; j < addrs; ++j) broker.brokerAddrs[*rc::gen::arbitrary<int64_t>()] = gen_name();
    route.brokerDatas.push_back(broker);
    route.queueDatas.push_back(QueueData{broker.brokerName, *rc::gen::arbitrary<int32_t>(),
                                         *rc::gen::arbitrary<int32_t>(), *rc::gen::inRange(0, 16),
                                         *rc::gen::inRange(0, 4)});
  }
  if (*rc::gen::arbitrary<bool>()) route.filterServerTable[gen_name()] = {gen_name(), gen_name()};
  route.orderTopicConf = gen_name();
  return route;
}

RC_GTEST_PROP(TopicRouteData, BothFormsRoundTripToTheSameStructure, ()) {
  const TopicRouteData route = gen_route();
  const std::string standard = route.to_json(RouteDataJsonForm::kStandardJson);
  const std::string fastjson = route.to_json(RouteDataJsonForm::kFastjsonIntegerKeys);
  Result<TopicRouteData> from_standard = TopicRouteData::parse(standard);
  Result<TopicRouteData> from_fastjson = TopicRouteData::parse(fastjson);
  RC_ASSERT(from_standard.ok());
  RC_ASSERT(from_fastjson.ok());
  RC_ASSERT(*from_standard == route);
  RC_ASSERT(*from_fastjson == route);
  RC_ASSERT(quote_unquoted_integer_keys(fastjson) == standard);
  RC_ASSERT(quote_unquoted_integer_keys(standard) == standard);
}

}  // namespace
}  // namespace mqlab::remoting::route_data_test
