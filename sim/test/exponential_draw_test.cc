// draw_exponential gives Exp(1): its layers each hold the same area under
// exp(-x), and 400,000 draws of a fixed seed have the exponential's mean,
// variance and tail, and a Kolmogorov-Smirnov distance from its CDF below
// the 1% critical value; the same seed gives the same draws.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "broker/env/random.h"
#include "sim/exponential_draw.h"

namespace mqlab::sim::exponential_draw_test {
namespace {

namespace zig = exponential_ziggurat;

TEST(ExponentialDraw, EveryLayerHoldsTheSameArea) {
  const zig::Tables& t = zig::tables();
  EXPECT_EQ(t.x[1], zig::kR);
  EXPECT_EQ(t.x[zig::kLayers], 0.0);
  // The base: the rectangle up to r and the tail past it.
  EXPECT_NEAR(zig::kR * std::exp(-zig::kR) + std::exp(-zig::kR), zig::kLayerArea, 1e-12);
  EXPECT_NEAR(t.x[0] * t.f[1], zig::kLayerArea, 1e-15);  // the base as one rectangle of height exp(-r)
  for (int i = 1; i < zig::kLayers; ++i) {
    ASSERT_GT(t.x[i], t.x[i + 1]) << i;
    EXPECT_NEAR(t.f[i], std::exp(-t.x[i]), 1e-15) << i;
    EXPECT_NEAR(t.x[i] * (t.f[i + 1] - t.f[i]), zig::kLayerArea, 1e-12) << i;
  }
}

TEST(ExponentialDraw, DrawsFollowTheExponential) {
  constexpr size_t kDraws = 400'000;
  env::Random random(20261206);
  std::vector<double> draws(kDraws);
  double sum = 0;
  double sum_squares = 0;
  size_t past_r = 0;
  for (double& draw : draws) {
    draw = draw_exponential(random);
    ASSERT_GE(draw, 0.0);
    sum += draw;
    sum_squares += draw * draw;
    if (draw > zig::kR) ++past_r;
  }
  const double mean = sum / kDraws;
  const double variance = sum_squares / kDraws - mean * mean;
  EXPECT_NEAR(mean, 1.0, 0.006);      // 4 standard errors (1 / sqrt(n) = 0.0016)
  EXPECT_NEAR(variance, 1.0, 0.02);   // the variance's standard error is about 2.2 / sqrt(n)
  // P(X > r) = exp(-r) = 4.5e-4: about 181 of them (the tail path).
  EXPECT_GT(past_r, 120u);
  EXPECT_LT(past_r, 250u);
  std::sort(draws.begin(), draws.end());
  double distance = 0;
  for (size_t i = 0; i < kDraws; ++i) {
    const double cdf = -std::expm1(-draws[i]);
    distance = std::max({distance, cdf - static_cast<double>(i) / kDraws, static_cast<double>(i + 1) / kDraws - cdf});
  }
  EXPECT_LT(distance, 1.63 / std::sqrt(static_cast<double>(kDraws)));
}

TEST(ExponentialDraw, TheSameSeedGivesTheSameDraws) {
  env::Random a(7);
  env::Random b(7);
  env::Random c(8);
  bool differs = false;
  for (int i = 0; i < 1000; ++i) {
    const double draw = draw_exponential(a);
    EXPECT_EQ(draw, draw_exponential(b));
    differs = differs || draw != draw_exponential(c);
  }
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace mqlab::sim::exponential_draw_test
