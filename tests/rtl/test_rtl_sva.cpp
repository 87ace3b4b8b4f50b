// The SVA checks of the pipeline stages (fp4sim_pipe_reg, fp4sim_pipe_chain under FP4SIM_SVA) are
// live in the test models and fire. Two Verilated copies of fp4sim_pipe_chain (Width 8, Depth 2,
// the flags of the test-only models, which the depth sets of test_rtl_depths.cpp share):
// Vsva_chain as written, and Vsva_chain_planted whose stages carry a planted bug
// (rtl/CMakeLists.txt edits a copy of fp4sim_pipe_reg.sv: valid_q follows valid_i even while the
// output is stalled, so a stalled stage drops its transaction when nothing new arrives). The same
// random handshake must pass the first and make the second fail a check.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "rtl_check.hpp"
#include "verilated.h"
#include "Vsva_chain.h"
#include "Vsva_chain_planted.h"

namespace {

struct Outcome {
  bool failed = false;   // a check failed
  uint64_t cycle = 0;    // in this cycle (or the cycles run)
  uint32_t out = 0;      // transactions out, all in order
  bool in_order = true;  // every output was the next tag
  std::string log;       // what Verilator printed
};

// Random valid / ready (1/2 and 1/3 stalled) for up to `cycles` cycles, data = 8-bit tags in order;
// stops at the first failed check.
template <class V>
Outcome run_chain(uint64_t cycles) {
  Outcome r;
  auto ctx = std::make_unique<VerilatedContext>();
  ctx->randReset(2);
  ctx->fatalOnError(false);
  Verilated::threadContextp(ctx.get());  // the model registers its scopes there
  auto m = std::make_unique<V>(ctx.get(), "dut");
  rtlcheck::Rng rng(17);
  uint32_t in = 0;
  auto tick = [&] {
    m->clk_i = 0;
    m->eval();
    m->clk_i = 1;
    m->eval();
  };
  ::testing::internal::CaptureStdout();  // Verilator prints a failed check on stdout
  m->valid_i = 0;
  m->ready_i = 0;
  m->rst_ni = 0;
  tick();
  tick();
  m->rst_ni = 1;
  for (r.cycle = 0; r.cycle < cycles && !ctx->gotError(); ++r.cycle) {
    const bool valid = rng.chance(1, 2), ready = !rng.chance(1, 3);
    m->valid_i = valid;
    m->ready_i = ready;
    m->data_i = static_cast<uint8_t>(in);
    m->clk_i = 0;
    m->eval();
    const bool fire_in = valid && m->ready_o;
    if (m->valid_o && ready) {
      r.in_order = r.in_order && m->data_o == static_cast<uint8_t>(r.out);
      ++r.out;
    }
    m->clk_i = 1;
    m->eval();
    in += fire_in;
  }
  r.failed = ctx->gotError();
  m->final();
  r.log = ::testing::internal::GetCapturedStdout();
  // As the driver does (rtl_driver.cpp, release_model).
  Verilated::threadContextp(ctx.get());
  m.reset();
  ctx.reset();
  Verilated::threadContextp(nullptr);
  Verilated::lastContextp(nullptr);
  return r;
}

TEST(RtlSva, ChainAsWrittenPassesItsChecks) {
  const Outcome r = run_chain<Vsva_chain>(20000);
  EXPECT_FALSE(r.failed) << "a check failed in cycle " << r.cycle << ":\n" << r.log;
  EXPECT_TRUE(r.in_order);
  EXPECT_GT(r.out, 5000u);
}

TEST(RtlSva, PlantedStallBugFailsAHoldCheck) {
  const Outcome r = run_chain<Vsva_chain_planted>(20000);
  ASSERT_TRUE(r.failed) << "the planted bug passed every check in " << r.cycle << " cycles";
  // Back-pressure with nothing new arriving happens within a few cycles of random traffic.
  EXPECT_LT(r.cycle, 100u);
  EXPECT_NE(r.log.find("Assertion failed"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("a_hold"), std::string::npos) << "expected the back-pressure check to fire:\n" << r.log;
  std::printf("[ rtl      ] planted bug caught in cycle %llu: %s", static_cast<unsigned long long>(r.cycle),
              r.log.c_str());
}

}  // namespace
