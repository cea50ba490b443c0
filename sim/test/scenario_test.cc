// Checks the scenario schema: every file under scenarios/ loads (and a matrix
// expands), and bad files fail with "file:line:column: key.path: what;
// expected ..." by parsing small YAML texts and matching the message.
#include "sim/scenario.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "sim/yaml_reader.h"

namespace mqlab::sim::scenario_test {
namespace {

using faults::FaultKind;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string scenarios_dir() { return std::string(MQLAB_SOURCE_DIR) + "/scenarios"; }

Scenario parse_ok(const std::string& text) {
  Result<Scenario> scenario = parse_scenario(text, "test.yaml");
  EXPECT_TRUE(scenario.ok()) << scenario.status().to_string();
  return scenario.ok() ? std::move(scenario).value() : Scenario{};
}

// A matrix's cells by name, in expansion order.
std::vector<std::string> cell_names(const std::vector<Scenario>& cells) {
  std::vector<std::string> names;
  for (const Scenario& cell : cells) names.push_back(cell.name);
  return names;
}

// The message of the error parsing text gives; fails the test if it parses.
std::string error_of(const std::string& text) {
  Result<Scenario> scenario = parse_scenario(text, "test.yaml");
  EXPECT_FALSE(scenario.ok()) << "parsed, but should not have:\n" << text;
  if (scenario.ok()) return "";
  EXPECT_EQ(scenario.status().code(), StatusCode::kInvalidArgument);
  return scenario.status().message();
}

std::vector<std::string> scenario_files() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(scenarios_dir())) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// ------------------------------------------------------------ the files

TEST(ScenarioFiles, EveryFileUnderScenariosParses) {
  const std::vector<std::string> files = scenario_files();
  ASSERT_GE(files.size(), 7u) << "scenarios/ looks incomplete";
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    Result<Scenario> scenario = load_scenario(file);
    ASSERT_TRUE(scenario.ok()) << scenario.status().to_string();
    EXPECT_FALSE(scenario->name.empty());
    EXPECT_GT(scenario->duration, 0);
    if (scenario->matrix) {
      Result<std::vector<Scenario>> cells = expand_matrix(*scenario);
      ASSERT_TRUE(cells.ok()) << cells.status().to_string();
      EXPECT_EQ(cells->size(), scenario->matrix->size());
    }
  }
}

TEST(ScenarioFiles, ExamplesSayWhatTheirNamesSay) {
  const Result<Scenario> sync_crash = load_scenario(scenarios_dir() + "/single-master-sync-crash.yaml");
  ASSERT_TRUE(sync_crash.ok()) << sync_crash.status().to_string();
  EXPECT_EQ(sync_crash->broker.store.flushDiskType, store::FlushDiskType::SYNC_FLUSH);
  EXPECT_EQ(sync_crash->topology.broker_groups, 1);
  ASSERT_EQ(sync_crash->faults.schedule.events.size(), 2u);
  EXPECT_EQ(sync_crash->faults.schedule.events[0].kind, FaultKind::kKillProcess);
  EXPECT_EQ(sync_crash->expect.at("lost").equals, 0.0);

  const Result<Scenario> canary = load_scenario(scenarios_dir() + "/single-master-async-power-loss-canary.yaml");
  ASSERT_TRUE(canary.ok()) << canary.status().to_string();
  EXPECT_EQ(canary->broker.store.flushDiskType, store::FlushDiskType::ASYNC_FLUSH);
  EXPECT_EQ(canary->faults.schedule.events.at(0).kind, FaultKind::kCrashMachine);
  EXPECT_EQ(canary->expect.at("lost").equals, 0.0);  // what ASYNC_FLUSH cannot promise: must fail

  const Result<Scenario> partition = load_scenario(scenarios_dir() + "/multi-master-async-partition.yaml");
  ASSERT_TRUE(partition.ok()) << partition.status().to_string();
  const faults::FaultEvent& cut = partition->faults.schedule.events.at(0);
  EXPECT_EQ(cut.side_a, (std::set<std::string>{"broker-a-0"}));
  EXPECT_EQ(cut.side_b, (std::set<std::string>{"broker-b-0", "client-0", "client-1", "namesrv-0"}));
}

TEST(ScenarioFiles, StandardBenchmarkIsTwoGroupsAt200PerSecondWithAFaultAMinute) {
  const Result<Scenario> bench = load_scenario(scenarios_dir() + "/bench/standard.yaml");
  ASSERT_TRUE(bench.ok()) << bench.status().to_string();
  EXPECT_EQ(bench->topology.broker_groups, 2);
  EXPECT_EQ(bench->topology.disk.name, "sata_ssd");
  EXPECT_EQ(bench->duration, seconds(600));
  EXPECT_EQ(bench->workload.producers.count * bench->workload.producers.rate_per_sec, 200.0);
  EXPECT_EQ(bench->workload.producers.size_max_bytes, 256u);
  EXPECT_EQ(bench->workload.consumer_groups.size(), 1u);
  EXPECT_EQ(bench->faults.schedule.events.size(), 9u);
}

