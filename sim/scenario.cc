#include "sim/scenario.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <variant>

#include "broker/client/client_config.h"
#include "broker/namesrv/namesrv_config.h"
#include "sim/yaml_reader.h"

namespace mqlab::sim {
namespace {

using faults::FaultEvent;
using faults::FaultKind;
using faults::FaultSchedule;
using store::BrokerRole;
using store::FlushDiskType;
using Store = store::MessageStoreConfig;

template <typename... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
// Spelled out for clang 14 (the fuzz build), which cannot deduce an aggregate's arguments.
template <typename... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// ---------------------------------------------------------------- vocabulary

constexpr std::array<std::string_view, 14> kTopKeys = {
    "name",    "description", "duration", "seeds",   "liveness_bound", "topology", "broker",
    "client",  "network",     "workload", "faults",  "nemesis",        "expect",   "matrix"};

// What the checker reports (architecture.md, "What a run measures").
constexpr std::array<std::string_view, 19> kMetrics = {
    // messages, counted from the history (expired: deleted by retention
    // unread; stored_twice: the duplicates that are a second stored copy)
    "lost", "unknown", "duplicates", "reordered", "corrupted", "expired_by_retention", "stored_twice",
    // seconds in which sends / reads of acknowledged messages failed
    "unavailable_write_s", "unavailable_read_s",
    // send round trip and end to end (send to receipt), milliseconds
    "p50_send_ms", "p90_send_ms", "p99_send_ms", "p999_send_ms", "max_send_ms", "p50_e2e_ms", "p99_e2e_ms",
    "p999_e2e_ms",
    // acknowledged sends per second; the longest restart-to-serving time
    "throughput_msgs_per_s", "max_recovery_s"};

struct TopologyPreset {
  std::string_view name;
  int broker_groups;
  int slaves_per_group;
  bool raid10;
  BrokerRole role;
};
constexpr std::array<TopologyPreset, 5> kPresets = {{
    {"single_master", 1, 0, false, BrokerRole::ASYNC_MASTER},
    {"multi_master", 2, 0, false, BrokerRole::ASYNC_MASTER},
    {"multi_master_raid10", 2, 0, true, BrokerRole::ASYNC_MASTER},
    {"async_replication", 2, 1, false, BrokerRole::ASYNC_MASTER},
    {"sync_replication", 2, 1, false, BrokerRole::SYNC_MASTER},
}};

constexpr std::array<std::string_view, 4> kDiskPresets = {"sata_ssd", "nvme", "hdd", "instant"};
constexpr std::array<std::string_view, 2> kFlushNames = {"ASYNC_FLUSH", "SYNC_FLUSH"};  // enum order
constexpr std::array<std::string_view, 3> kArrivalNames = {"constant", "poisson", "bursts"};
constexpr std::array<std::string_view, 2> kKeyModeNames = {"none", "device"};
constexpr std::array<std::string_view, 2> kConsumeModeNames = {"clustering", "broadcasting"};

std::vector<std::string_view> fault_kind_names() {
  std::vector<std::string_view> names;
  for (int k = 0; k <= static_cast<int>(FaultKind::kPromoteSlave); ++k) {
    names.push_back(faults::fault_kind_name(static_cast<FaultKind>(k)));
  }
  return names;
}

// ------------------------------------------------------------- broker.conf keys

// A broker.conf key: a MessageStoreConfig field, or (monostate) a broker-level
// key the broker applies from broker_conf. Ranges follow RocketMQ's docs;
// MessageStoreConfig::validate() adds the cross-field rules.
using StoreField = std::variant<std::monostate, int32_t Store::*, int64_t Store::*, bool Store::*, double Store::*,
                                std::string Store::*, FlushDiskType Store::*, BrokerRole Store::*>;
enum class ConfType { kInteger, kBoolean, kText };
struct ConfKey {
  std::string_view name;
  StoreField field;
  ConfType type = ConfType::kInteger;  // broker-level keys only
  int64_t min = 0;
  int64_t max = std::numeric_limits<int64_t>::max();
};

const std::vector<ConfKey>& conf_keys() {
  static const std::vector<ConfKey> keys = {
      {"storePathRootDir", &Store::storePathRootDir},
      {"storePathCommitLog", &Store::storePathCommitLog},
      {"mappedFileSizeCommitLog", &Store::mappedFileSizeCommitLog, ConfType::kInteger, 1},
      {"mappedFileSizeConsumeQueue", &Store::mappedFileSizeConsumeQueue, ConfType::kInteger, 20},
      {"maxMessageSize", &Store::maxMessageSize, ConfType::kInteger, 1},
      {"flushDiskType", &Store::flushDiskType},
      {"brokerRole", &Store::brokerRole},
      {"flushIntervalCommitLog", &Store::flushIntervalCommitLog, ConfType::kInteger, 1},
      {"flushCommitLogLeastPages", &Store::flushCommitLogLeastPages},
      {"flushCommitLogThoroughInterval", &Store::flushCommitLogThoroughInterval, ConfType::kInteger, 1},
      {"syncFlushTimeout", &Store::syncFlushTimeout, ConfType::kInteger, 1},
      {"flushIntervalConsumeQueue", &Store::flushIntervalConsumeQueue, ConfType::kInteger, 1},
      {"flushConsumeQueueLeastPages", &Store::flushConsumeQueueLeastPages},
      {"flushConsumeQueueThoroughInterval", &Store::flushConsumeQueueThoroughInterval, ConfType::kInteger, 1},
      {"checkCRCOnRecover", &Store::checkCRCOnRecover},
      {"messageIndexEnable", &Store::messageIndexEnable},
      {"messageIndexSafe", &Store::messageIndexSafe},
      {"maxHashSlotNum", &Store::maxHashSlotNum, ConfType::kInteger, 1},
      {"maxIndexNum", &Store::maxIndexNum, ConfType::kInteger, 1},
      {"fileReservedTime", &Store::fileReservedTime},
      {"deleteWhen", &Store::deleteWhen},
      {"diskMaxUsedSpaceRatio", &Store::diskMaxUsedSpaceRatio, ConfType::kInteger, 0, 100},
      {"cleanResourceInterval", &Store::cleanResourceInterval, ConfType::kInteger, 1},
      {"diskSpaceWarningLevelRatio", &Store::diskSpaceWarningLevelRatio},
      {"diskSpaceCleanForciblyRatio", &Store::diskSpaceCleanForciblyRatio},
      {"reputIntervalMs", &Store::reputIntervalMs, ConfType::kInteger, 1},
      {"dispatchFlushedOnly", &Store::dispatchFlushedOnly},
      {"transientStorePoolEnable", &Store::transientStorePoolEnable},
      {"transientStorePoolSize", &Store::transientStorePoolSize, ConfType::kInteger, 1},
      {"commitIntervalCommitLog", &Store::commitIntervalCommitLog, ConfType::kInteger, 1},
      {"commitCommitLogLeastPages", &Store::commitCommitLogLeastPages},
      {"commitCommitLogThoroughInterval", &Store::commitCommitLogThoroughInterval, ConfType::kInteger, 1},
      {"allocateMappedFileEnable", &Store::allocateMappedFileEnable},
      {"warmMapedFileEnable", &Store::warmMapedFileEnable},
      {"recycleExpiredCommitLogEnable", &Store::recycleExpiredCommitLogEnable},
      {"testOnlyAckBeforeSync", &Store::testOnlyAckBeforeSync},
      {"brokerClusterName", {}, ConfType::kText},
      {"autoCreateTopicEnable", {}, ConfType::kBoolean},
      {"defaultTopicQueueNums", {}, ConfType::kInteger, 1, 1024},
      {"slaveReadEnable", {}, ConfType::kBoolean},
      {"haSendHeartbeatInterval", &Store::haSendHeartbeatInterval, ConfType::kInteger, 1},
      {"haHousekeepingInterval", &Store::haHousekeepingInterval, ConfType::kInteger, 1},
      {"haTransferBatchSize", &Store::haTransferBatchSize, ConfType::kInteger, 1},
      {"haSlaveFallbehindMax", &Store::haSlaveFallbehindMax, ConfType::kInteger, 0},
      {"slaveTimeout", &Store::slaveTimeout, ConfType::kInteger, 1},
      {"accessMessageInMemoryMaxRatio", {}, ConfType::kInteger, 0, 100},
      {"registerNameServerPeriod", {}, ConfType::kInteger, 1},
      {"brokerPermission", {}, ConfType::kInteger, 0, 7},  // 2 W, 4 R, 1 inherit
  };
  return keys;
}

// Keys RocketMQ has but mqsim derives from the topology and naming.
constexpr std::array<std::string_view, 8> kTopologyOwnedKeys = {
    "brokerName", "brokerId", "namesrvAddr", "listenPort", "brokerIP1", "brokerIP2", "haMasterAddress", "haListenPort"};

void apply_broker_level(const YamlNode& value, const ConfKey& key, std::map<std::string, std::string>& conf) {
  if (key.type == ConfType::kBoolean) {
    if (const auto parsed = value.boolean()) conf[std::string(key.name)] = *parsed ? "true" : "false";
  } else if (key.type == ConfType::kInteger) {
    if (const auto parsed = value.integer(key.min, key.max)) conf[std::string(key.name)] = std::to_string(*parsed);
  } else if (const auto parsed = value.text()) {
    conf[std::string(key.name)] = *parsed;
  }
}

void apply_conf_value(const YamlNode& value, const ConfKey& key, BrokerSpec& broker) {
  Store& s = broker.store;
  const int64_t int32_max = std::numeric_limits<int32_t>::max();
  std::visit(Overloaded{
                 [&](std::monostate) { apply_broker_level(value, key, broker.broker_conf); },
                 [&](int32_t Store::*f) {
                   if (const auto v = value.integer(key.min, std::min(key.max, int32_max))) {
                     s.*f = static_cast<int32_t>(*v);
                   }
                 },
                 [&](int64_t Store::*f) {
                   if (const auto v = value.integer(key.min, key.max)) s.*f = *v;
                 },
                 [&](bool Store::*f) {
                   if (const auto v = value.boolean()) s.*f = *v;
                 },
                 [&](double Store::*f) {
                   if (const auto v = value.number(0.0, 1.0)) s.*f = *v;
                 },
                 [&](std::string Store::*f) {
                   if (const auto v = value.text()) s.*f = *v;
                 },
                 [&](FlushDiskType Store::*f) {
                   if (const auto v = value.choice(kFlushNames)) s.*f = static_cast<FlushDiskType>(*v);
                 },
                 [&](BrokerRole Store::*f) {
                   // Slaves come from topology.slaves_per_group; the file sets the masters' role.
                   constexpr std::array<std::string_view, 2> kMasterRoles = {"ASYNC_MASTER", "SYNC_MASTER"};
                   if (value.is_scalar() && value.text() == "SLAVE") {
                     value.fail("SLAVE is assigned by the topology (topology.slaves_per_group)",
                                "ASYNC_MASTER or SYNC_MASTER");
                   } else if (const auto v = value.choice(kMasterRoles)) {
                     s.*f = *v == 0 ? BrokerRole::ASYNC_MASTER : BrokerRole::SYNC_MASTER;
                   }
                 },
             },
             key.field);
}

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

std::string conf_value_text(const ConfKey& key, const Store& s) {
  return std::visit(Overloaded{
                        [](std::monostate) { return std::string(); },
                        [&](int32_t Store::*f) { return std::to_string(s.*f); },
                        [&](int64_t Store::*f) { return std::to_string(s.*f); },
                        [&](bool Store::*f) { return std::string(s.*f ? "true" : "false"); },
                        [&](double Store::*f) { return number_text(s.*f); },
                        [&](std::string Store::*f) { return s.*f; },
                        [&](FlushDiskType Store::*f) { return std::string(store::flush_disk_type_name(s.*f)); },
                        [&](BrokerRole Store::*f) { return std::string(store::broker_role_name(s.*f)); },
                    },
                    key.field);
}

// ------------------------------------------------------------------ machines

std::vector<std::string> all_machine_names(const std::vector<MachineSpec>& machines) {
  std::vector<std::string> names;
  for (const MachineSpec& machine : machines) names.push_back(machine.name);
  return names;
}

std::string list_text(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "(none)" : text;
}

const MachineSpec* find_machine(const std::vector<MachineSpec>& machines, std::string_view name) {
  for (const MachineSpec& machine : machines) {
    if (machine.name == name) return &machine;
  }
  return nullptr;
}

// The machines an alias or name stands for; empty when it means nothing.
// "rest" is resolved by the caller (it depends on the other side).
std::set<std::string> resolve_machine_name(std::string_view name, const std::vector<MachineSpec>& machines) {
  std::set<std::string> result;
  for (const MachineSpec& m : machines) {
    const bool broker = m.role == MachineRole::kBroker;
    if (m.name == name || (broker && m.broker_group == name) || (broker && name == "brokers") ||
        (broker && m.broker_id == 0 && name == "masters") || (broker && m.broker_id > 0 && name == "slaves") ||
        (m.role == MachineRole::kNameServer && name == "namesrvs") ||
        (m.role == MachineRole::kClient && name == "clients")) {
      result.insert(m.name);
    }
  }
  return result;
}

Status check_target(const FaultEvent& event, const std::vector<MachineSpec>& machines) {
  const std::string what = "'" + event.target + "' ";
  switch (event.kind) {
    case FaultKind::kPartition:
    case FaultKind::kPowerLossAll:
      return Status::Ok();
    case FaultKind::kKillProcess:
    case FaultKind::kPauseProcess: {
      std::vector<std::string> processes;
      for (const MachineSpec& m : machines) processes.insert(processes.end(), m.processes.begin(), m.processes.end());
      if (std::find(processes.begin(), processes.end(), event.target) != processes.end()) return Status::Ok();
      return Status::InvalidArgument(what +
                                     "is not a process of this topology; expected one of: " + list_text(processes));
    }
    case FaultKind::kPromoteSlave: {
      std::vector<std::string> groups;
      for (const MachineSpec& m : machines) {
        if (m.broker_id == 1) groups.push_back(m.broker_group);
      }
      if (std::find(groups.begin(), groups.end(), event.target) != groups.end()) return Status::Ok();
      return Status::InvalidArgument(what +
                                     "is not a broker group with a slave; expected one of: " + list_text(groups));
    }
    case FaultKind::kFailDisk:
    case FaultKind::kSlowDisk:
    case FaultKind::kStallDisk: {
      std::vector<std::string> with_disks;
      for (const MachineSpec& m : machines) {
        if (m.disks > 0) with_disks.push_back(m.name);
      }
      if (std::find(with_disks.begin(), with_disks.end(), event.target) != with_disks.end()) return Status::Ok();
      return Status::InvalidArgument(what + "is not a machine with disks; expected one of: " + list_text(with_disks));
    }
    default:
      if (find_machine(machines, event.target) != nullptr) return Status::Ok();
      return Status::InvalidArgument(
          what + "is not a machine of this topology; expected one of: " + list_text(all_machine_names(machines)));
  }
}

Status check_disk_index(const FaultEvent& event, const std::vector<MachineSpec>& machines) {
  if (event.kind != FaultKind::kFailDisk) return Status::Ok();
  const MachineSpec* machine = find_machine(machines, event.target);
  if (machine == nullptr || event.disk_index < machine->disks) return Status::Ok();
  return Status::InvalidArgument("disk " + std::to_string(event.disk_index) + " does not exist on " + event.target +
                                 "; expected 0.." + std::to_string(machine->disks - 1) +
                                 " (4 members with topology.raid10, else 1 disk)");
}

Status check_start(const FaultEvent& event, Nanos duration) {
  if (event.at < duration) return Status::Ok();
  return Status::InvalidArgument("starts at " + duration_text(event.at) + ", at or after the run's end; expected < " +
                                 duration_text(duration));
}

// ---------------------------------------------------------------- sections

bool valid_group_name(std::string_view name) {
  // RocketMQ's topic and group charset, less '%' and '|', which would make
  // awkward process names ("consumer-G-0").
  return !name.empty() && name.size() <= 127 && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

void parse_seeds(const YamlNode& node, SeedRange& seeds) {
  if (!node.present()) return;
  const std::string expected = "a seed (42), a range text (\"1..20\") or {first: 1, last: 20}";
  if (node.is_map()) {
    if (!node.expect_keys({"first", "last"})) return;
    int64_t first = 1, last = 1;
    node.read("first", first, 0, std::numeric_limits<int64_t>::max());
    last = first;
    node.read("last", last, 0, std::numeric_limits<int64_t>::max());
    if (last < first) return node.fail("last is below first", expected);
    seeds = {static_cast<uint64_t>(first), static_cast<uint64_t>(last)};
    return;
  }
  const std::optional<std::string> text = node.text();
  if (!text) return;
  const size_t dots = text->find("..");
  uint64_t first = 0, last = 0;
  const auto parse = [](std::string_view part, uint64_t& out) {
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), out);
    return error == std::errc() && end == part.data() + part.size() && !part.empty();
  };
  const std::string_view all = *text;
  const bool ok = dots == std::string::npos ? parse(all, first) && parse(all, last)
                                            : parse(all.substr(0, dots), first) && parse(all.substr(dots + 2), last);
  if (!ok || last < first) return node.fail("'" + *text + "' is not a seed range", expected);
  seeds = {first, last};
}

void parse_disk(const YamlNode& node, DiskProfile& disk) {
  if (!node.present()) return;
  const auto preset = [&](const YamlNode& name_node) {
    const std::optional<size_t> index = name_node.choice(kDiskPresets);
    if (!index) return;
    const DiskProfile profiles[] = {DiskProfile::sata_ssd(), DiskProfile::nvme(), DiskProfile::hdd(),
                                    DiskProfile::instant()};
    disk = profiles[*index];
  };
  if (node.is_scalar()) return preset(node);
  if (!node.expect_keys({"preset", "sector_size", "sync_base_latency", "write_bandwidth", "read_bandwidth",
                         "seek_latency", "dirty_expire", "dirty_writeback_interval", "dirty_background",
                         "journal_commit_interval"})) {
    return;
  }
  if (node.child("preset").present()) preset(node.child("preset"));
  const std::string base = disk.name;
  uint64_t sector = disk.sector_size_bytes;
  node.read_size("sector_size", sector, 1);
  disk.sector_size_bytes = static_cast<uint32_t>(std::min<uint64_t>(sector, UINT32_MAX));
  node.read_duration("sync_base_latency", disk.sync_base_latency_ns, 0);
  node.read_bandwidth("write_bandwidth", disk.write_bandwidth_bytes_per_sec);
  node.read_bandwidth("read_bandwidth", disk.read_bandwidth_bytes_per_sec);
  node.read_duration("seek_latency", disk.seek_latency_ns, 0);
  node.read_duration("dirty_expire", disk.dirty_expire_ns, 0);
  node.read_duration("dirty_writeback_interval", disk.dirty_writeback_interval_ns, 1);
  node.read_size("dirty_background", disk.dirty_background_bytes, 0);
  node.read_duration("journal_commit_interval", disk.journal_commit_interval_ns, 0);
  // A tuned preset keeps its name visible in describe(): "hdd (tuned)".
  if (node.entries().size() > (node.child("preset").present() ? 1u : 0u)) disk.name = base + " (tuned)";
  if (const Status status = disk.validate(); !status.ok()) node.fail(status.message(), "a valid disk profile");
}

void parse_topology(const YamlNode& node, Scenario& scenario) {
  if (!node.expect_keys({"preset", "broker_groups", "slaves_per_group", "namesrvs", "clients", "raid10", "disk",
                         "disk_capacity", "torn_sector_probability", "bit_rot_probability"})) {
    return;
  }
  TopologySpec& t = scenario.topology;
  // The preset goes first wherever it is written: explicit keys refine it.
  if (const YamlNode preset = node.child("preset"); preset.present()) {
    const std::vector<std::string_view> names = topology_preset_names();
    if (const auto index = preset.choice(names)) {
      const Status applied = apply_topology_preset(names[*index], scenario);
      MQ_ASSERT(applied.ok());  // the name came from the preset list
    }
  }
  node.read("broker_groups", t.broker_groups, 1, 26);  // brokerNames broker-a .. broker-z
  node.read("slaves_per_group", t.slaves_per_group, 0, 4);
  node.read("namesrvs", t.namesrvs, 1, 16);
  node.read("clients", t.clients, 1, 64);
  node.read("raid10", t.raid10);
  parse_disk(node.child("disk"), t.disk);
  node.read_size("disk_capacity", t.disk_capacity_bytes, 1ull << 20);
  node.read("torn_sector_probability", t.torn_sector_probability, 0.0, 1.0);
  node.read("bit_rot_probability", t.bit_rot_probability, 0.0, 1.0);
}

void parse_broker(const YamlNode& node, BrokerSpec& broker) {
  if (!node.present()) return;
  if (!node.is_map()) {
    return node.fail("is not a mapping", "broker.conf keys and values, e.g. flushDiskType: SYNC_FLUSH");
  }
  if (!node.expect_keys(known_broker_conf_keys())) return;
  for (const auto& [key, value] : node.entries()) {
    const auto row =
        std::find_if(conf_keys().begin(), conf_keys().end(), [&key = key](const ConfKey& k) { return k.name == key; });
    MQ_ASSERT(row != conf_keys().end());  // expect_keys checked it
    apply_conf_value(value, *row, broker);
  }
  if (!node.errors().ok()) return;
  if (const Status status = broker.store.validate(); !status.ok()) {
    // validate() names the key first ("maxMessageSize=0: ..."): point at it
    // when the file set it, else at the section (a default broke the rule).
    const std::string key = status.message().substr(0, status.message().find_first_of("=:"));
    const YamlNode culprit = node.child(key).present() ? node.child(key) : node;
    culprit.fail(status.message(), "a store configuration RocketMQ would run with");
  }
}

// Reports a topology-owned broker.conf key (brokerName, namesrvAddr ...)
// before expect_keys would call it unknown.
void reject_topology_owned_keys(const YamlNode& node) {
  for (const auto& [key, value] : node.entries()) {
    if (std::find(kTopologyOwnedKeys.begin(), kTopologyOwnedKeys.end(), key) == kTopologyOwnedKeys.end()) continue;
    node.errors().report(node.key_mark(key), value.path(),
                         "'" + key + "' is set by mqsim from the topology (see Naming in scenarios/README.md)",
                         "a store or broker key other than brokerName, brokerId, namesrvAddr, listenPort, "
                         "brokerIP1, brokerIP2, haMasterAddress, haListenPort");
    return;
  }
}

constexpr std::array<std::string_view, 2> kSerializeTypeNames = {"JSON", "ROCKETMQ"};

void parse_client(const YamlNode& node, ClientSpec& client) {
  if (!node.present()) return;
  if (!node.is_map()) {
    return node.fail("is not a mapping", "ClientConfig keys and values, e.g. slaveReadOnUnreachableMaster: false");
  }
  const std::vector<std::string_view> keys = client::ClientConfig::settable_keys();
  if (!node.expect_keys(keys)) return;
  client::ClientConfig& c = client.config;
  for (const client::ClientConfig::IntervalKey& key : client::ClientConfig::interval_keys()) {
    node.read(key.name, c.*key.field, 1, client::ClientConfig::kMaxIntervalMs);
  }
  node.read("slaveReadOnUnreachableMaster", c.slaveReadOnUnreachableMaster);
  if (const YamlNode type = node.child("serializeType"); type.present()) {
    if (const std::optional<size_t> index = type.choice(kSerializeTypeNames)) {
      c.serializeType = *index == 0 ? remoting::SerializeType::JSON : remoting::SerializeType::ROCKETMQ;
    }
  }
}

void parse_network(const YamlNode& node, NetworkSpec& network) {
  if (!node.expect_keys({"latency", "jitter", "bandwidth", "loss", "tcp_user_timeout"})) return;
  node.read_duration("latency", network.latency, 0);
  node.read_duration("jitter", network.jitter, 0);
  node.read_bandwidth("bandwidth", network.bandwidth_bytes_per_sec);
  node.read("loss", network.loss_probability, 0.0, 0.5);
  node.read_duration("tcp_user_timeout", network.tcp_user_timeout, kNanosPerMilli);
}

void parse_message_size(const YamlNode& node, ProducerSpec& producers) {
  if (!node.present()) return;
  if (node.is_scalar() && node.text() == "telemetry") {
    producers.size = SizeDistribution::kTelemetry;
    return;
  }
  if (node.is_map()) {
    if (!node.expect_keys({"min", "max"})) return;
    if (!node.child("min").present() || !node.child("max").present()) {
      return node.fail("needs both min and max", "{min: SIZE, max: SIZE} for a uniform distribution");
    }
    node.read_size("min", producers.size_min_bytes, 1);
    node.read_size("max", producers.size_max_bytes, 1);
    if (producers.size_max_bytes < producers.size_min_bytes) return node.fail("max is below min", "min <= max");
    producers.size = SizeDistribution::kUniform;
    return;
  }
  const std::optional<uint64_t> fixed = node.size_bytes(1);
  if (!fixed) return;
  producers.size = SizeDistribution::kFixed;
  producers.size_min_bytes = producers.size_max_bytes = *fixed;
}

void parse_arrival(const YamlNode& node, ProducerSpec& producers) {
  if (const YamlNode arrival = node.child("arrival"); arrival.present()) {
    if (const auto index = arrival.choice(kArrivalNames)) producers.arrival = static_cast<Arrival>(*index);
  }
  const bool bursts = producers.arrival == Arrival::kBursts;
  for (const std::string_view key : {"burst_size", "burst_period"}) {
    const YamlNode value = node.child(key);
    if (!bursts && value.present()) return value.fail("applies only with arrival: bursts", "no burst_* keys");
    if (bursts && !value.present()) return value.fail("is missing", "burst_size and burst_period with arrival: bursts");
  }
  if (!bursts) return;
  if (node.child("rate").present()) {
    return node.child("rate").fail("is derived from burst_size / burst_period", "no rate with arrival: bursts");
  }
  node.read("burst_size", producers.burst_size, 1, 100'000);
  node.read_duration("burst_period", producers.burst_period, kNanosPerMilli);
  if (producers.burst_period > 0) {
    producers.rate_per_sec = producers.burst_size * static_cast<double>(kNanosPerSecond) / producers.burst_period;
  }
}

void parse_producers(const YamlNode& node, ProducerSpec& producers, const Store& store) {
  if (!node.expect_keys({"count", "rate", "arrival", "burst_size", "burst_period", "message_size", "keys",
                         "send_timeout", "retries", "max_in_flight"})) {
    return;
  }
  node.read("count", producers.count, 0, 1000);
  node.read_rate("rate", producers.rate_per_sec);
  parse_arrival(node, producers);
  parse_message_size(node.child("message_size"), producers);
  if (const YamlNode keys = node.child("keys"); keys.present()) {
    if (const auto index = keys.choice(kKeyModeNames)) producers.keys = static_cast<KeyMode>(*index);
  }
  node.read_duration("send_timeout", producers.send_timeout, kNanosPerMilli);
  node.read("retries", producers.retries, 0, 16);
  node.read("max_in_flight", producers.max_in_flight, 1, 100'000);
  if (producers.size != SizeDistribution::kTelemetry && producers.size_max_bytes > uint64_t(store.maxMessageSize)) {
    node.child("message_size")
        .fail("exceeds the broker's maxMessageSize (" + std::to_string(store.maxMessageSize) + ")",
              "message sizes <= broker.maxMessageSize");
  }
}

void parse_consumer_groups(const YamlNode& node, std::vector<ConsumerGroupSpec>& groups) {
  if (!node.present()) return;  // keeps the default group
  if (!node.expect_sequence("consumer groups {name, consumers, mode, handler_failure_probability}")) return;
  groups.clear();
  std::set<std::string> names;
  for (const YamlNode& element : node.elements()) {
    if (!element.expect_keys({"name", "consumers", "mode", "handler_failure_probability"})) return;
    ConsumerGroupSpec group;
    const YamlNode name = element.child("name");
    if (const auto text = name.text()) group.name = *text;
    if (!name.errors().ok()) return;
    if (!valid_group_name(group.name)) {
      return name.fail("'" + group.name + "' is not a usable group name", "letters, digits, '_' and '-'");
    }
    if (!names.insert(group.name).second) return name.fail("'" + group.name + "' is used twice", "unique group names");
    element.read("consumers", group.consumers, 1, 64);
    if (const YamlNode mode = element.child("mode"); mode.present()) {
      if (const auto index = mode.choice(kConsumeModeNames)) group.mode = static_cast<ConsumeMode>(*index);
    }
    element.read("handler_failure_probability", group.handler_failure_probability, 0.0, 0.99);
    groups.push_back(group);
  }
}

void parse_workload(const YamlNode& node, Scenario& scenario) {
  WorkloadSpec& w = scenario.workload;
  w.consumer_groups = {ConsumerGroupSpec{"cg", 1, ConsumeMode::kClustering, 0.0}};
  if (!node.expect_keys({"topic", "queues_per_broker", "producers", "consumer_groups"})) return;
  node.read("topic", w.topic);
  if (!valid_group_name(w.topic)) {
    return node.child("topic").fail("'" + w.topic + "' is not a usable topic name", "letters, digits, '_' and '-'");
  }
  node.read("queues_per_broker", w.queues_per_broker, 1, 1024);
  parse_producers(node.child("producers"), w.producers, scenario.broker.store);
  parse_consumer_groups(node.child("consumer_groups"), w.consumer_groups);
}

// ------------------------------------------------------------------ faults

// A partition side: machine names and aliases; "rest" is everything on
// neither side, resolved once both sides are read.
bool read_side(const YamlNode& node, const std::vector<MachineSpec>& machines, std::set<std::string>& side,
               bool& rest) {
  const std::string expected = "machine names (" + list_text(all_machine_names(machines)) +
                               ") or aliases: rest, brokers, masters, slaves, namesrvs, clients, broker-a ...";
  if (!node.present()) {
    node.fail("is missing", "a list of " + expected);
    return false;
  }
  if (!node.is_sequence()) {
    node.fail("is not a list", "a list of " + expected);
    return false;
  }
  for (const YamlNode& element : node.elements()) {
    const std::optional<std::string> name = element.text();
    if (!name) return false;
    if (*name == "rest") {
      rest = true;
      continue;
    }
    const std::set<std::string> resolved = resolve_machine_name(*name, machines);
    if (resolved.empty()) {
      element.fail("'" + *name + "' names no machine of this topology", expected);
      return false;
    }
    side.insert(resolved.begin(), resolved.end());
  }
  return true;
}

void read_sides(const YamlNode& node, const std::vector<MachineSpec>& machines, FaultEvent& event) {
  bool rest_a = false, rest_b = false;
  if (!read_side(node.child("side_a"), machines, event.side_a, rest_a)) return;
  if (!read_side(node.child("side_b"), machines, event.side_b, rest_b)) return;
  if (rest_a && rest_b) return node.fail("both sides say rest", "'rest' on at most one side");
  std::set<std::string>& rest_side = rest_a ? event.side_a : event.side_b;
  const std::set<std::string>& other = rest_a ? event.side_b : event.side_a;
  if (rest_a || rest_b) {
    for (const MachineSpec& m : machines) {
      if (!other.count(m.name)) rest_side.insert(m.name);
    }
  }
}

// Which optional keys each kind takes; every kind takes at, kind, duration.
std::vector<std::string_view> keys_of_kind(FaultKind kind) {
  switch (kind) {
    case FaultKind::kPartition:
      return {"side_a", "side_b", "one_way"};
    case FaultKind::kPowerLossAll:
      return {};
    case FaultKind::kFailDisk:
      return {"target", "disk_index"};
    case FaultKind::kSlowDisk:
      return {"target", "factor"};
    case FaultKind::kClockSkew:
      return {"target", "skew"};
    default:
      return {"target"};
  }
}

constexpr std::array<std::string_view, 10> kFaultKeys = {"at",     "kind", "target", "duration", "disk_index",
                                                         "factor", "skew", "side_a", "side_b",   "one_way"};

void read_fault_fields(const YamlNode& node, const std::vector<MachineSpec>& machines, FaultEvent& event) {
  const std::vector<std::string_view> extra = keys_of_kind(event.kind);
  for (const auto& [key, value] : node.entries()) {
    if (key == "at" || key == "kind" || key == "duration") continue;
    if (std::find(extra.begin(), extra.end(), key) == extra.end()) {
      return value.fail("does not apply to kind " + std::string(faults::fault_kind_name(event.kind)),
                        "at, kind, duration" + std::string(extra.empty() ? "" : ", ") + join_names(extra));
    }
  }
  if (!node.child("at").present()) return node.fail("has no 'at'", "the fault's start time, e.g. at: 30s");
  node.read_duration("at", event.at, 0);
  node.read_duration("duration", event.duration, 0);
  const bool needs_target = std::find(extra.begin(), extra.end(), "target") != extra.end();
  if (needs_target && !node.child("target").present()) {
    return node.fail("has no 'target'", "a target for kind " + std::string(faults::fault_kind_name(event.kind)));
  }
  node.read("target", event.target);
  node.read("disk_index", event.disk_index, 0, 3);
  node.read("factor", event.factor, 1.0, 1e6);
  Nanos skew = 0;
  node.read_duration("skew", skew, std::numeric_limits<Nanos>::min());
  event.skew_ms = skew / kNanosPerMilli;
  node.read("one_way", event.one_way);
  if (event.kind == FaultKind::kPartition) read_sides(node, machines, event);
}

std::optional<FaultEvent> parse_fault_event(const YamlNode& node, const std::vector<MachineSpec>& machines,
                                            Nanos duration) {
  if (!node.expect_keys(kFaultKeys)) return std::nullopt;
  const YamlNode kind = node.child("kind");
  if (!kind.present()) {
    node.fail("has no 'kind'", "kind: one of " + join_names(fault_kind_names()));
    return std::nullopt;
  }
  const std::optional<size_t> kind_index = kind.choice(fault_kind_names());
  if (!kind_index) return std::nullopt;
  FaultEvent event;
  event.kind = static_cast<FaultKind>(*kind_index);
  read_fault_fields(node, machines, event);
  if (!node.errors().ok()) return std::nullopt;
  const YamlNode target = node.child("target").present() ? node.child("target") : node;
  if (const Status s = check_target(event, machines); !s.ok()) {
    target.fail(s.message(), "");
    return std::nullopt;
  }
  if (const Status s = check_disk_index(event, machines); !s.ok()) {
    node.child("disk_index").fail(s.message(), "");
    return std::nullopt;
  }
  if (const Status s = check_start(event, duration); !s.ok()) {
    node.child("at").fail(s.message(), "");
    return std::nullopt;
  }
  if (const Status s = faults::validate_fault(event); !s.ok()) {
    node.fail(s.message(), "a complete event (see Faults in scenarios/README.md)");
    return std::nullopt;
  }
  return event;
}

std::optional<FaultSchedule> parse_fault_list(const YamlNode& node, const std::vector<MachineSpec>& machines,
                                              Nanos duration) {
  if (!node.expect_sequence("fault events, e.g. - {at: 30s, kind: crash_machine, target: broker-a-0, duration: 20s}")) {
    return std::nullopt;
  }
  FaultSchedule schedule;
  for (const YamlNode& element : node.elements()) {
    std::optional<FaultEvent> event = parse_fault_event(element, machines, duration);
    if (!event) return std::nullopt;
    schedule.events.push_back(std::move(*event));
  }
  schedule.sort();
  return schedule;
}

void parse_nemesis_rate(const YamlNode& node, faults::NemesisRate& rate) {
  if (!node.expect_keys({"kind", "rate", "min_duration", "max_duration"})) return;
  const YamlNode kind = node.child("kind");
  if (!kind.present()) return node.fail("has no 'kind'", "kind: one of " + join_names(fault_kind_names()));
  if (const auto index = kind.choice(fault_kind_names())) rate.kind = static_cast<FaultKind>(*index);
  if (rate.kind == FaultKind::kPromoteSlave) {
    return kind.fail("is an operator action, not a random fault", "another kind");
  }
  double per_sec = 0;
  node.read_rate("rate", per_sec);
  rate.per_minute = per_sec * 60;
  node.read_duration("min_duration", rate.min_duration, 0);
  node.read_duration("max_duration", rate.max_duration, 0);
}

void parse_nemesis_targets(const YamlNode& node, const std::vector<MachineSpec>& machines,
                           std::vector<std::string>& targets) {
  std::set<std::string> chosen;
  if (!node.present()) chosen = resolve_machine_name("brokers", machines);
  if (!node.expect_sequence("machine names or aliases (brokers, masters, slaves, namesrvs, clients, broker-a)")) return;
  for (const YamlNode& element : node.elements()) {
    const std::optional<std::string> name = element.text();
    if (!name) return;
    const std::set<std::string> resolved = resolve_machine_name(*name, machines);
    if (resolved.empty()) {
      return element.fail("'" + *name + "' names no machine of this topology",
                          "machine names (" + list_text(all_machine_names(machines)) + ") or aliases");
    }
    chosen.insert(resolved.begin(), resolved.end());
  }
  targets.assign(chosen.begin(), chosen.end());
}

void parse_nemesis(const YamlNode& node, Scenario& scenario) {
  if (!node.present()) return;
  if (!node.expect_keys(
          {"rates", "window", "quiet_period", "max_machines_down", "never_both_disks_of_a_mirror", "targets"})) {
    return;
  }
  faults::NemesisConfig config;
  const YamlNode rates = node.child("rates");
  if (!rates.present()) return node.fail("has no 'rates'", "rates: [{kind: kill_process, rate: 1/min}, ...]");
  if (!rates.expect_sequence("{kind, rate, min_duration, max_duration}")) return;
  for (const YamlNode& element : rates.elements()) parse_nemesis_rate(element, config.rates.emplace_back());
  const YamlNode window = node.child("window");
  if (window.expect_keys({"start", "end"})) {
    window.read_duration("start", config.window_start, 0);
    window.read_duration("end", config.window_end, 0);
  }
  node.read_duration("quiet_period", config.quiet_period, 0);
  node.read("max_machines_down", config.max_machines_down, 0, 64);
  node.read("never_both_disks_of_a_mirror", config.never_both_disks_of_a_mirror);
  parse_nemesis_targets(node.child("targets"), scenario_machines(scenario), scenario.faults.nemesis_machines);
  if (!node.errors().ok()) return;
  if (const Status status = faults::validate_nemesis(config, scenario.duration); !status.ok()) {
    // validate_nemesis says "nemesis: ..."; the path already does.
    const std::string& message = status.message();
    return node.fail(message.starts_with("nemesis: ") ? message.substr(9) : message,
                     "a nemesis that fits the run's duration");
  }
  scenario.faults.nemesis = std::move(config);
}

void parse_expect(const YamlNode& node, std::map<std::string, Expectation>& expect) {
  if (!node.present()) return;
  if (!node.is_map()) return node.fail("is not a mapping", "metric: number or metric: {max: X} / {min: X}");
  for (const auto& [metric, value] : node.entries()) {
    if (std::find(kMetrics.begin(), kMetrics.end(), metric) == kMetrics.end()) {
      const std::vector<std::string> close = closest_names(metric, kMetrics);
      node.errors().report(
          node.key_mark(metric), value.path(),
          "unknown metric '" + metric + "'" + (close.empty() ? "" : " (did you mean '" + close[0] + "'?)"),
          "one of: " + join_names(kMetrics));
      return;
    }
    Expectation e{metric};
    if (value.is_map()) {
      if (!value.expect_keys({"min", "max"})) return;
      if (value.child("min").present()) e.min = value.child("min").number(0, 1e18);
      if (value.child("max").present()) e.max = value.child("max").number(0, 1e18);
      if (!e.min && !e.max) return value.fail("has neither min nor max", "{max: X}, {min: X} or both");
    } else {
      e.equals = value.number(0, 1e18);
    }
    if (!node.errors().ok()) return;
    if (e.min && e.max && *e.max < *e.min) return value.fail("max is below min", "min <= max");
    expect[metric] = e;
  }
}

// ------------------------------------------------------------------ matrix

void parse_matrix_axes(const YamlNode& node, MatrixSpec& matrix) {
  const std::vector<std::string_view> presets = topology_preset_names();
  const YamlNode topologies = node.child("topologies");
  const YamlNode flush = node.child("flush");
  if (!topologies.present() || !topologies.is_sequence() || topologies.elements().empty()) {
    return topologies.fail("is missing or empty", "a list of topology presets: " + join_names(presets));
  }
  for (const YamlNode& element : topologies.elements()) {
    const auto index = element.choice(presets);
    if (!index) return;
    if (std::count(matrix.topologies.begin(), matrix.topologies.end(), presets[*index])) {
      return element.fail("is listed twice", "each topology once");
    }
    matrix.topologies.emplace_back(presets[*index]);
  }
  if (!flush.present() || !flush.is_sequence() || flush.elements().empty()) {
    return flush.fail("is missing or empty", "a list of SYNC_FLUSH and/or ASYNC_FLUSH");
  }
  for (const YamlNode& element : flush.elements()) {
    const auto index = element.choice(kFlushNames);
    if (!index) return;
    const auto type = static_cast<FlushDiskType>(*index);
    if (std::count(matrix.flush.begin(), matrix.flush.end(), type)) {
      return element.fail("is listed twice", "each flush type once");
    }
    matrix.flush.push_back(type);
  }
}

void parse_matrix_faults(const YamlNode& node, const Scenario& base, MatrixSpec& matrix) {
  if (!node.present() || !node.is_map() || node.entries().empty()) {
    return node.fail("is missing or empty",
                     "named fault lists, e.g. process_crash: [{at: 20s, kind: kill_process, ...}]");
  }
  for (const auto& [name, list] : node.entries()) {
    if (!valid_group_name(name)) {
      return list.fail("'" + name + "' is not a usable name", "letters, digits, '_' and '-'");
    }
    matrix.fault_names.push_back(name);
    for (const std::string& topology : matrix.topologies) {
      Scenario cell = base;
      const Status applied = apply_topology_preset(topology, cell);
      MQ_ASSERT(applied.ok());  // parse_matrix_axes took the name from the preset list
      list.errors().set_note("with topology " + topology);
      std::optional<FaultSchedule> schedule = parse_fault_list(list, scenario_machines(cell), base.duration);
      list.errors().set_note("");
      if (!schedule) return;
      matrix.schedules[topology][name] = std::move(*schedule);
    }
  }
}

// matrix.clients: name -> a client: section over the file's own.
void parse_matrix_clients(const YamlNode& node, const Scenario& base, MatrixSpec& matrix) {
  if (!node.present()) return;
  if (!node.is_map() || node.entries().empty()) {
    return node.fail("is not a mapping of named client sections",
                     "e.g. {mqlab: {}, rocketmq4: {slaveReadOnUnreachableMaster: false}}");
  }
  for (const auto& [name, section] : node.entries()) {
    if (!valid_group_name(name)) {
      return section.fail("'" + name + "' is not a usable name", "letters, digits, '_' and '-'");
    }
    ClientSpec client = base.client;
    if (!section.is_map()) return section.fail("is not a mapping", "ClientConfig keys and values, or {}");
    parse_client(section, client);
    matrix.clients.emplace_back(name, std::move(client));
  }
}

void parse_matrix(const YamlNode& node, Scenario& scenario) {
  if (!node.present()) return;
  if (!node.expect_keys({"topologies", "clients", "flush", "faults", "seeds"})) return;
  if (!scenario.faults.schedule.events.empty()) {
    return node.fail("comes with a top-level faults list", "the schedules under matrix.faults only");
  }
  MatrixSpec matrix;
  parse_matrix_axes(node, matrix);
  if (!node.errors().ok()) return;
  parse_matrix_faults(node.child("faults"), scenario, matrix);
  parse_matrix_clients(node.child("clients"), scenario, matrix);
  if (node.child("seeds").present()) parse_seeds(node.child("seeds"), matrix.seeds.emplace());
  scenario.matrix = std::move(matrix);
}

// ---------------------------------------------------------------- document

std::string stem_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = name.rfind('.');
  return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

void parse_header(const YamlNode& root, Scenario& scenario) {
  scenario.name = stem_of(scenario.source);
  root.read("name", scenario.name);
  if (scenario.name.empty()) root.child("name").fail("is empty", "a name for reports");
  root.read("description", scenario.description);
  if (!root.child("duration").present()) {
    return root.child("duration").fail("is missing", "the run's length in virtual time, e.g. duration: 2m");
  }
  root.read_duration("duration", scenario.duration, kNanosPerMilli);
  parse_seeds(root.child("seeds"), scenario.seeds);
  root.read_duration("liveness_bound", scenario.liveness_bound, kNanosPerMilli);
}

void parse_document(const YamlNode& root, Scenario& scenario) {
  if (!root.is_map()) return root.fail("is not a mapping", "a scenario: name, duration, topology, workload, ...");
  if (!root.expect_keys(kTopKeys)) return;
  parse_header(root, scenario);
  parse_topology(root.child("topology"), scenario);
  reject_topology_owned_keys(root.child("broker"));
  if (!root.errors().ok()) return;
  parse_broker(root.child("broker"), scenario.broker);
  parse_client(root.child("client"), scenario.client);
  parse_network(root.child("network"), scenario.network);
  parse_workload(root.child("workload"), scenario);
  if (!root.errors().ok()) return;  // faults name machines: the topology and workload must be sound
  const std::vector<MachineSpec> machines = scenario_machines(scenario);
  if (auto schedule = parse_fault_list(root.child("faults"), machines, scenario.duration)) {
    scenario.faults.schedule = std::move(*schedule);
  }
  parse_nemesis(root.child("nemesis"), scenario);
  parse_expect(root.child("expect"), scenario.expect);
  if (!root.errors().ok()) return;
  parse_matrix(root.child("matrix"), scenario);
}

// ----------------------------------------------------------------- describe

std::string indented(const std::string& lines, const std::string& indent = "  ") {
  std::string text;
  size_t start = 0;
  while (start < lines.size()) {
    const size_t end = lines.find('\n', start);
    const size_t stop = end == std::string::npos ? lines.size() : end + 1;
    text += indent + lines.substr(start, stop - start);
    start = stop;
  }
  return text;
}

void describe_topology(const Scenario& s, std::ostringstream& out) {
  const TopologySpec& t = s.topology;
  out << "topology: " << (t.preset.empty() ? "" : t.preset + ", ") << t.broker_groups << " broker group(s) x (1 "
      << store::broker_role_name(s.broker.store.brokerRole) << " + " << t.slaves_per_group << " SLAVE), " << t.namesrvs
      << " namesrv(s), " << t.clients << " client machine(s)\n";
  for (const MachineSpec& m : scenario_machines(s)) {
    out << "  " << m.name << ": " << (m.disks > 0 ? std::to_string(m.disks) + " disk(s), " : "") << "processes "
        << list_text(m.processes) << "\n";
  }
  const DiskProfile& d = t.disk;
  out << "disk: " << d.name << (t.raid10 ? " x4 as RAID10" : "") << ", capacity " << size_text(t.disk_capacity_bytes)
      << ", torn_sector_probability " << number_text(t.torn_sector_probability) << ", bit_rot_probability "
      << number_text(t.bit_rot_probability) << "\n";
  out << "  sector " << d.sector_size_bytes << "B, sync base " << duration_text(d.sync_base_latency_ns) << ", write "
      << d.write_bandwidth_bytes_per_sec << " B/s, read " << d.read_bandwidth_bytes_per_sec << " B/s, seek "
      << duration_text(d.seek_latency_ns) << "\n";
  out << "  dirty_expire " << duration_text(d.dirty_expire_ns) << ", writeback every "
      << duration_text(d.dirty_writeback_interval_ns) << ", dirty_background " << size_text(d.dirty_background_bytes)
      << ", journal commit "
      << (d.journal_commit_interval_ns == 0 ? std::string("never") : duration_text(d.journal_commit_interval_ns))
      << "\n";
}

void describe_broker_and_network(const Scenario& s, std::ostringstream& out) {
  const NetworkSpec& n = s.network;
  out << "network: latency " << duration_text(n.latency) << " + jitter up to " << duration_text(n.jitter)
      << ", bandwidth " << n.bandwidth_bytes_per_sec << " B/s, loss " << number_text(n.loss_probability)
      << ", tcp_user_timeout " << duration_text(n.tcp_user_timeout) << "\n";
  out << "broker.conf (store):\n";
  for (const ConfKey& key : conf_keys()) {
    if (!std::holds_alternative<std::monostate>(key.field)) {
      out << "  " << key.name << "=" << conf_value_text(key, s.broker.store) << "\n";
    }
  }
  out << "broker.conf (broker, set by the file; others at the broker's defaults):\n";
  if (s.broker.broker_conf.empty()) out << "  (none)\n";
  for (const auto& [key, value] : s.broker.broker_conf) out << "  " << key << "=" << value << "\n";
}

// "key=value ..." of every key of the client: section, then a newline.
void describe_client_config(const client::ClientConfig& c, std::ostringstream& out) {
  for (const client::ClientConfig::IntervalKey& key : client::ClientConfig::interval_keys()) {
    out << key.name << "=" << c.*key.field << " ";
  }
  out << "slaveReadOnUnreachableMaster=" << (c.slaveReadOnUnreachableMaster ? "true" : "false")
      << " serializeType=" << remoting::serialize_type_name(c.serializeType) << "\n";
}

void describe_client(const Scenario& s, std::ostringstream& out) {
  out << "client (ClientConfig of every producer and consumer): ";
  describe_client_config(s.client.config, out);
}

void describe_workload(const Scenario& s, std::ostringstream& out) {
  const WorkloadSpec& w = s.workload;
  const ProducerSpec& p = w.producers;
  out << "workload: topic " << w.topic << ", " << w.queues_per_broker << " queues per broker\n  " << p.count
      << " producer(s) at " << number_text(p.rate_per_sec) << "/s each, " << arrival_name(p.arrival);
  if (p.arrival == Arrival::kBursts) out << " (" << p.burst_size << " every " << duration_text(p.burst_period) << ")";
  out << ", message size " << size_distribution_name(p.size);
  if (p.size == SizeDistribution::kFixed) out << " " << size_text(p.size_min_bytes);
  if (p.size == SizeDistribution::kUniform) {
    out << " " << size_text(p.size_min_bytes) << ".." << size_text(p.size_max_bytes);
  }
  out << ", keys " << key_mode_name(p.keys) << ", send timeout " << duration_text(p.send_timeout) << ", retries "
      << p.retries << ", max in flight " << p.max_in_flight << "\n";
  for (const ConsumerGroupSpec& g : w.consumer_groups) {
    out << "  consumer group " << g.name << ": " << g.consumers << " consumer(s), " << consume_mode_name(g.mode)
        << ", handler failure probability " << number_text(g.handler_failure_probability) << "\n";
  }
}

void describe_faults(const Scenario& s, std::ostringstream& out) {
  out << "faults:\n" << indented(s.faults.schedule.describe());
  if (s.faults.nemesis) {
    const faults::NemesisConfig& n = *s.faults.nemesis;
    out << "nemesis: window " << duration_text(n.window_start) << ".."
        << (n.window_end == 0 ? std::string("end") : duration_text(n.window_end)) << ", quiet period "
        << duration_text(n.quiet_period) << ", max machines down " << n.max_machines_down
        << ", never both disks of a mirror " << (n.never_both_disks_of_a_mirror ? "yes" : "no") << ", targets "
        << list_text(s.faults.nemesis_machines) << "\n";
    for (const faults::NemesisRate& r : n.rates) {
      out << "  " << faults::fault_kind_name(r.kind) << " " << number_text(r.per_minute) << "/min for "
          << duration_text(r.min_duration) << ".." << duration_text(r.max_duration) << "\n";
    }
  }
  std::vector<std::string> expectations;
  for (const auto& [metric, e] : s.expect) expectations.push_back(e.describe());
  out << "expect: " << (expectations.empty() ? std::string("(nothing)") : list_text(expectations)) << "\n";
}

void describe_matrix(const MatrixSpec& m, std::ostringstream& out) {
  out << "matrix: " << m.topologies.size() << " topologies x " << m.flush.size() << " flush types x "
      << m.fault_names.size() << " fault schedules = " << m.size() << " scenarios";
  if (m.seeds) out << ", seeds " << m.seeds->first << ".." << m.seeds->last;
  if (!m.clients.empty()) out << " (each topology with " << m.clients.size() << " clients)";
  out << "\n  topologies: " << list_text(m.topologies) << "\n  flush:";
  for (FlushDiskType f : m.flush) out << " " << store::flush_disk_type_name(f);
  out << "\n";
  for (const auto& [name, client] : m.clients) {
    std::ostringstream section;
    describe_client_config(client.config, section);
    out << "  client " << name << ": " << section.str();
  }
  // Shown as resolved for the first topology; aliases such as "rest" name
  // other machines in the others.
  for (const std::string& name : m.fault_names) {
    out << "  faults " << name << " (with " << m.topologies.front() << "):\n"
        << indented(m.schedules.at(m.topologies.front()).at(name).describe(), "    ");
  }
}

}  // namespace

// ------------------------------------------------------------------ public

std::string_view arrival_name(Arrival arrival) { return kArrivalNames[static_cast<size_t>(arrival)]; }
std::string_view key_mode_name(KeyMode mode) { return kKeyModeNames[static_cast<size_t>(mode)]; }
std::string_view consume_mode_name(ConsumeMode mode) { return kConsumeModeNames[static_cast<size_t>(mode)]; }
std::string_view size_distribution_name(SizeDistribution distribution) {
  switch (distribution) {
    case SizeDistribution::kFixed:
      return "fixed";
    case SizeDistribution::kUniform:
      return "uniform";
    case SizeDistribution::kTelemetry:
      return "telemetry";
  }
  return "?";
}

bool Expectation::holds(double value) const {
  if (equals && value != *equals) return false;
  if (min && value < *min) return false;
  if (max && value > *max) return false;
  return true;
}

std::string Expectation::describe() const {
  std::string text;
  if (equals) text = metric + " == " + number_text(*equals);
  if (min) text += (text.empty() ? "" : ", ") + metric + " >= " + number_text(*min);
  if (max) text += (text.empty() ? "" : ", ") + metric + " <= " + number_text(*max);
  return text;
}

std::string broker_group_name(int group) {
  MQ_ASSERT(group >= 0);
  MQ_ASSERT(group < 26);
  return std::string("broker-") + static_cast<char>('a' + group);
}

std::string broker_machine_name(int group, int broker_id) {
  MQ_ASSERT(broker_id >= 0);
  return broker_group_name(group) + "-" + std::to_string(broker_id);
}

std::vector<MachineSpec> scenario_machines(const Scenario& scenario) {
  const TopologySpec& t = scenario.topology;
  MQ_ASSERT(t.clients >= 1);
  std::vector<MachineSpec> machines;
  for (int group = 0; group < t.broker_groups; ++group) {
    for (int id = 0; id <= t.slaves_per_group; ++id) {
      const std::string name = broker_machine_name(group, id);
      machines.push_back({name, MachineRole::kBroker, broker_group_name(group), id, t.disks_per_broker(), {name}});
    }
  }
  for (int i = 0; i < t.namesrvs; ++i) {
    const std::string name = "namesrv-" + std::to_string(i);
    machines.push_back({name, MachineRole::kNameServer, "", 0, 0, {name}});
  }
  const size_t first_client = machines.size();
  for (int i = 0; i < t.clients; ++i) machines.push_back({"client-" + std::to_string(i), MachineRole::kClient});
  // Round-robin keeps each client machine's share even, so losing one
  // client machine takes a predictable slice of the workload.
  size_t next = 0;
  const auto place = [&](std::string process) {
    machines[first_client + next++ % static_cast<size_t>(t.clients)].processes.push_back(std::move(process));
  };
  for (int i = 0; i < scenario.workload.producers.count; ++i) place("producer-" + std::to_string(i));
  for (const ConsumerGroupSpec& group : scenario.workload.consumer_groups) {
    for (int j = 0; j < group.consumers; ++j) place("consumer-" + group.name + "-" + std::to_string(j));
  }
  return machines;
}

std::vector<faults::NemesisTarget> nemesis_targets(const Scenario& scenario) {
  std::vector<faults::NemesisTarget> targets;
  for (const MachineSpec& m : scenario_machines(scenario)) {
    const auto& chosen = scenario.faults.nemesis_machines;
    if (std::find(chosen.begin(), chosen.end(), m.name) == chosen.end()) continue;
    targets.push_back({m.name, m.processes, std::max(1, m.disks), scenario.topology.raid10 && m.disks == 4});
  }
  return targets;
}

Status validate_fault_target(const FaultEvent& event, const std::vector<MachineSpec>& machines, Nanos duration) {
  MQ_RETURN_IF_ERROR(check_start(event, duration));
  MQ_RETURN_IF_ERROR(check_target(event, machines));
  MQ_RETURN_IF_ERROR(check_disk_index(event, machines));
  for (const std::set<std::string>* side : {&event.side_a, &event.side_b}) {
    for (const std::string& name : *side) {
      if (find_machine(machines, name) == nullptr) {
        return Status::InvalidArgument("partition side names '" + name + "', not a machine of this topology");
      }
    }
  }
  return faults::validate_fault(event);
}

std::vector<std::string_view> topology_preset_names() {
  std::vector<std::string_view> names;
  for (const TopologyPreset& preset : kPresets) names.push_back(preset.name);
  return names;
}

Status apply_topology_preset(std::string_view name, Scenario& scenario) {
  for (const TopologyPreset& preset : kPresets) {
    if (preset.name != name) continue;
    scenario.topology.preset = std::string(name);
    scenario.topology.broker_groups = preset.broker_groups;
    scenario.topology.slaves_per_group = preset.slaves_per_group;
    scenario.topology.raid10 = preset.raid10;
    scenario.broker.store.brokerRole = preset.role;
    return Status::Ok();
  }
  return Status::InvalidArgument("unknown topology preset '" + std::string(name) +
                                 "'; expected one of: " + join_names(topology_preset_names()));
}

client::ClientConfig ClientSpec::for_client(std::vector<std::string> namesrv_addresses, std::string client_ip,
                                            std::string instance_name) const {
  client::ClientConfig c = config;
  c.namesrvAddr = std::move(namesrv_addresses);
  c.clientIP = std::move(client_ip);
  c.instanceName = std::move(instance_name);
  MQ_ASSERT(c.validate().ok());
  return c;
}

std::vector<std::string_view> known_broker_conf_keys() {
  std::vector<std::string_view> names;
  for (const ConfKey& key : conf_keys()) names.push_back(key.name);
  return names;
}

std::vector<std::string_view> known_metrics() { return {kMetrics.begin(), kMetrics.end()}; }

Result<Scenario> parse_scenario(std::string_view yaml_text, std::string source_name) {
  YamlErrors errors(source_name);
  Scenario scenario;
  scenario.source = std::move(source_name);
  scenario.hash = scenario_hash(yaml_text);
  // yaml-cpp reports syntax errors (and, deep inside, bad allocations) by
  // throwing; they stop here, as located Statuses.
  try {
    const YAML::Node root = YAML::Load(std::string(yaml_text));
    if (!root.IsDefined() || root.IsNull()) {
      errors.report(YAML::Mark(), "", "the file is empty", "a scenario: name, duration, topology, workload, ...");
    } else {
      parse_document(YamlNode::root(errors, root), scenario);
    }
  } catch (const YAML::Exception& e) {
    errors.report(e.mark, "YAML syntax", e.msg, "");
  } catch (const std::exception& e) {
    errors.report(YAML::Mark::null_mark(), "", std::string("cannot read the file: ") + e.what(), "");
  }
  if (!errors.ok()) return errors.status();
  return scenario;
}

Result<Scenario> load_scenario(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Status::NotFound(path + ": cannot open the scenario file");
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) return Status::IoError(path + ": read failed");
  return parse_scenario(text.str(), path);
}

std::vector<MatrixSpec::Row> MatrixSpec::rows() const {
  std::vector<Row> rows;
  for (const std::string& topology : topologies) {
    if (clients.empty()) rows.push_back(Row{topology, topology, nullptr});
    for (const auto& [name, client] : clients) rows.push_back(Row{topology + "+" + name, topology, &client});
  }
  MQ_ASSERT(rows.size() == topologies.size() * std::max<size_t>(clients.size(), 1));
  return rows;
}

Result<std::vector<Scenario>> expand_matrix(const Scenario& base) {
  MQ_ASSERT(base.matrix.has_value());
  const MatrixSpec& m = *base.matrix;
  std::vector<Scenario> cells;
  for (const MatrixSpec::Row& row : m.rows()) {
    for (const FlushDiskType flush : m.flush) {
      for (const std::string& fault : m.fault_names) {
        Scenario cell = base;
        cell.matrix.reset();
        MQ_RETURN_IF_ERROR(apply_topology_preset(row.preset, cell));
        if (row.client != nullptr) cell.client = *row.client;
        cell.broker.store.flushDiskType = flush;
        cell.name = row.label + "/" + store::flush_disk_type_name(flush) + "/" + fault;
        if (m.seeds) cell.seeds = *m.seeds;
        const auto by_topology = m.schedules.find(row.preset);
        if (by_topology == m.schedules.end() || !by_topology->second.count(fault)) {
          return Status::InvalidArgument(base.source + ": matrix has no schedule '" + fault + "' for " + row.preset);
        }
        cell.faults.schedule = by_topology->second.at(fault);
        MQ_RETURN_IF_ERROR(cell.broker.store.validate().with_context(cell.name));
        cells.push_back(std::move(cell));
      }
    }
  }
  MQ_ASSERT(cells.size() == m.size());
  return cells;
}

std::string scenario_hash(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis
  for (const char c : text) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 0x100000001b3ull;  // FNV-1a 64 prime
  }
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

Nanos replicated_liveness_floor() {
  const namesrv::NamesrvConfig namesrv;
  const client::ClientConfig client;
  return millis(namesrv.brokerChannelExpiredTime + namesrv.scanNotActiveBrokerInterval +
                client.pollNameServerInterval) +
         seconds(20);
}

Nanos effective_liveness_bound(const Scenario& scenario) {
  if (scenario.topology.slaves_per_group == 0) return scenario.liveness_bound;
  return std::max(scenario.liveness_bound, replicated_liveness_floor());
}

std::string describe(const Scenario& s) {
  std::ostringstream out;
  out << "scenario " << s.name << (s.description.empty() ? "" : ": " + s.description) << "\n";
  out << "source: " << s.source << " (hash " << s.hash << ")\n";
  out << "duration " << duration_text(s.duration) << ", seeds " << s.seeds.first << ".." << s.seeds.last
      << ", liveness bound " << duration_text(s.liveness_bound);
  if (effective_liveness_bound(s) != s.liveness_bound) {
    out << " (" << duration_text(effective_liveness_bound(s)) << " with slaves: the NameServers' route expiry)";
  }
  out << "\n";
  describe_topology(s, out);
  describe_broker_and_network(s, out);
  describe_client(s, out);
  describe_workload(s, out);
  describe_faults(s, out);
  if (s.matrix) describe_matrix(*s.matrix, out);
  return out.str();
}

}  // namespace mqlab::sim
