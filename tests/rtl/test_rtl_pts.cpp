// nvfp4_pts_mul (NVFP4's per-tensor-scale multiply, D = RN(alpha * acc)) against golden's epilogue
// arithmetic: one FP32 multiply under round-to-nearest-even with subnormals kept, NaN canonical
// (golden/src/mma.cpp `alpha * acc`, then canonical()). Exhaustive over every pair of a set of
// special and boundary encodings, then seeded random bit patterns, streamed one per cycle with
// random back-pressure (the shell must keep order and lose nothing).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <deque>
#include <utility>
#include <memory>
#include <vector>

#include "rtl_check.hpp"
#include "verilated.h"
#include "Vnvfp4_pts_mul.h"

namespace {

// The reference: the host's IEEE single multiply (SSE, RNE, no flush to zero) and golden's NaN.
uint32_t ref_mul(uint32_t acc, uint32_t alpha) {
  const float p = std::bit_cast<float>(acc) * std::bit_cast<float>(alpha);
  return std::isnan(p) ? 0x7FFFFFFFu : std::bit_cast<uint32_t>(p);
}

struct Case {
  uint32_t acc, alpha;
};

// Streams the cases through the unit with back-pressure on the output about a third of the time
// and idle input cycles now and then; returns the number of mismatches.
int run(const std::vector<Case>& cases, uint64_t seed) {
  auto ctx = std::make_unique<VerilatedContext>();
  ctx->randReset(2);
  ctx->randSeed(static_cast<int>(seed));
  auto m = std::make_unique<Vnvfp4_pts_mul>(ctx.get(), "dut");
  rtlcheck::Rng rng(seed);
  auto tick = [&] {
    m->clk_i = 0;
    m->eval();
    m->clk_i = 1;
    m->eval();
  };
  m->in_valid_i = 0;
  m->out_ready_i = 0;
  m->rst_ni = 0;
  tick();
  tick();
  m->rst_ni = 1;
  std::deque<std::pair<size_t, uint32_t>> want;  // case index, expected D
  size_t next = 0;
  int bad = 0;
  while (next < cases.size() || !want.empty()) {
    m->clk_i = 0;
    const bool offer = next < cases.size() && rng.range(0, 7) != 0;
    m->in_valid_i = offer;
    if (offer) {
      m->acc_i = cases[next].acc;
      m->alpha_i = cases[next].alpha;
    }
    m->out_ready_i = rng.range(0, 2) != 0;
    m->eval();
    const bool took = offer && m->in_ready_o;
    if (m->out_valid_o && m->out_ready_i) {
      EXPECT_FALSE(want.empty()) << "a result without a transaction";
      if (want.empty()) return bad + 1;
      const auto [i, d] = want.front();
      if (m->d_o != d && ++bad <= 5) {
        ADD_FAILURE() << std::hex << "acc " << cases[i].acc << " alpha " << cases[i].alpha << ": rtl " << m->d_o
                      << " ref " << d;
      }
      want.pop_front();
    }
    if (took) {
      want.emplace_back(next, ref_mul(cases[next].acc, cases[next].alpha));
      ++next;
    }
    m->clk_i = 1;
    m->eval();
  }
  m->final();
  return bad;
}

TEST(RtlPts, EveryPairOfBoundaryEncodings) {
  // Zeros, the subnormal extremes, the normal extremes, 1 and neighbours, the rounding-sensitive
  // patterns (odd significands, halfway products), infinities and NaNs, in both signs.
  const std::vector<uint32_t> mags = {0x00000000u, 0x00000001u, 0x00000002u, 0x00000003u, 0x007FFFFFu,
                                      0x00400000u, 0x00800000u, 0x00800001u, 0x00FFFFFFu, 0x01000000u,
                                      0x0C000001u, 0x33800000u, 0x34000000u, 0x3F7FFFFFu, 0x3F800000u,
                                      0x3F800001u, 0x3FC00000u, 0x3FFFFFFFu, 0x40000000u, 0x4B7FFFFFu,
                                      0x5F000000u, 0x7E800000u, 0x7F000000u, 0x7F7FFFFFu, 0x7F800000u,
                                      0x7FC00000u, 0x7F800001u, 0x3FAAAAABu, 0x3EAAAAABu, 0x00555555u};
  std::vector<Case> cases;
  for (uint32_t a : mags)
    for (uint32_t b : mags)
      for (uint32_t s = 0; s < 4; ++s) cases.push_back({a | ((s & 1u) << 31), b | ((s >> 1) << 31)});
  EXPECT_EQ(run(cases, 1), 0);
}

TEST(RtlPts, SeededRandom) {
  rtlcheck::Rng rng(20261201);
  std::vector<Case> cases;
  for (int i = 0; i < 200000; ++i) {
    // Half the cases with exponents near each other's negation, where products land around 1,
    // underflow into subnormals or overflow: the rounding corners.
    uint32_t a = rng.u32(), b = rng.u32();
    if (i & 1) b = (b & 0x807FFFFFu) | ((static_cast<uint32_t>(254 - ((a >> 23) & 0xFF) + rng.range(-30, 30)) & 0xFFu) << 23);
    cases.push_back({a, b});
  }
  EXPECT_EQ(run(cases, 7), 0);
}

}  // namespace