TEST(ScenarioFiles, TopologyMatrixExpandsToEveryCombinationNamedTopologyFlushFault) {
  const Result<Scenario> base = load_scenario(scenarios_dir() + "/topology-matrix.yaml");
  ASSERT_TRUE(base.ok()) << base.status().to_string();
  const Result<std::vector<Scenario>> cells = expand_matrix(*base);
  ASSERT_TRUE(cells.ok()) << cells.status().to_string();
  // Seven fault schedules plus `none`, the fault-free baseline compare measures cost against.
  ASSERT_EQ(cells->size(), 5u * 2u * 8u);
  EXPECT_EQ(cells->front().name, "single_master/SYNC_FLUSH/none");
  EXPECT_EQ(cells->back().name, "sync_replication/ASYNC_FLUSH/slow_disk");
  std::set<std::string> names;
  for (const Scenario& cell : *cells) {
    names.insert(cell.name);
    EXPECT_FALSE(cell.matrix.has_value());
    EXPECT_EQ(cell.seeds, (SeedRange{1, 2}));
    EXPECT_EQ(cell.duration, seconds(60));
  }
  EXPECT_EQ(names.size(), cells->size());
  EXPECT_TRUE(names.count("multi_master_raid10/ASYNC_FLUSH/disk_loss"));

  const auto cell = [&](const std::string& name) {
    return *std::find_if(cells->begin(), cells->end(), [&](const Scenario& s) { return s.name == name; });
  };
  const Scenario sync = cell("sync_replication/SYNC_FLUSH/master_partition");
  EXPECT_EQ(sync.broker.store.brokerRole, store::BrokerRole::SYNC_MASTER);
  EXPECT_EQ(sync.broker.store.flushDiskType, store::FlushDiskType::SYNC_FLUSH);
  EXPECT_EQ(sync.topology.slaves_per_group, 1);
  // "rest" is resolved per topology: the slave broker-a-1 exists only here.
  EXPECT_TRUE(sync.faults.schedule.events.at(0).side_b.count("broker-a-1"));
  EXPECT_FALSE(
      cell("single_master/SYNC_FLUSH/master_partition").faults.schedule.events.at(0).side_b.count("broker-b-0"));
  EXPECT_TRUE(cell("multi_master_raid10/SYNC_FLUSH/disk_loss").topology.raid10);
  EXPECT_EQ(cell("async_replication/ASYNC_FLUSH/process_crash").broker.store.brokerRole,
            store::BrokerRole::ASYNC_MASTER);
}

// ------------------------------------------------------------ defaults and values

TEST(ScenarioParse, MinimalFileGetsDefaults) {
  const Scenario s = parse_ok("duration: 30s\n");
  EXPECT_EQ(s.name, "test");  // the file's stem
  EXPECT_EQ(s.duration, seconds(30));
  EXPECT_EQ(s.seeds, (SeedRange{1, 1}));
  EXPECT_EQ(s.topology.broker_groups, 1);
  EXPECT_EQ(s.topology.disk.name, "sata_ssd");
  EXPECT_EQ(s.broker.store.flushDiskType, store::FlushDiskType::ASYNC_FLUSH);
  EXPECT_EQ(s.workload.consumer_groups.size(), 1u);
  EXPECT_TRUE(s.faults.schedule.events.empty());
  EXPECT_EQ(s.hash, scenario_hash("duration: 30s\n"));
}

