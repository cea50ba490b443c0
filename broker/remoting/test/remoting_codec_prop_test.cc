// Invariants of the frame codec over random commands and random damage:
// encode -> decode is the identity in both header types; a stream cut at any
// byte decodes the same frames; and random, truncated or mutated bytes never
// crash the decoder nor pass as anything but what the bytes say.
//
// What a single damaged byte can do, by where it lands (asserted below):
//   totalLength      anything but a crash: the frame boundary moved, so the
//                    decoder may wait, refuse, or cut a different frame.
//   header length    the frame is complete, so it is refused or decodes.
//   header           refused, or decodes with the original body (the lengths
//                    still frame it); a JSON header may even decode to the
//                    original (a byte of an ignored key), so nothing more.
//   body             decodes to the original with that body byte changed:
//                    the body carries no checksum at this layer.
// Whatever decodes is a fixed point: encoding it and decoding again gives it
// back, so every accepted frame is representable and nothing is half-read.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "broker/remoting/frame_codec.h"
#include "broker/remoting/test/remoting_test_util.h"

namespace mqlab::remoting::remoting_codec_prop_test {
namespace {

using test_support::Bytes;
using test_support::Drained;
using test_support::drain;
using test_support::frame_with_header;

// Small enough that random lengths often fit, so random bytes reach the
// header parsers instead of stopping at the length check.
constexpr size_t kTestMaxFrameBytes = 4096;

const std::vector<std::string> kLanguages = {"JAVA", "CPP",  "DOTNET", "PYTHON", "DELPHI", "ERLANG", "RUBY",
                                             "OTHER", "HTTP", "GO",     "PHP",    "OMS",    "RUST",   "NODE_JS"};

// ---- generators ------------------------------------------------------------------

// Bytes from a generated seed: drawing each byte through RapidCheck would
// dominate the run time, and shrinking the length is enough.
Bytes gen_bytes(size_t max_length) {
  const auto length = *rc::gen::inRange<size_t>(0, max_length + 1);
  uint64_t state = *rc::gen::arbitrary<uint64_t>();
  Bytes bytes(length);
  for (uint8_t& b : bytes) {
    state += 0x9E3779B97F4A7C15;  // splitmix64
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
    b = static_cast<uint8_t>(z ^ (z >> 31));
  }
  return bytes;
}

std::string gen_raw_text(size_t max_length) {
  const Bytes bytes = gen_bytes(max_length);
  return std::string(bytes.begin(), bytes.end());
}

// Valid UTF-8 (what a JSON header can carry), rich in characters JSON must
// escape and multi-byte sequences.
std::string gen_utf8_text(size_t max_tokens) {
  static const std::vector<std::string> kTokens = {"a", "Z", "0", " ", "\"", "\\", "/", "{", "}", ":", ",",
                                                   "\x01", "\x1f", "\x7f", "\t", "\xc3\xa9", "\xe4\xb8\xad",
                                                   "\xf0\x9f\x98\x80", "null", "1e3", ""};
  const auto count = *rc::gen::inRange<size_t>(0, max_tokens + 1);
  std::string text;
  for (const std::string& token : *rc::gen::container<std::vector<std::string>>(count, rc::gen::elementOf(kTokens))) {
    text += token;
  }
  return text;
}

int32_t gen_int16() { return *rc::gen::inRange<int32_t>(-32768, 32768); }

RemotingCommand gen_json_command(size_t max_tokens = 12, size_t max_body = 256) {
  RemotingCommand command;
  command.serialize_type = SerializeType::JSON;
  command.code = *rc::gen::arbitrary<int32_t>();
  command.language = *rc::gen::element(0, 1) == 0 ? *rc::gen::elementOf(kLanguages) : gen_utf8_text(4);
  command.version = *rc::gen::arbitrary<int32_t>();
  command.opaque = *rc::gen::arbitrary<int32_t>();
  command.flag = *rc::gen::arbitrary<int32_t>();
  command.remark = gen_utf8_text(max_tokens);
  const auto fields = *rc::gen::inRange(0, 6);
  for (int i = 0; i < fields; ++i) command.ext_fields.insert_or_assign(gen_utf8_text(3), gen_utf8_text(max_tokens));
  command.body = gen_bytes(max_body);
  return command;
}

RemotingCommand gen_rocketmq_command(size_t max_text = 24, size_t max_body = 256) {
  RemotingCommand command;
  command.serialize_type = SerializeType::ROCKETMQ;
  command.code = gen_int16();
  command.language = *rc::gen::elementOf(kLanguages);
  command.version = gen_int16();
  command.opaque = *rc::gen::arbitrary<int32_t>();
  command.flag = *rc::gen::arbitrary<int32_t>();
  command.remark = gen_raw_text(max_text);
  const auto fields = *rc::gen::inRange(0, 6);
  for (int i = 0; i < fields; ++i) command.ext_fields.insert_or_assign(gen_raw_text(8), gen_raw_text(max_text));
  command.body = gen_bytes(max_body);
  return command;
}

RemotingCommand gen_command(size_t max_text = 12, size_t max_body = 256) {
  return *rc::gen::element(0, 1) == 0 ? gen_json_command(max_text, max_body)
                                      : gen_rocketmq_command(max_text, max_body);
}

// ---- helpers -----------------------------------------------------------------------

bool is_fixed_point(const RemotingCommand& command) {
  Result<RemotingCommand> again = decode_frame(encode_frame(command));
  return again.ok() && *again == command;
}

size_t header_length_of(const Bytes& frame) { return get_u32_be(frame.data() + 4) & 0xFFFFFF; }

Drained decode_stream(const Bytes& bytes, size_t max_frame_bytes = kDefaultMaxFrameBytes) {
  FrameDecoder decoder(max_frame_bytes);
  decoder.feed(bytes);
  return drain(decoder);
}

// ---- properties ----------------------------------------------------------------------

RC_GTEST_PROP(FrameCodec, JsonEncodeDecodeIsIdentity, ()) {
  const RemotingCommand command = gen_json_command();
  const Bytes frame = encode_frame(command);
  RC_ASSERT(frame[4] == 0);  // JSON: type byte 0, as ali-ons needs
  Result<RemotingCommand> decoded = decode_frame(frame);
  RC_ASSERT(decoded.ok());
  RC_ASSERT(*decoded == command);
}

RC_GTEST_PROP(FrameCodec, RocketMqEncodeDecodeIsIdentity, ()) {
  const RemotingCommand command = gen_rocketmq_command();
  const Bytes frame = encode_frame(command);
  RC_ASSERT(frame[4] == 1);
  Result<RemotingCommand> decoded = decode_frame(frame);
  RC_ASSERT(decoded.ok());
  RC_ASSERT(*decoded == command);
}

RC_GTEST_PROP(FrameCodec, ExtFieldNumbersAndBooleansAreStringified, ()) {
  nlohmann::json ext = nlohmann::json::object();
  ExtFields expected;
  const auto count = *rc::gen::inRange(0, 8);
  for (int i = 0; i < count; ++i) {
    const std::string key = "k" + std::to_string(i);
    switch (*rc::gen::inRange(0, 4)) {
      case 0: {
        const auto v = *rc::gen::arbitrary<int64_t>();
        ext[key] = v, expected.insert_or_assign(key, std::to_string(v));
        break;
      }
      case 1: {
        const auto v = *rc::gen::arbitrary<uint64_t>();
        ext[key] = v, expected.insert_or_assign(key, std::to_string(v));
        break;
      }
      case 2: {
        const auto v = *rc::gen::arbitrary<bool>();
        ext[key] = v, expected.insert_or_assign(key, v ? "true" : "false");
        break;
      }
      default: {
        // An integral double: what JavaScript may print as 4 or as 4.0.
        const auto v = *rc::gen::inRange<int64_t>(-(int64_t{1} << 53), (int64_t{1} << 53) + 1);
        ext[key] = static_cast<double>(v), expected.insert_or_assign(key, std::to_string(v));
        break;
      }
    }
  }
  const std::string header = nlohmann::json{{"code", 310}, {"extFields", ext}}.dump();
  Result<RemotingCommand> decoded = decode_frame(frame_with_header(header));
  RC_ASSERT(decoded.ok());
  RC_ASSERT(decoded->ext_fields == expected);
}

RC_GTEST_PROP(FrameDecoder, RandomBytesNeverCrashAndYieldOnlyFixedPoints, ()) {
  // Pure noise; noise behind plausible lengths; JSON-ish noise behind them.
  static const std::vector<std::string> kJsonTokens = {"{", "}", "[", "]", ":", ",", "\"code\"", "\"extFields\"",
                                                       "\"opaque\"", "\"a\"", "1", "-7", "1.5", "true", "null",
                                                       "\"", "\\", " ", "\"remark\"", "\"\xc3\xa9\""};
  Bytes bytes;
  switch (*rc::gen::inRange(0, 3)) {
    case 0: bytes = gen_bytes(600); break;
    case 1: {
      const Bytes header = gen_bytes(80);
      bytes = frame_with_header(std::string(header.begin(), header.end()), "", *rc::gen::element(0, 1));
      break;
    }
    default: {
      const auto count = *rc::gen::inRange<size_t>(0, 30);
      std::string header;
      for (const std::string& token :
           *rc::gen::container<std::vector<std::string>>(count, rc::gen::elementOf(kJsonTokens))) {
        header += token;
      }
      bytes = frame_with_header(header, "body");
      break;
    }
  }
  const Bytes tail = gen_bytes(64);
  bytes.insert(bytes.end(), tail.begin(), tail.end());

  const Drained drained = decode_stream(bytes, kTestMaxFrameBytes);
  for (const RemotingCommand& command : drained.commands) RC_ASSERT(is_fixed_point(command));
  if (!drained.status.ok()) RC_ASSERT(drained.status.code() == StatusCode::kCorruption);
  (void)decode_frame(bytes, kTestMaxFrameBytes);  // must merely return
}

RC_GTEST_PROP(FrameDecoder, ATruncatedFrameOnlyNeedsMoreBytes, ()) {
  const Bytes frame = encode_frame(gen_command());
  const auto cut = *rc::gen::inRange<size_t>(0, frame.size());
  const Bytes prefix(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(cut));
  FrameDecoder decoder;
  decoder.feed(prefix);
  Result<std::optional<RemotingCommand>> next = decoder.next();
  RC_ASSERT(next.ok());
  RC_ASSERT(!next->has_value());
  RC_ASSERT(decoder.buffered_bytes() == cut);
  RC_ASSERT(!decode_frame(prefix).ok());
}

// feed_and_drain decodes whole frames where they lie and completes a begun
// frame from the next arrival; it must give what feed and next give, piece
// by piece: the same commands, error, stream offset and buffered bytes,
// also when its caller stops it after some command (a closed connection)
// and later carries on.
RC_GTEST_PROP(FrameDecoder, FeedAndDrainEqualsFeedThenNext, ()) {
  Bytes stream;
  const auto frames = *rc::gen::inRange(1, 6);
  for (int i = 0; i < frames; ++i) {
    const Bytes frame = encode_frame(gen_command(8, 300));
    stream.insert(stream.end(), frame.begin(), frame.end());
  }
  if (*rc::gen::inRange(0, 4) == 0) {  // now and then damaged, or followed by noise
    const auto at = *rc::gen::inRange<size_t>(0, stream.size());
    stream[at] ^= static_cast<uint8_t>(*rc::gen::inRange(1, 256));
  }
  if (*rc::gen::inRange(0, 4) == 0) {
    const Bytes tail = gen_bytes(40);
    stream.insert(stream.end(), tail.begin(), tail.end());
  }
  FrameDecoder by_next(kTestMaxFrameBytes);
  FrameDecoder by_drain(kTestMaxFrameBytes);
  std::vector<RemotingCommand> expected;
  std::vector<RemotingCommand> decoded;
  Status expected_status;
  Status decoded_status;
  size_t at = 0;
  while (at < stream.size()) {
    // Pieces of every size: single bytes, a prefix, whole frames, all of it.
    const auto piece = std::min(stream.size() - at, *rc::gen::element<size_t>(1, 3, 8, 9, 50, 200, 1000, 5000));
    const std::span<const uint8_t> bytes(stream.data() + at, piece);
    at += piece;
    by_next.feed(bytes);
    Drained step = drain(by_next);
    for (RemotingCommand& command : step.commands) expected.push_back(std::move(command));
    expected_status = step.status;
    // Stopped after some command, then carried on by an empty arrival.
    const auto stop_after = *rc::gen::inRange(0, 4);
    int taken = 0;
    decoded_status = by_drain.feed_and_drain(bytes, [&](RemotingCommand command) {
      decoded.push_back(std::move(command));
      return ++taken != stop_after;
    });
    if (decoded_status.ok() && taken == stop_after) {
      decoded_status = by_drain.feed_and_drain({}, [&](RemotingCommand command) {
        decoded.push_back(std::move(command));
        return true;
      });
    }
    RC_ASSERT(decoded.size() == expected.size());
    RC_ASSERT(decoded_status.to_string() == expected_status.to_string());
    RC_ASSERT(by_drain.stream_offset() == by_next.stream_offset());
    RC_ASSERT(by_drain.buffered_bytes() == by_next.buffered_bytes());
    RC_ASSERT(by_drain.failed() == by_next.failed());
  }
  RC_ASSERT(decoded == expected);
}

RC_GTEST_PROP(FrameDecoder, AMutatedByteNeverPassesForAnotherFrame, ()) {
  const RemotingCommand original = gen_command(8, 64);
  const Bytes pristine = encode_frame(original);
  const auto at = *rc::gen::inRange<size_t>(0, pristine.size());
  const auto mask = static_cast<uint8_t>(*rc::gen::inRange(1, 256));
  Bytes frame = pristine;
  frame[at] ^= mask;

  const Drained drained = decode_stream(frame, kTestMaxFrameBytes);
  for (const RemotingCommand& command : drained.commands) RC_ASSERT(is_fixed_point(command));
  const size_t body_start = kFramePrefixBytes + header_length_of(pristine);
  if (at >= body_start) {
    RemotingCommand expected = original;
    expected.body[at - body_start] ^= mask;
    RC_ASSERT(drained.status.ok());
    RC_ASSERT(drained.commands.size() == 1u);
    RC_ASSERT(drained.commands[0] == expected);
  } else if (at >= kFramePrefixBytes) {
    // The lengths still frame it: refused, or decoded around the same body.
    RC_ASSERT(drained.commands.size() + (drained.status.ok() ? 0 : 1) == 1u);
    if (!drained.commands.empty()) RC_ASSERT(drained.commands[0].body == original.body);
  } else if (at >= 4) {
    RC_ASSERT(drained.commands.size() + (drained.status.ok() ? 0 : 1) == 1u);
  }
}

RC_GTEST_PROP(FrameDecoder, AStreamSplitAtEveryByteDecodesTheSameFrames, ()) {
  const auto count = *rc::gen::inRange(1, 4);
  std::vector<RemotingCommand> commands;
  Bytes stream;
  for (int i = 0; i < count; ++i) {
    commands.push_back(gen_command(4, 24));
    const Bytes frame = encode_frame(commands.back());
    stream.insert(stream.end(), frame.begin(), frame.end());
  }
  const std::span<const uint8_t> all(stream);
  for (size_t split = 0; split <= stream.size(); ++split) {
    FrameDecoder decoder;
    decoder.feed(all.first(split));
    Drained first = drain(decoder);
    decoder.feed(all.subspan(split));
    Drained second = drain(decoder);
    RC_ASSERT(first.status.ok());
    RC_ASSERT(second.status.ok());
    first.commands.insert(first.commands.end(), second.commands.begin(), second.commands.end());
    RC_ASSERT(first.commands == commands);
    RC_ASSERT(decoder.buffered_bytes() == 0u);
    RC_ASSERT(decoder.stream_offset() == stream.size());
  }
}

RC_GTEST_PROP(FrameDecoder, ByteByByteDecodesTheSameFrames, ()) {
  const auto count = *rc::gen::inRange(1, 6);
  std::vector<RemotingCommand> commands;
  Bytes stream;
  for (int i = 0; i < count; ++i) {
    commands.push_back(gen_command());
    const Bytes frame = encode_frame(commands.back());
    stream.insert(stream.end(), frame.begin(), frame.end());
  }
  FrameDecoder decoder;
  std::vector<RemotingCommand> decoded;
  for (uint8_t byte : stream) {
    decoder.feed(std::span<const uint8_t>(&byte, 1));
    Drained step = drain(decoder);
    RC_ASSERT(step.status.ok());
    decoded.insert(decoded.end(), step.commands.begin(), step.commands.end());
  }
  RC_ASSERT(decoded == commands);
}

}  // namespace
}  // namespace mqlab::remoting::remoting_codec_prop_test
