// Tests of the SystemC tensor-core and cube models (models/, docs/models.md).
//
// Every functional test compares every output element's bits with golden gemm on the same codes.
// Timing tests use parameter sets where the schedule can be derived by hand (derivations inline).
// CTest runs each test in its own process (one SystemC elaboration per process, TOOLCHAIN.md);
// the MultipleJobs test checks that several jobs in one elaboration also work (what `fp4sim run`
// and `fp4sim whatif` rely on).
#include <gtest/gtest.h>
#include <systemc.h>

#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "fp4sim/format.hpp"
#include "fp4sim/mma.hpp"
#include "fp4sim/models/models.hpp"

namespace {

using fp4sim::MmaConfig;
using fp4sim::MmaKindId;
using fp4sim::Model;
namespace fm = fp4sim::models;

// Operands of one GEMM with seeded random codes. Scale codes stay in a range where no product
// overflows, but include zeros / subnormals (UE4M3) to exercise the alignment corners.
struct Problem {
  MmaConfig cfg;
  Model model = Model::Blackwell;
  size_t M = 0, N = 0, K = 0;
  std::vector<uint8_t> a, b;
  std::vector<uint32_t> sa, sb;
  std::vector<float> c;

  fm::Workload workload() const {
    fm::Workload w;
    w.cfg = cfg;
    w.model = model;
    w.M = M;
    w.N = N;
    w.K = K;
    w.a = a;
    w.b = b;
    w.sa = sa;
    w.sb = sb;
    w.c = c;
    return w;
  }
  std::vector<float> golden() const { return fp4sim::gemm(cfg, model, M, N, K, a, sa, b, sb, c, 1.0f, 2); }
};

uint32_t random_scale(const MmaConfig& cfg, std::mt19937& g) {
  if (cfg.kind->scale_word32) {  // HiF4 word: E6M2 around 1, random level bits
    return (std::uniform_int_distribution<uint32_t>(40, 60)(g)) | (g() & 0xFFFFFF00u);
  }
  if (cfg.scale == &fp4sim::kUE8M0) return std::uniform_int_distribution<uint32_t>(118, 134)(g);
  return std::uniform_int_distribution<uint32_t>(0, 0x58)(g);  // UE4M3: 0 .. 8.0, incl. subnormals
}

uint8_t random_code(const fp4sim::ElemFormat& f, std::mt19937& g) {
  for (;;) {
    const uint8_t c = static_cast<uint8_t>(g() & ((1u << f.bits) - 1));
    if (f.name == "e4m3" && (c & 0x7F) == 0x7F) continue;  // NaN codes: tested in golden
    if (f.name == "e5m2" && (c & 0x7C) == 0x7C) continue;
    return c;
  }
}

Problem make_problem(MmaKindId kind, Model model, size_t M, size_t N, size_t K, bool with_c, uint32_t seed,
                     const fp4sim::ElemFormat* ea = nullptr, const fp4sim::ElemFormat* eb = nullptr) {
  Problem p;
  p.cfg = fp4sim::make_mma_config(kind, ea, eb);
  p.cfg.model = model;
  p.model = model;
  p.M = M;
  p.N = N;
  p.K = K;
  std::mt19937 g(seed);
  p.a.resize(M * K);
  p.b.resize(N * K);
  for (auto& x : p.a) x = random_code(*p.cfg.elem_a, g);
  for (auto& x : p.b) x = random_code(*p.cfg.elem_b, g);
  const size_t nblk = K / static_cast<size_t>(p.cfg.block);
  p.sa.resize(M * nblk);
  p.sb.resize(N * nblk);
  for (auto& x : p.sa) x = random_scale(p.cfg, g);
  for (auto& x : p.sb) x = random_scale(p.cfg, g);
  if (with_c) {
    std::normal_distribution<float> nd(0.0f, 4.0f);
    p.c.resize(M * N);
    for (auto& x : p.c) x = nd(g);
  }
  return p;
}

// Element-by-element bit comparison; returns the number of mismatches (and reports the first as a
// test failure unless `expected` says mismatches are the point).
size_t mismatches(const std::vector<float>& got, const std::vector<float>& want, bool expected = false) {
  EXPECT_EQ(got.size(), want.size());
  size_t bad = 0;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    if (std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(want[i])) {
      if (bad == 0 && !expected)
        ADD_FAILURE() << "first mismatch at " << i << ": got " << got[i] << " want " << want[i];
      ++bad;
    }
  }
  return bad;
}

