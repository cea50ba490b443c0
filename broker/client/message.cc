#include "broker/client/message.h"

#include <utility>

#include "broker/client/compression.h"
#include "broker/common/assert.h"

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

Result<MessageExt> to_message_ext(const store::DecodedMessage& decoded, HostTextCache& hosts,
                                  std::string_view appended_properties) {
  MessageExt message;
  message.topic = std::string(decoded.topic);
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
  message.offsetMsgId = store::create_offset_message_id(decoded.store_host, decoded.physical_offset);
  // Room for a missing last separator too (append_properties adds one).
  message.properties_text.reserve(decoded.properties_text.size() + 1 + appended_properties.size());
  message.properties_text.assign(decoded.properties_text);
  message.append_properties(appended_properties);
  const std::optional<std::string_view> uniq = store::find_property(decoded.properties_text, store::kPropertyUniqKey);
  message.msgId = uniq ? std::string(*uniq) : message.offsetMsgId;
  if ((decoded.sysflag & store::kSysFlagCompressed) != 0) {
    MQ_ASSIGN_OR_RETURN(message.body, inflate_body(decoded.body, kMaxInflatedBodyBytes));
  } else {
    message.body.assign(decoded.body.begin(), decoded.body.end());
  }
  return message;
}

}  // namespace

Result<MessageExt> to_message_ext(const store::DecodedMessage& decoded) {
  HostTextCache hosts;
  return to_message_ext(decoded, hosts, {});
}

PulledMessages decode_pulled_messages(std::span<const uint8_t> body) {
  HostTextCache hosts;
  return decode_pulled_messages(body, hosts);
}

PulledMessages decode_pulled_messages(std::span<const uint8_t> body, HostTextCache& hosts,
                                      std::string_view appended_properties) {
  MQ_ASSERT(appended_properties.empty() || appended_properties.back() == '\x02');
  PulledMessages out;
  size_t position = 0;
  while (position < body.size()) {
    Result<store::DecodedRecord> record = store::decode_record(body.subspan(position));
    if (!record.ok()) {
      out.error = record.status().with_context("pulled record at byte " + std::to_string(position));
      return out;
    }
    if (record->kind != store::RecordKind::kMessage) {
      out.error = Status::Corruption("pulled record at byte " + std::to_string(position) + " is a blank record");
      return out;
    }
    Result<MessageExt> message = to_message_ext(record->message, hosts, appended_properties);
    if (!message.ok()) {
      out.error = message.status().with_context("pulled record at byte " + std::to_string(position));
      return out;
    }
    out.messages.push_back(std::move(message).value());
    MQ_ASSERT(record->total_size > 0);  // decode_record refuses sizes below the minimum
    position += static_cast<size_t>(record->total_size);
  }
  return out;
}

}  // namespace mqlab::client
