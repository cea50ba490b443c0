// AsioNetwork's read path (the EpollSocketSet every connected socket sits in),
// driven by raw POSIX sockets on 127.0.0.1 so the test decides how bytes are
// split, when the peer stops, and how it hangs up: frames split across
// writes, a backlog larger than the shared read buffer (read in one wakeup,
// up to 16 buffers), a peer gone mid-frame, hundreds of connections, a
// stream closed while its readiness is queued or by its own on_bytes.
#include "broker/env/asio_network.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "broker/env/epoll_socket_set.h"
#include "broker/env/posix_env.h"
#include "broker/env/test/network_test_bytes.h"

namespace mqlab::env::asio_network_read_test {
namespace {

using nettest::pattern;
using std::chrono::milliseconds;

constexpr milliseconds kLimit(10'000);  // generous: a loaded CI machine
constexpr size_t kSharedReadBufferBytes = 64 * 1024;  // asio_network.cc's kReadChunkBytes

struct Received {
  std::vector<uint8_t> bytes;
  std::vector<size_t> read_sizes;  // one per on_bytes
  std::optional<Status> closed;
  int callbacks_after_close = 0;
};

// A blocking client socket of the test's own, connected to an AsioNetwork listener.
class RawPeer {
 public:
  explicit RawPeer(const std::string& address) {
    const size_t colon = address.rfind(':');
    sockaddr_in target{};
    target.sin_family = AF_INET;
    target.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
    EXPECT_EQ(::inet_pton(AF_INET, address.substr(0, colon).c_str(), &target.sin_addr), 1);
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd_, 0);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&target), sizeof(target)), 0);
  }
  ~RawPeer() { close(); }
  RawPeer(const RawPeer&) = delete;
  RawPeer& operator=(const RawPeer&) = delete;

  void write(std::span<const uint8_t> bytes) {
    size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t written = ::send(fd_, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
      ASSERT_GT(written, 0);
      at += static_cast<size_t>(written);
    }
  }
  // Writes what fits in the socket buffers now, without waiting; how much.
  size_t write_what_fits(std::span<const uint8_t> bytes) {
    size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t written = ::send(fd_, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (written <= 0) break;
      at += static_cast<size_t>(written);
    }
    return at;
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // close() with linger 0: the peer sees a reset, not an end.
  void reset() {
    const linger abort{1, 0};
    ASSERT_EQ(::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &abort, sizeof(abort)), 0);
    close();
  }

 private:
  int fd_ = -1;
};

class AsioNetworkReadTest : public ::testing::Test {
 protected:
  bool run_until(const std::function<bool()>& done) { return env_.run_until(done, kLimit); }

  // Listens on 127.0.0.1; every accepted connection is kept and watched
  // into its own Received, in accept order.
  void serve() {
    Result<std::shared_ptr<Listener>> listener = network_.listen("127.0.0.1:0", [this](std::shared_ptr<Connection> c) {
      accepted_.push_back(c);
      received_.emplace_back();
      Received& into = received_.back();
      c->set_handlers(
          [&into](std::span<const uint8_t> bytes) {
            if (into.closed) ++into.callbacks_after_close;
            EXPECT_FALSE(bytes.empty());
            EXPECT_LE(bytes.size(), kSharedReadBufferBytes);
            into.bytes.insert(into.bytes.end(), bytes.begin(), bytes.end());
            into.read_sizes.push_back(bytes.size());
          },
          [&into](Status reason) {
            if (into.closed) ++into.callbacks_after_close;
            into.closed = std::move(reason);
          });
    });
    ASSERT_TRUE(listener.ok()) << listener.status().to_string();
    listener_ = *listener;
  }

  // A raw peer, once the listener has accepted it.
  std::unique_ptr<RawPeer> accept_peer() {
    const size_t before = accepted_.size();
    auto peer = std::make_unique<RawPeer>(listener_->local_address());
    EXPECT_TRUE(run_until([&] { return accepted_.size() > before; }));
    return peer;
  }

  PosixEnv env_{uint64_t{7}};
  AsioNetwork network_{env_.io_context(), env_.executor()};
  std::shared_ptr<Listener> listener_;
  std::vector<std::shared_ptr<Connection>> accepted_;
  std::deque<Received> received_;  // a deque: the handlers keep references
};