TEST(ScenarioParse, QuantitiesReadExactly) {
  EXPECT_EQ(parse_duration_text("250us").value(), 250 * kNanosPerMicro);
  EXPECT_EQ(parse_duration_text("500ms").value(), millis(500));
  EXPECT_EQ(parse_duration_text("1.5s").value(), millis(1500));
  EXPECT_EQ(parse_duration_text("2m").value(), seconds(120));
  EXPECT_EQ(parse_duration_text("1h").value(), seconds(3600));
  EXPECT_EQ(parse_duration_text("10").value(), seconds(10));
  EXPECT_EQ(parse_duration_text("0.1").value(), millis(100));
  EXPECT_EQ(parse_duration_text("-2s").value(), -seconds(2));
  EXPECT_FALSE(parse_duration_text("30 sec").ok());
  EXPECT_FALSE(parse_duration_text("s").ok());
  EXPECT_EQ(parse_rate_text("200/s").value(), 200.0);
  EXPECT_EQ(parse_rate_text("30/min").value(), 0.5);
  EXPECT_EQ(parse_rate_text("7").value(), 7.0);
  EXPECT_FALSE(parse_rate_text("-1/s").ok());
  EXPECT_EQ(parse_size_text("256B").value(), 256u);
  EXPECT_EQ(parse_size_text("4KiB").value(), 4096u);
  EXPECT_EQ(parse_size_text("1GB").value(), 1000'000'000u);
  EXPECT_FALSE(parse_size_text("1.5B").ok());
  EXPECT_EQ(parse_bandwidth_text("1Gbit/s").value(), 125'000'000u);
  EXPECT_EQ(parse_bandwidth_text("600MB/s").value(), 600'000'000u);
  EXPECT_FALSE(parse_bandwidth_text("600MB").ok());
  for (const Nanos ns : {Nanos{0}, millis(1500), seconds(7200), Nanos{3}, -seconds(2)}) {
    EXPECT_EQ(parse_duration_text(duration_text(ns)).value(), ns) << duration_text(ns);
  }
}

TEST(ScenarioParse, SeedsAcceptANumberARangeAndAMapping) {
  EXPECT_EQ(parse_ok("duration: 1s\nseeds: 42\n").seeds, (SeedRange{42, 42}));
  EXPECT_EQ(parse_ok("duration: 1s\nseeds: 3..9\n").seeds, (SeedRange{3, 9}));
  EXPECT_EQ(parse_ok("duration: 1s\nseeds: {first: 5, last: 6}\n").seeds, (SeedRange{5, 6}));
  EXPECT_TRUE(contains(error_of("duration: 1s\nseeds: 9..3\n"), "test.yaml:2:8: seeds: '9..3' is not a seed range"));
}

TEST(ScenarioParse, BrokerConfKeysLandInTheStoreOrInBrokerConf) {
  const Scenario s = parse_ok(
      "duration: 1m\n"
      "broker:\n"
      "  flushDiskType: SYNC_FLUSH\n"
      "  brokerRole: SYNC_MASTER\n"
      "  flushIntervalCommitLog: 200\n"
      "  deleteWhen: 04\n"
      "  diskSpaceWarningLevelRatio: 0.8\n"
      "  autoCreateTopicEnable: false\n"
      "  defaultTopicQueueNums: 8\n");
  EXPECT_EQ(s.broker.store.flushDiskType, store::FlushDiskType::SYNC_FLUSH);
  EXPECT_EQ(s.broker.store.brokerRole, store::BrokerRole::SYNC_MASTER);
  EXPECT_EQ(s.broker.store.flushIntervalCommitLog, 200);
  EXPECT_EQ(s.broker.store.deleteWhen, "04");  // the text, not the integer 4
  EXPECT_EQ(s.broker.store.diskSpaceWarningLevelRatio, 0.8);
  EXPECT_EQ(s.broker.broker_conf,
            (std::map<std::string, std::string>{{"autoCreateTopicEnable", "false"}, {"defaultTopicQueueNums", "8"}}));
  const std::vector<std::string_view> keys = known_broker_conf_keys();
  for (const char* key : {"mappedFileSizeCommitLog", "syncFlushTimeout", "brokerRole", "haTransferBatchSize",
                          "brokerPermission", "registerNameServerPeriod", "slaveReadEnable"}) {
    EXPECT_TRUE(std::count(keys.begin(), keys.end(), key)) << key;
  }
}

TEST(ScenarioParse, MachinesFollowTheNamingConvention) {
  const Scenario s = parse_ok(
      "duration: 1m\n"
      "topology: {preset: async_replication, namesrvs: 2, clients: 2}\n"
      "workload:\n"
      "  producers: {count: 2}\n"
      "  consumer_groups: [{name: cg, consumers: 2}]\n");
  std::vector<std::string> names;
  for (const MachineSpec& m : scenario_machines(s)) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"broker-a-0", "broker-a-1", "broker-b-0", "broker-b-1", "namesrv-0",
                                             "namesrv-1", "client-0", "client-1"}));
  const std::vector<MachineSpec> machines = scenario_machines(s);
  EXPECT_EQ(machines[1].broker_group, "broker-a");
  EXPECT_EQ(machines[1].broker_id, 1);
  EXPECT_EQ(machines[0].processes, std::vector<std::string>{"broker-a-0"});
  EXPECT_EQ(machines[6].processes, (std::vector<std::string>{"producer-0", "consumer-cg-0"}));
  EXPECT_EQ(machines[7].processes, (std::vector<std::string>{"producer-1", "consumer-cg-1"}));
}

