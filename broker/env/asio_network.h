// AsioNetwork: the real env::Network, TCP over Boost.Asio on the io_context
// that the AsioExecutor runs, so every callback runs on the broker core's one
// thread.
//
// How the contract of network.h is kept:
//   - Sockets: once connected, a socket leaves Asio's reactor (released
//     from its tcp::socket) and is watched by the network's one
//     level-triggered epoll set instead (epoll_socket_set.h: no epoll_ctl per
//     read or write, and no wakeup of Asio's reactor per arriving segment).
//   - Reading: the first set_handlers() has the set watch the socket for
//     input; each report is one recv into a 64 KiB buffer that all sockets
//     share (an idle connection costs no buffer) and one on_bytes. close()
//     and breaks stop the watch.
//   - Writing: one queue per connection of byte chunks and file regions,
//     written strictly in order. Consecutive chunks go out in one gathered
//     write. A file region of a PosixFile goes out with sendfile(2) straight
//     from the page cache (zero copy, as RocketMQ's pull path does with
//     FileChannel.transferTo); where sendfile says EINVAL (a file system
//     without splice support) or the File is not a PosixFile, the region is
//     copied with pread and written. On a full socket the queue waits for the
//     set to report room (it watches the socket for output only meanwhile).
//   - pending_output_bytes() counts queued bytes not yet accepted by the
//     kernel.
//   - close(): queued output is flushed, then the socket is shut down and
//     closed. A peer that does not read for kCloseDrainTimeout (10 s) gets
//     its socket closed anyway, so a stuck client cannot pin a connection.
//   - Breaks: EOF is "closed by peer" (Unavailable), ECONNRESET/EPIPE
//     "connection reset by peer" (IoError), ETIMEDOUT "connection timed out"
//     (Timeout). on_close is posted to the executor.
//   - Sockets are TCP_NODELAY (request/response traffic, as RocketMQ sets);
//     listeners are SO_REUSEADDR, so a restarted broker binds at once despite
//     TIME_WAIT connections of its predecessor.
//   - Destroying the AsioNetwork closes every listener and connection it made
//     and no callback of it runs afterwards, even if the io_context runs on.
//
// listen() takes a numeric IP host ("0.0.0.0", "127.0.0.1", "[::1]"); connect()
// also resolves names, asynchronously, within its timeout.
//
// SIGPIPE: sendfile(2) has no MSG_NOSIGNAL, so writing to a reset socket would
// kill the process. The constructor sets SIGPIPE to SIG_IGN, process-wide, as
// every network server does; the error then comes back as EPIPE.
//
// Threading: everything here, and every Connection and Listener it makes,
// belongs to the thread running the io_context. Requires: the io_context
// outlives every Connection and Listener made here.
#pragma once

#include <memory>
#include <string>

#include "broker/env/asio.h"
#include "broker/env/env.h"
#include "broker/env/network.h"

namespace mqlab::env {

class AsioNetwork final : public Network {
 public:
  // executor: where on_close and early connect failures are posted; it must
  // run on io. Requires: io and executor outlive this object.
  AsioNetwork(boost::asio::io_context& io, Executor& executor);
  // Closes every listener and connection made here; nothing of them calls
  // back afterwards.
  ~AsioNetwork() override;

  AsioNetwork(const AsioNetwork&) = delete;
  AsioNetwork& operator=(const AsioNetwork&) = delete;

  Result<std::shared_ptr<Listener>> listen(const std::string& address, AcceptCallback on_accept) override;
  void connect(const std::string& address, Nanos timeout, ConnectCallback done) override;

  // Connections made here that are open (neither closed nor broken).
  size_t open_connections() const;

  // The state shared with every socket's handlers; defined in asio_network.cc.
  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace mqlab::env
