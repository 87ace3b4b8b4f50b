// Golden vector suites: generation, the on-disk layout, reading with integrity checks, replay.
// Layout and case classes: docs/vectors.md.
#include "fp4sim/io/vectors.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>

#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/crc32.hpp"
#include "fp4sim/io/npy.hpp"
#include "fp4sim/layout.hpp"
#include "fp4sim/linear.hpp"
#include "fp4sim/quant.hpp"
#include "fp4sim/synth.hpp"
#include "vectors/vectors_internal.hpp"

namespace fp4sim::vectors {

namespace fs = std::filesystem;
using io::Json;

// ---------------------------------------------------------------------------------------------
// Names

std::string_view suite_name(Suite s) {
  switch (s) {
    case Suite::Smoke: return "smoke";
    case Suite::Corners: return "corners";
    case Suite::Random: return "random";
    case Suite::Llm: return "llm";
    case Suite::Quant: return "quant";
  }
  return "?";
}

bool parse_suite(std::string_view name, Suite& out) {
  for (Suite s : {Suite::Smoke, Suite::Corners, Suite::Random, Suite::Llm, Suite::Quant}) {
    if (name == suite_name(s)) {
      out = s;
      return true;
    }
  }
  return false;
}

namespace {

constexpr size_t kRandomDefault = 16, kRandomMax = 1024;
constexpr size_t kLlmDefault = 128, kLlmMax = 4096;
constexpr uint32_t kNaNBits = 0x7FFFFFFFu;

bool is_four_bit(const ElemFormat& f) { return f.bits == 4; }

using io::hex32;

}  // namespace

void validate_suite_options(Suite s, const SuiteOptions& o) {
  if (o.convention != Convention::Te && s != Suite::Quant)
    throw std::invalid_argument("suite " + std::string(suite_name(s)) +
                                " is made of codes: only the quant suite takes a convention other than te");
  switch (s) {
    case Suite::Smoke:
    case Suite::Corners:
    case Suite::Quant:
      if (o.size != 0)
        throw std::invalid_argument("suite " + std::string(suite_name(s)) + " has fixed shapes and takes no size");
      break;
    case Suite::Random:
      if (o.size > kRandomMax)
        throw std::invalid_argument("random: size " + std::to_string(o.size) + " exceeds " + std::to_string(kRandomMax));
      break;
    case Suite::Llm:
      if (o.size != 0 && (o.size % 64 != 0 || o.size > kLlmMax))
        throw std::invalid_argument("llm: size (tokens) must be a multiple of 64 up to " + std::to_string(kLlmMax) +
                                    ", got " + std::to_string(o.size));
      break;
  }
}

std::vector<Model> applicable_models(const MmaConfig& cfg) {
  return {cfg.kind->hardware_model, Model::Exact, Model::Fp32Seq};
}

std::string config_tag(const MmaConfig& cfg) {
  std::string t(cfg.kind->name);
  switch (cfg.kind->id) {
    case MmaKindId::Mxf4Nvf4:
      t += "-" + std::string(cfg.scale->name) + "-b" + std::to_string(cfg.block);
      break;
    case MmaKindId::Mxf8f6f4:
      t += "-" + std::string(cfg.elem_a->name);
      if (cfg.elem_b->name != cfg.elem_a->name) t += "x" + std::string(cfg.elem_b->name);
      break;
    default:
      break;
  }
  return t;
}

// ---------------------------------------------------------------------------------------------
// Building cases

namespace {

// Code of an exactly representable value (saturating encode, then checked).
uint32_t code_of(const ElemFormat& f, double v) {
  const uint32_t c = encode(f, v, Rounding::Rne, true);
  if (decode(f, c) != v) throw std::logic_error("vectors: " + std::string(f.name) + " cannot hold " + std::to_string(v));
  return c;
}

// Smallest positive code (every format in the tables: code 1, a power of two, or the first
// nonzero code of the zero-less scale formats).
uint32_t min_pos_code(const ElemFormat& f) {
  for (uint32_t c = 0; c <= f.mag_mask(); ++c) {
    const double v = decode(f, c);
    if (std::isfinite(v) && v > 0) return c;
  }
  throw std::logic_error("vectors: no positive code");
}

// Largest power of two the format holds.
double max_pow2(const ElemFormat& f) { return std::exp2(std::floor(std::log2(decode(f, f.max_code())))); }

std::vector<MmaConfig> corner_configs() {
  std::vector<MmaConfig> v;
  v.push_back(make_mma_config(MmaKindId::Mxf4));
  v.push_back(make_mma_config(MmaKindId::Mxf4Nvf4, nullptr, nullptr, &kUE4M3, 16));
  v.push_back(make_mma_config(MmaKindId::Mxf4Nvf4, nullptr, nullptr, &kUE8M0, 32));
  for (const ElemFormat* e : {&kE4M3, &kE5M2, &kE2M3, &kE3M2, &kE2M1})
    v.push_back(make_mma_config(MmaKindId::Mxf8f6f4, e, e));
  v.push_back(make_mma_config(MmaKindId::Hif4));
  return v;
}

std::vector<MmaConfig> random_configs() {
  std::vector<MmaConfig> v = corner_configs();
  // The other two scale / block pairs MMA-Sim accepts for mxf4nvf4, and mixed operand types.
  v.push_back(make_mma_config(MmaKindId::Mxf4Nvf4, nullptr, nullptr, &kUE4M3, 32));
  v.push_back(make_mma_config(MmaKindId::Mxf4Nvf4, nullptr, nullptr, &kUE8M0, 16));
  v.push_back(make_mma_config(MmaKindId::Mxf8f6f4, &kE4M3, &kE5M2));
  v.push_back(make_mma_config(MmaKindId::Mxf8f6f4, &kE2M1, &kE4M3));
  v.push_back(make_mma_config(MmaKindId::Mxf8f6f4, &kE3M2, &kE2M3));
  return v;
}

// Rows of A (each with its own scales and C value) against rows of B; C[m][n] = c of A row m.
class Builder {
 public:
  Builder(const MmaConfig& cfg, size_t instructions = 1)
      : cfg_(cfg), K_(static_cast<size_t>(cfg.kind->k) * instructions), nblk_(K_ / static_cast<size_t>(cfg.block)) {}

  const MmaConfig& cfg() const { return cfg_; }
  size_t K() const { return K_; }
  size_t kI() const { return static_cast<size_t>(cfg_.kind->k); }
  size_t nblk() const { return nblk_; }
  const ElemFormat& ea() const { return *cfg_.elem_a; }
  const ElemFormat& eb() const { return *cfg_.elem_b; }
  const ElemFormat& sf() const { return *cfg_.scale; }

  std::vector<uint8_t> zeros() const { return std::vector<uint8_t>(K_, 0); }
  std::vector<uint8_t> fill(uint32_t code) const { return std::vector<uint8_t>(K_, static_cast<uint8_t>(code)); }
  std::vector<uint32_t> scales(uint32_t code) const { return std::vector<uint32_t>(nblk_, code); }
  // Scale codes: value 2^e, 1, the NaN code, the largest finite, the smallest positive.
  uint32_t s_pow2(int e) const { return code_of(sf(), std::ldexp(1.0, e)); }
  uint32_t s_unit() const { return s_pow2(0); }
  uint32_t s_nan() const { return sf().nan_code(); }
  uint32_t s_max() const { return sf().max_code(); }
  uint32_t s_min() const { return min_pos_code(sf()); }
  uint32_t a_code(double v) const { return code_of(ea(), v); }
  uint32_t b_code(double v) const { return code_of(eb(), v); }

  void a(std::vector<uint8_t> codes, std::vector<uint32_t> sc, float c, std::string note) {
    a_codes_.push_back(std::move(codes));
    a_scales_.push_back(std::move(sc));
    c_.push_back(c);
    a_notes_.push_back(std::move(note));
  }
  void b(std::vector<uint8_t> codes, std::vector<uint32_t> sc, std::string note) {
    b_codes_.push_back(std::move(codes));
    b_scales_.push_back(std::move(sc));
    b_notes_.push_back(std::move(note));
  }
  // B row of ones (element 1.0 everywhere) with unit scales: the common partner of A rows.
  void b_ones(std::string note = "B = 1 everywhere, unit scales") { b(fill(b_code(1.0)), scales(s_unit()), std::move(note)); }

  VectorCase build(std::string cls, std::string description) const {
    VectorCase v;
    v.cls = std::move(cls);
    v.description = std::move(description);
    v.cfg = cfg_;
    v.M = a_codes_.size();
    v.N = b_codes_.size();
    v.K = K_;
    for (size_t m = 0; m < v.M; ++m) {
      v.a.codes.insert(v.a.codes.end(), a_codes_[m].begin(), a_codes_[m].end());
      v.a.scales.insert(v.a.scales.end(), a_scales_[m].begin(), a_scales_[m].end());
    }
    for (size_t n = 0; n < v.N; ++n) {
      v.b.codes.insert(v.b.codes.end(), b_codes_[n].begin(), b_codes_[n].end());
      v.b.scales.insert(v.b.scales.end(), b_scales_[n].begin(), b_scales_[n].end());
    }
    v.c.resize(v.M * v.N);
    for (size_t m = 0; m < v.M; ++m)
      for (size_t n = 0; n < v.N; ++n) v.c[m * v.N + n] = c_[m];
    v.row_notes = a_notes_;
    v.col_notes = b_notes_;
    return v;
  }

