// Facts stated in the seed papers, recomputed from the library (decode tables, quantize,
// dequantize) rather than typed in: the NVFP4 paper's MXFP4 round-up-scale example, the
// dynamic ranges quoted for NVFP4 (~22 binades) and HiF4 (~69 binades), and NVFP4 keeping each
// block's amax to FP8 precision.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "fp4sim/quant.hpp"

using namespace fp4sim;

namespace {

// Smallest positive and largest finite value of a decode table (NaN/Inf/negative skipped).
struct Range {
  double minpos = INFINITY, max = 0.0;
  uint32_t min_code = 0, max_code = 0;
};
Range range_of(const ElemFormat& f) {
  Range r;
  const DecodeTable& t = decode_table(f);
  const uint32_t n = f.bits >= 8 ? 256u : 1u << f.bits;
  for (uint32_t c = 0; c < n; ++c) {
    const double v = static_cast<double>(t.v[c]);
    if (!std::isfinite(v) || v <= 0.0) continue;
    if (v < r.minpos) {
      r.minpos = v;
      r.min_code = c;
    }
    if (v > r.max) {
      r.max = v;
      r.max_code = c;
    }
  }
  return r;
}

// (1) NVFP4 paper: MXFP4 with a power-of-two scale rounded *up* (fp4sim's `ceil` rule). A block
// with amax = 3 + eps gets scale 1 (the smallest 2^e >= amax/6 = 0.5 + eps/6), so its largest
// element lands on 3, not 6: only log2(3/0.5) ~ 2.58 of the log2(6/0.5) ~ 3.58 binades of E2M1 are
// used.
TEST(PaperFacts, Mxfp4RoundUpScaleUsesFewerBinades) {
  const float amax = std::ldexp(3.0f, 0) * (1.0f + std::ldexp(1.0f, -20));  // 3 + 3*2^-20, exact
  ASSERT_GT(amax, 3.0f);
  std::vector<float> x(32);
  std::mt19937_64 rng(1);
  for (size_t i = 1; i < 32; ++i) x[i] = amax * static_cast<float>(static_cast<double>(rng() >> 11) * 0x1p-53) * ((i & 1) ? -1.0f : 1.0f);
  x[0] = amax;
  QuantOptions ceil;
  ceil.scale_rule = ScaleRule::Ceil;
  const Quantized q = quantize(BlockFormat::Mxfp4, x, 1, 32, ceil);
  EXPECT_EQ(block_scale_value(q, 0), 1.0);
  const Range e2m1 = range_of(kE2M1);
  const double top = decode(kE2M1, q.codes[0]);  // where the block's amax lands
  EXPECT_EQ(top, 3.0);
  for (uint8_t c : q.codes) EXPECT_LE(std::fabs(decode(kE2M1, c)), top);
  const double used = std::log2(top / e2m1.minpos);
  const double avail = std::log2(e2m1.max / e2m1.minpos);
  std::printf("MXFP4 ceil-scale block, amax = 3(1+2^-20): largest element %.17g, binades used %.6f of %.6f\n", top,
              used, avail);
  EXPECT_NEAR(used, 2.58, 0.01);
  EXPECT_NEAR(avail, 3.58, 0.01);
  EXPECT_EQ(avail - used, 1.0);  // one whole binade (3 -> 6) idle
  // The OCP floor rule on the same block uses the top: scale 1/2, element 6.
  const Quantized qf = quantize(BlockFormat::Mxfp4, x, 1, 32);
  EXPECT_EQ(block_scale_value(qf, 0), 0.5);
  EXPECT_EQ(decode(kE2M1, qf.codes[0]), e2m1.max);
}

// (2) Dynamic range = log2(largest / smallest positive representable magnitude) of element x
// scale (x levels for HiF4), each end realized by the library's dequantize().
TEST(PaperFacts, DynamicRanges) {
  const Range e2m1 = range_of(kE2M1), ue4m3 = range_of(kUE4M3), e6m2 = range_of(kE6M2), s1p2 = range_of(kS1P2),
              ue8m0 = range_of(kUE8M0);
  // NVFP4: E2M1 element x UE4M3 block scale (subnormal scales included), PTS off.
  auto nv = [&](uint32_t ec, uint32_t sc) {
    Quantized q;
    q.format = BlockFormat::Nvfp4;
    q.rows = 1;
    q.cols = 16;
    q.codes.assign(16, static_cast<uint8_t>(ec));
    q.scales.assign(1, static_cast<uint8_t>(sc));
    q.global_scale = 1.0f;
    return static_cast<double>(dequantize(q)[0]);
  };
  const double nv_max = nv(e2m1.max_code, ue4m3.max_code), nv_min = nv(e2m1.min_code, ue4m3.min_code);
  EXPECT_EQ(nv_max, e2m1.max * ue4m3.max);
  EXPECT_EQ(nv_min, e2m1.minpos * ue4m3.minpos);
  const double nv_range = std::log2(nv_max / nv_min);
  // HiF4: S1P2 element x E6M2 x 2^(level2 + level3), levels 0..2.
  auto hf = [&](uint32_t ec, uint32_t word) {
    Quantized q;
    q.format = BlockFormat::Hif4;
    q.rows = 1;
    q.cols = 64;
    q.codes.assign(64, static_cast<uint8_t>(ec));
    q.scale_words.assign(1, word);
    return static_cast<double>(dequantize(q)[0]);
  };
  const double hf_max = hf(s1p2.max_code, 0xFFFFFF00u | e6m2.max_code);
  const double hf_min = hf(s1p2.min_code, e6m2.min_code);
  EXPECT_EQ(hf_max, s1p2.max * e6m2.max * 4.0);
  EXPECT_EQ(hf_min, s1p2.minpos * e6m2.minpos);
  const double hf_range = std::log2(hf_max / hf_min);
  const double mx_range = std::log2(e2m1.max * ue8m0.max / (e2m1.minpos * ue8m0.minpos));
  std::printf("NVFP4 range: %.9g / %.9g = 2^%.6f (paper: ~22)\n", nv_max, nv_min, nv_range);
  std::printf("HiF4  range: %.9g / %.9g = 2^%.6f (paper: ~69)\n", hf_max, hf_min, hf_range);
  std::printf("MXFP4 range (for comparison): 2^%.6f\n", mx_range);
  // log2(6*448 / (0.5*2^-9)) = log2(2688) + 10 = 21.39; log2(1.75*49152*4 / (0.25*2^-48)) = 68.39.
  EXPECT_NEAR(nv_range, 22.0, 1.0);
  EXPECT_NEAR(hf_range, 69.0, 1.0);
  EXPECT_NEAR(nv_range, std::log2(2688.0) + 10.0, 1e-12);
  EXPECT_NEAR(hf_range, std::log2(344064.0) + 50.0, 1e-12);
}

// (3) NVFP4 stores each block's scale in E4M3, so (with PTS, the block amax mapped near 6 * scale)
// the largest element of a block dequantizes to its true amax within E4M3's relative rounding
// error 2^-4 (half of the 2^-3 mantissa step), as long as the scale is a normal E4M3 number:
// sdec = amax*S_enc/6 rounds to s8 with |s8 - sdec| <= 2^-4 sdec, the element x/(s8 S_dec) lies
// in 6 * [1/(1+2^-4), 1/(1-2^-4)] = [5.65, 6.4] and rounds to 6, and 6 s8 S_dec = amax * s8/sdec.
// FP32 roundings of S_enc, S_dec, RN(1/6) and the products add a few ulps (slack 2^-20).
TEST(PaperFacts, Nvfp4KeepsBlockAmaxToFp8Precision) {
  std::mt19937_64 rng(42);
  auto u01 = [&]() { return static_cast<double>(rng() >> 11) * 0x1p-53; };
  double worst_nv = 0.0, worst_mx = 0.0;
  size_t blocks = 0;
  for (int t = 0; t < 220; ++t) {
    const size_t R = 32, C = 256;
    std::vector<float> x(R * C);
    const int base = static_cast<int>(rng() % 120) - 60;
    for (size_t b = 0; b < R * C / 16; ++b) {
      const int be = base - static_cast<int>(rng() % 12);  // block amaxes within 2^12 of the top
      for (size_t i = 0; i < 16; ++i) x[b * 16 + i] = static_cast<float>((u01() * 2.0 - 1.0) * std::ldexp(1.0, be));
    }
    const Quantized q = quantize(BlockFormat::Nvfp4, x, R, C);
    const std::vector<float> d = dequantize(q);
    const Quantized qm = quantize(BlockFormat::Mxfp4, x, R, C);
    const std::vector<float> dm = dequantize(qm);
    for (size_t b = 0; b < R * C / 16; ++b) {
      size_t arg = b * 16;
      for (size_t i = b * 16; i < b * 16 + 16; ++i) {
        if (std::fabs(x[i]) > std::fabs(x[arg])) arg = i;
      }
      const double a = std::fabs(static_cast<double>(x[arg]));
      if (a == 0.0 || q.scales[b] < 0x08) continue;  // subnormal E4M3 scale: fewer bits
      ++blocks;
      EXPECT_EQ(q.codes[arg] & 7u, 7u) << "block " << b;  // the amax element maps to ±6
      const double rel = std::fabs(std::fabs(static_cast<double>(d[arg])) - a) / a;
      worst_nv = std::max(worst_nv, rel);
      EXPECT_LE(rel, 0x1p-4 + 0x1p-20) << "block " << b << " amax " << a << " dequantized " << d[arg];
    }
    // For contrast, the same statistic for MXFP4 (block 32, power-of-two scale, floor rule):
    // its amax element can be clipped from just under 8 to 6 (-25%) or round 5 -> 4 (-20%).
    for (size_t b = 0; b < R * C / 32; ++b) {
      size_t arg = b * 32;
      for (size_t i = b * 32; i < b * 32 + 32; ++i) {
        if (std::fabs(x[i]) > std::fabs(x[arg])) arg = i;
      }
      const double a = std::fabs(static_cast<double>(x[arg]));
      if (a > 0.0) worst_mx = std::max(worst_mx, std::fabs(std::fabs(static_cast<double>(dm[arg])) - a) / a);
    }
  }
  std::printf("%zu NVFP4 blocks: worst |deq(amax elem) - amax|/amax = %.6f (bound 2^-4 = %.6f); MXFP4: %.6f\n",
              blocks, worst_nv, 0x1p-4, worst_mx);
  EXPECT_GT(blocks, 100000u);
  EXPECT_GT(worst_nv, 0x1p-5);  // the bound is approached, not vacuous
  EXPECT_GT(worst_mx, 0x1p-4);  // MXFP4's power-of-two scale cannot keep amax to FP8 precision
}

}  // namespace
