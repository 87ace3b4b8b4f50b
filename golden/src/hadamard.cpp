#include "fp4sim/hadamard.hpp"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <climits>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "fp4sim/format.hpp"
#include "fp4sim/philox.hpp"

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

void validate(std::span<float> x, size_t cols, int n, std::span<const int8_t> signs) {
  if (!is_rht_size(n)) throw std::invalid_argument("RHT size must be a power of two >= 2, got " + std::to_string(n));
  if (signs.size() != static_cast<size_t>(n)) {
    throw std::invalid_argument("RHT needs " + std::to_string(n) + " signs, got " + std::to_string(signs.size()));
  }
  for (int8_t s : signs) {
    if (s != 1 && s != -1) throw std::invalid_argument("RHT signs must be +1 or -1");
  }
  if (x.empty()) return;
  if (cols == 0 || x.size() % cols != 0) throw std::invalid_argument("RHT: tensor size is not a multiple of cols");
  if (cols % static_cast<size_t>(n) != 0) {
    throw std::invalid_argument("RHT size " + std::to_string(n) + " does not divide the last axis " +
                                std::to_string(cols));
  }
}

void apply(std::span<float> x, size_t cols, int n, std::span<const int8_t> signs, bool to_bf16, bool inverse,
           bool exact_only) {
  validate(x, cols, n, signs);
  const int lg = std::countr_zero(static_cast<unsigned>(n));
  const int k = lg / 2;           // sqrt(N) = 2^k (even lg) or 2^k * sqrt(2) (odd lg)
  const bool odd = (lg & 1) != 0;
  const double inv_pow = std::ldexp(1.0, -k);           // 2^-k, exact
  const double inv_root = std::ldexp(kInvSqrt2, -k);    // RN(1/sqrt 2) * 2^-k, exact scaling
  std::vector<double> buf(static_cast<size_t>(n));
  std::vector<uint64_t> big;

  for (size_t t0 = 0; t0 < x.size(); t0 += static_cast<size_t>(n)) {
    float* p = x.data() + t0;
    // Pre-signs (forward) are exact sign flips; post-signs (inverse) commute with RNE.
    auto pre = [&](int i) { return inverse ? 1 : signs[static_cast<size_t>(i)]; };
    auto post = [&](int j) { return inverse ? signs[static_cast<size_t>(j)] : 1; };
    auto finish = [&](float v) { return to_bf16 ? bf16_to_float(float_to_bf16_rne(v)) : v; };

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
      for (int i = 0; i < n; ++i) buf[static_cast<size_t>(i)] = pre(i) * static_cast<double>(p[i]);
      fwht(buf.data(), n);
      for (int j = 0; j < n; ++j) p[j] = finish(static_cast<float>(post(j) * buf[static_cast<size_t>(j)]));
      continue;
    }
    if (!any) {  // exact zero sums give +0
      std::fill(p, p + n, 0.0f);
      continue;
    }

    // Every partial sum is an integer multiple of 2^qmin below N * 2^(tmax+1): exact in double
    // when that integer has at most 53 bits.
    if (!exact_only && tmax + 1 + lg - qmin <= 53) {
      for (int i = 0; i < n; ++i) buf[static_cast<size_t>(i)] = pre(i) * static_cast<double>(p[i]);
      fwht(buf.data(), n);
      for (int j = 0; j < n; ++j) {
        const double s = buf[static_cast<size_t>(j)];
        if (s == 0.0) {
          p[j] = 0.0f;
          continue;
        }
        const bool neg = (s < 0) != (post(j) < 0);
        const double a = std::fabs(s);
        float mag;
        if (!odd) {
          mag = to_float_rne(a * inv_pow);  // exact division by 2^k (no double underflow), one rounding
        } else {
          // y within |y| 2^-51 of t = a / (2^k sqrt 2) (two roundings of 2^-53 each); decide
          // directly unless y is that close to a rounding boundary.
          const double y = a * inv_root;  // = RN(a * RN(1/sqrt 2)) * 2^-k: a >= 2^-149, no underflow
          mag = to_float_rne(y);
          double lo = 0, hi = 0;
          float_mids(mag, lo, hi);
          const double margin = y * 0x1p-50;
          if (!(y - lo > margin && hi - y > margin)) {
            Big am;
            int e = 0;
            split_double(a, am, e);
            mag = round_div_sqrt2(am, e - k);
          }
        }
        p[j] = finish(neg ? -mag : mag);
      }
      continue;
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
      const bool negv = ((b >> 31) != 0) != (pre(i) < 0);
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
      const float mag = odd ? round_div_sqrt2(a, qmin - k) : round_dyadic(a, qmin - k);
      const bool neg = negs != (post(j) < 0);
      p[j] = finish(neg ? -mag : mag);
    }
  }
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
  apply(x, cols, n, signs, to_bf16, false, false);
}

void rht_apply_inverse(std::span<float> x, size_t cols, int n, std::span<const int8_t> signs, bool to_bf16) {
  apply(x, cols, n, signs, to_bf16, true, false);
}

void rht_apply_exact(std::span<float> x, size_t cols, int n, std::span<const int8_t> signs, bool to_bf16,
                     bool inverse) {
  apply(x, cols, n, signs, to_bf16, inverse, true);
}

}  // namespace fp4sim
