// Shared by the throughput benchmarks (bench_quant, bench_rht): the 16 MiB N(0,1) input, the
// same-run memcpy baseline and the reporter that prints every rate as a fraction of it. Speed is
// only ever stated against a baseline measured in the same run (docs/performance.md).
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace fp4sim::bench {

inline constexpr size_t kRows = 1024, kCols = 4096;  // 16 MiB of float32: larger than the caches

inline const std::vector<float>& input() {
  static const std::vector<float> x = [] {
    std::vector<float> v(kRows * kCols);
    std::mt19937 g(12345);
    std::normal_distribution<float> n(0.0f, 1.0f);
    for (auto& e : v) e = n(g);
    return v;
  }();
  return x;
}

// One-core baseline: copies input() (the same bytes every row reads).
inline void BM_memcpy(benchmark::State& st) {
  const auto& x = input();
  std::vector<float> y(x.size());
  for (auto _ : st) {
    std::memcpy(y.data(), x.data(), x.size() * sizeof(float));
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * x.size()));
}

// Collects items/s per benchmark (the median with --benchmark_repetitions, else the one run) and
// prints the ratio table after the console output: rows with a memcpy_items_per_second counter
// against that paired baseline, other rows named "*_mt" (and memcpy_mt itself) against the
// all-core "memcpy_mt", the rest against the one-core "memcpy".
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  explicit RatioReporter(const char* title) : title_(title) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& r : runs) {
      auto it = r.counters.find("items_per_second");
      if (it == r.counters.end()) continue;
      const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
      if (r.run_type != Run::RT_Iteration && !median) continue;
      std::string name = r.run_name.function_name + (r.run_name.args.empty() ? "" : "/" + r.run_name.args);
      if (median || !medians_.count(name)) {
        rates_[name] = it->second;
        auto paired = r.counters.find("memcpy_items_per_second");
        if (paired != r.counters.end()) paired_[name] = paired->second;
      }
      if (median) medians_.insert(name);
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\n%-36s %14s %10s  %s\n", title_, "Melem/s", "vs memcpy", "baseline");
    for (const auto& [name, rate] : rates_) {
      if (auto p = paired_.find(name); p != paired_.end() && p->second > 0) {  // a copy in every iteration
        std::printf("%-36s %14.1f %9.1f%%  %s\n", name.c_str(), rate / 1e6, 100.0 * rate / p->second,
                    "paired memcpy_mt");
        continue;
      }
      const bool mt = name.find("_mt") != std::string::npos;
      const char* base_name = mt ? "memcpy_mt" : "memcpy";
      auto m = rates_.find(base_name);
      if (m == rates_.end() || m->second <= 0) continue;
      std::printf("%-36s %14.1f %9.1f%%  %s\n", name.c_str(), rate / 1e6, 100.0 * rate / m->second, base_name);
    }
  }

 private:
  const char* title_;
  std::map<std::string, double> rates_;
  std::map<std::string, double> paired_;  // rows that time their own copy baseline (memcpy_items_per_second)
  std::set<std::string> medians_;
};

// main() of a benchmark that reports through RatioReporter.
inline int run_with_ratios(int argc, char** argv, const char* title) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter rep(title);
  benchmark::RunSpecifiedBenchmarks(&rep);
  benchmark::Shutdown();
  return 0;
}

}  // namespace fp4sim::bench
