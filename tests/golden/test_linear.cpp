// Linear-layer recipes and quantized GEMMs (linear.hpp): the FP64 reference against the layer
// math written out index by index, exactness where the formats are lossless (which pins every
// transpose), the epilogue, determinism, error ordering, and what each stabilizer toggle changes.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "fp4sim/linear.hpp"
#include "fp4sim/synth.hpp"

using namespace fp4sim;

namespace {

std::vector<uint32_t> bits_of(const std::vector<float>& v) {
  std::vector<uint32_t> b(v.size());
  for (size_t i = 0; i < v.size(); ++i) b[i] = std::bit_cast<uint32_t>(v[i]);
  return b;
}

LinearRecipe preset(const char* name) {
  LinearRecipe r;
  EXPECT_TRUE(linear_recipe(name, r)) << name;
  return r;
}

// Values on the E2M1 grid with a +-6 wherever (row + col) % 32 == 0: every aligned run of 32 along
// either axis holds exactly one 6, so every MXFP4 block (floor or ceil rule) has scale 1 along rows
// and along columns, and quantization is lossless whichever axis is the reduction axis.
std::vector<float> e2m1_grid(size_t rows, size_t cols, uint64_t seed) {
  static const float kVals[] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  std::mt19937_64 g(seed);
  std::vector<float> x(rows * cols);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) {
      const float v = (r + c) % 32 == 0 ? 6.0f : kVals[g() % 8];
      x[r * cols + c] = (g() & 1) ? -v : v;
    }
  return x;
}

// Scaled copy so that the three tensors have different magnitudes (powers of two keep it exact).
std::vector<float> scaled(std::vector<float> x, int e) {
  for (float& v : x) v = std::ldexp(v, e);
  return x;
}

const LinearInputs& small_inputs() {
  static const LinearInputs in = synth_linear_inputs(128, 128, 128, 7);
  return in;
}
const LinearReference& small_ref() {
  static const LinearReference ref = linear_reference(small_inputs(), 2);
  return ref;
}

}  // namespace

TEST(LinearGemmError, HandValues) {
  const std::vector<float> d{1.0f, 2.0f};
  const std::vector<double> ref{1.0, 1.0};
  const GemmError e = gemm_error(d, ref);
  EXPECT_EQ(e.n, 2u);
  EXPECT_DOUBLE_EQ(e.rel_err, std::sqrt(0.5));           // sqrt(1 / 2)
  EXPECT_DOUBLE_EQ(e.qsnr_db, 10.0 * std::log10(2.0));   // 10 log10(2 / 1)
  EXPECT_DOUBLE_EQ(e.max_abs, 1.0);
  EXPECT_DOUBLE_EQ(e.bias, 0.5);                          // sum e / sum |ref| = 1 / 2

  const GemmError z = gemm_error(std::vector<float>{1.0f, 1.0f}, ref);
  EXPECT_EQ(z.rel_err, 0.0);
  EXPECT_EQ(z.qsnr_db, std::numeric_limits<double>::infinity());

  const std::vector<float> with_nan{1.0f, std::numeric_limits<float>::quiet_NaN()};
  const GemmError n = gemm_error(with_nan, ref);
  EXPECT_EQ(n.n_nonfinite, 1u);
  EXPECT_EQ(n.rel_err, std::numeric_limits<double>::infinity());
  EXPECT_EQ(n.qsnr_db, -std::numeric_limits<double>::infinity());

  const std::vector<double> ref_inf{1.0, std::numeric_limits<double>::infinity()};
  const GemmError s = gemm_error(d, ref_inf);
  EXPECT_EQ(s.n_skipped, 1u);
  EXPECT_EQ(s.n, 1u);
  EXPECT_EQ(s.rel_err, 0.0);
  EXPECT_THROW(gemm_error(d, std::vector<double>{1.0}), std::invalid_argument);
}

