#include "broker/env/epoll_read_set.h"

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

}  // namespace

Result<std::unique_ptr<EpollReadSet>> EpollReadSet::open(boost::asio::io_context& io) {
  const int epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0) return Status::IoError("epoll_create1 for the connections' read set: " + errno_text(errno));
  // The constructor hands the descriptor to Asio, which closes it from now on.
  std::unique_ptr<EpollReadSet> set(new EpollReadSet(io, epoll_fd));
  if (!set->descriptor_.is_open()) {
    return Status::IoError("registering the connections' read set with the io_context");
  }
  return set;
}

EpollReadSet::EpollReadSet(boost::asio::io_context& io, int epoll_fd) : descriptor_(io) {
  MQ_ASSERT(epoll_fd >= 0);
  boost::system::error_code error;
  descriptor_.assign(epoll_fd, error);
  if (error) ::close(epoll_fd);  // open() reports it: the descriptor stays closed
}

EpollReadSet::~EpollReadSet() {
  boost::system::error_code ignored;
  descriptor_.close(ignored);  // the wait in flight completes as operation_aborted
}

Status EpollReadSet::add(int fd, uint64_t id) {
  MQ_ASSERT(fd >= 0);
  MQ_ASSERT(descriptor_.is_open());
  // Level-triggered: a socket left with unread bytes (one recv takes at most
  // the shared buffer) is reported again, with no re-arming call.
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = id;
  if (::epoll_ctl(descriptor_.native_handle(), EPOLL_CTL_ADD, fd, &event) != 0) {
    const int error = errno;
    MQ_ASSERT_MSG(error != EEXIST, "socket " + std::to_string(fd) + " added to the read set twice");
    return Status::IoError("watching a connection for input (epoll_ctl ADD): " + errno_text(error));
  }
  ++size_;
  return Status::Ok();
}

void EpollReadSet::remove(int fd) {
  MQ_ASSERT(fd >= 0);
  MQ_ASSERT(size_ > 0);
  // EPOLL_CTL_DEL allocates nothing: it fails only for a descriptor that is
  // not in the set or not open, which is our bug.
  const int result = ::epoll_ctl(descriptor_.native_handle(), EPOLL_CTL_DEL, fd, nullptr);
  MQ_ASSERT_MSG(result == 0, "removing socket " + std::to_string(fd) + " from the read set: " + errno_text(errno));
  --size_;
}

void EpollReadSet::async_wait(WaitCallback done) {
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

size_t EpollReadSet::take_ready(std::span<uint64_t> ids) {
  MQ_ASSERT(!ids.empty());
  std::array<epoll_event, kMaxReadyPerTake> events;
  const int limit = static_cast<int>(std::min(ids.size(), events.size()));
  const int count = ::epoll_wait(descriptor_.native_handle(), events.data(), limit, /*timeout_ms=*/0);
  if (count < 0) {
    // EINTR: nothing taken, the sockets stay ready. Anything else is a broken
    // epoll descriptor, our bug.
    MQ_ASSERT_MSG(errno == EINTR, "epoll_wait on the read set: " + errno_text(errno));
    return 0;
  }
  MQ_ASSERT(count <= limit);
  for (int i = 0; i < count; ++i) ids[static_cast<size_t>(i)] = events[static_cast<size_t>(i)].data.u64;
  return static_cast<size_t>(count);
}

}  // namespace mqlab::env
