// Quantizer throughput against a memcpy of the same input bytes in the same run.
//
//   build/tests/bench_quant --benchmark_min_time=0.3 [--benchmark_repetitions=3]
//
// Each quantizer reports elements/s; at exit a table gives each rate as a fraction of a memcpy
// rate (elements/s of copying 4 bytes per element), so the numbers are ratios measured together
// rather than absolute times that depend on the machine's load. Rows named "fake_*" time
// fake_quantize (quantize -> dequantize into a float32 output, 4 bytes in and 4 out per element,
// the traffic of the copy itself); "_axis0" rows block along the first axis. One-core rows (16 MiB input) are
// compared with a one-core memcpy; rows named "*_mt" quantize a 256 MiB tensor with
// QuantOptions::threads = all cores and are compared with memcpy_mt, the same bytes copied by as
// many threads, each its own contiguous slice. With repetitions the table uses each row's median.
#include <benchmark/benchmark.h>

#include "bench_ratio.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fp4sim/philox.hpp"
#include "fp4sim/quant.hpp"

namespace {

using fp4sim::bench::kCols;
using fp4sim::bench::kRows;

using fp4sim::bench::input;
using fp4sim::bench::BM_memcpy;

BENCHMARK(BM_memcpy)->Name("memcpy");

constexpr size_t kBigRows = 16384, kBigCols = 4096;  // 256 MiB of float32

unsigned all_cores() { return std::max(1u, std::thread::hardware_concurrency()); }

const std::vector<float>& big_input() {
  static const std::vector<float> x = [] {
    std::vector<float> v(kBigRows * kBigCols);
    const auto& small = input();  // tile the small input: cheap, and the values stay realistic
    for (size_t i = 0; i < v.size(); i += small.size()) std::copy(small.begin(), small.end(), v.begin() + i);
    return v;
  }();
  return x;
}

// The same bytes copied by nt threads, each its own contiguous slice.
void copy_mt(const std::vector<float>& x, std::vector<float>& y, unsigned nt) {
  std::vector<std::thread> pool;
  const size_t per = (x.size() + nt - 1) / nt;
  for (unsigned t = 0; t < nt; ++t) {
    const size_t a = std::min(x.size(), t * per), b = std::min(x.size(), a + per);
    pool.emplace_back([&, a, b] { std::memcpy(y.data() + a, x.data() + a, (b - a) * sizeof(float)); });
  }
  for (auto& th : pool) th.join();
  benchmark::DoNotOptimize(y.data());
  benchmark::ClobberMemory();
}

void BM_memcpy_mt(benchmark::State& st) {
  const auto& x = big_input();
  std::vector<float> y(x.size());
  for (auto _ : st) copy_mt(x, y, all_cores());
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * x.size()));
}
BENCHMARK(BM_memcpy_mt)->Name("memcpy_mt")->UseRealTime();

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

// The same through the one-off overload: a fresh Quantized (and workspace) per call, as a single
// CLI run meets it; NVFP4's block maxima and RHT output land on fresh pages each time.
void BM_quantize_fresh(benchmark::State& st, fp4sim::BlockFormat f, fp4sim::QuantOptions opt) {
  const auto& x = input();
  for (auto _ : st) {
    fp4sim::Quantized q = fp4sim::quantize(f, x, kRows, kCols, opt);
    benchmark::DoNotOptimize(q.codes.data());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * x.size()));
}

// Reads 64 MiB that nothing else touches (more than L2 + L3), untimed: lines a timed region left
// dirty in the caches are written back here rather than inside the next timed region.
void scrub_caches() {
  static std::vector<float> junk(size_t{16} << 20, 1.0f);
  float acc = 0.0f;
  for (size_t i = 0; i < junk.size(); i += 16) acc += junk[i];  // one load per 64-byte line
  benchmark::DoNotOptimize(acc);
}

