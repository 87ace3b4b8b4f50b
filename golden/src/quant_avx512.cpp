// AVX-512 block quantizers: the AVX2 kernels of quant.cpp on sixteen lanes, with the work that
// AVX2 does one block at a time (scale codes, inverses, HiF4 E6M2 codes) done for sixteen blocks
// per vector. Every decision is the one the AVX2 and portable kernels make, on the same FP32
// patterns; test_quant_fast runs all three on every format and option set and compares the bits.
#include "quant_internal.hpp"

#include <bit>
#include <cstring>

#include "fp4sim/philox.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace fp4sim::quant_detail {

#if defined(__x86_64__)

// GCC 12's AVX-512 headers build "undefined" vectors by self-assignment, which -Wmaybe-uninitialized
// (-Wuninitialized) report inside the inlined intrinsics: a known false positive.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#define FP4SIM_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi,bmi2,avx2,fma")))
#define FP4SIM_AVX512_INLINE \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi,bmi2,avx2,fma"), always_inline)) inline

bool cpu_has_avx512() {
  // Called from quant.cpp's static initializers: make sure libgcc's CPU model is filled in first.
  static const bool has = (__builtin_cpu_init(), __builtin_cpu_supports("avx512f")) && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("bmi2");
  return has;
}

namespace {

FP4SIM_AVX512_INLINE __m512i set1(uint32_t v) { return _mm512_set1_epi32(static_cast<int>(v)); }

// E2M1 codes of sixteen values v = x * inv under RNE with satfinite (quant.cpp's e2m1_rne_16_avx2
// on one vector; NVFP4's groups of four blocks take the table lookup of store_e2m1_64 instead).
// |v| >= 1: RNE of the FP32 pattern at one mantissa bit, whose exponent and bit are the code plus
// 252 (folded into the rounding constant: no wrap, as |v| >= 1 means bits >= 254 << 22), capped at
// 7 (Inf and NaN land above). |v| < 1: RN-even(2 |v|) in {0, 1, 2} by the conversion. Sign: x < 0
// as an ordered compare (false for -0.0 and NaN).
FP4SIM_AVX512_INLINE __m512i e2m1_rne_16(__m512 xv, __m512 vinv) {
  const __m512i ab = _mm512_and_si512(_mm512_castps_si512(_mm512_mul_ps(xv, vinv)), set1(0x7FFFFFFF));
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(ab, 22), set1(1));
  const __m512i norm = _mm512_srli_epi32(_mm512_add_epi32(ab, _mm512_add_epi32(set1(0x1FFFFFu - (252u << 22)), lsb)), 22);
  const __m512 two_v = _mm512_add_ps(_mm512_castsi512_ps(ab), _mm512_castsi512_ps(ab));
  const __m512i sub = _mm512_cvt_roundps_epi32(two_v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512i m = _mm512_min_epu32(_mm512_mask_blend_epi32(_mm512_cmpgt_epi32_mask(ab, set1(0x3F7FFFFF)), sub, norm),
                                     set1(7));
  const __mmask16 neg = _mm512_cmp_ps_mask(xv, _mm512_setzero_ps(), _CMP_LT_OQ);
  return _mm512_mask_or_epi32(m, neg, m, set1(8));
}

// small_codes_8 of quant.cpp on sixteen lanes: codes of v (scaled; sign from the input bits xb) in a
// small format with subnormals, saturating, RNE or SR with bytes r (see small_codes_8 for the proof).
template <bool SR>
FP4SIM_AVX512_INLINE __m512i small_codes_16(__m512 v, __m512 xb, __m512i r, const SmallFmtConst& c) {
  const __m512i ab = _mm512_and_si512(_mm512_castps_si512(v), set1(0x7FFFFFFF));
  const __m128i sh = _mm_cvtsi32_si128(c.shift);
  const __m512 scaled = _mm512_mul_ps(_mm512_castsi512_ps(ab), _mm512_set1_ps(c.sub_scale));
  __m512i u, sub;
  if constexpr (SR) {
    u = _mm512_add_epi32(ab, _mm512_sll_epi32(r, _mm_cvtsi32_si128(c.shift - 8)));
    sub = _mm512_srli_epi32(_mm512_add_epi32(_mm512_cvttps_epi32(scaled), r), 8);
  } else {
    const __m512i lsb = _mm512_and_si512(_mm512_srl_epi32(ab, sh), set1(1));
    u = _mm512_add_epi32(ab, _mm512_add_epi32(set1((1u << (c.shift - 1)) - 1u), lsb));
    sub = _mm512_cvt_roundps_epi32(scaled, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  const __m512i norm = _mm512_sub_epi32(_mm512_srl_epi32(u, sh), set1(c.exp_adj));
  const __mmask16 is_sub = _mm512_cmpgt_epi32_mask(set1(c.min_normal), ab);
  const __m512i mag = _mm512_min_epu32(_mm512_mask_blend_epi32(is_sub, norm, sub), set1(c.max_code));
  const __mmask16 neg = _mm512_cmp_ps_mask(xb, _mm512_setzero_ps(), _CMP_LT_OQ);
  return _mm512_mask_or_epi32(mag, neg, mag, set1(c.sign_bit));
}

FP4SIM_AVX512_INLINE __m512i rbytes_16(const uint8_t* rb) {
  return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rb)));
}

