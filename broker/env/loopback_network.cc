#include "broker/env/loopback_network.h"

#include <deque>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace mqlab::env {
namespace {

// Local ports of outgoing connections and of port-0 listeners come from the
// IANA dynamic range, as the kernel's do, and wrap around at its end.
constexpr uint32_t kFirstEphemeralPort = 49152;
constexpr uint32_t kLastEphemeralPort = 65535;

class LoopbackConnection;
class ListenerState;

}  // namespace

// What the endpoints of one network share: who listens where.
struct LoopbackNetwork::Registry {
  // By canonical address (HostPort::to_string). Entries are removed when their
  // listener closes, so every entry locks.
  std::map<std::string, std::weak_ptr<ListenerState>> listeners;
  std::set<std::string> unreachable;  // canonical addresses whose connects hang
  uint32_t next_port = kFirstEphemeralPort;
  uint64_t next_connection_id = 1;

  uint16_t take_port() {
    MQ_ASSERT(next_port >= kFirstEphemeralPort && next_port <= kLastEphemeralPort);
    const uint32_t port = next_port;
    next_port = port == kLastEphemeralPort ? kFirstEphemeralPort : port + 1;
    return static_cast<uint16_t>(port);
  }

  // A port at which host does not listen yet, for listen(host:0).
  uint16_t free_port(const std::string& host) {
    for (uint32_t tries = 0; tries <= kLastEphemeralPort - kFirstEphemeralPort; ++tries) {
      const uint16_t port = take_port();
      if (!listeners.contains(HostPort{host, port}.to_string())) return port;
    }
    MQ_UNREACHABLE("every ephemeral port of " + host + " is listened on");
  }

  // The listener for target: an exact match, else a wildcard bind on its port.
  std::shared_ptr<ListenerState> find_listener(const HostPort& target) const {
    for (const std::string& host : {target.host, std::string("0.0.0.0"), std::string("::")}) {
      const auto found = listeners.find(HostPort{host, target.port}.to_string());
      if (found == listeners.end()) continue;
      std::shared_ptr<ListenerState> listener = found->second.lock();
      MQ_ASSERT(listener != nullptr);  // a closing listener erases its entry
      return listener;
    }
    return nullptr;
  }
};

// One endpoint (one process's view): its executor and what kill() must reach.
struct LoopbackNetwork::Endpoint : std::enable_shared_from_this<Endpoint> {
  Endpoint(std::shared_ptr<Registry> registry_in, Executor& executor_in, std::string host_in)
      : registry(std::move(registry_in)), executor(executor_in), host(std::move(host_in)) {
    MQ_ASSERT(registry != nullptr);
    MQ_ASSERT(!host.empty());
  }

  // Runs task on this endpoint's executor, unless the endpoint is dead by
  // then. Never posts to a dead endpoint's executor, which may be gone.
  void post(Task task) {
    if (!alive) return;
    executor.post([weak = weak_from_this(), task = std::move(task)] {
      const std::shared_ptr<Endpoint> self = weak.lock();
      if (self && self->alive) task();
    });
  }

  void run_after(Nanos delay, Task task) {
    if (!alive) return;
    executor.run_after(delay, [weak = weak_from_this(), task = std::move(task)] {
      const std::shared_ptr<Endpoint> self = weak.lock();
      if (self && self->alive) task();
    });
  }

  const std::shared_ptr<Registry> registry;
  Executor& executor;
  const std::string host;
  bool alive = true;
  // What kill() resets and closes, in id and address order.
  std::map<uint64_t, std::weak_ptr<LoopbackConnection>> connections;
  std::map<std::string, std::weak_ptr<ListenerState>> listeners;
};

