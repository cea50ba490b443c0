// End to end without faults: every SEND_OK message handled once, in queue order, by its averaged owner; rebalancing,
// restart at the committed offset, retry to %DLQ%, lookups. Real NameServer, brokers and clients on ClusterHarness.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "broker/client/message.h"
#include "broker/client/mix_all.h"
#include "broker/client/mq_client_api.h"
#include "broker/client/test/cluster_harness.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"
#include "broker/store/message_codec.h"

namespace mqlab::client::end_to_end_test {
namespace {

using remoting::RemotingCommand;
using remoting::RequestCode;
using remoting::ResponseCode;
using testing::ClientNode;
using testing::ClusterHarness;

constexpr const char* kTopic = "T";
constexpr int32_t kQueuesPerBroker = 8;
constexpr int32_t kQueues = 2 * kQueuesPerBroker;

// One call of a member's handler.
struct Delivery {
  size_t member = 0;
  uint32_t incarnation = 0;
  std::string key;
  std::string msg_id;       // UNIQ_KEY: the same for the original and its retries
  bool from_retry = false;  // pulled from %RETRY%<group> (RETRY_TOPIC is set)
  MessageQueue queue;       // the queue it was pulled from
  int64_t queue_offset = 0;
  int32_t reconsume_times = 0;
  std::string body;
  Nanos at = 0;  // when the handler was called
};

struct Sent {
  std::string key;
  SendResult result;
};

// Queues of T in MessageQueue order: broker-a 0..7, then broker-b 0..7.
std::vector<MessageQueue> all_queues_of_topic() {
  std::vector<MessageQueue> queues;
  for (const char* broker : {"broker-a", "broker-b"}) {
    for (int32_t id = 0; id < kQueuesPerBroker; ++id) queues.push_back({kTopic, broker, id});
  }
  return queues;
}

// What AllocateMessageQueueAveragely prescribes, written out by hand: the
// members in clientId order take contiguous blocks, the first
// (queues % members) of them one queue more.
std::vector<std::vector<MessageQueue>> averaged_blocks(size_t members) {
  const std::vector<MessageQueue> queues = all_queues_of_topic();
  std::vector<std::vector<MessageQueue>> blocks(members);
  size_t next = 0;
  for (size_t i = 0; i < members; ++i) {
    const size_t size = queues.size() / members + (i < queues.size() % members ? 1 : 0);
    blocks[i].assign(queues.begin() + static_cast<ptrdiff_t>(next), queues.begin() + static_cast<ptrdiff_t>(next + size));
    next += size;
  }
  EXPECT_EQ(next, queues.size());
  return blocks;
}

std::string key_of(const std::string& prefix, int i) { return prefix + "-" + std::to_string(i); }

class EndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(cluster_.start());
    ASSERT_NO_FATAL_FAILURE(cluster_.create_topic(kTopic, kQueuesPerBroker));
    ClientNode& node = cluster_.add_client("producer", "10.0.1.10");
    node.start();
    producer_ = &node.add_producer(ProducerConfig{.producerGroup = "PG"});
    std::optional<Status> started;
    producer_->start([&](Status status) { started = status; });
    ASSERT_TRUE(cluster_.run_until([&] { return started.has_value(); }));
    ASSERT_TRUE(started->ok()) << started->to_string();
  }

  // A member of group on host 10.0.1.<index + 1>, named member-<index>, so
  // members sort by index in clientId order. Not started.
  size_t add_member(const std::string& group) {
    const size_t index = members_.size();
    members_.push_back(Member{&cluster_.add_client("member-" + std::to_string(index), "10.0.1." + std::to_string(index + 1)),
                              group});
    return index;
  }

