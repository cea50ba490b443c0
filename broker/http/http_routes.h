// The pages each process serves, as route tables over its live state
// (env-neutral: tests call them without a socket, on the simulated Env).
//
//   broker:   /             console page (broker_console_page.h)
//             /api/status   BrokerSnapshot as JSON (broker_status_json.h)
//             /metrics      Prometheus text (broker_metrics.h)
//   namesrv:  /             cluster page (namesrv_console_page.h)
//             /api/cluster  NamesrvStatus as JSON (namesrv_status_json.h)
//             /metrics      Prometheus text
// Each answer is computed when asked, from one snapshot taken then.
#pragma once

#include "broker/http/http_message.h"

namespace mqlab::broker {
class BrokerController;
}
namespace mqlab::namesrv {
class NamesrvController;
}

namespace mqlab::http {

// Requires: controller outlives the handler; calls on its executor.
HttpHandler broker_http_handler(broker::BrokerController& controller);
HttpHandler namesrv_http_handler(const namesrv::NamesrvController& controller);

}  // namespace mqlab::http
