// Functional coverpoints of the RTL tests; see coverage_bins.hpp. Compiled only into the coverage
// build (tests/rtl/CMakeLists.txt, FP4SIM_RTL_COVERAGE).
#include "coverage_bins.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fp4sim/format.hpp"
#include "fp4sim/mma_core.hpp"
#include "fp4sim/quant.hpp"

namespace rtlcov {

namespace {

using fp4sim::rtl::Unit;
__extension__ typedef unsigned __int128 u128;  // exact sums up to ~120 bits
__extension__ typedef __int128 i128;

// ---- the bin table: every declared bin of a unit, hit or not -------------------------------------

struct BinDecl {
  const char* name;         // "coverpoint.bin"
  const char* unreachable;  // nullptr, or why no operands can reach it
};

// RN units (hif4_pe, nvfp4_pe64): C + exact term, one round-to-nearest-even (fp4sim_fp32_add_prep + _round).
constexpr const char* kNoOverflow =
    "the term is < 2^45 (hif4) / 2^30 (nvfp4): C + term reaches 2^128 only if C does (then C is Inf)";
constexpr const char* kSubExact =
    "a nonzero term lies on a grid >= 2^-104 (hif4) / 2^-20 (nvfp4): a subnormal sum is C alone, exact";
const std::vector<BinDecl> kRnBins = {
    {"special.nan_scale_a", nullptr}, {"special.nan_scale_b", nullptr}, {"special.nan_c", nullptr},
    {"special.inf_c_pos", nullptr}, {"special.inf_c_neg", nullptr}, {"special.finite", nullptr},
    {"operands.both_zero_pos", nullptr}, {"operands.both_zero_neg", nullptr},
    {"operands.c_zero_only", nullptr}, {"operands.term_zero_only", nullptr}, {"operands.both_nonzero", nullptr},
    // ediff = lead(big) - lead(small), big = the larger magnitude (the RTL's t_big), W = frame
    {"exp_distance.c_big_d0", nullptr}, {"exp_distance.c_big_d1", nullptr}, {"exp_distance.c_big_d2", nullptr},
    {"exp_distance.c_big_d3_7", nullptr}, {"exp_distance.c_big_d8_Wm1", nullptr},
    {"exp_distance.c_big_dW_Wp2", nullptr}, {"exp_distance.c_big_sat", nullptr},
    {"exp_distance.t_big_d0", nullptr}, {"exp_distance.t_big_d1", nullptr}, {"exp_distance.t_big_d2", nullptr},
    {"exp_distance.t_big_d3_7", nullptr}, {"exp_distance.t_big_d8_Wm1", nullptr},
    {"exp_distance.t_big_dW_Wp2", nullptr}, {"exp_distance.t_big_sat", nullptr},
    // lead(big) - lead(exact sum); add_carry: the sum is one binade above the big operand
    {"cancel.add_carry", nullptr}, {"cancel.add_no_carry", nullptr}, {"cancel.sub_depth0", nullptr},
    {"cancel.sub_depth1", nullptr}, {"cancel.sub_depth2_7", nullptr}, {"cancel.sub_depth8_23", nullptr},
    {"cancel.sub_depth24p", nullptr}, {"cancel.sub_exact_zero", nullptr},
    // the bits below the FP32 grid of the result: round bit r, sticky s, kept lsb
    {"round.exact", nullptr}, {"round.below_half", nullptr}, {"round.tie_even_down", nullptr},
    {"round.tie_odd_up", nullptr}, {"round.above_half", nullptr}, {"round.carry_to_next_binade", nullptr},
    {"round.to_inf", kNoOverflow}, {"round.subnormal_inexact", kSubExact},
    {"result.zero_pos", nullptr}, {"result.zero_neg", nullptr}, {"result.subnormal", nullptr},
    {"result.normal", nullptr}, {"result.overflow_inf", kNoOverflow},
    {"self_check.mismatch", nullptr},
};

// Blackwell units: C and every term truncated to the grid 2^(max_e - F), summed exactly, the sum
// truncated (RZ) to FP32 (fp4sim_fix_to_fp32_rz). F = 35 (K = 64) or 25 (K = 32).
const std::vector<BinDecl> kBwBins = {
    {"special.nan_scale_a", nullptr}, {"special.nan_scale_b", nullptr}, {"special.nan_c", nullptr},
    {"special.inf_c_pos", nullptr}, {"special.inf_c_neg", nullptr}, {"special.finite", nullptr},
    // d = max_e - exp(C): where C sits in the F-bit window of the final sum
    {"exp_distance.c_zero", nullptr}, {"exp_distance.c_is_max", nullptr}, {"exp_distance.c_on_grid", nullptr},
    {"exp_distance.c_truncated", nullptr}, {"exp_distance.c_below_window", nullptr},
    // what the alignment to 2^(max_e - F) loses over C and all terms
    {"align.exact", nullptr}, {"align.truncated", nullptr}, {"align.operand_dropped", nullptr},
    {"align.max_set_by_zero_only", nullptr},
    // max lead over the aligned contributions - lead of their sum
    {"cancel.carry", nullptr}, {"cancel.depth0", nullptr}, {"cancel.depth1", nullptr},
    {"cancel.depth2_7", nullptr}, {"cancel.depth8_23", nullptr}, {"cancel.depth24p", nullptr},
    {"cancel.exact_zero", nullptr}, {"cancel.all_zero", nullptr},
    // RZ conversion of the sum: bits below the FP32 grid lost or not
    {"round.exact", nullptr}, {"round.truncated", nullptr}, {"round.subnormal_truncated", nullptr},
    {"round.underflow_to_zero", nullptr},
    {"result.zero", nullptr}, {"result.subnormal", nullptr}, {"result.normal", nullptr},
    {"result.overflow_inf_pos", nullptr}, {"result.overflow_inf_neg", nullptr},
    {"self_check.mismatch", nullptr},
};
const std::vector<BinDecl> kK32ExtraBins = {
    {"special.nan_elem", nullptr}, {"special.inf_times_zero", nullptr}, {"special.inf_plus_minus_inf", nullptr},
    {"special.inf_pos", nullptr}, {"special.inf_neg", nullptr},
};
const fp4sim::ElemFormat* const kK32Fmts[5] = {&fp4sim::kE4M3, &fp4sim::kE5M2, &fp4sim::kE2M3, &fp4sim::kE3M2,
                                               &fp4sim::kE2M1};

bool is_ue4m3(Unit u) {
  return u == Unit::BsDotK64Ue4m3B16 || u == Unit::BsDotK64Ue4m3B32 || u == Unit::Nvfp4Pe64;
}

class Collector {
 public:
  ~Collector() {
    const std::lock_guard<std::mutex> lock(mu_);
    if (units_.empty()) return;
    const char* d = std::getenv("FP4SIM_RTL_COVERAGE_DIR");
    const std::string path =
        std::string(d && *d ? d : ".") + "/functional." + std::to_string(::getpid()) + ".txt";
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f) return;
    for (const auto& [unit, bins] : units_) {
      for (const auto& [name, bin] : bins) {
        std::fprintf(f, "%s %s %llu%s%s\n", unit.c_str(), name.c_str(), static_cast<unsigned long long>(bin.n),
                     bin.why ? " unreachable: " : "", bin.why ? bin.why : "");
      }
    }
    std::fclose(f);
  }