  // A fresh incarnation of member index: a PushConsumer of T that records
  // every call of its handler and fails the keys in fail_keys_.
  void start_member(size_t index) {
    Member& member = members_.at(index);
    member.node->start();
    PushConsumerConfig config;
    config.consumerGroup = member.group;
    config.consumeFromWhere = ConsumeFromWhere::CONSUME_FROM_FIRST_OFFSET;
    config.maxReconsumeTimes = max_reconsume_times_;
    PushConsumer& consumer = member.node->add_consumer(config);
    ASSERT_TRUE(consumer.subscribe(kTopic, subscription_).ok());
    ClientNode* node = member.node;
    consumer.register_message_listener([this, index, node](const MessageExt& message, ConsumeCallback done) {
      record(index, node->incarnation(), message);
      const ConsumeResult result = fail_keys_.contains(message.keys()) ? ConsumeResult::RECONSUME_LATER
                                                                       : ConsumeResult::SUCCESS;
      if (handler_delay_ == 0) return done(result);
      node->env().executor().run_after(handler_delay_, [done = std::move(done), result] { done(result); });
    });
    std::optional<Status> started;
    consumer.start([&](Status status) { started = status; });
    ASSERT_TRUE(cluster_.run_until([&] { return started.has_value(); }));
    ASSERT_TRUE(started->ok()) << started->to_string();
  }

  void record(size_t member, uint32_t incarnation, const MessageExt& message) {
    Delivery delivery;
    delivery.member = member;
    delivery.incarnation = incarnation;
    delivery.key = message.keys();
    delivery.msg_id = message.msgId;
    delivery.from_retry = message.property(store::kPropertyRetryTopic).has_value();
    const std::string pulled_topic = delivery.from_retry ? retry_topic(members_.at(member).group) : message.topic;
    delivery.queue = MessageQueue{pulled_topic, message.brokerName, message.queueId};
    delivery.queue_offset = message.queueOffset;
    delivery.reconsume_times = message.reconsumeTimes;
    delivery.body = message.body_text();
    delivery.at = cluster_.now();
    deliveries_.push_back(std::move(delivery));
  }

  // The members' queues of T, as each sees its own assignment.
  std::vector<std::vector<MessageQueue>> assignment(const std::vector<size_t>& members) {
    std::vector<std::vector<MessageQueue>> queues;
    for (size_t index : members) {
      std::vector<MessageQueue>& mine = queues.emplace_back();
      for (const MessageQueue& queue : members_.at(index).node->consumer().assigned_queues()) {
        if (queue.topic == kTopic) mine.push_back(queue);
      }
    }
    return queues;
  }

  // Sends count messages with keys prefix-0.. (bodies "body of <key>"),
  // every gap apart, and runs until each send has its result.
  void send(const std::string& prefix, int count, Nanos gap = 0) {
    const size_t first = sent_.size();
    for (int i = 0; i < count; ++i) {
      sent_.push_back(Sent{key_of(prefix, i), {}});
      Message message(kTopic, "TagA", "body of " + key_of(prefix, i));
      message.keys = key_of(prefix, i);
      const size_t slot = sent_.size() - 1;
      producer_->send(std::move(message), [this, slot](SendResult result) {
        sent_[slot].result = std::move(result);
        ++send_results_;
      });
      if (gap > 0) cluster_.run_for(gap);
    }
    ASSERT_TRUE(cluster_.run_until([&] { return send_results_ == sent_.size(); }, seconds(30)));
    for (size_t i = first; i < sent_.size(); ++i) {
      EXPECT_EQ(sent_[i].result.status, SendStatus::SEND_OK) << sent_[i].key << ": " << sent_[i].result.remark;
    }
  }

  std::map<std::string, int> delivery_counts() const {
    std::map<std::string, int> counts;
    for (const Delivery& delivery : deliveries_) ++counts[delivery.key];
    return counts;
  }

  // Whether every acknowledged message with one of the prefixes was handled at least once.
  bool all_delivered(const std::set<std::string>& prefixes) const {
    const std::map<std::string, int> counts = delivery_counts();
    for (const Sent& sent : sent_) {
      if (!prefixes.contains(sent.key.substr(0, sent.key.find('-')))) continue;
      if (is_stored(sent.result.status) && !counts.contains(sent.key)) return false;
    }
    return true;
  }

