#include "broker/client/message.h"

#include <array>
#include <iterator>
#include <memory>
#include <utility>

#include "broker/client/compression.h"
#include "broker/common/assert.h"
#include "broker/common/assign_text.h"
#include "broker/common/name_order.h"

namespace mqlab::client {

store::MessageProperties wire_properties(const Message& message) {
  store::MessageProperties properties = message.properties;
  if (!message.tags.empty()) properties[std::string(store::kPropertyTags)] = message.tags;
  if (!message.keys.empty()) properties[std::string(store::kPropertyKeys)] = message.keys;
  if (message.delayTimeLevel > 0) {
    properties[std::string(store::kPropertyDelayLevel)] = std::to_string(message.delayTimeLevel);
  }
  properties[std::string(store::kPropertyWaitStoreMsgOk)] = message.waitStoreMsgOK ? "true" : "false";
  return properties;
}

namespace {

struct WireItem {
  std::string_view name;
  std::string_view value;
};

// The properties set over a message's own (the stamp, then TAGS, KEYS,
// DELAY, WAIT: the order wire_properties applies them), sorted by name, the
// last listed of equal names kept, as the last assignment to the map would.
struct SetOver {
  std::array<WireItem, 5> items{};
  size_t count = 0;
};

SetOver set_over_properties(const Message& message, const WireItem& stamped, std::string_view delay_text) {
  SetOver set_over;
  auto& items = set_over.items;
  size_t count = 0;
  items[count++] = stamped;
  if (!message.tags.empty()) items[count++] = {store::kPropertyTags, message.tags};
  if (!message.keys.empty()) items[count++] = {store::kPropertyKeys, message.keys};
  if (!delay_text.empty()) items[count++] = {store::kPropertyDelayLevel, delay_text};
  items[count++] = {store::kPropertyWaitStoreMsgOk, message.waitStoreMsgOK ? "true" : "false"};
  // Insertion sort: stable (equal names keep their order) and allocation-free for five.
  for (size_t i = 1; i < count; ++i) {
    for (size_t j = i; j > 0 && name_less(items[j].name, items[j - 1].name); --j) std::swap(items[j], items[j - 1]);
  }
  for (size_t i = 0; i < count; ++i) {  // keep the last of each run of equal names
    if (i + 1 < count && items[i + 1].name == items[i].name) continue;
    items[set_over.count++] = items[i];
  }
  return set_over;
}

// Calls emit(name, value) for every property encode_wire_properties writes,
// in name order: the message's properties (a map: sorted already) merged
// with set_over. Sorted once and merged twice (sizing, then writing): the
// sort's name comparisons were a third of the encoding.
template <typename Emit>
void for_each_wire_property(const Message& message, const SetOver& set_over, Emit&& emit) {
  auto it = message.properties.begin();
  size_t j = 0;
  while (it != message.properties.end() || j < set_over.count) {
    const WireItem& over = set_over.items[j < set_over.count ? j : 0];
    if (j == set_over.count || (it != message.properties.end() && name_less(it->first, over.name))) {
      emit(std::string_view(it->first), std::string_view(it->second));
      ++it;
      continue;
    }
    if (it != message.properties.end() && it->first == over.name) ++it;  // set over it
    emit(over.name, over.value);
    ++j;
  }
}

}  // namespace

std::string encode_wire_properties(const Message& message, std::string_view stamped_name,
                                   std::string_view stamped_value) {
  std::string text;
  encode_wire_properties_into(message, stamped_name, stamped_value, text);
  return text;
}

void encode_wire_properties_into(const Message& message, std::string_view stamped_name, std::string_view stamped_value,
                                 std::string& text) {
  MQ_ASSERT(!stamped_name.empty());
  const std::string delay_text = message.delayTimeLevel > 0 ? std::to_string(message.delayTimeLevel) : std::string();
  const SetOver set_over = set_over_properties(message, WireItem{stamped_name, stamped_value}, delay_text);
  size_t size = 0;
  for_each_wire_property(message, set_over, [&size](std::string_view name, std::string_view value) {
    size += store::property_bytes(name, value);
  });
  // Sized once, then written through a pointer: four appends a property
  // each checked the capacity again.
  text.resize(size);
  char* p = text.data();
  for_each_wire_property(message, set_over, [&p](std::string_view name, std::string_view value) {
    p = store::put_property(p, name, value);
  });
  MQ_ASSERT(p == text.data() + text.size());
}

std::optional<std::string> MessageExt::property(std::string_view name) const {
  const std::optional<std::string_view> value = store::find_property(properties_text, name);
  if (!value) return std::nullopt;
  return std::string(*value);
}

void MessageExt::append_properties(std::string_view encoded) {
  MQ_ASSERT(encoded.empty() || encoded.back() == '\x02');
  if (encoded.empty()) return;
  // A stored text may lack its last 0x02 (decode_properties tolerates it):
  // without one, the first new name would run into the last value.
  const bool terminated = properties_text.empty() || properties_text.back() == '\x02';
  properties_text.reserve(properties_text.size() + (terminated ? 0 : 1) + encoded.size());
  if (!terminated) properties_text += '\x02';
  properties_text.append(encoded);
  MQ_ASSERT(properties_text.back() == '\x02');
}

void clear_keeping_room(MessageExt& message) {
  // Field by field: building a default MessageExt and moving it in cost
  // more (390 instructions) than the four allocations the shelf saves.
  // A field added to MessageExt must be cleared here: the size check below
  // says when to look again, and clear_keeping_room's test compares every
  // field with a default MessageExt's.
  static_assert(sizeof(MessageExt) == 6 * sizeof(std::string) + sizeof(std::vector<uint8_t>) +
                                         sizeof(store::HostAddress) + 5 * sizeof(int32_t) + 5 * sizeof(int64_t) +
                                         4 /* padding after queueId */,
                "MessageExt changed: clear every field here");
  message.topic.clear();
  message.brokerName.clear();
  message.queueId = 0;
  message.queueOffset = 0;
  message.commitLogOffset = 0;
  message.sysFlag = 0;
  message.flag = 0;
  message.bodyCRC = 0;
  message.reconsumeTimes = 0;
  message.bornTimestamp = 0;
  message.storeTimestamp = 0;
  message.preparedTransactionOffset = 0;
  message.bornHost.clear();
  message.storeHost.clear();
  message.storeHostAddress = store::HostAddress{};
  message.msgId.clear();
  message.body.clear();
  message.properties_text.clear();
}

void encode_offset_properties(int64_t min_offset, int64_t max_offset, std::string& out) {
  constexpr std::string_view kMax = "MAX_OFFSET";
  constexpr std::string_view kMin = "MIN_OFFSET";
  static_assert(kMax < kMin, "encode_properties writes names in order");
  // Written into a buffer on the stack and copied out once: once per pull,
  // two number strings and eight appends cost 530 instructions.
  char buffer[kMax.size() + kMin.size() + 2 * kInt64Bytes + 4];
  char* p = buffer;
  // The digits written in place, not into a buffer first.
  p = store::put_number_property(p, kMax, max_offset);
  p = store::put_number_property(p, kMin, min_offset);
  MQ_ASSERT(p <= std::end(buffer));
  assign_text(out, std::string_view(buffer, static_cast<size_t>(p - buffer)));
}

const std::string& HostTextCache::Recent::of(const store::HostAddress& address) {
  MQ_ASSERT(used_ <= kSize);
  MQ_ASSERT(next_replace_ < kSize);
  for (size_t i = 0; i < used_; ++i) {
    if (entries_[i].address == address) return entries_[i].text;
  }
  size_t slot = used_;
  if (used_ < kSize) {
    ++used_;
  } else {
    slot = next_replace_;
    next_replace_ = (next_replace_ + 1) % kSize;
  }
  entries_[slot].address = address;
  entries_[slot].text = address.to_string();
  MQ_ASSERT(!entries_[slot].text.empty());
  return entries_[slot].text;
}

namespace {

// Fills message (default-constructed) in place: a pulled batch decodes
// straight into its vector, where returning a Result<MessageExt> moved every
// message twice on its way there.
Status fill_message_ext(const store::DecodedMessage& decoded, HostTextCache& hosts,
                        std::string_view appended_properties, MessageExt& message) {
  MQ_ASSERT(message.body.empty() && message.properties_text.empty());
  MQ_ASSERT(message.topic.empty() && message.msgId.empty());
  // Assigned, not replaced: a MessageExt taken from a shelf keeps its room.
  assign_text(message.topic, decoded.topic);
  message.queueId = decoded.queue_id;
  message.queueOffset = decoded.queue_offset.value();
  message.commitLogOffset = decoded.physical_offset.value();
  message.sysFlag = decoded.sysflag;
  message.flag = decoded.flag;
  message.bodyCRC = static_cast<int32_t>(decoded.body_crc);
  message.reconsumeTimes = decoded.reconsume_times;
  message.bornTimestamp = decoded.born_timestamp_ms;
  message.storeTimestamp = decoded.store_timestamp_ms;
  message.preparedTransactionOffset = decoded.prepared_transaction_offset;
  message.bornHost = hosts.born_host(decoded.born_host);
  message.storeHost = hosts.store_host(decoded.store_host);
  message.storeHostAddress = decoded.store_host;
  // Room for a missing last separator too (append_properties adds one).
  message.properties_text.reserve(decoded.properties_text.size() + 1 + appended_properties.size());
  assign_text(message.properties_text, decoded.properties_text);
  message.append_properties(appended_properties);
  const std::optional<std::string_view> uniq = store::find_property(decoded.properties_text, store::kPropertyUniqKey);
  if (uniq) {
    assign_text(message.msgId, *uniq);
  } else {
    message.msgId = message.offsetMsgId();
  }
  if ((decoded.sysflag & store::kSysFlagCompressed) != 0) {
    MQ_ASSIGN_OR_RETURN(message.body, inflate_body(decoded.body, kMaxInflatedBodyBytes));
  } else {
    message.body.assign(decoded.body.begin(), decoded.body.end());
  }
  return Status::Ok();
}

}  // namespace

Result<MessageExt> to_message_ext(const store::DecodedMessage& decoded) {
  HostTextCache hosts;
  MessageExt message;
  MQ_RETURN_IF_ERROR(fill_message_ext(decoded, hosts, {}, message));
  return message;
}

PulledMessages decode_pulled_messages(std::span<const uint8_t> body) {
  HostTextCache hosts;
  return decode_pulled_messages(body, hosts);
}

namespace {

// The loop of both decoders: fills the MessageExt that add() gives for each
// record, in order; stops at the first bad record, with the reason. add()
// gives a default-constructed MessageExt it keeps; drop() forgets the last
// one (its record did not decode).
template <typename Add, typename Drop>
Status decode_records_into(std::span<const uint8_t> body, HostTextCache& hosts, std::string_view appended_properties,
                           Add&& add, Drop&& drop) {
  MQ_ASSERT(appended_properties.empty() || appended_properties.back() == '\x02');
  size_t position = 0;
  while (position < body.size()) {
    // No CRC check, as Java's client (MessageDecoder.decodes passes
    // checkCRC false): a record whose body was damaged is handed out as it
    // is, so an application (and mqsim's checker) sees the corruption
    // instead of the message silently going missing.
    Result<store::DecodedRecord> record =
        store::decode_record(body.subspan(position), store::DecodeOptions{.check_crc = false});
    if (!record.ok()) return record.status().with_context("pulled record at byte " + std::to_string(position));
    if (record->kind != store::RecordKind::kMessage) {
      return Status::Corruption("pulled record at byte " + std::to_string(position) + " is a blank record");
    }
    if (Status status = fill_message_ext(record->message, hosts, appended_properties, add()); !status.ok()) {
      drop();
      return status.with_context("pulled record at byte " + std::to_string(position));
    }
    MQ_ASSERT(record->total_size > 0);  // decode_record refuses sizes below the minimum
    position += static_cast<size_t>(record->total_size);
  }
  return Status::Ok();
}

}  // namespace

PulledMessages decode_pulled_messages(std::span<const uint8_t> body, HostTextCache& hosts,
                                      std::string_view appended_properties) {
  PulledMessages out;
  out.error = decode_records_into(
      body, hosts, appended_properties, [&out]() -> MessageExt& { return out.messages.emplace_back(); },
      [&out] { out.messages.pop_back(); });
  return out;
}

Status decode_pulled_messages(std::span<const uint8_t> body, HostTextCache& hosts, std::string_view appended_properties,
                              MessageExtShelf& shelf, std::vector<std::shared_ptr<MessageExt>>& messages) {
  MQ_ASSERT(messages.empty());
  return decode_records_into(
      body, hosts, appended_properties, [&]() -> MessageExt& { return *messages.emplace_back(shelf.take()); },
      [&messages] { messages.pop_back(); });
}

}  // namespace mqlab::client
