// Tests of the MMA numerics models (golden/include/fp4sim/mma.hpp, SPEC §4, docs/numerics.md).
//
// Expected bits are derived by hand in the comments, or come from an independent slow reference
// written here: it follows the structure of MMA-Sim's Python (extract_significand_exponent,
// fused_sum, trunc) on decoded doubles and does all sums with Boost.Multiprecision cpp_int.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "fp4sim/format.hpp"
#include "fp4sim/mma.hpp"
#include "fp4sim/quant.hpp"

namespace {

using boost::multiprecision::cpp_int;
using fp4sim::MmaConfig;
using fp4sim::MmaKindId;
using fp4sim::Model;

uint32_t fb(float f) { return std::bit_cast<uint32_t>(f); }
float bf(uint32_t u) { return std::bit_cast<float>(u); }

constexpr uint32_t kNaN = 0x7FFFFFFFu;
constexpr uint32_t kPInf = 0x7F800000u;
constexpr uint32_t kNInf = 0xFF800000u;

// E2M1 codes: 0, .5, 1, 1.5, 2, 3, 4, 6 = 0..7; sign = 8.
constexpr uint8_t kF1 = 0x2, kF0_5 = 0x1, kF1_5 = 0x3, kF2 = 0x4, kF4 = 0x6, kF6 = 0x7, kNeg = 0x8;
// UE4M3 codes: 1.0 = e 7 -> 0x38; 2.0 = 0x40; 0.5 = 0x30; 448 = 0x7E; 2^-9 = 0x01 (subnormal).
constexpr uint32_t kS1 = 0x38;

MmaConfig cfg_of(MmaKindId k, Model m, const fp4sim::ElemFormat* ea = nullptr,
                 const fp4sim::ElemFormat* eb = nullptr, const fp4sim::ElemFormat* s = nullptr,
                 int block = 0) {
  MmaConfig c = fp4sim::make_mma_config(k, ea, eb, s, block);
  c.model = m;
  return c;
}

uint32_t dot(const MmaConfig& cfg, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
             const std::vector<uint32_t>& sa, const std::vector<uint32_t>& sb, uint32_t c) {
  return fp4sim::mma_dot(cfg, a.data(), b.data(), sa.data(), sb.data(), c);
}

// ---------------------------------------------------------------------------------------------
// Independent reference

constexpr int kDen = 440;  // exact values are held as cpp_int numerators over 2^kDen

cpp_int pow2(int n) { return cpp_int(1) << n; }

// v * 2^kDen exactly (v a finite dyadic with exponent >= -kDen).
cpp_int to_fixed(double v) {
  if (v == 0.0) return 0;
  int ex;
  const double fr = std::frexp(v, &ex);
  cpp_int r = static_cast<int64_t>(std::ldexp(fr, 53));
  const int sh = ex - 53 + kDen;
  if (sh >= 0) return r << sh;
  const cpp_int d = pow2(-sh);
  EXPECT_EQ(r % d, 0) << "to_fixed: value below the reference grid";
  return r / d;
}

// N * 2^-kDen rounded to FP32 (RN-even or toward zero with MMA-Sim's +0 for a truncated zero).
uint32_t ref_round(const cpp_int& n, bool rn) {
  if (n == 0) return 0;
  const bool neg = n < 0;
  const cpp_int a = neg ? cpp_int(-n) : n;
  const int e = static_cast<int>(boost::multiprecision::msb(a)) - kDen;
  const uint32_t sign = neg ? 0x80000000u : 0u;
  if (e >= 128) return sign | kPInf;
  const int q = std::max(e, -126) - 23;  // exponent of the last kept place
  const int sh = q + kDen;
  cpp_int m = a >> sh;
  const cpp_int rem = a - (m << sh);
  if (rn) {
    const cpp_int half = pow2(sh - 1);
    if (rem > half || (rem == half && (m & 1) != 0)) m += 1;
  }
  if (m == 0) return rn ? sign : 0u;
  const double val = std::ldexp(m.convert_to<double>(), q);
  if (val >= std::ldexp(1.0, 128)) return sign | kPInf;
  return sign | fb(static_cast<float>(val));
}

// Python's extract_significand_exponent: significand in [1, 2), the dtype's minimum exponent for
// subnormals, exponent -126 for a zero.
struct SigExp {
  double s;
  int e;
};
SigExp extract(double x, int min_e) {
  int ex;
  double s = std::frexp(x, &ex) * 2.0;
  ex -= 1;
  if (ex < min_e) {
    s = std::ldexp(s, ex - min_e);
    ex = min_e;
  }
  if (s == 0.0) ex = -126;
  return {s, ex};
}

// MMA-Sim's dtype_min_exponent for the element types (FP6 / FP4 elements of kind::f8f6f4 are not
// run by MMA-Sim; their minimum normal exponent 1 - bias is used, as for the FP8 types).
int min_exp_of(const fp4sim::ElemFormat& f) {
  const std::string n(f.name);
  if (n == "e4m3") return -6;
  if (n == "e5m2") return -14;
  if (n == "e2m3" || n == "e2m1") return 0;
  if (n == "e3m2") return -2;
  if (n == "ue4m3") return -6;
  if (n == "ue8m0") return -127;
  ADD_FAILURE() << "no min exponent for " << n;
  return 0;
}

// fused_sum: every term truncated to n_frac bits below the largest exponent, summed exactly.
// Returns the sum as a numerator over 2^kDen.
cpp_int fused_sum(const std::vector<SigExp>& t, int n_frac) {
  int max_e = std::numeric_limits<int>::min();
  for (const auto& x : t) max_e = std::max(max_e, x.e);
  cpp_int s = 0;
  for (const auto& x : t) {
    const cpp_int f = to_fixed(x.s);  // x.s * 2^kDen
    const int sh = n_frac + x.e - max_e - kDen;
    s += sh >= 0 ? cpp_int(f << sh) : cpp_int(f / pow2(-sh));  // cpp_int '/' truncates toward 0
  }
  return s << (max_e - n_frac + kDen);
}

double elem_value(const MmaConfig& cfg, bool is_a, uint8_t code, uint32_t word, int k) {
  const fp4sim::ElemFormat& f = is_a ? *cfg.elem_a : *cfg.elem_b;
  const uint8_t c = f.bits >= 8 ? code : static_cast<uint8_t>(code & ((1u << f.bits) - 1u));
  double v = fp4sim::decode(f, c);
  if (cfg.kind->scale_word32) v = std::ldexp(v, fp4sim::hif4_level(word, k % 64));
  return v;
}

double scale_value(const MmaConfig& cfg, uint32_t code) {
  // MMA-Sim reads a UE4M3 scale as float8_e4m3fn and takes abs(): the sign bit is ignored.
  if (std::string(cfg.scale->name) == "ue4m3") code &= 0x7Fu;
  return fp4sim::decode(*cfg.scale, code & 0xFFu);
}

uint32_t ref_blackwell(const MmaConfig& cfg, const uint8_t* a, const uint8_t* b, const uint32_t* sa,
                       const uint32_t* sb, uint32_t cbits) {
  const int K = cfg.kind->k;
  const float c = bf(cbits);
  if (K == 64) {  // nv_fused_dot_add_with_block_scale
    const int ns = K / cfg.block;
    for (int i = 0; i < ns; ++i) {
      if (std::isnan(scale_value(cfg, sa[i])) || std::isnan(scale_value(cfg, sb[i]))) return kNaN;
    }
    if (std::isnan(c)) return kNaN;
    if (std::isinf(c)) return cbits;  // fp4sim's choice where MMA-Sim raises
    const int smin = min_exp_of(*cfg.scale);
    std::vector<SigExp> t{extract(c, -126)};
    for (int k = 0; k < K; k += 16) {
      double s = 0;  // exact: a sum of 16 products of E2M1 values
      for (int j = k; j < k + 16; ++j) s += elem_value(cfg, true, a[j], 0, j) * elem_value(cfg, false, b[j], 0, j);
      const SigExp s0 = extract(scale_value(cfg, sa[k / cfg.block]), smin);
      const SigExp s1 = extract(scale_value(cfg, sb[k / cfg.block]), smin);
      t.push_back({s * s0.s * s1.s, s0.e + s1.e});
    }
    return ref_round(fused_sum(t, 35), false);
  }
  // K = 32: nv_fused_dot_add with scales; NaN / Inf decided on the float64 sum first.
  const double va = scale_value(cfg, sa[0]), vb = scale_value(cfg, sb[0]);
  double sum = 0;
  for (int k = 0; k < K; ++k) {
    sum += elem_value(cfg, true, a[k], 0, k) * elem_value(cfg, false, b[k], 0, k) * va * vb;
  }
  sum += static_cast<double>(c);
  if (std::isnan(sum)) return kNaN;
  if (std::isinf(sum)) return sum > 0 ? kPInf : kNInf;
  const int esa = extract(va, -127).e, esb = extract(vb, -127).e;
  std::vector<SigExp> t{extract(c, -126)};
  for (int k = 0; k < K; ++k) {
    const SigExp x = extract(elem_value(cfg, true, a[k], 0, k), min_exp_of(*cfg.elem_a));
    const SigExp y = extract(elem_value(cfg, false, b[k], 0, k), min_exp_of(*cfg.elem_b));
    t.push_back({x.s * y.s, x.e + y.e + esa + esb});
  }
  return ref_round(fused_sum(t, 25), false);
}

// Exact model over K elements: IEEE specials, exact sum, one RN; -0 only if every term is -0.
uint32_t ref_exact(const MmaConfig& cfg, const uint8_t* a, const uint8_t* b, const uint32_t* sa,
                   const uint32_t* sb, uint32_t cbits, int K) {
  double special = bf(cbits);  // NaN / Inf detection through IEEE double arithmetic
  cpp_int s = 0;
  bool all_neg_zero = cbits == 0x80000000u;
  for (int k = 0; k < K; ++k) {
    const uint32_t wa = sa[k / cfg.block], wb = sb[k / cfg.block];
    const double p = elem_value(cfg, true, a[k], wa, k) * elem_value(cfg, false, b[k], wb, k) *
                     scale_value(cfg, wa) * scale_value(cfg, wb);
    special += p;
    if (!(p == 0.0 && std::signbit(p))) all_neg_zero = false;
    if (std::isfinite(p)) s += to_fixed(p);
  }
  if (std::isnan(special)) return kNaN;
  if (std::isinf(special)) return special > 0 ? kPInf : kNInf;
  s += to_fixed(bf(cbits));
  if (s == 0) return all_neg_zero ? 0x80000000u : 0u;
  return ref_round(s, true);
}

// AscendHif4 over K (a multiple of 64): exact group sums, RN into FP32 every G groups (0 = end).
uint32_t ref_ascend(const MmaConfig& cfg, const uint8_t* a, const uint8_t* b, const uint32_t* sa,
                    const uint32_t* sb, uint32_t cbits, int K, int G) {
  const int ng = K / 64;
  for (int g = 0; g < ng; ++g) {
    if ((sa[g] & 0xFF) == 0xFF || (sb[g] & 0xFF) == 0xFF) return kNaN;
  }
  if (std::isnan(bf(cbits))) return kNaN;
  if (G == 0) G = ng;
  uint32_t acc = cbits;
  for (int g0 = 0; g0 < ng; g0 += G) {
    if (std::isinf(bf(acc))) break;
    cpp_int s = to_fixed(bf(acc));
    for (int k = g0 * 64; k < std::min(ng, g0 + G) * 64; ++k) {
      const uint32_t wa = sa[k / 64], wb = sb[k / 64];
      s += to_fixed(elem_value(cfg, true, a[k], wa, k) * elem_value(cfg, false, b[k], wb, k) *
                    scale_value(cfg, wa) * scale_value(cfg, wb));
    }
    acc = ref_round(s, true);
  }
  return acc;
}

// Random FP32 bits for C: zeros, specials, subnormals and values near `e_mid`.
uint32_t random_c(std::mt19937_64& rng, int e_mid) {
  const uint32_t r = static_cast<uint32_t>(rng());
  const uint32_t sign = (r & 1u) << 31;
  switch ((r >> 1) % 20) {
    case 0: return sign;  // +-0
    case 1: return (r >> 8) % 3 == 0 ? kNaN : sign | kPInf;
    case 2: return sign | ((r >> 8) & 0x7FFFFFu);  // subnormal
    case 3: return static_cast<uint32_t>(rng());   // anything
    default: {
      int e = e_mid + static_cast<int>((r >> 8) % 61) - 30;
      e = std::clamp(e, -126, 127);
      return sign | static_cast<uint32_t>(e + 127) << 23 | static_cast<uint32_t>(rng() & 0x7FFFFFu);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Config table and validation

TEST(MmaConfig, KindTableAndDefaults) {
  const MmaConfig c = fp4sim::make_mma_config(MmaKindId::Mxf4Nvf4);
  EXPECT_EQ(c.kind->k, 64);
  EXPECT_EQ(c.kind->group, 16);
  EXPECT_EQ(c.kind->frac_bits, 35);
  EXPECT_EQ(c.elem_a->name, "e2m1");
  EXPECT_EQ(c.scale->name, "ue4m3");
  EXPECT_EQ(c.block, 16);
  EXPECT_EQ(c.model, Model::Blackwell);
  const MmaConfig f = fp4sim::make_mma_config(MmaKindId::Mxf8f6f4, &fp4sim::kE5M2, &fp4sim::kE2M3);
  EXPECT_EQ(f.kind->k, 32);
  EXPECT_EQ(f.kind->frac_bits, 25);
  EXPECT_EQ(f.elem_a->name, "e5m2");
  EXPECT_EQ(f.elem_b->name, "e2m3");
  EXPECT_EQ(f.block, 32);
  const MmaConfig h = fp4sim::make_mma_config(MmaKindId::Hif4);
  EXPECT_EQ(h.model, Model::AscendHif4);
  EXPECT_EQ(h.block, 64);
  EXPECT_EQ(fp4sim::all_mma_kinds().size(), 4u);
  for (const auto& k : fp4sim::all_mma_kinds()) {
    MmaKindId id;
    ASSERT_TRUE(fp4sim::parse_mma_kind(k.name, id));
    EXPECT_EQ(id, k.id);
  }
  for (Model m : {Model::Exact, Model::Fp32Seq, Model::Blackwell, Model::AscendHif4}) {
    Model out;
    ASSERT_TRUE(fp4sim::parse_model(fp4sim::model_name(m), out));
    EXPECT_EQ(out, m);
  }
  Model out;
  EXPECT_FALSE(fp4sim::parse_model("fast", out));
  MmaKindId kid;
  EXPECT_FALSE(fp4sim::parse_mma_kind("mxf6", kid));
}

TEST(MmaConfig, RejectsWhatTheKindDoesNotAllow) {
  using fp4sim::make_mma_config;
  EXPECT_THROW(make_mma_config(MmaKindId::Mxf4, nullptr, nullptr, &fp4sim::kUE4M3), std::invalid_argument);
  EXPECT_THROW(make_mma_config(MmaKindId::Mxf4, nullptr, nullptr, nullptr, 16), std::invalid_argument);
  EXPECT_THROW(make_mma_config(MmaKindId::Mxf4Nvf4, &fp4sim::kE4M3), std::invalid_argument);
  EXPECT_THROW(make_mma_config(MmaKindId::Mxf8f6f4, nullptr, nullptr, &fp4sim::kUE4M3), std::invalid_argument);
  EXPECT_NO_THROW(make_mma_config(MmaKindId::Mxf4Nvf4, nullptr, nullptr, &fp4sim::kUE8M0, 32));
  EXPECT_NO_THROW(make_mma_config(MmaKindId::Mxf4Nvf4, nullptr, nullptr, &fp4sim::kUE8M0, 16));
  MmaConfig h = make_mma_config(MmaKindId::Hif4);
  EXPECT_THROW(fp4sim::validate_mma_config(h, Model::Blackwell), std::invalid_argument);
  EXPECT_NO_THROW(fp4sim::validate_mma_config(h, Model::Exact));
  MmaConfig n = make_mma_config(MmaKindId::Mxf4);
  EXPECT_THROW(fp4sim::validate_mma_config(n, Model::AscendHif4), std::invalid_argument);
  h.hif4_round_groups = -1;
  EXPECT_THROW(fp4sim::validate_mma_config(h, Model::AscendHif4), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Rounding building blocks

TEST(MmaRound, DirectedCases) {
  using fp4sim::round_to_fp32;
  // 3 * 2^-150 = 1.5 * 2^-149: RN ties to even -> 2 * 2^-149; RZ -> 2^-149.
  EXPECT_EQ(round_to_fp32(false, 3, -150, false, true), 0x00000002u);
  EXPECT_EQ(round_to_fp32(false, 3, -150, false, false), 0x00000001u);
  // 2^-150 = half the smallest subnormal: RN tie to even -> 0 (signed), sticky -> 2^-149; RZ -> +0.
  EXPECT_EQ(round_to_fp32(false, 1, -150, false, true), 0x00000000u);
  EXPECT_EQ(round_to_fp32(true, 1, -150, false, true), 0x80000000u);
  EXPECT_EQ(round_to_fp32(true, 1, -150, true, true), 0x80000001u);
  EXPECT_EQ(round_to_fp32(true, 1, -150, false, false), 0x00000000u);
  // (2^24 - 1) * 2^104 = FLT_MAX.
  EXPECT_EQ(round_to_fp32(false, (1u << 24) - 1, 104, false, true), 0x7F7FFFFFu);
  // (2^25 - 1) * 2^103 = 2^128 - 2^103: a tie between FLT_MAX (odd) and 2^128 -> RN Inf; RZ FLT_MAX.
  EXPECT_EQ(round_to_fp32(false, (1u << 25) - 1, 103, false, true), kPInf);
  EXPECT_EQ(round_to_fp32(true, (1u << 25) - 1, 103, false, false), 0xFF7FFFFFu);
  // 2^128 is Inf even toward zero (MMA-Sim converts an exponent-128 double to float32).
  EXPECT_EQ(round_to_fp32(false, 1, 128, false, false), kPInf);
  // (2^23 - 1) * 2^-149 + a tail: the largest subnormal, RZ keeps it; RN with half+ rounds up into
  // the smallest normal: mag = (2^24 - 1) at e0 = -150 -> 0x7FFFFF.1 (binary) -> RN 0x800000.
  EXPECT_EQ(round_to_fp32(false, (1u << 24) - 1, -150, false, false), 0x007FFFFFu);
  EXPECT_EQ(round_to_fp32(false, (1u << 24) - 1, -150, false, true), 0x00800000u);
  // 1 + 2^-24 (tie, even -> 1.0) and 1 + 2^-24 + tail (-> 1 + 2^-23).
  EXPECT_EQ(round_to_fp32(false, (uint64_t{1} << 24) + 1, -24, false, true), 0x3F800000u);
  EXPECT_EQ(round_to_fp32(false, (uint64_t{1} << 24) + 1, -24, true, true), 0x3F800001u);
  // A 64-bit magnitude far above the kept bits.
  EXPECT_EQ(round_to_fp32(false, ~uint64_t{0}, -64, false, false), 0x3F7FFFFFu);
  EXPECT_EQ(round_to_fp32(false, ~uint64_t{0}, -64, false, true), 0x3F800000u);
}

TEST(MmaRound, ExactAccumulatorMatchesBigIntegers) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 3000; ++trial) {
    fp4sim::ExactAccumulator acc;
    cpp_int ref = 0;
    const int n = 1 + static_cast<int>(rng() % 40);
    // Narrow exponent windows make cancellations and ties likely; wide ones test the range.
    const int lo = -352 + static_cast<int>(rng() % 700);
    const int span = 1 + static_cast<int>(rng() % ((trial % 3 == 0) ? 400 : 40));
    for (int i = 0; i < n; ++i) {
      int64_t m = static_cast<int64_t>(rng() >> (32 + rng() % 32));
      if (rng() & 1) m = -m;
      const int e = std::min(lo + static_cast<int>(rng() % span), 416 - 32);
      acc.add(m, e);
      ref += cpp_int(m) << (e + kDen);  // kDen >= 352
    }
    if (trial % 5 == 0) {  // exact cancellation
      acc.add(-1, lo);
      acc.add(1, lo);
    }
    EXPECT_EQ(acc.sign(), ref == 0 ? 0 : (ref < 0 ? -1 : 1));
    EXPECT_EQ(acc.round_fp32(true), ref_round(ref, true)) << trial;
    EXPECT_EQ(acc.round_fp32(false), ref_round(ref, false)) << trial;
  }
  fp4sim::ExactAccumulator acc;
  EXPECT_THROW(acc.add(1, -353), std::out_of_range);
  EXPECT_THROW(acc.add(int64_t{1} << 32, 0), std::out_of_range);
  acc.add_float(1.5f);
  acc.add_float(-0x1p-149f);
  EXPECT_EQ(acc.round_fp32(false), 0x3FBFFFFFu);  // 1.5 - 2^-149 toward zero
  EXPECT_EQ(acc.round_fp32(true), 0x3FC00000u);
}

// ---------------------------------------------------------------------------------------------
// Hand-derived single-instruction cases

TEST(MmaHand, AllOnesEveryModel) {
  // 64 products 1 * 1 with unit scales: 64.0 = 0x42800000 in every model.
  const std::vector<uint8_t> a(64, kF1), b(64, kF1);
  for (Model m : {Model::Exact, Model::Fp32Seq, Model::Blackwell}) {
    EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4Nvf4, m), a, b, {kS1, kS1, kS1, kS1}, {kS1, kS1, kS1, kS1}, 0),
              0x42800000u);
    EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4, m), a, b, {127, 127}, {127, 127}, 0), 0x42800000u);
  }
  // mxf8f6f4: 32 products of E4M3 1.0 (0x38): 32.0 = 0x42000000.
  const std::vector<uint8_t> e(32, 0x38);
  for (Model m : {Model::Exact, Model::Fp32Seq, Model::Blackwell}) {
    EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf8f6f4, m), e, e, {127}, {127}, 0), 0x42000000u);
  }
  // HiF4: 64 products of S1P2 1.0 (c = 4) with E6M2 1.0 (E = 48, M = 0: 0xC0): 64.0.
  const std::vector<uint8_t> h(64, 0x4);
  for (Model m : {Model::Exact, Model::Fp32Seq, Model::AscendHif4}) {
    EXPECT_EQ(dot(cfg_of(MmaKindId::Hif4, m), h, h, {0xC0}, {0xC0}, 0), 0x42800000u);
  }
}