  const Sent& sent_with_key(const std::string& key) const {
    for (const Sent& sent : sent_) {
      if (sent.key == key) return sent;
    }
    MQ_UNREACHABLE("nothing was sent with key " + key);
  }

  // Per queue, in handling order, the offsets handled by members matching keep.
  template <typename Keep>
  std::map<MessageQueue, std::vector<int64_t>> offsets_by_queue(Keep keep) const {
    std::map<MessageQueue, std::vector<int64_t>> offsets;
    for (const Delivery& delivery : deliveries_) {
      if (keep(delivery)) offsets[delivery.queue].push_back(delivery.queue_offset);
    }
    return offsets;
  }

  // The broker-side committed offsets of group on T, per queue (missing = none).
  std::map<MessageQueue, int64_t> committed_offsets(const std::string& group) {
    std::map<MessageQueue, int64_t> committed;
    for (size_t b = 0; b < cluster_.broker_count(); ++b) {
      for (int32_t id = 0; id < kQueuesPerBroker; ++id) {
        const auto offset = cluster_.broker(b).consumer_offset_manager().query_offset(group, kTopic, id);
        if (offset.has_value()) committed[MessageQueue{kTopic, cluster_.broker_spec(b).name, id}] = *offset;
      }
    }
    return committed;
  }

  int64_t queue_max_offset(const MessageQueue& queue) {
    return cluster_.broker(cluster_.broker_index(queue.brokerName))
        .message_store()
        .max_offset_in_queue(queue.topic, queue.queueId)
        .value();
  }

  struct Member {
    ClientNode* node;
    std::string group;
  };

  ClusterHarness cluster_;
  Producer* producer_ = nullptr;
  std::vector<Member> members_;
  std::vector<Sent> sent_;
  size_t send_results_ = 0;
  std::vector<Delivery> deliveries_;
  std::set<std::string> fail_keys_;
  Nanos handler_delay_ = 0;
  int32_t max_reconsume_times_ = 16;
  std::string subscription_ = "*";  // what members started from here subscribe to
};

// --- (a) exactly once, in order, in averaged blocks -----------------------------------

TEST_F(EndToEndTest, EveryAcknowledgedMessageIsHandledOnceInQueueOrderByItsQueuesOwner) {
  constexpr int kMessages = 400;
  for (int i = 0; i < 3; ++i) start_member(add_member("G"));
  const std::vector<std::vector<MessageQueue>> blocks = averaged_blocks(3);
  ASSERT_EQ(blocks[0].size(), 6u);  // 16 queues over 3 members: 6, 5, 5
  ASSERT_TRUE(cluster_.run_until([&] { return assignment({0, 1, 2}) == blocks; }, seconds(30)))
      << "the group never settled on the averaged split";

  send("a", kMessages);
  ASSERT_TRUE(cluster_.run_until([&] { return all_delivered({"a"}); }, seconds(60)));
  cluster_.run_for(seconds(30));  // room for a duplicate to show up

  std::map<MessageQueue, size_t> owner;
  for (size_t member = 0; member < blocks.size(); ++member) {
    for (const MessageQueue& queue : blocks[member]) owner[queue] = member;
  }
  const std::map<std::string, int> counts = delivery_counts();
  std::set<MessageQueue> queues_used;
  for (const Sent& sent : sent_) {
    ASSERT_EQ(sent.result.status, SendStatus::SEND_OK) << sent.key;
    EXPECT_EQ(counts.count(sent.key) ? counts.at(sent.key) : 0, 1) << sent.key;
    queues_used.insert(sent.result.messageQueue);
  }
  EXPECT_EQ(queues_used.size(), static_cast<size_t>(kQueues));  // round robin reached every queue
  EXPECT_EQ(deliveries_.size(), static_cast<size_t>(kMessages));
  for (const Delivery& delivery : deliveries_) {
    const Sent& sent = sent_with_key(delivery.key);
    EXPECT_EQ(delivery.msg_id, sent.result.msgId);
    EXPECT_EQ(delivery.queue, sent.result.messageQueue) << delivery.key;
    EXPECT_EQ(delivery.queue_offset, sent.result.queueOffset) << delivery.key;
    EXPECT_EQ(delivery.body, "body of " + delivery.key);
    EXPECT_EQ(delivery.reconsume_times, 0);
    EXPECT_EQ(delivery.member, owner.at(delivery.queue)) << delivery.key << " handled outside its owner's block";
  }
  for (const auto& [queue, offsets] : offsets_by_queue([](const Delivery&) { return true; })) {
    for (size_t i = 0; i < offsets.size(); ++i) {
      EXPECT_EQ(offsets[i], static_cast<int64_t>(i)) << queue.to_string() << ": not handled in offset order";
    }
  }
  EXPECT_EQ(assignment({0, 1, 2}), blocks);  // nobody moved meanwhile
}

