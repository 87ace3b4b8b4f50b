// fp4sim mma / gemm / linear run as a user would (FP4SIM_CLI): results against the in-process
// golden functions bit for bit, hand-derived values, and every bad input -> exit != 0, one stderr
// line, no output file.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "fp4sim/io/npy.hpp"
#include "fp4sim/linear.hpp"
#include "cli_harness.hpp"
#include "fp4sim/mma.hpp"
#include "fp4sim/synth.hpp"

#include <nlohmann/json.hpp>

#ifndef FP4SIM_CLI
#error "FP4SIM_CLI (path of the fp4sim binary) must be defined by the build"
#endif

namespace fs = std::filesystem;
using namespace fp4sim;

namespace {

using test::Dir;
using test::Result;
using test::slurp;


template <class T>
void save(const fs::path& p, std::vector<size_t> shape, const std::vector<T>& v) {
  io::write_npy<T>(p, shape, v);
}

std::vector<uint32_t> load_bits(const fs::path& p) {
  const io::NpyArray a = io::read_npy(p);
  const std::vector<float> v = a.values<float>();
  std::vector<uint32_t> b(v.size());
  for (size_t i = 0; i < v.size(); ++i) b[i] = std::bit_cast<uint32_t>(v[i]);
  return b;
}

std::vector<uint32_t> bits_of(const std::vector<float>& v) {
  std::vector<uint32_t> b(v.size());
  for (size_t i = 0; i < v.size(); ++i) b[i] = std::bit_cast<uint32_t>(v[i]);
  return b;
}

struct Operands {
  MmaConfig cfg;
  size_t M, N, K;
  std::vector<uint8_t> a, b;
  std::vector<uint32_t> sa, sb;
  std::vector<float> c;
};

// Random codes over the whole code space of each format (NaN/Inf codes included), scale codes
// near 1.0 with the odd special, C with the odd special: every path of the models gets traffic.
Operands random_operands(const MmaConfig& cfg, size_t M, size_t N, size_t instructions, uint64_t seed) {
  std::mt19937_64 g(seed);
  Operands o{cfg, M, N, static_cast<size_t>(cfg.kind->k) * instructions, {}, {}, {}, {}, {}};
  const size_t nblk = o.K / static_cast<size_t>(cfg.block);
  auto codes = [&](const ElemFormat& f, size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& x : v) x = static_cast<uint8_t>(g() % (1u << f.bits));
    return v;
  };
  auto scales = [&](size_t n) {
    std::vector<uint32_t> v(n);
    for (auto& x : v) {
      const uint64_t r = g();
      if (cfg.kind->scale_word32) x = (0xC0u - 8 + r % 17) | (static_cast<uint32_t>(r >> 32) & 0xFFFFFF00u);
      else if (cfg.scale->name == "ue8m0") x = r % 97 == 0 ? 0xFFu : 120 + r % 15;
      else x = static_cast<uint32_t>(r % 256);  // every UE4M3 code incl. 0x7F / 0xFF NaN and sign bits
    }
    return v;
  };
  o.a = codes(*cfg.elem_a, M * o.K);
  o.b = codes(*cfg.elem_b, N * o.K);
  o.sa = scales(M * nblk);
  o.sb = scales(N * nblk);
  o.c.resize(M * N);
  for (auto& x : o.c) {
    const uint64_t r = g();
    x = r % 31 == 0 ? INFINITY : std::ldexp(static_cast<float>(static_cast<int>(r % 2001) - 1000), -6);
  }
  return o;
}

void write_operands(const Dir& d, const Operands& o) {
  const size_t nblk = o.K / static_cast<size_t>(o.cfg.block);
  save<uint8_t>(d / "a.npy", {o.M, o.K}, o.a);
  save<uint8_t>(d / "b.npy", {o.N, o.K}, o.b);
  if (o.cfg.kind->scale_word32) {
    save<uint32_t>(d / "sa.npy", {o.M, nblk}, o.sa);
    save<uint32_t>(d / "sb.npy", {o.N, nblk}, o.sb);
  } else {
    std::vector<uint8_t> sa(o.sa.begin(), o.sa.end()), sb(o.sb.begin(), o.sb.end());
    save<uint8_t>(d / "sa.npy", {o.M, nblk}, sa);
    save<uint8_t>(d / "sb.npy", {o.N, nblk}, sb);
  }
  save<float>(d / "c.npy", {o.M, o.N}, o.c);
}

std::string kind_args(const MmaConfig& cfg) {
  std::string s = "--kind " + std::string(cfg.kind->name) + " --block " + std::to_string(cfg.block);
  if (cfg.kind->scales[1]) s += " --scale-type " + std::string(cfg.scale->name);
  if (cfg.kind->id == MmaKindId::Mxf8f6f4)
    s += " --elem-a " + std::string(cfg.elem_a->name) + " --elem-b " + std::string(cfg.elem_b->name);
  return s;
}

const char* kOperandArgs = " --a a.npy --b b.npy --sfa sa.npy --sfb sb.npy";

}  // namespace

// ---------------------------------------------------------------------------------------------
// fp4sim mma

TEST(CliMma, EveryKindAndModelEqualsInProcessGemm) {
  const std::vector<MmaConfig> cfgs = {
      make_mma_config(MmaKindId::Mxf4),
      make_mma_config(MmaKindId::Mxf4Nvf4, nullptr, nullptr, &kUE4M3, 16),
      make_mma_config(MmaKindId::Mxf4Nvf4, nullptr, nullptr, &kUE4M3, 32),
      make_mma_config(MmaKindId::Mxf4Nvf4, nullptr, nullptr, &kUE8M0, 16),
      make_mma_config(MmaKindId::Mxf8f6f4, &kE4M3, &kE4M3),
      make_mma_config(MmaKindId::Mxf8f6f4, &kE5M2, &kE2M1),
      make_mma_config(MmaKindId::Mxf8f6f4, &kE3M2, &kE2M3),
      make_mma_config(MmaKindId::Hif4),
  };
  Dir d("mma_cli");
  uint64_t seed = 1;
  size_t checked = 0;
  for (const MmaConfig& cfg : cfgs) {
    const Operands o = random_operands(cfg, 5, 3, 2, seed++);
    write_operands(d, o);
    for (Model m : {cfg.kind->hardware_model, Model::Exact, Model::Fp32Seq}) {
      SCOPED_TRACE(kind_args(cfg) + " " + std::string(model_name(m)));
      const Result r = d.run("mma " + kind_args(cfg) + kOperandArgs + " --c c.npy --model " +
                             std::string(model_name(m)) + " --out d.npy --force");  // one d.npy, replaced per model
      ASSERT_EQ(r.code, 0) << r.err;
      EXPECT_TRUE(r.err.empty());
      const std::vector<float> want =
          gemm(cfg, m, o.M, o.N, o.K, o.a, std::span<const uint32_t>(o.sa), o.b, std::span<const uint32_t>(o.sb), o.c);
      EXPECT_EQ(load_bits(d / "d.npy"), bits_of(want));
      const io::NpyArray out = io::read_npy(d / "d.npy");
      EXPECT_EQ(out.shape, (std::vector<size_t>{o.M, o.N}));
      ++checked;
    }
    // No --c: C = +0, and the default model is the kind's hardware model; threads do not matter.
    const Result r = d.run("mma " + kind_args(cfg) + kOperandArgs + " --out d0.npy --threads 1 --force");
    ASSERT_EQ(r.code, 0) << r.err;
    const std::vector<float> want = gemm(cfg, cfg.kind->hardware_model, o.M, o.N, o.K, o.a,
                                         std::span<const uint32_t>(o.sa), o.b, std::span<const uint32_t>(o.sb), {});
    EXPECT_EQ(load_bits(d / "d0.npy"), bits_of(want));
  }
  EXPECT_EQ(checked, cfgs.size() * 3);
}