FP4SIM_AVX512_INLINE void store_codes_16(__m512i c, uint8_t* out) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(c));
}

// Dword permute index swapping positions 4i + j and 4j + i: a 4 x 4 transpose of dwords. After two
// packs, 128-bit lane L holds lane L of each input vector in turn, and this puts them in order; the
// HiF4 group maxima come out of their unpack tree in the same transposed order.
FP4SIM_AVX512_INLINE __m512i transpose_4x4() { return _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15); }

// 32 codes (two vectors) as bytes in order.
FP4SIM_AVX512_INLINE void store_codes_32(__m512i c0, __m512i c1, uint8_t* out) {
  const __m512i p = _mm512_packs_epi32(c0, c1);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                      _mm512_castsi512_si256(_mm512_permutexvar_epi32(transpose_4x4(), _mm512_packus_epi16(p, p))));
}

// 64 code bytes to out: an ordinary store, or (Stream) non-temporal ones for outputs too large to
// stay in cache, which skip the read of each line before it is written. Code buffers are
// std::vector memory, 16-byte aligned and (large ones, from mmap) 16 bytes past a line: four
// 16-byte streaming stores, which the write-combining buffers merge into full lines.
template <bool Stream>
FP4SIM_AVX512_INLINE void store_64(uint8_t* out, __m512i v) {
  if constexpr (Stream) {
    auto* o = reinterpret_cast<__m128i*>(out);
    _mm_stream_si128(o, _mm512_castsi512_si128(v));
    _mm_stream_si128(o + 1, _mm512_extracti32x4_epi32(v, 1));
    _mm_stream_si128(o + 2, _mm512_extracti32x4_epi32(v, 2));
    _mm_stream_si128(o + 3, _mm512_extracti32x4_epi32(v, 3));
  } else {
    _mm512_storeu_si512(out, v);
  }
}

// E2M1 RNE codes by table lookup, 64 at a time (four NVFP4 blocks), on kE2m1Cells
// (quant_internal.hpp): two vpermb lookups on the cell index.

// 64 E2M1 codes of x[0..63] * inv[k] (block k = x[16k..16k+15]), RNE with satfinite, signed.
template <bool Stream>
FP4SIM_AVX512_INLINE void store_e2m1_64(const float* x, const float* inv, uint8_t* out) {
  __m512i cell[4];
  __mmask16 exact[4], neg[4];
  for (int k = 0; k < 4; ++k) {
    const __m512 xv = _mm512_loadu_ps(x + 16 * k);
    const __m512i ab = _mm512_and_si512(_mm512_castps_si512(_mm512_mul_ps(xv, _mm512_set1_ps(inv[k]))), set1(0x7FFFFFFF));
    cell[k] = _mm512_srli_epi32(ab, 21);  // < 1024
    exact[k] = _mm512_testn_epi32_mask(ab, set1(0x1FFFFF));
    neg[k] = _mm512_cmp_ps_mask(xv, _mm512_setzero_ps(), _CMP_LT_OQ);  // x < 0, ordered (SPEC §1)
  }
  const __m512i base = _mm512_set1_epi16(496);
  const __m512i w01 = _mm512_subs_epu16(_mm512_packs_epi32(cell[0], cell[1]), base);
  const __m512i w23 = _mm512_subs_epu16(_mm512_packs_epi32(cell[2], cell[3]), base);
  const __m512i idx = _mm512_min_epu8(_mm512_permutexvar_epi32(transpose_4x4(), _mm512_packus_epi16(w01, w23)),
                                      _mm512_set1_epi8(63));
  const __m512i count = _mm512_permutexvar_epi8(idx, _mm512_load_si512(kE2m1Cells.count));
  const __m512i tie = _mm512_permutexvar_epi8(idx, _mm512_load_si512(kE2m1Cells.tie));
  auto bits64 = [](const __mmask16* m) {
    return static_cast<__mmask64>(m[0]) | static_cast<__mmask64>(m[1]) << 16 | static_cast<__mmask64>(m[2]) << 32 |
           static_cast<__mmask64>(m[3]) << 48;
  };
  const __m512i code = _mm512_mask_sub_epi8(count, bits64(exact), count, tie);
  store_64<Stream>(out, _mm512_mask_add_epi8(code, bits64(neg), code, _mm512_set1_epi8(8)));  // code <= 7: + 8 sets the sign
}

// 64 codes (four vectors of 32-bit lanes, each < 256) as bytes in order: cheaper than four vpmovdb.
template <bool Stream = false>
FP4SIM_AVX512_INLINE void store_codes_64(__m512i c0, __m512i c1, __m512i c2, __m512i c3, uint8_t* out) {
  const __m512i b = _mm512_packus_epi16(_mm512_packs_epi32(c0, c1), _mm512_packs_epi32(c2, c3));
  store_64<Stream>(out, _mm512_permutexvar_epi32(transpose_4x4(), b));
}

