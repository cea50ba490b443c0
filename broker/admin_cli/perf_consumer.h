// PerfConsumer: the engine of `mqadmin perf consume`, RocketMQ's benchmark
// Consumer.java on mqlab's PushConsumer: a group (benchmark_consumer, with a
// "_<0..99>" suffix unless told otherwise, as Consumer.java's -p) subscribes
// to the topic with "*" and counts what it is handed. Every second a line in
// Consumer.java's words, this second's figures:
//   Current Time: <time> TPS: 48123 FAIL: 0 AVG(B2C) RT(ms):   2.154 AVG(S2C) RT(ms):   1.032 MAX(B2C) RT(ms): 9 MAX(S2C) RT(ms): 7
// B2C is born (the producer's timestamp) to consumed, S2C stored to consumed,
// both in wall-clock milliseconds as the messages carry them (so across
// machines they include clock skew). The run ends after duration, after
// message_quantity messages, or on stop(); the consumer then shuts down
// (committing its offsets) and the summary follows:
//   [Complete] Consume Total: N Consume TPS: T AVG(B2C) RT(ms): .. MAX(B2C) RT(ms): ..
//   B2C RT(ms) p50: .. p99: .. p999: .. max: ..
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

#include "broker/admin_cli/latency_histogram.h"
#include "broker/admin_cli/perf_history.h"
#include "broker/client/push_consumer.h"
#include "broker/common/lifetime.h"

namespace mqlab::admin_cli {

struct PerfConsumeOptions {
  std::string topic = "BenchmarkTest";
  std::string group = "benchmark_consumer";  // the suffix, if any, is already on
  int32_t consume_concurrency = 20;           // -w: handler calls in flight per queue
  int64_t message_quantity = 0;               // -q: stop after this many; 0 = no limit
  int64_t duration_s = 0;                     // --duration; 0 = no limit
  bool from_first = false;                    // a new group starts at the first offset, not the last
  // --history: a history file (perf_history.h) with a receipt per message
  // handed to the handler that carries PRODUCER and SEQ (perf produce
  // --history sets them), including those handed over while stopping.
  std::string history;
  // Polled every second: true stops the run as stop() does (SIGINT). May be empty.
  std::function<bool()> interrupted;
};

struct PerfConsumeTotals {
  uint64_t received = 0;
  uint64_t without_seq = 0;  // with --history: messages no history-writing producer sent
  LatencyHistogram born_to_consumed;    // ms resolution, stored as Nanos
  LatencyHistogram stored_to_consumed;
  Nanos elapsed = 0;  // from start to the end
};

class PerfConsumer {
 public:
  // Requires: instance and out outlive the consumer.
  PerfConsumer(client::MQClientInstance& instance, PerfConsumeOptions options, std::ostream& out);
  ~PerfConsumer();

  // done runs once: when the run has ended and the summary is printed (Ok),
  // or with the reason the consumer could not start.
  void start(std::function<void(Status)> done);
  void stop();
  bool finished() const { return finished_; }
  const PerfConsumeTotals& totals() const { return totals_; }
  client::PushConsumer& consumer() { return consumer_; }

 private:
  struct Interval {
    uint64_t received = 0;
    int64_t born_sum_ms = 0;
    int64_t stored_sum_ms = 0;
    int64_t born_max_ms = 0;
    int64_t stored_max_ms = 0;
  };

  void on_message(const client::MessageExt& message);
  void record_receipt(const client::MessageExt& message);
  void flush_history();
  void tick();
  void finish();
  void print_summary();

  client::MQClientInstance& instance_;
  const PerfConsumeOptions options_;
  std::ostream& out_;
  client::PushConsumer consumer_;
  std::function<void(Status)> done_;
  Nanos start_ = 0;
  Nanos last_tick_ = 0;
  bool stopping_ = false;
  bool finished_ = false;
  env::TimerId tick_timer_ = env::kNoTimer;
  Interval interval_;
  PerfConsumeTotals totals_;
  std::unique_ptr<PerfHistory> history_;  // --history, when given
  Status history_error_;                  // the first failed history write, which ends the run
  LifetimeToken lifetime_;
};

}  // namespace mqlab::admin_cli
