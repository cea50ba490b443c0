// SimNet against the network.h contract and its own model: latency and
// bandwidth, ordering under jitter, partitions that stall, heal and time out,
// resets of dead processes, machines that are down, and determinism. Each test
// drives processes (owners with their own executors) on one Scheduler and
// checks what arrived, and at which virtual instant.
#include "sim/sim_net.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/sim_disk.h"
#include "sim/sim_env.h"

namespace mqlab::sim::sim_net_test {
namespace {

const std::string kHostA = "10.0.0.1";
const std::string kHostB = "10.0.0.2";
const std::string kHostC = "10.0.0.3";
const std::string kServerAddress = "10.0.0.1:10911";

// Round numbers, so instants can be checked exactly: 1 ms one way, no
// jitter, 1 MB/s (a byte is a microsecond on the wire).
SimNetOptions fixed_options() {
  SimNetOptions options;
  options.profile.latency_base_ns = millis(1);
  options.profile.latency_jitter_ns = 0;
  options.profile.bandwidth_bytes_per_sec = 1'000'000;
  return options;
}

// A file in memory, enough for send_file_region().
class BytesFile final : public env::File {
 public:
  explicit BytesFile(std::vector<uint8_t> data) : data_(std::move(data)) {}
  const std::string& path() const override { return path_; }
  Status pwrite(uint64_t offset, std::span<const uint8_t> data) override {
    if (offset + data.size() > data_.size()) data_.resize(offset + data.size());
    std::copy(data.begin(), data.end(), data_.begin() + static_cast<ptrdiff_t>(offset));
    return Status::Ok();
  }
  Result<size_t> pread(uint64_t offset, std::span<uint8_t> out) override {
    if (offset >= data_.size()) return size_t{0};
    const size_t size = std::min<size_t>(out.size(), data_.size() - offset);
    std::copy_n(data_.begin() + static_cast<ptrdiff_t>(offset), size, out.begin());
    return size;
  }
  Status truncate(uint64_t) override { return Status::IoError("not here"); }
  Result<uint64_t> size() override { return static_cast<uint64_t>(data_.size()); }
  Status allocate(uint64_t) override { return Status::IoError("not here"); }
  void sync(env::SyncCallback) override { MQ_UNREACHABLE("not synced in these tests"); }

 private:
  const std::string path_ = "/memory/commitlog";
  std::vector<uint8_t> data_;
};

std::vector<uint8_t> bytes_of(std::string_view text) { return {text.begin(), text.end()}; }

// Byte i of a test pattern: not periodic in any power of two, so a shifted,
// dropped or repeated chunk shows.
std::vector<uint8_t> pattern(size_t size, uint32_t seed) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>((i * 131 + seed) % 251);
  return bytes;
}

// What one end saw, in order, and when.
struct Inbox {
  std::vector<uint8_t> bytes;
  std::vector<Nanos> arrived_at;  // one per on_bytes
  std::optional<Status> closed;
  Nanos closed_at = -1;
  int callbacks_after_close = 0;
};

// A world of processes on one SimNet. Every callback checks that it was not
// run from inside a call of ours (inline_callbacks() counts those).
class Harness {
 public:
  explicit Harness(SimNetOptions options = fixed_options(), uint64_t seed = 1)
      : net_(scheduler_, env::Random(seed), std::move(options)) {}

  Scheduler& scheduler() { return scheduler_; }
  SimNet& net() { return net_; }
  Nanos now() const { return scheduler_.now(); }
  int inline_callbacks() const { return inline_callbacks_; }

  // A new process on host's machine.
  SimNetEndpoint& start(const std::string& host) {
    const OwnerId owner = scheduler_.add_owner();
    executors_.push_back(std::make_unique<SimExecutor>(scheduler_, owner));
    endpoints_.push_back(net_.endpoint(*executors_.back(), owner, host));
    return *endpoints_.back();
  }

  // kill -9, as SimEnv::kill() does it.
  void kill(SimNetEndpoint& endpoint) {
    endpoint.kill();
    scheduler_.kill_owner(endpoint.owner());
  }

  template <typename F>
  void call(F&& fn) {
    in_call_ = true;
    fn();
    in_call_ = false;
  }

  void watch(const std::shared_ptr<env::Connection>& connection, Inbox& inbox) {
    call([&] {
      connection->set_handlers(
          [this, &inbox](std::span<const uint8_t> bytes) {
            if (in_call_) ++inline_callbacks_;
            if (inbox.closed) ++inbox.callbacks_after_close;
            inbox.bytes.insert(inbox.bytes.end(), bytes.begin(), bytes.end());
            inbox.arrived_at.push_back(scheduler_.now());
          },
          [this, &inbox](Status reason) {
            if (in_call_) ++inline_callbacks_;
            if (inbox.closed) ++inbox.callbacks_after_close;
            inbox.closed = std::move(reason);
            inbox.closed_at = scheduler_.now();
          });
    });
  }

  // The endpoint listens at address and keeps (and watches) what it accepts.
  std::shared_ptr<env::Listener> serve(SimNetEndpoint& endpoint, const std::string& address) {
    Result<std::shared_ptr<env::Listener>> listener =
        endpoint.listen(address, [this](std::shared_ptr<env::Connection> connection) {
          if (in_call_) ++inline_callbacks_;
          accepted.push_back(connection);
          server_inboxes.emplace_back();
          watch(connection, server_inboxes.back());
        });
    EXPECT_TRUE(listener.ok()) << listener.status().to_string();
    return listener.ok() ? *listener : nullptr;
  }

  // Connects and runs the world until done has run.
  Result<std::shared_ptr<env::Connection>> connect(SimNetEndpoint& endpoint, const std::string& address,
                                                   Nanos timeout = seconds(3)) {
    std::optional<Result<std::shared_ptr<env::Connection>>> result;
    int answers = 0;
    call([&] {
      endpoint.connect(address, timeout, [&](Result<std::shared_ptr<env::Connection>> r) {
        if (in_call_) ++inline_callbacks_;
        ++answers;
        result = std::move(r);
      });
    });
    EXPECT_FALSE(result.has_value()) << "done ran inline";
    while (!result && scheduler_.run_one()) {
    }
    EXPECT_EQ(answers, 1);
    return result ? std::move(*result) : Result<std::shared_ptr<env::Connection>>(Status::Aborted("no answer"));
  }