// 128-bit lanes (a0 max a1, a2 max a3, b0 max b1, b2 max b3).
FP4SIM_AVX512_INLINE __m512i fold_lanes(__m512i a, __m512i b) {
  return _mm512_max_epu32(_mm512_shuffle_i32x4(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                          _mm512_shuffle_i32x4(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}

// Lane i = the unsigned max of the sixteen lanes of m[i]: pairs of vectors interleaved and maxed
// (32-bit, then 64-bit unpacks), then the four 128-bit lanes folded (two shuffle levels).
FP4SIM_AVX512_INLINE __m512i lane_maxima_16(const __m512i* m) {
  __m512i p[8], q[4];
  for (int i = 0; i < 8; ++i)
    p[i] = _mm512_max_epu32(_mm512_unpacklo_epi32(m[2 * i], m[2 * i + 1]), _mm512_unpackhi_epi32(m[2 * i], m[2 * i + 1]));
  for (int i = 0; i < 4; ++i)  // q[i], 128-bit lane L, position j: vector 4i + j over lane L
    q[i] = _mm512_max_epu32(_mm512_unpacklo_epi64(p[2 * i], p[2 * i + 1]), _mm512_unpackhi_epi64(p[2 * i], p[2 * i + 1]));
  return fold_lanes(fold_lanes(q[0], q[1]), fold_lanes(q[2], q[3]));
}

// UE4M3 codes of sixteen non-negative floats (or +Inf) under RNE, saturating at 448: quant.cpp's
// ue4m3_rne_sat on sixteen lanes (subnormal and normal candidates, then selects).
FP4SIM_AVX512_INLINE __m512i ue4m3_rne_sat_16(__m512 f) {
  const __m512i sub = _mm512_cvt_roundps_epi32(_mm512_mul_ps(f, _mm512_set1_ps(512.0f)),
                                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512i u = _mm512_castps_si512(f);
  u = _mm512_add_epi32(u, _mm512_add_epi32(set1(0x7FFFF), _mm512_and_si512(_mm512_srli_epi32(u, 20), set1(1))));
  const __m512i norm = _mm512_or_si512(_mm512_slli_epi32(_mm512_sub_epi32(_mm512_srli_epi32(u, 23), set1(120)), 3),
                                       _mm512_and_si512(_mm512_srli_epi32(u, 20), set1(7)));
  const __m512i code = _mm512_mask_blend_epi32(_mm512_cmp_ps_mask(f, _mm512_set1_ps(0x1p-6f), _CMP_LT_OQ), norm, sub);
  return _mm512_mask_blend_epi32(_mm512_cmp_ps_mask(f, _mm512_set1_ps(448.0f), _CMP_GT_OQ), code, set1(0x7E));
}

// nvfp4_inverse of sixteen scale codes: min(1 / (value(code) * S_dec), FLT_MAX), IEEE division.
FP4SIM_AVX512_INLINE __m512 nvfp4_inverse_16(__m512i c, float s_dec) {
  const __m512i e = _mm512_srli_epi32(c, 3), m = _mm512_and_si512(c, set1(7));
  const __m512 sub = _mm512_mul_ps(_mm512_cvtepi32_ps(m), _mm512_set1_ps(0x1p-9f));
  const __m512i norm = _mm512_or_si512(_mm512_slli_epi32(_mm512_add_epi32(e, set1(120)), 23), _mm512_slli_epi32(m, 20));
  const __m512 val = _mm512_mask_blend_ps(_mm512_cmpeq_epi32_mask(e, _mm512_setzero_si512()), _mm512_castsi512_ps(norm), sub);
  const __m512 s = _mm512_mul_ps(val, _mm512_set1_ps(s_dec));
  return _mm512_min_ps(_mm512_div_ps(_mm512_set1_ps(1.0f), s), _mm512_set1_ps(FLT_MAX));
}

// The 16-value block at xb as sixteen lanes whose max is its NaN-ignoring amax pattern: maxps
// returns its second operand when either is NaN, so max(|x|, 0) turns NaN into 0.
FP4SIM_AVX512_INLINE __m512i nvfp4_block_lanes(const float* xb) {
  const __m512 a = _mm512_castsi512_ps(_mm512_and_si512(_mm512_loadu_si512(xb), set1(0x7FFFFFFF)));
  return _mm512_castps_si512(_mm512_max_ps(a, _mm512_setzero_ps()));
}

// Maxima of up to sixteen consecutive 16-value blocks, block i in lane i (lanes >= nb: 0).
FP4SIM_AVX512_INLINE __m512i nvfp4_block_maxima_16(const float* x, size_t nb) {
  __m512i m[16];
  for (size_t i = 0; i < 16; ++i) m[i] = i < nb ? nvfp4_block_lanes(x + 16 * i) : _mm512_setzero_si512();
  return lane_maxima_16(m);
}

// Codes of one 16-value NVFP4 block x * inv: RNE, or SR with the block's bytes rb.
template <bool SR>
FP4SIM_AVX512_INLINE __m512i nvfp4_block_codes(const float* xb, float inv, const uint8_t* rb, const SmallFmtConst& c) {
  const __m512 xv = _mm512_loadu_ps(xb);
  const __m512 vinv = _mm512_set1_ps(inv);
  if constexpr (SR) return small_codes_16<true>(_mm512_mul_ps(xv, vinv), xv, rbytes_16(rb), c);
  else return e2m1_rne_16(xv, vinv);
}

template <bool SR, bool Stream>
FP4SIM_AVX512 void nvfp4_1x16(const float* x, size_t n_blocks, Nvfp4TensorScale ts, const QuantOptions& opt,
                              uint64_t first_index, const uint32_t* bmax, uint8_t* codes, uint8_t* scales) {
  const SmallFmtConst c = small_fmt_const(kE2M1, true);
  const __m512 mult = _mm512_set1_ps(ts.s_enc * (1.0f / 6.0f));  // nvfp4_scale_code's factor
  alignas(64) std::array<uint8_t, 256> rb{};
  alignas(64) float inv16[16];
  for (size_t b0 = 0; b0 < n_blocks; b0 += 16) {
    const size_t nb = std::min<size_t>(16, n_blocks - b0);
    const __mmask16 live = static_cast<__mmask16>((1u << nb) - 1u);
    const float* xc = x + b0 * 16;
    prefetch_ahead(xc, (n_blocks - b0) * 16, 1024);
    if constexpr (SR) sr_bytes(opt.seed, opt.stream, first_index + b0 * 16, nb * 16, rb.data());
    const __m512i amax = bmax ? _mm512_maskz_loadu_epi32(live, bmax + b0) : nvfp4_block_maxima_16(xc, nb);
    const __m512i code = ue4m3_rne_sat_16(_mm512_mul_ps(_mm512_castsi512_ps(amax), mult));
    if (Stream && nb == 16) {  // scales + b0: 16-byte aligned, as the codes
      _mm_stream_si128(reinterpret_cast<__m128i*>(scales + b0), _mm512_cvtepi32_epi8(code));
    } else {
      _mm_mask_storeu_epi8(scales + b0, live, _mm512_cvtepi32_epi8(code));
    }
    _mm512_store_ps(inv16, nvfp4_inverse_16(code, ts.s_dec));
    size_t i = 0;
    for (; i + 4 <= nb; i += 4) {
      if constexpr (SR) {
        __m512i cc[4];
        for (size_t k = 0; k < 4; ++k) cc[k] = nvfp4_block_codes<SR>(xc + 16 * (i + k), inv16[i + k], rb.data() + 16 * (i + k), c);
        store_codes_64<Stream>(cc[0], cc[1], cc[2], cc[3], codes + (b0 + i) * 16);
      } else {
        store_e2m1_64<Stream>(xc + 16 * i, inv16 + i, codes + (b0 + i) * 16);
      }
    }
    for (; i < nb; ++i) store_codes_16(nvfp4_block_codes<SR>(xc + 16 * i, inv16[i], rb.data() + 16 * i, c), codes + (b0 + i) * 16);
  }
  if constexpr (Stream) _mm_sfence();  // streaming stores are weakly ordered: drain them before the caller's join
}

// MX blocks: sixteen blocks' amaxes in one vector, their shared exponents (floor rule), scale codes
// and 2^-e as patterns, as the AVX2 kernel does for eight; FP32-subnormal amaxes and the ceil rule
// take mx_shared_exp. Non-finite blocks: NaN scale, zero codes; zero blocks: scale 0, zero codes.
template <bool SR>
FP4SIM_AVX512 void mx_blocks(const BlockFormatInfo& fi, const float* x, size_t n_blocks, const QuantOptions& opt,
                             uint8_t* codes, uint8_t* scales, uint64_t first_index) {
  constexpr size_t B = 32;
  const SmallFmtConst c = small_fmt_const(*fi.elem, SR);
  const bool fp4_rne = !SR && fi.elem == &kE2M1;
  const bool floor_rule = opt.scale_rule == ScaleRule::Floor;
  const __m512i absm = set1(0x7FFFFFFF);
  alignas(64) std::array<uint8_t, 16 * B> rb{};
  alignas(64) uint32_t amax16[16], inv16[16];
  alignas(64) int32_t e16[16];
  for (size_t b0 = 0; b0 < n_blocks; b0 += 16) {
    const size_t nb = std::min<size_t>(16, n_blocks - b0);
    const float* xc = x + b0 * B;
    prefetch_ahead(xc, (n_blocks - b0) * B, 2048);
    if constexpr (SR) sr_bytes(opt.seed, opt.stream, first_index + b0 * B, nb * B, rb.data());
    __m512i m[16];
    for (size_t i = 0; i < 16; ++i) {
      m[i] = i < nb ? _mm512_max_epu32(_mm512_and_si512(_mm512_loadu_si512(xc + B * i), absm),
                                       _mm512_and_si512(_mm512_loadu_si512(xc + B * i + 16), absm))
                    : _mm512_setzero_si512();
    }
    const __m512i a = lane_maxima_16(m);
    // e = clamp(exponent field - 127 - emax_elem, -127, 127); 2^-e = (127 - e) << 23, or 2^-127
    __m512i e = _mm512_sub_epi32(_mm512_srli_epi32(a, 23), set1(static_cast<uint32_t>(127 + fi.emax_elem)));
    e = _mm512_min_epi32(_mm512_max_epi32(e, set1(static_cast<uint32_t>(-127))), set1(127));
    const __m512i inv = _mm512_mask_blend_epi32(_mm512_cmpeq_epi32_mask(e, set1(127)),
                                                _mm512_slli_epi32(_mm512_sub_epi32(set1(127), e), 23), set1(0x00400000));
    _mm512_store_si512(amax16, a);
    _mm512_store_si512(inv16, inv);
    _mm512_store_si512(e16, e);
    for (size_t i = 0; i < nb; ++i) {
      const size_t b = b0 + i;
      uint8_t* cb = codes + b * B;
      const uint32_t am = amax16[i];
      if (am >= kExpMask || am == 0) {
        scales[b] = am == 0 ? uint8_t{0} : kScaleNaN;
        std::memset(cb, 0, B);
        continue;
      }
      if (!floor_rule || am < 0x00800000u) {  // ceil rule, or an FP32-subnormal amax (ilogb)
        e16[i] = mx_shared_exp(fi, u2f(am), opt.scale_rule);
        inv16[i] = f2u(pow2_neg(e16[i]));
      }
      scales[b] = static_cast<uint8_t>(e16[i] + kUE8M0Bias);
      const __m512 vinv = _mm512_set1_ps(u2f(inv16[i]));
      const float* xb = xc + B * i;
      __m512i cc[2];
      for (size_t h = 0; h < 2; ++h) {
        const __m512 xv = _mm512_loadu_ps(xb + 16 * h);
        if (fp4_rne) {
          cc[h] = e2m1_rne_16(xv, vinv);
        } else {
          const __m512i r = SR ? rbytes_16(rb.data() + i * B + 16 * h) : _mm512_setzero_si512();
          cc[h] = small_codes_16<SR>(_mm512_mul_ps(xv, vinv), xv, r, c);
        }
      }
      store_codes_32(cc[0], cc[1], cb);
    }
  }
}

// HiF4 element codes of sixteen values (four groups) in exact integer arithmetic: hif4_codes_8
// of quant.cpp on sixteen lanes (see there for why P = mx * mr and the clamped shift are exact).
FP4SIM_AVX512_INLINE __m512i hif4_codes_16(__m512i xb, __m512i mr, __m512i base_lvl, __m512i r) {
  const __m512i ef = _mm512_and_si512(_mm512_srli_epi32(xb, 23), set1(0xFF));
  // (xb & 0x7FFFFF) | 0x800000: the significand with its hidden bit, one ternary-logic op
  const __m512i mx = _mm512_ternarylogic_epi32(xb, set1(0x7FFFFF), set1(0x800000), 0xEA);
  const __m512i sa = _mm512_max_epi32(_mm512_sub_epi32(base_lvl, ef), set1(12));
  const __m512i p = _mm512_mullo_epi32(mx, mr);
  const __m512i cc = _mm512_min_epu32(_mm512_srli_epi32(_mm512_add_epi32(_mm512_srlv_epi32(p, sa), r), 8), set1(7));
  const __mmask16 neg = _mm512_cmp_ps_mask(_mm512_castsi512_ps(xb), _mm512_setzero_ps(), _CMP_LT_OQ);
  return _mm512_mask_or_epi32(cc, neg, cc, set1(8));
}

// round_sig_bits of quant_internal.hpp on eight doubles (positive, normal): RNE on the pattern.
template <int kBits>
FP4SIM_AVX512_INLINE __m512d round_sig_bits_8(__m512d v) {
  constexpr int drop = 52 - (kBits - 1);
  __m512i u = _mm512_castpd_si512(v);
  u = _mm512_add_epi64(u, _mm512_add_epi64(_mm512_set1_epi64((int64_t{1} << (drop - 1)) - 1),
                                           _mm512_and_si512(_mm512_srli_epi64(u, drop), _mm512_set1_epi64(1))));
  return _mm512_castsi512_pd(_mm512_andnot_si512(_mm512_set1_epi64((int64_t{1} << drop) - 1), u));
}

// hif4_e6m2_code of eight FP32 maxima (finite, >= 0; 0 gives code 0 as the clamp to 2^-48 does).
FP4SIM_AVX512_INLINE __m256i hif4_e6m2_8(__m256 vmax) {
  __m512d sf = round_sig_bits_8<8>(_mm512_mul_pd(_mm512_cvtps_pd(vmax), _mm512_set1_pd(kBf16OneSeventh)));
  sf = _mm512_min_pd(_mm512_max_pd(sf, _mm512_set1_pd(0x1p-48)), _mm512_set1_pd(49152.0));
  const __m512i u = _mm512_castpd_si512(round_sig_bits_8<3>(sf));
  const __m512i e = _mm512_sub_epi64(_mm512_srli_epi64(u, 52), _mm512_set1_epi64(1023 - 48));
  const __m512i code = _mm512_or_si512(_mm512_slli_epi64(e, 2), _mm512_and_si512(_mm512_srli_epi64(u, 50), _mm512_set1_epi64(3)));
  return _mm512_cvtepi64_epi32(code);
}

// HiF4 in batches of sixteen blocks: per block the 16 group maxima in one vector (natural order),
// the sixteen blocks' Vmax and E6M2 codes in vectors, then per block the levels as compares
// against the per-code thresholds (E1_8 from pair maxima, E1_16 against t2 or t4) and the element
// codes (hif4_codes_16). The same decisions as quantize_hif4_avx2 and the portable loop.
template <bool SR>
FP4SIM_AVX512 void hif4_blocks(const float* x, size_t n_blocks, const QuantOptions& opt, uint8_t* codes,
                               uint32_t* words, uint64_t first_index) {
  const Hif4RecTable& recs = hif4_recs();
  const __m512i absm = set1(0x7FFFFFFF), one = set1(1);
  // After the unpack tree lane 4L + k holds group 4k + L; the transpose puts group j in lane j.
  const __m512i to_natural = transpose_4x4();
  __m512i lane_pick[4];  // element vector q: lane l takes the level of group 4q + l/4
  for (int q = 0; q < 4; ++q)
    lane_pick[q] = _mm512_setr_epi32(4 * q, 4 * q, 4 * q, 4 * q, 4 * q + 1, 4 * q + 1, 4 * q + 1, 4 * q + 1, 4 * q + 2,
                                     4 * q + 2, 4 * q + 2, 4 * q + 2, 4 * q + 3, 4 * q + 3, 4 * q + 3, 4 * q + 3);
  alignas(64) std::array<uint8_t, 16 * 64> rb{};
  alignas(64) uint32_t gm[16][16];
  alignas(64) uint32_t vmax16[16], code16[16];
  for (size_t b0 = 0; b0 < n_blocks; b0 += 16) {
    const size_t nb = std::min<size_t>(16, n_blocks - b0);
    const float* xc = x + b0 * 64;
    prefetch_ahead(xc, (n_blocks - b0) * 64, 4096);
    if constexpr (SR) sr_bytes(opt.seed, opt.stream, first_index + b0 * 64, nb * 64, rb.data());
    __m512i g[16];
    for (size_t i = 0; i < 16; ++i) {
      if (i >= nb) {
        g[i] = _mm512_setzero_si512();
        continue;
      }
      const float* xb = xc + 64 * i;
      __m512i a[4];
      for (int k = 0; k < 4; ++k) a[k] = _mm512_and_si512(_mm512_loadu_si512(xb + 16 * k), absm);
      const __m512i b01 = _mm512_max_epu32(_mm512_unpacklo_epi32(a[0], a[1]), _mm512_unpackhi_epi32(a[0], a[1]));
      const __m512i b23 = _mm512_max_epu32(_mm512_unpacklo_epi32(a[2], a[3]), _mm512_unpackhi_epi32(a[2], a[3]));
      g[i] = _mm512_permutexvar_epi32(
          to_natural, _mm512_max_epu32(_mm512_unpacklo_epi64(b01, b23), _mm512_unpackhi_epi64(b01, b23)));
      _mm512_store_si512(gm[i], g[i]);
    }
    const __m512i vmax = lane_maxima_16(g);
    // Non-finite maxima get a code here too, unused: their blocks take the NaN path below.
    const __m512i finite_vmax = _mm512_min_epu32(vmax, set1(0x7F7FFFFF));
    const __m256i c_lo = hif4_e6m2_8(_mm512_castps512_ps256(_mm512_castsi512_ps(finite_vmax)));
    const __m256i c_hi = hif4_e6m2_8(_mm256_castsi256_ps(_mm512_extracti64x4_epi64(finite_vmax, 1)));
    _mm512_store_si512(vmax16, vmax);
    _mm512_store_si512(code16, _mm512_inserti64x4(_mm512_castsi256_si512(c_lo), c_hi, 1));
    for (size_t i = 0; i < nb; ++i) {
      const size_t b = b0 + i;
      uint8_t* cb = codes + b * 64;
      if (vmax16[i] >= kExpMask) {  // as the portable loop: NaN scale, zero codes
        words[b] = kScaleNaN;
        std::memset(cb, 0, 64);
        continue;
      }
      const uint32_t e6m2 = code16[i];
      const __m512i gi = _mm512_load_si512(gm[i]);
      // t - 1 so that a signed > is >= (all patterns here are finite and non-negative; t >= 1)
      const __m512i t2m1 = set1(recs.t2[e6m2] - 1), t4m1 = set1(recs.t4[e6m2] - 1);
      const __m512i v8 = _mm512_max_epu32(gi, _mm512_shuffle_epi32(gi, static_cast<_MM_PERM_ENUM>(0xB1)));  // pair max
      const __mmask16 l2 = _mm512_cmpgt_epi32_mask(v8, t4m1);  // E1_8, each bit twice (both groups of a pair)
      const __mmask16 l3 = _mm512_cmpgt_epi32_mask(gi, _mm512_mask_blend_epi32(l2, t2m1, t4m1));
      words[b] = e6m2 | _pext_u32(l2, 0x5555u) << 8 | static_cast<uint32_t>(l3) << 16;
      __m512i lvl = set1(static_cast<uint32_t>(recs.base[e6m2]));  // base + level, per group
      lvl = _mm512_mask_add_epi32(lvl, l2, lvl, one);
      lvl = _mm512_mask_add_epi32(lvl, l3, lvl, one);
      const __m512i mr = set1(recs.mr[e6m2]);
      const float* xb = xc + 64 * i;
      __m512i cc[4];
      for (int q = 0; q < 4; ++q) {
        const __m512i r = SR ? rbytes_16(rb.data() + 64 * i + 16 * q) : set1(128);
        cc[q] = hif4_codes_16(_mm512_loadu_si512(xb + 16 * q), mr, _mm512_permutexvar_epi32(lane_pick[q], lvl), r);
      }
      store_codes_64(cc[0], cc[1], cc[2], cc[3], cb);
    }
  }
}

}  // namespace

// Tensor amax for PTS (NaN ignored, Inf kept): maxps returns its second operand when either is NaN,
// so max(|x|, acc) skips NaNs; four accumulators hide the latency.
FP4SIM_AVX512 float tensor_amax_avx512(const float* x, size_t n) {
  const __m512i absm = set1(0x7FFFFFFF);
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  size_t i = 0;
  for (; i + 64 <= n; i += 64)
    for (int k = 0; k < 4; ++k)
      acc[k] = _mm512_max_ps(_mm512_castsi512_ps(_mm512_and_si512(_mm512_loadu_si512(x + i + 16 * k), absm)), acc[k]);
  for (; i < n; i += 16) {
    const __mmask16 live = static_cast<__mmask16>(n - i >= 16 ? 0xFFFFu : (1u << (n - i)) - 1u);
    acc[0] = _mm512_max_ps(_mm512_castsi512_ps(_mm512_and_si512(_mm512_maskz_loadu_epi32(live, x + i), absm)), acc[0]);
  }
  const __m512 m = _mm512_max_ps(_mm512_max_ps(acc[0], acc[1]), _mm512_max_ps(acc[2], acc[3]));
  return u2f(_mm512_reduce_max_epu32(_mm512_castps_si512(m)));
}

FP4SIM_AVX512 float nvfp4_block_maxima_avx512(const float* x, size_t n_blocks, uint32_t* out) {
  __m512i acc = _mm512_setzero_si512();
  for (size_t b0 = 0; b0 < n_blocks; b0 += 16) {
    const size_t nb = std::min<size_t>(16, n_blocks - b0);
    const __m512i r = nvfp4_block_maxima_16(x + b0 * 16, nb);
    _mm512_mask_storeu_epi32(out + b0, static_cast<__mmask16>((1u << nb) - 1u), r);
    acc = _mm512_max_epu32(acc, r);
  }
  return u2f(_mm512_reduce_max_epu32(acc));
}

void nvfp4_1x16_avx512(const float* x, size_t n_blocks, Nvfp4TensorScale ts, const QuantOptions& opt,
                       uint64_t first_index, const uint32_t* bmax, uint8_t* codes, uint8_t* scales, bool stream) {
  const bool sr = opt.rounding == Rounding::Sr;
  if (stream) {
    if (sr) nvfp4_1x16<true, true>(x, n_blocks, ts, opt, first_index, bmax, codes, scales);
    else nvfp4_1x16<false, true>(x, n_blocks, ts, opt, first_index, bmax, codes, scales);
  } else {
    if (sr) nvfp4_1x16<true, false>(x, n_blocks, ts, opt, first_index, bmax, codes, scales);
    else nvfp4_1x16<false, false>(x, n_blocks, ts, opt, first_index, bmax, codes, scales);
  }
}

void mx_blocks_avx512(const BlockFormatInfo& fi, const float* x, size_t n_blocks, const QuantOptions& opt,
                      uint8_t* codes, uint8_t* scales, uint64_t first_index) {
  if (opt.rounding == Rounding::Sr) mx_blocks<true>(fi, x, n_blocks, opt, codes, scales, first_index);
  else mx_blocks<false>(fi, x, n_blocks, opt, codes, scales, first_index);
}

void quantize_hif4_avx512(const float* x, size_t n_blocks, const QuantOptions& opt, uint8_t* codes, uint32_t* words,
                          uint64_t first_index) {
  if (opt.rounding == Rounding::Sr) hif4_blocks<true>(x, n_blocks, opt, codes, words, first_index);
  else hif4_blocks<false>(x, n_blocks, opt, codes, words, first_index);
}

// Values of 16 element codes: a permute of the 16-entry table (four) or a gather from et.
FP4SIM_AVX512_INLINE __m512 dequant_elems_16(const uint8_t* c, bool four, __m512 t16, const float* et) {
  const __m512i idx = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c)));
  return four ? _mm512_permutexvar_ps(idx, t16) : _mm512_i32gather_ps(idx, et, 4);
}

