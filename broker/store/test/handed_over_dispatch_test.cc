// The dispatcher takes what the put path describes (dispatch_request.h):
// every request it dispatched live equals the one a rebuild reads from the
// CommitLog, across segment rolls, delayed messages and properties the text
// format cannot carry, and it reads back only the records it must.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "broker/store/schedule_message_service.h"
#include "broker/store/test/store_checker.h"
#include "broker/store/test/store_log_test.h"
#include "broker/store/test/store_sim_world.h"

namespace mqlab::store::testing::handed_over_dispatch_test {
namespace {

class HandedOverDispatchTest : public StoreLogTest {};

// What a rebuild dispatches: every consumable record of the log, decoded.
// records: how many the log holds, consumable or not.
std::vector<DispatchRequest> requests_read_from_log(MessageStore& store, uint64_t* records = nullptr) {
  std::vector<DispatchRequest> requests;
  CommitLogScanner scanner(store.commit_log(), store.min_phy_offset(), store.max_phy_offset(), /*check_crc=*/true);
  if (records) *records = 0;
  while (auto scanned = scanner.next()) {
    if (records) ++*records;
    const DecodedMessage& message = scanned->record.message;
    if (is_prepared_or_rollback(message.sysflag)) continue;
    DispatchRequest request;
    dispatch_request_of_record(message, scanned->offset, request);
    if (request.topic == kScheduleTopic) {
      request.tags_code =
          store.schedule_message_service().deliver_timestamp_of(message.properties(), request.store_timestamp_ms);
    }
    requests.push_back(std::move(request));
  }
  EXPECT_TRUE(scanner.stop_reason().empty()) << scanner.stop_reason();
  return requests;
}

// Tags, keys, a UNIQ_KEY longer than the small-string buffer, a delay level
// (stored under the schedule topic, its tags code the deliver time), a
// prepared transaction (no ConsumeQueue entry), IPv6 hosts, and sizes that
// roll segments with BLANKs of varying length.
MessageToStore varied_message(int i) {
  MessageToStore message = make_message(i % 3 == 0 ? "TopicA" : "TopicWithANameLongerThanSixteen", i % 4,
                                        std::string(static_cast<size_t>(200 + (i * 397) % 3000), 'b'),
                                        i % 2 == 0 ? "k" + std::to_string(i) + " shared" : "",
                                        i % 5 == 0 ? "" : "Tag" + std::to_string(i % 7));
  message.properties[std::string(kPropertyUniqKey)] = "7F00000100002A9F0000000000" + std::to_string(100000 + i);
  if (i % 11 == 0) message.properties[std::string(kPropertyDelayLevel)] = "1";
  if (i % 13 == 0) message.sysflag = kSysFlagTransactionPrepared;
  if (i % 6 == 0) message.born_host.ipv6 = true;
  return message;
}

TEST_F(HandedOverDispatchTest, EveryLiveRequestEqualsTheOneARebuildReadsFromTheLog) {
  for (const FlushDiskType flush : {FlushDiskType::ASYNC_FLUSH, FlushDiskType::SYNC_FLUSH}) {
    SCOPED_TRACE(flush == FlushDiskType::ASYNC_FLUSH ? "ASYNC_FLUSH" : "SYNC_FLUSH");
    MessageStoreConfig config = small_store_config(flush);
    config.messageIndexEnable = true;
    StoreSimWorld world(config);
    ASSERT_TRUE(world.start().ok());
    std::vector<DispatchRequest> live;
    world.store().set_message_arriving_listener([&](const DispatchRequest& request) { live.push_back(request); });
    // One at a time and in bursts of one turn (one group write each).
    int issued = 0;
    for (; issued < 40; ++issued) ASSERT_EQ(world.put(varied_message(issued)).status, PutMessageStatus::PUT_OK);
    for (int burst = 0; burst < 6; ++burst) {
      int answered = 0;
      for (int i = 0; i < 10; ++i, ++issued) {
        world.store().put_message(varied_message(issued), [&](PutMessageResult r) {
          EXPECT_EQ(r.status, PutMessageStatus::PUT_OK);
          ++answered;
        });
      }
      world.run_until([&] { return answered == 10; });
    }
    world.run_until([&] { return world.store().dispatched_phy_offset() == world.store().max_phy_offset(); });
    ASSERT_GE(world.store().commit_log().file_queue().files().size(), 3u) << "the puts rolled segments twice or more";

    uint64_t records = 0;
    const std::vector<DispatchRequest> rebuilt = requests_read_from_log(world.store(), &records);
    EXPECT_GE(records, static_cast<uint64_t>(issued)) << "delayed messages delivered add records";
    ASSERT_EQ(live.size(), rebuilt.size());
    for (size_t i = 0; i < live.size(); ++i) {
      ASSERT_EQ(live[i], rebuilt[i]) << "record " << i << " at commitlog offset "
                                     << rebuilt[i].commit_log_offset.to_string();
    }
    EXPECT_TRUE(consume_queues_agree(world.store(), scan_log(world.store())));
    // Read back: the first record of each new segment (the dispatcher hops
    // the BLANK before it by reading) and none else.
    const uint64_t segments = world.store().commit_log().file_queue().files().size();
    EXPECT_GE(world.store().stats().records_dispatched_unread, records - (segments - 1));
    EXPECT_LE(world.store().stats().records_dispatched_unread, records);
    ASSERT_TRUE(world.shutdown().ok());
  }
}

// Properties the record's text cannot carry as they are (0x02 in a value
// starts another property): the put path hands nothing over, and the
// dispatcher reads what the record says, as a rebuild will.
TEST_F(HandedOverDispatchTest, PropertiesThatDoNotRoundTripAreReadBackFromTheRecord) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  std::vector<DispatchRequest> live;
  world.store().set_message_arriving_listener([&](const DispatchRequest& request) { live.push_back(request); });
  ASSERT_EQ(world.put(make_message("TopicA", 0, "plain", "k0", "TagA")).status, PutMessageStatus::PUT_OK);
  MessageToStore odd = make_message("TopicA", 0, "odd");
  odd.properties[std::string(kPropertyTags)] = "TagB\x02KEYS\x01" "smuggled";
  ASSERT_EQ(world.put(odd).status, PutMessageStatus::PUT_OK);
  ASSERT_EQ(world.put(make_message("TopicA", 0, "plain again", "k2")).status, PutMessageStatus::PUT_OK);
  world.run_until([&] { return world.store().dispatched_phy_offset() == world.store().max_phy_offset(); });

