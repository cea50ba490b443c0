// TopicConfigManager: validation messages, RocketMQ's auto-create rule,
// retry/DLQ topics, dataVersion, and the topics.json shape and round trip
// (including a file as RocketMQ writes it). Runs on MetaTestEnv.
#include "broker/meta/topic_config.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "broker/common/log.h"
#include "broker/meta/test/meta_table_test.h"
#include "broker/meta/test/meta_test_env.h"

namespace mqlab::meta::topic_config_test {
namespace {

using testenv::MetaTestEnv;
using testenv::PowerLoss;

constexpr char kConfigDir[] = "/store/config";
constexpr char kTopicsPath[] = "/store/config/topics.json";

TopicConfig topic(std::string name, int32_t queues = 4, int32_t perm = 6) {
  TopicConfig config;
  config.topicName = std::move(name);
  config.readQueueNums = queues;
  config.writeQueueNums = queues;
  config.perm = perm;
  return config;
}

class TopicConfigTest : public testenv::MetaTableTest {};

void expect_invalid(const Result<TopicConfig>& result, const std::string& fragment) {
  ASSERT_FALSE(result.ok()) << "accepted; expected an error containing: " << fragment;
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find(fragment), std::string::npos) << result.status().message();
}

TEST_F(TopicConfigTest, Tbw102ExistsOnlyWithAutoCreateTopicEnable) {
  TopicConfigManager with(env_, kConfigDir);
  const TopicConfig* tbw = with.find("TBW102");
  ASSERT_NE(tbw, nullptr);
  EXPECT_EQ(tbw->perm, 7);
  EXPECT_EQ(tbw->readQueueNums, 8);
  EXPECT_EQ(tbw->writeQueueNums, 8);

  TopicConfigManagerOptions options;
  options.defaultTopicQueueNums = 3;
  TopicConfigManager three(env_, kConfigDir, options);
  EXPECT_EQ(three.find("TBW102")->writeQueueNums, 3);

  options.autoCreateTopicEnable = false;
  TopicConfigManager without(env_, kConfigDir, options);
  EXPECT_EQ(without.find("TBW102"), nullptr);
  EXPECT_TRUE(without.all().empty());
}

// find remembers the entry it found last: whatever changes the table, a
// lookup still sees the table as it is now.
TEST_F(TopicConfigTest, FindSeesEveryChangeOfTheTable) {
  TopicConfigManager topics(env_, kConfigDir);
  ASSERT_TRUE(topics.create_or_update(topic("A", 4)).ok());
  ASSERT_TRUE(topics.create_or_update(topic("B", 2)).ok());
  ASSERT_NE(topics.find("A"), nullptr);
  EXPECT_EQ(topics.find("A")->readQueueNums, 4);  // the remembered one
  EXPECT_EQ(topics.find("B")->readQueueNums, 2);
  ASSERT_TRUE(topics.create_or_update(topic("B", 8)).ok());  // replaced in place
  EXPECT_EQ(topics.find("B")->readQueueNums, 8);
  ASSERT_TRUE(topics.delete_topic("B").ok());
  EXPECT_EQ(topics.find("B"), nullptr);
  EXPECT_EQ(topics.find("A")->readQueueNums, 4);
  // A whole table read in: every entry a new one.
  TopicConfigManager other(env_, "/store/other");
  ASSERT_TRUE(other.create_or_update(topic("A", 16)).ok());
  ASSERT_TRUE(topics.replace_from_json(other.encode()).ok());
  EXPECT_EQ(topics.find("A")->readQueueNums, 16);
  EXPECT_EQ(topics.find("Missing"), nullptr);
  EXPECT_EQ(topics.find("A")->readQueueNums, 16);
}

TEST_F(TopicConfigTest, InvalidTopicsAreRejectedWithClearMessages) {
  TopicConfigManager topics(env_, kConfigDir);
  expect_invalid(topics.create_or_update(topic("")), "topic name is empty");
  expect_invalid(topics.create_or_update(topic(std::string(128, 'a'))), "is 128 characters long; at most 127");
  expect_invalid(topics.create_or_update(topic("my topic")), "has ' ' at index 2");
  expect_invalid(topics.create_or_update(topic("a.b")), "has '.' at index 1; only characters of %|a-zA-Z0-9_-");
  expect_invalid(topics.create_or_update(topic("caf\xc3\xa9")), "has '\\xc3' at index 3");
  expect_invalid(topics.create_or_update(topic("T", 0)), "topic T: readQueueNums 0 is outside [1, 1024]");
  expect_invalid(topics.create_or_update(topic("T", 1025)), "readQueueNums 1025 is outside [1, 1024]");
  TopicConfig write_zero = topic("T");
  write_zero.writeQueueNums = 0;
  expect_invalid(topics.create_or_update(write_zero), "writeQueueNums 0");
  expect_invalid(topics.create_or_update(topic("T", 4, 8)), "perm 8 has bits other than READ 4, WRITE 2, INHERIT 1");
  expect_invalid(topics.create_or_update(topic("T", 4, -1)), "perm -1");
  TopicConfig filter = topic("T");
  filter.topicFilterType = "SQL92";
  expect_invalid(topics.create_or_update(filter), "topicFilterType 'SQL92'");
  TopicConfig sys_flag = topic("T");
  sys_flag.topicSysFlag = -2;
  expect_invalid(topics.create_or_update(sys_flag), "topicSysFlag -2");
  EXPECT_EQ(topics.find("T"), nullptr);
  EXPECT_EQ(topics.data_version().counter, 0);  // nothing changed, nothing bumped

  EXPECT_TRUE(topics.create_or_update(topic("%RETRY%g|x_y-Z9", 1, 7)).ok());
  EXPECT_TRUE(topics.create_or_update(topic(std::string(127, 'a'), 1024, 0)).ok());
}

TEST_F(TopicConfigTest, ChangesBumpDataVersionWithTheWallClock) {
  TopicConfigManager topics(env_, kConfigDir);
  env_.manual_clock().set_wall_ms(1'000'000);
  ASSERT_TRUE(topics.create_or_update(topic("A"), record()).ok());
  EXPECT_EQ(topics.data_version(), (DataVersion{1'000'000, 1}));
  env_.manual_clock().set_wall_ms(2'000'000);
  ASSERT_TRUE(topics.create_or_update(topic("A", 8), record()).ok());
  EXPECT_EQ(topics.data_version(), (DataVersion{2'000'000, 2}));
  EXPECT_EQ(topics.find("A")->writeQueueNums, 8);
  ASSERT_TRUE(topics.delete_topic("A", record()).ok());
  EXPECT_EQ(topics.data_version().counter, 3);
  EXPECT_EQ(topics.find("A"), nullptr);
  EXPECT_EQ(topics.delete_topic("A").code(), StatusCode::kNotFound);
  EXPECT_EQ(topics.data_version().counter, 3);
  expect_all_persisted();
  EXPECT_EQ(persisted_.size(), 3u);
}

TEST_F(TopicConfigTest, RoundTripSurvivesPowerLossOnceDone) {
  {
    TopicConfigManager topics(env_, kConfigDir);
    ASSERT_TRUE(topics.load().ok());
    ASSERT_TRUE(topics.create_or_update(topic("Zeta", 2), record()).ok());
    ASSERT_TRUE(topics.create_or_update(topic("Alpha", 16, 4), record()).ok());
    TopicConfig ordered = topic("Ordered", 3, 2);
    ordered.order = true;
    ordered.topicSysFlag = 1;
    ordered.topicFilterType = "MULTI_TAG";
    ASSERT_TRUE(topics.create_or_update(ordered, record()).ok());
    expect_all_persisted();
  }
  env_.mem().crash(PowerLoss::kLoseUnsynced);
  TopicConfigManager loaded(env_, kConfigDir);
  Result<LoadSource> source = loaded.load();
  ASSERT_TRUE(source.ok()) << source.status().to_string();
  EXPECT_EQ(*source, LoadSource::kFile);
  std::vector<std::string> names;
  for (const auto& [name, config] : loaded.all()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"Alpha", "Ordered", "TBW102", "Zeta"}));  // sorted
  EXPECT_EQ(*loaded.find("Alpha"), topic("Alpha", 16, 4));
  EXPECT_TRUE(loaded.find("Ordered")->order);
  EXPECT_EQ(loaded.find("Ordered")->topicFilterType, "MULTI_TAG");
  EXPECT_EQ(loaded.data_version().counter, 3);
}

