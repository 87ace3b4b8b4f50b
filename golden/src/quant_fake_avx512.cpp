// Fused AVX-512 fake quantization: quant_avx512.cpp's block loops with the same vector pieces
// (quant_avx512_inl.hpp), where each block's element codes, instead of being stored, are turned
// back into floats in registers (a permute of the 16-entry table for 4-bit codes, the code's
// fields for 6- and 8-bit ones) and multiplied by the block's decoded scale in the order
// dequantize() uses. No code or scale buffer: the input is read once and the output written once.
#include "quant_fake_kernels.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <span>
#include <vector>

#include "fp4sim/hadamard.hpp"
#include "fp4sim/philox.hpp"
#include "quant_internal.hpp"

#if defined(__x86_64__)
// GCC 12's AVX-512 headers build "undefined" vectors by self-assignment, which -Wmaybe-uninitialized
// (-Wuninitialized) report inside the inlined intrinsics: a known false positive.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include "quant_avx512_inl.hpp"
#endif

namespace fp4sim::quant_detail {

#if defined(__x86_64__)

namespace {

// Values of 6- and 8-bit element codes from their fields, equal to the decode table's entries for
// every code the saturating quantizers produce (no Inf or NaN codes): a normal code's magnitude
// plus exp_adj is the FP32 pattern shifted right by `shift` (small_codes_16 in reverse); a
// subnormal one is mag * 2^(emin - mbits), exact in FP32.
struct ElemDecode {
  __m512i mag_mask, sign_bit, exp_adj, min_normal_code;
  __m512 sub_step;
  int shift;
};

FP4SIM_AVX512_INLINE ElemDecode elem_decode(const ElemFormat& f) {
  return {set1(f.sign_bit() - 1u),
          set1(f.sign_bit()),
          set1(static_cast<uint32_t>(127 - f.bias) << f.mbits),
          set1(1u << f.mbits),
          _mm512_set1_ps(std::ldexp(1.0f, f.emin() - f.mbits)),
          23 - f.mbits};
}

FP4SIM_AVX512_INLINE __m512 decode_small_16(__m512i code, const ElemDecode& d) {
  const __m512i mag = _mm512_and_si512(code, d.mag_mask);
  const __m512i norm = _mm512_sll_epi32(_mm512_add_epi32(mag, d.exp_adj), _mm_cvtsi32_si128(d.shift));
  const __m512 sub = _mm512_mul_ps(_mm512_cvtepi32_ps(mag), d.sub_step);
  const __mmask16 is_norm = _mm512_cmpge_epu32_mask(mag, d.min_normal_code);
  const __m512i v = _mm512_mask_blend_epi32(is_norm, _mm512_castps_si512(sub), norm);
  const __mmask16 neg = _mm512_test_epi32_mask(code, d.sign_bit);
  return _mm512_castsi512_ps(_mm512_mask_or_epi32(v, neg, v, set1(0x80000000u)));
}

// The UE4M3 scale values of sixteen NVFP4 scale codes (0x00..0x7E), as nvfp4_inverse_16 decodes them.
FP4SIM_AVX512_INLINE __m512 ue4m3_value_16(__m512i c) {
  const __m512i e = _mm512_srli_epi32(c, 3), m = _mm512_and_si512(c, set1(7));
  const __m512 sub = _mm512_mul_ps(_mm512_cvtepi32_ps(m), _mm512_set1_ps(0x1p-9f));
  const __m512i norm = _mm512_or_si512(_mm512_slli_epi32(_mm512_add_epi32(e, set1(120)), 23), _mm512_slli_epi32(m, 20));
  return _mm512_mask_blend_ps(_mm512_cmpeq_epi32_mask(e, _mm512_setzero_si512()), _mm512_castsi512_ps(norm), sub);
}

// The RHT (N = 16 or 64) of a group of n values (whole tiles) into dst, the bits of rht_apply_to:
// when the group's exponent spread certifies exact double sums (hadamard.cpp's condition, largest
// - smallest nonzero exponent <= 29 - log2 N, no Inf or NaN: then every tile's is too), each tile
// runs a double FWHT in registers, every partial sum exact, so the one rounding is that of the
// scaled sum (1 / sqrt N = 2^-2 or 2^-3, exact) to float, as in the reference; otherwise
// rht_apply_to does the group (its own per-tile checks and exact fallback).
struct RhtRegs {
  __m512d pre[8];  // -0.0 where the sign is -1: XOR flips the sign exactly (N / 8 used)
  const Rht* rht;
};

FP4SIM_AVX512_INLINE RhtRegs rht_regs(const Rht* rht) {
  RhtRegs r{};
  alignas(64) double pre[64] = {};
  const int n = rht != nullptr ? rht->n : 0;
  for (int i = 0; i < n; ++i) pre[i] = rht->signs[i] < 0 ? -0.0 : 0.0;
  for (int v = 0; v < 8; ++v) r.pre[v] = _mm512_load_pd(pre + 8 * v);
  r.rht = rht;
  return r;
}

// The three butterflies inside eight doubles (h = 1, 2, 4).
FP4SIM_AVX512_INLINE __m512d fwht8(__m512d a) {
  const __m512d s1 = _mm512_set_pd(-1, 1, -1, 1, -1, 1, -1, 1);
  const __m512d s2 = _mm512_set_pd(-1, -1, 1, 1, -1, -1, 1, 1);
  const __m512d s4 = _mm512_set_pd(-1, -1, -1, -1, 1, 1, 1, 1);
  a = _mm512_fmadd_pd(a, s1, _mm512_permute_pd(a, 0x55));
  a = _mm512_fmadd_pd(a, s2, _mm512_permutex_pd(a, 0x4E));
  return _mm512_fmadd_pd(a, s4, _mm512_shuffle_f64x2(a, a, 0x4E));
}

template <bool kBf16>
FP4SIM_AVX512_INLINE __m256 rht_finish(__m512d v, __m512d scale) {
  // * 2^-k + 0: exact, and an exact-zero sum becomes +0.0 as the reference gives
  __m256 f = _mm512_cvtpd_ps(_mm512_fmadd_pd(v, scale, _mm512_setzero_pd()));
  if constexpr (kBf16) {  // RNE to BF16 (no NaN here)
    const __m256i b = _mm256_castps_si256(f);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
    const __m256i r = _mm256_add_epi32(b, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), lsb));
    f = _mm256_castsi256_ps(_mm256_and_si256(r, _mm256_set1_epi32(static_cast<int>(0xFFFF0000u))));
  }
  return f;
}

// The Hadamard levels across NV vectors of doubles (each add / sub one exact-or-rounded-once step,
// as the generic transform's).
template <int NV>
FP4SIM_AVX512_INLINE void butterflies_across(__m512d* v) {
#pragma GCC unroll 4
  for (int h = 1; h < NV; h <<= 1) {
#pragma GCC unroll 4
    for (int j0 = 0; j0 < NV; j0 += 2 * h) {
#pragma GCC unroll 4
      for (int j = j0; j < j0 + h; ++j) {
        const __m512d a = v[j], b = v[j + h];
        v[j] = _mm512_add_pd(a, b);
        v[j + h] = _mm512_sub_pd(a, b);
      }
    }
  }
}