 private:
  MmaConfig cfg_;
  size_t K_, nblk_;
  std::vector<std::vector<uint8_t>> a_codes_, b_codes_;
  std::vector<std::vector<uint32_t>> a_scales_, b_scales_;
  std::vector<float> c_;
  std::vector<std::string> a_notes_, b_notes_;
};

std::string p2(int e) { return "2^" + std::to_string(e); }
float f2(int e) { return std::ldexp(1.0f, e); }
constexpr float kInf = std::numeric_limits<float>::infinity();

bool is_hif4(const MmaConfig& c) { return c.kind->id == MmaKindId::Hif4; }
bool has_ue4m3(const MmaConfig& c) { return c.scale->name == kUE4M3.name; }

// --- the corner classes (docs/vectors.md lists what each row shows) ---

VectorCase nan_scale(const MmaConfig& cfg) {
  Builder b(cfg);
  b.b_ones();
  auto sb = b.scales(b.s_unit());
  sb[0] = b.s_nan();
  b.b(b.fill(b.b_code(1.0)), sb, "B = 1, SB[0] = NaN");
  const uint32_t one = b.a_code(1.0);
  auto sa = b.scales(b.s_unit());
  sa[0] = b.s_nan();
  b.a(b.fill(one), sa, 0.0f, "A = 1, SA[0] = NaN");
  sa = b.scales(b.s_unit());
  sa.back() = b.s_nan();
  b.a(b.zeros(), sa, 1.0f, "A = 0, SA[last] = NaN, C = 1 (NaN although every product is 0)");
  b.a(b.fill(one), b.scales(b.s_unit()), 0.0f, "A = 1, unit scales (NaN only through SB in column 1)");
  if (has_ue4m3(cfg)) {
    sa = b.scales(b.s_unit());
    sa[0] = 0xFF;
    b.a(b.fill(one), sa, 0.0f, "A = 1, SA[0] = 0xFF (UE4M3 NaN with the sign bit)");
  }
  if (is_hif4(cfg)) b.a(b.fill(one), b.scales(0xFFFFFFFFu), 0.0f, "A = 1, SA = 0xFFFFFFFF (NaN E6M2, every level bit set)");
  return b.build("nan_scale", "NaN block scale codes on either operand");
}

VectorCase zero_scale(const MmaConfig& cfg) {  // UE4M3 only: the one scale type with a zero
  Builder b(cfg);
  b.b_ones();
  const uint32_t one = b.a_code(1.0);
  auto sa = b.scales(b.s_unit());
  sa[0] = 0x00;
  b.a(b.fill(one), sa, 0.0f, "A = 1, SA[0] = 0x00 (zero: that block contributes 0)");
  sa[0] = 0x80;
  b.a(b.fill(one), sa, 0.0f, "A = 1, SA[0] = 0x80 (zero with the sign bit, which is ignored)");
  sa[0] = 0xB8;
  b.a(b.fill(one), sa, 0.0f, "A = 1, SA[0] = 0xB8 (1.0 with the sign bit: reads as 1.0)");
  sa[0] = 0x01;
  b.a(b.fill(one), sa, 0.0f, "A = 1, SA[0] = 0x01 (2^-9, subnormal)");
  b.a(b.fill(one), b.scales(0x00), f2(-100), "A = 1, every SA zero, C = 2^-100 (zero-scale groups align at 2^-126)");
  b.a(b.fill(one), b.scales(0x00), 0.0f, "A = 1, every SA zero, C = 0");
  return b.build("zero_scale", "UE4M3 zero, negative-zero, sign-bit and subnormal scale codes");
}

VectorCase huge_scale(const MmaConfig& cfg) {
  Builder b(cfg);
  b.b_ones();
  b.b(b.fill(b.b_code(1.0)), b.scales(b.s_max()), "B = 1, SB = largest finite scale");
  const uint32_t mx = b.ea().max_code(), one = b.a_code(1.0);
  b.a(b.fill(mx), b.scales(b.s_max()), 0.0f, "A = largest element, SA = largest scale");
  std::vector<uint8_t> alt = b.fill(mx);
  for (size_t k = 1; k < b.K(); k += 2) alt[k] = static_cast<uint8_t>(mx | b.ea().sign_bit());
  b.a(alt, b.scales(b.s_max()), 0.0f, "A = +max, -max alternating, SA = largest scale (products cancel)");
  b.a(b.fill(one), b.scales(b.s_max()), -1.0f, "A = 1, SA = largest scale, C = -1");
  if (is_hif4(cfg))
    b.a(b.fill(mx), b.scales(0xFFFFFF00u | b.s_max()), 0.0f, "A = 1.75, SA = 0xFFFFFFFE (largest E6M2, every level bit set)");
  return b.build("huge_scale", "largest finite scale codes: overflow to Inf where the product range allows");
}

VectorCase tiny_scale(const MmaConfig& cfg) {
  Builder b(cfg);
  b.b_ones();
  b.b(b.fill(b.b_code(1.0)), b.scales(b.s_min()), "B = 1, SB = smallest scale");
  const uint32_t one = b.a_code(1.0);
  b.a(b.fill(one), b.scales(b.s_min()), 0.0f, "A = 1, SA = smallest scale, C = 0");
  b.a(b.fill(one), b.scales(b.s_min()), 1.0f, "A = 1, SA = smallest scale, C = 1");
  b.a(b.fill(b.ea().max_code()), b.scales(b.s_min()), 0.0f, "A = largest element, SA = smallest scale");
  b.a(b.fill(min_pos_code(b.ea())), b.scales(b.s_min()), 0.0f, "A = smallest element, SA = smallest scale");
  return b.build("tiny_scale", "smallest scale codes: results underflow toward FP32 subnormals and zero");
}

VectorCase c_dominating(const MmaConfig& cfg) {
  Builder b(cfg);
  b.b_ones();
  const uint32_t one = b.a_code(1.0), mx = b.ea().max_code();
  b.a(b.fill(one), b.scales(b.s_unit()), f2(40), "A = 1, C = 2^40 (products far below C's last place)");
  b.a(b.fill(one), b.scales(b.s_unit()), -f2(40), "A = 1, C = -2^40");
  b.a(b.fill(one), b.scales(b.s_unit()), f2(24), "A = 1, C = 2^24 (products still visible)");
  b.a(b.fill(mx), b.scales(b.s_unit()), std::numeric_limits<float>::max(), "A = largest element, C = FLT_MAX");
  b.a(b.fill(mx | b.ea().sign_bit()), b.scales(b.s_unit()), -std::numeric_limits<float>::max(),
      "A = -largest element, C = -FLT_MAX");
  return b.build("c_dominating", "C far larger than the sum of products");
}

VectorCase exact_cancellation(const MmaConfig& cfg) {
  Builder b(cfg);
  b.b_ones();
  const uint32_t one = b.a_code(1.0), neg = one | b.ea().sign_bit();
  std::vector<uint8_t> half = b.fill(one);
  for (size_t k = b.K() / 2; k < b.K(); ++k) half[k] = static_cast<uint8_t>(neg);
  b.a(half, b.scales(b.s_unit()), 0.0f, "A = +1 (first half), -1 (second half), C = 0: sum exactly 0");
  b.a(half, b.scales(b.s_unit()), -0.0f, "same products, C = -0");
  b.a(b.fill(one), b.scales(b.s_unit()), -static_cast<float>(b.K()), "A = 1, C = -K: products cancel C exactly");
  b.a(b.fill(b.ea().sign_bit()), b.scales(b.s_unit()), -0.0f, "A = -0 everywhere, C = -0: every term is -0");
  if (b.nblk() >= 2) {
    // +1 in block 0 (scale 2) against two -1 in block 1 (scale 1): cancellation across scales.
    std::vector<uint8_t> x = b.zeros();
    x[0] = static_cast<uint8_t>(one);
    x[static_cast<size_t>(cfg.block)] = x[static_cast<size_t>(cfg.block) + 1] = static_cast<uint8_t>(neg);
    auto sa = b.scales(b.s_unit());
    sa[0] = b.s_pow2(1);
    b.a(x, sa, 0.0f, "A[0] = 1 with SA[0] = 2, two -1 in block 1 with SA[1] = 1: cancel across blocks");
  }
  return b.build("exact_cancellation", "products and C that sum to exactly zero");
}

// Blackwell: every term is truncated toward zero at 2^(max_e - F), F = 35 (K = 64 kinds) or 25.
VectorCase trunc_boundary(const MmaConfig& cfg) {
  Builder b(cfg);
  const int F = cfg.kind->frac_bits;
  b.b_ones();
  const uint32_t one = b.a_code(1.0), neg = one | b.ea().sign_bit();
  // +1 and -1 in the same group: the products cancel and the largest exponent is 0.
  std::vector<uint8_t> pm = b.zeros();
  pm[0] = static_cast<uint8_t>(one);
  pm[1] = static_cast<uint8_t>(neg);
  const auto unit = b.scales(b.s_unit());
  b.a(pm, unit, f2(-F), "A = +1, -1; C = " + p2(-F) + ": on the boundary, kept");
  b.a(pm, unit, f2(-F - 1), "A = +1, -1; C = " + p2(-F - 1) + ": below it, truncated to +0");
  b.a(pm, unit, 3 * f2(-F - 1), "A = +1, -1; C = 3*" + p2(-F - 1) + ": truncated to " + p2(-F));
  b.a(pm, unit, -3 * f2(-F - 1), "A = +1, -1; C = -3*" + p2(-F - 1) + ": truncated toward zero to -" + p2(-F));
  b.a(b.zeros(), unit, f2(-F - 1), "A = 0, C = " + p2(-F - 1) + " (zero products still carry an exponent)");
  if (cfg.kind->group < cfg.kind->k && cfg.block == 32 && cfg.scale->name == kUE8M0.name) {
    // Product terms on the boundary: +1 in group 0, -1 in group 1 (block 0, scale 1), one product
    // in group 2 (block 1) whose scale puts it at 2^-F, 2^-(F+1), 1.5*2^-F.
    std::vector<uint8_t> x = b.zeros();
    x[0] = static_cast<uint8_t>(one);
    x[16] = static_cast<uint8_t>(neg);
    x[32] = static_cast<uint8_t>(one);
    auto sa = b.scales(b.s_unit());
    sa[1] = b.s_pow2(-F);
    b.a(x, sa, 0.0f, "A = +1 (group 0), -1 (group 1), 1 (group 2, SA[1] = " + p2(-F) + "): term on the boundary");
    sa[1] = b.s_pow2(-F - 1);
    b.a(x, sa, 0.0f, "same with SA[1] = " + p2(-F - 1) + ": term truncated to 0");
    x[32] = static_cast<uint8_t>(b.a_code(3.0));
    b.a(x, sa, 0.0f, "A[32] = 3, SA[1] = " + p2(-F - 1) + ": term 1.5*" + p2(-F) + " truncated to " + p2(-F));
  }
  if (cfg.kind->group == cfg.kind->k) {
    // One fused sum (mxf8f6f4): put a product at 2^(e_P - F) below a cancelling pair +-P, using the
    // smallest B element; only where the element ranges reach that far (FP8).
    const double bmin = decode(b.eb(), min_pos_code(b.eb()));
    for (double P = max_pow2(b.ea()); P >= 1.0; P /= 2) {
      const double x1 = std::ldexp(P, -F) / bmin, x2 = x1 / 2;
      const uint32_t c1 = encode(b.ea(), x1, Rounding::Rne, true), c2 = encode(b.ea(), x2, Rounding::Rne, true);
      if (decode(b.ea(), c1) != x1 || decode(b.ea(), c2) != x2 || x2 <= 0) continue;
      std::vector<uint8_t> bs = b.fill(b.b_code(1.0));
      bs[2] = static_cast<uint8_t>(min_pos_code(b.eb()));
      b.b(bs, b.scales(b.s_unit()), "B = 1, B[2] = smallest element");
      std::vector<uint8_t> x = b.zeros();
      x[0] = static_cast<uint8_t>(b.a_code(P));
      x[1] = static_cast<uint8_t>(b.a_code(P) | b.ea().sign_bit());
      x[2] = static_cast<uint8_t>(c1);
      char note[160];
      std::snprintf(note, sizeof note, "A = +%g, -%g, %g: with B[2] (column 1) the product is 2^(e_P - %d), kept", P, P, x1, F);
      b.a(x, b.scales(b.s_unit()), 0.0f, note);
      x[2] = static_cast<uint8_t>(c2);
      std::snprintf(note, sizeof note, "A = +%g, -%g, %g: with B[2] (column 1) the product is 2^(e_P - %d), truncated", P, P, x2, F + 1);
      b.a(x, b.scales(b.s_unit()), 0.0f, note);
      break;
    }
  }
  return b.build("trunc_boundary", "sums landing exactly on the " + std::to_string(F) +
                                       "-bit alignment truncation boundary, just below and between");
}

// ascend-hif4 has no alignment truncation; its rounding point is the FP32 RN after each group.
VectorCase rn_boundary(const MmaConfig& cfg) {
  Builder b(cfg);
  b.b_ones();
  std::vector<uint8_t> x = b.zeros();
  x[0] = static_cast<uint8_t>(b.a_code(1.0));
  b.a(x, b.scales(b.s_pow2(-24)), 1.0f, "C = 1, one product 2^-24: a tie, to even gives 1");
  x[0] = static_cast<uint8_t>(b.a_code(0.75));
  b.a(x, b.scales(b.s_pow2(-22)), 1.0f, "C = 1, product 0.75*2^-22 = 3*2^-24: a tie, to even gives 1 + 2^-22");
  x[0] = static_cast<uint8_t>(b.a_code(1.25));
  b.a(x, b.scales(b.s_pow2(-24)), 1.0f, "C = 1, product 1.25*2^-24: above the tie, 1 + 2^-23");
  x[0] = static_cast<uint8_t>(b.a_code(1.0) | b.ea().sign_bit());
  b.a(x, b.scales(b.s_pow2(-24)), -1.0f, "C = -1, product -2^-24: a tie, to even gives -1");
  return b.build("rn_boundary", "group sums landing on FP32 round-to-nearest ties of the accumulator");
}

VectorCase k_chaining(const MmaConfig& cfg) {
  Builder b(cfg, 2);
  b.b_ones();
  const uint32_t lo = min_pos_code(b.ea()), one = b.a_code(1.0);
  const int p = static_cast<int>(std::log2(decode(b.ea(), lo)));  // the smallest product, 2^p
  const auto unit = b.scales(b.s_unit());
  std::vector<uint8_t> x = b.zeros();
  x[0] = x[b.kI()] = static_cast<uint8_t>(lo);
  b.a(x, unit, f2(p + 24), "C = " + p2(p + 24) + ", one product " + p2(p) +
                               " per instruction: each instruction drops it (exact: C + " + p2(p + 1) + ")");
  x[b.kI()] = 0;
  x[1] = static_cast<uint8_t>(lo);
  b.a(x, unit, f2(p + 24), "C = " + p2(p + 24) + ", two products " + p2(p) + " in instruction 1: kept");
  x = b.zeros();
  x[0] = static_cast<uint8_t>(one);
  x[b.kI()] = static_cast<uint8_t>(one | b.ea().sign_bit());
  b.a(x, unit, 0.0f, "instruction 1 gives +1, instruction 2 adds -1: +0");
  b.a(x, unit, -0.0f, "same with C = -0");
  return b.build("k_chaining", "two instructions along K: D of the first is C of the second");
}

VectorCase subnormal_result(const MmaConfig& cfg) {
  Builder b(cfg);
  b.b_ones();
  const uint32_t one = b.a_code(1.0), neg = one | b.ea().sign_bit();
  const auto smin = b.scales(b.s_min());
  b.a(b.zeros(), smin, f2(-130), "A = 0, SA = smallest scale, C = 2^-130 (subnormal)");
  b.a(b.zeros(), b.scales(b.s_unit()), f2(-130), "A = 0, unit scales, C = 2^-130 (zero products with scale 1)");
  if (b.sf().has_zero())
    b.a(b.fill(one), b.scales(0x00), f2(-130), "A = 1, every SA zero, C = 2^-130 (zero-scale groups align at 2^-126)");
  std::vector<uint8_t> x = b.zeros();
  x[0] = static_cast<uint8_t>(min_pos_code(b.ea()));
  b.a(x, smin, 0.0f, "smallest element times smallest scale, C = 0");
  x[0] = static_cast<uint8_t>(one);
  x[1] = static_cast<uint8_t>(neg);
  b.a(x, smin, f2(-149), "A = +1, -1, SA = smallest scale, C = 2^-149 (smallest subnormal)");
  b.a(x, smin, -3 * f2(-149), "same with C = -3*2^-149");
  x[1] = 0;
  b.a(x, smin, -f2(-127), "A[0] = 1, SA = smallest scale, C = -2^-127");
  return b.build("subnormal_result", "results in the FP32 subnormal range");
}

VectorCase inf_c(const MmaConfig& cfg) {
  Builder b(cfg);
  b.b_ones();
  const uint32_t one = b.a_code(1.0);
  const auto unit = b.scales(b.s_unit());
  b.a(b.fill(one), unit, kInf, "A = 1, C = +Inf");
  b.a(b.fill(one), unit, -kInf, "A = 1, C = -Inf");
  b.a(b.fill(one), unit, std::bit_cast<float>(0x7FC00000u), "A = 1, C = NaN (0x7FC00000)");
  b.a(b.fill(one), unit, std::bit_cast<float>(0xFFC00001u), "A = 1, C = NaN with sign and payload (0xFFC00001)");
  auto sa = b.scales(b.s_unit());
  sa[0] = b.s_nan();
  b.a(b.fill(one), sa, kInf, "A = 1, SA[0] = NaN, C = +Inf");
  b.a(b.fill(b.ea().max_code()), b.scales(b.s_max()), -kInf, "A = largest, SA = largest, C = -Inf");
  return b.build("inf_c", "infinite and NaN accumulator inputs");
}

VectorCase special_elements(const MmaConfig& cfg) {  // e4m3 / e5m2: the element types with NaN (and Inf)
  Builder b(cfg);
  b.b_ones();
  std::vector<uint8_t> bz = b.fill(b.b_code(1.0));
  bz[0] = 0;
  b.b(bz, b.scales(b.s_unit()), "B = 1, B[0] = 0");
  const ElemFormat& f = b.ea();
  const uint32_t one = b.a_code(1.0);
  std::vector<uint8_t> x = b.fill(one);
  x[0] = static_cast<uint8_t>(f.nan_code());
  b.a(x, b.scales(b.s_unit()), 0.0f, "A[0] = NaN");
  x[0] = static_cast<uint8_t>(f.nan_code() | f.sign_bit());
  b.a(x, b.scales(b.s_unit()), 0.0f, "A[0] = -NaN");
  if (f.has_inf()) {
    x[0] = static_cast<uint8_t>(f.inf_code());
    b.a(x, b.scales(b.s_unit()), 0.0f, "A[0] = +Inf (column 1: Inf * 0)");
    x[1] = static_cast<uint8_t>(f.inf_code() | f.sign_bit());
    b.a(x, b.scales(b.s_unit()), 0.0f, "A[0] = +Inf, A[1] = -Inf");
    x[0] = static_cast<uint8_t>(one);
    b.a(x, b.scales(b.s_unit()), kInf, "A[1] = -Inf, C = +Inf");
    b.a(x, b.scales(b.s_unit()), -kInf, "A[1] = -Inf, C = -Inf");
  }
  return b.build("special_elements", "NaN and Inf element codes");
}

// mxf8f6f4, every element type here has subnormals: the smallest subnormal s = 2^(e - m) sits at the
// exponent e = 1 - bias of the smallest normal (SPEC §4: E4M3 subnormals have exponent -6). Times
// B = 1 under unit scales the product aligns at 2^e, so the 25-bit window ends at 2^(e - 25) and
// C = -3*2^(e - 27) (0.75 of the last place) is truncated away: D = s. A kernel that aligns
// subnormals one binade lower (2^(e - 1)) keeps -2^(e - 26) of C. A[1] = 1 against B = 1: the
// product 1 aligns at 2^0 and C vanishes (D = 1); A[0] against B[1]: every product has a zero
// element (exponent -126), C alone sets the alignment and D = C.
VectorCase subnormal_elements(const MmaConfig& cfg) {
  Builder b(cfg);
  const uint32_t sa = min_pos_code(b.ea()), sb = min_pos_code(b.eb());
  const int e = std::ilogb(decode(b.ea(), sa)) + static_cast<int>(b.ea().mbits);
  if (cfg.elem_a != cfg.elem_b || sa >= (1u << b.ea().mbits))
    throw std::logic_error("vectors: subnormal_elements needs one element type with subnormals");
  const float c = -3.0f * f2(e - 27);
  const auto unit = b.scales(b.s_unit());
  b.b_ones();
  std::vector<uint8_t> x = b.zeros();
  x[1] = static_cast<uint8_t>(sb);
  b.b(x, unit, "B[1] = smallest subnormal, unit scales");
  const std::string what = "smallest subnormal " + p2(std::ilogb(decode(b.ea(), sa))) + " (exponent " +
                           std::to_string(e) + "), C = -3*" + p2(e - 27) + ": below the window of 2^" +
                           std::to_string(e) + ", truncated";
  x = b.zeros();
  x[0] = static_cast<uint8_t>(sa);
  b.a(x, unit, c, "A[0] = " + what);
  x = b.zeros();
  x[1] = static_cast<uint8_t>(b.a_code(1.0));
  b.a(x, unit, c, "A[1] = 1 (column 1: times B's subnormal), C = -3*" + p2(e - 27));
  return b.build("subnormal_elements", "subnormal elements align at the exponent of the smallest normal");
}

// Forward: random codes (below).
VectorCase random_case(const MmaConfig& cfg, size_t M, size_t N, size_t instructions, uint64_t seed, std::string cls,
                       std::string desc);

// Value of element k of a row (codes, scales) as the MMA reads it: element x its scale(s), exactly.
double elem_value(const MmaConfig& cfg, const ElemFormat& e, const uint8_t* codes, const uint32_t* scales, size_t k) {
  const double x = decode(e, codes[k]);
  if (cfg.kind->scale_word32) {
    const uint32_t w = scales[k / 64];
    return x * decode(kE6M2, w & 0xFF) * std::ldexp(1.0, hif4_level(w, static_cast<int>(k % 64)));
  }
  const uint32_t sc = scales[k / static_cast<size_t>(cfg.block)];
  return x * decode(*cfg.scale, has_ue4m3(cfg) ? (sc & 0x7F) : sc);
}

// How many finite outputs of v's hardware model change when alpha is applied before the accumulator's
// rounding: D' = RN(alpha * acc) with acc the long-double sum of the products and C (a kernel that
// scales the products or the unrounded sum), against the expected RN(alpha * D_model).
size_t alpha_early_differences(const VectorCase& v) {
  size_t diff = 0;
  for (size_t m = 0; m < v.M; ++m)
    for (size_t n = 0; n < v.N; ++n) {
      long double acc = v.c[m * v.N + n];
      for (size_t k = 0; k < v.K; ++k)
        acc += static_cast<long double>(elem_value(v.cfg, *v.cfg.elem_a, &v.a.codes[m * v.K], &v.a.scales[m * (v.K / static_cast<size_t>(v.cfg.block))], k)) *
               elem_value(v.cfg, *v.cfg.elem_b, &v.b.codes[n * v.K], &v.b.scales[n * (v.K / static_cast<size_t>(v.cfg.block))], k);
      const float early = static_cast<float>(static_cast<long double>(v.alpha) * acc);
      const float want = v.expected[0][m * v.N + n];
      if (!std::isnan(early) && !std::isnan(want) && std::bit_cast<uint32_t>(early) != std::bit_cast<uint32_t>(want)) ++diff;
    }
  return diff;
}

// Non-unit alpha: random codes under four epilogue scales — negative and not a power of two; one
// that overflows about half the outputs to Inf and one that makes them FP32 subnormals (both set from
// the median exponent of the case's D, so that some outputs stay on the other side); a product of two
// NVFP4 global scales. The codes' seed moves on until applying alpha early changes an output.
std::vector<VectorCase> alpha_cases(const MmaConfig& cfg) {
  static const char* const kWhat[] = {"alpha = -RN(1/3): negative, not a power of two",
                                      "alpha = 1.5 * 2^(127 - e): outputs above the median exponent e overflow to Inf",
                                      "alpha = 1.25 * 2^(-133 - e): FP32 subnormal outputs",
                                      "alpha = RN(RN(1/2688) * RN(3/2688)): a product of NVFP4 global scales"};
  std::vector<VectorCase> out;
  for (uint64_t i = 0; i < std::size(kWhat); ++i) {
    for (uint64_t seed = i;; seed += std::size(kWhat)) {
      if (seed > 64 * std::size(kWhat)) throw std::logic_error("vectors: no alpha case that separates early alpha");
      VectorCase v = random_case(cfg, 4, 4, 1, seed, "alpha", kWhat[i]);
      fill_expected(v, 1, {cfg.kind->hardware_model});
      std::vector<int> exps;
      for (float d : v.expected[0])
        if (std::isfinite(d) && d != 0.0f) exps.push_back(std::ilogb(d));
      std::sort(exps.begin(), exps.end());
      const int e = exps.empty() ? 0 : exps[exps.size() / 2];
      switch (i) {
        case 0: v.alpha = -1.0f / 3.0f; break;
        case 1: v.alpha = std::ldexp(1.5f, std::clamp(127 - e, -126, 127)); break;
        case 2: v.alpha = std::ldexp(1.25f, std::clamp(-133 - e, -149, 127)); break;
        default: v.alpha = (1.0f / 2688.0f) * (3.0f / 2688.0f); break;
      }
      fill_expected(v, 1, {cfg.kind->hardware_model});
      if (alpha_early_differences(v) == 0) continue;
      v.row_notes.assign(v.M, std::string("random codes; ") + kWhat[i]);
      v.models.clear();
      v.expected.clear();
      v.steps.clear();
      out.push_back(std::move(v));
      break;
    }
  }
  return out;
}

std::vector<VectorCase> corner_cases() {
  std::vector<VectorCase> out;
  for (const MmaConfig& cfg : corner_configs()) {
    out.push_back(nan_scale(cfg));
    if (has_ue4m3(cfg)) out.push_back(zero_scale(cfg));
    out.push_back(huge_scale(cfg));
    out.push_back(tiny_scale(cfg));
    out.push_back(c_dominating(cfg));
    out.push_back(exact_cancellation(cfg));
    out.push_back(is_hif4(cfg) ? rn_boundary(cfg) : trunc_boundary(cfg));
    out.push_back(k_chaining(cfg));
    out.push_back(subnormal_result(cfg));
    out.push_back(inf_c(cfg));
    if (cfg.elem_a->has_nan()) out.push_back(special_elements(cfg));
    if (cfg.kind->id == MmaKindId::Mxf8f6f4) out.push_back(subnormal_elements(cfg));
    for (VectorCase& v : alpha_cases(cfg)) out.push_back(std::move(v));
  }
  return out;
}

// --- random codes ---

// Raw 64-bit words from the standard's fully specified mt19937_64 (std distributions are not
// portable across standard libraries, so everything below is plain arithmetic on the words).
class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  uint64_t next() { return g_(); }
  uint64_t below(uint64_t n) { return next() % n; }

