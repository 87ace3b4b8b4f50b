// fp4sim._core: the golden library and the suite checker for Python (docs/python.md).
//
// Deliberately thin: arguments arrive already checked and shaped by python/fp4sim/__init__.py (which
// words its errors like the CLI); these functions take C-contiguous arrays without copying them,
// hand results back as numpy arrays that own the C++ vectors (no copy either), and release the GIL
// while they compute. Golden's std::invalid_argument becomes ValueError (nanobind's default).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/check.hpp"
#include "fp4sim/io/vectors.hpp"
#include "fp4sim/layout.hpp"
#include "fp4sim/linear.hpp"
#include "fp4sim/mma.hpp"
#include "fp4sim/quant.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using namespace fp4sim;

template <class T>
using In2 = nb::ndarray<const T, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
template <class T>
using In1 = nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
template <class T>
using Out = nb::ndarray<nb::numpy, T>;

template <class T>
std::span<const T> span_of(const In2<T>& a) {
  return {a.data(), a.shape(0) * a.shape(1)};
}

// The vector moves into the array's owner: numpy frees it when the last view goes.
template <class T>
Out<T> to_numpy(std::vector<T>&& v, std::vector<size_t> shape) {
  auto* owned = new std::vector<T>(std::move(v));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return Out<T>(owned->data(), shape.size(), shape.data(), owner);
}

BlockFormat block_format(const std::string& name) {
  BlockFormat f{};
  if (!parse_block_format(name, f)) throw std::invalid_argument("unknown format '" + name + "'");
  return f;
}

Model model_of(const std::string& name) {
  Model m{};
  if (!parse_model(name, m)) throw std::invalid_argument("unknown model '" + name + "'");
  return m;
}

const ElemFormat* elem_named(const std::string& name) {
  for (const ElemFormat* f : {&kE2M1, &kE2M3, &kE3M2, &kE4M3, &kE5M2, &kUE4M3, &kUE8M0, &kE6M2, &kS1P2})
    if (f->name == name) return f;
  throw std::invalid_argument("unknown element or scale type '" + name + "'");
}

Convention convention_of(const std::string& name) {
  Convention c{};
  if (!parse_convention(name, c)) throw std::invalid_argument("unknown convention '" + name + "'");
  return c;
}

QuantOptions quant_options(const std::string& rounding, uint64_t seed, uint32_t stream, const std::string& scale_rule,
                           bool pts, bool two_d, int rht, bool rht_bf16, const std::string& convention,
                           unsigned threads) {
  QuantOptions o;
  if (!parse_rounding(rounding, o.rounding)) throw std::invalid_argument("unknown rounding '" + rounding + "'");
  if (!parse_scale_rule(scale_rule, o.scale_rule)) throw std::invalid_argument("unknown scale rule '" + scale_rule + "'");
  o.convention = convention_of(convention);
  o.seed = seed;
  o.stream = stream;
  o.pts = pts;
  o.two_d = two_d;
  o.rht = rht;
  o.rht_bf16 = rht_bf16;
  o.rht_seed = seed;  // one seed for SR bits and RHT signs, as `fp4sim quantize` does
  o.threads = threads;
  return o;
}

// The five outputs of `fp4sim quantize`, [rows, cols] based (Python restores the leading axes).
nb::tuple result_tuple(Quantized&& q, std::vector<float>&& deq) {
  const BlockFormatInfo& fi = info(q.format);
  const size_t rows = q.rows, cols = q.cols, scols = cols / static_cast<size_t>(fi.block);
  nb::object scales = fi.scale_word32 ? nb::cast(to_numpy(std::move(q.scale_words), {rows, scols}))
                                      : nb::cast(to_numpy(std::move(q.scales), {rows, scols}));
  return nb::make_tuple(to_numpy(std::move(q.codes), {rows, cols}), scales, to_numpy(std::move(deq), {rows, cols}),
                        q.global_scale, q.amax);
}

// rht_seeded: the RHT signs come from rht_seed (fake_quantize's rule); otherwise from seed, as
// `fp4sim quantize` does, with TE's fixed signs for size 16.
nb::tuple quantize_py(In2<float> x, const std::string& format, const std::string& rounding, uint64_t seed,
                      uint32_t stream, const std::string& scale_rule, bool pts, bool two_d, int rht, bool rht_bf16,
                      const std::string& convention, unsigned threads, uint64_t rht_seed, bool rht_seeded) {
  const BlockFormat f = block_format(format);
  QuantOptions o = quant_options(rounding, seed, stream, scale_rule, pts, two_d, rht, rht_bf16, convention, threads);
  if (rht_seeded) {
    o.rht_seed = rht_seed;
    o.rht_seeded = true;
  }
  Quantized q;
  std::vector<float> deq;
  {
    nb::gil_scoped_release nogil;
    q = quantize(f, span_of(x), x.shape(0), x.shape(1), o);
    deq = dequantize(q);
  }
  return result_tuple(std::move(q), std::move(deq));
}

