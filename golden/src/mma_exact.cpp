// Exact arithmetic pieces of the MMA models: FP32 rounding of a wide integer and the exact
// fixed-point accumulator (see docs/numerics.md).
#include <algorithm>
#include <bit>
#include <stdexcept>

#include "fp4sim/mma.hpp"

namespace fp4sim {

uint32_t round_to_fp32(bool neg, uint64_t mag, int e0, bool sticky, bool rn) {
  const uint32_t sign = neg ? 0x80000000u : 0u;
  if (mag == 0) return rn ? sign : 0u;  // only a sticky tail: rounds to zero either way
  const int p = 63 - std::countl_zero(mag);
  const int e = p + e0;  // exponent of the leading bit
  if (e >= 128) return sign | 0x7F800000u;
  const int ec = std::max(e, -126);  // subnormals share the exponent of the smallest normal
  const int sh = (ec - 23) - e0;     // bits of mag below the result's last place
  uint64_t m;
  bool rbit = false;
  bool st = sticky;
  if (sh <= 0) {
    m = mag << -sh;  // -sh <= 23 - p, so m < 2^24
  } else if (sh > 64) {
    m = 0;
    st = true;
  } else if (sh == 64) {
    m = 0;
    rbit = (mag >> 63) != 0;
    st = st || (mag << 1) != 0;
  } else {
    m = mag >> sh;
    rbit = ((mag >> (sh - 1)) & 1u) != 0;
    st = st || (sh > 1 && (mag & ((uint64_t{1} << (sh - 1)) - 1u)) != 0);
  }
  if (rn && rbit && (st || (m & 1u))) ++m;
  // Toward zero, a value below the smallest subnormal gives +0: MMA-Sim truncates with Python's
  // math.trunc, whose integer 0 carries no sign.
  if (m == 0) return rn ? sign : 0u;
  // m in [2^23, 2^24] for normals: adding the biased exponent - 1 absorbs the hidden bit and a
  // rounding carry into the next binade; subnormals have exponent field 0 and m < 2^23 (or = 2^23,
  // which becomes the smallest normal).
  uint32_t bits = (static_cast<uint32_t>(ec + 126) << 23) + static_cast<uint32_t>(m);
  if (bits >= 0x7F800000u) bits = 0x7F800000u;
  return sign | bits;
}

void ExactAccumulator::clear() {
  limb_.fill(0);
  pending_ = 0;
}

void ExactAccumulator::add(int64_t m, int e) {
  if (m == 0) return;
  const int pos = e - kLsbExp;
  const uint64_t a = m < 0 ? static_cast<uint64_t>(-m) : static_cast<uint64_t>(m);
  if (pos < 0 || pos >= kDigits * 32 || a >= (uint64_t{1} << 32)) {
    throw std::out_of_range("ExactAccumulator: term outside the accumulator range");
  }
  const int d = pos >> 5;
  const uint64_t v = a << (pos & 31);  // < 2^63: spans digits d and d+1
  const int64_t lo = static_cast<int64_t>(v & 0xFFFFFFFFu);
  const int64_t hi = static_cast<int64_t>(v >> 32);
  if (m < 0) {
    limb_[d] -= lo;
    limb_[d + 1] -= hi;
  } else {
    limb_[d] += lo;
    limb_[d + 1] += hi;
  }
  // Each add moves a limb by < 2^32; normalize long before an int64 limb could overflow.
  if (++pending_ >= (1u << 29)) normalize();
}

void ExactAccumulator::add_float(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const uint32_t ef = (u >> 23) & 0xFFu;
  const uint32_t frac = u & 0x7FFFFFu;
  if (ef == 0xFFu) throw std::invalid_argument("ExactAccumulator::add_float: non-finite value");
  const int64_t mant = ef == 0 ? frac : (frac | 0x800000u);
  const int e = (ef == 0 ? -126 : static_cast<int>(ef) - 127) - 23;
  add((u >> 31) ? -mant : mant, e);
}

void ExactAccumulator::normalize() {
  // Carry-propagate so that digits 0..kDigits-1 lie in [0, 2^32) and the top limb holds the sign.
  for (int i = 0; i < kDigits; ++i) {
    const int64_t carry = limb_[i] >> 32;  // floor division (arithmetic shift)
    limb_[i] -= carry * (int64_t{1} << 32);
    limb_[i + 1] += carry;
  }
  pending_ = 0;
}

bool ExactAccumulator::is_zero() { return sign() == 0; }

int ExactAccumulator::sign() {
  normalize();
  if (limb_[kDigits] < 0) return -1;
  for (int64_t l : limb_) {
    if (l != 0) return 1;
  }
  return 0;
}

uint32_t ExactAccumulator::round_fp32(bool rn) {
  normalize();
  std::array<int64_t, kDigits + 1> d = limb_;
  const bool neg = d[kDigits] < 0;
  if (neg) {  // magnitude = two's-complement negation in base 2^32
    for (auto& l : d) l = -l;
    for (int i = 0; i < kDigits; ++i) {
      const int64_t carry = d[i] >> 32;
      d[i] -= carry * (int64_t{1} << 32);
      d[i + 1] += carry;
    }
  }
  int i = kDigits;
  while (i >= 0 && d[i] == 0) --i;
  if (i < 0) return 0u;
  if (d[i] >= (int64_t{1} << 32)) return (neg ? 0x80000000u : 0u) | 0x7F800000u;  // beyond range
  auto dig = [&](int j) -> uint64_t { return j >= 0 ? static_cast<uint64_t>(d[j]) : 0u; };
  // 64-bit window whose bit 63 is the leading one: digit i, then i-1, then the top of i-2.
  const int tb = 31 - std::countl_zero(static_cast<uint32_t>(d[i]));
  const uint64_t window = (dig(i) << (63 - tb)) | (dig(i - 1) << (31 - tb)) | (dig(i - 2) >> (tb + 1));
  bool sticky = (dig(i - 2) & ((uint64_t{1} << (tb + 1)) - 1u)) != 0;
  for (int j = i - 3; j >= 0 && !sticky; --j) sticky = d[j] != 0;
  const int e0 = kLsbExp + 32 * i - (63 - tb);
  return round_to_fp32(neg, window, e0, sticky, rn);
}

}  // namespace fp4sim
