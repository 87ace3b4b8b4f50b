// The RTL driver and the units' pipelines: latency = PipeDepth, one instruction per cycle,
// results independent of input bubbles and output back-pressure, the kind/model -> unit mapping,
// and GEMMs through the RTL equal to fp4sim::gemm.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "rtl_check.hpp"

namespace {

using fp4sim::MmaKindId;
using fp4sim::Model;
using fp4sim::rtl::Driver;
using fp4sim::rtl::Unit;
using rtlcheck::Case;
using rtlcheck::Rng;

// Random operands valid for unit u: n instructions, codes and scale codes uniform.
struct Batch {
  std::vector<uint8_t> a, b;
  std::vector<uint32_t> sa, sb, c, d;
};

Batch make_batch(Driver& drv, size_t n, Rng& rng) {
  const size_t k = static_cast<size_t>(drv.k()), s = static_cast<size_t>(drv.scales_per_op());
  Batch bt;
  bt.a.resize(n * k);
  bt.b.resize(n * k);
  bt.sa.resize(n * s);
  bt.sb.resize(n * s);
  bt.c.resize(n);
  bt.d.resize(n);
  for (auto& x : bt.a) x = static_cast<uint8_t>(rng.below(256));
  for (auto& x : bt.b) x = static_cast<uint8_t>(rng.below(256));
  const bool hif4 = drv.info().unit == Unit::Hif4Pe;
  for (auto& x : bt.sa) x = hif4 ? rng.u32() : rng.range(100, 150);
  for (auto& x : bt.sb) x = hif4 ? rng.u32() : rng.range(100, 150);
  for (auto& x : bt.c) x = rng.c_bits(0);
  return bt;
}

TEST(RtlDriver, LatencyIsPipeDepthAndThroughputOnePerCycle) {
  Rng rng(3);
  for (const auto& ui : fp4sim::rtl::all_units()) {
    Driver drv(ui.unit);
    Batch bt = make_batch(drv, 1000, rng);
    (void)drv.dot(bt.a.data(), bt.b.data(), bt.sa.data(), bt.sb.data(), bt.c[0]);
    EXPECT_EQ(drv.last_latency(), ui.pipe_depth) << ui.name;
    const uint64_t c0 = drv.cycles();
    drv.run(1000, bt.a.data(), bt.b.data(), bt.sa.data(), bt.sb.data(), bt.c.data(), bt.d.data());
    // Streaming: one instruction accepted per cycle, so n instructions take n + latency cycles.
    EXPECT_EQ(drv.cycles() - c0, 1000u + static_cast<uint64_t>(ui.pipe_depth)) << ui.name;
  }
}

// Random bubbles on the input and back-pressure on the output change nothing but the timing.
TEST(RtlDriver, HandshakeStallsDoNotChangeResults) {
  Rng rng(5);
  for (const auto& ui : fp4sim::rtl::all_units()) {
    Driver plain(ui.unit);
    Driver stalled(ui.unit, {std::string(), 0xC0FFEEu});
    Batch bt = make_batch(plain, 20000, rng);
    std::vector<uint32_t> d2(bt.c.size());
    plain.run(bt.c.size(), bt.a.data(), bt.b.data(), bt.sa.data(), bt.sb.data(), bt.c.data(), bt.d.data());
    const uint64_t c0 = stalled.cycles();
    stalled.run(bt.c.size(), bt.a.data(), bt.b.data(), bt.sa.data(), bt.sb.data(), bt.c.data(), d2.data());
    EXPECT_GT(stalled.cycles() - c0, 25000u) << ui.name << ": the stall pattern did not stall";
    size_t diff = 0, gold_diff = 0;
    const auto cfg = fp4sim::rtl::golden_config(ui.unit);
    const size_t k = static_cast<size_t>(plain.k()), s = static_cast<size_t>(plain.scales_per_op());
    for (size_t i = 0; i < d2.size(); ++i) {
      diff += d2[i] != bt.d[i];
      gold_diff += fp4sim::mma_dot(cfg, bt.a.data() + i * k, bt.b.data() + i * k, bt.sa.data() + i * s,
                                   bt.sb.data() + i * s, bt.c[i]) != d2[i];
    }
    EXPECT_EQ(diff, 0u) << ui.name;
    EXPECT_EQ(gold_diff, 0u) << ui.name;
  }
}

TEST(RtlDriver, UnitForMapsKindsAndModels) {
  for (const auto& ui : fp4sim::rtl::all_units()) {
    const auto u = fp4sim::rtl::unit_for(fp4sim::rtl::golden_config(ui.unit));
    ASSERT_TRUE(u.has_value()) << ui.name;
    EXPECT_EQ(*u, ui.unit);
    fp4sim::rtl::Unit parsed;
    ASSERT_TRUE(fp4sim::rtl::parse_unit(ui.name, parsed));
    EXPECT_EQ(parsed, ui.unit);
  }
  // kind mxf4 (UE8M0 / 32) runs on the mxf4nvf4 datapath.
  EXPECT_EQ(fp4sim::rtl::unit_for(fp4sim::make_mma_config(MmaKindId::Mxf4)), Unit::BsDotK64Ue8m0B32);
  // mxf8f6f4 with any element formats.
  EXPECT_EQ(fp4sim::rtl::unit_for(fp4sim::make_mma_config(MmaKindId::Mxf8f6f4, &fp4sim::kE2M1, &fp4sim::kE5M2)),
            Unit::BsDotK32);
  // No unit: other models, or HiF4 with a moved rounding point.
  auto cfg = fp4sim::make_mma_config(MmaKindId::Mxf4Nvf4);
  cfg.model = Model::Fp32Seq;
  EXPECT_FALSE(fp4sim::rtl::unit_for(cfg).has_value());
  auto h = fp4sim::make_mma_config(MmaKindId::Hif4);
  h.hif4_round_groups = 2;
  EXPECT_FALSE(fp4sim::rtl::unit_for(h).has_value());
  EXPECT_THROW(Driver{h}, std::invalid_argument);
  // The exact model on UE8M0 has no unit (nvfp4_pe64 is UE4M3 / 16 only).
  auto e = fp4sim::make_mma_config(MmaKindId::Mxf4);
  e.model = Model::Exact;
  EXPECT_FALSE(fp4sim::rtl::unit_for(e).has_value());
}

// Driver::gemm chains instructions along K exactly as the golden GEMM does.
TEST(RtlDriver, GemmEqualsGoldenGemm) {
  Rng rng(11);
  struct G {
    fp4sim::MmaConfig cfg;
    size_t K;
  };
  std::vector<G> gs;
  gs.push_back({fp4sim::make_mma_config(MmaKindId::Mxf4Nvf4), 256});
  gs.push_back({fp4sim::make_mma_config(MmaKindId::Mxf4), 192});
  gs.push_back({fp4sim::make_mma_config(MmaKindId::Mxf8f6f4, &fp4sim::kE2M3, &fp4sim::kE4M3), 128});
  gs.push_back({fp4sim::make_mma_config(MmaKindId::Hif4), 512});
  auto nv = fp4sim::make_mma_config(MmaKindId::Mxf4Nvf4);
  nv.model = Model::Exact;
  gs.push_back({nv, 64});
  for (const auto& g : gs) {
    const size_t M = 7, N = 5, K = g.K;
    const size_t nblk = K / static_cast<size_t>(g.cfg.block);
    const uint32_t emask = (1u << g.cfg.elem_a->bits) - 1u;
    std::vector<uint8_t> a(M * K), b(N * K);
    std::vector<uint32_t> sa(M * nblk), sb(N * nblk);
    std::vector<float> c(M * N);
    for (auto& x : a) x = static_cast<uint8_t>(rng.u32() & emask);
    for (auto& x : b) x = static_cast<uint8_t>(rng.u32() & emask);
    const bool hif4 = g.cfg.kind->id == MmaKindId::Hif4;
    for (auto& x : sa) x = hif4 ? (rng.u32() & 0xFFFFFF00u) | static_cast<uint32_t>(rng.range(170, 200)) : rng.range(115, 130);
    for (auto& x : sb) x = hif4 ? (rng.u32() & 0xFFFFFF00u) | static_cast<uint32_t>(rng.range(170, 200)) : rng.range(115, 130);
    for (auto& x : c) x = static_cast<float>(rng.range(-1000, 1000)) / 8.0f;
    const float alpha = 0.75f;
    const auto gold = fp4sim::gemm(g.cfg, g.cfg.model, M, N, K, a, std::span<const uint32_t>(sa), b,
                                   std::span<const uint32_t>(sb), c, alpha, 1);
    Driver drv(g.cfg);
    const auto got = drv.gemm(M, N, K, a, sa, b, sb, c, alpha);
    ASSERT_EQ(got.size(), gold.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(rtlcheck::fb(got[i]), rtlcheck::fb(gold[i])) << drv.info().name << " output " << i;
    }
  }
  // nvfp4_pe64 rounds once per 64: a longer K would differ from the exact model.
  Driver drv(nv);
  std::vector<uint8_t> a(128), b(128);
  std::vector<uint32_t> s(8, 0x38);
  EXPECT_THROW(drv.gemm(1, 1, 128, a, s, b, s, {}), std::invalid_argument);
}

TEST(RtlDriver, WaveformDump) {
  const std::string path = (std::filesystem::temp_directory_path() / "fp4sim_rtl_wave_test.fst").string();
  std::filesystem::remove(path);
  if (!fp4sim::rtl::trace_supported()) {
    EXPECT_THROW(Driver(Unit::Hif4Pe, {path, 0}), std::runtime_error);
    return;
  }
  {
    Driver drv(Unit::Hif4Pe, {path, 0});
    std::array<uint8_t, 64> a{}, b{};
    a.fill(1);
    b.fill(1);
    const uint32_t one = 0xC0;
    EXPECT_EQ(drv.dot(a.data(), b.data(), &one, &one, 0u), rtlcheck::fb(4.0f));
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_GT(std::filesystem::file_size(path), 100u);
  std::filesystem::remove(path);
}

}  // namespace
