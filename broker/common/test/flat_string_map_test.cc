// FlatStringMap (MessageProperties) behaves as the
// std::map<std::string, std::string, std::less<>> it replaced: examples of
// its map semantics, and a RapidCheck model test that runs random edits on
// both and compares contents and iteration order.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "broker/common/flat_string_map.h"

namespace mqlab::flat_string_map_test {
namespace {

using Model = std::map<std::string, std::string, std::less<>>;

std::vector<std::pair<std::string, std::string>> contents(const FlatStringMap& fields) {
  return {fields.begin(), fields.end()};
}

std::vector<std::pair<std::string, std::string>> contents(const Model& model) {
  return {model.begin(), model.end()};
}

TEST(FlatStringMap, KeepsNamesSortedWhateverTheInsertionOrder) {
  FlatStringMap fields;
  EXPECT_TRUE(fields.insert_or_assign("queueId", "3"));
  EXPECT_TRUE(fields.insert_or_assign("topic", "T"));
  EXPECT_TRUE(fields.insert_or_assign("consumerGroup", "G"));
  EXPECT_FALSE(fields.insert_or_assign("queueId", "4"));  // the last assignment wins
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"consumerGroup", "G"}, {"queueId", "4"}, {"topic", "T"}};
  EXPECT_EQ(contents(fields), expected);
  EXPECT_EQ(fields.size(), 3u);
  EXPECT_EQ(fields.at("topic"), "T");
  EXPECT_THROW((void)fields.at("missing"), std::out_of_range);
  EXPECT_EQ(fields.find("missing"), fields.end());
}

TEST(FlatStringMap, InitializerListKeepsTheFirstOfARepeatedName) {
  const FlatStringMap fields{{"b", "2"}, {"a", "1"}, {"b", "3"}};
  EXPECT_EQ(fields, (FlatStringMap{{"a", "1"}, {"b", "2"}}));
}

TEST(FlatStringMap, SubscriptInsertsEmptyAndEraseCountsWhatWent) {
  FlatStringMap fields;
  fields["e"] = "zero";
  EXPECT_EQ(fields["e"], "zero");
  EXPECT_TRUE(fields["new"].empty());
  EXPECT_TRUE(fields.contains("new"));
  EXPECT_EQ(fields.erase("new"), 1u);
  EXPECT_EQ(fields.erase("new"), 0u);
  EXPECT_EQ(fields.count("e"), 1u);
  fields.clear();
  EXPECT_TRUE(fields.empty());
}

// A name passed as a temporary is moved into the map: the iterator
// returned still points at it (a short name's moved-from bytes are cleared).
TEST(FlatStringMap, TryEmplaceOfATemporaryNameReturnsWhereItWent) {
  FlatStringMap fields{{"a", "1"}, {"z", "26"}};
  const auto [at, inserted] = fields.try_emplace(std::string("m"), "13");
  EXPECT_TRUE(inserted);
  ASSERT_NE(at, fields.end());
  EXPECT_EQ(at->first, "m");
  EXPECT_EQ(at->second, "13");
  const auto [again, inserted_again] = fields.emplace(std::string("m"), std::string("x"));
  EXPECT_FALSE(inserted_again);
  EXPECT_EQ(again->second, "13");
  const auto [long_at, long_inserted] = fields.try_emplace(std::string(40, 'n'));
  EXPECT_TRUE(long_inserted);
  EXPECT_EQ(long_at->first, std::string(40, 'n'));
  EXPECT_TRUE(long_at->second.empty());
}

RC_GTEST_PROP(FlatStringMap, RandomEditsMatchAStdMap, ()) {
  static const std::vector<std::string> kNames = {"", "a", "b", "ab", "queueId", "topic", "\x01", "\xff", "z", "Z"};
  FlatStringMap fields;
  Model model;
  const auto steps = *rc::gen::inRange(0, 40);
  for (int i = 0; i < steps; ++i) {
    const std::string name = *rc::gen::elementOf(kNames);
    const std::string value = std::to_string(i);
    const int op = *rc::gen::inRange(0, 7);
    switch (op) {
      case 0:
        RC_ASSERT(fields.insert_or_assign(name, value) == model.insert_or_assign(name, value).second);
        break;
      case 1:
        fields[name] = value;
        model[name] = value;
        break;
      case 2:
        RC_ASSERT(fields.erase(name) == model.erase(name));
        break;
      case 3:
      case 4: {  // try_emplace, then emplace: both keep what is there
        const bool plain = op == 4;
        const auto [at, inserted] = plain ? fields.emplace(name, value) : fields.try_emplace(name, value);
        const auto [model_at, model_inserted] = plain ? model.emplace(name, value) : model.try_emplace(name, value);
        RC_ASSERT(inserted == model_inserted);
        RC_ASSERT(at->first == model_at->first && at->second == model_at->second);
        break;
      }
      case 5:
        if (const auto it = fields.find(name); it != fields.end()) {
          const auto after = fields.erase(it);
          const auto model_after = model.erase(model.find(name));
          RC_ASSERT((after == fields.end()) == (model_after == model.end()));
          if (after != fields.end()) RC_ASSERT(after->first == model_after->first);
        }
        break;
      default:
        RC_ASSERT(fields.contains(name) == model.contains(name));
        break;
    }
    RC_ASSERT(contents(fields) == contents(model));
  }
}

}  // namespace
}  // namespace mqlab::flat_string_map_test
