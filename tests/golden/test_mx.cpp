// MX block quantization (SPEC §2.1): MXFP4, MXFP6 (E2M3, E3M2), MXFP8 (E4M3, E5M2).
//
// The reference below is written here from the SPEC rules: the shared exponent comes from the
// FP32 exponent of amax via frexp (floor rule) or from an exact comparison with max_elem * 2^e
// (ceil rule), and elements are rounded on the explicit list of representable magnitudes.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fp4sim/philox.hpp"
#include "fp4sim/quant.hpp"

using namespace fp4sim;

namespace {

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr float kInff = std::numeric_limits<float>::infinity();

// An MX element format as the SPEC table defines it, typed here.
struct Elem {
  BlockFormat fmt;
  const char* name;
  int ebits, mbits, bias;
  double maxv;    // SPEC §1 max
  int emax_elem;  // SPEC §2.1
  std::vector<double> grid;  // magnitudes by magnitude code 0..max

  Elem(BlockFormat f, const char* n, int e, int m, int b, double mx, int emax)
      : fmt(f), name(n), ebits(e), mbits(m), bias(b), maxv(mx), emax_elem(emax) {
    for (uint32_t c = 0;; ++c) {
      const uint32_t ef = c >> mbits, mf = c & ((1u << mbits) - 1u);
      const double v = ef == 0 ? std::ldexp(static_cast<double>(mf), 1 - bias - mbits)
                               : std::ldexp(static_cast<double>((1u << mbits) + mf), static_cast<int>(ef) - bias - mbits);
      if (v > maxv) break;
      grid.push_back(v);
    }
  }
  uint32_t sign() const { return 1u << (ebits + mbits); }
  uint32_t max_code() const { return static_cast<uint32_t>(grid.size() - 1); }
  double top_step() const { return std::ldexp(1.0, std::ilogb(maxv) - mbits); }

