// SPEC §2 step by step for one element or one block scale (quant_explain.hpp).
#include "fp4sim/io/quant_explain.hpp"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "fp4sim/hadamard.hpp"
#include "fp4sim/philox.hpp"

namespace fp4sim::vectors {

namespace {

std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}
std::string hex2(uint32_t c) {
  char b[8];
  std::snprintf(b, sizeof b, "0x%02x", c);
  return b;
}
std::string hex8(uint32_t c) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", c);
  return b;
}

// max |v| ignoring NaN (fmaxf, as TE's amax kernels); Inf kept.
float amax_nan_ignoring(const float* v, size_t n, size_t stride = 1) {
  float m = 0.0f;
  for (size_t i = 0; i < n; ++i) m = std::fmax(m, std::fabs(v[i * stride]));
  return m;
}

// Round v (finite, >= 0) to `bits` significant bits, ties to even; exact on doubles.
double round_sig(double v, int bits) {
  if (v == 0.0) return 0.0;
  int e = 0;
  const double m = std::frexp(v, &e);  // [0.5, 1)
  return std::ldexp(std::nearbyint(std::ldexp(m, bits)), e - bits);
}

// Sorted magnitude grid of an element format: (value, code).
std::vector<std::pair<double, uint32_t>> grid(const ElemFormat& f) {
  std::vector<std::pair<double, uint32_t>> g;
  for (uint32_t c = 0; c <= f.mag_mask(); ++c) {
    const double v = decode(f, c);
    if (std::isfinite(v)) g.emplace_back(v, c);
  }
  std::sort(g.begin(), g.end());
  return g;
}

// Neighbours of |s| on grid g; tie flag.
void neighbours(ElementSteps& e, const std::vector<std::pair<double, uint32_t>>& g, double s) {
  const double a = std::fabs(s);
  if (a >= g.back().first) {
    e.lower = e.upper = g.back().first;
    e.lower_code = e.upper_code = g.back().second;
    return;
  }
  size_t i = 0;
  while (i + 1 < g.size() && g[i + 1].first <= a) ++i;
  e.lower = g[i].first;
  e.lower_code = g[i].second;
  if (g[i].first == a) {
    e.upper = e.lower;
    e.upper_code = e.lower_code;
    return;
  }
  e.upper = g[i + 1].first;
  e.upper_code = g[i + 1].second;
  e.tie = a - e.lower == e.upper - a;
}

// The rounding rule that picks between lower and upper for a finite scaled value.
std::string rounding_rule(ElementSteps& e, Rounding rnd, uint64_t seed, uint32_t stream, uint64_t index,
                          double step_lo, double step_hi, const char* max_text) {
  const double a = std::fabs(e.scaled);
  if (e.lower == e.upper && a > e.upper) return std::string("saturate at ") + max_text;
  if (e.lower == e.upper) return "on the grid (exact)";
  switch (rnd) {
    case Rounding::Rne:
      if (e.tie) return std::string("tie -> even (") + ((e.lower_code & 1) ? "up" : "down") + ")";
      return "nearest";
    case Rounding::Rna:
      return e.tie ? "tie -> away from zero (up on the magnitude)" : "nearest";
    case Rounding::Rz:
      return "toward zero";
    case Rounding::Sr: {
      const uint8_t r = sr_byte(seed, stream, index);
      const double frac = (a - e.lower) / (e.upper - e.lower);
      (void)step_lo;
      (void)step_hi;
      return "SR: random byte r = " + hex2(r) + " (element index " + std::to_string(index) + "), fraction " +
             num(frac) + " of the step; rounds up iff fraction + r/256 >= 1 (" + num(frac + r / 256.0) + ")";
    }
  }
  return "?";
}

void sign_rules(ElementSteps& e, float x, const ElemFormat& ef) {
  const uint32_t mag = e.code & ef.mag_mask();
  if (x == 0.0f && std::signbit(x)) e.rule += "; -0 input -> +0 code (sign set only for x < 0)";
  else if (x < 0.0f && mag == 0) e.rule += "; negative value rounds to 0 -> -0 code";
}

}  // namespace

std::string float_hex(float v) { return hex8(std::bit_cast<uint32_t>(v)) + " (" + num(v) + ")"; }

