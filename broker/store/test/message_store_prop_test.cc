// Model-based properties of the MessageStore under faults: random sequences
// of puts (random sizes, topics, queues, keys), time advances (flushes run),
// kill -9, power loss with torn sectors, and clean restarts, checked against
// a simple model after every recovery:
//   1. SYNC_FLUSH: every acknowledged message is present, byte-identical, at
//      its offsets.
//   2. ASYNC_FLUSH: after kill -9 every answered message is present (only
//      puts of the crash's last turn, still in the group write's buffer and
//      never answered, may be missing); after a power loss the log is a
//      prefix of what was written: no hole, no corrupt or invented message.
//   3. ConsumeQueues and the index agree exactly with the CommitLog.
//   4. Recovery is idempotent: crash again without writes, recover, same state.
// With recycling (recycleExpiredCommitLogEnable), retention runs among the
// operations too, deleting every segment but the active one and keeping one
// for reuse, so later segments are made from files full of old records:
// property 1 must hold as well, and the log must never show an old record.
// And a canary: SYNC_FLUSH acknowledged before its fsync (a test-only switch)
// must fail property 1, or the harness could not see loss at all.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <array>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "broker/common/log.h"
#include "broker/store/test/store_checker.h"
#include "broker/store/test/store_sim_world.h"

namespace mqlab::store::testing::message_store_prop_test {
namespace {

// 1,000 cases per property by default; RC_PARAMS set by the caller wins.
const bool kDefaultCases = [] {
  setenv("RC_PARAMS", "max_success=1000 max_size=60", /*overwrite=*/0);
  return true;
}();

struct Written {
  uint64_t seq = 0;
  std::string topic;
  int32_t queue_id = 0;
  std::string body;
  std::string key;
  bool acked = false;            // PUT_OK received
  bool answered = false;         // any reply received (the process lived to give it)
  std::optional<AppendMessageResult> append;  // known once a stored reply arrived
};

struct Outcome {
  std::string failure;  // empty when every check held
  int power_losses = 0;
  int crashes = 0;
  int acked = 0;
  int dropped_by_power_loss = 0;  // written messages a power loss took
  int unanswered_lost_by_crash = 0;  // puts of the crash's last turn, never answered
  int retention_runs = 0;
  int records_expired = 0;  // deleted by retention (no longer in the model)
  uint64_t segments_recycled = 0;
};

class StoreModelRun {
 public:
  StoreModelRun(FlushDiskType flush, uint64_t seed, bool ack_before_sync, bool recycling = false)
      : world_(make_config(flush, ack_before_sync, recycling), sim::DiskProfile::sata_ssd(), seed),
        flush_(flush),
        recycling_(recycling) {}

  Outcome run(const std::vector<std::array<uint16_t, 4>>& ops) {
    if (Status status = world_.start(); !status.ok()) return fail("first start: " + status.to_string());
    for (const auto& op : ops) {
      apply(op);
      if (!outcome_.failure.empty()) break;
    }
    if (outcome_.failure.empty()) {
      restart_and_check(Fault::kPowerLoss);
      --outcome_.power_losses;  // the final one is not "mid-run"
    }
    if (recycling_ && world_.running()) {
      const auto* allocator = world_.store().commit_log().file_queue().allocator();
      outcome_.segments_recycled = recycled_before_restarts_ + (allocator ? allocator->recycled() : 0);
    }
    return outcome_;
  }

 private:
  enum class Fault { kCrash, kPowerLoss, kClean };

  static MessageStoreConfig make_config(FlushDiskType flush, bool ack_before_sync, bool recycling) {
    MessageStoreConfig config = small_store_config(flush);
    config.testOnlyAckBeforeSync = ack_before_sync;
    if (recycling) {
      config.recycleExpiredCommitLogEnable = true;
      config.fileReservedTime = 0;  // a retention run deletes every segment but the active one
    }
    config.flushIntervalCommitLog = 50;
    config.flushIntervalConsumeQueue = 100;
    config.flushConsumeQueueThoroughInterval = 400;
    return config;
  }

  Outcome& fail(std::string why) {
    if (outcome_.failure.empty()) outcome_.failure = std::move(why);
    return outcome_;
  }

