// Line vectors (lines.hpp, docs/line-vectors.md): one MMA instruction per line, and `fp4sim check
// --lines`. The chain is compared with the suite's steps (golden gemm, not mma_dot), the lines are
// read back by a parser written here from the documented layout, flags are derived by hand from
// SPEC §4, and the check is run on result files made from the lines with one result changed.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "fp4sim/io/lines.hpp"
#include "fp4sim/io/manifest.hpp"
#include "fp4sim/io/npy.hpp"
#include "fp4sim/io/vectors.hpp"

#ifndef FP4SIM_CLI
#error "FP4SIM_CLI (path of the fp4sim binary) must be defined by the build"
#endif

namespace fs = std::filesystem;
namespace v = fp4sim::vectors;
namespace ln = fp4sim::lines;
using fp4sim::test::Dir;
using fp4sim::test::Result;
using fp4sim::test::slurp;

namespace {

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

std::vector<std::string> tokens(const std::string& line) {
  std::istringstream ss(line);
  std::vector<std::string> t;
  for (std::string w; ss >> w;) t.push_back(w);
  return t;
}
std::vector<std::string> file_lines(const fs::path& p) {
  std::istringstream ss(slurp(p));
  std::vector<std::string> out;
  for (std::string l; std::getline(ss, l);) out.push_back(l);
  return out;
}

// The documented packing: `count` fields of `digits` hex digits, field 0 least significant (last).
std::vector<uint32_t> unpack(const std::string& word, size_t count, size_t digits) {
  EXPECT_EQ(word.size(), count * digits) << word;
  std::vector<uint32_t> out(count);
  for (size_t i = 0; i < count; ++i)
    out[i] = static_cast<uint32_t>(std::stoul(word.substr((count - 1 - i) * digits, digits), nullptr, 16));
  return out;
}

struct Parsed {
  uint32_t cfg_word = 0, c = 0, d = 0, flags = 0;
  std::vector<uint8_t> a, b;
  std::vector<uint32_t> sa, sb;
};
// Operands of a hex / testfloat line from token `at` (the config word); k and nb from the case.
Parsed parse_ops(const std::vector<std::string>& t, size_t at, size_t k, size_t nb) {
  Parsed p;
  p.cfg_word = static_cast<uint32_t>(std::stoul(t[at], nullptr, 16));
  for (uint32_t x : unpack(t[at + 1], k, 2)) p.a.push_back(static_cast<uint8_t>(x));
  for (uint32_t x : unpack(t[at + 2], k, 2)) p.b.push_back(static_cast<uint8_t>(x));
  p.sa = unpack(t[at + 3], nb, 8);
  p.sb = unpack(t[at + 4], nb, 8);
  p.c = static_cast<uint32_t>(std::stoul(t[at + 5], nullptr, 16));
  p.d = static_cast<uint32_t>(std::stoul(t[at + 6], nullptr, 16));
  p.flags = static_cast<uint32_t>(std::stoul(t[at + 7], nullptr, 16));
  return p;
}

// One mxf4 (E2M1, UE8M0 / 32, K = 64) instruction: A = a0 at k = 0 and a1 at k = 1 (else 0), B all
// 1.0, scales sa / sb on both blocks.
struct Mxf4Ins {
  std::vector<uint8_t> a = std::vector<uint8_t>(64, 0), b = std::vector<uint8_t>(64, 0x2);
  std::vector<uint32_t> sa = {0x7F, 0x7F}, sb = {0x7F, 0x7F};
};

}  // namespace