// Each iteration copies the tensor (copy_mt) and runs the row's work on it, timed apart, each
// followed by scrub_caches(): the row's time is the work's, and its counter
// memcpy_items_per_second the copies' rate over the same iterations, the baseline the ratio table
// uses. On a VM whose memory speed drifts by tens of percent within seconds, pairing each run with
// a copy keeps the ratio steady where two separate rows would not; the scrub keeps one region from
// paying the other's write-backs (work whose ordinary stores leave up to L2 + L3 of dirty lines
// gets that much write-back untimed; memcpy and the large NVFP4 outputs use streaming stores and
// leave none). One untimed run first: its page faults on fresh output memory are not what a caller
// that reuses q (the CLI's repeated tensors, training steps) pays.
template <typename F>
void paired_mt(benchmark::State& st, F&& work) {
  using clock = std::chrono::steady_clock;
  const auto& x = big_input();
  std::vector<float> y(x.size());
  work();
  double t_copy = 0.0;
  for (auto _ : st) {
    scrub_caches();
    const auto t0 = clock::now();
    copy_mt(x, y, all_cores());
    const auto t1 = clock::now();
    scrub_caches();
    const auto t2 = clock::now();
    work();
    const auto t3 = clock::now();
    t_copy += std::chrono::duration<double>(t1 - t0).count();
    st.SetIterationTime(std::chrono::duration<double>(t3 - t2).count());
  }
  const double items = static_cast<double>(st.iterations()) * static_cast<double>(x.size());
  st.SetItemsProcessed(static_cast<int64_t>(items));
  st.counters["memcpy_items_per_second"] = t_copy > 0 ? items / t_copy : 0.0;
}

void BM_quantize_mt(benchmark::State& st, fp4sim::BlockFormat f, fp4sim::QuantOptions opt) {
  opt.threads = 0;  // all cores
  fp4sim::Quantized q;
  paired_mt(st, [&] {
    fp4sim::quantize(f, big_input(), kBigRows, kBigCols, opt, q);
    benchmark::DoNotOptimize(q.codes.data());
    benchmark::ClobberMemory();
  });
}

// Reading the tensor once on all cores (an OR of the bit patterns, which vectorizes), paired like
// the quantizers: what reads alone cost against a copy, for the traffic model of
// docs/performance.md (NVFP4 reads its input twice, MX and HiF4 once).
void BM_read_mt(benchmark::State& st) {
  const auto& x = big_input();
  paired_mt(st, [&] {
    const unsigned nt = all_cores();
    const size_t per = (x.size() + nt - 1) / nt;
    std::vector<uint32_t> acc(nt, 0);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < nt; ++t) {
      const size_t a = std::min(x.size(), t * per), b = std::min(x.size(), a + per);
      pool.emplace_back([&, a, b, t] {
        uint32_t m = 0;
        for (size_t i = a; i < b; ++i) m |= std::bit_cast<uint32_t>(x[i]);
        acc[t] = m;
      });
    }
    for (auto& th : pool) th.join();
    benchmark::DoNotOptimize(acc.data());
  });
}

// fake_quantize into a reused output (as a training step reuses its buffers).
void BM_fake(benchmark::State& st, fp4sim::BlockFormat f, fp4sim::QuantOptions opt, fp4sim::BlockAxis axis) {
  const auto& x = input();
  std::vector<float> y(x.size());
  for (auto _ : st) {
    fp4sim::fake_quantize(f, x.data(), kRows, kCols, opt, y.data(), axis);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * x.size()));
}

