// Tests of the cycle-level tensor-core and cube models (models/, docs/models.md).
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
#include <optional>
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
#include "fp4sim/models/unit_latency.hpp"
#include "fp4sim/quant.hpp"
#include "../../models/src/hbm.hpp"

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
// Value changes of one VCD variable: (time in the file's unit, value).
using Changes = std::vector<std::pair<uint64_t, uint64_t>>;

// Minimal VCD reader: the changes of the variable `scope`.`name` (scalar or b<binary> values).
Changes vcd_changes(const std::string& path, const std::string& scope, const std::string& name) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::string line, id, cur_scope;
  std::vector<std::string> scopes;
  uint64_t t = 0;
  Changes out;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string w;
    ls >> w;
    if (w == "$scope") {
      std::string kind, nm;
      ls >> kind >> nm;
      scopes.push_back(nm);
      cur_scope.clear();
      for (const std::string& x : scopes) cur_scope += (cur_scope.empty() ? "" : ".") + x;
    } else if (w == "$upscope") {
      if (!scopes.empty()) scopes.pop_back();
      cur_scope.clear();
      for (const std::string& x : scopes) cur_scope += (cur_scope.empty() ? "" : ".") + x;
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


uint64_t stall_sum(const fm::Stats& s) {
  uint64_t t = 0;
  for (const auto& [k, v] : s.stalls) t += v;
  return t;
}

// Invariants every run must satisfy, whatever the mode.
// `stored`: the bytes the cores store (0: D in FP32, M x N x 4).
void check_stats(const fm::Stats& s, size_t M, size_t N, size_t K, uint64_t stored = 0) {
  EXPECT_EQ(s.macs, static_cast<uint64_t>(M) * N * K);
  // Every core-cycle computes or is charged to one cause.
  EXPECT_EQ(static_cast<uint64_t>(s.cores) * s.cycles, s.compute_cycles + stall_sum(s));
  if (s.timing == fm::Timing::Cycle) {
    EXPECT_EQ(s.sim_time_ps, (s.cycles - s.launch_cycles) * fm::kClockPs);
  }
  EXPECT_GT(s.utilization(), 0.0);
  EXPECT_LE(s.utilization(), 1.0);
  // Physical bounds: never faster than the compute or the HBM roofline.
  EXPECT_GE(static_cast<double>(s.cycles), s.compute_roofline_cycles);
  EXPECT_GE(static_cast<double>(s.cycles), s.memory_roofline_cycles);
  EXPECT_EQ(s.bytes_of("global_store"), stored ? stored : static_cast<uint64_t>(M) * N * 4);
}

// The bare datapath and memory system that the hand-derived counts below describe: no launch cost,
// FP32 D, every kind at the clock the per-cycle parameters are stated at.
fm::Params bare(fm::EngineKind e) {
  fm::Params p = fm::default_params(e);
  p.launch_ns = 0;
  p.out_dtype = fm::OutDtype::Fp32;
  p.clock_fp4_mhz = p.clock_fp8_mhz = p.clock_mhz;
  p.swap_ab = fm::SwapAb::Off;
  p.hbm_channels = 0;  // the ideal HBM port (the banked HBM has its own tests, "Hbm")
  p.split_k = 1;       // one K chain per tile (split-K has its own tests, "SplitK")
  p.gpcs = 0;          // clusters anywhere (the GPC limit has its own tests, "Kernel.Cluster*")
  return p;
}
fm::Params params(fm::EngineKind e, std::initializer_list<std::pair<const char*, const char*>> kv) {
  fm::Params p = bare(e);
  for (const auto& [k, v] : kv) fm::set_param(p, k, v);
  return p;
}
fm::Params tc_params(std::initializer_list<std::pair<const char*, const char*>> kv = {}) {
  return params(fm::EngineKind::TensorCore, kv);
}
fm::Params cube_params(std::initializer_list<std::pair<const char*, const char*>> kv = {}) {
  return params(fm::EngineKind::Cube, kv);
}
fm::RunOptions mode(fm::Timing t) {
  fm::RunOptions o;
  o.timing = t;
  return o;
}
fm::Workload timing_only(MmaKindId kind, Model model, size_t M, size_t N, size_t K) {
  fm::Workload w;
  w.cfg = fp4sim::make_mma_config(kind);
  w.cfg.model = model;
  w.model = model;
  w.M = M, w.N = N, w.K = K;
  w.timing_only = true;
  return w;
}

// ---------------------------------------------------------------------------------------------
// Bit-exact on every kind, with partial tiles, C on / off, several cores, both timing modes

void tc_exact(MmaKindId kind, const fp4sim::ElemFormat* ea, const fp4sim::ElemFormat* eb, bool with_c,
              uint32_t seed) {
  const int kin = fp4sim::mma_kind(kind).k;
  // M = 200: one full and one partial 128-row tile; N = 72 with tile_n 32: two full + one 8-wide.
  Problem p = make_problem(kind, Model::Blackwell, 200, 72, static_cast<size_t>(5 * kin), with_c, seed, ea, eb);
  fm::Workload w = p.workload();
  w.threads = 2;
  for (fm::Timing t : {fm::Timing::Cycle, fm::Timing::Analytic}) {
    const fm::Result r = fm::run(tc_params({{"tile_n", "32"}, {"cores", "4"}}), w, mode(t));
    EXPECT_EQ(mismatches(r.d, p.golden()), 0u);
    check_stats(r.stats, p.M, p.N, p.K);
    EXPECT_EQ(r.stats.instructions, 2u * 3u * 5u);  // 2 M tiles x 3 N tiles x 5 instructions
    EXPECT_EQ(r.stats.timing, t);
  }
}

TEST(TensorCore, Mxf4Nvf4BitExact) {
  tc_exact(MmaKindId::Mxf4Nvf4, nullptr, nullptr, false, 1);
  tc_exact(MmaKindId::Mxf4Nvf4, nullptr, nullptr, true, 2);
}
TEST(TensorCore, Mxf4BitExact) {
  tc_exact(MmaKindId::Mxf4, nullptr, nullptr, false, 3);
  tc_exact(MmaKindId::Mxf4, nullptr, nullptr, true, 4);
}
TEST(TensorCore, Mxf8f6f4BitExact) {
  tc_exact(MmaKindId::Mxf8f6f4, &fp4sim::kE4M3, &fp4sim::kE4M3, true, 5);
  tc_exact(MmaKindId::Mxf8f6f4, &fp4sim::kE5M2, &fp4sim::kE2M1, false, 6);
  tc_exact(MmaKindId::Mxf8f6f4, &fp4sim::kE2M3, &fp4sim::kE3M2, true, 7);
}
TEST(TensorCore, Fp32SeqAndFullInstructionBitExact) {
  const Problem p = make_problem(MmaKindId::Mxf4Nvf4, Model::Fp32Seq, 128, 64, 256, true, 8);
  EXPECT_EQ(mismatches(fm::run(tc_params(), p.workload()).d, p.golden()), 0u);
  const Problem q = make_problem(MmaKindId::Mxf4, Model::Blackwell, 128, 256, 512, true, 9);  // N = 256
  EXPECT_EQ(mismatches(fm::run(tc_params({{"tile_n", "256"}, {"tile_k", "256"}}), q.workload()).d, q.golden()), 0u);
}

TEST(Cube, Hif4BitExact) {
  // M = 200, N = 136, K = 1088 = 17 groups: partial tiles and a partial K step with small buffers.
  for (bool with_c : {false, true}) {
    const Problem p = make_problem(MmaKindId::Hif4, Model::AscendHif4, 200, 136, 1088, with_c, 20 + with_c);
    for (fm::Timing t : {fm::Timing::Cycle, fm::Timing::Analytic}) {
      const fm::Result r = fm::run(cube_params({{"l0a_bytes", "16384"}, {"l0b_bytes", "16384"}, {"cores", "3"}}),
                                   p.workload(), mode(t));
      EXPECT_EQ(mismatches(r.d, p.golden()), 0u);
      check_stats(r.stats, p.M, p.N, p.K);
      EXPECT_GT(r.stats.instructions, 1u);
    }
  }
}
TEST(Cube, Hif4DelayedRoundingBitExact) {
  Problem p = make_problem(MmaKindId::Hif4, Model::AscendHif4, 64, 48, 64 * 14, true, 22);
  p.cfg.hif4_round_groups = 3;  // K steps must hold whole rounding groups
  EXPECT_EQ(mismatches(fm::run(cube_params({{"l0a_bytes", "16384"}}), p.workload()).d, p.golden()), 0u);
  p.cfg.hif4_round_groups = 0;  // one rounding over all of K: one K step
  EXPECT_EQ(mismatches(fm::run(cube_params(), p.workload()).d, p.golden()), 0u);
}
TEST(Cube, Nvfp4AndMxfp4BitExactStreamingL1) {
  for (MmaKindId k : {MmaKindId::Mxf4Nvf4, MmaKindId::Mxf4}) {
    const Problem p = make_problem(k, Model::Blackwell, 144, 80, 640, true, 23);
    // l1_k < K: L1 chunks stream A and B; raster m.
    const fm::Result r = fm::run(cube_params({{"tile_k", "128"}, {"l1_k", "256"}, {"raster", "m"}}), p.workload());
    EXPECT_EQ(mismatches(r.d, p.golden()), 0u);
    check_stats(r.stats, p.M, p.N, p.K);
    EXPECT_EQ(r.stats.mapping.l1_k, 256);
  }
}

// The output quantize unit encodes D with golden's rule (PTS off), tile by tile.
TEST(System, QuantizeUnitMatchesGolden) {
  const Problem p = make_problem(MmaKindId::Mxf4Nvf4, Model::Blackwell, 130, 128, 256, true, 24);
  const Problem h = make_problem(MmaKindId::Hif4, Model::AscendHif4, 48, 128, 256, true, 25);
  fp4sim::QuantOptions opt;
  opt.pts = false;
  for (auto [fmt, bf] : {std::pair{"nvfp4", fp4sim::BlockFormat::Nvfp4}, std::pair{"mxfp8", fp4sim::BlockFormat::Mxfp8E4M3},
                         std::pair{"hif4", fp4sim::BlockFormat::Hif4}}) {
    SCOPED_TRACE(fmt);
    for (bool cube : {false, true}) {
      const Problem& pr = cube ? h : p;
      const fm::Params prm = cube ? cube_params({{"out_format", fmt}}) : tc_params({{"out_format", fmt}, {"tile_n", "64"}});
      const fm::Result r = fm::run(prm, pr.workload());
      const std::vector<float> d = pr.golden();
      EXPECT_EQ(mismatches(r.d, d), 0u);
      const fp4sim::Quantized q = fp4sim::quantize(bf, d, pr.M, pr.N, opt);
      EXPECT_EQ(r.q_codes, q.codes);
      std::vector<uint32_t> scales(q.scales.begin(), q.scales.end());
      EXPECT_EQ(r.q_scales, bf == fp4sim::BlockFormat::Hif4 ? q.scale_words : scales);
      // Stored bytes are the quantized tensor's, and the unit takes time.
      const fm::Result r0 = fm::run(cube ? cube_params({{"out_format", fmt}, {"quant_elems_per_cycle", "1"}})
                                         : tc_params({{"out_format", fmt}, {"tile_n", "64"}, {"quant_elems_per_cycle", "1"}}),
                                    pr.workload());
      EXPECT_GT(r0.stats.cycles, r.stats.cycles + pr.M * pr.N / prm.cores / 2);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Micro cases with hand-derived cycle counts (every number in the comments)

// One SM, round numbers: HBM and L2 64 B/cycle with latencies 100 and 20, link 64 B/cycle,
// tcgen05.cp 16 B/cycle, tcgen05.ld 64 B/cycle, unlimited SMEM read, pipeline depth 2.
fm::Params micro_tc() {
  return tc_params({{"cores", "1"}, {"dies", "1"}, {"dram_bytes_per_cycle", "64"}, {"dram_latency", "100"},
                    {"l2_bytes_per_cycle", "64"}, {"l2_latency", "20"}, {"core_load_bytes_per_cycle", "64"},
                    {"core_store_bytes_per_cycle", "64"}, {"tmem_cp_bytes_per_cycle", "16"},
                    {"tmem_ld_bytes_per_cycle", "64"}, {"smem_read_bytes_per_cycle", "1073741824"},
                    {"pipeline_depth", "2"}, {"stages", "2"}, {"raster", "n"}, {"mapper_candidates", "1"}});
}

TEST(TensorCore, OneInstructionHandDerived) {
  // 128 x 64 x 64 NVFP4: one stage, one instruction. Requests in issue order (all HBM misses),
  // issued at 0 and at the L2 at 1: A 128 x 32 B = 4096, SFA 512, B 64 x 32 B = 2048, SFB 256.
  //   HBM port (64 B/cycle) ends A 65, SFA 73, B 105, SFB 109; +100 latency: fills at 165/173/205/209.
  //   L2 port moves each fill: A 165-229, SFA 229-237, B 237-269, SFB 269-273; +20: replies at
  //   249/257/289/293. Link (64 B/cycle): A 249-313, SFA -321, B -353, SFB -357: stage full at 357.
  //   tcgen05.cp: (128 + 64) rows x 4 scales = 768 B / 16 = 48: 357-405 (scale_copy 48).
  //   MMA: 128 x 64 / 256 lanes = 32 cycles, 405-437; + depth 2: accumulator full at 439.
  //   tcgen05.ld 32768 B / 64 = 512: 439-951; registers -> SMEM (port unlimited: 1 cycle) 952.
  //   Store: 8 x 4096 B over the 64 B/cycle link, done at 1016, 1080, ..., 1464, at the L2 a cycle
  //   later; each crosses the L2 port (64 cycles) then HBM (64): the last ends at 1465 + 128 = 1593.
  fm::Params p = micro_tc();
  fm::set_param(p, "tile_n", "64");
  fm::set_param(p, "tile_k", "64");
  const fm::Result r = fm::run(p, timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 128, 64, 64));
  EXPECT_EQ(r.stats.cycles, 1593u);
  EXPECT_EQ(r.stats.compute_cycles, 32u);
  EXPECT_EQ(r.stats.stall("operand_load"), 357u);
  EXPECT_EQ(r.stats.stall("scale_copy"), 48u);
  EXPECT_EQ(r.stats.stall("tail"), 1593u - 437u);
  EXPECT_EQ(r.stats.bytes_of("dram_read"), 4096u + 512u + 2048u + 256u);
  EXPECT_EQ(r.stats.bytes_of("dram_write"), 128u * 64u * 4u);
  check_stats(r.stats, 128, 64, 64);
}

TEST(TensorCore, TwoDependentInstructionsHandDerived) {
  // 128 x 8 x 128, one stage of two instructions on one accumulator, depth pinned to 10.
  // Requests (at the L2 at 1): A 2 x 4096 (64 rows of 64 B each), SFA 1024, B 512, SFB 64.
  //   HBM ends 65, 129, 145, 153, 154; fills at 165, 229, 245, 253, 254. L2 port: 165-229, 229-293,
  //   293-309, 309-317, 317-318; replies +20: 249, 313, 329, 337, 338. Link: 249-313, -377, -393,
  //   -401, -402: full at 402. tcgen05.cp (128 + 8) x 8 = 1088 B / 16 = 68: 402-470.
  //   MMA 0: 128 x 8 / 256 = 4 cycles, 470-474. MMA 1 reads MMA 0's accumulator: starts at
  //   470 + 10 = 480 (6 cycles accumulator_dependency), ends 484; full at 494. tcgen05.ld
  //   4096 / 64 = 64: -558; registers -> SMEM 1 cycle: -559. Store: one 4096 B request over the
  //   link -623, at the L2 624, L2 port -688, HBM -752.
  fm::Params p = micro_tc();
  fm::set_param(p, "tile_n", "8");
  fm::set_param(p, "tile_k", "128");
  fm::set_param(p, "pipeline_depth", "10");
  const fm::Result r = fm::run(p, timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 128, 8, 128));
  EXPECT_EQ(r.stats.cycles, 752u);
  EXPECT_EQ(r.stats.compute_cycles, 8u);
  EXPECT_EQ(r.stats.stall("accumulator_dependency"), 6u);
  EXPECT_EQ(r.stats.stall("scale_copy"), 68u);
  EXPECT_EQ(r.stats.stall("operand_load"), 402u);
  check_stats(r.stats, 128, 8, 128);
}

TEST(TensorCore, SmemRingHandDerived) {
  // 128 x 64 x 256 in four 64-deep stages, memory latencies 0 and HBM / L2 / cp / ld unlimited, so
  // each request costs one HBM cycle and one L2-port cycle, and the 64 B/cycle link dominates:
  // a stage's four requests take 64 + 8 + 32 + 4 = 108 link cycles; its MMA 32.
  // Requests reach the L2 one cycle after issue, HBM takes a cycle, the L2 port a cycle.
  //   1 stage: loads of stage k+1 wait for MMA k to free the stage. Stage 0: at the L2 at 1, HBM
  //   1-2, replies at 3, link 3-111, cp 111-112, MMA 112-144. Each later stage repeats 144 cycles:
  //   MMA 3 ends 576. Depth 2, ld 1, registers -> SMEM 1: 580; store 8 x 64 link cycles: the last
  //   done 1092, at the L2 1093, L2 port 1094, HBM 1095.
  //   2 stages: stages 0 and 1 load back to back (full at 111, 219); stage 2 issues when MMA 0
  //   frees slot 0 (144) and follows stage 1 on the link: full 327; stage 3 issues at 252 (MMA 1
  //   ends), full 435. MMA 3: 436-468; 470, 471, 472; store: last done 984, at the L2 985, L2 port
  //   986, HBM 987.
  fm::Params p = tc_params({{"cores", "1"}, {"dies", "1"}, {"dram_bytes_per_cycle", "1073741824"}, {"dram_latency", "0"},
                            {"l2_bytes_per_cycle", "1073741824"}, {"l2_latency", "0"},
                            {"core_load_bytes_per_cycle", "64"}, {"core_store_bytes_per_cycle", "64"},
                            {"tmem_cp_bytes_per_cycle", "1073741824"}, {"tmem_ld_bytes_per_cycle", "1073741824"},
                            {"smem_read_bytes_per_cycle", "1073741824"}, {"pipeline_depth", "2"}, {"tile_n", "64"},
                            {"tile_k", "64"}, {"raster", "n"}, {"mapper_candidates", "1"}});
  const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 128, 64, 256);
  fm::set_param(p, "stages", "1");
  EXPECT_EQ(fm::run(p, w).stats.cycles, 1095u);
  fm::set_param(p, "stages", "2");
  EXPECT_EQ(fm::run(p, w).stats.cycles, 987u);
}

TEST(Cube, OneStepHandDerived) {
  // 16 x 16 x 64 HiF4 on one AI core: one L1 chunk, one L0 step, one PE pass (1 cycle), depth 3
  // (hif4_pe). HBM and L2 64 B/cycle, latencies 100 and 20; link 64 B/cycle; MTE1 16 B/cycle;
  // FixPipe 64 B/cycle. Requests (at the L2 at 1): A 16 x 32 B = 512, A words 16 x 4 = 64, B 512,
  // B words 64.
  //   HBM: 1-9, 9-10, 10-18, 18-19; fills at 109, 110, 118, 119. L2 port: 109-117, 117-118,
  //   118-126, 126-127; replies +20: 137, 138, 146, 147. Link: 137-145, -146, -154, -155: L1 full
  //   at 155. MTE1: A and B steps of 512 + 64 B each, in parallel: 576 / 16 = 36: 155-191.
  //   Cube: 1 cycle, 191-192; + depth 3: L0C full at 195. FixPipe 1024 / 64 = 16: -211. Store:
  //   link 16 cycles -227, at the L2 228, L2 port -244, HBM -260.
  const fm::Params p = cube_params({{"cores", "1"}, {"dram_bytes_per_cycle", "64"}, {"dram_latency", "100"},
                                    {"l2_bytes_per_cycle", "64"}, {"l2_latency", "20"},
                                    {"core_load_bytes_per_cycle", "64"}, {"core_store_bytes_per_cycle", "64"},
                                    {"mte1_bytes_per_cycle", "16"}, {"fixpipe_bytes_per_cycle", "64"},
                                    {"tile_m", "16"}, {"tile_n", "16"}, {"tile_k", "64"}, {"l1_k", "64"},
                                    {"mapper_candidates", "1"}});
  const fm::Result r = fm::run(p, timing_only(MmaKindId::Hif4, Model::AscendHif4, 16, 16, 64));
  EXPECT_EQ(r.stats.cycles, 260u);
  EXPECT_EQ(r.stats.compute_cycles, 1u);
  EXPECT_EQ(r.stats.stall("l1_load"), 191u);
  EXPECT_EQ(r.stats.stall("tail"), 260u - 192u);
  EXPECT_EQ(r.stats.bytes_of("dram_read"), 512u + 64u + 512u + 64u);
  EXPECT_EQ(r.stats.bytes_of("l0a"), 576u);
  EXPECT_EQ(r.stats.bytes_of("dram_write"), 1024u);
  check_stats(r.stats, 16, 16, 64);
}

// ---------------------------------------------------------------------------------------------
// Conservation: bytes per level are what the mapping implies

TEST(System, BytesPerLevelFollowTheMapping) {
  // Tensor core, 4 SMs, 256 x 512 x 1024 NVFP4, tile 128 x 128, K stage 256: 2 x 4 tiles.
  // Each tile loads A (128 rows) and B (128 rows) over the whole K: 8 x 2 x (128 x 512 + 128 x 64)
  // bytes from L2; HBM reads each byte of A and B once (L2 large); D is stored once.
  const fm::Params p = tc_params({{"cores", "4"}, {"tile_n", "128"}, {"tile_k", "256"}, {"mapper_candidates", "1"}});
  const fm::Result r = fm::run(p, timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 256, 512, 1024));
  const uint64_t per_rows = 128 * 512 + 128 * 64;  // 128 rows of K = 1024: elements + UE4M3 scales
  EXPECT_EQ(r.stats.bytes_of("l2_read"), 8u * 2u * per_rows);
  EXPECT_EQ(r.stats.bytes_of("smem_write"), 8u * 2u * per_rows);
  EXPECT_EQ(r.stats.bytes_of("dram_read"), (256u + 512u) * (512u + 64u));
  EXPECT_EQ(r.stats.bytes_of("dram_write"), 256u * 512u * 4u);
  EXPECT_EQ(r.stats.bytes_of("l2_write"), 256u * 512u * 4u);
  EXPECT_EQ(r.stats.bytes_of("tmem_scale"), 8u * 256u * 64u);
  // Cube, whole K resident in L1 along N: A is loaded once per core and m block, B once per tile.
  const fm::Params c = cube_params({{"cores", "2"}, {"tile_m", "32"}, {"tile_n", "64"}, {"tile_k", "256"},
                                    {"l1_k", "1024"}, {"raster", "n"}, {"mapper_candidates", "1"}});
  const fm::Result rc = fm::run(c, timing_only(MmaKindId::Hif4, Model::AscendHif4, 32, 512, 1024));
  const uint64_t hrow = 512 + 16 * 4;  // one row of K = 1024: elements + 16 HiF4 words
  EXPECT_EQ(rc.stats.bytes_of("l2_read"), 2u * 32u * hrow + 512u * hrow);  // A on each of 2 cores, B once
  EXPECT_EQ(rc.stats.bytes_of("dram_read"), (32u + 512u) * hrow);
  EXPECT_EQ(rc.stats.bytes_of("l0a"), 8u * 4u * 32u * hrow / 4u);  // 8 tiles x 4 K steps x A step
  // A smaller L2 than the operands: the streamed operand comes from HBM again.
  fm::Params small = p;
  fm::set_param(small, "l2_bytes", "65536");
  const fm::Result rs = fm::run(small, timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 256, 512, 1024));
  EXPECT_GT(rs.stats.bytes_of("dram_read"), r.stats.bytes_of("dram_read"));
}

