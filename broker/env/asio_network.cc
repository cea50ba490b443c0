#include "broker/env/asio_network.h"

#include <signal.h>
#include <sys/sendfile.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/types.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

#include "broker/common/byte_buffer_pool.h"
#include "broker/common/log.h"
#include "broker/env/epoll_socket_set.h"
#include "broker/env/posix_file_system.h"

namespace mqlab::env {
namespace {

using boost::asio::ip::tcp;
using ErrorCode = boost::system::error_code;

constexpr size_t kReadChunkBytes = 64 * 1024;   // one on_bytes at most
constexpr size_t kReadyBatch = 64;              // sockets read per wakeup, at most
// recvs of one ready socket per wakeup, at most, while each fills the buffer
// half or more (Netty's maxMessagesPerRead, which RocketMQ's transport
// uses: 16). One pipelining client then gets up to 1 MiB of requests into
// one group commit, not the 64 KiB one recv takes: with the fdatasync on
// the put thread (groupCommitOnPutThreadEnable) nothing is read while it
// runs. Its cost: more requests of many connections in memory at once.
constexpr int kMaxReadsPerReady = 16;
constexpr size_t kCopyChunkBytes = 256 * 1024;  // pread fallback for file regions
constexpr size_t kMaxGatheredChunks = 64;       // well under IOV_MAX (1024)
constexpr auto kCloseDrainTimeout = std::chrono::seconds(10);
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(100);
// A "never" timeout must not overflow the steady_clock deadline.
constexpr Nanos kMaxTimeout = seconds(365LL * 24 * 3600);

class Stream;
class Acceptor;
class ConnectAttempt;

std::string format_endpoint(const tcp::endpoint& endpoint) {
  return HostPort{endpoint.address().to_string(), endpoint.port()}.to_string();
}

// Cancels a timer's wait. Only a failing timerfd makes cancel() throw; the
// handlers check their own state, so a wait that does complete is harmless.
void cancel_quietly(boost::asio::steady_timer& timer) {
  try {
    timer.cancel();
  } catch (const boost::system::system_error&) {
  }
}

}  // namespace

// Shared by the AsioNetwork and every handler of its sockets: a handler that
// runs after the network is gone finds alive == false and does nothing.
struct AsioNetwork::State : std::enable_shared_from_this<State> {
  State(boost::asio::io_context& io_in, Executor& executor_in) : io(io_in), executor(executor_in) {}

  // Runs task on the executor unless the network is gone by then. Never
  // touches the executor once the network is gone: it may be gone too.
  void post(Task task) {
    if (!alive) return;
    executor.post([weak = weak_from_this(), task = std::move(task)] {
      const std::shared_ptr<State> self = weak.lock();
      if (self && self->alive) task();
    });
  }

  uint64_t take_id() { return next_id++; }

  // The socket set, opened by the first stream that reads or waits to write.
  Result<EpollSocketSet*> open_socket_set() {
    if (!socket_set) {
      MQ_ASSIGN_OR_RETURN(socket_set, EpollSocketSet::open(io));
    }
    return socket_set.get();
  }
  // Arms the one wait for readiness of any stream, unless it is armed or no
  // stream is watched. Defined after Stream.
  void wait_for_readiness();

  boost::asio::io_context& io;
  Executor& executor;
  bool alive = true;
  uint64_t next_id = 1;
  // Every stream reads into this one buffer (see Stream::on_readable).
  std::vector<uint8_t> read_buffer = std::vector<uint8_t>(kReadChunkBytes);
  bool read_buffer_in_use = false;
  // What the destructor must close. Entries leave when their object dies.
  // Also how a readiness id of the socket set finds its stream.
  std::map<uint64_t, std::weak_ptr<Stream>> streams;
  std::map<uint64_t, std::weak_ptr<Acceptor>> acceptors;
  std::map<uint64_t, std::weak_ptr<ConnectAttempt>> attempts;
  // Every stream that reads or waits to write is in it, under its id (see
  // epoll_socket_set.h).
  std::unique_ptr<EpollSocketSet> socket_set;
};

namespace {

using State = AsioNetwork::State;

struct AsioHandlers {
  BytesCallback on_bytes;
  CloseCallback on_close;
};

// One TCP connection: the socket, its output queue and the owner's handlers.
// Shared by the owner's AsioConnection handle, the tasks it posts and, while
// it waits for room to write, by itself (a closed stream still drains its
// output after the owner let go).
//
// The socket is a plain descriptor, out of Asio's reactor (see
// epoll_socket_set.h): the network's socket set tells when it is readable and,
// while a write waits, writable.
class Stream : public std::enable_shared_from_this<Stream> {
 public:
  Stream(std::shared_ptr<State> network, uint64_t id, int fd, std::string local, std::string remote)
      : network_(std::move(network)),
        id_(id),
        fd_(fd),
        drain_timer_(network_->io),
        local_address_(std::move(local)),
        remote_address_(std::move(remote)) {
    MQ_ASSERT(fd_ >= 0);
    MQ_ASSERT(id_ != 0);
  }
  ~Stream() {
    // Only close_socket() drops the self-reference of a write wait, so a
    // stream that dies has no wait in flight, and its socket is closed
    // unless nobody ever closed it (then not watched for output either).
    MQ_ASSERT(!writing_);
    close_descriptor();
    network_->streams.erase(id_);
  }

  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  void set_handlers(BytesCallback on_bytes, CloseCallback on_close);
  void send(std::vector<uint8_t> bytes);
  void send_file_region(std::shared_ptr<File> file, uint64_t offset, uint32_t length);
  void close();
  // The network is being destroyed: close the socket, call nobody.
  void abort();
  // The socket set reports this stream ready: for input, up to
  // kMaxReadsPerReady recvs, each followed by its on_bytes; for output, the
  // queue is written on.
  void on_ready(const EpollSocketSet::Ready& ready);
  // The socket set broke: so does the stream.
  void break_off(Status reason) { fail(std::move(reason)); }

