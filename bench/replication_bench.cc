// replication_bench: what sync dual-write costs, measured in one simulated
// world. The same cluster (two broker groups, each a master and a slave on
// SATA SSDs, one client machine, the scenario default network), the same
// workload, no faults, run four ways: ASYNC_MASTER and SYNC_MASTER, each with
// ASYNC_FLUSH and SYNC_FLUSH. Two runs per way:
//   latency     a steady 2 x 500 msgs/s of 256 B: send round trip p50, p99;
//   saturation  --bursts bursts of --burst sends issued at once (that many
//               concurrent senders), 250 ms apart: the bursts' messages over
//               the sum of their issue-to-last-acknowledgement times is the
//               throughput in msgs/s of virtual time.
// A saturated link shows as throughput that no longer grows with the burst:
// the run at half the burst is printed too, to show it.
//
// Output: one line per figure, `name value unit [ratio=x.xx vs BASELINE]`;
// SYNC_MASTER is compared with ASYNC_MASTER of the same flush type, and
// SYNC_FLUSH with ASYNC_FLUSH of ASYNC_MASTER. Lines starting with '#'
// describe the runs. Everything is virtual time: the figures are the same on
// any machine and for any --jobs; wall time is printed only in '#' lines.
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <tuple>

#include "broker/common/assert.h"
#include "broker/common/log.h"
#include "sim/scenario.h"
#include "sim/sim_apps.h"
#include "sim/sim_world.h"

namespace {
using namespace mqlab;
using WallClock = std::chrono::steady_clock;

constexpr Nanos kBurstPeriod = 250 * kNanosPerMilli;

struct Way {
  std::string role;   // ASYNC_MASTER / SYNC_MASTER
  std::string flush;  // ASYNC_FLUSH / SYNC_FLUSH
  std::string name() const {
    return std::string(role == "SYNC_MASTER" ? "sync_master" : "async_master") + "_" +
           (flush == "SYNC_FLUSH" ? "sync_flush" : "async_flush");
  }
};

std::string scenario_yaml(const Way& way, const std::string& producers, Nanos load) {
  return "name: replication-bench-" + way.name() + "\nduration: " + std::to_string(load / kNanosPerMilli) +
         "ms\nliveness_bound: 60s\n"
         "topology: {preset: " +
         (way.role == "SYNC_MASTER" ? "sync_replication" : "async_replication") +
         ", disk: sata_ssd}\n"
         "broker: {flushDiskType: " +
         way.flush + ", brokerRole: " + way.role +
         "}\n"
         "workload:\n  producers: " +
         producers + "\n  consumer_groups:\n    - {name: cg, consumers: 1}\n";
}

struct Measured {
  sim::RunResult result;
  sim::History history;
};

Measured run(const std::string& yaml, uint64_t seed) {
  Result<sim::Scenario> scenario = sim::parse_scenario(yaml, "replication_bench");
  MQ_ASSERT_MSG(scenario.ok(), scenario.status().to_string());
  const auto wall_start = WallClock::now();
  sim::SimWorld world(*scenario, seed);
  sim::RunResult result = world.run();
  // The History spills to a file and cannot be copied: the world is done
  // with it, so it moves out.
  Measured measured{std::move(result), std::move(world.history())};
  const double wall_s = std::chrono::duration<double>(WallClock::now() - wall_start).count();
  const sim::CheckerReport& c = measured.result.report;
  std::printf("# %s seed %llu: %s, %lld sent, %lld acknowledged, %lld lost, %.1f s wall, %llu events, digest %s\n",
              scenario->name.c_str(), static_cast<unsigned long long>(seed),
              measured.result.passed ? "PASSED" : "FAILED", static_cast<long long>(c.sent),
              static_cast<long long>(c.acknowledged), static_cast<long long>(c.lost), wall_s,
              static_cast<unsigned long long>(measured.result.events_run), measured.result.trace_digest.c_str());
  return measured;
}

// Burst throughput: messages of every fully acknowledged burst over the sum
// of their issue-to-last-ack times.
double burst_throughput(const sim::History& history) {
  std::map<std::tuple<std::string, Nanos>, std::pair<int64_t, Nanos>> bursts;  // -> (messages, last ack)
  std::map<std::tuple<std::string, Nanos>, bool> complete;
  for (const sim::SendRecord& s : history.sends()) {
    const auto key = std::make_tuple(s.producer, s.invoked_at);
    auto& [messages, last] = bursts[key];
    ++messages;
    last = std::max(last, s.completed_at);
    auto [it, inserted] = complete.emplace(key, true);
    it->second = it->second && s.outcome == sim::SendOutcome::kOk;
  }
  int64_t messages = 0;
  Nanos busy = 0;
  for (const auto& [key, burst] : bursts) {
    if (!complete[key] || burst.first < 2) continue;
    messages += burst.first;
    busy += burst.second - std::get<1>(key);
  }
  return busy > 0 ? static_cast<double>(messages) * kNanosPerSecond / static_cast<double>(busy) : 0;
}

void print(const std::string& name, double value, const std::string& unit, double baseline = 0,
           const std::string& baseline_name = "") {
  if (baseline > 0) {
    std::printf("%s %.2f %s ratio=%.2f vs %s\n", name.c_str(), value, unit.c_str(), value / baseline,
                baseline_name.c_str());
  } else {
    std::printf("%s %.2f %s\n", name.c_str(), value, unit.c_str());
  }
  std::fflush(stdout);
}

struct Figures {
  double p50_ms = 0, p99_ms = 0, throughput = 0, throughput_half_burst = 0;
};

}  // namespace

