// fp4sim replay --target exec:CMD / plugin:PATH.so (docs/replay-targets.md): the request and answer
// lines, outside models that agree with golden, are one ulp off on one instruction, die, write
// garbage, answer too few lines, hang, refuse configurations, and plugins that are broken.
// The models: tests/sim/replay_external/golden_model.cpp (golden mma_dot, misbehaving on request),
// test_plugin.c, and the example unit examples/replay_target (C model as exec and plugin).
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cstdlib>
#include <regex>
#include <string>

#include "../cli_harness.hpp"
#include "fp4sim/io/lines.hpp"
#include "fp4sim/io/replay_external.hpp"
#include "fp4sim/io/vectors.hpp"
#include "fp4sim/mma.hpp"

namespace fs = std::filesystem;
using fp4sim::test::Dir;
using fp4sim::test::Result;

namespace {

class ReplayExternal : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new Dir("replay_ext");
    for (const char* args : {"vectors --suite smoke --seed 5 --out smoke", "vectors --suite corners --out corners"}) {
      const Result r = dir_->run(args);
      ASSERT_EQ(r.code, 0) << args << ": " << r.err;
    }
  }
  static void TearDownTestSuite() { delete dir_; }
  static Result replay(const std::string& suite, const std::string& target, const std::string& more = "--quiet") {
    return dir_->run("replay " + suite + " --target '" + target + "' " + more);
  }
  static std::string golden(const std::string& opts = "") {
    return std::string("exec:") + FP4SIM_REPLAY_GOLDEN_MODEL + (opts.empty() ? "" : " " + opts);
  }
  static Dir* dir_;
};
Dir* ReplayExternal::dir_ = nullptr;

std::string summary(const Result& r) {
  const size_t at = r.out.rfind("replay ");
  return at == std::string::npos ? "" : r.out.substr(at);
}

// ---- The line formats ----

TEST(ReplayLines, RequestIsTheHexLineVectorWithoutItsExpectedFields) {
  // By hand: case 7, D[1, 2], instruction 0 of 1, mxf8f6f4 blackwell E2M1 x E2M1 UE8M0 / 32
  // (22000020), A = 1.0 (code 2) in element 0 only, B = -1.0 (0xA) in element 31 only, scales 2^0
  // (0x7F) and 2^1 (0x80), C = 1.0.
  uint8_t a[32] = {}, b[32] = {};
  a[0] = 0x2;
  b[31] = 0xA;
  const uint32_t sa = 0x7F, sb = 0x80;
  fp4sim::dut::Request r;
  r.case_num = 7;
  r.m = 1;
  r.n = 2;
  r.config = 0x22000020u;
  r.a = a;
  r.b = b;
  r.sa = &sa;
  r.sb = &sb;
  r.k = 32;
  r.nscales = 1;
  r.c = 0x3F800000u;
  EXPECT_EQ(fp4sim::dut::format_request(r),
            "0007 0001 0002 0000 0001 22000020 " + std::string(62, '0') + "02 0a" + std::string(62, '0') +
                " 0000007f 00000080 3f800000");
}

