#include "broker/remoting/frame_codec.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "broker/common/big_endian.h"
#include "broker/common/byte_buffer_pool.h"
#include "broker/remoting/json_header.h"
#include "broker/remoting/rocketmq_header.h"

namespace mqlab::remoting {
namespace {

using Bytes = std::span<const uint8_t>;

constexpr uint32_t kMaxHeaderLength = (1u << 24) - 1;  // 24 bits beside the serialize type

// --- length checks, shared by decode_frame and FrameDecoder --------------------

// The error for a total_length that check_total_length refuses: its rare
// path, out of line so the check itself inlines into every frame's decoding.
[[gnu::cold, gnu::noinline]] Status total_length_error(int32_t total_length, size_t max_frame_bytes) {
  const std::string length = "frame length " + std::to_string(total_length);
  if (total_length < 0) return Status::Corruption(length + " is negative");
  if (total_length < 4) {
    return Status::Corruption(length + " is below 4, the size of the header-length field it includes");
  }
  const size_t frame_bytes = static_cast<size_t>(total_length) + 4;
  MQ_ASSERT(frame_bytes > max_frame_bytes);
  return Status::Corruption("frame of " + std::to_string(frame_bytes) + " bytes (" + length +
                            " + 4) exceeds the maximum of " + std::to_string(max_frame_bytes) + " bytes");
}

inline Status check_total_length(int32_t total_length, size_t max_frame_bytes) {
  if (total_length < 4 || static_cast<size_t>(total_length) + 4 > max_frame_bytes) [[unlikely]] {
    return total_length_error(total_length, max_frame_bytes);
  }
  return Status::Ok();
}

// The error for a header-length field that check_header_length_field
// refuses (an unknown serialize type, or a header longer than the frame):
// its rare path, out of line like total_length_error.
[[gnu::cold, gnu::noinline]] Status header_length_field_error(uint32_t field, int32_t total_length) {
  const uint32_t type = field >> 24;
  if (type != static_cast<uint32_t>(SerializeType::JSON) && type != static_cast<uint32_t>(SerializeType::ROCKETMQ)) {
    char hex[16];
    std::snprintf(hex, sizeof(hex), "0x%08x", field);
    return Status::Corruption("unknown serialize type " + std::to_string(type) + " in header-length field " + hex +
                              "; expected 0 (JSON) or 1 (ROCKETMQ)");
  }
  const uint32_t header_length = field & kMaxHeaderLength;
  const uint32_t room = static_cast<uint32_t>(total_length) - 4;
  MQ_ASSERT(header_length > room);
  return Status::Corruption("header length " + std::to_string(header_length) + " exceeds the " +
                            std::to_string(room) + " bytes left for header and body in a frame of length " +
                            std::to_string(total_length));
}

// Requires: check_total_length(total_length) passed.
inline Status check_header_length_field(uint32_t field, int32_t total_length) {
  MQ_ASSERT(total_length >= 4);
  const uint32_t type = field >> 24;
  const uint32_t header_length = field & kMaxHeaderLength;
  const bool known_type =
      type == static_cast<uint32_t>(SerializeType::JSON) || type == static_cast<uint32_t>(SerializeType::ROCKETMQ);
  if (!known_type || header_length > static_cast<uint32_t>(total_length) - 4) [[unlikely]] {
    return header_length_field_error(field, total_length);
  }
  return Status::Ok();
}

// A command from its header and its body, which may come in two pieces
// (a frame begun in one arrival and ended in the next), into command, as it
// was default-constructed: the frame decoder decodes in place (returned, a
// command was moved three times on its way out of the JSON reader).
// Requires: check_header_length_field(field) passed.
// shapes: the decoding connection's JSON header shapes, or null.
Status decode_command_into(uint32_t field, Bytes header, Bytes body_head, Bytes body_tail, RemotingCommand& command,
                           JsonHeaderShapes* shapes) {
  MQ_ASSERT(header.size() == (field & kMaxHeaderLength));
  if ((field >> 24) == static_cast<uint32_t>(SerializeType::JSON)) {
    MQ_RETURN_IF_ERROR(decode_json_header_into(header, command, shapes));
  } else {
    MQ_ASSIGN_OR_RETURN(command, decode_rocketmq_header(header));
  }
  MQ_ASSERT(command.body.empty());  // the header codecs leave the body to us
  // From the kept buffers: the body of a send or of a pull's answer goes
  // back there once read (feed_and_drain, the store's put, the consumer).
  const size_t body_bytes = body_head.size() + body_tail.size();
  if (body_bytes > 0) command.body = take_byte_buffer(body_bytes);
  command.body.assign(body_head.begin(), body_head.end());
  command.body.insert(command.body.end(), body_tail.begin(), body_tail.end());
  return Status::Ok();
}

// The frame after its totalLength field (header-length field, header, body)
// into command, as it was default-constructed; shapes as for
// decode_command_into. Requires: check_total_length(payload.size()) passed.
Status decode_payload_into(Bytes payload, RemotingCommand& command, JsonHeaderShapes* shapes) {
  MQ_ASSERT(payload.size() >= 4);
  MQ_ASSERT(payload.size() <= static_cast<size_t>(std::numeric_limits<int32_t>::max()));
  const uint32_t field = get_u32_be(payload.data());
  MQ_RETURN_IF_ERROR(check_header_length_field(field, static_cast<int32_t>(payload.size())));
  const size_t header_length = field & kMaxHeaderLength;
  return decode_command_into(field, payload.subspan(4, header_length), payload.subspan(4 + header_length), {},
                             command, shapes);
}

// Room for the header, so a frame is allocated once (a guess: escapes or a
// binary header may need a little more, or less).
size_t estimated_header_bytes(const RemotingCommand& command) {
  constexpr size_t kFixedFieldsBytes = 160;  // keys, numbers, language, punctuation
  constexpr size_t kPerExtFieldBytes = 6;    // quotes, colon, comma
  size_t bytes = kFixedFieldsBytes + command.language.size() + command.remark.size();
  for (const auto& [name, value] : command.ext_fields) bytes += name.size() + value.size() + kPerExtFieldBytes;
  return bytes;
}

// Appends body to a frame holding its 8 length bytes and then its header,
// and fills the two length fields in: the end of every frame encoding.
void finish_frame(std::vector<uint8_t>& frame, std::span<const uint8_t> body, SerializeType type,
                  uint64_t trailing_body_bytes) {
  MQ_ASSERT(frame.size() >= kFramePrefixBytes);
  const size_t header_length = frame.size() - kFramePrefixBytes;
  MQ_ASSERT(header_length <= kMaxHeaderLength);
  frame.insert(frame.end(), body.begin(), body.end());
  const uint64_t total_length = frame.size() - 4 + trailing_body_bytes;
  MQ_ASSERT(trailing_body_bytes <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max()));
  MQ_ASSERT(total_length <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max()));
  put_u32_be(frame.data(), static_cast<uint32_t>(total_length));
  put_u32_be(frame.data() + 4, (static_cast<uint32_t>(type) << 24) | static_cast<uint32_t>(header_length));
}

