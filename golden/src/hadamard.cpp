#include "fp4sim/hadamard.hpp"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <climits>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "fp4sim/format.hpp"
#include "fp4sim/philox.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace fp4sim {

namespace {

__extension__ typedef unsigned __int128 u128;

constexpr double kInvSqrt2 = 0x1.6a09e667f3bcdp-1;  // RN_double(1/sqrt(2))
constexpr double kOverflowMid = 0x1.ffffffp127;     // midpoint of FLT_MAX and 2^128: RNE -> Inf from here

// ---------------------------------------------------------------------------------------------
// A minimal unsigned big integer: little-endian 64-bit limbs, no leading zero limbs. Only the
// rare exact paths use it, so clarity beats speed.
using Big = std::vector<uint64_t>;

void trim(Big& a) {
  while (!a.empty() && a.back() == 0) a.pop_back();
}

int bitlen(const Big& a) {
  return a.empty() ? 0 : static_cast<int>(64 * (a.size() - 1)) + (64 - std::countl_zero(a.back()));
}

Big mul(const Big& a, const Big& b) {
  if (a.empty() || b.empty()) return {};
  Big r(a.size() + b.size(), 0);
  for (size_t i = 0; i < a.size(); ++i) {
    u128 carry = 0;
    for (size_t j = 0; j < b.size(); ++j) {
      const u128 t = static_cast<u128>(a[i]) * b[j] + r[i + j] + carry;
      r[i + j] = static_cast<uint64_t>(t);
      carry = t >> 64;
    }
    r[i + b.size()] = static_cast<uint64_t>(carry);
  }
  trim(r);
  return r;
}

Big shl(const Big& a, int s) {
  if (a.empty()) return {};
  const size_t limbs = static_cast<size_t>(s / 64);
  const int bits = s % 64;
  Big r(a.size() + limbs + 1, 0);
  for (size_t i = 0; i < a.size(); ++i) {
    r[i + limbs] |= a[i] << bits;
    if (bits != 0) r[i + limbs + 1] |= a[i] >> (64 - bits);
  }
  trim(r);
  return r;
}

int cmp(const Big& a, const Big& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  for (size_t i = a.size(); i-- > 0;) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

// Compares a * 2^ea with b * 2^eb (a, b > 0).
int cmp_scaled(const Big& a, int ea, const Big& b, int eb) {
  const int la = bitlen(a) + ea, lb = bitlen(b) + eb;
  if (la != lb) return la < lb ? -1 : 1;
  if (ea > eb) return cmp(shl(a, ea - eb), b);
  if (eb > ea) return cmp(a, shl(b, eb - ea));
  return cmp(a, b);
}

bool test_bit(const Big& a, int i) {
  const size_t l = static_cast<size_t>(i / 64);
  return l < a.size() && ((a[l] >> (i % 64)) & 1u) != 0;
}

bool any_bit_below(const Big& a, int i) {  // any of bits 0 .. i-1 set
  for (size_t l = 0; l < a.size() && static_cast<int>(64 * l) < i; ++l) {
    const int hi = i - static_cast<int>(64 * l);
    const uint64_t mask = hi >= 64 ? ~uint64_t{0} : ((uint64_t{1} << hi) - 1u);
    if ((a[l] & mask) != 0) return true;
  }
  return false;
}

uint64_t low64_after_shr(const Big& a, int s) {  // (a >> s) mod 2^64
  const size_t l = static_cast<size_t>(s / 64);
  const int b = s % 64;
  uint64_t v = l < a.size() ? a[l] >> b : 0;
  if (b != 0 && l + 1 < a.size()) v |= a[l + 1] << (64 - b);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Rounding helpers. All work on magnitudes; the caller applies the sign.

// RNE double -> float, with explicit overflow (a plain cast of an out-of-range double is UB).
float to_float_rne(double y) {
  const double a = std::fabs(y);
  if (a > static_cast<double>(FLT_MAX)) {
    const float m = a < kOverflowMid ? FLT_MAX : std::numeric_limits<float>::infinity();
    return std::signbit(y) ? -m : m;
  }
  return static_cast<float>(y);  // hardware conversion: RNE, subnormals kept
}

// RNE float of A * 2^e (A > 0).
float round_dyadic(const Big& a, int e) {
  const int len = bitlen(a);
  if (len == 0) return 0.0f;
  const int top = len - 1 + e;  // the value lies in [2^top, 2^(top+1))
  if (top > 127) return std::numeric_limits<float>::infinity();
  const int lsb = std::max(top - 23, -149);  // exponent of the float's last significand bit
  const int sh = lsb - e;                    // low bits of A below that bit
  uint64_t q;
  if (sh <= 0) {
    q = a[0] << (-sh);  // then A has at most 24 bits
  } else {
    q = low64_after_shr(a, sh);
    const bool round = test_bit(a, sh - 1);
    const bool sticky = any_bit_below(a, sh - 1);
    if (round && (sticky || (q & 1u))) ++q;
  }
  const double v = std::ldexp(static_cast<double>(q), lsb);  // q <= 2^24: exact
  return v >= 0x1p128 ? std::numeric_limits<float>::infinity() : static_cast<float>(v);
}

// Splits a positive finite double into M * 2^P with M an integer.
void split_double(double m, Big& mant, int& p) {
  int ex = 0;
  const double fr = std::frexp(m, &ex);
  mant = {static_cast<uint64_t>(std::ldexp(fr, 53))};
  trim(mant);
  p = ex - 53;
}

// Sign of t - m for t = A * 2^e / sqrt(2) and a dyadic m > 0: t > m <=> A^2 2^(2e) > M^2 2^(2P+1).
// Never 0: t is irrational when A != 0.
int cmp_t_mid(const Big& a2, int e, double m) {
  Big mm;
  int p = 0;
  split_double(m, mm, p);
  return cmp_scaled(a2, 2 * e, mul(mm, mm), 2 * p + 1);
}

// Midpoints between magnitude f and its neighbours (lo toward zero, hi away), exact in double.
// Neighbours by bit pattern: for non-negative floats the encoding is monotonic.
void float_mids(float f, double& lo, double& hi) {
  const uint32_t b = std::bit_cast<uint32_t>(f);
  if (b >= 0x7F800000u) {  // +Inf
    lo = kOverflowMid;
    hi = std::numeric_limits<double>::infinity();
    return;
  }
  const double fd = f;
  lo = b == 0 ? 0.0 : (fd + static_cast<double>(std::bit_cast<float>(b - 1))) * 0.5;
  hi = b == 0x7F7FFFFFu ? kOverflowMid : (fd + static_cast<double>(std::bit_cast<float>(b + 1))) * 0.5;
}

// RNE float of t = A * 2^e / sqrt(2) (A > 0): a double estimate, then exact midpoint comparisons.
float round_div_sqrt2(const Big& a, int e) {
  const int len = bitlen(a);
  double ad;
  int ae = e;
  if (len <= 64) {
    ad = static_cast<double>(a[0]);
  } else {
    ad = static_cast<double>(low64_after_shr(a, len - 64));
    ae += len - 64;
  }
  float f = to_float_rne(std::ldexp(ad * kInvSqrt2, ae));
  if (std::signbit(f)) f = -f;
  const Big a2 = mul(a, a);
  for (;;) {  // the estimate is within a float ulp or two: a few steps at most
    double lo = 0, hi = 0;
    float_mids(f, lo, hi);
    const uint32_t fb = std::bit_cast<uint32_t>(f);
    if (fb != 0 && cmp_t_mid(a2, e, lo) < 0) {
      f = std::bit_cast<float>(fb - 1);
    } else if (fb < 0x7F800000u && cmp_t_mid(a2, e, hi) > 0) {
      f = std::bit_cast<float>(fb + 1);  // FLT_MAX + 1 ulp is the encoding of +Inf
    } else {
      return f;
    }
  }
}

// ---------------------------------------------------------------------------------------------

struct FloatParts {  // a nonzero finite float = M * 2^e0, M the (sub)normal integer significand
  uint32_t m;
  int e0;
};

inline FloatParts parts(uint32_t bits) {
  const uint32_t e = (bits >> 23) & 0xFFu;
  const uint32_t f = bits & 0x7FFFFFu;
  return e != 0 ? FloatParts{f | 0x800000u, static_cast<int>(e) - 150} : FloatParts{f, -149};
}

void fwht(double* v, int n) {
  for (int h = 1; h < n; h <<= 1) {
    for (int i = 0; i < n; i += 2 * h) {
      for (int j = i; j < i + h; ++j) {
        const double a = v[j], b = v[j + h];
        v[j] = a + b;
        v[j + h] = a - b;
      }
    }
  }
}

// Two's-complement multi-limb FWHT: tile values are integers A_i (the float values / 2^qmin).
void fwht_big(uint64_t* v, int n, size_t limbs) {
  for (int h = 1; h < n; h <<= 1) {
    for (int i = 0; i < n; i += 2 * h) {
      for (int j = i; j < i + h; ++j) {
        uint64_t* a = v + static_cast<size_t>(j) * limbs;
        uint64_t* b = v + static_cast<size_t>(j + h) * limbs;
        uint64_t carry = 0, borrow = 0;
        for (size_t l = 0; l < limbs; ++l) {
          const uint64_t x = a[l], y = b[l];
          const u128 s = static_cast<u128>(x) + y + carry;
          carry = static_cast<uint64_t>(s >> 64);
          const u128 d = static_cast<u128>(x) - y - borrow;
          borrow = static_cast<uint64_t>(d >> 64) & 1u;
          a[l] = static_cast<uint64_t>(s);
          b[l] = static_cast<uint64_t>(d);
        }
      }
    }
  }
}

void negate_limbs(uint64_t* v, size_t limbs) {
  uint64_t carry = 1;
  for (size_t l = 0; l < limbs; ++l) {
    const u128 s = static_cast<u128>(~v[l]) + carry;
    v[l] = static_cast<uint64_t>(s);
    carry = static_cast<uint64_t>(s >> 64);
  }
}

// Everything one tile needs, fixed per call.
struct Plan {
  int n = 0, lg = 0, k = 0;  // sqrt(N) = 2^k (even lg) or 2^k * sqrt(2) (odd lg)
  bool odd = false, inverse = false, bf16 = false;
  std::span<const int8_t> signs;
  double inv_pow = 0, inv_root = 0;  // 2^-k; RN(1/sqrt 2) * 2^-k (exact scaling)

  Plan(int n_, std::span<const int8_t> s, bool to_bf16, bool inv)
      : n(n_), lg(std::countr_zero(static_cast<unsigned>(n_))), k(lg / 2), odd((lg & 1) != 0), inverse(inv),
        bf16(to_bf16), signs(s), inv_pow(std::ldexp(1.0, -k)), inv_root(std::ldexp(kInvSqrt2, -k)) {}
  int pre(int i) const { return inverse ? 1 : signs[static_cast<size_t>(i)]; }  // exact sign flips
  int post(int j) const { return inverse ? signs[static_cast<size_t>(j)] : 1; }  // commute with RNE
  float finish(float v) const { return bf16 ? bf16_to_float(float_to_bf16_rne(v)) : v; }
};

// RNE float of |S| / (2^k sqrt 2) for a nonzero double |S| that is the exact tile sum.
float div_sqrt2_exact(double a, int k) {
  Big am;
  int e = 0;
  split_double(a, am, e);
  return round_div_sqrt2(am, e - k);
}

// The reference (scalar) transform of one tile in place: a double FWHT when the tile's bit spread
// makes it exact, otherwise a multi-limb integer FWHT; exact_only skips the double path.
void tile_scalar(float* p, const Plan& pl, bool exact_only, std::vector<double>& buf, std::vector<uint64_t>& big) {
  const int n = pl.n, lg = pl.lg, k = pl.k;
  buf.resize(static_cast<size_t>(n));
  bool nonfinite = false, any = false;
  int qmin = INT_MAX, tmax = INT_MIN;
  for (int i = 0; i < n; ++i) {
    const uint32_t b = std::bit_cast<uint32_t>(p[i]);
    if (((b >> 23) & 0xFFu) == 0xFFu) {
      nonfinite = true;
    } else if ((b & 0x7FFFFFFFu) != 0) {
      const FloatParts fp = parts(b);
      any = true;
      qmin = std::min(qmin, fp.e0 + std::countr_zero(fp.m));
      tmax = std::max(tmax, fp.e0 + 31 - std::countl_zero(fp.m));
    }
  }

  if (nonfinite) {  // IEEE: the finite terms cannot matter; +Inf meeting -Inf anywhere gives NaN
    for (int i = 0; i < n; ++i) buf[static_cast<size_t>(i)] = pl.pre(i) * static_cast<double>(p[i]);
    fwht(buf.data(), n);
    for (int j = 0; j < n; ++j) p[j] = pl.finish(static_cast<float>(pl.post(j) * buf[static_cast<size_t>(j)]));
    return;
  }
  if (!any) {  // exact zero sums give +0
    std::fill(p, p + n, 0.0f);
    return;
  }

  // Every partial sum is an integer multiple of 2^qmin below N * 2^(tmax+1): exact in double
  // when that integer has at most 53 bits.
  if (!exact_only && tmax + 1 + lg - qmin <= 53) {
    for (int i = 0; i < n; ++i) buf[static_cast<size_t>(i)] = pl.pre(i) * static_cast<double>(p[i]);
    fwht(buf.data(), n);
    for (int j = 0; j < n; ++j) {
      const double s = buf[static_cast<size_t>(j)];
      if (s == 0.0) {
        p[j] = 0.0f;
        continue;
      }
      const bool neg = (s < 0) != (pl.post(j) < 0);
      const double a = std::fabs(s);
      float mag;
      if (!pl.odd) {
        mag = to_float_rne(a * pl.inv_pow);  // exact division by 2^k (no double underflow), one rounding
      } else {
        // y within |y| 2^-51 of t = a / (2^k sqrt 2) (two roundings of 2^-53 each); decide
        // directly unless y is that close to a rounding boundary.
        const double y = a * pl.inv_root;  // = RN(a * RN(1/sqrt 2)) * 2^-k: a >= 2^-149, no underflow
        mag = to_float_rne(y);
        double lo = 0, hi = 0;
        float_mids(mag, lo, hi);
        const double margin = y * 0x1p-50;
        if (!(y - lo > margin && hi - y > margin)) mag = div_sqrt2_exact(a, k);
      }
      p[j] = pl.finish(neg ? -mag : mag);
    }
    return;
  }

  // Exact multi-limb path. Width: magnitude < 2^(tmax+1-qmin+lg), plus a sign bit.
  const int bits = tmax + 1 - qmin + lg + 1;
  const size_t limbs = static_cast<size_t>((bits + 63) / 64);
  big.assign(static_cast<size_t>(n) * limbs, 0);
  for (int i = 0; i < n; ++i) {
    const uint32_t b = std::bit_cast<uint32_t>(p[i]);
    if ((b & 0x7FFFFFFFu) == 0) continue;
    const FloatParts fp = parts(b);
    const int tz = std::countr_zero(fp.m);
    const uint64_t m = fp.m >> tz;
    const int sh = fp.e0 + tz - qmin;  // >= 0
    uint64_t* v = big.data() + static_cast<size_t>(i) * limbs;
    const size_t l = static_cast<size_t>(sh / 64);
    const int s = sh % 64;
    v[l] = m << s;
    if (s != 0 && l + 1 < limbs) v[l + 1] = m >> (64 - s);
    const bool negv = ((b >> 31) != 0) != (pl.pre(i) < 0);
    if (negv) negate_limbs(v, limbs);
  }
  fwht_big(big.data(), n, limbs);
  for (int j = 0; j < n; ++j) {
    uint64_t* v = big.data() + static_cast<size_t>(j) * limbs;
    const bool negs = (v[limbs - 1] >> 63) != 0;
    if (negs) negate_limbs(v, limbs);
    Big a(v, v + limbs);
    trim(a);
    if (a.empty()) {
      p[j] = 0.0f;
      continue;
    }
    const float mag = pl.odd ? round_div_sqrt2(a, qmin - k) : round_dyadic(a, qmin - k);
    const bool neg = negs != (pl.post(j) < 0);
    p[j] = pl.finish(neg ? -mag : mag);
  }
}

// Reference path over a whole tensor (in == out or disjoint).
void apply_scalar(const float* in, float* out, size_t total, const Plan& pl, bool exact_only) {
  std::vector<double> buf;
  std::vector<uint64_t> big;
  const size_t n = static_cast<size_t>(pl.n);
  for (size_t t0 = 0; t0 < total; t0 += n) {
    if (in != out) std::copy(in + t0, in + t0 + n, out + t0);
    tile_scalar(out + t0, pl, exact_only, buf, big);
  }
}

// Certificate for the vector path (a cheaper, slightly weaker form of the reference's test):
// with E = the largest biased exponent field and e = the smallest over the nonzero values
// (subnormals count as 1), every value is an integer multiple of 2^(e-150) and below 2^(E-126),
// so each FWHT partial sum of N of them is an integer multiple of 2^(e-150) below
// 2^(E-e+24+lg) of those units. E - e <= 29 - lg keeps that within 53 bits: exact in double.
// E = 255 (Inf/NaN) never certifies.
bool spread_ok_scalar(const float* p, size_t count, int lg) {
  int emax = 0, emin = 255;
  for (size_t i = 0; i < count; ++i) {
    const uint32_t b = std::bit_cast<uint32_t>(p[i]);
    const int e = static_cast<int>((b >> 23) & 0xFFu);
    emax = std::max(emax, e);
    if ((b & 0x7FFFFFFFu) != 0) emin = std::min(emin, std::max(e, 1));
  }
  return emax < 255 && emax - emin <= 29 - lg;
}

#if defined(__x86_64__)
const bool kHaveAvx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
const bool kHaveAvx512 = kHaveAvx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                         __builtin_cpu_supports("avx512vl");

// spread_ok_scalar for count % 8 == 0, eight lanes at a time, on |x|'s bit pattern (ordered like
// the magnitudes): E = exponent of the largest, e = exponent of the smallest nonzero one (|x| - 1
// as unsigned sends 0 to the top), at least 1. All zeros give E = 0, e = 1: certified (+0 out).
__attribute__((target("avx2,fma"), always_inline)) inline bool spread_ok_avx2(const float* p, size_t count, int lg) {
  const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF), one = _mm256_set1_epi32(1);
  __m256i vmax = _mm256_setzero_si256(), vmin = _mm256_set1_epi32(-1);
#pragma GCC unroll 8
  for (size_t i = 0; i < count; i += 8) {
    const __m256i a = _mm256_and_si256(_mm256_castps_si256(_mm256_loadu_ps(p + i)), absm);
    vmax = _mm256_max_epi32(vmax, a);
    vmin = _mm256_min_epu32(vmin, _mm256_sub_epi32(a, one));
  }
  __m128i mx = _mm_max_epi32(_mm256_castsi256_si128(vmax), _mm256_extracti128_si256(vmax, 1));
  __m128i mn = _mm_min_epu32(_mm256_castsi256_si128(vmin), _mm256_extracti128_si256(vmin, 1));
  mx = _mm_max_epi32(mx, _mm_shuffle_epi32(mx, 0x4E));
  mn = _mm_min_epu32(mn, _mm_shuffle_epi32(mn, 0x4E));
  mx = _mm_max_epi32(mx, _mm_shuffle_epi32(mx, 0xB1));
  mn = _mm_min_epu32(mn, _mm_shuffle_epi32(mn, 0xB1));
  const int emax = static_cast<int>(static_cast<uint32_t>(_mm_cvtsi128_si32(mx)) >> 23);
  const int emin = std::max(static_cast<int>((static_cast<uint32_t>(_mm_cvtsi128_si32(mn)) + 1u) >> 23), 1);
  return emax < 255 && emax - emin <= 29 - lg;
}

// Fixes one lane the vector test could not certify (odd lg only): s the exact sum, y its scaled
// double estimate (which carries the output's sign).
[[gnu::noinline, gnu::cold]] float odd_lane_exact(double s, double y, const Plan& pl) {
  const float mag = div_sqrt2_exact(std::fabs(s), pl.k);
  return pl.finish(y < 0 ? -mag : mag);
}

// One certified tile (spread_ok), N = NT (or n_rt when NT == 0; then v has n/4 entries), N >= 4.
// pre: per-lane XOR masks (-0.0 = flip); post: per-lane post-sign * 2^-k (* RN(1/sqrt 2) if odd).
// Every double op before the scaling is exact (the certificate), so the sum S is exact in any
// order; even lg: S * 2^-k is exact and the one rounding is cvtpd2ps (RNE, subnormals, overflow to
// Inf per IEEE). Odd lg: y = RN(S * c 2^-k) is within |y| 2^-51 of t = S / sqrt(N); RN_double of
// y (1 -+ 2^-50) then brackets t, and when both round to the same float, so does t (rounding is
// monotonic; t is irrational, never a tie); otherwise odd_lane_exact decides. The scaling is
// fma(S, post, +0.0), a single rounding of S * post that also turns the -0.0 a sign flip of an
// exact zero sum makes into +0.0 (S * post of a nonzero S is never zero in double).
template <int NT, bool kBf16>
__attribute__((target("avx2,fma"), always_inline)) inline void tile_avx2(const float* in, float* out, int n_rt,
                                                                     const double* pre, const double* post,
                                                                     const Plan& pl, __m256d* scratch) {
  constexpr int kNv = NT > 0 ? NT / 4 : 1;
  __m256d local[kNv];
  __m256d* v = NT > 0 ? local : scratch;
  const int nv = (NT > 0 ? NT : n_rt) / 4;
  const bool odd = NT > 0 ? (std::countr_zero(static_cast<unsigned>(NT)) & 1) != 0 : pl.odd;
  const __m256d s1 = _mm256_set_pd(-1.0, 1.0, -1.0, 1.0);  // negate lanes 1 and 3
  const __m256d s2 = _mm256_set_pd(-1.0, -1.0, 1.0, 1.0);  // negate lanes 2 and 3
#pragma GCC unroll 16
  for (int i = 0; i < nv; ++i) {
    __m256d a = _mm256_xor_pd(_mm256_cvtps_pd(_mm_loadu_ps(in + 4 * i)), _mm256_loadu_pd(pre + 4 * i));
    // h = 1: [a,b,c,d] -> [a+b, a-b, c+d, c-d]; h = 2: [a,b,c,d] -> [a+c, b+d, a-c, b-d]. As
    // fma(a, +-1, swapped a): the product is exact, so this is the one rounding of an add/sub.
    a = _mm256_fmadd_pd(a, s1, _mm256_permute_pd(a, 0x5));
    a = _mm256_fmadd_pd(a, s2, _mm256_permute2f128_pd(a, a, 0x01));
    v[i] = a;
  }
#pragma GCC unroll 8
  for (int h = 1; h < nv; h <<= 1) {
#pragma GCC unroll 16
    for (int i = 0; i < nv; i += 2 * h) {
#pragma GCC unroll 16
      for (int j = i; j < i + h; ++j) {
        const __m256d a = v[j], b = v[j + h];
        v[j] = _mm256_add_pd(a, b);
        v[j + h] = _mm256_sub_pd(a, b);
      }
    }
  }
  const __m256d zero = _mm256_setzero_pd();
  const __m256d below = _mm256_set1_pd(1.0 - 0x1p-50), above = _mm256_set1_pd(1.0 + 0x1p-50);
  const __m256i rnd = _mm256_set1_epi32(0x7FFF), lsb = _mm256_set1_epi32(1);
  const __m256i hi16 = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
  // Eight outputs per step (vectors i and i + 1; for N = 4 the second half repeats the first and
  // only four are stored).
#pragma GCC unroll 8
  for (int i = 0; i < nv; i += 2) {
    const int i1 = i + 1 < nv ? i + 1 : i;
    const __m256d y0 = _mm256_fmadd_pd(v[i], _mm256_loadu_pd(post + 4 * i), zero);  // one rounding
    const __m256d y1 = _mm256_fmadd_pd(v[i1], _mm256_loadu_pd(post + 4 * i1), zero);
    __m256 f = _mm256_set_m128(_mm256_cvtpd_ps(y1), _mm256_cvtpd_ps(y0));
    int unsure = 0;
    if (odd) {
      const __m256i lo = _mm256_castps_si256(_mm256_set_m128(_mm256_cvtpd_ps(_mm256_mul_pd(y1, below)),
                                                             _mm256_cvtpd_ps(_mm256_mul_pd(y0, below))));
      const __m256i hi = _mm256_castps_si256(_mm256_set_m128(_mm256_cvtpd_ps(_mm256_mul_pd(y1, above)),
                                                             _mm256_cvtpd_ps(_mm256_mul_pd(y0, above))));
      unsure = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(lo, hi))) ^ 0xFF;
    }
    if (kBf16) {  // float_to_bf16_rne without its NaN case (no NaN here): add 0x7FFF + kept lsb, truncate
      const __m256i bb = _mm256_castps_si256(f);
      const __m256i r = _mm256_add_epi32(bb, _mm256_add_epi32(rnd, _mm256_and_si256(_mm256_srli_epi32(bb, 16), lsb)));
      f = _mm256_castsi256_ps(_mm256_and_si256(r, hi16));
    }
    const int lanes = i1 != i ? 8 : 4;
    if (lanes == 8) {
      _mm256_storeu_ps(out + 4 * i, f);
    } else {
      _mm_storeu_ps(out + 4 * i, _mm256_castps256_ps128(f));
    }
    if (unsure != 0) [[unlikely]] {
      alignas(32) double sv[8], yv[8];
      _mm256_store_pd(sv, v[i]);
      _mm256_store_pd(sv + 4, v[i1]);
      _mm256_store_pd(yv, y0);
      _mm256_store_pd(yv + 4, y1);
      for (int l = 0; l < lanes; ++l) {
        if ((unsure >> l) & 1) out[4 * i + l] = odd_lane_exact(sv[l], yv[l], pl);
      }
    }
  }
}

