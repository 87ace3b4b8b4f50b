#include "fp4sim/quant.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "fp4sim/hadamard.hpp"
#include "fp4sim/philox.hpp"
#include "quant_internal.hpp"

namespace fp4sim {

namespace quant_detail {
const Hif4RecTable& hif4_recs() {
  static const Hif4RecTable recs;
  return recs;
}
}  // namespace quant_detail

using namespace quant_detail;

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

// Hot loops are compiled twice (AVX2 and baseline x86-64) and picked at load time. Bits do not
// depend on the clone: the build disables FMA contraction and both use IEEE single/double ops.
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define FP4SIM_HOT __attribute__((target_clones("avx2", "default")))
#else
#define FP4SIM_HOT
#endif

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
// x < 0 as an ordered float compare (false for -0.0 and NaN).
// GCC's auto-vectorized form of the scalar loop runs at less than half this rate.
#define FP4SIM_SET1(f) _mm256_set1_epi32(static_cast<int>(std::bit_cast<uint32_t>(f)))
__attribute__((target("avx2"), always_inline)) inline void e2m1_rne_16_avx2_inl(const float* x, float inv,
                                                                                uint8_t* out) {
  const __m256 vinv = _mm256_set1_ps(inv);
  const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF), one_bit = _mm256_set1_epi32(1);
  const __m256i half_ulp = _mm256_set1_epi32(0x1FFFFF), bias = _mm256_set1_epi32(252), seven = _mm256_set1_epi32(7);
  const __m256i below_one = _mm256_sub_epi32(FP4SIM_SET1(1.0f), one_bit);  // |v| >= 1 <=> bits > this
  const __m256i eight = _mm256_set1_epi32(8);
  __m256i c[2];
  for (int h = 0; h < 2; ++h) {
    const __m256 xv = _mm256_loadu_ps(x + 8 * h);
    const __m256i ab = _mm256_and_si256(_mm256_castps_si256(_mm256_mul_ps(xv, vinv)), absm);
    __m256i norm = _mm256_add_epi32(ab, _mm256_add_epi32(half_ulp, _mm256_and_si256(_mm256_srli_epi32(ab, 22), one_bit)));
    norm = _mm256_min_epu32(_mm256_sub_epi32(_mm256_srli_epi32(norm, 22), bias), seven);
    const __m256i sub = _mm256_cvtps_epi32(_mm256_add_ps(_mm256_castsi256_ps(ab), _mm256_castsi256_ps(ab)));
    const __m256i m = _mm256_blendv_epi8(sub, norm, _mm256_cmpgt_epi32(ab, below_one));
    const __m256i neg = _mm256_castps_si256(_mm256_cmp_ps(xv, _mm256_setzero_ps(), _CMP_LT_OQ));
    c[h] = _mm256_or_si256(m, _mm256_and_si256(neg, eight));
  }
  __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(c[0], c[1]), 0xD8);
  p = _mm256_packus_epi16(p, p);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                   _mm_unpacklo_epi64(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1)));
}
#undef FP4SIM_SET1

// Four vectors of 32-bit lane masks (0 / -1) as 32 byte masks, in the packs' lane order.
__attribute__((target("avx2"), always_inline)) inline __m256i pack_masks_32(const __m256i* m) {
  return _mm256_packs_epi16(_mm256_packs_epi32(m[0], m[1]), _mm256_packs_epi32(m[2], m[3]));
}

// kE2m1Cells (quant_internal.hpp) as two 16-entry vpshufb tables for e2m1_rne_32_avx2, indexed by
// r = (pattern >> 21) - 499 saturated (cell r + 3; cells 0..3 count 0): lo[min(r, 15)] is the count
// up to cell 18, hi[min(r -sat 15, 15)] what cells 19 and up add. Bit 7 of an entry is the cell's
// tie flag (at most one of the two entries has it).
struct E2m1Shuf {
  alignas(32) int8_t lo[32]{}, hi[32]{};
  constexpr E2m1Shuf() {
    auto entry = [](int count, int tie) { return static_cast<int8_t>(static_cast<uint8_t>(count | tie << 7)); };
    for (int k = 0; k < 16; ++k) {
      const int cl = k + 3, ch = std::min(k + 18, 63);
      lo[k] = lo[k + 16] = entry(kE2m1Cells.count[cl], kE2m1Cells.tie[cl]);
      hi[k] = hi[k + 16] = k == 0 ? 0 : entry(kE2m1Cells.count[ch] - kE2m1Cells.count[18], kE2m1Cells.tie[ch]);
    }
  }
};
inline constexpr E2m1Shuf kE2m1Shuf;
// r saturates at both ends: cells up to 3 hold no threshold, cells from 33 (r >= 30) all of them.
static_assert(kE2m1Cells.count[3] == 0 && kE2m1Cells.count[33] == 7);

// 32 E2M1 codes (two 16-value blocks: x[0..15] * inv0, x[16..31] * inv1), RNE with satfinite, by
// the table lookup of kE2m1Cells on bytes (the AVX2 form of quant_avx512.cpp's store_e2m1_64, a
// third fewer vector operations than two e2m1_rne_16_avx2_inl): the count from kE2m1Shuf, one
// less where the entry has the tie flag and the pattern's low 21 bits are zero (exactly on a ">"
// threshold). The cell, exact-hit and sign vectors are packed to bytes alike and put in order by
// one dword permute.
template <bool Stream = false>
__attribute__((target("avx2"), always_inline)) inline void e2m1_rne_32_avx2(const float* x, float inv0, float inv1,
                                                                            uint8_t* out) {
  const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF), low21 = _mm256_set1_epi32(0x1FFFFF);
  __m256i cell[4], exact[4], neg[4];
  for (int k = 0; k < 4; ++k) {
    const __m256 xv = _mm256_loadu_ps(x + 8 * k);
    const __m256i ab = _mm256_and_si256(_mm256_castps_si256(_mm256_mul_ps(xv, _mm256_set1_ps(k < 2 ? inv0 : inv1))), absm);
    cell[k] = _mm256_srli_epi32(ab, 21);  // < 1024: fits the signed 16-bit pack
    exact[k] = _mm256_cmpeq_epi32(_mm256_and_si256(ab, low21), _mm256_setzero_si256());
    neg[k] = _mm256_castps_si256(_mm256_cmp_ps(xv, _mm256_setzero_ps(), _CMP_LT_OQ));  // x < 0, ordered (SPEC §1)
  }
  const __m256i base = _mm256_set1_epi16(499);
  const __m256i r = _mm256_packus_epi16(_mm256_subs_epu16(_mm256_packs_epi32(cell[0], cell[1]), base),
                                        _mm256_subs_epu16(_mm256_packs_epi32(cell[2], cell[3]), base));
  const __m256i fifteen = _mm256_set1_epi8(15);
  const __m256i lo = _mm256_load_si256(reinterpret_cast<const __m256i*>(kE2m1Shuf.lo));
  const __m256i hi = _mm256_load_si256(reinterpret_cast<const __m256i*>(kE2m1Shuf.hi));
  const __m256i s = _mm256_add_epi8(_mm256_shuffle_epi8(lo, _mm256_min_epu8(r, fifteen)),
                                    _mm256_shuffle_epi8(hi, _mm256_min_epu8(_mm256_subs_epu8(r, fifteen), fifteen)));
  const __m256i tie = _mm256_and_si256(_mm256_cmpgt_epi8(_mm256_setzero_si256(), s), pack_masks_32(exact));  // -1: one less
  __m256i code = _mm256_add_epi8(_mm256_and_si256(s, _mm256_set1_epi8(0x7F)), tie);
  code = _mm256_or_si256(code, _mm256_and_si256(pack_masks_32(neg), _mm256_set1_epi8(8)));
  code = _mm256_permutevar8x32_epi32(code, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));  // undo the packs' lane order
  if constexpr (Stream) {  // 16-byte aligned (see nvfp4_1x16_avx2)
    _mm_stream_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(code));
    _mm_stream_si128(reinterpret_cast<__m128i*>(out + 16), _mm256_extracti128_si256(code, 1));
  } else {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), code);
  }
}

