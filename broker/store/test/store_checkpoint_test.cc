// StoreCheckpoint: the 4.x byte layout, min_timestamp arithmetic, loading
// missing/short/garbage files as zeros, and that flush reports ok only once
// the values (and a new file's directory entry) survive a power loss. Runs on
// the in-memory MetaTestEnv, whose crash() forgets unsynced state.
#include "broker/store/store_checkpoint.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "broker/common/big_endian.h"
#include "broker/common/log.h"
#include "broker/meta/test/meta_test_env.h"

namespace mqlab::store::store_checkpoint_test {
namespace {

using meta::testenv::MetaTestEnv;
using meta::testenv::PowerLoss;

constexpr char kPath[] = "/store/checkpoint";

struct Values {
  int64_t physic = 0;
  int64_t logics = 0;
  int64_t index = 0;
  bool operator==(const Values&) const = default;
};
std::ostream& operator<<(std::ostream& out, const Values& v) {
  return out << "{physic " << v.physic << ", logics " << v.logics << ", index " << v.index << "}";
}
Values values_of(const StoreCheckpoint& checkpoint) {
  return {checkpoint.physic_msg_timestamp(), checkpoint.logics_msg_timestamp(), checkpoint.index_msg_timestamp()};
}

class StoreCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.mem().mkdirs("/store").ok());
    env_.mem().sync_everything();
  }

  Status flush_and_wait(StoreCheckpoint& checkpoint) {
    Status result = Status::Aborted("not called");
    checkpoint.flush([&](Status status) { result = std::move(status); });
    env_.run_all();
    return result;
  }
  // A new process's view of the file.
  Values reload() {
    StoreCheckpoint checkpoint(env_, kPath);
    EXPECT_TRUE(checkpoint.load().ok());
    return values_of(checkpoint);
  }

  MetaTestEnv env_;
  meta::testenv::LogCapture log_;
  std::vector<std::string>& warnings_ = log_.warnings;
};

std::string header(int64_t physic, int64_t logics, int64_t index) {
  std::string bytes(24, '\0');
  auto* out = reinterpret_cast<uint8_t*>(bytes.data());
  put_u64_be(out, static_cast<uint64_t>(physic));
  put_u64_be(out + 8, static_cast<uint64_t>(logics));
  put_u64_be(out + 16, static_cast<uint64_t>(index));
  return bytes;
}

