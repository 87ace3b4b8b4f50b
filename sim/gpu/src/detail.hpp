// Internal interface between the backend-neutral API (api.cpp) and the Device backend: loader.cpp
// (which forwards to the CUDA module, device.cu, through module.hpp's table) or its stand-in when
// CUDA is absent (no_device.cpp). Plain data only crosses into the module (no golden symbols: the
// module links nothing but the CUDA runtime).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fp4sim/gpu/gpu.hpp"
#include "fp4sim/gpu/mma_hd.hpp"
#include "fp4sim/gpu/quant_hd.hpp"

namespace fp4sim::gpu::detail {

bool device_query(std::string& why);

// Host pointers in p (a, b, sa, sb, c); the device code copies them over and fills out[M*N].
void device_gemm(const hd::GemmParams& p, GemmKernel kernel, uint32_t* out);

struct QuantJob {
  BlockFormat f;
  size_t rows, cols;
  int rnd;            // hd::kRne ...
  int rule;           // hd::kFloor / kCeil
  uint64_t seed;
  uint32_t stream;
  bool pts, two_d;
  int rht;            // 0 or 16
  uint32_t rht_mask;  // bit i set <=> sign i is -1
  bool rht_bf16;
  hd::Elem elem;      // MX element format
  QuantKernel kernel;
  int block;          // elements per scale (16, 32, 64)
  bool scale_word32;  // HiF4: 32-bit scale words
};
// Fills q's codes / scales / scale_words / amax / global_scale (already sized by the caller).
void device_quantize(const QuantJob& job, const float* x, Quantized& q);

BenchResult bench_quantize(const QuantJob& job, int iters);
BenchResult bench_copy(size_t n_bytes, int iters);
// unit_scale: the scale code (HiF4: scale word) whose value is 1.0.
BenchResult bench_gemm(hd::GemmParams p, GemmKernel kernel, uint32_t unit_scale, int iters);

}  // namespace fp4sim::gpu::detail
