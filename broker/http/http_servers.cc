#include "broker/http/http_servers.h"

#include "broker/common/log.h"
#include "broker/http/http_routes.h"

namespace mqlab::http {
namespace {

constexpr const char* kHttpServersLog = "http";

Result<std::unique_ptr<AsioHttpServer>> start_logged(boost::asio::io_context& io, const std::string& address,
                                                     HttpHandler handler, const char* what) {
  Result<std::unique_ptr<AsioHttpServer>> server =
      AsioHttpServer::start(io, address, std::move(handler));
  if (!server.ok()) return server.status().with_context(std::string(what) + " console");
  MQ_LOG(kInfo, kHttpServersLog,
         what << " console on http://" << (*server)->address() << "/ (metrics: /metrics, JSON: "
              << (std::string(what) == "broker" ? "/api/status" : "/api/cluster") << ")");
  return server;
}

}  // namespace

Result<std::unique_ptr<AsioHttpServer>> start_broker_http(boost::asio::io_context& io, const std::string& address,
                                                          broker::BrokerController& controller) {
  return start_logged(io, address, broker_http_handler(controller), "broker");
}

Result<std::unique_ptr<AsioHttpServer>> start_namesrv_http(boost::asio::io_context& io, const std::string& address,
                                                           const namesrv::NamesrvController& controller) {
  return start_logged(io, address, namesrv_http_handler(controller), "NameServer");
}

}  // namespace mqlab::http