 private:
  std::mt19937_64 g_;
};

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char ch : s) h = (h ^ static_cast<uint8_t>(ch)) * 0x100000001b3ull;
  return h;
}

bool is_special(const ElemFormat& f, uint32_t code) { return !std::isfinite(decode(f, code)); }

uint8_t random_elem(Rng& r, const ElemFormat& f) {
  const uint32_t n = 1u << f.bits;
  // Specials are rare: one NaN element poisons a whole row of D (and an Inf most of one).
  if (f.has_nan() && r.below(4096) == 0) {
    const uint32_t sign = static_cast<uint32_t>(r.below(2)) * f.sign_bit();
    return static_cast<uint8_t>(((f.has_inf() && r.below(2)) ? f.inf_code() : f.nan_code()) | sign);
  }
  for (;;) {
    const uint32_t c = static_cast<uint32_t>(r.below(n));
    if (!is_special(f, c)) return static_cast<uint8_t>(c);
  }
}

uint32_t random_scale(Rng& r, const MmaConfig& cfg) {
  const uint64_t w = r.next();
  const uint32_t pick = static_cast<uint32_t>(w % 1024);
  const uint32_t rest = static_cast<uint32_t>(w >> 10);
  if (cfg.scale->name == kUE4M3.name) {
    const uint32_t sign = (rest >> 20) & 0x80u;  // ignored by the MMA; exercised anyway
    if (pick == 0) return 0x7Fu | sign;
    return (rest % 0x7F) | sign;  // 0x00 .. 0x7E: zero, subnormals, normals
  }
  uint32_t byte;
  const uint32_t center = cfg.scale->name == kUE8M0.name ? 127u : 0xC0u;  // the code of 1.0
  const uint32_t spread = cfg.scale->name == kUE8M0.name ? 20u : 40u;      // +-20 binades either way
  if (pick == 0) byte = 0xFF;
  else if (pick < 5) byte = 0x00;
  else if (pick < 9) byte = 0xFE;
  else byte = center - spread + rest % (2 * spread + 1);
  if (cfg.kind->scale_word32) return byte | (static_cast<uint32_t>(w >> 32) & 0xFFFFFF00u);  // random level bits
  return byte;
}

