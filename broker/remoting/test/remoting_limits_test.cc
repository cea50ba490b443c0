// The RemotingServer's defences against hostile or broken clients (idle
// connections, slowloris half frames, too many connections, a client that
// does not read) and its file-region responses (the zero-copy pull path).
// Runs on the simulator: a server and clients sharing one loopback network,
// virtual time, so "120 s idle" takes microseconds and is exact.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "broker/env/loopback_network.h"
#include "broker/remoting/remoting_client.h"
#include "broker/remoting/remoting_server.h"
#include "broker/remoting/response_code.h"
#include "broker/remoting/test/remoting_test_util.h"
#include "broker/remoting/test/sim_remoting_pair.h"
#include "sim/scheduler.h"
#include "sim/sim_env.h"

namespace mqlab::remoting::remoting_limits_test {
namespace {

using test_support::Bytes;
using test_support::RawPeer;
using test_support::SimRemotingPair;
using test_support::to_bytes;

constexpr int32_t kEcho = 1000;     // answers with the request's body
constexpr int32_t kRegions = 1001;  // answers with body "head:" and the test's file regions

// A file in memory: enough for send_file_region().
class BytesFile final : public env::File {
 public:
  BytesFile(std::string path, Bytes bytes) : path_(std::move(path)), bytes_(std::move(bytes)) {}
  const std::string& path() const override { return path_; }
  Status pwrite(uint64_t, std::span<const uint8_t>) override { return Status::IoError("read-only"); }
  Result<size_t> pread(uint64_t offset, std::span<uint8_t> out) override {
    if (offset >= bytes_.size()) return size_t{0};
    const size_t n = std::min<size_t>(out.size(), bytes_.size() - offset);
    std::copy_n(bytes_.begin() + static_cast<std::ptrdiff_t>(offset), n, out.begin());
    return n;
  }
  Status truncate(uint64_t) override { return Status::IoError("read-only"); }
  Result<uint64_t> size() override { return uint64_t{bytes_.size()}; }
  Status allocate(uint64_t) override { return Status::IoError("read-only"); }
  void sync(env::SyncCallback done) override { done(Status::Ok()); }

 private:
  std::string path_;
  Bytes bytes_;
};

class RemotingLimitsTest : public SimRemotingPair {
 protected:
  RemotingLimitsTest() : SimRemotingPair(seconds(600)) {}

  void SetUp() override {
    SimRemotingPair::SetUp();
  }

  void start_server(RemotingServerOptions options) {
    server_ = std::make_unique<RemotingServer>(*server_env_, "limits-server", options);
    server_->register_processor(kEcho, [](const RemotingCommand& request, ResponseChannel channel) {
      RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
      response.body = request.body;
      channel.reply(std::move(response));
    });
    server_->register_processor(kRegions, [this](const RemotingCommand& request, ResponseChannel channel) {
      RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
      response.body = to_bytes("head:");
      channel.reply(std::move(response), regions_);
    });
    ASSERT_TRUE(server_->start(kServerAddress).ok());
  }

  Result<RemotingCommand> call(RemotingCommand request) {
    auto slot = std::make_shared<std::optional<Result<RemotingCommand>>>();
    client_->invoke(kServerAddress, std::move(request), seconds(3),
                    [slot](Result<RemotingCommand> result) { *slot = std::move(result); });
    if (!run_until([&] { return slot->has_value(); })) return Status::Timeout("no answer");
    return std::move(**slot);
  }

  void expect_echo_works(const std::string& text) {
    RemotingCommand request = RemotingCommand::make_request(kEcho, {});
    request.body = to_bytes(text);
    const Result<RemotingCommand> response = call(std::move(request));
    ASSERT_TRUE(response.ok()) << response.status().to_string();
    EXPECT_EQ(response->body, to_bytes(text));
  }

  std::shared_ptr<RawPeer> connect_raw() { return SimRemotingPair::connect_raw(kServerAddress); }

  static constexpr const char* kServerAddress = "10.0.0.1:10911";

