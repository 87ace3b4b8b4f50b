// What the suites hold to catch kernel bugs (docs/vectors.md): the `quant` suite's tie rows are ties
// by the SPEC formulas computed here, its scale-tie blocks separate the operation orders, the corner
// class `alpha` differs when alpha is applied early, the per-instruction steps chain to the final D,
// `fp4sim check` names a failing instruction and explains a differing quantizer code, and `vectors
// --from` builds a case from the caller's tensors.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "fp4sim/io/check.hpp"
#include "fp4sim/io/manifest.hpp"
#include "fp4sim/io/npy.hpp"
#include "fp4sim/io/quant_explain.hpp"
#include "fp4sim/io/vectors.hpp"
#include "fp4sim/linear.hpp"
#include "fp4sim/mma.hpp"
#include "fp4sim/philox.hpp"
#include "fp4sim/suite_reader.hpp"

#ifndef FP4SIM_CLI
#error "FP4SIM_CLI (path of the fp4sim binary) must be defined by the build"
#endif

namespace fs = std::filesystem;
using namespace fp4sim;
using namespace fp4sim::vectors;
using fp4sim::test::Dir;
using fp4sim::test::Result;

namespace {

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

const std::vector<VectorCase>& quant_suite() {
  static const std::vector<VectorCase> v = build_suite(Suite::Quant, {});
  return v;
}

BlockFormat format_of(const VectorCase& c) {
  BlockFormat f{};
  EXPECT_TRUE(parse_block_format(c.a.quant["format"].get<std::string>(), f));
  return f;
}

// Positive finite grid of an element format, from its decode table.
std::vector<double> grid_of(const ElemFormat& e) {
  std::vector<double> g;
  for (uint32_t c = 0; c <= e.mag_mask(); ++c)
    if (std::isfinite(decode(e, c))) g.push_back(decode(e, c));
  std::sort(g.begin(), g.end());
  return g;
}
bool is_midpoint(const std::vector<double>& g, double a) {
  for (size_t i = 0; i + 1 < g.size(); ++i)
    if (a == (g[i] + g[i + 1]) / 2) return true;
  return false;
}

// The SPEC §2 scaled value of element (r, c), written out here for the default options: NVFP4 step
// 1-4 in FP32, MX floor rule x / 2^e, HiF4 4|x| * REC * 2^-level (exact).
double spec_scaled(BlockFormat f, const std::vector<float>& x, size_t K, size_t r, size_t c) {
  const size_t rows = x.size() / K;
  if (f == BlockFormat::Nvfp4) {
    float T = 0.0f;
    for (float v : x) T = std::fmax(T, std::fabs(v));
    float s_enc = 2688.0f / T;  // step 1
    if (s_enc > FLT_MAX) s_enc = FLT_MAX;
    if (T == 0.0f || s_enc == 0.0f) s_enc = 1.0f;
    const float s_dec = 1.0f / s_enc;
    float amax = 0.0f;
    for (size_t k = c / 16 * 16; k < c / 16 * 16 + 16; ++k) amax = std::fmax(amax, std::fabs(x[r * K + k]));
    const float sdec_b = amax * (s_enc * (1.0f / 6.0f));                                  // step 2
    const uint32_t code = encode(kUE4M3, sdec_b, Rounding::Rne, true);
    float inv = 1.0f / (static_cast<float>(decode(kUE4M3, code)) * s_dec);                // step 3
    if (inv > FLT_MAX) inv = FLT_MAX;
    return x[r * K + c] * inv;                                                            // step 4
  }
  if (f == BlockFormat::Hif4) {
    const float* b = &x[r * K + c / 64 * 64];
    float v16[16] = {}, v8[8] = {}, vmax = 0.0f;
    for (int i = 0; i < 64; ++i) v16[i / 4] = std::max(v16[i / 4], std::fabs(b[i]));
    for (int k = 0; k < 8; ++k) vmax = std::max(vmax, v8[k] = std::max(v16[2 * k], v16[2 * k + 1]));
    const float sf = bf16_to_float(float_to_bf16_rne(vmax * 0.142578125f));  // exact product for these inputs
    int e = 0;
    const double m = std::frexp(static_cast<double>(sf), &e);
    const double e6m2 = std::ldexp(std::nearbyint(std::ldexp(m, 3)), e - 3);
    const double rec = bf16_to_float(float_to_bf16_rne(static_cast<float>(1.0 / e6m2)));
    const size_t q = c % 64;
    const int l8 = v8[q / 8] * rec >= 4.0 ? 1 : 0;
    const int l16 = std::ldexp(v16[q / 4] * rec, -l8) >= 2.0 ? 1 : 0;
    return std::ldexp(4.0 * std::fabs(static_cast<double>(b[q])) * rec, -(l8 + l16));
  }
  const BlockFormatInfo& fi = info(f);
  float amax = 0.0f;
  for (size_t k = c / 32 * 32; k < c / 32 * 32 + 32; ++k) amax = std::max(amax, std::fabs(x[r * K + k]));
  const int e = std::ilogb(amax) - fi.emax_elem;
  (void)rows;
  return std::ldexp(static_cast<double>(x[r * K + c]), -e);
}

}  // namespace