  void apply(const std::array<uint16_t, 4>& op) {
    const int kind = op[0] % 100;
    if (kind < 70 && recycling_) {
      // Bursts, so that a run fills several segments (retention, then two
      // rolls, before a kept segment is reused).
      for (uint16_t i = 0; i < 1 + op[1] % 8; ++i) {
        put({op[0], static_cast<uint16_t>(op[1] + i), static_cast<uint16_t>(op[2] + i), op[3]}, kind < 45);
      }
      return;
    }
    if (kind < 45) return put(op, /*wait=*/true);
    if (kind < 70) return put(op, /*wait=*/false);
    if (recycling_ && kind >= 80 && kind < 85) return expire();
    if (kind < 85) return world_.run_for(millis(op[1] % 700));
    if (kind < 92) return restart_and_check(Fault::kCrash);
    if (kind < 97) return restart_and_check(Fault::kPowerLoss);
    return restart_and_check(Fault::kClean);
  }

  void put(const std::array<uint16_t, 4>& op, bool wait) {
    static const char* const kTopics[] = {"TopicA", "TopicB", "%RETRY%group"};
    auto written = std::make_shared<Written>();
    written->seq = next_seq_++;
    written->topic = kTopics[op[1] % 3];
    written->queue_id = op[2] % 3;
    std::string body = "msg-" + std::to_string(written->seq) + "|";
    // With recycling, bodies up to ~3.5 KiB: a few dozen puts fill a segment.
    body.append(recycling_ ? op[3] * 7 % 3500 : op[3] % 700, static_cast<char>('a' + written->seq % 26));
    written->body = body;
    if (op[3] % 4 == 0) written->key = "key" + std::to_string(op[2] % 5);
    MessageToStore message = make_message(written->topic, written->queue_id, body, written->key);
    bool answered = false;
    const uint64_t incarnation = incarnation_;
    world_.store().put_message(std::move(message), [this, written, &answered, wait, incarnation](PutMessageResult r) {
      if (wait) answered = true;
      if (incarnation != incarnation_) return;  // a dead incarnation cannot answer (the scheduler drops it)
      written->answered = true;
      if (put_message_stored(r.status)) written->append = r.append;
      if (r.status == PutMessageStatus::PUT_OK) {
        written->acked = true;
        ++outcome_.acked;
      }
      if (!put_message_stored(r.status)) fail("put not stored: " + std::string(put_message_status_name(r.status)));
    });
    written_.push_back(written);
    if (wait) world_.run_until([&] { return answered; });
  }

  // Retention now, then long enough for the flush that makes its removals
  // durable (so no power loss can bring a deleted segment back, which the
  // model would read as records invented in front of the log). The model
  // forgets the deleted records; their queues' offsets start past them.
  void expire() {
    ++outcome_.retention_runs;
    const std::vector<LoggedRecord> before = scan_log(world_.store());
    world_.store().run_clean_now();
    world_.run_for(millis(200));
    const PhyOffset min = world_.store().min_phy_offset();
    size_t gone = 0;
    while (gone < before.size() && before[gone].offset < min) ++gone;
    if (gone > written_.size()) return void(fail("retention deleted records the model never wrote"));
    for (size_t i = 0; i < gone; ++i) {
      const Written& w = *written_[i];
      if (before[i].body != w.body) return void(fail("retention: record " + std::to_string(i) + " is not the model's"));
      ++queue_base_[{w.topic, w.queue_id}];
    }
    written_.erase(written_.begin(), written_.begin() + static_cast<std::ptrdiff_t>(gone));
    outcome_.records_expired += static_cast<int>(gone);
  }

  void restart_and_check(Fault fault) {
    if (recycling_) {
      const auto* allocator = world_.store().commit_log().file_queue().allocator();
      recycled_before_restarts_ += allocator ? allocator->recycled() : 0;
    }
    if (fault == Fault::kClean) {
      if (Status status = world_.shutdown(); !status.ok()) return void(fail("clean shutdown: " + status.to_string()));
    } else if (fault == Fault::kCrash) {
      ++outcome_.crashes;
      world_.crash();
    } else {
      ++outcome_.power_losses;
      world_.power_loss();
    }
    ++incarnation_;
    if (Status status = world_.start(); !status.ok()) return void(fail("restart: " + status.to_string()));
    const std::vector<LoggedRecord> log = scan_log(world_.store());
    check_against_model(log, fault);
    if (!outcome_.failure.empty()) return;
    outcome_.dropped_by_power_loss += static_cast<int>(written_.size() - log.size());
    written_.resize(log.size());  // what a power loss took is gone for good
    if (auto agree = consume_queues_agree(world_.store(), log); !agree) return void(fail(agree.message()));
    if (auto agree = index_agrees(world_.store(), log, all_keys_); !agree) return void(fail(agree.message()));
    check_idempotent(log);
  }

