// History's compact records (InternedName, MessageIdText) read, compare and
// order exactly as the strings they replace, and its incremental
// "every acknowledged message received" answer equals a from-scratch check
// however sends, outcomes and receipts interleave with the questions.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/history.h"
#include "sim/interned_name.h"

namespace mqlab::sim::history_test {
namespace {

TEST(InternedName, ReadsComparesAndOrdersAsItsText) {
  const InternedName zulu("zz-interned-first");  // interned before "aa-...": its index is smaller
  const InternedName alpha("aa-interned-second");
  EXPECT_LT(alpha, zulu);  // by text, not by index
  EXPECT_EQ(zulu, InternedName("zz-interned-first"));
  EXPECT_EQ(zulu, std::string("zz-interned-first"));
  EXPECT_EQ(std::string("zz-interned-first"), zulu);
  EXPECT_NE(alpha, "zz-interned-first");
  const std::string& text = alpha;
  EXPECT_EQ(text, "aa-interned-second");
  EXPECT_EQ(static_cast<std::string_view>(alpha).size(), alpha.size());
  EXPECT_TRUE(InternedName().empty());
  EXPECT_TRUE(InternedName("").empty());
  EXPECT_EQ(InternedName(""), InternedName());
  std::map<std::string, int> by_text;
  by_text[alpha] = 1;  // usable where a std::string key is expected
  EXPECT_EQ(by_text.count("aa-interned-second"), 1u);
}

// The cache in front of the name table (interned_name.cc) changes no
// answer: thousands of names, more than it has slots, so that many share
// one, interned in one order and again in the other; each comes back as the
// same name with its own text, and different texts stay different names.
TEST(InternedName, EqualTextsGetOneNameHoweverManyShareACacheSlot) {
  std::vector<std::string> texts = {"x", "xy", "xyz", "abcdefg", "abcdefgh", "abcdefghi", "0123456789abcdef"};
  for (int i = 0; i < 5000; ++i) texts.push_back("cache-slot-name-" + std::to_string(i * 7919));
  std::vector<InternedName> first;
  for (const std::string& text : texts) first.emplace_back(text);
  for (size_t i = texts.size(); i-- > 0;) {
    const InternedName again(texts[i]);
    ASSERT_EQ(again, first[i]) << texts[i];
    ASSERT_EQ(again.str(), texts[i]);
  }
  std::set<std::string> distinct;
  for (const InternedName& name : first) distinct.insert(name.str());
  EXPECT_EQ(distinct.size(), texts.size());
}

RC_GTEST_PROP(InternedName, EqualExactlyWhenTheTextsAre, (const std::vector<std::string>& texts)) {
  std::vector<InternedName> names;
  for (const std::string& text : texts) names.emplace_back(text);
  for (size_t i = 0; i < texts.size(); ++i) {
    RC_ASSERT(names[i].str() == texts[i]);
    for (size_t j = 0; j < texts.size(); ++j) {
      RC_ASSERT((names[i] == names[j]) == (texts[i] == texts[j]));
      RC_ASSERT((names[i].id() == names[j].id()) == (texts[i] == texts[j]));  // the checker keys maps by ids
    }
  }
}

TEST(MessageIdText, HoldsShortIdsInlineAndLongOnesWhole) {
  const std::string ipv4 = "0A00010100002A9F0000000000001234";  // 32 hex digits
  const std::string ipv6 = std::string(56, 'F');
  MessageIdText id;
  EXPECT_TRUE(id.empty());
  id = ipv4;
  EXPECT_EQ(id.view(), ipv4);
  id = ipv6;
  EXPECT_EQ(id.view(), ipv6);
  id = std::string("short");
  EXPECT_EQ(id.view(), "short");
  EXPECT_EQ(MessageIdText(ipv4), MessageIdText(ipv4));
}

// The question asked from scratch, as SimWorld did before it was incremental.
bool all_received_from_scratch(const History& history, const std::vector<std::string>& groups) {
  std::map<std::string, std::set<uint64_t>> received;
  for (const ReceiptRecord& r : history.receipts()) received[r.group].insert(r.seq);
  for (const SendRecord& s : history.sends()) {
    if (s.outcome != SendOutcome::kOk) continue;
    for (const std::string& group : groups) {
      if (!received[group].count(s.seq)) return false;
    }
  }
  return true;
}

TEST(History, AllAcknowledgedReceivedWaitsForAPendingSendThatIsLaterAcknowledged) {
  History history;
  const std::vector<std::string> groups = {"g"};
  const uint64_t a = history.begin_send("p", 1, "", 0);
  const uint64_t b = history.begin_send("p", 2, "", 0);
  history.complete_send(a, 3, SendOutcome::kOk, "broker-a", 0, 0, "", 1);
  history.receive(ReceiptRecord{a, "g", "c", 4});
  EXPECT_TRUE(history.all_acknowledged_received_by(groups));  // b is pending: ignored, as any non-OK send
  history.complete_send(b, 5, SendOutcome::kOk, "broker-a", 0, 1, "", 1);
  EXPECT_FALSE(history.all_acknowledged_received_by(groups));  // b, passed while pending, is looked at again
  history.receive(ReceiptRecord{b, "g", "c", 6});
  EXPECT_TRUE(history.all_acknowledged_received_by(groups));
  EXPECT_FALSE(history.all_acknowledged_received_by({"g", "audit"}));  // other groups: asked afresh
}

// The History marks each receipt with whether it was its group's first of
// that seq, whatever the caller set: the checker's duplicates and
// reordering read it. Seqs past the sends (strays) count too, also once
// a send catches up with them.
TEST(History, EachReceiptSaysWhetherItIsItsGroupsFirst) {
  History history;
  const uint64_t a = history.begin_send("p", 1, "", 0);
  ReceiptRecord not_first{a, "g", "c", 2};
  not_first.first_of_group = false;  // the caller's value is not the History's
  history.receive(not_first);
  history.receive(ReceiptRecord{a, "g", "c", 3});
  history.receive(ReceiptRecord{a, "audit", "c", 4});
  history.receive(ReceiptRecord{a + 1, "g", "c", 5});  // a stray: no send yet
  history.receive(ReceiptRecord{a + 1, "g", "c", 6});
  const uint64_t b = history.begin_send("p", 7, "", 0);
  ASSERT_EQ(b, a + 1);
  history.receive(ReceiptRecord{b, "g", "c", 8});       // received as a stray already
  history.receive(ReceiptRecord{b, "audit", "c", 9});
  std::vector<bool> firsts;
  for (const ReceiptRecord& r : history.receipts()) firsts.push_back(r.first_of_group);
  EXPECT_EQ(firsts, (std::vector<bool>{true, false, true, true, false, false, true}));
  EXPECT_TRUE(history.received("g", a));
  EXPECT_TRUE(history.received("g", b));
  EXPECT_TRUE(history.received("audit", b));
  EXPECT_FALSE(history.received("other", a));
  EXPECT_FALSE(history.received("g", b + 1));
  // received_by(group) answers as received(group, seq) does, strays
  // included: one past every send, known only as a stray.
  history.receive(ReceiptRecord{b + 5, "g", "c", 10});
  ASSERT_TRUE(history.received("g", b + 5));
  for (const char* group : {"g", "audit", "other"}) {
    const History::GroupReceived received_by = history.received_by(group);
    for (uint64_t seq = a; seq <= b + 6; ++seq) {
      EXPECT_EQ(received_by(seq), history.received(group, seq)) << group << " seq " << seq;
    }
  }
}

// Equal times keep the order; one receipt earlier than the one before it
// (a hand-made history) clears it for good.
TEST(History, KnowsWhetherItsReceiptsWereRecordedInTimeOrder) {
  History history;
  const uint64_t a = history.begin_send("p", 1, "", 0);
  EXPECT_TRUE(history.receipts_in_time_order());  // none yet
  for (const Nanos at : {5, 5, 6, 9, 9, 12}) history.receive(ReceiptRecord{a, "g", "c", at});
  EXPECT_TRUE(history.receipts_in_time_order());
  history.receive(ReceiptRecord{a, "g", "c", 11});
  EXPECT_FALSE(history.receipts_in_time_order());
  history.receive(ReceiptRecord{a, "g", "c", 20});
  EXPECT_FALSE(history.receipts_in_time_order());
}

// Random interleavings of sends, outcomes, receipts (in two groups) and
// questions: the incremental answer always equals the from-scratch one.
RC_GTEST_PROP(History, IncrementalAllAcknowledgedReceivedEqualsFromScratch, ()) {
  History history;
  const std::vector<std::string> groups = {"g1", "g2"};
  std::vector<uint64_t> pending;
  const auto steps = *rc::gen::inRange(1, 120);
  for (int step = 0; step < steps; ++step) {
    switch (*rc::gen::inRange(0, 4)) {
      case 0: pending.push_back(history.begin_send("p", step, "", 0)); break;
      case 1:
        if (!pending.empty()) {
          const size_t at = *rc::gen::inRange<size_t>(0, pending.size());
          const auto outcome = *rc::gen::element(SendOutcome::kOk, SendOutcome::kOk, SendOutcome::kFailed,
                                                 SendOutcome::kUnknown);
          history.complete_send(pending[at], step, outcome, "broker-a", 0, step, "", 1);
          pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(at));
        }
        break;
      case 2:
        if (!history.sends().empty()) {
          const auto seq = *rc::gen::inRange<uint64_t>(0, history.sends().size());
          history.receive(ReceiptRecord{seq, InternedName(*rc::gen::element(std::string("g1"), std::string("g2"))), "c", step});
        }
        break;
      default:
        RC_ASSERT(history.all_acknowledged_received_by(groups) == all_received_from_scratch(history, groups));
    }
  }
  RC_ASSERT(history.all_acknowledged_received_by(groups) == all_received_from_scratch(history, groups));
}

}  // namespace
}  // namespace mqlab::sim::history_test
