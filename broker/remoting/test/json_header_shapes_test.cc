// A header read against a learned shape (JsonHeaderShapes) decodes exactly
// as it does without shapes: the same command, or the same error in the
// same words. Checked on runs of headers that share a shape and differ in
// their values (escapes, numbers out of int32's range, a remark present or
// not), with a byte damaged now and then, all through one set of shapes as
// a connection's decoder keeps them; and by example: what is learned, what
// is not, and how many shapes are kept.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/remoting/json_header.h"
#include "broker/remoting/json_header_shapes.h"

namespace mqlab::remoting::json_header_shapes_test {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes bytes_of(std::string_view text) { return Bytes(text.begin(), text.end()); }

Result<RemotingCommand> decode_with(JsonHeaderShapes& shapes, const Bytes& header) {
  RemotingCommand command;
  MQ_RETURN_IF_ERROR(decode_json_header_into(header, command, &shapes));
  return command;
}

void expect_same(const Result<RemotingCommand>& with_shapes, const Result<RemotingCommand>& without) {
  ASSERT_EQ(with_shapes.ok(), without.ok());
  if (without.ok()) {
    EXPECT_EQ(*with_shapes, *without);
  } else {
    EXPECT_EQ(with_shapes.status().to_string(), without.status().to_string());
  }
}

void assert_same(const Result<RemotingCommand>& with_shapes, const Result<RemotingCommand>& without) {
  RC_ASSERT(with_shapes.ok() == without.ok());
  if (without.ok()) {
    RC_ASSERT(*with_shapes == *without);
  } else {
    RC_ASSERT(with_shapes.status().to_string() == without.status().to_string());
  }
}

// The lineage contract (ExtFieldsLineage): a table that says it is index
// + 1 of the lineage whose table index the checker saw last has the same
// names at the same places, and the same values at every place whose bit is
// not set in changed. The checker keeps the last table of each lineage.
class LineageChecker {
 public:
  void check(const Result<RemotingCommand>& decoded) {
    if (!decoded.ok()) return;
    const ExtFieldsLineage& lineage = decoded->ext_fields.lineage();
    if (lineage.id == 0) return;
    ++with_lineage_;
    RC_ASSERT(lineage.index > 0);
    RC_ASSERT(decoded->ext_fields.size() <= ExtFieldsLineage::kMaxFields);
    const auto last = last_.find(lineage.id);
    if (lineage.index == 1) {
      RC_ASSERT(last == last_.end());  // a new lineage has a new id
    } else {
      RC_ASSERT(last != last_.end());
      RC_ASSERT(last->second.index + 1 == lineage.index);  // no table of it went by unseen here
      const std::vector<std::pair<std::string, std::string>>& before = last->second.fields;
      RC_ASSERT(before.size() == decoded->ext_fields.size());
      size_t place = 0;
      for (const auto& [name, value] : decoded->ext_fields) {
        RC_ASSERT(before[place].first == name);
        if ((lineage.changed & (uint32_t{1} << place)) == 0) RC_ASSERT(before[place].second == value);
        ++place;
      }
    }
    Seen& seen = last_[lineage.id];
    seen.index = lineage.index;
    seen.fields.clear();
    for (const auto& [name, value] : decoded->ext_fields) seen.fields.emplace_back(name, value);
  }
  size_t with_lineage() const { return with_lineage_; }