uint64_t stall_sum(const fm::Stats& s) {
  uint64_t t = 0;
  for (const auto& [k, v] : s.stalls) t += v;
  return t;
}

// Invariants every run must satisfy.
void check_stats(const fm::Stats& s, size_t M, size_t N, size_t K) {
  EXPECT_EQ(s.macs, static_cast<uint64_t>(M) * N * K);
  EXPECT_EQ(s.cycles, s.compute_cycles + stall_sum(s));  // every cycle computes or is charged to a cause
  EXPECT_EQ(s.sim_time_ps, s.cycles * fm::kClockPs);      // the SystemC clock moved exactly that far
  EXPECT_GT(s.utilization(), 0.0);
  EXPECT_LE(s.utilization(), 1.0);
  EXPECT_EQ(s.bytes_of("global_store"), static_cast<uint64_t>(M) * N * 4);
}

fm::TensorCoreParams fast_tc() {  // bandwidths so high that every transfer takes one cycle
  fm::TensorCoreParams p;
  p.load_bytes_per_cycle = 1 << 24;
  p.smem_read_bytes_per_cycle = 1 << 24;
  p.store_bytes_per_cycle = 1 << 24;
  p.threads = 2;
  return p;
}

// ---------------------------------------------------------------------------------------------
// Tensor core: bit-exact on every kind, with partial M and N tiles and C on / off

struct TcCase {
  MmaKindId kind;
  const fp4sim::ElemFormat* ea;
  const fp4sim::ElemFormat* eb;
};

void tc_exact(const TcCase& tc, bool with_c, uint32_t seed) {
  const int kin = fp4sim::mma_kind(tc.kind).k;
  // M = 200: one full and one partial 128-row tile; N = 72 with tile_n 32: two full + one 8-wide.
  const Problem p = make_problem(tc.kind, Model::Blackwell, 200, 72, static_cast<size_t>(5 * kin), with_c, seed,
                                 tc.ea, tc.eb);
  fm::TensorCoreParams prm;
  prm.tile_n = 32;
  prm.threads = 2;
  const fm::Result r = fm::run_tensor_core(prm, p.workload());
  EXPECT_EQ(mismatches(r.d, p.golden()), 0u);
  check_stats(r.stats, p.M, p.N, p.K);
  EXPECT_EQ(r.stats.instructions, 2u * 3u * 5u);  // 2 M tiles x 3 N tiles x 5 K steps
}

TEST(TensorCore, Mxf4Nvf4BitExact) {
  tc_exact({MmaKindId::Mxf4Nvf4, nullptr, nullptr}, false, 1);
  tc_exact({MmaKindId::Mxf4Nvf4, nullptr, nullptr}, true, 2);
}
TEST(TensorCore, Mxf4BitExact) {
  tc_exact({MmaKindId::Mxf4, nullptr, nullptr}, false, 3);
  tc_exact({MmaKindId::Mxf4, nullptr, nullptr}, true, 4);
}
TEST(TensorCore, Mxf8f6f4BitExact) {
  tc_exact({MmaKindId::Mxf8f6f4, &fp4sim::kE4M3, &fp4sim::kE4M3}, true, 5);
  tc_exact({MmaKindId::Mxf8f6f4, &fp4sim::kE5M2, &fp4sim::kE2M1}, false, 6);
  tc_exact({MmaKindId::Mxf8f6f4, &fp4sim::kE2M3, &fp4sim::kE3M2}, true, 7);
}