TEST(ScenarioParse, RaidDisksAndNemesis) {
  const Scenario s = parse_ok(
      "duration: 10m\n"
      "topology: {preset: multi_master_raid10, disk: {preset: hdd, seek_latency: 4ms}}\n"
      "faults:\n"
      "  - {at: 1m, kind: fail_disk, target: broker-a-0, disk_index: 3, duration: 1m}\n"
      "nemesis:\n"
      "  rates:\n"
      "    - {kind: kill_process, rate: 1/min, min_duration: 5s, max_duration: 20s}\n"
      "  window: {start: 30s}\n"
      "  quiet_period: 2m\n");
  EXPECT_TRUE(s.topology.raid10);
  EXPECT_EQ(s.topology.disk.seek_latency_ns, millis(4));
  EXPECT_EQ(s.topology.disk.name, "hdd (tuned)");
  EXPECT_EQ(s.faults.schedule.events.at(0).disk_index, 3);
  ASSERT_TRUE(s.faults.nemesis.has_value());
  EXPECT_EQ(s.faults.nemesis->rates.at(0).per_minute, 1.0);
  EXPECT_EQ(s.faults.nemesis_machines, (std::vector<std::string>{"broker-a-0", "broker-b-0"}));
  const std::vector<faults::NemesisTarget> targets = nemesis_targets(s);
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[0].disks, 4);
  EXPECT_TRUE(targets[0].raid10);
}

// ------------------------------------------------------------ errors

TEST(ScenarioParse, ClientKeysSetEveryClientsConfigAndDefaultToClientConfigs) {
  const Scenario defaults = parse_ok("duration: 1m\n");
  const client::ClientConfig config;
  EXPECT_EQ(defaults.client.config.pollNameServerInterval, config.pollNameServerInterval);
  EXPECT_EQ(defaults.client.config.slaveReadOnUnreachableMaster, config.slaveReadOnUnreachableMaster);
  EXPECT_EQ(defaults.client.config.serializeType, config.serializeType);
  EXPECT_TRUE(defaults.client.is_default());
  for (const client::ClientConfig::IntervalKey& key : client::ClientConfig::interval_keys()) {
    ClientSpec changed;
    changed.config.*key.field += 1;
    EXPECT_FALSE(changed.is_default()) << key.name;
  }
  const Scenario s = parse_ok(
      "duration: 1m\n"
      "client:\n"
      "  pollNameServerInterval: 10000\n"
      "  heartbeatBrokerInterval: 15000\n"
      "  persistConsumerOffsetInterval: 1000\n"
      "  rebalanceInterval: 20000\n"
      "  mqClientApiTimeout: 500\n"
      "  slaveReadOnUnreachableMaster: false\n"
      "  serializeType: ROCKETMQ\n");
  const client::ClientConfig c = s.client.for_client({"10.0.0.9:9876"}, "10.0.0.20", "producer-0");
  EXPECT_EQ(c.pollNameServerInterval, 10000);
  EXPECT_EQ(c.heartbeatBrokerInterval, 15000);
  EXPECT_EQ(c.persistConsumerOffsetInterval, 1000);
  EXPECT_EQ(c.rebalanceInterval, 20000);
  EXPECT_EQ(c.mqClientApiTimeout, 500);
  EXPECT_FALSE(c.slaveReadOnUnreachableMaster);
  EXPECT_EQ(c.serializeType, remoting::SerializeType::ROCKETMQ);
  EXPECT_EQ(c.namesrvAddr, std::vector<std::string>{"10.0.0.9:9876"});
  EXPECT_EQ(c.clientId(), "10.0.0.20@producer-0");
  const std::string text = describe(s);
  EXPECT_TRUE(contains(text, "pollNameServerInterval=10000")) << text;
  EXPECT_TRUE(contains(text, "slaveReadOnUnreachableMaster=false")) << text;
  EXPECT_TRUE(contains(text, "serializeType=ROCKETMQ")) << text;
  EXPECT_FALSE(s.client.is_default());
}