// --- (b) a member leaving -----------------------------------------------------------

class MemberLeavingTest : public EndToEndTest, public ::testing::WithParamInterface<bool> {};

TEST_P(MemberLeavingTest, TheOthersTakeOverItsQueuesWithinARebalanceInterval) {
  const bool killed = GetParam();
  for (int i = 0; i < 3; ++i) start_member(add_member("G"));
  ASSERT_TRUE(cluster_.run_until([&] { return assignment({0, 1, 2}) == averaged_blocks(3); }, seconds(30)));
  send("before", 90);
  ASSERT_TRUE(cluster_.run_until([&] { return all_delivered({"before"}); }, seconds(30)));

  const Nanos left_at = cluster_.now();
  if (killed) {
    members_[2].node->kill();
  } else {
    members_[2].node->shutdown();
  }
  // The survivors see one member fewer at their next periodic rebalance (every rebalanceInterval, 10 s).
  ASSERT_TRUE(cluster_.run_until([&] { return assignment({0, 1}) == averaged_blocks(2); }, seconds(11)));
  const Nanos taken_over_ns = cluster_.now() - left_at;
  EXPECT_LE(taken_over_ns, seconds(10) + seconds(1));
  std::printf("[ measure  ] member %s: queues taken over after %.3f s of virtual time\n",
              killed ? "killed" : "shut down", static_cast<double>(taken_over_ns) / 1e9);

  const size_t deliveries_before = deliveries_.size();
  send("after", 120);
  ASSERT_TRUE(cluster_.run_until([&] { return all_delivered({"after"}); }, seconds(60)));
  cluster_.run_for(seconds(20));
  const std::map<std::string, int> counts = delivery_counts();
  for (int i = 0; i < 120; ++i) EXPECT_EQ(counts.at(key_of("after", i)), 1) << key_of("after", i);
  for (size_t i = deliveries_before; i < deliveries_.size(); ++i) {
    EXPECT_NE(deliveries_[i].member, 2u) << deliveries_[i].key << " handled by the member that left";
  }
  if (!killed) {
    // A clean shutdown committed everything it handled: nothing is handled twice.
    for (int i = 0; i < 90; ++i) EXPECT_EQ(counts.at(key_of("before", i)), 1) << key_of("before", i);
  }
}

INSTANTIATE_TEST_SUITE_P(CleanOrKilled, MemberLeavingTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "Killed" : "ShutDown"; });

// --- (c) restart from the committed offset ------------------------------------------

