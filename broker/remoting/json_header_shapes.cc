#include "broker/remoting/json_header_shapes.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <optional>
#include <utility>

#include "broker/common/assert.h"
#include "broker/common/assign_text.h"
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
  const Value* const last = shape.values.data() + shape.values.size();
  LastValue* seen = shape.last_values.data();
  // The text as it came, before any escape is decoded in place; kept only
  // if it matches.
  shape.last.assign(text);
  bool decoded = false;
  const auto mismatch = [&] {
    shape.last.clear();
    shape.lineage_id = 0;
    reset(command);
    return decoded ? Outcome::kMismatchTextDecoded : Outcome::kMismatch;
  };
  for (const Value* value = shape.values.data(); value != last; ++value, ++seen) {
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
      seen->escaped = false;
    } else {
      // Escapes: decoded in place (the command owns text), as the fast
      // reader decodes an extFields value.
      decoded = true;
      const char* const written_end = json_scan::unescape_to(at, end, special, const_cast<char*>(start));
      if (written_end == nullptr) return mismatch();
      content = std::string_view(start, static_cast<size_t>(written_end - start));
      --at;  // back onto the closing quote, which stayed where it was
      MQ_ASSERT(*at == '"');
      seen->escaped = true;
    }
    seen->end = static_cast<uint32_t>(at - begin);
    if (value->slot == JsonHeaderSlot::kExtValue) {
      seen->name_begin = static_cast<uint32_t>(literal_at + value->name_offset - begin);
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
  // Bounds in locals, as in read_as.
  char* const begin = const_cast<char*>(text.data());  // the command owns text
  const char* const end = begin + text.size();
  char* const last_text = shape.last.data();
  const size_t size = text.size();
  const Value* const last = shape.values.data() + shape.values.size();
  LastValue* seen = shape.last_values.data();
  // The table's entries, set in place below when the names ascend (a call
  // per value to append it was a fifth of this function's work).
  ExtFields::value_type* const slots =
      shape.ext_names_ascending ? command.ext_fields.append_held_slots(shape.ext_count) : nullptr;
  bool decoded = false;
  // The extFields values read again, by their place in the table.
  uint32_t changed = 0;
  uint32_t ext_place = 0;
  const auto mismatch = [&] {
    // The last header may now hold some of this one's values: the lineage
    // ends here (it would tell a later header's changes from a header no
    // processor saw).
    shape.lineage_id = 0;
    reset(command);
    return decoded ? Outcome::kMismatchTextDecoded : Outcome::kMismatch;
  };
  // Where text first differs from the last header at or after the value at
  // hand's literal: a value before it is as it was.
  size_t difference = first_difference(begin, last_text, 0, size);
  for (const Value* value = shape.values.data(); value != last; ++value, ++seen) {
    if (difference < seen->end) {
      if (difference < seen->begin) return mismatch();  // a literal differs: not this shape's last header
      // Read anew where it was; it must end where it did (the literal after
      // it is compared next), and becomes the last header's value.
      const char* at = begin + seen->begin;
      if (!is_string_slot(value->slot)) {
        const std::optional<int32_t> number = json_scan::parse_int32(at, end);
        if (!number || at != begin + seen->end) return mismatch();
        seen->number = *number;
      } else {
        const char* const special = json_scan::skip_plain(at, end);
        if (special != end && *special == '"') {
          if (special != begin + seen->end) return mismatch();  // ends early or runs on
          seen->escaped = false;
        } else {
          seen->escaped = true;  // escapes (or a byte that is not allowed): decoded below
        }
      }
      // Inline for a value's few bytes (a memcpy call each cost more than the copy).
      json_scan::move_bytes(last_text + seen->begin, begin + seen->begin, seen->end - seen->begin);
      difference = first_difference(begin, last_text, seen->end, size);
      if (value->slot == JsonHeaderSlot::kExtValue && ext_place < ExtFieldsLineage::kMaxFields) {
        changed |= uint32_t{1} << ext_place;
      }
    }
    std::string_view content(begin + seen->begin, seen->end - seen->begin);
    if (is_string_slot(value->slot) && seen->escaped) {
      // Decoded in place each time (the text holds escapes as they came).
      // A changed string may not end where it did: then this last header
      // is no more.
      const char* at = content.data();
      decoded = true;
      const char* const written_end =
          json_scan::unescape_to(at, end, json_scan::skip_plain(at, end), begin + seen->begin);
      if (written_end == nullptr || at != begin + seen->end + 1) {
        shape.last.clear();
        return mismatch();
      }
      content = std::string_view(content.data(), static_cast<size_t>(written_end - content.data()));
    }
    if (value->slot == JsonHeaderSlot::kExtValue) {
      const std::string_view name(begin + seen->name_begin, value->name_size);
      if (slots != nullptr) {
        slots[ext_place] = ExtFields::value_type(name, content);
      } else {
        command.ext_fields.insert_or_assign_held(name, content);
      }
      ++ext_place;
    } else if (is_string_slot(value->slot)) {
      store_string(value->slot, content, command);
    } else {
      store_number(value->slot, seen->number, command);
    }
  }
  if (difference < size) return mismatch();  // the literal after the last value differs
  if (shape.lineage_id != 0) {
    MQ_ASSERT(shape.makes_lineages && ext_place == shape.ext_count && command.ext_fields.size() == ext_place);
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
  shape.ext_count = static_cast<uint32_t>(std::count_if(shape.values.begin(), shape.values.end(), [](const Value& v) {
    return v.slot == JsonHeaderSlot::kExtValue;
  }));
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
