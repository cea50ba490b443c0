// AsioHttpServer: a small HTTP/1.1 server (Boost.Beast) for the console
// pages and /metrics, on the io_context the broker's AsioExecutor runs, so
// the HttpHandler runs on the broker's one thread, between its other
// tasks, and reads broker state without a lock. Real-only code: mqsim never
// builds one (the pages' content is env-neutral and tested apart).
//
// Robustness, because anything on the network may connect:
//   - A request whose head exceeds header_limit_bytes is answered 431, a
//     body over body_limit_bytes 413, anything Beast cannot parse 400; each
//     then closes the connection (after the answer, reading and dropping
//     what the peer still sends for a moment, so the answer is not lost to
//     a reset).
//   - Each read and each write must finish within idle_timeout (a request
//     dribbled byte by byte, a peer that never reads): the connection is
//     closed. Idle keep-alive connections close after idle_timeout too.
//   - At most max_connections at once; more are accepted and closed at once.
//   - The handler runs synchronously and must not block; an exception from
//     it becomes a 500, never an exception out of io_context::run.
//   - Writes are asynchronous: a slow client delays only itself.
// Keep-alive and pipelined requests are served in order, one at a time per
// connection. HEAD gets GET's headers without the body.
//
// Destroying the server closes the listener and every connection; no
// handler runs afterwards even if the io_context runs on.
//
// Threading: everything here belongs to the thread running the io_context.
// Requires: the io_context outlives the server.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "broker/common/status.h"
#include "broker/common/types.h"
#include "broker/env/asio.h"
#include "broker/http/http_message.h"

namespace mqlab::http {

struct HttpServerLimits {
  size_t header_limit_bytes = 8 * 1024;  // request line + headers
  size_t body_limit_bytes = 8 * 1024;    // GET needs none; a little is tolerated
  Nanos idle_timeout = seconds(15);
  Nanos drain_timeout = seconds(1);      // reading leftovers after an error answer
  size_t max_connections = 64;
};

struct HttpServerStats {
  uint64_t connections_accepted = 0;
  uint64_t connections_refused = 0;  // over max_connections
  uint64_t requests = 0;             // answered by the handler
  uint64_t bad_requests = 0;         // answered 400, 413 or 431 by the server
  uint64_t timeouts = 0;
};

class AsioHttpServer {
 public:
  // Listens on address ("host:port", numeric host, port 0 picks a free one).
  // InvalidArgument for a bad address, IoError when it cannot listen.
  static Result<std::unique_ptr<AsioHttpServer>> start(boost::asio::io_context& io, const std::string& address,
                                                       HttpHandler handler, HttpServerLimits limits = {});
  ~AsioHttpServer();
  AsioHttpServer(const AsioHttpServer&) = delete;
  AsioHttpServer& operator=(const AsioHttpServer&) = delete;

  // The bound address, with the real port.
  const std::string& address() const;
  const HttpServerStats& stats() const;
  size_t open_connections() const;

  struct State;  // shared with the connections' handlers; asio_http_server.cc

 private:
  explicit AsioHttpServer(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

}  // namespace mqlab::http
