// The CommitLog record: RocketMQ 4.x's stored-message layout, byte for byte,
// so that a pull response body is the raw CommitLog bytes and real RocketMQ
// clients decode it. All integers big-endian.
//
// | #  | field              | bytes         | offset (IPv4 hosts)              |
// |----|--------------------|---------------|----------------------------------|
// | 1  | TOTALSIZE          | 4             | 0   whole record, itself included|
// | 2  | MAGICCODE          | 4             | 4   kMessageMagicCode            |
// | 3  | BODYCRC            | 4             | 8   crc32(body) & 0x7FFFFFFF     |
// | 4  | QUEUEID            | 4             | 12                               |
// | 5  | FLAG               | 4             | 16                               |
// | 6  | QUEUEOFFSET        | 8             | 20  patched at append            |
// | 7  | PHYSICALOFFSET     | 8             | 28  patched at append            |
// | 8  | SYSFLAG            | 4             | 36                               |
// | 9  | BORNTIMESTAMP      | 8             | 40                               |
// | 10 | BORNHOST           | 8 / 20 (v6)   | 48  ip bytes + int port          |
// | 11 | STORETIMESTAMP     | 8             | 56  patched at append            |
// | 12 | STOREHOSTADDRESS   | 8 / 20 (v6)   | 64                               |
// | 13 | RECONSUMETIMES     | 4             | 72                               |
// | 14 | PREPARED TX OFFSET | 8             | 76                               |
// | 15 | BODY               | 4 + n         | 84  int length + bytes           |
// | 16 | TOPIC              | 1 + n         |     byte length + UTF-8          |
// | 17 | PROPERTIES         | 2 + n         |     short length + UTF-8         |
//
// Size: 91 + body + topic + properties with IPv4 hosts, +12 per IPv6 host.
// The end-of-file blank record is 8 bytes: TOTALSIZE = bytes left in the
// segment, MAGICCODE = kBlankMagicCode; the rest of the segment is padding.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/flat_string_map.h"
#include "broker/common/status.h"
#include "broker/common/types.h"

namespace mqlab::store {

constexpr uint32_t kMessageMagicCode = 0xDAA320A7;  // -626843481
constexpr uint32_t kBlankMagicCode = 0xCBD43194;    // -875286124
constexpr int32_t kEndFileMinBlankLength = 8;       // TOTALSIZE + MAGICCODE
constexpr int32_t kMessageFixedSizeIpv4 = 91;
constexpr int32_t kMaxTopicLength = 127;
constexpr int32_t kMaxPropertiesLength = 32767;

// Byte offsets of the fields the CommitLog patches in place at append time.
constexpr size_t kQueueOffsetPosition = 20;
constexpr size_t kPhysicalOffsetPosition = 28;
constexpr size_t kBornHostPosition = 48;

// SYSFLAG bits (MessageSysFlag).
constexpr int32_t kSysFlagCompressed = 0x1;
constexpr int32_t kSysFlagMultiTags = 0x2;
constexpr int32_t kSysFlagTransactionMask = 0xC;
constexpr int32_t kSysFlagTransactionPrepared = 0x4;
constexpr int32_t kSysFlagTransactionCommit = 0x8;
constexpr int32_t kSysFlagTransactionRollback = 0xC;
constexpr int32_t kSysFlagBornHostV6 = 0x10;
constexpr int32_t kSysFlagStoreHostV6 = 0x20;

// A prepared or rolled-back transactional record takes no queue offset and
// no ConsumeQueue entry: no consumer ever sees it, and it is never delayed.
constexpr bool is_prepared_or_rollback(int32_t sysflag) {
  const int32_t tx = sysflag & kSysFlagTransactionMask;
  return tx == kSysFlagTransactionPrepared || tx == kSysFlagTransactionRollback;
}

// Property names (MessageConst).
inline constexpr std::string_view kPropertyKeys = "KEYS";
inline constexpr std::string_view kPropertyTags = "TAGS";
inline constexpr std::string_view kPropertyWaitStoreMsgOk = "WAIT";
inline constexpr std::string_view kPropertyDelayLevel = "DELAY";
inline constexpr std::string_view kPropertyUniqKey = "UNIQ_KEY";
inline constexpr std::string_view kPropertyRetryTopic = "RETRY_TOPIC";
inline constexpr std::string_view kPropertyOriginMessageId = "ORIGIN_MESSAGE_ID";
inline constexpr std::string_view kPropertyRealTopic = "REAL_TOPIC";
inline constexpr std::string_view kPropertyRealQueueId = "REAL_QID";
inline constexpr std::string_view kPropertyMaxReconsumeTimes = "MAX_RECONSUME_TIMES";
inline constexpr std::string_view kPropertyReconsumeTime = "RECONSUME_TIME";
inline constexpr std::string_view kPropertyCluster = "CLUSTER";

// An IPv4 or IPv6 address with a port, as stored in BORNHOST / STOREHOST.
struct HostAddress {
  std::array<uint8_t, 16> ip{};  // first 4 bytes used for IPv4
  bool ipv6 = false;
  int32_t port = 0;

