// The quantizers' vectorized fast paths (bit tricks on FP32 patterns) against the generic,
// table-driven encode() of format.cpp, which test_format.cpp checks exhaustively.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "fp4sim/format.hpp"
#include "fp4sim/hadamard.hpp"
#include "fp4sim/philox.hpp"
#include "fp4sim/quant.hpp"

namespace fp4sim {
namespace {

// The kernel levels this CPU (and FP4SIM_QUANT_SIMD) lets quantize() take, portable first.
std::vector<QuantSimd> simd_levels() {
  std::vector<QuantSimd> v;
  const QuantSimd was = quant_simd_level();
  for (QuantSimd l : {QuantSimd::Portable, QuantSimd::Avx2, QuantSimd::Avx512}) {
    set_quant_simd_level(l);
    if (quant_simd_level() == l) v.push_back(l);
  }
  set_quant_simd_level(was);
  return v;
}

const char* simd_name(QuantSimd l) {
  return l == QuantSimd::Portable ? "portable" : l == QuantSimd::Avx2 ? "avx2" : "avx512";
}

// Runs body at one level and restores the previous one.
template <typename F>
void at_level(QuantSimd l, F&& body) {
  const QuantSimd was = set_quant_simd_level(l);
  body();
  set_quant_simd_level(was);
}

// Levels fall back to what the CPU has; the environment cap holds (CTest runs the quantizer tests
// under FP4SIM_QUANT_SIMD=portable and =avx2 besides the default).
TEST(QuantFast, SimdLevelsFallBack) {
  const char* env = std::getenv("FP4SIM_QUANT_SIMD");
  const std::string cap = env != nullptr ? env : "";
  const bool avx2 = __builtin_cpu_supports("avx2") && cap != "portable";
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("bmi2") && cap != "avx2";
  at_level(QuantSimd::Avx512, [&] {
    EXPECT_EQ(quant_simd_level(), avx512 ? QuantSimd::Avx512 : avx2 ? QuantSimd::Avx2 : QuantSimd::Portable);
  });
  at_level(QuantSimd::Avx2, [&] { EXPECT_EQ(quant_simd_level(), avx2 ? QuantSimd::Avx2 : QuantSimd::Portable); });
  at_level(QuantSimd::Portable, [&] { EXPECT_EQ(quant_simd_level(), QuantSimd::Portable); });
  std::string ran;
  for (QuantSimd l : simd_levels()) ran += std::string(" ") + simd_name(l);
  std::printf("quantizer kernel levels on this machine:%s\n", ran.c_str());
  RecordProperty("simd_levels", ran);
}

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
  for (QuantSimd level : simd_levels()) at_level(level, [&] {
  SCOPED_TRACE(simd_name(level));
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
  });
}

// The E2M1 table lookups (AVX2 e2m1_rne_32_avx2, AVX-512 store_e2m1_64) decide on cells of 2^21
// FP32 patterns plus an exact-hit test: every cell below 8.0, each with its low 21 bits zero
// (exactly on a cell start: the ties), one, half, and all ones, both signs, against encode().
// Blocks led by 6.0 scale by exactly 1: MXFP4's shared exponent is 0 and NVFP4 without PTS has
// S_enc = 1 and a block scale of 6 / 6 = 1; NVFP4 also gets NaN elements (its amax ignores them).
TEST(QuantFast, E2m1EveryCellAndTie) {
  std::vector<float> vals;
  for (uint32_t cell = 0; cell < (0x41000000u >> 21); ++cell)
    for (uint32_t low : {0u, 1u, 0x100000u, 0x1FFFFFu})
      for (uint32_t sign : {0u, 0x80000000u}) vals.push_back(std::bit_cast<float>(sign | cell << 21 | low));
  for (BlockFormat f : {BlockFormat::Mxfp4, BlockFormat::Nvfp4}) {
    const size_t B = static_cast<size_t>(info(f).block);
    std::vector<float> x;
    auto push = [&](float v) {
      if (x.size() % B == 0) x.push_back(6.0f);
      x.push_back(v);
    };
    for (size_t i = 0; i < vals.size(); ++i) {
      // NVFP4's block scale is RNE(amax / 6): values above 6 would change it; MXFP4's exponent holds below 8
      if (f == BlockFormat::Nvfp4 && std::fabs(vals[i]) > 6.0f) continue;
      push(vals[i]);
      if (f == BlockFormat::Nvfp4 && i % 97 == 0) push(i % 2 ? NAN : -NAN);
    }
    while (x.size() % 256 != 0) push(0.5f);
    QuantOptions o;
    o.pts = false;
    for (QuantSimd level : simd_levels()) {
      Quantized q;
      at_level(level, [&] { q = quantize(f, x, x.size() / 256, 256, o); });
      size_t bad = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_EQ(q.scales[i / B], f == BlockFormat::Mxfp4 ? 127 : 0x38) << "block " << i / B << " does not scale by 1";
        const uint32_t want = std::isnan(x[i]) ? 7u
                                               : encode(kE2M1, std::fabs(x[i]), Rounding::Rne, true) |
                                                     (x[i] < 0.0f ? kE2M1.sign_bit() : 0u);
        if (q.codes[i] != want && ++bad <= 10) {
          ADD_FAILURE() << info(f).name << " " << simd_name(level) << " x=0x" << std::hex
                        << std::bit_cast<uint32_t>(x[i]) << " code 0x" << int(q.codes[i]) << " want 0x" << want;
        }
      }
      EXPECT_EQ(bad, 0u) << info(f).name << " " << simd_name(level);
    }
  }
}