template <int NT, bool kBf16>
__attribute__((target("avx2,fma"))) void apply_avx2_n(const float* in, float* out, size_t total, const Plan& pl) {
  const size_t n = static_cast<size_t>(pl.n);
  // Per-lane constants: pre XOR masks and post multipliers.
  std::vector<double> pre(n), post(n);
  const double scale = pl.odd ? pl.inv_root : pl.inv_pow;
  for (size_t i = 0; i < n; ++i) {
    pre[i] = pl.pre(static_cast<int>(i)) < 0 ? -0.0 : 0.0;
    post[i] = pl.post(static_cast<int>(i)) * scale;
  }
  std::vector<double> scratch_mem(NT > 0 ? 0 : n + 4);  // runtime N: the tile's n/4 vectors, 32-aligned
  __m256d* scratch = nullptr;
  if (NT == 0) {
    void* p = scratch_mem.data();
    size_t space = scratch_mem.size() * sizeof(double);
    scratch = static_cast<__m256d*>(std::align(32, n * sizeof(double), p, space));
  }
  std::vector<double> buf;
  std::vector<uint64_t> big;
  // Certify several small tiles with one test; on failure, test them one by one. (A loop, not a
  // lambda: a lambda would not inherit the AVX2 target.)
  const size_t batch = NT > 0 ? std::max(256, NT) : std::max<size_t>(256, n);
  const size_t full = total - total % batch;
  for (size_t b0 = 0; b0 < total; b0 += batch) {
    const size_t b1 = std::min(total, b0 + batch);
    const bool all_ok = b0 < full && spread_ok_avx2(in + b0, batch, pl.lg);
    for (size_t t0 = b0; t0 < b1; t0 += n) {
      if (all_ok || (n % 8 == 0 ? spread_ok_avx2(in + t0, n, pl.lg) : spread_ok_scalar(in + t0, n, pl.lg))) {
        tile_avx2<NT, kBf16>(in + t0, out + t0, pl.n, pre.data(), post.data(), pl, scratch);
      } else {
        if (in != out) std::copy(in + t0, in + t0 + n, out + t0);
        tile_scalar(out + t0, pl, false, buf, big);
      }
    }
  }
}
// The same kernel with 512-bit vectors (eight doubles) for N >= 16: three in-register levels
// (h = 1, 2, 4), the rest across vectors; certificate, scaling, rounding and fix-ups as above.
// GCC 12's AVX-512 headers start some intrinsics from _mm512_undefined_*(), which
// -Wmaybe-uninitialized reports after inlining (a known false positive).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define FP4SIM_AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx2,fma")))
FP4SIM_AVX512 inline bool spread_ok_avx512(const float* p, size_t count, int lg) {
  const __m512i absm = _mm512_set1_epi32(0x7FFFFFFF), one = _mm512_set1_epi32(1);
  __m512i vmax = _mm512_setzero_si512(), vmin = _mm512_set1_epi32(-1);
#pragma GCC unroll 8
  for (size_t i = 0; i < count; i += 16) {
    const __m512i a = _mm512_and_si512(_mm512_castps_si512(_mm512_loadu_ps(p + i)), absm);
    vmax = _mm512_max_epi32(vmax, a);
    vmin = _mm512_min_epu32(vmin, _mm512_sub_epi32(a, one));
  }
  const int emax = static_cast<int>(static_cast<uint32_t>(_mm512_reduce_max_epi32(vmax)) >> 23);
  const int emin = std::max(static_cast<int>((_mm512_reduce_min_epu32(vmin) + 1u) >> 23), 1);
  return emax < 255 && emax - emin <= 29 - lg;
}

