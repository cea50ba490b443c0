// LoopbackNetwork against the network.h contract: streams, order, closes,
// resets, refusals and timeouts, in virtual time. Endpoints sit on separate
// executors that share one deterministic event queue, as simulated processes do.
#include "broker/env/loopback_network.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "broker/env/test/network_test_bytes.h"

namespace mqlab::env::loopback_network_test {
namespace {

using nettest::BytesFile;
using nettest::bytes_of;
using nettest::pattern;

// One virtual-time event queue: (due, sequence) order, as the simulator's.
class World {
 public:
  Nanos now() const { return now_; }
  uint64_t schedule(Nanos due, Task task) {
    MQ_ASSERT(due >= now_);
    const uint64_t id = ++last_id_;
    events_.emplace(std::make_pair(due, id), std::move(task));
    return id;
  }
  bool cancel(uint64_t id) {
    return std::erase_if(events_, [id](const auto& event) { return event.first.second == id; }) > 0;
  }
  // Runs events until none is left; returns how many ran.
  size_t run() {
    size_t ran = 0;
    while (!events_.empty()) {
      MQ_ASSERT(++ran < 10'000'000);  // something reposts itself forever
      auto event = events_.extract(events_.begin());
      now_ = event.key().first;
      event.mapped()();
    }
    return ran;
  }

 private:
  Nanos now_ = 0;
  uint64_t last_id_ = 0;
  std::map<std::pair<Nanos, uint64_t>, Task> events_;
};

// A process's executor: its tasks go into the shared world queue.
class WorldExecutor final : public Executor {
 public:
  explicit WorldExecutor(World& world) : world_(world) {}
  void post(Task&& task) override { world_.schedule(world_.now(), std::move(task)); }
  TimerId run_after(Nanos delay, Task&& task) override {
    return world_.schedule(world_.now() + delay, std::move(task));
  }
  bool cancel(TimerId id) override { return world_.cancel(id); }

 private:
  World& world_;
};

// What one end saw, in order.
struct Inbox {
  std::vector<uint8_t> bytes;
  std::optional<Status> closed;
  int callbacks_after_close = 0;
};

class LoopbackNetworkTest : public ::testing::Test {
 protected:
  // Every callback checks it was not run from inside a call of ours.
  template <typename F>
  void call(F&& fn) {
    in_call_ = true;
    fn();
    in_call_ = false;
  }

  void watch(const std::shared_ptr<Connection>& connection, Inbox& inbox) {
    call([&] {
      connection->set_handlers(
          [this, &inbox](std::span<const uint8_t> bytes) {
            EXPECT_FALSE(in_call_) << "on_bytes ran inline";
            if (inbox.closed) ++inbox.callbacks_after_close;
            inbox.bytes.insert(inbox.bytes.end(), bytes.begin(), bytes.end());
          },
          [this, &inbox](Status reason) {
            EXPECT_FALSE(in_call_) << "on_close ran inline";
            if (inbox.closed) ++inbox.callbacks_after_close;
            inbox.closed = std::move(reason);
          });
    });
  }

  // The server listens at address and keeps (and watches) what it accepts.
  std::shared_ptr<Listener> serve(LoopbackNetwork& network, const std::string& address) {
    Result<std::shared_ptr<Listener>> listener = network.listen(address, [this](std::shared_ptr<Connection> c) {
      EXPECT_FALSE(in_call_) << "on_accept ran inline";
      accepted_.push_back(c);
      server_inboxes_.emplace_back();
      watch(c, server_inboxes_.back());
    });
    EXPECT_TRUE(listener.ok()) << listener.status().to_string();
    return listener.ok() ? *listener : nullptr;
  }

  Result<std::shared_ptr<Connection>> connect(LoopbackNetwork& network, const std::string& address,
                                              Nanos timeout = seconds(3)) {
    std::optional<Result<std::shared_ptr<Connection>>> result;
    call([&] {
      network.connect(address, timeout, [&](Result<std::shared_ptr<Connection>> r) {
        EXPECT_FALSE(in_call_) << "connect's done ran inline";
        EXPECT_FALSE(result.has_value()) << "done ran twice";
        result = std::move(r);
      });
    });
    EXPECT_FALSE(result.has_value());
    world_.run();
    EXPECT_TRUE(result.has_value());
    return result ? std::move(*result) : Result<std::shared_ptr<Connection>>(Status::Aborted("no answer"));
  }