uint8_t ue4m3_rn(float v) {
  if (std::isnan(v)) return 0x7F;
  const uint32_t c = encode(kUE4M3, static_cast<double>(v), Rounding::Rne, true);
  return static_cast<uint8_t>(c);
}

Nvfp4ScaleOrders nvfp4_scale_orders(float block_amax, float amax_tensor) {
  const Nvfp4TensorScale ts = nvfp4_tensor_scale(amax_tensor, true);
  Nvfp4ScaleOrders o;
  const float sixth = 1.0f / 6.0f;
  o.sdec_te = block_amax * (ts.s_enc * sixth);
  const float a6 = block_amax / 6.0f;
  o.sdec_div6_mul = a6 * ts.s_enc;
  o.sdec_div6_div = a6 / ts.s_dec;
  // S_dec computed from the amax directly; S_enc its reciprocal.
  float sdec2 = amax_tensor / 2688.0f;
  float senc2 = 1.0f / sdec2;
  senc2 = std::min(senc2, FLT_MAX);
  if (amax_tensor == 0.0f || senc2 == 0.0f) senc2 = 1.0f;
  o.sdec_amax2688 = block_amax * (senc2 * sixth);
  o.te = ue4m3_rn(o.sdec_te);
  o.div6_mul = ue4m3_rn(o.sdec_div6_mul);
  o.div6_div = ue4m3_rn(o.sdec_div6_div);
  o.amax2688 = ue4m3_rn(o.sdec_amax2688);
  return o;
}

std::vector<float> quantizer_view(std::span<const float> x, size_t cols, const QuantOptions& opt) {
  std::vector<float> v(x.begin(), x.end());
  if (opt.rht > 0) {
    const std::vector<int8_t> signs = rht_signs(opt.rht, opt.rht_seeded, opt.rht_seed);
    rht_apply(v, cols, opt.rht, signs, opt.rht_bf16);
  }
  return v;
}