// fake_quantize into out (written in place, no copies either way): x and out are any C-contiguous
// float32 CPU arrays (numpy, or torch through DLPack) of rows * cols values; Python checks the
// arguments first for its one-line messages, this for whatever reaches it directly.
void fake_quantize_py(nb::ndarray<const float, nb::c_contig, nb::device::cpu> x,
                      nb::ndarray<float, nb::c_contig, nb::device::cpu> out, size_t rows, size_t cols,
                      const std::string& format, bool first_axis, const std::string& rounding, uint64_t sr_seed,
                      uint32_t stream, const std::string& scale_rule, bool pts, bool two_d, int rht, bool rht_bf16,
                      uint64_t rht_seed, bool rht_seeded, unsigned threads) {
  const BlockFormat f = block_format(format);
  QuantOptions o = quant_options(rounding, sr_seed, stream, scale_rule, pts, two_d, rht, rht_bf16, "te", threads);
  o.rht_seed = rht_seed;
  o.rht_seeded = rht_seeded;
  if (x.size() != rows * cols) {
    throw std::invalid_argument("x has " + std::to_string(x.size()) + " values, expected rows*cols");
  }
  if (out.size() != x.size()) {
    throw std::invalid_argument("out has " + std::to_string(out.size()) + " values, x " + std::to_string(x.size()));
  }
  nb::gil_scoped_release nogil;
  fake_quantize(f, x.data(), rows, cols, o, out.data(), first_axis ? BlockAxis::First : BlockAxis::Last);
}

template <class S>
Out<float> dequantize_py(In2<uint8_t> codes, In2<S> scales, const std::string& format, float global_scale,
                         const std::string& convention) {
  Quantized q;
  q.format = block_format(format);
  q.convention = convention_of(convention);
  q.rows = codes.shape(0);
  q.cols = codes.shape(1);
  q.global_scale = global_scale;
  const auto sc = span_of(scales);
  if constexpr (sizeof(S) == 4)
    q.scale_words.assign(sc.begin(), sc.end());
  else
    q.scales.assign(sc.begin(), sc.end());
  const auto cs = span_of(codes);
  q.codes.assign(cs.begin(), cs.end());
  std::vector<float> d;
  {
    nb::gil_scoped_release nogil;
    d = dequantize(q);
  }
  return to_numpy(std::move(d), {q.rows, q.cols});
}

// A kind configuration with `model` (validated: golden's messages as ValueError); a non-empty
// `numerics` ("key=value,...") changes the model's parameters (Model::Custom, docs/numerics.md).
MmaConfig mma_config_of(const std::string& kind, const std::string& elem_a, const std::string& elem_b,
                        const std::string& scale, int block, const std::string& model, const std::string& numerics) {
  MmaKindId kid{};
  if (!parse_mma_kind(kind, kid)) throw std::invalid_argument("unknown kind '" + kind + "'");
  MmaConfig cfg = make_mma_config(kid, elem_named(elem_a), elem_named(elem_b), elem_named(scale), block);
  const Model m = model_of(model);
  validate_mma_config(cfg, m);
  cfg.model = m;
  if (!numerics.empty()) {
    cfg.numerics = preset_numerics(cfg, m);
    parse_numerics(numerics, cfg.numerics);
    cfg.model = Model::Custom;
    validate_mma_config(cfg, cfg.model);
  }
  return cfg;
}

// D = alpha * (C + A . B^T) with one of the numerics models (mma.hpp's gemm). C arrives as FP32
// bits or as float32 (Python views uint32 bits as float32: the bits go through unchanged).
template <class S>
Out<float> mma_py(In2<uint8_t> a, In2<uint8_t> b, In2<S> sa, In2<S> sb, std::optional<In2<float>> c,
                  const std::string& kind, const std::string& elem_a, const std::string& elem_b,
                  const std::string& scale, int block, const std::string& model, const std::string& numerics,
                  float alpha, unsigned threads) {
  const MmaConfig cfg = mma_config_of(kind, elem_a, elem_b, scale, block, model, numerics);
  const size_t M = a.shape(0), K = a.shape(1), N = b.shape(0);
  std::span<const float> cs;
  if (c) cs = span_of(*c);
  std::vector<float> d;
  {
    nb::gil_scoped_release nogil;
    d = gemm(cfg, cfg.model, M, N, K, span_of(a), span_of(sa), span_of(b), span_of(sb), cs, alpha, threads);
  }
  return to_numpy(std::move(d), {M, N});
}