// Out-of-line entry for callers compiled without AVX2 (they check use_avx2 first).
__attribute__((target("avx2"))) void e2m1_rne_16_avx2(const float* x, float inv, uint8_t* out) {
  e2m1_rne_16_avx2_inl(x, inv, out);
}
// The kernel level: the best the CPU has, capped by FP4SIM_QUANT_SIMD=portable|avx2|avx512 (the
// tests run every level that way; unset or another value: no cap). Not const: set_quant_simd_level()
// changes it too. AVX-512 (quant_avx512.cpp) covers NVFP4 1x16, MX and HiF4 under RNE and SR; the
// other vector paths (NVFP4 2D, the tensor amax without block maxima) stay AVX2.
QuantSimd simd_cap_from_env() {
  __builtin_cpu_init();  // a static initializer: libgcc's CPU model may not be filled in yet
  const char* e = std::getenv("FP4SIM_QUANT_SIMD");
  const std::string_view v = e != nullptr ? e : "";
  return v == "portable" ? QuantSimd::Portable : v == "avx2" ? QuantSimd::Avx2 : QuantSimd::Avx512;
}
const QuantSimd simd_cap = simd_cap_from_env();
bool use_avx2 = simd_cap >= QuantSimd::Avx2 && __builtin_cpu_supports("avx2");
bool use_avx512 = simd_cap >= QuantSimd::Avx512 && use_avx2 && cpu_has_avx512();
#endif

// Codes of x[i] * inv under RNE with satfinite; the sign comes from x so that a product
// underflowing to -0.0 keeps the input's sign.
FP4SIM_INLINE void e2m1_rne_scaled(const float* __restrict x, size_t n, float inv, uint8_t* __restrict out) {
#if defined(__x86_64__)
  if (use_avx2 && n % 16 == 0) {
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

}  // namespace

void quant_detail::check_shape(const BlockFormatInfo& fi, size_t xsize, size_t rows, size_t cols,
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

namespace {

// ---------------------------------------------------------------------------------------------
// MX (SPEC §2.1)

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

#if defined(__x86_64__)

// Codes of eight values v (already scaled; sign taken from the input bits xb, SPEC §1) in a small
// format with subnormals, saturating at max: encode(f, v, Rne or Sr, true) (test_quant_fast checks
// both against encode over FP32 patterns and random bytes). Normal range: rounding on the FP32
// pattern at mbits, a carry moving into the exponent field; RNE adds 2^(shift-1) - 1 plus the kept
// bit, SR adds r * 2^(shift-8), i.e. r/256 of a grid step, so the carry happens iff
// frac + r/256 >= 1 (SPEC §3, PTX cvt.rs). Subnormal range (uniform grid): RNE is the conversion
// of an exact scaling (MXCSR round-to-nearest-even); SR is floor((floor(256 q) + r) / 256), which
// equals floor(q + r/256) because r is an integer. Inf and NaN patterns land above max: saturated.
template <bool SR>
__attribute__((target("avx2"), always_inline)) inline __m256i small_codes_8(__m256 v, __m256i xb, __m256i r,
                                                                          const SmallFmtConst& c) {
  const __m256i ab = _mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(0x7FFFFFFF));
  const __m128i sh = _mm_cvtsi32_si128(c.shift);
  const __m256 scaled = _mm256_mul_ps(_mm256_castsi256_ps(ab), _mm256_set1_ps(c.sub_scale));
  __m256i u, sub;
  if constexpr (SR) {
    u = _mm256_add_epi32(ab, _mm256_sll_epi32(r, _mm_cvtsi32_si128(c.shift - 8)));
    sub = _mm256_srli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(scaled), r), 8);
  } else {
    const __m256i lsb = _mm256_and_si256(_mm256_srl_epi32(ab, sh), _mm256_set1_epi32(1));
    u = _mm256_add_epi32(ab, _mm256_add_epi32(_mm256_set1_epi32((1 << (c.shift - 1)) - 1), lsb));
    sub = _mm256_cvtps_epi32(scaled);
  }
  const __m256i norm = _mm256_sub_epi32(_mm256_srl_epi32(u, sh), _mm256_set1_epi32(static_cast<int>(c.exp_adj)));
  const __m256i is_sub = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(c.min_normal)), ab);
  const __m256i mag = _mm256_min_epu32(_mm256_blendv_epi8(norm, sub, is_sub), _mm256_set1_epi32(static_cast<int>(c.max_code)));
  // x < 0 as an ordered compare: false for -0.0 and NaN (SPEC §1's sign rule)
  const __m256i neg = _mm256_castps_si256(_mm256_cmp_ps(_mm256_castsi256_ps(xb), _mm256_setzero_ps(), _CMP_LT_OQ));
  return _mm256_or_si256(mag, _mm256_and_si256(neg, _mm256_set1_epi32(static_cast<int>(c.sign_bit))));
}

// Eight random bytes as 32-bit lanes.
__attribute__((target("avx2"), always_inline)) inline __m256i rbytes_8(const uint8_t* rb) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(rb)));
}

// 32 codes (four vectors of 32-bit lanes, each < 256) stored as bytes in order.
__attribute__((target("avx2"), always_inline)) inline void store_codes_32(__m256i c0, __m256i c1, __m256i c2, __m256i c3,
                                                                          uint8_t* out) {
  // packs/packus interleave per 128-bit lane: dwords come out as c0lo c1lo c2lo c3lo | c0hi c1hi c2hi c3hi
  const __m256i p = _mm256_packus_epi16(_mm256_packs_epi32(c0, c1), _mm256_packs_epi32(c2, c3));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                      _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}

// 16 codes (two vectors) stored as bytes in order.
template <bool Stream = false>
__attribute__((target("avx2"), always_inline)) inline void store_codes_16(__m256i c0, __m256i c1, uint8_t* out) {
  __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(c0, c1), 0xD8);
  p = _mm256_packus_epi16(p, p);
  const __m128i v = _mm_unpacklo_epi64(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
  if constexpr (Stream) _mm_stream_si128(reinterpret_cast<__m128i*>(out), v);
  else _mm_storeu_si128(reinterpret_cast<__m128i*>(out), v);
}

