// ExtFields: a RemotingCommand's custom header, the flat string -> string map
// of its extFields (SEND_MESSAGE_V2's "a".."n", PULL_MESSAGE's "topic",
// "queueId", ...): a FlatStringMap, sorted by name, so a command encodes to
// one byte string.
#pragma once

#include "broker/common/flat_string_map.h"

namespace mqlab::remoting {

using ExtFields = FlatStringMap;

}  // namespace mqlab::remoting
