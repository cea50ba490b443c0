// EpollSocketSet: AsioNetwork's readiness watch over every connected socket,
// for input and for output, one level-triggered epoll set of its own, woken
// through one Asio wait on that set's descriptor per batch of ready sockets.
// The sockets themselves are not in Asio's reactor at all (AsioNetwork
// releases them from it once connected).
//
// Why not one Asio wait per socket: Boost 1.74's epoll_reactor re-arms a
// non-speculative wait (socket.async_wait) with epoll_ctl(EPOLL_CTL_MOD) on
// every wait, one syscall per request; and its speculative recv
// (async_read_some) reports done_and_exhausted only at EOF
// (reactive_socket_recv_op.hpp), so each read is followed by a recv that
// returns EAGAIN, and it needs a buffer per connection while it waits.
// Why not leave the sockets registered with Asio too: its reactor registers
// every socket edge-triggered for input, so each arriving segment also woke
// Asio's own epoll_wait for a descriptor with no operation, work for nothing
// on every request. Here a socket costs one epoll_ctl when it joins and one
// when it leaves, one more each time a full socket buffer makes its writer
// wait for output room and one when that wait ends; a wakeup costs one
// epoll_ctl (re-arming the one Asio wait) and one epoll_wait for however many
// sockets became ready meanwhile. Level-triggered, so a socket that had more
// than one read's worth is simply reported again next batch.
//
// The ids are the caller's (AsioNetwork's stream ids), never pointers: a
// socket closed while its readiness is in a batch is looked up and missed.
// The set keeps no state per socket: the caller says what a socket was
// watched for when it changes it.
//
// Threading: belongs to the thread running the io_context. Requires: the
// io_context outlives this object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "broker/common/status.h"
#include "broker/env/asio.h"

namespace mqlab::env {

class EpollSocketSet {
 public:
  using WaitCallback = std::function<void(const boost::system::error_code&)>;

  // What a socket is watched for: a bit set of kInput and kOutput.
  using Interest = uint8_t;
  static constexpr Interest kNone = 0;
  static constexpr Interest kInput = 1;   // readable (bytes, an end, an error)
  static constexpr Interest kOutput = 2;  // writable (room to send, or an error)

  // One socket reported by take_ready. An error or hang-up is reported as
  // both input and output: whichever the caller waits for then meets it.
  struct Ready {
    uint64_t id = 0;
    bool input = false;
    bool output = false;
  };

  // A new, empty set; the error when the kernel refuses an epoll instance
  // (EMFILE, ENOMEM).
  static Result<std::unique_ptr<EpollSocketSet>> open(boost::asio::io_context& io);
  // Closes the epoll descriptor; a wait in flight completes as operation_aborted.
  ~EpollSocketSet();

  EpollSocketSet(const EpollSocketSet&) = delete;
  EpollSocketSet& operator=(const EpollSocketSet&) = delete;

  // Changes what fd is watched for under id, from `from` (what the last call
  // for fd set, kNone when it is not in the set) to `to`: kNone takes it out
  // of the set. Requires: fd is a connected socket, open (take it out before
  // closing it, so a descriptor number reused by a new socket is never
  // confused with the old one). Fails only when the kernel refuses
  // (ENOMEM, the max_user_watches limit); fd is then watched as before.
  Status watch(int fd, uint64_t id, Interest from, Interest to);
  // Sockets in the set (watched for anything).
  size_t size() const { return size_; }

  // Calls done once, from the io_context, when a socket of the set is ready
  // (or the wait fails or is aborted). done may run after this set is
  // destroyed: it must check that its owner is still there. Requires: no
  // wait in flight.
  void async_wait(WaitCallback done);
  bool waiting() const { return *waiting_; }
  // The sockets ready now for what they are watched for, at most
  // ready.size() of them, without blocking; writes them to the front of
  // ready and returns how many.
  size_t take_ready(std::span<Ready> ready);

 private:
  EpollSocketSet(boost::asio::io_context& io, int epoll_fd);

  boost::asio::posix::stream_descriptor descriptor_;  // owns the epoll fd
  size_t size_ = 0;
  // Shared with the wait's completion, which may outlive this set.
  std::shared_ptr<bool> waiting_ = std::make_shared<bool>(false);
};

}  // namespace mqlab::env