namespace {

using Endpoint = LoopbackNetwork::Endpoint;

struct LoopbackHandlers {
  BytesCallback on_bytes;
  CloseCallback on_close;
};

// One end of a loopback stream. Its peer is the other end, reached weakly:
// each end is owned by its own process's code.
class LoopbackConnection final : public Connection, public std::enable_shared_from_this<LoopbackConnection> {
 public:
  LoopbackConnection(std::shared_ptr<Endpoint> endpoint, uint64_t id, std::string local, std::string remote)
      : endpoint_(std::move(endpoint)), id_(id), local_address_(std::move(local)), remote_address_(std::move(remote)) {
    MQ_ASSERT(endpoint_ != nullptr);
    MQ_ASSERT(id_ != 0);
  }

  ~LoopbackConnection() override {
    close();
    endpoint_->connections.erase(id_);
  }

  uint64_t id() const { return id_; }
  void join(const std::shared_ptr<LoopbackConnection>& peer) {
    MQ_ASSERT(peer != nullptr && peer.get() != this);
    peer_ = peer;
  }

  void set_handlers(BytesCallback on_bytes, CloseCallback on_close) override {
    MQ_ASSERT(on_bytes != nullptr);
    MQ_ASSERT(on_close != nullptr);
    if (!callbacks_open_) return;  // closed, or on_close ran: nothing more to say
    handlers_ = std::make_shared<const LoopbackHandlers>(LoopbackHandlers{std::move(on_bytes), std::move(on_close)});
    schedule_flush();
  }

  void send(std::vector<uint8_t> bytes) override {
    if (!output_open_ || bytes.empty()) return;
    transmit(Arrival{Kind::kBytes, std::move(bytes), Status::Ok()});
  }

  void send_file_region(std::shared_ptr<File> file, uint64_t offset, uint32_t length) override;

  void close() override {
    const bool was_sending = output_open_;
    silence();
    // Behind every byte already sent, as a FIN follows the data.
    if (was_sending) transmit(Arrival{Kind::kPeerClosed, {}, Status::Ok()});
  }

  // The process died: its owner hears nothing more, its peer sees a reset.
  void reset() {
    const bool was_sending = output_open_;
    silence();
    if (was_sending) transmit(Arrival{Kind::kPeerReset, {}, Status::Ok()});
  }

  bool is_open() const override { return output_open_; }
  const std::string& local_address() const override { return local_address_; }
  const std::string& remote_address() const override { return remote_address_; }
  uint64_t pending_output_bytes() const override { return output_open_ ? pending_output_bytes_ : 0; }

 private:
  enum class Kind { kBytes, kPeerClosed, kPeerReset, kLocalFailure };
  // What travels to a connection's executor: bytes, or the end of the stream.
  struct Arrival {
    Kind kind = Kind::kBytes;
    std::vector<uint8_t> bytes;  // kBytes only
    Status failure;              // kLocalFailure only
  };

  // No more output, no more callbacks.
  void silence() {
    output_open_ = false;
    callbacks_open_ = false;
    handlers_.reset();
    inbox_.clear();
  }

  void transmit(Arrival arrival);
  void arrive(Arrival arrival);
  void deliver(Arrival arrival);
  void schedule_flush();
  void flush_inbox();
  void break_locally(Status reason);
  Status close_reason(const Arrival& arrival) const;

