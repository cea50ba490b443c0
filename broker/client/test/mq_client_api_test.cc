// The client's wire shapes: SEND_MESSAGE_V2 short fields, pull flags and the
// four pull answers, offset and consumer-list responses, ClusterInfo in both
// JSON forms, and error responses as Status values.
#include <gtest/gtest.h>

#include "broker/client/mq_client_api.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"

namespace mqlab::client::api::mq_client_api_test {
namespace {

using remoting::RequestCode;
using remoting::ResponseCode;

RemotingCommand response(int32_t code) {
  RemotingCommand command;
  command.code = code;
  command.mark_response();
  return command;
}

TEST(MQClientAPI, SendMessageV2UsesShortFieldNames) {
  SendMessageRequestHeader header;
  header.producerGroup = "PG";
  header.topic = "T";
  header.defaultTopic = "TBW102";
  header.queueId = 3;
  header.bornTimestamp = 1700;
  header.properties = "WAIT\001true\002";
  header.maxReconsumeTimes = 16;
  header.brokerName = "broker-a";
  const RemotingCommand request = build_send_message_v2(header, {1, 2});
  EXPECT_EQ(request.code, RequestCode::SEND_MESSAGE_V2);
  EXPECT_EQ(request.ext_fields.at("a"), "PG");
  EXPECT_EQ(request.ext_fields.at("b"), "T");
  EXPECT_EQ(request.ext_fields.at("c"), "TBW102");
  EXPECT_EQ(request.ext_fields.at("d"), "4");
  EXPECT_EQ(request.ext_fields.at("e"), "3");
  EXPECT_EQ(request.ext_fields.at("g"), "1700");
  EXPECT_EQ(request.ext_fields.at("k"), "false");
  EXPECT_EQ(request.ext_fields.at("l"), "16");
  EXPECT_EQ(request.ext_fields.at("n"), "broker-a");
  EXPECT_EQ(request.body, (std::vector<uint8_t>{1, 2}));
  header.maxReconsumeTimes.reset();
  EXPECT_FALSE(build_send_message_v2(header, {1}).ext_fields.contains("l"));
}

// The producer frames its body from outside the request: the header-only
// build must be the full one without the body, field for field.
TEST(MQClientAPI, SendMessageV2HeaderIsTheRequestWithoutItsBody) {
  SendMessageRequestHeader header;
  header.producerGroup = "a_producer_group_longer_than_sso";
  header.topic = "%RETRY%a_consumer_group_longer_than_sso";
  header.defaultTopic = "TBW102";
  header.properties = "UNIQ_KEY\00101020304050607080910111213141516\002WAIT\001true\002";
  header.maxReconsumeTimes = 16;
  header.reconsumeTimes = 2;
  header.brokerName = "broker-a";
  EXPECT_EQ(build_send_message_v2_header(header), build_send_message_v2(header, {}));
  EXPECT_EQ(build_send_message_v2_header(header).ext_fields.size(), 14u);
  header.maxReconsumeTimes.reset();
  header.brokerName = {};
  EXPECT_EQ(build_send_message_v2_header(header), build_send_message_v2(header, {}));
  EXPECT_EQ(build_send_message_v2_header(header).ext_fields.size(), 12u);
  EXPECT_TRUE(build_send_message_v2_header(header).body.empty());
}

TEST(MQClientAPI, PullAnswersMapToPullStatus) {
  const std::pair<int32_t, PullStatus> cases[] = {{ResponseCode::SUCCESS, PullStatus::FOUND},
                                                  {ResponseCode::PULL_NOT_FOUND, PullStatus::NO_NEW_MSG},
                                                  {ResponseCode::PULL_RETRY_IMMEDIATELY, PullStatus::NO_MATCHED_MSG},
                                                  {ResponseCode::PULL_OFFSET_MOVED, PullStatus::OFFSET_ILLEGAL}};
  for (const auto& [code, status] : cases) {
    RemotingCommand answer = response(code);
    answer.set_ext_int("nextBeginOffset", 7);
    answer.set_ext_int("minOffset", 1);
    answer.set_ext_int("maxOffset", 9);
    answer.set_ext_int("suggestWhichBrokerId", 1);
    const Result<PullResponse> pulled = parse_pull_message(std::move(answer));
    ASSERT_TRUE(pulled.ok()) << pulled.status().to_string();
    EXPECT_EQ(pulled->status, status);
    EXPECT_EQ(pulled->nextBeginOffset, 7);
    EXPECT_EQ(pulled->suggestWhichBrokerId, 1);
  }
  EXPECT_FALSE(parse_pull_message(response(ResponseCode::PULL_NOT_FOUND)).ok());  // no nextBeginOffset
  const Result<PullResponse> error = parse_pull_message(response(ResponseCode::SUBSCRIPTION_NOT_LATEST));
  EXPECT_EQ(error.status().code(), StatusCode::kUnavailable);
}

TEST(MQClientAPI, PullFlagsDecideWhatIsSent) {
  PullMessageRequestHeader header;
  header.sysFlag = kPullFlagSuspend;
  header.subscription = "TagA";
  EXPECT_FALSE(build_pull_message(header).ext_fields.contains("subscription"));
  header.sysFlag |= kPullFlagSubscription | kPullFlagCommitOffset;
  header.commitOffset = 5;
  const RemotingCommand request = build_pull_message(header);
  EXPECT_EQ(request.ext_fields.at("subscription"), "TagA");
  EXPECT_EQ(request.ext_fields.at("sysFlag"), "7");
  EXPECT_EQ(request.ext_fields.at("commitOffset"), "5");
  EXPECT_EQ(request.ext_fields.at("suspendTimeoutMillis"), "15000");
}

TEST(MQClientAPI, OffsetsAndErrors) {
  RemotingCommand answer = response(ResponseCode::SUCCESS);
  answer.set_ext_int("offset", 42);
  EXPECT_EQ(parse_offset(answer, "GET_MAX_OFFSET").value(), 42);
  EXPECT_EQ(parse_offset(response(ResponseCode::SUCCESS), "x").status().code(), StatusCode::kInvalidArgument);
  RemotingCommand none = response(ResponseCode::QUERY_NOT_FOUND);
  none.remark = "Not found";
  const Status status = parse_offset(none, "QUERY_CONSUMER_OFFSET").status();
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.message().find("QUERY_NOT_FOUND(22): Not found"), std::string::npos);
}

TEST(MQClientAPI, ConsumerListRoundTrips) {
  RemotingCommand answer = response(ResponseCode::SUCCESS);
  const std::string body = consumer_list_body({"10.0.0.1@a", "10.0.0.2@b"});
  answer.body.assign(body.begin(), body.end());
  EXPECT_EQ(parse_consumer_list(answer).value(), (std::vector<std::string>{"10.0.0.1@a", "10.0.0.2@b"}));
  answer.body = {'{', '}'};
  EXPECT_FALSE(parse_consumer_list(answer).ok());
  EXPECT_FALSE(parse_consumer_list(response(ResponseCode::SYSTEM_ERROR)).ok());
}

TEST(MQClientAPI, ClusterInfoReadsBothJsonForms) {
  ClusterInfo info;
  info.brokerAddrTable["broker-a"] = {"DefaultCluster", "broker-a", {{0, "10.0.0.2:10911"}, {1, "10.0.0.4:10911"}}};
  info.clusterAddrTable["DefaultCluster"] = {"broker-a"};
  EXPECT_EQ(ClusterInfo::parse(info.to_json()).value(), info);
  const std::string fastjson =
      R"({"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"10.0.0.2:10911",1:"10.0.0.4:10911"},)"
      R"("brokerName":"broker-a","cluster":"DefaultCluster"}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}})";
  EXPECT_EQ(ClusterInfo::parse(fastjson).value(), info);
  EXPECT_FALSE(ClusterInfo::parse("[1]").ok());
  EXPECT_FALSE(ClusterInfo::parse(R"({"clusterAddrTable":{"c":"not a list"}})").ok());
}

TEST(MQClientAPI, UnregisterLeavesOutEmptyGroups) {
  const RemotingCommand request = build_unregister_client("ip@i", "PG", "");
  EXPECT_EQ(request.ext_fields.at("clientID"), "ip@i");
  EXPECT_EQ(request.ext_fields.at("producerGroup"), "PG");
  EXPECT_FALSE(request.ext_fields.contains("consumerGroup"));
}

}  // namespace
}  // namespace mqlab::client::api::mq_client_api_test