// Stream: 0 ordinary stores, 1 streaming (p 64-byte aligned), 2 streaming by 16-byte quarters (p
// 16-byte aligned, as malloc gives large arrays).
template <int Stream>
FP4SIM_AVX512_INLINE void store16(float* p, __m512 v) {
  if constexpr (Stream == 1) {
    _mm512_stream_ps(p, v);
  } else if constexpr (Stream == 2) {
    _mm_stream_ps(p, _mm512_castps512_ps128(v));
    _mm_stream_ps(p + 4, _mm512_extractf32x4_ps(v, 1));
    _mm_stream_ps(p + 8, _mm512_extractf32x4_ps(v, 2));
    _mm_stream_ps(p + 12, _mm512_extractf32x4_ps(v, 3));
  } else {
    _mm512_storeu_ps(p, v);
  }
}

template <int Stream>
FP4SIM_AVX512_INLINE void dequant_blocks_avx512_impl(const BlockFormatInfo& fi, const uint8_t* codes,
                                                     const uint8_t* scales, const uint32_t* words, size_t nb,
                                                     float gs, float* out) {
  const float* et = decode_table(*fi.elem).v.data();
  const float* st = decode_table(*fi.scale).v.data();
  const bool four = fi.elem->bits == 4;
  const __m512 t16 = _mm512_loadu_ps(et);
  const __m512 qnan = _mm512_castsi512_ps(set1(0x7FC00000u));
  if (fi.id == BlockFormat::Nvfp4) {
    const __m512 g = _mm512_set1_ps(gs);
    for (size_t b = 0; b < nb; ++b) {
      const float s = st[scales[b]];
      const __m512 q = dequant_elems_16(codes + 16 * b, four, t16, et);
      const __m512 v = s != s ? qnan : _mm512_mul_ps(_mm512_mul_ps(q, _mm512_set1_ps(s)), g);
      store16<Stream>(out + 16 * b, v);
    }
    return;
  }
  if (fi.id == BlockFormat::Hif4) {
    // Lane i of quarter k is element e = 16k + i: level = bit (8 + e/8) + bit (16 + e/4) of the word.
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i one = set1(1);
    for (size_t b = 0; b < nb; ++b) {
      const uint32_t w = words[b];
      const float s = st[w & 0xFFu];
      float* ob = out + 64 * b;
      if (s != s) {
        for (int k = 0; k < 4; ++k) store16<Stream>(ob + 16 * k, qnan);
        continue;
      }
      const __m512i wv = set1(w), sv = _mm512_castps_si512(_mm512_set1_ps(s));
      for (int k = 0; k < 4; ++k) {
        const __m512i e = _mm512_add_epi32(lane, set1(16u * static_cast<uint32_t>(k)));
        const __m512i sh2 = _mm512_add_epi32(_mm512_srli_epi32(e, 3), set1(8));
        const __m512i sh3 = _mm512_add_epi32(_mm512_srli_epi32(e, 2), set1(16));
        const __m512i l2 = _mm512_and_si512(_mm512_srlv_epi32(wv, sh2), one);
        const __m512i l3 = _mm512_and_si512(_mm512_srlv_epi32(wv, sh3), one);
        // s * 2^level by the exponent field: s is a normal float of at least 2^-48
        const __m512 m = _mm512_castsi512_ps(_mm512_add_epi32(sv, _mm512_slli_epi32(_mm512_add_epi32(l2, l3), 23)));
        store16<Stream>(ob + 16 * k, _mm512_mul_ps(dequant_elems_16(codes + 64 * b + 16 * k, four, t16, et), m));
      }
    }
    return;
  }
  for (size_t b = 0; b < nb; ++b) {  // MX: 32 elements times a power of two
    const float s = st[scales[b]];
    for (int h = 0; h < 2; ++h) {
      const __m512 q = dequant_elems_16(codes + 32 * b + 16 * h, four, t16, et);
      const __m512 v = s != s ? qnan : _mm512_mul_ps(q, _mm512_set1_ps(s));
      store16<Stream>(out + 32 * b + 16 * h, v);
    }
  }
}