  // Magnitude code of a >= 0 under mode m, saturating at max.
  uint32_t round_sat(double a, Rounding m, uint8_t rb) const {
    if (a >= maxv) return max_code();
    const size_t i = static_cast<size_t>(std::upper_bound(grid.begin(), grid.end(), a) - grid.begin()) - 1;
    const double lo = grid[i], hi = grid[i + 1], s = hi - lo, d = a - lo;  // d exact
    if (d == 0.0) return static_cast<uint32_t>(i);
    bool up = false;
    switch (m) {
      case Rounding::Rz: up = false; break;
      case Rounding::Rna: up = 2.0 * d >= s; break;
      case Rounding::Rne: up = 2.0 * d > s || (2.0 * d == s && (i & 1u)); break;  // code parity = mantissa LSB
      case Rounding::Sr: up = 256.0 * d >= static_cast<double>(256 - rb) * s; break;
    }
    return static_cast<uint32_t>(up ? i + 1 : i);
  }
};

const std::vector<Elem>& elems() {
  static const std::vector<Elem> e = {
      Elem(BlockFormat::Mxfp4, "mxfp4", 2, 1, 1, 6.0, 2),
      Elem(BlockFormat::Mxfp6E2M3, "mxfp6-e2m3", 2, 3, 1, 7.5, 2),
      Elem(BlockFormat::Mxfp6E3M2, "mxfp6-e3m2", 3, 2, 3, 28.0, 4),
      Elem(BlockFormat::Mxfp8E4M3, "mxfp8-e4m3", 4, 3, 7, 448.0, 8),
      Elem(BlockFormat::Mxfp8E5M2, "mxfp8-e5m2", 5, 2, 15, 57344.0, 15),
  };
  return e;
}

constexpr int kB = 32;

struct RefBlock {
  uint8_t scale = 0;
  uint8_t codes[kB] = {};
  float deq[kB] = {};
};

// SPEC §2.1 for one block; element i draws its SR byte at index first + i.
RefBlock ref_mx(const Elem& el, const float* x, ScaleRule rule, Rounding m, uint64_t seed, uint32_t stream,
                uint64_t first) {
  RefBlock r;
  double amax = 0.0;
  bool finite = true;
  for (int i = 0; i < kB; ++i) {
    finite = finite && std::isfinite(x[i]);
    amax = std::max(amax, std::fabs(static_cast<double>(x[i])));
  }
  if (!finite) {
    r.scale = 0xFF;
    for (float& d : r.deq) d = kNaNf;
    return r;
  }
  int e = -127;  // amax = 0: microxcaling takes log2(FLT_MIN) - emax, clamped to -127 -> code 0
  if (amax > 0.0) {
    int ex = 0;
    (void)std::frexp(amax, &ex);  // amax = f * 2^ex, f in [0.5, 1): floor(log2 amax) = ex - 1
    e = ex - 1 - el.emax_elem;
    if (rule == ScaleRule::Ceil && amax > std::ldexp(el.maxv, e)) ++e;  // smallest 2^e >= amax/max
    e = std::clamp(e, -127, 127);
  }
  r.scale = static_cast<uint8_t>(e + 127);
  for (int i = 0; i < kB; ++i) {
    const uint8_t rb = m == Rounding::Sr ? sr_byte(seed, stream, first + static_cast<uint64_t>(i)) : 0;
    const double a = std::ldexp(std::fabs(static_cast<double>(x[i])), -e);  // exact in double
    const uint32_t mag = el.round_sat(a, m, rb);
    const bool neg = x[i] < 0.0f;
    r.codes[i] = static_cast<uint8_t>((neg ? el.sign() : 0u) | mag);
    const double v = std::ldexp(el.grid[mag], e);
    r.deq[i] = static_cast<float>(neg ? -v : v);
  }
  return r;
}

bool same_float(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

// Quantizes blocks with the library (via quantize()) and checks scales, codes and dequantized
// values against the reference. Returns the number of mismatching blocks (each one reported).
size_t check_blocks(const Elem& el, const std::vector<float>& x, const QuantOptions& opt, int max_reports = 5) {
  const size_t nb = x.size() / kB;
  const Quantized q = quantize(el.fmt, x, nb, kB, opt);
  const std::vector<float> dq = dequantize(q);
  size_t bad = 0;
  for (size_t b = 0; b < nb; ++b) {
    const RefBlock r = ref_mx(el, x.data() + b * kB, opt.scale_rule, opt.rounding, opt.seed, opt.stream, b * kB);
    bool ok = q.scales[b] == r.scale;
    for (int i = 0; i < kB && ok; ++i) {
      if (r.scale != 0xFF) ok = q.codes[b * kB + i] == r.codes[i];
      ok = ok && same_float(dq[b * kB + i], r.deq[i]);
    }
    if (!ok) {
      ++bad;
      if (max_reports-- > 0) {
        ADD_FAILURE() << el.name << " rule " << scale_rule_name(opt.scale_rule) << " mode "
                      << rounding_name(opt.rounding) << " block " << b << ": scale lib " << int(q.scales[b])
                      << " ref " << int(r.scale);
        for (int i = 0; i < kB; ++i) {
          const size_t k = b * kB + static_cast<size_t>(i);
          if (q.codes[k] != r.codes[i] || !same_float(dq[k], r.deq[i])) {
            std::printf("   x[%d] = %a: code lib 0x%02x ref 0x%02x, deq lib %a ref %a\n", i,
                        static_cast<double>(x[k]), q.codes[k], r.codes[i], static_cast<double>(dq[k]),
                        static_cast<double>(r.deq[i]));
          }
        }
      }
    }
  }
  return bad;
}

const Rounding kModes[] = {Rounding::Rne, Rounding::Rna, Rounding::Rz, Rounding::Sr};
const ScaleRule kRules[] = {ScaleRule::Floor, ScaleRule::Ceil};

// Every (rule, mode) combination on the same input.
void check_all_options(const Elem& el, const std::vector<float>& x) {
  for (ScaleRule rule : kRules) {
    for (Rounding m : kModes) {
      QuantOptions opt;
      opt.scale_rule = rule;
      opt.rounding = m;
      opt.seed = 0x1234'5678'9ABC'DEF0ull;
      opt.stream = 3;
      EXPECT_EQ(check_blocks(el, x, opt), 0u);
    }
  }
}

float f(double v) {  // test inputs are chosen exactly representable; assert it
  const float r = static_cast<float>(v);
  EXPECT_EQ(static_cast<double>(r), v);
  return r;
}

// ---------------------------------------------------------------------------------------------

TEST(Mx, FormatTable) {
  for (const Elem& el : elems()) {
    SCOPED_TRACE(el.name);
    const BlockFormatInfo& fi = info(el.fmt);
    EXPECT_EQ(fi.name, el.name);
    EXPECT_EQ(fi.block, 32);
    EXPECT_EQ(fi.scale, &kUE8M0);
    EXPECT_EQ(fi.emax_elem, el.emax_elem);
    EXPECT_FALSE(fi.scale_word32);
    // emax_elem is floor(log2(max)) of the element type; max is the last grid value.
    EXPECT_EQ(std::ilogb(el.maxv), el.emax_elem);
    EXPECT_EQ(decode(*fi.elem, fi.elem->max_code()), el.maxv);
    for (uint32_t c = 0; c < el.grid.size(); ++c) EXPECT_EQ(decode(*fi.elem, c), el.grid[c]);
    BlockFormat p{};
    ASSERT_TRUE(parse_block_format(el.name, p));
    EXPECT_EQ(p, el.fmt);
  }
  EXPECT_EQ(info(BlockFormat::Mxfp4).elem, &kE2M1);
  EXPECT_EQ(info(BlockFormat::Mxfp6E2M3).elem, &kE2M3);
  EXPECT_EQ(info(BlockFormat::Mxfp6E3M2).elem, &kE3M2);
  EXPECT_EQ(info(BlockFormat::Mxfp8E4M3).elem, &kE4M3);
  EXPECT_EQ(info(BlockFormat::Mxfp8E5M2).elem, &kE5M2);
  ScaleRule r{};
  EXPECT_TRUE(parse_scale_rule("ceil", r));
  EXPECT_EQ(r, ScaleRule::Ceil);
  EXPECT_TRUE(parse_scale_rule("floor", r));
  EXPECT_EQ(r, ScaleRule::Floor);
  r = ScaleRule::Floor;
  EXPECT_TRUE(parse_scale_rule("rceil", r));  // torchao's / NVIDIA's name for the rule, the one recorded
  EXPECT_EQ(r, ScaleRule::Ceil);
  EXPECT_EQ(scale_rule_name(ScaleRule::Ceil), "rceil");
  EXPECT_EQ(scale_rule_name(ScaleRule::Floor), "floor");
  EXPECT_FALSE(parse_scale_rule("RCEIL", r));
  EXPECT_FALSE(parse_scale_rule("round", r));
}

TEST(Mx, RejectsBadShapes) {
  std::vector<float> x(48, 1.0f);
  EXPECT_THROW(quantize(BlockFormat::Mxfp4, x, 1, 48), std::invalid_argument);
  EXPECT_THROW(quantize(BlockFormat::Mxfp4, x, 2, 32), std::invalid_argument);
}

// All-zero block: scale code 0 (2^-127; microxcaling's log2(FLT_MIN) trick, and TE's
// float_to_e8m0(0) = 0 for the ceil rule), every element +0 — also for -0.0 inputs.
TEST(Mx, AllZeroBlock) {
  for (const Elem& el : elems()) {
    std::vector<float> x(kB, 0.0f);
    for (int i = 0; i < kB; i += 3) x[static_cast<size_t>(i)] = -0.0f;
    for (ScaleRule rule : kRules) {
      for (Rounding m : kModes) {
        QuantOptions opt;
        opt.scale_rule = rule;
        opt.rounding = m;
        const Quantized q = quantize(el.fmt, x, 1, kB, opt);
        EXPECT_EQ(q.scales[0], 0u) << el.name;
        for (uint8_t c : q.codes) EXPECT_EQ(c, 0u) << el.name;
        for (float d : dequantize(q)) EXPECT_TRUE(d == 0.0f && !std::signbit(d)) << el.name;
      }
    }
    check_all_options(el, x);
  }
}

TEST(Mx, SingleNonzero) {
  const double vals[] = {1.0, 6.0, -6.0, 7.0, 0.1, -3.0, 1e-40, -1e-45, 1e30, 0x1p-130, 0x1p100, 448.0, 57344.0};
  for (const Elem& el : elems()) {
    std::vector<float> x;
    for (double v : vals) {
      for (int pos : {0, 17, 31}) {
        std::vector<float> b(kB, 0.0f);
        b[static_cast<size_t>(pos)] = static_cast<float>(v);
        x.insert(x.end(), b.begin(), b.end());
      }
    }
    check_all_options(el, x);
  }
  // Worked by hand for MXFP4 (floor rule): 1.0 -> e = 0 - 2, element 1/2^-2 = 4 = code 6;
  // 6.0 -> e = 2 - 2 = 0, element 6 = code 7; 7.0 -> e = 0, 7 is the 6/8 tie -> 8 -> saturates.
  // 0.75 -> floor(log2) = -1, e = -3, element 0.75 * 8 = 6 = code 7.
  const struct {
    float v;
    uint8_t scale, code;
  } hand[] = {{1.0f, 125, 0x6}, {6.0f, 127, 0x7}, {-6.0f, 127, 0xF}, {7.0f, 127, 0x7}, {0.75f, 124, 0x7}};
  for (const auto& h : hand) {
    std::vector<float> b(kB, 0.0f);
    b[5] = h.v;
    const Quantized q = quantize(BlockFormat::Mxfp4, b, 1, kB);
    EXPECT_EQ(q.scales[0], h.scale) << h.v;
    EXPECT_EQ(q.codes[5], h.code) << h.v;
  }
  // Ceil rule, 7.0: smallest 2^e >= 7/6 is 2, element 3.5 is the 3/4 tie -> 4 (RNE) = code 6.
  std::vector<float> b(kB, 0.0f);
  b[0] = 7.0f;
  QuantOptions opt;
  opt.scale_rule = ScaleRule::Ceil;
  const Quantized q = quantize(BlockFormat::Mxfp4, b, 1, kB, opt);
  EXPECT_EQ(q.scales[0], 128u);
  EXPECT_EQ(q.codes[0], 0x6u);
}

// amax = 2^k for every FP32 binade: both rules give e = k - emax_elem (2^emax_elem <= max), and
// the amax element encodes 2^emax_elem exactly.
TEST(Mx, AmaxPowerOfTwo) {
  for (const Elem& el : elems()) {
    std::vector<float> x;
    for (int k = -149; k <= 127; ++k) {
      std::vector<float> b(kB, 0.0f);
      b[3] = std::ldexp(1.0f, k);
      b[9] = -std::ldexp(1.0f, k - 1);
      b[20] = std::ldexp(0.75f, k);
      x.insert(x.end(), b.begin(), b.end());
    }
    check_all_options(el, x);
    const uint32_t pow_code = static_cast<uint32_t>(
        std::find(el.grid.begin(), el.grid.end(), std::ldexp(1.0, el.emax_elem)) - el.grid.begin());
    for (ScaleRule rule : kRules) {
      QuantOptions opt;
      opt.scale_rule = rule;
      const Quantized q = quantize(el.fmt, x, x.size() / kB, kB, opt);
      for (int k = -149; k <= 127; ++k) {
        const size_t b = static_cast<size_t>(k + 149);
        const int e = std::max(k - el.emax_elem, -127);
        EXPECT_EQ(q.scales[b], e + 127) << el.name << " k " << k;
        if (e == k - el.emax_elem) {
          EXPECT_EQ(q.codes[b * kB + 3], pow_code) << el.name << " k " << k;
        }
      }
    }
  }
}

// amax around the saturation threshold max_elem * 2^e0 (e.g. MXFP4: 6 * 2^e0), around the
// round-up tie (max + top_step/2) * 2^e0, and just below the next power of two.
TEST(Mx, SaturationThreshold) {
  for (const Elem& el : elems()) {
    std::vector<float> x;
    std::vector<double> amaxes;
    for (int e0 : {-130, -20, 0, 7, 100}) {
      const double t = std::ldexp(el.maxv, e0);
      const double tie = std::ldexp(el.maxv + el.top_step() / 2.0, e0);
      const double top = std::ldexp(1.0, el.emax_elem + 1 + e0);
      for (double a : {t, tie, top}) {
        const float fa = static_cast<float>(a);
        if (!std::isfinite(fa) || static_cast<double>(fa) != a) continue;
        for (float v : {std::nextafter(fa, 0.0f), fa, std::nextafter(fa, kInff)}) {
          std::vector<float> b(kB, 0.0f);
          b[0] = v;
          b[1] = -v;
          b[2] = v / 3.0f;
          x.insert(x.end(), b.begin(), b.end());
          amaxes.push_back(static_cast<double>(v));
        }
      }
    }
    check_all_options(el, x);
    // Direct statements of the two rules on these blocks.
    for (ScaleRule rule : kRules) {
      QuantOptions opt;
      opt.scale_rule = rule;
      const Quantized q = quantize(el.fmt, x, x.size() / kB, kB, opt);
      for (size_t b = 0; b < amaxes.size(); ++b) {
        const double a = amaxes[b];
        const int e = q.scales[b] - 127;
        if (e == -127) continue;  // clamped
        if (rule == ScaleRule::Floor) {
          EXPECT_EQ(e, std::ilogb(a) - el.emax_elem) << el.name << " amax " << a;
        } else {
          EXPECT_LE(a, std::ldexp(el.maxv, e)) << el.name << " amax " << a;       // nothing saturates
          EXPECT_GT(a, std::ldexp(el.maxv, e - 1)) << el.name << " amax " << a;   // and 2^e is smallest
        }
        if (rule == ScaleRule::Floor && a >= std::ldexp(el.maxv, e)) {
          EXPECT_EQ(q.codes[b * kB], el.max_code()) << el.name << " amax " << a;  // saturated, sign kept
          EXPECT_EQ(q.codes[b * kB + 1], el.sign() | el.max_code()) << el.name << " amax " << a;
        }
      }
    }
  }
}

// Every element exactly at a midpoint (and at the grid values) of a block whose scale is 2^e0.
TEST(Mx, TiesInsideABlock) {
  for (const Elem& el : elems()) {
    std::vector<double> mids;
    for (size_t i = 0; i + 1 < el.grid.size(); ++i) mids.push_back((el.grid[i] + el.grid[i + 1]) / 2.0);
    std::vector<float> x;
    for (int e0 : {-3, 0, 11}) {
      for (size_t start = 0; start < mids.size(); start += kB - 1) {
        std::vector<float> b(kB, 0.0f);
        b[0] = f(std::ldexp(el.maxv, e0));  // fixes the scale to 2^e0 under both rules
        for (int i = 1; i < kB; ++i) {
          const size_t k = start + static_cast<size_t>(i) - 1;
          if (k < mids.size()) b[static_cast<size_t>(i)] = f(std::ldexp((i & 1) ? mids[k] : -mids[k], e0));
        }
        x.insert(x.end(), b.begin(), b.end());
      }
    }
    check_all_options(el, x);
    // The tie rules stated directly (e0 = 0 blocks): RNE even code, RNA up, RZ down.
    for (Rounding m : {Rounding::Rne, Rounding::Rna, Rounding::Rz}) {
      QuantOptions opt;
      opt.rounding = m;
      for (size_t start = 0; start < mids.size(); start += kB - 1) {
        std::vector<float> b(kB, 0.0f);
        b[0] = f(el.maxv);
        for (int i = 1; i < kB; ++i) {
          const size_t k = start + static_cast<size_t>(i) - 1;
          if (k < mids.size()) b[static_cast<size_t>(i)] = f(mids[k]);
        }
        const Quantized q = quantize(el.fmt, b, 1, kB, opt);
        ASSERT_EQ(q.scales[0], 127u);
        for (int i = 1; i < kB; ++i) {
          const size_t k = start + static_cast<size_t>(i) - 1;
          if (k >= mids.size()) break;
          const uint32_t c = q.codes[static_cast<size_t>(i)];
          if (m == Rounding::Rne) {
            EXPECT_EQ(c & 1u, 0u) << el.name << " mid " << mids[k];
          }
          if (m == Rounding::Rna) {
            EXPECT_EQ(c, k + 1) << el.name << " mid " << mids[k];
          }
          if (m == Rounding::Rz) {
            EXPECT_EQ(c, k) << el.name << " mid " << mids[k];
          }
        }
      }
    }
  }
}

TEST(Mx, Fp32SubnormalInputs) {
  for (const Elem& el : elems()) {
    std::vector<float> x;
    const float dmin = std::numeric_limits<float>::denorm_min();
    const float nmin = FLT_MIN;
    // Only subnormals: floor(log2) <= -127, e clamps to -127.
    {
      std::vector<float> b(kB);
      for (int i = 0; i < kB; ++i) b[static_cast<size_t>(i)] = (i & 1 ? -1.0f : 1.0f) * dmin * static_cast<float>(1 << (i % 23));
      x.insert(x.end(), b.begin(), b.end());
    }
    // Min normal amax with subnormal companions (1.5 * 2^-126 -> e = -126 - emax -> clamped).
    {
      std::vector<float> b(kB);
      b[0] = 1.5f * nmin;
      for (int i = 1; i < kB; ++i) b[static_cast<size_t>(i)] = -std::ldexp(1.0f, -126 - i);
      x.insert(x.end(), b.begin(), b.end());
    }
    // Subnormals below an amax of 2^-115 (E5M2 keeps subnormal elements down to 2^-16 * 2^-127).
    {
      std::vector<float> b(kB);
      b[0] = std::ldexp(1.0f, -115);
      for (int i = 1; i < kB; ++i) b[static_cast<size_t>(i)] = std::ldexp(1.0f + i / 32.0f, -140 + i % 9) * (i & 1 ? -1.0f : 1.0f);
      x.insert(x.end(), b.begin(), b.end());
    }
    check_all_options(el, x);
  }
}

TEST(Mx, NearFltMax) {
  for (const Elem& el : elems()) {
    std::vector<float> x;
    std::vector<float> b(kB, 0.0f);
    b[0] = FLT_MAX;
    b[1] = -FLT_MAX;
    b[2] = std::ldexp(1.0f, 127);
    b[3] = std::nextafter(FLT_MAX, 0.0f);
    b[4] = 1.0f;
    b[5] = -std::ldexp(1.5f, 126);
    x.insert(x.end(), b.begin(), b.end());
    b[0] = std::ldexp(1.0f, 127);
    b[1] = 0.0f;
    x.insert(x.end(), b.begin(), b.end());
    check_all_options(el, x);
    QuantOptions opt;
    const Quantized q = quantize(el.fmt, x, 2, kB, opt);
    EXPECT_EQ(q.scales[0], 127 - el.emax_elem + 127) << el.name;  // floor(log2 FLT_MAX) = 127
    for (float d : dequantize(q)) EXPECT_FALSE(std::isnan(d)) << el.name;
  }
}

// SPEC: a block containing Inf or NaN dequantizes to NaN everywhere, scale code 0xFF.
TEST(Mx, NonFiniteBlock) {
  for (const Elem& el : elems()) {
    for (float bad : {kNaNf, -kNaNf, kInff, -kInff}) {
      for (int pos : {0, 13, 31}) {
        std::vector<float> x(2 * kB, 1.0f);
        x[static_cast<size_t>(pos)] = bad;
        for (ScaleRule rule : kRules) {
          for (Rounding m : kModes) {
            QuantOptions opt;
            opt.scale_rule = rule;
            opt.rounding = m;
            const Quantized q = quantize(el.fmt, x, 2, kB, opt);
            EXPECT_EQ(q.scales[0], 0xFFu) << el.name;
            EXPECT_EQ(q.scales[1], 127u - static_cast<unsigned>(el.emax_elem)) << el.name;  // neighbour untouched
            const std::vector<float> d = dequantize(q);
            for (int i = 0; i < kB; ++i) EXPECT_TRUE(std::isnan(d[static_cast<size_t>(i)])) << el.name;
            for (int i = kB; i < 2 * kB; ++i) EXPECT_EQ(d[static_cast<size_t>(i)], 1.0f) << el.name;
            EXPECT_TRUE(std::isnan(block_scale_value(q, 0)));
          }
        }
      }
    }
  }
}

// Sign rule: -0.0 -> +0 code; a negative value that rounds to zero keeps the sign bit (-0.0).
// The second block has a huge scale (amax 2^100) so a small negative element's scaled value
// underflows FP32 (-2^-60 / 2^98 = -2^-158): its code must still be -0.
TEST(Mx, NegativeZeroAndSignRule) {
  for (const Elem& el : elems()) {
    std::vector<float> x(2 * kB, 0.0f);
    x[0] = f(el.maxv);
    x[1] = -0.0f;
    x[2] = -static_cast<float>(el.grid[1] / 4.0);  // a quarter of the smallest step: rounds to 0
    x[3] = static_cast<float>(el.grid[1] / 4.0);
    x[kB] = std::ldexp(1.0f, 100);
    x[kB + 1] = -std::ldexp(1.0f, -60);
    x[kB + 2] = -0.0f;
    x[kB + 3] = -std::ldexp(1.0f, -149);
    for (Rounding m : {Rounding::Rne, Rounding::Rna, Rounding::Rz}) {
      for (ScaleRule rule : kRules) {
        QuantOptions opt;
        opt.rounding = m;
        opt.scale_rule = rule;
        const Quantized q = quantize(el.fmt, x, 2, kB, opt);
        const std::vector<float> d = dequantize(q);
        SCOPED_TRACE(std::string(el.name) + " " + std::string(rounding_name(m)) + " " +
                     std::string(scale_rule_name(rule)));
        EXPECT_EQ(q.codes[1], 0u);
        EXPECT_EQ(q.codes[2], el.sign());
        EXPECT_EQ(q.codes[3], 0u);
        EXPECT_TRUE(d[2] == 0.0f && std::signbit(d[2]));
        EXPECT_TRUE(d[1] == 0.0f && !std::signbit(d[1]));
        EXPECT_EQ(q.codes[kB + 1], el.sign()) << "x = -2^-60 beside 2^100";
        EXPECT_EQ(q.codes[kB + 2], 0u);
        EXPECT_EQ(q.codes[kB + 3], el.sign()) << "x = -2^-149 beside 2^100";
        EXPECT_TRUE(std::signbit(d[kB + 1]));
      }
    }
    check_all_options(el, x);
  }
}

// Random blocks with a mix of magnitudes: exponents spread over the FP32 range, dense and
// sparse blocks, exact ties at the element grid, values around the saturation threshold,
// subnormals, raw random bit patterns, and an occasional NaN/Inf.
void gen_block(std::mt19937_64& rng, const Elem& el, float* x) {
  auto u01 = [&]() { return static_cast<double>(rng() >> 11) * 0x1p-53; };
  auto sgn = [&]() { return (rng() & 1) ? -1.0 : 1.0; };
  const int kind = static_cast<int>(rng() % 8);
  const int eb = static_cast<int>(rng() % 250) - 125;  // block exponent in [-125, 124]
  const int spread = 1 + static_cast<int>(rng() % 24);
  for (int i = 0; i < kB; ++i) {
    double v = 0.0;
    switch (kind) {
      case 0:
      case 1:
      case 2:
        v = sgn() * (1.0 + u01()) * std::ldexp(1.0, eb - static_cast<int>(rng() % static_cast<uint64_t>(spread)));
        break;
      case 3: {  // exact ties / grid values at scale 2^e0
        const int e0 = std::clamp(eb, -110, 100);
        const size_t k = rng() % (el.grid.size() - 1);
        const double m = (rng() & 1) ? (el.grid[k] + el.grid[k + 1]) / 2.0 : el.grid[k];
        v = i == 0 ? std::ldexp(el.maxv, e0) : sgn() * std::ldexp(m, e0);
        break;
      }
      case 4: {  // amax near the saturation threshold
        const int e0 = std::clamp(eb, -110, 100);
        v = i == 0 ? std::ldexp(el.maxv * (1.0 + (u01() - 0.5) * 0x1p-4), e0)
                   : sgn() * u01() * std::ldexp(el.maxv, e0);
        break;
      }
      case 5: {  // raw finite bit patterns (any exponent, subnormals included)
        uint32_t b = static_cast<uint32_t>(rng());
        if (((b >> 23) & 0xFF) == 0xFF) b &= 0xBFFFFFFFu;
        x[i] = std::bit_cast<float>(b);
        continue;
      }
      case 6:  // sparse
        v = (rng() % 4 == 0) ? sgn() * u01() * std::ldexp(1.0, eb) : 0.0;
        break;
      case 7:  // tiny: subnormal territory
        v = sgn() * u01() * std::ldexp(1.0, -126 - static_cast<int>(rng() % 24));
        break;
    }
    x[i] = static_cast<float>(v);
  }
  if (rng() % 128 == 0) {
    const float bad[] = {kNaNf, kInff, -kInff};
    x[rng() % kB] = bad[rng() % 3];
  }
}

class MxRandom : public ::testing::TestWithParam<int> {};

TEST_P(MxRandom, Differential) {
  constexpr size_t kPerCombo = 12500;  // x 8 (rule, mode) combinations = 10^5 blocks per format
  size_t total = 0;
  const Elem& el = elems()[static_cast<size_t>(GetParam())];
  std::mt19937_64 rng(0xC0FFEEull + static_cast<uint64_t>(el.fmt));
  for (ScaleRule rule : kRules) {
    for (Rounding m : kModes) {
      std::vector<float> x(kPerCombo * kB);
      for (size_t b = 0; b < kPerCombo; ++b) gen_block(rng, el, x.data() + b * kB);
      QuantOptions opt;
      opt.scale_rule = rule;
      opt.rounding = m;
      opt.seed = rng();
      opt.stream = static_cast<uint32_t>(rng());
      EXPECT_EQ(check_blocks(el, x, opt), 0u);
      total += kPerCombo;
      // The ceil rule's promise on every block: no element saturates, and 2^e is the smallest.
      if (rule == ScaleRule::Ceil) {
        const Quantized q = quantize(el.fmt, x, kPerCombo, kB, opt);
        for (size_t b = 0; b < kPerCombo; ++b) {
          if (q.scales[b] == 0xFF) continue;
          double amax = 0.0;
          for (int i = 0; i < kB; ++i) amax = std::max(amax, std::fabs(static_cast<double>(x[b * kB + static_cast<size_t>(i)])));
          const int e = q.scales[b] - 127;
          ASSERT_LE(amax, std::ldexp(el.maxv, e)) << el.name << " block " << b;
          if (e > -127) {
            ASSERT_GT(amax, std::ldexp(el.maxv, e - 1)) << el.name << " block " << b;
          }
        }
      }
    }
  }
  std::printf("random %s blocks checked: %zu\n", el.name, total);
}

INSTANTIATE_TEST_SUITE_P(Formats, MxRandom, ::testing::Range(0, 5),
                         [](const ::testing::TestParamInfo<int>& i) {
                           std::string n = elems()[static_cast<size_t>(i.param)].name;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// The exposed kernel with an arbitrary first_index draws SR bytes at first_index + i.
TEST(Mx, KernelFirstIndex) {
  for (const Elem& el : elems()) {
    std::mt19937_64 rng(77);
    std::vector<float> x(6 * kB);
    for (size_t b = 0; b < 6; ++b) gen_block(rng, el, x.data() + b * kB);
    QuantOptions opt;
    opt.rounding = Rounding::Sr;
    opt.seed = 99;
    opt.stream = 1;
    for (uint64_t first : {uint64_t{0}, uint64_t{5}, uint64_t{1} << 40, ~uint64_t{0} - 1000}) {
      std::vector<uint8_t> codes(x.size()), scales(6);
      quantize_mx(el.fmt, x.data(), 6, opt, codes.data(), scales.data(), first);
      for (size_t b = 0; b < 6; ++b) {
        const RefBlock r = ref_mx(el, x.data() + b * kB, opt.scale_rule, opt.rounding, opt.seed, opt.stream,
                                  first + b * kB);
        ASSERT_EQ(scales[b], r.scale);
        if (r.scale == 0xFF) continue;
        for (int i = 0; i < kB; ++i) ASSERT_EQ(codes[b * kB + static_cast<size_t>(i)], r.codes[i]) << el.name << " first " << first;
      }
    }
  }
}

}  // namespace
