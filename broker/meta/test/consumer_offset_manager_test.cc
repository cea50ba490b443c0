// ConsumerOffsetManager: commit/query, group and topic lookups, the file's
// round trip, loading RocketMQ's fastjson file with unquoted queue-id keys,
// and the slave sync (replace_from_json). Runs on MetaTestEnv.
#include "broker/meta/consumer_offset_manager.h"

#include <gtest/gtest.h>

#include <string>

#include "broker/common/log.h"
#include "broker/meta/test/meta_test_env.h"

namespace mqlab::meta::consumer_offset_manager_test {
namespace {

using testenv::MetaTestEnv;
using testenv::PowerLoss;

constexpr char kConfigDir[] = "/store/config";
constexpr char kOffsetsPath[] = "/store/config/consumerOffset.json";

class ConsumerOffsetManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.mem().mkdirs(kConfigDir).ok());
    env_.mem().sync_everything();
  }

  Status persist_and_wait(ConsumerOffsetManager& offsets) {
    Status result = Status::Aborted("not called");
    offsets.persist([&](Status status) { result = std::move(status); });
    env_.run_all();
    return result;
  }

  MetaTestEnv env_;
  testenv::LogCapture quiet_{LogLevel::kError};  // rejections below warn by design
};

TEST_F(ConsumerOffsetManagerTest, CommitAndQuery) {
  ConsumerOffsetManager offsets(env_, kConfigDir);
  EXPECT_FALSE(offsets.query_offset("G", "T", 0).has_value());
  ASSERT_TRUE(offsets.commit_offset("G", "T", 0, 12).ok());
  ASSERT_TRUE(offsets.commit_offset("G", "T", 1, 7).ok());
  ASSERT_TRUE(offsets.commit_offset("G", "T", 0, 15).ok());
  EXPECT_EQ(offsets.query_offset("G", "T", 0), 15);
  EXPECT_EQ(offsets.query_offset("G", "T", 1), 7);
  EXPECT_FALSE(offsets.query_offset("G", "T", 2).has_value());
  EXPECT_FALSE(offsets.query_offset("H", "T", 0).has_value());
  ASSERT_NE(offsets.query_offsets("G", "T"), nullptr);
  EXPECT_EQ(offsets.query_offsets("G", "T")->size(), 2u);
  EXPECT_EQ(offsets.offset_table().begin()->first, "T@G");
}

// A commit to the entry of the commit before skips the key's lookup
// (consumer_offset_manager.h): alternating entries, an entry removed, the
// table reloaded or replaced from a master must still land every commit in
// the table's own entry.
TEST_F(ConsumerOffsetManagerTest, CommitsLandInTheTableWhateverChangedItBetween) {
  ConsumerOffsetManager offsets(env_, kConfigDir);
  ASSERT_TRUE(offsets.commit_offset("G", "T", 0, 1).ok());
  ASSERT_TRUE(offsets.commit_offset("G", "T", 0, 2).ok());
  ASSERT_TRUE(offsets.commit_offset("G", "U", 0, 3).ok());  // same length, other topic
  ASSERT_TRUE(offsets.commit_offset("H", "T", 0, 4).ok());  // other group
  ASSERT_TRUE(offsets.commit_offset("G", "T", 1, 5).ok());
  ASSERT_TRUE(offsets.commit_offset("T", "G", 0, 6).ok());  // "G@T", not "T@G"
  EXPECT_EQ(offsets.query_offset("G", "T", 0), 2);
  EXPECT_EQ(offsets.query_offset("G", "T", 1), 5);
  EXPECT_EQ(offsets.query_offset("G", "U", 0), 3);
  EXPECT_EQ(offsets.query_offset("H", "T", 0), 4);
  EXPECT_EQ(offsets.query_offset("T", "G", 0), 6);
  EXPECT_EQ(offsets.offset_table().size(), 4u);

  EXPECT_EQ(offsets.remove_group("T"), 1u);  // the entry committed to last
  ASSERT_TRUE(offsets.commit_offset("T", "G", 0, 7).ok());
  EXPECT_EQ(offsets.query_offset("T", "G", 0), 7);
  ASSERT_NE(offsets.query_offsets("T", "G"), nullptr);
  EXPECT_EQ(offsets.query_offsets("T", "G")->size(), 1u);

  ASSERT_TRUE(offsets.replace_from_json(R"({"offsetTable":{"G@T":{"0":70}}})").ok());
  ASSERT_TRUE(offsets.commit_offset("T", "G", 1, 8).ok());
  EXPECT_EQ(offsets.query_offset("T", "G", 0), 70);
  EXPECT_EQ(offsets.query_offset("T", "G", 1), 8);

  ASSERT_TRUE(persist_and_wait(offsets).ok());
  ASSERT_TRUE(offsets.commit_offset("T", "G", 1, 9).ok());  // after the file: not in it
  ASSERT_TRUE(offsets.load().ok());                          // the file's table replaces the one in memory
  EXPECT_EQ(offsets.query_offset("T", "G", 1), 8);
  ASSERT_TRUE(offsets.commit_offset("T", "G", 1, 10).ok());
  EXPECT_EQ(offsets.query_offset("T", "G", 1), 10);
  ConsumerOffsetManager reloaded(env_, kConfigDir);
  ASSERT_TRUE(reloaded.load().ok());
  EXPECT_EQ(reloaded.query_offset("T", "G", 1), 8);
}

