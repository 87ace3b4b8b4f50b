// The CUDA module of fp4sim_gpu (libfp4sim_gpu_cuda.so, dlopen'ed by loader.cpp through the
// table of module.hpp): the simple kernels, thin around the __host__ __device__ functions of
// quant_hd.hpp and mma_hd.hpp (one thread per block / tile / output element), the tuned ones
// (device_tuned.cu, tuned.cuh), and the benchmarks. Links only the CUDA runtime, no golden code.
// The 1D quantizer kernels come in two variants (QuantKernel, gpu.hpp), the same hd arithmetic:
// Direct lets it access global memory per element (a lane's block is contiguous, so each 4-byte load
// and 1-byte store touches a different 32-byte sector per lane, and relies on L1 for the rest);
// Staged moves the block with 16-byte loads and stores through a per-thread array.
// Built for sm_90 by default (CMAKE_CUDA_ARCHITECTURES); compiled with --fmad=false. Needs only the
// CUDA runtime: the cuBLAS reference of the benchmark lives in bench_cublas.cu (fp4sim_gpu_bench).
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_util.cuh"
#include "module.hpp"
#include "tuned.cuh"

namespace fp4sim::gpu::detail {
namespace {

unsigned blocks_for(size_t n, unsigned tpb) { return static_cast<unsigned>((n + tpb - 1) / tpb); }

// ---- quantizer kernels ----

__global__ void k_rht16(const float* x, float* y, size_t n, uint32_t mask, bool bf16) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = hd::rht16_output(x + (i & ~size_t{15}), mask, static_cast<int>(i & 15u), bf16);
}

__global__ void k_amax(const float* x, size_t n, unsigned* out) {
  uint32_t m = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    m = max(m, hd::abs_bits_ignore_nan(x[i]));
  for (int o = 16; o > 0; o >>= 1) m = max(m, __shfl_xor_sync(0xFFFFFFFFu, m, o));
  if ((threadIdx.x & 31u) == 0) atomicMax(out, m);  // finite magnitudes order like their bits
}

// Block staging: B floats in, B code bytes out, 16 bytes per access. Every block starts at a
// multiple of 64 bytes of a cudaMalloc'ed buffer (B = 16, 32, 64), so the casts are aligned.
template <int B>
__device__ __forceinline__ void load_block(const float* src, float (&dst)[B]) {
  const float4* s4 = reinterpret_cast<const float4*>(src);
#pragma unroll
  for (int i = 0; i < B / 4; ++i) {
    const float4 v = s4[i];
    dst[4 * i] = v.x;
    dst[4 * i + 1] = v.y;
    dst[4 * i + 2] = v.z;
    dst[4 * i + 3] = v.w;
  }
}
template <int B>
__device__ __forceinline__ void store_codes(uint8_t* dst, const uint8_t (&src)[B]) {
  uint4* d4 = reinterpret_cast<uint4*>(dst);
#pragma unroll
  for (int i = 0; i < B / 16; ++i) {
    uint4 v;
    memcpy(&v, src + 16 * i, 16);
    d4[i] = v;
  }
}

// Block b of B elements through `quant(block values, block codes)`: directly in global memory, or
// (Staged) through per-thread arrays moved with 16-byte loads and stores.
template <int B, bool Staged, class Quant>
__device__ __forceinline__ void quantize_block(const float* x, uint8_t* codes, size_t b, Quant quant) {
  if constexpr (Staged) {
    float xb[B];
    uint8_t cb[B];
    load_block(x + b * B, xb);
    quant(xb, cb);
    store_codes(codes + b * B, cb);
  } else {
    quant(x + b * B, codes + b * B);
  }
}

template <bool Staged>
__global__ void k_nvfp4(const float* x, size_t nb, const unsigned* amax, bool pts, int rnd, uint64_t seed,
                        uint32_t stream, uint8_t* codes, uint8_t* scales) {
  const size_t b = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (b >= nb) return;
  const hd::Nvfp4Scale ts = hd::nvfp4_tensor_scale(hd::u2f(*amax), pts);
  quantize_block<16, Staged>(x, codes, b, [&](const float* xb, uint8_t* cb) {
    hd::nvfp4_block(xb, ts, rnd, seed, stream, b * 16, cb, scales + b);
  });
}

__global__ void k_nvfp4_2d(const float* x, size_t rows, size_t cols, const unsigned* amax, bool pts, int rnd,
                           uint64_t seed, uint32_t stream, uint8_t* codes, uint8_t* scales) {
  const size_t t = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t tiles_c = cols / 16, tiles = (rows + 15) / 16 * tiles_c;
  if (t >= tiles) return;
  const hd::Nvfp4Scale ts = hd::nvfp4_tensor_scale(hd::u2f(*amax), pts);
  hd::nvfp4_tile2d(x, rows, cols, (t / tiles_c) * 16, t % tiles_c, ts, rnd, seed, stream, codes, scales);
}

template <bool Staged>
__global__ void k_mx(hd::Elem e, const float* x, size_t nb, int rnd, int rule, uint64_t seed, uint32_t stream,
                     uint8_t* codes, uint8_t* scales) {
  const size_t b = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (b >= nb) return;
  quantize_block<32, Staged>(x, codes, b, [&](const float* xb, uint8_t* cb) {
    hd::mx_block(e, xb, rnd, rule, seed, stream, b * 32, cb, scales + b);
  });
}

template <bool Staged>
__global__ void k_hif4(const float* x, size_t nb, int rnd, uint64_t seed, uint32_t stream, uint8_t* codes,
                       uint32_t* words) {
  const size_t b = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (b >= nb) return;
  quantize_block<64, Staged>(x, codes, b, [&](const float* xb, uint8_t* cb) {
    hd::hif4_block(xb, rnd, seed, stream, b * 64, cb, words + b);
  });
}

// Runs the quantizer on device buffers (x may be rotated into tmp first).
void launch_quantize(const QuantJob& j, const float* dx, float* dtmp, unsigned* damax, uint8_t* dcodes,
                     uint8_t* dscales, uint32_t* dwords) {
  if (j.kernel == QuantKernel::Tuned && !j.two_d) {  // 2D has no tuned kernel: Direct below
    launch_quantize_tuned(j, dx, damax, dcodes, dscales, dwords);
    return;
  }
  constexpr unsigned kT = 256;
  const size_t n = j.rows * j.cols;
  const float* x = dx;
  if (j.rht) {
    k_rht16<<<blocks_for(n, kT), kT>>>(dx, dtmp, n, j.rht_mask, j.rht_bf16);
    x = dtmp;
  }
  switch (j.f) {
    case BlockFormat::Nvfp4:
      check(cudaMemsetAsync(damax, 0, sizeof(unsigned)), "memset");
      k_amax<<<std::min<unsigned>(blocks_for(n, kT), 4096), kT>>>(x, n, damax);
      if (!j.two_d) {
        (j.kernel == QuantKernel::Staged ? k_nvfp4<true> : k_nvfp4<false>)<<<blocks_for(n / 16, kT), kT>>>(
            x, n / 16, damax, j.pts, j.rnd, j.seed, j.stream, dcodes, dscales);
      } else {
        const size_t tiles = (j.rows + 15) / 16 * (j.cols / 16);
        k_nvfp4_2d<<<blocks_for(tiles, kT), kT>>>(x, j.rows, j.cols, damax, j.pts, j.rnd, j.seed, j.stream, dcodes, dscales);
      }
      break;
    case BlockFormat::Hif4:
      (j.kernel == QuantKernel::Staged ? k_hif4<true> : k_hif4<false>)<<<blocks_for(n / 64, kT), kT>>>(x, n / 64, j.rnd, j.seed, j.stream,
                                                                                dcodes, dwords);
      break;
    default:
      (j.kernel == QuantKernel::Staged ? k_mx<true> : k_mx<false>)<<<blocks_for(n / 32, kT), kT>>>(j.elem, x, n / 32, j.rnd, j.rule, j.seed,
                                                                            j.stream, dcodes, dscales);
      break;
  }
  check(cudaGetLastError(), "quantize kernel launch");
}

// ---- GEMM emulation kernels ----

__global__ void k_prep_q(hd::GemmParams p, bool is_a, size_t n, int8_t* q) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) q[i] = hd::prep_q(p, is_a, i);
}