// The lines of every chained case of the smoke suite reproduce its steps (golden gemm, instruction
// by instruction), C of instruction s is the steps' s - 1, and RN(alpha * last) is the expected D.
TEST(Lines, ChainedCasesReproduceTheSteps) {
  const std::vector<v::VectorCase> cases = v::build_suite(v::Suite::Smoke, {});
  size_t chained = 0;
  for (const v::VectorCase& c : cases) {
    const fp4sim::Model hw = c.cfg.kind->hardware_model;
    size_t mi = 0;
    while (c.models[mi] != hw) ++mi;
    const size_t k = static_cast<size_t>(c.cfg.kind->k), S = c.K / k;
    ASSERT_GT(S, 1u) << c.id;  // smoke: two instructions everywhere
    ASSERT_EQ(c.steps[mi].size(), S * c.M * c.N);
    ++chained;
    const std::vector<ln::Instruction> ins = ln::case_instructions(c, hw);
    ASSERT_EQ(ins.size(), c.M * c.N * S);
    size_t i = 0;
    for (size_t m = 0; m < c.M; ++m)
      for (size_t n = 0; n < c.N; ++n)
        for (size_t s = 0; s < S; ++s, ++i) {
          const ln::Instruction& x = ins[i];
          ASSERT_EQ(x.m, m);
          ASSERT_EQ(x.n, n);
          ASSERT_EQ(x.index, s);
          ASSERT_EQ(x.count, S);
          EXPECT_EQ(x.d, bits(c.steps[mi][(s * c.M + m) * c.N + n])) << c.id << " " << m << "," << n << " s" << s;
          const uint32_t want_c = s == 0 ? bits(c.c[m * c.N + n]) : bits(c.steps[mi][((s - 1) * c.M + m) * c.N + n]);
          EXPECT_EQ(x.c, want_c);
          for (size_t q = 0; q < k; ++q) {
            EXPECT_EQ(x.a[q], c.a.codes[m * c.K + s * k + q]);
            EXPECT_EQ(x.b[q], c.b.codes[n * c.K + s * k + q]);
          }
          if (s + 1 == S) {
            float e = c.alpha * std::bit_cast<float>(x.d);
            uint32_t eb = std::isnan(e) ? 0x7FFFFFFFu : bits(e);
            EXPECT_EQ(eb, bits(c.expected[mi][m * c.N + n])) << c.id;
          }
        }
  }
  EXPECT_EQ(chained, cases.size());
  // exact rounds once over the whole K: no chain to write.
  EXPECT_THROW(ln::case_instructions(cases[0], fp4sim::Model::Exact), std::invalid_argument);
}

