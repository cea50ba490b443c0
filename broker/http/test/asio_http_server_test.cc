// AsioHttpServer over real TCP on 127.0.0.1, on a PosixEnv's io_context:
// the broker's and NameServer's pages through start_*_http, keep-alive and
// pipelining, HEAD, and hostile input (garbage, oversized head and body,
// idle and excess connections, a throwing handler) after which the server
// still serves. A blocking client runs on a helper thread while the test
// thread runs the io_context; no assertion depends on timing.
#include "broker/http/asio_http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "broker/env/posix_env.h"
#include "broker/http/http_routes.h"
#include "broker/http/http_servers.h"
#include "broker/namesrv/namesrv_controller.h"
#include "broker/processor/broker_controller.h"

namespace mqlab::http::asio_http_server_test {
namespace {

// std::string::contains is C++23.
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

using std::chrono::milliseconds;

constexpr milliseconds kLimit(20'000);  // generous: a loaded CI machine

// --- a blocking HTTP client for the helper thread ----------------------------

struct Reply {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

class Client {
 public:
  explicit Client(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval timeout{10, 0};  // a bound on a broken test, not a timing assertion
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~Client() { ::close(fd_); }

  bool connected() const { return connected_; }
  void send(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;  // the server may close on us: what follows shows it
      sent += static_cast<size_t>(n);
    }
  }
  // One response (head and Content-Length body); nullopt when the
  // connection ends first.
  std::optional<Reply> read_reply(bool head_request = false) {
    size_t head_end;
    while ((head_end = pending_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) return std::nullopt;
    }
    Reply reply;
    const std::string head = pending_.substr(0, head_end);
    pending_.erase(0, head_end + 4);
    size_t line_end = head.find("\r\n");
    const std::string status_line = head.substr(0, line_end);
    if (!status_line.starts_with("HTTP/1.")) return std::nullopt;
    reply.status = std::stoi(status_line.substr(9, 3));
    while (line_end != std::string::npos) {
      const size_t next = head.find("\r\n", line_end + 2);
      const size_t line_length = next == std::string::npos ? std::string::npos : next - line_end - 2;
      const std::string line = head.substr(line_end + 2, line_length);
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
        reply.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
      }
      line_end = next;
    }
    const size_t length = head_request || !reply.headers.contains("content-length")
                              ? 0
                              : std::stoul(reply.headers.at("content-length"));
    while (pending_.size() < length) {
      if (!fill()) return std::nullopt;
    }
    reply.body = pending_.substr(0, length);
    pending_.erase(0, length);
    return reply;
  }
  // Whether the server closes the connection (EOF or reset) before 10 s;
  // whatever arrives first is kept in pending().
  bool closed_by_server() {
    while (fill()) {
    }
    return eof_;
  }
  const std::string& pending() const { return pending_; }

 private:
  bool fill() {
    char buffer[16384];
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
    if (n > 0) {
      pending_.append(buffer, static_cast<size_t>(n));
      return true;
    }
    eof_ = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);  // EAGAIN: SO_RCVTIMEO ran out
    return false;
  }

  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  std::string pending_;
};

std::string get(const std::string& target, const std::string& extra_headers = "") {
  return "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra_headers + "\r\n";
}

uint16_t port_of(const AsioHttpServer& server) {
  const std::string& address = server.address();
  return static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
}

class AsioHttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/mqlab_http_test_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  // Sets flag from the client thread and wakes the io thread, which may be
  // blocked waiting for I/O that will not come (post() is thread-safe).
  void signal(std::atomic<bool>& flag) {
    flag = true;
    env_.executor().post([] {});
  }

  // Runs client on a helper thread while this thread runs the io_context.
  void run_client(const std::function<void()>& client) {
    std::atomic<bool> done{false};
    std::thread thread([&] {
      client();
      signal(done);
    });
    const bool finished = env_.run_until([&] { return done.load(); }, kLimit);
    thread.join();
    EXPECT_TRUE(finished);
  }

