// ConfigFile: round trips, the .bak fallback, coalesced persists, the JSON
// helpers, and that a power loss at every step of a persist leaves the old or
// the new content. Runs on MetaTestEnv, whose crash() forgets unsynced state.
#include "broker/meta/config_file.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "broker/common/log.h"
#include "broker/meta/test/meta_test_env.h"

namespace mqlab::meta::config_file_test {
namespace {

using testenv::LogCapture;
using testenv::MetaTestEnv;
using testenv::PowerLoss;

constexpr char kPath[] = "/store/config/topics.json";
constexpr char kBak[] = "/store/config/topics.json.bak";
constexpr char kTmp[] = "/store/config/topics.json.tmp";

struct Loaded {
  Result<LoadSource> source;
  std::string content;
};

// A fresh process's load: the parser accepts any JSON object.
Loaded load(MetaTestEnv& env) {
  ConfigFile file(env, kPath);
  std::string content;
  Result<LoadSource> source = file.load([&](const std::string& text) {
    Result<nlohmann::json> json = parse_json(text, kPath);
    if (!json.ok()) return json.status();
    if (!json->is_object()) return Status::Corruption("not an object");
    content = text;
    return Status::Ok();
  });
  return Loaded{std::move(source), std::move(content)};
}

Status load_into(ConfigFile& file) {
  Result<LoadSource> source = file.load([](const std::string& text) { return parse_json(text, kPath).status(); });
  return source.status();
}

Status persist_and_wait(MetaTestEnv& env, ConfigFile& file, std::string content) {
  Status result = Status::Aborted("not called");
  file.persist(std::move(content), [&](Status status) { result = std::move(status); });
  env.run_all();
  return result;
}

class ConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.mem().mkdirs("/store").ok();
    env_.mem().sync_everything();
  }

  MetaTestEnv env_;
  LogCapture log_;
  std::vector<std::string>& warnings_ = log_.warnings;
};

TEST_F(ConfigFileTest, RoundTripCreatesTheDirectory) {
  ConfigFile file(env_, kPath);
  ASSERT_TRUE(load_into(file).ok());
  ASSERT_TRUE(persist_and_wait(env_, file, R"({"a":1})").ok());
  // Durable means durable: nothing unsynced may be needed.
  env_.mem().crash(PowerLoss::kLoseUnsynced);
  Loaded loaded = load(env_);
  ASSERT_TRUE(loaded.source.ok()) << loaded.source.status().to_string();
  EXPECT_EQ(*loaded.source, LoadSource::kFile);
  EXPECT_EQ(loaded.content, R"({"a":1})");
}

TEST_F(ConfigFileTest, NothingOnDiskIsAFreshStart) {
  Loaded loaded = load(env_);
  ASSERT_TRUE(loaded.source.ok());
  EXPECT_EQ(*loaded.source, LoadSource::kNone);
}

TEST_F(ConfigFileTest, SecondPersistKeepsThePreviousContentAsBackup) {
  ConfigFile file(env_, kPath);
  ASSERT_TRUE(load_into(file).ok());
  ASSERT_TRUE(persist_and_wait(env_, file, R"({"v":1})").ok());
  EXPECT_FALSE(env_.mem().read_file(kBak).has_value());  // nothing good to back up yet
  ASSERT_TRUE(persist_and_wait(env_, file, R"({"v":2})").ok());
  EXPECT_EQ(env_.mem().read_file(kPath), R"({"v":2})");
  EXPECT_EQ(env_.mem().read_file(kBak), R"({"v":1})");
  EXPECT_FALSE(env_.mem().read_file(kTmp).has_value());
}

TEST_F(ConfigFileTest, FallsBackToBackupWhenFileMissingEmptyOrGarbage) {
  ASSERT_TRUE(env_.mem().mkdirs("/store/config").ok());
  env_.mem().write_file(kBak, R"({"from":"bak"})");
  for (const char* main : {"<missing>", "", "{\"topicConfigTable\": {", "\xff\xfe garbage"}) {
    if (std::string(main) == "<missing>") {
      env_.mem().remove(kPath).ok();
    } else {
      env_.mem().write_file(kPath, main);
    }
    warnings_.clear();
    Loaded loaded = load(env_);
    ASSERT_TRUE(loaded.source.ok()) << loaded.source.status().to_string();
    EXPECT_EQ(*loaded.source, LoadSource::kBackup) << "main: " << main;
    EXPECT_EQ(loaded.content, R"({"from":"bak"})");
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_NE(warnings_[0].find(kBak), std::string::npos) << warnings_[0];
  }
}

