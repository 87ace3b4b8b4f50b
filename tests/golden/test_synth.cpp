// Synthetic tensors: the libm-free log / sincos, Box-Muller layout, distributions, outlier
// channels, and independence from the thread split.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "fp4sim/philox.hpp"
#include "fp4sim/synth.hpp"

namespace fp4sim {
namespace {

TEST(Synth, LogMatchesLibm) {
  std::vector<double> us = {0x1p-53, 0x1p-52 + 0x1p-53, 1e-10, 0.1, 0.5, 0.70710678118654752, 0.75, 0.999,
                            1.0 - 0x1p-53, 1.0 - 0x1p-30, 1.0, 2.0, 10.0};
  for (uint64_t b = 0; b < 5000; ++b) {
    const auto w = philox_block(1, 5, b);
    us.push_back(uniform_open01(w[0], w[1]));
    us.push_back(uniform_open01(w[2], w[3]) * 0x1p-40);
  }
  for (double u : us) {
    const long double want = std::log(static_cast<long double>(u));
    const double got = synth_log(u);
    ASSERT_LE(std::fabs(static_cast<long double>(got) - want), 4e-16L * std::fabs(want) + 1e-300L) << u;
  }
  EXPECT_EQ(synth_log(1.0), 0.0);
}

TEST(Synth, SinCosMatchesLibm) {
  std::vector<double> us = {0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0 - 0x1p-53, 0x1p-53};
  for (uint64_t b = 0; b < 20000; ++b) {
    const auto w = philox_block(2, 6, b);
    us.push_back(uniform_open01(w[0], w[1]));
  }
  for (double u : us) {
    double s = 0, c = 0;
    synth_sincos_2pi(u, s, c);
    const long double a = 2.0L * std::numbers::pi_v<long double> * static_cast<long double>(u);
    ASSERT_LE(std::fabs(static_cast<long double>(s) - std::sin(a)), 1e-15L) << u;
    ASSERT_LE(std::fabs(static_cast<long double>(c) - std::cos(a)), 1e-15L) << u;
  }
  double s = 1, c = 1;
  synth_sincos_2pi(0.0, s, c);
  EXPECT_EQ(s, 0.0);
  EXPECT_EQ(c, 1.0);
  synth_sincos_2pi(0.5, s, c);
  EXPECT_EQ(s, 0.0);
  EXPECT_EQ(c, -1.0);
}

// The normals k = 2j and 2j+1 are the cosine and sine halves of one Box-Muller pair.
TEST(Synth, BoxMullerPairsShareARadius) {
  for (uint64_t j = 0; j < 1000; ++j) {
    const double a = standard_normal(9, kWeightStream, 2 * j), b = standard_normal(9, kWeightStream, 2 * j + 1);
    const auto w = philox_block(9, kWeightStream, j);
    const long double r2 = -2.0L * std::log(static_cast<long double>(uniform_open01(w[0], w[1])));
    ASSERT_NEAR(static_cast<long double>(a) * a + static_cast<long double>(b) * b, r2, 1e-13L * (1 + r2));
  }
}

// Reference values from the Philox words through long-double libm: an independent evaluation of
// the same formulas. Rounding to float hides the few-ulp differences of the double evaluation.
long double ref_normal(uint64_t seed, uint32_t stream, uint64_t k) {
  const auto w = philox_block(seed, stream, k / 2);
  const long double u1 = uniform_open01(w[0], w[1]), u2 = uniform_open01(w[2], w[3]);
  const long double r = std::sqrt(-2.0L * std::log(u1));
  const long double a = 2.0L * std::numbers::pi_v<long double> * u2;
  return r * ((k & 1) ? std::sin(a) : std::cos(a));
}

TEST(Synth, WeightsMatchAnIndependentEvaluation) {
  const size_t rows = 64, cols = 256;
  const auto w = llm_weights(rows, cols, 1234, 0.02);
  ASSERT_EQ(w.size(), rows * cols);
  for (size_t k = 0; k < w.size(); ++k) {
    ASSERT_EQ(w[k], static_cast<float>(static_cast<double>(static_cast<long double>(0.02) * ref_normal(1234, kWeightStream, k)))) << k;
  }
}

TEST(Synth, NormalMoments) {
  const size_t n = 250000;
  const auto w = llm_weights(500, 500, 77, 1.0);
  double m1 = 0, m2 = 0, m4 = 0, tail = 0;
  for (float v : w) {
    const double d = v;
    m1 += d;
    m2 += d * d;
    m4 += d * d * d * d;
    tail += std::fabs(d) > 2.0;
  }
  m1 /= n;
  m2 /= n;
  m4 /= n;
  // About 5 standard errors at n = 250000: mean 0.002, variance 0.0028, 4th moment 0.02,
  // P(|z| > 2) 0.0004.
  EXPECT_NEAR(m1, 0.0, 0.01);
  EXPECT_NEAR(m2, 1.0, 0.014);
  EXPECT_NEAR(m4, 3.0, 0.1);
  EXPECT_NEAR(tail / n, 0.0455, 0.002);
}

TEST(Synth, OutlierChannels) {
  const size_t cols = 4096;
  const auto oc = outlier_channels(cols, 5, 1.0 / 128.0);
  ASSERT_EQ(oc.size(), 32u);
  EXPECT_TRUE(std::is_sorted(oc.begin(), oc.end()));
  EXPECT_EQ(std::adjacent_find(oc.begin(), oc.end()), oc.end());
  // The chosen columns are exactly those with the 32 smallest keys.
  auto key = [](size_t c) {
    const auto w = philox_block(5, kOutlierStream, c);
    return (static_cast<uint64_t>(w[0]) << 32) | w[1];
  };
  uint64_t max_in = 0;
  for (size_t c : oc) max_in = std::max(max_in, key(c));
  for (size_t c = 0; c < cols; ++c) {
    if (!std::binary_search(oc.begin(), oc.end(), c)) {
      ASSERT_GT(key(c), max_in);
    }
  }
  EXPECT_NE(outlier_channels(cols, 6, 1.0 / 128.0), oc);
  EXPECT_TRUE(outlier_channels(cols, 5, 0.0).empty());
  EXPECT_EQ(outlier_channels(cols, 5, 1.0).size(), cols);
  EXPECT_EQ(outlier_channels(10, 5, 0.01).size(), 1u);  // at least one when fraction > 0
  EXPECT_THROW(outlier_channels(10, 5, 1.5), std::invalid_argument);
  EXPECT_THROW(outlier_channels(10, 5, std::nan("")), std::invalid_argument);
}

TEST(Synth, ActivationsHaveOutlierColumns) {
  const size_t rows = 512, cols = 1024;
  const auto x = llm_activations(rows, cols, 11);  // 1/128 -> 8 channels, scale 50
  const auto oc = outlier_channels(cols, 11, 1.0 / 128.0);
  ASSERT_EQ(oc.size(), 8u);
  std::vector<double> var(cols, 0.0);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) var[c] += static_cast<double>(x[r * cols + c]) * x[r * cols + c] / rows;
  }
  for (size_t c = 0; c < cols; ++c) {
    const bool out = std::binary_search(oc.begin(), oc.end(), c);
    // Sample variance of 512 normals: relative standard error 6%.
    if (out) {
      EXPECT_NEAR(var[c], 2500.0, 2500.0 * 0.3) << c;
    } else {
      EXPECT_NEAR(var[c], 1.0, 0.3) << c;
    }
  }
  for (size_t k = 0; k < x.size(); k += 101) {
    const double s = std::binary_search(oc.begin(), oc.end(), k % cols) ? 50.0 : 1.0;
    ASSERT_EQ(x[k], static_cast<float>(standard_normal(11, kActStream, k) * s));
  }
}