// N independent instructions, instruction i = row i of A with row i of B, their scales and C[i]
// (FP32 bits): golden's mma_dot per row (the model in cfg) and, with want_flags, mma_flags on its
// result — the per-instruction golden the DPI library and the line vectors give, for a whole batch
// in one call. Rows are spread over threads (0 = hardware concurrency); each row is independent.
template <class S>
nb::tuple mma_rows_py(In2<uint8_t> a, In2<uint8_t> b, In2<S> sa, In2<S> sb, In1<uint32_t> c,
                      const std::string& kind, const std::string& elem_a, const std::string& elem_b,
                      const std::string& scale, int block, const std::string& model, const std::string& numerics,
                      bool want_flags, unsigned threads) {
  const MmaConfig cfg = mma_config_of(kind, elem_a, elem_b, scale, block, model, numerics);
  const size_t n = a.shape(0), k = a.shape(1), nsc = sa.shape(1);
  // Python checks the shapes with the API's messages; this guards the raw buffers all the same.
  if (k != static_cast<size_t>(cfg.kind->k) || nsc != k / static_cast<size_t>(cfg.block) || b.shape(0) != n ||
      b.shape(1) != k || sa.shape(0) != n || sb.shape(0) != n || sb.shape(1) != nsc || c.shape(0) != n)
    throw std::invalid_argument("mma_rows: operand shapes do not match one instruction per row");
  std::vector<uint32_t> d(n);
  std::vector<uint8_t> flags(want_flags ? n : 0);
  const uint8_t *pa = a.data(), *pb = b.data();
  const S *psa = sa.data(), *psb = sb.data();
  const uint32_t* pc = c.data();
  auto run = [&](size_t lo, size_t hi) {
    uint32_t wa[8], wb[8];  // mma_dot reads 32-bit scale words; an instruction has at most 4 scales
    for (size_t i = lo; i < hi; ++i) {
      for (size_t s = 0; s < nsc; ++s) {
        wa[s] = psa[i * nsc + s];
        wb[s] = psb[i * nsc + s];
      }
      d[i] = mma_dot(cfg, pa + i * k, pb + i * k, wa, wb, pc[i]);
      if (want_flags) flags[i] = mma_flags(cfg, pa + i * k, pb + i * k, wa, wb, pc[i], d[i]);
    }
  };
  {
    nb::gil_scoped_release nogil;
    // A thread costs tens of microseconds to start: only batches of thousands are worth splitting.
    const size_t hw = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
    const size_t nt = std::min(hw, std::max<size_t>(1, n / 2048));
    if (nt <= 1) {
      run(0, n);
    } else {
      std::vector<std::thread> pool;
      const size_t per = (n + nt - 1) / nt;
      for (size_t t = 0; t < nt; ++t) pool.emplace_back(run, t * per, std::min(n, (t + 1) * per));
      for (std::thread& th : pool) th.join();
    }
  }
  nb::object f = want_flags ? nb::cast(to_numpy(std::move(flags), {n})) : nb::none();
  return nb::make_tuple(to_numpy(std::move(d), {n}), f);
}

// One instruction's factors as the MMA multiplies them, as doubles (golden's decode, exact; NaN and
// Inf codes give NaN and Inf): element values of A and B, and per element the scale applied to it
// (HiF4: E6M2 times the element's level bits, as mma_flags applies it). fp4sim.explain_mma sums
// them exactly with Python's fractions.
nb::tuple mma_factors_py(In1<uint8_t> a, In1<uint8_t> b, In1<uint32_t> sa, In1<uint32_t> sb, const std::string& kind,
                         const std::string& elem_a, const std::string& elem_b, const std::string& scale, int block) {
  MmaKindId kid{};
  if (!parse_mma_kind(kind, kid)) throw std::invalid_argument("unknown kind '" + kind + "'");
  const MmaConfig cfg = make_mma_config(kid, elem_named(elem_a), elem_named(elem_b), elem_named(scale), block);
  const size_t k = a.shape(0), nsc = k / static_cast<size_t>(cfg.block);
  if (k != static_cast<size_t>(cfg.kind->k) || b.shape(0) != k || sa.shape(0) != nsc || sb.shape(0) != nsc)
    throw std::invalid_argument("mma_factors: operand shapes do not match one instruction");
  std::vector<double> va(k), vb(k), vsa(k), vsb(k);
  auto scale_at = [&](const uint32_t* s, size_t q) {
    const uint32_t w = s[q / static_cast<size_t>(cfg.block)];
    if (cfg.kind->scale_word32)
      return std::ldexp(decode(kE6M2, hif4_e6m2(w)), hif4_level(w, static_cast<int>(q) % cfg.block));
    return decode(*cfg.scale, w & 0xFFu);
  };
  for (size_t q = 0; q < k; ++q) {
    va[q] = decode(*cfg.elem_a, a.data()[q]);
    vb[q] = decode(*cfg.elem_b, b.data()[q]);
    vsa[q] = scale_at(sa.data(), q);
    vsb[q] = scale_at(sb.data(), q);
  }
  return nb::make_tuple(to_numpy(std::move(va), {k}), to_numpy(std::move(vb), {k}), to_numpy(std::move(vsa), {k}),
                        to_numpy(std::move(vsb), {k}));
}

