// libFuzzer target: the HA protocol decoders (broker/ha/ha_protocol.h), both
// directions. Bytes from the peer, split anywhere, must give values or an
// error Status, never crash, and:
//   - the slave's offset reports decode the same whether fed at once or in
//     pieces (the last complete report wins);
//   - the master's transfer frames decode the same at once or in pieces,
//     never exceed max_body_bytes, and never report a negative offset.
// The first input byte picks the piece size.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "broker/common/assert.h"
#include "broker/common/log.h"
#include "broker/ha/ha_protocol.h"

namespace {

using mqlab::PhyOffset;
using mqlab::Result;
using mqlab::ha::TransferFrame;

constexpr int32_t kMaxBodyBytes = 4096;

struct ReportOutcome {
  std::optional<PhyOffset> last;
  bool failed = false;
};

ReportOutcome feed_reports(std::span<const uint8_t> bytes, size_t piece) {
  mqlab::ha::OffsetReportDecoder decoder;
  ReportOutcome outcome;
  for (size_t at = 0; at < bytes.size(); at += piece) {
    Result<std::optional<PhyOffset>> got = decoder.feed(bytes.subspan(at, std::min(piece, bytes.size() - at)));
    if (!got.ok()) {
      outcome.failed = true;
      return outcome;
    }
    if (got->has_value()) {
      MQ_ASSERT(got->value().value() >= 0);
      outcome.last = *got;
    }
    MQ_ASSERT(decoder.buffered() < mqlab::ha::kOffsetReportSize);
  }
  return outcome;
}

struct FrameOutcome {
  std::vector<TransferFrame> frames;
  bool failed = false;
};

FrameOutcome feed_frames(std::span<const uint8_t> bytes, size_t piece) {
  mqlab::ha::TransferFrameDecoder decoder(kMaxBodyBytes);
  FrameOutcome outcome;
  for (size_t at = 0; at < bytes.size() && !outcome.failed; at += piece) {
    decoder.feed(bytes.subspan(at, std::min(piece, bytes.size() - at)));
    while (true) {
      Result<std::optional<TransferFrame>> next = decoder.next();
      if (!next.ok()) {
        outcome.failed = true;
        break;
      }
      if (!next->has_value()) break;
      MQ_ASSERT((*next)->offset.value() >= 0);
      MQ_ASSERT((*next)->body.size() <= static_cast<size_t>(kMaxBodyBytes));
      outcome.frames.push_back(std::move(**next));
    }
  }
  return outcome;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mqlab::set_log_sink([](mqlab::LogLevel, std::string_view, std::string_view) {});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = 1 + data[0] % 32;
  const std::span<const uint8_t> bytes(data + 1, size - 1);

  const ReportOutcome whole_reports = feed_reports(bytes, std::max<size_t>(bytes.size(), 1));
  const ReportOutcome split_reports = feed_reports(bytes, piece);
  // A negative report fails the feed it arrives in; both ways see it.
  MQ_ASSERT(whole_reports.failed == split_reports.failed);
  if (!whole_reports.failed) MQ_ASSERT(whole_reports.last == split_reports.last);

  const FrameOutcome whole_frames = feed_frames(bytes, std::max<size_t>(bytes.size(), 1));
  const FrameOutcome split_frames = feed_frames(bytes, piece);
  MQ_ASSERT(whole_frames.failed == split_frames.failed);
  MQ_ASSERT(whole_frames.frames.size() == split_frames.frames.size());
  for (size_t i = 0; i < whole_frames.frames.size(); ++i) {
    MQ_ASSERT(whole_frames.frames[i].offset == split_frames.frames[i].offset);
    MQ_ASSERT(whole_frames.frames[i].body == split_frames.frames[i].body);
  }
  return 0;
}
