// mqadmin perf produce|consume --history in virtual time: the files they
// write, merged by mqsim check's loader and judged by mqsim's checker, count
// every send and every receipt; a receipt removed from the consumer's file
// is reported as exactly one lost message.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "broker/admin_cli/test/mqadmin_fixture.h"
#include "sim/checker.h"
#include "sim/history_file.h"
#include "sim/sim_disk.h"
#include "sim/sim_env.h"

namespace mqlab::admin_cli::perf_history_test {
namespace {

using testing::CliRun;
using testing::MqadminTest;

class PerfHistoryTest : public MqadminTest {
 protected:
  void SetUp() override {
    MqadminTest::SetUp();
    // mqadmin on a machine with a disk, so the history files have somewhere to go.
    disk_ = std::make_unique<sim::SimDisk>(harness_.scheduler(), sim::DiskProfile::nvme(),
                                           sim::SimDiskOptions{.name = "tool-disk", .capacity_bytes = 1ull << 30},
                                           env::Random(7));
    process_ = std::make_unique<sim::SimProcess>("mqadmin-disk", harness_.scheduler(), harness_.clock(),
                                                 std::vector<sim::Mount>{{"/", disk_.get()}}, env::Random(8),
                                                 &harness_.network(), "10.0.1.201");
    env_ = &process_->start();
  }

  std::string read(const std::string& path) {
    Result<std::shared_ptr<env::File>> file = env_->files().open(path, {});
    EXPECT_TRUE(file.ok()) << file.status().to_string();
    if (!file.ok()) return "";
    const uint64_t size = (*file)->size().value();
    std::string text(size, '\0');
    EXPECT_EQ((*file)->pread(0, std::span<uint8_t>(reinterpret_cast<uint8_t*>(text.data()), size)).value(), size);
    return text;
  }

  std::unique_ptr<sim::SimDisk> disk_;
  std::unique_ptr<sim::SimProcess> process_;
};

sim::CheckerReport check(const sim::LoadedHistory& loaded) {
  sim::CheckerOptions options;
  options.consumer_groups = loaded.consumer_groups;
  options.run_end = loaded.end;
  return sim::check_history(loaded.history, options);
}

TEST_F(PerfHistoryTest, ProduceAndConsumeHistoriesMergeIntoOneJudgedRun) {
  create_topic("BenchmarkTest");
  CliRun produce = run({"perf", "produce", "-q", "200", "-w", "8", "--history", "/producer.history", "--producer-id",
                        "producer-0"});
  ASSERT_EQ(produce.code, kExitOk) << produce.err << produce.out;
  CliRun consume = run({"perf", "consume", "-g", "audit", "-p", "false", "--fromFirst", "-q", "200", "--history",
                        "/consumer.history"});
  ASSERT_EQ(consume.code, kExitOk) << consume.err << consume.out;
  EXPECT_NE(consume.out.find("History: 201 lines, 0 messages without PRODUCER/SEQ"), std::string::npos) << consume.out;

  const std::string producer_text = read("/producer.history");
  const std::string consumer_text = read("/consumer.history");
  Result<sim::LoadedHistory> loaded =
      sim::parse_history_files({{"producer.history", producer_text}, {"consumer.history", consumer_text}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ(loaded->producers, std::vector<std::string>{"producer-0"});
  EXPECT_EQ(loaded->consumer_groups, std::vector<std::string>{"audit"});
  EXPECT_EQ(loaded->receipts_without_send, 0);
  const sim::CheckerReport report = check(*loaded);
  EXPECT_EQ(report.sent, 200);
  EXPECT_EQ(report.acknowledged, 200);
  EXPECT_EQ(report.lost, 0);
  EXPECT_EQ(report.duplicates, 0);
  EXPECT_EQ(report.corrupted, 0);
  EXPECT_EQ(report.e2e_latency.count, 200);
  // Every send went to one of the two groups and is named by its queue.
  for (const sim::SendRecord& send : loaded->history.sends()) {
    EXPECT_TRUE(send.broker_name == "broker-a" || send.broker_name == "broker-b") << send.broker_name.str();
    EXPECT_GE(send.queue_offset, 0);
  }

  // Drop one receipt: the checker names that message lost, and only it.
  const size_t receipt_at = consumer_text.find("\"type\":\"receipt\"");
  ASSERT_NE(receipt_at, std::string::npos);
  const size_t line_start = consumer_text.rfind('\n', receipt_at) + 1;
  std::string dropped = consumer_text;
  dropped.erase(line_start, dropped.find('\n', receipt_at) + 1 - line_start);
  Result<sim::LoadedHistory> missing =
      sim::parse_history_files({{"producer.history", producer_text}, {"consumer.history", dropped}});
  ASSERT_TRUE(missing.ok()) << missing.status().to_string();
  const sim::CheckerReport lost = check(*missing);
  EXPECT_EQ(lost.lost, 1);
  ASSERT_EQ(lost.lost_messages.size(), 1u);
  EXPECT_EQ(lost.lost_messages[0].group, "audit");
}

TEST_F(PerfHistoryTest, AMessageWithoutProducerAndSeqIsCountedNotRecorded) {
  create_topic("BenchmarkTest");
  send("BenchmarkTest", "from another producer", "", "");
  ASSERT_EQ(run({"perf", "produce", "-q", "3", "-w", "1", "--history", "/p.history", "--producer-id", "p7"}).code,
            kExitOk);
  CliRun consume = run({"perf", "consume", "-g", "g", "-p", "false", "--fromFirst", "-q", "4", "--history",
                        "/c.history"});
  ASSERT_EQ(consume.code, kExitOk) << consume.err;
  EXPECT_NE(consume.out.find("History: 4 lines, 1 messages without PRODUCER/SEQ"), std::string::npos) << consume.out;
  const std::string text = read("/c.history");
  EXPECT_NE(text.find("\"producer\":\"p7\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"seq\":2,"), std::string::npos) << text;
}

TEST_F(PerfHistoryTest, ABlankProducerIdIsAUsageError) {
  CliRun produce = run({"perf", "produce", "-q", "3", "--history", "/p.history", "--producer-id", "a b"});
  EXPECT_EQ(produce.code, kExitUsage);
  EXPECT_NE(produce.err.find("--producer-id 'a b': expected a name without blanks"), std::string::npos) << produce.err;
}

}  // namespace
}  // namespace mqlab::admin_cli::perf_history_test
