// HiF4 (SPEC §2.3): 64 S1P2 elements, one 32-bit scale word (E6M2 + 8 level-2 bits + 16
// level-3 bits), quantized like the official HiFloat4 library's To_HiFX (N=4, M=2, G=64).
//
// The reference below follows the SPEC steps with exact double arithmetic: every product is of
// an FP32 value (24 bits) and a BF16 value (8 bits), so it is exact in double; roundings to BF16
// and to E6M2's 3 significant bits are written out as integer-significand rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "fp4sim/philox.hpp"
#include "fp4sim/quant.hpp"

using namespace fp4sim;

namespace {

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr float kInff = std::numeric_limits<float>::infinity();
constexpr int kG = 64;

// Round v > 0 to `bits` significant bits, ties to even, with the exponent floored at emin (the
// reference's To_BF16 clamps its exponent at -126, giving BF16's subnormal spacing).
double round_sig(double v, int bits, int emin) {
  if (v == 0.0) return 0.0;
  const int e = std::max(std::ilogb(v), emin);
  const double q = std::ldexp(v, bits - 1 - e);
  double n = std::floor(q);
  const double fr = q - n;
  if (fr > 0.5 || (fr == 0.5 && std::fmod(n, 2.0) != 0.0)) n += 1.0;
  return std::ldexp(n, e - (bits - 1));
}
double bf16(double v) { return round_sig(v, 8, -126); }

struct E6m2 {
  uint8_t code;
  double value;
};
// SF -> E6M2: clamp to [2^-48, 49152], 3 significant bits ties to even (carry allowed).
E6m2 to_e6m2(double sf) {
  sf = std::clamp(sf, std::ldexp(1.0, -48), 49152.0);
  const double v = round_sig(sf, 3, -1000);
  const int e = std::ilogb(v);
  const int m = static_cast<int>(std::ldexp(v, 2 - e)) - 4;  // 0..3
  return {static_cast<uint8_t>((e + 48) << 2 | m), v};
}

struct HRef {
  uint32_t word = 0;
  uint8_t codes[kG] = {};
  float deq[kG] = {};
};

// SPEC §2.3 steps 1-5. `sr`: stochastic c with byte sr_byte(seed, stream, first + i).
HRef ref_hif4(const float* x, bool sr, uint64_t seed, uint32_t stream, uint64_t first) {
  HRef h;
  for (int i = 0; i < kG; ++i) {
    if (!std::isfinite(x[i])) {  // fp4sim choice: scale byte NaN, element codes 0
      h.word = 0xFF;
      for (float& d : h.deq) d = kNaNf;
      return h;
    }
  }
  double v16[16], v8[8], vmax = 0.0;
  for (int j = 0; j < 16; ++j) {
    v16[j] = 0.0;
    for (int i = 0; i < 4; ++i) v16[j] = std::max(v16[j], std::fabs(static_cast<double>(x[4 * j + i])));
  }
  for (int k = 0; k < 8; ++k) {
    v8[k] = std::max(v16[2 * k], v16[2 * k + 1]);
    vmax = std::max(vmax, v8[k]);
  }
  const double sf = bf16(vmax * 0.142578125);  // BF16(1/7) = 73/512; product exact in double
  const E6m2 s = to_e6m2(sf);
  const double rec = bf16(1.0 / s.value);
  int l8[8], l16[16];
  h.word = s.code;
  for (int k = 0; k < 8; ++k) {
    l8[k] = v8[k] * rec >= 4.0;
    h.word |= static_cast<uint32_t>(l8[k]) << (8 + k);
  }
  for (int j = 0; j < 16; ++j) {
    l16[j] = std::ldexp(v16[j] * rec, -l8[j / 2]) >= 2.0;
    h.word |= static_cast<uint32_t>(l16[j]) << (16 + j);
  }
  for (int i = 0; i < kG; ++i) {
    const int l = l8[i / 8] + l16[i / 4];
    const double y = std::ldexp(std::fabs(static_cast<double>(x[i])) * rec, 2 - l);  // 4|x| REC 2^-l, exact
    double c = std::floor(y);
    const double fr = y - c;  // exact
    if (sr) {
      const uint8_t r = sr_byte(seed, stream, first + static_cast<uint64_t>(i));
      if (fr >= 1.0 - r / 256.0) c += 1.0;  // floor(y + r/256)
    } else if (fr >= 0.5) {
      c += 1.0;  // floor(y + 0.5): half up
    }
    c = std::min(c, 7.0);
    const bool neg = x[i] < 0.0f;
    h.codes[i] = static_cast<uint8_t>((neg ? 8u : 0u) | static_cast<uint32_t>(c));
    const double v = s.value * std::ldexp(c / 4.0, l);
    h.deq[i] = static_cast<float>(neg ? -v : v);
  }
  return h;
}

bool same_float(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

// Library (quantize + dequantize) vs reference; returns the number of mismatching blocks.
size_t check(const std::vector<float>& x, const QuantOptions& opt, int reports = 5) {
  const size_t nb = x.size() / kG;
  const Quantized q = quantize(BlockFormat::Hif4, x, nb, kG, opt);
  const std::vector<float> dq = dequantize(q);
  size_t bad = 0;
  for (size_t b = 0; b < nb; ++b) {
    const HRef r = ref_hif4(&x[b * kG], opt.rounding == Rounding::Sr, opt.seed, opt.stream, b * kG);
    const bool nan_block = (r.word & 0xFF) == 0xFF;
    bool ok = nan_block ? (q.scale_words[b] & 0xFF) == 0xFF : q.scale_words[b] == r.word;
    for (int i = 0; i < kG && ok; ++i) {
      const size_t k = b * kG + static_cast<size_t>(i);
      ok = q.codes[k] == r.codes[i] && same_float(dq[k], r.deq[i]);
    }
    if (!ok) {
      ++bad;
      if (reports-- > 0) {
        ADD_FAILURE() << "block " << b << " mode " << rounding_name(opt.rounding) << ": word lib 0x" << std::hex
                      << q.scale_words[b] << " ref 0x" << r.word << std::dec;
        for (int i = 0; i < kG; ++i) {
          const size_t k = b * kG + static_cast<size_t>(i);
          if (q.codes[k] != r.codes[i] || !same_float(dq[k], r.deq[i])) {
            std::printf("   x[%d] = %a: code lib 0x%x ref 0x%x, deq lib %a ref %a\n", i, static_cast<double>(x[k]),
                        q.codes[k], r.codes[i], static_cast<double>(dq[k]), static_cast<double>(r.deq[i]));
          }
        }
      }
    }
  }
  return bad;
}

void check_both(const std::vector<float>& x) {
  QuantOptions opt;
  EXPECT_EQ(check(x, opt), 0u);
  opt.rounding = Rounding::Sr;
  opt.seed = 0x5EED;
  opt.stream = 2;
  EXPECT_EQ(check(x, opt), 0u);
}

// Vmax that makes SF = BF16(Vmax * 73/512) equal to the BF16 value sf.
float vmax_for(double sf) { return static_cast<float>(sf * 512.0 / 73.0); }

// ---------------------------------------------------------------------------------------------

TEST(Hif4, FormatTable) {
  const BlockFormatInfo& fi = info(BlockFormat::Hif4);
  EXPECT_EQ(fi.name, "hif4");
  EXPECT_EQ(fi.block, 64);
  EXPECT_EQ(fi.elem, &kS1P2);
  EXPECT_EQ(fi.scale, &kE6M2);
  EXPECT_TRUE(fi.scale_word32);
  // Word layout helpers: E1_8 bit 8+q/8, E1_16 bit 16+q/4.
  EXPECT_EQ(hif4_e6m2(0xABCD12EFu), 0xEFu);
  for (int q = 0; q < 64; ++q) {
    EXPECT_EQ(hif4_level(1u << (8 + q / 8), q), 1);
    EXPECT_EQ(hif4_level(1u << (16 + q / 4), q), 1);
    EXPECT_EQ(hif4_level(0xFFFFFF00u, q), 2);
    EXPECT_EQ(hif4_level(~((1u << (8 + q / 8)) | (1u << (16 + q / 4))), q), 0);
  }
  EXPECT_THROW(quantize(BlockFormat::Hif4, std::vector<float>(32), 1, 32), std::invalid_argument);
}

// The reference's REC agrees with the official library's hardware table E6M2_REC
// (M7 = 0, 77, 43, 18 for M = 0..3; exponent -E or -E-1), which checks the BF16(1/E6M2) reading.
TEST(Hif4, ReciprocalMatchesHardwareTable) {
  const int m7[4] = {0, 77, 43, 18};
  for (int c = 0; c < 255; ++c) {
    const int e = (c >> 2) - 48, m = c & 3;
    const double v = (4.0 + m) / 4.0 * std::ldexp(1.0, e);
    const double table = std::ldexp(1.0 + m7[m] / 128.0, m == 0 ? -e : -e - 1);
    EXPECT_EQ(bf16(1.0 / v), table) << c;
    EXPECT_EQ(decode(kE6M2, static_cast<uint32_t>(c)), v) << c;
  }
}

TEST(Hif4, AllZero) {
  std::vector<float> x(2 * kG, 0.0f);
  for (size_t i = 0; i < x.size(); i += 3) x[i] = -0.0f;
  const Quantized q = quantize(BlockFormat::Hif4, x, 2, kG);
  EXPECT_EQ(q.scale_words[0], 0u);  // SF = 0 clamps to 2^-48 = code 0x00, no level bits
  EXPECT_EQ(q.scale_words[1], 0u);
  for (uint8_t c : q.codes) EXPECT_EQ(c, 0u);
  for (float d : dequantize(q)) EXPECT_TRUE(d == 0.0f && !std::signbit(d));
  check_both(x);
}

// One nonzero x = 1, worked by hand: SF = BF16(0.142578125) = 1.140625 * 2^-3 -> 3 significant
// bits: 4.5625 quarter steps -> 5 -> E6M2 = 1.25 * 2^-3 (code 45<<2|1 = 0xB5); REC = BF16(6.4) =
// 6.40625; V8*REC = 6.4 >= 4 and V16*REC/2 = 3.2 >= 2 set both level bits of its group;
// c = floor(4 * 6.40625 / 4 + 0.5) = 6; dequantized 0.15625 * 4 * 6/4 = 0.9375.
TEST(Hif4, SingleNonzero) {
  for (int pos : {0, 5, 37, 63}) {
    std::vector<float> x(kG, 0.0f);
    x[static_cast<size_t>(pos)] = 1.0f;
    const Quantized q = quantize(BlockFormat::Hif4, x, 1, kG);
    EXPECT_EQ(q.scale_words[0], 0xB5u | 1u << (8 + pos / 8) | 1u << (16 + pos / 4)) << pos;
    EXPECT_EQ(q.codes[static_cast<size_t>(pos)], 6u);
    EXPECT_EQ(dequantize(q)[static_cast<size_t>(pos)], 0.9375f);
    x[static_cast<size_t>(pos)] = -1.0f;
    EXPECT_EQ(quantize(BlockFormat::Hif4, x, 1, kG).codes[static_cast<size_t>(pos)], 0xEu);
  }
  std::vector<float> x;
  for (float v : {1.0f, -3.3f, 1e-20f, 1e30f, 0x1p-149f, 7.0f, 49152.0f * 7.0f, FLT_MAX}) {
    for (int pos : {0, 31, 63}) {
      std::vector<float> b(kG, 0.0f);
      b[static_cast<size_t>(pos)] = v;
      x.insert(x.end(), b.begin(), b.end());
    }
  }
  check_both(x);
}

// E6M2 = 1 and REC = 1 (Vmax = 7: 7 * 73/512 = 511/512 is a BF16 tie that rounds up to 1.0), so
// the level thresholds and the c rule can be read off directly.
TEST(Hif4, LevelThresholdsAndHalfUp) {
  std::vector<float> x(kG, 0.0f);
  x[0] = 7.0f;                             // j0,k0: V8 = 7 >= 4 -> E1_8[0]; 7/2 >= 2 -> E1_16[0]
  x[1] = 0.375f;                           // l = 2: 4*0.375/4 = 0.375 -> c = 0
  x[4] = 3.99f;                            // j1: 3.99/2 < 2 -> E1_16[1] = 0; l = 1: 7.98 -> 8 -> 7
  x[5] = 0.25f;                            // l = 1: y = 0.5 -> c = 1 (half up)
  x[8] = 4.0f;                             // k1: V8 = 4 -> E1_8[1] (>= 4); j2: 4/2 = 2 -> E1_16[2]
  x[12] = 1.25f;                           // j3: 0.625 < 2; l = 1: y = 2.5 -> 3 (RNE would give 2)
  x[16] = std::nextafter(4.0f, 0.0f);      // k2: V8 < 4 -> E1_8[2] = 0; j4: >= 2 -> E1_16[4]
  x[20] = std::nextafter(2.0f, 0.0f);      // j5: < 2 -> 0; l = 0: y = 8 - 2^-21 -> 8 -> 7
  x[24] = 2.0f;                            // k3: E1_8[3] = 0; j6: 2 >= 2 -> E1_16[6]; l = 1: y = 4
  x[25] = 0.375f;                          // l = 1: y = 0.75 -> 1
  x[28] = 0.625f;                          // j7: l = 0: y = 2.5 -> 3
  x[29] = 0.125f;                          // l = 0: y = 0.5 -> 1
  x[30] = -0.125f;                         // -> 0x9
  x[31] = -0.0625f;                        // y = 0.25 -> 0, negative: code 0x8 (-0)
  const Quantized q = quantize(BlockFormat::Hif4, x, 1, kG);
  const uint32_t want_word = 0xC0u | 1u << 8 | 1u << 9 | 1u << 16 | 1u << 18 | 1u << 20 | 1u << 22;
  EXPECT_EQ(q.scale_words[0], want_word);
  const struct {
    int i;
    uint8_t c;
  } want[] = {{0, 7}, {1, 0}, {4, 7}, {5, 1}, {8, 4}, {12, 3}, {16, 7}, {20, 7},
              {24, 4}, {25, 1}, {28, 3}, {29, 1}, {30, 0x9}, {31, 0x8}};
  for (const auto& w : want) EXPECT_EQ(q.codes[static_cast<size_t>(w.i)], w.c) << "x[" << w.i << "] = " << x[static_cast<size_t>(w.i)];
  const std::vector<float> d = dequantize(q);
  EXPECT_EQ(d[0], 7.0f);  // 1 * 2^2 * 7/4
  EXPECT_EQ(d[12], 1.5f);  // 1 * 2^1 * 3/4
  EXPECT_TRUE(d[31] == 0.0f && std::signbit(d[31]));
  check_both(x);
}

// Every half-step tie (c + 1/2)/4 in level-0 groups rounds half up to c + 1; c >= 8 -> 7.
TEST(Hif4, HalfUpTiesAndClamp) {
  std::vector<float> x(kG, 0.0f);
  x[0] = 7.0f;  // E6M2 = 1, REC = 1
  for (int k = 1; k < 8; ++k) {
    for (int i = 0; i < 8; ++i) {
      const int c = (k + i) % 7;  // 0..6 in every group, V8 <= 1.625 < 2 keeps levels at 0
      x[static_cast<size_t>(8 * k + i)] = static_cast<float>((c + 0.5) / 4.0) * ((i & 1) ? -1.0f : 1.0f);
    }
  }
  const Quantized q = quantize(BlockFormat::Hif4, x, 1, kG);
  ASSERT_EQ(q.scale_words[0] & 0xFFu, 0xC0u);
  for (int i = 8; i < kG; ++i) {
    ASSERT_EQ(hif4_level(q.scale_words[0], i), 0);
    const double y = 4.0 * std::fabs(static_cast<double>(x[static_cast<size_t>(i)]));  // c + 1/2
    const uint32_t c = static_cast<uint32_t>(y + 0.5);
    EXPECT_EQ(q.codes[static_cast<size_t>(i)] & 7u, c) << x[static_cast<size_t>(i)];
  }
  // 1.875 at level 0 gives c = floor(7.5 + 0.5) = 8 -> 7.
  x[9] = 1.875f;
  EXPECT_EQ(quantize(BlockFormat::Hif4, x, 1, kG).codes[9], 7u);
  check_both(x);
}

// E6M2 rounding of SF to 3 significant bits, ties to even, including the carry into the next
// binade (SF = 1.875 -> 7.5 quarter steps -> 8 -> 2.0) and the SF = 7*2^k powers.
TEST(Hif4, E6m2RoundingAndCarry) {
  const struct {
    double sf;
    uint8_t code;
  } cases[] = {{1.125, 48 << 2}, {1.375, 48 << 2 | 2}, {1.625, 48 << 2 | 2}, {1.875, 49 << 2},
               {1.8671875, 48 << 2 | 3}, {1.1328125, 48 << 2 | 1}, {0.9375, 48 << 2}, {3.75, 50 << 2}};
  for (const auto& c : cases) {
    std::vector<float> x(kG, 0.0f);
    x[17] = vmax_for(c.sf);
    ASSERT_EQ(bf16(static_cast<double>(x[17]) * 0.142578125), c.sf);  // the construction hits SF
    const Quantized q = quantize(BlockFormat::Hif4, x, 1, kG);
    EXPECT_EQ(q.scale_words[0] & 0xFFu, c.code) << "SF " << c.sf;
    check_both(x);
  }
  std::vector<float> x;
  for (int k = -60; k <= 20; ++k) {
    std::vector<float> b(kG, 0.0f);
    b[40] = std::ldexp(7.0f, k);  // SF = BF16(7 * 73/512 * 2^k) = 2^k
    b[41] = std::ldexp(1.0f, k);
    x.insert(x.end(), b.begin(), b.end());
  }
  const Quantized q = quantize(BlockFormat::Hif4, x, x.size() / kG, kG);
  for (int k = -60; k <= 20; ++k) {
    const int e = std::clamp(k, -48, 15);
    const uint32_t code = k > 15 ? 0xFEu : static_cast<uint32_t>((e + 48) << 2);
    EXPECT_EQ(q.scale_words[static_cast<size_t>(k + 60)] & 0xFFu, code) << k;
  }
  check_both(x);
}

// Vmax at every power of two: SF = BF16(2^k * 73/512) = 1.140625 * 2^(k-3) exactly, which
// rounds to E6M2 1.25 * 2^(k-3) (4.5625 quarter steps -> 5) inside the clamps.
TEST(Hif4, VmaxPowerOfTwo) {
  std::vector<float> x;
  for (int k = -149; k <= 127; ++k) {
    std::vector<float> b(kG, 0.0f);
    b[21] = std::ldexp(1.0f, k);
    b[22] = -std::ldexp(0.5f, k);
    b[50] = std::ldexp(0.75f, k);
    x.insert(x.end(), b.begin(), b.end());
  }
  const Quantized q = quantize(BlockFormat::Hif4, x, x.size() / kG, kG);
  for (int k = -149; k <= 127; ++k) {
    const int e = k - 3;
    uint32_t want = 0;
    if (e > 15) {
      want = 0xFE;
    } else if (e >= -48) {
      want = static_cast<uint32_t>((e + 48) << 2 | 1);
    }
    EXPECT_EQ(q.scale_words[static_cast<size_t>(k + 149)] & 0xFFu, want) << k;
  }
  check_both(x);
}

// Clamps: SF above 49152 -> 0xFE (never the NaN code 0xFF), below 2^-48 -> 0x00.
TEST(Hif4, ScaleClamps) {
  const float vmaxes[] = {FLT_MAX, 1e30f, 49152.0f * 7.0f, vmax_for(49152.0), vmax_for(57344.0),
                          std::nextafter(vmax_for(49152.0), kInff), 0x1p-149f, 1e-20f, 7.0f * 0x1p-48f,
                          std::nextafter(7.0f * 0x1p-48f, 0.0f), 7.0f * 0x1p-49f};
  std::vector<float> x;
  for (float v : vmaxes) {
    std::vector<float> b(kG, 0.0f);
    b[0] = v;
    b[1] = -v / 3.0f;
    b[63] = v / 50.0f;
    x.insert(x.end(), b.begin(), b.end());
  }
  const Quantized q = quantize(BlockFormat::Hif4, x, x.size() / kG, kG);
  for (size_t b = 0; b < 6; ++b) EXPECT_EQ(q.scale_words[b] & 0xFFu, 0xFEu) << vmaxes[b];
  for (size_t b = 6; b < 11; ++b) EXPECT_EQ(q.scale_words[b] & 0xFFu, 0x00u) << vmaxes[b];
  EXPECT_EQ(q.codes[0], 7u);  // FLT_MAX * BF16(1/49152) / 4: saturates
  check_both(x);
}

// fp4sim choice: a non-finite input makes the block's scale byte 0xFF and all its codes 0.
TEST(Hif4, NonFinite) {
  for (float bad : {kNaNf, -kNaNf, kInff, -kInff}) {
    for (int pos : {0, 30, 63}) {
      std::vector<float> x(2 * kG, 7.0f);  // a clean block of 7s dequantizes exactly (E6M2 1, levels 2, c 7)
      x[static_cast<size_t>(pos)] = bad;
      for (Rounding m : {Rounding::Rne, Rounding::Sr}) {
        QuantOptions opt;
        opt.rounding = m;
        const Quantized q = quantize(BlockFormat::Hif4, x, 2, kG, opt);
        EXPECT_EQ(q.scale_words[0] & 0xFFu, 0xFFu);
        for (int i = 0; i < kG; ++i) EXPECT_EQ(q.codes[static_cast<size_t>(i)], 0u);
        const std::vector<float> d = dequantize(q);
        for (int i = 0; i < kG; ++i) EXPECT_TRUE(std::isnan(d[static_cast<size_t>(i)]));
        for (int i = kG; i < 2 * kG; ++i) EXPECT_EQ(d[static_cast<size_t>(i)], 7.0f);
        EXPECT_TRUE(std::isnan(block_scale_value(q, 0)));
      }
      check_both(x);
    }
  }
}

TEST(Hif4, Fp32Subnormals) {
  std::vector<float> x(2 * kG);
  for (size_t i = 0; i < kG; ++i) x[i] = (i & 1 ? -1.0f : 1.0f) * std::numeric_limits<float>::denorm_min() * static_cast<float>(1u << (i % 23));
  for (size_t i = kG; i < 2 * kG; ++i) x[i] = (i & 1 ? -1.0f : 1.0f) * std::ldexp(1.0f + static_cast<float>(i % 7) / 8.0f, -100 - static_cast<int>(i % 40));
  check_both(x);
}

// Random blocks: per-subgroup magnitudes so the level bits vary, exact ties on the c grid,
// threshold-exact V8/V16, raw bit patterns, tiny and huge blocks, the odd NaN/Inf. 10^5 blocks
// in each of the two modes (half-up and SR).
void gen_block(std::mt19937_64& rng, float* x) {
  auto u01 = [&]() { return static_cast<double>(rng() >> 11) * 0x1p-53; };
  auto sgn = [&]() { return (rng() & 1) ? -1.0 : 1.0; };
  const int kind = static_cast<int>(rng() % 6);
  const int eb = static_cast<int>(rng() % 240) - 130;
  for (int j = 0; j < 16; ++j) {
    const int sub = -static_cast<int>(rng() % 4);  // subgroup factor 1, 1/2, 1/4, 1/8
    for (int i = 0; i < 4; ++i) {
      double v = 0.0;
      switch (kind) {
        case 0:
        case 1: v = sgn() * u01() * std::ldexp(1.0, eb + sub); break;
        case 2: {  // grid ties at E6M2 = 2^e0 (Vmax = 7*2^e0): (c + 1/2)/4 * 2^lvl * 2^e0, or thresholds
          const int e0 = std::clamp(eb, -100, 100);
          if (j == 0 && i == 0) {
            v = std::ldexp(7.0, e0);
          } else if (rng() % 4 == 0) {
            const double th[] = {4.0, 2.0, std::nextafter(4.0, 0.0), std::nextafter(2.0, 0.0)};
            v = sgn() * std::ldexp(th[rng() % 4], e0);
          } else {
            v = sgn() * std::ldexp((static_cast<double>(rng() % 8) + 0.5) / 4.0, e0 + static_cast<int>(rng() % 3));
          }
          break;
        }
        case 3: {
          uint32_t b = static_cast<uint32_t>(rng());
          if (((b >> 23) & 0xFF) == 0xFF) b &= 0xBFFFFFFFu;
          x[4 * j + i] = std::bit_cast<float>(b);
          continue;
        }
        case 4: v = sgn() * u01() * std::ldexp(1.0, -120 - static_cast<int>(rng() % 30)); break;
        default: v = sgn() * (1.0 + u01()) * std::ldexp(1.0, 100 + static_cast<int>(rng() % 27)); break;
      }
      x[4 * j + i] = static_cast<float>(v);
    }
  }
  if (rng() % 200 == 0) x[rng() % kG] = (rng() & 1) ? kNaNf : -kInff;
}

TEST(Hif4, RandomDifferential) {
  std::mt19937_64 rng(0x41F4);
  constexpr size_t kBlocks = 100000;
  std::vector<float> x(kBlocks * kG);
  for (size_t b = 0; b < kBlocks; ++b) gen_block(rng, &x[b * kG]);
  QuantOptions opt;
  EXPECT_EQ(check(x, opt), 0u);
  opt.rounding = Rounding::Sr;
  opt.seed = 0x0123456789ABCDEFull;
  opt.stream = 9;
  EXPECT_EQ(check(x, opt), 0u);
  std::printf("random HiF4 blocks checked: %zu x 2 modes\n", kBlocks);
}

// The exposed kernel draws SR bytes at first_index + i.
TEST(Hif4, KernelFirstIndex) {
  std::mt19937_64 rng(3);
  std::vector<float> x(4 * kG);
  for (size_t b = 0; b < 4; ++b) gen_block(rng, &x[b * kG]);
  QuantOptions opt;
  opt.rounding = Rounding::Sr;
  opt.seed = 1;
  opt.stream = 4;
  for (uint64_t first : {uint64_t{0}, uint64_t{3}, uint64_t{1} << 50}) {
    std::vector<uint8_t> codes(x.size());
    std::vector<uint32_t> words(4);
    quantize_hif4(x.data(), 4, opt, codes.data(), words.data(), first);
    for (size_t b = 0; b < 4; ++b) {
      const HRef r = ref_hif4(&x[b * kG], true, opt.seed, opt.stream, first + b * kG);
      if ((r.word & 0xFF) == 0xFF) continue;
      ASSERT_EQ(words[b], r.word);
      for (int i = 0; i < kG; ++i) ASSERT_EQ(codes[b * kG + static_cast<size_t>(i)], r.codes[i]) << first;
    }
  }
}

}  // namespace
