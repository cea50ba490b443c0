// AsioNetwork against the network.h contract over real TCP on 127.0.0.1 only:
// echo, order with sendfile regions, refusals, timeouts, closes, 8 MiB
// transfers, back-pressure. Each test drives a PosixEnv's io_context with
// run_until; no test waits on wall time except for a bounded run.
#include "broker/env/asio_network.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "broker/env/path.h"
#include "broker/env/posix_env.h"
#include "broker/env/test/network_test_bytes.h"

namespace mqlab::env::asio_network_test {
namespace {

using nettest::BytesFile;
using nettest::bytes_of;
using nettest::pattern;
using std::chrono::milliseconds;

constexpr milliseconds kLimit(10'000);  // generous: a loaded CI machine

struct Inbox {
  std::vector<uint8_t> bytes;
  std::optional<Status> closed;
  int callbacks_after_close = 0;
};

class AsioNetworkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern_path[] = "/tmp/mqlab_asio_network_test_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern_path), nullptr);
    dir_ = pattern_path;
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  template <typename F>
  void call(F&& fn) {
    in_call_ = true;
    fn();
    in_call_ = false;
  }

  bool run_until(const std::function<bool()>& done) { return env_.run_until(done, kLimit); }

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

  // Listens on 127.0.0.1 at a free port; keeps (and, if asked, watches) what
  // it accepts.
  std::shared_ptr<Listener> serve(bool watch_accepted = true) {
    Result<std::shared_ptr<Listener>> listener =
        network_.listen("127.0.0.1:0", [this, watch_accepted](std::shared_ptr<Connection> c) {
          EXPECT_FALSE(in_call_) << "on_accept ran inline";
          accepted_.push_back(c);
          server_inboxes_.emplace_back();
          if (watch_accepted) watch(c, server_inboxes_.back());
        });
    EXPECT_TRUE(listener.ok()) << listener.status().to_string();
    return listener.ok() ? *listener : nullptr;
  }

  Result<std::shared_ptr<Connection>> connect(const std::string& address, Nanos timeout = seconds(5)) {
    std::optional<Result<std::shared_ptr<Connection>>> result;
    call([&] {
      network_.connect(address, timeout, [&](Result<std::shared_ptr<Connection>> r) {
        EXPECT_FALSE(in_call_) << "connect's done ran inline";
        EXPECT_FALSE(result.has_value()) << "done ran twice";
        result = std::move(r);
      });
    });
    EXPECT_FALSE(result.has_value());
    EXPECT_TRUE(run_until([&] { return result.has_value(); }));
    return result ? std::move(*result) : Result<std::shared_ptr<Connection>>(Status::Aborted("no answer"));
  }

  // A connected client and the accepted server end, both watched.
  std::shared_ptr<Connection> connect_pair(const std::shared_ptr<Listener>& listener, Inbox& client_inbox) {
    const size_t before = accepted_.size();
    Result<std::shared_ptr<Connection>> client = connect(listener->local_address());
    EXPECT_TRUE(client.ok()) << client.status().to_string();
    if (!client.ok()) return nullptr;
    watch(*client, client_inbox);
    EXPECT_TRUE(run_until([&] { return accepted_.size() > before; }));
    return *client;
  }

  std::shared_ptr<File> write_file(std::string_view name, const std::vector<uint8_t>& data) {
    Result<std::shared_ptr<File>> file = env_.files().open(join_path(dir_, name), OpenOptions{.create = true});
    EXPECT_TRUE(file.ok()) << file.status().to_string();
    EXPECT_TRUE((*file)->pwrite(0, data).ok());
    return *file;
  }

  std::string dir_;
  PosixEnv env_{uint64_t{42}};
  AsioNetwork network_{env_.io_context(), env_.executor()};
  bool in_call_ = false;
  std::vector<std::shared_ptr<Connection>> accepted_;
  std::deque<Inbox> server_inboxes_;  // a deque: watch() keeps references
};

TEST_F(AsioNetworkTest, ConnectAcceptAndEcho) {
  Result<std::shared_ptr<Listener>> listener = network_.listen("127.0.0.1:0", [this](std::shared_ptr<Connection> c) {
    EXPECT_FALSE(in_call_);
    accepted_.push_back(c);
    c->set_handlers([c](std::span<const uint8_t> bytes) { c->send({bytes.begin(), bytes.end()}); }, [](Status) {});
  });
  ASSERT_TRUE(listener.ok()) << listener.status().to_string();
  const std::string address = (*listener)->local_address();
  EXPECT_EQ(address.rfind("127.0.0.1:", 0), 0u) << address;
  EXPECT_NE(address, "127.0.0.1:0");

  Result<std::shared_ptr<Connection>> client = connect(address);
  ASSERT_TRUE(client.ok()) << client.status().to_string();
  Inbox inbox;
  watch(*client, inbox);
  call([&] { (*client)->send(bytes_of("hello")); });
  ASSERT_TRUE(run_until([&] { return inbox.bytes.size() >= 5; }));
  EXPECT_EQ(inbox.bytes, bytes_of("hello"));
  EXPECT_EQ((*client)->remote_address(), address);
  ASSERT_EQ(accepted_.size(), 1u);
  EXPECT_EQ(accepted_[0]->remote_address(), (*client)->local_address());
  EXPECT_EQ(accepted_[0]->local_address(), address);
  EXPECT_EQ(network_.open_connections(), 2u);
}

TEST_F(AsioNetworkTest, SendsAndSendfileRegionsArriveInCallOrder) {
  auto listener = serve();
  Inbox client_inbox;
  auto client = connect_pair(listener, client_inbox);
  ASSERT_NE(client, nullptr);
  auto disk_file = write_file("00000000000000000000", pattern(1 << 20, 5));
  auto memory_file = std::make_shared<BytesFile>(pattern(1 << 16, 9));
  std::vector<uint8_t> expected;
  call([&] {
    for (uint32_t i = 0; i < 600; ++i) {
      std::shared_ptr<File> file = i % 5 == 0 ? std::shared_ptr<File>(memory_file) : disk_file;
      if (i % 2 == 0) {
        const uint64_t offset = (i * 7919) % 60000;
        const uint32_t length = 1 + (i * 131) % 5000;
        client->send_file_region(file, offset, length);
        std::vector<uint8_t> region(length);
        ASSERT_TRUE(file->pread(offset, region).ok());
        expected.insert(expected.end(), region.begin(), region.end());
      } else {
        std::vector<uint8_t> chunk = pattern(1 + i % 700, i);
        expected.insert(expected.end(), chunk.begin(), chunk.end());
        client->send(std::move(chunk));
      }
    }
  });
  Inbox& server = server_inboxes_[0];
  ASSERT_TRUE(run_until([&] { return server.bytes.size() >= expected.size(); }));
  EXPECT_TRUE(server.bytes == expected);
  // The last write's completion may run after the peer has read its bytes.
  EXPECT_TRUE(run_until([&] { return client->pending_output_bytes() == 0; }));
}

TEST_F(AsioNetworkTest, LargeSendfileRegionWaitsForWritabilityAndArrivesIntact) {
  auto listener = serve();
  Inbox client_inbox;
  auto client = connect_pair(listener, client_inbox);
  ASSERT_NE(client, nullptr);
  const std::vector<uint8_t> data = pattern(8 << 20, 11);
  auto file = write_file("big", data);
  call([&] {
    client->send(bytes_of("head"));
    client->send_file_region(file, 0, static_cast<uint32_t>(data.size()));
    client->send(bytes_of("tail"));
  });
  EXPECT_GT(client->pending_output_bytes(), 0u) << "8 MiB cannot all fit in the socket buffer at once";
  Inbox& server = server_inboxes_[0];
  const size_t total = data.size() + 8;
  ASSERT_TRUE(run_until([&] { return server.bytes.size() >= total; }));
  ASSERT_EQ(server.bytes.size(), total);
  EXPECT_TRUE(std::equal(data.begin(), data.end(), server.bytes.begin() + 4));
  EXPECT_EQ(std::string(server.bytes.end() - 4, server.bytes.end()), "tail");
}

TEST_F(AsioNetworkTest, LargeEchoedTransferArrivesIntact) {
  Result<std::shared_ptr<Listener>> listener = network_.listen("127.0.0.1:0", [this](std::shared_ptr<Connection> c) {
    accepted_.push_back(c);
    c->set_handlers([c](std::span<const uint8_t> bytes) { c->send({bytes.begin(), bytes.end()}); }, [](Status) {});
  });
  ASSERT_TRUE(listener.ok());
  auto client = connect((*listener)->local_address());
  ASSERT_TRUE(client.ok());
  Inbox inbox;
  watch(*client, inbox);
  const std::vector<uint8_t> big = pattern(8 << 20, 3);
  call([&] {
    for (size_t at = 0; at < big.size(); at += 1 << 20) {
      (*client)->send(std::vector<uint8_t>(big.begin() + static_cast<ptrdiff_t>(at),
                                           big.begin() + static_cast<ptrdiff_t>(at + (1 << 20))));
    }
  });
  ASSERT_TRUE(run_until([&] { return inbox.bytes.size() >= big.size(); }));
  EXPECT_TRUE(inbox.bytes == big);
}

TEST_F(AsioNetworkTest, ConnectToAClosedPortIsRefused) {
  auto listener = serve();
  const std::string address = listener->local_address();
  listener.reset();  // dropping the Listener closes it
  auto refused = connect(address);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(refused.status().message(), "connection refused: " + address);

  auto bad = connect("127.0.0.1:http");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

// A listener whose backlog is full makes the kernel drop further SYNs, so a
// connect hangs until its timeout: all on 127.0.0.1.
TEST_F(AsioNetworkTest, ConnectTimesOutAgainstAFullBacklog) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), length), 0);
  ASSERT_EQ(::listen(listener, 0), 0);  // never accepted
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  std::vector<int> fillers;
  for (int i = 0; i < 4; ++i) {  // more than the backlog holds
    fillers.push_back(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    ::connect(fillers.back(), reinterpret_cast<sockaddr*>(&address), sizeof(address));
  }
  std::this_thread::sleep_for(milliseconds(50));  // the handshakes that can complete, complete

  const std::string target = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  auto timed_out = connect(target, millis(200));
  ASSERT_FALSE(timed_out.ok());
  EXPECT_EQ(timed_out.status().code(), StatusCode::kTimeout);
  EXPECT_EQ(timed_out.status().message(), "connect timed out after 200 ms: " + target);
  for (int fd : fillers) ::close(fd);
  ::close(listener);
}