 private:
  struct Seen {
    uint64_t index = 0;
    std::vector<std::pair<std::string, std::string>> fields;
  };
  std::map<uint64_t, Seen> last_;
  size_t with_lineage_ = 0;
};

// Values rich in what a shape's reader must treat as the fast reader does:
// escapes (a send's properties hold \u0001 and \u0002), quotes, control and
// non-ASCII bytes (left to the general path).
std::string gen_value() {
  static const std::vector<std::string> kTokens = {"a", "Z", "0", " ", "\"", "\\", "/", "\x01", "\x02", "\x7f",
                                                   "\t", "\n", "\xc3\xa9", "UNIQ_KEY", "", "12345678901234567"};
  const auto count = *rc::gen::inRange<size_t>(0, 6);
  std::string text;
  for (const std::string& token : *rc::gen::container<std::vector<std::string>>(count, rc::gen::elementOf(kTokens))) {
    text += token;
  }
  return text;
}

// A command whose header has the given ext names and whatever values.
RemotingCommand gen_command_with(const std::vector<std::string>& names) {
  RemotingCommand command;
  command.code = *rc::gen::element(310, 11, *rc::gen::arbitrary<int32_t>());
  command.language = *rc::gen::element(std::string("JAVA"), std::string("CPP"), gen_value());
  command.version = *rc::gen::element(407, 0, *rc::gen::arbitrary<int32_t>());
  command.opaque = *rc::gen::arbitrary<int32_t>();
  command.flag = *rc::gen::element(0, 1, 2);
  command.remark = *rc::gen::element(0, 3) == 0 ? gen_value() : std::string();
  for (const std::string& name : names) command.ext_fields.insert_or_assign(name, gen_value());
  return command;
}

RC_GTEST_PROP(JsonHeaderShapes, HeadersOfALearnedShapeDecodeAsWithoutShapes, ()) {
  static const std::vector<std::string> kNames = {"a", "b", "e", "i", "topic", "queueId", "consumerGroup", "n"};
  JsonHeaderShapes shapes;
  // A few shapes (sets of names), each sent several times with new values.
  const auto shape_count = *rc::gen::inRange(1, 6);
  for (int s = 0; s < shape_count; ++s) {
    const auto names = *rc::gen::container<std::vector<std::string>>(*rc::gen::inRange<size_t>(0, 6),
                                                                     rc::gen::elementOf(kNames));
    const auto repeats = *rc::gen::inRange(1, 6);
    for (int r = 0; r < repeats; ++r) {
      Bytes header;
      append_json_header(gen_command_with(names), header);
      if (*rc::gen::element(0, 4) == 0 && !header.empty()) {  // now and then a damaged byte
        const auto at = *rc::gen::inRange<size_t>(0, header.size());
        header[at] = static_cast<uint8_t>(*rc::gen::elementOf(std::string("{}:,\"\\ 09-.eE\x01\xc3")));
      }
      assert_same(decode_with(shapes, header), decode_json_header(header));
      RC_ASSERT(shapes.size() <= JsonHeaderShapes::kMaxShapes);
    }
  }
}

// A connection's headers of one shape mostly keep their length, and such a
// header is read against the last one, reading again only what changed
// (json_header_shapes.h): here each header is the one before with a few
// bytes replaced, mostly by plain bytes and digits (values that change in
// place, a number given a leading zero or a sign), now and then by a quote,
// a backslash, a control byte or punctuation (a string that ends early or
// runs on, an escape that comes or goes, a literal that changes).
RC_GTEST_PROP(JsonHeaderShapes, HeadersChangedInPlaceDecodeAsWithoutShapes, ()) {
  static const std::vector<std::string> kNames = {"a", "b", "e", "i", "topic", "queueId", "consumerGroup", "n"};
  static const std::string kPlain = "abcXYZ0123456789 _";
  static const std::string kOther = "\"\"\"\"\\\\u-.,:{}\x01\xc3" "e";  // quotes and backslashes weigh more
  JsonHeaderShapes shapes;
  // Plain values and a send's separators (written \u0001, \u0002): headers
  // a shape is learned from.
  RemotingCommand command;
  command.code = *rc::gen::inRange(0, 400);
  command.opaque = *rc::gen::inRange(0, 100000);
  for (const std::string& name : *rc::gen::container<std::vector<std::string>>(*rc::gen::inRange<size_t>(0, 6),
                                                                             rc::gen::elementOf(kNames))) {
    const std::string alphabet = *rc::gen::element(kPlain, kPlain + "\x01\x02");
    command.ext_fields.insert_or_assign(name, *rc::gen::container<std::string>(rc::gen::elementOf(alphabet)));
  }
  Bytes header;
  append_json_header(command, header);
  std::vector<Bytes> valid{header};  // each header is one of these changed, or one of them again
  LineageChecker lineages;
  const auto count = *rc::gen::inRange(2, 24);
  for (int i = 0; i < count; ++i) {
    const Result<RemotingCommand> without = decode_json_header(header);
    const Result<RemotingCommand> with_shapes = decode_with(shapes, header);
    assert_same(with_shapes, without);
    lineages.check(with_shapes);
    RC_ASSERT(shapes.size() <= JsonHeaderShapes::kMaxShapes);
    if (without.ok()) valid.push_back(header);
    if (*rc::gen::inRange(0, 5) == 0) {
      header = *rc::gen::elementOf(valid);  // one seen before comes back
      continue;
    }
    header = valid.back();
    const auto changes = *rc::gen::inRange(1, 4);
    for (int c = 0; c < changes; ++c) {
      std::vector<size_t> digits;  // the numbers' (and some strings') digits: a new digit keeps most valid
      std::vector<size_t> letters;  // in keys and strings: a quote or backslash there ends one early or escapes
      for (size_t at = 0; at < header.size(); ++at) {
        if (header[at] >= '0' && header[at] <= '9') digits.push_back(at);
        if ((header[at] >= 'a' && header[at] <= 'z') || (header[at] >= 'A' && header[at] <= 'Z')) letters.push_back(at);
      }
      const auto where = *rc::gen::inRange(0, 5);
      if (where == 0 && !digits.empty()) {
        header[*rc::gen::elementOf(digits)] = static_cast<uint8_t>(*rc::gen::inRange<char>('0', ':'));
        continue;
      }
      if (where == 1 && !letters.empty()) {
        header[*rc::gen::elementOf(letters)] = static_cast<uint8_t>(*rc::gen::element('"', '\\'));
        continue;
      }
      // Anywhere, or at the end, where the last literal is a byte or two.
      const auto at = where == 2 ? header.size() - 1 - *rc::gen::inRange<size_t>(0, 2)
                                 : *rc::gen::inRange<size_t>(0, header.size());
      const bool plain = *rc::gen::inRange(0, 10) < 7;
      header[at] = static_cast<uint8_t>(plain ? *rc::gen::elementOf(kPlain) : *rc::gen::elementOf(kOther));
    }
  }
}

// The same through a header whose properties hold escapes, as a send's do:
// a changed character in a run between escapes, an escape's hex digit, or
// an escape made plain.
TEST(JsonHeaderShapes, ASendsPropertiesChangedInPlaceDecodeAsWithoutShapes) {
  JsonHeaderShapes shapes;
  std::string text =
      R"({"code":310,"extFields":{"a":"G","b":"T","i":"KEYS\u0001k1\u0002UNIQ_KEY\u0001AB12\u0002"},"flag":0,)"
      R"("language":"JAVA","opaque":10,"serializeTypeCurrentRPC":"JSON","version":407})";
  const auto decode_both = [&] {
    const Bytes header = bytes_of(text);
    const Result<RemotingCommand> read = decode_with(shapes, header);
    expect_same(read, decode_json_header(header));
    return read;
  };
  ASSERT_TRUE(decode_both().ok());
  ASSERT_TRUE(decode_both().ok());  // the first made the shape, the second its last header
  text.replace(text.find("AB12"), 4, "CD34");
  text.replace(text.find(":10,"), 4, ":11,");
  Result<RemotingCommand> read = decode_both();
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->ext_fields.at("i"), "KEYS\x01k1\x02UNIQ_KEY\x01" "CD34\x02");
  EXPECT_EQ(read->opaque, 11);
  text.replace(text.find(":11,"), 4, ":10,");  // back as it was two headers ago
  read = decode_both();
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->opaque, 10);
  text.replace(text.find("u0002UNIQ"), 5, "u0003");  // another escape
  read = decode_both();
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->ext_fields.at("i"), "KEYS\x01k1\x03UNIQ_KEY\x01" "CD34\x02");
  text.replace(text.find("\\u0003"), 6, "abcdef");  // no escape there now
  read = decode_both();
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->ext_fields.at("i"), "KEYS\x01k1abcdefUNIQ_KEY\x01" "CD34\x02");
  text.replace(text.find("k1"), 2, "\\\"");  // an escaped quote where k1 was: the same length
  read = decode_both();
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->ext_fields.at("i"), "KEYS\x01\"abcdefUNIQ_KEY\x01" "CD34\x02");
  text.replace(text.find("\"G\""), 3, "\"\"\"");  // a value that ends early: not JSON
  EXPECT_FALSE(decode_both().ok());
  EXPECT_EQ(shapes.size(), 1u);
}

