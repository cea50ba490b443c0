#include "broker/config/namesrv_startup.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace mqlab::config::namesrv_startup_test {
namespace {

TEST(NamesrvStartup, DefaultsAreRocketMQs) {
  Result<LoadedNamesrvConfig> loaded = load_namesrv_config("", "namesrv.conf");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ(loaded->config.namesrv.listenAddress, "0.0.0.0:9876");
  EXPECT_EQ(loaded->config.http_port(), 9878);
  EXPECT_EQ(loaded->config.namesrv.brokerChannelExpiredTime, 120'000);
}

TEST(NamesrvStartup, EveryKeyParsesAndPrintsBack) {
  const std::string text =
      "listenPort=19876\nhttpPort=19000\nscanNotActiveBrokerInterval=2000\nscanNotActiveBrokerFirstDelay=1000\n"
      "brokerChannelExpiredTime=30000\norderMessageEnable=true\n";
  Result<LoadedNamesrvConfig> loaded = load_namesrv_config(text, "namesrv.conf");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_TRUE(loaded->warnings.empty());
  EXPECT_EQ(loaded->config.namesrv.listenAddress, "0.0.0.0:19876");
  EXPECT_EQ(loaded->config.http_port(), 19000);
  EXPECT_EQ(loaded->config.namesrv.scanNotActiveBrokerInterval, 2000);
  EXPECT_EQ(loaded->config.namesrv.scanNotActiveBrokerFirstDelay, 1000);
  EXPECT_EQ(loaded->config.namesrv.brokerChannelExpiredTime, 30000);
  EXPECT_TRUE(loaded->config.namesrv.orderMessageEnable);
  // Every key is in the text above, in print order: -p prints exactly it.
  EXPECT_EQ(namesrv_config_keys().size(), 6u);
  std::istringstream given(text);
  std::vector<std::string> sorted;
  for (std::string line; std::getline(given, line);) sorted.push_back(line);
  std::sort(sorted.begin(), sorted.end());
  std::string expected;
  for (const std::string& line : sorted) expected += line + "\n";
  EXPECT_EQ(print_namesrv_config(loaded->config), expected);
}

TEST(NamesrvStartup, UnknownKeysWarnAndBadValuesFailNamingKeyValueAndLine) {
  Result<LoadedNamesrvConfig> loaded = load_namesrv_config("rocketmqHome=/opt/rocketmq\nlistenPort=9877\n", "n.conf");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  ASSERT_EQ(loaded->warnings.size(), 1u);
  EXPECT_EQ(loaded->warnings[0], "n.conf:1: unknown key 'rocketmqHome' ignored");

  Result<LoadedNamesrvConfig> bad = load_namesrv_config("\nlistenPort=0\norderMessageEnable=1\n", "n.conf");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("n.conf:2: listenPort=0: must be an integer in 1..65535"), std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("n.conf:3: orderMessageEnable=1: must be true or false"), std::string::npos)
      << bad.status().message();
}

TEST(NamesrvStartup, TheExampleConfigParsesWithoutWarnings) {
  std::ifstream in(std::filesystem::path(MQLAB_SOURCE_DIR) / "conf" / "namesrv.conf");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  Result<LoadedNamesrvConfig> loaded = load_namesrv_config(text.str(), "conf/namesrv.conf");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_TRUE(loaded->warnings.empty()) << loaded->warnings.front();
  EXPECT_EQ(loaded->config.listenPort, 9876);  // the examples' brokers register there
}

}  // namespace
}  // namespace mqlab::config::namesrv_startup_test