TEST(MmaHand, Nvf4ScalePerGroup) {
  // One product 1 * 1 at the start of each group; group scales 1, 2, 0.5, 448 (UE4M3 0x38, 0x40,
  // 0x30, 0x7E): 1 + 2 + 0.5 + 448 = 451.5 (exact in FP32: 1.763671875 * 2^8).
  std::vector<uint8_t> a(64, 0), b(64, 0);
  for (int g = 0; g < 4; ++g) a[16 * g] = b[16 * g] = kF1;
  for (Model m : {Model::Exact, Model::Fp32Seq, Model::Blackwell}) {
    EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4Nvf4, m), a, b, {0x38, 0x40, 0x30, 0x7E}, {kS1, kS1, kS1, kS1}, 0),
              fb(451.5f));
  }
  // Block 32 with UE8M0: groups 0,1 share scale 0 (2^1 = code 128), groups 2,3 scale 1 (2^-1 =
  // code 126): 2 + 2 + 0.5 + 0.5 = 5.0 = 0x40A00000.
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4, Model::Blackwell), a, b, {128, 126}, {127, 127}, 0), 0x40A00000u);
}

TEST(MmaHand, ZeroProductGroupsSetTheAlignment) {
  // SPEC §4 / MMA-Sim: products all zero, unit scales -> each group term has exponent 0, so
  // max_e = 0 and C = 2^-40 (exponent -40) is truncated to 35 fractional bits below 2^0 -> +0.
  // The exact model keeps C: 2^-40 = (127 - 40) << 23 = 0x2B800000.
  const std::vector<uint8_t> a(64, 0), b(64, kF1);
  const std::vector<uint32_t> s(4, kS1);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4Nvf4, Model::Blackwell), a, b, s, s, 0x2B800000u), 0u);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4Nvf4, Model::Exact), a, b, s, s, 0x2B800000u), 0x2B800000u);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4Nvf4, Model::Fp32Seq), a, b, s, s, 0x2B800000u), 0x2B800000u);
}

TEST(MmaHand, TruncationBoundary35Bits) {
  // Group 0: +1*1, group 1: -1*1 (exact cancellation), unit scales: max_e = 0, grid 2^-35.
  std::vector<uint8_t> a(64, 0), b(64, 0);
  a[0] = kF1;
  a[16] = kF1 | kNeg;
  b[0] = b[16] = kF1;
  const std::vector<uint32_t> s(4, kS1);
  const MmaConfig bw = cfg_of(MmaKindId::Mxf4Nvf4, Model::Blackwell);
  const MmaConfig ex = cfg_of(MmaKindId::Mxf4Nvf4, Model::Exact);
  // 2^-35 = (127 - 35) << 23 = 0x2E000000: exactly on the grid -> kept.
  EXPECT_EQ(dot(bw, a, b, s, s, 0x2E000000u), 0x2E000000u);
  // Just below (2^-35 * (1 - 2^-24) = 0x2DFFFFFF): truncated to 0 -> +0 (also for the negative).
  EXPECT_EQ(dot(bw, a, b, s, s, 0x2DFFFFFFu), 0u);
  EXPECT_EQ(dot(bw, a, b, s, s, 0xADFFFFFFu), 0u);
  // Just above (2^-35 * (1 + 2^-23) = 0x2E000001): truncated to 2^-35, toward zero for negatives.
  EXPECT_EQ(dot(bw, a, b, s, s, 0x2E000001u), 0x2E000000u);
  EXPECT_EQ(dot(bw, a, b, s, s, 0xAE000001u), 0xAE000000u);
  // 1.5 * 2^-35 = 0x2E400000 -> 2^-35.
  EXPECT_EQ(dot(bw, a, b, s, s, 0x2E400000u), 0x2E000000u);
  // The exact model returns C itself (1 - 1 = 0 exactly).
  for (uint32_t c : {0x2E000000u, 0x2DFFFFFFu, 0xADFFFFFFu, 0x2E000001u, 0x2E400000u}) {
    EXPECT_EQ(dot(ex, a, b, s, s, c), c);
  }
}