// Every value the tie rows hold (beside the block anchors) is exactly a midpoint of the element grid
// by the SPEC formula; every positive midpoint of the 4-bit grids appears with both signs, and RNE
// (or HiF4's half-up) picked the code the suite stores.
TEST(QuantSuite, TieRowsAreTiesByTheSpecFormula) {
  std::set<std::string> formats;
  for (const VectorCase& c : quant_suite()) {
    if (c.cls != "quant-ties") continue;
    SCOPED_TRACE(c.id);
    const BlockFormat f = format_of(c);
    formats.insert(std::string(info(f).name));
    const bool hif4 = f == BlockFormat::Hif4;
    const std::vector<double> g = hif4 ? std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7} : grid_of(*info(f).elem);
    std::set<double> pos, neg;
    size_t ties = 0, near = 0;
    for (size_t r = 0; r < c.M; ++r) {
      const bool exact = c.row_notes[r].rfind("exact ties", 0) == 0;
      const bool ulp = c.row_notes[r].find("one FP32 ulp") != std::string::npos;
      if (!exact && !ulp) continue;
      const size_t B = static_cast<size_t>(info(f).block);
      for (size_t k = 0; k < c.K; ++k) {
        const float x = c.a.input[r * c.K + k];
        if (x == 0.0f || k % B == 0) continue;  // zeros and the anchors
        const double s = spec_scaled(f, c.a.input, c.K, r, k);
        const double a = std::fabs(s);
        if (exact) {
          ASSERT_TRUE(is_midpoint(g, a)) << "row " << r << " col " << k << " x " << x << " scaled " << s;
          ++ties;
          (x < 0 ? neg : pos).insert(a);
          // The stored code: the even neighbour (RNE), HiF4 the upper one (floor(c + 0.5)).
          const uint32_t mag = c.a.codes[r * c.K + k] & (hif4 ? 7u : info(f).elem->mag_mask());
          const double got = hif4 ? static_cast<double>(mag) : decode(*info(f).elem, mag);
          EXPECT_EQ(std::fabs(got - a), hif4 ? 0.5 : std::fabs(got - a));
          if (hif4) EXPECT_EQ(got, a + 0.5);
          else EXPECT_EQ(mag % 2, 0u) << "row " << r << " col " << k;
        } else {
          EXPECT_FALSE(is_midpoint(g, a));
          // One FP32 ulp of the scaled value (NVFP4) or of the input (MX, HiF4) from a midpoint.
          const float af = static_cast<float>(a);
          EXPECT_TRUE(is_midpoint(g, std::nextafter(af, 0.0f)) || is_midpoint(g, std::nextafter(af, FLT_MAX)) ||
                      is_midpoint(g, a * (1 + 0x1p-23)) || is_midpoint(g, a * (1 - 0x1p-24)) ||
                      is_midpoint(g, a / (1 + 0x1p-23)) || is_midpoint(g, a / (1 - 0x1p-24)))
              << "row " << r << " col " << k << " scaled " << a;
          ++near;
        }
      }
    }
    EXPECT_GT(ties, 0u);
    EXPECT_GT(near, 0u);
    EXPECT_EQ(pos, neg);  // both signs of every tie
    if (g.size() <= 8) {
      EXPECT_EQ(pos.size(), g.size() - 1);  // E2M1 / S1P2: every midpoint
    }
    EXPECT_TRUE(pos.count((g[g.size() - 2] + g.back()) / 2)) << "the midpoint between the two largest codes";
    EXPECT_TRUE(pos.count(g[1] / 2)) << "the midpoint below the smallest nonzero code";
  }
  EXPECT_EQ(formats.size(), 7u);
}

// NVFP4 block-scale ties: in plain FP32, TE's RN(amax * RN(S_enc * RN(1/6))) is a UE4M3 midpoint,
// the suite stores its round-to-even code, and every other order gives another code somewhere.
TEST(QuantSuite, ScaleTieBlocksSeparateTheOperationOrders) {
  size_t cases = 0;
  bool differ[3] = {false, false, false};  // over both cases: one tensor amax cannot separate every order
  for (const VectorCase& c : quant_suite()) {
    if (c.cls != "quant-scale-ties") continue;
    ++cases;
    SCOPED_TRACE(c.id);
    float T = 0.0f;
    for (float v : c.a.input) T = std::fmax(T, std::fabs(v));
    const float s_enc = 2688.0f / T, s_dec = 1.0f / s_enc;
    const float sdec2 = T / 2688.0f, s_enc2 = 1.0f / sdec2;
    const std::vector<double> ue = grid_of(kUE4M3);
    bool sub = false, normal = false;
    size_t blocks = 0;
    for (size_t r = 0; r < c.M; ++r)
      for (size_t j = 0; j < c.K / 16; ++j) {
        float amax = 0.0f;
        for (size_t k = 0; k < 16; ++k) amax = std::fmax(amax, std::fabs(c.a.input[r * c.K + j * 16 + k]));
        if (amax == 0.0f || amax == T) continue;
        ++blocks;
        const float te = amax * (s_enc * (1.0f / 6.0f));
        ASSERT_TRUE(is_midpoint(ue, te)) << "row " << r << " block " << j;
        (te < 0x1p-6f ? sub : normal) = true;
        const uint32_t te_code = encode(kUE4M3, te, Rounding::Rne, true);
        EXPECT_EQ(te_code % 2, 0u);
        EXPECT_EQ(c.a.scales[r * (c.K / 16) + j], te_code);
        const float alt[3] = {(amax / 6.0f) * s_enc, (amax / 6.0f) / s_dec, amax * (s_enc2 * (1.0f / 6.0f))};
        for (int i = 0; i < 3; ++i) differ[i] |= encode(kUE4M3, alt[i], Rounding::Rne, true) != te_code;
      }
    EXPECT_GT(blocks, 3u);
    EXPECT_TRUE(sub && normal) << "subnormal and normal scale ties";
  }
  EXPECT_EQ(cases, 2u);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(differ[i]) << "order " << i << " never differs";
}

