// MessageLines: a History's sends and receipts as trace lines, in line
// order, and the history_digest over what those lines print. Hand-built
// histories pin the order, the text, and that the digest is the same
// whether the lines were rendered or only gone past, and moves with any
// field a line shows.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "sim/message_trace.h"
#include "sim/scenario.h"
#include "sim/test/receipt_record.h"

namespace mqlab::sim::message_trace_test {
namespace {

// client-0 runs producer-0 and consumer-cg-0.
Scenario single_master() {
  Result<Scenario> scenario = parse_scenario(R"(
name: message-trace
duration: 10s
topology: {preset: single_master}
workload:
  producers: {count: 1, rate: 10/s}
)",
                                             "message-trace.yaml");
  MQ_ASSERT_MSG(scenario.ok(), scenario.status().to_string());
  return std::move(scenario).value();
}

// Two sends, one acknowledged (queue 1, offset 7, 1.5 ms, 2 attempts) and
// one pending; receipts of the first by consumer-cg-0 (given in the order
// receipts lists their times) and, at the same instant as the first send's
// acknowledgement, by the audit consumer (not in the scenario).
struct Built {
  History history;
  uint64_t acked = 0;
};

void build(Built& built, const std::vector<Nanos>& receipt_times,
           const std::function<void(ReceiptRecord&)>& tweak = {}) {
  History& history = built.history;
  built.acked = history.begin_send("producer-0", millis(100), "k", 0);
  history.complete_send(built.acked, millis(100) + 1'500 * kNanosPerMicro, SendOutcome::kOk, "broker-a", 1, 7, "id", 2);
  history.begin_send("producer-0", millis(300), "k", 0);
  for (const Nanos at : receipt_times) {
    ReceiptRecord r = receipt(built.acked, at, 7, "cg", 1, 0, "consumer-cg-0");
    if (tweak) tweak(r);
    history.receive(r);
  }
  history.receive(receipt(built.acked, millis(100) + 1'500 * kNanosPerMicro, 7, "audit", 1, 0, "audit-consumer"));
}

struct Rendered {
  std::vector<std::string> lines;
  std::string digest;
};

Rendered render(const History& history) {
  MessageLines messages(history, single_master());
  Rendered rendered;
  while (std::optional<TimedLine> line = messages.next()) rendered.lines.push_back(line->text);
  EXPECT_EQ(messages.count(), rendered.lines.size());
  rendered.digest = messages.digest_hex();
  return rendered;
}

std::string drained_digest(const History& history) {
  MessageLines messages(history, single_master());
  messages.drain();
  return messages.digest_hex();
}

TEST(MessageTrace, LinesComeInTimeOrderSendsFirstAtOneInstant) {
  Built built;
  build(built, {millis(200), millis(400)});
  const Rendered rendered = render(built.history);
  const std::vector<std::string> expected = {
      "    0.101500 client-0 producer-0 send #" + std::to_string(built.acked) + " SEND_OK broker-a q1@7 1.500ms x2\n",
      "    0.101500 - audit-consumer receive #" + std::to_string(built.acked) + " broker-a q1@7\n",
      "    0.200000 client-0 consumer-cg-0 receive #" + std::to_string(built.acked) + " broker-a q1@7\n",
      "    0.300000 client-0 producer-0 send #" + std::to_string(built.acked + 1) + " PENDING\n",
      "    0.400000 client-0 consumer-cg-0 receive #" + std::to_string(built.acked) + " broker-a q1@7\n",
  };
  EXPECT_EQ(rendered.lines, expected);
}

TEST(MessageTrace, DigestIsTheSameRenderedOrDrained) {
  Built built;
  build(built, {millis(200), millis(400)});
  const std::string digest = render(built.history).digest;
  EXPECT_EQ(digest.size(), 16u);
  EXPECT_EQ(drained_digest(built.history), digest);
}

TEST(MessageTrace, ReceiptsRecordedOutOfOrderAreSortedAndDigestAlike) {
  Built in_order;
  build(in_order, {millis(200), millis(400)});
  Built out_of_order;
  build(out_of_order, {millis(400), millis(200)});
  const Rendered a = render(in_order.history);
  const Rendered b = render(out_of_order.history);
  EXPECT_EQ(a.lines, b.lines);
  EXPECT_EQ(a.digest, b.digest);
  EXPECT_EQ(drained_digest(out_of_order.history), a.digest);
}

// Each change is one a line shows (or, for the nanosecond, a time a line
// rounds): the digest must move with it.
TEST(MessageTrace, DigestMovesWithEveryFieldALineShows) {
  Built base;
  build(base, {millis(200)});
  const std::string digest = drained_digest(base.history);
  const std::vector<std::pair<const char*, std::function<void(ReceiptRecord&)>>> tweaks = {
      {"offset", [](ReceiptRecord& r) { r.queue_offset = 8; }},
      {"queue", [](ReceiptRecord& r) { r.queue_id = 2; }},
      {"broker", [](ReceiptRecord& r) { r.broker_name = "broker-b"; }},
      {"consumer", [](ReceiptRecord& r) { r.consumer = "consumer-cg-1"; }},
      {"redelivery", [](ReceiptRecord& r) { r.reconsume_times = 1; }},
      {"corrupt", [](ReceiptRecord& r) { r.body_intact = false; }},
      {"a nanosecond later", [](ReceiptRecord& r) { r.at += 1; }},
  };
  for (const auto& [what, tweak] : tweaks) {
    Built changed;
    build(changed, {millis(200)}, tweak);
    EXPECT_NE(drained_digest(changed.history), digest) << what;
  }
  Built slower;  // the acknowledged send's latency, one nanosecond more
  slower.acked = slower.history.begin_send("producer-0", millis(100), "k", 0);
  const Nanos acked_at = millis(100) + 1'500 * kNanosPerMicro;
  slower.history.complete_send(slower.acked, acked_at + 1, SendOutcome::kOk, "broker-a", 1, 7, "id", 2);
  Built same;
  same.acked = same.history.begin_send("producer-0", millis(100), "k", 0);
  same.history.complete_send(same.acked, acked_at, SendOutcome::kOk, "broker-a", 1, 7, "id", 2);
  EXPECT_NE(drained_digest(slower.history), drained_digest(same.history));
}

}  // namespace
}  // namespace mqlab::sim::message_trace_test
