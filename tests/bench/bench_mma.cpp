// MMA model throughput, one thread (= per core): multiply-accumulates per second.
//
//   build/tests/bench_mma --benchmark_min_time=0.3
//
// "MAC/s" counts one element product per MAC (M * N * K per GEMM). BM_gemm runs gemm() (the
// vectorized paths of golden/src/mma_fast.cpp where the CPU has AVX2 + FMA), BM_gemm_reference the
// generic models it replaced (gemm_reference, the same bits), so one run shows both; BM_memcpy is
// the same-run machine baseline (bytes/s of a 16 MiB copy). Goals per core (issue 13): blackwell
// mxf4nvf4 and mxf4 >= 3 G MAC/s, mxf8f6f4 >= 1 G, ascend-hif4 >= 5 G, fp32-seq >= 1 G, exact >= 0.3 G.
// mma_dot measures the single-instruction API (decoding included). BM_gemm_train runs a GEMM of
// the shape `fp4sim train --gemm hardware` runs (2048 tokens x 128 outputs x 512 reduction).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "fp4sim/mma.hpp"

namespace {

constexpr size_t kM = 64, kN = 64, kK = 1024;

struct Operands {
  std::vector<uint8_t> a, b;
  std::vector<uint32_t> sa, sb;
  std::vector<float> c;
};

// Random element codes; scales near 1 so results stay finite (the fast path is the common one).
Operands make_operands(const fp4sim::MmaConfig& cfg, size_t m = kM, size_t n = kN, size_t k = kK) {
  std::mt19937_64 g(42);
  Operands o;
  o.a.resize(m * k);
  o.b.resize(n * k);
  // E4M3 NaN codes (0x7F / 0xFF) would make most results NaN early: replace them by 448.
  auto code = [&]() { const auto v = static_cast<uint8_t>(g()); return (v & 0x7F) == 0x7F ? uint8_t(v - 1) : v; };
  for (auto& x : o.a) x = code();
  for (auto& x : o.b) x = code();
  const size_t nb = k / static_cast<size_t>(cfg.block);
  o.sa.resize(m * nb);
  o.sb.resize(n * nb);
  auto scale = [&]() -> uint32_t {
    if (cfg.scale->name == "ue4m3") return 0x30 + static_cast<uint32_t>(g() % 24);
    if (cfg.scale->name == "ue8m0") return 120 + static_cast<uint32_t>(g() % 15);
    return (0xB0 + static_cast<uint32_t>(g() % 32)) | (static_cast<uint32_t>(g()) & 0xFFFFFF00u);
  };
  for (auto& s : o.sa) s = scale();
  for (auto& s : o.sb) s = scale();
  o.c.assign(m * n, 0.5f);
  return o;
}

void BM_gemm(benchmark::State& st, fp4sim::MmaKindId kind, fp4sim::Model model) {
  const fp4sim::MmaConfig cfg = fp4sim::make_mma_config(kind);
  const Operands o = make_operands(cfg);
  for (auto _ : st) {
    std::vector<float> d = fp4sim::gemm(cfg, model, kM, kN, kK, o.a, o.sa, o.b, o.sb, o.c, 1.0f, 1);
    benchmark::DoNotOptimize(d.data());
  }
  st.counters["MAC/s"] = benchmark::Counter(static_cast<double>(st.iterations()) * kM * kN * kK,
                                            benchmark::Counter::kIsRate);
}

void BM_gemm_train(benchmark::State& st, fp4sim::MmaKindId kind, fp4sim::Model model) {
  constexpr size_t M = 2048, N = 128, K = 512;
  const fp4sim::MmaConfig cfg = fp4sim::make_mma_config(kind);
  const Operands o = make_operands(cfg, M, N, K);
  for (auto _ : st) {
    std::vector<float> d = fp4sim::gemm(cfg, model, M, N, K, o.a, o.sa, o.b, o.sb, o.c, 1.0f, 1);
    benchmark::DoNotOptimize(d.data());
  }
  st.counters["MAC/s"] = benchmark::Counter(static_cast<double>(st.iterations()) * M * N * K,
                                            benchmark::Counter::kIsRate);
}

void BM_gemm_reference(benchmark::State& st, fp4sim::MmaKindId kind, fp4sim::Model model) {
  const fp4sim::MmaConfig cfg = fp4sim::make_mma_config(kind);
  const Operands o = make_operands(cfg);
  for (auto _ : st) {
    std::vector<float> d = fp4sim::gemm_reference(cfg, model, kM, kN, kK, o.a, o.sa, o.b, o.sb, o.c, 1.0f, 1);
    benchmark::DoNotOptimize(d.data());
  }
  st.counters["MAC/s"] = benchmark::Counter(static_cast<double>(st.iterations()) * kM * kN * kK,
                                            benchmark::Counter::kIsRate);
}

void BM_memcpy(benchmark::State& st) {
  const size_t n = size_t{16} << 20;
  std::vector<char> src(n, 1), dst(n);
  for (auto _ : st) {
    std::memcpy(dst.data(), src.data(), n);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(n));
}

void BM_mma_dot(benchmark::State& st, fp4sim::MmaKindId kind) {
  const fp4sim::MmaConfig cfg = fp4sim::make_mma_config(kind);
  const Operands o = make_operands(cfg);
  const size_t ik = static_cast<size_t>(cfg.kind->k);
  const size_t spi = ik / static_cast<size_t>(cfg.block);
  uint32_t acc = 0;
  size_t t = 0;
  const size_t steps = kK / ik;
  for (auto _ : st) {
    const size_t k0 = (t % steps) * ik;
    acc = fp4sim::mma_dot(cfg, o.a.data() + k0, o.b.data() + k0, o.sa.data() + k0 / ik * spi,
                          o.sb.data() + k0 / ik * spi, acc & 0x3FFFFFFFu);
    ++t;
  }
  benchmark::DoNotOptimize(acc);
  st.counters["MAC/s"] = benchmark::Counter(static_cast<double>(st.iterations()) * static_cast<double>(ik),
                                            benchmark::Counter::kIsRate);
}

using fp4sim::MmaKindId;
using fp4sim::Model;

BENCHMARK_CAPTURE(BM_gemm, blackwell_mxf4nvf4, MmaKindId::Mxf4Nvf4, Model::Blackwell)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gemm, blackwell_mxf4, MmaKindId::Mxf4, Model::Blackwell)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gemm, blackwell_mxf8f6f4, MmaKindId::Mxf8f6f4, Model::Blackwell)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gemm, ascend_hif4, MmaKindId::Hif4, Model::AscendHif4)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gemm, exact_mxf4nvf4, MmaKindId::Mxf4Nvf4, Model::Exact)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gemm, fp32seq_mxf4nvf4, MmaKindId::Mxf4Nvf4, Model::Fp32Seq)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gemm, exact_mxf8f6f4, MmaKindId::Mxf8f6f4, Model::Exact)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gemm, exact_hif4, MmaKindId::Hif4, Model::Exact)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gemm, fp32seq_mxf8f6f4, MmaKindId::Mxf8f6f4, Model::Fp32Seq)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gemm_train, blackwell_mxf4nvf4, MmaKindId::Mxf4Nvf4, Model::Blackwell)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gemm_train, blackwell_mxf4, MmaKindId::Mxf4, Model::Blackwell)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gemm_train, blackwell_mxf8f6f4, MmaKindId::Mxf8f6f4, Model::Blackwell)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gemm_train, ascend_hif4, MmaKindId::Hif4, Model::AscendHif4)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gemm_reference, blackwell_mxf4nvf4, MmaKindId::Mxf4Nvf4, Model::Blackwell)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gemm_reference, blackwell_mxf4, MmaKindId::Mxf4, Model::Blackwell)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gemm_reference, blackwell_mxf8f6f4, MmaKindId::Mxf8f6f4, Model::Blackwell)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gemm_reference, ascend_hif4, MmaKindId::Hif4, Model::AscendHif4)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gemm_reference, exact_mxf4nvf4, MmaKindId::Mxf4Nvf4, Model::Exact)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_gemm_reference, fp32seq_mxf4nvf4, MmaKindId::Mxf4Nvf4, Model::Fp32Seq)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_memcpy);
BENCHMARK_CAPTURE(BM_mma_dot, blackwell_mxf4nvf4, MmaKindId::Mxf4Nvf4);
BENCHMARK_CAPTURE(BM_mma_dot, ascend_hif4, MmaKindId::Hif4);

}  // namespace

BENCHMARK_MAIN();