// Java's writer sorts extFields by name and so does ours, but a peer need
// not: a shape learned from names in another order is read with their
// order checked (a shape of sorted names appends each without comparing),
// and its fields come out sorted all the same.
RC_GTEST_PROP(JsonHeaderShapes, HeadersWithNamesInAnyOrderDecodeAsWithoutShapes, ()) {
  static const std::vector<std::string> kNames = {"a", "b", "e", "i", "topic", "queueId", "consumerGroup", "n"};
  const auto names = *rc::gen::unique<std::vector<std::string>>(rc::gen::elementOf(kNames));
  JsonHeaderShapes shapes;
  for (int repeat = 0; repeat < 4; ++repeat) {
    std::string text = R"({"code":310,"extFields":{)";
    for (size_t i = 0; i < names.size(); ++i) {
      if (i > 0) text += ',';
      text += '"' + names[i] + "\":\"" + *rc::gen::container<std::string>(rc::gen::inRange('a', 'z')) + '"';
    }
    text += R"(},"flag":0,"language":"JAVA","opaque":)" + std::to_string(repeat) + "}";
    const Bytes header = bytes_of(text);
    const Result<RemotingCommand> read = decode_with(shapes, header);
    assert_same(read, decode_json_header(header));
    RC_ASSERT(read.ok());
    RC_ASSERT(std::is_sorted(read->ext_fields.begin(), read->ext_fields.end()));
  }
  RC_ASSERT(shapes.size() == 1u);  // learned once, then matched
}

