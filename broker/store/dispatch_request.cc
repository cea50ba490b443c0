// The two ways to a DispatchRequest (dispatch_request.h): from a decoded
// record, and from the put that wrote it.
#include "broker/store/dispatch_request.h"

#include "broker/common/assert.h"
#include "broker/common/assign_text.h"
#include "broker/store/commit_log.h"
#include "broker/store/message_codec.h"

namespace mqlab::store {

void dispatch_request_of_record(const DecodedMessage& message, PhyOffset offset, DispatchRequest& request) {
  MQ_ASSERT(message.total_size >= kMessageFixedSizeIpv4);
  assign_text(request.topic, message.topic);
  request.queue_id = message.queue_id;
  request.commit_log_offset = offset;
  request.msg_size = message.total_size;
  request.store_timestamp_ms = message.store_timestamp_ms;
  request.consume_queue_offset = message.queue_offset;
  request.sysflag = message.sysflag;
  request.prepared_transaction_offset = message.prepared_transaction_offset;
  // Three lookups in place: decoding every property into a map cost more
  // than the rest of the dispatch.
  const std::string_view properties = message.properties_text;
  const std::optional<std::string_view> tags = find_property(properties, kPropertyTags);
  request.tags_code = tags ? tags_code(*tags) : 0;
  assign_text(request.keys, find_property(properties, kPropertyKeys).value_or(std::string_view()));
  assign_text(request.uniq_key, find_property(properties, kPropertyUniqKey).value_or(std::string_view()));
}

void dispatch_request_of_put(const MessageToStore& message, const AppendMessageResult& appended,
                             DispatchRequest& request) {
  MQ_ASSERT(appended.wrote_bytes >= kMessageFixedSizeIpv4);
  MQ_ASSERT(appended.wrote_offset.value() >= 0);
  assign_text(request.topic, message.topic);
  request.queue_id = message.queue_id;
  request.commit_log_offset = appended.wrote_offset;
  request.msg_size = appended.wrote_bytes;
  request.store_timestamp_ms = appended.store_timestamp_ms;
  request.consume_queue_offset = appended.queue_offset;
  request.sysflag = stored_sysflag(message);  // the record's, host bits included
  request.prepared_transaction_offset = message.prepared_transaction_offset;
  // The record's PROPERTIES text holds each name once, so what find_property
  // finds there is the map's value. One pass over the handful of entries:
  // three binary searches cost about 300 instructions a put.
  const std::string* tags = nullptr;
  const std::string* keys = nullptr;
  const std::string* uniq_key = nullptr;
  for (const auto& [name, value] : message.properties) {
    if (name == kPropertyTags) {
      tags = &value;
    } else if (name == kPropertyKeys) {
      keys = &value;
    } else if (name == kPropertyUniqKey) {
      uniq_key = &value;
    }
  }
  request.tags_code = tags ? tags_code(*tags) : 0;
  assign_text(request.keys, keys ? std::string_view(*keys) : std::string_view());
  assign_text(request.uniq_key, uniq_key ? std::string_view(*uniq_key) : std::string_view());
}

}  // namespace mqlab::store
