#include "broker/remoting/json_header_shapes.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <utility>

#include "broker/common/assert.h"
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

}  // namespace

bool JsonHeaderShapes::read(std::string_view text, RemotingCommand& command) {
  for (size_t i = 0; i < shapes_.size(); ++i) {
    if (!read_as(shapes_[i], text, command)) continue;
    // One step toward the front per match: a shape that keeps matching
    // ends up tried first, and a one-off (a heartbeat) moves little.
    if (i > 0) std::swap(shapes_[i], shapes_[i - 1]);
    return true;
  }
  return false;
}

bool JsonHeaderShapes::read_as(const Shape& shape, std::string_view text, RemotingCommand& command) {
  MQ_ASSERT(shape.values.size() <= kMaxValues);
  // Values are stored as they are read; a mismatch further on puts the
  // command back as it came (mismatches are rare: the shape tried first is
  // the connection's usual one). Bounds in locals: the stores through char
  // pointers below may alias anything, which would reload members each time.
  const char* at = text.data();
  const char* const end = text.data() + text.size();
  const char* const literals = shape.text.data();
  const Value* const last = shape.values.data() + shape.values.size();
  for (const Value* value = shape.values.data(); value != last; ++value) {
    if (static_cast<size_t>(end - at) < value->literal_size ||
        !same_bytes(at, literals + value->literal_begin, value->literal_size)) {
      return mismatch(command);
    }
    const char* const literal_at = at;
    at += value->literal_size;
    if (!is_string_slot(value->slot)) {
      const std::optional<int32_t> number = json_scan::parse_int32(at, end);
      if (!number) return mismatch(command);
      switch (value->slot) {
        case JsonHeaderSlot::kCode: command.code = *number; break;
        case JsonHeaderSlot::kFlag: command.flag = *number; break;
        case JsonHeaderSlot::kOpaque: command.opaque = *number; break;
        case JsonHeaderSlot::kVersion: command.version = *number; break;
        default: MQ_ASSERT(value->slot == JsonHeaderSlot::kIgnoredNumber); break;
      }
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
      const char* const written_end = json_scan::unescape_to(at, end, special, const_cast<char*>(start));
      if (written_end == nullptr) return mismatch(command);
      content = std::string_view(start, static_cast<size_t>(written_end - start));
      --at;  // back onto the closing quote, which stayed where it was
      MQ_ASSERT(*at == '"');
    }
    switch (value->slot) {
      case JsonHeaderSlot::kExtValue: {
        // The name is the learned one (the literal matched), so its order
        // with the names before it is the learned order.
        const std::string_view name(literal_at + value->name_offset, value->name_size);
        if (shape.ext_names_ascending) {
          command.ext_fields.append_held_in_order(name, content);
        } else {
          command.ext_fields.insert_or_assign_held(name, content);
        }
        break;
      }
      case JsonHeaderSlot::kLanguage:
        if (!same_text(command.language, content)) command.language.assign(content);  // usually "JAVA" already
        break;
      case JsonHeaderSlot::kRemark: command.remark.assign(content); break;
      default: MQ_ASSERT(value->slot == JsonHeaderSlot::kIgnoredString); break;
    }
  }
  const size_t tail_size = shape.text.size() - shape.tail_begin;
  if (static_cast<size_t>(end - at) != tail_size || !same_bytes(at, literals + shape.tail_begin, tail_size)) {
    return mismatch(command);
  }
  return true;
}

bool JsonHeaderShapes::mismatch(RemotingCommand& command) {
  command.ext_fields.clear_fields();  // the header's copy stays
  command.code = 0;
  command.flag = 0;
  command.opaque = 0;
  command.remark.clear();
  to_json_header_defaults(command);  // version and language
  return false;
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
  if (shapes_.size() == kMaxShapes) shapes_.pop_back();
  shapes_.push_back(std::move(shape));
}

}  // namespace mqlab::remoting