TEST_F(ConfigFileTest, RejectedByParserFallsBackToo) {
  ASSERT_TRUE(env_.mem().mkdirs("/store/config").ok());
  env_.mem().write_file(kPath, "[1,2,3]");  // JSON, but not what the parser wants
  env_.mem().write_file(kBak, R"({"ok":true})");
  Loaded loaded = load(env_);
  ASSERT_TRUE(loaded.source.ok());
  EXPECT_EQ(*loaded.source, LoadSource::kBackup);
}

TEST_F(ConfigFileTest, BothCopiesBadIsCorruptionNamingBoth) {
  ASSERT_TRUE(env_.mem().mkdirs("/store/config").ok());
  env_.mem().write_file(kPath, "{oops");
  env_.mem().write_file(kBak, "");
  Loaded loaded = load(env_);
  ASSERT_FALSE(loaded.source.ok());
  EXPECT_EQ(loaded.source.status().code(), StatusCode::kCorruption);
  const std::string& message = loaded.source.status().message();
  EXPECT_NE(message.find(kPath), std::string::npos) << message;
  EXPECT_NE(message.find(kBak), std::string::npos) << message;
  EXPECT_NE(message.find("empty"), std::string::npos) << message;
}

TEST_F(ConfigFileTest, PersistAfterLoadingTheBackupLeavesTheBackupAlone) {
  ASSERT_TRUE(env_.mem().mkdirs("/store/config").ok());
  env_.mem().write_file(kPath, "garbage");
  env_.mem().write_file(kBak, R"({"v":1})");
  env_.mem().sync_everything();
  ConfigFile file(env_, kPath);
  ASSERT_TRUE(load_into(file).ok());
  env_.mem().op_log.clear();
  ASSERT_TRUE(persist_and_wait(env_, file, R"({"v":2})").ok());
  for (const std::string& op : env_.mem().op_log) EXPECT_EQ(op.find(kBak), std::string::npos) << op;
  EXPECT_EQ(env_.mem().read_file(kBak), R"({"v":1})");
  EXPECT_EQ(env_.mem().read_file(kPath), R"({"v":2})");
}

TEST_F(ConfigFileTest, PersistsRequestedInFlightAreCoalescedNewestWins) {
  ConfigFile file(env_, kPath);
  ASSERT_TRUE(load_into(file).ok());
  std::vector<std::string> order;
  file.persist(R"({"v":"A"})", [&](Status s) { order.push_back("A:" + s.to_string()); });
  EXPECT_TRUE(file.persist_in_flight());
  file.persist(R"({"v":"B"})", [&](Status s) { order.push_back("B:" + s.to_string()); });
  file.persist(R"({"v":"C"})", [&](Status s) { order.push_back("C:" + s.to_string()); });
  env_.mem().op_log.clear();
  env_.run_all();
  EXPECT_EQ(order, (std::vector<std::string>{"A:Ok", "B:Ok", "C:Ok"}));
  EXPECT_FALSE(file.persist_in_flight());
  EXPECT_EQ(env_.mem().read_file(kPath), R"({"v":"C"})");
  int renames = 0;
  for (const std::string& op : env_.mem().op_log) renames += op.starts_with("rename ") ? 1 : 0;
  EXPECT_EQ(renames, 2);  // A, then C; B was superseded before it started
}

TEST_F(ConfigFileTest, PersistFromADoneCallbackRunsAfterTheCurrentOne) {
  ConfigFile file(env_, kPath);
  ASSERT_TRUE(load_into(file).ok());
  Status second = Status::Aborted("not called");
  file.persist(R"({"v":1})", [&](Status) { file.persist(R"({"v":2})", [&](Status s) { second = s; }); });
  env_.run_all();
  EXPECT_TRUE(second.ok());
  EXPECT_EQ(env_.mem().read_file(kPath), R"({"v":2})");
}

TEST_F(ConfigFileTest, SyncFailureIsReportedAndTheFileKeepsItsContent) {
  ConfigFile file(env_, kPath);
  ASSERT_TRUE(load_into(file).ok());
  ASSERT_TRUE(persist_and_wait(env_, file, R"({"v":1})").ok());
  env_.mem().fault = [](std::string_view op, const std::string& path) {
    return op == "sync" && path == kTmp ? Status::IoError("EIO") : Status::Ok();
  };
  Status status = persist_and_wait(env_, file, R"({"v":2})");
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_NE(status.message().find(kTmp), std::string::npos) << status.message();
  EXPECT_EQ(env_.mem().read_file(kPath), R"({"v":1})");
  env_.mem().fault = nullptr;
  EXPECT_TRUE(persist_and_wait(env_, file, R"({"v":3})").ok());
  EXPECT_EQ(env_.mem().read_file(kPath), R"({"v":3})");
}