// ---------------------------------------------------------------------------------------------
// Properties over sweeps (the mapper's best mapping)

uint64_t cycles_of(const fm::Params& p, const fm::Workload& w, fm::Timing t) { return fm::run(p, w, mode(t)).stats.cycles; }

void monotone(fm::EngineKind e, const char* key, std::vector<const char*> values, const fm::Workload& w, fm::Timing t,
              bool more_is_faster = true) {
  uint64_t prev = UINT64_MAX;
  for (const char* v : values) {
    fm::Params p = bare(e);
    fm::set_param(p, "cores", "8");
    fm::set_param(p, key, v);
    const uint64_t c = cycles_of(p, w, t);
    if (more_is_faster) {
      EXPECT_LE(c, prev) << key << "=" << v << " (" << fm::timing_name(t) << ") " << w.M << "x" << w.N << "x" << w.K;
    }
    prev = c;
  }
}

TEST(Properties, MoreResourcesNeverSlower) {
  const fm::Workload tc = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 512, 1024, 1024);
  const fm::Workload dec = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 16, 2048, 2048);
  const fm::Workload cu = timing_only(MmaKindId::Hif4, Model::AscendHif4, 512, 1024, 1024);
  const fm::Workload cdec = timing_only(MmaKindId::Hif4, Model::AscendHif4, 16, 2048, 2048);
  for (fm::Timing t : {fm::Timing::Analytic, fm::Timing::Cycle}) {
    for (const fm::Workload* w : {&tc, &dec}) {
      monotone(fm::EngineKind::TensorCore, "dram_bytes_per_cycle", {"128", "256", "512", "1024"}, *w, t);
      monotone(fm::EngineKind::TensorCore, "smem_bytes", {"65536", "131072", "233472"}, *w, t);
      monotone(fm::EngineKind::TensorCore, "dot_lanes", {"64", "128", "256"}, *w, t);
      monotone(fm::EngineKind::TensorCore, "cores", {"2", "4", "8"}, *w, t);
    }
    for (const fm::Workload* w : {&cu, &cdec}) {
      monotone(fm::EngineKind::Cube, "dram_bytes_per_cycle", {"64", "128", "256", "512"}, *w, t);
      monotone(fm::EngineKind::Cube, "l0a_bytes", {"32768", "65536", "131072"}, *w, t);
      monotone(fm::EngineKind::Cube, "l1_bytes", {"131072", "262144", "524288"}, *w, t);
      monotone(fm::EngineKind::Cube, "rows", {"4", "8", "16"}, *w, t);
      monotone(fm::EngineKind::Cube, "cores", {"2", "4", "8"}, *w, t);
    }
  }
}

