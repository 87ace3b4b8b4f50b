// Shared __host__ __device__ building blocks of the GPU kernels (sim/gpu).
//
// Every per-element / per-block / per-dot function of the kernels lives in these headers and is
// compiled twice: by nvcc into the kernels and by the host C++ compiler into fp4sim_gpu's host
// backend and the CPU test (tests/gpu/test_gpu_hd.cpp), which checks it bit for bit against the
// golden library. So the arithmetic the GPU runs is verified even where no GPU is available.
//
// Bit exactness on the device rests on: IEEE FP32/FP64 add, mul, div and fma (nvcc's defaults
// -prec-div=true, no fast math) and --fmad=false (no contraction of a*b+c, sim/gpu/CMakeLists.txt).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define FP4SIM_HD __host__ __device__ __forceinline__
#else
#define FP4SIM_HD inline
#endif

namespace fp4sim::gpu::hd {

FP4SIM_HD uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
FP4SIM_HD float u2f(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
FP4SIM_HD uint64_t d2u(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}
FP4SIM_HD double u2d(uint64_t u) {
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

FP4SIM_HD int clz64(uint64_t v) {  // v != 0
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(v));
#else
  return __builtin_clzll(v);
#endif
}

FP4SIM_HD uint32_t popc(uint32_t v) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint32_t>(__popc(v));
#else
  return static_cast<uint32_t>(__builtin_popcount(v));
#endif
}

template <class T>
FP4SIM_HD T hmax(T a, T b) { return a > b ? a : b; }
template <class T>
FP4SIM_HD T hmin(T a, T b) { return a < b ? a : b; }

constexpr uint32_t kExpMask = 0x7F800000u;
constexpr uint32_t kNaNBits = 0x7FFFFFFFu;  // the canonical NaN every MMA model returns

FP4SIM_HD bool is_nan_bits(uint32_t u) { return (u & 0x7FFFFFFFu) > kExpMask; }
FP4SIM_HD bool is_inf_bits(uint32_t u) { return (u & 0x7FFFFFFFu) == kExpMask; }

// 2^e as a float for e in [-149, 127], built from the bits (exact; no libm).
FP4SIM_HD float pow2f(int e) {
  return e >= -126 ? u2f(static_cast<uint32_t>(e + 127) << 23) : u2f(1u << (e + 149));
}
// 2^e as a double for e in [-1022, 1023].
FP4SIM_HD double pow2d(int e) { return u2d(static_cast<uint64_t>(e + 1023) << 52); }

// Sign bit of a code from the input's FP32 bits: set iff x < 0 (not for -0.0 or NaN), SPEC §1.
FP4SIM_HD uint32_t neg_bit(uint32_t xb) {
  const uint32_t ax = xb & 0x7FFFFFFFu;
  return (xb >> 31) & static_cast<uint32_t>(ax != 0) & static_cast<uint32_t>(ax <= kExpMask);
}

// (-1)^neg * mag * 2^e0 (+ a nonzero tail below bit 0 when sticky) rounded to FP32 bits, RN-even
// or toward zero, with subnormals; >= 2^128 after rounding gives +-Inf; a nonzero value rounding to
// zero gives a signed zero (RN) / +0 (RZ). The same contract as fp4sim::round_to_fp32 (mma.hpp).
FP4SIM_HD uint32_t round_to_fp32(bool neg, uint64_t mag, int e0, bool sticky, bool rn) {
  const uint32_t sign = neg ? 0x80000000u : 0u;
  if (mag == 0) return rn ? sign : 0u;
  const int p = 63 - clz64(mag);
  const int e = p + e0;
  if (e >= 128) return sign | kExpMask;
  const int ec = hmax(e, -126);
  const int sh = (ec - 23) - e0;
  uint64_t m;
  bool rbit = false;
  bool st = sticky;
  if (sh <= 0) {
    m = mag << -sh;
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
  if (m == 0) return rn ? sign : 0u;
  uint32_t bits = (static_cast<uint32_t>(ec + 126) << 23) + static_cast<uint32_t>(m);
  if (bits >= kExpMask) bits = kExpMask;
  return sign | bits;
}

// FP32 -> BF16 (RNE, NaN kept quiet), returned as the float it stands for.
FP4SIM_HD float bf16_round(float x) {
  const uint32_t u = f2u(x);
  if (is_nan_bits(u)) return u2f((u | 0x00400000u) & 0xFFFF0000u);
  return u2f(((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16) << 16);
}

// Exact fixed-point sum of terms m * 2^e (|m| < 2^32, Lsb <= e, e + 32 <= Lsb + 32 * Digits; the
// callers stay in range, device code cannot throw): 32-bit digits in int64 limbs, so an add touches
// two limbs and never carries (fewer than 2^29 adds before a limb could overflow). Golden's
// ExactAccumulator (mma_exact.cpp) is the same scheme; the tests hold the two equal.
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
  // The value times 2^scale_exp rounded once to FP32 bits (RN-even); an exact zero gives +0.
  FP4SIM_HD uint32_t round_fp32(int scale_exp) {
    // Propagate carries so that digits 0..kDigits-1 are in [0, 2^32) and the top limb holds the sign.
    for (int i = 0; i < kDigits; ++i) {
      const int64_t c = limb[i] >> 32;  // arithmetic shift: floor division
      limb[i] -= c * (int64_t{1} << 32);
      limb[i + 1] += c;
    }
    bool neg = limb[kDigits] < 0;
    if (neg) {  // negate the two's-complement multiword value, then normalize again
      for (int i = 0; i <= kDigits; ++i) limb[i] = -limb[i];
      for (int i = 0; i < kDigits; ++i) {
        const int64_t c = limb[i] >> 32;
        limb[i] -= c * (int64_t{1} << 32);
        limb[i + 1] += c;
      }
    }
    int t = kDigits;
    while (t >= 0 && limb[t] == 0) --t;
    if (t < 0) return 0u;
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
    return round_to_fp32(neg, window, e0 + scale_exp, sticky, true);
  }
};

// The RHT's sum of FP32 values (one rounding of an exact sum, SPEC §2.4): 2^-149 .. 2^171, headroom
// for 2^16 terms above FLT_MAX.
using ExactFloatSum = ExactSum<-149, 10>;
// The exact MMA model's sum of products of two elements and two scales plus C: 2^-352 .. 2^416, the
// range of golden's ExactAccumulator.
using ExactDotSum = ExactSum<-352, 24>;

}  // namespace fp4sim::gpu::hd