TEST(TensorCore, Fp32SeqBitExact) {
  Problem p = make_problem(MmaKindId::Mxf4Nvf4, Model::Fp32Seq, 128, 64, 256, true, 8);
  const fm::Result r = fm::run_tensor_core(fast_tc(), p.workload());
  EXPECT_EQ(mismatches(r.d, p.golden()), 0u);
}

TEST(TensorCore, FullSizeInstructionBitExact) {  // N = 256, the largest instruction
  const Problem p = make_problem(MmaKindId::Mxf4, Model::Blackwell, 128, 256, 128, true, 9);
  const fm::Result r = fm::run_tensor_core(fast_tc(), p.workload());
  EXPECT_EQ(mismatches(r.d, p.golden()), 0u);
}

// ---------------------------------------------------------------------------------------------
// Tensor core timing, derived by hand

TEST(TensorCore, ComputeBoundCyclesExact) {
  // One 128x256 tile, 8 K steps. 256 lanes: compute = 128*256/256 = 128 cycles per instruction.
  // Transfers take 1 cycle. Timeline: load of stage 0 ends at 1; instr 0 starts at 1; instr i at
  // 1 + 128 i (the pipeline depth 16 <= 128, so no dependency stall); last MMA ends at 1 + 8*128;
  // the store starts P = 16 later and takes 1 cycle. cycles = 1 + 1024 + 16 + 1 = 1042.
  const Problem p = make_problem(MmaKindId::Mxf4Nvf4, Model::Blackwell, 128, 256, 8 * 64, false, 10);
  const fm::Result r = fm::run_tensor_core(fast_tc(), p.workload());
  EXPECT_EQ(r.stats.cycles, 1042u);
  EXPECT_EQ(r.stats.compute_cycles, 1024u);
  EXPECT_EQ(r.stats.stall("operand_load"), 1u);
  EXPECT_EQ(r.stats.stall("accumulator_dependency"), 0u);
  EXPECT_EQ(r.stats.stall("epilogue_drain"), 17u);
  EXPECT_DOUBLE_EQ(r.stats.peak_macs_per_cycle, 256.0 * 64.0);
  check_stats(r.stats, p.M, p.N, p.K);
}

TEST(TensorCore, DependencyStallSmallN) {
  // N = 8: compute = 128*8/256 = 4 cycles, but the next K step on the same accumulator waits for
  // the pipeline depth (16) after the previous start: 12 stall cycles per dependent instruction.
  // 4 K steps: starts at 1, 17, 33, 49; MMA ends 53; store at 53+16 = 69, ends 70.
  const Problem p = make_problem(MmaKindId::Mxf4, Model::Blackwell, 128, 8, 4 * 64, false, 11);
  fm::TensorCoreParams prm = fast_tc();
  prm.tile_n = 8;
  const fm::Result r = fm::run_tensor_core(prm, p.workload());
  EXPECT_EQ(r.stats.stall("accumulator_dependency"), 3u * 12u);
  EXPECT_EQ(r.stats.cycles, 70u);
  check_stats(r.stats, p.M, p.N, p.K);
}

TEST(TensorCore, LoadBoundFollowsBandwidth) {
  // mxf4nvf4, 128x256 tile: a stage is A 128*64/2 = 4096 B + B 256*64/2 = 8192 B + scales
  // (128+256)*4 = 1536 B = 13824 B. At 48 B/cycle a load takes 288 cycles > 128 of compute, so the
  // datapath waits on every stage: cycles ~= 16 loads * 288. Exactly: loads end at 288 i; MMA i
  // runs [288 i, 288 i + 128); the last ends at 16*288 + 128 = 4736, then 16 + store
  // ceil(131072 / 1<<24) = 1: 4753.
  const Problem p = make_problem(MmaKindId::Mxf4Nvf4, Model::Blackwell, 128, 256, 16 * 64, false, 12);
  fm::TensorCoreParams prm = fast_tc();
  prm.load_bytes_per_cycle = 48;
  const fm::Result r = fm::run_tensor_core(prm, p.workload());
  EXPECT_EQ(r.stats.cycles, 4753u);
  EXPECT_EQ(r.stats.stall("operand_load"), 4753u - 16u * 128u - 17u);  // 16 instructions x 128 compute
  EXPECT_EQ(r.stats.bytes_of("global_load"), 16u * 13824u);
  check_stats(r.stats, p.M, p.N, p.K);
}

