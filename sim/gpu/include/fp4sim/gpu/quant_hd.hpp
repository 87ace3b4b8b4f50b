// __host__ __device__ quantizer arithmetic (SPEC §2, §3): per element, per block, per 16x16 tile.
// Each function mirrors the golden quantizer (golden/src/quant.cpp) and is checked against
// fp4sim::quantize bit for bit by tests/gpu/test_gpu_hd.cpp.
#pragma once

#include <cfloat>
#include <cmath>

#include "fp4sim/gpu/hd_common.hpp"
#include "fp4sim/philox.hpp"  // constexpr: usable in device code with --expt-relaxed-constexpr

namespace fp4sim::gpu::hd {

// Rounding / scale-rule ids: the values of fp4sim::Rounding and fp4sim::ScaleRule.
enum : int { kRne = 0, kRna = 1, kRz = 2, kSr = 3 };
enum : int { kFloor = 0, kCeil = 1 };

// What an element encoder needs of an fp4sim::ElemFormat (plain data, copyable to the device).
struct Elem {
  int mbits;
  int bias;
  uint32_t max_code;  // largest finite magnitude code
  uint32_t sign_bit;
  int emax_elem;      // floor(log2(max)), the OCP MX emax_elem
  double max_value;
};

// The SR byte of element i (SPEC §3), straight from the golden constexpr Philox.
FP4SIM_HD uint8_t sr_byte(uint64_t seed, uint32_t stream, uint64_t i) {
  const auto w = fp4sim::philox_block(seed, stream, i >> 4);
  const unsigned b = static_cast<unsigned>(i & 15u);
  return static_cast<uint8_t>(w[b >> 2] >> (8u * (b & 3u)));
}

// Rounds t >= 0 (exact double) to an integer: RNE, RNA, RZ or SR floor(t + r/256), exactly.
FP4SIM_HD double round_int(double t, int rnd, uint8_t r) {
  const double fl = floor(t);
  const double fr = t - fl;  // exact
  switch (rnd) {
    case kRne: return fr > 0.5 || (fr == 0.5 && fmod(fl, 2.0) != 0.0) ? fl + 1.0 : fl;
    case kRna: return fr >= 0.5 ? fl + 1.0 : fl;
    case kRz: return fl;
    default: return fr * 256.0 >= 256.0 - static_cast<double>(r) ? fl + 1.0 : fl;  // fr*256 exact
  }
}

// Magnitude code of a >= 0 (a double holding an exact value; +Inf allowed) in a small float
// format with subnormals, saturating at max: fp4sim::encode(f, a, rnd, true, r) for a >= 0.
FP4SIM_HD uint32_t encode_mag(const Elem& f, double a, int rnd, uint8_t r) {
  if (!(a <= f.max_value * 4.0)) return f.max_code;  // Inf (and far above max): saturate
  if (a == 0.0) return 0u;
  const int emin = 1 - f.bias;
  const int e = hmax(ilogb(a), emin);
  const double t = a * pow2d(f.mbits - e);  // exact: a power-of-two scaling in range
  const auto n = static_cast<uint32_t>(round_int(t, rnd, r));
  if (n == 0) return 0u;
  const uint32_t hidden = 1u << f.mbits;
  uint32_t code;
  if (n < hidden) {
    code = n;  // only when e == emin: a subnormal (or its exponent field is 0)
  } else if (n >= 2 * hidden) {
    code = (static_cast<uint32_t>(e + 1 + f.bias) << f.mbits);  // carry into the next binade
  } else {
    code = (static_cast<uint32_t>(e + f.bias) << f.mbits) | (n - hidden);
  }
  return hmin(code, f.max_code);
}

// ---- MX (SPEC §2.1) ----

// Shared exponent of a block with finite amax > 0 (as FP32 bits), clamped to [-127, 127].
FP4SIM_HD int mx_shared_exp(const Elem& f, uint32_t amax_bits, int rule) {
  int lg;
  if (amax_bits >= 0x00800000u) {
    lg = static_cast<int>(amax_bits >> 23) - 127;
  } else {
    lg = -149 + (63 - clz64(amax_bits));  // FP32 subnormal: position of the top bit
  }
  int e = lg - f.emax_elem;
  if (rule == kCeil) {
    // smallest e with max_elem * 2^e >= amax; exact in double (both are dyadic, in range)
    if (f.max_value * pow2d(e) < static_cast<double>(u2f(amax_bits))) ++e;
  }
  return hmax(-127, hmin(127, e));
}

// The scale of one MX block from its largest magnitude (FP32 bits, NaN / Inf included): the UE8M0
// code, and either the inverse scale 2^-e or "all codes zero" (amax zero: code 0; non-finite: NaN
// scale 0xFF).
struct MxScale {
  uint8_t code;
  bool zero_codes;
  double inv;
};
FP4SIM_HD MxScale mx_scale(const Elem& f, uint32_t amax_bits, int rule) {
  if (amax_bits >= kExpMask || amax_bits == 0) return {amax_bits == 0 ? uint8_t{0} : uint8_t{0xFF}, true, 0.0};
  const int e = mx_shared_exp(f, amax_bits, rule);
  return {static_cast<uint8_t>(e + 127), false, pow2d(-e)};
}

// One MX element code given its block's scale and its SR byte.
FP4SIM_HD uint8_t mx_elem(const Elem& f, float x, const MxScale& s, int rnd, uint8_t rb) {
  if (s.zero_codes) return 0;
  const uint32_t xb = f2u(x);
  const double a = static_cast<double>(u2f(xb & 0x7FFFFFFFu)) * s.inv;  // exact in double
  return static_cast<uint8_t>(encode_mag(f, a, rnd, rb) | (neg_bit(xb) ? f.sign_bit : 0u));
}

// One MX block of 32: codes[0..31] and the UE8M0 scale code. first_index = flat index of x[0].
FP4SIM_HD void mx_block(const Elem& f, const float* x, int rnd, int rule, uint64_t seed, uint32_t stream,
                        uint64_t first_index, uint8_t* codes, uint8_t* scale) {
  uint32_t amax_bits = 0;
  for (int i = 0; i < 32; ++i) amax_bits = hmax(amax_bits, f2u(x[i]) & 0x7FFFFFFFu);
  const MxScale s = mx_scale(f, amax_bits, rule);
  *scale = s.code;
  for (int i = 0; i < 32; ++i) {
    const uint8_t rb = rnd == kSr ? sr_byte(seed, stream, first_index + static_cast<uint64_t>(i)) : uint8_t{0};
    codes[i] = mx_elem(f, x[i], s, rnd, rb);
  }
}

// ---- NVFP4 (SPEC §2.2), FP32 as TransformerEngine computes it ----

// fmaxf-style |x| max ignoring NaN (Inf kept), as FP32 bits.
FP4SIM_HD uint32_t abs_bits_ignore_nan(float x) {
  const uint32_t a = f2u(x) & 0x7FFFFFFFu;
  return a <= kExpMask ? a : 0u;
}

struct Nvfp4Scale {
  float s_enc;
  float s_dec;
};

FP4SIM_HD Nvfp4Scale nvfp4_tensor_scale(float amax, bool pts) {
  if (!pts) return {1.0f, 1.0f};
  float s_enc = (448.0f * 6.0f) / amax;
  s_enc = s_enc < FLT_MAX ? s_enc : FLT_MAX;  // min(s_enc, FLT_MAX); s_enc is never NaN here
  if (amax == 0.0f || s_enc == 0.0f) s_enc = 1.0f;
  return {s_enc, 1.0f / s_enc};
}

// UE4M3 code of f >= 0 (or +Inf) under RNE, saturating at 448.
FP4SIM_HD uint8_t ue4m3_rne_sat(float f) {
  if (f > 448.0f) return 0x7E;
  if (f < 0x1p-6f) return static_cast<uint8_t>(rintf(f * 512.0f));  // exact scaling, RNE
  uint32_t u = f2u(f);
  u += 0x7FFFFu + ((u >> 20) & 1u);
  return static_cast<uint8_t>((((u >> 23) - 120u) << 3) | ((u >> 20) & 7u));
}

FP4SIM_HD float ue4m3_value(uint32_t c) {  // c in 0x00..0x7E
  const uint32_t e = c >> 3, m = c & 7u;
  return e == 0 ? static_cast<float>(m) * 0x1p-9f : u2f(((e + 120u) << 23) | (m << 20));
}

FP4SIM_HD uint8_t nvfp4_scale_code(float block_amax, const Nvfp4Scale& ts) {
  const float m = ts.s_enc * (1.0f / 6.0f);
  return ue4m3_rne_sat(block_amax * m);
}

FP4SIM_HD float nvfp4_inverse(uint32_t code, const Nvfp4Scale& ts) {
  const float s = ue4m3_value(code & 0x7Fu) * ts.s_dec;
  const float inv = 1.0f / s;
  return inv < FLT_MAX ? inv : FLT_MAX;  // 1/0 = +Inf -> FLT_MAX
}

// E2M1 magnitude code under RNE with satfinite from |v|'s FP32 bits (Inf/NaN -> 7 = 6).
FP4SIM_HD uint32_t e2m1_rne_mag(uint32_t ab) {
  return static_cast<uint32_t>(ab > 0x3E800000u) + (ab >= 0x3F400000u) + (ab > 0x3FA00000u) +
         (ab >= 0x3FE00000u) + (ab > 0x40200000u) + (ab >= 0x40600000u) + (ab > 0x40A00000u);
}

FP4SIM_HD Elem e2m1_elem() { return Elem{1, 1, 7u, 8u, 2, 6.0}; }  // a function: device code cannot read host globals

// One NVFP4 element code of x given the block's inverse scale.
FP4SIM_HD uint8_t nvfp4_elem(float x, float inv, int rnd, uint8_t rb) {
  const float v = x * inv;
  const uint32_t xb = f2u(x);
  if (rnd == kRne) return static_cast<uint8_t>(e2m1_rne_mag(f2u(v) & 0x7FFFFFFFu) | (neg_bit(xb) << 3));
  if (is_nan_bits(f2u(v))) return 7;
  const double a = static_cast<double>(u2f(f2u(v) & 0x7FFFFFFFu));
  return static_cast<uint8_t>(encode_mag(e2m1_elem(), a, rnd, rb) | (neg_bit(xb) << 3));  // sign from x
}

// One 1x16 block: scale code from the block amax, then the 16 element codes.
FP4SIM_HD void nvfp4_block(const float* x, const Nvfp4Scale& ts, int rnd, uint64_t seed, uint32_t stream,
                           uint64_t first_index, uint8_t* codes, uint8_t* scale) {
  uint32_t am = 0;
  for (int i = 0; i < 16; ++i) am = hmax(am, abs_bits_ignore_nan(x[i]));
  const uint8_t code = nvfp4_scale_code(u2f(am), ts);
  *scale = code;
  const float inv = nvfp4_inverse(code, ts);
  for (int i = 0; i < 16; ++i) {
    const uint8_t rb = rnd == kSr ? sr_byte(seed, stream, first_index + static_cast<uint64_t>(i)) : uint8_t{0};
    codes[i] = nvfp4_elem(x[i], inv, rnd, rb);
  }
}

// 2D: one 16x16 tile (rows r0 .. min(rows, r0+16), columns 16*jb ..): one amax, shared scale.
FP4SIM_HD void nvfp4_tile2d(const float* x, size_t rows, size_t cols, size_t r0, size_t jb, const Nvfp4Scale& ts,
                            int rnd, uint64_t seed, uint32_t stream, uint8_t* codes, uint8_t* scales) {
  const size_t r1 = hmin(rows, r0 + 16);
  uint32_t am = 0;
  for (size_t r = r0; r < r1; ++r)
    for (int i = 0; i < 16; ++i) am = hmax(am, abs_bits_ignore_nan(x[r * cols + jb * 16 + static_cast<size_t>(i)]));
  const uint8_t code = nvfp4_scale_code(u2f(am), ts);
  const float inv = nvfp4_inverse(code, ts);
  for (size_t r = r0; r < r1; ++r) {
    const size_t off = r * cols + jb * 16;
    scales[r * (cols / 16) + jb] = code;
    for (int i = 0; i < 16; ++i) {
      const uint64_t idx = off + static_cast<uint64_t>(i);
      const uint8_t rb = rnd == kSr ? sr_byte(seed, stream, idx) : uint8_t{0};
      codes[idx] = nvfp4_elem(x[idx], inv, rnd, rb);
    }
  }
}

// ---- RHT-16 (SPEC §2.4): output j of one 16-tile, the exact sum rounded once, / 4 exact ----
FP4SIM_HD float rht16_output(const float* x, uint32_t sign_mask, int j, bool to_bf16) {
  bool nan = false, pinf = false, ninf = false;
  ExactFloatSum acc;
  acc.clear();
  for (int i = 0; i < 16; ++i) {
    const uint32_t xb = f2u(x[i]);
    const uint32_t ab = xb & 0x7FFFFFFFu;
    // sign of the term: x's sign, times d[i], times H[i][j] = (-1)^popcount(i & j)
    const bool flip = (((sign_mask >> i) & 1u) ^ (popc(static_cast<uint32_t>(i & j)) & 1u)) != 0;
    const bool neg = ((xb >> 31) != 0) != flip;
    if (ab > kExpMask) nan = true;
    else if (ab == kExpMask) (neg ? ninf : pinf) = true;
    else acc.add_mag(ab, neg);
  }
  float y;
  if (nan || (pinf && ninf)) y = u2f(0x7FC00000u);
  else if (pinf) y = u2f(kExpMask);
  else if (ninf) y = u2f(0xFF800000u);
  else y = u2f(acc.round_fp32_scaled(-2, true));  // 1/sqrt(16) = 2^-2
  return to_bf16 ? bf16_round(y) : y;
}

// ---- HiF4 (SPEC §2.3), the official To_HiFX evaluated exactly ----

// RNE of a positive normal double to `bits` significant bits, on the bit pattern.
FP4SIM_HD double round_sig_bits(double v, int bits) {
  const int drop = 52 - (bits - 1);
  uint64_t u = d2u(v);
  u += ((uint64_t{1} << (drop - 1)) - 1) + ((u >> drop) & 1u);
  return u2d(u & ~((uint64_t{1} << drop) - 1));
}

FP4SIM_HD double e6m2_value(uint32_t c) {  // c < 0xFF
  return static_cast<double>(4 + (c & 3u)) * pow2d(static_cast<int>(c >> 2) - 48 - 2);
}

FP4SIM_HD uint8_t hif4_e6m2_code(float vmax) {
  double sf = round_sig_bits(static_cast<double>(vmax) * 0.142578125, 8);  // BF16(Vmax * BF16(1/7))
  sf = hmax(0x1p-48, hmin(49152.0, sf));
  const uint64_t u = d2u(round_sig_bits(sf, 3));
  const int e = static_cast<int>(u >> 52) - 1023;
  return static_cast<uint8_t>(((e + 48) << 2) | static_cast<int>((u >> 50) & 3u));
}

// The block constants of one HiF4 block from vmax (FP32 magnitude bits of its largest |x|):
// the E6M2 code and BF16(1 / E6M2); nan when vmax is NaN / Inf (fp4sim choice: NaN scale, zero codes).
struct Hif4Consts {
  uint8_t e6;
  bool nan;
  double rec;
};
FP4SIM_HD Hif4Consts hif4_consts(uint32_t vmax) {
  if (vmax >= kExpMask) return {0xFF, true, 0.0};
  const uint8_t e6 = vmax == 0 ? uint8_t{0} : hif4_e6m2_code(u2f(vmax));
  return {e6, false, round_sig_bits(1.0 / e6m2_value(e6), 8)};
}

// Group j (of 16, 4 elements x[0..3]) of a HiF4 block: its codes (codes[0..3]) and its share of the
// scale word (level bits: l2 of pair j / 2 at 8 + j / 2, l3 at 16 + j; both groups of a pair give
// the same l2). v_self = the group's largest magnitude bits, v_pair = its pair partner's (group j ^ 1).
// rb4 = the 4 SR bytes (byte i for element i), used if rnd = kSr.
FP4SIM_HD uint32_t hif4_group(const Hif4Consts& hc, int j, uint32_t v_self, uint32_t v_pair, const float* x, int rnd,
                              uint32_t rb4, uint8_t* codes) {
  if (hc.nan) {
    for (int i = 0; i < 4; ++i) codes[i] = 0;
    return 0;
  }
  const double rec = hc.rec;
  const double v8 = static_cast<double>(u2f(hmax(v_self, v_pair)));
  const int l2 = v8 * rec >= 4.0;  // exact products
  const int l3 = static_cast<double>(u2f(v_self)) * rec * (l2 ? 0.5 : 1.0) >= 2.0;
  const double kj = rec * (l2 + l3 == 0 ? 4.0 : (l2 + l3 == 1 ? 2.0 : 1.0));  // 4 * 2^-level
  for (int i = 0; i < 4; ++i) {
    const uint32_t xb = f2u(x[i]);
    const double add = rnd == kSr ? static_cast<uint8_t>(rb4 >> (8 * i)) / 256.0 : 0.5;
    const double t = static_cast<double>(u2f(xb & 0x7FFFFFFFu)) * kj;  // exact (<= 32 significant bits)
    const double fl = floor(t + add);  // exact (see golden quant.cpp hif4_codes)
    const auto c = static_cast<uint32_t>(fl < 7.0 ? fl : 7.0);
    codes[i] = static_cast<uint8_t>(c | (neg_bit(xb) << 3));
  }
  return (static_cast<uint32_t>(l2) << (8 + j / 2)) | (static_cast<uint32_t>(l3) << (16 + j));
}

// The 4 SR bytes of elements i .. i + 3 (i a multiple of 4) packed little-endian: one word of
// the Philox block of i / 16 (SPEC §3 layout).
FP4SIM_HD uint32_t sr_word4(uint64_t seed, uint32_t stream, uint64_t i) {
  const auto w = fp4sim::philox_block(seed, stream, i >> 4);
  return w[(i >> 2) & 3u];
}

// One HiF4 block of 64: codes and the 32-bit scale word. rnd: kRna (half up) or kSr.
FP4SIM_HD void hif4_block(const float* x, int rnd, uint64_t seed, uint32_t stream, uint64_t first_index,
                          uint8_t* codes, uint32_t* word) {
  uint32_t v16[16];
  uint32_t vmax = 0;
  for (int j = 0; j < 16; ++j) {
    uint32_t m = 0;
    for (int i = 0; i < 4; ++i) m = hmax(m, f2u(x[4 * j + i]) & 0x7FFFFFFFu);
    v16[j] = m;
    vmax = hmax(vmax, m);
  }
  const Hif4Consts hc = hif4_consts(vmax);
  uint32_t w = hc.nan ? 0xFFu : hc.e6;
  for (int j = 0; j < 16; ++j) {
    const uint32_t rb4 = rnd == kSr ? sr_word4(seed, stream, first_index + 4u * static_cast<uint64_t>(j)) : 0u;
    w |= hif4_group(hc, j, v16[j], v16[j ^ 1], x + 4 * j, rnd, rb4, codes + 4 * j);
  }
  *word = w;
}

}  // namespace fp4sim::gpu::hd
