#include "broker/admin_cli/perf_producer.h"

#include <ostream>

#include "broker/admin_cli/text_format.h"
#include "broker/client/countdown.h"
#include "broker/common/crc32.h"

namespace mqlab::admin_cli {
namespace {

using client::SendStatus;

static_assert(static_cast<size_t>(SendStatus::UNKNOWN) + 1 == std::tuple_size_v<decltype(PerfProduceTotals::by_status)>);

// Producer.java sleeps 3 s after a failed send before that thread tries again.
constexpr Nanos kPauseAfterFailure = seconds(3);
constexpr Nanos kProducerStatsInterval = seconds(1);

double ms(Nanos value) { return static_cast<double>(value) / static_cast<double>(kNanosPerMilli); }

std::vector<uint8_t> random_alphanumerics(env::Random& random, int32_t size) {
  static constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::vector<uint8_t> out(static_cast<size_t>(size));
  for (uint8_t& c : out) c = static_cast<uint8_t>(kAlphabet[random.uniform(kAlphabet.size())]);
  return out;
}

client::ProducerConfig producer_config(const PerfProduceOptions& options) {
  client::ProducerConfig config;
  config.producerGroup = options.producer_group;
  return config;
}

std::vector<std::string> topic_names(const PerfProduceOptions& options) {
  if (options.topics == 1) return {options.topic};
  std::vector<std::string> names;
  for (int32_t i = 0; i < options.topics; ++i) names.push_back(options.topic + "_" + std::to_string(i));
  return names;
}

}  // namespace

uint64_t PerfProduceTotals::completed() const {
  uint64_t total = 0;
  for (uint64_t n : by_status) total += n;
  return total;
}

uint64_t PerfProduceTotals::stored() const { return completed() - send_failed(); }

uint64_t PerfProduceTotals::send_failed() const { return count(SendStatus::FAILED) + count(SendStatus::UNKNOWN); }

uint64_t PerfProduceTotals::response_failed() const { return stored() - count(SendStatus::SEND_OK); }

std::string percentiles_ms_text(const LatencyHistogram& histogram) {
  return strprintf("p50: %.3f p99: %.3f p999: %.3f max: %.3f", ms(histogram.percentile(0.50)),
                   ms(histogram.percentile(0.99)), ms(histogram.percentile(0.999)), ms(histogram.max()));
}

PerfProducer::PerfProducer(client::MQClientInstance& instance, PerfProduceOptions options, std::ostream& out)
    : instance_(instance),
      options_(std::move(options)),
      out_(out),
      topics_(topic_names(options_)),
      body_(random_alphanumerics(instance.env().random(), options_.message_size)),
      producer_id_(options_.producer_id.empty() ? instance.client_id() : options_.producer_id),
      body_crc_(crc32_ieee(0, body_)) {
  MQ_ASSERT(options_.senders > 0);
  MQ_ASSERT(options_.message_size > 0);
  MQ_ASSERT(body_.size() == static_cast<size_t>(options_.message_size));
  MQ_ASSERT(options_.message_quantity >= 0 && options_.duration_s >= 0 && options_.rate >= 0);
  // Every producer has at least one sender; otherwise --producers would
  // promise connections that carry nothing.
  MQ_ASSERT(options_.producers >= 1 && options_.producers <= options_.senders);
  MQ_ASSERT(options_.topics >= 1 && topics_.size() == static_cast<size_t>(options_.topics));
  instances_.push_back(&instance_);
  for (int32_t i = 1; i < options_.producers; ++i) {
    client::ClientConfig config = instance_.config();
    config.instanceName += "_" + std::to_string(i);
    own_instances_.push_back(std::make_unique<client::MQClientInstance>(instance_.env(), std::move(config)));
    instances_.push_back(own_instances_.back().get());
  }
  for (client::MQClientInstance* client : instances_) {
    producers_.push_back(std::make_unique<client::Producer>(*client, producer_config(options_)));
  }
  MQ_ASSERT(producers_.size() == static_cast<size_t>(options_.producers));
}

PerfProducer::~PerfProducer() {
  if (tick_timer_ != env::kNoTimer) instance_.env().executor().cancel(tick_timer_);
}

Nanos PerfProducer::now() const { return instance_.env().clock().now_ns(); }

void PerfProducer::start(std::function<void(Status)> done) {
  MQ_ASSERT(done != nullptr);
  MQ_ASSERT(done_ == nullptr);  // one run per PerfProducer
  done_ = std::move(done);
  out_ << strprintf("topic: %s threadCount: %d messageSize: %d keyEnable: %s messageQuantity: %lld duration: %lld s "
                    "rate: %lld/s producers: %d topics: %d\n",
                    options_.topic.c_str(), options_.senders, options_.message_size, options_.keys ? "true" : "false",
                    static_cast<long long>(options_.message_quantity), static_cast<long long>(options_.duration_s),
                    static_cast<long long>(options_.rate), options_.producers, options_.topics);
  for (Status opened : {open_ack_log(), open_history()}) {
    if (opened.ok()) continue;
    finished_ = true;
    return done_(opened);
  }
  auto first_error = std::make_shared<Status>();
  auto started = client::make_countdown(producers_.size(), lifetime_.guard([this, first_error] {
    if (!first_error->ok()) return done_(first_error->with_context("starting the producer"));
    fetch_routes();
  }));
  for (auto& producer : producers_) {
    producer->start([first_error, started](Status status) {
      if (!status.ok() && first_error->ok()) *first_error = status;
      started();
    });
  }
}

void PerfProducer::fetch_routes() {
  // Every client looks up every topic now, so the first sends do not pay
  // for route lookups inside the measured time, and a missing topic fails
  // the run at once.
  MQ_ASSERT(route_lookups_started_ == 0 && route_lookups_done_ == 0);
  look_up_routes();
}

void PerfProducer::look_up_routes() {
  const size_t total = instances_.size() * topics_.size();
  MQ_ASSERT(route_lookups_done_ <= route_lookups_started_ && route_lookups_started_ <= total);
  // After a failure nothing new starts; the run fails once those out return.
  while (route_error_.ok() && route_lookups_started_ < total &&
         route_lookups_started_ - route_lookups_done_ < kRouteLookupsInFlight) {
    const size_t pair = route_lookups_started_++;
    const std::string& topic = topics_[pair % topics_.size()];
    instances_[pair / topics_.size()]->update_topic_route(topic, lifetime_.guard([this, topic](Status status) {
      ++route_lookups_done_;
      if (!status.ok() && route_error_.ok()) {
        route_error_ = status.with_context("route of topic " + topic + " (create it with mqadmin updateTopic)");
      }
      look_up_routes();
    }));
  }
  const bool all_back = route_lookups_done_ == route_lookups_started_;
  if (!routes_reported_ && all_back && (route_lookups_started_ == total || !route_error_.ok())) {
    routes_reported_ = true;  // a lookup answering inline must not report twice
    on_route(route_error_);
  }
}

void PerfProducer::shutdown(client::DoneCallback done) {
  MQ_ASSERT(done != nullptr);
  stop();
  auto instances_down = [this, done = std::move(done)] {
    if (own_instances_.empty()) return done();
    auto all_down = client::make_countdown(own_instances_.size(), done);
    for (auto& client : own_instances_) client->shutdown(all_down);
  };
  auto producers_down = client::make_countdown(producers_.size(), lifetime_.guard(std::move(instances_down)));
  for (auto& producer : producers_) producer->shutdown(producers_down);
}

const std::string& PerfProducer::topic_of(uint64_t seq) const { return topics_[seq % topics_.size()]; }

Status PerfProducer::open_ack_log() {
  if (options_.ack_log.empty()) return Status::Ok();
  MQ_ASSIGN_OR_RETURN(ack_log_, instance_.env().files().open(options_.ack_log, {.create = true, .truncate = true}));
  return Status::Ok();
}

Status PerfProducer::open_history() {
  if (options_.history.empty()) return Status::Ok();
  MQ_ASSIGN_OR_RETURN(history_, PerfHistory::open(instance_.env(), options_.history, producer_id_, "producer"));
  return Status::Ok();
}

void PerfProducer::log_ack(const client::SendResult& result, const std::string& key) {
  if (ack_log_ == nullptr) return;
  const std::string line = strprintf("%s %s %d %lld %s\n", result.msgId.c_str(), result.messageQueue.brokerName.c_str(),
                                     result.messageQueue.queueId, static_cast<long long>(result.queueOffset), key.c_str());
  const Status written = ack_log_->pwrite(
      ack_log_size_, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(line.data()), line.size()));
  // A lost ack line would make a fault test report a loss that did not
  // happen: stop loudly instead.
  MQ_ASSERT(written.ok());
  ack_log_size_ += line.size();
}

