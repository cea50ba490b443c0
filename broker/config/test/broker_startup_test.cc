#include "broker/config/broker_startup.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace mqlab::config::broker_startup_test {
namespace {

const BrokerStartupEnvironment kEnvironment{"/home/mq", "/work/dir", ""};

Result<LoadedBrokerConfig> load(const std::string& text,
                                const std::optional<std::string>& namesrv_option = std::nullopt,
                                const BrokerStartupEnvironment& environment = kEnvironment) {
  return load_broker_config(text, "broker.conf", environment, namesrv_option);
}

std::map<std::string, std::string> printed(const BrokerStartupConfig& config) {
  std::map<std::string, std::string> values;
  std::istringstream lines(print_broker_config(config));
  for (std::string line; std::getline(lines, line);) {
    const size_t eq = line.find('=');
    EXPECT_NE(eq, std::string::npos) << line;
    EXPECT_TRUE(values.emplace(line.substr(0, eq), line.substr(eq + 1)).second) << "printed twice: " << line;
  }
  return values;
}

// A valid value, other than the default, for every key broker.conf may hold
// (a SLAVE with its own ports and store). A key added to BrokerConfig or
// MessageStoreConfig without a sample here fails EveryKeyParses.
const std::map<std::string, std::string>& samples() {
  static const std::map<std::string, std::string> values = {
      {"brokerClusterName", "ClusterX"},
      {"brokerName", "broker-z"},
      {"brokerId", "2"},
      {"brokerIP1", "10.0.0.7"},
      {"brokerIP2", "10.0.1.7"},
      {"listenPort", "20911"},
      {"haListenPort", "20919"},
      {"httpPort", "20918"},
      {"namesrvAddr", "10.0.0.1:9876;10.0.0.2:9876"},
      {"autoCreateTopicEnable", "false"},
      {"defaultTopicQueueNums", "4"},
      {"autoCreateSubscriptionGroup", "false"},
      {"brokerPermission", "4"},
      {"registerNameServerPeriod", "15000"},
      {"registerBrokerTimeoutMills", "3000"},
      {"flushConsumerOffsetInterval", "2000"},
      {"longPollingEnable", "false"},
      {"shortPollingTimeMills", "500"},
      {"transferMsgByHeap", "true"},
      {"zeroCopyMinRegionBytes", "0"},
      {"serverChannelMaxIdleTimeSeconds", "60"},
      {"frameMaxLength", "8388608"},
      {"serverMaxConnections", "500"},
      {"serverChannelMaxPendingOutputBytes", "8388608"},
      {"serverFrameReadTimeoutMillis", "5000"},
      {"slaveReadEnable", "true"},
      {"offsetCheckInSlave", "true"},
      {"storePathRootDir", "/data/mq/store"},
      {"storePathCommitLog", "/data/mq/commitlog"},
      {"storePathConsumeQueue", "/data/mq/store/consumequeue"},
      {"storePathIndex", "/data/mq/store/index"},
      {"storeCheckpoint", "/data/mq/store/checkpoint"},
      {"abortFile", "/data/mq/store/abort"},
      {"mappedFileSizeCommitLog", "67108864"},
      {"mappedFileSizeConsumeQueue", "600000"},
      {"flushIntervalConsumeQueue", "2000"},
      {"flushIntervalCommitLog", "200"},
      {"maxMessageSize", "1048576"},
      {"checkCRCOnRecover", "false"},
      {"allocateMappedFileEnable", "true"},
      {"warmMapedFileEnable", "true"},
      {"recycleExpiredCommitLogEnable", "true"},
      {"commitLogMappedWriteEnable", "false"},
      {"groupCommitOnPutThreadEnable", "false"},
      {"powerLossInjection", "true"},
      {"flushCommitLogLeastPages", "8"},
      {"flushConsumeQueueLeastPages", "4"},
      {"flushCommitLogThoroughInterval", "5000"},
      {"flushConsumeQueueThoroughInterval", "30000"},
      {"deleteWhen", "01;13"},
      {"diskMaxUsedSpaceRatio", "88"},
      {"fileReservedTime", "48"},
      {"cleanResourceInterval", "5000"},
      {"diskSpaceWarningLevelRatio", "0.95"},
      {"diskSpaceCleanForciblyRatio", "0.8"},
      {"cleanFileForciblyEnable", "false"},
      {"messageIndexEnable", "false"},
      {"maxHashSlotNum", "1000"},
      {"maxIndexNum", "4000"},
      {"messageIndexSafe", "true"},
      {"haSendHeartbeatInterval", "1000"},
      {"haHousekeepingInterval", "10000"},
      {"haTransferBatchSize", "65536"},
      {"haMasterAddress", "10.0.0.9:10912"},
      {"haSlaveFallbehindMax", "1024"},
      {"brokerRole", "SLAVE"},
      {"flushDiskType", "SYNC_FLUSH"},
      {"syncFlushTimeout", "2000"},
      {"slaveTimeout", "1000"},
      {"reputIntervalMs", "5"},
      {"dispatchFlushedOnly", "false"},
      {"messageDelayLevel", "1s 1m 1h"},
      {"flushDelayOffsetInterval", "20000"},
      {"transientStorePoolEnable", "true"},
      {"transientStorePoolSize", "3"},
      {"commitIntervalCommitLog", "100"},
      {"commitCommitLogLeastPages", "8"},
      {"commitCommitLogThoroughInterval", "400"},
  };
  return values;
}

TEST(BrokerStartup, EveryKeyParses) {
  std::set<std::string> sampled;
  std::string text;
  for (const auto& [key, value] : samples()) {
    sampled.insert(key);
    text += key + "=" + value + "\n";
  }
  ASSERT_EQ(sampled, broker_config_keys()) << "a key without a sample (or a sample for no key)";
  Result<LoadedBrokerConfig> loaded = load(text);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  // The samples are a SYNC_FLUSH SLAVE's: transientStorePoolEnable is kept
  // (and printed) but ignored, and the one warning says so.
  ASSERT_EQ(loaded->warnings.size(), 1u);
  EXPECT_NE(loaded->warnings.front().find("transientStorePoolEnable=true is ignored"), std::string::npos)
      << loaded->warnings.front();
  EXPECT_FALSE(loaded->config.store.is_transient_store_pool_enable());
  const std::map<std::string, std::string> effective = printed(loaded->config);
  Result<LoadedBrokerConfig> defaults = load("");
  ASSERT_TRUE(defaults.ok()) << defaults.status().to_string();
  const std::map<std::string, std::string> default_values = printed(defaults->config);
  ASSERT_EQ(effective.size(), samples().size());
  for (const auto& [key, value] : samples()) {
    EXPECT_EQ(effective.at(key), value) << key;
    EXPECT_NE(default_values.at(key), value) << key << ": the sample is the default, so it proves nothing";
  }
}

TEST(BrokerStartup, DefaultsAreRocketMQsWithTheStoreUnderHome) {
  Result<LoadedBrokerConfig> loaded = load("");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  const std::map<std::string, std::string> values = printed(loaded->config);
  EXPECT_EQ(values.at("storePathRootDir"), "/home/mq/store");
  EXPECT_EQ(values.at("storePathCommitLog"), "/home/mq/store/commitlog");
  EXPECT_EQ(values.at("storePathConsumeQueue"), "/home/mq/store/consumequeue");
  EXPECT_EQ(values.at("storePathIndex"), "/home/mq/store/index");
  EXPECT_EQ(values.at("storeCheckpoint"), "/home/mq/store/checkpoint");
  EXPECT_EQ(values.at("abortFile"), "/home/mq/store/abort");
  EXPECT_EQ(values.at("listenPort"), "10911");
  EXPECT_EQ(values.at("haListenPort"), "10912");
  EXPECT_EQ(values.at("httpPort"), "10913");
  EXPECT_EQ(values.at("brokerRole"), "ASYNC_MASTER");
  EXPECT_EQ(values.at("flushDiskType"), "ASYNC_FLUSH");
  EXPECT_EQ(values.at("mappedFileSizeCommitLog"), "1073741824");
  EXPECT_EQ(values.at("fileReservedTime"), "72");
  EXPECT_EQ(values.at("deleteWhen"), "04");
  EXPECT_EQ(values.at("brokerClusterName"), "DefaultCluster");
  EXPECT_EQ(values.at("namesrvAddr"), "");
}

TEST(BrokerStartup, PathsResolveAgainstHomeAndTheWorkingDirectory) {
  Result<LoadedBrokerConfig> home = load("storePathRootDir=~/mq/store/\n");
  ASSERT_TRUE(home.ok()) << home.status().to_string();
  EXPECT_EQ(home->config.store.storePathRootDir, "/home/mq/mq/store");
  Result<LoadedBrokerConfig> relative = load("storePathRootDir=./a/../store-a\nstorePathCommitLog=cl\n");
  ASSERT_TRUE(relative.ok()) << relative.status().to_string();
  EXPECT_EQ(relative->config.store.storePathRootDir, "/work/dir/store-a");
  EXPECT_EQ(relative->config.store.commit_log_dir(), "/work/dir/cl");
}

TEST(BrokerStartup, NamesrvAddrComesFromTheEnvironmentThenTheFileThenDashN) {
  BrokerStartupEnvironment environment = kEnvironment;
  environment.namesrv_addr = "10.0.0.1:9876";
  EXPECT_EQ(load("", std::nullopt, environment)->config.broker.namesrvAddr, "10.0.0.1:9876");
  EXPECT_EQ(load("namesrvAddr=10.0.0.2:9876\n", std::nullopt, environment)->config.broker.namesrvAddr,
            "10.0.0.2:9876");
  EXPECT_EQ(load("namesrvAddr=10.0.0.2:9876\n", "10.0.0.3:9876;10.0.0.4:9876", environment)->config.broker.namesrvAddr,
            "10.0.0.3:9876;10.0.0.4:9876");
  Result<LoadedBrokerConfig> bad = load("", std::string("nohost"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("-n: namesrvAddr=nohost: ", 0), 0u) << bad.status().message();
}

TEST(BrokerStartup, AnUnknownKeyIsAWarningNamingKeyAndLine) {
  Result<LoadedBrokerConfig> loaded = load("brokerName=broker-b\n\n# comment\nbrokerNmae=broker-c\n");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  ASSERT_EQ(loaded->warnings.size(), 1u);
  EXPECT_EQ(loaded->warnings[0], "broker.conf:4: unknown key 'brokerNmae' ignored");
  EXPECT_EQ(loaded->config.broker.brokerName, "broker-b");
}

TEST(BrokerStartup, ABadValueIsAnErrorNamingKeyValueWhatIsAllowedAndLine) {
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"brokerName=a\nbrokerRole=MASTER\n", "broker.conf:2: brokerRole=MASTER: must be one of ASYNC_MASTER, SYNC_MASTER, SLAVE"},
      {"flushDiskType=SYNC\n", "broker.conf:1: flushDiskType=SYNC: must be one of ASYNC_FLUSH, SYNC_FLUSH"},
      {"listenPort=ten\n", "broker.conf:1: listenPort=ten: not an integer"},
      {"listenPort=70000\n", "broker.conf:1: listenPort=70000: must be 1..65535"},
      {"autoCreateTopicEnable=yes\n", "broker.conf:1: autoCreateTopicEnable=yes: expected true or false"},
      {"fileReservedTime=3d\n", "broker.conf:1: fileReservedTime=3d: must be an integer in"},
      {"diskSpaceWarningLevelRatio=1.5\n", "broker.conf:1: diskSpaceWarningLevelRatio=1.5: must be a number in 0..1"},
      {"brokerIP1=localhost\n", "broker.conf:1: brokerIP1=localhost: must be an IP address"},
      {"\nbrokerRole=SLAVE\n", "broker.conf: brokerId=0: a SLAVE (brokerRole=SLAVE) needs brokerId > 0"},
      {"mappedFileSizeCommitLog=1024\n", "broker.conf:1: mappedFileSizeCommitLog=1024: must be at least"},
      {"storePathRootDir=/data/store\nstorePathIndex=/data/index\n",
       "broker.conf:2: storePathIndex=/data/index: must be /data/store/index"},
      {"messageDelayLevel=1s 5x\n", "broker.conf:1: messageDelayLevel=1s 5x: "},
  };
  for (const Case& c : cases) {
    Result<LoadedBrokerConfig> loaded = load(c.text);
    ASSERT_FALSE(loaded.ok()) << c.text;
    EXPECT_NE(loaded.status().message().find(c.expected), std::string::npos)
        << c.text << " gave: " << loaded.status().message();
  }
}

