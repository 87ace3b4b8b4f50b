// The exact accumulator of the MMA models (see docs/numerics.md): exact.hpp's fixed-point sum,
// shared with the CUDA kernels, plus the checks a host library can afford.
#include <bit>
#include <stdexcept>

#include "fp4sim/mma.hpp"

namespace fp4sim {

void ExactAccumulator::clear() {
  sum_.clear();
  pending_ = 0;
}

void ExactAccumulator::add(int64_t m, int e) {
  if (m == 0) return;
  const int pos = e - kLsbExp;
  const uint64_t a = m < 0 ? static_cast<uint64_t>(-m) : static_cast<uint64_t>(m);
  if (pos < 0 || pos >= kDigits * 32 || a >= (uint64_t{1} << 32)) {
    throw std::out_of_range("ExactAccumulator: term outside the accumulator range");
  }
  sum_.add(m, e);
  // Each add moves a limb by < 2^32; normalize long before an int64 limb could overflow.
  if (++pending_ >= (1u << 29)) {
    sum_.normalize();
    pending_ = 0;
  }
}

void ExactAccumulator::add_float(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  add_mag(u & 0x7FFFFFFFu, (u >> 31) != 0);
}

void ExactAccumulator::add_mag(uint32_t ab, bool neg) {
  if (ab >= 0x7F800000u) throw std::invalid_argument("ExactAccumulator: non-finite value");
  sum_.add_mag(ab, neg);
  if (++pending_ >= (1u << 29)) {
    sum_.normalize();
    pending_ = 0;
  }
}

int ExactAccumulator::sign() {
  pending_ = 0;
  return sum_.sign();
}

uint32_t ExactAccumulator::round_fp32(bool rn) {
  ExactDotSum s = sum_;  // rounding normalizes and may negate: keep the accumulator as it was
  return s.round_fp32(rn);
}

}  // namespace fp4sim