// NV = N / 8 vectors of eight doubles per tile: three butterflies inside each, log2(NV) across.
template <int NV, bool kBf16>
FP4SIM_AVX512_INLINE void rht_tiles(const float* src, size_t n, const RhtRegs& rr, float* dst) {
  const __m512d scale = _mm512_set1_pd(NV == 2 ? 0.25 : 0.125);
  for (size_t i = 0; i < n; i += 8 * NV) {
    __m512d v[NV];
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j)
      v[j] = fwht8(_mm512_xor_pd(_mm512_cvtps_pd(_mm256_loadu_ps(src + i + 8 * j)), rr.pre[j]));
    butterflies_across<NV>(v);
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) _mm256_storeu_ps(dst + i + 8 * j, rht_finish<kBf16>(v[j], scale));
  }
}

FP4SIM_AVX512 void rht_group(const float* src, size_t n, const RhtRegs& rr, float* dst) {
  const __m512i absm = set1(0x7FFFFFFF), one = set1(1);
  __m512i vmax = _mm512_setzero_si512(), vmin = set1(0xFFFFFFFFu);
  for (size_t i = 0; i < n; i += 16) {
    const __m512i a = _mm512_and_si512(_mm512_loadu_si512(src + i), absm);
    vmax = _mm512_max_epu32(vmax, a);
    vmin = _mm512_min_epu32(vmin, _mm512_sub_epi32(a, one));  // zeros wrap to the top: ignored
  }
  const int emax = static_cast<int>(_mm512_reduce_max_epu32(vmax) >> 23);
  const int emin = std::max(static_cast<int>((_mm512_reduce_min_epu32(vmin) + 1u) >> 23), 1);
  const Rht& r = *rr.rht;
  if (emax >= 255 || emax - emin > 29 - std::countr_zero(static_cast<unsigned>(r.n))) {
    rht_apply_to(std::span<const float>(src, n), std::span<float>(dst, n), n, r.n,
                 std::span<const int8_t>(r.signs, static_cast<size_t>(r.n)), r.bf16);
    return;
  }
  if (r.n == 16) {
    if (r.bf16) rht_tiles<2, true>(src, n, rr, dst);
    else rht_tiles<2, false>(src, n, rr, dst);
  } else {
    if (r.bf16) rht_tiles<8, true>(src, n, rr, dst);
    else rht_tiles<8, false>(src, n, rr, dst);
  }
}

// (hi, lo) of the 32 x 32 -> 64-bit products a * m, sixteen lanes.
FP4SIM_AVX512_INLINE void mulhilo16(__m512i a, __m512i m, __m512i& hi, __m512i& lo) {
  lo = _mm512_mullo_epi32(a, m);
  const __m512i even = _mm512_mul_epu32(a, m), odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);
  hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
}

// Philox4x32-10 (philox4x32_r's rounds) on sixteen counters at once: lane j's counter block is
// blk[j] + q (its words c0, c1; c2 the stream, c3 zero), the key the SR seed. Out: the four output
// words, lane j's 16 SR bytes being c0's four bytes (least significant first), then c1's, c2's, c3's.
FP4SIM_AVX512_INLINE void philox_16(const QuantOptions& opt, __m512i blk_lo, __m512i blk_hi, size_t q, __m512i w[4]) {
  const __m512i m0 = set1(0xD2511F53u), m1 = set1(0xCD9E8D57u);
  const __m512i bq_lo = _mm512_add_epi64(blk_lo, _mm512_set1_epi64(static_cast<int64_t>(q)));
  const __m512i bq_hi = _mm512_add_epi64(blk_hi, _mm512_set1_epi64(static_cast<int64_t>(q)));
  __m512i c0 =
      _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(bq_lo)), _mm512_cvtepi64_epi32(bq_hi), 1);
  __m512i c1 = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(_mm512_srli_epi64(bq_lo, 32))),
                                  _mm512_cvtepi64_epi32(_mm512_srli_epi64(bq_hi, 32)), 1);
  __m512i c2 = set1(opt.stream), c3 = _mm512_setzero_si512();
  uint32_t k0 = static_cast<uint32_t>(opt.seed), k1 = static_cast<uint32_t>(opt.seed >> 32);
  for (int r = 0; r < 10; ++r) {
    if (r > 0) k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    __m512i hi0, lo0, hi1, lo1;
    mulhilo16(c0, m0, hi0, lo0);
    mulhilo16(c2, m1, hi1, lo1);
    c0 = _mm512_xor_si512(_mm512_xor_si512(hi1, c1), set1(k0));
    c1 = lo1;
    c2 = _mm512_xor_si512(_mm512_xor_si512(hi0, c3), set1(k1));
    c3 = lo0;
  }
  w[0] = c0, w[1] = c1, w[2] = c2, w[3] = c3;
}

// SPEC §3's SR bytes for sixteen blocks of B values that run down sixteen columns, transposed:
// rv[16 * i + j] is byte i of block j, block j starting at flat index start + j * stride (a
// multiple of 16 each; B / 16 Philox counter blocks per block, sixteen blocks' at once).
FP4SIM_AVX512 void sr_rows_16_blocks(const QuantOptions& opt, uint64_t start, uint64_t stride, size_t B,
                                     uint8_t* rv) {
  const __m512i j = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
  const __m512i st = _mm512_set1_epi64(static_cast<int64_t>(stride));
  const __m512i base = _mm512_set1_epi64(static_cast<int64_t>(start));
  const __m512i s_lo = _mm512_add_epi64(base, _mm512_mullo_epi64(j, st));
  const __m512i s_hi = _mm512_add_epi64(s_lo, _mm512_slli_epi64(st, 3));
  const __m512i blk_lo = _mm512_srli_epi64(s_lo, 4), blk_hi = _mm512_srli_epi64(s_hi, 4);
  for (size_t q = 0; q < B / 16; ++q) {
    __m512i w[4];
    philox_16(opt, blk_lo, blk_hi, q, w);
    uint8_t* o = rv + 256 * q;
    for (int k = 0; k < 4; ++k)
      for (int b = 0; b < 4; ++b)  // vpmovdb keeps each lane's low byte
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 16 * (4 * k + b)),
                         _mm512_cvtepi32_epi8(_mm512_srli_epi32(w[k], 8 * b)));
  }
}

// One NVFP4 block of sixteen values at xb: its E2M1 codes of x * inv (RNE, or SR with the block's
// sixteen random bytes r), decoded, then (value * s) * S_dec (g) as dequant_blocks computes it.
template <bool SR, int Stream>
FP4SIM_AVX512_INLINE void fake_e2m1_16(const float* xb, float inv, float s, const uint8_t* r, const SmallFmtConst& c,
                                       __m512 t16, __m512 g, float* ob) {
  const __m512 xv = _mm512_loadu_ps(xb);
  const __m512 vinv = _mm512_set1_ps(inv);
  __m512i cc;
  if constexpr (SR) cc = small_codes_16<true>(_mm512_mul_ps(xv, vinv), xv, rbytes_16(r), c);
  else cc = e2m1_rne_16(xv, vinv);
  const __m512 q = _mm512_permutexvar_ps(cc, t16);
  store16<Stream>(ob, _mm512_mul_ps(_mm512_mul_ps(q, _mm512_set1_ps(s)), g));
}