// Lane i = the unsigned max of the eight lanes of m[i]: an unpack / max tree.
__attribute__((target("avx2"), always_inline)) inline __m256i lane_maxima_8(const __m256i* m) {
  __m256i p[4];
  for (int i = 0; i < 4; ++i)
    p[i] = _mm256_max_epu32(_mm256_unpacklo_epi32(m[2 * i], m[2 * i + 1]),
                            _mm256_unpackhi_epi32(m[2 * i], m[2 * i + 1]));  // vectors 2i, 2i+1 interleaved
  const __m256i q0 = _mm256_max_epu32(_mm256_unpacklo_epi64(p[0], p[1]), _mm256_unpackhi_epi64(p[0], p[1]));
  const __m256i q1 = _mm256_max_epu32(_mm256_unpacklo_epi64(p[2], p[3]), _mm256_unpackhi_epi64(p[2], p[3]));
  // q0: lanes (0,1,2,3 | 0,1,2,3) = partial maxima of vectors 0..3 in each 128-bit half; q1 likewise 4..7.
  return _mm256_max_epu32(_mm256_permute2x128_si256(q0, q1, 0x20), _mm256_permute2x128_si256(q0, q1, 0x31));
}

// MX blocks with AVX2, every element type, RNE or SR: the block amax as an unsigned max of FP32
// patterns; the shared exponent from its bits, eight blocks per vector under the floor rule
// (floor(log2 amax) - emax_elem clamped to [-127, 127], the scale code and 2^-e as patterns;
// FP32-subnormal amaxes and the ceil rule take mx_shared_exp, as the portable loops); the elements
// scaled by 2^-e in float (exact unless below 2^-126, where every element type gives 0 under RNE
// and SR alike: the grid-step fraction there is < 2^-100, and r/256 < 1), then small_codes_8
// (E2M1 under RNE: the tuned e2m1_rne_16 kernel). SR bytes come in batches of 64 blocks so that
// Philox runs on eight lanes.
// Eight lanes whose unsigned max is the amax pattern of a 32-value block (NaN above Inf).
__attribute__((target("avx2"), always_inline)) inline __m256i mx_block_amax8(const float* xb) {
  const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF);
  __m256i m8 = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb)), absm);
  for (int k = 1; k < 4; ++k)
    m8 = _mm256_max_epu32(m8, _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb + 8 * k)), absm));
  return m8;
}

// One MX block's scale code and elements given its amax, 2^-e (FP32 bits) and e; zero codes for a
// zero or non-finite amax, as the portable loops.
template <bool SR>
__attribute__((target("avx2"), always_inline)) inline void mx_block_elems(const float* xb, uint8_t* cb, uint8_t* scale,
                                                                          uint32_t amax_bits, uint32_t inv_bits, int e,
                                                                          bool fp4_rne, const uint8_t* rb,
                                                                          const SmallFmtConst& c) {
  if (amax_bits >= kExpMask || amax_bits == 0) {
    *scale = amax_bits == 0 ? uint8_t{0} : kScaleNaN;
    std::fill(cb, cb + 32, uint8_t{0});
    return;
  }
  *scale = static_cast<uint8_t>(e + kUE8M0Bias);
  const float inv = u2f(inv_bits);
  if (!SR && fp4_rne) {
    e2m1_rne_32_avx2(xb, inv, inv, cb);
    return;
  }
  const __m256 vinv = _mm256_set1_ps(inv);
  __m256i cc[4];
  for (int k = 0; k < 4; ++k) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb + 8 * k));
    const __m256i r = SR ? rbytes_8(rb + 8 * k) : _mm256_setzero_si256();
    cc[k] = small_codes_8<SR>(_mm256_mul_ps(_mm256_castsi256_ps(v), vinv), v, r, c);
  }
  store_codes_32(cc[0], cc[1], cc[2], cc[3], cb);
}

template <bool SR>
__attribute__((target("avx2"))) void mx_blocks_avx2(const BlockFormatInfo& fi, const float* x, size_t n_blocks,
                                                    const QuantOptions& opt, uint8_t* codes, uint8_t* scales,
                                                    uint64_t first_index) {
  constexpr size_t B = 32, kBatch = 64;
  const SmallFmtConst c = small_fmt_const(*fi.elem, SR);
  const bool fp4_rne = !SR && fi.elem == &kE2M1;
  const bool floor_rule = opt.scale_rule == ScaleRule::Floor;
  alignas(32) std::array<uint8_t, kBatch * B> rb{};
  alignas(32) uint32_t amax8[8], inv8[8];
  for (size_t b0 = 0; b0 < n_blocks; b0 += kBatch) {
    const size_t nb = std::min(kBatch, n_blocks - b0);
    prefetch_ahead(x + b0 * B, (n_blocks - b0) * B, kBatch * B * sizeof(float));
    if constexpr (SR) sr_bytes(opt.seed, opt.stream, first_index + b0 * B, nb * B, rb.data());
    size_t bi = 0;
    for (; floor_rule && bi + 8 <= nb; bi += 8) {
      __m256i m[8];
      for (size_t i = 0; i < 8; ++i) m[i] = mx_block_amax8(x + (b0 + bi + i) * B);
      const __m256i a = lane_maxima_8(m);
      // e = clamp(exponent field - 127 - emax_elem, -127, 127); 2^-e = (127 - e) << 23, or 2^-127
      __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(a, 23), _mm256_set1_epi32(127 + fi.emax_elem));
      e = _mm256_min_epi32(_mm256_max_epi32(e, _mm256_set1_epi32(-127)), _mm256_set1_epi32(127));
      const __m256i inv = _mm256_blendv_epi8(_mm256_slli_epi32(_mm256_sub_epi32(_mm256_set1_epi32(127), e), 23),
                                             _mm256_set1_epi32(0x00400000), _mm256_cmpeq_epi32(e, _mm256_set1_epi32(127)));
      alignas(32) int32_t e8[8];
      _mm256_store_si256(reinterpret_cast<__m256i*>(amax8), a);
      _mm256_store_si256(reinterpret_cast<__m256i*>(inv8), inv);
      _mm256_store_si256(reinterpret_cast<__m256i*>(e8), e);
      for (size_t i = 0; i < 8; ++i) {
        if (amax8[i] < 0x00800000u && amax8[i] != 0) {  // FP32-subnormal amax: ilogb
          e8[i] = mx_shared_exp(fi, u2f(amax8[i]), opt.scale_rule);
          inv8[i] = f2u(pow2_neg(e8[i]));
        }
        const size_t b = b0 + bi + i;
        mx_block_elems<SR>(x + b * B, codes + b * B, scales + b, amax8[i], inv8[i], e8[i], fp4_rne,
                           rb.data() + (bi + i) * B, c);
      }
    }
    for (; bi < nb; ++bi) {
      const size_t b = b0 + bi;
      const __m256i m8 = mx_block_amax8(x + b * B);
      __m128i m = _mm_max_epu32(_mm256_castsi256_si128(m8), _mm256_extracti128_si256(m8, 1));
      m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0x4E));
      m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0xB1));
      const auto amax_bits = static_cast<uint32_t>(_mm_cvtsi128_si32(m));
      const bool special = amax_bits >= kExpMask || amax_bits == 0;
      const int e = special ? 0 : mx_shared_exp(fi, u2f(amax_bits), opt.scale_rule);
      mx_block_elems<SR>(x + b * B, codes + b * B, scales + b, amax_bits, special ? 0u : f2u(pow2_neg(e)), e, fp4_rne,
                         rb.data() + bi * B, c);
    }
  }
}
#endif

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

