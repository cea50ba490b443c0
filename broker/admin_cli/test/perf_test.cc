// mqadmin perf produce / perf consume in virtual time against ClusterHarness:
// the totals they print must equal what the brokers stored and what the
// consumer was handed; --duration, --rate and -q bound the runs.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "broker/admin_cli/test/mqadmin_fixture.h"

namespace mqlab::admin_cli {
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

}  // namespace
}  // namespace mqlab::admin_cli