template <int NT, bool kBf16>
FP4SIM_AVX512 inline __attribute__((always_inline)) void tile_avx512(const float* in, float* out, int n_rt,
                                                                    const double* pre, const double* post,
                                                                    const Plan& pl, __m512d* scratch) {
  constexpr int kNv = NT > 0 ? NT / 8 : 1;
  __m512d local[kNv];
  __m512d* v = NT > 0 ? local : scratch;
  const int nv = (NT > 0 ? NT : n_rt) / 8;
  const bool odd = NT > 0 ? (std::countr_zero(static_cast<unsigned>(NT)) & 1) != 0 : pl.odd;
  const __m512d s1 = _mm512_set_pd(-1, 1, -1, 1, -1, 1, -1, 1);
  const __m512d s2 = _mm512_set_pd(-1, -1, 1, 1, -1, -1, 1, 1);
  const __m512d s4 = _mm512_set_pd(-1, -1, -1, -1, 1, 1, 1, 1);
#pragma GCC unroll 16
  for (int i = 0; i < nv; ++i) {
    __m512d a = _mm512_xor_pd(_mm512_cvtps_pd(_mm256_loadu_ps(in + 8 * i)), _mm512_loadu_pd(pre + 8 * i));
    a = _mm512_fmadd_pd(a, s1, _mm512_permute_pd(a, 0x55));         // pairs
    a = _mm512_fmadd_pd(a, s2, _mm512_permutex_pd(a, 0x4E));        // pairs of pairs
    a = _mm512_fmadd_pd(a, s4, _mm512_shuffle_f64x2(a, a, 0x4E));   // 256-bit halves
    v[i] = a;
  }
#pragma GCC unroll 8
  for (int h = 1; h < nv; h <<= 1) {
#pragma GCC unroll 16
    for (int i = 0; i < nv; i += 2 * h) {
#pragma GCC unroll 16
      for (int j = i; j < i + h; ++j) {
        const __m512d a = v[j], b = v[j + h];
        v[j] = _mm512_add_pd(a, b);
        v[j + h] = _mm512_sub_pd(a, b);
      }
    }
  }
  const __m512d zero = _mm512_setzero_pd();
  const __m512d below = _mm512_set1_pd(1.0 - 0x1p-50), above = _mm512_set1_pd(1.0 + 0x1p-50);
  const __m256i rnd = _mm256_set1_epi32(0x7FFF), lsb = _mm256_set1_epi32(1);
  const __m256i hi16 = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
#pragma GCC unroll 16
  for (int i = 0; i < nv; ++i) {
    const __m512d y = _mm512_fmadd_pd(v[i], _mm512_loadu_pd(post + 8 * i), zero);
    __m256 f = _mm512_cvtpd_ps(y);
    int unsure = 0;
    if (odd) {
      const __m256i lo = _mm256_castps_si256(_mm512_cvtpd_ps(_mm512_mul_pd(y, below)));
      const __m256i hi = _mm256_castps_si256(_mm512_cvtpd_ps(_mm512_mul_pd(y, above)));
      unsure = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(lo, hi))) ^ 0xFF;
    }
    if (kBf16) {
      const __m256i bb = _mm256_castps_si256(f);
      const __m256i r = _mm256_add_epi32(bb, _mm256_add_epi32(rnd, _mm256_and_si256(_mm256_srli_epi32(bb, 16), lsb)));
      f = _mm256_castsi256_ps(_mm256_and_si256(r, hi16));
    }
    _mm256_storeu_ps(out + 8 * i, f);
    if (unsure != 0) [[unlikely]] {
      alignas(64) double sv[8], yv[8];
      _mm512_store_pd(sv, v[i]);
      _mm512_store_pd(yv, y);
      for (int l = 0; l < 8; ++l) {
        if ((unsure >> l) & 1) out[8 * i + l] = odd_lane_exact(sv[l], yv[l], pl);
      }
    }
  }
}

