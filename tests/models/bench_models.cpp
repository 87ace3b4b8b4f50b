// Model run vs golden gemm on the same work (docs/models.md "Speed"): the cycle model with the
// datapath should cost at most ~3x the golden gemm it wraps (same host thread count), and the
// timing-only modes should sweep >= 10 (cycle) / >= 1000 (analytic) configurations per second.
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
  const Work w = make(kind, model, 512, 1024, 1024);
  for (auto _ : st) {
    auto d = fp4sim::gemm(w.cfg, w.model, w.M, w.N, w.K, w.a, w.sa, w.b, w.sb, {}, 1.0f, kThreads);
    benchmark::DoNotOptimize(d.data());
  }
}

fm::EngineKind engine_of(bool cube) { return cube ? fm::EngineKind::Cube : fm::EngineKind::TensorCore; }

// The default layer of `fp4sim run` (512 x 1024 x 1024) with the datapath: model time / golden gemm
// time on the same work and threads (goal in cycle mode: <= 3).
void BM_Model(benchmark::State& st, MmaKindId kind, Model model, bool cube, fm::Timing t) {
  const Work w = make(kind, model, 512, 1024, 1024);
  double golden = 0;
  for (int i = 0; i < 3; ++i) golden += golden_seconds(w);
  golden /= 3;
  double model_s = 0;
  int n = 0;
  fm::Workload wl = w.w();
  wl.threads = kThreads;
  fm::RunOptions o;
  o.timing = t;
  for (auto _ : st) {
    const auto t0 = std::chrono::steady_clock::now();
    const fm::Result r = fm::run(fm::default_params(engine_of(cube)), wl, o);
    model_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++n;
    benchmark::DoNotOptimize(r.d.data());
  }
  st.counters["ratio_vs_golden"] = (model_s / n) / golden;
}

// Timing only, the default layer: configurations per second (each with its mapping search; goals:
// cycle >= 10, analytic >= 1000), and for one simulated mapping the SystemC cost per simulated
// cycle per unit (units = 8 per active core + the memory system and the scheduler).
void BM_TimingOnly(benchmark::State& st, bool cube, fm::Timing t) {
  fm::Workload w;
  w.cfg = fp4sim::make_mma_config(cube ? MmaKindId::Hif4 : MmaKindId::Mxf4Nvf4);
  w.model = cube ? Model::AscendHif4 : Model::Blackwell;
  w.cfg.model = w.model;
  w.M = 512, w.N = 1024, w.K = 1024;
  w.timing_only = true;
  fm::RunOptions o;
  o.timing = t;
  const fm::Params p = fm::default_params(engine_of(cube));
  fm::Stats last;
  for (auto _ : st) {
    last = fm::run(p, w, o).stats;
    benchmark::DoNotOptimize(last.cycles);
  }
  st.counters["configs_per_s"] = benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
  if (t == fm::Timing::Cycle) {
    // One simulation of the chosen mapping alone.
    fm::Params one = p;
    fm::set_param(one, "mapper_candidates", "1");
    const auto& m = last.mapping;
    fm::set_param(one, "tile_m", std::to_string(m.tile_m));
    fm::set_param(one, "tile_n", std::to_string(m.tile_n));
    fm::set_param(one, "tile_k", std::to_string(m.tile_k));
    if (m.l1_k) fm::set_param(one, "l1_k", std::to_string(m.l1_k));
    if (m.stages) fm::set_param(one, "stages", std::to_string(m.stages));
    fm::set_param(one, "raster", m.raster == fm::Raster::AlongM ? "m" : "n");
    const int reps = 20;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) benchmark::DoNotOptimize(fm::run(one, w, o).stats.cycles);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
    const double units = 8.0 * static_cast<double>(std::min<uint64_t>(last.tiles, static_cast<uint64_t>(p.cores))) + 2.0;
    st.counters["sim_cycles"] = static_cast<double>(last.cycles);
    st.counters["ns_per_cycle"] = s * 1e9 / static_cast<double>(last.cycles);
    st.counters["ns_per_cycle_per_unit"] = s * 1e9 / static_cast<double>(last.cycles) / units;
  }
}

BENCHMARK_CAPTURE(BM_Golden, nvfp4, MmaKindId::Mxf4Nvf4, Model::Blackwell)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Model, tensor_core_nvfp4_cycle, MmaKindId::Mxf4Nvf4, Model::Blackwell, false, fm::Timing::Cycle)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Model, tensor_core_nvfp4_analytic, MmaKindId::Mxf4Nvf4, Model::Blackwell, false,
                  fm::Timing::Analytic)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Golden, hif4, MmaKindId::Hif4, Model::AscendHif4)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Model, cube_hif4_cycle, MmaKindId::Hif4, Model::AscendHif4, true, fm::Timing::Cycle)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TimingOnly, tensor_core_cycle, false, fm::Timing::Cycle)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TimingOnly, tensor_core_analytic, false, fm::Timing::Analytic)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_TimingOnly, cube_cycle, true, fm::Timing::Cycle)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TimingOnly, cube_analytic, true, fm::Timing::Analytic)->Unit(benchmark::kMicrosecond);

}  // namespace

int sc_main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
