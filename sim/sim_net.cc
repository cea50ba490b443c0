#include "sim/sim_net.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/common/assert.h"
#include "broker/common/byte_buffer_pool.h"
#include "broker/common/name_order.h"
#include "broker/common/same_bytes.h"
#include "sim/exponential_draw.h"

namespace mqlab::sim {
namespace {

// Local ports of outgoing connections and of port-0 listeners come from the
// IANA dynamic range, as the kernel's do, and wrap around at its end.
constexpr uint32_t kFirstEphemeralPort = 49152;
constexpr uint32_t kLastEphemeralPort = 65535;
// An exponential tail is unbounded; one absurd draw would stall a stream for
// a reason no switch has, so the jitter stops at this many means.
constexpr double kJitterCapInMeans = 10.0;

bool is_loopback_name(const std::string& host) { return host == "127.0.0.1" || host == "localhost" || host == "::1"; }
bool is_wildcard(const std::string& host) { return host == "0.0.0.0" || host == "::"; }

// Time the wire is busy sending bytes, rounded up to a whole nanosecond.
Nanos transmission_ns(uint64_t bytes, uint64_t bandwidth_bytes_per_sec) {
  MQ_ASSERT(bandwidth_bytes_per_sec > 0);
  // 64 bits when nothing can overflow (a chunk is at most megabytes): a
  // 128-bit division is a library call, one a chunk.
  if (bytes <= std::numeric_limits<uint32_t>::max() &&
      bandwidth_bytes_per_sec <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    // At most 4.3e9 x 1e9 + 9.2e18 < 1.8e19: no wrap.
    const uint64_t ns = (bytes * static_cast<uint64_t>(kNanosPerSecond) + bandwidth_bytes_per_sec - 1) / bandwidth_bytes_per_sec;
    MQ_ASSERT(ns < static_cast<uint64_t>(std::numeric_limits<Nanos>::max() / 2));
    return static_cast<Nanos>(ns);
  }
  // 128 bits: bytes x 1e9 overflows 64 bits past 18 GB.
  const unsigned __int128 ns =
      (static_cast<unsigned __int128>(bytes) * kNanosPerSecond + bandwidth_bytes_per_sec - 1) / bandwidth_bytes_per_sec;
  MQ_ASSERT(ns < static_cast<unsigned __int128>(std::numeric_limits<Nanos>::max() / 2));
  return static_cast<Nanos>(ns);
}

class SimConnection;
class ListenerState;
struct Stream;

using env::HostPort;

using HostPairView = std::pair<std::string_view, std::string_view>;

// std::less<HostPair>'s order, transparent: a HostPairView finds a
// HostPair without copying its two strings. By compare_names (inline):
// the pair's < was two calls to string_view's compare, for every chunk
// while a partition is in force.
struct HostPairLess {
  using is_transparent = void;
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    const int first = compare_names(a.first, b.first);
    return first != 0 ? first < 0 : compare_names(a.second, b.second) < 0;
  }
};

}  // namespace

// What the endpoints, streams and listeners of one network share.
struct SimNet::Core {
  Core(Scheduler& scheduler_in, env::Random random_in, SimNetOptions options_in)
      : scheduler(scheduler_in), random(random_in), options(std::move(options_in)) {}

  Nanos now() const { return scheduler.now(); }
  // Transmission belongs to no process: world-owned events.
  EventId at(Nanos due, env::Task task) { return scheduler.schedule_at(due, std::move(task), kWorldOwner); }
  void cancel(EventId& id) {
    if (id != kNoEvent) scheduler.cancel(id);
    id = kNoEvent;
  }

  bool is_blocked(const std::string& from, const std::string& to) const;
  const NetworkProfile& profile(const std::string& from, const std::string& to) const;
  Nanos draw_jitter(const NetworkProfile& link);
  // Puts a chunk of `bytes` on the from -> to wire now; returns when it
  // reaches `to` (wire queueing + serialization + latency + a possible RTO).
  Nanos send_over(const std::string& from, const std::string& to, uint64_t bytes);
  // The same, given the link's profile and its entry in wire_free_at.
  Nanos send_on_wire(const NetworkProfile& link, Nanos& wire, uint64_t bytes);
  // Whether any partition, isolation or power cut is in force: while none
  // is, nothing is blocked and the per-chunk checks can stop at once.
  bool anything_blocked() const { return !down_hosts.empty() || !isolated_hosts.empty() || !blocked_pairs.empty(); }
  uint16_t take_port();
  uint16_t free_port(const std::string& host);
  std::shared_ptr<ListenerState> find_listener(const std::string& machine, uint16_t port, bool dialed_loopback) const;
  std::vector<std::shared_ptr<Stream>> stream_list() const;
  // After a heal or a power-on: every stalled direction whose path is open
  // goes out again.
  void resume_unblocked();

  Scheduler& scheduler;
  env::Random random;
  const SimNetOptions options;
  bool shut_down = false;  // the SimNet is gone: everything is inert
  std::set<std::string> hosts;
  std::set<std::string, NameLess> down_hosts;  // NameLess: std::less's order, compared inline
  std::set<std::string, NameLess> isolated_hosts;
  // Looked up for every chunk while anything is blocked (a fault's seconds):
  // by views, not a pair of copied strings.
  std::set<HostPair, HostPairLess> blocked_pairs;
  std::map<HostPair, NetworkProfile> link_profiles;  // overrides of the defaults
  uint64_t link_profiles_version = 0;                  // bumped at every change of them
  // When each link's wire has sent its last chunk. Entries are never erased
  // (nor are link_counters'), so streams may keep pointers to them.
  std::map<HostPair, Nanos> wire_free_at;
  // By (machine, port); entries go when their listener closes, so every one locks.
  std::map<std::pair<std::string, uint16_t>, std::weak_ptr<ListenerState>> listeners;
  std::map<OwnerId, std::vector<std::weak_ptr<SimNetEndpoint::State>>> endpoints;
  std::map<uint64_t, std::weak_ptr<Stream>> streams;  // a stream erases itself when it goes
  NetCounters counters;
  std::map<HostPair, LinkCounters> link_counters;
  uint32_t next_port = kFirstEphemeralPort;
  uint64_t next_stream_id = 1;
};