TEST_F(ConfigFileTest, DirectoryCreationFailureIsReportedLater) {
  env_.mem().fault = [](std::string_view op, const std::string&) {
    return op == "mkdirs" ? Status::NoSpace("disk full") : Status::Ok();
  };
  ConfigFile file(env_, kPath);
  bool called = false;
  Status result;
  file.persist(R"({"v":1})", [&](Status s) {
    called = true;
    result = s;
  });
  EXPECT_FALSE(called);  // never inside the call
  env_.run_all();
  EXPECT_TRUE(called);
  EXPECT_EQ(result.code(), StatusCode::kNoSpace);
}

// --- power loss at every step of a persist

enum class Start { kFileHoldsOld, kOnlyBackupHoldsOld, kNothing, kNoDirectory };
constexpr char kOld[] = R"({"v":"old"})";
constexpr char kNew[] = R"({"v":"new"})";

void prepare(MetaTestEnv& env, Start start) {
  ASSERT_TRUE(env.mem().mkdirs("/store").ok());
  if (start != Start::kNoDirectory) {
    ASSERT_TRUE(env.mem().mkdirs("/store/config").ok());
  }
  if (start == Start::kFileHoldsOld) {
    env.mem().write_file(kBak, R"({"v":"older"})");
    env.mem().write_file(kPath, kOld);
  }
  if (start == Start::kOnlyBackupHoldsOld) {
    env.mem().write_file(kPath, "{\"v\":");  // torn by some earlier tool
    env.mem().write_file(kBak, kOld);
  }
  env.mem().sync_everything();
}

struct Outcome {
  bool done_ok = false;
  uint64_t steps_at_done = 0;
};

// Starts a process, persists kNew with a crash armed after `cut` steps, runs
// everything, and reports whether done(ok) came before the cut.
Outcome persist_with_cut(MetaTestEnv& env, std::optional<uint64_t> cut) {
  Outcome outcome;
  ConfigFile file(env, kPath);
  EXPECT_TRUE(load_into(file).ok());
  if (cut) env.mem().arm_crash_after(*cut);
  file.persist(kNew, [&](Status status) {
    outcome.done_ok = status.ok();
    outcome.steps_at_done = env.mem().steps();
  });
  env.run_all();
  return outcome;
}

void check_every_cut_point(Start start) {
  LogCapture quiet(LogLevel::kError);  // loads from .bak warn by design
  uint64_t total = 0;
  {
    MetaTestEnv env;
    prepare(env, start);
    const uint64_t before = env.mem().steps();
    ASSERT_TRUE(persist_with_cut(env, std::nullopt).done_ok);
    total = env.mem().steps() - before;
  }
  ASSERT_GE(total, 5u);  // tmp open+write+sync, rename, sync_dir at least
  const bool had_old = start == Start::kFileHoldsOld || start == Start::kOnlyBackupHoldsOld;
  const std::vector<std::pair<PowerLoss, uint64_t>> losses = {
      {PowerLoss::kLoseUnsynced, 0}, {PowerLoss::kKeepUnsynced, 0}, {PowerLoss::kRandom, 1},
      {PowerLoss::kRandom, 2},       {PowerLoss::kRandom, 3},       {PowerLoss::kRandom, 4},
      {PowerLoss::kRandom, 5},       {PowerLoss::kRandom, 6}};
  for (uint64_t cut = 0; cut <= total; ++cut) {
    for (const auto& [mode, seed] : losses) {
      SCOPED_TRACE("cut after step " + std::to_string(cut) + " of " + std::to_string(total) + ", mode " +
                   std::to_string(static_cast<int>(mode)) + ", seed " + std::to_string(seed));
      MetaTestEnv env;
      prepare(env, start);
      const uint64_t crash_step = env.mem().steps() + cut;
      Outcome outcome = persist_with_cut(env, cut);
      env.mem().crash(mode, seed);
      Loaded loaded = load(env);
      ASSERT_TRUE(loaded.source.ok()) << loaded.source.status().to_string();
      if (outcome.done_ok && outcome.steps_at_done <= crash_step) {
        EXPECT_EQ(loaded.content, kNew) << "done(ok) was reported before the power loss";
      } else if (had_old) {
        EXPECT_TRUE(loaded.content == kOld || loaded.content == kNew) << loaded.content;
      } else {
        EXPECT_TRUE(*loaded.source == LoadSource::kNone || loaded.content == kNew) << loaded.content;
      }
      // The next process can always persist again, whatever was left behind.
      ConfigFile next(env, kPath);
      ASSERT_TRUE(load_into(next).ok());
      ASSERT_TRUE(persist_and_wait(env, next, R"({"v":"next"})").ok());
      env.mem().crash(PowerLoss::kLoseUnsynced);
      EXPECT_EQ(load(env).content, R"({"v":"next"})");
    }
  }
}