TEST(LinearReference, MatchesLayerMathIndexByIndex) {
  // Small integers: every product and sum is exact in double, so == is the right comparison.
  const size_t m = 5, n = 3, k = 4;
  LinearInputs in;
  in.m = m;
  in.n = n;
  in.k = k;
  std::mt19937 g(3);
  auto fill = [&](size_t cnt) {
    std::vector<float> v(cnt);
    for (float& x : v) x = static_cast<float>(static_cast<int>(g() % 15) - 7);
    return v;
  };
  in.x = fill(m * k);
  in.w = fill(n * k);
  in.dy = fill(m * n);
  const LinearReference ref = linear_reference(in, 1);
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) {
      double y = 0;  // Y[i][j] = sum_k X[i][k] W[j][k]
      for (size_t c = 0; c < k; ++c) y += in.x[i * k + c] * in.w[j * k + c];
      EXPECT_EQ(ref.d[kFprop][i * n + j], y);
    }
  for (size_t i = 0; i < m; ++i)
    for (size_t c = 0; c < k; ++c) {
      double dx = 0;  // dX[i][c] = sum_j dY[i][j] W[j][c]
      for (size_t j = 0; j < n; ++j) dx += in.dy[i * n + j] * in.w[j * k + c];
      EXPECT_EQ(ref.d[kDgrad][i * k + c], dx);
    }
  for (size_t j = 0; j < n; ++j)
    for (size_t c = 0; c < k; ++c) {
      double dw = 0;  // dW[j][c] = sum_i dY[i][j] X[i][c]
      for (size_t i = 0; i < m; ++i) dw += in.dy[i * n + j] * in.x[i * k + c];
      EXPECT_EQ(ref.d[kWgrad][j * k + c], dw);
    }
}

TEST(LinearRecipes, PresetsAndValidation) {
  std::vector<std::string> names;
  for (std::string_view s : linear_recipe_names()) names.emplace_back(s);
  EXPECT_EQ(names, (std::vector<std::string>{"nvfp4-paper", "hif4-paper", "mxfp4-paper", "bf16"}));
  const LinearRecipe nv = preset("nvfp4-paper");
  EXPECT_EQ(nv.format, RecipeFormat::Nvfp4);
  EXPECT_TRUE(nv.pts && nv.two_d_weights && nv.sr_gradients);
  EXPECT_EQ(nv.rht_wgrad, 16);
  const LinearRecipe hi = preset("hif4-paper");
  EXPECT_EQ(hi.format, RecipeFormat::Hif4);
  EXPECT_FALSE(hi.sr_gradients);
  EXPECT_EQ(hi.rht_wgrad, 64);
  const LinearRecipe mx = preset("mxfp4-paper");
  EXPECT_EQ(mx.scale_rule, ScaleRule::Ceil);
  EXPECT_TRUE(mx.sr_gradients);
  EXPECT_NE(mx.rht_wgrad, 0);
  LinearRecipe none;
  EXPECT_FALSE(linear_recipe("fp8", none));
  for (std::string_view s : linear_recipe_names()) {
    EXPECT_NO_THROW(validate_recipe(preset(std::string(s).c_str())));
  }

  LinearRecipe bad = hi;
  bad.pts = false;
  EXPECT_THROW(validate_recipe(bad), std::invalid_argument);
  bad = mx;
  bad.two_d_weights = true;
  EXPECT_THROW(validate_recipe(bad), std::invalid_argument);
  bad = nv;
  bad.scale_rule = ScaleRule::Ceil;
  EXPECT_THROW(validate_recipe(bad), std::invalid_argument);
  bad = nv;
  bad.rht_wgrad = 24;
  EXPECT_THROW(validate_recipe(bad), std::invalid_argument);
  bad = nv;
  bad.model = Model::AscendHif4;
  EXPECT_THROW(validate_recipe(bad), std::invalid_argument);
  bad = preset("bf16");
  bad.sr_gradients = true;
  EXPECT_THROW(validate_recipe(bad), std::invalid_argument);
  bad = preset("bf16");
  bad.model = Model::Blackwell;
  EXPECT_THROW(validate_recipe(bad), std::invalid_argument);
}

