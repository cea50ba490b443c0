#include "broker/processor/host_address.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <string>

#include "broker/env/network.h"

namespace mqlab::broker {
namespace {

// inet_pton is a pure parse (no I/O, no locale): the one libc call used here.
bool parse_ipv4(std::string_view text, std::array<uint8_t, 4>* out) {
  const std::string copy(text);
  return inet_pton(AF_INET, copy.c_str(), out->data()) == 1;
}

bool parse_ipv6(std::string_view text, std::array<uint8_t, 16>* out) {
  const std::string copy(text);
  return inet_pton(AF_INET6, copy.c_str(), out->data()) == 1;
}

bool is_ipv6_loopback(const std::array<uint8_t, 16>& ip) {
  return std::all_of(ip.begin(), ip.end() - 1, [](uint8_t b) { return b == 0; }) && ip[15] == 1;
}

bool is_ipv4_mapped(const std::array<uint8_t, 16>& ip) {
  return std::all_of(ip.begin(), ip.begin() + 10, [](uint8_t b) { return b == 0; }) && ip[10] == 0xFF && ip[11] == 0xFF;
}

}  // namespace

bool is_ip_literal(std::string_view text) {
  std::array<uint8_t, 4> v4{};
  std::array<uint8_t, 16> v6{};
  return parse_ipv4(text, &v4) || parse_ipv6(text, &v6);
}

Result<store::HostAddress> host_address_of(std::string_view ip, int32_t port) {
  if (port < 0 || port > 65535) {
    return Status::InvalidArgument("port " + std::to_string(port) + " is outside 0..65535");
  }
  std::array<uint8_t, 4> v4{};
  if (parse_ipv4(ip, &v4)) return store::HostAddress::ipv4(v4[0], v4[1], v4[2], v4[3], port);
  std::array<uint8_t, 16> v6{};
  if (!parse_ipv6(ip, &v6)) return Status::InvalidArgument("'" + std::string(ip) + "' is not an IP address");
  if (is_ipv6_loopback(v6)) return store::HostAddress::ipv4(127, 0, 0, 1, port);
  if (is_ipv4_mapped(v6)) return store::HostAddress::ipv4(v6[12], v6[13], v6[14], v6[15], port);
  store::HostAddress host;
  host.ip = v6;
  host.ipv6 = true;
  host.port = port;
  return host;
}

store::HostAddress born_host_of(std::string_view remote_address) {
  Result<env::HostPort> parsed = env::parse_address(remote_address);
  if (!parsed.ok()) return store::HostAddress::ipv4(0, 0, 0, 0, 0);
  Result<store::HostAddress> host = host_address_of(parsed->host, parsed->port);
  if (!host.ok()) return store::HostAddress::ipv4(0, 0, 0, 0, 0);
  MQ_ASSERT(host->port == parsed->port);
  return *host;
}

}  // namespace mqlab::broker