float random_c(Rng& r) {
  const uint64_t w = r.next();
  if (w % 64 == 0) {
    static const float kSpecial[] = {0.0f, -0.0f, kInf, -kInf, std::bit_cast<float>(0x7FC00000u), 0x1p-140f,
                                     -0x1p-130f, std::numeric_limits<float>::max()};
    return kSpecial[(w >> 8) % 8];
  }
  const uint32_t frac = static_cast<uint32_t>(w >> 12) & 0x7FFFFFu;
  const int e = static_cast<int>((w >> 40) % 41) - 20;
  const float v = std::ldexp(1.0f + static_cast<float>(frac) * 0x1p-23f, e);
  return (w >> 63) ? -v : v;
}

VectorCase random_case(const MmaConfig& cfg, size_t M, size_t N, size_t instructions, uint64_t seed, std::string cls,
                       std::string desc) {
  Rng r(seed ^ fnv1a(config_tag(cfg)) ^ fnv1a(cls));
  VectorCase v;
  v.cls = std::move(cls);
  v.description = std::move(desc);
  v.cfg = cfg;
  v.M = M;
  v.N = N;
  v.K = static_cast<size_t>(cfg.kind->k) * instructions;
  const size_t nblk = v.K / static_cast<size_t>(cfg.block);
  v.a.codes.resize(M * v.K);
  v.b.codes.resize(N * v.K);
  for (auto& c : v.a.codes) c = random_elem(r, *cfg.elem_a);
  for (auto& c : v.b.codes) c = random_elem(r, *cfg.elem_b);
  v.a.scales.resize(M * nblk);
  v.b.scales.resize(N * nblk);
  for (auto& s : v.a.scales) s = random_scale(r, cfg);
  for (auto& s : v.b.scales) s = random_scale(r, cfg);
  v.c.resize(M * N);
  for (auto& c : v.c) c = random_c(r);
  return v;
}