namespace {

struct Nvfp4Block {
  float amax_t = 0, s_enc_raw = 0, m = 0, sdec_b = 0, inv = 0, block_amax = 0;
  Nvfp4TensorScale ts;
  uint8_t code = 0;
};

Nvfp4Block nvfp4_block(const QuantOptions& opt, const std::vector<float>& v, size_t rows, size_t cols, size_t r,
                       size_t j) {
  Nvfp4Block b;
  b.amax_t = amax_nan_ignoring(v.data(), v.size());
  b.ts = nvfp4_tensor_scale(b.amax_t, opt.pts);
  b.s_enc_raw = (448.0f * 6.0f) / b.amax_t;
  if (opt.two_d) {
    const size_t r0 = r / 16 * 16, r1 = std::min(r0 + 16, rows);
    for (size_t i = r0; i < r1; ++i) b.block_amax = std::fmax(b.block_amax, amax_nan_ignoring(&v[i * cols + j * 16], 16));
  } else {
    b.block_amax = amax_nan_ignoring(&v[r * cols + j * 16], 16);
  }
  b.m = b.ts.s_enc * (1.0f / 6.0f);
  b.sdec_b = b.block_amax * b.m;
  b.code = ue4m3_rn(b.sdec_b);
  b.inv = nvfp4_block_inverse(b.code, b.ts);
  return b;
}

void nvfp4_fields(std::vector<std::pair<std::string, std::string>>& f, const QuantOptions& opt, const Nvfp4Block& b) {
  f.emplace_back("tensor amax", float_hex(b.amax_t));
  if (opt.pts) {
    f.emplace_back("S_enc = RN(2688 / amax)", float_hex(b.s_enc_raw) +
                                                 (b.s_enc_raw != b.ts.s_enc ? " -> " + float_hex(b.ts.s_enc) +
                                                                                  (b.amax_t == 0.0f ? " (amax = 0: S_enc = 1)"
                                                                                                    : " (clamped to FLT_MAX / set to 1)")
                                                                            : std::string()));
  } else {
    f.emplace_back("S_enc", "1 (PTS off)");
  }
  f.emplace_back("S_dec = RN(1 / S_enc)", float_hex(b.ts.s_dec));
  f.emplace_back(opt.two_d ? "block amax (16x16 tile)" : "block amax", float_hex(b.block_amax));
  f.emplace_back("m = RN(S_enc * RN(1/6))", float_hex(b.m));
  f.emplace_back("sdec_b = RN(amax * m)", float_hex(b.sdec_b));
  f.emplace_back("scale code = UE4M3(sdec_b) RN, saturating", hex2(b.code) + " (" + num(decode(kUE4M3, b.code)) + ")");
  f.emplace_back("inv_b = min(RN(1 / RN(scale * S_dec)), FLT_MAX)", float_hex(b.inv));
}

struct MxBlock {
  float amax = 0;
  bool special = false;  // Inf or NaN in the block
  int e = 0;             // shared exponent (clamped)
  int e_raw = 0;
  bool nan_scale = false;
  uint32_t code = 0;
};

MxBlock mx_block(BlockFormat f, const QuantOptions& opt, const float* xb) {
  const BlockFormatInfo& fi = info(f);
  MxBlock b;
  for (int i = 0; i < fi.block; ++i) {
    if (!std::isfinite(xb[i])) b.special = true;
    else b.amax = std::max(b.amax, std::fabs(xb[i]));
  }
  if (b.special) {
    b.nan_scale = true;
    b.code = 0xFF;
    return b;
  }
  if (b.amax == 0.0f) {
    b.e = -127;
    b.code = 0;
    return b;
  }
  if (opt.scale_rule == ScaleRule::Floor) {
    b.e_raw = std::ilogb(b.amax) - fi.emax_elem;  // exact from the FP32 bits, subnormals included
  } else {
    const double mx = decode(*fi.elem, fi.elem->max_code());
    int e = std::ilogb(b.amax) - std::ilogb(mx) - 1;
    while (std::ldexp(mx, e) < static_cast<double>(b.amax)) ++e;
    b.e_raw = e;
  }
  b.e = std::max(b.e_raw, -127);
  if (b.e > 127) {
    b.nan_scale = true;
    b.code = 0xFF;
  } else {
    b.code = static_cast<uint32_t>(b.e + 127);
  }
  return b;
}

struct Hif4Block {
  float v16[16]{}, v8[8]{}, vmax = 0;
  double sf_raw = 0, sf = 0, rec = 0;
  uint32_t e6m2 = 0, word = 0;
  bool special = false;
};

Hif4Block hif4_block(const float* xb) {
  Hif4Block b;
  for (int i = 0; i < 64; ++i)
    if (!std::isfinite(xb[i])) b.special = true;
  if (b.special) {
    b.word = 0xFF;
    return b;
  }
  for (int j = 0; j < 16; ++j)
    for (int i = 0; i < 4; ++i) b.v16[j] = std::max(b.v16[j], std::fabs(xb[4 * j + i]));
  for (int k = 0; k < 8; ++k) b.v8[k] = std::max(b.v16[2 * k], b.v16[2 * k + 1]);
  for (int k = 0; k < 8; ++k) b.vmax = std::max(b.vmax, b.v8[k]);
  if (b.vmax == 0.0f) {
    b.word = 0;
    b.rec = 0;
    return b;
  }
  b.sf_raw = static_cast<double>(b.vmax) * 0.142578125;  // exact: 24 x 8 significant bits
  b.sf = std::clamp(round_sig(b.sf_raw, 8), 0x1p-48, 49152.0);
  const double e6 = std::clamp(round_sig(b.sf, 3), 0x1p-48, 49152.0);
  b.e6m2 = encode(kE6M2, e6, Rounding::Rne, true);
  b.rec = round_sig(1.0 / decode(kE6M2, b.e6m2), 8);
  uint32_t w = b.e6m2;
  for (int k = 0; k < 8; ++k)
    if (static_cast<double>(b.v8[k]) * b.rec >= 4.0) w |= 1u << (8 + k);
  for (int j = 0; j < 16; ++j) {
    const int l8 = static_cast<int>((w >> (8 + j / 2)) & 1u);
    if (std::ldexp(static_cast<double>(b.v16[j]) * b.rec, -l8) >= 2.0) w |= 1u << (16 + j);
  }
  b.word = w;
  return b;
}

}  // namespace

