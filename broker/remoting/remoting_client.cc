// RemotingClient (remoting_client.h) and ClientConnection, the one connection
// to one address: connecting, frames waiting for the connect, the requests
// waiting for their responses, and their timers.
//
// A ClientConnection lives in connections_ from its first use until it
// closes (connect failed, broke, a request timed out, bad bytes from the
// server, close_connection, shutdown); a closed one is never reused, so the
// next call to that address opens a fresh one. Its callbacks hold it weakly.
//
// A response's callback runs inside the network callback that brought the
// response (on the executor). Every other completion (failures, timeouts,
// oneway writes) is posted to the executor and captures only the caller's
// callback and its result, never the client. Either way a callback never runs
// inside invoke(), may call back into the client freely, and a failure still
// runs when the client was destroyed meanwhile (with Aborted, from shutdown).
#include "broker/remoting/remoting_client.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "broker/common/log.h"
#include "broker/remoting/request_code.h"

namespace mqlab::remoting {
namespace {

constexpr const char* kRemotingClientLog = "remoting";

std::string format_ms(Nanos duration) { return std::to_string(duration / kNanosPerMilli) + " ms"; }

// The next opaque of a client's counter: 1, 2, ... wrapping past INT32_MAX to
// 1, so never 0 (ali-ons never uses it either) and never negative.
int32_t take_opaque(int32_t& next_opaque) {
  MQ_ASSERT(next_opaque > 0);
  const int32_t opaque = next_opaque;
  next_opaque = opaque == std::numeric_limits<int32_t>::max() ? 1 : opaque + 1;
  return opaque;
}

}  // namespace

class RemotingClient::ClientConnection : public std::enable_shared_from_this<ClientConnection> {
 public:
  ClientConnection(RemotingClient& client, std::string address)
      : client_(client), address_(std::move(address)), decoder_(client.options_.max_frame_bytes) {
    MQ_ASSERT(!address_.empty());
  }

  void connect() {
    MQ_ASSERT(state_ == State::kConnecting);
    const std::weak_ptr<ClientConnection> weak = weak_from_this();
    client_.env_.network().connect(address_, client_.options_.connect_timeout,
                                   [weak](Result<std::shared_ptr<env::Connection>> connection) {
                                     if (const std::shared_ptr<ClientConnection> self = weak.lock()) {
                                       self->on_connected(std::move(connection));
                                     }
                                   });
  }

  // The frame goes out now, or once connected; done hears the response.
  void send_request(int32_t opaque, int32_t code, std::vector<uint8_t> frame, Nanos timeout, ResponseCallback done) {
    MQ_ASSERT(state_ != State::kClosed);  // closed connections leave connections_
    MQ_ASSERT(opaque != 0);
    MQ_ASSERT(timeout > 0);
    const Nanos deadline = client_.env_.clock().now_ns() + timeout;
    const auto at = pending_lower_bound(opaque);
    MQ_ASSERT_MSG(at == pending_.end() || at->first != opaque,
                  "opaque " + std::to_string(opaque) + " is already waiting on " + address_);
    pending_.emplace(at, opaque, Pending{std::move(done), deadline, code, timeout});
    // One timer per connection, not per request (see deadline_timer_).
    if (deadline_timer_ == env::kNoTimer || deadline < deadline_timer_at_) arm_deadline_timer(deadline);
    write(Outgoing{std::move(frame), {}});
  }

  void send_oneway(std::vector<uint8_t> frame, std::function<void(Status)> written) {
    MQ_ASSERT(state_ != State::kClosed);
    write(Outgoing{std::move(frame), std::move(written)});
  }

  // Ends the connection: every waiting request and unsent oneway completes
  // with failure, whose code tells why (Unavailable, Corruption, Aborted).
  void close(const Status& failure) {
    MQ_ASSERT(!failure.ok());
    if (state_ == State::kClosed) return;
    const std::shared_ptr<ClientConnection> self = shared_from_this();  // forget() drops the client's reference
    state_ = State::kClosed;
    if (connection_ != nullptr) connection_->close();
    if (deadline_timer_ != env::kNoTimer) client_.env_.executor().cancel(deadline_timer_);
    deadline_timer_ = env::kNoTimer;
    // In opaque order, which is issue order: deterministic.
    for (auto& [opaque, pending] : pending_) complete(std::move(pending.done), failure);
    pending_.clear();
    for (Outgoing& outgoing : unsent_) {
      if (outgoing.written) complete_written(std::move(outgoing.written), failure);
    }
    unsent_.clear();
    forget();
  }

