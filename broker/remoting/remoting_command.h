// RemotingCommand: one request or response of RocketMQ's remoting protocol,
// the unit every NameServer and broker exchange is made of
// (apache/rocketmq remoting/…/remoting/protocol/RemotingCommand.java).
//
// A command is a header (code, language, version, opaque, flag, remark,
// extFields) plus an opaque body. extFields is the command's "custom header":
// a flat string -> string map whose keys are the header class's field names
// (`topic`, `queueId`, or SEND_MESSAGE_V2's short `a`..`n`). On the wire every
// value is a string, whatever the field's Java type; the typed accessors below
// parse them the way Java's decodeCommandCustomHeader does and turn a missing
// or malformed field into InvalidArgument naming it, which a processor
// answers as an error response rather than dropping the connection.
//
// Invariants: a response has flag bit 0 set and the opaque of its request;
// ext_fields is sorted by name, so a command encodes to one byte string; `remark`
// empty means "no remark" (Java's null and "" are not told apart on the wire:
// the ROCKETMQ header writes both as length 0, and the JSON encoder omits it).
//
// How it is framed and serialized is frame_codec.h's business.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/status.h"
#include "broker/remoting/ext_fields.h"

namespace mqlab::remoting {

// The header's serialization (SerializeType.java): the high byte of the
// header-length field. A server answers in the type the request used.
enum class SerializeType : uint8_t {
  JSON = 0,
  ROCKETMQ = 1,  // the binary header of RocketMQSerializable.java
};
std::string_view serialize_type_name(SerializeType type);

// LanguageCode names the sender's client library. We say JAVA, not CPP:
// peers branch on it (a Java broker handles INVOKE_BROKER_TO_RESET_OFFSET from a
// CPP sender through its C++-client path, Broker2Client.resetOffset's isC),
// and every client and tool was tested against Java brokers and NameServers,
// which is what mqlab impersonates on the wire. It is also what a decoded
// command holds when the peer sent no language (RemotingCommand's default).
inline constexpr std::string_view kDefaultLanguage = "JAVA";
// MQVersion.Version.V4_9_7.ordinal(): the RocketMQ release whose behaviour
// mqlab follows. It is at least V4_9_4 (401), so a NameServer answers our
// route queries in standard JSON, and at least V3_0_11 (37), so it takes our
// REGISTER_BROKER bodies in the RegisterBrokerBody format.
inline constexpr int32_t kDefaultVersion = 407;

// Flag bits (RemotingCommand.RPC_TYPE and RPC_ONEWAY).
inline constexpr int32_t kFlagResponse = 1 << 0;
inline constexpr int32_t kFlagOneway = 1 << 1;

struct RemotingCommand {
  int32_t code = 0;  // a RequestCode in requests, a ResponseCode in responses
  std::string language{kDefaultLanguage};
  int32_t version = kDefaultVersion;  // the sender's MQVersion ordinal
  int32_t opaque = 0;                 // request id; a response echoes it
  int32_t flag = 0;                   // kFlagResponse | kFlagOneway
  std::string remark;                 // empty = none; the error text of a failed response
  ExtFields ext_fields;
  std::vector<uint8_t> body;
  SerializeType serialize_type = SerializeType::JSON;  // how it came, or is to go, over the wire

  // A request carrying ext_fields. opaque stays 0: the channel that sends it
  // numbers its requests (one counter per client, so runs stay deterministic).
  static RemotingCommand make_request(int32_t code, ExtFields ext_fields = {});
  // The response to this request: response flag set, this request's opaque
  // and serialize type, our language and version, no ext fields, no body.
  // Requires: this is a request.
  RemotingCommand make_response(int32_t code, std::string remark = {}) const;

  bool is_response() const { return (flag & kFlagResponse) != 0; }
  bool is_oneway() const { return (flag & kFlagOneway) != 0; }
  void mark_response() { flag |= kFlagResponse; }
  void mark_oneway() { flag |= kFlagOneway; }

  // --- typed reads of ext_fields. Required reads fail with InvalidArgument:
  // missing "the custom field <name> is null" (RocketMQ's own words, so the
  // remark a client sees is the one it would get from Java), malformed
  // "the custom field <name> is not a valid int64: "abc"".
  // The value of name, or null: valid until ext_fields next changes.
  const std::string_view* find_ext(std::string_view name) const;
  Result<std::string> ext_string(std::string_view name) const;
  Result<int64_t> ext_int(std::string_view name) const;
  Result<int32_t> ext_int32(std::string_view name) const;
  // "true"/"false" in any case, and "1"/"0" (C and C++ clients print bools
  // as digits). Java's Boolean.parseBoolean reads anything but "true" as
  // false; we refuse the rest instead, so a typo is not silently false.
  Result<bool> ext_bool(std::string_view name) const;
  // Absent is nullopt; present but malformed is still an error.
  std::optional<std::string> optional_ext_string(std::string_view name) const;
  Result<std::optional<int64_t>> optional_ext_int(std::string_view name) const;
  Result<std::optional<int32_t>> optional_ext_int32(std::string_view name) const;
  Result<std::optional<bool>> optional_ext_bool(std::string_view name) const;

  // --- writes: values go out as strings, as a Java broker sends them.
  void set_ext_string(std::string_view name, std::string value);
  void set_ext_int(std::string_view name, int64_t value);
  void set_ext_bool(std::string_view name, bool value);

  // One line for logs: "request SEND_MESSAGE_V2(310) opaque=2 flag=0 lang=JAVA
  // version=121 ext=11 body=12B" (values are not printed: they may be large).
  std::string describe() const;

  bool operator==(const RemotingCommand&) const = default;
};

}  // namespace mqlab::remoting
