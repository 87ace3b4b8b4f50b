// Vectorized GEMM paths of the MMA models (AVX2 + FMA, chosen at run time). Each gives the bits of
// the generic model in mma.cpp (gemm_reference); tests/golden/test_mma.cpp compares them
// exhaustively on small cases and on seeded random GEMMs of every kind and model.
//
// Common idea: decode every operand row once into small integers (or exact doubles) and per-block
// scale significands / exponents, so that the per-output work is integer dot products (exact in
// int16 / int32 lanes) plus the model's alignment and rounding on a handful of terms. Outputs
// whose rows hold NaN / Inf codes (or a non-finite C where that matters) go to the generic model.
//
// Why floating-point lanes are exact here (Blackwell): every term of an instruction is an integer of
// at most 20 significant bits times a power of two inside the double range; truncated to the
// alignment grid it is an integer below 2^47 (grouped) / 2^27 (fused), and at most 33 of them sum
// below 2^53, so double (grouped) / FP32 (fused, see trunc_sum32) products, trunc (cvtt) and
// integer sums compute exactly what mma_core.hpp's int64 shifts compute.
#include <immintrin.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "fp4sim/mma_core.hpp"
#include "fp4sim/quant.hpp"
#include "mma_internal.hpp"

#define FP4SIM_AVX2 __attribute__((target("avx2,fma")))

namespace fp4sim::mma_detail {
namespace {

bool have_avx2_fma() {
  static const bool ok = [] {
    __builtin_cpu_init();  // gemm may run from a static initializer, before libgcc's own init
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return ok;
}

// 2^e as a double (-1022 <= e <= 1023) / float (-126 <= e <= 127), built from the bits.
inline double pow2d(int e) { return std::bit_cast<double>(static_cast<uint64_t>(e + 1023) << 52); }
inline float pow2f(int e) { return std::bit_cast<float>(static_cast<uint32_t>(e + 127) << 23); }

inline float epilogue(uint32_t acc, float alpha) {
  const float out = alpha * std::bit_cast<float>(acc);  // the FP32 epilogue: one RN
  return std::isnan(out) ? std::bit_cast<float>(kNaNBits) : out;
}

inline uint32_t c_bits_at(const float* cm, size_t o) { return cm ? std::bit_cast<uint32_t>(cm[o]) : 0u; }

// x = t * 2^lsb (t a nonzero integer, x a normal double) to FP32 toward zero, as from_trunc_sum:
// +-Inf from 2^128 up, subnormals truncated to 2^-149, an underflow to zero gives +0.
inline uint32_t rz_fp32(double x) {
  const uint64_t b = std::bit_cast<uint64_t>(x);
  const uint32_t sign = static_cast<uint32_t>(b >> 63) << 31;
  const int e = static_cast<int>((b >> 52) & 0x7FFu) - 1023;
  if (e >= 128) return sign | 0x7F800000u;
  if (e >= -126) return sign | (static_cast<uint32_t>(e + 127) << 23) | static_cast<uint32_t>((b >> 29) & 0x7FFFFFu);
  const auto m = static_cast<uint32_t>(std::fabs(x) * 0x1p149);  // < 2^23, exact scaling, trunc
  return m ? (sign | m) : 0u;
}

// FP32 bits' exponent as MMA-Sim takes it: unbiased, -126 for subnormals and zero.
inline int exp_of_bits(uint32_t u) {
  const int ef = static_cast<int>((u >> 23) & 0xFFu);
  return ef ? ef - 127 : -126;
}

bool special(const Dy& d) { return d.cls != kClassFinite; }

FP4SIM_AVX2 inline __m256i ld(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// ---- int8 dot products -------------------------------------------------------------------------
// Operands are int8 with |a| * |b| <= 16383, so maddubs' int16 pair sums never saturate.

FP4SIM_AVX2 inline __m256i madd_i8(__m256i a, __m256i b) {
  const __m256i p = _mm256_maddubs_epi16(_mm256_abs_epi8(a), _mm256_sign_epi8(b, a));
  return _mm256_madd_epi16(p, _mm256_set1_epi16(1));  // 8 int32, 4 products each
}

// out[g] = sum of a[16g .. 16g+15] * b[...] for g < K / 16 (K a multiple of 16).
FP4SIM_AVX2 void sums16(const int8_t* a, const int8_t* b, size_t K, int32_t* out) {
  size_t k = 0;
  const __m256i perm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (; k + 64 <= K; k += 64) {
    const __m256i x = madd_i8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + k)),
                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + k)));
    const __m256i y = madd_i8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + k + 32)),
                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + k + 32)));
    __m256i h = _mm256_hadd_epi32(x, y);  // [x01 x23 y01 y23 | x45 x67 y45 y67]
    h = _mm256_hadd_epi32(h, h);           // [g0 g2 g0 g2 | g1 g3 g1 g3]
    h = _mm256_permutevar8x32_epi32(h, perm);  // [g0 g1 g2 g3 ...]
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + k / 16), _mm256_castsi256_si128(h));
  }
  for (; k < K; k += 16) {
    int32_t s = 0;
    for (size_t q = k; q < k + 16; ++q) s += static_cast<int32_t>(a[q]) * b[q];
    out[k / 16] = s;
  }
}

// out[g] = sum over the 64-element group g (K a multiple of 64). Four groups at a time share one
// horizontal-add tree.
FP4SIM_AVX2 void sums64(const int8_t* a, const int8_t* b, size_t K, int32_t* out) {
  size_t k = 0;
  for (; k + 256 <= K; k += 256) {
    __m256i s[4];
    for (int g = 0; g < 4; ++g) {
      const size_t o = k + 64 * static_cast<size_t>(g);
      s[g] = _mm256_add_epi32(madd_i8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + o)),
                                      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + o))),
                              madd_i8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + o + 32)),
                                      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + o + 32))));
    }
    // [s0 s0 s1 s1 | s0 s0 s1 s1] and the same for s2, s3; then [s0 s1 s2 s3 | s0 s1 s2 s3] halves.
    const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(s[0], s[1]), _mm256_hadd_epi32(s[2], s[3]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + k / 64),
                     _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1)));
  }
  for (; k < K; k += 64) {
    const __m256i x = madd_i8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + k)),
                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + k)));
    const __m256i y = madd_i8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + k + 32)),
                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + k + 32)));
    const __m256i s = _mm256_add_epi32(x, y);
    __m128i v = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    v = _mm_hadd_epi32(v, v);
    v = _mm_hadd_epi32(v, v);
    out[k / 64] = _mm_cvtsi128_si32(v);
  }
}

// ---- operand preparation -----------------------------------------------------------------------

// Per-block scale data of one operand: Dy per block and one "row has a NaN / Inf scale" flag.
struct Scales {
  std::vector<Dy> dy;
  std::vector<uint8_t> row_bad;
};

Scales prep_scales(const Ctx& c, const uint32_t* s, size_t rows, size_t nblk) {
  Scales r;
  r.dy.resize(rows * nblk);
  r.row_bad.assign(rows, 0);
  for (size_t i = 0; i < rows; ++i) {
    for (size_t b = 0; b < nblk; ++b) {
      const Dy d = (*c.dy_s)[s[i * nblk + b] & 0xFFu];
      r.dy[i * nblk + b] = d;
      if (special(d)) r.row_bad[i] = 1;
    }
  }
  return r;
}

// True when more than 1/8 of the outputs would go to the generic model one by one (rows with NaN /
// Inf codes): the generic GEMM, which decodes each row once, is then the faster choice.
bool mostly_special(const std::vector<uint8_t>& bad_a, const std::vector<uint8_t>& bad_b, const std::vector<uint8_t>* bad_a2 = nullptr,
                    const std::vector<uint8_t>* bad_b2 = nullptr) {
  auto good = [](const std::vector<uint8_t>& x, const std::vector<uint8_t>* y) {
    size_t n = 0;
    for (size_t i = 0; i < x.size(); ++i) n += !x[i] && !(y && (*y)[i]);
    return static_cast<double>(n) / static_cast<double>(x.size());
  };
  return good(bad_a, bad_a2) * good(bad_b, bad_b2) < 7.0 / 8.0;
}

// HiF4 element as q = +-c << level (value q / 4), as decode_rows builds it.
inline int8_t hif4_q(uint8_t code, uint32_t word, size_t k) {
  const int cm = code & 7;
  const int lv = hif4_level(word, static_cast<int>(k % 64));
  return static_cast<int8_t>(((code & 8) ? -cm : cm) << lv);
}

// ---- Blackwell, grouped kinds (mxf4, mxf4nvf4) -------------------------------------------------

// Per instruction of K = 64 (four 16-element groups): term[4t + g] = s4 * fA * fB (the group sum
// times both scale significands, exact in double) and gmax[t] = max over g of eA + eB.
FP4SIM_AVX2 void grouped_terms(const int8_t* qa, const int8_t* qb, const double* fa, const double* fb,
                               const int32_t* ea, const int32_t* eb, size_t ninstr, double* term, int* gmax) {
  const __m256i perm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (size_t t = 0; t < ninstr; ++t) {
    const size_t k = t * 64;
    const __m256i x = madd_i8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qa + k)),
                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qb + k)));
    const __m256i y = madd_i8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qa + k + 32)),
                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qb + k + 32)));
    __m256i h = _mm256_hadd_epi32(x, y);
    h = _mm256_hadd_epi32(h, h);
    h = _mm256_permutevar8x32_epi32(h, perm);  // [g0 g1 g2 g3 ...]
    const __m256d f = _mm256_mul_pd(_mm256_loadu_pd(fa + 4 * t), _mm256_loadu_pd(fb + 4 * t));
    _mm256_storeu_pd(term + 4 * t, _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(h)), f));
    __m128i e = _mm_add_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ea + 4 * t)),
                              _mm_loadu_si128(reinterpret_cast<const __m128i*>(eb + 4 * t)));
    e = _mm_max_epi32(e, _mm_shuffle_epi32(e, 0x4E));
    e = _mm_max_epi32(e, _mm_shuffle_epi32(e, 0xB1));
    gmax[t] = _mm_cvtsi128_si32(e);
  }
}

