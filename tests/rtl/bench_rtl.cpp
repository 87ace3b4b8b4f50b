// Verilated simulation speed of every RTL unit, single thread: instructions streamed back to back
// through fp4sim::rtl::Driver (valid every cycle, no back-pressure), so one instruction = one
// clock cycle plus the pipeline fill. Counters: cycles/s (clock cycles simulated per second,
// operand packing and handshake included) and MAC/s (cycles/s times the unit's K).
// Goal (issue 4): >= 2 M cycles/s for hif4_pe.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "rtl_driver.hpp"

namespace {

using fp4sim::rtl::Driver;
using fp4sim::rtl::Unit;

void BM_RtlUnit(benchmark::State& st, Unit u) {
  Driver drv(u);
  const size_t n = 4096;
  const size_t k = static_cast<size_t>(drv.k()), s = static_cast<size_t>(drv.scales_per_op());
  std::mt19937 g(7);
  std::vector<uint8_t> a(n * k), b(n * k);
  std::vector<uint32_t> sa(n * s), sb(n * s), c(n), d(n);
  for (auto& x : a) x = static_cast<uint8_t>(g());
  for (auto& x : b) x = static_cast<uint8_t>(g());
  const bool hif4 = u == Unit::Hif4Pe;
  for (auto& x : sa) x = hif4 ? (g() & 0xFFFFFF00u) | (150u + g() % 60u) : 110u + g() % 30u;
  for (auto& x : sb) x = hif4 ? (g() & 0xFFFFFF00u) | (150u + g() % 60u) : 110u + g() % 30u;
  for (auto& x : c) x = 0x3F800000u + (g() & 0xFFFFu);
  uint64_t cycles = 0;
  for (auto _ : st) {
    const uint64_t c0 = drv.cycles();
    drv.run(n, a.data(), b.data(), sa.data(), sb.data(), c.data(), d.data());
    cycles += drv.cycles() - c0;
    benchmark::DoNotOptimize(d.data());
  }
  st.counters["cycles/s"] = benchmark::Counter(static_cast<double>(cycles), benchmark::Counter::kIsRate);
  st.counters["MAC/s"] =
      benchmark::Counter(static_cast<double>(st.iterations() * n * k), benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(BM_RtlUnit, hif4_pe, Unit::Hif4Pe)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RtlUnit, nvfp4_pe64, Unit::Nvfp4Pe64)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RtlUnit, bs_dot_k64_ue4m3_b16, Unit::BsDotK64Ue4m3B16)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RtlUnit, bs_dot_k64_ue8m0_b32, Unit::BsDotK64Ue8m0B32)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RtlUnit, bs_dot_k64_ue8m0_b16, Unit::BsDotK64Ue8m0B16)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RtlUnit, bs_dot_k64_ue4m3_b32, Unit::BsDotK64Ue4m3B32)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RtlUnit, bs_dot_k32, Unit::BsDotK32)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