__global__ void k_gemm(hd::GemmParams p, uint32_t* d) {
  const size_t j = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t i = blockIdx.y;
  if (j < p.N) d[i * p.N + j] = hd::gemm_element(p, i, j);
}

// p holds device pointers.
void launch_gemm(hd::GemmParams p, GemmKernel kernel, int8_t* dqa, int8_t* dqb, uint32_t* dd) {
  constexpr unsigned kT = 128;
  if (hd::needs_q(p)) {
    k_prep_q<<<blocks_for(p.M * p.K, 256), 256>>>(p, true, p.M * p.K, dqa);
    k_prep_q<<<blocks_for(p.N * p.K, 256), 256>>>(p, false, p.N * p.K, dqb);
    p.qa = dqa;
    p.qb = dqb;
  }
  if (kernel == GemmKernel::Tuned && launch_gemm_tuned(p, dd)) return;
  k_gemm<<<dim3(blocks_for(p.N, kT), static_cast<unsigned>(p.M)), kT>>>(p, dd);
  check(cudaGetLastError(), "gemm kernel launch");
}


bool mod_device_query(std::string& why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    why = std::string("no usable CUDA device: ") + cudaGetErrorString(e);
    return false;
  }
  if (n == 0) {
    why = "no usable CUDA device: none present";
    return false;
  }
  if (const cudaError_t c = cudaFree(nullptr); c != cudaSuccess) {  // creates the context
    why = std::string("no usable CUDA device: context creation failed: ") + cudaGetErrorString(c);
    return false;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  why = std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ")";
  return true;
}

