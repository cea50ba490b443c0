// Scenario: one question a user asks mqsim ("does SYNC_FLUSH on one master
// lose anything when the machine loses power?"), read from a YAML file under
// scenarios/. scenarios/README.md documents the schema key by key; this
// header is its C++ shape.
//
// A Scenario is fully expanded: every default is filled in, topology presets
// applied, partition aliases ("rest", "brokers") resolved to machine names,
// and every cross-reference checked (fault targets, partition sides and disk
// indexes name things the topology creates). So the cluster builder, the
// injector and the checker never re-validate, and describe() prints exactly
// what a run uses.
//
// Naming (the simulator creates exactly these; faults name them):
//   broker group g (0-based) is brokerName "broker-a", "broker-b", ... "broker-z";
//   its machines are "broker-a-0" (the master, brokerId 0) and "broker-a-1",
//   "broker-a-2" ... (slaves, brokerId 1, 2 ...); NameServers "namesrv-0" ...;
//   client machines "client-0" .... A broker's or NameServer's process has
//   its machine's name. Producers are processes "producer-0" ...; the
//   consumers of group G are "consumer-G-0" .... Client processes go to the
//   client machines round-robin: producers first, then each consumer group
//   in file order.
//
// A `matrix:` section makes the file a family of scenarios (topology presets x
// flush types x named fault schedules, over a seed range); expand_matrix()
// turns it into concrete Scenarios named "topology/flush/fault".
//
// Errors are InvalidArgument, "file:line:column: key.path: what is wrong;
// expected ...". No yaml-cpp exception escapes.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/client/client_config.h"
#include "broker/common/status.h"
#include "broker/common/types.h"
#include "broker/store/message_store_config.h"
#include "faults/fault.h"
#include "faults/fault_schedule.h"
#include "sim/disk_profile.h"

namespace mqlab::sim {

// Seeds first..last inclusive; each seed is one run.
struct SeedRange {
  uint64_t first = 1;
  uint64_t last = 1;

  uint64_t count() const { return last - first + 1; }
  auto operator<=>(const SeedRange&) const = default;
};

struct TopologySpec {
  std::string preset;  // the topology preset it started from ("" if none)
  int broker_groups = 1;
  int slaves_per_group = 0;
  int namesrvs = 1;
  int clients = 1;
  // Each broker machine's data disk is a RAID10 array of four members (fault
  // disk indexes 0..3, members i and i^1 mirror each other); otherwise one disk.
  bool raid10 = false;
  DiskProfile disk = DiskProfile::sata_ssd();  // one disk, or one RAID10 member
  uint64_t disk_capacity_bytes = 256ull << 30;
  double torn_sector_probability = 0.5;
  double bit_rot_probability = 0.0;

  int disks_per_broker() const { return raid10 ? 4 : 1; }
};

struct BrokerSpec {
  // The masters' store settings (brokerRole and flushDiskType are here);
  // slaves run with the same settings and brokerRole SLAVE.
  store::MessageStoreConfig store;
  // Validated broker-level broker.conf keys the file set (not store fields),
  // as normalised text ("true", "8"): the broker applies them.
  std::map<std::string, std::string> broker_conf;
};

// The `client:` section: ClientConfig keys (RocketMQ's names, milliseconds)
// given to every simulated producer's and consumer's MQClientInstance, so a
// scenario can run RocketMQ 4.x's client behaviour, or its binary header,
// against mqlab's defaults. The defaults are ClientConfig's own.
struct ClientSpec {
  client::ClientConfig config;  // namesrvAddr, clientIP and instanceName unused: the world sets them

