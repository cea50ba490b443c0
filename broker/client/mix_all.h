// Names RocketMQ reserves and every client agrees on (MixAll.java): the retry
// and dead-letter topics of a consumer group, the auto-create template topic,
// the hidden producer group, the master's broker id.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mqlab::client {

inline constexpr std::string_view kRetryGroupTopicPrefix = "%RETRY%";
inline constexpr std::string_view kDlqGroupTopicPrefix = "%DLQ%";
// TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC: sent as defaultTopic in SEND_MESSAGE_V2.
inline constexpr std::string_view kAutoCreateTopicKey = "TBW102";
// The group of the producer a consumer uses to re-send a message it could not
// send back (MixAll.CLIENT_INNER_PRODUCER_GROUP).
inline constexpr std::string_view kClientInnerProducerGroup = "CLIENT_INNER_PRODUCER";
inline constexpr int64_t kMasterId = 0;

// PermName bits of QueueData.perm.
inline constexpr int32_t kPermRead = 4;
inline constexpr int32_t kPermWrite = 2;
inline constexpr int32_t kPermInherit = 1;

inline std::string retry_topic(std::string_view group) { return std::string(kRetryGroupTopicPrefix) + std::string(group); }
inline bool is_retry_topic(std::string_view topic) { return topic.starts_with(kRetryGroupTopicPrefix); }

}  // namespace mqlab::client
