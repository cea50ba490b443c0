// check_loaded_history: a real run's history judged with its scenario gives
// the RunResult mqsim run gives (losses attributed to the scenario's faults,
// its expect: section evaluated), and the JSON report has mqsim run's shape.
#include "sim/history_check.h"

#include <gtest/gtest.h>

#include <sstream>

#include "sim/run_report.h"

namespace mqlab::sim::history_check_test {
namespace {

const char* const kScenario = R"(
name: checked
duration: 10s
topology: {preset: multi_master}
faults:
  - {at: 2s, kind: kill_process, target: broker-a-0, duration: 3s}
expect:
  lost: 0
)";

const std::string kHeader = R"({"type":"history","format":"mqlab-history","version":1,"clock":"wall_ns"})";

// Two acknowledged sends, to broker-a and broker-b; only broker-b's was received.
std::string history_text() {
  return kHeader + "\n" +
         R"({"type":"event","at":1000000000,"what":"run_start"})" "\n"
         R"({"type":"send","producer":"p","seq":0,"at":1500000000,"body_crc":1})" "\n"
         R"({"type":"send_result","producer":"p","seq":0,"at":1600000000,"outcome":"SEND_OK","broker_name":"broker-a","queue_id":0,"queue_offset":0})" "\n"
         R"({"type":"send","producer":"p","seq":1,"at":1700000000,"body_crc":1})" "\n"
         R"({"type":"send_result","producer":"p","seq":1,"at":1800000000,"outcome":"SEND_OK","broker_name":"broker-b","queue_id":0,"queue_offset":0})" "\n"
         R"({"type":"receipt","producer":"p","seq":1,"at":1900000000,"group":"g","broker_name":"broker-b","queue_id":0,"queue_offset":0,"body_crc":1})" "\n";
}

TEST(HistoryCheck, ALossIsAttributedToTheScenariosFaultAndFailsItsExpectation) {
  Result<Scenario> scenario = parse_scenario(kScenario, "checked.yaml");
  ASSERT_TRUE(scenario.ok()) << scenario.status().to_string();
  Result<LoadedHistory> loaded = parse_history_files({{"h", history_text()}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  HistoryCheckOptions options;
  options.scenario = &*scenario;
  const RunResult result = check_loaded_history(*loaded, options);
  EXPECT_EQ(result.scenario, "checked");
  EXPECT_EQ(result.report.lost, 1);
  EXPECT_EQ(result.report.lost_by_fault, (std::map<int, int64_t>{{0, 1}}));  // the kill of broker-a-0 followed the ack
  ASSERT_EQ(result.expectations.size(), 1u);
  EXPECT_FALSE(result.expectations[0].held);
  EXPECT_FALSE(result.passed);
  EXPECT_FALSE(result.converged);

  const nlohmann::json report = history_check_to_json(result, *loaded);
  EXPECT_EQ(report.at("source"), "real");
  EXPECT_EQ(report.at("figures").at("lost"), 1);
  EXPECT_EQ(report.at("lost_messages").at(0).at("producer"), "p");
  EXPECT_EQ(report.at("lost_messages").at(0).at("producer_seq"), 0);
  // Every key of a simulated run's report is there.
  const nlohmann::json simulated_shape = run_to_json(result);
  for (const auto& [key, value] : simulated_shape.items()) EXPECT_TRUE(report.contains(key)) << key;

  std::ostringstream printed;
  print_history_check(printed, result, *loaded);
  EXPECT_NE(printed.str().find("lost: p seq 0 (broker-a, acknowledged at 0.600 s) never reached g: 2.000s "
                               "kill_process broker-a-0 for 3.000s"),
            std::string::npos)
      << printed.str();
  EXPECT_NE(printed.str().find("FAILED"), std::string::npos);
}

TEST(HistoryCheck, WithoutAScenarioARunPassesWhenNothingAcknowledgedWasLost) {
  std::string text = history_text();
  text += R"({"type":"receipt","producer":"p","seq":0,"at":2000000000,"group":"g","broker_name":"broker-a","queue_id":0,"queue_offset":0,"body_crc":1})" "\n";
  Result<LoadedHistory> loaded = parse_history_files({{"h", text}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  const RunResult result = check_loaded_history(*loaded, HistoryCheckOptions{});
  EXPECT_EQ(result.report.lost, 0);
  EXPECT_TRUE(result.passed);
  EXPECT_EQ(result.scenario, "history");
}

}  // namespace
}  // namespace mqlab::sim::history_check_test
