#include "fp4sim/quant.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <stdexcept>
#include <string>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "fp4sim/hadamard.hpp"
#include "fp4sim/philox.hpp"

namespace fp4sim {

namespace {

constexpr BlockFormatInfo kBlockFormats[] = {
    {BlockFormat::Nvfp4, "nvfp4", &kE2M1, &kUE4M3, 16, 2, false},
    {BlockFormat::Mxfp4, "mxfp4", &kE2M1, &kUE8M0, 32, 2, false},
    {BlockFormat::Mxfp6E2M3, "mxfp6-e2m3", &kE2M3, &kUE8M0, 32, 2, false},
    {BlockFormat::Mxfp6E3M2, "mxfp6-e3m2", &kE3M2, &kUE8M0, 32, 4, false},
    {BlockFormat::Mxfp8E4M3, "mxfp8-e4m3", &kE4M3, &kUE8M0, 32, 8, false},
    {BlockFormat::Mxfp8E5M2, "mxfp8-e5m2", &kE5M2, &kUE8M0, 32, 15, false},
    {BlockFormat::Hif4, "hif4", &kS1P2, &kE6M2, 64, 0, true},
};

constexpr uint8_t kUE8M0Bias = 127;
constexpr uint8_t kScaleNaN = 0xFF;
constexpr uint32_t kExpMask = 0x7F800000u;

// Hot loops are compiled twice (AVX2 and baseline x86-64) and picked at load time. Bits do not
// depend on the clone: the build disables FMA contraction and both use IEEE single/double ops.
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define FP4SIM_HOT __attribute__((target_clones("avx2", "default")))
#else
#define FP4SIM_HOT
#endif
#define FP4SIM_INLINE [[gnu::always_inline]] inline

inline uint32_t f2u(float f) { return std::bit_cast<uint32_t>(f); }
inline float u2f(uint32_t u) { return std::bit_cast<float>(u); }

// Sign bit of a code from the input's FP32 bits: set iff x < 0 (not for -0.0 or NaN), SPEC §1.
FP4SIM_INLINE uint32_t neg_bit(uint32_t xb) {
  const uint32_t ax = xb & 0x7FFFFFFFu;
  return (xb >> 31) & static_cast<uint32_t>(ax != 0) & static_cast<uint32_t>(ax <= kExpMask);
}

// E2M1 magnitude code under RNE with PTX satfinite, from |v|'s FP32 bits (finite magnitudes order
// like their bit patterns). The seven thresholds are the midpoints between adjacent E2M1 values:
// `>` at a tie whose lower neighbour has the even mantissa, `>=` where the upper one does. Inf and
// NaN patterns exceed every threshold, giving 7 (= 6), which is satfinite's answer for both.
// Integer compares keep the loop branch-free, so the compiler vectorizes it.
FP4SIM_INLINE uint32_t e2m1_rne_mag(uint32_t ab) {
  constexpr auto b = [](float f) { return std::bit_cast<uint32_t>(f); };
  return static_cast<uint32_t>(ab > b(0.25f)) + (ab >= b(0.75f)) + (ab > b(1.25f)) + (ab >= b(1.75f)) +
         (ab > b(2.5f)) + (ab >= b(3.5f)) + (ab > b(5.0f));
}

#if defined(__x86_64__)
// 16 E2M1 codes with AVX2, eight lanes at a time, packed to bytes; equal to e2m1_rne_mag with the
// input's sign (test_quant_fast checks every 251st FP32 pattern). |v| >= 1: RNE of the FP32 pattern
// at one mantissa bit (add 2^21 - 1 plus the kept bit), whose exponent and bit are the code plus
// 252, capped at 7 (saturation; Inf and NaN patterns land above 7 too). |v| < 1: the code is
// RN-even(2 |v|) in {0, 1, 2}, which the conversion gives (MXCSR round-to-nearest-even). Sign:
// x < 0, not -0.0 and not NaN, i.e. INT_MIN < bits(x) <= bits(-Inf) as signed integers.
// GCC's auto-vectorized form of the scalar loop runs at less than half this rate.
#define FP4SIM_SET1(f) _mm256_set1_epi32(static_cast<int>(std::bit_cast<uint32_t>(f)))
__attribute__((target("avx2"), always_inline)) inline void e2m1_rne_16_avx2_inl(const float* x, float inv,
                                                                                uint8_t* out) {
  const __m256 vinv = _mm256_set1_ps(inv);
  const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF), one_bit = _mm256_set1_epi32(1);
  const __m256i half_ulp = _mm256_set1_epi32(0x1FFFFF), bias = _mm256_set1_epi32(252), seven = _mm256_set1_epi32(7);
  const __m256i below_one = _mm256_sub_epi32(FP4SIM_SET1(1.0f), one_bit);  // |v| >= 1 <=> bits > this
  const __m256i int_min = _mm256_set1_epi32(INT32_MIN), neg_inf_next = _mm256_set1_epi32(static_cast<int>(0xFF800001u));
  const __m256i eight = _mm256_set1_epi32(8);
  __m256i c[2];
  for (int h = 0; h < 2; ++h) {
    const __m256 xv = _mm256_loadu_ps(x + 8 * h);
    const __m256i ab = _mm256_and_si256(_mm256_castps_si256(_mm256_mul_ps(xv, vinv)), absm);
    __m256i norm = _mm256_add_epi32(ab, _mm256_add_epi32(half_ulp, _mm256_and_si256(_mm256_srli_epi32(ab, 22), one_bit)));
    norm = _mm256_min_epu32(_mm256_sub_epi32(_mm256_srli_epi32(norm, 22), bias), seven);
    const __m256i sub = _mm256_cvtps_epi32(_mm256_add_ps(_mm256_castsi256_ps(ab), _mm256_castsi256_ps(ab)));
    const __m256i m = _mm256_blendv_epi8(sub, norm, _mm256_cmpgt_epi32(ab, below_one));
    const __m256i xb = _mm256_castps_si256(xv);
    const __m256i neg = _mm256_and_si256(_mm256_cmpgt_epi32(xb, int_min), _mm256_cmpgt_epi32(neg_inf_next, xb));
    c[h] = _mm256_or_si256(m, _mm256_and_si256(neg, eight));
  }
  __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(c[0], c[1]), 0xD8);
  p = _mm256_packus_epi16(p, p);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                   _mm_unpacklo_epi64(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1)));
}
#undef FP4SIM_SET1
// Out-of-line entry for callers compiled without AVX2 (they check kHaveAvx2 first).
__attribute__((target("avx2"))) void e2m1_rne_16_avx2(const float* x, float inv, uint8_t* out) {
  e2m1_rne_16_avx2_inl(x, inv, out);
}
const bool kHaveAvx2 = __builtin_cpu_supports("avx2");
#endif

