#include "broker/processor/pull_message_response_header.h"

#include "broker/remoting/written_json_header.h"

namespace mqlab::broker {

namespace {
// What pull_message_response_fields writes besides numbers: the four names
// and their punctuation, 68 bytes counted.
constexpr size_t kPullResponseFieldBytes = 96 + 4 * (kInt64Bytes + 2);
}  // namespace

void set_pull_message_response_fields(const PullMessageResponseHeader& header, remoting::RemotingCommand& response) {
  remoting::set_listed_ext_fields(response, [&header](auto& fields) { pull_message_response_fields(header, fields); });
}

void append_pull_message_response_json_header(int32_t code, std::string_view remark,
                                              const PullMessageResponseHeader& header, int32_t opaque,
                                              std::vector<uint8_t>& out) {
  const auto list_fields = [&header](auto& fields) { pull_message_response_fields(header, fields); };
  remoting::append_written_response_json_header(code, remark, opaque, {}, kPullResponseFieldBytes, out,
                                                list_fields);
}

}  // namespace mqlab::broker
