// fuzz_replay: every fuzz target of fuzz/ in one ordinary executable, built by
// any compiler (libFuzzer needs clang), and run by ctest in every build.
//
//   fuzz_replay TARGET [--mutations N] [--seed S] DIR_OR_FILE...
//
// It feeds the target each input of the given corpus folders (sorted by
// name, so a run is the same run everywhere), then N mutants: a corpus input
// changed by one to eight random edits (bit flips, interesting bytes and
// integers, inserted, erased, duplicated or spliced ranges, truncation), from
// a PRNG seeded by S. Not coverage-guided, so no replacement for `make fuzz`:
// it keeps the checked-in corpus a regression suite and shakes the shallow
// paths on every CI run, where the build is sanitized (ASan + UBSan), so a
// crash, a failed MQ_ASSERT or a sanitizer report fails the test. The input
// that crashed is named on stderr and written to fuzz-replay-crash-<target>
// in the working folder, where `fuzz_replay TARGET FILE` (or
// `build-fuzz/bin/<target>_fuzzer FILE`) replays it.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "broker/env/random.h"

// Each target's entry points, renamed at compile time (CMakeLists.txt: the
// target's file is compiled with -DLLVMFuzzerTestOneInput=<target>_test_one_input).
#define MQLAB_FUZZ_TARGETS(X)                                                                           \
  X(remoting_frame) X(request_header) X(json_header) X(message_codec) X(commitlog_recovery) X(ha_protocol) \
  X(scenario) X(broker_conf)

#define MQLAB_DECLARE_TARGET(name)                          \
  extern "C" int name##_initialize(int* argc, char*** argv); \
  extern "C" int name##_test_one_input(const uint8_t* data, size_t size);
MQLAB_FUZZ_TARGETS(MQLAB_DECLARE_TARGET)

// The sanitizers' runtime, when this build has one (weak: absent otherwise).
extern "C" void __sanitizer_set_death_callback(void (*callback)()) __attribute__((weak));

namespace {

struct FuzzTarget {
  std::string_view name;
  int (*initialize)(int*, char***);
  int (*test_one_input)(const uint8_t*, size_t);
};

#define MQLAB_TARGET_ENTRY(name) FuzzTarget{#name, &name##_initialize, &name##_test_one_input},
constexpr std::array kTargets = {MQLAB_FUZZ_TARGETS(MQLAB_TARGET_ENTRY)};

using Bytes = std::vector<uint8_t>;

// A choice among `bound` (> 0): the project's PRNG, so the mutants are
// defined by the seed alone.
size_t pick(mqlab::env::Random& prng, size_t bound) { return static_cast<size_t>(prng.uniform(bound)); }

// Values that sit on the boundaries parsers check: lengths, signs, limits.
constexpr std::array<uint32_t, 12> kInterestingInts = {0,          1,          0x7f,       0x80,
                                                       0xff,       0x100,      0x7fff,     0xffff,
                                                       0x7fffffff, 0x80000000, 0xffffffff, 0x10000};

// Edits a copy of `input` (spliced with `other` for the splice edit). The
// result may be empty; it never grows past max_size.
Bytes mutate(const Bytes& input, const Bytes& other, mqlab::env::Random& prng, size_t max_size) {
  Bytes out = input;
  const size_t edits = 1 + pick(prng, 8);
  for (size_t i = 0; i < edits; ++i) {
    switch (pick(prng, 9)) {
      case 0:  // flip one bit
        if (!out.empty()) out[pick(prng, out.size())] ^= static_cast<uint8_t>(1u << pick(prng, 8));
        break;
      case 1:  // one random byte
        if (!out.empty()) out[pick(prng, out.size())] = static_cast<uint8_t>(prng.next_u64());
        break;
      case 2: {  // an interesting 1-, 2- or 4-byte integer, either byte order
        const uint32_t value = kInterestingInts[pick(prng, kInterestingInts.size())];
        const size_t width = size_t{1} << pick(prng, 3);
        if (out.size() < width) break;
        const size_t at = pick(prng, out.size() - width + 1);
        const bool big_endian = pick(prng, 2) == 0;
        for (size_t b = 0; b < width; ++b) {
          const size_t shift = 8 * (big_endian ? width - 1 - b : b);
          out[at + b] = static_cast<uint8_t>(value >> shift);
        }
        break;
      }
      case 3: {  // insert up to 16 random bytes
        if (out.size() >= max_size) break;
        const size_t count = std::min<size_t>(1 + pick(prng, 16), max_size - out.size());
        const size_t at = pick(prng, out.size() + 1);
        Bytes inserted(count);
        for (uint8_t& byte : inserted) byte = static_cast<uint8_t>(prng.next_u64());
        out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), inserted.begin(), inserted.end());
        break;
      }
      case 4: {  // erase a range
        if (out.empty()) break;
        const size_t at = pick(prng, out.size());
        const size_t count = 1 + pick(prng, std::min<size_t>(out.size() - at, 64));
        out.erase(out.begin() + static_cast<std::ptrdiff_t>(at), out.begin() + static_cast<std::ptrdiff_t>(at + count));
        break;
      }
      case 5: {  // duplicate a range in place (repeated fields, lengths that no longer match)
        if (out.empty() || out.size() >= max_size) break;
        const size_t at = pick(prng, out.size());
        const size_t count = std::min({1 + pick(prng, std::min<size_t>(out.size() - at, 64)), max_size - out.size()});
        const Bytes copy(out.begin() + static_cast<std::ptrdiff_t>(at),
                         out.begin() + static_cast<std::ptrdiff_t>(at + count));
        out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), copy.begin(), copy.end());
        break;
      }
      case 6:  // truncate
        if (!out.empty()) out.resize(pick(prng, out.size()));
        break;
      case 7: {  // splice: our head, the other input's tail
        if (other.empty()) break;
        const size_t head = out.empty() ? 0 : pick(prng, out.size());
        const size_t tail_from = pick(prng, other.size());
        out.resize(head);
        out.insert(out.end(), other.begin() + static_cast<std::ptrdiff_t>(tail_from), other.end());
        if (out.size() > max_size) out.resize(max_size);
        break;
      }
      default:  // an ASCII digit or sign, for the text formats (YAML, JSON, broker.conf)
        if (!out.empty()) out[pick(prng, out.size())] = static_cast<uint8_t>("0123456789-+.e:{}[]\"\n="[pick(prng, 23)]);
        break;
    }
  }
  return out;
}

