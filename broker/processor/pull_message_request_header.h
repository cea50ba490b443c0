// PullMessageRequestHeader: the ext fields of a PULL_MESSAGE (11) request
// (RocketMQ's PullMessageRequestHeader), parsed once per request: the
// PullMessageProcessor reads it at the first run, and a pull parked in the
// PullRequestHoldService keeps it for its re-run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "broker/remoting/pull_sys_flag.h"

namespace mqlab::broker {

using remoting::kPullFlagCommitOffset;
using remoting::kPullFlagSubscription;
using remoting::kPullFlagSuspend;

// ExpressionType.TAG: what a pull that names no expression type filters by.
inline constexpr std::string_view kDefaultExpressionType = "TAG";

struct PullMessageRequestHeader {
  std::string consumerGroup;
  std::string topic;
  int32_t queueId = 0;
  int64_t queueOffset = 0;
  int32_t maxMsgNums = 0;
  int32_t sysFlag = 0;
  int64_t commitOffset = 0;
  int64_t suspendTimeoutMillis = 0;
  std::optional<std::string> subscription;
  int64_t subVersion = 0;
  std::string expressionType{kDefaultExpressionType};

  bool operator==(const PullMessageRequestHeader&) const = default;
};

}  // namespace mqlab::broker
