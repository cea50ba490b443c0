// Message and MessageExt: what an application sends, and what a consumer is
// handed (RocketMQ's Message.java and MessageExt.java).
//
// A Message's tags, keys, delay level and waitStoreMsgOK travel as properties
// (TAGS, KEYS, DELAY, WAIT); wire_properties() is the one place that folds
// them in, so the producer and the tests agree on the string a broker stores.
//
// A MessageExt is one record of a PULL_MESSAGE body (the CommitLog layout of
// store/message_codec.h, decoded by store::decode_record) with the body
// inflated when sysFlag says it was compressed. msgId follows Java's
// MessageClientExt: the producer's UNIQ_KEY when present (stable across
// retries and re-deliveries, so duplicates can be recognised), otherwise the
// broker's offset msgId. decode_pulled_messages() never asserts on the bytes:
// a record that does not decode ends the batch and is reported, as Java's
// MessageDecoder.decodes stops at the first bad record.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/common/shared_shelf.h"
#include "broker/common/status.h"
#include "broker/store/message_codec.h"

namespace mqlab::client {

struct Message {
  std::string topic;
  std::string tags;  // one tag; empty = none
  std::string keys;  // space-separated index keys; empty = none
  std::vector<uint8_t> body;
  store::MessageProperties properties;  // user properties (and UNIQ_KEY once sent)
  int32_t flag = 0;
  int32_t delayTimeLevel = 0;  // 0 = deliver at once; 1.. = messageDelayLevel index
  bool waitStoreMsgOK = true;  // Java's default: the WAIT property is "true"

  Message() = default;
  Message(std::string topic_name, std::string tag, std::string_view body_text)
      : topic(std::move(topic_name)), tags(std::move(tag)), body(body_text.begin(), body_text.end()) {}
};

// properties plus TAGS, KEYS, DELAY and WAIT from the fields above.
store::MessageProperties wire_properties(const Message& message);
// store::encode_properties(wire_properties(message)) with stamped (a name
// and value, e.g. the producer's UNIQ_KEY) set in the properties first:
// the string a SEND_MESSAGE_V2 header carries, written without building the
// map (its nodes were most of a send's allocations on the client).
std::string encode_wire_properties(const Message& message, std::string_view stamped_name,
                                   std::string_view stamped_value);
// The same into text, replacing what it held (and keeping its room).
void encode_wire_properties_into(const Message& message, std::string_view stamped_name, std::string_view stamped_value,
                                 std::string& text);

struct MessageExt {
  // For a message pulled from %RETRY%<group>: the original topic (its
  // RETRY_TOPIC property), as Java's resetRetryAndNamespace sets it.
  std::string topic;
  std::string brokerName;  // the broker group it was pulled from (set by the consumer)
  int32_t queueId = 0;
  int64_t queueOffset = 0;
  int64_t commitLogOffset = 0;
  int32_t sysFlag = 0;
  int32_t flag = 0;
  int32_t bodyCRC = 0;
  int32_t reconsumeTimes = 0;
  int64_t bornTimestamp = 0;
  int64_t storeTimestamp = 0;
  int64_t preparedTransactionOffset = 0;
  std::string bornHost;   // "ip:port"
  std::string storeHost;  // "ip:port"
  store::HostAddress storeHostAddress;  // the same, as the record holds it
  std::string msgId;  // UNIQ_KEY when present, else offsetMsgId()
  std::vector<uint8_t> body;  // inflated
  // The PROPERTIES field as the record stores it ("name\x01value\x02...",
  // store::encode_properties), kept as text and read on demand: a consumer
  // reads two or three properties of a message, and a map of all of them
  // cost a fifth of decoding a pulled message. A repeated name counts with
  // its last value, as in store::decode_properties.
  std::string properties_text;

