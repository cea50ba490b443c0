// PullSysFlag: the bits of a PULL_MESSAGE request's sysFlag
// (apache/rocketmq common/…/sysflag/PullSysFlag.java), shared by the client
// that sets them and the PullMessageProcessor that reads them.
#pragma once

#include <cstdint>

namespace mqlab::remoting {

inline constexpr int32_t kPullFlagCommitOffset = 0x1;
inline constexpr int32_t kPullFlagSuspend = 0x2;
inline constexpr int32_t kPullFlagSubscription = 0x4;
inline constexpr int32_t kPullFlagClassFilter = 0x8;

}  // namespace mqlab::remoting
