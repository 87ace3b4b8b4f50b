// Writes the reference decoders for scripts/formal.sh: one SystemVerilog module per decoder, a
// plain `case` over every code whose values come from golden's decode (fp4sim::decode, the value of
// a code as a double) and the MMA-Sim exponent convention (SPEC section 4), computed here and not
// read from rtl/fp4sim_pkg.sv or its generator. The formal checks (rtl/formal/decode_checks.sv)
// prove the RTL decoders equal to these modules for every input.
//
// Each reference gives the expected fields and a care mask: a field the datapath does not read for
// that code (e.g. the exponent of a NaN) is not compared.
//
// Usage: gen_decode_ref OUT.sv
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "fp4sim/format.hpp"

namespace {

using fp4sim::ElemFormat;

// A decoded code: value = (-1)^neg * sig * 2^(exp - mbits) for a finite nonzero code, exp the
// unbiased exponent with subnormals at the format's minimum normal exponent (MMA-Sim's
// extract_significand_exponent); zeros have sig 0.
struct Ref {
  bool nan = false, inf = false, zero = false, neg = false;
  int exp = 0;
  uint32_t sig = 0;
};

Ref ref_of(const ElemFormat& f, uint32_t code) {
  const double v = fp4sim::decode(f, code);
  Ref r;
  if (std::isnan(v)) {
    r.nan = true;
    return r;
  }
  r.neg = std::signbit(v);
  if (std::isinf(v)) {
    r.inf = true;
    return r;
  }
  if (v == 0.0) {
    r.zero = true;
    return r;
  }
  int e2 = 0;
  (void)std::frexp(std::fabs(v), &e2);  // |v| = m * 2^e2, m in [0.5, 1)
  r.exp = std::max(e2 - 1, f.emin());
  const double s = std::ldexp(std::fabs(v), f.mbits - r.exp);
  if (s != std::floor(s) || s < 1.0 || s >= 16.0) throw std::logic_error("significand not a 4-bit integer");
  r.sig = static_cast<uint32_t>(s);
  return r;
}

std::string bin(uint32_t v, int bits) {
  std::string s;
  for (int i = bits - 1; i >= 0; --i) s += ((v >> i) & 1u) ? '1' : '0';
  return s;
}

std::string hexs(uint32_t v, int digits) {
  std::ostringstream os;
  os << std::uppercase << std::hex << std::setw(digits) << std::setfill('0') << v;
  return os.str();
}

// bs_dot_k32's element decode {nan, inf, zero, neg, exp[4:0], sig[3:0]} by (fmt, code); unused
// format codes 5..7 decode as E4M3 (docs/rtl.md). Cared: the flags always, neg unless NaN, sig for
// finite codes, exp for finite nonzero codes.
void k32(std::ostream& os) {
  const ElemFormat* fmts[8] = {&fp4sim::kE4M3, &fp4sim::kE5M2, &fp4sim::kE2M3, &fp4sim::kE3M2,
                               &fp4sim::kE2M1, &fp4sim::kE4M3, &fp4sim::kE4M3, &fp4sim::kE4M3};
  os << "// bs_dot_k32 element decode, {nan, inf, zero, neg, exp[4:0], sig[3:0]} and its care mask.\n"
        "module ref_k32_dec (\n"
        "  input  logic [2:0]  fmt_i,\n"
        "  input  logic [7:0]  code_i,\n"
        "  output logic [12:0] dec_o,\n"
        "  output logic [12:0] care_o\n"
        ");\n"
        "  always_comb begin\n"
        "    dec_o  = '0;  // every code is listed; this only keeps yosys from inferring a latch\n"
        "    care_o = '0;\n"
        "    unique case ({fmt_i, code_i})\n";
  for (uint32_t fmt = 0; fmt < 8; ++fmt) {
    for (uint32_t c = 0; c < 256; ++c) {
      const Ref r = ref_of(*fmts[fmt], c);
      if (!r.nan && !r.inf && !r.zero && (r.exp < -16 || r.exp > 15)) throw std::logic_error("exp range");
      const uint32_t dec = (r.nan << 12) | (r.inf << 11) | (r.zero << 10) | (r.neg << 9) |
                           ((static_cast<uint32_t>(r.exp) & 0x1Fu) << 4) | r.sig;
      const bool fin = !r.nan && !r.inf;
      const uint32_t care = 0x1C00u | (r.nan ? 0u : 0x200u) | ((fin && !r.zero) ? 0x1F0u : 0u) | (fin ? 0xFu : 0u);
      os << "      11'h" << hexs((fmt << 8) | c, 3) << ": begin dec_o = 13'b" << bin(dec, 13) << "; care_o = 13'b"
         << bin(care, 13) << "; end\n";
    }
  }
  os << "    endcase\n  end\nendmodule\n\n";
}

// A generic 16-bit table entry (fp4sim_pkg::dec_t, {nan, inf, neg, exp[8:0], sig[3:0]}) of an
// 8-bit code: zeros have exp -126 (MMA-Sim; the units read it, e.g. a zero UE4M3 scale). Cared: the
// flags always, neg unless NaN, exp and sig for finite codes.
void generic(std::ostream& os, const std::string& name, const ElemFormat& f) {
  os << "// " << f.name << " as a generic dec_t entry and its care mask.\n"
     << "module ref_dec_" << name << " (\n"
        "  input  logic [7:0]  code_i,\n"
        "  output logic [15:0] dec_o,\n"
        "  output logic [15:0] care_o\n"
        ");\n"
        "  always_comb begin\n"
        "    dec_o  = '0;  // every code is listed; this only keeps yosys from inferring a latch\n"
        "    care_o = '0;\n"
        "    unique case (code_i)\n";
  for (uint32_t c = 0; c < 256; ++c) {
    const Ref r = ref_of(f, c);
    const int e = r.zero ? -126 : r.exp;
    const uint32_t dec = (r.nan << 15) | (r.inf << 14) | (r.neg << 13) | ((static_cast<uint32_t>(e) & 0x1FFu) << 4) | r.sig;
    const bool fin = !r.nan && !r.inf;
    const uint32_t care = 0xC000u | (r.nan ? 0u : 0x2000u) | (fin ? 0x1FFFu : 0u);
    os << "      8'h" << hexs(c, 2) << ": begin dec_o = 16'h" << hexs(dec, 4) << "; care_o = 16'h" << hexs(care, 4)
       << "; end\n";
  }
  os << "    endcase\n  end\nendmodule\n\n";
}

// A 4-bit element's signed value times `scale` (an integer for every code): E2M1 * 2, S1P2 * 4.
void scaled(std::ostream& os, const std::string& name, const ElemFormat& f, int scale) {
  os << "// " << f.name << " code -> " << scale << " * value, two's complement.\n"
     << "module ref_" << name << " (\n"
        "  input  logic [3:0] code_i,\n"
        "  output logic [5:0] val_o\n"
        ");\n"
        "  always_comb begin\n"
        "    val_o = '0;  // every code is listed; this only keeps yosys from inferring a latch\n"
        "    unique case (code_i)\n";
  for (uint32_t c = 0; c < 16; ++c) {
    const double v = scale * fp4sim::decode(f, c);
    if (v != std::floor(v) || std::fabs(v) > 31.0) throw std::logic_error("scaled value not a 6-bit integer");
    const int iv = static_cast<int>(v);
    os << "      4'h" << hexs(c, 1) << ": val_o = 6'h" << hexs(static_cast<uint32_t>(iv) & 0x3Fu, 2) << ";  // " << iv
       << "\n";
  }
  os << "    endcase\n  end\nendmodule\n\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: gen_decode_ref OUT.sv\n";
    return 2;
  }
  try {
    std::ostringstream os;
    os << "// GENERATED by rtl/formal/gen_decode_ref.cpp from golden's decode (fp4sim::decode): reference\n"
          "// decoders for scripts/formal.sh. Not checked in.\n\n";
    k32(os);
    generic(os, "ue8m0", fp4sim::kUE8M0);
    generic(os, "ue4m3", fp4sim::kUE4M3);
    generic(os, "e6m2", fp4sim::kE6M2);
    generic(os, "e4m3", fp4sim::kE4M3);
    generic(os, "e5m2", fp4sim::kE5M2);
    generic(os, "e2m3", fp4sim::kE2M3);
    generic(os, "e3m2", fp4sim::kE3M2);
    generic(os, "e2m1", fp4sim::kE2M1);
    scaled(os, "e2m1_x2", fp4sim::kE2M1, 2);
    scaled(os, "s1p2_x4", fp4sim::kS1P2, 4);
    std::ofstream f(argv[1], std::ios::binary);
    f << os.str();
    if (!f) throw std::runtime_error(std::string("cannot write ") + argv[1]);
  } catch (const std::exception& e) {
    std::cerr << "gen_decode_ref: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
