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

// golden's own code, compiled by nvcc too; hd is nested in fp4sim, so its names (FP4SIM_HD,
// round_to_fp32, is_nan_bits, kNaNBits, ExactSum, ExactDot, ...) are found here unqualified.
#include "fp4sim/exact.hpp"

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

// FP32 -> BF16 (RNE, NaN kept quiet), returned as the float it stands for.
FP4SIM_HD float bf16_round(float x) {
  const uint32_t u = f2u(x);
  if (is_nan_bits(u)) return u2f((u | 0x00400000u) & 0xFFFF0000u);
  return u2f(((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16) << 16);
}

}  // namespace fp4sim::gpu::hd