// One instruction step of four outputs at once (lanes u = 0..3): what the scalar loop of
// gemm_bw_grouped does per output. acc, its four group terms and C on the alignment grid are
// integers below 2^53 (see the top of the file), so truncation by vroundpd toward zero and double
// adds are exact, as the int64 casts and adds are. rz_fp32 of the normal results from the double's
// bits; a lane that leaves FP32's normal range takes rz_fp32 itself. A lane whose C is already
// infinite keeps it, as bw_grouped_step does, without a test: acc is then that infinity (the
// terms are finite), which rz_fp32 returns.
// term: lane u's four group terms at term + u * stride; gmax: lane u's group exponent max at
// gmax[u * gstride].
FP4SIM_AVX2 inline __m128i bw_grouped_step4(__m128i cb, const double* term, size_t stride, const int* gmax,
                                            size_t gstride, int frac_bits) {
  const __m128i ef = _mm_and_si128(_mm_srli_epi32(cb, 23), _mm_set1_epi32(0xFF));
  const __m128i e = _mm_sub_epi32(_mm_max_epi32(ef, _mm_set1_epi32(1)), _mm_set1_epi32(127));  // exp_of_bits
  const __m128i g = _mm_setr_epi32(gmax[0], gmax[gstride], gmax[2 * gstride], gmax[3 * gstride]);
  const __m128i lsb = _mm_sub_epi32(_mm_max_epi32(e, g), _mm_set1_epi32(frac_bits));
  const __m256i bias = _mm256_set1_epi64x(1023);
  const __m256i l64 = _mm256_cvtepi32_epi64(lsb);
  const __m256d pw = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_sub_epi64(bias, l64), 52));   // 2^-lsb
  const __m256d plsb = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(bias, l64), 52));  // 2^lsb
  constexpr int kRz = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
  __m256d acc = _mm256_round_pd(_mm256_mul_pd(_mm256_cvtps_pd(_mm_castsi128_ps(cb)), pw), kRz);
  // Transpose the four lanes' [g0 g1 g2 g3] into one vector per group.
  const __m256d r0 = _mm256_loadu_pd(term), r1 = _mm256_loadu_pd(term + stride);
  const __m256d r2 = _mm256_loadu_pd(term + 2 * stride), r3 = _mm256_loadu_pd(term + 3 * stride);
  const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
  const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
  const __m256d gv[4] = {_mm256_permute2f128_pd(t0, t2, 0x20), _mm256_permute2f128_pd(t1, t3, 0x20),
                         _mm256_permute2f128_pd(t0, t2, 0x31), _mm256_permute2f128_pd(t1, t3, 0x31)};
  for (const __m256d& v : gv) acc = _mm256_add_pd(acc, _mm256_round_pd(_mm256_mul_pd(v, pw), kRz));
  const __m256d y = _mm256_mul_pd(acc, plsb);  // exact: acc * 2^lsb
  const __m256i b = _mm256_castpd_si256(y);
  const __m256i ed = _mm256_and_si256(_mm256_srli_epi64(b, 52), _mm256_set1_epi64x(0x7FF));
  // FP32 normal range: 1023 - 126 <= ed <= 1023 + 127.
  const __m256i out_of_range = _mm256_or_si256(_mm256_cmpgt_epi64(_mm256_set1_epi64x(897), ed),
                                               _mm256_cmpgt_epi64(ed, _mm256_set1_epi64x(1150)));
  __m256i r = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi64(b, 29), _mm256_set1_epi64x(0x7FFFFF)),
                              _mm256_slli_epi64(_mm256_sub_epi64(ed, _mm256_set1_epi64x(896)), 23));
  r = _mm256_or_si256(r, _mm256_and_si256(_mm256_srli_epi64(b, 32), _mm256_set1_epi64x(0x80000000LL)));
  const __m256i low_dwords = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  const __m256d zero = _mm256_cmp_pd(acc, _mm256_setzero_pd(), _CMP_EQ_OQ);  // acc == 0 gives +0
  __m128i out = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(r, low_dwords));
  out = _mm_andnot_si128(_mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(zero), low_dwords)), out);
  const int odd = _mm256_movemask_pd(_mm256_castsi256_pd(out_of_range)) & ~_mm256_movemask_pd(zero);
  if (odd != 0) [[unlikely]] {
    alignas(32) double yv[4];
    alignas(16) uint32_t ov[4];
    _mm256_store_pd(yv, y);
    _mm_store_si128(reinterpret_cast<__m128i*>(ov), out);
    for (int u = 0; u < 4; ++u)
      if ((odd >> u) & 1) ov[u] = rz_fp32(yv[u]);
    out = _mm_load_si128(reinterpret_cast<const __m128i*>(ov));
  }
  return out;
}

// q = 2 * E2M1 value per code of A and of B (integers in [-12, 12]), from the float tables as
// decode_rows reads them: the grouped kinds' int8 dot products run on these.
void doubled_e2m1_tables(const Ctx& c, std::array<int8_t, 256>& ta, std::array<int8_t, 256>& tb) {
  for (int v = 0; v < 256; ++v) {
    ta[v] = static_cast<int8_t>(c.f_a->v[v & c.mask_a] * 2.0f);
    tb[v] = static_cast<int8_t>(c.f_b->v[v & c.mask_b] * 2.0f);
  }
}

FP4SIM_AVX2 bool gemm_bw_grouped(const Ctx& c, size_t M, size_t N, size_t K, const uint8_t* a,
                                 const uint32_t* sa, const uint8_t* b, const uint32_t* sb,
                                 const float* cm, float alpha, unsigned threads, float* d) {
  if (c.group != 16 || c.k != 64) return false;
  const size_t nblk = K / static_cast<size_t>(c.block);
  std::array<int8_t, 256> ta, tb;
  doubled_e2m1_tables(c, ta, tb);
  std::vector<int8_t> qa(M * K), qb(N * K);
  for (size_t x = 0; x < M * K; ++x) qa[x] = ta[a[x]];
  for (size_t x = 0; x < N * K; ++x) qb[x] = tb[b[x]];
  const Scales xa = prep_scales(c, sa, M, nblk), xb = prep_scales(c, sb, N, nblk);
  if (mostly_special(xa.row_bad, xb.row_bad)) return false;
  // Per 16-element group: the scale significand as a double with the 1/4 of s4 folded in,
  // f = m * 2^(e - mb_s - 1), and the scale exponent e.
  const size_t bpg0 = static_cast<size_t>(c.block / 16);
  auto per_group = [&](const Scales& x, std::vector<double>& f, std::vector<int32_t>& e) {
    f.resize(x.dy.size() * bpg0);
    e.resize(x.dy.size() * bpg0);
    for (size_t q = 0; q < f.size(); ++q) {
      const Dy& y = x.dy[q / bpg0];
      f[q] = std::ldexp(static_cast<double>(y.m), y.e - c.mb_s - 1);
      e[q] = y.e;
    }
  };
  std::vector<double> fa, fb;
  std::vector<int32_t> ga, gb;
  per_group(xa, fa, ga);
  per_group(xb, fb, gb);
  const size_t ng = static_cast<size_t>(c.k / 16);  // groups per instruction
  const size_t ninstr = K / static_cast<size_t>(c.k);
  // Four outputs of a row at a time: their instruction chains are independent, so the serial
  // align / truncate / round latency of one overlaps the others'.
  constexpr size_t kL = 4;
  const size_t ngk = K / 16;  // groups along K
  for_rows(M, threads, [&](size_t r0, size_t r1) FP4SIM_AVX2 {
    std::vector<double> term(kL * ngk);  // s4 * both scale significands: exact
    std::vector<int> gmax(kL * ninstr);  // per instruction: max over its groups of eA + eB
    for (size_t i = r0; i < r1; ++i) {
      for (size_t j0 = 0; j0 < N; j0 += kL) {
        const size_t nl = std::min(kL, N - j0);
        std::array<uint32_t, kL> cb{};
        std::array<bool, kL> live{};
        for (size_t u = 0; u < nl; ++u) {
          const size_t j = j0 + u;
          cb[u] = c_bits_at(cm, i * N + j);
          if (xa.row_bad[i] || xb.row_bad[j] || (cb[u] & 0x7FFFFFFFu) >= 0x7F800000u) {
            d[i * N + j] = epilogue(generic_dot(c, a + i * K, sa + i * nblk, b + j * K, sb + j * nblk, K, cb[u]), alpha);
            continue;
          }
          live[u] = true;
          grouped_terms(qa.data() + i * K, qb.data() + j * K, fa.data() + i * ngk, fb.data() + j * ngk,
                        ga.data() + i * ngk, gb.data() + j * ngk, ninstr, term.data() + u * ngk,
                        gmax.data() + u * ninstr);
        }
        if (nl == kL && live[0] && live[1] && live[2] && live[3]) {
          __m128i cv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(cb.data()));
          for (size_t t = 0; t < ninstr; ++t)
            cv = bw_grouped_step4(cv, term.data() + t * ng, ngk, gmax.data() + t, ninstr, c.frac_bits);
          _mm_storeu_si128(reinterpret_cast<__m128i*>(cb.data()), cv);
          for (size_t u = 0; u < kL; ++u) d[i * N + j0 + u] = epilogue(cb[u], alpha);
          continue;
        }
        for (size_t t = 0; t < ninstr; ++t) {
          for (size_t u = 0; u < nl; ++u) {
            // An Inf result stays (bw_grouped_step returns an infinite C; no NaN scale here).
            if (!live[u] || (cb[u] & 0x7FFFFFFFu) == 0x7F800000u) continue;
            const int lsb = std::max(exp_of_bits(cb[u]), gmax[u * ninstr + t]) - c.frac_bits;
            const double pw = pow2d(-lsb);
            int64_t acc = static_cast<int64_t>(static_cast<double>(std::bit_cast<float>(cb[u])) * pw);
            const double* tt = term.data() + u * ngk + t * ng;
            for (size_t g = 0; g < ng; ++g) acc += static_cast<int64_t>(tt[g] * pw);
            cb[u] = acc == 0 ? 0u : rz_fp32(static_cast<double>(acc) * pow2d(lsb));
          }
        }
        for (size_t u = 0; u < nl; ++u)
          if (live[u]) d[i * N + j0 + u] = epilogue(cb[u], alpha);
      }
    }
  });
  return true;
}

