#include "sim/mqsim_commands.h"

#include <sys/wait.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "broker/common/log.h"
#include "sim/run_report.h"
#include "sim/scenario.h"
#include "sim/sim_world.h"

namespace mqlab::sim {
namespace {
namespace po = boost::program_options;

constexpr int kExitPassed = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

const char* const kUsage =
    "usage: mqsim run FILE [--seed N] [--json OUT] [--trace OUT] [--quiet]\n"
    "       mqsim replay FILE --seed N --trace OUT\n"
    "       mqsim sweep FILE --seeds A-B [--jobs J] [--shard i/n] [--json OUT]\n"
    "       mqsim merge OUT IN...\n"
    "       mqsim shrink FILE --seed N\n";

// The broker's own log lines go into the trace, stamped with virtual time.
void route_logs_to(std::ostream* out, const Scheduler** scheduler_slot) {
  set_log_level(out ? LogLevel::kInfo : LogLevel::kError);
  set_log_sink([out, scheduler_slot](LogLevel level, std::string_view component, std::string_view message) {
    if (!out) return;
    const Nanos now = *scheduler_slot ? (*scheduler_slot)->now() : 0;
    *out << format_virtual_time(now) << " log " << log_level_name(level) << " [" << component << "] " << message
         << "\n";
  });
}

Result<Scenario> load_or_report(const std::string& path) {
  Result<Scenario> scenario = load_scenario(path);
  if (!scenario.ok()) std::cerr << "mqsim: " << scenario.status().message() << "\n";
  return scenario;
}

RunResult run_once(const Scenario& scenario, uint64_t seed, std::ostream* trace) {
  const Scheduler* scheduler = nullptr;
  route_logs_to(trace, &scheduler);
  SimWorld world(scenario, seed, trace);
  scheduler = &world.scheduler();
  RunResult result = world.run();
  scheduler = nullptr;
  set_log_sink(nullptr);
  return result;
}

int command_run(const std::vector<std::string>& args, bool replay) {
  po::options_description options("mqsim " + std::string(replay ? "replay" : "run"));
  uint64_t seed = 0;
  std::string json_path;
  std::string trace_path;
  options.add_options()("seed", po::value(&seed), "seed (default: the scenario's first)")(
      "json", po::value(&json_path), "write the JSON report here")("trace", po::value(&trace_path),
                                                                    "write the event trace here")(
      "quiet", "print only the verdict");
  po::variables_map vm;
  std::vector<std::string> positional;
  try {
    po::parsed_options parsed = po::command_line_parser(args).options(options).allow_unregistered().run();
    po::store(parsed, vm);
    po::notify(vm);
    positional = po::collect_unrecognized(parsed.options, po::include_positional);
  } catch (const po::error& error) {
    std::cerr << "mqsim: " << error.what() << "\n" << kUsage;
    return kExitUsage;
  }
  if (positional.size() != 1) {
    std::cerr << "mqsim: expected one scenario FILE\n" << kUsage;
    return kExitUsage;
  }
  if (replay && (!vm.count("seed") || trace_path.empty())) {
    std::cerr << "mqsim replay needs --seed N and --trace OUT\n";
    return kExitUsage;
  }
  const std::string& path = positional[0];
  Result<Scenario> scenario = load_or_report(path);
  if (!scenario.ok()) return kExitUsage;
  if (!vm.count("seed")) seed = scenario->seeds.first;
  std::ofstream trace_file;
  if (!trace_path.empty()) {
    trace_file.open(trace_path);
    if (!trace_file) {
      std::cerr << "mqsim: cannot write " << trace_path << "\n";
      return kExitUsage;
    }
  }
  const bool quiet = vm.count("quiet") > 0;
  if (!quiet) {
    std::cout << "mqsim " << MQLAB_VERSION << ": " << scenario->name << ", seed " << seed << "\n"
              << "parameters (replay key " << scenario->hash << ":" << seed << ":" << MQLAB_VERSION << "):\n";
  }
  const auto wall_start = std::chrono::steady_clock::now();
  RunResult result = run_once(*scenario, seed, trace_path.empty() ? nullptr : &trace_file);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (!quiet) {
    std::cout << result.parameters << "\n";
    print_run_summary(std::cout, result, path);
    std::printf("simulated %.1f s in %.2f s of wall time (%.0fx real time, %llu events)\n",
                static_cast<double>(result.virtual_end) / kNanosPerSecond, wall_s,
                static_cast<double>(result.virtual_end) / kNanosPerSecond / std::max(wall_s, 1e-9),
                static_cast<unsigned long long>(result.events_run));
  } else {
    std::cout << (result.passed ? "PASSED " : "FAILED ") << scenario->name << " seed " << seed << "\n";
  }
  if (!json_path.empty()) {
    nlohmann::json report = run_to_json(result);
    report["scenario_file"] = path;
    report["wall_seconds"] = wall_s;
    std::ofstream out(json_path);
    out << report.dump(2) << "\n";
    if (!out) {
      std::cerr << "mqsim: cannot write " << json_path << "\n";
      return kExitUsage;
    }
  }
  return result.passed ? kExitPassed : kExitFailed;
}

}  // namespace

int mqsim_main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  const std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "run") return command_run(args, false);
  if (command == "replay") return command_run(args, true);
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return kExitPassed;
  }
  std::cerr << "mqsim: unknown command '" << command << "'\n" << kUsage;
  return kExitUsage;
}

}  // namespace mqlab::sim
