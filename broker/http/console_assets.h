// What the broker's and the NameServer's console pages share: the style
// sheet, a few JavaScript helpers (element building with textContent only,
// number and byte formatting, the 2 s refresh loop with an error banner),
// and the document frame that inlines them. No external asset: the pages
// must work on a machine with no internet and no set-up.
#pragma once

#include <string>
#include <string_view>

namespace mqlab::http {

// A whole HTML document: title, the shared style and helpers, then body
// (static markup) and script (the page's own code, run after the helpers).
std::string console_document(std::string_view title, std::string_view body, std::string_view script);

}  // namespace mqlab::http
