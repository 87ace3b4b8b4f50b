// fp4sim_gpu: the GPU kernels' C++ API (no CUDA headers needed to use it).
//
// Two backends run the same __host__ __device__ arithmetic (quant_hd.hpp, mma_hd.hpp):
//   Device  the CUDA kernels (needs a build with CUDA and a GPU at run time);
//   Host    the same per-element / per-block / per-dot functions in plain loops on the CPU, so the
//           kernels' arithmetic is exercised (and checked against golden) where no GPU exists.
// Same contracts as the golden fp4sim::quantize and fp4sim::gemm (SPEC §2, §4).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fp4sim/mma.hpp"
#include "fp4sim/quant.hpp"

namespace fp4sim::gpu {

enum class Backend : uint8_t { Device, Host };

// True when fp4sim_gpu was compiled with CUDA (FP4SIM_CUDA enabled at configure time).
bool built_with_cuda();

// True when the Device backend can run: built with CUDA, its module loaded and a CUDA device
// present. `why` gets the device's name on success, otherwise the one reason (no CUDA build, the
// module missing or not loadable, no driver, no device). Decided once per process, on first call.
// The CUDA code is a separate module, libfp4sim_gpu_cuda.so, dlopen'ed here on first use (only it
// links the CUDA runtime, so programs that never use the Device backend never load CUDA). It is
// looked up as $FP4SIM_GPU_MODULE (a path), then beside the executable (/proc/self/exe), then in
// the build tree's bin/ (for test programs that live elsewhere in the build tree).
bool gpu_available(std::string& why);

// False (with the reason) when the build has CUDA but its module could not be loaded: a broken
// build or install, unlike "no device", which gpu_available also reports. True otherwise.
bool gpu_module_ok(std::string& why);

// Empty when the GPU target computes gemm(cfg, model) bit-identically to golden; otherwise why not.
// Supported: blackwell (every Blackwell kind), ascend-hif4 (hif4_round_groups = 1), fp32-seq, exact
// (a 2^-352 .. 2^416 fixed-point sum per output, K < 2^29).
std::string cannot_run(const MmaConfig& cfg, Model model);

// Which GEMM emulation kernel the Device backend runs (the same bits either way, docs/gpu.md):
//   Simple  one thread per output, operands from global memory (the reference);
//   Tuned   K in 64-element slabs through shared memory, one kernel instance per model (compile-
//           time dispatch): Blackwell's grouped kinds and ascend-hif4 in 64x64 tiles whose exact
//           integer group sums come from mma.sync s8.s8.s32 tensor-core instructions (the sums are
//           small integers: exact in s32); the fused kind, fp32-seq and exact in 16x16 tiles with
//           each slab's elements decoded once into shared memory.
// Both call the same hd step functions; the Host backend has one implementation of them and
// ignores the choice (the mma.sync fragment layout is checked on the device only).
enum class GemmKernel : uint8_t { Simple, Tuned };

// D[M,N] = alpha * (C + A . B^T) as FP32 bit patterns, as fp4sim::gemm (golden) computes it.
// Operands as in fp4sim::gemm; c empty = all +0. Throws std::invalid_argument on bad shapes or an
// unsupported config (cannot_run), std::runtime_error on a CUDA failure.
std::vector<uint32_t> gemm(Backend be, const MmaConfig& cfg, Model model, size_t M, size_t N, size_t K,
                           std::span<const uint8_t> a, std::span<const uint32_t> sa, std::span<const uint8_t> b,
                           std::span<const uint32_t> sb, std::span<const float> c, float alpha = 1.0f,
                           GemmKernel kernel = GemmKernel::Simple);

// Empty when the GPU quantizer supports (f, cols, opt); otherwise why not (RHT sizes other than 16).
std::string cannot_quantize(BlockFormat f, const QuantOptions& opt);

// Which quantizer kernels the Device backend runs (the same bits whichever, docs/gpu.md):
//   Direct  simple, the reference: one thread per block, the hd block function reading and writing
//           global memory element by element (separate RHT and amax passes);
//   Staged  as Direct, the block moved with 16-byte loads and stores through a per-thread array;
//   Tuned   one float4 per lane (4 lanes per NVFP4 block, 8 per MX, 16 per HiF4), block amax and
//           HiF4 levels by warp shuffles, 4-byte code stores, grid-stride loops; SR draws one
//           Philox block per 16 elements (a lane draws, shuffles hand out the words); RHT-16 is
//           fused into the NVFP4 / MX / HiF4 kernel; the NVFP4 amax pass is skipped when PTS is
//           off (2D falls back to Direct).
// The Host backend runs Tuned as the same per-lane hd functions in the kernel's lane order, so the
// CPU tests check the tuned arithmetic too; it ignores Direct / Staged.
enum class QuantKernel : uint8_t { Direct, Staged, Tuned };

// Same result as fp4sim::quantize (codes, scales / scale words, global_scale, amax).
Quantized quantize(Backend be, BlockFormat f, std::span<const float> x, size_t rows, size_t cols,
                   const QuantOptions& opt = {}, QuantKernel kernel = QuantKernel::Direct);

// ---- benchmarks (Device backend only; throw std::runtime_error without a GPU) ----
struct BenchResult {
  double seconds = 0;  // per iteration (median of the timed iterations)
  double bytes = 0;    // bytes moved per iteration (input read + codes/scales written)
  double gbps() const { return seconds > 0 ? bytes / seconds / 1e9 : 0; }
};
// Quantizes a rows x cols tensor already resident on the device, `iters` times.
BenchResult bench_quantize(BlockFormat f, size_t rows, size_t cols, const QuantOptions& opt, int iters,
                           QuantKernel kernel = QuantKernel::Direct);
// cudaMemcpy device-to-device of n bytes (read + write counted).
BenchResult bench_copy(size_t n_bytes, int iters);
// GEMM emulation of M x N x K (fixed pseudo-random codes, every scale 1.0: the scale format's code
// for 1.0, HiF4's E6M2 1.0 with no level bits); bytes = 0, use flops = 2*M*N*K.
BenchResult bench_gemm(const MmaConfig& cfg, Model model, size_t M, size_t N, size_t K, int iters,
                       GemmKernel kernel = GemmKernel::Simple);
// The scale code that bench_gemm uses (exposed for the tests).
uint32_t unit_scale_code(const MmaConfig& cfg);
// The cuBLAS BF16 reference is not part of this library (loading cuBLAS costs a program ~100 ms and
// ~220 MB): it lives in fp4sim_gpu_bench (src/bench_cublas.cu), built when CMake finds cuBLAS.

}  // namespace fp4sim::gpu