// More cores or more L2 is never slower in the mapper's choice when, as whatif does along a sweep,
// the mapping chosen with less of the resource is offered again (RunOptions::also; it keeps its
// own core count). Shapes where the waves do not divide the cores evenly and where A + B exceed L2.
TEST(Properties, MoreCoresOrL2NeverSlowerInTheMappersChoice) {
  struct Sweep {
    fm::EngineKind e;
    const char* key;
    std::vector<const char*> values;
  };
  const fm::Workload tc = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 1024, 2048, 1024);
  const fm::Workload cu = timing_only(MmaKindId::Hif4, Model::AscendHif4, 1024, 2048, 1024);
  for (fm::Timing t : {fm::Timing::Analytic, fm::Timing::Cycle})
    for (const Sweep& sw : {Sweep{fm::EngineKind::TensorCore, "cores", {"20", "24", "28", "32", "40"}},
                            Sweep{fm::EngineKind::TensorCore, "l2_bytes", {"0", "1048576", "4194304", "134217728"}},
                            Sweep{fm::EngineKind::Cube, "cores", {"6", "7", "8", "10", "12"}},
                            Sweep{fm::EngineKind::Cube, "l2_bytes", {"0", "1048576", "4194304", "201326592"}}}) {
      uint64_t prev_cycles = 0;
      std::optional<fm::Mapping> prev;
      for (const char* v : sw.values) {
        fm::Params p = params(sw.e, {{sw.key, v}});
        if (std::string(sw.key) == "l2_bytes") fm::set_param(p, "cores", sw.e == fm::EngineKind::Cube ? "8" : "24");
        fm::RunOptions o = mode(t);
        if (prev) o.also.push_back(*prev);
        const fm::Result r = fm::run(p, sw.e == fm::EngineKind::Cube ? cu : tc, o);
        if (prev_cycles) {
          EXPECT_LE(r.stats.cycles, prev_cycles) << fm::engine_name(sw.e) << " " << sw.key << "=" << v << " "
                                                 << fm::timing_name(t) << " " << r.stats.mapping.str();
        }
        prev_cycles = r.stats.cycles;
        prev = r.stats.mapping;
        if (!prev->cores) prev->cores = p.cores;
        // As whatif: the mapping chosen without an L2 is offered again without allocating in it.
        if (std::string(sw.key) == "l2_bytes" && p.l2_bytes == 0) prev->l2_no_allocate = true;
      }
    }
}

// ---------------------------------------------------------------------------------------------
// The memory system: dies, the die-to-die link, MSHRs, bounded queues (docs/models.md "Structure")

// One SM streaming a 128 x 128 x 4096 NVFP4 tile (tile_k 256: 16 stages). Per stage A is 128 rows x
// 128 B = 16 KiB (four 4 KiB requests) and its scales 128 x 16 B = 2 KiB (one request), B the same:
// 10 read requests per stage, 160 in all, every one an HBM miss (l2_bytes 0). D: 64 KiB of FP32.
fm::Params stream_tc(std::initializer_list<std::pair<const char*, const char*>> kv) {
  fm::Params p = tc_params({{"cores", "1"}, {"tile_n", "128"}, {"tile_k", "256"}, {"stages", "4"}, {"raster", "n"},
                            {"l2_bytes", "0"}, {"mapper_candidates", "1"}});
  for (const auto& [k, v] : kv) fm::set_param(p, k, v);
  return p;
}
const fm::Workload& stream_tile() {
  static const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 128, 128, 4096);
  return w;
}

// One MSHR: a miss holds it from the L2 port to its fill, so the port takes one miss per HBM
// transfer + latency: 4 KiB / 4096 B/cycle = 1 cycle + 2000 = 2001 cycles per request, whatever
// the bandwidth. 160 misses: 160 x 2001 = 320 160 cycles, plus the last reply's L2 latency (280),
// its link (32), the last stage's four MMAs (4 x 64), the TMEM load (128) and the store of 64 KiB
// over the 128 B/cycle store link (512): under 2000 more. The rate is bytes / latency
// (589 824 B / 320 160 cycles = 1.84 B/cycle), three orders below HBM's 4096 B/cycle.
TEST(Memory, OneMshrIsLatencyBound) {
  const fm::Params one = stream_tc({{"dies", "1"}, {"l2_mshrs", "1"}, {"dram_latency", "2000"}, {"dram_bytes_per_cycle", "4096"}});
  const fm::Result r = fm::run(one, stream_tile(), mode(fm::Timing::Cycle));
  check_stats(r.stats, 128, 128, 4096);  // (rooflines, stalls)
  EXPECT_EQ(r.stats.bytes_of("dram_read"), 16u * 2 * (16384 + 2048));
  EXPECT_GE(r.stats.cycles, 160u * 2001);
  EXPECT_LE(r.stats.cycles, 160u * 2001 + 2000);
  // Two MSHRs: two misses per 2001 cycles (80 rounds), about half the time.
  fm::Params two = one;
  fm::set_param(two, "l2_mshrs", "2");
  const uint64_t c2 = fm::run(two, stream_tile(), mode(fm::Timing::Cycle)).stats.cycles;
  EXPECT_GE(c2, 80u * 2001);
  EXPECT_LE(c2, 80u * 2001 + 2000);
  // The analytic estimate sees the same bound (MSHRs x 4 KiB per latency).
  const uint64_t a = fm::run(one, stream_tile(), mode(fm::Timing::Analytic)).stats.cycles;
  EXPECT_NEAR(static_cast<double>(a) / static_cast<double>(r.stats.cycles), 1.0, 0.15) << a << " vs " << r.stats.cycles;
}

// Two dies, the one SM on die 0: the bytes homed on die 1 (about half, by key) come back over die 1's
// outgoing link and D's far bytes go out over die 0's. At 8 B/cycle the link is the bottleneck: the
// replies alone need (far bytes - far D bytes) / 8 cycles, and the job takes little more than the
// busier direction.
TEST(Memory, FarTrafficIsBoundByTheLink) {
  const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 128, 128, 16384);
  const fm::Params p = stream_tc({{"dies", "2"}, {"die_link_bytes_per_cycle", "8"}});
  const fm::Result r = fm::run(p, w, mode(fm::Timing::Cycle));
  check_stats(r.stats, 128, 128, 16384);
  const uint64_t link = r.stats.bytes_of("die_link"), l2 = r.stats.bytes_of("l2_read") + r.stats.bytes_of("l2_write");
  const uint64_t d_bytes = 128u * 128 * 4;
  EXPECT_GT(link, 3 * l2 / 10);  // the key hash spreads the bytes over the dies
  EXPECT_LT(link, 7 * l2 / 10);
  EXPECT_GE(r.stats.cycles, (link - d_bytes) / 8);
  EXPECT_LE(static_cast<double>(r.stats.cycles), 1.05 * static_cast<double>(link) / 8 + 3000);
  // One die: nothing crosses, and the same job is many times faster.
  const fm::Result one = fm::run(stream_tc({{"dies", "1"}, {"die_link_bytes_per_cycle", "8"}}), w, mode(fm::Timing::Cycle));
  EXPECT_EQ(one.stats.bytes_of("die_link"), 0u);
  EXPECT_LT(one.stats.cycles * 5, r.stats.cycles);
  // The analytic estimate charges the same far share to the link.
  const uint64_t a = fm::run(p, w, mode(fm::Timing::Analytic)).stats.cycles;
  EXPECT_NEAR(static_cast<double>(a) / static_cast<double>(r.stats.cycles), 1.0, 0.2) << a << " vs " << r.stats.cycles;
}

// With generous limits (MSHRs and queues that never fill) one die is the memory system without
// limits: the hand-derived counts of the micro cases above, which are single-die. Bounded queues
// that do not bind change nothing: the same cycles with the defaults' 768 MSHRs and 448-deep HBM
// queue as with a million of each.
TEST(Memory, LimitsThatDoNotBindChangeNothing) {
  for (fm::Timing t : {fm::Timing::Cycle, fm::Timing::Analytic}) {
    fm::Params p = micro_tc();
    const uint64_t base = cycles_of(p, timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 512, 512, 2048), t);
    fm::set_param(p, "l2_mshrs", "1048576");
    fm::set_param(p, "dram_queue", "1048576");
    EXPECT_EQ(cycles_of(p, timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 512, 512, 2048), t), base) << fm::timing_name(t);
  }
}

// More link bandwidth, a shorter crossing, or more MSHRs while they bound the rate is never slower
// in the mapper's choice when the mapping chosen with less is offered again (as whatif does along
// a sweep). Past the point where MSHRs and the HBM queue bind, more of them only changes the order
// in which HBM serves the cores' misses (a deep FIFO commits early; a shallow one leaves the choice
// to the L2 port's round robin, which can finish a short job's first wave sooner): within `slack`.
void monotone_memory(fm::EngineKind e, const char* key, std::vector<const char*> values, const fm::Workload& w, fm::Timing t,
                     double slack = 0) {
  uint64_t prev_cycles = UINT64_MAX;
  std::optional<fm::Mapping> prev;
  for (const char* v : values) {
    fm::Params p = bare(e);
    fm::set_param(p, "cores", "8");
    fm::set_param(p, key, v);
    fm::RunOptions o = mode(t);
    if (prev) o.also.push_back(*prev);
    const fm::Result r = fm::run(p, w, o);
    EXPECT_LE(static_cast<double>(r.stats.cycles), (1.0 + slack) * static_cast<double>(prev_cycles))
        << key << "=" << v << " (" << fm::timing_name(t) << ") " << w.M << "x" << w.N << "x" << w.K << " " << r.stats.mapping.str();
    prev_cycles = r.stats.cycles;
    prev = r.stats.mapping;
    if (!prev->cores) prev->cores = p.cores;
  }
}

TEST(Memory, MoreLinkMshrsOrQueueNeverSlower) {
  const fm::Workload tc = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 512, 1024, 1024);
  const fm::Workload dec = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 16, 2048, 2048);
  const fm::Workload cu = timing_only(MmaKindId::Hif4, Model::AscendHif4, 512, 1024, 1024);
  for (fm::Timing t : {fm::Timing::Analytic, fm::Timing::Cycle}) {
    for (const fm::Workload* w : {&tc, &dec}) {
      monotone_memory(fm::EngineKind::TensorCore, "die_link_bytes_per_cycle", {"64", "256", "1024", "4096"}, *w, t);
      monotone_memory(fm::EngineKind::TensorCore, "die_link_latency", {"1000", "100", "0"}, *w, t);
      monotone_memory(fm::EngineKind::TensorCore, "l2_mshrs", {"1", "2", "4", "8", "16"}, *w, t);
      monotone_memory(fm::EngineKind::TensorCore, "l2_mshrs", {"16", "64", "512", "1048576"}, *w, t, 0.05);
      monotone_memory(fm::EngineKind::TensorCore, "dram_queue", {"1", "4", "64", "1048576"}, *w, t, 0.10);
    }
    monotone_memory(fm::EngineKind::Cube, "l2_mshrs", {"1", "2", "4", "8", "16", "256"}, cu, t);
  }
}

// ---------------------------------------------------------------------------------------------
// HBM as pseudo-channels of banks (docs/models.md "HBM"): the die's model alone, hand-derived.
// One pseudo-channel of one bank, a 64 B/cycle bus, pages = interleave = 1 KiB, tRCD = tRP = 10,
// tRAS = 20 cycles, no tFAW.
fm::HbmTiming one_bank(bool open_page, double turnaround = 0) {
  fm::HbmTiming t;
  t.channels = 1, t.banks = 1, t.page_bytes = 1024, t.interleave = 1024, t.bus = 64;
  t.rcd = 10, t.rp = 10, t.ras = 20, t.faw = 0, t.turnaround = turnaround, t.open_page = open_page;
  return t;
}

