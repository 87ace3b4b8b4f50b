#include "fp4sim/philox.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace fp4sim {

namespace {
// Byte b (0..15) of a block, little-endian within each 32-bit word.
inline uint8_t block_byte(const std::array<uint32_t, 4>& w, unsigned b) {
  return static_cast<uint8_t>(w[b >> 2] >> (8u * (b & 3u)));
}

#if defined(__x86_64__)
// 32x32 -> 64-bit products of eight lanes with one constant: mul_epu32 multiplies the even lanes,
// so the odd lanes are shifted down for a second multiply and the halves are blended back.
__attribute__((target("avx2"), always_inline)) inline void mulhilo8(__m256i a, __m256i m, __m256i& hi, __m256i& lo) {
  const __m256i even = _mm256_mul_epu32(a, m);
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
  lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

// Philox4x32-10 of the eight counter blocks block0 .. block0 + 7 (block0 + 7 < 2^64: blocks are
// indices / 16), one block per lane, written as 128 bytes in the SPEC §3 order: block j's four
// words, little-endian, at out + 16 j. The same rounds as philox4x32_r, lane by lane.
__attribute__((target("avx2"))) void philox8_bytes(uint64_t seed, uint32_t stream, uint64_t block0, uint8_t* out) {
  const __m256i lo0 = _mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(block0)));
  __m256i c0 = _mm256_add_epi32(lo0, _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  // carry into the high word where the low word wrapped (unsigned c0 < lo0)
  const __m256i flip = _mm256_set1_epi32(INT32_MIN);
  const __m256i carry = _mm256_cmpgt_epi32(_mm256_xor_si256(lo0, flip), _mm256_xor_si256(c0, flip));
  __m256i c1 = _mm256_sub_epi32(_mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(block0 >> 32))), carry);
  __m256i c2 = _mm256_set1_epi32(static_cast<int>(stream));
  __m256i c3 = _mm256_setzero_si256();
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(0xD2511F53u)), m1 = _mm256_set1_epi32(static_cast<int>(0xCD9E8D57u));
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    __m256i hi0, lo0r, hi1, lo1r;
    mulhilo8(c0, m0, hi0, lo0r);
    mulhilo8(c2, m1, hi1, lo1r);
    c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32(static_cast<int>(k0)));
    c1 = lo1r;
    c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32(static_cast<int>(k1)));
    c3 = lo0r;
  }
  // 4 x 8 transpose of words: lane j of c0..c3 -> 16 consecutive bytes of block j.
  const __m256i t0 = _mm256_unpacklo_epi32(c0, c1), t1 = _mm256_unpackhi_epi32(c0, c1);
  const __m256i t2 = _mm256_unpacklo_epi32(c2, c3), t3 = _mm256_unpackhi_epi32(c2, c3);
  const __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);  // blocks 0|4, 1|5
  const __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);  // blocks 2|6, 3|7
  auto* o = reinterpret_cast<__m256i*>(out);
  _mm256_storeu_si256(o + 0, _mm256_permute2x128_si256(u0, u1, 0x20));
  _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(u2, u3, 0x20));
  _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(u0, u1, 0x31));
  _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(u2, u3, 0x31));
}

// GCC 12's AVX-512 headers start some intrinsics from _mm512_undefined_*(), which
// -Wuninitialized reports after inlining (a known false positive; hadamard.cpp does the same).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define FP4SIM_AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw")))

// mulhilo8 on sixteen lanes. The odd lanes' products come from a second multiply of the shifted
// input; masked in-lane shuffles (word j <- word j ^ 1) move each 64-bit product's halves into
// place instead of two more shifts and blends.
FP4SIM_AVX512 __attribute__((always_inline)) inline void mulhilo16(__m512i a, __m512i m, __m512i& hi, __m512i& lo) {
  const __m512i even = _mm512_mul_epu32(a, m);
  const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);
  lo = _mm512_mask_shuffle_epi32(even, 0xAAAA, odd, _MM_PERM_CDAB);  // odd lanes: low half of odd
  hi = _mm512_mask_shuffle_epi32(odd, 0x5555, even, _MM_PERM_CDAB);  // even lanes: high half of even
}

