// AVX-512 block quantizers: the AVX2 kernels of quant.cpp on sixteen lanes, with the work that
// AVX2 does one block at a time (scale codes, inverses, HiF4 E6M2 codes) done for sixteen blocks
// per vector. Every decision is the one the AVX2 and portable kernels make, on the same FP32
// patterns; test_quant_fast runs all three on every format and option set and compares the bits.
#include "quant_internal.hpp"

#include <bit>
#include <cstring>

#include "fp4sim/philox.hpp"

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

bool cpu_has_avx512() {
  // Called from quant.cpp's static initializers: make sure libgcc's CPU model is filled in first.
  static const bool has = (__builtin_cpu_init(), __builtin_cpu_supports("avx512f")) && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("bmi2");
  return has;
}

namespace {

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

// HiF4 in batches of sixteen blocks: per block the 16 group maxima in one vector (natural order),
// the sixteen blocks' Vmax and E6M2 codes in vectors, then per block the levels as compares
// against the per-code thresholds (E1_8 from pair maxima, E1_16 against t2 or t4) and the element
// codes (hif4_codes_16). The same decisions as quantize_hif4_avx2 and the portable loop.
template <bool SR>
FP4SIM_AVX512 void hif4_blocks(const float* x, size_t n_blocks, const QuantOptions& opt, uint8_t* codes,
                               uint32_t* words, uint64_t first_index) {
  const Hif4RecTable& recs = hif4_recs();
  __m512i lane_pick[4];
  hif4_lane_pick(lane_pick);
  alignas(64) std::array<uint8_t, 16 * 64> rb{};
  alignas(64) uint32_t gm[16][16];
  alignas(64) uint32_t vmax16[16], code16[16];
  for (size_t b0 = 0; b0 < n_blocks; b0 += 16) {
    const size_t nb = std::min<size_t>(16, n_blocks - b0);
    const float* xc = x + b0 * 64;
    prefetch_ahead(xc, (n_blocks - b0) * 64, 4096);
    if constexpr (SR) sr_bytes(opt.seed, opt.stream, first_index + b0 * 64, nb * 64, rb.data());
    hif4_group_maxima_16(xc, nb, gm, vmax16, code16);
    for (size_t i = 0; i < nb; ++i) {
      const size_t b = b0 + i;
      uint8_t* cb = codes + b * 64;
      if (vmax16[i] >= kExpMask) {  // as the portable loop: NaN scale, zero codes
        words[b] = kScaleNaN;
        std::memset(cb, 0, 64);
        continue;
      }
      const uint32_t e6m2 = code16[i];
      const Hif4Levels lv = hif4_levels(_mm512_load_si512(gm[i]), recs, e6m2);
      words[b] = e6m2 | _pext_u32(lv.l2, 0x5555u) << 8 | static_cast<uint32_t>(lv.l3) << 16;
      const __m512i mr = set1(recs.mr[e6m2]);
      const float* xb = xc + 64 * i;
      __m512i cc[4];
      for (int q = 0; q < 4; ++q) {
        const __m512i r = SR ? rbytes_16(rb.data() + 64 * i + 16 * q) : set1(128);
        cc[q] = hif4_codes_16(_mm512_loadu_si512(xb + 16 * q), mr, _mm512_permutexvar_epi32(lane_pick[q], lv.lvl), r);
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
