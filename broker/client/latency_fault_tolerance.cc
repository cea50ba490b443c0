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
  items_[broker_name] = FaultItem{latency_ms, now_ms + duration};
}

bool LatencyFaultTolerance::is_available(const std::string& broker_name, int64_t now_ms) const {
  const auto it = items_.find(broker_name);
  return it == items_.end() || now_ms >= it->second.startTimestamp;
}

int64_t LatencyFaultTolerance::available_at_ms(const std::string& broker_name, int64_t now_ms) const {
  const auto it = items_.find(broker_name);
  return it == items_.end() ? now_ms : std::max(now_ms, it->second.startTimestamp);
}

}  // namespace mqlab::client
