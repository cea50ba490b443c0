#include "broker/http/asio_http_server.h"

#include <array>
#include <charconv>
#include <chrono>
#include <exception>
#include <map>
#include <optional>
#include <utility>

#include "broker/env/asio.h"  // before Beast: the <utility> workaround
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "broker/common/assert.h"
#include "broker/common/log.h"

namespace mqlab::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

constexpr const char* kAsioHttpServerLog = "http";
// How long the accept loop waits after an accept error (EMFILE: out of file
// descriptors) before trying again, so it does not spin.
constexpr std::chrono::milliseconds kAcceptRetryDelay(100);
constexpr size_t kDrainLimitBytes = 64 * 1024;

std::chrono::nanoseconds duration_of(Nanos ns) { return std::chrono::nanoseconds(ns); }

Result<tcp::endpoint> parse_endpoint(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return Status::InvalidArgument("HTTP address '" + address + "' is not host:port");
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port_text = address.substr(colon + 1);
  uint32_t port = 0;
  const auto [end, parse_error] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (parse_error != std::errc() || end != port_text.data() + port_text.size() || port > 65535 || port_text.empty()) {
    return Status::InvalidArgument("HTTP address '" + address + "': port '" + port_text + "' is not 0..65535");
  }
  error_code error;
  const asio::ip::address ip = asio::ip::make_address(host, error);
  if (error) {
    return Status::InvalidArgument("HTTP address '" + address + "': host '" + host + "' is not a numeric IP address");
  }
  return tcp::endpoint(ip, static_cast<uint16_t>(port));
}

std::string format_http_endpoint(const tcp::endpoint& endpoint) {
  const std::string host = endpoint.address().to_string();
  const std::string port = std::to_string(endpoint.port());
  return endpoint.address().is_v6() ? "[" + host + "]:" + port : host + ":" + port;
}

bool is_parse_error(const error_code& error) {
  return &error.category() == &bhttp::make_error_code(bhttp::error::bad_method).category();
}

class Session;

}  // namespace

struct AsioHttpServer::State {
  State(asio::io_context& io, HttpHandler handler, HttpServerLimits limits)
      : acceptor(io), retry_timer(io), handler(std::move(handler)), limits(limits) {}

  tcp::acceptor acceptor;
  asio::steady_timer retry_timer;
  HttpHandler handler;
  HttpServerLimits limits;
  HttpServerStats stats;
  std::string address;
  std::map<uint64_t, std::weak_ptr<Session>> sessions;  // open connections, by accept order
  uint64_t next_session_id = 1;
  bool stopped = false;
};

namespace {

using State = AsioHttpServer::State;

// One connection: read a request, answer it, repeat while keep-alive.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const std::shared_ptr<State>& state, uint64_t id)
      : stream_(std::move(socket)),
        buffer_(state->limits.header_limit_bytes + state->limits.body_limit_bytes + 1024),
        state_(state),
        limits_(state->limits),
        id_(id) {}
  ~Session() {
    if (std::shared_ptr<State> state = state_.lock()) state->sessions.erase(id_);
  }