TEST(MmaHand, TruncationBoundary25Bits) {
  // E4M3 1*1 + (-1)*1 (0x38, 0xB8), unit UE8M0 scales: max_e = 0 (zero products sit at
  // -126 + ... < 0), grid 2^-25.
  std::vector<uint8_t> a(32, 0), b(32, 0);
  a[0] = 0x38;
  a[1] = 0xB8;
  b[0] = b[1] = 0x38;
  const MmaConfig bw = cfg_of(MmaKindId::Mxf8f6f4, Model::Blackwell);
  // 2^-25 = (127 - 25) << 23 = 0x33000000: kept; just below -> +0; just above -> 2^-25.
  EXPECT_EQ(dot(bw, a, b, {127}, {127}, 0x33000000u), 0x33000000u);
  EXPECT_EQ(dot(bw, a, b, {127}, {127}, 0x32FFFFFFu), 0u);
  EXPECT_EQ(dot(bw, a, b, {127}, {127}, 0x33000001u), 0x33000000u);
  EXPECT_EQ(dot(bw, a, b, {127}, {127}, 0xB3000001u), 0xB3000000u);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf8f6f4, Model::Exact), a, b, {127}, {127}, 0x32FFFFFFu), 0x32FFFFFFu);
}

TEST(MmaHand, ZeroFp8ElementWithHugeScalesTruncatesC) {
  // a = 0 everywhere, b[0] = 448 (E4M3 0x7E, exponent 8), scales 2^127 (code 254). The zero
  // product at k = 0 has exponent -126 + 8 + 127 + 127 = 136 (MMA-Sim gives a zero exponent -126),
  // so C = 1.0 is aligned 136 binades down, truncated to 25 fractional bits -> 0 -> +0.
  std::vector<uint8_t> a(32, 0), b(32, 0);
  b[0] = 0x7E;
  const MmaConfig bw = cfg_of(MmaKindId::Mxf8f6f4, Model::Blackwell);
  EXPECT_EQ(dot(bw, a, b, {254}, {254}, 0x3F800000u), 0u);
  // With unit scales the zero product sits at -118 < 0: C survives.
  EXPECT_EQ(dot(bw, a, b, {127}, {127}, 0x3F800000u), 0x3F800000u);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf8f6f4, Model::Exact), a, b, {254}, {254}, 0x3F800000u), 0x3F800000u);
}

TEST(MmaHand, E4M3SubnormalExponentIsMinus6) {
  // 2^-9 (E4M3 0x01, subnormal: significand 0.125, exponent -6) and -2^-9 (0x81) times 1: they
  // cancel; max_e = -6, grid 2^-31. C = 2^-33 (0x2F000000) is truncated away -> +0. (Had the
  // subnormal been normalized to exponent -9, the grid would be 2^-34 and C would survive.)
  std::vector<uint8_t> a(32, 0), b(32, 0);
  a[0] = 0x01;
  a[1] = 0x81;
  b[0] = b[1] = 0x38;
  const MmaConfig bw = cfg_of(MmaKindId::Mxf8f6f4, Model::Blackwell);
  EXPECT_EQ(dot(bw, a, b, {127}, {127}, 0x2F000000u), 0u);
  // C = 2^-31 (0x30000000) is on the grid: kept.
  EXPECT_EQ(dot(bw, a, b, {127}, {127}, 0x30000000u), 0x30000000u);
  // E5M2 subnormal 2^-16 (0x01, exponent -14, significand 0.25): grid 2^-39 keeps 2^-39
  // (0x2C000000) and drops 2^-40.
  std::vector<uint8_t> a5(32, 0), b5(32, 0);
  a5[0] = 0x01;
  a5[1] = 0x81;
  b5[0] = b5[1] = 0x3C;  // E5M2 1.0
  const MmaConfig bw5 = cfg_of(MmaKindId::Mxf8f6f4, Model::Blackwell, &fp4sim::kE5M2, &fp4sim::kE5M2);
  EXPECT_EQ(dot(bw5, a5, b5, {127}, {127}, 0x2C000000u), 0x2C000000u);
  EXPECT_EQ(dot(bw5, a5, b5, {127}, {127}, 0x2B800000u), 0u);
}

TEST(MmaHand, ZeroUe4m3ScaleCountsAtMinus126) {
  // Every A scale is zero (code 0x00), B scales 448 (0x7E, exponent 8): each group term is 0 with
  // exponent -126 + 8 = -118. C = 2^-100 (0x0D800000) is the largest exponent and passes. (Had a
  // zero scale counted at the subnormal exponent -6, max_e would be 2 and C would be truncated.)
  const std::vector<uint8_t> a(64, kF6), b(64, kF6);
  const MmaConfig bw = cfg_of(MmaKindId::Mxf4Nvf4, Model::Blackwell);
  EXPECT_EQ(dot(bw, a, b, {0, 0, 0, 0}, {0x7E, 0x7E, 0x7E, 0x7E}, 0x0D800000u), 0x0D800000u);
  // A zero scale with a nonzero C below the other groups' grid: group 1 has unit scales (exponent
  // 0), so C = 2^-100 is truncated -> its products 16 * 36 = 576 alone remain.
  EXPECT_EQ(dot(bw, a, b, {0, kS1, 0, 0}, {0x7E, kS1, 0x7E, 0x7E}, 0x0D800000u), fb(576.0f));
}

TEST(MmaHand, Ue4m3SignIgnoredAndNaNScales) {
  const std::vector<uint8_t> a(64, kF1), b(64, kF1);
  const MmaConfig bw = cfg_of(MmaKindId::Mxf4Nvf4, Model::Blackwell);
  const std::vector<uint32_t> s(4, kS1);
  // 0xB8 = 0x38 with the sign bit: read as 1.0.
  EXPECT_EQ(dot(bw, a, b, {0xB8, kS1, kS1, kS1}, s, 0), 0x42800000u);
  // 0x80 = "-0": a zero scale -> group 0 contributes 0: 48.0.
  EXPECT_EQ(dot(bw, a, b, {0x80, kS1, kS1, kS1}, s, 0), fb(48.0f));
  // UE4M3 NaN 0x7F, and 0xFF (NaN with the ignored sign bit), in either operand -> 0x7FFFFFFF.
  for (Model m : {Model::Blackwell, Model::Exact, Model::Fp32Seq}) {
    const MmaConfig c = cfg_of(MmaKindId::Mxf4Nvf4, m);
    EXPECT_EQ(dot(c, a, b, {kS1, 0x7F, kS1, kS1}, s, 0), kNaN);
    EXPECT_EQ(dot(c, a, b, s, {kS1, kS1, kS1, 0xFF}, 0), kNaN);
    EXPECT_EQ(dot(c, a, b, s, s, 0xFFC00000u), kNaN);  // NaN C (negative quiet NaN) -> canonical
  }
  // UE8M0 NaN 0xFF.
  const MmaConfig m4 = cfg_of(MmaKindId::Mxf4, Model::Blackwell);
  EXPECT_EQ(dot(m4, a, b, {127, 0xFF}, {127, 127}, 0), kNaN);
  // Even when the NaN scale multiplies only zeros.
  const std::vector<uint8_t> z(64, 0);
  EXPECT_EQ(dot(m4, z, z, {127, 0xFF}, {127, 127}, 0), kNaN);
  std::vector<uint8_t> e(32, 0x38);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf8f6f4, Model::Blackwell), e, e, {0xFF}, {127}, 0), kNaN);
}

TEST(MmaHand, SubnormalResults) {
  // mxf4, every scale 2^-75 (UE8M0 code 52): group exponent -150. Group 0: 6*6 + 1.5*1 = 37.5.
  // C = +0 has exponent -126 = max_e, grid 2^-161 keeps the term: 37.5 * 2^-150 = 18.75 * 2^-149.
  // Blackwell truncates to 18 * 2^-149 = 0x00000012; exact RN gives 19 -> 0x00000013.
  std::vector<uint8_t> a(64, 0), b(64, 0);
  a[0] = kF6;
  b[0] = kF6;
  a[1] = kF1_5;
  b[1] = kF1;
  const std::vector<uint32_t> s{52, 52};
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4, Model::Blackwell), a, b, s, s, 0), 0x00000012u);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4, Model::Exact), a, b, s, s, 0), 0x00000013u);
  a[0] |= kNeg;
  a[1] |= kNeg;
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4, Model::Blackwell), a, b, s, s, 0), 0x80000012u);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4, Model::Exact), a, b, s, s, 0), 0x80000013u);
  // Below the smallest subnormal: 0.25 * 2^-150 truncates to +0 even when negative.
  std::vector<uint8_t> t(64, 0), u(64, 0);
  t[0] = kF0_5 | kNeg;
  u[0] = kF0_5;
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4, Model::Blackwell), t, u, s, s, 0), 0u);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4, Model::Exact), t, u, s, s, 0), 0x80000000u);  // RN: -0
}

TEST(MmaHand, OverflowAndFltMax) {
  // C = FLT_MAX = (2^24 - 1) * 2^104, product 2 * 1 * 2^51 * 2^51 = 2^103 (UE8M0 code 178 = 2^51).
  // Sum 2^128 - 2^103: Blackwell truncates -> FLT_MAX; exact RN: a tie with FLT_MAX odd -> Inf;
  // fp32-seq: fma(2^52, 2^51, FLT_MAX) rounds the same tie -> Inf.
  std::vector<uint8_t> a(64, 0), b(64, 0);
  a[0] = kF2;
  b[0] = kF1;
  const std::vector<uint32_t> s{178, 178};
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4, Model::Blackwell), a, b, s, s, 0x7F7FFFFFu), 0x7F7FFFFFu);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4, Model::Exact), a, b, s, s, 0x7F7FFFFFu), kPInf);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4, Model::Fp32Seq), a, b, s, s, 0x7F7FFFFFu), kPInf);
  // Product 4 * 2^102 = 2^104: the sum is exactly 2^128 -> Inf in every model.
  a[0] = kF4;
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4, Model::Blackwell), a, b, s, s, 0x7F7FFFFFu), kPInf);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4, Model::Exact), a, b, s, s, 0x7F7FFFFFu), kPInf);
  // Huge scales alone: 64 * 36 * 2^254 -> +Inf / -Inf.
  const std::vector<uint8_t> big(64, kF6), nbig(64, kF6 | kNeg);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4, Model::Blackwell), big, big, {254, 254}, {254, 254}, 0), kPInf);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4, Model::Blackwell), nbig, big, {254, 254}, {254, 254}, 0), kNInf);
}

TEST(MmaHand, Mxf8f6f4OverflowGivesInf) {
  // SPEC §4 says Inf arises only from C for K = 32; in MMA-Sim the final float32 conversion also
  // overflows: 32 * 448 * 448 * 2^127 * 2^127 >= 2^128 -> +Inf (and E5M2 Inf elements give Inf).
  const std::vector<uint8_t> a(32, 0x7E), b(32, 0x7E), nb(32, 0xFE);
  const MmaConfig bw = cfg_of(MmaKindId::Mxf8f6f4, Model::Blackwell);
  EXPECT_EQ(dot(bw, a, b, {254}, {254}, 0), kPInf);
  EXPECT_EQ(dot(bw, a, nb, {254}, {254}, 0), kNInf);
  // 448 * 448 * 2^-20 * 2^-20 * 32 = 1.75^2 * 2^16 * 2^-40 * 2^5 = 3.0625 * 2^-19: finite, exact.
  EXPECT_EQ(dot(bw, a, b, {107}, {107}, 0), fb(std::ldexp(3.0625f, -19)));
}

TEST(MmaHand, Fp6SubnormalExponents) {
  // FP6 elements in kind::f8f6f4 (MMA-Sim does not run them; fp4sim extends its rule: a
  // subnormal counts at the format's minimum exponent 1 - bias). E3M2 0x01 = 2^-4 (significand
  // 0.25, exponent -2) and 0x21 = -2^-4, times E2M3 1.0 (0x08, exponent 0): they cancel, max_e =
  // -2, grid 2^-27: C = 2^-27 (0x32000000) is kept, C = 2^-28 (0x31800000) is dropped.
  std::vector<uint8_t> a(32, 0), b(32, 0);
  a[0] = 0x01;
  a[1] = 0x21;
  b[0] = b[1] = 0x08;
  const MmaConfig bw = cfg_of(MmaKindId::Mxf8f6f4, Model::Blackwell, &fp4sim::kE3M2, &fp4sim::kE2M3);
  EXPECT_EQ(dot(bw, a, b, {127}, {127}, 0x32000000u), 0x32000000u);
  EXPECT_EQ(dot(bw, a, b, {127}, {127}, 0x31800000u), 0u);
  // E2M1 0.5 (0x1, subnormal at exponent 0, significand 0.5) in the same role: grid 2^-25.
  const MmaConfig b4 = cfg_of(MmaKindId::Mxf8f6f4, Model::Blackwell, &fp4sim::kE2M1, &fp4sim::kE2M3);
  std::vector<uint8_t> a4(32, 0);
  a4[0] = 0x1;
  a4[1] = 0x9;
  EXPECT_EQ(dot(b4, a4, b, {127}, {127}, 0x33000000u), 0x33000000u);
  EXPECT_EQ(dot(b4, a4, b, {127}, {127}, 0x32800000u), 0u);
}