// The SPEC steps of check's reports (quant_explain) give the codes and scales golden's kernels
// stored, on every quant-suite case (a sample of elements per case, every block scale).
TEST(QuantSuite, SpecStepsAgreeWithTheStoredCodes) {
  for (const VectorCase& c : quant_suite()) {
    SCOPED_TRACE(c.id);
    BlockFormat f{};
    const QuantOptions o = quant_options_from_json(c.a.quant, f);
    const size_t B = static_cast<size_t>(info(f).block), nblk = c.K / B;
    for (size_t i = 0; i < c.M * c.K; i += 1 + (c.M * c.K) / 160) {
      const ElementSteps e = explain_element(f, o, c.a.input, c.M, c.K, i / c.K, i % c.K);
      ASSERT_EQ(e.code, c.a.codes[i]) << "element " << i;
      ASSERT_EQ(e.scale, c.a.scales[i / c.K * nblk + i % c.K / B]) << "element " << i;
    }
    for (size_t r = 0; r < c.M; ++r)
      for (size_t j = 0; j < nblk; ++j)
        ASSERT_EQ(explain_scale(f, o, c.a.input, c.M, c.K, r, j).code, c.a.scales[r * nblk + j]) << r << ", " << j;
  }
}

// What the suite is meant to hold: signed zeros and -0 codes, NaN, zero blocks, every option.
TEST(QuantSuite, HoldsTheQuantizerCorners) {
  std::map<std::string, std::set<std::string>> classes;
  bool neg_zero_code = false, nan_in = false, flt_max_clamp = false, two_d = false, ceil = false, sr = false,
       rht_te = false, rht_seeded = false, rht64 = false;
  for (const VectorCase& c : quant_suite()) {
    classes[c.a.quant["format"].get<std::string>()].insert(c.cls);
    EXPECT_LE(c.M, 64u);
    EXPECT_LE(c.K, 256u);
    const uint32_t sign = c.cfg.elem_a->sign_bit();
    for (size_t i = 0; i < c.a.input.size(); ++i) {
      const float x = c.a.input[i];
      nan_in |= std::isnan(x);
      if (x < 0 && c.a.codes[i] == sign) neg_zero_code = true;
      if (x == 0.0f && std::signbit(x)) {
        EXPECT_EQ(c.a.codes[i] & sign, 0u) << c.id << ": -0 input -> +0 code";
      }
    }
    const io::Json& q = c.a.quant;
    if (q["format"] == "nvfp4" && q.contains("amax") && q["amax"].get<float>() > 0 &&
        2688.0f / q["amax"].get<float>() > FLT_MAX)
      flt_max_clamp = c.a.quant["global_scale"].get<float>() == 1.0f / FLT_MAX;
    two_d |= q["2d"].get<bool>() && c.M % 16 != 0;
    ceil |= q["scale_rule"] == "rceil";
    sr |= q["rounding"] == "sr";
    rht_te |= q["rht_signs"] == "te-fixed-16" && q["rht_bf16"].get<bool>();
    rht_seeded |= q["rht"] == 16 && q["rht_signs"] == "seeded";
    rht64 |= q["rht"] == 64;
  }
  EXPECT_EQ(classes.size(), 7u);
  for (const auto& [f, cls] : classes)
    for (const char* want : {"quant-bf16", "quant-ties", "quant-zeros-nan", "quant-inf", "quant-zero-tensor", "quant-tiny",
                             "quant-pow2", "quant-sr"})
      EXPECT_TRUE(cls.count(want)) << f << " " << want;
  EXPECT_TRUE(neg_zero_code && nan_in && flt_max_clamp && two_d && ceil && sr && rht_te && rht_seeded && rht64);
}