template <int NT, bool kBf16>
FP4SIM_AVX512 void apply_avx512_n(const float* in, float* out, size_t total, const Plan& pl) {
  const size_t n = static_cast<size_t>(pl.n);
  std::vector<double> pre(n), post(n);
  const double scale = pl.odd ? pl.inv_root : pl.inv_pow;
  for (size_t i = 0; i < n; ++i) {
    pre[i] = pl.pre(static_cast<int>(i)) < 0 ? -0.0 : 0.0;
    post[i] = pl.post(static_cast<int>(i)) * scale;
  }
  std::vector<double> scratch_mem(NT > 0 ? 0 : n + 8);
  __m512d* scratch = nullptr;
  if (NT == 0) {
    void* p = scratch_mem.data();
    size_t space = scratch_mem.size() * sizeof(double);
    scratch = static_cast<__m512d*>(std::align(64, n * sizeof(double), p, space));
  }
  std::vector<double> buf;
  std::vector<uint64_t> big;
  const size_t batch = NT > 0 ? std::max(256, NT) : std::max<size_t>(256, n);
  const size_t full = total - total % batch;
  for (size_t b0 = 0; b0 < total; b0 += batch) {
    const size_t b1 = std::min(total, b0 + batch);
    const bool all_ok = b0 < full && spread_ok_avx512(in + b0, batch, pl.lg);
    for (size_t t0 = b0; t0 < b1; t0 += n) {
      if (all_ok || spread_ok_avx512(in + t0, n, pl.lg)) {
        tile_avx512<NT, kBf16>(in + t0, out + t0, pl.n, pre.data(), post.data(), pl, scratch);
      } else {
        if (in != out) std::copy(in + t0, in + t0 + n, out + t0);
        tile_scalar(out + t0, pl, false, buf, big);
      }
    }
  }
}
#undef FP4SIM_AVX512
#pragma GCC diagnostic pop