// --- float-sourced cases ---

Json quant_json(BlockFormat f, const QuantOptions& o, const Quantized& q) {
  Json j = {{"format", info(f).name},
            {"rounding", rounding_name(o.rounding)},
            {"seed", o.seed},
            {"stream", o.stream},
            {"scale_rule", scale_rule_name(o.scale_rule)},
            {"pts", o.pts ? "on" : "off"},
            {"2d", o.two_d},
            {"rht", o.rht},
            {"rht_bf16", o.rht_bf16},
            {"rht_signs", o.rht == 0 ? "none" : (o.rht == 16 && !o.rht_seeded) ? "te-fixed-16" : "seeded"},
            {"rht_seed", o.rht_seed},
            {"convention", convention_name(o.convention)}};
  if (f == BlockFormat::Nvfp4) {
    j["global_scale"] = q.global_scale;
    j["global_scale_bits"] = hex32(std::bit_cast<uint32_t>(q.global_scale));
    j["amax"] = q.amax;
  }
  return j;
}

void set_operand(Operand& op, BlockFormat f, std::vector<float> input, const QuantOptions& o, const Quantized& q) {
  op.codes = q.codes;
  if (info(f).scale_word32) op.scales = q.scale_words;
  else op.scales.assign(q.scales.begin(), q.scales.end());
  op.input = std::move(input);
  op.quant = quant_json(f, o, q);
}

VectorCase float_case(BlockFormat f, std::vector<float> a, const QuantOptions& oa, std::vector<float> b,
                      const QuantOptions& ob, size_t M, size_t N, size_t K, std::string cls, std::string desc) {
  const Quantized qa = quantize(f, a, M, K, oa);
  const Quantized qb = quantize(f, b, N, K, ob);
  return quantized_case(f, std::move(a), oa, qa, std::move(b), ob, qb, std::move(cls), std::move(desc));
}

std::vector<VectorCase> smoke_cases(uint64_t seed) {
  std::vector<VectorCase> out;
  for (const BlockFormatInfo& fi : all_block_formats()) {
    const MmaConfig cfg = mma_config_for(fi.id);
    const size_t M = 8, N = 8, K = 2 * static_cast<size_t>(cfg.kind->k);
    out.push_back(float_case(fi.id, llm_activations(M, K, seed), {}, llm_weights(N, K, seed), {}, M, N, K, "smoke-float",
                             "LLM-like activations x weights quantized to " + std::string(fi.name) + " (default options)"));
  }
  for (const MmaConfig& cfg : corner_configs())
    out.push_back(random_case(cfg, 4, 4, 2, seed, "smoke-codes", "random codes, scales and C, two instructions"));
  return out;
}

std::vector<VectorCase> random_cases(uint64_t seed, size_t size) {
  std::vector<VectorCase> out;
  for (const MmaConfig& cfg : random_configs()) {
    out.push_back(random_case(cfg, size, size, 4, seed, "random",
                              "random codes (rare NaN/Inf), scales within +-20 binades (rare NaN/min/max), random C, "
                              "random alpha"));
    // alpha = +-(1 + f) * 2^e, e in [-3, 3], from its own generator (the codes do not move with it).
    Rng r(seed ^ fnv1a(config_tag(out.back().cfg)) ^ fnv1a("random-alpha"));
    const uint64_t w = r.next();
    const float a = std::ldexp(1.0f + static_cast<float>(w & 0x7FFFFF) * 0x1p-23f, static_cast<int>((w >> 23) % 7) - 3);
    out.back().alpha = (w >> 63) ? -a : a;
  }
  return out;
}

std::vector<VectorCase> llm_cases(uint64_t seed, size_t tokens) {
  // One linear layer, tokens x in=256 -> out=128, through each recipe's three GEMMs with the
  // operands quantized along each GEMM's reduction axis (linear.hpp).
  const size_t T = tokens, IN = 256, OUT = 128;
  const LinearInputs in = synth_linear_inputs(T, OUT, IN, seed);
  const std::vector<float> wt = transpose(in.w, OUT, IN), dyt = transpose(in.dy, T, OUT), xt = transpose(in.x, T, IN);
  struct G {
    const std::vector<float>* a;
    const std::vector<float>* b;
    size_t M, N, K;
    const char* name;
    const char* what;
  };
  const G gemms[3] = {{&in.x, &in.w, T, OUT, IN, "fprop", "Y = X W^T: activations x weights"},
                      {&in.dy, &wt, T, IN, OUT, "dgrad", "dX = dY W: gradients x weights^T"},
                      {&dyt, &xt, OUT, IN, T, "wgrad", "dW = dY^T X: gradients^T x activations^T"}};
  std::vector<VectorCase> out;
  auto add_recipe = [&](BlockFormat f, const std::string& label,
                        const std::array<std::pair<QuantOptions, QuantOptions>, 3>& opts) {
    for (int g = 0; g < 3; ++g) {
      const G& x = gemms[g];
      out.push_back(float_case(f, *x.a, opts[g].first, *x.b, opts[g].second, x.M, x.N, x.K,
                               std::string("llm-") + x.name, label + ": " + x.what));
    }
  };
  for (const char* name : {"nvfp4-paper", "mxfp4-paper", "hif4-paper"}) {
    LinearRecipe r;
    linear_recipe(name, r);
    r.seed = seed;
    add_recipe(recipe_block_format(r.format), name, linear_operand_options(r));
  }
  // MXFP8 (E4M3), the 8-bit baseline: RNE, floor scales, no transform.
  const QuantOptions plain;
  add_recipe(BlockFormat::Mxfp8E4M3, "mxfp8-e4m3", {{{plain, plain}, {plain, plain}, {plain, plain}}});
  return out;
}

}  // namespace

VectorCase quantized_case(BlockFormat f, std::vector<float> a, const QuantOptions& oa, const Quantized& qa,
                          std::vector<float> b, const QuantOptions& ob, const Quantized& qb, std::string cls,
                          std::string description) {
  if (qa.format != f || qb.format != f || qa.cols != qb.cols || a.size() != qa.rows * qa.cols ||
      b.size() != qb.rows * qb.cols)
    throw std::invalid_argument("quantized_case: operands do not match the format or each other");
  VectorCase v;
  v.cls = std::move(cls);
  v.description = std::move(description);
  v.cfg = mma_config_for(f);
  v.M = qa.rows;
  v.N = qb.rows;
  v.K = qa.cols;
  set_operand(v.a, f, std::move(a), oa, qa);
  set_operand(v.b, f, std::move(b), ob, qb);
  v.c.assign(v.M * v.N, 0.0f);
  if (f == BlockFormat::Nvfp4) v.alpha = qa.global_scale * qb.global_scale;  // FP32 RN, CUTLASS's alpha
  return v;
}

// Custom: lines and replay chain its instructions (mma_dot under the numerics) the same way.
bool chained_model(Model m) {
  return m == Model::Blackwell || m == Model::AscendHif4 || m == Model::Fp32Seq || m == Model::Custom;
}

std::vector<float> instruction_steps(const VectorCase& v, Model model, unsigned threads) {
  const size_t kI = static_cast<size_t>(v.cfg.kind->k), S = v.K / kI, B = static_cast<size_t>(v.cfg.block);
  const size_t nblk = v.K / B, spi = kI / B;
  std::vector<float> out(S * v.M * v.N);
  std::vector<float> c = v.c;
  std::vector<uint8_t> a(v.M * kI), b(v.N * kI);
  std::vector<uint32_t> sa(v.M * spi), sb(v.N * spi);
  for (size_t s = 0; s < S; ++s) {
    for (size_t m = 0; m < v.M; ++m) {
      std::copy_n(&v.a.codes[m * v.K + s * kI], kI, &a[m * kI]);
      std::copy_n(&v.a.scales[m * nblk + s * spi], spi, &sa[m * spi]);
    }
    for (size_t n = 0; n < v.N; ++n) {
      std::copy_n(&v.b.codes[n * v.K + s * kI], kI, &b[n * kI]);
      std::copy_n(&v.b.scales[n * nblk + s * spi], spi, &sb[n * spi]);
    }
    c = gemm(v.cfg, model, v.M, v.N, kI, a, std::span<const uint32_t>(sa), b, std::span<const uint32_t>(sb), c, 1.0f,
             threads);
    std::copy(c.begin(), c.end(), out.begin() + static_cast<long>(s * v.M * v.N));
  }
  return out;
}

void fill_expected(VectorCase& v, unsigned threads, std::vector<Model> models) {
  v.models = models.empty() ? applicable_models(v.cfg) : std::move(models);
  v.expected.clear();
  v.steps.clear();
  const size_t kI = static_cast<size_t>(v.cfg.kind->k);
  for (Model m : v.models) {
    v.expected.push_back(gemm(v.cfg, m, v.M, v.N, v.K, v.a.codes, std::span<const uint32_t>(v.a.scales), v.b.codes,
                              std::span<const uint32_t>(v.b.scales), v.c, v.alpha, threads));
    if (!chained_model(m) || v.K <= kI || v.K % kI != 0) {
      v.steps.emplace_back();
      continue;
    }
    v.steps.push_back(instruction_steps(v, m, threads));
    // The chain's last accumulator through the epilogue must be the whole-K result.
    const size_t MN = v.M * v.N, last = v.steps.back().size() - MN;
    for (size_t i = 0; i < MN; ++i) {
      const float d = v.alpha * v.steps.back()[last + i];
      const uint32_t bits = std::isnan(d) ? kNaNBits : std::bit_cast<uint32_t>(d);
      if (bits != std::bit_cast<uint32_t>(v.expected.back()[i]))
        throw std::logic_error("vectors: " + v.id + " " + std::string(model_name(m)) +
                               ": the instruction chain does not reproduce gemm's D at index " + std::to_string(i));
    }
  }
}