// Codes of x[i] * inv under RNE with satfinite; the sign comes from x so that a product
// underflowing to -0.0 keeps the input's sign.
FP4SIM_INLINE void e2m1_rne_scaled(const float* __restrict x, size_t n, float inv, uint8_t* __restrict out) {
#if defined(__x86_64__)
  if (kHaveAvx2 && n % 16 == 0) {
    for (size_t i = 0; i < n; i += 16) e2m1_rne_16_avx2(x + i, inv, out + i);
    return;
  }
#endif
  for (size_t i = 0; i < n; ++i) {
    const uint32_t ab = f2u(x[i] * inv) & 0x7FFFFFFFu;
    out[i] = static_cast<uint8_t>(e2m1_rne_mag(ab) | (neg_bit(f2u(x[i])) << 3));
  }
}

// Largest |x| as FP32 bits in one pass. Finite magnitudes order like their bit patterns and
// Inf/NaN patterns are larger, so the result is >= kExpMask iff the block has a non-finite value.
FP4SIM_INLINE uint32_t abs_max_bits(const float* __restrict x, size_t n) {
  uint32_t m = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t a = f2u(x[i]) & 0x7FFFFFFFu;
    m = a > m ? a : m;
  }
  return m;
}

// max |x| with fmaxf semantics (a NaN operand is ignored, Inf kept), as TE's amax kernels do.
FP4SIM_INLINE float abs_max_ignore_nan(const float* __restrict x, size_t n) {
  uint32_t m = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t a = f2u(x[i]) & 0x7FFFFFFFu;
    a &= 0u - static_cast<uint32_t>(a <= kExpMask);  // NaN -> 0
    m = std::max(m, a);
  }
  return u2f(m);
}

// UE4M3 code of a non-negative float (or +Inf) under RNE, saturating at 448: equal to
// encode(kUE4M3, f, Rne, true) (checked over FP32 patterns in test_quant_fast). Both the
// subnormal and the normal candidate are computed and one is selected, so loops over blocks
// vectorize. Normal: RNE at 3 mantissa bits on the pattern, a carry moving into the exponent.
FP4SIM_INLINE uint8_t ue4m3_rne_sat(float f) {
  const auto sub = static_cast<uint32_t>(std::nearbyint(f * 512.0f));  // exact scaling, RNE
  uint32_t u = f2u(f);
  u += 0x7FFFFu + ((u >> 20) & 1u);
  const uint32_t norm = (((u >> 23) - 120u) << 3) | ((u >> 20) & 7u);
  const uint32_t code = f < 0x1p-6f ? sub : norm;
  return static_cast<uint8_t>(f > 448.0f ? 0x7Eu : code);
}

void check_shape(const BlockFormatInfo& fi, size_t xsize, size_t rows, size_t cols,
                 const QuantOptions& opt) {
  if (xsize != rows * cols) {
    throw std::invalid_argument("input has " + std::to_string(xsize) + " values, expected rows*cols = " +
                                std::to_string(rows * cols));
  }
  if (cols == 0 || cols % static_cast<size_t>(fi.block) != 0) {
    throw std::invalid_argument(std::string(fi.name) + " needs the last axis to be a positive multiple of " +
                                std::to_string(fi.block) + ", got " + std::to_string(cols));
  }
  if (opt.rht != 0) {
    if (opt.rht < 2 || (opt.rht & (opt.rht - 1)) != 0) {
      throw std::invalid_argument("RHT size must be a power of two >= 2, got " + std::to_string(opt.rht));
    }
    if (cols % static_cast<size_t>(opt.rht) != 0) {
      throw std::invalid_argument("RHT size " + std::to_string(opt.rht) + " does not divide the last axis " +
                                  std::to_string(cols));
    }
  }
  if (fi.id == BlockFormat::Hif4 && opt.rounding == Rounding::Rz) {
    throw std::invalid_argument("hif4 rounds half-up (rna; rne selects it too) or stochastically (sr), not rz");
  }
  if (opt.two_d && fi.id != BlockFormat::Nvfp4) {
    throw std::invalid_argument("2D 16x16 scaling is defined for nvfp4 only");
  }
}

// ---------------------------------------------------------------------------------------------
// MX (SPEC §2.1)

// Shared exponent of a block with finite amax > 0 under the chosen rule, clamped to UE8M0 range.
FP4SIM_INLINE int mx_shared_exp(const BlockFormatInfo& fi, float amax, ScaleRule rule) {
  const uint32_t u = f2u(amax);
  // floor(log2(amax)) from the bits (ilogb for FP32 subnormals): no log2() misrounding.
  int e = (u >= 0x00800000u ? static_cast<int>(u >> 23) - 127 : std::ilogb(amax)) - fi.emax_elem;
  if (rule == ScaleRule::Ceil) {
    // smallest e with max_elem * 2^e >= amax; max_elem < 2^(emax_elem+1), so it is e or e+1.
    const double max_elem = decode(*fi.elem, fi.elem->max_code());
    if (std::ldexp(max_elem, e) < static_cast<double>(amax)) ++e;
  }
  return std::clamp(e, -127, 127);
}

