// fp4sim_gpu_bench: quantizer throughput against a device-to-device copy, and the GEMM emulation
// against a cuBLAS BF16 GEMM of the same shape (when built with cuBLAS), for the simple kernels
// (direct, staged / simple) and the tuned ones. Prints a Markdown table (kernel, GB/s, % of a D2D
// copy, TFLOP/s, % of cuBLAS BF16), one row per measurement as soon as it is measured (stdout
// line-buffered), so a crash or a kill keeps every row before it; each measurement catches its own
// errors and the rest still run.
//   fp4sim_gpu_bench [--quick] [--deadline SECONDS]
// --deadline: no measurement starts after that many seconds (rows say "skipped: deadline").
// Exit status: 0 every measurement ran, 1 one failed, 77 no usable GPU, 2 bad arguments.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string>

#include "fp4sim/gpu/gpu.hpp"
#if FP4SIM_HAVE_CUBLAS
#include "bench_cublas.hpp"
#endif

using namespace fp4sim;

namespace {

using Clock = std::chrono::steady_clock;
const Clock::time_point t_start = Clock::now();
double deadline_s = 1e30;
int n_ok = 0, n_failed = 0, n_skipped = 0;

double elapsed_s() { return std::chrono::duration<double>(Clock::now() - t_start).count(); }

// Runs one measurement; `row` prints its table row from the result. Returns false if it did not run.
bool measure(const std::string& name, const std::function<gpu::BenchResult()>& fn,
             const std::function<void(const gpu::BenchResult&)>& row, gpu::BenchResult* out = nullptr) {
  if (elapsed_s() > deadline_s) {
    std::printf("| %s | skipped: deadline (%.0f s) | | | | |\n", name.c_str(), deadline_s);
    ++n_skipped;
    return false;
  }
  try {
    const gpu::BenchResult r = fn();
    row(r);
    if (out) *out = r;
    ++n_ok;
    return true;
  } catch (const std::exception& e) {
    std::printf("| %s | FAILED: %s | | | | |\n", name.c_str(), e.what());
  } catch (...) {
    std::printf("| %s | FAILED: unknown exception | | | | |\n", name.c_str());
  }
  ++n_failed;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // one line at a time, also into a redirected file
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      quick = true;
    } else if (a == "--deadline" && i + 1 < argc) {
      deadline_s = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: fp4sim_gpu_bench [--quick] [--deadline SECONDS]\n");
      return 2;
    }
  }
  std::string why;
  if (!gpu::gpu_available(why)) {
    std::printf("SKIP: %s\n", why.c_str());
    return 77;
  }
  const int iters = quick ? 5 : 20;
  // Quantizer input: 128 MiB (quick) or 256 MiB of FP32, well above the H200's 60 MB L2.
  const size_t rows = quick ? 4096 : 8192, cols = 8192;
  const size_t M = quick ? 2048 : 4096, N = M, K = M;
  std::printf("device: %s%s\n\n", why.c_str(), quick ? " (quick)" : "");
  std::printf("GB/s counts the bytes of every pass: the input read and the codes (one byte each) and scales\n"
              "written by the quantizer, plus the NVFP4 amax pass's read of the input (the tuned kernel has no\n"
              "amax pass without PTS) and the simple kernels' RHT copy (written, then read in place of the input).\n"
              "GEMM operands: fixed pseudo-random codes, every scale 1.0; cuBLAS BF16 on seeded random data.\n\n");
  std::printf("| benchmark | time (ms) | GB/s | %% of D2D copy | TFLOP/s | %% of cuBLAS BF16 |\n|---|---|---|---|---|---|\n");

  gpu::BenchResult copy;
  const bool have_copy = measure(
      "d2d copy " + std::to_string(rows * cols * 4 >> 20) + " MiB", [&] { return gpu::bench_copy(rows * cols * 4, iters); },
      [&](const gpu::BenchResult& r) {
        std::printf("| d2d copy %zu MiB | %.3f | %.1f | 100%% | | |\n", rows * cols * 4 >> 20, r.seconds * 1e3, r.gbps());
      },
      &copy);
  struct Q {
    BlockFormat f;
    const char* name;
    Rounding r;
    int rht;
    bool pts;
  } qs[] = {{BlockFormat::Nvfp4, "nvfp4 rne", Rounding::Rne, 0, true},
            {BlockFormat::Nvfp4, "nvfp4 rne no-pts", Rounding::Rne, 0, false},
            {BlockFormat::Nvfp4, "nvfp4 sr", Rounding::Sr, 0, true},
            {BlockFormat::Nvfp4, "nvfp4 rht16", Rounding::Rne, 16, true},
            {BlockFormat::Nvfp4, "nvfp4 rht16 sr", Rounding::Sr, 16, true},
            {BlockFormat::Mxfp4, "mxfp4 rne", Rounding::Rne, 0, true},
            {BlockFormat::Mxfp4, "mxfp4 sr", Rounding::Sr, 0, true},
            {BlockFormat::Mxfp8E4M3, "mxfp8-e4m3 rne", Rounding::Rne, 0, true},
            {BlockFormat::Hif4, "hif4", Rounding::Rne, 0, true},
            {BlockFormat::Hif4, "hif4 sr", Rounding::Sr, 0, true}};
  const char* qk_name[] = {"direct", "staged", "tuned"};
  for (const Q& q : qs) {
    QuantOptions o;
    o.rounding = q.r;
    o.rht = q.rht;
    o.pts = q.pts;
    for (gpu::QuantKernel k : {gpu::QuantKernel::Direct, gpu::QuantKernel::Staged, gpu::QuantKernel::Tuned}) {
      const std::string name = std::string("quantize ") + q.name + " (" + qk_name[static_cast<int>(k)] + ")";
      measure(name, [&] { return gpu::bench_quantize(q.f, rows, cols, o, iters, k); },
              [&](const gpu::BenchResult& r) {
                if (have_copy)
                  std::printf("| %s | %.3f | %.1f | %.0f%% | | |\n", name.c_str(), r.seconds * 1e3, r.gbps(),
                              100.0 * r.gbps() / copy.gbps());
                else
                  std::printf("| %s | %.3f | %.1f | (no copy) | | |\n", name.c_str(), r.seconds * 1e3, r.gbps());
              });
    }
  }

  const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  const std::string shape = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  gpu::BenchResult cub;
  bool have_cublas = false;
