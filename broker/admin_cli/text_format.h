// Text helpers for mqadmin's output: RocketMQ's tools print fixed-width
// tables with Java's printf ("%-32s  %-4d  %-20d"), so we format with the
// same format strings and the columns line up the way an operator's eyes
// and scripts (awk '{print $4}') expect.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mqlab::admin_cli {

// printf into a std::string. The format is checked at compile time.
std::string strprintf(const char* format, ...) __attribute__((format(printf, 1, 2)));

// RocketMQ's UtilAll.timeMillisToHumanString2: "yyyy-MM-dd HH:mm:ss,SSS" in
// the local time zone, as the Java tools print store and born timestamps.
std::string human_time_ms(int64_t epoch_ms);

// A message body for a terminal: printable ASCII and valid UTF-8 stay as
// they are; any other byte becomes \xNN, so a binary body cannot garble the
// screen or break a line-oriented script.
std::string printable_body(std::span<const uint8_t> body);

// "a;b;c" -> {"a","b","c"}, RocketMQ's NameServer list: items are trimmed
// and empty ones (a trailing ';') skipped.
std::vector<std::string> split_namesrv_addresses(std::string_view text);

}  // namespace mqlab::admin_cli