  // A broker that was configured but never started: its pages show an
  // empty store, which is all a transport test needs.
  broker::BrokerController& broker() {
    if (!broker_) {
      store::MessageStoreConfig store_config;
      store_config.storePathRootDir = dir_;
      broker_ = std::make_unique<broker::BrokerController>(env_, broker::BrokerConfig{}, store_config);
    }
    return *broker_;
  }
  std::unique_ptr<AsioHttpServer> start_broker_pages() {
    Result<std::unique_ptr<AsioHttpServer>> server = start_broker_http(env_.io_context(), "127.0.0.1:0", broker());
    EXPECT_TRUE(server.ok()) << server.status().to_string();
    return server.ok() ? std::move(*server) : nullptr;
  }
  std::unique_ptr<AsioHttpServer> start_with(HttpHandler handler, HttpServerLimits limits) {
    Result<std::unique_ptr<AsioHttpServer>> server =
        AsioHttpServer::start(env_.io_context(), "127.0.0.1:0", std::move(handler), limits);
    EXPECT_TRUE(server.ok()) << server.status().to_string();
    return server.ok() ? std::move(*server) : nullptr;
  }
  // The server still answers a plain GET on a fresh connection.
  void expect_still_serving(AsioHttpServer& server, const std::string& target = "/metrics") {
    std::optional<Reply> reply;
    run_client([&] {
      Client client(port_of(server));
      client.send(get(target, "Connection: close\r\n"));
      reply = client.read_reply();
    });
    ASSERT_TRUE(reply.has_value());
    EXPECT_EQ(reply->status, 200);
  }

  std::string dir_;
  env::PosixEnv env_;
  std::unique_ptr<broker::BrokerController> broker_;
};

TEST_F(AsioHttpServerTest, ServesMetricsConsoleAndStatusAndAnswers404) {
  std::unique_ptr<AsioHttpServer> server = start_broker_pages();
  ASSERT_TRUE(server);
  EXPECT_TRUE(server->address().starts_with("127.0.0.1:"));
  EXPECT_NE(port_of(*server), 0);
  std::optional<Reply> metrics, page, status, missing;
  run_client([&] {
    Client client(port_of(*server));  // one keep-alive connection for all four
    client.send(get("/metrics"));
    metrics = client.read_reply();
    client.send(get("/"));
    page = client.read_reply();
    client.send(get("/api/status"));
    status = client.read_reply();
    client.send(get("/nope"));
    missing = client.read_reply();
  });
  ASSERT_TRUE(metrics && page && status && missing);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_TRUE(has(metrics->body, "# TYPE mqlab_put_latency_seconds histogram\n"));
  EXPECT_TRUE(has(metrics->body, "mqlab_broker_info{cluster=\"DefaultCluster\",broker=\"broker-a\""));
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->headers["content-type"], "text/html; charset=utf-8");
  EXPECT_TRUE(page->body.starts_with("<!DOCTYPE html>"));
  EXPECT_EQ(status->status, 200);
  EXPECT_EQ(status->headers["content-type"], "application/json");
  EXPECT_EQ(nlohmann::json::parse(status->body).at("broker").at("broker_name"), "broker-a");
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(server->stats().connections_accepted, 1u);
  EXPECT_EQ(server->stats().requests, 4u);
}

TEST_F(AsioHttpServerTest, PipelinedRequestsAndHeadAreAnsweredInOrder) {
  std::unique_ptr<AsioHttpServer> server = start_broker_pages();
  ASSERT_TRUE(server);
  std::optional<Reply> head, metrics, close;
  bool closed = false;
  run_client([&] {
    Client client(port_of(*server));
    client.send("HEAD / HTTP/1.1\r\nHost: x\r\n\r\n" + get("/metrics") + get("/nope", "Connection: close\r\n"));
    head = client.read_reply(/*head_request=*/true);
    metrics = client.read_reply();
    close = client.read_reply();
    closed = client.closed_by_server();
  });
  ASSERT_TRUE(head && metrics && close);
  EXPECT_EQ(head->status, 200);
  EXPECT_GT(std::stoul(head->headers.at("content-length")), 1000u);  // GET's length, no body sent
  EXPECT_EQ(head->body, "");
  EXPECT_EQ(metrics->status, 200);
  EXPECT_TRUE(metrics->body.starts_with("# HELP mqlab_broker_info "));
  EXPECT_EQ(close->status, 404);
  EXPECT_TRUE(closed);  // Connection: close was honoured
}

