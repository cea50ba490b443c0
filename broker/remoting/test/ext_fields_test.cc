// ExtFields behaves as the std::map<std::string, std::string> it replaced
// while holding views into text it owns: map semantics by example, views
// that outlive inserts, erases and moves, copies that own their text, a
// decoder's held copy and the lineage it may set, and a RapidCheck model
// test of random edits (with copies and moves between them) against a
// std::map. TextArena's own
// contract (text stays put across allocations and moves) is checked here
// too: ExtFields is what relies on it.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/common/text_arena.h"
#include "broker/remoting/ext_fields.h"

namespace mqlab::remoting::ext_fields_test {
namespace {

using Model = std::map<std::string, std::string, std::less<>>;
using Contents = std::vector<std::pair<std::string, std::string>>;

Contents contents(const ExtFields& fields) {
  Contents out;
  for (const auto& [name, value] : fields) out.emplace_back(name, value);
  return out;
}

Contents contents(const Model& model) { return {model.begin(), model.end()}; }

TEST(TextArena, TextStaysPutAcrossLaterAllocationsAndMoves) {
  TextArena arena;
  EXPECT_TRUE(arena.empty());
  const std::string_view first = arena.copy("first");
  std::vector<std::string_view> more;
  for (int i = 0; i < 200; ++i) more.push_back(arena.copy(std::string(static_cast<size_t>(i) + 1, 'x')));
  const std::string_view big = arena.copy(std::string(10'000, 'b'));  // past any block so far
  TextArena moved = std::move(arena);
  EXPECT_TRUE(arena.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  EXPECT_EQ(first, "first");
  for (size_t i = 0; i < more.size(); ++i) EXPECT_EQ(more[i], std::string(i + 1, 'x'));
  EXPECT_EQ(big, std::string(10'000, 'b'));
  EXPECT_TRUE(moved.copy("").empty());
  moved.clear();
  EXPECT_TRUE(moved.empty());
}

// Aligned allocations (ExtFields' table of views lives with its text) and
// reserve's promise of one block for what fits.
TEST(TextArena, AlignedAllocationsAndReservedRoomShareOneBlock) {
  TextArena arena;
  arena.reserve(1'000);
  const std::string_view odd = arena.copy("odd");  // leaves the next byte unaligned
  char* const aligned = arena.allocate_aligned(64, 8);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned) % 8, 0u);
  EXPECT_LE(aligned - odd.data(), 8);  // the same block, right after the text
  std::memset(aligned, 0x5a, 64);
  const std::string_view after = arena.copy(std::string(900, 'x'));  // still within the reserved room
  EXPECT_EQ(after.data(), aligned + 64);
  EXPECT_EQ(odd, "odd");
  EXPECT_EQ(after, std::string(900, 'x'));
}

// A freed block of a frame's size goes to the next arena that needs one
// (the one most recently freed first), and serves it as a new block would;
// a block that does not fit is passed over.
TEST(TextArena, AFreedBlockServesTheNextArena) {
  const char* first_block = nullptr;
  {
    TextArena decoded;
    decoded.reserve(1'000);
    first_block = decoded.copy("header of the first frame").data();
  }
  // What the allocator would hand out next for a block of that size (its
  // own last freed one, had the arena given it back).
  const std::unique_ptr<char[]> other(new char[1'024]);
  TextArena next;
  next.reserve(1'000);
  const std::string_view text = next.copy("header of the second frame");
  if (TextArena::kReusedBlocks > 0) {  // none kept under AddressSanitizer
    EXPECT_EQ(text.data(), first_block);
  }
  // (Compared, so the compiler keeps the allocation: an unused one may go.)
  EXPECT_NE(static_cast<const void*>(other.get()), static_cast<const void*>(first_block));
  EXPECT_EQ(text, "header of the second frame");
  // Too small for what a third arena asks: a block of its own.
  {
    TextArena small;
    (void)small.copy("x");  // the 256-byte minimum
  }
  TextArena large;
  large.reserve(2'000);
  const std::string_view more = large.copy(std::string(2'000, 'y'));
  EXPECT_EQ(more, std::string(2'000, 'y'));
  EXPECT_EQ(text, "header of the second frame");
  // More freed blocks than are kept, and blocks too big to keep: freed.
  {
    std::vector<TextArena> many(20);
    for (TextArena& arena : many) (void)arena.copy(std::string(500, 'z'));
    TextArena huge;
    (void)huge.copy(std::string(100'000, 'h'));
  }
  TextArena after;
  EXPECT_EQ(after.copy("still works"), "still works");
}

TEST(ExtFields, KeepsNamesSortedWhateverTheInsertionOrder) {
  ExtFields fields;
  EXPECT_TRUE(fields.insert_or_assign("queueId", "3"));
  EXPECT_TRUE(fields.insert_or_assign("topic", "T"));
  EXPECT_TRUE(fields.insert_or_assign("consumerGroup", "G"));
  EXPECT_FALSE(fields.insert_or_assign("queueId", "4"));  // the last assignment wins
  EXPECT_EQ(contents(fields), (Contents{{"consumerGroup", "G"}, {"queueId", "4"}, {"topic", "T"}}));
  EXPECT_EQ(fields.size(), 3u);
  EXPECT_EQ(fields.at("topic"), "T");
  EXPECT_THROW((void)fields.at("missing"), std::out_of_range);
  EXPECT_EQ(fields.find("missing"), fields.end());
  EXPECT_EQ(fields.find_value("missing"), nullptr);
  ASSERT_NE(fields.find_value("queueId"), nullptr);
  EXPECT_EQ(*fields.find_value("queueId"), "4");
}

TEST(ExtFields, InitializerListKeepsTheFirstOfARepeatedName) {
  const ExtFields fields{{"b", "2"}, {"a", "1"}, {"b", "3"}};
  EXPECT_EQ(fields, (ExtFields{{"a", "1"}, {"b", "2"}}));
}

// The fields are views: they must not see what their arguments later
// become, and must survive the map's later edits and its moves.
TEST(ExtFields, HoldsCopiesThatOutliveTheirArgumentsEditsAndMoves) {
  ExtFields fields;
  {
    std::string name = "properties";
    std::string value(300, 'v');  // a heap string, freed below
    fields.insert_or_assign(name, value);
    name.assign("overwritten");
    value.assign("gone");
  }
  const std::string_view kept = fields.at("properties");
  for (int i = 0; i < 100; ++i) fields.insert_or_assign("k" + std::to_string(i), std::to_string(i));
  EXPECT_EQ(fields.erase("k5"), 1u);
  EXPECT_EQ(fields.erase("k5"), 0u);
  EXPECT_EQ(kept, std::string(300, 'v'));  // text never moves, only the table of views
  ExtFields moved = std::move(fields);
  EXPECT_EQ(kept, std::string(300, 'v'));
  EXPECT_EQ(moved.at("properties").data(), kept.data());
  EXPECT_EQ(moved.size(), 100u);
  // A value that views the map's own text can be stored under another name.
  moved.insert_or_assign("copy", moved.at("properties"));
  EXPECT_EQ(moved.at("copy"), std::string(300, 'v'));
}

TEST(ExtFields, ACopyOwnsItsTextAndComparesByContent) {
  auto original = std::make_unique<ExtFields>(ExtFields{{"topic", "T"}, {"queueId", "1"}});
  const ExtFields copy = *original;
  ExtFields assigned;
  assigned.insert_or_assign("x", "y");
  assigned = *original;
  EXPECT_EQ(copy, *original);
  EXPECT_NE(copy.at("topic").data(), original->at("topic").data());
  original.reset();  // the copies' views are their own
  EXPECT_EQ(contents(copy), (Contents{{"queueId", "1"}, {"topic", "T"}}));
  EXPECT_EQ(copy, assigned);
  EXPECT_NE(copy, (ExtFields{{"topic", "T"}, {"queueId", "2"}}));
}

// A decoder copies its header in once and adds fields that view the copy;
// clear_fields (a repeated "extFields") keeps the copy, clear frees it.
TEST(ExtFields, HeldTextIsViewedInPlaceAndSurvivesClearFields) {
  ExtFields fields;
  constexpr std::string_view kHeader = "topicTqueueId1";
  char* const copy = fields.hold_text(kHeader.size());
  std::memcpy(copy, kHeader.data(), kHeader.size());
  const std::string_view held(copy, kHeader.size());
  EXPECT_TRUE(fields.insert_or_assign_held(held.substr(0, 5), held.substr(5, 1)));
  EXPECT_TRUE(fields.insert_or_assign_held(held.substr(6, 7), held.substr(13, 1)));
  EXPECT_EQ(fields.at("topic").data(), copy + 5);  // no copy made
  fields.clear_fields();
  EXPECT_TRUE(fields.empty());
  EXPECT_TRUE(fields.insert_or_assign_held(held.substr(6, 7), "literal"));
  EXPECT_FALSE(fields.insert_or_assign_held(held.substr(6, 7), held.substr(13, 1)));
  EXPECT_EQ(contents(fields), (Contents{{"queueId", "1"}}));
  fields.clear();
  EXPECT_TRUE(fields.empty());
}

// A decoder's lineage (ExtFieldsLineage) holds only for the table as it
// was decoded: any edit forgets it, a copy has none, a move takes it along.
TEST(ExtFields, ALineageHoldsOnlyForTheTableAsDecoded) {
  const auto decoded = [] {
    ExtFields fields;
    char* const text = fields.hold_text(2);
    std::memcpy(text, "ab", 2);
    fields.append_held_in_order(std::string_view(text, 1), std::string_view(text + 1, 1));
    fields.set_lineage({7, 3, 0b1});
    return fields;
  };
  EXPECT_EQ(decoded().lineage().id, 7u);
  EXPECT_EQ(decoded().lineage().index, 3u);
  EXPECT_EQ(ExtFields(decoded()).lineage().id, 7u);  // moved
  const ExtFields original = decoded();
  EXPECT_EQ(ExtFields(original).lineage().id, 0u);  // copied
  ExtFields assigned;
  assigned = original;
  EXPECT_EQ(assigned.lineage().id, 0u);
  const std::vector<void (*)(ExtFields&)> edits = {
      [](ExtFields& f) { f.insert_or_assign("a", "c"); },
      [](ExtFields& f) { f.insert_or_assign("z", "c"); },
      [](ExtFields& f) { f.insert_or_assign_held("z", "c"); },
      [](ExtFields& f) { f.append_held_in_order("z", "c"); },
      [](ExtFields& f) { f.erase("a"); },
      [](ExtFields& f) { f.erase(f.begin()); },
      [](ExtFields& f) { f.clear_fields(); },
      [](ExtFields& f) { f.clear(); },
  };
  for (size_t i = 0; i < edits.size(); ++i) {
    ExtFields fields = decoded();
    edits[i](fields);
    EXPECT_EQ(fields.lineage().id, 0u) << "edit " << i;
  }
  // Lookups change nothing.
  ExtFields looked = decoded();
  EXPECT_TRUE(looked.contains("a"));
  EXPECT_EQ(looked.lineage().id, 7u);
}

RC_GTEST_PROP(ExtFields, RandomEditsCopiesAndMovesMatchAStdMap, ()) {
  // Past 16 and 32 names now and then: the table (16 entries at first)
  // grows, with inserts before its end.
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names = {"", "a", "b", "ab", "queueId", "topic", "\x01", "\xff", "z", "Z"};
    for (int i = 0; i < 40; ++i) names.push_back("n" + std::to_string(100 - 2 * i));
    return names;
  }();
  ExtFields fields;
  Model model;
  const auto steps = *rc::gen::inRange(0, 120);
  for (int i = 0; i < steps; ++i) {
    const std::string name = *rc::gen::elementOf(kNames);
    // Sometimes long, so values outgrow the first block.
    const std::string value = std::to_string(i) + std::string(*rc::gen::inRange(0, 300), 'v');
    // Inserts four times in ten, so that tables of 17 and 33 names come up.
    const int op = *rc::gen::inRange(0, 10);
    switch (op >= 7 ? 0 : op) {
      case 0:
        RC_ASSERT(fields.insert_or_assign(name, value) == model.insert_or_assign(name, value).second);
        break;
      case 1:
        RC_ASSERT(fields.erase(name) == model.erase(name));
        break;
      case 2:
        if (const auto it = fields.find(name); it != fields.end()) {
          const auto after = fields.erase(it);
          const auto model_after = model.erase(model.find(name));
          RC_ASSERT((after == fields.end()) == (model_after == model.end()));
          if (after != fields.end()) RC_ASSERT(after->first == model_after->first);
        }
        break;
      case 3: {  // a copy that outlives the original
        ExtFields copy = fields;
        fields = ExtFields();
        fields = copy;
        break;
      }
      case 4: {
        ExtFields moved = std::move(fields);
        fields = std::move(moved);
        break;
      }
      case 5:
        RC_ASSERT((fields.find_value(name) != nullptr) == model.contains(name));
        break;
      default:
        RC_ASSERT(fields.contains(name) == model.contains(name));
        RC_ASSERT(fields.count(name) == model.count(name));
        break;
    }
    RC_ASSERT(contents(fields) == contents(model));
  }
}

}  // namespace
}  // namespace mqlab::remoting::ext_fields_test