// fake_quantize's dequantization of nb blocks (codes, and scales or HiF4 words) into out: the
// arithmetic of dequant_blocks (quant_fake.cpp) on sixteen lanes. Element values by a permute of
// the 16-entry table (4-bit codes) or a gather (6- and 8-bit codes).
FP4SIM_AVX512 void dequant_blocks_avx512(const BlockFormatInfo& fi, const uint8_t* codes, const uint8_t* scales,
                                         const uint32_t* words, size_t nb, float gs, float* out, bool stream) {
  const auto a = reinterpret_cast<uintptr_t>(out);
  if (stream && a % 64 == 0) dequant_blocks_avx512_impl<1>(fi, codes, scales, words, nb, gs, out);
  else if (stream && a % 16 == 0) dequant_blocks_avx512_impl<2>(fi, codes, scales, words, nb, gs, out);
  else dequant_blocks_avx512_impl<0>(fi, codes, scales, words, nb, gs, out);
}

// dst[j * ds + i] = src[i * ss + j] for a 16 x 16 tile (fake_quantize along the first axis):
// in registers, by unpacks and lane shuffles.
FP4SIM_AVX512 void transpose16_avx512(const float* src, size_t ss, float* dst, size_t ds) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + static_cast<size_t>(i) * ss);
  for (int k = 0; k < 16; k += 2) {
    t[k] = _mm512_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm512_unpackhi_ps(r[k], r[k + 1]);
  }
  for (int k = 0; k < 16; k += 4) {
    r[k] = _mm512_shuffle_ps(t[k], t[k + 2], 0x44);
    r[k + 1] = _mm512_shuffle_ps(t[k], t[k + 2], 0xEE);
    r[k + 2] = _mm512_shuffle_ps(t[k + 1], t[k + 3], 0x44);
    r[k + 3] = _mm512_shuffle_ps(t[k + 1], t[k + 3], 0xEE);
  }
  for (int h = 0; h < 16; h += 8) {
    for (int i = 0; i < 4; ++i) {
      t[h + i] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0x88);
      t[h + i + 4] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0xDD);
    }
  }
  for (int i = 0; i < 8; ++i) {
    _mm512_storeu_ps(dst + static_cast<size_t>(i) * ds, _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88));
    _mm512_storeu_ps(dst + static_cast<size_t>(i + 8) * ds, _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD));
  }
}

#undef FP4SIM_AVX512
#undef FP4SIM_AVX512_INLINE
#pragma GCC diagnostic pop

#else  // not x86-64: no AVX-512 kernels, never selected

bool cpu_has_avx512() { return false; }
float tensor_amax_avx512(const float*, size_t) { return 0.0f; }
float nvfp4_block_maxima_avx512(const float*, size_t, uint32_t*) { return 0.0f; }
void nvfp4_1x16_avx512(const float*, size_t, Nvfp4TensorScale, const QuantOptions&, uint64_t, const uint32_t*,
                       uint8_t*, uint8_t*, bool) {}
void mx_blocks_avx512(const BlockFormatInfo&, const float*, size_t, const QuantOptions&, uint8_t*, uint8_t*,
                      uint64_t) {}
void quantize_hif4_avx512(const float*, size_t, const QuantOptions&, uint8_t*, uint32_t*, uint64_t) {}

#endif

}  // namespace fp4sim::quant_detail