  void check_against_model(const std::vector<LoggedRecord>& log, Fault fault) {
    for (const auto& w : written_) {
      if (!w->key.empty()) all_keys_.insert({w->topic, w->key});
    }
    if (log.size() > written_.size()) return void(fail("log holds " + std::to_string(log.size()) +
                                                       " records but only " + std::to_string(written_.size()) +
                                                       " were written: invented records"));
    std::map<std::pair<std::string, int32_t>, int64_t> next_queue_offset = queue_base_;
    for (size_t i = 0; i < log.size(); ++i) {
      const Written& w = *written_[i];
      const LoggedRecord& r = log[i];
      const int64_t queue_offset = next_queue_offset[{w.topic, w.queue_id}]++;
      if (r.topic != w.topic || r.queue_id != w.queue_id || r.body != w.body) {
        return void(fail("record " + std::to_string(i) + " at " + r.offset.to_string() +
                         " is not the message written in that place (a hole or a foreign record)"));
      }
      if (r.queue_offset.value() != queue_offset) {
        return void(fail("record " + std::to_string(i) + " has queue offset " + r.queue_offset.to_string() +
                         ", expected " + std::to_string(queue_offset)));
      }
      if (w.append && (w.append->wrote_offset != r.offset || w.append->queue_offset != r.queue_offset)) {
        return void(fail("acknowledged record " + std::to_string(i) + " moved: acked at " +
                         w.append->wrote_offset.to_string() + ", found at " + r.offset.to_string()));
      }
    }
    // kill -9 keeps the page cache, so it keeps every answered put; a clean
    // shutdown keeps every put, answered or not.
    for (size_t i = log.size(); i < written_.size(); ++i) {
      const Written& w = *written_[i];
      if (fault == Fault::kClean) return void(fail("message " + std::to_string(w.seq) + " lost by a clean restart"));
      if (fault == Fault::kCrash && w.answered) {
        return void(fail("answered message " + std::to_string(w.seq) + " lost by a process crash"));
      }
      if (fault == Fault::kCrash) ++outcome_.unanswered_lost_by_crash;
      if (flush_ == FlushDiskType::SYNC_FLUSH && w.acked) {
        return void(fail("SYNC_FLUSH lost acknowledged message " + std::to_string(w.seq) + " (offset " +
                         w.append->wrote_offset.to_string() + ") in a power loss"));
      }
    }
  }

  void check_idempotent(const std::vector<LoggedRecord>& before) {
    world_.crash();
    ++incarnation_;
    if (Status status = world_.start(); !status.ok()) return void(fail("idempotence restart: " + status.to_string()));
    const std::vector<LoggedRecord> after = scan_log(world_.store());
    if (after.size() != before.size()) {
      return void(fail("recovering twice changed the log: " + std::to_string(before.size()) + " then " +
                       std::to_string(after.size()) + " records"));
    }
    for (size_t i = 0; i < after.size(); ++i) {
      if (after[i].bytes != before[i].bytes) return void(fail("recovering twice changed record " + std::to_string(i)));
    }
    if (auto agree = consume_queues_agree(world_.store(), after); !agree) {
      return void(fail("after a second recovery: " + std::string(agree.message())));
    }
  }

