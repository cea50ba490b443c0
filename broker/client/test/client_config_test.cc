// ClientConfig's settable keys by name: what a scenario's client: section
// and mqadmin's --clientConfig set, with the same limits and messages.
#include "broker/client/client_config.h"

#include <gtest/gtest.h>

#include <string>

namespace mqlab::client::client_config_test {
namespace {

bool mentions(const Status& status, const std::string& part) {
  return status.message().find(part) != std::string::npos;
}

TEST(ClientConfigKeys, SetByNameWithinLimits) {
  ClientConfig config;
  EXPECT_TRUE(config.settable_keys_at_defaults());
  ASSERT_TRUE(config.set("pollNameServerInterval", "90000").ok());
  EXPECT_EQ(config.pollNameServerInterval, 90000);
  EXPECT_FALSE(config.settable_keys_at_defaults());
  ASSERT_TRUE(config.set("slaveReadOnUnreachableMaster", "false").ok());
  EXPECT_FALSE(config.slaveReadOnUnreachableMaster);
  ASSERT_TRUE(config.set("serializeType", "ROCKETMQ").ok());
  EXPECT_EQ(config.serializeType, remoting::SerializeType::ROCKETMQ);
  // Every interval key by its own name, each alone off its default.
  for (const ClientConfig::IntervalKey& key : ClientConfig::interval_keys()) {
    ClientConfig one;
    ASSERT_TRUE(one.set(key.name, "1234").ok()) << key.name;
    EXPECT_EQ(one.*key.field, 1234) << key.name;
    EXPECT_FALSE(one.settable_keys_at_defaults()) << key.name;
    EXPECT_TRUE(one.validate().ok() || one.namesrvAddr.empty());
  }
  EXPECT_EQ(ClientConfig::settable_keys().size(), ClientConfig::interval_keys().size() + 2);
}

TEST(ClientConfigKeys, BadValuesAndUnknownKeysAreRefusedAndChangeNothing) {
  ClientConfig config;
  EXPECT_TRUE(mentions(config.set("rebalanceInterval", "0"), "rebalanceInterval='0': expected milliseconds in [1, 86400000]"));
  EXPECT_TRUE(mentions(config.set("rebalanceInterval", "86400001"), "expected milliseconds"));
  EXPECT_TRUE(mentions(config.set("rebalanceInterval", "10s"), "expected milliseconds"));
  EXPECT_TRUE(mentions(config.set("slaveReadOnUnreachableMaster", "yes"), "expected true or false"));
  EXPECT_TRUE(mentions(config.set("serializeType", "json"), "expected JSON or ROCKETMQ"));
  EXPECT_TRUE(mentions(config.set("namesrvAddr", "x:1"), "'namesrvAddr' is no ClientConfig key to set; expected one of: "
                                                          "pollNameServerInterval,"));
  EXPECT_TRUE(config.settable_keys_at_defaults());

  // set_all: every part or none.
  EXPECT_TRUE(mentions(config.set_all("pollNameServerInterval=5000;oops"), "'oops' is not key=value"));
  EXPECT_TRUE(mentions(config.set_all("pollNameServerInterval=5000;serializeType=XML"), "expected JSON or ROCKETMQ"));
  EXPECT_TRUE(config.settable_keys_at_defaults());
  ASSERT_TRUE(config.set_all(";pollNameServerInterval=5000;;slaveReadOnUnreachableMaster=false;").ok());
  EXPECT_EQ(config.pollNameServerInterval, 5000);
  EXPECT_FALSE(config.slaveReadOnUnreachableMaster);
}

}  // namespace
}  // namespace mqlab::client::client_config_test