nb::dict gemm_py(In2<float> a, In2<float> b, std::optional<In2<float>> c, const std::string& format,
                 std::optional<std::string> model, const std::string& rounding, uint64_t seed, uint32_t stream,
                 const std::string& scale_rule, bool pts, bool two_d, int rht, bool rht_bf16,
                 const std::string& convention, unsigned threads) {
  const BlockFormat f = block_format(format);
  const QuantOptions qa = quant_options(rounding, seed, stream, scale_rule, pts, two_d, rht, rht_bf16, convention, 1);
  // As `fp4sim gemm`: B's SR bits from the next stream, the same RHT signs on both operands.
  QuantOptions qb = qa;
  qb.stream = qa.stream + 1u;
  std::optional<Model> m;
  if (model) m = model_of(*model);
  const size_t M = a.shape(0), K = a.shape(1), N = b.shape(0);
  std::span<const float> cs;
  if (c) cs = span_of(*c);
  QuantizedGemm q;
  GemmError err;
  {
    nb::gil_scoped_release nogil;
    q = quantized_gemm(f, span_of(a), qa, span_of(b), qb, cs, M, N, K, m, threads);
    err = gemm_error(q.d, reference_gemm_f64(span_of(a), span_of(b), cs, M, N, K, threads));
  }
  nb::dict r;
  r["kind"] = std::string(q.cfg.kind->name);
  r["model"] = std::string(model_name(q.model));
  r["alpha"] = q.alpha;
  r["stream_a"] = qa.stream;
  r["stream_b"] = qb.stream;
  nb::dict e;
  e["rel_err"] = err.rel_err;
  e["qsnr_db"] = err.qsnr_db;
  e["max_abs_err"] = err.max_abs;
  e["bias"] = err.bias;
  e["n"] = err.n;
  e["n_nonfinite"] = err.n_nonfinite;
  e["n_skipped"] = err.n_skipped;
  r["error"] = e;
  r["acc"] = to_numpy(std::move(q.acc), {M, N});
  r["d"] = to_numpy(std::move(q.d), {M, N});
  return r;
}

// ---- linear-layer recipes (linear.hpp), so that Python's presets are golden's ----

nb::dict recipe_dict(const LinearRecipe& r) {
  nb::dict d;
  d["name"] = r.name;
  d["format"] = std::string(recipe_format_name(r.format));
  d["pts"] = r.pts;
  d["two_d_weights"] = r.two_d_weights;
  d["sr_gradients"] = r.sr_gradients;
  d["rht_wgrad"] = r.rht_wgrad;
  d["scale_rule"] = std::string(scale_rule_name(r.scale_rule));
  d["convention"] = std::string(convention_name(r.convention));
  d["model"] = r.model ? nb::cast(std::string(model_name(*r.model))) : nb::none();
  d["seed"] = r.seed;
  return d;
}

nb::dict linear_recipe_py(const std::string& name) {
  LinearRecipe r;
  if (!linear_recipe(name, r)) throw std::invalid_argument("unknown recipe '" + name + "'");
  return recipe_dict(r);
}

nb::list ablation_recipes_py(uint64_t seed) {
  nb::list out;
  for (const LinearRecipe& r : ablation_recipes(seed)) out.append(recipe_dict(r));
  return out;
}

nb::dict quant_options_dict(const QuantOptions& o) {
  nb::dict d;
  d["rounding"] = std::string(rounding_name(o.rounding));
  d["sr_seed"] = o.seed;
  d["stream"] = o.stream;
  d["scale_rule"] = std::string(scale_rule_name(o.scale_rule));
  d["pts"] = o.pts;
  d["two_d"] = o.two_d;
  d["rht"] = o.rht;
  d["rht_bf16"] = o.rht_bf16;
  d["rht_seed"] = o.rht_seed;
  d["rht_seeded"] = o.rht_seeded;
  d["convention"] = std::string(convention_name(o.convention));
  return d;
}

