// RemotingServer: serves RocketMQ remoting requests on one listen address,
// over the Env's network seam (Asio TCP for real, the simulator's network in
// mqsim). The broker and the NameServer each run one.
//
// Per connection: bytes are fed to a FrameDecoder; each request goes to the
// processor registered for its code, which answers through a ResponseChannel
// now or later (a parked long-poll pull, a SYNC_FLUSH put waiting for its
// group commit). Responses echo the request's opaque, carry the response flag
// and use the request's serialize type. A oneway request gets no response.
// A response may continue its body with file regions (body_file_region.h):
// the pull path sends CommitLog records that way, without copying them.
//
// Bad input closes only the connection it came on, with a logged reason: a
// frame over max_frame_bytes, a header length past the frame, invalid JSON,
// an unknown serialize type. Unknown request codes are answered with
// REQUEST_CODE_NOT_SUPPORTED ("request type N not supported"). A processor
// that reports InvalidArgument (a missing or malformed header field) is
// answered with SYSTEM_ERROR and the reason in the remark, never a crash.
//
// Hostile or broken clients are bounded (RemotingServerOptions), each limit
// closing only the offending connection with a logged reason and a counter:
//   - output: a client that does not read its responses is closed once its
//     unsent output would pass max_pending_output_bytes;
//   - slow frames (slowloris): a frame begun but not completed within
//     frame_read_timeout closes the connection;
//   - idle: no byte in or out for channel_max_idle (RocketMQ's
//     serverChannelMaxIdleTimeSeconds, an IdleStateHandler ALL_IDLE) closes it;
//   - count: beyond max_connections, new connections are closed as accepted.
// Each timed limit costs one timer per connection, armed lazily.
//
// Invariants: every callback runs on the Env's executor; a ResponseChannel
// whose connection has closed swallows the reply; each request is answered at
// most once (a second reply is a bug: MQ_ASSERT).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/common/byte_buffer_pool.h"
#include "broker/common/lifetime.h"
#include "broker/common/status.h"
#include "broker/env/env.h"
#include "broker/remoting/body_file_region.h"
#include "broker/remoting/frame_codec.h"
#include "broker/remoting/remoting_command.h"

namespace mqlab::remoting {

class ServerConnection;

// Where a processor sends its one answer to one request. Move-only: the
// one owner answers, so whether it has is the channel's own flag (a copyable
// channel shared one on the heap, an allocation per request); a moved-from
// channel counts as answered (its answer went with the move).
class ResponseChannel {
 public:
  // Holds connection weakly: a parked request must not keep a closed
  // connection alive.
  ResponseChannel(const std::shared_ptr<ServerConnection>& connection, const RemotingCommand& request);
  ResponseChannel(ResponseChannel&& other) noexcept
      : connection_(std::move(other.connection_)),
        opaque_(other.opaque_),
        serialize_type_(other.serialize_type_),
        oneway_(other.oneway_),
        answered_(std::exchange(other.answered_, true)),
        remote_address_(std::move(other.remote_address_)) {}
  ResponseChannel& operator=(ResponseChannel&& other) noexcept {
    if (this != &other) {
      connection_ = std::move(other.connection_);
      opaque_ = other.opaque_;
      serialize_type_ = other.serialize_type_;
      oneway_ = other.oneway_;
      answered_ = std::exchange(other.answered_, true);
      remote_address_ = std::move(other.remote_address_);
    }
    return *this;
  }
  ResponseChannel(const ResponseChannel&) = delete;
  ResponseChannel& operator=(const ResponseChannel&) = delete;
  // Sends response (its opaque, flag and serialize type are set here).
  // Requires: not answered yet.
  void reply(RemotingCommand response);
  // Sends response with its body continued by regions, in order, as one
  // frame (zero copy on real TCP). Requires: not answered yet; each region
  // non-empty with a file.
  void reply(RemotingCommand response, std::vector<BodyFileRegion> regions);
  // reply(request.make_response(code, remark)).
  void reply(int32_t code, std::string remark = {});
  // Whether the response goes out with the JSON header (the request came
  // with it): what reply_written needs.
  bool answers_json() const { return serialize_type_ == SerializeType::JSON; }
  // The same as reply(response, regions) for a response whose JSON header
  // the processor writes itself (a pull's, written straight from its values
  // instead of through ExtFields' strings): write_header(opaque, out)
  // appends the whole header, response flag included, for this request's
  // opaque, and body follows it. Requires: answers_json(); not answered yet;
  // as reply for regions.
  template <typename WriteHeader>
  void reply_written(WriteHeader&& write_header, std::span<const uint8_t> body,
                     std::vector<BodyFileRegion> regions = {}) {
    MQ_ASSERT(answers_json());
    if (!take_answer()) return;
    const uint64_t region_bytes = body_file_region_bytes(regions);
    std::vector<uint8_t> frame = take_byte_buffer(kFramePrefixBytes + kWrittenHeaderBytesGuess + body.size());
    frame.resize(kFramePrefixBytes, 0);  // the two lengths, filled in by finish_json_frame
    write_header(opaque_, frame);
    finish_json_frame(frame, body, region_bytes);
    send_frame(std::move(frame), regions);
  }
  bool answered() const { return answered_; }
  // The client's address as the server sees it ("127.0.0.1:53412").
  // Requires: not moved from.
  const std::string& remote_address() const {
    MQ_ASSERT_MSG(remote_address_ != nullptr, "the address of a moved-from response channel");
    return *remote_address_;
  }
  // Whether the connection is still open (a parked pull checks before work).
  bool connection_open() const;