TEST(MmaHand, InfinitiesAndNaNElements) {
  const std::vector<uint8_t> one(64, kF1);
  const std::vector<uint32_t> s(4, kS1);
  const MmaConfig nv = cfg_of(MmaKindId::Mxf4Nvf4, Model::Blackwell);
  // K = 64: an infinite C passes through (MMA-Sim raises there; fp4sim's documented choice).
  EXPECT_EQ(dot(nv, one, one, s, s, kPInf), kPInf);
  EXPECT_EQ(dot(nv, one, one, s, s, kNInf), kNInf);
  EXPECT_EQ(dot(nv, one, one, {0x7F, kS1, kS1, kS1}, s, kPInf), kNaN);  // NaN scale wins
  // K = 32: decided from the operands (MMA-Sim's float64 pre-check).
  const MmaConfig f8 = cfg_of(MmaKindId::Mxf8f6f4, Model::Blackwell, &fp4sim::kE5M2, &fp4sim::kE4M3);
  std::vector<uint8_t> a(32, 0), b(32, 0x38);
  EXPECT_EQ(dot(f8, a, b, {127}, {127}, kPInf), kPInf);
  EXPECT_EQ(dot(f8, a, b, {127}, {127}, kNInf), kNInf);
  a[3] = 0xFC;  // E5M2 -Inf times 1
  EXPECT_EQ(dot(f8, a, b, {127}, {127}, 0), kNInf);
  EXPECT_EQ(dot(f8, a, b, {127}, {127}, kPInf), kNaN);  // -Inf + Inf
  b[3] = 0x00;                                          // -Inf * 0
  EXPECT_EQ(dot(f8, a, b, {127}, {127}, 0), kNaN);
  a[3] = 0x7E;  // E5M2 NaN
  b[3] = 0x38;
  EXPECT_EQ(dot(f8, a, b, {127}, {127}, 0), kNaN);
  a[3] = 0;
  b[5] = 0x7F;  // E4M3 NaN
  EXPECT_EQ(dot(f8, a, b, {127}, {127}, 0), kNaN);
  // The exact model follows the same IEEE outcomes.
  const MmaConfig fx = cfg_of(MmaKindId::Mxf8f6f4, Model::Exact, &fp4sim::kE5M2, &fp4sim::kE4M3);
  EXPECT_EQ(dot(fx, a, b, {127}, {127}, 0), kNaN);
  b[5] = 0x38;
  a[7] = 0x7C;  // +Inf * 1
  EXPECT_EQ(dot(fx, a, b, {127}, {127}, 0), kPInf);
  EXPECT_EQ(dot(f8, a, b, {127}, {127}, 0), kPInf);
}

TEST(MmaHand, NegativeZero) {
  // Products -0 * 1 (E2M1 code 8) and C = -0. Blackwell: a zero result is +0. Exact and fp32-seq
  // follow IEEE: every term is -0 -> -0.
  const std::vector<uint8_t> a(64, kNeg), b(64, kF1);
  const std::vector<uint32_t> s(4, kS1);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4Nvf4, Model::Blackwell), a, b, s, s, 0x80000000u), 0u);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4Nvf4, Model::Exact), a, b, s, s, 0x80000000u), 0x80000000u);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4Nvf4, Model::Fp32Seq), a, b, s, s, 0x80000000u), 0x80000000u);
  // With one +0 product the sum of zeros is +0.
  std::vector<uint8_t> a2 = a;
  a2[9] = 0;
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4Nvf4, Model::Exact), a2, b, s, s, 0x80000000u), 0u);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4Nvf4, Model::Fp32Seq), a2, b, s, s, 0x80000000u), 0u);
  // Exact cancellation x - x with C = -0: +0 in every model.
  std::vector<uint8_t> c(64, 0);
  c[0] = kF6;
  c[40] = kF6 | kNeg;
  for (Model m : {Model::Exact, Model::Fp32Seq, Model::Blackwell}) {
    EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4Nvf4, m), c, b, s, s, 0x80000000u), 0u);
  }
}

TEST(MmaHand, Hif4NegativeZeroElementUnderFp32Seq) {
  // 64 S1P2 -0 elements (code 0x8) times 1.0 (c = 4, code 0x4), E6M2 scales 1.0 (0xC0), C = -0:
  // fp32-seq is -0 * 1 + -0 ... = -0 (IEEE), exact likewise; the dequantized -0 must keep its sign.
  const std::vector<uint8_t> a(64, 0x8), b(64, 0x4);
  const std::vector<uint32_t> s(1, 0xC0);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Hif4, Model::Fp32Seq), a, b, s, s, 0x80000000u), 0x80000000u);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Hif4, Model::Exact), a, b, s, s, 0x80000000u), 0x80000000u);
}

TEST(MmaHand, TermTruncationTowardZeroAndCDominating) {
  // C = 2^20, one product -0.5 * 0.5 with scales 2^-9 (UE4M3 0x01: significand 0.125, exponent -6):
  // term -0.25 * 2^-18 = -2^-20 with exponent -12; max_e = 20, grid 2^-15: the term truncates
  // toward zero to 0 -> 2^20 = 0x49800000. Exact RN of 2^20 - 2^-20 is also 2^20 (the step below
  // 2^20 is 2^-4), while RZ of the exact sum would be 0x497FFFFF: the truncation is per term.
  std::vector<uint8_t> a(64, 0), b(64, 0);
  a[0] = kF0_5 | kNeg;
  b[0] = kF0_5;
  const std::vector<uint32_t> s(4, 0x01);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4Nvf4, Model::Blackwell), a, b, s, s, 0x49800000u), 0x49800000u);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4Nvf4, Model::Exact), a, b, s, s, 0x49800000u), 0x49800000u);
}

TEST(MmaHand, OrderAndRoundingPointsDiffer) {
  // C = 2^24, products 1 (k = 0) and 0.5 (k = 1), unit scales.
  //  exact: 2^24 + 1.5 -> RN -> 2^24 + 2 = 0x4B800001.
  //  blackwell: group sum 1.5 exact, grid 2^-11, sum 2^24 + 1.5 -> RZ -> 2^24 = 0x4B800000.
  //  fp32-seq: 2^24 + 1 -> tie to even 2^24; 2^24 + 0.5 -> 2^24 = 0x4B800000.
  std::vector<uint8_t> a(64, 0), b(64, 0);
  a[0] = kF1;
  a[1] = kF0_5;
  b[0] = b[1] = kF1;
  const std::vector<uint32_t> s(4, kS1);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4Nvf4, Model::Exact), a, b, s, s, 0x4B800000u), 0x4B800001u);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4Nvf4, Model::Blackwell), a, b, s, s, 0x4B800000u), 0x4B800000u);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4Nvf4, Model::Fp32Seq), a, b, s, s, 0x4B800000u), 0x4B800000u);
  // Products 1 and 1: exact and blackwell 2^24 + 2 = 0x4B800001; fp32-seq loses both -> 0x4B800000.
  a[1] = kF1;
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4Nvf4, Model::Exact), a, b, s, s, 0x4B800000u), 0x4B800001u);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4Nvf4, Model::Blackwell), a, b, s, s, 0x4B800000u), 0x4B800001u);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4Nvf4, Model::Fp32Seq), a, b, s, s, 0x4B800000u), 0x4B800000u);
}

TEST(MmaHand, Fp32SeqDequantOverflows) {
  // mxf4: a[0] = 6 with scale 2^127 (code 254), b[0] = 0.5 with scale 2^-127 (code 0).
  // Exact / Blackwell: 6 * 0.5 * 2^0 = 3.0 = 0x40400000. fp32-seq dequantizes 6 * 2^127 -> Inf
  // first (the CUTLASS host reference multiplies element and scale in FP32) -> +Inf.
  std::vector<uint8_t> a(64, 0), b(64, 0);
  a[0] = kF6;
  b[0] = kF0_5;
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4, Model::Exact), a, b, {254, 127}, {0, 127}, 0), 0x40400000u);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4, Model::Blackwell), a, b, {254, 127}, {0, 127}, 0), 0x40400000u);
  EXPECT_EQ(dot(cfg_of(MmaKindId::Mxf4, Model::Fp32Seq), a, b, {254, 127}, {0, 127}, 0), kPInf);
}

TEST(MmaHand, Hif4LevelsAndScales) {
  // Scale word for A: E6M2 1.0 (0xC0) | E1_8 bit 0 (elements 0..7 x2) | E1_16 bit 0 (elements
  // 0..3 x2): element 0 = 1.0 * 4 = 4.0. B: E6M2 1.0, b[0] = 1.75 (c = 7). Product 7.0 = 0x40E00000.
  std::vector<uint8_t> a(64, 0), b(64, 0);
  a[0] = 0x4;
  b[0] = 0x7;
  const uint32_t wa = 0xC0u | (1u << 8) | (1u << 16);
  for (Model m : {Model::Exact, Model::Fp32Seq, Model::AscendHif4}) {
    EXPECT_EQ(dot(cfg_of(MmaKindId::Hif4, m), a, b, {wa}, {0xC0}, 0), 0x40E00000u);
  }
  // Element 4 of A sits outside E1_16 bit 0 but inside E1_8 bit 0: x2 only. a[4] = -1.0 (0xC):
  // 7 - 2 * 1.75 = 3.5 with b[4] = 1.75.
  a[4] = 0xC;
  b[4] = 0x7;
  EXPECT_EQ(dot(cfg_of(MmaKindId::Hif4, Model::AscendHif4), a, b, {wa}, {0xC0}, 0), fb(3.5f));
  // E6M2 0xFE = 1.5 * 2^15 = 49152 on both sides, all levels set on both (x4 each), elements
  // 1.75: 64 * (1.75 * 4)^2 * 49152^2 = 3136 * 2.25 * 2^30 = 7056 * 2^30 (exact in FP32).
  const std::vector<uint8_t> h(64, 0x7);
  const uint32_t wmax = 0xFEu | 0xFFFFFF00u;
  EXPECT_EQ(dot(cfg_of(MmaKindId::Hif4, Model::AscendHif4), h, h, {wmax}, {wmax}, 0),
            fb(std::ldexp(7056.0f, 30)));
  // NaN E6M2 (0xFF) -> NaN in every model.
  for (Model m : {Model::Exact, Model::Fp32Seq, Model::AscendHif4}) {
    EXPECT_EQ(dot(cfg_of(MmaKindId::Hif4, m), h, h, {0xFF}, {0xC0}, 0), kNaN);
  }
}

// ---------------------------------------------------------------------------------------------
// Exhaustive: all 256 element-code pairs through every model

TEST(MmaExhaustive, AllE2M1Pairs) {
  for (MmaKindId kid : {MmaKindId::Mxf4, MmaKindId::Mxf4Nvf4, MmaKindId::Mxf8f6f4}) {
    for (Model m : {Model::Exact, Model::Fp32Seq, Model::Blackwell}) {
      const MmaConfig cfg = cfg_of(kid, m, &fp4sim::kE2M1, &fp4sim::kE2M1);
      const int K = cfg.kind->k;
      const std::vector<uint32_t> s(static_cast<size_t>(K / cfg.block), cfg.scale->name == "ue4m3" ? kS1 : 127u);
      for (uint32_t ca = 0; ca < 16; ++ca) {
        for (uint32_t cb = 0; cb < 16; ++cb) {
          const int pos = static_cast<int>((ca * 16 + cb) % static_cast<uint32_t>(K));  // every position
          std::vector<uint8_t> a(static_cast<size_t>(K), 0), b(static_cast<size_t>(K), 0);
          a[static_cast<size_t>(pos)] = static_cast<uint8_t>(ca);
          b[static_cast<size_t>(pos)] = static_cast<uint8_t>(cb);
          // The product is exact in FP32; a zero product gives +0 in every model (other products
          // are +0, and a Blackwell zero is +0).
          const float p = static_cast<float>(fp4sim::decode(fp4sim::kE2M1, ca) * fp4sim::decode(fp4sim::kE2M1, cb));
          const uint32_t want = p == 0.0f ? 0u : fb(p);
          EXPECT_EQ(dot(cfg, a, b, s, s, 0), want) << cfg.kind->name << " " << fp4sim::model_name(m) << " " << ca << "x" << cb;
        }
      }
    }
  }
}

