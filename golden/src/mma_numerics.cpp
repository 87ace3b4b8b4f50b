// The parametric MMA model (mma.hpp's Numerics, docs/numerics.md "Numerics a designer can set"):
// presets, the "key=value" syntax, and the engine. The engine is written for clarity, not speed —
// every term is an exact integer times a power of two and every rounding is one explicit call — so
// that it can be read against the parameter list; the four named models keep their own (fast)
// code, and tests/golden/test_mma_numerics.cpp proves each preset gives their bits.
#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "fp4sim/exact.hpp"
#include "fp4sim/mma.hpp"
#include "mma_internal.hpp"

namespace fp4sim {

// ---------------------------------------------------------------------------------------------
// Presets and syntax

Numerics preset_numerics(const MmaConfig& cfg, Model m) {
  validate_mma_config(cfg, m == Model::Custom ? Model::Exact : m);
  const MmaKind& k = *cfg.kind;
  Numerics n;
  switch (m) {
    case Model::Exact:  // one exact sum of the whole K, one RN (IEEE zero sign)
      break;
    case Model::Fp32Seq:  // CUTLASS host loop: RN(element x scale), then one FMA per product
      n.dequant = Numerics::Dequant::Fp32;
      n.accumulate = Numerics::Accumulate::Fp32;
      break;
    case Model::Blackwell:  // MMA-Sim: exact groups, terms truncated below max_e - frac_bits, RZ
      n.k = k.k;
      n.frac_bits = k.frac_bits;
      // Grouped kinds sum 16 products exactly and align on the scales (the group's integer sum sits
      // above them); the fused kind aligns and truncates every product on its own exponent.
      n.group = k.group < k.k ? k.group : 1;
      n.align = k.group < k.k ? Numerics::Align::Scale : Numerics::Align::Product;
      n.out_round = Numerics::Round::Rz;
      n.signed_zero = Numerics::SignedZero::Plus;
      break;
    case Model::AscendHif4:  // exact 64-element groups, one FP32 RN per round_every groups
      n.group = k.group;
      n.accumulate = Numerics::Accumulate::Fp32;
      n.round_every = cfg.hif4_round_groups;
      break;
    case Model::Custom:
      return cfg.numerics;
  }
  return n;
}

namespace {

template <class E, size_t N>
struct Names {
  std::array<std::pair<std::string_view, E>, N> v;
  std::string_view name(E e) const {
    for (const auto& [s, x] : v)
      if (x == e) return s;
    return "?";
  }
  bool parse(std::string_view s, E& out) const {
    for (const auto& [t, x] : v)
      if (t == s) return out = x, true;
    return false;
  }
  std::string list() const {
    std::string r;
    for (const auto& [s, x] : v) r += (r.empty() ? "" : "|") + std::string(s);
    return r;
  }
};

using N = Numerics;
constexpr Names<N::Dequant, 2> kDequant{{{{"exact", N::Dequant::Exact}, {"fp32", N::Dequant::Fp32}}}};
constexpr Names<N::Products, 2> kProducts{{{{"exact", N::Products::Exact}, {"fp32", N::Products::Fp32}}}};
constexpr Names<N::Accumulate, 2> kAccumulate{{{{"window", N::Accumulate::Window}, {"fp32", N::Accumulate::Fp32}}}};
constexpr Names<N::Align, 2> kAlign{{{{"scale", N::Align::Scale}, {"product", N::Align::Product}}}};
constexpr Names<N::Round, 2> kRound{{{{"rz", N::Round::Rz}, {"rne", N::Round::Rne}}}};
constexpr Names<N::CPlace, 2> kCPlace{{{{"window", N::CPlace::Window}, {"after", N::CPlace::After}}}};
constexpr Names<N::SignedZero, 2> kSignedZero{{{{"ieee", N::SignedZero::Ieee}, {"plus", N::SignedZero::Plus}}}};
constexpr Names<bool, 2> kBool{{{{"no", false}, {"yes", true}}}};

constexpr const char* kKeys =
    "k, group, dequant, products, accumulate, frac_bits, align, term_round, out_round, c, round_every, "
    "flush_subnormals, signed_zero";

}  // namespace

std::string format_numerics(const Numerics& n) {
  std::string s = "k=" + std::to_string(n.k) + ",group=" + std::to_string(n.group);
  s += ",dequant=" + std::string(kDequant.name(n.dequant));
  s += ",products=" + std::string(kProducts.name(n.products));
  s += ",accumulate=" + std::string(kAccumulate.name(n.accumulate));
  s += ",frac_bits=" + std::to_string(n.frac_bits);
  s += ",align=" + std::string(kAlign.name(n.align));
  s += ",term_round=" + std::string(kRound.name(n.term_round));
  s += ",out_round=" + std::string(kRound.name(n.out_round));
  s += ",c=" + std::string(kCPlace.name(n.c));
  s += ",round_every=" + std::to_string(n.round_every);
  s += ",flush_subnormals=" + std::string(kBool.name(n.flush_subnormals));
  s += ",signed_zero=" + std::string(kSignedZero.name(n.signed_zero));
  return s;
}

void parse_numerics(std::string_view spec, Numerics& n) {
  Numerics r = n;  // n changes only if the whole spec parses
  while (!spec.empty()) {
    const size_t comma = spec.find(',');
    const std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw std::invalid_argument("numerics: '" + std::string(item) + "' is not key=value (keys: " + kKeys + ")");
    const std::string key(item.substr(0, eq));
    const std::string_view val = item.substr(eq + 1);
    auto bad = [&](const std::string& allowed) {
      return std::invalid_argument("numerics: " + key + "=" + std::string(val) + " (expected " + allowed + ")");
    };
    auto integer = [&](int lo, int hi) {
      int v = 0;
      size_t used = 0;
      try {
        v = std::stoi(std::string(val), &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (val.empty() || used != val.size() || v < lo || v > hi)
        throw bad("an integer " + std::to_string(lo) + ".." + std::to_string(hi));
      return v;
    };
    auto pick = [&](const auto& names, auto& field) {
      if (!names.parse(val, field)) throw bad(names.list());
    };
    if (key == "k") r.k = integer(0, 1 << 20);
    else if (key == "group") r.group = integer(1, 64);
    else if (key == "dequant") pick(kDequant, r.dequant);
    else if (key == "products") pick(kProducts, r.products);
    else if (key == "accumulate") pick(kAccumulate, r.accumulate);
    else if (key == "frac_bits") r.frac_bits = integer(0, 64);
    else if (key == "align") pick(kAlign, r.align);
    else if (key == "term_round") pick(kRound, r.term_round);
    else if (key == "out_round") pick(kRound, r.out_round);
    else if (key == "c") pick(kCPlace, r.c);
    else if (key == "round_every") r.round_every = integer(0, 1 << 20);
    else if (key == "flush_subnormals") pick(kBool, r.flush_subnormals);
    else if (key == "signed_zero") pick(kSignedZero, r.signed_zero);
    else throw std::invalid_argument("numerics: unknown key '" + key + "' (keys: " + kKeys + ")");
  }
  n = r;
}

// ---------------------------------------------------------------------------------------------
// The engine

namespace mma_detail {

void validate_numerics(const Numerics& n, int block) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("numerics: " + what); };
  if (n.group < 1 || n.group > 64) fail("group must be 1..64");
  // A group is summed before its scales apply, so it lies inside one scale block.
  if (block % n.group != 0) fail("group " + std::to_string(n.group) + " must divide the block " + std::to_string(block));
  if (n.k < 0 || (n.k > 0 && n.k % n.group != 0)) fail("k must be 0 or a multiple of the group");
  if (n.frac_bits < 0 || n.frac_bits > 64) fail("frac_bits must be 0 (unbounded) .. 64");
  if (n.round_every < 0) fail("round_every must be >= 0");
}

namespace {

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

int bitlen(u128 v) {
  const uint64_t hi = static_cast<uint64_t>(v >> 64), lo = static_cast<uint64_t>(v);
  return hi ? 128 - clz64(hi) : (lo ? 64 - clz64(lo) : 0);
}

// The widest fixed-point term: 64 fraction bits below the alignment exponent plus what a group can
// hold above it (align=scale: 64 E5M2 products of 2^31.6 times two scale significands, < 2^40).
// Window sums are checked for i128 overflow as they are formed.
constexpr int kMaxBits = 110;

[[noreturn]] void out_of_range() {
  // Unreachable for every format and parameter validate_numerics admits (docs/numerics.md gives
  // the bounds); a loud error, never a wrong bit.
  throw std::logic_error("numerics: an intermediate value left the engine's 110-bit range");
}

// An exact value (-1)^neg * mag * 2^e, or a special. zneg: the sign a zero value carries.
struct Val {
  u128 mag = 0;
  int e = 0;
  bool neg = false;
  uint8_t cls = kClassFinite;
};

// round(v * 2^-lsb) to an integer, toward zero (rz) or to nearest even.
i128 fix(const Val& v, int lsb, bool rne) {
  if (v.mag == 0) return 0;
  u128 q;
  if (v.e >= lsb) {
    if (bitlen(v.mag) + (v.e - lsb) > kMaxBits) out_of_range();
    q = v.mag << (v.e - lsb);
  } else {
    const int s = lsb - v.e;
    if (s >= 128) {
      q = 0;  // below half an ulp of the grid: the round bit is 0 too
    } else {
      q = v.mag >> s;
      const bool rbit = ((v.mag >> (s - 1)) & 1u) != 0;
      const bool sticky = s > 1 && (v.mag & ((u128{1} << (s - 1)) - 1u)) != 0;
      if (rne && rbit && (sticky || (q & 1u))) ++q;
    }
  }
  return v.neg ? -static_cast<i128>(q) : static_cast<i128>(q);
}

// (-1)^neg * mag * 2^e to FP32 bits (mag != 0), RN-even or toward zero.
uint32_t to_fp32(bool neg, u128 mag, int e, bool rn) {
  const int bl = bitlen(mag);
  if (bl <= 64) return round_to_fp32(neg, static_cast<uint64_t>(mag), e, false, rn);
  const int s = bl - 64;
  const bool sticky = (mag & ((u128{1} << s) - 1u)) != 0;
  return round_to_fp32(neg, static_cast<uint64_t>(mag >> s), e + s, sticky, rn);
}

Val of_fp32(uint32_t u) {
  Val v;
  v.neg = (u >> 31) != 0;
  if (is_nan_bits(u)) v.cls = kClassNaN;
  else if (is_inf_bits(u)) v.cls = kClassInf;
  else {
    const uint32_t ef = (u >> 23) & 0xFFu;
    v.mag = ef == 0 ? (u & 0x7FFFFFu) : ((u & 0x7FFFFFu) | 0x800000u);
    v.e = (ef == 0 ? -126 : static_cast<int>(ef) - 127) - 23;
  }
  return v;
}

Val of_double(double x) {  // x exact in a double (a product of two floats or of four factors)
  Val v;
  v.neg = std::signbit(x);
  if (std::isnan(x)) v.cls = kClassNaN;
  else if (std::isinf(x)) v.cls = kClassInf;
  else if (x != 0) {
    int e = 0;
    const double fr = std::frexp(std::fabs(x), &e);
    uint64_t m = static_cast<uint64_t>(std::ldexp(fr, 53));
    const int tz = __builtin_ctzll(m);  // only the significant bits: group sums stay narrow
    v.mag = m >> tz;
    v.e = e - 53 + tz;
  }
  return v;
}

bool is_subnormal_bits(uint32_t u) { return (u & 0x7F800000u) == 0 && (u & 0x7FFFFFu) != 0; }

uint32_t flush(const Numerics& n, uint32_t u) {
  return n.flush_subnormals && is_subnormal_bits(u) ? (u & 0x80000000u) : u;
}

// An exactly zero sum: IEEE (-0 only if every addend is -0) or always +0.
uint32_t zero_of(const Numerics& n, bool all_neg_zero) {
  return n.signed_zero == Numerics::SignedZero::Ieee && all_neg_zero ? 0x80000000u : 0u;
}

// One term: a group's exact sum, its alignment exponent, and whether it is a -0 (a group of one
// product keeps the product's IEEE sign; a larger group is an integer adder tree).
struct Term {
  Val v;
  int align_e;
  bool neg_zero;
};

struct Engine {
  const Ctx& c;
  const Numerics& n;
  const Dy* ea;
  const Dy* eb;
  const float* da;  // dequant = fp32 only
  const float* db;
  const Dy* sa;
  const Dy* sb;
  int off;

  // Product k: exact (four decoded factors, < 2^16 significand, exact in a double) or from the
  // FP32-dequantized operands (a product of two floats, exact in a double); then RN to FP32 if asked.
  Val product(size_t k, int& align_e) const {
    const size_t bi = k / static_cast<size_t>(c.block);
    const Dy &a = ea[k], &b = eb[k], &s = sa[bi], &t = sb[bi];
    align_e = a.e + b.e + s.e + t.e;  // exponent fields added, as the hardware's exponent adder does
    double p;
    if (n.dequant == Numerics::Dequant::Fp32) {
      const float fa = std::bit_cast<float>(flush(n, std::bit_cast<uint32_t>(da[k])));
      const float fb = std::bit_cast<float>(flush(n, std::bit_cast<uint32_t>(db[k])));
      p = static_cast<double>(fa) * static_cast<double>(fb);
    } else {
      Val v;
      v.neg = (a.neg ^ b.neg ^ s.neg ^ t.neg) != 0;
      const Dy* f[4] = {&a, &b, &s, &t};
      bool inf = false, zero = false;
      for (const Dy* x : f) {
        if (x->cls == kClassNaN) return v.cls = kClassNaN, v;
        inf = inf || x->cls == kClassInf;
        zero = zero || (x->cls == kClassFinite && x->m == 0);
      }
      if (inf) return v.cls = zero ? kClassNaN : kClassInf, v;
      if (zero) return v;
      const int64_t m = static_cast<int64_t>(a.m) * b.m * s.m * t.m;
      v.mag = static_cast<uint64_t>(m < 0 ? -m : m);
      v.e = a.e + b.e + s.e + t.e - off;
      if (n.products == Numerics::Products::Exact) return v;
      p = std::ldexp(static_cast<double>(m), v.e);  // exact: |m| < 2^16, e within +-300
    }
    if (n.products == Numerics::Products::Fp32) {
      const float r = static_cast<float>(p);  // one RN (p is exact)
      return of_double(std::bit_cast<float>(flush(n, std::bit_cast<uint32_t>(r))));
    }
    return of_double(p);
  }

  // The exact sum of products [k0, k0 + group).
  Term group_term(size_t k0) const {
    Val ps[64];
    int align_e = -100000;
    int emin = 1 << 30;
    bool any = false, all_neg_zero = true;
    for (int i = 0; i < n.group; ++i) {
      int ae;
      ps[i] = product(k0 + static_cast<size_t>(i), ae);
      // A term aligns on its block's scales, or on its largest product (zeros included, as MMA-Sim
      // counts them: a zero element has the exponent -126).
      align_e = std::max(align_e, n.align == Numerics::Align::Scale ? sa[k0 / c.block].e + sb[k0 / c.block].e : ae);
      if (ps[i].cls != kClassFinite) return {ps[i], align_e, false};
      all_neg_zero = all_neg_zero && ps[i].mag == 0 && ps[i].neg;
      if (ps[i].mag != 0) any = true, emin = std::min(emin, ps[i].e);
    }
    Term t{Val{}, align_e, n.group == 1 && all_neg_zero};
    if (n.group == 1) {
      t.v = ps[0];
      return t;
    }
    if (!any) return t;
    i128 s = 0;
    for (int i = 0; i < n.group; ++i) {
      if (ps[i].mag == 0) continue;
      if (bitlen(ps[i].mag) + (ps[i].e - emin) > kMaxBits) out_of_range();
      const i128 m = static_cast<i128>(ps[i].mag << (ps[i].e - emin));
      s += ps[i].neg ? -m : m;  // at most 64 terms below 2^110: no overflow
    }
    t.v.neg = s < 0;
    t.v.mag = static_cast<u128>(s < 0 ? -s : s);
    t.v.e = emin;
    return t;
  }

  // IEEE specials of a sum: NaN if an addend is NaN or +Inf meets -Inf, else +-Inf if one is.
  struct Specials {
    bool nan = false, pinf = false, ninf = false;
    void add(const Val& v) {
      nan = nan || v.cls == kClassNaN;
      if (v.cls == kClassInf) (v.neg ? ninf : pinf) = true;
    }
    bool any(uint32_t& out) const {
      if (nan || (pinf && ninf)) return out = kNaNBits, true;
      if (pinf || ninf) return out = pinf ? 0x7F800000u : 0xFF800000u, true;
      return false;
    }
  };

  static void add_exact(ExactDotSum& s, const Val& v) {
    u128 m = v.mag;
    for (int e = v.e; m != 0; m >>= 32, e += 32) {  // 32-bit digits: ExactDotSum's add
      if (e < ExactDotSum::kLsb || e + 32 > ExactDotSum::kLsb + 32 * ExactDotSum::kDigits) out_of_range();
      const int64_t d = static_cast<int64_t>(static_cast<uint64_t>(m) & 0xFFFFFFFFu);
      s.add(v.neg ? -d : d, e);
    }
  }

  // acc + the sum of terms, exactly, then one RN to FP32 (IEEE specials and zero sign).
  uint32_t add_rn(uint32_t acc, const Term* t, size_t nt) const {
    Specials sp;
    sp.add(of_fp32(acc));
    for (size_t i = 0; i < nt; ++i) sp.add(t[i].v);
    uint32_t out;
    if (sp.any(out)) return out;
    ExactDotSum s;
    s.clear();
    bool all_neg_zero = acc == 0x80000000u;
    add_exact(s, of_fp32(acc));
    for (size_t i = 0; i < nt; ++i) {
      all_neg_zero = all_neg_zero && t[i].v.mag == 0 && t[i].neg_zero;
      add_exact(s, t[i].v);
    }
    if (s.sign() == 0) return zero_of(n, all_neg_zero);
    return flush(n, s.round_fp32(true));
  }

  // One instruction over products [k0, k0 + kk) from C.
  uint32_t instruction(size_t k0, size_t kk, uint32_t cbits) const {
    cbits = flush(n, cbits);
    const size_t nt = kk / static_cast<size_t>(n.group);
    std::vector<Term> terms(nt);
    for (size_t g = 0; g < nt; ++g) terms[g] = group_term(k0 + g * static_cast<size_t>(n.group));
    if (n.accumulate == Numerics::Accumulate::Fp32) {
      const size_t every = n.round_every == 0 ? nt : static_cast<size_t>(n.round_every);
      uint32_t acc = cbits;
      for (size_t g = 0; g < nt; g += every) acc = add_rn(acc, terms.data() + g, std::min(every, nt - g));
      return acc;
    }
    // Window: IEEE specials first, over every term and C.
    Specials sp;
    for (const Term& t : terms) sp.add(t.v);
    sp.add(of_fp32(cbits));
    if (uint32_t out; sp.any(out)) return out;
    const bool c_in = n.c == Numerics::CPlace::Window;
    bool all_neg_zero = !c_in || cbits == 0x80000000u;
    for (const Term& t : terms) all_neg_zero = all_neg_zero && t.v.mag == 0 && t.neg_zero;
    const bool out_rn = n.out_round == Numerics::Round::Rne;
    uint32_t d;
    if (n.frac_bits == 0) {  // unbounded window: the exact sum, one rounding
      ExactDotSum s;
      s.clear();
      for (const Term& t : terms) add_exact(s, t.v);
      if (c_in) add_exact(s, of_fp32(cbits));
      d = s.sign() == 0 ? zero_of(n, all_neg_zero) : s.round_fp32(out_rn);
    } else {
      int max_e = -100000;
      for (const Term& t : terms) max_e = std::max(max_e, t.align_e);
      int ec = -126;  // C's exponent as MMA-Sim extracts it (subnormals and zero at -126)
      if ((cbits & 0x7F800000u) != 0) ec = static_cast<int>((cbits >> 23) & 0xFFu) - 127;
      if (c_in) max_e = std::max(max_e, ec);
      const int lsb = max_e - n.frac_bits;
      const bool term_rn = n.term_round == Numerics::Round::Rne;
      i128 sum = 0;
      auto add = [&](i128 q) {
        if (__builtin_add_overflow(sum, q, &sum)) out_of_range();
      };
      for (const Term& t : terms) add(fix(t.v, lsb, term_rn));
      if (c_in) add(fix(of_fp32(cbits), lsb, term_rn));
      d = sum == 0 ? zero_of(n, all_neg_zero)
                   : to_fp32(sum < 0, static_cast<u128>(sum < 0 ? -sum : sum), lsb, out_rn);
    }
    d = flush(n, d);
    if (!c_in) {  // D = RN(C + the converted window sum)
      const Term t{of_fp32(d), 0, d == 0x80000000u};
      d = add_rn(cbits, &t, 1);
    }
    return d;
  }
};

}  // namespace

uint32_t dot_custom(const Ctx& c, const Dy* ea, const Dy* eb, const float* da, const float* db, const Dy* sa,
                    const Dy* sb, size_t K, uint32_t cbits) {
  const Numerics& n = c.numerics;
  const Engine eng{c, n, ea, eb, da, db, sa, sb, c.mb_a + c.mb_b + 2 * c.mb_s};
  const size_t step = n.k == 0 ? K : static_cast<size_t>(n.k);
  for (size_t k0 = 0; k0 < K; k0 += step) {
    cbits = eng.instruction(k0, step, cbits);
    if (is_nan_bits(cbits)) cbits = kNaNBits;
  }
  return cbits;
}

}  // namespace mma_detail
}  // namespace fp4sim
