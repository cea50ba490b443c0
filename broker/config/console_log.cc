#include "broker/config/console_log.h"

#include <ctime>

#include "broker/common/assert.h"

namespace mqlab::config {

std::string format_log_line(int64_t wall_ms, LogLevel level, std::string_view component, std::string_view message) {
  MQ_ASSERT(wall_ms >= 0);
  const std::time_t seconds = static_cast<std::time_t>(wall_ms / 1000);
  std::tm local{};
  localtime_r(&seconds, &local);
  char stamp[32];
  const size_t length = std::strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &local);
  MQ_ASSERT(length > 0);
  char millis[8];
  std::snprintf(millis, sizeof(millis), ",%03d", static_cast<int>(wall_ms % 1000));
  std::string level_name(log_level_name(level));
  level_name.resize(5, ' ');  // INFO and WARN line up with ERROR
  std::string line;
  line.reserve(length + 16 + component.size() + message.size());
  line.append(stamp, length).append(millis).append(" ").append(level_name).append(" [");
  line.append(component).append("] ").append(message);
  return line;
}

LogSink console_log_sink(env::Clock& clock, std::FILE* out) {
  MQ_ASSERT(out != nullptr);
  return [&clock, out](LogLevel level, std::string_view component, std::string_view message) {
    const std::string line = format_log_line(clock.wall_ms(), level, component, message);
    std::fprintf(out, "%s\n", line.c_str());
    std::fflush(out);
  };
}

}  // namespace mqlab::config