// A remoting frame (4-byte length, then the rest) written a byte, then three,
// then the remainder in two pieces, with the loop run between: every piece
// comes up on its own read, whole and in order; nothing waits for more.
TEST_F(AsioNetworkReadTest, AFrameSplitAcrossWritesArrivesPieceByPieceInOrder) {
  serve();
  auto peer = accept_peer();
  const std::vector<uint8_t> frame = pattern(1000, 3);
  const std::array<size_t, 4> cuts{1, 4, 600, frame.size()};
  size_t from = 0;
  for (const size_t to : cuts) {
    peer->write(std::span<const uint8_t>(frame).subspan(from, to - from));
    ASSERT_TRUE(run_until([&] { return received_[0].bytes.size() >= to; })) << "stuck before byte " << to;
    EXPECT_EQ(received_[0].bytes.size(), to) << "read past what was written";
    from = to;
  }
  EXPECT_EQ(received_[0].bytes, frame);
  EXPECT_EQ(received_[0].read_sizes, (std::vector<size_t>{1, 3, 596, 400}));
  EXPECT_FALSE(received_[0].closed.has_value());
}

// More bytes than the one shared read buffer holds, written while the loop
// does not run, then nothing more: the first read takes 64 KiB and the rest
// is reported again (level-triggered) with no new input to wake anyone.
TEST_F(AsioNetworkReadTest, ABacklogLargerThanTheReadBufferIsReadToTheEndWithoutNewInput) {
  serve();
  auto peer = accept_peer();
  const std::vector<uint8_t> backlog = pattern(1 << 20, 5);
  // Loopback's socket buffers hold well over 64 KiB (tcp_rmem's default
  // alone is 128 KiB); 1 MiB may not fit: a thread writes the rest while the
  // loop reads.
  const size_t prefilled = peer->write_what_fits(backlog);
  ASSERT_GT(prefilled, kSharedReadBufferBytes);
  std::thread writer([&] { peer->write(std::span<const uint8_t>(backlog).subspan(prefilled)); });
  const bool all = run_until([&] { return received_[0].bytes.size() >= backlog.size(); });
  writer.join();
  ASSERT_TRUE(all);
  EXPECT_TRUE(received_[0].bytes == backlog);
  EXPECT_GE(received_[0].read_sizes.size(), backlog.size() / kSharedReadBufferBytes);
  EXPECT_EQ(*std::max_element(received_[0].read_sizes.begin(), received_[0].read_sizes.end()),
            kSharedReadBufferBytes)
      << "a backlog this size fills the shared buffer at least once";
}

// One wakeup reads a ready socket until it is drained, up to 16 recvs (as
// Netty's maxMessagesPerRead): a pipelining client's requests then join one
// group commit, not just the 64 KiB of one recv. run_until stops after the
// handler that first delivers bytes, the one wakeup: by then every byte
// written beforehand is in.
TEST_F(AsioNetworkReadTest, OneWakeupReadsABacklogInSeveralReceives) {
  serve();
  auto peer = accept_peer();
  const std::vector<uint8_t> backlog = pattern(4 * kSharedReadBufferBytes, 6);
  const size_t prefilled = peer->write_what_fits(backlog);
  ASSERT_GT(prefilled, 2 * kSharedReadBufferBytes) << "loopback's socket buffers hold less than 128 KiB";
  ASSERT_TRUE(run_until([&] { return !received_[0].bytes.empty(); }));
  std::string sizes;
  for (size_t size : received_[0].read_sizes) sizes += std::to_string(size) + " ";
  EXPECT_EQ(received_[0].bytes.size(), prefilled) << "the wakeup stopped before the socket was drained: " << sizes;
  peer->write(std::span<const uint8_t>(backlog).subspan(prefilled));
  ASSERT_TRUE(run_until([&] { return received_[0].bytes.size() == backlog.size(); }));
  EXPECT_TRUE(received_[0].bytes == backlog);
}

