// Random Hadamard transform throughput, one core, against a memcpy of the same bytes in the same run.
//
//   build/tests/bench_rht --benchmark_min_time=0.3 [--benchmark_repetitions=3]
//
// Rows: the vector path (rht_apply_to, out of place, and rht_apply in place) for N = 16 and 64,
// N = 16 with BF16 output and seeded signs, N = 32 (irrational scale), and the scalar reference
// path for N = 16. Input: 1024 x 4096 N(0,1) floats (16 MiB, larger than the caches). At exit a
// table gives each rate (the median with repetitions) as a fraction of the memcpy rate, as
// bench_quant does.
#include <benchmark/benchmark.h>

#include "bench_ratio.hpp"

#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fp4sim/hadamard.hpp"

namespace {

using fp4sim::bench::kCols;
using fp4sim::bench::kRows;

using fp4sim::bench::input;
using fp4sim::bench::BM_memcpy;

BENCHMARK(BM_memcpy)->Name("memcpy");

// Out of place: reads x, writes y (the same traffic as the memcpy).
void BM_rht_to(benchmark::State& st, int n, bool seeded, bool bf16) {
  const auto& x = input();
  std::vector<float> y(x.size());
  const auto d = fp4sim::rht_signs(n, seeded, 1);
  for (auto _ : st) {
    fp4sim::rht_apply_to(x, y, kCols, n, d, bf16);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * x.size()));
}

// In place on a working copy (the transform is orthogonal, so repeating it keeps the data N(0,1)-like).
void BM_rht_inplace(benchmark::State& st, int n, bool reference) {
  std::vector<float> y = input();
  const auto d = fp4sim::rht_signs(n);
  for (auto _ : st) {
    if (reference) {
      fp4sim::rht_apply_reference(y, kCols, n, d, false, false);
    } else {
      fp4sim::rht_apply(y, kCols, n, d);
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * y.size()));
}

BENCHMARK_CAPTURE(BM_rht_to, rht16_to, 16, false, false);
BENCHMARK_CAPTURE(BM_rht_to, rht16_to_bf16_seeded, 16, true, true);
BENCHMARK_CAPTURE(BM_rht_to, rht32_to, 32, true, false);
BENCHMARK_CAPTURE(BM_rht_to, rht64_to, 64, true, false);
BENCHMARK_CAPTURE(BM_rht_inplace, rht16_inplace, 16, false);
BENCHMARK_CAPTURE(BM_rht_inplace, rht16_inplace_reference, 16, true);


}  // namespace

int main(int argc, char** argv) { return fp4sim::bench::run_with_ratios(argc, argv, "transform"); }