  std::vector<BodyFileRegion> regions_;
  std::unique_ptr<RemotingServer> server_;
};

// --- idle connections ------------------------------------------------------------

TEST_F(RemotingLimitsTest, IdleConnectionIsClosedAfterChannelMaxIdle) {
  start_server(RemotingServerOptions{.channel_max_idle = seconds(120)});
  const std::shared_ptr<RawPeer> idle = connect_raw();
  ASSERT_TRUE(run_until([&] { return server_->connection_count() == 1; }));
  scheduler_.run_for(seconds(119));
  EXPECT_FALSE(idle->closed.has_value());
  EXPECT_EQ(server_->connection_count(), 1u);
  scheduler_.run_for(seconds(2));
  ASSERT_TRUE(idle->closed.has_value());
  EXPECT_EQ(idle->closed->code(), StatusCode::kUnavailable) << idle->closed->to_string();  // closed by the server
  EXPECT_EQ(server_->stats().connections_closed_idle, 1u);
  EXPECT_EQ(server_->connection_count(), 0u);
}

TEST_F(RemotingLimitsTest, TrafficKeepsAConnectionAlive) {
  start_server(RemotingServerOptions{.channel_max_idle = seconds(120)});
  for (int minute = 0; minute < 10; ++minute) {
    expect_echo_works("minute " + std::to_string(minute));
    scheduler_.run_for(seconds(100));
  }
  EXPECT_EQ(server_->stats().connections_closed_idle, 0u);
  EXPECT_EQ(server_->stats().connections_accepted, 1u);  // one connection served all ten
}

TEST_F(RemotingLimitsTest, ZeroIdleTimeMeansNever) {
  start_server(RemotingServerOptions{.channel_max_idle = 0});
  const std::shared_ptr<RawPeer> idle = connect_raw();
  scheduler_.run_for(seconds(3600));
  EXPECT_FALSE(idle->closed.has_value());
  EXPECT_EQ(server_->connection_count(), 1u);
}

// --- slowloris ---------------------------------------------------------------------

TEST_F(RemotingLimitsTest, HalfFrameDribbledForeverIsClosedAtTheFrameTimeout) {
  start_server(RemotingServerOptions{.frame_read_timeout = seconds(10)});
  const std::shared_ptr<RawPeer> slow = connect_raw();
  RemotingCommand request = RemotingCommand::make_request(kEcho, {});
  request.body = Bytes(1000, 'x');
  const Bytes frame = encode_frame(request);
  // One byte every 2 s: traffic enough to defeat an idle timer, never a frame.
  size_t sent = 0;
  while (!slow->closed.has_value() && sent < frame.size()) {
    slow->connection->send(Bytes{frame[sent++]});
    scheduler_.run_for(seconds(2));
  }
  ASSERT_TRUE(slow->closed.has_value());
  EXPECT_LE(sent, 6u);  // closed 10 s after the first byte
  EXPECT_EQ(server_->stats().connections_closed_for_slow_frame, 1u);
  EXPECT_EQ(server_->stats().requests, 0u);
  expect_echo_works("a good client is still served");
}

TEST_F(RemotingLimitsTest, FramesCompletedInTimeAreServedAndRearmTheClock) {
  start_server(RemotingServerOptions{.frame_read_timeout = seconds(10)});
  const std::shared_ptr<RawPeer> peer = connect_raw();
  for (int i = 0; i < 3; ++i) {
    RemotingCommand request = RemotingCommand::make_request(kEcho, {});
    request.opaque = i + 1;
    request.body = to_bytes("frame " + std::to_string(i));
    const Bytes frame = encode_frame(request);
    const auto half = static_cast<std::ptrdiff_t>(frame.size() / 2);
    // Each frame takes 8 s, under the 10 s limit; together they take 24 s.
    peer->connection->send(Bytes(frame.begin(), frame.begin() + half));
    scheduler_.run_for(seconds(8));
    peer->connection->send(Bytes(frame.begin() + half, frame.end()));
    scheduler_.run_for(millis(1));
  }
  scheduler_.run_for(seconds(30));
  EXPECT_FALSE(peer->closed.has_value()) << peer->closed->to_string();
  EXPECT_EQ(server_->stats().requests, 3u);
  EXPECT_EQ(server_->stats().connections_closed_for_slow_frame, 0u);
}

// --- connection count ------------------------------------------------------------

TEST_F(RemotingLimitsTest, ConnectionsBeyondTheLimitAreClosedAsAccepted) {
  start_server(RemotingServerOptions{.max_connections = 3});
  std::vector<std::shared_ptr<RawPeer>> peers;
  for (int i = 0; i < 3; ++i) peers.push_back(connect_raw());
  ASSERT_TRUE(run_until([&] { return server_->connection_count() == 3; }));
  const std::shared_ptr<RawPeer> extra = connect_raw();
  ASSERT_TRUE(run_until([&] { return extra->closed.has_value(); }));
  EXPECT_EQ(extra->closed->code(), StatusCode::kUnavailable) << extra->closed->to_string();
  EXPECT_EQ(server_->stats().connections_refused_over_limit, 1u);
  EXPECT_EQ(server_->connection_count(), 3u);
  for (const auto& peer : peers) EXPECT_FALSE(peer->closed.has_value());
  // One leaves: there is room again.
  peers[0]->connection->close();
  ASSERT_TRUE(run_until([&] { return server_->connection_count() == 2; }));
  expect_echo_works("room again");
  EXPECT_EQ(server_->stats().connections_refused_over_limit, 1u);
}

// --- file regions ------------------------------------------------------------------

Bytes pattern(size_t size, uint8_t seed) {
  Bytes bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(seed + i * 7);
  return bytes;
}

TEST_F(RemotingLimitsTest, ResponseBodyContinuesWithFileRegionsInOrder) {
  start_server({});
  const Bytes a = pattern(5000, 1);
  const Bytes b = pattern(300, 9);
  auto file_a = std::make_shared<BytesFile>("/a", a);
  auto file_b = std::make_shared<BytesFile>("/b", b);
  regions_ = {{file_a, 100, 1000}, {file_b, 0, 300}, {file_a, 4000, 1000}};
  const Result<RemotingCommand> response = call(RemotingCommand::make_request(kRegions, {}));
  ASSERT_TRUE(response.ok()) << response.status().to_string();
  Bytes expected = to_bytes("head:");
  expected.insert(expected.end(), a.begin() + 100, a.begin() + 1100);
  expected.insert(expected.end(), b.begin(), b.end());
  expected.insert(expected.end(), a.begin() + 4000, a.end());
  EXPECT_EQ(response->body, expected);
  EXPECT_EQ(server_->stats().file_region_responses, 1u);
  EXPECT_EQ(server_->stats().file_region_bytes, 2300u);
  expect_echo_works("the stream is still in step");
}

TEST_F(RemotingLimitsTest, RegionsCountTowardsTheOutputLimit) {
  start_server(RemotingServerOptions{.max_pending_output_bytes = 4096});
  auto file = std::make_shared<BytesFile>("/big", pattern(10'000, 3));
  regions_ = {{file, 0, 10'000}};
  const Result<RemotingCommand> response = call(RemotingCommand::make_request(kRegions, {}));
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable) << response.status().to_string();
  EXPECT_EQ(server_->stats().connections_closed_for_output_limit, 1u);
  EXPECT_EQ(server_->stats().file_region_responses, 0u);
}

TEST_F(RemotingLimitsTest, RegionPastTheEndOfItsFileBreaksOnlyThatConnection) {
  start_server({});
  auto file = std::make_shared<BytesFile>("/short", pattern(100, 3));
  regions_ = {{file, 50, 100}};  // 50 bytes short
  const Result<RemotingCommand> response = call(RemotingCommand::make_request(kRegions, {}));
  EXPECT_FALSE(response.ok());  // a reset, never a frame out of step
  regions_.clear();
  expect_echo_works("a fresh connection");
}

}  // namespace
}  // namespace mqlab::remoting::remoting_limits_test