  static HostAddress ipv4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, int32_t port);
  size_t encoded_size() const { return ipv6 ? 20 : 8; }
  std::string to_string() const;  // "10.0.0.1:10911" or "[::1]:10911"
  bool operator==(const HostAddress&) const = default;
};

// Properties in a deterministic (sorted) order; RocketMQ's own order is a
// HashMap's, so no reader may depend on order. A flat map: a message has a
// handful, decoded once per put (a tree's nodes cost an allocation each).
using MessageProperties = FlatStringMap;

// "KEYS\x01k1 k2\x02TAGS\x01TagA\x02": name 0x01 value 0x02, concatenated.
std::string encode_properties(const MessageProperties& properties);
// One property of that text, for encoders that build it from other
// sources (a client's message, the offsets added to a pulled one): the bytes
// it takes, and put_property writing it at out, which has that room;
// returns the byte after it.
constexpr size_t property_bytes(std::string_view name, std::string_view value) { return name.size() + value.size() + 2; }
char* put_property(char* out, std::string_view name, std::string_view value);
// The same for a number, its decimal text written in place: at most
// property_bytes(name, "") + kMaxDecimalBytes bytes (a pull's offsets).
char* put_number_property(char* out, std::string_view name, int64_t value);
// Splits on 0x02 then on the first 0x01; tolerates a missing trailing 0x02
// and skips empty items. Never fails: properties are opaque to validation.
MessageProperties decode_properties(std::string_view text);
// The same, into properties: each decoded name is inserted or assigned, so
// entries put there first stay unless the text names them too. Returns
// whether any was assigned (its name was there already): when not, every
// entry put there first is as it was.
bool decode_properties_into(std::string_view text, MessageProperties& properties);
// Whether decode_properties(encode_properties(properties)) == properties:
// no name empty or holding 0x01 or 0x02, no value holding 0x02. Properties
// decoded from the wire always are; what a test or a tool builds may not be.
bool properties_round_trip(const MessageProperties& properties);
// One property's value as decode_properties would give it (the last of a
// repeated name), without building the map: the dispatcher's per-record
// lookups. nullopt when absent. Requires: name is not empty and holds no
// 0x01 or 0x02 (every caller passes a property name constant).
std::optional<std::string_view> find_property(std::string_view text, std::string_view name);

// What a producer asks the store to keep (MessageExtBrokerInner).
struct MessageToStore {
  std::string topic;
  int32_t queue_id = 0;
  int32_t flag = 0;
  std::vector<uint8_t> body;
  MessageProperties properties;
  int32_t sysflag = 0;  // host v6 bits are derived from the hosts when encoding
  int64_t born_timestamp_ms = 0;
  HostAddress born_host;
  HostAddress store_host;
  int32_t reconsume_times = 0;
  int64_t prepared_transaction_offset = 0;
  // Set by a builder whose properties are known to round-trip
  // (properties_round_trip): decoded from a PROPERTIES text, plus names and
  // values that hold neither separator. The store then skips checking so,
  // a scan of every name and value, for the dispatch request it hands over.
  bool properties_round_trip_known = false;

  std::string tags() const;               // TAGS property or ""
  std::vector<std::string> keys() const;  // KEYS split on spaces, empties dropped
};

// An encoded record whose QUEUEOFFSET, PHYSICALOFFSET and STORETIMESTAMP are
// still zero; the CommitLog patches them under its append order.
struct EncodedMessage {
  std::vector<uint8_t> bytes;
  size_t store_timestamp_position = 0;  // 56, or 68 with an IPv6 born host
  int32_t size() const { return static_cast<int32_t>(bytes.size()); }
  void patch(QueueOffset queue_offset, PhyOffset physical_offset, int64_t store_timestamp_ms);
};

// The SYSFLAG a record of message stores: message.sysflag with the host
// bits set from the hosts, whatever the caller put there.
int32_t stored_sysflag(const MessageToStore& message);

// Checks the limits RocketMQ enforces at put time. InvalidArgument names the
// limit: topic empty or longer than 127 bytes or with characters outside
// [A-Za-z0-9%|_-], body over max_body_bytes, properties over 32767 bytes.
Status validate_topic_name(std::string_view topic);

enum class EncodeError { kNone, kMessageIllegal, kPropertiesSizeExceeded };

