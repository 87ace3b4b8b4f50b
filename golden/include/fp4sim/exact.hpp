// Exact arithmetic shared by the golden MMA models and the CUDA kernels (sim/gpu): rounding a wide
// integer to FP32 and a fixed-point "superaccumulator". Header-only and marked FP4SIM_HD, so nvcc
// compiles the very same code into the kernels (one definition for both layers, docs/numerics.md).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define FP4SIM_HD __host__ __device__ __forceinline__
#else
#define FP4SIM_HD inline
#endif

namespace fp4sim {

inline constexpr uint32_t kNaNBits = 0x7FFFFFFFu;  // the canonical NaN every MMA model returns
FP4SIM_HD bool is_nan_bits(uint32_t u) { return (u & 0x7FFFFFFFu) > 0x7F800000u; }
FP4SIM_HD bool is_inf_bits(uint32_t u) { return (u & 0x7FFFFFFFu) == 0x7F800000u; }

// Leading zeros of a nonzero 64-bit value.
FP4SIM_HD int clz64(uint64_t v) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(v));
#else
  return __builtin_clzll(v);
#endif
}

// Rounds the value (-1)^neg * mag * 2^e0 (+ a nonzero tail below bit 0 when sticky) to FP32 bits,
// RN-even or toward zero, with subnormals; |result| >= 2^128 (after rounding) gives +-Inf. A nonzero
// value rounding to zero gives a signed zero (RN) / +0 (RZ, as MMA-Sim's integer truncation does).
FP4SIM_HD uint32_t round_to_fp32(bool neg, uint64_t mag, int e0, bool sticky, bool rn) {
  const uint32_t sign = neg ? 0x80000000u : 0u;
  if (mag == 0) return rn ? sign : 0u;  // only a sticky tail: rounds to zero either way
  const int p = 63 - clz64(mag);
  const int e = p + e0;  // exponent of the leading bit
  if (e >= 128) return sign | 0x7F800000u;
  const int ec = e > -126 ? e : -126;  // subnormals share the exponent of the smallest normal
  const int sh = (ec - 23) - e0;       // bits of mag below the result's last place
  uint64_t m;
  bool rbit = false;
  bool st = sticky;
  if (sh <= 0) {
    m = mag << -sh;  // -sh <= 23 - p, so m < 2^24
  } else if (sh > 64) {
    m = 0;
    st = true;
  } else if (sh == 64) {
    m = 0;
    rbit = (mag >> 63) != 0;
    st = st || (mag << 1) != 0;
  } else {
    m = mag >> sh;
    rbit = ((mag >> (sh - 1)) & 1u) != 0;
    st = st || (sh > 1 && (mag & ((uint64_t{1} << (sh - 1)) - 1u)) != 0);
  }
  if (rn && rbit && (st || (m & 1u))) ++m;
  // Toward zero, a value below the smallest subnormal gives +0: MMA-Sim truncates with Python's
  // math.trunc, whose integer 0 carries no sign.
  if (m == 0) return rn ? sign : 0u;
  // m in [2^23, 2^24] for normals: adding the biased exponent - 1 absorbs the hidden bit and a
  // rounding carry into the next binade; subnormals have exponent field 0 and m < 2^23 (or = 2^23,
  // which becomes the smallest normal).
  uint32_t bits = (static_cast<uint32_t>(ec + 126) << 23) + static_cast<uint32_t>(m);
  if (bits >= 0x7F800000u) bits = 0x7F800000u;
  return sign | bits;
}

// Exact fixed-point sum of terms m * 2^e with |m| < 2^32 and Lsb <= e, e + 32 <= Lsb + 32 * Digits:
// 32-bit digits held in int64 limbs, so an add touches two limbs and never carries; normalize()
// before 2^29 adds have moved a limb. add() does not check its range (device code cannot throw):
// callers do (golden's ExactAccumulator) or stay inside it by construction (the kernels).
template <int Lsb, int Digits>
struct ExactSum {
  static constexpr int kLsb = Lsb;
  static constexpr int kDigits = Digits;
  int64_t limb[kDigits + 1];