  const std::shared_ptr<Endpoint> endpoint_;
  const uint64_t id_;
  const std::string local_address_;
  const std::string remote_address_;
  std::weak_ptr<LoopbackConnection> peer_;
  // Shared so that a callback can replace or drop them while it runs.
  std::shared_ptr<const LoopbackHandlers> handlers_;
  // Arrivals waiting for handlers, or behind a flush already posted.
  std::deque<Arrival> inbox_;
  bool flush_posted_ = false;
  bool output_open_ = true;            // sends go out: not closed, not broken
  bool callbacks_open_ = true;         // not closed by the owner, on_close not run
  uint64_t pending_output_bytes_ = 0;  // sent, not yet arrived at the peer
};

void LoopbackConnection::send_file_region(std::shared_ptr<File> file, uint64_t offset, uint32_t length) {
  MQ_ASSERT(file != nullptr);
  if (!output_open_ || length == 0) return;
  std::vector<uint8_t> bytes(length);
  const Result<size_t> read = file->pread(offset, bytes);
  if (!read.ok()) {
    break_locally(read.status().with_context("sending a file region to " + remote_address_));
    return;
  }
  MQ_ASSERT(*read <= length);
  if (*read < length) {
    // A short region would leave the peer parsing frames out of step; a
    // broken stream is the honest outcome.
    break_locally(Status::IoError(file->path() + ": file region [" + std::to_string(offset) + ", " +
                                  std::to_string(offset + length) + ") ends past the end of the file (read " +
                                  std::to_string(*read) + " bytes)"));
    return;
  }
  transmit(Arrival{Kind::kBytes, std::move(bytes), Status::Ok()});
}

// Posts arrival to the peer's executor. Each end's executor runs its posts in
// order, so arrivals keep send order.
void LoopbackConnection::transmit(Arrival arrival) {
  const std::shared_ptr<LoopbackConnection> peer = peer_.lock();
  if (!peer || !peer->endpoint_->alive) return;  // nobody left to hear it
  const uint64_t size = arrival.bytes.size();
  pending_output_bytes_ += size;
  peer->endpoint_->post([sender = weak_from_this(), receiver = std::weak_ptr<LoopbackConnection>(peer),
                         arrival = std::move(arrival), size]() mutable {
    if (const std::shared_ptr<LoopbackConnection> self = sender.lock()) {
      MQ_ASSERT(self->pending_output_bytes_ >= size);
      self->pending_output_bytes_ -= size;
    }
    if (const std::shared_ptr<LoopbackConnection> target = receiver.lock()) target->arrive(std::move(arrival));
  });
}

// Runs on this end's executor.
void LoopbackConnection::arrive(Arrival arrival) {
  if (!callbacks_open_) return;
  // No half-close: once the peer is gone (or we broke), nothing more goes out.
  if (arrival.kind != Kind::kBytes) output_open_ = false;
  if (handlers_ && inbox_.empty()) {
    deliver(std::move(arrival));
  } else {
    inbox_.push_back(std::move(arrival));  // behind earlier arrivals, or until set_handlers
    if (handlers_) schedule_flush();
  }
}

void LoopbackConnection::deliver(Arrival arrival) {
  MQ_ASSERT(callbacks_open_);
  MQ_ASSERT(handlers_ != nullptr);
  // A local copy: the callback may close the connection or replace handlers.
  const std::shared_ptr<const LoopbackHandlers> handlers = handlers_;
  if (arrival.kind == Kind::kBytes) {
    MQ_ASSERT(!arrival.bytes.empty());
    handlers->on_bytes(arrival.bytes);
    return;
  }
  const Status reason = close_reason(arrival);
  silence();  // on_close is the last word
  handlers->on_close(reason);
}

void LoopbackConnection::schedule_flush() {
  if (inbox_.empty() || flush_posted_) return;
  flush_posted_ = true;
  endpoint_->post([weak = weak_from_this()] {
    if (const std::shared_ptr<LoopbackConnection> self = weak.lock()) self->flush_inbox();
  });
}

void LoopbackConnection::flush_inbox() {
  MQ_ASSERT(flush_posted_);
  flush_posted_ = false;
  while (callbacks_open_ && handlers_ && !inbox_.empty()) {
    Arrival arrival = std::move(inbox_.front());
    inbox_.pop_front();
    deliver(std::move(arrival));
  }
}

// Our own failure: the peer sees a reset, our owner hears why on our executor,
// after whatever already arrived.
void LoopbackConnection::break_locally(Status reason) {
  MQ_ASSERT(!reason.ok());
  MQ_ASSERT(output_open_);
  output_open_ = false;
  transmit(Arrival{Kind::kPeerReset, {}, Status::Ok()});
  endpoint_->post([weak = weak_from_this(), reason = std::move(reason)] {
    const std::shared_ptr<LoopbackConnection> self = weak.lock();
    if (self) self->arrive(Arrival{Kind::kLocalFailure, {}, reason});
  });
}

Status LoopbackConnection::close_reason(const Arrival& arrival) const {
  switch (arrival.kind) {
    case Kind::kPeerClosed:
      return Status::Unavailable("connection closed by peer: " + remote_address_);
    case Kind::kPeerReset:
      return Status::IoError("connection reset by peer: " + remote_address_);
    case Kind::kLocalFailure:
      return arrival.failure;
    case Kind::kBytes:
      break;
  }
  MQ_UNREACHABLE("bytes do not end a stream");
}

class ListenerState {
 public:
  ListenerState(std::shared_ptr<Endpoint> endpoint, std::string address, AcceptCallback on_accept)
      : endpoint_(std::move(endpoint)), address_(std::move(address)), on_accept_(std::move(on_accept)) {
    MQ_ASSERT(endpoint_ != nullptr);
    MQ_ASSERT(on_accept_ != nullptr);
  }