TEST(TensorCore, SmemBandwidthStall) {
  // A+B per instruction = 12288 B; at 64 B/cycle the operand read takes 192 cycles vs 128 compute:
  // 64 stall cycles per instruction charged to smem_bandwidth.
  const Problem p = make_problem(MmaKindId::Mxf4Nvf4, Model::Blackwell, 128, 256, 4 * 64, false, 13);
  fm::TensorCoreParams prm = fast_tc();
  prm.smem_read_bytes_per_cycle = 64;
  const fm::Result r = fm::run_tensor_core(prm, p.workload());
  EXPECT_EQ(r.stats.stall("smem_bandwidth"), 4u * 64u);
  check_stats(r.stats, p.M, p.N, p.K);
}

TEST(TensorCore, DefaultsNearPeakOnLargeLayer) {
  // 512 x 512 x 1024 with the default parameters (tile_n 256): per tile 16 x 128 = 2048 compute
  // cycles; a 256-column accumulator leaves TMEM room for only one, so each next tile waits for
  // the epilogue (16 + 128*256*4/512 = 272 cycles): utilization ~ 2048 / 2320 = 0.88.
  const Problem p = make_problem(MmaKindId::Mxf4Nvf4, Model::Blackwell, 512, 512, 1024, false, 14);
  const fm::Result r = fm::run_tensor_core(fm::TensorCoreParams{}, p.workload());
  EXPECT_EQ(mismatches(r.d, p.golden()), 0u);
  check_stats(r.stats, p.M, p.N, p.K);
  EXPECT_GT(r.stats.utilization(), 0.85);
  EXPECT_LT(r.stats.utilization(), 0.89);
  EXPECT_EQ(r.stats.stall("accumulator_busy"), 7u * 272u);
}