// ---- Blackwell grouped kinds on AVX-512 (VNNI) ------------------------------------------------
// The same bits as gemm_bw_grouped, with the lanes along N instead of K: a tile of 16 outputs of a
// row. Group sums: vpdpbusd of A's four codes (broadcast, biased to u8 by +128) against B's codes
// packed four k per lane; the bias comes out by starting each group at -128 * (B's group sum).
// The per-instruction chain runs on two halves of eight double lanes, with C kept as the double of
// its FP32 value: lsb = max(e_C, gmax) - frac_bits, every term and C scaled by 2^-lsb (vscalefpd),
// truncated (vrndscalepd toward zero) and added (integers below 2^53, exact, see the top of the
// file), scaled back (or, where no truncation cuts anything, the plain sum: bw512_half_exact), and
// cut to FP32 toward zero by clearing the double's low 29 significand bits, which is rz_fp32
// wherever the result is an FP32 normal or zero. Lanes that leave that range (rare) take rz_fp32
// one by one; an infinite lane stays infinite for the rest of the chain, as in bw_grouped_step.

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*: -Wmaybe-uninitialized reports them
// after inlining (a known false positive).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// Rows per block in the AVX-512 kernels, which walk each block over every tile: small blocks keep
// the C and D lines of a block near (a line is one tile of one row); chosen by measurement on the
// training shape of bench_mma (2048 x 128 x 512).
constexpr size_t kRowBlock = 4;
constexpr size_t kRowBlockGrouped = 1;

#define FP4SIM_AVX512 __attribute__((target("avx2,fma,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))

bool have_avx512_vnni() {
  static const bool ok = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512vnni");
  }();
  // FP4SIM_MMA_SIMD=avx2 caps the kernels at AVX2 (read per call, so a test can compare both).
  const char* cap = std::getenv("FP4SIM_MMA_SIMD");
  return ok && !(cap && std::strcmp(cap, "avx2") == 0);
}

// Ends a 16-output tile of row i: D = alpha * out with NaN canonical into the tile's live lanes,
// then the lanes the vector chain may not answer — `slow` (C not finite), every lane of a row of A
// with a NaN / Inf element or scale, the lanes of such rows of B — again through `redo(j)`, the
// generic model of output (i, j).
template <class Redo>
FP4SIM_AVX512 inline void store_tile(__m512 out, float alpha, float* d_row, size_t j0, size_t nl, __mmask16 lanes,
                                     uint32_t slow, bool bad_a_row, const std::vector<uint8_t>& bad_b, Redo&& redo) {
  out = _mm512_mul_ps(out, _mm512_set1_ps(alpha));
  out = _mm512_mask_mov_ps(out, _mm512_cmp_ps_mask(out, out, _CMP_UNORD_Q),
                           _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int32_t>(kNaNBits))));
  _mm512_mask_storeu_ps(d_row + j0, lanes, out);
  if (bad_a_row) slow = lanes;
  for (size_t u = 0; u < nl; ++u)
    if (bad_b[j0 + u]) slow |= 1u << u;
  for (size_t u = 0; u < nl; ++u)
    if ((slow >> u) & 1u) d_row[j0 + u] = redo(j0 + u);
}

// B packed for 16-output tiles: codes four k per lane, and per (tile, group) the bias correction,
// the scale factor f (s * fA * fB is the group term) and the scale exponent, per lane.
struct BwTiles {
  size_t ntile = 0;
  std::vector<uint8_t> q;    // [tile][k / 4][16 lanes][4]
  std::vector<int32_t> corr; // [tile][group][16]: -128 * sum of the group's B codes
  std::vector<double> f;     // [tile][group][16]
  std::vector<int32_t> e;    // [tile][group][16]
};

// Half h (lanes 8h .. 8h+7) of one instruction: C (double of its FP32 value) and its exponent in,
// the next C and exponent out. s: the four group sums (16 int32 lanes); fa / ea: A's group factors.
FP4SIM_AVX512 inline void bw512_half(__m512d& cv, __m512d& ev, const __m512i* s, int h, const double* fa,
                                     const double* fbt, __m512d gmaxd, __m512d fracd) {
  constexpr int kRz = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
  const __m512d nl = _mm512_sub_pd(fracd, _mm512_max_pd(ev, gmaxd));  // -lsb
  __m512d acc = _mm512_roundscale_pd(_mm512_scalef_pd(cv, nl), kRz);
  __m512d tt[4];
  for (int g = 0; g < 4; ++g) {
    const __m256i sh = h ? _mm512_extracti64x4_epi64(s[g], 1) : _mm512_castsi512_si256(s[g]);
    const __m512d f = _mm512_mul_pd(_mm512_set1_pd(fa[g]), _mm512_loadu_pd(fbt + 16 * g + 8 * h));
    tt[g] = _mm512_roundscale_pd(_mm512_scalef_pd(_mm512_mul_pd(_mm512_cvtepi32_pd(sh), f), nl), kRz);
  }
  acc = _mm512_add_pd(_mm512_add_pd(acc, tt[0]), _mm512_add_pd(tt[1], _mm512_add_pd(tt[2], tt[3])));
  acc = _mm512_add_pd(acc, _mm512_setzero_pd());  // an exact zero is +0
  cv = _mm512_scalef_pd(acc, _mm512_sub_pd(_mm512_setzero_pd(), nl));  // acc * 2^lsb, exact
  ev = _mm512_getexp_pd(cv);
}

// The same step where no truncation cuts anything: every group term's lowest bit and C's lie on or
// above the grid (checked by the caller), so acc * 2^lsb is the exact sum C + the four terms.
FP4SIM_AVX512 inline void bw512_half_exact(__m512d& cv, __m512d& ev, const __m512i* s, int h, const double* fa,
                                           const double* fbt) {
  __m512d tt[4];
  for (int g = 0; g < 4; ++g) {
    const __m256i sh = h ? _mm512_extracti64x4_epi64(s[g], 1) : _mm512_castsi512_si256(s[g]);
    const __m512d f = _mm512_mul_pd(_mm512_set1_pd(fa[g]), _mm512_loadu_pd(fbt + 16 * g + 8 * h));
    tt[g] = _mm512_mul_pd(_mm512_cvtepi32_pd(sh), f);
  }
  const __m512d acc = _mm512_add_pd(_mm512_add_pd(cv, tt[0]), _mm512_add_pd(tt[1], _mm512_add_pd(tt[2], tt[3])));
  cv = _mm512_add_pd(acc, _mm512_setzero_pd());  // an exact zero is +0
  ev = _mm512_getexp_pd(cv);
}

// Lanes of half h whose result y left FP32's normal range (rare): rz_fp32 one by one into cv / ev
// (already converted for the other lanes). An infinite lane runs on +0 from here on and is
// recorded in inf_lanes / inf_neg: it stays infinite (the terms are finite).
[[gnu::noinline]] FP4SIM_AVX512 void bw512_fix_lanes(__m512d y, __mmask8 rare, int h, __m512d& cv, __m512d& ev,
                                                     uint32_t& inf_lanes, uint32_t& inf_neg) {
  alignas(64) double yv[8], cn[8], e[8];
  _mm512_store_pd(yv, y);
  _mm512_store_pd(cn, cv);
  _mm512_store_pd(e, ev);
  for (int u = 0; u < 8; ++u) {
    if (!((rare >> u) & 1u)) continue;
    const uint32_t bit = 1u << (8 * h + u);
    const uint32_t r = rz_fp32(yv[u]);
    if ((r & 0x7FFFFFFFu) == 0x7F800000u) {
      if (!(inf_lanes & bit)) inf_neg |= (r >> 31) ? bit : 0u;
      inf_lanes |= bit;
      cn[u] = 0.0;
      e[u] = -126.0;
    } else {
      cn[u] = static_cast<double>(std::bit_cast<float>(r));
      e[u] = exp_of_bits(r);
    }
  }
  cv = _mm512_load_pd(cn);
  ev = _mm512_load_pd(e);
}

