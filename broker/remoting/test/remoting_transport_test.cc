// RemotingServer and RemotingClient against their headers' contracts: request
// and response matched by opaque, oneway, late answers, unknown codes,
// timeouts, a killed server, bad input closing only its own connection, the
// output limit. Runs on the simulator (a server and a client process sharing
// one loopback network, virtual time), plus one exchange over real TCP on
// 127.0.0.1 through PosixEnv.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "broker/common/big_endian.h"
#include "broker/env/loopback_network.h"
#include "broker/env/posix_env.h"
#include "broker/remoting/remoting_client.h"
#include "broker/remoting/remoting_server.h"
#include "broker/remoting/response_code.h"
#include "broker/remoting/test/remoting_test_util.h"
#include "broker/remoting/test/sim_remoting_pair.h"
#include "broker/remoting/written_json_header.h"
#include "sim/scheduler.h"
#include "sim/sim_env.h"

namespace mqlab::remoting::remoting_transport_test {
namespace {

using test_support::Bytes;
using test_support::RawPeer;
using test_support::SimRemotingPair;
using test_support::frame_with_header;
using test_support::to_bytes;

// Request codes of the test processors (not RocketMQ's).
constexpr int32_t kEcho = 1000;  // answers at once with the request's ext and body
constexpr int32_t kPark = 1001;  // keeps the channel; the test answers later
constexpr int32_t kBig = 1002;   // answers with a body of ext "size" bytes
// Answers as kEcho but remark "written", with the header written by the
// processor (reply_written) when the request came with the JSON header.
constexpr int32_t kWritten = 1003;

// What one invoke came to, and when.
struct Outcome {
  std::optional<Result<RemotingCommand>> result;
  Nanos at = -1;
  bool done() const { return result.has_value(); }
  const RemotingCommand& response() const { return result->value(); }
  StatusCode code() const { return result->status().code(); }
};

struct Parked {
  RemotingCommand request;
  ResponseChannel channel;
};

class RemotingTransportTest : public SimRemotingPair {
 protected:
  RemotingTransportTest() : SimRemotingPair(seconds(60)) {}

  void SetUp() override {
    SimRemotingPair::SetUp();
    start_server({});
  }

  void start_server(RemotingServerOptions options) {
    server_ = std::make_unique<RemotingServer>(*server_env_, "test-server", options);
    server_->register_processor(kEcho, [this](const RemotingCommand& request, ResponseChannel channel) {
      seen_.push_back(request);
      seen_remote_addresses_.push_back(channel.remote_address());
      RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
      response.ext_fields = request.ext_fields;
      response.body = request.body;
      channel.reply(std::move(response));
    });
    server_->register_processor(kPark, [this](const RemotingCommand& request, ResponseChannel channel) {
      parked_.push_back(Parked{request, std::move(channel)});
    });
    server_->register_processor(kBig, [](const RemotingCommand& request, ResponseChannel channel) {
      RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
      response.body.assign(static_cast<size_t>(request.ext_int("size").value()), 'x');
      channel.reply(std::move(response));
    });
    server_->register_processor(kWritten, [this](const RemotingCommand& request, ResponseChannel channel) {
      seen_.push_back(request);
      const std::string tag(request.find_ext("tag") != nullptr ? *request.find_ext("tag") : "");
      if (!channel.answers_json()) return channel.reply(written_answer(request));
      channel.reply_written(
          [&tag](int32_t opaque, std::vector<uint8_t>& out) {
            VectorSink sink{out};
            write_json_header(sink, ResponseCode::SUCCESS, kFlagResponse, opaque, "written",
                              [&tag](auto& fields) { fields.string("\"tag\":", tag); });
          },
          request.body);
    });
    ASSERT_TRUE(server_->start(kServerAddress).ok());
    ASSERT_EQ(server_->address(), kServerAddress);
  }

  // kWritten's answer to request, as a command.
  static RemotingCommand written_answer(const RemotingCommand& request) {
    RemotingCommand response = request.make_response(ResponseCode::SUCCESS, "written");
    if (const std::string_view* tag = request.find_ext("tag")) response.ext_fields.insert_or_assign("tag", *tag);
    response.body = request.body;
    return response;
  }

