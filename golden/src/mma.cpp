// MMA numerics models (SPEC §4): kinds table, operand decoding, the four models, GEMM driver.
// Sources and every rounding point are documented in docs/numerics.md.
#include "fp4sim/mma.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>

#include "fp4sim/mma_core.hpp"
#include "fp4sim/quant.hpp"
#include "mma_internal.hpp"

namespace fp4sim {

// ---------------------------------------------------------------------------------------------
// Names and the kinds table

std::string_view model_name(Model m) {
  switch (m) {
    case Model::Exact: return "exact";
    case Model::Fp32Seq: return "fp32-seq";
    case Model::Blackwell: return "blackwell";
    case Model::AscendHif4: return "ascend-hif4";
    case Model::Custom: return "custom";
  }
  return "?";
}

bool parse_model(std::string_view s, Model& out) {
  for (Model m : {Model::Exact, Model::Fp32Seq, Model::Blackwell, Model::AscendHif4}) {
    if (s == model_name(m)) {
      out = m;
      return true;
    }
  }
  return false;
}

namespace {

constexpr std::array<MmaKind, 4> kKinds{{
    // PTX kind::mxf4: E2M1 x E2M1, UE8M0 per 32, K = 64; four exact 16-product groups, 35 bits.
    {MmaKindId::Mxf4, "mxf4", 64, 16, 35, {&kE2M1}, {&kUE8M0}, {32, 0}, false, Model::Blackwell},
    // kind::mxf4nvf4: as mxf4, scales UE4M3 (NVFP4) or UE8M0, per 16 or 32 (MMA-Sim takes all four).
    {MmaKindId::Mxf4Nvf4, "mxf4nvf4", 64, 16, 35, {&kE2M1}, {&kUE4M3, &kUE8M0}, {16, 32}, false,
     Model::Blackwell},
    // kind::mxf8f6f4: A and B formats independent, UE8M0 per 32, K = 32; one fused sum, 25 bits.
    {MmaKindId::Mxf8f6f4, "mxf8f6f4", 32, 32, 25, {&kE4M3, &kE5M2, &kE2M3, &kE3M2, &kE2M1},
     {&kUE8M0}, {32, 0}, false, Model::Blackwell},
    // HiF4: S1P2 elements, one 32-bit scale word (E6M2 + level bits) per 64; group = block = K.
    {MmaKindId::Hif4, "hif4", 64, 64, 0, {&kS1P2}, {&kE6M2}, {64, 0}, true, Model::AscendHif4},
}};

bool same_format(const ElemFormat* a, const ElemFormat* b) { return a && b && a->name == b->name; }

template <size_t N>
bool in_list(const ElemFormat* f, const std::array<const ElemFormat*, N>& list) {
  return std::any_of(list.begin(), list.end(), [&](const ElemFormat* x) { return same_format(f, x); });
}

}  // namespace

const MmaKind& mma_kind(MmaKindId id) {
  for (const auto& k : kKinds) {
    if (k.id == id) return k;
  }
  throw std::invalid_argument("unknown MMA kind");
}

std::span<const MmaKind> all_mma_kinds() { return kKinds; }

bool parse_mma_kind(std::string_view name, MmaKindId& out) {
  for (const auto& k : kKinds) {
    if (k.name == name) {
      out = k.id;
      return true;
    }
  }
  return false;
}

void validate_mma_config(const MmaConfig& cfg, Model model) {
  auto fail = [&](const char* what) {
    throw std::invalid_argument(std::string("mma config: ") + what +
                                (cfg.kind ? " (kind " + std::string(cfg.kind->name) + ")" : std::string()));
  };
  if (!cfg.kind) fail("no kind");
  const MmaKind& k = *cfg.kind;
  // Table sanity: mma_dot decodes into 64-entry stack arrays, Blackwell keeps up to 8 group terms.
  if (k.k <= 0 || k.k > 64 || k.group <= 0 || k.k % k.group != 0 || k.k / k.group > 8) {
    fail("kind table row out of the supported shape");
  }
  if (!in_list(cfg.elem_a, k.elems)) fail("element format of A not allowed");
  if (!in_list(cfg.elem_b, k.elems)) fail("element format of B not allowed");
  if (!in_list(cfg.scale, k.scales)) fail("scale format not allowed");
  if (cfg.block <= 0 || std::find(k.blocks.begin(), k.blocks.end(), cfg.block) == k.blocks.end() ||
      k.k % cfg.block != 0) {
    fail("block size not allowed");
  }
  if (cfg.hif4_round_groups < 0) fail("hif4_round_groups must be >= 0");
  if (model == Model::Blackwell && k.hardware_model != Model::Blackwell) fail("the blackwell model does not run this kind");
  if (model == Model::AscendHif4 && k.id != MmaKindId::Hif4) fail("ascend-hif4 runs only kind hif4");
  if (model == Model::Custom) mma_detail::validate_numerics(cfg.numerics, cfg.block);
}

MmaConfig make_mma_config(MmaKindId kind, const ElemFormat* elem_a, const ElemFormat* elem_b,
                          const ElemFormat* scale, int block) {
  const MmaKind& k = mma_kind(kind);
  MmaConfig cfg;
  cfg.kind = &k;
  cfg.elem_a = elem_a ? elem_a : k.elems[0];
  cfg.elem_b = elem_b ? elem_b : k.elems[0];
  cfg.scale = scale ? scale : k.scales[0];
  cfg.block = block ? block : k.blocks[0];
  cfg.model = k.hardware_model;
  validate_mma_config(cfg, cfg.model);
  return cfg;
}

// ---------------------------------------------------------------------------------------------
// Decoding: every element and scale code as a dyadic m * 2^(e - mbits)

namespace mma_detail {

namespace {

Dy dy_of(const ElemFormat& f, uint32_t code) {
  const double v = decode(f, code);
  Dy d;
  if (std::isnan(v)) {
    d.cls = kClassNaN;
    return d;
  }
  d.neg = std::signbit(v) ? 1 : 0;
  if (std::isinf(v)) {
    d.cls = kClassInf;
    return d;
  }
  if (v == 0.0) return d;
  const int e = std::max(std::ilogb(v), f.emin());
  const double m = std::ldexp(std::fabs(v), f.mbits - e);  // an integer < 2^(mbits+1)
  d.m = static_cast<int32_t>(m) * (d.neg ? -1 : 1);
  d.e = static_cast<int16_t>(e);
  return d;
}

struct DyTable {
  std::string_view name;
  std::array<Dy, 256> t;
};

}  // namespace

// One table per format of the kinds table, built once (thread-safe static init).
const std::array<Dy, 256>& dy_table(const ElemFormat& f) {
  static const std::vector<DyTable> tables = [] {
    std::vector<DyTable> v;
    for (const ElemFormat* g : {&kE2M1, &kE2M3, &kE3M2, &kE4M3, &kE5M2, &kUE4M3, &kUE8M0, &kE6M2, &kS1P2}) {
      DyTable t;
      t.name = g->name;
      const uint32_t n = g->bits >= 8 ? 256u : (1u << g->bits);
      for (uint32_t c = 0; c < 256; ++c) t.t[c] = dy_of(*g, c % n);
      v.push_back(t);
    }
    return v;
  }();
  for (const auto& t : tables) {
    if (t.name == f.name) return t.t;
  }
  throw std::invalid_argument("mma: no decode table for format " + std::string(f.name));
}

namespace {

enum : uint8_t { kFinite = kClassFinite, kInf = kClassInf, kNaN = kClassNaN };  // exact.hpp's classes

// Blackwell grouped kinds read 2 * E2M1 from the float table.
bool needs_q_model(const Ctx& c) { return c.model == Model::Blackwell && c.group < c.k; }

}  // namespace

// Fp32Seq and Custom with dequant = fp32 read the elements dequantized to FP32.
bool needs_deq(const Ctx& c) {
  return c.model == Model::Fp32Seq || (c.model == Model::Custom && c.numerics.dequant == Numerics::Dequant::Fp32);
}

Ctx make_ctx(const MmaConfig& cfg, Model model) {
  validate_mma_config(cfg, model);
  Ctx c{};
  c.kind = cfg.kind;
  c.model = model;
  c.block = cfg.block;
  c.k = cfg.kind->k;
  c.group = cfg.kind->group;
  c.frac_bits = cfg.kind->frac_bits;
  c.mb_a = cfg.elem_a->mbits;
  c.mb_b = cfg.elem_b->mbits;
  c.mb_s = cfg.scale->mbits;
  c.mask_a = static_cast<uint8_t>(cfg.elem_a->bits >= 8 ? 0xFFu : (1u << cfg.elem_a->bits) - 1u);
  c.mask_b = static_cast<uint8_t>(cfg.elem_b->bits >= 8 ? 0xFFu : (1u << cfg.elem_b->bits) - 1u);
  c.hif4 = cfg.kind->scale_word32;
  c.hif4_round_groups = cfg.hif4_round_groups;
  c.numerics = cfg.numerics;
  c.dy_a = &dy_table(*cfg.elem_a);
  c.dy_b = &dy_table(*cfg.elem_b);
  c.dy_s = &dy_table(*cfg.scale);
  if (needs_deq(c) || needs_q_model(c)) {  // float tables: a lock and a map lookup
    c.f_a = &decode_table(*cfg.elem_a);
    c.f_b = &decode_table(*cfg.elem_b);
    c.f_s = &decode_table(*cfg.scale);
  }
  return c;
}

namespace {

// What each model reads (the rest stays empty):
//   q   Blackwell grouped kinds: 2 * E2M1 value (an integer in [-12, 12]);
//       AscendHif4: +-c << levels (an integer in [-28, 28]; element value = q / 4).
//   el  Exact, Blackwell fused kinds: element as Dy (HiF4: m = +-c, e = levels, mbits 2).
//   deq Fp32Seq: element * scale in FP32 (RN).
//   sc  every model but Fp32Seq: one Dy per block (HiF4: the E6M2 byte of the word).
struct RowView {
  const int8_t* q = nullptr;
  const Dy* el = nullptr;
  const float* deq = nullptr;
  const Dy* sc = nullptr;
};

bool needs_q(const Ctx& c) {
  return c.model == Model::AscendHif4 || (c.model == Model::Blackwell && c.group < c.k);
}
bool needs_el(const Ctx& c) {
  return c.model == Model::Exact || c.model == Model::Custom || (c.model == Model::Blackwell && c.group >= c.k);
}

// Decodes `rows` rows of K codes (and K/block scales each) into the arrays the model needs.
void decode_rows(const Ctx& c, bool is_a, const uint8_t* codes, const uint32_t* scales, size_t rows,
                 size_t K, int8_t* q, Dy* el, float* deq, Dy* sc) {
  const auto& dy = is_a ? *c.dy_a : *c.dy_b;
  const DecodeTable* ft = is_a ? c.f_a : c.f_b;  // null unless the model reads floats
  const uint8_t mask = is_a ? c.mask_a : c.mask_b;
  const size_t nblk = K / static_cast<size_t>(c.block);
  const bool want_q = needs_q(c), want_el = needs_el(c), want_deq = needs_deq(c);
  for (size_t r = 0; r < rows; ++r) {
    const uint8_t* cr = codes + r * K;
    const uint32_t* srow = scales + r * nblk;
    if (sc) {
      for (size_t b = 0; b < nblk; ++b) sc[r * nblk + b] = (*c.dy_s)[srow[b] & 0xFFu];
    }
    const size_t blk = static_cast<size_t>(c.block);
    if (!c.hif4) {  // one loop per array (no per-element branching or division: mma_dot's cost)
      if (want_q)
        for (size_t k = 0; k < K; ++k) q[r * K + k] = static_cast<int8_t>(ft->v[cr[k] & mask] * 2.0f);  // E2M1 * 2 is an integer
      if (want_el)
        for (size_t k = 0; k < K; ++k) el[r * K + k] = dy[cr[k] & mask];
      if (want_deq) {
        for (size_t b = 0; b < nblk; ++b) {
          const float sv = c.f_s->v[srow[b] & 0xFFu];
          for (size_t k = b * blk; k < (b + 1) * blk; ++k) deq[r * K + k] = ft->v[cr[k] & mask] * sv;
        }
      }
      continue;
    }
    for (size_t b = 0; b < nblk; ++b) {
      const uint32_t sword = srow[b];
      for (size_t kk = 0; kk < blk; ++kk) {
        const size_t k = b * blk + kk;
        const uint8_t code = cr[k] & mask;
        const size_t o = r * K + k;
        // S1P2: sign bit 3, magnitude c = bits 2:0, value (+-c/4) * 2^level (SPEC §1, §2.3).
        const int cm = code & 7;
        const bool ng = (code & 8) != 0;
        const int lv = hif4_level(sword, static_cast<int>(kk));
        if (want_q) q[o] = static_cast<int8_t>((ng ? -cm : cm) << lv);
        if (want_el) {
          Dy d;
          d.neg = ng ? 1 : 0;
          if (cm != 0) {
            d.m = ng ? -cm : cm;
            d.e = static_cast<int16_t>(lv);
          }
          el[o] = d;
        }
        if (want_deq) {
          // copysign keeps the sign of a -0 element (an integer -0 would lose it)
          const float ev = std::copysign(std::ldexp(static_cast<float>(cm), lv - 2), ng ? -1.0f : 1.0f);
          deq[o] = ev * c.f_s->v[sword & 0xFFu];
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Blackwell (MMA-Sim nv_fused_dot_add_with_block_scale / nv_fused_dot_add)

// The instruction steps are mma_core.hpp's bw_grouped_step / bw_fused_step (shared with the kernels).

inline int32_t dot16(const int8_t* a, const int8_t* b) {
  int32_t s = 0;
  for (int i = 0; i < 16; ++i) s += static_cast<int32_t>(a[i]) * static_cast<int32_t>(b[i]);
  return s;
}

inline int32_t dot_n(const int8_t* a, const int8_t* b, int n) {
  int32_t s = 0;
  for (int i = 0; i < n; ++i) s += static_cast<int32_t>(a[i]) * static_cast<int32_t>(b[i]);
  return s;
}

uint32_t dot_blackwell(const Ctx& c, const RowView& a, const RowView& b, size_t K, uint32_t cbits) {
  const size_t ninstr = K / static_cast<size_t>(c.k);
  const size_t spi = static_cast<size_t>(c.k / c.block);  // scales per instruction
  for (size_t t = 0; t < ninstr; ++t) {
    const size_t k0 = t * static_cast<size_t>(c.k);
    if (c.group < c.k) {
      std::array<int32_t, 8> s4{};
      const int ng = c.k / c.group;
      for (int g = 0; g < ng; ++g) {
        const size_t o = k0 + static_cast<size_t>(g * c.group);
        s4[g] = c.group == 16 ? dot16(a.q + o, b.q + o) : dot_n(a.q + o, b.q + o, c.group);
      }
      cbits = bw_grouped_step(c, s4.data(), a.sc + t * spi, b.sc + t * spi, cbits);
    } else {
      cbits = bw_fused_step(c, a.el + k0, b.el + k0, a.sc[t * spi], b.sc[t * spi], cbits);
    }
  }
  return cbits;
}

// ---------------------------------------------------------------------------------------------
// Ascend HiF4 (fp4sim's documented model)

uint32_t dot_ascend_hif4(const Ctx& c, const RowView& a, const RowView& b, size_t K, uint32_t cbits) {
  const size_t ng = K / static_cast<size_t>(c.group);
  for (size_t g = 0; g < ng; ++g) {
    if (a.sc[g].cls == kNaN || b.sc[g].cls == kNaN) return kNaNBits;
  }
  if (is_nan_bits(cbits)) return kNaNBits;
  // Group term: S = sum(q_a * q_b) (|S| <= 64 * 28 * 28 < 2^16) times the two E6M2 significands
  // (4 + M each): P < 2^22, so P * 2^(eA + eB - 8) is exactly an FP32 normal (eA + eB - 8 >= -104).
  auto term = [&](size_t g, int64_t& p, int& e) {
    const size_t o = g * static_cast<size_t>(c.group);
    const int32_t s = dot_n(a.q + o, b.q + o, c.group);
    p = static_cast<int64_t>(s) * a.sc[g].m * b.sc[g].m;
    e = a.sc[g].e + b.sc[g].e - 8;  // q = 4 * element, significand = (4 + M) / 4: 2 + 2 + 2 + 2
  };
  float acc = std::bit_cast<float>(cbits);
  const size_t G = c.hif4_round_groups == 0 ? ng : static_cast<size_t>(c.hif4_round_groups);
  if (G == 1) {
    for (size_t g = 0; g < ng; ++g) {
      int64_t p;
      int e;
      term(g, p, e);
      acc = acc + std::ldexp(static_cast<float>(p), e);  // the one RN of this group
    }
  } else if (ng > 0) {
    ExactAccumulator ex;
    for (size_t g0 = 0; g0 < ng; g0 += G) {
      if (!std::isfinite(acc)) break;  // +-Inf + finite terms stays +-Inf
      ex.clear();
      ex.add_float(acc);
      for (size_t g = g0; g < std::min(ng, g0 + G); ++g) {
        int64_t p;
        int e;
        term(g, p, e);
        ex.add(p, e);
      }
      // An exactly zero sum is +0, as the float path gives (group terms are +0 when zero).
      acc = std::bit_cast<float>(ex.round_fp32(true));
    }
  }
  return std::bit_cast<uint32_t>(acc);
}

// ---------------------------------------------------------------------------------------------
// Exact and Fp32Seq

uint32_t dot_exact(const Ctx& c, const RowView& a, const RowView& b, size_t K, uint32_t cbits) {
  if (is_nan_bits(cbits)) return kNaNBits;
  ExactDot<ExactAccumulator> dot;  // exact.hpp: the same code as the kernels' exact model
  dot.start(cbits);
  const int off = c.mb_a + c.mb_b + 2 * c.mb_s;
  for (size_t k = 0; k < K && !dot.nan; ++k) {
    const size_t bi = k / static_cast<size_t>(c.block);
    dot.term(a.el[k], b.el[k], a.sc[bi], b.sc[bi], off);
  }
  return dot.finish(cbits);
}

uint32_t dot_fp32seq(const RowView& a, const RowView& b, size_t K, uint32_t cbits) {
  float acc = std::bit_cast<float>(cbits);
  for (size_t k = 0; k < K; ++k) acc = std::fma(a.deq[k], b.deq[k], acc);
  return std::bit_cast<uint32_t>(acc);
}

uint32_t dot_any(const Ctx& c, const RowView& a, const RowView& b, size_t K, uint32_t cbits) {
  uint32_t r = 0;
  switch (c.model) {
    case Model::Exact: r = dot_exact(c, a, b, K, cbits); break;
    case Model::Fp32Seq: r = dot_fp32seq(a, b, K, cbits); break;
    case Model::Blackwell: r = dot_blackwell(c, a, b, K, cbits); break;
    case Model::AscendHif4: r = dot_ascend_hif4(c, a, b, K, cbits); break;
    case Model::Custom: r = dot_custom(c, a.el, b.el, a.deq, b.deq, a.sc, b.sc, K, cbits); break;
  }
  return is_nan_bits(r) ? kNaNBits : r;
}

}  // namespace

uint32_t generic_dot(const Ctx& c, const uint8_t* a, const uint32_t* sa, const uint8_t* b,
                     const uint32_t* sb, size_t K, uint32_t cbits) {
  const size_t nblk = K / static_cast<size_t>(c.block);
  std::vector<int8_t> qa, qb;
  std::vector<Dy> ea, eb, sca(nblk), scb(nblk);
  std::vector<float> da, db;
  if (needs_q(c)) qa.resize(K), qb.resize(K);
  if (needs_el(c)) ea.resize(K), eb.resize(K);
  if (needs_deq(c)) da.resize(K), db.resize(K);
  decode_rows(c, true, a, sa, 1, K, qa.data(), ea.data(), da.data(), sca.data());
  decode_rows(c, false, b, sb, 1, K, qb.data(), eb.data(), db.data(), scb.data());
  const RowView va{qa.data(), ea.data(), da.data(), sca.data()};
  const RowView vb{qb.data(), eb.data(), db.data(), scb.data()};
  return dot_any(c, va, vb, K, cbits);
}

}  // namespace mma_detail

using mma_detail::Ctx;
using mma_detail::Dy;

// ---------------------------------------------------------------------------------------------
// Public entry points

uint32_t mma_dot(const MmaConfig& cfg, const uint8_t* a_codes, const uint8_t* b_codes,
                 const uint32_t* sfa, const uint32_t* sfb, uint32_t c_bits) {
  const Ctx c = mma_detail::make_ctx(cfg, cfg.model);
  const size_t K = static_cast<size_t>(c.k);
  if (c.model == Model::Custom && c.numerics.k > 0 && c.k % c.numerics.k != 0)
    throw std::invalid_argument("numerics: k=" + std::to_string(c.numerics.k) + " does not divide the kind's K " +
                                std::to_string(c.k));
  // Only what the model reads is written (and read): no zero fill of the plain arrays.
  std::array<int8_t, 64> qa, qb;
  std::array<Dy, 64> ea, eb;
  std::array<float, 64> da, db;
  std::array<Dy, 64> sa, sb;
  mma_detail::decode_rows(c, true, a_codes, sfa, 1, K, qa.data(), ea.data(), da.data(), sa.data());
  mma_detail::decode_rows(c, false, b_codes, sfb, 1, K, qb.data(), eb.data(), db.data(), sb.data());
  const mma_detail::RowView va{qa.data(), ea.data(), da.data(), sa.data()};
  const mma_detail::RowView vb{qb.data(), eb.data(), db.data(), sb.data()};
  return mma_detail::dot_any(c, va, vb, K, c_bits);
}

namespace {

using mma_detail::RowView;

struct Decoded {
  std::vector<int8_t> q;
  std::vector<Dy> el;
  std::vector<float> deq;
  std::vector<Dy> sc;
  size_t K = 0, nblk = 0;
  RowView row(size_t r) const {
    RowView v;
    if (!q.empty()) v.q = q.data() + r * K;
    if (!el.empty()) v.el = el.data() + r * K;
    if (!deq.empty()) v.deq = deq.data() + r * K;
    if (!sc.empty()) v.sc = sc.data() + r * nblk;
    return v;
  }
};

Decoded decode_operand(const Ctx& c, bool is_a, const uint8_t* codes, const uint32_t* scales,
                       size_t rows, size_t K) {
  Decoded d;
  d.K = K;
  d.nblk = K / static_cast<size_t>(c.block);
  if (mma_detail::needs_q(c)) d.q.resize(rows * K);
  if (mma_detail::needs_el(c)) d.el.resize(rows * K);
  if (mma_detail::needs_deq(c)) d.deq.resize(rows * K);
  if (c.model != Model::Fp32Seq) d.sc.resize(rows * d.nblk);
  mma_detail::decode_rows(c, is_a, codes, scales, rows, K, d.q.empty() ? nullptr : d.q.data(),
                          d.el.empty() ? nullptr : d.el.data(), d.deq.empty() ? nullptr : d.deq.data(),
                          d.sc.empty() ? nullptr : d.sc.data());
  return d;
}

// Validates the GEMM shape (throws std::invalid_argument) and returns the context.
Ctx gemm_ctx(const MmaConfig& cfg, Model model, size_t M, size_t N, size_t K, size_t na, size_t nsa,
             size_t nb, size_t nsb, size_t nc) {
  const Ctx ctx = mma_detail::make_ctx(cfg, model);
  size_t step = (model == Model::Blackwell || model == Model::AscendHif4) ? static_cast<size_t>(ctx.k)
                                                                          : static_cast<size_t>(ctx.block);
  if (model == Model::Custom && ctx.numerics.k > 0) step = std::lcm(step, static_cast<size_t>(ctx.numerics.k));
  if (K == 0 || K % step != 0) {
    throw std::invalid_argument("gemm: K must be a positive multiple of " + std::to_string(step));
  }
  const size_t nblk = K / static_cast<size_t>(ctx.block);
  if (na != M * K || nb != N * K || nsa != M * nblk || nsb != N * nblk || (nc != 0 && nc != M * N)) {
    throw std::invalid_argument("gemm: operand sizes do not match M, N, K");
  }
  return ctx;
}

// The generic GEMM: whole operands decoded once, then dot_any per output.
void gemm_generic(const Ctx& ctx, size_t M, size_t N, size_t K, std::span<const uint8_t> a,
                  std::span<const uint32_t> sa, std::span<const uint8_t> b, std::span<const uint32_t> sb,
                  std::span<const float> c, float alpha, unsigned threads, float* d) {
  const Decoded da = decode_operand(ctx, true, a.data(), sa.data(), M, K);
  const Decoded db = decode_operand(ctx, false, b.data(), sb.data(), N, K);
  mma_detail::for_rows(M, threads, [&](size_t r0, size_t r1) {
    for (size_t i = r0; i < r1; ++i) {
      const RowView ra = da.row(i);
      for (size_t j = 0; j < N; ++j) {
        const uint32_t cb = c.empty() ? 0u : std::bit_cast<uint32_t>(c[i * N + j]);
        const float acc = std::bit_cast<float>(mma_detail::dot_any(ctx, ra, db.row(j), K, cb));
        const float out = alpha * acc;  // the FP32 epilogue: one RN
        d[i * N + j] = std::isnan(out) ? std::bit_cast<float>(kNaNBits) : out;
      }
    }
  });
}

}  // namespace

std::vector<float> gemm(const MmaConfig& cfg, Model model, size_t M, size_t N, size_t K,
                        std::span<const uint8_t> a, std::span<const uint32_t> sa,
                        std::span<const uint8_t> b, std::span<const uint32_t> sb,
                        std::span<const float> c, float alpha, unsigned threads) {
  const Ctx ctx = gemm_ctx(cfg, model, M, N, K, a.size(), sa.size(), b.size(), sb.size(), c.size());
  std::vector<float> d(M * N);
  if (!mma_detail::gemm_fast(ctx, M, N, K, a.data(), sa.data(), b.data(), sb.data(),
                             c.empty() ? nullptr : c.data(), alpha, threads, d.data())) {
    gemm_generic(ctx, M, N, K, a, sa, b, sb, c, alpha, threads, d.data());
  }
  return d;
}

std::vector<float> gemm_reference(const MmaConfig& cfg, Model model, size_t M, size_t N, size_t K,
                                  std::span<const uint8_t> a, std::span<const uint32_t> sa,
                                  std::span<const uint8_t> b, std::span<const uint32_t> sb,
                                  std::span<const float> c, float alpha, unsigned threads) {
  const Ctx ctx = gemm_ctx(cfg, model, M, N, K, a.size(), sa.size(), b.size(), sb.size(), c.size());
  std::vector<float> d(M * N);
  gemm_generic(ctx, M, N, K, a, sa, b, sb, c, alpha, threads, d.data());
  return d;
}

std::vector<float> gemm(const MmaConfig& cfg, Model model, size_t M, size_t N, size_t K,
                        std::span<const uint8_t> a, std::span<const uint8_t> sa,
                        std::span<const uint8_t> b, std::span<const uint8_t> sb,
                        std::span<const float> c, float alpha, unsigned threads) {
  const std::vector<uint32_t> wa(sa.begin(), sa.end()), wb(sb.begin(), sb.end());
  return gemm(cfg, model, M, N, K, a, std::span<const uint32_t>(wa), b, std::span<const uint32_t>(wb),
              c, alpha, threads);
}

}  // namespace fp4sim