// 2^-e as a float for a UE8M0 exponent e in [-127, 127] (2^-127 is an FP32 subnormal).
FP4SIM_INLINE float pow2_neg(int e) {
  return e == 127 ? u2f(0x00400000u) : u2f(static_cast<uint32_t>(127 - e) << 23);
}

// RNE code of |v| (FP32 bits ab, finite or not) in a small signed format with subnormals,
// saturating at max: equal to encode(f, v, Rne, true) for |v| (test_quant_fast checks every MX
// element type). Below the smallest normal the grid is uniform (nearbyint of an exact scaling);
// above it, RNE at mbits on the FP32 pattern. Codes order like magnitudes, so min() saturates.
FP4SIM_INLINE uint32_t small_rne_sat_mag(const ElemFormat& f, uint32_t ab) {
  const float a = u2f(ab);
  const int shift = 23 - f.mbits;
  const uint32_t sub = static_cast<uint32_t>(std::nearbyint(a * u2f(static_cast<uint32_t>(127 + f.bias - 1 + f.mbits) << 23)));
  const uint32_t u = ab + ((1u << (shift - 1)) - 1u) + ((ab >> shift) & 1u);
  const uint32_t norm = (((u >> 23) - 127u + static_cast<uint32_t>(f.bias)) << f.mbits) | ((u >> shift) & ((1u << f.mbits) - 1u));
  const bool is_sub = ab < (static_cast<uint32_t>(127 + 1 - f.bias) << 23);
  if (ab >= kExpMask) return f.max_code();  // only reached for Inf/NaN, which MX blocks exclude
  return std::min(is_sub ? sub : norm, f.max_code());
}

// MX blocks with RNE elements, the common case, as one loop the compiler can vectorize.
FP4SIM_HOT void mx_rne_blocks(const BlockFormatInfo& fi, const float* __restrict x, size_t n_blocks,
                              ScaleRule rule, uint8_t* __restrict codes, uint8_t* __restrict scales) {
  constexpr size_t B = 32;
  const ElemFormat& ef = *fi.elem;
  const bool fp4 = &ef == &kE2M1;
  for (size_t b = 0; b < n_blocks; ++b) {
    const float* xb = x + b * B;
    uint8_t* cb = codes + b * B;
    const uint32_t amax_bits = abs_max_bits(xb, B);
    if (amax_bits >= kExpMask || amax_bits == 0) {  // non-finite -> NaN scale; zero -> code 0
      scales[b] = amax_bits == 0 ? uint8_t{0} : kScaleNaN;
      std::fill(cb, cb + B, uint8_t{0});
      continue;
    }
    const int e = mx_shared_exp(fi, u2f(amax_bits), rule);
    scales[b] = static_cast<uint8_t>(e + kUE8M0Bias);
    // x * 2^-e in float is exact unless it drops below 2^-126, where every element type rounds
    // it to 0 anyway (their smallest subnormal is >= 2^-16).
    const float inv = pow2_neg(e);
    if (fp4) {
      e2m1_rne_scaled(xb, B, inv, cb);
      continue;
    }
    const uint32_t sign = ef.sign_bit();
    for (size_t i = 0; i < B; ++i) {
      const uint32_t ab = f2u(xb[i] * inv) & 0x7FFFFFFFu;
      cb[i] = static_cast<uint8_t>(small_rne_sat_mag(ef, ab) | (neg_bit(f2u(xb[i])) ? sign : 0u));
    }
  }
}

}  // namespace

const BlockFormatInfo& info(BlockFormat f) { return kBlockFormats[static_cast<size_t>(f)]; }

Rounding effective_rounding(BlockFormat f, Rounding requested) {
  return f == BlockFormat::Hif4 && requested == Rounding::Rne ? Rounding::Rna : requested;
}

std::span<const BlockFormatInfo> all_block_formats() { return kBlockFormats; }

bool parse_block_format(std::string_view name, BlockFormat& out) {
  for (const auto& fi : kBlockFormats) {
    if (fi.name == name) {
      out = fi.id;
      return true;
    }
  }
  return false;
}

std::string_view scale_rule_name(ScaleRule r) { return r == ScaleRule::Floor ? "floor" : "ceil"; }

bool parse_scale_rule(std::string_view s, ScaleRule& out) {
  if (s == "floor") out = ScaleRule::Floor;
  else if (s == "ceil") out = ScaleRule::Ceil;
  else return false;
  return true;
}