  std::shared_ptr<Outcome> call(RemotingCommand request, Nanos timeout = seconds(3)) {
    auto outcome = std::make_shared<Outcome>();
    client_->invoke(kServerAddress, std::move(request), timeout, [this, outcome](Result<RemotingCommand> result) {
      EXPECT_FALSE(outcome->done()) << "a callback ran twice";
      outcome->result = std::move(result);
      outcome->at = scheduler_.now();
    });
    EXPECT_FALSE(outcome->done()) << "a callback ran inside invoke()";
    return outcome;
  }

  static RemotingCommand echo_request(std::string tag) {
    RemotingCommand request = RemotingCommand::make_request(kEcho, {{"tag", tag}});
    request.body = to_bytes("body of " + tag);
    return request;
  }

  // A successful echo proves the server still serves this client.
  void expect_echo_works(const std::string& tag) {
    const std::shared_ptr<Outcome> outcome = call(echo_request(tag));
    ASSERT_TRUE(run_until([&] { return outcome->done(); }));
    ASSERT_TRUE(outcome->result->ok()) << outcome->result->status().to_string();
    EXPECT_EQ(outcome->response().code, ResponseCode::SUCCESS);
    EXPECT_EQ(*outcome->response().find_ext("tag"), tag);
  }

  std::shared_ptr<RawPeer> connect_raw() { return SimRemotingPair::connect_raw(kServerAddress); }

  static constexpr const char* kServerAddress = "10.0.0.1:9876";