FP4SIM_AVX512 bool gemm_bw_grouped512(const Ctx& c, size_t M, size_t N, size_t K, const uint8_t* a,
                                      const uint32_t* sa, const uint8_t* b, const uint32_t* sb,
                                      const float* cm, float alpha, unsigned threads, float* d) {
  if (c.group != 16 || c.k != 64) return false;
  const size_t nblk = K / static_cast<size_t>(c.block);
  std::array<int8_t, 256> ta, tb;
  doubled_e2m1_tables(c, ta, tb);
  // Scale tables by code: f = m * 2^(e - mb_s - 1) (the 1/4 of q * q folded in), e, NaN / Inf.
  std::array<double, 256> sf{};
  std::array<int32_t, 256> se{};
  std::array<uint8_t, 256> sbad{};
  for (int v = 0; v < 256; ++v) {
    const Dy& y = (*c.dy_s)[v];
    sf[v] = std::ldexp(static_cast<double>(y.m), y.e - c.mb_s - 1);
    se[v] = y.e;
    sbad[v] = special(y) ? 1 : 0;
  }
  std::vector<uint8_t> bad_a(M, 0), bad_b(N, 0);
  for (size_t x = 0; x < M * nblk; ++x) bad_a[x / nblk] |= sbad[sa[x] & 0xFFu];
  for (size_t x = 0; x < N * nblk; ++x) bad_b[x / nblk] |= sbad[sb[x] & 0xFFu];
  if (mostly_special(bad_a, bad_b)) return false;
  const size_t ngk = K / 16, ninstr = K / 64, bpg = static_cast<size_t>(c.block / 16);
  // Codes to q (or q + 128) by a 16-entry byte shuffle where the element format has at most four
  // code bits, else by the table.
  auto map_codes = [&](const uint8_t* in, size_t n, const std::array<int8_t, 256>& tab, uint8_t mask, int8_t add,
                       uint8_t* out) FP4SIM_AVX512 {
    size_t x = 0;
    if (mask <= 0x0F) {
      alignas(16) int8_t t16[16];
      for (int v = 0; v < 16; ++v) t16[v] = static_cast<int8_t>(tab[v] + add);
      const __m512i tv = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(t16)));
      const __m512i mv = _mm512_set1_epi8(static_cast<char>(mask));
      for (; x + 64 <= n; x += 64)
        _mm512_storeu_si512(out + x, _mm512_shuffle_epi8(tv, _mm512_and_si512(_mm512_loadu_si512(in + x), mv)));
    }
    for (; x < n; ++x) out[x] = static_cast<uint8_t>(tab[in[x]] + add);
  };
  // A: q + 128 as u8 (vpdpbusd's unsigned operand), f and e per group.
  std::vector<uint8_t> ua(M * K);
  map_codes(a, M * K, ta, c.mask_a, static_cast<int8_t>(-128), ua.data());
  std::vector<double> fa(M * ngk);
  std::vector<int32_t> ga(M * ngk);
  for (size_t q = 0; q < M * ngk; ++q) {
    const uint32_t code = sa[q / bpg] & 0xFFu;
    fa[q] = sf[code];
    ga[q] = se[code];
  }
  BwTiles bt;
  bt.ntile = (N + 15) / 16;
  std::vector<uint8_t> qb(N * K);
  map_codes(b, N * K, tb, c.mask_b, 0, qb.data());
  bt.q.assign(bt.ntile * K * 16, 0);
  bt.corr.assign(bt.ntile * ngk * 16, 0);
  bt.f.assign(bt.ntile * ngk * 16, 0.0);
  bt.e.assign(bt.ntile * ngk * 16, -126);
  for (size_t j = 0; j < N; ++j) {
    const size_t tile = j / 16, lane = j % 16;
    const uint8_t* row = qb.data() + j * K;
    uint8_t* dst = bt.q.data() + tile * K * 16 + lane * 4;
    for (size_t k4 = 0; k4 < K / 4; ++k4) std::memcpy(dst + k4 * 64, row + 4 * k4, 4);
    for (size_t g = 0; g < ngk; ++g) {
      int32_t sum = 0;
      for (size_t k = 16 * g; k < 16 * g + 16; ++k) sum += static_cast<int8_t>(row[k]);
      const uint32_t code = sb[j * nblk + g / bpg] & 0xFFu;
      const size_t o = (tile * ngk + g) * 16 + lane;
      bt.corr[o] = -128 * sum;
      bt.f[o] = sf[code];
      bt.e[o] = se[code];
    }
  }
  for_rows(M, threads, [&](size_t r0, size_t r1) FP4SIM_AVX512 {
    const __m512d fracd = _mm512_set1_pd(static_cast<double>(c.frac_bits));
    const __m512d m126 = _mm512_set1_pd(-126.0);
    const __m512i spanv = _mm512_set1_epi32(c.frac_bits - 2 * c.mb_s - 2), cwin = _mm512_set1_epi32(c.frac_bits - 23);
    for (size_t ib = r0; ib < r1; ib += kRowBlockGrouped)
    for (size_t tile = 0; tile < bt.ntile; ++tile) {
      const size_t j0 = tile * 16, nl = std::min<size_t>(16, N - j0);
      const __mmask16 lanes = static_cast<__mmask16>((1u << nl) - 1u);
      const uint8_t* bq = bt.q.data() + tile * K * 16;
      for (size_t i = ib; i < std::min(r1, ib + kRowBlockGrouped); ++i) {
        // C lanes; a non-finite C takes the generic model below (its lane runs on +0 here).
        __m512 cf = cm ? _mm512_maskz_loadu_ps(lanes, cm + i * N + j0) : _mm512_setzero_ps();
        const __mmask16 cbad = _mm512_cmp_ps_mask(_mm512_abs_ps(cf), _mm512_set1_ps(std::numeric_limits<float>::max()),
                                                  _CMP_NLE_UQ);
        cf = _mm512_mask_mov_ps(cf, cbad, _mm512_setzero_ps());
        __m512d cv0 = _mm512_cvtps_pd(_mm512_castps512_ps256(cf));
        __m512d cv1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(cf), 1)));
        __m512d ev0 = _mm512_max_pd(_mm512_getexp_pd(cv0), m126), ev1 = _mm512_max_pd(_mm512_getexp_pd(cv1), m126);
        uint32_t inf_lanes = 0, inf_neg = 0;
        const uint8_t* ar = ua.data() + i * K;
        for (size_t t = 0; t < ninstr; ++t) {
          const size_t g0 = 4 * t;
          __m512i s[4];
          __m512i emax = _mm512_set1_epi32(std::numeric_limits<int32_t>::min());
          __m512i emin = _mm512_set1_epi32(std::numeric_limits<int32_t>::max());
          for (int g = 0; g < 4; ++g) {
            const size_t gg = g0 + static_cast<size_t>(g);
            __m512i acc = _mm512_loadu_si512(bt.corr.data() + (tile * ngk + gg) * 16);
            for (size_t q = 0; q < 4; ++q) {
              const size_t k4 = gg * 4 + q;
              int32_t a4;
              std::memcpy(&a4, ar + 4 * k4, 4);
              acc = _mm512_dpbusd_epi32(acc, _mm512_set1_epi32(a4), _mm512_loadu_si512(bq + k4 * 64));
            }
            s[g] = acc;
            const __m512i eg = _mm512_add_epi32(_mm512_set1_epi32(ga[i * ngk + gg]),
                                                _mm512_loadu_si512(bt.e.data() + (tile * ngk + gg) * 16));
            emax = _mm512_max_epi32(emax, eg);
            emin = _mm512_min_epi32(emin, eg);
          }
          // No truncation where lsb = max(e_C, gmax) - frac_bits lies at or below every group term's
          // lowest bit (2^(eA + eB - 2 mb_s - 2)) and C's (2^(e_C - 23)): gmax - emin <= span,
          // e_C <= emin + span and e_C >= gmax - (frac_bits - 23).
          const __mmask16 spread_ok = _mm512_cmp_epi32_mask(_mm512_sub_epi32(emax, emin), spanv, _MM_CMPINT_LE);
          const __m512i elo = _mm512_sub_epi32(emax, cwin), ehi = _mm512_add_epi32(emin, spanv);
          const double* fat = fa.data() + i * ngk + g0;
          const double* fbt = bt.f.data() + (tile * ngk + g0) * 16;
          // The two halves as named locals (an array indexed by h kept them in memory).
          auto half = [&](__m512d& cvh, __m512d& evh, int h) FP4SIM_AVX512 {
            const __m256i eh = h ? _mm512_extracti64x4_epi64(emax, 1) : _mm512_castsi512_si256(emax);
            const __m256i lh = h ? _mm512_extracti64x4_epi64(elo, 1) : _mm512_castsi512_si256(elo);
            const __m256i hh = h ? _mm512_extracti64x4_epi64(ehi, 1) : _mm512_castsi512_si256(ehi);
            __mmask8 ok = static_cast<__mmask8>(spread_ok >> (8 * h));
            ok = _mm512_mask_cmp_pd_mask(ok, evh, _mm512_cvtepi32_pd(lh), _CMP_GE_OQ);
            ok = _mm512_mask_cmp_pd_mask(ok, evh, _mm512_cvtepi32_pd(hh), _CMP_LE_OQ);
            if (ok == 0xFF) bw512_half_exact(cvh, evh, s, h, fat, fbt);
            else bw512_half(cvh, evh, s, h, fat, fbt, _mm512_cvtepi32_pd(eh), fracd);
            // Outside FP32's normal range (and not zero): rz_fp32 lane by lane.
            const __mmask8 rare = _mm512_cmp_pd_mask(evh, _mm512_set1_pd(127.0), _CMP_GT_OQ) |
                                  (_mm512_cmp_pd_mask(evh, m126, _CMP_LT_OQ) &
                                   _mm512_cmp_pd_mask(cvh, _mm512_setzero_pd(), _CMP_NEQ_OQ));
            const __m512d y = cvh;
            // To FP32 toward zero where y is an FP32 normal: the double's low 29 significand bits off.
            cvh = _mm512_and_pd(cvh, _mm512_castsi512_pd(_mm512_set1_epi64(static_cast<int64_t>(0xFFFFFFFFE0000000ull))));
            evh = _mm512_max_pd(evh, m126);
            if (rare) [[unlikely]] bw512_fix_lanes(y, rare, h, cvh, evh, inf_lanes, inf_neg);
          };
          half(cv0, ev0, 0);
          half(cv1, ev1, 1);
        }
        const __m256 lo = _mm512_cvtpd_ps(cv0), hi = _mm512_cvtpd_ps(cv1);  // exact: FP32 values
        __m512 out = _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
        if (inf_lanes) [[unlikely]] {
          const __m512i inf = _mm512_set1_epi32(0x7F800000);
          out = _mm512_mask_mov_ps(out, static_cast<__mmask16>(inf_lanes), _mm512_castsi512_ps(inf));
          out = _mm512_mask_mov_ps(out, static_cast<__mmask16>(inf_neg),
                                   _mm512_castsi512_ps(_mm512_or_si512(inf, _mm512_set1_epi32(INT32_MIN))));
        }
        store_tile(out, alpha, d + i * N, j0, nl, lanes, cbad, bad_a[i], bad_b, [&](size_t j) {
          return epilogue(generic_dot(c, a + i * K, sa + i * nblk, b + j * K, sb + j * nblk, K, c_bits_at(cm, i * N + j)),
                          alpha);
        });
      }
    }
  });
  return true;
}

// ---- AscendHif4 (rounding every group) on AVX-512 (VNNI) ---------------------------------------
// The same bits as gemm_ascend with the lanes along N: a tile of 16 outputs of a row, each lane
// one FP32 accumulator. The 64-element group sums are vpdpbusd sums as in the grouped Blackwell
// kernel; P = s * mA * mB (below 2^22) is exact in FP32 and P * 2^e (vscalefps: one RN, as the
// scalar ldexp / multiply) is the group term; the adds stay in group order, one RN each.

