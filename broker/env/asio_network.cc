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

#include "broker/common/log.h"
#include "broker/env/epoll_read_set.h"
#include "broker/env/posix_file_system.h"

namespace mqlab::env {
namespace {

using boost::asio::ip::tcp;
using ErrorCode = boost::system::error_code;

constexpr size_t kReadChunkBytes = 64 * 1024;   // one on_bytes at most
constexpr size_t kReadyBatch = 64;              // sockets read per wakeup, at most
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

  // The read set, opened by the first stream that reads.
  Result<EpollReadSet*> open_read_set() {
    if (!read_set) {
      MQ_ASSIGN_OR_RETURN(read_set, EpollReadSet::open(io));
    }
    return read_set.get();
  }
  // Arms the one wait for input on any stream, unless it is armed or no
  // stream reads. Defined after Stream.
  void wait_for_input();

  boost::asio::io_context& io;
  Executor& executor;
  bool alive = true;
  uint64_t next_id = 1;
  // Every stream reads into this one buffer (see Stream::on_readable).
  std::vector<uint8_t> read_buffer = std::vector<uint8_t>(kReadChunkBytes);
  bool read_buffer_in_use = false;
  // What the destructor must close. Entries leave when their object dies.
  // Also how a readiness id of the read set finds its stream.
  std::map<uint64_t, std::weak_ptr<Stream>> streams;
  std::map<uint64_t, std::weak_ptr<Acceptor>> acceptors;
  std::map<uint64_t, std::weak_ptr<ConnectAttempt>> attempts;
  // Every stream that reads is in it, under its id (see epoll_read_set.h).
  std::unique_ptr<EpollReadSet> read_set;
};

namespace {

using State = AsioNetwork::State;

struct Handlers {
  BytesCallback on_bytes;
  CloseCallback on_close;
};

// One TCP connection: the socket, its output queue and the owner's handlers.
// Shared by the owner's AsioConnection handle and the handlers Asio holds, so
// a close() can still drain output after the owner let go.
class Stream : public std::enable_shared_from_this<Stream> {
 public:
  Stream(std::shared_ptr<State> network, uint64_t id, tcp::socket socket, std::string local, std::string remote)
      : network_(std::move(network)),
        id_(id),
        socket_(std::move(socket)),
        drain_timer_(network_->io),
        local_address_(std::move(local)),
        remote_address_(std::move(remote)) {
    MQ_ASSERT(socket_.is_open());
    MQ_ASSERT(id_ != 0);
  }
  ~Stream() {
    stop_reading();  // before the socket member closes its descriptor
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
  // The read set reports this stream readable: one recv, one on_bytes.
  void on_readable();
  // The read set broke: so does the stream.
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

  void start_reading();
  void stop_reading();
  void pump_soon();
  void pump();
  bool has_file_region() const;
  void set_cork(bool cork);
  Progress write_chunks();
  Progress sendfile_region(Output& region);
  Progress copy_region(Output& region);
  void on_region_copied(const ErrorCode& error, size_t size);
  void wait_writable();
  void advance(Output& region, uint64_t size);
  void fail(Status reason);
  void post_report();
  void report_close();
  void close_socket(bool graceful);
  Status socket_status(const ErrorCode& error) const;
  Status past_end_status(const Output& region) const;

  const std::shared_ptr<State> network_;
  const uint64_t id_;
  tcp::socket socket_;
  boost::asio::steady_timer drain_timer_;
  const std::string local_address_;
  const std::string remote_address_;
  // Shared so that a callback can replace or drop them while it runs.
  std::shared_ptr<const Handlers> handlers_;
  std::optional<Status> close_reason_;  // why it broke, until reported
  std::deque<Output> output_;
  std::vector<uint8_t> copy_buffer_;
  uint64_t pending_output_bytes_ = 0;
  bool open_ = true;         // neither closed by the owner nor broken
  bool silenced_ = false;    // closed by the owner, or on_close ran
  bool socket_open_ = true;  // false once the socket is closed
  bool closing_ = false;     // closed by the owner, output still draining
  bool in_read_set_ = false;  // in the network's read set: open, with handlers
  bool writing_ = false;     // an async write or writability wait is in flight
  bool pump_posted_ = false;  // a pump() task is queued on the io_context
  bool corked_ = false;      // TCP_CORK set while a response's pieces are queued
};

void Stream::set_handlers(BytesCallback on_bytes, CloseCallback on_close) {
  MQ_ASSERT(on_bytes != nullptr);
  MQ_ASSERT(on_close != nullptr);
  if (silenced_) return;
  handlers_ = std::make_shared<const Handlers>(Handlers{std::move(on_bytes), std::move(on_close)});
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
  open_ = false;
  if (output_.empty()) {
    close_socket(/*graceful=*/true);
    return;
  }
  // Output is queued, so a pump is coming: posted, or behind the write in flight.
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

// Joins the network's read set, which reports this socket whenever it is
// readable; on_readable then reads what is there into the network's one
// shared buffer: an idle connection holds no read buffer of its own, so
// thousands of them cost kilobytes, not 64 KiB each.
void Stream::start_reading() {
  if (in_read_set_ || !open_ || !handlers_) return;
  Result<EpollReadSet*> read_set = network_->open_read_set();
  const Status added = read_set.ok() ? (*read_set)->add(socket_.native_handle(), id_) : read_set.status();
  if (!added.ok()) {
    fail(added.with_context(remote_address_));
    return;
  }
  in_read_set_ = true;
  network_->wait_for_input();
}

// Leaves the read set while the socket is still open (see EpollReadSet::remove).
void Stream::stop_reading() {
  if (!in_read_set_) return;
  MQ_ASSERT(socket_open_);
  MQ_ASSERT(network_->read_set != nullptr);
  network_->read_set->remove(socket_.native_handle());
  in_read_set_ = false;
}

void Stream::on_readable() {
  // Closed by an earlier callback of the same batch: its readiness is stale.
  if (!in_read_set_ || !network_->alive) return;
  MQ_ASSERT(open_);
  MQ_ASSERT(socket_open_);
  MQ_ASSERT(handlers_ != nullptr);  // in the read set only with handlers; close() leaves it
  std::vector<uint8_t>& buffer = network_->read_buffer;
  MQ_ASSERT(buffer.size() == kReadChunkBytes);
  const ssize_t size = ::recv(socket_.native_handle(), buffer.data(), buffer.size(), MSG_DONTWAIT);
  if (size < 0) {
    // A spurious wakeup: the read set is level-triggered, so it reports the
    // socket again once it really is readable.
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
    fail(socket_status(ErrorCode(errno, boost::system::system_category())));
    return;
  }
  if (size == 0) {
    fail(socket_status(boost::asio::error::eof));
    return;
  }
  MQ_ASSERT(static_cast<size_t>(size) <= buffer.size());
  // The span lives in the shared buffer only during on_bytes: nothing reads
  // into it before the callback returns (every read runs on this thread, from
  // the read set's batch, never inside a callback).
  MQ_ASSERT_MSG(!network_->read_buffer_in_use, "a nested read into the shared buffer");
  network_->read_buffer_in_use = true;
  const std::shared_ptr<const Handlers> handlers = handlers_;
  handlers->on_bytes(std::span<const uint8_t>(buffer.data(), static_cast<size_t>(size)));
  network_->read_buffer_in_use = false;
}

// Output goes out one task later, not inside send(): the replies that one
// group commit acknowledges to one connection (or a burst of sends on it)
// then leave in one gathered write, where writing at once sent the first
// alone and gathered only those queued behind it. A write in flight pumps
// again when it completes.
void Stream::pump_soon() {
  if (pump_posted_ || writing_ || !socket_open_) return;
  pump_posted_ = true;
  boost::asio::post(network_->io, [self = shared_from_this()] {
    MQ_ASSERT(self->pump_posted_);
    self->pump_posted_ = false;
    if (self->network_->alive) self->pump();
  });
}

// Starts the next write unless one is in flight; closes the socket when a
// closing stream has drained.
void Stream::pump() {
  // A response of a header and many small file regions would otherwise go
  // out as one TCP segment per region (TCP_NODELAY): cork while more than one
  // piece is queued, uncork when the queue drains, which flushes the tail.
  if (!corked_ && socket_open_ && output_.size() > 1 && has_file_region()) set_cork(true);
  while (!writing_ && socket_open_ && !output_.empty()) {
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
  if (corked_ && socket_open_ && output_.empty()) set_cork(false);
  if (closing_ && socket_open_ && output_.empty()) close_socket(/*graceful=*/true);
}

bool Stream::has_file_region() const {
  return std::any_of(output_.begin(), output_.end(), [](const Output& item) { return item.file != nullptr; });
}

void Stream::set_cork(bool cork) {
  const int value = cork ? 1 : 0;
  // A failure only costs packets; the stream stays correct either way.
  ::setsockopt(socket_.native_handle(), IPPROTO_TCP, TCP_CORK, &value, sizeof(value));
  corked_ = cork;
}

// One gathered sendmsg(2) of the byte chunks at the head of the queue,
// straight from this turn: no write operation, buffer vector or completion
// handler per reply (Asio's async_write allocated all three and ran the
// completion one scheduler turn later, for the same single sendmsg). kDone
// when every chunk written went out whole (a file region, or nothing, is
// next); kWaiting when the socket is full: what is left waits for
// writability; kFailed when the stream broke.
Stream::Progress Stream::write_chunks() {
  MQ_ASSERT(!writing_);
  while (socket_open_ && !output_.empty() && !output_.front().file) {
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
    const ssize_t written = ::sendmsg(socket_.native_handle(), &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (written < 0) {
      const int error = errno;
      if (error == EINTR) continue;
      if (error == EAGAIN || error == EWOULDBLOCK) {
        wait_writable();
        return Progress::kWaiting;
      }
      fail(socket_status(ErrorCode(error, boost::system::system_category())));
      return Progress::kFailed;
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
        output_.pop_front();
      }
    }
    // A short write means the socket buffer is full: wait rather than try
    // again at once for an EAGAIN.
    if (static_cast<size_t>(written) < size) {
      wait_writable();
      return Progress::kWaiting;
    }
  }
  return socket_open_ ? Progress::kDone : Progress::kFailed;
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
    const ssize_t sent = ::sendfile(socket_.native_handle(), posix_file->fd(), &offset, region.remaining);
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
      return Progress::kWaiting;
    }
    if (error == EINVAL || error == ENOSYS || error == EOPNOTSUPP) {
      region.copy = true;  // a file system that cannot splice: copy the rest
      return copy_region(region);
    }
    if (error == EPIPE || error == ECONNRESET) {
      fail(socket_status(ErrorCode(error, boost::system::system_category())));
    } else {
      fail(Status::IoError(region.file->path() + ": sendfile at " + std::to_string(region.offset) + " to " +
                           remote_address_ + ": " + std::generic_category().message(error)));
    }
    return Progress::kFailed;
  }
  return Progress::kDone;
}

// The fallback: one chunk read with pread and written; the completion takes
// the next.
Stream::Progress Stream::copy_region(Output& region) {
  MQ_ASSERT(region.copy);
  MQ_ASSERT(region.remaining > 0);
  const size_t want = static_cast<size_t>(std::min<uint64_t>(region.remaining, kCopyChunkBytes));
  copy_buffer_.resize(want);
  const Result<size_t> read = region.file->pread(region.offset, copy_buffer_);
  if (!read.ok()) {
    fail(read.status().with_context("sending a file region to " + remote_address_));
    return Progress::kFailed;
  }
  if (*read < want) {
    fail(past_end_status(region));
    return Progress::kFailed;
  }
  writing_ = true;
  boost::asio::async_write(
      socket_, boost::asio::buffer(copy_buffer_.data(), want),
      [self = shared_from_this()](const ErrorCode& error, size_t written) { self->on_region_copied(error, written); });
  return Progress::kWaiting;
}

void Stream::on_region_copied(const ErrorCode& error, size_t size) {
  MQ_ASSERT(writing_);
  writing_ = false;
  if (!network_->alive || !socket_open_) return;
  if (error) {
    fail(socket_status(error));
    return;
  }
  Output& region = output_.front();
  MQ_ASSERT(region.file != nullptr && region.copy);
  advance(region, size);
  if (region.remaining == 0) output_.pop_front();
  pump();
}

void Stream::wait_writable() {
  MQ_ASSERT(!writing_);
  writing_ = true;
  socket_.async_wait(tcp::socket::wait_write, [self = shared_from_this()](const ErrorCode& error) {
    MQ_ASSERT(self->writing_);
    self->writing_ = false;
    if (!self->network_->alive || !self->socket_open_) return;
    if (error) {
      self->fail(self->socket_status(error));
      return;
    }
    self->pump();
  });
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
  if (!socket_open_) return;  // a second symptom of the same break
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
  const std::shared_ptr<const Handlers> handlers = std::move(handlers_);
  handlers->on_close(*close_reason_);
}

// Closing the socket cancels the operations in flight before they touch their
// buffers again, so the output queue can go at once.
void Stream::close_socket(bool graceful) {
  if (!socket_open_) return;
  stop_reading();
  socket_open_ = false;
  ErrorCode ignored;
  if (graceful) {
    socket_.shutdown(tcp::socket::shutdown_send, ignored);  // FIN behind the data
  } else {
    // Linger 0 makes close() send a reset: the peer must not mistake a stream
    // cut short (a failed file region, a stuck drain) for a clean end.
    socket_.set_option(boost::asio::socket_base::linger(true, 0), ignored);
  }
  socket_.close(ignored);
  cancel_quietly(drain_timer_);
  output_.clear();
  pending_output_bytes_ = 0;
  network_->streams.erase(id_);
}

Status Stream::socket_status(const ErrorCode& error) const {
  MQ_ASSERT(error);
  namespace errors = boost::asio::error;
  if (error == errors::eof) return Status::Unavailable("connection closed by peer: " + remote_address_);
  if (error == errors::connection_reset || error == errors::broken_pipe || error == errors::connection_aborted) {
    return Status::IoError("connection reset by peer: " + remote_address_);
  }
  if (error == errors::timed_out) return Status::Timeout("connection timed out: " + remote_address_);
  return Status::IoError(remote_address_ + ": " + error.message());
}

Status Stream::past_end_status(const Output& region) const {
  // A short region would leave the peer parsing frames out of step; a broken
  // stream is the honest outcome.
  return Status::IoError(region.file->path() + ": file region at " + std::to_string(region.offset) + " (" +
                         std::to_string(region.remaining) + " bytes left) ends past the end of the file");
}

// One wakeup of the read set: one recv and one on_bytes for each readable
// stream, then the wait is armed again. A callback may close any stream or
// destroy the network; each id is looked up afresh, and the shared State
// outlives the batch.
void read_ready_streams(const std::shared_ptr<State>& network, const ErrorCode& error) {
  if (!network->alive) return;
  if (error) {
    MQ_ASSERT(error != boost::asio::error::operation_aborted);  // only closing the set aborts, and State owns it
    // The epoll descriptor itself failed: no stream can hear its peer any
    // more. Break them all, so their owners reconnect, rather than spin.
    MQ_LOG(kWarn, "network", "waiting for input on the connections: " << error.message());
    std::vector<std::shared_ptr<Stream>> streams;
    for (const auto& [id, weak] : network->streams) {
      if (std::shared_ptr<Stream> stream = weak.lock()) streams.push_back(std::move(stream));
    }
    for (const auto& stream : streams) stream->break_off(Status::IoError("waiting for input: " + error.message()));
    return;
  }
  MQ_ASSERT(network->read_set != nullptr);
  std::array<uint64_t, kReadyBatch> ids;
  const size_t count = network->read_set->take_ready(ids);
  for (size_t i = 0; i < count && network->alive; ++i) {
    const auto found = network->streams.find(ids[i]);
    if (found == network->streams.end()) continue;  // closed earlier in this batch
    if (const std::shared_ptr<Stream> stream = found->second.lock()) stream->on_readable();
  }
  network->wait_for_input();
}

}  // namespace

void AsioNetwork::State::wait_for_input() {
  if (!alive || !read_set || read_set->waiting() || read_set->size() == 0) return;
  read_set->async_wait([weak = weak_from_this()](const ErrorCode& error) {
    if (const std::shared_ptr<State> self = weak.lock()) read_ready_streams(self, error);
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
// block the core's thread), addresses, registration for the destructor.
Result<std::shared_ptr<Connection>> make_connection(const std::shared_ptr<State>& network, tcp::socket socket) {
  ErrorCode error;
  const tcp::endpoint local = socket.local_endpoint(error);
  if (!error) {
    const tcp::endpoint remote = socket.remote_endpoint(error);
    if (!error) socket.set_option(tcp::no_delay(true), error);
    if (!error) socket.native_non_blocking(true, error);
    if (!error) {
      const uint64_t id = network->take_id();
      auto stream =
          std::make_shared<Stream>(network, id, std::move(socket), format_endpoint(local), format_endpoint(remote));
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
