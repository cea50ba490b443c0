// The NameServer's cluster page (GET /): one self-contained HTML document
// that fetches /api/cluster every 2 s and lists clusters, brokers (address,
// role, HA address, last heartbeat, a link to each broker's own console)
// and topics with the brokers serving them. Names reach the page as text
// (textContent), never as HTML.
#pragma once

#include <string_view>

namespace mqlab::http {

std::string_view namesrv_console_html();

}  // namespace mqlab::http