// Inputs that reach every part of the element encoders: random mixes (grid points, neighbours of
// ties, wide magnitudes) and runs of FP32 patterns (every 61st from `from`, consecutive within a
// block so that they share a binade), each 16-value group led by a value 2^k above the rest so that
// the others land in every binade of the target format, subnormals included; plus zeros, -0.0,
// Inf and NaN here and there.
std::vector<float> encoder_inputs(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<float> x(n);
  uint32_t u = static_cast<uint32_t>(g());
  for (size_t i = 0; i < n; ++i) {
    const size_t region = (i / 4096) % 3;
    if (region == 0) {
      const float grid[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 0.5f, 3.0f, 6.0f, 7.0f, 0.1875f, 28.0f};
      const float p = std::ldexp(1.0f, static_cast<int>(g() % 60) - 30);
      const float gv = grid[g() % 13];
      const int kind = static_cast<int>(g() % 3);
      const float v = kind == 0 ? gv * p : kind == 1 ? std::nextafter(gv, g() % 2 ? 0.0f : 100.0f) * p
                                         : std::ldexp(static_cast<float>(g() % 1000000) / 1e6f, static_cast<int>(g() % 16) - 8);
      x[i] = (g() % 2) ? -v : v;
    } else {
      u += 61;
      float v = std::bit_cast<float>(u);
      if (!std::isfinite(v)) v = std::bit_cast<float>(u & 0x8FFFFFFFu);
      if (i % 16 == 0) v = std::ldexp(std::fabs(v) + 1e-30f, static_cast<int>(g() % 24)) * (region == 1 ? 1.0f : -1.0f);
      if (!std::isfinite(v)) v = 1.0f;
      x[i] = v;
    }
  }
  for (size_t k = 0; k < n / 997; ++k) {
    const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-149f, -0x1p-126f};
    x[g() % n] = sp[g() % 7];
  }
  return x;
}

