// ConsoleLog: the log line of the real programs (mqbroker, mqnamesrv), on
// stderr with the wall-clock time, as RocketMQ's broker.log reads:
//   2024-05-01 12:00:00,123 INFO  [broker] broker broker-a (ASYNC_MASTER) serving on 127.0.0.1:10911
// The time comes from the Env's clock (the real one in the programs), so
// nothing here reads a clock of its own. Local time, as RocketMQ's logback
// pattern prints it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "broker/common/log.h"
#include "broker/env/env.h"

namespace mqlab::config {

// One line, without the trailing newline.
std::string format_log_line(int64_t wall_ms, LogLevel level, std::string_view component, std::string_view message);

// A sink for set_log_sink() that writes format_log_line() lines to out and
// flushes each (a crashed broker's last words must reach the file).
// Requires: clock and out outlive the sink.
LogSink console_log_sink(env::Clock& clock, std::FILE* out);

}  // namespace mqlab::config
