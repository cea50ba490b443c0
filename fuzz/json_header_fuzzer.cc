// libFuzzer target: the JSON header's fast paths against its general paths
// (broker/remoting/json_header.h), differentially. The fast paths are a
// hand-written reader and writer that must give exactly what nlohmann gives,
// so any difference is a bug even when both answers look reasonable:
//   - the input bytes as a header: decode_json_header (fast, handing on to
//     the general path) and decode_json_header_general give the same
//     command, or errors in the same words; when the fast reader alone
//     answers, the general path agrees with it and succeeds; so does a
//     read through the shapes learned from earlier inputs;
//   - the input as a command (FuzzedDataProvider: ints, language, remark,
//     extFields names and values of any bytes): append_json_header and
//     append_json_header_general write the same bytes, and those bytes
//     read back the same both ways.
// Seeds: fuzz/corpus/json_header/ (the ali-ons capture's headers and a Java
// client's).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "broker/common/assert.h"
#include "broker/common/log.h"
#include "broker/remoting/json_header.h"
#include "broker/remoting/remoting_command.h"

namespace {

using mqlab::Result;
using mqlab::remoting::RemotingCommand;

void check_readers_agree(std::span<const uint8_t> header) {
  const Result<RemotingCommand> decoded = mqlab::remoting::decode_json_header(header);
  const Result<RemotingCommand> general = mqlab::remoting::decode_json_header_general(header);
  MQ_ASSERT(decoded.ok() == general.ok());
  if (decoded.ok()) {
    MQ_ASSERT(*decoded == *general);
  } else {
    MQ_ASSERT_MSG(decoded.status().to_string() == general.status().to_string(), decoded.status().to_string());
  }
  const std::optional<RemotingCommand> fast = mqlab::remoting::decode_json_header_fast(header);
  if (fast) {
    MQ_ASSERT(general.ok());
    MQ_ASSERT(*fast == *general);
  }
  // Through shapes learned from the inputs before (as a connection keeps
  // them), twice: the second time the input's own shape, if it has one,
  // is known.
  static mqlab::remoting::JsonHeaderShapes shapes;
  for (int pass = 0; pass < 2; ++pass) {
    RemotingCommand shaped;
    const mqlab::Status status = mqlab::remoting::decode_json_header_into(header, shaped, &shapes);
    MQ_ASSERT(status.ok() == general.ok());
    if (status.ok()) {
      MQ_ASSERT(shaped == *general);
    } else {
      MQ_ASSERT(status.to_string() == general.status().to_string());
    }
  }
}

RemotingCommand command_from(FuzzedDataProvider& input) {
  RemotingCommand command;
  command.code = input.ConsumeIntegral<int32_t>();
  command.opaque = input.ConsumeIntegral<int32_t>();
  command.flag = input.ConsumeIntegral<int32_t>();
  command.version = input.ConsumeIntegral<int32_t>();
  if (input.ConsumeBool()) command.language = input.ConsumeRandomLengthString(8);
  if (input.ConsumeBool()) command.remark = input.ConsumeRandomLengthString(64);
  const int fields = input.ConsumeIntegralInRange(0, 16);
  for (int i = 0; i < fields; ++i) {
    std::string name = input.ConsumeRandomLengthString(12);
    command.ext_fields.insert_or_assign(std::move(name), input.ConsumeRandomLengthString(64));
  }
  return command;
}

void check_writers_agree(const RemotingCommand& command) {
  std::vector<uint8_t> fast;
  std::vector<uint8_t> general;
  mqlab::remoting::append_json_header(command, fast);
  mqlab::remoting::append_json_header_general(command, general);
  MQ_ASSERT(fast == general);
  check_readers_agree(fast);
  // What we write we read back (names and values may have had invalid UTF-8
  // replaced, so only the ints are compared).
  const Result<RemotingCommand> decoded = mqlab::remoting::decode_json_header(fast);
  MQ_ASSERT_MSG(decoded.ok(), decoded.status().to_string());
  MQ_ASSERT(decoded->code == command.code && decoded->opaque == command.opaque && decoded->flag == command.flag &&
            decoded->version == command.version);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mqlab::set_log_sink([](mqlab::LogLevel, std::string_view, std::string_view) {});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check_readers_agree(std::span<const uint8_t>(data, size));
  FuzzedDataProvider input(data, size);
  check_writers_agree(command_from(input));
  return 0;
}