// NVFP4 1x16: nvfp4_1x16's scale chain for sixteen blocks, then per block the codes (RNE by the
// arithmetic of e2m1_rne_16, which gives the codes of store_e2m1_64; SR by small_codes_16) and
// (value * s) * S_dec as dequant_blocks computes it.
template <bool SR, int Stream>
FP4SIM_AVX512 void fake_nvfp4(const float* x, size_t n_blocks, Nvfp4TensorScale ts, const QuantOptions& opt,
                              uint64_t first_index, float* out) {
  const SmallFmtConst c = small_fmt_const(kE2M1, true);
  const __m512 mult = _mm512_set1_ps(ts.s_enc * (1.0f / 6.0f));  // nvfp4_scale_code's factor
  const __m512 t16 = _mm512_loadu_ps(decode_table(kE2M1).v.data());
  const __m512 g = _mm512_set1_ps(ts.s_dec);
  alignas(64) std::array<uint8_t, 256> rb{};
  alignas(64) float inv16[16], s16[16];
  for (size_t b0 = 0; b0 < n_blocks; b0 += 16) {
    const size_t nb = std::min<size_t>(16, n_blocks - b0);
    const float* xc = x + b0 * 16;
    float* oc = out + b0 * 16;
    prefetch_ahead(xc, (n_blocks - b0) * 16, 1024);
    if constexpr (SR) sr_bytes(opt.seed, opt.stream, first_index + b0 * 16, nb * 16, rb.data());
    const __m512i code = ue4m3_rne_sat_16(_mm512_mul_ps(_mm512_castsi512_ps(nvfp4_block_maxima_16(xc, nb)), mult));
    _mm512_store_ps(inv16, nvfp4_inverse_16(code, ts.s_dec));
    _mm512_store_ps(s16, ue4m3_value_16(code));
    for (size_t i = 0; i < nb; ++i)
      fake_e2m1_16<SR, Stream>(xc + 16 * i, inv16[i], s16[i], rb.data() + 16 * i, c, t16, g, oc + 16 * i);
  }
}

// NVFP4 2D (16 x 16 tiles, one scale each): nvfp4_2d_avx2's tile maxima (the NaN-ignoring block
// maxima of the tile's rows, maxed), the 1x16 scale chain on sixteen tiles at a time, then each
// row's blocks as fake_nvfp4 does. Per band of 16 rows, a pass over its rows for the maxima (per
// tile a vector of lane maxima in acc) and one to quantize: each row read and written in order.
// x is [rows, cols] from a tile's first row; row r's first SR index is first_index + r * cols, or
// starts[r].
template <bool SR, int Stream>
FP4SIM_AVX512 void fake_nvfp4_2d(const float* x, size_t rows, size_t cols, Nvfp4TensorScale ts, const QuantOptions& opt,
                                 uint64_t first_index, const uint64_t* starts, float* out) {
  const SmallFmtConst c = small_fmt_const(kE2M1, true);
  const __m512 mult = _mm512_set1_ps(ts.s_enc * (1.0f / 6.0f));
  const __m512 t16 = _mm512_loadu_ps(decode_table(kE2M1).v.data());
  const __m512 g = _mm512_set1_ps(ts.s_dec);
  const size_t sc = cols / 16, sc16 = (sc + 15) / 16 * 16;
  thread_local std::vector<uint32_t> acc;  // 16 lanes per tile
  thread_local std::vector<float> inv, sv;
  thread_local std::vector<uint8_t> rb;
  if (inv.size() < sc16) acc.resize(16 * sc16), inv.resize(sc16), sv.resize(sc16);
  if (SR && rb.size() < cols) rb.resize(cols);
  for (size_t r0 = 0; r0 < rows; r0 += 16) {
    const size_t r1 = std::min(rows, r0 + 16);
    std::fill(acc.begin(), acc.end(), 0u);
    for (size_t r = r0; r < r1; ++r) {
      const float* xr = x + r * cols;
      for (size_t t = 0; t < sc; ++t) {
        uint32_t* a = acc.data() + 16 * t;
        _mm512_storeu_si512(a, _mm512_max_epu32(_mm512_loadu_si512(a), nvfp4_block_lanes(xr + 16 * t)));
      }
    }
    for (size_t t0 = 0; t0 < sc; t0 += 16) {
      __m512i m[16];
      for (size_t t = 0; t < 16; ++t) m[t] = _mm512_loadu_si512(acc.data() + 16 * (t0 + t));
      const __m512i code = ue4m3_rne_sat_16(_mm512_mul_ps(_mm512_castsi512_ps(lane_maxima_16(m)), mult));
      _mm512_storeu_ps(inv.data() + t0, nvfp4_inverse_16(code, ts.s_dec));
      _mm512_storeu_ps(sv.data() + t0, ue4m3_value_16(code));
    }
    for (size_t r = r0; r < r1; ++r) {
      const float* xr = x + r * cols;
      float* orow = out + r * cols;
      if constexpr (SR) sr_bytes(opt.seed, opt.stream, starts ? starts[r] : first_index + r * cols, cols, rb.data());
      for (size_t t = 0; t < sc; ++t)
        fake_e2m1_16<SR, Stream>(xr + 16 * t, inv[t], sv[t], SR ? rb.data() + 16 * t : nullptr, c, t16, g, orow + 16 * t);
    }
  }
}

// The ceil rule's step for normal maxima a (FP32 patterns): mx_shared_exp adds one to the floor
// exponent where max_elem * 2^e < amax; both lie in [2^E, 2^(E+1)) (E = amax's exponent), so that
// is amax's significand field above the largest element's.
inline uint32_t max_elem_significand(const BlockFormatInfo& fi) {
  return f2u(static_cast<float>(decode(*fi.elem, fi.elem->max_code()))) & 0x007FFFFFu;
}
FP4SIM_AVX512_INLINE __mmask16 ceil_up(__m512i a, uint32_t max_mant) {
  return _mm512_cmpgt_epu32_mask(_mm512_and_si512(a, set1(0x007FFFFFu)), set1(max_mant));
}