TEST_F(EndToEndTest, RestartedConsumerResumesAtItsCommittedOffset) {
  const size_t solo = add_member("GC");
  start_member(solo);
  ASSERT_TRUE(cluster_.run_until([&] { return assignment({solo})[0] == all_queues_of_topic(); }, seconds(30)));

  // A clean shutdown commits everything handled: the restart redelivers nothing.
  send("one", 160);
  ASSERT_TRUE(cluster_.run_until([&] { return all_delivered({"one"}); }, seconds(30)));
  members_[solo].node->shutdown();
  cluster_.run_for(seconds(1));
  const std::map<MessageQueue, int64_t> committed_at_shutdown = committed_offsets("GC");
  for (const MessageQueue& queue : all_queues_of_topic()) {
    EXPECT_EQ(committed_at_shutdown.count(queue) ? committed_at_shutdown.at(queue) : -1, queue_max_offset(queue))
        << queue.to_string();
  }
  send("two", 80);  // while nobody consumes
  start_member(solo);
  ASSERT_TRUE(cluster_.run_until([&] { return all_delivered({"one", "two"}); }, seconds(60)));
  cluster_.run_for(seconds(5));
  size_t redelivered_after_shutdown = 0;
  for (const auto& [key, count] : delivery_counts()) redelivered_after_shutdown += static_cast<size_t>(count - 1);
  EXPECT_EQ(redelivered_after_shutdown, 0u);
  for (const auto& [queue, offsets] : offsets_by_queue([](const Delivery& d) { return d.incarnation == 2; })) {
    EXPECT_EQ(offsets.front(), committed_at_shutdown.at(queue)) << queue.to_string() << ": did not resume at the commit";
  }

  // kill -9 while handling: messages arrive every 20 ms, then a burst of 40,
  // each taking 5 ms to handle. What was handled after the last commit that
  // reached the broker is handled again, and nothing else is.
  handler_delay_ = millis(5);
  send("three", 150, millis(20));
  send("four", 40);
  cluster_.run_for(millis(8));  // part of the burst handled, none of it committed yet
  const std::map<MessageQueue, int64_t> committed_at_kill = committed_offsets("GC");
  const Nanos killed_at = cluster_.now();
  members_[solo].node->kill();
  size_t handled_by_killed = 0;
  std::set<std::string> handled_after_commit;  // by the killed incarnation, at or past the committed offset
  for (const Delivery& delivery : deliveries_) {
    if (delivery.incarnation != 2) continue;
    ++handled_by_killed;
    if (delivery.queue_offset >= committed_at_kill.at(delivery.queue)) handled_after_commit.insert(delivery.key);
  }
  start_member(solo);
  ASSERT_TRUE(cluster_.run_until([&] { return all_delivered({"one", "two", "three", "four"}); }, seconds(60)));
  cluster_.run_for(seconds(5));
  std::set<std::string> redelivered;
  std::set<std::string> handled_before_kill;
  for (const Delivery& delivery : deliveries_) {
    if (delivery.incarnation == 2) handled_before_kill.insert(delivery.key);
    if (delivery.incarnation != 3) continue;
    EXPECT_GE(delivery.queue_offset, committed_at_kill.at(delivery.queue))
        << delivery.key << " was redelivered from before the committed offset";
    if (handled_before_kill.contains(delivery.key)) redelivered.insert(delivery.key);
  }
  EXPECT_EQ(redelivered, handled_after_commit);
  for (const auto& [key, count] : delivery_counts()) EXPECT_LE(count, 2) << key;
  std::printf("[ measure  ] restart: %zu redelivered after a clean shutdown; after kill -9, %zu of the %zu "
              "messages the killed incarnation handled were redelivered\n",
              redelivered_after_shutdown, redelivered.size(), handled_by_killed);
  // Offsets are persisted every persistConsumerOffsetInterval (and ride on
  // each pull), so only what was handled in the last one can come again.
  for (const Delivery& delivery : deliveries_) {
    if (delivery.incarnation == 2 && redelivered.contains(delivery.key)) {
      EXPECT_GE(delivery.at, killed_at - seconds(5) - handler_delay_) << delivery.key;
    }
  }
}

// --- (d) retries, then the dead letter queue ----------------------------------------------

