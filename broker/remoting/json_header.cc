// The JSON header's general paths through nlohmann (json_header.h), what the
// fast paths in json_header_fast_path.cc must equal and hand over to.
#include "broker/remoting/json_header.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "broker/common/append_text.h"
#include "broker/remoting/wire_text.h"

namespace mqlab::remoting {
namespace {

using Json = nlohmann::json;

// Integral doubles up to 2^53 are exact: print them as the integers a
// JavaScript client meant.
constexpr double kMaxExactIntegerDouble = 9007199254740992.0;

std::string integral_or_shortest(double value) {
  if (std::isfinite(value) && value == std::trunc(value) && std::fabs(value) <= kMaxExactIntegerDouble) {
    return std::to_string(static_cast<int64_t>(value));
  }
  return Json(value).dump();
}

// An extFields value as the string a Java peer would have sent; nullopt for
// null; an error for a container (passed as its type phrase).
std::optional<std::string> ext_value_text(const Json& value) {
  switch (value.type()) {
    case Json::value_t::string: return value.get<std::string>();
    case Json::value_t::boolean: return value.get<bool>() ? "true" : "false";
    case Json::value_t::number_integer: return std::to_string(value.get<int64_t>());
    case Json::value_t::number_unsigned: return std::to_string(value.get<uint64_t>());
    case Json::value_t::number_float: return integral_or_shortest(value.get<double>());
    default: break;
  }
  MQ_UNREACHABLE("ext_value_text takes scalars only");
}

bool is_int32_field(std::string_view key) {
  return key == "code" || key == "opaque" || key == "flag" || key == "version";
}
bool is_string_field(std::string_view key) { return key == "language" || key == "remark"; }

// nlohmann's SAX interface, building the command as events arrive.
//
// Depth 1 is the header object, depth 2 the extFields object; an unknown
// key's container is skipped by counting depth until it closes. Any other
// container is a type error, so nothing deeper is ever looked at.
class JsonHeaderReader {
 public:
  JsonHeaderReader() : command_(json_header_defaults()) {}

  bool null() { return on_scalar(Json(nullptr)); }
  bool boolean(bool value) { return on_scalar(Json(value)); }
  bool number_integer(int64_t value) { return on_scalar(Json(value)); }
  bool number_unsigned(uint64_t value) { return on_scalar(Json(value)); }
  bool number_float(double value, const std::string& /*text*/) { return on_scalar(Json(value)); }
  bool string(std::string& value) { return on_scalar(Json(std::move(value))); }
  bool binary(Json::binary_t& /*value*/) { return fail("JSON header: unexpected binary value"); }
  bool start_object(std::size_t /*elements*/) { return on_start(true); }
  bool start_array(std::size_t /*elements*/) { return on_start(false); }
  bool end_object() { return on_end(); }
  bool end_array() { return on_end(); }
  bool key(std::string& name) {
    if (skipping()) return true;
    (depth_ == 1 ? key_ : ext_key_) = std::move(name);
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& error) {
    return fail(std::string("JSON header: invalid JSON: ") + error.what());
  }

  // Requires: the SAX pass ended; parsed is what it returned.
  Result<RemotingCommand> finish(bool parsed) && {
    if (!error_.ok()) return error_;
    if (!parsed) return Status::Corruption("JSON header: invalid JSON");
    MQ_ASSERT(depth_ == 0);  // a complete document closed every container
    if (!saw_code_) return Status::Corruption("JSON header has no \"code\"");
    return std::move(command_);
  }

 private:
  bool skipping() const { return skip_until_depth_.has_value(); }
  bool in_ext() const { return depth_ == 2; }

  bool fail(std::string message) {
    if (error_.ok()) error_ = Status::Corruption(std::move(message));
    return false;  // stops the parser
  }

  bool wrong_header_field(std::string_view expected, const std::string& found) {
    return fail("JSON header." + printable_excerpt(key_) + ": expected " + std::string(expected) + ", found " +
                found);
  }

  bool wrong_ext_value(const std::string& found) {
    return fail("JSON header: extFields." + printable_excerpt(ext_key_) +
                ": expected a string, number or boolean, found " + found);
  }

  bool on_start(bool is_object) {
    const std::string found = is_object ? "an object" : "an array";
    if (skipping()) {
      ++depth_;
      return true;
    }
    if (depth_ == 0) {
      if (!is_object) return fail("JSON header is an array, expected an object");
    } else if (in_ext()) {
      return wrong_ext_value(found);
    } else if (key_ == "extFields") {
      if (!is_object) return fail("JSON header: extFields: expected an object, found an array");
      command_.ext_fields.clear();  // a repeated "extFields": the last one wins, as in a DOM
    } else if (is_int32_field(key_)) {
      return wrong_header_field("an int32", found);
    } else if (is_string_field(key_)) {
      return wrong_header_field("a string", found);
    } else {
      skip_until_depth_ = depth_;  // an unknown key's value: skip it whole
    }
    ++depth_;
    return true;
  }

