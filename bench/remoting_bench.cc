// remoting_bench: what one SEND_MESSAGE_V2 costs the remoting codec, the
// hand-written JSON header paths (json_header.cc's fast paths, what
// decode_frame and encode_frame use) against the general ones through
// nlohmann (decode_json_header_general, append_json_header_general) as the
// baseline, both measured in the same run on the same bytes.
//
//   decode: one whole request frame (8-byte prefix, JSON header, 1 KiB body)
//           to a RemotingCommand, body copied out, as FrameDecoder::next does.
//           Two headers: ali-ons' (what npm ali-ons 3.12 really sends: keys
//           in its own order, extFields values as JSON numbers and booleans,
//           \u0001 escapes; shared/testdata/ali-ons-request-frames.json) and
//           a Java client's (sorted keys, every value a string, as fastjson
//           and mqlab's own client write it).
//   decode stream: the Java client's frame again and again through one
//           FrameDecoder, as a connection reads a producer's sends: its
//           header shapes (json_header_shapes.h) read each header against
//           the shape learned from the first.
//   encode: the broker's answer to it (SendMessageProcessor::reply_put's
//           fields: MSG_REGION, TRACE_ON, msgId, queueId, queueOffset) to
//           one frame.
//
// Output: one line per figure, `name value unit [ratio=x.xx vs BASELINE]`,
// where ratio is value / baseline (below 1: faster, fewer allocations). Times
// are CPU ns per operation (the thread's CPU time, so other processes on a
// shared machine do not inflate them). The
// _allocs lines count operator new calls per operation (this binary replaces
// the global operator new to count them). Google Benchmark flags pass through
// (e.g. --benchmark_min_time=0.5); its own table goes to stderr.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/assert.h"
#include "broker/common/big_endian.h"
#include "broker/remoting/frame_codec.h"
#include "broker/remoting/json_header.h"
#include "broker/remoting/remoting_command.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"

// --- allocation counting: every operator new in the process ------------------
//
// GCC pairs the malloc inside our operator new with the free inside our
// operator delete once both are inlined into a caller, and calls that a
// mismatch: it is not one here, since both replace the global pair.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t /*size*/) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t /*size*/) noexcept { std::free(p); }

