#include "broker/admin_cli/perf_consumer.h"

#include <algorithm>
#include <ostream>

#include "broker/admin_cli/perf_producer.h"
#include "broker/admin_cli/text_format.h"
#include "broker/common/crc32.h"

namespace mqlab::admin_cli {
namespace {

constexpr Nanos kConsumerStatsInterval = seconds(1);

client::PushConsumerConfig consumer_config(const PerfConsumeOptions& options) {
  client::PushConsumerConfig config;
  config.consumerGroup = options.group;
  config.consumeConcurrentlyPerQueue = options.consume_concurrency;
  config.consumeFromWhere = options.from_first ? client::ConsumeFromWhere::CONSUME_FROM_FIRST_OFFSET
                                               : client::ConsumeFromWhere::CONSUME_FROM_LAST_OFFSET;
  return config;
}

double average(int64_t sum, uint64_t count) {
  return count == 0 ? 0.0 : static_cast<double>(sum) / static_cast<double>(count);
}

}  // namespace

PerfConsumer::PerfConsumer(client::MQClientInstance& instance, PerfConsumeOptions options, std::ostream& out)
    : instance_(instance), options_(std::move(options)), out_(out), consumer_(instance, consumer_config(options_)) {
  MQ_ASSERT(options_.consume_concurrency > 0);
  MQ_ASSERT(options_.message_quantity >= 0 && options_.duration_s >= 0);
}

PerfConsumer::~PerfConsumer() {
  if (tick_timer_ != env::kNoTimer) instance_.env().executor().cancel(tick_timer_);
}

void PerfConsumer::start(std::function<void(Status)> done) {
  MQ_ASSERT(done != nullptr);
  MQ_ASSERT(done_ == nullptr);  // one run per PerfConsumer
  done_ = std::move(done);
  out_ << strprintf("topic: %s, threadCount %d, group: %s, messageQuantity: %lld, duration: %lld s, from: %s\n",
                    options_.topic.c_str(), options_.consume_concurrency, options_.group.c_str(),
                    static_cast<long long>(options_.message_quantity), static_cast<long long>(options_.duration_s),
                    options_.from_first ? "first offset" : "last offset");
  Status ready = consumer_.subscribe(options_.topic, "*");
  if (ready.ok() && !options_.history.empty()) {
    Result<std::unique_ptr<PerfHistory>> opened =
        PerfHistory::open(instance_.env(), options_.history, instance_.client_id(), "consumer");
    if (opened.ok()) history_ = std::move(opened).value();
    ready = opened.status();
  }
  if (!ready.ok()) {
    finished_ = true;
    instance_.env().executor().post(lifetime_.guard([this, ready] { done_(ready); }));
    return;
  }
  consumer_.register_message_listener([this](const client::MessageExt& message, client::ConsumeCallback consumed) {
    on_message(message);
    consumed(client::ConsumeResult::SUCCESS);
  });
  consumer_.start(lifetime_.guard([this](Status status) {
    if (!status.ok()) {
      finished_ = true;
      return done_(status.with_context("starting the consumer"));
    }
    out_ << "Consumer Started.\n";
    start_ = instance_.env().clock().now_ns();
    last_tick_ = start_;
    tick_timer_ = instance_.env().executor().run_after(kConsumerStatsInterval, lifetime_.guard([this] { tick(); }));
  }));
}

void PerfConsumer::on_message(const client::MessageExt& message) {
  // Whatever the handler acknowledges is in the history, even after the
  // end: its offset is committed, so no one else will see it.
  if (history_ != nullptr) record_receipt(message);
  if (stopping_) return;  // handed over after the end: consumed, not counted
  const int64_t now_ms = instance_.env().clock().wall_ms();
  // Clocks of two machines may disagree; a negative latency counts as 0.
  const int64_t born_ms = std::max<int64_t>(0, now_ms - message.bornTimestamp);
  const int64_t stored_ms = std::max<int64_t>(0, now_ms - message.storeTimestamp);
  ++totals_.received;
  totals_.born_to_consumed.record(millis(born_ms));
  totals_.stored_to_consumed.record(millis(stored_ms));
  ++interval_.received;
  interval_.born_sum_ms += born_ms;
  interval_.stored_sum_ms += stored_ms;
  interval_.born_max_ms = std::max(interval_.born_max_ms, born_ms);
  interval_.stored_max_ms = std::max(interval_.stored_max_ms, stored_ms);
  if (options_.message_quantity > 0 && totals_.received >= static_cast<uint64_t>(options_.message_quantity)) {
    // Not from inside the consumer's own call: shut it down from the executor.
    instance_.env().executor().post(lifetime_.guard([this] { stop(); }));
  }
}

void PerfConsumer::record_receipt(const client::MessageExt& message) {
  const std::optional<std::string> producer = message.property(kPropertyProducer);
  const std::optional<std::string> seq_text = message.property(kPropertySeq);
  uint64_t seq = 0;
  const bool numbered = seq_text.has_value() && !seq_text->empty() &&
                        seq_text->find_first_not_of("0123456789") == std::string::npos && seq_text->size() < 20;
  if (numbered) seq = std::stoull(*seq_text);
  if (!producer || producer->empty() || !numbered) {
    ++totals_.without_seq;  // another producer's message: not ours to judge
    return;
  }
  history_->receipt(ReceiptLine{.producer = *producer,
                                .seq = seq,
                                .at = instance_.env().clock().wall_ns(),
                                .group = options_.group,
                                .consumer = instance_.client_id(),
                                .broker_name = message.brokerName,
                                .queue_id = message.queueId,
                                .queue_offset = message.queueOffset,
                                .body_crc = crc32_ieee(0, message.body),
                                .reconsume_times = message.reconsumeTimes});
}

void PerfConsumer::flush_history() {
  if (history_ == nullptr) return;
  if (Status flushed = history_->flush(); !flushed.ok() && history_error_.ok()) history_error_ = flushed;
}

void PerfConsumer::tick() {
  tick_timer_ = env::kNoTimer;
  if (stopping_) return;
  const Nanos at = instance_.env().clock().now_ns();
  const double elapsed_s = static_cast<double>(at - last_tick_) / kNanosPerSecond;
  out_ << strprintf("Current Time: %s TPS: %lld FAIL: 0 AVG(B2C) RT(ms): %7.3f AVG(S2C) RT(ms): %7.3f "
                    "MAX(B2C) RT(ms): %lld MAX(S2C) RT(ms): %lld\n",
                    human_time_ms(instance_.env().clock().wall_ms()).c_str(),
                    static_cast<long long>(elapsed_s > 0 ? static_cast<double>(interval_.received) / elapsed_s : 0),
                    average(interval_.born_sum_ms, interval_.received),
                    average(interval_.stored_sum_ms, interval_.received),
                    static_cast<long long>(interval_.born_max_ms), static_cast<long long>(interval_.stored_max_ms));
  out_.flush();
  interval_ = Interval{};
  last_tick_ = at;
  flush_history();
  if (!history_error_.ok()) return stop();
  const bool out_of_time = options_.duration_s > 0 && at - start_ >= seconds(options_.duration_s);
  if (out_of_time || (options_.interrupted && options_.interrupted())) return stop();
  tick_timer_ = instance_.env().executor().run_after(kConsumerStatsInterval, lifetime_.guard([this] { tick(); }));
}

void PerfConsumer::stop() {
  if (stopping_ || finished_) return;
  stopping_ = true;
  if (tick_timer_ != env::kNoTimer) instance_.env().executor().cancel(tick_timer_);
  tick_timer_ = env::kNoTimer;
  totals_.elapsed = instance_.env().clock().now_ns() - start_;
  consumer_.shutdown(lifetime_.guard([this] { finish(); }));
}

void PerfConsumer::finish() {
  MQ_ASSERT(stopping_);
  MQ_ASSERT(!finished_);
  finished_ = true;
  flush_history();
  print_summary();
  done_(history_error_);
}

void PerfConsumer::print_summary() {
  const double elapsed_s = static_cast<double>(totals_.elapsed) / kNanosPerSecond;
  const LatencyHistogram& born = totals_.born_to_consumed;
  out_ << strprintf("[Complete] Consume Total: %llu Consume TPS: %lld AVG(B2C) RT(ms): %7.3f MAX(B2C) RT(ms): %lld\n",
                    static_cast<unsigned long long>(totals_.received),
                    static_cast<long long>(elapsed_s > 0 ? static_cast<double>(totals_.received) / elapsed_s : 0),
                    born.mean() / kNanosPerMilli, static_cast<long long>(born.max() / kNanosPerMilli));
  out_ << "B2C RT(ms) " << percentiles_ms_text(born) << "\n";
  if (history_ != nullptr) {
    out_ << strprintf("History: %llu lines, %llu messages without PRODUCER/SEQ\n",
                      static_cast<unsigned long long>(history_->lines()),
                      static_cast<unsigned long long>(totals_.without_seq));
  }
  out_.flush();
}

}  // namespace mqlab::admin_cli