  size_t pending_count() const { return pending_.size(); }

 private:
  enum class State { kConnecting, kOpen, kClosed };
  struct Pending {
    ResponseCallback done;
    Nanos deadline = 0;  // on the env's clock: no response by then is a timeout
    int32_t code = 0;    // the request's, for messages
    Nanos timeout = 0;
  };
  using PendingEntry = std::pair<int32_t, Pending>;
  using PendingQueue = std::deque<PendingEntry>;
  // A frame waiting for the connect; written (oneway only) hears how it went.
  struct Outgoing {
    std::vector<uint8_t> frame;
    std::function<void(Status)> written;
  };

  void complete(ResponseCallback done, Result<RemotingCommand> result) {
    MQ_ASSERT(done != nullptr);
    client_.env_.executor().post(
        [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
  }

  void complete_written(std::function<void(Status)> written, Status status) {
    MQ_ASSERT(written != nullptr);
    client_.env_.executor().post(
        [written = std::move(written), status = std::move(status)]() mutable { written(std::move(status)); });
  }

  void write(Outgoing outgoing) {
    if (state_ == State::kConnecting) {
      unsent_.push_back(std::move(outgoing));
      return;
    }
    MQ_ASSERT(state_ == State::kOpen);
    // A broken stream drops the frame; its on_close then fails the requests.
    const bool open = connection_->is_open();
    connection_->send(std::move(outgoing.frame));
    if (outgoing.written) {
      complete_written(std::move(outgoing.written),
                       open ? Status::Ok() : Status::Unavailable("connection to " + address_ + " is broken"));
    }
  }

  void on_connected(Result<std::shared_ptr<env::Connection>> connection) {
    if (state_ == State::kClosed) return;  // dropping the connection closes it
    MQ_ASSERT(state_ == State::kConnecting);
    if (!connection.ok()) {
      MQ_LOG(kWarn, kRemotingClientLog, "connect to " << address_ << " failed: " << connection.status().to_string());
      close(Status::Unavailable("connect to " + address_ + " failed: " + connection.status().to_string()));
      return;
    }
    connection_ = std::move(connection).value();
    MQ_ASSERT(connection_ != nullptr);
    state_ = State::kOpen;
    const std::weak_ptr<ClientConnection> weak = weak_from_this();
    connection_->set_handlers(
        [weak](std::span<const uint8_t> bytes) {
          if (const std::shared_ptr<ClientConnection> self = weak.lock()) self->on_bytes(bytes);
        },
        [weak](Status reason) {
          if (const std::shared_ptr<ClientConnection> self = weak.lock()) self->on_transport_closed(reason);
        });
    std::deque<Outgoing> unsent = std::move(unsent_);
    unsent_.clear();
    for (Outgoing& outgoing : unsent) write(std::move(outgoing));
  }

  void on_bytes(std::span<const uint8_t> bytes) {
    const std::shared_ptr<ClientConnection> self = shared_from_this();  // close() may drop the last owner
    if (state_ != State::kOpen) return;
    const Status decoded = decoder_.feed_and_drain(bytes, [this](RemotingCommand&& command) {
      on_command(std::move(command));
      return state_ == State::kOpen;
    });
    if (!decoded.ok() && state_ == State::kOpen) {
      MQ_LOG(kWarn, kRemotingClientLog, "closing the connection to " << address_ << ": " << decoded.to_string());
      close(Status::Corruption("response stream from " + address_ + ": " + decoded.message()));
    }
  }

  // By reference: the decoder's command is handed on, not moved once more
  // into a parameter (a move and a destruction per response).
  void on_command(RemotingCommand&& command) {
    if (!command.is_response()) {
      // Server-initiated requests (NOTIFY_CONSUMER_IDS_CHANGED, ...) go
      // unanswered, as ali-ons leaves them.
      MQ_LOG(kDebug, kRemotingClientLog, "ignoring " << command.describe() << " from " << address_);
      return;
    }
    const auto found = find_pending(command.opaque);
    if (found == pending_.end()) {
      // A Java broker answers even a oneway request (ali-ons' quirk, 8.2).
      MQ_LOG(kDebug, kRemotingClientLog, "no request waits for " << command.describe() << " from " << address_);
      return;
    }
    Pending pending = std::move(found->second);
    pending_.erase(found);
    // Its deadline stays behind in the deadline timer, if it armed it: a
    // firing that finds nothing due re-arms for what still waits.
    // A response runs its callback here, inside the network's callback, which
    // itself runs on the executor: never inside invoke(), and the callback may
    // call back into the client (on_bytes holds us and stops once we close).
    // Posting it instead cost an event, an allocation for the closure and two
    // moves of the command per response, two responses per simulated message.
    pending.done(std::move(command));
  }

  // Points the deadline timer at deadline, the earliest of every waiting
  // request's (or earlier). `this`, not a weak_ptr: close() (which comes
  // before our destruction) cancels the timer, so a timer that runs finds us
  // alive, and one word fits every callable's inline room.
  void arm_deadline_timer(Nanos deadline) {
    MQ_ASSERT(state_ != State::kClosed);
    if (deadline_timer_ != env::kNoTimer) client_.env_.executor().cancel(deadline_timer_);
    const Nanos delay = deadline - client_.env_.clock().now_ns();
    MQ_ASSERT(delay > 0);  // due requests time out before any re-arming
    deadline_timer_at_ = deadline;
    deadline_timer_ = client_.env_.executor().run_after(delay, [this] { on_deadline_timer(); });
  }

  // The request with the earliest deadline times out if that has passed
  // (the first issued, of equal ones: the order per-request timers fired
  // in); otherwise the timer waits for that deadline.
  void on_deadline_timer() {
    MQ_ASSERT(state_ != State::kClosed);  // close() cancelled the timer
    deadline_timer_ = env::kNoTimer;
    auto earliest = pending_.end();
    for (auto it = pending_.begin(); it != pending_.end(); ++it) {
      if (earliest == pending_.end() || it->second.deadline < earliest->second.deadline) earliest = it;
    }
    if (earliest == pending_.end()) return;  // nothing waits: the next request arms it
    if (earliest->second.deadline > client_.env_.clock().now_ns()) return arm_deadline_timer(earliest->second.deadline);
    on_timeout(earliest);
  }

  void on_timeout(PendingQueue::iterator found) {
    MQ_ASSERT(state_ != State::kClosed);
    MQ_ASSERT(found != pending_.end());
    const std::shared_ptr<ClientConnection> self = shared_from_this();  // close() below drops the client's reference
    const int32_t opaque = found->first;
    Pending pending = std::move(found->second);
    pending_.erase(found);
    const std::string what = describe_request_code(pending.code) + " opaque=" + std::to_string(opaque) + " to " +
                             address_ + ": no response within " + format_ms(pending.timeout);
    MQ_LOG(kWarn, kRemotingClientLog, what << "; closing the connection");
    complete(std::move(pending.done), Status::Timeout(what));
    // As RocketMQ clients do: a silent server may be wedged, so start afresh.
    close(Status::Unavailable("connection to " + address_ + " closed after " + what));
  }

  void on_transport_closed(const Status& reason) {
    MQ_ASSERT(!reason.ok());
    MQ_LOG(kInfo, kRemotingClientLog, "connection to " << address_ << " ended: " << reason.to_string());
    close(Status::Unavailable("connection to " + address_ + " broke: " + reason.to_string()));
  }

  // Leaves the client's table, if still there (shutdown empties it first).
  void forget() {
    const auto found = client_.connections_.find(address_);
    if (found != client_.connections_.end() && found->second.get() == this) {
      client_.recent_connections_.forget();
      client_.connections_.erase(found);
    }
  }

  RemotingClient& client_;  // outlives us while not closed: shutdown closes every connection
  const std::string address_;
  State state_ = State::kConnecting;
  std::shared_ptr<env::Connection> connection_;  // set once connected
  FrameDecoder decoder_;
  std::deque<Outgoing> unsent_;          // while connecting, in call order
  // Timeouts take one timer per connection, armed at the earliest deadline
  // of the requests waiting (or at an earlier one whose request has been
  // answered since: answers leave it be, and a firing with nothing due
  // re-arms for the earliest). A timer per request cost a scheduling and a
  // cancel per request, both in the executor's ordered maps: over a tenth
  // of a producer client's instructions per message. Requests time out at
  // their own deadlines still; only the firings that find nothing due are new.
  env::TimerId deadline_timer_ = env::kNoTimer;
  Nanos deadline_timer_at_ = 0;  // when deadline_timer_ fires, if armed
  // By opaque, ascending. A sorted deque, not a map: a map node cost an
  // allocation per request. Opaques grow, so a new one goes at the end (but
  // for the wrap past INT32_MAX), and answers come mostly oldest first, which
  // a deque erases in O(1) where a vector moved every later entry: one
  // shared producer client may have hundreds of requests in flight.
  PendingQueue pending_;
  PendingQueue::iterator pending_lower_bound(int32_t opaque) {
    if (pending_.empty() || pending_.back().first < opaque) return pending_.end();
    return std::lower_bound(pending_.begin(), pending_.end(), opaque,
                            [](const PendingEntry& entry, int32_t key) { return entry.first < key; });
  }
  PendingQueue::iterator find_pending(int32_t opaque) {
    const auto found = pending_lower_bound(opaque);
    return found != pending_.end() && found->first == opaque ? found : pending_.end();
  }
};

// --- RemotingClient ------------------------------------------------------------------

RemotingClient::RemotingClient(env::Env& env, RemotingClientOptions options) : env_(env), options_(options) {
  MQ_ASSERT(options_.connect_timeout > 0);
  MQ_ASSERT(options_.max_frame_bytes > kFramePrefixBytes);
}

RemotingClient::~RemotingClient() { shutdown(); }

void RemotingClient::invoke(const std::string& address, RemotingCommand request, Nanos timeout,
                            ResponseCallback done) {
  invoke(address, request, {}, timeout, std::move(done));
}

void RemotingClient::invoke(const std::string& address, RemotingCommand& request, std::span<const uint8_t> body,
                            Nanos timeout, ResponseCallback done) {
  MQ_ASSERT(done != nullptr);
  MQ_ASSERT(timeout > 0);
  MQ_ASSERT(!request.is_response());
  MQ_ASSERT_MSG(!request.is_oneway(), "a oneway request gets no response: use invoke_oneway");
  MQ_ASSERT(body.empty() || request.body.empty());  // one body or the other
  request.opaque = take_opaque(next_opaque_);
  if (options_.serialize_type) request.serialize_type = *options_.serialize_type;
  std::vector<uint8_t> frame = body.empty() ? encode_frame(request) : encode_frame_with_body(request, body);
  connection_to(address)->send_request(request.opaque, request.code, std::move(frame), timeout, std::move(done));
}

int32_t RemotingClient::take_request_opaque() { return take_opaque(next_opaque_); }

void RemotingClient::send_written_request(const std::string& address, int32_t opaque, int32_t code,
                                          std::vector<uint8_t> frame, Nanos timeout, ResponseCallback done) {
  MQ_ASSERT(done != nullptr);
  MQ_ASSERT(timeout > 0);
  connection_to(address)->send_request(opaque, code, std::move(frame), timeout, std::move(done));
}

void RemotingClient::invoke_oneway(const std::string& address, RemotingCommand request,
                                   std::function<void(Status)> done) {
  MQ_ASSERT(!request.is_response());
  request.opaque = take_opaque(next_opaque_);
  request.mark_oneway();
  if (options_.serialize_type) request.serialize_type = *options_.serialize_type;
  connection_to(address)->send_oneway(encode_frame(request), std::move(done));
}

void RemotingClient::close_connection(const std::string& address) {
  const auto found = connections_.find(address);
  if (found == connections_.end()) return;
  const std::shared_ptr<ClientConnection> connection = found->second;
  connection->close(Status::Unavailable("connection to " + address + " closed by this client"));
  MQ_ASSERT(!connections_.contains(address));
}

void RemotingClient::shutdown() {
  // Moved out first, so closing connections cannot disturb the iteration.
  Connections connections = std::move(connections_);
  connections_.clear();
  recent_connections_.forget();
  for (auto& [address, connection] : connections) {
    connection->close(Status::Aborted("remoting client shut down; connection to " + address + " closed"));
  }
  MQ_ASSERT(connections_.empty());
}

size_t RemotingClient::pending_requests() const {
  size_t total = 0;
  for (const auto& [address, connection] : connections_) total += connection->pending_count();
  return total;
}

std::shared_ptr<RemotingClient::ClientConnection> RemotingClient::connection_to(const std::string& address) {
  if (const Connections::value_type* found = recent_connections_.find(connections_, address)) return found->second;
  auto connection = std::make_shared<ClientConnection>(*this, address);
  connections_.emplace(address, connection);
  // May close it at once, taking it out of connections_ (and emptying the
  // memo): remembered at its next use.
  connection->connect();
  return connection;
}

}  // namespace mqlab::remoting