// ScaleRule::Ceil rounds the scale exponent up so that no element saturates: torchao and NVIDIA
// (TransformerEngine, cuBLAS) call that rule RCEIL, so manifests record "rceil"; "ceil", fp4sim's
// earlier name, is still read.
std::string_view scale_rule_name(ScaleRule r) { return r == ScaleRule::Floor ? "floor" : "rceil"; }

bool parse_scale_rule(std::string_view s, ScaleRule& out) {
  if (s == "floor") out = ScaleRule::Floor;
  else if (s == "rceil" || s == "ceil") out = ScaleRule::Ceil;
  else return false;
  return true;
}

std::string_view convention_name(Convention c) {
  switch (c) {
    case Convention::Te: return "te";
    case Convention::Torchao: return "torchao";
    case Convention::Modelopt: return "modelopt";
  }
  return "te";
}

bool parse_convention(std::string_view s, Convention& out) {
  if (s == "te") out = Convention::Te;
  else if (s == "torchao") out = Convention::Torchao;
  else if (s == "modelopt") out = Convention::Modelopt;
  else return false;
  return true;
}

void quantize_mx(BlockFormat f, const float* x, size_t n_blocks, const QuantOptions& opt, uint8_t* codes,
                 uint8_t* scales, uint64_t first_index) {
  const BlockFormatInfo& fi = info(f);
  const size_t B = static_cast<size_t>(fi.block);
  const bool sr = opt.rounding == Rounding::Sr;
#if defined(__x86_64__)
  if (use_avx512 && (sr || opt.rounding == Rounding::Rne)) {
    mx_blocks_avx512(fi, x, n_blocks, opt, codes, scales, first_index);
    return;
  }
  if (use_avx2 && (sr || opt.rounding == Rounding::Rne)) {
    if (sr) mx_blocks_avx2<true>(fi, x, n_blocks, opt, codes, scales, first_index);
    else mx_blocks_avx2<false>(fi, x, n_blocks, opt, codes, scales, first_index);
    return;
  }
#endif
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
  (void)expm;
  const __m256i a0 = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb)), absm);
  const __m256i a1 = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb + 8)), absm);
  // maxps returns its second operand when either is NaN: max(|x1|, max(|x0|, 0)) ignores NaNs as
  // fmaxf does, and on non-negative floats it is the max of the patterns.
  const __m256 m0 = _mm256_max_ps(_mm256_castsi256_ps(a0), _mm256_setzero_ps());
  return _mm256_castps_si256(_mm256_max_ps(_mm256_castsi256_ps(a1), m0));
}

// Lane i = the NaN-ignoring amax pattern of block i of eight consecutive 16-value blocks: each
// block's eight-lane partial max (nvfp4_block_max_8) reduced by lane_maxima_8.
__attribute__((target("avx2"), always_inline)) inline __m256i block_maxima_8(const float* xc, __m256i absm,
                                                                             __m256i expm) {
  __m256i m[8];
  for (int i = 0; i < 8; ++i) m[i] = nvfp4_block_max_8(xc + 16 * i, absm, expm);
  return lane_maxima_8(m);
}

// One 16-value block's amax pattern (NaN ignored).
__attribute__((target("avx2"), always_inline)) inline uint32_t block_max_1(const float* xb, __m256i absm, __m256i expm) {
  const __m256i mm = nvfp4_block_max_8(xb, absm, expm);
  __m128i m = _mm_max_epu32(_mm256_castsi256_si128(mm), _mm256_extracti128_si256(mm, 1));
  m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0x4E));
  m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0xB1));
  return static_cast<uint32_t>(_mm_cvtsi128_si32(m));
}

// 16 NVFP4 element codes of x * inv: RNE (e2m1_rne_16) or SR with the block's 16 bytes rb.
// Stream (streaming stores) applies to SR; streamed RNE blocks go in pairs to e2m1_rne_32_avx2.
template <bool SR, bool Stream = false>
__attribute__((target("avx2"), always_inline)) inline void nvfp4_elems_16(const float* xb, float inv, const uint8_t* rb,
                                                                          const SmallFmtConst& c, uint8_t* out) {
  if constexpr (!SR) {
    e2m1_rne_16_avx2_inl(xb, inv, out);
  } else {
    const __m256 vinv = _mm256_set1_ps(inv);
    const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb));
    const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb + 8));
    store_codes_16<Stream>(small_codes_8<true>(_mm256_mul_ps(_mm256_castsi256_ps(x0), vinv), x0, rbytes_8(rb), c),
                   small_codes_8<true>(_mm256_mul_ps(_mm256_castsi256_ps(x1), vinv), x1, rbytes_8(rb + 8), c), out);
  }
}