TEST(MmaExhaustive, AllS1P2PairsWithLevels) {
  for (Model m : {Model::Exact, Model::Fp32Seq, Model::AscendHif4}) {
    const MmaConfig cfg = cfg_of(MmaKindId::Hif4, m);
    for (uint32_t ca = 0; ca < 16; ++ca) {
      for (uint32_t cb = 0; cb < 16; ++cb) {
        const int pos = static_cast<int>(ca * 4 + cb % 4);
        std::vector<uint8_t> a(64, 0), b(64, 0);
        a[static_cast<size_t>(pos)] = static_cast<uint8_t>(ca);
        b[static_cast<size_t>(pos)] = static_cast<uint8_t>(cb);
        // Level bits for A set everywhere (x4), E6M2 0xC1 = 1.25 for B: product
        // (+-ca/4 * 4) * (+-cb/4 * 1.25), exact in FP32.
        const uint32_t wa = 0xC0u | 0xFFFFFF00u;
        const float p = static_cast<float>(fp4sim::decode(fp4sim::kS1P2, ca) * 4.0 * fp4sim::decode(fp4sim::kS1P2, cb) * 1.25);
        EXPECT_EQ(dot(cfg, a, b, {wa}, {0xC1}, 0), p == 0.0f ? 0u : fb(p)) << fp4sim::model_name(m) << " " << ca << "x" << cb;
      }
    }
  }
}

TEST(MmaExhaustive, AllFp8PairsThroughMxf8f6f4) {
  // Every (E4M3, E5M2) code pair (256 x 256) as one product with unit scales: Blackwell and exact
  // both return the exact product (4 x 3 significand bits: exact in FP32), or the IEEE special.
  const MmaConfig bw = cfg_of(MmaKindId::Mxf8f6f4, Model::Blackwell, &fp4sim::kE4M3, &fp4sim::kE5M2);
  const MmaConfig ex = cfg_of(MmaKindId::Mxf8f6f4, Model::Exact, &fp4sim::kE4M3, &fp4sim::kE5M2);
  int checked = 0;
  for (uint32_t ca = 0; ca < 256; ++ca) {
    for (uint32_t cb = 0; cb < 256; ++cb) {
      std::vector<uint8_t> a(32, 0), b(32, 0);
      a[ca % 32] = static_cast<uint8_t>(ca);
      b[ca % 32] = static_cast<uint8_t>(cb);
      const double p = fp4sim::decode(fp4sim::kE4M3, ca) * fp4sim::decode(fp4sim::kE5M2, cb);
      const uint32_t want = std::isnan(p) ? kNaN : (p == 0.0 ? 0u : fb(static_cast<float>(p)));
      ASSERT_EQ(dot(bw, a, b, {127}, {127}, 0), want) << ca << "x" << cb;
      ASSERT_EQ(dot(ex, a, b, {127}, {127}, 0), want) << ca << "x" << cb;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 65536);
}

// ---------------------------------------------------------------------------------------------
// Seeded random cross-checks against the independent reference

struct RandomCase {
  MmaConfig cfg;
  std::vector<uint8_t> a, b;
  std::vector<uint32_t> sa, sb;
  uint32_t c;
};

uint32_t random_scale(std::mt19937_64& rng, const fp4sim::ElemFormat& f) {
  const uint32_t r = static_cast<uint32_t>(rng());
  if (f.name == "ue8m0") return (r & 1) ? (r >> 8) % 256 : 127 + static_cast<uint32_t>((r >> 8) % 21) - 10;
  if (f.name == "ue4m3") return (r & 1) ? (r >> 8) % 256 : (0x30 + (r >> 8) % 24) | ((r >> 16) & 0x80);
  // E6M2 byte + random level bits.
  const uint32_t e = (r & 1) ? (r >> 8) % 256 : 0xB0 + (r >> 8) % 32;
  return e | (static_cast<uint32_t>(rng()) & 0xFFFFFF00u);
}

RandomCase random_case(std::mt19937_64& rng, MmaKindId kid, Model m) {
  static const fp4sim::ElemFormat* const f8[] = {&fp4sim::kE4M3, &fp4sim::kE5M2, &fp4sim::kE2M3, &fp4sim::kE3M2,
                                                 &fp4sim::kE2M1};
  RandomCase rc;
  if (kid == MmaKindId::Mxf8f6f4) {
    rc.cfg = cfg_of(kid, m, f8[rng() % 5], f8[rng() % 5]);
  } else if (kid == MmaKindId::Mxf4Nvf4) {
    const bool e8 = rng() & 1;
    rc.cfg = cfg_of(kid, m, nullptr, nullptr, e8 ? &fp4sim::kUE8M0 : &fp4sim::kUE4M3, (rng() & 1) ? 16 : 32);
  } else {
    rc.cfg = cfg_of(kid, m);
  }
  const size_t K = static_cast<size_t>(rc.cfg.kind->k);
  rc.a.resize(K);
  rc.b.resize(K);
  // Sparse operands now and then make zero groups and cancellations common.
  const int density = static_cast<int>(rng() % 4);
  for (size_t k = 0; k < K; ++k) {
    rc.a[k] = static_cast<uint8_t>(density == 0 && rng() % 3 ? 0 : rng());
    rc.b[k] = static_cast<uint8_t>(density == 0 && rng() % 3 ? 0 : rng());
  }
  const size_t ns = K / static_cast<size_t>(rc.cfg.block);
  for (size_t i = 0; i < ns; ++i) {
    rc.sa.push_back(random_scale(rng, *rc.cfg.scale));
    rc.sb.push_back(random_scale(rng, *rc.cfg.scale));
  }
  // C near the scale product's magnitude most of the time.
  int e_mid = 0;
  if (rc.cfg.scale->name == "ue8m0") e_mid = static_cast<int>(rc.sa[0] & 0xFF) + static_cast<int>(rc.sb[0] & 0xFF) - 254;
  rc.c = random_c(rng, e_mid);
  return rc;
}

TEST(MmaRandom, BlackwellMatchesReference) {
  std::mt19937_64 rng(20250101);
  int n = 0, nonzero = 0, nan = 0, inf = 0;
  for (int i = 0; i < 120000; ++i) {
    const MmaKindId kid = i % 3 == 0 ? MmaKindId::Mxf4 : (i % 3 == 1 ? MmaKindId::Mxf4Nvf4 : MmaKindId::Mxf8f6f4);
    const RandomCase rc = random_case(rng, kid, Model::Blackwell);
    const uint32_t got = dot(rc.cfg, rc.a, rc.b, rc.sa, rc.sb, rc.c);
    const uint32_t want = ref_blackwell(rc.cfg, rc.a.data(), rc.b.data(), rc.sa.data(), rc.sb.data(), rc.c);
    ASSERT_EQ(got, want) << "case " << i << " kind " << rc.cfg.kind->name << " A " << rc.cfg.elem_a->name
                         << " B " << rc.cfg.elem_b->name << " scale " << rc.cfg.scale->name << " block "
                         << rc.cfg.block << " C " << std::hex << rc.c;
    ++n;
    nonzero += (got & 0x7FFFFFFFu) != 0 && (got & 0x7F800000u) != 0x7F800000u;
    nan += got == kNaN;
    inf += (got & 0x7FFFFFFFu) == kPInf;
  }
  EXPECT_EQ(n, 120000);
  // The generator must reach every class in bulk.
  EXPECT_GT(nonzero, 60000);
  EXPECT_GT(nan, 1000);
  EXPECT_GT(inf, 1000);
}

TEST(MmaRandom, ExactMatchesReference) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const MmaKindId kid = static_cast<MmaKindId>(i % 4);
    const RandomCase rc = random_case(rng, kid, Model::Exact);
    const int K = rc.cfg.kind->k;
    ASSERT_EQ(dot(rc.cfg, rc.a, rc.b, rc.sa, rc.sb, rc.c),
              ref_exact(rc.cfg, rc.a.data(), rc.b.data(), rc.sa.data(), rc.sb.data(), rc.c, K))
        << "case " << i << " kind " << rc.cfg.kind->name;
  }
}

TEST(MmaRandom, AscendHif4MatchesReferenceForEveryRoundingPoint) {
  std::mt19937_64 rng(99);
  for (int G : {1, 2, 3, 0}) {
    MmaConfig cfg = cfg_of(MmaKindId::Hif4, Model::AscendHif4);
    cfg.hif4_round_groups = G;
    for (int i = 0; i < 1500; ++i) {
      const size_t K = 64 * (1 + rng() % 6);
      const size_t ng = K / 64;
      std::vector<uint8_t> a(K), b(K);
      for (auto& x : a) x = static_cast<uint8_t>(rng() & 0xF);
      for (auto& x : b) x = static_cast<uint8_t>(rng() & 0xF);
      std::vector<uint32_t> sa(ng), sb(ng);
      for (auto& w : sa) w = random_scale(rng, fp4sim::kE6M2);
      for (auto& w : sb) w = random_scale(rng, fp4sim::kE6M2);
      const uint32_t c = random_c(rng, 0);
      const std::vector<float> cf{bf(c)};
      const std::vector<float> d = fp4sim::gemm(cfg, Model::AscendHif4, 1, 1, K, a, sa, b, sb, cf, 1.0f, 1);
      const uint32_t want = ref_ascend(cfg, a.data(), b.data(), sa.data(), sb.data(), c, static_cast<int>(K), G);
      ASSERT_EQ(fb(d[0]), want) << "G " << G << " case " << i;
    }
  }
}

TEST(MmaRandom, ExactEqualsBlackwellWhenTheSumIsRepresentable) {
  // Small dynamic range: scale exponents in [-1, 1] with significands 1 or 1.5 (UE4M3) or 1
  // (UE8M0), elements of small formats, C a multiple of 2^-8 below 2^12. Every term is then a
  // multiple of 2^-10 below 2^14 and the sum has at most 24 significant bits: no model may round.
  std::mt19937_64 rng(5);
  const fp4sim::ElemFormat* const small[] = {&fp4sim::kE2M1, &fp4sim::kE2M3};
  int representable = 0;
  for (int i = 0; i < 20000; ++i) {
    const MmaKindId kid = static_cast<MmaKindId>(i % 3);
    MmaConfig cfg = cfg_of(kid, Model::Blackwell, kid == MmaKindId::Mxf8f6f4 ? small[rng() % 2] : nullptr,
                           kid == MmaKindId::Mxf8f6f4 ? small[rng() % 2] : nullptr);
    const size_t K = static_cast<size_t>(cfg.kind->k);
    std::vector<uint8_t> a(K), b(K);
    for (size_t k = 0; k < K; ++k) {
      a[k] = static_cast<uint8_t>(rng());
      b[k] = static_cast<uint8_t>(rng());
    }
    const size_t ns = K / static_cast<size_t>(cfg.block);
    std::vector<uint32_t> sa(ns), sb(ns);
    for (size_t j = 0; j < ns; ++j) {
      if (cfg.scale->name == "ue4m3") {  // exponent field 6..8, mantissa 0 or 4
        sa[j] = static_cast<uint32_t>((6 + rng() % 3) << 3 | (rng() % 2) * 4);
        sb[j] = static_cast<uint32_t>((6 + rng() % 3) << 3 | (rng() % 2) * 4);
      } else {
        sa[j] = static_cast<uint32_t>(126 + rng() % 3);
        sb[j] = static_cast<uint32_t>(126 + rng() % 3);
      }
    }
    const float c = std::ldexp(static_cast<float>(static_cast<int32_t>(rng() % (1u << 21)) - (1 << 20)), -8);
    const uint32_t ex = ref_exact(cfg, a.data(), b.data(), sa.data(), sb.data(), fb(c), static_cast<int>(K));
    // Representable: the exact sum is a float whose value needs no rounding (checked with cpp_int).
    cpp_int s = to_fixed(c);
    for (size_t k = 0; k < K; ++k) {
      s += to_fixed(elem_value(cfg, true, a[k], 0, static_cast<int>(k)) * elem_value(cfg, false, b[k], 0, static_cast<int>(k)) *
                    scale_value(cfg, sa[k / static_cast<size_t>(cfg.block)]) * scale_value(cfg, sb[k / static_cast<size_t>(cfg.block)]));
    }
    ASSERT_EQ(to_fixed(bf(ex)), s) << "generator produced a non-representable sum, case " << i;
    ++representable;
    EXPECT_EQ(dot(cfg, a, b, sa, sb, fb(c)), ex) << i;
    cfg.model = Model::Exact;
    EXPECT_EQ(dot(cfg, a, b, sa, sb, fb(c)), ex) << i;
    cfg.model = Model::Fp32Seq;  // every partial sum is on the same grid: no rounding either
    EXPECT_EQ(dot(cfg, a, b, sa, sb, fb(c)), ex) << i;
  }
  EXPECT_EQ(representable, 20000);
}

// ---------------------------------------------------------------------------------------------
// GEMM

struct GemmData {
  size_t M, N, K;
  std::vector<uint8_t> a, b;
  std::vector<uint32_t> sa, sb;
  std::vector<float> c;
};