TEST(Hbm, RowHitMissConflictHandDerived) {
  fm::HbmDie h;
  h.reset(one_bank(true));
  // Closed bank: activate at 0, column at 10, 1 KiB = 16 cycles on the bus and out of the bank: 26.
  EXPECT_DOUBLE_EQ(h.access(0, 0, 0, 1024, 0, 0, false), 26.0);
  // Row hit at 100: column at once, 116.
  EXPECT_DOUBLE_EQ(h.access(100, 0, 0, 1024, 0, 0, false), 116.0);
  // The next page on the same bank at 200: precharge (tRAS since 0 is long over) 200-210, activate,
  // column at 220: 236.
  EXPECT_DOUBLE_EQ(h.access(200, 1024, 0, 1024, 0, 0, false), 236.0);
  // Closed pages: every access activates. 26; the precharge follows at max(0 + 20, 26) = 26-36.
  h.reset(one_bank(false));
  EXPECT_DOUBLE_EQ(h.access(0, 0, 0, 1024, 0, 0, false), 26.0);
  EXPECT_DOUBLE_EQ(h.access(100, 0, 0, 1024, 0, 0, false), 126.0);  // no hit: 10 slower than open
  EXPECT_DOUBLE_EQ(h.access(200, 1024, 0, 1024, 0, 0, false), 226.0);  // no conflict: 10 faster
}

TEST(Hbm, StridedRowsOpenOnePageEach) {
  fm::HbmDie h;
  h.reset(one_bank(true));
  // 512 B contiguous: one page, 10 + 8 = 18.
  EXPECT_DOUBLE_EQ(h.access(0, 0, 0, 512, 0, 0, false), 18.0);
  // The same 512 B as 4 rows of 128 B, 4 KiB apart (a K slice of four operand rows): four pages of
  // one bank. Row 0 (page 0 is open from above: a hit at 18, 2 cycles): 20. Row 1: precharge at
  // max(20, 0 + 20) = 20, activate 30, column 40, 42. Row 2: precharge at max(42, 30 + 20) = 50,
  // activate 60, 72. Row 3: precharge at max(72, 60 + 20) = 80, 102.
  EXPECT_DOUBLE_EQ(h.access(0, 0, 0, 512, 128, 4096, false), 102.0);
  // A request that starts 64 B into its first row: rows of 128 B from 8192 (64 B left of it),
  // then 12288 (128 B): two conflicts, precharges at max(102, 90 + 20) = 110 and max(132, 120 + 20).
  EXPECT_DOUBLE_EQ(h.access(0, 8192, 64, 192, 128, 4096, false), 162.0);
}

TEST(Hbm, ReadWriteTurnaroundHandDerived) {
  // A 64 B write at 0 opens page 0 (column at 10, out of the bank at 11, the bus booked 0-1); a
  // 1 KiB read of the same page at 0 then hits: column at 11, out of the bank at 27. Its bus
  // transfer follows the write's, after the turnaround: without one it ends at 17 (the bank's 27
  // decides), with 30 cycles at 1 + 30 + 16 = 47.
  for (double turn : {0.0, 30.0}) {
    fm::HbmDie h;
    h.reset(one_bank(true, turn));
    EXPECT_DOUBLE_EQ(h.access(0, 0, 0, 64, 0, 0, true), 11.0);
    EXPECT_DOUBLE_EQ(h.access(0, 0, 0, 1024, 0, 0, false), turn > 0 ? 47.0 : 27.0);
  }
}

// With one pseudo-channel per die and no DRAM timings the banked HBM is the ideal port: the same
// bus, the same latency, the same cycles (both engines, a layer with C, several cores and two dies).
TEST(Hbm, OneChannelWithoutTimingsIsTheIdealPort) {
  for (fm::EngineKind e : {fm::EngineKind::TensorCore, fm::EngineKind::Cube}) {
    const bool tc = e == fm::EngineKind::TensorCore;
    Problem pr = make_problem(tc ? MmaKindId::Mxf4Nvf4 : MmaKindId::Hif4, tc ? Model::Blackwell : Model::AscendHif4, 256,
                              512, 1024, true, 7);
    fm::Workload w = pr.workload();
    w.timing_only = true;
    fm::Params ideal = params(e, {{"cores", "4"}, {"dies", tc ? "2" : "1"}, {"mapper_candidates", "1"}});
    fm::Params banked = ideal;
    for (const auto& [k, v] : {std::pair{"hbm_channels", tc ? "2" : "1"}, {"hbm_t_rcd_ns", "0"}, {"hbm_t_rp_ns", "0"},
                               {"hbm_t_ras_ns", "0"}, {"hbm_t_faw_ns", "0"}, {"hbm_t_turnaround_ns", "0"}})
      fm::set_param(banked, k, v);
    const fm::Stats a = fm::run(ideal, w).stats, b = fm::run(banked, w).stats;
    EXPECT_EQ(a.cycles, b.cycles) << fm::engine_name(e);
    EXPECT_EQ(a.bytes_of("dram_read"), b.bytes_of("dram_read"));
  }
}

// Physical properties on one SM streaming from HBM (l2_bytes 0: every request a miss), 8
// pseudo-channels, one die: the streams of A, B and their scales share the banks, so with few banks
// they close each other's rows. More banks open fewer rows and are faster, one bank by a lot;
// closed pages open a row for every byte and are slower than open ones on whole rows (K = tile_k =
// 256: A and B contiguous), where consecutive requests find their page open.
TEST(Hbm, BanksAndPagesShapeTheStream) {
  const auto run = [](std::initializer_list<std::pair<const char*, const char*>> kv, size_t n, size_t k) {
    fm::Params p = stream_tc({{"dies", "1"}, {"hbm_channels", "8"}, {"dram_bytes_per_cycle", "256"}});
    for (const auto& [key, v] : kv) fm::set_param(p, key, v);
    const fm::Result r = fm::run(p, timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 128, n, k), mode(fm::Timing::Cycle));
    check_stats(r.stats, 128, n, k);
    return r.stats;
  };
  const auto cyc = [](const fm::Stats& st) { return static_cast<double>(st.cycles); };
  // The share of HBM bytes that had to open a row.
  const auto opened = [](const fm::Stats& st) {
    return static_cast<double>(st.bytes_of("dram_row_open")) /
           static_cast<double>(st.bytes_of("dram_read") + st.bytes_of("dram_write"));
  };
  const fm::Stats b1 = run({{"hbm_banks", "1"}}, 128, 4096), b4 = run({{"hbm_banks", "4"}}, 128, 4096),
                  b32 = run({{"hbm_banks", "32"}}, 128, 4096), ideal = run({{"hbm_channels", "0"}}, 128, 4096);
  EXPECT_GT(cyc(b1), cyc(b4));
  EXPECT_GE(cyc(b4), cyc(b32));
  EXPECT_GT(cyc(b1), 1.2 * cyc(b32)) << cyc(b1) << " vs " << cyc(b32);
  EXPECT_GE(opened(b1), opened(b4));
  EXPECT_GT(opened(b4), opened(b32));
  EXPECT_EQ(ideal.bytes_of("dram_row_open"), 0u);
  const fm::Stats rows_open = run({{"hbm_banks", "4"}}, 4096, 256),
                  rows_closed = run({{"hbm_banks", "4"}, {"hbm_page_policy", "closed"}}, 4096, 256);
  EXPECT_LT(cyc(rows_open), cyc(rows_closed));
  EXPECT_DOUBLE_EQ(opened(rows_closed), 1.0);
  EXPECT_LT(opened(rows_open), 1.0);
}

TEST(Properties, LargeComputeBoundReachesPeak) {
  // Enough bandwidth everywhere: the datapath is the bottleneck and stays >= 90 % busy.
  for (fm::Timing t : {fm::Timing::Analytic, fm::Timing::Cycle}) {
    const fm::Result r = fm::run(tc_params({{"cores", "4"}, {"l2_bytes_per_cycle", "65536"}, {"core_load_bytes_per_cycle", "256"},
                                            {"die_link_bytes_per_cycle", "65536"}}),
                                 timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 1024, 2048, 4096), mode(t));
    EXPECT_GE(r.stats.utilization(), 0.90) << fm::timing_name(t) << " " << r.stats.mapping.str();
    const fm::Result c = fm::run(cube_params({{"cores", "4"}, {"core_load_bytes_per_cycle", "512"}, {"mte1_bytes_per_cycle", "512"}}),
                                 timing_only(MmaKindId::Hif4, Model::AscendHif4, 1024, 2048, 4096), mode(t));
    EXPECT_GE(c.stats.utilization(), 0.90) << fm::timing_name(t) << " " << c.stats.mapping.str();
  }
}

TEST(Properties, DecodeNearMemoryRoofline) {
  // M = 1 ... 16: the weights stream from HBM once; the layer lands within 10 % of bytes / bandwidth.
  for (fm::Timing t : {fm::Timing::Analytic, fm::Timing::Cycle}) {
    for (size_t m : {1, 4, 16}) {
      // Weights large enough that the HBM latency (~1200 cycles) is a few % of the streaming time.
      const fm::Result r = fm::run(tc_params(), timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, m, 16384, 16384), mode(t));
      EXPECT_LE(static_cast<double>(r.stats.cycles), 1.10 * r.stats.memory_roofline_cycles)
          << "tensor core M=" << m << " " << fm::timing_name(t) << " " << r.stats.mapping.str();
      const fm::Result c = fm::run(cube_params(), timing_only(MmaKindId::Hif4, Model::AscendHif4, m, 8192, 8192), mode(t));
      EXPECT_LE(static_cast<double>(c.stats.cycles), 1.10 * c.stats.memory_roofline_cycles)
          << "cube M=" << m << " " << fm::timing_name(t) << " " << c.stats.mapping.str();
    }
  }
}

// Analytic vs cycle on the same mapping: within 15 % on compute-bound and memory-bound shapes
// (docs/models.md "Two timing modes").
TEST(Properties, AnalyticAgreesWithCycle) {
  struct Case {
    fm::EngineKind e;
    MmaKindId kind;
    Model model;
    size_t M, N, K;
    const char* cta_group = "1";
  };
  // Compute-bound: 4 cores with ample bandwidth on one die (two dies' 300-cycle far accesses stall
  // the cycle model's in-order stages more than the estimate sees: docs/models.md); memory-bound:
  // decode on the default chip; both also on SM pairs.
  for (const Case& c : {Case{fm::EngineKind::TensorCore, MmaKindId::Mxf4Nvf4, Model::Blackwell, 1024, 2048, 4096},
                        Case{fm::EngineKind::TensorCore, MmaKindId::Mxf4Nvf4, Model::Blackwell, 8, 16384, 16384},
                        Case{fm::EngineKind::TensorCore, MmaKindId::Mxf4Nvf4, Model::Blackwell, 1024, 2048, 4096, "2"},
                        Case{fm::EngineKind::TensorCore, MmaKindId::Mxf4Nvf4, Model::Blackwell, 8, 16384, 16384, "2"},
                        Case{fm::EngineKind::Cube, MmaKindId::Hif4, Model::AscendHif4, 1024, 2048, 4096},
                        Case{fm::EngineKind::Cube, MmaKindId::Hif4, Model::AscendHif4, 8, 8192, 8192}}) {
    fm::Params p = bare(c.e);
    if (c.e == fm::EngineKind::TensorCore) fm::set_param(p, "cta_group", c.cta_group);
    if (c.M > 8) {
      for (auto [k, v] : c.e == fm::EngineKind::TensorCore
                             ? std::vector<std::pair<const char*, const char*>>{{"cores", "4"}, {"dies", "1"}, {"l2_bytes_per_cycle", "65536"}, {"core_load_bytes_per_cycle", "256"}}
                             : std::vector<std::pair<const char*, const char*>>{{"cores", "4"}, {"core_load_bytes_per_cycle", "512"}, {"mte1_bytes_per_cycle", "512"}})
        fm::set_param(p, k, v);
    }
    const fm::Workload w = timing_only(c.kind, c.model, c.M, c.N, c.K);
    const fm::Result a = fm::run(p, w, mode(fm::Timing::Analytic));
    // Pin the analytic mapping so both modes time the same schedule.
    const fm::Mapping& m = a.stats.mapping;
    fm::set_param(p, "tile_m", std::to_string(m.tile_m));
    fm::set_param(p, "tile_n", std::to_string(m.tile_n));
    fm::set_param(p, "tile_k", std::to_string(m.tile_k));
    if (m.l1_k) fm::set_param(p, "l1_k", std::to_string(m.l1_k));
    if (m.stages) fm::set_param(p, "stages", std::to_string(m.stages));
    fm::set_param(p, "raster", m.raster == fm::Raster::AlongM ? "m" : "n");
    const fm::Result y = fm::run(p, w, mode(fm::Timing::Cycle));
    const double ratio = static_cast<double>(a.stats.cycles) / static_cast<double>(y.stats.cycles);
    EXPECT_NEAR(ratio, 1.0, 0.15) << fm::engine_name(c.e) << " cta_group " << c.cta_group << " " << c.M << "x" << c.N << "x" << c.K << " "
                                  << m.str() << ": analytic " << a.stats.cycles << " cycle " << y.stats.cycles;
  }
}

