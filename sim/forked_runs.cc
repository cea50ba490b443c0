#include "sim/forked_runs.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>

#include "broker/common/assert.h"
#include "sim/seed_run.h"

// gcc's profiling runtime, linked into make pgo's instrumented build
// (CMakeLists.txt) and absent (null) from every other: zeroes this
// process's counts; writes them, merged into the profile. Weak, and called
// in every build, so that a function's control flow is the same with and
// without the profile (gcc refuses a profile that does not match it).
extern "C" void __gcov_reset(void) __attribute__((weak));
extern "C" void __gcov_dump(void) __attribute__((weak));

namespace mqlab::sim {
namespace {

constexpr int kChildWriteFailed = 3;

std::string errno_text() { return std::strerror(errno); }

Result<std::string> make_temp_dir() {
  const char* tmp = std::getenv("TMPDIR");
  const std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/mqsim-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (!mkdtemp(buffer.data())) return Status::IoError("mkdtemp " + pattern + ": " + errno_text());
  return std::string(buffer.data());
}

std::string task_file(const std::string& dir, size_t task) { return dir + "/run-" + std::to_string(task) + ".json"; }

// The child: one run, its report to file, and out through _exit so that no
// destructor or atexit handler of the parent's state runs twice.
[[noreturn]] void run_child(const Scenario& scenario, const std::string& scenario_path, const RunTask& task,
                            const std::string& file) {
  // A forked child starts with a copy of the parent's counts so far,
  // which are the parent's to write.
  if (__gcov_reset != nullptr) __gcov_reset();
  SeedRunOptions options;
  options.schedule = task.schedule;
  const SeedRun run = run_seed(scenario, task.seed, options);
  std::ofstream out(file);
  out << seed_run_to_json(run, scenario, scenario_path).dump() << "\n";
  out.close();
  // The runtime writes the counts at exit, which _exit skips: the
  // training's topology comparison (scripts/build-pgo.sh) would otherwise
  // have trained nothing but the parent.
  if (__gcov_dump != nullptr) __gcov_dump();
  _exit(out ? 0 : kChildWriteFailed);
}

Result<pid_t> spawn(const Scenario& scenario, const std::string& scenario_path, const RunTask& task,
                    const std::string& file) {
  // Whatever the parent has buffered would otherwise be printed by both.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return Status::Unavailable("fork: " + errno_text());
  if (pid == 0) run_child(task.scenario ? *task.scenario : scenario, scenario_path, task, file);
  return pid;
}

std::string describe_death(int status) {
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  }
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  return "wait status " + std::to_string(status);
}

TaskOutcome collect(int status, const std::string& file) {
  TaskOutcome outcome;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    std::ifstream in(file);
    try {
      outcome.run = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& error) {
      outcome.crashed = true;
      outcome.crash = std::string("unreadable run report: ") + error.what();
    }
  } else {
    outcome.crashed = true;
    outcome.crash = describe_death(status);
  }
  std::remove(file.c_str());
  if (!outcome.crashed) MQ_ASSERT(outcome.run.is_object());
  return outcome;
}

}  // namespace

Result<std::vector<TaskOutcome>> run_forked(const Scenario& scenario, const std::string& scenario_path,
                                            const std::vector<RunTask>& tasks, int jobs, const TaskDone& done) {
  MQ_ASSERT(jobs >= 1);
  MQ_ASSIGN_OR_RETURN(const std::string dir, make_temp_dir());
  std::vector<TaskOutcome> outcomes(tasks.size());
  std::map<pid_t, size_t> running;  // child -> task
  size_t next = 0;
  Status failure = Status::Ok();
  // After a failure to fork, start nothing more but reap what runs.
  while (!running.empty() || (failure.ok() && next < tasks.size())) {
    while (failure.ok() && next < tasks.size() && running.size() < static_cast<size_t>(jobs)) {
      Result<pid_t> pid = spawn(scenario, scenario_path, tasks[next], task_file(dir, next));
      if (!pid.ok()) {
        failure = pid.status();
        break;
      }
      running[*pid] = next++;
    }
    if (running.empty()) break;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      MQ_ASSERT_MSG(errno == EINTR, "waitpid: " + errno_text());  // ECHILD with children running is our bug
      continue;
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;  // not one of ours
    const size_t task = it->second;
    running.erase(it);
    outcomes[task] = collect(status, task_file(dir, task));
    if (done) done(task, outcomes[task]);
  }
  rmdir(dir.c_str());
  if (!failure.ok()) return failure;
  return outcomes;
}

}  // namespace mqlab::sim