// One endpoint (one process incarnation): its executor and what kill() reaches.
struct SimNetEndpoint::State : std::enable_shared_from_this<State> {
  State(std::shared_ptr<SimNet::Core> core_in, env::Executor& executor_in, OwnerId owner_in, std::string host_in)
      : core(std::move(core_in)), executor(executor_in), owner(owner_in), host(std::move(host_in)) {
    MQ_ASSERT(core != nullptr);
    MQ_ASSERT(!host.empty());
  }

  // shut_down first: once the SimNet is gone the Scheduler may be too.
  bool alive() const { return !killed && !core->shut_down && core->scheduler.owner_alive(owner); }

  // Runs task on the executor unless the endpoint is dead by then. Never
  // posts to a dead endpoint's executor, which may be gone.
  void post(env::Task task) {
    if (!alive()) return;
    executor.post([weak = weak_from_this(), task = std::move(task)] {
      const std::shared_ptr<State> self = weak.lock();
      if (self && self->alive()) task();
    });
  }

  void kill();

  const std::shared_ptr<SimNet::Core> core;
  env::Executor& executor;
  const OwnerId owner;
  const std::string host;
  bool killed = false;
  // What kill() resets and closes, in id and address order.
  std::map<uint64_t, std::weak_ptr<SimConnection>> connections;
  std::map<std::string, std::weak_ptr<ListenerState>> listeners;
};

namespace {

using EndpointState = SimNetEndpoint::State;
using Core = SimNet::Core;

enum class Kind { kBytes, kPeerClosed, kPeerReset, kLocalFailure, kTimedOut };

// What reaches a connection end: bytes, or the end of the stream.
struct Arrival {
  Kind kind = Kind::kBytes;
  std::vector<uint8_t> bytes;  // kBytes only
  Status reason;               // kLocalFailure and kTimedOut only
};

// An arrival on its way to the other machine.
struct Chunk {
  Arrival arrival;
  Nanos deliver_at = 0;  // meaningful only while its pipe is not stalled
};

// One direction of a stream: what one side sent that the other's machine
// has not received yet, oldest first.
struct Pipe {
  std::deque<Chunk> queue;
  uint64_t queued_bytes = 0;
  Nanos last_deliver_at = 0;
  EventId delivery_event = kNoEvent;  // for queue.front(), unless stalled
  // The stream itself, exactly while delivery_event is pending. The event
  // holds a plain pointer, which std::function stores in place (a captured
  // shared_ptr, not trivially copyable, cost an allocation per chunk); this
  // reference keeps the stream alive until the event runs or is cancelled.
  std::shared_ptr<Stream> delivery_keeps;
  EventId timeout_event = kNoEvent;   // tcp_user_timeout, while stalled
  bool stalled = false;               // the path was blocked with data to send
  // This direction's entries in Core::wire_free_at and Core::link_counters,
  // looked up once: a chunk then costs no map search keyed by host strings.
  Nanos* wire_free_at = nullptr;
  LinkCounters* link = nullptr;
  // This direction's NetworkProfile as of Core::link_profiles_version
  // (profiles change only when a scenario sets one): looked up again after.
  const NetworkProfile* profile = nullptr;
  uint64_t profile_version = 0;
};

// One end of a stream, as the network sees it.
struct Side {
  std::shared_ptr<EndpointState> endpoint;
  std::string local_address;
  std::weak_ptr<SimConnection> connection;  // owned by the process's code
  bool output_open = true;                  // may still send: not closed, reset or broken
  bool reset_sent = false;                  // a RST went out: the peer needs no second one
  Pipe out;                                 // towards the other side
};

// A connection as the world sees it: two ends, two directions. Kept alive
// by its ends and by its own pending events, so queued output still goes out
// after its owner dropped it.
struct Stream : std::enable_shared_from_this<Stream> {
  Stream(std::shared_ptr<Core> core_in, uint64_t id_in) : core(std::move(core_in)), id(id_in) {
    MQ_ASSERT(core != nullptr);
    MQ_ASSERT(id != 0);
  }
  ~Stream() { core->streams.erase(id); }

  const std::string& host(int side) const { return sides[side].endpoint->host; }
  // Nothing blocked, the usual case, is answered without the call (which
  // asks again, for its other callers). Moving this check into an inline
  // is_blocked instead gave +14M instructions in the standard run: gcc then
  // built deliver_front and push with more spilling.
  bool path_blocked(int from) const {
    return core->anything_blocked() && core->is_blocked(host(from), host(1 - from));
  }
  LinkCounters& link(int from) {
    Pipe& pipe = sides[from].out;
    if (pipe.link == nullptr) pipe.link = &core->link_counters[{host(from), host(1 - from)}];
    return *pipe.link;
  }
  Nanos& wire_free_at(int from) {
    Pipe& pipe = sides[from].out;
    if (pipe.wire_free_at == nullptr) pipe.wire_free_at = &core->wire_free_at[{host(from), host(1 - from)}];
    return *pipe.wire_free_at;
  }
  const NetworkProfile& profile(int from) {
    Pipe& pipe = sides[from].out;
    if (pipe.profile == nullptr || pipe.profile_version != core->link_profiles_version) {
      pipe.profile = &core->profile(host(from), host(1 - from));
      pipe.profile_version = core->link_profiles_version;
    }
    return *pipe.profile;
  }

  // Arrivals go by rvalue reference through push, hand_over, arrive and
  // deliver: by value, a frame was moved and destroyed eight times on its way.
  // holder: a hold on this stream (its sender's), which the delivery event
  // copies: shared_from_this() is a compare-and-swap, a copy an increment.
  void push(int from, Arrival&& arrival, const std::shared_ptr<Stream>& holder);
  void close_side(int side);
  void reset(int side);
  void resume(int from);
  void drop_output(int side);
  // Cancels from's delivery event and drops the reference it held.
  // Requires: the caller holds the stream (it may be the last reference).
  void cancel_delivery(int from);
  // The SimNet is going: no delivery event may outlive it.
  void cancel_deliveries();

  void put_on_wire(int from, Chunk& chunk);
  void schedule_front(int from, const std::shared_ptr<Stream>& holder);
  void deliver_front(int from);
  void stall(int from);
  void time_out(int from);
  void hand_over(int to, Arrival&& arrival);
  void send_reset(int side);