// The input being run, so a crash can say which it was and keep it: a
// failed MQ_ASSERT aborts (SIGABRT), a sanitizer report ends the process
// through its death callback, and a wild access is a SIGSEGV or SIGBUS.
struct CurrentInput {
  const Bytes* bytes = nullptr;
  const char* corpus_file = nullptr;  // or, when null, mutant number `mutant`
  uint64_t mutant = 0;
  char path[128] = {};
};
CurrentInput g_current;

// Only async-signal-safe calls (open, write, close).
void keep_current_input() {
  static bool kept = false;
  if (kept || g_current.bytes == nullptr) return;
  kept = true;
  const int fd = ::open(g_current.path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    size_t done = 0;
    while (done < g_current.bytes->size()) {
      const ssize_t n = ::write(fd, g_current.bytes->data() + done, g_current.bytes->size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::close(fd);
  }
  char number[24];
  char* digits = std::end(number);
  *--digits = '\0';
  uint64_t n = g_current.mutant;
  do *--digits = static_cast<char>('0' + n % 10); while ((n /= 10) != 0);
  const char* what = g_current.corpus_file != nullptr ? g_current.corpus_file : digits;
  const char* parts[] = {"fuzz_replay: crashed on ", g_current.corpus_file != nullptr ? "" : "mutant ", what,
                         "; the input is in ", g_current.path, "\n"};
  for (const char* part : parts) (void)!::write(STDERR_FILENO, part, std::strlen(part));
}

extern "C" void on_fatal_signal(int signal_number) {
  keep_current_input();
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

void run(const FuzzTarget& target, const Bytes& input, const char* corpus_file, uint64_t mutant) {
  g_current.bytes = &input;
  g_current.corpus_file = corpus_file;
  g_current.mutant = mutant;
  target.test_one_input(input.data(), input.size());
  g_current.bytes = nullptr;
}

int usage(const char* message) {
  std::fprintf(stderr, "fuzz_replay: %s\nusage: fuzz_replay TARGET [--mutations N] [--seed S] DIR_OR_FILE...\ntargets:", message);
  for (const FuzzTarget& target : kTargets) std::fprintf(stderr, " %.*s", static_cast<int>(target.name.size()), target.name.data());
  std::fprintf(stderr, "\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage("no target");
  const std::string_view name = argv[1];
  const auto target = std::find_if(kTargets.begin(), kTargets.end(), [&](const FuzzTarget& t) { return t.name == name; });
  if (target == kTargets.end()) return usage(("unknown target " + std::string(name)).c_str());

  uint64_t mutations = 0;
  uint64_t seed = 1;
  std::vector<std::filesystem::path> inputs;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if ((arg == "--mutations" || arg == "--seed") && i + 1 < argc) {
      char* end = nullptr;
      const uint64_t value = std::strtoull(argv[++i], &end, 10);
      if (end == argv[i] || *end != '\0') return usage(("not a number: " + std::string(argv[i])).c_str());
      (arg == "--mutations" ? mutations : seed) = value;
    } else if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        if (entry.is_regular_file()) inputs.push_back(entry.path());
      }
    } else if (std::filesystem::is_regular_file(arg)) {
      inputs.emplace_back(arg);
    } else {
      return usage(("no such file or folder: " + std::string(arg)).c_str());
    }
  }
  std::sort(inputs.begin(), inputs.end());
  if (inputs.empty()) return usage("no corpus input given (an empty corpus would test nothing)");

  std::vector<Bytes> corpus;
  size_t largest = 0;
  for (const std::filesystem::path& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    largest = std::max(largest, corpus.back().size());
  }
  // libFuzzer's default -max_len is about what the seeds need; allow room to grow.
  const size_t max_size = std::max<size_t>(4096, 2 * largest);

  std::snprintf(g_current.path, sizeof(g_current.path), "fuzz-replay-crash-%.*s", static_cast<int>(name.size()),
                name.data());
  for (int signal_number : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(signal_number, on_fatal_signal);
  if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(keep_current_input);

  int fake_argc = 1;
  char** fake_argv = argv;
  target->initialize(&fake_argc, &fake_argv);

  for (size_t i = 0; i < corpus.size(); ++i) {
    run(*target, corpus[i], inputs[i].c_str(), 0);
  }
  mqlab::env::Random prng(seed);
  for (uint64_t m = 0; m < mutations; ++m) {
    const Bytes& base = corpus[pick(prng, corpus.size())];
    const Bytes& other = corpus[pick(prng, corpus.size())];
    const Bytes mutant = mutate(base, other, prng, max_size);
    run(*target, mutant, nullptr, m);
  }
  std::printf("fuzz_replay %.*s: %zu corpus inputs and %llu mutants (seed %llu), no crash\n",
              static_cast<int>(name.size()), name.data(), corpus.size(), static_cast<unsigned long long>(mutations),
              static_cast<unsigned long long>(seed));
  return 0;
}