// D = C + sum over k of a*b*sa*sb, worked by hand: mxf4nvf4, UE4M3 per 16, one instruction.
// A = 1.0 (E2M1 0x2) everywhere, B = 0.5 (0x1) everywhere, SA = 1.0 (0x38) for blocks 0-2 and 2.0
// (0x40) for block 3, SB = 1.5 (0x3C) everywhere, C = 0.25:
//   blocks 0-2: 3 * 16 * (1 * 0.5 * 1 * 1.5) = 36;  block 3: 16 * (1 * 0.5 * 2 * 1.5) = 24
//   D = 0.25 + 36 + 24 = 60.25 (exact in FP32, so every model agrees).
TEST(CliMma, HandDerivedValue) {
  Dir d("mma_cli");
  save<uint8_t>(d / "a.npy", {1, 64}, std::vector<uint8_t>(64, 0x2));
  save<uint8_t>(d / "b.npy", {1, 64}, std::vector<uint8_t>(64, 0x1));
  save<uint8_t>(d / "sa.npy", {1, 4}, {0x38, 0x38, 0x38, 0x40});
  save<uint8_t>(d / "sb.npy", {1, 4}, {0x3C, 0x3C, 0x3C, 0x3C});
  save<float>(d / "c.npy", {1, 1}, {0.25f});
  for (const char* m : {"blackwell", "exact", "fp32-seq"}) {
    const Result r = d.run(std::string("mma --kind mxf4nvf4 --scale-type ue4m3 --block 16") + kOperandArgs +
                           " --c c.npy --model " + m + " --out d.npy --force");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(io::read_npy(d / "d.npy").values<float>(), std::vector<float>{60.25f}) << m;
  }
  // The SPEC's kind defaults: mxf4nvf4 = UE4M3 per 16; the summary line says what ran.
  const Result r = d.run(std::string("mma --kind mxf4nvf4") + kOperandArgs + " --c c.npy --out d.npy --force");
  ASSERT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("ue4m3 per 16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model blackwell"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 instruction)"), std::string::npos) << r.out;
}

// --numerics: the WindowCase of tests/golden/test_mma_numerics.cpp (E4M3 products 2^16, -61440 and
// 1.5 * 2^-9, scales 1): blackwell's 25-bit window truncates the last to 2^-9, term_round=rne
// rounds it to 2^-8 (a tie, to even), frac_bits=26 keeps it: 4096 + 2^-9, + 2^-8, + 3 * 2^-10.
TEST(CliMma, NumericsSetByTheDesigner) {
  Dir d("mma_cli");
  std::vector<uint8_t> a(32, 0), b(32, 0);
  a[0] = 0x78, b[0] = 0x78;
  a[1] = 0xF7, b[1] = 0x78;
  a[2] = 0x0C, b[2] = 0x20;
  save<uint8_t>(d / "a.npy", {1, 32}, a);
  save<uint8_t>(d / "b.npy", {1, 32}, b);
  save<uint8_t>(d / "sa.npy", {1, 1}, {127});
  save<uint8_t>(d / "sb.npy", {1, 1}, {127});
  const std::string base = std::string("mma --kind mxf8f6f4 --elem e4m3") + kOperandArgs + " --out d.npy --force";
  const std::vector<std::pair<std::string, float>> cases = {
      {"", 4096.0f + std::ldexp(1.0f, -9)},
      {" --numerics term_round=rne", 4096.0f + std::ldexp(1.0f, -8)},
      {" --numerics frac_bits=26", 4096.0f + 3 * std::ldexp(1.0f, -10)},
      {" --model exact --numerics products=fp32", 4096.0f + 3 * std::ldexp(1.0f, -10)},
  };
  for (const auto& [opt, want] : cases) {
    const Result r = d.run(base + opt);
    ASSERT_EQ(r.code, 0) << opt << ": " << r.err;
    EXPECT_EQ(io::read_npy(d / "d.npy").values<float>(), std::vector<float>{want}) << opt;
    if (!opt.empty()) {
      EXPECT_NE(r.out.find("with numerics k="), std::string::npos) << r.out;
    }
  }
  // Bad specs: one line, exit 2, nothing written.
  fs::remove(d / "d.npy");
  for (const auto& [opt, needle] : std::vector<std::pair<std::string, std::string>>{
           {" --numerics frac_bits=99", "--numerics: numerics: frac_bits=99 (expected an integer 0..64)"},
           {" --numerics group=64", "--numerics: numerics: group 64 must divide the block 32"},
           {" --numerics k=48", "a.npy: K = 32 is not a multiple of 96 (the block 32 and --numerics k=48)"},
           {" --numerics nonsense", "--numerics: numerics: 'nonsense' is not key=value"}}) {
    SCOPED_TRACE(opt);
    const Result r = d.run(std::string("mma --kind mxf8f6f4 --elem e4m3") + kOperandArgs + " --out d.npy" + opt);
    expect_failure(r, opt.find("k=48") != std::string::npos ? 1 : 2, needle);
    EXPECT_FALSE(fs::exists(d / "d.npy"));
  }
}

// --flags: D[0, 0] is the WindowCase (4096 + 2^-9 against the exact 4096 + 1.5 * 2^-9: inexact,
// 01; with frac_bits=26 D is exact: 00). D[1, 0] = 448 * 2^127 (A row 1: 448, scale 2^127) times 256
// (B's first element, scale 1) = 2^143.8: no Inf operand, D = +Inf: overflow and inexact, 05.
TEST(CliMma, FlagsOfEachOutput) {
  Dir d("mma_cli");
  std::vector<uint8_t> a(64, 0), b(32, 0);
  a[0] = 0x78, a[1] = 0xF7, a[2] = 0x0C;
  a[32] = 0x7E;
  b[0] = 0x78, b[1] = 0x78, b[2] = 0x20;
  save<uint8_t>(d / "a.npy", {2, 32}, a);
  save<uint8_t>(d / "b.npy", {1, 32}, b);
  save<uint8_t>(d / "sa.npy", {2, 1}, {127, 254});
  save<uint8_t>(d / "sb.npy", {1, 1}, {127});
  const std::string base = std::string("mma --kind mxf8f6f4 --elem e4m3") + kOperandArgs + " --out d.npy --flags f.npy --force";
  Result r = d.run(base);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(io::read_npy(d / "f.npy").values<uint8_t>(), (std::vector<uint8_t>{0x01, 0x05}));
  EXPECT_EQ(io::read_npy(d / "d.npy").values<float>()[1], INFINITY);
  r = d.run(base + " --numerics frac_bits=26");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(io::read_npy(d / "f.npy").values<uint8_t>(), (std::vector<uint8_t>{0x00, 0x05}));
  // Both outputs or neither: an existing flags file without --force stops the run before any work.
  fs::remove(d / "d.npy");
  r = d.run(std::string("mma --kind mxf8f6f4 --elem e4m3") + kOperandArgs + " --out d.npy --flags f.npy");
  EXPECT_NE(r.code, 0);
  EXPECT_FALSE(fs::exists(d / "d.npy"));
}