// With inputs on the E2M1 grid and one 6 per aligned 32-run along every axis, MXFP4 (either scale
// rule, RNE, no RHT) is lossless for every operand of every GEMM, and the Blackwell sums of
// multiples of 1/4 below 2^24 are exact: the three GEMMs must equal the FP64 reference exactly.
// A transposed or mis-strided operand anywhere would break this.
TEST(LinearRecipes, LosslessMxfp4IsExactForAllThreeGemms) {
  LinearInputs in;
  in.m = 64;
  in.n = 128;
  in.k = 192;
  in.x = e2m1_grid(in.m, in.k, 1);
  in.w = scaled(e2m1_grid(in.n, in.k, 2), -3);
  in.dy = scaled(e2m1_grid(in.m, in.n, 3), 2);
  const LinearReference ref = linear_reference(in, 2);
  for (ScaleRule rule : {ScaleRule::Floor, ScaleRule::Ceil}) {
    LinearRecipe r = preset("mxfp4-paper");
    r.sr_gradients = false;
    r.rht_wgrad = 0;
    r.scale_rule = rule;
    for (Model m : {Model::Blackwell, Model::Exact, Model::Fp32Seq}) {
      r.model = m;
      const LinearResult res = run_linear(r, in, ref, 2);
      for (int g = 0; g < 3; ++g) {
        SCOPED_TRACE(std::string(linear_gemm_name(static_cast<LinearGemmId>(g))) + " " +
                     std::string(model_name(m)));
        EXPECT_EQ(res.gemm[g].err.rel_err, 0.0);
        EXPECT_EQ(res.gemm[g].err.max_abs, 0.0);
        ASSERT_EQ(res.gemm[g].d.size(), ref.d[g].size());
        for (size_t i = 0; i < ref.d[g].size(); ++i) {
          ASSERT_EQ(static_cast<double>(res.gemm[g].d[i]), ref.d[g][i]);
        }
      }
    }
  }
  // BF16 holds these values exactly too.
  const LinearResult b = run_linear(preset("bf16"), in, ref, 2);
  for (int g = 0; g < 3; ++g) {
    EXPECT_EQ(b.gemm[g].err.rel_err, 0.0);
  }
}

TEST(LinearRecipes, ShapesAndAlpha) {
  const LinearResult r = run_linear(preset("nvfp4-paper"), small_inputs(), small_ref(), 2);
  EXPECT_EQ(r.model, Model::Blackwell);
  const LinearInputs& in = small_inputs();
  EXPECT_EQ(r.gemm[kFprop].M, in.m);
  EXPECT_EQ(r.gemm[kFprop].N, in.n);
  EXPECT_EQ(r.gemm[kFprop].K, in.k);
  EXPECT_EQ(r.gemm[kDgrad].N, in.k);
  EXPECT_EQ(r.gemm[kDgrad].K, in.n);
  EXPECT_EQ(r.gemm[kWgrad].M, in.n);
  EXPECT_EQ(r.gemm[kWgrad].K, in.m);
  // PTS on: alpha = S_dec_A * S_dec_B, far from 1 for these small-magnitude tensors.
  for (int g = 0; g < 3; ++g) {
    EXPECT_LT(r.gemm[g].alpha, 1e-3f);
  }
  const LinearResult h = run_linear(preset("hif4-paper"), small_inputs(), small_ref(), 2);
  EXPECT_EQ(h.model, Model::AscendHif4);
  for (int g = 0; g < 3; ++g) {
    EXPECT_EQ(h.gemm[g].alpha, 1.0f);
  }
}

TEST(LinearRecipes, DeterministicAndThreadIndependent) {
  for (std::string_view name : linear_recipe_names()) {
    const LinearRecipe r = preset(std::string(name).c_str());
    const LinearResult a = run_linear(r, small_inputs(), small_ref(), 1);
    const LinearResult b = run_linear(r, small_inputs(), small_ref(), 3);
    for (int g = 0; g < 3; ++g) {
      EXPECT_EQ(bits_of(a.gemm[g].d), bits_of(b.gemm[g].d)) << name << " gemm " << g;
    }
  }
}

TEST(LinearRecipes, ErrorsFiniteAndBf16Best) {
  const LinearResult bf = run_linear(preset("bf16"), small_inputs(), small_ref(), 2);
  for (const char* name : {"nvfp4-paper", "hif4-paper", "mxfp4-paper"}) {
    const LinearResult r = run_linear(preset(name), small_inputs(), small_ref(), 2);
    for (int g = 0; g < 3; ++g) {
      SCOPED_TRACE(std::string(name) + " " + std::string(linear_gemm_name(static_cast<LinearGemmId>(g))));
      const GemmError& e = r.gemm[g].err;
      EXPECT_TRUE(std::isfinite(e.rel_err));
      EXPECT_TRUE(std::isfinite(e.qsnr_db));
      EXPECT_EQ(e.n_nonfinite, 0u);
      // 4-bit GEMMs on LLM-like data: a few percent to a few tens of percent relative error; a
      // wrong operand layout would be ~sqrt(2) (uncorrelated) — far outside this band.
      EXPECT_GT(e.rel_err, 1e-3);
      EXPECT_LT(e.rel_err, 0.5);
      // BF16 (8-bit significands) is far more accurate than any 4-bit recipe.
      EXPECT_LT(bf.gemm[g].err.rel_err * 10, e.rel_err);
    }
  }
  for (int g = 0; g < 3; ++g) {
    EXPECT_GT(bf.gemm[g].err.rel_err, 0.0);
    EXPECT_LT(bf.gemm[g].err.rel_err, 1e-2);
  }
}