void quantize_mx(BlockFormat f, const float* x, size_t n_blocks, const QuantOptions& opt, uint8_t* codes,
                 uint8_t* scales, uint64_t first_index) {
  const BlockFormatInfo& fi = info(f);
  const size_t B = static_cast<size_t>(fi.block);
  const bool sr = opt.rounding == Rounding::Sr;
  if (opt.rounding == Rounding::Rne) {
    mx_rne_blocks(fi, x, n_blocks, opt.scale_rule, codes, scales);
    return;
  }
  std::array<uint8_t, 64> rbytes{};
  for (size_t b = 0; b < n_blocks; ++b) {
    const float* xb = x + b * B;
    uint8_t* cb = codes + b * B;
    const uint32_t amax_bits = abs_max_bits(xb, B);
    if (amax_bits >= kExpMask) {  // Inf or NaN: SPEC, the whole block dequantizes to NaN
      scales[b] = kScaleNaN;
      std::fill(cb, cb + B, uint8_t{0});
      continue;
    }
    if (amax_bits == 0) {  // microxcaling: log2(FLT_MIN) - emax clamps to -127 -> code 0
      scales[b] = 0;
      std::fill(cb, cb + B, uint8_t{0});
      continue;
    }
    const int e = mx_shared_exp(fi, u2f(amax_bits), opt.scale_rule);
    scales[b] = static_cast<uint8_t>(e + kUE8M0Bias);
    if (sr) sr_bytes(opt.seed, opt.stream, first_index + b * B, B, rbytes.data());
    for (size_t i = 0; i < B; ++i) {
      const double v = std::ldexp(static_cast<double>(xb[i]), -e);  // exact in double
      cb[i] = static_cast<uint8_t>(encode(*fi.elem, v, opt.rounding, /*saturate=*/true, rbytes[i]));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// NVFP4 (SPEC §2.2) — FP32 arithmetic exactly as TransformerEngine writes it.

Nvfp4TensorScale nvfp4_tensor_scale(float amax_tensor, bool pts) {
  Nvfp4TensorScale ts;
  if (!pts) return ts;
  float s_enc = (448.0f * 6.0f) / amax_tensor;
  s_enc = std::min(s_enc, FLT_MAX);
  if (amax_tensor == 0.0f || s_enc == 0.0f) s_enc = 1.0f;
  ts.s_enc = s_enc;
  ts.s_dec = 1.0f / s_enc;
  return ts;
}

namespace {

FP4SIM_INLINE uint8_t nvfp4_scale_code(float block_amax, const Nvfp4TensorScale& ts) {
  const float m = ts.s_enc * (1.0f / 6.0f);
  return ue4m3_rne_sat(block_amax * m);
}

// Value of a UE4M3 code produced by ue4m3_rne_sat (0x00..0x7E), from its fields.
FP4SIM_INLINE float ue4m3_value(uint32_t c) {
  const uint32_t e = c >> 3, m = c & 7u;
  const float sub = static_cast<float>(m) * 0x1p-9f;
  const float norm = u2f(((e + 120u) << 23) | (m << 20));
  return e == 0 ? sub : norm;
}

FP4SIM_INLINE float nvfp4_inverse(uint32_t scale_code, const Nvfp4TensorScale& ts) {
  const float s = ue4m3_value(scale_code) * ts.s_dec;
  return std::min(1.0f / s, FLT_MAX);  // 1/0 = +Inf -> FLT_MAX
}

}  // namespace

uint8_t nvfp4_block_scale_code(float block_amax, const Nvfp4TensorScale& ts) {
  return nvfp4_scale_code(block_amax, ts);
}

float nvfp4_block_inverse(uint8_t scale_code, const Nvfp4TensorScale& ts) {
  return nvfp4_inverse(scale_code & 0x7F, ts);  // the sign bit of a UE4M3 scale is ignored
}

namespace {

void nvfp4_quantize_block(const float* xb, size_t n, float inv, const QuantOptions& opt, uint64_t first_index,
                          uint8_t* cb) {
  if (opt.rounding == Rounding::Rne) {
    e2m1_rne_scaled(xb, n, inv, cb);
    return;
  }
  std::array<uint8_t, 16> rb{};
  if (opt.rounding == Rounding::Sr) sr_bytes(opt.seed, opt.stream, first_index, n, rb.data());
  for (size_t i = 0; i < n; ++i) {
    const float v = xb[i] * inv;
    // Sign from the input: x * inv may underflow to -0.0, which encode() would read as +0.
    cb[i] = std::isnan(v) ? uint8_t{7}
                          : static_cast<uint8_t>(encode(kE2M1, std::fabs(v), opt.rounding, /*saturate=*/true, rb[i]) |
                                                 (xb[i] < 0.0f ? 0x8 : 0x0));
  }
}

#if defined(__x86_64__)
// UE4M3 codes of eight non-negative floats (or +Inf): ue4m3_rne_sat on eight lanes (the same
// subnormal / normal candidates and selects; the conversion rounds to nearest even, MXCSR default).
__attribute__((target("avx2"), always_inline)) inline __m256i ue4m3_rne_sat_8(__m256 f) {
  const __m256i sub = _mm256_cvtps_epi32(_mm256_mul_ps(f, _mm256_set1_ps(512.0f)));
  __m256i u = _mm256_castps_si256(f);
  u = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7FFFF),
                                           _mm256_and_si256(_mm256_srli_epi32(u, 20), _mm256_set1_epi32(1))));
  const __m256i norm = _mm256_or_si256(
      _mm256_slli_epi32(_mm256_sub_epi32(_mm256_srli_epi32(u, 23), _mm256_set1_epi32(120)), 3),
      _mm256_and_si256(_mm256_srli_epi32(u, 20), _mm256_set1_epi32(7)));
  const __m256i code = _mm256_blendv_epi8(norm, sub, _mm256_castps_si256(_mm256_cmp_ps(f, _mm256_set1_ps(0x1p-6f), _CMP_LT_OQ)));
  return _mm256_blendv_epi8(code, _mm256_set1_epi32(0x7E),
                            _mm256_castps_si256(_mm256_cmp_ps(f, _mm256_set1_ps(448.0f), _CMP_GT_OQ)));
}

// Eight lanes whose unsigned max is the 16-value block's NaN-ignoring amax pattern.
__attribute__((target("avx2"), always_inline)) inline __m256i nvfp4_block_max_8(const float* xb, __m256i absm,
                                                                                __m256i expm) {
  __m256i a0 = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb)), absm);
  __m256i a1 = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb + 8)), absm);
  a0 = _mm256_andnot_si256(_mm256_cmpgt_epi32(a0, expm), a0);  // NaN -> 0 (fmaxf ignores NaN)
  a1 = _mm256_andnot_si256(_mm256_cmpgt_epi32(a1, expm), a1);
  return _mm256_max_epu32(a0, a1);
}