// NVFP4 1x16 blocks with AVX2, eight blocks at a time: each block's NaN-ignoring amax as an
// unsigned max of FP32 patterns (NaN patterns zeroed), gathered one block per lane, the scale
// chain (amax * S_enc/6, UE4M3 RNE) on eight lanes, then 16 codes per block (RNE, or SR with the
// bytes of the flat element indices first_index + ...). A tail of fewer than eight blocks takes
// the scalar scale chain. Stream (outputs larger than the caches): codes and scales leave by
// streaming stores (16-byte-aligned codes), drained by an sfence before returning.
template <bool SR, bool Stream>
__attribute__((target("avx2"))) void nvfp4_1x16_avx2(const float* __restrict x, size_t n_blocks, Nvfp4TensorScale ts,
                                                     const QuantOptions& opt, uint64_t first_index,
                                                     const uint32_t* bmax, uint8_t* __restrict codes,
                                                     uint8_t* __restrict scales) {
  const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF), expm = _mm256_set1_epi32(0x7F800000);
  const SmallFmtConst c = small_fmt_const(kE2M1, true);
  std::array<float, 128> inv_of;  // the inverse depends only on the code: one division per code
  for (uint32_t k = 0; k < 127; ++k) inv_of[k] = nvfp4_inverse(k, ts);
  const float mult = ts.s_enc * (1.0f / 6.0f);  // nvfp4_scale_code's factor
  alignas(32) std::array<uint8_t, 128> rb{};
  size_t b = 0;
  for (; b + 8 <= n_blocks; b += 8) {
    const float* xc = x + b * 16;
    prefetch_ahead(xc, (n_blocks - b) * 16, 512);
    if constexpr (SR) sr_bytes(opt.seed, opt.stream, first_index + b * 16, 128, rb.data());
    const __m256i r = bmax ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bmax + b))
                           : block_maxima_8(xc, absm, expm);
    const __m256i code = ue4m3_rne_sat_8(_mm256_mul_ps(_mm256_castsi256_ps(r), _mm256_set1_ps(mult)));
    alignas(32) uint32_t c8[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(c8), code);
    const __m128i c8b = _mm_packus_epi16(  // the eight scale codes as bytes, in order
        _mm_packs_epi32(_mm256_castsi256_si128(code), _mm256_extracti128_si256(code, 1)), _mm_setzero_si128());
    if constexpr (Stream) _mm_stream_si64(reinterpret_cast<long long*>(scales + b), _mm_cvtsi128_si64(c8b));
    else _mm_storel_epi64(reinterpret_cast<__m128i*>(scales + b), c8b);
    for (int i = 0; i < 8; i += 2) {
      uint8_t* cb = codes + (b + static_cast<size_t>(i)) * 16;
      if constexpr (SR) {
        nvfp4_elems_16<SR, Stream>(xc + 16 * i, inv_of[c8[i]], rb.data() + 16 * i, c, cb);
        nvfp4_elems_16<SR, Stream>(xc + 16 * (i + 1), inv_of[c8[i + 1]], rb.data() + 16 * (i + 1), c, cb + 16);
      } else {
        e2m1_rne_32_avx2<Stream>(xc + 16 * i, inv_of[c8[i]], inv_of[c8[i + 1]], cb);
      }
    }
  }
  for (; b < n_blocks; ++b) {
    const float* xb = x + b * 16;
    if constexpr (SR) sr_bytes(opt.seed, opt.stream, first_index + b * 16, 16, rb.data());
    const uint8_t code = nvfp4_scale_code(u2f(bmax ? bmax[b] : block_max_1(xb, absm, expm)), ts);
    scales[b] = code;
    nvfp4_elems_16<SR>(xb, inv_of[code], rb.data(), c, codes + b * 16);
  }
  if constexpr (Stream) _mm_sfence();
}

// The block maxima of n_blocks 16-value blocks (NaN ignored) into out, and their max: the first
// NVFP4 pass (tensor amax) keeps them so that the second need not reduce every block again.
__attribute__((target("avx2"))) float nvfp4_block_maxima_avx2(const float* x, size_t n_blocks, uint32_t* out) {
  const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF), expm = _mm256_set1_epi32(0x7F800000);
  __m256i acc = _mm256_setzero_si256();
  size_t b = 0;
  for (; b + 8 <= n_blocks; b += 8) {
    const __m256i r = block_maxima_8(x + b * 16, absm, expm);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + b), r);
    acc = _mm256_max_epu32(acc, r);
  }
  alignas(32) uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
  uint32_t m = 0;
  for (uint32_t l : lanes) m = std::max(m, l);
  for (; b < n_blocks; ++b) {
    out[b] = block_max_1(x + b * 16, absm, expm);
    m = std::max(m, out[b]);
  }
  return u2f(m);
}

// NVFP4 2D (16x16 tiles) with AVX2, per group of 16 rows: the tile amaxes as running unsigned
// maxima of the rows' block maxima (eight tiles per vector), the scale chain per tile, then each
// row's codes as in the 1x16 kernel. The rows of a group (<= 16 x cols floats) stay in L2.
template <bool SR>
__attribute__((target("avx2"))) void nvfp4_2d_avx2(const float* __restrict x, size_t rows, size_t cols,
                                                   Nvfp4TensorScale ts, const QuantOptions& opt, uint64_t first_index,
                                                   uint8_t* __restrict codes, uint8_t* __restrict scales) {
  const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF), expm = _mm256_set1_epi32(0x7F800000);
  const SmallFmtConst c = small_fmt_const(kE2M1, true);
  std::array<float, 128> inv_of;
  for (uint32_t k = 0; k < 127; ++k) inv_of[k] = nvfp4_inverse(k, ts);
  const size_t sc = cols / 16;
  std::vector<uint32_t> tmax(sc);
  std::vector<uint8_t> tcode(sc), rb(SR ? cols : 16);
  for (size_t r0 = 0; r0 < rows; r0 += 16) {
    const size_t r1 = std::min(rows, r0 + 16);
    std::fill(tmax.begin(), tmax.end(), 0u);
    for (size_t r = r0; r < r1; ++r) {
      const float* row = x + r * cols;
      size_t j = 0;
      for (; j + 8 <= sc; j += 8) {
        auto* t = reinterpret_cast<__m256i*>(tmax.data() + j);
        _mm256_storeu_si256(t, _mm256_max_epu32(_mm256_loadu_si256(t), block_maxima_8(row + 16 * j, absm, expm)));
      }
      for (; j < sc; ++j) tmax[j] = std::max(tmax[j], block_max_1(row + 16 * j, absm, expm));
    }
    for (size_t j = 0; j < sc; ++j) tcode[j] = nvfp4_scale_code(u2f(tmax[j]), ts);
    for (size_t r = r0; r < r1; ++r) {
      const float* row = x + r * cols;
      if constexpr (SR) sr_bytes(opt.seed, opt.stream, first_index + r * cols, cols, rb.data());
      std::copy(tcode.begin(), tcode.end(), scales + r * sc);
      for (size_t j = 0; j < sc; ++j)
        nvfp4_elems_16<SR>(row + 16 * j, inv_of[tcode[j]], rb.data() + (SR ? 16 * j : 0), c, codes + r * cols + 16 * j);
    }
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

}  // namespace

// Tensor amax (NaN ignored, Inf kept) of n values.
float quant_detail::tensor_amax(const float* x, size_t n) {
#if defined(__x86_64__)
  if (use_avx512) return tensor_amax_avx512(x, n);
  if (use_avx2) return abs_max_ignore_nan_avx2(x, n);
#endif
  return abs_max_ignore_nan(x, n);
}