 private:
  // Marks the request answered; false when nobody is to hear the answer
  // (a oneway request). Requires: not answered yet.
  bool take_answer();
  // A second answer's assertion message; second: what it would send, if known.
  std::string answered_twice(std::string_view second) const;
  // reply_written's half that needs ServerConnection's definition.
  void send_frame(std::vector<uint8_t> frame, std::span<const BodyFileRegion> regions);
  // A pull response's header is about 200 bytes.
  static constexpr size_t kWrittenHeaderBytesGuess = 256;

  std::weak_ptr<ServerConnection> connection_;
  int32_t opaque_;
  SerializeType serialize_type_;
  bool oneway_;
  bool answered_ = false;
  // The connection's; null only in a moved-from channel (moved, not
  // copied: a channel moves about nine times a message, and each copy cost
  // a count up and a call to count down; a wrong second answer through a
  // moved-from channel still names its opaque).
  std::shared_ptr<const std::string> remote_address_;
};

// A processor handles one request; it answers through the channel, now or later.
// The request is the server's own, dropped when the processor returns: a
// processor may take parts of it (the send path moves the body into the
// stored message rather than copying a kilobyte per send).
using RequestProcessor = std::function<void(RemotingCommand& request, ResponseChannel channel)>;

struct RemotingServerOptions {
  size_t max_frame_bytes = kDefaultMaxFrameBytes;
  // Beyond this much unsent output a connection is closed: a client that never
  // reads its responses must not grow the broker's memory without bound.
  uint64_t max_pending_output_bytes = 64ull << 20;
  // Connections beyond this many are closed as soon as they are accepted.
  size_t max_connections = 10'000;
  // A connection with no traffic either way for this long is closed
  // (RocketMQ's serverChannelMaxIdleTimeSeconds, 120 s). 0 = never.
  Nanos channel_max_idle = seconds(120);
  // A frame begun must be complete within this long, or the connection is
  // closed (a slowloris client dribbling half frames). 0 = never.
  Nanos frame_read_timeout = seconds(60);
};

struct RemotingServerStats {
  uint64_t connections_accepted = 0;
  uint64_t connections_closed_for_bad_input = 0;
  uint64_t connections_closed_for_output_limit = 0;
  uint64_t connections_closed_for_slow_frame = 0;
  uint64_t connections_closed_idle = 0;
  uint64_t connections_refused_over_limit = 0;
  uint64_t requests = 0;
  uint64_t unsupported_requests = 0;
  // Responses whose body went (partly) as file regions, and those bytes.
  uint64_t file_region_responses = 0;
  uint64_t file_region_bytes = 0;
};

class RemotingServer {
 public:
  RemotingServer(env::Env& env, std::string name, RemotingServerOptions options = {});
  ~RemotingServer();

  void register_processor(int32_t request_code, RequestProcessor processor);
  // Starts listening; the bound address (with the real port) is address().
  Status start(const std::string& listen_address);
  void shutdown();  // closes the listener and every connection

  const std::string& address() const { return address_; }
  const RemotingServerStats& stats() const { return stats_; }
  const RemotingServerOptions& options() const { return options_; }
  size_t connection_count() const { return connections_.size(); }

  // Called when a client connection closes (the broker drops that client's
  // channels; the NameServer expires a broker at once, as RocketMQ does).
  void set_connection_closed_listener(std::function<void(const std::string& remote_address)> listener) {
    on_connection_closed_ = std::move(listener);
  }

 private:
  friend class ServerConnection;
  void on_accept(std::shared_ptr<env::Connection> connection);
  void refuse_over_limit(env::Connection& connection);
  // The decoder's command, by reference: not moved into a parameter once more.
  void dispatch(const std::shared_ptr<ServerConnection>& connection, RemotingCommand&& request);
  void on_closed(ServerConnection* connection, const Status& reason);

  env::Env& env_;
  std::string name_;
  RemotingServerOptions options_;
  // Shared, so that dispatch keeps the one it runs alive (a processor may
  // register another for its code meanwhile) without copying the
  // std::function, a heap allocation per request for most processors.
  std::map<int32_t, std::shared_ptr<const RequestProcessor>> processors_;
  std::shared_ptr<env::Listener> listener_;
  std::string address_;
  std::map<uint64_t, std::shared_ptr<ServerConnection>> connections_;  // by accept order
  uint64_t next_connection_id_ = 1;
  RemotingServerStats stats_;
  std::function<void(const std::string&)> on_connection_closed_;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::remoting
