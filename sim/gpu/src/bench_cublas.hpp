// The cuBLAS BF16 reference of fp4sim_gpu_bench (bench_cublas.cu, only in builds that found cuBLAS:
// FP4SIM_HAVE_CUBLAS=1). Kept out of the fp4sim_gpu library so nothing else links cuBLAS.
#pragma once

#include <cstddef>

#include "fp4sim/gpu/gpu.hpp"

namespace fp4sim::gpu {
// cuBLAS BF16 GEMM (FP32 accumulate) of M x N x K on seeded random operands; bytes = 0.
BenchResult bench_cublas_bf16(size_t M, size_t N, size_t K, int iters);
}  // namespace fp4sim::gpu
