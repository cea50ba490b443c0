// RemotingClient: sends RocketMQ remoting requests to servers by address and
// matches responses by opaque (RocketMQ's NettyRemotingClient), over the
// Env's network seam. Producers, consumers, the broker (registering with
// NameServers) and mqadmin use it.
//
// One connection per address, opened on first use and reused while open. A
// request whose response does not arrive within its timeout completes with
// Timeout and, as RocketMQ clients do, closes that connection (the next call
// reconnects). When a connection breaks, every request waiting on it
// completes with Unavailable. Oneway requests complete when written.
//
// Invariants: each invoke's callback runs exactly once, on the executor,
// never inside invoke(); opaques are unique per client and never 0.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "broker/common/assert.h"
#include "broker/common/byte_buffer_pool.h"
#include "broker/common/inline_function.h"
#include "broker/common/lifetime.h"
#include "broker/common/name_order.h"
#include "broker/common/remembered_entries.h"
#include "broker/common/status.h"
#include "broker/env/env.h"
#include "broker/remoting/frame_codec.h"
#include "broker/remoting/remoting_command.h"

namespace mqlab::remoting {

// Hears a request's one response (or why none came). Move-only: a request
// has one owner of its answer, and the hot callers' captures (a lifetime
// guard, a `this`, a shared context) stay inline, where std::function
// allocated one per request.
using ResponseCallback = InlineFunction<void(Result<RemotingCommand> response)>;

struct RemotingClientOptions {
  Nanos connect_timeout = millis(3000);
  size_t max_frame_bytes = kDefaultMaxFrameBytes;
  // When set, every request goes out with this header type, as a Java client
  // started with -Drocketmq.serialize.type=ROCKETMQ sends (a process-wide
  // setting there, RemotingCommand.serializeTypeConfigInThisServer); servers
  // answer in kind. Unset: each request's own serialize_type.
  std::optional<SerializeType> serialize_type;
};

class RemotingClient {
 public:
  explicit RemotingClient(env::Env& env, RemotingClientOptions options = {});
  ~RemotingClient();

  // Sends request to address and calls done with the response, or with
  // Unavailable (connect refused, connection broke), Timeout (no response in
  // time) or Corruption (the server sent bytes that do not decode).
  void invoke(const std::string& address, RemotingCommand request, Nanos timeout, ResponseCallback done);
  // The same for a request the caller keeps and reuses (a producer sends
  // one per attempt): request is encoded where it is, its opaque and
  // serialize type set to those it went out with, and body, when not empty,
  // is its body: both are copied into the frame before this returns, so the
  // caller may change them at once. Requires: body or request.body is empty.
  void invoke(const std::string& address, RemotingCommand& request, std::span<const uint8_t> body, Nanos timeout,
              ResponseCallback done);
  // The same for a request whose JSON header the caller writes itself (a
  // producer's SEND_MESSAGE_V2, written straight from its header struct
  // instead of through ExtFields' strings): write_header(opaque, out)
  // appends the whole header for the opaque this request goes out with, and
  // body follows it. Requires: sends_json_headers(); code is the request's.
  template <typename WriteHeader>
  void invoke_written(const std::string& address, int32_t code, WriteHeader&& write_header,
                      std::span<const uint8_t> body, Nanos timeout, ResponseCallback done) {
    MQ_ASSERT(sends_json_headers());
    const int32_t opaque = take_request_opaque();
    std::vector<uint8_t> frame = take_byte_buffer(kFramePrefixBytes + kWrittenHeaderBytesGuess + body.size());
    frame.resize(kFramePrefixBytes, 0);  // the two lengths, filled in by finish_json_frame
    write_header(opaque, frame);
    finish_json_frame(frame, body);
    send_written_request(address, opaque, code, std::move(frame), timeout, std::move(done));
  }
  // Whether requests go out with the JSON header (no serialize type forced,
  // or JSON forced): what invoke_written needs.
  bool sends_json_headers() const {
    return options_.serialize_type.value_or(SerializeType::JSON) == SerializeType::JSON;
  }
  // Sends without waiting for a response; done (optional) hears whether it was written.
  void invoke_oneway(const std::string& address, RemotingCommand request, std::function<void(Status)> done = {});

  // Closes the connection to address (if any); its pending requests fail.
  void close_connection(const std::string& address);
  void shutdown();  // closes everything; pending requests fail with Aborted

  size_t pending_requests() const;

 private:
  class ClientConnection;
  std::shared_ptr<ClientConnection> connection_to(const std::string& address);
  // invoke_written's halves that need ClientConnection's definition.
  int32_t take_request_opaque();
  void send_written_request(const std::string& address, int32_t opaque, int32_t code, std::vector<uint8_t> frame,
                            Nanos timeout, ResponseCallback done);
  // A SEND_MESSAGE_V2 header with short names and properties is 300-500 bytes.
  static constexpr size_t kWrittenHeaderBytesGuess = 512;

  env::Env& env_;
  RemotingClientOptions options_;
  using Connections = std::map<std::string, std::shared_ptr<ClientConnection>, NameLess>;
  Connections connections_;
  // connection_to's: a client sends to a few addresses, mostly two brokers
  // in turn. Forgotten whenever an entry leaves connections_.
  RememberedEntries<Connections, 2> recent_connections_;
  int32_t next_opaque_ = 1;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::remoting
