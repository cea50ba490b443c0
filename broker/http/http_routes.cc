#include "broker/http/http_routes.h"

#include <string>
#include <utility>
#include <vector>

#include "broker/http/broker_console_page.h"
#include "broker/http/broker_metrics.h"
#include "broker/http/broker_snapshot.h"
#include "broker/http/broker_status_json.h"
#include "broker/http/namesrv_console_page.h"
#include "broker/http/namesrv_status_json.h"
#include "broker/namesrv/namesrv_controller.h"
#include "broker/processor/broker_controller.h"

namespace mqlab::http {
namespace {

HttpResponse ok(std::string_view content_type, std::string body) {
  HttpResponse response;
  response.content_type = std::string(content_type);
  response.body = std::move(body);
  return response;
}

}  // namespace

HttpHandler broker_http_handler(broker::BrokerController& controller) {
  std::vector<Route> routes{
      {"/", [] { return ok(kContentTypeHtml, std::string(broker_console_html())); }},
      {"/api/status",
       [&controller] {
         return ok(kContentTypeJson, dump_json_lenient(broker_status_json(collect_broker_snapshot(controller))));
       }},
      {"/metrics",
       [&controller] {
         return ok(kContentTypePrometheus, render_broker_metrics(collect_broker_snapshot(controller)));
       }},
  };
  return [routes = std::move(routes)](const HttpRequest& request) { return dispatch_route(routes, request); };
}

HttpHandler namesrv_http_handler(const namesrv::NamesrvController& controller) {
  std::vector<Route> routes{
      {"/", [] { return ok(kContentTypeHtml, std::string(namesrv_console_html())); }},
      {"/api/cluster",
       [&controller] { return ok(kContentTypeJson, dump_json_lenient(namesrv_status_json(controller.status()))); }},
      {"/metrics", [&controller] { return ok(kContentTypePrometheus, render_namesrv_metrics(controller.status())); }},
  };
  return [routes = std::move(routes)](const HttpRequest& request) { return dispatch_route(routes, request); };
}

}  // namespace mqlab::http