  // Declared after the processes, so destroyed before them.
  std::vector<RemotingCommand> seen_;
  std::vector<std::string> seen_remote_addresses_;
  std::vector<Parked> parked_;
  std::unique_ptr<RemotingServer> server_;
};

TEST_F(RemotingTransportTest, RequestGetsItsResponse) {
  const std::shared_ptr<Outcome> outcome = call(echo_request("a"));
  ASSERT_TRUE(run_until([&] { return outcome->done(); }));
  ASSERT_TRUE(outcome->result->ok());
  const RemotingCommand& response = outcome->response();
  EXPECT_TRUE(response.is_response());
  EXPECT_EQ(response.code, ResponseCode::SUCCESS);
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_NE(seen_[0].opaque, 0);
  EXPECT_EQ(response.opaque, seen_[0].opaque);
  EXPECT_EQ(*response.find_ext("tag"), "a");
  EXPECT_EQ(response.body, to_bytes("body of a"));
  EXPECT_EQ(seen_remote_addresses_[0].rfind("10.0.0.2:", 0), 0u) << seen_remote_addresses_[0];
  EXPECT_EQ(server_->stats().requests, 1u);
  EXPECT_EQ(server_->stats().connections_accepted, 1u);
  EXPECT_EQ(client_->pending_requests(), 0u);
}

TEST_F(RemotingTransportTest, ConcurrentRequestsAreMatchedByOpaque) {
  constexpr int kRequests = 200;
  std::vector<std::shared_ptr<Outcome>> outcomes;
  for (int i = 0; i < kRequests; ++i) {
    outcomes.push_back(call(RemotingCommand::make_request(kPark, {{"i", std::to_string(i)}})));
  }
  EXPECT_EQ(client_->pending_requests(), static_cast<size_t>(kRequests));
  ASSERT_TRUE(run_until([&] { return parked_.size() == kRequests; }));
  // Answered in reverse: only the opaque can pair them up.
  std::set<int32_t> opaques;
  for (auto it = parked_.rbegin(); it != parked_.rend(); ++it) {
    opaques.insert(it->request.opaque);
    RemotingCommand response = it->request.make_response(ResponseCode::SUCCESS);
    response.ext_fields = it->request.ext_fields;
    it->channel.reply(std::move(response));
  }
  EXPECT_EQ(opaques.size(), static_cast<size_t>(kRequests));
  EXPECT_FALSE(opaques.contains(0));
  ASSERT_TRUE(run_until([&] { return outcomes.back()->done() && outcomes.front()->done(); }));
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_TRUE(outcomes[i]->result->ok());
    EXPECT_EQ(*outcomes[i]->response().find_ext("i"), std::to_string(i));
  }
  EXPECT_EQ(server_->stats().connections_accepted, 1u);  // one connection per address
  EXPECT_EQ(client_->pending_requests(), 0u);
}

TEST_F(RemotingTransportTest, OnewayIsProcessedButNeverAnswered) {
  std::optional<Status> written;
  client_->invoke_oneway(kServerAddress, echo_request("oneway"), [&](Status status) { written = status; });
  EXPECT_FALSE(written.has_value());
  ASSERT_TRUE(run_until([&] { return seen_.size() == 1 && written.has_value(); }));
  EXPECT_TRUE(written->ok());
  EXPECT_TRUE(seen_[0].is_oneway());

  // On the wire: the server answers the second frame only.
  const std::shared_ptr<RawPeer> peer = connect_raw();
  RemotingCommand oneway = echo_request("quiet");
  oneway.opaque = 5;
  oneway.mark_oneway();
  RemotingCommand normal = echo_request("loud");
  normal.opaque = 6;
  Bytes bytes = encode_frame(oneway);
  const Bytes second = encode_frame(normal);
  bytes.insert(bytes.end(), second.begin(), second.end());
  peer->connection->send(bytes);
  ASSERT_TRUE(run_until([&] { return seen_.size() == 3 && !peer->received.empty(); }));
  scheduler_.run_for(millis(10));
  FrameDecoder decoder;
  decoder.feed(peer->received);
  const test_support::Drained drained = test_support::drain(decoder);
  ASSERT_TRUE(drained.status.ok());
  ASSERT_EQ(drained.commands.size(), 1u);
  EXPECT_EQ(drained.commands[0].opaque, 6);
  EXPECT_EQ(*drained.commands[0].find_ext("tag"), "loud");
}

// A header the processor writes itself goes out as the frame reply() would
// send for the same answer: the request's opaque, the response flag, the
// body after it; a oneway request is not answered either way.
TEST_F(RemotingTransportTest, AWrittenReplyIsTheFrameOfTheSameAnswer) {
  const std::shared_ptr<RawPeer> peer = connect_raw();
  RemotingCommand oneway = RemotingCommand::make_request(kWritten, {{"tag", "quiet"}});
  oneway.opaque = 5;
  oneway.mark_oneway();
  RemotingCommand request = RemotingCommand::make_request(kWritten, {{"tag", "loud \"one\""}});
  request.opaque = 6;
  request.body = to_bytes("the body");
  Bytes bytes = encode_frame(oneway);
  const Bytes second = encode_frame(request);
  bytes.insert(bytes.end(), second.begin(), second.end());
  peer->connection->send(bytes);
  ASSERT_TRUE(run_until([&] { return seen_.size() == 2 && !peer->received.empty(); }));
  scheduler_.run_for(millis(10));
  EXPECT_EQ(peer->received, encode_frame(written_answer(request)));

  // Through the client: what it decodes.
  const std::shared_ptr<Outcome> outcome = call(RemotingCommand::make_request(kWritten, {{"tag", "via client"}}));
  ASSERT_TRUE(run_until([&] { return outcome->done(); }));
  ASSERT_TRUE(outcome->result->ok()) << outcome->result->status().to_string();
  EXPECT_EQ(outcome->response().remark, "written");
  EXPECT_EQ(*outcome->response().find_ext("tag"), "via client");
}

// A request in the ROCKETMQ header is answered in kind: the processor asks
// answers_json() and replies with a command instead.
TEST_F(RemotingTransportTest, ARequestInTheRocketmqHeaderIsNotAnsweredWithAWrittenOne) {
  RemotingCommand request = RemotingCommand::make_request(kWritten, {{"tag", "binary"}});
  request.serialize_type = SerializeType::ROCKETMQ;
  const std::shared_ptr<Outcome> outcome = call(std::move(request));
  ASSERT_TRUE(run_until([&] { return outcome->done(); }));
  ASSERT_TRUE(outcome->result->ok()) << outcome->result->status().to_string();
  EXPECT_EQ(outcome->response().serialize_type, SerializeType::ROCKETMQ);
  EXPECT_EQ(outcome->response().remark, "written");
  EXPECT_EQ(*outcome->response().find_ext("tag"), "binary");
}

TEST_F(RemotingTransportTest, ProcessorMayAnswerLater) {
  const std::shared_ptr<Outcome> outcome = call(RemotingCommand::make_request(kPark), seconds(10));
  ASSERT_TRUE(run_until([&] { return parked_.size() == 1; }));
  scheduler_.run_for(seconds(5));
  EXPECT_FALSE(outcome->done());
  EXPECT_TRUE(parked_[0].channel.connection_open());
  EXPECT_FALSE(parked_[0].channel.answered());
  // The channel is move-only: the answer goes with a move, and the one
  // left behind counts as answered.
  ResponseChannel channel = std::move(parked_[0].channel);
  EXPECT_TRUE(parked_[0].channel.answered());  // NOLINT(bugprone-use-after-move): answered by contract
  EXPECT_FALSE(channel.answered());
  // The address goes with the move too (a channel moves several times a
  // message); the one left behind still names its request if answered.
  EXPECT_EQ(channel.remote_address().rfind("10.0.0.2:", 0), 0u) << channel.remote_address();
  EXPECT_DEATH(parked_[0].channel.remote_address(), "moved-from response channel");  // NOLINT(bugprone-use-after-move)
  channel.reply(ResponseCode::PULL_NOT_FOUND, "nothing yet");
  EXPECT_TRUE(channel.answered());
  EXPECT_DEATH(channel.reply(ResponseCode::SUCCESS), "from 10.0.0.2:[0-9]+ answered twice");
  EXPECT_DEATH(parked_[0].channel.reply(ResponseCode::SUCCESS),  // NOLINT(bugprone-use-after-move)
               "from a moved-from channel answered twice");
  ASSERT_TRUE(run_until([&] { return outcome->done(); }));
  ASSERT_TRUE(outcome->result->ok());
  EXPECT_EQ(outcome->response().code, ResponseCode::PULL_NOT_FOUND);
  EXPECT_EQ(outcome->response().remark, "nothing yet");
  EXPECT_GE(outcome->at, seconds(5));
}

TEST_F(RemotingTransportTest, UnknownCodeIsNotSupported) {
  const std::shared_ptr<Outcome> outcome = call(RemotingCommand::make_request(4242));
  ASSERT_TRUE(run_until([&] { return outcome->done(); }));
  ASSERT_TRUE(outcome->result->ok());
  EXPECT_EQ(outcome->response().code, ResponseCode::REQUEST_CODE_NOT_SUPPORTED);
  EXPECT_EQ(outcome->response().remark, "request type 4242 not supported");
  EXPECT_EQ(server_->stats().unsupported_requests, 1u);
  expect_echo_works("still serving");
}

TEST_F(RemotingTransportTest, ResponseUsesTheRequestsSerializeType) {
  RemotingCommand request = echo_request("binary");
  request.serialize_type = SerializeType::ROCKETMQ;
  const std::shared_ptr<Outcome> outcome = call(std::move(request));
  ASSERT_TRUE(run_until([&] { return outcome->done(); }));
  ASSERT_TRUE(outcome->result->ok());
  EXPECT_EQ(outcome->response().serialize_type, SerializeType::ROCKETMQ);
  EXPECT_EQ(*outcome->response().find_ext("tag"), "binary");
}

TEST_F(RemotingTransportTest, SerializeTypeOptionSendsEveryRequestInThatType) {
  RemotingClientOptions options;
  options.serialize_type = SerializeType::ROCKETMQ;  // -Drocketmq.serialize.type=ROCKETMQ
  client_ = std::make_unique<RemotingClient>(*client_env_, options);
  RemotingCommand request = echo_request("binary");
  ASSERT_EQ(request.serialize_type, SerializeType::JSON);  // what make_request chose
  const std::shared_ptr<Outcome> outcome = call(std::move(request));
  ASSERT_TRUE(run_until([&] { return outcome->done(); }));
  ASSERT_TRUE(outcome->result->ok()) << outcome->result->status().to_string();
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_EQ(seen_[0].serialize_type, SerializeType::ROCKETMQ) << "the option, not the request, decides";
  EXPECT_EQ(outcome->response().serialize_type, SerializeType::ROCKETMQ);
  EXPECT_EQ(*outcome->response().find_ext("tag"), "binary");
  EXPECT_EQ(outcome->response().body, to_bytes("body of binary"));
}

TEST_F(RemotingTransportTest, TimeoutClosesTheConnectionAndTheNextCallReconnects) {
  const std::shared_ptr<Outcome> slow = call(RemotingCommand::make_request(kPark), seconds(1));
  const std::shared_ptr<Outcome> other = call(RemotingCommand::make_request(kPark), seconds(30));
  ASSERT_TRUE(run_until([&] { return slow->done() && other->done(); }));
  EXPECT_EQ(slow->code(), StatusCode::kTimeout);
  EXPECT_EQ(slow->at, seconds(1));
  // The connection closed under the other request.
  EXPECT_EQ(other->code(), StatusCode::kUnavailable);
  EXPECT_EQ(other->at, seconds(1));
  EXPECT_EQ(client_->pending_requests(), 0u);
  ASSERT_TRUE(run_until([&] { return server_->connection_count() == 0; }));
  ASSERT_EQ(parked_.size(), 2u);
  EXPECT_FALSE(parked_[0].channel.connection_open());
  parked_[0].channel.reply(ResponseCode::SUCCESS);  // swallowed: nobody to tell

  expect_echo_works("after reconnect");
  EXPECT_EQ(server_->stats().connections_accepted, 2u);
}

// One timer serves a connection's timeouts: a request issued later with a
// shorter timeout still times out first, at its own deadline, and the first
// one's timeout was not lost meanwhile (it closed the connection instead).
TEST_F(RemotingTransportTest, ALaterRequestWithAShorterTimeoutTimesOutFirst) {
  const std::shared_ptr<Outcome> long_wait = call(RemotingCommand::make_request(kPark), seconds(10));
  scheduler_.run_for(seconds(1));
  const std::shared_ptr<Outcome> short_wait = call(RemotingCommand::make_request(kPark), seconds(2));
  ASSERT_TRUE(run_until([&] { return long_wait->done() && short_wait->done(); }));
  EXPECT_EQ(short_wait->code(), StatusCode::kTimeout);
  EXPECT_EQ(short_wait->at, seconds(3));
  EXPECT_EQ(long_wait->code(), StatusCode::kUnavailable);
  EXPECT_EQ(long_wait->at, seconds(3));
}

// An answer leaves the timer armed at its request's deadline; firing then
// with nothing due must wait on for the next deadline, neither timing a
// request out early nor forgetting it.
TEST_F(RemotingTransportTest, AnAnsweredRequestsDeadlineDoesNotTimeOutTheNext) {
  const std::shared_ptr<Outcome> answered = call(RemotingCommand::make_request(kPark), seconds(2));
  scheduler_.run_for(seconds(1));
  const std::shared_ptr<Outcome> slow = call(RemotingCommand::make_request(kPark), seconds(5));
  ASSERT_TRUE(run_until([&] { return parked_.size() == 2; }));
  parked_[0].channel.reply(ResponseCode::SUCCESS);
  ASSERT_TRUE(run_until([&] { return answered->done(); }));
  ASSERT_TRUE(answered->result->ok());
  scheduler_.run_for(seconds(4));  // past the answered one's deadline (2 s), before the slow one's (6 s)
  EXPECT_FALSE(slow->done());
  ASSERT_TRUE(run_until([&] { return slow->done(); }));
  EXPECT_EQ(slow->code(), StatusCode::kTimeout);
  EXPECT_EQ(slow->at, seconds(6));
  expect_echo_works("after the timeout");
}

// invoke's body argument frames the caller's bytes as the request's body
// and leaves the caller's request for the next send.
TEST_F(RemotingTransportTest, ABodyFromOutsideTheRequestIsSentAsItsBody) {
  RemotingCommand request = RemotingCommand::make_request(kEcho, {{"tag", "kept"}});
  const Bytes body = to_bytes("a body kept by the caller");
  std::vector<std::shared_ptr<Outcome>> outcomes;
  for (int i = 0; i < 2; ++i) {
    auto outcome = std::make_shared<Outcome>();
    client_->invoke(kServerAddress, request, body, seconds(3),
                    [outcome](Result<RemotingCommand> result) { outcome->result = std::move(result); });
    EXPECT_GT(request.opaque, 0);  // the opaque it went out with
    EXPECT_TRUE(request.body.empty());
    outcomes.push_back(outcome);
  }
  ASSERT_TRUE(run_until([&] { return outcomes[0]->done() && outcomes[1]->done(); }));
  ASSERT_EQ(seen_.size(), 2u);
  EXPECT_NE(seen_[0].opaque, seen_[1].opaque);
  for (const std::shared_ptr<Outcome>& outcome : outcomes) {
    ASSERT_TRUE(outcome->result->ok()) << outcome->result->status().to_string();
    EXPECT_EQ(outcome->response().body, body);
    EXPECT_EQ(*outcome->response().find_ext("tag"), "kept");
  }
}

TEST_F(RemotingTransportTest, KilledServerFailsPendingRequestsWithUnavailable) {
  const std::shared_ptr<Outcome> first = call(RemotingCommand::make_request(kPark), seconds(30));
  const std::shared_ptr<Outcome> second = call(RemotingCommand::make_request(kPark), seconds(30));
  ASSERT_TRUE(run_until([&] { return parked_.size() == 2; }));
  server_process_.kill();
  parked_.clear();
  server_.reset();  // the dead incarnation's objects go
  ASSERT_TRUE(run_until([&] { return first->done() && second->done(); }));
  EXPECT_EQ(first->code(), StatusCode::kUnavailable);
  EXPECT_EQ(second->code(), StatusCode::kUnavailable);
  EXPECT_LT(first->at, seconds(1));

  const std::shared_ptr<Outcome> refused = call(echo_request("nobody home"));
  ASSERT_TRUE(run_until([&] { return refused->done(); }));
  EXPECT_EQ(refused->code(), StatusCode::kUnavailable);
}

TEST_F(RemotingTransportTest, ConnectionClosedListenerHearsTheClientLeave) {
  std::vector<std::string> closed;
  server_->set_connection_closed_listener([&](const std::string& remote) { closed.push_back(remote); });
  expect_echo_works("hello");
  expect_echo_works("hello again");  // the client now remembers the connection (connection_to's memo)
  client_->close_connection(kServerAddress);
  ASSERT_TRUE(run_until([&] { return !closed.empty(); }));
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0], seen_remote_addresses_[0]);
  EXPECT_EQ(server_->connection_count(), 0u);
  // Forgotten with it: the next call dials a new connection.
  expect_echo_works("after close");
  EXPECT_EQ(server_->stats().connections_accepted, 2u);
}

