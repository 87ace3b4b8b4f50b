// Quantized GEMMs on float operands and linear-layer recipes (linear.hpp).
#include "fp4sim/linear.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>

#include "fp4sim/hadamard.hpp"
#include "fp4sim/synth.hpp"

namespace fp4sim {

namespace {

float canonical(float v) { return std::isnan(v) ? std::bit_cast<float>(kNaNBits) : v; }

// Runs body(r0, r1) over [0, rows) split into contiguous ranges, one per thread. Every output
// is a function of its row alone, so the thread count never changes a bit.
template <class F>
void parallel_rows(size_t rows, unsigned threads, F&& body) {
  size_t nt = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  nt = std::min(nt, std::max<size_t>(rows, 1));
  if (nt <= 1) {
    body(size_t{0}, rows);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(nt);
  for (size_t t = 0; t < nt; ++t) pool.emplace_back(body, rows * t / nt, rows * (t + 1) / nt);
  for (auto& th : pool) th.join();
}

void check_sizes(const char* what, std::span<const float> a, std::span<const float> b,
                 std::span<const float> c, size_t M, size_t N, size_t K) {
  if (a.size() != M * K || b.size() != N * K || (!c.empty() && c.size() != M * N))
    throw std::invalid_argument(std::string(what) + ": operand sizes do not match M=" + std::to_string(M) +
                                ", N=" + std::to_string(N) + ", K=" + std::to_string(K));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Reference and metrics

std::vector<double> reference_gemm_f64(std::span<const float> a, std::span<const float> b,
                                       std::span<const float> c, size_t M, size_t N, size_t K,
                                       unsigned threads) {
  check_sizes("reference_gemm_f64", a, b, c, M, N, K);
  std::vector<double> d(M * N);
  parallel_rows(M, threads, [&](size_t r0, size_t r1) {
    for (size_t i = r0; i < r1; ++i) {
      const float* ar = a.data() + i * K;
      for (size_t j = 0; j < N; ++j) {
        const float* br = b.data() + j * K;
        double s = c.empty() ? 0.0 : static_cast<double>(c[i * N + j]);
        for (size_t k = 0; k < K; ++k) s += static_cast<double>(ar[k]) * static_cast<double>(br[k]);
        d[i * N + j] = s;
      }
    }
  });
  return d;
}

GemmError gemm_error(std::span<const float> d, std::span<const double> ref) {
  if (d.size() != ref.size()) throw std::invalid_argument("gemm_error: sizes differ");
  GemmError g;
  double se = 0, sr = 0, sum_e = 0, sum_abs = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    if (!std::isfinite(ref[i])) {
      ++g.n_skipped;
      continue;
    }
    ++g.n;
    if (!std::isfinite(d[i])) {
      ++g.n_nonfinite;
      continue;
    }
    const double e = static_cast<double>(d[i]) - ref[i];
    se += e * e;
    sr += ref[i] * ref[i];
    sum_e += e;
    sum_abs += std::fabs(ref[i]);
    g.max_abs = std::max(g.max_abs, std::fabs(e));
  }
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (g.n_nonfinite > 0) {
    g.rel_err = inf;
    g.max_abs = inf;
    g.qsnr_db = -inf;
    g.bias = std::numeric_limits<double>::quiet_NaN();
    return g;
  }
  g.rel_err = se == 0 ? 0.0 : (sr == 0 ? inf : std::sqrt(se / sr));
  g.qsnr_db = se == 0 ? inf : 10.0 * std::log10(sr / se);
  g.bias = sum_abs == 0 ? 0.0 : sum_e / sum_abs;
  return g;
}

// ---------------------------------------------------------------------------------------------
// Quantized GEMM

MmaConfig mma_config_for(BlockFormat f) {
  switch (f) {
    case BlockFormat::Nvfp4: return make_mma_config(MmaKindId::Mxf4Nvf4, &kE2M1, &kE2M1, &kUE4M3, 16);
    case BlockFormat::Mxfp4: return make_mma_config(MmaKindId::Mxf4);
    case BlockFormat::Hif4: return make_mma_config(MmaKindId::Hif4);
    default: {
      const ElemFormat* e = info(f).elem;
      return make_mma_config(MmaKindId::Mxf8f6f4, e, e, &kUE8M0, 32);
    }
  }
}

std::vector<float> transpose(std::span<const float> x, size_t rows, size_t cols) {
  if (x.size() != rows * cols) throw std::invalid_argument("transpose: size does not match the shape");
  std::vector<float> t(x.size());
  // 32x32 tiles keep both sides in cache for the large operands of the linear recipes.
  constexpr size_t T = 32;
  for (size_t r0 = 0; r0 < rows; r0 += T)
    for (size_t c0 = 0; c0 < cols; c0 += T)
      for (size_t r = r0; r < std::min(rows, r0 + T); ++r)
        for (size_t c = c0; c < std::min(cols, c0 + T); ++c) t[c * rows + r] = x[r * cols + c];
  return t;
}

QuantizedGemm quantized_gemm(BlockFormat f, std::span<const float> a, const QuantOptions& oa,
                             std::span<const float> b, const QuantOptions& ob, std::span<const float> c,
                             size_t M, size_t N, size_t K, std::optional<Model> model, unsigned threads) {
  check_sizes("quantized_gemm", a, b, c, M, N, K);
  QuantizedGemm g;
  g.cfg = mma_config_for(f);
  g.model = model.value_or(g.cfg.kind->hardware_model);
  validate_mma_config(g.cfg, g.model);
  const size_t step = (g.model == Model::Blackwell || g.model == Model::AscendHif4)
                          ? static_cast<size_t>(g.cfg.kind->k)
                          : static_cast<size_t>(g.cfg.block);
  if (K == 0 || K % step != 0)
    throw std::invalid_argument("quantized_gemm: K = " + std::to_string(K) + " is not a positive multiple of " +
                                std::to_string(step) + " (" + std::string(model_name(g.model)) + " on kind " +
                                std::string(g.cfg.kind->name) + ")");
  // The operands are quantized on the same threads as the GEMM (the bits do not depend on it).
  QuantOptions qa = oa, qb = ob;
  qa.threads = qb.threads = threads;
  g.a = quantize(f, a, M, K, qa);
  g.b = quantize(f, b, N, K, qb);
  if (f == BlockFormat::Nvfp4) g.alpha = g.a.global_scale * g.b.global_scale;  // one FP32 RN
  if (info(f).scale_word32) {
    g.acc = gemm(g.cfg, g.model, M, N, K, g.a.codes, std::span<const uint32_t>(g.a.scale_words), g.b.codes,
                 std::span<const uint32_t>(g.b.scale_words), {}, 1.0f, threads);
  } else {
    g.acc = gemm(g.cfg, g.model, M, N, K, g.a.codes, std::span<const uint8_t>(g.a.scales), g.b.codes,
                 std::span<const uint8_t>(g.b.scales), {}, 1.0f, threads);
  }
  g.d.resize(M * N);
  for (size_t i = 0; i < M * N; ++i)
    g.d[i] = canonical(c.empty() ? g.alpha * g.acc[i] : std::fma(g.alpha, g.acc[i], c[i]));
  return g;
}

namespace {

// A BF16 value (held exactly in a float) as m * 2^e with |m| < 2^8.
inline void bf16_split(float x, int64_t& m, int& e) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const uint32_t ef = (u >> 23) & 0xFFu;
  const int64_t mant = (ef == 0 ? (u & 0x7FFFFFu) : ((u & 0x7FFFFFu) | 0x800000u)) >> 16;
  m = (u >> 31) ? -mant : mant;
  e = (ef == 0 ? 1 : static_cast<int>(ef)) - 127 - 7;
}

}  // namespace

std::vector<float> bf16_gemm(std::span<const float> a, std::span<const float> b, std::span<const float> c,
                             size_t M, size_t N, size_t K, Model model, unsigned threads) {
  check_sizes("bf16_gemm", a, b, c, M, N, K);
  if (model != Model::Exact && model != Model::Fp32Seq)
    throw std::invalid_argument("bf16_gemm: model must be exact or fp32-seq, not " + std::string(model_name(model)));
  auto to_bf16 = [](std::span<const float> x) {
    std::vector<float> r(x.size());
    for (size_t i = 0; i < x.size(); ++i) r[i] = bf16_to_float(float_to_bf16_rne(x[i]));
    return r;
  };
  const std::vector<float> ab = to_bf16(a), bb = to_bf16(b);
  std::vector<float> d(M * N);
  parallel_rows(M, threads, [&](size_t r0, size_t r1) {
    ExactAccumulator acc;
    for (size_t i = r0; i < r1; ++i) {
      const float* ar = ab.data() + i * K;
      for (size_t j = 0; j < N; ++j) {
        const float* br = bb.data() + j * K;
        const float cv = c.empty() ? 0.0f : c[i * N + j];
        if (model == Model::Fp32Seq) {
          float s = cv;
          for (size_t k = 0; k < K; ++k) s = std::fma(ar[k], br[k], s);
          d[i * N + j] = canonical(s);
          continue;
        }
        bool finite = std::isfinite(cv);
        for (size_t k = 0; k < K && finite; ++k) finite = std::isfinite(ar[k]) && std::isfinite(br[k]);
        if (!finite) {
          // Specials follow IEEE on the exact operands; double is exact enough to decide them.
          double s = cv;
          for (size_t k = 0; k < K; ++k) s += static_cast<double>(ar[k]) * static_cast<double>(br[k]);
          d[i * N + j] = canonical(static_cast<float>(s));
          continue;
        }
        acc.clear();
        acc.add_float(cv);
        for (size_t k = 0; k < K; ++k) {
          int64_t ma, mb;
          int ea, eb;
          bf16_split(ar[k], ma, ea);
          bf16_split(br[k], mb, eb);
          acc.add(ma * mb, ea + eb);
        }
        d[i * N + j] = std::bit_cast<float>(acc.round_fp32(true));
      }
    }
  });
  return d;
}

// ---------------------------------------------------------------------------------------------
// Recipes

std::string_view recipe_format_name(RecipeFormat f) {
  switch (f) {
    case RecipeFormat::Nvfp4: return "nvfp4";
    case RecipeFormat::Mxfp4: return "mxfp4";
    case RecipeFormat::Hif4: return "hif4";
    case RecipeFormat::Bf16: return "bf16";
  }
  return "?";
}

namespace {

constexpr std::string_view kRecipeNames[] = {"nvfp4-paper", "hif4-paper", "mxfp4-paper", "bf16"};

}  // namespace

std::span<const std::string_view> linear_recipe_names() { return kRecipeNames; }

BlockFormat recipe_block_format(RecipeFormat f) {
  switch (f) {
    case RecipeFormat::Nvfp4: return BlockFormat::Nvfp4;
    case RecipeFormat::Mxfp4: return BlockFormat::Mxfp4;
    case RecipeFormat::Hif4: return BlockFormat::Hif4;
    case RecipeFormat::Bf16: break;
  }
  throw std::invalid_argument("bf16 has no block format");
}

std::array<std::pair<QuantOptions, QuantOptions>, 3> linear_operand_options(const LinearRecipe& r) {
  QuantOptions base;
  base.rounding = Rounding::Rne;
  base.seed = r.seed;
  base.rht_seed = r.seed;
  base.pts = r.format == RecipeFormat::Nvfp4 ? r.pts : true;
  base.scale_rule = r.scale_rule;
  base.convention = r.convention;
  QuantOptions weight = base;
  weight.two_d = r.two_d_weights;
  QuantOptions grad_dgrad = base, grad_wgrad = base, act_wgrad = base;
  if (r.sr_gradients) {
    grad_dgrad.rounding = grad_wgrad.rounding = Rounding::Sr;
    grad_dgrad.stream = kDgradSrStream;
    grad_wgrad.stream = kWgradSrStream;
  }
  // The same RHT (same signs) on both Wgrad operands along the reduction axis: Q Q^T = I, so the
  // product is unchanged up to quantization error and no inverse transform is needed.
  grad_wgrad.rht = act_wgrad.rht = r.rht_wgrad;
  return {{{base, weight}, {grad_dgrad, weight}, {grad_wgrad, act_wgrad}}};
}

bool linear_recipe(std::string_view name, LinearRecipe& out) {
  LinearRecipe r;
  r.name = std::string(name);
  if (name == "nvfp4-paper") {
    r.format = RecipeFormat::Nvfp4;
    r.pts = true;
    r.two_d_weights = true;
    r.sr_gradients = true;
    r.rht_wgrad = 16;
  } else if (name == "hif4-paper") {
    r.format = RecipeFormat::Hif4;
    r.rht_wgrad = 64;
  } else if (name == "mxfp4-paper") {
    r.format = RecipeFormat::Mxfp4;
    r.scale_rule = ScaleRule::Ceil;
    r.sr_gradients = true;
    r.rht_wgrad = 64;
  } else if (name == "bf16") {
    r.format = RecipeFormat::Bf16;
  } else {
    return false;
  }
  out = r;
  return true;
}

void validate_recipe(const LinearRecipe& r) {
  const std::string fmt(recipe_format_name(r.format));
  if (r.format != RecipeFormat::Nvfp4) {
    if (!r.pts) throw std::invalid_argument("pts applies to nvfp4 only, not " + fmt);
    if (r.two_d_weights) throw std::invalid_argument("2d weight scaling applies to nvfp4 only, not " + fmt);
  }
  if (r.format != RecipeFormat::Mxfp4 && r.scale_rule != ScaleRule::Floor)
    throw std::invalid_argument("scale rule ceil applies to mxfp4 only, not " + fmt);
  if (r.format == RecipeFormat::Bf16) {
    if (r.sr_gradients) throw std::invalid_argument("sr does not apply to bf16");
    if (r.rht_wgrad != 0) throw std::invalid_argument("rht does not apply to bf16");
    if (r.model && *r.model != Model::Exact && *r.model != Model::Fp32Seq)
      throw std::invalid_argument("bf16 runs the exact or fp32-seq model only");
  } else if (r.model) {
    validate_mma_config(mma_config_for(recipe_block_format(r.format)), *r.model);
  }
  if (r.rht_wgrad != 0 && !is_rht_size(r.rht_wgrad))
    throw std::invalid_argument("rht size must be a power of two >= 2, got " + std::to_string(r.rht_wgrad));
}

LinearInputs synth_linear_inputs(size_t m, size_t n, size_t k, uint64_t seed) {
  LinearInputs in;
  in.m = m;
  in.n = n;
  in.k = k;
  in.x = llm_activations(m, k, seed);
  in.w = llm_weights(n, k, seed);
  in.dy = llm_gradients(m, n, seed);
  return in;
}

std::string_view linear_gemm_name(LinearGemmId g) {
  switch (g) {
    case kFprop: return "fprop";
    case kDgrad: return "dgrad";
    case kWgrad: return "wgrad";
  }
  return "?";
}

namespace {

void check_inputs(const LinearInputs& in) {
  if (in.m == 0 || in.n == 0 || in.k == 0) throw std::invalid_argument("linear: m, n and k must be positive");
  if (in.x.size() != in.m * in.k || in.w.size() != in.n * in.k || in.dy.size() != in.m * in.n)
    throw std::invalid_argument("linear: x, w, dy sizes do not match m, n, k");
}

}  // namespace

LinearReference linear_reference(const LinearInputs& in, unsigned threads) {
  check_inputs(in);
  LinearReference r;
  const std::vector<float> wt = transpose(in.w, in.n, in.k);    // [k, n]
  const std::vector<float> dyt = transpose(in.dy, in.m, in.n);  // [n, m]
  const std::vector<float> xt = transpose(in.x, in.m, in.k);    // [k, m]
  r.d[kFprop] = reference_gemm_f64(in.x, in.w, {}, in.m, in.n, in.k, threads);
  r.d[kDgrad] = reference_gemm_f64(in.dy, wt, {}, in.m, in.k, in.n, threads);
  r.d[kWgrad] = reference_gemm_f64(dyt, xt, {}, in.n, in.k, in.m, threads);
  return r;
}

LinearResult run_linear(const LinearRecipe& r, const LinearInputs& in, const LinearReference& ref,
                        unsigned threads) {
  validate_recipe(r);
  check_inputs(in);
  LinearResult res;
  res.recipe = r;

  // GEMM operands, K-major: [M, K] and [N, K] with K the reduction dimension.
  struct Spec {
    std::span<const float> a, b;
    size_t M, N, K;
  };
  const std::vector<float> wt = transpose(in.w, in.n, in.k);
  const std::vector<float> dyt = transpose(in.dy, in.m, in.n);
  const std::vector<float> xt = transpose(in.x, in.m, in.k);
  const std::array<Spec, 3> spec{{{in.x, in.w, in.m, in.n, in.k},
                                  {in.dy, wt, in.m, in.k, in.n},
                                  {dyt, xt, in.n, in.k, in.m}}};
  for (int g = 0; g < 3; ++g) {
    if (ref.d[g].size() != spec[g].M * spec[g].N)
      throw std::invalid_argument("linear: the reference does not match the inputs");
  }

  if (r.format == RecipeFormat::Bf16) {
    res.model = r.model.value_or(Model::Exact);
    for (int g = 0; g < 3; ++g) {
      LinearGemmResult& out = res.gemm[g];
      out.M = spec[g].M;
      out.N = spec[g].N;
      out.K = spec[g].K;
      out.d = bf16_gemm(spec[g].a, spec[g].b, {}, out.M, out.N, out.K, res.model, threads);
      out.err = gemm_error(out.d, ref.d[g]);
    }
    return res;
  }

  const BlockFormat bf = recipe_block_format(r.format);
  const MmaConfig cfg = mma_config_for(bf);
  res.model = r.model.value_or(cfg.kind->hardware_model);
  const bool per_instruction = res.model == Model::Blackwell || res.model == Model::AscendHif4;
  const size_t step = per_instruction ? static_cast<size_t>(cfg.kind->k) : static_cast<size_t>(cfg.block);
  const auto opts = linear_operand_options(r);

  for (int g = 0; g < 3; ++g) {
    const Spec& s = spec[g];
    size_t need = step;
    if (g == kWgrad && r.rht_wgrad != 0) need = std::lcm(need, static_cast<size_t>(r.rht_wgrad));
    if (s.K % need != 0) {
      const char* dim = g == kFprop ? "k" : g == kDgrad ? "n" : "m";
      throw std::invalid_argument(std::string(linear_gemm_name(static_cast<LinearGemmId>(g))) + " reduces over " +
                                  dim + " = " + std::to_string(s.K) + ", which must be a multiple of " +
                                  std::to_string(need) + " (" + std::string(cfg.kind->name) + " with " +
                                  std::string(model_name(res.model)) +
                                  (g == kWgrad && r.rht_wgrad ? ", RHT " + std::to_string(r.rht_wgrad) : "") +
                                  ")");
    }
    QuantizedGemm q = quantized_gemm(bf, s.a, opts[g].first, s.b, opts[g].second, {}, s.M, s.N, s.K, res.model,
                                     threads);
    LinearGemmResult& out = res.gemm[g];
    out.M = s.M;
    out.N = s.N;
    out.K = s.K;
    out.alpha = q.alpha;
    out.d = std::move(q.d);
    out.err = gemm_error(out.d, ref.d[g]);
  }
  return res;
}

std::vector<LinearRecipe> ablation_recipes(uint64_t seed) {
  std::vector<LinearRecipe> rows;
  auto preset = [&](std::string_view name) {
    LinearRecipe r;
    linear_recipe(name, r);
    r.seed = seed;
    return r;
  };
  auto add = [&](LinearRecipe r, std::string label) {
    r.name = std::move(label);
    rows.push_back(std::move(r));
  };
  add(preset("bf16"), "bf16");

  const LinearRecipe nv = preset("nvfp4-paper");
  add(nv, "nvfp4-paper");
  LinearRecipe r = nv;
  r.pts = false;
  add(r, "nvfp4-paper -pts");
  r = nv;
  r.two_d_weights = false;
  add(r, "nvfp4-paper -2d");
  r = nv;
  r.sr_gradients = false;
  add(r, "nvfp4-paper -sr");
  r = nv;
  r.rht_wgrad = 0;
  add(r, "nvfp4-paper -rht");
  r = nv;
  r.two_d_weights = r.sr_gradients = false;
  r.rht_wgrad = 0;
  add(r, "nvfp4 (pts only)");

  const LinearRecipe hi = preset("hif4-paper");
  add(hi, "hif4-paper");
  r = hi;
  r.sr_gradients = true;
  add(r, "hif4-paper +sr");
  r = hi;
  r.rht_wgrad = 0;
  add(r, "hif4-paper -rht");
  r = hi;
  r.rht_wgrad = 16;
  add(r, "hif4-paper rht16");

  const LinearRecipe mx = preset("mxfp4-paper");
  add(mx, "mxfp4-paper");
  r = mx;
  r.scale_rule = ScaleRule::Floor;
  add(r, "mxfp4-paper floor");
  r = mx;
  r.sr_gradients = false;
  add(r, "mxfp4-paper -sr");
  r = mx;
  r.rht_wgrad = 0;
  add(r, "mxfp4-paper -rht");
  return rows;
}

}  // namespace fp4sim
