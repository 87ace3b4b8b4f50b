// The quantizers' vectorized fast paths (bit tricks on FP32 patterns) against the generic,
// table-driven encode() of format.cpp, which test_format.cpp checks exhaustively.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "fp4sim/format.hpp"
#include "fp4sim/quant.hpp"

namespace fp4sim {
namespace {

// Every 251st FP32 pattern (~17 M values): all exponents, many mantissas, +-0, Inf, NaNs.
template <typename F>
void for_float_patterns(F&& f) {
  for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 251) f(std::bit_cast<float>(static_cast<uint32_t>(u)));
  for (float special : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 448.0f, 464.0f, 0x1p-6f, 0x1p-10f})
    f(special);
}

TEST(QuantFast, Nvfp4ScaleCodeEqualsGenericUe4m3) {
  // m = S_enc * RN(1/6) with S_enc = 6 (so the block amax is barely rescaled)
  const Nvfp4TensorScale ts{6.0f, 1.0f / 6.0f};
  const float m = ts.s_enc * (1.0f / 6.0f);
  size_t checked = 0, bad = 0;
  for_float_patterns([&](float a) {
    if (!(a >= 0.0f) && !std::isnan(a)) return;  // block amax is never negative
    if (std::isnan(a)) return;                     // amax ignores NaN (fmaxf), never reaches here
    const float sdec = a * m;
    const auto want = static_cast<uint8_t>(encode(kUE4M3, sdec, Rounding::Rne, true));
    const uint8_t got = nvfp4_block_scale_code(a, ts);
    ++checked;
    if (got != want && ++bad <= 20) {
      ADD_FAILURE() << "amax " << a << " (0x" << std::hex << std::bit_cast<uint32_t>(a) << ") fast 0x"
                    << int(got) << " generic 0x" << int(want);
    }
  });
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(checked, 8'000'000u);
}

TEST(QuantFast, Nvfp4InverseEqualsFormula) {
  const Nvfp4TensorScale ts = nvfp4_tensor_scale(10.0f, true);
  for (uint32_t c = 0; c < 0x7F; ++c) {
    const float s = static_cast<float>(decode(kUE4M3, c)) * ts.s_dec;
    const float want = std::min(1.0f / s, FLT_MAX);
    EXPECT_EQ(std::bit_cast<uint32_t>(nvfp4_block_inverse(static_cast<uint8_t>(c), ts)),
              std::bit_cast<uint32_t>(want))
        << "scale code 0x" << std::hex << c;
    // the sign bit of a UE4M3 scale is ignored
    EXPECT_EQ(nvfp4_block_inverse(static_cast<uint8_t>(c | 0x80), ts),
              nvfp4_block_inverse(static_cast<uint8_t>(c), ts));
  }
}

// Element codes of the RNE fast paths (every MX element type, NVFP4 1x16) equal encode() of the
// scaled value.
TEST(QuantFast, RneElementsEqualGenericEncode) {
  std::mt19937_64 g(2024);
  std::vector<float> x(1 << 16);
  size_t bad = 0;
  for (int round = 0; round < 8; ++round) {
    // mixes of magnitudes, exact grid points and midpoints (ties) scaled by random powers of two
    for (size_t i = 0; i < x.size(); ++i) {
      const int kind = static_cast<int>(g() % 4);
      const float p = std::ldexp(1.0f, static_cast<int>(g() % 40) - 20);
      const float grid[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 0.5f, 3.0f, 6.0f, 7.0f};
      float v = kind == 0 ? grid[g() % 11] * p
                : kind == 1 ? std::nextafter(grid[g() % 11], g() % 2 ? 0.0f : 10.0f) * p
                : kind == 2 ? std::ldexp(static_cast<float>(g() % 1000000) / 1e6f, static_cast<int>(g() % 10))
                            : 0.001f * static_cast<float>(g() % 7000);
      x[i] = (g() % 2) ? -v : v;
    }
    for (BlockFormat f : {BlockFormat::Mxfp4, BlockFormat::Mxfp6E2M3, BlockFormat::Mxfp6E3M2,
                          BlockFormat::Mxfp8E4M3, BlockFormat::Mxfp8E5M2, BlockFormat::Nvfp4}) {
      const size_t cols = 256, rows = x.size() / cols;
      const Quantized q = quantize(f, x, rows, cols);
      const size_t B = static_cast<size_t>(info(f).block);
      for (size_t i = 0; i < x.size(); ++i) {
        const size_t blk = i / B;
        double scaled;
        if (f != BlockFormat::Nvfp4) {
          scaled = std::ldexp(static_cast<double>(x[i]), -(static_cast<int>(q.scales[blk]) - 127));
        } else {
          // the library derives S_enc from the tensor amax it reports; reproduce the inverse
          const Nvfp4TensorScale ts = nvfp4_tensor_scale(q.amax, true);
          scaled = x[i] * nvfp4_block_inverse(q.scales[blk], ts);
        }
        const ElemFormat& ef = *info(f).elem;
        const uint32_t want = encode(ef, std::fabs(scaled), Rounding::Rne, true) | (x[i] < 0.0f ? ef.sign_bit() : 0u);
        if (q.codes[i] != want && ++bad <= 20) {
          ADD_FAILURE() << info(f).name << " x=" << x[i] << " scaled=" << scaled << " fast 0x" << std::hex
                        << int(q.codes[i]) << " generic 0x" << want;
        }
      }
    }
  }
  EXPECT_EQ(bad, 0u);
}

}  // namespace
}  // namespace fp4sim

namespace fp4sim {
namespace {

// HiF4's reference rounds half-up on the magnitude; rne requests that nearest rounding, rz is refused.
TEST(QuantOptionsRules, Hif4RoundingModes) {
  EXPECT_EQ(effective_rounding(BlockFormat::Hif4, Rounding::Rne), Rounding::Rna);
  EXPECT_EQ(effective_rounding(BlockFormat::Hif4, Rounding::Sr), Rounding::Sr);
  EXPECT_EQ(effective_rounding(BlockFormat::Nvfp4, Rounding::Rne), Rounding::Rne);
  // x = 0.625 with E6M2 = 1 (block max 7 -> SF = BF16(0.998) = 1), REC = 1, levels 0: 4x = 2.5, a tie
  std::vector<float> x(64, 0.0f);
  x[0] = 7.0f;
  x[60] = 0.625f;  // its groups of 4 and 8 hold nothing else, so its level bits are 0
  QuantOptions o;
  const Quantized rne = quantize(BlockFormat::Hif4, x, 1, 64, o);
  o.rounding = Rounding::Rna;
  const Quantized rna = quantize(BlockFormat::Hif4, x, 1, 64, o);
  EXPECT_EQ(rne.scale_words[0] & 0xFFu, 0xC0u);  // E6M2 1.0
  EXPECT_EQ(rne.codes[60], 3);                    // floor(2.5 + 0.5) = 3, half-up
  EXPECT_EQ(rne.codes, rna.codes);
  o.rounding = Rounding::Rz;
  EXPECT_THROW(quantize(BlockFormat::Hif4, x, 1, 64, o), std::invalid_argument);
}

}  // namespace
}  // namespace fp4sim