// MX: mx_blocks' shared exponents (the ceil rule by ceil_up), then per block value * 2^e (the E8M0
// table's entry). A non-finite block dequantizes to NaN, an all-zero block to +0.0 (zero codes).
template <bool SR, int Stream>
FP4SIM_AVX512 void fake_mx(const BlockFormatInfo& fi, const float* x, size_t n_blocks, const QuantOptions& opt,
                           uint64_t first_index, const Rht* rht, float* out) {
  constexpr size_t B = 32;
  const RhtRegs rr = rht_regs(rht);
  alignas(64) float rx[16 * B];
  const SmallFmtConst c = small_fmt_const(*fi.elem, SR);
  const bool four = fi.elem->bits == 4;
  const bool fp4_rne = !SR && fi.elem == &kE2M1;
  const bool floor_rule = opt.scale_rule == ScaleRule::Floor;
  const uint32_t max_mant = max_elem_significand(fi);
  const ElemDecode dec = elem_decode(*fi.elem);
  const __m512 t16 = four ? _mm512_loadu_ps(decode_table(*fi.elem).v.data()) : _mm512_setzero_ps();
  const float* st = decode_table(*fi.scale).v.data();
  const __m512 qnan = _mm512_castsi512_ps(set1(0x7FC00000u));
  const __m512i absm = set1(0x7FFFFFFF);
  alignas(64) std::array<uint8_t, 16 * B> rb{};
  alignas(64) uint32_t amax16[16], inv16[16];
  alignas(64) int32_t e16[16];
  for (size_t b0 = 0; b0 < n_blocks; b0 += 16) {
    const size_t nb = std::min<size_t>(16, n_blocks - b0);
    const float* xc = x + b0 * B;
    prefetch_ahead(xc, (n_blocks - b0) * B, 2048);
    if (rht != nullptr) {
      rht_group(xc, nb * B, rr, rx);
      xc = rx;
    }
    if constexpr (SR) sr_bytes(opt.seed, opt.stream, first_index + b0 * B, nb * B, rb.data());
    __m512i m[16];
    for (size_t i = 0; i < 16; ++i) {
      m[i] = i < nb ? _mm512_max_epu32(_mm512_and_si512(_mm512_loadu_si512(xc + B * i), absm),
                                       _mm512_and_si512(_mm512_loadu_si512(xc + B * i + 16), absm))
                    : _mm512_setzero_si512();
    }
    const __m512i a = lane_maxima_16(m);
    __m512i e = _mm512_sub_epi32(_mm512_srli_epi32(a, 23), set1(static_cast<uint32_t>(127 + fi.emax_elem)));
    if (!floor_rule) e = _mm512_mask_add_epi32(e, ceil_up(a, max_mant), e, set1(1));
    e = _mm512_min_epi32(_mm512_max_epi32(e, set1(static_cast<uint32_t>(-127))), set1(127));
    const __m512i inv = _mm512_mask_blend_epi32(_mm512_cmpeq_epi32_mask(e, set1(127)),
                                                _mm512_slli_epi32(_mm512_sub_epi32(set1(127), e), 23),
                                                set1(0x00400000));
    _mm512_store_si512(amax16, a);
    _mm512_store_si512(inv16, inv);
    _mm512_store_si512(e16, e);
    for (size_t i = 0; i < nb; ++i) {
      float* ob = out + (b0 + i) * B;
      const uint32_t am = amax16[i];
      if (am >= kExpMask || am == 0) {
        const __m512 v = am == 0 ? _mm512_setzero_ps() : qnan;
        store16<Stream>(ob, v);
        store16<Stream>(ob + 16, v);
        continue;
      }
      if (am < 0x00800000u) {  // an FP32-subnormal amax (ilogb)
        e16[i] = mx_shared_exp(fi, u2f(am), opt.scale_rule);
        inv16[i] = f2u(pow2_neg(e16[i]));
      }
      const __m512 s = _mm512_set1_ps(st[e16[i] + kUE8M0Bias]);
      const __m512 vinv = _mm512_set1_ps(u2f(inv16[i]));
      const float* xb = xc + B * i;
      for (size_t h = 0; h < 2; ++h) {
        const __m512 xv = _mm512_loadu_ps(xb + 16 * h);
        __m512i cc;
        if (fp4_rne) {
          cc = e2m1_rne_16(xv, vinv);
        } else {
          const __m512i r = SR ? rbytes_16(rb.data() + i * B + 16 * h) : _mm512_setzero_si512();
          cc = small_codes_16<SR>(_mm512_mul_ps(xv, vinv), xv, r, c);
        }
        const __m512 q = four ? _mm512_permutexvar_ps(cc, t16) : decode_small_16(cc, dec);
        store16<Stream>(ob + 16 * h, _mm512_mul_ps(q, s));
      }
    }
  }
}

// Along the first axis without transposes: blocks that run down sixteen columns of x, one block
// per lane, so that a row of sixteen values is one vector. The RHT's tiles run down the columns
// too: its butterflies pair rows, whole vectors, and need no permutes.

// The RHT (N = 16 or 64) of N rows of sixteen columns (src row i at src + i * ss) into dst
// (row i at dst + 16 * i), the bits of rht_apply_to on each column: the certificate of rht_group
// over the whole group, then in doubles (eight columns at a time) the butterflies of the row index's
// low three bits in registers on eight rows, the remaining ones on the rows eight apart through
// dbl; every partial sum exact, rounded once. Otherwise each column through rht_apply_to.
// pre: N entries, -0.0 where the sign is -1 (a broadcast XOR, no branch on the signs).
template <int N, bool kBf16>
FP4SIM_AVX512 void rht_columns(const float* src, size_t ss, const Rht& rht, const double* pre, float* dst) {
  const __m512i absm = set1(0x7FFFFFFF), one = set1(1);
  __m512i vmax = _mm512_setzero_si512(), vmin = set1(0xFFFFFFFFu);
  for (int i = 0; i < N; ++i) {
    const __m512i a = _mm512_and_si512(_mm512_loadu_si512(src + static_cast<size_t>(i) * ss), absm);
    vmax = _mm512_max_epu32(vmax, a);
    vmin = _mm512_min_epu32(vmin, _mm512_sub_epi32(a, one));  // zeros wrap to the top: ignored
  }
  const int emax = static_cast<int>(_mm512_reduce_max_epu32(vmax) >> 23);
  const int emin = std::max(static_cast<int>((_mm512_reduce_min_epu32(vmin) + 1u) >> 23), 1);
  if (emax >= 255 || emax - emin > 29 - std::countr_zero(static_cast<unsigned>(N))) {
    alignas(64) float col[N];
    for (int j = 0; j < 16; ++j) {
      for (int i = 0; i < N; ++i) col[i] = src[static_cast<size_t>(i) * ss + static_cast<size_t>(j)];
      rht_apply_to(std::span<const float>(col, N), std::span<float>(col, N), N, N,
                   std::span<const int8_t>(rht.signs, N), rht.bf16);
      for (int i = 0; i < N; ++i) dst[16 * i + j] = col[i];
    }
    return;
  }
  constexpr int G = N / 8;  // groups of eight rows
  alignas(64) double dbl[N * 16];
  for (int g = 0; g < G; ++g) {
    for (int h = 0; h < 2; ++h) {
      __m512d v[8];
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        const int i = 8 * g + k;
        v[k] = _mm512_xor_pd(_mm512_cvtps_pd(_mm256_loadu_ps(src + static_cast<size_t>(i) * ss + 8 * h)),
                             _mm512_set1_pd(pre[i]));
      }
#pragma GCC unroll 4
      for (int w = 1; w < 8; w <<= 1) {
#pragma GCC unroll 4
        for (int k0 = 0; k0 < 8; k0 += 2 * w) {
#pragma GCC unroll 4
          for (int k = k0; k < k0 + w; ++k) {
            const __m512d a = v[k], b = v[k + w];
            v[k] = _mm512_add_pd(a, b);
            v[k + w] = _mm512_sub_pd(a, b);
          }
        }
      }
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) _mm512_store_pd(dbl + 16 * (8 * g + k) + 8 * h, v[k]);
    }
  }
  const __m512d scale = _mm512_set1_pd(N == 16 ? 0.25 : 0.125);
  for (int k = 0; k < 8; ++k) {
    for (int h = 0; h < 2; ++h) {
      __m512d v[G];
#pragma GCC unroll 8
      for (int g = 0; g < G; ++g) v[g] = _mm512_load_pd(dbl + 16 * (8 * g + k) + 8 * h);
      butterflies_across<G>(v);
#pragma GCC unroll 8
      for (int g = 0; g < G; ++g) {
        float* o = dst + 16 * (8 * g + k) + 8 * h;
        _mm256_storeu_ps(o, rht_finish<kBf16>(v[g], scale));
      }
    }
  }
}

