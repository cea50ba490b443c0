// Zero-copy pulls (file regions, sendfile on real TCP) answer with exactly the
// bytes of the copy path (transferMsgByHeap=true): on the simulator (loopback
// network, SimDisk files) and on the real Env (AsioNetwork, PosixFile,
// sendfile), across a segment boundary and with a tag filter.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/env/posix_env.h"
#include "broker/processor/test/broker_sim_world.h"

namespace mqlab::broker::testing::pull_zero_copy_test {
namespace {

// Bodies of about 1 KiB, so 100 of them span two of the test's 72 KiB segments.
std::string body_of(int i) { return "message " + std::to_string(i) + " " + std::string(1000 + i % 17, 'a' + i % 26); }

// --- the simulator ------------------------------------------------------------------

// What one broker incarnation answered to the same pulls.
struct Pulled {
  std::vector<std::vector<uint8_t>> bodies;
  BrokerStats stats;
};

Pulled pull_all(BrokerSimWorld& world) {
  Pulled pulled;
  PullOptions options;
  options.sys_flag = 4;  // SUBSCRIPTION: answer at once
  for (int64_t offset : {0, 40, 60, 90}) {
    RemotingCommand response = world.must_call(pull("G", "TopicZ", 0, offset, options));
    EXPECT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
    pulled.bodies.push_back(response.body);
  }
  PullOptions tagged = options;
  tagged.subscription = "even";  // every other record: regions that are not adjacent
  RemotingCommand response = world.must_call(pull("G", "TopicZ", 0, 0, tagged));
  EXPECT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
  pulled.bodies.push_back(response.body);
  pulled.stats = world.broker().stats();
  return pulled;
}

TEST(PullZeroCopy, RegionsAndCopiesGiveTheSameBodiesOnTheSimulator) {
  BrokerConfig config = test_broker_config();
  config.zeroCopyMinRegionBytes = 0;  // regions however small, so the tagged pull goes as one region per record
  BrokerSimWorld world(config);
  ASSERT_TRUE(world.start_broker().ok());
  for (int i = 0; i < 100; ++i) {
    store::MessageProperties properties{{"TAGS", i % 2 == 0 ? "even" : "odd"}};
    RemotingCommand response = world.must_call(send_v2("TopicZ", body_of(i), 0, properties));
    ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
  }
  world.run_for(millis(50));
  ASSERT_FALSE(world.config().transferMsgByHeap);  // the default: zero copy
  const Pulled regions = pull_all(world);
  ASSERT_TRUE(world.shutdown_broker().ok());
  world.config().transferMsgByHeap = true;
  ASSERT_TRUE(world.start_broker().ok());
  const Pulled copies = pull_all(world);

  EXPECT_EQ(regions.stats.pulls_zero_copy, 5u);
  EXPECT_EQ(regions.stats.pulls_copied, 0u);
  EXPECT_EQ(copies.stats.pulls_copied, 5u);
  EXPECT_EQ(copies.stats.pulls_zero_copy, 0u);
  EXPECT_EQ(regions.stats.msg_get_total, copies.stats.msg_get_total);
  ASSERT_EQ(regions.bodies.size(), copies.bodies.size());
  for (size_t i = 0; i < regions.bodies.size(); ++i) {
    EXPECT_FALSE(regions.bodies[i].empty());
    EXPECT_EQ(regions.bodies[i], copies.bodies[i]) << "pull " << i;
  }
  const std::vector<PulledMessage> tagged = decode_records(regions.bodies.back());
  ASSERT_FALSE(tagged.empty());
  for (const PulledMessage& message : tagged) EXPECT_EQ(message.queue_offset % 2, 0);
}

// Small regions (one queue's records between other queues' records) are
// copied: a sendfile per record would cost more than the copy.
TEST(PullZeroCopy, SmallRegionsAreCopiedLargeRunsAreNot) {
  BrokerSimWorld world;
  ASSERT_TRUE(world.start_broker().ok());
  ASSERT_EQ(world.config().zeroCopyMinRegionBytes, 16 * 1024);
  for (int i = 0; i < 40; ++i) {
    store::MessageProperties properties{{"TAGS", i % 2 == 0 ? "even" : "odd"}};
    ASSERT_EQ(world.must_call(send_v2("TopicZ", body_of(i), 0, properties)).code, ResponseCode::SUCCESS);
  }
  world.run_for(millis(50));
  PullOptions options;
  options.sys_flag = 4;
  RemotingCommand run = world.must_call(pull("G", "TopicZ", 0, 0, options));  // 32 adjacent records, ~33 KiB
  ASSERT_EQ(run.code, ResponseCode::SUCCESS) << run.remark;
  EXPECT_EQ(world.broker().stats().pulls_zero_copy, 1u);
  EXPECT_EQ(world.broker().stats().pulls_copied, 0u);
  options.subscription = "even";  // 20 records of ~1 KiB, none adjacent
  RemotingCommand scattered = world.must_call(pull("G", "TopicZ", 0, 0, options));
  ASSERT_EQ(scattered.code, ResponseCode::SUCCESS) << scattered.remark;
  EXPECT_EQ(world.broker().stats().pulls_zero_copy, 1u);
  EXPECT_EQ(world.broker().stats().pulls_copied, 1u);
  EXPECT_EQ(decode_records(run.body).size(), 32u);
  EXPECT_EQ(decode_records(scattered.body).size(), 20u);
}

// --- the real Env -------------------------------------------------------------------

constexpr std::chrono::milliseconds kLimit(20'000);  // generous for a loaded machine; never asserted on

// A port nobody listens on right now (the broker needs a real one: it is the store host).
int32_t free_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

class PullZeroCopyPosixTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/mqlab_pull_zero_copy_test_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    config_ = test_broker_config();
    config_.brokerIP1 = "127.0.0.1";
    config_.listenPort = free_port();
    config_.httpPort = 0;
    config_.zeroCopyMinRegionBytes = 0;  // every FOUND body by sendfile, even the 4-record tail
    store_config_ = test_store_config();
    store_config_.storePathRootDir = dir_;
    store_config_.flushDiskType = store::FlushDiskType::ASYNC_FLUSH;
    store_config_.cleanResourceInterval = 3'600'000;  // no retention: the host's /tmp may be full
  }
  void TearDown() override {
    client_.reset();
    broker_.reset();
    env_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  Status start(bool transfer_by_heap) {
    if (!env_) env_ = std::make_unique<env::PosixEnv>(uint64_t{42});
    BrokerConfig config = config_;
    config.transferMsgByHeap = transfer_by_heap;
    broker_ = std::make_unique<BrokerController>(*env_, config, store_config_);
    std::optional<Status> started;
    broker_->start([&](Status status) { started = status; });
    env_->run_until([&] { return started.has_value(); }, kLimit);
    if (!client_) client_ = std::make_unique<remoting::RemotingClient>(*env_);
    return started.value_or(Status::Timeout("start did not complete"));
  }

  Status stop() {
    std::optional<Status> stopped;
    broker_->shutdown([&](Status status) { stopped = status; });
    env_->run_until([&] { return stopped.has_value(); }, kLimit);
    broker_.reset();
    return stopped.value_or(Status::Timeout("shutdown did not complete"));
  }

  RemotingCommand call(RemotingCommand request) {
    std::optional<Result<RemotingCommand>> result;
    client_->invoke(config_.broker_addr(), std::move(request), seconds(10),
                    [&](Result<RemotingCommand> response) { result = std::move(response); });
    env_->run_until([&] { return result.has_value(); }, kLimit);
    EXPECT_TRUE(result.has_value() && result->ok()) << (result ? result->status().to_string() : "no answer");
    return result && result->ok() ? std::move(*result).value() : RemotingCommand{};
  }

  std::vector<std::vector<uint8_t>> pull_bodies() {
    std::vector<std::vector<uint8_t>> bodies;
    PullOptions options;
    options.sys_flag = 4;
    for (int64_t offset : {0, 32, 50, 64, 96}) {
      // Pulls are served once the dispatcher has indexed the records.
      RemotingCommand response = call(pull("G", "TopicZ", 0, offset, options));
      for (int attempt = 0; attempt < 200 && response.code != ResponseCode::SUCCESS; ++attempt) {
        env_->run_for(std::chrono::milliseconds(10));
        response = call(pull("G", "TopicZ", 0, offset, options));
      }
      EXPECT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
      bodies.push_back(response.body);
    }
    return bodies;
  }

  std::string dir_;
  BrokerConfig config_;
  store::MessageStoreConfig store_config_;
  std::unique_ptr<env::PosixEnv> env_;
  std::unique_ptr<BrokerController> broker_;
  std::unique_ptr<remoting::RemotingClient> client_;
};

TEST_F(PullZeroCopyPosixTest, SendfileBodiesEqualCopiedBodies) {
  ASSERT_TRUE(start(/*transfer_by_heap=*/false).ok());
  for (int i = 0; i < 100; ++i) {
    const RemotingCommand response = call(send_v2("TopicZ", body_of(i), 0));
    ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
  }
  const std::vector<std::vector<uint8_t>> regions = pull_bodies();
  EXPECT_EQ(broker_->stats().pulls_copied, 0u);
  EXPECT_GE(broker_->stats().pulls_zero_copy, 5u);
  EXPECT_GE(broker_->remoting_server().stats().file_region_responses, 5u);
  ASSERT_TRUE(stop().ok());

  ASSERT_TRUE(start(/*transfer_by_heap=*/true).ok());
  const std::vector<std::vector<uint8_t>> copies = pull_bodies();
  EXPECT_EQ(broker_->stats().pulls_zero_copy, 0u);
  EXPECT_EQ(broker_->remoting_server().stats().file_region_responses, 0u);
  ASSERT_TRUE(stop().ok());

  ASSERT_EQ(regions.size(), copies.size());
  for (size_t i = 0; i < regions.size(); ++i) {
    EXPECT_FALSE(regions[i].empty());
    EXPECT_EQ(regions[i], copies[i]) << "pull " << i;
    const std::vector<PulledMessage> messages = decode_records(regions[i]);
    ASSERT_FALSE(messages.empty());
    EXPECT_EQ(messages.front().body, body_of(static_cast<int>(messages.front().queue_offset)));
  }
}

}  // namespace
}  // namespace mqlab::broker::testing::pull_zero_copy_test