TEST_F(AsioHttpServerTest, GarbageGets400AndTheServerKeepsServing) {
  // A short idle timeout: garbage the parser waits on ends in a close too.
  HttpServerLimits limits;
  limits.idle_timeout = millis(500);
  std::unique_ptr<AsioHttpServer> server = start_with(broker_http_handler(broker()), limits);
  ASSERT_TRUE(server);
  static constexpr char kTlsHello[] = "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 tls hello\r\n\r\n";
  for (const std::string& garbage : {std::string(kTlsHello, sizeof kTlsHello - 1),
                                     std::string("GET /metrics HTTP/9.9 nonsense\r\n\r\n"),
                                     std::string("\r\n\r\n\r\n"), std::string("GET / HTTP/1.1\r\nBad Header\r\n\r\n"),
                                     std::string("\0\0\0\x20\0\0\0\x10{\"code\":105}", 20)}) {
    std::optional<Reply> reply;
    bool closed = false;
    run_client([&] {
      Client client(port_of(*server));
      client.send(garbage);
      reply = client.read_reply();
      closed = client.closed_by_server();
    });
    // Either a 400 or, if the peer's bytes never made a request line, a close.
    if (reply.has_value()) {
      EXPECT_EQ(reply->status, 400) << garbage;
    }
    EXPECT_TRUE(closed) << garbage;
  }
  EXPECT_GE(server->stats().bad_requests, 3u);
  expect_still_serving(*server);
}

TEST_F(AsioHttpServerTest, OversizedHeadGets431AndOversizedBody413) {
  std::unique_ptr<AsioHttpServer> server = start_broker_pages();
  ASSERT_TRUE(server);
  std::optional<Reply> big_head, big_body;
  bool head_closed = false, body_closed = false;
  run_client([&] {
    Client head_client(port_of(*server));
    head_client.send("GET / HTTP/1.1\r\nHost: x\r\nX-Filler: " + std::string(64 * 1024, 'a') + "\r\n\r\n");
    big_head = head_client.read_reply();
    head_closed = head_client.closed_by_server();
    Client body_client(port_of(*server));
    body_client.send("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n" + std::string(32 * 1024, 'b'));
    big_body = body_client.read_reply();
    body_closed = body_client.closed_by_server();
  });
  ASSERT_TRUE(big_head && big_body);
  EXPECT_EQ(big_head->status, 431);
  EXPECT_EQ(big_body->status, 413);
  EXPECT_TRUE(head_closed);
  EXPECT_TRUE(body_closed);
  expect_still_serving(*server);
}

TEST_F(AsioHttpServerTest, IdleAndExcessConnectionsAreClosed) {
  HttpServerLimits limits;
  limits.idle_timeout = millis(200);
  limits.max_connections = 1;
  std::unique_ptr<AsioHttpServer> server =
      start_with([](const HttpRequest&) { return HttpResponse{200, "text/plain", "ok"}; }, limits);
  ASSERT_TRUE(server);
  bool idle_closed = false, excess_closed = false;
  std::string excess_bytes;
  run_client([&] {
    Client idle(port_of(*server));
    idle.send("GET / HTTP/1.1\r\n");  // half a request, then silence
    Client excess(port_of(*server));  // over max_connections while idle is open
    excess_closed = excess.closed_by_server();
    excess_bytes = excess.pending();
    idle_closed = idle.closed_by_server();
  });
  EXPECT_TRUE(excess_closed);
  EXPECT_EQ(excess_bytes, "");
  EXPECT_TRUE(idle_closed);
  // The client saw the close; the server's bookkeeping runs in the handler after.
  env_.run_until([&] { return server->open_connections() == 0; }, kLimit);
  EXPECT_EQ(server->stats().connections_refused, 1u);
  EXPECT_EQ(server->stats().timeouts, 1u);
  EXPECT_EQ(server->open_connections(), 0u);
  expect_still_serving(*server, "/");
}