TEST_F(RemotingTransportTest, ShutdownAbortsPendingRequests) {
  const std::shared_ptr<Outcome> outcome = call(RemotingCommand::make_request(kPark), seconds(30));
  ASSERT_TRUE(run_until([&] { return parked_.size() == 1; }));
  client_->shutdown();
  EXPECT_FALSE(outcome->done());  // not inline
  ASSERT_TRUE(run_until([&] { return outcome->done(); }));
  EXPECT_EQ(outcome->code(), StatusCode::kAborted);
}

TEST_F(RemotingTransportTest, CallbacksMayCallBackIntoTheClient) {
  std::shared_ptr<Outcome> second;
  client_->invoke(kServerAddress, echo_request("first"), seconds(3), [&](Result<RemotingCommand> result) {
    ASSERT_TRUE(result.ok());
    second = call(echo_request("second"));
  });
  ASSERT_TRUE(run_until([&] { return second != nullptr && second->done(); }));
  ASSERT_TRUE(second->result->ok());
  EXPECT_EQ(*second->response().find_ext("tag"), "second");
}

// A response's callback runs inside the client's read of the stream; one
// that destroys the client there must not disturb the responses behind it:
// their requests fail with Aborted, each callback once.
TEST_F(RemotingTransportTest, ACallbackMayDestroyTheClientWhileResponsesArrive) {
  int first_ran = 0;
  client_->invoke(kServerAddress, RemotingCommand::make_request(kPark), seconds(30), [&](Result<RemotingCommand> result) {
    ++first_ran;
    EXPECT_TRUE(result.ok()) << result.status().to_string();
    client_.reset();
  });
  const std::shared_ptr<Outcome> second = call(RemotingCommand::make_request(kPark), seconds(30));
  const std::shared_ptr<Outcome> third = call(RemotingCommand::make_request(kPark), seconds(30));
  ASSERT_TRUE(run_until([&] { return parked_.size() == 3; }));
  for (Parked& parked : parked_) parked.channel.reply(parked.request.make_response(ResponseCode::SUCCESS));
  ASSERT_TRUE(run_until([&] { return second->done() && third->done(); }));
  EXPECT_EQ(first_ran, 1);
  EXPECT_EQ(client_, nullptr);
  EXPECT_EQ(second->code(), StatusCode::kAborted);
  EXPECT_EQ(third->code(), StatusCode::kAborted);
}

