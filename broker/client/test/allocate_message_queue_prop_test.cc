// AllocateMessageQueueAveragely: worked examples from Java's own split, and
// RapidCheck properties over random queue and consumer sets (each consumer
// computing its share independently, from its own shuffled view).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "broker/client/allocate_message_queue.h"

namespace mqlab::client::allocate_message_queue_prop_test {
namespace {

std::vector<MessageQueue> queues(int brokers, int per_broker) {
  std::vector<MessageQueue> out;
  for (int b = 0; b < brokers; ++b) {
    for (int q = 0; q < per_broker; ++q) out.push_back({"T", "broker-" + std::string(1, char('a' + b)), q});
  }
  return out;
}

std::vector<int32_t> ids_of(const std::vector<MessageQueue>& mine) {
  std::vector<int32_t> ids;
  for (const auto& q : mine) ids.push_back(q.queueId);
  return ids;
}

TEST(AllocateMessageQueueAveragely, EightQueuesThreeConsumersGiveThreeThreeTwo) {
  const auto all = queues(1, 8);
  const std::vector<std::string> cids = {"c@3", "c@1", "c@2"};  // unsorted on purpose
  EXPECT_EQ(ids_of(allocate_message_queue_averagely("c@1", all, cids)), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(ids_of(allocate_message_queue_averagely("c@2", all, cids)), (std::vector<int32_t>{3, 4, 5}));
  EXPECT_EQ(ids_of(allocate_message_queue_averagely("c@3", all, cids)), (std::vector<int32_t>{6, 7}));
}

TEST(AllocateMessageQueueAveragely, MoreConsumersThanQueuesLeavesTheLastIdle) {
  const auto all = queues(1, 2);
  const std::vector<std::string> cids = {"a", "b", "c"};
  EXPECT_EQ(ids_of(allocate_message_queue_averagely("a", all, cids)), (std::vector<int32_t>{0}));
  EXPECT_EQ(ids_of(allocate_message_queue_averagely("b", all, cids)), (std::vector<int32_t>{1}));
  EXPECT_TRUE(allocate_message_queue_averagely("c", all, cids).empty());
}

TEST(AllocateMessageQueueAveragely, AConsumerNotInTheListGetsNothing) {
  EXPECT_TRUE(allocate_message_queue_averagely("x", queues(2, 4), {"a", "b"}).empty());
  EXPECT_TRUE(allocate_message_queue_averagely("a", {}, {"a", "b"}).empty());
}

TEST(AllocateMessageQueueAveragely, QueuesSortByBrokerThenId) {
  const auto mine = allocate_message_queue_averagely("a", queues(2, 3), {"a", "b"});
  ASSERT_EQ(mine.size(), 3u);
  EXPECT_EQ(mine[0].brokerName, "broker-a");
  EXPECT_EQ(mine[2].brokerName, "broker-a");
  EXPECT_EQ(mine[2].queueId, 2);
}

RC_GTEST_PROP(AllocateMessageQueueAveragely, EveryQueueHasExactlyOneOwnerInContiguousNearEqualBlocks, ()) {
  const int brokers = *rc::gen::inRange(1, 4);
  const int per_broker = *rc::gen::inRange(0, 17);
  const int consumers = *rc::gen::inRange(1, 12);
  std::vector<MessageQueue> all = queues(brokers, per_broker);
  std::vector<std::string> cids;
  for (int c = 0; c < consumers; ++c) cids.push_back("10.0.0." + std::to_string(c) + "@i");
  std::vector<MessageQueue> sorted = all;
  std::sort(sorted.begin(), sorted.end());

  std::map<MessageQueue, int> owners;
  std::set<size_t> sizes;
  for (const std::string& cid : cids) {
    // Each consumer sees the lists in its own order, as it gets them from the wire.
    std::vector<MessageQueue> view = *rc::gen::arbitrary<bool>() ? all : std::vector<MessageQueue>(all.rbegin(), all.rend());
    std::vector<std::string> id_view = cids;
    std::rotate(id_view.begin(), id_view.begin() + *rc::gen::inRange(0, consumers), id_view.end());
    const std::vector<MessageQueue> mine = allocate_message_queue_averagely(cid, view, id_view);
    sizes.insert(mine.size());
    for (const auto& q : mine) ++owners[q];
    if (!mine.empty()) {
      // Contiguous: the block is a run of the sorted list.
      const auto start = std::find(sorted.begin(), sorted.end(), mine.front());
      RC_ASSERT(start != sorted.end());
      RC_ASSERT(static_cast<size_t>(sorted.end() - start) >= mine.size());
      RC_ASSERT(std::equal(mine.begin(), mine.end(), start));
    }
  }
  RC_ASSERT(owners.size() == all.size());
  for (const auto& [q, count] : owners) RC_ASSERT(count == 1);
  RC_ASSERT(*sizes.rbegin() - *sizes.begin() <= 1u);
}

}  // namespace
}  // namespace mqlab::client::allocate_message_queue_prop_test