  void run() { scheduler_.run_until_idle(10'000'000); }
  void run_for(Nanos duration) { scheduler_.run_for(duration); }

  std::vector<std::shared_ptr<env::Connection>> accepted;
  std::deque<Inbox> server_inboxes;  // a deque: watch() keeps references

 private:
  Scheduler scheduler_;
  SimNet net_;
  std::vector<std::unique_ptr<SimExecutor>> executors_;
  std::vector<std::unique_ptr<SimNetEndpoint>> endpoints_;
  bool in_call_ = false;
  int inline_callbacks_ = 0;
};

class SimNetTest : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(h_.inline_callbacks(), 0) << "a callback ran inline"; }

  // A server on A listening at kServerAddress, a client on B connected to it
  // and watched; returns the client's end.
  std::shared_ptr<env::Connection> connect_pair(Inbox& client_inbox) {
    server_ = &h_.start(kHostA);
    client_ = &h_.start(kHostB);
    listener_ = h_.serve(*server_, "0.0.0.0:10911");
    Result<std::shared_ptr<env::Connection>> client = h_.connect(*client_, kServerAddress);
    EXPECT_TRUE(client.ok()) << client.status().to_string();
    if (!client.ok()) return nullptr;
    h_.watch(*client, client_inbox);
    h_.run();
    EXPECT_EQ(h_.accepted.size(), 1u);
    return *client;
  }

  Harness h_;
  SimNetEndpoint* server_ = nullptr;
  SimNetEndpoint* client_ = nullptr;
  std::shared_ptr<env::Listener> listener_;
};

TEST_F(SimNetTest, EchoOverTheNetworkWithAddressesOfBothMachines) {
  SimNetEndpoint& server = h_.start(kHostA);
  SimNetEndpoint& client = h_.start(kHostB);
  std::vector<std::shared_ptr<env::Connection>> accepted;
  Result<std::shared_ptr<env::Listener>> listener =
      server.listen("0.0.0.0:10911", [&](std::shared_ptr<env::Connection> c) {
        accepted.push_back(c);
        c->set_handlers([c](std::span<const uint8_t> bytes) { c->send({bytes.begin(), bytes.end()}); },
                        [](Status) {});
      });
  ASSERT_TRUE(listener.ok());
  EXPECT_EQ((*listener)->local_address(), "0.0.0.0:10911");

  Result<std::shared_ptr<env::Connection>> connection = h_.connect(client, kServerAddress);
  ASSERT_TRUE(connection.ok()) << connection.status().to_string();
  EXPECT_EQ(h_.now(), millis(2)) << "a connect takes one round trip";
  Inbox inbox;
  h_.watch(*connection, inbox);
  h_.call([&] { (*connection)->send(bytes_of("hello")); });
  h_.run();
  EXPECT_EQ(inbox.bytes, bytes_of("hello"));
  ASSERT_EQ(inbox.arrived_at.size(), 1u);
  // There and back: 5 bytes of wire and 1 ms of latency each way.
  EXPECT_EQ(inbox.arrived_at[0], millis(2) + 2 * (5 * kNanosPerMicro + millis(1)));
  ASSERT_EQ(accepted.size(), 1u);
  EXPECT_EQ((*connection)->remote_address(), kServerAddress);
  EXPECT_EQ((*connection)->local_address().rfind(kHostB + ":", 0), 0u) << (*connection)->local_address();
  EXPECT_EQ(accepted[0]->local_address(), kServerAddress) << "the address dialed, even through a wildcard";
  EXPECT_EQ(accepted[0]->remote_address(), (*connection)->local_address());
  EXPECT_EQ(server.open_connections(), 1u);
  EXPECT_EQ(client.open_connections(), 1u);
  EXPECT_EQ(h_.net().counters().connections_opened, 1u);
  EXPECT_EQ(h_.net().counters().bytes_delivered, 10u);
  EXPECT_EQ(h_.net().link_counters().at({kHostB, kHostA}).bytes_delivered, 5u);
}

// A chunk is read in the event that delivers it (one event a chunk, not a
// delivery and a read posted behind it), unless its reader cannot run now:
// then it waits, in order, for a flush on the reader's executor.
TEST_F(SimNetTest, BytesAreReadInTheEventThatDeliversThem) {
  Inbox client_inbox;
  const std::shared_ptr<env::Connection> client = connect_pair(client_inbox);
  ASSERT_NE(client, nullptr);
  const uint64_t events_before = h_.scheduler().events_run();
  h_.call([&] { client->send(bytes_of("one")); });
  h_.run();
  EXPECT_EQ(h_.server_inboxes[0].bytes, bytes_of("one"));
  EXPECT_EQ(h_.scheduler().events_run() - events_before, 1u);
}

TEST_F(SimNetTest, APausedProcessReadsWhatArrivedWhenResumedInOrder) {
  Inbox client_inbox;
  const std::shared_ptr<env::Connection> client = connect_pair(client_inbox);
  ASSERT_NE(client, nullptr);
  h_.scheduler().pause_owner(server_->owner());
  h_.call([&] { client->send(bytes_of("one ")); });
  h_.run_for(millis(5));
  h_.call([&] { client->send(bytes_of("two")); });
  h_.run_for(millis(5));
  EXPECT_TRUE(h_.server_inboxes[0].bytes.empty()) << "read while stopped";
  const Nanos resumed_at = h_.now();
  h_.scheduler().resume_owner(server_->owner());
  h_.run();
  EXPECT_EQ(h_.server_inboxes[0].bytes, bytes_of("one two"));
  ASSERT_FALSE(h_.server_inboxes[0].arrived_at.empty());
  EXPECT_EQ(h_.server_inboxes[0].arrived_at.front(), resumed_at);
}

