// RemotingServer (remoting_server.h) and ServerConnection, one accepted
// connection: its FrameDecoder, its output limit and the way back for the
// responses of the requests that came on it.
//
// Ownership: the server owns its ServerConnections (connections_); the
// transport's handlers and every ResponseChannel hold them weakly, so a
// parked reply to a connection that has gone finds nothing and is swallowed.
// A ServerConnection leaves connections_ exactly once: when it closes (the
// peer left, bad input, the output limit) through on_closed, or all together
// at shutdown, which detaches them without calling the close listener.
#include "broker/remoting/remoting_server.h"

#include <algorithm>
#include <optional>
#include <span>
#include <utility>

#include "broker/common/log.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"

namespace mqlab::remoting {
namespace {

constexpr const char* kRemotingServerLog = "remoting";

}  // namespace

class ServerConnection : public std::enable_shared_from_this<ServerConnection> {
 public:
  ServerConnection(RemotingServer& server, uint64_t id, std::shared_ptr<env::Connection> connection)
      : server_(server),
        id_(id),
        connection_(std::move(connection)),
        remote_address_(std::make_shared<const std::string>(connection_->remote_address())),
        decoder_(server.options_.max_frame_bytes) {
    MQ_ASSERT(id_ != 0);
    MQ_ASSERT(connection_ != nullptr);
  }

  // Starts reading. Handlers and timers hold the connection weakly: the
  // server owns it.
  void start() {
    const std::weak_ptr<ServerConnection> weak = weak_from_this();
    connection_->set_handlers(
        [weak](std::span<const uint8_t> bytes) {
          if (const std::shared_ptr<ServerConnection> self = weak.lock()) self->on_bytes(bytes);
        },
        [weak](Status reason) {
          if (const std::shared_ptr<ServerConnection> self = weak.lock()) self->on_transport_closed(reason);
        });
    last_activity_ns_ = now();
    arm_idle_timer();
  }

  // Queues one response frame, its body continued by regions, or closes the
  // connection when the frame would take its unsent output past the limit (a
  // client that does not read).
  void send_response(const RemotingCommand& response, std::span<const BodyFileRegion> regions) {
    MQ_ASSERT(response.is_response());
    if (!open()) return;
    send_frame(encode_frame_prefix(response, body_file_region_bytes(regions)), regions);
  }

  // A response's frame (the body beyond prefix in regions), sent unless it
  // would take the unsent output over its limit, which closes the connection.
  void send_frame(std::vector<uint8_t> prefix, std::span<const BodyFileRegion> regions) {
    if (!open()) return;
    const uint64_t region_bytes = body_file_region_bytes(regions);
    const uint64_t frame_bytes = prefix.size() + region_bytes;
    const uint64_t pending = connection_->pending_output_bytes();
    const uint64_t limit = server_.options_.max_pending_output_bytes;
    if (pending + frame_bytes > limit) {
      ++server_.stats_.connections_closed_for_output_limit;
      const Status reason = Status::Unavailable(
          "unsent output would reach " + std::to_string(pending + frame_bytes) + " bytes, over the limit of " +
          std::to_string(limit) + " (the client is not reading its responses)");
      MQ_LOG(kWarn, kRemotingServerLog, server_.name_ << ": closing the connection from " << *remote_address_ << ": "
                                              << reason.message());
      close(reason);
      return;
    }
    last_activity_ns_ = now();
    connection_->send(std::move(prefix));
    for (const BodyFileRegion& region : regions) connection_->send_file_region(region.file, region.offset, region.length);
    if (!regions.empty()) {
      ++server_.stats_.file_region_responses;
      server_.stats_.file_region_bytes += region_bytes;
    }
  }

  // Our decision to close (bad input, a limit): the server forgets the
  // connection and tells its close listener.
  void close(const Status& reason) {
    MQ_ASSERT(!reason.ok());
    if (closed_) return;
    const std::shared_ptr<ServerConnection> self = shared_from_this();  // on_closed drops the server's reference
    closed_ = true;
    connection_->close();
    server_.on_closed(this, reason);
  }

  // Shutdown: closes without a word to anyone; the server is going away.
  void detach() {
    closed_ = true;
    connection_->close();
  }

  bool open() const { return !closed_ && connection_->is_open(); }
  uint64_t id() const { return id_; }
  const std::string& remote_address() const { return *remote_address_; }
  // The same text, shared by the connection's ResponseChannels.
  const std::shared_ptr<const std::string>& shared_remote_address() const { return remote_address_; }