TEST(ScenarioErrors, ClientKeysAreClientConfigsWithItsLimits) {
  std::string message = error_of("duration: 1m\nclient:\n  slaveReadOnUnreachable: false\n");
  EXPECT_TRUE(contains(message,
                       "test.yaml:3:3: client.slaveReadOnUnreachable: unknown key 'slaveReadOnUnreachable' "
                       "(did you mean 'slaveReadOnUnreachableMaster'?); expected one of: pollNameServerInterval,"))
      << message;
  message = error_of("duration: 1m\nclient:\n  pollNameServerInterval: 0\n");
  EXPECT_TRUE(contains(message, "test.yaml:3:27: client.pollNameServerInterval:")) << message;
  EXPECT_TRUE(contains(message, "[1, 86400000]")) << message;
  message = error_of("duration: 1m\nclient:\n  serializeType: BINARY\n");
  EXPECT_TRUE(contains(message, "test.yaml:3:18: client.serializeType: 'BINARY'")) << message;
  EXPECT_TRUE(contains(message, "JSON")) << message;
  message = error_of("duration: 1m\nclient: fast\n");
  EXPECT_TRUE(contains(message, "test.yaml:2:9: client: is not a mapping")) << message;
}

TEST(ScenarioErrors, UnknownKeySuggestsTheKnownOnes) {
  const std::string message = error_of("duration: 1m\ntopology:\n  brokr_groups: 2\n");
  EXPECT_TRUE(contains(message,
                       "test.yaml:3:3: topology.brokr_groups: unknown key 'brokr_groups' "
                       "(did you mean 'broker_groups'?); expected one of: preset, broker_groups,"))
      << message;
  EXPECT_TRUE(
      contains(error_of("duraton: 1m\n"), "test.yaml:1:1: duraton: unknown key 'duraton' (did you mean 'duration'?)"));
}

TEST(ScenarioErrors, WrongTypeSaysWhatWasExpected) {
  std::string message = error_of("duration: 1m\ntopology:\n  broker_groups: two\n");
  EXPECT_TRUE(contains(message,
                       "test.yaml:3:18: topology.broker_groups: 'two' is not an integer; "
                       "expected an integer in [1, 26]"))
      << message;
  message = error_of("duration: 1m\nworkload:\n  producers: [1, 2]\n");
  EXPECT_TRUE(
      contains(message, "test.yaml:3:14: workload.producers: is a sequence; expected a mapping with keys count,"))
      << message;
  message = error_of("duration: 1m\ntopology:\n  raid10: sometimes\n");
  EXPECT_TRUE(
      contains(message, "test.yaml:3:11: topology.raid10: 'sometimes' is not a boolean; expected true or false"))
      << message;
}

TEST(ScenarioErrors, BadDuration) {
  const std::string message = error_of("duration: 30 sec\n");
  EXPECT_TRUE(contains(message, "test.yaml:1:11: duration: '30 sec' is not a duration; expected a number with a unit"))
      << message;
  EXPECT_TRUE(contains(error_of("seeds: 1\n"), "test.yaml:1:1: duration: is missing"));
}

TEST(ScenarioErrors, NegativeRate) {
  const std::string message = error_of("duration: 1m\nworkload:\n  producers:\n    rate: -5/s\n");
  EXPECT_TRUE(contains(message, "test.yaml:4:11: workload.producers.rate: '-5/s' is negative; expected a rate >= 0"))
      << message;
}

TEST(ScenarioParse, ProducersMaxInFlightDefaultsToTheSendersOfRealRuns) {
  // tools/mqrealrun.py runs `mqadmin perf produce -w 16`: 16 sender threads.
  EXPECT_EQ(parse_ok("duration: 1m\n").workload.producers.max_in_flight, 16);
  EXPECT_EQ(parse_ok("duration: 1m\nworkload:\n  producers: {max_in_flight: 1}\n").workload.producers.max_in_flight,
            1);
  EXPECT_TRUE(contains(describe(parse_ok("duration: 1m\nworkload:\n  producers: {max_in_flight: 64}\n")),
                       "max in flight 64"));
}

TEST(ScenarioErrors, MaxInFlightOutOfRangeOrNotAnInteger) {
  std::string message = error_of("duration: 1m\nworkload:\n  producers:\n    max_in_flight: 0\n");
  EXPECT_TRUE(contains(message, "test.yaml:4:20: workload.producers.max_in_flight: 0 is out of range; expected an "
                                "integer in [1, 100000]"))
      << message;
  message = error_of("duration: 1m\nworkload:\n  producers:\n    max_in_flight: many\n");
  EXPECT_TRUE(contains(message, "test.yaml:4:20: workload.producers.max_in_flight: 'many' is not an integer"))
      << message;
  message = error_of("duration: 1m\nworkload:\n  producers:\n    max_inflight: 4\n");
  EXPECT_TRUE(contains(message, "test.yaml:4:5: workload.producers.max_inflight: unknown key 'max_inflight' (did you "
                                "mean 'max_in_flight'?)"))
      << message;
}