// The band's rows a few column groups ahead (left: the values from src to the row's end): each
// row is its own stream, more of them than the hardware prefetchers follow.
FP4SIM_AVX512_INLINE void prefetch_rows(const float* src, size_t ss, size_t n_rows, size_t left) {
  constexpr size_t kAhead = 64;
  if (left <= kAhead) return;
  for (size_t i = 0; i < n_rows; ++i) _mm_prefetch(reinterpret_cast<const char*>(src + i * ss + kAhead), _MM_HINT_T0);
}

FP4SIM_AVX512_INLINE void rht_down(const float* src, size_t ss, const Rht& rht, const double* pre, float* dst) {
  if (rht.n == 16) {
    if (rht.bf16) rht_columns<16, true>(src, ss, rht, pre, dst);
    else rht_columns<16, false>(src, ss, rht, pre, dst);
  } else {
    if (rht.bf16) rht_columns<64, true>(src, ss, rht, pre, dst);
    else rht_columns<64, false>(src, ss, rht, pre, dst);
  }
}

// A band of n rows (n <= 64) of x [rows, cols] from row i0, sixteen columns at a time: the rows
// prefetched, rotated down the columns when rht is set, the SR bytes of the 16 x n elements drawn;
// f(src, ss, rv, c0) then quantizes the group (row i at src + i * ss, its SR bytes at rv + 16 * i).
template <bool SR, class F>
FP4SIM_AVX512_INLINE void column_groups(const float* x, size_t rows, size_t cols, size_t i0, size_t n,
                                        const QuantOptions& opt, const Rht* rht, F&& f) {
  alignas(64) float rot[64 * 16];
  alignas(64) uint8_t rv[64 * 16];
  alignas(64) double pre[64] = {};
  for (int i = 0; rht != nullptr && i < rht->n; ++i) pre[i] = rht->signs[i] < 0 ? -0.0 : 0.0;
  for (size_t c0 = 0; c0 < cols; c0 += 16) {
    const float* src = x + i0 * cols + c0;
    size_t ss = cols;
    prefetch_rows(src, cols, n, cols - c0);
    if (rht != nullptr) {
      for (size_t t = 0; t < n; t += static_cast<size_t>(rht->n)) rht_down(src + t * cols, cols, *rht, pre, rot + 16 * t);
      src = rot;
      ss = 16;
    }
    if constexpr (SR) sr_rows_16_blocks(opt, c0 * rows + i0, rows, n, rv);
    f(src, ss, rv, c0);
  }
}

// fake_mx's arithmetic on sixteen blocks that run down sixteen columns (block j: rows 0 .. B - 1
// of column j, row i at src + i * ss, written at dst + i * ds), its shared exponents computed for
// all sixteen lanes at once (the floor rule from the amax's exponent field, ceil_up for the ceil
// rule); FP32-subnormal maxima by mx_shared_exp itself. rv: the SR bytes,
// row i's at rv + 16 * i.
struct MxColumns {
  const BlockFormatInfo* fi;
  SmallFmtConst c;
  ElemDecode dec;
  __m512 t16;
  const float* st;
  uint32_t max_mant;  // significand field of the largest element
  bool four, fp4_rne, ceil;
  ScaleRule rule;
};

template <bool SR>
FP4SIM_AVX512_INLINE void fake_mx_column_blocks(const MxColumns& k, const float* src, size_t ss, const uint8_t* rv,
                                                float* dst, size_t ds) {
  constexpr size_t B = 32;
  const __m512i absm = set1(0x7FFFFFFF);
  __m512i am = _mm512_setzero_si512();
#pragma GCC unroll 8
  for (size_t i = 0; i < B; ++i) am = _mm512_max_epu32(am, _mm512_and_si512(_mm512_loadu_si512(src + i * ss), absm));
  __m512i e = _mm512_sub_epi32(_mm512_srli_epi32(am, 23), set1(static_cast<uint32_t>(127 + k.fi->emax_elem)));
  if (k.ceil) e = _mm512_mask_add_epi32(e, ceil_up(am, k.max_mant), e, set1(1));
  e = _mm512_min_epi32(_mm512_max_epi32(e, set1(static_cast<uint32_t>(-127))), set1(127));
  const __mmask16 nan = _mm512_cmpge_epu32_mask(am, set1(kExpMask));
  const __mmask16 zero = _mm512_cmpeq_epi32_mask(am, _mm512_setzero_si512());
  const __mmask16 tiny = _mm512_cmplt_epu32_mask(am, set1(0x00800000u)) & static_cast<__mmask16>(~zero);
  if (tiny != 0) [[unlikely]] {
    alignas(64) uint32_t a16[16];
    alignas(64) int32_t e16[16];
    _mm512_store_si512(a16, am);
    _mm512_store_si512(e16, e);
    for (int j = 0; j < 16; ++j)
      if ((tiny >> j) & 1) e16[j] = mx_shared_exp(*k.fi, u2f(a16[j]), k.rule);
    e = _mm512_load_si512(e16);
  }
  const __m512 vinv = _mm512_castsi512_ps(_mm512_mask_blend_epi32(
      _mm512_cmpeq_epi32_mask(e, set1(127)), _mm512_slli_epi32(_mm512_sub_epi32(set1(127), e), 23), set1(0x00400000)));
  const __m512 s = _mm512_i32gather_ps(_mm512_add_epi32(e, set1(kUE8M0Bias)), k.st, 4);
  const __mmask16 special = nan | zero;
  const __m512 qnan = _mm512_castsi512_ps(set1(0x7FC00000u));
#pragma GCC unroll 2
  for (size_t i = 0; i < B; ++i) {
    const __m512 xv = _mm512_loadu_ps(src + i * ss);
    __m512i cc;
    if (k.fp4_rne) {
      cc = e2m1_rne_16(xv, vinv);
    } else {
      const __m512i r = SR ? rbytes_16(rv + 16 * i) : _mm512_setzero_si512();
      cc = small_codes_16<SR>(_mm512_mul_ps(xv, vinv), xv, r, k.c);
    }
    const __m512 q = k.four ? _mm512_permutexvar_ps(cc, k.t16) : decode_small_16(cc, k.dec);
    __m512 v = _mm512_mul_ps(q, s);
    if (special != 0) v = _mm512_mask_mov_ps(_mm512_mask_mov_ps(v, nan, qnan), zero, _mm512_setzero_ps());
    _mm512_storeu_ps(dst + i * ds, v);
  }
}