// linear_operand_options for the recipe these fields describe: [fprop, dgrad, wgrad] as (A, B)
// option dicts. The recipe's one seed is split: sr_seed keys the SR bits, rht_seed the RHT signs
// (rht_seeded: seeded signs for size 16 too; otherwise TE's fixed 16-point signs). An MX block
// format other than mxfp4 (mxfp8-e4m3, ...) takes the MX recipe rules (scale rule, no PTS / 2D).
nb::list linear_operand_options_py(const std::string& format, bool pts, bool two_d_weights, bool sr_gradients,
                                   int rht_wgrad, const std::string& scale_rule, const std::string& convention,
                                   uint64_t sr_seed, uint64_t rht_seed, bool rht_seeded) {
  LinearRecipe r;
  r.name = "custom";
  if (format == "nvfp4") r.format = RecipeFormat::Nvfp4;
  else if (format == "mxfp4") r.format = RecipeFormat::Mxfp4;
  else if (format == "hif4") r.format = RecipeFormat::Hif4;
  else if (format == "bf16") r.format = RecipeFormat::Bf16;
  else {
    const BlockFormat f = block_format(format);
    if (f == BlockFormat::Nvfp4 || f == BlockFormat::Hif4) throw std::invalid_argument("unknown recipe format");
    r.format = RecipeFormat::Mxfp4;
  }
  r.pts = pts;
  r.two_d_weights = two_d_weights;
  r.sr_gradients = sr_gradients;
  r.rht_wgrad = rht_wgrad;
  if (!parse_scale_rule(scale_rule, r.scale_rule))
    throw std::invalid_argument("unknown scale rule '" + scale_rule + "'");
  r.convention = convention_of(convention);
  r.seed = sr_seed;
  validate_recipe(r);
  if (r.format == RecipeFormat::Bf16) throw std::invalid_argument("bf16 has no quantized operands");
  if (r.rht_wgrad != 0 && (r.rht_wgrad < 2 || (r.rht_wgrad & (r.rht_wgrad - 1))))
    throw std::invalid_argument("rht size must be a power of two >= 2, got " + std::to_string(r.rht_wgrad));
  auto opts = linear_operand_options(r);
  nb::list out;
  for (auto& [a, b] : opts) {
    for (QuantOptions* o : {&a, &b}) {
      o->rht_seed = rht_seed;
      o->rht_seeded = rht_seeded;
    }
    out.append(nb::make_tuple(quant_options_dict(a), quant_options_dict(b)));
  }
  return out;
}

nb::list names(std::span<const ElemFormat* const> list) {
  nb::list l;
  for (const ElemFormat* f : list)
    if (f) l.append(std::string(f->name));
  return l;
}

// The tables the Python layer checks arguments against (same data as the CLI's).
nb::list block_formats_py() {
  nb::list out;
  for (const BlockFormatInfo& fi : all_block_formats()) {
    nb::dict d;
    d["name"] = std::string(fi.name);
    d["elem"] = std::string(fi.elem->name);
    d["elem_bits"] = fi.elem->bits;
    d["scale"] = std::string(fi.scale->name);
    d["block"] = fi.block;
    d["scale_word32"] = fi.scale_word32;
    d["kind"] = std::string(mma_config_for(fi.id).kind->name);
    out.append(d);
  }
  return out;
}

nb::list mma_kinds_py() {
  nb::list out;
  for (const MmaKind& k : all_mma_kinds()) {
    nb::dict d;
    d["name"] = std::string(k.name);
    d["k"] = k.k;
    d["group"] = k.group;
    d["frac_bits"] = k.frac_bits;
    d["elems"] = names(k.elems);
    d["scales"] = names(k.scales);
    nb::list blocks;
    for (int b : k.blocks)
      if (b) blocks.append(b);
    d["blocks"] = blocks;
    d["scale_word32"] = k.scale_word32;
    d["hardware_model"] = std::string(model_name(k.hardware_model));
    out.append(d);
  }
  return out;
}

nb::dict elem_info_py(const std::string& name) {
  const ElemFormat* f = elem_named(name);
  nb::dict d;
  d["name"] = std::string(f->name);
  d["bits"] = f->bits;
  d["emin"] = f->emin();  // smallest normal exponent: MMA-Sim's exponent of a subnormal
  return d;
}