int main(int argc, char** argv) {
  namespace po = boost::program_options;
  uint64_t seed = 1;
  int burst = 20000;
  int bursts = 4;
  int seconds_of_load = 20;
  po::options_description description("replication_bench: SYNC_MASTER vs ASYNC_MASTER in one simulated world");
  description.add_options()("help,h", "show this help")("seed", po::value(&seed)->default_value(1), "seed")(
      "burst", po::value(&burst)->default_value(20000), "concurrent sends per burst (saturation run)")(
      "bursts", po::value(&bursts)->default_value(4), "bursts per saturation run")(
      "seconds", po::value(&seconds_of_load)->default_value(20), "simulated seconds of the latency run");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, description), vm);
    po::notify(vm);
  } catch (const po::error& error) {
    std::cerr << "replication_bench: " << error.what() << "\n" << description;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << description;
    return 0;
  }
  if (burst < 2 || bursts < 1 || seconds_of_load < 5) {
    std::cerr << "replication_bench: --burst must be >= 2, --bursts >= 1 and --seconds >= 5\n";
    return 2;
  }
  set_log_level(LogLevel::kError);
  set_log_sink([](LogLevel, std::string_view, std::string_view) {});

  const std::vector<Way> ways = {{"ASYNC_MASTER", "ASYNC_FLUSH"},
                                 {"ASYNC_MASTER", "SYNC_FLUSH"},
                                 {"SYNC_MASTER", "ASYNC_FLUSH"},
                                 {"SYNC_MASTER", "SYNC_FLUSH"}};
  const std::string steady = "{count: 2, rate: 500/s, message_size: 256B}";
  auto bursts_of = [](int size) {
    return "{count: 1, arrival: bursts, burst_size: " + std::to_string(size) +
           ", burst_period: " + std::to_string(kBurstPeriod / kNanosPerMilli) + "ms, message_size: 256B}";
  };
  std::printf("# network: the scenario default (250 us + up to 50 us one way, 1 Gbit/s per link); "
              "disks: sata_ssd (700 us per cache flush); the simulator charges no CPU time\n");
  // Producers send from kProduceStartDelay on: the first burst then, one per period.
  const Nanos saturation_load = sim::kProduceStartDelay + (bursts - 1) * kBurstPeriod + kBurstPeriod / 2;
  std::map<std::string, Figures> figures;
  bool passed = true;
  for (const Way& way : ways) {
    const Measured latency = run(scenario_yaml(way, steady, seconds(seconds_of_load)), seed);
    const Measured saturated = run(scenario_yaml(way, bursts_of(burst), saturation_load), seed);
    const Measured half = run(scenario_yaml(way, bursts_of(burst / 2), saturation_load), seed);
    passed = passed && latency.result.passed && saturated.result.passed && half.result.passed;
    Figures& f = figures[way.name()];
    f.p50_ms = static_cast<double>(latency.result.report.send_latency.p50) / kNanosPerMilli;
    f.p99_ms = static_cast<double>(latency.result.report.send_latency.p99) / kNanosPerMilli;
    f.throughput = burst_throughput(saturated.history);
    f.throughput_half_burst = burst_throughput(half.history);
  }
  for (const Way& way : ways) {
    // SYNC_MASTER against ASYNC_MASTER of its flush type; SYNC_FLUSH against ASYNC_FLUSH.
    const std::string baseline = way.role == "SYNC_MASTER"
                                     ? Way{"ASYNC_MASTER", way.flush}.name()
                                     : (way.flush == "SYNC_FLUSH" ? Way{"ASYNC_MASTER", "ASYNC_FLUSH"}.name() : "");
    const Figures& f = figures[way.name()];
    const Figures* b = baseline.empty() ? nullptr : &figures[baseline];
    print(way.name() + "_send_p50", f.p50_ms, "ms", b ? b->p50_ms : 0, baseline);
    print(way.name() + "_send_p99", f.p99_ms, "ms", b ? b->p99_ms : 0, baseline);
    print(way.name() + "_throughput", f.throughput, "msgs/s", b ? b->throughput : 0, baseline);
    print(way.name() + "_throughput_half_burst", f.throughput_half_burst, "msgs/s", f.throughput,
          way.name() + "_throughput");
  }
  return passed ? 0 : 1;
}
