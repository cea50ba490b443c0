// messageDelayLevel: the delay of each level a delayed message (the DELAY
// property) or a consumer's retry can ask for, RocketMQ's
// MessageStoreConfig.messageDelayLevel ("1s 5s 10s ..."; level 1 is the
// first item). ScheduleMessageService keeps one SCHEDULE_TOPIC_XXXX queue
// per level (queue id = level - 1) and parses this text at load.
//
// Grammar: items separated by spaces; an item is a positive integer followed
// by one unit, s (seconds), m (minutes), h (hours) or d (days), as RocketMQ's
// parseDelayLevel accepts. 1 to kMaxDelayLevels items.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "broker/common/status.h"

namespace mqlab::store {

// RocketMQ's default: 18 levels, 1s ... 2h.
inline constexpr std::string_view kDefaultMessageDelayLevel =
    "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h";
// A sanity bound, not RocketMQ's (it has none): every level is a
// ConsumeQueue and a timer, and a consumer's retry walks the levels up to
// maxReconsumeTimes (16 by default), so far fewer are ever useful.
inline constexpr size_t kMaxDelayLevels = 64;

// The delay of each level in ms, level 1 first. InvalidArgument naming the
// key messageDelayLevel, the whole value and the bad item.
Result<std::vector<int64_t>> parse_message_delay_level(std::string_view text);

}  // namespace mqlab::store
