// MessageStore examples: put results and msgIds, every get_message status, lookups, segment roll, flush
// (group commit, timeouts, failed device, ASYNC thresholds), bad input and disk full, on a StoreSimWorld.
#include "broker/store/message_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "broker/common/big_endian.h"
#include "broker/common/log.h"
#include "broker/store/test/store_checker.h"
#include "broker/store/test/store_log_test.h"
#include "broker/store/test/store_sim_world.h"

namespace mqlab::store::testing::message_store_test {
namespace {

// A stored record decoded into owned values (decode_record's spans point
// into the bytes, which do not outlive the helper).
struct StoredMessage {
  std::string topic;
  int32_t queue_id = 0;
  QueueOffset queue_offset;
  PhyOffset phy_offset;
  std::string body;
  MessageProperties properties;
  int64_t store_timestamp_ms = 0;
  HostAddress store_host;
};

StoredMessage decode_stored(const std::vector<uint8_t>& bytes) {
  Result<DecodedRecord> decoded = decode_record(bytes);
  EXPECT_TRUE(decoded.ok()) << decoded.status().to_string();
  if (!decoded.ok()) return {};
  const DecodedMessage& m = decoded->message;
  return StoredMessage{std::string(m.topic), m.queue_id,      m.queue_offset,       m.physical_offset,
                       std::string(m.body.begin(), m.body.end()), m.properties(), m.store_timestamp_ms,
                       m.store_host};
}

std::vector<StoredMessage> decode_regions(const GetMessageResult& result) {
  std::vector<StoredMessage> messages;
  for (const FileRegion& region : result.messages) {
    Result<std::vector<uint8_t>> bytes = MessageStore::read_region(region);
    EXPECT_TRUE(bytes.ok()) << bytes.status().to_string();
    if (bytes.ok()) messages.push_back(decode_stored(*bytes));
  }
  return messages;
}

std::vector<std::string> bodies_of(const std::vector<StoredMessage>& messages) {
  std::vector<std::string> bodies;
  for (const StoredMessage& m : messages) bodies.push_back(m.body);
  return bodies;
}

void run_until_dispatched(StoreSimWorld& world) {
  world.run_until([&] { return world.store().dispatched_phy_offset() == world.store().max_phy_offset(); });
  ASSERT_EQ(world.store().dispatched_phy_offset(), world.store().max_phy_offset());
}

// The store's log lines are printed only when a test failed (StoreLogTest).
class MessageStoreTest : public StoreLogTest {};

// --- put ---------------------------------------------------------------------

TEST_F(MessageStoreTest, AsyncFlushPutReturnsOffsetsAndTheOffsetMsgIdOfTheStoreHost) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  const PutMessageResult first = world.put(make_message("TopicA", 0, "first"));
  ASSERT_EQ(first.status, PutMessageStatus::PUT_OK) << first.remark;
  EXPECT_EQ(first.append.wrote_offset, PhyOffset(0));
  EXPECT_EQ(first.append.wrote_bytes, kMessageFixedSizeIpv4 + 5 + 6);  // body "first", topic "TopicA", no properties
  EXPECT_EQ(first.append.queue_offset, QueueOffset(0));
  // Store host 10.0.0.1:10911 at offset 0, as ali-ons computes it from the record.
  EXPECT_EQ(first.append.msg_id(), "0A00000100002A9F0000000000000000");

  const PutMessageResult second = world.put(make_message("TopicA", 0, "second"));
  const PutMessageResult other_queue = world.put(make_message("TopicA", 1, "other queue"));
  ASSERT_EQ(second.status, PutMessageStatus::PUT_OK);
  ASSERT_EQ(other_queue.status, PutMessageStatus::PUT_OK);
  EXPECT_EQ(second.append.wrote_offset, first.append.end_offset());
  EXPECT_EQ(second.append.queue_offset, QueueOffset(1));
  EXPECT_EQ(other_queue.append.wrote_offset, second.append.end_offset());
  EXPECT_EQ(other_queue.append.queue_offset, QueueOffset(0));  // queue offsets count per (topic, queue)
  EXPECT_EQ(second.append.msg_id(), create_offset_message_id(kStoreHost, second.append.wrote_offset));
  Result<OffsetMessageId> id = decode_offset_message_id(other_queue.append.msg_id());
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(id->store_host, kStoreHost);
  EXPECT_EQ(id->offset, other_queue.append.wrote_offset);
  EXPECT_EQ(world.store().max_phy_offset(), other_queue.append.end_offset());

  // ASYNC_FLUSH acknowledges from the page cache: nothing was synced yet.
  EXPECT_LT(world.store().flushed_phy_offset(), world.store().max_phy_offset());
  EXPECT_EQ(world.store().stats().puts_ok, 3u);

