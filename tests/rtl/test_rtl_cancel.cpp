// Near-cancellation at the PE's one rounding point, against an oracle independent of golden: for
// the units that round C + term once (hif4_pe: ascend-hif4, a 22-bit term; nvfp4_pe64: one RN of C
// plus the exact 49-bit-frame sum of four scaled groups), the test computes the term exactly in
// long double from the decoded operands, sets C = -RN32(term) * 2^e +- k ulp (e = 0..3, k = 0..3),
// and requires golden == RN32(C + term) computed exactly (checked: the long-double sum has no
// rounding error), and the RTL == golden (Checker). Many lanes are nonzero in every case, so the
// lanes' signs interact in the tree and the term's low bits matter to the result.
#include <gtest/gtest.h>

#include <cmath>

#include "fp4sim/quant.hpp"
#include "rtl_check.hpp"

namespace {

using fp4sim::rtl::Unit;
using rtlcheck::Case;
using rtlcheck::Checker;
using rtlcheck::Rng;

using LD = long double;  // 64-bit significand: every sum below is exact (checked)

// The exact term of one instruction (C excluded).
LD hif4_term(const Case& c) {
  LD sum = 0;
  for (int k = 0; k < 64; ++k)
    sum += std::ldexp(static_cast<LD>(fp4sim::decode(fp4sim::kS1P2, c.a[k])) *
                          static_cast<LD>(fp4sim::decode(fp4sim::kS1P2, c.b[k])),
                      fp4sim::hif4_level(c.sfa[0], k) + fp4sim::hif4_level(c.sfb[0], k));
  return sum * static_cast<LD>(fp4sim::decode(fp4sim::kE6M2, fp4sim::hif4_e6m2(c.sfa[0]))) *
         static_cast<LD>(fp4sim::decode(fp4sim::kE6M2, fp4sim::hif4_e6m2(c.sfb[0])));
}
LD nvfp4_term(const Case& c) {
  LD sum = 0;
  for (int g = 0; g < 4; ++g) {
    LD group = 0;
    for (int k = 16 * g; k < 16 * g + 16; ++k)
      group += static_cast<LD>(fp4sim::decode(fp4sim::kE2M1, c.a[k])) *
               static_cast<LD>(fp4sim::decode(fp4sim::kE2M1, c.b[k]));
    sum += group * static_cast<LD>(fp4sim::decode(fp4sim::kUE4M3, c.sfa[g])) *
           static_cast<LD>(fp4sim::decode(fp4sim::kUE4M3, c.sfb[g]));
  }
  return sum;
}

// Queues the cancellation cases around one term; returns how many.
size_t cancel_cases(Checker& chk, Case c, LD term) {
  const float t32 = static_cast<float>(term);
  if (term == 0 || !std::isfinite(t32) || std::fabs(t32) < 1e-30f) return 0;
  size_t n = 0;
  for (int e = 0; e <= 3; ++e) {
    const uint32_t base = rtlcheck::fb(-std::ldexp(t32, e));
    for (int k = -3; k <= 3; ++k) {
      c.c = base + static_cast<uint32_t>(k);  // +-k ulp (same binade for |k| <= 3 here)
      const LD cl = static_cast<LD>(rtlcheck::bf(c.c));
      const LD exact = cl + term;
      EXPECT_EQ(exact - cl, term) << "the oracle's sum is not exact";
      const uint32_t want = rtlcheck::fb(static_cast<float>(exact));
      const auto& cfg = chk.config();
      const uint32_t gold = fp4sim::mma_dot(cfg, c.a.data(), c.b.data(), c.sfa.data(), c.sfb.data(), c.c);
      EXPECT_EQ(gold, want) << "golden vs exact oracle, e = " << e << ", k = " << k << ", term " << static_cast<double>(term);
      chk.add(c);
      ++n;
    }
  }
  return n;
}

TEST(RtlCancel, Hif4NearCancellation22BitTerm) {
  Checker chk(Unit::Hif4Pe);
  Rng rng(rtlcheck::seed_base() * 41 + 3);
  size_t n = 0;
  for (int i = 0; i < 3000; ++i) {
    Case c;
    const int live = rng.range(8, 64);  // many lanes nonzero, mixed signs
    for (int k = 0; k < live; ++k) {
      c.a[k] = static_cast<uint8_t>(rng.range(1, 15));
      c.b[k] = static_cast<uint8_t>(rng.range(1, 15));
    }
    c.sfa[0] = static_cast<uint32_t>(rng.range(0x80, 0xFE)) | (rng.u32() & 0xFFFFFF00u);
    c.sfb[0] = static_cast<uint32_t>(rng.range(0x80, 0xFE)) | (rng.u32() & 0xFFFFFF00u);
    n += cancel_cases(chk, c, hif4_term(c));
  }
  EXPECT_GT(n, 50000u);
  chk.expect_clean("hif4_pe near-cancellation");
}

TEST(RtlCancel, Nvfp4Pe64NearCancellationWideTerm) {
  Checker chk(Unit::Nvfp4Pe64);
  Rng rng(rtlcheck::seed_base() * 43 + 7);
  size_t n = 0, wide = 0;
  for (int i = 0; i < 3000; ++i) {
    Case c;
    for (int k = 0; k < 64; ++k) {
      if (rng.chance(3, 4)) {
        c.a[k] = static_cast<uint8_t>(rng.range(1, 15));
        c.b[k] = static_cast<uint8_t>(rng.range(1, 15));
      }
    }
    // Group scales far apart (up to ~2^25 between groups): the exact sum spans up to ~49 bits.
    for (int g = 0; g < 4; ++g) {
      c.sfa[g] = static_cast<uint32_t>(rng.range(0x01, 0x7E));
      c.sfb[g] = static_cast<uint32_t>(rng.range(0x01, 0x7E));
    }
    const LD term = nvfp4_term(c);
    // Bits the term spans: wider than FP32's 24 means the cancellation exposes its low bits.
    if (term != 0 && std::fabs(term - static_cast<LD>(static_cast<float>(term))) > 0) ++wide;
    n += cancel_cases(chk, c, term);
  }
  EXPECT_GT(n, 50000u);
  EXPECT_GT(wide, 1000u);  // most terms are not representable in FP32
  chk.expect_clean("nvfp4_pe64 near-cancellation");
}

}  // namespace
