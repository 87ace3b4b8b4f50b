// Writes rtl/fp4sim_pkg.sv: the RTL decode tables, computed from the golden library's format table
// (fp4sim::decode), so that the SystemVerilog datapaths read exactly the values the golden models
// read. The generated file is checked in (yosys and the configure-time Verilator run need it before
// anything is built); the CTest `rtl_pkg_up_to_date` regenerates it and fails on any difference.
//
// Usage: gen_fp4sim_pkg [OUT.sv]   (stdout without an argument)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fp4sim/format.hpp"

namespace {

using fp4sim::ElemFormat;

// Generic decode entry, 16 bits: {nan, inf, neg, exp[8:0], sig[3:0]} with
//   value = (-1)^neg * sig * 2^(exp - mbits),
// exp = the exponent MMA-Sim's extract_significand_exponent gives: unbiased, the format's
// minimum normal exponent for subnormals, and -126 for a zero (SPEC §4 "details").
uint32_t entry(const ElemFormat& f, uint32_t code) {
  const double v = fp4sim::decode(f, code);
  if (std::isnan(v)) return 1u << 15;
  const uint32_t neg = std::signbit(v) ? 1u : 0u;
  if (std::isinf(v)) return (1u << 14) | (neg << 13);
  int e = -126;
  uint32_t sig = 0;
  if (v != 0.0) {
    e = std::max(std::ilogb(v), f.emin());
    const double m = std::ldexp(std::fabs(v), f.mbits - e);
    if (m != std::floor(m) || m >= 16.0) throw std::logic_error("significand does not fit 4 bits");
    sig = static_cast<uint32_t>(m);
  }
  if (e < -256 || e > 255) throw std::logic_error("exponent does not fit 9 bits");
  return (neg << 13) | ((static_cast<uint32_t>(e) & 0x1FFu) << 4) | sig;
}

std::string hex(uint32_t v, int digits) {
  std::ostringstream os;
  os << std::uppercase << std::hex << std::setw(digits) << std::setfill('0') << v;
  return os.str();
}

// A flat table, entry 0 in the least significant bits: TABLE[code*W +: W].
void table(std::ostream& os, const std::string& name, const std::string& what,
           const std::vector<uint32_t>& v, int width) {
  const size_t n = v.size();
  const int digits = (width + 3) / 4;
  os << "  // " << what << "\n";
  os << "  localparam logic [" << n << "*" << width << "-1:0] " << name << " = {\n";
  const size_t per_line = width > 8 ? 8 : 16;
  for (size_t hi = n; hi > 0; hi -= per_line) {
    const size_t lo = hi >= per_line ? hi - per_line : 0;
    os << "    ";
    for (size_t i = hi; i-- > lo;) {
      os << width << "'h" << hex(v[i], digits);
      if (i > 0) os << ", ";
    }
    os << "  // " << hex(static_cast<uint32_t>(hi - 1), 2) << ".." << hex(static_cast<uint32_t>(lo), 2)
       << "\n";
    if (lo == 0) break;
  }
  os << "  };\n\n";
}

std::vector<uint32_t> generic(const ElemFormat& f, uint32_t n) {
  std::vector<uint32_t> v(n);
  for (uint32_t c = 0; c < n; ++c) v[c] = entry(f, c);
  return v;
}

// Fields of an entry() value: what a bs_dot_k32 lane needs of an element's magnitude.
struct MagDec {
  bool nan = false, inf = false, zero = false;
  int exp = 0;        // unbiased; 0 for zero, NaN and Inf
  uint32_t sig = 0;   // hidden bit included; 0 for NaN and Inf
};

MagDec mag_dec(uint32_t e) {
  MagDec d;
  d.nan = (e >> 15) & 1u;
  d.inf = (e >> 14) & 1u;
  d.sig = e & 0xFu;
  d.zero = !d.nan && !d.inf && d.sig == 0;
  if (!d.nan && !d.inf && !d.zero) d.exp = static_cast<int>((e >> 4) & 0x1FFu) - (((e >> 12) & 1u) ? 512 : 0);
  return d;
}

// Element decode of a bs_dot_k32 format by its fields, magnitude {E[ebits-1:0], M[mbits-1:0]}, the
// way golden's generic decoder reads a format row: sig = {E != 0, M}, exp = max(E, 1) - bias,
// zero = (E == 0 && M == 0), and {inf, nan} = (E all ones) ? K32Top<F>[M] : 0, one small table of
// the all-ones binade's specials per format (2-bit entries). No 256-entry table per code: yosys
// expands a wide constant read with `+:` to a barrel shifter first (64 lanes of five such tables
// stalled synthesis), and `case` ROMs, which yosys folds quickly, ran 5x slower in Verilator.
// exp is not read for zeros, exp and sig not for NaN / Inf. Checked here against golden's decode for
// every code; scripts/formal.sh proves the RTL decoder against golden's decode independently.
void field_dec(std::ostream& os, const std::string& sfx, const fp4sim::ElemFormat& f) {
  const uint32_t eb = f.ebits, mb = f.mbits, mw = eb + mb;
  const uint32_t ne = 1u << eb, nm = 1u << mb;
  std::vector<uint32_t> top_t(nm, 0);
  for (uint32_t m = 0; m < nm; ++m) {
    const MagDec d = mag_dec(entry(f, ((ne - 1) << mb) | m));
    top_t[m] = (d.inf ? 2u : 0u) | (d.nan ? 1u : 0u);
  }
  for (uint32_t c = 0; c < (1u << mw); ++c) {
    const uint32_t e = c >> mb, m = c & (nm - 1);
    MagDec r;
    const uint32_t top = e == ne - 1 ? top_t[m] : 0u;
    r.nan = top & 1u;
    r.inf = (top >> 1) & 1u;
    r.zero = e == 0 && m == 0;
    r.sig = (e != 0 ? nm : 0u) | m;
    r.exp = static_cast<int>(std::max(e, 1u)) - f.bias;
    const uint32_t pos = entry(f, c), neg = entry(f, c | f.sign_bit());
    // Compared where the datapath reads them: sig unless NaN / Inf, exp unless also zero.
    const MagDec g = mag_dec(pos);
    const bool special = g.nan || g.inf;
    if (r.nan != g.nan || r.inf != g.inf || r.zero != g.zero || (!special && r.sig != g.sig) ||
        (!special && !g.zero && r.exp != g.exp)) {
      throw std::logic_error(std::string(f.name) + ": field rule differs from golden");
    }
    if ((!special && !g.zero && (r.exp < -16 || r.exp > 15)) || r.sig > 15) {
      throw std::logic_error("k32 element field does not fit");
    }
    // The sign is the code bit above the magnitude alone.
    if (((pos >> 13) & 1u) || (r.nan ? neg != pos : neg != (pos | (1u << 13)))) {
      throw std::logic_error(std::string(f.name) + ": sign is not the top code bit");
    }
  }
  table(os, "K32Top" + sfx, std::string(f.name) + ": {inf, nan} of the all-ones binade by M", top_t, 2);
}

// The decode function of format f on its code bits, one expression (yosys 0.23 infers latches for a
// function with statements called in some branches of a case only): the rule checked in field_dec.
void field_func(std::ostream& os, const std::string& sfx, const fp4sim::ElemFormat& f) {
  const uint32_t eb = f.ebits, mb = f.mbits, mw = eb + mb;
  const std::string e = "code[" + std::to_string(mw - 1) + ":" + std::to_string(mb) + "]";
  const std::string m = "code[" + std::to_string(mb - 1) + ":0]";
  const std::string top = "(" + e + " == " + std::to_string(eb) + "'d" + std::to_string((1u << eb) - 1) + ")";
  const std::string lc(f.name);
  // A flat result, not a k32_dec_t: yosys 0.23 takes a struct-typed function result called in one
  // branch of an always_comb case for a latch.
  os << "  // " << f.name << ": sign code[" << mw << "], E = " << e << ", M = " << m << "\n"
     << "  function automatic logic [K32DecW-1:0] dec_k32_" << lc << "(input logic [" << mw << ":0] code);\n"
     << "    dec_k32_" << lc << " = {\n"
     << "      " << top << " & K32Top" << sfx << "[{" << m << ", 1'b0}],  // nan\n"
     << "      " << top << " & K32Top" << sfx << "[{" << m << ", 1'b1}],  // inf\n"
     << "      code[" << mw - 1 << ":0] == " << mw << "'d0,  // zero\n"
     << "      code[" << mw << "],  // neg\n"
     << "      5'({" << e << " | " << eb << "'(" << e << " == " << eb << "'d0)}) - 5'd" << f.bias
     << ",  // exp = max(E, 1) - bias\n"
     << "      4'({" << e << " != " << eb << "'d0, " << m << "})  // sig\n"
     << "    };\n"
     << "  endfunction\n\n";
}

// UE8M0 by its field (golden's row: 8 exponent bits, no mantissa, no subnormals, all-ones NaN):
// {nan, inf, neg, exp, sig} = {code == 8'hFF, 0, 0, code - bias, 1}, the generic dec_t entry of every
// finite code. For bs_k32_front's two scale decoders; a DecUe8m0 read expands to a 4096-bit barrel
// shifter in yosys first (about 15 s each).
void ue8m0_func(std::ostream& os) {
  const fp4sim::ElemFormat& f = fp4sim::kUE8M0;
  if (f.ebits != 8 || f.mbits != 0 || f.has_subnormals || f.special != fp4sim::Special::AllOnesNaN) {
    throw std::logic_error("UE8M0 row is not an 8-bit exponent with an all-ones NaN");
  }
  for (uint32_t c = 0; c < 256; ++c) {
    const uint32_t want = c == 0xFFu ? (1u << 15)
                                     : ((static_cast<uint32_t>(static_cast<int>(c) - f.bias) & 0x1FFu) << 4) | 1u;
    if (entry(f, c) != want) throw std::logic_error("UE8M0 field rule differs from golden");
  }
  os << "  // UE8M0 scale by its field, a dec_t: {code == 8'hFF, 0, 0, code - " << f.bias
     << ", 1} (equal to DecUe8m0)\n"
     << "  function automatic logic [DecW-1:0] dec_ue8m0(input logic [7:0] code);\n"
     << "    dec_ue8m0 = {code == 8'hFF, 2'b00, 9'({1'b0, code} - 9'd" << f.bias << "), 4'd1};\n"
     << "  endfunction\n\n";
}

std::string generate() {
  using namespace fp4sim;
  std::ostringstream os;
  os << "// GENERATED by rtl/gen/gen_fp4sim_pkg.cpp from the golden format table "
        "(golden/include/fp4sim/format.hpp).\n"
        "// Do not edit: rebuild the target `rtl_pkg_regen` (writes this file); the CTest\n"
        "// `rtl_pkg_up_to_date` fails when this file and the generator disagree.\n"
        "//\n"
        "// Decode tables as flat constant vectors, read as TABLE[code*W +: W] (yosys 0.23 takes neither\n"
        "// unpacked-array constants nor '{} patterns); an entry is read into a dec_t:\n"
        "//   value = (-1)^neg * sig * 2^(exp - mbits)\n"
        "// exp is MMA-Sim's extract_significand_exponent exponent: unbiased, the minimum normal exponent\n"
        "// for subnormals, -126 for zeros (SPEC section 4).\n"
        "package fp4sim_pkg;\n\n";
  os << "  localparam int unsigned DecW = 16;\n"
        "  // One decoded code (a table entry). yosys 0.23 takes no casts: assign an entry to a dec_t.\n"
        "  typedef struct packed {\n"
        "    logic              nan;\n"
        "    logic              inf;\n"
        "    logic              neg;\n"
        "    logic signed [8:0] exp;  // two's complement\n"
        "    logic [3:0]        sig;\n"
        "  } dec_t;\n\n";

  // Element formats of kind mxf8f6f4, selected by the fmt_*_i ports of bs_dot_k32.
  os << "  // Element format selector of bs_dot_k32 (fmt_a_i / fmt_b_i); codes 5..7 decode as E4M3.\n"
        "  typedef enum logic [2:0] {\n"
        "    FmtE4m3 = 3'd0,\n"
        "    FmtE5m2 = 3'd1,\n"
        "    FmtE2m3 = 3'd2,\n"
        "    FmtE3m2 = 3'd3,\n"
        "    FmtE2m1 = 3'd4\n"
        "  } fmt_e;\n";
  const ElemFormat* fmts[5] = {&kE4M3, &kE5M2, &kE2M3, &kE3M2, &kE2M1};
  std::vector<uint32_t> mb(8, 0);
  for (int i = 0; i < 5; ++i) mb[i] = fmts[i]->mbits;
  for (int i = 5; i < 8; ++i) mb[i] = kE4M3.mbits;  // unused selector codes decode as E4M3
  os << "  // FmtMbits[fmt*2 +: 2]\n";
  os << "  localparam logic [8*2-1:0] FmtMbits = {";
  for (int i = 7; i >= 0; --i) os << "2'd" << mb[i] << (i ? ", " : "};\n\n");

  field_dec(os, "E4m3", kE4M3);
  field_dec(os, "E5m2", kE5M2);
  field_dec(os, "E2m3", kE2M3);
  field_dec(os, "E3m2", kE3M2);
  field_dec(os, "E2m1", kE2M1);
  os << "  // bs_dot_k32 element decode (dec_k32_*): value = (-1)^neg * sig * 2^(exp - mbits) for a finite\n"
        "  // nonzero code; a zero has zero = 1 and sig = 0 (its exponent is -126 in the datapath, MMA-Sim's\n"
        "  // rule); exp is don't-care for zero, exp and sig for NaN / Inf (the datapath does not read them).\n"
        "  typedef struct packed {\n"
        "    logic              nan;\n"
        "    logic              inf;\n"
        "    logic              zero;\n"
        "    logic              neg;\n"
        "    logic signed [4:0] exp;  // unbiased; the minimum normal exponent for subnormals\n"
        "    logic [3:0]        sig;  // hidden bit included\n"
        "  } k32_dec_t;\n"
        "  localparam int unsigned K32DecW = 13;  // $bits(k32_dec_t), which yosys 0.23 cannot take\n\n";
  field_func(os, "E4m3", kE4M3);
  field_func(os, "E5m2", kE5M2);
  field_func(os, "E2m3", kE2M3);
  field_func(os, "E3m2", kE3M2);
  field_func(os, "E2m1", kE2M1);
  ue8m0_func(os);

  table(os, "DecE4m3", "E4M3 (OCP fn): 256 codes", generic(kE4M3, 256), 16);
  table(os, "DecE5m2", "E5M2: 256 codes", generic(kE5M2, 256), 16);
  table(os, "DecE2m3", "E2M3 (FP6): 64 codes (code bits 7:6 are ignored)", generic(kE2M3, 64), 16);
  table(os, "DecE3m2", "E3M2 (FP6): 64 codes (code bits 7:6 are ignored)", generic(kE3M2, 64), 16);
  table(os, "DecE2m1", "E2M1 (FP4): 16 codes", generic(kE2M1, 16), 16);
  // UE4M3: the sign bit is ignored on decode (MMA-Sim reads abs()); the table has the 128
  // magnitudes and is indexed with code[6:0]. Check that this is what golden decode does.
  for (uint32_t c = 0; c < 128; ++c) {
    if (entry(kUE4M3, c) != entry(kUE4M3, c | 0x80u)) throw std::logic_error("UE4M3 sign not ignored");
  }
  table(os, "DecUe4m3", "UE4M3 scale: 128 codes, indexed with code[6:0] (bit 7 ignored); 0x7F NaN",
        generic(kUE4M3, 128), 16);
  table(os, "DecUe8m0", "UE8M0 scale: 256 codes, 2^(code-127); 0xFF NaN", generic(kUE8M0, 256), 16);
  table(os, "DecE6m2", "E6M2 (HiF4 level-1 scale): 256 codes, sig = 4+M, exp = E-48; 0xFF NaN",
        generic(kE6M2, 256), 16);

  // Datapath tables of the 4-bit elements, indexed with the 3-bit magnitude code.
  // E2M1: 2*|v| = sig2 << sh with sig2 in {0,1,2,3} and sh in {0,1,2}: products become a 2x2-bit
  // multiplier and a shift, as in a tensor-core lane. Entry {sh[1:0], sig2[1:0]}.
  std::vector<uint32_t> e2m1(8);
  for (uint32_t c = 0; c < 8; ++c) {
    const double x2 = 2.0 * decode(kE2M1, c);
    uint32_t sh = 0;
    double s = x2;
    while (s > 3.0) {
      s /= 2.0;
      ++sh;
    }
    if (s != std::floor(s) || (static_cast<uint32_t>(s) << sh) != static_cast<uint32_t>(x2)) {
      throw std::logic_error("E2M1 magnitude is not sig2 << sh");
    }
    e2m1[c] = (sh << 2) | static_cast<uint32_t>(s);
  }
  table(os, "E2m1SigSh", "E2M1 magnitude code c -> {sh[1:0], sig2[1:0]}: 2*|value| = sig2 << sh", e2m1, 4);
  // S1P2: |value| = c/4, so the datapath's integer is 4*|value| = c.
  std::vector<uint32_t> s1p2(8);
  for (uint32_t c = 0; c < 8; ++c) {
    const double x4 = 4.0 * decode(kS1P2, c);
    if (x4 != std::floor(x4) || x4 > 7.0) throw std::logic_error("S1P2 magnitude is not c/4");
    s1p2[c] = static_cast<uint32_t>(x4);
  }
  // 4-bit entries (value <= 7) so the index is {code, 2'b00}, a wiring, not a multiplication.
  table(os, "S1p2Mag", "S1P2 (HiF4 element) magnitude code -> 4*|value| (entries 4 bits, 3 used)", s1p2, 4);
  os << "endpackage\n";
  return os.str();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string text = generate();
    if (argc > 1) {
      std::ofstream f(argv[1], std::ios::binary);
      f << text;
      if (!f) throw std::runtime_error(std::string("cannot write ") + argv[1]);
    } else {
      std::cout << text;
    }
  } catch (const std::exception& e) {
    std::cerr << "gen_fp4sim_pkg: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
