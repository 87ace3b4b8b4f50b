// CPU check of the GPU kernels' arithmetic: the __host__ __device__ functions of sim/gpu (run by
// fp4sim_gpu's Host backend, the same code nvcc compiles into the kernels) against the golden
// library, bit for bit. This is the evidence that runs in CI, where no GPU exists.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <random>
#include <vector>

#include "fp4sim/gpu/gpu.hpp"
#include "fp4sim/gpu/mma_hd.hpp"
#include "fp4sim/gpu/quant_hd.hpp"
#include "fp4sim/gpu/tuned_hd.hpp"
#include "fp4sim/hadamard.hpp"
#include "fp4sim/philox.hpp"

namespace fp4sim {
namespace {

using gpu::Backend;

float bits_f(uint32_t u) { return std::bit_cast<float>(u); }
uint32_t f_bits(float f) { return std::bit_cast<uint32_t>(f); }

// Random floats with spread exponents (so blocks mix binades), signs and some zeros.
std::vector<float> random_floats(size_t n, uint64_t seed, int emin = -30, int emax = 30) {
  std::mt19937_64 g(seed);
  std::uniform_int_distribution<int> ex(emin, emax);
  std::uniform_real_distribution<float> m(1.0f, 2.0f);
  std::vector<float> v(n);
  for (auto& x : v) {
    const int k = static_cast<int>(g() % 64);
    x = k == 0 ? 0.0f : std::ldexp(m(g), ex(g)) * ((g() & 1) ? -1.0f : 1.0f);
  }
  return v;
}

// Every FP32 pattern whose low 16 bits are `low`, as a flat tensor (2^16 values: all binades,
// both signs, zeros, subnormals, Inf, NaN).
std::vector<float> pattern_sweep(uint32_t low) {
  std::vector<float> v(65536);
  for (uint32_t hi = 0; hi < 65536; ++hi) v[hi] = bits_f((hi << 16) | low);
  return v;
}

void expect_same_quant(const Quantized& want, const Quantized& got, const std::string& what) {
  ASSERT_EQ(want.codes.size(), got.codes.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < want.codes.size(); ++i) {
    if (want.codes[i] != got.codes[i] && bad++ < 3) {
      ADD_FAILURE() << what << ": code " << i << " want " << int(want.codes[i]) << " got " << int(got.codes[i]);
    }
  }
  EXPECT_EQ(bad, 0u) << what;
  EXPECT_EQ(want.scales, got.scales) << what;
  EXPECT_EQ(want.scale_words, got.scale_words) << what;
  EXPECT_EQ(f_bits(want.global_scale), f_bits(got.global_scale)) << what;
  EXPECT_EQ(f_bits(want.amax), f_bits(got.amax)) << what;
}

TEST(GpuHd, SrByteIsGoldenPhilox) {
  std::mt19937_64 g(1);
  for (int t = 0; t < 20000; ++t) {
    const uint64_t seed = g(), i = g() >> (g() % 64);
    const auto stream = static_cast<uint32_t>(g());
    ASSERT_EQ(gpu::hd::sr_byte(seed, stream, i), sr_byte(seed, stream, i));
  }
}

// encode_mag against fp4sim::encode for every MX element type and rounding, over every FP32
// pattern with 16 random low bits per high half (non-negative, finite and Inf).
TEST(GpuHd, EncodeMagMatchesGolden) {
  std::mt19937 g(2);
  const BlockFormat fmts[] = {BlockFormat::Mxfp4, BlockFormat::Mxfp6E2M3, BlockFormat::Mxfp6E3M2,
                              BlockFormat::Mxfp8E4M3, BlockFormat::Mxfp8E5M2};
  size_t checked = 0;
  for (BlockFormat bf : fmts) {
    const ElemFormat& f = *info(bf).elem;
    const gpu::hd::Elem e{f.mbits, f.bias, f.max_code(), f.sign_bit(), info(bf).emax_elem, decode(f, f.max_code())};
    for (uint32_t hi = 0; hi <= 0x7F80u; ++hi) {
      const uint32_t lows[] = {0u, 1u, 0x8000u, 0xFFFFu, static_cast<uint32_t>(g() & 0xFFFFu)};
      for (uint32_t lo : lows) {
        const float x = bits_f((hi << 16) | (hi == 0x7F80u ? 0u : lo));
        for (int rnd = 0; rnd < 4; ++rnd) {
          const auto r = static_cast<uint8_t>(g());
          const uint32_t want = encode(f, x, static_cast<Rounding>(rnd), true, r);
          ASSERT_EQ(gpu::hd::encode_mag(e, x, rnd, r), want) << f.name << " x=" << x << " rnd=" << rnd << " r=" << int(r);
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 3000000u);
}

TEST(GpuHd, Ue4m3ScaleMatchesGolden) {
  // Every non-negative FP32 pattern up to +Inf in steps of 2^8 (1/256 of all, all binades).
  for (uint32_t u = 0; u <= 0x7F800000u; u += 256) {
    ASSERT_EQ(gpu::hd::ue4m3_rne_sat(bits_f(u)), encode(kUE4M3, bits_f(u), Rounding::Rne, true)) << u;
  }
}

struct QCase {
  BlockFormat f;
  QuantOptions o;
  std::string name;
};

std::vector<QCase> quant_cases() {
  std::vector<QCase> v;
  for (const auto& fi : all_block_formats()) {
    const std::string n(fi.name);
    for (Rounding r : {Rounding::Rne, Rounding::Rna, Rounding::Rz, Rounding::Sr}) {
      if (fi.id == BlockFormat::Hif4 && r == Rounding::Rz) continue;
      QuantOptions o;
      o.rounding = r;
      o.seed = 0x1234567890ABCDEFull;
      o.stream = 3;
      v.push_back({fi.id, o, n + "/" + std::string(rounding_name(r))});
      if (fi.id != BlockFormat::Nvfp4 && fi.id != BlockFormat::Hif4) {
        o.scale_rule = ScaleRule::Ceil;
        v.push_back({fi.id, o, n + "/ceil/" + std::string(rounding_name(r))});
      }
      if (fi.id == BlockFormat::Nvfp4) {
        QuantOptions o2 = o;
        o2.two_d = true;
        v.push_back({fi.id, o2, n + "/2d/" + std::string(rounding_name(r))});
        o2 = o;
        o2.pts = false;
        v.push_back({fi.id, o2, n + "/nopts/" + std::string(rounding_name(r))});
      }
    }
    QuantOptions h;
    h.rht = 16;
    v.push_back({fi.id, h, n + "/rht16"});
    h.rht_bf16 = true;
    v.push_back({fi.id, h, n + "/rht16-bf16"});
    h.rht_seeded = true;
    h.rht_seed = 99;
    h.rounding = Rounding::Sr;
    if (fi.id == BlockFormat::Nvfp4) h.two_d = true;
    v.push_back({fi.id, h, n + "/rht16-seeded-sr"});
  }
  return v;
}

TEST(GpuHd, QuantizeRandomMatchesGolden) {
  size_t values = 0;
  for (const QCase& qc : quant_cases()) {
    for (uint64_t seed : {1u, 2u, 3u}) {
      const size_t rows = 40, cols = 192;  // 2D tiles with a partial last row tile
      std::vector<float> x = random_floats(rows * cols, seed * 77 + static_cast<uint64_t>(qc.f),
                                           seed == 3 ? -140 : -30, seed == 3 ? 127 : 30);
      if (seed == 2) {  // specials sprinkled in
        x[5] = std::numeric_limits<float>::quiet_NaN();
        x[70] = -std::numeric_limits<float>::infinity();
        x[300] = -0.0f;
        x[400] = bits_f(1);  // smallest subnormal
        x[1000] = std::numeric_limits<float>::max();
      }
      const Quantized want = quantize(qc.f, x, rows, cols, qc.o);
      // Direct: the simple kernels' block functions; Tuned: the tuned kernels' lane functions
      for (gpu::QuantKernel k : {gpu::QuantKernel::Direct, gpu::QuantKernel::Tuned}) {
        const Quantized got = gpu::quantize(Backend::Host, qc.f, x, rows, cols, qc.o, k);
        expect_same_quant(want, got, qc.name + " seed " + std::to_string(seed) + (k == gpu::QuantKernel::Tuned ? " tuned" : ""));
        values += x.size();
      }
    }
  }
  EXPECT_GT(values, 1000000u);
}

// Every FP32 high half (with four low halves), so each element value pattern passes through
// every quantizer and option set at least once.
TEST(GpuHd, QuantizePatternSweepMatchesGolden) {
  for (const QCase& qc : quant_cases()) {
    for (uint32_t low : {0u, 0x0001u, 0x8000u, 0xFFFFu}) {
      const std::vector<float> x = pattern_sweep(low);
      const size_t cols = 256, rows = x.size() / cols;
      const Quantized want = quantize(qc.f, x, rows, cols, qc.o);
      for (gpu::QuantKernel k : {gpu::QuantKernel::Direct, gpu::QuantKernel::Tuned}) {
        const Quantized got = gpu::quantize(Backend::Host, qc.f, x, rows, cols, qc.o, k);
        expect_same_quant(want, got, qc.name + " sweep low " + std::to_string(low) + (k == gpu::QuantKernel::Tuned ? " tuned" : ""));
      }
    }
  }
}

TEST(GpuHd, Rht16MatchesGolden) {
  std::mt19937_64 g(5);
  const auto signs = rht_signs(16);
  uint32_t mask = 0;
  for (int i = 0; i < 16; ++i) mask |= (signs[static_cast<size_t>(i)] < 0 ? 1u : 0u) << i;
  EXPECT_EQ(mask, kTeRhtSignMask);
  for (int t = 0; t < 20000; ++t) {
    std::vector<float> x(16);
    const int kind = t % 4;
    for (auto& v : x) {
      const uint32_t u = static_cast<uint32_t>(g());
      // wide spreads (kind 1: the full range, incl. subnormals / Inf / NaN) and cancellations
      v = kind == 1 ? bits_f(u) : std::ldexp(1.0f + float(u & 0xFFFFF) / 1048576.0f, int(g() % 60) - 30) * ((u >> 31) ? -1.f : 1.f);
    }
    if (kind == 2) x[3] = -x[5];
    if (kind == 3) x[7] = std::ldexp(1.0f, -149 + int(g() % 400));
    for (bool bf : {false, true}) {
      std::vector<float> want = x;
      rht_apply(want, 16, 16, signs, bf);
      for (int j = 0; j < 16; ++j) {
        const float got = gpu::hd::rht16_output(x.data(), mask, j, bf);
        if (std::isnan(want[static_cast<size_t>(j)])) {
          ASSERT_TRUE(std::isnan(got)) << t << " " << j;
        } else {
          ASSERT_EQ(f_bits(got), f_bits(want[static_cast<size_t>(j)])) << t << " " << j;
        }
      }
    }
  }
}

// The tuned kernels' RHT (tuned_hd.hpp): a double-precision fast path when the tile's exponent
// spread allows it, the exact accumulator otherwise. Spreads around the 25-binade bound, both
// signs, subnormals, cancellations, overflow; both paths must be taken.
TEST(GpuHd, Rht16FastPathMatchesGolden) {
  std::mt19937_64 g(11);
  const auto signs = rht_signs(16);
  uint32_t mask = 0;
  for (int i = 0; i < 16; ++i) mask |= (signs[static_cast<size_t>(i)] < 0 ? 1u : 0u) << i;
  size_t fast = 0, slow = 0;
  for (int t = 0; t < 40000; ++t) {
    std::vector<float> x(16);
    const int spread = static_cast<int>(g() % 32);  // 0 .. 31 binades
    const int base = t % 5 == 0 ? -149 : (t % 5 == 1 ? 100 : static_cast<int>(g() % 200) - 100);
    for (auto& v : x) {
      const uint32_t u = static_cast<uint32_t>(g());
      v = std::ldexp(1.0f + float(u & 0x7FFFFF) / 8388608.0f, std::min(127, base + int(g() % unsigned(spread + 1))));
      if (u >> 31) v = -v;
      if ((u & 0x70000000u) == 0) v = u & 1u ? -0.0f : 0.0f;
    }
    if (t % 7 == 0) x[2] = -x[9];
    if (t % 11 == 0) x[4] = std::numeric_limits<float>::max();
    (gpu::hd::rht16_fast_ok(x.data()) ? fast : slow)++;
    for (bool bf : {false, true}) {
      std::vector<float> want = x;
      rht_apply(want, 16, 16, signs, bf);
      for (int q = 0; q < 4; ++q) {
        float got[4];
        gpu::hd::rht16_outputs4(x.data(), mask, q, bf, got);
        for (int o = 0; o < 4; ++o) {
          const size_t jj = static_cast<size_t>(4 * q + o);
          ASSERT_EQ(f_bits(got[o]), f_bits(want[jj])) << t << " " << jj << " spread " << spread << " base " << base;
        }
      }
    }
  }
  EXPECT_GT(fast, 10000u);
  EXPECT_GT(slow, 5000u);
  // A tile whose exact sum needs 57 bits within a 29-binade spread, built so that a double sum
  // rounds it (to a float tie) and the float result then differs from the exact one: output 0 =
  // 13 (2^30 - 64) + (2^29 + 256) + 65 - (1 + 2^-23) = F + 512 - 2^-23 with F / 1024 odd. The fast
  // path must not take it (a spread bound above 25 would, and fail here).
  const double v[16] = {0x1p30 - 64, 0x1p30 - 64, 0x1p30 - 64, 0x1p30 - 64, 0x1p30 - 64, 0x1p30 - 64, 0x1p30 - 64,
                        0x1p30 - 64, 0x1p30 - 64, 0x1p30 - 64, 0x1p30 - 64, 0x1p30 - 64, 0x1p30 - 64,
                        0x1p29 + 256, 65, -(1 + 0x1p-23)};
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) {  // term i of output 0 has sign x_i * d_i: undo d_i
    const float a = static_cast<float>(v[i]);
    x[static_cast<size_t>(i)] = signs[static_cast<size_t>(i)] < 0 ? -a : a;
  }
  std::vector<float> want = x;
  rht_apply(want, 16, 16, signs, false);
  EXPECT_EQ(want[0], static_cast<float>((13.5 * 0x1p30 - 1024) / 4));  // the exact result rounds down
  EXPECT_NE(static_cast<float>(std::accumulate(v, v + 16, 0.0) / 4), want[0]);  // a double sum does not
  EXPECT_FALSE(gpu::hd::rht16_fast_ok(x.data()));
  float got[4];
  gpu::hd::rht16_outputs4(x.data(), mask, 0, false, got);
  EXPECT_EQ(f_bits(got[0]), f_bits(want[0]));
}

// The tuned kernels' warp layout: the Philox word a lane is handed (from the lane that drew the
// block) is the word sr_word4 gives for the lane's 4 elements, for every step and lane; every
// element of a tile is some lane's in exactly one step.
TEST(GpuHd, TunedWarpLayoutCoversTileAndSrWords) {
  for (uint64_t tile : {uint64_t{0}, uint64_t{512}, uint64_t{512} * 12345}) {
    std::vector<int> seen(gpu::hd::kTileElems, 0);
    for (int it = 0; it < 4; ++it) {
      for (unsigned lane = 0; lane < 32; ++lane) {
        const size_t off = gpu::hd::tile_offset(it, lane);
        ASSERT_EQ(off % 4, 0u);
        for (int i = 0; i < 4; ++i) ++seen[off + static_cast<size_t>(i)];
        const int src = gpu::hd::sr_src_lane(it, lane);
        ASSERT_GE(src, 0);
        ASSERT_LT(src, 32);
        const auto drawn = philox_block(77, 5, tile / 16 + static_cast<uint64_t>(src));  // what lane src drew
        EXPECT_EQ(drawn[static_cast<size_t>(gpu::hd::sr_word_index(lane))], gpu::hd::sr_word4(77, 5, tile + off))
            << it << " " << lane;
        // a block of 16 / 32 / 64 is 4 / 8 / 16 neighbouring lanes of one step (aligned groups)
        EXPECT_EQ(off / 16, (static_cast<size_t>(it) * 128 + 4 * (lane & ~3u)) / 16);
        EXPECT_EQ((tile + off) % 64 / 4, static_cast<size_t>(lane & 15u));  // HiF4 group j = lane % 16
      }
    }
    for (int c : seen) ASSERT_EQ(c, 1);
  }
}

// ---- GEMM ----

struct GCfg {
  MmaConfig cfg;
  Model model;
  std::string name;
};

std::vector<GCfg> gemm_cfgs() {
  std::vector<GCfg> v;
  auto add = [&](MmaConfig c, const std::string& n) {
    for (Model m : {Model::Blackwell, Model::AscendHif4, Model::Fp32Seq, Model::Exact}) {
      if (gpu::cannot_run(c, m).empty()) v.push_back({c, m, n + "/" + std::string(model_name(m))});
    }
  };
  add(make_mma_config(MmaKindId::Mxf4), "mxf4");
  for (const ElemFormat* s : {&kUE4M3, &kUE8M0})
    for (int b : {16, 32}) add(make_mma_config(MmaKindId::Mxf4Nvf4, nullptr, nullptr, s, b), "mxf4nvf4-" + std::string(s->name) + "-" + std::to_string(b));
  for (const ElemFormat* a : {&kE4M3, &kE5M2, &kE2M3, &kE3M2, &kE2M1})
    for (const ElemFormat* b : {&kE4M3, &kE5M2, &kE2M3, &kE3M2, &kE2M1})
      add(make_mma_config(MmaKindId::Mxf8f6f4, a, b), "mxf8f6f4-" + std::string(a->name) + "x" + std::string(b->name));
  add(make_mma_config(MmaKindId::Hif4), "hif4");
  return v;
}

void expect_same_gemm(const GCfg& gc, size_t M, size_t N, size_t K, const std::vector<uint8_t>& a,
                      const std::vector<uint32_t>& sa, const std::vector<uint8_t>& b, const std::vector<uint32_t>& sb,
                      const std::vector<float>& c, float alpha, const std::string& what) {
  const std::vector<float> want = gemm(gc.cfg, gc.model, M, N, K, a, sa, b, sb, c, alpha, 1);
  const std::vector<uint32_t> got = gpu::gemm(Backend::Host, gc.cfg, gc.model, M, N, K, a, sa, b, sb, c, alpha);
  ASSERT_EQ(want.size(), got.size());
  size_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (f_bits(want[i]) != got[i] && bad++ < 3) {
      ADD_FAILURE() << gc.name << " " << what << ": D[" << i << "] want 0x" << std::hex << f_bits(want[i]) << " got 0x" << got[i];
    }
  }
  EXPECT_EQ(bad, 0u) << gc.name << " " << what;
}

uint32_t random_scale(std::mt19937_64& g, const MmaConfig& cfg, bool tame) {
  if (cfg.kind->scale_word32) {  // HiF4 word: E6M2 byte + 24 level bits
    const uint32_t e = tame ? 40 + static_cast<uint32_t>(g() % 120) : static_cast<uint32_t>(g() % 256);
    return (static_cast<uint32_t>(g()) & 0xFFFFFF00u) | e;
  }
  if (tame) return cfg.scale == &kUE8M0 ? 117 + static_cast<uint32_t>(g() % 20) : 0x20 + static_cast<uint32_t>(g() % 0x40);
  return static_cast<uint32_t>(g() % 256);
}

uint32_t random_scale_unit(const MmaConfig& cfg) {  // a scale of 1.0 in the config's scale format
  if (cfg.kind->scale_word32) return 48u;
  return cfg.scale == &kUE8M0 ? 127u : 0x38u;
}

TEST(GpuHd, GemmRandomMatchesGolden) {
  std::mt19937_64 g(11);
  size_t outputs = 0;
  for (const GCfg& gc : gemm_cfgs()) {
    for (int rep = 0; rep < 6; ++rep) {
      const bool tame = rep % 2 == 0;  // tame: no NaN scales, realistic ranges; else every code
      const size_t M = 5, N = 7, K = static_cast<size_t>(gc.cfg.kind->k) * (1 + rep % 3);
      const size_t nblk = K / static_cast<size_t>(gc.cfg.block);
      std::vector<uint8_t> a(M * K), b(N * K);
      for (auto& x : a) x = static_cast<uint8_t>(g());
      for (auto& x : b) x = static_cast<uint8_t>(g());
      std::vector<uint32_t> sa(M * nblk), sb(N * nblk);
      for (auto& s : sa) s = random_scale(g, gc.cfg, tame);
      for (auto& s : sb) s = random_scale(g, gc.cfg, tame);
      std::vector<float> c;
      if (rep != 1) {
        c.resize(M * N);
        for (auto& x : c) x = rep == 3 ? bits_f(static_cast<uint32_t>(g())) : std::ldexp(float(int(g() % 2001) - 1000), int(g() % 40) - 30);
      }
      const float alpha = rep == 4 ? 0.375f : 1.0f;
      expect_same_gemm(gc, M, N, K, a, sa, b, sb, c, alpha, "rep " + std::to_string(rep));
      outputs += M * N;
    }
  }
  EXPECT_GT(outputs, 5000u);
}

// Exhaustive over scale-code pairs: one instruction per output, A row i has scale code i, B row j
// scale code j (every pair of the 256 codes), fixed random elements and C.
TEST(GpuHd, GemmEveryScalePairMatchesGolden) {
  std::mt19937_64 g(12);
  for (const GCfg& gc : gemm_cfgs()) {
    if (gc.cfg.kind->id == MmaKindId::Mxf8f6f4 && gc.cfg.elem_a != gc.cfg.elem_b) continue;  // one per elem type
    const size_t M = 256, N = 256, K = static_cast<size_t>(gc.cfg.kind->k);
    const size_t nblk = K / static_cast<size_t>(gc.cfg.block);
    std::vector<uint8_t> a(M * K), b(N * K);
    for (auto& x : a) x = static_cast<uint8_t>(g());
    for (auto& x : b) x = static_cast<uint8_t>(g());
    std::vector<uint32_t> sa(M * nblk), sb(N * nblk);
    for (size_t i = 0; i < M; ++i)
      for (size_t k = 0; k < nblk; ++k) {
        const uint32_t lv = gc.cfg.kind->scale_word32 ? (static_cast<uint32_t>(g()) & 0xFFFFFF00u) : 0u;
        sa[i * nblk + k] = lv | static_cast<uint32_t>(i);
        sb[i * nblk + k] = lv | static_cast<uint32_t>((i * 7 + k) % 256);
      }
    std::vector<float> c(M * N);
    for (auto& x : c) x = std::ldexp(float(int(g() % 2001) - 1000), int(g() % 300) - 150);
    expect_same_gemm(gc, M, N, K, a, sa, b, sb, c, 1.0f, "scale pairs");
  }
}

// Exhaustive over element-code pairs: product k = 0 takes every (a, b) code pair, the rest of the
// instruction random, scales unit (UE8M0 127) or random.
TEST(GpuHd, GemmEveryElementPairMatchesGolden) {
  std::mt19937_64 g(13);
  for (const GCfg& gc : gemm_cfgs()) {
    const ElemFormat& fa = *gc.cfg.elem_a;
    const ElemFormat& fb = *gc.cfg.elem_b;
    const size_t na = fa.bits >= 8 ? 256 : (1u << fa.bits), nb = fb.bits >= 8 ? 256 : (1u << fb.bits);
    const size_t M = na, N = nb, K = static_cast<size_t>(gc.cfg.kind->k);
    const size_t nblk = K / static_cast<size_t>(gc.cfg.block);
    std::vector<uint8_t> a(M * K), b(N * K);
    for (auto& x : a) x = static_cast<uint8_t>(g() % na);
    for (auto& x : b) x = static_cast<uint8_t>(g() % nb);
    for (size_t i = 0; i < M; ++i) a[i * K] = static_cast<uint8_t>(i);
    for (size_t j = 0; j < N; ++j) b[j * K] = static_cast<uint8_t>(j);
    std::vector<uint32_t> sa(M * nblk), sb(N * nblk);
    for (auto& s : sa) s = random_scale(g, gc.cfg, true);
    for (auto& s : sb) s = random_scale(g, gc.cfg, true);
    std::vector<float> c(M * N);
    for (auto& x : c) x = std::ldexp(float(int(g() % 2001) - 1000), int(g() % 60) - 40);
    expect_same_gemm(gc, M, N, K, a, sa, b, sb, c, 1.0f, "element pairs");
  }
}

// Signed zeros: C = -0 and every element a -0 code, so D keeps -0 only if each product is -0.
TEST(GpuHd, GemmNegativeZeroElements) {
  for (const GCfg& gc : gemm_cfgs()) {
    const size_t M = 2, N = 2, K = static_cast<size_t>(gc.cfg.kind->k);
    const size_t nblk = K / static_cast<size_t>(gc.cfg.block);
    const uint8_t nz = static_cast<uint8_t>(gc.cfg.elem_a->sign_bit());
    std::vector<uint8_t> a(M * K, nz), b(N * K, 0);
    b[K] = static_cast<uint8_t>(gc.cfg.elem_b->sign_bit());  // row 1 of B: -0 at k = 0
    std::vector<uint32_t> sa(M * nblk, random_scale_unit(gc.cfg)), sb(N * nblk, random_scale_unit(gc.cfg));
    const std::vector<float> c = {-0.0f, 0.0f, -0.0f, -0.0f};
    expect_same_gemm(gc, M, N, K, a, sa, b, sb, c, 1.0f, "-0 elements");
  }
}

TEST(GpuHd, CannotRunNamesUnsupported) {
  const MmaConfig cfg = make_mma_config(MmaKindId::Mxf4);
  EXPECT_TRUE(gpu::cannot_run(cfg, Model::Exact).empty());
  EXPECT_TRUE(gpu::cannot_run(cfg, Model::Blackwell).empty());
  EXPECT_FALSE(gpu::cannot_run(cfg, Model::AscendHif4).empty());  // hif4 only
  MmaConfig h = make_mma_config(MmaKindId::Hif4);
  h.hif4_round_groups = 2;
  EXPECT_FALSE(gpu::cannot_run(h, Model::AscendHif4).empty());
  QuantOptions o;
  o.rht = 64;
  EXPECT_FALSE(gpu::cannot_quantize(BlockFormat::Hif4, o).empty());
}

// The benchmark's GEMM operands use unit_scale_code: it must be the scale 1.0 of every kind (it once
// was code 48 for HiF4, which is 2^-36 in E6M2), so a GEMM of ones with those scales gives K.
TEST(GpuHd, BenchUnitScaleIsOne) {
  EXPECT_EQ(gpu::unit_scale_code(make_mma_config(MmaKindId::Hif4)), 48u << 2);
  EXPECT_EQ(gpu::unit_scale_code(make_mma_config(MmaKindId::Mxf4)), 127u);
  EXPECT_EQ(gpu::unit_scale_code(make_mma_config(MmaKindId::Mxf4Nvf4, nullptr, nullptr, &kUE4M3, 16)), 0x38u);
  const std::pair<MmaConfig, Model> cfgs[] = {
      {make_mma_config(MmaKindId::Mxf4Nvf4, nullptr, nullptr, &kUE4M3, 16), Model::Blackwell},
      {make_mma_config(MmaKindId::Mxf4), Model::Blackwell},
      {make_mma_config(MmaKindId::Mxf8f6f4), Model::Blackwell},
      {make_mma_config(MmaKindId::Hif4), Model::AscendHif4},
      {make_mma_config(MmaKindId::Mxf4), Model::Fp32Seq}};
  for (const auto& [cfg, model] : cfgs) {
    const uint32_t unit = gpu::unit_scale_code(cfg);
    EXPECT_EQ(decode(*cfg.scale, unit & 0xFFu), 1.0) << cfg.kind->name;
    const size_t M = 2, N = 3, K = 128, nblk = K / static_cast<size_t>(cfg.block);
    const std::vector<uint8_t> a(M * K, static_cast<uint8_t>(encode(*cfg.elem_a, 1.0, Rounding::Rne, true)));
    const std::vector<uint8_t> b(N * K, static_cast<uint8_t>(encode(*cfg.elem_b, 1.0, Rounding::Rne, true)));
    const std::vector<uint32_t> sa(M * nblk, unit), sb(N * nblk, unit);
    const std::vector<uint32_t> d = gpu::gemm(Backend::Host, cfg, model, M, N, K, a, sa, b, sb, {});
    for (uint32_t x : d) EXPECT_EQ(bits_f(x), static_cast<float>(K)) << cfg.kind->name;
  }
}

TEST(GpuHd, DeviceBackendReportsWhyNot) {
  std::string why;
  const bool ok = gpu::gpu_available(why);
  EXPECT_FALSE(why.empty());  // a device name or the reason there is none
  std::string again;
  EXPECT_EQ(gpu::gpu_available(again), ok);  // decided once
  EXPECT_EQ(again, why);
  if (!gpu::built_with_cuda()) {
    EXPECT_FALSE(ok);
  }
  std::string mod;
  if (std::getenv("FP4SIM_GPU_MODULE") == nullptr) {
    EXPECT_TRUE(gpu::gpu_module_ok(mod)) << mod;  // the build's own module is found and loads
  }
  if (!ok) {  // a Device call fails with the same one reason
    const std::vector<float> x(16, 1.0f);
    try {
      (void)gpu::quantize(Backend::Device, BlockFormat::Nvfp4, x, 1, 16);
      ADD_FAILURE() << "Device quantize ran without a device";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what() << " vs " << why;
    }
  }
}

// Run by the CTest gpu_module_missing with FP4SIM_GPU_MODULE pointing at no file.
TEST(GpuHd, MissingModuleGivesOneReason) {
  if (std::getenv("FP4SIM_TEST_MODULE_MISSING") == nullptr) GTEST_SKIP() << "run by the CTest gpu_module_missing";
  if (!gpu::built_with_cuda()) GTEST_SKIP() << "no CUDA module in this build";
  std::string why, mod;
  EXPECT_FALSE(gpu::gpu_available(why));
  EXPECT_FALSE(gpu::gpu_module_ok(mod));
  EXPECT_EQ(why, mod);
  EXPECT_NE(why.find("libfp4sim_gpu_cuda.so could not be loaded"), std::string::npos) << why;
  EXPECT_NE(why.find(std::getenv("FP4SIM_GPU_MODULE")), std::string::npos) << why;  // says where it looked
  const std::vector<float> x(16, 1.0f);
  EXPECT_THROW((void)gpu::quantize(Backend::Device, BlockFormat::Nvfp4, x, 1, 16), std::runtime_error);
  // the Host backend does not need the module
  EXPECT_NO_THROW((void)gpu::quantize(Backend::Host, BlockFormat::Nvfp4, x, 1, 16));
}

}  // namespace
}  // namespace fp4sim