std::vector<VectorCase> build_from_tensors(BlockFormat f, std::vector<float> a, size_t M, size_t K,
                                           std::vector<float> b, size_t N, const QuantOptions& opt, unsigned threads) {
  const BlockFormatInfo& fi = info(f);
  const MmaConfig cfg = mma_config_for(f);
  if (b.empty()) {
    b = a;
    N = M;
  }
  if (M == 0 || N == 0 || K == 0) throw std::invalid_argument("an operand is empty");
  if (a.size() != M * K) throw std::invalid_argument("A holds " + std::to_string(a.size()) + " values, not M x K");
  if (b.size() != N * K) throw std::invalid_argument("B holds " + std::to_string(b.size()) + " values, not N x K");
  const size_t kI = static_cast<size_t>(cfg.kind->k);
  if (K % static_cast<size_t>(fi.block) != 0 || K % kI != 0 || (opt.rht > 0 && K % static_cast<size_t>(opt.rht) != 0))
    throw std::invalid_argument("K = " + std::to_string(K) + " must be a multiple of the " + std::string(fi.name) +
                                " block (" + std::to_string(fi.block) + "), of the instruction K (" +
                                std::to_string(kI) + ")" + (opt.rht > 0 ? " and of the RHT size" : ""));
  QuantOptions o = opt;
  o.threads = threads;
  const Quantized qa = quantize(f, a, M, K, o);
  const Quantized qb = quantize(f, b, N, K, o);
  std::vector<VectorCase> cases;
  cases.push_back(quantized_case(f, std::move(a), opt, qa, std::move(b), opt, qb, "from",
                                 "the caller's tensors quantized to " + std::string(fi.name)));
  number_cases(cases);
  fill_expected(cases[0], threads);
  return cases;
}

void number_cases(std::vector<VectorCase>& cases) {
  for (size_t i = 0; i < cases.size(); ++i) {
    char num[32];
    std::snprintf(num, sizeof num, "%04zu", i);
    cases[i].id = std::string(num) + "-" + config_tag(cases[i].cfg) + "-" + cases[i].cls;
  }
}

std::vector<VectorCase> build_suite(Suite s, const SuiteOptions& o) {
  validate_suite_options(s, o);
  std::vector<VectorCase> cases;
  switch (s) {
    case Suite::Smoke: cases = smoke_cases(o.seed); break;
    case Suite::Corners: cases = corner_cases(); break;
    case Suite::Random: cases = random_cases(o.seed, o.size ? o.size : kRandomDefault); break;
    case Suite::Llm: cases = llm_cases(o.seed, o.size ? o.size : kLlmDefault); break;
    case Suite::Quant: cases = quant_suite_cases(o.seed, o.convention); break;
  }
  number_cases(cases);
  for (size_t i = 0; i < cases.size(); ++i) {
    fill_expected(cases[i], o.threads);
    if (cases[i].cls == "alpha" && alpha_early_differences(cases[i]) == 0)
      throw std::logic_error("vectors: " + cases[i].id + ": applying alpha early changes no output");
    if (o.progress) o.progress(i + 1, cases.size());
  }
  return cases;
}

// ---------------------------------------------------------------------------------------------
// Writing

namespace {

std::string model_file(Model m) { return "d_" + std::string(model_name(m)) + ".npy"; }

Json conventions() {
  return {
      {"gemm", "D[M,N] = alpha * acc, acc = C + A[M,K] . B[N,K]^T computed by each model (mma.hpp); A and B "
               "K-major; alpha applied as one FP32 multiplication (RN)"},
      {"instructions", "K is a multiple of the kind's instruction K; blackwell chains instructions along K (D of one "
                       "is C of the next); ascend-hif4 rounds the FP32 accumulator once per 64-element group; exact "
                       "rounds once over the whole K; fp32-seq is one FMA chain over the whole K"},
      {"codes", "uint8, one element code per value, sign in the top bit of the element width"},
      {"nibble_order", "low nibble = even element (element 2i in bits 3:0, 2i+1 in bits 7:4), row by row"},
      {"scales", "row-major [rows, K/block]: uint8 scale codes, or uint32 HiF4 words (bits 7:0 E6M2, bits 15:8 "
                 "E1_8, bits 31:16 E1_16)"},
      {"scales_atom", "8-bit scales only: the row-major scales zero-padded to 128-row x 4-column tiles of 512 bytes, "
                      "tile (rt, ct) at byte (rt * ceil(cols/4) + ct) * 512, scale (r, c) inside at (r % 32) * 16 + "
                      "(r % 128 / 32) * 4 + c % 4 (cuBLAS / CUTLASS / TransformerEngine layout, layout.hpp)"},
      {"expected", "float32 [M, N] per model; compare bit patterns; every model returns NaN as 0x7FFFFFFF"},
      {"expected_steps", "chained models (blackwell, ascend-hif4, fp32-seq) with K > the instruction K: float32 "
                         "[K / instruction K, M, N], the accumulator after each instruction (D of instruction s is C "
                         "of s + 1), before alpha; NaN as 0x7FFFFFFF"},
      {"input", "float32 [rows, K]: the values quantized into the codes (after the RHT when quant.rht > 0 the codes "
                "describe the rotated values)"},
      {"crc32", "zlib CRC-32 of each whole .npy file, header included"}};
}

Json operand_json(const std::string& dir, char side, const VectorCase& v, const Operand& op, const ElemFormat& e) {
  const std::string p = dir + "/" + side + "_";
  Json j;
  j["source"] = op.input.empty() ? "codes" : "float";
  j["codes"] = p + "codes.npy";
  j["packed"] = is_four_bit(e) ? Json(p + "packed.npy") : Json(nullptr);
  j["scales"] = p + "scales.npy";
  j["scales_atom"] = v.cfg.kind->scale_word32 ? Json(nullptr) : Json(p + "scales_atom.npy");
  j["input"] = op.input.empty() ? Json(nullptr) : Json(p + "input.npy");
  j["quant"] = op.quant.is_null() ? Json(nullptr) : op.quant;
  return j;
}

void write_operand(io::OutputWriter& w, const std::string& dir, char side, const VectorCase& v, const Operand& op,
                   size_t rows, const ElemFormat& e) {
  const std::string p = dir + "/" + side + "_";
  const size_t K = v.K, nblk = v.K / static_cast<size_t>(v.cfg.block);
  const size_t shape[2] = {rows, K}, sshape[2] = {rows, nblk};
  w.npy<uint8_t>(p + "codes.npy", shape, op.codes);
  if (is_four_bit(e)) {
    const size_t pshape[2] = {rows, (K + 1) / 2};
    w.npy<uint8_t>(p + "packed.npy", pshape, pack_nibbles_rows(op.codes, rows, K));
  }
  if (v.cfg.kind->scale_word32) {
    w.npy<uint32_t>(p + "scales.npy", sshape, op.scales);
  } else {
    std::vector<uint8_t> s8(op.scales.size());
    for (size_t i = 0; i < s8.size(); ++i) s8[i] = static_cast<uint8_t>(op.scales[i]);
    w.npy<uint8_t>(p + "scales.npy", sshape, s8);
    const std::vector<uint8_t> atom = scales_to_atom(s8, rows, nblk);
    const size_t ashape[1] = {atom.size()};
    w.npy<uint8_t>(p + "scales_atom.npy", ashape, atom);
  }
  if (!op.input.empty()) w.npy<float>(p + "input.npy", shape, op.input);
}

}  // namespace

namespace {
Json suite_origin(Suite s, const SuiteOptions& o) {
  Json origin = {{"command", "vectors"}, {"suite", suite_name(s)}, {"seed", o.seed}};
  if (s == Suite::Random) origin["size"] = o.size ? o.size : kRandomDefault;
  else if (s == Suite::Llm) origin["size"] = o.size ? o.size : kLlmDefault;
  else origin["size"] = nullptr;
  if (s == Suite::Quant) origin["convention"] = convention_name(o.convention);
  return origin;
}
}  // namespace

void write_suite(const fs::path& dir, Suite s, const SuiteOptions& o, const std::vector<VectorCase>& cases,
                 const std::vector<std::string>& argv, bool force) {
  write_cases(dir, suite_origin(s, o), cases, argv, force);
}

void write_suite_into(const fs::path& dir, Suite s, const SuiteOptions& o, const std::vector<VectorCase>& cases,
                      const std::vector<std::string>& argv) {
  write_cases_into(dir, suite_origin(s, o), cases, argv);
}

void write_cases(const fs::path& dir, const Json& origin, const std::vector<VectorCase>& cases,
                 const std::vector<std::string>& argv, bool force) {
  if (!origin.is_object()) throw std::invalid_argument("write_cases: origin must be a JSON object");
  io::StagingDir stage(dir);
  write_cases_into(stage.path(), origin, cases, argv);
  stage.commit(force);
}