GemmData random_gemm(std::mt19937_64& rng, const MmaConfig& cfg, size_t M, size_t N, size_t K) {
  GemmData g{M, N, K, {}, {}, {}, {}, {}};
  g.a.resize(M * K);
  g.b.resize(N * K);
  for (auto& x : g.a) x = static_cast<uint8_t>(rng());
  for (auto& x : g.b) x = static_cast<uint8_t>(rng());
  const size_t nb = K / static_cast<size_t>(cfg.block);
  g.sa.resize(M * nb);
  g.sb.resize(N * nb);
  for (auto& s : g.sa) s = random_scale(rng, *cfg.scale);
  for (auto& s : g.sb) s = random_scale(rng, *cfg.scale);
  g.c.resize(M * N);
  for (auto& x : g.c) x = bf(random_c(rng, 0));
  return g;
}

std::vector<float> run_gemm(const MmaConfig& cfg, Model m, const GemmData& g, float alpha = 1.0f,
                            unsigned threads = 1) {
  return fp4sim::gemm(cfg, m, g.M, g.N, g.K, g.a, g.sa, g.b, g.sb, g.c, alpha, threads);
}

TEST(MmaGemm, KChainingEqualsChainedInstructions) {
  // A K = 128 GEMM equals two instructions with D of the first fed back as C of the second.
  std::mt19937_64 rng(3);
  for (MmaKindId kid : {MmaKindId::Mxf4, MmaKindId::Mxf4Nvf4, MmaKindId::Mxf8f6f4, MmaKindId::Hif4}) {
    const MmaConfig cfg = fp4sim::make_mma_config(kid);
    const Model m = cfg.kind->hardware_model;
    for (int t = 0; t < 300; ++t) {
      const size_t K = 128;
      const GemmData g = random_gemm(rng, cfg, 1, 1, K);
      const size_t ik = static_cast<size_t>(cfg.kind->k);
      const size_t spi = ik / static_cast<size_t>(cfg.block);
      uint32_t acc = fb(g.c[0]);
      for (size_t k0 = 0; k0 < K; k0 += ik) {
        acc = fp4sim::mma_dot(cfg, g.a.data() + k0, g.b.data() + k0, g.sa.data() + k0 / ik * spi,
                              g.sb.data() + k0 / ik * spi, acc);
      }
      EXPECT_EQ(fb(run_gemm(cfg, m, g)[0]), acc) << cfg.kind->name << " " << t;
    }
  }
}

TEST(MmaGemm, MatchesPerElementModelsAndAlpha) {
  std::mt19937_64 rng(4);
  for (MmaKindId kid : {MmaKindId::Mxf4Nvf4, MmaKindId::Mxf8f6f4, MmaKindId::Hif4}) {
    const MmaConfig cfg = fp4sim::make_mma_config(kid);
    const GemmData g = random_gemm(rng, cfg, 5, 7, 256);
    for (Model m : {Model::Exact, Model::Fp32Seq, cfg.kind->hardware_model}) {
      const std::vector<float> d = run_gemm(cfg, m, g, 0.75f);
      for (size_t i = 0; i < g.M; ++i) {
        for (size_t j = 0; j < g.N; ++j) {
          uint32_t want;
          const uint8_t* ar = g.a.data() + i * g.K;
          const uint8_t* br = g.b.data() + j * g.K;
          const size_t nb = g.K / static_cast<size_t>(cfg.block);
          const uint32_t* sar = g.sa.data() + i * nb;
          const uint32_t* sbr = g.sb.data() + j * nb;
          const uint32_t c = fb(g.c[i * g.N + j]);
          if (m == Model::Exact) {
            want = ref_exact(cfg, ar, br, sar, sbr, c, static_cast<int>(g.K));  // one RN over all K
          } else if (m == Model::AscendHif4) {
            want = ref_ascend(cfg, ar, br, sar, sbr, c, static_cast<int>(g.K), 1);
          } else if (m == Model::Fp32Seq) {
            // The CUTLASS host loop: element * scale in FP32, then one FMA per k, in order.
            float acc = bf(c);
            for (size_t k = 0; k < g.K; ++k) {
              const uint32_t wa = sar[k / static_cast<size_t>(cfg.block)], wb = sbr[k / static_cast<size_t>(cfg.block)];
              const float x = static_cast<float>(elem_value(cfg, true, ar[k], wa, static_cast<int>(k))) * static_cast<float>(scale_value(cfg, wa));
              const float y = static_cast<float>(elem_value(cfg, false, br[k], wb, static_cast<int>(k))) * static_cast<float>(scale_value(cfg, wb));
              acc = std::fma(x, y, acc);
            }
            want = std::isnan(acc) ? kNaN : fb(acc);
          } else {
            const size_t ik = static_cast<size_t>(cfg.kind->k), spi = ik / static_cast<size_t>(cfg.block);
            want = c;
            for (size_t k0 = 0; k0 < g.K; k0 += ik) {
              want = ref_blackwell(cfg, ar + k0, br + k0, sar + k0 / ik * spi, sbr + k0 / ik * spi, want);
            }
          }
          // Epilogue: D = alpha * acc, one FP32 RN; NaN canonical.
          const float out = 0.75f * bf(want);
          EXPECT_EQ(fb(d[i * g.N + j]), std::isnan(out) ? kNaN : fb(out))
              << cfg.kind->name << " " << fp4sim::model_name(m) << " " << i << "," << j;
        }
      }
    }
  }
}

TEST(MmaGemm, ThreadCountDoesNotChangeBits) {
  std::mt19937_64 rng(6);
  for (MmaKindId kid : {MmaKindId::Mxf4Nvf4, MmaKindId::Mxf8f6f4, MmaKindId::Hif4}) {
    const MmaConfig cfg = fp4sim::make_mma_config(kid);
    const GemmData g = random_gemm(rng, cfg, 37, 19, 128);
    for (Model m : {Model::Exact, Model::Fp32Seq, cfg.kind->hardware_model}) {
      const std::vector<float> ref = run_gemm(cfg, m, g, 1.0f, 1);
      for (unsigned t : {2u, 3u, 8u, 0u}) {
        const std::vector<float> d = run_gemm(cfg, m, g, 1.0f, t);
        ASSERT_EQ(d.size(), ref.size());
        for (size_t i = 0; i < d.size(); ++i) ASSERT_EQ(fb(d[i]), fb(ref[i])) << t << " " << i;
      }
    }
  }
}

TEST(MmaGemm, Hif4RoundingPointWhatIf) {
  // C = 2^24, two groups each contributing exactly 1 (S1P2 1.0 * 1.0, E6M2 1.0).
  // Every group: 2^24 + 1 -> tie to even 2^24, twice -> 0x4B800000.
  // Every 2 groups / only at the end: 2^24 + 2 = 0x4B800001 (= the exact model).
  std::vector<uint8_t> a(128, 0), b(128, 0);
  a[0] = b[0] = a[64] = b[64] = 0x4;
  const std::vector<uint32_t> s{0xC0, 0xC0};
  const std::vector<float> c{16777216.0f};
  MmaConfig cfg = fp4sim::make_mma_config(MmaKindId::Hif4);
  EXPECT_EQ(fb(fp4sim::gemm(cfg, Model::AscendHif4, 1, 1, 128, a, s, b, s, c)[0]), 0x4B800000u);
  cfg.hif4_round_groups = 2;
  EXPECT_EQ(fb(fp4sim::gemm(cfg, Model::AscendHif4, 1, 1, 128, a, s, b, s, c)[0]), 0x4B800001u);
  cfg.hif4_round_groups = 0;
  EXPECT_EQ(fb(fp4sim::gemm(cfg, Model::AscendHif4, 1, 1, 128, a, s, b, s, c)[0]), 0x4B800001u);
  EXPECT_EQ(fb(fp4sim::gemm(cfg, Model::Exact, 1, 1, 128, a, s, b, s, c)[0]), 0x4B800001u);
  EXPECT_EQ(fb(fp4sim::gemm(cfg, Model::Fp32Seq, 1, 1, 128, a, s, b, s, c)[0]), 0x4B800000u);
  // +Inf C stays +Inf whatever the rounding point.
  const std::vector<float> ci{std::numeric_limits<float>::infinity()};
  EXPECT_EQ(fb(fp4sim::gemm(cfg, Model::AscendHif4, 1, 1, 128, a, s, b, s, ci)[0]), kPInf);
}

TEST(MmaGemm, ApiDetails) {
  const MmaConfig cfg = fp4sim::make_mma_config(MmaKindId::Mxf4Nvf4);
  std::mt19937_64 rng(8);
  GemmData g = random_gemm(rng, cfg, 3, 4, 64);
  for (auto& s : g.sa) s &= 0x7E;  // no NaN scales, so the C-free result is finite-or-Inf
  for (auto& s : g.sb) s &= 0x7E;
  // 8-bit scale overload gives the same bits.
  const std::vector<uint8_t> sa8(g.sa.begin(), g.sa.end()), sb8(g.sb.begin(), g.sb.end());
  const std::vector<float> d32 = run_gemm(cfg, Model::Blackwell, g);
  const std::vector<float> d8 = fp4sim::gemm(cfg, Model::Blackwell, 3, 4, 64, g.a, sa8, g.b, sb8, g.c, 1.0f, 1);
  for (size_t i = 0; i < d32.size(); ++i) EXPECT_EQ(fb(d32[i]), fb(d8[i]));
  // Empty C = all +0.
  const std::vector<float> d0 = fp4sim::gemm(cfg, Model::Blackwell, 3, 4, 64, g.a, g.sa, g.b, g.sb, {}, 1.0f, 1);
  for (size_t i = 0; i < 3; ++i) {
    for (size_t j = 0; j < 4; ++j) {
      EXPECT_EQ(fb(d0[i * 4 + j]), fp4sim::mma_dot(cfg, g.a.data() + i * 64, g.b.data() + j * 64,
                                                   g.sa.data() + i * 4, g.sb.data() + j * 4, 0u));
    }
  }
  // Shape errors.
  EXPECT_THROW(fp4sim::gemm(cfg, Model::Blackwell, 3, 4, 32, g.a, g.sa, g.b, g.sb, g.c), std::invalid_argument);
  EXPECT_THROW(fp4sim::gemm(cfg, Model::Blackwell, 3, 5, 64, g.a, g.sa, g.b, g.sb, g.c), std::invalid_argument);
  EXPECT_THROW(fp4sim::gemm(cfg, Model::AscendHif4, 3, 4, 64, g.a, g.sa, g.b, g.sb, g.c), std::invalid_argument);
  // Exact / fp32-seq only need K to be a multiple of the block (16 here).
  const std::vector<uint8_t> a16(16, kF1), b16(16, kF2);
  const std::vector<uint32_t> s1{kS1};
  EXPECT_EQ(fb(fp4sim::gemm(cfg, Model::Exact, 1, 1, 16, a16, s1, b16, s1, {})[0]), fb(32.0f));
  EXPECT_EQ(fb(fp4sim::gemm(cfg, Model::Fp32Seq, 1, 1, 16, a16, s1, b16, s1, {})[0]), fb(32.0f));
  // The alpha epilogue rounds once: alpha = 1/3 (FP32) times 3.0.
  const std::vector<uint8_t> a3(64, 0), b3(64, 0);
  std::vector<uint8_t> a3b = a3;
  a3b[0] = 0x5;  // 3.0
  std::vector<uint8_t> b3b = b3;
  b3b[0] = kF1;
  const std::vector<uint32_t> s4(4, kS1);
  const float third = 1.0f / 3.0f;
  EXPECT_EQ(fb(fp4sim::gemm(cfg, Model::Blackwell, 1, 1, 64, a3b, s4, b3b, s4, {}, third)[0]), fb(third * 3.0f));
}

// ---------------------------------------------------------------------------------------------
// The fast GEMM paths (golden/src/mma_fast.cpp, taken by gemm() on CPUs with AVX2 + FMA) against
// the generic models (gemm_reference): bit for bit, on every kind / model / format combination.

struct Combo {
  MmaConfig cfg;
  Model model;
};

// Every (kind, model, element A, element B, scale, block) combination the kinds table allows.
std::vector<Combo> all_combos() {
  std::vector<Combo> v;
  for (const fp4sim::MmaKind& k : fp4sim::all_mma_kinds()) {
    for (Model m : {Model::Exact, Model::Fp32Seq, Model::Blackwell, Model::AscendHif4}) {
      if (m == Model::Blackwell && k.hardware_model != Model::Blackwell) continue;
      if (m == Model::AscendHif4 && k.id != MmaKindId::Hif4) continue;
      for (const fp4sim::ElemFormat* ea : k.elems) {
        for (const fp4sim::ElemFormat* eb : k.elems) {
          for (const fp4sim::ElemFormat* s : k.scales) {
            for (int blk : k.blocks) {
              if (!ea || !eb || !s || blk == 0) continue;
              v.push_back({cfg_of(k.id, m, ea, eb, s, blk), m});
            }
          }
        }
      }
    }
  }
  return v;
}

std::string combo_name(const Combo& c) {
  return std::string(c.cfg.kind->name) + "/" + std::string(fp4sim::model_name(c.model)) + "/" +
         std::string(c.cfg.elem_a->name) + "x" + std::string(c.cfg.elem_b->name) + "/" +
         std::string(c.cfg.scale->name) + "/" + std::to_string(c.cfg.block);
}