TEST_F(AsioNetworkTest, PeerCloseIsReportedAfterItsBytesAndCloseIsIdempotent) {
  auto listener = serve();
  Inbox client_inbox;
  auto client = connect_pair(listener, client_inbox);
  ASSERT_NE(client, nullptr);
  call([&] {
    client->send(bytes_of("last words"));
    client->close();
    EXPECT_FALSE(client->is_open());
    client->close();
    client->send(bytes_of("ignored"));
  });
  Inbox& server = server_inboxes_[0];
  ASSERT_TRUE(run_until([&] { return server.closed.has_value(); }));
  EXPECT_EQ(server.bytes, bytes_of("last words"));
  EXPECT_EQ(server.closed->code(), StatusCode::kUnavailable);
  EXPECT_EQ(server.closed->message(), "connection closed by peer: " + client->local_address());
  EXPECT_FALSE(accepted_[0]->is_open());
  env_.run_for(milliseconds(20));
  EXPECT_FALSE(client_inbox.closed.has_value()) << "the closing side hears nothing";
  EXPECT_EQ(server.callbacks_after_close, 0);
  EXPECT_EQ(network_.open_connections(), 0u);
}

TEST_F(AsioNetworkTest, FileRegionPastTheEndBreaksBothEnds) {
  auto listener = serve();
  Inbox client_inbox;
  auto client = connect_pair(listener, client_inbox);
  ASSERT_NE(client, nullptr);
  auto file = write_file("short", pattern(100, 1));
  call([&] { client->send_file_region(file, 50, 51); });
  ASSERT_TRUE(run_until([&] { return client_inbox.closed && server_inboxes_[0].closed; }));
  EXPECT_EQ(client_inbox.closed->code(), StatusCode::kIoError);
  EXPECT_NE(client_inbox.closed->message().find(join_path(dir_, "short")), std::string::npos)
      << client_inbox.closed->to_string();
  EXPECT_EQ(server_inboxes_[0].closed->code(), StatusCode::kIoError);
  EXPECT_EQ(server_inboxes_[0].closed->message(), "connection reset by peer: " + client->local_address());
}