 private:
  Nanos now() const { return server_.env_.clock().now_ns(); }

  void on_bytes(std::span<const uint8_t> bytes) {
    MQ_ASSERT(!closed_);
    const std::shared_ptr<ServerConnection> self = shared_from_this();  // a processor may close us
    last_activity_ns_ = now();
    // Every whole frame is dispatched before the next arrival, as the
    // decoder asks; a processor that closes us stops the rest.
    const Status decoded = decoder_.feed_and_drain(bytes, [this, &self](RemotingCommand&& command) {
      server_.dispatch(self, std::move(command));
      return !closed_;
    });
    if (!decoded.ok() && !closed_) {
      ++server_.stats_.connections_closed_for_bad_input;
      MQ_LOG(kWarn, kRemotingServerLog,
             server_.name_ << ": closing the connection from " << *remote_address_
                           << " on bad input: " << decoded.to_string());
      close(decoded);
      return;
    }
    if (!closed_) note_partial_frame();
  }

  // Starts the frame clock when a new frame has begun and is not complete.
  void note_partial_frame() {
    if (decoder_.buffered_bytes() == 0) {
      partial_frame_since_ns_.reset();
      return;
    }
    if (partial_frame_since_ns_ && partial_frame_offset_ == decoder_.stream_offset()) return;  // same frame
    partial_frame_since_ns_ = now();
    partial_frame_offset_ = decoder_.stream_offset();
    arm_frame_timer();
  }

  void arm_frame_timer() {
    const Nanos timeout = server_.options_.frame_read_timeout;
    if (timeout <= 0 || frame_timer_armed_ || !partial_frame_since_ns_) return;
    frame_timer_armed_ = true;
    const Nanos delay = std::max<Nanos>(0, *partial_frame_since_ns_ + timeout - now());
    server_.env_.executor().run_after(delay, [weak = weak_from_this()] {
      if (const std::shared_ptr<ServerConnection> self = weak.lock()) self->on_frame_timer();
    });
  }

  void on_frame_timer() {
    MQ_ASSERT(frame_timer_armed_);
    frame_timer_armed_ = false;
    if (closed_ || !partial_frame_since_ns_) return;
    const Nanos timeout = server_.options_.frame_read_timeout;
    if (now() - *partial_frame_since_ns_ < timeout) return arm_frame_timer();  // a later frame began meanwhile
    ++server_.stats_.connections_closed_for_slow_frame;
    const Status reason = Status::Timeout("a frame begun " + std::to_string(timeout / kNanosPerMilli) +
                                          " ms ago is still incomplete (" +
                                          std::to_string(decoder_.buffered_bytes()) + " bytes of it arrived)");
    MQ_LOG(kWarn, kRemotingServerLog,
           server_.name_ << ": closing the connection from " << *remote_address_ << ": " << reason.message());
    close(reason);
  }

  void arm_idle_timer() {
    const Nanos idle = server_.options_.channel_max_idle;
    if (idle <= 0) return;
    const Nanos delay = std::max<Nanos>(0, last_activity_ns_ + idle - now());
    server_.env_.executor().run_after(delay, [weak = weak_from_this()] {
      if (const std::shared_ptr<ServerConnection> self = weak.lock()) self->on_idle_timer();
    });
  }

  // Re-armed from the last activity rather than on every byte: one timer
  // event per idle period, however busy the connection.
  void on_idle_timer() {
    if (closed_) return;
    const Nanos idle = server_.options_.channel_max_idle;
    if (now() - last_activity_ns_ < idle) return arm_idle_timer();
    ++server_.stats_.connections_closed_idle;
    const Status reason = Status::Timeout("no traffic for " + std::to_string(idle / kNanosPerSecond) +
                                          " s (serverChannelMaxIdleTimeSeconds)");
    MQ_LOG(kInfo, kRemotingServerLog,
           server_.name_ << ": closing the idle connection from " << *remote_address_ << ": " << reason.message());
    close(reason);
  }

  void on_transport_closed(const Status& reason) {
    MQ_ASSERT(!reason.ok());
    if (closed_) return;
    closed_ = true;
    if (decoder_.buffered_bytes() > 0) {
      // Not an error of ours, but worth a line: a client died mid-request.
      MQ_LOG(kWarn, kRemotingServerLog,
             server_.name_ << ": connection from " << *remote_address_ << " ended inside a frame; "
                           << decoder_.buffered_bytes() << " bytes of it dropped");
    }
    server_.on_closed(this, reason);
  }

