// HttpRequest / HttpResponse: what the observability pages see of HTTP,
// with no transport attached. The real server (asio_http_server.h) parses
// the wire into an HttpRequest, calls an HttpHandler on the broker's one
// thread and writes the HttpResponse back; tests call handlers directly.
//
// Handlers answer only GET and HEAD (the pages are read-only): anything else
// is 405 with an Allow header, an unknown path 404.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mqlab::http {

inline constexpr std::string_view kContentTypeHtml = "text/html; charset=utf-8";
inline constexpr std::string_view kContentTypeJson = "application/json";
inline constexpr std::string_view kContentTypeText = "text/plain; charset=utf-8";
// The Prometheus text exposition format, version 0.0.4.
inline constexpr std::string_view kContentTypePrometheus = "text/plain; version=0.0.4; charset=utf-8";

struct HttpRequest {
  std::string method;  // "GET", as sent
  std::string target;  // "/metrics?x=1": path and query, as sent

  // The target up to '?' or '#'.
  std::string_view path() const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = std::string(kContentTypeText);
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // beyond Content-Type and Content-Length
};

// Runs on the broker's executor; must not block.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

// The plain-text answer for a status code: "404 Not Found\n<detail>\n".
HttpResponse error_response(int status, std::string_view detail);
// "Not Found" for 404; "" for a code it does not know.
std::string_view reason_phrase(int status);

// A route table: the common checks (method, unknown path) in one place.
// Routes are exact paths; the query string is ignored.
struct Route {
  std::string path;
  std::function<HttpResponse()> respond;
};
HttpResponse dispatch_route(const std::vector<Route>& routes, const HttpRequest& request);

}  // namespace mqlab::http
