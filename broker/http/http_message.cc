#include "broker/http/http_message.h"

#include "broker/common/assert.h"

namespace mqlab::http {

std::string_view HttpRequest::path() const {
  const std::string_view target_view = target;
  return target_view.substr(0, target_view.find_first_of("?#"));
}

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
  }
  return "";
}

HttpResponse error_response(int status, std::string_view detail) {
  MQ_ASSERT(status >= 400 && status <= 599);
  HttpResponse response;
  response.status = status;
  response.content_type = std::string(kContentTypeText);
  response.body = std::to_string(status) + " " + std::string(reason_phrase(status)) + "\n";
  if (!detail.empty()) response.body += std::string(detail) + "\n";
  return response;
}

HttpResponse dispatch_route(const std::vector<Route>& routes, const HttpRequest& request) {
  if (request.method != "GET" && request.method != "HEAD") {
    HttpResponse refused = error_response(405, "only GET and HEAD: these pages are read-only");
    refused.headers.emplace_back("Allow", "GET, HEAD");
    return refused;
  }
  const std::string_view path = request.path();
  for (const Route& route : routes) {
    if (route.path != path) continue;
    HttpResponse response = route.respond();
    MQ_ASSERT(response.status >= 100 && response.status <= 599);
    // Every page is a live view: a cached copy would show a stale broker.
    response.headers.emplace_back("Cache-Control", "no-store");
    return response;
  }
  std::string known;
  for (const Route& route : routes) known += (known.empty() ? "" : ", ") + route.path;
  return error_response(404, "no page at this path; try " + known);
}

}  // namespace mqlab::http