TEST_F(AsioHttpServerTest, AThrowingHandlerIsA500NotACrash) {
  int calls = 0;
  std::unique_ptr<AsioHttpServer> server = start_with(
      [&](const HttpRequest& request) -> HttpResponse {
        ++calls;
        if (request.path() == "/boom") throw std::runtime_error("page failed");
        return HttpResponse{200, "text/plain", "fine"};
      },
      HttpServerLimits{});
  ASSERT_TRUE(server);
  std::optional<Reply> boom, fine;
  run_client([&] {
    Client client(port_of(*server));
    client.send(get("/boom"));
    boom = client.read_reply();
    client.send(get("/"));
    fine = client.read_reply();
  });
  ASSERT_TRUE(boom && fine);
  EXPECT_EQ(boom->status, 500);
  EXPECT_EQ(fine->status, 200);
  EXPECT_EQ(fine->body, "fine");
  EXPECT_EQ(calls, 2);
}

TEST_F(AsioHttpServerTest, DestroyingTheServerClosesConnectionsAndCallsNothingAfter) {
  int calls = 0;
  std::unique_ptr<AsioHttpServer> server = start_with(
      [&](const HttpRequest&) {
        ++calls;
        return HttpResponse{200, "text/plain", "ok"};
      },
      HttpServerLimits{});
  ASSERT_TRUE(server);
  const uint16_t port = port_of(*server);
  std::atomic<bool> connected{false};
  bool closed = false;
  std::thread client_thread([&] {
    Client client(port);
    client.send(get("/"));
    if (client.read_reply()) signal(connected);
    closed = client.closed_by_server();  // the server goes away below
  });
  EXPECT_TRUE(env_.run_until([&] { return connected.load(); }, kLimit));
  EXPECT_EQ(server->open_connections(), 1u);
  server.reset();
  env_.run_for(milliseconds(50));  // let the closes go out; nothing must call the handler
  client_thread.join();
  EXPECT_TRUE(closed);
  EXPECT_EQ(calls, 1);
  bool refused = false;
  std::thread late([&] { refused = !Client(port).connected(); });
  late.join();
  EXPECT_TRUE(refused);  // the listener is gone
}

TEST_F(AsioHttpServerTest, BadAddressesAreErrorsNamingTheAddress) {
  HttpHandler handler = [](const HttpRequest&) { return HttpResponse{}; };
  for (const char* address : {"localhost:80", "127.0.0.1", "127.0.0.1:99999", "127.0.0.1:x"}) {
    Result<std::unique_ptr<AsioHttpServer>> server = AsioHttpServer::start(env_.io_context(), address, handler);
    ASSERT_FALSE(server.ok()) << address;
    EXPECT_EQ(server.status().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(has(server.status().message(), address)) << server.status().message();
  }
  std::unique_ptr<AsioHttpServer> first = start_with(handler, HttpServerLimits{});
  ASSERT_TRUE(first);
  Result<std::unique_ptr<AsioHttpServer>> taken = AsioHttpServer::start(env_.io_context(), first->address(), handler);
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.status().code(), StatusCode::kIoError);
}

TEST_F(AsioHttpServerTest, NamesrvPagesAreServed) {
  namesrv::NamesrvConfig config;
  config.listenAddress = "127.0.0.1:0";
  namesrv::NamesrvController controller(env_, config);
  Result<std::unique_ptr<AsioHttpServer>> server = start_namesrv_http(env_.io_context(), "127.0.0.1:0", controller);
  ASSERT_TRUE(server.ok()) << server.status().to_string();
  std::optional<Reply> page, cluster;
  run_client([&] {
    Client client(port_of(**server));
    client.send(get("/"));
    page = client.read_reply();
    client.send(get("/api/cluster"));
    cluster = client.read_reply();
  });
  ASSERT_TRUE(page && cluster);
  EXPECT_EQ(page->status, 200);
  EXPECT_TRUE(has(page->body, "mqlab NameServer"));
  EXPECT_EQ(cluster->status, 200);
  EXPECT_TRUE(nlohmann::json::parse(cluster->body).at("brokers").empty());
}

}  // namespace
}  // namespace mqlab::http::asio_http_server_test
