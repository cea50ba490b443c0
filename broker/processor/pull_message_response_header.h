// PullMessageResponseHeader: the ext fields of a PULL_MESSAGE response
// (RocketMQ's PullMessageResponseHeader), and its JSON header written
// straight from them (written_json_header.h): a broker answers a pull for
// every message a caught-up consumer receives, and building the four fields
// as ExtFields strings, then encoding them, cost more than the rest of the
// answer's header.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "broker/remoting/remoting_command.h"

namespace mqlab::broker {

struct PullMessageResponseHeader {
  int64_t maxOffset = 0;
  int64_t minOffset = 0;
  int64_t nextBeginOffset = 0;
  int64_t suggestWhichBrokerId = 0;
};

// Its fields, in name order, to fields (written_json_header.h's
// ExtFieldWriter or ExtFieldSetter): listed once for both.
template <typename Fields>
void pull_message_response_fields(const PullMessageResponseHeader& header, Fields& fields) {
  fields.number("\"maxOffset\":", header.maxOffset);
  fields.number(",\"minOffset\":", header.minOffset);
  fields.number(",\"nextBeginOffset\":", header.nextBeginOffset);
  fields.number(",\"suggestWhichBrokerId\":", header.suggestWhichBrokerId);
}

// Sets header's fields on response. Requires: response has no ext fields.
void set_pull_message_response_fields(const PullMessageResponseHeader& header, remoting::RemotingCommand& response);

// Appends the JSON header of the response with code, remark and header's
// fields to the request with opaque: byte for byte what append_json_header
// writes for that response built as a command (make_response, then
// set_pull_message_response_fields).
void append_pull_message_response_json_header(int32_t code, std::string_view remark,
                                              const PullMessageResponseHeader& header, int32_t opaque,
                                              std::vector<uint8_t>& out);

}  // namespace mqlab::broker