  const std::shared_ptr<Core> core;
  const uint64_t id;
  Side sides[2];
};

struct Handlers {
  env::BytesCallback on_bytes;
  env::CloseCallback on_close;
};

// One end of a stream, held by its process's code.
class SimConnection final : public env::Connection, public std::enable_shared_from_this<SimConnection> {
 public:
  SimConnection(std::shared_ptr<Stream> stream, int side) : stream_(std::move(stream)), side_(side) {
    MQ_ASSERT(stream_ != nullptr);
    MQ_ASSERT(side_ == 0 || side_ == 1);
  }

  ~SimConnection() override {
    close();
    endpoint().connections.erase(id());
  }

  uint64_t id() const { return stream_->id * 2 + static_cast<uint64_t>(side_); }

  void set_handlers(env::BytesCallback on_bytes, env::CloseCallback on_close) override {
    MQ_ASSERT(on_bytes != nullptr);
    MQ_ASSERT(on_close != nullptr);
    if (!callbacks_open_) return;  // closed, or on_close ran: nothing more to say
    handlers_ = std::make_shared<const Handlers>(Handlers{std::move(on_bytes), std::move(on_close)});
    schedule_flush();
  }

  void send(std::vector<uint8_t> bytes) override {
    if (!is_open() || bytes.empty()) return;
    stream_->push(side_, Arrival{Kind::kBytes, std::move(bytes), Status::Ok()}, stream_);
  }

  void send_file_region(std::shared_ptr<env::File> file, uint64_t offset, uint32_t length) override;

  void close() override {
    const bool was_open = is_open();
    silence();
    if (was_open) stream_->close_side(side_);  // a FIN behind every byte already sent
  }

  bool is_open() const override { return stream_->sides[side_].output_open; }
  const std::string& local_address() const override { return stream_->sides[side_].local_address; }
  const std::string& remote_address() const override { return stream_->sides[1 - side_].local_address; }
  uint64_t pending_output_bytes() const override { return is_open() ? stream_->sides[side_].out.queued_bytes : 0; }

  // The world hands this end an arrival; it waits for the owner's executor.
  void arrive(Arrival&& arrival) {
    if (!callbacks_open_) return;
    inbox_.push_back(std::move(arrival));
    schedule_flush();
  }

  // What the wire delivers, in the world's delivery event: read there and
  // then when the owner could run now and nothing of this end is waiting
  // (so order is kept), else as arrive(). Reading in the delivery event
  // rather than in a flush posted behind it saves an event a chunk (the
  // standard scenario's 14.76 events a message became 10.81); the read
  // moves only before other events due at the same instant, an order the
  // simulation is free to pick. Never from the owner's own calls:
  // break_locally() and time-outs go through arrive().
  void arrive_from_wire(Arrival&& arrival) {
    if (!callbacks_open_) return;
    if (!inbox_.empty() || flush_posted_ || handlers_ == nullptr || !endpoint().alive() ||
        endpoint().core->scheduler.owner_paused(endpoint().owner)) {
      return arrive(std::move(arrival));
    }
    // The callback may drop the last other hold on this end: the caller's
    // (hand_over's lock of its weak reference) keeps it until this returns.
    deliver(std::move(arrival));
  }

  // The process died (or the stream must not start): silence, peer reset.
  void abort() {
    silence();
    stream_->reset(side_);
  }

 private:
  EndpointState& endpoint() const { return *stream_->sides[side_].endpoint; }

  // No more callbacks.
  void silence() {
    callbacks_open_ = false;
    handlers_.reset();
    inbox_.clear();
  }

  // EndpointState::post's checks, without its second closure around this
  // one (which cost an allocation per delivered chunk): while this end
  // lives, its stream keeps the endpoint's state alive.
  void schedule_flush() {
    if (inbox_.empty() || flush_posted_ || handlers_ == nullptr) return;
    if (!endpoint().alive()) return;
    flush_posted_ = true;
    endpoint().executor.post([weak = weak_from_this()] {
      const std::shared_ptr<SimConnection> self = weak.lock();
      if (self && self->endpoint().alive()) self->flush_inbox();
    });
  }

  void flush_inbox() {
    MQ_ASSERT(flush_posted_);
    flush_posted_ = false;
    while (callbacks_open_ && handlers_ && !inbox_.empty()) {
      Arrival arrival = std::move(inbox_.front());
      inbox_.pop_front();
      deliver(std::move(arrival));
    }
  }

  void deliver(Arrival&& arrival);
  void break_locally(Status reason);
  Status close_reason(const Arrival& arrival) const;