// hex and testfloat lines of the corners suite, read back by the parser above, give the case's
// operands; fp4sim::mma_dot on them gives the expected D; the flags field is instruction_flags.
TEST(Lines, HexAndTestFloatLinesReadBackAndRecompute) {
  const std::vector<v::VectorCase> cases = v::build_suite(v::Suite::Corners, {});
  size_t checked = 0;
  for (const v::VectorCase& c : cases) {
    const fp4sim::Model hw = c.cfg.kind->hardware_model;
    fp4sim::MmaConfig cfg = c.cfg;
    cfg.model = hw;
    const size_t k = static_cast<size_t>(cfg.kind->k), nb = k / static_cast<size_t>(cfg.block);
    const std::vector<ln::Instruction> ins = ln::case_instructions(c, hw);
    for (const ln::Instruction& x : ins) {
      const std::vector<std::string> th = tokens(ln::format_line(x, ln::LineFormat::Hex));
      const std::vector<std::string> tt = tokens(ln::format_line(x, ln::LineFormat::TestFloat));
      ASSERT_EQ(th.size(), 14u);
      ASSERT_EQ(tt.size(), 8u);
      // hex: case number, m, n, s, S as 4 hex digits; alpha last.
      EXPECT_EQ(std::stoul(th[0], nullptr, 16), std::stoul(c.id.substr(0, 4)));
      EXPECT_EQ(std::stoul(th[1], nullptr, 16), x.m);
      EXPECT_EQ(std::stoul(th[3], nullptr, 16), x.index);
      EXPECT_EQ(static_cast<uint32_t>(std::stoul(th[13], nullptr, 16)), bits(c.alpha));
      for (const Parsed& p : {parse_ops(th, 5, k, nb), parse_ops(tt, 0, k, nb)}) {
        // The documented word: kind 31:28, model 27:24, ..., block 11:0.
        EXPECT_EQ(p.cfg_word & 0xFFFu, static_cast<uint32_t>(cfg.block));
        EXPECT_EQ(p.cfg_word >> 24 & 0xF, hw == fp4sim::Model::Blackwell ? 2u : 3u);
        for (size_t q = 0; q < k; ++q) {
          ASSERT_EQ(p.a[q], c.a.codes[x.m * c.K + x.index * k + q]);
          ASSERT_EQ(p.b[q], c.b.codes[x.n * c.K + x.index * k + q]);
        }
        for (size_t j = 0; j < nb; ++j) {
          ASSERT_EQ(p.sa[j], c.a.scales[x.m * (c.K / cfg.block) + x.index * nb + j]);
          ASSERT_EQ(p.sb[j], c.b.scales[x.n * (c.K / cfg.block) + x.index * nb + j]);
        }
        const uint32_t d = fp4sim::mma_dot(cfg, p.a.data(), p.b.data(), p.sa.data(), p.sb.data(), p.c);
        EXPECT_EQ(p.d, d) << c.id;
        EXPECT_EQ(p.flags, ln::instruction_flags(cfg, p.a.data(), p.b.data(), p.sa.data(), p.sb.data(), p.c, d));
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 500u);
  // The example word of the header: mxf4nvf4, blackwell, e2m1 x e2m1, ue4m3 / 16.
  const fp4sim::MmaConfig nv = ln::config_from_word(0x12001010u);
  EXPECT_EQ(nv.kind->id, fp4sim::MmaKindId::Mxf4Nvf4);
  EXPECT_EQ(nv.block, 16);
  EXPECT_EQ(nv.scale->name, "ue4m3");
  EXPECT_EQ(ln::config_word(nv), 0x12001010u);
}

// Flags on instructions whose results follow from SPEC §4 by hand.
TEST(Lines, FlagsOfHandDerivedInstructions) {
  fp4sim::MmaConfig cfg = fp4sim::make_mma_config(fp4sim::MmaKindId::Mxf4);
  cfg.model = fp4sim::Model::Blackwell;
  auto run = [&](const Mxf4Ins& x, uint32_t c, uint32_t& d) {
    d = fp4sim::mma_dot(cfg, x.a.data(), x.b.data(), x.sa.data(), x.sb.data(), c);
    return ln::instruction_flags(cfg, x.a.data(), x.b.data(), x.sa.data(), x.sb.data(), c, d);
  };
  uint32_t d = 0;
  {  // 64 products 1 x 1 (E2M1 0x2 = 1.0, UE8M0 0x7F = 1): D = 64 exactly, no flag.
    Mxf4Ins x;
    x.a.assign(64, 0x2);
    EXPECT_EQ(run(x, 0, d), 0u);
    EXPECT_EQ(d, 0x42800000u);
  }
  {  // +1 and -1 cancel (max exponent 0, 35 fraction bits): C = 2^-36 is truncated to +0: inexact.
    Mxf4Ins x;
    x.a[0] = 0x2;
    x.a[1] = 0xA;
    EXPECT_EQ(run(x, 0x2D800000u /* 2^-36 */, d), ln::kFlagInexact);
    EXPECT_EQ(d, 0u);
    // C = 2^-35 is kept: exact.
    EXPECT_EQ(run(x, 0x2E000000u, d), 0u);
    EXPECT_EQ(d, 0x2E000000u);
    // C = 2^-149 (the smallest subnormal) is truncated: the exact result is tiny and lost.
    EXPECT_EQ(run(x, 0x00000001u, d), ln::kFlagInexact | ln::kFlagUnderflow);
    EXPECT_EQ(d, 0u);
  }
  {  // 6 x 6 under scales 2^127 each: 36 * 2^254 overflows to +Inf with no Inf operand.
    Mxf4Ins x;
    x.a[0] = 0x7;
    x.b[0] = 0x7;
    x.sa = {0xFE, 0xFE};
    x.sb = {0xFE, 0xFE};
    EXPECT_EQ(run(x, 0, d), ln::kFlagOverflow | ln::kFlagInexact);
    EXPECT_EQ(d, 0x7F800000u);
  }
  {  // A NaN scale or a NaN C gives NaN: not invalid (a NaN operand); C = +Inf gives +Inf: no flag.
    Mxf4Ins x;
    x.sa = {0xFF, 0x7F};
    EXPECT_EQ(run(x, 0, d), 0u);
    EXPECT_EQ(d, 0x7FFFFFFFu);
    Mxf4Ins y;
    EXPECT_EQ(run(y, 0x7FC00000u, d), 0u);
    EXPECT_EQ(d, 0x7FFFFFFFu);
    EXPECT_EQ(run(y, 0x7F800000u, d), 0u);
    EXPECT_EQ(d, 0x7F800000u);
  }
  {  // ascend-hif4 rounds the FP32 accumulator to nearest even: C = 1 plus one product 2^-24 (S1P2
     // 0x1 = 0.25 on A and B, E6M2 0x98 = 2^(38-48) on each) is a tie -> 1.0, inexact; plus 2^-23
     // (A = 0x2 = 0.5) is exact: 1 + 2^-23.
    fp4sim::MmaConfig ch = fp4sim::make_mma_config(fp4sim::MmaKindId::Hif4);
    ch.model = fp4sim::Model::AscendHif4;
    std::vector<uint8_t> a(64, 0), b(64, 0);
    a[0] = 0x1;
    b[0] = 0x1;
    const uint32_t s[1] = {0x98};
    d = fp4sim::mma_dot(ch, a.data(), b.data(), s, s, 0x3F800000u);
    EXPECT_EQ(d, 0x3F800000u);
    EXPECT_EQ(ln::instruction_flags(ch, a.data(), b.data(), s, s, 0x3F800000u, d), ln::kFlagInexact);
    a[0] = 0x2;
    d = fp4sim::mma_dot(ch, a.data(), b.data(), s, s, 0x3F800000u);
    EXPECT_EQ(d, 0x3F800001u);
    EXPECT_EQ(ln::instruction_flags(ch, a.data(), b.data(), s, s, 0x3F800000u, d), 0u);
    // The level bits double element 0's factor (E1_8 bit 8 covers elements 0..7): 0.5 * 2 * 0.25 *
    // 2^-20 = 2^-22, exact.
    const uint32_t sl[1] = {0x198};
    d = fp4sim::mma_dot(ch, a.data(), b.data(), sl, s, 0x3F800000u);
    EXPECT_EQ(d, 0x3F800002u);
    EXPECT_EQ(ln::instruction_flags(ch, a.data(), b.data(), sl, s, 0x3F800000u, d), 0u);
  }
  {  // E5M2: +Inf x 0 is NaN without a NaN operand: invalid.
    fp4sim::MmaConfig c8 = fp4sim::make_mma_config(fp4sim::MmaKindId::Mxf8f6f4, &fp4sim::kE5M2, &fp4sim::kE5M2);
    c8.model = fp4sim::Model::Blackwell;
    std::vector<uint8_t> a(32, 0), b(32, 0x3C);  // E5M2 0x3C = 1.0
    a[0] = 0x7C;                                 // +Inf
    b[0] = 0x00;                                 // +0
    const uint32_t s[1] = {0x7F};
    d = fp4sim::mma_dot(c8, a.data(), b.data(), s, s, 0);
    EXPECT_EQ(d, 0x7FFFFFFFu);
    EXPECT_EQ(ln::instruction_flags(c8, a.data(), b.data(), s, s, 0, d), ln::kFlagInvalid);
  }
}

namespace {
void write(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary | std::ios::trunc) << s; }
}  // namespace

// The CLI: vectors --lines writes every instruction; check --lines passes the expected D back,
// names the instruction of a changed result, and refuses short files and bad input in one line.
TEST(LinesCli, CheckNamesTheFirstDifferingInstruction) {
  Dir dir("lines");
  Result r = dir.run("vectors --suite corners --lines jsonl --out v.jsonl");
  ASSERT_EQ(r.code, 0) << r.err;
  r = dir.run("vectors --suite corners --lines hex --out v.hex");
  ASSERT_EQ(r.code, 0) << r.err;
  r = dir.run("vectors --suite corners --lines testfloat --out v.tf");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<std::string> jl = file_lines(dir / "v.jsonl"), hx = file_lines(dir / "v.hex"),
                                 tf = file_lines(dir / "v.tf");
  ASSERT_EQ(hx.size(), jl.size() + 1);  // the header comment
  ASSERT_EQ(tf.size(), jl.size());
  EXPECT_EQ(hx[0].substr(0, 3), "// ");
  // corners: 120 cases, one instruction each except k_chaining (two); every output element.
  size_t want = 0;
  for (const v::VectorCase& c : v::build_suite(v::Suite::Corners, {}))
    want += c.M * c.N * (c.K / static_cast<size_t>(c.cfg.kind->k));
  EXPECT_EQ(jl.size(), want);
  // Results = the D field (the 7th of a testfloat line), one changed at line 40.
  std::string ok, bad;
  const size_t flip = 39;
  std::string flipped_d;
  for (size_t i = 0; i < tf.size(); ++i) {
    const std::vector<std::string> t = tokens(tf[i]);
    ok += t[6] + " " + t[7] + "\n";
    std::string dd = t[6];
    if (i == flip) {
      const uint32_t x = static_cast<uint32_t>(std::stoul(dd, nullptr, 16)) ^ 1u;
      char buf[16];
      std::snprintf(buf, sizeof buf, "%08x", x);
      dd = buf;
      flipped_d = dd;
    }
    bad += dd + "\n";
  }
  write(dir / "ok.txt", ok);
  write(dir / "bad.txt", bad);
  for (const char* f : {"v.jsonl", "v.hex", "v.tf"}) {
    r = dir.run(std::string("check --lines ") + f + " --results ok.txt");
    EXPECT_EQ(r.code, 0) << f << r.err << r.out;
    r = dir.run(std::string("check --lines ") + f + " --results bad.txt");
    EXPECT_EQ(r.code, 1) << f;
    EXPECT_NE(r.out.find("results line 40"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("got " + flipped_d), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("1 ulp"), std::string::npos) << r.out;
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
  }
  // jsonl names the case id and the output element of line 40.
  const std::string id = fp4sim::io::Json::parse(jl[flip])["case"].get<std::string>();
  r = dir.run("check --lines v.jsonl --results bad.txt");
  EXPECT_NE(r.out.find("DIFFER " + id + " ["), std::string::npos) << r.out;
  // Results as JSON lines with "d" (hex string or integer bits).
  std::string js;
  for (size_t i = 0; i < tf.size(); ++i) {
    const std::string d = tokens(tf[i])[6];
    js += i % 2 ? "{\"d\": \"0x" + d + "\"}\n" : "{\"d\": " + std::to_string(std::stoul(d, nullptr, 16)) + "}\n";
  }
  write(dir / "ok.jsonl", js);
  r = dir.run("check --lines v.jsonl --results ok.jsonl");
  EXPECT_EQ(r.code, 0) << r.err << r.out;
  // A flags difference alone is a difference.
  std::string fl = ok;
  fl.replace(fl.find('\n') - 2, 2, "10");
  write(dir / "flags.txt", fl);
  r = dir.run("check --lines v.hex --results flags.txt");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("flags: expected"), std::string::npos) << r.out;
  // Short and long results files: one line naming the line.
  write(dir / "short.txt", ok.substr(0, ok.rfind('\n', ok.size() - 2) + 1));
  fp4sim::test::expect_failure(dir.run("check --lines v.hex --results short.txt"), 1, "results end after");
  write(dir / "long.txt", ok + "00000000\n");
  fp4sim::test::expect_failure(dir.run("check --lines v.hex --results long.txt"), 1,
                               "long.txt:" + std::to_string(tf.size() + 1) + ": a result beyond");
  write(dir / "junk.txt", "zz\n");
  fp4sim::test::expect_failure(dir.run("check --lines v.hex --results junk.txt"), 1, "junk.txt:1: D 'zz'");
  // A damaged lines file names its line.
  std::string hb = slurp(dir / "v.hex");
  hb.replace(hb.find('\n') + 1, 4, "xyz0");
  write(dir / "bad.hex", hb);
  fp4sim::test::expect_failure(dir.run("check --lines bad.hex --results ok.txt"), 1, "bad.hex:2:");
}

TEST(LinesCli, OptionsAndOutputPolicy) {
  Dir dir("lines");
  fp4sim::test::expect_failure(dir.run("vectors --suite smoke --lines csv --out x"), 2, "--lines: unknown line format 'csv'");
  fp4sim::test::expect_failure(dir.run("vectors --suite smoke --model exact --out x"), 2, "--model: only with --lines");
  fp4sim::test::expect_failure(dir.run("vectors --suite smoke --lines hex --model blackwell --out x"), 2, "--model");
  fp4sim::test::expect_failure(dir.run("check --lines nothere.hex --results r"), 1, "nothere.hex");
  fp4sim::test::expect_failure(dir.run("check s --lines a --results r"), 2, "not both");
  // smoke has two instructions per case: exact has no chain, nothing to write; the file is not created.
  fp4sim::test::expect_failure(dir.run("vectors --suite smoke --lines hex --model exact --out x.hex"), 1, "exact");
  EXPECT_FALSE(fs::exists(dir / "x.hex"));
  Result r = dir.run("vectors --suite corners --lines testfloat --model exact --out e.tf");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("left out"), std::string::npos) << r.out;  // the k_chaining cases
  // fp32-seq chains: every case.
  r = dir.run("vectors --suite smoke --lines jsonl --model fp32-seq --out f.jsonl");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(slurp(dir / "f.jsonl").find("\"model\":\"fp32-seq\""), std::string::npos);
  // An existing file needs --force.
  fp4sim::test::expect_failure(dir.run("vectors --suite corners --lines hex --out e.tf"), 1, "e.tf: already exists");
  r = dir.run("vectors --suite corners --lines hex --out e.tf --force");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(dir / "e.tf").substr(0, 2), "//");
}