// Bytes that wait (here for set_handlers) are not overtaken by a chunk
// that arrives while their flush is still queued, at the same instant.
TEST_F(SimNetTest, AChunkArrivingBehindWaitingBytesIsReadAfterThem) {
  SimNetEndpoint& server = h_.start(kHostA);
  SimNetEndpoint& client = h_.start(kHostB);
  std::shared_ptr<env::Connection> accepted;
  Result<std::shared_ptr<env::Listener>> listener =
      server.listen("0.0.0.0:10911", [&](std::shared_ptr<env::Connection> c) { accepted = std::move(c); });
  ASSERT_TRUE(listener.ok());
  Result<std::shared_ptr<env::Connection>> connection = h_.connect(client, kServerAddress);
  ASSERT_TRUE(connection.ok()) << connection.status().to_string();
  h_.run();
  ASSERT_NE(accepted, nullptr);
  // "one " (4 bytes) reaches the server 1 ms + 4 us after it is sent, and
  // "two" 3 us later; handlers are set in an event due then, queued before
  // that delivery, so its flush of "one " is queued behind it.
  const Nanos sent_at = h_.now();
  const Nanos two_arrives_at = sent_at + millis(1) + 7 * kNanosPerMicro;
  Inbox inbox;
  h_.scheduler().schedule_at(two_arrives_at, [&] { h_.watch(accepted, inbox); });
  h_.call([&] {
    (*connection)->send(bytes_of("one "));
    (*connection)->send(bytes_of("two"));
  });
  h_.run();
  EXPECT_EQ(inbox.bytes, bytes_of("one two"));
  ASSERT_FALSE(inbox.arrived_at.empty());
  EXPECT_EQ(inbox.arrived_at.front(), two_arrives_at);
}

TEST_F(SimNetTest, DeliveryTimeIsLatencyPlusSerialization) {
  Inbox client_inbox;
  std::shared_ptr<env::Connection> client = connect_pair(client_inbox);
  ASSERT_NE(client, nullptr);
  const Nanos sent_at = h_.now();
  h_.call([&] { client->send(pattern(1000, 1)); });
  h_.run();
  ASSERT_EQ(h_.server_inboxes[0].arrived_at.size(), 1u);
  EXPECT_EQ(h_.server_inboxes[0].arrived_at[0], sent_at + millis(1) + 1000 * kNanosPerMicro);
}

// A stream keeps its link's profile at hand, so a profile set while it is
// open must still reach its next chunk.
TEST_F(SimNetTest, AProfileSetOnAnOpenConnectionTimesItsNextChunk) {
  Inbox client_inbox;
  std::shared_ptr<env::Connection> client = connect_pair(client_inbox);
  ASSERT_NE(client, nullptr);
  h_.call([&] { client->send(pattern(1000, 1)); });
  h_.run();
  ASSERT_EQ(h_.server_inboxes[0].arrived_at.size(), 1u);
  NetworkProfile slow;
  slow.latency_base_ns = millis(50);
  slow.latency_jitter_ns = 0;
  slow.bandwidth_bytes_per_sec = 1'000'000;
  h_.net().set_link_profile(kHostB, kHostA, slow);
  const Nanos sent_at = h_.now();
  h_.call([&] { client->send(pattern(1000, 2)); });
  h_.run();
  ASSERT_EQ(h_.server_inboxes[0].arrived_at.size(), 2u);
  EXPECT_EQ(h_.server_inboxes[0].arrived_at[1], sent_at + millis(50) + millis(1)) << "50 ms, and 1,000 bytes at 1 MB/s";
}

TEST(SimNet, JitteredLatencyStaysWithinItsBounds) {
  SimNetOptions options = fixed_options();
  options.profile.latency_jitter_ns = 100 * kNanosPerMicro;
  Harness h(options, 7);
  SimNetEndpoint& server = h.start(kHostA);
  SimNetEndpoint& client_process = h.start(kHostB);
  auto listener = h.serve(server, kServerAddress);
  auto client = h.connect(client_process, kServerAddress);
  ASSERT_TRUE(client.ok());
  h.run();
  std::vector<Nanos> latencies;
  for (int i = 0; i < 200; ++i) {
    const Nanos sent_at = h.now();
    h.call([&] { (*client)->send(pattern(100, i)); });
    h.run();  // one at a time, so no chunk waits behind another
    ASSERT_EQ(h.server_inboxes[0].arrived_at.size(), static_cast<size_t>(i + 1));
    latencies.push_back(h.server_inboxes[0].arrived_at.back() - sent_at);
  }
  const Nanos floor = millis(1) + 100 * kNanosPerMicro;  // base + 100 bytes of wire
  for (Nanos latency : latencies) {
    EXPECT_GE(latency, floor);
    EXPECT_LE(latency, floor + 10 * 100 * kNanosPerMicro);  // the tail is capped at 10 means
  }
  EXPECT_GT(*std::max_element(latencies.begin(), latencies.end()),
            *std::min_element(latencies.begin(), latencies.end()))
      << "jitter varies";
  EXPECT_EQ(h.inline_callbacks(), 0);
}