TEST_F(AsioNetworkTest, UnreadOutputShowsAsPendingBytesUntilThePeerReads) {
  auto listener = serve(/*watch_accepted=*/false);  // the server does not read yet
  Inbox client_inbox;
  auto client = connect_pair(listener, client_inbox);
  ASSERT_NE(client, nullptr);
  const std::vector<uint8_t> big = pattern(16 << 20, 13);
  call([&] { client->send(big); });
  env_.run_for(milliseconds(100));
  EXPECT_GT(client->pending_output_bytes(), 0u) << "16 MiB unread cannot all sit in socket buffers";
  Inbox& server = server_inboxes_[0];
  watch(accepted_[0], server);
  ASSERT_TRUE(run_until([&] { return server.bytes.size() >= big.size(); }));
  EXPECT_TRUE(server.bytes == big);
  EXPECT_TRUE(run_until([&] { return client->pending_output_bytes() == 0; }));
}

// Thousands of small chunks of odd sizes against a peer that does not read
// yet: the gathered writes take at most 64 chunks each and stop part-way
// through a chunk when the socket fills, so resuming from the middle of a
// chunk, across batches and into a file region queued behind them, must
// keep every byte in order; pending_output_bytes counts down to 0 exactly.
TEST_F(AsioNetworkTest, ManySmallChunksAndAFileRegionResumeMidChunkInOrder) {
  auto listener = serve(/*watch_accepted=*/false);
  Inbox client_inbox;
  auto client = connect_pair(listener, client_inbox);
  ASSERT_NE(client, nullptr);
  const std::vector<uint8_t> chunks = pattern(6 << 20, 21);
  const std::vector<uint8_t> tail = pattern(300 << 10, 22);
  auto file = write_file("tail", tail);
  size_t queued = 0;
  call([&] {
    // 1..4093 bytes each: sizes that never line up with the socket buffer.
    for (size_t at = 0, size = 1; at < chunks.size(); at += size, size = size * 7 % 4093 + 1) {
      size = std::min(size, chunks.size() - at);
      client->send(std::vector<uint8_t>(chunks.begin() + static_cast<ptrdiff_t>(at),
                                        chunks.begin() + static_cast<ptrdiff_t>(at + size)));
      queued += size;
    }
    client->send_file_region(file, 0, static_cast<uint32_t>(tail.size()));
  });
  ASSERT_EQ(queued, chunks.size());
  EXPECT_EQ(client->pending_output_bytes(), chunks.size() + tail.size());
  env_.run_for(milliseconds(100));
  const uint64_t stuck = client->pending_output_bytes();
  EXPECT_GT(stuck, 0u) << "6 MiB unread cannot all sit in socket buffers";
  EXPECT_LT(stuck, chunks.size() + tail.size()) << "nothing was written while the peer's buffer had room";
  Inbox& server = server_inboxes_[0];
  watch(accepted_[0], server);
  const size_t total = chunks.size() + tail.size();
  ASSERT_TRUE(run_until([&] { return server.bytes.size() >= total; }));
  ASSERT_EQ(server.bytes.size(), total);
  EXPECT_TRUE(std::equal(chunks.begin(), chunks.end(), server.bytes.begin()));
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), server.bytes.begin() + static_cast<ptrdiff_t>(chunks.size())));
  EXPECT_TRUE(run_until([&] { return client->pending_output_bytes() == 0; }));
  EXPECT_FALSE(server.closed.has_value());
}

