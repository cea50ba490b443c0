// ScheduleMessageService and the DELAY put path: messageDelayLevel parsing, a delayed message parked in
// SCHEDULE_TOPIC_XXXX and put back when due (exactly once, unchanged), clamping, bad DELAY values, restarts,
// kill -9 and power loss in the middle (no scheduled message lost), delayOffset.json, SLAVE, on a StoreSimWorld.
#include "broker/store/schedule_message_service.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "broker/common/log.h"
#include "broker/env/path.h"
#include "broker/store/test/store_sim_world.h"

namespace mqlab::store::testing::schedule_message_service_test {
namespace {

constexpr const char* kDelayOffsetPath = "/store/config/delayOffset.json";

struct Delivered {
  std::string topic;
  int32_t queue_id = 0;
  int32_t reconsume_times = 0;
  std::string body;
  MessageProperties properties;
  int64_t store_timestamp_ms = 0;
};

// Every message of (topic, queue_id), in queue order.
std::vector<Delivered> read_queue(MessageStore& store, const std::string& topic, int32_t queue_id) {
  std::vector<Delivered> messages;
  QueueOffset offset = store.min_offset_in_queue(topic, queue_id);
  while (offset < store.max_offset_in_queue(topic, queue_id)) {
    GetMessageResult result = store.get_message("test", topic, queue_id, offset, 32);
    EXPECT_EQ(result.status, GetMessageStatus::FOUND) << get_message_status_name(result.status);
    if (result.status != GetMessageStatus::FOUND) break;
    for (const FileRegion& region : result.messages) {
      Result<std::vector<uint8_t>> bytes = MessageStore::read_region(region);
      EXPECT_TRUE(bytes.ok()) << bytes.status().to_string();
      if (!bytes.ok()) continue;
      Result<DecodedRecord> decoded = decode_record(*bytes);
      EXPECT_TRUE(decoded.ok()) << decoded.status().to_string();
      if (!decoded.ok()) continue;
      const DecodedMessage& m = decoded->message;
      messages.push_back({std::string(m.topic), m.queue_id, m.reconsume_times, std::string(m.body.begin(), m.body.end()),
                          m.properties(), m.store_timestamp_ms});
    }
    offset = result.next_begin_offset;
  }
  return messages;
}

MessageToStore delayed(const std::string& topic, int32_t queue_id, const std::string& body, int32_t level) {
  MessageToStore message = make_message(topic, queue_id, body, "key-" + body, "TagA");
  message.properties["origin"] = "producer";
  message.properties[std::string(kPropertyDelayLevel)] = std::to_string(level);
  message.reconsume_times = 2;
  message.flag = 7;
  return message;
}

std::string read_file(MessageStore& store, const std::string& path) {
  Result<std::shared_ptr<env::File>> file = store.env().files().open(path, env::OpenOptions{});
  EXPECT_TRUE(file.ok()) << file.status().to_string();
  if (!file.ok()) return "";
  std::string content(static_cast<size_t>((*file)->size().value()), '\0');
  EXPECT_TRUE((*file)->pread(0, std::span<uint8_t>(reinterpret_cast<uint8_t*>(content.data()), content.size())).ok());
  return content;
}

void write_file(MessageStore& store, const std::string& path, const std::string& content) {
  ASSERT_TRUE(store.env().files().mkdirs(env::parent_dir(path)).ok());
  Result<std::shared_ptr<env::File>> file =
      store.env().files().open(path, env::OpenOptions{.create = true, .truncate = true});
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  ASSERT_TRUE((*file)->pwrite(0, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(content.data()),
                                                          content.size()))
                  .ok());
}

// Every body delivered to T queue 0, with how often.
std::map<std::string, int> delivered_counts(MessageStore& store) {
  std::map<std::string, int> counts;
  for (const Delivered& m : read_queue(store, "T", 0)) ++counts[m.body];
  return counts;
}

// --- messageDelayLevel ----------------------------------------------------------

TEST(MessageDelayLevel, DefaultIsRocketMqsEighteenLevels) {
  const std::vector<int64_t> levels = MessageStoreConfig{}.delay_levels_ms();
  ASSERT_EQ(levels.size(), 18u);
  EXPECT_EQ(levels[0], 1'000);
  EXPECT_EQ(levels[1], 5'000);
  EXPECT_EQ(levels[2], 10'000);
  EXPECT_EQ(levels[4], 60'000);
  EXPECT_EQ(levels.back(), 7'200'000);
  EXPECT_EQ(parse_message_delay_level("  2s   1d ").value(), (std::vector<int64_t>{2'000, 86'400'000}));
}

TEST(MessageDelayLevel, BadValuesAreErrorsNamingTheKeyAndTheItem) {
  for (const char* bad : {"", "   ", "1s 5x", "5", "s", "0s", "-1s", "1.5s", "1s,2s", "99999999999999h"}) {
    Result<std::vector<int64_t>> parsed = parse_message_delay_level(bad);
    ASSERT_FALSE(parsed.ok()) << "'" << bad << "'";
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("messageDelayLevel"), std::string::npos) << parsed.status().to_string();
  }
  EXPECT_NE(parse_message_delay_level("1s 5x").status().message().find("'5x'"), std::string::npos);
  std::string too_many;
  for (size_t i = 0; i <= kMaxDelayLevels; ++i) too_many += "1s ";
  EXPECT_FALSE(parse_message_delay_level(too_many).ok());

  MessageStoreConfig config = small_store_config();
  EXPECT_TRUE(config.validate().ok());
  config.messageDelayLevel = "1s 5x";
  EXPECT_NE(config.validate().message().find("messageDelayLevel"), std::string::npos);
  EXPECT_EQ(config.set_property("messageDelayLevel", "1s 2s").value(), true);  // a broker.conf key of the store
  EXPECT_EQ(config.delay_levels_ms(), (std::vector<int64_t>{1'000, 2'000}));
}

TEST(MessageDelayLevel, AStoreWithABadValueDoesNotStart) {
  MessageStoreConfig config = small_store_config();
  config.messageDelayLevel = "1s 10q 1m";
  StoreSimWorld world(config);
  const Status status = world.start();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("messageDelayLevel"), std::string::npos) << status.to_string();
  EXPECT_NE(status.message().find("'10q'"), std::string::npos) << status.to_string();
}

// --- the put path -------------------------------------------------------------

TEST(ScheduleMessageService, ADelayedPutIsParkedInTheScheduleTopicWithItsDeliverTime) {
  StoreSimWorld world(small_store_config());
  ASSERT_TRUE(world.start().ok());
  const PutMessageResult put = world.put(delayed("T", 3, "m0", 2));
  ASSERT_EQ(put.status, PutMessageStatus::PUT_OK);
  world.run_for(millis(10));
  EXPECT_EQ(world.store().max_offset_in_queue("T", 3), QueueOffset(0));
  ASSERT_EQ(world.store().max_offset_in_queue(std::string(kScheduleTopic), 1), QueueOffset(1));  // level 2 -> queue 1
  const std::vector<Delivered> parked = read_queue(world.store(), std::string(kScheduleTopic), 1);
  ASSERT_EQ(parked.size(), 1u);
  EXPECT_EQ(parked[0].properties.at("REAL_TOPIC"), "T");
  EXPECT_EQ(parked[0].properties.at("REAL_QID"), "3");
  EXPECT_EQ(parked[0].properties.at("DELAY"), "2");
  Result<std::optional<ConsumeQueueEntry>> entry =
      world.store().find_consume_queue(std::string(kScheduleTopic), 1)->get(QueueOffset(0));
  ASSERT_TRUE(entry.ok() && entry->has_value());
  EXPECT_EQ((*entry)->tags_code, put.append.store_timestamp_ms + 5'000);  // the tag code is the deliver time
}

TEST(ScheduleMessageService, ADelayedMessageIsConsumableOnlyAfterItsLevelsDelayAndExactlyOnce) {
  StoreSimWorld world(small_store_config());
  ASSERT_TRUE(world.start().ok());
  const Nanos put_at = world.scheduler().now();
  ASSERT_EQ(world.put(delayed("T", 3, "m0", 2)).status, PutMessageStatus::PUT_OK);
  world.run_for(put_at + millis(4'990) - world.scheduler().now());
  EXPECT_EQ(world.store().max_offset_in_queue("T", 3), QueueOffset(0)) << "consumable before level 2's 5 s";
  world.run_for(millis(20));
  ASSERT_EQ(world.store().max_offset_in_queue("T", 3), QueueOffset(1)) << "not consumable 5 s after the put";
  world.run_for(seconds(600));
  const std::vector<Delivered> got = read_queue(world.store(), "T", 3);
  ASSERT_EQ(got.size(), 1u);
  const Delivered& m = got[0];
  EXPECT_EQ(m.topic, "T");
  EXPECT_EQ(m.queue_id, 3);
  EXPECT_EQ(m.body, "m0");
  EXPECT_EQ(m.reconsume_times, 2);
  EXPECT_EQ(m.properties.at("KEYS"), "key-m0");
  EXPECT_EQ(m.properties.at("TAGS"), "TagA");
  EXPECT_EQ(m.properties.at("origin"), "producer");
  EXPECT_FALSE(m.properties.contains("DELAY"));  // or it would be parked again
  EXPECT_FALSE(m.properties.contains("WAIT"));
  EXPECT_EQ(m.properties.at("REAL_TOPIC"), "T");  // RocketMQ keeps them
  EXPECT_EQ(world.store().schedule_message_service().stats().delivered, 1u);
  EXPECT_EQ(world.store().schedule_message_service().offset_table().at(2), 1);
  // The copy is indexed under its real topic, so QUERY_MESSAGE by key finds it.
  EXPECT_EQ(world.store().query_message("T", "key-m0", 32, 0, INT64_MAX).value().size(), 1u);
}

TEST(ScheduleMessageService, LevelsRunSideBySideEachInItsOwnOrder) {
  MessageStoreConfig config = small_store_config();
  config.messageDelayLevel = "1s 3s 2s";
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  const Nanos start = world.scheduler().now();
  std::map<std::string, Nanos> due;
  for (int i = 0; i < 9; ++i) {
    const int32_t level = 1 + i % 3;
    const std::string body = "m" + std::to_string(i);
    due[body] = world.scheduler().now() + seconds(level == 1 ? 1 : level == 2 ? 3 : 2);
    ASSERT_EQ(world.put(delayed("T", 0, body, level)).status, PutMessageStatus::PUT_OK);
    world.run_for(millis(100));
  }
  // Step through time; nothing may appear before its due time.
  std::map<std::string, Nanos> seen;
  while (world.scheduler().now() < start + seconds(10)) {
    world.run_for(millis(10));
    for (const Delivered& m : read_queue(world.store(), "T", 0)) seen.try_emplace(m.body, world.scheduler().now());
  }
  ASSERT_EQ(seen.size(), 9u);
  for (const auto& [body, at] : seen) {
    // Store timestamps are whole ms of the wall clock, so up to 1 ms early.
    EXPECT_GE(at + millis(1), due.at(body)) << body << " came early";
    EXPECT_LE(at, due.at(body) + millis(20)) << body << " came late";
  }
  EXPECT_EQ(read_queue(world.store(), "T", 0).size(), 9u);
}

TEST(ScheduleMessageService, ALevelAboveTheLastIsClampedAndLevelZeroOrBelowIsNotDelayed) {
  MessageStoreConfig config = small_store_config();
  config.messageDelayLevel = "1s 2s";
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  ASSERT_EQ(world.put(delayed("T", 0, "clamped", 7)).status, PutMessageStatus::PUT_OK);
  ASSERT_EQ(world.put(delayed("T", 0, "zero", 0)).status, PutMessageStatus::PUT_OK);
  ASSERT_EQ(world.put(delayed("T", 0, "negative", -3)).status, PutMessageStatus::PUT_OK);
  world.run_for(millis(10));
  EXPECT_EQ(world.store().max_offset_in_queue(std::string(kScheduleTopic), 1), QueueOffset(1));
  EXPECT_EQ(read_queue(world.store(), std::string(kScheduleTopic), 1).at(0).properties.at("DELAY"), "2");
  EXPECT_EQ(world.store().max_offset_in_queue("T", 0), QueueOffset(2));  // zero and negative at once
  world.run_for(millis(1'950));
  EXPECT_EQ(world.store().max_offset_in_queue("T", 0), QueueOffset(2));
  world.run_for(millis(100));
  EXPECT_EQ(read_queue(world.store(), "T", 0).back().body, "clamped");
}

TEST(ScheduleMessageService, ADelayThatIsNotANumberIsRefusedAndNothingIsStored) {
  StoreSimWorld world(small_store_config());
  ASSERT_TRUE(world.start().ok());
  MessageToStore message = delayed("T", 0, "bad", 1);
  message.properties["DELAY"] = "soon";
  const PutMessageResult put = world.put(std::move(message));
  EXPECT_EQ(put.status, PutMessageStatus::MESSAGE_ILLEGAL);
  EXPECT_NE(put.remark.find("DELAY=soon"), std::string::npos) << put.remark;
  EXPECT_EQ(world.store().max_phy_offset(), PhyOffset(0));
}

TEST(ScheduleMessageService, TransactionHalvesAreNotDelayed) {
  MessageToStore message = delayed("T", 0, "half", 2);
  message.sysflag = kSysFlagTransactionPrepared;
  ASSERT_TRUE(transform_delay_level_message(message, 18).ok());
  EXPECT_EQ(message.topic, "T");
  message.sysflag = kSysFlagTransactionCommit;  // a committed one is
  ASSERT_TRUE(transform_delay_level_message(message, 18).ok());
  EXPECT_EQ(message.topic, kScheduleTopic);
  EXPECT_EQ(message.queue_id, 1);
}

TEST(ScheduleMessageService, AnEntryThatCannotBeDeliveredIsReportedAndSkippedWithoutHoldingItsLevel) {
  StoreSimWorld world(small_store_config());
  ASSERT_TRUE(world.start().ok());
  // Records no put of a delayed message writes: no REAL_QID; REAL_TOPIC the schedule topic itself.
  MessageToStore orphan = make_message(std::string(kScheduleTopic), 0, "orphan");
  orphan.properties["REAL_TOPIC"] = "T";
  MessageToStore looping = make_message(std::string(kScheduleTopic), 0, "looping");
  looping.properties["REAL_TOPIC"] = std::string(kScheduleTopic);
  looping.properties["REAL_QID"] = "0";
  std::vector<std::string> errors;
  set_log_sink([&](LogLevel level, std::string_view, std::string_view message) {
    if (level == LogLevel::kError) errors.emplace_back(message);
  });
  ASSERT_EQ(world.put(std::move(orphan)).status, PutMessageStatus::PUT_OK);
  ASSERT_EQ(world.put(std::move(looping)).status, PutMessageStatus::PUT_OK);
  ASSERT_EQ(world.put(delayed("T", 0, "fine", 1)).status, PutMessageStatus::PUT_OK);
  world.run_for(seconds(2));
  set_log_sink(nullptr);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("REAL_QID"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("delivered forever"), std::string::npos) << errors[1];
  EXPECT_EQ(world.store().schedule_message_service().stats().skipped, 2u);
  const std::vector<Delivered> got = read_queue(world.store(), "T", 0);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].body, "fine");
  EXPECT_EQ(world.store().max_offset_in_queue(std::string(kScheduleTopic), 0), QueueOffset(3));  // nothing re-parked
}

// --- restarts, crashes, power loss -----------------------------------------------------

// Puts `count` messages to T queue 0 over levels 1..3 ("1s 2s 4s"), one every
// 100 ms, and returns their bodies.
std::vector<std::string> put_spread(StoreSimWorld& world, int count) {
  std::vector<std::string> bodies;
  for (int i = 0; i < count; ++i) {
    bodies.push_back("s" + std::to_string(i));
    const PutMessageResult put = world.put(delayed("T", 0, bodies.back(), 1 + i % 3));
    EXPECT_EQ(put.status, PutMessageStatus::PUT_OK);
    world.run_for(millis(100));
  }
  return bodies;
}

MessageStoreConfig restart_config(FlushDiskType flush = FlushDiskType::SYNC_FLUSH) {
  MessageStoreConfig config = small_store_config(flush);
  config.messageDelayLevel = "1s 2s 4s";
  config.flushDelayOffsetInterval = 500;
  return config;
}

TEST(ScheduleMessageService, ACleanRestartInTheMiddleDeliversEachMessageExactlyOnce) {
  StoreSimWorld world(restart_config());
  ASSERT_TRUE(world.start().ok());
  const std::vector<std::string> bodies = put_spread(world, 30);
  const size_t before = delivered_counts(world.store()).size();
  ASSERT_GT(before, 0u);
  ASSERT_LT(before, bodies.size());  // the restart is in the middle
  ASSERT_TRUE(world.shutdown().ok());
  ASSERT_TRUE(world.start().ok());
  EXPECT_FALSE(world.store().recovery_report().abnormal);
  world.run_for(seconds(10));
  const std::map<std::string, int> counts = delivered_counts(world.store());
  for (const std::string& body : bodies) EXPECT_EQ(counts.count(body) ? counts.at(body) : 0, 1) << body;
  EXPECT_EQ(counts.size(), bodies.size());
}

TEST(ScheduleMessageService, DelayOffsetJsonHoldsTheNextOffsetOfEachLevel) {
  StoreSimWorld world(restart_config());
  ASSERT_TRUE(world.start().ok());
  put_spread(world, 6);  // two per level
  world.run_for(seconds(5));
  ASSERT_TRUE(world.shutdown().ok());
  ASSERT_TRUE(world.start().ok());
  const std::string content = read_file(world.store(), kDelayOffsetPath);
  EXPECT_EQ(nlohmann::json::parse(content),
            nlohmann::json::parse(R"({"offsetTable":{"1":2,"2":2,"3":2}})"));
  EXPECT_EQ(world.store().schedule_message_service().offset_table(),
            (std::map<int32_t, int64_t>{{1, 2}, {2, 2}, {3, 2}}));
}

TEST(ScheduleMessageService, AKillInTheMiddleLosesNoScheduledMessage) {
  StoreSimWorld world(restart_config());
  ASSERT_TRUE(world.start().ok());
  const std::vector<std::string> bodies = put_spread(world, 30);
  world.run_for(millis(700));  // past a periodic persist, and some deliveries after it
  world.crash();
  ASSERT_TRUE(world.start().ok());
  EXPECT_TRUE(world.store().recovery_report().abnormal);
  world.run_for(seconds(10));
  const std::map<std::string, int> counts = delivered_counts(world.store());
  int duplicates = 0;
  for (const std::string& body : bodies) {
    ASSERT_TRUE(counts.contains(body)) << body << " was lost";
    EXPECT_LE(counts.at(body), 2) << body;
    duplicates += counts.at(body) - 1;
  }
  // Only what was delivered since the last persist (500 ms) comes twice.
  EXPECT_LT(duplicates, 10);
}

// Under SYNC_FLUSH a delivered copy (WAIT=false) may sit in the page cache
// when the power goes: delayOffset.json must never have counted it.
TEST(ScheduleMessageService, APowerLossInTheMiddleLosesNoAcknowledgedScheduledMessage) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    StoreSimWorld world(restart_config(), sim::DiskProfile::sata_ssd(), seed);
    ASSERT_TRUE(world.start().ok());
    const std::vector<std::string> bodies = put_spread(world, 30);
    world.run_for(millis(100 * static_cast<int64_t>(seed)));
    world.power_loss();
    ASSERT_TRUE(world.start().ok()) << "seed " << seed;
    world.run_for(seconds(10));
    const std::map<std::string, int> counts = delivered_counts(world.store());
    for (const std::string& body : bodies) EXPECT_TRUE(counts.contains(body)) << body << " lost, seed " << seed;
  }
}

// --- roles and the offsets file ------------------------------------------------------

TEST(ScheduleMessageService, ASlaveDoesNotDeliverAndAPromotedMasterDoes) {
  MessageStoreConfig config = restart_config();
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  ASSERT_EQ(world.put(delayed("T", 0, "waiting", 3)).status, PutMessageStatus::PUT_OK);
  ASSERT_TRUE(world.shutdown().ok());

  world.config().brokerRole = BrokerRole::SLAVE;
  ASSERT_TRUE(world.start().ok());
  world.run_for(seconds(30));
  EXPECT_FALSE(world.store().schedule_message_service().started());
  EXPECT_EQ(world.store().max_offset_in_queue("T", 0), QueueOffset(0));
  ASSERT_TRUE(world.shutdown().ok());

  world.config().brokerRole = BrokerRole::ASYNC_MASTER;  // promoted: restarted as a master
  ASSERT_TRUE(world.start().ok());
  world.run_for(millis(10));
  EXPECT_EQ(read_queue(world.store(), "T", 0).size(), 1u);  // long overdue: delivered at once
}

TEST(ScheduleMessageService, FastjsonOffsetsLoadAndGarbageFallsBackToTheBackup) {
  StoreSimWorld world(restart_config());
  ASSERT_TRUE(world.start().ok());
  put_spread(world, 3);  // one per level
  world.run_for(seconds(5));
  // RocketMQ's own file: unquoted numeric keys.
  write_file(world.store(), kDelayOffsetPath, "{\"offsetTable\":{1:1,2:0,3:1}}");
  world.crash();
  ASSERT_TRUE(world.start().ok());
  EXPECT_EQ(world.store().schedule_message_service().offset_table(),
            (std::map<int32_t, int64_t>{{1, 1}, {2, 0}, {3, 1}}));
  world.run_for(seconds(1));
  EXPECT_EQ(delivered_counts(world.store()).at("s1"), 2);  // level 2 started over, as the file said

  ASSERT_TRUE(world.shutdown().ok());  // writes the file; its previous content goes to the .bak
  ASSERT_TRUE(world.start().ok());
  write_file(world.store(), kDelayOffsetPath, "{\"offsetTable\":{1:");
  world.crash();
  std::vector<std::string> warnings;
  set_log_sink([&](LogLevel level, std::string_view, std::string_view message) {
    if (level >= LogLevel::kWarn) warnings.emplace_back(message);
  });
  const Status restarted = world.start();
  set_log_sink(nullptr);
  ASSERT_TRUE(restarted.ok()) << restarted.to_string();
  EXPECT_EQ(world.store().schedule_message_service().offset_table(),
            (std::map<int32_t, int64_t>{{1, 1}, {2, 1}, {3, 1}}));
  bool reported = false;
  for (const std::string& warning : warnings) reported |= warning.find("delayOffset.json.bak") != std::string::npos;
  EXPECT_TRUE(reported) << "the fallback to the .bak was not reported";
}

TEST(ScheduleMessageService, OffsetsThatNeitherFileHoldsStopTheStartNamingTheFile) {
  StoreSimWorld world(restart_config());
  ASSERT_TRUE(world.start().ok());
  write_file(world.store(), kDelayOffsetPath, "{\"offsetTable\":{\"1\":-4}}");
  write_file(world.store(), std::string(kDelayOffsetPath) + ".bak", "not json");
  world.crash();
  const Status status = world.start();
  EXPECT_EQ(status.code(), StatusCode::kCorruption);
  EXPECT_NE(status.message().find("delayOffset.json"), std::string::npos) << status.to_string();
  EXPECT_NE(status.message().find("negative"), std::string::npos) << status.to_string();
}

}  // namespace
}  // namespace mqlab::store::testing::schedule_message_service_test