TEST_F(SimNetTest, BandwidthSerializesChunksOnALinkAcrossConnections) {
  Inbox client_inbox;
  std::shared_ptr<env::Connection> first = connect_pair(client_inbox);
  ASSERT_NE(first, nullptr);
  auto second = h_.connect(*client_, kServerAddress);
  ASSERT_TRUE(second.ok());
  h_.run();
  ASSERT_EQ(h_.server_inboxes.size(), 2u);
  const Nanos sent_at = h_.now();
  h_.call([&] {
    first->send(pattern(100'000, 1));  // 100 ms of wire each
    first->send(pattern(100'000, 2));
    (*second)->send(pattern(100'000, 3));
  });
  EXPECT_EQ(first->pending_output_bytes(), 200'000u);
  h_.run();
  EXPECT_EQ(first->pending_output_bytes(), 0u);
  const std::vector<Nanos> expected_first{sent_at + millis(101), sent_at + millis(201)};
  EXPECT_EQ(h_.server_inboxes[0].arrived_at, expected_first);
  const std::vector<Nanos> expected_second{sent_at + millis(301)};
  EXPECT_EQ(h_.server_inboxes[1].arrived_at, expected_second) << "the wire is the link's, not the connection's";
}

// A property: whatever the jitter, loss, bandwidth and short partitions,
// one direction of a stream delivers exactly the bytes sent, in send order.
RC_GTEST_PROP(SimNet, StreamDeliversExactlyTheBytesSentInOrderUnderJitterLossAndPartitions, ()) {
  SimNetOptions options;
  options.profile.latency_base_ns = *rc::gen::inRange<Nanos>(0, millis(2));
  options.profile.latency_jitter_ns = *rc::gen::inRange<Nanos>(0, millis(5));
  options.profile.bandwidth_bytes_per_sec = *rc::gen::inRange<uint64_t>(100'000, 10'000'000'000);
  options.profile.loss_probability = *rc::gen::element(0.0, 0.01, 0.3);
  Harness h(options, *rc::gen::arbitrary<uint64_t>());
  SimNetEndpoint& server = h.start(kHostA);
  SimNetEndpoint& client_process = h.start(kHostB);
  auto listener = h.serve(server, kServerAddress);
  auto client = h.connect(client_process, kServerAddress, seconds(10));
  RC_ASSERT(client.ok());

  struct Step {
    Nanos gap_ns;
    size_t size;
    bool toggle_partition;
  };
  const auto steps = *rc::gen::container<std::vector<Step>>(rc::gen::build<Step>(
      rc::gen::set(&Step::gap_ns, rc::gen::inRange<Nanos>(0, millis(3))),
      rc::gen::set(&Step::size, rc::gen::inRange<size_t>(1, 5000)),
      rc::gen::set(&Step::toggle_partition, rc::gen::weightedElement<bool>({{9, false}, {1, true}}))));
  std::vector<uint8_t> expected;
  bool partitioned = false;
  for (size_t i = 0; i < steps.size(); ++i) {
    h.run_for(steps[i].gap_ns);
    if (steps[i].toggle_partition) {
      partitioned ? h.net().heal_all() : h.net().partition({kHostA}, {kHostB});
      partitioned = !partitioned;
    }
    std::vector<uint8_t> chunk = pattern(steps[i].size, static_cast<uint32_t>(i));
    expected.insert(expected.end(), chunk.begin(), chunk.end());
    h.call([&] { (*client)->send(std::move(chunk)); });
  }
  h.net().heal_all();
  h.run();
  RC_ASSERT(!h.server_inboxes.empty());
  const Inbox& inbox = h.server_inboxes[0];
  RC_ASSERT(!inbox.closed.has_value());
  RC_ASSERT(inbox.bytes == expected);
  RC_ASSERT(std::is_sorted(inbox.arrived_at.begin(), inbox.arrived_at.end()));
  RC_ASSERT(h.inline_callbacks() == 0);
}

TEST_F(SimNetTest, SymmetricPartitionStallsBothWaysThenHealsWithDataIntact) {
  Inbox client_inbox;
  std::shared_ptr<env::Connection> client = connect_pair(client_inbox);
  ASSERT_NE(client, nullptr);
  h_.net().partition({kHostA}, {kHostB});
  EXPECT_TRUE(h_.net().blocked(kHostA, kHostB));
  EXPECT_TRUE(h_.net().blocked(kHostB, kHostA));
  const std::vector<uint8_t> up = pattern(3000, 1);
  const std::vector<uint8_t> down = pattern(2000, 2);
  h_.call([&] {
    client->send(std::vector<uint8_t>(up.begin(), up.begin() + 1000));
    client->send(std::vector<uint8_t>(up.begin() + 1000, up.end()));
    h_.accepted[0]->send(down);
  });
  h_.run_for(seconds(10));
  EXPECT_TRUE(h_.server_inboxes[0].bytes.empty());
  EXPECT_TRUE(client_inbox.bytes.empty());
  EXPECT_TRUE(client->is_open());
  EXPECT_EQ(client->pending_output_bytes(), 3000u) << "stalled output is still queued";
  const Nanos healed_at = h_.now();
  h_.net().heal_all();
  h_.run();
  EXPECT_EQ(h_.server_inboxes[0].bytes, up);
  EXPECT_EQ(client_inbox.bytes, down);
  EXPECT_GE(h_.server_inboxes[0].arrived_at.front(), healed_at + millis(1));
  EXPECT_FALSE(client_inbox.closed.has_value());
  EXPECT_FALSE(h_.server_inboxes[0].closed.has_value());
  EXPECT_EQ(h_.net().counters().stalls, 2u);
}

TEST_F(SimNetTest, PartitionLongerThanTheUserTimeoutBreaksTheConnectionWithTimeoutOnBothSides) {
  Inbox client_inbox;
  std::shared_ptr<env::Connection> client = connect_pair(client_inbox);
  ASSERT_NE(client, nullptr);
  h_.net().partition({kHostA}, {kHostB});
  const Nanos sent_at = h_.now();
  h_.call([&] { client->send(bytes_of("into the void")); });
  h_.run();
  const Inbox& server_inbox = h_.server_inboxes[0];
  ASSERT_TRUE(client_inbox.closed.has_value());
  ASSERT_TRUE(server_inbox.closed.has_value());
  EXPECT_EQ(client_inbox.closed->code(), StatusCode::kTimeout);
  EXPECT_EQ(client_inbox.closed->message(), "connection timed out: " + kServerAddress);
  EXPECT_EQ(server_inbox.closed->code(), StatusCode::kTimeout);
  EXPECT_EQ(server_inbox.closed->message(), "connection timed out: " + client->local_address());
  EXPECT_EQ(client_inbox.closed_at, sent_at + seconds(15));
  EXPECT_EQ(server_inbox.closed_at, sent_at + seconds(15));
  EXPECT_TRUE(server_inbox.bytes.empty());
  EXPECT_FALSE(client->is_open());
  EXPECT_EQ(client->pending_output_bytes(), 0u);
  EXPECT_EQ(h_.net().counters().connections_timed_out, 1u);

  h_.net().heal_all();  // too late: the connection is gone
  h_.call([&] { client->send(bytes_of("ignored")); });
  h_.run();
  EXPECT_TRUE(server_inbox.bytes.empty());
  EXPECT_EQ(client_inbox.callbacks_after_close, 0);
  EXPECT_EQ(server_inbox.callbacks_after_close, 0);
}

TEST_F(SimNetTest, ChunkInFlightWhenAPartitionStartsStallsAndTimesOutFromThen) {
  Inbox client_inbox;
  std::shared_ptr<env::Connection> client = connect_pair(client_inbox);
  ASSERT_NE(client, nullptr);
  const Nanos sent_at = h_.now();
  h_.call([&] { client->send(bytes_of("x")); });
  h_.run_for(kNanosPerMicro * 500);  // on the wire, not there yet
  h_.net().partition({kHostA}, {kHostB});
  h_.run();
  ASSERT_TRUE(client_inbox.closed.has_value());
  EXPECT_EQ(client_inbox.closed->code(), StatusCode::kTimeout);
  // Lost on arrival (1 us of wire + 1 ms), given up 15 s later.
  EXPECT_EQ(client_inbox.closed_at, sent_at + kNanosPerMicro + millis(1) + seconds(15));
}

TEST_F(SimNetTest, IdleConnectionOutlivesALongPartition) {
  Inbox client_inbox;
  std::shared_ptr<env::Connection> client = connect_pair(client_inbox);
  ASSERT_NE(client, nullptr);
  h_.net().partition({kHostA}, {kHostB});
  h_.run_for(seconds(120));
  h_.net().heal({kHostA}, {kHostB});
  EXPECT_FALSE(h_.net().blocked(kHostB, kHostA));
  h_.call([&] { client->send(bytes_of("still here")); });
  h_.run();
  EXPECT_EQ(h_.server_inboxes[0].bytes, bytes_of("still here"));
  EXPECT_FALSE(client_inbox.closed.has_value());
}

TEST_F(SimNetTest, OneWayPartitionBlocksOnlyItsDirection) {
  Inbox client_inbox;
  std::shared_ptr<env::Connection> client = connect_pair(client_inbox);
  ASSERT_NE(client, nullptr);
  h_.net().partition({kHostA}, {kHostB}, /*symmetric=*/false);
  EXPECT_TRUE(h_.net().blocked(kHostA, kHostB));
  EXPECT_FALSE(h_.net().blocked(kHostB, kHostA));
  h_.call([&] {
    client->send(bytes_of("b to a flows"));
    h_.accepted[0]->send(bytes_of("a to b stalls"));
  });
  h_.run_for(seconds(5));
  EXPECT_EQ(h_.server_inboxes[0].bytes, bytes_of("b to a flows"));
  EXPECT_TRUE(client_inbox.bytes.empty());
  h_.net().heal_all();
  h_.run();
  EXPECT_EQ(client_inbox.bytes, bytes_of("a to b stalls"));
  EXPECT_FALSE(client_inbox.closed.has_value());
}

TEST_F(SimNetTest, IsolatedHostReachesNobodyWhileOthersTalk) {
  Inbox client_inbox;
  std::shared_ptr<env::Connection> client = connect_pair(client_inbox);
  ASSERT_NE(client, nullptr);
  SimNetEndpoint& third = h_.start(kHostC);
  h_.net().isolate(kHostA);
  EXPECT_TRUE(h_.net().blocked(kHostC, kHostA));
  EXPECT_FALSE(h_.net().blocked(kHostB, kHostC));
  EXPECT_FALSE(h_.net().blocked(kHostA, kHostA)) << "a machine still reaches itself";

  auto listener_c = h_.serve(third, "10.0.0.3:7000");
  EXPECT_TRUE(h_.connect(*client_, "10.0.0.3:7000").ok()) << "B and C are not cut";
  auto to_a = h_.connect(third, kServerAddress, seconds(2));
  EXPECT_EQ(to_a.status().code(), StatusCode::kTimeout);

  h_.call([&] { client->send(bytes_of("waits")); });
  h_.run_for(seconds(5));
  EXPECT_TRUE(h_.server_inboxes[0].bytes.empty());
  h_.net().heal_host(kHostA);
  h_.run();
  EXPECT_EQ(h_.server_inboxes[0].bytes, bytes_of("waits"));
}

TEST(SimNet, ConnectAcrossAPartitionTimesOutAtTheEarlierDeadline) {
  SimNetOptions options = fixed_options();
  options.connect_timeout_ns = seconds(2);
  Harness h(options);
  SimNetEndpoint& server = h.start(kHostA);
  SimNetEndpoint& client = h.start(kHostB);
  auto listener = h.serve(server, kServerAddress);
  h.net().partition({kHostA}, {kHostB});

  auto short_wait = h.connect(client, kServerAddress, millis(1500));
  ASSERT_FALSE(short_wait.ok());
  EXPECT_EQ(short_wait.status().code(), StatusCode::kTimeout);
  EXPECT_EQ(short_wait.status().message(), "connect timed out after 1500 ms: " + kServerAddress);
  EXPECT_EQ(h.now(), millis(1500));

  const Nanos started_at = h.now();
  auto kernel_limit = h.connect(client, kServerAddress, seconds(60));
  EXPECT_EQ(kernel_limit.status().code(), StatusCode::kTimeout);
  EXPECT_EQ(kernel_limit.status().message(), "connect timed out after 2000 ms: " + kServerAddress);
  EXPECT_EQ(h.now(), started_at + seconds(2));
  h.run();
  EXPECT_TRUE(h.accepted.empty());
  EXPECT_EQ(h.net().counters().connects_timed_out, 2u);
  EXPECT_EQ(h.scheduler().pending_count(), 0u) << "no SYN retransmission outlives its connect";
  EXPECT_EQ(h.inline_callbacks(), 0);
}

TEST(SimNet, ConnectSucceedsWhenThePartitionHealsBeforeItsDeadline) {
  Harness h;
  SimNetEndpoint& server = h.start(kHostA);
  SimNetEndpoint& client = h.start(kHostB);
  auto listener = h.serve(server, kServerAddress);
  h.net().partition({kHostA}, {kHostB});
  // SYNs at 0 s, 1 s and 3 s (the kernel's 1 s, doubling); the path opens at 2.5 s.
  h.scheduler().schedule_at(millis(2500), [&] { h.net().heal_all(); });
  auto connection = h.connect(client, kServerAddress, seconds(10));
  ASSERT_TRUE(connection.ok()) << connection.status().to_string();
  EXPECT_EQ(h.now(), seconds(3) + millis(2));
  EXPECT_EQ(h.inline_callbacks(), 0);
}

TEST(SimNet, ConnectWithoutListenerIsRefusedAfterOneRoundTrip) {
  Harness h;
  h.start(kHostA);
  SimNetEndpoint& client = h.start(kHostB);
  auto refused = h.connect(client, "10.0.0.1:9999");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(refused.status().message(), "connection refused: 10.0.0.1:9999");
  EXPECT_EQ(h.now(), millis(2));
  EXPECT_EQ(h.net().counters().connects_refused, 1u);

  auto unknown = h.connect(client, "10.9.9.9:9999");
  EXPECT_EQ(unknown.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(unknown.status().message(), "unknown host: 10.9.9.9:9999");
  auto bad = h.connect(client, "10.0.0.1");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(h.now(), millis(2)) << "neither needs the network";
  EXPECT_EQ(h.inline_callbacks(), 0);
}

TEST(SimNet, ListenKeepsToItsOwnMachineAndBindRules) {
  Harness h;
  SimNetEndpoint& server = h.start(kHostA);
  SimNetEndpoint& neighbour = h.start(kHostA);  // another process on the same machine
  SimNetEndpoint& remote = h.start(kHostB);
  const auto ignore = [](std::shared_ptr<env::Connection>) {};
  EXPECT_EQ(server.listen("10.0.0.2:10911", ignore).status().code(), StatusCode::kIoError);
  EXPECT_EQ(server.listen("10.0.0.1", ignore).status().code(), StatusCode::kInvalidArgument);
  auto listener = h.serve(server, "127.0.0.1:7000");
  EXPECT_EQ(neighbour.listen("0.0.0.0:7000", ignore).status().code(), StatusCode::kAlreadyExists);
  Result<std::shared_ptr<env::Listener>> picked = neighbour.listen("10.0.0.1:0", ignore);
  ASSERT_TRUE(picked.ok());
  EXPECT_NE((*picked)->local_address(), "10.0.0.1:0");

  auto local = h.connect(neighbour, "127.0.0.1:7000");
  ASSERT_TRUE(local.ok()) << local.status().to_string();
  EXPECT_EQ((*local)->local_address().rfind("127.0.0.1:", 0), 0u) << (*local)->local_address();
  EXPECT_EQ(h.now(), 2 * 10 * kNanosPerMicro) << "the loopback profile: 10 us each way";
  EXPECT_EQ(h.connect(remote, "10.0.0.1:7000").status().code(), StatusCode::kUnavailable)
      << "a loopback bind is not reachable from another machine";
  EXPECT_EQ(h.connect(neighbour, "localhost:" + (*picked)->local_address().substr(9)).status().code(),
            StatusCode::kUnavailable)
      << "a host bind does not hear the loopback";
  listener->close();
  EXPECT_EQ(h.connect(neighbour, "127.0.0.1:7000").status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(h.inline_callbacks(), 0);
}

TEST_F(SimNetTest, ProcessKillResetsEveryPeerOneLatencyLaterAndSilencesTheDead) {
  Inbox first_inbox;
  std::shared_ptr<env::Connection> first = connect_pair(first_inbox);
  ASSERT_NE(first, nullptr);
  auto second = h_.connect(*client_, kServerAddress);
  ASSERT_TRUE(second.ok());
  Inbox second_inbox;
  h_.watch(*second, second_inbox);
  h_.run();
  const Nanos killed_at = h_.now();
  h_.call([&] {
    h_.accepted[0]->send(bytes_of("sent before the crash"));  // 21 bytes: 21 us of wire
    first->send(bytes_of("never heard"));
    h_.kill(*server_);
  });
  EXPECT_FALSE(server_->alive());
  h_.run();
  EXPECT_EQ(first_inbox.bytes, bytes_of("sent before the crash"));
  for (const Inbox* inbox : {&first_inbox, &second_inbox}) {
    ASSERT_TRUE(inbox->closed.has_value());
    EXPECT_EQ(inbox->closed->code(), StatusCode::kIoError);
    EXPECT_EQ(inbox->closed->message(), "connection reset by peer: " + kServerAddress);
  }
  // Both RSTs queue on the A -> B wire behind the 21 bytes sent before.
  EXPECT_EQ(first_inbox.closed_at, killed_at + 21 * kNanosPerMicro + millis(1));
  EXPECT_EQ(second_inbox.closed_at, killed_at + 21 * kNanosPerMicro + millis(1));
  EXPECT_TRUE(h_.server_inboxes[0].bytes.empty()) << "a dead process runs no more code";
  EXPECT_FALSE(h_.server_inboxes[0].closed.has_value());
  EXPECT_EQ(h_.net().counters().connections_reset, 2u);

  auto refused = h_.connect(*client_, kServerAddress);
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable) << "its listener vanished with it";
  EXPECT_EQ(server_->listen("0.0.0.0:10911", [](std::shared_ptr<env::Connection>) {}).status().code(),
            StatusCode::kUnavailable);
}

TEST_F(SimNetTest, KillProcessByOwnerAndAProcessThatDiedUnheardIsResetByItsMachine) {
  Inbox client_inbox;
  std::shared_ptr<env::Connection> client = connect_pair(client_inbox);
  ASSERT_NE(client, nullptr);
  // Killed in the Scheduler only: nothing is sent until data reaches it.
  h_.scheduler().kill_owner(server_->owner());
  h_.run_for(seconds(1));
  EXPECT_FALSE(client_inbox.closed.has_value());
  h_.call([&] { client->send(bytes_of("anyone?")); });
  h_.run();
  ASSERT_TRUE(client_inbox.closed.has_value());
  EXPECT_EQ(client_inbox.closed->code(), StatusCode::kIoError);

  SimNetEndpoint& server = h_.start(kHostA);
  auto listener = h_.serve(server, "0.0.0.0:10911");
  auto again = h_.connect(*client_, kServerAddress);
  ASSERT_TRUE(again.ok());
  Inbox again_inbox;
  h_.watch(*again, again_inbox);
  h_.net().kill_process(client_->owner());
  h_.run();
  ASSERT_EQ(h_.server_inboxes.size(), 2u);
  ASSERT_TRUE(h_.server_inboxes[1].closed.has_value());
  EXPECT_EQ(h_.server_inboxes[1].closed->message(), "connection reset by peer: " + (*again)->local_address());
  EXPECT_FALSE(again_inbox.closed.has_value()) << "the killed side hears nothing";
}

TEST_F(SimNetTest, MachineDownSendsNoResetAndConnectsTimeOut) {
  Inbox idle_inbox;
  std::shared_ptr<env::Connection> idle = connect_pair(idle_inbox);
  ASSERT_NE(idle, nullptr);
  auto busy = h_.connect(*client_, kServerAddress);
  ASSERT_TRUE(busy.ok());
  Inbox busy_inbox;
  h_.watch(*busy, busy_inbox);
  h_.run();
  // Power loss: the machine goes dark, then its processes are gone.
  h_.net().set_host_down(kHostA, true);
  h_.kill(*server_);
  EXPECT_TRUE(h_.net().host_down(kHostA));
  const Nanos sent_at = h_.now();
  h_.call([&] { (*busy)->send(bytes_of("hello?")); });
  auto refused_or_not = h_.connect(*client_, kServerAddress, seconds(2));
  EXPECT_EQ(refused_or_not.status().code(), StatusCode::kTimeout) << "a dead machine sends no RST";
  h_.run_for(seconds(60));
  EXPECT_FALSE(idle_inbox.closed.has_value()) << "idle: nothing tells it";
  ASSERT_TRUE(busy_inbox.closed.has_value());
  EXPECT_EQ(busy_inbox.closed->code(), StatusCode::kTimeout);
  EXPECT_EQ(busy_inbox.closed_at, sent_at + seconds(15));

  // Power back, a fresh process listens; the idle connection's next bytes
  // reach a machine that never heard of it, which resets it.
  h_.net().set_host_down(kHostA, false);
  SimNetEndpoint& restarted = h_.start(kHostA);
  auto listener = h_.serve(restarted, "0.0.0.0:10911");
  EXPECT_TRUE(h_.connect(*client_, kServerAddress).ok());
  h_.call([&] { idle->send(bytes_of("after the reboot")); });
  h_.run();
  ASSERT_TRUE(idle_inbox.closed.has_value());
  EXPECT_EQ(idle_inbox.closed->code(), StatusCode::kIoError);
  EXPECT_EQ(idle_inbox.closed->message(), "connection reset by peer: " + kServerAddress);
}

TEST_F(SimNetTest, CloseDeliversQueuedBytesThenClosedByPeerAndNothingAfter) {
  Inbox client_inbox;
  std::shared_ptr<env::Connection> client = connect_pair(client_inbox);
  ASSERT_NE(client, nullptr);
  h_.call([&] {
    client->send(bytes_of("last words"));
    client->close();
    EXPECT_FALSE(client->is_open());
    client->close();
    client->send(bytes_of("ignored"));
    h_.accepted[0]->send(bytes_of("crossing"));  // reaches a closed end: dropped
  });
  h_.run();
  const Inbox& server_inbox = h_.server_inboxes[0];
  EXPECT_EQ(server_inbox.bytes, bytes_of("last words"));
  ASSERT_TRUE(server_inbox.closed.has_value());
  EXPECT_EQ(server_inbox.closed->code(), StatusCode::kUnavailable);
  EXPECT_EQ(server_inbox.closed->message(), "connection closed by peer: " + client->local_address());
  EXPECT_FALSE(client_inbox.closed.has_value()) << "the closing side hears nothing";
  EXPECT_TRUE(client_inbox.bytes.empty());
  EXPECT_FALSE(h_.accepted[0]->is_open());
  EXPECT_EQ(server_->open_connections(), 0u);
  h_.accepted.clear();
  client.reset();
  h_.run();
  EXPECT_EQ(h_.net().live_streams(), 0u) << "a finished stream is freed";
}

TEST_F(SimNetTest, BytesAndCloseWaitForSetHandlersAndNothingRunsInline) {
  SimNetEndpoint& server = h_.start(kHostA);
  SimNetEndpoint& client_process = h_.start(kHostB);
  std::shared_ptr<env::Connection> unwatched;
  auto listener = server.listen(kServerAddress, [&](std::shared_ptr<env::Connection> c) { unwatched = c; });
  ASSERT_TRUE(listener.ok());
  auto client = h_.connect(client_process, kServerAddress);
  ASSERT_TRUE(client.ok());
  h_.call([&] {
    (*client)->send(bytes_of("early"));
    (*client)->send(bytes_of(" bytes"));
    (*client)->close();
  });
  h_.run();
  ASSERT_NE(unwatched, nullptr);
  EXPECT_FALSE(unwatched->is_open()) << "the peer's close has arrived";
  Inbox inbox;
  h_.watch(unwatched, inbox);  // counts any callback run inside set_handlers
  EXPECT_TRUE(inbox.bytes.empty());
  h_.run();
  EXPECT_EQ(inbox.bytes, bytes_of("early bytes"));
  ASSERT_TRUE(inbox.closed.has_value());
  EXPECT_EQ(inbox.closed->code(), StatusCode::kUnavailable);
}

TEST_F(SimNetTest, FileRegionIsCopiedWhenSentAndAShortRegionBreaksTheStream) {
  Inbox client_inbox;
  std::shared_ptr<env::Connection> client = connect_pair(client_inbox);
  ASSERT_NE(client, nullptr);
  auto file = std::make_shared<BytesFile>(pattern(4096, 9));
  const std::vector<uint8_t> original = pattern(4096, 9);
  h_.call([&] {
    client->send_file_region(file, 100, 1000);
    ASSERT_TRUE(file->pwrite(100, pattern(1000, 77)).ok());  // after the call: not seen
    client->send_file_region(file, 4000, 200);               // past the end
  });
  h_.run();
  EXPECT_EQ(h_.server_inboxes[0].bytes, std::vector<uint8_t>(original.begin() + 100, original.begin() + 1100));
  ASSERT_TRUE(client_inbox.closed.has_value());
  EXPECT_EQ(client_inbox.closed->code(), StatusCode::kIoError);
  EXPECT_NE(client_inbox.closed->message().find("/memory/commitlog"), std::string::npos);
  ASSERT_TRUE(h_.server_inboxes[0].closed.has_value());
  EXPECT_EQ(h_.server_inboxes[0].closed->message(), "connection reset by peer: " + client->local_address());
}

TEST_F(SimNetTest, PerLinkProfileOverridesTheDefault) {
  NetworkProfile slow;
  slow.latency_base_ns = millis(50);
  slow.latency_jitter_ns = 0;
  slow.bandwidth_bytes_per_sec = 1'000'000;
  h_.net().set_link_profile(kHostB, kHostA, slow);
  EXPECT_EQ(h_.net().link_profile(kHostA, kHostB).latency_base_ns, millis(50));
  EXPECT_EQ(h_.net().link_profile(kHostA, kHostC).latency_base_ns, millis(1));
  Inbox client_inbox;
  std::shared_ptr<env::Connection> client = connect_pair(client_inbox);
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(h_.now(), millis(100)) << "the handshake's round trip on the slow link";
  EXPECT_TRUE(slow.validate().ok());
  NetworkProfile no_bandwidth = slow;
  no_bandwidth.bandwidth_bytes_per_sec = 0;
  EXPECT_EQ(no_bandwidth.validate().code(), StatusCode::kInvalidArgument);
}

TEST(SimNet, EndpointsAndConnectionsOutliveTheNetworkInertly) {
  Scheduler scheduler;
  auto net = std::make_unique<SimNet>(scheduler, env::Random(1), fixed_options());
  const OwnerId server_owner = scheduler.add_owner();
  const OwnerId client_owner = scheduler.add_owner();
  SimExecutor server_executor(scheduler, server_owner);
  SimExecutor client_executor(scheduler, client_owner);
  std::unique_ptr<SimNetEndpoint> server = net->endpoint(server_executor, server_owner, kHostA);
  std::unique_ptr<SimNetEndpoint> client = net->endpoint(client_executor, client_owner, kHostB);
  std::shared_ptr<env::Connection> accepted;
  auto listener = server->listen(kServerAddress, [&](std::shared_ptr<env::Connection> c) { accepted = c; });
  ASSERT_TRUE(listener.ok());
  std::shared_ptr<env::Connection> connection;
  client->connect(kServerAddress, seconds(1), [&](Result<std::shared_ptr<env::Connection>> r) {
    if (r.ok()) connection = *r;
  });
  scheduler.run_until_idle();
  ASSERT_NE(connection, nullptr);
  ASSERT_NE(accepted, nullptr);
  int callbacks = 0;
  connection->set_handlers([&](std::span<const uint8_t>) { ++callbacks; }, [&](Status) { ++callbacks; });
  accepted->send(bytes_of("in flight"));
  net.reset();
  EXPECT_FALSE(client->alive());
  connection->send(bytes_of("after"));
  client->connect(kServerAddress, seconds(1), [&](Result<std::shared_ptr<env::Connection>>) { ++callbacks; });
  scheduler.run_until_idle();
  EXPECT_EQ(callbacks, 0);
  connection.reset();
  accepted.reset();
  listener->reset();
  server.reset();
  client.reset();
  scheduler.run_until_idle();
  EXPECT_EQ(scheduler.pending_count(), 0u);
}

// Delivery instants of a jittered, lossy exchange: a function of the seed.
std::vector<Nanos> delivery_times(uint64_t seed) {
  SimNetOptions options;
  options.profile.latency_jitter_ns = millis(1);
  options.profile.loss_probability = 0.05;
  Harness h(options, seed);
  SimNetEndpoint& server = h.start(kHostA);
  SimNetEndpoint& client = h.start(kHostB);
  auto listener = h.serve(server, kServerAddress);
  auto connection = h.connect(client, kServerAddress);
  MQ_ASSERT(connection.ok());
  for (uint32_t i = 0; i < 100; ++i) {
    h.call([&] { (*connection)->send(pattern(100 + i, i)); });
    h.run_for(kNanosPerMicro * 300);
  }
  h.run();
  return h.server_inboxes.at(0).arrived_at;
}

TEST(SimNet, SameSeedGivesIdenticalDeliveryTimesAndAnotherSeedDiffers) {
  const std::vector<Nanos> first = delivery_times(42);
  EXPECT_EQ(first.size(), 100u);
  EXPECT_EQ(first, delivery_times(42));
  EXPECT_NE(first, delivery_times(43));
}

TEST(SimNet, SimProcessesTalkOverSimNetAndAKillResetsThePeer) {
  Scheduler scheduler;
  SimClock clock(scheduler);
  SimDisk disk(scheduler, DiskProfile::instant(), SimDiskOptions{}, env::Random(1));
  SimNet net(scheduler, env::Random(2), fixed_options());
  SimProcess broker("broker-a", scheduler, clock, {Mount{"/", &disk}}, env::Random(3), net, kHostA);
  SimProcess producer("producer", scheduler, clock, {}, env::Random(4), net, kHostB);

  std::vector<std::shared_ptr<env::Connection>> accepted;
  auto listen = [&](SimEnv& env) {
    auto listener = env.network().listen("0.0.0.0:10911", [&](std::shared_ptr<env::Connection> c) {
      accepted.push_back(c);
      c->set_handlers([](std::span<const uint8_t>) {}, [](Status) {});
    });
    MQ_ASSERT(listener.ok());
    return *listener;
  };
  std::shared_ptr<env::Listener> listener = listen(broker.start());
  std::optional<Result<std::shared_ptr<env::Connection>>> connected;
  producer.start().network().connect(kServerAddress, seconds(3), [&](auto r) { connected = std::move(r); });
  scheduler.run_until_idle();
  ASSERT_TRUE(connected.has_value() && connected->ok());
  std::optional<Status> closed;
  (**connected)->set_handlers([](std::span<const uint8_t>) {}, [&](Status s) { closed = s; });

  broker.kill();
  scheduler.run_until_idle();
  ASSERT_TRUE(closed.has_value());
  EXPECT_EQ(closed->code(), StatusCode::kIoError);
  EXPECT_EQ(closed->message(), "connection reset by peer: " + kServerAddress);

  accepted.clear();  // the dead incarnation's objects go before the next start
  listener.reset();
  listener = listen(broker.start());
  connected.reset();
  producer.env().network().connect(kServerAddress, seconds(3), [&](auto r) { connected = std::move(r); });
  scheduler.run_until_idle();
  ASSERT_TRUE(connected.has_value());
  EXPECT_TRUE(connected->ok()) << "the restarted broker listens again";
}

TEST(SimNet, SimEnvsOnALoopbackRootStillWork) {
  Scheduler scheduler;
  SimClock clock(scheduler);
  SimExecutor root_executor(scheduler, scheduler.add_owner());
  env::LoopbackNetwork root(root_executor);
  SimEnv server(scheduler, clock, {}, env::Random(1), &root, "127.0.0.1");
  SimEnv client(scheduler, clock, {}, env::Random(2), &root, "127.0.0.2");
  auto listener = server.network().listen("127.0.0.1:9876", [](std::shared_ptr<env::Connection>) {});
  ASSERT_TRUE(listener.ok());
  std::optional<Result<std::shared_ptr<env::Connection>>> connected;
  client.network().connect("127.0.0.1:9876", seconds(1), [&](auto r) { connected = std::move(r); });
  scheduler.run_until_idle();
  ASSERT_TRUE(connected.has_value());
  EXPECT_TRUE(connected->ok());
  EXPECT_EQ(scheduler.now(), 0) << "the loopback has no latency";
}

}  // namespace
}  // namespace mqlab::sim::sim_net_test