// A stream closed by its own on_bytes is not read again in that wakeup,
// however much waits in its socket.
TEST_F(AsioNetworkReadTest, AStreamClosedInItsOwnOnBytesIsNotReadAgain) {
  std::shared_ptr<Connection> accepted;
  int reads = 0;
  Result<std::shared_ptr<Listener>> listener = network_.listen("127.0.0.1:0", [&](std::shared_ptr<Connection> c) {
    accepted = c;
    c->set_handlers(
        [&](std::span<const uint8_t>) {
          ++reads;
          accepted->close();
        },
        [](Status) {});
  });
  ASSERT_TRUE(listener.ok());
  RawPeer peer((*listener)->local_address());
  ASSERT_TRUE(run_until([&] { return accepted != nullptr; }));
  ASSERT_GT(peer.write_what_fits(pattern(4 * kSharedReadBufferBytes, 7)), 2 * kSharedReadBufferBytes);
  ASSERT_TRUE(run_until([&] { return reads > 0; }));
  env_.run_for(milliseconds(50));
  EXPECT_EQ(reads, 1);
  EXPECT_EQ(network_.open_connections(), 0u);
}

// A peer that hangs up half-way through a frame: its bytes come first, then
// "closed by peer"; a reset is "reset by peer". Nothing calls after on_close.
TEST_F(AsioNetworkReadTest, APeerGoneMidFrameDeliversItsBytesThenTheBreak) {
  serve();
  auto ends = accept_peer();
  auto resets = accept_peer();
  const std::vector<uint8_t> half = pattern(300, 7);
  ends->write(half);
  ends->close();
  resets->write(half);
  ASSERT_TRUE(run_until([&] { return received_[1].bytes.size() == half.size(); }));
  resets->reset();
  ASSERT_TRUE(run_until([&] { return received_[0].closed && received_[1].closed; }));
  EXPECT_EQ(received_[0].bytes, half);
  EXPECT_EQ(received_[0].closed->code(), StatusCode::kUnavailable) << received_[0].closed->to_string();
  EXPECT_EQ(received_[1].bytes, half);
  EXPECT_EQ(received_[1].closed->code(), StatusCode::kIoError) << received_[1].closed->to_string();
  EXPECT_NE(received_[1].closed->message().find("reset by peer"), std::string::npos);
  env_.run_for(milliseconds(20));
  EXPECT_EQ(received_[0].callbacks_after_close + received_[1].callbacks_after_close, 0);
  EXPECT_EQ(network_.open_connections(), 0u);
}

// More connections than one batch of the read set takes (64), all written
// to before the loop runs: each gets exactly its own bytes, whatever order
// the kernel reports them in; closing them all leaves the set empty and the
// network still serving a newcomer.
TEST_F(AsioNetworkReadTest, HundredsOfConnectionsEachReceiveExactlyTheirOwnBytes) {
  serve();
  constexpr size_t kPeers = 300;
  std::vector<std::unique_ptr<RawPeer>> peers;
  for (size_t i = 0; i < kPeers; ++i) peers.push_back(accept_peer());
  ASSERT_EQ(accepted_.size(), kPeers);
  for (size_t i = 0; i < kPeers; ++i) peers[i]->write(pattern(100 + i, static_cast<uint32_t>(i)));
  ASSERT_TRUE(run_until([&] {
    for (size_t i = 0; i < kPeers; ++i) {
      if (received_[i].bytes.size() < 100 + i) return false;
    }
    return true;
  }));
  for (size_t i = 0; i < kPeers; ++i) {
    EXPECT_EQ(received_[i].bytes, pattern(100 + i, static_cast<uint32_t>(i))) << "connection " << i;
  }
  for (const auto& connection : accepted_) connection->close();
  EXPECT_EQ(network_.open_connections(), 0u);
  auto newcomer = accept_peer();
  newcomer->write(pattern(10, 1));
  ASSERT_TRUE(run_until([&] { return received_.back().bytes.size() == 10; }));
}

// Two connections readable in the same wakeup, each closing the other from
// its on_bytes: whichever is read first closes its neighbour, whose queued
// readiness must then be skipped, not read into a closed stream.
TEST_F(AsioNetworkReadTest, AStreamClosedByAnEarlierCallbackOfTheSameBatchIsNotRead) {
  std::vector<std::shared_ptr<Connection>> accepted;
  int reads = 0;
  Result<std::shared_ptr<Listener>> listener = network_.listen("127.0.0.1:0", [&](std::shared_ptr<Connection> c) {
    accepted.push_back(c);
    const size_t me = accepted.size() - 1;
    c->set_handlers(
        [&, me](std::span<const uint8_t>) {
          ++reads;
          accepted[1 - me]->close();
        },
        [](Status) {});
  });
  ASSERT_TRUE(listener.ok());
  RawPeer first((*listener)->local_address());
  RawPeer second((*listener)->local_address());
  ASSERT_TRUE(run_until([&] { return accepted.size() == 2; }));
  first.write(pattern(10, 1));
  second.write(pattern(10, 2));
  ASSERT_TRUE(run_until([&] { return reads > 0; }));
  env_.run_for(milliseconds(50));
  EXPECT_EQ(reads, 1);
  EXPECT_EQ(network_.open_connections(), 1u);
}

