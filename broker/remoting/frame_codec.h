// Frame codec: RemotingCommand <-> the bytes of one remoting frame, and a
// stream decoder that cuts a TCP byte stream into frames
// (apache/rocketmq remoting/…/netty/NettyDecoder.java, NettyEncoder.java,
// protocol/RemotingCommand.java, RocketMQSerializable.java).
//
// Frame (all integers big-endian):
// | field          | bytes | meaning                                            |
// |----------------|-------|----------------------------------------------------|
// | totalLength    | 4     | int: 4 + headerLength + bodyLength (not itself)    |
// | headerLengthEx | 4     | serializeType << 24 | headerLength (24 bits)       |
// | header         | hl    | JSON (type 0) or ROCKETMQ binary (type 1) header   |
// | body           | rest  | totalLength - 4 - headerLength bytes, may be empty |
//
// The header's own layout is its codec's business: json_header.h (type 0,
// what ali-ons and Java clients send by default) and rocketmq_header.h
// (type 1). A response goes in the type its request came in (make_response
// copies serialize_type), as a Java server answers. That matters for ali-ons:
// it reads headerLengthEx as a whole int and always JSON-parses the header,
// so it can only be answered in JSON with a type byte of 0.
//
// Errors: every decode error is Corruption and means the stream can no longer
// be trusted to be in step, so the connection must close (what NettyDecoder
// does). Nothing here asserts on, or throws because of, the peer's bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "broker/common/byte_buffer_pool.h"
#include "broker/common/status.h"
#include "broker/remoting/json_header_shapes.h"
#include "broker/remoting/remoting_command.h"

namespace mqlab::remoting {

// NettySystemConfig's com.rocketmq.remoting.frameMaxLength default. As in
// Netty's LengthFieldBasedFrameDecoder it bounds the whole frame, length
// field included: 4 + totalLength <= max_frame_bytes.
inline constexpr size_t kDefaultMaxFrameBytes = 16 * 1024 * 1024;
// The two int fields in front of the header.
inline constexpr size_t kFramePrefixBytes = 8;

// The whole frame of command, header in command.serialize_type.
// Requires: the header fits 24 bits of length and the frame an int; for the
// ROCKETMQ header, code, version and every ext key fit a short.
std::vector<uint8_t> encode_frame(const RemotingCommand& command);

// The head of a frame whose body continues past command.body with
// trailing_body_bytes more bytes that the caller sends itself (file regions,
// RocketMQ's ManyMessageTransfer): totalLength counts them, the returned
// bytes do not hold them. encode_frame(c) == encode_frame_prefix(c, 0).
// Requires: as encode_frame, and the whole frame's length fits an int.
std::vector<uint8_t> encode_frame_prefix(const RemotingCommand& command, uint64_t trailing_body_bytes);

// The frame of command's header with body as its body: for a sender whose
// body lives elsewhere (a producer keeps a message's body for its retries),
// so the body is copied once, into the frame, not first into the command.
// encode_frame_with_body(c, b) == encode_frame(c with body b).
// Requires: command.body is empty; as encode_frame.
std::vector<uint8_t> encode_frame_with_body(const RemotingCommand& command, std::span<const uint8_t> body);

// Completes a frame whose header the caller wrote: frame holds
// kFramePrefixBytes placeholder bytes, then a JSON header; body is appended
// and the two length fields are filled in. The same bytes as encode_frame_with_body
// of the command that header encodes; with trailing_body_bytes, the bytes
// of encode_frame_prefix (the body continues in file regions the caller
// sends). Requires: as encode_frame.
void finish_json_frame(std::vector<uint8_t>& frame, std::span<const uint8_t> body, uint64_t trailing_body_bytes = 0);

// Decodes exactly one whole frame, length field included; trailing or
// missing bytes are errors. The decoded command's serialize_type says which
// header it had, so make_response answers in kind.
Result<RemotingCommand> decode_frame(std::span<const uint8_t> frame,
                                     size_t max_frame_bytes = kDefaultMaxFrameBytes);

// Cuts a byte stream into commands. Feed what arrived, then call next()
// until it says it needs more bytes:
//   a command        -> one frame decoded and consumed;
//   nullopt          -> the next frame is incomplete (or nothing is buffered);
//   an error Status  -> Corruption naming the stream offset of the bad frame
//                       and why; sticky: close the connection.
// Lengths are checked as soon as their 8 bytes arrive, so an oversized or
// inconsistent frame is refused before its body is awaited. Memory: the
// decoder holds only bytes fed and not yet consumed (call next() until it
// needs more before feeding again), and its capacity grows with what arrives,
// never on the word of a length field: a lying length only makes it wait.
class FrameDecoder {
 public:
  explicit FrameDecoder(size_t max_frame_bytes = kDefaultMaxFrameBytes);