// One band of H rows (H = 32, or the RHT size where larger) of x [rows, cols] from row i0: every
// column's blocks, sixteen columns at a time, in place allowed. Column c's block q takes the SR
// bytes of flat index c * rows + i0 + 32 q (the transposed view's).
template <bool SR>
FP4SIM_AVX512 void fake_mx_band(const BlockFormatInfo& fi, const float* x, size_t rows, size_t cols, size_t i0,
                                const QuantOptions& opt, const Rht* rht, float* out) {
  constexpr size_t B = 32;
  MxColumns k{};
  k.fi = &fi;
  k.c = small_fmt_const(*fi.elem, SR);
  k.dec = elem_decode(*fi.elem);
  k.four = fi.elem->bits == 4;
  k.fp4_rne = !SR && fi.elem == &kE2M1;
  k.t16 = k.four ? _mm512_loadu_ps(decode_table(*fi.elem).v.data()) : _mm512_setzero_ps();
  k.st = decode_table(*fi.scale).v.data();
  k.max_mant = max_elem_significand(fi);
  k.ceil = opt.scale_rule == ScaleRule::Ceil;
  k.rule = opt.scale_rule;
  const size_t H = rht != nullptr ? std::max<size_t>(B, static_cast<size_t>(rht->n)) : B;
  column_groups<SR>(x, rows, cols, i0, H, opt, rht, [&](const float* src, size_t ss, const uint8_t* rv, size_t c0) FP4SIM_AVX512 {
    for (size_t q = 0; q < H; q += B)
      fake_mx_column_blocks<SR>(k, src + q * ss, ss, rv + 16 * q, out + (i0 + q) * cols + c0, cols);
  });
}

// fake_hif4's arithmetic on sixteen 64-value blocks that run down sixteen columns (block j: rows
// 0 .. 63 of column j, row i at src + i * ss, written at dst + i * ds): a group of four elements is
// four rows, so the group maxima are sixteen vectors over the lanes, and hif4_levels' comparisons
// per group (pairs of groups for l2) are lane-wise; the scale code's table entries by gathers.
template <bool SR>
FP4SIM_AVX512 void fake_hif4_columns(const float* src, size_t ss, const uint8_t* rv, float* dst, size_t ds) {
  const BlockFormatInfo& fi = info(BlockFormat::Hif4);
  const Hif4RecTable& recs = hif4_recs();
  const __m512 t16 = _mm512_loadu_ps(decode_table(*fi.elem).v.data());
  const float* st = decode_table(*fi.scale).v.data();
  const __m512i absm = set1(0x7FFFFFFF), one = set1(1);
  __m512i gm[16];
  __m512i vmax = _mm512_setzero_si512();
  for (size_t g = 0; g < 16; ++g) {
    __m512i m = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (size_t i = 4 * g; i < 4 * g + 4; ++i)
      m = _mm512_max_epu32(m, _mm512_and_si512(_mm512_loadu_si512(src + i * ss), absm));
    gm[g] = m;
    vmax = _mm512_max_epu32(vmax, m);
  }
  const __m512i finite_vmax = _mm512_min_epu32(vmax, set1(0x7F7FFFFF));
  const __m256i c_lo = hif4_e6m2_8(_mm512_castps512_ps256(_mm512_castsi512_ps(finite_vmax)));
  const __m256i c_hi = hif4_e6m2_8(_mm256_castsi256_ps(_mm512_extracti64x4_epi64(finite_vmax, 1)));
  const __m512i code = _mm512_inserti64x4(_mm512_castsi256_si512(c_lo), c_hi, 1);
  const __mmask16 nan = _mm512_cmpge_epu32_mask(vmax, set1(kExpMask));  // NaN scale word: the block NaN
  const auto* t2p = reinterpret_cast<const int*>(recs.t2.data());
  const auto* t4p = reinterpret_cast<const int*>(recs.t4.data());
  const __m512i t2m1 = _mm512_sub_epi32(_mm512_i32gather_epi32(code, t2p, 4), one);
  const __m512i t4m1 = _mm512_sub_epi32(_mm512_i32gather_epi32(code, t4p, 4), one);
  const __m512i base = _mm512_i32gather_epi32(code, recs.base.data(), 4);
  const __m512i mr = _mm512_i32gather_epi32(code, reinterpret_cast<const int*>(recs.mr.data()), 4);
  const __m512i sv = _mm512_castps_si512(_mm512_i32gather_ps(code, st, 4));
  const __m512 qnan = _mm512_castsi512_ps(set1(0x7FC00000u));
  for (size_t g = 0; g < 16; ++g) {
    const __m512i v8 = _mm512_max_epu32(gm[g], gm[g ^ 1]);  // the pair of groups
    const __mmask16 l2 = _mm512_cmpgt_epi32_mask(v8, t4m1);
    const __mmask16 l3 = _mm512_cmpgt_epi32_mask(gm[g], _mm512_mask_blend_epi32(l2, t2m1, t4m1));
    __m512i lvl = _mm512_mask_add_epi32(base, l2, base, one);
    lvl = _mm512_mask_add_epi32(lvl, l3, lvl, one);
    const __m512 sl = _mm512_castsi512_ps(_mm512_add_epi32(sv, _mm512_slli_epi32(_mm512_sub_epi32(lvl, base), 23)));
#pragma GCC unroll 4
    for (size_t i = 4 * g; i < 4 * g + 4; ++i) {
      const __m512i r = SR ? rbytes_16(rv + 16 * i) : set1(128);
      const __m512i cc = hif4_codes_16(_mm512_loadu_si512(src + i * ss), mr, lvl, r);
      const __m512 v = _mm512_mul_ps(_mm512_permutexvar_ps(cc, t16), sl);
      _mm512_storeu_ps(dst + i * ds, _mm512_mask_mov_ps(v, nan, qnan));
    }
  }
}

// One band of 64 rows of x [rows, cols] from row i0, HiF4 down the columns as fake_mx_band does MX.
template <bool SR>
FP4SIM_AVX512 void fake_hif4_band(const float* x, size_t rows, size_t cols, size_t i0, const QuantOptions& opt,
                                  const Rht* rht, float* out) {
  column_groups<SR>(x, rows, cols, i0, 64, opt, rht, [&](const float* src, size_t ss, const uint8_t* rv, size_t c0) FP4SIM_AVX512 {
    fake_hif4_columns<SR>(src, ss, rv, out + i0 * cols + c0, cols);
  });
}