  const std::string& address() const { return address_; }
  const std::shared_ptr<Endpoint>& endpoint() const { return endpoint_; }

  // Runs on the listener's executor.
  void accept(const std::shared_ptr<LoopbackConnection>& connection) {
    if (!open_) {
      connection->reset();  // closed after the connect was made: the dialer sees a reset
      return;
    }
    const AcceptCallback on_accept = on_accept_;  // the callback may close the listener
    on_accept(connection);
  }

  void close() {
    if (!open_) return;
    open_ = false;
    on_accept_ = nullptr;
    const size_t erased = endpoint_->registry->listeners.erase(address_);
    MQ_ASSERT(erased == 1);
    endpoint_->listeners.erase(address_);
  }

 private:
  const std::shared_ptr<Endpoint> endpoint_;
  const std::string address_;
  AcceptCallback on_accept_;
  bool open_ = true;
};

class LoopbackListener final : public Listener {
 public:
  explicit LoopbackListener(std::shared_ptr<ListenerState> state) : state_(std::move(state)) {
    MQ_ASSERT(state_ != nullptr);
  }
  ~LoopbackListener() override { state_->close(); }

  const std::string& local_address() const override { return state_->address(); }
  void close() override { state_->close(); }

 private:
  const std::shared_ptr<ListenerState> state_;
};

// Both ends of a new stream, registered with their endpoints for kill().
// The server end's local address is the one dialed, even through a wildcard.
std::pair<std::shared_ptr<LoopbackConnection>, std::shared_ptr<LoopbackConnection>> make_stream(
    const std::shared_ptr<Endpoint>& client_endpoint, const std::shared_ptr<Endpoint>& server_endpoint,
    const std::string& dialed) {
  LoopbackNetwork::Registry& registry = *client_endpoint->registry;
  MQ_ASSERT(&registry == server_endpoint->registry.get());
  const std::string client_address = HostPort{client_endpoint->host, registry.take_port()}.to_string();
  auto client =
      std::make_shared<LoopbackConnection>(client_endpoint, registry.next_connection_id++, client_address, dialed);
  auto server =
      std::make_shared<LoopbackConnection>(server_endpoint, registry.next_connection_id++, dialed, client_address);
  client->join(server);
  server->join(client);
  client_endpoint->connections.emplace(client->id(), client);
  server_endpoint->connections.emplace(server->id(), server);
  return {std::move(client), std::move(server)};
}

}  // namespace

LoopbackNetwork::LoopbackNetwork(Executor& executor, std::string host)
    : LoopbackNetwork(std::make_shared<Registry>(), executor, std::move(host)) {}

LoopbackNetwork::LoopbackNetwork(std::shared_ptr<Registry> registry, Executor& executor, std::string host)
    : endpoint_(std::make_shared<Endpoint>(std::move(registry), executor, std::move(host))) {}

LoopbackNetwork::~LoopbackNetwork() { kill(); }

std::unique_ptr<LoopbackNetwork> LoopbackNetwork::endpoint(Executor& executor, std::string host) {
  // The constructor that joins a registry is private: endpoints of one network
  // are made only from one another.
  return std::unique_ptr<LoopbackNetwork>(new LoopbackNetwork(endpoint_->registry, executor, std::move(host)));
}