  bool is_open() const { return open_; }
  const std::string& local_address() const { return local_address_; }
  const std::string& remote_address() const { return remote_address_; }
  uint64_t pending_output_bytes() const { return open_ ? pending_output_bytes_ : 0; }

 private:
  // A chunk of bytes, or a file region when file is set.
  struct Output {
    std::vector<uint8_t> bytes;
    size_t sent = 0;         // bytes of a chunk already handed to the kernel
    std::shared_ptr<File> file;
    uint64_t offset = 0;     // next file byte to send
    uint64_t remaining = 0;  // file bytes not yet handed to the kernel
    bool copy = false;       // sendfile cannot serve this file: pread and write
  };
  enum class Progress { kDone, kWaiting, kFailed };

  bool socket_open() const { return fd_ >= 0; }
  void start_reading();
  void stop_reading();
  // Makes the socket set watch what the stream waits for now: input while
  // it reads, output while a write waits. False (and the stream broken)
  // when the kernel refused.
  bool update_watch();
  void on_readable();
  bool read_once();
  void on_writable();
  void pump_soon();
  void pump();
  bool has_file_region() const;
  void set_cork(bool cork);
  Progress write_chunks();
  Progress sendfile_region(Output& region);
  Progress copy_region(Output& region);
  void wait_writable();
  // A non-blocking write failed with `error` (not EINTR): a full socket
  // waits for room (kWaiting), anything else breaks the stream (kFailed).
  Progress write_refused(int error);
  void advance(Output& region, uint64_t size);
  void fail(Status reason);
  void post_report();
  void report_close();
  void close_socket(bool graceful);
  // Leaves the socket set and closes the descriptor, once.
  void close_descriptor();
  Status errno_status(int error) const;
  Status past_end_status(const Output& region) const;

