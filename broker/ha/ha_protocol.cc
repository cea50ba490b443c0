#include "broker/ha/ha_protocol.h"

#include <algorithm>
#include <string>

#include "broker/common/assert.h"
#include "broker/common/big_endian.h"

namespace mqlab::ha {

std::array<uint8_t, kOffsetReportSize> encode_offset_report(PhyOffset offset) {
  MQ_ASSERT(offset.value() >= 0);
  std::array<uint8_t, kOffsetReportSize> out{};
  put_u64_be(out.data(), static_cast<uint64_t>(offset.value()));
  return out;
}

std::array<uint8_t, kTransferHeaderSize> encode_transfer_header(PhyOffset offset, int32_t body_size) {
  MQ_ASSERT(offset.value() >= 0);
  MQ_ASSERT(body_size >= 0);
  std::array<uint8_t, kTransferHeaderSize> out{};
  put_u64_be(out.data(), static_cast<uint64_t>(offset.value()));
  put_u32_be(out.data() + 8, static_cast<uint32_t>(body_size));
  return out;
}

Result<std::optional<PhyOffset>> OffsetReportDecoder::feed(std::span<const uint8_t> bytes) {
  std::optional<PhyOffset> latest;
  while (!bytes.empty()) {
    const size_t take = std::min(kOffsetReportSize - partial_size_, bytes.size());
    std::copy_n(bytes.begin(), take, partial_.begin() + static_cast<std::ptrdiff_t>(partial_size_));
    partial_size_ += take;
    bytes = bytes.subspan(take);
    if (partial_size_ < kOffsetReportSize) break;
    partial_size_ = 0;
    const int64_t offset = get_i64_be(partial_.data());
    if (offset < 0) {
      return Status::InvalidArgument("HA offset report " + std::to_string(offset) + " is negative");
    }
    latest = PhyOffset(offset);
  }
  MQ_ASSERT(partial_size_ < kOffsetReportSize);
  return latest;
}

TransferFrameDecoder::TransferFrameDecoder(int32_t max_body_bytes) : max_body_bytes_(max_body_bytes) {
  MQ_ASSERT(max_body_bytes_ > 0);
}

void TransferFrameDecoder::feed(std::span<const uint8_t> bytes) {
  // Compact before growing, so the buffer holds at most one frame plus a bit.
  if (consumed_ > 0 && consumed_ == buffer_.size()) {
    buffer_.clear();
    consumed_ = 0;
  } else if (consumed_ > buffer_.size() / 2) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(consumed_));
    consumed_ = 0;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

Result<std::optional<TransferFrame>> TransferFrameDecoder::next() {
  if (failed_) return Status::InvalidArgument("HA transfer stream already failed to decode");
  MQ_ASSERT(consumed_ <= buffer_.size());
  const size_t available = buffer_.size() - consumed_;
  if (available < kTransferHeaderSize) return std::optional<TransferFrame>();
  const uint8_t* head = buffer_.data() + consumed_;
  const int64_t offset = get_i64_be(head);
  const int32_t body_size = get_i32_be(head + 8);
  if (offset < 0) {
    failed_ = true;
    return Status::InvalidArgument("HA transfer header: phyOffset " + std::to_string(offset) + " is negative");
  }
  if (body_size < 0 || body_size > max_body_bytes_) {
    failed_ = true;
    return Status::InvalidArgument("HA transfer header: bodySize " + std::to_string(body_size) +
                                   " outside [0, " + std::to_string(max_body_bytes_) + "]");
  }
  if (available < kTransferHeaderSize + static_cast<size_t>(body_size)) return std::optional<TransferFrame>();
  TransferFrame frame;
  frame.offset = PhyOffset(offset);
  frame.body.assign(head + kTransferHeaderSize, head + kTransferHeaderSize + body_size);
  consumed_ += kTransferHeaderSize + static_cast<size_t>(body_size);
  MQ_ASSERT(consumed_ <= buffer_.size());
  return std::optional<TransferFrame>(std::move(frame));
}

}  // namespace mqlab::ha