// --from: the caller's tensor as lines; the jsonl `final` of each element is the suite's expected D.
TEST(LinesCli, FromTensorsFinalIsTheSuitesD) {
  Dir dir("lines");
  std::vector<float> a(2 * 128);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 13) - 6) * 0.37f;
  const size_t shape[2] = {2, 128};
  fp4sim::io::write_npy<float>(dir / "A.npy", shape, a);
  Result r = dir.run("vectors --from A.npy --format mxfp4 --lines jsonl --out a.jsonl");
  ASSERT_EQ(r.code, 0) << r.err;
  r = dir.run("vectors --from A.npy --format mxfp4 --out suite");
  ASSERT_EQ(r.code, 0) << r.err;
  const v::LoadedCase lc = v::SuiteReader(dir / "suite").load(0);
  ASSERT_TRUE(lc.problems.empty());
  size_t mi = 0;
  while (lc.data.models[mi] != fp4sim::Model::Blackwell) ++mi;
  const std::vector<std::string> jl = file_lines(dir / "a.jsonl");
  ASSERT_EQ(jl.size(), 2u * 2u * 2u);  // B = A: 2 x 2 outputs, K = 128 = two instructions
  size_t finals = 0;
  for (const std::string& l : jl) {
    const fp4sim::io::Json j = fp4sim::io::Json::parse(l);
    if (!j.contains("final")) continue;
    const size_t m = j["m"].get<size_t>(), n = j["n"].get<size_t>();
    EXPECT_EQ(static_cast<uint32_t>(std::stoul(j["final"].get<std::string>(), nullptr, 16)),
              bits(lc.data.expected[mi][m * 2 + n]));
    ++finals;
  }
  EXPECT_EQ(finals, 4u);
}