// ---------------------------------------------------------------------------------------------
// Parameters, mapper, system

TEST(Params, SetAndReject) {
  fm::Params p = bare(fm::EngineKind::Cube);
  fm::set_param(p, "l0a_bytes", "32768");
  EXPECT_EQ(p.l0a_bytes, 32768);
  EXPECT_EQ(fm::get_param(p, "l0a_bytes"), "32768");
  fm::set_param(p, "out_format", "hif4");
  EXPECT_EQ(fm::get_param(p, "out_format"), "hif4");
  auto msg = [&](const char* k, const char* v) {
    try {
      fm::set_param(p, k, v);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg("l0_bytes", "1").find("unknown model parameter 'l0_bytes'"), std::string::npos);
  EXPECT_NE(msg("smem_bytes", "1").find("does not apply to the cube"), std::string::npos);
  EXPECT_NE(msg("l0a_bytes", "12k").find("bad value '12k' for model parameter 'l0a_bytes'"), std::string::npos);
  EXPECT_NE(msg("cores", "0").find("'cores' (1 to"), std::string::npos);
  EXPECT_NE(msg("raster", "diagonal").find("(one of auto, n, m)"), std::string::npos);
  for (const fm::ParamDesc& d : fm::param_table(fm::EngineKind::TensorCore))
    EXPECT_NO_THROW(fm::get_param(fm::default_params(fm::EngineKind::TensorCore), d.key)) << d.key;
}

TEST(Params, PipelineDepthComesFromTheRtlUnit) {
  // 0 = the measured latency of the RTL unit computing the configuration (test_unit_latency.cpp).
  const fm::Result r = fm::run(tc_params({{"cores", "1"}}), timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 128, 64, 64));
  (void)r;
  EXPECT_EQ(fm::rtl_pipeline_depth(fm::EngineKind::TensorCore, fp4sim::make_mma_config(MmaKindId::Mxf4Nvf4)),
            fm::unit_latency("bs_dot_k64_ue4m3_b16"));
  EXPECT_EQ(fm::rtl_pipeline_depth(fm::EngineKind::Cube, fp4sim::make_mma_config(MmaKindId::Hif4)),
            fm::unit_latency("hif4_pe"));
  EXPECT_EQ(fm::rtl_pipeline_depth(fm::EngineKind::Cube, fp4sim::make_mma_config(MmaKindId::Mxf4Nvf4)),
            fm::unit_latency("nvfp4_pe64"));
  EXPECT_EQ(fm::rtl_pipeline_depth(fm::EngineKind::TensorCore, fp4sim::make_mma_config(MmaKindId::Mxf4)),
            fm::unit_latency("bs_dot_k64_ue8m0_b32"));
}

TEST(Mapper, EveryShapeFromMEqualsOne) {
  for (size_t m : {1, 2, 7, 16, 33}) {
    const Problem p = make_problem(MmaKindId::Mxf4Nvf4, Model::Blackwell, m, 48, 256, true, 40 + m);
    EXPECT_EQ(mismatches(fm::run(tc_params({{"cores", "2"}}), p.workload()).d, p.golden()), 0u) << m;
    const Problem h = make_problem(MmaKindId::Hif4, Model::AscendHif4, m, 48, 256, true, 50 + m);
    EXPECT_EQ(mismatches(fm::run(cube_params({{"cores", "2"}}), h.workload()).d, h.golden()), 0u) << m;
  }
  // The failing case: decode-shaped on the cube with small L0 buffers.
  const fm::Result r = fm::run(cube_params({{"l0a_bytes", "32768"}}), timing_only(MmaKindId::Hif4, Model::AscendHif4, 16, 4096, 4096));
  EXPECT_GT(r.stats.cycles, 0u);
}

TEST(Mapper, PinnedMappingAndClearErrors) {
  const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 256, 256, 512);
  const fm::Result r = fm::run(tc_params({{"tile_n", "64"}, {"tile_k", "128"}, {"stages", "3"}, {"raster", "m"}}), w);
  EXPECT_EQ(r.stats.mapping.tile_n, 64);
  EXPECT_EQ(r.stats.mapping.tile_k, 128);
  EXPECT_EQ(r.stats.mapping.stages, 3);
  EXPECT_EQ(r.stats.mapping.raster, fm::Raster::AlongM);
  EXPECT_EQ(r.stats.mappings_evaluated, 1u);
  const auto err = [&](const fm::Params& p) {
    try {
      fm::run(p, w);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(err(tc_params({{"tile_n", "12"}})).find("tile_n must be 8..256"), std::string::npos);
  EXPECT_NE(err(tc_params({{"smem_bytes", "1024"}})).find("exceed smem_bytes"), std::string::npos)
      << err(tc_params({{"smem_bytes", "1024"}}));
  EXPECT_NE(err(tc_params({{"tile_m", "64"}})).find("tile_m must be 128"), std::string::npos);
  const Problem h = make_problem(MmaKindId::Hif4, Model::AscendHif4, 128, 64, 64, false, 16);
  EXPECT_THROW(fm::run(tc_params(), h.workload()), std::invalid_argument);  // no HiF4 on the tensor core
  const Problem e = make_problem(MmaKindId::Mxf4, Model::Exact, 128, 64, 64, false, 17);
  EXPECT_THROW(fm::run(tc_params(), e.workload()), std::invalid_argument);
  // The mapper ranks candidates best first.
  const std::vector<fm::MapChoice> ranked = fm::rank_mappings(tc_params(), w);
  ASSERT_GT(ranked.size(), 4u);
  for (size_t i = 1; i < ranked.size(); ++i) EXPECT_LE(ranked[i - 1].estimate.cycles, ranked[i].estimate.cycles);
}

// A long job (>= 16 waves of tiles for every candidate) has its candidates ranked by their first 4
// waves, extrapolated; the chosen mapping is then simulated in full. Cross-check against full
// simulations: the choice is within 3 % of the best of the main candidates simulated whole (every
// tile_n / tile_k / raster the mapper would weigh on this shape, each pinned: one full simulation).
// (2.2 % on the two-die memory system: the first waves fill the HBM queues and MSHRs from empty.)
TEST(Mapper, RankingByTheFirstWavesPicksNearTheBest) {
  const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 4096, 8192, 1024);
  const fm::Result r = fm::run(tc_params({{"cores", "32"}}), w, mode(fm::Timing::Cycle));
  check_stats(r.stats, 4096, 8192, 1024);
  EXPECT_GE(r.stats.tiles, 16u * 32u);  // long enough to be ranked by its first waves
  uint64_t best = UINT64_MAX;
  std::string best_map;
  for (const char* tn : {"64", "128", "256"})
    for (const char* tk : {"128", "256", "512"})
      for (const char* ra : {"n", "m"}) {
        const fm::Result f = fm::run(tc_params({{"cores", "32"}, {"tile_n", tn}, {"tile_k", tk}, {"raster", ra}}), w,
                                     mode(fm::Timing::Cycle));
        EXPECT_EQ(f.stats.mappings_evaluated, 1u);
        if (f.stats.mapping.str() == r.stats.mapping.str()) {
          EXPECT_EQ(f.stats.cycles, r.stats.cycles);  // the result is the full simulation
        }
        if (f.stats.cycles < best) best = f.stats.cycles, best_map = f.stats.mapping.str();
      }
  EXPECT_LE(static_cast<double>(r.stats.cycles), 1.03 * static_cast<double>(best))
      << "chose " << r.stats.mapping.str() << " (" << r.stats.cycles << "), best " << best_map << " (" << best << ")";
}

TEST(System, MultipleJobsAreIndependentOfHistory) {
  const fm::Workload a = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 256, 512, 512);
  const fm::Workload b = timing_only(MmaKindId::Hif4, Model::AscendHif4, 64, 1024, 512);
  const fm::Stats first = fm::run(tc_params({{"cores", "8"}}), a).stats;
  (void)fm::run(tc_params({{"cores", "3"}, {"stages", "2"}}), timing_only(MmaKindId::Mxf4, Model::Blackwell, 300, 96, 256));
  (void)fm::run(cube_params(), b);
  const fm::Stats again = fm::run(tc_params({{"cores", "8"}}), a).stats;
  EXPECT_EQ(first.cycles, again.cycles);
  EXPECT_EQ(first.stalls, again.stalls);
  EXPECT_EQ(first.bytes, again.bytes);
  EXPECT_GE(fm::sim_starts(), 4u);
}

// A load engine whose requests block on the bounded L2 queue while earlier responses of the same
// job already arrive (large L1 chunks: many requests per job): every response must count against
// its job. The case (HiF4 512 x 4096 x 4096 with l1_bytes=1048576, cycle timing) stopped
// with "simulation stopped before the job finished" when the early responses were lost.
TEST(System, LoadEngineCountsEarlyResponses) {
  const fm::Workload w = timing_only(MmaKindId::Hif4, Model::AscendHif4, 512, 4096, 4096);
  fm::Result r;
  ASSERT_NO_THROW(r = fm::run(cube_params({{"l1_bytes", "1048576"}}), w, mode(fm::Timing::Cycle)));
  check_stats(r.stats, 512, 4096, 4096);
}

// A job that fails inside the simulation (here the datapath throws on its first step, while the load
// units hold tokens mid-iteration) reports its error, and the next jobs of the process start from
// a clean state: the same cycles as in a process that never failed (MultipleJobs' reference runs).
TEST(System, FailedJobLeavesNoTrace) {
  const fm::Workload a = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 256, 512, 512);
  const fm::Stats first = fm::run(tc_params({{"cores", "8"}}), a).stats;
  for (bool cube : {false, true}) {
    const Problem p = cube ? make_problem(MmaKindId::Hif4, Model::AscendHif4, 200, 136, 1088, true, 38)
                           : make_problem(MmaKindId::Mxf4Nvf4, Model::Blackwell, 200, 72, 320, true, 39);
    fm::Workload w = p.workload();
    w.datapath = [](auto&&...) -> std::vector<float> { throw std::runtime_error("datapath fault on purpose"); };
    try {
      fm::run(cube ? cube_params({{"cores", "2"}}) : tc_params({{"tile_n", "32"}, {"cores", "2"}}), w);
      ADD_FAILURE() << "the failing job did not report its error";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "datapath fault on purpose");
    }
  }
  const fm::Stats again = fm::run(tc_params({{"cores", "8"}}), a).stats;
  EXPECT_EQ(first.cycles, again.cycles);
  EXPECT_EQ(first.stalls, again.stalls);
  EXPECT_EQ(first.bytes, again.bytes);
  // A functional job after the failures is bit-exact.
  const Problem h = make_problem(MmaKindId::Hif4, Model::AscendHif4, 200, 136, 1088, true, 40);
  EXPECT_EQ(mismatches(fm::run(cube_params({{"cores", "2"}}), h.workload()).d, h.golden()), 0u);
}

// Every core count in range runs (each core's units are a few SystemC threads, each with its own
// stack mapping, and the rest methods without one; vm.max_map_count is 65530 by default). A
// 4096-core chip runs a small GEMM, and the result is the one of a chip with as many cores as tiles:
// cores without a tile change nothing but their own no_tile cycles.
void many_cores(fm::EngineKind e, MmaKindId kind, Model model) {
  fm::reserve_cores(e, 4096);
  const fm::Workload w = timing_only(kind, model, 256, 1024, 256);
  const fm::Result r = fm::run(params(e, {{"cores", "4096"}}), w, mode(fm::Timing::Cycle));
  check_stats(r.stats, 256, 1024, 256);
  const uint64_t tiles = r.stats.tiles;
  ASSERT_LT(tiles, 4096u);
  fm::Params p = params(e, {{"cores", std::to_string(tiles).c_str()}});
  const fm::Mapping& m = r.stats.mapping;  // the same mapping on the smaller chip
  fm::set_param(p, "tile_m", std::to_string(m.tile_m));
  fm::set_param(p, "tile_n", std::to_string(m.tile_n));
  fm::set_param(p, "tile_k", std::to_string(m.tile_k));
  if (m.l1_k) fm::set_param(p, "l1_k", std::to_string(m.l1_k));
  if (m.stages) fm::set_param(p, "stages", std::to_string(m.stages));
  fm::set_param(p, "raster", m.raster == fm::Raster::AlongM ? "m" : "n");
  const fm::Result small = fm::run(p, w, mode(fm::Timing::Cycle));
  EXPECT_EQ(small.stats.cycles, r.stats.cycles);
  EXPECT_EQ(small.stats.compute_cycles, r.stats.compute_cycles);
  EXPECT_EQ(small.stats.bytes, r.stats.bytes);
  EXPECT_EQ(r.stats.stall("no_tile"), (4096 - tiles) * r.stats.cycles);
}
TEST(System, FourThousandTensorCores) { many_cores(fm::EngineKind::TensorCore, MmaKindId::Mxf4Nvf4, Model::Blackwell); }
TEST(System, FourThousandCubeCores) { many_cores(fm::EngineKind::Cube, MmaKindId::Hif4, Model::AscendHif4); }