namespace {

using namespace mqlab;
using remoting::RemotingCommand;
using Bytes = std::vector<uint8_t>;

constexpr size_t kBodyBytes = 1024;

// ali-ons 3.12's SEND_MESSAGE_V2 header, byte for byte from the capture
// (shared/testdata/ali-ons-request-frames.json, code 310).
constexpr std::string_view kAliOnsSendHeader =
    R"({"code":310,"language":"JAVA","opaque":2,"flag":0,"version":121,"extFields":{"a":"PG_GOLDEN",)"
    R"("b":"GoldenTopic","c":"TBW102","d":4,"e":1,"f":0,"g":1795946416061,"h":0,)"
    R"("i":"TAGS\u0001TagA\u0002KEYS\u0001order-42\u0002","j":0,"k":false}})";

Bytes frame_of(std::string_view header, const Bytes& body) {
  // Sized once and copied into (GCC 12 warns falsely on inserts into a
  // vector of 8 bytes).
  Bytes frame(remoting::kFramePrefixBytes + header.size() + body.size(), 0);
  std::memcpy(frame.data() + remoting::kFramePrefixBytes, header.data(), header.size());
  std::memcpy(frame.data() + remoting::kFramePrefixBytes + header.size(), body.data(), body.size());
  put_u32_be(frame.data(), static_cast<uint32_t>(frame.size() - 4));
  put_u32_be(frame.data() + 4, static_cast<uint32_t>(header.size()));  // serialize type 0: JSON
  return frame;
}

Bytes body_of_1k() {
  Bytes body(kBodyBytes);
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<uint8_t>('a' + i % 26);
  return body;
}

Bytes ali_ons_request_frame() { return frame_of(kAliOnsSendHeader, body_of_1k()); }

// The same request as a Java client writes it: every value a string.
Bytes java_request_frame() {
  RemotingCommand request = RemotingCommand::make_request(
      remoting::RequestCode::SEND_MESSAGE_V2,
      {{"a", "PG_GOLDEN"}, {"b", "GoldenTopic"}, {"c", "TBW102"}, {"d", "4"}, {"e", "1"}, {"f", "0"},
       {"g", "1795946416061"}, {"h", "0"}, {"i", "TAGS\x01TagA\x02KEYS\x01order-42\x02"}, {"j", "0"},
       {"k", "false"}});
  request.opaque = 2;
  request.body = body_of_1k();
  return remoting::encode_frame(request);
}

RemotingCommand send_response(const RemotingCommand& request) {
  RemotingCommand response = request.make_response(remoting::ResponseCode::SUCCESS);
  response.set_ext_string("MSG_REGION", "DefaultRegion");
  response.set_ext_string("TRACE_ON", "true");
  response.set_ext_string("msgId", "7F00000100002A9F0000000000012C40");
  response.set_ext_int("queueId", 3);
  response.set_ext_int("queueOffset", 123456);
  return response;
}

// decode_frame with the general header parser: the same steps as
// frame_codec.cc's decode_payload (its checks are not what is measured).
Result<RemotingCommand> decode_frame_general(std::span<const uint8_t> frame) {
  MQ_ASSERT(frame.size() >= remoting::kFramePrefixBytes);
  MQ_ASSERT(static_cast<size_t>(get_i32_be(frame.data())) + 4 == frame.size());
  const size_t header_length = get_u32_be(frame.data() + 4) & 0xFFFFFF;
  MQ_ASSERT(remoting::kFramePrefixBytes + header_length <= frame.size());
  Result<RemotingCommand> command =
      remoting::decode_json_header_general(frame.subspan(remoting::kFramePrefixBytes, header_length));
  if (!command.ok()) return command;
  const auto body = frame.subspan(remoting::kFramePrefixBytes + header_length);
  command->body.assign(body.begin(), body.end());
  return command;
}

// encode_frame with the general header writer, as frame_codec.cc lays it out.
Bytes encode_frame_general(const RemotingCommand& command) {
  Bytes frame(remoting::kFramePrefixBytes, 0);
  remoting::append_json_header_general(command, frame);
  const size_t header_length = frame.size() - remoting::kFramePrefixBytes;
  frame.insert(frame.end(), command.body.begin(), command.body.end());
  put_u32_be(frame.data(), static_cast<uint32_t>(frame.size() - 4));
  put_u32_be(frame.data() + 4, static_cast<uint32_t>(header_length));
  return frame;
}

void count_allocations(benchmark::State& state, uint64_t before) {
  state.counters["allocs"] = benchmark::Counter(static_cast<double>(g_allocations.load() - before),
                                                benchmark::Counter::kAvgIterations);
}

void decode(benchmark::State& state, const Bytes& frame, bool general) {
  const uint64_t before = g_allocations.load();
  for (auto _ : state) {
    Result<RemotingCommand> command = general ? decode_frame_general(frame) : remoting::decode_frame(frame);
    MQ_ASSERT(command.ok());
    benchmark::DoNotOptimize(command);
  }
  count_allocations(state, before);
}

// Frames as a connection reads them: through one FrameDecoder, whose JSON
// header shapes (json_header_shapes.h) learn the first and match the rest.
void decode_stream(benchmark::State& state, const Bytes& frame) {
  remoting::FrameDecoder decoder;
  const uint64_t before = g_allocations.load();
  for (auto _ : state) {
    const Status status = decoder.feed_and_drain(frame, [](RemotingCommand command) {
      benchmark::DoNotOptimize(command);
      return true;
    });
    MQ_ASSERT(status.ok());
  }
  count_allocations(state, before);
}

void encode(benchmark::State& state, const RemotingCommand& response, bool general) {
  const uint64_t before = g_allocations.load();
  for (auto _ : state) {
    Bytes frame = general ? encode_frame_general(response) : remoting::encode_frame(response);
    benchmark::DoNotOptimize(frame.data());
    benchmark::ClobberMemory();
  }
  count_allocations(state, before);
}

// Collects each benchmark's time per operation and allocations per operation.
class FigureCollector : public benchmark::BenchmarkReporter {
 public:
  struct Figure {
    double ns = 0;
    double allocs = 0;
  };

  bool ReportContext(const Context& /*context*/) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      Figure& figure = figures_[run.benchmark_name()];
      // CPU time per iteration, in ns (the benchmark's unit): the machine is
      // shared, and wall time would count other processes' turns.
      figure.ns = run.GetAdjustedCPUTime();
      const auto allocs = run.counters.find("allocs");
      if (allocs != run.counters.end()) figure.allocs = allocs->second.value;
    }
  }

  const std::map<std::string, Figure>& figures() const { return figures_; }

 private:
  std::map<std::string, Figure> figures_;
};

