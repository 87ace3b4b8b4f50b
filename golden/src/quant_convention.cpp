// Quantizers of other libraries' conventions (docs/formats.md, "Conventions"): torchao and NVIDIA
// ModelOpt, transcribed from their published formulas in FP32 round-to-nearest, one element at a
// time. TE (the default) keeps the vectorized kernels of quant.cpp; these run on the portable path.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <stdexcept>
#include <string>

#include "quant_internal.hpp"

namespace fp4sim {

namespace quant_detail {
namespace {

constexpr uint32_t bit(BlockFormat f) { return 1u << static_cast<unsigned>(f); }
constexpr uint32_t kAllFormats = 0x7Fu;

using CI = ConventionInfo;
// One row per convention; the columns are documented in quant.hpp and cited in docs/formats.md.
constexpr ConventionInfo kConventions[] = {
    {Convention::Te, "te", kAllFormats, true, CI::TensorScale::EncodeThenReciprocal, CI::BlockScale::TeProduct, 0.0f,
     0.0f, CI::ElemScale::TeReciprocal, false, false, false, CI::MxScale::Exact, false, false},
    {Convention::Torchao, "torchao",
     bit(BlockFormat::Nvfp4) | bit(BlockFormat::Mxfp4) | bit(BlockFormat::Mxfp6E2M3) | bit(BlockFormat::Mxfp6E3M2) |
         bit(BlockFormat::Mxfp8E4M3) | bit(BlockFormat::Mxfp8E5M2),
     false, CI::TensorScale::AmaxOver2688, CI::BlockScale::SixthThenDivide, 0.0f, 0x1p-6f,
     CI::ElemScale::ReciprocalOfDecThenDivide, true, true, false, CI::MxScale::Torchao, false, false},
    {Convention::Modelopt, "modelopt", bit(BlockFormat::Nvfp4) | bit(BlockFormat::Mxfp4) | bit(BlockFormat::Mxfp8E4M3),
     false, CI::TensorScale::AmaxOver2688, CI::BlockScale::DivideBySixDec, 1.0f, 0x1p-9f, CI::ElemScale::Divide, false,
     true, true, CI::MxScale::CeilLog2, true, true},
};

// max |x| of n values; a NaN wins unless the convention ignores it (fmaxf).
float amax_of(const float* x, size_t n, bool ignore_nan) {
  float m = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    const float a = std::fabs(x[i]);
    if (std::isnan(a)) {
      if (!ignore_nan) return a;
      continue;
    }
    m = std::max(m, a);
  }
  return m;
}

// torch.clamp(v, lo, hi): NaN passes through.
float clamp_keep_nan(float v, float lo, float hi) { return std::isnan(v) ? v : std::min(std::max(v, lo), hi); }

// torchao custom_fp_utils._f32_to_floatx_unpacked on the FP32 bits: RNE by the magic adder, saturation
// at max, the sign bit copied (so -0.0 -> -0). NaN takes the normal path; the result is its low byte.
uint8_t torchao_f32_to_floatx(uint32_t u, int ebits, int mbits) {
  const int exp_bias = (1 << (ebits - 1)) - 1;
  const uint32_t max_int = (1u << (ebits + mbits)) - 1u;
  const uint32_t sign = u & 0x80000000u;
  const uint32_t a = u ^ sign;
  const float af = u2f(a);
  const double max_normal = std::ldexp(1.0, (1 << ebits) - 1 - exp_bias) * ((1 << (mbits + 1)) - 1) / (1 << mbits);
  const float min_normal = std::ldexp(1.0f, 1 - exp_bias);
  uint32_t code;
  if (static_cast<double>(af) >= max_normal) {
    code = max_int;
  } else if (af < min_normal) {
    const int denorm_exp = (127 - exp_bias) + (23 - mbits) + 1;
    const float mask = u2f(static_cast<uint32_t>(denorm_exp) << 23);
    code = (f2u(af + mask) - (static_cast<uint32_t>(denorm_exp) << 23)) & 0xFFu;
  } else {
    const uint32_t mant_odd = (a >> (23 - mbits)) & 1u;
    const uint32_t add = static_cast<uint32_t>((exp_bias - 127) * (1 << 23)) + ((1u << (23 - mbits - 1)) - 1u);
    code = ((a + add + mant_odd) >> (23 - mbits)) & 0xFFu;
  }
  return static_cast<uint8_t>(code | (sign >> (31 - ebits - mbits)));
}

// torch's float -> float8 cast of a value already clamped to +-max: RNE, sign bit copied, NaN -> 0x7F.
uint8_t torch_f32_to_fp8(const ElemFormat& f, float v) {
  const uint32_t s = (f2u(v) >> 31) ? f.sign_bit() : 0u;
  if (std::isnan(v)) return static_cast<uint8_t>(0x7Fu | s);
  return static_cast<uint8_t>(encode(f, std::fabs(static_cast<double>(v)), Rounding::Rne, true) | s);
}

// ModelOpt's _cast_fp4 (NVFP4): sign = x < 0; magnitude = searchsorted(bounds, |x|) plus one at the
// odd bounds 0.75, 1.75, 3.5, which is RNE with saturation at 6; NaN counts as above every bound.
uint8_t modelopt_cast_fp4(float v) {
  const uint8_t s = v < 0.0f ? 8 : 0;
  const float a = std::fabs(v);
  if (std::isnan(a)) return static_cast<uint8_t>(7 | s);
  return static_cast<uint8_t>(encode(kE2M1, a, Rounding::Rne, true) | s);
}

// ModelOpt's MXFP4 cast_fp4: magnitude = number of bounds strictly below |x| (ties go down); the sign
// bit is (2 - sign(x)) // 2, set for every x that is not > 0 (zeros included).
uint8_t modelopt_cast_fp4_mx(float v) {
  static constexpr float kBounds[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
  const float a = std::fabs(v);
  uint8_t ord = 0;
  for (float b : kBounds) ord = static_cast<uint8_t>(ord + (a > b ? 1 : 0));
  return static_cast<uint8_t>(ord | (v > 0.0f ? 0 : 8));
}

// ceil(log2(d)) of a finite d > 0, exactly from the bits.
int ceil_log2(float d) {
  int e = std::ilogb(d);
  if (std::ldexp(1.0f, e) != d) ++e;
  return e;
}

void quantize_nvfp4_conv(const ConventionInfo& ci, const float* x, size_t rows, size_t cols, const QuantOptions& opt,
                         Quantized& q) {
  const size_t n = rows * cols, nb = n / 16;
  const float amax_t = amax_of(x, n, ci.amax_ignores_nan);
  q.amax = amax_t;
  const float s_dec = opt.pts ? amax_t / 2688.0f : 1.0f;  // torchao 756-769, ModelOpt 206-209
  q.global_scale = s_dec;
  for (size_t b = 0; b < nb; ++b) {
    const float* xb = x + b * 16;
    const float bamax = amax_of(xb, 16, ci.amax_ignores_nan);
    float s;
    if (ci.block_scale == CI::BlockScale::SixthThenDivide) {
      s = bamax / 6.0f;
      if (opt.pts) s = s / s_dec;
    } else {
      s = bamax / (6.0f * s_dec);
    }
    if (ci.zero_block_scale != 0.0f && s == 0.0f) s = ci.zero_block_scale;
    s = clamp_keep_nan(s, ci.min_block_scale, 448.0f);
    // torch's float8 cast keeps a NaN's sign (0/0 gives x86's negative default NaN -> 0xFF), and
    // its float8 -> float of the NaN code gives sign | 0x7FF00000, which later NaNs carry along.
    const uint8_t sc = std::isnan(s) ? static_cast<uint8_t>(std::signbit(s) ? 0xFF : 0x7F)
                                     : static_cast<uint8_t>(encode(kE4M3, s, Rounding::Rne, true));
    q.scales[b] = sc;
    const float sf = std::isnan(s) ? u2f((sc & 0x80u ? 0x80000000u : 0u) | 0x7FF00000u)
                                   : static_cast<float>(decode(kE4M3, sc));
    uint8_t* cb = q.codes.data() + b * 16;
    for (size_t i = 0; i < 16; ++i) {
      if (ci.elem_scale == CI::ElemScale::ReciprocalOfDecThenDivide) {
        const float r = (1.0f / s_dec) / sf;
        const float v = clamp_keep_nan(xb[i] * r, -6.0f, 6.0f);
        cb[i] = torchao_f32_to_floatx(f2u(v), 2, 1);
      } else {
        cb[i] = modelopt_cast_fp4(xb[i] / (sf * s_dec));
      }
    }
  }
}

void quantize_mx_conv(const ConventionInfo& ci, const BlockFormatInfo& fi, const float* x, size_t n_blocks,
                      const QuantOptions& opt, uint8_t* codes, uint8_t* scales) {
  const ElemFormat& ef = *fi.elem;
  const float max_pos = static_cast<float>(decode(ef, ef.max_code()));
  const bool fp8 = ef.bits == 8;
  for (size_t b = 0; b < n_blocks; ++b) {
    const float* xb = x + b * 32;
    uint8_t* cb = codes + b * 32;
    const float amax = amax_of(xb, 32, false);
    if (ci.mx_scale == CI::MxScale::Torchao) {
      float mul = 1.0f, div = 1.0f;
      if (opt.scale_rule == ScaleRule::Floor) {  // mx_tensor.py to_mx, FLOOR
        const int e = std::clamp(static_cast<int>((f2u(amax) >> 23) & 0xFF) - 127 - fi.emax_elem, -127, 128);
        scales[b] = std::isnan(amax) ? kScaleNaN : static_cast<uint8_t>(e + 127);
        div = std::max(u2f(static_cast<uint32_t>(scales[b]) << 23), 0x1p-126f);
      } else {  // _to_mx_rceil
        const float d = amax / max_pos;
        uint8_t code;
        if (std::isnan(d)) code = kScaleNaN;
        else if (std::isinf(d)) code = 254;
        else if (d == 0.0f) code = 0;
        else code = static_cast<uint8_t>(std::clamp(ceil_log2(d), -127, 127) + 127);
        scales[b] = code;
        mul = code == kScaleNaN ? d : code == 254 ? 0x1p-127f : code == 0 ? 1.0f : pow2_neg(code - 127);
      }
      for (size_t i = 0; i < 32; ++i) {
        float v = opt.scale_rule == ScaleRule::Floor ? xb[i] / div : xb[i] * mul;
        if (fp8) {
          cb[i] = torch_f32_to_fp8(ef, clamp_keep_nan(v, -max_pos, max_pos));
        } else {
          if (opt.scale_rule != ScaleRule::Floor) v = clamp_keep_nan(v, -max_pos, max_pos);
          cb[i] = torchao_f32_to_floatx(f2u(v), ef.ebits, ef.mbits);
        }
      }
      continue;
    }
    // ModelOpt: MXFP4QTensor.quantize / MXFP8QTensor._compute_e8m0_exponent.
    const float d = amax / max_pos;
    if (std::isnan(d) || std::isinf(d)) {  // undefined there (NaN -> uint8): fp4sim's rule
      scales[b] = kScaleNaN;
      std::fill(cb, cb + 32, uint8_t{0});
      continue;
    }
    const int e = d > 0.0f ? std::clamp(ceil_log2(d), -127, 127) : -127;
    scales[b] = static_cast<uint8_t>(e + 127);
    for (size_t i = 0; i < 32; ++i) {
      if (fp8) {
        cb[i] = torch_f32_to_fp8(ef, clamp_keep_nan(xb[i] * pow2_neg(e), -448.0f, 448.0f));
      } else {
        const float v = static_cast<float>(std::ldexp(static_cast<double>(xb[i]), -e));  // x / 2^e, exact
        cb[i] = modelopt_cast_fp4_mx(v);
      }
    }
  }
}

}  // namespace

void quantize_convention(BlockFormat f, const float* x, size_t rows, size_t cols, const QuantOptions& opt,
                         Quantized& q) {
  const ConventionInfo& ci = convention_info(opt.convention);
  if (f == BlockFormat::Nvfp4) {
    quantize_nvfp4_conv(ci, x, rows, cols, opt, q);
  } else {
    quantize_mx_conv(ci, info(f), x, rows * cols / 32, opt, q.codes.data(), q.scales.data());
  }
}

}  // namespace quant_detail

const ConventionInfo& convention_info(Convention c) {
  return quant_detail::kConventions[static_cast<size_t>(c)];
}

void check_convention(Convention c, BlockFormat f, const QuantOptions& opt) {
  const ConventionInfo& ci = convention_info(c);
  if (c == Convention::Te) return;
  if ((ci.formats & quant_detail::bit(f)) == 0) {
    throw std::invalid_argument(std::string(ci.name) + " has no " + std::string(info(f).name) + " quantizer");
  }
  if (opt.rounding != Rounding::Rne) {
    throw std::invalid_argument(std::string(ci.name) + " rounds elements to nearest even only (rounding rne)");
  }
  if (opt.two_d) throw std::invalid_argument(std::string(ci.name) + " has no 2D 16x16 scaling");
  if (c == Convention::Modelopt && f != BlockFormat::Nvfp4 && opt.scale_rule != ScaleRule::Ceil) {
    throw std::invalid_argument("modelopt's MX scale is ceil(log2(amax / max)): use scale rule ceil");
  }
}

}  // namespace fp4sim
