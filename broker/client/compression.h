// Body compression: zlib streams, as java.util.zip.Deflater/Inflater write and
// read them (header and Adler-32 included). A producer compresses a body over
// compressMsgBodyOverHowmuch and sets sysFlag bit 0x1; a consumer inflates a
// pulled body whose record has that bit (RocketMQ's UtilAll.compress and
// uncompress; ali-ons uses zlib.deflateSync/inflateSync, the same format).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "broker/common/status.h"

namespace mqlab::client {

// Java's default compressMsgBodyLevel.
inline constexpr int kDefaultCompressLevel = 5;

std::vector<uint8_t> deflate_body(std::span<const uint8_t> body, int level = kDefaultCompressLevel);

// Corruption when the bytes are not one complete zlib stream, or when the
// output would exceed max_bytes (a hostile stream can expand 1000-fold).
Result<std::vector<uint8_t>> inflate_body(std::span<const uint8_t> compressed, size_t max_bytes);

}  // namespace mqlab::client