// --only: the lines of one configuration are exactly the full file's lines with that configuration
// word, in order, and as many as that configuration's cases hold instructions.
TEST(LinesCli, OnlyKeepsOneConfiguration) {
  Dir dir("lines");
  Result r = dir.run("vectors --suite corners --lines testfloat --out all.tf");
  ASSERT_EQ(r.code, 0) << r.err;
  r = dir.run("vectors --suite corners --lines testfloat --only mxf8f6f4-e2m1 --out e2m1.tf");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("only mxf8f6f4-e2m1;"), std::string::npos) << r.out;
  // The word by its documented fields: kind mxf8f6f4 = 2, blackwell = 2, E2M1 x E2M1 = 0 0,
  // UE8M0 = 0, block 32 = 0x020.
  const std::string word = "22000020";
  std::vector<std::string> want;
  for (const std::string& l : file_lines(dir / "all.tf"))
    if (tokens(l)[0] == word) want.push_back(l);
  const std::vector<std::string> got = file_lines(dir / "e2m1.tf");
  EXPECT_EQ(got, want);
  size_t n = 0, cases = 0;
  for (const v::VectorCase& c : v::build_suite(v::Suite::Corners, {}))
    if (c.cfg.kind->id == fp4sim::MmaKindId::Mxf8f6f4 && c.cfg.elem_a->name == std::string_view("e2m1") &&
        c.cfg.elem_b->name == std::string_view("e2m1")) {
      n += c.M * c.N * (c.K / 32);
      ++cases;
    }
  EXPECT_GT(cases, 0u);
  EXPECT_EQ(got.size(), n);
  // A configuration the suite does not have: one line naming the ones it has; nothing written.
  fp4sim::test::expect_failure(dir.run("vectors --suite corners --lines hex --only mxf8f6f4-e2m1xe4m3 --out x.hex"), 1,
                               "--only mxf8f6f4-e2m1xe4m3: no case of suite corners has that configuration");
  EXPECT_FALSE(fs::exists(dir / "x.hex"));
  r = dir.run("vectors --suite random --lines hex --only mxf8f6f4-e2m1xe4m3 --out x.hex");
  EXPECT_EQ(r.code, 0) << r.err;
  fp4sim::test::expect_failure(dir.run("vectors --suite corners --only mxf4 --out d"), 2, "--only: only with --lines");
}
