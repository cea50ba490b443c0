// The network seam: how broker code listens, connects and moves bytes.
//
// A Connection is an ordered, reliable byte stream, as TCP is. Framing is the
// caller's business (broker/remoting): bytes may arrive split or joined in any
// way, never reordered, duplicated or altered. Three implementations keep one
// contract, so broker code cannot tell them apart:
//   - AsioNetwork (asio_network.h): real TCP; file regions go out by sendfile.
//   - LoopbackNetwork (loopback_network.h): in-process, deterministic, for tests.
//   - SimNet (sim/): latency, bandwidth, partitions, resets of dead processes.
//
// Addresses are "host:port" strings ("127.0.0.1:10911", "[::1]:9876",
// "broker-a:10911"), so one config works in both worlds; parse_address() below
// is the one parser. Port 0 in listen() picks a free port; the Listener tells
// which.
//
// The contract every implementation keeps:
//   - Single-threaded. Every call is made, and every callback runs, on the
//     executor of the Env whose Network made the connection (for an accepted
//     one, the listener's). No callback ever runs inline inside the call that
//     caused it: send(), close(), set_handlers(), listen() and connect() only
//     queue work.
//   - Order. Bytes of send() and send_file_region() calls reach the peer in
//     call order, each region's bytes where its call put them.
//   - Reading starts at the first set_handlers(). Bytes (or a break) that
//     arrive earlier wait, so an accepted connection loses nothing between
//     on_accept and set_handlers. on_bytes gets chunks of any size >= 1; the
//     span is valid only during the call.
//   - on_close runs at most once, after every on_bytes, and nothing runs after
//     it. Its Status says why the stream ended:
//       Unavailable "connection closed by peer: <remote>"  the peer closed
//         (close() or dropped its Connection) after its output drained;
//       IoError "connection reset by peer: <remote>"  the peer process died or
//         the stream was reset;
//       Timeout "connection timed out: <remote>"  the transport gave up on an
//         unresponsive peer (a partition, a dead machine);
//       IoError naming the file, when a local send_file_region could not read
//         its file (the peer then sees a reset: the stream lost its framing);
//       IoError with the OS's words for anything else.
//   - close() is the owner saying goodbye: idempotent, and once it returns no
//     callback of this connection runs again, not even on_close. Output queued
//     before close() is still delivered (as the kernel sends its buffer after a
//     TCP close), then the peer sees "closed by peer". Dropping the last
//     shared_ptr to a Connection closes it the same way. A break is reported
//     only to a side that has not closed.
//   - After close() or a break, send() and send_file_region() are no-ops: the
//     owner learns of a break from on_close, never from a send.
//   - Listener::close() (or dropping the Listener) stops accepting; no
//     on_accept runs after it returns. Accepted connections live on.
//   - connect()'s done runs exactly once, on the executor, never inline: with
//     an open Connection, or InvalidArgument (bad address), Unavailable
//     ("connection refused: <address>", an unknown host, an unreachable
//     network), or Timeout ("connect timed out after <n> ms: <address>").
//     Unless the Network itself is destroyed first: a destroyed Network (a
//     dead process) runs no callback at all.
//
// Requires of callers: a file region's bytes are not rewritten while it is
// queued (the real network reads them when they go out, the loopback when it
// is called); CommitLog bytes are immutable once written, so this holds.
#pragma once

#include <charconv>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/status.h"
#include "broker/common/types.h"

namespace mqlab::env {

class File;  // env.h; forward-declared so that env.h can include this header

// A parsed "host:port". host is a name or an IP address; an IPv6 address is
// kept without its brackets.
struct HostPort {
  std::string host;
  uint16_t port = 0;