// The all-zero tensor: every product is 0, so each model's D is RN(alpha * C) with C nonzero. For
// NVFP4, amax = 0 gives S_enc = S_dec_A = 1 and B (row 0 ones, row 1 multiples of 0.25 up to 1.5 in
// magnitude) has tensor amax 1.5: S_dec_B = RN(1 / RN(2688 / 1.5)), alpha = S_dec_B (SPEC §2).
TEST(QuantSuite, ZeroTensorShowsAlphaThroughC) {
  size_t seen = 0;
  for (const VectorCase& c : quant_suite()) {
    if (c.cls != "quant-zero-tensor") continue;
    ++seen;
    SCOPED_TRACE(c.id);
    const uint32_t sign = c.cfg.elem_a->sign_bit();
    for (uint8_t code : c.a.codes) EXPECT_EQ(code & ~sign, 0u);
    const bool nv = c.a.quant["format"] == "nvfp4";
    const float alpha = nv ? 1.0f / (2688.0f / 1.5f) : 1.0f;
    if (nv) {
      EXPECT_EQ(bits(c.a.quant["global_scale"].get<float>()), bits(1.0f));
    }
    EXPECT_EQ(bits(c.alpha), bits(alpha));
    ASSERT_EQ(c.c.size(), c.M * c.N);
    for (size_t i = 0; i < c.c.size(); ++i) {
      EXPECT_NE(c.c[i], 0.0f) << i;
      for (size_t m = 0; m < c.models.size(); ++m)
        EXPECT_EQ(bits(c.expected[m][i]), bits(alpha * c.c[i])) << model_name(c.models[m]) << " " << i;
    }
  }
  EXPECT_EQ(seen, 7u);
}

// Non-unit alpha: RN(alpha * D_model(alpha = 1)) is what the suite expects, and applying alpha to
// the unrounded sum of the products (computed here in long double from the decoded codes) changes
// some output of every alpha case; the four alphas include a negative, a non-power-of-two, one that
// overflows to Inf and one that gives subnormals.
TEST(VectorCorners, AlphaCasesDifferWhenAlphaIsAppliedEarly) {
  static const std::vector<VectorCase> corners = build_suite(Suite::Corners, {});
  std::map<std::string, int> per_config;
  bool neg = false, inf = false, sub = false;
  for (const VectorCase& c : corners) {
    if (c.cls != "alpha") continue;
    SCOPED_TRACE(c.id);
    ++per_config[config_tag(c.cfg)];
    EXPECT_NE(c.alpha, 1.0f);
    neg |= c.alpha < 0;
    const Model hw = c.cfg.kind->hardware_model;
    const std::vector<float> d1 = gemm(c.cfg, hw, c.M, c.N, c.K, c.a.codes, std::span<const uint32_t>(c.a.scales),
                                       c.b.codes, std::span<const uint32_t>(c.b.scales), c.c, 1.0f, 1);
    size_t early_differs = 0;
    const size_t nblk = c.K / static_cast<size_t>(c.cfg.block);
    for (size_t m = 0; m < c.M; ++m)
      for (size_t n = 0; n < c.N; ++n) {
        const float late = c.alpha * d1[m * c.N + n];
        const float want = c.expected[0][m * c.N + n];
        EXPECT_EQ(std::isnan(late) ? 0x7FFFFFFFu : bits(late), bits(want));
        inf |= std::isinf(want);
        sub |= want != 0 && std::fabs(want) < FLT_MIN;
        long double acc = c.c[m * c.N + n];
        auto val = [&](const ElemFormat& e, const std::vector<uint8_t>& codes, const std::vector<uint32_t>& sc, size_t row, size_t k) {
          const uint32_t s = sc[row * nblk + k / static_cast<size_t>(c.cfg.block)];
          const double x = decode(e, codes[row * c.K + k]);
          if (c.cfg.kind->scale_word32) return x * decode(kE6M2, s & 0xFF) * std::ldexp(1.0, hif4_level(s, static_cast<int>(k % 64)));
          return x * decode(*c.cfg.scale, c.cfg.scale->name == kUE4M3.name ? s & 0x7F : s);
        };
        for (size_t k = 0; k < c.K; ++k)
          acc += static_cast<long double>(val(*c.cfg.elem_a, c.a.codes, c.a.scales, m, k)) *
                 val(*c.cfg.elem_b, c.b.codes, c.b.scales, n, k);
        const float early = static_cast<float>(c.alpha * acc);
        if (!std::isnan(early) && !std::isnan(want) && bits(early) != bits(want)) ++early_differs;
      }
    EXPECT_GT(early_differs, 0u);
  }
  EXPECT_EQ(per_config.size(), 9u);
  EXPECT_TRUE(neg && inf && sub);
}

TEST(VectorSuites, RandomCasesHaveSeededNonUnitAlpha) {
  SuiteOptions o;
  o.seed = 11;
  o.size = 4;
  const std::vector<VectorCase> a = build_suite(Suite::Random, o), b = build_suite(Suite::Random, o);
  o.seed = 12;
  const std::vector<VectorCase> c = build_suite(Suite::Random, o);
  size_t moved = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NE(a[i].alpha, 1.0f);
    EXPECT_EQ(bits(a[i].alpha), bits(b[i].alpha));
    moved += bits(a[i].alpha) != bits(c[i].alpha);
  }
  EXPECT_EQ(moved, a.size());
}