TEST_F(EndToEndTest, FailedMessageIsRetriedWithGrowingReconsumeTimesThenDeadLettered) {
  max_reconsume_times_ = 2;
  fail_keys_ = {"d-3", "d-11", "d-19", "d-27", "d-35"};
  for (int i = 0; i < 3; ++i) start_member(add_member("GD"));
  ASSERT_TRUE(cluster_.run_until([&] { return assignment({0, 1, 2}) == averaged_blocks(3); }, seconds(30)));
  // %RETRY%GD is created by the members' heartbeats and reaches their routes
  // at the next poll: wait until its queues (one per broker) are consumed,
  // so that each retry waits for its delay level alone.
  auto retry_queues_consumed = [&] {
    size_t count = 0;
    for (const Member& member : members_) {
      for (const MessageQueue& queue : member.node->consumer().assigned_queues()) count += queue.topic == "%RETRY%GD";
    }
    return count;
  };
  ASSERT_TRUE(cluster_.run_until([&] { return retry_queues_consumed() == cluster_.broker_count(); }, seconds(90)));
  send("d", 40);

  const std::string dlq = "%DLQ%GD";
  auto dead_letters = [&] {
    int64_t total = 0;
    for (size_t b = 0; b < cluster_.broker_count(); ++b) {
      total += cluster_.broker(b).message_store().max_offset_in_queue(dlq, 0).value();
    }
    return total;
  };
  ASSERT_TRUE(cluster_.run_until([&] { return all_delivered({"d"}) && dead_letters() == 5; }, seconds(120)))
      << dead_letters() << " dead letters";
  cluster_.run_for(seconds(60));  // nothing more may come of them
  EXPECT_EQ(dead_letters(), 5);

  std::map<std::string, std::vector<const Delivery*>> by_key;
  for (const Delivery& delivery : deliveries_) by_key[delivery.key].push_back(&delivery);
  for (int i = 0; i < 40; ++i) {
    const std::string key = key_of("d", i);
    const std::vector<const Delivery*>& calls = by_key[key];
    if (!fail_keys_.contains(key)) {
      EXPECT_EQ(calls.size(), 1u) << key;
      continue;
    }
    // The original, then one retry per failure until maxReconsumeTimes,
    // each after its delay level (3 + reconsumeTimes: 10 s, then 30 s), not
    // at once. Store timestamps are whole ms, so a retry may be up to 1 ms early.
    ASSERT_EQ(calls.size(), 3u) << key;
    EXPECT_GE(calls[1]->at - calls[0]->at, seconds(10) - millis(1)) << key;
    EXPECT_LT(calls[1]->at - calls[0]->at, seconds(11)) << key;
    EXPECT_GE(calls[2]->at - calls[1]->at, seconds(30) - millis(1)) << key;
    EXPECT_LT(calls[2]->at - calls[1]->at, seconds(31)) << key;
    for (size_t n = 0; n < calls.size(); ++n) {
      EXPECT_EQ(calls[n]->reconsume_times, static_cast<int32_t>(n)) << key;
      EXPECT_EQ(calls[n]->from_retry, n > 0) << key;
      EXPECT_EQ(calls[n]->msg_id, sent_with_key(key).result.msgId) << key;
      EXPECT_EQ(calls[n]->body, "body of " + key);
      if (n > 0) {
        EXPECT_EQ(calls[n]->queue.topic, "%RETRY%GD");
      }
    }
  }

  // What the dead letter queues hold, as a raw PULL_MESSAGE reads it.
  std::set<std::string> dead_keys;
  for (size_t b = 0; b < cluster_.broker_count(); ++b) {
    api::PullMessageRequestHeader header;
    header.consumerGroup = "dlq-inspector";
    header.topic = dlq;
    header.queueId = 0;
    header.queueOffset = 0;
    header.sysFlag = api::kPullFlagSubscription;
    header.subscription = "*";
    const RemotingCommand response =
        cluster_.must_call(cluster_.broker_spec(b).address(), api::build_pull_message(header));
    if (response.code == ResponseCode::TOPIC_NOT_EXIST || response.code == ResponseCode::PULL_NOT_FOUND) continue;
    ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
    const PulledMessages pulled = decode_pulled_messages(response.body);
    ASSERT_TRUE(pulled.error.ok()) << pulled.error.to_string();
    for (const MessageExt& message : pulled.messages) {
      dead_keys.insert(message.keys());
      EXPECT_EQ(message.topic, dlq);
      EXPECT_EQ(message.reconsumeTimes, 3);  // handled three times, each failure counted
      EXPECT_EQ(message.property(store::kPropertyRetryTopic).value_or(""), kTopic);
      EXPECT_EQ(message.msgId, sent_with_key(message.keys()).result.msgId);
      EXPECT_EQ(message.body_text(), "body of " + message.keys());
    }
  }
  EXPECT_EQ(dead_keys, fail_keys_);
}