// The owner destroys the whole network from on_bytes while other streams'
// readiness is in the same batch (and the read set's next wait may already
// be complete): nobody else is read or called, and nothing runs afterwards.
TEST_F(AsioNetworkReadTest, ANetworkDestroyedFromOnBytesReadsAndCallsNobodyElse) {
  auto network = std::make_unique<AsioNetwork>(env_.io_context(), env_.executor());
  std::vector<std::shared_ptr<Connection>> accepted;
  int calls = 0;
  Result<std::shared_ptr<Listener>> listener = network->listen("127.0.0.1:0", [&](std::shared_ptr<Connection> c) {
    accepted.push_back(c);
    c->set_handlers(
        [&](std::span<const uint8_t>) {
          ++calls;
          accepted.clear();
          network.reset();
        },
        [&](Status) { ++calls; });
  });
  ASSERT_TRUE(listener.ok());
  const std::string address = (*listener)->local_address();
  std::vector<std::unique_ptr<RawPeer>> peers;
  for (int i = 0; i < 5; ++i) peers.push_back(std::make_unique<RawPeer>(address));
  ASSERT_TRUE(run_until([&] { return accepted.size() == peers.size(); }));
  for (auto& peer : peers) peer->write(pattern(10, 1));
  ASSERT_TRUE(run_until([&] { return network == nullptr; }));
  // The sockets were reset: these writes may fail; they must wake nobody.
  for (auto& peer : peers) peer->write_what_fits(pattern(10, 2));
  env_.run_for(milliseconds(50));
  EXPECT_EQ(calls, 1);
}

// For every epoll instance of this process, the descriptors it watches
// (Linux lists them as "tfd:" lines in /proc/self/fdinfo).
std::map<int, std::vector<int>> epoll_watch_lists() {
  std::map<int, std::vector<int>> lists;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    const std::string target = std::filesystem::read_symlink(entry.path(), error).string();
    if (error || target != "anon_inode:[eventpoll]") continue;
    const int epoll_fd = std::stoi(entry.path().filename().string());
    std::ifstream info("/proc/self/fdinfo/" + std::to_string(epoll_fd));
    std::vector<int>& watched = lists[epoll_fd];
    for (std::string word; info >> word;) {
      if (word == "tfd:") {
        int fd = -1;
        info >> fd;
        watched.push_back(fd);
      }
    }
  }
  return lists;
}

bool is_connected_socket(int fd) {
  int listening = 0;
  socklen_t size = sizeof(listening);
  return ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0 && listening == 0;
}

// Each connected socket is watched by the network's socket set alone, not
// also by Asio's reactor (which registers a socket edge-triggered for input
// as soon as it exists, so every arriving segment woke it for nothing):
// however many connections, and whether they only read or also wait to
// write, no socket is in two epoll instances.
TEST_F(AsioNetworkReadTest, EachConnectedSocketIsWatchedByOneEpollInstanceOnly) {
  serve();
  auto reader = accept_peer();
  auto stuck = accept_peer();  // never reads: its stream waits for room
  auto idle = accept_peer();
  reader->write(pattern(100, 1));
  ASSERT_TRUE(run_until([&] { return received_[0].bytes.size() == 100; }));
  accepted_[1]->send(pattern(8 << 20, 2));
  env_.run_for(milliseconds(100));
  ASSERT_GT(accepted_[1]->pending_output_bytes(), 0u) << "8 MiB unread cannot all sit in socket buffers";

  std::map<int, int> instances_watching;  // connected socket -> epoll instances watching it
  for (const auto& [epoll_fd, watched] : epoll_watch_lists()) {
    for (const int fd : watched) {
      if (is_connected_socket(fd)) ++instances_watching[fd];
    }
  }
  EXPECT_EQ(instances_watching.size(), 3u) << "the three accepted sockets, watched (the peers' own are not)";
  for (const auto& [fd, instances] : instances_watching) {
    EXPECT_EQ(instances, 1) << "socket " << fd << " is watched by " << instances << " epoll instances";
  }
  stuck->close();
}