  const std::shared_ptr<State> network_;
  const uint64_t id_;
  int fd_;  // -1 once closed
  boost::asio::steady_timer drain_timer_;
  const std::string local_address_;
  const std::string remote_address_;
  // Shared so that a callback can replace or drop them while it runs.
  std::shared_ptr<const AsioHandlers> handlers_;
  std::optional<Status> close_reason_;  // why it broke, until reported
  std::deque<Output> output_;
  // The pread fallback's chunk: bytes [copy_sent_, size) are still to write.
  std::vector<uint8_t> copy_buffer_;
  size_t copy_sent_ = 0;
  uint64_t pending_output_bytes_ = 0;
  // Set while a write waits for room: the socket set holds only the id, and
  // a closed stream must live until its output drains.
  std::shared_ptr<Stream> self_while_writing_;
  EpollSocketSet::Interest watched_ = EpollSocketSet::kNone;  // what the socket set watches
  bool open_ = true;         // neither closed by the owner nor broken
  bool silenced_ = false;    // closed by the owner, or on_close ran
  bool closing_ = false;     // closed by the owner, output still draining
  bool reading_ = false;     // open, with handlers: input is wanted
  bool writing_ = false;     // a write waits for room in the socket
  bool pump_posted_ = false;  // a pump() task is queued on the io_context
  bool corked_ = false;      // TCP_CORK set while a response's pieces are queued
};

void Stream::set_handlers(BytesCallback on_bytes, CloseCallback on_close) {
  MQ_ASSERT(on_bytes != nullptr);
  MQ_ASSERT(on_close != nullptr);
  if (silenced_) return;
  handlers_ = std::make_shared<const AsioHandlers>(AsioHandlers{std::move(on_bytes), std::move(on_close)});
  if (close_reason_) {
    post_report();  // it broke before anyone listened
    return;
  }
  start_reading();
}

void Stream::send(std::vector<uint8_t> bytes) {
  if (!open_ || bytes.empty()) return;
  pending_output_bytes_ += bytes.size();
  Output chunk;
  chunk.bytes = std::move(bytes);
  output_.push_back(std::move(chunk));
  pump_soon();
}

void Stream::send_file_region(std::shared_ptr<File> file, uint64_t offset, uint32_t length) {
  MQ_ASSERT(file != nullptr);
  if (!open_ || length == 0) return;
  pending_output_bytes_ += length;
  Output region;
  region.file = std::move(file);
  region.offset = offset;
  region.remaining = length;
  output_.push_back(std::move(region));
  pump_soon();
}

void Stream::close() {
  if (silenced_ && !open_) return;
  silenced_ = true;
  handlers_.reset();
  if (!open_) return;  // already broken: the socket is closed
  stop_reading();  // a draining stream reads no more
  if (!socket_open()) return;  // stop_reading could not change the watch: broken
  open_ = false;
  if (output_.empty()) {
    close_socket(/*graceful=*/true);
    return;
  }
  // Output is queued, so a pump is coming: posted, or behind the write waiting.
  MQ_ASSERT(pump_posted_ || writing_);
  closing_ = true;  // pump() closes the socket once the queue drains
  drain_timer_.expires_after(kCloseDrainTimeout);
  drain_timer_.async_wait([weak = weak_from_this()](const ErrorCode& error) {
    const std::shared_ptr<Stream> self = weak.lock();
    if (!self || error) return;
    self->close_socket(/*graceful=*/false);  // the peer stopped reading: drop the rest
  });
}

void Stream::abort() {
  silenced_ = true;
  handlers_.reset();
  open_ = false;
  close_socket(/*graceful=*/false);
}

// Joins the network's socket set, which reports this socket whenever it is
// readable; on_readable then reads what is there into the network's one
// shared buffer: an idle connection holds no read buffer of its own, so
// thousands of them cost kilobytes, not 64 KiB each.
void Stream::start_reading() {
  if (reading_ || !open_ || !handlers_) return;
  reading_ = true;
  if (update_watch()) network_->wait_for_readiness();
}

void Stream::stop_reading() {
  if (!reading_) return;
  reading_ = false;
  update_watch();
}

bool Stream::update_watch() {
  MQ_ASSERT(socket_open());
  const EpollSocketSet::Interest wanted = static_cast<EpollSocketSet::Interest>(
      (reading_ ? EpollSocketSet::kInput : 0) | (writing_ ? EpollSocketSet::kOutput : 0));
  if (wanted == watched_) return true;
  Result<EpollSocketSet*> socket_set = network_->open_socket_set();
  const Status changed =
      socket_set.ok() ? (*socket_set)->watch(fd_, id_, watched_, wanted) : socket_set.status();
  if (!changed.ok()) {
    fail(changed.with_context(remote_address_));
    return false;
  }
  watched_ = wanted;
  return true;
}

void Stream::on_ready(const EpollSocketSet::Ready& ready) {
  // Output first: a broken socket (reported both ways) then fails through
  // the write, and a stale input report below finds the stream closed.
  if (ready.output && writing_) on_writable();
  if (ready.input) on_readable();
}

void Stream::on_readable() {
  // Until the socket looks drained (a recv of less than half the buffer) or
  // the stream stops reading (closed, or paused by its owner, in on_bytes).
  for (int reads = 0; reads < kMaxReadsPerReady; ++reads) {
    if (!read_once()) return;
  }
}

// One recv and its on_bytes; whether it filled half the buffer or more
// (more may wait).
bool Stream::read_once() {
  // Closed by an earlier callback of the same batch: its readiness is stale.
  if (!reading_ || !network_->alive) return false;
  MQ_ASSERT(open_);
  MQ_ASSERT(socket_open());
  MQ_ASSERT(handlers_ != nullptr);  // reads only with handlers; close() stops reading
  std::vector<uint8_t>& buffer = network_->read_buffer;
  MQ_ASSERT(buffer.size() == kReadChunkBytes);
  const ssize_t size = ::recv(fd_, buffer.data(), buffer.size(), MSG_DONTWAIT);
  if (size < 0) {
    // A spurious wakeup: the set is level-triggered, so it reports the
    // socket again once it really is readable.
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
    fail(errno_status(errno));
    return false;
  }
  if (size == 0) {
    fail(Status::Unavailable("connection closed by peer: " + remote_address_));
    return false;
  }
  MQ_ASSERT(static_cast<size_t>(size) <= buffer.size());
  // The span lives in the shared buffer only during on_bytes: nothing reads
  // into it before the callback returns (every read runs on this thread, from
  // the socket set's batch, never inside a callback).
  MQ_ASSERT_MSG(!network_->read_buffer_in_use, "a nested read into the shared buffer");
  network_->read_buffer_in_use = true;
  const std::shared_ptr<const AsioHandlers> handlers = handlers_;
  handlers->on_bytes(std::span<const uint8_t>(buffer.data(), static_cast<size_t>(size)));
  network_->read_buffer_in_use = false;
  // Not only a full buffer: Linux ends a recv early at some segment
  // boundaries with more queued (65536, 65536, 64485 of 256 KiB waiting).
  // A read of a few requests, the common case, ends the loop without an
  // extra recv that would only say EAGAIN.
  return static_cast<size_t>(size) >= buffer.size() / 2;
}

// Room to write (or an error the write will meet): write on, and stop
// watching for output unless the write had to wait again.
void Stream::on_writable() {
  MQ_ASSERT(writing_);
  MQ_ASSERT(socket_open());
  const std::shared_ptr<Stream> self = std::move(self_while_writing_);
  writing_ = false;
  if (!network_->alive) return;
  pump();
  if (socket_open() && !writing_) update_watch();
}

// Output goes out one task later, not inside send(): the replies that one
// group commit acknowledges to one connection (or a burst of sends on it)
// then leave in one gathered write, where writing at once sent the first
// alone and gathered only those queued behind it. A write waiting for room
// pumps again when the socket set reports the room.
void Stream::pump_soon() {
  if (pump_posted_ || writing_ || !socket_open()) return;
  pump_posted_ = true;
  boost::asio::post(network_->io, [self = shared_from_this()] {
    MQ_ASSERT(self->pump_posted_);
    self->pump_posted_ = false;
    if (self->network_->alive) self->pump();
  });
}

// Writes what the socket takes unless a write waits for room; closes the
// socket when a closing stream has drained.
void Stream::pump() {
  // A response of a header and many small file regions would otherwise go
  // out as one TCP segment per region (TCP_NODELAY): cork while more than one
  // piece is queued, uncork when the queue drains, which flushes the tail.
  if (!corked_ && socket_open() && output_.size() > 1 && has_file_region()) set_cork(true);
  while (!writing_ && socket_open() && !output_.empty()) {
    Output& front = output_.front();
    if (!front.file) {
      // Pops the chunks it wrote whole; a file region may follow.
      if (write_chunks() != Progress::kDone) return;
      continue;
    }
    const Progress progress = front.copy ? copy_region(front) : sendfile_region(front);
    if (progress != Progress::kDone) return;
    MQ_ASSERT(front.remaining == 0);
    output_.pop_front();
  }
  if (corked_ && socket_open() && output_.empty()) set_cork(false);
  if (closing_ && socket_open() && output_.empty()) close_socket(/*graceful=*/true);
}

bool Stream::has_file_region() const {
  return std::any_of(output_.begin(), output_.end(), [](const Output& item) { return item.file != nullptr; });
}

void Stream::set_cork(bool cork) {
  const int value = cork ? 1 : 0;
  // A failure only costs packets; the stream stays correct either way.
  ::setsockopt(fd_, IPPROTO_TCP, TCP_CORK, &value, sizeof(value));
  corked_ = cork;
}

// One gathered sendmsg(2) of the byte chunks at the head of the queue,
// straight from this turn: no write operation, buffer vector or completion
// handler per reply. kDone when every chunk written went out whole (a file
// region, or nothing, is next); kWaiting when the socket is full: what is
// left waits for room; kFailed when the stream broke.
Stream::Progress Stream::write_chunks() {
  MQ_ASSERT(!writing_);
  while (socket_open() && !output_.empty() && !output_.front().file) {
    std::array<iovec, kMaxGatheredChunks> iov;
    size_t count = 0;
    size_t size = 0;
    for (const Output& item : output_) {
      if (item.file || count == iov.size()) break;
      MQ_ASSERT(item.sent < item.bytes.size());
      // sendmsg does not write through iov_base; the const_cast is for its C signature.
      iov[count].iov_base = const_cast<uint8_t*>(item.bytes.data() + item.sent);
      iov[count].iov_len = item.bytes.size() - item.sent;
      size += iov[count].iov_len;
      ++count;
    }
    MQ_ASSERT(count > 0 && size > 0);
    msghdr message{};
    message.msg_iov = iov.data();
    message.msg_iovlen = count;
    const ssize_t written = ::sendmsg(fd_, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (written < 0) {
      const int error = errno;
      if (error == EINTR) continue;
      return write_refused(error);
    }
    MQ_ASSERT(static_cast<size_t>(written) <= size);
    MQ_ASSERT(static_cast<uint64_t>(written) <= pending_output_bytes_);
    pending_output_bytes_ -= static_cast<uint64_t>(written);
    // Pop what went out whole; a partial chunk keeps its place and offset.
    size_t left = static_cast<size_t>(written);
    while (left > 0) {
      Output& front = output_.front();
      MQ_ASSERT(!front.file);
      const size_t rest = front.bytes.size() - front.sent;
      if (left < rest) {
        front.sent += left;
        left = 0;
      } else {
        left -= rest;
        give_back_byte_buffer(std::move(front.bytes));  // written: the next frame may take its room
        output_.pop_front();
      }
    }
    // A short write means the socket buffer is full: wait rather than try
    // again at once for an EAGAIN.
    if (static_cast<size_t>(written) < size) {
      wait_writable();
      return socket_open() ? Progress::kWaiting : Progress::kFailed;
    }
  }
  return socket_open() ? Progress::kDone : Progress::kFailed;
}

// sendfile(2) from the page cache into the non-blocking socket, until the
// region is sent (kDone) or the socket is full (kWaiting).
Stream::Progress Stream::sendfile_region(Output& region) {
  auto* const posix_file = dynamic_cast<PosixFile*>(region.file.get());
  if (posix_file == nullptr) {
    region.copy = true;  // not a file the kernel can send from
    return copy_region(region);
  }
  while (region.remaining > 0) {
    off_t offset = static_cast<off_t>(region.offset);
    const ssize_t sent = ::sendfile(fd_, posix_file->fd(), &offset, region.remaining);
    if (sent > 0) {
      advance(region, static_cast<uint64_t>(sent));
      continue;
    }
    if (sent == 0) {
      fail(past_end_status(region));
      return Progress::kFailed;
    }
    const int error = errno;
    if (error == EINTR) continue;
    if (error == EAGAIN || error == EWOULDBLOCK) {
      wait_writable();
      return socket_open() ? Progress::kWaiting : Progress::kFailed;
    }
    if (error == EINVAL || error == ENOSYS || error == EOPNOTSUPP) {
      region.copy = true;  // a file system that cannot splice: copy the rest
      return copy_region(region);
    }
    if (error == EPIPE || error == ECONNRESET) {
      fail(errno_status(error));
    } else {
      fail(Status::IoError(region.file->path() + ": sendfile at " + std::to_string(region.offset) + " to " +
                           remote_address_ + ": " + std::generic_category().message(error)));
    }
    return Progress::kFailed;
  }
  return Progress::kDone;
}

// The fallback: chunks read with pread and written, until the region is
// sent (kDone) or the socket is full (kWaiting, the chunk's rest kept for the
// next pump).
Stream::Progress Stream::copy_region(Output& region) {
  MQ_ASSERT(region.copy);
  while (region.remaining > 0) {
    if (copy_sent_ == copy_buffer_.size()) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(region.remaining, kCopyChunkBytes));
      copy_buffer_.resize(want);
      copy_sent_ = 0;
      const Result<size_t> read = region.file->pread(region.offset, copy_buffer_);
      if (!read.ok()) {
        fail(read.status().with_context("sending a file region to " + remote_address_));
        return Progress::kFailed;
      }
      if (*read < want) {
        fail(past_end_status(region));
        return Progress::kFailed;
      }
    }
    // The buffered rest is exactly the region's next bytes: advance() moves
    // the region's offset by what is written, never by what is read.
    MQ_ASSERT(copy_buffer_.size() - copy_sent_ <= region.remaining);
    const ssize_t written =
        ::send(fd_, copy_buffer_.data() + copy_sent_, copy_buffer_.size() - copy_sent_, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (written < 0) {
      const int error = errno;
      if (error == EINTR) continue;
      return write_refused(error);
    }
    copy_sent_ += static_cast<size_t>(written);
    advance(region, static_cast<uint64_t>(written));
  }
  copy_buffer_.clear();
  copy_sent_ = 0;
  return Progress::kDone;
}

// The socket is full: the socket set reports when it has room (or broke).
Stream::Progress Stream::write_refused(int error) {
  MQ_ASSERT(error != EINTR);  // the caller retries those
  if (error == EAGAIN || error == EWOULDBLOCK) {
    wait_writable();
    return socket_open() ? Progress::kWaiting : Progress::kFailed;
  }
  fail(errno_status(error));
  return Progress::kFailed;
}

void Stream::wait_writable() {
  MQ_ASSERT(!writing_);
  MQ_ASSERT(socket_open());
  writing_ = true;
  if (!update_watch()) return;  // broken: close_socket() ended the wait
  self_while_writing_ = shared_from_this();
  network_->wait_for_readiness();
}

void Stream::advance(Output& region, uint64_t size) {
  MQ_ASSERT(size <= region.remaining);
  MQ_ASSERT(size <= pending_output_bytes_);
  region.offset += size;
  region.remaining -= size;
  pending_output_bytes_ -= size;
}

// The stream broke. The owner hears why through on_close, posted, unless it
// already said goodbye.
void Stream::fail(Status reason) {
  MQ_ASSERT(!reason.ok());
  if (!socket_open()) return;  // a second symptom of the same break
  open_ = false;
  close_socket(/*graceful=*/false);
  if (silenced_) return;
  close_reason_ = std::move(reason);
  if (handlers_) post_report();  // otherwise set_handlers() will
}

void Stream::post_report() {
  network_->post([self = shared_from_this()] { self->report_close(); });
}

void Stream::report_close() {
  if (silenced_ || !handlers_) return;  // closed meanwhile, or reported already
  MQ_ASSERT(close_reason_.has_value());
  MQ_ASSERT(!open_);
  silenced_ = true;
  const std::shared_ptr<const AsioHandlers> handlers = std::move(handlers_);
  handlers->on_close(*close_reason_);
}

// Ends every wait, so the output queue can go at once.
void Stream::close_socket(bool graceful) {
  if (!socket_open()) return;
  // Dropped last: it may be what keeps this stream alive.
  const std::shared_ptr<Stream> keep = std::move(self_while_writing_);
  reading_ = false;
  writing_ = false;
  if (graceful) {
    ::shutdown(fd_, SHUT_WR);  // FIN behind the data
  } else {
    // Linger 0 makes close() send a reset: the peer must not mistake a stream
    // cut short (a failed file region, a stuck drain) for a clean end.
    const linger abort{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &abort, sizeof(abort));
  }
  close_descriptor();
  cancel_quietly(drain_timer_);
  output_.clear();
  copy_buffer_.clear();
  copy_sent_ = 0;
  pending_output_bytes_ = 0;
  network_->streams.erase(id_);
}

void Stream::close_descriptor() {
  if (!socket_open()) return;
  if (watched_ != EpollSocketSet::kNone) {
    MQ_ASSERT(network_->socket_set != nullptr);
    // Removing never fails (epoll_socket_set.h): the status is always Ok.
    const Status removed = network_->socket_set->watch(fd_, id_, watched_, EpollSocketSet::kNone);
    MQ_ASSERT(removed.ok());
    watched_ = EpollSocketSet::kNone;
  }
  ::close(fd_);
  fd_ = -1;
}

Status Stream::errno_status(int error) const {
  MQ_ASSERT(error != 0);
  if (error == ECONNRESET || error == EPIPE || error == ECONNABORTED) {
    return Status::IoError("connection reset by peer: " + remote_address_);
  }
  if (error == ETIMEDOUT) return Status::Timeout("connection timed out: " + remote_address_);
  return Status::IoError(remote_address_ + ": " + std::generic_category().message(error));
}

Status Stream::past_end_status(const Output& region) const {
  // A short region would leave the peer parsing frames out of step; a broken
  // stream is the honest outcome.
  return Status::IoError(region.file->path() + ": file region at " + std::to_string(region.offset) + " (" +
                         std::to_string(region.remaining) + " bytes left) ends past the end of the file");
}

// One wakeup of the socket set: for each ready stream, its waiting write
// goes on and/or its input is read (on_readable), then the wait is armed again. A
// callback may close any stream or destroy the network; each id is looked
// up afresh, and the shared State outlives the batch.
void serve_ready_streams(const std::shared_ptr<State>& network, const ErrorCode& error) {
  if (!network->alive) return;
  if (error) {
    MQ_ASSERT(error != boost::asio::error::operation_aborted);  // only closing the set aborts, and State owns it
    // The epoll descriptor itself failed: no stream can hear its peer any
    // more. Break them all, so their owners reconnect, rather than spin.
    MQ_LOG(kWarn, "network", "waiting for readiness of the connections: " << error.message());
    std::vector<std::shared_ptr<Stream>> streams;
    for (const auto& [id, weak] : network->streams) {
      if (std::shared_ptr<Stream> stream = weak.lock()) streams.push_back(std::move(stream));
    }
    for (const auto& stream : streams) stream->break_off(Status::IoError("waiting for readiness: " + error.message()));
    return;
  }
  MQ_ASSERT(network->socket_set != nullptr);
  std::array<EpollSocketSet::Ready, kReadyBatch> ready;
  const size_t count = network->socket_set->take_ready(ready);
  for (size_t i = 0; i < count && network->alive; ++i) {
    const auto found = network->streams.find(ready[i].id);
    if (found == network->streams.end()) continue;  // closed earlier in this batch
    if (const std::shared_ptr<Stream> stream = found->second.lock()) stream->on_ready(ready[i]);
  }
  network->wait_for_readiness();
}

}  // namespace

void AsioNetwork::State::wait_for_readiness() {
  if (!alive || !socket_set || socket_set->waiting() || socket_set->size() == 0) return;
  socket_set->async_wait([weak = weak_from_this()](const ErrorCode& error) {
    if (const std::shared_ptr<State> self = weak.lock()) serve_ready_streams(self, error);
  });
}

namespace {

// The owner's handle. Dropping it closes the stream, as close() does.
class AsioConnection final : public Connection {
 public:
  explicit AsioConnection(std::shared_ptr<Stream> stream) : stream_(std::move(stream)) {
    MQ_ASSERT(stream_ != nullptr);
  }
  ~AsioConnection() override { stream_->close(); }

