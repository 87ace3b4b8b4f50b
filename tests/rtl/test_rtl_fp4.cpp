// The E2M1 units against the golden models, bit for bit:
//   bs_dot_k64 (four scale / block variants)  vs  blackwell  (kinds mxf4nvf4 / mxf4)
//   nvfp4_pe64                                vs  exact      (kind mxf4nvf4, UE4M3 / 16)
// Exhaustive over every E2M1 code pair in every lane and every scale-code pair, directed corner
// classes, then seeded random cases.
#include <gtest/gtest.h>

#include <string>

#include "rtl_check.hpp"

namespace {

using fp4sim::rtl::Unit;
using rtlcheck::Case;
using rtlcheck::Checker;
using rtlcheck::Rng;

struct Fp4Unit {
  Unit unit;
  const fp4sim::ElemFormat* scale;
  int nsc;       // scales per operand per instruction
  uint32_t one;  // scale code of 1.0
};

Fp4Unit fp4_unit(Unit u) {
  const auto& i = fp4sim::rtl::unit_info(u);
  const bool ue4m3 = i.scale->name == fp4sim::kUE4M3.name;
  return {u, i.scale, 64 / i.block, ue4m3 ? 0x38u : 0x7Fu};  // UE4M3 1.0 = 0.0111.000; UE8M0 2^0 = 127
}

class RtlFp4 : public ::testing::TestWithParam<Unit> {
 protected:
  Fp4Unit u() const { return fp4_unit(GetParam()); }
  std::string name() const { return std::string(fp4sim::rtl::unit_info(GetParam()).name); }
  void set_scales(Case& c, uint32_t sa, uint32_t sb) const {
    for (int j = 0; j < u().nsc; ++j) {
      c.sfa[j] = sa;
      c.sfb[j] = sb;
    }
  }
  // Exponent where the dot product's terms lie for these scales (for steering C).
  int center(const Case& c) const {
    return rtlcheck::scale_exp(*u().scale, c.sfa[0]) + rtlcheck::scale_exp(*u().scale, c.sfb[0]) + 4;
  }
};

// Every (a, b) code pair in every lane, alone, with unit scales and C from {+0, -0, 1.0, -3.5};
// then every pair replicated over all 64 lanes (sum = 64 products).
TEST_P(RtlFp4, EveryE2m1PairInEveryLane) {
  Checker chk(GetParam());
  const uint32_t cs[4] = {0x00000000u, 0x80000000u, 0x3F800000u, 0xC0600000u};
  for (int lane = 0; lane < 64; ++lane) {
    for (uint32_t p = 0; p < 256; ++p) {
      Case c;
      c.a[lane] = static_cast<uint8_t>(p >> 4);
      c.b[lane] = static_cast<uint8_t>(p & 15u);
      set_scales(c, u().one, u().one);
      c.c = cs[(p + static_cast<uint32_t>(lane)) % 4];
      chk.add(c);
    }
  }
  for (uint32_t p = 0; p < 256; ++p) {
    for (uint32_t cv : cs) {
      Case c;
      c.a.fill(static_cast<uint8_t>(p >> 4));
      c.b.fill(static_cast<uint8_t>(p & 15u));
      set_scales(c, u().one, u().one);
      c.c = cv;
      chk.add(c);
    }
  }
  chk.expect_clean((name() + " every E2M1 pair").c_str());
}

// Every (scale A, scale B) code pair: once with all scales of the instruction equal, once with
// only one scale slot set and the others random; random elements, C near the terms.
TEST_P(RtlFp4, EveryScaleCodePair) {
  Checker chk(GetParam());
  Rng rng(rtlcheck::seed_base() * 31 + static_cast<uint64_t>(GetParam()));
  for (uint32_t sa = 0; sa < 256; ++sa) {
    for (uint32_t sb = 0; sb < 256; ++sb) {
      for (int variant = 0; variant < 2; ++variant) {
        Case c;
        for (int k = 0; k < 64; ++k) {
          c.a[k] = static_cast<uint8_t>(rng.below(16));
          c.b[k] = static_cast<uint8_t>(rng.below(16));
        }
        if (variant == 0) {
          set_scales(c, sa, sb);
        } else {
          for (int j = 0; j < u().nsc; ++j) {
            c.sfa[j] = rng.below(256);
            c.sfb[j] = rng.below(256);
          }
          const int slot = static_cast<int>((sa + sb) % static_cast<uint32_t>(u().nsc));
          c.sfa[slot] = sa;
          c.sfb[slot] = sb;
        }
        c.c = rng.c_bits(rtlcheck::scale_exp(*u().scale, sa) + rtlcheck::scale_exp(*u().scale, sb) + 4);
        chk.add(c);
      }
    }
  }
  chk.expect_clean((name() + " every scale pair").c_str());
}

TEST_P(RtlFp4, DirectedCorners) {
  Checker chk(GetParam());
  Rng rng(rtlcheck::seed_base() * 77 + static_cast<uint64_t>(GetParam()));
  const bool ue4m3 = u().scale->name == fp4sim::kUE4M3.name;
  const int nsc = u().nsc;
  auto random_elems = [&](Case& c) {
    for (int k = 0; k < 64; ++k) {
      c.a[k] = static_cast<uint8_t>(rng.below(16));
      c.b[k] = static_cast<uint8_t>(rng.below(16));
    }
  };
  const uint32_t specials_c[] = {0x00000000u, 0x80000000u, 0x3F800000u, 0x7F800000u, 0xFF800000u,
                                 0x7FC00000u, 0xFF800001u, 0x00000001u, 0x807FFFFFu, 0x7F7FFFFFu};

  // 1. NaN scales in every slot and side (UE4M3: 0x7F and 0xFF, the sign is ignored; UE8M0 0xFF),
  //    with every special C.
  const uint32_t nans[2] = {ue4m3 ? 0x7Fu : 0xFFu, 0xFFu};
  for (int j = 0; j < nsc; ++j) {
    for (int side = 0; side < 2; ++side) {
      for (uint32_t nan : nans) {
        for (uint32_t cv : specials_c) {
          Case c;
          random_elems(c);
          set_scales(c, u().one, u().one);
          (side ? c.sfb : c.sfa)[j] = nan;
          c.c = cv;
          chk.add(c);
        }
      }
    }
  }
  // 2. Extreme scales in every combination over the slots: zero (+ and "-" 0x80 for UE4M3),
  //    smallest subnormal / smallest, one, largest.
  const std::vector<uint32_t> ext = ue4m3 ? std::vector<uint32_t>{0x00, 0x80, 0x01, 0x38, 0x7E, 0xFE}
                                          : std::vector<uint32_t>{0x00, 0x01, 0x7F, 0xFD, 0xFE};
  const size_t ne = ext.size();
  size_t combos = 1;
  for (int j = 0; j < 2 * nsc; ++j) combos *= ne;
  for (size_t m = 0; m < combos; m += (combos > 20000 ? 7 : 1)) {
    Case c;
    random_elems(c);
    size_t r = m;
    for (int j = 0; j < nsc; ++j) {
      c.sfa[j] = ext[r % ne];
      r /= ne;
      c.sfb[j] = ext[r % ne];
      r /= ne;
    }
    c.c = specials_c[m % 10];
    chk.add(c);
  }
  // 3. C dominating or at the truncation boundary: all products 6 * 6 (group sums 16 * 36) and
  //    C = +-1.xxx * 2^e for every e from -30 to 70 around the terms (scale 1).
  for (int e = -30; e <= 70; ++e) {
    for (int s = 0; s < 4; ++s) {
      Case c;
      c.a.fill(0x7);
      c.b.fill(s & 1 ? 0xF : 0x7);
      set_scales(c, u().one, u().one);
      c.c = (s & 2 ? 0x80000000u : 0u) | (static_cast<uint32_t>(e + 127) << 23) | (rng.u32() & 0x7FFFFFu);
      chk.add(c);
    }
  }
  // 4. Cancellation: lane pairs (x*y) + (x*-y) = 0 in every group, plus partial cancellation
  //    against C = -(sum), and C = +-0 / tiny.
  for (int t = 0; t < 2000; ++t) {
    Case c;
    for (int k = 0; k < 64; k += 2) {
      const uint8_t x = static_cast<uint8_t>(rng.below(16)), y = static_cast<uint8_t>(rng.below(8));
      c.a[k] = x;
      c.b[k] = y;
      c.a[k + 1] = x;
      c.b[k + 1] = static_cast<uint8_t>(y | 8u);
    }
    if (t % 4 == 3) c.a[rng.below(64)] = static_cast<uint8_t>(rng.below(16));  // leave a residue
    for (int j = 0; j < nsc; ++j) {
      c.sfa[j] = ue4m3 ? rng.range(0x01, 0x7E) : rng.range(100, 154);
      c.sfb[j] = ue4m3 ? rng.range(0x01, 0x7E) : rng.range(100, 154);
    }
    const uint32_t cz[4] = {0x00000000u, 0x80000000u, 0x00000001u, 0x80000003u};
    c.c = cz[t % 4];
    chk.add(c);
  }
  // 5. Truncation boundaries between groups: group 0 at scale exponent E, the others at E - d with
  //    d around the 35 fraction bits (UE8M0 reaches any d; UE4M3 exponents span -9..8 per scale).
  for (int d = 0; d <= 48; ++d) {
    for (int t = 0; t < 40; ++t) {
      Case c;
      random_elems(c);
      if (ue4m3) {
        // 0x7E = 448 (2^8 * 1.75), 0x08 = 2^-6: product exponents 16 vs 16 - d.
        c.sfa[0] = 0x7E;
        c.sfb[0] = 0x7E;
        for (int j = 1; j < nsc; ++j) {
          const int ea = std::max(-6, 8 - d / 2), eb = std::max(-6, 8 - (d - d / 2));
          c.sfa[j] = static_cast<uint32_t>((ea + 7) << 3) | rng.below(8);
          c.sfb[j] = static_cast<uint32_t>((eb + 7) << 3) | rng.below(8);
        }
      } else {
        c.sfa[0] = 140;
        c.sfb[0] = 140;
        for (int j = 1; j < nsc; ++j) {
          c.sfa[j] = static_cast<uint32_t>(140 - d / 2 - static_cast<int>(rng.below(2)));
          c.sfb[j] = static_cast<uint32_t>(140 - (d - d / 2));
        }
      }
      c.c = rng.c_bits(center(c) - d);
      chk.add(c);
    }
  }
  // 6. Subnormal and underflowing results: tiny UE8M0 scales put the terms around 2^-126..2^-160;
  //    for UE4M3 the terms cannot get that small, so C subnormal with zero or tiny products.
  for (int t = 0; t < 4000; ++t) {
    Case c;
    random_elems(c);
    if (t % 3 == 0) {
      for (int k = 0; k < 64; ++k) c.a[k] &= 0x9;  // many zeros and 0.5s
    }
    for (int j = 0; j < nsc; ++j) {
      c.sfa[j] = ue4m3 ? rng.range(0x00, 0x09) : rng.range(0, 20);
      c.sfb[j] = ue4m3 ? rng.range(0x00, 0x09) : rng.range(90, 120);
    }
    c.c = (rng.u32() & 0x80000000u) | (rng.chance(1, 2) ? (rng.u32() & 0x7FFFFFu) : (rng.u32() & 0x00FFFFFFu));
    chk.add(c);
  }
  // 7. Overflow: largest scales and elements (UE8M0: 6 * 6 * 16 * 2^254 -> Inf; UE4M3 stays finite)
  //    and C near FLT_MAX with terms pushing past it.
  for (int t = 0; t < 2000; ++t) {
    Case c;
    random_elems(c);
    if (t % 2) {
      c.a.fill(static_cast<uint8_t>(0x7 | (rng.below(2) << 3)));
      c.b.fill(0x7);
    }
    for (int j = 0; j < nsc; ++j) {
      c.sfa[j] = ue4m3 ? 0x7E - rng.below(3) : 0xFE - rng.below(3);
      c.sfb[j] = ue4m3 ? 0x7E - rng.below(3) : 0xFE - rng.below(3);
    }
    c.c = (rng.u32() & 0x80000000u) | (0x7F7FFFFFu - rng.below(1u << 20));
    chk.add(c);
  }
  // 8. Zero results and signed zeros: every product zero (a = +-0 codes, or a zero scale), C = +-0.
  for (int t = 0; t < 512; ++t) {
    Case c;
    for (int k = 0; k < 64; ++k) {
      c.a[k] = static_cast<uint8_t>((t & 1) ? 0x8 : (rng.below(2) << 3));
      c.b[k] = static_cast<uint8_t>(t & 2 ? rng.below(8) : rng.below(16));
    }
    set_scales(c, (t & 4) && ue4m3 ? 0x80u : u().one, u().one);
    c.c = (t & 8) ? 0x80000000u : 0u;
    chk.add(c);
  }
  chk.expect_clean((name() + " directed corners").c_str());
}

// Seeded random: element patterns (uniform, sparse, one sign), scales (uniform codes, or clustered
// so the groups overlap inside the alignment window), C steered near the terms.
TEST_P(RtlFp4, SeededRandom) {
  Checker chk(GetParam());
  Rng rng(rtlcheck::seed_base() * 1000003 + static_cast<uint64_t>(GetParam()));
  const bool ue4m3 = u().scale->name == fp4sim::kUE4M3.name;
  const size_t n = rtlcheck::random_count();
  for (size_t t = 0; t < n; ++t) {
    Case c;
    const uint32_t emode = rng.below(4);
    const uint8_t sign = static_cast<uint8_t>(rng.below(2) << 3);
    for (int k = 0; k < 64; ++k) {
      uint8_t x = static_cast<uint8_t>(rng.below(16)), y = static_cast<uint8_t>(rng.below(16));
      if (emode == 1 && rng.chance(3, 4)) x &= 0x8;                 // sparse
      if (emode == 2) {                                             // one sign: no cancellation
        x = static_cast<uint8_t>((x & 7) | sign);
        y &= 7;
      }
      c.a[k] = x;
      c.b[k] = y;
    }
    const uint32_t smode = rng.below(3);
    const uint32_t base = rng.below(256);
    for (int j = 0; j < u().nsc; ++j) {
      if (smode == 0) {  // any code
        c.sfa[j] = rng.below(256);
        c.sfb[j] = rng.below(256);
      } else {  // clustered around one code (within +-24 codes; UE4M3: 3 binades)
        const int spread = smode == 1 ? 8 : 24;
        c.sfa[j] = static_cast<uint32_t>(std::clamp(static_cast<int>(base) + rng.range(-spread, spread), 0, 255));
        c.sfb[j] = static_cast<uint32_t>(std::clamp(static_cast<int>(base ^ 0x40) + rng.range(-spread, spread), 0, 255));
        if (!ue4m3 && c.sfa[j] == 0xFF && rng.chance(7, 8)) c.sfa[j] = 0xFE;  // keep most UE8M0 non-NaN
      }
    }
    c.c = rng.c_bits(center(c));
    chk.add(c);
  }
  chk.expect_clean((name() + " seeded random").c_str());
}

INSTANTIATE_TEST_SUITE_P(Units, RtlFp4,
                         ::testing::Values(Unit::BsDotK64Ue4m3B16, Unit::BsDotK64Ue8m0B32, Unit::BsDotK64Ue8m0B16,
                                           Unit::BsDotK64Ue4m3B32, Unit::Nvfp4Pe64),
                         [](const ::testing::TestParamInfo<Unit>& i) {
                           return std::string(fp4sim::rtl::unit_info(i.param).name);
                         });

// A few results derived by hand, independent of the golden models.
TEST(RtlFp4Hand, ValuesDerivedByHand) {
  using rtlcheck::bf;
  using rtlcheck::fb;
  const uint32_t s1[4] = {0x38, 0x38, 0x38, 0x38};  // UE4M3 1.0
  std::array<uint8_t, 64> a{}, b{};
  a.fill(0x2);  // 1.0
  b.fill(0x7);  // 6.0
  for (Unit u : {Unit::BsDotK64Ue4m3B16, Unit::Nvfp4Pe64}) {
    fp4sim::rtl::Driver d(u);
    // 64 * (1 * 6) + 0.5 = 384.5, exact in FP32.
    EXPECT_EQ(d.dot(a.data(), b.data(), s1, s1, fb(0.5f)), fb(384.5f));
    // A NaN scale (0x7F; 0xFF with the ignored sign bit) gives the canonical NaN.
    const uint32_t snan[4] = {0x38, 0xFF, 0x38, 0x38};
    EXPECT_EQ(d.dot(a.data(), b.data(), snan, s1, fb(1.0f)), 0x7FFFFFFFu);
    // C = -Inf passes through.
    EXPECT_EQ(d.dot(a.data(), b.data(), s1, s1, 0xFF800000u), 0xFF800000u);
  }
  // Blackwell: C = 2^30 and products summing to 384: the terms are aligned to 2^(30-35), where
  // 384 is exact; 2^30 + 384 needs bits 30..7 (24 bits), so it is representable: 1073742208.
  {
    fp4sim::rtl::Driver d(Unit::BsDotK64Ue4m3B16);
    EXPECT_EQ(d.dot(a.data(), b.data(), s1, s1, fb(1073741824.0f)), fb(1073742208.0f));
    // C = 2^31: 2^31 + 384 needs bits 31..7 (25 bits); the FP32 step there is 256 and RZ drops
    // the 128: 2^31 + 256 = 2147483904.
    EXPECT_EQ(d.dot(a.data(), b.data(), s1, s1, fb(2147483648.0f)), fb(2147483904.0f));
  }
  {
    // The exact model rounds to nearest even: 2^31 + 384 -> tie between 2^31 + 256 and 2^31 + 512,
    // the even significand is 2^31 + 512.
    fp4sim::rtl::Driver d(Unit::Nvfp4Pe64);
    EXPECT_EQ(d.dot(a.data(), b.data(), s1, s1, fb(2147483648.0f)), fb(2147484160.0f));
    EXPECT_EQ(bf(fb(2147484160.0f)), 2147483648.0f + 512.0f);
  }
}

}  // namespace
