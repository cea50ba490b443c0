// LatencyFaultTolerance: the producer's memory of which broker groups were
// slow or failing lately, so that sends avoid them for a back-off period
// (RocketMQ's MQFaultStrategy.updateFaultItem and LatencyFaultToleranceImpl,
// used when sendLatencyFaultEnable is on).
//
// After every send attempt the producer reports the broker's latency. The
// back-off is the notAvailableDuration of the largest latencyMax step the
// latency reached:
//
// | latency >= ms | 0 | 50 | 100 | 550    | 1000   | 2000    | 3000    | 15000   |
// | back-off ms   | 0 | 0  | 0   | 30 000 | 60 000 | 120 000 | 180 000 | 600 000 |
//
// A failed attempt (error response, timeout, broken connection) is an
// "isolation": Java reports it as a latency of 30 000 ms, which is past the
// 15 000 step, so the broker is avoided for 600 s unless every broker is.
// Each report replaces the broker's previous one (a quick success after a
// failure makes it available at once), as Java's FaultItem update does.
//
// Times are the monotonic clock in ms (env.clock().now_ns()), never the wall
// clock. Invariant: every item's startTimestamp >= the report time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "broker/common/name_order.h"
#include "broker/common/remembered_entries.h"

namespace mqlab::client {

inline constexpr std::array<int64_t, 7> kLatencyMax = {50, 100, 550, 1'000, 2'000, 3'000, 15'000};
inline constexpr std::array<int64_t, 7> kNotAvailableDuration = {0, 0, 30'000, 60'000, 120'000, 180'000, 600'000};
// What MQFaultStrategy passes as the latency of a failed attempt.
inline constexpr int64_t kIsolationLatencyMs = 30'000;

// MQFaultStrategy.computeNotAvailableDuration.
int64_t compute_not_available_duration(int64_t latency_ms);

class LatencyFaultTolerance {
 public:
  struct FaultItem {
    int64_t currentLatency = 0;  // ms, as reported
    int64_t startTimestamp = 0;  // monotonic ms from which the broker is available again
  };

  // Records one attempt's outcome; isolation = the attempt failed.
  void update_fault_item(const std::string& broker_name, int64_t latency_ms, bool isolation, int64_t now_ms);
  // True for a broker never reported, or whose back-off has passed.
  bool is_available(const std::string& broker_name, int64_t now_ms) const;
  // When the broker's back-off ends (now_ms for one that is available).
  int64_t available_at_ms(const std::string& broker_name, int64_t now_ms) const;
  void remove(const std::string& broker_name) {
    found_.forget();
    items_.erase(broker_name);
  }

  const std::map<std::string, FaultItem, NameLess>& items() const { return items_; }

 private:
  using Items = std::map<std::string, FaultItem, NameLess>;
  // A send asks about its queue's broker and then reports on it: the same
  // one or two groups, whose search compared their names each time.
  static constexpr size_t kRemembered = 2;

  Items items_;
  mutable RememberedEntries<Items, kRemembered> found_;  // forgotten by remove
};

}  // namespace mqlab::client