template <bool kBf16>
void apply_avx512(const float* in, float* out, size_t total, const Plan& pl) {
  switch (pl.n) {
    case 16: return apply_avx512_n<16, kBf16>(in, out, total, pl);
    case 32: return apply_avx512_n<32, kBf16>(in, out, total, pl);
    case 64: return apply_avx512_n<64, kBf16>(in, out, total, pl);
    default: return apply_avx512_n<0, kBf16>(in, out, total, pl);
  }
}

template <bool kBf16>
void apply_avx2(const float* in, float* out, size_t total, const Plan& pl) {
  switch (pl.n) {
    case 4: return apply_avx2_n<4, kBf16>(in, out, total, pl);
    case 8: return apply_avx2_n<8, kBf16>(in, out, total, pl);
    case 16: return apply_avx2_n<16, kBf16>(in, out, total, pl);
    case 32: return apply_avx2_n<32, kBf16>(in, out, total, pl);
    case 64: return apply_avx2_n<64, kBf16>(in, out, total, pl);
    default: return apply_avx2_n<0, kBf16>(in, out, total, pl);
  }
}
#endif

void validate_shape(size_t size, size_t cols, int n, std::span<const int8_t> signs) {
  if (!is_rht_size(n)) throw std::invalid_argument("RHT size must be a power of two >= 2, got " + std::to_string(n));
  if (signs.size() != static_cast<size_t>(n)) {
    throw std::invalid_argument("RHT needs " + std::to_string(n) + " signs, got " + std::to_string(signs.size()));
  }
  for (int8_t s : signs) {
    if (s != 1 && s != -1) throw std::invalid_argument("RHT signs must be +1 or -1");
  }
  if (size == 0) return;
  if (cols == 0 || size % cols != 0) throw std::invalid_argument("RHT: tensor size is not a multiple of cols");
  if (cols % static_cast<size_t>(n) != 0) {
    throw std::invalid_argument("RHT size " + std::to_string(n) + " does not divide the last axis " +
                                std::to_string(cols));
  }
}