  void set_handlers(BytesCallback on_bytes, CloseCallback on_close) override {
    stream_->set_handlers(std::move(on_bytes), std::move(on_close));
  }
  void send(std::vector<uint8_t> bytes) override { stream_->send(std::move(bytes)); }
  void send_file_region(std::shared_ptr<File> file, uint64_t offset, uint32_t length) override {
    stream_->send_file_region(std::move(file), offset, length);
  }
  void close() override { stream_->close(); }
  bool is_open() const override { return stream_->is_open(); }
  const std::string& local_address() const override { return stream_->local_address(); }
  const std::string& remote_address() const override { return stream_->remote_address(); }
  uint64_t pending_output_bytes() const override { return stream_->pending_output_bytes(); }

 private:
  const std::shared_ptr<Stream> stream_;
};

// Wraps a connected socket: TCP_NODELAY, non-blocking (sendfile must never
// block the core's thread), addresses, registration for the destructor; and
// takes it out of Asio's reactor (epoll_socket_set.h says why), keeping the
// bare descriptor.
Result<std::shared_ptr<Connection>> make_connection(const std::shared_ptr<State>& network, tcp::socket socket) {
  ErrorCode error;
  const tcp::endpoint local = socket.local_endpoint(error);
  if (!error) {
    const tcp::endpoint remote = socket.remote_endpoint(error);
    if (!error) socket.set_option(tcp::no_delay(true), error);
    if (!error) socket.native_non_blocking(true, error);
    // Non-blocking stays set on the descriptor: Asio sets it with ioctl(FIONBIO).
    int fd = -1;
    if (!error) fd = socket.release(error);
    if (!error) {
      MQ_ASSERT(fd >= 0);
      const uint64_t id = network->take_id();
      auto stream = std::make_shared<Stream>(network, id, fd, format_endpoint(local), format_endpoint(remote));
      network->streams.emplace(id, stream);
      return std::shared_ptr<Connection>(std::make_shared<AsioConnection>(std::move(stream)));
    }
  }
  // A peer that reset the connection before we looked at it, most likely.
  return Status::IoError("setting up a connected socket: " + error.message());
}

// A listening socket, accepting until closed.
class Acceptor : public std::enable_shared_from_this<Acceptor> {
 public:
  Acceptor(std::shared_ptr<State> network, uint64_t id, tcp::acceptor acceptor, std::string address,
           AcceptCallback on_accept)
      : network_(std::move(network)),
        id_(id),
        acceptor_(std::move(acceptor)),
        retry_timer_(network_->io),
        address_(std::move(address)),
        on_accept_(std::move(on_accept)) {
    MQ_ASSERT(acceptor_.is_open());
    MQ_ASSERT(on_accept_ != nullptr);
  }
  ~Acceptor() { network_->acceptors.erase(id_); }

