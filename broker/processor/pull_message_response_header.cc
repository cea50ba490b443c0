#include "broker/processor/pull_message_response_header.h"

#include "broker/common/assert.h"
#include "broker/remoting/written_json_header.h"

namespace mqlab::broker {

void set_pull_message_response_fields(const PullMessageResponseHeader& header, remoting::RemotingCommand& response) {
  MQ_ASSERT(response.ext_fields.empty());
  remoting::ExtFieldSetter fields{response};
  pull_message_response_fields(header, fields);
}

void append_pull_message_response_json_header(int32_t code, std::string_view remark,
                                              const PullMessageResponseHeader& header, int32_t opaque,
                                              std::vector<uint8_t>& out) {
  const std::string_view strings[] = {remark, remoting::kDefaultLanguage};
  // The four fields' names and punctuation, 68 bytes counted, and their
  // quoted numbers.
  constexpr size_t kFieldBytes = 96 + 4 * (remoting::kInt64Bytes + 2);
  remoting::append_written_json_header(strings, remoting::kJsonHeaderFixedBytes + kFieldBytes, out, [&](auto& sink) {
    remoting::write_json_header(sink, code, remoting::kFlagResponse, opaque, remark, [&header](auto& fields) {
      pull_message_response_fields(header, fields);
    });
  });
}

}  // namespace mqlab::broker