TEST(Synth, GradientsHaveAStudentT4Tail) {
  const size_t n = 250000;
  const double scale = 1e-4;
  const auto g = llm_gradients(500, 500, 3, scale);
  double gt2 = 0, gt5 = 0, pos = 0;
  for (float v : g) {
    const double t = v / scale;
    gt2 += std::fabs(t) > 2.0;
    gt5 += std::fabs(t) > 5.0;
    pos += v > 0;
  }
  // Student-t, 4 dof: P(|T| > t) = 1 - t (t^2 + 6) / (t^2 + 4)^(3/2).
  auto tail = [](double t) { return 1.0 - t * (t * t + 6.0) / std::pow(t * t + 4.0, 1.5); };
  // Tolerances about 5 standard errors at n = 250000.
  EXPECT_NEAR(gt2 / n, tail(2.0), 0.0035);  // 0.1161; a normal would give 0.0455
  EXPECT_NEAR(gt5 / n, tail(5.0), 0.001);   // 0.0075; a normal would give 6e-7
  EXPECT_NEAR(pos / n, 0.5, 0.005);
  // Element formula: scale * z / sqrt(chi2 / 4).
  for (size_t k = 0; k < g.size(); k += 9973) {
    const auto w = philox_block(3, kGradChiStream, k);
    const long double chi2 = -2.0L * (std::log(static_cast<long double>(uniform_open01(w[0], w[1]))) +
                                      std::log(static_cast<long double>(uniform_open01(w[2], w[3]))));
    const long double want = scale * ref_normal(3, kGradStream, k) / std::sqrt(chi2 / 4.0L);
    ASSERT_NEAR(static_cast<long double>(g[k]), want, std::fabs(want) * 1.2e-7L) << k;
  }
}

TEST(Synth, IndependentOfShapeAndThreads) {
  // Element k depends only on k: a larger tensor (generated with more threads) starts with the
  // smaller one, and every element equals the serial scalar formula.
  const auto small = llm_weights(3, 1000, 8);
  const auto big = llm_weights(300, 1000, 8);  // 3e5 elements: split over the available threads
  ASSERT_TRUE(std::equal(small.begin(), small.end(), big.begin()));
  for (size_t k = 0; k < big.size(); k += 7919) {
    ASSERT_EQ(big[k], static_cast<float>(0.02 * standard_normal(8, kWeightStream, k)));
  }
  EXPECT_NE(llm_weights(3, 1000, 9), small);
}

TEST(Synth, RejectsBadScales) {
  EXPECT_THROW(llm_weights(2, 2, 1, -1.0), std::invalid_argument);
  EXPECT_THROW(llm_weights(2, 2, 1, 1e30), std::invalid_argument);
  EXPECT_THROW(llm_gradients(2, 2, 1, std::nan("")), std::invalid_argument);
  EXPECT_THROW(llm_activations(2, 2, 1, 2.0), std::invalid_argument);
  EXPECT_THROW(llm_activations(2, 2, 1, 0.5, std::numeric_limits<double>::infinity()), std::invalid_argument);
}

}  // namespace
}  // namespace fp4sim