// NVFP4 1x16 down the columns: one band of H rows (H = 16, or the RHT size where larger) of src
// [rows, cols] from row i0 into out, sixteen columns at a time, each 16-row block of a column one
// lane: fake_nvfp4's scale chain on the lanes' maxima, then per row fake_e2m1_16's arithmetic
// with the lanes' inverses and scales. src == out allowed.
template <bool SR>
FP4SIM_AVX512 void fake_nvfp4_band(const float* src, size_t rows, size_t cols, size_t i0, size_t H,
                                   Nvfp4TensorScale ts, const QuantOptions& opt, float* out) {
  const SmallFmtConst c = small_fmt_const(kE2M1, true);
  const __m512 mult = _mm512_set1_ps(ts.s_enc * (1.0f / 6.0f));
  const __m512 t16 = _mm512_loadu_ps(decode_table(kE2M1).v.data());
  const __m512 g = _mm512_set1_ps(ts.s_dec);
  const __m512i absm = set1(0x7FFFFFFF);
  alignas(64) uint8_t rv[64 * 16];
  for (size_t c0 = 0; c0 < cols; c0 += 16) {
    const float* x = src + i0 * cols + c0;
    float* o = out + i0 * cols + c0;
    prefetch_rows(x, cols, H, cols - c0);
    if constexpr (SR) sr_rows_16_blocks(opt, c0 * rows + i0, rows, H, rv);
    for (size_t q = 0; q < H; q += 16) {
      __m512i m = _mm512_setzero_si512();
#pragma GCC unroll 8
      for (size_t i = q; i < q + 16; ++i) {  // max(|x|, 0): a NaN counts as 0, as nvfp4_block_lanes
        const __m512 a = _mm512_castsi512_ps(_mm512_and_si512(_mm512_loadu_si512(x + i * cols), absm));
        m = _mm512_max_epu32(m, _mm512_castps_si512(_mm512_max_ps(a, _mm512_setzero_ps())));
      }
      const __m512i code = ue4m3_rne_sat_16(_mm512_mul_ps(_mm512_castsi512_ps(m), mult));
      const __m512 vinv = nvfp4_inverse_16(code, ts.s_dec);
      const __m512 sv = ue4m3_value_16(code);
#pragma GCC unroll 2
      for (size_t i = q; i < q + 16; ++i) {
        const __m512 xv = _mm512_loadu_ps(x + i * cols);
        __m512i cc;
        if constexpr (SR) cc = small_codes_16<true>(_mm512_mul_ps(xv, vinv), xv, rbytes_16(rv + 16 * i), c);
        else cc = e2m1_rne_16(xv, vinv);
        const __m512 qv = _mm512_permutexvar_ps(cc, t16);
        _mm512_storeu_ps(o + i * cols, _mm512_mul_ps(_mm512_mul_ps(qv, sv), g));
      }
    }
  }
}

// NVFP4's first pass down the columns: out = the RHT (16 or 64 points down the columns) of the
// band of rht.n rows of x from row i0; returns the NaN-ignoring amax of those values.
FP4SIM_AVX512 float rht_band_amax(const float* x, size_t cols, size_t i0, const Rht& rht, float* out) {
  const size_t n = static_cast<size_t>(rht.n);
  float m = 0.0f;
  column_groups<false>(x, 0, cols, i0, n, QuantOptions{}, &rht, [&](const float* rot, size_t, const uint8_t*, size_t c0) FP4SIM_AVX512 {
    m = std::max(m, tensor_amax_avx512(rot, 16 * n));
    for (size_t i = 0; i < n; ++i) _mm512_storeu_ps(out + (i0 + i) * cols + c0, _mm512_load_ps(rot + 16 * i));
  });
  return m;
}

// HiF4: hif4_blocks' scale word, then per element value * (s * 2^level), the power of two added to
// s's exponent field as dequant_blocks_avx512 does (s is a normal float of at least 2^-48).
template <bool SR, int Stream>
FP4SIM_AVX512 void fake_hif4(const float* x, size_t n_blocks, const QuantOptions& opt, uint64_t first_index,
                             const Rht* rht, float* out) {
  const RhtRegs rr = rht_regs(rht);
  alignas(64) float rx[16 * 64];
  const BlockFormatInfo& fi = info(BlockFormat::Hif4);
  const Hif4RecTable& recs = hif4_recs();
  const __m512 t16 = _mm512_loadu_ps(decode_table(*fi.elem).v.data());
  const float* st = decode_table(*fi.scale).v.data();
  const __m512 qnan = _mm512_castsi512_ps(set1(0x7FC00000u));
  __m512i lane_pick[4];
  hif4_lane_pick(lane_pick);
  alignas(64) std::array<uint8_t, 16 * 64> rb{};
  alignas(64) uint32_t gm[16][16];
  alignas(64) uint32_t vmax16[16], code16[16];
  for (size_t b0 = 0; b0 < n_blocks; b0 += 16) {
    const size_t nb = std::min<size_t>(16, n_blocks - b0);
    const float* xc = x + b0 * 64;
    prefetch_ahead(xc, (n_blocks - b0) * 64, 4096);
    if (rht != nullptr) {
      rht_group(xc, nb * 64, rr, rx);
      xc = rx;
    }
    if constexpr (SR) sr_bytes(opt.seed, opt.stream, first_index + b0 * 64, nb * 64, rb.data());
    hif4_group_maxima_16(xc, nb, gm, vmax16, code16);
    for (size_t i = 0; i < nb; ++i) {
      float* ob = out + (b0 + i) * 64;
      if (vmax16[i] >= kExpMask) {  // NaN scale word: the whole block NaN
        for (int q = 0; q < 4; ++q) store16<Stream>(ob + 16 * q, qnan);
        continue;
      }
      const uint32_t e6m2 = code16[i];
      const Hif4Levels lv = hif4_levels(_mm512_load_si512(gm[i]), recs, e6m2);
      const __m512i base = set1(static_cast<uint32_t>(recs.base[e6m2]));
      const __m512i lvl = lv.lvl;
      // s * 2^level per group, in group order
      const __m512i sl = _mm512_add_epi32(_mm512_castps_si512(_mm512_set1_ps(st[e6m2])),
                                          _mm512_slli_epi32(_mm512_sub_epi32(lvl, base), 23));
      const __m512i mr = set1(recs.mr[e6m2]);
      const float* xb = xc + 64 * i;
      for (int q = 0; q < 4; ++q) {
        const __m512i r = SR ? rbytes_16(rb.data() + 64 * i + 16 * q) : set1(128);
        const __m512i cc =
            hif4_codes_16(_mm512_loadu_si512(xb + 16 * q), mr, _mm512_permutexvar_epi32(lane_pick[q], lvl), r);
        const __m512 mq = _mm512_castsi512_ps(_mm512_permutexvar_epi32(lane_pick[q], sl));
        store16<Stream>(ob + 16 * q, _mm512_mul_ps(_mm512_permutexvar_ps(cc, t16), mq));
      }
    }
  }
}