  // The record itself carries the store host and the store timestamp.
  Result<std::vector<uint8_t>> bytes = world.store().look_message_by_offset(second.append.wrote_offset);
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  const StoredMessage stored = decode_stored(*bytes);
  EXPECT_EQ(stored.store_host, kStoreHost);
  EXPECT_EQ(stored.store_timestamp_ms, second.append.store_timestamp_ms);
  EXPECT_EQ(stored.body, "second");
}

// With pre-allocation a fresh store prepares its first CommitLog segment
// before it serves, as RocketMQ's first put waits for the allocate service:
// no segment is made on the put path, the first one included.
TEST_F(MessageStoreTest, AFreshStoreServesFromAPreparedFirstSegment) {
  MessageStoreConfig config = small_store_config(FlushDiskType::SYNC_FLUSH);
  config.allocateMappedFileEnable = true;
  config.warmMapedFileEnable = true;
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  const AllocateMappedFileService* allocator = world.store().commit_log().file_queue().allocator();
  ASSERT_NE(allocator, nullptr);
  EXPECT_TRUE(allocator->has_ready());
  const PutMessageResult put = world.put(make_message("TopicA", 0, "first"));
  ASSERT_EQ(put.status, PutMessageStatus::PUT_OK) << put.remark;
  EXPECT_EQ(allocator->taken(), 1u);
  EXPECT_EQ(allocator->missed(), 0u);
}

TEST_F(MessageStoreTest, SyncFlushPutIsAcknowledgedOnlyWhenTheFlushCoversIt) {
  StoreSimWorld world(small_store_config(FlushDiskType::SYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  std::optional<PutMessageResult> reply;
  PhyOffset flushed_at_reply;
  world.store().put_message(make_message("TopicA", 0, "durable"), [&](PutMessageResult result) {
    flushed_at_reply = world.store().flushed_phy_offset();
    reply = result;
  });
  world.run_until([&] { return reply.has_value(); });
  ASSERT_TRUE(reply.has_value());
  ASSERT_EQ(reply->status, PutMessageStatus::PUT_OK) << reply->remark;
  EXPECT_EQ(reply->append.wrote_offset, PhyOffset(0));
  EXPECT_EQ(reply->append.msg_id(), "0A00000100002A9F0000000000000000");
  EXPECT_GE(flushed_at_reply, reply->append.end_offset());

  const PutMessageResult second = world.put(make_message("TopicA", 0, "durable too"));
  ASSERT_EQ(second.status, PutMessageStatus::PUT_OK);
  EXPECT_EQ(second.append.wrote_offset, reply->append.end_offset());
  EXPECT_EQ(second.append.queue_offset, QueueOffset(1));
  EXPECT_GE(world.store().flushed_phy_offset(), second.append.end_offset());
}

TEST_F(MessageStoreTest, SyncFlushWithWaitFalseAcknowledgesBeforeTheFlushAndDoesNotStoreWait) {
  StoreSimWorld world(small_store_config(FlushDiskType::SYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  MessageToStore message = make_message("TopicA", 0, "fire and forget");
  message.properties[std::string(kPropertyWaitStoreMsgOk)] = "false";
  std::optional<PutMessageResult> reply;
  PhyOffset flushed_at_reply;
  world.store().put_message(std::move(message), [&](PutMessageResult result) {
    flushed_at_reply = world.store().flushed_phy_offset();
    reply = result;
  });
  world.run_until([&] { return reply.has_value(); });
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, PutMessageStatus::PUT_OK);
  EXPECT_LT(flushed_at_reply, reply->append.end_offset()) << "WAIT=false must not wait for the group commit";
  Result<std::vector<uint8_t>> bytes = world.store().look_message_by_offset(reply->append.wrote_offset);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(decode_stored(*bytes).properties.count(std::string(kPropertyWaitStoreMsgOk)), 0u)
      << "4.9.x strips WAIT from the stored properties";
}

TEST_F(MessageStoreTest, SlaveRoleRefusesPuts) {
  MessageStoreConfig config = small_store_config();
  config.brokerRole = BrokerRole::SLAVE;
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  const PutMessageResult result = world.put(make_message("TopicA", 0, "to a slave"));
  EXPECT_EQ(result.status, PutMessageStatus::SERVICE_NOT_AVAILABLE);
  EXPECT_NE(result.remark.find("SLAVE"), std::string::npos) << result.remark;
  EXPECT_EQ(world.store().max_phy_offset(), PhyOffset(0));
}

// --- get ---------------------------------------------------------------------

TEST_F(MessageStoreTest, GetMessageFindsRegionsThatDecodeToThePutMessages) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  std::vector<PutMessageResult> puts;
  for (int i = 0; i < 5; ++i) {
    const std::string n = std::to_string(i);
    puts.push_back(world.put(make_message("TopicA", 2, "body-" + n, "key" + n, "TagA")));
    ASSERT_EQ(puts.back().status, PutMessageStatus::PUT_OK);
    ASSERT_EQ(world.put(make_message("TopicB", 2, "noise")).status, PutMessageStatus::PUT_OK);  // interleaved
  }
  run_until_dispatched(world);

  const GetMessageResult all = world.store().get_message("group", "TopicA", 2, QueueOffset(0), 32);
  ASSERT_EQ(all.status, GetMessageStatus::FOUND);
  EXPECT_EQ(all.min_offset, QueueOffset(0));
  EXPECT_EQ(all.max_offset, QueueOffset(5));
  EXPECT_EQ(all.next_begin_offset, QueueOffset(5));
  const std::vector<StoredMessage> messages = decode_regions(all);
  ASSERT_EQ(messages.size(), 5u);
  int64_t total_bytes = 0;
  for (size_t i = 0; i < messages.size(); ++i) {
    EXPECT_EQ(messages[i].topic, "TopicA");
    EXPECT_EQ(messages[i].queue_id, 2);
    EXPECT_EQ(messages[i].body, "body-" + std::to_string(i));
    EXPECT_EQ(messages[i].queue_offset, QueueOffset(static_cast<int64_t>(i)));
    EXPECT_EQ(messages[i].phy_offset, puts[i].append.wrote_offset);
    EXPECT_EQ(all.messages[i].phy_offset, puts[i].append.wrote_offset);
    EXPECT_EQ(all.messages[i].length, static_cast<uint32_t>(puts[i].append.wrote_bytes));
    EXPECT_EQ(messages[i].properties.at(std::string(kPropertyTags)), "TagA");
    EXPECT_EQ(messages[i].properties.at(std::string(kPropertyKeys)), "key" + std::to_string(i));
    total_bytes += puts[i].append.wrote_bytes;
  }
  EXPECT_EQ(all.total_bytes, total_bytes);

  const GetMessageResult middle = world.store().get_message("group", "TopicA", 2, QueueOffset(2), 2);
  ASSERT_EQ(middle.status, GetMessageStatus::FOUND);
  EXPECT_EQ(bodies_of(decode_regions(middle)), (std::vector<std::string>{"body-2", "body-3"}));
  EXPECT_EQ(middle.next_begin_offset, QueueOffset(4));
  EXPECT_EQ(world.store().min_offset_in_queue("TopicA", 2), QueueOffset(0));
  EXPECT_EQ(world.store().max_offset_in_queue("TopicA", 2), QueueOffset(5));
  EXPECT_EQ(world.store().max_offset_in_queue("TopicA", 7), QueueOffset(0));  // no such queue
}

TEST_F(MessageStoreTest, GetMessageReportsEveryEdgeStatus) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(world.put(make_message("TopicA", 0, "m" + std::to_string(i), "", i % 2 == 0 ? "even" : "odd")).status,
              PutMessageStatus::PUT_OK);
  }
  run_until_dispatched(world);
  MessageStore& store = world.store();

  const GetMessageResult at_max = store.get_message("g", "TopicA", 0, QueueOffset(4), 32);
  EXPECT_EQ(at_max.status, GetMessageStatus::OFFSET_OVERFLOW_ONE);
  EXPECT_EQ(at_max.next_begin_offset, QueueOffset(4));  // wait here for new messages
  EXPECT_TRUE(at_max.messages.empty());

  const GetMessageResult past_max = store.get_message("g", "TopicA", 0, QueueOffset(9), 32);
  EXPECT_EQ(past_max.status, GetMessageStatus::OFFSET_OVERFLOW_BADLY);
  // RocketMQ's correction: back to the min offset when the queue starts at 0, else to the max.
  EXPECT_EQ(past_max.next_begin_offset, QueueOffset(0));
  EXPECT_EQ(past_max.max_offset, QueueOffset(4));

  EXPECT_EQ(store.get_message("g", "NoSuchTopic", 0, QueueOffset(0), 32).status,
            GetMessageStatus::NO_MATCHED_LOGIC_QUEUE);
  EXPECT_EQ(store.get_message("g", "TopicA", 3, QueueOffset(0), 32).status, GetMessageStatus::NO_MATCHED_LOGIC_QUEUE);

  const GetMessageResult none = store.get_message("g", "TopicA", 0, QueueOffset(0), 32, {tags_code("absent")});
  EXPECT_EQ(none.status, GetMessageStatus::NO_MATCHED_MESSAGE);
  EXPECT_TRUE(none.messages.empty());
  EXPECT_EQ(none.next_begin_offset, QueueOffset(4)) << "the filtered-out entries were scanned: skip them";

  const GetMessageResult odd = store.get_message("g", "TopicA", 0, QueueOffset(0), 32, {tags_code("odd")});
  ASSERT_EQ(odd.status, GetMessageStatus::FOUND);
  EXPECT_EQ(bodies_of(decode_regions(odd)), (std::vector<std::string>{"m1", "m3"}));
  EXPECT_EQ(odd.next_begin_offset, QueueOffset(4));
}

// A pull processor reads into one kept result: each answer must be the
// fresh one, nothing of the one before left (its regions, its total, its
// offsets), whatever the edge.
TEST_F(MessageStoreTest, GetMessageIntoAUsedResultGivesTheFreshAnswer) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(world.put(make_message("TopicA", 0, "m" + std::to_string(i))).status, PutMessageStatus::PUT_OK);
  }
  run_until_dispatched(world);
  MessageStore& store = world.store();
  GetMessageResult kept;
  const auto expect_fresh = [&](const std::string& topic, int32_t queue_id, int64_t offset, int32_t max_msgs) {
    store.get_message_into("g", topic, queue_id, QueueOffset(offset), max_msgs, {}, kept);
    const GetMessageResult fresh = store.get_message("g", topic, queue_id, QueueOffset(offset), max_msgs);
    const std::string what = topic + ":" + std::to_string(queue_id) + " from " + std::to_string(offset);
    EXPECT_EQ(kept.status, fresh.status) << what;
    EXPECT_EQ(kept.next_begin_offset, fresh.next_begin_offset) << what;
    EXPECT_EQ(kept.min_offset, fresh.min_offset) << what;
    EXPECT_EQ(kept.max_offset, fresh.max_offset) << what;
    EXPECT_EQ(kept.total_bytes, fresh.total_bytes) << what;
    EXPECT_EQ(kept.suggest_pulling_from_slave, fresh.suggest_pulling_from_slave) << what;
    ASSERT_EQ(kept.messages.size(), fresh.messages.size()) << what;
    for (size_t i = 0; i < kept.messages.size(); ++i) {
      EXPECT_EQ(kept.messages[i].phy_offset, fresh.messages[i].phy_offset) << what << ", message " << i;
      EXPECT_EQ(kept.messages[i].length, fresh.messages[i].length) << what << ", message " << i;
    }
  };
  expect_fresh("TopicA", 0, 0, 32);  // FOUND, four
  const size_t room = kept.messages.capacity();
  expect_fresh("TopicA", 0, 3, 32);  // FOUND, one
  EXPECT_EQ(kept.messages.capacity(), room) << "the region list's room is kept";
  expect_fresh("TopicA", 0, 4, 32);          // OFFSET_OVERFLOW_ONE
  expect_fresh("NoSuchTopic", 0, 0, 32);     // NO_MATCHED_LOGIC_QUEUE
  expect_fresh("TopicA", 0, 9, 32);          // OFFSET_OVERFLOW_BADLY
  expect_fresh("TopicA", 0, 1, 2);           // FOUND, two
}