// Numbers a shape's reader must refuse as the fast reader does (then the
// general path decides): past int32, leading zeros, fractions.
TEST(JsonHeaderShapes, NumbersOutOfTheFastReadersRangeDecodeAsWithoutShapes) {
  JsonHeaderShapes shapes;
  const std::string prefix = R"({"code":)";
  const std::string suffix = R"(,"extFields":{"a":"x"},"flag":0,"language":"JAVA","opaque":7,"version":407})";
  expect_same(decode_with(shapes, bytes_of(prefix + "310" + suffix)), decode_json_header(bytes_of(prefix + "310" + suffix)));
  EXPECT_EQ(shapes.size(), 1u);
  for (const std::string number : {"2147483647", "-2147483648", "2147483648", "-2147483649", "007", "-0", "1.5", "1e3",
                                   "99999999999", "-"}) {
    const Bytes header = bytes_of(prefix + number + suffix);
    expect_same(decode_with(shapes, header), decode_json_header(header));
  }
}

TEST(JsonHeaderShapes, LearnsAShapeOnceAndReadsLaterHeadersAgainstIt) {
  JsonHeaderShapes shapes;
  const Bytes first = bytes_of(
      R"({"code":310,"extFields":{"a":"G","b":"T","i":"KEYS\u0001k\u0002TAGS\u0001t"},"flag":0,"language":"JAVA",)"
      R"("opaque":1,"serializeTypeCurrentRPC":"JSON","version":407})");
  const Bytes second = bytes_of(
      R"({"code":310,"extFields":{"a":"Group","b":"Topic","i":"SEQ\u00017"},"flag":0,"language":"JAVA",)"
      R"("opaque":2,"serializeTypeCurrentRPC":"JSON","version":407})");
  expect_same(decode_with(shapes, first), decode_json_header(first));
  EXPECT_EQ(shapes.size(), 1u);
  const Result<RemotingCommand> read = decode_with(shapes, second);
  expect_same(read, decode_json_header(second));
  EXPECT_EQ(shapes.size(), 1u);  // matched: nothing new learned
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->opaque, 2);
  EXPECT_EQ(read->ext_fields.at("i"), "SEQ\x01" "7");
  // Another order of the same keys is another shape.
  const Bytes reordered = bytes_of(R"({"extFields":{"b":"T","a":"G"},"code":310,"opaque":3})");
  expect_same(decode_with(shapes, reordered), decode_json_header(reordered));
  EXPECT_EQ(shapes.size(), 2u);
}

