// The ABI between fp4sim_gpu (loader.cpp, linked into programs) and the CUDA module
// libfp4sim_gpu_cuda.so (device.cu, dlopen'ed on first use of the Device backend). Only the module
// links the CUDA runtime, so a program that never touches a GPU never maps it (issue 13: the CLI
// starts in milliseconds). Both sides are built from the same tree by the same compilers; the
// version and the struct sizes below catch a module left over from another build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "detail.hpp"

namespace fp4sim::gpu::detail {

inline constexpr uint32_t kModuleAbi = 2;
inline constexpr const char* kModuleFile = "libfp4sim_gpu_cuda.so";
inline constexpr const char* kModuleEntry = "fp4sim_gpu_cuda_module";

// Function table of the module; every entry may throw std::runtime_error (std:: exception types
// live in the shared libstdc++, so they cross the dlopen boundary).
struct ModuleApi {
  uint32_t abi;
  uint32_t sizeof_gemm_params, sizeof_quant_job;
  bool (*query)(std::string& why);
  void (*gemm)(const hd::GemmParams& p, GemmKernel kernel, uint32_t* out);
  void (*quantize)(const QuantJob& job, const float* x, Quantized& q);
  BenchResult (*bench_quantize)(const QuantJob& job, int iters);
  BenchResult (*bench_copy)(size_t n_bytes, int iters);
  BenchResult (*bench_gemm)(hd::GemmParams p, GemmKernel kernel, uint32_t unit_scale, int iters);
};

}  // namespace fp4sim::gpu::detail

// The module's one exported symbol (C linkage: a stable name for dlsym).
extern "C" const fp4sim::gpu::detail::ModuleApi* fp4sim_gpu_cuda_module();
