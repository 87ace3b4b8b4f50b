// Quantizer throughput, one core, against a memcpy of the same input bytes in the same run.
//
//   build/tests/bench/bench_quant --benchmark_min_time=0.5
//
// Each quantizer reports elements/s; at exit a table gives each rate as a fraction of the
// memcpy rate (elements/s of copying 4 bytes per element), so the numbers are ratios measured
// together rather than absolute times that depend on the machine's load.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fp4sim/quant.hpp"

namespace {

constexpr size_t kRows = 1024, kCols = 4096;  // 16 MiB of float32: larger than the caches

const std::vector<float>& input() {
  static const std::vector<float> x = [] {
    std::vector<float> v(kRows * kCols);
    std::mt19937 g(12345);
    std::normal_distribution<float> n(0.0f, 1.0f);
    for (auto& e : v) e = n(g);
    return v;
  }();
  return x;
}

void BM_memcpy(benchmark::State& st) {
  const auto& x = input();
  std::vector<float> y(x.size());
  for (auto _ : st) {
    std::memcpy(y.data(), x.data(), x.size() * sizeof(float));
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * x.size()));
}
BENCHMARK(BM_memcpy)->Name("memcpy");

void BM_quantize(benchmark::State& st, fp4sim::BlockFormat f, fp4sim::QuantOptions opt) {
  const auto& x = input();
  fp4sim::Quantized q;
  for (auto _ : st) {
    fp4sim::quantize(f, x, kRows, kCols, opt, q);
    benchmark::DoNotOptimize(q.codes.data());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * x.size()));
}

fp4sim::QuantOptions with(fp4sim::Rounding r, bool two_d = false, int rht = 0) {
  fp4sim::QuantOptions o;
  o.rounding = r;
  o.two_d = two_d;
  o.rht = rht;
  o.seed = 7;
  return o;
}

using fp4sim::BlockFormat;
using fp4sim::Rounding;
BENCHMARK_CAPTURE(BM_quantize, nvfp4_rne, BlockFormat::Nvfp4, with(Rounding::Rne));
BENCHMARK_CAPTURE(BM_quantize, nvfp4_2d_rne, BlockFormat::Nvfp4, with(Rounding::Rne, true));
BENCHMARK_CAPTURE(BM_quantize, nvfp4_sr, BlockFormat::Nvfp4, with(Rounding::Sr));
BENCHMARK_CAPTURE(BM_quantize, nvfp4_rht16_rne, BlockFormat::Nvfp4, with(Rounding::Rne, false, 16));
BENCHMARK_CAPTURE(BM_quantize, mxfp4_rne, BlockFormat::Mxfp4, with(Rounding::Rne));
BENCHMARK_CAPTURE(BM_quantize, mxfp4_sr, BlockFormat::Mxfp4, with(Rounding::Sr));
BENCHMARK_CAPTURE(BM_quantize, mxfp6_e2m3_rne, BlockFormat::Mxfp6E2M3, with(Rounding::Rne));
BENCHMARK_CAPTURE(BM_quantize, mxfp8_e4m3_rne, BlockFormat::Mxfp8E4M3, with(Rounding::Rne));
BENCHMARK_CAPTURE(BM_quantize, hif4_rne, BlockFormat::Hif4, with(Rounding::Rne));
BENCHMARK_CAPTURE(BM_quantize, hif4_sr, BlockFormat::Hif4, with(Rounding::Sr));

// Collects items/s per benchmark and prints the ratio table after the normal console output.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& r : runs) {
      auto it = r.counters.find("items_per_second");
      if (it != r.counters.end() && r.run_type == Run::RT_Iteration) rates_[r.benchmark_name()] = it->second;
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    auto m = rates_.find("memcpy");
    if (m == rates_.end() || m->second <= 0) return;
    std::printf("\n%-32s %14s %10s\n", "quantizer", "Melem/s", "vs memcpy");
    for (const auto& [name, rate] : rates_) {
      std::printf("%-32s %14.1f %9.1f%%\n", name.c_str(), rate / 1e6, 100.0 * rate / m->second);
    }
  }

 private:
  std::map<std::string, double> rates_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  benchmark::Shutdown();
  return 0;
}