  StoreSimWorld world_;
  FlushDiskType flush_;
  bool recycling_ = false;
  // Per queue, how many of its records retention deleted: the first kept
  // record's queue offset.
  std::map<std::pair<std::string, int32_t>, int64_t> queue_base_;
  uint64_t recycled_before_restarts_ = 0;
  std::vector<std::shared_ptr<Written>> written_;
  std::set<std::pair<std::string, std::string>> all_keys_;
  uint64_t next_seq_ = 0;
  uint64_t incarnation_ = 0;
  Outcome outcome_;
};

Outcome run_model(FlushDiskType flush, bool ack_before_sync, bool recycling = false) {
  const auto seed = *rc::gen::inRange<uint64_t>(1, 1'000'000);
  // Uniform fields (not size-scaled), so faults are as likely in short
  // sequences as in long ones; shrinking still works field by field.
  // rc::gen::inRange scales with the size parameter; resize(100) makes the
  // fields uniform over their whole range at every size.
  const auto op = rc::gen::resize(100, rc::gen::apply(
      [](uint16_t kind, uint16_t a, uint16_t b, uint16_t c) { return std::array<uint16_t, 4>{kind, a, b, c}; },
      rc::gen::inRange<uint16_t>(0, 100), rc::gen::inRange<uint16_t>(0, 1000), rc::gen::inRange<uint16_t>(0, 1000),
      rc::gen::inRange<uint16_t>(0, 1000)));
  const auto ops = *rc::gen::container<std::vector<std::array<uint16_t, 4>>>(op);
  // MQLAB_TEST_LOG=1 shows the store's own account of a failing case.
  const LogLevel before = log_enabled(LogLevel::kDebug) ? LogLevel::kDebug
                          : log_enabled(LogLevel::kInfo) ? LogLevel::kInfo
                                                         : LogLevel::kWarn;
  set_log_level(std::getenv("MQLAB_TEST_LOG") ? LogLevel::kInfo : LogLevel::kError);
  StoreModelRun run(flush, seed, ack_before_sync, recycling);
  Outcome outcome = run.run(ops);
  set_log_level(before);
  return outcome;
}

}  // namespace

RC_GTEST_PROP(MessageStore, SyncFlushKeepsEveryAcknowledgedMessageThroughCrashesAndPowerLoss, ()) {
  const Outcome outcome = run_model(FlushDiskType::SYNC_FLUSH, /*ack_before_sync=*/false);
  RC_CLASSIFY(outcome.crashes > 0, "kill -9 mid-run");
  RC_CLASSIFY(outcome.power_losses > 0, "power loss mid-run");
  RC_CLASSIFY(outcome.dropped_by_power_loss > 0, "unacknowledged writes lost");
  if (!outcome.failure.empty()) RC_FAIL(outcome.failure);
}

RC_GTEST_PROP(MessageStore, SyncFlushWithRecycledSegmentsKeepsEveryAcknowledgedMessage, ()) {
  const Outcome outcome = run_model(FlushDiskType::SYNC_FLUSH, /*ack_before_sync=*/false, /*recycling=*/true);
  RC_CLASSIFY(outcome.segments_recycled > 0, "a segment made from a recycled one");
  RC_CLASSIFY(outcome.records_expired > 0, "retention deleted records");
  RC_CLASSIFY(outcome.crashes > 0, "kill -9 mid-run");
  RC_CLASSIFY(outcome.power_losses > 0, "power loss mid-run");
  if (!outcome.failure.empty()) RC_FAIL(outcome.failure);
}

RC_GTEST_PROP(MessageStore, AsyncFlushKeepsAPrefixWithNoHolesOrInventions, ()) {
  const Outcome outcome = run_model(FlushDiskType::ASYNC_FLUSH, /*ack_before_sync=*/false);
  RC_CLASSIFY(outcome.crashes > 0, "kill -9 mid-run");
  RC_CLASSIFY(outcome.power_losses > 0, "power loss mid-run");
  RC_CLASSIFY(outcome.dropped_by_power_loss > 0, "written messages lost (a shorter prefix)");
  RC_CLASSIFY(outcome.unanswered_lost_by_crash > 0, "kill -9 took unanswered puts of its last turn");
  if (!outcome.failure.empty()) RC_FAIL(outcome.failure);
}

// The canary: acknowledging SYNC_FLUSH before the fsync completes must be
// caught. If this test fails, the harness has gone blind to loss.
TEST(MessageStoreCanary, AckBeforeSyncIsCaughtAsLoss) {
  rc::detail::TestParams params;
  params.maxSuccess = 300;
  params.maxSize = 60;
  params.disableShrinking = true;
  rc::detail::TestMetadata metadata;
  const auto result = rc::detail::checkTestable(
      [] {
        const Outcome outcome = run_model(FlushDiskType::SYNC_FLUSH, /*ack_before_sync=*/true);
        if (!outcome.failure.empty()) RC_FAIL(outcome.failure);
      },
      metadata, params);
  rc::detail::FailureResult failure;
  ASSERT_TRUE(result.match(failure)) << "acknowledging before fsync lost nothing in 300 runs: the checker is blind";
  EXPECT_NE(failure.description.find("SYNC_FLUSH lost acknowledged message"), std::string::npos)
      << failure.description;
}

// The same canary as a plain scenario: one put acknowledged before its
// fsync, then the power goes, with no sector torn onto the medium.
TEST(MessageStoreCanary, AckBeforeSyncLosesTheMessageOnPowerLoss) {
  MessageStoreConfig config = small_store_config(FlushDiskType::SYNC_FLUSH);
  config.testOnlyAckBeforeSync = true;
  StoreSimWorld world(config, sim::DiskProfile::sata_ssd(), 3, /*torn_sector_probability=*/0.0);
  ASSERT_TRUE(world.start().ok());
  const PutMessageResult put = world.put(make_message("TopicA", 0, "acked too early"));
  ASSERT_EQ(put.status, PutMessageStatus::PUT_OK);
  world.power_loss();
  ASSERT_TRUE(world.start().ok());
  EXPECT_EQ(scan_log(world.store()).size(), 0u) << "the acknowledged message survived without an fsync?";
}

}  // namespace mqlab::store::testing::message_store_prop_test
