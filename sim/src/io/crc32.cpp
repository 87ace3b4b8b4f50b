#include "fp4sim/io/crc32.hpp"

#include <array>
#include <bit>
#include <cstdio>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace fp4sim::io {
namespace {

// Byte-at-a-time table for the reflected polynomial, built at compile time.
constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kTable = make_table();

// Slicing-by-16 (16 bytes per step through 16 derived tables): about 8x the byte-at-a-time loop,
// which made CRC-32 of the manifests a large part of a `fp4sim quantize` run.
constexpr std::array<std::array<uint32_t, 256>, 16> make_slices() {
  std::array<std::array<uint32_t, 256>, 16> t{};
  t[0] = make_table();
  for (size_t i = 0; i < 256; ++i)
    for (size_t k = 1; k < 16; ++k) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFFu];
  return t;
}
constexpr std::array<std::array<uint32_t, 256>, 16> kSlices = make_slices();

#if defined(__x86_64__)
// Carry-less multiplication folding (Gopal et al., "Fast CRC Computation for Generic Polynomials
// Using PCLMULQDQ Instruction", Intel 2009), bit-reflected form: four 128-bit lanes are folded
// 64 bytes at a time, merged into one, folded 16 bytes at a time, reduced to 64 bits and then to
// the 32-bit remainder by Barrett reduction. The constants are x^k mod P for the reflected
// polynomial (k = 4*128+32 and 4*128-32 for the 4-lane fold, 128+32 and 128-32 for the 1-lane
// fold, 64 for 128 -> 64 bits), then P itself and floor(x^64 / P). `c` and the result are the
// inverted running state, as in the table loop. n: a multiple of 16, at least 64.
#define FP4SIM_CLMUL __attribute__((target("pclmul,sse4.1")))
FP4SIM_CLMUL inline __m128i load(const uint8_t* q) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)); }
// a * k: the low half times k's low, the high half times k's high, summed (XOR) with `next`.
FP4SIM_CLMUL inline __m128i fold(__m128i a, __m128i k, __m128i next) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(a, k, 0x00), _mm_clmulepi64_si128(a, k, 0x11)), next);
}
FP4SIM_CLMUL uint32_t crc32_clmul(uint32_t c, const uint8_t* p, size_t n) {
  const __m128i fold4 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
  const __m128i fold1 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
  const __m128i fold64 = _mm_set_epi64x(0, 0x0163cd6124);
  const __m128i barrett = _mm_set_epi64x(0x01f7011641, 0x01db710641);
  const __m128i low32 = _mm_setr_epi32(-1, 0, -1, 0);
  __m128i l0 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(c)));
  __m128i l1 = load(p + 16), l2 = load(p + 32), l3 = load(p + 48);
  p += 64;
  n -= 64;
  for (; n >= 64; p += 64, n -= 64) {
    l0 = fold(l0, fold4, load(p));
    l1 = fold(l1, fold4, load(p + 16));
    l2 = fold(l2, fold4, load(p + 32));
    l3 = fold(l3, fold4, load(p + 48));
  }
  __m128i x = fold(l0, fold1, l1);
  x = fold(x, fold1, l2);
  x = fold(x, fold1, l3);
  for (; n >= 16; p += 16, n -= 16) x = fold(x, fold1, load(p));
  // 128 -> 64 bits.
  x = _mm_xor_si128(_mm_srli_si128(x, 8), _mm_clmulepi64_si128(x, fold1, 0x10));
  x = _mm_xor_si128(_mm_srli_si128(x, 4), _mm_clmulepi64_si128(_mm_and_si128(x, low32), fold64, 0x00));
  // Barrett: q = floor(x / P) through mu, remainder = x - q P (in GF(2): XOR).
  __m128i q = _mm_clmulepi64_si128(_mm_and_si128(x, low32), barrett, 0x10);
  q = _mm_clmulepi64_si128(_mm_and_si128(q, low32), barrett, 0x00);
  return static_cast<uint32_t>(_mm_extract_epi32(_mm_xor_si128(x, q), 1));
}

const bool kHaveClmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif

}  // namespace

uint32_t crc32(std::span<const uint8_t> bytes, uint32_t prev) {
  uint32_t c = prev ^ 0xFFFFFFFFu;
  const uint8_t* p = bytes.data();
  size_t n = bytes.size();
#if defined(__x86_64__)
  // About 4x the slicing loop below; same bits (Crc32 tests compare both with a bitwise reference).
  if (n >= 64 && kHaveClmul) {
    const size_t m = n & ~size_t{15};
    c = crc32_clmul(c, p, m);
    p += m;
    n -= m;
  }
#endif
  static_assert(std::endian::native == std::endian::little, "slicing-by-16 reads little-endian words");
  while (n >= 16) {
    uint32_t w[4];
    std::memcpy(w, p, 16);
    w[0] ^= c;
    c = kSlices[15][w[0] & 0xFF] ^ kSlices[14][(w[0] >> 8) & 0xFF] ^ kSlices[13][(w[0] >> 16) & 0xFF] ^
        kSlices[12][w[0] >> 24] ^ kSlices[11][w[1] & 0xFF] ^ kSlices[10][(w[1] >> 8) & 0xFF] ^
        kSlices[9][(w[1] >> 16) & 0xFF] ^ kSlices[8][w[1] >> 24] ^ kSlices[7][w[2] & 0xFF] ^
        kSlices[6][(w[2] >> 8) & 0xFF] ^ kSlices[5][(w[2] >> 16) & 0xFF] ^ kSlices[4][w[2] >> 24] ^
        kSlices[3][w[3] & 0xFF] ^ kSlices[2][(w[3] >> 8) & 0xFF] ^ kSlices[1][(w[3] >> 16) & 0xFF] ^
        kSlices[0][w[3] >> 24];
    p += 16;
    n -= 16;
  }
  for (; n; --n, ++p) c = kTable[(c ^ *p) & 0xFFu] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t crc32(std::string_view text, uint32_t prev) {
  return crc32(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()),
               prev);
}

std::string crc32_hex(uint32_t crc) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(crc));
  return buf;
}

}  // namespace fp4sim::io