// Runs one path; false (nothing written) when this machine cannot run the requested vector path.
bool apply(const float* in, float* out, size_t total, size_t cols, int n, std::span<const int8_t> signs, bool to_bf16,
           bool inverse, RhtPath path) {
  validate_shape(total, cols, n, signs);
#if defined(__x86_64__)
  const bool avx512 = kHaveAvx512, avx2 = kHaveAvx2;
#else
  const bool avx512 = false, avx2 = false;
#endif
  if ((path == RhtPath::Avx512 && !avx512) || (path == RhtPath::Avx2 && !avx2)) return false;
  if (total == 0) return true;
  const Plan pl(n, signs, to_bf16, inverse);
#if defined(__x86_64__)
  const bool vec = path == RhtPath::Auto ? avx2 : (path == RhtPath::Avx512 || path == RhtPath::Avx2);
  if (vec && n >= 4) {  // N = 2 (two lanes) stays on the reference path
    if (path != RhtPath::Avx2 && avx512 && n >= 16) {
      if (to_bf16) apply_avx512<true>(in, out, total, pl);
      else apply_avx512<false>(in, out, total, pl);
      return true;
    }
    if (to_bf16) apply_avx2<true>(in, out, total, pl);
    else apply_avx2<false>(in, out, total, pl);
    return true;
  }
#endif
  apply_scalar(in, out, total, pl, path == RhtPath::Exact);
  return true;
}