void PerfProducer::on_route(Status status) {
  if (!status.ok()) {
    finished_ = true;
    return done_(status);
  }
  start_ = now();
  last_tick_ = start_;
  tick_timer_ = instance_.env().executor().run_after(kProducerStatsInterval, lifetime_.guard([this] { tick(); }));
  for (int32_t sender = 0; sender < options_.senders; ++sender) send_next(sender);
  maybe_finish();
}

void PerfProducer::stop() {
  stopping_ = true;
  maybe_finish();
}

client::Message PerfProducer::build_message(uint64_t seq) {
  client::Message message;
  message.topic = topic_of(seq);
  message.body = body_;
  if (history_ != nullptr) {
    // The history names a message by (producer, seq); the consumer's history
    // reads both back from the properties.
    message.properties[kPropertyProducer] = producer_id_;
    message.properties[kPropertySeq] = std::to_string(seq);
  }
  if (ack_log_ != nullptr) {
    message.keys = std::to_string(issued_);  // unique in the run: the ack log names messages by it
  } else if (options_.keys) {
    message.keys = std::to_string(instance_.env().clock().wall_ms() / 1000);
  }
  return message;
}

void PerfProducer::send_next(int32_t sender) {
  MQ_ASSERT(sender >= 0 && sender < options_.senders);
  if (stopping_ || finished_) return;
  if (options_.message_quantity > 0 && issued_ >= options_.message_quantity) return;
  if (options_.rate > 0) {
    // Send number issued_ may start at start_ + issued_ / rate seconds.
    const Nanos due = start_ + static_cast<Nanos>(static_cast<double>(issued_) * kNanosPerSecond /
                                                  static_cast<double>(options_.rate));
    if (const Nanos wait = due - now(); wait > 0) {
      instance_.env().executor().run_after(wait, lifetime_.guard([this, sender] { send_next(sender); }));
      return;
    }
  }
  const uint64_t seq = static_cast<uint64_t>(issued_);
  ++issued_;
  ++in_flight_;
  client::Message message = build_message(seq);
  const Nanos begin = now();
  std::string key = message.keys;
  if (history_ != nullptr) {
    history_->send(producer_id_, seq, instance_.env().clock().wall_ns(), key, body_crc_, message.topic);
  }
  client::Producer& producer = *producers_[static_cast<size_t>(sender % options_.producers)];
  producer.send(std::move(message),
                lifetime_.guard([this, sender, begin, seq, key = std::move(key)](client::SendResult result) {
                  on_sent(sender, result, now() - begin, key, seq);
                }));
}

