#include "broker/config/console_log.h"

#include <gtest/gtest.h>

#include <regex>

namespace mqlab::config::console_log_test {
namespace {

TEST(ConsoleLog, ALineHasTheTimeToTheMillisecondTheLevelAndTheComponent) {
  const std::string line = format_log_line(1'714'564'800'123, LogLevel::kInfo, "broker", "boot success");
  EXPECT_TRUE(std::regex_match(line, std::regex(R"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,123 INFO  \[broker\] boot success)")))
      << line;
  const std::string error = format_log_line(7, LogLevel::kError, "store", "x");
  EXPECT_TRUE(std::regex_match(error, std::regex(R"(19\d\d-\d\d-\d\d \d\d:\d\d:\d\d,007 ERROR \[store\] x)"))) << error;
}

}  // namespace
}  // namespace mqlab::config::console_log_test