  bool on_end() {
    MQ_ASSERT(depth_ > 0);  // the parser pairs every end with a start
    --depth_;
    if (skip_until_depth_ == depth_) skip_until_depth_.reset();
    return true;
  }

  bool on_scalar(Json value) {
    if (skipping()) return true;
    if (depth_ == 0) return fail("JSON header is " + json_type_phrase(value) + ", expected an object");
    if (in_ext()) return on_ext_value(value);
    return on_header_field(value);
  }

  bool on_ext_value(const Json& value) {
    if (value.is_null()) {
      command_.ext_fields.erase(ext_key_);  // the last occurrence of a key wins
      return true;
    }
    std::optional<std::string> text = ext_value_text(value);
    MQ_ASSERT(text.has_value());
    command_.ext_fields.insert_or_assign(ext_key_, std::move(*text));
    return true;
  }

  bool on_header_field(const Json& value) {
    MQ_ASSERT(depth_ == 1);
    if (value.is_null()) return reset_header_field();
    if (is_int32_field(key_)) {
      const std::optional<int32_t> number = json_int32(value);
      if (!number) return wrong_header_field("an int32", json_type_phrase(value));
      int32_field(key_) = *number;
      if (key_ == "code") saw_code_ = true;
    } else if (is_string_field(key_)) {
      if (!value.is_string()) return wrong_header_field("a string", json_type_phrase(value));
      (key_ == "language" ? command_.language : command_.remark) = value.get<std::string>();
    } else if (key_ == "extFields") {
      return fail("JSON header: extFields: expected an object, found " + json_type_phrase(value));
    }
    return true;
  }

  // A null value: the field is as if absent (fastjson omits nulls), even
  // when an earlier occurrence of the key set it.
  bool reset_header_field() {
    if (key_ == "code") saw_code_ = false;
    if (is_int32_field(key_)) int32_field(key_) = 0;  // every int field of Java's RemotingCommand starts at 0
    if (key_ == "language") command_.language = std::string(kDefaultLanguage);
    if (key_ == "remark") command_.remark.clear();
    if (key_ == "extFields") command_.ext_fields.clear();
    return true;
  }

  int32_t& int32_field(std::string_view key) {
    if (key == "code") return command_.code;
    if (key == "opaque") return command_.opaque;
    if (key == "flag") return command_.flag;
    MQ_ASSERT(key == "version");
    return command_.version;
  }

  RemotingCommand command_;
  Status error_;
  size_t depth_ = 0;                        // containers open
  std::optional<size_t> skip_until_depth_;  // skipping an unknown value until depth_ is back here
  std::string key_;                         // the header key whose value comes next
  std::string ext_key_;                     // the extFields key whose value comes next
  bool saw_code_ = false;
};

}  // namespace

RemotingCommand json_header_defaults() {
  RemotingCommand command;
  to_json_header_defaults(command);
  return command;
}

void to_json_header_defaults(RemotingCommand& command) {
  MQ_ASSERT(command.code == 0 && command.ext_fields.empty() && command.body.empty());
  command.version = 0;
  // Already so as a RemotingCommand starts: compared, not assigned again
  // (an assignment is a call into the string's replace, per frame).
  if (command.language != kDefaultLanguage) command.language = kDefaultLanguage;
  command.serialize_type = SerializeType::JSON;
}

Status decode_json_header_into(std::span<const uint8_t> header, RemotingCommand& command, JsonHeaderShapes* shapes) {
  to_json_header_defaults(command);
  if (decode_json_header_fast_into(header, command, shapes)) return Status::Ok();
  MQ_ASSIGN_OR_RETURN(command, decode_json_header_general(header));  // over the half-read fields
  return Status::Ok();
}

Result<RemotingCommand> decode_json_header(std::span<const uint8_t> header) {
  RemotingCommand command;
  MQ_RETURN_IF_ERROR(decode_json_header_into(header, command));
  return command;
}

void append_json_header_general(const RemotingCommand& command, std::vector<uint8_t>& out) {
  Json ext = Json::object();
  for (const auto& [name, value] : command.ext_fields) ext[name] = value;
  Json header = Json::object();
  header["code"] = command.code;
  header["extFields"] = std::move(ext);
  header["flag"] = command.flag;
  header["language"] = command.language;
  header["opaque"] = command.opaque;
  if (!command.remark.empty()) header["remark"] = command.remark;
  header["serializeTypeCurrentRPC"] = "JSON";
  header["version"] = command.version;
  append_text(dump_json_text(header), out);
}

Result<RemotingCommand> decode_json_header_general(std::span<const uint8_t> header) {
  JsonHeaderReader reader;
  bool parsed = false;
  try {
    // Errors arrive through parse_error(); the catch is a backstop (bad_alloc).
    parsed = Json::sax_parse(header.begin(), header.end(), &reader);
  } catch (const std::exception& error) {
    return Status::Corruption(std::string("JSON header: ") + error.what());
  }
  return std::move(reader).finish(parsed);
}

}  // namespace mqlab::remoting
