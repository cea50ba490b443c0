// libFuzzer target: the stored-message decoder (broker/store/message_codec.h).
// Bytes read back from a CommitLog must decode to a record or a Corruption,
// never crash, and:
//   - a decoded message's spans lie inside the bytes and its size is the
//     TOTALSIZE it claims;
//   - decoding without the CRC check accepts whatever decoding with it does;
//   - the input walked record by record, as recovery walks a segment, ends.
// Seeds: fuzz/corpus/message_codec/ (records from encode_message).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "broker/common/assert.h"
#include "broker/common/log.h"
#include "broker/store/message_codec.h"

namespace {

using mqlab::Result;
using mqlab::store::DecodedRecord;
using mqlab::store::RecordKind;

bool inside(std::span<const uint8_t> whole, const void* begin, size_t length) {
  const auto* first = static_cast<const uint8_t*>(begin);
  return length == 0 || (first >= whole.data() && first + length <= whole.data() + whole.size());
}

void check_record(std::span<const uint8_t> bytes, const DecodedRecord& record) {
  MQ_ASSERT(record.total_size > 0);
  if (record.kind == RecordKind::kBlank) return;
  MQ_ASSERT(static_cast<size_t>(record.total_size) <= bytes.size());
  const auto& message = record.message;
  MQ_ASSERT(message.total_size == record.total_size);
  MQ_ASSERT(inside(bytes, message.body.data(), message.body.size()));
  MQ_ASSERT(inside(bytes, message.topic.data(), message.topic.size()));
  MQ_ASSERT(inside(bytes, message.properties_text.data(), message.properties_text.size()));
  MQ_ASSERT(mqlab::store::validate_topic_name(message.topic).ok());
  const mqlab::store::MessageProperties properties = message.properties();
  (void)mqlab::store::encode_properties(properties);
  (void)mqlab::store::create_offset_message_id(message.store_host, message.physical_offset);
  (void)message.born_host.to_string();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mqlab::set_log_sink([](mqlab::LogLevel, std::string_view, std::string_view) {});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> input(data, size);
  Result<DecodedRecord> checked = mqlab::store::decode_record(input);
  Result<DecodedRecord> unchecked = mqlab::store::decode_record(input, {.check_crc = false});
  if (checked.ok()) {
    MQ_ASSERT(unchecked.ok());
    check_record(input, *checked);
  }
  if (unchecked.ok()) check_record(input, *unchecked);

  // Record by record, as recovery scans a segment: every step moves forward.
  size_t at = 0;
  while (at < size) {
    Result<DecodedRecord> record = mqlab::store::decode_record(input.subspan(at));
    if (!record.ok()) break;
    check_record(input.subspan(at), *record);
    if (record->kind == RecordKind::kBlank) break;
    at += static_cast<size_t>(record->total_size);
  }

  // The text forms decoded from the same bytes.
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)mqlab::store::decode_properties(text);
  (void)mqlab::store::decode_offset_message_id(text);
  return 0;
}