// Hands every report to two reporters.
class TeeReporter : public benchmark::BenchmarkReporter {
 public:
  TeeReporter(BenchmarkReporter& first, BenchmarkReporter& second) : first_(first), second_(second) {}
  bool ReportContext(const Context& context) override {
    const bool first = first_.ReportContext(context);
    return second_.ReportContext(context) && first;
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    first_.ReportRuns(runs);
    second_.ReportRuns(runs);
  }

 private:
  BenchmarkReporter& first_;
  BenchmarkReporter& second_;
};

// name's figures, and its general path's (name_general) as the baseline
// unless another baseline is named; that one's own figures were printed
// with its pair, so they are not printed again.
void print_pair(const std::map<std::string, FigureCollector::Figure>& figures, const std::string& name,
                std::string baseline = {}) {
  const bool own_baseline = baseline.empty();
  if (own_baseline) baseline = name + "_general";
  const auto fast = figures.find(name);
  const auto general = figures.find(baseline);
  if (fast == figures.end() || general == figures.end()) return;  // filtered out
  if (own_baseline) std::printf("%s_ns %.1f ns\n", baseline.c_str(), general->second.ns);
  std::printf("%s_ns %.1f ns ratio=%.2f vs %s_ns\n", name.c_str(), fast->second.ns,
              fast->second.ns / general->second.ns, baseline.c_str());
  if (own_baseline) std::printf("%s_allocs %.1f allocs\n", baseline.c_str(), general->second.allocs);
  std::printf("%s_allocs %.1f allocs ratio=%.2f vs %s_allocs\n", name.c_str(), fast->second.allocs,
              general->second.allocs == 0 ? 0.0 : fast->second.allocs / general->second.allocs, baseline.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const Bytes ali_ons = ali_ons_request_frame();
  const Bytes java = java_request_frame();
  // The fixtures must decode the same both ways, or the comparison is moot.
  for (const Bytes* frame : {&ali_ons, &java}) {
    const Result<RemotingCommand> fast = remoting::decode_frame(*frame);
    const Result<RemotingCommand> general = decode_frame_general(*frame);
    MQ_ASSERT(fast.ok() && general.ok());
    MQ_ASSERT(*fast == *general);
    MQ_ASSERT(fast->body.size() == kBodyBytes);
    // ... and the fast figures must be the fast path's, not a hand-on.
    const size_t header_length = get_u32_be(frame->data() + 4) & 0xFFFFFF;
    MQ_ASSERT(remoting::decode_json_header_fast(
                  std::span<const uint8_t>(frame->data() + remoting::kFramePrefixBytes, header_length))
                  .has_value());
  }
  const RemotingCommand response = send_response(*remoting::decode_frame(java));
  MQ_ASSERT(remoting::encode_frame(response) == encode_frame_general(response));

  benchmark::RegisterBenchmark("remoting_decode_send_v2_ali_ons_general",
                               [&](benchmark::State& state) { decode(state, ali_ons, true); });
  benchmark::RegisterBenchmark("remoting_decode_send_v2_ali_ons",
                               [&](benchmark::State& state) { decode(state, ali_ons, false); });
  benchmark::RegisterBenchmark("remoting_decode_send_v2_java_general",
                               [&](benchmark::State& state) { decode(state, java, true); });
  benchmark::RegisterBenchmark("remoting_decode_send_v2_java",
                               [&](benchmark::State& state) { decode(state, java, false); });
  benchmark::RegisterBenchmark("remoting_decode_send_v2_java_stream",
                               [&](benchmark::State& state) { decode_stream(state, java); });
  benchmark::RegisterBenchmark("remoting_encode_send_v2_response_general",
                               [&](benchmark::State& state) { encode(state, response, true); });
  benchmark::RegisterBenchmark("remoting_encode_send_v2_response",
                               [&](benchmark::State& state) { encode(state, response, false); });

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  FigureCollector collector;
  benchmark::ConsoleReporter console;
  console.SetOutputStream(&std::cerr);
  console.SetErrorStream(&std::cerr);
  // The console table to stderr for people, our figure lines to stdout.
  TeeReporter both(console, collector);
  benchmark::RunSpecifiedBenchmarks(&both);
  benchmark::Shutdown();

  std::printf("# remoting_bench: SEND_MESSAGE_V2 with a %zu-byte body; ratio = value / general path's\n", kBodyBytes);
  for (const std::string name :
       {"remoting_decode_send_v2_ali_ons", "remoting_decode_send_v2_java", "remoting_encode_send_v2_response"}) {
    print_pair(collector.figures(), name);
  }
  print_pair(collector.figures(), "remoting_decode_send_v2_java_stream", "remoting_decode_send_v2_java_general");
  return 0;
}
