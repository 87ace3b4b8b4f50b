// Element and scale number formats (SPEC §1), checked exhaustively against a reference written
// here from the SPEC table's field definitions (not from the library's ElemFormat rows).
//
// Reference rounding works on the explicit sorted list of representable magnitudes: find the two
// neighbours lo <= |v| < hi and decide with the mode's rule. That is a different algorithm from
// the library's (binade exponent + integer significand), so agreement is meaningful.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "fp4sim/format.hpp"

using namespace fp4sim;

namespace {

enum class Sp { None, FnNaN, Ieee, AllOnesNaN };

// One SPEC §1 row, typed from the SPEC table.
struct Row {
  const ElemFormat* lib;
  const char* name;
  int bits;  // storage bits
  int ebits, mbits, bias;
  bool is_signed;
  bool subnormals;  // exponent field 0 holds zero and subnormals
  Sp sp;
};

const Row kRows[] = {
    {&kE2M1, "e2m1", 4, 2, 1, 1, true, true, Sp::None},
    {&kE2M3, "e2m3", 6, 2, 3, 1, true, true, Sp::None},
    {&kE3M2, "e3m2", 6, 3, 2, 3, true, true, Sp::None},
    {&kE4M3, "e4m3", 8, 4, 3, 7, true, true, Sp::FnNaN},
    {&kUE4M3, "ue4m3", 8, 4, 3, 7, false, true, Sp::FnNaN},
    {&kE5M2, "e5m2", 8, 5, 2, 15, true, true, Sp::Ieee},
    {&kUE8M0, "ue8m0", 8, 8, 0, 127, false, false, Sp::AllOnesNaN},
    {&kE6M2, "e6m2", 8, 6, 2, 48, false, false, Sp::AllOnesNaN},
    {&kS1P2, "s1p2", 4, 1, 2, 1, true, true, Sp::None},
};
const Row kBf16Row{&kBF16, "bf16", 16, 8, 7, 127, true, true, Sp::Ieee};

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

uint32_t mag_bits(const Row& r) { return static_cast<uint32_t>(r.ebits + r.mbits); }
uint32_t mag_all(const Row& r) { return (1u << mag_bits(r)) - 1u; }
uint32_t sign_bit(const Row& r) { return r.is_signed ? 1u << mag_bits(r) : 0u; }

double ref_decode(const Row& r, uint32_t code) {
  const uint32_t mag = code & mag_all(r);  // UE4M3: bit 7 is outside the magnitude and ignored
  const bool neg = r.is_signed && ((code >> mag_bits(r)) & 1u);
  const uint32_t ef = mag >> r.mbits;
  const uint32_t mf = mag & ((1u << r.mbits) - 1u);
  const uint32_t eall = (1u << r.ebits) - 1u;
  const uint32_t mall = (1u << r.mbits) - 1u;
  double v;
  if (r.sp == Sp::FnNaN && ef == eall && mf == mall) return kNaN;
  if (r.sp == Sp::AllOnesNaN && mag == mag_all(r)) return kNaN;
  if (r.sp == Sp::Ieee && ef == eall) {
    if (mf != 0) return kNaN;
    v = kInf;
  } else if (ef == 0 && r.subnormals) {
    v = std::ldexp(static_cast<double>(mf), 1 - r.bias - r.mbits);
  } else {
    v = std::ldexp(static_cast<double>((1u << r.mbits) + mf), static_cast<int>(ef) - r.bias - r.mbits);
  }
  return neg ? -v : v;
}

// Sorted finite non-negative magnitudes and their magnitude codes.
struct Grid {
  std::vector<double> v;
  std::vector<uint32_t> c;
};
Grid grid_of(const Row& r) {
  Grid g;
  for (uint32_t m = 0; m <= mag_all(r); ++m) {
    const double d = ref_decode(r, m);
    if (std::isfinite(d)) {
      g.v.push_back(d);
      g.c.push_back(m);
    }
  }
  // The table is monotone in the code; the reference relies on that, so check it.
  EXPECT_TRUE(std::is_sorted(g.v.begin(), g.v.end())) << r.name;
  return g;
}

// Step of the grid right above the largest finite value (the "next" value an unbounded exponent
// would give), used to decide rounding beyond max.
double top_step(const Row& r, double maxv) { return std::ldexp(1.0, std::ilogb(maxv) - r.mbits); }

uint32_t canonical_nan(const Row& r) {
  if (r.sp == Sp::Ieee) return (((1u << r.ebits) - 1u) << r.mbits) | (1u << (r.mbits - 1));
  return mag_all(r);
}

// Does rounding move from lo to hi (lo <= a < hi, s = hi - lo)?
bool rounds_up(double a, double lo, double hi, Rounding m, uint8_t rb) {
  const double s = hi - lo;
  const double d = a - lo;  // exact: lo <= a < hi <= 2 lo, or lo == 0
  switch (m) {
    case Rounding::Rz: return false;
    case Rounding::Rna: return 2.0 * d >= s;
    case Rounding::Rne: {
      if (2.0 * d != s) return 2.0 * d > s;
      // Tie: the neighbour with the even integer significand (lo = k*s). For formats with
      // mantissa bits this is the even code; for UE8M0 k = 1, so ties go up (PyTorch c10
      // Float8_e8m0fnu takes the implied mantissa bit as the LSB).
      const double k = lo / s;
      return std::fmod(k, 2.0) != 0.0;
    }
    case Rounding::Sr: return 256.0 * d >= static_cast<double>(256 - rb) * s;  // floor(a/s + r/256)
  }
  return false;
}

uint32_t ref_encode(const Row& r, const Grid& g, double v, Rounding m, bool sat, uint8_t rb = 0) {
  const uint32_t maxc = g.c.back();
  if (std::isnan(v)) return r.sp == Sp::None ? maxc : canonical_nan(r);
  const uint32_t sign = (r.is_signed && v < 0.0) ? sign_bit(r) : 0u;
  const double a = std::fabs(v);
  auto overflow = [&]() -> uint32_t {
    if (sat || r.sp == Sp::None) return sign | maxc;
    if (r.sp == Sp::Ieee) return sign | (((1u << r.ebits) - 1u) << r.mbits);
    return canonical_nan(r);
  };
  if (std::isinf(a)) return overflow();
  if (a < g.v.front()) return g.c.front();  // only formats without zero (no-zero rule)
  const double maxv = g.v.back();
  double lo, hi;
  uint32_t clo, chi = 0;
  bool hi_virtual = false;
  if (a >= maxv) {
    if (a == maxv) return sign | maxc;
    lo = maxv;
    clo = maxc;
    hi = maxv + top_step(r, maxv);
    hi_virtual = true;
    if (a >= hi) return overflow();  // rounds to at least hi in every mode
  } else {
    const size_t i = static_cast<size_t>(std::upper_bound(g.v.begin(), g.v.end(), a) - g.v.begin()) - 1;
    lo = g.v[i];
    clo = g.c[i];
    hi = g.v[i + 1];
    chi = g.c[i + 1];
    if (a == lo) return sign | clo;
  }
  if (!rounds_up(a, lo, hi, m, rb)) return sign | clo;
  if (hi_virtual) return overflow();
  return sign | chi;
}

bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

const Rounding kModes[] = {Rounding::Rne, Rounding::Rna, Rounding::Rz, Rounding::Sr};

// ---------------------------------------------------------------------------------------------

TEST(Format, TableRowsMatchSpec) {
  for (const Row& r : kRows) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(r.lib->name, r.name);
    EXPECT_EQ(r.lib->bits, r.bits);
    EXPECT_EQ(r.lib->ebits, r.ebits);
    EXPECT_EQ(r.lib->mbits, r.mbits);
    EXPECT_EQ(r.lib->bias, r.bias);
    EXPECT_EQ(r.lib->is_signed, r.is_signed);
    EXPECT_EQ(r.lib->has_subnormals, r.subnormals);
  }
}