// Rows [0, rows) of a chunk whose first element has flat index first_index (the SR counter),
// under the tensor scale ts; x, codes and scales point at the chunk. A 2D chunk starts on a tile.
// bmax: the chunk's block maxima from the first pass (vector 1x16 only), or null. stream: the
// output is too large to stay in cache (the vector 1x16 kernels then write it with streaming
// stores; codes and scales 16-byte aligned).
void quant_detail::quantize_nvfp4_rows(const float* x, size_t rows, size_t cols, const QuantOptions& opt,
                                       Nvfp4TensorScale ts, uint64_t first_index, const uint32_t* bmax,
                                       uint8_t* codes, uint8_t* scales, bool stream) {
  const size_t sc = cols / 16;
  const bool sr = opt.rounding == Rounding::Sr;
#if defined(__x86_64__)
  if (use_avx2 && (sr || opt.rounding == Rounding::Rne)) {
    if (opt.two_d) {
      if (sr) nvfp4_2d_avx2<true>(x, rows, cols, ts, opt, first_index, codes, scales);
      else nvfp4_2d_avx2<false>(x, rows, cols, ts, opt, first_index, codes, scales);
    } else if (use_avx512) {
      nvfp4_1x16_avx512(x, rows * sc, ts, opt, first_index, bmax, codes, scales, stream);
    } else {
      if (stream) {
        if (sr) nvfp4_1x16_avx2<true, true>(x, rows * sc, ts, opt, first_index, bmax, codes, scales);
        else nvfp4_1x16_avx2<false, true>(x, rows * sc, ts, opt, first_index, bmax, codes, scales);
      } else {
        if (sr) nvfp4_1x16_avx2<true, false>(x, rows * sc, ts, opt, first_index, bmax, codes, scales);
        else nvfp4_1x16_avx2<false, false>(x, rows * sc, ts, opt, first_index, bmax, codes, scales);
      }
    }
    return;
  }
#endif
  if (!opt.two_d && opt.rounding == Rounding::Rne) {
    nvfp4_rne_1x16(x, rows * sc, ts, codes, scales);
    return;
  }
  if (!opt.two_d) {
    for (size_t r = 0; r < rows; ++r) {
      for (size_t j = 0; j < sc; ++j) {
        const size_t off = r * cols + j * 16;
        const uint8_t code = nvfp4_block_scale_code(abs_max_ignore_nan(x + off, 16), ts);
        scales[r * sc + j] = code;
        nvfp4_quantize_block(x + off, 16, nvfp4_block_inverse(code, ts), opt, first_index + off, codes + off);
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
        scales[r * sc + j] = code;
        nvfp4_quantize_block(x + off, 16, inv, opt, first_index + off, codes + off);
      }
    }
  }
}

namespace {

// ---------------------------------------------------------------------------------------------
// HiF4 (SPEC §2.3) — the official library's To_HiFX with N=4, M=2, G=64, evaluated exactly.

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

#if defined(__x86_64__)
// HiF4 element codes of 8 values (elements 8q .. 8q+7 of a block) in exact integer arithmetic:
// c = min(7, floor(|x| * k + r/256)) with k = REC * 2^(2 - level) (the portable hif4_codes with
// add = r/256; r = 128 is half-up). |x| = mx * 2^(ef - 150) (24-bit significand, FP32 exponent
// field ef) and REC = mr * 2^(er - 7) (8 bits), so |x| * k = P / 2^s with P = mx * mr < 2^32 exact
// in 32 bits and s = 155 - ef - er + level; floor(P / 2^s + r/256) = (floor(P / 2^(s-8)) + r) >> 8.
// base_lvl holds 147 - er + level, so sa = s - 8 = base_lvl - ef. Shifts of 32 or more give 0
// (srlv), as they should. For a normal x, P >= 2^30: below sa = 12 the code is 7 anyway, and
// clamping sa up to 12 keeps it 7 (P >> 12 >= 2^18) while P >> sa + r cannot overflow. FP32
// subnormals (ef = 0, read here with a hidden bit) have sa >= 99: code 0, as for their true value.
template <bool SR>
__attribute__((target("avx2"), always_inline)) inline __m256i hif4_codes_8(__m256i xb, __m256i mr, __m256i base_lvl,
                                                                          __m256i r) {
  const __m256i ef = _mm256_srli_epi32(_mm256_slli_epi32(xb, 1), 24);
  const __m256i mx = _mm256_or_si256(_mm256_and_si256(xb, _mm256_set1_epi32(0x7FFFFF)), _mm256_set1_epi32(0x800000));
  const __m256i sa = _mm256_max_epi32(_mm256_sub_epi32(base_lvl, ef), _mm256_set1_epi32(12));
  const __m256i p = _mm256_mullo_epi32(mx, mr);
  const __m256i c = _mm256_min_epu32(_mm256_srli_epi32(_mm256_add_epi32(_mm256_srlv_epi32(p, sa), r), 8),
                                     _mm256_set1_epi32(7));
  const __m256i neg = _mm256_castps_si256(_mm256_cmp_ps(_mm256_castsi256_ps(xb), _mm256_setzero_ps(), _CMP_LT_OQ));
  return _mm256_or_si256(c, _mm256_and_si256(neg, _mm256_set1_epi32(8)));
}

// E1_16 bits from a movemask of group maxima in lane order (g0 g2 g4 g6 g1 g3 g5 g7).
constexpr std::array<uint8_t, 256> kHif4Interleave = [] {
  std::array<uint8_t, 256> t{};
  for (unsigned m = 0; m < 256; ++m) {
    unsigned v = 0;
    for (unsigned i = 0; i < 4; ++i) v |= ((m >> i) & 1u) << (2 * i) | ((m >> (4 + i)) & 1u) << (2 * i + 1);
    t[m] = static_cast<uint8_t>(v);
  }
  return t;
}();

// HiF4 with AVX2, half-up or SR: the same decisions as quantize_hif4's portable loop. The 16 group
// maxima (unsigned max of |x| patterns, NaN above Inf, as abs_max_bits) come out of an unpack /
// max tree in two vectors, lanes in the order g0 g2 g4 g6 | g1 g3 g5 g7 (and g8..g15), so a half
// swap pairs each group with its E1_8 partner. The levels are integer compares against the
// per-code thresholds t2 / t4 (Hif4RecTable): E1_8 bit k = V8[k] >= t4 (V8 * REC >= 4), E1_16 bit
// j = V16[j] >= (E1_8 of j's pair ? t4 : t2) (the portable "V16 * REC * 0.5 >= 2"). Then the
// element codes in integers (hif4_codes_8). SR bytes come in batches of 32 blocks (Philox on
// eight lanes). tests: test_hif4 (reference differential, directed cases), test_quant_fast.
template <bool SR>
__attribute__((target("avx2"))) void quantize_hif4_avx2(const float* x, size_t n_blocks, const QuantOptions& opt,
                                                        uint8_t* codes, uint32_t* words, uint64_t first_index) {
  const Hif4RecTable& recs = hif4_recs();
  const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF), one = _mm256_set1_epi32(1);
  __m256i lane_pick[4];  // element vector q: lanes (q%4) x 4 then (q%4 + 4) x 4 of its level vector
  for (int i = 0; i < 4; ++i) lane_pick[i] = _mm256_setr_epi32(i, i, i, i, i + 4, i + 4, i + 4, i + 4);
  constexpr size_t kBatch = 32;
  alignas(32) std::array<uint8_t, kBatch * 64> rb{};
  for (size_t b = 0; b < n_blocks; ++b) {
    if constexpr (SR) {
      if (b % kBatch == 0) sr_bytes(opt.seed, opt.stream, first_index + b * 64, std::min(kBatch, n_blocks - b) * 64, rb.data());
    }
    const float* xb = x + b * 64;
    prefetch_ahead(xb, (n_blocks - b) * 64, 256);
    uint8_t* cb = codes + b * 64;
    __m256i xv[8];
    for (int k = 0; k < 8; ++k) xv[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb + 8 * k));
    __m256i g[2];  // group maxima, lane order g0 g2 g4 g6 | g1 g3 g5 g7 (g[1]: groups + 8)
    for (int h = 0; h < 2; ++h) {
      const __m256i* a = xv + 4 * h;
      const __m256i a0 = _mm256_and_si256(a[0], absm), a1 = _mm256_and_si256(a[1], absm);
      const __m256i a2 = _mm256_and_si256(a[2], absm), a3 = _mm256_and_si256(a[3], absm);
      const __m256i b01 = _mm256_max_epu32(_mm256_unpacklo_epi32(a0, a1), _mm256_unpackhi_epi32(a0, a1));
      const __m256i b23 = _mm256_max_epu32(_mm256_unpacklo_epi32(a2, a3), _mm256_unpackhi_epi32(a2, a3));
      g[h] = _mm256_max_epu32(_mm256_unpacklo_epi64(b01, b23), _mm256_unpackhi_epi64(b01, b23));
    }
    const __m256i gm = _mm256_max_epu32(g[0], g[1]);
    __m128i mx = _mm_max_epu32(_mm256_castsi256_si128(gm), _mm256_extracti128_si256(gm, 1));
    mx = _mm_max_epu32(mx, _mm_shuffle_epi32(mx, 0x4E));
    mx = _mm_max_epu32(mx, _mm_shuffle_epi32(mx, 0xB1));
    const auto vmax_bits = static_cast<uint32_t>(_mm_cvtsi128_si32(mx));
    if (vmax_bits >= kExpMask) {  // as the portable loop: NaN scale, zero codes
      words[b] = kScaleNaN;
      std::fill(cb, cb + 64, uint8_t{0});
      continue;
    }
    const uint8_t e6m2 = vmax_bits == 0 ? uint8_t{0} : hif4_e6m2_code(u2f(vmax_bits));
    // t - 1 so that a signed > is >= (all patterns here are finite and non-negative; t >= 1)
    const __m256i t2m1 = _mm256_set1_epi32(static_cast<int>(recs.t2[e6m2] - 1));
    const __m256i t4m1 = _mm256_set1_epi32(static_cast<int>(recs.t4[e6m2] - 1));
    const __m256i mr = _mm256_set1_epi32(static_cast<int>(recs.mr[e6m2]));  // REC = mr * 2^(er - 7)
    const __m256i base = _mm256_set1_epi32(recs.base[e6m2]);               // 147 - er
    uint32_t w = e6m2;
    __m256i lvl[2];  // 147 - er + level, per group in the lane order of g
    for (int h = 0; h < 2; ++h) {
      const __m256i v8 = _mm256_max_epu32(g[h], _mm256_permute2x128_si256(g[h], g[h], 1));
      const __m256i l2 = _mm256_cmpgt_epi32(v8, t4m1);
      const __m256i l3 = _mm256_cmpgt_epi32(g[h], _mm256_blendv_epi8(t2m1, t4m1, l2));
      w |= static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(l2)) & 0xF) << (8 + 4 * h);
      w |= static_cast<uint32_t>(kHif4Interleave[static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(l3)))])
           << (16 + 8 * h);
      lvl[h] = _mm256_add_epi32(base, _mm256_add_epi32(_mm256_and_si256(l2, one), _mm256_and_si256(l3, one)));
    }
    words[b] = w;
    const uint8_t* rbb = rb.data() + (b % kBatch) * 64;
    __m256i cc[8];
    for (int q = 0; q < 8; ++q) {
      const __m256i base_lvl = _mm256_permutevar8x32_epi32(lvl[q / 4], lane_pick[q % 4]);
      const __m256i r = SR ? rbytes_8(rbb + 8 * q) : _mm256_set1_epi32(128);
      cc[q] = hif4_codes_8<SR>(xv[q], mr, base_lvl, r);
    }
    store_codes_32(cc[0], cc[1], cc[2], cc[3], cb);
    store_codes_32(cc[4], cc[5], cc[6], cc[7], cb + 32);
  }
}
#endif

}  // namespace

