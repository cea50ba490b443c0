// `mqadmin perf produce` and `mqadmin perf consume`: the flags of RocketMQ's
// benchmark scripts (producer.sh / consumer.sh, i.e. example/benchmark
// Producer.java and Consumer.java) plus --duration and --rate, over
// PerfProducer and PerfConsumer.
//
// Exit codes: perf produce exits 0 when every send ended SEND_OK, 1 when any
// did not (the summary says which statuses) or the run could not start;
// perf consume exits 0 when it ran. SIGINT ends either run with its summary.
#include <memory>
#include <ostream>

#include "broker/admin_cli/command.h"
#include "broker/admin_cli/perf_consumer.h"
#include "broker/admin_cli/perf_producer.h"

namespace mqlab::admin_cli {
namespace {

// A run without --duration (and perhaps without -q) runs until SIGINT.
constexpr Nanos kNoLimit = seconds(int64_t{30} * 24 * 3600);
// After --duration: sends in flight finish within sendMsgTimeout (3 s), a
// consumer shuts down within a few request timeouts.
constexpr Nanos kWindDown = seconds(60);

Result<Nanos> perf_time_limit(const ParsedOptions& options) {
  MQ_ASSIGN_OR_RETURN(const int64_t duration, options.integer("duration", 0, 0, int64_t{365} * 24 * 3600));
  return duration > 0 ? seconds(duration) + kWindDown : kNoLimit;
}

OptionSpec perf_topic_option() { return {'t', "topic", "topic", "Topic name, Default: BenchmarkTest"}; }
OptionSpec quantity_option(const char* what) { return {'q', "messageQuantity", "n", what}; }
OptionSpec history_option(const char* what) {
  return {'\0', "history", "file", std::string("Write a history file (JSON lines, for mqsim check): ") + what};
}
OptionSpec duration_option() { return {'\0', "duration", "seconds", "Run this long, Default: 0, no limit"}; }

Result<PerfProduceOptions> produce_options(const ParsedOptions& options) {
  PerfProduceOptions out;
  out.topic = options.value_or("topic", out.topic);
  MQ_ASSIGN_OR_RETURN(const int64_t senders, options.integer("threadCount", 64, 1, 100'000));
  MQ_ASSIGN_OR_RETURN(const int64_t size, options.integer("messageSize", 128, 1, 4 * 1024 * 1024));
  MQ_ASSIGN_OR_RETURN(out.keys, options.boolean("keyEnable", false));
  MQ_ASSIGN_OR_RETURN(out.message_quantity, options.integer("messageQuantity", 0, 0, INT64_MAX));
  MQ_ASSIGN_OR_RETURN(out.duration_s, options.integer("duration", 0, 0, int64_t{365} * 24 * 3600));
  MQ_ASSIGN_OR_RETURN(out.rate, options.integer("rate", 0, 0, 100'000'000));
  MQ_ASSIGN_OR_RETURN(const int64_t producers, options.integer("producers", 1, 1, 10'000));
  MQ_ASSIGN_OR_RETURN(const int64_t topics, options.integer("topics", 1, 1, 100'000));
  if (producers > senders) {
    return Status::InvalidArgument("--producers " + std::to_string(producers) + " exceeds -w " +
                                   std::to_string(senders) + ": every producer needs a sender");
  }
  out.ack_log = options.value_or("ack-log", "");
  out.history = options.value_or("history", "");
  out.producer_id = options.value_or("producer-id", "");
  if (out.producer_id.find_first_of(" \t\n") != std::string::npos) {
    return Status::InvalidArgument("--producer-id '" + out.producer_id + "': expected a name without blanks");
  }
  out.senders = static_cast<int32_t>(senders);
  out.producers = static_cast<int32_t>(producers);
  out.topics = static_cast<int32_t>(topics);
  out.message_size = static_cast<int32_t>(size);
  return out;
}

void execute_perf_produce(Invocation& inv) {
  Result<PerfProduceOptions> options = produce_options(inv.options());
  if (!options.ok()) return inv.usage_error(options.status().message());
  options->interrupted = [&inv] { return inv.interrupted(); };
  auto perf = std::make_shared<PerfProducer>(inv.instance(), std::move(options).value(), inv.out());
  inv.hold(perf);
  inv.add_cleanup([perf](client::DoneCallback done) {
    perf->shutdown(std::move(done));
  });
  // The callback lives in perf (its done_), so it must not own perf: a
  // shared_ptr here is a cycle that outlives the Invocation (LeakSanitizer).
  // inv.hold keeps perf alive for as long as the callback can run.
  perf->start(inv.guard([&inv, producer = perf.get()](Status status) {
    if (!status.ok()) return inv.fail(status);
    const PerfProduceTotals& totals = producer->totals();
    const uint64_t not_ok = totals.completed() - totals.count(client::SendStatus::SEND_OK);
    if (not_ok == 0) return inv.succeed();
    inv.fail(Status::Unavailable(std::to_string(not_ok) + " of " + std::to_string(totals.completed()) +
                                 " sends did not end SEND_OK (see Send Status)"));
  }));
}

Result<PerfConsumeOptions> consume_options(Invocation& inv) {
  const ParsedOptions& options = inv.options();
  PerfConsumeOptions out;
  out.topic = options.value_or("topic", out.topic);
  out.group = options.value_or("group", out.group);
  MQ_ASSIGN_OR_RETURN(const bool suffix, options.boolean("groupSuffixEnable", true));
  MQ_ASSIGN_OR_RETURN(const int64_t concurrency, options.integer("threadCount", 20, 1, 1'000));
  MQ_ASSIGN_OR_RETURN(out.message_quantity, options.integer("messageQuantity", 0, 0, INT64_MAX));
  MQ_ASSIGN_OR_RETURN(out.duration_s, options.integer("duration", 0, 0, int64_t{365} * 24 * 3600));
  out.from_first = options.has("fromFirst");
  out.history = options.value_or("history", "");
  out.consume_concurrency = static_cast<int32_t>(concurrency);
  // Consumer.java appends "_" + (currentTimeMillis % 100); a draw from the
  // Env's random serves the same purpose (runs do not share a group).
  if (suffix) out.group += "_" + std::to_string(inv.env().random().uniform(100));
  return out;
}

void execute_perf_consume(Invocation& inv) {
  Result<PerfConsumeOptions> options = consume_options(inv);
  if (!options.ok()) return inv.usage_error(options.status().message());
  options->interrupted = [&inv] { return inv.interrupted(); };
  auto perf = std::make_shared<PerfConsumer>(inv.instance(), std::move(options).value(), inv.out());
  inv.hold(perf);
  inv.add_cleanup([perf](client::DoneCallback done) {
    if (!perf->consumer().running()) return done();
    perf->consumer().shutdown(std::move(done));
  });
  perf->start(inv.guard([&inv](Status status) { status.ok() ? inv.succeed() : inv.fail(status); }));
}

}  // namespace

Command perf_produce_command() {
  Command command{"perf produce",
                  "Benchmark sends (RocketMQ's benchmark Producer)",
                  {
                      perf_topic_option(),
                      {'w', "threadCount", "n", "Sends in flight, Default: 64"},
                      {'s', "messageSize", "bytes", "Message Size, Default: 128"},
                      {'k', "keyEnable", "true|false", "Message Key Enable, Default: false"},
                      quantity_option("Send message quantity, Default: 0, running forever"),
                      duration_option(),
                      {'\0', "rate", "msgs/s", "Start at most this many sends per second, Default: 0, no limit"},
                      {'\0', "producers", "n",
                       "Producer instances, each on its own client (instanceName <name>_<i>: own clientId, routes and "
                       "one connection per broker), as n application processes; the -w senders are dealt round "
                       "robin over them. Default: 1, all senders share one client as in RocketMQ's Producer.java "
                       "(redis-benchmark -c 50 is -w 50 --producers 50)"},
                      {'\0', "topics", "n",
                       "Spread the sends round robin over topics <topic>_0 .. <topic>_<n-1> (create them first), "
                       "Default: 1, just <topic>"},
                      {'\0', "ack-log", "file", "Write '<msgId> <brokerName> <queueId> <queueOffset> <key>' per stored send; keys become sequence numbers"},
                      history_option("every send and its outcome"),
                      {'\0', "producer-id", "name", "The producer's name in the history and the PRODUCER property, Default: the client id"},
                  },
                  execute_perf_produce,
                  perf_time_limit};
  command.handles_interrupt = true;
  return command;
}

Command perf_consume_command() {
  Command command{"perf consume",
                  "Benchmark a push consumer (RocketMQ's benchmark Consumer)",
                  {
                      perf_topic_option(),
                      {'g', "group", "group", "Consumer group name, Default: benchmark_consumer"},
                      {'p', "groupSuffixEnable", "true|false", "Append _<0..99> to the group, Default: true"},
                      {'w', "threadCount", "n", "Handler calls in flight per queue, Default: 20"},
                      quantity_option("Stop after this many messages, Default: 0, no limit"),
                      duration_option(),
                      {'\0', "fromFirst", "", "A new group starts at the first offset (default: the last)"},
                      history_option("every message received"),
                  },
                  execute_perf_consume,
                  perf_time_limit};
  command.handles_interrupt = true;
  return command;
}

}  // namespace mqlab::admin_cli