TEST(CliMma, BadInputsFailWithOneLine) {
  Dir d("mma_cli");
  const Operands o = random_operands(make_mma_config(MmaKindId::Mxf4), 2, 3, 2, 9);
  write_operands(d, o);
  save<float>(d / "af.npy", {2, 128}, std::vector<float>(256, 1.0f));
  save<uint8_t>(d / "a1.npy", {256}, std::vector<uint8_t>(256, 0));
  save<uint8_t>(d / "a96.npy", {2, 96}, std::vector<uint8_t>(192, 0));
  save<uint8_t>(d / "sa96.npy", {2, 3}, std::vector<uint8_t>(6, 127));
  save<uint8_t>(d / "b96.npy", {3, 96}, std::vector<uint8_t>(288, 0));
  save<uint8_t>(d / "sb96.npy", {3, 3}, std::vector<uint8_t>(9, 127));
  std::vector<uint8_t> packed(2 * 128, 0x21);  // two E2M1 codes per byte: 0x21 does not fit 4 bits
  save<uint8_t>(d / "apacked.npy", {2, 128}, packed);
  save<uint32_t>(d / "sa32.npy", {2, 4}, std::vector<uint32_t>(8, 127));
  save<uint8_t>(d / "sa_bad.npy", {2, 2}, std::vector<uint8_t>(4, 127));
  save<float>(d / "c_bad.npy", {3, 2}, std::vector<float>(6, 0.0f));
  save<uint8_t>(d / "c_u8.npy", {2, 3}, std::vector<uint8_t>(6, 0));
  {
    std::string bytes = slurp(d / "a.npy");
    std::ofstream(d / "a_trunc.npy", std::ios::binary) << bytes.substr(0, bytes.size() - 5);
  }
  const std::string ok = std::string(kOperandArgs) + " --out d.npy";
  struct Bad {
    std::string args;
    int code;
    std::string needle;
  };
  const std::vector<Bad> bad = {
      {"mma --kind mxf9" + ok, 2, "--kind: unknown kind 'mxf9'"},
      {"mma --kind mxf4 --model fast" + ok, 2, "--model: unknown model 'fast'"},
      {"mma --kind mxf4 --model ascend-hif4" + ok, 2, "ascend-hif4 runs only kind hif4"},
      {"mma --kind hif4 --model blackwell" + ok, 2, "the blackwell model does not run this kind"},
      {"mma --kind mxf4 --block 16" + ok, 2, "block size not allowed"},
      {"mma --kind mxf4 --elem e4m3" + ok, 2, "--elem: 'e4m3' is not allowed for kind mxf4"},
      {"mma --kind mxf8f6f4 --elem e4m3 --elem-a e5m2" + ok, 2, "--elem cannot be combined"},
      {"mma --kind mxf4nvf4 --scale-type e6m2" + ok, 2, "--scale-type: 'e6m2' is not allowed"},
      {"mma --kind mxf4 --block x" + ok, 2, "--block: 'x' is not a non-negative integer"},
      {"mma --kind mxf4" + std::string(kOperandArgs), 2, "--out"},
      {"mma --kind mxf4 --a a.npy --b b.npy --sfa sa.npy --out d.npy", 2, "--sfb"},
      {"mma --kind mxf4 --frobnicate" + ok, 2, "frobnicate"},
      {"mma --kind mxf4 --a af.npy --b b.npy --sfa sa.npy --sfb sb.npy --out d.npy", 1, "af.npy: A must be uint8, got float32"},
      {"mma --kind mxf4 --a a1.npy --b b.npy --sfa sa.npy --sfb sb.npy --out d.npy", 1, "a1.npy: A must be a 2-D array"},
      {"mma --kind mxf4 --a a96.npy --b b.npy --sfa sa.npy --sfb sb.npy --out d.npy", 1, "b.npy: B has shape (3, 128) but A has K = 96"},
      {"mma --kind mxf4 --a a96.npy --b b96.npy --sfa sa96.npy --sfb sb96.npy --out d.npy", 1,
       "K = 96 is not a multiple of 64"},
      {"mma --kind mxf4 --a apacked.npy --b b.npy --sfa sa.npy --sfb sb.npy --out d.npy", 1,
       "apacked.npy: code 0x21 at [0, 0] does not fit 4-bit e2m1"},
      {"mma --kind mxf4 --a a.npy --b b.npy --sfa sa32.npy --sfb sb.npy --out d.npy", 1, "sa32.npy: SA must be uint8, got uint32"},
      {"mma --kind hif4 --a a.npy --b b.npy --sfa sa.npy --sfb sb.npy --out d.npy", 1, "sa.npy: SA must be uint32, got uint8"},
      {"mma --kind mxf4 --a a.npy --b b.npy --sfa sa_bad.npy --sfb sb.npy --out d.npy", 1, "sa_bad.npy: SA has shape (2, 2), expected (2, 4)"},
      {"mma --kind mxf4" + std::string(kOperandArgs) + " --c c_bad.npy --out d.npy", 1, "c_bad.npy: C has shape (3, 2), expected (2, 3)"},
      {"mma --kind mxf4" + std::string(kOperandArgs) + " --c c_u8.npy --out d.npy", 1, "c_u8.npy: C must be float32"},
      {"mma --kind mxf4 --a nope.npy --b b.npy --sfa sa.npy --sfb sb.npy --out d.npy", 1, "nope.npy"},
      {"mma --kind mxf4 --a a_trunc.npy --b b.npy --sfa sa.npy --sfb sb.npy --out d.npy", 1, "a_trunc.npy"},
      {"mma --kind mxf4" + std::string(kOperandArgs) + " --out no/such/dir/d.npy", 1, "parent directory does not exist"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.args);
    const Result r = d.run(b.args);
    expect_failure(r, b.code, b.needle);
    EXPECT_FALSE(fs::exists(d / "d.npy"));
  }
  // K = 96 is fine for the exact model (a multiple of the block, 32).
  const Result r = d.run("mma --kind mxf4 --model exact --a a96.npy --b b96.npy --sfa sa96.npy --sfb sb96.npy --out d.npy");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(io::read_npy(d / "d.npy").values<float>(), std::vector<float>(6, 0.0f));
}

// ---------------------------------------------------------------------------------------------
// fp4sim gemm

TEST(CliGemm, EqualsInProcessQuantizedGemm) {
  Dir d("mma_cli");
  const size_t M = 24, N = 16, K = 256;
  const std::vector<float> a = llm_activations(M, K, 11), b = llm_weights(N, K, 12);
  std::vector<float> c(M * N);
  for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<float>(static_cast<int>(i % 9) - 4) * 0.125f;
  save<float>(d / "a.npy", {M, K}, a);
  save<float>(d / "b.npy", {N, K}, b);
  save<float>(d / "c.npy", {M, N}, c);
  struct Run {
    BlockFormat f;
    std::string opts;
    QuantOptions qa;
    std::optional<Model> model;
    bool with_c;
  };
  QuantOptions sr;
  sr.rounding = Rounding::Sr;
  sr.seed = 5;
  sr.rht_seed = 5;
  sr.stream = 7;
  QuantOptions nv2d;
  nv2d.two_d = true;
  nv2d.rht = 16;
  QuantOptions ceil;
  ceil.scale_rule = ScaleRule::Ceil;
  QuantOptions hr;
  hr.rht = 64;
  hr.seed = hr.rht_seed = 3;
  const std::vector<Run> runs = {
      {BlockFormat::Nvfp4, "", {}, std::nullopt, true},
      {BlockFormat::Nvfp4, "--rounding sr --seed 5 --stream 7", sr, std::nullopt, false},
      {BlockFormat::Nvfp4, "--2d --rht 16 --model exact", nv2d, Model::Exact, true},
      {BlockFormat::Mxfp4, "--scale-rule rceil --model fp32-seq", ceil, Model::Fp32Seq, true},
      {BlockFormat::Hif4, "--rht 64 --seed 3", hr, std::nullopt, true},
      {BlockFormat::Mxfp8E5M2, "", {}, std::nullopt, false},
  };
  for (const Run& run : runs) {
    const std::string fname(info(run.f).name);
    SCOPED_TRACE(fname + " " + run.opts);
    const Result r = d.run("gemm --format " + fname + " --a a.npy --b b.npy " + (run.with_c ? "--c c.npy " : "") +
                           run.opts + " --out d.npy --json g.json --force");
    ASSERT_EQ(r.code, 0) << r.err;
    QuantOptions qb = run.qa;
    qb.stream = run.qa.stream + 1;  // B's SR bits come from the next stream
    const QuantizedGemm q = quantized_gemm(run.f, a, run.qa, b, qb, run.with_c ? std::span<const float>(c)
                                                                                : std::span<const float>(),
                                           M, N, K, run.model);
    EXPECT_EQ(load_bits(d / "d.npy"), bits_of(q.d));
    const std::vector<double> ref = reference_gemm_f64(a, b, run.with_c ? std::span<const float>(c)
                                                                         : std::span<const float>(), M, N, K);
    const GemmError e = gemm_error(q.d, ref);
    char want[64];
    std::snprintf(want, sizeof want, "rel_err %.6e", e.rel_err);
    EXPECT_NE(r.out.find(want), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("model " + std::string(model_name(q.model))), std::string::npos) << r.out;
    const nlohmann::json j = nlohmann::json::parse(slurp(d / "g.json"));
    EXPECT_EQ(j["format"], fname);
    EXPECT_EQ(j["kind"], std::string(q.cfg.kind->name));
    EXPECT_EQ(j["alpha"].get<float>(), q.alpha);
    EXPECT_DOUBLE_EQ(j["error"]["rel_err"].get<double>(), e.rel_err);
    EXPECT_DOUBLE_EQ(j["error"]["qsnr_db"].get<double>(), e.qsnr_db);
    if (run.f == BlockFormat::Nvfp4) {
      EXPECT_NE(q.alpha, 1.0f);
    }
  }
}