  World world_;
  WorldExecutor server_executor_{world_};
  WorldExecutor client_executor_{world_};
  LoopbackNetwork server_{server_executor_};
  std::unique_ptr<LoopbackNetwork> client_ = server_.endpoint(client_executor_, "127.0.0.2");
  bool in_call_ = false;
  std::vector<std::shared_ptr<Connection>> accepted_;
  std::deque<Inbox> server_inboxes_;  // a deque: watch() keeps references
};

TEST(ParseAddress, AcceptsHostPortAndBracketedIpv6) {
  Result<HostPort> v4 = parse_address("127.0.0.1:9876");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 9876);
  EXPECT_EQ(v4->to_string(), "127.0.0.1:9876");
  Result<HostPort> v6 = parse_address("[::1]:0");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
  EXPECT_EQ(v6->to_string(), "[::1]:0");
  EXPECT_TRUE(parse_address("broker-a:65535").ok());
}

TEST(ParseAddress, RejectsMalformedAddressesNamingThem) {
  for (const char* bad : {"", "9876", "localhost", ":9876", "host:", "host:65536", "host:-1", "host:+1", "host:12ab",
                          "::1:9876", "[]:1", "a b:1"}) {
    Result<HostPort> parsed = parse_address(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(parsed.status().message().find(std::string("'") + bad + "'"), std::string::npos)
        << parsed.status().to_string();
  }
}

TEST_F(LoopbackNetworkTest, ConnectAcceptAndEcho) {
  Result<std::shared_ptr<Listener>> listener = server_.listen("127.0.0.1:9876", [this](std::shared_ptr<Connection> c) {
    EXPECT_FALSE(in_call_);
    accepted_.push_back(c);
    c->set_handlers([c](std::span<const uint8_t> bytes) { c->send({bytes.begin(), bytes.end()}); }, [](Status) {});
  });
  ASSERT_TRUE(listener.ok());
  EXPECT_EQ((*listener)->local_address(), "127.0.0.1:9876");

  Result<std::shared_ptr<Connection>> client = connect(*client_, "127.0.0.1:9876");
  ASSERT_TRUE(client.ok()) << client.status().to_string();
  Inbox inbox;
  watch(*client, inbox);
  call([&] { (*client)->send(bytes_of("hello")); });
  EXPECT_TRUE(inbox.bytes.empty());
  world_.run();
  EXPECT_EQ(inbox.bytes, bytes_of("hello"));
  ASSERT_EQ(accepted_.size(), 1u);
  EXPECT_EQ((*client)->remote_address(), "127.0.0.1:9876");
  EXPECT_EQ((*client)->local_address().rfind("127.0.0.2:", 0), 0u) << (*client)->local_address();
  EXPECT_EQ(accepted_[0]->remote_address(), (*client)->local_address());
  EXPECT_EQ(accepted_[0]->local_address(), "127.0.0.1:9876");
  EXPECT_EQ(server_.open_connections(), 1u);
  EXPECT_EQ(client_->open_connections(), 1u);
}

TEST_F(LoopbackNetworkTest, ManySendsAndFileRegionsArriveInCallOrder) {
  auto listener = serve(server_, "127.0.0.1:9876");
  auto client = connect(*client_, "127.0.0.1:9876");
  ASSERT_TRUE(client.ok());
  auto file = std::make_shared<BytesFile>(pattern(1 << 16, 7));
  std::vector<uint8_t> expected;
  call([&] {
    for (uint32_t i = 0; i < 1000; ++i) {
      if (i % 3 == 0) {
        const uint64_t offset = (i * 977) % 60000;
        const uint32_t length = 1 + (i * 31) % 4000;
        (*client)->send_file_region(file, offset, length);
        std::vector<uint8_t> region(length);
        ASSERT_TRUE(file->pread(offset, region).ok());
        expected.insert(expected.end(), region.begin(), region.end());
      } else {
        std::vector<uint8_t> chunk = pattern(1 + i % 300, i);
        expected.insert(expected.end(), chunk.begin(), chunk.end());
        (*client)->send(std::move(chunk));
      }
    }
    (*client)->send({});  // no-ops
    (*client)->send_file_region(file, 0, 0);
  });
  EXPECT_EQ((*client)->pending_output_bytes(), expected.size());
  world_.run();
  EXPECT_EQ((*client)->pending_output_bytes(), 0u);
  ASSERT_EQ(server_inboxes_.size(), 1u);
  EXPECT_EQ(server_inboxes_[0].bytes, expected);
}

TEST_F(LoopbackNetworkTest, LargeTransferArrivesIntact) {
  auto listener = serve(server_, "127.0.0.1:9876");
  auto client = connect(*client_, "127.0.0.1:9876");
  ASSERT_TRUE(client.ok());
  const std::vector<uint8_t> big = pattern(8 << 20, 3);
  call([&] {
    (*client)->send(std::vector<uint8_t>(big.begin(), big.begin() + (4 << 20)));
    for (size_t at = 4 << 20; at < big.size(); at += 64 << 10) {
      (*client)->send(std::vector<uint8_t>(big.begin() + static_cast<ptrdiff_t>(at),
                                           big.begin() + static_cast<ptrdiff_t>(at + (64 << 10))));
    }
  });
  world_.run();
  ASSERT_EQ(server_inboxes_.size(), 1u);
  EXPECT_TRUE(server_inboxes_[0].bytes == big);
}

TEST_F(LoopbackNetworkTest, ConnectToUnknownAddressIsRefused) {
  auto refused = connect(*client_, "127.0.0.1:9876");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(refused.status().message(), "connection refused: 127.0.0.1:9876");

  auto bad = connect(*client_, "127.0.0.1");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(world_.now(), 0);
}

TEST_F(LoopbackNetworkTest, ConnectToUnreachableAddressTimesOutAfterItsTimeout) {
  auto listener = serve(server_, "127.0.0.1:9876");
  client_->set_unreachable("127.0.0.1:9876", true);
  auto timed_out = connect(*client_, "127.0.0.1:9876", millis(250));
  ASSERT_FALSE(timed_out.ok());
  EXPECT_EQ(timed_out.status().code(), StatusCode::kTimeout);
  EXPECT_EQ(timed_out.status().message(), "connect timed out after 250 ms: 127.0.0.1:9876");
  EXPECT_EQ(world_.now(), millis(250));
  EXPECT_TRUE(accepted_.empty());

  client_->set_unreachable("127.0.0.1:9876", false);
  EXPECT_TRUE(connect(*client_, "127.0.0.1:9876").ok());
}

TEST_F(LoopbackNetworkTest, PeerCloseIsReportedAfterItsBytesAndCloseIsIdempotent) {
  auto listener = serve(server_, "127.0.0.1:9876");
  auto client = connect(*client_, "127.0.0.1:9876");
  ASSERT_TRUE(client.ok());
  Inbox client_inbox;
  watch(*client, client_inbox);
  call([&] {
    (*client)->send(bytes_of("last words"));
    (*client)->close();
    EXPECT_FALSE((*client)->is_open());
    (*client)->close();
    (*client)->send(bytes_of("ignored"));
  });
  world_.run();
  ASSERT_EQ(server_inboxes_.size(), 1u);
  const Inbox& server = server_inboxes_[0];
  EXPECT_EQ(server.bytes, bytes_of("last words"));
  ASSERT_TRUE(server.closed.has_value());
  EXPECT_EQ(server.closed->code(), StatusCode::kUnavailable);
  EXPECT_EQ(server.closed->message(), "connection closed by peer: " + (*client)->local_address());
  EXPECT_EQ(server.callbacks_after_close, 0);
  EXPECT_FALSE(client_inbox.closed.has_value()) << "the closing side hears nothing";
  EXPECT_FALSE(accepted_[0]->is_open());
  EXPECT_EQ(server_.open_connections(), 0u);

  call([&] { accepted_[0]->close(); });  // after on_close: harmless
  world_.run();
  EXPECT_EQ(server.callbacks_after_close, 0);
}

TEST_F(LoopbackNetworkTest, DroppingTheLastReferenceCloses) {
  auto listener = serve(server_, "127.0.0.1:9876");
  {
    auto client = connect(*client_, "127.0.0.1:9876");
    ASSERT_TRUE(client.ok());
    call([&] { (*client)->send(bytes_of("bye")); });
  }
  world_.run();
  ASSERT_EQ(server_inboxes_.size(), 1u);
  EXPECT_EQ(server_inboxes_[0].bytes, bytes_of("bye"));
  ASSERT_TRUE(server_inboxes_[0].closed.has_value());
  EXPECT_EQ(server_inboxes_[0].closed->code(), StatusCode::kUnavailable);
}

TEST_F(LoopbackNetworkTest, NoCallbackAfterCloseEvenWithBytesInFlight) {
  auto listener = serve(server_, "127.0.0.1:9876");
  auto client = connect(*client_, "127.0.0.1:9876");
  ASSERT_TRUE(client.ok());
  Inbox client_inbox;
  watch(*client, client_inbox);
  call([&] { accepted_[0]->send(bytes_of("in flight")); });
  call([&] { (*client)->close(); });  // before the bytes are delivered
  world_.run();
  EXPECT_TRUE(client_inbox.bytes.empty());
  EXPECT_FALSE(client_inbox.closed.has_value());
}

TEST_F(LoopbackNetworkTest, BytesAndCloseWaitForSetHandlers) {
  std::shared_ptr<Connection> unwatched;
  auto listener = server_.listen("127.0.0.1:9876", [&](std::shared_ptr<Connection> c) { unwatched = c; });
  ASSERT_TRUE(listener.ok());
  auto client = connect(*client_, "127.0.0.1:9876");
  ASSERT_TRUE(client.ok());
  call([&] {
    (*client)->send(bytes_of("early"));
    (*client)->send(bytes_of(" bytes"));
    (*client)->close();
  });
  world_.run();
  ASSERT_NE(unwatched, nullptr);
  EXPECT_FALSE(unwatched->is_open()) << "the peer's close has arrived";
  Inbox inbox;
  watch(unwatched, inbox);
  EXPECT_TRUE(inbox.bytes.empty());
  world_.run();
  EXPECT_EQ(inbox.bytes, bytes_of("early bytes"));
  ASSERT_TRUE(inbox.closed.has_value());
  EXPECT_EQ(inbox.closed->code(), StatusCode::kUnavailable);
}

TEST_F(LoopbackNetworkTest, KillResetsEveryPeerAndSilencesTheDeadEndpoint) {
  auto listener = serve(server_, "127.0.0.1:9876");
  auto first = connect(*client_, "127.0.0.1:9876");
  auto second = connect(*client_, "127.0.0.1:9876");
  ASSERT_TRUE(first.ok() && second.ok());
  Inbox first_inbox;
  Inbox second_inbox;
  watch(*first, first_inbox);
  watch(*second, second_inbox);
  call([&] {
    accepted_[0]->send(bytes_of("sent before the crash"));
    (*first)->send(bytes_of("never heard"));
    server_.kill();
  });
  EXPECT_FALSE(server_.alive());
  world_.run();
  EXPECT_EQ(first_inbox.bytes, bytes_of("sent before the crash"));
  for (const Inbox* inbox : {&first_inbox, &second_inbox}) {
    ASSERT_TRUE(inbox->closed.has_value());
    EXPECT_EQ(inbox->closed->code(), StatusCode::kIoError);
    EXPECT_EQ(inbox->closed->message(), "connection reset by peer: 127.0.0.1:9876");
  }
  EXPECT_TRUE(server_inboxes_[0].bytes.empty()) << "a dead process runs no more code";
  EXPECT_FALSE(server_inboxes_[0].closed.has_value());

  auto refused = connect(*client_, "127.0.0.1:9876");
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(server_.listen("127.0.0.1:9876", [](std::shared_ptr<Connection>) {}).status().code(),
            StatusCode::kUnavailable);
}

TEST_F(LoopbackNetworkTest, FileRegionPastTheEndBreaksTheStream) {
  auto listener = serve(server_, "127.0.0.1:9876");
  auto client = connect(*client_, "127.0.0.1:9876");
  ASSERT_TRUE(client.ok());
  Inbox client_inbox;
  watch(*client, client_inbox);
  auto file = std::make_shared<BytesFile>(pattern(100, 1));
  call([&] {
    (*client)->send(bytes_of("header"));
    (*client)->send_file_region(file, 50, 51);
    EXPECT_FALSE((*client)->is_open());
  });
  world_.run();
  ASSERT_TRUE(client_inbox.closed.has_value());
  EXPECT_EQ(client_inbox.closed->code(), StatusCode::kIoError);
  EXPECT_NE(client_inbox.closed->message().find("/memory/commitlog"), std::string::npos)
      << client_inbox.closed->to_string();
  const Inbox& server = server_inboxes_[0];
  EXPECT_EQ(server.bytes, bytes_of("header"));
  ASSERT_TRUE(server.closed.has_value());
  EXPECT_EQ(server.closed->message(), "connection reset by peer: " + (*client)->local_address());
}

TEST_F(LoopbackNetworkTest, ListenerPortZeroDuplicatesWildcardAndClose) {
  auto any = server_.listen("127.0.0.1:0", [](std::shared_ptr<Connection>) {});
  ASSERT_TRUE(any.ok());
  EXPECT_NE((*any)->local_address(), "127.0.0.1:0");
  auto duplicate = server_.listen((*any)->local_address(), [](std::shared_ptr<Connection>) {});
  EXPECT_EQ(duplicate.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(duplicate.status().message(), "address already in use: " + (*any)->local_address());

  auto wildcard = serve(server_, "0.0.0.0:10911");
  auto client = connect(*client_, "127.0.0.1:10911");
  ASSERT_TRUE(client.ok());
  EXPECT_EQ(accepted_.size(), 1u);
  EXPECT_EQ(accepted_[0]->local_address(), "127.0.0.1:10911");

  call([&] { wildcard->close(); });
  wildcard->close();
  EXPECT_EQ(connect(*client_, "127.0.0.1:10911").status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE((*client)->is_open()) << "accepted connections outlive their listener";
}

TEST_F(LoopbackNetworkTest, ListenerClosedBeforeTheAcceptRunsResetsTheDialer) {
  auto listener = serve(server_, "127.0.0.1:9876");
  std::optional<Result<std::shared_ptr<Connection>>> result;
  call([&] {
    client_->connect("127.0.0.1:9876", seconds(1), [&](Result<std::shared_ptr<Connection>> r) { result = r; });
    listener->close();
  });
  world_.run();
  ASSERT_TRUE(result.has_value() && result->ok());
  EXPECT_TRUE(accepted_.empty());
  Inbox inbox;
  watch(**result, inbox);
  world_.run();
  ASSERT_TRUE(inbox.closed.has_value());
  EXPECT_EQ(inbox.closed->code(), StatusCode::kIoError);
}

// Two runs of one exchange give one trace: addresses and delivery order depend
// on nothing but the calls.
TEST(LoopbackNetworkDeterminism, SameCallsSameTrace) {
  auto run_once = [] {
    World world;
    WorldExecutor a(world);
    WorldExecutor b(world);
    LoopbackNetwork server(a);
    auto client = server.endpoint(b);
    std::vector<std::string> trace;
    std::vector<std::shared_ptr<Connection>> keep;
    auto listener = server.listen("127.0.0.1:0", [&](std::shared_ptr<Connection> c) {
      keep.push_back(c);
      trace.push_back("accept " + c->remote_address());
      c->set_handlers(
          [&, c](std::span<const uint8_t> bytes) {
            trace.push_back(c->remote_address() + " " + std::string(bytes.begin(), bytes.end()));
          },
          [&](Status s) { trace.push_back(s.to_string()); });
    });
    for (int i = 0; i < 5; ++i) {
      client->connect((*listener)->local_address(), seconds(1), [&, i](Result<std::shared_ptr<Connection>> c) {
        keep.push_back(*c);
        (*c)->send(bytes_of("m" + std::to_string(i)));
        if (i % 2 == 0) (*c)->close();
      });
    }
    world.run();
    return trace;
  };
  const std::vector<std::string> first = run_once();
  EXPECT_EQ(first.size(), 13u);  // 5 accepts, 5 messages, 3 closes
  EXPECT_EQ(first, run_once());
}

}  // namespace
}  // namespace mqlab::env::loopback_network_test
