// Random Hadamard transform: matrix facts, signs, and correct rounding against a
// Boost.Multiprecision oracle (exact integer sums, 1200-bit division by sqrt(N)); every path
// (AVX-512, AVX2, scalar reference, exact multi-word) against the oracle and the exact path.
#include <gtest/gtest.h>

#include <bit>
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/multiprecision/cpp_int.hpp>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
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

const char* path_name(RhtPath p) {
  switch (p) {
    case RhtPath::Auto: return "auto";
    case RhtPath::Avx512: return "avx512";
    case RhtPath::Avx2: return "avx2";
    case RhtPath::Reference: return "reference";
    case RhtPath::Exact: return "exact";
  }
  return "?";
}

// Every path this CPU can run (the vector ones only where the CPU has them; the test says which).
const std::vector<RhtPath>& paths() {
  static const std::vector<RhtPath> p = [] {
    std::vector<RhtPath> v;
    for (RhtPath q : {RhtPath::Auto, RhtPath::Avx512, RhtPath::Avx2, RhtPath::Reference, RhtPath::Exact}) {
      std::vector<float> x(16, 1.0f), y(16);
      if (rht_apply_path(x, y, 16, 16, rht_signs(16), false, false, q)) v.push_back(q);
    }
    return v;
  }();
  return p;
}

std::vector<float> run_path(const std::vector<float>& x, size_t cols, int n, const std::vector<int8_t>& d, bool bf16,
                            bool inverse, RhtPath path) {
  std::vector<float> y(x.size(), -12345.0f);
  EXPECT_TRUE(rht_apply_path(x, y, cols, n, d, bf16, inverse, path));
  return y;
}

float bf16_of(float f) { return bf16_to_float(float_to_bf16_rne(f)); }

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