TEST(CliGemm, BadInputsFailWithOneLine) {
  Dir d("mma_cli");
  save<float>(d / "a.npy", {4, 128}, std::vector<float>(512, 1.0f));
  save<float>(d / "b.npy", {2, 128}, std::vector<float>(256, 1.0f));
  save<float>(d / "b64.npy", {2, 64}, std::vector<float>(128, 1.0f));
  save<float>(d / "a96.npy", {4, 96}, std::vector<float>(384, 1.0f));
  save<float>(d / "b96.npy", {2, 96}, std::vector<float>(192, 1.0f));
  save<uint8_t>(d / "a8.npy", {4, 128}, std::vector<uint8_t>(512, 1));
  save<float>(d / "c_bad.npy", {2, 4}, std::vector<float>(8, 0.0f));
  const std::vector<std::tuple<std::string, int, std::string>> bad = {
      {"gemm --format fp3 --a a.npy --b b.npy --out d.npy", 2, "--format: unknown format 'fp3'"},
      {"gemm --format hif4 --pts off --a a.npy --b b.npy --out d.npy", 2, "--pts applies to nvfp4 only"},
      {"gemm --format mxfp4 --2d --a a.npy --b b.npy --out d.npy", 2, "--2d (16x16 tile scaling) applies to nvfp4 only"},
      {"gemm --format nvfp4 --scale-rule ceil --a a.npy --b b.npy --out d.npy", 2, "--scale-rule applies to MX formats only"},
      {"gemm --format nvfp4 --rht 12 --a a.npy --b b.npy --out d.npy", 2, "--rht: size must be a power of two"},
      {"gemm --format hif4 --model blackwell --a a.npy --b b.npy --out d.npy", 2, "cannot run format hif4"},
      {"gemm --format nvfp4 --rounding up --a a.npy --b b.npy --out d.npy", 2, "--rounding: unknown mode 'up'"},
      {"gemm --format nvfp4 --a a.npy --b b64.npy --out d.npy", 1, "b64.npy: B has shape (2, 64) but A has K = 128"},
      {"gemm --format nvfp4 --a a96.npy --b b96.npy --out d.npy", 1, "K = 96 is not a positive multiple of 64"},
      {"gemm --format nvfp4 --a a8.npy --b b.npy --out d.npy", 1, "a8.npy: input dtype is uint8"},
      {"gemm --format nvfp4 --a a.npy --b b.npy --c c_bad.npy --out d.npy", 1, "c_bad.npy: C has shape (2, 4), expected (4, 2)"},
      {"gemm --format nvfp4 --a a.npy --b b.npy --out d.npy --json no/dir/g.json", 1, "parent directory does not exist"},
  };
  for (const auto& [args, code, needle] : bad) {
    SCOPED_TRACE(args);
    expect_failure(d.run(args), code, needle);
    EXPECT_FALSE(fs::exists(d / "d.npy"));
  }
  // K = 96 runs under the exact model (a multiple of the NVFP4 block).
  EXPECT_EQ(d.run("gemm --format nvfp4 --model exact --a a96.npy --b b96.npy --out d.npy").code, 0);
}

// ---------------------------------------------------------------------------------------------
// fp4sim linear

TEST(CliLinear, TableAndJsonMatchInProcess) {
  Dir d("mma_cli");
  const LinearInputs in = synth_linear_inputs(128, 64, 128, 3);
  const LinearReference ref = linear_reference(in);
  const struct {
    std::string args;
    std::string recipe;
    void (*tweak)(LinearRecipe&);
  } runs[] = {
      {"", "nvfp4-paper", [](LinearRecipe&) {}},
      {"--recipe hif4-paper --sr on --rht 16", "hif4-paper",
       [](LinearRecipe& r) {
         r.sr_gradients = true;
         r.rht_wgrad = 16;
       }},
      {"--recipe nvfp4-paper --pts off --2d off --rht off --model exact", "nvfp4-paper",
       [](LinearRecipe& r) {
         r.pts = false;
         r.two_d_weights = false;
         r.rht_wgrad = 0;
         r.model = Model::Exact;
       }},
      {"--recipe mxfp4-paper --scale-rule floor --sr off", "mxfp4-paper",
       [](LinearRecipe& r) {
         r.scale_rule = ScaleRule::Floor;
         r.sr_gradients = false;
       }},
      {"--recipe bf16 --model fp32-seq", "bf16", [](LinearRecipe& r) { r.model = Model::Fp32Seq; }},
  };
  for (const auto& run : runs) {
    SCOPED_TRACE(run.args);
    const Result r = d.run("linear --m 128 --n 64 --k 128 --seed 3 " + run.args + " --json l.json --force");
    ASSERT_EQ(r.code, 0) << r.err;
    LinearRecipe rec;
    ASSERT_TRUE(linear_recipe(run.recipe, rec));
    rec.seed = 3;
    run.tweak(rec);
    const LinearResult res = run_linear(rec, in, ref);
    const nlohmann::json j = nlohmann::json::parse(slurp(d / "l.json"));
    ASSERT_EQ(j["results"].size(), 1u);
    for (int g = 0; g < 3; ++g) {
      const std::string name(linear_gemm_name(static_cast<LinearGemmId>(g)));
      char cell[32];
      std::snprintf(cell, sizeof cell, "%.4e", res.gemm[g].err.rel_err);
      const size_t row = r.out.find("\n" + name + " ");
      ASSERT_NE(row, std::string::npos) << r.out;
      const std::string line = r.out.substr(row + 1, r.out.find('\n', row + 1) - row - 1);
      EXPECT_NE(line.find(cell), std::string::npos) << line << " lacks " << cell;
      EXPECT_DOUBLE_EQ(j["results"][0]["gemms"][name]["rel_err"].get<double>(), res.gemm[g].err.rel_err);
      EXPECT_EQ(j["results"][0]["gemms"][name]["alpha"].get<float>(), res.gemm[g].alpha);
    }
    EXPECT_EQ(j["results"][0]["model"], std::string(model_name(res.model)));
  }
}

