// Quality metrics: hand-derived values, skip rules, saturation, and compensated sums.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "fp4sim/metrics.hpp"
#include "fp4sim/quant.hpp"

namespace fp4sim {
namespace {

TEST(Metrics, HandExample) {
  const std::vector<float> x = {1, 2, 3, 4}, dq = {1, 2, 3, 5};
  const Quality q = quality(x, dq);
  EXPECT_EQ(q.n, 4u);
  EXPECT_EQ(q.mse, 0.25);   // one error of 1 over 4
  EXPECT_EQ(q.bias, 0.25);  // mean(dq - x)
  EXPECT_NEAR(q.qsnr_db, 10.0 * std::log10(30.0), 1e-12);  // sum x^2 = 30, sum e^2 = 1
  EXPECT_EQ(q.frac_zero, 0.0);
  EXPECT_TRUE(std::isnan(q.frac_saturated));  // no codes given
}

TEST(Metrics, ExactReconstruction) {
  const std::vector<float> x = {-1.5f, 0.0f, 6.0f};
  const Quality q = quality(x, x);
  EXPECT_EQ(q.mse, 0.0);
  EXPECT_EQ(q.bias, 0.0);
  EXPECT_EQ(q.qsnr_db, std::numeric_limits<double>::infinity());
}

TEST(Metrics, FractionFlushedToZero) {
  // Three non-zero inputs, two of which dequantize to (+-)0; the zero input does not count.
  const std::vector<float> x = {0.0f, 1e-3f, -2e-3f, 5.0f}, dq = {0.0f, 0.0f, -0.0f, 5.0f};
  const Quality q = quality(x, dq);
  EXPECT_DOUBLE_EQ(q.frac_zero, 2.0 / 3.0);
  EXPECT_EQ(q.n, 4u);
  EXPECT_EQ(quality(std::vector<float>{0.0f}, std::vector<float>{0.0f}).frac_zero, 0.0);
}

TEST(Metrics, NonFiniteAreSkippedAndCounted) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {nan, inf, 1.0f, 2.0f, 3.0f}, dq = {0.0f, 0.0f, 1.5f, nan, 3.0f};
  const Quality q = quality(x, dq);
  EXPECT_EQ(q.n_nonfinite_x, 2u);
  EXPECT_EQ(q.n_nonfinite_dq, 1u);
  EXPECT_EQ(q.n, 2u);
  EXPECT_EQ(q.mse, 0.125);   // (0.5^2 + 0) / 2
  EXPECT_EQ(q.bias, 0.25);   // (0.5 + 0) / 2
  const Quality none = quality(std::vector<float>{nan}, std::vector<float>{1.0f});
  EXPECT_EQ(none.n, 0u);
  EXPECT_TRUE(std::isnan(none.mse) && std::isnan(none.bias) && std::isnan(none.qsnr_db));
}

TEST(Metrics, SaturationNeedsTopCodeAndClipping) {
  Quantized qz;
  qz.format = BlockFormat::Mxfp4;  // E2M1: max magnitude code 7 (6.0)
  qz.rows = 1;
  qz.cols = 4;
  qz.codes = {0x7, 0xF, 0x7, 0x3};
  const std::vector<float> x = {7.0f, -8.0f, 5.5f, 1.5f}, dq = {6.0f, -6.0f, 6.0f, 1.5f};
  // 0: top code, |7| > 6 -> clipped; 1: -max, |-8| > 6 -> clipped; 2: top code but rounded up, not
  // clipped; 3: not the top code.
  EXPECT_EQ(quality(x, dq, qz).frac_saturated, 0.5);
  EXPECT_EQ(kE2M1.max_code(), 7u);
  qz.codes = {0x6, 0xE, 0x7, 0x3};
  EXPECT_EQ(quality(x, dq, qz).frac_saturated, 0.0);
}

TEST(Metrics, OnARealMxfp4Block) {
  // Block amax 7: OCP floor scale 2^(floor(log2 7) - 2) = 1, so 7 saturates to 6 and 0.5 is exact.
  std::vector<float> x(32, 0.5f);
  x[5] = 7.0f;
  const Quantized q = quantize(BlockFormat::Mxfp4, x, 1, 32);
  const std::vector<float> dq = dequantize(q);
  const Quality m = quality(x, dq, q);
  EXPECT_EQ(dq[5], 6.0f);
  EXPECT_EQ(m.n, 32u);
  EXPECT_EQ(m.mse, 1.0 / 32.0);
  EXPECT_EQ(m.bias, -1.0 / 32.0);
  EXPECT_EQ(m.frac_saturated, 1.0 / 32.0);
  EXPECT_EQ(m.frac_zero, 0.0);
  EXPECT_NEAR(m.qsnr_db, 10.0 * std::log10((31 * 0.25 + 49.0) / 1.0), 1e-12);
}

TEST(Metrics, CompensatedSums) {
  // One error of 1 then 2^20 errors of 2^-30: each square (2^-60) is below half an ulp of the
  // running sum, so plain summation would return exactly 1; the compensated sum keeps them.
  const size_t m = size_t{1} << 20;
  std::vector<float> x(m + 1, 0.0f), dq(m + 1, 0x1p-30f);
  dq[0] = 1.0f;
  const Quality q = quality(x, dq);
  const double want = (1.0 + static_cast<double>(m) * 0x1p-60) / static_cast<double>(m + 1);
  EXPECT_EQ(q.mse, want);
  EXPECT_NE(q.mse, 1.0 / static_cast<double>(m + 1));
}

TEST(Metrics, RejectsSizeMismatch) {
  EXPECT_THROW(quality(std::vector<float>{1, 2}, std::vector<float>{1}), std::invalid_argument);
  Quantized qz;
  qz.codes = {1};
  EXPECT_THROW(quality(std::vector<float>{1, 2}, std::vector<float>{1, 2}, qz), std::invalid_argument);
}

}  // namespace
}  // namespace fp4sim
