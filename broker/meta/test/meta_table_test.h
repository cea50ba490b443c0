// MetaTableTest: the fixture the named metadata tables' tests share (topics,
// subscription groups): a MetaTestEnv whose /store exists and is durable,
// warnings muted (the tests provoke rejections on purpose), and a record of
// every persist's outcome so a test can insist they all succeeded.
#pragma once

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "broker/common/log.h"
#include "broker/common/status.h"
#include "broker/meta/config_file.h"
#include "broker/meta/test/meta_test_env.h"

namespace mqlab::meta::testenv {

class MetaTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.mem().mkdirs("/store").ok());
    env_.mem().sync_everything();
  }

  PersistCallback record() {
    return [this](Status status) { persisted_.push_back(std::move(status)); };
  }
  void expect_all_persisted() {
    env_.run_all();
    for (const Status& status : persisted_) EXPECT_TRUE(status.ok()) << status.to_string();
  }

  MetaTestEnv env_;
  LogCapture quiet_{LogLevel::kError};
  std::vector<Status> persisted_;
};

}  // namespace mqlab::meta::testenv
