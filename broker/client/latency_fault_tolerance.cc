#include "broker/client/latency_fault_tolerance.h"

#include <algorithm>

#include "broker/common/assert.h"

namespace mqlab::client {

static_assert(kLatencyMax.size() == kNotAvailableDuration.size());

int64_t compute_not_available_duration(int64_t latency_ms) {
  for (size_t i = kLatencyMax.size(); i-- > 0;) {
    if (latency_ms >= kLatencyMax[i]) return kNotAvailableDuration[i];
  }
  return 0;
}

void LatencyFaultTolerance::update_fault_item(const std::string& broker_name, int64_t latency_ms, bool isolation,
                                              int64_t now_ms) {
  MQ_ASSERT(latency_ms >= 0);
  const int64_t duration = compute_not_available_duration(isolation ? kIsolationLatencyMs : latency_ms);
  MQ_ASSERT(duration >= 0);
  const FaultItem item{latency_ms, now_ms + duration};
  if (Items::value_type* found = found_.find(items_, broker_name)) {
    found->second = item;
  } else {
    items_.emplace(broker_name, item);
  }
}

bool LatencyFaultTolerance::is_available(const std::string& broker_name, int64_t now_ms) const {
  const Items::value_type* found = found_.find(items_, broker_name);
  return found == nullptr || now_ms >= found->second.startTimestamp;
}

int64_t LatencyFaultTolerance::available_at_ms(const std::string& broker_name, int64_t now_ms) const {
  const Items::value_type* found = found_.find(items_, broker_name);
  return found == nullptr ? now_ms : std::max(now_ms, found->second.startTimestamp);
}

}  // namespace mqlab::client