TEST(TensorCore, RejectsWhatItCannotRun) {
  const Problem p = make_problem(MmaKindId::Mxf4, Model::Blackwell, 128, 64, 64, false, 15);
  fm::TensorCoreParams prm;
  prm.tile_n = 264;
  EXPECT_THROW(fm::run_tensor_core(prm, p.workload()), std::invalid_argument);
  prm.tile_n = 12;
  EXPECT_THROW(fm::run_tensor_core(prm, p.workload()), std::invalid_argument);
  prm = {};
  prm.smem_bytes = 1024;  // one stage needs 4096 + 2048 + ... bytes
  EXPECT_THROW(fm::run_tensor_core(prm, p.workload()), std::invalid_argument);
  prm = {};
  prm.tmem_columns = 64;  // 4 scale columns + a 64-column accumulator do not fit
  EXPECT_THROW(fm::run_tensor_core(prm, p.workload()), std::invalid_argument);
  fm::Workload w = p.workload();
  w.N = 60;  // not a multiple of 8 (and sizes no longer match)
  EXPECT_THROW(fm::run_tensor_core({}, w), std::invalid_argument);
  Problem h = make_problem(MmaKindId::Hif4, Model::AscendHif4, 128, 64, 64, false, 16);
  EXPECT_THROW(fm::run_tensor_core({}, h.workload()), std::invalid_argument);
  Problem e = make_problem(MmaKindId::Mxf4, Model::Exact, 128, 64, 64, false, 17);
  EXPECT_THROW(fm::run_tensor_core({}, e.workload()), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Cube

fm::CubeParams small_cube() {  // small buffers: several K steps and partial tiles
  fm::CubeParams p;
  p.l0a_bytes = p.l0b_bytes = 16 * 1024;
  p.l0c_bytes = 64 * 1024;
  p.threads = 2;
  return p;
}

TEST(Cube, Hif4BitExact) {
  // M = 200, N = 136 (not multiples of the 128 x 64 tiles), K = 1088 = 17 groups (partial K step).
  for (bool with_c : {false, true}) {
    const Problem p = make_problem(MmaKindId::Hif4, Model::AscendHif4, 200, 136, 1088, with_c, 20 + with_c);
    const fm::Result r = fm::run_cube(small_cube(), p.workload());
    EXPECT_EQ(mismatches(r.d, p.golden()), 0u);
    check_stats(r.stats, p.M, p.N, p.K);
    EXPECT_GT(r.stats.instructions, 1u);
  }
}

TEST(Cube, Hif4DelayedRoundingBitExact) {
  // The rounding point moved to every 3 groups: K steps must hold whole rounding groups.
  Problem p = make_problem(MmaKindId::Hif4, Model::AscendHif4, 64, 48, 64 * 14, true, 22);
  p.cfg.hif4_round_groups = 3;
  const fm::Result r = fm::run_cube(small_cube(), p.workload());
  EXPECT_EQ(mismatches(r.d, p.golden()), 0u);
  p.cfg.hif4_round_groups = 0;  // one rounding over all of K: one K step
  const fm::Result r0 = fm::run_cube(fm::CubeParams{}, p.workload());
  EXPECT_EQ(mismatches(r0.d, p.golden()), 0u);
}

TEST(Cube, Nvfp4AndMxfp4BitExact) {
  for (MmaKindId k : {MmaKindId::Mxf4Nvf4, MmaKindId::Mxf4}) {
    const Problem p = make_problem(k, Model::Blackwell, 144, 80, 640, true, 23);
    const fm::Result r = fm::run_cube(small_cube(), p.workload());
    EXPECT_EQ(mismatches(r.d, p.golden()), 0u);
    check_stats(r.stats, p.M, p.N, p.K);
  }
}

TEST(Cube, ComputeBoundCyclesExact) {
  // 128 x 256 x 1024 HiF4 with the defaults: one tile m0 = 128, n0 = 256 (128*256*4 = 128 KB =
  // half of L0C), k0 = 256 (L0B half 32 KB / (256 rows * 0.5 B)). 4 K steps of
  // (128/16)*(256/16)*(256/64) = 512 cycles. Loads: A 128*256/2 + 128*4*4 = 18432 B at 256 B/cycle
  // = 72 cycles; B 256*256/2 + 256*4*4 = 36864 B at 128 B/cycle = 288: the first step waits 288.
  // Later loads are hidden (288 < 512). MMA ends at 288 + 2048 = 2336; fixpipe after P = 8:
  // 128*256*4 / 128 = 1024 cycles -> 2336 + 8 + 1024 = 3368.
  const Problem p = make_problem(MmaKindId::Hif4, Model::AscendHif4, 128, 256, 1024, false, 24);
  fm::CubeParams prm;
  prm.threads = 2;
  const fm::Result r = fm::run_cube(prm, p.workload());
  EXPECT_EQ(r.stats.instructions, 4u);
  EXPECT_EQ(r.stats.compute_cycles, 2048u);
  EXPECT_EQ(r.stats.stall("l0b_load"), 288u);
  EXPECT_EQ(r.stats.cycles, 3368u);
  EXPECT_EQ(r.stats.bytes_of("scale_b"), 256u * 16u * 4u);
  EXPECT_DOUBLE_EQ(r.stats.peak_macs_per_cycle, 16.0 * 16.0 * 64.0);
  EXPECT_EQ(mismatches(r.d, p.golden()), 0u);
  check_stats(r.stats, p.M, p.N, p.K);
}

TEST(Cube, GridSizeScalesCompute) {
  // Halving the grid to 8 x 8 quadruples the compute cycles of the same aligned work.
  const Problem p = make_problem(MmaKindId::Hif4, Model::AscendHif4, 128, 128, 512, false, 25);
  fm::CubeParams big;
  fm::CubeParams small;
  small.rows = small.cols = 8;
  const fm::Result rb = fm::run_cube(big, p.workload());
  const fm::Result rs = fm::run_cube(small, p.workload());
  EXPECT_EQ(rs.stats.compute_cycles, 4 * rb.stats.compute_cycles);
  EXPECT_EQ(mismatches(rs.d, rb.d), 0u);
}

TEST(Cube, RejectsWhatItCannotRun) {
  const Problem f8 = make_problem(MmaKindId::Mxf8f6f4, Model::Blackwell, 64, 64, 64, false, 26, &fp4sim::kE4M3,
                                  &fp4sim::kE4M3);
  EXPECT_THROW(fm::run_cube({}, f8.workload()), std::invalid_argument);
  const Problem h = make_problem(MmaKindId::Hif4, Model::AscendHif4, 64, 64, 64, false, 27);
  fm::CubeParams prm;
  prm.l0a_bytes = 1024;  // half = 512 B < 128 rows x 64 x 0.5 B
  EXPECT_THROW(fm::run_cube(prm, h.workload()), std::invalid_argument);
  prm = {};
  prm.pe_k = 48;
  EXPECT_THROW(fm::run_cube(prm, h.workload()), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Several jobs in one elaboration

TEST(System, MultipleJobsOneElaboration) {
  const uint64_t starts0 = fm::sim_starts();
  const Problem p = make_problem(MmaKindId::Mxf4Nvf4, Model::Blackwell, 128, 64, 128, true, 30);
  const Problem h = make_problem(MmaKindId::Hif4, Model::AscendHif4, 64, 64, 256, true, 31);
  const uint64_t t0 = fm::sim_time_ps();
  const fm::Result r1 = fm::run_tensor_core({}, p.workload());
  const fm::Result r2 = fm::run_cube({}, h.workload());
  const fm::Result r3 = fm::run_tensor_core({}, p.workload());
  EXPECT_EQ(fm::sim_starts(), starts0 + 3);
  EXPECT_EQ(fm::sim_time_ps() - t0, r1.stats.sim_time_ps + r2.stats.sim_time_ps + r3.stats.sim_time_ps);
  EXPECT_EQ(mismatches(r1.d, p.golden()), 0u);
  EXPECT_EQ(mismatches(r2.d, h.golden()), 0u);
  EXPECT_EQ(mismatches(r3.d, r1.d), 0u);  // the same job again: same bits
  EXPECT_EQ(r3.stats.cycles, r1.stats.cycles);
}

TEST(System, ProgressReachesOne) {
  const Problem p = make_problem(MmaKindId::Mxf4, Model::Blackwell, 256, 64, 64, false, 32);
  std::vector<double> seen;
  fm::TensorCoreParams prm;
  prm.tile_n = 32;
  fm::run_tensor_core(prm, p.workload(), [&](double f) { seen.push_back(f); });
  ASSERT_EQ(seen.size(), 4u);  // 2 x 2 output tiles
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GT(seen[i], seen[i - 1]);
}

TEST(System, TimingOnlyGivesTheSameSchedule) {
  // The schedule never depends on operand values: a timing-only run (what `fp4sim whatif` uses)
  // reports exactly the statistics of the full run.
  const Problem p = make_problem(MmaKindId::Mxf4Nvf4, Model::Blackwell, 200, 72, 320, true, 33);
  fm::Workload w = p.workload();
  fm::TensorCoreParams prm;
  prm.tile_n = 32;
  const fm::Result full = fm::run_tensor_core(prm, w);
  w.timing_only = true;
  w.a = {};
  w.b = {};
  const fm::Result t = fm::run_tensor_core(prm, w);
  EXPECT_EQ(t.stats.cycles, full.stats.cycles);
  EXPECT_EQ(t.stats.stalls, full.stats.stalls);
  EXPECT_EQ(t.stats.bytes, full.stats.bytes);
  const Problem h = make_problem(MmaKindId::Hif4, Model::AscendHif4, 200, 136, 1088, false, 34);
  fm::Workload wh = h.workload();
  const fm::Result fh = fm::run_cube(small_cube(), wh);
  wh.timing_only = true;
  const fm::Result th = fm::run_cube(small_cube(), wh);
  EXPECT_EQ(th.stats.cycles, fh.stats.cycles);
  EXPECT_EQ(th.stats.stalls, fh.stats.stalls);
}

// ---------------------------------------------------------------------------------------------
// Datapath hook (RTL in the loop plugs in here)

// Runs golden gemm as the datapath, recording the steps; flips bit 0 of the step output at layer
// position (row 0, col 0) in the last K step when `fault` is set.
struct RecordingDatapath {
  size_t K_total = 0;
  bool fault = false;
  uint64_t steps = 0, macs = 0;
  std::vector<float> operator()(const MmaConfig& cfg, const fm::StepOrigin& at, size_t M, size_t N, size_t K,
                                std::span<const uint8_t> a, std::span<const uint32_t> sa, std::span<const uint8_t> b,
                                std::span<const uint32_t> sb, std::span<const float> c) {
    ++steps;
    macs += M * N * K;
    std::vector<float> d = fp4sim::gemm(cfg, cfg.model, M, N, K, a, sa, b, sb, c, 1.0f, 1);
    if (fault && at.row == 0 && at.col == 0 && at.k + K == K_total)
      d[0] = std::bit_cast<float>(std::bit_cast<uint32_t>(d[0]) ^ 1u);
    return d;
  }
};

TEST(System, DatapathHookComputesEveryStep) {
  const Problem p = make_problem(MmaKindId::Mxf4Nvf4, Model::Blackwell, 200, 72, 320, true, 36);
  const Problem h = make_problem(MmaKindId::Hif4, Model::AscendHif4, 200, 136, 1088, true, 37);
  for (bool fault : {false, true}) {
    SCOPED_TRACE(fault ? "faulty datapath" : "golden datapath");
    auto rec = std::make_shared<RecordingDatapath>();
    rec->K_total = p.K;
    rec->fault = fault;
    fm::Workload w = p.workload();
    w.datapath = [rec](auto&&... args) { return (*rec)(args...); };
    fm::TensorCoreParams prm;
    prm.tile_n = 32;
    const fm::Result r = fm::run_tensor_core(prm, w);
    EXPECT_EQ(rec->steps, r.stats.instructions);  // one call per instruction
    EXPECT_EQ(rec->macs, p.M * p.N * p.K);        // covering the layer once (real rows only)
    const std::vector<float> want = p.golden();
    EXPECT_EQ(mismatches(r.d, want, fault), fault ? 1u : 0u);  // the engine's D is the datapath's
    EXPECT_EQ(std::bit_cast<uint32_t>(r.d[0]) ^ std::bit_cast<uint32_t>(want[0]), fault ? 1u : 0u);

    auto rec_h = std::make_shared<RecordingDatapath>();
    rec_h->K_total = h.K;
    rec_h->fault = fault;
    fm::Workload wh = h.workload();
    wh.datapath = [rec_h](auto&&... args) { return (*rec_h)(args...); };
    const fm::Result rh = fm::run_cube(small_cube(), wh);
    EXPECT_EQ(rec_h->steps, rh.stats.instructions);  // one call per cube K step
    EXPECT_EQ(rec_h->macs, h.M * h.N * h.K);
    const std::vector<float> want_h = h.golden();
    EXPECT_EQ(mismatches(rh.d, want_h, fault), fault ? 1u : 0u);
    EXPECT_EQ(std::bit_cast<uint32_t>(rh.d[0]) ^ std::bit_cast<uint32_t>(want_h[0]), fault ? 1u : 0u);
  }
}

// ---------------------------------------------------------------------------------------------
// VCD trace of the pins

// Value changes of one VCD variable: (time in the file's unit, value).
using Changes = std::vector<std::pair<uint64_t, uint64_t>>;

// Minimal VCD reader: the changes of the variable `scope`.`name` (scalar or b<binary> values).
Changes vcd_changes(const std::string& path, const std::string& scope, const std::string& name) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::string line, id, cur_scope;
  uint64_t t = 0;
  Changes out;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string w;
    ls >> w;
    if (w == "$scope") {
      std::string kind;
      ls >> kind >> cur_scope;
    } else if (w == "$var") {
      std::string type, width, code, ref;
      ls >> type >> width >> code >> ref;
      if (cur_scope == scope && ref == name) id = code;
    } else if (!w.empty() && w[0] == '#') {
      t = std::stoull(w.substr(1));
    } else if (!id.empty() && !w.empty() && w[0] == 'b') {
      std::string code;
      ls >> code;
      if (code == id) out.emplace_back(t, std::stoull(w.substr(1), nullptr, 2));
    } else if (!id.empty() && (w.size() > 1) && (w[0] == '0' || w[0] == '1') && w.substr(1) == id) {
      out.emplace_back(t, static_cast<uint64_t>(w[0] - '0'));
    }
  }
  EXPECT_FALSE(id.empty()) << scope << "." << name << " not declared in " << path;
  return out;
}

TEST(System, VcdTraceRecordsThePins) {
  const std::string path = ::testing::TempDir() + "fp4sim_models_trace_" + std::to_string(::getpid()) + ".vcd";
  fm::open_trace(path);
  EXPECT_THROW(fm::open_trace(path), std::logic_error);  // one trace per process
  const Problem p = make_problem(MmaKindId::Mxf4Nvf4, Model::Blackwell, 256, 64, 128, false, 35);
  fm::TensorCoreParams prm;
  prm.tile_n = 32;
  const fm::Result r = fm::run_tensor_core(prm, p.workload());  // 2 x 2 output tiles, 2 K steps each
  fm::close_trace();
  EXPECT_FALSE(std::filesystem::exists(path + ".partial.vcd"));  // renamed into place
  EXPECT_THROW(fm::open_trace(path), std::logic_error);          // a job has run: too late for traces

  const Changes busy = vcd_changes(path, "tensor_core", "busy");
  const Changes retired = vcd_changes(path, "tensor_core", "retired");
  const Changes instr = vcd_changes(path, "tensor_core", "instructions");
  const Changes compute = vcd_changes(path, "tensor_core", "compute_cycles");
  const Changes stall = vcd_changes(path, "tensor_core", "stall_cycles");
  ASSERT_FALSE(busy.empty());
  EXPECT_EQ(busy.front(), std::make_pair(uint64_t{0}, uint64_t{1}));
  EXPECT_EQ(busy.back(), std::make_pair(r.stats.cycles, uint64_t{0}));  // 1 ns per cycle: falls at `cycles`
  ASSERT_EQ(retired.size(), 4u);
  for (size_t i = 0; i < retired.size(); ++i) {
    EXPECT_EQ(retired[i].second, i + 1);
    if (i) {
      EXPECT_GT(retired[i].first, retired[i - 1].first);  // one tile per quantum
    }
  }
  ASSERT_FALSE(instr.empty());
  EXPECT_EQ(instr.back().second, r.stats.instructions);
  ASSERT_FALSE(compute.empty());
  EXPECT_EQ(compute.back().second, r.stats.compute_cycles);
  ASSERT_FALSE(stall.empty());
  EXPECT_EQ(stall.back().second, r.stats.cycles - r.stats.compute_cycles);
  std::filesystem::remove(path);
}

}  // namespace

// SystemC's library provides main(); gtest runs from sc_main.
int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