  const std::shared_ptr<Stream> stream_;
  const int side_;
  // Shared so that a callback can replace or drop them while it runs.
  std::shared_ptr<const Handlers> handlers_;
  std::deque<Arrival> inbox_;  // arrived, waiting for handlers or a posted flush
  bool flush_posted_ = false;
  bool callbacks_open_ = true;  // not closed by the owner, on_close not run
};

// --- Stream: the two pipes

void Stream::push(int from, Arrival&& arrival, const std::shared_ptr<Stream>& holder) {
  if (core->shut_down) return;
  Pipe& pipe = sides[from].out;
  const uint64_t size = arrival.bytes.size();
  pipe.queued_bytes += size;
  ++core->counters.chunks_sent;
  core->counters.bytes_sent += size;
  link(from).bytes_sent += size;
  if (!pipe.stalled && path_blocked(from)) stall(from);
  pipe.queue.push_back(Chunk{std::move(arrival), 0});
  if (pipe.stalled) return;  // timed when the path opens
  put_on_wire(from, pipe.queue.back());
  if (pipe.delivery_event == kNoEvent) schedule_front(from, holder);
}

// Delivery times never decrease within a pipe: TCP hands bytes up in order,
// so a chunk that arrives early waits for the ones before it.
void Stream::put_on_wire(int from, Chunk& chunk) {
  Pipe& pipe = sides[from].out;
  const Nanos arrival =
      core->send_on_wire(profile(from), wire_free_at(from), chunk.arrival.bytes.size());
  chunk.deliver_at = std::max(pipe.last_deliver_at, arrival);
  pipe.last_deliver_at = chunk.deliver_at;
  MQ_ASSERT(chunk.deliver_at >= core->now());
}

void Stream::schedule_front(int from, const std::shared_ptr<Stream>& holder) {
  MQ_ASSERT(holder.get() == this);
  Pipe& pipe = sides[from].out;
  MQ_ASSERT(!pipe.stalled);
  MQ_ASSERT(pipe.delivery_event == kNoEvent);
  MQ_ASSERT(!pipe.queue.empty());
  MQ_ASSERT(pipe.delivery_keeps == nullptr);
  // One closure per direction, capturing a plain pointer alone: it then fits
  // in std::function's inline buffer, and a chunk's delivery allocates nothing.
  const Nanos due = pipe.queue.front().deliver_at;
  pipe.delivery_keeps = holder;
  pipe.delivery_event = from == 0 ? core->at(due, [this] { deliver_front(0); })
                                  : core->at(due, [this] { deliver_front(1); });
}

void Stream::cancel_delivery(int from) {
  Pipe& pipe = sides[from].out;
  core->cancel(pipe.delivery_event);
  MQ_ASSERT(pipe.delivery_keeps == nullptr || pipe.delivery_keeps.use_count() > 1);  // the caller's hold
  pipe.delivery_keeps.reset();
}

void Stream::cancel_deliveries() {
  for (int side : {0, 1}) cancel_delivery(side);
}

void Stream::deliver_front(int from) {
  Pipe& pipe = sides[from].out;
  // Held to the end of this call, which may end the stream's other holds.
  const std::shared_ptr<Stream> self = std::move(pipe.delivery_keeps);
  MQ_ASSERT(self.get() == this);
  pipe.delivery_event = kNoEvent;
  if (core->shut_down) return;
  MQ_ASSERT(!pipe.stalled);
  MQ_ASSERT(!pipe.queue.empty());
  MQ_ASSERT(pipe.queue.front().deliver_at == core->now());
  // Partitioned while in flight: lost, and resent when the path opens.
  if (path_blocked(from)) {
    stall(from);
    return;
  }
  Chunk chunk = std::move(pipe.queue.front());
  pipe.queue.pop_front();
  const uint64_t size = chunk.arrival.bytes.size();
  MQ_ASSERT(pipe.queued_bytes >= size);
  pipe.queued_bytes -= size;
  ++core->counters.chunks_delivered;
  core->counters.bytes_delivered += size;
  LinkCounters& counters = link(from);
  counters.bytes_delivered += size;
  ++counters.chunks_delivered;
  if (!pipe.queue.empty()) schedule_front(from, self);
  hand_over(1 - from, std::move(chunk.arrival));
}

// The chunk has reached the receiver's machine.
void Stream::hand_over(int to, Arrival&& arrival) {
  Side& receiver = sides[to];
  // No half-close: once the peer is gone the receiver sends nothing more,
  // and after a reset its kernel discards what it had not sent.
  if (arrival.kind == Kind::kPeerClosed) receiver.output_open = false;
  if (arrival.kind == Kind::kPeerReset) {
    receiver.output_open = false;
    drop_output(to);
  }
  if (!receiver.endpoint->alive()) {
    // Its process is gone: the machine's kernel knows no such connection and
    // answers with a RST, unless the process's death already sent one (a
    // machine that was down, or a death the network did not hear of).
    if (arrival.kind != Kind::kPeerReset && !receiver.reset_sent) send_reset(to);
    return;
  }
  if (const std::shared_ptr<SimConnection> connection = receiver.connection.lock()) {
    connection->arrive_from_wire(std::move(arrival));
  }
}

void Stream::stall(int from) {
  Pipe& pipe = sides[from].out;
  MQ_ASSERT(!pipe.stalled);
  MQ_ASSERT(pipe.timeout_event == kNoEvent);
  pipe.stalled = true;
  cancel_delivery(from);
  ++core->counters.stalls;
  pipe.timeout_event = core->at(core->now() + core->options.tcp_user_timeout_ns,
                                [self = shared_from_this(), from] { self->time_out(from); });
}

void Stream::resume(int from) {
  Pipe& pipe = sides[from].out;
  MQ_ASSERT(pipe.stalled);
  MQ_ASSERT(!pipe.queue.empty());  // a pipe stalls only with data, and a drop unstalls it
  MQ_ASSERT(!path_blocked(from));
  core->cancel(pipe.timeout_event);
  pipe.stalled = false;
  // Everything delivered so far was due by now; the rest is resent afresh.
  pipe.last_deliver_at = core->now();
  for (Chunk& chunk : pipe.queue) put_on_wire(from, chunk);
  schedule_front(from, shared_from_this());
}

// A direction stalled for tcp_user_timeout with data outstanding: the
// sending kernel gives up and the whole connection is gone.
void Stream::time_out(int from) {
  Pipe& pipe = sides[from].out;
  pipe.timeout_event = kNoEvent;
  if (core->shut_down) return;
  MQ_ASSERT(pipe.stalled);
  ++core->counters.connections_timed_out;
  for (int side : {0, 1}) {
    sides[side].output_open = false;
    drop_output(side);
  }
  for (int side : {0, 1}) {
    if (!sides[side].endpoint->alive()) continue;
    const std::shared_ptr<SimConnection> connection = sides[side].connection.lock();
    const std::string remote = sides[1 - side].local_address;
    if (connection) connection->arrive(Arrival{Kind::kTimedOut, {}, Status::Timeout("connection timed out: " + remote)});
  }
}

void Stream::drop_output(int side) {
  Pipe& pipe = sides[side].out;
  cancel_delivery(side);
  core->cancel(pipe.timeout_event);
  core->counters.bytes_dropped += pipe.queued_bytes;
  pipe.queue.clear();
  pipe.queued_bytes = 0;
  pipe.stalled = false;
}

// The owner's goodbye: a FIN behind what it sent.
void Stream::close_side(int side) {
  Side& closing = sides[side];
  MQ_ASSERT(closing.output_open);
  // A process that died without the network hearing (its owner was killed
  // in the Scheduler) drops its connections now: its kernel resets them.
  if (!closing.endpoint->alive()) {
    reset(side);
    return;
  }
  closing.output_open = false;
  ++core->counters.connections_closed;
  push(side, Arrival{Kind::kPeerClosed, {}, Status::Ok()}, shared_from_this());
}

// A RST behind what the side sent; nothing more goes out from it.
void Stream::reset(int side) {
  Side& resetting = sides[side];
  if (!resetting.output_open) return;
  resetting.output_open = false;
  if (core->shut_down) return;
  // A machine without power sends nothing, not even what was queued.
  if (core->down_hosts.contains(host(side))) {
    drop_output(side);
    return;
  }
  send_reset(side);
}

void Stream::send_reset(int side) {
  MQ_ASSERT(!sides[side].reset_sent);
  sides[side].output_open = false;
  sides[side].reset_sent = true;
  ++core->counters.connections_reset;
  push(side, Arrival{Kind::kPeerReset, {}, Status::Ok()}, shared_from_this());
}

// --- SimConnection

void SimConnection::send_file_region(std::shared_ptr<env::File> file, uint64_t offset, uint32_t length) {
  MQ_ASSERT(file != nullptr);
  if (!is_open() || length == 0) return;
  std::vector<uint8_t> bytes(length);
  const Result<size_t> read = file->pread(offset, bytes);
  if (!read.ok()) {
    break_locally(read.status().with_context("sending a file region to " + remote_address()));
    return;
  }
  MQ_ASSERT(*read <= length);
  if (*read < length) {
    // A short region would leave the peer parsing frames out of step; a
    // broken stream is the honest outcome.
    break_locally(Status::IoError(file->path() + ": file region [" + std::to_string(offset) + ", " +
                                  std::to_string(offset + length) + ") ends past the end of the file (read " +
                                  std::to_string(*read) + " bytes)"));
    return;
  }
  stream_->push(side_, Arrival{Kind::kBytes, std::move(bytes), Status::Ok()}, stream_);
}

// Our own failure: the peer sees a reset, our owner hears why on our
// executor, after whatever already arrived.
void SimConnection::break_locally(Status reason) {
  MQ_ASSERT(!reason.ok());
  MQ_ASSERT(is_open());
  stream_->reset(side_);
  MQ_ASSERT(!is_open());
  arrive(Arrival{Kind::kLocalFailure, {}, std::move(reason)});
}

void SimConnection::deliver(Arrival&& arrival) {
  MQ_ASSERT(callbacks_open_);
  MQ_ASSERT(handlers_ != nullptr);
  // A local copy: the callback may close the connection or replace handlers.
  const std::shared_ptr<const Handlers> handlers = handlers_;
  if (arrival.kind == Kind::kBytes) {
    MQ_ASSERT(!arrival.bytes.empty());
    handlers->on_bytes(arrival.bytes);
    give_back_byte_buffer(std::move(arrival.bytes));  // read: the next frame written may take its room
    return;
  }
  MQ_ASSERT(!is_open());  // the world closed our output when the end arrived
  const Status reason = close_reason(arrival);
  silence();  // on_close is the last word
  handlers->on_close(reason);
}

Status SimConnection::close_reason(const Arrival& arrival) const {
  switch (arrival.kind) {
    case Kind::kPeerClosed:
      return Status::Unavailable("connection closed by peer: " + remote_address());
    case Kind::kPeerReset:
      return Status::IoError("connection reset by peer: " + remote_address());
    case Kind::kLocalFailure:
    case Kind::kTimedOut:
      MQ_ASSERT(!arrival.reason.ok());
      return arrival.reason;
    case Kind::kBytes:
      break;
  }
  MQ_UNREACHABLE("bytes do not end a stream");
}

// --- listeners

// What a listener's address binds: its machine's every address, its
// loopback only, or its machine's own address.
enum class Bind { kWildcard, kLoopback, kHost };

Result<Bind> bind_of(const HostPort& where, const std::string& machine) {
  if (is_wildcard(where.host)) return Bind::kWildcard;
  if (where.host == machine) return Bind::kHost;
  if (is_loopback_name(where.host)) return Bind::kLoopback;
  return Status::IoError("cannot assign requested address: " + where.to_string() + " (this machine is " + machine +
                         ")");
}

class ListenerState {
 public:
  ListenerState(std::shared_ptr<EndpointState> endpoint, std::string address, uint16_t port, Bind bind,
                env::AcceptCallback on_accept)
      : endpoint_(std::move(endpoint)),
        address_(std::move(address)),
        port_(port),
        bind_(bind),
        on_accept_(std::move(on_accept)) {
    MQ_ASSERT(endpoint_ != nullptr);
    MQ_ASSERT(on_accept_ != nullptr);
  }

