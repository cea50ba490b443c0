// ProcessQueue offset bookkeeping: the consumed offset is the smallest
// unconsumed offset however handlers finish; examples for parking, resets
// and filtered tails, and RapidCheck properties that run random pulls,
// completions, parks, releases and resets against a simple model (a map).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "broker/client/process_queue.h"

namespace mqlab::client::process_queue_prop_test {
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

// A reset below messages still in flight makes the next pull land in the
// middle of the tracked offsets, and completions out of order remove from
// the middle: the order, the span and the counts must survive both.
TEST(ProcessQueue, OutOfOrderInsertAndRemoveKeepTheOffsetOrder) {
  ProcessQueue queue(0);
  queue.put_messages(messages({0, 1, 2, 3, 4}), 5);
  auto zero = queue.take_next();
  auto one = queue.take_next();
  auto two = queue.take_next();
  auto three = queue.take_next();
  EXPECT_EQ(queue.remove(two->queueOffset), 0);  // from the middle
  queue.reset(2);  // drops waiting 4; 0, 1 and 3 stay in flight
  EXPECT_EQ(queue.message_count(), 3u);
  EXPECT_EQ(queue.max_span(), 3);
  queue.put_messages(messages({2, 3, 4}), 5);  // 2 lands between 1 and 3; 3 is a duplicate
  EXPECT_EQ(queue.message_count(), 5u);
  EXPECT_EQ(queue.waiting_count(), 2u);
  EXPECT_EQ(queue.take_next()->queueOffset, 2);  // the lowest waiting, not the newest
  EXPECT_EQ(queue.take_next()->queueOffset, 4);
  EXPECT_EQ(queue.remove(one->queueOffset), 0);
  EXPECT_EQ(queue.remove(zero->queueOffset), 2);
  EXPECT_EQ(queue.max_span(), 2);  // 2..4
  EXPECT_EQ(queue.remove(4), 2);
  EXPECT_EQ(queue.max_span(), 1);  // 2..3
  EXPECT_EQ(queue.remove(2), 3);
  EXPECT_EQ(queue.remove(three->queueOffset), 5);
  EXPECT_EQ(queue.max_span(), 0);
  EXPECT_EQ(queue.cached_bytes(), 0u);
}

// A released message goes back in offset order, ahead of later waiting ones.
TEST(ProcessQueue, AReleasedMessageIsHandedOutBeforeLaterOnes) {
  ProcessQueue queue(0);
  queue.put_messages(messages({0, 1, 2}), 3);
  auto zero = queue.take_next();
  queue.park(zero->queueOffset);
  EXPECT_EQ(queue.take_next()->queueOffset, 1);
  queue.release(0);
  EXPECT_EQ(queue.waiting_count(), 2u);
  auto again = queue.take_next();
  EXPECT_EQ(again->queueOffset, 0);
  EXPECT_EQ(again->reconsumeTimes, 1);
  EXPECT_EQ(zero->reconsumeTimes, 0);  // the handed-out copy is not changed under its handler
  EXPECT_EQ(queue.take_next()->queueOffset, 2);
  EXPECT_EQ(queue.take_next(), nullptr);
}

// Everything a ProcessQueue reports, against a map from offset to state, for
// any mix of pulls (with duplicates), hand-outs, completions in any order,
// parks, releases and resets (rebalancing's OFFSET_ILLEGAL, up or down).
RC_GTEST_PROP(ProcessQueue, MatchesAMapModelUnderAnyOperations, ()) {
  enum class S { kWaiting, kInFlight, kParked };
  struct Model {
    S state;
    int32_t reconsume_times;
  };
  const auto body_bytes = [](int64_t offset) { return static_cast<size_t>(offset % 5 + 1); };
  const int64_t start = *rc::gen::inRange<int64_t>(0, 100);
  ProcessQueue queue(start);
  std::map<int64_t, Model> model;
  int64_t frontier = start;
  int64_t next = start;
  const int steps = *rc::gen::inRange(1, 300);
  for (int step = 0; step < steps; ++step) {
    std::vector<int64_t> in_flight;
    std::vector<int64_t> parked;
    for (const auto& [offset, m] : model) {
      if (m.state == S::kInFlight) in_flight.push_back(offset);
      if (m.state == S::kParked) parked.push_back(offset);
    }
    const int action = *rc::gen::inRange(0, 10);
    if (action <= 2) {  // a pull; sometimes re-delivering tracked offsets first
      std::vector<MessageExt> batch;
      const auto add = [&](int64_t offset) {
        MessageExt message;
        message.queueOffset = offset;
        message.body.assign(body_bytes(offset), 7);
        batch.push_back(std::move(message));
        model.try_emplace(offset, Model{S::kWaiting, 0});
      };
      if (!model.empty() && *rc::gen::inRange(0, 4) == 0) add(model.begin()->first);
      const int64_t count = *rc::gen::inRange<int64_t>(0, 6);
      for (int64_t i = 0; i < count; ++i, ++next) {
        if (*rc::gen::inRange(0, 4) != 0) add(next);  // else filtered by tag
      }
      queue.put_messages(std::move(batch), next);
      frontier = next;
    } else if (action <= 4) {
      const auto message = queue.take_next();
      const auto lowest = std::find_if(model.begin(), model.end(), [](const auto& e) { return e.second.state == S::kWaiting; });
      if (lowest == model.end()) {
        RC_ASSERT(message == nullptr);
      } else {
        RC_ASSERT(message != nullptr);
        RC_ASSERT(message->queueOffset == lowest->first);
        RC_ASSERT(message->reconsumeTimes == lowest->second.reconsume_times);
        lowest->second.state = S::kInFlight;
      }
    } else if (action <= 6 && !in_flight.empty()) {
      const int64_t offset = in_flight[*rc::gen::inRange<size_t>(0, in_flight.size())];
      model.erase(offset);
      queue.remove(offset);
    } else if (action == 7 && !in_flight.empty()) {
      const int64_t offset = in_flight[*rc::gen::inRange<size_t>(0, in_flight.size())];
      model[offset] = Model{S::kParked, model[offset].reconsume_times + 1};
      queue.park(offset);
    } else if (action == 8 && !parked.empty()) {
      const int64_t offset = parked[*rc::gen::inRange<size_t>(0, parked.size())];
      model[offset].state = S::kWaiting;
      queue.release(offset);
    } else if (action == 9) {
      next = *rc::gen::inRange<int64_t>(start, next + 3);
      std::erase_if(model, [](const auto& e) { return e.second.state != S::kInFlight; });
      queue.reset(next);
      frontier = next;
    }
    size_t waiting = 0;
    size_t flying = 0;
    uint64_t bytes = 0;
    for (const auto& [offset, m] : model) {
      waiting += m.state == S::kWaiting ? 1 : 0;
      flying += m.state == S::kInFlight ? 1 : 0;
      bytes += body_bytes(offset);
    }
    RC_ASSERT(queue.consumed_offset() == (model.empty() ? frontier : std::min(model.begin()->first, frontier)));
    RC_ASSERT(queue.message_count() == model.size());
    RC_ASSERT(queue.waiting_count() == waiting);
    RC_ASSERT(queue.in_flight_count() == flying);
    RC_ASSERT(queue.cached_bytes() == bytes);
    RC_ASSERT(queue.max_span() == (model.empty() ? 0 : model.rbegin()->first - model.begin()->first));
  }
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
}  // namespace mqlab::client::process_queue_prop_test