TEST(BrokerStartup, EveryBadValueIsReportedNotOnlyTheFirst) {
  Result<LoadedBrokerConfig> loaded = load("brokerRole=MASTER\nlistenPort=ten\nflushDiskType=x\n");
  ASSERT_FALSE(loaded.ok());
  const std::string& message = loaded.status().message();
  EXPECT_NE(message.find("broker.conf:1: brokerRole=MASTER"), std::string::npos) << message;
  EXPECT_NE(message.find("broker.conf:2: listenPort=ten"), std::string::npos) << message;
  EXPECT_NE(message.find("broker.conf:3: flushDiskType=x"), std::string::npos) << message;
}

TEST(BrokerStartup, AMastersBrokerIdIsForcedToZeroWithAWarning) {
  Result<LoadedBrokerConfig> loaded = load("brokerRole=SYNC_MASTER\nbrokerId=1\n");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ(loaded->config.broker.brokerId, 0);
  ASSERT_EQ(loaded->warnings.size(), 1u);
  EXPECT_EQ(loaded->warnings[0], "broker.conf:2: brokerId=1 ignored: a SYNC_MASTER is always brokerId 0");
}

// -p prints what the broker runs with; fed back as broker.conf, the printed
// configuration gives the same configuration.
RC_GTEST_PROP(BrokerStartup, PrintedConfigParsesBackToTheSameConfig, ()) {
  std::string text;
  auto maybe = [&](const std::string& key, auto generator) {
    if (*rc::gen::arbitrary<bool>()) text += key + "=" + *generator + "\n";
  };
  auto number = [](int64_t low, int64_t high) {
    return rc::gen::map(rc::gen::inRange<int64_t>(low, high), [](int64_t v) { return std::to_string(v); });
  };
  auto name = rc::gen::nonEmpty(rc::gen::container<std::string>(rc::gen::elementOf(std::string("abcXYZ019-_."))));
  const bool slave = *rc::gen::arbitrary<bool>();
  text += std::string("brokerRole=") + (slave ? "SLAVE" : *rc::gen::element<std::string>("ASYNC_MASTER", "SYNC_MASTER")) + "\n";
  if (slave) text += "brokerId=" + *number(1, 16) + "\n";
  maybe("brokerName", name);
  maybe("brokerClusterName", name);
  maybe("listenPort", number(1024, 60000));
  maybe("flushDiskType", rc::gen::element<std::string>("ASYNC_FLUSH", "SYNC_FLUSH"));
  maybe("namesrvAddr", rc::gen::element<std::string>("", "127.0.0.1:9876", "10.0.0.1:9876;10.0.0.2:9877"));
  maybe("storePathRootDir", rc::gen::element<std::string>("/tmp/mqlab/a", "~/s", "rel/store", "/x/../y/"));
  maybe("storePathCommitLog", rc::gen::element<std::string>("/tmp/mqlab/cl", "cl"));
  maybe("fileReservedTime", number(0, 1000));
  maybe("deleteWhen", rc::gen::element<std::string>("04", "01;13", "23"));
  maybe("diskMaxUsedSpaceRatio", number(10, 95));
  maybe("diskSpaceWarningLevelRatio", rc::gen::element<std::string>("0.9", "0.75", "1", "0"));
  maybe("syncFlushTimeout", number(1, 100000));
  maybe("autoCreateTopicEnable", rc::gen::element<std::string>("true", "false"));
  maybe("defaultTopicQueueNums", number(1, 1024));
  maybe("messageDelayLevel", rc::gen::element<std::string>("1s 5s", "1m 2h 1d", "10s"));
  maybe("haMasterAddress", rc::gen::element<std::string>("", "127.0.0.1:10912"));

  Result<LoadedBrokerConfig> first = load(text);
  RC_ASSERT(first.ok());
  const std::string printed_once = print_broker_config(first->config);
  // Another working directory and home: the printed paths are absolute.
  Result<LoadedBrokerConfig> second = load(printed_once, std::nullopt, {"/elsewhere", "/other", "10.9.9.9:1"});
  RC_ASSERT(second.ok());
  RC_ASSERT(second->warnings.empty());
  RC_ASSERT(print_broker_config(second->config) == printed_once);
}