  void read_next() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(limits_.header_limit_bytes));
    parser_->body_limit(limits_.body_limit_bytes);
    stream_.expires_after(duration_of(limits_.idle_timeout));
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = shared_from_this()](error_code error, size_t) { self->on_read(error); });
  }

  // Stops every operation; pending handlers then find the socket closed.
  void close() {
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

 private:
  void on_read(const error_code& error) {
    std::shared_ptr<State> state = state_.lock();
    if (!state || state->stopped) return close();
    if (error) return on_read_error(*state, error);
    const bhttp::request<bhttp::string_body>& request = parser_->get();
    const HttpRequest exchange{std::string(request.method_string()), std::string(request.target())};
    HttpResponse answer = call_handler(*state, exchange);
    ++state->stats.requests;
    respond(std::move(answer), request.version(), request.keep_alive(), request.method() == bhttp::verb::head);
  }

  void on_read_error(State& state, const error_code& error) {
    if (error == bhttp::error::end_of_stream) return close();  // the peer is done: a clean end
    if (error == beast::error::timeout) {
      ++state.stats.timeouts;
      return close();
    }
    if (error == bhttp::error::header_limit || error == bhttp::error::buffer_overflow) {
      return refuse(state, 431, "the request head is over " + std::to_string(limits_.header_limit_bytes) + " bytes");
    }
    if (error == bhttp::error::body_limit) {
      return refuse(state, 413, "the request body is over " + std::to_string(limits_.body_limit_bytes) + " bytes");
    }
    if (is_parse_error(error) && error != bhttp::error::partial_message) {
      return refuse(state, 400, "not an HTTP/1.x request: " + error.message());
    }
    close();  // reset, or the peer closed mid-request: nobody to answer
  }

  HttpResponse call_handler(State& state, const HttpRequest& request) {
    try {
      return state.handler(request);
    } catch (const std::exception& failure) {
      // A page failing must not take the broker down with it.
      MQ_LOG(kError, kAsioHttpServerLog, "HTTP " << request.method << " " << request.path() << " failed: " << failure.what());
      return error_response(500, "the page failed; the broker's log says why");
    }
  }

  void refuse(State& state, int status, const std::string& why) {
    ++state.stats.bad_requests;
    respond(error_response(status, why), 11, false, false);
  }

  void respond(HttpResponse answer, unsigned version, bool keep_alive, bool head) {
    MQ_ASSERT(answer.status >= 100 && answer.status <= 599);
    auto response = std::make_shared<bhttp::response<bhttp::string_body>>(
        static_cast<bhttp::status>(answer.status), version == 10 ? 10 : 11);
    response->set(bhttp::field::server, "mqlab");
    response->set(bhttp::field::content_type, answer.content_type);
    for (const auto& [name, value] : answer.headers) response->set(name, value);
    response->keep_alive(keep_alive);
    if (head) {
      response->content_length(answer.body.size());  // GET's length, no body
    } else {
      response->body() = std::move(answer.body);
      response->prepare_payload();
    }
    stream_.expires_after(duration_of(limits_.idle_timeout));
    bhttp::async_write(stream_, *response,
                       [self = shared_from_this(), response, keep_alive](error_code error, size_t) {
                         self->on_written(error, keep_alive);
                       });
  }

  void on_written(const error_code& error, bool keep_alive) {
    std::shared_ptr<State> state = state_.lock();
    if (!state || state->stopped) return close();
    if (error) {
      if (error == beast::error::timeout) ++state->stats.timeouts;
      return close();
    }
    if (keep_alive) return read_next();
    // Half-close, then drop what the peer still sends until it closes: closing
    // with unread input would reset the connection and could destroy the
    // answer before the peer read it.
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(duration_of(limits_.drain_timeout));
    drain();
  }

  void drain() {
    stream_.async_read_some(asio::buffer(drain_buffer_), [self = shared_from_this()](error_code error, size_t bytes) {
      self->drained_bytes_ += bytes;
      if (error || self->drained_bytes_ > kDrainLimitBytes) return self->close();
      self->drain();
    });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::weak_ptr<State> state_;
  const HttpServerLimits limits_;
  const uint64_t id_;
  std::array<char, 4096> drain_buffer_{};
  size_t drained_bytes_ = 0;
};

void accept_next(const std::shared_ptr<State>& state);

void on_accepted(const std::shared_ptr<State>& state, const error_code& error, tcp::socket socket) {
  if (error) {
    MQ_LOG(kWarn, kAsioHttpServerLog, "HTTP accept on " << state->address << " failed: " << error.message() << "; retrying");
    state->retry_timer.expires_after(kAcceptRetryDelay);
    state->retry_timer.async_wait([weak = std::weak_ptr<State>(state)](error_code timer_error) {
      std::shared_ptr<State> alive = weak.lock();
      if (!timer_error && alive && !alive->stopped) accept_next(alive);
    });
    return;
  }
  if (state->sessions.size() >= state->limits.max_connections) {
    ++state->stats.connections_refused;
    error_code ignored;
    socket.close(ignored);
  } else {
    ++state->stats.connections_accepted;
    const uint64_t id = state->next_session_id++;
    auto session = std::make_shared<Session>(std::move(socket), state, id);
    state->sessions.emplace(id, session);
    session->read_next();
  }
  accept_next(state);
}

void accept_next(const std::shared_ptr<State>& state) {
  state->acceptor.async_accept([weak = std::weak_ptr<State>(state)](error_code error, tcp::socket socket) {
    std::shared_ptr<State> alive = weak.lock();
    if (!alive || alive->stopped || error == asio::error::operation_aborted) return;
    on_accepted(alive, error, std::move(socket));
  });
}

Status open_http_acceptor(tcp::acceptor& acceptor, const tcp::endpoint& endpoint, const std::string& address) {
  error_code error;
  auto failed = [&](const char* step) {
    return Status::IoError("cannot listen for HTTP on " + address + ": " + step + ": " + error.message());
  };
  if (acceptor.open(endpoint.protocol(), error)) return failed("socket");
  if (acceptor.set_option(tcp::acceptor::reuse_address(true), error)) return failed("SO_REUSEADDR");
  if (acceptor.bind(endpoint, error)) return failed("bind");
  if (acceptor.listen(asio::socket_base::max_listen_connections, error)) return failed("listen");
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<AsioHttpServer>> AsioHttpServer::start(asio::io_context& io, const std::string& address,
                                                              HttpHandler handler, HttpServerLimits limits) {
  MQ_ASSERT(handler != nullptr);
  MQ_ASSERT(limits.max_connections > 0);
  MQ_ASSERT(limits.idle_timeout > 0 && limits.drain_timeout > 0);
  MQ_ASSIGN_OR_RETURN(tcp::endpoint endpoint, parse_endpoint(address));
  auto state = std::make_shared<State>(io, std::move(handler), limits);
  MQ_RETURN_IF_ERROR(open_http_acceptor(state->acceptor, endpoint, address));
  error_code error;
  const tcp::endpoint bound = state->acceptor.local_endpoint(error);
  if (error) return Status::IoError("HTTP listener on " + address + ": " + error.message());
  state->address = format_http_endpoint(bound);
  accept_next(state);
  return std::unique_ptr<AsioHttpServer>(new AsioHttpServer(std::move(state)));
}

AsioHttpServer::AsioHttpServer(std::shared_ptr<State> state) : state_(std::move(state)) { MQ_ASSERT(state_); }

AsioHttpServer::~AsioHttpServer() {
  state_->stopped = true;
  error_code ignored;
  state_->acceptor.close(ignored);
  state_->retry_timer.cancel();
  // Copy first: a session's destructor erases itself from the map.
  std::vector<std::shared_ptr<Session>> open;
  for (const auto& [id, weak] : state_->sessions) {
    if (std::shared_ptr<Session> session = weak.lock()) open.push_back(std::move(session));
  }
  for (const std::shared_ptr<Session>& session : open) session->close();
  open.clear();
  state_->sessions.clear();
}

const std::string& AsioHttpServer::address() const { return state_->address; }
const HttpServerStats& AsioHttpServer::stats() const { return state_->stats; }
size_t AsioHttpServer::open_connections() const { return state_->sessions.size(); }

}  // namespace mqlab::http
