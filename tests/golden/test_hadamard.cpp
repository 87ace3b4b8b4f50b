// Random Hadamard transform: matrix facts, signs, and correct rounding against a
// Boost.Multiprecision oracle (exact integer sums, 1200-bit division by sqrt(N)).
#include <gtest/gtest.h>

#include <bit>
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/multiprecision/cpp_int.hpp>
#include <cfloat>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "fp4sim/format.hpp"
#include "fp4sim/hadamard.hpp"
#include "fp4sim/philox.hpp"

namespace fp4sim {
namespace {

namespace mp = boost::multiprecision;
using BigInt = mp::cpp_int;
using BigFloat = mp::number<mp::cpp_bin_float<1200, mp::digit_base_2>>;

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

// ---------------------------------------------------------------------------------------------
// Oracle. Every float is an integer multiple of 2^-149, so x * 2^149 is an exact integer.
BigInt scaled_int(float f) {
  const uint32_t b = bits(f);
  const uint32_t e = (b >> 23) & 0xFF, m = b & 0x7FFFFF;
  BigInt v = e ? BigInt(m | 0x800000u) << (e - 1) : BigInt(m);  // (m * 2^(e-150)) * 2^149
  return (b >> 31) ? BigInt(-v) : v;
}

// RNE of a (finite, high-precision) value to float, written independently of the library.
float oracle_round(const BigFloat& t) {
  if (t == 0) return 0.0f;
  const bool neg = t < 0;
  const BigFloat a = neg ? BigFloat(-t) : t;
  int e = 0;
  (void)mp::frexp(a, &e);  // a = fr * 2^e, fr in [1/2, 1): top bit 2^(e-1)
  const int lsb = std::max(e - 1 - 23, -149);
  const BigFloat scaled = mp::ldexp(a, -lsb);
  BigFloat fl = mp::floor(scaled);
  const BigFloat rem = scaled - fl;
  if (rem > 0.5 || (rem == 0.5 && mp::fmod(fl, BigFloat(2)) == 1)) fl += 1;
  const double q = fl.convert_to<double>();  // <= 2^24: exact
  const double v = std::ldexp(q, lsb);
  const float r = v >= 0x1p128 ? std::numeric_limits<float>::infinity() : static_cast<float>(v);
  return neg ? -r : r;
}

// Straight from the definition: y_j = sum_i x_i d_i H[i][j] / sqrt(N) (forward) or
// x_i = d_i sum_j H[i][j] y_j / sqrt(N) (inverse), H[i][j] = (-1)^popcount(i & j).
std::vector<float> oracle_tile(const std::vector<float>& x, const std::vector<int8_t>& d, bool inverse) {
  const int n = static_cast<int>(x.size());
  std::vector<BigInt> xi(x.size());
  for (size_t i = 0; i < x.size(); ++i) xi[i] = scaled_int(x[i]);
  const BigFloat rs = mp::sqrt(BigFloat(n));
  std::vector<float> out(x.size());
  for (int j = 0; j < n; ++j) {
    BigInt s = 0;
    for (int i = 0; i < n; ++i) {
      const int c = hadamard_entry(static_cast<uint32_t>(i), static_cast<uint32_t>(j)) *
                    (inverse ? 1 : d[static_cast<size_t>(i)]);
      if (c > 0) s += xi[static_cast<size_t>(i)];
      else s -= xi[static_cast<size_t>(i)];
    }
    if (inverse && d[static_cast<size_t>(j)] < 0) s = -s;
    if (s == 0) {
      out[static_cast<size_t>(j)] = 0.0f;  // exact zero: +0
      continue;
    }
    const BigFloat t = mp::ldexp(BigFloat(s), -149) / rs;
    out[static_cast<size_t>(j)] = oracle_round(t);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Test inputs from Philox, so the cases are the same everywhere.
struct Gen {
  uint64_t seed;
  uint64_t ctr = 0;
  uint32_t next() {
    const auto w = philox_block(seed, 99, ctr / 4);
    return w[ctr++ % 4];
  }
};

enum class Kind { Narrow, Wide, Bf16Grid, Cancel, Sparse, Tiny };

float gen_float(Gen& g, Kind kind) {
  const uint32_t r = g.next(), s = g.next();
  uint32_t sign = (r >> 31) << 31;
  uint32_t mant = s & 0x7FFFFF;
  uint32_t exp = 0;
  switch (kind) {
    case Kind::Narrow: exp = 127 - 6 + (r % 13); break;
    case Kind::Wide: exp = r % 255; break;  // every finite binade, subnormals included
    case Kind::Bf16Grid: exp = 127 - 20 + (r % 41); mant &= 0x7F0000; break;
    case Kind::Cancel: exp = 127 + (r % 3); mant &= 0x7FFF00; break;
    case Kind::Sparse: exp = (r % 4 == 0) ? 100 + (r % 50) : 0; mant = (r % 4 == 0) ? mant : 0; break;
    case Kind::Tiny: exp = r % 4; break;  // subnormals and the lowest normals
  }
  return std::bit_cast<float>(sign | (exp << 23) | mant);
}

std::vector<float> gen_tile(Gen& g, Kind kind, int n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = gen_float(g, kind);
  if (kind == Kind::Cancel) {  // second half = -(first half) with a few small perturbations
    for (int i = n / 2; i < n; ++i) {
      x[static_cast<size_t>(i)] = -x[static_cast<size_t>(i - n / 2)];
      if (g.next() % 3 == 0) x[static_cast<size_t>(i)] = std::nextafter(x[static_cast<size_t>(i)], 0.0f);
    }
  }
  return x;
}

void expect_same_bits(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t j = 0; j < got.size(); ++j) {
    ASSERT_EQ(bits(got[j]), bits(want[j])) << what << " j=" << j << " got " << got[j] << " want " << want[j];
  }
}

// ---------------------------------------------------------------------------------------------

TEST(Hadamard, SylvesterOrderAndOrthogonality) {
  for (int n = 2; n <= 256; n *= 2) {
    // Sylvester recursion H_2n = [[H, H], [H, -H]] equals the popcount formula.
    const int h = n / 2;
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        const int base = hadamard_entry(static_cast<uint32_t>(i % h), static_cast<uint32_t>(j % h));
        const int want = (i >= h && j >= h) ? -base : base;
        ASSERT_EQ(hadamard_entry(static_cast<uint32_t>(i), static_cast<uint32_t>(j)), want) << n;
      }
    }
    // H H^T = N I.
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < n; ++k) {
        int dot = 0;
        for (int j = 0; j < n; ++j) {
          dot += hadamard_entry(static_cast<uint32_t>(i), static_cast<uint32_t>(j)) *
                 hadamard_entry(static_cast<uint32_t>(k), static_cast<uint32_t>(j));
        }
        ASSERT_EQ(dot, i == k ? n : 0);
      }
    }
  }
  // Rows of TE's explicit 16x16 matrix (nvfp4_tensor.py get_hadamard_matrix), rows 3 and 13.
  const int row3[16] = {1, -1, -1, 1, 1, -1, -1, 1, 1, -1, -1, 1, 1, -1, -1, 1};
  const int row13[16] = {1, -1, 1, -1, -1, 1, -1, 1, -1, 1, -1, 1, 1, -1, 1, -1};
  for (uint32_t j = 0; j < 16; ++j) {
    EXPECT_EQ(hadamard_entry(3, j), row3[j]);
    EXPECT_EQ(hadamard_entry(13, j), row13[j]);
  }
}

