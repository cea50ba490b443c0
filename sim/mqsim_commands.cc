#include "sim/mqsim_commands.h"

#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "sim/compare.h"
#include "sim/compare_merge.h"
#include "sim/compare_progress.h"
#include "sim/compare_render.h"
#include "sim/history_check.h"
#include "sim/history_file.h"
#include "sim/real_run_plan.h"
#include "sim/run_report.h"
#include "sim/scenario.h"
#include "sim/seed_run.h"
#include "sim/shrink.h"
#include "sim/sweep.h"
#include "sim/sweep_merge.h"
#include "sim/sweep_report.h"

namespace mqlab::sim {
namespace {
namespace po = boost::program_options;

constexpr int kExitPassed = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

const char* const kUsage =
    "usage: mqsim run FILE [--cell CELL] [--seed N] [--json OUT] [--trace OUT] [--quiet]\n"
    "       mqsim replay FILE [--cell CELL] --seed N --trace OUT [--json OUT]\n"
    "       mqsim sweep FILE [--seeds A-B] [--jobs J] [--shard i/n] [--json OUT]\n"
    "       mqsim compare [FILE] [--seeds A-B] [--jobs J] [--shard i/n] [--out DIR] [--no-render]\n"
    "       mqsim merge OUT IN...\n"
    "       mqsim shrink FILE [--seed N] [--jobs J]\n"
    "       mqsim check HISTORY... [--scenario FILE [--seed N]] [--group G]... [--json OUT]\n"
    "       mqsim plan FILE [--seed N]\n"
    "  run     one seed (default: the scenario's first); the summary, a JSON report, the trace;\n"
    "          --cell topology/flush/fault runs that cell of a matrix file\n"
    "  replay  the same, insisting on a seed and a trace: a run reproduces event for event\n"
    "  sweep   many seeds (default: the scenario's seeds), J at a time in child processes;\n"
    "          --shard i/n runs every n-th seed from the i-th, for a job array; --json writes the aggregate\n"
    "  compare every cell of a matrix file (default scenarios/topology-matrix.yaml) over its seeds,\n"
    "          J at a time (default: every CPU), into a report folder (default out/compare-NAME):\n"
    "          report.json, summary.md, summary.csv, index.html; --shard i/n as for sweep\n"
    "  merge   combines sweep reports (the shards of one sweep) into OUT; given compare report.json\n"
    "          files (the shards of one compare), OUT is a report folder, rendered\n"
    "  shrink  reduces a failing seed's fault schedule to a minimal one that still fails, as YAML\n"
    "  check   judges a real run: merges the history files of mqadmin perf produce|consume --history\n"
    "          (and a driver's events) and prints the figures mqsim run prints; --scenario attributes\n"
    "          losses to its faults (those of --seed, default its first) and checks its expect: section;\n"
    "          --group limits the checked groups\n"
    "  plan    the scenario's topology, broker.conf keys, workload and the seed's faults as JSON, for\n"
    "          running it on real processes (tools/mqrealrun.py)\n"
    "exit status: 0 every run passed; 1 a run failed (a shrunk seed fails; a merge misses seeds;\n"
    "             a checked history lost an acknowledged message or missed an expectation);\n"
    "             2 bad arguments, a bad scenario file, reports that do not merge, a bad history file\n";

// The command's options parsed into vm, and its positional arguments.
// nullopt (after printing why) on a bad command line.
std::optional<std::vector<std::string>> parse_args(const std::vector<std::string>& args,
                                                   const po::options_description& options, po::variables_map& vm) {
  try {
    po::parsed_options parsed = po::command_line_parser(args).options(options).allow_unregistered().run();
    po::store(parsed, vm);
    po::notify(vm);
    std::vector<std::string> positional = po::collect_unrecognized(parsed.options, po::include_positional);
    for (const std::string& arg : positional) {
      if (arg.starts_with("--")) throw po::unknown_option(arg);
    }
    return positional;
  } catch (const po::error& error) {
    std::cerr << "mqsim: " << error.what() << "\n" << kUsage;
    return std::nullopt;
  }
}

// One scenario FILE, loaded; nullopt (after printing why) otherwise. A
// matrix file is a family of scenarios: a seed of it means nothing.
std::optional<Scenario> load_one_scenario(const std::vector<std::string>& positional, bool allow_matrix) {
  if (positional.size() != 1) {
    std::cerr << "mqsim: expected one scenario FILE\n" << kUsage;
    return std::nullopt;
  }
  Result<Scenario> scenario = load_scenario(positional[0]);
  if (!scenario.ok()) {
    std::cerr << "mqsim: " << scenario.status().message() << "\n";
    return std::nullopt;
  }
  if (scenario->matrix && !allow_matrix) {
    std::cerr << "mqsim: " << positional[0] << " is a matrix (a family of scenarios); sweep or shrink one scenario file\n";
    return std::nullopt;
  }
  return std::move(scenario).value();
}

bool write_json(const std::string& path, const nlohmann::json& document) {
  std::ofstream out(path);
  out << document.dump(2) << "\n";
  out.close();
  if (!out) std::cerr << "mqsim: cannot write " << path << "\n";
  return static_cast<bool>(out);
}

void print_run(const RunResult& result, const SeedRun& run, const std::string& path, bool quiet) {
  if (quiet) {
    std::cout << (result.passed ? "PASSED " : "FAILED ") << result.scenario << " seed " << result.seed << "\n";
    return;
  }
  std::cout << result.parameters << "\n";
  print_run_summary(std::cout, result, path);
  const double virtual_s = static_cast<double>(result.virtual_end) / kNanosPerSecond;
  std::printf("simulated %.1f s in %.2f s of wall time (%.0fx real time, %llu events, %llu message lines)\n", virtual_s,
              run.wall_seconds, virtual_s / std::max(run.wall_seconds, 1e-9),
              static_cast<unsigned long long>(result.events_run), static_cast<unsigned long long>(run.history_lines));
}

int command_run(const std::vector<std::string>& args, bool replay) {
  po::options_description options("mqsim " + std::string(replay ? "replay" : "run"));
  uint64_t seed = 0;
  std::string json_path;
  std::string trace_path;
  std::string cell;
  options.add_options()("seed", po::value(&seed), "seed (default: the scenario's first)")(
      "cell", po::value(&cell), "run this cell (topology/flush/fault) of a matrix file")(
      "json", po::value(&json_path), "write the JSON report here")("trace", po::value(&trace_path),
                                                                    "write the trace here")(
      "quiet", "print only the verdict");
  po::variables_map vm;
  const std::optional<std::vector<std::string>> positional = parse_args(args, options, vm);
  if (!positional) return kExitUsage;
  if (replay && (!vm.count("seed") || trace_path.empty())) {
    std::cerr << "mqsim replay needs --seed N and --trace OUT\n";
    return kExitUsage;
  }
  std::optional<Scenario> scenario = load_one_scenario(*positional, /*allow_matrix=*/true);
  if (!scenario) return kExitUsage;
  const std::string& path = (*positional)[0];
  if (!cell.empty()) {
    if (!scenario->matrix) {
      std::cerr << "mqsim: --cell: " << path << " has no matrix: section\n";
      return kExitUsage;
    }
    Result<Scenario> concrete = matrix_cell(*scenario, cell);
    if (!concrete.ok()) {
      std::cerr << "mqsim: " << concrete.status().message() << "\n";
      return kExitUsage;
    }
    scenario = std::move(concrete).value();
  }
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
  SeedRunOptions run_options;
  run_options.trace = trace_path.empty() ? nullptr : &trace_file;
  const SeedRun run = run_seed(*scenario, seed, run_options);
  // A cell's replay command names the cell.
  print_run(run.result, run, cell.empty() ? path : path + " --cell " + cell, quiet);
  if (!json_path.empty() && !write_json(json_path, seed_run_to_json(run, *scenario, path))) return kExitUsage;
  return run.result.passed ? kExitPassed : kExitFailed;
}

int command_sweep(const std::vector<std::string>& args) {
  po::options_description options("mqsim sweep");
  std::string seeds_text, shard_text, json_path;
  int jobs = 1;
  options.add_options()("seeds", po::value(&seeds_text), "seeds A-B (default: the scenario's)")(
      "jobs", po::value(&jobs), "child processes at a time")("shard", po::value(&shard_text), "i/n: this shard")(
      "json", po::value(&json_path), "write the aggregate report here");
  po::variables_map vm;
  const std::optional<std::vector<std::string>> positional = parse_args(args, options, vm);
  if (!positional) return kExitUsage;
  const std::optional<Scenario> scenario = load_one_scenario(*positional, /*allow_matrix=*/false);
  if (!scenario) return kExitUsage;
  SweepOptions sweep;
  sweep.seeds = scenario->seeds;
  sweep.jobs = jobs;
  sweep.progress = isatty(STDOUT_FILENO) == 1;  // a live line for a person, never in a log file
  Result<SeedRange> seeds = seeds_text.empty() ? Result<SeedRange>(scenario->seeds) : parse_seed_range(seeds_text);
  Result<Shard> shard = shard_text.empty() ? Result<Shard>(Shard{}) : parse_shard(shard_text);
  for (const Status& status : {seeds.status(), shard.status()}) {
    if (!status.ok()) std::cerr << "mqsim: " << status.message() << "\n";
  }
  if (!seeds.ok() || !shard.ok()) return kExitUsage;
  if (jobs < 1) {
    std::cerr << "mqsim: --jobs must be at least 1\n";
    return kExitUsage;
  }
  sweep.seeds = *seeds;
  sweep.shard = *shard;
  std::cout << "mqsim " << MQLAB_VERSION << " sweep: " << scenario->name << ", seeds " << sweep.seeds.first << "-"
            << sweep.seeds.last << (shard_text.empty() ? "" : ", shard " + shard_text) << ": "
            << shard_seeds(sweep.seeds, sweep.shard).size() << " run(s), " << jobs << " at a time\n";
  Result<nlohmann::json> report = run_sweep(*scenario, (*positional)[0], sweep);
  if (!report.ok()) {
    std::cerr << "mqsim: " << report.status().message() << "\n";
    return kExitUsage;
  }
  print_sweep_summary(std::cout, *report);
  if (!json_path.empty() && !write_json(json_path, *report)) return kExitUsage;
  return sweep_passed(*report) ? kExitPassed : kExitFailed;
}

// The default matrix: scenarios/topology-matrix.yaml, from the working
// directory when it has one (replay commands then stay short), else from the
// source tree.
std::string default_matrix_path() {
  const std::string relative = "scenarios/topology-matrix.yaml";
  if (std::filesystem::exists(relative)) return relative;
  return std::string(MQLAB_SOURCE_DIR) + "/" + relative;
}

std::optional<std::string> read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// report.json into dir, rendered unless told not to; prints where it went.
// false (after printing why) when either failed.
bool write_report_folder(const std::string& dir, const nlohmann::json& report, bool render) {
  if (Status written = write_report_folder_json(dir, report.dump(2)); !written.ok()) {
    std::cerr << "mqsim: " << written.message() << "\n";
    return false;
  }
  if (!render) {
    std::cout << "report: " << dir << "/report.json\n";
    return true;
  }
  if (Status rendered = render_report_folder(dir); !rendered.ok()) {
    std::cerr << "mqsim: rendering the report failed: " << rendered.message() << "\n";
    return false;
  }
  std::cout << "report: " << dir << "/index.html (and summary.md, summary.csv, report.json, plots)\n";
  return true;
}

struct CompareArgs {
  std::string path;
  std::string out_dir;
  CompareOptions options;
  bool render = true;
};

// nullopt (after printing why) on a bad command line.
std::optional<CompareArgs> parse_compare_args(const std::vector<std::string>& args, Scenario& scenario) {
  po::options_description options("mqsim compare");
  std::string seeds_text, shard_text;
  CompareArgs parsed;
  parsed.options.jobs = std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  options.add_options()("seeds", po::value(&seeds_text), "seeds A-B (default: the matrix's)")(
      "jobs", po::value(&parsed.options.jobs), "child processes at a time (default: every CPU)")(
      "shard", po::value(&shard_text), "i/n: this shard")("out", po::value(&parsed.out_dir), "the report folder")(
      "no-render", "write report.json only");
  po::variables_map vm;
  std::optional<std::vector<std::string>> positional = parse_args(args, options, vm);
  if (!positional) return std::nullopt;
  if (positional->empty()) positional->push_back(default_matrix_path());
  std::optional<Scenario> loaded = load_one_scenario(*positional, /*allow_matrix=*/true);
  if (!loaded) return std::nullopt;
  parsed.path = (*positional)[0];
  if (!loaded->matrix) {
    std::cerr << "mqsim: " << parsed.path << " has no matrix: section; compare runs a matrix (see scenarios/README.md)\n";
    return std::nullopt;
  }
  Result<Shard> shard = shard_text.empty() ? Result<Shard>(Shard{}) : parse_shard(shard_text);
  Result<SeedRange> seeds = seeds_text.empty() ? Result<SeedRange>(SeedRange{}) : parse_seed_range(seeds_text);
  for (const Status& status : {seeds.status(), shard.status()}) {
    if (!status.ok()) std::cerr << "mqsim: " << status.message() << "\n";
  }
  if (!seeds.ok() || !shard.ok()) return std::nullopt;
  if (parsed.options.jobs < 1) {
    std::cerr << "mqsim: --jobs must be at least 1\n";
    return std::nullopt;
  }
  if (!seeds_text.empty()) parsed.options.seeds = *seeds;
  parsed.options.shard = *shard;
  parsed.render = vm.count("no-render") == 0 && shard->count == 1;  // a shard is merged, then rendered
  if (parsed.out_dir.empty()) {
    parsed.out_dir = "out/compare-" + loaded->name +
                     (shard->count > 1 ? "-shard" + std::to_string(shard->index) + "of" + std::to_string(shard->count) : "");
  }
  scenario = std::move(loaded).value();
  return parsed;
}

int command_compare(const std::vector<std::string>& args) {
  Scenario scenario;
  const std::optional<CompareArgs> parsed = parse_compare_args(args, scenario);
  if (!parsed) return kExitUsage;
  const std::optional<std::string> text = read_whole_file(parsed->path);
  if (!text) {
    std::cerr << "mqsim: cannot read " << parsed->path << "\n";
    return kExitUsage;
  }
  const SeedRange seeds = compare_seeds(scenario, parsed->options);
  const size_t cells = compare_cells(scenario).size();
  const size_t runs = compare_runs(cells, seeds, parsed->options.shard).size();
  const Shard& shard = parsed->options.shard;
  std::cout << "mqsim " << MQLAB_VERSION << " compare: " << scenario.name << ", " << cells << " cells x seeds "
            << seeds.first << "-" << seeds.last
            << (shard.count > 1 ? ", shard " + std::to_string(shard.index) + "/" + std::to_string(shard.count) : "")
            << ": " << runs << " run(s), " << parsed->options.jobs << " at a time, into " << parsed->out_dir << "\n";
  std::cout.flush();
  CompareProgress progress(runs, isatty(STDERR_FILENO) == 1);
  Result<nlohmann::json> report = run_compare(scenario, parsed->path, *text, parsed->options,
                                              [&progress](const TaskOutcome& outcome) { progress.finished(outcome); });
  progress.erase();
  if (!report.ok()) {
    std::cerr << "mqsim: " << report.status().message() << "\n";
    return kExitUsage;
  }
  print_compare_summary(std::cout, *report);
  std::printf("%zu runs in %.1f s of wall time\n", runs, report->at("wall_seconds").get<double>());
  if (!write_report_folder(parsed->out_dir, *report, parsed->render)) return kExitUsage;
  if (shard.count > 1) std::cout << "merge the shards' report.json files with: mqsim merge OUT_DIR IN...\n";
  return compare_passed(*report) ? kExitPassed : kExitFailed;
}

int merge_compare(const std::string& out_dir, const std::vector<std::pair<std::string, nlohmann::json>>& inputs) {
  Result<nlohmann::json> merged = merge_compare_reports(inputs);
  if (!merged.ok()) {
    std::cerr << "mqsim merge: " << merged.status().message() << "\n";
    return kExitUsage;
  }
  print_compare_summary(std::cout, *merged);
  if (!write_report_folder(out_dir, *merged, /*render=*/true)) return kExitUsage;
  return compare_passed(*merged) ? kExitPassed : kExitFailed;
}

int command_merge(const std::vector<std::string>& args) {
  if (args.size() < 2 || args[0].starts_with("-")) {
    std::cerr << "mqsim merge: expected OUT and one or more IN reports\n" << kUsage;
    return kExitUsage;
  }
  std::vector<std::pair<std::string, nlohmann::json>> inputs;
  for (size_t i = 1; i < args.size(); ++i) {
    std::ifstream in(args[i]);
    if (!in) {
      std::cerr << "mqsim merge: cannot read " << args[i] << "\n";
      return kExitUsage;
    }
    try {
      inputs.emplace_back(args[i], nlohmann::json::parse(in));
    } catch (const nlohmann::json::exception& error) {
      std::cerr << "mqsim merge: " << args[i] << ": not JSON: " << error.what() << "\n";
      return kExitUsage;
    }
  }
  if (is_compare_report(inputs.front().second)) return merge_compare(args[0], inputs);
  Result<nlohmann::json> merged = merge_sweep_reports(inputs);
  if (!merged.ok()) {
    std::cerr << "mqsim merge: " << merged.status().message() << "\n";
    return kExitUsage;
  }
  if (!write_json(args[0], *merged)) return kExitUsage;
  print_sweep_summary(std::cout, *merged);
  return sweep_passed(*merged) ? kExitPassed : kExitFailed;
}

void print_shrunk(const ShrinkResult& result, const std::string& path, uint64_t seed) {
  std::cout << "minimal: " << result.minimal.events.size() << " of " << result.original.events.size()
            << " faults still fail that way (" << result.runs << " runs)\n"
            << "# paste into the scenario's faults: list (" << path << " seed " << seed << ")\n"
            << fault_schedule_yaml(result.minimal);
  if (result.fails_as_fixed_list) {
    std::cout << (*result.fails_as_fixed_list
                      ? "# checked: as the file's faults: list, with its nemesis: section removed, seed " +
                            std::to_string(seed) + " fails too\n"
                      : "# note: as the file's faults: list without its nemesis: section seed " +
                            std::to_string(seed) +
                            " passes (the nemesis draw shifts later random streams); try other seeds\n");
  }
  std::cout << "replay the failing run with: " << replay_command(path, seed) << "\n";
}

int command_shrink(const std::vector<std::string>& args) {
  po::options_description options("mqsim shrink");
  uint64_t seed = 0;
  int jobs = 1;
  options.add_options()("seed", po::value(&seed), "the failing seed (default: the scenario's first)")(
      "jobs", po::value(&jobs), "candidate runs at a time");
  po::variables_map vm;
  const std::optional<std::vector<std::string>> positional = parse_args(args, options, vm);
  if (!positional) return kExitUsage;
  const std::optional<Scenario> scenario = load_one_scenario(*positional, /*allow_matrix=*/false);
  if (!scenario) return kExitUsage;
  if (jobs < 1) {
    std::cerr << "mqsim: --jobs must be at least 1\n";
    return kExitUsage;
  }
  const std::string& path = (*positional)[0];
  ShrinkOptions shrink;
  shrink.seed = vm.count("seed") ? seed : scenario->seeds.first;
  shrink.jobs = jobs;
  shrink.progress = &std::cout;
  std::cout << "mqsim " << MQLAB_VERSION << " shrink: " << scenario->name << ", seed " << shrink.seed << "\n";
  Result<ShrinkResult> result = shrink_schedule(*scenario, path, shrink);
  if (!result.ok()) {
    std::cerr << "mqsim: " << result.status().message() << "\n";
    return kExitUsage;
  }
  if (!result->failed) {
    std::cout << "seed " << shrink.seed << " passes: nothing to shrink\n";
    return kExitPassed;
  }
  print_shrunk(*result, path, shrink.seed);
  return kExitFailed;
}

int command_check(const std::vector<std::string>& args) {
  po::options_description options("mqsim check");
  std::string json_path, scenario_path;
  std::vector<std::string> groups;
  uint64_t seed = 0;
  options.add_options()("json", po::value(&json_path), "write the JSON report here")(
      "seed", po::value(&seed), "the seed whose faults the run injected (default: the scenario's first)")(
      "scenario", po::value(&scenario_path), "the scenario the run carried out")(
      "group", po::value(&groups)->composing(), "a consumer group that must receive everything (repeatable)");
  po::variables_map vm;
  const std::optional<std::vector<std::string>> positional = parse_args(args, options, vm);
  if (!positional) return kExitUsage;
  if (positional->empty()) {
    std::cerr << "mqsim check: expected one or more HISTORY files\n" << kUsage;
    return kExitUsage;
  }
  std::optional<Scenario> scenario;
  if (!scenario_path.empty()) {
    scenario = load_one_scenario({scenario_path}, /*allow_matrix=*/false);
    if (!scenario) return kExitUsage;
  }
  Result<LoadedHistory> loaded = load_history_files(*positional);
  if (!loaded.ok()) {
    std::cerr << "mqsim check: " << loaded.status().message() << "\n";
    return kExitUsage;
  }
  for (const std::string& group : groups) {
    if (std::find(loaded->consumer_groups.begin(), loaded->consumer_groups.end(), group) == loaded->consumer_groups.end()) {
      std::cerr << "mqsim check: --group " << group << ": no receipt of that group in the history (groups:";
      for (const std::string& g : loaded->consumer_groups) std::cerr << " " << g;
      std::cerr << "); every acknowledged message would count as lost\n";
      return kExitUsage;
    }
  }
  HistoryCheckOptions check;
  check.consumer_groups = groups;
  check.scenario = scenario ? &*scenario : nullptr;
  if (scenario) check.schedule = seed_schedule(*scenario, vm.count("seed") ? seed : scenario->seeds.first);
  const RunResult result = check_loaded_history(*loaded, check);
  std::cout << "mqsim " << MQLAB_VERSION << " check\n";
  print_history_check(std::cout, result, *loaded);
  if (!json_path.empty() && !write_json(json_path, history_check_to_json(result, *loaded))) return kExitUsage;
  return result.passed ? kExitPassed : kExitFailed;
}

int command_plan(const std::vector<std::string>& args) {
  po::options_description options("mqsim plan");
  uint64_t seed = 0;
  options.add_options()("seed", po::value(&seed), "seed (default: the scenario's first)");
  po::variables_map vm;
  const std::optional<std::vector<std::string>> positional = parse_args(args, options, vm);
  if (!positional) return kExitUsage;
  const std::optional<Scenario> scenario = load_one_scenario(*positional, /*allow_matrix=*/false);
  if (!scenario) return kExitUsage;
  if (!vm.count("seed")) seed = scenario->seeds.first;
  std::cout << real_run_plan(*scenario, seed, seed_schedule(*scenario, seed)).dump(2) << "\n";
  return kExitPassed;
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
  if (command == "sweep") return command_sweep(args);
  if (command == "compare") return command_compare(args);
  if (command == "merge") return command_merge(args);
  if (command == "shrink") return command_shrink(args);
  if (command == "check") return command_check(args);
  if (command == "plan") return command_plan(args);
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return kExitPassed;
  }
  std::cerr << "mqsim: unknown command '" << command << "'\n" << kUsage;
  return kExitUsage;
}

}  // namespace mqlab::sim
