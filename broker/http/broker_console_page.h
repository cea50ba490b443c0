// The broker's console page (GET /): one self-contained HTML document (its
// CSS and JavaScript inline, no external asset, nothing to configure) that
// fetches /api/status every 2 s and shows role, replication, flush status,
// CommitLog offsets, put/get rates and latencies of the last interval,
// topics, queues and consumer lag.
//
// Everything a client named (topics, groups, addresses) is put on the page
// with textContent, never as HTML, so a hostile topic name stays text.
#pragma once

#include <string_view>

namespace mqlab::http {

std::string_view broker_console_html();

}  // namespace mqlab::http
