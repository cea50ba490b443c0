#include "broker/admin_cli/text_format.h"

#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <vector>

#include "broker/common/assert.h"

namespace mqlab::admin_cli {
namespace {

// Length of the UTF-8 sequence starting at bytes[i] when it is valid and
// encodes a printable character, else 0.
size_t utf8_sequence_length(std::span<const uint8_t> bytes, size_t i) {
  const uint8_t lead = bytes[i];
  size_t length = 0;
  if (lead >= 0xC2 && lead <= 0xDF) length = 2;
  else if (lead >= 0xE0 && lead <= 0xEF) length = 3;
  else if (lead >= 0xF0 && lead <= 0xF4) length = 4;
  if (length == 0 || i + length > bytes.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((bytes[i + k] & 0xC0) != 0x80) return 0;
  }
  return length;
}

}  // namespace

std::string strprintf(const char* format, ...) {
  MQ_ASSERT(format != nullptr);
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  const int needed = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  MQ_ASSERT(needed >= 0);  // only an encoding error makes vsnprintf fail
  std::string out(static_cast<size_t>(needed) + 1, '\0');
  std::vsnprintf(out.data(), out.size(), format, args);
  va_end(args);
  out.resize(static_cast<size_t>(needed));
  return out;
}

std::string human_time_ms(int64_t epoch_ms) {
  const std::time_t seconds = static_cast<std::time_t>(epoch_ms / 1000);
  const int64_t millis = epoch_ms % 1000;
  std::tm local{};
  if (epoch_ms < 0 || localtime_r(&seconds, &local) == nullptr) return std::to_string(epoch_ms);
  char text[32];
  const size_t length = std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &local);
  MQ_ASSERT(length > 0);
  return std::string(text, length) + strprintf(",%03d", static_cast<int>(millis));
}

std::string printable_body(std::span<const uint8_t> body) {
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size();) {
    const uint8_t byte = body[i];
    if (byte >= 0x20 && byte < 0x7F) {
      out += static_cast<char>(byte);
      ++i;
      continue;
    }
    if (const size_t length = utf8_sequence_length(body, i); length > 0) {
      out.append(reinterpret_cast<const char*>(&body[i]), length);
      i += length;
      continue;
    }
    out += strprintf("\\x%02X", byte);
    ++i;
  }
  return out;
}

std::vector<std::string> split_namesrv_addresses(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const size_t semicolon = text.find(';');
    std::string_view item = text.substr(0, semicolon);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    if (semicolon == std::string_view::npos) break;
    text.remove_prefix(semicolon + 1);
  }
  return out;
}

}  // namespace mqlab::admin_cli