FP4SIM_HOT void quantize_hif4(const float* x, size_t n_blocks, const QuantOptions& opt, uint8_t* codes, uint32_t* words,
                   uint64_t first_index) {
  const bool sr = opt.rounding == Rounding::Sr;
#if defined(__x86_64__)
  if (use_avx512) {
    quantize_hif4_avx512(x, n_blocks, opt, codes, words, first_index);
    return;
  }
  if (use_avx2) {
    if (sr) quantize_hif4_avx2<true>(x, n_blocks, opt, codes, words, first_index);
    else quantize_hif4_avx2<false>(x, n_blocks, opt, codes, words, first_index);
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
  q.workspace.release();  // a one-off result does not carry the scratch around
  return q;
}

void QuantWorkspace::Free::operator()(void* p) const noexcept { std::free(p); }

void* QuantWorkspace::get(int slot, size_t bytes) {
  if (bytes <= size_[slot] && buf_[slot]) return buf_[slot].get();
  buf_[slot].reset();
  size_[slot] = 0;
  constexpr size_t kHuge = size_t{2} << 20;
  const size_t align = bytes >= kHuge ? kHuge : 64;
  const size_t n = (std::max<size_t>(bytes, 1) + align - 1) / align * align;
  void* p = std::aligned_alloc(align, n);
  if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__)
  if (align == kHuge) madvise(p, n, MADV_HUGEPAGE);  // advice only: a refusal changes nothing but speed
#endif
  buf_[slot].reset(p);
  size_[slot] = n;
  return p;
}

