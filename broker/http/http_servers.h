// The entry points mqbroker and mqnamesrv call: their pages
// (http_routes.h) served by an AsioHttpServer on the real Env's
// io_context, the same single thread the broker or NameServer runs on.
//
//   mqbroker:  start_broker_http(env.io_context(), brokerIP1:httpPort, controller)
//   mqnamesrv: start_namesrv_http(env.io_context(), 0.0.0.0:httpPort, controller)
//
// The returned server must be destroyed before the controller it reads
// (and before the io_context); destroying it closes every connection.
#pragma once

#include <memory>
#include <string>

#include "broker/common/status.h"
#include "broker/env/asio.h"
#include "broker/http/asio_http_server.h"

namespace mqlab::broker {
class BrokerController;
}
namespace mqlab::namesrv {
class NamesrvController;
}

namespace mqlab::http {

Result<std::unique_ptr<AsioHttpServer>> start_broker_http(boost::asio::io_context& io, const std::string& address,
                                                          broker::BrokerController& controller);
Result<std::unique_ptr<AsioHttpServer>> start_namesrv_http(boost::asio::io_context& io, const std::string& address,
                                                           const namesrv::NamesrvController& controller);

}  // namespace mqlab::http
