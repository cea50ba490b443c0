#include "broker/remoting/json_header_shapes.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "broker/common/assert.h"
#include "broker/common/assign_text.h"
#include "broker/common/move_bytes.h"
#include "broker/common/name_order.h"
#include "broker/common/same_bytes.h"
#include "broker/remoting/json_header.h"
#include "broker/remoting/json_text_scan.h"

namespace mqlab::remoting {
namespace {

bool is_string_slot(JsonHeaderSlot slot) {
  return slot == JsonHeaderSlot::kLanguage || slot == JsonHeaderSlot::kRemark || slot == JsonHeaderSlot::kExtValue ||
         slot == JsonHeaderSlot::kIgnoredString;
}

void store_number(JsonHeaderSlot slot, int32_t number, RemotingCommand& command) {
  switch (slot) {
    case JsonHeaderSlot::kCode: command.code = number; break;
    case JsonHeaderSlot::kFlag: command.flag = number; break;
    case JsonHeaderSlot::kOpaque: command.opaque = number; break;
    case JsonHeaderSlot::kVersion: command.version = number; break;
    default: MQ_ASSERT(slot == JsonHeaderSlot::kIgnoredNumber); break;
  }
}

// A string value other than an extFields one: two or three a header, inlined
// in read_against_last's loop (a call each cost more than the compare).
[[gnu::always_inline]] inline void store_string(JsonHeaderSlot slot, std::string_view content,
                                                RemotingCommand& command) {
  switch (slot) {
    case JsonHeaderSlot::kLanguage:
      if (!same_text(command.language, content)) assign_text(command.language, content);  // usually "JAVA" already
      break;
    case JsonHeaderSlot::kRemark: assign_text(command.remark, content); break;
    default: MQ_ASSERT(slot == JsonHeaderSlot::kIgnoredString); break;
  }
}

// An extFields value under the shape's name for it: the learned name (its
// literal matched), so its order with the names before it is the learned
// order, and a shape whose names ascend appends it.
void append_ext_value(bool names_ascending, std::string_view name, std::string_view content,
                      RemotingCommand& command) {
  if (names_ascending) {
    command.ext_fields.append_held_in_order(name, content);
  } else {
    command.ext_fields.insert_or_assign_held(name, content);
  }
}

// Lineage ids, unique in the process: a processor's memo tells lineages
// apart by id alone, whichever connection's shapes made them. Never seen
// on the wire or in a trace, so which id a lineage gets changes nothing.
uint64_t next_lineage_id() {
  static std::atomic<uint64_t> last_id{0};
  return last_id.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

bool JsonHeaderShapes::read(std::string_view text, RemotingCommand& command) {
  for (size_t i = 0; i < shapes_.size(); ++i) {
    Outcome outcome = read_against_last(shapes_[i], text, command);
    if (outcome == Outcome::kMismatch) outcome = read_as(shapes_[i], text, command);
    if (outcome == Outcome::kMismatchTextDecoded) return false;  // no other shape may read the changed text
    if (outcome == Outcome::kMismatch) continue;
    // One step toward the front per match: a shape that keeps matching
    // ends up tried first, and a one-off (a heartbeat) moves little.
    if (i > 0) std::swap(shapes_[i], shapes_[i - 1]);
    return true;
  }
  return false;
}

JsonHeaderShapes::Outcome JsonHeaderShapes::read_as(Shape& shape, std::string_view text, RemotingCommand& command) {
  MQ_ASSERT(shape.values.size() <= kMaxValues && shape.last_values.size() == shape.values.size());
  // Values are stored as they are read; a mismatch further on puts the
  // command back as it came (mismatches are rare: the shape tried first is
  // the connection's usual one). Bounds in locals: the stores through char
  // pointers below may alias anything, which would reload members each time.
  const char* const begin = text.data();
  const char* at = begin;
  const char* const end = text.data() + text.size();
  const char* const literals = shape.text.data();
  const Value* const first = shape.values.data();
  const Value* const last = first + shape.values.size();
  LastValue* seen = shape.last_values.data();
  // The text as it came, before any escape is decoded in place; kept only
  // if it matches.
  shape.last.assign(text);
  shape.escaped = 0;
  bool decoded = false;
  const auto mismatch = [&] {
    shape.last.clear();
    shape.lineage_id = 0;
    reset(command);
    return decoded ? Outcome::kMismatchTextDecoded : Outcome::kMismatch;
  };
  for (const Value* value = first; value != last; ++value, ++seen) {
    if (static_cast<size_t>(end - at) < value->literal_size ||
        !same_bytes(at, literals + value->literal_begin, value->literal_size)) {
      return mismatch();
    }
    const char* const literal_at = at;
    at += value->literal_size;
    seen->begin = static_cast<uint32_t>(at - begin);
    if (!is_string_slot(value->slot)) {
      const std::optional<int32_t> number = json_scan::parse_int32(at, end);
      if (!number) return mismatch();
      seen->end = static_cast<uint32_t>(at - begin);
      seen->content_end = seen->end;
      seen->number = *number;
      store_number(value->slot, *number, command);
      continue;
    }
    // A string's content, up to the closing quote the next literal starts with.
    const char* const start = at;
    const char* const special = json_scan::skip_plain(start, end);
    std::string_view content;
    if (special != end && *special == '"') {
      content = std::string_view(start, static_cast<size_t>(special - start));
      at = special;
    } else {
      // Escapes: decoded in place (the command owns text), as the fast
      // reader decodes an extFields value.
      decoded = true;
      const char* const written_end = json_scan::unescape_to(at, end, special, const_cast<char*>(start));
      if (written_end == nullptr) return mismatch();
      content = std::string_view(start, static_cast<size_t>(written_end - start));
      --at;  // back onto the closing quote, which stayed where it was
      MQ_ASSERT(*at == '"');
      shape.escaped |= uint32_t{1} << (value - first);
    }
    seen->end = static_cast<uint32_t>(at - begin);
    seen->content_end = static_cast<uint32_t>(content.data() + content.size() - begin);
    if (value->slot == JsonHeaderSlot::kExtValue) {
      seen->name_begin = static_cast<uint32_t>(literal_at + value->name_offset - begin);
      seen->name_size = value->name_size;
      append_ext_value(shape.ext_names_ascending, std::string_view(begin + seen->name_begin, value->name_size), content,
                       command);
    } else {
      store_string(value->slot, content, command);
    }
  }
  const size_t tail_size = shape.text.size() - shape.tail_begin;
  if (static_cast<size_t>(end - at) != tail_size || !same_bytes(at, literals + shape.tail_begin, tail_size)) {
    return mismatch();
  }
  // Each value's place, for read_against_last to find what a difference is in.
  static_assert(kMaxValues <= std::numeric_limits<uint8_t>::max());
  shape.value_at.resize(text.size());
  uint32_t value_begin = 0;
  for (size_t index = 0; index < shape.last_values.size(); ++index) {
    const uint32_t value_end = shape.last_values[index].end;
    std::fill(shape.value_at.begin() + value_begin, shape.value_at.begin() + value_end, static_cast<uint8_t>(index));
    value_begin = value_end;
  }
  std::fill(shape.value_at.begin() + value_begin, shape.value_at.end(), static_cast<uint8_t>(shape.last_values.size()));
  // A new lineage: every value read, as if all changed.
  if (shape.makes_lineages) {
    MQ_ASSERT(command.ext_fields.size() == shape.ext_count);
    shape.lineage_id = next_lineage_id();
    shape.lineage_index = 1;
    const uint32_t all = shape.ext_count == 32 ? ~uint32_t{0} : (uint32_t{1} << shape.ext_count) - 1;
    command.ext_fields.set_lineage({shape.lineage_id, shape.lineage_index, all});
  }
  return Outcome::kRead;
}

JsonHeaderShapes::Outcome JsonHeaderShapes::read_against_last(Shape& shape, std::string_view text,
                                                              RemotingCommand& command) {
  if (shape.last.size() != text.size() || text.empty()) return Outcome::kMismatch;
  // Once per header, not per value: every place lies inside the last
  // header, which a literal ends (its spans ascend as read_as recorded them).
  MQ_ASSERT(shape.last_values.size() == shape.values.size());
  MQ_ASSERT(shape.last_values.empty() || shape.last_values.back().end < text.size());
  MQ_ASSERT(shape.ext_first + shape.ext_count <= shape.values.size());
  // Bounds in locals, as in read_as.
  char* const begin = const_cast<char*>(text.data());  // the command owns text
  const char* const end = begin + text.size();
  char* const last_text = shape.last.data();
  const size_t size = text.size();
  const Value* const values = shape.values.data();
  LastValue* const seen_first = shape.last_values.data();
  const auto mismatch = [&shape] {
    // The last header may now hold some of this one's values: the lineage
    // ends here (it would tell a later header's changes from a header no
    // processor saw). Nothing was stored in the command yet.
    shape.lineage_id = 0;
    return Outcome::kMismatch;
  };

  // First the values whose text changed, found by comparing the header
  // with the last one, each read anew where it was; the text outside them
  // must be the last header's. Nothing is stored in the command until all
  // compare (a mismatch leaves it as it came), and the values that did not
  // change cost nothing here.
  uint32_t changed = 0;  // the extFields values read again, by their place in the table
  const uint8_t* const value_at = shape.value_at.data();
  MQ_ASSERT(shape.value_at.size() == size);
  size_t from = 0;  // where the text after the last value read again starts
  for (size_t difference = first_difference(begin, last_text, from, size); difference < size;
       difference = first_difference(begin, last_text, from, size)) {
    const size_t index = value_at[difference];
    // Past the last value, or before the value it lies in: a literal
    // differs, so this is not the shape's last header.
    if (index == shape.last_values.size() || difference < seen_first[index].begin) return mismatch();
    LastValue* const seen = seen_first + index;
    from = seen->end;
    // It must end where it did (the literal after it is compared next).
    const JsonHeaderSlot slot = values[index].slot;
    const char* at = begin + seen->begin;
    if (!is_string_slot(slot)) {
      const std::optional<int32_t> number = json_scan::parse_int32(at, end);
      if (!number || at != begin + seen->end) return mismatch();
      seen->number = *number;
    } else {
      const char* const special = json_scan::skip_plain(at, end);
      if (special != end && *special == '"') {
        if (special != begin + seen->end) return mismatch();  // ends early or runs on
        shape.escaped &= ~(uint32_t{1} << index);
        seen->content_end = seen->end;
      } else {
        shape.escaped |= uint32_t{1} << index;  // escapes (or a byte that is not allowed): decoded below
      }
    }
    // The last header's value from now on. Inline for a value's few bytes
    // (a memcpy call each cost more than the copy).
    move_bytes(last_text + seen->begin, begin + seen->begin, seen->end - seen->begin);
    const size_t ext_place = index - shape.ext_first;  // wraps for a value before the extFields
    if (ext_place < std::min<size_t>(shape.ext_count, ExtFieldsLineage::kMaxFields)) {
      changed |= uint32_t{1} << ext_place;
    }
  }

  // Strings that hold escapes, decoded in place each time (the text holds
  // them as they came). One that no longer ends where it did (a changed
  // value) leaves no last header.
  for (uint32_t escaped = shape.escaped; escaped != 0; escaped &= escaped - 1) {
    LastValue& value = seen_first[std::countr_zero(escaped)];
    const char* at = begin + value.begin;
    const char* const written_end =
        json_scan::unescape_to(at, end, json_scan::skip_plain(at, end), begin + value.begin);
    if (written_end == nullptr || at != begin + value.end + 1) {
      shape.last.clear();
      shape.lineage_id = 0;
      return Outcome::kMismatchTextDecoded;
    }
    value.content_end = static_cast<uint32_t>(written_end - begin);
  }

  // Then every value into the command: the extFields values, one run, in a
  // loop of their own (no slot to dispatch on), the few others after.
  const LastValue* const ext = seen_first + shape.ext_first;
  const uint32_t ext_count = shape.ext_count;
  if (shape.ext_names_ascending) {
    ExtFields::value_type* const slots = command.ext_fields.append_held_unset(ext_count);
    for (uint32_t place = 0; place < ext_count; ++place) {
      const LastValue& value = ext[place];
      new (slots + place) ExtFields::value_type(std::string_view(begin + value.name_begin, value.name_size),
                                               std::string_view(begin + value.begin, value.content_end - value.begin));
    }
  } else {
    for (uint32_t place = 0; place < ext_count; ++place) {
      const LastValue& value = ext[place];
      command.ext_fields.insert_or_assign_held(std::string_view(begin + value.name_begin, value.name_size),
                                               std::string_view(begin + value.begin, value.content_end - value.begin));
    }
  }
  const size_t value_count = shape.values.size();
  const size_t ext_end = shape.ext_first + ext_count;
  for (size_t index = 0; index < value_count; ++index) {
    if (index == shape.ext_first) {
      index = ext_end;  // set above (unchanged when there are none)
      if (index == value_count) break;
    }
    const JsonHeaderSlot slot = values[index].slot;
    const LastValue& value = seen_first[index];
    if (is_string_slot(slot)) {
      store_string(slot, std::string_view(begin + value.begin, value.content_end - value.begin), command);
    } else {
      store_number(slot, value.number, command);
    }
  }
  if (shape.lineage_id != 0) {
    MQ_ASSERT(shape.makes_lineages && command.ext_fields.size() == ext_count);
    ++shape.lineage_index;
    command.ext_fields.set_lineage({shape.lineage_id, shape.lineage_index, changed});
  }
  return Outcome::kRead;
}

void JsonHeaderShapes::reset(RemotingCommand& command) {
  command.ext_fields.clear_fields();  // the header's copy stays
  command.code = 0;
  command.flag = 0;
  command.opaque = 0;
  command.remark.clear();
  to_json_header_defaults(command);  // version and language
}

void JsonHeaderShapes::learn(std::span<const uint8_t> header, const JsonHeaderShapeRecorder& recorder) {
  if (!recorder.usable || recorder.values.size() > kMaxValues) return;
  const std::string_view text(reinterpret_cast<const char*>(header.data()), header.size());
  Shape shape;
  shape.values.reserve(recorder.values.size());
  uint32_t previous_end = 0;
  std::optional<std::string_view> previous_name;  // of the last extFields value so far
  for (const JsonHeaderValueSpan& span : recorder.values) {
    MQ_ASSERT(previous_end <= span.begin && span.begin <= span.end && span.end <= text.size());
    Value value{span.slot, static_cast<uint32_t>(shape.text.size()), span.begin - previous_end, 0, 0};
    if (span.slot == JsonHeaderSlot::kExtValue) {
      // The name is a key of the literal before the value.
      MQ_ASSERT(previous_end <= span.name_begin && span.name_begin + span.name_size <= span.begin);
      value.name_offset = span.name_begin - previous_end;
      value.name_size = span.name_size;
      const std::string_view name = text.substr(span.name_begin, span.name_size);
      if (previous_name && !name_less(*previous_name, name)) shape.ext_names_ascending = false;
      previous_name = name;
    }
    shape.text.append(text.substr(previous_end, span.begin - previous_end));
    shape.values.push_back(value);
    previous_end = span.end;
  }
  shape.tail_begin = static_cast<uint32_t>(shape.text.size());
  shape.text.append(text.substr(previous_end));
  // The extFields values are one run: the reader records one object's.
  const auto is_ext = [](const Value& v) { return v.slot == JsonHeaderSlot::kExtValue; };
  const auto ext_begin = std::find_if(shape.values.begin(), shape.values.end(), is_ext);
  const auto ext_end = std::find_if_not(ext_begin, shape.values.end(), is_ext);
  MQ_ASSERT(std::none_of(ext_end, shape.values.end(), is_ext));
  shape.ext_first = ext_begin == shape.values.end() ? 0 : static_cast<uint32_t>(ext_begin - shape.values.begin());
  shape.ext_count = static_cast<uint32_t>(ext_end - ext_begin);
  shape.makes_lineages = shape.ext_names_ascending && shape.ext_count <= ExtFieldsLineage::kMaxFields;
  shape.last_values.resize(shape.values.size());  // no last header yet: the next match makes one
  // Known already: a shape before it failed after decoding in place, and
  // read() handed the header on. Tried first from now on.
  const auto known = std::find_if(shapes_.begin(), shapes_.end(), [&](const Shape& other) {
    return other.text == shape.text && other.values == shape.values && other.tail_begin == shape.tail_begin;
  });
  if (known != shapes_.end()) {
    std::rotate(shapes_.begin(), known, known + 1);
    return;
  }
  if (shapes_.size() == kMaxShapes) shapes_.pop_back();
  shapes_.push_back(std::move(shape));
}

}  // namespace mqlab::remoting
