// libfp4sim_dpi against the golden library it wraps: every code of every type, one instruction of
// every kind and model, and the inexact flag against an independently computed exact sum.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#include "fp4sim/format.hpp"
#include "fp4sim/mma.hpp"
#include "fp4sim_dpi.h"

namespace {

using namespace fp4sim;

constexpr const ElemFormat* kTypes[] = {&kE2M1, &kE2M3, &kE3M2, &kE4M3, &kE5M2, &kUE4M3, &kUE8M0, &kE6M2, &kS1P2, &kBF16};

TEST(DpiDecodeEncode, EveryCodeOfEveryTypeMatchesGolden) {
  for (int t = 0; t < FP4SIM_DPI_NUM_TYPES; ++t) {
    const ElemFormat& f = *kTypes[t];
    ASSERT_EQ(fp4sim_dpi_type_id(std::string(f.name).c_str()), t);
    ASSERT_EQ(fp4sim_dpi_type_bits(t), f.bits);
    for (uint32_t code = 0; code < (1u << f.bits); ++code) {
      const double v = decode(f, code);
      unsigned int bits = 0, back = 0;
      double rv = 0;
      ASSERT_EQ(fp4sim_dpi_decode(t, code, &bits), FP4SIM_DPI_OK);
      ASSERT_EQ(fp4sim_dpi_decode_real(t, code, &rv), FP4SIM_DPI_OK);
      if (std::isnan(v)) {
        EXPECT_EQ(bits, 0x7FC00000u) << f.name << " " << code;
        EXPECT_TRUE(std::isnan(rv));
      } else {
        EXPECT_EQ(bits, std::bit_cast<uint32_t>(static_cast<float>(v))) << f.name << " " << code;
        EXPECT_EQ(std::bit_cast<uint64_t>(rv), std::bit_cast<uint64_t>(v));
      }
      ASSERT_EQ(fp4sim_dpi_encode(t, bits, FP4SIM_DPI_RNE, 0, 0, &back), FP4SIM_DPI_OK);
      EXPECT_EQ(back, encode(f, std::isnan(v) ? v : static_cast<double>(std::bit_cast<float>(bits)), Rounding::Rne, false))
          << f.name << " " << code;
      // A finite nonzero value is a round trip to its code (unsigned types: without the ignored bit).
      if (std::isfinite(v) && v != 0.0) {
        EXPECT_EQ(back, code & (f.sign_bit() | f.mag_mask())) << f.name << " " << code;
      }
    }
  }
}

// Random codes within the format, and scales near 1 (or anything, NaN included).
struct Instr {
  uint8_t a[64] = {}, b[64] = {};
  uint32_t sa[4] = {}, sb[4] = {};
  uint32_t c = 0;
};

Instr random_instr(const MmaConfig& cfg, std::mt19937& rng, bool wide_scales) {
  Instr in;
  const int K = cfg.kind->k;
  for (int k = 0; k < K; ++k) {
    in.a[k] = static_cast<uint8_t>(rng() & ((1u << cfg.elem_a->bits) - 1u));
    in.b[k] = static_cast<uint8_t>(rng() & ((1u << cfg.elem_b->bits) - 1u));
  }
  for (int s = 0; s < K / cfg.block; ++s) {
    if (cfg.kind->scale_word32) {
      in.sa[s] = (rng() & 0xFFFF00u) | (40 + rng() % 16);
      in.sb[s] = (rng() & 0xFFFF00u) | (40 + rng() % 16);
    } else if (cfg.scale->name == "ue4m3") {
      in.sa[s] = wide_scales ? rng() & 0xFFu : 0x30 + rng() % 0x18;
      in.sb[s] = wide_scales ? rng() & 0xFFu : 0x30 + rng() % 0x18;
    } else {
      in.sa[s] = wide_scales ? rng() & 0xFFu : 120 + rng() % 15;
      in.sb[s] = wide_scales ? rng() & 0xFFu : 120 + rng() % 15;
    }
  }
  in.c = (rng() & 0x807FFFFFu) | ((120u + rng() % 16u) << 23);
  return in;
}

TEST(DpiMma, EveryKindAndModelMatchesMmaDot) {
  std::mt19937 rng(25);
  for (const MmaKind& kind : all_mma_kinds()) {
    for (Model m : {Model::Exact, Model::Fp32Seq, Model::Blackwell, Model::AscendHif4}) {
      MmaConfig cfg = make_mma_config(kind.id);
      cfg.model = m;
      try {
        validate_mma_config(cfg, m);
      } catch (const std::invalid_argument&) {
        unsigned int d = 0;
        int fl = 0;
        Instr in;
        EXPECT_EQ(fp4sim_dpi_mma(static_cast<int>(kind.id), static_cast<int>(m), -1, -1, -1, 0, in.a, in.b, in.sa,
                                 in.sb, 0, &d, &fl),
                  FP4SIM_DPI_ERROR);
        continue;
      }
      for (int i = 0; i < 300; ++i) {
        const Instr in = random_instr(cfg, rng, i % 3 == 0);
        unsigned int d = 0;
        int fl = 0;
        ASSERT_EQ(fp4sim_dpi_mma(static_cast<int>(kind.id), static_cast<int>(m), -1, -1, -1, 0, in.a, in.b, in.sa,
                                 in.sb, in.c, &d, &fl),
                  FP4SIM_DPI_OK)
            << fp4sim_dpi_last_error();
        EXPECT_EQ(d, mma_dot(cfg, in.a, in.b, in.sa, in.sb, in.c)) << kind.name << " " << model_name(m) << " " << i;
      }
    }
  }
  // Non-default formats: E4M3 x E2M3 under mxf8f6f4, NVFP4 (UE4M3 per 16) under mxf4nvf4.
  const MmaConfig cfgs[] = {make_mma_config(MmaKindId::Mxf8f6f4, &kE4M3, &kE2M3),
                            make_mma_config(MmaKindId::Mxf4Nvf4, nullptr, nullptr, &kUE4M3, 16)};
  for (const MmaConfig& cfg : cfgs) {
    const int ta = fp4sim_dpi_type_id(std::string(cfg.elem_a->name).c_str());
    const int tb = fp4sim_dpi_type_id(std::string(cfg.elem_b->name).c_str());
    const int ts = fp4sim_dpi_type_id(std::string(cfg.scale->name).c_str());
    for (int i = 0; i < 300; ++i) {
      const Instr in = random_instr(cfg, rng, i % 3 == 0);
      unsigned int d = 0;
      int fl = 0;
      ASSERT_EQ(fp4sim_dpi_mma(static_cast<int>(cfg.kind->id), FP4SIM_DPI_BLACKWELL, ta, tb, ts, cfg.block, in.a, in.b,
                               in.sa, in.sb, in.c, &d, &fl),
                FP4SIM_DPI_OK)
          << fp4sim_dpi_last_error();
      EXPECT_EQ(d, mma_dot(cfg, in.a, in.b, in.sa, in.sb, in.c)) << cfg.kind->name << " " << i;
    }
  }
}

// With E2M1 elements, scales within 2^+-7 and C near 1, the exact value of C + sum fits a double
// (every term is a multiple of 2^-40 below 2^30): inexact must be exactly D != that double.
TEST(DpiMma, InexactFlagIsDAgainstTheExactSum) {
  std::mt19937 rng(7);
  int inexact = 0, exact = 0;
  for (int model : {FP4SIM_DPI_BLACKWELL, FP4SIM_DPI_EXACT, FP4SIM_DPI_FP32_SEQ}) {
    const MmaConfig cfg = make_mma_config(MmaKindId::Mxf4);
    for (int i = 0; i < 2000; ++i) {
      Instr in = random_instr(cfg, rng, false);
      if (i % 4 == 0) in.c = 0x3F800000u;  // C = 1 with few products: often exact
      if (i % 4 == 0)
        for (int k = 8; k < 64; ++k) in.a[k] = 0;
      double sum = static_cast<double>(std::bit_cast<float>(in.c));
      for (int k = 0; k < 64; ++k)
        sum += decode(kE2M1, in.a[k]) * decode(kE2M1, in.b[k]) * std::ldexp(1.0, static_cast<int>(in.sa[k / 32]) - 127) *
               std::ldexp(1.0, static_cast<int>(in.sb[k / 32]) - 127);
      unsigned int d = 0;
      int fl = 0;
      ASSERT_EQ(fp4sim_dpi_mma(FP4SIM_DPI_MXF4, model, -1, -1, -1, 0, in.a, in.b, in.sa, in.sb, in.c, &d, &fl),
                FP4SIM_DPI_OK);
      const bool differs = static_cast<double>(std::bit_cast<float>(d)) != sum;
      EXPECT_EQ((fl & FP4SIM_DPI_FLAG_INEXACT) != 0, differs) << model << " " << i;
      EXPECT_EQ(fl & ~FP4SIM_DPI_FLAG_INEXACT, 0);
      (differs ? inexact : exact)++;
    }
  }
  EXPECT_GT(inexact, 100);
  EXPECT_GT(exact, 100);
}

}  // namespace