  ASSERT_EQ(live.size(), 3u);
  EXPECT_EQ(live[1].keys, "smuggled") << "what the record's PROPERTIES text says";
  EXPECT_EQ(live[1].tags_code, tags_code("TagB"));
  EXPECT_EQ(live, requests_read_from_log(world.store()));
  EXPECT_EQ(world.store().stats().records_dispatched_unread, 2u) << "only the odd one was read back";
}

// One put at a time within a segment: the dispatcher reads none of them.
TEST_F(HandedOverDispatchTest, PutsWithinASegmentAreDispatchedWithoutReadingThemBack) {
  StoreSimWorld world(small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(world.put(make_message("TopicA", i % 2, "m" + std::to_string(i), "", "TagA")).status,
              PutMessageStatus::PUT_OK);
  }
  world.run_until([&] { return world.store().dispatched_phy_offset() == world.store().max_phy_offset(); });
  ASSERT_EQ(world.store().commit_log().file_queue().files().size(), 1u);
  EXPECT_EQ(world.store().stats().records_dispatched_unread, 20u);
  EXPECT_EQ(world.store().max_offset_in_queue("TopicA", 1), QueueOffset(10));
  EXPECT_TRUE(consume_queues_agree(world.store(), scan_log(world.store())));
}

}  // namespace
}  // namespace mqlab::store::testing::handed_over_dispatch_test