  const std::string& address() const { return address_; }

  void accept_next() {
    MQ_ASSERT(open_);
    acceptor_.async_accept([self = shared_from_this()](const ErrorCode& error, tcp::socket socket) {
      self->on_accepted(error, std::move(socket));
    });
  }

  void close() {
    if (!open_) return;
    open_ = false;
    on_accept_ = nullptr;
    ErrorCode ignored;
    acceptor_.close(ignored);  // the pending accept completes as operation_aborted
    cancel_quietly(retry_timer_);
    network_->acceptors.erase(id_);
  }

 private:
  void on_accepted(const ErrorCode& error, tcp::socket socket) {
    if (!open_ || !network_->alive) return;
    if (error) {
      // EMFILE and the like persist: retry later rather than spin on them.
      MQ_LOG(kWarn, "network", "accept on " << address_ << ": " << error.message());
      retry_timer_.expires_after(kAcceptRetryDelay);
      retry_timer_.async_wait([self = shared_from_this()](const ErrorCode& wait_error) {
        if (!wait_error && self->open_ && self->network_->alive) self->accept_next();
      });
      return;
    }
    Result<std::shared_ptr<Connection>> connection = make_connection(network_, std::move(socket));
    if (connection.ok()) {
      const AcceptCallback on_accept = on_accept_;  // the callback may close the listener
      on_accept(std::move(connection).value());
    } else {
      MQ_LOG(kInfo, "network", "accept on " << address_ << ": " << connection.status().to_string());
    }
    if (open_) accept_next();
  }