  FP4SIM_HD void clear() {
    for (int i = 0; i <= kDigits; ++i) limb[i] = 0;
  }
  FP4SIM_HD void add(int64_t m, int e) {
    if (m == 0) return;
    const uint64_t a = m < 0 ? static_cast<uint64_t>(-m) : static_cast<uint64_t>(m);
    const int pos = e - kLsb;
    const int d = pos >> 5;
    const uint64_t v = a << (pos & 31);  // < 2^63: spans digits d and d + 1
    const int64_t lo = static_cast<int64_t>(v & 0xFFFFFFFFu), hi = static_cast<int64_t>(v >> 32);
    limb[d] += m < 0 ? -lo : lo;
    limb[d + 1] += m < 0 ? -hi : hi;
  }
  // += (neg ? -1 : 1) * |x| for a finite float x given by its magnitude bits.
  FP4SIM_HD void add_mag(uint32_t ab, bool neg) {
    if (ab == 0) return;
    const uint32_t ef = ab >> 23;
    const int64_t m = ef == 0 ? (ab & 0x7FFFFFu) : ((ab & 0x7FFFFFu) | 0x800000u);
    add(neg ? -m : m, (ef == 0 ? -126 : static_cast<int>(ef) - 127) - 23);
  }
  // Carry-propagates so that digits 0..kDigits-1 lie in [0, 2^32) and the top limb holds the sign.
  FP4SIM_HD void normalize() {
    for (int i = 0; i < kDigits; ++i) {
      const int64_t c = limb[i] >> 32;  // arithmetic shift: floor division
      limb[i] -= c * (int64_t{1} << 32);
      limb[i + 1] += c;
    }
  }
  // -1, 0 or +1.
  FP4SIM_HD int sign() {
    normalize();
    if (limb[kDigits] < 0) return -1;
    for (int i = 0; i <= kDigits; ++i)
      if (limb[i] != 0) return 1;
    return 0;
  }
  // The value rounded once to FP32 bits, RN-even (rn) or toward zero; an exact zero gives +0. Leaves
  // the sum normalized (and negated if it was negative).
  FP4SIM_HD uint32_t round_fp32(bool rn = true) { return round_fp32_scaled(0, rn); }
  // The same for the value times 2^scale_exp.
  FP4SIM_HD uint32_t round_fp32_scaled(int scale_exp, bool rn) {
    normalize();
    const bool neg = limb[kDigits] < 0;
    if (neg) {  // negate the two's-complement multiword value, then normalize again
      for (int i = 0; i <= kDigits; ++i) limb[i] = -limb[i];
      normalize();
    }
    int t = kDigits;
    while (t >= 0 && limb[t] == 0) --t;
    if (t < 0) return 0u;
    // Only the top limb can exceed a digit: then the value is beyond 2^(Lsb + 32 * (Digits + 1)).
    if (static_cast<uint64_t>(limb[t]) >> 32) return (neg ? 0x80000000u : 0u) | 0x7F800000u;
    // Window: the top two digits (>= 33 significant bits) and a sticky bit for the rest.
    uint64_t window;
    int e0;
    bool sticky = false;
    if (t == 0) {
      window = static_cast<uint64_t>(limb[0]);
      e0 = kLsb;
    } else {
      window = (static_cast<uint64_t>(limb[t]) << 32) | static_cast<uint64_t>(limb[t - 1]);
      e0 = kLsb + 32 * (t - 1);
      for (int i = 0; i < t - 1; ++i) sticky = sticky || limb[i] != 0;
    }
    return round_to_fp32(neg, window, e0 + scale_exp, sticky, rn);
  }
};

// Value classes of a decoded factor (golden's and the kernels' decoded-code structs use these).
enum : uint8_t { kClassFinite = 0, kClassInf = 1, kClassNaN = 2 };

// The exact MMA model's dot product D = RN(C + sum of products of four decoded factors: two elements,
// two scales), with the IEEE rules: a NaN factor or Inf * 0 gives NaN, +Inf and -Inf together give
// NaN, an exact zero is -0 only if C and every product are -0. Acc is an exact accumulator (clear,
// add(m, e), add_mag(bits, neg), round_fp32(rn)): ExactDotSum in the kernels, golden's range-checked
// ExactAccumulator on the host. A NaN C is the caller's early exit (canonical NaN).
template <class Acc>
struct ExactDot {
  Acc acc;
  bool pinf = false, ninf = false, nan = false, all_neg_zero = false;

  FP4SIM_HD void start(uint32_t cbits) {
    acc.clear();
    const bool c_inf = (cbits & 0x7FFFFFFFu) == 0x7F800000u;
    pinf = c_inf && !(cbits >> 31);
    ninf = c_inf && (cbits >> 31);
    nan = false;
    all_neg_zero = cbits == 0x80000000u;
  }
  // One product f0 * f1 * f2 * f3 * 2^-off; each factor has a signed significand m, exponent e, a
  // class cls and a sign neg (zeros keep their sign there).
  template <class D>
  FP4SIM_HD void term(const D& f0, const D& f1, const D& f2, const D& f3, int off) {
    if (nan) return;  // final
    const D* f[4] = {&f0, &f1, &f2, &f3};
    bool any_inf = false, any_zero = false, neg = false;
    for (int q = 0; q < 4; ++q) {
      if (f[q]->cls == kClassNaN) nan = true;
      if (f[q]->cls == kClassInf) any_inf = true;
      if (f[q]->cls == kClassFinite && f[q]->m == 0) any_zero = true;
      neg = neg != (f[q]->neg != 0);
    }
    if (nan) return;
    if (any_inf) {
      if (any_zero) nan = true;
      else if (neg) ninf = true;
      else pinf = true;
      all_neg_zero = false;
      return;
    }
    if (any_zero) {
      if (!neg) all_neg_zero = false;
      return;
    }
    all_neg_zero = false;
    const int64_t m = static_cast<int64_t>(f0.m) * f1.m * f2.m * f3.m;  // |m| < 2^16
    acc.add(m, f0.e + f1.e + f2.e + f3.e - off);
  }
  FP4SIM_HD uint32_t finish(uint32_t cbits) {
    if (nan || (pinf && ninf)) return kNaNBits;
    if (pinf) return 0x7F800000u;
    if (ninf) return 0xFF800000u;
    acc.add_mag(cbits & 0x7FFFFFFFu, (cbits >> 31) != 0);  // C is finite here
    const uint32_t r = acc.round_fp32(true);
    // +0 comes back for an exact zero, and for a positive sum below the subnormals (where a nonzero
    // term exists, so the sign rule gives +0 too).
    return r == 0u && all_neg_zero ? 0x80000000u : r;
  }
};

// The RHT's sum of FP32 values (one rounding of an exact sum, SPEC §2.4): 2^-149 .. 2^171, headroom
// for 2^16 terms above FLT_MAX.
using ExactFloatSum = ExactSum<-149, 10>;
// The exact MMA model's sum of products of two elements and two scales plus C: 2^-352 .. 2^416.
using ExactDotSum = ExactSum<-352, 24>;

}  // namespace fp4sim