  // Bytes fed after an error are dropped.
  void feed(std::span<const uint8_t> bytes);
  Result<std::optional<RemotingCommand>> next();

  // feed(bytes), then next() until it needs more bytes, handing each
  // command to on_command (which returns whether to go on), with the same
  // commands, errors and stream_offset() but fewer copies: a frame wholly
  // inside bytes is decoded where it lies, and a frame begun in the buffer
  // whose header has arrived takes the rest of its body straight from
  // bytes. Only bytes no whole frame covers (and any on_command stopped
  // before) are copied in. Returns Ok, or the sticky error next() gives.
  // This is how connections read: most arrivals are whole frames.
  template <typename OnCommand>
  Status feed_and_drain(std::span<const uint8_t> bytes, OnCommand&& on_command) {
    // One command slot, filled in place: each layer returning its own
    // Result<optional<command>> cost a move of the command per frame.
    std::optional<RemotingCommand> command;
    while (true) {
      MQ_RETURN_IF_ERROR(next_from(bytes, command));
      if (!command) return Status::Ok();  // next_from buffered what was left
      const bool go_on = on_command(std::move(*command));
      give_back_byte_buffer(std::move(command->body));  // unless on_command took it
      command.reset();
      if (!go_on) {
        feed(bytes);
        return Status::Ok();
      }
    }
  }

  size_t buffered_bytes() const { return buffer_.size() - consumed_; }
  // Bytes of the stream consumed as whole frames so far.
  uint64_t stream_offset() const { return stream_offset_; }
  bool failed() const { return !error_.ok(); }
  size_t max_frame_bytes() const { return max_frame_bytes_; }

 private:
  // The next frame of the buffered bytes followed by bytes, into command,
  // taking from bytes (and advancing it past) what it used; command stays
  // empty, once every byte of bytes is buffered, when no whole frame is
  // there. Requires: command is empty.
  Status next_from(std::span<const uint8_t>& bytes, std::optional<RemotingCommand>& command);
  // The first frame of pending into command if it is whole, checked as
  // next() checks it; its length in frame_bytes. Requires: command is empty.
  Status take_frame(std::span<const uint8_t> pending, size_t& frame_bytes, std::optional<RemotingCommand>& command);
  // The frame begun in the buffer, its prefix and header there, its body's
  // rest the first bytes of bytes (advanced past them), into command.
  // Requires: buffered: its prefix, checked, and header; bytes: the rest.
  Status join_frame(std::span<const uint8_t>& bytes, std::optional<RemotingCommand>& command);
  // Makes the decoder fail for good with reason, placed in the stream.
  Status fail(const Status& reason);
  void compact();

  size_t max_frame_bytes_;
  std::vector<uint8_t> buffer_;
  size_t consumed_ = 0;  // bytes at the front of buffer_ already decoded
  uint64_t stream_offset_ = 0;
  Status error_;
  // The JSON headers this connection's peer sends, learned as they come:
  // most are read by comparing them with one of these.
  JsonHeaderShapes json_shapes_;
};

}  // namespace mqlab::remoting