void write_cases_into(const fs::path& dir, const Json& origin, const std::vector<VectorCase>& cases,
                      const std::vector<std::string>& argv) {
  if (!origin.is_object()) throw std::invalid_argument("write_cases: origin must be a JSON object");
  struct {
    const fs::path& p;
    const fs::path& path() const { return p; }
  } stage{dir};
  io::OutputWriter w(stage.path());
  Json jcases = Json::array();
  for (const VectorCase& v : cases) {
    const std::string cdir = "cases/" + v.id;
    fs::create_directories(stage.path() / cdir);
    write_operand(w, cdir, 'a', v, v.a, v.M, *v.cfg.elem_a);
    write_operand(w, cdir, 'b', v, v.b, v.N, *v.cfg.elem_b);
    const size_t dshape[2] = {v.M, v.N};
    w.npy<float>(cdir + "/c.npy", dshape, v.c);
    Json expected = Json::object(), steps = Json::object();
    for (size_t i = 0; i < v.models.size(); ++i) {
      w.npy<float>(cdir + "/" + model_file(v.models[i]), dshape, v.expected[i]);
      expected[std::string(model_name(v.models[i]))] = cdir + "/" + model_file(v.models[i]);
      if (i < v.steps.size() && !v.steps[i].empty()) {
        const std::string f = cdir + "/d_" + std::string(model_name(v.models[i])) + "_steps.npy";
        const size_t sshape[3] = {v.K / static_cast<size_t>(v.cfg.kind->k), v.M, v.N};
        w.npy<float>(f, sshape, v.steps[i]);
        steps[std::string(model_name(v.models[i]))] = f;
      }
    }
    Json j;
    j["id"] = v.id;
    j["dir"] = cdir;
    j["class"] = v.cls;
    j["description"] = v.description;
    j["kind"] = v.cfg.kind->name;
    j["instruction_k"] = v.cfg.kind->k;
    j["elem_a"] = v.cfg.elem_a->name;
    j["elem_b"] = v.cfg.elem_b->name;
    j["scale_type"] = v.cfg.scale->name;
    j["block"] = v.cfg.block;
    j["M"] = v.M;
    j["N"] = v.N;
    j["K"] = v.K;
    j["alpha"] = v.alpha;
    j["alpha_bits"] = hex32(std::bit_cast<uint32_t>(v.alpha));
    if (!v.row_notes.empty()) j["rows"] = v.row_notes;
    if (!v.col_notes.empty()) j["cols"] = v.col_notes;
    j["a"] = operand_json(cdir, 'a', v, v.a, *v.cfg.elem_a);
    j["b"] = operand_json(cdir, 'b', v, v.b, *v.cfg.elem_b);
    j["c"] = cdir + "/c.npy";
    j["expected"] = expected;
    if (!steps.empty()) j["expected_steps"] = steps;
    jcases.push_back(j);
  }
  Json m;
  m["tool"] = "fp4sim";
  m["version"] = io::tool_version();
  m["manifest_schema"] = io::kManifestSchema;
  for (const auto& [k, v] : origin.items()) m[k] = v;
  m["command_line"] = argv;
  m["suite_schema"] = kSuiteSchema;
  m["conventions"] = conventions();
  m["cases"] = jcases;
  m["files"] = w.files_json();
  io::write_manifest(stage.path(), m);
}

// ---------------------------------------------------------------------------------------------
// Reading

SuiteReader::SuiteReader(fs::path dir) : dir_(std::move(dir)) {
  manifest_ = io::read_manifest(dir_);
  const std::string name = (dir_ / "manifest.json").string();
  if (!manifest_.is_object() || !manifest_.contains("suite_schema") || !manifest_.contains("cases") ||
      !manifest_["cases"].is_array() || !manifest_.contains("files") || !manifest_["files"].is_object())
    throw io::IoError(name + ": not a vector suite manifest (needs suite_schema, cases, files)");
  if (!manifest_["suite_schema"].is_number_integer() || manifest_["suite_schema"].get<int>() != kSuiteSchema)
    throw io::IoError(name + ": suite_schema " + manifest_["suite_schema"].dump() + ", this fp4sim reads " +
                      std::to_string(kSuiteSchema));
}

size_t SuiteReader::size() const { return manifest_["cases"].size(); }

namespace {

template <size_t N>
const ElemFormat* find_format(const std::string& name, const std::array<const ElemFormat*, N>& list) {
  for (const ElemFormat* f : list)
    if (f && f->name == name) return f;
  return nullptr;
}

struct FileLoader {
  const fs::path& dir;
  const Json& files;
  std::vector<std::string>& problems;

  // Reads `rel` once; checks size, CRC, .npy, dtype and shape; returns nothing after a problem.
  std::optional<io::NpyArray> load(const Json& ref, io::DType want, const std::vector<size_t>& shape) {
    if (!ref.is_string()) {
      problems.push_back("manifest: a file reference is missing or not a string");
      return std::nullopt;
    }
    const std::string rel = ref.get<std::string>();
    if (!files.contains(rel)) {
      problems.push_back(rel + ": not listed under \"files\" in the manifest (no CRC to check it against)");
      return std::nullopt;
    }
    const Json& rec = files[rel];
    std::vector<uint8_t> bytes;
    try {
      bytes = io::read_file(dir / rel);
    } catch (const io::IoError& e) {
      problems.push_back(rel + ": missing or unreadable (" + e.what() + ")");
      return std::nullopt;
    }
    try {
      const size_t want_bytes = rec.at("bytes").get<size_t>();
      if (bytes.size() < want_bytes) {
        problems.push_back(rel + ": truncated: " + std::to_string(bytes.size()) + " bytes, manifest says " +
                           std::to_string(want_bytes));
        return std::nullopt;
      }
      if (bytes.size() > want_bytes) {
        problems.push_back(rel + ": size mismatch: " + std::to_string(bytes.size()) + " bytes, manifest says " +
                           std::to_string(want_bytes));
        return std::nullopt;
      }
      const std::string crc = io::crc32_hex(io::crc32(bytes));
      if (crc != rec.at("crc32").get<std::string>()) {
        problems.push_back(rel + ": CRC mismatch: file " + crc + ", manifest " + rec.at("crc32").get<std::string>());
        return std::nullopt;
      }
      io::NpyArray a = io::parse_npy(bytes, rel);
      if (a.dtype != want || a.shape != shape) {
        problems.push_back(rel + ": " + std::string(io::dtype_name(a.dtype)) + " " + io::shape_string(a.shape) +
                           ", the case needs " + std::string(io::dtype_name(want)) + " " + io::shape_string(shape));
        return std::nullopt;
      }
      if (rec.at("dtype").get<std::string>() != io::dtype_name(a.dtype) ||
          rec.at("shape").get<std::vector<size_t>>() != a.shape) {
        problems.push_back(rel + ": dtype / shape differ from the manifest's record");
        return std::nullopt;
      }
      return a;
    } catch (const io::NpyError& e) {
      problems.push_back(e.what());
    } catch (const Json::exception& e) {
      problems.push_back(rel + ": malformed manifest record (" + e.what() + ")");
    }
    return std::nullopt;
  }
};

}  // namespace

LoadedCase SuiteReader::load(size_t i) const {
  LoadedCase lc;
  const Json& cj = manifest_["cases"][i];
  lc.id = cj.is_object() && cj.contains("id") && cj["id"].is_string() ? cj["id"].get<std::string>()
                                                                       : "#" + std::to_string(i);
  VectorCase& v = lc.data;
  try {
    lc.cls = cj.value("class", "");
    v.id = lc.id;
    v.cls = lc.cls;
    v.description = cj.value("description", "");
    if (cj.contains("rows")) v.row_notes = cj["rows"].get<std::vector<std::string>>();
    if (cj.contains("cols")) v.col_notes = cj["cols"].get<std::vector<std::string>>();
    MmaKindId kid{};
    const std::string kname = cj.at("kind").get<std::string>();
    if (!parse_mma_kind(kname, kid)) throw std::invalid_argument("unknown kind '" + kname + "'");
    const MmaKind& kind = mma_kind(kid);
    const ElemFormat* ea = find_format(cj.at("elem_a").get<std::string>(), kind.elems);
    const ElemFormat* eb = find_format(cj.at("elem_b").get<std::string>(), kind.elems);
    const ElemFormat* st = find_format(cj.at("scale_type").get<std::string>(), kind.scales);
    if (!ea || !eb || !st) throw std::invalid_argument("element or scale type not allowed for kind " + kname);
    v.cfg = make_mma_config(kid, ea, eb, st, cj.at("block").get<int>());
    v.M = cj.at("M").get<size_t>();
    v.N = cj.at("N").get<size_t>();
    v.K = cj.at("K").get<size_t>();
    if (v.M == 0 || v.N == 0 || v.K == 0 || v.K % static_cast<size_t>(kind.k) != 0)
      throw std::invalid_argument("M, N, K must be positive and K a multiple of the instruction K");
    v.alpha = cj.at("alpha").get<float>();
    if (cj.contains("alpha_bits") && cj["alpha_bits"].get<std::string>() != hex32(std::bit_cast<uint32_t>(v.alpha)))
      throw std::invalid_argument("alpha and alpha_bits disagree");
    for (const auto& [name, path] : cj.at("expected").items()) {
      Model m{};
      if (!parse_model(name, m)) throw std::invalid_argument("unknown model '" + name + "'");
      v.models.push_back(m);
    }
  } catch (const std::exception& e) {
    lc.problems.push_back("manifest: case " + lc.id + ": " + e.what());
    return lc;
  }

  FileLoader fl{dir_, manifest_["files"], lc.problems};
  const size_t nblk = v.K / static_cast<size_t>(v.cfg.block);
  const bool words = v.cfg.kind->scale_word32;
  auto operand = [&](const char* side, size_t rows, Operand& op, const ElemFormat& e) {
    const Json& oj = cj.contains(side) ? cj[side] : Json();
    if (!oj.is_object()) {
      lc.problems.push_back("manifest: case " + lc.id + ": no operand '" + side + "'");
      return;
    }
    if (auto a = fl.load(oj.value("codes", Json()), io::DType::U8, {rows, v.K})) {
      op.codes = a->values<uint8_t>();
      bool codes_fit = true;
      if (e.bits < 8)
        for (size_t k = 0; k < op.codes.size(); ++k)
          if (op.codes[k] >> e.bits) {
            lc.problems.push_back(oj["codes"].get<std::string>() + ": code at index " + std::to_string(k) +
                                  " does not fit " + std::string(e.name));
            codes_fit = false;
            break;
          }
      // Packing needs codes that fit in 4 bits (pack_nibbles throws on others): the problem above
      // already refuses the case.
      if (is_four_bit(e) && codes_fit) {
        if (auto p = fl.load(oj.value("packed", Json()), io::DType::U8, {rows, (v.K + 1) / 2}))
          if (p->values<uint8_t>() != pack_nibbles_rows(op.codes, rows, v.K))
            lc.problems.push_back(oj["packed"].get<std::string>() + ": packed bytes disagree with " +
                                  oj["codes"].get<std::string>());
      }
    }
    if (auto s = fl.load(oj.value("scales", Json()), words ? io::DType::U32 : io::DType::U8, {rows, nblk})) {
      if (words) {
        op.scales = s->values<uint32_t>();
      } else {
        const std::vector<uint8_t> s8 = s->values<uint8_t>();
        op.scales.assign(s8.begin(), s8.end());
        const size_t bytes = scale_atom_bytes(rows, nblk);
        if (auto at = fl.load(oj.value("scales_atom", Json()), io::DType::U8, {bytes}))
          if (at->values<uint8_t>() != scales_to_atom(s8, rows, nblk))
            lc.problems.push_back(oj["scales_atom"].get<std::string>() + ": atom layout disagrees with " +
                                  oj["scales"].get<std::string>());
      }
    }
    if (oj.contains("input") && !oj["input"].is_null())
      if (auto in = fl.load(oj["input"], io::DType::F32, {rows, v.K})) op.input = in->values<float>();
    if (oj.contains("quant")) op.quant = oj["quant"];
  };
  operand("a", v.M, v.a, *v.cfg.elem_a);
  operand("b", v.N, v.b, *v.cfg.elem_b);
  if (auto c = fl.load(cj.value("c", Json()), io::DType::F32, {v.M, v.N})) v.c = c->values<float>();
  for (Model m : v.models)
    if (auto d = fl.load(cj["expected"][std::string(model_name(m))], io::DType::F32, {v.M, v.N}))
      v.expected.push_back(d->values<float>());
  // Optional (suites written before it have none): the per-instruction accumulators.
  v.steps.assign(v.models.size(), {});
  if (cj.contains("expected_steps")) {
    const Json& sj = cj["expected_steps"];
    if (!sj.is_object()) {
      lc.problems.push_back("manifest: case " + lc.id + ": expected_steps is not an object");
      return lc;
    }
    const size_t S = v.K / static_cast<size_t>(v.cfg.kind->k);
    for (const auto& [name, path] : sj.items()) {
      Model m{};
      const auto it = parse_model(name, m) ? std::find(v.models.begin(), v.models.end(), m) : v.models.end();
      if (it == v.models.end() || !chained_model(m)) {
        lc.problems.push_back("manifest: case " + lc.id + ": expected_steps names '" + name +
                              "', not a chained model of the case");
        continue;
      }
      if (auto d = fl.load(path, io::DType::F32, {S, v.M, v.N}))
        v.steps[static_cast<size_t>(it - v.models.begin())] = d->values<float>();
    }
  }
  return lc;
}