TEST(ReplayLines, RequestsAgreeWithTheLineVectorWriter) {
  // Every instruction of a smoke case, formatted both ways: the request is the line's first 11 fields.
  fp4sim::vectors::SuiteOptions o;
  o.seed = 5;
  o.threads = 1;
  const std::vector<fp4sim::vectors::VectorCase> cases = fp4sim::vectors::build_suite(fp4sim::vectors::Suite::Smoke, o);
  size_t checked = 0;
  for (const auto& v : cases) {
    const fp4sim::Model m = v.cfg.kind->id == fp4sim::MmaKindId::Hif4 ? fp4sim::Model::AscendHif4 : fp4sim::Model::Blackwell;
    for (const fp4sim::lines::Instruction& ins : fp4sim::lines::case_instructions(v, m)) {
      fp4sim::dut::Request r;
      r.case_num = std::strtoull(ins.case_id.c_str(), nullptr, 10);
      r.m = ins.m;
      r.n = ins.n;
      r.s = ins.index;
      r.S = ins.count;
      r.config = fp4sim::lines::config_word(ins.cfg);
      r.a = ins.a.data();
      r.b = ins.b.data();
      r.sa = ins.sa.data();
      r.sb = ins.sb.data();
      r.k = ins.a.size();
      r.nscales = ins.sa.size();
      r.c = ins.c;
      const std::string line = fp4sim::lines::format_line(ins, fp4sim::lines::LineFormat::Hex);
      size_t cut = 0;
      for (int f = 0; f < 11; ++f) cut = line.find(' ', cut) + 1;
      ASSERT_EQ(fp4sim::dut::format_request(r), line.substr(0, cut - 1)) << ins.case_id;
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000u);
}

TEST(ReplayLines, AnswerLines) {
  using fp4sim::dut::parse_answer;
  EXPECT_EQ(parse_answer("3f800000")->d, 0x3F800000u);
  EXPECT_FALSE(parse_answer("3f800000")->flags.has_value());
  const auto f = parse_answer("  0x7FFFFFFF 10\r");
  EXPECT_EQ(f->d, 0x7FFFFFFFu);
  EXPECT_EQ(*f->flags, 0x10);
  EXPECT_EQ(parse_answer("0")->d, 0u);
  const auto u = parse_answer("unsupported no HiF4 datapath");
  EXPECT_TRUE(u->unsupported);
  EXPECT_EQ(u->why, "no HiF4 datapath");
  EXPECT_TRUE(parse_answer("unsupported")->unsupported);
  EXPECT_FALSE(parse_answer("").has_value());
  EXPECT_FALSE(parse_answer("# a comment").has_value());
  EXPECT_FALSE(parse_answer("// a comment").has_value());
  for (const char* bad : {"xyz", "3f800000 01 02", "123456789", "3f80000g", "3f800000 100", "unsupportedx"})
    EXPECT_THROW(parse_answer(bad), std::invalid_argument) << bad;
}

// ---- exec ----

TEST_F(ReplayExternal, ExecModelThatAgreesWithGoldenPasses) {
  // smoke: every case has two instructions, so exact (one rounding over K) is skipped and the other
  // two models run; corners: every configuration and model.
  Result r = replay("smoke", golden());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(summary(r).find(": 16 cases, 16 pass, 0 fail, 0 error, 0 skipped; 32 D arrays"), std::string::npos)
      << r.out;
  r = replay("corners", golden());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(summary(r).find(" 0 fail, 0 error, 0 skipped"), std::string::npos) << r.out;
  // Flags given by the model are checked too.
  r = replay("corners", golden("--flags"));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

TEST_F(ReplayExternal, OneUlpOffOnOneInstructionFailsNamingIt) {
  // Case 3 (mxf8f6f4, alpha 1), D[1, 2], the last of its two instructions answered one ulp high:
  // the final D is off by one ulp too.
  Result r = replay("smoke", golden("--wrong 3:1:2:1"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const std::regex named(
      "first differing instruction 1 of 2 of D\\[1, 2\\] in case (0003-[a-z0-9-]+) \\(request [0-9]+\\): "
      "mma_dot gives ([0-9a-f]{8}), the model ([0-9a-f]{8})");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, named)) << r.out;
  EXPECT_EQ(std::stoul(m[3].str(), nullptr, 16), std::stoul(m[2].str(), nullptr, 16) + 1);
  EXPECT_NE(r.out.find("request: 0003 0001 0002 0001 0002 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL  " + m[1].str()), std::string::npos) << r.out;
  EXPECT_NE(summary(r).find(": 16 cases, 15 pass, 1 fail, 0 error, "), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "fp4sim: error: replay: 1 case(s) failed, 0 case(s) could not be checked\n");

  // The first instruction one ulp high: the chain's next instruction absorbs it (the C alignment
  // truncates that bit), so D compares equal, but the instruction is still named, as an error.
  r = replay("smoke", golden("--wrong 3:1:2:0"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("ERROR 0003-"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("instruction 0 of 2 of D[1, 2] in case 0003-"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("; the final D agrees"), std::string::npos) << r.out;
}

TEST_F(ReplayExternal, ModelThatDiesIsOneLineNamingTheInstruction) {
  // Request 1 asks the first configuration; requests 2.. are case 0's 64 elements: request 5 is D[0, 3].
  const Result r = replay("smoke", golden("--die-at 5"));
  fp4sim::test::expect_failure(r, 1, "instruction 0 of 2 of D[0, 3] in case 0000-");
  EXPECT_NE(r.err.find("(request 5): closed its output after 3 of 64 answers; it exited with status 3"),
            std::string::npos)
      << r.err;
}

TEST_F(ReplayExternal, TooFewAnswersIsOneLineNamingTheInstruction) {
  const Result r = replay("smoke", golden("--stop-at 9"));
  fp4sim::test::expect_failure(r, 1, "instruction 0 of 2 of D[0, 7] in case 0000-");
  EXPECT_NE(r.err.find("(request 9): closed its output after 7 of 64 answers; it exited with status 0"),
            std::string::npos)
      << r.err;
}

TEST_F(ReplayExternal, GarbageIsOneLineNamingTheInstruction) {
  const Result r = replay("smoke", golden("--garbage-at 66"));  // case 0's first answer of step 1: D[0, 0]
  fp4sim::test::expect_failure(r, 1, "instruction 1 of 2 of D[0, 0] in case 0000-");
  EXPECT_NE(r.err.find("(request 66): answer 'this is no answer' is no result line"), std::string::npos) << r.err;
}

TEST_F(ReplayExternal, SilentModelTimesOutInsteadOfHanging) {
  const auto t0 = std::chrono::steady_clock::now();
  const Result r = replay("smoke", golden("--hang-at 3"), "--quiet --timeout 1");  // flushed: 1 and 2
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fp4sim::test::expect_failure(r, 1, "(request 3): no answer within 1 s (--timeout)");
  EXPECT_LT(s, 20.0);
}

TEST_F(ReplayExternal, CommandThatCannotRunIsAnError) {
  const Result r = replay("smoke", "exec:/nonexistent/model");
  EXPECT_EQ(r.code, 1);
  // The shell's own complaint goes to stderr first (the model's stderr is fp4sim's); fp4sim's line is last.
  const size_t at = r.err.rfind("fp4sim: error: ");
  ASSERT_NE(at, std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(request 1): closed its output after 0 of 1 answers; it exited with status 127", at),
            std::string::npos)
      << r.err;
}

TEST_F(ReplayExternal, RefusedConfigurationsAreSkippedWithTheModelsReason) {
  // Only the dot32_e2m1 configuration: the 14 corner cases of mxf8f6f4 E2M1 (docs/vectors.md's class
  // table: 10 classes for every kind or for mxf8f6f4, alpha four times) pass; the rest are skipped.
  const Result r = replay("corners", golden("--only 22000020"));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(summary(r).find(" 14 pass, 0 fail, 0 error, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cases: exec model: unsupported golden_model --only refuses this configuration"),
            std::string::npos)
      << r.out;
}

TEST_F(ReplayExternal, WrongFlagsAreAnErrorNamingTheInstruction) {
  // By hand (docs/vectors.md trunc_boundary, F = 25): D[0, 0] of case 103 is +1 - 1 + C with C =
  // 2^-25 on the window's last place: kept exactly, so no flag is raised. The model claims inexact.
  const Result r = replay("corners", golden("--flags --wrong-flags 103:0:0:0"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("ERROR 0103-mxf8f6f4-e2m1-trunc_boundary"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("instruction 0 of 1 of D[0, 0] in case 0103-mxf8f6f4-e2m1-trunc_boundary"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("flags: golden's 00, the model's 01 (D 33000000 agrees)"), std::string::npos) << r.out;
}

// ---- The example unit (C model) ----

TEST_F(ReplayExternal, ExampleUnitPassesAndItsPlantedBugFailsAtTheFirstDifferingInstruction) {
  for (const std::string& t : {std::string("exec:") + FP4SIM_REPLAY_DOT32_EXEC, std::string("plugin:") + FP4SIM_REPLAY_DOT32_PLUGIN}) {
    const Result r = replay("corners", t);
    EXPECT_EQ(r.code, 0) << t << r.out << r.err;
    EXPECT_NE(summary(r).find(" 14 pass, 0 fail, 0 error, "), std::string::npos) << r.out;
  }
  // By hand (trunc_boundary, F = 25): C = 2^-25 lies on the window's last place; the bug aligns C
  // one fractional bit short and truncates it to +0.
  for (const std::string& t :
       {std::string("exec:") + FP4SIM_REPLAY_DOT32_EXEC + " --plant-bug", std::string("plugin:") + FP4SIM_REPLAY_DOT32_PLUGIN_BUG}) {
    const Result r = replay("corners", t);
    EXPECT_EQ(r.code, 1) << t << r.out << r.err;
    EXPECT_EQ(r.out.rfind("FAIL  0103-mxf8f6f4-e2m1-trunc_boundary ", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("first differing instruction 0 of 1 of D[0, 0] in case 0103-mxf8f6f4-e2m1-trunc_boundary"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("mma_dot gives 33000000, the model 00000000"), std::string::npos) << r.out;
  }
}

// ---- plugin ----

TEST_F(ReplayExternal, BrokenPluginsAreOneLineErrors) {
  fp4sim::test::expect_failure(replay("corners", std::string("plugin:") + FP4SIM_REPLAY_PLUGIN_NO_DOT), 1,
                               "no symbol fp4sim_replay_dot (the ABI is fp4sim/replay_plugin.h)");
  fp4sim::test::expect_failure(replay("corners", std::string("plugin:") + FP4SIM_REPLAY_PLUGIN_ABI), 1,
                               "ABI version 2, fp4sim speaks version 1");
  fp4sim::test::expect_failure(replay("corners", "plugin:/nonexistent/lib.so"), 1,
                               "plugin /nonexistent/lib.so: cannot load: ");
  // The first case the plugin takes is corners' first mxf8f6f4 E2M1 case, nan_scale; D[0, 0] first.
  fp4sim::test::expect_failure(replay("corners", std::string("plugin:") + FP4SIM_REPLAY_PLUGIN_FAIL), 1,
                               "instruction 0 of 1 of D[0, 0] in case 0098-mxf8f6f4-e2m1-nan_scale (request 1): "
                               "fp4sim_replay_dot returned 7");
}

TEST_F(ReplayExternal, UsageErrors) {
  fp4sim::test::expect_failure(replay("corners", "exec:"), 1, "exec: no command given (exec:CMD)");
  fp4sim::test::expect_failure(replay("corners", "nosuch"), 2, "exec:CMD, plugin:PATH.so");
  fp4sim::test::expect_failure(replay("corners", "golden", "--timeout 5"), 2, "--timeout applies to exec: targets only");
}

}  // namespace