TEST(ScenarioErrors, UnknownFaultKind) {
  const std::string message =
      error_of("duration: 1m\nfaults:\n  - {at: 10s, kind: crash_machin, target: broker-a-0}\n");
  EXPECT_TRUE(contains(message,
                       "test.yaml:3:21: faults[0].kind: 'crash_machin' is not a known value "
                       "(did you mean 'crash_machine'?); expected one of: kill_process, pause_process,"))
      << message;
}

TEST(ScenarioErrors, FaultTargetThatDoesNotExist) {
  std::string message =
      error_of("duration: 1m\nfaults:\n  - {at: 10s, kind: crash_machine, target: broker-c-0, duration: 5s}\n");
  EXPECT_TRUE(contains(message,
                       "test.yaml:3:44: faults[0].target: 'broker-c-0' is not a machine of this topology; "
                       "expected one of: broker-a-0, namesrv-0, client-0"))
      << message;
  message = error_of("duration: 1m\nfaults:\n  - {at: 10s, kind: kill_process, target: client-0}\n");
  EXPECT_TRUE(contains(message,
                       "faults[0].target: 'client-0' is not a process of this topology; expected one of: "
                       "broker-a-0, namesrv-0, producer-0, consumer-cg-0"))
      << message;
  message = error_of("duration: 1m\nfaults:\n  - {at: 10s, kind: fail_disk, target: broker-a-0, disk_index: 1}\n");
  EXPECT_TRUE(contains(message, "faults[0].disk_index: disk 1 does not exist on broker-a-0; expected 0..0")) << message;
  message = error_of("duration: 1m\nfaults:\n  - {at: 2m, kind: kill_process, target: broker-a-0}\n");
  EXPECT_TRUE(contains(message, "faults[0].at: starts at 2m, at or after the run's end")) << message;
  message = error_of("duration: 1m\nfaults:\n  - {at: 1s, kind: kill_process, target: broker-a-0, factor: 2}\n");
  EXPECT_TRUE(contains(message, "faults[0].factor: does not apply to kind kill_process")) << message;
}

TEST(ScenarioErrors, PartitionSideNamingAnUnknownMachine) {
  const std::string message = error_of(
      "duration: 1m\n"
      "faults:\n"
      "  - at: 10s\n"
      "    kind: partition\n"
      "    side_a: [broker-a-0]\n"
      "    side_b: [namesrv-0, broker-q-0]\n");
  EXPECT_TRUE(contains(message,
                       "test.yaml:6:25: faults[0].side_b[1]: 'broker-q-0' names no machine of this "
                       "topology; expected machine names (broker-a-0, namesrv-0, client-0) or aliases"))
      << message;
}

TEST(ScenarioErrors, UnknownBrokerConfKey) {
  const std::string message = error_of("duration: 1m\nbroker:\n  flushDiskTyp: SYNC_FLUSH\n");
  EXPECT_TRUE(contains(message,
                       "test.yaml:3:3: broker.flushDiskTyp: unknown key 'flushDiskTyp' "
                       "(did you mean 'flushDiskType'?); expected one of: storePathRootDir,"))
      << message;
  EXPECT_TRUE(contains(message, "brokerRole")) << message;
  EXPECT_TRUE(contains(message, "haSlaveFallbehindMax")) << message;
  EXPECT_TRUE(contains(error_of("duration: 1m\nbroker:\n  brokerName: broker-x\n"),
                       "test.yaml:3:3: broker.brokerName: 'brokerName' is set by mqsim from the topology"));
  EXPECT_TRUE(contains(error_of("duration: 1m\nbroker:\n  brokerRole: SLAVE\n"),
                       "broker.brokerRole: SLAVE is assigned by the topology"));
  EXPECT_TRUE(contains(error_of("duration: 1m\nbroker:\n  flushDiskType: SYNC\n"),
                       "test.yaml:3:18: broker.flushDiskType: 'SYNC' is not a known value"));
  EXPECT_TRUE(
      contains(error_of("duration: 1m\nbroker:\n  mappedFileSizeCommitLog: 1024\n"),
               "test.yaml:3:28: broker.mappedFileSizeCommitLog: mappedFileSizeCommitLog=1024: must be at least"));
}

TEST(ScenarioErrors, ExpectationWithUnknownMetric) {
  const std::string message = error_of("duration: 1m\nexpect:\n  lost: 0\n  p99_sent_ms: {max: 50}\n");
  EXPECT_TRUE(contains(message,
                       "test.yaml:4:3: expect.p99_sent_ms: unknown metric 'p99_sent_ms' "
                       "(did you mean 'p99_send_ms'?); expected one of: lost, unknown,"))
      << message;
  const std::string bound = error_of("duration: 1m\nexpect:\n  lost: {maximum: 3}\n");
  EXPECT_TRUE(contains(bound, "test.yaml:3:10: expect.lost.maximum: unknown key 'maximum'")) << bound;
}

