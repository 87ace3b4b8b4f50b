#include "fp4sim/philox.hpp"

namespace fp4sim {

namespace {
// Byte b (0..15) of a block, little-endian within each 32-bit word.
inline uint8_t block_byte(const std::array<uint32_t, 4>& w, unsigned b) {
  return static_cast<uint8_t>(w[b >> 2] >> (8u * (b & 3u)));
}
}  // namespace

uint8_t sr_byte(uint64_t seed, uint32_t stream, uint64_t i) {
  return block_byte(philox_block(seed, stream, i >> 4), static_cast<unsigned>(i & 15u));
}

void sr_bytes(uint64_t seed, uint32_t stream, uint64_t first_i, size_t n, uint8_t* out) {
  // Counts, not end indices, so that a range touching 2^64 - 1 cannot wrap.
  uint64_t i = first_i;
  size_t left = n;
  while (left > 0) {
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