TEST_F(RemotingTransportTest, OutputOverTheLimitClosesTheConnection) {
  server_.reset();
  start_server(RemotingServerOptions{.max_pending_output_bytes = 4096});
  const std::shared_ptr<Outcome> small = call(RemotingCommand::make_request(kBig, {{"size", "100"}}));
  ASSERT_TRUE(run_until([&] { return small->done(); }));
  ASSERT_TRUE(small->result->ok());
  EXPECT_EQ(small->response().body.size(), 100u);
  const std::shared_ptr<Outcome> big = call(RemotingCommand::make_request(kBig, {{"size", "10000"}}));
  ASSERT_TRUE(run_until([&] { return big->done(); }));
  EXPECT_EQ(big->code(), StatusCode::kUnavailable);
  expect_echo_works("a fresh connection");
}

// --- bad input ----------------------------------------------------------------------

struct BadInput {
  std::string name;
  Bytes bytes;
};

Bytes length_prefix(uint32_t total_length, uint32_t header_length_field) {
  Bytes bytes(8);
  put_u32_be(bytes.data(), total_length);
  put_u32_be(bytes.data() + 4, header_length_field);
  return bytes;
}

std::vector<BadInput> bad_inputs() {
  return {
      {"garbage", to_bytes("GET / HTTP/1.1\r\nHost: broker\r\n\r\n")},
      {"oversized_frame", length_prefix(16 * 1024 * 1024 + 1, 10)},
      {"negative_length", length_prefix(0xFFFFFFFF, 0)},
      {"header_length_past_the_frame", length_prefix(4 + 2, 100)},
      {"invalid_json_header", frame_with_header(R"({"code":)")},
      {"json_header_not_an_object", frame_with_header("[1,2,3]")},
      {"unknown_serialize_type", frame_with_header(R"({"code":1000})", "", 7)},
  };
}

