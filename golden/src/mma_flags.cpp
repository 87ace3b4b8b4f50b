// IEEE-style exception flags of one MMA instruction (mma.hpp): the result against the exact value of
// C + sum of products, which ExactDotSum holds without rounding.
#include <bit>
#include <cmath>
#include <cstdint>

#include "fp4sim/exact.hpp"
#include "fp4sim/format.hpp"
#include "fp4sim/mma.hpp"
#include "fp4sim/quant.hpp"

namespace fp4sim {

namespace {

// Scale of element q as the MMA applies it; HiF4: E6M2 times the element's level bits.
double scale_of(const MmaConfig& cfg, const uint32_t* s, size_t q) {
  const size_t blk = static_cast<size_t>(cfg.block);
  const uint32_t w = s[q / blk];
  if (cfg.kind->scale_word32) return std::ldexp(decode(kE6M2, hif4_e6m2(w)), hif4_level(w, static_cast<int>(q % blk)));
  return decode(*cfg.scale, w & 0xFFu);  // UE4M3: decode ignores the sign bit, as the MMA does
}

}  // namespace

uint8_t mma_flags(const MmaConfig& cfg, const uint8_t* a, const uint8_t* b, const uint32_t* sfa,
                  const uint32_t* sfb, uint32_t c, uint32_t d) {
  return mma_flags_k(cfg, static_cast<size_t>(cfg.kind->k), a, b, sfa, sfb, c, d);
}

uint8_t mma_flags_k(const MmaConfig& cfg, size_t K, const uint8_t* a, const uint8_t* b, const uint32_t* sfa,
                    const uint32_t* sfb, uint32_t c, uint32_t d) {
  bool nan_op = is_nan_bits(c), inf_op = is_inf_bits(c);
  for (size_t q = 0; q < K; ++q)
    for (double v : {decode(*cfg.elem_a, a[q]), decode(*cfg.elem_b, b[q]), scale_of(cfg, sfa, q), scale_of(cfg, sfb, q)}) {
      nan_op = nan_op || std::isnan(v);
      inf_op = inf_op || std::isinf(v);
    }
  uint8_t f = 0;
  if (is_nan_bits(d) && !nan_op) f |= kMmaInvalid;
  if (is_inf_bits(d) && !inf_op && !nan_op) f |= kMmaOverflow | kMmaInexact;
  if (nan_op || inf_op || is_nan_bits(d) || is_inf_bits(d)) return f;
  // Every operand finite. A product of four factors has at most 16 significant bits and an exponent
  // within +-300, so it is exact in a double and its 32-bit significand exact in an int64.
  ExactDotSum s;
  s.clear();
  for (size_t q = 0; q < K; ++q) {
    const double p = decode(*cfg.elem_a, a[q]) * decode(*cfg.elem_b, b[q]) * scale_of(cfg, sfa, q) * scale_of(cfg, sfb, q);
    if (p == 0) continue;
    int e = 0;
    const double fr = std::frexp(p, &e);  // p = fr * 2^e, |fr| in [0.5, 1)
    s.add(static_cast<int64_t>(std::ldexp(fr, 32)), e - 32);
  }
  s.add_mag(c & 0x7FFFFFFFu, (c >> 31) != 0);
  ExactDotSum diff = s;
  diff.add_mag(d & 0x7FFFFFFFu, (d >> 31) == 0);  // exact - D
  if (diff.sign() != 0) {
    f |= kMmaInexact;
    // Tininess on the exact value (before rounding): the Blackwell alignment can drop a normal C to
    // +0, which loses precision but is not an exponent-range underflow.
    if (s.sign() != 0 && (s.round_fp32(false) & 0x7FFFFFFFu) < 0x00800000u) f |= kMmaUnderflow;
  }
  return f;
}

}  // namespace fp4sim