  void hit(Unit u, const std::string& name) {
    auto& bins = unit_bins(u);
    auto it = bins.find(name);
    if (it == bins.end()) it = bins.emplace(name, Bin{0, "undeclared bin (collector bug)"}).first;
    ++it->second.n;
  }
  std::mutex& mu() { return mu_; }

 private:
  struct Bin {
    uint64_t n = 0;
    const char* why = nullptr;
  };
  std::map<std::string, Bin>& unit_bins(Unit u) {
    const std::string name(fp4sim::rtl::unit_info(u).name);
    auto it = units_.find(name);
    if (it != units_.end()) return it->second;
    auto& bins = units_[name];
    auto declare = [&](const std::vector<BinDecl>& v) {
      for (const auto& b : v) bins[b.name] = Bin{0, b.unreachable};
    };
    if (u == Unit::Hif4Pe || u == Unit::Nvfp4Pe64) {
      declare(kRnBins);
    } else {
      declare(kBwBins);
      if (u == Unit::BsDotK32) {
        declare(kK32ExtraBins);
        for (const auto* fa : kK32Fmts)
          for (const auto* fb : kK32Fmts) bins["format." + std::string(fa->name) + "_" + std::string(fb->name)] = Bin{};
      }
    }
    if (u == Unit::Hif4Pe) {
      const char* why = "a zero HiF4 term is +0 (golden adds a float +0 product), so C = -0 gives +0";
      bins["operands.both_zero_neg"].why = why;
      bins["result.zero_neg"].why = why;
    }
    if (is_ue4m3(u) && u != Unit::Nvfp4Pe64) {
      bins["align.zero_scale"] = Bin{};  // a zero UE4M3 scale counts exponent -126
      const char* ovf = "UE4M3 scales <= 448: every group term is < 2^31 and C <= FLT_MAX, so the sum stays < 2^128";
      const char* sub =
          "with a nonzero term max_e >= -12, the grid is >= 2^-47 and the result 0 or normal; without one max_e <= "
          "-118 (a zero scale counts -126), the grid <= 2^-153 and C (grid 2^-149) is kept exactly";
      bins["result.overflow_inf_pos"].why = ovf;
      bins["result.overflow_inf_neg"].why = ovf;
      bins["round.subnormal_truncated"].why = sub;
      bins["round.underflow_to_zero"].why = sub;
    }
    return bins;
  }

