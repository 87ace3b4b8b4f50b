#include "fp4sim/format.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <mutex>
#include <unordered_map>

namespace fp4sim {

std::string_view rounding_name(Rounding r) {
  switch (r) {
    case Rounding::Rne: return "rne";
    case Rounding::Rna: return "rna";
    case Rounding::Rz: return "rz";
    case Rounding::Sr: return "sr";
  }
  return "?";
}

bool parse_rounding(std::string_view s, Rounding& out) {
  for (Rounding r : {Rounding::Rne, Rounding::Rna, Rounding::Rz, Rounding::Sr}) {
    if (s == rounding_name(r)) {
      out = r;
      return true;
    }
  }
  return false;
}

double decode(const ElemFormat& f, uint32_t code) {
  const bool neg = f.is_signed && (code & f.sign_bit());
  const uint32_t mag = code & f.mag_mask();  // unsigned formats ignore any extra top bit
  const uint32_t efield = mag >> f.mbits;
  const uint32_t mfield = mag & ((1u << f.mbits) - 1u);
  double v;
  if (f.has_nan() && (f.special == Special::Ieee ? (efield == (1u << f.ebits) - 1u && mfield != 0)
                                                 : mag == f.nan_code())) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (f.has_inf() && mag == f.inf_code()) {
    v = std::numeric_limits<double>::infinity();
  } else if (efield == 0 && f.has_subnormals) {
    v = std::ldexp(static_cast<double>(mfield), f.emin() - f.mbits);
  } else {
    const double sig = static_cast<double>((1u << f.mbits) | mfield);
    v = std::ldexp(sig, static_cast<int>(efield) - f.bias - f.mbits);
  }
  return neg ? -v : v;
}

double round_to_integer(double q, Rounding rnd, uint8_t rbyte) {
  const double fl = std::floor(q);
  const double fr = q - fl;  // exact: q and floor(q) share the binade or fl == 0
  switch (rnd) {
    case Rounding::Rz: return fl;
    case Rounding::Rna: return fr >= 0.5 ? fl + 1.0 : fl;
    case Rounding::Rne:
      if (fr > 0.5) return fl + 1.0;
      if (fr < 0.5) return fl;
      return std::fmod(fl, 2.0) != 0.0 ? fl + 1.0 : fl;
    case Rounding::Sr:
      // floor(q + r/256) without forming the (possibly inexact) sum: carry iff fr >= 1 - r/256.
      return fr >= 1.0 - static_cast<double>(rbyte) / 256.0 ? fl + 1.0 : fl;
  }
  return fl;
}

uint32_t encode(const ElemFormat& f, double v, Rounding rnd, bool saturate, uint8_t rbyte) {
  const uint32_t max_mag = f.max_code();
  if (std::isnan(v)) return f.has_nan() ? f.nan_code() : max_mag;
  const bool neg = f.is_signed && v < 0.0;
  const uint32_t sign = neg ? f.sign_bit() : 0u;
  const double a = std::fabs(v);
  const double max_val = decode(f, max_mag);
  auto overflow = [&]() -> uint32_t {
    if (saturate) return sign | max_mag;
    if (f.has_inf()) return sign | f.inf_code();
    if (f.has_nan()) return f.nan_code();
    return sign | max_mag;
  };
  if (std::isinf(a)) return overflow();
  if (a == 0.0) return f.has_zero() ? sign : 0u;

  // Exponent of the binade holding a, clamped to the format's lowest binade; the grid step there
  // is 2^(e - mbits) and q = a / step is exact (a scaling by a power of two).
  const int e = std::max(std::ilogb(a), f.emin());
  double n = round_to_integer(std::ldexp(a, f.mbits - e), rnd, rbyte);
  int ee = e;
  const double one = std::ldexp(1.0, f.mbits);
  if (n >= 2.0 * one) {  // rounding carried into the next binade
    n /= 2.0;
    ++ee;
  }
  if (!f.has_subnormals && n < one) {  // no zero / subnormals: below the minimum -> minimum
    n = one;
  }
  if (n == 0.0) return sign;
  if (std::ldexp(n, ee - f.mbits) > max_val) return overflow();
  uint32_t mag;
  if (n < one) {  // subnormal (only reachable when has_subnormals)
    mag = static_cast<uint32_t>(n);
  } else {
    mag = static_cast<uint32_t>(ee + f.bias) << f.mbits | (static_cast<uint32_t>(n) - (1u << f.mbits));
  }
  return sign | mag;
}

const DecodeTable& decode_table(const ElemFormat& f) {
  // One table per format, built on first use; keyed by name since formats are table rows.
  static std::mutex mu;
  static std::unordered_map<std::string_view, DecodeTable> tables;
  std::lock_guard<std::mutex> lock(mu);
  auto it = tables.find(f.name);
  if (it != tables.end()) return it->second;
  DecodeTable t;
  const uint32_t n = f.bits >= 8 ? 256u : (1u << f.bits);
  for (uint32_t c = 0; c < n; ++c) t.v[c] = static_cast<float>(decode(f, c));
  return tables.emplace(f.name, t).first->second;
}

uint16_t float_to_bf16_rne(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  const uint32_t lsb = (u >> 16) & 1u;
  u += 0x7FFFu + lsb;
  return static_cast<uint16_t>(u >> 16);
}

float bf16_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

}  // namespace fp4sim
