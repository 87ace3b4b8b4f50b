// Tests of the parametric MMA model (mma.hpp's Numerics, golden/src/mma_numerics.cpp,
// docs/numerics.md "Numerics a designer can set").
//
// 1. Each preset, run through the parametric engine, gives the bits of the named model's own code
//    (mma.cpp / mma_fast.cpp, themselves checked against MMA-Sim and the references in
//    test_mma.cpp) on every kind configuration: random codes over the whole code space (NaN, Inf,
//    subnormals), special C values, chained K, every HiF4 rounding point.
// 2. Variants: results derived by hand in the comments.
// 3. The "key=value" syntax.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "fp4sim/format.hpp"
#include "fp4sim/mma.hpp"

namespace {

using fp4sim::MmaConfig;
using fp4sim::MmaKindId;
using fp4sim::Model;
using fp4sim::Numerics;

uint32_t fb(float f) { return std::bit_cast<uint32_t>(f); }

// Every configuration of every kind (element pairs, scale types, blocks).
std::vector<MmaConfig> all_configs() {
  std::vector<MmaConfig> v;
  for (const auto& k : fp4sim::all_mma_kinds())
    for (const auto* ea : k.elems)
      for (const auto* eb : k.elems)
        for (const auto* s : k.scales)
          for (int blk : k.blocks)
            if (ea && eb && s && blk) v.push_back(fp4sim::make_mma_config(k.id, ea, eb, s, blk));
  return v;
}

struct Operands {
  size_t M, N, K;
  std::vector<uint8_t> a, b;
  std::vector<uint32_t> sa, sb;
  std::vector<float> c;
};

// Random operands: codes over the whole code space in one row of four (NaN / Inf / -0 codes
// included), the other rows without special codes; scales mostly near 1 with some at the ends of
// their range (dequantized overflow and subnormals); C normal, subnormal, +-0, +-Inf, NaN, huge.
Operands random_operands(const MmaConfig& cfg, size_t M, size_t N, size_t K, uint32_t seed) {
  std::mt19937 g(seed);
  Operands o{M, N, K, {}, {}, {}, {}, {}};
  auto codes = [&](const fp4sim::ElemFormat& f, size_t rows, std::vector<uint8_t>& out) {
    const uint32_t n = 1u << f.bits;
    out.resize(rows * K);
    for (size_t r = 0; r < rows; ++r) {
      const bool wild = r % 4 == 3;
      for (size_t k = 0; k < K; ++k) {
        uint8_t x = static_cast<uint8_t>(g() % n);
        if (!wild && !std::isfinite(fp4sim::decode(f, x))) x = 0;
        out[r * K + k] = x;
      }
    }
  };
  codes(*cfg.elem_a, M, o.a);
  codes(*cfg.elem_b, N, o.b);
  auto scales = [&](size_t rows, std::vector<uint32_t>& out) {
    const size_t nb = K / static_cast<size_t>(cfg.block);
    out.resize(rows * nb);
    for (auto& s : out) {
      const uint32_t r = g() % 16;
      uint32_t code;
      if (cfg.scale->name == fp4sim::kUE8M0.name) code = r == 0 ? g() % 256 : 127 - 12 + g() % 24;
      else if (cfg.scale->name == fp4sim::kUE4M3.name) code = r == 0 ? g() % 128 : 0x30 + g() % 24;
      else code = r == 0 ? g() % 256 : 96 + g() % 64;  // E6M2
      if (cfg.kind->scale_word32) code |= (g() & 0xFFFFFF00u);  // HiF4 level bits
      s = code;
    }
  };
  scales(M, o.sa);
  scales(N, o.sb);
  o.c.resize(M * N);
  const float cs[] = {0.0f, -0.0f, 1.0f, -3.5f, 1e-40f, -1e-42f, 3e38f, -3e38f, INFINITY, -INFINITY, NAN, 1e-30f};
  for (auto& x : o.c) {
    const uint32_t r = g() % 4;
    x = r == 0 ? cs[g() % 12] : std::ldexp(static_cast<float>(static_cast<int>(g() % 2001) - 1000), static_cast<int>(g() % 40) - 20);
  }
  return o;
}

std::vector<float> run(const MmaConfig& cfg, Model m, const Operands& o, float alpha = 1.0f, bool ref = false) {
  auto f = ref ? &fp4sim::gemm_reference
               : static_cast<std::vector<float> (*)(const MmaConfig&, Model, size_t, size_t, size_t,
                                                    std::span<const uint8_t>, std::span<const uint32_t>,
                                                    std::span<const uint8_t>, std::span<const uint32_t>,
                                                    std::span<const float>, float, unsigned)>(&fp4sim::gemm);
  return f(cfg, m, o.M, o.N, o.K, o.a, o.sa, o.b, o.sb, o.c, alpha, 1);
}

MmaConfig custom(MmaConfig cfg, const Numerics& n) {
  cfg.numerics = n;
  cfg.model = Model::Custom;
  return cfg;
}

size_t mismatches(const std::vector<float>& x, const std::vector<float>& y, std::string& first) {
  size_t n = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (fb(x[i]) != fb(y[i]) && n++ == 0) first = "output " + std::to_string(i) + ": " + std::to_string(fb(x[i])) + " vs " + std::to_string(fb(y[i]));
  }
  return n;
}