TEST_F(MessageStoreTest, GetMessageHonoursMaxMsgsAndCapsAPullAt32Messages) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  for (int i = 0; i < 40; ++i) {
    ASSERT_EQ(world.put(make_message("TopicA", 0, "m" + std::to_string(i))).status, PutMessageStatus::PUT_OK);
  }
  run_until_dispatched(world);

  const GetMessageResult five = world.store().get_message("g", "TopicA", 0, QueueOffset(0), 5);
  EXPECT_EQ(five.messages.size(), 5u);
  EXPECT_EQ(five.next_begin_offset, QueueOffset(5));

  const GetMessageResult capped = world.store().get_message("g", "TopicA", 0, QueueOffset(0), 1000);
  ASSERT_EQ(capped.status, GetMessageStatus::FOUND);
  EXPECT_EQ(capped.messages.size(), 32u) << "maxTransferCountOnMessageInMemory";
  EXPECT_EQ(capped.next_begin_offset, QueueOffset(32));
  const GetMessageResult rest = world.store().get_message("g", "TopicA", 0, capped.next_begin_offset, 1000);
  EXPECT_EQ(rest.messages.size(), 8u);
  EXPECT_EQ(decode_regions(rest).back().body, "m39");

  // A max_msgs below 1 is taken as 1, not as "nothing".
  EXPECT_EQ(world.store().get_message("g", "TopicA", 0, QueueOffset(0), 0).messages.size(), 1u);
}

TEST_F(MessageStoreTest, MessageArrivingListenerFiresOncePerDispatchedMessage) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  std::vector<DispatchRequest> arrived;
  world.store().set_message_arriving_listener([&](const DispatchRequest& request) { arrived.push_back(request); });
  const PutMessageResult a = world.put(make_message("TopicA", 1, "a", "", "TagA"));
  const PutMessageResult b = world.put(make_message("TopicB", 0, "b"));
  run_until_dispatched(world);
  ASSERT_EQ(arrived.size(), 2u);
  EXPECT_EQ(arrived[0].topic, "TopicA");
  EXPECT_EQ(arrived[0].queue_id, 1);
  EXPECT_EQ(arrived[0].consume_queue_offset, QueueOffset(0));
  EXPECT_EQ(arrived[0].commit_log_offset, a.append.wrote_offset);
  EXPECT_EQ(arrived[0].msg_size, a.append.wrote_bytes);
  EXPECT_EQ(arrived[0].tags_code, tags_code("TagA"));
  EXPECT_EQ(arrived[1].topic, "TopicB");
  EXPECT_EQ(arrived[1].commit_log_offset, b.append.wrote_offset);
  // By the time the listener runs the entry is in the ConsumeQueue: a woken pull finds it.
  world.store().set_message_arriving_listener([&](const DispatchRequest& request) {
    const GetMessageResult got =
        world.store().get_message("g", request.topic, request.queue_id, request.consume_queue_offset, 1);
    EXPECT_EQ(got.status, GetMessageStatus::FOUND);
    arrived.push_back(request);
  });
  world.put(make_message("TopicA", 1, "c"));
  run_until_dispatched(world);
  EXPECT_EQ(arrived.size(), 3u);
}

// --- lookups -----------------------------------------------------------------