// The common NVFP4 case with AVX2, eight blocks at a time: each block's NaN-ignoring amax as an
// unsigned max of FP32 patterns (NaN patterns zeroed), the eight maxima gathered into one vector by
// an unpack / max tree, the scale chain (amax * S_enc/6, UE4M3 RNE) on eight lanes, then 16 codes
// per block. A tail of fewer than eight blocks takes the scalar chain.
__attribute__((target("avx2"))) void nvfp4_rne_1x16_avx2(const float* __restrict x, size_t n_blocks,
                                                         Nvfp4TensorScale ts, uint8_t* __restrict codes,
                                                         uint8_t* __restrict scales) {
  const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF), expm = _mm256_set1_epi32(0x7F800000);
  std::array<float, 128> inv_of;  // the inverse depends only on the code: one division per code
  for (uint32_t c = 0; c < 127; ++c) inv_of[c] = nvfp4_inverse(c, ts);
  const float mult = ts.s_enc * (1.0f / 6.0f);  // nvfp4_scale_code's factor
  size_t b = 0;
  for (; b + 8 <= n_blocks; b += 8) {
    const float* xc = x + b * 16;
    __m256i m[8];
    for (int i = 0; i < 8; ++i) m[i] = nvfp4_block_max_8(xc + 16 * i, absm, expm);
    // Reduce eight vectors to one lane each: after the tree, lane i of r holds block i's max.
    __m256i p[4];
    for (int i = 0; i < 4; ++i)
      p[i] = _mm256_max_epu32(_mm256_unpacklo_epi32(m[2 * i], m[2 * i + 1]),
                              _mm256_unpackhi_epi32(m[2 * i], m[2 * i + 1]));  // blocks 2i, 2i+1 interleaved
    const __m256i q0 = _mm256_max_epu32(_mm256_unpacklo_epi64(p[0], p[1]), _mm256_unpackhi_epi64(p[0], p[1]));
    const __m256i q1 = _mm256_max_epu32(_mm256_unpacklo_epi64(p[2], p[3]), _mm256_unpackhi_epi64(p[2], p[3]));
    // q0: lanes (0,1,2,3 | 0,1,2,3) = partial maxima of blocks 0..3 in each 128-bit half; q1 likewise 4..7.
    const __m256i r = _mm256_max_epu32(_mm256_permute2x128_si256(q0, q1, 0x20), _mm256_permute2x128_si256(q0, q1, 0x31));
    const __m256i code = ue4m3_rne_sat_8(_mm256_mul_ps(_mm256_castsi256_ps(r), _mm256_set1_ps(mult)));
    alignas(32) uint32_t c8[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(c8), code);
    for (int i = 0; i < 8; ++i) {
      scales[b + static_cast<size_t>(i)] = static_cast<uint8_t>(c8[i]);
      e2m1_rne_16_avx2_inl(xc + 16 * i, inv_of[c8[i]], codes + (b + static_cast<size_t>(i)) * 16);
    }
  }
  for (; b < n_blocks; ++b) {
    const float* xb = x + b * 16;
    const __m256i mm = nvfp4_block_max_8(xb, absm, expm);
    __m128i m = _mm_max_epu32(_mm256_castsi256_si128(mm), _mm256_extracti128_si256(mm, 1));
    m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0x4E));
    m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0xB1));
    const uint8_t code = nvfp4_scale_code(u2f(static_cast<uint32_t>(_mm_cvtsi128_si32(m))), ts);
    scales[b] = code;
    e2m1_rne_16_avx2_inl(xb, inv_of[code], codes + b * 16);
  }
}

// Tensor amax for PTS (NaN ignored, Inf kept): four independent max chains to hide latency.
__attribute__((target("avx2"))) float abs_max_ignore_nan_avx2(const float* x, size_t n) {
  const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF), expm = _mm256_set1_epi32(0x7F800000);
  __m256i m[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 4; ++k) {
      __m256i a = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i + 8 * k)), absm);
      a = _mm256_andnot_si256(_mm256_cmpgt_epi32(a, expm), a);
      m[k] = _mm256_max_epu32(m[k], a);
    }
  }
  const __m256i v = _mm256_max_epu32(_mm256_max_epu32(m[0], m[1]), _mm256_max_epu32(m[2], m[3]));
  alignas(32) uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
  uint32_t r = 0;
  for (uint32_t l : lanes) r = std::max(r, l);
  return std::max(u2f(r), abs_max_ignore_nan(x + i, n - i));
}
#endif

// The common NVFP4 case (1x16 blocks, RNE), in chunks of blocks: block amaxes, then scale codes
// and inverses (a loop over blocks that vectorizes), then the elements.
FP4SIM_HOT void nvfp4_rne_1x16(const float* __restrict x, size_t n_blocks, Nvfp4TensorScale ts,
                               uint8_t* __restrict codes, uint8_t* __restrict scales) {
  constexpr size_t kChunk = 256;
  std::array<float, kChunk> amax, inv;
  for (size_t b0 = 0; b0 < n_blocks; b0 += kChunk) {
    const size_t nb = std::min(kChunk, n_blocks - b0);
    const float* xc = x + b0 * 16;
    for (size_t b = 0; b < nb; ++b) amax[b] = abs_max_ignore_nan(xc + b * 16, 16);
    for (size_t b = 0; b < nb; ++b) {
      const uint8_t code = nvfp4_scale_code(amax[b], ts);
      scales[b0 + b] = code;
      inv[b] = nvfp4_inverse(code, ts);
    }
    for (size_t b = 0; b < nb; ++b) e2m1_rne_scaled(xc + b * 16, 16, inv[b], codes + (b0 + b) * 16);
  }
}

