// The HA wire protocol between a master and its slaves (RocketMQ 4.x
// HAService / HAConnection / HAClient): plain TCP on the master's HA port
// (listenPort + 1), no remoting framing. All integers big-endian.
//
//   slave -> master: a stream of offset reports, 8 bytes each
//     | field        | bytes | meaning                                       |
//     | maxPhyOffset | 8     | int64: the slave's CommitLog max offset       |
//     The first report is the requested start offset; later ones are acks.
//     RocketMQ's master reads only the last complete report in its buffer;
//     so do we (earlier ones are superseded).
//
//   master -> slave: a stream of transfer frames
//     | field     | bytes    | meaning                                        |
//     | phyOffset | 8        | int64: CommitLog offset of the first body byte |
//     | bodySize  | 4        | int32: body length; 0 = heartbeat              |
//     | body      | bodySize | raw CommitLog bytes (not record aligned)       |
//
// Both decoders are incremental (bytes arrive split anywhere) and treat
// garbage as a value: a negative offset, a negative or oversized bodySize is
// an error Status and the owner closes the connection. Never an assertion:
// these bytes come from the network.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "broker/common/status.h"
#include "broker/common/types.h"

namespace mqlab::ha {

inline constexpr size_t kOffsetReportSize = 8;
inline constexpr size_t kTransferHeaderSize = 8 + 4;
static_assert(kTransferHeaderSize == 12);  // [int64 phyOffset][int32 bodySize]

std::array<uint8_t, kOffsetReportSize> encode_offset_report(PhyOffset offset);
std::array<uint8_t, kTransferHeaderSize> encode_transfer_header(PhyOffset offset, int32_t body_size);

// Master side: the slave's reports.
class OffsetReportDecoder {
 public:
  // Consumes bytes; a partial report stays buffered for the next call.
  // Returns the last complete report the bytes finished (nullopt if none),
  // or InvalidArgument for a negative offset.
  Result<std::optional<PhyOffset>> feed(std::span<const uint8_t> bytes);
  size_t buffered() const { return partial_size_; }

 private:
  std::array<uint8_t, kOffsetReportSize> partial_{};
  size_t partial_size_ = 0;
};

struct TransferFrame {
  PhyOffset offset;
  std::vector<uint8_t> body;  // empty: a heartbeat
};

// Slave side: the master's frames.
class TransferFrameDecoder {
 public:
  // max_body_bytes: the largest bodySize accepted (the master cuts chunks at
  // haTransferBatchSize; a larger one is garbage or a different protocol).
  explicit TransferFrameDecoder(int32_t max_body_bytes);

  // Buffers bytes. Then call next() until it returns nullopt.
  void feed(std::span<const uint8_t> bytes);
  // The next complete frame, nullopt when more bytes are needed, or
  // InvalidArgument naming the bad field (the stream is then unusable).
  Result<std::optional<TransferFrame>> next();
  size_t buffered() const { return buffer_.size() - consumed_; }

 private:
  int32_t max_body_bytes_;
  std::vector<uint8_t> buffer_;
  size_t consumed_ = 0;  // bytes of buffer_ already returned as frames
  bool failed_ = false;
};

}  // namespace mqlab::ha
