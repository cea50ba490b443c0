// SubscriptionGroupManager: RocketMQ's defaults, auto-creation on and off,
// validation, and the subscriptionGroup.json shape and round trip. Runs on
// MetaTestEnv.
#include "broker/meta/subscription_group.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "broker/common/log.h"
#include "broker/meta/test/meta_table_test.h"
#include "broker/meta/test/meta_test_env.h"

namespace mqlab::meta::subscription_group_test {
namespace {

using testenv::MetaTestEnv;
using testenv::PowerLoss;

constexpr char kConfigDir[] = "/store/config";
constexpr char kGroupsPath[] = "/store/config/subscriptionGroup.json";

class SubscriptionGroupTest : public testenv::MetaTableTest {};

TEST_F(SubscriptionGroupTest, DefaultsAreRocketMqs) {
  SubscriptionGroupConfig config;
  EXPECT_TRUE(config.consumeEnable);
  EXPECT_TRUE(config.consumeFromMinEnable);
  EXPECT_TRUE(config.consumeBroadcastEnable);
  EXPECT_EQ(config.retryQueueNums, 1);
  EXPECT_EQ(config.retryMaxTimes, 16);
  EXPECT_EQ(config.brokerId, 0);
  EXPECT_EQ(config.whichBrokerWhenConsumeSlowly, 1);
  EXPECT_TRUE(config.notifyConsumerIdsChangedEnable);
}

TEST_F(SubscriptionGroupTest, FindOrCreateAutoCreatesWhenEnabled) {
  SubscriptionGroupManager groups(env_, kConfigDir);
  EXPECT_EQ(groups.find("G"), nullptr);
  env_.manual_clock().set_wall_ms(5'000);
  Result<SubscriptionGroupConfig> created = groups.find_or_create("G", record());
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(created->groupName, "G");
  EXPECT_EQ(created->retryMaxTimes, 16);
  EXPECT_NE(groups.find("G"), nullptr);
  EXPECT_EQ(groups.data_version(), (DataVersion{5'000, 1}));
  EXPECT_TRUE(groups.find_or_create("G").ok());  // found: no change
  EXPECT_EQ(groups.data_version().counter, 1);
  Result<SubscriptionGroupConfig> bad = groups.find_or_create("bad group");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("group name 'bad group' has ' ' at index 3"), std::string::npos);
  expect_all_persisted();
}

TEST_F(SubscriptionGroupTest, FindOrCreateRefusesWhenDisabledExceptSystemGroups) {
  SubscriptionGroupManagerOptions options;
  options.autoCreateSubscriptionGroup = false;
  SubscriptionGroupManager groups(env_, kConfigDir, options);
  Result<SubscriptionGroupConfig> missing = groups.find_or_create("G");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("autoCreateSubscriptionGroup is false"), std::string::npos);
  EXPECT_TRUE(groups.find_or_create("CID_RMQ_SYS_TRANS").ok());
  SubscriptionGroupConfig explicit_group;
  explicit_group.groupName = "G";
  EXPECT_TRUE(groups.create_or_update(explicit_group).ok());
  EXPECT_TRUE(groups.find_or_create("G").ok());
}

TEST_F(SubscriptionGroupTest, CreateOrUpdateValidates) {
  SubscriptionGroupManager groups(env_, kConfigDir);
  SubscriptionGroupConfig config;
  config.groupName = "G";
  config.retryQueueNums = -1;
  Result<SubscriptionGroupConfig> bad = groups.create_or_update(config);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("group G: retryQueueNums -1 is outside [0, 1024]"), std::string::npos)
      << bad.status().message();
  config.retryQueueNums = 0;  // retries off: allowed
  config.retryMaxTimes = -3;
  bad = groups.create_or_update(config);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("retryMaxTimes -3 is negative"), std::string::npos);
  config.retryMaxTimes = 3;
  config.brokerId = -1;
  EXPECT_FALSE(groups.create_or_update(config).ok());
  config.brokerId = 1;
  config.groupName = std::string(256, 'g');
  EXPECT_FALSE(groups.create_or_update(config).ok());
  EXPECT_TRUE(groups.all().empty());
  config.groupName = std::string(255, 'g');
  EXPECT_TRUE(groups.create_or_update(config).ok());
}

TEST_F(SubscriptionGroupTest, RoundTripAndFileShape) {
  SubscriptionGroupConfig custom;
  custom.groupName = "Custom";
  custom.consumeEnable = false;
  custom.consumeBroadcastEnable = false;
  custom.retryQueueNums = 2;
  custom.retryMaxTimes = 3;
  custom.brokerId = 1;
  custom.whichBrokerWhenConsumeSlowly = 2;
  custom.notifyConsumerIdsChangedEnable = false;
  {
    SubscriptionGroupManager groups(env_, kConfigDir);
    ASSERT_TRUE(groups.load().ok());
    ASSERT_TRUE(groups.find_or_create("Plain", record()).ok());
    ASSERT_TRUE(groups.create_or_update(custom, record()).ok());
    ASSERT_TRUE(groups.find_or_create("Gone", record()).ok());
    ASSERT_TRUE(groups.delete_group("Gone", record()).ok());
    EXPECT_EQ(groups.delete_group("Gone").code(), StatusCode::kNotFound);
    expect_all_persisted();
    EXPECT_EQ(env_.mem().read_file(kGroupsPath), groups.encode());
  }
  env_.mem().crash(PowerLoss::kLoseUnsynced);
  const nlohmann::json json = nlohmann::json::parse(env_.mem().read_file(kGroupsPath).value_or("null"));
  EXPECT_EQ(json["subscriptionGroupTable"]["Plain"], nlohmann::json::parse(R"({
      "brokerId": 0, "consumeBroadcastEnable": true, "consumeEnable": true, "consumeFromMinEnable": true,
      "groupName": "Plain", "notifyConsumerIdsChangedEnable": true, "retryMaxTimes": 16,
      "retryQueueNums": 1, "whichBrokerWhenConsumeSlowly": 1})"));
  EXPECT_EQ(json["dataVersion"]["counter"], 4);

  SubscriptionGroupManager loaded(env_, kConfigDir);
  ASSERT_TRUE(loaded.load().ok());
  EXPECT_EQ(loaded.all().size(), 2u);
  EXPECT_EQ(*loaded.find("Custom"), custom);
  EXPECT_EQ(loaded.find("Gone"), nullptr);
  EXPECT_EQ(loaded.data_version().counter, 4);
}

TEST_F(SubscriptionGroupTest, LoadsRocketMqFileAndRejectsBadEntries) {
  ASSERT_TRUE(env_.mem().mkdirs(kConfigDir).ok());
  env_.mem().write_file(kGroupsPath,
                        "{\n\t\"dataVersion\":{\"counter\":2,\"timestamp\":1690000000000},\n"
                        "\t\"subscriptionGroupTable\":{\n\t\t\"SELF_TEST_C_GROUP\":{\"brokerId\":0,"
                        "\"consumeBroadcastEnable\":true,\"consumeEnable\":true,\"consumeFromMinEnable\":true,"
                        "\"groupName\":\"SELF_TEST_C_GROUP\",\"notifyConsumerIdsChangedEnable\":true,"
                        "\"retryMaxTimes\":16,\"retryQueueNums\":1,\"whichBrokerWhenConsumeSlowly\":1,"
                        "\"groupRetryPolicy\":{\"type\":\"CUSTOMIZED\"}}\n\t}\n}");
  SubscriptionGroupManager groups(env_, kConfigDir);
  ASSERT_TRUE(groups.load().ok());
  ASSERT_NE(groups.find("SELF_TEST_C_GROUP"), nullptr);
  EXPECT_EQ(groups.data_version().counter, 2);

  env_.mem().write_file(kGroupsPath, R"({"subscriptionGroupTable":{"G":{"retryQueueNums":-1}}})");
  SubscriptionGroupManager bad(env_, kConfigDir);
  Result<LoadSource> source = bad.load();
  ASSERT_FALSE(source.ok());
  EXPECT_NE(source.status().message().find("\"G\": retryQueueNums -1 is negative"), std::string::npos)
      << source.status().message();
  env_.mem().write_file(kGroupsPath, R"({"subscriptionGroupTable":{"G":{"consumeEnable":"yes"}}})");
  SubscriptionGroupManager typed(env_, kConfigDir);
  source = typed.load();
  ASSERT_FALSE(source.ok());
  EXPECT_NE(source.status().message().find("\"consumeEnable\": expected a boolean, found string"), std::string::npos)
      << source.status().message();
}

}  // namespace
}  // namespace mqlab::meta::subscription_group_test