TEST(System, ProgressReachesOne) {
  const Problem p = make_problem(MmaKindId::Mxf4Nvf4, Model::Blackwell, 256, 64, 128, false, 30);
  double last = 0;
  int calls = 0;
  fm::RunOptions o;
  o.progress = [&](double f) {
    EXPECT_GE(f, last);
    last = f;
    ++calls;
  };
  const fm::Result r = fm::run(tc_params({{"tile_n", "32"}}), p.workload(), o);
  // One call per stored tile (2 x 2 tiles) of every simulation: each candidate, then the chosen
  // mapping with the datapath (a single candidate is simulated once).
  const size_t n = r.stats.mappings_evaluated;
  ASSERT_GT(n, 1u);
  EXPECT_EQ(calls, static_cast<int>(4 * (n + 1)));
  EXPECT_DOUBLE_EQ(last, 1.0);
  calls = 0, last = 0;
  fm::run(tc_params({{"tile_n", "32"}, {"tile_k", "64"}, {"stages", "2"}, {"raster", "n"}}), p.workload(), o);
  EXPECT_EQ(calls, 4);  // a pinned mapping: one simulation
  EXPECT_DOUBLE_EQ(last, 1.0);
}

TEST(System, TimingOnlyGivesTheSameSchedule) {
  const Problem p = make_problem(MmaKindId::Hif4, Model::AscendHif4, 200, 136, 1088, true, 31);
  fm::Workload w = p.workload();
  const fm::Stats full = fm::run(cube_params({{"cores", "3"}}), w).stats;
  w.timing_only = true;
  const fm::Stats t = fm::run(cube_params({{"cores", "3"}}), w).stats;
  EXPECT_EQ(full.cycles, t.cycles);
  EXPECT_EQ(full.stalls, t.stalls);
  EXPECT_EQ(full.bytes, t.bytes);
}

TEST(System, DatapathHookComputesEveryStep) {
  const Problem p = make_problem(MmaKindId::Mxf4Nvf4, Model::Blackwell, 200, 72, 320, true, 36);
  const Problem h = make_problem(MmaKindId::Hif4, Model::AscendHif4, 200, 136, 1088, true, 37);
  for (fm::Timing t : {fm::Timing::Cycle, fm::Timing::Analytic})
    for (bool fault : {false, true}) {
      SCOPED_TRACE(fault ? "faulty datapath" : "golden datapath");
      for (const Problem* pr : {&p, &h}) {
        auto rec = std::make_shared<RecordingDatapath>();
        rec->K_total = pr->K;
        rec->fault = fault;
        fm::Workload w = pr->workload();
        w.datapath = [rec](auto&&... args) { return (*rec)(args...); };
        const bool cube = pr == &h;
        const fm::Result r = fm::run(cube ? cube_params({{"cores", "2"}, {"l0a_bytes", "16384"}})
                                          : tc_params({{"tile_n", "32"}, {"cores", "2"}}),
                                     w, mode(t));
        EXPECT_EQ(rec->steps, r.stats.instructions);  // one call per instruction / K step
        EXPECT_EQ(rec->macs, pr->M * pr->N * pr->K);  // covering the layer once (real rows only)
        const std::vector<float> want = pr->golden();
        EXPECT_EQ(mismatches(r.d, want, fault), fault ? 1u : 0u);  // the engine's D is the datapath's
        EXPECT_EQ(std::bit_cast<uint32_t>(r.d[0]) ^ std::bit_cast<uint32_t>(want[0]), fault ? 1u : 0u);
      }
    }
}

TEST(System, VcdTraceRecordsTheChannels) {
  const std::string path = ::testing::TempDir() + "fp4sim_models_trace_" + std::to_string(::getpid()) + ".vcd";
  fm::open_trace(path);
  EXPECT_THROW(fm::open_trace(path), std::logic_error);  // one trace per process
  // One SM, two SMEM stages, load-bound: the stage ring empties and the MMA queue waits.
  const fm::Result r = fm::run(tc_params({{"cores", "1"}, {"stages", "2"}, {"tile_n", "64"}, {"tile_k", "64"},
                                          {"core_load_bytes_per_cycle", "16"}, {"mapper_candidates", "1"}}),
                               timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 128, 64, 512));
  fm::close_trace();
  EXPECT_FALSE(std::filesystem::exists(path + ".partial.vcd"));  // renamed into place
  EXPECT_THROW(fm::open_trace(path), std::logic_error);          // a job has run: too late for traces
  // VCD keeps the last value of each cycle: a token freed and taken in the same cycle leaves no mark.
  const Changes free_stages = vcd_changes(path, "SystemC.tensor_core.sm0.smem_free", "occupancy");
  const Changes loading = vcd_changes(path, "SystemC.tensor_core.sm0.tma.inflight", "occupancy");
  const Changes ready = vcd_changes(path, "SystemC.tensor_core.sm0.smem_free", "valid");
  ASSERT_FALSE(free_stages.empty());
  ASSERT_FALSE(loading.empty());
  // Load-bound: both stages are taken at once (no free stage: the producer waits, valid low), a
  // load job is always in flight, and both stages are free again at the end.
  EXPECT_EQ(free_stages.front(), std::make_pair(uint64_t{0}, uint64_t{0}));
  EXPECT_EQ(ready.front().second, 0u);
  EXPECT_EQ(loading.front().second, 1u);
  EXPECT_EQ(free_stages.back().second, 2u);
  EXPECT_LE(free_stages.back().first, r.stats.cycles);
  // The datapath's busy flag: eight separate instructions (one per stage, each waiting for its load),
  // busy for their occupancy in all: compute, plus the SMEM operand reads where they take longer
  // (tile_n 64: 6 KiB per instruction at 128 B/cycle, 48 cycles against 32 of compute).
  const Changes busy = vcd_changes(path, "SystemC.tensor_core.sm0.mma_pipe", "busy");
  uint64_t rises = 0, busy_cycles = 0;
  for (size_t i = 0; i < busy.size(); ++i)
    if (busy[i].second == 1) {
      ++rises;
      if (i + 1 < busy.size()) busy_cycles += busy[i + 1].first - busy[i].first;
    }
  EXPECT_EQ(rises, 8u);
  EXPECT_EQ(busy_cycles, r.stats.compute_cycles + r.stats.stall("smem_bandwidth"));
  EXPECT_EQ(r.stats.stall("smem_bandwidth"), 8u * (48u - 32u));
  if (!HasFailure()) std::filesystem::remove(path);
}

}  // namespace

// SystemC's library provides main(); gtest runs from sc_main.
int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

// ---------------------------------------------------------------------------------------------
// The kernel around the datapath: launch, output type, sustained clock, swap-AB

TEST(Kernel, LaunchAddsExactlyItsCycles) {
  // One tile on one core: the launch comes before everything, so it adds launch_ns x clock cycles
  // (1000 ns at 1856 / 1800 MHz = 1856 / 1800 cycles), all of them no_tile on the core.
  struct Case {
    fm::EngineKind e;
    MmaKindId kind;
    Model model;
    size_t M, N, K;
    uint64_t cycles;
  };
  for (const Case& c : {Case{fm::EngineKind::TensorCore, MmaKindId::Mxf4Nvf4, Model::Blackwell, 128, 64, 64, 1856},
                        Case{fm::EngineKind::Cube, MmaKindId::Hif4, Model::AscendHif4, 16, 16, 64, 1800}})
    for (fm::Timing t : {fm::Timing::Analytic, fm::Timing::Cycle}) {
      fm::Params p = bare(c.e);
      fm::set_param(p, "cores", "1");
      const fm::Workload w = timing_only(c.kind, c.model, c.M, c.N, c.K);
      const fm::Stats a = fm::run(p, w, mode(t)).stats;
      fm::set_param(p, "launch_ns", "1000");
      const fm::Stats b = fm::run(p, w, mode(t)).stats;
      EXPECT_EQ(b.cycles, a.cycles + c.cycles) << fm::timing_name(t);
      EXPECT_EQ(b.launch_cycles, c.cycles);
      EXPECT_EQ(b.stall("no_tile"), a.stall("no_tile") + c.cycles);
      EXPECT_DOUBLE_EQ(b.time_us(), static_cast<double>(b.cycles) / static_cast<double>(p.clock_mhz));
    }
}

TEST(Kernel, ClusterRunsWholeClustersOnly) {
  // 4 tiles of 128 x 256 x 4096 on 4 SMs, loads ample: a tile is 64 instructions of
  // ceil(128 x 256 / 256) = 128 cycles = 8192 compute cycles. In clusters of 1, 2 or 4 SMs all 4
  // SMs run and the job is one wave (under two tiles' time); in clusters of 3 only one cluster
  // launches, so 3 SMs run, one of them two tiles back to back (at least 2 x 8192 cycles), and the
  // fourth SM gets no tile for the whole job. A cluster larger than the chip does not launch.
  const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 128, 1024, 4096);
  for (fm::Timing t : {fm::Timing::Analytic, fm::Timing::Cycle}) {
    const auto run = [&](const char* cluster) {
      return fm::run(tc_params({{"cores", "4"}, {"tile_n", "256"}, {"cluster_sms", cluster},
                                {"l2_bytes_per_cycle", "65536"}, {"core_load_bytes_per_cycle", "512"}}),
                     w, mode(t)).stats;
    };
    for (const char* c : {"1", "2", "4"}) {
      const fm::Stats s = run(c);
      EXPECT_GE(s.cycles, 8192u) << c << " " << fm::timing_name(t);
      EXPECT_LT(s.cycles, 2u * 8192u) << c << " " << fm::timing_name(t);
      EXPECT_EQ(s.compute_cycles, 4u * 8192u) << c;
    }
    const fm::Stats three = run("3");
    EXPECT_GE(three.cycles, 2u * 8192u) << fm::timing_name(t);
    EXPECT_EQ(three.compute_cycles, 4u * 8192u);
    EXPECT_GE(three.stall("no_tile"), three.cycles) << fm::timing_name(t);
    EXPECT_GT(three.cycles, run("1").cycles);
    EXPECT_THROW(run("5"), std::invalid_argument);
  }
}

TEST(Kernel, ClustersRunInsideGpcs) {
  // 144 tiles of 128 x 256 x 4096 on 148 SMs, loads ample: a tile is 8192 compute cycles (above).
  // Clusters of 16 SMs without a GPC limit: 9 clusters, 144 SMs, one wave (under two tiles' time).
  // In 8 GPCs (74 TPCs: two GPCs of 20 SMs, six of 18) a GPC holds one cluster of 16: 8 clusters,
  // 128 SMs, so 16 tiles run in a second wave (at least 2 x 8192 cycles). Clusters of 8: two per
  // GPC, 16 clusters, 128 SMs, again two waves; clusters of 2 fill every TPC: 148 SMs, one wave.
  const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 128, 144 * 256, 4096);
  for (fm::Timing t : {fm::Timing::Analytic, fm::Timing::Cycle}) {
    const auto run = [&](const char* cluster, const char* gpcs, const char* max_clusters = "0") {
      // One die and misses without bound: 148 SMs stream 16 KB/cycle, past a die's MSHRs.
      return fm::run(tc_params({{"tile_n", "256"}, {"cluster_sms", cluster}, {"gpcs", gpcs},
                                {"max_clusters", max_clusters}, {"dies", "1"},
                                {"l2_mshrs", "65536"}, {"dram_queue", "65536"}, {"dram_bytes_per_cycle", "65536"},
                                {"l2_bytes_per_cycle", "65536"}, {"core_load_bytes_per_cycle", "512"}}),
                     w, mode(t)).stats;
    };
    const fm::Stats free = run("16", "0");
    EXPECT_GE(free.cycles, 8192u) << fm::timing_name(t);
    EXPECT_LT(free.cycles, 2u * 8192u) << fm::timing_name(t);
    for (const char* c : {"16", "8"}) {
      const fm::Stats in8 = run(c, "8");
      EXPECT_GE(in8.cycles, 2u * 8192u) << c << " " << fm::timing_name(t);
      EXPECT_EQ(in8.compute_cycles, 144u * 8192u) << c;
      EXPECT_GE(in8.stall("no_tile"), 20u * in8.cycles) << c << " " << fm::timing_name(t);  // 20 SMs never run
    }
    // A part that holds 15 clusters (cudaOccupancyMaxActiveClusters), not the GPCs' 16: 120 SMs.
    const fm::Stats fused = run("8", "8", "15");
    EXPECT_GE(fused.stall("no_tile"), 28u * fused.cycles) << fm::timing_name(t);
    EXPECT_GE(fused.cycles, 2u * 8192u) << fm::timing_name(t);
    const fm::Stats pairs = run("2", "8");
    EXPECT_LT(pairs.cycles, 2u * 8192u) << fm::timing_name(t);
    // A GPC smaller than the cluster holds none.
    EXPECT_THROW(run("16", "74"), std::invalid_argument);
  }
}

