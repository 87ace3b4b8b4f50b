// bs_dot_k32 (kind mxf8f6f4) against the golden `blackwell` model, bit for bit, for all 25
// element-format pairs: every element code pair in every lane, every UE8M0 scale pair, directed
// corners, seeded random.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "rtl_check.hpp"

namespace {

using fp4sim::ElemFormat;
using fp4sim::rtl::Unit;
using rtlcheck::Case;
using rtlcheck::Checker;
using rtlcheck::Rng;

const ElemFormat* const kFmts[5] = {&fp4sim::kE4M3, &fp4sim::kE5M2, &fp4sim::kE2M3, &fp4sim::kE3M2, &fp4sim::kE2M1};

uint32_t ncodes(const ElemFormat& f) { return 1u << f.bits; }

bool finite_code(const ElemFormat& f, uint32_t code) { return std::isfinite(fp4sim::decode(f, code)); }

std::string pair_name(const ElemFormat& a, const ElemFormat& b) {
  return "bs_dot_k32 " + std::string(a.name) + " x " + std::string(b.name);
}

// A random code of f; finite_only resamples NaN / Inf codes. Bits above the format's width are
// random too (the unit, like mma_dot, must ignore them).
uint8_t rand_code(Rng& rng, const ElemFormat& f, bool finite_only) {
  for (;;) {
    const uint32_t c = rng.below(256);
    if (!finite_only || finite_code(f, c & (ncodes(f) - 1u))) return static_cast<uint8_t>(c);
  }
}

// Every code pair of every format pair, alone in lane (index mod 32), unit scales, C from a set.
TEST(RtlK32, EveryElementCodePairOfEveryFormatPair) {
  const uint32_t cs[4] = {0x00000000u, 0x80000000u, 0x3F800000u, 0xC1200000u};
  for (const ElemFormat* fa : kFmts) {
    for (const ElemFormat* fbm : kFmts) {
      Checker chk(Unit::BsDotK32, fa, fbm);
      uint32_t n = 0;
      for (uint32_t ca = 0; ca < ncodes(*fa); ++ca) {
        for (uint32_t cb = 0; cb < ncodes(*fbm); ++cb) {
          Case c;
          const int lane = static_cast<int>(n % 32);
          c.a[lane] = static_cast<uint8_t>(ca);
          c.b[lane] = static_cast<uint8_t>(cb);
          c.sfa[0] = 127;
          c.sfb[0] = 127;
          c.c = cs[(n / 32) % 4];
          ++n;
          chk.add(c);
        }
      }
      chk.expect_clean((pair_name(*fa, *fbm) + " every code pair").c_str());
    }
  }
}

// Every UE8M0 scale pair with random finite elements (E4M3 x E5M2 and E2M1 x E3M2), C near the terms.
TEST(RtlK32, EveryScalePair) {
  Rng rng(rtlcheck::seed_base() * 23 + 1);
  const std::pair<const ElemFormat*, const ElemFormat*> pairs[2] = {{&fp4sim::kE4M3, &fp4sim::kE5M2},
                                                                    {&fp4sim::kE2M1, &fp4sim::kE3M2}};
  for (const auto& [fa, fbm] : pairs) {
    Checker chk(Unit::BsDotK32, fa, fbm);
    for (uint32_t sa = 0; sa < 256; ++sa) {
      for (uint32_t sb = 0; sb < 256; ++sb) {
        Case c;
        for (int k = 0; k < 32; ++k) {
          c.a[k] = rand_code(rng, *fa, true);
          c.b[k] = rand_code(rng, *fbm, true);
        }
        c.sfa[0] = sa;
        c.sfb[0] = sb;
        c.c = rng.c_bits(static_cast<int>(sa) + static_cast<int>(sb) - 254 + 4);
        chk.add(c);
      }
    }
    chk.expect_clean((pair_name(*fa, *fbm) + " every scale pair").c_str());
  }
}

TEST(RtlK32, DirectedCorners) {
  Rng rng(rtlcheck::seed_base() * 29 + 3);
  const uint32_t specials_c[] = {0x00000000u, 0x80000000u, 0x3F800000u, 0x7F800000u, 0xFF800000u,
                                 0x7FC00000u, 0x00000001u, 0x807FFFFFu, 0x7F7FFFFFu};
  for (const ElemFormat* fa : kFmts) {
    for (const ElemFormat* fbm : kFmts) {
      Checker chk(Unit::BsDotK32, fa, fbm);
      auto elems = [&](Case& c, bool finite) {
        for (int k = 0; k < 32; ++k) {
          c.a[k] = rand_code(rng, *fa, finite);
          c.b[k] = rand_code(rng, *fbm, finite);
        }
      };
      // 1. Specials: NaN / Inf elements (E4M3 NaN, E5M2 Inf / NaN) next to zeros, NaN scales,
      //    every special C; one special element per case so that Inf * 0 and +Inf + -Inf occur.
      for (int t = 0; t < 600; ++t) {
        Case c;
        elems(c, true);
        if (t % 3 == 0) c.a[rng.below(32)] = rand_code(rng, *fa, false);
        if (t % 3 == 1) c.b[rng.below(32)] = static_cast<uint8_t>(fbm->bits == 8 ? 0x7C | (rng.below(4)) | (rng.below(2) << 7) : rng.below(256));
        if (t % 5 == 0) c.a[rng.below(32)] = 0;       // zero next to a possible Inf
        if (t % 7 == 0) c.b[rng.below(32)] = 0x80;
        c.sfa[0] = t % 11 == 0 ? 0xFF : rng.range(100, 154);
        c.sfb[0] = t % 13 == 0 ? 0xFF : rng.range(100, 154);
        c.c = specials_c[t % 9];
        chk.add(c);
      }
      // 2. Truncation boundary: one large product sets the alignment point, the other 31 and C sit
      //    around 25 bits below it.
      for (int d = 0; d <= 40; ++d) {
        for (int t = 0; t < 6; ++t) {
          Case c;
          elems(c, true);
          c.a[0] = static_cast<uint8_t>(ncodes(*fa) / 2 - 2);  // a large positive code
          c.b[0] = static_cast<uint8_t>(ncodes(*fbm) / 2 - 2);
          c.sfa[0] = 127;
          c.sfb[0] = 127;
          c.c = rng.c_bits(8 - d);
          chk.add(c);
        }
      }
      // 3. Zero elements with huge scales: the zero products' exponent -126 + scales can set the
      //    alignment point above a small C, which is then truncated away.
      for (int t = 0; t < 300; ++t) {
        Case c;
        for (int k = 0; k < 32; ++k) c.a[k] = static_cast<uint8_t>(rng.below(2) << (fa->bits - 1));  // +-0
        for (int k = 0; k < 32; ++k) c.b[k] = rand_code(rng, *fbm, true);
        c.sfa[0] = rng.range(200, 254);
        c.sfb[0] = rng.range(200, 254);
        c.c = rng.c_bits(rng.range(-126, 127));
        chk.add(c);
      }
      // 4. Overflow and underflow through the scales, subnormal C.
      for (int t = 0; t < 600; ++t) {
        Case c;
        elems(c, true);
        const bool big = t % 2;
        c.sfa[0] = big ? 0xFE - rng.below(8) : rng.below(12);
        c.sfb[0] = big ? 0xFE - rng.below(8) : rng.range(0, 100);
        c.c = big ? (rng.u32() & 0x80000000u) | (0x7F7FFFFFu - rng.below(1u << 22))
                  : (rng.u32() & 0x807FFFFFu);
        chk.add(c);
      }
      // 5. Cancellation: lanes in pairs x*y and x*(-y), exact zero sums with C = +-0.
      for (int t = 0; t < 300; ++t) {
        Case c;
        for (int k = 0; k < 32; k += 2) {
          c.a[k] = c.a[k + 1] = rand_code(rng, *fa, true);
          c.b[k] = rand_code(rng, *fbm, true);
          c.b[k + 1] = static_cast<uint8_t>(c.b[k] ^ (1u << (fbm->bits - 1)));
        }
        c.sfa[0] = rng.range(100, 154);
        c.sfb[0] = rng.range(100, 154);
        c.c = t % 2 ? 0x80000000u : 0u;
        chk.add(c);
      }
      chk.expect_clean((pair_name(*fa, *fbm) + " directed corners").c_str());
    }
  }
}

TEST(RtlK32, SeededRandom) {
  Rng rng(rtlcheck::seed_base() * 1000037 + 13);
  const size_t n = rtlcheck::random_count();
  size_t total = 0;
  for (int p = 0; p < 25; ++p) {
    const ElemFormat& fa = *kFmts[p / 5];
    const ElemFormat& fbm = *kFmts[p % 5];
    Checker chk(Unit::BsDotK32, &fa, &fbm);
    const size_t m = n * static_cast<size_t>(p + 1) / 25 - n * static_cast<size_t>(p) / 25;
    for (size_t t = 0; t < m; ++t) {
      Case c;
      const uint32_t emode = rng.below(8);
      const bool finite = emode != 0;  // 1/8 of the cases may hold NaN / Inf elements
      for (int k = 0; k < 32; ++k) {
        c.a[k] = rand_code(rng, fa, finite);
        c.b[k] = rand_code(rng, fbm, finite);
        if (emode == 2 && rng.chance(3, 4)) c.a[k] = 0;
      }
      c.sfa[0] = rng.chance(1, 3) ? rng.below(256) : static_cast<uint32_t>(rng.range(110, 144));
      c.sfb[0] = rng.chance(1, 3) ? rng.below(256) : static_cast<uint32_t>(rng.range(110, 144));
      c.c = rng.c_bits(static_cast<int>(c.sfa[0] + c.sfb[0]) - 254 + 4);
      chk.add(c);
    }
    chk.flush();
    total += chk.checked();
    chk.expect_clean(pair_name(fa, fbm).append(" seeded random").c_str());
  }
  EXPECT_EQ(total, n);
}

// Derived by hand: 32 lanes of E4M3 1.0 * E5M2 2.0 with scales 2^1 and 2^-1: 64; C = 0.25.
TEST(RtlK32, ValuesDerivedByHand) {
  fp4sim::rtl::Driver d(Unit::BsDotK32);
  d.set_formats(fp4sim::kE4M3, fp4sim::kE5M2);
  std::array<uint8_t, 32> a{}, b{};
  a.fill(0x38);  // E4M3 1.0 = 0.0111.000
  b.fill(0x40);  // E5M2 2.0 = 0.10000.00
  const uint32_t sa = 128, sb = 126;
  EXPECT_EQ(d.dot(a.data(), b.data(), &sa, &sb, rtlcheck::fb(0.25f)), rtlcheck::fb(64.25f));
  // An E5M2 Inf (0x7C) times E4M3 0 gives NaN; times 1.0 gives +Inf; +Inf and -Inf give NaN.
  b[3] = 0x7C;
  EXPECT_EQ(d.dot(a.data(), b.data(), &sa, &sb, 0u), 0x7F800000u);
  a[3] = 0x00;
  EXPECT_EQ(d.dot(a.data(), b.data(), &sa, &sb, 0u), 0x7FFFFFFFu);
  a[3] = 0x38;
  EXPECT_EQ(d.dot(a.data(), b.data(), &sa, &sb, 0xFF800000u), 0x7FFFFFFFu);
}

// The element formats change every instruction (back to back, the pipeline full), the unused
// format codes 5..7 included: the unit decodes them as E4M3 (the decode's default branch and
// FmtMbits), which is what this test requires of it. Every result against golden with that
// instruction's formats.
TEST(RtlK32, FormatSwitchEveryCycle) {
  fp4sim::rtl::Driver drv(Unit::BsDotK32);
  Rng rng(rtlcheck::seed_base() * 59 + 11);
  constexpr size_t kN = 20000;
  std::vector<uint8_t> a(kN * 32), b(kN * 32), fa(kN), fb(kN);
  std::vector<uint32_t> sa(kN), sb(kN), c(kN), d(kN);
  auto fmt_of = [](uint8_t code) { return code < 5 ? kFmts[code] : &fp4sim::kE4M3; };
  size_t unused = 0;
  for (size_t i = 0; i < kN; ++i) {
    fa[i] = static_cast<uint8_t>(rng.below(8));
    fb[i] = static_cast<uint8_t>(rng.below(8));
    unused += (fa[i] >= 5) + (fb[i] >= 5);
    for (int k = 0; k < 32; ++k) {
      a[i * 32 + static_cast<size_t>(k)] = rand_code(rng, *fmt_of(fa[i]), rng.chance(9, 10));
      b[i * 32 + static_cast<size_t>(k)] = rand_code(rng, *fmt_of(fb[i]), rng.chance(9, 10));
    }
    sa[i] = static_cast<uint32_t>(rng.range(120, 134));
    sb[i] = static_cast<uint32_t>(rng.range(120, 134));
    c[i] = rng.c_bits(0);
  }
  drv.run_formats(kN, a.data(), b.data(), sa.data(), sb.data(), c.data(), fa.data(), fb.data(), d.data());
  size_t bad = 0;
  for (size_t i = 0; i < kN; ++i) {
    const fp4sim::MmaConfig cfg = fp4sim::rtl::golden_config(Unit::BsDotK32, fmt_of(fa[i]), fmt_of(fb[i]));
    const uint32_t g = fp4sim::mma_dot(cfg, a.data() + i * 32, b.data() + i * 32, &sa[i], &sb[i], c[i]);
    if (g != d[i] && ++bad <= 5)
      ADD_FAILURE() << "instruction " << i << " formats " << int(fa[i]) << " x " << int(fb[i]) << ": rtl "
                    << std::hex << d[i] << " golden " << g;
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(unused, kN / 4);  // the unused codes were exercised
}

// Near-cancellation in the 25-bit window: C = -(one lane's product) * 2^e +- k ulp, with a second,
// much smaller lane, for every format pair: the sum keeps only the last bits of the window (deep
// cancellation) or crosses zero.
TEST(RtlK32, NearCancellation) {
  Rng rng(rtlcheck::seed_base() * 61 + 13);
  for (const ElemFormat* fa : kFmts)
    for (const ElemFormat* fb : kFmts) {
      Checker chk(Unit::BsDotK32, fa, fb);
      for (int i = 0; i < 400; ++i) {
        Case c;
        c.a[0] = rand_code(rng, *fa, true);
        c.b[0] = rand_code(rng, *fb, true);
        if (rng.chance(1, 2)) {  // a small second lane
          c.a[1] = rand_code(rng, *fa, true);
          c.b[1] = static_cast<uint8_t>(rng.below(4));
        }
        c.sfa[0] = c.sfb[0] = 127;  // 2^0
        const double p = fp4sim::decode(*fa, c.a[0] & (ncodes(*fa) - 1u)) * fp4sim::decode(*fb, c.b[0] & (ncodes(*fb) - 1u));
        if (p == 0.0) continue;
        for (int e = 0; e <= 2; ++e)
          for (int k = -3; k <= 3; ++k) {
            c.c = rtlcheck::fb(static_cast<float>(-std::ldexp(p, e))) + static_cast<uint32_t>(k);
            chk.add(c);
          }
      }
      chk.expect_clean((pair_name(*fa, *fb) + " near-cancellation").c_str());
    }
}

}  // namespace
