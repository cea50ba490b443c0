// ProcessQueue offset bookkeeping: the consumed offset is the smallest
// unconsumed offset however handlers finish; examples for parking, resets
// and filtered tails, and a RapidCheck property that completes random
// batches in random order against a simple model.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "broker/client/process_queue.h"

namespace mqlab::client {
namespace {

std::vector<MessageExt> messages(std::initializer_list<int64_t> offsets) {
  std::vector<MessageExt> out;
  for (int64_t offset : offsets) {
    MessageExt message;
    message.queueOffset = offset;
    message.body = {1, 2, 3};
    out.push_back(message);
  }
  return out;
}

TEST(ProcessQueue, ConsumedOffsetIsTheSmallestUnconsumed) {
  ProcessQueue queue(10);
  EXPECT_EQ(queue.consumed_offset(), 10);
  queue.put_messages(messages({10, 11, 12}), 13);
  EXPECT_EQ(queue.consumed_offset(), 10);
  auto a = queue.take_next();
  auto b = queue.take_next();
  auto c = queue.take_next();
  EXPECT_EQ(queue.take_next(), nullptr);
  EXPECT_EQ(queue.in_flight_count(), 3u);
  EXPECT_EQ(queue.remove(c->queueOffset), 10);  // 12 done, 10 and 11 still out
  EXPECT_EQ(queue.remove(a->queueOffset), 11);
  EXPECT_EQ(queue.remove(b->queueOffset), 13);  // all done: the frontier
  EXPECT_EQ(queue.cached_bytes(), 0u);
}

TEST(ProcessQueue, FilteredTailAndEmptyPullsMoveTheFrontier) {
  ProcessQueue queue(0);
  queue.put_messages(messages({0}), 5);  // 1..4 filtered out by tag
  EXPECT_EQ(queue.remove(queue.take_next()->queueOffset), 5);
  queue.advance(9);  // NO_MATCHED_MSG past 5..8
  EXPECT_EQ(queue.consumed_offset(), 9);
}

TEST(ProcessQueue, ParkedMessageHoldsTheOffsetUntilConsumedAgain) {
  ProcessQueue queue(0);
  queue.put_messages(messages({0, 1}), 2);
  auto first = queue.take_next();
  queue.park(first->queueOffset);
  auto second = queue.take_next();  // the others need not wait
  EXPECT_EQ(second->queueOffset, 1);
  EXPECT_EQ(queue.remove(1), 0);
  EXPECT_EQ(queue.take_next(), nullptr);  // parked: not handed out
  queue.release(0);
  auto again = queue.take_next();
  EXPECT_EQ(again->queueOffset, 0);
  EXPECT_EQ(again->reconsumeTimes, 1);
  EXPECT_EQ(queue.remove(0), 2);
}

TEST(ProcessQueue, ResetDropsWaitingButKeepsInFlight) {
  ProcessQueue queue(0);
  queue.put_messages(messages({0, 1, 2}), 3);
  auto first = queue.take_next();
  queue.reset(1);  // the broker says: start at 1
  EXPECT_EQ(queue.message_count(), 1u);
  EXPECT_EQ(queue.consumed_offset(), 0);
  EXPECT_EQ(queue.take_next(), nullptr);
  EXPECT_EQ(queue.remove(first->queueOffset), 1);
  queue.reset(0);  // backwards: the frontier follows
  EXPECT_EQ(queue.consumed_offset(), 0);
  EXPECT_EQ(queue.remove(77), 0);  // unknown offsets are ignored
}

TEST(ProcessQueue, DuplicatesAreIgnoredAndSpanIsMeasured) {
  ProcessQueue queue(0);
  queue.put_messages(messages({0, 1}), 2);
  queue.put_messages(messages({1, 5}), 6);
  EXPECT_EQ(queue.message_count(), 3u);
  EXPECT_EQ(queue.max_span(), 5);
  EXPECT_EQ(queue.cached_bytes(), 9u);
}

RC_GTEST_PROP(ProcessQueue, ConsumedOffsetIsSmallestUnconsumedUnderAnyCompletionOrder, ()) {
  const int64_t start = *rc::gen::inRange<int64_t>(0, 1000);
  ProcessQueue queue(start);
  std::set<int64_t> unconsumed;
  std::vector<int64_t> out;  // in flight
  int64_t next = start;
  const int steps = *rc::gen::inRange(1, 200);
  for (int step = 0; step < steps; ++step) {
    const int action = *rc::gen::inRange(0, 3);
    if (action == 0) {  // a pull: some offsets delivered, some filtered
      std::vector<MessageExt> batch;
      const int64_t count = *rc::gen::inRange<int64_t>(0, 8);
      for (int64_t i = 0; i < count; ++i, ++next) {
        if (*rc::gen::inRange(0, 4) == 0) continue;  // filtered by tag
        MessageExt message;
        message.queueOffset = next;
        batch.push_back(message);
        unconsumed.insert(next);
      }
      queue.put_messages(std::move(batch), next);
    } else if (action == 1) {
      if (auto message = queue.take_next()) out.push_back(message->queueOffset);
    } else if (!out.empty()) {
      const size_t pick = *rc::gen::inRange<size_t>(0, out.size());
      const int64_t offset = out[pick];
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(pick));
      unconsumed.erase(offset);
      queue.remove(offset);
    }
    const int64_t expected = unconsumed.empty() ? next : *unconsumed.begin();
    RC_ASSERT(queue.consumed_offset() == expected);
    RC_ASSERT(queue.message_count() == unconsumed.size());
    RC_ASSERT(queue.in_flight_count() == out.size());
  }
}

}  // namespace
}  // namespace mqlab::client