// Scale codes. mode 0: tame (results stay finite, the fast paths run); 1: extremes (smallest and
// largest codes, subnormal UE4M3, UE4M3 sign bit); 2: anything, NaN codes included.
uint32_t fast_scale(std::mt19937_64& rng, const fp4sim::ElemFormat& f, int mode) {
  const uint32_t r = static_cast<uint32_t>(rng());
  const uint32_t hi = f.name == "e6m2" ? (static_cast<uint32_t>(rng()) & 0xFFFFFF00u) : 0u;  // level bits
  if (mode == 2 || (mode == 1 && r % 5 == 0)) return ((r >> 8) & 0xFFu) | hi;
  if (mode == 1) {
    static const uint32_t e8[] = {0, 1, 2, 3, 250, 252, 253, 254};
    static const uint32_t e43[] = {0x00, 0x01, 0x02, 0x07, 0x08, 0x7D, 0x7E, 0x81};
    static const uint32_t e62[] = {0x00, 0x01, 0x02, 0x05, 0xF8, 0xFC, 0xFD, 0xFE};
    const uint32_t q = (r >> 8) % 8;
    if (f.name == "ue8m0") return e8[q];
    if (f.name == "ue4m3") return e43[q];
    return e62[q] | hi;
  }
  if (f.name == "ue8m0") return 118 + (r >> 8) % 19;
  if (f.name == "ue4m3") return (0x28 + (r >> 8) % 32) | ((r >> 20) & 0x80);
  return (0xA8 + (r >> 8) % 40) | hi;
}

// Sign bit of an element code (a flipped sign makes exact cancellations).
uint8_t sign_bit(const fp4sim::ElemFormat& f) { return static_cast<uint8_t>(1u << (f.bits - 1)); }

// A random GEMM for the combo: per row one of several element patterns (dense, sparse, zero
// blocks, the negation of an A row so that products cancel), scales of `scale_mode`, C from
// random_c (zeros, NaN / Inf, subnormals, near the scale magnitude).
GemmData fast_case(std::mt19937_64& rng, const Combo& cb, size_t M, size_t N, size_t K, int scale_mode) {
  const MmaConfig& cfg = cb.cfg;
  GemmData g{M, N, K, std::vector<uint8_t>(M * K), std::vector<uint8_t>(N * K), {}, {}, {}};
  const size_t blk = static_cast<size_t>(cfg.block);
  auto fill = [&](uint8_t* row, const fp4sim::ElemFormat& f) {
    const int pattern = static_cast<int>(rng() % 5);
    for (size_t k = 0; k < K; ++k) {
      uint8_t x = static_cast<uint8_t>(rng());
      if (f.name == "e4m3" && scale_mode == 0 && (x & 0x7F) == 0x7F) x = static_cast<uint8_t>(x - 1);  // no NaN
      if (f.name == "e5m2" && scale_mode == 0 && (x & 0x7C) == 0x7C) x = static_cast<uint8_t>(x & 0x83);  // no Inf/NaN
      if (pattern == 1 && rng() % 4) x = 0;                      // sparse
      if (pattern == 2 && (k / blk) % 2 == 0) x = 0;             // zero blocks
      if (pattern == 3 && rng() % 2) x = static_cast<uint8_t>(x | sign_bit(f));  // mostly negative
      row[k] = x;
    }
  };
  for (size_t i = 0; i < M; ++i) fill(g.a.data() + i * K, *cfg.elem_a);
  for (size_t j = 0; j < N; ++j) {
    fill(g.b.data() + j * K, *cfg.elem_b);
    // Now and then B row j = A row i with every sign flipped: A[i] . B[j] cancels exactly where the
    // formats and scales agree.
    if (cfg.elem_a == cfg.elem_b && rng() % 4 == 0) {
      const size_t i = rng() % M;
      for (size_t k = 0; k < K; ++k) g.b[j * K + k] = static_cast<uint8_t>(g.a[i * K + k] ^ sign_bit(*cfg.elem_a));
    }
  }
  const size_t nb = K / blk;
  g.sa.resize(M * nb);
  g.sb.resize(N * nb);
  for (auto& x : g.sa) x = fast_scale(rng, *cfg.scale, scale_mode);
  for (auto& x : g.sb) x = fast_scale(rng, *cfg.scale, scale_mode);
  // Cancelling rows want equal scales.
  if (rng() % 2) g.sb.assign(g.sb.size(), g.sa.empty() ? 0u : g.sa[0]);
  g.c.resize(M * N);
  int e_mid = 0;
  if (cfg.scale->name == "ue8m0") e_mid = static_cast<int>(g.sa[0] & 0xFF) + static_cast<int>(g.sb[0] & 0xFF) - 254;
  for (auto& x : g.c) x = bf(random_c(rng, e_mid));
  if (rng() % 8 == 0) g.c.clear();  // C = all +0
  return g;
}

// gemm() and gemm_reference() agree bit for bit; returns how many outputs were finite nonzero.
int expect_fast_equals_reference(const Combo& cb, const GemmData& g, float alpha, const std::string& what) {
  const std::vector<float> got = fp4sim::gemm(cb.cfg, cb.model, g.M, g.N, g.K, g.a, g.sa, g.b, g.sb, g.c, alpha, 1);
  const std::vector<float> want =
      fp4sim::gemm_reference(cb.cfg, cb.model, g.M, g.N, g.K, g.a, g.sa, g.b, g.sb, g.c, alpha, 1);
  EXPECT_EQ(got.size(), want.size());
  int finite = 0;
  for (size_t q = 0; q < got.size() && q < want.size(); ++q) {
    if (fb(got[q]) != fb(want[q])) {
      ADD_FAILURE() << what << " " << combo_name(cb) << " M " << g.M << " N " << g.N << " K " << g.K << " output "
                    << q << ": fast " << std::hex << fb(got[q]) << " generic " << fb(want[q]);
      return finite;
    }
    finite += std::isfinite(want[q]) && want[q] != 0.0f;
  }
  return finite;
}

TEST(MmaFast, EveryElementCodePairEveryCombo) {
  // A row i holds code i everywhere; B row j holds code j at k = 0 and a walk over the codes after
  // it, so that every (code, code) product meets every other in some sum. Two instructions along
  // K (one for FP8 x FP8) so that chaining runs too.
  std::mt19937_64 rng(1301);
  for (const Combo& cb : all_combos()) {
    const size_t na = size_t{1} << cb.cfg.elem_a->bits, nb = size_t{1} << cb.cfg.elem_b->bits;
    const size_t ik = static_cast<size_t>(cb.cfg.kind->k);
    const size_t K = na * nb >= 65536 ? ik : 2 * ik;
    GemmData g = fast_case(rng, cb, na, nb, K, 0);
    for (size_t i = 0; i < na; ++i)
      for (size_t k = 0; k < K; ++k) g.a[i * K + k] = static_cast<uint8_t>(i);
    for (size_t j = 0; j < nb; ++j)
      for (size_t k = 0; k < K; ++k) g.b[j * K + k] = static_cast<uint8_t>((j + 37 * k) % nb);
    expect_fast_equals_reference(cb, g, 1.0f, "code pairs");
    if (HasFailure()) return;
  }
}

TEST(MmaFast, SeededRandomEveryCombo) {
  std::mt19937_64 rng(1302);
  const std::vector<Combo> combos = all_combos();
  int finite = 0;
  for (int rep = 0; rep < 6; ++rep) {
    for (const Combo& cb : combos) {
      const size_t ik = static_cast<size_t>(cb.model == Model::Blackwell || cb.model == Model::AscendHif4 ? cb.cfg.kind->k : cb.cfg.block);
      // N up to 70: the fp32-seq path works on 32 and 8 columns at a time, then single ones. The
      // last two reps take 8 to 20 instructions along K: ascend-hif4's vector terms go eight
      // groups at a time, its group sums four.
      const size_t kmul = rep < 4 ? 1 + rng() % 5 : 8 + rng() % 13;
      const size_t M = 1 + rng() % 6, N = 1 + rng() % 70, K = ik * kmul;
      const float alpha = rng() % 3 ? 1.0f : 0.75f;
      const GemmData g = fast_case(rng, cb, M, N, K, static_cast<int>(rng() % 3));
      finite += expect_fast_equals_reference(cb, g, alpha, "random rep " + std::to_string(rep));
      if (HasFailure()) return;
    }
  }
  EXPECT_GT(finite, 20000);  // the tame cases reach the fast paths' finite results in bulk
}

TEST(MmaFast, DirectedCorners) {
  // Named corners on small GEMMs, each checked against the generic model.
  const float fmax = std::numeric_limits<float>::max();
  for (const Combo& cb : all_combos()) {
    const size_t ik = static_cast<size_t>(cb.cfg.kind->k);
    const size_t K = 2 * ik, nblk = K / static_cast<size_t>(cb.cfg.block);
    const fp4sim::ElemFormat& fa = *cb.cfg.elem_a;
    const fp4sim::ElemFormat& fbm = *cb.cfg.elem_b;
    const uint8_t maxa = static_cast<uint8_t>(fa.max_code()), maxb = static_cast<uint8_t>(fbm.max_code());
    const std::string sn(cb.cfg.scale->name);
    const uint32_t s_max = sn == "ue8m0" ? 254u : (sn == "ue4m3" ? 0x7Eu : 0xFEu);
    const uint32_t s_min = sn == "ue8m0" ? 0u : (sn == "ue4m3" ? 0x01u : 0x00u);
    const uint32_t s_nan = sn == "ue8m0" ? 255u : (sn == "ue4m3" ? 0x7Fu : 0xFFu);
    const uint32_t s_one = sn == "ue8m0" ? 127u : (sn == "ue4m3" ? 0x38u : 0xC0u);
    auto run = [&](const char* what, uint8_t ea, uint8_t eb, uint32_t sa, uint32_t sbv, std::vector<float> c) {
      GemmData g{1, c.size(), K, std::vector<uint8_t>(K, ea), std::vector<uint8_t>(c.size() * K, eb),
                 std::vector<uint32_t>(nblk, sa), std::vector<uint32_t>(c.size() * nblk, sbv), c};
      // Column 1 negates B (cancellation against column 0's products when C agrees).
      if (c.size() > 1)
        for (size_t k = 0; k < K; ++k) g.b[K + k] = static_cast<uint8_t>(eb ^ sign_bit(fbm));
      expect_fast_equals_reference(cb, g, 1.0f, what);
    };
    const std::vector<float> cs{0.0f, -0.0f, 1.0f, -fmax, fmax, std::ldexp(1.0f, -149), -std::ldexp(1.0f, -130),
                                std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                                std::numeric_limits<float>::quiet_NaN(), std::ldexp(1.0f, 24), -3.0f,
                                // C with bits below the grid a large group exponent sets (truncated)
                                0.1f, -std::ldexp(1.2345f, -17), std::ldexp(1.7f, -40)};
    run("overflow", maxa, maxb, s_max, s_max, cs);
    run("overflow, one side negative", maxa, static_cast<uint8_t>(maxb | sign_bit(fbm)), s_max, s_max, cs);
    run("smallest scales", 1, 1, s_min, s_min, cs);
    run("smallest and largest scale", maxa, 1, s_min, s_max, cs);
    run("zero elements, huge scales", 0, maxb, s_max, s_max, cs);
    run("negative zero elements", sign_bit(fa), 0, s_one, s_one, cs);
    run("zero scales", maxa, maxb, 0, s_one, cs);
    // A zero scale still sets the alignment: its exponent (-126) plus the largest one.
    run("zero scale against the largest", maxa, maxb, 0, s_max, cs);
    run("zero scale against the largest, zero elements", 0, maxb, s_max, 0, cs);
    run("NaN scale", maxa, maxb, s_nan, s_one, cs);
    run("unit", 2, 2, s_one, s_one, cs);
    // Every element code of A against max / min / zero B with C = each corner.
    for (uint32_t code = 0; code < (1u << fa.bits); ++code) {
      run("code sweep", static_cast<uint8_t>(code), maxb, s_one, s_one, cs);
      run("code sweep, small", static_cast<uint8_t>(code), 1, s_min, s_one, cs);
      if (HasFailure()) return;
    }
  }
}

