// The per-instruction cores of the Blackwell MMA model (MMA-Sim nv_fused_dot_add_with_block_scale /
// nv_fused_dot_add, SPEC §4), shared by golden (src/mma.cpp) and the CUDA kernels (sim/gpu
// mma_hd.hpp): header-only and FP4SIM_HD, so nvcc compiles golden's own code into the kernels.
//
// Templates over the caller's types: S has the kind configuration's int members k (instruction K),
// group, block, frac_bits (alignment fraction bits) and mb_a, mb_b, mb_s (mantissa bits of the
// element and scale formats); D is a decoded code with members m (signed significand, hidden bit
// included), e (MMA-Sim's exponent: the format's minimum for subnormals, -126 for a zero), cls
// (kClass*) and neg.
#pragma once

#include <cstdint>

#include "fp4sim/exact.hpp"

namespace fp4sim {

// C as m * 2^(e - 23), e as MMA-Sim's extract_significand_exponent gives for float32 (subnormals
// and zero at -126).
FP4SIM_HD void split_c(uint32_t u, int64_t& m, int& e) {
  const uint32_t ef = (u >> 23) & 0xFFu;
  const int64_t mag = ef == 0 ? (u & 0x7FFFFFu) : ((u & 0x7FFFFFu) | 0x800000u);
  m = (u >> 31) ? -mag : mag;
  e = ef == 0 ? -126 : static_cast<int>(ef) - 127;
}

// trunc(v * 2^s): an exact shift left, or a shift right toward zero.
FP4SIM_HD int64_t shift_trunc(int64_t v, int s) {
  if (s >= 0) return v * (int64_t{1} << s);  // callers keep |v| * 2^s < 2^62
  if (s <= -63) return 0;
  const uint64_t a = v < 0 ? static_cast<uint64_t>(-v) : static_cast<uint64_t>(v);
  const int64_t t = static_cast<int64_t>(a >> -s);
  return v < 0 ? -t : t;
}

// The truncated fixed-point sum t * 2^lsb to FP32 toward zero; 0 gives +0.0, never -0.0.
FP4SIM_HD uint32_t from_trunc_sum(int64_t t, int lsb) {
  if (t == 0) return 0u;
  return round_to_fp32(t < 0, t < 0 ? static_cast<uint64_t>(-t) : static_cast<uint64_t>(t), lsb, false, false);
}

// Grouped kinds (mxf4, mxf4nvf4): one instruction. s4[g] = exact sum of the group's products
// times 4 (products of 2 * E2M1 values); sa / sb = the instruction's K / block scales.
template <class S, class D>
FP4SIM_HD uint32_t bw_grouped_step(const S& c, const int32_t* s4, const D* sa, const D* sb, uint32_t cbits) {
  const int nsc = c.k / c.block;
  for (int i = 0; i < nsc; ++i)
    if (sa[i].cls == kClassNaN || sb[i].cls == kClassNaN) return kNaNBits;
  if (is_nan_bits(cbits)) return kNaNBits;
  // MMA-Sim raises on an infinite C here (math.trunc(inf)); fp4sim returns C (documented).
  if (is_inf_bits(cbits)) return cbits;
  int64_t mc;
  int ec;
  split_c(cbits, mc, ec);
  // Group term: s * sig(sA) * sig(sB) with exponent exp(sA) + exp(sB); as integers
  // N = s4 * mA * mB with value N * 2^(eA + eB - 2 - 2*mbits(scale)).
  const int ng = c.k / c.group;
  int64_t n[8];
  int e[8];
  int max_e = ec;
  for (int g = 0; g < ng; ++g) {
    const int si = g * c.group / c.block;
    n[g] = static_cast<int64_t>(s4[g]) * sa[si].m * sb[si].m;
    e[g] = sa[si].e + sb[si].e;
    if (e[g] > max_e) max_e = e[g];  // also for an all-zero group (SPEC §4 details)
  }
  const int lsb = max_e - c.frac_bits;  // every term truncated to this grid, then summed exactly
  int64_t t = shift_trunc(mc, ec - 23 - lsb);
  const int off = 2 + 2 * c.mb_s;
  for (int g = 0; g < ng; ++g) t += shift_trunc(n[g], e[g] - off - lsb);
  return from_trunc_sum(t, lsb);
}

// Fused kind (mxf8f6f4): one instruction of c.k <= 32 products with one scale per operand.
template <class S, class D>
FP4SIM_HD uint32_t bw_fused_step(const S& c, const D* ea, const D* eb, const D& sa, const D& sb, uint32_t cbits) {
  // MMA-Sim first forms the float64 sum of all products and C: NaN -> NaN, +-Inf -> +-Inf.
  // Every finite product and sum is far inside the double range, so this is exactly the IEEE
  // outcome on the operands: NaN if any NaN (elements, scales, C), Inf * 0 or +Inf + -Inf.
  if (sa.cls == kClassNaN || sb.cls == kClassNaN || is_nan_bits(cbits)) return kNaNBits;
  bool pinf = false, ninf = false;
  if (is_inf_bits(cbits)) ((cbits >> 31) ? ninf : pinf) = true;
  for (int k = 0; k < c.k; ++k) {
    const D& a = ea[k];
    const D& b = eb[k];
    if (a.cls == kClassFinite && b.cls == kClassFinite) continue;
    if (a.cls == kClassNaN || b.cls == kClassNaN) return kNaNBits;
    if ((a.cls == kClassFinite && a.m == 0) || (b.cls == kClassFinite && b.m == 0)) return kNaNBits;  // Inf * 0
    ((a.neg ^ b.neg) ? ninf : pinf) = true;
  }
  if (pinf && ninf) return kNaNBits;
  if (pinf) return 0x7F800000u;
  if (ninf) return 0xFF800000u;
  int64_t mc;
  int ec;
  split_c(cbits, mc, ec);
  const int es = sa.e + sb.e;  // UE8M0: significand 1, the scales only add exponents
  int max_e = ec;
  for (int k = 0; k < c.k; ++k) {
    const int ek = ea[k].e + eb[k].e + es;  // zeros at -126
    if (ek > max_e) max_e = ek;
  }
  const int lsb = max_e - c.frac_bits;
  int64_t t = shift_trunc(mc, ec - 23 - lsb);
  const int off = c.mb_a + c.mb_b;
  for (int k = 0; k < c.k; ++k) {
    const int64_t p = static_cast<int64_t>(ea[k].m) * eb[k].m;
    if (p != 0) t += shift_trunc(p, ea[k].e + eb[k].e + es - off - lsb);
  }
  return from_trunc_sum(t, lsb);
}

}  // namespace fp4sim
