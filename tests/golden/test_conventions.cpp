// Quantizer conventions (docs/formats.md, "Conventions"): te, torchao, modelopt.
//
// Every expectation is derived here from the library's formula in plain FP32 (the values are small
// enough to work out by hand), and the random check compares against a transcription of torchao's
// and ModelOpt's NVFP4 formulas written in this file, whose E2M1 / E4M3 rounding picks the nearest
// value from an explicit list (ties to the even code), independent of golden's encoders.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "fp4sim/quant.hpp"

namespace {

using fp4sim::BlockFormat;
using fp4sim::Convention;
using fp4sim::QuantOptions;
using fp4sim::ScaleRule;

QuantOptions conv(Convention c, ScaleRule r = ScaleRule::Floor) {
  QuantOptions o;
  o.convention = c;
  o.scale_rule = r;
  return o;
}

// Nearest entry of a sorted value list, a tie to the even index (the even code).
int nearest_even(const std::vector<double>& v, double a) {
  int best = 0;
  for (int i = 1; i < static_cast<int>(v.size()); ++i) {
    const double d = std::fabs(v[i] - a), db = std::fabs(v[best] - a);
    if (d < db || (d == db && i % 2 == 0)) best = i;
  }
  return best;
}
const std::vector<double> kE2m1 = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
std::vector<double> e4m3_values() {  // codes 0x00..0x7E in order
  std::vector<double> v;
  for (int c = 0; c < 0x7F; ++c) {
    const int e = c >> 3, m = c & 7;
    v.push_back(e == 0 ? m * std::ldexp(1.0, -9) : (1 + m / 8.0) * std::ldexp(1.0, e - 7));
  }
  return v;
}

TEST(Conventions, ZeroBlockScales) {
  std::vector<float> x(32, 0.0f);
  x[16] = 1.0f;  // block 1 non-zero, so the tensor scale is defined
  // te: m * 0 = 0 -> code 0. torchao: clamp(0, min 2^-6) -> E4M3 2^-6 = code 0x08.
  // ModelOpt: a zero scale becomes 1.0 -> code 0x38 (exponent 7, mantissa 0).
  EXPECT_EQ(fp4sim::quantize(BlockFormat::Nvfp4, x, 1, 32, conv(Convention::Te)).scales[0], 0x00);
  EXPECT_EQ(fp4sim::quantize(BlockFormat::Nvfp4, x, 1, 32, conv(Convention::Torchao)).scales[0], 0x08);
  EXPECT_EQ(fp4sim::quantize(BlockFormat::Nvfp4, x, 1, 32, conv(Convention::Modelopt)).scales[0], 0x38);
}

TEST(Conventions, NegativeZero) {
  std::vector<float> x(16, 1.0f);
  x[3] = -0.0f;
  // te and ModelOpt (x < 0): +0 code 0; torchao copies the sign bit: 0x8.
  EXPECT_EQ(fp4sim::quantize(BlockFormat::Nvfp4, x, 1, 16, conv(Convention::Te)).codes[3], 0x0);
  EXPECT_EQ(fp4sim::quantize(BlockFormat::Nvfp4, x, 1, 16, conv(Convention::Torchao)).codes[3], 0x8);
  EXPECT_EQ(fp4sim::quantize(BlockFormat::Nvfp4, x, 1, 16, conv(Convention::Modelopt)).codes[3], 0x0);
  // MX: torchao FP8 cast keeps the sign: -0 -> 0x80.
  std::vector<float> y(32, 1.0f);
  y[5] = -0.0f;
  EXPECT_EQ(fp4sim::quantize(BlockFormat::Mxfp8E4M3, y, 1, 32, conv(Convention::Torchao)).codes[5], 0x80);
  EXPECT_EQ(fp4sim::quantize(BlockFormat::Mxfp8E4M3, y, 1, 32, conv(Convention::Te)).codes[5], 0x00);
}

TEST(Conventions, ModeloptMxfp4TiesDownAndSignedZeros) {
  // amax 6: RN(6/6) = 1, ceil(log2 1) = 0, scale code 127, elements x / 1.
  std::vector<float> x(32, 0.0f);
  x[0] = 6.0f, x[1] = 1.75f, x[2] = 0.75f, x[3] = -1.25f, x[4] = 5.0f;
  const auto q = fp4sim::quantize(BlockFormat::Mxfp4, x, 1, 32, conv(Convention::Modelopt, ScaleRule::Ceil));
  EXPECT_EQ(q.scales[0], 127);
  EXPECT_EQ(q.codes[0], 7);        // 6
  EXPECT_EQ(q.codes[1], 3);        // tie 1.75 -> 1.5 (RNE: 2.0, code 4)
  EXPECT_EQ(q.codes[2], 1);        // tie 0.75 -> 0.5 (RNE: 1.0, code 2)
  EXPECT_EQ(q.codes[3], 0x8 | 2);  // tie -1.25 -> -1.0 (both agree)
  EXPECT_EQ(q.codes[4], 6);        // tie 5: six bounds lie strictly below -> 4.0 (RNE agrees)
  EXPECT_EQ(q.codes[5], 0x8);      // +0 -> sign bit set: (2 - sign(0)) // 2 = 1
}

TEST(Conventions, TorchaoRceilFlushAndTeNoFlush) {
  // amax 6 * 2^-128: RN(amax / 6) = 2^-128 <= 2^-127 -> ceil(log2) = -128, clamped to -127, code 0.
  // torchao scales code 0 by 1 (not 2^127): 6 * 2^-128 stays tiny -> code 0. fp4sim's ceil rule
  // (te) multiplies by 2^127: 6 * 2^-128 * 2^127 = 3 -> code 5.
  std::vector<float> x(32, 0.0f);
  x[0] = std::ldexp(6.0f, -128);
  const auto ta = fp4sim::quantize(BlockFormat::Mxfp4, x, 1, 32, conv(Convention::Torchao, ScaleRule::Ceil));
  const auto te = fp4sim::quantize(BlockFormat::Mxfp4, x, 1, 32, conv(Convention::Te, ScaleRule::Ceil));
  EXPECT_EQ(ta.scales[0], 0);
  EXPECT_EQ(ta.codes[0], 0);
  EXPECT_EQ(te.scales[0], 0);
  EXPECT_EQ(te.codes[0], 5);
  // amax 6 * 2^-126: RN(amax / 6) = 2^-126, code 1, scaled by 2^126 -> 6 -> code 7.
  x[0] = std::ldexp(6.0f, -126);
  EXPECT_EQ(fp4sim::quantize(BlockFormat::Mxfp4, x, 1, 32, conv(Convention::Torchao, ScaleRule::Ceil)).codes[0], 7);
}

TEST(Conventions, TorchaoFloorCodeZeroDivisor) {
  // amax 2^-125: FP32 exponent field 2 -> -125 - emax(2) = -127 -> code 0; torchao divides by
  // max(2^-127 as FP32 bits = 0, 2^-126) = 2^-126: 2^-125 / 2^-126 = 2 -> code 4. te: 2^-125 / 2^-127 = 4 -> code 6.
  std::vector<float> x(32, 0.0f);
  x[0] = std::ldexp(1.0f, -125);
  const auto ta = fp4sim::quantize(BlockFormat::Mxfp4, x, 1, 32, conv(Convention::Torchao));
  const auto te = fp4sim::quantize(BlockFormat::Mxfp4, x, 1, 32, conv(Convention::Te));
  EXPECT_EQ(ta.scales[0], 0);
  EXPECT_EQ(ta.codes[0], 4);
  EXPECT_EQ(te.scales[0], 0);
  EXPECT_EQ(te.codes[0], 6);
}

TEST(Conventions, MinimumScaleClamps) {
  // Block 0 amax 2^-20 beside a block of amax 2688 (S_dec = 2688 / 2688 = 1): the block scale
  // 2^-20 / 6 is below every clamp. torchao -> 2^-6 (0x08); ModelOpt -> 2^-9 (0x01); te -> 0.
  std::vector<float> x(32, 0.0f);
  x[0] = std::ldexp(1.0f, -20);
  x[16] = 2688.0f;
  EXPECT_EQ(fp4sim::quantize(BlockFormat::Nvfp4, x, 1, 32, conv(Convention::Torchao)).scales[0], 0x08);
  EXPECT_EQ(fp4sim::quantize(BlockFormat::Nvfp4, x, 1, 32, conv(Convention::Modelopt)).scales[0], 0x01);
  EXPECT_EQ(fp4sim::quantize(BlockFormat::Nvfp4, x, 1, 32, conv(Convention::Te)).scales[0], 0x00);
}

TEST(Conventions, UnsupportedFormatsAndOptions) {
  std::vector<float> x(64, 1.0f);
  EXPECT_THROW(fp4sim::quantize(BlockFormat::Hif4, x, 1, 64, conv(Convention::Torchao)), std::invalid_argument);
  EXPECT_THROW(fp4sim::quantize(BlockFormat::Mxfp8E5M2, x, 1, 64, conv(Convention::Modelopt, ScaleRule::Ceil)),
               std::invalid_argument);
  QuantOptions sr = conv(Convention::Torchao);
  sr.rounding = fp4sim::Rounding::Sr;
  EXPECT_THROW(fp4sim::quantize(BlockFormat::Nvfp4, x, 1, 64, sr), std::invalid_argument);
}

// NVFP4 of torchao (0.18.0) and ModelOpt (0.47.0), transcribed from their formulas in FP32.
void reference_nvfp4(Convention c, const std::vector<float>& x, std::vector<uint8_t>& codes,
                     std::vector<uint8_t>& scales) {
  static const std::vector<double> e4m3 = e4m3_values();
  float amax = 0;
  for (float v : x) amax = std::max(amax, std::fabs(v));
  const float s_dec = amax / 2688.0f;
  for (size_t b = 0; b < x.size() / 16; ++b) {
    float bamax = 0;
    for (size_t i = 0; i < 16; ++i) bamax = std::max(bamax, std::fabs(x[b * 16 + i]));
    float s = c == Convention::Torchao ? (bamax / 6.0f) / s_dec : bamax / (6.0f * s_dec);
    if (c == Convention::Modelopt && s == 0.0f) s = 1.0f;
    s = std::min(std::max(s, c == Convention::Torchao ? 0x1p-6f : 0x1p-9f), 448.0f);
    const int sc = nearest_even(e4m3, s);
    scales.push_back(static_cast<uint8_t>(sc));
    const float sf = static_cast<float>(e4m3[sc]);
    for (size_t i = 0; i < 16; ++i) {
      const float xi = x[b * 16 + i];
      const float v = c == Convention::Torchao ? xi * ((1.0f / s_dec) / sf) : xi / (sf * s_dec);
      const bool neg = c == Convention::Torchao ? std::signbit(v) : v < 0.0f;
      const int m = nearest_even(kE2m1, std::min(std::fabs(static_cast<double>(v)), 6.0));
      codes.push_back(static_cast<uint8_t>(m | (neg ? 8 : 0)));
    }
  }
}

TEST(Conventions, RandomBf16DifferentialNvfp4) {
  std::mt19937 rng(24);
  std::normal_distribution<float> nd;
  for (Convention c : {Convention::Torchao, Convention::Modelopt}) {
    for (int t = 0; t < 20; ++t) {
      std::vector<float> x(16 * 64);
      for (float& v : x) {
        v = nd(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 16) - 8);
        uint32_t u = std::bit_cast<uint32_t>(v);  // RNE to BF16
        u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
        v = std::bit_cast<float>(u);
      }
      for (int i = 0; i < 16; ++i) x[static_cast<size_t>(16 * (t % 64) + i)] = 0.0f;  // a zero block
      std::vector<uint8_t> rc, rs;
      reference_nvfp4(c, x, rc, rs);
      const auto q = fp4sim::quantize(BlockFormat::Nvfp4, x, 4, 256, conv(c));
      ASSERT_EQ(q.scales, rs) << fp4sim::convention_name(c) << " trial " << t;
      ASSERT_EQ(q.codes, rc) << fp4sim::convention_name(c) << " trial " << t;
    }
  }
}

TEST(Conventions, DequantScaleFirst) {
  // torchao / ModelOpt dequantize q * RN(s * S_dec); ModelOpt decodes code 0x8 as +0.
  std::vector<float> x(16, 0.0f);
  x[0] = 6.0f, x[1] = -0.0f;
  const auto ta = fp4sim::quantize(BlockFormat::Nvfp4, x, 1, 16, conv(Convention::Torchao));
  const float s_dec = 6.0f / 2688.0f;
  const float sf = static_cast<float>(e4m3_values()[ta.scales[0]]);
  const auto d = fp4sim::dequantize(ta);
  EXPECT_EQ(d[0], 6.0f * (sf * s_dec));
  EXPECT_TRUE(std::signbit(d[1]));  // torchao keeps -0
}

}  // namespace