  // Whether config sets nothing away from ClientConfig's defaults.
  bool is_default() const { return config.settable_keys_at_defaults(); }
  // config with the world's addresses and names for one client.
  client::ClientConfig for_client(std::vector<std::string> namesrv_addresses, std::string client_ip,
                                  std::string instance_name) const;
};

struct NetworkSpec {
  Nanos latency = 250 * kNanosPerMicro;            // one way, mean
  Nanos jitter = 50 * kNanosPerMicro;              // added uniformly in [0, jitter]
  uint64_t bandwidth_bytes_per_sec = 125'000'000;  // 1 Gbit/s per link
  double loss_probability = 0.0;                   // a segment is lost and retransmitted (adds delay; TCP hides it)
  // How long unacknowledged data may stall before the connection breaks
  // (Linux TCP_USER_TIMEOUT).
  Nanos tcp_user_timeout = seconds(30);
};

enum class Arrival { kConstant, kPoisson, kBursts };
enum class SizeDistribution { kFixed, kUniform, kTelemetry };
enum class KeyMode { kNone, kDevice };
enum class ConsumeMode { kClustering, kBroadcasting };

std::string_view arrival_name(Arrival arrival);
std::string_view size_distribution_name(SizeDistribution distribution);
std::string_view key_mode_name(KeyMode mode);
std::string_view consume_mode_name(ConsumeMode mode);

struct ProducerSpec {
  int count = 1;
  double rate_per_sec = 100;  // each producer's
  Arrival arrival = Arrival::kConstant;
  int burst_size = 0;      // kBursts: messages sent back to back ...
  Nanos burst_period = 0;  // ... every burst_period (rate is then derived, not read)
  SizeDistribution size = SizeDistribution::kFixed;
  uint64_t size_min_bytes = 256;  // kFixed: both equal; kTelemetry: unused
  uint64_t size_max_bytes = 256;
  KeyMode keys = KeyMode::kNone;
  Nanos send_timeout = seconds(3);  // RocketMQ's sendMsgTimeout
  int retries = 2;                  // RocketMQ's retryTimesWhenSendFailed
  // Sends one producer has outstanding at most; an arrival beyond it waits
  // for a reply (and its send latency counts the wait), as with a fixed
  // number of sender threads: tools/mqrealrun.py runs `mqadmin perf produce
  // -w 16`. Without a cap a paused broker collects every arrival until the
  // first timeout, then the rest fail at once and are retried elsewhere
  // while the resumed broker stores the originals too.
  int max_in_flight = 16;
};

struct ConsumerGroupSpec {
  std::string name;
  int consumers = 1;
  ConsumeMode mode = ConsumeMode::kClustering;
  // Chance the message handler fails (RECONSUME_LATER), to test redelivery.
  double handler_failure_probability = 0.0;
};

struct WorkloadSpec {
  std::string topic = "TopicTest";
  int queues_per_broker = 4;
  ProducerSpec producers;
  std::vector<ConsumerGroupSpec> consumer_groups;
};

struct FaultSpec {
  faults::FaultSchedule schedule;  // fixed events, sorted
  std::optional<faults::NemesisConfig> nemesis;
  std::vector<std::string> nemesis_machines;  // what the nemesis may hit, sorted
};

// One expected metric: `lost: 0` is equals 0; `{max: 50}` an upper bound.
struct Expectation {
  std::string metric;
  std::optional<double> equals;
  std::optional<double> min;
  std::optional<double> max;

  bool holds(double value) const;
  std::string describe() const;  // "lost == 0", "p99_send_ms <= 50"
};

struct MatrixSpec {
  std::vector<std::string> topologies;      // preset names, in file order
  std::vector<store::FlushDiskType> flush;  // in file order
  std::vector<std::string> fault_names;     // in file order
  // schedules[topology][fault name]: resolved against that topology, since
  // an alias such as "rest" names different machines in each.
  std::map<std::string, std::map<std::string, faults::FaultSchedule>> schedules;
  std::optional<SeedRange> seeds;  // overrides the base's seeds
  // matrix.clients: named client: sections, each run with every topology
  // (the file's own section under each name's keys). Empty: the file's
  // section alone.
  std::vector<std::pair<std::string, ClientSpec>> clients;

