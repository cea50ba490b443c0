#include "broker/processor/send_message_response_header.h"

#include "broker/common/assert.h"
#include "broker/remoting/written_json_header.h"

namespace mqlab::broker {

void set_send_message_response_fields(const SendMessageResponseHeader& header, remoting::RemotingCommand& response) {
  MQ_ASSERT(response.ext_fields.empty());
  remoting::ExtFieldSetter fields{response};
  send_message_response_fields(header, fields);
}

void append_send_message_response_json_header(int32_t code, std::string_view remark,
                                              const SendMessageResponseHeader& header, int32_t opaque,
                                              std::vector<uint8_t>& out) {
  const std::string_view strings[] = {"DefaultRegion", "true", header.msgId, remark, remoting::kDefaultLanguage};
  // The five fields' names and punctuation, 60 bytes counted, and two
  // quoted numbers.
  constexpr size_t kFieldBytes = 64 + 2 * (remoting::kInt64Bytes + 2);
  remoting::append_written_json_header(strings, remoting::kJsonHeaderFixedBytes + kFieldBytes, out, [&](auto& sink) {
    remoting::write_json_header(sink, code, remoting::kFlagResponse, opaque, remark, [&header](auto& fields) {
      send_message_response_fields(header, fields);
    });
  });
}

}  // namespace mqlab::broker
