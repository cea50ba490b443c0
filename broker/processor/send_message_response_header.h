// SendMessageResponseHeader: the ext fields of a SEND_MESSAGE(_V2)
// response (RocketMQ's SendMessageResponseHeader, and MSG_REGION and
// TRACE_ON, which a broker adds to every answer of a send), and its JSON
// header written straight from them (written_json_header.h): a broker
// answers every message sent, and building five ExtFields strings, then
// encoding them, cost more than the rest of the answer's header.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "broker/remoting/remoting_command.h"

namespace mqlab::broker {

struct SendMessageResponseHeader {
  // Of a stored message; empty when it was not stored, and then neither it
  // nor queueId and queueOffset are sent (SendMessageProcessor's refusals
  // and failed puts).
  std::string_view msgId;
  int32_t queueId = 0;
  int64_t queueOffset = 0;
};

// Its fields, in name order, to fields (written_json_header.h's
// ExtFieldWriter or ExtFieldSetter): listed once for both.
template <typename Fields>
void send_message_response_fields(const SendMessageResponseHeader& header, Fields& fields) {
  fields.string("\"MSG_REGION\":", "DefaultRegion");
  fields.string(",\"TRACE_ON\":", "true");
  if (header.msgId.empty()) return;
  fields.string(",\"msgId\":", header.msgId);
  fields.number(",\"queueId\":", header.queueId);
  fields.number(",\"queueOffset\":", header.queueOffset);
}

// Sets header's fields on response. Requires: response has no ext fields.
void set_send_message_response_fields(const SendMessageResponseHeader& header, remoting::RemotingCommand& response);

// Appends the JSON header of the response with code, remark and header's
// fields to the request with opaque: byte for byte what append_json_header
// writes for that response built as a command (make_response, then
// set_send_message_response_fields).
void append_send_message_response_json_header(int32_t code, std::string_view remark,
                                              const SendMessageResponseHeader& header, int32_t opaque,
                                              std::vector<uint8_t>& out);

}  // namespace mqlab::broker