// Which GEMMs a stabilizer may change: SR only touches dY (Dgrad, Wgrad); the RHT only the Wgrad
// operands; 2D scaling only W (Fprop, Dgrad); PTS and the MX scale rule every operand.
TEST(LinearRecipes, EachToggleChangesWhatItShould) {
  struct Toggle {
    const char* recipe;
    const char* what;
    void (*apply)(LinearRecipe&);
    std::array<bool, 3> changes;  // fprop, dgrad, wgrad
  };
  const Toggle toggles[] = {
      {"nvfp4-paper", "sr off", [](LinearRecipe& r) { r.sr_gradients = false; }, {false, true, true}},
      {"nvfp4-paper", "rht off", [](LinearRecipe& r) { r.rht_wgrad = 0; }, {false, false, true}},
      {"nvfp4-paper", "2d off", [](LinearRecipe& r) { r.two_d_weights = false; }, {true, true, false}},
      {"nvfp4-paper", "pts off", [](LinearRecipe& r) { r.pts = false; }, {true, true, true}},
      {"nvfp4-paper", "seed 1", [](LinearRecipe& r) { r.seed = 1; }, {false, true, true}},
      {"hif4-paper", "sr on", [](LinearRecipe& r) { r.sr_gradients = true; }, {false, true, true}},
      {"hif4-paper", "rht off", [](LinearRecipe& r) { r.rht_wgrad = 0; }, {false, false, true}},
      {"hif4-paper", "rht 16", [](LinearRecipe& r) { r.rht_wgrad = 16; }, {false, false, true}},
      {"mxfp4-paper", "floor", [](LinearRecipe& r) { r.scale_rule = ScaleRule::Floor; }, {true, true, true}},
      {"mxfp4-paper", "sr off", [](LinearRecipe& r) { r.sr_gradients = false; }, {false, true, true}},
      {"mxfp4-paper", "rht off", [](LinearRecipe& r) { r.rht_wgrad = 0; }, {false, false, true}},
  };
  for (const Toggle& t : toggles) {
    const LinearRecipe base = preset(t.recipe);
    LinearRecipe mod = base;
    t.apply(mod);
    const LinearResult a = run_linear(base, small_inputs(), small_ref(), 2);
    const LinearResult b = run_linear(mod, small_inputs(), small_ref(), 2);
    for (int g = 0; g < 3; ++g) {
      EXPECT_EQ(bits_of(a.gemm[g].d) != bits_of(b.gemm[g].d), t.changes[g])
          << t.recipe << " " << t.what << " " << linear_gemm_name(static_cast<LinearGemmId>(g));
    }
  }
}

// Without PTS an NVFP4 block scale is block_amax / 6 in UE4M3 directly. The gradients (scale
// 1e-4, every block amax far below 6 * 2^-10) get scales below half of UE4M3's smallest subnormal
// 2^-9, which round to the zero code: dY quantizes to all zeros, Dgrad and Wgrad return 0 and their
// relative error is exactly 1. Activations (~1) and weights (~0.02) keep usable scales, so Fprop
// stays within a few percent of the PTS result.
TEST(LinearRecipes, PtsOffFlushesSmallGradients) {
  LinearRecipe nv = preset("nvfp4-paper");
  const LinearResult on = run_linear(nv, small_inputs(), small_ref(), 2);
  nv.pts = false;
  const LinearResult off = run_linear(nv, small_inputs(), small_ref(), 2);
  float amax = 0;
  for (float v : small_inputs().dy) amax = std::max(amax, std::fabs(v));
  ASSERT_LT(amax / 6, 0x1p-10f);
  for (int g : {kDgrad, kWgrad}) {
    EXPECT_EQ(off.gemm[g].err.rel_err, 1.0) << g;
    for (float v : off.gemm[g].d) {
      ASSERT_EQ(v, 0.0f);
    }
    EXPECT_LT(on.gemm[g].err.rel_err, 0.5);
  }
  EXPECT_NEAR(off.gemm[kFprop].err.rel_err, on.gemm[kFprop].err.rel_err, 0.05);
}

