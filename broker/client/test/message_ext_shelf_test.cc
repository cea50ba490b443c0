// MessageExtShelf: a message nobody holds any more is handed out again,
// emptied but with its room; one still held is never touched; the oldest
// comes back first; the shelf stays bounded. (A pull decoded into reused
// messages: message_test.cc.)
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "broker/client/message.h"
#include "broker/client/message_ext_shelf.h"

namespace mqlab::client::message_ext_shelf_test {
namespace {

// A message with every field away from its default and its containers
// past a string's inline room.
void fill(MessageExt& message, char mark) {
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

void expect_default(const MessageExt& message) {
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
  fill(message, 'x');
  const size_t body_room = message.body.capacity();
  const size_t properties_room = message.properties_text.capacity();
  const size_t msg_id_room = message.msgId.capacity();
  clear_keeping_room(message);
  expect_default(message);
  EXPECT_GE(message.body.capacity(), body_room);
  EXPECT_GE(message.properties_text.capacity(), properties_room);
  EXPECT_GE(message.msgId.capacity(), msg_id_room);
}

TEST(MessageExtShelf, AMessageLetGoIsHandedOutAgainEmptied) {
  MessageExtShelf shelf;
  std::shared_ptr<MessageExt> first = shelf.take();
  expect_default(*first);
  fill(*first, 'a');
  const MessageExt* const address = first.get();
  const uint8_t* const body = first->body.data();
  first.reset();  // consumed: only the shelf holds it
  const std::shared_ptr<MessageExt> again = shelf.take();
  EXPECT_EQ(again.get(), address);
  expect_default(*again);
  again->body.assign(300, 'b');
  EXPECT_EQ(again->body.data(), body) << "the body's room was kept";
  EXPECT_EQ(shelf.kept(), 1u);
}

TEST(MessageExtShelf, AMessageStillHeldIsNeverTouched) {
  MessageExtShelf shelf;
  const std::shared_ptr<MessageExt> held = shelf.take();
  fill(*held, 'h');
  const std::shared_ptr<MessageExt> other = shelf.take();
  EXPECT_NE(other.get(), held.get());
  expect_default(*other);
  fill(*other, 'o');
  EXPECT_EQ(held->topic, std::string(40, 'h'));
  EXPECT_EQ(held->msgId, std::string(32, 'h'));
  EXPECT_EQ(held->body, std::vector<uint8_t>(300, 'h'));
  EXPECT_EQ(shelf.kept(), 2u);
}

// Handed out a, b, c; b let go first, then a: the oldest free one (a) comes
// back first, then b, and only then a new one while c is held.
TEST(MessageExtShelf, TheOldestHandedOutComesBackFirst) {
  MessageExtShelf shelf;
  std::shared_ptr<MessageExt> a = shelf.take();
  std::shared_ptr<MessageExt> b = shelf.take();
  const std::shared_ptr<MessageExt> c = shelf.take();
  const MessageExt* const a_address = a.get();
  const MessageExt* const b_address = b.get();
  b.reset();
  a.reset();
  const std::shared_ptr<MessageExt> first = shelf.take();
  const std::shared_ptr<MessageExt> second = shelf.take();
  const std::shared_ptr<MessageExt> third = shelf.take();
  EXPECT_EQ(first.get(), a_address);
  EXPECT_EQ(second.get(), b_address);
  EXPECT_NE(third.get(), a_address);
  EXPECT_NE(third.get(), b_address);
  EXPECT_NE(third.get(), c.get());
  EXPECT_EQ(shelf.kept(), 4u);
}

TEST(MessageExtShelf, KeepsAtMostItsBoundWhileEveryMessageIsHeld) {
  MessageExtShelf shelf;
  std::vector<std::shared_ptr<MessageExt>> held;
  for (int i = 0; i < 3 * static_cast<int>(MessageExtShelf::kMaxKept); ++i) {
    held.push_back(shelf.take());
    held.back()->queueOffset = i;
  }
  EXPECT_EQ(shelf.kept(), MessageExtShelf::kMaxKept);
  for (size_t i = 0; i < held.size(); ++i) {
    EXPECT_EQ(held[i]->queueOffset, static_cast<int64_t>(i)) << "a held message was handed out again";
  }
  // The ones that left the shelf are freed by their holders alone: the last
  // kMaxKept handed out are its, so letting all go frees those for reuse.
  const MessageExt* const newest = held.back().get();
  const MessageExt* const oldest_kept = held[held.size() - MessageExtShelf::kMaxKept].get();
  held.clear();
  const std::shared_ptr<MessageExt> again = shelf.take();
  EXPECT_EQ(again.get(), oldest_kept);
  EXPECT_NE(again.get(), newest);
}

}  // namespace
}  // namespace mqlab::client::message_ext_shelf_test