TEST(Hadamard, TransformerEngineSignVector) {
  const std::vector<int8_t> te = {1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1};
  EXPECT_EQ(rht_signs(16), te);
  EXPECT_EQ(rht_signs(16, false, 12345), te);  // the seed is ignored for the TE default
  uint32_t mask = 0;  // TE get_sign_from_vector: bit i <=> sign i == -1
  for (size_t i = 0; i < te.size(); ++i) mask |= (te[i] == -1 ? 1u : 0u) << i;
  EXPECT_EQ(mask, 0xD7E8u);
  EXPECT_EQ(kTeRhtSignMask, 0xD7E8u);
}

TEST(Hadamard, SeededSigns) {
  const uint64_t seed = 0xABCDEF;
  for (int n : {2, 16, 32, 64, 1024}) {
    const auto s = rht_signs(n, true, seed);
    ASSERT_EQ(s.size(), static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(s[static_cast<size_t>(i)], (sr_byte(seed, kRhtSignStream, static_cast<uint64_t>(i)) & 1u) ? -1 : 1);
    }
  }
  EXPECT_EQ(rht_signs(32, false, seed), rht_signs(32, true, seed));  // n != 16 always seeded
  const auto a = rht_signs(1024, true, seed), b = rht_signs(64, true, seed);
  EXPECT_TRUE(std::equal(b.begin(), b.end(), a.begin()));  // prefix property
  EXPECT_NE(rht_signs(64, true, seed), rht_signs(64, true, seed + 1));
  int neg = 0;
  for (int8_t v : a) neg += v < 0;
  EXPECT_GT(neg, 512 - 100);
  EXPECT_LT(neg, 512 + 100);
}

