// Element and scale number formats as data.
//
// Every small float type fp4sim knows is one row of a table (exponent bits, mantissa bits, bias,
// which codes are special) and one generic decoder / encoder reads that row, in the spirit of
// ml_dtypes' float8_base and cvfpu's fpnew_pkg encoding table. Adding a type = adding a row.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace fp4sim {

// How the top of the code space is used.
enum class Special : uint8_t {
  None,       // every code is finite (E2M1, E2M3, E3M2, S1P2)
  FnNaN,      // OCP "fn": only the all-ones magnitude s.1111.111 is NaN, no Inf (E4M3, UE4M3)
  Ieee,       // top exponent reserved: mantissa 0 = Inf, else NaN (E5M2, BF16)
  AllOnesNaN, // the all-ones code is NaN; no Inf (UE8M0, E6M2)
};

struct ElemFormat {
  std::string_view name;
  uint8_t bits;          // storage bits, including an ignored sign bit for UE4M3
  uint8_t ebits;
  uint8_t mbits;
  int bias;
  bool is_signed;        // sign in the top storage bit
  bool has_subnormals;   // false: exponent field 0 is an ordinary binade (UE8M0, E6M2: no zero)
  Special special;

  constexpr int emin() const { return has_subnormals ? 1 - bias : -bias; }
  constexpr uint32_t mag_mask() const { return (1u << (ebits + mbits)) - 1u; }
  constexpr uint32_t sign_bit() const { return is_signed ? (1u << (ebits + mbits)) : 0u; }
  constexpr bool has_nan() const { return special != Special::None; }
  constexpr bool has_inf() const { return special == Special::Ieee; }
  constexpr bool has_zero() const { return has_subnormals; }
  // Largest finite magnitude code.
  constexpr uint32_t max_code() const {
    switch (special) {
      case Special::None: return mag_mask();
      case Special::FnNaN:
      case Special::AllOnesNaN: return mag_mask() - 1u;
      case Special::Ieee: return ((1u << ebits) - 2u) << mbits | ((1u << mbits) - 1u);
    }
    return 0;
  }
  // The canonical NaN code (positive); only meaningful when has_nan().
  constexpr uint32_t nan_code() const {
    return special == Special::Ieee ? (mag_mask() & ~((1u << mbits) - 1u)) | (1u << (mbits - 1))
                                    : mag_mask();
  }
  constexpr uint32_t inf_code() const { return mag_mask() & ~((1u << mbits) - 1u); }
};

// The table. Names follow OCP / NVIDIA / the HiF4 spec; see docs/formats.md for bit layouts.
inline constexpr ElemFormat kE2M1{"e2m1", 4, 2, 1, 1, true, true, Special::None};
inline constexpr ElemFormat kE2M3{"e2m3", 6, 2, 3, 1, true, true, Special::None};
inline constexpr ElemFormat kE3M2{"e3m2", 6, 3, 2, 3, true, true, Special::None};
inline constexpr ElemFormat kE4M3{"e4m3", 8, 4, 3, 7, true, true, Special::FnNaN};
inline constexpr ElemFormat kE5M2{"e5m2", 8, 5, 2, 15, true, true, Special::Ieee};
// UE4M3: E4M3 read as unsigned; bit 7 is ignored on decode (MMA-Sim) and never set by encode.
inline constexpr ElemFormat kUE4M3{"ue4m3", 8, 4, 3, 7, false, true, Special::FnNaN};
inline constexpr ElemFormat kUE8M0{"ue8m0", 8, 8, 0, 127, false, false, Special::AllOnesNaN};
// HiF4 level-1 scale: (4 + M)/4 * 2^(E - 48); code 0x00 = 2^-48, 0xFE = 49152, 0xFF NaN.
inline constexpr ElemFormat kE6M2{"e6m2", 8, 6, 2, 48, false, false, Special::AllOnesNaN};
// HiF4 element: sign + 3-bit magnitude c, value c/4 (= E1M2 with bias 1).
inline constexpr ElemFormat kS1P2{"s1p2", 4, 1, 2, 1, true, true, Special::None};
inline constexpr ElemFormat kBF16{"bf16", 16, 8, 7, 127, true, true, Special::Ieee};

enum class Rounding : uint8_t {
  Rne,  // round to nearest, ties to even
  Rna,  // round to nearest, ties away from zero
  Rz,   // toward zero
  Sr,   // stochastic: floor(|v|/s + r/256) with a random byte r (SPEC §3)
};

std::string_view rounding_name(Rounding r);
// Parses "rne" / "rna" / "rz" / "sr"; returns false on anything else.
bool parse_rounding(std::string_view s, Rounding& out);

// Exact value of a code (NaN codes give NaN, Inf codes give Inf). Every value of every format in
// the table is exactly representable as float (UE8M0 0x00 = 2^-127 is an FP32 subnormal).
double decode(const ElemFormat& f, uint32_t code);

// Encodes v under the given rounding. Exact for every double input (the scaled significand and
// its fraction are computed without rounding). Rules, documented in docs/formats.md:
//  - sign bit set iff v < 0 (so -0.0 -> +0, a negative value rounding to zero -> -0);
//    unsigned formats encode |v|.
//  - NaN -> the NaN code if the format has one, else (saturating or not) +max.
//  - |v| beyond the largest finite value after rounding: saturate -> +-max; otherwise Inf if
//    the format has Inf, else NaN if it has NaN, else +-max.
//  - formats without zero (UE8M0, E6M2) map values below their minimum to the minimum code.
//  - Sr uses `rbyte` (ignored by the other modes).
uint32_t encode(const ElemFormat& f, double v, Rounding rnd, bool saturate, uint8_t rbyte = 0);

// Integer rounding step shared by every quantizer: rounds a non-negative q (exactly representable)
// to an integer under `rnd`, with `rbyte` for Sr. Computed exactly via floor and the fraction.
double round_to_integer(double q, Rounding rnd, uint8_t rbyte = 0);

// Decode tables for 8-bit-or-smaller formats, built once. entries = 1 << bits.
struct DecodeTable {
  std::array<float, 256> v{};
};
const DecodeTable& decode_table(const ElemFormat& f);

// FP32 <-> BF16 (RNE, NaN kept quiet) and bit casts used across the library.
uint16_t float_to_bf16_rne(float x);
float bf16_to_float(uint16_t b);

}  // namespace fp4sim