// HiF4 codes of `rows` rows of K to q + add (q = +-c << level, as hif4_q), 64 at a time: the base
// +-c by a byte shuffle, then doubled under the byte masks of the word's two level bits.
FP4SIM_AVX512 void hif4_decode(const uint8_t* codes, const uint32_t* words, size_t rows, size_t K, uint8_t mask,
                               uint8_t add, uint8_t* out) {
  const size_t ng = K / 64;
  if (mask > 0x0F) {
    for (size_t r = 0; r < rows; ++r)
      for (size_t k = 0; k < K; ++k)
        out[r * K + k] = static_cast<uint8_t>(hif4_q(codes[r * K + k] & mask, words[r * ng + k / 64], k) + add);
    return;
  }
  std::array<uint64_t, 256> by8{};  // bit b -> byte b (bits 8b .. 8b+7)
  std::array<uint32_t, 256> by4{};  // bit b -> nibble b
  for (uint32_t v = 0; v < 256; ++v)
    for (int bit = 0; bit < 8; ++bit)
      if ((v >> bit) & 1u) {
        by8[v] |= uint64_t{0xFF} << (8 * bit);
        by4[v] |= uint32_t{0xF} << (4 * bit);
      }
  alignas(16) int8_t t16[16];
  for (int v = 0; v < 16; ++v) t16[v] = static_cast<int8_t>((v & 8) ? -(v & 7) : (v & 7));
  const __m512i tv = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(t16)));
  const __m512i mv = _mm512_set1_epi8(static_cast<char>(mask)), av = _mm512_set1_epi8(static_cast<char>(add));
  for (size_t x = 0; x < rows * ng; ++x) {
    const uint32_t w = words[x];
    const __mmask64 l1 = by8[(w >> 8) & 0xFFu];
    const __mmask64 l2 = by4[(w >> 16) & 0xFFu] | (static_cast<uint64_t>(by4[(w >> 24) & 0xFFu]) << 32);
    __m512i q = _mm512_shuffle_epi8(tv, _mm512_and_si512(_mm512_loadu_si512(codes + 64 * x), mv));
    q = _mm512_mask_add_epi8(q, l1, q, q);
    q = _mm512_mask_add_epi8(q, l2, q, q);
    _mm512_storeu_si512(out + 64 * x, _mm512_add_epi8(q, av));
  }
}

FP4SIM_AVX512 bool gemm_ascend512(const Ctx& c, size_t M, size_t N, size_t K, const uint8_t* a,
                                  const uint32_t* sa, const uint8_t* b, const uint32_t* sb, const float* cm,
                                  float alpha, unsigned threads, float* d) {
  if (c.hif4_round_groups != 1 || c.group != 64 || c.block != 64) return false;
  const size_t ng = K / 64;
  std::vector<uint8_t> bad_a(M, 0), bad_b(N, 0);
  for (size_t x = 0; x < M * ng; ++x) bad_a[x / ng] |= special((*c.dy_s)[sa[x] & 0xFFu]) ? 1 : 0;
  for (size_t x = 0; x < N * ng; ++x) bad_b[x / ng] |= special((*c.dy_s)[sb[x] & 0xFFu]) ? 1 : 0;
  if (mostly_special(bad_a, bad_b)) return false;
  // A: q + 128 as u8; per group the scale significand and exponent as floats.
  std::vector<uint8_t> ua(M * K);
  std::vector<float> ma(M * ng), ea(M * ng);
  hif4_decode(a, sa, M, K, c.mask_a, 128, ua.data());
  for (size_t q = 0; q < M * ng; ++q) {
    const Dy& y = (*c.dy_s)[sa[q] & 0xFFu];
    ma[q] = static_cast<float>(y.m);
    ea[q] = static_cast<float>(y.e - 8);  // value = q / 4 per element, scale m * 2^(e - mb_s) each
  }
  const size_t ntile = (N + 15) / 16;
  std::vector<uint8_t> bq(ntile * K * 16, 0);
  std::vector<int32_t> corr(ntile * ng * 16, 0);
  std::vector<float> mb(ntile * ng * 16, 0.0f), eb(ntile * ng * 16, 0.0f);
  std::vector<uint8_t> qb(N * K);
  hif4_decode(b, sb, N, K, c.mask_b, 0, qb.data());
  for (size_t j = 0; j < N; ++j) {
    const size_t tile = j / 16, lane = j % 16;
    const uint8_t* row = qb.data() + j * K;
    uint8_t* dst = bq.data() + tile * K * 16 + lane * 4;
    for (size_t k4 = 0; k4 < K / 4; ++k4) std::memcpy(dst + k4 * 64, row + 4 * k4, 4);
    for (size_t k = 0; k < K; ++k) corr[(tile * ng + k / 64) * 16 + lane] -= 128 * static_cast<int8_t>(row[k]);
    for (size_t g = 0; g < ng; ++g) {
      const Dy& y = (*c.dy_s)[sb[j * ng + g] & 0xFFu];
      mb[(tile * ng + g) * 16 + lane] = static_cast<float>(y.m);
      eb[(tile * ng + g) * 16 + lane] = static_cast<float>(y.e);
    }
  }
  for_rows(M, threads, [&](size_t r0, size_t r1) FP4SIM_AVX512 {
    for (size_t ib = r0; ib < r1; ib += kRowBlock)
    for (size_t tile = 0; tile < ntile; ++tile) {
      const size_t j0 = tile * 16, nl = std::min<size_t>(16, N - j0);
      const __mmask16 lanes = static_cast<__mmask16>((1u << nl) - 1u);
      const uint8_t* bt = bq.data() + tile * K * 16;
      for (size_t i = ib; i < std::min(r1, ib + kRowBlock); ++i) {
        __m512 acc = cm ? _mm512_maskz_loadu_ps(lanes, cm + i * N + j0) : _mm512_setzero_ps();
        const __mmask16 cnan = _mm512_cmp_ps_mask(acc, acc, _CMP_UNORD_Q);
        const uint8_t* ar = ua.data() + i * K;
        for (size_t g = 0; g < ng; ++g) {
          __m512i s = _mm512_loadu_si512(corr.data() + (tile * ng + g) * 16);
          for (size_t k4 = 16 * g; k4 < 16 * g + 16; ++k4) {
            int32_t a4;
            std::memcpy(&a4, ar + 4 * k4, 4);
            s = _mm512_dpbusd_epi32(s, _mm512_set1_epi32(a4), _mm512_loadu_si512(bt + k4 * 64));
          }
          const size_t o = (tile * ng + g) * 16;
          const __m512 p = _mm512_mul_ps(_mm512_cvtepi32_ps(s),
                                         _mm512_mul_ps(_mm512_set1_ps(ma[i * ng + g]), _mm512_loadu_ps(mb.data() + o)));
          const __m512 e = _mm512_add_ps(_mm512_set1_ps(ea[i * ng + g]), _mm512_loadu_ps(eb.data() + o));
          acc = _mm512_add_ps(acc, _mm512_scalef_ps(p, e));  // the one RN of this group
        }
        store_tile(acc, alpha, d + i * N, j0, nl, lanes, cnan, bad_a[i], bad_b, [&](size_t j) {
          return epilogue(generic_dot(c, a + i * K, sa + i * ng, b + j * K, sb + j * ng, K, c_bits_at(cm, i * N + j)),
                          alpha);
        });
      }
    }
  });
  return true;
}

#pragma GCC diagnostic pop

// ---- Blackwell, fused kind (mxf8f6f4) ----------------------------------------------------------

struct FusedOperand {
  std::vector<float> v;        // element values (0 for NaN / Inf codes)
  std::vector<int16_t> e;      // MMA-Sim exponents (-126 for zeros)
  std::vector<uint8_t> bad;    // per (row, instruction): a NaN / Inf element or scale
  std::vector<Dy> sc;          // per (row, block)
};

FusedOperand prep_fused(const Ctx& c, const std::array<Dy, 256>& dy, uint8_t mask, int mb, const uint8_t* codes,
                        const uint32_t* s, size_t rows, size_t K) {
  FusedOperand o;
  const size_t nblk = K / static_cast<size_t>(c.block);
  const size_t ninstr = K / static_cast<size_t>(c.k);
  std::array<float, 256> tv{};
  for (int v = 0; v < 256; ++v) {
    const Dy& x = dy[v & mask];
    tv[v] = special(x) ? 0.0f : std::ldexp(static_cast<float>(x.m), x.e - mb);
  }
  o.v.resize(rows * K);
  o.e.resize(rows * K);
  o.bad.assign(rows * ninstr, 0);
  o.sc.resize(rows * nblk);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t k = 0; k < K; ++k) {
      const uint8_t code = codes[r * K + k];
      const Dy& x = dy[code & mask];
      o.v[r * K + k] = tv[code];
      o.e[r * K + k] = x.e;
      if (special(x)) o.bad[r * ninstr + k / static_cast<size_t>(c.k)] = 1;
    }
    for (size_t b = 0; b < nblk; ++b) {
      const Dy x = (*c.dy_s)[s[r * nblk + b] & 0xFFu];
      o.sc[r * nblk + b] = x;
      if (special(x)) o.bad[r * ninstr + b * static_cast<size_t>(c.block) / static_cast<size_t>(c.k)] = 1;
    }
  }
  return o;
}

// max(a[k] + b[k]) over 32 int16 exponents.
FP4SIM_AVX2 inline int max_esum32(const int16_t* a, const int16_t* b) {
  const __m256i s0 = _mm256_add_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a)),
                                      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b)));
  const __m256i s1 = _mm256_add_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 16)),
                                      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16)));
  __m256i m = _mm256_max_epi16(s0, s1);
  __m128i v = _mm_max_epi16(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
  v = _mm_max_epi16(v, _mm_shuffle_epi32(v, 0x4E));
  v = _mm_max_epi16(v, _mm_shuffle_epi32(v, 0xB1));
  v = _mm_max_epi16(v, _mm_shufflelo_epi16(v, 0xB1));
  return static_cast<int16_t>(_mm_extract_epi16(v, 0));
}

// Sum of trunc(pa[k] * pb[k] * 2^pe) over 32 products, in FP32 lanes. Exact: pa * pb has at most
// 8 significant bits in [2^-32, 2^32), so every product that truncates to a nonzero integer
// (|.| >= 1) is exact in FP32, and |.| < 2^27 (the grid keeps 25 bits below the largest product):
// 4 per int32 lane stay below 2^29. A nonzero product needs pe <= 53 (exponents >= -28), and for
// pe < -126 every |.| < 2^-94: both ends give 0 without multiplying.
FP4SIM_AVX2 inline int64_t trunc_sum32(const float* pa, const float* pb, int pe) {
  if (pe < -126 || pe > 127) return 0;
  const __m256 vpw = _mm256_set1_ps(pow2f(pe));
  __m256i acc = _mm256_setzero_si256();
  for (int k = 0; k < 32; k += 8) {
    const __m256 p = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(pa + k), _mm256_loadu_ps(pb + k)), vpw);
    acc = _mm256_add_epi32(acc, _mm256_cvttps_epi32(p));
  }
  // Eight lanes below 2^29 each: their total may pass 2^31, so it is taken in int64 lanes.
  const __m256i w = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(acc)),
                                     _mm256_cvtepi32_epi64(_mm256_extracti128_si256(acc, 1)));
  __m128i v = _mm_add_epi64(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
  v = _mm_add_epi64(v, _mm_unpackhi_epi64(v, v));
  return _mm_cvtsi128_si64(v);
}