TEST(LinearRecipes, ReductionDimensionChecked) {
  const LinearInputs in = synth_linear_inputs(96, 128, 128, 1);  // m = 96: wgrad needs 64 | m
  const LinearReference ref = linear_reference(in, 2);
  try {
    run_linear(preset("nvfp4-paper"), in, ref, 2);
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("wgrad reduces over m = 96"), std::string::npos) << e.what();
  }
  // exact / fp32-seq only need the block (16 for NVFP4) and the RHT size (16).
  LinearRecipe r = preset("nvfp4-paper");
  r.model = Model::Exact;
  EXPECT_NO_THROW(run_linear(r, in, ref, 2));
  EXPECT_THROW(run_linear(preset("bf16"), in, small_ref(), 2), std::invalid_argument);  // reference mismatch
}

TEST(LinearRecipes, AblationRows) {
  const std::vector<LinearRecipe> rows = ablation_recipes(5);
  ASSERT_GE(rows.size(), 12u);
  EXPECT_EQ(rows[0].format, RecipeFormat::Bf16);
  for (const LinearRecipe& r : rows) {
    EXPECT_NO_THROW(validate_recipe(r)) << r.name;
    EXPECT_EQ(r.seed, 5u);
  }
  auto find = [&](const char* label) -> const LinearRecipe& {
    for (const LinearRecipe& r : rows)
      if (r.name == label) return r;
    ADD_FAILURE() << "no ablation row " << label;
    return rows[0];
  };
  EXPECT_FALSE(find("nvfp4-paper -pts").pts);
  EXPECT_TRUE(find("hif4-paper +sr").sr_gradients);
  EXPECT_EQ(find("mxfp4-paper floor").scale_rule, ScaleRule::Floor);
  EXPECT_EQ(find("hif4-paper -rht").rht_wgrad, 0);
}

TEST(QuantizedGemm, EpilogueAlphaAndC) {
  const size_t M = 16, N = 8, K = 128;
  const std::vector<float> a = llm_activations(M, K, 3);
  const std::vector<float> b = llm_weights(N, K, 4);
  std::vector<float> c(M * N);
  for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<float>(i % 7) * 0.01f - 0.03f;
  const QuantizedGemm q = quantized_gemm(BlockFormat::Nvfp4, a, {}, b, {}, c, M, N, K);
  EXPECT_EQ(q.model, Model::Blackwell);
  EXPECT_EQ(q.cfg.kind->id, MmaKindId::Mxf4Nvf4);
  EXPECT_EQ(q.cfg.block, 16);
  EXPECT_EQ(q.alpha, q.a.global_scale * q.b.global_scale);
  EXPECT_NE(q.alpha, 1.0f);
  // acc is the MMA with C = 0 on the raw codes; d = fma(alpha, acc, C) with one rounding.
  const std::vector<float> acc = gemm(q.cfg, Model::Blackwell, M, N, K, q.a.codes, std::span<const uint8_t>(q.a.scales),
                                      q.b.codes, std::span<const uint8_t>(q.b.scales), {});
  EXPECT_EQ(bits_of(acc), bits_of(q.acc));
  for (size_t i = 0; i < M * N; ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(q.d[i]), std::bit_cast<uint32_t>(std::fma(q.alpha, acc[i], c[i])));
  }
  // Without C: RN(alpha * acc).
  const QuantizedGemm q0 = quantized_gemm(BlockFormat::Nvfp4, a, {}, b, {}, {}, M, N, K);
  for (size_t i = 0; i < M * N; ++i) {
    ASSERT_EQ(q0.d[i], q0.alpha * q0.acc[i]);
  }

  // Formats map onto their kinds; others need no alpha.
  EXPECT_EQ(mma_config_for(BlockFormat::Mxfp4).kind->id, MmaKindId::Mxf4);
  EXPECT_EQ(mma_config_for(BlockFormat::Hif4).kind->id, MmaKindId::Hif4);
  const MmaConfig e5 = mma_config_for(BlockFormat::Mxfp8E5M2);
  EXPECT_EQ(e5.kind->id, MmaKindId::Mxf8f6f4);
  EXPECT_EQ(e5.elem_a->name, "e5m2");
  const QuantizedGemm h = quantized_gemm(BlockFormat::Hif4, a, {}, b, {}, {}, M, N, K);
  EXPECT_EQ(h.alpha, 1.0f);
  EXPECT_EQ(h.model, Model::AscendHif4);
  const QuantizedGemm f6 = quantized_gemm(BlockFormat::Mxfp6E3M2, std::span<const float>(a).first(M * 96), {},
                                          std::span<const float>(b).first(N * 96), {}, {}, M, N, 96);
  EXPECT_EQ(f6.d.size(), M * N);

  // Errors: sizes, K multiple, model / kind mismatch.
  EXPECT_THROW(quantized_gemm(BlockFormat::Nvfp4, a, {}, b, {}, {}, M, N, K + 1), std::invalid_argument);
  EXPECT_THROW(quantized_gemm(BlockFormat::Nvfp4, std::span<const float>(a).first(M * 96), {},
                              std::span<const float>(b).first(N * 96), {}, {}, M, N, 96),
               std::invalid_argument);  // 96 is not a multiple of the instruction K = 64
  EXPECT_NO_THROW(quantized_gemm(BlockFormat::Nvfp4, std::span<const float>(a).first(M * 96), {},
                                 std::span<const float>(b).first(N * 96), {}, {}, M, N, 96, Model::Exact));
  EXPECT_THROW(quantized_gemm(BlockFormat::Nvfp4, a, {}, b, {}, {}, M, N, K, Model::AscendHif4), std::invalid_argument);
  EXPECT_THROW(quantized_gemm(BlockFormat::Hif4, a, {}, b, {}, {}, M, N, K, Model::Blackwell), std::invalid_argument);
}

