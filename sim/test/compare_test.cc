// mqsim compare's C++ side: latency histograms bucket every value between
// their edges and sum across runs; replicated runs carry a lag series; the
// runs of a matrix are dealt to shards exactly once; the report aggregates
// its cells from the run records (sums, worst seeds, relative throughput,
// outcomes, lost classes, missing runs); and merging shard reports gives the
// unsharded report, refusing reports of another matrix or malformed ones.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "sim/compare.h"
#include "sim/compare_merge.h"
#include "sim/compare_report.h"
#include "sim/run_series.h"
#include "sim/scenario.h"
#include "sim/seed_run.h"

namespace mqlab::sim::compare_test {
namespace {

constexpr char kMatrix[] = R"(
name: tiny
duration: 6s
seeds: 1..2
matrix:
  topologies: [single_master, sync_replication]
  flush: [SYNC_FLUSH, ASYNC_FLUSH]
  faults:
    none: []
    crash: [{at: 2s, kind: crash_machine, target: broker-a-0, duration: 1s}]
)";

Scenario tiny_matrix() {
  Result<Scenario> scenario = parse_scenario(kMatrix, "tiny.yaml");
  MQ_ASSERT_MSG(scenario.ok(), scenario.status().to_string());
  return std::move(scenario).value();
}

RC_GTEST_PROP(LatencyHistogram, EveryValueLandsBetweenItsBucketsEdges, ()) {
  const Nanos value = *rc::gen::inRange<Nanos>(0, 1'000'000'000'000);
  LatencyHistogram histogram;
  histogram.add(value);
  RC_ASSERT(histogram.total() == 1);
  int bucket = -1;
  for (int i = 0; i < kHistogramBuckets; ++i) {
    if (histogram.counts[static_cast<size_t>(i)] == 1) bucket = i;
  }
  RC_ASSERT(bucket >= 0);
  RC_ASSERT(histogram_edge(bucket) <= value);
  if (bucket + 1 < kHistogramBuckets) RC_ASSERT(value < histogram_edge(bucket + 1));
}

TEST(LatencyHistogram, EdgesAreTenPerDecadeFromOneMicrosecond) {
  EXPECT_EQ(histogram_edge(0), 0);
  EXPECT_EQ(histogram_edge(1), 1259);  // 1 us * 10^0.1
  EXPECT_EQ(histogram_edge(10), 10'000);
  EXPECT_EQ(histogram_edge(40), 10'000'000);  // 10 ms
  EXPECT_EQ(histogram_edge(kHistogramBuckets - 1), 100 * kNanosPerSecond);
}

TEST(RunSeries, HistogramsCountCompletedSendsAndFirstReceipts) {
  History history;
  const uint64_t a = history.begin_send("producer-0", 0, "", 0);
  const uint64_t b = history.begin_send("producer-0", 0, "", 0);
  history.begin_send("producer-0", 0, "", 0);  // pending: no latency
  history.complete_send(a, 2 * kNanosPerMilli, SendOutcome::kOk, "broker-a", 0, 0, "", 1);
  history.complete_send(b, 3 * kNanosPerSecond, SendOutcome::kUnknown, "broker-a", 0, 1, "", 3);
  history.receive(ReceiptRecord{a, "cg", "consumer-cg-0", 5 * kNanosPerMilli});
  history.receive(ReceiptRecord{a, "cg", "consumer-cg-0", 9 * kNanosPerMilli});  // a redelivery: not first
  const RunSeries series = latency_series(history);
  EXPECT_EQ(series.send_latency.total(), 2);
  EXPECT_EQ(series.e2e_latency.total(), 1);
  const nlohmann::json json = run_series_to_json(series);
  EXPECT_EQ(json["send_latency_histogram"]["counts"].size(), 2u);  // empty buckets left out
  EXPECT_EQ(json["e2e_latency_histogram"]["counts"][0][1], 1);
}

TEST(RunSeries, AReplicatedRunSamplesEachGroupsLagEveryHalfSecond) {
  std::vector<Scenario> cells = expand_matrix(tiny_matrix()).value();
  const Scenario& replicated = cells[4 + 1];  // sync_replication/SYNC_FLUSH/crash
  ASSERT_EQ(replicated.name, "sync_replication/SYNC_FLUSH/crash");
  const SeedRun run = run_seed(replicated, 1);
  ASSERT_EQ(run.result.series.replication_lag.size(), 2u);  // broker-a, broker-b
  EXPECT_EQ(run.result.series.replication_lag[0].broker_group, "broker-a");
  const auto& samples = run.result.series.replication_lag[0].bytes;
  EXPECT_EQ(samples.size(), static_cast<size_t>(replicated.duration / kLagSampleInterval));
  // broker-a's master is down from 2 s to 3 s: no lag to speak of then.
  EXPECT_FALSE(samples[4].has_value());  // the sample at 2.5 s
  EXPECT_TRUE(samples[1].has_value());   // at 1 s, both up
  const SeedRun single = run_seed(cells[1], 1);
  EXPECT_TRUE(single.result.series.replication_lag.empty());  // no slaves, no lag
  EXPECT_GT(single.result.series.send_latency.total(), 0);
}

RC_GTEST_PROP(CompareRuns, ShardsDealEveryRunExactlyOnce, ()) {
  const size_t cells = *rc::gen::inRange<size_t>(1, 30);
  const uint64_t first = *rc::gen::inRange<uint64_t>(0, 5);
  const SeedRange seeds{first, first + *rc::gen::inRange<uint64_t>(0, 6)};
  const uint64_t count = *rc::gen::inRange<uint64_t>(1, 9);
  std::multiset<std::pair<size_t, uint64_t>> dealt;
  for (uint64_t index = 0; index < count; ++index) {
    for (const CompareRun& run : compare_runs(cells, seeds, Shard{index, count})) dealt.emplace(run.cell, run.seed);
  }
  RC_ASSERT(dealt.size() == cells * seeds.count());
  std::set<std::pair<size_t, uint64_t>> once(dealt.begin(), dealt.end());
  RC_ASSERT(once.size() == dealt.size());
}

// A finished run's record with the figures the aggregation reads.
nlohmann::json record(const CompareCell& cell, uint64_t seed, int64_t acked, int64_t lost, double p99_ms,
                      double unavailable_s, double throughput) {
  nlohmann::json latency = {{"count", acked}, {"p50_ms", 1.0}, {"p90_ms", 1.0}, {"p99_ms", p99_ms},
                            {"p999_ms", p99_ms}, {"max_ms", p99_ms}};
  nlohmann::json lost_messages = nlohmann::json::array();
  for (int64_t i = 0; i < lost; ++i) {
    lost_messages.push_back({{"seq", 100 + i}, {"group", "cg"}, {"broker", "broker-a"}, {"acked_at_s", 2.0 + 0.01 * i},
                             {"fault_index", 0}, {"fault", "2.000s crash_machine broker-a-0 for 1.000s"}});
  }
  TaskOutcome outcome;
  outcome.run = {{"seed", seed}, {"passed", true}, {"trace_digest", "t" + std::to_string(seed)},
                 {"history_digest", "h"}, {"wall_seconds", 0.25},
                 {"figures", {{"sent", acked}, {"acknowledged", acked}, {"lost", lost}, {"unknown", 1},
                              {"duplicates", 0}, {"unavailable_write_s", unavailable_s}, {"unavailable_read_s", 0.0},
                              {"throughput_msgs_per_s", throughput}, {"send_latency", latency},
                              {"e2e_latency", latency}}},
                 {"recoveries", nlohmann::json::array({{{"process", "broker-a-0"}, {"started_at_s", 3.0},
                                                        {"ready", true}, {"recovery_s", 0.5}}})},
                 {"lost_messages", lost_messages},
                 {"unavailable_write_windows", nlohmann::json::array({{{"broker", "broker-a"}, {"from_s", 2.0},
                                                                       {"to_s", 2.5}},
                                                                      {{"broker", "broker-a"}, {"from_s", 2.4},
                                                                       {"to_s", 3.0}}})},
                 {"unavailable_read_windows", nlohmann::json::array()}};
  return compare_run_record(cell, seed, outcome, "tiny.yaml");
}

struct Fixture {
  Scenario base = tiny_matrix();
  std::vector<CompareCell> cells = compare_cells(base);
  nlohmann::json header = compare_header(base, "tiny.yaml", kMatrix, base.seeds, Shard{});

  // Every run of the matrix; single_master/ASYNC_FLUSH/crash loses 3 then 5.
  std::vector<nlohmann::json> runs() const {
    std::vector<nlohmann::json> all;
    for (const CompareCell& cell : cells) {
      for (uint64_t seed = 1; seed <= 2; ++seed) {
        const bool lossy = cell.name == "single_master/ASYNC_FLUSH/crash";
        all.push_back(record(cell, seed, 100 * static_cast<int64_t>(seed), lossy ? 1 + 2 * static_cast<int64_t>(seed) : 0,
                             seed == 1 ? 4.0 : 2.0, seed == 1 ? 1.5 : 0.5, cell.topology == "single_master" ? 50 : 40));
      }
    }
    return all;
  }
};

TEST(CompareReport, CellsSumCountsAndTakeTheWorstSeed) {
  Fixture f;
  ASSERT_EQ(f.cells.size(), 8u);
  EXPECT_EQ(f.cells[3].name, "single_master/ASYNC_FLUSH/crash");
  const nlohmann::json report = make_compare_report(f.header, f.runs(), 1.0);
  ASSERT_EQ(report["configurations"].size(), 4u);
  const nlohmann::json& lossy = report["configurations"][1]["cells"][1];
  EXPECT_EQ(report["configurations"][1]["flush"], "ASYNC_FLUSH");
  EXPECT_EQ(lossy["fault"], "crash");
  EXPECT_EQ(lossy["acknowledged"], 300);
  EXPECT_EQ(lossy["lost"], 8);
  EXPECT_DOUBLE_EQ(lossy["lost_per_million"].get<double>(), 1e6 * 8 / 300);
  EXPECT_DOUBLE_EQ(lossy["send_p99_ms"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(lossy["unavailable_write_s"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(lossy["recovery_s"].get<double>(), 0.5);
  EXPECT_EQ(lossy["outcome"], "loss");  // these runs carry no loss bound
  EXPECT_EQ(lossy["worst_seed"], 2);
  // Throughput relative to the fastest configuration under the same fault.
  EXPECT_DOUBLE_EQ(lossy["throughput_relative"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(report["configurations"][2]["cells"][1]["throughput_relative"].get<double>(), 0.8);
  EXPECT_EQ(report["configurations"][0]["cells"][0]["outcome"], "no_loss");
  // One lost class, its worst seed and the command replaying it.
  ASSERT_EQ(report["lost_classes"].size(), 1u);
  EXPECT_EQ(report["lost_classes"][0]["messages"], 8);
  EXPECT_EQ(report["lost_classes"][0]["worst_seed"], 2);
  EXPECT_EQ(report["lost_classes"][0]["replay"],
            "mqsim replay tiny.yaml --cell single_master/ASYNC_FLUSH/crash --seed 2 --trace trace.txt");
  // Runs keep their figures; lost messages are summarised, windows merged.
  const nlohmann::json& run = report["runs"][7]["run"];
  EXPECT_EQ(report["runs"][7]["cell"], "single_master/ASYNC_FLUSH/crash");
  EXPECT_FALSE(run.contains("lost_messages"));
  EXPECT_EQ(run["lost_classes"][0]["messages"], 5);
  EXPECT_EQ(run["unavailable_write_windows"].size(), 1u);
  EXPECT_EQ(report["totals"]["runs"], 16);
  EXPECT_EQ(report["totals"]["missing"], 0);
  EXPECT_TRUE(compare_passed(report));
}

TEST(CompareReport, ALostClassCountsEveryMessageWhenTheCheckerListedOnlySome) {
  Fixture f;
  std::vector<nlohmann::json> runs = f.runs();
  TaskOutcome outcome;
  outcome.run = runs[7]["run"];  // single_master/ASYNC_FLUSH/crash seed 2, 5 lost, all listed
  outcome.run["figures"]["lost"] = 1500;  // as if the checker listed 5 of 1500
  outcome.run["lost_messages"] = nlohmann::json::array();
  for (int i = 0; i < 5; ++i) {
    outcome.run["lost_messages"].push_back({{"seq", i}, {"group", "cg"}, {"broker", "broker-a"},
                                            {"acked_at_s", 2.0 + i}, {"fault_index", 0},
                                            {"fault", "2.000s crash_machine broker-a-0 for 1.000s"}});
  }
  runs[7] = compare_run_record(f.cells[3], 2, outcome, "tiny.yaml");
  EXPECT_EQ(runs[7]["run"]["lost_classes"][0]["messages"], 1500);
  EXPECT_FALSE(runs[7]["run"]["lost_classes"][0]["complete"].get<bool>());
  const nlohmann::json report = make_compare_report(f.header, runs, 1.0);
  EXPECT_EQ(report["lost_classes"][0]["messages"], 3 + 1500);
  EXPECT_FALSE(report["lost_classes"][0]["complete"].get<bool>());
  EXPECT_DOUBLE_EQ(report["lost_classes"][0]["acked_span_ms"].get<double>(), 4000);
}

TEST(CompareReport, LossBoundsAreSummedAndJudgedPerSeed) {
  Fixture f;
  std::vector<nlohmann::json> runs = f.runs();
  for (nlohmann::json& r : runs) {
    if (r["cell"] != "single_master/ASYNC_FLUSH/crash") continue;
    const int64_t lost = r["run"]["figures"]["lost"];
    r["run"]["loss_bound"] = {{"messages", 4}, {"reason", "one flush interval"}};
    r["run"]["within_bound"] = lost <= 4;  // seed 1 loses 3, seed 2 loses 5
  }
  const nlohmann::json cell = make_compare_report(f.header, runs, 1.0)["configurations"][1]["cells"][1];
  EXPECT_EQ(cell["outcome"], "loss_exceeds_bound");
  EXPECT_DOUBLE_EQ(cell["loss_bound"]["messages"].get<double>(), 8);
  EXPECT_FALSE(cell["loss_bound"]["within_bound"].get<bool>());
  EXPECT_DOUBLE_EQ(cell["loss_bound"]["exceeded_by"].get<double>(), 1);
}

TEST(CompareReport, AShardListsOnlyItsOwnShareAsMissing) {
  Fixture f;
  const nlohmann::json header = compare_header(f.base, "tiny.yaml", kMatrix, f.base.seeds, Shard{1, 4});
  const nlohmann::json report = make_compare_report(header, {}, 0.0);
  EXPECT_EQ(report["totals"]["missing"], 4);  // 16 runs, every 4th from the 2nd
  EXPECT_EQ(report["missing_runs"][0]["cell"], "single_master/SYNC_FLUSH/none");
  EXPECT_EQ(report["missing_runs"][0]["seed"], 2);
  EXPECT_FALSE(compare_passed(report));
}

TEST(CompareMerge, ShardsMergeIntoTheUnshardedReport) {
  Fixture f;
  const std::vector<nlohmann::json> all = f.runs();
  const nlohmann::json whole = make_compare_report(f.header, all, 2.0);
  std::vector<std::pair<std::string, nlohmann::json>> shards;
  for (uint64_t index = 0; index < 2; ++index) {
    std::vector<nlohmann::json> share;
    for (size_t i = index; i < all.size(); i += 2) share.push_back(all[i]);
    const nlohmann::json header = compare_header(f.base, "tiny.yaml", kMatrix, f.base.seeds, Shard{index, 2});
    shards.emplace_back("shard" + std::to_string(index), make_compare_report(header, share, 1.0));
  }
  Result<nlohmann::json> merged = merge_compare_reports(shards);
  ASSERT_TRUE(merged.ok()) << merged.status().to_string();
  EXPECT_EQ(*merged, whole);
  // Merging a shard with itself is a determinism check, and passes.
  EXPECT_TRUE(merge_compare_reports({shards[0], shards[0]}).ok());
}

TEST(CompareMerge, RefusesAnotherMatrixADisagreementAndMalformedReports) {
  Fixture f;
  const nlohmann::json whole = make_compare_report(f.header, f.runs(), 1.0);
  nlohmann::json other = whole;
  other["scenario_hash"] = "0123456789abcdef";
  Result<nlohmann::json> merged = merge_compare_reports({{"a", whole}, {"b", other}});
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.status().message().find("differ in \"scenario_hash\""), std::string::npos);

  nlohmann::json changed = whole;
  changed["runs"][3]["run"]["trace_digest"] = "different";
  merged = merge_compare_reports({{"a", whole}, {"b", changed}});
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.status().message().find("must always run the same way"), std::string::npos);

  nlohmann::json stray = whole;
  stray["runs"][0]["topology"] = "no_such_topology";
  EXPECT_FALSE(merge_compare_reports({{"a", stray}}).ok());
  nlohmann::json broken = whole;
  broken["runs"][0]["run"]["figures"].erase("lost");
  merged = merge_compare_reports({{"a", broken}});
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.status().message().find("malformed compare report"), std::string::npos);
  EXPECT_FALSE(merge_compare_reports({{"a", nlohmann::json{{"report", "mqsim-sweep"}}}}).ok());
  EXPECT_FALSE(merge_compare_reports({}).ok());
}

TEST(MatrixCell, FindsACellByNameAndListsThemOtherwise) {
  const Scenario base = tiny_matrix();
  Result<Scenario> cell = matrix_cell(base, "sync_replication/ASYNC_FLUSH/crash");
  ASSERT_TRUE(cell.ok());
  EXPECT_EQ(cell->topology.slaves_per_group, 1);
  EXPECT_EQ(cell->broker.store.flushDiskType, store::FlushDiskType::ASYNC_FLUSH);
  EXPECT_EQ(cell->faults.schedule.events.size(), 1u);
  Result<Scenario> missing = matrix_cell(base, "sync_replication/ASYNC_FLUSH/flood");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("single_master/SYNC_FLUSH/none"), std::string::npos);
}

TEST(MatrixCell, AClientAxisNamesTheRowsAndTheHeaderListsThem) {
  const std::string text = std::string(kMatrix) + "  clients: {mqlab: {}, rocketmq4: {slaveReadOnUnreachableMaster: false}}\n";
  Result<Scenario> base = parse_scenario(text, "tiny-clients.yaml");
  ASSERT_TRUE(base.ok()) << base.status().to_string();
  const std::vector<CompareCell> cells = compare_cells(*base);
  ASSERT_EQ(cells.size(), 16u);
  EXPECT_EQ(cells[4].name, "single_master+rocketmq4/SYNC_FLUSH/none");
  EXPECT_EQ(cells[4].topology, "single_master+rocketmq4");
  const nlohmann::json header = compare_header(*base, "tiny-clients.yaml", text, base->seeds, Shard{});
  EXPECT_EQ(header.at("matrix").at("topologies"),
            (nlohmann::json{"single_master+mqlab", "single_master+rocketmq4", "sync_replication+mqlab",
                            "sync_replication+rocketmq4"}));
  Result<Scenario> cell = matrix_cell(*base, "sync_replication+rocketmq4/ASYNC_FLUSH/crash");
  ASSERT_TRUE(cell.ok()) << cell.status().to_string();
  EXPECT_FALSE(cell->client.config.slaveReadOnUnreachableMaster);
  EXPECT_EQ(cell->topology.slaves_per_group, 1);
}

}  // namespace
}  // namespace mqlab::sim::compare_test
