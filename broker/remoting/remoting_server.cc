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

#include <span>
#include <utility>

#include "broker/common/log.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"

namespace mqlab::remoting {
namespace {

constexpr const char* kComponent = "remoting";

}  // namespace

class ServerConnection : public std::enable_shared_from_this<ServerConnection> {
 public:
  ServerConnection(RemotingServer& server, uint64_t id, std::shared_ptr<env::Connection> connection)
      : server_(server),
        id_(id),
        connection_(std::move(connection)),
        remote_address_(connection_->remote_address()),
        decoder_(server.options_.max_frame_bytes) {
    MQ_ASSERT(id_ != 0);
    MQ_ASSERT(connection_ != nullptr);
  }

  // Starts reading. Handlers hold the connection weakly: the server owns it.
  void start() {
    const std::weak_ptr<ServerConnection> weak = weak_from_this();
    connection_->set_handlers(
        [weak](std::span<const uint8_t> bytes) {
          if (const std::shared_ptr<ServerConnection> self = weak.lock()) self->on_bytes(bytes);
        },
        [weak](Status reason) {
          if (const std::shared_ptr<ServerConnection> self = weak.lock()) self->on_transport_closed(reason);
        });
  }

  // Queues one response frame, or closes the connection when the frame would
  // take its unsent output past the limit (a client that does not read).
  void send_response(const RemotingCommand& response) {
    MQ_ASSERT(response.is_response());
    if (!open()) return;
    std::vector<uint8_t> frame = encode_frame(response);
    const uint64_t pending = connection_->pending_output_bytes();
    const uint64_t limit = server_.options_.max_pending_output_bytes;
    if (pending + frame.size() > limit) {
      close(Status::Unavailable("unsent output would reach " + std::to_string(pending + frame.size()) +
                                " bytes, over the limit of " + std::to_string(limit) +
                                " (the client is not reading its responses)"));
      return;
    }
    connection_->send(std::move(frame));
  }

  // Our decision to close (bad input, output limit): the server forgets the
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
  const std::string& remote_address() const { return remote_address_; }

 private:
  void on_bytes(std::span<const uint8_t> bytes) {
    MQ_ASSERT(!closed_);
    const std::shared_ptr<ServerConnection> self = shared_from_this();  // a processor may close us
    decoder_.feed(bytes);
    // Drain every whole frame before the next feed, as the decoder asks.
    while (!closed_) {
      Result<std::optional<RemotingCommand>> next = decoder_.next();
      if (!next.ok()) {
        ++server_.stats_.connections_closed_for_bad_input;
        MQ_LOG(kWarn, kComponent,
               server_.name_ << ": closing the connection from " << remote_address_
                             << " on bad input: " << next.status().to_string());
        close(next.status());
        return;
      }
      if (!next->has_value()) return;
      server_.dispatch(self, std::move(**next));
    }
  }

  void on_transport_closed(const Status& reason) {
    MQ_ASSERT(!reason.ok());
    if (closed_) return;
    closed_ = true;
    if (decoder_.buffered_bytes() > 0) {
      // Not an error of ours, but worth a line: a client died mid-request.
      MQ_LOG(kWarn, kComponent,
             server_.name_ << ": connection from " << remote_address_ << " ended inside a frame; "
                           << decoder_.buffered_bytes() << " bytes of it dropped");
    }
    server_.on_closed(this, reason);
  }

  RemotingServer& server_;  // outlives us while !closed_: shutdown detaches every connection
  const uint64_t id_;
  const std::shared_ptr<env::Connection> connection_;
  const std::string remote_address_;
  FrameDecoder decoder_;
  bool closed_ = false;
};

// --- ResponseChannel --------------------------------------------------------------

ResponseChannel::ResponseChannel(std::weak_ptr<ServerConnection> connection, const RemotingCommand& request)
    : connection_(std::move(connection)),
      opaque_(request.opaque),
      serialize_type_(request.serialize_type),
      oneway_(request.is_oneway()),
      answered_(std::make_shared<bool>(false)) {
  MQ_ASSERT(!request.is_response());
  if (const std::shared_ptr<ServerConnection> open = connection_.lock()) remote_address_ = open->remote_address();
}

void ResponseChannel::reply(RemotingCommand response) {
  MQ_ASSERT_MSG(!*answered_, "request opaque=" + std::to_string(opaque_) + " from " + remote_address_ +
                                 " answered twice; the second is " + response.describe());
  *answered_ = true;
  if (oneway_) return;  // the client asked for no response (RocketMQ drops it the same way)
  response.opaque = opaque_;
  response.mark_response();
  response.serialize_type = serialize_type_;
  const std::shared_ptr<ServerConnection> connection = connection_.lock();
  if (connection == nullptr) return;  // the client left while we worked: nobody to tell
  connection->send_response(response);
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
}

RemotingServer::~RemotingServer() { shutdown(); }

void RemotingServer::register_processor(int32_t request_code, RequestProcessor processor) {
  MQ_ASSERT(processor != nullptr);
  processors_.insert_or_assign(request_code, std::move(processor));
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
  MQ_LOG(kInfo, kComponent, name_ << ": listening on " << address_);
  return Status::Ok();
}

void RemotingServer::shutdown() {
  if (listener_ != nullptr) {
    listener_->close();
    listener_.reset();
    MQ_LOG(kInfo, kComponent, name_ << ": shut down, closing " << connections_.size() << " connections");
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
  const uint64_t id = next_connection_id_++;
  auto server_connection = std::make_shared<ServerConnection>(*this, id, std::move(connection));
  const bool inserted = connections_.emplace(id, server_connection).second;
  MQ_ASSERT(inserted);
  ++stats_.connections_accepted;
  MQ_LOG(kDebug, kComponent, name_ << ": accepted a connection from " << server_connection->remote_address());
  server_connection->start();
}

void RemotingServer::dispatch(const std::shared_ptr<ServerConnection>& connection, RemotingCommand request) {
  MQ_ASSERT(connection != nullptr);
  if (request.is_response()) {
    // We never send requests to clients, so no response can be ours to match.
    MQ_LOG(kWarn, kComponent,
           name_ << ": ignoring an unexpected " << request.describe() << " from " << connection->remote_address());
    return;
  }
  ++stats_.requests;
  MQ_LOG(kDebug, kComponent, name_ << ": " << request.describe() << " from " << connection->remote_address());
  ResponseChannel channel(connection, request);
  const auto found = processors_.find(request.code);
  if (found == processors_.end()) {
    ++stats_.unsupported_requests;
    MQ_LOG(kWarn, kComponent,
           name_ << ": " << describe_request_code(request.code) << " from " << connection->remote_address()
                 << " is not supported");
    channel.reply(ResponseCode::REQUEST_CODE_NOT_SUPPORTED,
                  "request type " + std::to_string(request.code) + " not supported");
    return;
  }
  // A copy: the processor may register another one for this code meanwhile.
  const RequestProcessor processor = found->second;
  processor(request, std::move(channel));
}

void RemotingServer::on_closed(ServerConnection* connection, const Status& reason) {
  MQ_ASSERT(connection != nullptr);
  const auto found = connections_.find(connection->id());
  MQ_ASSERT(found != connections_.end());
  MQ_ASSERT(found->second.get() == connection);
  const std::string remote_address = connection->remote_address();
  connections_.erase(found);
  MQ_LOG(kInfo, kComponent, name_ << ": connection from " << remote_address << " closed: " << reason.to_string());
  if (on_connection_closed_) {
    const auto listener = on_connection_closed_;  // the listener may replace itself
    listener(remote_address);
  }
}

}  // namespace mqlab::remoting