// --- (e) looking messages up ---------------------------------------------------------

TEST_F(EndToEndTest, QueryByKeyAndViewByIdFindTheMessage) {
  send("e", 24);
  cluster_.run_for(seconds(1));  // the index is built behind the acknowledgement
  const int64_t end_ms = cluster_.clock().wall_ms() + 3'600'000;
  for (const int i : {0, 7, 23}) {
    const Sent& sent = sent_with_key(key_of("e", i));
    const std::string home = sent.result.messageQueue.brokerName;
    for (size_t b = 0; b < cluster_.broker_count(); ++b) {
      RemotingCommand query = RemotingCommand::make_request(
          RequestCode::QUERY_MESSAGE,
          {{"topic", kTopic}, {"key", sent.key}, {"maxNum", "32"}, {"beginTimestamp", "0"}, {"endTimestamp", std::to_string(end_ms)}});
      const RemotingCommand response = cluster_.must_call(cluster_.broker_spec(b).address(), std::move(query));
      if (cluster_.broker_spec(b).name != home) {
        EXPECT_EQ(response.code, ResponseCode::QUERY_NOT_FOUND) << sent.key;
        continue;
      }
      ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
      const PulledMessages found = decode_pulled_messages(response.body);
      ASSERT_TRUE(found.error.ok());
      ASSERT_EQ(found.messages.size(), 1u) << sent.key;
      EXPECT_EQ(found.messages[0].keys(), sent.key);
      EXPECT_EQ(found.messages[0].msgId, sent.result.msgId);
      EXPECT_EQ(found.messages[0].offsetMsgId(), sent.result.offsetMsgId);
    }
    const std::string home_address = cluster_.broker_spec(cluster_.broker_index(home)).address();

    // By UNIQ_KEY, as mqadmin queryMsgById first tries.
    RemotingCommand by_unique_key = RemotingCommand::make_request(
        RequestCode::QUERY_MESSAGE, {{"topic", kTopic}, {"key", sent.result.msgId}, {"maxNum", "1"},
                                     {"beginTimestamp", "0"}, {"endTimestamp", std::to_string(end_ms)},
                                     {"_UNIQUE_KEY_QUERY", "true"}});
    const RemotingCommand unique = cluster_.must_call(home_address, std::move(by_unique_key));
    ASSERT_EQ(unique.code, ResponseCode::SUCCESS) << unique.remark;
    const PulledMessages by_uniq = decode_pulled_messages(unique.body);
    ASSERT_EQ(by_uniq.messages.size(), 1u);
    EXPECT_EQ(by_uniq.messages[0].keys(), sent.key);

    // By the offset msgId: its CommitLog offset names the record.
    const Result<store::OffsetMessageId> id = store::decode_offset_message_id(sent.result.offsetMsgId);
    ASSERT_TRUE(id.ok()) << id.status().to_string();
    const RemotingCommand viewed = cluster_.must_call(
        home_address, RemotingCommand::make_request(RequestCode::VIEW_MESSAGE_BY_ID,
                                                    {{"offset", std::to_string(id->offset.value())}}));
    ASSERT_EQ(viewed.code, ResponseCode::SUCCESS) << viewed.remark;
    const PulledMessages view = decode_pulled_messages(viewed.body);
    ASSERT_EQ(view.messages.size(), 1u);
    EXPECT_EQ(view.messages[0].keys(), sent.key);
    EXPECT_EQ(view.messages[0].body_text(), "body of " + sent.key);
    EXPECT_EQ(view.messages[0].queueOffset, sent.result.queueOffset);
  }
  const RemotingCommand missing = cluster_.must_call(
      cluster_.broker_spec(0).address(),
      RemotingCommand::make_request(RequestCode::QUERY_MESSAGE, {{"topic", kTopic}, {"key", "never-sent"}, {"maxNum", "32"},
                                                                {"beginTimestamp", "0"}, {"endTimestamp", std::to_string(end_ms)}}));
  EXPECT_EQ(missing.code, ResponseCode::QUERY_NOT_FOUND);
}

