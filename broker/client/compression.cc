#include "broker/client/compression.h"

#include <zlib.h>

#include <string>

namespace mqlab::client {

std::vector<uint8_t> deflate_body(std::span<const uint8_t> body, int level) {
  MQ_ASSERT(level >= 0 && level <= 9);
  uLongf bound = compressBound(static_cast<uLong>(body.size()));
  std::vector<uint8_t> out(bound);
  const int rc = compress2(out.data(), &bound, body.data(), static_cast<uLong>(body.size()), level);
  MQ_ASSERT_MSG(rc == Z_OK, "compress2 failed with " + std::to_string(rc));  // only memory can fail it
  out.resize(bound);
  return out;
}

Result<std::vector<uint8_t>> inflate_body(std::span<const uint8_t> compressed, size_t max_bytes) {
  z_stream stream{};
  if (inflateInit(&stream) != Z_OK) return Status::Corruption("inflate: cannot initialise zlib");
  stream.next_in = const_cast<Bytef*>(compressed.data());  // zlib's API is not const-correct
  stream.avail_in = static_cast<uInt>(compressed.size());
  std::vector<uint8_t> out;
  uint8_t chunk[16 * 1024];
  int rc = Z_OK;
  while (rc == Z_OK) {  // Z_BUF_ERROR: the input ended before the stream did
    stream.next_out = chunk;
    stream.avail_out = sizeof(chunk);
    rc = inflate(&stream, Z_NO_FLUSH);
    const size_t produced = sizeof(chunk) - stream.avail_out;
    if (out.size() + produced > max_bytes) {
      inflateEnd(&stream);
      return Status::Corruption("inflate: body expands beyond " + std::to_string(max_bytes) + " bytes");
    }
    out.insert(out.end(), chunk, chunk + produced);
  }
  const bool complete = rc == Z_STREAM_END && stream.avail_in == 0;
  inflateEnd(&stream);
  if (!complete) return Status::Corruption("inflate: not one complete zlib stream (zlib code " + std::to_string(rc) + ")");
  return out;
}

}  // namespace mqlab::client