  std::mutex mu_;
  std::map<std::string, std::map<std::string, Bin>> units_;
};

Collector& collector() {
  static Collector c;
  return c;
}

// ---- exact arithmetic helpers ---------------------------------------------------------------------

// A decoded code as golden's Dy: value m * 2^(e - mbits), e = MMA-Sim's exponent (-126 for zero).
struct Dy {
  int64_t m = 0;
  int e = -126;
  bool nan = false, inf = false, neg = false;
};
Dy dy_of(const fp4sim::ElemFormat& f, uint32_t code) {
  const double v = fp4sim::decode(f, code);
  Dy d;
  if (std::isnan(v)) {
    d.nan = true;
    return d;
  }
  d.neg = std::signbit(v);
  if (std::isinf(v)) {
    d.inf = true;
    return d;
  }
  if (v == 0.0) return d;
  d.e = std::max(std::ilogb(v), f.emin());
  d.m = static_cast<int64_t>(std::ldexp(std::fabs(v), f.mbits - d.e)) * (d.neg ? -1 : 1);
  return d;
}

// 2 * an E2M1 value (an integer in [-12, 12]), as golden's grouped kinds read it.
int64_t q2(uint8_t code) { return static_cast<int64_t>(2.0 * fp4sim::decode(fp4sim::kE2M1, code & 15u)); }

int lead128(u128 x) {  // index of the leading one (x != 0)
  const auto hi = static_cast<uint64_t>(x >> 64);
  return hi ? 127 - std::countl_zero(hi) : 63 - std::countl_zero(static_cast<uint64_t>(x));
}

// A signed exact value mag * 2^exp.
struct Fx {
  bool neg = false;
  u128 mag = 0;
  int exp = 0;
  int lead() const { return exp + lead128(mag); }
};

const char* dist_bin(int d, int w) {
  if (d <= 2) return d == 0 ? "d0" : (d == 1 ? "d1" : "d2");
  if (d <= 7) return "d3_7";
  if (d <= w - 1) return "d8_Wm1";
  if (d <= w + 2) return "dW_Wp2";
  return "sat";
}
const char* depth_bin(int d) {
  if (d <= 1) return d == 0 ? "depth0" : "depth1";
  if (d <= 7) return "depth2_7";
  if (d <= 23) return "depth8_23";
  return "depth24p";
}

// ---- RN units --------------------------------------------------------------------------------------

// C (finite) + term, rounded once to nearest even at the FP32 grid; bins as kRnBins. Returns the
// collector's own result bits.
uint32_t rn_add(Unit u, uint32_t cbits, Fx t, int frame_w) {
  Collector& col = collector();
  int64_t cm;
  int ce;
  fp4sim::split_c(cbits, cm, ce);  // C = cm * 2^(ce - 23)
  Fx c{(cbits >> 31) != 0, static_cast<u128>(cm < 0 ? -cm : cm), ce - 23};  // -0 keeps its sign
  const bool cz = c.mag == 0, tz = t.mag == 0;
  for (Fx* x : {&c, &t}) {  // strip trailing zeros: at most ~50 significant bits remain
    while (x->mag != 0 && (x->mag & 1) == 0) {
      x->mag >>= 1;
      ++x->exp;
    }
  }
  if (cz && tz) {
    const bool neg = c.neg && t.neg;
    col.hit(u, neg ? "operands.both_zero_neg" : "operands.both_zero_pos");
    col.hit(u, neg ? "result.zero_neg" : "result.zero_pos");
    col.hit(u, "round.exact");
    return neg ? 0x80000000u : 0u;
  }
  col.hit(u, cz ? "operands.c_zero_only" : (tz ? "operands.term_zero_only" : "operands.both_nonzero"));
  // Exact sum; an operand far below the other (more than 60 binades) only jams a sticky unit.
  Fx big = c, sml = t;
  bool t_big = cz;
  if (!cz && !tz) {
    const int lc = c.lead(), lt = t.lead();
    if (lt != lc) {
      t_big = lt > lc;
    } else {  // same binade: compare aligned magnitudes
      const int e0 = std::min(c.exp, t.exp);
      t_big = (t.mag << (t.exp - e0)) >= (c.mag << (c.exp - e0));
    }
  }
  if (t_big) std::swap(big, sml);
  u128 s;
  int e0;
  const bool sub = !cz && !tz && (c.neg != t.neg);
  if (sml.mag == 0) {
    s = big.mag;
    e0 = big.exp;
  } else {
    const int gap = big.lead() - sml.lead();
    col.hit(u, std::string("exp_distance.") + (t_big ? "t_big_" : "c_big_") + dist_bin(gap, frame_w));
    if (gap <= 60) {
      e0 = std::min(big.exp, sml.exp);
      const u128 a = big.mag << (big.exp - e0), b = sml.mag << (sml.exp - e0);
      s = sub ? a - b : a + b;
    } else {
      // The small operand is < 2^(lead(big) - 60), far below the result's round bit (its grid is
      // >= 2^(lead(big) - 25)): it only decides the sticky bit, so a unit at 2^(e0 - 2) stands in.
      e0 = std::min(big.exp, big.lead() - 60);
      const u128 a = (big.mag << (big.exp - e0)) << 2;
      s = sub ? a - 1 : a + 1;
      e0 -= 2;
    }
    if (s == 0) {
      col.hit(u, "cancel.sub_exact_zero");
    } else {
      const int depth = big.lead() - (e0 + lead128(s));
      if (!sub) {
        col.hit(u, depth < 0 ? "cancel.add_carry" : "cancel.add_no_carry");
      } else {
        col.hit(u, std::string("cancel.sub_") + depth_bin(depth));
      }
    }
  }
  if (s == 0) {
    col.hit(u, "result.zero_pos");
    col.hit(u, "round.exact");
    return 0u;
  }
  const bool neg = big.neg;
  const int lead = e0 + lead128(s);
  const int e_res = std::max(lead, -126);
  const int grid = e_res - 23;
  u128 q = s;
  bool r = false, st = false;
  if (grid > e0) {
    const int sh = grid - e0;
    q = sh >= 128 ? 0 : s >> sh;
    const u128 rem = sh >= 128 ? s : s & ((u128{1} << sh) - 1);
    r = (rem >> (sh - 1)) & 1;
    st = (rem & ((u128{1} << (sh - 1)) - 1)) != 0;
  } else {
    q = s << (e0 - grid);
  }
  const bool lsb = q & 1;
  const bool inc = r && (st || lsb);
  if (!r && !st) col.hit(u, "round.exact");
  else if (!r) col.hit(u, "round.below_half");
  else if (!st) col.hit(u, lsb ? "round.tie_odd_up" : "round.tie_even_down");
  else col.hit(u, "round.above_half");
  const u128 qr = q + (inc ? 1 : 0);
  const bool subn = lead < -126;
  if (inc && lead128(qr) > lead128(q)) col.hit(u, "round.carry_to_next_binade");
  if (subn && (r || st)) col.hit(u, "round.subnormal_inexact");
  // Biased exponent - 1 plus the significand (the RTL's trick): carries add themselves in.
  const u128 bits = (static_cast<u128>(e_res + 126) << 23) + qr;
  if (bits >= 0x7F800000u) {
    if (inc && (static_cast<u128>(e_res + 126) << 23) + q < 0x7F800000u) col.hit(u, "round.to_inf");
    col.hit(u, "result.overflow_inf");
    return (neg ? 0x80000000u : 0u) | 0x7F800000u;
  }
  col.hit(u, subn && qr < (u128{1} << 23) ? "result.subnormal" : "result.normal");
  return (neg ? 0x80000000u : 0u) | static_cast<uint32_t>(bits);
}

// The special-value outcomes every unit decides first: a NaN scale on either side, then a NaN C,
// then, where C is the only source of Inf (inf_c_decides), an infinite C. Returns the result bits
// when one of them applies.
std::optional<uint32_t> special_first(Unit u, bool nan_a, bool nan_b, uint32_t c, bool inf_c_decides) {
  Collector& col = collector();
  if (nan_a || nan_b) {
    col.hit(u, nan_a ? "special.nan_scale_a" : "special.nan_scale_b");
    return fp4sim::kNaNBits;
  }
  if (fp4sim::is_nan_bits(c)) {
    col.hit(u, "special.nan_c");
    return fp4sim::kNaNBits;
  }
  if (!inf_c_decides) return std::nullopt;
  if (fp4sim::is_inf_bits(c)) {
    col.hit(u, c >> 31 ? "special.inf_c_neg" : "special.inf_c_pos");
    return c;
  }
  col.hit(u, "special.finite");
  return std::nullopt;
}

uint32_t sample_hif4(const uint8_t* a, const uint8_t* b, uint32_t wa, uint32_t wb, uint32_t c) {
  const Unit u = Unit::Hif4Pe;
  const Dy sa = dy_of(fp4sim::kE6M2, fp4sim::hif4_e6m2(wa)), sb = dy_of(fp4sim::kE6M2, fp4sim::hif4_e6m2(wb));
  if (const auto sp = special_first(u, sa.nan, sb.nan, c, true)) return *sp;
  int64_t sum = 0;  // sum of (+-c << level) products, element value = q / 4
  for (int k = 0; k < 64; ++k) {
    const int ca = a[k] & 15, cb = b[k] & 15;
    const int64_t qa = ((ca & 8) ? -(ca & 7) : (ca & 7)) * (int64_t{1} << fp4sim::hif4_level(wa, k));
    const int64_t qb = ((cb & 8) ? -(cb & 7) : (cb & 7)) * (int64_t{1} << fp4sim::hif4_level(wb, k));
    sum += qa * qb;
  }
  const int64_t p = sum * sa.m * sb.m;
  // A zero term is +0 (golden adds a float +0 product: C = -0 gives +0).
  Fx t{p < 0, static_cast<u128>(p < 0 ? -p : p), sa.e + sb.e - 8};
  return rn_add(u, c, t, 24);
}

uint32_t sample_nvfp4(const uint8_t* a, const uint8_t* b, const uint32_t* sfa, const uint32_t* sfb, uint32_t c) {
  const Unit u = Unit::Nvfp4Pe64;
  Dy sa[4], sb[4];
  bool nan_a = false, nan_b = false;
  for (int g = 0; g < 4; ++g) {
    sa[g] = dy_of(fp4sim::kUE4M3, sfa[g] & 0xFFu);
    sb[g] = dy_of(fp4sim::kUE4M3, sfb[g] & 0xFFu);
    nan_a |= sa[g].nan;
    nan_b |= sb[g].nan;
  }
  if (const auto sp = special_first(u, nan_a, nan_b, c, true)) return *sp;
  // Group g: s4 = sum of (2a)(2b); value s4 * mA * mB * 2^(eA + eB - 8). Aligned at 2^-40.
  i128 acc = 0;
  bool all_neg_zero = true;  // the exact model gives -0 only if every product is -0 (and C is)
  for (int g = 0; g < 4; ++g) {
    int64_t s4 = 0;
    for (int k = 16 * g; k < 16 * g + 16; ++k) {
      const Dy ea = dy_of(fp4sim::kE2M1, a[k] & 15), eb = dy_of(fp4sim::kE2M1, b[k] & 15);
      s4 += q2(a[k]) * q2(b[k]);
      const bool zero = ea.m == 0 || eb.m == 0 || sa[g].m == 0 || sb[g].m == 0;
      if (!zero || ea.neg == (eb.neg != (sa[g].neg != sb[g].neg))) all_neg_zero = false;
    }
    const int64_t n = s4 * sa[g].m * sb[g].m;
    if (n != 0) acc += static_cast<i128>(n) << (sa[g].e + sb[g].e - 8 + 40);
  }
  Fx t{acc < 0, static_cast<u128>(acc < 0 ? -acc : acc), -40};
  if (acc == 0) t.neg = all_neg_zero;
  return rn_add(u, c, t, 49);
}

// ---- Blackwell units ---------------------------------------------------------------------------------

// One aligned contribution: v * 2^(e - off) with exponent e for max_e.
struct Contrib {
  int64_t v;
  int e;       // the exponent that takes part in max_e
  int lsb_e;   // exponent of v's unit
};

uint32_t bw_sum(Unit u, int frac, int64_t cm, int ce, const std::vector<Contrib>& terms, bool max_only_zero) {
  Collector& col = collector();
  int max_e = ce;
  for (const auto& x : terms) max_e = std::max(max_e, x.e);
  const int lsb = max_e - frac;
  if (cm == 0) {
    col.hit(u, "exp_distance.c_zero");
  } else {
    const int d = max_e - ce;
    if (d == 0) col.hit(u, "exp_distance.c_is_max");
    else if (d <= frac - 23) col.hit(u, "exp_distance.c_on_grid");
    else if (d <= frac) col.hit(u, "exp_distance.c_truncated");
    else col.hit(u, "exp_distance.c_below_window");
  }
  bool lost = false, dropped = false, any_nonzero = cm != 0;
  int max_lead = -100000;
  int64_t t = 0;
  auto add = [&](int64_t v, int s) {  // v * 2^s on the grid 2^lsb
    if (v == 0) return;
    any_nonzero = true;
    const int64_t x = fp4sim::shift_trunc(v, s - lsb);
    if (fp4sim::shift_trunc(x, lsb - s) != v || (s - lsb < 0 && x == 0)) lost = true;
    if (x == 0) {
      dropped = true;
      return;
    }
    max_lead = std::max(max_lead, lsb + 63 - std::countl_zero(static_cast<uint64_t>(x < 0 ? -x : x)));
    t += x;
  };
  add(cm, ce - 23);
  for (const auto& x : terms) add(x.v, x.lsb_e);
  col.hit(u, dropped ? "align.operand_dropped" : (lost ? "align.truncated" : "align.exact"));
  if (max_only_zero) col.hit(u, "align.max_set_by_zero_only");
  if (t == 0) {
    col.hit(u, any_nonzero && max_lead > -100000 ? "cancel.exact_zero" : "cancel.all_zero");
    col.hit(u, "result.zero");
    return 0u;
  }
  const uint64_t mag = static_cast<uint64_t>(t < 0 ? -t : t);
  const int lead = lsb + 63 - std::countl_zero(mag);
  const int depth = max_lead - lead;
  col.hit(u, depth < 0 ? std::string("cancel.carry") : std::string("cancel.") + depth_bin(depth));
  const int e_res = std::max(lead, -126);
  const int grid = e_res - 23;
  const bool trunc = grid > lsb && (mag & ((grid - lsb >= 64) ? ~0ull : ((1ull << (grid - lsb)) - 1))) != 0;
  const bool subn = lead < -126;
  const uint32_t r = fp4sim::from_trunc_sum(t, lsb);
  if ((r & 0x7FFFFFFFu) == 0) {
    col.hit(u, "round.underflow_to_zero");
    col.hit(u, "result.zero");
    return r;
  }
  col.hit(u, trunc ? (subn ? "round.subnormal_truncated" : "round.truncated") : "round.exact");
  if (fp4sim::is_inf_bits(r)) col.hit(u, r >> 31 ? "result.overflow_inf_neg" : "result.overflow_inf_pos");
  else col.hit(u, subn ? "result.subnormal" : "result.normal");
  return r;
}

uint32_t sample_bw_grouped(Unit u, const fp4sim::MmaConfig& cfg, const uint8_t* a, const uint8_t* b,
                           const uint32_t* sfa, const uint32_t* sfb, uint32_t c) {
  Collector& col = collector();
  const fp4sim::ElemFormat& sf = *cfg.scale;
  const int nsc = 64 / cfg.block, ng = 4;  // groups of 16
  Dy sa[4], sb[4];
  bool nan_a = false, nan_b = false, zero_scale = false;
  for (int i = 0; i < nsc; ++i) {
    sa[i] = dy_of(sf, sfa[i] & 0xFFu);
    sb[i] = dy_of(sf, sfb[i] & 0xFFu);
    nan_a |= sa[i].nan;
    nan_b |= sb[i].nan;
    zero_scale |= (!sa[i].nan && sa[i].m == 0) || (!sb[i].nan && sb[i].m == 0);
  }
  if (const auto sp = special_first(u, nan_a, nan_b, c, true)) return *sp;
  if (zero_scale && sf.name == fp4sim::kUE4M3.name) col.hit(u, "align.zero_scale");
  int64_t cm;
  int ce;
  fp4sim::split_c(c, cm, ce);
  std::vector<Contrib> terms;
  const int off = 2 + 2 * sf.mbits;
  int max_nonzero = cm != 0 ? ce : -100000, max_zero = -100000;
  for (int g = 0; g < ng; ++g) {
    const int si = g * 16 / cfg.block;
    int64_t s4 = 0;
    for (int k = 16 * g; k < 16 * g + 16; ++k) s4 += q2(a[k]) * q2(b[k]);
    const int e = sa[si].e + sb[si].e;
    const int64_t n = s4 * sa[si].m * sb[si].m;
    terms.push_back({n, e, e - off});
    (n != 0 ? max_nonzero : max_zero) = std::max(n != 0 ? max_nonzero : max_zero, e);
  }
  return bw_sum(u, cfg.kind->frac_bits, cm, ce, terms, max_zero > max_nonzero && max_nonzero > -100000);
}

uint32_t sample_k32(const fp4sim::MmaConfig& cfg, const uint8_t* a, const uint8_t* b, const uint32_t* sfa,
                    const uint32_t* sfb, uint32_t c) {
  Collector& col = collector();
  const Unit u = Unit::BsDotK32;
  col.hit(u, "format." + std::string(cfg.elem_a->name) + "_" + std::string(cfg.elem_b->name));
  const Dy sa = dy_of(fp4sim::kUE8M0, sfa[0] & 0xFFu), sb = dy_of(fp4sim::kUE8M0, sfb[0] & 0xFFu);
  if (const auto sp = special_first(u, sa.nan, sb.nan, c, false)) return *sp;
  const uint32_t ma = (1u << cfg.elem_a->bits) - 1u, mb = (1u << cfg.elem_b->bits) - 1u;
  Dy ea[32], eb[32];
  bool pinf = fp4sim::is_inf_bits(c) && !(c >> 31), ninf = fp4sim::is_inf_bits(c) && (c >> 31);
  for (int k = 0; k < 32; ++k) {
    ea[k] = dy_of(*cfg.elem_a, a[k] & ma);
    eb[k] = dy_of(*cfg.elem_b, b[k] & mb);
  }
  for (int k = 0; k < 32; ++k) {
    const Dy &x = ea[k], &y = eb[k];
    if (!x.inf && !x.nan && !y.inf && !y.nan) continue;
    if (x.nan || y.nan) {
      col.hit(u, "special.nan_elem");
      return fp4sim::kNaNBits;
    }
    if ((!x.inf && x.m == 0) || (!y.inf && y.m == 0)) {
      col.hit(u, "special.inf_times_zero");
      return fp4sim::kNaNBits;
    }
    ((x.neg != y.neg) ? ninf : pinf) = true;
  }
  if (pinf && ninf) {
    col.hit(u, "special.inf_plus_minus_inf");
    return fp4sim::kNaNBits;
  }
  if (pinf || ninf) {
    if (fp4sim::is_inf_bits(c)) col.hit(u, pinf ? "special.inf_c_pos" : "special.inf_c_neg");
    else col.hit(u, pinf ? "special.inf_pos" : "special.inf_neg");
    return pinf ? 0x7F800000u : 0xFF800000u;
  }
  col.hit(u, "special.finite");
  int64_t cm;
  int ce;
  fp4sim::split_c(c, cm, ce);
  const int es = sa.e + sb.e, off = cfg.elem_a->mbits + cfg.elem_b->mbits;
  std::vector<Contrib> terms;
  int max_nonzero = cm != 0 ? ce : -100000, max_zero = -100000;
  for (int k = 0; k < 32; ++k) {
    const int e = ea[k].e + eb[k].e + es;
    const int64_t p = ea[k].m * eb[k].m;
    terms.push_back({p, e, e - off});
    (p != 0 ? max_nonzero : max_zero) = std::max(p != 0 ? max_nonzero : max_zero, e);
  }
  return bw_sum(u, cfg.kind->frac_bits, cm, ce, terms, max_zero > max_nonzero && max_nonzero > -100000);
}

}  // namespace

void sample(Unit u, const fp4sim::MmaConfig& cfg, const uint8_t* a, const uint8_t* b, const uint32_t* sfa,
            const uint32_t* sfb, uint32_t c, uint32_t golden) {
  Collector& col = collector();
  const std::lock_guard<std::mutex> lock(col.mu());
  uint32_t mine;
  switch (u) {
    case Unit::Hif4Pe: mine = sample_hif4(a, b, sfa[0], sfb[0], c); break;
    case Unit::Nvfp4Pe64: mine = sample_nvfp4(a, b, sfa, sfb, c); break;
    case Unit::BsDotK32: mine = sample_k32(cfg, a, b, sfa, sfb, c); break;
    default: mine = sample_bw_grouped(u, cfg, a, b, sfa, sfb, c); break;
  }
  if (mine != golden) col.hit(u, "self_check.mismatch");
}

}  // namespace rtlcov