  const std::string& address() const { return address_; }
  const std::shared_ptr<EndpointState>& endpoint() const { return endpoint_; }

  // Whether a SYN that reached this machine and port is for us: a loopback
  // bind hears only 127.0.0.1, a host bind only the machine's own address.
  bool hears(bool dialed_loopback) const {
    switch (bind_) {
      case Bind::kWildcard:
        return true;
      case Bind::kLoopback:
        return dialed_loopback;
      case Bind::kHost:
        return !dialed_loopback;
    }
    MQ_UNREACHABLE("a bind kind without a rule");
  }

  // Runs on the listener's executor.
  void accept(const std::shared_ptr<SimConnection>& connection) {
    if (!open_) {
      connection->abort();  // closed after the SYN arrived: the dialer sees a reset
      return;
    }
    const env::AcceptCallback on_accept = on_accept_;  // the callback may close the listener
    on_accept(connection);
  }

  void close() {
    if (!open_) return;
    open_ = false;
    on_accept_ = nullptr;
    const size_t erased = endpoint_->core->listeners.erase({endpoint_->host, port_});
    MQ_ASSERT(erased == 1);
    endpoint_->listeners.erase(address_);
  }

 private:
  const std::shared_ptr<EndpointState> endpoint_;
  const std::string address_;
  const uint16_t port_;
  const Bind bind_;
  env::AcceptCallback on_accept_;
  bool open_ = true;
};

class SimListener final : public env::Listener {
 public:
  explicit SimListener(std::shared_ptr<ListenerState> state) : state_(std::move(state)) {
    MQ_ASSERT(state_ != nullptr);
  }
  ~SimListener() override { state_->close(); }

  const std::string& local_address() const override { return state_->address(); }
  void close() override { state_->close(); }

 private:
  const std::shared_ptr<ListenerState> state_;
};

// --- connects

// One connect() in progress: SYNs until an answer or the deadline.
struct ConnectAttempt {
  std::shared_ptr<EndpointState> client;
  HostPort target;           // as dialed
  std::string machine;       // the server's host: target.host, or the client's for a loopback name
  std::string address;       // target.to_string()
  env::ConnectCallback done;
  Nanos syn_timeout_ns = 0;  // until the next SYN retransmission; doubles
  EventId deadline_event = kNoEvent;
  EventId retry_event = kNoEvent;
  bool finished = false;

