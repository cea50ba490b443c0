// The HA wire format (ha_protocol.h): golden bytes of both directions,
// frames fed byte by byte and split anywhere (a RapidCheck property), and
// garbage (negative offsets, bad body sizes) answered with an error, never a crash.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "broker/ha/ha_protocol.h"

namespace mqlab::ha::ha_protocol_test {
namespace {

std::vector<uint8_t> bytes_of(std::initializer_list<int> values) {
  std::vector<uint8_t> out;
  for (int v : values) out.push_back(static_cast<uint8_t>(v));
  return out;
}

std::vector<uint8_t> frame_bytes(int64_t offset, const std::vector<uint8_t>& body) {
  const auto header = encode_transfer_header(PhyOffset(offset), static_cast<int32_t>(body.size()));
  std::vector<uint8_t> out(header.begin(), header.end());
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

TEST(HAProtocol, OffsetReportGoldenBytes) {
  const auto report = encode_offset_report(PhyOffset(0x0102030405060708));
  EXPECT_EQ(std::vector<uint8_t>(report.begin(), report.end()), bytes_of({1, 2, 3, 4, 5, 6, 7, 8}));
  const auto zero = encode_offset_report(PhyOffset(0));
  EXPECT_EQ(std::vector<uint8_t>(zero.begin(), zero.end()), std::vector<uint8_t>(8, 0));
}

TEST(HAProtocol, TransferHeaderGoldenBytes) {
  // 1 GiB (the second segment's start), 32 KiB body.
  const auto header = encode_transfer_header(PhyOffset(1073741824), 32768);
  EXPECT_EQ(std::vector<uint8_t>(header.begin(), header.end()),
            bytes_of({0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0x80, 0}));
  const auto heartbeat = encode_transfer_header(PhyOffset(5), 0);
  EXPECT_EQ(std::vector<uint8_t>(heartbeat.begin(), heartbeat.end()), bytes_of({0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0}));
}

TEST(HAProtocol, ReportDecoderReturnsTheLastCompleteReport) {
  OffsetReportDecoder decoder;
  std::vector<uint8_t> stream;
  for (int64_t offset : {100, 200, 300}) {
    const auto report = encode_offset_report(PhyOffset(offset));
    stream.insert(stream.end(), report.begin(), report.end());
  }
  // 2.5 reports, then the rest: the first call sees 200, the second 300.
  auto first = decoder.feed(std::span<const uint8_t>(stream).first(20));
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(**first, PhyOffset(200));
  EXPECT_EQ(decoder.buffered(), 4u);
  auto second = decoder.feed(std::span<const uint8_t>(stream).subspan(20));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(**second, PhyOffset(300));
  auto nothing = decoder.feed({});
  ASSERT_TRUE(nothing.ok());
  EXPECT_FALSE(nothing->has_value());
}

TEST(HAProtocol, ReportDecoderByteByByte) {
  OffsetReportDecoder decoder;
  const auto report = encode_offset_report(PhyOffset(123456789));
  for (size_t i = 0; i < report.size(); ++i) {
    auto got = decoder.feed(std::span<const uint8_t>(&report[i], 1));
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(got->has_value(), i + 1 == report.size());
  }
}

TEST(HAProtocol, ReportDecoderRejectsANegativeOffset) {
  OffsetReportDecoder decoder;
  const std::vector<uint8_t> garbage(8, 0xFF);  // -1
  EXPECT_EQ(decoder.feed(garbage).status().code(), StatusCode::kInvalidArgument);
}

TEST(HAProtocol, FrameDecoderHeartbeatAndBody) {
  TransferFrameDecoder decoder(1024);
  std::vector<uint8_t> stream = frame_bytes(4096, {});
  const std::vector<uint8_t> body = {9, 8, 7};
  const std::vector<uint8_t> data = frame_bytes(4096, body);
  stream.insert(stream.end(), data.begin(), data.end());
  decoder.feed(stream);
  auto heartbeat = decoder.next();
  ASSERT_TRUE(heartbeat.ok() && heartbeat->has_value());
  EXPECT_EQ((*heartbeat)->offset, PhyOffset(4096));
  EXPECT_TRUE((*heartbeat)->body.empty());
  auto frame = decoder.next();
  ASSERT_TRUE(frame.ok() && frame->has_value());
  EXPECT_EQ((*frame)->offset, PhyOffset(4096));
  EXPECT_EQ((*frame)->body, body);
  auto none = decoder.next();
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  EXPECT_EQ(decoder.buffered(), 0u);
}

TEST(HAProtocol, FrameDecoderWaitsForPartialFrames) {
  TransferFrameDecoder decoder(1024);
  const std::vector<uint8_t> data = frame_bytes(77, std::vector<uint8_t>(100, 0xAB));
  for (size_t i = 0; i + 1 < data.size(); ++i) {
    decoder.feed(std::span<const uint8_t>(&data[i], 1));
    auto got = decoder.next();
    ASSERT_TRUE(got.ok());
    ASSERT_FALSE(got->has_value()) << "a frame after " << i + 1 << " of " << data.size() << " bytes";
  }
  decoder.feed(std::span<const uint8_t>(&data.back(), 1));
  auto got = decoder.next();
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->body.size(), 100u);
}

TEST(HAProtocol, FrameDecoderRejectsGarbage) {
  struct Case {
    const char* what;
    std::vector<uint8_t> bytes;
  };
  const std::vector<Case> cases = {
      {"negative offset", bytes_of({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0})},
      {"negative body size", bytes_of({0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0})},
      {"oversized body", bytes_of({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x04, 0x01})},  // 1025 > 1024
  };
  for (const Case& c : cases) {
    TransferFrameDecoder decoder(1024);
    decoder.feed(c.bytes);
    auto got = decoder.next();
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << c.what;
    // The stream stays failed: nothing after garbage can be trusted.
    decoder.feed(frame_bytes(0, {}));
    EXPECT_FALSE(decoder.next().ok()) << c.what;
  }
}

RC_GTEST_PROP(HAProtocol, AnySplitOfAStreamDecodesToTheSameFrames, ()) {
  const auto bodies = *rc::gen::container<std::vector<std::vector<uint8_t>>>(
      rc::gen::resize(64, rc::gen::arbitrary<std::vector<uint8_t>>()));
  std::vector<uint8_t> stream;
  int64_t offset = *rc::gen::inRange<int64_t>(0, int64_t{1} << 40);
  std::vector<TransferFrame> expected;
  for (const auto& body : bodies) {
    const std::vector<uint8_t> frame = frame_bytes(offset, body);
    stream.insert(stream.end(), frame.begin(), frame.end());
    expected.push_back(TransferFrame{PhyOffset(offset), body});
    offset += static_cast<int64_t>(body.size());
  }
  TransferFrameDecoder decoder(64);
  std::vector<TransferFrame> got;
  size_t at = 0;
  while (at < stream.size()) {
    const size_t take = *rc::gen::inRange<size_t>(1, stream.size() - at + 1);
    decoder.feed(std::span<const uint8_t>(stream).subspan(at, take));
    at += take;
    while (true) {
      auto frame = decoder.next();
      RC_ASSERT(frame.ok());
      if (!frame->has_value()) break;
      got.push_back(std::move(**frame));
    }
  }
  RC_ASSERT(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    RC_ASSERT(got[i].offset == expected[i].offset);
    RC_ASSERT(got[i].body == expected[i].body);
  }
  RC_ASSERT(decoder.buffered() == 0u);
}

RC_GTEST_PROP(HAProtocol, GarbageNeverCrashesTheDecoders, (const std::vector<uint8_t>& garbage)) {
  TransferFrameDecoder frames(1024);
  frames.feed(garbage);
  for (int i = 0; i < 1000; ++i) {
    auto frame = frames.next();
    if (!frame.ok() || !frame->has_value()) break;
  }
  OffsetReportDecoder reports;
  (void)reports.feed(garbage);
}

}  // namespace
}  // namespace mqlab::ha::ha_protocol_test
