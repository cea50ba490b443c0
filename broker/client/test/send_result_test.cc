// SendResult classification: every response code a send can get back and the
// transport failures RemotingClient reports, sorted into stored / retry /
// stop, with whether the message may have been stored.
#include <gtest/gtest.h>

#include "broker/client/send_result.h"
#include "broker/remoting/response_code.h"

namespace mqlab::client::send_result_test {
namespace {

using remoting::RemotingCommand;
using remoting::ResponseCode;

AttemptOutcome classify_code(int32_t code, std::string remark = "") {
  RemotingCommand response;
  response.code = code;
  response.remark = std::move(remark);
  response.mark_response();
  return classify_send_response(response);
}

TEST(SendResult, StoredCodesMapToTheirStatus) {
  const std::pair<int32_t, SendStatus> cases[] = {
      {ResponseCode::SUCCESS, SendStatus::SEND_OK},
      {ResponseCode::FLUSH_DISK_TIMEOUT, SendStatus::FLUSH_DISK_TIMEOUT},
      {ResponseCode::SLAVE_NOT_AVAILABLE, SendStatus::SLAVE_NOT_AVAILABLE},
      {ResponseCode::FLUSH_SLAVE_TIMEOUT, SendStatus::FLUSH_SLAVE_TIMEOUT},
  };
  for (const auto& [code, status] : cases) {
    const AttemptOutcome outcome = classify_code(code);
    EXPECT_EQ(outcome.verdict, AttemptVerdict::kStored) << code;
    EXPECT_EQ(outcome.stored_status, status) << code;
    EXPECT_TRUE(is_stored(status));
  }
  EXPECT_FALSE(is_stored(SendStatus::FAILED));
  EXPECT_FALSE(is_stored(SendStatus::UNKNOWN));
}

// A plain SUCCESS (nearly every send) gets no remark formatted; one the
// broker gave a remark keeps it, as the other codes do.
TEST(SendResult, PlainSuccessIsStoredWithoutARemark) {
  const AttemptOutcome plain = classify_code(ResponseCode::SUCCESS);
  EXPECT_EQ(plain.verdict, AttemptVerdict::kStored);
  EXPECT_EQ(plain.stored_status, SendStatus::SEND_OK);
  EXPECT_EQ(plain.code, ResponseCode::SUCCESS);
  EXPECT_FALSE(plain.may_be_stored);
  EXPECT_EQ(plain.remark, "");
  const AttemptOutcome remarked = classify_code(ResponseCode::SUCCESS, "why");
  EXPECT_EQ(remarked.verdict, AttemptVerdict::kStored);
  EXPECT_EQ(remarked.stored_status, SendStatus::SEND_OK);
  EXPECT_EQ(remarked.remark, "SUCCESS(0): why");
}

TEST(SendResult, JavasRetryCodesTryAnotherBrokerAndWereNotStored) {
  for (int32_t code : {ResponseCode::SYSTEM_ERROR, ResponseCode::SERVICE_NOT_AVAILABLE, ResponseCode::NO_PERMISSION,
                       ResponseCode::TOPIC_NOT_EXIST, ResponseCode::NO_BUYER_ID, ResponseCode::NOT_IN_CURRENT_UNIT}) {
    const AttemptOutcome outcome = classify_code(code, "why");
    EXPECT_EQ(outcome.verdict, AttemptVerdict::kRetry) << code;
    EXPECT_FALSE(outcome.may_be_stored) << code;
    EXPECT_EQ(outcome.code, code);
    EXPECT_NE(outcome.remark.find("why"), std::string::npos);
  }
}

TEST(SendResult, OtherErrorCodesStopAtOnce) {
  for (int32_t code : {ResponseCode::SYSTEM_BUSY, ResponseCode::MESSAGE_ILLEGAL, ResponseCode::REQUEST_CODE_NOT_SUPPORTED,
                       ResponseCode::VERSION_NOT_SUPPORTED, 4242}) {
    const AttemptOutcome outcome = classify_code(code);
    EXPECT_EQ(outcome.verdict, AttemptVerdict::kStop) << code;
    EXPECT_FALSE(outcome.may_be_stored) << code;
  }
  EXPECT_NE(classify_code(ResponseCode::MESSAGE_ILLEGAL).remark.find("MESSAGE_ILLEGAL(13)"), std::string::npos);
}

TEST(SendResult, TransportFailuresRetryAndMayHaveStoredUnlessNeverWritten) {
  const AttemptOutcome timeout =
      classify_send_response(Status::Timeout("SEND_MESSAGE_V2(310) opaque=3 to a:1: no response within 3000 ms"));
  EXPECT_EQ(timeout.verdict, AttemptVerdict::kRetry);
  EXPECT_TRUE(timeout.may_be_stored);
  EXPECT_EQ(timeout.code, -1);
  EXPECT_TRUE(classify_send_response(Status::Unavailable("connection to a:1 broke: IoError: connection reset by peer: a:1"))
                  .may_be_stored);
  EXPECT_FALSE(classify_send_response(
                   Status::Unavailable("connect to a:1 failed: Unavailable: connection refused: a:1"))
                   .may_be_stored);
  EXPECT_FALSE(classify_send_response(Status::Unavailable("connect to a:1 failed: Timeout: connect timed out after 3000 ms: a:1"))
                   .may_be_stored);
  EXPECT_FALSE(classify_send_response(Status::InvalidArgument("address 'x': expected host:port")).may_be_stored);
}

TEST(SendResult, StatusNamesAreJavas) {
  EXPECT_EQ(send_status_name(SendStatus::SEND_OK), "SEND_OK");
  EXPECT_EQ(send_status_name(SendStatus::FLUSH_SLAVE_TIMEOUT), "FLUSH_SLAVE_TIMEOUT");
  EXPECT_EQ(send_status_name(SendStatus::UNKNOWN), "UNKNOWN");
}

}  // namespace
}  // namespace mqlab::client::send_result_test