// make_mma_config / validate_mma_config, for their messages (ValueError with golden's text).
void check_mma_config_py(const std::string& kind, std::optional<std::string> elem_a, std::optional<std::string> elem_b,
                         std::optional<std::string> scale, int block, std::optional<std::string> model) {
  MmaKindId kid{};
  if (!parse_mma_kind(kind, kid)) throw std::invalid_argument("unknown kind '" + kind + "'");
  const MmaConfig cfg = make_mma_config(kid, elem_a ? elem_named(*elem_a) : nullptr,
                                        elem_b ? elem_named(*elem_b) : nullptr, scale ? elem_named(*scale) : nullptr, block);
  if (model) validate_mma_config(cfg, model_of(*model));
}

nb::tuple resolved_mma_config_py(const std::string& kind, std::optional<std::string> elem_a,
                                 std::optional<std::string> elem_b, std::optional<std::string> scale, int block) {
  MmaKindId kid{};
  if (!parse_mma_kind(kind, kid)) throw std::invalid_argument("unknown kind '" + kind + "'");
  const MmaConfig cfg = make_mma_config(kid, elem_a ? elem_named(*elem_a) : nullptr,
                                        elem_b ? elem_named(*elem_b) : nullptr, scale ? elem_named(*scale) : nullptr, block);
  return nb::make_tuple(std::string(cfg.elem_a->name), std::string(cfg.elem_b->name), std::string(cfg.scale->name),
                        cfg.block);
}

nb::tuple check_py(const std::string& suite, const std::string& results) {
  vectors::CheckReport r;
  {
    nb::gil_scoped_release nogil;
    r = vectors::check_suite(suite, results);
  }
  std::vector<std::string> lines;
  for (const vectors::CaseCheck& c : r.cases)
    for (std::string& l : vectors::format_case_check(c)) lines.push_back(std::move(l));
  return nb::make_tuple(vectors::check_report_json(r), vectors::all_equal(r), vectors::all_present_equal(r), lines);
}

// The suite names vectors.cpp knows, in enum order (suite_name answers "?" past the last one), so
// that a suite added there needs nothing here.
std::vector<std::string> suite_names_py() {
  std::vector<std::string> out;
  for (unsigned i = 0; i < 256; ++i) {
    const std::string_view n = vectors::suite_name(static_cast<vectors::Suite>(i));
    if (n == "?") break;
    out.emplace_back(n);
  }
  return out;
}

// `fp4sim vectors`: the same cases and files (cmd_vectors.cpp), with the CLI's output policy: OUT
// is checked before any work (parent folder, an existing OUT without force), staged next to it
// and renamed into place at the end, so a failure leaves nothing half-written. Arguments arrive
// checked by Python; validate_suite_options' std::invalid_argument becomes ValueError.
void vectors_py(const std::string& suite, const std::string& out, uint64_t seed, size_t size, unsigned threads,
                bool force, const std::vector<std::string>& argv, const std::string& convention) {
  vectors::Suite s{};
  if (!vectors::parse_suite(suite, s)) throw std::invalid_argument("unknown suite '" + suite + "'");
  vectors::SuiteOptions o;
  o.seed = seed;
  o.size = size;
  o.threads = threads;
  o.convention = convention_of(convention);
  vectors::validate_suite_options(s, o);
  io::OutputSet set(force);
  const size_t h = set.add_dir(std::filesystem::path(out));
  nb::gil_scoped_release nogil;
  const std::filesystem::path stage = set.dir_stage(h);
  const std::vector<vectors::VectorCase> cases = vectors::build_suite(s, o);
  vectors::write_suite_into(stage, s, o, cases, argv);
  set.commit();
}

// golden's check_convention, for its message (the library has no quantizer of f, or not with
// these options): ValueError with golden's text, which Python prefixes as the CLI does.
void check_convention_py(const std::string& convention, const std::string& format, const std::string& rounding,
                         bool two_d, const std::string& scale_rule) {
  QuantOptions o = quant_options(rounding, 0, 0, scale_rule, true, two_d, 0, false, convention, 1);
  check_convention(o.convention, block_format(format), o);
}

// The output checks `fp4sim vectors` makes before it reads its inputs (parent folder, an existing
// OUT without force): io::IoError, OSError in Python. Nothing is created.
void check_out_dir_py(const std::string& out, bool force) {
  io::OutputSet set(force);
  set.add_dir(std::filesystem::path(out));
}