Result<std::shared_ptr<Listener>> LoopbackNetwork::listen(const std::string& address, AcceptCallback on_accept) {
  MQ_ASSERT(on_accept != nullptr);
  if (!endpoint_->alive) return Status::Unavailable("listen on " + address + ": the process was killed");
  MQ_ASSIGN_OR_RETURN(HostPort where, parse_address(address));
  Registry& registry = *endpoint_->registry;
  if (where.port == 0) where.port = registry.free_port(where.host);
  const std::string key = where.to_string();
  if (registry.listeners.contains(key)) return Status::AlreadyExists("address already in use: " + key);
  auto state = std::make_shared<ListenerState>(endpoint_, key, std::move(on_accept));
  registry.listeners.emplace(key, state);
  endpoint_->listeners.emplace(key, state);
  return std::shared_ptr<Listener>(std::make_shared<LoopbackListener>(std::move(state)));
}

void LoopbackNetwork::connect(const std::string& address, Nanos timeout, ConnectCallback done) {
  MQ_ASSERT(timeout > 0);
  MQ_ASSERT(done != nullptr);
  if (!endpoint_->alive) return;  // a dead process's call goes nowhere
  const Result<HostPort> target = parse_address(address);
  if (!target.ok()) {
    endpoint_->post([done, status = target.status()] { done(status); });
    return;
  }
  const std::string key = target->to_string();
  Registry& registry = *endpoint_->registry;
  if (registry.unreachable.contains(key)) {
    const std::string message = "connect timed out after " + std::to_string(timeout / kNanosPerMilli) + " ms: " + key;
    endpoint_->run_after(timeout, [done, message] { done(Status::Timeout(message)); });
    return;
  }
  const std::shared_ptr<ListenerState> listener = registry.find_listener(*target);
  if (listener == nullptr) {
    endpoint_->post([done, key] { done(Status::Unavailable("connection refused: " + key)); });
    return;
  }
  auto [client, server] = make_stream(endpoint_, listener->endpoint(), key);
  // The accept is posted first: with one executor on both sides the server
  // end exists for its owner before the client's first bytes arrive (they
  // would wait in its inbox anyway).
  listener->endpoint()->post([listener, server = server] { listener->accept(server); });
  endpoint_->post([done, client = client] { done(std::shared_ptr<Connection>(client)); });
}

void LoopbackNetwork::kill() {
  Endpoint& endpoint = *endpoint_;
  if (!endpoint.alive) return;
  endpoint.alive = false;
  // Listeners first, so nothing new connects to a half-dead process. Copies:
  // closing and resetting edit the maps being walked.
  const auto listeners = endpoint.listeners;
  for (const auto& [address, weak] : listeners) {
    if (const std::shared_ptr<ListenerState> listener = weak.lock()) listener->close();
  }
  MQ_ASSERT(endpoint.listeners.empty());
  std::vector<std::shared_ptr<LoopbackConnection>> connections;
  for (const auto& [id, weak] : endpoint.connections) {
    if (std::shared_ptr<LoopbackConnection> connection = weak.lock()) connections.push_back(std::move(connection));
  }
  for (const std::shared_ptr<LoopbackConnection>& connection : connections) connection->reset();
}

bool LoopbackNetwork::alive() const { return endpoint_->alive; }

void LoopbackNetwork::set_unreachable(const std::string& address, bool unreachable) {
  const Result<HostPort> parsed = parse_address(address);
  MQ_ASSERT_MSG(parsed.ok(), parsed.status().to_string());
  const std::string key = parsed->to_string();
  if (unreachable) {
    endpoint_->registry->unreachable.insert(key);
  } else {
    endpoint_->registry->unreachable.erase(key);
  }
}

size_t LoopbackNetwork::open_connections() const {
  size_t open = 0;
  for (const auto& [id, weak] : endpoint_->connections) {
    const std::shared_ptr<LoopbackConnection> connection = weak.lock();
    if (connection && connection->is_open()) ++open;
  }
  return open;
}

}  // namespace mqlab::env