// Encoding in two steps, so the put path writes each record once, where it
// stays (the CommitLog's write buffer), with no record or properties string
// built on the way (RocketMQ's calMsgLength, then the encoder):
//   plan_record()  the put-time checks and the sizes, no bytes yet;
//   write_record() every byte of the record into a span of exactly
//                  total_size, the append-time fields included.
struct RecordPlan {
  EncodeError error = EncodeError::kNone;
  std::string reason;             // set when error != kNone
  int32_t total_size = 0;         // TOTALSIZE
  int32_t properties_length = 0;  // the PROPERTIES text, as encode_properties() gives it
};
// valid_topic: a topic name known to pass validate_topic_name (the one
// the caller's last plan checked), or empty; message's topic is checked
// unless it is that one.
RecordPlan plan_record(const MessageToStore& message, int32_t max_body_bytes, std::string_view valid_topic = {});

// The fields the CommitLog assigns under its append order.
struct AppendFields {
  QueueOffset queue_offset;
  PhyOffset physical_offset;
  int64_t store_timestamp_ms = 0;
};
// Requires: plan is plan_record(message)'s, without error, and out has
// exactly plan.total_size bytes; message unchanged since.
void write_record(const MessageToStore& message, const RecordPlan& plan, const AppendFields& fields,
                  std::span<uint8_t> out);

// Both steps into a vector of its own, append-time fields zero (tests,
// fuzzers and tools; the put path writes in place).
struct EncodeOutcome {
  EncodeError error = EncodeError::kNone;
  std::string reason;  // set when error != kNone
  EncodedMessage message;
};
EncodeOutcome encode_message(const MessageToStore& message, int32_t max_body_bytes);

// The masked CRC32 RocketMQ stores (java.util.zip.CRC32 & 0x7FFFFFFF).
uint32_t body_crc32(std::span<const uint8_t> body);

// Java's String.hashCode() over the UTF-16 code units of a UTF-8 string: the
// ConsumeQueue tag code and the IndexFile key hash.
int32_t java_string_hash(std::string_view utf8);
// The ConsumeQueue tag code of a message's tags: 0 when empty.
int64_t tags_code(std::string_view tags);

// A record decoded in place: spans point into the bytes given to decode_record.
struct DecodedMessage {
  int32_t total_size = 0;
  uint32_t body_crc = 0;
  int32_t queue_id = 0;
  int32_t flag = 0;
  QueueOffset queue_offset;
  PhyOffset physical_offset;
  int32_t sysflag = 0;
  int64_t born_timestamp_ms = 0;
  HostAddress born_host;
  int64_t store_timestamp_ms = 0;
  HostAddress store_host;
  int32_t reconsume_times = 0;
  int64_t prepared_transaction_offset = 0;
  std::span<const uint8_t> body;
  std::string_view topic;
  std::string_view properties_text;

  MessageProperties properties() const { return decode_properties(properties_text); }
};

enum class RecordKind { kMessage, kBlank };
struct DecodedRecord {
  RecordKind kind = RecordKind::kMessage;
  int32_t total_size = 0;  // for a blank: the bytes left in the segment
  DecodedMessage message;  // valid when kind == kMessage
};

struct DecodeOptions {
  bool check_crc = true;  // checkCRCOnRecover
};

// Decodes the record at the start of bytes. Corruption (never an assertion)
// when: fewer than 8 bytes; unknown magic code; TOTALSIZE below the minimum or
// beyond the bytes given; any length field running past TOTALSIZE; a TOPIC
// length outside 1..127 or a topic byte validate_topic_name would refuse (the
// encoder never writes one; this catches a flipped TOPIC length); TOTALSIZE
// differing from the size recomputed from the lengths; CRC mismatch. The
// message says which field, the value found and what was expected. A
// zero-filled region decodes as Corruption("... TOTALSIZE 0 ..."): recovery
// treats it as the end of the log.
Result<DecodedRecord> decode_record(std::span<const uint8_t> bytes, DecodeOptions options = {});

// RocketMQ's "offset msgId": uppercase hex of store host ip + port + offset.
// Any offset, even a damaged record's negative one (its 8 bytes as stored).
std::string create_offset_message_id(const HostAddress& store_host, PhyOffset offset);
// The same text held inline, not on the heap (32 characters, 56 for an IPv6
// store host): for a broker's reply to a send, written at once.
struct OffsetMessageIdText {
  std::array<char, 56> chars{};
  size_t size = 0;
  std::string_view view() const { return {chars.data(), size}; }
};
OffsetMessageIdText offset_message_id_text(const HostAddress& store_host, PhyOffset offset);
struct OffsetMessageId {
  HostAddress store_host;
  PhyOffset offset;
};
Result<OffsetMessageId> decode_offset_message_id(std::string_view message_id);
// The commitlog offset alone of such an id: what decode_offset_message_id
// gives, nullopt where it fails (the whole id is still checked), without
// building the host or an error. mqsim reads every acknowledged message's
// offset twice at the end of a run.
std::optional<PhyOffset> offset_of_offset_message_id(std::string_view message_id);

}  // namespace mqlab::store