  const std::shared_ptr<State> network_;
  const uint64_t id_;
  tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_timer_;
  const std::string address_;
  AcceptCallback on_accept_;
  bool open_ = true;
};

class AsioListener final : public Listener {
 public:
  explicit AsioListener(std::shared_ptr<Acceptor> acceptor) : acceptor_(std::move(acceptor)) {
    MQ_ASSERT(acceptor_ != nullptr);
  }
  ~AsioListener() override { acceptor_->close(); }

  const std::string& local_address() const override { return acceptor_->address(); }
  void close() override { acceptor_->close(); }

 private:
  const std::shared_ptr<Acceptor> acceptor_;
};

// An open, bound, listening acceptor for endpoint.
Result<tcp::acceptor> open_acceptor(boost::asio::io_context& io, const tcp::endpoint& endpoint) {
  const std::string address = format_endpoint(endpoint);
  tcp::acceptor acceptor(io);
  ErrorCode error;
  acceptor.open(endpoint.protocol(), error);
  if (error) return Status::IoError("listen on " + address + ": socket: " + error.message());
  // A restarted broker must bind at once, despite its predecessor's
  // connections lingering in TIME_WAIT.
  acceptor.set_option(tcp::acceptor::reuse_address(true), error);
  if (error) return Status::IoError("listen on " + address + ": SO_REUSEADDR: " + error.message());
  acceptor.bind(endpoint, error);
  if (error == boost::asio::error::address_in_use) return Status::AlreadyExists("address already in use: " + address);
  if (error) return Status::IoError("listen on " + address + ": bind: " + error.message());
  acceptor.listen(tcp::socket::max_listen_connections, error);
  if (error) return Status::IoError("listen on " + address + ": listen: " + error.message());
  return acceptor;
}

// One connect(): resolve (when the host is a name), connect, or time out,
// whichever first; done runs once.
class ConnectAttempt : public std::enable_shared_from_this<ConnectAttempt> {
 public:
  ConnectAttempt(std::shared_ptr<State> network, uint64_t id, HostPort target, Nanos timeout, ConnectCallback done)
      : network_(std::move(network)),
        id_(id),
        target_(std::move(target)),
        address_(target_.to_string()),
        timeout_(timeout),
        socket_(network_->io),
        resolver_(network_->io),
        timer_(network_->io),
        done_(std::move(done)) {
    MQ_ASSERT(timeout_ > 0);
    MQ_ASSERT(done_ != nullptr);
  }
  ~ConnectAttempt() { network_->attempts.erase(id_); }