TEST(ScenarioErrors, YamlSyntaxAndWorkloadRules) {
  EXPECT_TRUE(contains(error_of("duration: 1m\ntopology: {broker_groups: 2\n"), "test.yaml:"));
  EXPECT_TRUE(contains(error_of(""), "test.yaml:1:1: (document): the file is empty"));
  EXPECT_TRUE(contains(error_of("duration: 1m\nworkload:\n  producers: {arrival: bursts, burst_size: 10}\n"),
                       "workload.producers.burst_period: is missing"));
  EXPECT_TRUE(contains(error_of("duration: 1m\nworkload:\n  consumer_groups: [{name: a}, {name: a}]\n"),
                       "workload.consumer_groups[1].name: 'a' is used twice"));
  EXPECT_TRUE(contains(error_of("duration: 1m\nworkload:\n  producers: {message_size: 8MiB}\n"),
                       "workload.producers.message_size: exceeds the broker's maxMessageSize"));
}

TEST(ScenarioErrors, MatrixFaultMustFitEveryTopology) {
  const std::string message = error_of(
      "duration: 1m\n"
      "matrix:\n"
      "  topologies: [multi_master, single_master]\n"
      "  flush: [SYNC_FLUSH]\n"
      "  faults:\n"
      "    second_master: [{at: 10s, kind: kill_process, target: broker-b-0}]\n");
  EXPECT_TRUE(contains(message,
                       "test.yaml:6:59: matrix.faults.second_master[0].target: 'broker-b-0' is not a "
                       "process of this topology"))
      << message;
  EXPECT_TRUE(contains(message, "(with topology single_master)")) << message;
  EXPECT_TRUE(contains(error_of("duration: 1m\nmatrix: {topologies: [star], flush: [SYNC_FLUSH], faults: {a: []}}\n"),
                       "matrix.topologies[0]: 'star' is not a known value"));
}

// ------------------------------------------------------------ expand, describe, hash

TEST(ScenarioMatrix, InlineMatrixCountsAndSeeds) {
  const Scenario base = parse_ok(
      "name: m\n"
      "duration: 1m\n"
      "seeds: 7\n"
      "client: {slaveReadOnUnreachableMaster: false}\n"
      "matrix:\n"
      "  topologies: [single_master, async_replication]\n"
      "  flush: [ASYNC_FLUSH, SYNC_FLUSH]\n"
      "  faults:\n"
      "    none: []\n"
      "    crash: [{at: 10s, kind: crash_machine, target: broker-a-0, duration: 5s}]\n");
  ASSERT_TRUE(base.matrix.has_value());
  EXPECT_EQ(base.matrix->size(), 8u);
  const std::vector<Scenario> cells = expand_matrix(base).value();
  EXPECT_EQ(cell_names(cells),
            (std::vector<std::string>{"single_master/ASYNC_FLUSH/none", "single_master/ASYNC_FLUSH/crash",
                                      "single_master/SYNC_FLUSH/none", "single_master/SYNC_FLUSH/crash",
                                      "async_replication/ASYNC_FLUSH/none", "async_replication/ASYNC_FLUSH/crash",
                                      "async_replication/SYNC_FLUSH/none", "async_replication/SYNC_FLUSH/crash"}));
  EXPECT_EQ(cells[0].seeds, (SeedRange{7, 7}));  // the base's seeds: the matrix gives none
  EXPECT_TRUE(cells[0].faults.schedule.events.empty());
  // The file's client: section holds in every cell (the comparison of one client).
  for (const Scenario& cell : cells) EXPECT_FALSE(cell.client.config.slaveReadOnUnreachableMaster) << cell.name;
}

