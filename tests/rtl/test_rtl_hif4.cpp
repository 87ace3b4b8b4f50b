// hif4_pe against the golden `ascend-hif4` model, bit for bit: every S1P2 code pair in every lane
// with every level-bit combination, every E6M2 scale pair, directed corners, seeded random.
#include <gtest/gtest.h>

#include "rtl_check.hpp"

namespace {

using fp4sim::rtl::Unit;
using rtlcheck::Case;
using rtlcheck::Checker;
using rtlcheck::Rng;

// Scale word with E6M2 byte `e`, level-2 bits l8 (8 bits) and level-3 bits l16 (16 bits).
uint32_t word(uint32_t e, uint32_t l8, uint32_t l16) { return (e & 0xFFu) | ((l8 & 0xFFu) << 8) | (l16 << 16); }

// E6M2 exponent E - 48 of a code (code >> 2), for steering C.
int e6m2_exp(uint32_t w) { return static_cast<int>((w & 0xFFu) >> 2) - 48; }

// Every (a, b) S1P2 pair in every lane, with each operand's two level bits covering that lane in
// all four combinations (levels 0, 1 via E1_8, 1 via E1_16, 2), C from a small set.
TEST(RtlHif4, EveryS1p2PairInEveryLaneAndLevel) {
  Checker chk(Unit::Hif4Pe);
  const uint32_t cs[4] = {0x00000000u, 0x80000000u, 0x3F800000u, 0xC1200000u};
  uint32_t n = 0;
  for (int lane = 0; lane < 64; ++lane) {
    for (uint32_t p = 0; p < 256; ++p) {
      for (uint32_t lv = 0; lv < 16; lv += (lane % 4 == 0 ? 1 : 5)) {  // all 16 combos in every 4th lane
        Case c;
        c.a[lane] = static_cast<uint8_t>(p >> 4);
        c.b[lane] = static_cast<uint8_t>(p & 15u);
        const uint32_t l8 = 1u << (lane / 8), l16 = 1u << (lane / 4);
        c.sfa[0] = word(0xC0, (lv & 1) ? l8 : 0, (lv & 2) ? l16 : 0);  // E6M2 0xC0 = 2^0
        c.sfb[0] = word(0xC0, (lv & 4) ? l8 : 0, (lv & 8) ? l16 : 0);
        c.c = cs[n++ % 4];
        chk.add(c);
      }
    }
  }
  chk.expect_clean("hif4_pe every S1P2 pair x lane x level");
}

// Every (E6M2 A, E6M2 B) pair with random elements and level bits, C near the term.
TEST(RtlHif4, EveryE6m2Pair) {
  Checker chk(Unit::Hif4Pe);
  Rng rng(rtlcheck::seed_base() * 17 + 5);
  for (uint32_t ea = 0; ea < 256; ++ea) {
    for (uint32_t eb = 0; eb < 256; ++eb) {
      Case c;
      for (int k = 0; k < 64; ++k) {
        c.a[k] = static_cast<uint8_t>(rng.below(16));
        c.b[k] = static_cast<uint8_t>(rng.below(16));
      }
      c.sfa[0] = word(ea, rng.u32(), rng.u32() & 0xFFFFu);
      c.sfb[0] = word(eb, rng.u32(), rng.u32() & 0xFFFFu);
      c.c = rng.c_bits(e6m2_exp(ea) + e6m2_exp(eb) + 8);
      chk.add(c);
    }
  }
  chk.expect_clean("hif4_pe every E6M2 pair");
}

TEST(RtlHif4, DirectedCorners) {
  Checker chk(Unit::Hif4Pe);
  Rng rng(rtlcheck::seed_base() * 19 + 7);
  auto random_elems = [&](Case& c) {
    for (int k = 0; k < 64; ++k) {
      c.a[k] = static_cast<uint8_t>(rng.below(16));
      c.b[k] = static_cast<uint8_t>(rng.below(16));
    }
  };
  const uint32_t specials_c[] = {0x00000000u, 0x80000000u, 0x3F800000u, 0x7F800000u, 0xFF800000u,
                                 0x7FC00000u, 0xFFC00001u, 0x00000001u, 0x807FFFFFu, 0x7F7FFFFFu, 0xFF7FFFFFu};
  // 1. NaN E6M2 (0xFF) on either side, extreme E6M2 (0x00 = 2^-48, 0xFE = 49152), every special C.
  const uint32_t ext[] = {0x00, 0x01, 0xC0, 0xFD, 0xFE, 0xFF};
  for (uint32_t ea : ext) {
    for (uint32_t eb : ext) {
      for (uint32_t cv : specials_c) {
        for (int t = 0; t < 8; ++t) {
          Case c;
          random_elems(c);
          if (t == 0) {  // the largest term: every element 1.75 * 4 with both levels
            c.a.fill(0x7);
            c.b.fill(static_cast<uint8_t>(rng.below(2) ? 0xF : 0x7));
          }
          const uint32_t lvl = t < 2 ? 0xFFFFFFu : rng.u32();
          c.sfa[0] = word(ea, lvl, lvl >> 8);
          c.sfb[0] = word(eb, lvl, lvl >> 8);
          c.c = cv;
          chk.add(c);
        }
      }
    }
  }
  // 2. Exact cancellation of the group sum (-> the term is +0, C = -0 gives +0), and partial
  //    cancellation against C = -(term) +- a few ulps.
  for (int t = 0; t < 3000; ++t) {
    Case c;
    for (int k = 0; k < 64; k += 2) {
      const uint8_t x = static_cast<uint8_t>(rng.below(16)), y = static_cast<uint8_t>(rng.below(8));
      c.a[k] = x;
      c.b[k] = y;
      c.a[k + 1] = x;
      c.b[k + 1] = static_cast<uint8_t>(y | 8u);
    }
    // Lanes k and k+1 share their level bits (E1_16 covers 4 lanes), so the pairs cancel exactly.
    const uint32_t lvl = rng.u32();
    c.sfa[0] = word(rng.range(100, 200), lvl, lvl >> 8);
    c.sfb[0] = word(rng.range(100, 200), lvl >> 3, lvl >> 11);
    if (t % 3 == 2) c.a[rng.below(64)] = static_cast<uint8_t>(rng.below(16));  // residue
    const uint32_t cz[4] = {0x80000000u, 0x00000000u, 0x00000001u, 0x80000001u};
    c.c = cz[t % 4];
    chk.add(c);
  }
  // 3. C against the term at every exponent distance: term fixed, C = +-1.m * 2^e for e over the
  //    whole range where the RNE of C + term changes behaviour (far smaller to far larger).
  for (int e = -126; e <= 127; ++e) {
    for (int s = 0; s < 6; ++s) {
      Case c;
      random_elems(c);
      c.sfa[0] = word(0xC0, rng.u32(), rng.u32());
      c.sfb[0] = word(0xC0, rng.u32(), rng.u32());
      c.c = (s & 1 ? 0x80000000u : 0u) | (static_cast<uint32_t>(e + 127) << 23) |
            (s < 2 ? 0u : (s < 4 ? 0x7FFFFFu : (rng.u32() & 0x7FFFFFu)));
      chk.add(c);
    }
  }
  // 4. Ties: C = odd significand at an exponent where the term is exactly half an ulp of C
  //    (term = sum * 2^(EA+EB-104): one lane 1/4 * 1/4 = 2^-4 with E6M2 = 1.0 -> 2^-4).
  for (int e = -20; e <= 30; ++e) {
    for (uint32_t lsb = 0; lsb < 2; ++lsb) {
      for (uint32_t sign = 0; sign < 4; ++sign) {
        Case c;
        c.a[0] = static_cast<uint8_t>(1u | ((sign & 1) << 3));
        c.b[0] = 1;
        c.sfa[0] = word(0xC0, 0, 0);
        c.sfb[0] = word(0xC0, 0, 0);
        c.c = ((sign & 2) ? 0x80000000u : 0u) | (static_cast<uint32_t>(e + 127) << 23) | (0x2AAAAAu | lsb);
        chk.add(c);
      }
    }
  }
  // 5. Subnormal results: small E6M2 on both sides (terms near 2^-104) against subnormal C, and
  //    C subnormal with a zero group sum.
  for (int t = 0; t < 3000; ++t) {
    Case c;
    random_elems(c);
    if (t % 2) {
      for (int k = 0; k < 64; ++k) c.a[k] &= 0x9;
    }
    c.sfa[0] = word(rng.range(0, 12), rng.u32(), rng.u32());
    c.sfb[0] = word(rng.range(0, 12), rng.u32(), rng.u32());
    c.c = (rng.u32() & 0x80000000u) | (rng.u32() & (t % 3 ? 0x7FFFFFu : 0x01FFFFFFu));
    chk.add(c);
  }
  // 6. Overflow: the largest term (64 * 7 * 7 = 3136 times 49152^2, about 7.6e12) cannot overflow
  //    on its own, so C near +-FLT_MAX plus a large term of the same sign.
  for (int t = 0; t < 2000; ++t) {
    Case c;
    const uint8_t s = static_cast<uint8_t>(rng.below(2) << 3);
    for (int k = 0; k < 64; ++k) {
      c.a[k] = static_cast<uint8_t>(0x7 | s);
      c.b[k] = static_cast<uint8_t>(rng.range(5, 7));
    }
    c.sfa[0] = word(0xFE, 0xFF, 0xFFFF);
    c.sfb[0] = word(0xFE - rng.below(4), rng.u32(), rng.u32());
    c.c = (s ? 0x80000000u : 0u) | (0x7F7FFFFFu - rng.below(1u << 14));
    chk.add(c);
  }
  chk.expect_clean("hif4_pe directed corners");
}

TEST(RtlHif4, SeededRandom) {
  Checker chk(Unit::Hif4Pe);
  Rng rng(rtlcheck::seed_base() * 1000033 + 11);
  const size_t n = rtlcheck::random_count();
  for (size_t t = 0; t < n; ++t) {
    Case c;
    const uint32_t emode = rng.below(3);
    for (int k = 0; k < 64; ++k) {
      uint8_t x = static_cast<uint8_t>(rng.below(16)), y = static_cast<uint8_t>(rng.below(16));
      if (emode == 1 && rng.chance(3, 4)) x &= 0x8;
      if (emode == 2) y &= 7;
      c.a[k] = x;
      c.b[k] = y;
    }
    const uint32_t lmode = rng.below(4);  // level bits: random, none, all, sparse
    auto lv = [&]() -> uint32_t {
      switch (lmode) {
        case 1: return 0u;
        case 2: return 0xFFFFFFu;
        case 3: return rng.u32() & rng.u32() & rng.u32();
        default: return rng.u32();
      }
    };
    const uint32_t la = lv(), lb = lv();
    const uint32_t ea = rng.chance(1, 2) ? rng.below(256) : static_cast<uint32_t>(rng.range(150, 220));
    const uint32_t eb = rng.chance(1, 2) ? rng.below(256) : static_cast<uint32_t>(rng.range(150, 220));
    c.sfa[0] = word(ea, la, la >> 8);
    c.sfb[0] = word(eb, lb, lb >> 8);
    c.c = rng.c_bits(e6m2_exp(ea) + e6m2_exp(eb) + 6);
    chk.add(c);
  }
  chk.expect_clean("hif4_pe seeded random");
}

// Derived by hand: every element 0.25 * 0.25 with unit scales, no levels: 64 / 16 = 4.
TEST(RtlHif4, ValuesDerivedByHand) {
  fp4sim::rtl::Driver d(Unit::Hif4Pe);
  std::array<uint8_t, 64> a{}, b{};
  a.fill(1);
  b.fill(1);
  const uint32_t one = 0xC0;  // E6M2: E = 48, M = 0 -> 1.0
  EXPECT_EQ(d.dot(a.data(), b.data(), &one, &one, 0u), rtlcheck::fb(4.0f));
  // All level bits set on A: every element * 4 -> 16; plus C = 0.5.
  const uint32_t lv = 0xFFFFFFC0u;
  EXPECT_EQ(d.dot(a.data(), b.data(), &lv, &one, rtlcheck::fb(0.5f)), rtlcheck::fb(16.5f));
  // E6M2 0xC1 = 1.25: 4 * 1.25 = 5.
  const uint32_t s125 = 0xC1;
  EXPECT_EQ(d.dot(a.data(), b.data(), &s125, &one, 0u), rtlcheck::fb(5.0f));
  // NaN E6M2.
  const uint32_t nan = 0xFF;
  EXPECT_EQ(d.dot(a.data(), b.data(), &nan, &one, 0u), 0x7FFFFFFFu);
  // One RN: a single lane 1.75 * 1.75 with level 2 on both sides (x4 x4) = 49; C = 2^24 + 2.
  // 2^24 + 51 lies halfway between 2^24 + 50 and 2^24 + 52 (FP32 step 2 there); RNE picks the
  // even significand 2^23 + 26, i.e. 2^24 + 52 = 16777268.
  std::array<uint8_t, 64> a1{}, b1{};
  a1[0] = 7;
  b1[0] = 7;
  const uint32_t l2 = 0x000101C0u;  // E1_8 bit 0 and E1_16 bit 0 set: lane 0 level 2
  EXPECT_EQ(d.dot(a1.data(), b1.data(), &l2, &l2, rtlcheck::fb(16777218.0f)), rtlcheck::fb(16777268.0f));
}

}  // namespace