// SR element codes of every block format's fast path (AVX2 where the CPU has it) equal encode()
// with Rounding::Sr and the element's SPEC §3 byte, on the exactly scaled value.
TEST(QuantFast, SrElementsEqualGenericEncode) {
  for (QuantSimd level : simd_levels()) at_level(level, [&] {
  SCOPED_TRACE(simd_name(level));
  const size_t cols = 512, rows = 160;  // more than one of quantize()'s row chunks
  QuantOptions o;
  o.rounding = Rounding::Sr;
  o.seed = 0x5EEDF00DCAFEull;
  o.stream = 3;
  size_t bad = 0, checked = 0;
  for (uint64_t round = 0; round < 6; ++round) {
    const std::vector<float> x = encoder_inputs(rows * cols, 77 + round);
    o.stream = static_cast<uint32_t>(round);
    for (BlockFormat f : {BlockFormat::Mxfp4, BlockFormat::Mxfp6E2M3, BlockFormat::Mxfp6E3M2, BlockFormat::Mxfp8E4M3,
                          BlockFormat::Mxfp8E5M2, BlockFormat::Nvfp4}) {
      const Quantized q = quantize(f, x, rows, cols, o);
      const size_t B = static_cast<size_t>(info(f).block);
      const ElemFormat& ef = *info(f).elem;
      const Nvfp4TensorScale ts = nvfp4_tensor_scale(q.amax, true);
      // the scales too, from each block's amax (the tensor spans several of quantize()'s chunks)
      for (size_t blk = 0; blk < q.scales.size(); ++blk) {
        float amax = 0.0f;
        bool finite = true;
        for (size_t i = blk * B; i < (blk + 1) * B; ++i) {
          finite = finite && std::isfinite(x[i]);
          if (!std::isnan(x[i])) amax = std::max(amax, std::fabs(x[i]));
        }
        uint8_t want;
        if (f == BlockFormat::Nvfp4) want = nvfp4_block_scale_code(amax, ts);
        else if (!finite) want = 0xFF;
        else if (amax == 0.0f) want = 0;
        else want = static_cast<uint8_t>(std::clamp(std::ilogb(amax) - info(f).emax_elem, -127, 127) + 127);
        if (q.scales[blk] != want && ++bad <= 20)
          ADD_FAILURE() << info(f).name << " block " << blk << " scale 0x" << std::hex << int(q.scales[blk])
                        << " want 0x" << int(want);
      }
      for (size_t i = 0; i < x.size(); ++i) {
        const size_t blk = i / B;
        uint32_t want;
        const uint8_t r = sr_byte(o.seed, o.stream, i);
        if (f != BlockFormat::Nvfp4) {
          if (q.scales[blk] == 0xFF) continue;  // Inf / NaN block: codes are 0 by rule
          const double scaled = std::ldexp(static_cast<double>(x[i]), -(static_cast<int>(q.scales[blk]) - 127));
          want = encode(ef, std::fabs(scaled), Rounding::Sr, true, r) | (x[i] < 0.0f ? ef.sign_bit() : 0u);
        } else {
          const float v = x[i] * nvfp4_block_inverse(q.scales[blk], ts);
          want = std::isnan(v) ? 7u : encode(ef, std::fabs(v), Rounding::Sr, true, r) | (x[i] < 0.0f ? 8u : 0u);
        }
        ++checked;
        if (q.codes[i] != want && ++bad <= 20) {
          ADD_FAILURE() << info(f).name << " i=" << i << " x=" << x[i] << " (0x" << std::hex
                        << std::bit_cast<uint32_t>(x[i]) << ") r=0x" << int(r) << " fast 0x" << int(q.codes[i])
                        << " generic 0x" << want;
        }
      }
    }
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(checked, 1'500'000u);
  });
}

bool same_quantized(const Quantized& a, const Quantized& b) {
  return a.codes == b.codes && a.scales == b.scales && a.scale_words == b.scale_words &&
         std::bit_cast<uint32_t>(a.global_scale) == std::bit_cast<uint32_t>(b.global_scale) &&
         std::bit_cast<uint32_t>(a.amax) == std::bit_cast<uint32_t>(b.amax);
}

std::string describe(BlockFormat f, const QuantOptions& o) {
  return std::string(info(f).name) + " " + std::string(rounding_name(o.rounding)) + (o.two_d ? " 2d" : "") +
         (o.pts ? "" : " nopts") + (o.rht ? " rht" + std::to_string(o.rht) : "") +
         (o.scale_rule == ScaleRule::Ceil ? " ceil" : "");
}

std::vector<QuantOptions> option_sets(BlockFormat f) {
  std::vector<QuantOptions> v;
  for (Rounding r : {Rounding::Rne, Rounding::Sr, Rounding::Rz, Rounding::Rna}) {
    if (f == BlockFormat::Hif4 && r == Rounding::Rz) continue;
    QuantOptions o;
    o.rounding = r;
    o.seed = 0xABCDEF0123ull;
    o.stream = 5;
    v.push_back(o);
  }
  QuantOptions o = v[1];  // SR + RHT-16 (the Wgrad recipe)
  o.rht = 16;
  v.push_back(o);
  if (f == BlockFormat::Nvfp4) {
    for (bool two_d : {true, false}) {
      QuantOptions p = v[0];
      p.two_d = two_d;
      p.pts = !two_d;
      v.push_back(p);
      p.rounding = Rounding::Sr;
      p.pts = two_d;
      v.push_back(p);
    }
  } else if (f != BlockFormat::Hif4) {
    QuantOptions p = v[0];
    p.scale_rule = ScaleRule::Ceil;
    v.push_back(p);
  }
  QuantOptions s = v[1];  // seeded RHT-64 rounded to BF16
  s.rht = 64;
  s.rht_seeded = true;
  s.rht_seed = 9;
  s.rht_bf16 = true;
  v.push_back(s);
  return v;
}

// Each vector level (AVX2, AVX-512) against the portable loops, whole outputs, every format and
// option set (the portable loops are the pre-vector code, checked by test_nvfp4 / test_mx /
// test_hif4's references; this keeps every level's path tested on a machine that has a better one).
// 49 x 704 leaves every format's AVX-512 kernel a ragged last batch of fewer than 16 blocks.
TEST(QuantFast, SimdEqualsPortable) {
  const size_t rows = 49, cols = 704;
  const std::vector<float> x = encoder_inputs(rows * cols, 4242);
  size_t runs = 0;
  const std::vector<QuantSimd> levels = simd_levels();
  if (levels.size() == 1) GTEST_SKIP() << "no vector level here (CPU or FP4SIM_QUANT_SIMD)";
  for (const auto& fi : all_block_formats()) {
    for (const QuantOptions& o : option_sets(fi.id)) {
      for (QuantSimd level : levels) {
      if (level == QuantSimd::Portable) continue;
      Quantized fast, portable;
      at_level(level, [&] { fast = quantize(fi.id, x, rows, cols, o); });
      at_level(QuantSimd::Portable, [&] { portable = quantize(fi.id, x, rows, cols, o); });
      EXPECT_TRUE(same_quantized(fast, portable)) << describe(fi.id, o) << " " << simd_name(level);
      if (!same_quantized(fast, portable)) {
        for (size_t i = 0; i < fast.codes.size(); ++i)
          if (fast.codes[i] != portable.codes[i]) {
            ADD_FAILURE() << "first code difference at " << i << " x=" << x[i] << " fast 0x" << std::hex
                          << int(fast.codes[i]) << " portable 0x" << int(portable.codes[i]);
            break;
          }
      }
      ++runs;
      }
    }
  }
  EXPECT_GT(runs, 40u);
}

// The reusing overload keeps NVFP4's block maxima and RHT output in out.workspace: results equal a
// fresh quantize() whatever the previous call's shape or options were (larger, smaller, no RHT),
// and a copy of a Quantized never shares the workspace with the original.
TEST(QuantFast, WorkspaceReuseKeepsBits) {
  struct Call {
    BlockFormat f;
    size_t rows, cols;
    int rht;
    Rounding r;
  };
  const std::vector<float> x = encoder_inputs(96 * 1024, 31);
  Quantized q;
  for (const Call& c : {Call{BlockFormat::Nvfp4, 32, 1024, 16, Rounding::Rne}, Call{BlockFormat::Nvfp4, 96, 1024, 16, Rounding::Sr},
                        Call{BlockFormat::Nvfp4, 16, 512, 16, Rounding::Rne}, Call{BlockFormat::Nvfp4, 96, 1024, 0, Rounding::Rne},
                        Call{BlockFormat::Hif4, 48, 1024, 16, Rounding::Sr}, Call{BlockFormat::Nvfp4, 80, 1024, 16, Rounding::Sr}}) {
    QuantOptions o;
    o.rht = c.rht;
    o.rounding = c.r;
    o.seed = 11;
    const std::span<const float> xs(x.data(), c.rows * c.cols);
    quantize(c.f, xs, c.rows, c.cols, o, q);
    EXPECT_TRUE(same_quantized(q, quantize(c.f, xs, c.rows, c.cols, o))) << describe(c.f, o) << " " << c.rows;
  }
  Quantized copy = q;  // quantizing into the copy must leave q as it is
  const std::vector<uint8_t> codes = q.codes;
  QuantOptions o;
  o.rht = 16;
  quantize(BlockFormat::Nvfp4, std::span<const float>(x.data(), 16 * 1024), 16, 1024, o, copy);
  EXPECT_EQ(q.codes, codes);
}

// NVFP4 inputs above 32 MiB take the AVX-512 kernel without stored block maxima (recomputed in
// the second pass): the same bits as the portable loops, RNE and SR.
TEST(QuantFast, Nvfp4LargeTensorRecomputesBlockMaxima) {
  const size_t rows = 2320, cols = 4096;  // 38 MB of float32, a ragged last chunk
  const std::vector<float> x = encoder_inputs(rows * cols, 808);
  for (Rounding r : {Rounding::Rne, Rounding::Sr}) {
    QuantOptions o;
    o.rounding = r;
    o.seed = 3;
    o.threads = 0;
    for (QuantSimd level : simd_levels()) {
      if (level == QuantSimd::Portable) continue;
      Quantized fast, portable;
      at_level(level, [&] { fast = quantize(BlockFormat::Nvfp4, x, rows, cols, o); });
      at_level(QuantSimd::Portable, [&] { portable = quantize(BlockFormat::Nvfp4, x, rows, cols, o); });
      EXPECT_TRUE(same_quantized(fast, portable)) << describe(BlockFormat::Nvfp4, o) << " " << simd_name(level);
    }
  }
}

// NVFP4 + RHT beyond the caches (streaming stores, no kept block maxima) equals quantizing the
// whole transformed tensor without the RHT (TE takes the amax after the RHT; the SR counter is the
// flat index either way), at the current level (CTest's golden_quant_simd_* runs take the others).
TEST(QuantFast, Nvfp4LargeTensorRhtEqualsPreRotated) {
  const size_t rows = 2064, cols = 4096;  // 33.8 MB of float32: just beyond the 32 MiB threshold
  const std::vector<float> x = encoder_inputs(rows * cols, 909);
  std::vector<float> rotated(x.size());
  rht_apply_to(x, rotated, cols, 16, rht_signs(16, false, 0));
  for (Rounding r : {Rounding::Rne, Rounding::Sr}) {
    QuantOptions o;
    o.rounding = r;
    o.seed = 5;
    o.threads = 0;
    QuantOptions plain = o;
    o.rht = 16;
    const Quantized with_rht = quantize(BlockFormat::Nvfp4, x, rows, cols, o);
    const Quantized pre_rotated = quantize(BlockFormat::Nvfp4, rotated, rows, cols, plain);
    EXPECT_TRUE(same_quantized(with_rht, pre_rotated)) << describe(BlockFormat::Nvfp4, o) << " "
                                                       << simd_name(quant_simd_level());
  }
}

// The NVFP4 tensor amax is reduced over all row chunks: the largest value sits in the last one.
TEST(QuantFast, Nvfp4AmaxSpansChunks) {
  const size_t rows = 70, cols = 4096;  // several chunks of 16 rows, a ragged last one
  std::mt19937 g(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(rows * cols);
  for (auto& v : x) v = u(g);
  x[x.size() - 3] = -5.0f;
  for (unsigned t : {1u, 3u}) {
    QuantOptions o;
    o.threads = t;
    const Quantized q = quantize(BlockFormat::Nvfp4, x, rows, cols, o);
    EXPECT_EQ(q.amax, 5.0f) << t;
    EXPECT_EQ(q.global_scale, nvfp4_tensor_scale(5.0f, true).s_dec) << t;
  }
}

// QuantOptions::threads: the same bits for 1, 2, 3, 7 and all threads, on shapes whose rows split
// into several chunks with a ragged last one (and a partial last 2D tile).
TEST(QuantFast, ThreadCountDoesNotChangeBits) {
  struct Shape {
    size_t rows, cols;
  };
  size_t runs = 0;
  for (const Shape sh : {Shape{37, 4096}, Shape{2053, 64}, Shape{1, 192}}) {
    const std::vector<float> x = encoder_inputs(sh.rows * sh.cols, sh.rows);
    for (const auto& fi : all_block_formats()) {
      if (sh.cols % static_cast<size_t>(fi.block) != 0) continue;
      for (QuantOptions o : option_sets(fi.id)) {
        if (o.rht != 0 && sh.cols % static_cast<size_t>(o.rht) != 0) continue;
        o.threads = 1;
        const Quantized one = quantize(fi.id, x, sh.rows, sh.cols, o);
        for (unsigned t : {2u, 3u, 7u, 0u}) {
          o.threads = t;
          EXPECT_TRUE(same_quantized(one, quantize(fi.id, x, sh.rows, sh.cols, o)))
              << describe(fi.id, o) << " threads " << t << " shape " << sh.rows << "x" << sh.cols;
        }
        // ... and chunking changes nothing either: one kernel call over the whole tensor, and the
        // NVFP4 tensor amax of every value (NaN ignored)
        const size_t nb = sh.rows * sh.cols / static_cast<size_t>(fi.block);
        if (o.rht == 0 && fi.id == BlockFormat::Hif4) {
          std::vector<uint8_t> codes(x.size());
          std::vector<uint32_t> words(nb);
          quantize_hif4(x.data(), nb, o, codes.data(), words.data(), 0);
          EXPECT_TRUE(codes == one.codes && words == one.scale_words) << describe(fi.id, o);
        } else if (o.rht == 0 && fi.id != BlockFormat::Nvfp4) {
          std::vector<uint8_t> codes(x.size()), scales(nb);
          quantize_mx(fi.id, x.data(), nb, o, codes.data(), scales.data(), 0);
          EXPECT_TRUE(codes == one.codes && scales == one.scales) << describe(fi.id, o);
        } else if (o.rht == 0) {
          float amax = 0.0f;
          for (float v : x) amax = std::isnan(v) ? amax : std::max(amax, std::fabs(v));
          EXPECT_EQ(one.amax, amax) << describe(fi.id, o);
        }
        ++runs;
      }
    }
  }
  EXPECT_GT(runs, 100u);
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
