// fp4sim regress: the units, their case generators and the per-range checks; see regress.hpp.
#include "scaleout/regress.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>

#include "fp4sim/io/manifest.hpp"
#include "fp4sim/linear.hpp"
#include "fp4sim/mma.hpp"
#include "fp4sim/philox.hpp"
#include "scaleout/scaleout.hpp"
#if FP4SIM_HAVE_RTL
#include "rtl_driver.hpp"
#endif
#ifdef FP4SIM_HAVE_MODELS
#include "fp4sim/models/models.hpp"
#endif
#if FP4SIM_HAVE_GPU
#include "fp4sim/gpu/gpu.hpp"
#endif

namespace fp4sim::regress {
namespace {

// ---- random words: Philox4x32-10, key = seed, counter = (block, i lo, i hi, unit tag) ----
class Rng {
 public:
  Rng(uint64_t seed, uint32_t tag, uint64_t i) : seed_(seed), tag_(tag), i_(i) {}
  // One byte of the stream (codes of formats up to 8 bits take one byte each).
  uint8_t u8() {
    if (bytes_left_ == 0) {
      byte_word_ = u32();
      bytes_left_ = 4;
    }
    const uint8_t b = static_cast<uint8_t>(byte_word_);
    byte_word_ >>= 8;
    --bytes_left_;
    return b;
  }
  uint32_t u32() {
    if (have_ == 0) {
      buf_ = philox4x32_10({block_++, static_cast<uint32_t>(i_), static_cast<uint32_t>(i_ >> 32), tag_},
                           {static_cast<uint32_t>(seed_), static_cast<uint32_t>(seed_ >> 32)});
      have_ = 4;
    }
    return buf_[4 - have_--];
  }
  // Uniform in [0, n) (n <= 2^16 here, so the modulo bias is below 2^-16).
  uint32_t below(uint32_t n) { return n ? u32() % n : 0u; }
  int range(int lo, int hi) { return lo + static_cast<int>(below(static_cast<uint32_t>(hi - lo + 1))); }
  bool chance(uint32_t num, uint32_t den) { return below(den) < num; }

