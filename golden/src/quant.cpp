#include "fp4sim/quant.hpp"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <stdexcept>
#include <string>

#include "fp4sim/hadamard.hpp"
#include "fp4sim/philox.hpp"

namespace fp4sim {

namespace {

constexpr BlockFormatInfo kBlockFormats[] = {
    {BlockFormat::Nvfp4, "nvfp4", &kE2M1, &kUE4M3, 16, 2, false},
    {BlockFormat::Mxfp4, "mxfp4", &kE2M1, &kUE8M0, 32, 2, false},
    {BlockFormat::Mxfp6E2M3, "mxfp6-e2m3", &kE2M3, &kUE8M0, 32, 2, false},
    {BlockFormat::Mxfp6E3M2, "mxfp6-e3m2", &kE3M2, &kUE8M0, 32, 4, false},
    {BlockFormat::Mxfp8E4M3, "mxfp8-e4m3", &kE4M3, &kUE8M0, 32, 8, false},
    {BlockFormat::Mxfp8E5M2, "mxfp8-e5m2", &kE5M2, &kUE8M0, 32, 15, false},
    {BlockFormat::Hif4, "hif4", &kS1P2, &kE6M2, 64, 0, true},
};

constexpr uint8_t kUE8M0Bias = 127;
constexpr uint8_t kScaleNaN = 0xFF;

// E2M1 magnitude code of a non-negative float under RNE, saturating at 6. The seven thresholds
// are the midpoints between adjacent E2M1 values; `>` at a tie whose lower neighbour has the even
// mantissa, `>=` where the upper one does. Branch-free so the compiler vectorizes block loops.
inline uint8_t e2m1_rne_mag(float a) {
  return static_cast<uint8_t>((a > 0.25f) + (a >= 0.75f) + (a > 1.25f) + (a >= 1.75f) +
                              (a > 2.5f) + (a >= 3.5f) + (a > 5.0f));
}

inline bool all_finite(const float* x, size_t n) {
  bool ok = true;
  for (size_t i = 0; i < n; ++i) ok &= std::isfinite(x[i]);
  return ok;
}

// max |x| with fmaxf semantics (a NaN operand is ignored), as TE's amax kernels compute it.
inline float abs_max(const float* x, size_t n) {
  float m = 0.0f;
  for (size_t i = 0; i < n; ++i) m = std::fmax(m, std::fabs(x[i]));
  return m;
}

// Rounds v > 0 to `bits` significant bits, ties to even (no exponent limits).
inline double round_significant(double v, int bits) {
  const int e = std::ilogb(v);
  return std::ldexp(round_to_integer(std::ldexp(v, bits - 1 - e), Rounding::Rne), e - (bits - 1));
}

void check_shape(const BlockFormatInfo& fi, size_t xsize, size_t rows, size_t cols,
                 const QuantOptions& opt) {
  if (xsize != rows * cols) {
    throw std::invalid_argument("input has " + std::to_string(xsize) + " values, expected rows*cols = " +
                                std::to_string(rows * cols));
  }
  if (cols == 0 || cols % static_cast<size_t>(fi.block) != 0) {
    throw std::invalid_argument(std::string(fi.name) + " needs the last axis to be a positive multiple of " +
                                std::to_string(fi.block) + ", got " + std::to_string(cols));
  }
  if (opt.rht != 0) {
    if (opt.rht < 2 || (opt.rht & (opt.rht - 1)) != 0) {
      throw std::invalid_argument("RHT size must be a power of two >= 2, got " + std::to_string(opt.rht));
    }
    if (cols % static_cast<size_t>(opt.rht) != 0) {
      throw std::invalid_argument("RHT size " + std::to_string(opt.rht) + " does not divide the last axis " +
                                  std::to_string(cols));
    }
  }
  if (opt.two_d && fi.id != BlockFormat::Nvfp4) {
    throw std::invalid_argument("2D 16x16 scaling is defined for nvfp4 only");
  }
}

// ---------------------------------------------------------------------------------------------
// MX (SPEC §2.1)

// Shared exponent of a block with finite amax > 0 under the chosen rule, clamped to UE8M0 range.
int mx_shared_exp(const BlockFormatInfo& fi, float amax, ScaleRule rule) {
  int e = std::ilogb(static_cast<double>(amax)) - fi.emax_elem;  // floor(log2(amax)) exactly
  if (rule == ScaleRule::Ceil) {
    // smallest e with max_elem * 2^e >= amax; max_elem < 2^(emax_elem+1) so e or e+1.
    const double max_elem = decode(*fi.elem, fi.elem->max_code());
    if (std::ldexp(max_elem, e) < static_cast<double>(amax)) ++e;
  }
  return std::clamp(e, -127, 127);
}

}  // namespace

const BlockFormatInfo& info(BlockFormat f) { return kBlockFormats[static_cast<size_t>(f)]; }

std::span<const BlockFormatInfo> all_block_formats() { return kBlockFormats; }

bool parse_block_format(std::string_view name, BlockFormat& out) {
  for (const auto& fi : kBlockFormats) {
    if (fi.name == name) {
      out = fi.id;
      return true;
    }
  }
  return false;
}

std::string_view scale_rule_name(ScaleRule r) { return r == ScaleRule::Floor ? "floor" : "ceil"; }

bool parse_scale_rule(std::string_view s, ScaleRule& out) {
  if (s == "floor") out = ScaleRule::Floor;
  else if (s == "ceil") out = ScaleRule::Ceil;
  else return false;
  return true;
}

void quantize_mx(BlockFormat f, const float* x, size_t n_blocks, const QuantOptions& opt, uint8_t* codes,
                 uint8_t* scales, uint64_t first_index) {
  const BlockFormatInfo& fi = info(f);
  const size_t B = static_cast<size_t>(fi.block);
  const bool sr = opt.rounding == Rounding::Sr;
  const bool fast_fp4 = fi.elem == &kE2M1 && opt.rounding == Rounding::Rne;
  std::array<uint8_t, 64> rbytes{};
  for (size_t b = 0; b < n_blocks; ++b) {
    const float* xb = x + b * B;
    uint8_t* cb = codes + b * B;
    if (!all_finite(xb, B)) {  // SPEC: the whole block dequantizes to NaN
      scales[b] = kScaleNaN;
      std::fill(cb, cb + B, uint8_t{0});
      continue;
    }
    const float amax = abs_max(xb, B);
    if (amax == 0.0f) {  // microxcaling: log2(FLT_MIN) - emax clamps to -127 -> code 0
      scales[b] = 0;
      std::fill(cb, cb + B, uint8_t{0});
      continue;
    }
    const int e = mx_shared_exp(fi, amax, opt.scale_rule);
    scales[b] = static_cast<uint8_t>(e + kUE8M0Bias);
    if (fast_fp4) {
      // x * 2^-e in float is exact unless it drops below 2^-126, where it rounds to 0 anyway.
      const float inv = std::ldexp(1.0f, -e);
      for (size_t i = 0; i < B; ++i) {
        const float v = xb[i] * inv;
        cb[i] = static_cast<uint8_t>(e2m1_rne_mag(std::fabs(v)) | (v < 0.0f ? 0x8 : 0x0));
      }
      continue;
    }
    if (sr) sr_bytes(opt.seed, opt.stream, first_index + b * B, B, rbytes.data());
    for (size_t i = 0; i < B; ++i) {
      const double v = std::ldexp(static_cast<double>(xb[i]), -e);
      cb[i] = static_cast<uint8_t>(encode(*fi.elem, v, opt.rounding, /*saturate=*/true, rbytes[i]));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// NVFP4 (SPEC §2.2) — FP32 arithmetic exactly as TransformerEngine writes it.

Nvfp4TensorScale nvfp4_tensor_scale(float amax_tensor, bool pts) {
  Nvfp4TensorScale ts;
  if (!pts) return ts;
  float s_enc = (448.0f * 6.0f) / amax_tensor;
  s_enc = std::min(s_enc, FLT_MAX);
  if (amax_tensor == 0.0f || s_enc == 0.0f) s_enc = 1.0f;
  ts.s_enc = s_enc;
  ts.s_dec = 1.0f / s_enc;
  return ts;
}

uint8_t nvfp4_block_scale_code(float block_amax, const Nvfp4TensorScale& ts) {
  const float m = ts.s_enc * (1.0f / 6.0f);
  const float sdec_b = block_amax * m;
  return static_cast<uint8_t>(encode(kUE4M3, sdec_b, Rounding::Rne, /*saturate=*/true));
}

float nvfp4_block_inverse(uint8_t scale_code, const Nvfp4TensorScale& ts) {
  const float s = static_cast<float>(decode(kUE4M3, scale_code)) * ts.s_dec;
  return std::min(1.0f / s, FLT_MAX);  // 1/0 = +Inf -> FLT_MAX; a NaN scale stays NaN
}

namespace {

void nvfp4_quantize_block(const float* xb, size_t n, float inv, const QuantOptions& opt, uint64_t first_index,
                          uint8_t* cb) {
  if (opt.rounding == Rounding::Rne) {
    for (size_t i = 0; i < n; ++i) {
      const float v = xb[i] * inv;
      // satfinite: NaN -> +6; +-Inf saturate (the comparisons already give 7 for Inf).
      const uint8_t mag = std::isnan(v) ? uint8_t{7} : e2m1_rne_mag(std::fabs(v));
      cb[i] = static_cast<uint8_t>(mag | (xb[i] < 0.0f ? 0x8 : 0x0));
    }
    return;
  }
  std::array<uint8_t, 16> rb{};
  if (opt.rounding == Rounding::Sr) sr_bytes(opt.seed, opt.stream, first_index, n, rb.data());
  for (size_t i = 0; i < n; ++i) {
    const float v = xb[i] * inv;
    // Sign from the input: x * inv may underflow to -0.0, which encode() would read as +0.
    cb[i] = std::isnan(v) ? uint8_t{7}
                          : static_cast<uint8_t>(encode(kE2M1, std::fabs(v), opt.rounding, /*saturate=*/true, rb[i]) |
                                                 (xb[i] < 0.0f ? 0x8 : 0x0));
  }
}

void quantize_nvfp4(const float* x, size_t rows, size_t cols, const QuantOptions& opt, Quantized& q) {
  const size_t sc = cols / 16;
  q.amax = abs_max(x, rows * cols);
  const Nvfp4TensorScale ts = nvfp4_tensor_scale(q.amax, opt.pts);
  q.global_scale = ts.s_dec;
  if (!opt.two_d) {
    for (size_t r = 0; r < rows; ++r) {
      for (size_t j = 0; j < sc; ++j) {
        const size_t off = r * cols + j * 16;
        const uint8_t code = nvfp4_block_scale_code(abs_max(x + off, 16), ts);
        q.scales[r * sc + j] = code;
        nvfp4_quantize_block(x + off, 16, nvfp4_block_inverse(code, ts), opt, off, q.codes.data() + off);
      }
    }
    return;
  }
  // 2D: one amax per 16x16 tile (a partial last tile uses the rows it has); every row of the tile
  // repeats the tile's scale, so rowwise and columnwise quantization agree.
  for (size_t r0 = 0; r0 < rows; r0 += 16) {
    const size_t r1 = std::min(rows, r0 + 16);
    for (size_t j = 0; j < sc; ++j) {
      float amax = 0.0f;
      for (size_t r = r0; r < r1; ++r) amax = std::fmax(amax, abs_max(x + r * cols + j * 16, 16));
      const uint8_t code = nvfp4_block_scale_code(amax, ts);
      const float inv = nvfp4_block_inverse(code, ts);
      for (size_t r = r0; r < r1; ++r) {
        const size_t off = r * cols + j * 16;
        q.scales[r * sc + j] = code;
        nvfp4_quantize_block(x + off, 16, inv, opt, off, q.codes.data() + off);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// HiF4 (SPEC §2.3) — the official library's To_HiFX with N=4, M=2, G=64, evaluated exactly.

constexpr double kBf16OneSeventh = 0.142578125;  // BF16(1/7) = 73/512

// REC = BF16(1 / E6M2) depends only on the 2-bit fraction and the exponent. 1/(1+m/4) is a
// repeating binary fraction for m != 0, so rounding its double to 8 bits is a single rounding.
inline double hif4_rec(uint8_t e6m2) {
  const double v = decode(kE6M2, e6m2);
  return round_significant(1.0 / v, 8);
}

}  // namespace

void quantize_hif4(const float* x, size_t n_blocks, const QuantOptions& opt, uint8_t* codes, uint32_t* words,
                   uint64_t first_index) {
  std::array<uint8_t, 64> rb{};
  for (size_t b = 0; b < n_blocks; ++b) {
    const float* xb = x + b * 64;
    uint8_t* cb = codes + b * 64;
    if (!all_finite(xb, 64)) {  // fp4sim choice (reference undefined): NaN scale, zero codes
      words[b] = kScaleNaN;
      std::fill(cb, cb + 64, uint8_t{0});
      continue;
    }
    std::array<float, 16> v16;
    std::array<float, 8> v8;
    float vmax = 0.0f;
    for (int j = 0; j < 16; ++j) v16[j] = abs_max(xb + 4 * j, 4);
    for (int k = 0; k < 8; ++k) {
      v8[k] = std::max(v16[2 * k], v16[2 * k + 1]);
      vmax = std::max(vmax, v8[k]);
    }
    uint8_t e6m2 = 0;
    if (vmax > 0.0f) {
      // Vmax * 73/512 is exact in double (24 + 7 bits); one rounding to BF16, then the clamp and
      // the rounding to E6M2's 3 significant bits (encode saturates at 49152, floors at 2^-48).
      const double sf = round_significant(static_cast<double>(vmax) * kBf16OneSeventh, 8);
      e6m2 = static_cast<uint8_t>(encode(kE6M2, sf, Rounding::Rne, /*saturate=*/true));
    }
    const double rec = hif4_rec(e6m2);
    uint32_t w = e6m2;
    std::array<int, 64> lv{};
    for (int k = 0; k < 8; ++k) {
      const bool l2 = static_cast<double>(v8[k]) * rec >= 4.0;  // exact product
      w |= static_cast<uint32_t>(l2) << (8 + k);
      for (int jj = 0; jj < 2; ++jj) {
        const int j = 2 * k + jj;
        const bool l3 = std::ldexp(static_cast<double>(v16[j]) * rec, -static_cast<int>(l2)) >= 2.0;
        w |= static_cast<uint32_t>(l3) << (16 + j);
        for (int i = 0; i < 4; ++i) lv[4 * j + i] = static_cast<int>(l2) + static_cast<int>(l3);
      }
    }
    words[b] = w;
    const Rounding rnd = opt.rounding == Rounding::Sr ? Rounding::Sr : Rounding::Rna;  // half-up on |c|
    if (opt.rounding == Rounding::Sr) sr_bytes(opt.seed, opt.stream, first_index + b * 64, 64, rb.data());
    for (int i = 0; i < 64; ++i) {
      const double qv = std::ldexp(std::fabs(static_cast<double>(xb[i])) * rec, 2 - lv[i]);  // exact
      const double c = std::min(round_to_integer(qv, rnd, rb[i]), 7.0);
      cb[i] = static_cast<uint8_t>(static_cast<uint8_t>(c) | (xb[i] < 0.0f ? 0x8 : 0x0));
    }
  }
}

Quantized quantize(BlockFormat f, std::span<const float> x, size_t rows, size_t cols, const QuantOptions& opt) {
  Quantized q;
  quantize(f, x, rows, cols, opt, q);
  return q;
}

void quantize(BlockFormat f, std::span<const float> x_in, size_t rows, size_t cols, const QuantOptions& opt,
              Quantized& q) {
  const BlockFormatInfo& fi = info(f);
  check_shape(fi, x_in.size(), rows, cols, opt);
  std::span<const float> x = x_in;
  std::vector<float> rotated;
  if (opt.rht != 0) {
    rotated.assign(x_in.begin(), x_in.end());
    std::vector<int8_t> signs;
    rht_signs(opt.rht, opt.rht_seeded || opt.rht != 16, opt.rht_seed, signs);
    rht_apply(rotated, cols, opt.rht, signs, opt.rht_bf16);
    x = rotated;
  }
  q.format = f;
  q.global_scale = 1.0f;
  q.amax = 0.0f;
  q.rows = rows;
  q.cols = cols;
  q.codes.resize(rows * cols);
  const size_t nb = rows * cols / static_cast<size_t>(fi.block);
  switch (f) {
    case BlockFormat::Nvfp4:
      q.scale_words.clear();
      q.scales.resize(nb);
      quantize_nvfp4(x.data(), rows, cols, opt, q);
      break;
    case BlockFormat::Hif4:
      q.scales.clear();
      q.scale_words.resize(nb);
      quantize_hif4(x.data(), nb, opt, q.codes.data(), q.scale_words.data(), 0);
      break;
    default:
      q.scale_words.clear();
      q.scales.resize(nb);
      quantize_mx(f, x.data(), nb, opt, q.codes.data(), q.scales.data(), 0);
      break;
  }
}

double block_scale_value(const Quantized& q, size_t b) {
  const BlockFormatInfo& fi = info(q.format);
  if (fi.scale_word32) return decode(kE6M2, hif4_e6m2(q.scale_words[b]));
  return decode(*fi.scale, q.scales[b]);
}

std::vector<float> dequantize(const Quantized& q) {
  const BlockFormatInfo& fi = info(q.format);
  const size_t B = static_cast<size_t>(fi.block);
  const DecodeTable& et = decode_table(*fi.elem);
  std::vector<float> out(q.rows * q.cols);
  const size_t nb = q.num_blocks();
  for (size_t b = 0; b < nb; ++b) {
    const uint8_t* cb = q.codes.data() + b * B;
    float* ob = out.data() + b * B;
    const double s = block_scale_value(q, b);
    if (std::isnan(s)) {
      std::fill(ob, ob + B, std::numeric_limits<float>::quiet_NaN());
      continue;
    }
    if (q.format == BlockFormat::Nvfp4) {  // TE: q * float(sdec_b8) * S_dec, FP32 left to right
      const float sf = static_cast<float>(s);
      for (size_t i = 0; i < B; ++i) ob[i] = et.v[cb[i]] * sf * q.global_scale;
    } else if (fi.scale_word32) {
      const uint32_t w = q.scale_words[b];
      for (size_t i = 0; i < B; ++i) {  // exact: <= 6 significant bits
        ob[i] = static_cast<float>(std::ldexp(static_cast<double>(et.v[cb[i]]) * s, hif4_level(w, static_cast<int>(i))));
      }
    } else {
      for (size_t i = 0; i < B; ++i) ob[i] = static_cast<float>(static_cast<double>(et.v[cb[i]]) * s);
    }
  }
  return out;
}

}  // namespace fp4sim
