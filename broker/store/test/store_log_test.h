// StoreLogTest: a test fixture base that collects every log line the code
// under test writes and prints them only when the test failed, so a passing
// run stays quiet while a failing one shows its story. Tests ask whether a
// line was written with logged().
#pragma once

#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/log.h"

namespace mqlab::store {

class StoreLogTest : public ::testing::Test {
 protected:
  StoreLogTest() {
    set_log_sink([this](LogLevel level, std::string_view component, std::string_view message) {
      log_.push_back(std::string(log_level_name(level)) + " [" + std::string(component) + "] " + std::string(message));
    });
  }
  ~StoreLogTest() override { set_log_sink(nullptr); }

  // Derived fixtures that override TearDown call this one last.
  void TearDown() override {
    if (HasFailure()) {
      for (const std::string& line : log_) std::cerr << line << "\n";
    }
  }

  bool logged(std::string_view needle) const {
    for (const std::string& line : log_) {
      if (line.find(needle) != std::string::npos) return true;
    }
    return false;
  }
  // A line of that level ("WARN", "ERROR", ...) containing needle.
  bool logged(std::string_view level, std::string_view needle) const {
    for (const std::string& line : log_) {
      if (line.starts_with(level) && line.find(needle) != std::string::npos) return true;
    }
    return false;
  }

  std::vector<std::string> log_;
};

}  // namespace mqlab::store