// ---------------------------------------------------------------------------------------------
// 1. Presets give the named models' bits

TEST(NumericsPresets, EveryModelEveryConfiguration) {
  uint32_t seed = 1;
  size_t compared = 0;
  for (const MmaConfig& cfg : all_configs()) {
    std::vector<std::pair<Model, int>> models = {{Model::Exact, 1}, {Model::Fp32Seq, 1}};
    if (cfg.kind->hardware_model == Model::Blackwell) models.push_back({Model::Blackwell, 1});
    else for (int G : {1, 2, 0}) models.push_back({Model::AscendHif4, G});
    for (auto [m, G] : models) {
      MmaConfig c = cfg;
      c.hif4_round_groups = G;
      const size_t K = static_cast<size_t>(3 * cfg.kind->k);  // three chained instructions
      const Operands o = random_operands(c, 12, 9, K, seed++);
      const auto want = run(c, m, o, 0.75f);
      const auto got = run(custom(c, fp4sim::preset_numerics(c, m)), Model::Custom, o, 0.75f);
      std::string first;
      EXPECT_EQ(mismatches(want, got, first), 0u)
          << cfg.kind->name << " " << cfg.elem_a->name << "x" << cfg.elem_b->name << " " << cfg.scale->name << "/"
          << cfg.block << " model " << fp4sim::model_name(m) << " G=" << G << ": " << first << "\n  numerics "
          << fp4sim::format_numerics(fp4sim::preset_numerics(c, m));
      compared += want.size();
    }
  }
  EXPECT_GT(compared, 10000u);
}

// Single instructions through mma_dot, many seeds: the same equality where every output is its
// own instruction with fresh operands.
TEST(NumericsPresets, MmaDotManySeeds) {
  for (const MmaConfig& base : all_configs()) {
    const Model m = base.kind->hardware_model;
    MmaConfig c = base;
    c.model = m;
    MmaConfig cc = custom(base, fp4sim::preset_numerics(base, m));
    for (uint32_t s = 0; s < 40; ++s) {
      const Operands o = random_operands(c, 1, 1, static_cast<size_t>(c.kind->k), 1000 + s);
      const uint32_t cbits = fb(o.c[0]);
      const uint32_t want = fp4sim::mma_dot(c, o.a.data(), o.b.data(), o.sa.data(), o.sb.data(), cbits);
      const uint32_t got = fp4sim::mma_dot(cc, o.a.data(), o.b.data(), o.sa.data(), o.sb.data(), cbits);
      ASSERT_EQ(want, got) << base.kind->name << " " << base.elem_a->name << "x" << base.elem_b->name << " seed " << s;
    }
  }
}