// The frame of command's header, then body, then trailing_body_bytes the
// caller sends itself: what the three encode functions below share.
std::vector<uint8_t> encode_frame_parts(const RemotingCommand& command, std::span<const uint8_t> body,
                                        uint64_t trailing_body_bytes) {
  MQ_ASSERT(command.serialize_type == SerializeType::JSON || command.serialize_type == SerializeType::ROCKETMQ);
  // Reserved before anything goes in, so the frame is allocated once (a
  // vector made with its 8 bytes first would allocate them, then again).
  std::vector<uint8_t> frame = take_byte_buffer(kFramePrefixBytes + estimated_header_bytes(command) + body.size());
  frame.resize(kFramePrefixBytes, 0);  // the two lengths, patched below
  if (command.serialize_type == SerializeType::ROCKETMQ) {
    append_rocketmq_header(command, frame);
  } else {
    append_json_header(command, frame);
  }
  finish_frame(frame, body, command.serialize_type, trailing_body_bytes);
  return frame;
}

}  // namespace

std::vector<uint8_t> encode_frame(const RemotingCommand& command) { return encode_frame_parts(command, command.body, 0); }

std::vector<uint8_t> encode_frame_prefix(const RemotingCommand& command, uint64_t trailing_body_bytes) {
  return encode_frame_parts(command, command.body, trailing_body_bytes);
}

std::vector<uint8_t> encode_frame_with_body(const RemotingCommand& command, std::span<const uint8_t> body) {
  MQ_ASSERT(command.body.empty());  // one body: the caller's
  return encode_frame_parts(command, body, 0);
}