TEST_F(MessageStoreTest, QueryMessageFindsKeysAndUniqKeysWithinTheTimeWindow) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  MessageToStore early = make_message("TopicA", 0, "early", "order-1 shared");
  early.properties[std::string(kPropertyUniqKey)] = "UNIQ0001";
  const PutMessageResult first = world.put(early);
  world.run_for(seconds(10));
  const PutMessageResult second = world.put(make_message("TopicA", 1, "late", "order-2 shared"));
  const PutMessageResult other_topic = world.put(make_message("TopicB", 0, "elsewhere", "shared"));
  ASSERT_EQ(first.status, PutMessageStatus::PUT_OK);
  ASSERT_EQ(second.status, PutMessageStatus::PUT_OK);
  ASSERT_EQ(other_topic.status, PutMessageStatus::PUT_OK);
  run_until_dispatched(world);
  MessageStore& store = world.store();
  auto bodies_found = [&](const std::string& topic, const std::string& key, int64_t begin_ms, int64_t end_ms) {
    Result<std::vector<std::vector<uint8_t>>> found = store.query_message(topic, key, 32, begin_ms, end_ms);
    EXPECT_TRUE(found.ok()) << found.status().to_string();
    std::vector<std::string> bodies;
    if (found.ok()) {
      for (const auto& bytes : *found) bodies.push_back(decode_stored(bytes).body);
    }
    std::sort(bodies.begin(), bodies.end());
    return bodies;
  };
  const int64_t t1 = first.append.store_timestamp_ms;
  const int64_t t2 = second.append.store_timestamp_ms;
  ASSERT_GE(t2 - t1, 10'000);

  EXPECT_EQ(bodies_found("TopicA", "order-1", 0, INT64_MAX), std::vector<std::string>{"early"});
  EXPECT_EQ(bodies_found("TopicA", "UNIQ0001", 0, INT64_MAX), std::vector<std::string>{"early"});
  EXPECT_EQ(bodies_found("TopicA", "shared", 0, INT64_MAX), (std::vector<std::string>{"early", "late"}));
  EXPECT_EQ(bodies_found("TopicB", "shared", 0, INT64_MAX), std::vector<std::string>{"elsewhere"});
  EXPECT_TRUE(bodies_found("TopicA", "order-3", 0, INT64_MAX).empty());
  // Windows: the index keeps seconds since its file began, so the bounds sit well between the puts.
  EXPECT_EQ(bodies_found("TopicA", "shared", t1 + 5'000, INT64_MAX), std::vector<std::string>{"late"});
  EXPECT_EQ(bodies_found("TopicA", "shared", 0, t1 + 5'000), std::vector<std::string>{"early"});
  EXPECT_TRUE(bodies_found("TopicA", "UNIQ0001", t1 + 5'000, INT64_MAX).empty());
  EXPECT_TRUE(bodies_found("TopicA", "shared", t2 + 5'000, INT64_MAX).empty());
  // max_num bounds the answer.
  Result<std::vector<std::vector<uint8_t>>> one = store.query_message("TopicA", "shared", 1, 0, INT64_MAX);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->size(), 1u);
}

TEST_F(MessageStoreTest, LookMessageByOffsetReturnsTheRecordOrAClearError) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  const PutMessageResult a = world.put(make_message("TopicA", 0, "alpha"));
  const PutMessageResult b = world.put(make_message("TopicA", 0, "beta"));
  Result<std::vector<uint8_t>> found = world.store().look_message_by_offset(b.append.wrote_offset);
  ASSERT_TRUE(found.ok()) << found.status().to_string();
  EXPECT_EQ(found->size(), static_cast<size_t>(b.append.wrote_bytes));
  EXPECT_EQ(decode_stored(*found).body, "beta");
  // By msgId, as VIEW_MESSAGE_BY_ID does.
  Result<OffsetMessageId> id = decode_offset_message_id(a.append.msg_id());
  ASSERT_TRUE(id.ok());
  Result<std::vector<uint8_t>> by_id = world.store().look_message_by_offset(id->offset);
  ASSERT_TRUE(by_id.ok());
  EXPECT_EQ(decode_stored(*by_id).body, "alpha");

  Result<std::vector<uint8_t>> past = world.store().look_message_by_offset(b.append.end_offset());
  EXPECT_EQ(past.status().code(), StatusCode::kNotFound);
  Result<std::vector<uint8_t>> inside = world.store().look_message_by_offset(a.append.wrote_offset + 10);
  EXPECT_FALSE(inside.ok()) << "an offset inside a record is not a record";
}

TEST_F(MessageStoreTest, OffsetInQueueByTimeIsTheFirstMessageStoredAtOrAfterIt) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  std::vector<int64_t> stored_ms;
  for (int i = 0; i < 3; ++i) {
    const PutMessageResult put = world.put(make_message("TopicA", 0, "m" + std::to_string(i)));
    ASSERT_EQ(put.status, PutMessageStatus::PUT_OK);
    stored_ms.push_back(put.append.store_timestamp_ms);
    world.run_for(seconds(10));
  }
  run_until_dispatched(world);
  auto by_time = [&](int64_t ms) {
    Result<QueueOffset> offset = world.store().offset_in_queue_by_time("TopicA", 0, ms);
    EXPECT_TRUE(offset.ok());
    return offset.ok() ? offset->value() : -1;
  };
  EXPECT_EQ(by_time(0), 0);
  EXPECT_EQ(by_time(stored_ms[0]), 0);
  EXPECT_EQ(by_time(stored_ms[0] + 1), 1);
  EXPECT_EQ(by_time(stored_ms[1]), 1);
  EXPECT_EQ(by_time(stored_ms[2] - 1), 2);
  EXPECT_EQ(by_time(stored_ms[2] + 1), 3) << "every message is older: the max offset";
  Result<QueueOffset> unknown = world.store().offset_in_queue_by_time("NoSuchTopic", 0, stored_ms[0]);
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(*unknown, QueueOffset(0));
}

// --- segments ----------------------------------------------------------------

TEST_F(MessageStoreTest, SegmentRollWritesABlankAndNoRecordStraddlesTwoFiles) {
  const MessageStoreConfig config = small_store_config(FlushDiskType::ASYNC_FLUSH);
  const int64_t segment = config.mappedFileSizeCommitLog;
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  int i = 0;
  while (world.store().commit_log().file_queue().files().size() < 3) {
    const std::string body = "m" + std::to_string(i) + std::string(900 + (i * 37) % 500, 'x');
    ASSERT_EQ(world.put(make_message("TopicA", 0, body)).status, PutMessageStatus::PUT_OK);
    ++i;
  }
  run_until_dispatched(world);
  const std::vector<LoggedRecord> log = scan_log(world.store());
  ASSERT_EQ(log.size(), static_cast<size_t>(i));
  int rolls = 0;
  for (size_t r = 0; r < log.size(); ++r) {
    const int64_t start = log[r].offset.value();
    const int64_t end = start + static_cast<int64_t>(log[r].bytes.size());
    EXPECT_EQ(start / segment, (end - 1) / segment) << "record " << r << " straddles a segment boundary";
    if (r + 1 == log.size() || log[r + 1].offset.value() == end) continue;
    // The next record starts the next segment; the gap opens with a BLANK.
    ++rolls;
    EXPECT_EQ(log[r + 1].offset.value(), (start / segment + 1) * segment);
    const int64_t next_end = end + static_cast<int64_t>(log[r + 1].bytes.size());
    EXPECT_GT(next_end + kEndFileMinBlankLength, (start / segment + 1) * segment)
        << "rolled although the next record fit";
    Result<std::vector<uint8_t>> blank = world.store().commit_log().read(PhyOffset(end), kEndFileMinBlankLength);
    ASSERT_TRUE(blank.ok()) << blank.status().to_string();
    EXPECT_EQ(get_i32_be(blank->data()), (start / segment + 1) * segment - end) << "TOTALSIZE = bytes left";
    EXPECT_EQ(get_u32_be(blank->data() + 4), kBlankMagicCode);
  }
  EXPECT_EQ(rolls, 2);
  const auto& files = world.store().commit_log().file_queue().files();
  EXPECT_EQ(files[1]->path(), "/store/commitlog/" + MappedFile::file_name(segment));
  EXPECT_EQ(files[2]->path(), "/store/commitlog/" + MappedFile::file_name(2 * segment));

  // A pull that spans the roll reads from both files, in queue order.
  QueueOffset last_in_first_file;
  for (const LoggedRecord& record : log) {
    if (record.offset.value() < segment) last_in_first_file = record.queue_offset;
  }
  const GetMessageResult across = world.store().get_message("g", "TopicA", 0, last_in_first_file - 1, 4);
  ASSERT_EQ(across.status, GetMessageStatus::FOUND);
  ASSERT_EQ(across.messages.size(), 4u);
  EXPECT_EQ(across.messages[1].file->path(), files[0]->path());
  EXPECT_EQ(across.messages[2].file->path(), files[1]->path());
  EXPECT_EQ(across.messages[2].position, 0u);
  const std::vector<StoredMessage> decoded = decode_regions(across);
  for (size_t k = 0; k < decoded.size(); ++k) {
    EXPECT_EQ(decoded[k].queue_offset, last_in_first_file - 1 + static_cast<int64_t>(k));
  }
  EXPECT_TRUE(consume_queues_agree(world.store(), log));
}

// --- flush -------------------------------------------------------------------

TEST_F(MessageStoreTest, SyncFlushReplyArrivesOnlyAfterTheStalledDiskSyncs) {
  StoreSimWorld world(small_store_config(FlushDiskType::SYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  const uint64_t syncs_before = world.disk().counters().syncs_completed;
  world.disk().stall(millis(200));
  const Nanos stalled_until = world.scheduler().now() + millis(200);
  std::optional<PutMessageResult> reply;
  Nanos replied_at = 0;
  uint64_t syncs_at_reply = 0;
  world.store().put_message(make_message("TopicA", 0, "waits for the disk"), [&](PutMessageResult result) {
    replied_at = world.scheduler().now();
    syncs_at_reply = world.disk().counters().syncs_completed;
    reply = result;
  });
  world.run_for(millis(150));
  EXPECT_FALSE(reply.has_value()) << "acknowledged while the disk had not synced";
  EXPECT_EQ(world.store().flushed_phy_offset(), PhyOffset(0));
  EXPECT_GT(world.store().max_phy_offset(), PhyOffset(0)) << "the record is appended at once";
  world.run_until([&] { return reply.has_value(); });
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, PutMessageStatus::PUT_OK);
  EXPECT_GE(replied_at, stalled_until);
  EXPECT_GT(syncs_at_reply, syncs_before);
}

TEST_F(MessageStoreTest, SyncFlushSlowDiskStillAcknowledgesAfterTheSync) {
  StoreSimWorld world(small_store_config(FlushDiskType::SYNC_FLUSH), sim::DiskProfile::hdd());
  ASSERT_TRUE(world.start().ok());
  const Nanos put_at = world.scheduler().now();
  std::optional<PutMessageResult> reply;
  Nanos replied_at = 0;
  world.store().put_message(make_message("TopicA", 0, "hdd"), [&](PutMessageResult result) {
    replied_at = world.scheduler().now();
    reply = result;
  });
  world.run_until([&] { return reply.has_value(); });
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, PutMessageStatus::PUT_OK);
  // An HDD sync costs a rotation: at least the profile's base latency of virtual time passed.
  EXPECT_GE(replied_at - put_at, sim::DiskProfile::hdd().sync_base_latency_ns);
}

TEST_F(MessageStoreTest, SyncFlushConcurrentPutsShareOneGroupCommit) {
  StoreSimWorld world(small_store_config(FlushDiskType::SYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  const uint64_t flushes_before = world.store().stats().commit_log_flushes;
  std::vector<PutMessageResult> replies;
  for (int i = 0; i < 10; ++i) {  // one task: all ten are appended before any flush starts
    world.store().put_message(make_message("TopicA", i % 3, "group-" + std::to_string(i)),
                              [&](PutMessageResult result) { replies.push_back(result); });
  }
  world.run_until([&] { return replies.size() == 10; });
  ASSERT_EQ(replies.size(), 10u);
  for (const PutMessageResult& reply : replies) EXPECT_EQ(reply.status, PutMessageStatus::PUT_OK);
  EXPECT_EQ(world.store().stats().commit_log_flushes - flushes_before, 1u) << "one fsync for the whole group";

  // Puts arriving while a flush is in flight gather for the next one.
  world.disk().stall(millis(50));
  replies.clear();
  world.store().put_message(make_message("TopicA", 0, "leader"), [&](PutMessageResult r) { replies.push_back(r); });
  world.run_for(millis(10));  // the leader's flush is now stuck in the device
  for (int i = 0; i < 5; ++i) {
    world.store().put_message(make_message("TopicA", 0, "follower-" + std::to_string(i)),
                              [&](PutMessageResult r) { replies.push_back(r); });
    world.run_for(millis(1));
  }
  world.run_until([&] { return replies.size() == 6; });
  ASSERT_EQ(replies.size(), 6u);
  for (const PutMessageResult& reply : replies) EXPECT_EQ(reply.status, PutMessageStatus::PUT_OK);
  EXPECT_EQ(world.store().stats().commit_log_flushes - flushes_before, 3u)
      << "the first group's flush, the leader's, then one for all five followers";
}

TEST_F(MessageStoreTest, FlushDiskTimeoutWhenTheDiskStallsPastSyncFlushTimeout) {
  MessageStoreConfig config = small_store_config(FlushDiskType::SYNC_FLUSH);
  config.syncFlushTimeout = 100;
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  world.disk().stall(seconds(1));
  const Nanos put_at = world.scheduler().now();
  std::optional<PutMessageResult> reply;
  Nanos replied_at = 0;
  world.store().put_message(make_message("TopicA", 0, "slow"), [&](PutMessageResult result) {
    replied_at = world.scheduler().now();
    reply = result;
  });
  world.run_until([&] { return reply.has_value(); });
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, PutMessageStatus::FLUSH_DISK_TIMEOUT);
  EXPECT_NE(reply->remark.find("syncFlushTimeout"), std::string::npos) << reply->remark;
  EXPECT_EQ(replied_at - put_at, millis(100));
  EXPECT_TRUE(put_message_stored(reply->status));
  EXPECT_EQ(reply->append.wrote_offset, PhyOffset(0)) << "stored: the reply still carries where";
  EXPECT_EQ(world.store().stats().flush_timeouts, 1u);
  EXPECT_LT(world.store().flushed_phy_offset(), reply->append.end_offset());

  // Stored in memory: readable now, durable once the device wakes up.
  run_until_dispatched(world);
  EXPECT_EQ(world.store().get_message("g", "TopicA", 0, QueueOffset(0), 1).status, GetMessageStatus::FOUND);
  world.run_for(seconds(1));
  EXPECT_GE(world.store().flushed_phy_offset(), reply->append.end_offset());
  EXPECT_TRUE(world.store().writable());
  EXPECT_EQ(world.put(make_message("TopicA", 0, "fast again")).status, PutMessageStatus::PUT_OK);
}

TEST_F(MessageStoreTest, FailedDeviceNeverAcknowledgesAndTheStoreStopsTakingWrites) {
  StoreSimWorld world(small_store_config(FlushDiskType::SYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  ASSERT_EQ(world.put(make_message("TopicA", 0, "before")).status, PutMessageStatus::PUT_OK);
  world.disk().stall(millis(100));
  std::optional<PutMessageResult> reply;
  world.store().put_message(make_message("TopicA", 0, "in flight"), [&](PutMessageResult r) { reply = r; });
  world.run_for(millis(10));
  ASSERT_FALSE(reply.has_value());
  world.disk().fail();  // the queued fsync answers EIO
  world.run_until([&] { return reply.has_value(); });
  ASSERT_TRUE(reply.has_value());
  EXPECT_NE(reply->status, PutMessageStatus::PUT_OK);
  EXPECT_EQ(reply->status, PutMessageStatus::FLUSH_DISK_TIMEOUT) << "in the page cache, never confirmed durable";
  EXPECT_NE(reply->remark.find("flush failed"), std::string::npos) << reply->remark;
  EXPECT_FALSE(world.store().writable());
  EXPECT_TRUE(logged("store no longer writable"));

  // Reads of data not cached in memory fail too. The ConsumeQueue entry is
  // still buffered (a serving store writes its entries a page at a time), so
  // the pull finds it; the record's bytes come from the failed device.
  const GetMessageResult got = world.store().get_message("g", "TopicA", 0, QueueOffset(0), 1);
  EXPECT_EQ(got.status, GetMessageStatus::FOUND);
  ASSERT_EQ(got.messages.size(), 1u);
  EXPECT_FALSE(MessageStore::read_region(got.messages[0]).ok());

  const PutMessageResult after = world.put(make_message("TopicA", 0, "after"));
  EXPECT_EQ(after.status, PutMessageStatus::SERVICE_NOT_AVAILABLE);
  EXPECT_NE(after.remark.find("flush failed"), std::string::npos) << after.remark;
  world.run_for(seconds(30));  // the periodic services must not bring writability back
  EXPECT_FALSE(world.store().writable());
  EXPECT_EQ(world.put(make_message("TopicA", 0, "later")).status, PutMessageStatus::SERVICE_NOT_AVAILABLE);
}

TEST_F(MessageStoreTest, FailedDeviceUnderAsyncFlushRefusesPutsItCannotWrite) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  ASSERT_EQ(world.put(make_message("TopicA", 0, "cached")).status, PutMessageStatus::PUT_OK);
  world.disk().fail();
  // The write itself fails: nothing is appended, nothing acknowledged.
  const PhyOffset max_before = world.store().max_phy_offset();
  const PutMessageResult refused = world.put(make_message("TopicA", 0, "onto a dead disk"));
  EXPECT_EQ(refused.status, PutMessageStatus::UNKNOWN_ERROR);
  EXPECT_FALSE(put_message_stored(refused.status));
  EXPECT_EQ(world.store().max_phy_offset(), max_before);
  // The next thorough flush hits the dead device: the store stops taking writes.
  world.run_for(seconds(11));
  EXPECT_FALSE(world.store().writable());
  EXPECT_EQ(world.put(make_message("TopicA", 0, "still dead")).status, PutMessageStatus::SERVICE_NOT_AVAILABLE);
}

TEST_F(MessageStoreTest, AsyncFlushWaitsForLeastPagesOrTheThoroughInterval) {
  MessageStoreConfig config = small_store_config(FlushDiskType::ASYNC_FLUSH);
  config.flushIntervalCommitLog = 500;
  config.flushCommitLogLeastPages = 4;
  config.flushCommitLogThoroughInterval = 10'000;
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  const Nanos started = world.scheduler().now();
  const PutMessageResult small = world.put(make_message("TopicA", 0, "under four pages"));
  ASSERT_EQ(small.status, PutMessageStatus::PUT_OK);
  world.run_for(millis(1'600));  // three flush intervals
  EXPECT_EQ(world.store().flushed_phy_offset(), PhyOffset(0)) << "fewer than flushCommitLogLeastPages dirty";

  // Four pages (16 KiB) dirty: the next interval flushes.
  while (world.store().max_phy_offset() - world.store().flushed_phy_offset() < 4 * 4096) {
    ASSERT_EQ(world.put(make_message("TopicA", 0, std::string(2000, 'p'))).status, PutMessageStatus::PUT_OK);
  }
  const PhyOffset dirty_end = world.store().max_phy_offset();
  world.run_for(millis(600));
  EXPECT_GE(world.store().flushed_phy_offset(), dirty_end);
  EXPECT_LT(world.scheduler().now() - started, seconds(10)) << "that was not the thorough flush";

  // A little more: nothing until the thorough interval, then flushed regardless of size.
  const PutMessageResult tail = world.put(make_message("TopicA", 0, "small tail"));
  world.run_until([&] { return world.scheduler().now() - started >= seconds(9); });
  EXPECT_LT(world.store().flushed_phy_offset(), tail.append.end_offset());
  world.run_until([&] { return world.scheduler().now() - started >= millis(10'600); });
  EXPECT_GE(world.store().flushed_phy_offset(), tail.append.end_offset());
}

TEST_F(MessageStoreTest, CheckpointTimestampsAdvanceWithFlushes) {
  MessageStoreConfig config = small_store_config(FlushDiskType::SYNC_FLUSH);
  config.flushIntervalConsumeQueue = 100;
  config.flushConsumeQueueThoroughInterval = 1'000;
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  auto read_checkpoint = [&]() -> std::array<int64_t, 3> {
    Result<std::shared_ptr<env::File>> file = world.store().env().files().open(config.checkpoint_path(), {});
    EXPECT_TRUE(file.ok()) << file.status().to_string();
    if (!file.ok()) return {};
    std::array<uint8_t, 24> bytes{};
    EXPECT_TRUE((*file)->pread(0, bytes).ok());
    return {get_i64_be(bytes.data()), get_i64_be(bytes.data() + 8), get_i64_be(bytes.data() + 16)};
  };
  const PutMessageResult first = world.put(make_message("TopicA", 0, "one"));
  ASSERT_EQ(first.status, PutMessageStatus::PUT_OK);
  world.run_for(millis(1'500));
  const std::array<int64_t, 3> after_first = read_checkpoint();
  EXPECT_EQ(after_first[0], first.append.store_timestamp_ms) << "physicMsgTimestamp";
  EXPECT_EQ(after_first[1], first.append.store_timestamp_ms) << "logicsMsgTimestamp";

  world.run_for(seconds(20));
  const PutMessageResult second = world.put(make_message("TopicA", 0, "two"));
  ASSERT_EQ(second.status, PutMessageStatus::PUT_OK);
  ASSERT_GT(second.append.store_timestamp_ms, first.append.store_timestamp_ms);
  world.run_for(millis(1'500));
  const std::array<int64_t, 3> after_second = read_checkpoint();
  EXPECT_EQ(after_second[0], second.append.store_timestamp_ms);
  EXPECT_EQ(after_second[1], second.append.store_timestamp_ms);
}

// --- bad input ---------------------------------------------------------------

TEST_F(MessageStoreTest, BadInputIsRefusedWithAReasonAndNothingIsAppended) {
  StoreSimWorld world(small_store_config(FlushDiskType::SYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  const int32_t max_body = world.config().maxMessageSize;
  struct Case {
    std::string what;
    MessageToStore message;
    PutMessageStatus status;
    std::string remark;
  };
  MessageToStore big_properties = make_message("TopicA", 0, "x");
  big_properties.properties["BIG"] = std::string(32'767, 'p');
  std::vector<Case> cases = {
      {"body one byte over maxMessageSize", make_message("TopicA", 0, std::string(max_body + 1, 'b')),
       PutMessageStatus::MESSAGE_ILLEGAL, "maxMessageSize"},
      {"properties over 32767 bytes", big_properties, PutMessageStatus::PROPERTIES_SIZE_EXCEEDED, "32767"},
      {"empty topic", make_message("", 0, "x"), PutMessageStatus::MESSAGE_ILLEGAL, "topic is empty"},
      {"topic of 128 bytes", make_message(std::string(128, 't'), 0, "x"), PutMessageStatus::MESSAGE_ILLEGAL,
       "longer than the 127"},
      {"topic with a space", make_message("Topic A", 0, "x"), PutMessageStatus::MESSAGE_ILLEGAL,
       "outside [%|a-zA-Z0-9_-]"},
      {"topic with a slash", make_message("a/b", 0, "x"), PutMessageStatus::MESSAGE_ILLEGAL, "outside [%|a-zA-Z0-9_-]"},
      {"topic with a dot", make_message("a.b", 0, "x"), PutMessageStatus::MESSAGE_ILLEGAL, "outside [%|a-zA-Z0-9_-]"},
      {"topic ..", make_message("..", 0, "x"), PutMessageStatus::MESSAGE_ILLEGAL, "outside [%|a-zA-Z0-9_-]"},
      {"non-ASCII topic", make_message("t\xC3\xA9", 0, "x"), PutMessageStatus::MESSAGE_ILLEGAL, "outside"},
  };
  for (const Case& c : cases) {
    const PutMessageResult result = world.put(c.message);
    EXPECT_EQ(result.status, c.status) << c.what << ": " << put_message_status_name(result.status);
    EXPECT_NE(result.remark.find(c.remark), std::string::npos) << c.what << ": remark \"" << result.remark << "\"";
  }
  EXPECT_EQ(world.store().max_phy_offset(), PhyOffset(0)) << "a refused put appended bytes";
  EXPECT_TRUE(world.store().queues().empty());
  EXPECT_EQ(world.store().stats().puts_failed, cases.size());
  EXPECT_EQ(world.store().stats().puts_ok, 0u);

  // The limits are inclusive: exactly maxMessageSize, 127 topic bytes and 32767 property bytes are fine.
  EXPECT_EQ(world.put(make_message("TopicA", 0, std::string(max_body, 'b'))).status, PutMessageStatus::PUT_OK);
  EXPECT_EQ(world.put(make_message(std::string(127, 't'), 0, "x")).status, PutMessageStatus::PUT_OK);
  MessageToStore just_fits = make_message("TopicA", 0, "x");
  just_fits.properties["BIG"] = std::string(32'767 - 6, 'p');  // "BIG" 0x01 value 0x02 = 32767 bytes
  EXPECT_EQ(world.put(just_fits).status, PutMessageStatus::PUT_OK);
  EXPECT_EQ(world.put(make_message("%RETRY%group_1-a|b", 0, "x")).status, PutMessageStatus::PUT_OK);
  run_until_dispatched(world);
  EXPECT_EQ(scan_log(world.store()).size(), 4u);
}

// --- disk full ----------------------------------------------------------------

// Fills the disk so that the CommitLog's next segment cannot be created,
// leaving room for ConsumeQueue and index files.
TEST_F(MessageStoreTest, DiskFullAtTheNextSegmentRefusesPutsKeepsReadsAndRecovers) {
  MessageStoreConfig config = small_store_config(FlushDiskType::SYNC_FLUSH);
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(world.put(make_message("TopicA", i % 2, std::string(1000, 'a'), "k" + std::to_string(i))).status,
              PutMessageStatus::PUT_OK);
  }
  // Room for a few small files, not for a 72 KiB segment.
  world.disk().set_capacity_bytes(world.disk().used_bytes() + 8 * 4096);
  int acknowledged = 20;
  std::optional<PutMessageResult> refused;
  for (int i = 0; i < 200 && !refused; ++i) {
    const PutMessageResult result = world.put(make_message("TopicA", i % 2, std::string(1000, 'b')));
    if (result.status == PutMessageStatus::PUT_OK) {
      ++acknowledged;
    } else {
      refused = result;
    }
  }
  ASSERT_TRUE(refused.has_value()) << "the segment never filled";
  EXPECT_EQ(refused->status, PutMessageStatus::SERVICE_NOT_AVAILABLE);
  EXPECT_NE(refused->remark.find("disk full"), std::string::npos) << refused->remark;
  EXPECT_EQ(world.store().commit_log().file_queue().files().size(), 1u) << "no half-made segment left behind";
  // Nothing acknowledged that was not stored, nothing stored that was refused.
  run_until_dispatched(world);
  std::vector<LoggedRecord> log = scan_log(world.store());
  EXPECT_EQ(log.size(), static_cast<size_t>(acknowledged));
  EXPECT_TRUE(consume_queues_agree(world.store(), log));
  // Reads go on.
  EXPECT_EQ(world.store().get_message("g", "TopicA", 0, QueueOffset(0), 32).status, GetMessageStatus::FOUND);
  EXPECT_EQ(world.put(make_message("TopicA", 0, "again")).status, PutMessageStatus::SERVICE_NOT_AVAILABLE);

  // Space returns: the very next put succeeds and starts the next segment.
  world.disk().set_capacity_bytes(1ull << 30);
  const PutMessageResult resumed = world.put(make_message("TopicA", 0, "space is back"));
  ASSERT_EQ(resumed.status, PutMessageStatus::PUT_OK) << resumed.remark;
  EXPECT_EQ(resumed.append.wrote_offset, PhyOffset(config.mappedFileSizeCommitLog));
  run_until_dispatched(world);
  log = scan_log(world.store());
  EXPECT_EQ(log.size(), static_cast<size_t>(acknowledged + 1));
  EXPECT_TRUE(consume_queues_agree(world.store(), log));
  EXPECT_TRUE(index_agrees(world.store(), log));
}

// When the clean service runs while the disk is full, usage is above
// diskSpaceWarningLevelRatio and it marks the store not writable; that flag
// is only re-evaluated by the next clean run (every cleanResourceInterval,
// or run_clean_now()), so puts stay refused for up to one interval after
// space came back.
TEST_F(MessageStoreTest, DiskFullFlagSetByTheCleanServiceClearsAtItsNextRun) {
  MessageStoreConfig config = small_store_config(FlushDiskType::ASYNC_FLUSH);
  config.cleanResourceInterval = 10'000;
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  ASSERT_EQ(world.put(make_message("TopicA", 0, "one")).status, PutMessageStatus::PUT_OK);
  run_until_dispatched(world);  // its ConsumeQueue file exists before the disk fills
  world.disk().set_capacity_bytes(world.disk().used_bytes());
  world.run_for(seconds(10));  // a clean run sees 100 % usage
  EXPECT_FALSE(world.store().writable());
  const PutMessageResult refused = world.put(make_message("TopicA", 0, "two"));
  EXPECT_EQ(refused.status, PutMessageStatus::SERVICE_NOT_AVAILABLE);
  EXPECT_NE(refused.remark.find("disk full"), std::string::npos) << refused.remark;
  EXPECT_EQ(world.store().get_message("g", "TopicA", 0, QueueOffset(0), 32).status, GetMessageStatus::FOUND);

  world.disk().set_capacity_bytes(1ull << 30);
  EXPECT_EQ(world.put(make_message("TopicA", 0, "three")).status, PutMessageStatus::SERVICE_NOT_AVAILABLE)
      << "the flag lags until the next clean run";
  world.store().run_clean_now();
  EXPECT_TRUE(world.store().writable());
  EXPECT_EQ(world.put(make_message("TopicA", 0, "four")).status, PutMessageStatus::PUT_OK);
  // The periodic run clears it as well.
  world.disk().set_capacity_bytes(world.disk().used_bytes());
  world.run_for(seconds(10));
  EXPECT_FALSE(world.store().writable());
  world.disk().set_capacity_bytes(1ull << 30);
  world.run_for(seconds(10));
  EXPECT_TRUE(world.store().writable());
  EXPECT_EQ(world.put(make_message("TopicA", 0, "five")).status, PutMessageStatus::PUT_OK);
}

// The disk fills up while the CommitLog segment still has room (appends go
// into pre-allocated space) but a ConsumeQueue needs its next file. Messages
// are acknowledged; once space returns they must all become consumable, in
// order, without a restart.
TEST_F(MessageStoreTest, DiskFullWhenAConsumeQueueNeedsANewFileLosesNoMessageForConsumers) {
  MessageStoreConfig config = small_store_config(FlushDiskType::ASYNC_FLUSH);
  const int64_t entries_per_file = config.consume_queue_file_size() / kConsumeQueueEntrySize;
  StoreSimWorld world(config);
  ASSERT_TRUE(world.start().ok());
  for (int64_t i = 0; i < entries_per_file - 2; ++i) {
    ASSERT_EQ(world.put(make_message("TopicA", 0, "m" + std::to_string(i))).status, PutMessageStatus::PUT_OK);
  }
  run_until_dispatched(world);
  world.disk().set_capacity_bytes(world.disk().used_bytes());  // not one more block
  std::vector<PutMessageResult> puts;
  for (int64_t i = entries_per_file - 2; i < entries_per_file + 4; ++i) {
    puts.push_back(world.put(make_message("TopicA", 0, "m" + std::to_string(i))));
    ASSERT_TRUE(puts.back().status == PutMessageStatus::PUT_OK ||
                puts.back().status == PutMessageStatus::SERVICE_NOT_AVAILABLE)
        << put_message_status_name(puts.back().status);
  }
  world.run_for(millis(100));
  world.disk().set_capacity_bytes(1ull << 30);
  world.run_for(seconds(15));  // room for any retry the store makes, and one clean run
  ASSERT_EQ(world.put(make_message("TopicA", 0, "after")).status, PutMessageStatus::PUT_OK);
  run_until_dispatched(world);
  const std::vector<LoggedRecord> log = scan_log(world.store());
  EXPECT_TRUE(consume_queues_agree(world.store(), log));
  const QueueOffset max = world.store().max_offset_in_queue("TopicA", 0);
  EXPECT_EQ(max, QueueOffset(static_cast<int64_t>(log.size())));
  std::vector<std::string> bodies;
  for (QueueOffset at(0); at < max;) {
    const GetMessageResult got = world.store().get_message("g", "TopicA", 0, at, 32);
    ASSERT_EQ(got.status, GetMessageStatus::FOUND) << "at " << at.to_string();
    for (const std::string& body : bodies_of(decode_regions(got))) bodies.push_back(body);
    at = got.next_begin_offset;
  }
  EXPECT_EQ(bodies.size(), log.size()) << "an acknowledged message never reached its ConsumeQueue";
}

// A record that no longer decodes when the dispatcher reads it (a device
// returning garbage, a bug): dispatch stops there rather than skip it, logs
// at ERROR and retries once a second; it never spins on the record.
TEST_F(MessageStoreTest, DispatchStopsAtARecordThatDoesNotDecodeAndRetriesLater) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  ASSERT_EQ(world.put(make_message("TopicA", 0, "fine")).status, PutMessageStatus::PUT_OK);
  run_until_dispatched(world);
  const PhyOffset at = world.store().max_phy_offset();
  std::optional<PutMessageResult> reply;
  world.store().put_message(make_message("TopicA", 0, "damaged before dispatch"),
                            [&](PutMessageResult r) { reply = r; });
  // The group write that acknowledges the put wakes the dispatcher one task
  // later: once the reply is in, the record is on the device, not yet dispatched.
  world.run_until([&] { return reply.has_value(); });
  ASSERT_TRUE(reply.has_value());
  ASSERT_EQ(world.store().dispatched_phy_offset(), at);
  ASSERT_GT(world.store().max_phy_offset(), at);
  const std::string segment = "/store/commitlog/" + MappedFile::file_name(0);
  Result<std::shared_ptr<env::File>> file = world.disk().open(segment, {}, sim::kWorldOwner, segment);
  ASSERT_TRUE(file.ok());
  std::vector<uint8_t> original(8);
  ASSERT_TRUE((*file)->pread(static_cast<uint64_t>(at.value()), original).ok());
  const std::vector<uint8_t> bad_header = {0x7F, 0xFF, 0xFF, 0xFF, 0xDE, 0xAD, 0xBE, 0xEF};
  ASSERT_TRUE((*file)->pwrite(static_cast<uint64_t>(at.value()), bad_header).ok());
  // The segment keeps its last commit for the dispatcher (mapped_file.h):
  // drop that copy (setting the position it already has does) so the
  // dispatcher reads the device's garbage.
  std::shared_ptr<MappedFile> last = world.store().commit_log().file_queue().last_file();
  last->set_wrote_position(last->wrote_position());
  // And the put path handed the dispatcher its request for the record
  // (dispatch_request.h): forget it too, as a restart would, so the
  // dispatcher reads the record back.
  world.store().forget_handed_over_dispatch_requests();

  // Bounded stepping: a dispatcher spinning at one instant would never let virtual time pass.
  const Nanos until = world.scheduler().now() + millis(3'500);
  for (int steps = 0; steps < 100'000 && world.scheduler().now() < until; ++steps) world.scheduler().run_one();
  ASSERT_GE(world.scheduler().now(), until) << "the dispatcher spins on the bad record";
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, PutMessageStatus::PUT_OK) << "appended to the page cache; the damage came later";
  EXPECT_EQ(world.store().dispatched_phy_offset(), at);
  const auto stops = std::count_if(log_.begin(), log_.end(), [](const std::string& line) {
    return line.starts_with("ERROR") && line.find("dispatch stopped") != std::string::npos;
  });
  EXPECT_GE(stops, 3);
  EXPECT_LE(stops, 5) << "one try per second";
  EXPECT_EQ(world.store().get_message("g", "TopicA", 0, QueueOffset(0), 32).messages.size(), 1u);

  // The bytes come back (a transient read error): the next retry dispatches it.
  ASSERT_TRUE((*file)->pwrite(static_cast<uint64_t>(at.value()), original).ok());
  world.run_for(seconds(1));
  EXPECT_EQ(world.store().dispatched_phy_offset(), world.store().max_phy_offset());
  EXPECT_EQ(world.store().get_message("g", "TopicA", 0, QueueOffset(0), 32).messages.size(), 2u);
}

}  // namespace
}  // namespace mqlab::store::testing::message_store_test