TEST(Format, DecodeEveryCodeMatchesFieldDefinition) {
  size_t n = 0;
  for (const Row& r : kRows) {
    SCOPED_TRACE(r.name);
    const DecodeTable& t = decode_table(*r.lib);
    for (uint32_t c = 0; c < (1u << r.bits); ++c) {
      const double want = ref_decode(r, c);
      EXPECT_TRUE(same_value(decode(*r.lib, c), want)) << "code " << c << " want " << want;
      EXPECT_TRUE(same_value(static_cast<double>(t.v[c]), want)) << "table code " << c;
      // Every value fits a float exactly (SPEC §1).
      if (std::isfinite(want)) {
        EXPECT_EQ(static_cast<double>(static_cast<float>(want)), want);
      }
      ++n;
    }
  }
  for (uint32_t c = 0; c < 65536; ++c) {
    const double want = ref_decode(kBf16Row, c);
    EXPECT_TRUE(same_value(decode(kBF16, c), want)) << "bf16 " << c;
    EXPECT_TRUE(same_value(static_cast<double>(bf16_to_float(static_cast<uint16_t>(c))), want)) << "bf16 " << c;
  }
  std::printf("decoded %zu small-format codes + 65536 bf16 codes\n", n);
}

// Literal facts from the SPEC table, each from its own formula rather than the generic one.
TEST(Format, SpecTableFacts) {
  const double e2m1[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (uint32_t c = 0; c < 16; ++c) {
    const double m = e2m1[c & 7];
    EXPECT_TRUE(same_value(decode(kE2M1, c), (c & 8) ? -m : m)) << c;
  }
  for (uint32_t c = 0; c < 16; ++c) {  // S1P2: ±c/4
    const double m = static_cast<double>(c & 7) / 4.0;
    EXPECT_TRUE(same_value(decode(kS1P2, c), (c & 8) ? -m : m)) << c;
  }
  for (uint32_t c = 0; c < 255; ++c) {  // E6M2: (4+M)/4 * 2^(E-48)
    const double want = (4.0 + (c & 3)) / 4.0 * std::pow(2.0, static_cast<double>(c >> 2) - 48.0);
    EXPECT_EQ(decode(kE6M2, c), want) << c;
    EXPECT_EQ(decode(kUE8M0, c), std::pow(2.0, static_cast<double>(c) - 127.0)) << c;
  }
  EXPECT_TRUE(std::isnan(decode(kE6M2, 0xFF)));
  EXPECT_TRUE(std::isnan(decode(kUE8M0, 0xFF)));
  EXPECT_EQ(decode(kE6M2, 0x00), std::ldexp(1.0, -48));
  EXPECT_EQ(decode(kE6M2, 0xFE), 49152.0);
  EXPECT_EQ(std::bit_cast<uint32_t>(decode_table(kUE8M0).v[0]), 0x00400000u);  // 2^-127, FP32 subnormal
  EXPECT_EQ(decode(kUE8M0, 0xFE), std::ldexp(1.0, 127));
  EXPECT_EQ(decode(kE2M3, 0x1F), 7.5);
  EXPECT_EQ(decode(kE3M2, 0x1F), 28.0);
  EXPECT_EQ(decode(kE4M3, 0x7E), 448.0);
  EXPECT_EQ(decode(kE4M3, 0x01), std::ldexp(1.0, -9));
  EXPECT_TRUE(std::isnan(decode(kE4M3, 0x7F)));
  EXPECT_TRUE(std::isnan(decode(kE4M3, 0xFF)));
  EXPECT_EQ(decode(kE4M3, 0x78), 256.0);  // s.1111.000 is a number in the "fn" variant
  EXPECT_EQ(decode(kE5M2, 0x7B), 57344.0);
  EXPECT_EQ(decode(kE5M2, 0x7C), kInf);
  EXPECT_EQ(decode(kE5M2, 0xFC), -kInf);
  for (uint32_t c : {0x7Du, 0x7Eu, 0x7Fu, 0xFDu, 0xFEu, 0xFFu}) EXPECT_TRUE(std::isnan(decode(kE5M2, c)));
  EXPECT_EQ(decode(kE5M2, 0x01), std::ldexp(1.0, -16));
  EXPECT_TRUE(std::isnan(decode(kUE4M3, 0x7F)));
  EXPECT_TRUE(std::isnan(decode(kUE4M3, 0xFF)));
  for (uint32_t c = 0; c < 0x7F; ++c) {
    EXPECT_EQ(decode(kUE4M3, c | 0x80u), decode(kUE4M3, c)) << c;  // sign bit ignored
    EXPECT_EQ(decode(kUE4M3, c), std::fabs(decode(kE4M3, c))) << c;
  }
}

// encode(decode(c)) == c for every non-NaN code, in every mode (an exact value never rounds).
TEST(Format, EncodeDecodeRoundTrip) {
  size_t n = 0;
  for (const Row& r : kRows) {
    SCOPED_TRACE(r.name);
    for (uint32_t c = 0; c < (1u << r.bits); ++c) {
      const double v = decode(*r.lib, c);
      if (std::isnan(v)) continue;
      uint32_t want = c & (sign_bit(r) | mag_all(r));  // UE4M3: bit 7 dropped
      if (v == 0.0) want = 0;                              // -0 encodes as +0 (sign iff v < 0)
      for (bool sat : {false, true}) {
        uint32_t w = want;
        if (std::isinf(v) && sat) w = (v < 0 ? sign_bit(r) : 0u) | r.lib->max_code();
        for (Rounding m : kModes) {
          const int nr = m == Rounding::Sr ? 256 : 1;
          for (int rb = 0; rb < nr; ++rb) {
            ASSERT_EQ(encode(*r.lib, v, m, sat, static_cast<uint8_t>(rb)), w)
                << "code " << c << " mode " << rounding_name(m) << " sat " << sat << " r " << rb;
            ++n;
          }
        }
      }
    }
  }
  std::printf("round-trip encodes: %zu\n", n);
}

// Midpoints between adjacent values, one double ulp either side, the neighbours' own ulps, and a
// point beyond the top (max + half the top step) — every mode, both signs, both saturation modes.
TEST(Format, MidpointsAndNeighbours) {
  size_t n = 0;
  const uint8_t rbytes[] = {0, 1, 127, 128, 255};
  for (const Row& r : kRows) {
    SCOPED_TRACE(r.name);
    const Grid g = grid_of(r);
    std::vector<double> lo_hi;  // pairs
    for (size_t i = 0; i + 1 < g.v.size(); ++i) {
      lo_hi.push_back(g.v[i]);
      lo_hi.push_back(g.v[i + 1]);
    }
    lo_hi.push_back(g.v.back());
    lo_hi.push_back(g.v.back() + top_step(r, g.v.back()));
    for (size_t p = 0; p < lo_hi.size(); p += 2) {
      const double lo = lo_hi[p], hi = lo_hi[p + 1];
      const double mid = (lo + hi) / 2.0;
      const double pts[] = {mid,
                            std::nextafter(mid, 0.0),
                            std::nextafter(mid, kInf),
                            std::nextafter(lo, kInf),
                            std::nextafter(hi, 0.0),
                            lo + (hi - lo) / 4.0,
                            lo + 3.0 * (hi - lo) / 4.0};
      for (double a : pts) {
        for (double v : {a, -a}) {
          for (bool sat : {false, true}) {
            for (Rounding m : kModes) {
              for (uint8_t rb : rbytes) {
                if (m != Rounding::Sr && rb != 0) continue;
                const uint32_t got = encode(*r.lib, v, m, sat, rb);
                const uint32_t want = ref_encode(r, g, v, m, sat, rb);
                ASSERT_EQ(got, want) << "v " << v << " (" << std::hexfloat << v << std::defaultfloat << ") mode "
                                     << rounding_name(m) << " sat " << sat << " r " << int(rb);
                ++n;
              }
            }
          }
        }
      }
      // The reference itself at the exact midpoint, stated directly: RNA -> hi, RZ -> lo,
      // RNE -> the even code (mantissa formats), SR r=0 -> lo, r=255 -> hi.
      if (hi <= g.v.back() && r.mbits > 0) {
        const uint32_t clo = ref_encode(r, g, lo, Rounding::Rz, true);
        const uint32_t chi = ref_encode(r, g, hi, Rounding::Rz, true);
        EXPECT_EQ(encode(*r.lib, mid, Rounding::Rna, true), chi);
        EXPECT_EQ(encode(*r.lib, mid, Rounding::Rz, true), clo);
        EXPECT_EQ(encode(*r.lib, mid, Rounding::Rne, true) & 1u, 0u) << "tie at " << mid;
        EXPECT_EQ(encode(*r.lib, mid, Rounding::Sr, true, 0), clo);
        EXPECT_EQ(encode(*r.lib, mid, Rounding::Sr, true, 255), chi);
      }
    }
  }
  std::printf("midpoint/neighbour encodes: %zu\n", n);
}

// SR: exactly floor(|v|/s + r/256) for all 256 r at the 1/256 points of a step (and one ulp
// either side), on a spread of pairs of every format.
TEST(Format, StochasticRoundingAllRandomBytes) {
  size_t n = 0;
  for (const Row& r : kRows) {
    SCOPED_TRACE(r.name);
    const Grid g = grid_of(r);
    const size_t np = g.v.size();
    std::set<size_t> pick;  // pair i = (v[i], v[i+1]); np-1 = (max, max + top step)
    for (size_t i = 0; i < np; i += (np > 16 ? 9 : 1)) pick.insert(i);
    for (size_t i : {size_t{0}, size_t{1}, np - 3, np - 2, np - 1}) pick.insert(i);
    for (size_t i : pick) {
      const double lo = g.v[i];
      const double hi = i + 1 < np ? g.v[i + 1] : lo + top_step(r, lo);
      const double s = hi - lo;
      // Every 1/256 point on the top pair (rounding up there saturates); a spread elsewhere.
      static const int kSome[] = {0, 1, 2, 3, 63, 64, 65, 127, 128, 129, 191, 192, 253, 254, 255};
      std::vector<int> ks(std::begin(kSome), std::end(kSome));
      if (i == np - 1) {
        ks.clear();
        for (int k = 0; k < 256; ++k) ks.push_back(k);
      }
      for (int k : ks) {
        const double base = lo + s * k / 256.0;
        for (double a : {base, std::nextafter(base, 0.0), std::nextafter(base, kInf)}) {
          if (a < lo) continue;
          for (int rb = 0; rb < 256; ++rb) {
            const uint32_t got = encode(*r.lib, a, Rounding::Sr, true, static_cast<uint8_t>(rb));
            ASSERT_EQ(got, ref_encode(r, g, a, Rounding::Sr, true, static_cast<uint8_t>(rb)))
                << "a " << a << " r " << rb;
            // The SPEC rule in its own words: up iff frac(a/s) + r/256 >= 1.
            const double frac = (a - lo) / s;  // exact (power-of-two s)
            const bool up = frac >= 1.0 - rb / 256.0;  // frac + r/256 >= 1, without a rounded sum
            const uint32_t lo_c = encode(*r.lib, lo, Rounding::Rz, true);
            const uint32_t hi_c = encode(*r.lib, i + 1 < np ? hi : lo, Rounding::Rz, true);  // saturated top
            ASSERT_EQ(got, up ? hi_c : lo_c) << "a " << a << " r " << rb;
            ++n;
          }
          // r = 0 is round-toward-zero; r = 255 rounds up anything at least 1/256 step above lo.
          EXPECT_EQ(encode(*r.lib, a, Rounding::Sr, true, 0), encode(*r.lib, a, Rounding::Rz, true));
        }
      }
    }
  }
  std::printf("SR encodes: %zu\n", n);
}

TEST(Format, HandWorkedE2M1) {
  struct C {
    double v;
    uint32_t rne, rna, rz;
  };
  // Grid 0 .5 1 1.5 2 3 4 6 (codes 0..7). Ties: RNE to the even code, RNA away from zero.
  const C cs[] = {{0.25, 0, 1, 0}, {0.75, 2, 2, 1}, {1.25, 2, 3, 2}, {1.75, 4, 4, 3},
                  {2.5, 4, 5, 4},  {3.5, 6, 6, 5},  {5.0, 6, 7, 6},  {5.9, 7, 7, 6},
                  {6.5, 7, 7, 7},  {7.0, 7, 7, 7},  {0.2, 0, 0, 0},  {2.75, 5, 5, 4}};
  for (const C& c : cs) {
    EXPECT_EQ(encode(kE2M1, c.v, Rounding::Rne, true), c.rne) << c.v;
    EXPECT_EQ(encode(kE2M1, c.v, Rounding::Rna, true), c.rna) << c.v;
    EXPECT_EQ(encode(kE2M1, c.v, Rounding::Rz, true), c.rz) << c.v;
    EXPECT_EQ(encode(kE2M1, -c.v, Rounding::Rne, true), 8u | c.rne) << -c.v;  // sign iff v < 0
  }
  EXPECT_EQ(encode(kE2M1, -0.0, Rounding::Rne, true), 0u);
  EXPECT_EQ(encode(kE2M1, -0.1, Rounding::Rne, true), 8u);  // negative rounding to zero -> -0
  EXPECT_TRUE(std::signbit(decode(kE2M1, 8u)));
  // E4M3: 464 is the 448/480 tie; 448 = 1.110b * 2^8 has the even mantissa.
  EXPECT_EQ(encode(kE4M3, 464.0, Rounding::Rne, false), 0x7Eu);
  EXPECT_EQ(encode(kE4M3, std::nextafter(464.0, kInf), Rounding::Rne, true), 0x7Eu);
  // E5M2: 61440 is the 57344/65536 tie; 57344 = 1.11b * 2^15 is odd, so RNE goes up -> overflow.
  EXPECT_EQ(encode(kE5M2, 61440.0, Rounding::Rne, false), 0x7Cu);
  EXPECT_EQ(encode(kE5M2, std::nextafter(61440.0, 0.0), Rounding::Rne, false), 0x7Bu);
  // E6M2 carry: 1.875 = 7.5 quarter steps -> 8 (even) -> 2.0 = code (1+48)<<2.
  EXPECT_EQ(encode(kE6M2, 1.875, Rounding::Rne, true), 49u << 2);
  EXPECT_EQ(encode(kE6M2, 1.125, Rounding::Rne, true), 48u << 2);      // 4.5 -> 4
  EXPECT_EQ(encode(kE6M2, 1.375, Rounding::Rne, true), 48u << 2 | 2);  // 5.5 -> 6
  EXPECT_EQ(encode(kE6M2, 1.625, Rounding::Rne, true), 48u << 2 | 2);  // 6.5 -> 6
}

// UE8M0 has no mantissa bits; a tie 1.5*2^k lies between 2^k and 2^(k+1). fp4sim's generic rule
// (even integer significand) sends it up, as PyTorch's c10 e8m0 conversion does.
TEST(Format, Ue8m0Ties) {
  for (int k = -127; k <= 126; ++k) {
    const double tie = 1.5 * std::ldexp(1.0, k);
    EXPECT_EQ(encode(kUE8M0, tie, Rounding::Rne, true), static_cast<uint32_t>(k + 128)) << k;
    EXPECT_EQ(encode(kUE8M0, std::nextafter(tie, 0.0), Rounding::Rne, true), static_cast<uint32_t>(k + 127)) << k;
    EXPECT_EQ(encode(kUE8M0, tie, Rounding::Rz, true), static_cast<uint32_t>(k + 127)) << k;
    EXPECT_EQ(encode(kUE8M0, tie, Rounding::Rna, true), static_cast<uint32_t>(k + 128)) << k;
  }
}

TEST(Format, OverflowSaturatingVersusNot) {
  const double big[] = {480.0, 1e6, 3.4028234663852886e38, 1e300};
  for (double v : big) {
    for (double s : {1.0, -1.0}) {
      const double x = s * v;
      const uint32_t sg = s < 0 ? 1u : 0u;
      EXPECT_EQ(encode(kE4M3, x, Rounding::Rne, true), sg << 7 | 0x7Eu) << x;
      EXPECT_TRUE(std::isnan(decode(kE4M3, encode(kE4M3, x, Rounding::Rne, false)))) << x;
      EXPECT_EQ(encode(kE4M3, x, Rounding::Rne, false), 0x7Fu) << x;  // the canonical NaN
      if (v > 61440.0) {
        EXPECT_EQ(encode(kE5M2, x, Rounding::Rne, true), sg << 7 | 0x7Bu) << x;
        EXPECT_EQ(encode(kE5M2, x, Rounding::Rne, false), sg << 7 | 0x7Cu) << x;  // ±Inf
      }
      EXPECT_EQ(encode(kE2M1, x, Rounding::Rne, true), sg << 3 | 7u) << x;
      EXPECT_EQ(encode(kE2M1, x, Rounding::Rne, false), sg << 3 | 7u) << x;  // no Inf/NaN: ±6
      EXPECT_EQ(encode(kE2M3, x, Rounding::Rna, false), sg << 5 | 0x1Fu) << x;
      EXPECT_EQ(encode(kE3M2, x, Rounding::Rna, false), sg << 5 | 0x1Fu) << x;
      if (v >= 1e6) {
        EXPECT_EQ(encode(kE6M2, x, Rounding::Rne, true), 0xFEu) << x;
      }
    }
  }
  EXPECT_EQ(encode(kE6M2, 1e6, Rounding::Rne, false), 0xFFu);
  EXPECT_EQ(encode(kUE8M0, 1e300, Rounding::Rne, true), 0xFEu);
  EXPECT_EQ(encode(kUE8M0, 1e300, Rounding::Rne, false), 0xFFu);
  EXPECT_EQ(encode(kUE4M3, -1e6, Rounding::Rne, true), 0x7Eu);  // unsigned: |v|
}

TEST(Format, NaNAndInfInputs) {
  const double nans[] = {kNaN, std::copysign(kNaN, -1.0)};
  for (double v : nans) {
    for (bool sat : {false, true}) {
      for (Rounding m : kModes) {
        EXPECT_EQ(encode(kE4M3, v, m, sat), 0x7Fu);
        EXPECT_EQ(encode(kUE4M3, v, m, sat), 0x7Fu);
        EXPECT_EQ(encode(kE5M2, v, m, sat), 0x7Eu);  // quiet NaN: exponent all ones, mantissa 10
        EXPECT_EQ(encode(kUE8M0, v, m, sat), 0xFFu);
        EXPECT_EQ(encode(kE6M2, v, m, sat), 0xFFu);
        EXPECT_EQ(encode(kE2M1, v, m, sat), 0x7u);  // no NaN: +max whatever the NaN's sign
        EXPECT_EQ(encode(kE2M3, v, m, sat), 0x1Fu);
        EXPECT_EQ(encode(kE3M2, v, m, sat), 0x1Fu);
        EXPECT_EQ(encode(kS1P2, v, m, sat), 0x7u);
      }
    }
  }
  for (Rounding m : kModes) {
    EXPECT_EQ(encode(kE5M2, kInf, m, false), 0x7Cu);
    EXPECT_EQ(encode(kE5M2, -kInf, m, false), 0xFCu);
    EXPECT_EQ(encode(kE5M2, -kInf, m, true), 0xFBu);
    EXPECT_EQ(encode(kE4M3, -kInf, m, true), 0xFEu);
    EXPECT_EQ(encode(kE4M3, -kInf, m, false), 0x7Fu);
    EXPECT_EQ(encode(kE2M1, -kInf, m, false), 0xFu);
    EXPECT_EQ(encode(kE2M1, kInf, m, true), 0x7u);
    EXPECT_EQ(encode(kUE8M0, kInf, m, false), 0xFFu);
    EXPECT_EQ(encode(kUE8M0, kInf, m, true), 0xFEu);
    EXPECT_EQ(encode(kE6M2, kInf, m, true), 0xFEu);
    EXPECT_EQ(encode(kUE4M3, -kInf, m, true), 0x7Eu);
  }
}

TEST(Format, BelowMinimumOfFormatsWithoutZero) {
  const double tiny[] = {0.0, -0.0, 1e-300, std::ldexp(1.0, -149), -std::ldexp(1.0, -149), std::ldexp(1.0, -128)};
  for (double v : tiny) {
    for (Rounding m : kModes) {
      EXPECT_EQ(encode(kUE8M0, v, m, true), 0x00u) << v;  // 2^-127
      EXPECT_EQ(encode(kUE8M0, v, m, false), 0x00u) << v;
    }
  }
  for (double v : {0.0, -0.0, std::ldexp(1.0, -49), std::ldexp(1.0, -200), std::nextafter(std::ldexp(1.0, -48), 0.0)}) {
    for (Rounding m : kModes) EXPECT_EQ(encode(kE6M2, v, m, true), 0x00u) << v;  // 2^-48
  }
  // Unsigned formats encode |v|.
  EXPECT_EQ(encode(kUE8M0, -1.0, Rounding::Rne, true), 127u);
}

// All 256 E2M1 x E2M1 products: in units of 1/4 they are integer products of the magnitudes in
// units of 1/2, which the test types from the E2M1 field definition.
TEST(Format, E2M1ProductsExact) {
  const int half_units[8] = {0, 1, 2, 3, 4, 6, 8, 12};
  const DecodeTable& t = decode_table(kE2M1);
  std::set<int> distinct;
  for (uint32_t a = 0; a < 16; ++a) {
    for (uint32_t b = 0; b < 16; ++b) {
      const int sgn = ((a ^ b) & 8u) ? -1 : 1;
      const int q = sgn * half_units[a & 7] * half_units[b & 7];  // product in units of 1/4
      const float p = t.v[a] * t.v[b];                             // exact in FP32 (<= 8 bits)
      EXPECT_EQ(static_cast<double>(p), q / 4.0) << a << "*" << b;
      EXPECT_EQ(decode(kE2M1, a) * decode(kE2M1, b), q / 4.0) << a << "*" << b;
      if (q == 0) {  // ±0 products keep the xor of the signs
        EXPECT_EQ(std::signbit(p), sgn < 0) << a << "*" << b;
      }
      distinct.insert(q);
    }
  }
  EXPECT_EQ(*distinct.rbegin(), 144);  // 6*6 = 36 = 144/4
}

TEST(Format, RoundToInteger) {
  EXPECT_EQ(round_to_integer(2.5, Rounding::Rne), 2.0);
  EXPECT_EQ(round_to_integer(3.5, Rounding::Rne), 4.0);
  EXPECT_EQ(round_to_integer(2.5, Rounding::Rna), 3.0);
  EXPECT_EQ(round_to_integer(2.9999, Rounding::Rz), 2.0);
  for (int r = 0; r < 256; ++r) {
    for (int k = 0; k < 256; ++k) {
      const double q = 5.0 + k / 256.0;
      EXPECT_EQ(round_to_integer(q, Rounding::Sr, static_cast<uint8_t>(r)), k + r >= 256 ? 6.0 : 5.0);
    }
  }
}

// FP32 -> BF16 RNE against an independent formula: round |x| at 8 significant bits (BF16's
// subnormal spacing 2^-133 below 2^-126), ties even via nearbyint in the default mode.
TEST(Format, Bf16Conversion) {
  std::mt19937_64 rng(12345);
  auto ref = [](float x) -> double {
    const double a = std::fabs(static_cast<double>(x));
    if (a == 0.0) return static_cast<double>(x);
    const int e = std::max(std::ilogb(a), -126);
    double r = std::ldexp(std::nearbyint(std::ldexp(a, 7 - e)), e - 7);
    if (r >= std::ldexp(1.0, 128)) r = kInf;
    return std::signbit(x) ? -r : r;
  };
  size_t n = 0;
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = static_cast<uint32_t>(rng());
    if (i % 4 == 0) u = (u & 0xFFFF0000u) | 0x8000u;  // exact ties
    const float x = std::bit_cast<float>(u);
    const uint16_t b = float_to_bf16_rne(x);
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(bf16_to_float(b))) << std::hex << u;
      continue;
    }
    ASSERT_TRUE(same_value(static_cast<double>(bf16_to_float(b)), ref(x))) << std::hex << u;
    ++n;
  }
  EXPECT_EQ(float_to_bf16_rne(1.0f / 7.0f), 0x3E12u);  // 0.142578125 = BF16(1/7), SPEC §2.3
  EXPECT_EQ(bf16_to_float(0x3E12u), 0.142578125f);
  EXPECT_GT(n, 100000u);
}

TEST(Format, RoundingNames) {
  Rounding r{};
  for (Rounding m : kModes) {
    ASSERT_TRUE(parse_rounding(rounding_name(m), r));
    EXPECT_EQ(r, m);
  }
  EXPECT_EQ(rounding_name(Rounding::Rne), "rne");
  EXPECT_EQ(rounding_name(Rounding::Sr), "sr");
  EXPECT_FALSE(parse_rounding("nearest", r));
}

}  // namespace