TEST(Hadamard, UnitVectorsGiveScaledRows) {
  const auto d = rht_signs(16);
  for (int i = 0; i < 16; ++i) {
    std::vector<float> x(16, 0.0f);
    x[static_cast<size_t>(i)] = 1.0f;
    rht_apply(x, 16, 16, d);
    for (int j = 0; j < 16; ++j) {
      EXPECT_EQ(x[static_cast<size_t>(j)],
                0.25f * static_cast<float>(d[static_cast<size_t>(i)] *
                                           hadamard_entry(static_cast<uint32_t>(i), static_cast<uint32_t>(j))));
    }
  }
}

TEST(Hadamard, DirectedRounding) {
  const std::vector<int8_t> plus4(4, 1), plus2(2, 1);
  // N = 4: S / 2 with S = 1 + 2^-24 is the midpoint of 0.5 and 0.5 + 2^-24: ties to even -> 0.5.
  std::vector<float> x = {1.0f, 0x1p-24f, 0.0f, 0.0f};
  rht_apply(x, 4, 4, plus4);
  EXPECT_EQ(x[0], 0.5f);
  EXPECT_EQ(x[1], 0.5f - 0x1p-25f);  // (1 - 2^-24) / 2, exact
  // Tiny negative value rounding to zero keeps its sign; an exact zero is +0.
  x = {-0x1p-149f, 0.0f, 0.0f, 0.0f};
  rht_apply(x, 4, 4, plus4);
  for (float v : x) {
    EXPECT_EQ(v, 0.0f);
    EXPECT_TRUE(std::signbit(v));  // -2^-150 ties to even (0) and keeps the sign
  }
  x = {-0x1p-148f, 0.0f, 0.0f, 0.0f};  // -2^-149: exact
  rht_apply(x, 4, 4, plus4);
  for (float v : x) EXPECT_EQ(v, -0x1p-149f);
  std::vector<float> y = {1.0f, 1.0f};
  rht_apply_inverse(y, 2, 2, std::vector<int8_t>{-1, -1});
  EXPECT_EQ(y[0], -std::sqrt(2.0f));  // RN(2/sqrt 2) = RN(sqrt 2), negated by the post-sign
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_FALSE(std::signbit(y[1])) << "exact zero must be +0 even under a -1 post-sign";
  // Overflow: 4 * FLT_MAX / 2 -> +Inf; the other outputs cancel to +0.
  x = {FLT_MAX, FLT_MAX, FLT_MAX, FLT_MAX};
  rht_apply(x, 4, 4, plus4);
  EXPECT_EQ(x[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(bits(x[1]), 0u);
  // N = 2: (FLT_MAX + FLT_MAX)/sqrt 2 = sqrt(2) FLT_MAX -> Inf.
  y = {FLT_MAX, FLT_MAX};
  rht_apply(y, 2, 2, plus2);
  EXPECT_EQ(y[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(bits(y[1]), 0u);
}

TEST(Hadamard, NonFiniteFollowsIeee) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<int8_t> p2(2, 1);
  std::vector<float> x = {inf, -inf};
  rht_apply(x, 2, 2, p2);
  EXPECT_TRUE(std::isnan(x[0]));  // inf + -inf
  EXPECT_EQ(x[1], inf);           // inf - -inf
  x = {inf, 1.0f};
  rht_apply(x, 2, 2, p2);
  EXPECT_EQ(x[0], inf);
  EXPECT_EQ(x[1], inf);
  x = {-inf, 3.0f};
  rht_apply_inverse(x, 2, 2, std::vector<int8_t>{1, -1});
  EXPECT_EQ(x[0], -inf);
  EXPECT_EQ(x[1], inf);  // -(-inf - 3)
  std::vector<float> t(16, 1.0f);
  t[5] = std::numeric_limits<float>::quiet_NaN();
  rht_apply(t, 16, 16, rht_signs(16));
  for (float v : t) EXPECT_TRUE(std::isnan(v));
}

// Fast path, exact path and oracle agree bit for bit, forward and inverse.
void check_against_oracle(int n, Kind kind, int tiles, uint64_t seed) {
  Gen g{seed};
  const auto d = rht_signs(n, true, seed);
  for (int t = 0; t < tiles; ++t) {
    const auto x = gen_tile(g, kind, n);
    for (bool inverse : {false, true}) {
      const auto want = oracle_tile(x, d, inverse);
      auto fast = x, exact = x;
      if (inverse) {
        rht_apply_inverse(fast, static_cast<size_t>(n), n, d);
      } else {
        rht_apply(fast, static_cast<size_t>(n), n, d);
      }
      rht_apply_exact(exact, static_cast<size_t>(n), n, d, false, inverse);
      expect_same_bits(fast, want, inverse ? "fast inverse" : "fast forward");
      expect_same_bits(exact, want, inverse ? "exact inverse" : "exact forward");
      if (::testing::Test::HasFatalFailure()) {
        ADD_FAILURE() << "n=" << n << " kind=" << static_cast<int>(kind) << " tile=" << t;
        return;
      }
    }
  }
}

TEST(Hadamard, OracleSmallSizes) {
  for (int n : {2, 4, 8, 16}) {
    for (Kind k : {Kind::Narrow, Kind::Wide, Kind::Bf16Grid, Kind::Cancel, Kind::Sparse, Kind::Tiny}) {
      check_against_oracle(n, k, 200, 1000 + static_cast<uint64_t>(n) * 10 + static_cast<uint64_t>(k));
    }
  }
}

TEST(Hadamard, OracleN32AndN128) {
  for (int n : {32, 64, 128}) {
    for (Kind k : {Kind::Narrow, Kind::Wide, Kind::Bf16Grid, Kind::Cancel, Kind::Tiny}) {
      check_against_oracle(n, k, n == 128 ? 12 : 30, 2000 + static_cast<uint64_t>(n) * 10 + static_cast<uint64_t>(k));
    }
  }
}

// Inputs whose exact output lies within about 2^-53 (relative) of a float rounding boundary, for
// N = 8 (S / (2 sqrt 2)): the fast path's double estimate cannot decide these, the exact
// comparison must. S = RN_double(m * 2 sqrt 2) for a float midpoint m, split into three floats.
TEST(Hadamard, NearMidpointsForIrrationalScale) {
  Gen g{77};
  const std::vector<int8_t> d(8, 1);
  int cases = 0;
  for (int t = 0; t < 3000; ++t) {
    const uint32_t e = 1 + g.next() % 250;
    const uint32_t mant = g.next() & 0x7FFFFF;
    const float f = std::bit_cast<float>((e << 23) | mant);
    const double m = (static_cast<double>(f) + static_cast<double>(std::nextafter(f, FLT_MAX))) * 0.5;
    const double s = m * (2.0 * std::sqrt(2.0));
    if (!(s < 0x1p127)) continue;
    const float x0 = static_cast<float>(s);
    const double r1 = s - static_cast<double>(x0);
    const float x1 = static_cast<float>(r1);
    const double r2 = r1 - static_cast<double>(x1);
    const float x2 = static_cast<float>(r2);
    if (static_cast<double>(x0) + static_cast<double>(x1) + static_cast<double>(x2) != s) continue;
    std::vector<float> x = {x0, x1, x2, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    if (g.next() & 1) {
      for (auto& v : x) v = -v;
    }
    const auto want = oracle_tile(x, d, false);
    auto fast = x, exact = x;
    rht_apply(fast, 8, 8, d);
    rht_apply_exact(exact, 8, 8, d, false, false);
    expect_same_bits(fast, want, "near-midpoint fast");
    expect_same_bits(exact, want, "near-midpoint exact");
    if (HasFatalFailure()) return;
    ++cases;
  }
  EXPECT_GT(cases, 2000);  // the rest would need a subnormal third part
}

// Fast and exact paths on many more tiles than the oracle can afford, all sizes up to 4096.
TEST(Hadamard, FastPathEqualsExactPath) {
  for (int n = 2; n <= 4096; n *= 2) {
    for (Kind k : {Kind::Narrow, Kind::Wide, Kind::Cancel, Kind::Tiny}) {
      Gen g{5000 + static_cast<uint64_t>(n) + static_cast<uint64_t>(k)};
      const int tiles = std::max(2, 4096 / n);
      std::vector<float> x;
      for (int t = 0; t < tiles; ++t) {
        const auto tile = gen_tile(g, k, n);
        x.insert(x.end(), tile.begin(), tile.end());
      }
      const auto d = rht_signs(n, true, static_cast<uint64_t>(n));
      auto fast = x, exact = x;
      rht_apply(fast, static_cast<size_t>(n) * 2, n, d);  // two tiles per row
      rht_apply_exact(exact, static_cast<size_t>(n) * 2, n, d, false, false);
      expect_same_bits(fast, exact, "fast vs exact");
      if (HasFatalFailure()) {
        ADD_FAILURE() << "n=" << n << " kind=" << static_cast<int>(k);
        return;
      }
    }
  }
}

TEST(Hadamard, TilesAreIndependentAlongRows) {
  Gen g{31};
  const int n = 32;
  const size_t rows = 3, cols = 4 * n;
  std::vector<float> x(rows * cols);
  for (auto& v : x) v = gen_float(g, Kind::Narrow);
  const auto d = rht_signs(n, true, 9);
  auto all = x;
  rht_apply(all, cols, n, d);
  for (size_t t = 0; t < x.size(); t += n) {
    std::vector<float> tile(x.begin() + static_cast<std::ptrdiff_t>(t), x.begin() + static_cast<std::ptrdiff_t>(t + n));
    rht_apply(tile, n, n, d);
    for (int j = 0; j < n; ++j) ASSERT_EQ(bits(all[t + static_cast<size_t>(j)]), bits(tile[static_cast<size_t>(j)]));
  }
}

TEST(Hadamard, RoundTrip) {
  for (int n : {2, 16, 32, 64, 128, 1024}) {
    Gen g{static_cast<uint64_t>(n)};
    const auto d = rht_signs(n, true, 3);
    std::vector<float> x(static_cast<size_t>(n) * 8);
    for (auto& v : x) v = gen_float(g, Kind::Narrow);
    auto y = x;
    rht_apply(y, static_cast<size_t>(n), n, d);
    rht_apply_inverse(y, static_cast<size_t>(n), n, d);
    for (size_t t = 0; t < x.size(); t += static_cast<size_t>(n)) {
      float amax = 0;
      for (int i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[t + static_cast<size_t>(i)]));
      // Each rounding is within 2^-24 relative of an output bounded by sqrt(N) amax; the inverse
      // spreads N such errors with weight 1/sqrt(N) each, plus its own rounding.
      const double bound = (std::sqrt(static_cast<double>(n)) + 1.0) * 0x1p-24 * amax * std::sqrt(static_cast<double>(n));
      for (int i = 0; i < n; ++i) {
        const size_t k = t + static_cast<size_t>(i);
        ASSERT_LE(std::fabs(static_cast<double>(y[k]) - x[k]), bound) << "n=" << n;
      }
    }
  }
  // Small integers with N = 16: every output is a multiple of 1/4 below 2^10, so both directions
  // are exact and the round trip is the identity.
  Gen g{8};
  std::vector<float> x(16 * 16);
  for (auto& v : x) v = static_cast<float>(static_cast<int>(g.next() % 17) - 8);
  auto y = x;
  rht_apply(y, 16, 16, rht_signs(16));
  rht_apply_inverse(y, 16, 16, rht_signs(16));
  EXPECT_EQ(y, x);
}

TEST(Hadamard, Bf16OptionRoundsTheFp32Result) {
  Gen g{21};
  for (int n : {16, 32}) {
    std::vector<float> x(static_cast<size_t>(n) * 64);
    for (auto& v : x) v = gen_float(g, Kind::Narrow);
    const auto d = rht_signs(n, true, 1);
    auto f32 = x, b16 = x;
    rht_apply(f32, static_cast<size_t>(n), n, d, false);
    rht_apply(b16, static_cast<size_t>(n), n, d, true);
    int changed = 0;
    for (size_t k = 0; k < x.size(); ++k) {
      ASSERT_EQ(bits(b16[k]), bits(bf16_to_float(float_to_bf16_rne(f32[k]))));
      ASSERT_EQ(bits(b16[k]) & 0xFFFFu, 0u);
      changed += b16[k] != f32[k];
    }
    EXPECT_GT(changed, static_cast<int>(x.size()) / 2);  // random FP32 results rarely sit on the BF16 grid
  }
}

TEST(Hadamard, RejectsBadArguments) {
  std::vector<float> x(48, 1.0f);
  const auto d16 = rht_signs(16);
  EXPECT_THROW(rht_apply(x, 48, 0, d16), std::invalid_argument);
  EXPECT_THROW(rht_apply(x, 48, 1, d16), std::invalid_argument);
  EXPECT_THROW(rht_apply(x, 48, 24, d16), std::invalid_argument);
  EXPECT_THROW(rht_apply(x, 24, 16, d16), std::invalid_argument);  // 24 % 16 != 0
  EXPECT_THROW(rht_apply(x, 32, 16, d16), std::invalid_argument);  // 48 % 32 != 0
  EXPECT_THROW(rht_apply(x, 48, 8, d16), std::invalid_argument);   // 16 signs for N = 8
  std::vector<int8_t> bad = d16;
  bad[3] = 0;
  EXPECT_THROW(rht_apply(x, 48, 16, bad), std::invalid_argument);
  EXPECT_THROW(rht_signs(12), std::invalid_argument);
  EXPECT_NO_THROW(rht_apply(x, 16, 16, d16));
  EXPECT_TRUE(is_rht_size(2) && is_rht_size(1 << 20) && !is_rht_size(0) && !is_rht_size(6));
}

}  // namespace
}  // namespace fp4sim