// What replaying values in order could get wrong is not learned: bare ext
// values, a repeated name or extFields object, an escaped name.
TEST(JsonHeaderShapes, LearnsNoShapeWhoseReplayWouldDiffer) {
  for (const std::string_view text : {
           R"({"code":1,"extFields":{"d":4,"k":false}})",
           R"({"code":1,"extFields":{"a":null}})",
           R"({"code":1,"extFields":{"a":"x","a":"y"}})",
           R"({"code":1,"extFields":{"a":"x"},"extFields":{"b":"y"}})",
           R"({"code":1,"extFields":{"\u0061":"x"}})",
       }) {
    JsonHeaderShapes shapes;
    const Bytes header = bytes_of(text);
    expect_same(decode_with(shapes, header), decode_json_header(header));
    expect_same(decode_with(shapes, header), decode_json_header(header));
    EXPECT_EQ(shapes.size(), 0u) << text;
  }
}

// A header that matches a shape's start but not its end leaves no trace
// of the partial match in what it decodes to.
TEST(JsonHeaderShapes, APartialMatchLeavesNoTrace) {
  JsonHeaderShapes shapes;
  const Bytes learned = bytes_of(R"({"code":11,"extFields":{"topic":"T","queueId":"1"},"flag":0,"remark":"r"})");
  const Bytes other = bytes_of(R"({"code":12,"extFields":{"topic":"U","queueId":"2"},"flag":1,"language":"CPP"})");
  expect_same(decode_with(shapes, learned), decode_json_header(learned));
  const Result<RemotingCommand> read = decode_with(shapes, other);
  expect_same(read, decode_json_header(other));
  ASSERT_TRUE(read.ok());
  EXPECT_TRUE(read->remark.empty());
  EXPECT_EQ(shapes.size(), 2u);
}

// A shape that reads an escaped value decodes it in place, over the
// header's text; when that shape then fails further on, no other shape may
// read the text it left (here the second shape would have read "ABC041BC",
// the decoded value and what was left of its escape, for "ABC"): the
// header goes to the fast reader, and the shape it learns is one it has.
TEST(JsonHeaderShapes, AShapeThatFailsAfterDecodingInPlaceHandsTheHeaderOn) {
  JsonHeaderShapes shapes;
  const Bytes first = bytes_of(R"({"code":1,"extFields":{"a":"x","b":"y"}})");
  const Bytes second = bytes_of(R"({"code":1,"extFields":{"a":"x","c":"y"}})");
  expect_same(decode_with(shapes, first), decode_json_header(first));
  expect_same(decode_with(shapes, second), decode_json_header(second));
  ASSERT_EQ(shapes.size(), 2u);
  const Bytes escaped = bytes_of(R"({"code":1,"extFields":{"a":"\u0041BC","c":"y"}})");
  const Result<RemotingCommand> read = decode_with(shapes, escaped);
  expect_same(read, decode_json_header(escaped));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->ext_fields.at("a"), "ABC");
  EXPECT_EQ(shapes.size(), 2u);  // the second shape, not learned again
}