  // The canonical spelling: "host:port", "[v6]:port". Implementations key
  // their tables by it, so "[::1]:80" and what parse_address makes of it agree.
  std::string to_string() const {
    const bool is_ipv6 = host.find(':') != std::string::npos;
    return (is_ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
  }
};

// Parses "host:port" (port 0..65535; an IPv6 host in brackets). Errors are
// InvalidArgument and quote the address.
inline Result<HostPort> parse_address(std::string_view address) {
  const std::string quoted = "address '" + std::string(address) + "'";
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return Status::InvalidArgument(quoted + ": expected host:port");
  std::string_view host = address.substr(0, colon);
  const std::string_view port_text = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return Status::InvalidArgument(quoted + ": an IPv6 host needs brackets, as in [::1]:9876");
  }
  if (host.empty()) return Status::InvalidArgument(quoted + ": empty host");
  if (host.find_first_of("[]/ \t\r\n") != std::string_view::npos) {
    return Status::InvalidArgument(quoted + ": host contains a character no host name has");
  }
  uint32_t port = 0;
  const char* const end = port_text.data() + port_text.size();
  const auto [stop, error] = std::from_chars(port_text.data(), end, port);
  if (port_text.empty() || port_text.front() == '+' || error != std::errc() || stop != end || port > 65535) {
    return Status::InvalidArgument(quoted + ": port must be a number from 0 to 65535");
  }
  return HostPort{std::string(host), static_cast<uint16_t>(port)};
}

// The owner's callbacks for one connection. See the contract above.
using BytesCallback = std::function<void(std::span<const uint8_t> bytes)>;
using CloseCallback = std::function<void(Status reason)>;

// One end of an established byte stream. Shared: the owner holds it, and the
// handlers commonly capture it (the cycle breaks when it closes).
class Connection {
 public:
  // Closes (see close()).
  virtual ~Connection() = default;

  // Installs (or replaces) the owner's callbacks; the first call starts reading.
  // Requires: both callbacks non-null.
  virtual void set_handlers(BytesCallback on_bytes, CloseCallback on_close) = 0;
  // Queues bytes behind everything sent before. Empty bytes are a no-op.
  virtual void send(std::vector<uint8_t> bytes) = 0;
  // Queues [offset, offset + length) of file behind everything sent before.
  // A region past the end of the file breaks the connection (IoError).
  // Requires: file non-null. length 0 is a no-op.
  virtual void send_file_region(std::shared_ptr<File> file, uint64_t offset, uint32_t length) = 0;
  // Goodbye: queued output still goes out, then the peer sees "closed by
  // peer". Idempotent; no callback of this connection runs after it returns.
  virtual void close() = 0;

  // False once close() was called or the stream broke (even if on_close has
  // not run yet).
  virtual bool is_open() const = 0;
  virtual const std::string& local_address() const = 0;
  virtual const std::string& remote_address() const = 0;
  // Bytes accepted by send()/send_file_region() and not yet handed to the
  // transport: what an output limit or back-pressure check looks at. 0 once
  // the connection is no longer open.
  virtual uint64_t pending_output_bytes() const = 0;
};

// A listening address. Dropping it stops accepting.
class Listener {
 public:
  virtual ~Listener() = default;
  // The address it listens on, with the port it got when asked for port 0.
  virtual const std::string& local_address() const = 0;
  // Stops accepting; idempotent; no on_accept runs after it returns.
  virtual void close() = 0;
};

// An accepted connection, with no handlers yet: set them to start reading.
using AcceptCallback = std::function<void(std::shared_ptr<Connection> connection)>;
using ConnectCallback = std::function<void(Result<std::shared_ptr<Connection>> connection)>;

class Network {
 public:
  virtual ~Network() = default;
  // Starts listening at once. InvalidArgument for a bad address, AlreadyExists
  // when the address is in use, IoError otherwise. on_accept runs on the
  // executor for every connection accepted until the Listener closes.
  // Requires: on_accept non-null.
  virtual Result<std::shared_ptr<Listener>> listen(const std::string& address, AcceptCallback on_accept) = 0;
  // Connects to address; done runs exactly once, on the executor (see the
  // contract above). Requires: timeout > 0; done non-null.
  virtual void connect(const std::string& address, Nanos timeout, ConnectCallback done) = 0;
};

}  // namespace mqlab::env