void mod_device_gemm(const hd::GemmParams& hp, GemmKernel kernel, uint32_t* out) {
  const size_t nblk = hp.K / static_cast<size_t>(hp.block);
  Buf<uint8_t> a(hp.a, hp.M * hp.K), b(hp.b, hp.N * hp.K);
  Buf<uint32_t> sa(hp.sa, hp.M * nblk), sb(hp.sb, hp.N * nblk);
  Buf<float> c(hp.c ? hp.c : nullptr, hp.c ? hp.M * hp.N : 0);
  const bool q = hd::needs_q(hp);
  Buf<int8_t> qa(q ? hp.M * hp.K : 0), qb(q ? hp.N * hp.K : 0);
  Buf<uint32_t> d(hp.M * hp.N);
  hd::GemmParams p = hp;
  p.a = a.p;
  p.b = b.p;
  p.sa = sa.p;
  p.sb = sb.p;
  p.c = hp.c ? c.p : nullptr;
  launch_gemm(p, kernel, qa.p, qb.p, d.p);
  check(cudaDeviceSynchronize(), "gemm");
  d.to_host(out);
}

void mod_device_quantize(const QuantJob& j, const float* x, Quantized& q) {
  const size_t n = j.rows * j.cols;
  Buf<float> dx(x, n), tmp(j.rht ? n : 0);
  Buf<unsigned> amax(1);
  Buf<uint8_t> codes(n), scales(q.scales.size());
  Buf<uint32_t> words(q.scale_words.size());
  launch_quantize(j, dx.p, tmp.p, amax.p, codes.p, scales.p, words.p);
  check(cudaDeviceSynchronize(), "quantize");
  codes.to_host(q.codes.data());
  scales.to_host(q.scales.data());
  words.to_host(q.scale_words.data());
  if (j.f == BlockFormat::Nvfp4) {
    unsigned am = 0;
    amax.to_host(&am);
    q.amax = hd::u2f(am);
    q.global_scale = hd::nvfp4_tensor_scale(q.amax, j.pts).s_dec;
  }
}