// A region of a File that sendfile cannot serve (not a PosixFile) is copied
// in 256 KiB chunks; against a peer that does not read yet the socket fills
// part-way through a chunk, and the rest of that chunk must go out first
// once the peer reads, then the next chunks and the bytes queued behind.
TEST_F(AsioNetworkTest, ACopiedFileRegionResumesMidChunkWhenThePeerReads) {
  auto listener = serve(/*watch_accepted=*/false);
  Inbox client_inbox;
  auto client = connect_pair(listener, client_inbox);
  ASSERT_NE(client, nullptr);
  const std::vector<uint8_t> data = pattern(5 << 20, 31);
  auto memory_file = std::make_shared<BytesFile>(data);
  call([&] {
    client->send(bytes_of("head"));
    client->send_file_region(memory_file, 0, static_cast<uint32_t>(data.size()));
    client->send(bytes_of("tail"));
  });
  env_.run_for(milliseconds(100));
  const uint64_t stuck = client->pending_output_bytes();
  EXPECT_GT(stuck, 0u) << "5 MiB unread cannot all sit in socket buffers";
  EXPECT_LT(stuck, data.size()) << "nothing was written while the peer's buffer had room";
  Inbox& server = server_inboxes_[0];
  watch(accepted_[0], server);
  const size_t total = data.size() + 8;
  ASSERT_TRUE(run_until([&] { return server.bytes.size() >= total; }));
  ASSERT_EQ(server.bytes.size(), total);
  EXPECT_EQ(std::string(server.bytes.begin(), server.bytes.begin() + 4), "head");
  EXPECT_TRUE(std::equal(data.begin(), data.end(), server.bytes.begin() + 4));
  EXPECT_EQ(std::string(server.bytes.end() - 4, server.bytes.end()), "tail");
  EXPECT_TRUE(run_until([&] { return client->pending_output_bytes() == 0; }));
}