TEST(ConfigFilePowerLoss, EveryCutPointLeavesOldOrNewWhenFileHoldsOld) { check_every_cut_point(Start::kFileHoldsOld); }
TEST(ConfigFilePowerLoss, EveryCutPointLeavesOldOrNewWhenOnlyBackupHoldsOld) {
  check_every_cut_point(Start::kOnlyBackupHoldsOld);
}
TEST(ConfigFilePowerLoss, EveryCutPointLeavesNothingOrNewOnFirstPersist) { check_every_cut_point(Start::kNothing); }
TEST(ConfigFilePowerLoss, EveryCutPointLeavesNothingOrNewWhenDirectoryIsCreated) {
  check_every_cut_point(Start::kNoDirectory);
}

// --- JSON helpers

TEST(ConfigFileJson, QuotesFastjsonIntegerKeys) {
  EXPECT_EQ(quote_numeric_keys("{0:12,1:7}"), R"({"0":12,"1":7})");
  EXPECT_EQ(quote_numeric_keys("{ -1 : 5 }"), R"({ "-1" : 5 })");
  EXPECT_EQ(quote_numeric_keys("{\n\t\"T@G\":{\n\t\t0:250,\n\t\t12:248\n\t}\n}"),
            "{\n\t\"T@G\":{\n\t\t\"0\":250,\n\t\t\"12\":248\n\t}\n}");
  EXPECT_EQ(quote_numeric_keys("[1,2,{3:4}]"), R"([1,2,{"3":4}])");
}

TEST(ConfigFileJson, LeavesStringsAndValidJsonAlone) {
  const std::string tricky = R"({"a":"{0:1,2:3}","b\"{4:5}":1,"c":"\\",5:6})";
  EXPECT_EQ(quote_numeric_keys(tricky), R"({"a":"{0:1,2:3}","b\"{4:5}":1,"c":"\\","5":6})");
  const std::string valid = R"({"x":[1, 2, -3], "y": {"0": 1}, "z": 1.5e3})";
  EXPECT_EQ(quote_numeric_keys(valid), valid);
}

TEST(ConfigFileJson, ParseErrorsNameTheFileAndPosition) {
  Result<nlohmann::json> bad = parse_json("{\"a\": tru}", "/x/topics.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kCorruption);
  EXPECT_NE(bad.status().message().find("/x/topics.json"), std::string::npos);
  EXPECT_NE(bad.status().message().find("column"), std::string::npos) << bad.status().message();
  Result<nlohmann::json> good = parse_json("{0:1}", "f");
  ASSERT_TRUE(good.ok());
  EXPECT_EQ((*good)["0"], 1);
}

TEST(ConfigFileJson, FieldReadersCheckTypesAndRanges) {
  const nlohmann::json object =
      nlohmann::json::parse(R"({"i":3000000000,"s":"x","b":1,"n":null,"u":18446744073709551615})");
  int32_t i32 = 7;
  Status status = read_json_field(object, "i", &i32, "here");
  EXPECT_EQ(status.code(), StatusCode::kCorruption);
  EXPECT_NE(status.message().find("\"i\""), std::string::npos) << status.message();
  int64_t i64 = 0;
  EXPECT_TRUE(read_json_field(object, "i", &i64, "here").ok());
  EXPECT_EQ(i64, 3000000000);
  EXPECT_FALSE(read_json_field(object, "u", &i64, "here").ok());
  bool flag = false;
  EXPECT_FALSE(read_json_field(object, "b", &flag, "here").ok());
  std::string text = "keep";
  EXPECT_TRUE(read_json_field(object, "n", &text, "here").ok());        // null: default kept
  EXPECT_TRUE(read_json_field(object, "missing", &text, "here").ok());  // missing: default kept
  EXPECT_EQ(text, "keep");
  EXPECT_FALSE(read_json_field(object, "s", &i64, "here").ok());
}

TEST(ConfigFileJson, DataVersionRoundTrip) {
  DataVersion version;
  version.next(1234);
  version.next(5678);
  Result<DataVersion> back = DataVersion::from_json(version.to_json(), "here");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, version);
  EXPECT_EQ(back->counter, 2);
  EXPECT_EQ(back->timestamp, 5678);
  EXPECT_FALSE(DataVersion::from_json(nlohmann::json::array(), "here").ok());
}

}  // namespace
}  // namespace mqlab::meta::config_file_test