// Every path and the oracle agree bit for bit, forward and inverse, FP32 and BF16 output.
void check_against_oracle(int n, Kind kind, int tiles, uint64_t seed) {
  Gen g{seed};
  const auto d = rht_signs(n, true, seed);
  for (int t = 0; t < tiles; ++t) {
    const auto x = gen_tile(g, kind, n);
    for (bool inverse : {false, true}) {
      const auto want = oracle_tile(x, d, inverse);
      for (bool bf16 : {false, true}) {
        std::vector<float> want_b = want;
        if (bf16) {
          for (auto& v : want_b) v = bf16_of(v);
        }
        for (RhtPath p : paths()) {
          expect_same_bits(run_path(x, static_cast<size_t>(n), n, d, bf16, inverse, p), want_b, path_name(p));
          if (::testing::Test::HasFatalFailure()) {
            ADD_FAILURE() << "n=" << n << " kind=" << static_cast<int>(kind) << " tile=" << t << " inverse=" << inverse
                          << " bf16=" << bf16;
            return;
          }
        }
      }
      // The in-place entry points are the Auto path.
      auto fast = x;
      if (inverse) {
        rht_apply_inverse(fast, static_cast<size_t>(n), n, d);
      } else {
        rht_apply(fast, static_cast<size_t>(n), n, d);
      }
      expect_same_bits(fast, want, inverse ? "rht_apply_inverse" : "rht_apply");
      if (::testing::Test::HasFatalFailure()) return;
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
// N = 8, 32, 128 (S / sqrt(N) irrational): the double estimate cannot decide these, the exact
// comparison must (on the vector paths: the per-lane fix-up). S = RN_double(m * sqrt(N)) for a
// float midpoint m, split into three floats; with all signs +1, output 0 is S / sqrt(N).
TEST(Hadamard, NearMidpointsForIrrationalScale) {
  for (int n : {8, 32, 128}) {
    Gen g{77 + static_cast<uint64_t>(n)};
    const std::vector<int8_t> d(static_cast<size_t>(n), 1);
    int cases = 0;
    const int tries = n == 128 ? 150 : n == 32 ? 600 : 1500;  // the oracle is slow at large N
    for (int t = 0; t < tries; ++t) {
      const uint32_t e = 1 + g.next() % 250;
      const uint32_t mant = g.next() & 0x7FFFFF;
      const float f = std::bit_cast<float>((e << 23) | mant);
      const double m = (static_cast<double>(f) + static_cast<double>(std::nextafter(f, FLT_MAX))) * 0.5;
      const double s = m * std::sqrt(static_cast<double>(n));
      if (!(s < 0x1p127)) continue;
      const float x0 = static_cast<float>(s);
      const double r1 = s - static_cast<double>(x0);
      const float x1 = static_cast<float>(r1);
      const double r2 = r1 - static_cast<double>(x1);
      const float x2 = static_cast<float>(r2);
      if (static_cast<double>(x0) + static_cast<double>(x1) + static_cast<double>(x2) != s) continue;
      std::vector<float> x(static_cast<size_t>(n), 0.0f);
      x[0] = x0;
      x[1] = x1;
      x[2] = x2;
      if (g.next() & 1) {
        for (auto& v : x) v = -v;
      }
      const auto want = oracle_tile(x, d, false);
      for (RhtPath p : paths()) {
        expect_same_bits(run_path(x, static_cast<size_t>(n), n, d, false, false, p), want, path_name(p));
        if (HasFatalFailure()) {
          ADD_FAILURE() << "n=" << n << " case " << t;
          return;
        }
      }
      ++cases;
    }
    EXPECT_GT(cases, tries * 2 / 3) << n;  // the rest would need a subnormal third part
  }
}

// Every path against the exact path on many more tiles than the oracle can afford, all sizes
// up to 4096, forward and inverse, FP32 and BF16.
TEST(Hadamard, AllPathsEqualExactPath) {
  for (int n = 2; n <= 4096; n *= 2) {
    for (Kind k : {Kind::Narrow, Kind::Wide, Kind::Cancel, Kind::Tiny, Kind::Sparse, Kind::Bf16Grid}) {
      Gen g{5000 + static_cast<uint64_t>(n) + static_cast<uint64_t>(k)};
      const int tiles = std::max(2, 2048 / n) + 1;  // an odd count: batches plus a tail
      std::vector<float> x;
      for (int t = 0; t < tiles; ++t) {
        const auto tile = gen_tile(g, k, n);
        x.insert(x.end(), tile.begin(), tile.end());
      }
      const auto d = rht_signs(n, true, static_cast<uint64_t>(n));
      for (bool inverse : {false, true}) {
        if (inverse && n > 256) continue;  // the exact path is slow under the sanitizers
        auto exact32 = x;
        rht_apply_exact(exact32, x.size(), n, d, false, inverse);  // one row of many tiles
        for (bool bf16 : {false, true}) {
          auto exact = exact32;  // BF16 output = RNE of the FP32 result (the oracle tests check this per path)
          if (bf16) {
            for (auto& v : exact) v = bf16_of(v);
          }
          for (RhtPath p : paths()) {
            if (p == RhtPath::Exact) continue;  // the reference itself
            expect_same_bits(run_path(x, x.size(), n, d, bf16, inverse, p), exact, path_name(p));
            if (HasFatalFailure()) {
              ADD_FAILURE() << "n=" << n << " kind=" << static_cast<int>(k) << " inverse=" << inverse << " bf16=" << bf16;
              return;
            }
          }
        }
      }
    }
  }
}

// A tile whose exact sum lies exactly on, or a hair off, a float rounding boundary, for
// N = 4^k (S / 2^k dyadic, so real ties exist): x0 = 2^k f, x1 = 2^k ulp(f) / 2 (so output j is
// f +- ulp/2, both ties), plus x2 = +-2^k ulp(f) 2^-q that moves it just off the tie. Small q
// keeps the tile within the vector certificate, large q (or a subnormal x2) pushes it out.
std::vector<float> tie_tile(Gen& g, int n) {
  const int k = std::countr_zero(static_cast<unsigned>(n)) / 2;
  std::vector<float> x(static_cast<size_t>(n), 0.0f);
  const uint32_t e = 30 + g.next() % 180;
  const float f = std::bit_cast<float>((e << 23) | (g.next() & 0x7FFFFF));
  const float ulp = std::nextafter(f, FLT_MAX) - f;
  x[0] = std::ldexp(f, k);
  x[1] = std::ldexp(ulp, k - 1);
  const uint32_t r = g.next();
  if (r % 3 != 0) x[2] = std::ldexp(ulp, k - 1 - static_cast<int>(1 + g.next() % 40)) * ((r & 8) ? -1.0f : 1.0f);
  if (r & 16) x[static_cast<size_t>(n - 1)] = std::ldexp(ulp, k - 60);  // far below: fails the certificate
  if (r & 32) {
    for (auto& v : x) v = -v;
  }
  for (size_t i = 0; i < x.size(); ++i) {  // shuffle positions so every H row sign pattern is met
    const size_t j = g.next() % x.size();
    std::swap(x[i], x[j]);
  }
  return x;
}

TEST(Hadamard, TiesAndNearTiesOnEveryPath) {
  for (int n : {4, 16, 64, 256}) {
    Gen g{900 + static_cast<uint64_t>(n)};
    const auto d = rht_signs(n, true, 5);
    for (int t = 0; t < (n <= 16 ? 400 : 60); ++t) {
      const auto x = tie_tile(g, n);
      for (bool inverse : {false, true}) {
        const auto want = oracle_tile(x, d, inverse);
        for (RhtPath p : paths()) {
          expect_same_bits(run_path(x, static_cast<size_t>(n), n, d, false, inverse, p), want, path_name(p));
          if (HasFatalFailure()) {
            ADD_FAILURE() << "n=" << n << " tile " << t;
            return;
          }
        }
      }
    }
  }
}

// The vector certificate (largest - smallest exponent field <= 29 - log2 N) is tight: one more
// and an exact sum can need 54 bits. These tiles have spread 30 - log2 N and an output-0 sum
// T = F 2^30 + 2^29 + 1 (units of 2^-60; F even): exactly one unit above the float midpoint, so
// the right answer rounds up, while any double that drops the last unit lands on the midpoint
// and ties to even (down). Made of a tiny (2^23 + 1), one 63 * 2^23 and N - 3 terms c_i 2^s with
// s = 30 - log2 N and sum c_i = F 2^log2N. Even log2 N only (odd N has no float ties).
std::vector<float> certificate_trap(Gen& g, int n, const std::vector<int8_t>& d) {
  const int lg = std::countr_zero(static_cast<unsigned>(n));
  const int s = 30 - lg;
  const int terms = n - 3;
  const uint64_t lo = uint64_t{1} << 23, hi = (uint64_t{1} << 24) - 1;
  // F even in [2^23, terms * 2^(24 - lg)) so that the c_i fit in [2^23, 2^24).
  const uint64_t fmax = std::min<uint64_t>(hi, (static_cast<uint64_t>(terms) * hi) >> lg);
  const uint64_t fmin = ((static_cast<uint64_t>(terms) * lo) >> lg) + 1;
  uint64_t f = std::max<uint64_t>(lo, fmin) + g.next() % (fmax - std::max<uint64_t>(lo, fmin));
  f &= ~uint64_t{1};
  const uint64_t total = f << lg;  // sum of the c_i
  std::vector<uint64_t> c(static_cast<size_t>(terms), total / static_cast<uint64_t>(terms));
  c[0] += total % static_cast<uint64_t>(terms);
  for (int r = 0; r < 4 * terms; ++r) {  // move random amounts between terms, staying in range
    const size_t i = g.next() % c.size(), j = g.next() % c.size();
    const uint64_t room = std::min(c[i] - lo, hi - c[j]);
    if (room == 0) continue;
    const uint64_t m = g.next() % (room + 1);
    c[i] -= m;
    c[j] += m;
  }
  std::vector<double> a;  // magnitudes, in units of 2^-60
  a.push_back(static_cast<double>(lo + 1));
  a.push_back(63.0 * 0x1p23);
  for (uint64_t v : c) a.push_back(std::ldexp(static_cast<double>(v), s));
  a.push_back(0.0);
  for (size_t i = 0; i < a.size(); ++i) {
    const size_t j = g.next() % a.size();
    std::swap(a[i], a[j]);
  }
  std::vector<float> x(static_cast<size_t>(n));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::ldexp(a[i], -60)) * d[i];  // exact
  return x;
}

TEST(Hadamard, CertificateBoundIsTight) {
  for (int n : {16, 64, 256}) {
    Gen g{321 + static_cast<uint64_t>(n)};
    const auto d = rht_signs(n, n != 16, 2);
    int traps = 0;
    for (int t = 0; t < (n == 256 ? 20 : 100); ++t) {
      const auto x = certificate_trap(g, n, d);
      const auto want = oracle_tile(x, d, false);
      // The trap is real: a plain double sum of output 0 rounds to the wrong float.
      double naive = 0;
      for (size_t i = 0; i < x.size(); ++i) naive += static_cast<double>(x[i]) * d[i];
      const int k = std::countr_zero(static_cast<unsigned>(n)) / 2;
      traps += bits(static_cast<float>(std::ldexp(naive, -k))) != bits(want[0]);
      for (RhtPath p : paths()) {
        expect_same_bits(run_path(x, static_cast<size_t>(n), n, d, false, false, p), want, path_name(p));
        if (HasFatalFailure()) {
          ADD_FAILURE() << "n=" << n << " tile " << t;
          return;
        }
      }
    }
    EXPECT_GT(traps, 0) << n;
  }
}

// Large tensors where most tiles pass the vector certificate in batches and a few do not (an
// outlier, a subnormal, an Inf, a NaN, all zeros with -0.0): the batch falls back tile by tile and
// only the bad tile takes the reference path. Tails shorter than a batch included.
TEST(Hadamard, MixedBatchesOnEveryPath) {
  const float inf = std::numeric_limits<float>::infinity();
  for (int n : {4, 8, 16, 32, 64, 128, 512}) {
    Gen g{4242 + static_cast<uint64_t>(n)};
    const size_t tiles = static_cast<size_t>(std::max(24, 8000 / n)) + 3;  // not a multiple of a batch
    std::vector<float> x(tiles * static_cast<size_t>(n));
    for (auto& v : x) v = gen_float(g, Kind::Narrow);
    for (int s = 0; s < 40; ++s) {
      const size_t i = g.next() % x.size();
      switch (s % 8) {
        case 0: x[i] = 0x1p100f; break;
        case 1: x[i] = -0x1p-140f; break;  // subnormal
        case 2: x[i] = 0x1p-40f; break;    // wide spread, exact in the reference's double path
        case 3: x[i] = inf; break;
        case 4: x[i] = -inf; break;
        case 5: x[i] = std::numeric_limits<float>::quiet_NaN(); break;
        case 6: {  // a whole tile of signed zeros
          const size_t t0 = i - i % static_cast<size_t>(n);
          for (int j = 0; j < n; ++j) x[t0 + static_cast<size_t>(j)] = (j & 1) ? -0.0f : 0.0f;
          break;
        }
        default: x[i] = 0.0f;
      }
    }
    const auto d = rht_signs(n, n != 16, 17);
    for (bool inverse : {false, true}) {
      for (bool bf16 : {false, true}) {
        auto exact = x;
        rht_apply_exact(exact, static_cast<size_t>(n), n, d, bf16, inverse);  // NaN tiles too: the exact call
        for (RhtPath p : paths()) {
          if (p == RhtPath::Exact) continue;  // the reference itself
          expect_same_bits(run_path(x, static_cast<size_t>(n), n, d, bf16, inverse, p), exact, path_name(p));
          if (HasFatalFailure()) {
            ADD_FAILURE() << "n=" << n << " inverse=" << inverse << " bf16=" << bf16;
            return;
          }
        }
      }
    }
  }
}

TEST(Hadamard, OutOfPlaceEqualsInPlace) {
  Gen g{61};
  const int n = 16;
  std::vector<float> x(64 * 48);
  for (auto& v : x) v = gen_float(g, Kind::Narrow);
  const auto d = rht_signs(n);
  auto inplace = x;
  rht_apply(inplace, 48, n, d, true);
  std::vector<float> out(x.size());
  rht_apply_to(x, out, 48, n, d, true);
  expect_same_bits(out, inplace, "rht_apply_to");
  auto same = x;  // in == out is allowed
  rht_apply_to(same, same, 48, n, d, true);
  expect_same_bits(same, inplace, "rht_apply_to in place");
  auto inv = inplace;
  rht_apply_inverse(inv, 48, n, d);
  rht_apply_to(inplace, out, 48, n, d, false, true);
  expect_same_bits(out, inv, "rht_apply_to inverse");
  // Partial overlap and size mismatch are rejected.
  std::vector<float> big(x.size() + 16);
  EXPECT_THROW(rht_apply_to(std::span<const float>(big.data(), x.size()), std::span<float>(big.data() + 16, x.size()),
                            48, n, d),
               std::invalid_argument);
  EXPECT_THROW(rht_apply_to(x, std::span<float>(big.data(), x.size() - 48), 48, n, d), std::invalid_argument);
  // Bad arguments throw before anything is written, whatever the path.
  std::vector<float> y(x.size(), 7.0f);
  for (RhtPath p : paths()) {
    EXPECT_THROW(rht_apply_path(x, y, 40, n, d, false, false, p), std::invalid_argument);
  }
  for (float v : y) ASSERT_EQ(v, 7.0f);
}

TEST(Hadamard, ReportsWhichVectorPathsRan) {
  // Not an assertion about the machine: it records which paths the other tests covered here.
  std::string ran;
  for (RhtPath p : paths()) ran += std::string(" ") + path_name(p);
  RecordProperty("rht_paths", ran);
  std::printf("RHT paths tested on this CPU:%s\n", ran.c_str());
  EXPECT_GE(paths().size(), 3u);  // auto, reference and exact always run
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