void finish_json_frame(std::vector<uint8_t>& frame, std::span<const uint8_t> body, uint64_t trailing_body_bytes) {
  MQ_ASSERT(frame.size() > kFramePrefixBytes);  // a header was written
  finish_frame(frame, body, SerializeType::JSON, trailing_body_bytes);
}

Result<RemotingCommand> decode_frame(std::span<const uint8_t> frame, size_t max_frame_bytes) {
  if (frame.size() < 4) {
    return Status::Corruption("remoting frame: " + std::to_string(frame.size()) +
                              " bytes, shorter than its 4-byte length field");
  }
  const int32_t total_length = get_i32_be(frame.data());
  if (Status status = check_total_length(total_length, max_frame_bytes); !status.ok()) {
    return status.with_context("remoting frame");
  }
  if (frame.size() != static_cast<size_t>(total_length) + 4) {
    return Status::Corruption("remoting frame: its length field says " + std::to_string(total_length) +
                              " + 4 bytes, but " + std::to_string(frame.size()) + " were given");
  }
  RemotingCommand command;
  if (Status status = decode_payload_into(frame.subspan(4), command, nullptr); !status.ok()) {
    return status.with_context("remoting frame");
  }
  return command;
}

// --- FrameDecoder ------------------------------------------------------------------

FrameDecoder::FrameDecoder(size_t max_frame_bytes) : max_frame_bytes_(max_frame_bytes) {
  MQ_ASSERT(max_frame_bytes_ >= kFramePrefixBytes);
}

