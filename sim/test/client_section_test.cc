// A scenario's `client:` section reaches the simulated clients: the same
// run with RocketMQ 4.x's consumer (slaveReadOnUnreachableMaster: false)
// and with mqlab's default differs exactly where that key says it should.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "sim/scenario.h"
#include "sim/sim_world.h"
#include "sim/test/quiet_run.h"

namespace mqlab::sim::client_section_test {
namespace {

// The consumer stops (SIGSTOP) for 15 s while the producer goes on, so
// both groups hold a backlog when broker-a's master is killed at 15 s (its
// slave has that backlog: async replication lags by milliseconds). When the
// consumer resumes at 20 s, broker-a's backlog is readable from the slave
// only; the master is back at 55 s. The NameServer drops a killed broker
// from the route at once (its connection closed), so a 4.x client would
// read the slave at its next route poll: every 90 s here, so that it waits
// for the master instead.
std::string master_killed_under_backlog(const std::string& slave_read) {
  return "name: slave-read\nduration: 60s\nseeds: 1\n"
         "topology: {preset: async_replication, clients: 2}\n"
         "client: {pollNameServerInterval: 90000" +
         slave_read +
         "}\n"
         "workload:\n  topic: T\n  queues_per_broker: 2\n  producers: {count: 1, rate: 50/s}\n"
         "  consumer_groups: [{name: cg, consumers: 1}]\n"
         "faults:\n"
         "  - {at: 5s, kind: pause_process, target: consumer-cg-0, duration: 15s}\n"
         "  - {at: 15s, kind: kill_process, target: broker-a-0, duration: 40s}\n";
}

RunResult run(const Scenario& scenario) {
  SimWorld world(scenario, 1);
  return run_quietly(world);
}

TEST(ClientSection, RocketMQ4sConsumerWaitsForTheKilledMasterWhereMqlabsReadsTheSlave) {
  const Result<Scenario> defaults = parse_scenario(master_killed_under_backlog(""), "slave-read.yaml");
  ASSERT_TRUE(defaults.ok()) << defaults.status().to_string();
  const Result<Scenario> rocketmq4_client =
      parse_scenario(master_killed_under_backlog(", slaveReadOnUnreachableMaster: false"), "slave-read.yaml");
  ASSERT_TRUE(rocketmq4_client.ok()) << rocketmq4_client.status().to_string();
  const RunResult mqlab = run(*defaults);
  const RunResult rocketmq4 = run(*rocketmq4_client);
  ASSERT_TRUE(mqlab.converged) << mqlab.liveness_failure;
  ASSERT_TRUE(rocketmq4.converged) << rocketmq4.liveness_failure;
  EXPECT_EQ(mqlab.report.lost, 0);
  EXPECT_EQ(rocketmq4.report.lost, 0);
  // The same sends (the key changes nothing on the producing side before
  // the kill) ...
  EXPECT_GT(mqlab.report.acknowledged, 2000);
  // ... but broker-a's backlog waits for its master's restart (35 s after
  // the consumer resumed) under 4.x's client, and is read from the slave
  // within seconds under mqlab's.
  EXPECT_GT(rocketmq4.report.read_unavailable_s, mqlab.report.read_unavailable_s + 20.0);
  std::cout << "read unavailable: mqlab's client " << mqlab.report.read_unavailable_s << " s, RocketMQ 4.x's "
            << rocketmq4.report.read_unavailable_s << " s\n";
}

}  // namespace
}  // namespace mqlab::sim::client_section_test
