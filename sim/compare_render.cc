#include "sim/compare_render.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "broker/common/assert.h"

namespace mqlab::sim {
namespace {

// reports/render.py's exit status when an import it needs is missing.
constexpr int kRendererMissingPackage = 3;
// Ours, from the child, when exec itself failed.
constexpr int kExecFailed = 127;

[[noreturn]] void exec_renderer(const std::string& report_path) {
  const char* source = MQLAB_SOURCE_DIR;
  if (chdir(source) != 0) {
    std::fprintf(stderr, "mqsim: cannot enter the source tree %s: %s\n", source, std::strerror(errno));
    _exit(kExecFailed);
  }
  const char* old_path = std::getenv("PYTHONPATH");
  const std::string python_path = std::string(source) + (old_path && *old_path ? ":" + std::string(old_path) : "");
  setenv("PYTHONPATH", python_path.c_str(), 1);
  setenv("MPLBACKEND", "Agg", 1);  // no display needed, none asked for
  execl(kReportRendererPython, "python3", "-m", "reports.render", report_path.c_str(), static_cast<char*>(nullptr));
  std::fprintf(stderr, "mqsim: cannot run %s: %s\n", kReportRendererPython, std::strerror(errno));
  _exit(kExecFailed);
}

}  // namespace

Status write_report_folder_json(const std::string& dir, const std::string& json_text) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return Status::IoError("cannot create " + dir + ": " + error.message());
  const std::string path = dir + "/report.json";
  std::ofstream out(path);
  out << json_text << "\n";
  out.close();
  if (!out) return Status::IoError("cannot write " + path);
  return Status::Ok();
}

Status render_report_folder(const std::string& dir) {
  std::error_code error;
  const std::string report = std::filesystem::absolute(dir + "/report.json", error).string();
  if (error) return Status::IoError("cannot resolve " + dir + "/report.json: " + error.message());
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return Status::Unavailable(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) exec_renderer(report);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    MQ_ASSERT_MSG(errno == EINTR, std::string("waitpid: ") + std::strerror(errno));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  const std::string how = "python3 -m reports.render " + report;
  if (WIFEXITED(status) && WEXITSTATUS(status) == kRendererMissingPackage) {
    return Status::Unavailable(how + ": python3-matplotlib is missing; install it with "
                               "`apt-get install python3-matplotlib` (or scripts/setup-deps.sh)");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == kExecFailed) {
    return Status::Unavailable(how + ": could not start " + std::string(kReportRendererPython) +
                               "; install Debian's python3 and python3-matplotlib");
  }
  return Status::Aborted(how + " failed (" +
                          (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                             : "signal " + std::to_string(WTERMSIG(status))) +
                          "); report.json is complete");
}

}  // namespace mqlab::sim