// Steps: step 0 is one instruction over K columns [0, k) with the case's C; step s + 1 takes step s
// as C; the last step through RN(alpha * .) is the final D.
TEST(VectorSuites, StepsChainToTheFinalAccumulator) {
  SuiteOptions o;
  o.seed = 3;
  o.size = 5;
  size_t checked = 0;
  for (const VectorCase& c : build_suite(Suite::Random, o)) {
    SCOPED_TRACE(c.id);
    const size_t kI = static_cast<size_t>(c.cfg.kind->k), S = c.K / kI, MN = c.M * c.N;
    const size_t nblk = c.K / static_cast<size_t>(c.cfg.block), spi = kI / static_cast<size_t>(c.cfg.block);
    ASSERT_EQ(c.steps.size(), c.models.size());
    for (size_t i = 0; i < c.models.size(); ++i) {
      MmaConfig cfg = c.cfg;
      cfg.model = c.models[i];
      if (c.models[i] == Model::Exact) {
        EXPECT_TRUE(c.steps[i].empty());
        continue;
      }
      ASSERT_EQ(c.steps[i].size(), S * MN);
      for (size_t m = 0; m < c.M; ++m)
        for (size_t n = 0; n < c.N; ++n) {
          uint32_t acc = bits(c.c[m * c.N + n]);
          for (size_t s = 0; s < S; ++s) {
            acc = mma_dot(cfg, &c.a.codes[m * c.K + s * kI], &c.b.codes[n * c.K + s * kI], &c.a.scales[m * nblk + s * spi],
                          &c.b.scales[n * nblk + s * spi], acc);
            if (c.models[i] == Model::Fp32Seq) continue;  // mma_dot's fp32-seq is one instruction's FMA chain too
            ASSERT_EQ(bits(c.steps[i][s * MN + m * c.N + n]), acc) << "step " << s;
          }
          const float d = c.alpha * c.steps[i][(S - 1) * MN + m * c.N + n];
          EXPECT_EQ(std::isnan(d) ? 0x7FFFFFFFu : bits(d), bits(c.expected[i][m * c.N + n]));
          ++checked;
        }
    }
  }
  EXPECT_GT(checked, 0u);
}

