// printable_excerpt: untrusted text (a peer's header value, a topic or group
// name from a request or a file) as it may appear in a log line, an error
// message or a remark: printable ASCII kept; other bytes, the backslash and
// both quotes (messages quote names with them) as \xNN; cut after
// max_chars with "...". A hostile value can then neither garble a log line
// nor make a message huge.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mqlab {

std::string printable_excerpt(std::string_view text, size_t max_chars = 64);

}  // namespace mqlab
