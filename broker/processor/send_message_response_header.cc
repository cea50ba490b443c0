#include "broker/processor/send_message_response_header.h"

#include "broker/remoting/written_json_header.h"

namespace mqlab::broker {

namespace {
// What send_message_response_fields writes besides its strings: the five
// names and their punctuation, 60 bytes counted, and two quoted numbers.
constexpr size_t kSendResponseFieldBytes = 64 + 2 * (kInt64Bytes + 2);
}  // namespace

void set_send_message_response_fields(const SendMessageResponseHeader& header, remoting::RemotingCommand& response) {
  remoting::set_listed_ext_fields(response, [&header](auto& fields) { send_message_response_fields(header, fields); });
}

void append_send_message_response_json_header(int32_t code, std::string_view remark,
                                              const SendMessageResponseHeader& header, int32_t opaque,
                                              std::vector<uint8_t>& out) {
  const std::string_view strings[] = {"DefaultRegion", "true", header.msgId};
  const auto list_fields = [&header](auto& fields) { send_message_response_fields(header, fields); };
  remoting::append_written_response_json_header(code, remark, opaque, strings, kSendResponseFieldBytes, out,
                                                list_fields);
}

}  // namespace mqlab::broker
