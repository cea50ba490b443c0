#include "broker/remoting/remoting_command.h"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <iterator>
#include <utility>

#include "broker/remoting/ext_field_value.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"
#include "broker/remoting/wire_text.h"

namespace mqlab::remoting {

std::string_view serialize_type_name(SerializeType type) {
  switch (type) {
    case SerializeType::JSON: return "JSON";
    case SerializeType::ROCKETMQ: return "ROCKETMQ";
  }
  return "UNKNOWN";
}

RemotingCommand RemotingCommand::make_request(int32_t code, ExtFields ext_fields) {
  RemotingCommand request;
  request.code = code;
  request.ext_fields = std::move(ext_fields);
  MQ_ASSERT(!request.is_response());
  return request;
}

RemotingCommand RemotingCommand::make_response(int32_t response_code, std::string response_remark) const {
  MQ_ASSERT(!is_response());
  RemotingCommand response;
  response.code = response_code;
  response.opaque = opaque;
  response.remark = std::move(response_remark);
  response.serialize_type = serialize_type;
  response.mark_response();
  MQ_ASSERT(response.is_response());
  MQ_ASSERT(response.opaque == opaque);
  return response;
}

const std::string_view* RemotingCommand::find_ext(std::string_view name) const {
  return ext_fields.find_value(name);
}

Result<std::string> RemotingCommand::ext_string(std::string_view name) const {
  return read_ext_string(name, find_ext(name));
}

Result<int64_t> RemotingCommand::ext_int(std::string_view name) const { return read_ext_int(name, find_ext(name)); }

Result<int32_t> RemotingCommand::ext_int32(std::string_view name) const {
  return read_ext_int32(name, find_ext(name));
}

Result<bool> RemotingCommand::ext_bool(std::string_view name) const { return read_ext_bool(name, find_ext(name)); }

std::optional<std::string> RemotingCommand::optional_ext_string(std::string_view name) const {
  const std::string_view* value = find_ext(name);
  if (value == nullptr) return std::nullopt;
  return std::string(*value);
}

Result<std::optional<int64_t>> RemotingCommand::optional_ext_int(std::string_view name) const {
  return read_optional_ext_int(name, find_ext(name));
}

Result<std::optional<int32_t>> RemotingCommand::optional_ext_int32(std::string_view name) const {
  return read_optional_ext_int32(name, find_ext(name));
}

Result<std::optional<bool>> RemotingCommand::optional_ext_bool(std::string_view name) const {
  return read_optional_ext_bool(name, find_ext(name));
}

void RemotingCommand::set_ext_string(std::string_view name, std::string value) {
  ext_fields.insert_or_assign(name, std::move(value));
}

void RemotingCommand::set_ext_int(std::string_view name, int64_t value) {
  // Digits straight into the field: every request sets several of these.
  char digits[24];
  const auto [end, error] = std::to_chars(std::begin(digits), std::end(digits), value);
  MQ_ASSERT(error == std::errc());
  ext_fields.insert_or_assign(name, std::string_view(digits, static_cast<size_t>(end - digits)));
}

void RemotingCommand::set_ext_bool(std::string_view name, bool value) {
  ext_fields.insert_or_assign(name, std::string_view(value ? "true" : "false"));
}

std::string RemotingCommand::describe() const {
  std::string text = is_response() ? "response " + describe_response_code(code)
                                   : "request " + describe_request_code(code);
  text += " opaque=" + std::to_string(opaque);
  text += " flag=" + std::to_string(flag);
  text += " lang=" + printable_excerpt(language, 16);
  text += " version=" + std::to_string(version);
  text += " ext=" + std::to_string(ext_fields.size());
  text += " body=" + std::to_string(body.size()) + "B";
  if (!remark.empty()) text += " remark=\"" + printable_excerpt(remark) + "\"";
  return text;
}

}  // namespace mqlab::remoting