// Stream 1 (64-byte aligned out) or 2 (16-byte aligned) where asked and possible, else 0.
int stream_kind(const float* out, bool stream) {
  const auto a = reinterpret_cast<uintptr_t>(out);
  return !stream ? 0 : a % 64 == 0 ? 1 : a % 16 == 0 ? 2 : 0;
}

template <template <bool, int> class K, typename... A>
void dispatch(bool sr, int stream, A&&... a) {
  if (sr) {
    if (stream == 1) K<true, 1>::run(a...);
    else if (stream == 2) K<true, 2>::run(a...);
    else K<true, 0>::run(a...);
  } else {
    if (stream == 1) K<false, 1>::run(a...);
    else if (stream == 2) K<false, 2>::run(a...);
    else K<false, 0>::run(a...);
  }
}

template <bool SR, int S>
struct Nvfp4K {
  static void run(const float* x, size_t n, Nvfp4TensorScale ts, const QuantOptions& o, uint64_t f, float* out) {
    fake_nvfp4<SR, S>(x, n, ts, o, f, out);
  }
};
template <bool SR, int S>
struct Nvfp42dK {
  static void run(const float* x, size_t rows, size_t cols, Nvfp4TensorScale ts, const QuantOptions& o, uint64_t f,
                  const uint64_t* st, float* out) {
    fake_nvfp4_2d<SR, S>(x, rows, cols, ts, o, f, st, out);
  }
};
template <bool SR, int S>
struct MxK {
  static void run(const BlockFormatInfo& fi, const float* x, size_t n, const QuantOptions& o, uint64_t f,
                  const Rht* r, float* out) {
    fake_mx<SR, S>(fi, x, n, o, f, r, out);
  }
};
template <bool SR, int S>
struct Hif4K {
  static void run(const float* x, size_t n, const QuantOptions& o, uint64_t f, const Rht* r, float* out) {
    fake_hif4<SR, S>(x, n, o, f, r, out);
  }
};

}  // namespace

void fake_nvfp4_1x16_avx512(const float* x, size_t n_blocks, Nvfp4TensorScale ts, const QuantOptions& opt,
                            uint64_t first_index, float* out, bool stream) {
  dispatch<Nvfp4K>(opt.rounding == Rounding::Sr, stream_kind(out, stream), x, n_blocks, ts, opt, first_index, out);
}

void fake_nvfp4_2d_avx512(const float* x, size_t rows, size_t cols, Nvfp4TensorScale ts, const QuantOptions& opt,
                          uint64_t first_index, const uint64_t* starts, float* out, bool stream) {
  dispatch<Nvfp42dK>(opt.rounding == Rounding::Sr, stream_kind(out, stream), x, rows, cols, ts, opt, first_index,
                     starts, out);
}

void fake_mx_avx512(const BlockFormatInfo& fi, const float* x, size_t n_blocks, const QuantOptions& opt,
                    uint64_t first_index, const Rht* rht, float* out, bool stream) {
  dispatch<MxK>(opt.rounding == Rounding::Sr, stream_kind(out, stream), fi, x, n_blocks, opt, first_index, rht, out);
}

void fake_hif4_avx512(const float* x, size_t n_blocks, const QuantOptions& opt, uint64_t first_index,
                      const Rht* rht, float* out, bool stream) {
  dispatch<Hif4K>(opt.rounding == Rounding::Sr, stream_kind(out, stream), x, n_blocks, opt, first_index, rht, out);
}

void fake_mx_band_avx512(const BlockFormatInfo& fi, const float* x, size_t rows, size_t cols, size_t i0,
                         const QuantOptions& opt, const Rht* rht, float* out) {
  if (opt.rounding == Rounding::Sr) fake_mx_band<true>(fi, x, rows, cols, i0, opt, rht, out);
  else fake_mx_band<false>(fi, x, rows, cols, i0, opt, rht, out);
}

void fake_hif4_band_avx512(const float* x, size_t rows, size_t cols, size_t i0, const QuantOptions& opt,
                           const Rht* rht, float* out) {
  if (opt.rounding == Rounding::Sr) fake_hif4_band<true>(x, rows, cols, i0, opt, rht, out);
  else fake_hif4_band<false>(x, rows, cols, i0, opt, rht, out);
}

void fake_nvfp4_band_avx512(const float* x, size_t rows, size_t cols, size_t i0, size_t H, Nvfp4TensorScale ts,
                            const QuantOptions& opt, float* out) {
  if (opt.rounding == Rounding::Sr) fake_nvfp4_band<true>(x, rows, cols, i0, H, ts, opt, out);
  else fake_nvfp4_band<false>(x, rows, cols, i0, H, ts, opt, out);
}

float rht_band_amax_avx512(const float* x, size_t cols, size_t i0, const Rht& rht, float* out) {
  return rht_band_amax(x, cols, i0, rht, out);
}

FP4SIM_AVX512 float rht_amax_avx512(const float* x, size_t n, const Rht& rht, float* out) {
  const RhtRegs rr = rht_regs(&rht);
  float m = 0.0f;
  for (size_t i = 0; i < n; i += 256) {
    const size_t k = std::min<size_t>(256, n - i);
    prefetch_ahead(x + i, n - i, 1024);
    rht_group(x + i, k, rr, out + i);
    m = std::max(m, tensor_amax_avx512(out + i, k));
  }
  return m;
}

#undef FP4SIM_AVX512
#undef FP4SIM_AVX512_INLINE
#pragma GCC diagnostic pop

#else  // not x86-64: fake_quantize never selects these

void fake_nvfp4_1x16_avx512(const float*, size_t, Nvfp4TensorScale, const QuantOptions&, uint64_t, float*, bool) {}
void fake_nvfp4_2d_avx512(const float*, size_t, size_t, Nvfp4TensorScale, const QuantOptions&, uint64_t,
                          const uint64_t*, float*, bool) {}
void fake_mx_avx512(const BlockFormatInfo&, const float*, size_t, const QuantOptions&, uint64_t, const Rht*, float*,
                    bool) {}
void fake_hif4_avx512(const float*, size_t, const QuantOptions&, uint64_t, const Rht*, float*, bool) {}
void fake_mx_band_avx512(const BlockFormatInfo&, const float*, size_t, size_t, size_t, const QuantOptions&,
                         const Rht*, float*) {}
void fake_hif4_band_avx512(const float*, size_t, size_t, size_t, const QuantOptions&, const Rht*, float*) {}
void fake_nvfp4_band_avx512(const float*, size_t, size_t, size_t, size_t, Nvfp4TensorScale, const QuantOptions&,
                            float*) {}
float rht_band_amax_avx512(const float*, size_t, size_t, const Rht&, float*) { return 0.0f; }
float rht_amax_avx512(const float*, size_t, const Rht&, float*) { return 0.0f; }

#endif

}  // namespace fp4sim::quant_detail