// Bytes of every pass that launch_quantize runs for j (what the GB/s of the benchmark counts):
// a quantizer pass reads the FP32 input and writes one code byte per value (codes are unpacked)
// and the scales; the NVFP4 amax pass reads the input once more (skipped by Tuned without PTS);
// the simple RHT pass reads the input and writes the rotated copy, which every later pass reads
// in place of the input (Tuned fuses the RHT: no copy).
double quant_bytes(const QuantJob& j) {
  const double n = static_cast<double>(j.rows * j.cols);
  const double nb = n / j.block;
  const bool tuned = j.kernel == QuantKernel::Tuned && !j.two_d;
  double bytes = 4.0 * n + n + (j.scale_word32 ? 4.0 : 1.0) * nb;
  if (j.f == BlockFormat::Nvfp4 && (!tuned || j.pts)) bytes += 4.0 * n;
  if (j.rht && !tuned) bytes += 8.0 * n;
  return bytes;
}

BenchResult mod_bench_quantize(const QuantJob& j, int iters) {
  const size_t n = j.rows * j.cols;
  const size_t nb = n / static_cast<size_t>(j.block);
  std::vector<float> hx(n);
  for (size_t i = 0; i < n; ++i) hx[i] = static_cast<float>((i * 2654435761u) % 2001) / 100.0f - 10.0f;
  Buf<float> dx(hx.data(), n), tmp(j.rht ? n : 0);
  Buf<unsigned> amax(1);
  Buf<uint8_t> codes(n), scales(j.scale_word32 ? 0 : nb);
  Buf<uint32_t> words(j.scale_word32 ? nb : 0);
  const double bytes = quant_bytes(j);
  return time_it([&] { launch_quantize(j, dx.p, tmp.p, amax.p, codes.p, scales.p, words.p); }, iters, bytes);
}

BenchResult mod_bench_copy(size_t n_bytes, int iters) {
  Buf<uint8_t> a(n_bytes), b(n_bytes);
  check(cudaMemset(a.p, 1, n_bytes), "memset");
  return time_it([&] { check(cudaMemcpyAsync(b.p, a.p, n_bytes, cudaMemcpyDeviceToDevice), "d2d copy"); }, iters,
                 2.0 * static_cast<double>(n_bytes));
}

BenchResult mod_bench_gemm(hd::GemmParams p, GemmKernel kernel, uint32_t unit_scale, int iters) {
  const size_t nblk = p.K / static_cast<size_t>(p.block);
  std::vector<uint8_t> ha(p.M * p.K), hb(p.N * p.K);
  for (size_t i = 0; i < ha.size(); ++i) ha[i] = static_cast<uint8_t>((i * 37u) % 15u);
  for (size_t i = 0; i < hb.size(); ++i) hb[i] = static_cast<uint8_t>((i * 11u) % 15u);
  std::vector<uint32_t> hsa(p.M * nblk, unit_scale), hsb(p.N * nblk, unit_scale);
  Buf<uint8_t> a(ha.data(), ha.size()), b(hb.data(), hb.size());
  Buf<uint32_t> sa(hsa.data(), hsa.size()), sb(hsb.data(), hsb.size());
  Buf<int8_t> qa(p.M * p.K), qb(p.N * p.K);
  Buf<uint32_t> d(p.M * p.N);
  p.a = a.p;
  p.b = b.p;
  p.sa = sa.p;
  p.sb = sb.p;
  p.c = nullptr;
  return time_it([&] { launch_gemm(p, kernel, qa.p, qb.p, d.p); }, iters, 0.0);
}

}  // namespace
}  // namespace fp4sim::gpu::detail

extern "C" __attribute__((visibility("default"))) const fp4sim::gpu::detail::ModuleApi* fp4sim_gpu_cuda_module() {
  using namespace fp4sim::gpu::detail;
  static const ModuleApi api{kModuleAbi, sizeof(fp4sim::gpu::hd::GemmParams), sizeof(QuantJob),
                             mod_device_query, mod_device_gemm, mod_device_quantize, mod_bench_quantize,
                             mod_bench_copy, mod_bench_gemm};
  return &api;
}