void quantize_nvfp4(const float* x, size_t rows, size_t cols, const QuantOptions& opt, Quantized& q) {
  const size_t sc = cols / 16;
#if defined(__x86_64__)
  q.amax = kHaveAvx2 ? abs_max_ignore_nan_avx2(x, rows * cols) : abs_max_ignore_nan(x, rows * cols);
#else
  q.amax = abs_max_ignore_nan(x, rows * cols);
#endif
  const Nvfp4TensorScale ts = nvfp4_tensor_scale(q.amax, opt.pts);
  q.global_scale = ts.s_dec;
  if (!opt.two_d && opt.rounding == Rounding::Rne) {
#if defined(__x86_64__)
    if (kHaveAvx2) {
      nvfp4_rne_1x16_avx2(x, rows * cols / 16, ts, q.codes.data(), q.scales.data());
      return;
    }
#endif
    nvfp4_rne_1x16(x, rows * cols / 16, ts, q.codes.data(), q.scales.data());
    return;
  }
  if (!opt.two_d) {
    for (size_t r = 0; r < rows; ++r) {
      for (size_t j = 0; j < sc; ++j) {
        const size_t off = r * cols + j * 16;
        const uint8_t code = nvfp4_block_scale_code(abs_max_ignore_nan(x + off, 16), ts);
        q.scales[r * sc + j] = code;
        nvfp4_quantize_block(x + off, 16, nvfp4_block_inverse(code, ts), opt, off, q.codes.data() + off);
      }
    }
    return;
  }
  // 2D: one amax per 16x16 tile (a partial last tile uses the rows it has); every row of the tile
  // repeats the tile's scale, so rowwise and columnwise quantization agree.
  for (size_t r0 = 0; r0 < rows; r0 += 16) {
    const size_t r1 = std::min(rows, r0 + 16);
    for (size_t j = 0; j < sc; ++j) {
      float amax = 0.0f;
      for (size_t r = r0; r < r1; ++r) amax = std::max(amax, abs_max_ignore_nan(x + r * cols + j * 16, 16));
      const uint8_t code = nvfp4_block_scale_code(amax, ts);
      const float inv = nvfp4_block_inverse(code, ts);
      for (size_t r = r0; r < r1; ++r) {
        const size_t off = r * cols + j * 16;
        q.scales[r * sc + j] = code;
        nvfp4_quantize_block(x + off, 16, inv, opt, off, q.codes.data() + off);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// HiF4 (SPEC §2.3) — the official library's To_HiFX with N=4, M=2, G=64, evaluated exactly.

constexpr double kBf16OneSeventh = 0.142578125;  // BF16(1/7) = 73/512

// RNE of a positive normal double to `bits` significant bits, on the bit pattern.
FP4SIM_INLINE double round_sig_bits(double v, int bits) {
  const int drop = 52 - (bits - 1);
  uint64_t u = std::bit_cast<uint64_t>(v);
  u += ((uint64_t{1} << (drop - 1)) - 1) + ((u >> drop) & 1u);
  return std::bit_cast<double>(u & ~((uint64_t{1} << drop) - 1));
}

// REC = BF16(1 / E6M2) for every E6M2 code. 1/(1 + m/4) is a repeating binary fraction for
// m != 0, so rounding its double to 8 bits is a single rounding of the exact quotient.
struct Hif4RecTable {
  std::array<double, 256> rec{};
  Hif4RecTable() {
    for (uint32_t c = 0; c < 255; ++c) rec[c] = round_sig_bits(1.0 / decode(kE6M2, c), 8);
  }
};

// E6M2 code of Vmax (finite, > 0): SF = BF16(Vmax * 73/512) — the product is exact in double —
// clamped to [2^-48, 49152] and rounded to 3 significant bits, ties to even.
FP4SIM_INLINE uint8_t hif4_e6m2_code(float vmax) {
  double sf = round_sig_bits(static_cast<double>(vmax) * kBf16OneSeventh, 8);
  sf = std::clamp(sf, 0x1p-48, 49152.0);
  const uint64_t u = std::bit_cast<uint64_t>(round_sig_bits(sf, 3));
  const int e = static_cast<int>(u >> 52) - 1023;  // rounding may carry into the next binade
  return static_cast<uint8_t>(((e + 48) << 2) | static_cast<int>((u >> 50) & 3u));
}

// Element codes of one block given per-element multipliers k[i] = REC * 2^(2 - level):
// c = floor(|x| * k + add[i]) capped at 7, add = 0.5 (half-up) or r/256 (SR). |x| * k has at most
// 32 significant bits, so it is exact in double, and so is the floor of the sum: when the sum is
// below 1 no rounding can reach 1, and otherwise the sum's ulp divides the spacing of the grid.
FP4SIM_INLINE void hif4_codes(const float* __restrict x, const double* __restrict k, const double* __restrict add,
                           uint8_t* __restrict out) {
  for (int i = 0; i < 64; ++i) {
    const double t = std::fabs(static_cast<double>(x[i])) * k[i];
    const double f = std::floor(t + add[i]);
    const auto c = static_cast<int32_t>(f < 7.0 ? f : 7.0);
    out[i] = static_cast<uint8_t>(static_cast<uint32_t>(c) | (neg_bit(f2u(x[i])) << 3));
  }
}

const Hif4RecTable& hif4_recs() {
  static const Hif4RecTable recs;
  return recs;
}

#if defined(__x86_64__)
// HiF4 half-up with AVX2: the same decisions as quantize_hif4's portable loop, as vector compares.
// The 16 group maxima (unsigned max of |x| patterns, NaN above Inf, as abs_max_bits) come from
// two in-lane shuffles; the levels are compares of exact double products (24 x 8 significant
// bits), their bits collected with movemask: E1_8 bit kk = v8[kk] * REC >= 4, E1_16 bit j =
// v16[j] * REC >= (E1_8 of j's half ? 4 : 2) (the portable loop's "* 0.5 >= 2"). Then the same
// per-element loop (hif4_codes). tests: test_hif4 (reference differential, directed cases).
__attribute__((target("avx2"))) void quantize_hif4_rna_avx2(const float* x, size_t n_blocks, uint8_t* codes,
                                                            uint32_t* words) {
  const Hif4RecTable& recs = hif4_recs();
  const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF);
  const __m256i lane0_4 = _mm256_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4);  // group maxima of one vector
  const __m256d one = _mm256_set1_pd(1.0), half = _mm256_set1_pd(0.5);
  const __m256d two = _mm256_set1_pd(2.0), four = _mm256_set1_pd(4.0);
  alignas(32) std::array<double, 64> k;
  alignas(32) std::array<double, 64> add;
  add.fill(0.5);
  for (size_t b = 0; b < n_blocks; ++b) {
    const float* xb = x + b * 64;
    uint8_t* cb = codes + b * 64;
    // g[q] lanes 0, 1 = maxima of groups 2q, 2q+1 (elements 8q..8q+3, 8q+4..8q+7).
    __m128i quad[4];  // quad[p] = maxima of groups 4p..4p+3
    for (int p = 0; p < 4; ++p) {
      __m256i g[2];
      for (int h = 0; h < 2; ++h) {
        __m256i a = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb + 16 * p + 8 * h)), absm);
        a = _mm256_max_epu32(a, _mm256_shuffle_epi32(a, 0x4E));
        a = _mm256_max_epu32(a, _mm256_shuffle_epi32(a, 0xB1));
        g[h] = _mm256_permutevar8x32_epi32(a, lane0_4);  // lanes 0, 1: the two groups
      }
      quad[p] = _mm_unpacklo_epi64(_mm256_castsi256_si128(g[0]), _mm256_castsi256_si128(g[1]));
    }
    __m128i mx = _mm_max_epu32(_mm_max_epu32(quad[0], quad[1]), _mm_max_epu32(quad[2], quad[3]));
    mx = _mm_max_epu32(mx, _mm_shuffle_epi32(mx, 0x4E));
    mx = _mm_max_epu32(mx, _mm_shuffle_epi32(mx, 0xB1));
    const auto vmax_bits = static_cast<uint32_t>(_mm_cvtsi128_si32(mx));
    if (vmax_bits >= kExpMask) {  // as the portable loop: NaN scale, zero codes
      words[b] = kScaleNaN;
      std::fill(cb, cb + 64, uint8_t{0});
      continue;
    }
    const uint8_t e6m2 = vmax_bits == 0 ? uint8_t{0} : hif4_e6m2_code(u2f(vmax_bits));
    const __m256d rec = _mm256_set1_pd(recs.rec[e6m2]);
    uint32_t w = e6m2;
    for (int p = 0; p < 4; ++p) {
      // v16 of groups 4p..4p+3 as doubles, v8 of their two halves (groups 4p|4p+1, 4p+2|4p+3).
      const __m256d v16 = _mm256_cvtps_pd(_mm_castsi128_ps(quad[p]));
      const __m128i m8 = _mm_max_epu32(quad[p], _mm_shuffle_epi32(quad[p], 0xB1));  // lanes 0, 2
      const __m256d v8 = _mm256_cvtps_pd(_mm_castsi128_ps(m8));                     // lanes 0, 2 used
      const __m256d l2 = _mm256_cmp_pd(_mm256_mul_pd(v8, rec), four, _CMP_GE_OQ);
      const __m256d l2g = _mm256_permute4x64_pd(l2, 0xA0);  // lane 0 -> groups 0, 1; lane 2 -> 2, 3
      const __m256d l3 = _mm256_cmp_pd(_mm256_mul_pd(v16, rec), _mm256_blendv_pd(two, four, l2g), _CMP_GE_OQ);
      const int l2bits = _mm256_movemask_pd(l2), l3bits = _mm256_movemask_pd(l3);
      w |= static_cast<uint32_t>((l2bits & 1) | ((l2bits >> 1) & 2)) << (8 + 2 * p);
      w |= static_cast<uint32_t>(l3bits) << (16 + 4 * p);
      // k = REC * 2^(2 - level) per group: 4, halved once per level bit (exact).
      __m256d kg = _mm256_mul_pd(_mm256_mul_pd(rec, four), _mm256_blendv_pd(one, half, l2g));
      kg = _mm256_mul_pd(kg, _mm256_blendv_pd(one, half, l3));
      alignas(32) double kl[4];
      _mm256_store_pd(kl, kg);
      for (int j = 0; j < 4; ++j) _mm256_store_pd(k.data() + 16 * p + 4 * j, _mm256_set1_pd(kl[j]));
    }
    words[b] = w;
    hif4_codes(xb, k.data(), add.data(), cb);
  }
}
#endif

}  // namespace