// The owner closes a connection and lets go of it while its output waits
// for a peer that does not read: the output still drains, whole, once the
// peer reads, and then the peer sees a clean end (FIN, not a reset).
TEST_F(AsioNetworkTest, AClosedAndDroppedConnectionStillDrainsWhatWaitsForRoom) {
  auto listener = serve(/*watch_accepted=*/false);
  Inbox client_inbox;
  auto client = connect_pair(listener, client_inbox);
  ASSERT_NE(client, nullptr);
  const std::vector<uint8_t> big = pattern(8 << 20, 17);
  call([&] { client->send(big); });
  env_.run_for(milliseconds(100));
  EXPECT_GT(client->pending_output_bytes(), 0u) << "8 MiB unread cannot all sit in socket buffers";
  call([&] { client->close(); });
  client.reset();
  env_.run_for(milliseconds(50));
  Inbox& server = server_inboxes_[0];
  watch(accepted_[0], server);
  ASSERT_TRUE(run_until([&] { return server.closed.has_value(); }));
  EXPECT_EQ(server.bytes.size(), big.size());
  EXPECT_TRUE(server.bytes == big);
  EXPECT_EQ(server.closed->code(), StatusCode::kUnavailable) << server.closed->to_string();
}

TEST_F(AsioNetworkTest, ListenerRejectsBadAndBusyAddresses) {
  auto listener = serve();
  auto busy = network_.listen(listener->local_address(), [](std::shared_ptr<Connection>) {});
  EXPECT_EQ(busy.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(busy.status().message(), "address already in use: " + listener->local_address());
  EXPECT_EQ(network_.listen("localhost", [](std::shared_ptr<Connection>) {}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(network_.listen("localhost:0", [](std::shared_ptr<Connection>) {}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(AsioNetworkTest, DestroyedNetworkCallsNobody) {
  auto network = std::make_unique<AsioNetwork>(env_.io_context(), env_.executor());
  int accepts = 0;
  auto listener = network->listen("127.0.0.1:0", [&](std::shared_ptr<Connection>) { ++accepts; });
  ASSERT_TRUE(listener.ok());
  bool connected = false;
  network->connect((*listener)->local_address(), seconds(5),
                   [&](Result<std::shared_ptr<Connection>>) { connected = true; });
  network.reset();
  env_.run_for(milliseconds(50));
  EXPECT_EQ(accepts, 0);
  EXPECT_FALSE(connected);
}

}  // namespace
}  // namespace mqlab::env::asio_network_test