ElementSteps explain_element(BlockFormat f, const QuantOptions& opt, std::span<const float> x, size_t rows,
                             size_t cols, size_t r, size_t c) {
  const BlockFormatInfo& fi = info(f);
  if (x.size() != rows * cols || r >= rows || c >= cols || cols % static_cast<size_t>(fi.block) != 0)
    throw std::invalid_argument("explain_element: position outside the tensor or cols not a multiple of the block");
  const std::vector<float> v = quantizer_view(x, cols, opt);
  const size_t B = static_cast<size_t>(fi.block), j = c / B;
  const float xv = v[r * cols + c];
  const uint64_t index = static_cast<uint64_t>(r) * cols + c;
  const Rounding rnd = effective_rounding(f, opt.rounding);
  ElementSteps e;
  e.input = xv;
  if (opt.rht > 0) e.fields.emplace_back("input before the RHT", float_hex(x[r * cols + c]));
  e.fields.emplace_back("input x", float_hex(xv));
  const ElemFormat& ef = *fi.elem;
  const uint32_t sign = xv < 0.0f ? ef.sign_bit() : 0u;
  if (f == BlockFormat::Nvfp4) {
    const Nvfp4Block b = nvfp4_block(opt, v, rows, cols, r, j);
    nvfp4_fields(e.fields, opt, b);
    e.scale = b.code;
    const float s = xv * b.inv;
    e.scaled = s;
    e.fields.emplace_back("scaled = RN(x * inv_b)", float_hex(s));
    if (std::isnan(xv)) {
      e.code = 7;
      e.rule = "NaN -> +6 (satfinite)";
    } else {
      neighbours(e, grid(ef), s);
      const uint32_t mag = encode(ef, std::fabs(static_cast<double>(s)), rnd, true,
                                  rnd == Rounding::Sr ? sr_byte(opt.seed, opt.stream, index) : uint8_t{0});
      e.code = mag | sign;
      e.rule = rounding_rule(e, rnd, opt.seed, opt.stream, index, 0, 0, "+-6");
    }
  } else if (f == BlockFormat::Hif4) {
    const Hif4Block b = hif4_block(&v[r * cols + j * 64]);
    e.scale = b.word;
    if (b.special) {
      e.code = 0;
      e.scaled = std::numeric_limits<double>::quiet_NaN();
      e.rule = "Inf or NaN in the block -> scale word 0xFF (NaN), every element code 0 (fp4sim choice)";
    } else {
      const size_t q = c % 64;
      const int lvl = hif4_level(b.word, static_cast<int>(q));
      e.fields.emplace_back("V16 (4-group max)", float_hex(b.v16[q / 4]));
      e.fields.emplace_back("V8 (8-group max)", float_hex(b.v8[q / 8]));
      e.fields.emplace_back("Vmax", float_hex(b.vmax));
      e.fields.emplace_back("SF = BF16(Vmax * BF16(1/7))", num(b.sf));
      e.fields.emplace_back("E6M2", hex2(b.e6m2) + " (" + num(decode(kE6M2, b.e6m2)) + ")");
      e.fields.emplace_back("REC = BF16(1 / E6M2)", num(b.rec));
      e.fields.emplace_back("level = E1_8 + E1_16", std::to_string(lvl) + " (word " + hex8(b.word) + ")");
      e.scaled = std::ldexp(4.0 * std::fabs(static_cast<double>(xv)) * b.rec, -lvl);  // exact
      e.fields.emplace_back("scaled c = 4|x| * REC * 2^-level", num(e.scaled));
      std::vector<std::pair<double, uint32_t>> g;
      for (uint32_t k = 0; k < 8; ++k) g.emplace_back(static_cast<double>(k), k);
      neighbours(e, g, e.scaled);
      const uint8_t rb = rnd == Rounding::Sr ? sr_byte(opt.seed, opt.stream, index) : uint8_t{0};
      double cq = rnd == Rounding::Sr ? std::floor(e.scaled + rb / 256.0) : std::floor(e.scaled + 0.5);
      e.code = static_cast<uint32_t>(std::min(cq, 7.0)) | sign;
      e.rule = rnd == Rounding::Sr ? rounding_rule(e, rnd, opt.seed, opt.stream, index, 0, 0, "7")
               : e.lower == e.upper && e.scaled > 7 ? std::string("c >= 8 -> 7")
               : e.tie                             ? std::string("tie -> up (floor(c + 0.5), half up on the magnitude)")
                                                   : std::string("nearest (floor(c + 0.5))");
    }
  } else {
    const MxBlock b = mx_block(f, opt, &v[r * cols + j * B]);
    e.scale = b.code;
    e.fields.emplace_back("block amax", float_hex(b.amax));
    if (b.special) {
      e.scaled = std::numeric_limits<double>::quiet_NaN();
      e.code = 0;
      e.rule = "Inf or NaN in the block -> scale 0xFF (NaN): the block dequantizes to NaN";
    } else if (b.amax == 0.0f) {
      e.scaled = 0.0;
      e.code = sign;
      e.rule = "all-zero block -> scale code 0, elements 0";
    } else {
      e.fields.emplace_back(opt.scale_rule == ScaleRule::Floor ? "e = floor(log2 amax) - emax_elem"
                                                               : "e = log2(smallest power of two >= amax / max_elem)",
                            std::to_string(b.e_raw) + (b.e != b.e_raw ? " -> clamped to " + std::to_string(b.e) : ""));
      e.fields.emplace_back("scale code", hex2(b.code) + (b.nan_scale ? " (NaN: e above 127)" : ""));
      e.scaled = std::ldexp(static_cast<double>(xv), -b.e);  // exact
      e.fields.emplace_back("scaled = x / 2^e", num(e.scaled));
      neighbours(e, grid(ef), e.scaled);
      const uint32_t mag = encode(ef, std::fabs(e.scaled), rnd, true,
                                  rnd == Rounding::Sr ? sr_byte(opt.seed, opt.stream, index) : uint8_t{0});
      e.code = mag | sign;
      e.rule = rounding_rule(e, rnd, opt.seed, opt.stream, index, 0, 0,
                             ("+-" + num(decode(ef, ef.max_code()))).c_str());
    }
  }
  if (std::isfinite(e.scaled)) {
    e.fields.emplace_back("neighbouring codes", hex2(e.lower_code | sign) + " (" + num(e.lower) + "), " +
                                                    hex2(e.upper_code | sign) + " (" + num(e.upper) + ")" +
                                                    (e.tie ? ": exactly the midpoint" : ""));
    sign_rules(e, xv, ef);
  }
  e.fields.emplace_back("rule", e.rule);
  e.fields.emplace_back("code by these steps", hex2(e.code));
  return e;
}