void quantize(BlockFormat f, std::span<const float> x_in, size_t rows, size_t cols, const QuantOptions& opt,
              Quantized& q) {
  const BlockFormatInfo& fi = info(f);
  check_shape(fi, x_in.size(), rows, cols, opt);
  q.format = f;
  q.global_scale = 1.0f;
  q.amax = 0.0f;
  q.rows = rows;
  q.cols = cols;
  q.codes.resize(rows * cols);
  const size_t B = static_cast<size_t>(fi.block);
  const size_t nb = rows * cols / B;
  if (f == BlockFormat::Hif4) {
    q.scales.clear();
    q.scale_words.resize(nb);
  } else {
    q.scale_words.clear();
    q.scales.resize(nb);
  }
  q.convention = opt.convention;
  if (opt.convention != Convention::Te) {
    check_convention(opt.convention, f, opt);
    if (rows == 0) return;
    // The other libraries' quantizers run on the portable path, after the RHT when it is on.
    std::vector<float> rotated;
    const float* xin = x_in.data();
    if (opt.rht != 0) {
      std::vector<int8_t> sg;
      rht_signs(opt.rht, opt.rht_seeded || opt.rht != 16, opt.rht_seed, sg);
      rotated.resize(x_in.size());
      rht_apply_to(x_in, std::span<float>(rotated), cols, opt.rht, sg, opt.rht_bf16);
      xin = rotated.data();
    }
    quantize_convention(f, xin, rows, cols, opt, q);
    return;
  }
  if (rows == 0) return;

  // Fixed chunks of whole rows, a multiple of 16 (NVFP4 2D tiles never straddle two), about
  // 64 Ki values (fits L2 between the RHT and the quantizer). Every value's bits depend only on
  // its block / tile and its flat index (the SR counter), so neither the chunking nor the thread
  // count changes the result; the tensor amax is a max, exact in any order.
  const size_t chunk_rows = std::max<size_t>(16, (size_t{1} << 16) / cols / 16 * 16);
  const size_t n_chunks = (rows + chunk_rows - 1) / chunk_rows;
  const unsigned threads = opt.threads != 0 ? opt.threads : std::max(1u, std::thread::hardware_concurrency());

  // The RHT goes chunk by chunk into the worker's scratch (L2-sized) for the one-pass formats.
  // NVFP4 needs the whole transformed tensor twice (TE takes the amax after the RHT): a tensor-sized
  // buffer in q's workspace, kept for the next call (page faults on fresh memory cost more than the
  // transform itself; huge pages where the OS has them make a first call cheaper). Transforming
  // each chunk again in the second pass instead costs more, even beyond the caches (measured in
  // docs/performance.md).
  //
  // Inputs up to kCachedBytes are read again from cache by NVFP4's second pass; beyond, both
  // passes stream from memory (which decides NVFP4's block maxima and streaming stores below).
  constexpr size_t kCachedBytes = size_t{32} << 20;
  const bool in_cache = rows * cols * sizeof(float) <= kCachedBytes;
  std::vector<int8_t> signs;
  if (opt.rht != 0) rht_signs(opt.rht, opt.rht_seeded || opt.rht != 16, opt.rht_seed, signs);
  auto chunk_rows_of = [&](size_t c, size_t& r0) {
    r0 = c * chunk_rows;
    return std::min(rows, r0 + chunk_rows) - r0;
  };
  // The chunk's input rows, through the RHT when it is on.
  float* const rotated = f == BlockFormat::Nvfp4 && opt.rht != 0
                             ? static_cast<float*>(q.workspace.get(0, rows * cols * sizeof(float)))
                             : nullptr;
  auto chunk_input = [&](size_t r0, size_t nr, std::vector<float>& scratch) -> const float* {
    const size_t off = r0 * cols, n = nr * cols;
    if (opt.rht == 0) return x_in.data() + off;
    float* out = rotated ? rotated + off : (scratch.resize(n), scratch.data());
    rht_apply_to(x_in.subspan(off, n), std::span<float>(out, n), cols, opt.rht, signs, opt.rht_bf16);
    return out;
  };

  if (f == BlockFormat::Nvfp4) {
    std::vector<float> chunk_amax(n_chunks, 0.0f);
#if defined(__x86_64__)
    // The first pass keeps the block maxima for the second only while the input fits the caches:
    // beyond, both passes stream from memory, which limits them (a core recomputes the maxima
    // several times faster than memory delivers the input), and the kept maxima would add an
    // eighth to the traffic (written, then read; measured in docs/performance.md).
    const bool keep_bmax = use_avx2 && !opt.two_d && (opt.rounding == Rounding::Rne || opt.rounding == Rounding::Sr) &&
                           in_cache;
#else
    const bool keep_bmax = false;
#endif
    // Outputs beyond the caches: streaming stores (NVFP4 moves 2 x 4 bytes in per 1.06 out, and
    // reading each output line before writing it would add a tenth). They need 16-byte alignment,
    // which operator new gives (chunks start at multiples of 256 codes).
    const bool stream = !in_cache && (reinterpret_cast<uintptr_t>(q.codes.data()) |
                                      reinterpret_cast<uintptr_t>(q.scales.data())) % 16 == 0;
    uint32_t* const bmax = keep_bmax ? static_cast<uint32_t*>(q.workspace.get(1, nb * sizeof(uint32_t))) : nullptr;
    parallel_chunks(n_chunks, threads, [&](size_t c, std::vector<float>& scratch) {
      size_t r0;
      const size_t nr = chunk_rows_of(c, r0);
      const float* xc = chunk_input(r0, nr, scratch);
#if defined(__x86_64__)
      if (keep_bmax) {
        uint32_t* out = bmax + r0 * cols / 16;
        chunk_amax[c] = use_avx512 ? nvfp4_block_maxima_avx512(xc, nr * cols / 16, out)
                                   : nvfp4_block_maxima_avx2(xc, nr * cols / 16, out);
        return;
      }
#endif
      chunk_amax[c] = tensor_amax(xc, nr * cols);
    });
    q.amax = *std::max_element(chunk_amax.begin(), chunk_amax.end());
    const Nvfp4TensorScale ts = nvfp4_tensor_scale(q.amax, opt.pts);
    q.global_scale = ts.s_dec;
    // Last chunk first: the end of the first pass is what the caches still hold.
    parallel_chunks(n_chunks, threads, [&](size_t c, std::vector<float>& scratch) {
      size_t r0;
      const size_t nr = chunk_rows_of(n_chunks - 1 - c, r0);
      const size_t off = r0 * cols;
      const float* xc = rotated ? rotated + off : x_in.data() + off;
      (void)scratch;
      quantize_nvfp4_rows(xc, nr, cols, opt, ts, off, bmax ? bmax + off / 16 : nullptr, q.codes.data() + off,
                          q.scales.data() + off / 16, stream);
    });
    return;
  }
  parallel_chunks(n_chunks, threads, [&](size_t c, std::vector<float>& scratch) {
    size_t r0;
    const size_t nr = chunk_rows_of(c, r0);
    const size_t off = r0 * cols;
    const float* xc = chunk_input(r0, nr, scratch);  // quantized while still in cache
    if (f == BlockFormat::Hif4) {
      quantize_hif4(xc, nr * cols / B, opt, q.codes.data() + off, q.scale_words.data() + off / B, off);
    } else {
      quantize_mx(f, xc, nr * cols / B, opt, q.codes.data() + off, q.scales.data() + off / B, off);
    }
  });
}

QuantSimd quant_simd_level() {
#if defined(__x86_64__)
  return use_avx512 ? QuantSimd::Avx512 : use_avx2 ? QuantSimd::Avx2 : QuantSimd::Portable;
#else
  return QuantSimd::Portable;
#endif
}

QuantSimd set_quant_simd_level(QuantSimd level) {
  const QuantSimd was = quant_simd_level();
#if defined(__x86_64__)
  level = std::min(level, simd_cap);
  use_avx2 = level >= QuantSimd::Avx2 && __builtin_cpu_supports("avx2");
  use_avx512 = level >= QuantSimd::Avx512 && use_avx2 && cpu_has_avx512();
#else
  (void)level;
#endif
  return was;
}

bool set_quant_simd(bool on) {
  return set_quant_simd_level(on ? QuantSimd::Avx512 : QuantSimd::Portable) != QuantSimd::Portable;
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
    if (q.format == BlockFormat::Nvfp4) {
      const ConventionInfo& ci = convention_info(q.convention);
      const float sf = static_cast<float>(s);
      if (ci.dequant_scale_first) {  // torchao, ModelOpt: q * (float(sdec_b8) * S_dec)
        const float t = sf * q.global_scale;
        for (size_t i = 0; i < B; ++i) {
          const float v = et.v[cb[i]];
          ob[i] = (ci.decode_neg_zero_positive && v == 0.0f ? 0.0f : v) * t;
        }
      } else {  // TE: q * float(sdec_b8) * S_dec, FP32 left to right
        for (size_t i = 0; i < B; ++i) ob[i] = et.v[cb[i]] * sf * q.global_scale;
      }
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
