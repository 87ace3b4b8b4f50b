// Philox4x32-10 counter-based RNG (Salmon, Moraes, Dror, Shaw, "Parallel Random Numbers: As Easy
// as 1, 2, 3", SC'11; the Random123 library) and the stochastic-rounding byte stream of SPEC §3.
//
// Random bits are a pure function of (seed, stream, element index i):
//   key     = (seed & 0xFFFFFFFF, seed >> 32)
//   counter = (block & 0xFFFFFFFF, block >> 32, stream, 0)   with block = i / 16
//   r       = byte (i % 16) of the 128-bit output, little-endian: word (i%16)/4, byte (i%16)%4.
// Nothing depends on the order of calls, the number of threads or how a tensor is sharded.
// Checked against the Random123 known-answer vectors (tests/golden/test_philox.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace fp4sim {

// Philox4x32 with an arbitrary round count (Random123's philox4x32_R); 10 is the standard.
// One round: (hi0, lo0) = M0 * c0, (hi1, lo1) = M1 * c2 (32x32 -> 64-bit products);
// c' = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0). The key is bumped by the Weyl constants
// (W0, W1) between rounds.
constexpr std::array<uint32_t, 4> philox4x32_r(int rounds, std::array<uint32_t, 4> ctr,
                                               std::array<uint32_t, 2> key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int r = 0; r < rounds; ++r) {
    if (r > 0) {
      key[0] += kW0;
      key[1] += kW1;
    }
    const uint64_t p0 = static_cast<uint64_t>(kM0) * ctr[0];
    const uint64_t p1 = static_cast<uint64_t>(kM1) * ctr[2];
    ctr = {static_cast<uint32_t>(p1 >> 32) ^ ctr[1] ^ key[0], static_cast<uint32_t>(p1),
           static_cast<uint32_t>(p0 >> 32) ^ ctr[3] ^ key[1], static_cast<uint32_t>(p0)};
  }
  return ctr;
}

constexpr std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> ctr, std::array<uint32_t, 2> key) {
  return philox4x32_r(10, ctr, key);
}

// The 128 random bits of one counter block in the SPEC §3 layout: 16 elements' bytes (or four
// 32-bit words for the synthetic-data generators).
constexpr std::array<uint32_t, 4> philox_block(uint64_t seed, uint32_t stream, uint64_t block) {
  return philox4x32_10({static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), stream, 0u},
                       {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
}

// The stochastic-rounding byte r of element i (SPEC §3).
uint8_t sr_byte(uint64_t seed, uint32_t stream, uint64_t i);

// out[k] = sr_byte(seed, stream, first_i + k) for k < n, one Philox call per 16 elements.
// Any first_i (not only multiples of 16), so shards and threads can each fill their own range.
void sr_bytes(uint64_t seed, uint32_t stream, uint64_t first_i, size_t n, uint8_t* out);

// For the tests: which path sr_bytes takes, 0 portable (scalar), 1 AVX2 (eight blocks per call),
// 2 AVX-512 (sixteen), clamped to what the CPU runs; all give the same bytes. The default is the
// best the CPU runs. Returns the previous level. Not thread-safe: not to be called while another
// thread calls sr_bytes.
int set_philox_simd(int level);

// A uniform double in (0, 1) from two Philox words: the top 52 of the 64 bits (hi:lo) plus half a
// step, times 2^-52. That has 53 significant bits, so it is exact in double, never 0 or 1, and
// symmetric: the values are (m + 1/2) / 2^52, m = 0 .. 2^52 - 1.
constexpr double uniform_open01(uint32_t hi, uint32_t lo) {
  const uint64_t m = ((static_cast<uint64_t>(hi) << 32) | lo) >> 12;
  return (static_cast<double>(m) + 0.5) * 0x1p-52;
}

}  // namespace fp4sim
