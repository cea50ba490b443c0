// libFuzzer target: the remoting frame decoder and its JSON header
// (broker/remoting/frame_codec.h, json_header.h). Bytes from the network must
// give a command or a Corruption, never a crash, and:
//   - decode_frame on the whole input and the stream FrameDecoder fed in
//     pieces agree about the first frame;
//   - the JSON header's fast path and general path agree field for field;
//   - a decoded command encodes to a frame that decodes again (what we read
//     we can answer with).
// Seeds: fuzz/corpus/remoting_frame/ (ali-ons request frames).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "broker/common/assert.h"
#include "broker/common/big_endian.h"
#include "broker/common/log.h"
#include "broker/remoting/frame_codec.h"
#include "broker/remoting/json_header.h"
#include "broker/remoting/remoting_command.h"

namespace {

using mqlab::Result;
using mqlab::remoting::RemotingCommand;

// Small enough that the limit checks are reached by the fuzzer, big enough
// for every seed frame.
constexpr size_t kMaxFrameBytes = 64 * 1024;

void check_json_paths_agree(std::span<const uint8_t> header) {
  Result<RemotingCommand> fast = mqlab::remoting::decode_json_header(header);
  Result<RemotingCommand> general = mqlab::remoting::decode_json_header_general(header);
  MQ_ASSERT(fast.ok() == general.ok());
  if (fast.ok()) MQ_ASSERT(*fast == *general);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mqlab::set_log_sink([](mqlab::LogLevel, std::string_view, std::string_view) {});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> input(data, size);

  // A JSON header as it would sit in a frame (after the 8-byte prefix).
  if (size >= mqlab::remoting::kFramePrefixBytes) {
    const uint32_t header_length = mqlab::get_u32_be(data + 4) & 0xFFFFFF;
    const size_t available = size - mqlab::remoting::kFramePrefixBytes;
    check_json_paths_agree(input.subspan(mqlab::remoting::kFramePrefixBytes,
                                         std::min<size_t>(header_length, available)));
  }

  Result<RemotingCommand> whole = mqlab::remoting::decode_frame(input, kMaxFrameBytes);
  if (whole.ok()) {
    const std::vector<uint8_t> again = mqlab::remoting::encode_frame(*whole);
    Result<RemotingCommand> redecoded = mqlab::remoting::decode_frame(again, again.size() + 4);
    MQ_ASSERT(redecoded.ok());
    MQ_ASSERT(redecoded->code == whole->code && redecoded->opaque == whole->opaque &&
              redecoded->body == whole->body);
  }

  // The same bytes as a stream, in pieces whose size the first byte picks.
  mqlab::remoting::FrameDecoder decoder(kMaxFrameBytes);
  const size_t piece = size == 0 ? 1 : 1 + data[0] % 64;
  std::optional<RemotingCommand> first;
  bool failed = false;
  for (size_t at = 0; at < size && !failed; at += piece) {
    decoder.feed(input.subspan(at, std::min(piece, size - at)));
    while (true) {
      Result<std::optional<RemotingCommand>> next = decoder.next();
      if (!next.ok()) {
        failed = true;
        MQ_ASSERT(decoder.failed());
        break;
      }
      if (!next->has_value()) break;
      if (!first) first = std::move(**next);
    }
  }
  // When the whole input is exactly one good frame, the stream saw it too.
  if (whole.ok()) {
    MQ_ASSERT(first.has_value());
    MQ_ASSERT(*first == *whole);
  }
  return 0;
}
