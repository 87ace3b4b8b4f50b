// Philox4x32-10 and the SPEC §3 stochastic-rounding byte stream.
#include <gtest/gtest.h>

#include <array>
#include <bit>
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

// Long runs take the eight-lane path (runs of eight whole counter blocks); bases where a run of
// blocks carries from the low counter word into the high one, and the end of the index space.
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