TEST(CliLinear, AblationRowsAndFileInputs) {
  Dir d("mma_cli");
  const Result r = d.run("linear --ablation --m 64 --n 64 --k 64 --json a.json");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<LinearRecipe> rows = ablation_recipes(0);
  const nlohmann::json j = nlohmann::json::parse(slurp(d / "a.json"));
  ASSERT_EQ(j["results"].size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(j["results"][i]["name"], rows[i].name);
    EXPECT_NE(r.out.find("\n" + rows[i].name + " "), std::string::npos) << rows[i].name;
  }
  // The bf16 row beats every 4-bit row on every GEMM.
  for (size_t i = 1; i < rows.size(); ++i)
    for (const char* g : {"fprop", "dgrad", "wgrad"})
      EXPECT_LT(j["results"][0]["gemms"][g]["rel_err"].get<double>(), j["results"][i]["gemms"][g]["rel_err"].get<double>());

  // Tensors from files give the same numbers as the same tensors in process.
  const LinearInputs in = synth_linear_inputs(64, 64, 128, 8);
  save<float>(d / "x.npy", {64, 128}, in.x);
  save<float>(d / "w.npy", {64, 128}, in.w);
  save<float>(d / "dy.npy", {64, 64}, in.dy);
  const Result f = d.run("linear --recipe hif4-paper --x x.npy --w w.npy --dy dy.npy --json f.json");
  ASSERT_EQ(f.code, 0) << f.err;
  LinearRecipe rec;
  linear_recipe("hif4-paper", rec);
  const LinearResult res = run_linear(rec, in, linear_reference(in));
  const nlohmann::json jf = nlohmann::json::parse(slurp(d / "f.json"));
  EXPECT_DOUBLE_EQ(jf["results"][0]["gemms"]["wgrad"]["rel_err"].get<double>(), res.gemm[kWgrad].err.rel_err);
}

TEST(CliLinear, BadInputsFailWithOneLine) {
  Dir d("mma_cli");
  save<float>(d / "x.npy", {64, 128}, std::vector<float>(64 * 128, 1.0f));
  save<float>(d / "w.npy", {64, 64}, std::vector<float>(64 * 64, 1.0f));
  save<float>(d / "dy.npy", {64, 64}, std::vector<float>(64 * 64, 1.0f));
  const std::vector<std::tuple<std::string, int, std::string>> bad = {
      {"linear --recipe fp8", 2, "--recipe: unknown recipe 'fp8'"},
      {"linear --recipe hif4-paper --pts off", 2, "--pts applies to nvfp4 recipes only"},
      {"linear --recipe mxfp4-paper --2d on", 2, "--2d applies to nvfp4 recipes only"},
      {"linear --recipe hif4-paper --scale-rule ceil", 2, "--scale-rule applies to mxfp4 recipes only"},
      {"linear --recipe bf16 --sr on", 2, "--sr does not apply to bf16"},
      {"linear --recipe bf16 --model blackwell", 2, "bf16 runs the exact or fp32-seq model only"},
      {"linear --recipe hif4-paper --model blackwell", 2, "the blackwell model does not run this kind"},
      {"linear --rht 24", 2, "--rht: size must be a power of two"},
      {"linear --sr maybe", 2, "--sr: expected 'on' or 'off'"},
      {"linear --ablation --recipe bf16", 2, "--ablation fixes the recipes"},
      {"linear --x x.npy", 2, "--x, --w and --dy go together"},
      {"linear --x x.npy --w w.npy --dy dy.npy --m 64", 2, "cannot be combined with --m"},
      {"linear --m 0", 2, "--m: 0 is out of range"},
      {"linear --m 100", 1, "wgrad reduces over m = 100"},
      {"linear --x x.npy --w w.npy --dy dy.npy", 1, "w.npy: W has shape (64, 64), expected (n, 128)"},
      {"linear --json no/dir/l.json", 1, "parent directory does not exist"},
  };
  for (const auto& [args, code, needle] : bad) {
    SCOPED_TRACE(args);
    expect_failure(d.run(args), code, needle);
  }
}

// ---------------------------------------------------------------------------------------------
// fp4sim run / fp4sim whatif (the SystemC models)

namespace {

// An RFC 4180 CSV (quoted cells with doubled quotes, as whatif writes an error text) as a header and
// rows of cells addressed by column name.
struct Csv {
  std::vector<std::string> head;
  std::vector<std::vector<std::string>> rows;
  size_t col(const std::string& name) const {
    const auto it = std::find(head.begin(), head.end(), name);
    if (it == head.end()) {
      ADD_FAILURE() << "no column " << name;
      return 0;
    }
    return static_cast<size_t>(it - head.begin());
  }
  bool has(const std::string& name) const { return std::find(head.begin(), head.end(), name) != head.end(); }
  const std::string& at(size_t row, const std::string& name) const { return rows[row][col(name)]; }
};

Csv parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> lines(1);
  std::string cell;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') cell += '"', ++i;
      else if (c == '"') quoted = false;
      else cell += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      lines.back().push_back(std::move(cell));
      cell.clear();
    } else if (c == '\n') {
      lines.back().push_back(std::move(cell));
      cell.clear();
      lines.emplace_back();
    } else {
      cell += c;
    }
  }
  if (lines.back().empty()) lines.pop_back();
  Csv csv;
  if (lines.empty()) return csv;
  csv.head = lines[0];
  csv.rows.assign(lines.begin() + 1, lines.end());
  for (const auto& r : csv.rows) EXPECT_EQ(r.size(), csv.head.size());
  return csv;
}

}  // namespace

TEST(CliRun, BadInputsFailWithOneLine) {
  FP4SIM_REQUIRE_MODELS();
  Dir d("mma_cli");
  std::ofstream(d / "bad.json") << "{\"cores\": 2, \"nosuch_key\": 1}";
  const std::vector<std::tuple<std::string, int, std::string>> bad = {
      {"run --m 7", 2, "--m: 7 is out of range"},
      {"run --m 12", 2, "--m must be a multiple of 8"},
      {"run --rtl-trace t.fst", 2, "--rtl-trace needs --rtl"},
      {"run --rtl-fault 3", 2, "--rtl-fault needs --rtl"},
      {"run --rtl-sample 5", 2, "--rtl-sample: unknown option"},
      {"run --quick --out o --trace no/dir/t.vcd", 1, "no/dir/t.vcd: parent directory does not exist"},
      {"run --quick --out o --timing fast", 2, "--timing: expected cycle or analytic, got 'fast'"},
      {"run --quick --out o --timing analytic --trace t.vcd", 2, "--trace needs --timing cycle"},
      {"run --quick --out o --param nosuch_key=3", 2, "nosuch_key"},
      {"run --quick --out o --param cores=many", 2, "cores"},
      {"run --quick --out o --param cores", 2, "--param: expected KEY=VALUE, got 'cores'"},
      {"run --quick --out o --config bad.json", 2, "nosuch_key"},
      {"run --quick --out o --config missing.json", 1, "missing.json"},
  };
  for (const auto& [args, code, needle] : bad) {
    SCOPED_TRACE(args);
    expect_failure(d.run(args), code, needle);
  }
  EXPECT_FALSE(std::filesystem::exists(d / "o" / "report.json"));  // nothing written after a refusal
}

TEST(CliRun, NoVectorsWritesOnlyTheReport) {
  FP4SIM_REQUIRE_MODELS();
  Dir d("mma_cli");
  const Result r = d.run("run --m 8 --n 16 --k 64 --out o --no-vectors");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(d / "o" / "report.json"));
  EXPECT_FALSE(std::filesystem::exists(d / "o" / "vectors"));
  const Result v = d.run("run --m 8 --n 16 --k 64 --out p");
  ASSERT_EQ(v.code, 0) << v.err;
  EXPECT_TRUE(std::filesystem::exists(d / "p" / "vectors" / "manifest.json"));
  // One case per block format, each the hardware model's D only.
  const Result rep = d.run("replay p/vectors --target golden");
  ASSERT_EQ(rep.code, 0) << rep.err;
  EXPECT_NE(rep.out.find("3 cases, 3 pass, 0 fail, 0 error, 0 skipped; 3 D arrays compared"), std::string::npos) << rep.out;
}

