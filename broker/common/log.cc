#include "broker/common/log.h"

#include <cstdio>

namespace mqlab {
namespace {
struct LogState {
  LogLevel minimum = LogLevel::kWarn;
  LogSink sink;
};
LogState& state() {
  static LogState s;
  return s;
}
}  // namespace

std::string_view log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "DEBUG";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kWarn: return "WARN";
    case LogLevel::kError: return "ERROR";
  }
  return "?";
}

void set_log_sink(LogSink sink) { state().sink = std::move(sink); }
void set_log_level(LogLevel minimum) { state().minimum = minimum; }
bool log_enabled(LogLevel level) { return level >= state().minimum; }

void log_message(LogLevel level, std::string_view component, std::string_view message) {
  if (!log_enabled(level)) return;
  if (state().sink) {
    state().sink(level, component, message);
    return;
  }
  std::fprintf(stderr, "%.*s [%.*s] %.*s\n", static_cast<int>(log_level_name(level).size()),
               log_level_name(level).data(), static_cast<int>(component.size()), component.data(),
               static_cast<int>(message.size()), message.data());
}

}  // namespace mqlab
