// Model run vs golden gemm on the same work (docs/models.md "Speed"): the SystemC models must cost
// at most ~2x the golden MMA they wrap. Both sides use the same host thread count.
// The ratio is printed as the counter "ratio_vs_golden" of the model benchmarks (the golden time is
// measured once per configuration, before the model runs).
#include <benchmark/benchmark.h>
#include <systemc.h>

#include <chrono>
#include <random>
#include <vector>

#include "fp4sim/mma.hpp"
#include "fp4sim/models/models.hpp"

namespace {

namespace fm = fp4sim::models;
using fp4sim::MmaKindId;
using fp4sim::Model;

struct Work {
  fp4sim::MmaConfig cfg;
  Model model;
  size_t M, N, K;
  std::vector<uint8_t> a, b;
  std::vector<uint32_t> sa, sb;
  fm::Workload w() const {
    fm::Workload x;
    x.cfg = cfg;
    x.model = model;
    x.M = M;
    x.N = N;
    x.K = K;
    x.a = a;
    x.b = b;
    x.sa = sa;
    x.sb = sb;
    return x;
  }
};

Work make(MmaKindId kind, Model model, size_t M, size_t N, size_t K) {
  Work w{fp4sim::make_mma_config(kind), model, M, N, K, {}, {}, {}, {}};
  std::mt19937 g(7);
  w.a.resize(M * K);
  w.b.resize(N * K);
  for (auto& x : w.a) x = static_cast<uint8_t>(g() & 0xF);
  for (auto& x : w.b) x = static_cast<uint8_t>(g() & 0xF);
  const size_t nb = K / static_cast<size_t>(w.cfg.block);
  w.sa.resize(M * nb);
  w.sb.resize(N * nb);
  for (auto* v : {&w.sa, &w.sb})
    for (auto& x : *v) x = kind == MmaKindId::Hif4 ? 48u : (kind == MmaKindId::Mxf4 ? 127u : 0x38u);
  return w;
}

constexpr unsigned kThreads = 2;

double golden_seconds(const Work& w) {
  const auto t0 = std::chrono::steady_clock::now();
  auto d = fp4sim::gemm(w.cfg, w.model, w.M, w.N, w.K, w.a, w.sa, w.b, w.sb, {}, 1.0f, kThreads);
  benchmark::DoNotOptimize(d.data());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void BM_Golden(benchmark::State& st, MmaKindId kind, Model model) {
  const Work w = make(kind, model, 512, 512, 1024);
  for (auto _ : st) {
    auto d = fp4sim::gemm(w.cfg, w.model, w.M, w.N, w.K, w.a, w.sa, w.b, w.sb, {}, 1.0f, kThreads);
    benchmark::DoNotOptimize(d.data());
  }
}

void BM_Model(benchmark::State& st, MmaKindId kind, Model model, bool cube) {
  const Work w = make(kind, model, 512, 512, 1024);
  double golden = 0;
  for (int i = 0; i < 3; ++i) golden += golden_seconds(w);
  golden /= 3;
  double model_s = 0;
  int n = 0;
  for (auto _ : st) {
    const auto t0 = std::chrono::steady_clock::now();
    fm::Result r;
    if (cube) {
      fm::CubeParams p;
      p.threads = kThreads;
      r = fm::run_cube(p, w.w());
    } else {
      fm::TensorCoreParams p;
      p.threads = kThreads;
      r = fm::run_tensor_core(p, w.w());
    }
    model_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++n;
    benchmark::DoNotOptimize(r.d.data());
  }
  st.counters["ratio_vs_golden"] = (model_s / n) / golden;
}

BENCHMARK_CAPTURE(BM_Golden, nvfp4, MmaKindId::Mxf4Nvf4, Model::Blackwell)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Model, tensor_core_nvfp4, MmaKindId::Mxf4Nvf4, Model::Blackwell, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Golden, hif4, MmaKindId::Hif4, Model::AscendHif4)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Model, cube_hif4, MmaKindId::Hif4, Model::AscendHif4, true)->Unit(benchmark::kMillisecond);

}  // namespace

int sc_main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