  // RocketMQ's offsetMsgId (store::create_offset_message_id of the store
  // host and commitLogOffset), made when asked: few consumers read it, and
  // as a field every pulled message paid for its text.
  std::string offsetMsgId() const {
    return store::create_offset_message_id(storeHostAddress, PhyOffset(commitLogOffset));
  }
  std::string tags() const { return property(store::kPropertyTags).value_or(""); }
  std::string keys() const { return property(store::kPropertyKeys).value_or(""); }
  std::optional<std::string> property(std::string_view name) const;
  // Every property, decoded (for a copy that is sent again, or printed).
  store::MessageProperties properties() const { return store::decode_properties(properties_text); }
  // Adds properties given as store::encode_properties text; a name already
  // present takes the new value (the last of a name wins). One append: the
  // consumer adds MIN_OFFSET and MAX_OFFSET to every message it pulls.
  // Requires: encoded is empty or ends with the 0x02 separator.
  void append_properties(std::string_view encoded);
  std::string body_text() const { return std::string(body.begin(), body.end()); }
};

// Puts message back to a default MessageExt, keeping the room its body,
// properties and msgId hold (the fields that outgrow a string's own).
void clear_keeping_room(MessageExt& message);

// The MessageExts a consumer queue decodes its pulls into: those of
// messages it has consumed, once nobody holds them (shared_shelf.h). 64:
// a pull of 32 (pullBatchSize's default) and the next.
using MessageExtShelf = SharedShelf<MessageExt, 64, clear_keeping_room>;

// "MAX_OFFSET\x01<max>\x02MIN_OFFSET\x01<min>\x02": what Java's pull callback
// adds to every pulled message, as store::encode_properties would encode the
// two (in name order), for append_properties. Built directly: a map of two
// strings per pull cost more than the append. Into out (replacing what it
// held), which a consumer keeps for its room: the text is longer than a
// string holds without a heap block, and is made once a pull.
void encode_offset_properties(int64_t min_offset, int64_t max_offset, std::string& out);

// The bodies of pulled messages are bounded by the broker's maxMessageSize
// (4 MiB by default); inflation is capped well above it.
inline constexpr size_t kMaxInflatedBodyBytes = 64ull << 20;

// One decoded record as a MessageExt (topic as stored: no retry reset here).
// Corruption when a compressed body does not inflate.
Result<MessageExt> to_message_ext(const store::DecodedMessage& decoded);

struct PulledMessages {
  std::vector<MessageExt> messages;  // every record before the first bad one
  Status error;                      // ok, or why decoding stopped early
};

// The "ip:port" texts of the born hosts and store hosts decoded lately. A
// queue's messages share one store host and come from a few producers (born
// hosts), interleaved; formatting them was a tenth of decoding a pulled
// message, and remembering only the last one missed on every other message
// once two producers fed a queue. With long polling most pulls bring one
// message, so a QueueConsumer keeps its cache across pulls rather than per
// body.
class HostTextCache {
 public:
  const std::string& born_host(const store::HostAddress& address) { return born_.of(address); }
  const std::string& store_host(const store::HostAddress& address) { return store_.of(address); }

 private:
  // The last kSize distinct addresses; a miss replaces the oldest entry, so a
  // workload with more hosts than that still costs one format per miss.
  class Recent {
   public:
    const std::string& of(const store::HostAddress& address);

   private:
    static constexpr size_t kSize = 4;
    struct Entry {
      store::HostAddress address;
      std::string text;
    };
    std::array<Entry, kSize> entries_;
    size_t used_ = 0;         // entries_[0, used_) hold addresses
    size_t next_replace_ = 0;  // the oldest entry, once all are used
  };
  Recent born_;
  Recent store_;
};

// Decodes a PULL_MESSAGE body: records back to back, the body CRC not
// checked (bodyCRC is the stored one, the body as stored), as Java's.
PulledMessages decode_pulled_messages(std::span<const uint8_t> body);
// The same, formatting hosts through (and into) hosts, and adding
// appended_properties (store::encode_properties text, as append_properties
// takes) to every message's properties: each message's properties_text is
// then built at its final size, not grown by a second append.
PulledMessages decode_pulled_messages(std::span<const uint8_t> body, HostTextCache& hosts,
                                      std::string_view appended_properties = {});
// The same, each message decoded straight into its own shared MessageExt
// (what a ProcessQueue keeps) from shelf, appended to messages (empty):
// moving every message out of a vector and into a shared_ptr cost as much
// as half its decoding. Returns ok, or why decoding stopped early (messages
// then holds every record before the bad one).
Status decode_pulled_messages(std::span<const uint8_t> body, HostTextCache& hosts, std::string_view appended_properties,
                              MessageExtShelf& shelf, std::vector<std::shared_ptr<MessageExt>>& messages);

}  // namespace mqlab::client