ScaleSteps explain_scale(BlockFormat f, const QuantOptions& opt, std::span<const float> x, size_t rows, size_t cols,
                         size_t r, size_t j) {
  const BlockFormatInfo& fi = info(f);
  const size_t B = static_cast<size_t>(fi.block);
  if (x.size() != rows * cols || r >= rows || (j + 1) * B > cols)
    throw std::invalid_argument("explain_scale: block outside the tensor");
  const std::vector<float> v = quantizer_view(x, cols, opt);
  ScaleSteps s;
  if (f == BlockFormat::Nvfp4) {
    const Nvfp4Block b = nvfp4_block(opt, v, rows, cols, r, j);
    nvfp4_fields(s.fields, opt, b);
    s.code = b.code;
    const double sd = b.sdec_b;
    const uint32_t lo = encode(kUE4M3, sd, Rounding::Rz, true);
    const uint32_t hi = decode(kUE4M3, lo) == sd || lo >= 0x7E ? lo : lo + 1;
    s.fields.emplace_back("neighbouring scale codes", hex2(lo) + " (" + num(decode(kUE4M3, lo)) + "), " + hex2(hi) +
                                                          " (" + num(decode(kUE4M3, hi)) + ")" +
                                                          (lo != hi && sd - decode(kUE4M3, lo) == decode(kUE4M3, hi) - sd
                                                               ? ": sdec_b is exactly the midpoint (tie -> even)"
                                                               : ""));
    if (opt.pts) {
      const Nvfp4ScaleOrders o = nvfp4_scale_orders(b.block_amax, b.amax_t);
      s.fields.emplace_back("other orders (not the spec)",
                            "RN(RN(amax/6)*S_enc) = " + num(o.sdec_div6_mul) + " -> " + hex2(o.div6_mul) +
                                "; RN(RN(amax/6)/S_dec) = " + num(o.sdec_div6_div) + " -> " + hex2(o.div6_div) +
                                "; S_dec = amax/2688: " + num(o.sdec_amax2688) + " -> " + hex2(o.amax2688));
    }
  } else if (f == BlockFormat::Hif4) {
    const Hif4Block b = hif4_block(&v[r * cols + j * 64]);
    s.code = b.word;
    if (b.special) {
      s.fields.emplace_back("rule", "Inf or NaN in the block -> word 0x000000ff (NaN E6M2), fp4sim choice");
    } else {
      s.fields.emplace_back("Vmax", float_hex(b.vmax));
      s.fields.emplace_back("Vmax * BF16(1/7) (exact)", num(b.sf_raw));
      s.fields.emplace_back("SF = BF16(...), clamped to [2^-48, 49152]", num(b.sf));
      s.fields.emplace_back("E6M2 = SF to 3 significant bits, ties to even",
                            hex2(b.e6m2) + " (" + num(decode(kE6M2, b.e6m2)) + ")");
      s.fields.emplace_back("REC = BF16(1 / E6M2)", num(b.rec));
      std::string v8;
      for (int k = 0; k < 8; ++k) v8 += (k ? " " : "") + num(b.v8[k]);
      s.fields.emplace_back("V8", v8);
      s.fields.emplace_back("E1_8 = (V8 * REC >= 4), E1_16 = (V16 * REC * 2^-E1_8 >= 2)",
                            hex2((b.word >> 8) & 0xFF) + ", " + hex8(b.word >> 16));
    }
    s.fields.emplace_back("word by these steps", hex8(b.word));
    return s;
  } else {
    const MxBlock b = mx_block(f, opt, &v[r * cols + j * B]);
    s.code = b.code;
    s.fields.emplace_back("block amax", float_hex(b.amax));
    if (b.special) s.fields.emplace_back("rule", "Inf or NaN in the block -> scale 0xFF (NaN)");
    else if (b.amax == 0.0f) s.fields.emplace_back("rule", "all-zero block -> scale code 0");
    else {
      s.fields.emplace_back("scale rule", std::string(scale_rule_name(opt.scale_rule)));
      s.fields.emplace_back(opt.scale_rule == ScaleRule::Floor ? "e = floor(log2 amax) - emax_elem (from the FP32 bits)"
                                                               : "e = log2(smallest power of two >= amax / max_elem)",
                            std::to_string(b.e_raw) + (b.e != b.e_raw ? " -> clamped to " + std::to_string(b.e) : ""));
      if (!b.nan_scale)
        s.fields.emplace_back("neighbouring scale codes",
                              hex2(b.code > 0 ? b.code - 1 : 0) + ", " + hex2(b.code) + ", " + hex2(std::min(b.code + 1, 0xFEu)));
    }
  }
  s.fields.emplace_back("scale code by these steps", hex2(s.code));
  return s;
}