class RemotingBadInputTest : public RemotingTransportTest, public ::testing::WithParamInterface<BadInput> {};

TEST_P(RemotingBadInputTest, ClosesOnlyThatConnection) {
  expect_echo_works("before");
  const std::shared_ptr<RawPeer> peer = connect_raw();
  ASSERT_TRUE(run_until([&] { return server_->connection_count() == 2; }));
  peer->connection->send(GetParam().bytes);
  ASSERT_TRUE(run_until([&] { return peer->closed.has_value(); }));
  EXPECT_EQ(peer->closed->code(), StatusCode::kUnavailable) << peer->closed->to_string();  // closed by the server
  EXPECT_TRUE(peer->received.empty());
  EXPECT_EQ(server_->stats().connections_closed_for_bad_input, 1u);
  EXPECT_EQ(server_->connection_count(), 1u);
  expect_echo_works("after");
  EXPECT_EQ(server_->stats().connections_accepted, 2u);  // the good client kept its connection
}

INSTANTIATE_TEST_SUITE_P(Frames, RemotingBadInputTest, ::testing::ValuesIn(bad_inputs()),
                         [](const ::testing::TestParamInfo<BadInput>& info) { return info.param.name; });

TEST_F(RemotingTransportTest, HalfFrameThenCloseDropsOnlyThatConnection) {
  expect_echo_works("before");
  const std::shared_ptr<RawPeer> peer = connect_raw();
  ASSERT_TRUE(run_until([&] { return server_->connection_count() == 2; }));
  const Bytes frame = encode_frame(echo_request("torn"));
  peer->connection->send(Bytes(frame.begin(), frame.begin() + static_cast<ptrdiff_t>(frame.size() / 2)));
  peer->connection->close();
  ASSERT_TRUE(run_until([&] { return server_->connection_count() == 1; }));
  EXPECT_EQ(server_->stats().requests, 1u);  // the torn request never reached a processor
  EXPECT_EQ(server_->stats().connections_closed_for_bad_input, 0u);  // the peer left; nothing was refused
  expect_echo_works("after");
}