TEST_F(TopicConfigTest, FileHasRocketMqShape) {
  TopicConfigManager topics(env_, kConfigDir);
  env_.manual_clock().set_wall_ms(1'690'000'000'000);
  ASSERT_TRUE(topics.create_or_update(topic("TopicTest"), record()).ok());
  expect_all_persisted();
  std::optional<std::string> text = env_.mem().read_file(kTopicsPath);
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text, topics.encode());
  const nlohmann::json json = nlohmann::json::parse(*text);
  EXPECT_EQ(json["dataVersion"], nlohmann::json::parse(R"({"counter":1,"timestamp":1690000000000})"));
  EXPECT_EQ(json["topicConfigTable"]["TopicTest"], nlohmann::json::parse(R"({
      "order": false, "perm": 6, "readQueueNums": 4, "topicFilterType": "SINGLE_TAG",
      "topicName": "TopicTest", "topicSysFlag": 0, "writeQueueNums": 4})"));
  EXPECT_EQ(json["topicConfigTable"]["TBW102"]["perm"], 7);
}

TEST_F(TopicConfigTest, LoadsAFileWrittenByRocketMq) {
  ASSERT_TRUE(env_.mem().mkdirs(kConfigDir).ok());
  // fastjson's pretty output, with a field from a newer version we ignore.
  env_.mem().write_file(kTopicsPath,
                        "{\n\t\"dataVersion\":{\n\t\t\"counter\":12,\n\t\t\"timestamp\":1690000000000\n\t},\n"
                        "\t\"topicConfigTable\":{\n\t\t\"TopicTest\":{\n\t\t\t\"order\":false,\n"
                        "\t\t\t\"perm\":6,\n\t\t\t\"readQueueNums\":4,\n"
                        "\t\t\t\"topicFilterType\":\"SINGLE_TAG\",\n"
                        "\t\t\t\"topicName\":\"TopicTest\",\n\t\t\t\"topicSysFlag\":0,\n"
                        "\t\t\t\"writeQueueNums\":4,\n\t\t\t\"attributes\":{}\n\t\t},\n"
                        "\t\t\"TBW102\":{\"perm\":7,\"readQueueNums\":16,\"topicName\":\"TBW102\","
                        "\"writeQueueNums\":16}\n\t}\n}");
  TopicConfigManager topics(env_, kConfigDir);
  Result<LoadSource> source = topics.load();
  ASSERT_TRUE(source.ok()) << source.status().to_string();
  EXPECT_EQ(topics.find("TopicTest")->writeQueueNums, 4);
  EXPECT_EQ(topics.find("TBW102")->writeQueueNums, 16);  // the file overrides the built-in template
  EXPECT_EQ(topics.find("TBW102")->topicFilterType, "SINGLE_TAG");  // missing field: default
  EXPECT_EQ(topics.data_version(), (DataVersion{1'690'000'000'000, 12}));
}