QuantOptions quant_options_from_json(const io::Json& q, BlockFormat& f) {
  if (!q.is_object()) throw std::invalid_argument("quant: not an object");
  if (!parse_block_format(q.value("format", std::string()), f)) throw std::invalid_argument("quant: unknown format");
  QuantOptions o;
  if (!parse_rounding(q.value("rounding", std::string("rne")), o.rounding))
    throw std::invalid_argument("quant: unknown rounding");
  o.seed = q.value("seed", uint64_t{0});
  o.stream = q.value("stream", uint32_t{0});
  if (!parse_scale_rule(q.value("scale_rule", std::string("floor")), o.scale_rule))
    throw std::invalid_argument("quant: unknown scale_rule");
  if (q.contains("convention") && !parse_convention(q["convention"].get<std::string>(), o.convention))
    throw std::invalid_argument("quant: unknown convention");
  o.pts = q.value("pts", std::string("on")) == "on";
  o.two_d = q.value("2d", false);
  o.rht = q.value("rht", 0);
  o.rht_bf16 = q.value("rht_bf16", false);
  const std::string signs = q.value("rht_signs", std::string("none"));
  o.rht_seeded = signs == "seeded";
  o.rht_seed = q.value("rht_seed", o.seed);
  o.threads = 1;
  return o;
}

}  // namespace fp4sim::vectors