  Core& core() const { return *client->core; }
  bool dialed_loopback() const { return is_loopback_name(target.host); }
  bool abandoned() const { return finished || core().shut_down || !client->alive(); }
};

void send_syn(const std::shared_ptr<ConnectAttempt>& attempt);

void finish(const std::shared_ptr<ConnectAttempt>& attempt, Result<std::shared_ptr<env::Connection>> result) {
  MQ_ASSERT(!attempt->finished);
  attempt->finished = true;
  attempt->core().cancel(attempt->deadline_event);
  attempt->core().cancel(attempt->retry_event);
  attempt->client->post([done = attempt->done, result = std::move(result)] { done(result); });
}

// The SYN (or the path for it) was lost: the kernel resends it, backing off.
void resend_syn_later(const std::shared_ptr<ConnectAttempt>& attempt) {
  MQ_ASSERT(attempt->retry_event == kNoEvent);
  MQ_ASSERT(attempt->syn_timeout_ns > 0);
  Core& core = attempt->core();
  attempt->retry_event = core.at(core.now() + attempt->syn_timeout_ns, [attempt] {
    attempt->retry_event = kNoEvent;
    send_syn(attempt);
  });
  attempt->syn_timeout_ns *= 2;
}

// Both ends of a new stream, registered with their endpoints for kill(). The
// server end's local address is the one dialed, even through a wildcard.
std::pair<std::shared_ptr<SimConnection>, std::shared_ptr<SimConnection>> make_stream(
    const ConnectAttempt& attempt, const std::shared_ptr<EndpointState>& server) {
  Core& core = attempt.core();
  auto stream = std::make_shared<Stream>(attempt.client->core, core.next_stream_id++);
  const std::string& client_host = attempt.dialed_loopback() ? attempt.target.host : attempt.client->host;
  stream->sides[0].endpoint = attempt.client;
  stream->sides[0].local_address = HostPort{client_host, core.take_port()}.to_string();
  stream->sides[1].endpoint = server;
  stream->sides[1].local_address = attempt.address;
  auto client_end = std::make_shared<SimConnection>(stream, 0);
  auto server_end = std::make_shared<SimConnection>(stream, 1);
  stream->sides[0].connection = client_end;
  stream->sides[1].connection = server_end;
  attempt.client->connections.emplace(client_end->id(), client_end);
  server->connections.emplace(server_end->id(), server_end);
  core.streams.emplace(stream->id, stream);
  ++core.counters.connections_opened;
  return {std::move(client_end), std::move(server_end)};
}

// The SYN-ACK is back: the client end is the caller's, unless it gave up.
void receive_syn_ack(const std::shared_ptr<ConnectAttempt>& attempt, const std::shared_ptr<SimConnection>& client_end) {
  if (attempt->abandoned()) {
    client_end->abort();  // the server's end hears a reset, as from a socket that is gone
    return;
  }
  finish(attempt, std::shared_ptr<env::Connection>(client_end));
}

void receive_syn(const std::shared_ptr<ConnectAttempt>& attempt) {
  if (attempt->abandoned()) return;
  Core& core = attempt->core();
  const std::string& client_host = attempt->client->host;
  if (core.is_blocked(client_host, attempt->machine)) {  // partitioned while in flight
    resend_syn_later(attempt);
    return;
  }
  std::shared_ptr<ListenerState> listener =
      core.find_listener(attempt->machine, attempt->target.port, attempt->dialed_loopback());
  // A process that died without the network hearing: its kernel closed the
  // listening socket with it.
  if (listener != nullptr && !listener->endpoint()->alive()) listener = nullptr;
  const Nanos answered_at = core.send_over(attempt->machine, client_host, 0);
  if (listener == nullptr) {
    core.at(answered_at, [attempt] {
      if (attempt->abandoned()) return;
      ++attempt->core().counters.connects_refused;
      finish(attempt, Status::Unavailable("connection refused: " + attempt->address));
    });
    return;
  }
  auto [client_end, server_end] = make_stream(*attempt, listener->endpoint());
  listener->endpoint()->post([listener, server_end = server_end] { listener->accept(server_end); });
  core.at(answered_at, [attempt, client_end = client_end] { receive_syn_ack(attempt, client_end); });
}

void send_syn(const std::shared_ptr<ConnectAttempt>& attempt) {
  if (attempt->abandoned()) return;
  Core& core = attempt->core();
  const std::string& client_host = attempt->client->host;
  // Either way blocked: the SYN or its answer vanishes.
  if (core.is_blocked(client_host, attempt->machine) || core.is_blocked(attempt->machine, client_host)) {
    resend_syn_later(attempt);
    return;
  }
  core.at(core.send_over(client_host, attempt->machine, 0), [attempt] { receive_syn(attempt); });
}

}  // namespace

// --- Core

bool SimNet::Core::is_blocked(const std::string& from, const std::string& to) const {
  if (!anything_blocked()) return false;
  if (down_hosts.contains(from) || down_hosts.contains(to)) return true;
  if (same_text(from, to)) return false;
  return isolated_hosts.contains(from) || isolated_hosts.contains(to) ||
         blocked_pairs.contains(HostPairView(from, to));
}

const NetworkProfile& SimNet::Core::profile(const std::string& from, const std::string& to) const {
  if (link_profiles.empty()) return from == to ? options.loopback_profile : options.profile;
  const auto found = link_profiles.find({from, to});
  if (found != link_profiles.end()) return found->second;
  return from == to ? options.loopback_profile : options.profile;
}

Nanos SimNet::Core::draw_jitter(const NetworkProfile& link) {
  if (link.latency_jitter_ns == 0) return 0;
  const double mean = static_cast<double>(link.latency_jitter_ns);
  const double draw = draw_exponential(random) * mean;
  return static_cast<Nanos>(std::min(draw, kJitterCapInMeans * mean));
}

Nanos SimNet::Core::send_over(const std::string& from, const std::string& to, uint64_t bytes) {
  return send_on_wire(profile(from, to), wire_free_at[{from, to}], bytes);
}