TEST_F(StoreCheckpointTest, MissingFileMeansZerosAndIsNotCreatedByLoad) {
  StoreCheckpoint checkpoint(env_, kPath);
  ASSERT_TRUE(checkpoint.load().ok());
  EXPECT_EQ(values_of(checkpoint), (Values{0, 0, 0}));
  EXPECT_EQ(checkpoint.min_timestamp(), 0);
  EXPECT_EQ(checkpoint.min_timestamp_index(), 0);
  EXPECT_FALSE(env_.mem().exists(kPath));
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(StoreCheckpointTest, FlushWritesTheFourKibFileIn4xLayout) {
  StoreCheckpoint checkpoint(env_, kPath);
  ASSERT_TRUE(checkpoint.load().ok());
  checkpoint.set_physic_msg_timestamp(1'700'000'000'123);
  checkpoint.set_logics_msg_timestamp(1'700'000'000'100);
  checkpoint.set_index_msg_timestamp(1'699'999'999'000);
  ASSERT_TRUE(flush_and_wait(checkpoint).ok());
  const std::string file = env_.mem().read_file(kPath).value_or("");
  ASSERT_EQ(file.size(), StoreCheckpoint::kFileSize);
  EXPECT_EQ(file.substr(0, 24), header(1'700'000'000'123, 1'700'000'000'100, 1'699'999'999'000));
  EXPECT_EQ(file.substr(24), std::string(4096 - 24, '\0'));

  // Later flushes rewrite only the 24 bytes.
  checkpoint.set_physic_msg_timestamp(1'700'000'001'000);
  env_.mem().op_log.clear();
  ASSERT_TRUE(flush_and_wait(checkpoint).ok());
  EXPECT_EQ(env_.mem().op_log, (std::vector<std::string>{"pwrite /store/checkpoint", "sync /store/checkpoint"}));
  EXPECT_EQ(env_.mem().read_file(kPath)->size(), StoreCheckpoint::kFileSize);

  env_.mem().crash(PowerLoss::kLoseUnsynced);
  EXPECT_EQ(reload(), (Values{1'700'000'001'000, 1'700'000'000'100, 1'699'999'999'000}));
}

TEST_F(StoreCheckpointTest, MinTimestampsFollowRocketMq) {
  StoreCheckpoint checkpoint(env_, kPath);
  checkpoint.set_physic_msg_timestamp(10'000);
  checkpoint.set_logics_msg_timestamp(8'000);
  checkpoint.set_index_msg_timestamp(9'000);
  EXPECT_EQ(checkpoint.min_timestamp(), 5'000);        // min(10000, 8000) - 3000
  EXPECT_EQ(checkpoint.min_timestamp_index(), 5'000);  // min(5000, 9000)
  checkpoint.set_index_msg_timestamp(1'000);
  EXPECT_EQ(checkpoint.min_timestamp_index(), 1'000);
  checkpoint.set_logics_msg_timestamp(2'999);
  EXPECT_EQ(checkpoint.min_timestamp(), 0);  // floored
  EXPECT_EQ(checkpoint.min_timestamp_index(), 0);
}

TEST_F(StoreCheckpointTest, FirstFlushSyncsTheDirectoryBeforeReportingOk) {
  StoreCheckpoint checkpoint(env_, kPath);
  ASSERT_TRUE(checkpoint.load().ok());
  checkpoint.set_physic_msg_timestamp(1'000'000);
  std::vector<std::string> events;
  env_.mem().op_log.clear();
  checkpoint.flush([&](Status status) {
    events = env_.mem().op_log;
    events.push_back("done " + status.to_string());
  });
  env_.run_all();
  EXPECT_EQ(events, (std::vector<std::string>{"open /store/checkpoint", "pwrite /store/checkpoint",
                                              "sync /store/checkpoint", "sync_dir /store", "done Ok"}));
}

TEST_F(StoreCheckpointTest, FlushesDuringTheFirstDirectorySyncWaitForIt) {
  StoreCheckpoint checkpoint(env_, kPath);
  ASSERT_TRUE(checkpoint.load().ok());
  std::vector<std::string> events;
  checkpoint.set_physic_msg_timestamp(1);
  checkpoint.flush([&](Status s) {
    events.push_back("first " + s.to_string() + " after " + env_.mem().op_log.back());
  });
  checkpoint.set_physic_msg_timestamp(2);
  checkpoint.flush([&](Status s) {
    events.push_back("second " + s.to_string() + " after " + env_.mem().op_log.back());
  });
  env_.run_all();
  EXPECT_EQ(events, (std::vector<std::string>{"first Ok after sync_dir /store", "second Ok after sync_dir /store"}));
  int dir_syncs = 0;
  for (const std::string& op : env_.mem().op_log) dir_syncs += op.starts_with("sync_dir") ? 1 : 0;
  EXPECT_EQ(dir_syncs, 1);
  env_.mem().crash(PowerLoss::kLoseUnsynced);
  EXPECT_EQ(reload().physic, 2);
}

// Every step of the first flush (create, write, sync, sync_dir) and of a
// later one, under every power-loss mode: the reloaded values are the old
// ones or the new ones, and the new ones once done(ok) was reported.
TEST_F(StoreCheckpointTest, PowerLossAtEveryStepLeavesOldOrNewValues) {
  for (bool existing : {false, true}) {
    for (uint64_t cut = 0; cut <= 5; ++cut) {
      for (uint64_t seed = 0; seed < 6; ++seed) {
        const PowerLoss mode = seed == 0 ? PowerLoss::kLoseUnsynced
                               : seed == 1 ? PowerLoss::kKeepUnsynced
                                           : PowerLoss::kRandom;
        SCOPED_TRACE("existing " + std::to_string(existing) + ", cut " + std::to_string(cut) + ", seed " +
                     std::to_string(seed));
        MetaTestEnv env;
        ASSERT_TRUE(env.mem().mkdirs("/store").ok());
        const int64_t old_value = existing ? 1'000 : 0;
        if (existing) env.mem().write_file(kPath, header(1'000, 1'000, 1'000) + std::string(4072, '\0'));
        env.mem().sync_everything();
        bool done_ok = false;
        uint64_t steps_at_done = 0;
        const uint64_t crash_step = env.mem().steps() + cut;
        {
          StoreCheckpoint checkpoint(env, kPath);
          ASSERT_TRUE(checkpoint.load().ok());
          env.mem().arm_crash_after(cut);
          checkpoint.set_physic_msg_timestamp(2'000);
          checkpoint.set_logics_msg_timestamp(2'000);
          checkpoint.set_index_msg_timestamp(2'000);
          checkpoint.flush([&](Status status) {
            done_ok = status.ok();
            steps_at_done = env.mem().steps();
          });
          env.run_all();
        }
        env.mem().crash(mode, seed);
        StoreCheckpoint loaded(env, kPath);
        ASSERT_TRUE(loaded.load().ok());
        const int64_t got = loaded.physic_msg_timestamp();
        if (done_ok && steps_at_done <= crash_step) {
          EXPECT_EQ(got, 2'000);
        } else {
          EXPECT_TRUE(got == old_value || got == 2'000) << got;
        }
        EXPECT_EQ(loaded.logics_msg_timestamp(), got);  // never a mix of two flushes
        EXPECT_EQ(loaded.index_msg_timestamp(), got);
      }
    }
  }
}

TEST_F(StoreCheckpointTest, ShortFileLoadsAsZerosWithAWarningAndIsRepaired) {
  env_.mem().write_file(kPath, header(5'000, 5'000, 5'000).substr(0, 10));
  StoreCheckpoint checkpoint(env_, kPath);
  ASSERT_TRUE(checkpoint.load().ok());
  EXPECT_EQ(values_of(checkpoint), (Values{0, 0, 0}));
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("holds 10 bytes"), std::string::npos) << warnings_[0];
  checkpoint.set_physic_msg_timestamp(7);
  ASSERT_TRUE(flush_and_wait(checkpoint).ok());
  EXPECT_EQ(env_.mem().read_file(kPath)->size(), StoreCheckpoint::kFileSize);
  EXPECT_EQ(reload(), (Values{7, 0, 0}));

  env_.mem().write_file(kPath, "");
  warnings_.clear();
  EXPECT_EQ(reload(), (Values{0, 0, 0}));
  EXPECT_EQ(warnings_.size(), 1u);
}

TEST_F(StoreCheckpointTest, ImplausibleValuesLoadAsZerosWithAWarning) {
  const std::vector<std::string> bad = {
      header(-1, 5'000, 5'000),                                                   // negative
      header(5'000, StoreCheckpoint::kMaxPlausibleTimestampMs + 1, 5'000),        // past 2100
      header(5'000, 5'000, INT64_MAX),
      std::string(4096, '\xff'),
      "{\"not\":\"a checkpoint at all, but long enough to hold 24 bytes\"}",
  };
  for (const std::string& content : bad) {
    env_.mem().write_file(kPath, content);
    warnings_.clear();
    EXPECT_EQ(reload(), (Values{0, 0, 0}));
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_NE(warnings_[0].find("torn or not a checkpoint"), std::string::npos) << warnings_[0];
  }
  // Random pages: any of them passing would need three values under 2^42.
  for (int i = 0; i < 100; ++i) {
    std::string page(4096, '\0');
    for (char& c : page) c = static_cast<char>(env_.random().next_u64());
    env_.mem().write_file(kPath, page);
    EXPECT_EQ(reload(), (Values{0, 0, 0}));
  }
  // The boundaries themselves are fine.
  env_.mem().write_file(kPath, header(0, StoreCheckpoint::kMaxPlausibleTimestampMs, 1));
  EXPECT_EQ(reload(), (Values{0, StoreCheckpoint::kMaxPlausibleTimestampMs, 1}));
}

TEST_F(StoreCheckpointTest, SyncFailuresAreReportedAndTheDirectorySyncIsRetried) {
  StoreCheckpoint checkpoint(env_, kPath);
  ASSERT_TRUE(checkpoint.load().ok());
  env_.mem().fault = [](std::string_view op, const std::string&) {
    return op == "sync_dir" ? Status::IoError("EIO") : Status::Ok();
  };
  Status status = flush_and_wait(checkpoint);
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_NE(status.message().find("syncing directory /store"), std::string::npos) << status.message();

  env_.mem().fault = [](std::string_view op, const std::string&) {
    return op == "sync" ? Status::IoError("EIO") : Status::Ok();
  };
  status = flush_and_wait(checkpoint);
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_NE(status.message().find("syncing checkpoint /store/checkpoint"), std::string::npos) << status.message();

  env_.mem().fault = nullptr;
  env_.mem().op_log.clear();
  checkpoint.set_index_msg_timestamp(3);
  EXPECT_TRUE(flush_and_wait(checkpoint).ok());
  EXPECT_EQ(env_.mem().op_log.back(), "sync_dir /store");  // still owed
  env_.mem().crash(PowerLoss::kLoseUnsynced);
  EXPECT_EQ(reload().index, 3);
}

TEST_F(StoreCheckpointTest, WriteFailureIsReportedOnTheExecutor) {
  StoreCheckpoint checkpoint(env_, kPath);
  env_.mem().fault = [](std::string_view op, const std::string&) {
    return op == "pwrite" ? Status::NoSpace("disk full") : Status::Ok();
  };
  bool called = false;
  Status result;
  checkpoint.flush([&](Status status) {
    called = true;
    result = status;
  });
  EXPECT_FALSE(called);
  env_.run_all();
  ASSERT_TRUE(called);
  EXPECT_EQ(result.code(), StatusCode::kNoSpace);
}

}  // namespace
}  // namespace mqlab::store::store_checkpoint_test