// The kind-config shape bw_fused_step reads.
struct StepCfg {
  int k, group, block, frac_bits, mb_a, mb_b, mb_s;
};

FP4SIM_AVX2 bool gemm_bw_fused(const Ctx& c, size_t M, size_t N, size_t K, const uint8_t* a,
                               const uint32_t* sa, const uint8_t* b, const uint32_t* sb, const float* cm,
                               float alpha, unsigned threads, float* d) {
  if (c.k != 32 || c.block != 32) return false;
  const FusedOperand oa = prep_fused(c, *c.dy_a, c.mask_a, c.mb_a, a, sa, M, K);
  const FusedOperand ob = prep_fused(c, *c.dy_b, c.mask_b, c.mb_b, b, sb, N, K);
  const size_t ninstr = K / 32;
  const StepCfg sc{c.k, c.group, c.block, c.frac_bits, c.mb_a, c.mb_b, c.mb_s};
  // The products' grid lsb of every instruction does not depend on C: it is computed first
  // (independent, vectorized). The truncated product sum is taken once per instruction on the
  // grid the chain settles (the products' or, once the accumulator outgrows them, which is most
  // of a long K, C's). Four outputs of a row at a time, as in the grouped kinds.
  constexpr size_t kL = 4;
  for_rows(M, threads, [&](size_t r0, size_t r1) FP4SIM_AVX2 {
    std::array<Dy, 32> da{}, db{};
    std::vector<int> lsb0(kL * ninstr);  // es + max(eA + eB) - frac_bits
    for (size_t i = r0; i < r1; ++i) {
      for (size_t j0 = 0; j0 < N; j0 += kL) {
        const size_t nl = std::min(kL, N - j0);
        std::array<uint32_t, kL> cb{};
        for (size_t u = 0; u < nl; ++u) {
          const size_t j = j0 + u;
          cb[u] = c_bits_at(cm, i * N + j);
          for (size_t t = 0; t < ninstr; ++t) {
            const size_t k0 = t * 32;
            const int es = oa.sc[i * ninstr + t].e + ob.sc[j * ninstr + t].e;
            lsb0[u * ninstr + t] = es + max_esum32(oa.e.data() + i * K + k0, ob.e.data() + j * K + k0) - c.frac_bits;
          }
        }
        for (size_t t = 0; t < ninstr; ++t) {
          const size_t k0 = t * 32;
          for (size_t u = 0; u < nl; ++u) {
            const size_t j = j0 + u;
            if (oa.bad[i * ninstr + t] || ob.bad[j * ninstr + t] || (cb[u] & 0x7FFFFFFFu) >= 0x7F800000u) {
              // The generic instruction core for NaN / Inf operands.
              for (size_t q = 0; q < 32; ++q) {
                da[q] = (*c.dy_a)[a[i * K + k0 + q] & c.mask_a];
                db[q] = (*c.dy_b)[b[j * K + k0 + q] & c.mask_b];
              }
              cb[u] = bw_fused_step(sc, da.data(), db.data(), oa.sc[i * ninstr + t], ob.sc[j * ninstr + t], cb[u]);
              continue;
            }
            const int lsb = std::max(lsb0[u * ninstr + t], exp_of_bits(cb[u]) - c.frac_bits);  // C may set the grid
            const int es = oa.sc[i * ninstr + t].e + ob.sc[j * ninstr + t].e;
            int64_t acc = trunc_sum32(oa.v.data() + i * K + k0, ob.v.data() + j * K + k0, es - lsb);
            acc += static_cast<int64_t>(static_cast<double>(std::bit_cast<float>(cb[u])) * pow2d(-lsb));
            cb[u] = acc == 0 ? 0u : rz_fp32(static_cast<double>(acc) * pow2d(lsb));
          }
        }
        for (size_t u = 0; u < nl; ++u) d[i * N + j0 + u] = epilogue(cb[u], alpha);
      }
    }
  });
  return true;
}

// ---- Blackwell fused kind (mxf8f6f4) on AVX-512 -------------------------------------------------
// The same bits as gemm_bw_fused with the lanes along N: a tile of 16 outputs of a row. Per
// instruction and lane: lsb = max(es + max_k(eA + eB), e_C) - frac_bits, then the products
// truncated on that grid in FP32 lanes (exact, see trunc_sum32) summed four at a time in int32
// and then in int64, plus C truncated on the grid, and the sum cut to FP32 toward zero
// (vcvtpd2ps {rz}; rz_fp32 lane by lane outside FP32's normal range). Outputs with NaN / Inf
// elements, scales or C, and those that overflow, take the generic model.

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

FP4SIM_AVX512 bool gemm_bw_fused512(const Ctx& c, size_t M, size_t N, size_t K, const uint8_t* a,
                                    const uint32_t* sa, const uint8_t* b, const uint32_t* sb, const float* cm,
                                    float alpha, unsigned threads, float* d) {
  if (c.k != 32 || c.block != 32) return false;
  const FusedOperand oa = prep_fused(c, *c.dy_a, c.mask_a, c.mb_a, a, sa, M, K);
  const FusedOperand ob = prep_fused(c, *c.dy_b, c.mask_b, c.mb_b, b, sb, N, K);
  const size_t ninstr = K / 32;
  std::vector<uint8_t> bad_a(M, 0), bad_b(N, 0);
  for (size_t x = 0; x < M * ninstr; ++x) bad_a[x / ninstr] |= oa.bad[x];
  for (size_t x = 0; x < N * ninstr; ++x) bad_b[x / ninstr] |= ob.bad[x];
  if (mostly_special(bad_a, bad_b)) return false;
  // B per tile: values and exponents [tile][k][16], scale exponents [tile][instr][16].
  const size_t ntile = (N + 15) / 16;
  std::vector<float> bv(ntile * K * 16, 0.0f);
  std::vector<int32_t> be(ntile * K * 16, -126), bs(ntile * ninstr * 16, 0);
  for (size_t j = 0; j < N; ++j) {
    const size_t tile = j / 16, lane = j % 16;
    for (size_t k = 0; k < K; ++k) {
      bv[(tile * K + k) * 16 + lane] = ob.v[j * K + k];
      be[(tile * K + k) * 16 + lane] = ob.e[j * K + k];
    }
    for (size_t t = 0; t < ninstr; ++t) bs[(tile * ninstr + t) * 16 + lane] = ob.sc[j * ninstr + t].e;
  }
  std::vector<int32_t> ae32(oa.e.begin(), oa.e.end());  // broadcast from memory in the loop
  for_rows(M, threads, [&](size_t r0, size_t r1) FP4SIM_AVX512 {
    const __m512i fb = _mm512_set1_epi32(c.frac_bits);
    for (size_t ib = r0; ib < r1; ib += kRowBlock)
    for (size_t tile = 0; tile < ntile; ++tile) {
      const size_t j0 = tile * 16, nl = std::min<size_t>(16, N - j0);
      const __mmask16 lanes = static_cast<__mmask16>((1u << nl) - 1u);
      for (size_t i = ib; i < std::min(r1, ib + kRowBlock); ++i) {
        uint32_t slow = bad_a[i] ? lanes : 0u;
        for (size_t u = 0; u < nl; ++u)
          if (bad_b[j0 + u]) slow |= 1u << u;
        __m512 cf = cm ? _mm512_maskz_loadu_ps(lanes, cm + i * N + j0) : _mm512_setzero_ps();
        const __mmask16 cbad = _mm512_cmp_ps_mask(_mm512_abs_ps(cf), _mm512_set1_ps(std::numeric_limits<float>::max()),
                                                  _CMP_NLE_UQ);
        slow |= cbad;
        cf = _mm512_mask_mov_ps(cf, cbad, _mm512_setzero_ps());
        if (slow != lanes) {
          __m512i cbits = _mm512_castps_si512(cf);
          const float* av = oa.v.data() + i * K;
          const int32_t* ae = ae32.data() + i * K;
          for (size_t t = 0; t < ninstr; ++t) {
            const size_t k0 = t * 32;
            const float* bvt = bv.data() + (tile * K + k0) * 16;
            const int32_t* bet = be.data() + (tile * K + k0) * 16;
            __m512i pmax = _mm512_set1_epi32(std::numeric_limits<int32_t>::min());
            for (size_t k = 0; k < 32; ++k)
              pmax = _mm512_max_epi32(pmax, _mm512_add_epi32(_mm512_set1_epi32(ae[k0 + k]), _mm512_loadu_si512(bet + 16 * k)));
            const __m512i es = _mm512_add_epi32(_mm512_set1_epi32(oa.sc[i * ninstr + t].e),
                                                _mm512_loadu_si512(bs.data() + (tile * ninstr + t) * 16));
            // e_C as exp_of_bits: -126 for zeros and subnormals.
            const __m512i ec = _mm512_sub_epi32(
                _mm512_max_epi32(_mm512_and_si512(_mm512_srli_epi32(cbits, 23), _mm512_set1_epi32(0xFF)), _mm512_set1_epi32(1)),
                _mm512_set1_epi32(127));
            const __m512i lsb = _mm512_sub_epi32(_mm512_max_epi32(_mm512_add_epi32(es, pmax), ec), fb);
            // 2^(es - lsb) where it is an FP32 normal; else every product truncates to 0 (see
            // trunc_sum32), so the factor is 0.
            const __m512i pe = _mm512_sub_epi32(es, lsb);
            const __mmask16 pe_ok = _mm512_cmp_epi32_mask(pe, _mm512_set1_epi32(-126), _MM_CMPINT_NLT) &
                                    _mm512_cmp_epi32_mask(pe, _mm512_set1_epi32(127), _MM_CMPINT_LE);
            const __m512 pw = _mm512_maskz_mov_ps(
                pe_ok, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(pe, _mm512_set1_epi32(127)), 23)));
            __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();  // int64 lanes 0-7, 8-15
            for (size_t k = 0; k < 32; k += 4) {
              __m512i q = _mm512_setzero_si512();
              for (size_t u = k; u < k + 4; ++u) {
                const __m512 p = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(av[k0 + u]), _mm512_loadu_ps(bvt + 16 * u)), pw);
                q = _mm512_add_epi32(q, _mm512_cvttps_epi32(p));  // four below 2^27 each
              }
              lo = _mm512_add_epi64(lo, _mm512_cvtepi32_epi64(_mm512_castsi512_si256(q)));
              hi = _mm512_add_epi64(hi, _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(q, 1)));
            }
            __m512i out_bits[2];
            for (int h = 0; h < 2; ++h) {
              const __m256i lh = h ? _mm512_extracti64x4_epi64(lsb, 1) : _mm512_castsi512_si256(lsb);
              const __m512d lsbd = _mm512_cvtepi32_pd(lh);
              const __m256 ch = h ? _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castsi512_pd(cbits), 1))
                                  : _mm512_castps512_ps256(_mm512_castsi512_ps(cbits));
              // C on the grid, toward zero (an integer below 2^53 times 2^lsb).
              const __m512d ct = _mm512_roundscale_pd(_mm512_scalef_pd(_mm512_cvtps_pd(ch), _mm512_sub_pd(_mm512_setzero_pd(), lsbd)),
                                                      _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
              const __m512i acc = _mm512_add_epi64(h ? hi : lo, _mm512_cvttpd_epi64(ct));
              const __m512d y = _mm512_scalef_pd(_mm512_cvtepi64_pd(acc), lsbd);  // exact: |acc| < 2^53
              const __m512d gy = _mm512_getexp_pd(y);
              const __mmask8 nz = _mm512_cmp_pd_mask(y, _mm512_setzero_pd(), _CMP_NEQ_OQ);
              const __mmask8 rare = _mm512_mask_cmp_pd_mask(nz, gy, _mm512_set1_pd(127.0), _CMP_GT_OQ) |
                                    _mm512_mask_cmp_pd_mask(nz, gy, _mm512_set1_pd(-126.0), _CMP_LT_OQ);
              __m256 r = _mm512_cvt_roundpd_ps(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
              r = _mm256_castsi256_ps(_mm256_maskz_mov_epi32(nz, _mm256_castps_si256(r)));  // acc == 0 gives +0
              if (rare) [[unlikely]] {
                alignas(64) double yv[8];
                alignas(32) uint32_t rv[8];
                _mm512_store_pd(yv, y);
                _mm256_store_si256(reinterpret_cast<__m256i*>(rv), _mm256_castps_si256(r));
                for (int u = 0; u < 8; ++u) {
                  if (!((rare >> u) & 1u)) continue;
                  rv[u] = rz_fp32(yv[u]);
                  if ((rv[u] & 0x7FFFFFFFu) == 0x7F800000u) {  // infinite: the generic model takes it
                    slow |= 1u << (8 * h + u);
                    rv[u] = 0;
                  }
                }
                r = _mm256_castsi256_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(rv)));
              }
              out_bits[h] = _mm512_castsi256_si512(_mm256_castps_si256(r));
            }
            cbits = _mm512_inserti64x4(out_bits[0], _mm512_castsi512_si256(out_bits[1]), 1);
          }
          __m512 out = _mm512_mul_ps(_mm512_castsi512_ps(cbits), _mm512_set1_ps(alpha));
          out = _mm512_mask_mov_ps(out, _mm512_cmp_ps_mask(out, out, _CMP_UNORD_Q),
                                   _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int32_t>(kNaNBits))));
          _mm512_mask_storeu_ps(d + i * N + j0, lanes, out);
        }
        for (size_t u = 0; u < nl; ++u) {
          if (!((slow >> u) & 1u)) continue;
          const size_t j = j0 + u;
          d[i * N + j] = epilogue(generic_dot(c, a + i * K, sa + i * ninstr, b + j * K, sb + j * ninstr, K, c_bits_at(cm, i * N + j)), alpha);
        }
      }
    }
  });
  return true;
}