  void start() {
    timer_.expires_after(std::chrono::nanoseconds(std::min(timeout_, kMaxTimeout)));
    timer_.async_wait([self = shared_from_this()](const ErrorCode& error) {
      if (!error) self->on_timeout();
    });
    ErrorCode error;
    const boost::asio::ip::address ip = boost::asio::ip::make_address(target_.host, error);
    if (!error) {
      socket_.async_connect(
          tcp::endpoint(ip, target_.port),
          [self = shared_from_this()](const ErrorCode& connect_error) { self->on_connected(connect_error); });
      return;
    }
    resolver_.async_resolve(
        target_.host, std::to_string(target_.port), tcp::resolver::numeric_service,
        [self = shared_from_this()](const ErrorCode& resolve_error, const tcp::resolver::results_type& results) {
          self->on_resolved(resolve_error, results);
        });
  }

  // The network is being destroyed: stop, call nobody.
  void abort() {
    finished_ = true;
    stop();
  }

 private:
  void on_resolved(const ErrorCode& error, const tcp::resolver::results_type& results) {
    if (finished_) return;
    if (error) {
      finish(Status::Unavailable("cannot resolve the host of " + address_ + ": " + error.message()));
      return;
    }
    boost::asio::async_connect(socket_, results,
                               [self = shared_from_this()](const ErrorCode& connect_error, const tcp::endpoint&) {
                                 self->on_connected(connect_error);
                               });
  }

