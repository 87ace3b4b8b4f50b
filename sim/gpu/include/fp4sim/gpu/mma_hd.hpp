// __host__ __device__ block-scaled dot products (SPEC §4): the golden blackwell, ascend-hif4,
// fp32-seq and exact models (golden/src/mma.cpp) per output element, for the GEMM emulation kernel.
//
// Group sums of the grouped Blackwell kinds and of HiF4 are exact small integers: the operands are
// first turned into int8 "q" values (2 * E2M1 in [-12, 12]; +-c << level in [-28, 28]) and summed
// with dp4a on the device (a plain loop on the host); alignment and truncation are int64
// arithmetic, so the device result is the golden bits by construction. tests/gpu/test_gpu_hd.cpp
// checks these functions against fp4sim::gemm / fp4sim::mma_dot.
#pragma once

#include <math.h>

#include "fp4sim/gpu/hd_common.hpp"
#include "fp4sim/mma_core.hpp"

namespace fp4sim::gpu::hd {

// Model ids: the values of fp4sim::Model.
enum : int { kModelExact = 0, kModelFp32Seq = 1, kModelBlackwell = 2, kModelAscendHif4 = 3 };
// Special ids: the values of fp4sim::Special.
enum : uint8_t { kSpNone = 0, kSpFnNaN = 1, kSpIeee = 2, kSpAllOnesNaN = 3 };

// What the decoder needs of an fp4sim::ElemFormat.
struct Fmt {
  uint8_t bits, ebits, mbits;
  int bias;
  bool is_signed, has_subnormals;
  uint8_t special;
};

enum : uint8_t { kFinite = kClassFinite, kInf = kClassInf, kNaN = kClassNaN };  // golden exact.hpp's classes

// Value = m * 2^(e - mbits), e as MMA-Sim's extract_significand_exponent gives it (the format's
// minimum for subnormals, -126 for a zero), as golden mma.cpp's Dy.
struct Dy {
  int32_t m;
  int e;
  uint8_t cls;
  uint8_t neg;
};

FP4SIM_HD Dy decode_dy(const Fmt& f, uint32_t code) {
  const uint32_t nb = f.ebits + f.mbits;
  const uint32_t mag_mask = (1u << nb) - 1u;
  const uint32_t mag = code & mag_mask;
  Dy d{0, -126, kFinite, 0};
  d.neg = f.is_signed ? static_cast<uint8_t>((code >> nb) & 1u) : uint8_t{0};
  const uint32_t ef = mag >> f.mbits, mf = mag & ((1u << f.mbits) - 1u);
  const uint32_t emask = (1u << f.ebits) - 1u;
  if ((f.special == kSpFnNaN || f.special == kSpAllOnesNaN) && mag == mag_mask) {
    d.cls = kNaN;
    return d;
  }
  if (f.special == kSpIeee && ef == emask) {
    d.cls = mf == 0 ? kInf : kNaN;
    return d;
  }
  if (f.has_subnormals && ef == 0) {
    if (mf == 0) return d;  // zero (signed)
    d.m = static_cast<int32_t>(mf);
    d.e = 1 - f.bias;
  } else {
    d.m = static_cast<int32_t>(mf | (1u << f.mbits));
    d.e = static_cast<int>(ef) - f.bias;
  }
  if (d.neg) d.m = -d.m;
  return d;
}

// The FP32 value of a code (NaN -> NaN, Inf -> Inf, signed zeros kept): golden decode_table.
FP4SIM_HD float decode_f32(const Fmt& f, uint32_t code) {
  const Dy d = decode_dy(f, code);
  if (d.cls == kNaN) return u2f(0x7FC00000u);
  if (d.cls == kInf) return u2f(d.neg ? 0xFF800000u : kExpMask);
  if (d.m == 0) return u2f(d.neg ? 0x80000000u : 0u);
  return static_cast<float>(d.m) * pow2f(d.e - f.mbits);  // exact
}

FP4SIM_HD int hif4_level(uint32_t w, int q) {
  return static_cast<int>((w >> (8 + q / 8)) & 1u) + static_cast<int>((w >> (16 + q / 4)) & 1u);
}

struct GemmParams {
  int model;       // kModel*
  int k;           // instruction K
  int group;       // Blackwell group / HiF4 group
  int block;
  int frac_bits;
  int mb_a, mb_b, mb_s;  // = ea.mbits, eb.mbits, sc.mbits (the shape mma_core.hpp's steps read)
  bool hif4;
  Fmt ea, eb, sc;  // element formats of A and B, scale format
  size_t M, N, K;
  const uint8_t* a;   // [M, K] codes
  const uint8_t* b;   // [N, K] codes
  const uint32_t* sa; // [M, K/block]
  const uint32_t* sb; // [N, K/block]
  const int8_t* qa;   // [M, K] q values (grouped Blackwell, ascend-hif4), else null
  const int8_t* qb;
  const float* c;     // [M, N] or null (= +0)
  float alpha;
};

FP4SIM_HD bool needs_q(const GemmParams& p) {
  return p.model == kModelAscendHif4 || (p.model == kModelBlackwell && p.group < p.k);
}

// q of element idx (row-major [rows, K]) of one operand.
FP4SIM_HD int8_t prep_q(const GemmParams& p, bool is_a, size_t idx) {
  const uint8_t* codes = is_a ? p.a : p.b;
  const uint32_t* sc = is_a ? p.sa : p.sb;
  const Fmt& f = is_a ? p.ea : p.eb;
  const size_t row = idx / p.K, k = idx % p.K;
  const uint32_t code = codes[idx];
  if (p.hif4) {
    const int cm = static_cast<int>(code & 7u);
    const int lv = hif4_level(sc[row * (p.K / static_cast<size_t>(p.block)) + k / static_cast<size_t>(p.block)],
                              static_cast<int>(k % static_cast<size_t>(p.block)));
    return static_cast<int8_t>(((code & 8u) ? -cm : cm) * (1 << lv));
  }
  const Dy d = decode_dy(f, code);  // E2M1: 2 * value = m << e (e in 0..2 for nonzero)
  return static_cast<int8_t>(d.m == 0 ? 0 : d.m * (1 << d.e));
}

// Exact integer dot product of n int8 q values (n a multiple of 4, 4-byte aligned on the device).
FP4SIM_HD int32_t qdot(const int8_t* a, const int8_t* b, int n) {
  int32_t s = 0;
#if defined(__CUDA_ARCH__)
  const int* a4 = reinterpret_cast<const int*>(a);
  const int* b4 = reinterpret_cast<const int*>(b);
  for (int i = 0; i < n / 4; ++i) s = __dp4a(a4[i], b4[i], s);
#else
  for (int i = 0; i < n; ++i) s += static_cast<int32_t>(a[i]) * static_cast<int32_t>(b[i]);
#endif
  return s;
}

// The instruction steps: golden's mma_core.hpp (bw_grouped_step, bw_fused_step), compiled here too.

FP4SIM_HD uint32_t dot_blackwell(const GemmParams& p, size_t i, size_t j, uint32_t cbits) {
  const size_t K = p.K, nblk = K / static_cast<size_t>(p.block);
  const size_t ninstr = K / static_cast<size_t>(p.k);
  const int spi = p.k / p.block;
  for (size_t t = 0; t < ninstr; ++t) {
    const size_t k0 = t * static_cast<size_t>(p.k);
    Dy sa[4], sb[4];  // at most 64 / 16 scales per instruction
    for (int s = 0; s < spi; ++s) {
      sa[s] = decode_dy(p.sc, p.sa[i * nblk + t * static_cast<size_t>(spi) + static_cast<size_t>(s)] & 0xFFu);
      sb[s] = decode_dy(p.sc, p.sb[j * nblk + t * static_cast<size_t>(spi) + static_cast<size_t>(s)] & 0xFFu);
    }
    if (p.group < p.k) {
      int32_t s4[8];
      const int ng = p.k / p.group;
      for (int g = 0; g < ng; ++g) {
        const size_t o = k0 + static_cast<size_t>(g * p.group);
        s4[g] = qdot(p.qa + i * K + o, p.qb + j * K + o, p.group);
      }
      cbits = bw_grouped_step(p, s4, sa, sb, cbits);
    } else {
      Dy ea[32], eb[32];
      for (int k = 0; k < p.k; ++k) {
        ea[k] = decode_dy(p.ea, p.a[i * K + k0 + static_cast<size_t>(k)]);
        eb[k] = decode_dy(p.eb, p.b[j * K + k0 + static_cast<size_t>(k)]);
      }
      cbits = bw_fused_step(p, ea, eb, sa[0], sb[0], cbits);
    }
  }
  return cbits;
}

// One group of ascend-hif4 (hif4_round_groups = 1): acc + RN(s * sig(sA) * sig(sB) * 2^...), where
// s = the exact integer sum of the group's q products and wa / wb the groups' scale words. The
// caller handles NaN (a NaN scale anywhere, or a NaN C, makes the result NaN whatever acc holds).
FP4SIM_HD float ascend_group_add(const GemmParams& p, float acc, int32_t s, uint32_t wa, uint32_t wb) {
  const Dy da = decode_dy(p.sc, wa & 0xFFu);
  const Dy db = decode_dy(p.sc, wb & 0xFFu);
  const int64_t pr = static_cast<int64_t>(s) * da.m * db.m;  // |pr| < 2^22: exact as float
  const int e = da.e + db.e - 8;                              // in [-104, 22]: a normal power of 2
  return acc + static_cast<float>(pr) * pow2f(e);             // the one RN of this group
}
FP4SIM_HD bool hif4_word_nan(uint32_t w) { return (w & 0xFFu) == 0xFFu; }

// ascend-hif4 with one FP32 RN per 64-element group (hif4_round_groups = 1, the default).
FP4SIM_HD uint32_t dot_ascend_hif4(const GemmParams& p, size_t i, size_t j, uint32_t cbits) {
  const size_t K = p.K, ng = K / static_cast<size_t>(p.group);
  const size_t nblk = K / static_cast<size_t>(p.block);
  for (size_t g = 0; g < ng; ++g) {
    if (hif4_word_nan(p.sa[i * nblk + g]) || hif4_word_nan(p.sb[j * nblk + g])) return kNaNBits;
  }
  if (is_nan_bits(cbits)) return kNaNBits;
  float acc = u2f(cbits);
  for (size_t g = 0; g < ng; ++g) {
    const size_t o = g * static_cast<size_t>(p.group);
    const int32_t s = qdot(p.qa + i * K + o, p.qb + j * K + o, p.group);
    acc = ascend_group_add(p, acc, s, p.sa[i * nblk + g], p.sb[j * nblk + g]);
  }
  return f2u(acc);
}

// exact: C and every product of two elements and two scales summed exactly, one RN to FP32 (SPEC §4;
// the special-value rules are exact.hpp's ExactDot, shared with golden dot_exact).
FP4SIM_HD Dy exact_elem(const GemmParams& p, bool is_a, size_t row, size_t k, uint32_t w) {
  const uint32_t code = (is_a ? p.a : p.b)[row * p.K + k];
  if (!p.hif4) return decode_dy(is_a ? p.ea : p.eb, code);
  // S1P2: sign bit 3, magnitude c = bits 2:0, value (+-c / 4) * 2^level; m = +-c, e = level, and the
  // 2 mantissa bits of S1P2 are in the offset below.
  const int cm = static_cast<int>(code & 7u);
  Dy d{0, -126, kFinite, static_cast<uint8_t>((code >> 3) & 1u)};
  if (cm != 0) {
    d.m = d.neg ? -cm : cm;
    d.e = hif4_level(w, static_cast<int>(k % static_cast<size_t>(p.block)));
  }
  return d;
}

FP4SIM_HD uint32_t dot_exact(const GemmParams& p, size_t i, size_t j, uint32_t cbits) {
  if (is_nan_bits(cbits)) return kNaNBits;
  ExactDot<ExactDotSum> dot;  // golden's exact.hpp: the same code as golden dot_exact
  dot.start(cbits);
  const size_t nblk = p.K / static_cast<size_t>(p.block);
  const int off = p.ea.mbits + p.eb.mbits + 2 * p.sc.mbits;
  for (size_t k = 0; k < p.K && !dot.nan; ++k) {
    const size_t bi = k / static_cast<size_t>(p.block);
    const uint32_t wa = p.sa[i * nblk + bi], wb = p.sb[j * nblk + bi];
    dot.term(exact_elem(p, true, i, k, wa), exact_elem(p, false, j, k, wb), decode_dy(p.sc, wa & 0xFFu),
             decode_dy(p.sc, wb & 0xFFu), off);
  }
  return dot.finish(cbits);
}

// fp32-seq: dequantize each element (element * scale, FP32 RN), then a sequential FP32 FMA chain.
FP4SIM_HD float deq_elem(const GemmParams& p, bool is_a, size_t row, size_t k) {
  const uint8_t* codes = is_a ? p.a : p.b;
  const uint32_t* sc = is_a ? p.sa : p.sb;
  const size_t nblk = p.K / static_cast<size_t>(p.block);
  const uint32_t code = codes[row * p.K + k];
  const uint32_t w = sc[row * nblk + k / static_cast<size_t>(p.block)];
  const float sv = decode_f32(p.sc, w & 0xFFu);
  if (p.hif4) {
    const int cm = static_cast<int>(code & 7u);
    const int lv = hif4_level(w, static_cast<int>(k % static_cast<size_t>(p.block)));
    const float mag = static_cast<float>(cm) * pow2f(lv - 2);
    const float ev = (code & 8u) ? -mag : mag;  // negation keeps the sign of a -0 element (golden copysign)
    return ev * sv;
  }
  return decode_f32(is_a ? p.ea : p.eb, code) * sv;
}

FP4SIM_HD uint32_t dot_fp32seq(const GemmParams& p, size_t i, size_t j, uint32_t cbits) {
  float acc = u2f(cbits);
  for (size_t k = 0; k < p.K; ++k) acc = fmaf(deq_elem(p, true, i, k), deq_elem(p, false, j, k), acc);
  return f2u(acc);
}

// The FP32 epilogue of an output: NaN made canonical, then alpha * acc (NaN canonical again).
FP4SIM_HD uint32_t gemm_epilogue(const GemmParams& p, uint32_t r) {
  if (is_nan_bits(r)) r = kNaNBits;
  const float out = p.alpha * u2f(r);
  return is_nan_bits(f2u(out)) ? kNaNBits : f2u(out);
}

// D[i, j] bits: the model's dot product from C, NaN made canonical, then the FP32 epilogue alpha * acc.
FP4SIM_HD uint32_t gemm_element(const GemmParams& p, size_t i, size_t j) {
  const uint32_t cbits = p.c ? f2u(p.c[i * p.N + j]) : 0u;
  uint32_t r = 0;
  switch (p.model) {
    case kModelBlackwell: r = dot_blackwell(p, i, j, cbits); break;
    case kModelAscendHif4: r = dot_ascend_hif4(p, i, j, cbits); break;
    case kModelFp32Seq: r = dot_fp32seq(p, i, j, cbits); break;
    case kModelExact: r = dot_exact(p, i, j, cbits); break;
    default: r = kNaNBits; break;  // no other model ids exist
  }
  return gemm_epilogue(p, r);
}

}  // namespace fp4sim::gpu::hd