namespace {

// The designer's numerics through DPI: the WindowCase of tests/golden/test_mma_numerics.cpp (products
// 2^16, -61440 and 1.5 * 2^-9; E4M3, scales 1): a 25-bit window truncating gives 4096 + 2^-9, rounding
// each term to nearest gives 4096 + 2^-8; an empty spec is the preset; a bad key is a one-line error.
TEST(DpiMma, NumericsSetByTheDesigner) {
  unsigned char a[FP4SIM_DPI_MAX_K] = {}, b[FP4SIM_DPI_MAX_K] = {};
  a[0] = 0x78, b[0] = 0x78;
  a[1] = 0xF7, b[1] = 0x78;
  a[2] = 0x0C, b[2] = 0x20;
  const unsigned int s[FP4SIM_DPI_MAX_SCALES] = {127};
  unsigned int d = 0;
  int flags = 0;
  auto run = [&](const char* spec) {
    return fp4sim_dpi_mma_numerics(FP4SIM_DPI_MXF8F6F4, FP4SIM_DPI_BLACKWELL, spec, FP4SIM_DPI_E4M3, FP4SIM_DPI_E4M3,
                                   FP4SIM_DPI_TYPE_DEFAULT, 0, a, b, s, s, 0u, &d, &flags);
  };
  ASSERT_EQ(run(""), FP4SIM_DPI_OK);
  EXPECT_EQ(d, std::bit_cast<uint32_t>(4096.0f + std::ldexp(1.0f, -9)));
  EXPECT_EQ(flags, FP4SIM_DPI_FLAG_INEXACT);
  ASSERT_EQ(run("term_round=rne"), FP4SIM_DPI_OK);
  EXPECT_EQ(d, std::bit_cast<uint32_t>(4096.0f + std::ldexp(1.0f, -8)));
  EXPECT_EQ(flags, FP4SIM_DPI_FLAG_INEXACT);
  ASSERT_EQ(run("frac_bits=26"), FP4SIM_DPI_OK);
  EXPECT_EQ(d, std::bit_cast<uint32_t>(4096.0f + 3 * std::ldexp(1.0f, -10)));
  EXPECT_EQ(flags, 0);  // exact
  d = 1;
  EXPECT_EQ(run("frac_bit=26"), FP4SIM_DPI_ERROR);
  EXPECT_EQ(d, 1u);  // nothing written
  EXPECT_STREQ(fp4sim_dpi_last_error(),
               "fp4sim_dpi: numerics: unknown key 'frac_bit' (keys: k, group, dequant, products, accumulate, "
               "frac_bits, align, "
               "term_round, out_round, c, round_every, flush_subnormals, signed_zero)");
}

}  // namespace