  void on_connected(const ErrorCode& error) {
    if (finished_) return;
    if (error == boost::asio::error::connection_refused) {
      finish(Status::Unavailable("connection refused: " + address_));
    } else if (error == boost::asio::error::timed_out) {
      finish(Status::Timeout("connect timed out: " + address_));
    } else if (error) {
      finish(Status::Unavailable("connect to " + address_ + ": " + error.message()));
    } else {
      finish(make_connection(network_, std::move(socket_)));
    }
  }

  void on_timeout() {
    if (finished_) return;
    finish(
        Status::Timeout("connect timed out after " + std::to_string(timeout_ / kNanosPerMilli) + " ms: " + address_));
  }

  void finish(Result<std::shared_ptr<Connection>> result) {
    MQ_ASSERT(!finished_);
    finished_ = true;
    stop();
    if (!network_->alive) return;
    const ConnectCallback done = std::move(done_);
    done(std::move(result));
  }

  // Cancels whatever is still in flight; its handlers then see finished_.
  void stop() {
    cancel_quietly(timer_);
    resolver_.cancel();
    ErrorCode ignored;
    if (socket_.is_open()) socket_.close(ignored);  // moved-from once connected
    network_->attempts.erase(id_);
  }

  const std::shared_ptr<State> network_;
  const uint64_t id_;
  const HostPort target_;
  const std::string address_;
  const Nanos timeout_;
  tcp::socket socket_;
  tcp::resolver resolver_;
  boost::asio::steady_timer timer_;
  ConnectCallback done_;
  bool finished_ = false;
};

}  // namespace

AsioNetwork::AsioNetwork(boost::asio::io_context& io, Executor& executor)
    : state_(std::make_shared<State>(io, executor)) {
  // sendfile(2) to a reset socket raises SIGPIPE; ignored, it is EPIPE.
  ::signal(SIGPIPE, SIG_IGN);
}

AsioNetwork::~AsioNetwork() {
  state_->alive = false;
  // Strong references first: closing edits the maps, and the last reference
  // to an object may drop while we walk.
  std::vector<std::shared_ptr<Stream>> streams;
  for (const auto& [id, weak] : state_->streams) {
    if (std::shared_ptr<Stream> stream = weak.lock()) streams.push_back(std::move(stream));
  }
  std::vector<std::shared_ptr<Acceptor>> acceptors;
  for (const auto& [id, weak] : state_->acceptors) {
    if (std::shared_ptr<Acceptor> acceptor = weak.lock()) acceptors.push_back(std::move(acceptor));
  }
  std::vector<std::shared_ptr<ConnectAttempt>> attempts;
  for (const auto& [id, weak] : state_->attempts) {
    if (std::shared_ptr<ConnectAttempt> attempt = weak.lock()) attempts.push_back(std::move(attempt));
  }
  for (const auto& stream : streams) stream->abort();
  for (const auto& acceptor : acceptors) acceptor->close();
  for (const auto& attempt : attempts) attempt->abort();
}

Result<std::shared_ptr<Listener>> AsioNetwork::listen(const std::string& address, AcceptCallback on_accept) {
  MQ_ASSERT(on_accept != nullptr);
  MQ_ASSERT(state_->alive);
  MQ_ASSIGN_OR_RETURN(const HostPort where, parse_address(address));
  ErrorCode error;
  const boost::asio::ip::address ip = boost::asio::ip::make_address(where.host, error);
  if (error) {
    return Status::InvalidArgument("listen on '" + address + "': the host must be a numeric IP address");
  }
  MQ_ASSIGN_OR_RETURN(tcp::acceptor acceptor, open_acceptor(state_->io, tcp::endpoint(ip, where.port)));
  const tcp::endpoint bound = acceptor.local_endpoint(error);  // the port picked for port 0
  if (error) return Status::IoError("listen on " + address + ": getsockname: " + error.message());
  const uint64_t id = state_->take_id();
  auto state =
      std::make_shared<Acceptor>(state_, id, std::move(acceptor), format_endpoint(bound), std::move(on_accept));
  state_->acceptors.emplace(id, state);
  state->accept_next();
  return std::shared_ptr<Listener>(std::make_shared<AsioListener>(std::move(state)));
}

void AsioNetwork::connect(const std::string& address, Nanos timeout, ConnectCallback done) {
  MQ_ASSERT(timeout > 0);
  MQ_ASSERT(done != nullptr);
  MQ_ASSERT(state_->alive);
  Result<HostPort> target = parse_address(address);
  if (!target.ok()) {
    state_->post([done = std::move(done), status = target.status()] { done(status); });
    return;
  }
  const uint64_t id = state_->take_id();
  auto attempt = std::make_shared<ConnectAttempt>(state_, id, std::move(target).value(), timeout, std::move(done));
  state_->attempts.emplace(id, attempt);
  attempt->start();
}

size_t AsioNetwork::open_connections() const {
  size_t open = 0;
  for (const auto& [id, weak] : state_->streams) {
    const std::shared_ptr<Stream> stream = weak.lock();
    if (stream && stream->is_open()) ++open;
  }
  return open;
}

}  // namespace mqlab::env