TEST(Bf16Gemm, ExactVersusSequentialFma) {
  // C = 1 plus two products of 2^-12 * 2^-12 = 2^-24 each. Exact: 1 + 2^-23 is an FP32 value.
  // Sequential FMA: RN(1 + 2^-24) = 1 (a tie, to even), twice.
  const std::vector<float> a{0x1p-12f, 0x1p-12f}, b{0x1p-12f, 0x1p-12f}, c{1.0f};
  EXPECT_EQ(bf16_gemm(a, b, c, 1, 1, 2, Model::Exact)[0], 1.0f + 0x1p-23f);
  EXPECT_EQ(bf16_gemm(a, b, c, 1, 1, 2, Model::Fp32Seq)[0], 1.0f);
  // Operands are rounded to BF16 first: 1 + 2^-9 -> 1 (tie to even), 1 + 3*2^-9 -> 1 + 2^-7.
  const std::vector<float> a2{1.0f + 0x1p-9f, 1.0f + 3 * 0x1p-9f}, b2{1.0f, 1.0f};
  EXPECT_EQ(bf16_gemm(a2, b2, {}, 1, 1, 2)[0], 2.0f + 0x1p-7f);
  // A zero sum is +0; specials follow IEEE (canonical NaN).
  const std::vector<float> a3{1.0f, -1.0f}, b3{1.0f, 1.0f};
  EXPECT_EQ(std::bit_cast<uint32_t>(bf16_gemm(a3, b3, {}, 1, 1, 2)[0]), 0u);
  const std::vector<float> ainf{std::numeric_limits<float>::infinity(), 0.0f};
  EXPECT_EQ(bf16_gemm(ainf, b3, {}, 1, 1, 2)[0], std::numeric_limits<float>::infinity());
  const std::vector<float> b0{0.0f, 1.0f};
  EXPECT_EQ(std::bit_cast<uint32_t>(bf16_gemm(ainf, b0, {}, 1, 1, 2)[0]), 0x7FFFFFFFu);
  EXPECT_THROW(bf16_gemm(a, b, c, 1, 1, 2, Model::Blackwell), std::invalid_argument);
}

TEST(Transpose, Shapes) {
  const std::vector<float> x{1, 2, 3, 4, 5, 6};  // [2, 3]
  EXPECT_EQ(transpose(x, 2, 3), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_THROW(transpose(x, 4, 2), std::invalid_argument);
  std::vector<float> big(70 * 45);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i);
  EXPECT_EQ(transpose(transpose(big, 70, 45), 45, 70), big);
}