// check: a flipped bit in a steps file names the instruction, its K columns and the C it received;
// a flipped tie code reports the SPEC steps (input, scaled value, neighbours, scales, rule).
TEST(VectorCheck, StepsNameTheInstructionAndCodesExplainTheirSteps) {
  Dir d("vquant");
  ASSERT_EQ(d.run("vectors --suite quant --out q").code, 0);
  const io::Json m = io::read_manifest(d / "q");
  fs::create_directories(d / "r");
  const io::Json* ties = nullptr;
  for (const auto& c : m["cases"])
    if (c["class"] == "quant-ties" && c["a"]["quant"]["format"] == "nvfp4") ties = &c;
  ASSERT_NE(ties, nullptr);
  ASSERT_TRUE(ties->contains("expected_steps"));  // K = 128: two instructions of 64
  // Results: the steps file with one bit flipped in instruction 1, and the codes with a tie flipped.
  const std::string steps = (*ties)["expected_steps"]["blackwell"].get<std::string>();
  const std::string codes = (*ties)["a"]["codes"].get<std::string>();
  fs::create_directories((d / "r" / steps).parent_path());
  io::NpyArray st = io::read_npy(d / "q" / steps);
  const size_t M = (*ties)["M"].get<size_t>(), N = (*ties)["N"].get<size_t>(), K = (*ties)["K"].get<size_t>();
  std::vector<float> sv = st.values<float>();
  const size_t flip = 1 * M * N + 1 * N + 0;  // instruction 1, [1, 0]
  sv[flip] = std::bit_cast<float>(bits(sv[flip]) ^ 1u);
  const size_t sshape[3] = {2, M, N};
  io::write_npy<float>(d / "r" / steps, sshape, sv);
  io::NpyArray ca = io::read_npy(d / "q" / codes);
  std::vector<uint8_t> cv = ca.values<uint8_t>();
  // Row 0 holds the exact ties; element 1 is the first tie after the anchor: 0.25 under scale 1.
  ASSERT_EQ(cv[1], 0u);
  cv[1] = 1;
  const size_t cshape[2] = {M, K};
  io::write_npy<uint8_t>(d / "r" / codes, cshape, cv);

  const Result r = d.run("check q --results r --allow-missing --json rep.json");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("first instruction 1 [1, 0]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("instruction: 1 of 2 (blackwell): K columns [64, 128)"), std::string::npos) << r.out;
  const io::Json rep = io::Json::parse(test::slurp(d / "rep.json"));
  const io::Json* sf = nullptr;
  const io::Json* cf = nullptr;
  for (const auto& c : rep["cases"])
    for (const auto& f : c["files"]) {
      if (f["path"] == steps) sf = &f;
      if (f["path"] == codes) cf = &f;
    }
  ASSERT_TRUE(sf && cf);
  const io::Json& fd = (*sf)["first_difference"];
  EXPECT_EQ(fd["instruction"], 1);
  EXPECT_EQ(fd["k_columns"], io::Json::array({64, 128}));
  char cr[64];
  std::snprintf(cr, sizeof cr, "0x%08x", bits(sv[0 * M * N + 1 * N + 0]));
  EXPECT_EQ(fd["inputs"]["C received[1, 0]"].get<std::string>().substr(0, 10), cr);
  // The tie: x = 0.25, S_enc = S_dec = 1 (tensor amax 2688), block amax 6 -> scale 1.0 (0x38), inv 1,
  // scaled 0.25 exactly between codes 0 (0) and 1 (0.5): RNE keeps 0.
  const io::Json& in = (*cf)["first_difference"]["inputs"];
  EXPECT_EQ(in["A[0, 1] input x"], "0x3e800000 (0.25)");
  EXPECT_EQ(in["A[0, 1] tensor amax"], "0x45280000 (2688)");
  EXPECT_EQ(in["A[0, 1] S_enc = RN(2688 / amax)"], "0x3f800000 (1)");
  EXPECT_EQ(in["A[0, 1] block amax"], "0x40c00000 (6)");
  EXPECT_EQ(in["A[0, 1] scale code = UE4M3(sdec_b) RN, saturating"], "0x38 (1)");
  EXPECT_EQ(in["A[0, 1] scaled = RN(x * inv_b)"], "0x3e800000 (0.25)");
  EXPECT_EQ(in["A[0, 1] neighbouring codes"], "0x00 (0), 0x01 (0.5): exactly the midpoint");
  EXPECT_EQ(in["A[0, 1] rule"], "tie -> even (down)");
  // The JSON keeps whole rows (the text report clips them).
  for (const auto& c : rep["cases"])
    for (const auto& f : c["files"]) {
      if (!f.contains("first_difference")) continue;
      for (const auto& [k, val] : f["first_difference"]["inputs"].items())
        EXPECT_EQ(val.get<std::string>().find("(all of it in --json)"), std::string::npos) << k;
    }
}

// Hand-derived quantizer steps: MX -0, a negative value rounding to -0, saturation, SR's byte.
TEST(VectorCheck, QuantizerStepsByHand) {
  // MXFP4 block: amax 6 -> e = floor(log2 6) - 2 = 0; -0.2 / 1 rounds to 0 -> -0 code 0x8.
  std::vector<float> x(32, 0.0f);
  x[0] = 6.0f;
  x[1] = -0.2f;
  x[2] = -0.0f;
  x[3] = 2.5f;  // tie between 2 (code 4) and 3 (code 5): even -> 2
  const ElementSteps a = explain_element(BlockFormat::Mxfp4, {}, x, 1, 32, 0, 1);
  EXPECT_EQ(a.code, 0x8u);
  EXPECT_NE(a.rule.find("negative value rounds to 0 -> -0 code"), std::string::npos) << a.rule;
  const ElementSteps z = explain_element(BlockFormat::Mxfp4, {}, x, 1, 32, 0, 2);
  EXPECT_EQ(z.code, 0x0u);
  EXPECT_NE(z.rule.find("-0 input -> +0 code"), std::string::npos) << z.rule;
  const ElementSteps t = explain_element(BlockFormat::Mxfp4, {}, x, 1, 32, 0, 3);
  EXPECT_TRUE(t.tie);
  EXPECT_EQ(t.scaled, 2.5);
  EXPECT_EQ(t.lower, 2.0);
  EXPECT_EQ(t.upper, 3.0);
  EXPECT_EQ(t.code, 0x4u);
  EXPECT_EQ(t.rule, "tie -> even (down)");
  // NVFP4 NaN -> +6 (code 7), and SR: the byte is sr_byte(seed, stream, index).
  std::vector<float> y(16, 1.0f);
  y[4] = std::numeric_limits<float>::quiet_NaN();
  const ElementSteps n = explain_element(BlockFormat::Nvfp4, {}, y, 1, 16, 0, 4);
  EXPECT_EQ(n.code, 7u);
  EXPECT_EQ(n.rule, "NaN -> +6 (satfinite)");
  QuantOptions sr;
  sr.rounding = Rounding::Sr;
  sr.seed = 9;
  sr.stream = 2;
  const ElementSteps s = explain_element(BlockFormat::Mxfp4, sr, x, 1, 32, 0, 3);
  char want[16];
  std::snprintf(want, sizeof want, "0x%02x", sr_byte(9, 2, 3));
  EXPECT_NE(s.rule.find(std::string("random byte r = ") + want), std::string::npos) << s.rule;
  // 2.5 is half a step above 2: rounds up iff 0.5 + r/256 >= 1.
  EXPECT_EQ(s.code, sr_byte(9, 2, 3) >= 128 ? 0x5u : 0x4u);
}

// Suites written before the steps files still load (the field is optional in both readers).
TEST(VectorSuites, SuitesWithoutStepsStillLoad) {
  Dir d("vsteps");
  ASSERT_EQ(d.run("vectors --suite smoke --out s").code, 0);
  io::Json m = io::read_manifest(d / "s");
  size_t with = 0;
  for (auto& c : m["cases"]) {
    with += c.contains("expected_steps");
    c.erase("expected_steps");
  }
  EXPECT_EQ(with, m["cases"].size());  // every smoke case has two instructions
  io::write_manifest(d / "s", m);
  const SuiteReader r(d / "s");
  for (size_t i = 0; i < r.size(); ++i) {
    const LoadedCase lc = r.load(i);
    EXPECT_TRUE(lc.problems.empty());
    for (const auto& s : lc.data.steps) EXPECT_TRUE(s.empty());
  }
  const fp4sim::suite::Suite hs((d / "s").string());
  EXPECT_TRUE(hs.load_case(0).expected_steps.empty());
  // The header reader reads them when present.
  ASSERT_EQ(d.run("vectors --suite smoke --out t").code, 0);
  const fp4sim::suite::Suite ht((d / "t").string());
  const fp4sim::suite::CaseData cd = ht.load_case(0);
  ASSERT_EQ(cd.expected_steps.size(), 2u);  // blackwell, fp32-seq
  EXPECT_EQ(cd.expected_steps[0].second.size(), 2 * cd.info->M * cd.info->N);
}

// vectors --from: one case from the caller's tensors, expected D = golden gemm of their quantization.
TEST(VectorCli, FromTensorsBuildsOneCase) {
  Dir d("vfrom");
  std::vector<float> a(4 * 64), b(3 * 64);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 11) - 5) * 0.375f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.5f;
  const size_t as[2] = {4, 64}, bs[2] = {3, 64};
  io::write_npy<float>(d / "a.npy", as, a);
  io::write_npy<float>(d / "b.npy", bs, b);
  const Result r = d.run("vectors --from a.npy --b b.npy --format nvfp4 --rounding sr --seed 5 --out s");
  ASSERT_EQ(r.code, 0) << r.err;
  const SuiteReader sr(d / "s");
  ASSERT_EQ(sr.size(), 1u);
  const LoadedCase lc = sr.load(0);
  ASSERT_TRUE(lc.problems.empty());
  const VectorCase& v = lc.data;
  EXPECT_EQ(v.M, 4u);
  EXPECT_EQ(v.N, 3u);
  QuantOptions o;
  o.rounding = Rounding::Sr;
  o.seed = 5;
  const Quantized qa = quantize(BlockFormat::Nvfp4, a, 4, 64, o), qb = quantize(BlockFormat::Nvfp4, b, 3, 64, o);
  EXPECT_EQ(v.a.codes, qa.codes);
  EXPECT_EQ(v.b.codes, qb.codes);
  const float alpha = qa.global_scale * qb.global_scale;
  EXPECT_EQ(bits(v.alpha), bits(alpha));
  const std::vector<uint8_t> sa(qa.scales), sb(qb.scales);
  const std::vector<float> dd = gemm(mma_config_for(BlockFormat::Nvfp4), Model::Blackwell, 4, 3, 64, qa.codes,
                                     std::span<const uint8_t>(sa), qb.codes, std::span<const uint8_t>(sb), {}, alpha, 1);
  ASSERT_EQ(v.models[0], Model::Blackwell);
  for (size_t i = 0; i < dd.size(); ++i) EXPECT_EQ(bits(v.expected[0][i]), bits(dd[i]));
  // Without --b, B = A.
  ASSERT_EQ(d.run("vectors --from a.npy --format mxfp8-e4m3 --out s2").code, 0);
  EXPECT_EQ(SuiteReader(d / "s2").load(0).data.N, 4u);
  // Bad input: one line, nothing written.
  const size_t odd[2] = {2, 40}, one[1] = {64};
  io::write_npy<float>(d / "k40.npy", odd, std::vector<float>(80, 1.0f));
  io::write_npy<float>(d / "flat.npy", one, std::vector<float>(64, 1.0f));
  io::write_npy<uint8_t>(d / "u8.npy", as, std::vector<uint8_t>(256, 1));
  for (const auto& [args, code] : std::vector<std::pair<std::string, int>>{
           {"vectors --from k40.npy --format mxfp4 --out x", 1},
           {"vectors --from flat.npy --format mxfp4 --out x", 1},
           {"vectors --from u8.npy --format mxfp4 --out x", 1},
           {"vectors --from a.npy --b k40.npy --format nvfp4 --out x", 1},
           {"vectors --from a.npy --out x", 2},
           {"vectors --from a.npy --suite smoke --format nvfp4 --out x", 2},
           {"vectors --suite smoke --rounding sr --out x", 2}}) {
    SCOPED_TRACE(args);
    const Result e = d.run(args);
    EXPECT_EQ(e.code, code) << e.err;
    EXPECT_EQ(e.err_lines(), 1u) << e.err;
    EXPECT_FALSE(fs::exists(d / "x"));
  }
}