TEST(ScenarioMatrix, ClientsMakeEachTopologyARowPerClient) {
  const Scenario base = parse_ok(
      "duration: 1m\n"
      "client: {pollNameServerInterval: 20000}\n"
      "matrix:\n"
      "  topologies: [single_master, async_replication]\n"
      "  clients:\n"
      "    mqlab: {}\n"
      "    rocketmq4: {slaveReadOnUnreachableMaster: false}\n"
      "  flush: [ASYNC_FLUSH]\n"
      "  faults:\n"
      "    none: []\n");
  ASSERT_TRUE(base.matrix.has_value());
  EXPECT_EQ(base.matrix->size(), 4u);
  const std::vector<Scenario> cells = expand_matrix(base).value();
  EXPECT_EQ(cell_names(cells), (std::vector<std::string>{"single_master+mqlab/ASYNC_FLUSH/none",
                                                        "single_master+rocketmq4/ASYNC_FLUSH/none",
                                                        "async_replication+mqlab/ASYNC_FLUSH/none",
                                                        "async_replication+rocketmq4/ASYNC_FLUSH/none"}));
  EXPECT_TRUE(cells[0].client.config.slaveReadOnUnreachableMaster);
  EXPECT_FALSE(cells[1].client.config.slaveReadOnUnreachableMaster);
  EXPECT_FALSE(cells[3].client.config.slaveReadOnUnreachableMaster);
  EXPECT_EQ(cells[3].topology.slaves_per_group, 1);
  // Each named section goes over the file's own.
  for (const Scenario& cell : cells) EXPECT_EQ(cell.client.config.pollNameServerInterval, 20000) << cell.name;
  const std::string text = describe(base);
  EXPECT_TRUE(contains(text, "(each topology with 2 clients)")) << text;
  EXPECT_TRUE(contains(text, "client rocketmq4: pollNameServerInterval=20000")) << text;

  EXPECT_TRUE(contains(error_of("duration: 1m\nmatrix:\n  topologies: [single_master]\n  flush: [ASYNC_FLUSH]\n"
                                "  faults: {none: []}\n  clients: {rocketmq4: {slaveRead: false}}\n"),
                       "test.yaml:6:25: matrix.clients.rocketmq4.slaveRead: unknown key 'slaveRead'"));
  EXPECT_TRUE(contains(error_of("duration: 1m\nmatrix:\n  topologies: [single_master]\n  flush: [ASYNC_FLUSH]\n"
                                "  faults: {none: []}\n  clients: {a+b: {}}\n"),
                       "'a+b' is not a usable name"));
}

TEST(ScenarioDescribe, PrintsTheExpandedParametersAndTheFaultSchedule) {
  const Result<Scenario> scenario = load_scenario(scenarios_dir() + "/single-master-sync-crash.yaml");
  ASSERT_TRUE(scenario.ok()) << scenario.status().to_string();
  const std::string text = describe(*scenario);
  EXPECT_TRUE(contains(text, "30.000s kill_process broker-a-0 for 10.000s")) << text;
  EXPECT_TRUE(contains(text, "70.000s crash_machine broker-a-0 for 15.000s")) << text;
  EXPECT_TRUE(contains(text, "flushDiskType=SYNC_FLUSH")) << text;
  EXPECT_TRUE(contains(text, "syncFlushTimeout=5000")) << text;
  EXPECT_TRUE(contains(text, "network: latency 250us")) << text;
  EXPECT_TRUE(contains(text, "disk: sata_ssd")) << text;
  EXPECT_TRUE(contains(text, "1 producer(s) at 200/s each")) << text;
  EXPECT_TRUE(contains(text, "lost == 0")) << text;
  EXPECT_TRUE(contains(text, "hash " + scenario->hash)) << text;
  EXPECT_EQ(text, describe(load_scenario(scenarios_dir() + "/single-master-sync-crash.yaml").value()));
}

TEST(ScenarioHash, IsFnv1a64OfTheBytesAndStable) {
  EXPECT_EQ(scenario_hash(""), "cbf29ce484222325");  // FNV-1a 64 reference values
  EXPECT_EQ(scenario_hash("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(scenario_hash("duration: 1m\n"), scenario_hash("duration: 1m\n"));
  EXPECT_NE(scenario_hash("duration: 1m\n"), scenario_hash("duration: 2m\n"));
  const Scenario a = parse_ok("duration: 1m\n");
  const Scenario b = parse_ok("duration: 60s\n");
  EXPECT_EQ(a.duration, b.duration);
  EXPECT_NE(a.hash, b.hash);  // the replay key follows the bytes, not the meaning
}

TEST(ScenarioExpectation, HoldsAndDescribes) {
  const Scenario s = parse_ok(
      "duration: 1m\nexpect:\n  lost: 0\n  p99_send_ms: {max: 50}\n  "
      "throughput_msgs_per_s: {min: 100}\n");
  EXPECT_TRUE(s.expect.at("lost").holds(0));
  EXPECT_FALSE(s.expect.at("lost").holds(1));
  EXPECT_TRUE(s.expect.at("p99_send_ms").holds(50));
  EXPECT_FALSE(s.expect.at("p99_send_ms").holds(50.5));
  EXPECT_FALSE(s.expect.at("throughput_msgs_per_s").holds(99));
  EXPECT_EQ(s.expect.at("p99_send_ms").describe(), "p99_send_ms <= 50");
}

}  // namespace
}  // namespace mqlab::sim::scenario_test