void FrameDecoder::feed(std::span<const uint8_t> bytes) {
  if (failed() || bytes.empty()) return;
  const size_t needed = buffer_.size() + bytes.size();
  if (needed > buffer_.capacity()) {
    // Grow by doubling, but not past one maximal frame unless the bytes
    // already fed need it: capacity follows arrivals, never a length field.
    const size_t doubled = std::min(buffer_.capacity() * 2, max_frame_bytes_);
    buffer_.reserve(std::max(needed, doubled));
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
  MQ_ASSERT(consumed_ <= buffer_.size());
}

Result<std::optional<RemotingCommand>> FrameDecoder::next() {
  if (failed()) return error_;
  size_t frame_bytes = 0;
  std::optional<RemotingCommand> command;
  MQ_RETURN_IF_ERROR(
      take_frame(std::span<const uint8_t>(buffer_.data() + consumed_, buffered_bytes()), frame_bytes, command));
  if (!command) return command;
  consumed_ += frame_bytes;
  stream_offset_ += frame_bytes;
  compact();
  MQ_ASSERT(consumed_ <= buffer_.size());
  return command;
}

Status FrameDecoder::take_frame(std::span<const uint8_t> pending, size_t& frame_bytes,
                                std::optional<RemotingCommand>& command) {
  MQ_ASSERT(!failed());
  MQ_ASSERT(!command.has_value());
  if (pending.size() < 4) return Status::Ok();
  const int32_t total_length = get_i32_be(pending.data());
  if (Status status = check_total_length(total_length, max_frame_bytes_); !status.ok()) return fail(status);
  if (pending.size() >= kFramePrefixBytes) {
    Status status = check_header_length_field(get_u32_be(pending.data() + 4), total_length);
    if (!status.ok()) return fail(status);
  }
  frame_bytes = static_cast<size_t>(total_length) + 4;
  if (pending.size() < frame_bytes) return Status::Ok();
  if (Status status = decode_payload_into(pending.subspan(4, frame_bytes - 4), command.emplace(), &json_shapes_);
      !status.ok()) {
    command.reset();
    return fail(status);
  }
  return Status::Ok();
}

Status FrameDecoder::next_from(std::span<const uint8_t>& bytes, std::optional<RemotingCommand>& command) {
  MQ_ASSERT(!command.has_value());
  if (failed()) return error_;
  if (buffered_bytes() == 0) {
    // Nothing begun: the frame, if whole, is decoded where it lies.
    size_t frame_bytes = 0;
    MQ_RETURN_IF_ERROR(take_frame(bytes, frame_bytes, command));
    if (!command) {
      feed(bytes);
      bytes = {};
      return Status::Ok();
    }
    MQ_ASSERT(frame_bytes <= bytes.size());
    bytes = bytes.subspan(frame_bytes);
    stream_offset_ += frame_bytes;
    return Status::Ok();
  }
  // A frame begun: its prefix and header are topped up from bytes (they
  // are small), then checked and, if that completes it, decoded by next().
  const auto top_up = [this, &bytes](size_t wanted) {
    if (buffered_bytes() >= wanted) return;
    const size_t taken = std::min(wanted - buffered_bytes(), bytes.size());
    feed(bytes.first(taken));
    bytes = bytes.subspan(taken);
  };
  const auto next_buffered = [this, &command]() -> Status {
    Result<std::optional<RemotingCommand>> next_command = next();
    if (!next_command.ok()) return next_command.status();
    if (next_command->has_value()) command.emplace(std::move(**next_command));
    return Status::Ok();
  };
  top_up(kFramePrefixBytes);
  MQ_RETURN_IF_ERROR(next_buffered());
  if (command) return Status::Ok();
  if (buffered_bytes() < kFramePrefixBytes) {
    MQ_ASSERT(bytes.empty());  // top_up took them all
    return Status::Ok();
  }
  const uint8_t* const begun = buffer_.data() + consumed_;
  const size_t head_bytes = kFramePrefixBytes + (get_u32_be(begun + 4) & kMaxHeaderLength);
  const size_t frame_bytes = static_cast<size_t>(get_i32_be(begun)) + 4;  // next() checked both lengths
  MQ_ASSERT(head_bytes <= frame_bytes);
  if (buffered_bytes() < head_bytes) {
    top_up(head_bytes);
    MQ_RETURN_IF_ERROR(next_buffered());
    if (command) return Status::Ok();
    if (buffered_bytes() < head_bytes) {
      MQ_ASSERT(bytes.empty());
      return Status::Ok();
    }
  }
  MQ_ASSERT(buffered_bytes() < frame_bytes);  // else next() would have decoded it
  if (buffered_bytes() + bytes.size() < frame_bytes) {
    feed(bytes);
    bytes = {};
    return Status::Ok();
  }
  return join_frame(bytes, command);
}

Status FrameDecoder::join_frame(std::span<const uint8_t>& bytes, std::optional<RemotingCommand>& command) {
  MQ_ASSERT(!command.has_value());
  const std::span<const uint8_t> begun(buffer_.data() + consumed_, buffered_bytes());
  MQ_ASSERT(begun.size() >= kFramePrefixBytes);
  const uint32_t field = get_u32_be(begun.data() + 4);
  const size_t head_bytes = kFramePrefixBytes + (field & kMaxHeaderLength);
  const size_t frame_bytes = static_cast<size_t>(get_i32_be(begun.data())) + 4;
  MQ_ASSERT(head_bytes <= begun.size());
  MQ_ASSERT(begun.size() < frame_bytes);
  const size_t body_rest = frame_bytes - begun.size();
  MQ_ASSERT(body_rest <= bytes.size());
  const std::span<const uint8_t> header = begun.subspan(kFramePrefixBytes, head_bytes - kFramePrefixBytes);
  if (Status status =
          decode_command_into(field, header, begun.subspan(head_bytes), bytes.first(body_rest), command.emplace(),
                              &json_shapes_);
      !status.ok()) {
    command.reset();
    return fail(status);
  }
  bytes = bytes.subspan(body_rest);
  consumed_ += begun.size();
  stream_offset_ += frame_bytes;
  compact();
  MQ_ASSERT(buffered_bytes() == 0);
  return Status::Ok();
}

Status FrameDecoder::fail(const Status& reason) {
  MQ_ASSERT(!reason.ok());
  error_ = reason.with_context("remoting frame at stream offset " + std::to_string(stream_offset_));
  std::vector<uint8_t>().swap(buffer_);  // the connection is closing: free its bytes now
  consumed_ = 0;
  return error_;
}

void FrameDecoder::compact() {
  // Erase decoded frames once they are the larger part of the buffer, so
  // each byte moves O(1) times however the stream is cut.
  constexpr size_t kReleaseCapacityBytes = 1 << 20;
  if (consumed_ == buffer_.size()) {
    buffer_.clear();
    if (buffer_.capacity() > kReleaseCapacityBytes) std::vector<uint8_t>().swap(buffer_);
    consumed_ = 0;
  } else if (consumed_ * 2 >= buffer_.size()) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(consumed_));
    consumed_ = 0;
  }
}

}  // namespace mqlab::remoting
