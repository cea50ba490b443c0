// draw_exponential: an Exp(1) variate by Marsaglia and Tsang's ziggurat
// (256 layers), for SimNet's latency jitter, drawn for every chunk sent.
//
// Why not -log1p(-u): the inverse CDF calls libm's log1p, about 50 cycles a
// draw with its dependent chain: 1.3-1.5% of a simulator run, the
// largest libm cost in it. The ziggurat returns u * x[i] for 98.9% of
// draws (a table lookup, a multiply, a compare), and exp or log only for
// the rest. Its output is defined by this code and the tables (built once
// from std::exp and std::log, each used the same way on every run), not by
// a library's inverse-CDF routine.
//
// The layers: x[0] > x[1] = r > ... > x[255] > x[256] = 0, each layer of
// area v under exp(-x) (layer 0 the base strip of width r plus the tail
// past r, as a rectangle of width x[0] = v / exp(-r)). A draw picks a
// layer i by the low 8 bits and a uniform u by the high 53 of one 64-bit
// word (disjoint bits: the layer and the point in it are independent), and
// z = u * x[i]: inside x[i + 1] it is under the curve; otherwise the base
// layer's point is in the tail (r plus a fresh Exp(1), by the exponential's
// lack of memory) and another layer's is in the wedge between the
// rectangle and the curve, taken when a uniform height falls under it.
//
// Invariants: x strictly decreases from x[0] to x[256] = 0; f[i] =
// exp(-x[i]).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

#include "broker/common/assert.h"
#include "broker/env/random.h"

namespace mqlab::sim {

namespace exponential_ziggurat {

inline constexpr int kLayers = 256;
inline constexpr double kR = 7.69711747013104972;                 // x[1]: where the tail starts
inline constexpr double kLayerArea = 0.0039496598225815571993;    // v

struct Tables {
  std::array<double, kLayers + 1> x{};
  std::array<double, kLayers + 1> f{};

  Tables() {
    x[0] = kLayerArea / std::exp(-kR);
    x[1] = kR;
    for (int i = 1; i < kLayers - 1; ++i) x[i + 1] = -std::log(kLayerArea / x[i] + std::exp(-x[i]));
    x[kLayers] = 0;
    for (int i = 0; i <= kLayers; ++i) f[i] = std::exp(-x[i]);
    for (int i = 0; i < kLayers; ++i) MQ_ASSERT(x[i] > x[i + 1]);
  }
};

inline const Tables& tables() {
  static const Tables kTables;
  return kTables;
}

// A layer and a point in its rectangle, from one word's disjoint bits.
struct Candidate {
  int layer;
  double z;
  bool inside(const Tables& t) const { return z < t.x[layer + 1]; }  // under the curve for sure
};
inline Candidate candidate(const Tables& t, uint64_t bits) {
  const int layer = static_cast<int>(bits & 0xFF);
  return {layer, static_cast<double>(bits >> 11) * 0x1.0p-53 * t.x[layer]};
}

// The draws that miss the layer's rectangle: the tail, or the wedge.
inline double draw_slowly(env::Random& random, const Tables& t, Candidate c) {
  while (true) {
    if (c.layer == 0) return kR - std::log1p(-random.unit());
    if (t.f[c.layer] + random.unit() * (t.f[c.layer + 1] - t.f[c.layer]) < std::exp(-c.z)) return c.z;
    c = candidate(t, random.next_u64());
    if (c.inside(t)) return c.z;
  }
}

}  // namespace exponential_ziggurat

// Exp(1): mean 1; scale by the mean wanted.
inline double draw_exponential(env::Random& random) {
  const exponential_ziggurat::Tables& t = exponential_ziggurat::tables();
  const exponential_ziggurat::Candidate c = exponential_ziggurat::candidate(t, random.next_u64());
  if (c.inside(t)) [[likely]] return c.z;
  return exponential_ziggurat::draw_slowly(random, t, c);
}

}  // namespace mqlab::sim