// --- (f) delayed messages ------------------------------------------------------------

TEST_F(EndToEndTest, ADelayedMessageIsHandledOnceAfterItsLevelsDelayInItsOwnQueue) {
  start_member(add_member("GF"));
  ASSERT_TRUE(cluster_.run_until([&] { return assignment({0}) == averaged_blocks(1); }, seconds(30)));
  Message message(kTopic, "TagA", "body of f-0");
  message.keys = "f-0";
  message.delayTimeLevel = 2;  // 5 s
  std::optional<SendResult> result;
  const Nanos sent_at = cluster_.now();
  producer_->send(std::move(message), [&](SendResult r) { result = std::move(r); });
  ASSERT_TRUE(cluster_.run_until([&] { return result.has_value(); }, seconds(10)));
  ASSERT_EQ(result->status, SendStatus::SEND_OK) << result->remark;
  ASSERT_TRUE(cluster_.run_until([&] { return !deliveries_.empty(); }, seconds(30)));
  const Delivery& delivery = deliveries_[0];
  EXPECT_GE(delivery.at - sent_at, seconds(5) - millis(1));  // store timestamps are whole ms
  EXPECT_LT(delivery.at - sent_at, seconds(6));
  EXPECT_EQ(delivery.key, "f-0");
  EXPECT_EQ(delivery.body, "body of f-0");
  EXPECT_EQ(delivery.queue, result->messageQueue);  // the queue the producer chose
  EXPECT_EQ(delivery.reconsume_times, 0);
  cluster_.run_for(seconds(60));
  EXPECT_EQ(deliveries_.size(), 1u);
}

// The broker filters a pull by tag hash codes, so a tag whose code equals a
// subscribed tag's passes it ("BB" and "Aa": Java's hashCode is 2112 for
// both); the consumer's own filter, by the tag's text, keeps it from the
// handler, as Java's processPullResult does.
TEST_F(EndToEndTest, AConsumerGetsOnlyItsTagsWhenAnotherTagHasTheSameHashCode) {
  ASSERT_EQ(store::java_string_hash("Aa"), store::java_string_hash("BB"));
  subscription_ = "Aa";
  start_member(add_member("GT"));
  ASSERT_TRUE(cluster_.run_until([&] { return assignment({0}) == averaged_blocks(1); }, seconds(30)));
  const std::vector<std::string> tags = {"Aa", "BB", "Cc", "Aa"};
  size_t acknowledged = 0;
  for (size_t i = 0; i < tags.size(); ++i) {
    Message message(kTopic, tags[i], "body of t-" + std::to_string(i));
    message.keys = key_of("t", static_cast<int>(i));
    producer_->send(std::move(message), [&](SendResult r) {
      EXPECT_EQ(r.status, SendStatus::SEND_OK) << r.remark;
      ++acknowledged;
    });
  }
  ASSERT_TRUE(cluster_.run_until([&] { return acknowledged == tags.size(); }, seconds(10)));
  ASSERT_TRUE(cluster_.run_until([&] { return deliveries_.size() >= 2; }, seconds(30)));
  cluster_.run_for(seconds(30));
  std::set<std::string> keys;
  for (const Delivery& delivery : deliveries_) keys.insert(delivery.key);
  EXPECT_EQ(keys, (std::set<std::string>{"t-0", "t-3"}));
  EXPECT_EQ(deliveries_.size(), 2u);
}

}  // namespace
}  // namespace mqlab::client::end_to_end_test