TEST_F(ConsumerOffsetManagerTest, CommitRejectsWhatWouldCorruptTheTable) {
  ConsumerOffsetManager offsets(env_, kConfigDir);
  EXPECT_EQ(offsets.commit_offset("", "T", 0, 1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(offsets.commit_offset("G", "", 0, 1).code(), StatusCode::kInvalidArgument);
  Status at = offsets.commit_offset("G@x", "T", 0, 1);
  EXPECT_EQ(at.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(at.message().find("holds '@'"), std::string::npos) << at.message();
  EXPECT_EQ(offsets.commit_offset("G", "T", -1, 1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(offsets.commit_offset("G", "T", 0, -1).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(offsets.offset_table().empty());
}

TEST_F(ConsumerOffsetManagerTest, GroupsOfTopicTopicsOfGroupAndRemoveGroup) {
  ConsumerOffsetManager offsets(env_, kConfigDir);
  ASSERT_TRUE(offsets.commit_offset("G1", "T1", 0, 1).ok());
  ASSERT_TRUE(offsets.commit_offset("G2", "T1", 0, 1).ok());
  ASSERT_TRUE(offsets.commit_offset("G1", "T2", 0, 1).ok());
  ASSERT_TRUE(offsets.commit_offset("G1", "%RETRY%G1", 0, 1).ok());
  EXPECT_EQ(offsets.groups_of_topic("T1"), (std::set<std::string>{"G1", "G2"}));
  EXPECT_EQ(offsets.groups_of_topic("T3"), std::set<std::string>{});
  EXPECT_EQ(offsets.topics_of_group("G1"), (std::set<std::string>{"%RETRY%G1", "T1", "T2"}));
  EXPECT_EQ(offsets.remove_group("G1"), 3u);
  EXPECT_EQ(offsets.remove_group("G1"), 0u);
  EXPECT_EQ(offsets.groups_of_topic("T1"), std::set<std::string>{"G2"});
  EXPECT_TRUE(offsets.topics_of_group("G1").empty());
}

TEST_F(ConsumerOffsetManagerTest, RoundTripWritesQuotedKeys) {
  {
    ConsumerOffsetManager offsets(env_, kConfigDir);
    ASSERT_TRUE(offsets.load().ok());
    ASSERT_TRUE(offsets.commit_offset("G", "T", 0, 12).ok());
    ASSERT_TRUE(offsets.commit_offset("G", "T", 10, 7).ok());
    ASSERT_TRUE(offsets.commit_offset("H", "U", 3, 1LL << 40).ok());
    ASSERT_TRUE(persist_and_wait(offsets).ok());
  }
  env_.mem().crash(PowerLoss::kLoseUnsynced);
  const std::string text = env_.mem().read_file(kOffsetsPath).value_or("");
  EXPECT_EQ(nlohmann::json::parse(text),
            nlohmann::json::parse(R"({"offsetTable":{"T@G":{"0":12,"10":7},"U@H":{"3":1099511627776}}})"));
  ConsumerOffsetManager loaded(env_, kConfigDir);
  ASSERT_TRUE(loaded.load().ok());
  EXPECT_EQ(loaded.query_offset("G", "T", 0), 12);
  EXPECT_EQ(loaded.query_offset("G", "T", 10), 7);
  EXPECT_EQ(loaded.query_offset("H", "U", 3), 1LL << 40);
}

TEST_F(ConsumerOffsetManagerTest, LoadsFastjsonUnquotedKeys) {
  // As RocketMQ 4.9 writes it: tabs, and the queue ids bare.
  env_.mem().write_file(kOffsetsPath,
                        "{\n\t\"offsetTable\":{\n"
                        "\t\t\"TopicTest@please_rename_unique_group_name_4\":{0:250,1:248,2:250,3:250\n\t\t},\n"
                        "\t\t\"%RETRY%please_rename_unique_group_name_4@please_rename_unique_group_name_4\":"
                        "{0:0\n\t\t}\n\t}\n}");
  ConsumerOffsetManager offsets(env_, kConfigDir);
  Result<LoadSource> source = offsets.load();
  ASSERT_TRUE(source.ok()) << source.status().to_string();
  EXPECT_EQ(*source, LoadSource::kFile);
  EXPECT_EQ(offsets.query_offset("please_rename_unique_group_name_4", "TopicTest", 1), 248);
  EXPECT_EQ(offsets.query_offset("please_rename_unique_group_name_4", "TopicTest", 3), 250);
  EXPECT_EQ(offsets.query_offset("please_rename_unique_group_name_4",
                                 "%RETRY%please_rename_unique_group_name_4", 0),
            0);
  EXPECT_EQ(offsets.groups_of_topic("TopicTest"), std::set<std::string>{"please_rename_unique_group_name_4"});
}

TEST_F(ConsumerOffsetManagerTest, BadFilesNameWhatIsWrongAndFallBack) {
  env_.mem().write_file(kOffsetsPath, R"({"offsetTable":{"T@G":{"x":1}}})");
  ConsumerOffsetManager first(env_, kConfigDir);
  Result<LoadSource> bad_id = first.load();
  ASSERT_FALSE(bad_id.ok());
  EXPECT_NE(bad_id.status().message().find("\"T@G\": queue id \"x\" is not an int"), std::string::npos)
      << bad_id.status().message();

  env_.mem().write_file(kOffsetsPath, R"({"offsetTable":{"T@G":{0:"12"}}})");
  env_.mem().write_file(std::string(kOffsetsPath) + ".bak", R"({"offsetTable":{"T@G":{0:11}}})");
  ConsumerOffsetManager second(env_, kConfigDir);
  Result<LoadSource> source = second.load();
  ASSERT_TRUE(source.ok()) << source.status().to_string();
  EXPECT_EQ(*source, LoadSource::kBackup);
  EXPECT_EQ(second.query_offset("G", "T", 0), 11);
}

TEST_F(ConsumerOffsetManagerTest, KeysThatAreNotTopicAtGroupAreDropped) {
  env_.mem().write_file(kOffsetsPath, R"({"offsetTable":{"nogroup":{"0":1},"T@G":{"0":2},"@G":{"0":3}}})");
  ConsumerOffsetManager offsets(env_, kConfigDir);
  ASSERT_TRUE(offsets.load().ok());
  EXPECT_EQ(offsets.offset_table().size(), 1u);
  EXPECT_EQ(offsets.query_offset("G", "T", 0), 2);
}

TEST_F(ConsumerOffsetManagerTest, AllOffsetsJsonFeedsASlave) {
  ConsumerOffsetManager master(env_, kConfigDir);
  ASSERT_TRUE(master.commit_offset("G", "T", 0, 100).ok());
  ASSERT_TRUE(master.commit_offset("G", "T", 1, 200).ok());
  const std::string body = master.all_offsets_json();
  EXPECT_EQ(body, R"({"offsetTable":{"T@G":{"0":100,"1":200}}})");

  MetaTestEnv slave_env;
  ConsumerOffsetManager slave(slave_env, kConfigDir);
  ASSERT_TRUE(slave.commit_offset("G", "T", 0, 5).ok());
  ASSERT_TRUE(slave.commit_offset("G", "T", 7, 5).ok());  // replaced with its whole entry
  ASSERT_TRUE(slave.commit_offset("Old", "T", 0, 9).ok());  // not in the body: kept
  ASSERT_TRUE(slave.replace_from_json(body).ok());
  EXPECT_EQ(slave.query_offset("G", "T", 0), 100);
  EXPECT_EQ(slave.query_offset("G", "T", 1), 200);
  EXPECT_FALSE(slave.query_offset("G", "T", 7).has_value());
  EXPECT_EQ(slave.query_offset("Old", "T", 0), 9);

  // A Java master's body has bare keys.
  ASSERT_TRUE(slave.replace_from_json(R"({"offsetTable":{"T@G":{0:101,1:201}}})").ok());
  EXPECT_EQ(slave.query_offset("G", "T", 0), 101);

  // A bad body changes nothing.
  Status bad = slave.replace_from_json(R"({"offsetTable":{"T@G":{"0":1},"U@G":{"0":true}}})");
  EXPECT_EQ(bad.code(), StatusCode::kCorruption);
  EXPECT_NE(bad.message().find("consumer offsets from master"), std::string::npos) << bad.message();
  EXPECT_EQ(slave.query_offset("G", "T", 0), 101);
  EXPECT_FALSE(slave.replace_from_json("not json").ok());
}

}  // namespace
}  // namespace mqlab::meta::consumer_offset_manager_test
