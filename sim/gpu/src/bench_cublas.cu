// cuBLAS BF16 reference of fp4sim_gpu_bench (built only when CMake finds cuBLAS; see
// sim/gpu/CMakeLists.txt): D[M,N] = A[M,K] . B[N,K]^T with FP32 accumulation, on seeded random
// operands uniform in [-1, 1) rounded to BF16 (a GEMM on zeros runs faster than on real data).
#include <cublas_v2.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_cublas.hpp"
#include "cuda_util.cuh"
#include "fp4sim/format.hpp"

namespace fp4sim::gpu {

namespace {
std::vector<uint16_t> random_bf16(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = float_to_bf16_rne(u(g));  // golden's RNE conversion
  return v;
}
}  // namespace

BenchResult bench_cublas_bf16(size_t M, size_t N, size_t K, int iters) {
  using detail::Buf;
  const std::vector<uint16_t> ha = random_bf16(M * K, 1), hb = random_bf16(N * K, 2);
  Buf<uint16_t> a(ha.data(), ha.size()), b(hb.data(), hb.size());
  Buf<float> d(M * N);
  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate failed");
  struct Handle {
    cublasHandle_t h;
    ~Handle() { cublasDestroy(h); }
  } guard{h};
  const float one = 1.0f, zero = 0.0f;
  // D[M,N] (row-major) = A[M,K] . B[N,K]^T: column-major D^T[N,M] = B . A^T with both K-major.
  auto run = [&] {
    const cublasStatus_t s = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(N), static_cast<int>(M),
                                          static_cast<int>(K), &one, b.p, CUDA_R_16BF, static_cast<int>(K), a.p,
                                          CUDA_R_16BF, static_cast<int>(K), &zero, d.p, CUDA_R_32F,
                                          static_cast<int>(N), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasGemmEx failed: status " + std::to_string(s));
  };
  return detail::time_it(run, iters, 0.0);
}

}  // namespace fp4sim::gpu