TEST_F(TopicConfigTest, BadEntryFailsTheFileNamingTheKeyAndFallsBackToBackup) {
  ASSERT_TRUE(env_.mem().mkdirs(kConfigDir).ok());
  env_.mem().write_file(kTopicsPath, R"({"topicConfigTable":{"A":{"topicName":"B"}}})");
  TopicConfigManager first(env_, kConfigDir);
  Result<LoadSource> failed = first.load();
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("topicConfigTable: \"A\": holds topicName 'B'"), std::string::npos)
      << failed.status().message();

  env_.mem().write_file(kTopicsPath, R"({"topicConfigTable":{"A":{"perm":"rw"}}})");
  env_.mem().write_file(std::string(kTopicsPath) + ".bak", R"({"topicConfigTable":{"A":{"perm":4}}})");
  TopicConfigManager second(env_, kConfigDir);
  Result<LoadSource> source = second.load();
  ASSERT_TRUE(source.ok()) << source.status().to_string();
  EXPECT_EQ(*source, LoadSource::kBackup);
  EXPECT_EQ(second.find("A")->perm, 4);
  EXPECT_EQ(second.find("A")->topicName, "A");

  env_.mem().write_file(kTopicsPath, R"({"topicConfigTable":{"A":{"readQueueNums":-1}}})");
  env_.mem().write_file(std::string(kTopicsPath) + ".bak", "[]");
  TopicConfigManager third(env_, kConfigDir);
  Result<LoadSource> bad = third.load();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("queue count -1"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("expected a JSON object, found array"), std::string::npos)
      << bad.status().message();
}

TEST_F(TopicConfigTest, AutoCreateCopiesTheTemplateWithoutInherit) {
  TopicConfigManager topics(env_, kConfigDir);
  Result<TopicConfig> created = topics.create_topic_in_send_message("NewTopic", "TBW102", 4, 0, record());
  ASSERT_TRUE(created.ok()) << created.status().to_string();
  EXPECT_EQ(created->perm, 6);
  EXPECT_EQ(created->readQueueNums, 4);
  EXPECT_EQ(created->writeQueueNums, 4);
  EXPECT_EQ(*topics.find("NewTopic"), *created);

  // Capped by the template's write queues.
  Result<TopicConfig> capped = topics.create_topic_in_send_message("Big", "TBW102", 64, 0, record());
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(capped->writeQueueNums, 8);

  // An existing topic is returned untouched, whatever was asked.
  const int64_t counter = topics.data_version().counter;
  Result<TopicConfig> again = topics.create_topic_in_send_message("NewTopic", "TBW102", 1);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->writeQueueNums, 4);
  EXPECT_EQ(topics.data_version().counter, counter);
  expect_all_persisted();
}

