// PerfProducer: the engine of `mqadmin perf produce`, RocketMQ's benchmark
// Producer.java on mqlab's asynchronous client. RocketMQ runs -w threads,
// each sending synchronously in a loop; here -w is the number of sends in
// flight on the single-threaded executor: each of the w "senders" issues
// its next send when its previous one completes, which loads the broker the
// same way without OS threads.
//
// A run: the topic's route is fetched first (a topic without one fails the
// run at once instead of failing every send); then the senders start. Every
// second a line, RocketMQ's wording with this second's figures:
//   Current Time: <time> Send TPS: 51234 Max RT(ms): 4.211 Average RT(ms):   1.187 Send Failed: 0 Response Failed: 0
// "Send TPS" counts sends the broker stored; RT is the round trip of one
// send (with the producer's retries) as the env's monotonic clock measures
// it. Send Failed (FAILED or UNKNOWN: not stored, or maybe not) and
// Response Failed (stored, but FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT or
// SLAVE_NOT_AVAILABLE) are totals since the start, as RocketMQ prints them.
// A sender whose send failed pauses 3 s, as RocketMQ's threads sleep after
// an exception, so a dead broker is not hammered.
//
// The run ends when message_quantity sends have completed, when duration
// has passed, or on stop() (SIGINT); sends in flight then complete (within
// sendMsgTimeout) before the summary:
//   [Complete] Send Total: N Send TPS: T Max RT(ms): .. Average RT(ms): .. Send Failed: F Response Failed: R
//   Send RT(ms) p50: .. p99: .. p999: .. max: ..
//   Send Status: SEND_OK a FLUSH_DISK_TIMEOUT b FLUSH_SLAVE_TIMEOUT c SLAVE_NOT_AVAILABLE d FAILED e UNKNOWN f
// Latency percentiles cover the stored sends.
//
// --producers P: P producer instances, each on a client of its own (its
// own instanceName, so its own clientId, route cache and one connection
// per broker), as P application processes would be; sender i sends
// through producer i % P. RocketMQ's Producer.java shares one client (one
// connection per broker) among all its threads, which is the default here
// (P = 1); redis-benchmark -c 50 opens 50 connections, so an equal
// comparison needs -w 50 --producers 50.
// --topics T: send number n goes to topic <topic>_<n % T> (T > 1), so the
// sends spread evenly over T topics, which must exist (updateTopic); every
// producer fetches every route before the clock starts, at most
// kRouteLookupsInFlight lookups at a time (50 producers x 1,000 topics asked
// at once kept a loaded name server busy past the 3 s request timeout).
//
// With --history FILE every send and its outcome go to a history file
// (perf_history.h) that `mqsim check` judges, and each message carries the
// PRODUCER and SEQ properties that name it there.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "broker/admin_cli/latency_histogram.h"
#include "broker/admin_cli/perf_history.h"
#include "broker/client/producer.h"
#include "broker/common/lifetime.h"

namespace mqlab::admin_cli {

struct PerfProduceOptions {
  std::string topic = "BenchmarkTest";
  int32_t senders = 64;          // -w: sends in flight
  int32_t message_size = 128;    // -s: body bytes
  bool keys = false;             // -k: set KEYS (the send time in seconds, as RocketMQ does)
  int64_t message_quantity = 0;  // -q: sends in all; 0 = no limit
  int64_t duration_s = 0;        // --duration; 0 = no limit
  int64_t rate = 0;              // --rate: sends started per second at most; 0 = no limit
  std::string producer_group = "benchmark_producer";
  int32_t producers = 1;         // --producers: producer instances, each its own client; <= senders
  int32_t topics = 1;            // --topics: spread sends over <topic>_0 .. <topic>_<topics-1>
  // --ack-log: a file (created or emptied) that gets one line per stored
  // send, "<msgId> <brokerName> <queueId> <queueOffset> <key>", so a fault
  // test can check that every acknowledged message survives. With it each
  // message's KEYS is its sequence number in the run (unique), not the time.
  std::string ack_log;
  // --history: a history file (perf_history.h) with every send and its
  // outcome; each message then carries PRODUCER and SEQ properties.
  std::string history;
  // --producer-id: the PRODUCER property and the history's producer name
  // ("" = the client id, unique per process).
  std::string producer_id;
  // Polled every second: true stops the run as stop() does (SIGINT). May be empty.
  std::function<bool()> interrupted;
};

struct PerfProduceTotals {
  std::array<uint64_t, 6> by_status{};  // indexed by client::SendStatus
  LatencyHistogram latency;             // of stored sends
  Nanos elapsed = 0;                    // from the first send to the end

