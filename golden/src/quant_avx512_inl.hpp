// AVX-512 vector pieces of the block quantizers, shared by quant_avx512.cpp (codes and scales)
// and quant_fake_avx512.cpp (the fused fake quantization), so that both make every rounding
// decision with the same instructions. Include only on x86-64, after the diagnostic pragmas of
// quant_avx512.cpp (GCC's AVX-512 headers trip -Wmaybe-uninitialized).
#pragma once

#include <immintrin.h>

#include <cfloat>
#include <cstddef>
#include <cstdint>

#include "quant_internal.hpp"

#define FP4SIM_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi,bmi2,avx2,fma")))
#define FP4SIM_AVX512_INLINE \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi,bmi2,avx2,fma"), always_inline)) inline

namespace fp4sim::quant_detail {
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

// HiF4's lane map of a block's levels: element vector q takes, in lane l, the level of group 4q + l/4.
FP4SIM_AVX512_INLINE void hif4_lane_pick(__m512i pick[4]) {
  for (int q = 0; q < 4; ++q)
    pick[q] = _mm512_setr_epi32(4 * q, 4 * q, 4 * q, 4 * q, 4 * q + 1, 4 * q + 1, 4 * q + 1, 4 * q + 1, 4 * q + 2,
                                4 * q + 2, 4 * q + 2, 4 * q + 2, 4 * q + 3, 4 * q + 3, 4 * q + 3, 4 * q + 3);
}

// HiF4, sixteen blocks of 64 values at xc, the first nb of them real: block i's sixteen group
// maxima as |x| bit patterns in group order (gm[i]), its maximum (vmax16[i]) and that maximum's
// E6M2 scale code (code16[i]; a non-finite maximum gets one too, unused: its block is NaN).
FP4SIM_AVX512_INLINE void hif4_group_maxima_16(const float* xc, size_t nb, uint32_t (*gm)[16], uint32_t* vmax16,
                                               uint32_t* code16) {
  const __m512i absm = set1(0x7FFFFFFF);
  // After the unpack tree lane 4L + k holds group 4k + L; the transpose puts group j in lane j.
  const __m512i to_natural = transpose_4x4();
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
  const __m512i finite_vmax = _mm512_min_epu32(vmax, set1(0x7F7FFFFF));
  const __m256i c_lo = hif4_e6m2_8(_mm512_castps512_ps256(_mm512_castsi512_ps(finite_vmax)));
  const __m256i c_hi = hif4_e6m2_8(_mm256_castsi256_ps(_mm512_extracti64x4_epi64(finite_vmax, 1)));
  _mm512_store_si512(vmax16, vmax);
  _mm512_store_si512(code16, _mm512_inserti64x4(_mm512_castsi256_si512(c_lo), c_hi, 1));
}

// One HiF4 block's levels from its group maxima gi and E6M2 code: l2 (E1_8 per pair of groups,
// each bit twice), l3 (E1_4 per group) and lvl = base + level per group.
struct Hif4Levels {
  __mmask16 l2, l3;
  __m512i lvl;
};
FP4SIM_AVX512_INLINE Hif4Levels hif4_levels(__m512i gi, const Hif4RecTable& recs, uint32_t e6m2) {
  // t - 1 so that a signed > is >= (all patterns here are finite and non-negative; t >= 1)
  const __m512i t2m1 = set1(recs.t2[e6m2] - 1), t4m1 = set1(recs.t4[e6m2] - 1), one = set1(1);
  const __m512i v8 = _mm512_max_epu32(gi, _mm512_shuffle_epi32(gi, static_cast<_MM_PERM_ENUM>(0xB1)));  // pair max
  const __mmask16 l2 = _mm512_cmpgt_epi32_mask(v8, t4m1);
  const __mmask16 l3 = _mm512_cmpgt_epi32_mask(gi, _mm512_mask_blend_epi32(l2, t2m1, t4m1));
  __m512i lvl = set1(static_cast<uint32_t>(recs.base[e6m2]));
  lvl = _mm512_mask_add_epi32(lvl, l2, lvl, one);
  lvl = _mm512_mask_add_epi32(lvl, l3, lvl, one);
  return {l2, l3, lvl};
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

}  // namespace
}  // namespace fp4sim::quant_detail
