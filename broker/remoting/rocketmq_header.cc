#include "broker/remoting/rocketmq_header.h"

#include <array>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

#include "broker/common/big_endian.h"

namespace mqlab::remoting {
namespace {

using Bytes = std::span<const uint8_t>;

// LanguageCode.java by byte: the index is the code.
constexpr std::array<std::string_view, 14> kLanguageNames = {
    "JAVA", "CPP", "DOTNET", "PYTHON", "DELPHI", "ERLANG", "RUBY",
    "OTHER", "HTTP", "GO", "PHP", "OMS", "RUST", "NODE_JS"};
constexpr uint8_t kLanguageOther = 7;
static_assert(kLanguageNames[kLanguageOther] == "OTHER");

uint8_t language_code_of(std::string_view name) {
  for (size_t code = 0; code < kLanguageNames.size(); ++code) {
    if (kLanguageNames[code] == name) return static_cast<uint8_t>(code);
  }
  return kLanguageOther;  // a name a JSON peer sent that has no byte code
}

std::string language_name_of(uint8_t code) {
  return std::string(code < kLanguageNames.size() ? kLanguageNames[code] : kLanguageNames[kLanguageOther]);
}

bool fits_int16(int64_t value) {
  return value >= std::numeric_limits<int16_t>::min() && value <= std::numeric_limits<int16_t>::max();
}

// The bytes of the ext section, so its length goes in front of it without
// building it twice.
size_t ext_fields_bytes(const ExtFields& ext_fields) {
  size_t bytes = 0;
  for (const auto& [name, value] : ext_fields) bytes += 2 + name.size() + 4 + value.size();
  return bytes;
}

// Writes into room already made: a ByteWriter grows the vector field by
// field, which cost more than the JSON encoder (every frame passes here).
struct RawWriter {
  uint8_t* at;
  void u8(uint8_t v) { *at++ = v; }
  void u16(uint16_t v) {
    put_u16_be(at, v);
    at += 2;
  }
  void i32(int32_t v) {
    put_u32_be(at, static_cast<uint32_t>(v));
    at += 4;
  }
  void bytes(std::string_view text) {
    if (!text.empty()) std::memcpy(at, text.data(), text.size());
    at += text.size();
  }
};

void append_ext_fields(const ExtFields& ext_fields, RawWriter& writer) {
  for (const auto& [name, value] : ext_fields) {
    MQ_ASSERT(fits_int16(static_cast<int64_t>(name.size())));
    MQ_ASSERT(value.size() <= static_cast<size_t>(std::numeric_limits<int32_t>::max()));
    writer.u16(static_cast<uint16_t>(name.size()));
    writer.bytes(name);
    writer.i32(static_cast<int32_t>(value.size()));
    writer.bytes(value);
  }
}

// A length-prefixed run: a length of length_bytes (2: short, 4: int), then
// that many bytes. Errors name what() and the bytes that were left; what()
// runs only on an error, so a good header builds no strings.
template <typename What>
Result<Bytes> take_length_prefixed(ByteReader& in, size_t length_bytes, const What& what) {
  MQ_ASSERT(length_bytes == 2 || length_bytes == 4);
  if (in.remaining() < length_bytes) {
    return Status::Corruption(what() + ": the header ends inside its length (" + std::to_string(in.remaining()) +
                              " bytes left)");
  }
  const int64_t length = length_bytes == 2 ? int64_t{static_cast<int16_t>(in.u16())} : int64_t{in.i32()};
  if (length < 0) return Status::Corruption(what() + ": length " + std::to_string(length) + " is negative");
  if (static_cast<uint64_t>(length) > in.remaining()) {
    return Status::Corruption(what() + ": length " + std::to_string(length) + " exceeds the " +
                              std::to_string(in.remaining()) + " bytes left");
  }
  return in.bytes(static_cast<size_t>(length));
}

std::string_view as_view(Bytes bytes) {
  return std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

Status decode_ext_fields(Bytes ext, ExtFields* out) {
  ByteReader in(ext);
  for (size_t index = 0; in.remaining() > 0; ++index) {
    const auto entry = [index](std::string_view part) {
      return "ROCKETMQ header: extFields entry " + std::to_string(index) + " " + std::string(part);
    };
    MQ_ASSIGN_OR_RETURN(Bytes name, take_length_prefixed(in, 2, [&] { return entry("key"); }));
    MQ_ASSIGN_OR_RETURN(Bytes value, take_length_prefixed(in, 4, [&] { return entry("value"); }));
    out->insert_or_assign(as_view(name), as_view(value));
  }
  MQ_ASSERT(!in.failed());  // every read above was bounds-checked first
  return Status::Ok();
}

}  // namespace

void append_rocketmq_header(const RemotingCommand& command, std::vector<uint8_t>& out) {
  MQ_ASSERT(fits_int16(command.code));
  MQ_ASSERT(fits_int16(command.version));
  MQ_ASSERT(command.remark.size() <= static_cast<size_t>(std::numeric_limits<int32_t>::max()));
  const size_t ext_bytes = ext_fields_bytes(command.ext_fields);
  MQ_ASSERT(ext_bytes <= static_cast<size_t>(std::numeric_limits<int32_t>::max()));
  const size_t start = out.size();
  out.resize(start + kRocketMqHeaderFixedBytes + command.remark.size() + ext_bytes);
  RawWriter writer{out.data() + start};
  writer.u16(static_cast<uint16_t>(static_cast<int16_t>(command.code)));
  writer.u8(language_code_of(command.language));
  writer.u16(static_cast<uint16_t>(static_cast<int16_t>(command.version)));
  writer.i32(command.opaque);
  writer.i32(command.flag);
  writer.i32(static_cast<int32_t>(command.remark.size()));
  writer.bytes(command.remark);
  writer.i32(static_cast<int32_t>(ext_bytes));
  append_ext_fields(command.ext_fields, writer);
  MQ_ASSERT(writer.at == out.data() + out.size());  // the sizes above were exact
}

Result<RemotingCommand> decode_rocketmq_header(std::span<const uint8_t> header) {
  if (header.size() < kRocketMqHeaderFixedBytes) {
    return Status::Corruption("ROCKETMQ header of " + std::to_string(header.size()) +
                              " bytes is shorter than its fixed part (" +
                              std::to_string(kRocketMqHeaderFixedBytes) + " bytes)");
  }
  ByteReader in(header);
  RemotingCommand command;
  command.serialize_type = SerializeType::ROCKETMQ;
  command.code = static_cast<int16_t>(in.u16());
  command.language = language_name_of(in.u8());
  command.version = static_cast<int16_t>(in.u16());
  command.opaque = in.i32();
  command.flag = in.i32();
  MQ_ASSIGN_OR_RETURN(Bytes remark, take_length_prefixed(in, 4, [] { return std::string("ROCKETMQ header: remark"); }));
  command.remark = as_view(remark);
  MQ_ASSIGN_OR_RETURN(Bytes ext, take_length_prefixed(in, 4, [] { return std::string("ROCKETMQ header: extFields"); }));
  MQ_RETURN_IF_ERROR(decode_ext_fields(ext, &command.ext_fields));
  if (in.remaining() != 0) {
    return Status::Corruption("ROCKETMQ header: " + std::to_string(in.remaining()) +
                              " bytes follow the extFields");
  }
  MQ_ASSERT(!in.failed());
  return command;
}

}  // namespace mqlab::remoting