// A run of same-length headers of one shape makes a lineage: the first read
// against the shape's literals starts it (every place changed), each read
// against the last header continues it with the places whose values were
// read again; a header of another length starts a new one, and one that no
// shape reads (or another shape's) makes none.
TEST(JsonHeaderShapes, ARunOfHeadersOfOneShapeMakesALineage) {
  JsonHeaderShapes shapes;
  const auto pull = [](std::string_view queue_id, std::string_view offset) {
    return bytes_of(std::string(R"({"code":11,"extFields":{"consumerGroup":"cg","queueId":")") +
                    std::string(queue_id) + R"(","queueOffset":")" + std::string(offset) +
                    R"(","topic":"T"},"flag":0,"opaque":7})");
  };
  const auto lineage_of = [&](const Bytes& header) {
    const Result<RemotingCommand> read = decode_with(shapes, header);
    expect_same(read, decode_json_header(header));
    return read.ok() ? read->ext_fields.lineage() : ExtFieldsLineage{};
  };
  EXPECT_EQ(lineage_of(pull("1", "100")).id, 0u);  // learned by the fast reader: no lineage yet
  const ExtFieldsLineage first = lineage_of(pull("1", "100"));  // read against the shape's literals
  ASSERT_NE(first.id, 0u);
  EXPECT_EQ(first.index, 1u);
  EXPECT_EQ(first.changed, 0b1111u);  // four fields, all read
  const ExtFieldsLineage second = lineage_of(pull("2", "101"));
  EXPECT_EQ(second.id, first.id);
  EXPECT_EQ(second.index, 2u);
  EXPECT_EQ(second.changed, 0b0110u);  // queueId and queueOffset (places 1 and 2)
  const ExtFieldsLineage same = lineage_of(pull("2", "101"));
  EXPECT_EQ(same.index, 3u);
  EXPECT_EQ(same.changed, 0u);
  const ExtFieldsLineage longer = lineage_of(pull("2", "1000"));  // another length: read as the shape
  EXPECT_NE(longer.id, first.id);
  EXPECT_EQ(longer.index, 1u);
  EXPECT_EQ(longer.changed, 0b1111u);
  // A table changed after decoding is no lineage's.
  Result<RemotingCommand> changed = decode_with(shapes, pull("3", "1001"));
  ASSERT_TRUE(changed.ok());
  EXPECT_EQ(changed->ext_fields.lineage().index, 2u);
  changed->ext_fields.insert_or_assign("queueId", "4");
  EXPECT_EQ(changed->ext_fields.lineage().id, 0u);
}

// A header read against the last one that changes a value and then fails
// after decoding an escape in place goes to the fast reader (no lineage),
// but the last header already holds its changed value: the lineage must
// end there, or the next header, the same as that one in that value, would
// say the value had not changed since the lineage's last table (which
// held the value before).
TEST(JsonHeaderShapes, AFailedReadAgainstTheLastHeaderEndsTheLineage) {
  JsonHeaderShapes shapes;
  const auto send = [](std::string_view b, std::string_view key) {
    return bytes_of(std::string(R"({"code":310,"extFields":{"a":"X\u0001Y","b":")") + std::string(b) +
                    R"(","c":"T"},")" + std::string(key) + R"(":1})");
  };
  const auto read = [&](const Bytes& header) {
    const Result<RemotingCommand> command = decode_with(shapes, header);
    expect_same(command, decode_json_header(header));
    return command.ok() ? command->ext_fields.lineage() : ExtFieldsLineage{};
  };
  read(send("1", "opaque"));                               // learned
  const ExtFieldsLineage started = read(send("1", "opaque"));  // b is 1 in the lineage's table 1
  ASSERT_NE(started.id, 0u);
  EXPECT_EQ(read(send("2", "opaquX")).id, 0u);  // b read again, then the last key differs
  const ExtFieldsLineage after = read(send("2", "opaque"));
  const uint32_t b_place = 1;
  EXPECT_TRUE(after.id != started.id || (after.changed & (uint32_t{1} << b_place)) != 0)
      << "the lineage went on as if b were still 1";
}

TEST(JsonHeaderShapes, KeepsTheMostRecentlyUsedFew) {
  JsonHeaderShapes shapes;
  for (int code = 0; code < 10; ++code) {
    // Each a different key set, so a different shape.
    const Bytes header = bytes_of(R"({"code":1,"extFields":{"k)" + std::to_string(code) + R"(":"v"}})");
    expect_same(decode_with(shapes, header), decode_json_header(header));
    EXPECT_LE(shapes.size(), JsonHeaderShapes::kMaxShapes);
  }
  EXPECT_EQ(shapes.size(), JsonHeaderShapes::kMaxShapes);
}

}  // namespace
}  // namespace mqlab::remoting::json_header_shapes_test
