// receipt: a ReceiptRecord as the checker and loss-bound tests build them:
// consumer c0 reading queue 0 of broker-a unless a test says otherwise, so
// each test names only what it varies.
#pragma once

#include <cstdint>
#include <string_view>

#include "sim/history.h"

namespace mqlab::sim {

inline ReceiptRecord receipt(uint64_t seq, Nanos at, int64_t queue_offset, std::string_view group = "g",
                             int32_t queue_id = 0, int32_t reconsume_times = 0, std::string_view consumer = "c0") {
  ReceiptRecord r;
  r.seq = seq;
  r.group = group;
  r.consumer = consumer;
  r.at = at;
  r.broker_name = "broker-a";
  r.queue_id = queue_id;
  r.queue_offset = queue_offset;
  r.reconsume_times = reconsume_times;
  return r;
}

}  // namespace mqlab::sim
