// MqadminTest: runs mqadmin against ClusterHarness (a real NameServer and
// brokers broker-a, broker-b on simulated machines, virtual time), from a
// process of its own on 10.0.1.200, capturing exit code, stdout and stderr.
// A producer on 10.0.1.10 puts test messages in directly.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "broker/admin_cli/mqadmin.h"
#include "broker/client/test/cluster_harness.h"

namespace mqlab::admin_cli::testing {

inline constexpr const char* kNamesrv = client::testing::kNamesrvAddr;
inline constexpr const char* kToolHost = "10.0.1.200";

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

class MqadminTest : public ::testing::Test {
 protected:
  void SetUp() override {
    harness_.start();
    env_ = &harness_.add_bare_process("mqadmin", kToolHost);
  }

  // mqadmin args... -n <the harness's NameServer>
  CliRun run(std::vector<std::string> args) {
    args.push_back("-n");
    args.push_back(kNamesrv);
    return run_bare(std::move(args));
  }

  // mqadmin args..., as typed.
  CliRun run_bare(std::vector<std::string> args) {
    std::ostringstream out;
    std::ostringstream err;
    CommandIo io{
        .env = *env_,
        .out = out,
        .err = err,
        .run_until = [this](const std::function<bool()>& done, Nanos limit) { return harness_.run_until(done, limit); },
        .interrupted = [this] { return interrupt_at_.has_value() && harness_.now() >= *interrupt_at_; },
        .namesrv_addr_env = namesrv_env_,
        .client_ip = kToolHost,
        .instance_name = "mqadmin-" + std::to_string(++runs_),
    };
    CliRun result;
    result.code = run_mqadmin(args, io);
    result.out = out.str();
    result.err = err.str();
    return result;
  }

  void create_topic(const std::string& topic, int32_t queues = 4) { harness_.create_topic(topic, queues); }
  void wait_routed(const std::string& topic) {
    ASSERT_TRUE(harness_.run_until([&] { return harness_.routed_brokers(topic) == harness_.broker_count(); },
                                   seconds(30)))
        << topic << " is not routed over every broker";
  }

  // Sends one message through the harness's producer; expects SEND_OK.
  client::SendResult send(const std::string& topic, const std::string& body, const std::string& keys,
                          const std::string& tags) {
    client::Producer& producer = test_producer();
    client::Message message(topic, tags, body);
    message.keys = keys;
    std::optional<client::SendResult> result;
    producer.send(std::move(message), [&](client::SendResult sent) { result = std::move(sent); });
    EXPECT_TRUE(harness_.run_until([&] { return result.has_value(); }, seconds(10)));
    EXPECT_EQ(result->status, client::SendStatus::SEND_OK) << result->remark;
    return *result;
  }
  void send_after_creating(const std::string& topic, const std::string& body) {
    create_topic(topic);
    send(topic, body, "", "");
  }

  // Messages the brokers store in topic (queue ids 0..31 of every broker).
  int64_t stored_count(const std::string& topic) {
    int64_t total = 0;
    for (size_t b = 0; b < harness_.broker_count(); ++b) {
      for (int32_t queue = 0; queue < 32; ++queue) {
        total += harness_.broker(b).message_store().max_offset_in_queue(topic, queue).value();
      }
    }
    return total;
  }

  static size_t count_lines_starting(const std::string& text, const std::string& prefix) {
    std::istringstream in(text);
    size_t count = 0;
    for (std::string line; std::getline(in, line);) count += line.starts_with(prefix) ? 1 : 0;
    return count;
  }

  client::testing::ClusterHarness harness_;
  env::Env* env_ = nullptr;
  std::optional<std::string> namesrv_env_;
  std::optional<Nanos> interrupt_at_;  // SIGINT arrives at this virtual time

 private:
  client::Producer& test_producer() {
    if (producer_ == nullptr) {
      client::testing::ClientNode& node = harness_.add_client("producer", "10.0.1.10");
      node.start();
      client::ProducerConfig config;
      config.producerGroup = "test_producer";
      producer_ = &node.add_producer(config);
      std::optional<Status> started;
      producer_->start([&](Status status) { started = status; });
      EXPECT_TRUE(harness_.run_until([&] { return started.has_value(); }, seconds(10)));
      EXPECT_TRUE(started->ok()) << started->to_string();
    }
    return *producer_;
  }

  client::Producer* producer_ = nullptr;
  int runs_ = 0;
};

}  // namespace mqlab::admin_cli::testing