// `fp4sim vectors --from` (cmd_vectors.cpp): one case from the caller's A [M, K] and B [N, K]
// (none: B = A), quantized with the options, every applicable model's expected D, written with the
// CLI's output policy (staged, renamed into place; nothing left on failure). `from` goes into the
// manifest's origin as the CLI's {"a": path, "b": path or null}.
void vectors_from_py(In2<float> a, std::optional<In2<float>> b, const std::string& format, const std::string& rounding,
                     uint64_t seed, uint32_t stream, const std::string& scale_rule, bool pts, bool two_d, int rht,
                     bool rht_bf16, const std::string& convention, const std::string& out, unsigned threads, bool force,
                     const std::vector<std::string>& argv, const std::string& a_name,
                     std::optional<std::string> b_name) {
  const BlockFormat f = block_format(format);
  const QuantOptions o =
      quant_options(rounding, seed, stream, scale_rule, pts, two_d, rht, rht_bf16, convention, threads);
  io::OutputSet set(force);
  const size_t h = set.add_dir(std::filesystem::path(out));
  const size_t M = a.shape(0), K = a.shape(1);
  std::vector<float> av(a.data(), a.data() + M * K), bv;
  size_t N = 0;
  if (b) {
    N = b->shape(0);
    bv.assign(b->data(), b->data() + N * b->shape(1));
  }
  const io::Json origin = {{"command", "vectors"},
                           {"suite", "from"},
                           {"seed", o.seed},
                           {"size", nullptr},
                           {"from", {{"a", a_name}, {"b", b_name ? io::Json(*b_name) : io::Json(nullptr)}}}};
  nb::gil_scoped_release nogil;
  const std::vector<vectors::VectorCase> cases =
      vectors::build_from_tensors(f, std::move(av), M, K, std::move(bv), N, o, threads);
  vectors::write_cases_into(set.dir_stage(h), origin, cases, argv);
  set.commit();
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "fp4sim's golden model (bit-exact block quantizers and MMA numerics); use the fp4sim package";
  m.attr("__version__") = FP4SIM_VERSION;

  // fp4sim::io::IoError / NpyError name the file at fault: OSError in Python.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const std::runtime_error& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    }
  });

  m.def("quantize", &quantize_py, "x"_a, "format"_a, "rounding"_a, "seed"_a, "stream"_a, "scale_rule"_a, "pts"_a,
        "two_d"_a, "rht"_a, "rht_bf16"_a, "convention"_a, "threads"_a, "rht_seed"_a = 0, "rht_seeded"_a = false);
  m.def("linear_recipe_names", [] {
    std::vector<std::string> v;
    for (std::string_view n : linear_recipe_names()) v.emplace_back(n);
    return v;
  });
  m.def("linear_recipe", &linear_recipe_py, "name"_a);
  m.def("ablation_recipes", &ablation_recipes_py, "seed"_a = 0);
  m.def("linear_operand_options", &linear_operand_options_py, "format"_a, "pts"_a, "two_d_weights"_a,
        "sr_gradients"_a, "rht_wgrad"_a, "scale_rule"_a, "convention"_a, "sr_seed"_a, "rht_seed"_a, "rht_seeded"_a);
  m.attr("DGRAD_SR_STREAM") = kDgradSrStream;
  m.attr("WGRAD_SR_STREAM") = kWgradSrStream;
  m.def("fake_quantize", &fake_quantize_py, "x"_a, "out"_a, "rows"_a, "cols"_a, "format"_a, "first_axis"_a,
        "rounding"_a, "sr_seed"_a, "stream"_a, "scale_rule"_a, "pts"_a, "two_d"_a, "rht"_a, "rht_bf16"_a, "rht_seed"_a,
        "rht_seeded"_a, "threads"_a);
  m.def("dequantize", &dequantize_py<uint8_t>, "codes"_a, "scales"_a, "format"_a, "global_scale"_a, "convention"_a);
  m.def("dequantize", &dequantize_py<uint32_t>, "codes"_a, "scales"_a, "format"_a, "global_scale"_a, "convention"_a);
  m.def("mma", &mma_py<uint8_t>, "a"_a, "b"_a, "sfa"_a, "sfb"_a, "c"_a.none(), "kind"_a, "elem_a"_a, "elem_b"_a,
        "scale"_a, "block"_a, "model"_a, "numerics"_a, "alpha"_a, "threads"_a);
  m.def("mma", &mma_py<uint32_t>, "a"_a, "b"_a, "sfa"_a, "sfb"_a, "c"_a.none(), "kind"_a, "elem_a"_a, "elem_b"_a,
        "scale"_a, "block"_a, "model"_a, "numerics"_a, "alpha"_a, "threads"_a);
  m.def("mma_rows", &mma_rows_py<uint8_t>, "a"_a, "b"_a, "sfa"_a, "sfb"_a, "c"_a, "kind"_a, "elem_a"_a, "elem_b"_a,
        "scale"_a, "block"_a, "model"_a, "numerics"_a, "flags"_a, "threads"_a);
  m.def("mma_rows", &mma_rows_py<uint32_t>, "a"_a, "b"_a, "sfa"_a, "sfb"_a, "c"_a, "kind"_a, "elem_a"_a, "elem_b"_a,
        "scale"_a, "block"_a, "model"_a, "numerics"_a, "flags"_a, "threads"_a);
  // Every parameter of `model` changed by `numerics`, as format_numerics writes them.
  m.def("resolve_numerics",
        [](const std::string& kind, const std::string& elem_a, const std::string& elem_b, const std::string& scale,
           int block, const std::string& model, const std::string& numerics) {
          MmaConfig cfg = mma_config_of(kind, elem_a, elem_b, scale, block, model, numerics);
          return format_numerics(cfg.model == Model::Custom ? cfg.numerics : preset_numerics(cfg, cfg.model));
        });
  m.def("mma_factors", &mma_factors_py, "a"_a, "b"_a, "sfa"_a, "sfb"_a, "kind"_a, "elem_a"_a, "elem_b"_a, "scale"_a,
        "block"_a);
  m.def("ulp_distance", &vectors::ulp_distance, "a"_a, "b"_a);
  m.def("gemm", &gemm_py, "a"_a, "b"_a, "c"_a.none(), "format"_a, "model"_a.none(), "rounding"_a, "seed"_a,
        "stream"_a, "scale_rule"_a, "pts"_a, "two_d"_a, "rht"_a, "rht_bf16"_a, "convention"_a, "threads"_a);

  m.def("pack_nibbles_rows", [](In2<uint8_t> codes) {
    const size_t rows = codes.shape(0), cols = codes.shape(1);
    return to_numpy(pack_nibbles_rows(span_of(codes), rows, cols), {rows, (cols + 1) / 2});
  });
  m.def("unpack_nibbles_rows", [](In2<uint8_t> packed, size_t cols) {
    const size_t rows = packed.shape(0);
    if (packed.shape(1) != (cols + 1) / 2)
      throw std::invalid_argument("packed has " + std::to_string(packed.shape(1)) + " bytes per row; " +
                                  std::to_string(cols) + " codes need " + std::to_string((cols + 1) / 2));
    return to_numpy(unpack_nibbles_rows(span_of(packed), rows, cols), {rows, cols});
  });
  m.def("scales_to_atom", [](In2<uint8_t> scales) {
    const size_t rows = scales.shape(0), scols = scales.shape(1);
    return to_numpy(scales_to_atom(span_of(scales), rows, scols), {scale_atom_bytes(rows, scols)});
  });
  m.def("scales_from_atom", [](In1<uint8_t> atom, size_t rows, size_t scols) {
    if (atom.shape(0) != scale_atom_bytes(rows, scols))
      throw std::invalid_argument("atom has " + std::to_string(atom.shape(0)) + " bytes; a [" + std::to_string(rows) +
                                  ", " + std::to_string(scols) + "] scale matrix needs " +
                                  std::to_string(scale_atom_bytes(rows, scols)));
    return to_numpy(scales_from_atom({atom.data(), atom.shape(0)}, rows, scols), {rows, scols});
  });

  m.def("block_formats", &block_formats_py);
  m.def("mma_kinds", &mma_kinds_py);
  m.def("elem_info", &elem_info_py);
  m.def("check_mma_config", &check_mma_config_py, "kind"_a, "elem_a"_a.none(), "elem_b"_a.none(), "scale"_a.none(),
        "block"_a, "model"_a.none());
  m.def("resolved_mma_config", &resolved_mma_config_py, "kind"_a, "elem_a"_a.none(), "elem_b"_a.none(),
        "scale"_a.none(), "block"_a);
  m.def("check_suite", &check_py, "suite"_a, "results"_a);
  m.def("suite_names", &suite_names_py);
  m.def("check_convention", &check_convention_py, "convention"_a, "format"_a, "rounding"_a, "two_d"_a, "scale_rule"_a);
  m.def("check_out_dir", &check_out_dir_py, "out"_a, "force"_a);
  m.def("vectors_from", &vectors_from_py, "a"_a, "b"_a.none(), "format"_a, "rounding"_a, "seed"_a, "stream"_a,
        "scale_rule"_a, "pts"_a, "two_d"_a, "rht"_a, "rht_bf16"_a, "convention"_a, "out"_a, "threads"_a, "force"_a,
        "argv"_a, "a_name"_a, "b_name"_a.none());
  m.def("vectors", &vectors_py, "suite"_a, "out"_a, "seed"_a, "size"_a, "threads"_a, "force"_a, "argv"_a,
        "convention"_a);
}