// As philox8_bytes, for the sixteen blocks block0 .. block0 + 15: 256 bytes, block j at out + 16 j.
FP4SIM_AVX512 void philox16_bytes(uint64_t seed, uint32_t stream, uint64_t block0, uint8_t* out) {
  const __m512i lo0 = _mm512_set1_epi32(static_cast<int>(static_cast<uint32_t>(block0)));
  __m512i c0 = _mm512_add_epi32(lo0, _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  // carry into the high word where the low word wrapped (unsigned c0 < lo0)
  const __mmask16 carry = _mm512_cmplt_epu32_mask(c0, lo0);
  const __m512i hi0 = _mm512_set1_epi32(static_cast<int>(static_cast<uint32_t>(block0 >> 32)));
  __m512i c1 = _mm512_mask_add_epi32(hi0, carry, hi0, _mm512_set1_epi32(1));
  __m512i c2 = _mm512_set1_epi32(static_cast<int>(stream));
  __m512i c3 = _mm512_setzero_si512();
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  const __m512i m0 = _mm512_set1_epi32(static_cast<int>(0xD2511F53u)), m1 = _mm512_set1_epi32(static_cast<int>(0xCD9E8D57u));
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    __m512i h0, l0, h1, l1;
    mulhilo16(c0, m0, h0, l0);
    mulhilo16(c2, m1, h1, l1);
    // 0x96: three-way xor in one instruction
    c0 = _mm512_ternarylogic_epi32(h1, c1, _mm512_set1_epi32(static_cast<int>(k0)), 0x96);
    c1 = l1;
    c2 = _mm512_ternarylogic_epi32(h0, c3, _mm512_set1_epi32(static_cast<int>(k1)), 0x96);
    c3 = l0;
  }
  // 4 x 16 transpose of words. The unpacks work within 128-bit lanes: lane L of uk is block 4L + k.
  const __m512i t0 = _mm512_unpacklo_epi32(c0, c1), t1 = _mm512_unpackhi_epi32(c0, c1);
  const __m512i t2 = _mm512_unpacklo_epi32(c2, c3), t3 = _mm512_unpackhi_epi32(c2, c3);
  const __m512i u0 = _mm512_unpacklo_epi64(t0, t2), u1 = _mm512_unpackhi_epi64(t0, t2);
  const __m512i u2 = _mm512_unpacklo_epi64(t1, t3), u3 = _mm512_unpackhi_epi64(t1, t3);
  // Then a 4 x 4 transpose of 128-bit lanes: store v takes lane v of u0 .. u3 (blocks 4v .. 4v + 3).
  const __m512i a = _mm512_shuffle_i32x4(u0, u1, 0x44), b = _mm512_shuffle_i32x4(u2, u3, 0x44);  // lanes 0, 1
  const __m512i c = _mm512_shuffle_i32x4(u0, u1, 0xEE), d = _mm512_shuffle_i32x4(u2, u3, 0xEE);  // lanes 2, 3
  _mm512_storeu_si512(out + 0, _mm512_shuffle_i32x4(a, b, 0x88));
  _mm512_storeu_si512(out + 64, _mm512_shuffle_i32x4(a, b, 0xDD));
  _mm512_storeu_si512(out + 128, _mm512_shuffle_i32x4(c, d, 0x88));
  _mm512_storeu_si512(out + 192, _mm512_shuffle_i32x4(c, d, 0xDD));
}
#undef FP4SIM_AVX512
#pragma GCC diagnostic pop

// Best path this CPU runs: 2 AVX-512 (its leftover runs of eight take AVX2), 1 AVX2, 0 portable.
const bool kHaveAvx2 = __builtin_cpu_supports("avx2");
const bool kHaveAvx512 = kHaveAvx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
const int kBestSimd = kHaveAvx512 ? 2 : kHaveAvx2 ? 1 : 0;
#else
const int kBestSimd = 0;
#endif
int simd_level = kBestSimd;  // set_philox_simd
}  // namespace

int set_philox_simd(int level) {
  const int was = simd_level;
  simd_level = level < 0 ? 0 : level > kBestSimd ? kBestSimd : level;
  return was;
}

uint8_t sr_byte(uint64_t seed, uint32_t stream, uint64_t i) {
  return block_byte(philox_block(seed, stream, i >> 4), static_cast<unsigned>(i & 15u));
}

void sr_bytes(uint64_t seed, uint32_t stream, uint64_t first_i, size_t n, uint8_t* out) {
  // Counts, not end indices, so that a range touching 2^64 - 1 cannot wrap.
  uint64_t i = first_i;
  size_t left = n;
  [[maybe_unused]] const int simd = simd_level;
  while (left > 0) {
#if defined(__x86_64__)
    // Whole runs of sixteen or eight blocks, one block per lane (block indices stay below 2^60,
    // so block + 15 fits); what is left over goes to the shorter path, then to the scalar one.
    if ((i & 15u) == 0 && simd >= 2 && left >= 256) {
      philox16_bytes(seed, stream, i >> 4, out);
      out += 256;
      left -= 256;
      i += 256;
      continue;
    }
    if ((i & 15u) == 0 && simd >= 1 && left >= 128) {
      philox8_bytes(seed, stream, i >> 4, out);
      out += 128;
      left -= 128;
      i += 128;
      continue;
    }
#endif
    const auto w = philox_block(seed, stream, i >> 4);
    unsigned b = static_cast<unsigned>(i & 15u);
    size_t take = 16u - b;  // elements of this block from i on
    if (take > left) take = left;
    for (size_t k = 0; k < take; ++k) *out++ = block_byte(w, b++);
    left -= take;
    i += take;
  }
}

}  // namespace fp4sim
