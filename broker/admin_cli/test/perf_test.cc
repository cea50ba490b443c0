// mqadmin perf produce / perf consume in virtual time against ClusterHarness:
// the totals they print must equal what the brokers stored and what the
// consumer was handed; --duration, --rate and -q bound the runs.
#include <gtest/gtest.h>

#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "broker/admin_cli/perf_producer.h"
#include "broker/admin_cli/test/mqadmin_fixture.h"

namespace mqlab::admin_cli::perf_test {
namespace {

using testing::CliRun;
using testing::MqadminTest;

// The integer after label in text, or -1.
int64_t figure(const std::string& text, const std::string& label) {
  const size_t at = text.find(label);
  if (at == std::string::npos) return -1;
  return std::stoll(text.substr(at + label.size()));
}

TEST_F(MqadminTest, PerfProduceTotalsMatchWhatTheBrokersStored) {
  create_topic("BenchmarkTest");
  CliRun perf = run({"perf", "produce", "-q", "300", "-w", "8", "-s", "64", "-k", "true"});
  ASSERT_EQ(perf.code, kExitOk) << perf.err << perf.out;
  EXPECT_NE(perf.out.find("topic: BenchmarkTest threadCount: 8 messageSize: 64 keyEnable: true"), std::string::npos);
  EXPECT_EQ(figure(perf.out, "[Complete] Send Total: "), 300) << perf.out;
  EXPECT_EQ(figure(perf.out, "Send Status: SEND_OK "), 300);
  EXPECT_EQ(figure(perf.out, "Send Failed: "), 0);
  EXPECT_TRUE(std::regex_search(perf.out, std::regex(R"(Send RT\(ms\) p50: [0-9.]+ p99: [0-9.]+ p999: [0-9.]+ max: )")))
      << perf.out;
  EXPECT_EQ(stored_count("BenchmarkTest"), 300);
}

TEST_F(MqadminTest, PerfProduceHonoursDurationAndRate) {
  create_topic("Paced");
  CliRun perf = run({"perf", "produce", "-t", "Paced", "-w", "4", "--duration", "5", "--rate", "100"});
  ASSERT_EQ(perf.code, kExitOk) << perf.err << perf.out;
  // One line per second of virtual time, about 100 sends each.
  EXPECT_EQ(count_lines_starting(perf.out, "Current Time: "), 5u) << perf.out;
  const int64_t total = figure(perf.out, "[Complete] Send Total: ");
  EXPECT_GE(total, 495);
  EXPECT_LE(total, 505);
  EXPECT_EQ(stored_count("Paced"), total);
}

TEST_F(MqadminTest, PerfConsumeReceivesEverythingProduced) {
  create_topic("BenchmarkTest");
  ASSERT_EQ(run({"perf", "produce", "-q", "250", "-w", "16"}).code, kExitOk);
  ASSERT_EQ(stored_count("BenchmarkTest"), 250);
  CliRun perf = run({"perf", "consume", "-g", "bench", "-p", "false", "--fromFirst", "-q", "250"});
  ASSERT_EQ(perf.code, kExitOk) << perf.err << perf.out;
  EXPECT_NE(perf.out.find("group: bench,"), std::string::npos) << perf.out;
  EXPECT_EQ(figure(perf.out, "[Complete] Consume Total: "), 250) << perf.out;
  EXPECT_NE(perf.out.find("B2C RT(ms) p50: "), std::string::npos);

  // The group committed its offsets on the way out: a second run finds nothing new.
  CliRun again = run({"perf", "consume", "-g", "bench", "-p", "false", "--duration", "3"});
  ASSERT_EQ(again.code, kExitOk) << again.err;
  EXPECT_EQ(figure(again.out, "[Complete] Consume Total: "), 0) << again.out;
  EXPECT_EQ(count_lines_starting(again.out, "Current Time: "), 3u);
}

TEST_F(MqadminTest, SigintEndsAPerfRunWithItsSummaryAndOtherCommandsWith130) {
  create_topic("Paced");
  interrupt_at_ = harness_.now() + seconds(3);
  CliRun perf = run({"perf", "produce", "-t", "Paced", "-w", "2", "--rate", "50"});  // no end of its own
  ASSERT_EQ(perf.code, kExitOk) << perf.err;
  const int64_t total = figure(perf.out, "[Complete] Send Total: ");
  EXPECT_GE(total, 140);  // 3 s at 50/s, noticed at the next one-second tick
  EXPECT_LE(total, 210);
  EXPECT_EQ(stored_count("Paced"), total);

  interrupt_at_ = harness_.now();
  CliRun list = run({"topicList"});
  EXPECT_EQ(list.code, kExitInterrupted);
  EXPECT_NE(list.err.find("mqadmin topicList: interrupted"), std::string::npos) << list.err;
}

TEST_F(MqadminTest, PerfRunsWithoutARouteFailAtOnce) {
  CliRun produce = run({"perf", "produce", "-t", "Nowhere", "-q", "10"});
  EXPECT_EQ(produce.code, kExitFailed);
  EXPECT_NE(produce.err.find("route of topic Nowhere (create it with mqadmin updateTopic)"), std::string::npos)
      << produce.err;
  EXPECT_EQ(produce.out.find("[Complete]"), std::string::npos);
}

// --producers: each producer is its own client on its own connection, as
// the broker sees it (ProducerManager keys channels by remote address).
TEST_F(MqadminTest, PerfProduceWithProducersSendsOverOneClientEach) {
  create_topic("BenchmarkTest");
  client::ClientConfig config;
  config.namesrvAddr = {testing::kNamesrv};
  config.clientIP = testing::kToolHost;
  config.instanceName = "perf";
  client::MQClientInstance instance(*env_, config);
  std::ostringstream out;
  PerfProduceOptions options;
  options.topic = "BenchmarkTest";
  options.senders = 8;
  options.producers = 4;
  options.rate = 40;
  PerfProducer perf(instance, options, out);
  std::optional<Status> done;
  perf.start([&](Status status) { done = status; });

  // The clients' periodic heartbeat (30 s) registers them with each broker.
  auto channels = [&](size_t b) -> std::set<std::string> {
    std::set<std::string> ids;
    if (const auto* group = harness_.broker(b).producer_manager().find("benchmark_producer")) {
      for (const auto& [remote, channel] : *group) ids.insert(channel.client_id);
    }
    return ids;
  };
  ASSERT_TRUE(harness_.run_until([&] { return channels(0).size() == 4 && channels(1).size() == 4; }, seconds(40)))
      << channels(0).size() << " " << out.str();
  EXPECT_EQ(channels(0), (std::set<std::string>{"10.0.1.200@perf", "10.0.1.200@perf_1", "10.0.1.200@perf_2",
                                                "10.0.1.200@perf_3"}));
  ASSERT_EQ(harness_.broker(0).producer_manager().find("benchmark_producer")->size(), 4u);  // four connections
  EXPECT_FALSE(done.has_value());

  perf.stop();
  ASSERT_TRUE(harness_.run_until([&] { return done.has_value(); }, seconds(10)));
  ASSERT_TRUE(done->ok()) << done->to_string();
  EXPECT_GT(perf.totals().stored(), 500u);
  EXPECT_EQ(perf.totals().send_failed(), 0u);
  EXPECT_EQ(stored_count("BenchmarkTest"), static_cast<int64_t>(perf.totals().stored()));

  bool down = false;
  perf.shutdown([&] { down = true; });
  ASSERT_TRUE(harness_.run_until([&] { return down; }, seconds(10)));
  // Every producer unregistered; the main client is the caller's to shut down.
  EXPECT_TRUE(channels(0).empty());
  EXPECT_TRUE(channels(1).empty());
  bool instance_down = false;
  instance.shutdown([&] { instance_down = true; });
  ASSERT_TRUE(harness_.run_until([&] { return instance_down; }, seconds(10)));
}

TEST_F(MqadminTest, PerfProduceSpreadsSendsOverTopics) {
  for (const char* topic : {"Spread_0", "Spread_1", "Spread_2"}) create_topic(topic);
  CliRun perf = run({"perf", "produce", "-t", "Spread", "--topics", "3", "-w", "6", "--producers", "3", "-q", "300"});
  ASSERT_EQ(perf.code, kExitOk) << perf.err << perf.out;
  EXPECT_NE(perf.out.find("producers: 3 topics: 3"), std::string::npos) << perf.out;
  EXPECT_EQ(figure(perf.out, "Send Status: SEND_OK "), 300);
  EXPECT_EQ(stored_count("Spread_0"), 100);
  EXPECT_EQ(stored_count("Spread_1"), 100);
  EXPECT_EQ(stored_count("Spread_2"), 100);
  EXPECT_EQ(stored_count("Spread"), 0);
}

TEST_F(MqadminTest, PerfProduceWithATopicMissingOrTooManyProducersFailsAtOnce) {
  for (const char* topic : {"Spread_0", "Spread_1"}) create_topic(topic);
  CliRun missing = run({"perf", "produce", "-t", "Spread", "--topics", "3", "--producers", "2", "-q", "30"});
  EXPECT_EQ(missing.code, kExitFailed);
  EXPECT_NE(missing.err.find("route of topic Spread_2 (create it with mqadmin updateTopic)"), std::string::npos)
      << missing.err;
  EXPECT_EQ(missing.out.find("[Complete]"), std::string::npos);
  EXPECT_EQ(stored_count("Spread_0"), 0);

  CliRun usage = run({"perf", "produce", "-t", "Spread_0", "-w", "4", "--producers", "5", "-q", "30"});
  EXPECT_EQ(usage.code, kExitUsage);
  EXPECT_NE(usage.err.find("--producers 5 exceeds -w 4: every producer needs a sender"), std::string::npos)
      << usage.err;
  EXPECT_EQ(stored_count("Spread_0"), 0);
}

}  // namespace
}  // namespace mqlab::admin_cli::perf_test
