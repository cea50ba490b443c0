// Logging through a host-provided sink.
//
// Broker code never reads a clock to stamp a log line: the host (mqbroker,
// mqsim, a test) installs a sink that adds real or virtual time. The default
// sink writes warnings and errors to stderr. Not thread-safe by design: only
// the broker core's single thread logs.
#pragma once

#include <functional>
#include <sstream>
#include <string>
#include <string_view>

namespace mqlab {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

using LogSink = std::function<void(LogLevel level, std::string_view component, std::string_view message)>;

void set_log_sink(LogSink sink);
void set_log_level(LogLevel minimum);
bool log_enabled(LogLevel level);
void log_message(LogLevel level, std::string_view component, std::string_view message);
std::string_view log_level_name(LogLevel level);

}  // namespace mqlab

// MQ_LOG(kWarn, "recovery", "truncated " << bytes << " bytes at " << offset);
#define MQ_LOG(level, component, stream_expr)                                 \
  do {                                                                        \
    if (::mqlab::log_enabled(::mqlab::LogLevel::level)) {                     \
      std::ostringstream mq_log_stream_;                                      \
      mq_log_stream_ << stream_expr;                                          \
      ::mqlab::log_message(::mqlab::LogLevel::level, component, mq_log_stream_.str()); \
    }                                                                         \
  } while (0)
