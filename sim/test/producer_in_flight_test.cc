// The simulated producer's in-flight cap (workload.producers.max_in_flight):
// never more sends outstanding than the cap, and with it a paused broker no
// longer collects every arrival until the first timeout, so far fewer
// messages end up stored twice (the original on the resumed broker plus the
// retry elsewhere). The scenario is the kill/pause one real runs repeat.
#include <gtest/gtest.h>

#include <string>

#include "sim/scenario.h"
#include "sim/sim_world.h"

namespace mqlab::sim::producer_in_flight_test {
namespace {

Scenario kill_pause(int max_in_flight) {
  Result<Scenario> loaded = load_scenario(std::string(MQLAB_SOURCE_DIR) + "/scenarios/real-multi-master-kill-pause.yaml");
  MQ_ASSERT_MSG(loaded.ok(), loaded.status().to_string());
  Scenario scenario = std::move(loaded).value();
  scenario.workload.producers.max_in_flight = max_in_flight;
  return scenario;
}

RunResult run(const Scenario& scenario) {
  SimWorld world(scenario, scenario.seeds.first);
  return world.run();
}

TEST(ProducerInFlight, TheCapHoldsAndAPausedBrokerFillsIt) {
  const Scenario capped = kill_pause(16);
  const RunResult result = run(capped);
  // The 4 s pause holds every send routed to the paused broker for the 3 s
  // send timeout: the producer reaches its cap and goes no further.
  EXPECT_EQ(result.peak_sends_in_flight, 16);
  EXPECT_TRUE(result.passed);
  // Arrivals waited rather than being dropped: as many sends as arrivals
  // (300/s for 22 s from the 3 s produce start; a handful left waiting at the end).
  EXPECT_GT(result.report.sent, 6'500);
}

TEST(ProducerInFlight, WithoutACapThePauseStoresHundredsTwiceWithItAFew) {
  const RunResult uncapped = run(kill_pause(100'000));
  const RunResult capped = run(kill_pause(16));
  // Uncapped, every arrival for the paused broker piles up in flight.
  EXPECT_GT(uncapped.peak_sends_in_flight, 16);
  EXPECT_GT(uncapped.report.messages_stored_twice, 100);
  // Capped, at most the sends outstanding at each of the two faults (16
  // each) can be stored on the faulted broker and again by a retry.
  EXPECT_LE(capped.report.messages_stored_twice, 2 * 16);
  EXPECT_LT(capped.report.messages_stored_twice, uncapped.report.messages_stored_twice);
  EXPECT_EQ(capped.report.lost, 0);
}

}  // namespace
}  // namespace mqlab::sim::producer_in_flight_test