  RemotingServer& server_;  // outlives us while !closed_: shutdown detaches every connection
  const uint64_t id_;
  const std::shared_ptr<env::Connection> connection_;
  // Shared: every request's ResponseChannel names the client (a send's born
  // host, a failure's message) and may outlive the connection; a copy of
  // the text per request was an allocation and a copy each.
  const std::shared_ptr<const std::string> remote_address_;
  FrameDecoder decoder_;
  bool closed_ = false;
  Nanos last_activity_ns_ = 0;                  // the last byte in, or response out
  std::optional<Nanos> partial_frame_since_ns_;  // when the incomplete frame began
  uint64_t partial_frame_offset_ = 0;           // its stream offset
  bool frame_timer_armed_ = false;
};

// --- ResponseChannel --------------------------------------------------------------

ResponseChannel::ResponseChannel(const std::shared_ptr<ServerConnection>& connection, const RemotingCommand& request)
    : connection_(connection),
      opaque_(request.opaque),
      serialize_type_(request.serialize_type),
      oneway_(request.is_oneway()),
      remote_address_(connection->shared_remote_address()) {
  MQ_ASSERT(!request.is_response());
  MQ_ASSERT(remote_address_ != nullptr);
}

void ResponseChannel::reply(RemotingCommand response) { reply(std::move(response), {}); }

std::string ResponseChannel::answered_twice(std::string_view second) const {
  std::string text = "request opaque=" + std::to_string(opaque_) + " from " +
                     (remote_address_ != nullptr ? *remote_address_ : std::string("a moved-from channel")) +
                     " answered twice";
  if (!second.empty()) text.append("; the second is ").append(second);
  return text;
}

void ResponseChannel::reply(RemotingCommand response, std::vector<BodyFileRegion> regions) {
  MQ_ASSERT_MSG(!answered_, answered_twice(response.describe()));
  if (!take_answer()) return;
  response.opaque = opaque_;
  response.mark_response();
  response.serialize_type = serialize_type_;
  const std::shared_ptr<ServerConnection> connection = connection_.lock();
  if (connection == nullptr) return;  // the client left while we worked: nobody to tell
  connection->send_response(response, regions);
}

bool ResponseChannel::take_answer() {
  MQ_ASSERT_MSG(!answered_, answered_twice({}));
  answered_ = true;
  return !oneway_;  // the client asked for no response (RocketMQ drops it the same way)
}

void ResponseChannel::send_frame(std::vector<uint8_t> frame, std::span<const BodyFileRegion> regions) {
  const std::shared_ptr<ServerConnection> connection = connection_.lock();
  if (connection == nullptr) return;  // the client left while we worked: nobody to tell
  connection->send_frame(std::move(frame), regions);
}

void ResponseChannel::reply(int32_t code, std::string remark) {
  RemotingCommand response;
  response.code = code;
  response.remark = std::move(remark);
  reply(std::move(response));
}

bool ResponseChannel::connection_open() const {
  const std::shared_ptr<ServerConnection> connection = connection_.lock();
  return connection != nullptr && connection->open();
}

// --- RemotingServer ---------------------------------------------------------------

RemotingServer::RemotingServer(env::Env& env, std::string name, RemotingServerOptions options)
    : env_(env), name_(std::move(name)), options_(options) {
  MQ_ASSERT(options_.max_frame_bytes > kFramePrefixBytes);
  MQ_ASSERT(options_.max_pending_output_bytes > 0);
  MQ_ASSERT(options_.max_connections > 0);
  MQ_ASSERT(options_.channel_max_idle >= 0);
  MQ_ASSERT(options_.frame_read_timeout >= 0);
}

RemotingServer::~RemotingServer() { shutdown(); }

void RemotingServer::register_processor(int32_t request_code, RequestProcessor processor) {
  MQ_ASSERT(processor != nullptr);
  processors_.insert_or_assign(request_code, std::make_shared<const RequestProcessor>(std::move(processor)));
}

Status RemotingServer::start(const std::string& listen_address) {
  MQ_ASSERT_MSG(listener_ == nullptr, name_ + " started twice");
  Result<std::shared_ptr<env::Listener>> listener = env_.network().listen(
      listen_address,
      lifetime_.guard([this](std::shared_ptr<env::Connection> connection) { on_accept(std::move(connection)); }));
  if (!listener.ok()) return listener.status().with_context(name_ + ": listening on " + listen_address);
  listener_ = std::move(listener).value();
  address_ = listener_->local_address();
  MQ_ASSERT(!address_.empty());
  MQ_LOG(kInfo, kRemotingServerLog, name_ << ": listening on " << address_);
  return Status::Ok();
}

void RemotingServer::shutdown() {
  if (listener_ != nullptr) {
    listener_->close();
    listener_.reset();
    MQ_LOG(kInfo, kRemotingServerLog, name_ << ": shut down, closing " << connections_.size() << " connections");
  }
  // Moved out first: nothing may reach connections_ while it is torn down.
  std::map<uint64_t, std::shared_ptr<ServerConnection>> connections = std::move(connections_);
  connections_.clear();
  for (auto& [id, connection] : connections) connection->detach();
  MQ_ASSERT(connections_.empty());
}

void RemotingServer::on_accept(std::shared_ptr<env::Connection> connection) {
  MQ_ASSERT(connection != nullptr);
  MQ_ASSERT(listener_ != nullptr);  // a closed listener accepts nothing more
  if (connections_.size() >= options_.max_connections) {
    refuse_over_limit(*connection);
    return;
  }
  const uint64_t id = next_connection_id_++;
  auto server_connection = std::make_shared<ServerConnection>(*this, id, std::move(connection));
  const bool inserted = connections_.emplace(id, server_connection).second;
  MQ_ASSERT(inserted);
  ++stats_.connections_accepted;
  MQ_LOG(kDebug, kRemotingServerLog, name_ << ": accepted a connection from " << server_connection->remote_address());
  server_connection->start();
}

// Thousands of connects a second must not become thousands of log lines:
// the first refusal is logged, then every 1000th with the running count.
void RemotingServer::refuse_over_limit(env::Connection& connection) {
  ++stats_.connections_refused_over_limit;
  const uint64_t refused = stats_.connections_refused_over_limit;
  if (refused == 1 || refused % 1000 == 0) {
    MQ_LOG(kWarn, kRemotingServerLog,
           name_ << ": refusing the connection from " << connection.remote_address() << ": " << connections_.size()
                 << " connections open, the limit (serverMaxConnections) is " << options_.max_connections << "; "
                 << refused << " refused so far");
  }
  connection.close();
}

void RemotingServer::dispatch(const std::shared_ptr<ServerConnection>& connection, RemotingCommand&& request) {
  MQ_ASSERT(connection != nullptr);
  if (request.is_response()) {
    // We never send requests to clients, so no response can be ours to match.
    MQ_LOG(kWarn, kRemotingServerLog,
           name_ << ": ignoring an unexpected " << request.describe() << " from " << connection->remote_address());
    return;
  }
  ++stats_.requests;
  MQ_LOG(kDebug, kRemotingServerLog, name_ << ": " << request.describe() << " from " << connection->remote_address());
  ResponseChannel channel(connection, request);
  const auto found = processors_.find(request.code);
  if (found == processors_.end()) {
    ++stats_.unsupported_requests;
    MQ_LOG(kWarn, kRemotingServerLog,
           name_ << ": " << describe_request_code(request.code) << " from " << connection->remote_address()
                 << " is not supported");
    channel.reply(ResponseCode::REQUEST_CODE_NOT_SUPPORTED,
                  "request type " + std::to_string(request.code) + " not supported");
    return;
  }
  // Held: the processor may register another one for this code meanwhile.
  const std::shared_ptr<const RequestProcessor> processor = found->second;
  (*processor)(request, std::move(channel));
}

void RemotingServer::on_closed(ServerConnection* connection, const Status& reason) {
  MQ_ASSERT(connection != nullptr);
  const auto found = connections_.find(connection->id());
  MQ_ASSERT(found != connections_.end());
  MQ_ASSERT(found->second.get() == connection);
  const std::string remote_address = connection->remote_address();
  connections_.erase(found);
  MQ_LOG(kInfo, kRemotingServerLog, name_ << ": connection from " << remote_address << " closed: " << reason.to_string());
  if (on_connection_closed_) {
    const auto listener = on_connection_closed_;  // the listener may replace itself
    listener(remote_address);
  }
}

}  // namespace mqlab::remoting