#pragma GCC diagnostic pop

// ---- AscendHif4 (rounding every group) ---------------------------------------------------------

FP4SIM_AVX2 bool gemm_ascend(const Ctx& c, size_t M, size_t N, size_t K, const uint8_t* a,
                             const uint32_t* sa, const uint8_t* b, const uint32_t* sb, const float* cm,
                             float alpha, unsigned threads, float* d) {
  if (c.hif4_round_groups != 1 || c.group != 64 || c.block != 64) return false;
  const size_t ng = K / 64;
  std::vector<int8_t> qa(M * K), qb(N * K);
  for (size_t r = 0; r < M; ++r)
    for (size_t k = 0; k < K; ++k) qa[r * K + k] = hif4_q(a[r * K + k] & c.mask_a, sa[r * ng + k / 64], k);
  for (size_t r = 0; r < N; ++r)
    for (size_t k = 0; k < K; ++k) qb[r * K + k] = hif4_q(b[r * K + k] & c.mask_b, sb[r * ng + k / 64], k);
  const Scales xa = prep_scales(c, sa, M, ng), xb = prep_scales(c, sb, N, ng);
  if (mostly_special(xa.row_bad, xb.row_bad)) return false;
  // Scale significands and exponents as int32 rows, for eight groups per vector.
  auto split = [](const Scales& x, std::vector<int32_t>& m, std::vector<int32_t>& e) {
    m.resize(x.dy.size());
    e.resize(x.dy.size());
    for (size_t q = 0; q < x.dy.size(); ++q) {
      m[q] = x.dy[q].m;
      e[q] = x.dy[q].e;
    }
  };
  std::vector<int32_t> ma, mb, ea32, eb32;
  split(xa, ma, ea32);
  split(xb, mb, eb32);
  for_rows(M, threads, [&](size_t r0, size_t r1) FP4SIM_AVX2 {
    std::vector<int32_t> s(ng);
    std::vector<float> terms(ng);
    for (size_t i = r0; i < r1; ++i) {
      const Dy* ea = xa.dy.data() + i * ng;
      for (size_t j = 0; j < N; ++j) {
        const uint32_t cb = c_bits_at(cm, i * N + j);
        if (xa.row_bad[i] || xb.row_bad[j] || is_nan_bits(cb)) {
          d[i * N + j] = epilogue(generic_dot(c, a + i * K, sa + i * ng, b + j * K, sb + j * ng, K, cb), alpha);
          continue;
        }
        const Dy* eb = xb.dy.data() + j * ng;
        sums64(qa.data() + i * K, qb.data() + j * K, K, s.data());
        float acc = std::bit_cast<float>(cb);
        // Eight group terms per vector where every 2^e is an FP32 normal: P = s * mA * mB is below
        // 2^22 (so int32 products and the conversion are exact) and P * 2^e is one exact multiply,
        // as in the scalar loop below; the adds stay in group order, one RN each.
        size_t g0 = 0;
        for (; g0 + 8 <= ng; g0 += 8) {
          const __m256i e = _mm256_sub_epi32(_mm256_add_epi32(ld(ea32.data() + i * ng + g0), ld(eb32.data() + j * ng + g0)),
                                             _mm256_set1_epi32(8));
          const __m256i outside = _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(-126), e),
                                                  _mm256_cmpgt_epi32(e, _mm256_set1_epi32(127)));
          if (!_mm256_testz_si256(outside, outside)) break;  // the scalar loop takes the rest
          const __m256i p = _mm256_mullo_epi32(_mm256_mullo_epi32(ld(s.data() + g0), ld(ma.data() + i * ng + g0)),
                                               ld(mb.data() + j * ng + g0));
          const __m256 pw = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(e, _mm256_set1_epi32(127)), 23));
          _mm256_storeu_ps(terms.data() + g0, _mm256_mul_ps(_mm256_cvtepi32_ps(p), pw));
          for (size_t g = g0; g < g0 + 8; ++g) acc = acc + terms[g];
        }
        for (size_t g = g0; g < ng; ++g) {
          // P * 2^e is an FP32 normal (P < 2^22, e >= -104): the product with 2^e is exact.
          const int64_t p = static_cast<int64_t>(s[g]) * ea[g].m * eb[g].m;
          const int e = ea[g].e + eb[g].e - 8;
          const float term = (e >= -126 && e <= 127) ? static_cast<float>(p) * pow2f(e)
                                                      : std::ldexp(static_cast<float>(p), e);
          acc = acc + term;  // the one RN of this group
        }
        d[i * N + j] = epilogue(std::bit_cast<uint32_t>(acc), alpha);
      }
    }
  });
  return true;
}

// ---- Exact ------------------------------------------------------------------------------------
// Each block's element products are summed as integers (elements as integer multiples of the
// format's smallest step), then added to the exact accumulator as one term per block.

struct IntOperand {
  std::vector<int8_t> q8;    // when every element fits int8
  std::vector<int32_t> q32;  // otherwise
  int ulp = 0;               // element value = q * 2^ulp
  double max_abs = 0;        // largest |q|
  std::vector<uint8_t> row_bad;
};

IntOperand prep_int(const Ctx& c, bool is_a, const uint8_t* codes, const uint32_t* s, size_t rows, size_t K) {
  IntOperand o;
  const auto& dy = is_a ? *c.dy_a : *c.dy_b;
  const uint8_t mask = is_a ? c.mask_a : c.mask_b;
  const int mb = is_a ? c.mb_a : c.mb_b;
  o.row_bad.assign(rows, 0);
  std::array<int64_t, 256> tq{};
  std::array<uint8_t, 256> tbad{};
  if (c.hif4) {
    o.ulp = -2;  // q = +-c << level, value q / 4
    o.max_abs = 28;
  } else {
    int emin = 1 << 20;
    for (int v = 0; v < 256; ++v)
      if (!special(dy[v]) && dy[v].m != 0) emin = std::min(emin, static_cast<int>(dy[v].e));
    o.ulp = emin - mb;
    for (int v = 0; v < 256; ++v) {
      const Dy& x = dy[v & mask];
      tbad[v] = special(x) ? 1 : 0;
      tq[v] = special(x) || x.m == 0 ? 0 : static_cast<int64_t>(x.m) << (x.e - mb - o.ulp);  // shift >= 0
      o.max_abs = std::max(o.max_abs, std::fabs(static_cast<double>(tq[v])));
    }
  }
  const bool small = o.max_abs <= 127;
  if (o.max_abs >= 0x1p31) return o;  // too wide: the caller falls back
  if (small) o.q8.resize(rows * K);
  else o.q32.resize(rows * K);
  const size_t nblk = K / static_cast<size_t>(c.block);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t k = 0; k < K; ++k) {
      const uint8_t code = codes[r * K + k];
      int64_t q;
      if (c.hif4) {
        q = hif4_q(code & mask, s[r * nblk + k / static_cast<size_t>(c.block)], k);
      } else {
        q = tq[code];
        if (tbad[code]) o.row_bad[r] = 1;
      }
      if (small) o.q8[r * K + k] = static_cast<int8_t>(q);
      else o.q32[r * K + k] = static_cast<int32_t>(q);
    }
  }
  return o;
}