#if FP4SIM_HAVE_CUBLAS
  have_cublas = measure(
      "cuBLAS BF16 " + shape, [&] { return gpu::bench_cublas_bf16(M, N, K, iters); },
      [&](const gpu::BenchResult& r) {
        std::printf("| cuBLAS BF16 %s (random data) | %.3f | | | %.1f | 100%% |\n", shape.c_str(), r.seconds * 1e3,
                    flops / r.seconds / 1e12);
      },
      &cub);
#else
  std::printf("| cuBLAS BF16 %s | skipped: built without cuBLAS (CMake did not find it) | | | | |\n", shape.c_str());
#endif
  struct G {
    MmaConfig cfg;
    Model m;
    const char* name;
  } gs[] = {{make_mma_config(MmaKindId::Mxf4Nvf4, nullptr, nullptr, &kUE4M3, 16), Model::Blackwell, "nvfp4 blackwell"},
            {make_mma_config(MmaKindId::Mxf4), Model::Blackwell, "mxf4 blackwell"},
            {make_mma_config(MmaKindId::Mxf8f6f4), Model::Blackwell, "mxf8 e4m3 blackwell"},
            {make_mma_config(MmaKindId::Hif4), Model::AscendHif4, "hif4 ascend-hif4"},
            {make_mma_config(MmaKindId::Mxf4), Model::Fp32Seq, "mxf4 fp32-seq"},
            {make_mma_config(MmaKindId::Mxf4), Model::Exact, "mxf4 exact"}};
  // tuned first: if the deadline cuts the list, the rows that matter most are in
  for (gpu::GemmKernel k : {gpu::GemmKernel::Tuned, gpu::GemmKernel::Simple}) {
    for (const G& g : gs) {
      const std::string name = std::string("gemm emulation ") + g.name + " " + shape +
                               (k == gpu::GemmKernel::Tuned ? " (tuned)" : " (simple)");
      measure(name, [&] { return gpu::bench_gemm(g.cfg, g.m, M, N, K, quick ? 2 : 3, k); },
              [&](const gpu::BenchResult& r) {
                if (have_cublas)
                  std::printf("| %s | %.3f | | | %.3f | %.2f%% |\n", name.c_str(), r.seconds * 1e3,
                              flops / r.seconds / 1e12, 100.0 * cub.seconds / r.seconds);
                else
                  std::printf("| %s | %.3f | | | %.3f | (no cuBLAS) |\n", name.c_str(), r.seconds * 1e3,
                              flops / r.seconds / 1e12);
              });
    }
  }
  std::printf("\nbench: %d measured, %d failed, %d skipped, %.1f s\n", n_ok, n_failed, n_skipped, elapsed_s());
  return n_failed == 0 ? 0 : 1;
}
