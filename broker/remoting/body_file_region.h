// BodyFileRegion: a stretch of a file that a response body continues with,
// sent by the transport straight from the file (sendfile(2) on real TCP) so
// the bytes never pass through the broker's memory. RocketMQ's pull path does
// the same with Netty FileRegions (ManyMessageTransfer over the
// SelectMappedBufferResults of a GetMessageResult).
//
// A response sent with regions is one frame: its prefix (lengths, header and
// the in-memory head of the body) is encoded with a totalLength that counts
// every region, then the regions follow in order (ResponseChannel::reply with
// regions, remoting_server.h). The peer cannot tell it from a copied body.
//
// Invariant kept by the holder: the shared_ptr keeps the file open, so a
// region stays readable after retention removed its segment's name (the
// kernel frees an unlinked file's blocks only when its last descriptor goes).
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "broker/common/assert.h"
#include "broker/env/env.h"

namespace mqlab::remoting {

struct BodyFileRegion {
  std::shared_ptr<env::File> file;
  uint64_t offset = 0;  // inside the file
  uint32_t length = 0;  // > 0
};

// The bytes the regions add to a frame.
inline uint64_t body_file_region_bytes(std::span<const BodyFileRegion> regions) {
  uint64_t total = 0;
  for (const BodyFileRegion& region : regions) {
    MQ_ASSERT(region.file != nullptr);
    MQ_ASSERT(region.length > 0);
    total += region.length;
  }
  return total;
}

}  // namespace mqlab::remoting
