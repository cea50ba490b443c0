// History files (sim/history_file.h): separate producer and consumer files
// merge by (producer, seq) into one History that the checker judges; every
// malformed line is refused with file:line and what was expected.
#include "sim/history_file.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/checker.h"

namespace mqlab::sim::history_file_test {
namespace {

const std::string kHeader = R"({"type":"history","format":"mqlab-history","version":1,"process":"p","role":"producer","clock":"wall_ns"})";

std::string send(const std::string& producer, int seq, int64_t at, uint32_t crc = 7) {
  return R"({"type":"send","producer":")" + producer + R"(","seq":)" + std::to_string(seq) + R"(,"at":)" +
         std::to_string(at) + R"(,"key":"","body_crc":)" + std::to_string(crc) + "}";
}

std::string result(const std::string& producer, int seq, int64_t at, const std::string& outcome = "SEND_OK",
                   int queue = 0, int offset = 0) {
  return R"({"type":"send_result","producer":")" + producer + R"(","seq":)" + std::to_string(seq) + R"(,"at":)" +
         std::to_string(at) + R"(,"outcome":")" + outcome + R"(","broker_name":"broker-a","queue_id":)" +
         std::to_string(queue) + R"(,"queue_offset":)" + std::to_string(offset) + R"(,"msg_id":"X","attempts":1})";
}

std::string receipt(const std::string& producer, int seq, int64_t at, int queue = 0, int offset = 0,
                    uint32_t crc = 7, const std::string& group = "g") {
  return R"({"type":"receipt","producer":")" + producer + R"(","seq":)" + std::to_string(seq) + R"(,"at":)" +
         std::to_string(at) + R"(,"group":")" + group + R"(","consumer":"c","broker_name":"broker-a","queue_id":)" +
         std::to_string(queue) + R"(,"queue_offset":)" + std::to_string(offset) + R"(,"body_crc":)" +
         std::to_string(crc) + "}";
}

std::string lines(std::initializer_list<std::string> list) {
  std::string text;
  for (const std::string& line : list) text += line + "\n";
  return text;
}

CheckerReport check(const LoadedHistory& loaded) {
  CheckerOptions options;
  options.consumer_groups = loaded.consumer_groups;
  options.run_end = loaded.end;
  return check_history(loaded.history, options);
}

std::string error_of(const std::vector<std::pair<std::string, std::string>>& files) {
  Result<LoadedHistory> loaded = parse_history_files(files);
  EXPECT_FALSE(loaded.ok());
  return loaded.ok() ? "" : loaded.status().message();
}

constexpr int64_t kT = 1'700'000'000'000'000'000;  // a wall clock instant, ns

TEST(HistoryFile, ProducersAndConsumersInSeparateFilesMergeBySeq) {
  // Two producers both number from 0; the consumer received three of the four.
  const std::string p1 = lines({kHeader, send("p1", 0, kT + 10), result("p1", 0, kT + 20, "SEND_OK", 0, 0),
                                send("p1", 1, kT + 30), result("p1", 1, kT + 40, "SEND_OK", 0, 1)});
  const std::string p2 = lines({kHeader, send("p2", 0, kT + 15), result("p2", 0, kT + 25, "SEND_OK", 1, 0),
                                send("p2", 1, kT + 35), result("p2", 1, kT + 45, "FAILED")});
  const std::string c = lines({kHeader, receipt("p1", 0, kT + 50, 0, 0), receipt("p2", 0, kT + 55, 1, 0),
                               receipt("p1", 0, kT + 60, 0, 0)});
  Result<LoadedHistory> loaded = parse_history_files({{"p1", p1}, {"p2", p2}, {"c", c}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ(loaded->origin_wall_ns, kT + 10);
  EXPECT_EQ(loaded->end, 50);
  EXPECT_EQ(loaded->producers, (std::vector<std::string>{"p1", "p2"}));
  // Sends in invocation order: p1#0, p2#0, p1#1, p2#1.
  ASSERT_EQ(loaded->history.sends().size(), 4u);
  EXPECT_EQ(loaded->history.sends()[1].producer, "p2");
  EXPECT_EQ(loaded->producer_seqs, (std::vector<uint64_t>{0, 0, 1, 1}));
  EXPECT_EQ(loaded->history.sends()[0].invoked_at, 0);
  EXPECT_EQ(loaded->history.sends()[0].completed_at, 10);
  const CheckerReport report = check(*loaded);
  EXPECT_EQ(report.acknowledged, 3);
  EXPECT_EQ(report.failed, 1);
  EXPECT_EQ(report.lost, 1);  // p1#1
  ASSERT_EQ(report.lost_messages.size(), 1u);
  EXPECT_EQ(report.lost_messages[0].seq, 2u);
  EXPECT_EQ(report.duplicates, 1);
  EXPECT_EQ(report.e2e_latency.count, 2);
  EXPECT_EQ(report.e2e_latency.max, 40);  // p1#0: sent at 0, received at 40
}

TEST(HistoryFile, ASendWithoutResultIsPendingAndACorruptBodyIsCounted) {
  const std::string p = lines({kHeader, send("p", 0, kT), send("p", 1, kT + 1, 99), result("p", 1, kT + 2)});
  const std::string c = lines({kHeader, receipt("p", 1, kT + 3, 0, 0, /*crc=*/98)});
  Result<LoadedHistory> loaded = parse_history_files({{"p", p}, {"c", c}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  const CheckerReport report = check(*loaded);
  EXPECT_EQ(report.unknown_outcome, 1);
  EXPECT_EQ(report.unknown, 1);
  EXPECT_EQ(report.corrupted, 1);
  EXPECT_EQ(report.lost, 0);
}

TEST(HistoryFile, ReorderingIsCountedPerQueue) {
  const std::string p = lines({kHeader, send("p", 0, kT), result("p", 0, kT + 1, "SEND_OK", 2, 0), send("p", 1, kT + 2),
                               result("p", 1, kT + 3, "SEND_OK", 2, 1)});
  const std::string c = lines({kHeader, receipt("p", 1, kT + 4, 2, 1), receipt("p", 0, kT + 5, 2, 0)});
  Result<LoadedHistory> loaded = parse_history_files({{"p", p}, {"c", c}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  const CheckerReport report = check(*loaded);
  EXPECT_EQ(report.reordered, 1);
  EXPECT_EQ(report.reordered_by_queue, (std::map<std::string, int64_t>{{"broker-a:2", 1}}));
}

TEST(HistoryFile, ARunStartEventIsTheOriginAndEventsKeepTheirOrder) {
  const std::string driver =
      lines({kHeader, R"({"type":"event","at":1700000000000000100,"what":"broker_down","target":"broker-a","detail":"broker-a-0"})",
             R"({"type":"event","at":1700000000000000000,"what":"run_start"})",
             R"({"type":"event","at":1700000000000000900,"what":"run_end"})"});
  const std::string p = lines({kHeader, send("p", 0, kT + 50), result("p", 0, kT + 60)});
  Result<LoadedHistory> loaded = parse_history_files({{"driver", driver}, {"p", p}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ(loaded->origin_wall_ns, kT);
  EXPECT_EQ(loaded->end, 900);
  ASSERT_EQ(loaded->history.events().size(), 3u);
  EXPECT_EQ(loaded->history.events()[0].what, "run_start");
  EXPECT_EQ(loaded->history.events()[1].at, 100);
  EXPECT_EQ(loaded->history.sends()[0].invoked_at, 50);
}

TEST(HistoryFile, BadLinesAreRefusedWithFileLineAndWhatWasExpected) {
  EXPECT_EQ(error_of({{"a.history", lines({kHeader, "{not json"})}}).substr(0, 23), "a.history:2: not JSON (");
  EXPECT_EQ(error_of({{"a.history", lines({send("p", 0, kT)})}}),
            "a.history:1: expected the history record first ({\"type\":\"history\",\"format\":\"mqlab-history\",...}), "
            "found 'send'; is this a history file?");
  EXPECT_EQ(error_of({{"a", lines({kHeader, R"({"type":"send","producer":"p","at":1,"body_crc":0})"})}}),
            "a:2: send record: missing field 'seq' (an integer in [0, 9223372036854775807])");
  EXPECT_EQ(error_of({{"a", lines({kHeader, R"({"type":"send","producer":"p","seq":-1,"at":1,"body_crc":0})"})}}),
            "a:2: send record: field 'seq' is -1; expected an integer in [0, 9223372036854775807]");
  EXPECT_EQ(error_of({{"a", lines({kHeader, send("p", 0, kT), result("p", 0, kT, "MAYBE")})}}),
            "a:3: send_result record: outcome 'MAYBE'; expected SEND_OK, FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT, "
            "SLAVE_NOT_AVAILABLE, FAILED or UNKNOWN");
  EXPECT_EQ(error_of({{"a", lines({kHeader, R"({"type":"sent"})"})}}),
            "a:2: record type 'sent'; expected history, send, send_result, receipt or event");
  EXPECT_EQ(error_of({{"a", lines({kHeader, result("p", 3, kT)})}}),
            "a:2: send_result record: producer 'p' seq 3 has no send record in any file given (is its producer's "
            "file missing?)");
  EXPECT_EQ(error_of({{"a", lines({kHeader, send("p", 0, kT)})}, {"b", lines({kHeader, "", send("p", 0, kT)})}}),
            "b:3: send record: producer 'p' seq 0 was already sent at a:2");
  EXPECT_EQ(error_of({{"a", lines({kHeader, send("p", 0, kT), result("p", 0, kT), result("p", 0, kT)})}}),
            "a:4: send_result record: producer 'p' seq 0 already ended at a:3");
  EXPECT_EQ(error_of({{"a", ""}}), "a: empty; expected a history file (mqadmin perf ... --history)");
  EXPECT_EQ(error_of({{"a", lines({R"({"type":"history","format":"other","version":1})"})}}),
            "a:1: history record: format 'other'; expected 'mqlab-history'");
}

TEST(HistoryFile, AReceiptOfAnUnknownProducerIsCountedApart) {
  const std::string p = lines({kHeader, send("p", 0, kT), result("p", 0, kT + 1)});
  const std::string c = lines({kHeader, receipt("p", 0, kT + 2), receipt("elsewhere", 0, kT + 3)});
  Result<LoadedHistory> loaded = parse_history_files({{"p", p}, {"c", c}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ(loaded->receipts_without_send, 1);
  EXPECT_EQ(loaded->history.receipts().size(), 1u);
  EXPECT_EQ(check(*loaded).lost, 0);
}

}  // namespace
}  // namespace mqlab::sim::history_file_test
