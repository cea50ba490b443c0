// Random: a seeded PRNG whose output is defined by this file alone
// (xoshiro256** seeded through splitmix64), never by the standard library's
// implementation-defined distributions. One seed gives one stream on every
// platform; split() derives an independent stream, so that one more draw in
// one component does not shift every other component's draws.
#pragma once

#include <cstdint>

#include "broker/common/assert.h"

namespace mqlab::env {

class Random {
 public:
  explicit Random(uint64_t seed) { reseed(seed); }

  void reseed(uint64_t seed) {
    uint64_t x = seed;
    for (uint64_t& word : state_) word = splitmix64(x);
  }

  uint64_t next_u64() {
    const uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, bound). Requires: bound > 0. Rejection sampling, no bias.
  uint64_t uniform(uint64_t bound) {
    MQ_ASSERT(bound > 0);
    const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x = next_u64();
    while (x >= limit) x = next_u64();
    return x % bound;
  }

  // Uniform in [lo, hi]. Requires: lo <= hi.
  int64_t range(int64_t lo, int64_t hi) {
    MQ_ASSERT(lo <= hi);
    const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
    if (span == 0) return static_cast<int64_t>(next_u64());  // the full 64-bit range
    return static_cast<int64_t>(static_cast<uint64_t>(lo) + uniform(span));
  }

  // Uniform in [0, 1) with 53 bits of precision.
  double unit() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  bool chance(double probability) { return unit() < probability; }

  // An independent stream derived from this one's next draws.
  Random split() { return Random(next_u64() ^ 0x9E3779B97F4A7C15ull); }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t state_[4] = {};
};

}  // namespace mqlab::env