 private:
  uint64_t seed_;
  uint32_t tag_;
  uint64_t i_;
  uint32_t block_ = 0;
  std::array<uint32_t, 4> buf_{};
  int have_ = 0;
  uint32_t byte_word_ = 0;
  int bytes_left_ = 0;
};

bool finite_code(const ElemFormat& f, uint32_t code) { return (code & f.mag_mask()) <= f.max_code(); }

// An element code: uniform over the finite codes; with probability 1/4096 a NaN / Inf code of a
// format that has one (one special poisons a whole output, so they are rare).
uint32_t elem_code(Rng& r, const ElemFormat& f) {
  const uint32_t all = (1u << f.bits) - 1u;
  uint32_t c = r.u8() & all;
  if (!finite_code(f, c) && !r.chance(1, 4096)) c = (c & f.sign_bit()) | r.below(f.max_code() + 1);
  return c;
}

// A scale code (uint32: 8-bit codes in the low byte, HiF4 words whole) within about +-20 binades
// of 1, with the smallest, largest and NaN codes now and then.
uint32_t scale_code(Rng& r, const MmaConfig& cfg) {
  const uint32_t x = r.below(1024);
  if (cfg.kind->scale_word32) {  // HiF4: E6M2 in bits 7:0 (bias 48), level bits 31:8 uniform
    const uint32_t levels = r.u32() & 0xFFFFFF00u;
    if (x == 0) return levels | 0xFFu;
    if (x < 4) return levels | (x == 1 ? 0x00u : 0xFEu);
    return levels | (static_cast<uint32_t>(48 + r.range(-20, 20)) << 2) | r.below(4);
  }
  if (cfg.scale == &kUE8M0) {
    if (x == 0) return 0xFFu;
    if (x < 5) return x < 3 ? 0x00u : 0xFEu;
    return static_cast<uint32_t>(127 + r.range(-20, 20));
  }
  // UE4M3: uniform over 0x00..0x7E with a random (ignored) bit 7; NaN now and then.
  if (x == 0) return 0x7Fu | (r.u32() & 0x80u);
  return r.below(0x7F) | (r.u32() & 0x80u);
}

int scale_exp(const MmaConfig& cfg, uint32_t code) {
  const double v = cfg.kind->scale_word32 ? decode(kE6M2, code & 0xFFu) : decode(*cfg.scale, code & 0xFFu);
  return std::isfinite(v) && v != 0.0 ? std::ilogb(v) : 0;
}

// FP32 bits of C: zeros, subnormals, specials, any finite, and mostly values near 2^center.
uint32_t c_bits(Rng& r, int center) {
  const uint32_t x = r.below(100);
  const uint32_t sign = r.u32() & 0x80000000u;
  if (x < 8) return sign;
  if (x < 13) return sign | (r.u32() & 0x7FFFFFu);
  if (x < 15) return sign | 0x7F800000u;
  if (x < 16) return 0x7F800000u | 1u | (r.u32() & 0x807FFFFFu);
  if (x < 22) {
    const uint32_t u = r.u32();
    return ((u >> 23) & 0xFFu) == 0xFFu ? u & 0xFF7FFFFFu : u;
  }
  const int e = std::clamp(center + r.range(-40, 40), -126, 127);
  return sign | (static_cast<uint32_t>(e + 127) << 23) | (r.u32() & 0x7FFFFFu);
}

// ---- one instruction (RTL units) ----
struct DotCase {
  MmaConfig cfg;
  std::array<uint8_t, 64> a{}, b{};
  std::array<uint32_t, 4> sa{}, sb{};
  uint32_t c = 0;
  uint8_t fmt_a = 0, fmt_b = 0;  // bs_dot_k32: fp4sim_pkg format codes
};

constexpr const ElemFormat* kK32Formats[] = {&kE4M3, &kE5M2, &kE2M3, &kE3M2, &kE2M1};  // pkg codes 0..4

// Classes, drawn per case: 55 % random codes; 20 % near-cancellation (B = A, one half of A negated,
// equal scales, one lane perturbed; C near the truncation boundary); 13 % sparse (1..3 non-zero
// lanes); 12 % extreme scales (smallest / largest / NaN / zero codes mixed with random ones).
[[maybe_unused]] void make_dot(DotCase& d, Rng& r, const MmaConfig& base, bool k32) {
  d.cfg = base;
  if (k32) {
    d.fmt_a = static_cast<uint8_t>(r.below(5));
    d.fmt_b = static_cast<uint8_t>(r.below(5));
    d.cfg.elem_a = kK32Formats[d.fmt_a];
    d.cfg.elem_b = kK32Formats[d.fmt_b];
  }
  const ElemFormat& ea = *d.cfg.elem_a;
  const ElemFormat& eb = *d.cfg.elem_b;
  const size_t K = static_cast<size_t>(d.cfg.kind->k), S = K / static_cast<size_t>(d.cfg.block);
  const uint32_t cls = r.below(100);
  for (size_t j = 0; j < K; ++j) {
    d.a[j] = static_cast<uint8_t>(elem_code(r, ea));
    d.b[j] = static_cast<uint8_t>(elem_code(r, eb));
  }
  for (size_t s = 0; s < S; ++s) {
    d.sa[s] = scale_code(r, d.cfg);
    d.sb[s] = scale_code(r, d.cfg);
  }
  int center = scale_exp(d.cfg, d.sa[0]) + scale_exp(d.cfg, d.sb[0]);
  if (cls >= 55 && cls < 75 && &ea == &eb) {  // near-cancellation
    for (size_t s = 1; s < S; ++s) d.sa[s] = d.sa[0], d.sb[s] = d.sb[0];
    for (size_t j = 0; j < K / 2; ++j) {
      d.a[j + K / 2] = static_cast<uint8_t>(d.a[j] ^ ea.sign_bit());
      d.b[j + K / 2] = d.b[j];
    }
    const size_t lane = r.below(static_cast<uint32_t>(K));
    d.a[lane] = static_cast<uint8_t>(elem_code(r, ea));
    center -= r.range(20, 40);
  } else if (cls >= 75 && cls < 88) {  // sparse
    const uint32_t keep = 1 + r.below(3);
    std::array<bool, 64> on{};
    for (uint32_t t = 0; t < keep; ++t) on[r.below(static_cast<uint32_t>(K))] = true;
    for (size_t j = 0; j < K; ++j)
      if (!on[j]) d.a[j] = 0;
  } else if (cls >= 88) {  // extreme scales
    const uint32_t ext[] = {0x00u, 0xFEu, 0xFFu, 0x7Fu, 0x7Eu, 0x01u};
    for (size_t s = 0; s < S; ++s) {
      if (r.chance(1, 2)) d.sa[s] = d.cfg.kind->scale_word32 ? (d.sa[s] & 0xFFFFFF00u) | ext[r.below(3)] : ext[r.below(6)];
      if (r.chance(1, 2)) d.sb[s] = d.cfg.kind->scale_word32 ? (d.sb[s] & 0xFFFFFF00u) | ext[r.below(3)] : ext[r.below(6)];
    }
  }
  d.c = c_bits(r, center);
}

// ---- one GEMM (models, gpu-host) ----
struct GemmCase {
  MmaConfig cfg;
  Model model = Model::Blackwell;
  size_t M = 0, N = 0, K = 0;
  std::vector<uint8_t> a, b;
  std::vector<uint32_t> sa, sb;
  std::vector<float> c;  // [M,N]
  int64_t cores = 1;     // models: cores of the chip
};

void fill_operands(GemmCase& g, Rng& r) {
  const size_t nblk = g.K / static_cast<size_t>(g.cfg.block);
  g.a.resize(g.M * g.K);
  g.b.resize(g.N * g.K);
  g.sa.resize(g.M * nblk);
  g.sb.resize(g.N * nblk);
  for (auto& x : g.a) x = static_cast<uint8_t>(elem_code(r, *g.cfg.elem_a));
  for (auto& x : g.b) x = static_cast<uint8_t>(elem_code(r, *g.cfg.elem_b));
  // Scales vary rarely within a row: one special scale poisons the whole output row / column.
  for (auto* s : {&g.sa, &g.sb})
    for (auto& x : *s) {
      x = scale_code(r, g.cfg);
      if (!g.cfg.kind->scale_word32 && (x & 0x7Fu) == 0x7Fu && g.cfg.scale != &kUE8M0 && !r.chance(1, 8)) x = 0x38u;
      if (g.cfg.scale == &kUE8M0 && x == 0xFFu && !r.chance(1, 8)) x = 127u;
    }
  const int center = scale_exp(g.cfg, g.sa[0]) + scale_exp(g.cfg, g.sb[0]);
  g.c.assign(g.M * g.N, 0.0f);
  if (!r.chance(1, 4))
    for (auto& x : g.c) x = std::bit_cast<float>(c_bits(r, center));
}

// (M, N) with M * N = 256 (models: N a multiple of 16) and with M * N = 64 (gpu-host).
constexpr std::array<std::pair<size_t, size_t>, 5> kShapes256 = {{{16, 16}, {8, 32}, {4, 64}, {2, 128}, {1, 256}}};
constexpr std::array<std::pair<size_t, size_t>, 7> kShapes64 = {{{8, 8}, {4, 16}, {2, 32}, {1, 64}, {16, 4}, {32, 2}, {64, 1}}};

#ifdef FP4SIM_HAVE_MODELS
const std::vector<BlockFormat>& engine_formats(models::EngineKind e) {
  static const std::vector<BlockFormat> tc = {BlockFormat::Nvfp4,     BlockFormat::Mxfp4,     BlockFormat::Mxfp8E4M3,
                                              BlockFormat::Mxfp8E5M2, BlockFormat::Mxfp6E2M3, BlockFormat::Mxfp6E3M2};
  static const std::vector<BlockFormat> cube = {BlockFormat::Hif4, BlockFormat::Nvfp4, BlockFormat::Mxfp4};
  return e == models::EngineKind::Cube ? cube : tc;
}
constexpr int64_t kMaxModelCores = 4;
#endif

GemmCase make_model_gemm(const UnitDef& u, uint64_t seed, uint64_t g) {
  GemmCase c;
#ifdef FP4SIM_HAVE_MODELS
  Rng r(seed, unit_tag(u), g);
  const auto& fmts = engine_formats(static_cast<models::EngineKind>(u.id));
  c.cfg = mma_config_for(fmts[r.below(static_cast<uint32_t>(fmts.size()))]);
  c.model = c.cfg.model;
  const auto shape = kShapes256[r.below(kShapes256.size())];
  c.M = shape.first;
  c.N = shape.second;
  c.K = 64 * (1 + r.below(6));
  c.cores = 1 + r.below(kMaxModelCores);
  fill_operands(c, r);
#else
  (void)u, (void)seed, (void)g;
#endif
  return c;
}

// Every kind configuration (element pairs, scale types, blocks) with every model the GPU kernels run.
struct GpuConfig {
  MmaConfig cfg;
  Model model;
};
const std::vector<GpuConfig>& gpu_configs() {
  static const std::vector<GpuConfig> list = [] {
    std::vector<GpuConfig> out;
#if FP4SIM_HAVE_GPU
    for (const MmaKind& k : all_mma_kinds())
      for (const ElemFormat* ea : k.elems)
        for (const ElemFormat* eb : k.elems)
          for (const ElemFormat* s : k.scales)
            for (int blk : k.blocks) {
              if (!ea || !eb || !s || !blk) continue;
              if (k.id != MmaKindId::Mxf8f6f4 && eb != ea) continue;
              MmaConfig cfg;
              try {
                cfg = make_mma_config(k.id, ea, eb, s, blk);
              } catch (const std::invalid_argument&) {
                continue;
              }
              for (Model m : {k.hardware_model, Model::Exact, Model::Fp32Seq})
                if (gpu::cannot_run(cfg, m).empty()) out.push_back({cfg, m});
            }
#endif
    return out;
  }();
  return list;
}

GemmCase make_gpu_gemm(const UnitDef& u, uint64_t seed, uint64_t g) {
  GemmCase c;
  Rng r(seed, unit_tag(u), g);
  const auto& list = gpu_configs();
  if (list.empty()) throw std::runtime_error("gpu-host: no configuration to run");
  const GpuConfig& pick = list[r.below(static_cast<uint32_t>(list.size()))];
  c.cfg = pick.cfg;
  c.model = pick.model;
  c.cfg.model = pick.model;
  const auto shape = kShapes64[r.below(kShapes64.size())];
  c.M = shape.first;
  c.N = shape.second;
  c.K = static_cast<size_t>(c.cfg.kind->k) * (1 + r.below(4));
  fill_operands(c, r);
  return c;
}

std::vector<uint32_t> golden_gemm(const GemmCase& c) {
  const std::vector<float> d = gemm(c.cfg, c.model, c.M, c.N, c.K, c.a, c.sa, c.b, c.sb, c.c, 1.0f, 1);
  std::vector<uint32_t> out(d.size());
  for (size_t i = 0; i < d.size(); ++i) out[i] = std::bit_cast<uint32_t>(d[i]);
  return out;
}

void note(RangeResult& res, const Mismatch& m) {
  res.mismatching_outputs += m.outputs;
  ++res.mismatching_groups;
  if (res.list.size() < kMaxListed) res.list.push_back(m);
}

void compare(RangeResult& res, uint64_t group, const std::vector<uint32_t>& want, std::vector<uint32_t> got,
             uint64_t first_output, const std::vector<uint64_t>& faults) {
  for (uint64_t f : faults)
    if (f >= first_output && f - first_output < got.size()) got[f - first_output] ^= 1u;
  Mismatch m{group, 0, 0, 0, 0};
  for (size_t i = 0; i < want.size(); ++i)
    if (want[i] != got[i] && m.outputs++ == 0) m.first = i, m.golden = want[i], m.device = got[i];
  res.checked += want.size();
  if (m.outputs) note(res, m);
}

[[maybe_unused]] std::string kind_text(const MmaConfig& cfg) {
  std::string s = std::string(model_name(cfg.model)) + " " + std::string(cfg.kind->name);
  if (cfg.kind->id == MmaKindId::Mxf8f6f4) return s + " fp8/fp6/fp4 pairs ue8m0/32";
  if (cfg.kind->scale_word32) return s + " s1p2 e6m2+levels/64";
  return s + " " + std::string(cfg.elem_a->name) + " " + std::string(cfg.scale->name) + "/" + std::to_string(cfg.block);
}

}  // namespace

uint32_t unit_tag(const UnitDef& u) {
  uint32_t h = 2166136261u;
  for (char ch : u.name) h = (h ^ static_cast<uint8_t>(ch)) * 16777619u;
  return h;
}

const std::vector<UnitDef>& all_units() {
  static const std::vector<UnitDef> list = [] {
    std::vector<UnitDef> out;
    // CPU seconds per output on one core of this machine, device + golden + case generation
    // (measured with scripts/scaleout_bench.sh; they only steer the assignment of shards to ranks).
#if FP4SIM_HAVE_RTL
    for (const rtl::UnitInfo& ui : rtl::all_units()) {
      const MmaConfig cfg = rtl::golden_config(ui.unit);
      double cost = 2.0e-6;
      switch (ui.unit) {
        case rtl::Unit::BsDotK64Ue4m3B16: cost = 2.07e-6; break;
        case rtl::Unit::BsDotK64Ue8m0B32: cost = 2.35e-6; break;
        case rtl::Unit::BsDotK64Ue8m0B16: cost = 1.67e-6; break;
        case rtl::Unit::BsDotK64Ue4m3B32: cost = 1.52e-6; break;
        case rtl::Unit::BsDotK32: cost = 2.03e-6; break;
        case rtl::Unit::Hif4Pe: cost = 1.41e-6; break;
        case rtl::Unit::Nvfp4Pe64: cost = 1.87e-6; break;
        default: break;  // a unit added later: the middle of the range
      }
      out.push_back({std::string(ui.name), Family::Rtl, static_cast<uint8_t>(ui.unit), 1, cost, kind_text(cfg), ""});
    }
#else
    for (const char* n : {"bs_dot_k64_ue4m3_b16", "bs_dot_k64_ue8m0_b32", "bs_dot_k64_ue8m0_b16", "bs_dot_k64_ue4m3_b32",
                          "bs_dot_k32", "hif4_pe", "nvfp4_pe64"})
      out.push_back({n, Family::Rtl, 0, 1, 1e-6, "", "this fp4sim was built without the Verilated RTL (Verilator)"});
#endif
    const char* no_models = "this fp4sim was built without the SystemC models";
#ifdef FP4SIM_HAVE_MODELS
    no_models = "";
#endif
    out.push_back({"tensor-core", Family::Models, 0, 256, 2.90e-6, "SystemC tensor core (cycle), 6 formats", no_models});
    out.push_back({"cube", Family::Models, 1, 256, 1.59e-6, "SystemC cube (cycle), 3 formats", no_models});
    const char* no_gpu = "this fp4sim was built without sim/gpu";
#if FP4SIM_HAVE_GPU
    no_gpu = "";
#endif
    out.push_back({"gpu-host", Family::GpuHost, 0, 64, 2.12e-6,
                   "GPU kernels' host arithmetic, every kind x model", no_gpu});
    return out;
  }();
  return list;
}

std::string encode(const RangeResult& r) {
  std::string s;
  scaleout::put(s, r.checked);
  scaleout::put(s, r.mismatching_outputs);
  scaleout::put(s, r.mismatching_groups);
  scaleout::put(s, static_cast<uint64_t>(r.list.size()));
  for (const Mismatch& m : r.list) {
    scaleout::put(s, m.group);
    scaleout::put(s, m.outputs);
    scaleout::put(s, m.first);
    scaleout::put(s, (static_cast<uint64_t>(m.golden) << 32) | m.device);
  }
  return s;
}

RangeResult decode(const std::string& s) {
  scaleout::Reader rd(s);
  RangeResult r;
  r.checked = rd.u64();
  r.mismatching_outputs = rd.u64();
  r.mismatching_groups = rd.u64();
  const uint64_t n = rd.u64();
  for (uint64_t i = 0; i < n; ++i) {
    Mismatch m;
    m.group = rd.u64();
    m.outputs = rd.u64();
    m.first = rd.u64();
    const uint64_t bits = rd.u64();
    m.golden = static_cast<uint32_t>(bits >> 32);
    m.device = static_cast<uint32_t>(bits);
    r.list.push_back(m);
  }
  return r;
}

struct Runner::Impl {
#if FP4SIM_HAVE_RTL
  std::map<rtl::Unit, std::unique_ptr<rtl::Driver>> drivers;
#endif
  std::vector<DotCase> dots;
  std::vector<uint8_t> a, b, fa, fb;
  std::vector<uint32_t> sa, sb, c, d;
};

Runner::Runner() : impl_(new Impl) {}
Runner::~Runner() { delete impl_; }

RangeResult Runner::run(const UnitDef& u, uint64_t seed, uint64_t begin, uint64_t end,
                        const std::vector<uint64_t>& faults) {
  if (!u.missing.empty()) throw std::runtime_error("unit " + u.name + ": " + u.missing);
  RangeResult res;
  if (u.family == Family::Rtl) {
#if FP4SIM_HAVE_RTL
    const rtl::Unit unit = static_cast<rtl::Unit>(u.id);
    auto& drv = impl_->drivers[unit];
    if (!drv) drv = std::make_unique<rtl::Driver>(unit);
    const bool k32 = unit == rtl::Unit::BsDotK32;
    const MmaConfig base = rtl::golden_config(unit);
    const size_t K = static_cast<size_t>(drv->k()), S = static_cast<size_t>(drv->scales_per_op());
    const uint32_t tag = unit_tag(u);
    constexpr uint64_t kBatch = 4096;
    Impl& m = *impl_;
    for (uint64_t b0 = begin; b0 < end; b0 += kBatch) {
      const size_t n = static_cast<size_t>(std::min(kBatch, end - b0));
      m.dots.resize(n);
      m.a.resize(n * K);
      m.b.resize(n * K);
      m.sa.resize(n * S);
      m.sb.resize(n * S);
      m.c.resize(n);
      m.d.resize(n);
      m.fa.resize(n);
      m.fb.resize(n);
      for (size_t j = 0; j < n; ++j) {
        Rng r(seed, tag, b0 + j);
        DotCase& dc = m.dots[j];
        make_dot(dc, r, base, k32);
        std::copy_n(dc.a.begin(), K, m.a.begin() + static_cast<std::ptrdiff_t>(j * K));
        std::copy_n(dc.b.begin(), K, m.b.begin() + static_cast<std::ptrdiff_t>(j * K));
        std::copy_n(dc.sa.begin(), S, m.sa.begin() + static_cast<std::ptrdiff_t>(j * S));
        std::copy_n(dc.sb.begin(), S, m.sb.begin() + static_cast<std::ptrdiff_t>(j * S));
        m.c[j] = dc.c;
        m.fa[j] = dc.fmt_a;
        m.fb[j] = dc.fmt_b;
      }
      if (k32)
        drv->run_formats(n, m.a.data(), m.b.data(), m.sa.data(), m.sb.data(), m.c.data(), m.fa.data(), m.fb.data(),
                         m.d.data());
      else
        drv->run(n, m.a.data(), m.b.data(), m.sa.data(), m.sb.data(), m.c.data(), m.d.data());
      for (size_t j = 0; j < n; ++j) {
        const DotCase& dc = m.dots[j];
        const uint32_t want = mma_dot(dc.cfg, dc.a.data(), dc.b.data(), dc.sa.data(), dc.sb.data(), dc.c);
        uint32_t got = m.d[j];
        for (uint64_t f : faults)
          if (f == b0 + j) got ^= 1u;
        ++res.checked;
        if (got != want) note(res, {b0 + j, 1, 0, want, got});
      }
    }
#endif
    return res;
  }
  for (uint64_t g = begin / u.group; g < end / u.group; ++g) {
    std::vector<uint32_t> got;
    GemmCase c;
    if (u.family == Family::Models) {
#ifdef FP4SIM_HAVE_MODELS
      c = make_model_gemm(u, seed, g);
      const auto e = static_cast<models::EngineKind>(u.id);
      models::Params p = models::default_params(e);
      p.cores = c.cores;
      models::Workload w;
      w.cfg = c.cfg;
      w.model = c.model;
      w.M = c.M;
      w.N = c.N;
      w.K = c.K;
      w.a = c.a;
      w.b = c.b;
      w.sa = c.sa;
      w.sb = c.sb;
      w.c = c.c;
      w.threads = 1;
      models::RunOptions o;
      o.timing = models::Timing::Cycle;
      const std::vector<float> d = models::run(p, w, o).d;
      got.resize(d.size());
      for (size_t i = 0; i < d.size(); ++i) got[i] = std::bit_cast<uint32_t>(d[i]);
#endif
    } else {
#if FP4SIM_HAVE_GPU
      c = make_gpu_gemm(u, seed, g);
      got = gpu::gemm(gpu::Backend::Host, c.cfg, c.model, c.M, c.N, c.K, c.a, c.sa, c.b, c.sb, c.c, 1.0f);
#endif
    }
    compare(res, g, golden_gemm(c), std::move(got), g * u.group, faults);
  }
  return res;
}

void reserve_model_cores() {
#ifdef FP4SIM_HAVE_MODELS
  models::reserve_cores(models::EngineKind::TensorCore, kMaxModelCores);
  models::reserve_cores(models::EngineKind::Cube, kMaxModelCores);
#endif
}

vectors::VectorCase vector_case(const UnitDef& u, uint64_t seed, const Mismatch& m) {
  vectors::VectorCase v;
  GemmCase g;
  std::string what;
  if (u.family == Family::Rtl) {
#if FP4SIM_HAVE_RTL
    const rtl::Unit unit = static_cast<rtl::Unit>(u.id);
    Rng r(seed, unit_tag(u), m.group);
    DotCase dc;
    make_dot(dc, r, rtl::golden_config(unit), unit == rtl::Unit::BsDotK32);
    g.cfg = dc.cfg;
    g.model = dc.cfg.model;
    g.M = g.N = 1;
    g.K = static_cast<size_t>(dc.cfg.kind->k);
    const size_t S = g.K / static_cast<size_t>(dc.cfg.block);
    g.a.assign(dc.a.begin(), dc.a.begin() + static_cast<std::ptrdiff_t>(g.K));
    g.b.assign(dc.b.begin(), dc.b.begin() + static_cast<std::ptrdiff_t>(g.K));
    g.sa.assign(dc.sa.begin(), dc.sa.begin() + static_cast<std::ptrdiff_t>(S));
    g.sb.assign(dc.sb.begin(), dc.sb.begin() + static_cast<std::ptrdiff_t>(S));
    g.c = {std::bit_cast<float>(dc.c)};
#endif
    what = "instruction " + std::to_string(m.group);
  } else {
    g = u.family == Family::Models ? make_model_gemm(u, seed, m.group) : make_gpu_gemm(u, seed, m.group);
    what = "GEMM " + std::to_string(m.group) + " (cases " + std::to_string(m.group * u.group) + ".." +
           std::to_string((m.group + 1) * u.group - 1) + ")";
    if (u.family == Family::Models) what += " on " + std::to_string(g.cores) + " core(s)";
  }
  v.cls = "regress-" + u.name;
  v.description = "fp4sim regress, seed " + std::to_string(seed) + ", unit " + u.name + ", " + what + ": " +
                  std::to_string(m.outputs) + " of " + std::to_string(g.M * g.N) + " outputs differ; first [" +
                  std::to_string(m.first / g.N) + ", " + std::to_string(m.first % g.N) + "]: golden " +
                  io::hex32(m.golden) + ", " + u.name + " " + io::hex32(m.device);
  v.cfg = g.cfg;
  v.M = g.M;
  v.N = g.N;
  v.K = g.K;
  v.a.codes = g.a;
  v.a.scales = g.sa;
  v.b.codes = g.b;
  v.b.scales = g.sb;
  v.c = g.c;
  v.models = {g.model};
  v.expected = {gemm(g.cfg, g.model, g.M, g.N, g.K, g.a, g.sa, g.b, g.sb, g.c, 1.0f, 1)};
  return v;
}

}  // namespace fp4sim::regress