Nanos SimNet::Core::send_on_wire(const NetworkProfile& link, Nanos& wire, uint64_t bytes) {
  const Nanos start = std::max(now(), wire);
  wire = start + transmission_ns(bytes, link.bandwidth_bytes_per_sec);
  Nanos latency = link.latency_base_ns + draw_jitter(link);
  if (link.loss_probability > 0 && random.chance(link.loss_probability)) {
    latency += link.retransmission_timeout_ns;
    ++counters.chunks_retransmitted;
  }
  MQ_ASSERT(latency >= 0);
  MQ_ASSERT(wire >= now());
  return wire + latency;
}

uint16_t SimNet::Core::take_port() {
  MQ_ASSERT(next_port >= kFirstEphemeralPort && next_port <= kLastEphemeralPort);
  const uint32_t port = next_port;
  next_port = port == kLastEphemeralPort ? kFirstEphemeralPort : port + 1;
  return static_cast<uint16_t>(port);
}

uint16_t SimNet::Core::free_port(const std::string& host) {
  for (uint32_t tries = 0; tries <= kLastEphemeralPort - kFirstEphemeralPort; ++tries) {
    const uint16_t port = take_port();
    if (!listeners.contains({host, port})) return port;
  }
  MQ_UNREACHABLE("every ephemeral port of " + host + " is listened on");
}

std::shared_ptr<ListenerState> SimNet::Core::find_listener(const std::string& machine, uint16_t port,
                                                           bool dialed_loopback) const {
  const auto found = listeners.find({machine, port});
  if (found == listeners.end()) return nullptr;
  std::shared_ptr<ListenerState> listener = found->second.lock();
  MQ_ASSERT(listener != nullptr);  // a closing listener erases its entry
  return listener->hears(dialed_loopback) ? listener : nullptr;
}

std::vector<std::shared_ptr<Stream>> SimNet::Core::stream_list() const {
  std::vector<std::shared_ptr<Stream>> list;
  for (const auto& [id, weak] : streams) {
    if (std::shared_ptr<Stream> stream = weak.lock()) list.push_back(std::move(stream));
  }
  return list;
}

void SimNet::Core::resume_unblocked() {
  // A copy: resuming may end streams, which edits the map.
  for (const std::shared_ptr<Stream>& stream : stream_list()) {
    for (int side : {0, 1}) {
      if (stream->sides[side].out.stalled && !stream->path_blocked(side)) stream->resume(side);
    }
  }
}

void SimNetEndpoint::State::kill() {
  if (killed) return;
  killed = true;
  // Listeners first, so nothing new connects to a half-dead process. Copies:
  // closing and resetting edit the maps being walked.
  const auto listening = listeners;
  for (const auto& [address, weak] : listening) {
    if (const std::shared_ptr<ListenerState> listener = weak.lock()) listener->close();
  }
  MQ_ASSERT(listeners.empty());
  std::vector<std::shared_ptr<SimConnection>> open;
  for (const auto& [id, weak] : connections) {
    if (std::shared_ptr<SimConnection> connection = weak.lock()) open.push_back(std::move(connection));
  }
  for (const std::shared_ptr<SimConnection>& connection : open) connection->abort();
}

// --- NetworkProfile

Status NetworkProfile::validate() const {
  if (latency_base_ns < 0) return Status::InvalidArgument("network profile: latency_base_ns must be >= 0");
  if (latency_jitter_ns < 0) return Status::InvalidArgument("network profile: latency_jitter_ns must be >= 0");
  if (bandwidth_bytes_per_sec == 0) {
    return Status::InvalidArgument("network profile: bandwidth_bytes_per_sec must be > 0");
  }
  if (!(loss_probability >= 0.0 && loss_probability < 1.0)) {
    return Status::InvalidArgument("network profile: loss_probability must be in [0, 1)");
  }
  if (retransmission_timeout_ns <= 0) {
    return Status::InvalidArgument("network profile: retransmission_timeout_ns must be > 0");
  }
  return Status::Ok();
}

// --- SimNet

SimNet::SimNet(Scheduler& scheduler, env::Random random, SimNetOptions options)
    : core_(std::make_shared<Core>(scheduler, random, std::move(options))) {
  for (const NetworkProfile* profile : {&core_->options.profile, &core_->options.loopback_profile}) {
    const Status valid = profile->validate();
    MQ_ASSERT_MSG(valid.ok(), valid.to_string());  // loaders validate user input first
  }
  MQ_ASSERT(core_->options.tcp_user_timeout_ns > 0);
  MQ_ASSERT(core_->options.connect_timeout_ns > 0);
  MQ_ASSERT(core_->options.syn_retransmission_timeout_ns > 0);
}

SimNet::~SimNet() {
  core_->shut_down = true;
  // Delivery events point at their streams without holding them: none may
  // run after this (the Scheduler lives on), and their holds must go.
  for (const std::shared_ptr<Stream>& stream : core_->stream_list()) stream->cancel_deliveries();
}

std::unique_ptr<SimNetEndpoint> SimNet::endpoint(env::Executor& executor, OwnerId owner, std::string host) {
  MQ_ASSERT(!host.empty());
  MQ_ASSERT_MSG(!is_wildcard(host) && !is_loopback_name(host) && host.find(':') == std::string::npos,
                "a machine needs an address of its own, not '" + host + "'");
  core_->hosts.insert(host);
  auto state = std::make_shared<SimNetEndpoint::State>(core_, executor, owner, std::move(host));
  core_->endpoints[owner].push_back(state);
  return std::unique_ptr<SimNetEndpoint>(new SimNetEndpoint(std::move(state)));
}

void SimNet::add_host(const std::string& host) {
  MQ_ASSERT(!host.empty());
  core_->hosts.insert(host);
}

bool SimNet::has_host(const std::string& host) const { return core_->hosts.contains(host); }

void SimNet::set_link_profile(const std::string& from, const std::string& to, const NetworkProfile& profile,
                              bool symmetric) {
  const Status valid = profile.validate();
  MQ_ASSERT_MSG(valid.ok(), valid.to_string());
  core_->link_profiles.insert_or_assign({from, to}, profile);
  if (symmetric) core_->link_profiles.insert_or_assign({to, from}, profile);
  ++core_->link_profiles_version;  // streams look their profiles up again
}

const NetworkProfile& SimNet::link_profile(const std::string& from, const std::string& to) const {
  return core_->profile(from, to);
}

void SimNet::partition(const std::set<std::string>& side_a, const std::set<std::string>& side_b, bool symmetric) {
  for (const std::string& a : side_a) {
    MQ_ASSERT_MSG(!side_b.contains(a), a + " is on both sides of a partition");
    for (const std::string& b : side_b) {
      core_->blocked_pairs.insert({a, b});
      if (symmetric) core_->blocked_pairs.insert({b, a});
    }
  }
}

