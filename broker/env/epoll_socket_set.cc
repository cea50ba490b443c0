#include "broker/env/epoll_socket_set.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <string>
#include <system_error>
#include <utility>

#include "broker/common/assert.h"

namespace mqlab::env {
namespace {

// One epoll_wait takes at most this many ready sockets; the rest stay ready
// (level-triggered) and come with the next batch.
constexpr size_t kMaxReadyPerTake = 64;

std::string errno_text(int error) { return std::generic_category().message(error); }

uint32_t epoll_events(EpollSocketSet::Interest interest) {
  uint32_t events = 0;
  if (interest & EpollSocketSet::kInput) events |= EPOLLIN;
  if (interest & EpollSocketSet::kOutput) events |= EPOLLOUT;
  return events;
}

}  // namespace

Result<std::unique_ptr<EpollSocketSet>> EpollSocketSet::open(boost::asio::io_context& io) {
  const int epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0) return Status::IoError("epoll_create1 for the connections' socket set: " + errno_text(errno));
  // The constructor hands the descriptor to Asio, which closes it from now on.
  std::unique_ptr<EpollSocketSet> set(new EpollSocketSet(io, epoll_fd));
  if (!set->descriptor_.is_open()) {
    return Status::IoError("registering the connections' socket set with the io_context");
  }
  return set;
}

EpollSocketSet::EpollSocketSet(boost::asio::io_context& io, int epoll_fd) : descriptor_(io) {
  MQ_ASSERT(epoll_fd >= 0);
  boost::system::error_code error;
  descriptor_.assign(epoll_fd, error);
  if (error) ::close(epoll_fd);  // open() reports it: the descriptor stays closed
}

EpollSocketSet::~EpollSocketSet() {
  boost::system::error_code ignored;
  descriptor_.close(ignored);  // the wait in flight completes as operation_aborted
}

Status EpollSocketSet::watch(int fd, uint64_t id, Interest from, Interest to) {
  MQ_ASSERT(fd >= 0);
  MQ_ASSERT(descriptor_.is_open());
  MQ_ASSERT((from & ~(kInput | kOutput)) == 0 && (to & ~(kInput | kOutput)) == 0);
  if (from == to) return Status::Ok();
  if (to == kNone) {
    MQ_ASSERT(size_ > 0);
    // EPOLL_CTL_DEL allocates nothing: it fails only for a descriptor that is
    // not in the set or not open, which is our bug.
    const int result = ::epoll_ctl(descriptor_.native_handle(), EPOLL_CTL_DEL, fd, nullptr);
    MQ_ASSERT_MSG(result == 0, "removing socket " + std::to_string(fd) + " from the socket set: " + errno_text(errno));
    --size_;
    return Status::Ok();
  }
  // Level-triggered: a socket left with unread bytes (one recv takes at most
  // the shared buffer), or with room its writer has not used yet, is
  // reported again, with no re-arming call.
  epoll_event event{};
  event.events = epoll_events(to);
  event.data.u64 = id;
  const int op = from == kNone ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
  if (::epoll_ctl(descriptor_.native_handle(), op, fd, &event) != 0) {
    const int error = errno;
    MQ_ASSERT_MSG(error != EEXIST, "socket " + std::to_string(fd) + " added to the socket set twice");
    MQ_ASSERT_MSG(error != ENOENT, "socket " + std::to_string(fd) + " changed in the socket set but not in it");
    return Status::IoError(std::string("watching a connection (epoll_ctl ") + (op == EPOLL_CTL_ADD ? "ADD" : "MOD") +
                           "): " + errno_text(error));
  }
  if (from == kNone) ++size_;
  return Status::Ok();
}

void EpollSocketSet::async_wait(WaitCallback done) {
  MQ_ASSERT(done != nullptr);
  MQ_ASSERT(!*waiting_);
  *waiting_ = true;
  // The completion may run after this set is gone (closed while its wait was
  // already complete and queued, or aborted by the close): it holds the flag,
  // never this.
  descriptor_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                         [waiting = waiting_, done = std::move(done)](const boost::system::error_code& error) {
                           MQ_ASSERT(*waiting);
                           *waiting = false;
                           done(error);
                         });
}

size_t EpollSocketSet::take_ready(std::span<Ready> ready) {
  MQ_ASSERT(!ready.empty());
  std::array<epoll_event, kMaxReadyPerTake> events;
  const int limit = static_cast<int>(std::min(ready.size(), events.size()));
  const int count = ::epoll_wait(descriptor_.native_handle(), events.data(), limit, /*timeout_ms=*/0);
  if (count < 0) {
    // EINTR: nothing taken, the sockets stay ready. Anything else is a broken
    // epoll descriptor, our bug.
    MQ_ASSERT_MSG(errno == EINTR, "epoll_wait on the socket set: " + errno_text(errno));
    return 0;
  }
  MQ_ASSERT(count <= limit);
  for (int i = 0; i < count; ++i) {
    const epoll_event& event = events[static_cast<size_t>(i)];
    const bool broken = (event.events & (EPOLLERR | EPOLLHUP)) != 0;
    Ready& out = ready[static_cast<size_t>(i)];
    out.id = event.data.u64;
    out.input = broken || (event.events & EPOLLIN) != 0;
    out.output = broken || (event.events & EPOLLOUT) != 0;
  }
  return static_cast<size_t>(count);
}

}  // namespace mqlab::env
