// Messages on the client side: pulled bodies built with store::encode_message
// and patched as the CommitLog patches them decode into MessageExt (offsets,
// hosts, msgId, compressed bodies, properties read from the stored text),
// a bad record ends the batch; wire properties, UNIQ_KEY ids, tag
// subscriptions and their hash codes; MessageQueue's order.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <iomanip>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "broker/client/compression.h"
#include "broker/client/message.h"
#include "broker/client/message_client_id.h"
#include "broker/client/message_queue.h"
#include "broker/client/subscription.h"

namespace mqlab::client::message_test {
namespace {

std::vector<uint8_t> record(const std::string& topic, const std::string& body, int64_t queue_offset,
                            int64_t physical_offset, store::MessageProperties properties = {}, int32_t sysflag = 0,
                            std::vector<uint8_t> raw_body = {}) {
  store::MessageToStore message;
  message.topic = topic;
  message.queue_id = 3;
  message.flag = 7;
  message.body = raw_body.empty() ? std::vector<uint8_t>(body.begin(), body.end()) : raw_body;
  message.properties = std::move(properties);
  message.sysflag = sysflag;
  message.born_timestamp_ms = 1'700'000'000'000;
  message.born_host = store::HostAddress::ipv4(10, 0, 0, 10, 50000);
  message.store_host = store::HostAddress::ipv4(10, 0, 0, 1, 10911);
  message.reconsume_times = 2;
  store::EncodeOutcome encoded = store::encode_message(message, 1 << 20);
  EXPECT_EQ(encoded.error, store::EncodeError::kNone);
  encoded.message.patch(QueueOffset(queue_offset), PhyOffset(physical_offset), 1'700'000'000'123);
  return encoded.message.bytes;
}

TEST(PulledMessages, DecodeEveryFieldOfConcatenatedRecords) {
  std::vector<uint8_t> body = record("T", "hello", 12, 4096, {{"TAGS", "TagA"}, {"KEYS", "k1 k2"}});
  const std::vector<uint8_t> second = record("T", "world", 13, 4096 + body.size(), {{"UNIQ_KEY", "ABC"}});
  body.insert(body.end(), second.begin(), second.end());
  const PulledMessages pulled = decode_pulled_messages(body);
  ASSERT_TRUE(pulled.error.ok()) << pulled.error.to_string();
  ASSERT_EQ(pulled.messages.size(), 2u);
  const MessageExt& first = pulled.messages[0];
  EXPECT_EQ(first.topic, "T");
  EXPECT_EQ(first.queueId, 3);
  EXPECT_EQ(first.queueOffset, 12);
  EXPECT_EQ(first.commitLogOffset, 4096);
  EXPECT_EQ(first.flag, 7);
  EXPECT_EQ(first.reconsumeTimes, 2);
  EXPECT_EQ(first.bornTimestamp, 1'700'000'000'000);
  EXPECT_EQ(first.storeTimestamp, 1'700'000'000'123);
  EXPECT_EQ(first.bornHost, "10.0.0.10:50000");
  EXPECT_EQ(first.storeHost, "10.0.0.1:10911");
  EXPECT_EQ(first.offsetMsgId(), "0A00000100002A9F0000000000001000");  // reference 1.7's example
  EXPECT_EQ(first.msgId, first.offsetMsgId());  // no UNIQ_KEY: the offset id
  EXPECT_EQ(first.tags(), "TagA");
  EXPECT_EQ(first.keys(), "k1 k2");
  EXPECT_EQ(first.body_text(), "hello");
  EXPECT_EQ(pulled.messages[1].msgId, "ABC");  // UNIQ_KEY wins, as in Java's MessageClientExt
  EXPECT_EQ(pulled.messages[1].queueOffset, 13);
}

// A body damaged on disk is handed out as stored, with the CRC the broker
// stored beside it, as Java's client does (its decoder skips the check): the
// application sees the damage, and mqsim's checker counts it corrupted,
// rather than the record being dropped as unreadable.
TEST(PulledMessages, ADamagedBodyIsHandedOutWithItsStoredCrc) {
  std::vector<uint8_t> body = record("T", "hello", 12, 4096);
  const std::string_view original = "hello";
  const auto at = std::search(body.begin(), body.end(), original.begin(), original.end());
  ASSERT_NE(at, body.end());
  *at = 'j';
  const PulledMessages pulled = decode_pulled_messages(body);
  ASSERT_TRUE(pulled.error.ok()) << pulled.error.to_string();
  ASSERT_EQ(pulled.messages.size(), 1u);
  const MessageExt& message = pulled.messages[0];
  EXPECT_EQ(message.body_text(), "jello");
  const auto crc_of = [](std::string_view text) {
    const std::span bytes(reinterpret_cast<const uint8_t*>(text.data()), text.size());
    return static_cast<int32_t>(store::body_crc32(bytes));
  };
  EXPECT_EQ(message.bodyCRC, crc_of("hello"));
  EXPECT_NE(message.bodyCRC, crc_of("jello"));
  // The store's own reads still refuse it: recovery checks CRCs.
  EXPECT_EQ(store::decode_record(body).status().code(), StatusCode::kCorruption);
}

// decode_pulled_messages reuses the last host's text while hosts repeat:
// a batch whose hosts change back and forth must still name each one's own.
TEST(PulledMessages, EachMessageNamesItsOwnHostsWhenTheyChangeWithinABatch) {
  const std::vector<store::HostAddress> born = {store::HostAddress::ipv4(10, 0, 0, 10, 50000),
                                                store::HostAddress::ipv4(10, 0, 0, 11, 50001),
                                                store::HostAddress::ipv4(10, 0, 0, 11, 50001),
                                                store::HostAddress::ipv4(10, 0, 0, 10, 50000)};
  const std::vector<store::HostAddress> stored = {store::HostAddress::ipv4(10, 0, 0, 1, 10911),
                                                  store::HostAddress::ipv4(10, 0, 0, 1, 10911),
                                                  store::HostAddress::ipv4(10, 0, 0, 2, 10911),
                                                  store::HostAddress::ipv4(10, 0, 0, 1, 10911)};
  std::vector<uint8_t> body;
  for (size_t i = 0; i < born.size(); ++i) {
    store::MessageToStore message;
    message.topic = "T";
    message.body = {'x'};
    message.born_host = born[i];
    message.store_host = stored[i];
    store::EncodeOutcome encoded = store::encode_message(message, 1 << 20);
    ASSERT_EQ(encoded.error, store::EncodeError::kNone);
    encoded.message.patch(QueueOffset(static_cast<int64_t>(i)), PhyOffset(static_cast<int64_t>(body.size())), 1);
    body.insert(body.end(), encoded.message.bytes.begin(), encoded.message.bytes.end());
  }
  const PulledMessages pulled = decode_pulled_messages(body);
  ASSERT_TRUE(pulled.error.ok()) << pulled.error.to_string();
  ASSERT_EQ(pulled.messages.size(), born.size());
  for (size_t i = 0; i < born.size(); ++i) {
    EXPECT_EQ(pulled.messages[i].bornHost, born[i].to_string()) << "message " << i;
    EXPECT_EQ(pulled.messages[i].storeHost, stored[i].to_string()) << "message " << i;
  }
  EXPECT_EQ(pulled.messages[1].bornHost, "10.0.0.11:50001");
  EXPECT_EQ(pulled.messages[2].storeHost, "10.0.0.2:10911");
  EXPECT_EQ(pulled.messages[3].storeHost, "10.0.0.1:10911");
}

// The cache remembers a few hosts: producers taking turns hit it, and more
// hosts than it holds (each replacing the oldest) still get their own text.
TEST(PulledMessages, AHostCacheGivesEachHostItsTextHoweverManyTakeTurns) {
  HostTextCache hosts;
  for (int round = 0; round < 3; ++round) {
    for (int producers : {2, 4, 7}) {
      for (int i = 0; i < 2 * producers; ++i) {
        const int n = i % producers;
        const store::HostAddress born = store::HostAddress::ipv4(10, 0, 0, static_cast<uint8_t>(10 + n), 50000 + n);
        const store::HostAddress stored = store::HostAddress::ipv4(10, 0, 1, static_cast<uint8_t>(n % 2), 10911);
        EXPECT_EQ(hosts.born_host(born), born.to_string()) << "round " << round << ", host " << n;
        EXPECT_EQ(hosts.store_host(stored), stored.to_string()) << "round " << round << ", host " << n;
      }
    }
  }
  // The texts handed out before stay as they were for the same address.
  const store::HostAddress ipv6{{0x20, 0x01, 0x0d, 0xb8}, true, 10911};
  EXPECT_EQ(hosts.born_host(ipv6), ipv6.to_string());
  EXPECT_EQ(hosts.born_host(store::HostAddress::ipv4(10, 0, 0, 10, 50000)), "10.0.0.10:50000");
}

// The consumer's MIN_OFFSET / MAX_OFFSET text is what encode_properties makes
// of the two, for any offsets.
TEST(PulledMessages, OffsetPropertiesAreEncodedAsEncodePropertiesWould) {
  const std::vector<std::pair<int64_t, int64_t>> cases = {
      {0, 0}, {0, 9}, {7, 1234567}, {-1, -1}, {INT64_MAX, INT64_MIN}, {123456789012LL, 5}};
  std::string encoded = "what the last pull left";
  for (const auto& [min_offset, max_offset] : cases) {
    encode_offset_properties(min_offset, max_offset, encoded);
    EXPECT_EQ(encoded,
              store::encode_properties(
                  {{"MAX_OFFSET", std::to_string(max_offset)}, {"MIN_OFFSET", std::to_string(min_offset)}}))
        << min_offset << " " << max_offset;
  }
}

// The producer's header text, written without the map, is the map's text:
// for any properties (some named like the folded-in fields or the stamp),
// tags, keys, delay level and WAIT.
RC_GTEST_PROP(Message, WirePropertiesEncodedDirectlyEqualTheMapsEncoding, ()) {
  const std::vector<std::string> names = {"A", "DELAY", "KEYS", "SEQ", "TAGS", "UNIQ_KEY", "WAIT", "zz", "KEYS2"};
  Message message;
  message.topic = "T";
  const int count = *rc::gen::inRange(0, 6);
  for (int i = 0; i < count; ++i) {
    message.properties[*rc::gen::elementOf(names)] = *rc::gen::elementOf(std::vector<std::string>{"", "v", "1 2"});
  }
  message.tags = *rc::gen::elementOf(std::vector<std::string>{"", "TagA"});
  message.keys = *rc::gen::elementOf(std::vector<std::string>{"", "k1 k2"});
  message.delayTimeLevel = *rc::gen::inRange(0, 3);
  message.waitStoreMsgOK = *rc::gen::arbitrary<bool>();
  const std::string stamped_name = *rc::gen::elementOf(std::vector<std::string>{"UNIQ_KEY", "TAGS", "B"});
  const std::string stamped_value = "0A0B0C";
  Message stamped = message;
  stamped.properties[stamped_name] = stamped_value;
  RC_ASSERT(encode_wire_properties(message, stamped_name, stamped_value) ==
            store::encode_properties(wire_properties(stamped)));
}

// A cache kept across bodies (a QueueConsumer's) must notice a host change
// between two pulls as it does within one.
TEST(PulledMessages, AHostCacheKeptAcrossBodiesFollowsTheirHosts) {
  HostTextCache hosts;
  const std::vector<uint8_t> first = record("T", "a", 1, 0);
  store::MessageToStore other;
  other.topic = "T";
  other.body = {'b'};
  other.born_host = store::HostAddress::ipv4(10, 0, 0, 99, 40000);
  other.store_host = store::HostAddress::ipv4(10, 0, 0, 2, 10911);
  store::EncodeOutcome encoded = store::encode_message(other, 1 << 20);
  ASSERT_EQ(encoded.error, store::EncodeError::kNone);
  encoded.message.patch(QueueOffset(2), PhyOffset(first.size()), 1);
  const PulledMessages one = decode_pulled_messages(first, hosts);
  const PulledMessages two = decode_pulled_messages(encoded.message.bytes, hosts);
  const PulledMessages three = decode_pulled_messages(first, hosts);
  ASSERT_EQ(one.messages.size(), 1u);
  ASSERT_EQ(two.messages.size(), 1u);
  ASSERT_EQ(three.messages.size(), 1u);
  EXPECT_EQ(one.messages[0].bornHost, "10.0.0.10:50000");
  EXPECT_EQ(two.messages[0].bornHost, "10.0.0.99:40000");
  EXPECT_EQ(two.messages[0].storeHost, "10.0.0.2:10911");
  EXPECT_EQ(three.messages[0].bornHost, "10.0.0.10:50000");
  EXPECT_EQ(three.messages[0].storeHost, "10.0.0.1:10911");
}

// A MessageExt keeps the stored PROPERTIES text and reads it on demand: each
// read must agree with store::decode_properties, before and after the
// consumer appends MIN_OFFSET / MAX_OFFSET (a repeated name: the last wins).
TEST(PulledMessages, PropertiesReadFromTheStoredTextAgreeWithDecodeProperties) {
  const std::vector<uint8_t> body =
      record("T", "b", 1, 0, {{"TAGS", "TagA"}, {"UNIQ_KEY", "U1"}, {"user", "v"}, {"empty", ""}});
  PulledMessages pulled = decode_pulled_messages(body);
  ASSERT_TRUE(pulled.error.ok()) << pulled.error.to_string();
  ASSERT_EQ(pulled.messages.size(), 1u);
  MessageExt& message = pulled.messages[0];
  EXPECT_EQ(message.properties(),
            (store::MessageProperties{{"TAGS", "TagA"}, {"UNIQ_KEY", "U1"}, {"user", "v"}, {"empty", ""}}));
  EXPECT_EQ(message.msgId, "U1");
  EXPECT_EQ(message.property("user"), "v");
  EXPECT_EQ(message.property("empty"), "");
  EXPECT_EQ(message.property("use"), std::nullopt);  // a prefix of a name is not the name
  EXPECT_EQ(message.property("userx"), std::nullopt);
  message.append_properties(store::encode_properties({{"MAX_OFFSET", "9"}, {"user", "w"}}));
  EXPECT_EQ(message.property("user"), "w");
  EXPECT_EQ(message.property("MAX_OFFSET"), "9");
  EXPECT_EQ(message.tags(), "TagA");
  EXPECT_EQ(message.properties().size(), 5u);
  EXPECT_EQ(message.properties().at("user"), "w");
  EXPECT_EQ(message.properties(), store::decode_properties(message.properties_text));
  message.append_properties("");
  EXPECT_EQ(message.properties().size(), 5u);
}

// A stored text may end without its last 0x02 (another client's encoder);
// what is appended must not run into the last value.
TEST(PulledMessages, AppendedPropertiesDoNotRunIntoAnUnterminatedLastValue) {
  MessageExt message;
  message.properties_text = std::string("A\x01" "1\x02" "B\x01" "2");
  EXPECT_EQ(message.property("B"), "2");
  message.append_properties(store::encode_properties({{"C", "3"}}));
  EXPECT_EQ(message.property("B"), "2");
  EXPECT_EQ(message.property("C"), "3");
  EXPECT_EQ(message.properties(), (store::MessageProperties{{"A", "1"}, {"B", "2"}, {"C", "3"}}));
}

// Properties added while decoding (the consumer's MIN_OFFSET / MAX_OFFSET)
// read as if appended after: the last of a name wins, every message gets
// them, and the text is built at its final size in one allocation.
TEST(PulledMessages, PropertiesAddedWhileDecodingEqualAnAppendAfter) {
  std::vector<uint8_t> body = record("T", "a", 1, 0, {{"TAGS", "TagA"}, {"MAX_OFFSET", "1"}});
  const std::vector<uint8_t> second = record("T", "b", 2, body.size(), {{"user", "v"}});
  body.insert(body.end(), second.begin(), second.end());
  const std::string added = store::encode_properties({{"MAX_OFFSET", "9"}, {"MIN_OFFSET", "0"}});
  HostTextCache hosts;
  const PulledMessages with = decode_pulled_messages(body, hosts, added);
  PulledMessages after = decode_pulled_messages(body);
  ASSERT_TRUE(with.error.ok()) << with.error.to_string();
  ASSERT_EQ(with.messages.size(), 2u);
  ASSERT_EQ(after.messages.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    after.messages[i].append_properties(added);
    EXPECT_EQ(with.messages[i].properties_text, after.messages[i].properties_text) << "message " << i;
    EXPECT_EQ(with.messages[i].property("MAX_OFFSET"), "9") << "message " << i;
    EXPECT_EQ(with.messages[i].property("MIN_OFFSET"), "0") << "message " << i;
    EXPECT_LE(with.messages[i].properties_text.capacity(), with.messages[i].properties_text.size() + 1)
        << "message " << i << ": reserved once, for the stored text and the added one";
  }
  EXPECT_EQ(with.messages[0].tags(), "TagA");
  EXPECT_EQ(with.messages[1].property("user"), "v");
}

TEST(PulledMessages, CompressedBodyIsInflated) {
  const std::string text(10'000, 'x');
  const std::vector<uint8_t> raw(text.begin(), text.end());
  const std::vector<uint8_t> deflated = deflate_body(raw);
  EXPECT_LT(deflated.size(), raw.size());
  const PulledMessages pulled =
      decode_pulled_messages(record("T", "", 0, 0, {}, store::kSysFlagCompressed, deflated));
  ASSERT_TRUE(pulled.error.ok()) << pulled.error.to_string();
  ASSERT_EQ(pulled.messages.size(), 1u);
  EXPECT_EQ(pulled.messages[0].body, raw);
}

TEST(PulledMessages, ABadRecordEndsTheBatchAndIsReported) {
  std::vector<uint8_t> body = record("T", "one", 0, 0);
  const size_t first_size = body.size();
  const std::vector<uint8_t> second = record("T", "two", 1, first_size);
  body.insert(body.end(), second.begin(), second.end());
  body[first_size + 4] ^= 0xFF;  // the second record's magic code
  const PulledMessages pulled = decode_pulled_messages(body);
  EXPECT_EQ(pulled.messages.size(), 1u);
  EXPECT_EQ(pulled.error.code(), StatusCode::kCorruption);
  // A compressed flag over bytes that are not zlib is corruption, not a crash.
  const PulledMessages bogus = decode_pulled_messages(record("T", "not zlib", 0, 0, {}, store::kSysFlagCompressed));
  EXPECT_TRUE(bogus.messages.empty());
  EXPECT_FALSE(bogus.error.ok());
  EXPECT_TRUE(decode_pulled_messages({}).messages.empty());
}

void expect_same_message(const MessageExt& a, const MessageExt& b, size_t i) {
  EXPECT_EQ(a.topic, b.topic) << "message " << i;
  EXPECT_EQ(a.queueId, b.queueId) << "message " << i;
  EXPECT_EQ(a.queueOffset, b.queueOffset) << "message " << i;
  EXPECT_EQ(a.commitLogOffset, b.commitLogOffset) << "message " << i;
  EXPECT_EQ(a.sysFlag, b.sysFlag) << "message " << i;
  EXPECT_EQ(a.flag, b.flag) << "message " << i;
  EXPECT_EQ(a.bodyCRC, b.bodyCRC) << "message " << i;
  EXPECT_EQ(a.reconsumeTimes, b.reconsumeTimes) << "message " << i;
  EXPECT_EQ(a.bornTimestamp, b.bornTimestamp) << "message " << i;
  EXPECT_EQ(a.storeTimestamp, b.storeTimestamp) << "message " << i;
  EXPECT_EQ(a.bornHost, b.bornHost) << "message " << i;
  EXPECT_EQ(a.storeHost, b.storeHost) << "message " << i;
  EXPECT_EQ(a.msgId, b.msgId) << "message " << i;
  EXPECT_EQ(a.offsetMsgId(), b.offsetMsgId()) << "message " << i;
  EXPECT_EQ(a.body, b.body) << "message " << i;
  EXPECT_EQ(a.properties_text, b.properties_text) << "message " << i;
}

// The consumer decodes into shared messages (what its ProcessQueue keeps):
// the same messages, with the added properties, as the vector decoder; and
// a bad record ends the batch there too, reported.
TEST(PulledMessages, DecodingIntoSharedMessagesEqualsTheVectorDecode) {
  std::vector<uint8_t> body = record("T", "one", 4, 0, {{"TAGS", "TagA"}, {"UNIQ_KEY", "U1"}});
  const std::vector<uint8_t> second = record("T", "two", 5, body.size(), {{"KEYS", "k"}});
  body.insert(body.end(), second.begin(), second.end());
  const size_t good_size = body.size();
  const std::vector<uint8_t> third = record("T", "three", 6, good_size);
  body.insert(body.end(), third.begin(), third.end());
  std::string added;
  encode_offset_properties(0, 7, added);
  HostTextCache vector_hosts;
  const PulledMessages expected = decode_pulled_messages(body, vector_hosts, added);
  ASSERT_TRUE(expected.error.ok()) << expected.error.to_string();
  ASSERT_EQ(expected.messages.size(), 3u);
  HostTextCache shared_hosts;
  MessageExtShelf shelf;
  std::vector<std::shared_ptr<MessageExt>> shared;
  ASSERT_TRUE(decode_pulled_messages(body, shared_hosts, added, shelf, shared).ok());
  ASSERT_EQ(shared.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_NE(shared[i], nullptr);
    expect_same_message(*shared[i], expected.messages[i], i);
  }
  EXPECT_EQ(shared[0]->msgId, "U1");
  EXPECT_EQ(shared[2]->body_text(), "three");

  body[good_size + 4] ^= 0xFF;  // the third record's magic code
  const PulledMessages cut = decode_pulled_messages(body);
  std::vector<std::shared_ptr<MessageExt>> cut_shared;
  HostTextCache hosts;
  const Status status = decode_pulled_messages(body, hosts, {}, shelf, cut_shared);
  EXPECT_EQ(status.code(), StatusCode::kCorruption);
  EXPECT_EQ(status.to_string(), cut.error.to_string());
  ASSERT_EQ(cut_shared.size(), 2u);
  for (size_t i = 0; i < 2; ++i) expect_same_message(*cut_shared[i], cut.messages[i], i);
}

// A message with every field away from its default and its containers
// past a string's inline room.
void fill_every_field(MessageExt& message, char mark) {
  message.topic = std::string(40, mark);
  message.brokerName = "broker-" + std::string(1, mark);
  message.queueId = 3;
  message.queueOffset = 12;
  message.commitLogOffset = 4096;
  message.sysFlag = 1;
  message.flag = 7;
  message.bodyCRC = 99;
  message.reconsumeTimes = 2;
  message.bornTimestamp = 1'700'000'000'000;
  message.storeTimestamp = 1'700'000'000'123;
  message.preparedTransactionOffset = 5;
  message.bornHost = "10.0.0.10:50000";
  message.storeHost = "10.0.0.1:10911";
  message.storeHostAddress = store::HostAddress::ipv4(10, 0, 0, 1, 10911);
  message.msgId = std::string(32, mark);
  message.body.assign(300, static_cast<uint8_t>(mark));
  message.properties_text = "TAGS\x01" + std::string(60, mark) + "\x02";
}

void expect_default_message(const MessageExt& message) {
  const MessageExt fresh;
  EXPECT_EQ(message.topic, fresh.topic);
  EXPECT_EQ(message.brokerName, fresh.brokerName);
  EXPECT_EQ(message.queueId, fresh.queueId);
  EXPECT_EQ(message.queueOffset, fresh.queueOffset);
  EXPECT_EQ(message.commitLogOffset, fresh.commitLogOffset);
  EXPECT_EQ(message.sysFlag, fresh.sysFlag);
  EXPECT_EQ(message.flag, fresh.flag);
  EXPECT_EQ(message.bodyCRC, fresh.bodyCRC);
  EXPECT_EQ(message.reconsumeTimes, fresh.reconsumeTimes);
  EXPECT_EQ(message.bornTimestamp, fresh.bornTimestamp);
  EXPECT_EQ(message.storeTimestamp, fresh.storeTimestamp);
  EXPECT_EQ(message.preparedTransactionOffset, fresh.preparedTransactionOffset);
  EXPECT_EQ(message.bornHost, fresh.bornHost);
  EXPECT_EQ(message.storeHost, fresh.storeHost);
  EXPECT_EQ(message.storeHostAddress, fresh.storeHostAddress);
  EXPECT_EQ(message.msgId, fresh.msgId);
  EXPECT_EQ(message.body, fresh.body);
  EXPECT_EQ(message.properties_text, fresh.properties_text);
}

TEST(ClearKeepingRoom, EveryFieldToItsDefaultButTheRoomStays) {
  MessageExt message;
  fill_every_field(message, 'x');
  const size_t body_room = message.body.capacity();
  const size_t properties_room = message.properties_text.capacity();
  const size_t msg_id_room = message.msgId.capacity();
  clear_keeping_room(message);
  expect_default_message(message);
  EXPECT_GE(message.body.capacity(), body_room);
  EXPECT_GE(message.properties_text.capacity(), properties_room);
  EXPECT_GE(message.msgId.capacity(), msg_id_room);
}

// A consumer's later pulls decode into the MessageExts of messages it has
// consumed (MessageExtShelf): each must read as a new one would, nothing
// of the one before left (a longer topic, body and properties, a UNIQ_KEY
// msgId where the next has none).
TEST(PulledMessages, APullDecodedIntoConsumedMessagesReadsAsANewOne) {
  std::vector<uint8_t> first = record(std::string(30, 'T'), std::string(500, 'x'), 1, 0,
                                      {{"UNIQ_KEY", std::string(32, 'A')}, {"TAGS", std::string(50, 't')}});
  const std::vector<uint8_t> first_second = record("T", "two", 2, first.size(), {{"KEYS", "k"}});
  first.insert(first.end(), first_second.begin(), first_second.end());
  std::vector<uint8_t> next = record("U", "y", 3, 8192, {{"KEYS", "k"}});
  const std::vector<uint8_t> next_second = record("V", "", 4, 8192 + next.size());
  next.insert(next.end(), next_second.begin(), next_second.end());
  std::string added;
  encode_offset_properties(0, 7, added);
  MessageExtShelf shelf;
  HostTextCache hosts;
  std::vector<std::shared_ptr<MessageExt>> messages;
  ASSERT_TRUE(decode_pulled_messages(first, hosts, added, shelf, messages).ok());
  ASSERT_EQ(messages.size(), 2u);
  const std::vector<const MessageExt*> consumed = {messages[0].get(), messages[1].get()};
  messages.clear();  // consumed
  ASSERT_TRUE(decode_pulled_messages(next, hosts, added, shelf, messages).ok());
  ASSERT_EQ(messages.size(), 2u);
  HostTextCache fresh_hosts;
  const PulledMessages fresh = decode_pulled_messages(next, fresh_hosts, added);
  ASSERT_EQ(fresh.messages.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(messages[i].get(), consumed[i]) << "message " << i << " was not decoded into a consumed one";
    expect_same_message(*messages[i], fresh.messages[i], i);
    EXPECT_EQ(messages[i]->brokerName, "") << "message " << i;
  }
  EXPECT_EQ(messages[0]->msgId, messages[0]->offsetMsgId()) << "no UNIQ_KEY: the offset id";
}

TEST(Compression, RoundTripsAndRefusesTruncationAndBombs) {
  const std::vector<uint8_t> raw(5000, 7);
  std::vector<uint8_t> deflated = deflate_body(raw);
  EXPECT_EQ(inflate_body(deflated, 1 << 20).value(), raw);
  EXPECT_FALSE(inflate_body(deflated, 4999).ok());
  deflated.resize(deflated.size() / 2);
  EXPECT_FALSE(inflate_body(deflated, 1 << 20).ok());
}

TEST(Message, WirePropertiesCarryTagsKeysDelayAndWait) {
  Message message("T", "TagA", "body");
  message.keys = "k1 k2";
  message.delayTimeLevel = 3;
  message.properties["user"] = "v";
  const store::MessageProperties properties = wire_properties(message);
  EXPECT_EQ(properties.at("TAGS"), "TagA");
  EXPECT_EQ(properties.at("KEYS"), "k1 k2");
  EXPECT_EQ(properties.at("DELAY"), "3");
  EXPECT_EQ(properties.at("WAIT"), "true");
  EXPECT_EQ(properties.at("user"), "v");
  EXPECT_FALSE(wire_properties(Message("T", "", "b")).contains("TAGS"));
}

TEST(MessageClientId, IdsAreUniqueHexWithTheClientIpAndReplayFromTheSeed) {
  env::Random random(42);
  MessageClientIdGenerator ids("10.0.0.5", random);
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string id = ids.next();
    EXPECT_EQ(id.size(), 32u);
    EXPECT_EQ(id.substr(0, 8), "0A000005");
    EXPECT_EQ(id.find_first_not_of("0123456789ABCDEF"), std::string::npos);
    EXPECT_EQ(id.substr(20), (std::ostringstream() << std::uppercase << std::hex << std::setw(12)
                                                   << std::setfill('0') << i).str());  // the sequence
    if (!seen.empty()) {
      EXPECT_EQ(id.substr(0, 20), seen.begin()->substr(0, 20));  // one prefix
    }
    EXPECT_TRUE(seen.insert(id).second);
  }
  env::Random same(42);
  env::Random other(43);
  EXPECT_EQ(MessageClientIdGenerator("10.0.0.5", same).next(), *seen.begin());
  EXPECT_NE(MessageClientIdGenerator("10.0.0.5", other).next().substr(8, 12), seen.begin()->substr(8, 12));
}

TEST(Subscription, StarMatchesEverything) {
  const auto all = build_subscription_data("T", "*", 5).value();
  EXPECT_EQ(all.subString, "*");
  EXPECT_TRUE(all.tagsSet.empty());
  EXPECT_TRUE(all.codeSet.empty());
  EXPECT_EQ(all.subVersion, 5);
  EXPECT_TRUE(tags_match(all, ""));
  EXPECT_TRUE(tags_match(all, "Whatever"));
  EXPECT_EQ(build_subscription_data("T", "", 5).value().subString, "*");
}

TEST(Subscription, TagListCarriesJavaHashCodes) {
  const auto some = build_subscription_data("T", " TagA || TagB||TagA ", 0).value();
  EXPECT_EQ(some.tagsSet, (std::set<std::string>{"TagA", "TagB"}));
  // String.hashCode: "TagA" = 2598919, "TagB" = 2598920.
  EXPECT_EQ(some.codeSet, (std::set<int32_t>{2598919, 2598920}));
  EXPECT_TRUE(tags_match(some, "TagB"));
  EXPECT_FALSE(tags_match(some, "TagC"));
  EXPECT_FALSE(tags_match(some, ""));  // an untagged message never matches a tag list
  EXPECT_FALSE(build_subscription_data("T", "||  ||", 0).ok());
}

// MessageQueue compares its names inline (name_order.h): the order is still
// Java's compareTo, (topic, brokerName, queueId) by std::string's order,
// which rebalancing sorts by.
RC_GTEST_PROP(MessageQueueOrder, IsTopicThenBrokerNameThenQueueId, ()) {
  const auto gen_name = rc::gen::container<std::string>(rc::gen::elementOf(std::string("aB%\x01\xff")));
  const auto gen_queue = rc::gen::build<MessageQueue>(
      rc::gen::set(&MessageQueue::topic, rc::gen::resize(20, gen_name)),
      rc::gen::set(&MessageQueue::brokerName, rc::gen::resize(12, gen_name)),
      rc::gen::set(&MessageQueue::queueId, rc::gen::inRange(-2, 3)));
  const MessageQueue a = *gen_queue;
  const MessageQueue b = *rc::gen::oneOf(rc::gen::just(a), gen_queue);
  const auto as_tuple = [](const MessageQueue& q) { return std::tie(q.topic, q.brokerName, q.queueId); };
  RC_ASSERT((a < b) == (as_tuple(a) < as_tuple(b)));
  RC_ASSERT((b < a) == (as_tuple(b) < as_tuple(a)));
  RC_ASSERT((a == b) == (as_tuple(a) == as_tuple(b)));
}

}  // namespace
}  // namespace mqlab::client::message_test
