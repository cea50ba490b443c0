// Tag subscriptions: turning a subscribe expression into the SubscriptionData
// a heartbeat and a pull carry, and the client-side tag check (RocketMQ's
// FilterAPI.buildSubscriptionData and PullAPIWrapper.processPullResult).
//
// "*" (or empty) subscribes to every message. "TagA || TagB" subscribes to
// those tags: tagsSet holds them trimmed, codeSet their Java String.hashCode().
// The broker filters by code (the ConsumeQueue stores only the tag's hash),
// so two tags with one hash both reach the client, which therefore checks the
// tag itself; a message without a tag never matches a tag list.
#pragma once

#include <cstdint>
#include <string_view>

#include "broker/common/status.h"
#include "broker/remoting/route_data.h"

namespace mqlab::client {

inline constexpr std::string_view kSubscribeAll = "*";

// InvalidArgument when the expression names no tag at all ("||", "  "):
// Java would silently subscribe to everything; a typo should not.
// sub_version: the subscribe time in ms (Java's System.currentTimeMillis()).
Result<remoting::SubscriptionData> build_subscription_data(std::string_view topic, std::string_view expression,
                                                           int64_t sub_version);

// Whether a message with these tags is one the subscription asked for.
bool tags_match(const remoting::SubscriptionData& subscription, std::string_view tags);

}  // namespace mqlab::client