std::vector<std::filesystem::path> example_configs() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::filesystem::path(MQLAB_SOURCE_DIR) / "conf")) {
    const std::string extension = entry.path().extension().string();
    if (entry.is_regular_file() && (extension == ".properties" || entry.path().filename() == "broker.conf")) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(BrokerStartup, EveryExampleConfigParsesWithoutWarnings) {
  const std::vector<std::filesystem::path> files = example_configs();
  // conf/broker.conf and the 2m-noslave, 2m-2s-async and 2m-2s-sync topologies.
  ASSERT_GE(files.size(), 1u + 2 + 4 + 4);
  std::map<std::string, std::string> ports;  // port -> file: one host runs them all
  for (const std::filesystem::path& file : files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    Result<LoadedBrokerConfig> loaded = load_broker_config(text.str(), file.string(), kEnvironment, std::nullopt);
    ASSERT_TRUE(loaded.ok()) << file << ": " << loaded.status().to_string();
    EXPECT_TRUE(loaded->warnings.empty()) << file << ": " << loaded->warnings.front();
    if (file.filename() == "broker.conf") continue;  // the single broker reuses 2m-noslave's ports
    const broker::BrokerConfig& broker = loaded->config.broker;
    const std::string topology = file.parent_path().filename().string();
    for (int port : {broker.listenPort, std::stoi(broker.to_properties().at("haListenPort")), broker.http_port()}) {
      const std::string key = topology + ":" + std::to_string(port);
      EXPECT_TRUE(ports.emplace(key, file.string()).second) << file << " reuses port " << port << " of " << ports[key];
    }
    const std::string& root = loaded->config.store.storePathRootDir;
    EXPECT_TRUE(root.starts_with("/tmp/mqlab/")) << file;
    EXPECT_TRUE(ports.emplace(topology + ":" + root, file.string()).second) << file << " shares its store " << root;
    EXPECT_EQ(broker.namesrvAddr, "127.0.0.1:9876") << file;
  }
}

}  // namespace
}  // namespace mqlab::config::broker_startup_test