// Both timing modes run the quick layer bit-exact, and report.json names the mode, every parameter,
// the mapping and the statistics of each run; --param / --config land in "params".
TEST(CliRun, TimingModeParamsAndMappingInTheReport) {
  FP4SIM_REQUIRE_MODELS();
  Dir d("mma_cli");
  std::ofstream(d / "c.json") << "{\"cube\": {\"cores\": 2}, \"dram_bytes_per_cycle\": 48}";
  for (const std::string timing : {"analytic", "cycle"}) {
    SCOPED_TRACE(timing);
    const Result r = d.run("run --quick --no-vectors --timing " + timing + " --config c.json --param cores=3 --out " + timing);
    ASSERT_EQ(r.code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(slurp(d / timing / "report.json"));
    EXPECT_EQ(j["timing"], timing);
    EXPECT_TRUE(j["all_bit_exact"].get<bool>());
    ASSERT_EQ(j["runs"].size(), 5u);
    for (const auto& run : j["runs"]) {
      SCOPED_TRACE(run["engine"].get<std::string>() + " " + run["format"].get<std::string>());
      EXPECT_EQ(run["timing"], timing);
      // --param after --config: cores = 3 on both engines; the config's top-level key on both.
      EXPECT_EQ(run["params"]["cores"], "3");
      EXPECT_EQ(run["params"]["dram_bytes_per_cycle"], "48");
      EXPECT_EQ(run["engine"] == "cube", run["params"].contains("l0a_bytes"));
      EXPECT_EQ(run["engine"] == "tensor-core", run["params"].contains("smem_bytes"));
      for (const char* m : {"tile_m", "tile_n", "tile_k", "raster"}) EXPECT_TRUE(run["mapping"].contains(m)) << m;
      EXPECT_GT(run["mapping"]["tile_n"].get<int64_t>(), 0);
      const auto& s = run["stats"];
      EXPECT_GT(s["cycles"].get<uint64_t>(), 0u);
      EXPECT_GE(s["cycles"].get<double>() + 1e-9, s["compute_roofline_cycles"].get<double>());
      EXPECT_GE(s["cycles"].get<double>() + 1e-9, s["memory_roofline_cycles"].get<double>());
      EXPECT_TRUE(s["stalls"].is_object());
      EXPECT_TRUE(s["bytes"].is_object());
    }
    EXPECT_NE(slurp(d / timing / "report.md").find("Timing: " + timing), std::string::npos);
  }
}

TEST(CliWhatif, SweepIsACartesianProductInNamedColumns) {
  FP4SIM_REQUIRE_MODELS();
  Dir d("mma_cli");
  const Result r = d.run(
      "whatif --engine cube --format hif4 --m 16 --n 256 --k 512 --sweep l0a_bytes=32768,65536 "
      "--sweep dram_bytes_per_cycle=32,64,128 --param cores=2 --out w.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  const Csv csv = parse_csv(slurp(d / "w.csv"));
  ASSERT_EQ(csv.rows.size(), 6u);
  // Named columns: the parameters, then the identity, the mapping, the statistics, stalls and bytes.
  for (const char* c : {"cores", "l0a_bytes", "dram_bytes_per_cycle", "engine", "format", "m", "n", "k", "timing",
                        "map_tile_m", "map_tile_n", "map_tile_k", "map_l1_k", "map_stages", "map_raster", "map_split_k", "map_cluster_sms", "map_cluster_m",
                        "cycles",
                        "compute_cycles", "instructions", "tiles", "macs_per_cycle", "utilization",
                        "compute_roofline_cycles", "memory_roofline_cycles", "mappings_evaluated", "area_unit",
                        "area_mm2", "fmax_mhz", "time_us", "macs_per_s_per_mm2"})
    EXPECT_TRUE(csv.has(c)) << c;
  EXPECT_LT(csv.col("l0a_bytes"), csv.col("engine"));
  EXPECT_EQ(csv.head.back(), "error");
  EXPECT_TRUE(std::any_of(csv.head.begin(), csv.head.end(), [](const std::string& h) { return h.rfind("stall_", 0) == 0; }));
  EXPECT_TRUE(std::any_of(csv.head.begin(), csv.head.end(), [](const std::string& h) { return h.rfind("bytes_", 0) == 0; }));
  EXPECT_FALSE(csv.has("smem_bytes"));  // a tensor-core key: not a column with --engine cube
  // In the order given, the last key fastest.
  const char* l0a[] = {"32768", "32768", "32768", "65536", "65536", "65536"};
  const char* dram[] = {"32", "64", "128", "32", "64", "128"};
  for (size_t i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(csv.at(i, "l0a_bytes"), l0a[i]);
    EXPECT_EQ(csv.at(i, "dram_bytes_per_cycle"), dram[i]);
    EXPECT_EQ(csv.at(i, "cores"), "2");
    EXPECT_EQ(csv.at(i, "engine"), "cube");
    EXPECT_EQ(csv.at(i, "format"), "hif4");
    EXPECT_EQ(csv.at(i, "m"), "16");
    EXPECT_EQ(csv.at(i, "timing"), "analytic");
    EXPECT_EQ(csv.at(i, "error"), "");
    EXPECT_GT(std::stoull(csv.at(i, "cycles")), 0u);
  }
  // --engine both: a key of one engine sweeps that engine only (the other's cell is empty); a shape
  // sweep applies to both.
  const Result b = d.run("whatif --n 256 --k 512 --param cores=2 --sweep l0a_bytes=32768,65536 --sweep m=1,8 --out b.csv");
  ASSERT_EQ(b.code, 0) << b.err;
  const Csv both = parse_csv(slurp(d / "b.csv"));
  ASSERT_EQ(both.rows.size(), 2u * 2 + 3u * 2 * 2);  // tensor core: 2 formats x m; cube: 3 formats x l0a x m
  size_t tc = 0;
  for (size_t i = 0; i < both.rows.size(); ++i) {
    const bool cube = both.at(i, "engine") == "cube";
    tc += !cube;
    EXPECT_EQ(both.at(i, "l0a_bytes").empty(), !cube);
    EXPECT_EQ(both.at(i, "smem_bytes").empty(), cube);
    EXPECT_EQ(both.at(i, "m"), i % 2 ? "8" : "1");
  }
  EXPECT_EQ(tc, 4u);
  EXPECT_LT(both.col("smem_bytes"), both.col("l0a_bytes"));  // tensor-core keys first, then the cube's extras
}

TEST(CliWhatif, BadParametersFailWithOneLineAndNoCsv) {
  FP4SIM_REQUIRE_MODELS();
  Dir d("mma_cli");
  std::ofstream(d / "unknown.json") << "{\"nosuch_key\": 1}";
  std::ofstream(d / "section.json") << "{\"cube\": {\"smem_bytes\": 65536}}";
  std::ofstream(d / "engine.json") << "{\"gpu\": {\"cores\": 2}}";
  std::ofstream(d / "bool.json") << "{\"cores\": true}";
  std::ofstream(d / "array.json") << "[1, 2]";
  std::ofstream(d / "broken.json") << "{\"cores\": ";
  const std::vector<std::tuple<std::string, int, std::string>> bad = {
      {"whatif --param nosuch_key=1", 2, "nosuch_key"},
      {"whatif --param l0a_bytes=lots", 2, "l0a_bytes"},
      {"whatif --param l0a_bytes=-5", 2, "l0a_bytes"},
      {"whatif --param raster=diagonal", 2, "raster"},
      {"whatif --engine cube --param smem_bytes=65536", 2, "smem_bytes"},
      {"whatif --param =3", 2, "--param: expected KEY=VALUE"},
      {"whatif --sweep nosuch_key=1,2", 2, "nosuch_key"},
      {"whatif --sweep l0a_bytes=32768,lots", 2, "l0a_bytes"},
      {"whatif --sweep l0a_bytes", 2, "--sweep: expected KEY=V1,V2,..."},
      {"whatif --sweep cores=1,2 --sweep cores=4", 2, "'cores' is swept twice"},
      {"whatif --sweep m=1,2 --m 4", 2, "--m and --sweep m cannot be combined"},
      {"whatif --sweep n=8", 2, "N must be a multiple of 16"},
      {"whatif --m 0", 2, "--m: 0 is out of range"},
      {"whatif --k 96", 2, "K must be a multiple of 64"},
      {"whatif --format fp3", 2, "--format: unknown format 'fp3'"},
      {"whatif --engine cube --format mxfp8-e4m3", 2, "cube does not run mxfp8-e4m3"},
      {"whatif --timing exact", 2, "--timing: expected analytic or cycle, got 'exact'"},
      {"whatif --config unknown.json", 2, "nosuch_key"},
      {"whatif --config section.json", 2, "smem_bytes"},
      {"whatif --config engine.json", 2, "section 'gpu' is not an engine"},
      {"whatif --config bool.json", 2, "'cores' must be a number or a string"},
      {"whatif --config array.json", 2, "expected a JSON object"},
      {"whatif --config broken.json", 1, "broken.json: not valid JSON"},
      {"whatif --config missing.json", 1, "missing.json"},
  };
  for (const auto& [args, code, needle] : bad) {
    SCOPED_TRACE(args);
    expect_failure(d.run(args + " --out w.csv"), code, needle);
    EXPECT_FALSE(fs::exists(d / "w.csv"));
  }
}

TEST(CliWhatif, ConfigFileThenParamLandInTheCsv) {
  FP4SIM_REQUIRE_MODELS();
  Dir d("mma_cli");
  std::ofstream(d / "c.json") << "{\"cores\": 2, \"dram_bytes_per_cycle\": 48, \"raster\": \"m\","
                                 " \"cube\": {\"l0a_bytes\": 65536}, \"tensor-core\": {\"smem_bytes\": 131072}}";
  const Result r = d.run("whatif --m 64 --n 256 --k 512 --config c.json --param dram_bytes_per_cycle=40 --out w.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  const Csv csv = parse_csv(slurp(d / "w.csv"));
  ASSERT_EQ(csv.rows.size(), 5u);  // one row per engine x format
  for (size_t i = 0; i < csv.rows.size(); ++i) {
    const bool cube = csv.at(i, "engine") == "cube";
    EXPECT_EQ(csv.at(i, "cores"), "2");
    EXPECT_EQ(csv.at(i, "dram_bytes_per_cycle"), "40");  // --param after --config
    EXPECT_EQ(csv.at(i, "raster"), "m");
    EXPECT_EQ(csv.at(i, "map_raster"), "m");  // a pinned raster is the raster used
    EXPECT_EQ(csv.at(i, cube ? "l0a_bytes" : "smem_bytes"), cube ? "65536" : "131072");
  }
}

// A configuration the model cannot run (a pinned mapping that does not fit) gets its error text in
// the last column and empty statistics; the others are still run and written; exit 1 with a summary.
TEST(CliWhatif, AFailedConfigurationKeepsTheOthers) {
  FP4SIM_REQUIRE_MODELS();
  Dir d("mma_cli");
  const Result r = d.run(
      "whatif --engine tensor-core --format nvfp4 --m 128 --n 256 --k 512 --param cores=2 --param stages=4 "
      "--param tile_k=256 --sweep smem_bytes=16384,131072,229376 --out w.csv");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("fp4sim: error: whatif: 1 of 3 configurations failed: "), std::string::npos) << r.err;
  EXPECT_EQ(r.err_lines(), 1u) << r.err;
  const Csv csv = parse_csv(slurp(d / "w.csv"));
  ASSERT_EQ(csv.rows.size(), 3u);
  EXPECT_FALSE(csv.at(0, "error").empty());
  EXPECT_NE(r.err.find(csv.at(0, "error")), std::string::npos) << r.err;
  EXPECT_EQ(csv.at(0, "cycles"), "");
  EXPECT_EQ(csv.at(0, "smem_bytes"), "16384");
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(csv.at(i, "error"), "");
    EXPECT_GT(std::stoull(csv.at(i, "cycles")), 0u);
    EXPECT_EQ(csv.at(i, "map_stages"), "4");
    EXPECT_EQ(csv.at(i, "map_tile_k"), "256");
  }
}

// A runtime error inside a cycle simulation (FP4SIM_WHATIF_FAULT: the progress callback, which the
// store unit calls from inside the simulation, throws for configuration 1) fails that configuration
// only: its row carries the message and its parameters, the model unwinds the failed job, and the
// rows before and after it are the same as in a run without the fault; exit 1 with one line. (The
// sweep is over shapes: along a resource sweep a row's candidates include the previous row's choice.)
TEST(CliWhatif, ARuntimeErrorInsideTheSimulationKeepsTheOthers) {
  FP4SIM_REQUIRE_MODELS();
  Dir d("mma_cli");
  const std::string args =
      "whatif --engine tensor-core --format nvfp4 --n 512 --k 512 --param cores=4 --timing cycle --sweep m=128,256,384 "
      "--out ";
  const Result ok = d.run(args + "ok.csv");
  ASSERT_EQ(ok.code, 0) << ok.err;
  const Result r = d.run(args + "w.csv", "FP4SIM_WHATIF_FAULT=1");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("fp4sim: error: whatif: 1 of 3 configurations failed: whatif: fault injected at configuration 1"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err_lines(), 1u) << r.err;
  const Csv want = parse_csv(slurp(d / "ok.csv")), got = parse_csv(slurp(d / "w.csv"));
  ASSERT_EQ(got.rows.size(), 3u);
  EXPECT_EQ(got.head, want.head);
  EXPECT_EQ(got.rows[0], want.rows[0]);
  EXPECT_EQ(got.rows[2], want.rows[2]);
  EXPECT_NE(got.at(1, "error").find("fault injected"), std::string::npos);
  EXPECT_EQ(got.at(1, "m"), "256");
  EXPECT_EQ(got.at(1, "cycles"), "");
  EXPECT_EQ(got.at(1, "engine"), "tensor-core");
}

// Along a sweep that adds one resource (cores, L2 capacity), each row's candidates include the
// previous row's choice on its own cores: more of a resource is never slower, in both timing modes.
TEST(CliWhatif, MoreCoresOrL2IsNeverSlower) {
  FP4SIM_REQUIRE_MODELS();
  Dir d("mma_cli");
  for (const char* timing : {"analytic", "cycle"})
    for (const std::string sweep : {"--sweep cores=20,24,28,32", "--param cores=24 --sweep l2_bytes=0,1048576,134217728"}) {
      const Result r = d.run(std::string("whatif --engine tensor-core --format nvfp4 --m 1024 --n 2048 --k 1024 --timing ") +
                             timing + " " + sweep + " --out w.csv --force");
      ASSERT_EQ(r.code, 0) << r.err;
      const Csv csv = parse_csv(slurp(d / "w.csv"));
      ASSERT_EQ(csv.rows.size(), sweep.find("cores=20") != std::string::npos ? 4u : 3u);
      for (size_t i = 1; i < csv.rows.size(); ++i)
        EXPECT_LE(std::stoull(csv.at(i, "cycles")), std::stoull(csv.at(i - 1, "cycles"))) << timing << " " << sweep << " row " << i;
    }
}

TEST(CliWhatif, AreaAndClockFollowRtlAreaJson) {
  FP4SIM_REQUIRE_MODELS();
  // The area / clock model of docs/whatif.md, re-derived here from rtl/area.json as read by this test
  // (scripts/area.sh --json: OSU 0.18 um cells, OpenSTA):
  //   elem = elem_area_um2 + 512 / flops(u_in) * (flop area(u_in) + logic "in -> u_in")
  //   unit(pe_k) = elem * f + (area_um2 - elem) * max(1, f),  f = pe_k / 64,
  // times the units of the chip: dot_lanes x cores (tensor core, pe_k = 64), rows x cols x cores (cube);
  // time_us = cycles / fmax_mhz, macs_per_s_per_mm2 = M N K / time / area.
  const nlohmann::json j = nlohmann::json::parse(slurp(FP4SIM_AREA_JSON));
  auto unit_of = [](const std::string& engine, const std::string& format) -> std::string {
    if (engine == "tensor-core") return format == "nvfp4" ? "bs_dot_k64_ue4m3_b16" : format == "mxfp4" ? "bs_dot_k64_ue8m0_b32" : "";
    return format == "hif4" ? "hif4_pe" : format == "nvfp4" ? "nvfp4_pe64" : format == "mxfp4" ? "bs_dot_k64_ue8m0_b32" : "";
  };
  auto um2 = [&](const std::string& unit, int pe_k) {
    const nlohmann::json& u = j.at(unit);
    const double area = u.at("area_um2").get<double>();
    const double elem = u.at("elem_area_um2").get<double>() +
                        512.0 / u.at("flops_by_register").at("u_in").get<double>() *
                            (u.at("flop_area_um2_by_register").at("u_in").get<double>() +
                             u.at("logic_area_um2_by_stage").at("in -> u_in").get<double>());
    EXPECT_GT(elem, 0.3 * area) << unit;
    EXPECT_LT(elem, 0.9 * area) << unit;
    const double f = pe_k / 64.0;
    return pe_k == 64 ? area : elem * f + (area - elem) * std::max(1.0, f);
  };
  Dir d("mma_cli");
  const Result r = d.run("whatif --m 128 --n 256 --k 512 --sweep cores=1,4 --sweep pe_k=16,32,64 --out w.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  const Csv csv = parse_csv(slurp(d / "w.csv"));
  for (const char* gone : {"mtransistors", "macs_per_cycle_per_mtr"}) EXPECT_FALSE(csv.has(gone)) << gone;
  size_t narrow_pe = 0;
  for (size_t i = 0; i < csv.rows.size(); ++i) {
    SCOPED_TRACE(i);
    const bool cube = csv.at(i, "engine") == "cube";
    const std::string unit = unit_of(csv.at(i, "engine"), csv.at(i, "format"));
    ASSERT_EQ(csv.at(i, "area_unit"), unit);
    const double cores = std::stod(csv.at(i, "cores"));
    const int pe_k = cube ? std::stoi(csv.at(i, "pe_k")) : 64;
    const double count =
        cores * (cube ? std::stod(csv.at(i, "rows")) * std::stod(csv.at(i, "cols")) : std::stod(csv.at(i, "dot_lanes")));
    narrow_pe += cube && pe_k < 64;
    const double mm2 = count * um2(unit, pe_k) / 1e6;
    EXPECT_NEAR(std::stod(csv.at(i, "area_mm2")), mm2, 0.00005 + 1e-9);  // printed with 4 decimals
    const double fmax = j.at(unit).at("fmax_mhz").get<double>();
    EXPECT_NEAR(std::stod(csv.at(i, "fmax_mhz")), fmax, 0.05 + 1e-9);   // 1 decimal, as in the JSON
    const double cycles = std::stod(csv.at(i, "cycles"));
    const double time_us = cycles / fmax;
    EXPECT_NEAR(std::stod(csv.at(i, "time_us")), time_us, 0.0005 + 1e-9);  // 3 decimals
    const double macs = std::stod(csv.at(i, "m")) * std::stod(csv.at(i, "n")) * std::stod(csv.at(i, "k"));
    const double per = macs / (time_us * 1e-6) / mm2;
    EXPECT_NEAR(std::stod(csv.at(i, "macs_per_s_per_mm2")), per, 5e-5 * per);  // 5 significant digits
  }
  EXPECT_EQ(csv.rows.size(), 2u * 2 + 3u * 2 * 3);  // tensor core: format x cores; cube: format x cores x pe_k
  EXPECT_EQ(narrow_pe, 12u);                       // pe_k 16 and 32
  // A pe_k = 32 HiF4 PE keeps its back end: more than half of the 64-element one.
  EXPECT_GT(um2("hif4_pe", 32), 0.5 * um2("hif4_pe", 64));
  EXPECT_LT(um2("hif4_pe", 32), um2("hif4_pe", 64));

  // A format without a synthesized unit: empty area and clock cells, the statistics still there.
  const Result r8 = d.run("whatif --engine tensor-core --format mxfp8-e4m3 --m 128 --n 256 --k 512 --out w8.csv");
  ASSERT_EQ(r8.code, 0) << r8.err;
  const Csv c8 = parse_csv(slurp(d / "w8.csv"));
  ASSERT_EQ(c8.rows.size(), 1u);
  for (const char* col : {"area_unit", "area_mm2", "fmax_mhz", "time_us", "macs_per_s_per_mm2"})
    EXPECT_EQ(c8.at(0, col), "") << col;
  EXPECT_GT(std::stoull(c8.at(0, "cycles")), 0u);
}

// A build without the SystemC models (FP4SIM_SYSTEMC=OFF): run and whatif say so in one line, exit 1,
// and write nothing.
TEST(CliRun, WithoutModelsFailsWithOneLine) {
  if (test::models_built()) GTEST_SKIP() << "this fp4sim has the SystemC models";
  Dir d("mma_cli");
  for (const char* args : {"run --quick --out o", "whatif --out w.csv"}) {
    SCOPED_TRACE(args);
    expect_failure(d.run(args), 1, "fp4sim was built without the SystemC models (configure with FP4SIM_SYSTEMC=ON)");
  }
  EXPECT_TRUE(d.entries().empty());
}

TEST(CliHelp, NewCommandsListedAndHelpful) {
  Dir d("mma_cli");
  const Result all = d.run("--help");
  ASSERT_EQ(all.code, 0);
  for (const char* c : {"mma", "gemm", "linear", "vectors", "replay"}) {
    EXPECT_NE(all.out.find(std::string("\n  ") + c + " "), std::string::npos) << c;
    const Result h = d.run(std::string("help ") + c);
    EXPECT_EQ(h.code, 0) << c;
    EXPECT_NE(h.out.find(std::string("Usage: fp4sim ") + c), std::string::npos) << h.out;
    EXPECT_TRUE(h.err.empty());
  }
}

// `fp4sim train` runs the Python trainer in its place: what it cannot start is one line, nothing
// written (the trainer's own tests are python/tests/test_train.py).
TEST(CliTrain, LauncherErrorsAreOneLine) {
  Dir d("train_cli");
  const Result all = d.run("--help");
  ASSERT_EQ(all.code, 0);
  EXPECT_NE(all.out.find("\n  train "), std::string::npos);
  expect_failure(d.run("train --steps 1", "FP4SIM_PYTHON=/nonexistent/python3"), 1,
                 "train: cannot run /nonexistent/python3: No such file or directory (set FP4SIM_PYTHON to a "
                 "Python with the fp4sim package and torch)");
  // An interpreter that cannot import fp4sim (isolated mode: no PYTHONPATH, no user site).
  const Result r = d.run("train --steps 1", "FP4SIM_PYTHON=python3 PYTHONNOUSERSITE=1 PYTHONPATH=/nonexistent");
  if (r.code == 2) {
    EXPECT_EQ(r.err.find("fp4sim: error: train: the fp4sim Python package is not importable by "), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  } else {
    // An fp4sim package installed into the interpreter itself: then it must not be this error.
    EXPECT_EQ(r.err.find("not importable"), std::string::npos) << r.err;
  }
  EXPECT_TRUE(d.entries().empty());
}