void check_no_partial_overlap(std::span<const float> in, std::span<float> out) {
  if (in.size() != out.size()) throw std::invalid_argument("RHT: input and output sizes differ");
  const auto a = reinterpret_cast<uintptr_t>(in.data()), b = reinterpret_cast<uintptr_t>(out.data());
  const uintptr_t bytes = in.size() * sizeof(float);
  if (a != b && a < b + bytes && b < a + bytes) throw std::invalid_argument("RHT: input and output overlap partially");
}

}  // namespace

bool is_rht_size(long long n) { return n >= 2 && (n & (n - 1)) == 0; }

void rht_signs(int n, bool seeded, uint64_t seed, std::vector<int8_t>& out) {
  if (!is_rht_size(n)) throw std::invalid_argument("RHT size must be a power of two >= 2, got " + std::to_string(n));
  out.assign(static_cast<size_t>(n), 1);
  if (n == 16 && !seeded) {
    for (int i = 0; i < 16; ++i) out[static_cast<size_t>(i)] = ((kTeRhtSignMask >> i) & 1u) ? -1 : 1;
    return;
  }
  std::vector<uint8_t> r(static_cast<size_t>(n));
  sr_bytes(seed, kRhtSignStream, 0, r.size(), r.data());
  for (size_t i = 0; i < r.size(); ++i) out[i] = (r[i] & 1u) ? -1 : 1;
}