FP4SIM_AVX2 bool gemm_exact(const Ctx& c, size_t M, size_t N, size_t K, const uint8_t* a, const uint32_t* sa,
                            const uint8_t* b, const uint32_t* sb, const float* cm, float alpha,
                            unsigned threads, float* d) {
  const IntOperand oa = prep_int(c, true, a, sa, M, K), ob = prep_int(c, false, b, sb, N, K);
  if (oa.q8.empty() && oa.q32.empty()) return false;
  if (ob.q8.empty() && ob.q32.empty()) return false;
  const size_t blk = static_cast<size_t>(c.block);
  const size_t nblk = K / blk;
  // Block sums times both scale significands must stay below 2^62 (int64, split in two adds).
  double msmax = 0;
  for (const Dy& x : *c.dy_s)
    if (!special(x)) msmax = std::max(msmax, std::fabs(static_cast<double>(x.m)));
  if (oa.max_abs * ob.max_abs * static_cast<double>(blk) * msmax * msmax >= 0x1p62) return false;
  const bool int8 = !oa.q8.empty() && !ob.q8.empty();
  const Scales xa = prep_scales(c, sa, M, nblk), xb = prep_scales(c, sb, N, nblk);
  if (mostly_special(oa.row_bad, ob.row_bad, &xa.row_bad, &xb.row_bad)) return false;
  const int off = oa.ulp + ob.ulp - 2 * c.mb_s;
  for_rows(M, threads, [&](size_t r0, size_t r1) FP4SIM_AVX2 {
    std::vector<int32_t> s16(K / 16);
    ExactAccumulator acc;
    for (size_t i = r0; i < r1; ++i) {
      for (size_t j = 0; j < N; ++j) {
        const uint32_t cb = c_bits_at(cm, i * N + j);
        if (oa.row_bad[i] || ob.row_bad[j] || xa.row_bad[i] || xb.row_bad[j] ||
            (cb & 0x7FFFFFFFu) >= 0x7F800000u) {
          d[i * N + j] = epilogue(generic_dot(c, a + i * K, sa + i * nblk, b + j * K, sb + j * nblk, K, cb), alpha);
          continue;
        }
        acc.clear();
        if (int8) sums16(oa.q8.data() + i * K, ob.q8.data() + j * K, K, s16.data());
        for (size_t bi = 0; bi < nblk; ++bi) {
          int64_t s = 0;
          if (int8) {
            for (size_t g = bi * blk / 16; g < (bi + 1) * blk / 16; ++g) s += s16[g];
          } else {
            const size_t k0 = bi * blk;
            for (size_t k = k0; k < k0 + blk; ++k) {
              const int64_t x = oa.q32.empty() ? oa.q8[i * K + k] : oa.q32[i * K + k];
              const int64_t y = ob.q32.empty() ? ob.q8[j * K + k] : ob.q32[j * K + k];
              s += x * y;
            }
          }
          if (s == 0) continue;
          const Dy& fa = xa.dy[i * nblk + bi];
          const Dy& fb = xb.dy[j * nblk + bi];
          const int64_t m = s * fa.m * fb.m;
          const int e = fa.e + fb.e + off;
          const uint64_t mag = m < 0 ? static_cast<uint64_t>(-m) : static_cast<uint64_t>(m);
          const int64_t lo = static_cast<int64_t>(mag & 0xFFFFFFFFu), hi = static_cast<int64_t>(mag >> 32);
          acc.add(m < 0 ? -lo : lo, e);
          acc.add(m < 0 ? -hi : hi, e + 32);
        }
        acc.add_mag(cb & 0x7FFFFFFFu, (cb >> 31) != 0);
        uint32_t r = acc.round_fp32(true);
        // An exact zero with C = -0 is -0 only if every product is -0: the generic model decides.
        if (r == 0u && cb == 0x80000000u) r = generic_dot(c, a + i * K, sa + i * nblk, b + j * K, sb + j * nblk, K, cb);
        d[i * N + j] = epilogue(r, alpha);
      }
    }
  });
  return true;
}

// ---- Fp32Seq ----------------------------------------------------------------------------------
// One FMA chain per output along K; eight outputs of a row per AVX2 lane set, 32 in flight.

FP4SIM_AVX2 bool gemm_fp32seq(const Ctx& c, size_t M, size_t N, size_t K, const uint8_t* a, const uint32_t* sa,
                              const uint8_t* b, const uint32_t* sb, const float* cm, float alpha,
                              unsigned threads, float* d) {
  const size_t blk = static_cast<size_t>(c.block);
  const size_t nblk = K / blk;
  // Element x scale in FP32 (one RN), as decode_rows computes it.
  auto deq = [&](bool is_a, uint8_t code, uint32_t word, size_t k) -> float {
    const uint8_t cd = code & (is_a ? c.mask_a : c.mask_b);
    const float sv = c.f_s->v[word & 0xFFu];
    if (c.hif4) {
      const int cm4 = cd & 7;
      const int lv = hif4_level(word, static_cast<int>(k % blk));
      const float ev = std::copysign(std::ldexp(static_cast<float>(cm4), lv - 2), (cd & 8) ? -1.0f : 1.0f);
      return ev * sv;
    }
    return (is_a ? c.f_a : c.f_b)->v[cd] * sv;
  };
  std::vector<float> da(M * K), bt(K * N);  // B transposed: bt[k * N + j]
  for (size_t r = 0; r < M; ++r)
    for (size_t k = 0; k < K; ++k) da[r * K + k] = deq(true, a[r * K + k], sa[r * nblk + k / blk], k);
  for (size_t r = 0; r < N; ++r)
    for (size_t k = 0; k < K; ++k) bt[k * N + r] = deq(false, b[r * K + k], sb[r * nblk + k / blk], k);
  for_rows(M, threads, [&](size_t r0, size_t r1) FP4SIM_AVX2 {
    std::vector<float> acc(N);
    for (size_t i = r0; i < r1; ++i) {
      for (size_t j = 0; j < N; ++j) acc[j] = cm ? cm[i * N + j] : 0.0f;
      const float* ar = da.data() + i * K;
      size_t j = 0;
      for (; j + 32 <= N; j += 32) {
        __m256 v0 = _mm256_loadu_ps(&acc[j]), v1 = _mm256_loadu_ps(&acc[j + 8]);
        __m256 v2 = _mm256_loadu_ps(&acc[j + 16]), v3 = _mm256_loadu_ps(&acc[j + 24]);
        for (size_t k = 0; k < K; ++k) {
          const __m256 x = _mm256_set1_ps(ar[k]);
          const float* br = bt.data() + k * N + j;
          v0 = _mm256_fmadd_ps(x, _mm256_loadu_ps(br), v0);
          v1 = _mm256_fmadd_ps(x, _mm256_loadu_ps(br + 8), v1);
          v2 = _mm256_fmadd_ps(x, _mm256_loadu_ps(br + 16), v2);
          v3 = _mm256_fmadd_ps(x, _mm256_loadu_ps(br + 24), v3);
        }
        _mm256_storeu_ps(&acc[j], v0);
        _mm256_storeu_ps(&acc[j + 8], v1);
        _mm256_storeu_ps(&acc[j + 16], v2);
        _mm256_storeu_ps(&acc[j + 24], v3);
      }
      for (; j + 8 <= N; j += 8) {
        __m256 v0 = _mm256_loadu_ps(&acc[j]);
        for (size_t k = 0; k < K; ++k) v0 = _mm256_fmadd_ps(_mm256_set1_ps(ar[k]), _mm256_loadu_ps(bt.data() + k * N + j), v0);
        _mm256_storeu_ps(&acc[j], v0);
      }
      for (; j < N; ++j) {
        float s = acc[j];
        for (size_t k = 0; k < K; ++k) s = std::fma(ar[k], bt[k * N + j], s);
        acc[j] = s;
      }
      for (size_t q = 0; q < N; ++q) d[i * N + q] = epilogue(std::bit_cast<uint32_t>(acc[q]), alpha);
    }
  });
  return true;
}

}  // namespace

bool gemm_fast(const Ctx& c, size_t M, size_t N, size_t K, const uint8_t* a, const uint32_t* sa,
               const uint8_t* b, const uint32_t* sb, const float* cm, float alpha, unsigned threads,
               float* d) {
  if (!have_avx2_fma() || M == 0 || N == 0) return false;
  switch (c.model) {
    case Model::Blackwell:
      if (c.group < c.k && have_avx512_vnni())
        return gemm_bw_grouped512(c, M, N, K, a, sa, b, sb, cm, alpha, threads, d);
      if (c.group >= c.k && have_avx512_vnni())
        return gemm_bw_fused512(c, M, N, K, a, sa, b, sb, cm, alpha, threads, d);
      return c.group < c.k ? gemm_bw_grouped(c, M, N, K, a, sa, b, sb, cm, alpha, threads, d)
                           : gemm_bw_fused(c, M, N, K, a, sa, b, sb, cm, alpha, threads, d);
    case Model::AscendHif4:
      if (have_avx512_vnni()) return gemm_ascend512(c, M, N, K, a, sa, b, sb, cm, alpha, threads, d);
      return gemm_ascend(c, M, N, K, a, sa, b, sb, cm, alpha, threads, d);
    case Model::Exact: return gemm_exact(c, M, N, K, a, sa, b, sb, cm, alpha, threads, d);
    case Model::Fp32Seq: return gemm_fp32seq(c, M, N, K, a, sa, b, sb, cm, alpha, threads, d);
    case Model::Custom: return false;  // the parametric engine has only the generic path
  }
  return false;
}

}  // namespace fp4sim::mma_detail