TEST_F(RemotingTransportTest, FramesSplitAnywhereStillDecode) {
  const std::shared_ptr<RawPeer> peer = connect_raw();
  RemotingCommand request = echo_request("dribbled");
  request.opaque = 9;
  for (uint8_t byte : encode_frame(request)) peer->connection->send(Bytes{byte});
  ASSERT_TRUE(run_until([&] { return !peer->received.empty(); }));
  scheduler_.run_for(millis(1));
  const Result<RemotingCommand> response = decode_frame(peer->received);
  ASSERT_TRUE(response.ok()) << response.status().to_string();
  EXPECT_EQ(response->opaque, 9);
  EXPECT_EQ(*response->find_ext("tag"), "dribbled");
}

// --- the real network ---------------------------------------------------------------

TEST(RemotingTransportPosix, RequestsAndResponsesOverLoopbackTcp) {
  env::PosixEnv env(42);
  RemotingServer server(env, "posix-server");
  server.register_processor(kEcho, [](const RemotingCommand& request, ResponseChannel channel) {
    RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
    response.ext_fields = request.ext_fields;
    response.body = request.body;
    channel.reply(std::move(response));
  });
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  ASSERT_EQ(server.address().rfind("127.0.0.1:", 0), 0u);
  ASSERT_NE(server.address(), "127.0.0.1:0");

  RemotingClient client(env);
  constexpr int kRequests = 20;
  std::vector<std::optional<Result<RemotingCommand>>> results(kRequests);
  for (int i = 0; i < kRequests; ++i) {
    RemotingCommand request = RemotingCommand::make_request(kEcho, {{"i", std::to_string(i)}});
    // One large body, so a frame arrives in many reads.
    request.body.assign(i == 7 ? 3 * 1024 * 1024 : 16, static_cast<uint8_t>('a' + i));
    client.invoke(server.address(), std::move(request), seconds(10),
                  [&results, i](Result<RemotingCommand> result) { results[i] = std::move(result); });
  }
  const auto all_done = [&] {
    for (const auto& result : results) {
      if (!result.has_value()) return false;
    }
    return true;
  };
  ASSERT_TRUE(env.run_until(all_done, std::chrono::milliseconds(10'000)));
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_TRUE(results[i]->ok()) << results[i]->status().to_string();
    EXPECT_EQ(*results[i]->value().find_ext("i"), std::to_string(i));
    EXPECT_EQ(results[i]->value().body.size(), i == 7 ? 3u * 1024 * 1024 : 16u);
    EXPECT_EQ(results[i]->value().body.front(), static_cast<uint8_t>('a' + i));
  }
  EXPECT_EQ(server.stats().connections_accepted, 1u);
  client.shutdown();
  server.shutdown();
}

// A file region queued behind a full socket is sent by sendfile after its
// file was removed (as retention removes a CommitLog segment while a pull
// response is still going out): the shared File keeps the inode alive, so the
// client gets every byte and nothing crashes.
TEST(RemotingTransportPosix, FileRegionOfARemovedFileIsStillSent) {
  env::PosixEnv env(43);
  char pattern[] = "/tmp/mqlab_remoting_region_test_XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::string path = std::string(pattern) + "/00000000000000000000";
  Result<std::shared_ptr<env::File>> file = env.files().open(path, env::OpenOptions{.create = true});
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  // 8 MiB: more than a loopback socket buffers, so most of it waits in the queue.
  Bytes content(8 << 20);
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<uint8_t>(i * 131 + (i >> 16));
  ASSERT_TRUE((*file)->pwrite(0, content).ok());

  RemotingServer server(env, "posix-server");
  server.register_processor(kBig, [&](const RemotingCommand& request, ResponseChannel channel) {
    RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
    response.body = to_bytes("head");
    channel.reply(std::move(response), {BodyFileRegion{*file, 0, static_cast<uint32_t>(content.size() / 2)},
                                        BodyFileRegion{*file, content.size() / 2,
                                                       static_cast<uint32_t>(content.size() / 2)}});
    EXPECT_TRUE(env.files().remove(path).ok());  // retention, while the response is on its way
    file->reset();  // only the queued regions hold it now
  });
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  RemotingClient client(env, RemotingClientOptions{.max_frame_bytes = 16 << 20});
  std::optional<Result<RemotingCommand>> result;
  client.invoke(server.address(), RemotingCommand::make_request(kBig, {}), seconds(20),
                [&](Result<RemotingCommand> response) { result = std::move(response); });
  ASSERT_TRUE(env.run_until([&] { return result.has_value(); }, std::chrono::milliseconds(20'000)));
  ASSERT_TRUE(result->ok()) << result->status().to_string();
  Bytes expected = to_bytes("head");
  expected.insert(expected.end(), content.begin(), content.end());
  EXPECT_TRUE(result->value().body == expected) << "body of " << result->value().body.size() << " bytes differs";
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(server.stats().file_region_responses, 1u);
  client.shutdown();
  server.shutdown();
  std::filesystem::remove_all(pattern);
}

}  // namespace
}  // namespace mqlab::remoting::remoting_transport_test