std::vector<int8_t> rht_signs(int n, bool seeded, uint64_t seed) {
  std::vector<int8_t> out;
  rht_signs(n, seeded, seed, out);
  return out;
}

void rht_apply(std::span<float> x, size_t cols, int n, std::span<const int8_t> signs, bool to_bf16) {
  apply(x.data(), x.data(), x.size(), cols, n, signs, to_bf16, false, RhtPath::Auto);
}

void rht_apply_inverse(std::span<float> x, size_t cols, int n, std::span<const int8_t> signs, bool to_bf16) {
  apply(x.data(), x.data(), x.size(), cols, n, signs, to_bf16, true, RhtPath::Auto);
}

void rht_apply_to(std::span<const float> in, std::span<float> out, size_t cols, int n, std::span<const int8_t> signs,
                  bool to_bf16, bool inverse) {
  check_no_partial_overlap(in, out);
  apply(in.data(), out.data(), in.size(), cols, n, signs, to_bf16, inverse, RhtPath::Auto);
}

bool rht_apply_path(std::span<const float> in, std::span<float> out, size_t cols, int n, std::span<const int8_t> signs,
                    bool to_bf16, bool inverse, RhtPath path) {
  check_no_partial_overlap(in, out);
  return apply(in.data(), out.data(), in.size(), cols, n, signs, to_bf16, inverse, path);
}

void rht_apply_reference(std::span<float> x, size_t cols, int n, std::span<const int8_t> signs, bool to_bf16,
                         bool inverse) {
  apply(x.data(), x.data(), x.size(), cols, n, signs, to_bf16, inverse, RhtPath::Reference);
}

void rht_apply_exact(std::span<float> x, size_t cols, int n, std::span<const int8_t> signs, bool to_bf16,
                     bool inverse) {
  apply(x.data(), x.data(), x.size(), cols, n, signs, to_bf16, inverse, RhtPath::Exact);
}

}  // namespace fp4sim
