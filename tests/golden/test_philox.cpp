// Philox4x32-10 and the SPEC §3 stochastic-rounding byte stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "fp4sim/philox.hpp"

namespace fp4sim {
namespace {

struct Kat {
  int rounds;
  std::array<uint32_t, 4> ctr;
  std::array<uint32_t, 2> key;
  std::array<uint32_t, 4> expect;
};

// Random123 tests/kat_vectors (DEShawResearch/random123), the "philox4x32 7" and "philox4x32 10"
// lines: counter (4 words), key (2 words), expected output (4 words).
constexpr Kat kKats[] = {
    {7, {0, 0, 0, 0}, {0, 0}, {0x5f6fb709, 0x0d893f64, 0x4f121f81, 0x4f730a48}},
    {7,
     {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x5207ddc2, 0x45165e59, 0x4d8ee751, 0x8c52f662}},
    {7,
     {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0x4dfccaba, 0x190a87f0, 0xc47362ba, 0xb6b5242a}},
    {10, {0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {10,
     {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {10,
     {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

// The generator is constexpr: the known answers hold at compile time too.
static_assert(philox4x32_10({0, 0, 0, 0}, {0, 0}) ==
              std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});

TEST(Philox, Random123KnownAnswers) {
  for (const Kat& k : kKats) {
    EXPECT_EQ(philox4x32_r(k.rounds, k.ctr, k.key), k.expect) << "rounds " << k.rounds;
    if (k.rounds == 10) {
      EXPECT_EQ(philox4x32_10(k.ctr, k.key), k.expect);
    }
  }
}

// Byte b of a block read through memory on this little-endian host: independent of the library's
// shift-based extraction.
uint8_t mem_byte(const std::array<uint32_t, 4>& w, unsigned b) {
  static_assert(std::endian::native == std::endian::little);
  uint8_t bytes[16];
  std::memcpy(bytes, w.data(), 16);
  return bytes[b];
}

TEST(Philox, CounterAndKeyLayout) {
  const uint64_t seed = 0x0123456789ABCDEFull;
  const std::array<uint32_t, 2> key{0x89ABCDEFu, 0x01234567u};
  const uint32_t stream = 0xCAFEF00Du;
  // i / 16 = 2^32 + 3: low word 3 in counter word 0, high word 1 in counter word 1.
  const uint64_t base = ((uint64_t{1} << 32) + 3) * 16;
  const auto w = philox4x32_10({3u, 1u, stream, 0u}, key);
  EXPECT_EQ(philox_block(seed, stream, (uint64_t{1} << 32) + 3), w);
  for (unsigned b = 0; b < 16; ++b) EXPECT_EQ(sr_byte(seed, stream, base + b), mem_byte(w, b)) << b;
  // A different stream, seed half or block gives different bits.
  EXPECT_NE(philox_block(seed, stream + 1, 3), philox_block(seed, stream, 3));
  EXPECT_NE(philox_block(seed ^ (uint64_t{1} << 40), stream, 3), philox_block(seed, stream, 3));
  EXPECT_NE(philox_block(seed, stream, 4), philox_block(seed, stream, 3));
}

TEST(Philox, ScalarMatchesRawGeneratorOnRandomIndices) {
  // Indices, seeds and streams drawn from the generator itself (any fixed list would do).
  for (uint64_t t = 0; t < 2000; ++t) {
    const auto r = philox4x32_10({static_cast<uint32_t>(t), 0x1234u, 0x5678u, 0u}, {0x9abcu, 0xdef0u});
    const uint64_t seed = (uint64_t{r[0]} << 32) | r[1];
    const uint64_t i = (uint64_t{r[2]} << 32) | r[3];
    const uint32_t stream = r[0] ^ r[3];
    const auto w = philox4x32_10({static_cast<uint32_t>(i >> 4), static_cast<uint32_t>(i >> 36), stream, 0u},
                                 {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
    ASSERT_EQ(sr_byte(seed, stream, i), mem_byte(w, static_cast<unsigned>(i % 16))) << t;
  }
}

TEST(Philox, BulkEqualsScalarAtEveryOffset) {
  const uint64_t seed = 0xFEEDFACE12345678ull;
  const uint32_t stream = 7;
  const uint64_t bases[] = {0, 1ull << 20, (1ull << 36) - 40, std::numeric_limits<uint64_t>::max() - 200};
  size_t checked = 0;
  for (uint64_t base : bases) {
    for (uint64_t off = 0; off < 40; ++off) {
      for (size_t n = 0; n <= 70; ++n) {
        std::vector<uint8_t> bulk(n + 1, 0xA5);
        sr_bytes(seed, stream, base + off, n, bulk.data());
        for (size_t k = 0; k < n; ++k) {
          ASSERT_EQ(bulk[k], sr_byte(seed, stream, base + off + k)) << base << "+" << off << " n=" << n;
          ++checked;
        }
        ASSERT_EQ(bulk[n], 0xA5) << "wrote past n";
      }
    }
  }
  EXPECT_GT(checked, 200000u);
}

// Long runs take the lane-parallel paths (runs of sixteen or eight whole counter blocks, the
// CPU's best); bases where a run of blocks carries from the low counter word into the high one,
// and the end of the index space. PhiloxSimd below forces each path.
TEST(Philox, BulkLongRunsEqualScalar) {
  const uint64_t seed = 0x0DDBA11C0FFEEull;
  const uint64_t bases[] = {0, (uint64_t{1} << 36) - 40, (uint64_t{5} << 36) - 16 * 3,
                            std::numeric_limits<uint64_t>::max() - 700};
  size_t checked = 0;
  for (uint32_t stream : {0u, 0xFFFFFFFFu}) {
    for (uint64_t base : bases) {
      for (uint64_t off : {0u, 1u, 15u, 16u, 17u}) {
        for (size_t n : {size_t{128}, size_t{129}, size_t{255}, size_t{256}, size_t{640}}) {
          if (base > std::numeric_limits<uint64_t>::max() - off - n) continue;
          std::vector<uint8_t> bulk(n + 1, 0x5A);
          sr_bytes(seed, stream, base + off, n, bulk.data());
          for (size_t k = 0; k < n; ++k) {
            ASSERT_EQ(bulk[k], sr_byte(seed, stream, base + off + k)) << base << "+" << off << " n=" << n;
            ++checked;
          }
          ASSERT_EQ(bulk[n], 0x5A) << "wrote past n";
        }
      }
    }
  }
  EXPECT_GT(checked, 50000u);
}

// The bytes of [first, first + n) from philox_block alone, one call per block: the reference for
// every sr_bytes path.
std::vector<uint8_t> block_ref(uint64_t seed, uint32_t stream, uint64_t first, size_t n) {
  std::vector<uint8_t> r(n);
  std::array<uint32_t, 4> w{};
  uint64_t cur = ~uint64_t{0};  // never a block index (those are below 2^60)
  for (size_t k = 0; k < n; ++k) {
    const uint64_t i = first + k;
    if ((i >> 4) != cur) w = philox_block(seed, stream, cur = i >> 4);
    r[k] = mem_byte(w, static_cast<unsigned>(i & 15u));
  }
  return r;
}

// The best set_philox_simd level this CPU runs, found independently of the library.
int cpu_best_level() {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx2")) return 0;
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                 __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw")
             ? 2
             : 1;
#else
  return 0;
#endif
}

// Sets a level for one scope and puts the previous one back however the test ends.
struct ScopedSimd {
  int prev;
  explicit ScopedSimd(int level) : prev(set_philox_simd(level)) {}
  ~ScopedSimd() { set_philox_simd(prev); }
};

TEST(PhiloxSimd, LevelDefaultsToBestAndClamps) {
  const int best = cpu_best_level();
  const int def = set_philox_simd(0);
  EXPECT_EQ(def, best) << "the default is the best the CPU runs";
  EXPECT_EQ(set_philox_simd(7), 0);
  EXPECT_EQ(set_philox_simd(1), best) << "7 is clamped to what the CPU runs";
  EXPECT_EQ(set_philox_simd(-3), std::min(1, best));
  EXPECT_EQ(set_philox_simd(def), 0) << "-3 is clamped to 0";
  if (best < 2) std::printf("note: no AVX-512 here, level 2 runs as %d\n", best);
}

// sr_bytes at one level against block_ref, with guard bytes on both sides.
::testing::AssertionResult level_matches(int level, uint64_t seed, uint32_t stream, uint64_t first, size_t n) {
  const ScopedSimd s(level);
  std::vector<uint8_t> buf(n + 64, 0xC3);
  sr_bytes(seed, stream, first, n, buf.data() + 32);
  const std::vector<uint8_t> ref = block_ref(seed, stream, first, n);
  const auto where = [&] {
    return ::testing::Message() << " (level " << level << ", seed " << seed << ", stream " << stream << ", first_i "
                                << first << ", n " << n << ")";
  };
  for (size_t k = 0; k < 32; ++k) {
    if (buf[k] != 0xC3) return ::testing::AssertionFailure() << "wrote before out" << where();
    if (buf[32 + n + k] != 0xC3) return ::testing::AssertionFailure() << "wrote past n" << where();
  }
  for (size_t k = 0; k < n; ++k) {
    if (buf[32 + k] != ref[k]) {
      return ::testing::AssertionFailure() << "byte " << k << " (i = " << first + k << "): " << int{buf[32 + k]}
                                           << " != " << int{ref[k]} << where();
    }
  }
  return ::testing::AssertionSuccess();
}

// Lengths that leave every mix of sixteen-block, eight-block and scalar pieces.
constexpr size_t kLens[] = {1, 127, 128, 255, 256, 257, 383, 384, 400, 511, 512, 513, 1000, 4099};

// Runs crossing block k * 2^32 (index k * 2^36), where the low counter word wraps and the high one
// carries: the crossing falls on every lane of a sixteen-block run (j < 16) and of the eight-block
// run after it (16 <= j < 24), from aligned and unaligned starts. (2^28 - 1) * 2^36 is the last
// such edge below the end of the index space; at 2^35 and 5 * 2^36 + 2^35 the low word's top bit
// flips with no carry (where a signed compare would see one).
TEST(PhiloxSimd, EveryLevelMatchesBlocksAcrossTheCarry) {
  const uint64_t edges[] = {uint64_t{1} << 35, uint64_t{1} << 36, uint64_t{5} << 36,
                            (uint64_t{5} << 36) | (uint64_t{1} << 35), ((uint64_t{1} << 28) - 1) << 36};
  size_t cases = 0;
  for (int level = 0; level <= 2; ++level) {
    for (uint64_t edge : edges) {
      for (uint64_t j = 0; j <= 24; ++j) {
        for (uint64_t off : {0u, 1u, 8u, 15u, 16u, 17u, 255u}) {
          for (size_t n : kLens) {
            const uint64_t first = edge - 16 * j + off;
            ASSERT_TRUE(level_matches(level, 0x0123456789ABCDEFull * ((edge >> 35) + j),
                                      static_cast<uint32_t>((edge >> 35) * 0x9E3779B9u), first, n));
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 3 * std::size(edges) * 25 * 7 * std::size(kLens));
}

// Ranges ending at the last index 2^64 - 1 (block 2^60 - 1) or just before it.
TEST(PhiloxSimd, EveryLevelMatchesBlocksAtTheEndOfTheIndexSpace) {
  const uint64_t last = std::numeric_limits<uint64_t>::max();
  for (int level = 0; level <= 2; ++level) {
    for (uint64_t gap : {0u, 1u, 15u, 16u, 17u, 300u}) {
      for (size_t n : kLens) {
        for (uint32_t stream : {0u, 0xFFFFFFFFu}) {
          ASSERT_TRUE(level_matches(level, ~uint64_t{0} - gap, stream, last - gap - (n - 1), n));
        }
      }
    }
  }
}

// Seeds, streams, starts and lengths drawn from the generator (any fixed list would do): starts
// anywhere in the index space, and near multiples of 2^36 (the carry) within +-4096.
TEST(PhiloxSimd, EveryLevelMatchesBlocksOnRandomRanges) {
  const uint64_t last = std::numeric_limits<uint64_t>::max();
  for (uint32_t t = 0; t < 400; ++t) {
    const auto r = philox4x32_10({t, 0xA5A5u, 0x5A5Au, 0u}, {0x1357u, 0x2468u});
    const auto q = philox4x32_10({t, 0xA5A5u, 0x5A5Au, 1u}, {0x1357u, 0x2468u});
    const uint64_t seed = (uint64_t{r[0]} << 32) | r[1];
    const uint32_t stream = r[2];
    const size_t n = q[0] % 3000;
    uint64_t first = (uint64_t{r[3]} << 32) | q[1];
    if (t % 2) first = (first & ~((uint64_t{1} << 36) - 1)) + (q[2] % 8192) - 4096;  // may wrap: fine
    if (first > last - n + 1 && n > 0) first = last - n + 1;
    for (int level = 0; level <= 2; ++level) ASSERT_TRUE(level_matches(level, seed, stream, first, n)) << t;
  }
}

TEST(Philox, EndOfIndexSpaceDoesNotWrap) {
  const uint64_t last = std::numeric_limits<uint64_t>::max();
  std::vector<uint8_t> b(16);
  sr_bytes(1, 2, last - 15, 16, b.data());  // exactly the last block
  for (uint64_t k = 0; k < 16; ++k) EXPECT_EQ(b[k], sr_byte(1, 2, last - 15 + k));
  // The last block's bytes come from block 2^60 - 1.
  EXPECT_EQ(b[15], mem_byte(philox_block(1, 2, (uint64_t{1} << 60) - 1), 15));
}

TEST(Philox, ThreadCountIndependence) {
  const size_t n = 100003;
  const uint64_t first = 12345;  // not a multiple of 16
  std::vector<uint8_t> ref(n);
  sr_bytes(42, 3, first, n, ref.data());
  for (unsigned threads : {1u, 2u, 7u}) {
    std::vector<uint8_t> out(n, 0);
    std::vector<std::thread> th;
    // Uneven shards whose borders fall inside Philox blocks.
    const size_t chunk = n / threads + 5;
    for (unsigned t = 0; t < threads; ++t) {
      const size_t b = std::min(n, t * chunk), e = std::min(n, b + chunk);
      const size_t end = t + 1 == threads ? n : e;
      th.emplace_back([&, b, end] { sr_bytes(42, 3, first + b, end - b, out.data() + b); });
    }
    for (auto& x : th) x.join();
    EXPECT_EQ(out, ref) << threads << " threads";
  }
  for (size_t k = 0; k < n; k += 997) EXPECT_EQ(ref[k], sr_byte(42, 3, first + k));
}

TEST(Philox, BytesLookUniform) {
  // Chi-square of 2^20 bytes over 256 bins (255 dof: mean 255, sd 22.6). Deterministic for this seed.
  const size_t n = size_t{1} << 20;
  std::vector<uint8_t> b(n);
  sr_bytes(2024, 0, 0, n, b.data());
  std::array<double, 256> cnt{};
  for (uint8_t v : b) cnt[v] += 1;
  const double e = static_cast<double>(n) / 256.0;
  double chi2 = 0;
  for (double c : cnt) chi2 += (c - e) * (c - e) / e;
  EXPECT_GT(chi2, 170.0);  // about the 0.01% tails of chi2(255)
  EXPECT_LT(chi2, 350.0);
}

TEST(Philox, UniformOpen01Extremes) {
  EXPECT_EQ(uniform_open01(0, 0), 0x1p-53);
  EXPECT_EQ(uniform_open01(0xFFFFFFFFu, 0xFFFFFFFFu), 1.0 - 0x1p-53);
  EXPECT_EQ(uniform_open01(0x80000000u, 0), 0.5 + 0x1p-53);
  // The low 12 bits of the 64 are dropped.
  EXPECT_EQ(uniform_open01(0x12345678u, 0x9ABCDFFFu), uniform_open01(0x12345678u, 0x9ABCD000u));
}

}  // namespace
}  // namespace fp4sim