void PerfProducer::on_sent(int32_t sender, const client::SendResult& result, Nanos latency, const std::string& key,
                           uint64_t seq) {
  MQ_ASSERT(in_flight_ > 0);
  MQ_ASSERT(latency >= 0);
  MQ_ASSERT(seq < static_cast<uint64_t>(issued_));
  --in_flight_;
  if (history_ != nullptr) {
    history_->send_result(SendResultLine{.producer = producer_id_,
                                         .seq = seq,
                                         .at = instance_.env().clock().wall_ns(),
                                         .outcome = client::send_status_name(result.status),
                                         .broker_name = result.messageQueue.brokerName,
                                         .queue_id = result.messageQueue.queueId,
                                         .queue_offset = result.queueOffset,
                                         .msg_id = result.offsetMsgId,
                                         .attempts = result.attempts});
  }
  ++totals_.by_status[static_cast<size_t>(result.status)];
  const bool stored = client::is_stored(result.status);
  if (stored) {
    log_ack(result, key);
    totals_.latency.record(latency);
    ++interval_.stored;
    interval_.latency_sum += latency;
    interval_.latency_max = std::max(interval_.latency_max, latency);
    send_next(sender);
  } else {
    instance_.env().executor().run_after(kPauseAfterFailure, lifetime_.guard([this, sender] { send_next(sender); }));
  }
  maybe_finish();
}