TEST(Kernel, ClusterAlongMIdlesTheTilesMLacks) {
  // 8 SMs in clusters of 4, M = 128 (one tile of M), N = 8 tiles of 256, K = 4096: a tile is 8192
  // compute cycles. cluster_m 1 (the cluster along N): 8 SMs, 8 tiles, one wave. cluster_m 2: a
  // cluster covers 2 tiles of M, one of them past M, so 2 of its 4 SMs idle: 4 SMs, two waves.
  // cluster_m 4: one SM of 4 works: 4 waves. With M = 256 (two tiles of M) cluster_m 2 idles none:
  // two waves as with cluster_m 1 (the multicast differs, "TmaMulticast...").
  for (fm::Timing t : {fm::Timing::Analytic, fm::Timing::Cycle}) {
    const auto run = [&](size_t M, const char* cm) {
      const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, M, 8 * 256, 4096);
      return fm::run(tc_params({{"cores", "8"}, {"tile_n", "256"}, {"cluster_sms", "4"}, {"cluster_m", cm},
                                {"l2_bytes_per_cycle", "65536"}, {"core_load_bytes_per_cycle", "512"}}),
                     w, mode(t)).stats;
    };
    const fm::Stats one = run(128, "1");
    EXPECT_GE(one.cycles, 8192u) << fm::timing_name(t);
    EXPECT_LT(one.cycles, 2u * 8192u) << fm::timing_name(t);
    EXPECT_EQ(run(128, "0").cycles, one.cycles);
    const fm::Stats two = run(128, "2"), four = run(128, "4");
    EXPECT_GE(two.cycles, 2u * 8192u) << fm::timing_name(t);
    EXPECT_LT(two.cycles, 3u * 8192u) << fm::timing_name(t);
    EXPECT_GE(four.cycles, 4u * 8192u) << fm::timing_name(t);
    EXPECT_EQ(two.compute_cycles, 8u * 8192u);
    for (const char* cm : {"1", "2"}) {
      EXPECT_GE(run(256, cm).cycles, 2u * 8192u) << cm << " " << fm::timing_name(t);
      EXPECT_LT(run(256, cm).cycles, 3u * 8192u) << cm << " " << fm::timing_name(t);
    }
    EXPECT_THROW(run(128, "3"), std::invalid_argument);  // does not divide the cluster
  }
  const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 128, 1024, 4096);
  EXPECT_THROW(fm::run(tc_params({{"cta_group", "2"}, {"cluster_sms", "4"}, {"cluster_m", "1"}}), w),
               std::invalid_argument);  // a pair lies along M
}

TEST(Kernel, TmaMulticastSharesTheL2Reads) {
  // M = 256, N = 8 x 256, K = 4096 NVFP4 (0.5625 B per element with scales): 16 tiles; a tile's A is
  // 128 x 4096 = 294 912 B, its B 256 x 4096 = 589 824 B. Each SM's SMEM receives every tile's A and
  // B: 16 x 884 736 = 14 155 776 B whatever the cluster. L2 reads: without a cluster all of it; in
  // clusters of 4 along N (cluster_m 1) A is shared by 4: 16 x (589 824 + 73 728) = 10 616 832 B;
  // 2 x 2 (cluster_m 2): A and B by 2: 16 x (294 912 + 147 456) = 7 077 888 B.
  const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 256, 8 * 256, 4096);
  for (fm::Timing t : {fm::Timing::Analytic, fm::Timing::Cycle}) {
    const auto run = [&](const char* cluster, const char* cm, const char* l2_rate) {
      return fm::run(tc_params({{"cores", "8"}, {"tile_n", "256"}, {"cluster_sms", cluster}, {"cluster_m", cm},
                                {"l2_bytes_per_cycle", l2_rate}, {"core_load_bytes_per_cycle", "512"}}),
                     w, mode(t)).stats;
    };
    const fm::Stats none = run("1", "0", "65536"), along_n = run("4", "1", "65536"), square = run("4", "2", "65536");
    EXPECT_EQ(none.bytes_of("l2_read"), 14155776u) << fm::timing_name(t);
    EXPECT_EQ(along_n.bytes_of("l2_read"), 10616832u) << fm::timing_name(t);
    EXPECT_EQ(square.bytes_of("l2_read"), 7077888u) << fm::timing_name(t);
    for (const fm::Stats* s : {&none, &along_n, &square}) EXPECT_EQ(s->bytes_of("smem_write"), 14155776u) << fm::timing_name(t);
    // L2-bound (64 B/cycle for 8 SMs): the shared reads make the job faster.
    const fm::Stats slow = run("1", "0", "64"), shared = run("4", "2", "64");
    EXPECT_LT(static_cast<double>(shared.cycles), 0.75 * static_cast<double>(slow.cycles)) << fm::timing_name(t);
  }
}

TEST(Kernel, MapperChoosesAClusterWhereL2Binds) {
  // cluster_sms 0: the mapper offers no cluster, or two SMs sharing A (along N) or B (along M).
  // L2-bound (64 B/cycle for 8 SMs, the multicast test's job) it takes a cluster and is faster than
  // without; with ample L2 the estimate ties and the time equals the clusterless kernel's.
  const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 256, 8 * 256, 4096);
  for (fm::Timing t : {fm::Timing::Analytic, fm::Timing::Cycle}) {
    const auto run = [&](const char* cluster, const char* l2_rate) {
      return fm::run(tc_params({{"cores", "8"}, {"tile_n", "256"}, {"cluster_sms", cluster},
                                {"l2_bytes_per_cycle", l2_rate}, {"core_load_bytes_per_cycle", "512"}}),
                     w, mode(t)).stats;
    };
    const fm::Stats none = run("1", "64"), chosen = run("0", "64");
    EXPECT_EQ(none.mapping.cluster_sms, 1) << fm::timing_name(t);
    EXPECT_EQ(chosen.mapping.cluster_sms, 2) << fm::timing_name(t);
    EXPECT_LT(chosen.cycles, none.cycles) << fm::timing_name(t);
    EXPECT_LT(chosen.bytes_of("l2_read"), none.bytes_of("l2_read")) << fm::timing_name(t);
    if (t == fm::Timing::Analytic) {
      EXPECT_EQ(run("0", "65536").cycles, run("1", "65536").cycles);
    }
  }
  const fm::Workload w1 = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 128, 1024, 4096);
  EXPECT_THROW(fm::run(tc_params({{"cluster_sms", "0"}, {"cluster_m", "2"}}), w1), std::invalid_argument);
}

TEST(Kernel, OutputTypeSetsTheStoredBytes) {
  // D stored as FP32 / BF16 / FP16 / FP8: 4 / 2 / 2 / 1 bytes per element, to the core's store link,
  // the L2 and HBM; a narrower D never makes the job slower.
  const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 256, 512, 256);
  for (fm::Timing t : {fm::Timing::Analytic, fm::Timing::Cycle}) {
    uint64_t prev = UINT64_MAX;
    for (auto [dt, bytes] : {std::pair{"fp32", 4u}, std::pair{"bf16", 2u}, std::pair{"fp16", 2u}, std::pair{"fp8", 1u}}) {
      const fm::Stats s = fm::run(tc_params({{"cores", "4"}, {"out_dtype", dt}}), w, mode(t)).stats;
      EXPECT_EQ(s.bytes_of("global_store"), 256u * 512u * bytes) << dt;
      EXPECT_EQ(s.bytes_of("dram_write"), 256u * 512u * bytes) << dt;
      EXPECT_LE(s.cycles, prev) << dt << " " << fm::timing_name(t);
      prev = s.cycles;
    }
  }
  // The cube's FixPipe converts on the way out: the same bytes rule.
  const fm::Workload cw = timing_only(MmaKindId::Hif4, Model::AscendHif4, 64, 128, 128);
  const fm::Stats s = fm::run(cube_params({{"cores", "2"}, {"out_dtype", "fp16"}}), cw).stats;
  EXPECT_EQ(s.bytes_of("global_store"), 64u * 128u * 2u);
}

TEST(Kernel, SustainedClockKeepsHbmBytesPerSecond) {
  // Half the clock for 4-bit kinds: on-chip work takes the same cycles (each one longer), HBM moves
  // twice the bytes per (slower) cycle. The memory roofline in cycles halves; a compute-bound job's
  // cycles stay and its time doubles.
  const fm::Workload big = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 512, 512, 1024);
  for (fm::Timing t : {fm::Timing::Analytic, fm::Timing::Cycle}) {
    const fm::Params full = tc_params({{"cores", "4"}, {"l2_bytes_per_cycle", "65536"}, {"core_load_bytes_per_cycle", "256"}});
    fm::Params half = full;
    fm::set_param(half, "clock_fp4_mhz", "928");
    const fm::Stats a = fm::run(full, big, mode(t)).stats, b = fm::run(half, big, mode(t)).stats;
    EXPECT_DOUBLE_EQ(a.clock_mhz, 1856.0);
    EXPECT_DOUBLE_EQ(b.clock_mhz, 928.0);
    EXPECT_DOUBLE_EQ(b.memory_roofline_cycles, a.memory_roofline_cycles / 2);
    EXPECT_EQ(b.compute_cycles, a.compute_cycles);
    EXPECT_LE(b.cycles, a.cycles);  // never more cycles: only HBM got relatively faster
    EXPECT_GE(b.time_us(), a.time_us());
    // The other kinds keep their own clock.
    const fm::Stats c = fm::run(half, timing_only(MmaKindId::Mxf8f6f4, Model::Blackwell, 128, 64, 64), mode(t)).stats;
    EXPECT_DOUBLE_EQ(c.clock_mhz, 1856.0);
  }
}

// Split-K (docs/models.md "Split-K"): parts 0 .. S-2 of each tile store FP32 partial tiles; the
// last part runs its K steps from C, then adds p0, p1, ... (FP32, in part order).
// Reference from golden gemm on the K ranges: K = 5 steps of tile_k in 3 parts, [0, 1), [1, 3),
// [3, 5); two full and one 8-wide tile column, a partial tile row; both modes.
TEST(SplitK, BitExactAgainstGoldenParts) {
  const MmaKindId kind = MmaKindId::Mxf4Nvf4;
  const size_t kin = static_cast<size_t>(fp4sim::mma_kind(kind).k);
  const Problem pr = make_problem(kind, Model::Blackwell, 200, 72, 5 * kin, true, 11);
  const size_t nblk = pr.K / static_cast<size_t>(pr.cfg.block);
  const auto part = [&](size_t k0, size_t kk, const std::vector<float>& c) {
    const size_t b0 = k0 / static_cast<size_t>(pr.cfg.block), nb = kk / static_cast<size_t>(pr.cfg.block);
    std::vector<uint8_t> a(pr.M * kk), b(pr.N * kk);
    std::vector<uint32_t> sa(pr.M * nb), sb(pr.N * nb);
    for (size_t r = 0; r < pr.M; ++r) {
      std::copy_n(pr.a.data() + r * pr.K + k0, kk, a.data() + r * kk);
      std::copy_n(pr.sa.data() + r * nblk + b0, nb, sa.data() + r * nb);
    }
    for (size_t r = 0; r < pr.N; ++r) {
      std::copy_n(pr.b.data() + r * pr.K + k0, kk, b.data() + r * kk);
      std::copy_n(pr.sb.data() + r * nblk + b0, nb, sb.data() + r * nb);
    }
    return fp4sim::gemm(pr.cfg, pr.model, pr.M, pr.N, kk, a, sa, b, sb, c, 1.0f, 2);
  };
  const std::vector<float> p0 = part(0, kin, {}), p1 = part(kin, 2 * kin, {});
  std::vector<float> want = part(3 * kin, 2 * kin, pr.c);
  for (size_t i = 0; i < want.size(); ++i) want[i] = (want[i] + p0[i]) + p1[i];
  ASSERT_GT(mismatches(want, pr.golden(), true), 0u);  // a different FP32 order than one K chain
  fm::Workload w = pr.workload();
  w.threads = 2;
  for (fm::Timing t : {fm::Timing::Cycle, fm::Timing::Analytic}) {
    const fm::Result r = fm::run(tc_params({{"tile_n", "32"}, {"tile_k", std::to_string(kin).c_str()}, {"cores", "4"},
                                            {"split_k", "3"}}),
                                 w, mode(t));
    EXPECT_EQ(mismatches(r.d, want), 0u) << fm::timing_name(t);
    EXPECT_EQ(r.stats.mapping.split_k, 3);
    EXPECT_EQ(r.stats.tiles, 6u);
    EXPECT_EQ(r.stats.instructions, 2u * 3u * 5u);  // the same instructions as one K chain
  }
}

