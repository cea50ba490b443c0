// Inputs the fuzz targets (fuzz/message_codec_fuzzer.cc,
// fuzz/commitlog_recovery_fuzzer.cc) found crashing the store, kept as plain
// tests so the fix stays fixed in every build.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "broker/store/message_codec.h"
#include "broker/store/test/store_sim_world.h"

namespace mqlab::store::testing::fuzz_regressions_test {
namespace {

std::vector<uint8_t> from_hex(std::string_view hex) {
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<uint8_t>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return bytes;
}

// message_codec_fuzzer: a record whose PHYSICALOFFSET is 0xC4C4C4C4C4C0C4C4
// (a damaged, negative offset) decodes without its CRC check, and
// create_offset_message_id, which a client runs on every pulled record to
// build its msgId, failed an assertion on it: a peer's bytes crashed the
// client. The id now carries the offset's bytes as stored.
TEST(StoreFuzzRegressions, NegativePhysicalOffsetGivesAnIdNotACrash) {
  const std::vector<uint8_t> bytes = from_hex(
      "00000067daa320a70000000000000031010000000100000000000000c4c4c4c4c4c0c4c4c4c4c4c464006800000000018b271a68"
      "000a0000410000000000000800000c2552f1f1f1f14554520000000000000100000000000c2552455452592567726f75700000c3"
      "0000000000000800000c2552455452592567726f75700000");
  Result<DecodedRecord> record = decode_record(bytes, {.check_crc = false});
  ASSERT_TRUE(record.ok()) << record.status().to_string();
  ASSERT_EQ(record->message.physical_offset.value(), -4268070197446785852);
  const std::string id = create_offset_message_id(record->message.store_host, record->message.physical_offset);
  ASSERT_EQ(id.size(), 32u);
  EXPECT_EQ(id.substr(16), "C4C4C4C4C4C0C4C4");
}

// commitlog_recovery_fuzzer (LeakSanitizer): a clean shutdown's completion
// chain held itself until a task posted after `done` ran; a process that
// exits right after shutdown (as mqbroker does, and as this world's
// shutdown() kills it) dropped that task and leaked the chain. Under ASan
// (make sanitize, the fuzz build) the leak fails this test at exit.
TEST(StoreFuzzRegressions, CleanShutdownThenExitLeaksNothing) {
  StoreSimWorld world(small_store_config());
  ASSERT_TRUE(world.start().ok());
  EXPECT_EQ(world.put(make_message("TopicA", 0, "m")).status, PutMessageStatus::PUT_OK);
  EXPECT_TRUE(world.shutdown().ok());
  ASSERT_TRUE(world.start().ok());
  EXPECT_TRUE(world.shutdown().ok());
}

}  // namespace
}  // namespace mqlab::store::testing::fuzz_regressions_test