  uint64_t count(client::SendStatus status) const { return by_status[static_cast<size_t>(status)]; }
  uint64_t completed() const;
  uint64_t stored() const;         // SEND_OK and the other stored statuses
  uint64_t send_failed() const;    // FAILED + UNKNOWN
  uint64_t response_failed() const;  // stored but not SEND_OK
};

class PerfProducer {
 public:
  // Requires: instance and out outlive the producer. Producer 0 runs on
  // instance; producers 1.. on clients this PerfProducer creates and owns,
  // named like instance's, with instanceName suffixed "_<i>".
  PerfProducer(client::MQClientInstance& instance, PerfProduceOptions options, std::ostream& out);
  ~PerfProducer();

  // done runs once, when the run has ended and the summary is printed, with
  // Ok, or the reason the run could not start (no route, producer refused).
  void start(std::function<void(Status)> done);
  // Stops issuing sends; done runs once those in flight complete.
  void stop();
  bool finished() const { return finished_; }
  const PerfProduceTotals& totals() const { return totals_; }
  // The caller's clean-up, before instance shuts down: every producer
  // unregisters, then the clients this PerfProducer created shut down.
  void shutdown(client::DoneCallback done);
  // The topic send number seq goes to.
  const std::string& topic_of(uint64_t seq) const;

 private:
  struct Interval {
    uint64_t stored = 0;
    Nanos latency_sum = 0;
    Nanos latency_max = 0;
  };

  void fetch_routes();
  // Starts route lookups until kRouteLookupsInFlight are out or none is left.
  void look_up_routes();
  void on_route(Status status);
  void send_next(int32_t sender);
  void on_sent(int32_t sender, const client::SendResult& result, Nanos latency, const std::string& key, uint64_t seq);
  Status open_ack_log();
  Status open_history();
  void log_ack(const client::SendResult& result, const std::string& key);
  void tick();
  void flush_history();
  void maybe_finish();
  void print_summary();
  client::Message build_message(uint64_t seq);  // seq: the send's number in the run, from 0
  Nanos now() const;

  client::MQClientInstance& instance_;
  const PerfProduceOptions options_;
  std::ostream& out_;
  const std::vector<std::string> topics_;  // topic_of's choices
  // instances_[i] is producer i's client: instances_[0] is instance_ (not
  // owned); the others are own_instances_'s.
  std::vector<std::unique_ptr<client::MQClientInstance>> own_instances_;
  std::vector<client::MQClientInstance*> instances_;
  std::vector<std::unique_ptr<client::Producer>> producers_;  // after own_instances_: destroyed first
  // The route lookups before the run: (client, topic) pair number
  // route_lookups_started_ is next; client = pair / topics, topic = pair % topics.
  static constexpr size_t kRouteLookupsInFlight = 64;
  size_t route_lookups_started_ = 0;
  size_t route_lookups_done_ = 0;
  Status route_error_;  // the first lookup that failed
  bool routes_reported_ = false;  // on_route ran
  // Random alphanumerics, drawn once, as Producer.java does. Kept as bytes:
  // every send copies it, and a byte vector copies with one memcpy where a
  // char-to-uint8_t assign went byte by byte (5 instructions a byte, 12% of
  // the client's instructions at 1 KiB).
  std::vector<uint8_t> body_;
  std::function<void(Status)> done_;
  Nanos start_ = 0;
  Nanos last_tick_ = 0;
  int64_t issued_ = 0;
  int64_t in_flight_ = 0;
  bool stopping_ = false;
  bool finished_ = false;
  env::TimerId tick_timer_ = env::kNoTimer;
  Interval interval_;
  PerfProduceTotals totals_;
  std::shared_ptr<env::File> ack_log_;  // --ack-log, when given
  uint64_t ack_log_size_ = 0;
  std::unique_ptr<PerfHistory> history_;  // --history, when given
  std::string producer_id_;
  Status history_error_;  // the first failed history write, which ends the run
  uint32_t body_crc_ = 0;
  LifetimeToken lifetime_;
};

// The summary lines (also used for the consumer's percentiles): "p50: x p99: y
// p999: z max: m" in milliseconds with three decimals.
std::string percentiles_ms_text(const LatencyHistogram& histogram);

}  // namespace mqlab::admin_cli