// The set itself: level-triggered (unread input and unused room are
// reported again), ids come back as given, what a socket is watched for can
// change, a socket taken out is never reported.
TEST(EpollSocketSet, ReportsWhatEachSocketIsWatchedForUntilItIsTakenOut) {
  boost::asio::io_context io;
  Result<std::unique_ptr<EpollSocketSet>> opened = EpollSocketSet::open(io);
  ASSERT_TRUE(opened.ok()) << opened.status().to_string();
  EpollSocketSet& set = **opened;
  using Set = EpollSocketSet;
  std::array<int, 2> a{};
  std::array<int, 2> b{};
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a.data()), 0);
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b.data()), 0);
  ASSERT_TRUE(set.watch(a[0], 11, Set::kNone, Set::kInput).ok());
  ASSERT_TRUE(set.watch(b[0], 22, Set::kNone, Set::kInput).ok());
  EXPECT_EQ(set.size(), 2u);
  std::array<Set::Ready, 8> ready{};
  EXPECT_EQ(set.take_ready(ready), 0u) << "nothing written yet, and room to write is not asked for";
  ASSERT_EQ(::write(a[1], "x", 1), 1);
  ASSERT_EQ(set.take_ready(ready), 1u);
  EXPECT_EQ(ready[0].id, 11u);
  EXPECT_TRUE(ready[0].input);
  EXPECT_FALSE(ready[0].output);
  ASSERT_EQ(set.take_ready(ready), 1u) << "unread: reported again";
  EXPECT_EQ(ready[0].id, 11u);

  bool woke = false;
  set.async_wait([&](const boost::system::error_code& error) {
    EXPECT_FALSE(error);
    woke = true;
  });
  EXPECT_TRUE(set.waiting());
  io.run_for(milliseconds(1000));
  EXPECT_TRUE(woke);
  EXPECT_FALSE(set.waiting());

  // b watched for output too: it has room, reported until no longer asked.
  ASSERT_TRUE(set.watch(b[0], 22, Set::kInput, Set::kInput | Set::kOutput).ok());
  EXPECT_EQ(set.size(), 2u);
  ASSERT_TRUE(set.watch(a[0], 11, Set::kInput, Set::kNone).ok());
  EXPECT_EQ(set.size(), 1u);
  for (int round = 0; round < 2; ++round) {
    ASSERT_EQ(set.take_ready(ready), 1u);
    EXPECT_EQ(ready[0].id, 22u);
    EXPECT_FALSE(ready[0].input);
    EXPECT_TRUE(ready[0].output);
  }
  ASSERT_TRUE(set.watch(b[0], 22, Set::kInput | Set::kOutput, Set::kOutput).ok());
  ASSERT_EQ(::write(b[1], "y", 1), 1);
  ASSERT_EQ(set.take_ready(ready), 1u);
  EXPECT_FALSE(ready[0].input) << "input is no longer asked for";
  EXPECT_TRUE(ready[0].output);
  ASSERT_TRUE(set.watch(b[0], 22, Set::kOutput, Set::kInput).ok());
  ASSERT_EQ(set.take_ready(ready), 1u);
  EXPECT_TRUE(ready[0].input);
  EXPECT_FALSE(ready[0].output);

  // A hang-up is reported both ways, whatever is asked for.
  ::close(b[1]);
  ASSERT_TRUE(set.watch(b[0], 22, Set::kInput, Set::kOutput).ok());
  ASSERT_EQ(set.take_ready(ready), 1u);
  EXPECT_TRUE(ready[0].input);
  EXPECT_TRUE(ready[0].output);
  ASSERT_TRUE(set.watch(b[0], 22, Set::kOutput, Set::kNone).ok());
  EXPECT_EQ(set.size(), 0u);
  EXPECT_EQ(set.take_ready(ready), 0u);
  for (const int fd : {a[0], a[1], b[0]}) ::close(fd);
}

}  // namespace
}  // namespace mqlab::env::asio_network_read_test
