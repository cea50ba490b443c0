// Helpers shared by the remoting tests: frames built around a header given as
// text, the frames a real ali-ons client sent (shared/testdata), and draining
// a FrameDecoder to see what it makes of a stream.
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "broker/common/big_endian.h"
#include "broker/remoting/frame_codec.h"

namespace mqlab::remoting::test_support {

using Bytes = std::vector<uint8_t>;

inline Bytes to_bytes(std::string_view text) { return Bytes(text.begin(), text.end()); }

// A frame around a header given as text, lengths computed, type byte as given.
inline Bytes frame_with_header(std::string_view header, std::string_view body = "", uint8_t serialize_type = 0) {
  Bytes frame(kFramePrefixBytes);
  put_u32_be(frame.data(), static_cast<uint32_t>(4 + header.size() + body.size()));
  put_u32_be(frame.data() + 4, (uint32_t{serialize_type} << 24) | static_cast<uint32_t>(header.size()));
  frame.insert(frame.end(), header.begin(), header.end());
  frame.insert(frame.end(), body.begin(), body.end());
  return frame;
}

inline const char* const kAliOnsFramesPath = MQLAB_SOURCE_DIR "/../shared/testdata/ali-ons-request-frames.json";

inline Bytes from_hex(const std::string& hex) {
  Bytes bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return bytes;
}

// The captured frames as (code from the file, bytes); empty when absent.
inline std::vector<std::pair<int32_t, Bytes>> load_ali_ons_frames() {
  std::ifstream file(kAliOnsFramesPath);
  if (!file) return {};
  const nlohmann::json root = nlohmann::json::parse(file);
  std::vector<std::pair<int32_t, Bytes>> frames;
  for (const auto& frame : root.at("frames")) {
    frames.emplace_back(frame.at("code").get<int32_t>(), from_hex(frame.at("frame_hex").get<std::string>()));
  }
  return frames;
}

// What a decoder made of the bytes fed so far: the commands, then why it
// stopped (ok: it needs more bytes; otherwise its error).
struct Drained {
  std::vector<RemotingCommand> commands;
  Status status;
};

inline Drained drain(FrameDecoder& decoder) {
  Drained out;
  while (true) {
    Result<std::optional<RemotingCommand>> next = decoder.next();
    if (!next.ok()) {
      out.status = next.status();
      return out;
    }
    if (!next->has_value()) return out;
    out.commands.push_back(std::move(**next));
  }
}

}  // namespace mqlab::remoting::test_support
