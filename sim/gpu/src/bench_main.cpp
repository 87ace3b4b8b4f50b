// fp4sim_gpu_bench: quantizer throughput against a device-to-device copy, and the GEMM emulation
// against a cuBLAS BF16 GEMM of the same shape. Prints one line per measurement (Markdown table).
#include <cstdio>
#include <string>

#include "fp4sim/gpu/gpu.hpp"

using namespace fp4sim;

int main(int argc, char** argv) {
  std::string why;
  if (!gpu::gpu_available(why)) {
    std::printf("SKIP: %s\n", why.c_str());
    return 77;
  }
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  const int iters = quick ? 5 : 20;
  std::printf("device: %s\n\n| benchmark | time (ms) | GB/s or TFLOP/s | vs reference |\n|---|---|---|---|\n", why.c_str());
  const size_t rows = 8192, cols = 8192;  // 256 MiB of FP32 input
  const gpu::BenchResult copy = gpu::bench_copy(rows * cols * 4, iters);
  std::printf("| d2d copy %zu MiB | %.3f | %.1f GB/s | 100%% |\n", rows * cols * 4 >> 20, copy.seconds * 1e3, copy.gbps());
  struct Q {
    BlockFormat f;
    const char* name;
    Rounding r;
    int rht;
  } qs[] = {{BlockFormat::Nvfp4, "nvfp4 rne", Rounding::Rne, 0}, {BlockFormat::Nvfp4, "nvfp4 sr", Rounding::Sr, 0},
            {BlockFormat::Nvfp4, "nvfp4 rht16", Rounding::Rne, 16}, {BlockFormat::Mxfp4, "mxfp4 rne", Rounding::Rne, 0},
            {BlockFormat::Mxfp8E4M3, "mxfp8-e4m3 rne", Rounding::Rne, 0}, {BlockFormat::Hif4, "hif4", Rounding::Rne, 0}};
  for (const Q& q : qs) {
    QuantOptions o;
    o.rounding = q.r;
    o.rht = q.rht;
    for (gpu::QuantKernel k : {gpu::QuantKernel::Direct, gpu::QuantKernel::Staged}) {
      const gpu::BenchResult r = gpu::bench_quantize(q.f, rows, cols, o, iters, k);
      std::printf("| quantize %s (%s) | %.3f | %.1f GB/s | %.0f%% of copy |\n", q.name,
                  k == gpu::QuantKernel::Staged ? "staged" : "direct", r.seconds * 1e3, r.gbps(),
                  100.0 * r.gbps() / copy.gbps());
    }
  }
  const size_t M = 4096, N = 4096, K = 4096;
  const double flops = 2.0 * M * N * K;
  const gpu::BenchResult cub = gpu::bench_cublas_bf16(M, N, K, iters);
  std::printf("| cuBLAS BF16 %zux%zux%zu | %.3f | %.1f TFLOP/s | 100%% |\n", M, N, K, cub.seconds * 1e3, flops / cub.seconds / 1e12);
  struct G {
    MmaConfig cfg;
    Model m;
    const char* name;
  } gs[] = {{make_mma_config(MmaKindId::Mxf4Nvf4, nullptr, nullptr, &kUE4M3, 16), Model::Blackwell, "nvfp4 blackwell"},
            {make_mma_config(MmaKindId::Mxf4), Model::Blackwell, "mxf4 blackwell"},
            {make_mma_config(MmaKindId::Mxf8f6f4), Model::Blackwell, "mxf8 e4m3 blackwell"},
            {make_mma_config(MmaKindId::Hif4), Model::AscendHif4, "hif4 ascend-hif4"},
            {make_mma_config(MmaKindId::Mxf4), Model::Fp32Seq, "mxf4 fp32-seq"}};
  for (const G& g : gs) {
    const gpu::BenchResult r = gpu::bench_gemm(g.cfg, g.m, M, N, K, quick ? 2 : 3);
    std::printf("| gemm emulation %s %zux%zux%zu | %.3f | %.3f TFLOP/s | %.2f%% of cuBLAS BF16 |\n", g.name, M, N, K,
                r.seconds * 1e3, flops / r.seconds / 1e12, 100.0 * cub.seconds / r.seconds);
  }
  return 0;
}
