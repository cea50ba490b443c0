// Host addresses the broker writes into records: the BORNHOST of a sent
// message, taken from the address its connection comes from, and the
// STOREHOST, taken from brokerIP1:listenPort.
//
// Why BORNHOST is not copied blindly: ali-ons always reads BORNHOST and
// STOREHOST as 4 address bytes + a port, ignoring the sysflag's IPv6 bits
// (rocketmq-reference.md 1.7). A Java broker stores a client that connected
// over ::1 as an IPv6 BORNHOST, and ali-ons then decodes the whole pulled
// batch as one garbage message. So the loopback ::1 and IPv4-mapped addresses
// (::ffff:a.b.c.d) become the IPv4 addresses they stand for. Other IPv6
// addresses stay IPv6, as a Java broker stores them. A connection whose
// remote address is not an IP literal (a name, as a test network may give)
// is stored as 0.0.0.0:0: the record must still encode.
#pragma once

#include <cstdint>
#include <string_view>

#include "broker/common/status.h"
#include "broker/store/message_codec.h"

namespace mqlab::broker {

// Whether text is an IPv4 dotted quad or an IPv6 literal (without brackets).
bool is_ip_literal(std::string_view text);

// The address of an IP literal and a port. InvalidArgument when ip is not an
// IP literal or the port is outside 0..65535. IPv6 loopback and IPv4-mapped
// addresses come back as IPv4 (see above).
Result<store::HostAddress> host_address_of(std::string_view ip, int32_t port);

// BORNHOST for a connection's remote address ("10.0.0.9:53412",
// "[::1]:53412"); 0.0.0.0:0 when it is not an IP literal with a port.
store::HostAddress born_host_of(std::string_view remote_address);

}  // namespace mqlab::broker