void SimNet::isolate(const std::string& host) { core_->isolated_hosts.insert(host); }

void SimNet::heal(const std::set<std::string>& side_a, const std::set<std::string>& side_b) {
  for (const std::string& a : side_a) {
    for (const std::string& b : side_b) {
      core_->blocked_pairs.erase({a, b});
      core_->blocked_pairs.erase({b, a});
    }
  }
  core_->resume_unblocked();
}

void SimNet::heal_host(const std::string& host) {
  core_->isolated_hosts.erase(host);
  std::erase_if(core_->blocked_pairs, [&host](const HostPair& pair) { return pair.first == host || pair.second == host; });
  core_->resume_unblocked();
}

void SimNet::heal_all() {
  core_->isolated_hosts.clear();
  core_->blocked_pairs.clear();
  core_->resume_unblocked();
}

bool SimNet::blocked(const std::string& from, const std::string& to) const { return core_->is_blocked(from, to); }

void SimNet::kill_process(OwnerId owner) {
  const auto found = core_->endpoints.find(owner);
  if (found == core_->endpoints.end()) return;
  const std::vector<std::weak_ptr<SimNetEndpoint::State>> endpoints = std::move(found->second);
  core_->endpoints.erase(found);
  for (const std::weak_ptr<SimNetEndpoint::State>& weak : endpoints) {
    if (const std::shared_ptr<SimNetEndpoint::State> endpoint = weak.lock()) endpoint->kill();
  }
}

void SimNet::set_host_down(const std::string& host, bool down) {
  add_host(host);
  if (!down) {
    core_->down_hosts.erase(host);
    core_->resume_unblocked();
    return;
  }
  core_->down_hosts.insert(host);
  // What the machine's dead processes had not sent yet (a RST included) was
  // in its memory, and is gone with the power.
  for (const std::shared_ptr<Stream>& stream : core_->stream_list()) {
    for (int side : {0, 1}) {
      if (stream->host(side) == host && !stream->sides[side].endpoint->alive()) stream->drop_output(side);
    }
  }
}

bool SimNet::host_down(const std::string& host) const { return core_->down_hosts.contains(host); }

const NetCounters& SimNet::counters() const { return core_->counters; }

const std::map<HostPair, LinkCounters>& SimNet::link_counters() const { return core_->link_counters; }

const SimNetOptions& SimNet::options() const { return core_->options; }

size_t SimNet::live_streams() const { return core_->streams.size(); }

// --- SimNetEndpoint

SimNetEndpoint::SimNetEndpoint(std::shared_ptr<State> state) : state_(std::move(state)) {
  MQ_ASSERT(state_ != nullptr);
}

SimNetEndpoint::~SimNetEndpoint() { kill(); }

Result<std::shared_ptr<env::Listener>> SimNetEndpoint::listen(const std::string& address,
                                                              env::AcceptCallback on_accept) {
  MQ_ASSERT(on_accept != nullptr);
  if (!state_->alive()) return Status::Unavailable("listen on " + address + ": the process was killed");
  MQ_ASSIGN_OR_RETURN(HostPort where, env::parse_address(address));
  MQ_ASSIGN_OR_RETURN(const Bind bind, bind_of(where, state_->host));
  Core& core = *state_->core;
  if (where.port == 0) where.port = core.free_port(state_->host);
  const std::string key = where.to_string();
  const auto taken = core.listeners.find(std::make_pair(state_->host, where.port));
  if (taken != core.listeners.end()) {
    const std::shared_ptr<ListenerState> holder = taken->second.lock();
    MQ_ASSERT(holder != nullptr);  // a closing listener erases its entry
    if (holder->endpoint()->alive()) return Status::AlreadyExists("address already in use: " + key);
    // Its process died without the network hearing: the kernel closed the
    // socket with it, and the port is free.
    holder->close();
  }
  auto listener = std::make_shared<ListenerState>(state_, key, where.port, bind, std::move(on_accept));
  core.listeners.emplace(std::make_pair(state_->host, where.port), listener);
  state_->listeners.emplace(key, listener);
  return std::shared_ptr<env::Listener>(std::make_shared<SimListener>(std::move(listener)));
}

void SimNetEndpoint::connect(const std::string& address, Nanos timeout, env::ConnectCallback done) {
  MQ_ASSERT(timeout > 0);
  MQ_ASSERT(done != nullptr);
  if (!state_->alive()) return;  // a dead process's call goes nowhere
  const Result<HostPort> target = env::parse_address(address);
  if (!target.ok()) {
    state_->post([done, status = target.status()] { done(status); });
    return;
  }
  Core& core = *state_->core;
  auto attempt = std::make_shared<ConnectAttempt>();
  attempt->client = state_;
  attempt->target = *target;
  attempt->machine = attempt->dialed_loopback() ? state_->host : target->host;
  attempt->address = target->to_string();
  attempt->done = std::move(done);
  attempt->syn_timeout_ns = core.options.syn_retransmission_timeout_ns;
  if (!core.hosts.contains(attempt->machine)) {
    finish(attempt, Status::Unavailable("unknown host: " + attempt->address));
    return;
  }
  const Nanos limit = std::min(timeout, core.options.connect_timeout_ns);
  attempt->deadline_event = core.at(core.now() + limit, [attempt, limit] {
    attempt->deadline_event = kNoEvent;
    if (attempt->abandoned()) return;
    ++attempt->core().counters.connects_timed_out;
    finish(attempt, Status::Timeout("connect timed out after " + std::to_string(limit / kNanosPerMilli) +
                                    " ms: " + attempt->address));
  });
  send_syn(attempt);
}

void SimNetEndpoint::kill() { state_->kill(); }

bool SimNetEndpoint::alive() const { return state_->alive(); }

const std::string& SimNetEndpoint::host() const { return state_->host; }

OwnerId SimNetEndpoint::owner() const { return state_->owner; }

size_t SimNetEndpoint::open_connections() const {
  size_t open = 0;
  for (const auto& [id, weak] : state_->connections) {
    const std::shared_ptr<SimConnection> connection = weak.lock();
    if (connection && connection->is_open()) ++open;
  }
  return open;
}

}  // namespace mqlab::sim