// ---------------------------------------------------------------------------------------------
// Targets and replay

std::string instruction_cannot_run(const VectorCase& c, Model m) {
  try {
    validate_mma_config(c.cfg, m);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  const size_t kI = static_cast<size_t>(c.cfg.kind->k);
  if (c.K % kI != 0) return "K = " + std::to_string(c.K) + " is not a multiple of the instruction K";
  if (m == Model::Exact && c.K != kI)
    return "exact rounds once over K = " + std::to_string(c.K) + "; a single-instruction unit rounds per instruction";
  return {};
}

namespace {

class GoldenTarget final : public ReplayTarget {
 public:
  explicit GoldenTarget(unsigned threads) : threads_(threads) {}
  std::string name() const override { return "golden"; }
  std::string cannot_run(const VectorCase& c, Model m) const override {
    try {
      validate_mma_config(c.cfg, m);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return {};
  }
  std::vector<uint32_t> run(const VectorCase& c, Model m) override {
    const std::vector<float> d = gemm(c.cfg, m, c.M, c.N, c.K, c.a.codes, std::span<const uint32_t>(c.a.scales),
                                      c.b.codes, std::span<const uint32_t>(c.b.scales), c.c, c.alpha, threads_);
    std::vector<uint32_t> bits(d.size());
    for (size_t i = 0; i < d.size(); ++i) bits[i] = std::bit_cast<uint32_t>(d[i]);
    return bits;
  }

 private:
  unsigned threads_;
};

class DotTarget final : public ReplayTarget {
 public:
  DotTarget(std::string name, std::vector<Model> models, DotFn dot, std::function<std::string(const MmaConfig&)> supports)
      : name_(std::move(name)), models_(std::move(models)), dot_(std::move(dot)), supports_(std::move(supports)) {}
  std::string name() const override { return name_; }
  std::string cannot_run(const VectorCase& c, Model m) const override {
    if (std::find(models_.begin(), models_.end(), m) == models_.end())
      return name_ + " does not offer model " + std::string(model_name(m));
    if (std::string why = instruction_cannot_run(c, m); !why.empty()) return why;
    if (supports_) return supports_(c.cfg);
    return {};
  }
  std::vector<uint32_t> run(const VectorCase& c, Model m) override {
    MmaConfig cfg = c.cfg;
    cfg.model = m;
    const size_t kI = static_cast<size_t>(cfg.kind->k), nblk = c.K / static_cast<size_t>(cfg.block);
    const size_t spi = kI / static_cast<size_t>(cfg.block);  // scales per instruction
    std::vector<uint32_t> out(c.M * c.N);
    for (size_t i = 0; i < c.M; ++i)
      for (size_t j = 0; j < c.N; ++j) {
        uint32_t acc = std::bit_cast<uint32_t>(c.c[i * c.N + j]);
        for (size_t t = 0; t < c.K / kI; ++t)
          acc = dot_(cfg, c.a.codes.data() + i * c.K + t * kI, c.b.codes.data() + j * c.K + t * kI,
                     c.a.scales.data() + i * nblk + t * spi, c.b.scales.data() + j * nblk + t * spi, acc);
        const float d = c.alpha * std::bit_cast<float>(acc);  // the FP32 epilogue, one RN
        out[i * c.N + j] = std::isnan(d) ? kNaNBits : std::bit_cast<uint32_t>(d);
      }
    return out;
  }

 private:
  std::string name_;
  std::vector<Model> models_;
  DotFn dot_;
  std::function<std::string(const MmaConfig&)> supports_;
};

}  // namespace

std::unique_ptr<ReplayTarget> make_golden_target(unsigned threads) { return std::make_unique<GoldenTarget>(threads); }

std::unique_ptr<ReplayTarget> make_dot_target(std::string name, std::vector<Model> models, DotFn dot,
                                              std::function<std::string(const MmaConfig&)> supports) {
  return std::make_unique<DotTarget>(std::move(name), std::move(models), std::move(dot), std::move(supports));
}

ReplayReport replay_suite(const SuiteReader& reader, ReplayTarget& target,
                          const std::function<void(const CaseReport&)>& on_case) {
  ReplayReport rep;
  for (size_t i = 0; i < reader.size(); ++i) {
    LoadedCase lc = reader.load(i);
    CaseReport cr;
    cr.id = lc.id;
    cr.cls = lc.cls;
    cr.M = lc.data.M;
    cr.N = lc.data.N;
    cr.K = lc.data.K;
    cr.problems = lc.problems;
    if (cr.problems.empty()) {
      const VectorCase& v = lc.data;
      for (size_t k = 0; k < v.models.size(); ++k) {
        ModelCheck mc;
        mc.model = v.models[k];
        mc.skipped = target.cannot_run(v, mc.model);
        if (mc.skipped.empty()) {
          std::vector<uint32_t> got;
          try {
            got = target.run(v, mc.model);
          } catch (const std::exception& e) {
            cr.problems.push_back(target.name() + " " + std::string(model_name(mc.model)) + ": " + e.what());
            break;
          }
          if (got.size() != v.M * v.N) {
            cr.problems.push_back(target.name() + " " + std::string(model_name(mc.model)) + ": returned " +
                                  std::to_string(got.size()) + " outputs, expected " + std::to_string(v.M * v.N));
            break;
          }
          for (size_t e = 0; e < got.size(); ++e) {
            const uint32_t want = std::bit_cast<uint32_t>(v.expected[k][e]);
            if (got[e] != want) {
              if (mc.mismatches++ == 0) {
                mc.first = e;
                mc.want = want;
                mc.got = got[e];
              }
            }
          }
          ++rep.comparisons;
        }
        cr.checks.push_back(mc);
      }
    }
    if (!cr.problems.empty()) {
      cr.status = CaseReport::Error;
      ++rep.error;
    } else if (std::any_of(cr.checks.begin(), cr.checks.end(), [](const ModelCheck& c) { return c.mismatches > 0; })) {
      cr.status = CaseReport::Fail;
      ++rep.fail;
    } else if (std::all_of(cr.checks.begin(), cr.checks.end(), [](const ModelCheck& c) { return !c.skipped.empty(); })) {
      cr.status = CaseReport::Skipped;
      ++rep.skipped;
    } else {
      cr.status = CaseReport::Pass;
      ++rep.pass;
    }
    if (on_case) on_case(cr);
    rep.cases.push_back(std::move(cr));
  }
  return rep;
}

std::vector<std::string> format_case_report(const CaseReport& r) {
  static const char* kStatus[] = {"PASS ", "FAIL ", "ERROR", "SKIP "};
  std::string head = std::string(kStatus[r.status]) + " " + r.id;
  if (r.status != CaseReport::Error || r.M)
    head += "  " + std::to_string(r.M) + "x" + std::to_string(r.N) + "x" + std::to_string(r.K);
  std::vector<std::string> lines;
  std::string ran, skipped;
  for (const ModelCheck& c : r.checks) {
    // append() rather than operator+: GCC 12 -O3 reports a false -Wrestrict on the temporaries.
    std::string& list = c.skipped.empty() ? ran : skipped;
    list.append(c.skipped.empty() ? " " : (list.empty() ? "" : ", ")).append(model_name(c.model));
  }
  if (!ran.empty()) head += " " + ran;
  if (!skipped.empty()) head += "  (skipped: " + skipped + ")";
  lines.push_back(head);
  for (const std::string& p : r.problems) lines.push_back("      " + p);
  for (const ModelCheck& c : r.checks) {
    if (c.mismatches) {
      lines.push_back("      " + std::string(model_name(c.model)) + ": " + std::to_string(c.mismatches) + " of " +
                      std::to_string(r.M * r.N) + " outputs differ; first [" + std::to_string(c.first / r.N) + ", " +
                      std::to_string(c.first % r.N) + "]: expected " + hex32(c.want) + ", got " + hex32(c.got));
    } else if (!c.skipped.empty() && r.status == CaseReport::Skipped) {
      lines.push_back("      " + std::string(model_name(c.model)) + ": " + c.skipped);
    }
  }
  return lines;
}

}  // namespace fp4sim::vectors