  // A row of the comparison: a topology preset with one client. Its label
  // is the preset's name, or "preset+client" when the matrix names clients.
  struct Row {
    std::string label;
    std::string preset;
    const ClientSpec* client = nullptr;  // into clients; nullptr: the file's section
  };
  // Topology-major: each topology with each client, in file order.
  std::vector<Row> rows() const;
  size_t size() const {
    return topologies.size() * std::max<size_t>(clients.size(), 1) * flush.size() * fault_names.size();
  }
};

struct Scenario {
  std::string name;
  std::string description;
  std::string source;  // the file, or the name given to parse_scenario
  std::string hash;    // scenario_hash of the file's bytes: the replay key
  Nanos duration = 0;  // of the workload and faults; healing and draining follow
  SeedRange seeds;
  // After the end-of-run healing the cluster must converge (routes back,
  // every surviving broker serving, consumers drained) within this bound.
  Nanos liveness_bound = seconds(60);
  TopologySpec topology;
  BrokerSpec broker;
  ClientSpec client;
  NetworkSpec network;
  WorkloadSpec workload;
  FaultSpec faults;
  std::map<std::string, Expectation> expect;  // by metric
  std::optional<MatrixSpec> matrix;
};

// --- the machines a scenario creates

enum class MachineRole { kBroker, kNameServer, kClient };

struct MachineSpec {
  std::string name;
  MachineRole role = MachineRole::kBroker;
  std::string broker_group;  // "broker-a" (brokers only)
  int broker_id = 0;         // 0: master; > 0: slave
  int disks = 0;             // fault disk indexes 0..disks-1 (brokers only)
  std::vector<std::string> processes;
};

std::string broker_group_name(int group);                   // 0 -> "broker-a"
std::string broker_machine_name(int group, int broker_id);  // (0, 1) -> "broker-a-1"
// Every machine, brokers (by group, master first), then NameServers, then clients.
std::vector<MachineSpec> scenario_machines(const Scenario& scenario);
// What a nemesis may hit: the machines in faults.nemesis_machines.
std::vector<faults::NemesisTarget> nemesis_targets(const Scenario& scenario);
// Whether the event's target, partition sides and disk index name things
// in machines; and whether it starts before duration.
Status validate_fault_target(const faults::FaultEvent& event, const std::vector<MachineSpec>& machines, Nanos duration);

// The liveness phase's actual length: liveness_bound, raised for a topology
// with slaves to kReplicatedLivenessFloor. A consumer of a master lost for
// good learns it from the route only once the NameServers drop the master:
// brokerChannelExpiredTime (120 s) after its last registration, at the next
// scan (10 s), then at the client's next route poll (pollNameServerInterval,
// 30 s); the floor adds 20 s to drain the slave. Clients that saw the master
// time out move to its slave sooner (MQClientInstance's unreachable
// back-off), and a run that converges ends the phase at once, so the floor
// costs only runs that never converge.
Nanos effective_liveness_bound(const Scenario& scenario);
Nanos replicated_liveness_floor();

// --- presets and vocabularies

// single_master, multi_master, multi_master_raid10, async_replication, sync_replication.
std::vector<std::string_view> topology_preset_names();
// Sets broker_groups, slaves_per_group, raid10 and brokerRole; leaves the
// disk, NameServers and clients alone. InvalidArgument for an unknown name.
Status apply_topology_preset(std::string_view name, Scenario& scenario);
// Every broker.conf key a scenario may set: MessageStoreConfig's fields and
// the broker-level keys kept in broker_conf.
std::vector<std::string_view> known_broker_conf_keys();
// lost, unknown, duplicates, ... the checker reports each.
std::vector<std::string_view> known_metrics();

// --- reading, expanding, printing

Result<Scenario> load_scenario(const std::string& path);
Result<Scenario> parse_scenario(std::string_view yaml_text, std::string source_name);
// The concrete scenarios of base's matrix, topology-major, named
// "topology/flush/fault". Requires: base.matrix.
Result<std::vector<Scenario>> expand_matrix(const Scenario& base);
// FNV-1a 64 of the bytes, 16 lowercase hex digits.
std::string scenario_hash(std::string_view text);
// The full expanded parameter set, printed at the start of a run.
std::string describe(const Scenario& scenario);

}  // namespace mqlab::sim