TEST(NumericsPresets, AsParameters) {
  // What each preset says, spelled out (docs/numerics.md's table).
  const MmaConfig mxf4 = fp4sim::make_mma_config(MmaKindId::Mxf4);
  EXPECT_EQ(fp4sim::format_numerics(fp4sim::preset_numerics(mxf4, Model::Blackwell)),
            "k=64,group=16,dequant=exact,products=exact,accumulate=window,frac_bits=35,align=scale,term_round=rz,"
            "out_round=rz,c=window,round_every=1,flush_subnormals=no,signed_zero=plus");
  const MmaConfig f8 = fp4sim::make_mma_config(MmaKindId::Mxf8f6f4);
  EXPECT_EQ(fp4sim::format_numerics(fp4sim::preset_numerics(f8, Model::Blackwell)),
            "k=32,group=1,dequant=exact,products=exact,accumulate=window,frac_bits=25,align=product,term_round=rz,"
            "out_round=rz,c=window,round_every=1,flush_subnormals=no,signed_zero=plus");
  EXPECT_EQ(fp4sim::format_numerics(fp4sim::preset_numerics(f8, Model::Exact)),
            "k=0,group=1,dequant=exact,products=exact,accumulate=window,frac_bits=0,align=product,term_round=rz,"
            "out_round=rne,c=window,round_every=1,flush_subnormals=no,signed_zero=ieee");
  EXPECT_EQ(fp4sim::format_numerics(fp4sim::preset_numerics(f8, Model::Fp32Seq)),
            "k=0,group=1,dequant=fp32,products=exact,accumulate=fp32,frac_bits=0,align=product,term_round=rz,"
            "out_round=rne,c=window,round_every=1,flush_subnormals=no,signed_zero=ieee");
  MmaConfig h = fp4sim::make_mma_config(MmaKindId::Hif4);
  h.hif4_round_groups = 4;
  EXPECT_EQ(fp4sim::format_numerics(fp4sim::preset_numerics(h, Model::AscendHif4)),
            "k=0,group=64,dequant=exact,products=exact,accumulate=fp32,frac_bits=0,align=product,term_round=rz,"
            "out_round=rne,c=window,round_every=4,flush_subnormals=no,signed_zero=ieee");
  EXPECT_THROW(fp4sim::preset_numerics(h, Model::Blackwell), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// 2. Variants, by hand

// mxf8f6f4, E4M3 x E4M3, scales 1 (UE8M0 127). Products: 256 * 256 = 2^16 (exponent 8 + 8 = 16,
// the largest), -240 * 256 = -61440, (1.5 * 2^-6) * 2^-3 = 1.5 * 2^-9; the rest are zeros.
// Exact sum 4096 + 1.5 * 2^-9 (exact in FP32: ulp(4096) = 2^-11). A 25-bit window keeps bits down
// to 2^(16-25) = 2^-9, so the third product is 1.5 units of the last place:
//   truncated (blackwell): 1 unit  -> 4096 + 2^-9
//   rounded to nearest even: 2 units -> 4096 + 2^-8
// and a 26-bit window holds it exactly (3 units of 2^-10).
struct WindowCase {
  MmaConfig cfg = fp4sim::make_mma_config(MmaKindId::Mxf8f6f4, &fp4sim::kE4M3, &fp4sim::kE4M3);
  std::vector<uint8_t> a = std::vector<uint8_t>(32, 0), b = std::vector<uint8_t>(32, 0);
  std::vector<uint32_t> sa{127}, sb{127};
  WindowCase() {
    a[0] = 0x78, b[0] = 0x78;  // 256 * 256
    a[1] = 0xF7, b[1] = 0x78;  // -240 * 256
    a[2] = 0x0C, b[2] = 0x20;  // 1.5 * 2^-6 * 2^-3
  }
  float dot(const Numerics& n, float c = 0.0f) const {
    const MmaConfig cc = custom(cfg, n);
    return std::bit_cast<float>(fp4sim::mma_dot(cc, a.data(), b.data(), sa.data(), sb.data(), fb(c)));
  }
  Numerics blackwell() const { return fp4sim::preset_numerics(cfg, Model::Blackwell); }
};

TEST(NumericsVariants, WindowRoundingHandDerived) {
  WindowCase w;
  Numerics n = w.blackwell();
  EXPECT_EQ(w.dot(n), 4096.0f + std::ldexp(1.0f, -9));
  MmaConfig bw = w.cfg;
  bw.model = Model::Blackwell;
  EXPECT_EQ(std::bit_cast<float>(fp4sim::mma_dot(bw, w.a.data(), w.b.data(), w.sa.data(), w.sb.data(), 0)),
            4096.0f + std::ldexp(1.0f, -9));
  fp4sim::parse_numerics("term_round=rne", n);  // the 25-bit window with round-to-nearest
  EXPECT_EQ(w.dot(n), 4096.0f + std::ldexp(1.0f, -8));
  fp4sim::parse_numerics("term_round=rz,frac_bits=26", n);
  EXPECT_EQ(w.dot(n), 4096.0f + 3 * std::ldexp(1.0f, -10));
  fp4sim::parse_numerics("frac_bits=0", n);  // unbounded: the exact sum
  EXPECT_EQ(w.dot(n), 4096.0f + 3 * std::ldexp(1.0f, -10));
}

TEST(NumericsVariants, CPlacementHandDerived) {
  // C = 2^-12 or 3 * 2^-12 in the 25-bit window aligns at 2^-9 and truncates to 0: 4096 + 2^-9.
  // Added after the window with one FP32 RN: 4096 + 2^-9 + 3 * 2^-12 = 4096 + 5.5 * 2^-11
  // (ulp(4096) = 2^-11), a tie, to even: 4096 + 6 * 2^-11.
  WindowCase w;
  Numerics n = w.blackwell();
  EXPECT_EQ(w.dot(n, std::ldexp(1.0f, -12)), 4096.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(w.dot(n, 3 * std::ldexp(1.0f, -12)), 4096.0f + std::ldexp(1.0f, -9));
  fp4sim::parse_numerics("c=after", n);
  EXPECT_EQ(w.dot(n, 3 * std::ldexp(1.0f, -12)), 4096.0f + 3 * std::ldexp(1.0f, -10));
}

TEST(NumericsVariants, OutputRoundingAndSignedZero) {
  // mxf8f6f4 E2M1, one product 1.0 * 1.0 and C = 2^24 + 2 (ulp 2 there; the window holds every bit):
  // 2^24 + 3 is half an ulp above 2^24 + 2, whose significand 2^23 + 1 is odd: RZ gives 2^24 + 2,
  // RNE 2^24 + 4.
  MmaConfig cfg = fp4sim::make_mma_config(MmaKindId::Mxf8f6f4, &fp4sim::kE2M1, &fp4sim::kE2M1);
  std::vector<uint8_t> a(32, 0), b(32, 0);
  std::vector<uint32_t> s{127};
  a[0] = 0x2, b[0] = 0x2;  // 1.0 * 1.0
  Numerics n = fp4sim::preset_numerics(cfg, Model::Blackwell);
  auto dot = [&](float c) {
    return std::bit_cast<float>(fp4sim::mma_dot(custom(cfg, n), a.data(), b.data(), s.data(), s.data(), fb(c)));
  };
  EXPECT_EQ(dot(16777218.0f), 16777218.0f);  // RZ
  fp4sim::parse_numerics("out_round=rne", n);
  EXPECT_EQ(dot(16777218.0f), 16777220.0f);
  // Zero sign: C = -0 and every product -0 (a = -0 codes, b = +0): IEEE gives -0, a fixed-point
  // adder (blackwell, signed_zero=plus) +0.
  std::fill(a.begin(), a.end(), 0x8);
  std::fill(b.begin(), b.end(), 0x0);
  EXPECT_EQ(fb(dot(-0.0f)), 0x00000000u);  // still signed_zero=plus
  fp4sim::parse_numerics("signed_zero=ieee", n);
  EXPECT_EQ(fb(dot(-0.0f)), 0x80000000u);
  EXPECT_EQ(fb(dot(0.0f)), 0x00000000u);
}

TEST(NumericsVariants, ProductsRoundedToFp32AndFlush) {
  // mxf8f6f4 E4M3 with scales 2^-127 (UE8M0 code 0): product 1 * 1 * 2^-254 is below FP32's
  // smallest subnormal 2^-149: exact products keep it (the exact model: D = RN(2^-254) = +0 but
  // inexact), RN to FP32 per product makes it +0. With C = 2^-149 (the smallest subnormal):
  //   exact products, exact sum: 2^-149 + 2^-254 -> RN 2^-149;
  //   flush_subnormals: C is flushed to +0 and D = RN(2^-254) = +0.
  MmaConfig cfg = fp4sim::make_mma_config(MmaKindId::Mxf8f6f4, &fp4sim::kE4M3, &fp4sim::kE4M3);
  std::vector<uint8_t> a(32, 0), b(32, 0);
  std::vector<uint32_t> s{0};
  a[0] = 0x38, b[0] = 0x38;  // 1.0 * 1.0
  Numerics n = fp4sim::preset_numerics(cfg, Model::Exact);
  auto dot = [&](uint32_t c) { return fp4sim::mma_dot(custom(cfg, n), a.data(), b.data(), s.data(), s.data(), c); };
  EXPECT_EQ(dot(0x00000001u), 0x00000001u);
  fp4sim::parse_numerics("products=fp32", n);
  EXPECT_EQ(dot(0x00000001u), 0x00000001u);
  // Two products of exactly 2^-150 (half the smallest subnormal; scales 2^-75 each) and C = 0:
  // exact products sum to 2^-149; RN to FP32 per product gives +0 each (a tie, to even).
  s = {127 - 75};  // 2^-75 each: product 2^-150
  a[1] = 0x38, b[1] = 0x38;
  fp4sim::parse_numerics("products=exact", n);
  EXPECT_EQ(dot(0u), 0x00000001u);  // 2^-150 + 2^-150 = 2^-149
  fp4sim::parse_numerics("products=fp32", n);
  EXPECT_EQ(dot(0u), 0x00000000u);  // each RN(2^-150) = 0 (tie to even zero)
  fp4sim::parse_numerics("products=exact,flush_subnormals=yes", n);
  EXPECT_EQ(dot(0u), 0x00000000u);  // D = 2^-149 is subnormal: flushed to +0
}

TEST(NumericsVariants, GroupAndChainLength) {
  // mxf4nvf4 with 4 groups of 16: a variant with group = 64 does not fit (block 16 or 32: a group
  // lies inside one scale block), group = 32 with block 32 is accepted.
  MmaConfig c16 = fp4sim::make_mma_config(MmaKindId::Mxf4Nvf4, nullptr, nullptr, &fp4sim::kUE4M3, 16);
  Numerics n = fp4sim::preset_numerics(c16, Model::Blackwell);
  fp4sim::parse_numerics("group=32", n);
  EXPECT_THROW(fp4sim::validate_mma_config(custom(c16, n), Model::Custom), std::invalid_argument);
  MmaConfig c32 = fp4sim::make_mma_config(MmaKindId::Mxf4, nullptr, nullptr, nullptr, 32);
  EXPECT_NO_THROW(fp4sim::validate_mma_config(custom(c32, n), Model::Custom));
  // k = 128 (two hardware instructions fused into one unbounded window, RNE, IEEE zero sign) on
  // K = 128 with C = 0 is the exact model: one rounding of the whole dot product.
  Numerics wide = fp4sim::preset_numerics(c32, Model::Blackwell);
  fp4sim::parse_numerics("k=128,frac_bits=0,out_round=rne,signed_zero=ieee", wide);
  const Operands o = random_operands(c32, 8, 8, 128, 77);
  Operands z = o;
  std::fill(z.c.begin(), z.c.end(), 0.0f);
  const auto exact = run(c32, Model::Exact, z);
  const auto got = run(custom(c32, wide), Model::Custom, z);
  std::string first;
  EXPECT_EQ(mismatches(exact, got, first), 0u) << first;
}

// Random parameter sets on every configuration, operands over the whole code space with the scales'
// extremes: the engine never leaves its range (no exception), and two properties hold by definition:
//  - an unbounded window (frac_bits=0, RNE out, C in the window, IEEE zeros, exact products, one
//    instruction) is the exact model, whatever the group and alignment;
//  - products=fp32 changes nothing where every product is exact in FP32 (E2M1 x E2M1 with scales
//    near 1, no overflow), so it agrees with products=exact there.
TEST(NumericsVariants, RandomParametersEveryConfiguration) {
  std::mt19937 g(2026);
  size_t runs = 0;
  for (const MmaConfig& cfg : all_configs()) {
    for (int t = 0; t < 24; ++t) {
      Numerics n;
      std::vector<int> groups;
      for (int gsz = 1; gsz <= cfg.block; gsz *= 2)
        if (cfg.block % gsz == 0) groups.push_back(gsz);
      n.group = groups[g() % groups.size()];
      n.k = g() % 2 ? cfg.kind->k : 0;
      n.dequant = g() % 2 ? Numerics::Dequant::Fp32 : Numerics::Dequant::Exact;
      n.products = g() % 2 ? Numerics::Products::Fp32 : Numerics::Products::Exact;
      n.accumulate = g() % 2 ? Numerics::Accumulate::Fp32 : Numerics::Accumulate::Window;
      const int widths[] = {0, 1, 8, 25, 35, 64};
      n.frac_bits = widths[g() % 6];
      n.align = g() % 2 ? Numerics::Align::Scale : Numerics::Align::Product;
      n.term_round = g() % 2 ? Numerics::Round::Rne : Numerics::Round::Rz;
      n.out_round = g() % 2 ? Numerics::Round::Rne : Numerics::Round::Rz;
      n.c = g() % 2 ? Numerics::CPlace::After : Numerics::CPlace::Window;
      n.round_every = static_cast<int>(g() % 4);
      n.flush_subnormals = g() % 2;
      n.signed_zero = g() % 2 ? Numerics::SignedZero::Plus : Numerics::SignedZero::Ieee;
      const Operands o = random_operands(cfg, 4, 4, static_cast<size_t>(2 * cfg.kind->k), 5000 + static_cast<uint32_t>(runs));
      ASSERT_NO_THROW(run(custom(cfg, n), Model::Custom, o)) << fp4sim::format_numerics(n);
      ++runs;
    }
    // Unbounded window = exact, for every group and alignment.
    for (int gsz = 1; gsz <= cfg.block; gsz *= 2) {
      if (cfg.block % gsz) continue;
      for (auto al : {Numerics::Align::Scale, Numerics::Align::Product}) {
        Numerics n;
        n.group = gsz;
        n.align = al;
        const Operands o = random_operands(cfg, 4, 4, static_cast<size_t>(2 * cfg.kind->k), 9000 + static_cast<uint32_t>(gsz));
        // A group of several products is an integer tree whose zero is +0, where the exact model
        // gives -0 when every addend is -0: those outputs are left out.
        const auto want = run(cfg, Model::Exact, o), got = run(custom(cfg, n), Model::Custom, o);
        for (size_t i = 0; i < want.size(); ++i)
          if (fb(want[i]) != 0x80000000u) {
            ASSERT_EQ(fb(want[i]), fb(got[i])) << "group " << gsz << " output " << i;
          }
      }
    }
  }
  EXPECT_GT(runs, 700u);
}

// ---------------------------------------------------------------------------------------------
// 3. Syntax

TEST(NumericsSyntax, RoundTripAndErrors) {
  const MmaConfig cfg = fp4sim::make_mma_config(MmaKindId::Mxf4);
  Numerics n = fp4sim::preset_numerics(cfg, Model::Blackwell);
  Numerics m;
  fp4sim::parse_numerics(fp4sim::format_numerics(n), m);
  EXPECT_EQ(n, m);
  auto err = [&](const char* spec) {
    Numerics x = n;
    try {
      fp4sim::parse_numerics(spec, x);
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(x, n) << "a failed parse must leave the parameters unchanged";
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(err("frac_bit=25"), "numerics: unknown key 'frac_bit' (keys: k, group, dequant, products, accumulate, "
                                "frac_bits, align, term_round, out_round, c, round_every, flush_subnormals, signed_zero)");
  EXPECT_EQ(err("frac_bits=65"), "numerics: frac_bits=65 (expected an integer 0..64)");
  EXPECT_EQ(err("frac_bits=25,term_round=up"), "numerics: term_round=up (expected rz|rne)");
  EXPECT_EQ(err("frac_bits"), "numerics: 'frac_bits' is not key=value (keys: k, group, dequant, products, "
                              "accumulate, frac_bits, align, term_round, out_round, c, round_every, "
                              "flush_subnormals, signed_zero)");
  EXPECT_EQ(err("group=1x"), "numerics: group=1x (expected an integer 1..64)");
}

}  // namespace