void PerfProducer::tick() {
  tick_timer_ = env::kNoTimer;
  if (finished_) return;
  const Nanos at = now();
  const double elapsed_s = static_cast<double>(at - last_tick_) / kNanosPerSecond;
  const double average = interval_.stored == 0 ? 0.0 : ms(interval_.latency_sum) / static_cast<double>(interval_.stored);
  out_ << strprintf("Current Time: %s Send TPS: %lld Max RT(ms): %.3f Average RT(ms): %7.3f Send Failed: %llu "
                    "Response Failed: %llu\n",
                    human_time_ms(instance_.env().clock().wall_ms()).c_str(),
                    static_cast<long long>(elapsed_s > 0 ? static_cast<double>(interval_.stored) / elapsed_s : 0),
                    ms(interval_.latency_max), average, static_cast<unsigned long long>(totals_.send_failed()),
                    static_cast<unsigned long long>(totals_.response_failed()));
  out_.flush();
  interval_ = Interval{};
  last_tick_ = at;
  flush_history();
  if (options_.duration_s > 0 && at - start_ >= seconds(options_.duration_s)) stopping_ = true;
  if (options_.interrupted && options_.interrupted()) stopping_ = true;
  maybe_finish();
  if (!finished_) tick_timer_ = instance_.env().executor().run_after(kProducerStatsInterval, lifetime_.guard([this] { tick(); }));
}

void PerfProducer::maybe_finish() {
  if (finished_ || in_flight_ > 0) return;
  const bool all_issued = options_.message_quantity > 0 && issued_ >= options_.message_quantity;
  if (!stopping_ && !all_issued) return;
  finished_ = true;
  totals_.elapsed = now() - start_;
  if (tick_timer_ != env::kNoTimer) instance_.env().executor().cancel(tick_timer_);
  tick_timer_ = env::kNoTimer;
  flush_history();
  print_summary();
  // Posted: the caller may destroy this producer from done.
  instance_.env().executor().post(lifetime_.guard([this] { done_(history_error_); }));
}

void PerfProducer::flush_history() {
  if (history_ == nullptr) return;
  // An incomplete history would make mqsim check report losses that did
  // not happen: the run stops and fails with the reason.
  if (Status flushed = history_->flush(); !flushed.ok() && history_error_.ok()) {
    history_error_ = flushed;
    stopping_ = true;
  }
}

void PerfProducer::print_summary() {
  const double elapsed_s = static_cast<double>(totals_.elapsed) / kNanosPerSecond;
  const double tps = elapsed_s > 0 ? static_cast<double>(totals_.stored()) / elapsed_s : 0;
  out_ << strprintf("[Complete] Send Total: %llu Send TPS: %lld Max RT(ms): %.3f Average RT(ms): %7.3f Send Failed: "
                    "%llu Response Failed: %llu\n",
                    static_cast<unsigned long long>(totals_.completed()), static_cast<long long>(tps),
                    ms(totals_.latency.max()), totals_.latency.mean() / kNanosPerMilli,
                    static_cast<unsigned long long>(totals_.send_failed()),
                    static_cast<unsigned long long>(totals_.response_failed()));
  out_ << "Send RT(ms) " << percentiles_ms_text(totals_.latency) << "\n";
  out_ << "Send Status:";
  for (size_t i = 0; i < totals_.by_status.size(); ++i) {
    out_ << " " << client::send_status_name(static_cast<SendStatus>(i)) << " " << totals_.by_status[i];
  }
  out_ << "\n";
  out_.flush();
}

}  // namespace mqlab::admin_cli