FP4SIM_HOT void quantize_hif4(const float* x, size_t n_blocks, const QuantOptions& opt, uint8_t* codes, uint32_t* words,
                   uint64_t first_index) {
  const bool sr = opt.rounding == Rounding::Sr;
#if defined(__x86_64__)
  if (kHaveAvx2 && !sr) {
    quantize_hif4_rna_avx2(x, n_blocks, codes, words);
    return;
  }
#endif
  const Hif4RecTable& recs = hif4_recs();
  std::array<uint8_t, 64> rb{};
  std::array<double, 64> add, k;
  add.fill(0.5);
  for (size_t b = 0; b < n_blocks; ++b) {
    const float* xb = x + b * 64;
    uint8_t* cb = codes + b * 64;
    std::array<uint32_t, 16> v16;  // FP32 bits of max |x| over each group of 4
    uint32_t vmax_bits = 0;
    for (int j = 0; j < 16; ++j) {
      v16[j] = abs_max_bits(xb + 4 * j, 4);
      vmax_bits = std::max(vmax_bits, v16[j]);
    }
    if (vmax_bits >= kExpMask) {  // fp4sim choice (reference undefined): NaN scale, zero codes
      words[b] = kScaleNaN;
      std::fill(cb, cb + 64, uint8_t{0});
      continue;
    }
    const uint8_t e6m2 = vmax_bits == 0 ? uint8_t{0} : hif4_e6m2_code(u2f(vmax_bits));
    const double rec = recs.rec[e6m2];
    uint32_t w = e6m2;
    for (int kk = 0; kk < 8; ++kk) {
      const double v8 = static_cast<double>(u2f(std::max(v16[2 * kk], v16[2 * kk + 1])));
      const int l2 = v8 * rec >= 4.0;  // exact products (24 x 8 significant bits)
      w |= static_cast<uint32_t>(l2) << (8 + kk);
      for (int jj = 0; jj < 2; ++jj) {
        const int j = 2 * kk + jj;
        // multiplications by powers of two are exact; ldexp would cost a libm call each
        const int l3 = static_cast<double>(u2f(v16[j])) * rec * (l2 ? 0.5 : 1.0) >= 2.0;
        w |= static_cast<uint32_t>(l3) << (16 + j);
        constexpr double kPow2[3] = {4.0, 2.0, 1.0};  // 2^(2 - level)
        const double kj = rec * kPow2[l2 + l3];
        for (int i = 0; i < 4; ++i) k[4 * j + i] = kj;
      }
    }
    words[b] = w;
    if (sr) {
      sr_bytes(opt.seed, opt.stream, first_index + b * 64, 64, rb.data());
      for (int i = 0; i < 64; ++i) add[i] = rb[i] / 256.0;
    }
    hif4_codes(xb, k.data(), add.data(), cb);
  }
}