// `--convention`: the quant suite's float cases quantized by another library's recipe. The inputs
// are TE's suite's; each operand's codes and scales are golden quantize(..., convention) of them;
// the scale-tie blocks (built where torchao's RN(RN(amax/6)/S_dec) gives another code than TE's)
// get other scales; the cases the library cannot quantize are left out.
TEST(QuantSuite, ConventionSuitesFollowTheLibrarysQuantizer) {
  SuiteOptions to;
  to.convention = Convention::Torchao;
  const std::vector<VectorCase> tao = build_suite(Suite::Quant, to);
  std::map<std::string, const VectorCase*> te_by_desc;
  for (const VectorCase& c : quant_suite()) te_by_desc[c.description + " (torchao's quantizer)"] = &c;
  std::set<std::string> formats;
  size_t tie_blocks_differ = 0;
  for (const VectorCase& c : tao) {
    SCOPED_TRACE(c.id);
    EXPECT_EQ(c.a.quant["convention"], "torchao");
    EXPECT_EQ(c.b.quant["convention"], "torchao");
    BlockFormat f{};
    QuantOptions o = quant_options_from_json(c.a.quant, f);
    formats.insert(std::string(info(f).name));
    EXPECT_NE(f, BlockFormat::Hif4);
    EXPECT_EQ(o.rounding, Rounding::Rne);
    EXPECT_FALSE(o.two_d);
    o.convention = Convention::Torchao;
    const Quantized qa = quantize(f, c.a.input, c.M, c.K, o), qb = quantize(f, c.b.input, c.N, c.K, o);
    EXPECT_EQ(c.a.codes, qa.codes);
    EXPECT_EQ(c.b.codes, qb.codes);
    EXPECT_EQ(std::vector<uint32_t>(qa.scales.begin(), qa.scales.end()), c.a.scales);
    EXPECT_EQ(std::vector<uint32_t>(qb.scales.begin(), qb.scales.end()), c.b.scales);
    if (f == BlockFormat::Nvfp4) {
      EXPECT_EQ(bits(c.alpha), bits(qa.global_scale * qb.global_scale));
    }
    const auto te = te_by_desc.find(c.description);
    ASSERT_NE(te, te_by_desc.end()) << "no TE twin";
    ASSERT_EQ(te->second->a.input.size(), c.a.input.size());
    for (size_t i = 0; i < c.a.input.size(); ++i) ASSERT_EQ(bits(te->second->a.input[i]), bits(c.a.input[i])) << i;
    if (c.cls == "quant-scale-ties")
      for (size_t i = 0; i < c.a.scales.size(); ++i) tie_blocks_differ += c.a.scales[i] != te->second->a.scales[i];
  }
  EXPECT_EQ(formats, (std::set<std::string>{"nvfp4", "mxfp4", "mxfp6-e2m3", "mxfp6-e3m2", "mxfp8-e4m3", "mxfp8-e5m2"}));
  EXPECT_GT(tie_blocks_differ, 3u);
  // ModelOpt: NVFP4, MXFP4 and MXFP8 E4M3, its MX scale only under the ceil rule.
  SuiteOptions mo;
  mo.convention = Convention::Modelopt;
  for (const VectorCase& c : build_suite(Suite::Quant, mo)) {
    EXPECT_EQ(c.a.quant["convention"], "modelopt");
    const std::string f = c.a.quant["format"].get<std::string>();
    EXPECT_TRUE(f == "nvfp4" || f == "mxfp4" || f == "mxfp8-e4m3") << f;
    if (f != "nvfp4") {
      EXPECT_EQ(c.a.quant["scale_rule"], "rceil") << c.id;
    }
  }
  EXPECT_THROW(build_suite(Suite::Corners, to), std::invalid_argument);
}