// A long-K, skinny GEMM: one 1 x 16 output tile, K = 65536 (256 steps of 256). Without split-K one
// SM streams all of B; with it the mapper (timing-only work) splits K over the idle SMs. The partial
// tiles' bytes: each of the S - 1 parts stores 1 x 16 FP32 (64 B) that the last part loads, and D
// is 64 B: HBM writes 64 S bytes. Both modes; never below the rooflines.
TEST(SplitK, LongKSkinnyRunsOnManyCores) {
  const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 1, 16, 65536);
  for (fm::Timing t : {fm::Timing::Cycle, fm::Timing::Analytic}) {
    const fm::Params one = tc_params({{"cores", "16"}, {"split_k", "1"}, {"tile_k", "256"}, {"tile_n", "16"}});
    fm::Params any = one;
    fm::set_param(any, "split_k", "0");
    const fm::Stats a = fm::run(one, w, mode(t)).stats, b = fm::run(any, w, mode(t)).stats;
    const uint64_t S = static_cast<uint64_t>(b.mapping.split_k);
    check_stats(b, 1, 16, 65536, 64 * S);
    EXPECT_GE(S, 8u) << fm::timing_name(t);
    EXPECT_LE(S, 32u);
    EXPECT_GT(static_cast<double>(a.cycles), 4.0 * static_cast<double>(b.cycles)) << a.cycles << " vs " << b.cycles;
    EXPECT_EQ(b.bytes_of("dram_write"), 64u * S) << fm::timing_name(t);
    // Twice the SMs: the mapper splits further, never slower.
    fm::Params more = any;
    fm::set_param(more, "cores", "32");
    const fm::Stats c = fm::run(more, w, mode(t)).stats;
    EXPECT_LE(c.cycles, b.cycles) << fm::timing_name(t);
    EXPECT_GE(c.mapping.split_k, b.mapping.split_k);
  }
}

// The estimate of a split mapping against the cycle model, same mapping: a skinny long K in 16
// parts on 16 SMs, and 2 tiles of 128 x 128 in 8 parts each (the last parts load 7 partial tiles
// of 64 KiB) on 16 SMs.
TEST(SplitK, AnalyticAgreesWithCycle) {
  struct Case {
    size_t M, N, K;
    const char *tile_n, *split;
  };
  for (const Case& c : {Case{1, 16, 65536, "16", "16"}, Case{128, 256, 65536, "128", "8"}}) {
    const fm::Params p = tc_params({{"cores", "16"}, {"tile_k", "256"}, {"tile_n", c.tile_n}, {"split_k", c.split}});
    const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, c.M, c.N, c.K);
    const double a = static_cast<double>(fm::run(p, w, mode(fm::Timing::Analytic)).stats.cycles),
                 y = static_cast<double>(fm::run(p, w, mode(fm::Timing::Cycle)).stats.cycles);
    EXPECT_NEAR(a / y, 1.0, 0.15) << c.M << "x" << c.N << "x" << c.K << ": " << a << " vs " << y;
  }
}

TEST(SplitK, SkinnyEstimateStreamsTheWeight) {
  // A decode GEMM swapped (M = 4, N = 9216, K = 7168: 37 MB of weights over 148 SMs, 72 tiles of
  // 128 weight rows): split-K parts read distinct K slices of the weights, so the estimate's
  // equivalent problem multiplies the weights' tiles, not the 4 activation rows (which would leave
  // 9 MB of weights shared among the parts). Within 15 % of the cycle model, split or not, and
  // ranked as it ranks them.
  const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 4, 9216, 7168);
  double a[2], y[2];
  for (int i = 0; i < 2; ++i) {
    const fm::Params p = tc_params({{"swap_ab", "on"}, {"tile_n", "8"}, {"tile_k", "256"}, {"stages", "8"},
                                    {"split_k", i ? "4" : "1"}});
    a[i] = static_cast<double>(fm::run(p, w, mode(fm::Timing::Analytic)).stats.cycles);
    y[i] = static_cast<double>(fm::run(p, w, mode(fm::Timing::Cycle)).stats.cycles);
    EXPECT_NEAR(a[i] / y[i], 1.0, 0.15) << "split_k " << (i ? 4 : 1) << ": " << a[i] << " vs " << y[i];
  }
  EXPECT_EQ(a[1] < a[0], y[1] < y[0]);
}

TEST(SplitK, WhereItDoesNotApply) {
  // Functional work keeps one K chain (D equals golden gemm) unless split_k is pinned.
  const Problem pr = make_problem(MmaKindId::Mxf4Nvf4, Model::Blackwell, 8, 16, 4096, false, 5);
  const fm::Result r = fm::run(tc_params({{"cores", "8"}}), pr.workload(), mode(fm::Timing::Cycle));
  EXPECT_EQ(r.stats.mapping.split_k, 1);
  EXPECT_EQ(mismatches(r.d, pr.golden()), 0u);
  // The cube has no split-K; a quantize unit needs the whole sum; parts need K steps.
  fm::Params cube = cube_params();
  EXPECT_THROW(fm::set_param(cube, "split_k", "2"), std::invalid_argument);
  const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 128, 64, 512);
  const auto error = [&](std::initializer_list<std::pair<const char*, const char*>> kv) {
    try {
      fm::run(tc_params(kv), w);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error({{"split_k", "2"}, {"out_format", "nvfp4"}, {"tile_n", "64"}}).find("split_k > 1 needs out_format=none"),
            std::string::npos);
  EXPECT_NE(error({{"split_k", "3"}, {"tile_k", "256"}}).find("split_k 3 exceeds the 2 K steps"), std::string::npos);
}

TEST(Kernel, SwapAbForSkinnyM) {
  // M = 1, N = 4096 on 4 SMs: without the swap every instruction charges 128 padded rows x tile_n
  // columns (tile_n / 2 cycles per 64 K: compute-bound, 2 rows of B per cycle); swapped, N fills
  // the 128 rows and the one real row of A is an 8-column tile (4 cycles, then the loads bound it).
  // The mapper picks it in both modes, and it is never slower than the mapper without it.
  const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 1, 4096, 4096);
  for (fm::Timing t : {fm::Timing::Analytic, fm::Timing::Cycle}) {
    const fm::Stats on = fm::run(tc_params({{"swap_ab", "auto"}, {"cores", "4"}}), w, mode(t)).stats;
    const fm::Stats off = fm::run(tc_params({{"swap_ab", "off"}, {"cores", "4"}}), w, mode(t)).stats;
    EXPECT_TRUE(on.mapping.swap_ab) << fm::timing_name(t);
    EXPECT_EQ(on.mapping.tile_n, 8);
    EXPECT_LE(on.cycles, off.cycles);
    // 4096 rows / 128 = 32 tiles of 128 x 8; each instruction 128 x 8 / 256 lanes = 4 cycles.
    EXPECT_EQ(on.tiles, 32u);
    EXPECT_EQ(on.compute_cycles, 32u * (4096u / 64u) * 4u);
  }
  // The swap is bit-identical: the same products in the same K order, C in and D out transposed.
  const Problem p = make_problem(MmaKindId::Mxf4Nvf4, Model::Blackwell, 5, 136, 256, true, 31);
  for (fm::Timing t : {fm::Timing::Analytic, fm::Timing::Cycle}) {
    const fm::Result r = fm::run(tc_params({{"swap_ab", "on"}, {"cores", "2"}}), p.workload(), mode(t));
    EXPECT_TRUE(r.stats.mapping.swap_ab);
    EXPECT_EQ(mismatches(r.d, p.golden()), 0u) << fm::timing_name(t);
  }
  // A quantize unit's blocks run along N: no swap.
  EXPECT_THROW(fm::run(tc_params({{"swap_ab", "on"}, {"out_format", "nvfp4"}}), timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 16, 64, 64)), std::invalid_argument);
}

TEST(Kernel, CtaPairRunsPaddedRowsOnBothSms) {
  // M = 1, N = 256, K = 4096 NVFP4 on 2 SMs, tile_n 256. One SM (cta_group 1): one 128-row tile,
  // 64 instructions of ceil(128 x 256 / 256) = 128 cycles = 8192 compute cycles; the other SM has no
  // tile. A cta_group::2 pair: one 256-row instruction per K step on both SMs, each SM 128 rows (its
  // partner's rows 128..255 lie past M: padded work), so 2 x 8192 compute cycles in the same time
  // and no SM without a tile.
  const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 1, 256, 4096);
  for (fm::Timing t : {fm::Timing::Analytic, fm::Timing::Cycle}) {
    const fm::Stats one = fm::run(tc_params({{"cores", "2"}, {"tile_n", "256"}}), w, mode(t)).stats;
    const fm::Stats pair =
        fm::run(tc_params({{"cores", "2"}, {"tile_n", "256"}, {"cta_group", "2"}, {"cluster_sms", "2"}}), w, mode(t)).stats;
    check_stats(one, 1, 256, 4096);
    check_stats(pair, 1, 256, 4096);
    EXPECT_EQ(one.compute_cycles, 8192u) << fm::timing_name(t);
    EXPECT_EQ(pair.compute_cycles, 2u * 8192u) << fm::timing_name(t);
    EXPECT_EQ(pair.mapping.tile_m, 256);
    EXPECT_EQ(pair.cores, 2);
    EXPECT_GE(one.stall("no_tile"), one.cycles);
    EXPECT_EQ(pair.stall("no_tile"), 0u);
    EXPECT_GE(pair.cycles, 8192u);
    EXPECT_LT(pair.cycles, 2u * 8192u);
  }
}

TEST(Kernel, CtaPairLoadsHalfOfB) {
  // M = N = 256, K = 4096 NVFP4 on 2 SMs, each SM's load link 16 B/cycle (the bound). One SM per
  // 128-row tile: each SM loads its 128 rows of A and all 256 of B, 128 x 2048 + 128 x 256 scale
  // bytes = 294 912 B of A and 589 824 B of B; the pair loads A and B once, 589 824 B each, half of
  // each per SM. Per SM 884 736 B against 589 824 B: the pair is 1.5 x faster in the main loop.
  const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 256, 256, 4096);
  for (fm::Timing t : {fm::Timing::Analytic, fm::Timing::Cycle}) {
    const auto run = [&](const char* group) {
      return fm::run(tc_params({{"cores", "2"}, {"tile_n", "256"}, {"cta_group", group}, {"cluster_sms", "2"},
                                {"core_load_bytes_per_cycle", "16"}, {"l2_bytes_per_cycle", "65536"}}),
                     w, mode(t)).stats;
    };
    const fm::Stats one = run("1"), pair = run("2");
    EXPECT_EQ(one.bytes_of("l2_read"), 2u * (294912u + 589824u)) << fm::timing_name(t);
    EXPECT_EQ(pair.bytes_of("l2_read"), 2u * 589824u) << fm::timing_name(t);
    // Load-bound: at least the per-SM bytes over the link, and the ratio of those bytes.
    EXPECT_GE(one.cycles, 884736u / 16u);
    EXPECT_GE(pair.cycles, 589824u / 16u);
    const double ratio = static_cast<double>(one.cycles) / static_cast<double>(pair.cycles);
    EXPECT_GT(ratio, 1.4) << fm::timing_name(t);
    EXPECT_LT(ratio, 1.55) << fm::timing_name(t);
    EXPECT_EQ(one.compute_cycles, pair.compute_cycles);  // the same MMA work per SM
  }
}

TEST(Kernel, CtaPairBitExactAndRejects) {
  // M = 300: one full and one partial 256-row pair tile; D bit-identical to golden in both modes.
  const Problem p = make_problem(MmaKindId::Mxf4Nvf4, Model::Blackwell, 300, 72, 256, true, 41);
  for (fm::Timing t : {fm::Timing::Analytic, fm::Timing::Cycle}) {
    const fm::Result r = fm::run(tc_params({{"cores", "5"}, {"tile_n", "32"}, {"cta_group", "2"}}), p.workload(), mode(t));
    EXPECT_EQ(mismatches(r.d, p.golden()), 0u) << fm::timing_name(t);
    check_stats(r.stats, p.M, p.N, p.K);
    EXPECT_EQ(r.stats.cores, 5);  // two pairs, the fifth SM without a partner idles
    EXPECT_GE(r.stats.stall("no_tile"), r.stats.cycles);
  }
  const fm::Workload w = timing_only(MmaKindId::Mxf4Nvf4, Model::Blackwell, 128, 128, 256);
  EXPECT_THROW(fm::run(tc_params({{"cta_group", "2"}, {"cluster_sms", "3"}}), w), std::invalid_argument);
  EXPECT_THROW(fm::run(tc_params({{"cta_group", "2"}, {"tile_m", "128"}}), w), std::invalid_argument);
  EXPECT_THROW(fm::run(tc_params({{"cta_group", "2"}, {"cores", "1"}}), w), std::invalid_argument);
  fm::Params q = tc_params();
  EXPECT_THROW(fm::set_param(q, "cta_group", "3"), std::invalid_argument);
}