Quantized quantize(BlockFormat f, std::span<const float> x, size_t rows, size_t cols, const QuantOptions& opt) {
  Quantized q;
  quantize(f, x, rows, cols, opt, q);
  return q;
}

void quantize(BlockFormat f, std::span<const float> x_in, size_t rows, size_t cols, const QuantOptions& opt,
              Quantized& q) {
  const BlockFormatInfo& fi = info(f);
  check_shape(fi, x_in.size(), rows, cols, opt);
  std::span<const float> x = x_in;
  std::vector<float> rotated;
  if (opt.rht != 0) {
    rotated.assign(x_in.begin(), x_in.end());
    std::vector<int8_t> signs;
    rht_signs(opt.rht, opt.rht_seeded || opt.rht != 16, opt.rht_seed, signs);
    rht_apply(rotated, cols, opt.rht, signs, opt.rht_bf16);
    x = rotated;
  }
  q.format = f;
  q.global_scale = 1.0f;
  q.amax = 0.0f;
  q.rows = rows;
  q.cols = cols;
  q.codes.resize(rows * cols);
  const size_t nb = rows * cols / static_cast<size_t>(fi.block);
  switch (f) {
    case BlockFormat::Nvfp4:
      q.scale_words.clear();
      q.scales.resize(nb);
      quantize_nvfp4(x.data(), rows, cols, opt, q);
      break;
    case BlockFormat::Hif4:
      q.scales.clear();
      q.scale_words.resize(nb);
      quantize_hif4(x.data(), nb, opt, q.codes.data(), q.scale_words.data(), 0);
      break;
    default:
      q.scale_words.clear();
      q.scales.resize(nb);
      quantize_mx(f, x.data(), nb, opt, q.codes.data(), q.scales.data(), 0);
      break;
  }
}

double block_scale_value(const Quantized& q, size_t b) {
  const BlockFormatInfo& fi = info(q.format);
  if (fi.scale_word32) return decode(kE6M2, hif4_e6m2(q.scale_words[b]));
  return decode(*fi.scale, q.scales[b]);
}

std::vector<float> dequantize(const Quantized& q) {
  const BlockFormatInfo& fi = info(q.format);
  const size_t B = static_cast<size_t>(fi.block);
  const DecodeTable& et = decode_table(*fi.elem);
  std::vector<float> out(q.rows * q.cols);
  const size_t nb = q.num_blocks();
  for (size_t b = 0; b < nb; ++b) {
    const uint8_t* cb = q.codes.data() + b * B;
    float* ob = out.data() + b * B;
    const double s = block_scale_value(q, b);
    if (std::isnan(s)) {
      std::fill(ob, ob + B, std::numeric_limits<float>::quiet_NaN());
      continue;
    }
    if (q.format == BlockFormat::Nvfp4) {  // TE: q * float(sdec_b8) * S_dec, FP32 left to right
      const float sf = static_cast<float>(s);
      for (size_t i = 0; i < B; ++i) ob[i] = et.v[cb[i]] * sf * q.global_scale;
    } else if (fi.scale_word32) {
      const uint32_t w = q.scale_words[b];
      for (size_t i = 0; i < B; ++i) {  // exact: <= 6 significant bits
        ob[i] = static_cast<float>(std::ldexp(static_cast<double>(et.v[cb[i]]) * s, hif4_level(w, static_cast<int>(i))));
      }
    } else {
      for (size_t i = 0; i < B; ++i) ob[i] = static_cast<float>(static_cast<double>(et.v[cb[i]]) * s);
    }
  }
  return out;
}

}  // namespace fp4sim