TEST(VectorCli, ConventionOnlyForTheQuantSuite) {
  Dir d("vconv");
  const Result r = d.run("vectors --suite quant --convention torchao --out q");
  ASSERT_EQ(r.code, 0) << r.err;
  const io::Json m = io::read_manifest(d / "q");
  EXPECT_EQ(m["convention"], "torchao");
  const SuiteReader sr(d / "q");
  ASSERT_GT(sr.size(), 0u);
  for (size_t i = 0; i < sr.size(); ++i) {
    const LoadedCase lc = sr.load(i);
    EXPECT_TRUE(lc.problems.empty()) << lc.id;
    EXPECT_EQ(lc.data.a.quant["convention"], "torchao") << lc.id;
  }
  for (const auto& [args, needle] : std::vector<std::pair<std::string, std::string>>{
           {"vectors --suite corners --convention torchao --out x", "only the quant suite"},
           {"vectors --suite smoke --convention modelopt --out x", "only the quant suite"},
           {"vectors --suite quant --convention tf --out x", "unknown library 'tf'"}}) {
    SCOPED_TRACE(args);
    const Result e = d.run(args);
    EXPECT_EQ(e.code, 2) << e.err;
    EXPECT_EQ(e.err_lines(), 1u) << e.err;
    EXPECT_NE(e.err.find(needle), std::string::npos) << e.err;
    EXPECT_FALSE(fs::exists(d / "x"));
  }
  EXPECT_EQ(d.run("vectors --suite corners --convention te --out x").code, 0);
  // --from takes the quantize options, the convention among them.
  std::vector<float> a(4 * 64);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 11) - 5) * 0.375f;
  const size_t as[2] = {4, 64};
  io::write_npy<float>(d / "a.npy", as, a);
  ASSERT_EQ(d.run("vectors --from a.npy --format nvfp4 --convention torchao --out f").code, 0);
  const VectorCase v = SuiteReader(d / "f").load(0).data;
  EXPECT_EQ(v.a.quant["convention"], "torchao");
  QuantOptions o;
  o.convention = Convention::Torchao;
  const Quantized q = quantize(BlockFormat::Nvfp4, a, 4, 64, o);
  EXPECT_EQ(v.a.codes, q.codes);
  EXPECT_EQ(std::vector<uint32_t>(q.scales.begin(), q.scales.end()), v.a.scales);
  EXPECT_EQ(bits(v.alpha), bits(q.global_scale * q.global_scale));
  const Result e = d.run("vectors --from a.npy --format hif4 --convention torchao --out g");
  EXPECT_EQ(e.code, 2);
  EXPECT_NE(e.err.find("torchao has no hif4 quantizer"), std::string::npos) << e.err;
}