void BM_fake_mt(benchmark::State& st, fp4sim::BlockFormat f, fp4sim::QuantOptions opt) {
  opt.threads = 0;  // all cores
  std::vector<float> y(big_input().size());
  paired_mt(st, [&] {
    fp4sim::fake_quantize(f, big_input().data(), kBigRows, kBigCols, opt, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  });
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
BENCHMARK_CAPTURE(BM_quantize, nvfp4_sr, BlockFormat::Nvfp4, with(Rounding::Sr));
BENCHMARK_CAPTURE(BM_quantize, nvfp4_2d_rne, BlockFormat::Nvfp4, with(Rounding::Rne, true));
BENCHMARK_CAPTURE(BM_quantize, nvfp4_2d_sr, BlockFormat::Nvfp4, with(Rounding::Sr, true));
BENCHMARK_CAPTURE(BM_quantize, nvfp4_rht16_rne, BlockFormat::Nvfp4, with(Rounding::Rne, false, 16));
BENCHMARK_CAPTURE(BM_quantize, nvfp4_rht16_sr, BlockFormat::Nvfp4, with(Rounding::Sr, false, 16));
BENCHMARK_CAPTURE(BM_quantize, mxfp4_rne, BlockFormat::Mxfp4, with(Rounding::Rne));
BENCHMARK_CAPTURE(BM_quantize, mxfp4_sr, BlockFormat::Mxfp4, with(Rounding::Sr));
BENCHMARK_CAPTURE(BM_quantize, mxfp6_e2m3_rne, BlockFormat::Mxfp6E2M3, with(Rounding::Rne));
BENCHMARK_CAPTURE(BM_quantize, mxfp6_e2m3_sr, BlockFormat::Mxfp6E2M3, with(Rounding::Sr));
BENCHMARK_CAPTURE(BM_quantize, mxfp6_e3m2_rne, BlockFormat::Mxfp6E3M2, with(Rounding::Rne));
BENCHMARK_CAPTURE(BM_quantize, mxfp6_e3m2_sr, BlockFormat::Mxfp6E3M2, with(Rounding::Sr));
BENCHMARK_CAPTURE(BM_quantize, mxfp8_e4m3_rne, BlockFormat::Mxfp8E4M3, with(Rounding::Rne));
BENCHMARK_CAPTURE(BM_quantize, mxfp8_e4m3_sr, BlockFormat::Mxfp8E4M3, with(Rounding::Sr));
BENCHMARK_CAPTURE(BM_quantize, mxfp8_e5m2_rne, BlockFormat::Mxfp8E5M2, with(Rounding::Rne));
BENCHMARK_CAPTURE(BM_quantize, mxfp8_e5m2_sr, BlockFormat::Mxfp8E5M2, with(Rounding::Sr));
BENCHMARK_CAPTURE(BM_quantize, hif4_rne, BlockFormat::Hif4, with(Rounding::Rne));
BENCHMARK_CAPTURE(BM_quantize, hif4_sr, BlockFormat::Hif4, with(Rounding::Sr));
BENCHMARK_CAPTURE(BM_quantize_fresh, nvfp4_rne_fresh, BlockFormat::Nvfp4, with(Rounding::Rne));
BENCHMARK_CAPTURE(BM_quantize_fresh, nvfp4_rht16_rne_fresh, BlockFormat::Nvfp4, with(Rounding::Rne, false, 16));
BENCHMARK_CAPTURE(BM_quantize_fresh, nvfp4_rht16_sr_fresh, BlockFormat::Nvfp4, with(Rounding::Sr, false, 16));

constexpr auto kLast = fp4sim::BlockAxis::Last;
constexpr auto kFirst = fp4sim::BlockAxis::First;
BENCHMARK_CAPTURE(BM_fake, fake_nvfp4_rne, BlockFormat::Nvfp4, with(Rounding::Rne), kLast);
BENCHMARK_CAPTURE(BM_fake, fake_nvfp4_sr, BlockFormat::Nvfp4, with(Rounding::Sr), kLast);
BENCHMARK_CAPTURE(BM_fake, fake_nvfp4_2d_rne, BlockFormat::Nvfp4, with(Rounding::Rne, true), kLast);
BENCHMARK_CAPTURE(BM_fake, fake_nvfp4_rht16_rne, BlockFormat::Nvfp4, with(Rounding::Rne, false, 16), kLast);
BENCHMARK_CAPTURE(BM_fake, fake_nvfp4_rht16_sr, BlockFormat::Nvfp4, with(Rounding::Sr, false, 16), kLast);
BENCHMARK_CAPTURE(BM_fake, fake_mxfp4_rne, BlockFormat::Mxfp4, with(Rounding::Rne), kLast);
BENCHMARK_CAPTURE(BM_fake, fake_mxfp4_sr, BlockFormat::Mxfp4, with(Rounding::Sr), kLast);
BENCHMARK_CAPTURE(BM_fake, fake_mxfp4_rht16_sr, BlockFormat::Mxfp4, with(Rounding::Sr, false, 16), kLast);
BENCHMARK_CAPTURE(BM_fake, fake_mxfp6_e2m3_rne, BlockFormat::Mxfp6E2M3, with(Rounding::Rne), kLast);
BENCHMARK_CAPTURE(BM_fake, fake_mxfp6_e3m2_rne, BlockFormat::Mxfp6E3M2, with(Rounding::Rne), kLast);
BENCHMARK_CAPTURE(BM_fake, fake_mxfp8_e4m3_rne, BlockFormat::Mxfp8E4M3, with(Rounding::Rne), kLast);
BENCHMARK_CAPTURE(BM_fake, fake_mxfp8_e5m2_rne, BlockFormat::Mxfp8E5M2, with(Rounding::Rne), kLast);
BENCHMARK_CAPTURE(BM_fake, fake_hif4_rne, BlockFormat::Hif4, with(Rounding::Rne), kLast);
BENCHMARK_CAPTURE(BM_fake, fake_hif4_sr, BlockFormat::Hif4, with(Rounding::Sr), kLast);
BENCHMARK_CAPTURE(BM_fake, fake_hif4_rht16_rne, BlockFormat::Hif4, with(Rounding::Rne, false, 16), kLast);
BENCHMARK_CAPTURE(BM_fake, fake_mxfp4_rht64_sr, BlockFormat::Mxfp4, with(Rounding::Sr, false, 64), kLast);
BENCHMARK_CAPTURE(BM_fake, fake_hif4_rht64_rne, BlockFormat::Hif4, with(Rounding::Rne, false, 64), kLast);
BENCHMARK_CAPTURE(BM_fake, fake_nvfp4_rne_axis0, BlockFormat::Nvfp4, with(Rounding::Rne), kFirst);
BENCHMARK_CAPTURE(BM_fake, fake_nvfp4_rht16_sr_axis0, BlockFormat::Nvfp4, with(Rounding::Sr, false, 16), kFirst);
BENCHMARK_CAPTURE(BM_fake, fake_mxfp4_sr_axis0, BlockFormat::Mxfp4, with(Rounding::Sr), kFirst);
BENCHMARK_CAPTURE(BM_fake, fake_hif4_rne_axis0, BlockFormat::Hif4, with(Rounding::Rne), kFirst);
BENCHMARK_CAPTURE(BM_fake, fake_mxfp4_rht64_sr_axis0, BlockFormat::Mxfp4, with(Rounding::Sr, false, 64), kFirst);
BENCHMARK_CAPTURE(BM_fake, fake_hif4_rht64_rne_axis0, BlockFormat::Hif4, with(Rounding::Rne, false, 64), kFirst);

// The SR byte stream alone (sr_bytes: one byte per element, for 16 Mi elements) on each Philox path
// (set_philox_simd: 0 scalar, 1 AVX2 eight blocks per call, 2 AVX-512 sixteen), as elements/s.
void BM_sr_bytes(benchmark::State& st, int level) {
  const int was = fp4sim::set_philox_simd(level);
  if (fp4sim::set_philox_simd(level) != level) {
    fp4sim::set_philox_simd(was);
    st.SkipWithError("this CPU lacks the path");
    return;
  }
  std::vector<uint8_t> out(kRows * kCols);
  for (auto _ : st) {
    fp4sim::sr_bytes(7, 0, 0, out.size(), out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  fp4sim::set_philox_simd(was);
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * out.size()));
}
BENCHMARK_CAPTURE(BM_sr_bytes, scalar, 0);
BENCHMARK_CAPTURE(BM_sr_bytes, avx2, 1);
BENCHMARK_CAPTURE(BM_sr_bytes, avx512, 2);

// All cores, 256 MiB: wall-clock time of the quantizer alone (the work runs on other threads).
BENCHMARK_CAPTURE(BM_quantize_mt, nvfp4_rne_mt, BlockFormat::Nvfp4, with(Rounding::Rne))->UseManualTime();
BENCHMARK_CAPTURE(BM_quantize_mt, mxfp4_rne_mt, BlockFormat::Mxfp4, with(Rounding::Rne))->UseManualTime();
BENCHMARK_CAPTURE(BM_quantize_mt, hif4_rne_mt, BlockFormat::Hif4, with(Rounding::Rne))->UseManualTime();
BENCHMARK_CAPTURE(BM_quantize_mt, nvfp4_sr_rht16_mt, BlockFormat::Nvfp4, with(Rounding::Sr, false, 16))->UseManualTime();
BENCHMARK(BM_read_mt)->Name("read_mt")->UseManualTime();
BENCHMARK_CAPTURE(BM_fake_mt, fake_nvfp4_rne_mt, BlockFormat::Nvfp4, with(Rounding::Rne))->UseManualTime();
BENCHMARK_CAPTURE(BM_fake_mt, fake_nvfp4_sr_rht16_mt, BlockFormat::Nvfp4, with(Rounding::Sr, false, 16))->UseManualTime();
BENCHMARK_CAPTURE(BM_fake_mt, fake_mxfp4_rne_mt, BlockFormat::Mxfp4, with(Rounding::Rne))->UseManualTime();
BENCHMARK_CAPTURE(BM_fake_mt, fake_hif4_sr_mt, BlockFormat::Hif4, with(Rounding::Sr))->UseManualTime();


}  // namespace

int main(int argc, char** argv) { return fp4sim::bench::run_with_ratios(argc, argv, "quantizer"); }
