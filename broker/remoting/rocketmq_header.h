// The ROCKETMQ binary header (serialize type 1): RemotingCommand's header
// fields in RocketMQ's own compact layout
// (apache/rocketmq remoting/…/protocol/RocketMQSerializable.java). Java
// clients use it when rocketmq.serialize.type=ROCKETMQ; ali-ons cannot.
//
// | field      | bytes | notes                                               |
// |------------|-------|-----------------------------------------------------|
// | code       | 2     | short, big-endian, sign-extended on reading         |
// | language   | 1     | LanguageCode: JAVA 0, CPP 1, DOTNET 2, PYTHON 3,    |
// |            |       | DELPHI 4, ERLANG 5, RUBY 6, OTHER 7, HTTP 8, GO 9,  |
// |            |       | PHP 10, OMS 11, RUST 12, NODE_JS 13 (5.x)           |
// | version    | 2     | short, sign-extended                                |
// | opaque     | 4     | int                                                 |
// | flag       | 4     | int                                                 |
// | remarkLen  | 4     | int >= 0; 0 = no remark                             |
// | remark     | n     | UTF-8 (bytes kept as they are)                      |
// | extLen     | 4     | int >= 0; 0 = no extFields                          |
// | ext        | n     | repeated: short keyLen >= 0, key, int valueLen >= 0,|
// |            |       | value; a repeated key: the last wins (a HashMap)    |
//
// Reading departs from Java in two places, both on bytes Java would not
// write: an unknown language byte reads as "OTHER" (Java: null), and bytes
// after the last ext entry are refused (Java ignores them). Every error is
// Corruption naming the field and the lengths involved.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "broker/common/status.h"
#include "broker/remoting/remoting_command.h"

namespace mqlab::remoting {

// code(2) language(1) version(2) opaque(4) flag(4) remarkLen(4) extLen(4).
inline constexpr size_t kRocketMqHeaderFixedBytes = 2 + 1 + 2 + 4 + 4 + 4 + 4;

// Appends command's header. A language without a byte code goes as OTHER.
// Requires: code and version fit a short (Java writes (short) code; ours
// always fit), every ext key fits a short's length.
void append_rocketmq_header(const RemotingCommand& command, std::vector<uint8_t>& out);

// The header fields of a command (body empty), serialize_type ROCKETMQ.
Result<RemotingCommand> decode_rocketmq_header(std::span<const uint8_t> header);

}  // namespace mqlab::remoting