TEST(MmaFast, FewSpecialRowsAmongFastOutputs) {
  // One A row and one B row with a NaN scale, a NaN / Inf element where the format has one, and a
  // few non-finite C values: those outputs take the generic model inside an otherwise fast GEMM.
  std::mt19937_64 rng(1304);
  for (const Combo& cb : all_combos()) {
    for (int rep = 0; rep < 3; ++rep) {
      const size_t ik = static_cast<size_t>(cb.cfg.kind->k);
      const size_t M = 16, N = 19, K = 2 * ik, nblk = K / static_cast<size_t>(cb.cfg.block);
      GemmData g = fast_case(rng, cb, M, N, K, 0);
      if (g.c.empty()) g.c.assign(M * N, 0.5f);
      const std::string sn(cb.cfg.scale->name);
      const uint32_t s_nan = sn == "ue8m0" ? 255u : (sn == "ue4m3" ? 0x7Fu : 0xFFu);
      if (rep == 0) g.sa[3 * nblk + 1] = s_nan;
      if (rep == 0) g.sb[5 * nblk] = s_nan;
      const fp4sim::ElemFormat& fa = *cb.cfg.elem_a;
      const fp4sim::ElemFormat& fbm = *cb.cfg.elem_b;
      if (rep == 1 && fa.has_nan()) g.a[7 * K + 3] = static_cast<uint8_t>(fa.nan_code());
      if (rep == 1 && fbm.has_inf()) g.b[2 * K + ik] = static_cast<uint8_t>(fbm.inf_code() | sign_bit(fbm));
      if (rep == 2 && fa.has_inf()) g.a[1 * K + 5] = static_cast<uint8_t>(fa.inf_code());
      g.c[2 * N + 4] = std::numeric_limits<float>::infinity();
      g.c[9 * N + 11] = -std::numeric_limits<float>::infinity();
      g.c[15 * N + 18] = std::numeric_limits<float>::quiet_NaN();
      expect_fast_equals_reference(cb, g, rep == 2 ? -2.0f : 1.0f, "few special rows, rep " + std::to_string(rep));
      if (HasFailure()) return;
    }
  }
}

TEST(MmaFast, ThreadCountDoesNotChangeBits) {
  std::mt19937_64 rng(1305);
  for (const Combo& cb : all_combos()) {
    const size_t ik = static_cast<size_t>(cb.cfg.kind->k);
    const GemmData g = fast_case(rng, cb, 7, 37, 2 * ik, 0);
    const std::vector<float> one = fp4sim::gemm(cb.cfg, cb.model, g.M, g.N, g.K, g.a, g.sa, g.b, g.sb, g.c, 1.0f, 1);
    expect_fast_equals_reference(cb, g, 1.0f, "threads 1");
    for (unsigned t : {2u, 3u, 7u, 0u}) {
      const std::vector<float> d = fp4sim::gemm(cb.cfg, cb.model, g.M, g.N, g.K, g.a, g.sa, g.b, g.sb, g.c, 1.0f, t);
      ASSERT_EQ(d.size(), one.size());
      for (size_t q = 0; q < d.size(); ++q) ASSERT_EQ(fb(d[q]), fb(one[q])) << combo_name(cb) << " threads " << t << " " << q;
    }
  }
}

}  // namespace

namespace {

// The Blackwell grouped combos (mxf4, mxf4nvf4: every scale format and block).
std::vector<Combo> grouped_combos() {
  std::vector<Combo> v;
  for (const Combo& cb : all_combos())
    if (cb.model == Model::Blackwell && cb.cfg.kind->group < cb.cfg.kind->k) v.push_back(cb);
  return v;
}

// Runs fn with the MMA kernels capped at AVX2 (FP4SIM_MMA_SIMD=avx2), then restores the default.
template <class F>
void with_avx2_cap(F&& fn) {
  ::setenv("FP4SIM_MMA_SIMD", "avx2", 1);
  fn();
  ::unsetenv("FP4SIM_MMA_SIMD");
}

TEST(MmaFast, GroupedTileEdges) {
  // The AVX-512 kernel takes 16 outputs of a row per tile: N on both sides of multiples of 16, a
  // few rows, 1 to 10 instructions along K; the AVX2 path (capped) on the same cases.
  std::mt19937_64 rng(1306);
  const std::vector<Combo> combos = grouped_combos();
  ASSERT_EQ(combos.size(), 5u);  // mxf4 / ue8m0 / 32; mxf4nvf4 / ue4m3 and ue8m0 / 16 and 32
  int finite = 0;
  for (const Combo& cb : combos) {
    for (size_t N : {1u, 2u, 15u, 16u, 17u, 31u, 32u, 33u, 47u, 48u, 49u, 64u, 65u}) {
      const size_t M = 1 + rng() % 4, K = 64 * (1 + rng() % 10);
      const GemmData g = fast_case(rng, cb, M, N, K, static_cast<int>(rng() % 3));
      finite += expect_fast_equals_reference(cb, g, 1.0f, "tile edge N " + std::to_string(N));
      with_avx2_cap([&] { expect_fast_equals_reference(cb, g, 1.0f, "tile edge (AVX2) N " + std::to_string(N)); });
      if (HasFailure()) return;
    }
  }
  EXPECT_GT(finite, 500);
}

TEST(MmaFast, GroupedExponentSpreadSubnormalsAndOverflow) {
  // Per block, scales from both ends of the scale format (the alignment exponent jumps between
  // instructions and whole groups truncate away), all-smallest scales (products and results in
  // FP32's subnormal range), all-largest (results overflow to Inf mid-chain and stay there), zero
  // and NaN scales; C near each of those magnitudes or special. The outputs must cover subnormal,
  // infinite and ordinary results, so that the kernel's per-lane range fix-up runs.
  std::mt19937_64 rng(1307);
  int subnormal = 0, inf = 0, normal = 0;
  for (const Combo& cb : grouped_combos()) {
    const std::string sn(cb.cfg.scale->name);
    const uint32_t s_max = sn == "ue8m0" ? 254u : 0x7Eu, s_min = sn == "ue8m0" ? 0u : 0x01u;
    const uint32_t s_nan = sn == "ue8m0" ? 255u : 0x7Fu, s_one = sn == "ue8m0" ? 127u : 0x38u;
    for (int rep = 0; rep < 12; ++rep) {
      const size_t M = 3 + rng() % 4, N = 1 + rng() % 40, K = 64 * (2 + rng() % 7);
      GemmData g = fast_case(rng, cb, M, N, K, 0);
      const size_t nblk = K / static_cast<size_t>(cb.cfg.block);
      auto rows = [&](std::vector<uint32_t>& s, size_t nrows) {
        for (size_t r = 0; r < nrows; ++r) {
          const int mode = rep % 3 == 0 ? 1 : static_cast<int>(rng() % 6);  // every third rep: tiny
          for (size_t q = 0; q < nblk; ++q) {
            uint32_t& x = s[r * nblk + q];
            if (mode == 0) x = (q + r) % 2 ? s_max : s_min;  // spread
            // Products near FP32's subnormal range (UE8M0: eA + eB around -146; UE4M3 cannot
            // reach it, its smallest scales are the nearest).
            if (mode == 1) x = sn == "ue8m0" ? 48 + static_cast<uint32_t>(rng() % 12) : s_min + static_cast<uint32_t>(rng() % 2);
            if (mode == 2) x = rng() % 2 ? s_max : s_max - 1;  // overflow
            if (mode == 3 && rng() % 3 == 0) x = 0;            // zero scales
            if (mode == 4) x = q == nblk / 2 ? s_nan : s_one;  // one NaN scale
          }
        }
      };
      rows(g.sa, M);
      rows(g.sb, N);
      const int e_mid = std::array<int, 4>{-149, -126, 0, 127}[rng() % 4];
      g.c.resize(M * N);
      for (auto& x : g.c)
        x = rep % 3 == 0 ? bf(static_cast<uint32_t>(rng() & 0x807FFFFFu) & (rng() % 2 ? ~0u : 0u))  // subnormal or 0
                         : bf(random_c(rng, e_mid));
      expect_fast_equals_reference(cb, g, 1.0f, "spread rep " + std::to_string(rep));
      if (HasFailure()) return;
      for (float x : fp4sim::gemm(cb.cfg, cb.model, M, N, K, g.a, g.sa, g.b, g.sb, g.c, 1.0f, 1)) {
        if (std::isinf(x)) ++inf;
        else if (std::fpclassify(x) == FP_SUBNORMAL) ++subnormal;
        else if (std::isnormal(x)) ++normal;
      }
    }
  }
  EXPECT_GT(subnormal, 20);
  EXPECT_GT(inf, 20);
  EXPECT_GT(normal, 200);
}


TEST(MmaFast, GroupedTinyResultsTruncate) {
  // mxf4 (UE8M0 scales): one product per output, 0.5 * (-0.5) or 0.5 * 1.0 times 2^E, C = +0.
  // E = -138: -2^-140 and 2^-139 are the FP32 subnormals 2^9 and 2^10 times 2^-149. E = -150:
  // -2^-152 and 2^-151 truncate to zero, which is +0 for both signs (the integer sum's zero).
  const MmaConfig cfg = fp4sim::make_mma_config(MmaKindId::Mxf4);
  const size_t K = 128;
  for (const auto& [scale, want_neg, want_pos] :
       {std::tuple{58u, 0x80000200u, 0x00000400u}, std::tuple{52u, 0x00000000u, 0x00000000u}}) {
    std::vector<uint8_t> a(K, 0), b(2 * K, 0);
    a[64] = 1;      // 0.5, in the second instruction
    b[64] = 9;      // -0.5
    b[K + 64] = 2;  // 1.0
    const std::vector<uint32_t> sa(K / 32, scale), sb(2 * K / 32, scale);
    const std::vector<float> c(2, 0.0f);
    for (bool avx2 : {false, true}) {
      if (avx2) ::setenv("FP4SIM_MMA_SIMD", "avx2", 1);
      const std::vector<float> d = fp4sim::gemm(cfg, Model::Blackwell, 1, 2, K, a, sa, b, sb, c, 1.0f, 1);
      ::unsetenv("FP4SIM_MMA_SIMD");
      EXPECT_EQ(fb(d[0]), want_neg) << "scale " << scale << " avx2 " << avx2;
      EXPECT_EQ(fb(d[1]), want_pos) << "scale " << scale << " avx2 " << avx2;
    }
  }
}


TEST(MmaFast, GroupedNoTruncationBoundaries) {
  // The AVX-512 kernel skips the truncations when no group term or C has bits below the grid
  // lsb = max(e_C, gmax) - 35. Each instruction here: groups 0-1 under the low scales (group 0:
  // one product 0.5 * 0.5, group 1 zero), groups 2-3 under scales d binades higher (+0.25 and
  // -0.25 times those scales, cancelling), so that only a cut of group 0's or C's lowest bit
  // changes D. d runs across the largest gap that needs no cut (35 - 2 * mb_s - 2: 27 for UE4M3,
  // 33 for UE8M0) and C's exponent across both C bounds, against the generic model.
  for (const Combo& cb : grouped_combos()) {
    const std::string sn(cb.cfg.scale->name);
    const bool e8 = sn == "ue8m0";
    const int span = 35 - 2 * cb.cfg.scale->mbits - 2;
    const size_t K = 128, nblk = K / static_cast<size_t>(cb.cfg.block);
    for (int d = span - 4; d <= span + 3; ++d) {
      // Scale codes of A and B for the low and high blocks (UE4M3: odd significand 9).
      uint32_t lo_a, lo_b, hi_a, hi_b;
      int e_lo;
      if (e8) {
        lo_a = lo_b = 100;
        hi_a = 100 + static_cast<uint32_t>((d + 1) / 2);
        hi_b = 100 + static_cast<uint32_t>(d / 2);
        e_lo = 2 * (100 - 127);
      } else {
        if (d > 28) continue;  // beyond the UE4M3 exponent range
        lo_a = lo_b = (1u << 3) | 1u;  // 2^-6 * 9/8
        const int fa = std::min(15, 2 + d - 1), fbe = 2 + d - fa;
        hi_a = (static_cast<uint32_t>(fa) << 3) | 1u;
        hi_b = (static_cast<uint32_t>(fbe) << 3) | 1u;
        e_lo = -12;
      }
      const int e_hi = e_lo + d;
      std::vector<float> cs{0.0f, -0.0f};
      for (int dc : {-1, 0, 1})
        for (int ec : {e_lo + span + dc, e_hi - 12 + dc, e_hi + dc})
          for (float sg : {1.0f, -1.0f})
            if (ec >= -126 && ec <= 127) cs.push_back(sg * std::ldexp(1.0f + std::ldexp(1.0f, -23), ec));
      const size_t N = cs.size();
      GemmData g{1, N, K, std::vector<uint8_t>(K, 0), std::vector<uint8_t>(N * K, 0), std::vector<uint32_t>(nblk),
                 std::vector<uint32_t>(N * nblk), cs};
      for (size_t k0 = 0; k0 < K; k0 += 64) {
        g.a[k0] = 1;       // group 0: 0.5
        g.a[k0 + 32] = 1;  // group 2
        g.a[k0 + 48] = 1;  // group 3
        for (size_t j = 0; j < N; ++j) {
          g.b[j * K + k0] = 1;        // 0.5
          g.b[j * K + k0 + 32] = 1;   // 0.5
          g.b[j * K + k0 + 48] = 9;   // -0.5
        }
      }
      for (size_t q = 0; q < nblk; ++q) {
        const bool high = (q * static_cast<size_t>(cb.cfg.block)) % 64 >= 32;
        g.sa[q] = high ? hi_a : lo_a;
        for (size_t j = 0; j < N; ++j) g.sb[j * nblk + q] = high ? hi_b : lo_b;
      }
      expect_fast_equals_reference(cb, g, 1.0f, "no-truncation boundary d " + std::to_string(d));
      if (HasFailure()) return;
    }
  }
}

}  // namespace