TEST_F(TopicConfigTest, AutoCreateRefusals) {
  TopicConfigManager topics(env_, kConfigDir);
  Result<TopicConfig> no_template = topics.create_topic_in_send_message("T", "NoSuchTemplate", 4);
  ASSERT_FALSE(no_template.ok());
  EXPECT_EQ(no_template.status().code(), StatusCode::kNotFound);
  EXPECT_NE(no_template.status().message().find("default topic NoSuchTemplate does not exist"), std::string::npos);

  ASSERT_TRUE(topics.create_or_update(topic("Plain", 4, 6)).ok());
  expect_invalid(topics.create_topic_in_send_message("T", "Plain", 4), "default topic Plain lacks INHERIT (perm 6)");
  expect_invalid(topics.create_topic_in_send_message("bad name", "TBW102", 4), "has ' ' at index 3");
  expect_invalid(topics.create_topic_in_send_message("T", "TBW102", 0), "requested 0 queues");
  EXPECT_EQ(topics.find("T"), nullptr);
}

TEST_F(TopicConfigTest, AutoCreateDisabledRefusesEvenAnInheritableTbw102FromTheFile) {
  {
    TopicConfigManager enabled(env_, kConfigDir);
    ASSERT_TRUE(enabled.create_or_update(topic("X"), record()).ok());  // writes TBW102 perm 7 to the file
    expect_all_persisted();
  }
  TopicConfigManagerOptions options;
  options.autoCreateTopicEnable = false;
  TopicConfigManager disabled(env_, kConfigDir, options);
  ASSERT_TRUE(disabled.load().ok());
  ASSERT_NE(disabled.find("TBW102"), nullptr);
  EXPECT_EQ(disabled.find("TBW102")->perm, 7);
  expect_invalid(disabled.create_topic_in_send_message("T", "TBW102", 4), "autoCreateTopicEnable is false");
  // Another inheritable template still works: the switch is about TBW102.
  ASSERT_TRUE(disabled.create_or_update(topic("Template", 2, 7)).ok());
  EXPECT_TRUE(disabled.create_topic_in_send_message("T", "Template", 4).ok());
  EXPECT_EQ(disabled.find("T")->writeQueueNums, 2);
}

TEST_F(TopicConfigTest, RetryAndDlqTopics) {
  TopicConfigManager topics(env_, kConfigDir);
  Result<TopicConfig> retry = topics.create_topic_of_retry("GroupA", 1, record());
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(retry->topicName, "%RETRY%GroupA");
  EXPECT_EQ(retry->readQueueNums, 1);
  EXPECT_EQ(retry->writeQueueNums, 1);
  EXPECT_EQ(retry->perm, 6);
  Result<TopicConfig> dlq = topics.create_topic_of_dlq("GroupA", record());
  ASSERT_TRUE(dlq.ok());
  EXPECT_EQ(dlq->topicName, "%DLQ%GroupA");
  EXPECT_EQ(dlq->writeQueueNums, 1);
  EXPECT_EQ(dlq->perm, 6);
  EXPECT_NE(topics.find("%RETRY%GroupA"), nullptr);
  EXPECT_NE(topics.find("%DLQ%GroupA"), nullptr);

  const int64_t counter = topics.data_version().counter;
  EXPECT_TRUE(topics.create_topic_of_retry("GroupA", 3).ok());  // exists: unchanged
  EXPECT_EQ(topics.find("%RETRY%GroupA")->writeQueueNums, 1);
  EXPECT_EQ(topics.data_version().counter, counter);

  // Group names may be longer than a topic name; the derived topic follows.
  const std::string long_group(200, 'g');
  EXPECT_TRUE(topics.create_topic_of_retry(long_group).ok());
  EXPECT_NE(topics.find("%RETRY%" + long_group), nullptr);

  Result<TopicConfig> bad_group = topics.create_topic_of_retry("a@b");
  ASSERT_FALSE(bad_group.ok());
  EXPECT_NE(bad_group.status().message().find("group name 'a@b' has '@'"), std::string::npos);
  expect_invalid(topics.create_topic_of_dlq(""), "group name is empty");
  expect_invalid(topics.create_topic_of_retry("G", 0), "retryQueueNums 0");
  expect_all_persisted();
}

TEST_F(TopicConfigTest, ManyChangesInOneTurnEndInOneConsistentFile) {
  TopicConfigManager topics(env_, kConfigDir);
  ASSERT_TRUE(topics.load().ok());
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(topics.create_or_update(topic("T" + std::to_string(i)), record()).ok());
  expect_all_persisted();
  EXPECT_EQ(persisted_.size(), 20u);
  EXPECT_EQ(env_.mem().read_file(kTopicsPath), topics.encode());
}

}  // namespace
}  // namespace mqlab::meta::topic_config_test
