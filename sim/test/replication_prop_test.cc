// Replication properties of whole simulated clusters (issue 5), over random
// seeds and fault instants, each case a full SimWorld run of the real broker,
// NameServer and clients: SYNC_MASTER loses nothing when any one machine is
// lost for good; ASYNC_MASTER loses only what its slave lacked at that
// instant, attributed to that fault; RAID10 with SYNC_FLUSH survives one
// failed disk; a caught-up slave's CommitLog is a byte-identical prefix of
// its master's, read back through the simulated file system.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <sstream>

#include "broker/common/log.h"
#include "broker/processor/broker_controller.h"
#include "broker/store/message_codec.h"
#include "sim/scenario.h"
#include "sim/sim_apps.h"
#include "sim/sim_file_system.h"
#include "sim/sim_machine.h"
#include "sim/sim_world.h"
#include "sim/test/quiet_run.h"

namespace mqlab::sim::replication_prop_test {
namespace {

// A run whose world stays alive afterwards, to look at its history and disks.
struct WorldRun {
  std::unique_ptr<SimWorld> world;
  RunResult result;
};

// before_run: schedules extra observations on the world's scheduler.
WorldRun run_world(const std::string& yaml, uint64_t seed, const std::function<void(SimWorld&)>& before_run = {}) {
  Result<Scenario> scenario = parse_scenario(yaml, "generated.yaml");
  MQ_ASSERT_MSG(scenario.ok(), scenario.status().to_string() + "\n" + yaml);
  WorldRun run;
  run.world = std::make_unique<SimWorld>(*scenario, seed);
  if (before_run) before_run(*run.world);
  run.result = run_quietly(*run.world);
  return run;
}

// Runs a property a fixed number of times (each case is a whole cluster run).
void check_cases(int cases, const std::function<void()>& property) {
  rc::detail::TestParams params;
  params.maxSuccess = cases;
  params.maxSize = 100;
  params.disableShrinking = true;
  rc::detail::TestMetadata metadata;
  const auto result = rc::detail::checkTestable(property, metadata, params);
  rc::detail::FailureResult failure;
  if (result.match(failure)) FAIL() << failure.description;
}

constexpr const char* kPoissonProducers =
    "{count: 1, rate: 800/s, arrival: poisson, message_size: {min: 64B, max: 2KiB}}";
// Slower than the default LAN: messages are in flight to a slave at any
// instant, racing their acknowledgements to the producer.
constexpr const char* kSlowNetwork = "{latency: 2ms, jitter: 500us, bandwidth: 100Mbit/s}";

// A cluster of the preset under the given producers (YAML), the network a
// YAML mapping for the network key (empty: the default LAN).
std::string replication_yaml(const std::string& preset, const std::string& flush, const std::string& faults,
                             const std::string& producers = "{count: 1, rate: 300/s, arrival: poisson, "
                                                            "message_size: {min: 64B, max: 2KiB}}",
                             const std::string& network = "") {
  std::ostringstream yaml;
  yaml << "name: prop-" << preset << "\nduration: 30s\nseeds: 1\nliveness_bound: 90s\n"
       << "topology: {preset: " << preset << ", disk: {preset: sata_ssd}}\n"
       << "broker: {flushDiskType: " << flush << ", slaveTimeout: 3000}\n";
  if (!network.empty()) yaml << "network: " << network << "\n";
  yaml << "workload:\n  producers: " << producers << "\n"
       << "  consumer_groups:\n    - {name: cg, consumers: 1}\n"
       << "faults:\n"
       << faults;
  return yaml.str();
}

std::string at_text(int64_t at_us) { return std::to_string(at_us) + "us"; }

// Acknowledged messages some consumer group (the audit group included) never
// received, from the history alone.
std::set<uint64_t> lost_seqs(const History& history) {
  std::map<std::string, std::set<uint64_t>> received;
  for (const ReceiptRecord& r : history.receipts()) received[r.group.str()].insert(r.seq);
  std::set<uint64_t> lost;
  for (const SendRecord& s : history.sends()) {
    if (s.outcome != SendOutcome::kOk) continue;
    for (const std::string group : {"cg", kAuditGroup}) {
      if (!received[group].count(s.seq)) lost.insert(s.seq);
    }
  }
  return lost;
}

const FaultLossBound* bound_of(const RunResult& result, int fault_index) {
  for (const FaultLossBound& f : result.loss_bound.faults) {
    if (f.fault_index == fault_index) return &f;
  }
  return nullptr;
}

int fault_index_of(const RunResult& result, faults::FaultKind kind) {
  for (size_t i = 0; i < result.schedule.events.size(); ++i) {
    if (result.schedule.events[i].kind == kind) return static_cast<int>(i);
  }
  return -1;
}

TEST(ReplicationProperties, SyncMasterLosesNothingWhenAnyOneMachineIsLostForGood) {
  check_cases(8, [] {
    const std::string flush = *rc::gen::element<std::string>("SYNC_FLUSH", "ASYNC_FLUSH");
    const std::string target = *rc::gen::element<std::string>("broker-a-0", "broker-a-1", "broker-b-0", "broker-b-1");
    const int64_t at_us = *rc::gen::inRange<int64_t>(4'000'000, 22'000'000);
    const int64_t promote_after_us = *rc::gen::inRange<int64_t>(500'000, 8'000'000);
    const uint64_t seed = *rc::gen::inRange<uint64_t>(1, 1000);
    // Sometimes the other broker of the group was down (killed, restarted)
    // shortly before: a SYNC_MASTER must not acknowledge while it has no slave.
    const bool other_was_down = *rc::gen::arbitrary<bool>();
    const int64_t other_down_before_us = *rc::gen::inRange<int64_t>(200'000, 4'000'000);
    const int64_t other_down_for_us = *rc::gen::inRange<int64_t>(100'000, 6'000'000);
    const std::string group = target.substr(0, target.size() - 2);
    const bool master = target.back() == '0';
    // Without a promotion the slave serves the lost master's reads: the
    // consumers move to it once the master stops answering.
    const bool promote = *rc::gen::arbitrary<bool>();
    std::string faults = "  - {at: " + at_text(at_us) + ", kind: destroy_machine, target: " + target + "}\n";
    if (master && promote) {
      faults += "  - {at: " + at_text(at_us + promote_after_us) + ", kind: promote_slave, target: " + group + "}\n";
    }
    if (other_was_down) {
      faults += "  - {at: " + at_text(at_us - other_down_before_us) + ", kind: kill_process, target: " + group +
                (master ? "-1" : "-0") + ", duration: " + at_text(other_down_for_us) + "}\n";
    }
    const WorldRun run = run_world(replication_yaml("sync_replication", flush, faults, kPoissonProducers, kSlowNetwork),
                                   seed);
    const CheckerReport& report = run.result.report;
    RC_TAG(flush, master ? (promote ? "master lost, slave promoted" : "master lost, slave read") : "slave lost");
    RC_ASSERT(run.result.converged);
    RC_ASSERT(report.acknowledged > 0);
    RC_ASSERT(report.lost == 0);
    RC_ASSERT(report.corrupted == 0);
    RC_ASSERT(run.result.loss_bound.messages == 0);  // the configuration promises it
    RC_ASSERT(run.result.passed);
  });
}

// Every message the run lost was acknowledged by the destroyed master at an
// offset its slave did not hold, and is attributed to the destruction.
TEST(ReplicationProperties, AsyncMasterLosesOnlyWhatItsSlaveLackedAndTheCheckerSaysWhy) {
  check_cases(8, [] {
    const std::string flush = *rc::gen::element<std::string>("SYNC_FLUSH", "ASYNC_FLUSH");
    const std::string group = *rc::gen::element<std::string>("broker-a", "broker-b");
    const int64_t at_us = *rc::gen::inRange<int64_t>(4'000'000, 22'000'000);
    const int64_t promote_after_us = *rc::gen::inRange<int64_t>(500'000, 8'000'000);
    const uint64_t seed = *rc::gen::inRange<uint64_t>(1, 1000);
    // Sometimes the slave was down shortly before (killed, then restarted):
    // the master kept acknowledging, so the slave may still be catching up,
    // or still down, when the master is lost.
    const bool slave_was_down = *rc::gen::arbitrary<bool>();
    const int64_t slave_down_before_us = *rc::gen::inRange<int64_t>(200'000, 4'000'000);
    const int64_t slave_down_for_us = *rc::gen::inRange<int64_t>(100'000, 6'000'000);
    // Promoted or not, the slave's copy is what consumers read.
    const bool promote = *rc::gen::arbitrary<bool>();
    std::string faults = "  - {at: " + at_text(at_us) + ", kind: destroy_machine, target: " + group + "-0}\n";
    if (promote) {
      faults += "  - {at: " + at_text(at_us + promote_after_us) + ", kind: promote_slave, target: " + group + "}\n";
    }
    if (slave_was_down) {
      faults += "  - {at: " + at_text(at_us - slave_down_before_us) + ", kind: kill_process, target: " + group +
                "-1, duration: " + at_text(slave_down_for_us) + "}\n";
    }
    const WorldRun run =
        run_world(replication_yaml("async_replication", flush, faults, kPoissonProducers, kSlowNetwork), seed);
    const RunResult& result = run.result;
    RC_ASSERT(result.converged);
    const int destroy = fault_index_of(result, faults::FaultKind::kDestroyMachine);
    RC_ASSERT(destroy >= 0);
    // The world recorded, at the instant, what the master had and the slave confirmed.
    const FaultLossBound* bound = bound_of(result, destroy);
    RC_ASSERT(bound != nullptr);
    RC_ASSERT(bound->master_max_offset >= 0);
    RC_ASSERT(bound->slave_complete_end >= 0);
    RC_ASSERT(bound->slave_complete_end <= bound->slave_confirmed_offset);
    RC_ASSERT(bound->slave_confirmed_offset <= bound->master_max_offset);
    RC_ASSERT(bound->lag_bytes == bound->master_max_offset - bound->slave_complete_end);
    RC_ASSERT(bound->lag_messages >= 0);
    RC_ASSERT(bound->lag_ms >= 0);
    RC_TAG(bound->lag_messages == 0 ? "slave caught up" : "slave behind", promote ? "promoted" : "not promoted");
    const Nanos fault_at = result.schedule.events[static_cast<size_t>(destroy)].at;
    const CheckerReport& report = result.report;
    const std::set<uint64_t> lost = lost_seqs(run.world->history());
    RC_ASSERT(static_cast<int64_t>(lost.size()) == report.lost);
    RC_ASSERT(report.lost <= bound->lag_messages);
    for (uint64_t seq : lost) {
      const std::optional<SendRecord> send = run.world->history().send(seq);
      RC_ASSERT(send.has_value());
      RC_ASSERT(send->broker_name == group);
      RC_ASSERT(send->invoked_at <= fault_at);
      const Result<store::OffsetMessageId> id = store::decode_offset_message_id(send->msg_id);
      RC_ASSERT(id.ok());
      RC_ASSERT(id->offset.value() >= bound->slave_complete_end);  // past what the slave held
    }
    // The checker attributes every loss to the destruction.
    for (const auto& [fault, count] : report.lost_by_fault) RC_ASSERT(fault == destroy);
    for (const LostMessage& listed : report.lost_messages) RC_ASSERT(listed.within_bound);
    RC_ASSERT(result.within_bound);
  });
}

TEST(ReplicationProperties, Raid10WithSyncFlushLosesNothingWhenOneDiskFails) {
  check_cases(8, [] {
    const std::string target = *rc::gen::element<std::string>("broker-a-0", "broker-b-0");
    const int disk = *rc::gen::inRange(0, 4);
    const int64_t at_us = *rc::gen::inRange<int64_t>(4'000'000, 22'000'000);
    const int duration_s = *rc::gen::element(0, 3, 10);  // 0: replaced only in the end-of-run healing
    const uint64_t seed = *rc::gen::inRange<uint64_t>(1, 1000);
    std::string faults = "  - {at: " + at_text(at_us) + ", kind: fail_disk, target: " + target +
                         ", disk_index: " + std::to_string(disk);
    if (duration_s > 0) faults += ", duration: " + std::to_string(duration_s) + "s";
    faults += "}\n";
    const WorldRun run = run_world(replication_yaml("multi_master_raid10", "SYNC_FLUSH", faults), seed);
    RC_ASSERT(run.result.converged);
    RC_ASSERT(run.result.report.acknowledged > 0);
    RC_ASSERT(run.result.report.lost == 0);
    RC_ASSERT(run.result.report.corrupted == 0);
    RC_ASSERT(run.result.passed);
  });
}

// A master's plain disk fails and is replaced: the new disk is rebuilt from
// the slave's store (SimWorld::rebuild_from_slave), so SYNC_MASTER loses
// nothing, and the rebuilt master's log is the slave's. Without the rebuild
// the master came back empty as brokerId 0 and everything its group had
// acknowledged went unread.
TEST(ReplicationProperties, SyncMasterLosesNothingWhenAMastersDiskIsReplaced) {
  check_cases(4, [] {
    const std::string flush = *rc::gen::element<std::string>("SYNC_FLUSH", "ASYNC_FLUSH");
    const std::string target = *rc::gen::element<std::string>("broker-a-0", "broker-b-0");
    const int64_t at_us = *rc::gen::inRange<int64_t>(4'000'000, 22'000'000);
    const int duration_s = *rc::gen::element(0, 3, 10);  // 0: replaced only in the end-of-run healing
    const uint64_t seed = *rc::gen::inRange<uint64_t>(1, 1000);
    std::string faults = "  - {at: " + at_text(at_us) + ", kind: fail_disk, target: " + target + ", disk_index: 0";
    if (duration_s > 0) faults += ", duration: " + std::to_string(duration_s) + "s";
    faults += "}\n";
    const WorldRun run = run_world(replication_yaml("sync_replication", flush, faults), seed);
    RC_TAG(flush);
    RC_ASSERT(run.result.converged);
    RC_ASSERT(run.result.report.acknowledged > 0);
    RC_ASSERT(run.result.report.lost == 0);
    RC_ASSERT(run.result.report.corrupted == 0);
    RC_ASSERT(run.result.loss_bound.messages == 0);
    RC_ASSERT(run.result.passed);
  });
}

// --- the slave's log is a prefix of the master's ---------------------------------

// The bytes [from, to) of the CommitLog under /store/commitlog on machine's
// data disk, read through a SimFileSystem as any process would.
std::vector<uint8_t> stored_commit_log(SimWorld& world, const std::string& machine_name, int64_t segment_bytes,
                                       int64_t from, int64_t to) {
  SimMachine* machine = world.find_machine(machine_name);
  MQ_ASSERT(machine != nullptr && machine->data_disk() != nullptr);
  SimFileSystem files(world.scheduler(), {Mount{"/", machine->data_disk()}}, kWorldOwner);
  std::vector<uint8_t> bytes;
  for (int64_t at = from; at < to;) {
    const int64_t segment = at - at % segment_bytes;
    char name[32];
    std::snprintf(name, sizeof(name), "%020lld", static_cast<long long>(segment));
    Result<std::shared_ptr<env::File>> file = files.open(std::string("/store/commitlog/") + name, {});
    MQ_ASSERT_MSG(file.ok(), file.status().to_string());
    std::vector<uint8_t> chunk(static_cast<size_t>(std::min(to, segment + segment_bytes) - at));
    Result<size_t> read = (*file)->pread(static_cast<uint64_t>(at - segment), chunk);
    MQ_ASSERT(read.ok() && *read == chunk.size());
    bytes.insert(bytes.end(), chunk.begin(), chunk.end());
    at += static_cast<int64_t>(chunk.size());
  }
  return bytes;
}

struct PrefixChecks {
  int compared = 0;        // instants at which a slave was caught up and compared
  int not_caught_up = 0;
  std::vector<std::string> failures;
};

// At this instant, for each group whose master and slave both serve and end
// at the same offset: the slave's stored log equals the master's, byte for byte.
void compare_caught_up_groups(SimWorld& world, int64_t segment_bytes, PrefixChecks& checks) {
  for (const std::string group : {"broker-a", "broker-b"}) {
    broker::BrokerController* master = world.running_broker(group + "-0");
    broker::BrokerController* slave = world.running_broker(group + "-1");
    if (!master || !slave) continue;
    const int64_t master_max = master->message_store().max_phy_offset().value();
    const int64_t slave_min = slave->message_store().min_phy_offset().value();
    const int64_t slave_max = slave->message_store().max_phy_offset().value();
    if (slave_max != master_max || slave_max == 0) {
      ++checks.not_caught_up;
      continue;
    }
    ++checks.compared;
    const auto ours = stored_commit_log(world, group + "-1", segment_bytes, slave_min, slave_max);
    const auto theirs = stored_commit_log(world, group + "-0", segment_bytes, slave_min, slave_max);
    if (ours != theirs) {
      const auto [mine, _] = std::mismatch(ours.begin(), ours.end(), theirs.begin());
      checks.failures.push_back(group + " at t=" + format_virtual_time(world.scheduler().now()) +
                                ": logs differ at offset " + std::to_string(slave_min + (mine - ours.begin())));
    }
  }
}

TEST(ReplicationProperties, CaughtUpSlaveLogIsAByteIdenticalPrefixOfTheMasters) {
  // Small segments (256 KiB) so the logs roll and BLANK records travel too.
  constexpr int64_t kSegmentBytes = 256 * 1024;
  constexpr Nanos kBurstPeriod = seconds(1);
  check_cases(8, [] {
    const std::string preset = *rc::gen::element<std::string>("async_replication", "sync_replication");
    const std::string flush = *rc::gen::element<std::string>("SYNC_FLUSH", "ASYNC_FLUSH");
    // Faults that keep the two logs consistent: a master that loses power can
    // come back shorter than its slave, which then refuses (a divergence,
    // broker/ha/README.md), so masters are only killed.
    const std::string kind = *rc::gen::element<std::string>("kill_process", "crash_machine", "isolate_machine");
    const std::string target = kind == "kill_process"
                                   ? *rc::gen::element<std::string>("broker-a-0", "broker-a-1", "broker-b-1")
                                   : *rc::gen::element<std::string>("broker-a-1", "broker-b-1");
    const int64_t at_ms = *rc::gen::inRange<int64_t>(4000, 20000);
    const int duration_s = *rc::gen::inRange(1, 8);
    const uint64_t seed = *rc::gen::inRange<uint64_t>(1, 1000);
    std::ostringstream yaml;
    yaml << "name: prop-prefix\nduration: 30s\nliveness_bound: 90s\n"
         << "topology: {preset: " << preset << "}\n"
         << "broker: {flushDiskType: " << flush << ", maxMessageSize: 65536, mappedFileSizeCommitLog: "
         << kSegmentBytes << "}\n"
         << "workload:\n  producers: {count: 1, arrival: bursts, burst_size: 60, burst_period: 1s,"
         << " message_size: {min: 64B, max: 2KiB}}\n"
         << "  consumer_groups:\n    - {name: cg, consumers: 1}\n"
         << "faults:\n  - {at: " << at_ms << "ms, kind: " << kind << ", target: " << target
         << ", duration: " << duration_s << "s}\n";
    PrefixChecks checks;
    WorldRun run = run_world(yaml.str(), seed, [&](SimWorld& world) {
      // Just before each burst the traffic has been quiet for most of a period.
      for (Nanos at = kProduceStartDelay + kBurstPeriod - millis(50); at < seconds(30); at += kBurstPeriod) {
        world.scheduler().schedule_at(at, [&world, &checks] { compare_caught_up_groups(world, kSegmentBytes, checks); });
      }
    });
    RC_ASSERT(run.result.converged);
    // And once more after the run, when every fault is healed and traffic stopped.
    run.world->scheduler().run_until(run.world->scheduler().now() + seconds(10));
    compare_caught_up_groups(*run.world, kSegmentBytes, checks);
    RC_TAG(checks.not_caught_up > 0 ? "some instants not caught up" : "always caught up");
    for (const std::string& failure : checks.failures) RC_LOG() << failure << "\n";
    RC_ASSERT(checks.failures.empty());
    RC_ASSERT(checks.compared >= 20);  // most instants find the slaves caught up
    RC_ASSERT(run.result.report.lost == 0);
  });
}

}  // namespace
}  // namespace mqlab::sim::replication_prop_test
