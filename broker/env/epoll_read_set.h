// EpollReadSet: AsioNetwork's readability watch over every connected socket,
// one level-triggered epoll set of its own, woken through one Asio wait on
// that set's descriptor per batch of ready sockets.
//
// Why not one Asio wait per socket: Boost 1.74's epoll_reactor re-arms a
// non-speculative wait (socket.async_wait) with epoll_ctl(EPOLL_CTL_MOD) on
// every wait, one syscall per request; and its speculative recv
// (async_read_some) reports done_and_exhausted only at EOF
// (reactive_socket_recv_op.hpp), so each read is followed by a recv that
// returns EAGAIN, and it needs a buffer per connection while it waits. Here a
// socket costs one epoll_ctl when it is added and one when it is removed; a
// wakeup costs one epoll_ctl (re-arming the one Asio wait) and one
// epoll_wait for however many sockets became readable meanwhile, then one
// recv each into the caller's shared buffer. Level-triggered, so a socket
// that had more than one read's worth is simply reported again next batch.
//
// The ids are the caller's (AsioNetwork's stream ids), never pointers: a
// socket closed while its readiness is in a batch is looked up and missed.
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

class EpollReadSet {
 public:
  using WaitCallback = std::function<void(const boost::system::error_code&)>;

  // A new, empty set; the error when the kernel refuses an epoll instance
  // (EMFILE, ENOMEM).
  static Result<std::unique_ptr<EpollReadSet>> open(boost::asio::io_context& io);
  // Closes the epoll descriptor; a wait in flight completes as operation_aborted.
  ~EpollReadSet();

  EpollReadSet(const EpollReadSet&) = delete;
  EpollReadSet& operator=(const EpollReadSet&) = delete;

  // Watches fd for readability (and errors, hang-ups) under id. Requires: fd
  // is a connected socket not in the set. Fails when the kernel refuses
  // (ENOMEM, the max_user_watches limit).
  Status add(int fd, uint64_t id);
  // Stops watching fd. Requires: fd is in the set and still open (remove
  // before close, so a descriptor number reused by a new socket is never
  // confused with the old one).
  void remove(int fd);
  size_t size() const { return size_; }

  // Calls done once, from the io_context, when a socket of the set is
  // readable (or the wait fails or is aborted). done may run after this set
  // is destroyed: it must check that its owner is still there. Requires: no
  // wait in flight.
  void async_wait(WaitCallback done);
  bool waiting() const { return *waiting_; }
  // The ids of sockets readable now, at most ids.size() of them, without
  // blocking; writes them to the front of ids and returns how many.
  size_t take_ready(std::span<uint64_t> ids);

 private:
  EpollReadSet(boost::asio::io_context& io, int epoll_fd);

  boost::asio::posix::stream_descriptor descriptor_;  // owns the epoll fd
  size_t size_ = 0;
  // Shared with the wait's completion, which may outlive this set.
  std::shared_ptr<bool> waiting_ = std::make_shared<bool>(false);
};

}  // namespace mqlab::env
