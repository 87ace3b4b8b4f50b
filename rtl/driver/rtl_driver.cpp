// Driver for the Verilated RTL units; see rtl_driver.hpp.
#include "rtl_driver.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

// The units' latencies (header-only, plain C++); relative so fp4sim_rtl needs no models/ include dir.
#include "fp4sim/models/unit_latency.hpp"
#include "verilated.h"
#if FP4SIM_RTL_TRACE
#include "verilated_fst_c.h"
#endif
#if FP4SIM_RTL_COVERAGE
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <unistd.h>

#include "verilated_cov.h"
#endif

#include "Vbs_dot_k32.h"
#include "Vbs_dot_k64_ue4m3_b16.h"
#include "Vbs_dot_k64_ue4m3_b32.h"
#include "Vbs_dot_k64_ue8m0_b16.h"
#include "Vbs_dot_k64_ue8m0_b32.h"
#include "Vhif4_pe.h"
#include "Vnvfp4_pe64.h"

namespace fp4sim::rtl {

namespace {

// Pipe depths come from fp4sim/models/unit_latency.hpp, which must match the -GPipeDepth= arguments
// in rtl/CMakeLists.txt (tests/rtl/test_unit_latency.cpp measures them on the Verilated models).
// Depths differ between the bs_dot_k64 variants so that every pipeline shape runs.
namespace lat = fp4sim::models;
constexpr std::array<UnitInfo, 7> kUnits{{
    {Unit::BsDotK64Ue4m3B16, "bs_dot_k64_ue4m3_b16", "bs_dot_k64", lat::kLatencyBsDotK64Ue4m3B16, MmaKindId::Mxf4Nvf4, Model::Blackwell, &kUE4M3, 16},
    {Unit::BsDotK64Ue8m0B32, "bs_dot_k64_ue8m0_b32", "bs_dot_k64", lat::kLatencyBsDotK64Ue8m0B32, MmaKindId::Mxf4, Model::Blackwell, &kUE8M0, 32},
    {Unit::BsDotK64Ue8m0B16, "bs_dot_k64_ue8m0_b16", "bs_dot_k64", lat::kLatencyBsDotK64Ue8m0B16, MmaKindId::Mxf4Nvf4, Model::Blackwell, &kUE8M0, 16},
    {Unit::BsDotK64Ue4m3B32, "bs_dot_k64_ue4m3_b32", "bs_dot_k64", lat::kLatencyBsDotK64Ue4m3B32, MmaKindId::Mxf4Nvf4, Model::Blackwell, &kUE4M3, 32},
    {Unit::BsDotK32, "bs_dot_k32", "bs_dot_k32", lat::kLatencyBsDotK32, MmaKindId::Mxf8f6f4, Model::Blackwell, &kUE8M0, 32},
    {Unit::Hif4Pe, "hif4_pe", "hif4_pe", lat::kLatencyHif4Pe, MmaKindId::Hif4, Model::AscendHif4, &kE6M2, 64},
    {Unit::Nvfp4Pe64, "nvfp4_pe64", "nvfp4_pe64", lat::kLatencyNvfp4Pe64, MmaKindId::Mxf4Nvf4, Model::Exact, &kUE4M3, 16},
}};

bool same(const ElemFormat* a, const ElemFormat* b) { return a && b && a->name == b->name; }

// fmt_*_i encoding of bs_dot_k32 (fp4sim_pkg::Fmt*).
int fmt_code(const ElemFormat& f) {
  const ElemFormat* fmts[5] = {&kE4M3, &kE5M2, &kE2M3, &kE3M2, &kE2M1};
  for (int i = 0; i < 5; ++i) {
    if (same(&f, fmts[i])) return i;
  }
  return -1;
}

// One instruction's operands as the ports want them.
struct Packed {
  std::array<uint32_t, 8> a{}, b{};
  uint32_t sfa = 0, sfb = 0, c = 0;
  uint8_t fmt_a = 0, fmt_b = 0;
};

#if FP4SIM_RTL_COVERAGE
// Coverage build (-DFP4SIM_RTL_COVERAGE=ON, scripts/coverage.sh): a model's coverage counters live
// in the model, so they are read out when it is destroyed (written by its context, parsed back) and
// added into one table per unit; at exit each table goes to $FP4SIM_RTL_COVERAGE_DIR (default ".")
// as <unit>.<pid>.dat, in verilator_coverage's format.
class CovAccum {
 public:
  ~CovAccum() {
    const std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [unit, points] : units_) {
      std::ofstream f(dir() + "/" + unit + "." + std::to_string(::getpid()) + ".dat");
      f << "# SystemC::Coverage-3\n";
      for (const auto& [key, n] : points) f << "C '" << key << "' " << n << "\n";
    }
  }
  void add(const std::string& unit, VerilatedContext& ctx) {
    const std::lock_guard<std::mutex> lock(mu_);
    const std::string tmp = dir() + "/.partial." + std::to_string(::getpid()) + ".dat";
    ctx.coveragep()->write(tmp.c_str());
    std::ifstream f(tmp);
    auto& points = units_[unit];
    for (std::string line; std::getline(f, line);) {  // C '<key>' <count>
      const size_t q1 = line.find('\''), q2 = line.rfind('\'');
      if (line.rfind("C '", 0) != 0 || q2 <= q1) continue;
      points[line.substr(q1 + 1, q2 - q1 - 1)] += std::strtoull(line.c_str() + q2 + 1, nullptr, 10);
    }
    std::remove(tmp.c_str());
  }

 private:
  static std::string dir() {
    const char* d = std::getenv("FP4SIM_RTL_COVERAGE_DIR");
    return d && *d ? d : ".";
  }
  std::mutex mu_;
  std::map<std::string, std::map<std::string, uint64_t>> units_;
};
CovAccum& cov_accum() {
  static CovAccum a;
  return a;
}
#endif

// Destroys a Verilated model and then its context. Verilator 5.006 registers a model's scopes (the
// assertion build has some) in the thread's current context and erases them from whatever context
// is current when the model is destroyed; with several drivers alive a stale pointer to a deleted
// context there deadlocks. So: this model's context while it goes, and none left behind.
template <class V>
void release_model(std::unique_ptr<VerilatedContext>& ctx, std::unique_ptr<V>& m) {
  Verilated::threadContextp(ctx.get());
  m.reset();
  ctx.reset();
  Verilated::threadContextp(nullptr);
  Verilated::lastContextp(nullptr);  // a null falls back to Verilator's default context
}

class ModelIf {
 public:
  virtual ~ModelIf() = default;
  virtual void drive(bool in_valid, const Packed* p, bool out_ready) = 0;
  virtual void eval_low() = 0;   // clk = 0: combinational outputs settle
  virtual void eval_high() = 0;  // rising edge
  virtual bool in_ready() const = 0;
  virtual bool out_valid() const = 0;
  virtual uint32_t d() const = 0;
  virtual void set_reset(bool active) = 0;
  virtual bool assertion_failed() const = 0;  // an SVA check failed (message printed by Verilator)
};

template <class V>
class VModel final : public ModelIf {
 public:
  VModel(const std::string& trace_path, std::string_view name)
      : name_(name), ctx_(std::make_unique<VerilatedContext>()) {
    // The units are verilated with --x-initial unique: every flop starts with random bits (fixed
    // seed, so runs repeat) and only the reset defines the state a unit relies on.
    // The coverage build starts from zeros instead: toggles from a random start would count as covered.
    ctx_->randReset(FP4SIM_RTL_COVERAGE ? 0 : 2);
    ctx_->randSeed(0x5EED);
    // A failed SVA check (FP4SIM_RTL_ASSERT build) prints its message and flags the context instead
    // of aborting the process; the driver turns the flag into an exception.
    ctx_->fatalOnError(false);
#if FP4SIM_RTL_TRACE
    if (!trace_path.empty()) ctx_->traceEverOn(true);
#endif
    Verilated::threadContextp(ctx_.get());  // the model registers its scopes there
    m_ = std::make_unique<V>(ctx_.get(), "dut");
#if FP4SIM_RTL_TRACE
    if (!trace_path.empty()) {
      tfp_ = std::make_unique<VerilatedFstC>();
      m_->trace(tfp_.get(), 99);
      trace_path_ = trace_path;
      tfp_->open((trace_path + ".partial").c_str());  // renamed into place when complete
    }
#else
    if (!trace_path.empty()) throw std::runtime_error("rtl driver: built without FP4SIM_RTL_TRACE");
#endif
    m_->clk_i = 0;
    m_->rst_ni = 1;
    m_->in_valid_i = 0;
    m_->out_ready_i = 0;
  }
  ~VModel() override {
#if FP4SIM_RTL_TRACE
    if (tfp_) {
      tfp_->close();
      std::rename((trace_path_ + ".partial").c_str(), trace_path_.c_str());
      tfp_.reset();
    }
#endif
    m_->final();
#if FP4SIM_RTL_COVERAGE
    cov_accum().add(name_, *ctx_);
#endif
    release_model(ctx_, m_);
  }

  void drive(bool in_valid, const Packed* p, bool out_ready) override {
    m_->in_valid_i = in_valid;
    m_->out_ready_i = out_ready;
    if (p) {
      for (int w = 0; w < 8; ++w) {
        m_->a_i[w] = p->a[w];
        m_->b_i[w] = p->b[w];
      }
      m_->sfa_i = p->sfa;
      m_->sfb_i = p->sfb;
      m_->c_i = p->c;
      if constexpr (requires(V& v) { v.fmt_a_i; }) {
        m_->fmt_a_i = p->fmt_a;
        m_->fmt_b_i = p->fmt_b;
      }
    }
  }
  void eval_low() override {
    m_->clk_i = 0;
    eval();
  }
  void eval_high() override {
    m_->clk_i = 1;
    eval();
  }
  bool assertion_failed() const override { return ctx_->gotError(); }
  bool in_ready() const override { return m_->in_ready_o; }
  bool out_valid() const override { return m_->out_valid_o; }
  uint32_t d() const override { return m_->d_o; }
  void set_reset(bool active) override { m_->rst_ni = active ? 0 : 1; }

 private:
  void eval() {
    // Generated code reports a failed assertion to the thread's context, not the model's: point
    // it at this model's, which several drivers alive at once would otherwise share.
    Verilated::threadContextp(ctx_.get());
    m_->eval();
    dump();
  }
  void dump() {
#if FP4SIM_RTL_TRACE
    if (tfp_) tfp_->dump(time_);
#endif
    ++time_;
  }
  std::string name_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<V> m_;
#if FP4SIM_RTL_TRACE
  std::unique_ptr<VerilatedFstC> tfp_;
  std::string trace_path_;
#endif
  uint64_t time_ = 0;
};

std::unique_ptr<ModelIf> make_model(Unit u, const std::string& trace) {
  const std::string_view name = unit_info(u).name;
  switch (u) {
    case Unit::BsDotK64Ue4m3B16: return std::make_unique<VModel<Vbs_dot_k64_ue4m3_b16>>(trace, name);
    case Unit::BsDotK64Ue8m0B32: return std::make_unique<VModel<Vbs_dot_k64_ue8m0_b32>>(trace, name);
    case Unit::BsDotK64Ue8m0B16: return std::make_unique<VModel<Vbs_dot_k64_ue8m0_b16>>(trace, name);
    case Unit::BsDotK64Ue4m3B32: return std::make_unique<VModel<Vbs_dot_k64_ue4m3_b32>>(trace, name);
    case Unit::BsDotK32: return std::make_unique<VModel<Vbs_dot_k32>>(trace, name);
    case Unit::Hif4Pe: return std::make_unique<VModel<Vhif4_pe>>(trace, name);
    case Unit::Nvfp4Pe64: return std::make_unique<VModel<Vnvfp4_pe64>>(trace, name);
  }
  throw std::invalid_argument("rtl driver: unknown unit");
}

inline uint32_t load_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

// The low nibbles of 8 bytes, byte j into bits 4j+3:4j (three shift-and-mask folds).
inline uint32_t nibbles(const uint8_t* p) {
  uint64_t v = 0;
  for (int j = 0; j < 8; ++j) v |= static_cast<uint64_t>(p[j]) << (8 * j);
  v &= 0x0F0F0F0F0F0F0F0Full;
  v = (v | (v >> 4)) & 0x00FF00FF00FF00FFull;
  v = (v | (v >> 8)) & 0x0000FFFF0000FFFFull;
  v = (v | (v >> 16)) & 0x00000000FFFFFFFFull;
  return static_cast<uint32_t>(v);
}

// xorshift32: the stall pattern only needs to be cheap and reproducible.
inline uint32_t xs32(uint32_t& s) {
  s ^= s << 13;
  s ^= s >> 17;
  s ^= s << 5;
  return s;
}

}  // namespace

std::span<const UnitInfo> all_units() { return kUnits; }

const UnitInfo& unit_info(Unit u) {
  for (const auto& i : kUnits) {
    if (i.unit == u) return i;
  }
  throw std::invalid_argument("rtl: unknown unit");
}

bool parse_unit(std::string_view name, Unit& out) {
  for (const auto& i : kUnits) {
    if (i.name == name) {
      out = i.unit;
      return true;
    }
  }
  return false;
}

std::optional<Unit> unit_for(const MmaConfig& cfg) {
  if (!cfg.kind) return std::nullopt;
  for (const auto& i : kUnits) {
    if (i.model != cfg.model || !same(i.scale, cfg.scale) || i.block != cfg.block) continue;
    // mxf4 is mxf4nvf4 restricted to UE8M0 / 32: the same datapath serves both kinds.
    const bool fp4_kind = cfg.kind->id == MmaKindId::Mxf4 || cfg.kind->id == MmaKindId::Mxf4Nvf4;
    const bool unit_fp4 = i.kind == MmaKindId::Mxf4 || i.kind == MmaKindId::Mxf4Nvf4;
    if (cfg.kind->id == i.kind || (fp4_kind && unit_fp4)) {
      if (cfg.model == Model::AscendHif4 && cfg.hif4_round_groups != 1) return std::nullopt;
      return i.unit;
    }
  }
  return std::nullopt;
}

MmaConfig golden_config(Unit u, const ElemFormat* elem_a, const ElemFormat* elem_b) {
  const UnitInfo& i = unit_info(u);
  MmaConfig cfg = i.kind == MmaKindId::Mxf8f6f4 ? make_mma_config(i.kind, elem_a, elem_b, i.scale, i.block)
                                                : make_mma_config(i.kind, nullptr, nullptr, i.scale, i.block);
  cfg.model = i.model;
  validate_mma_config(cfg, cfg.model);
  return cfg;
}

bool trace_supported() { return FP4SIM_RTL_TRACE != 0; }

bool assertions_enabled() { return FP4SIM_RTL_ASSERT != 0; }

struct Driver::Impl {
  const UnitInfo* info = nullptr;
  std::unique_ptr<ModelIf> m;
  uint32_t stall_seed = 0, stall_hold = 0, reset_every = 0;
  uint32_t rng = 0;
  uint8_t fmt_a = 0, fmt_b = 0;
  uint64_t cycles = 0;
  int last_latency = -1;

  int k() const { return info->unit == Unit::BsDotK32 ? 32 : 64; }
  int nsc() const { return k() / info->block; }

  void tick() {
    m->eval_low();
    m->eval_high();
    ++cycles;
    check_assertions();
  }

  void check_assertions() const {
    if (m->assertion_failed()) {
      throw std::runtime_error("rtl driver: " + std::string(info->name) + ": an RTL assertion failed by cycle " +
                               std::to_string(cycles) + " (Verilator's message above)");
    }
  }

  void pack(const uint8_t* a, const uint8_t* b, const uint32_t* sfa, const uint32_t* sfb, uint32_t c,
            Packed& p) const {
    p = Packed{};
    if (k() == 32) {  // 32 eight-bit codes, little-endian bytes
      for (int w = 0; w < 8; ++w) {
        p.a[w] = load_u32(a + 4 * w);
        p.b[w] = load_u32(b + 4 * w);
      }
    } else {  // 64 four-bit codes (mma_dot ignores the code bits above the format's width too)
      for (int w = 0; w < 8; ++w) {
        p.a[w] = nibbles(a + 8 * w);
        p.b[w] = nibbles(b + 8 * w);
      }
    }
    if (info->unit == Unit::Hif4Pe) {
      p.sfa = sfa[0];
      p.sfb = sfb[0];
    } else {
      for (int j = 0; j < nsc(); ++j) {
        p.sfa |= (sfa[j] & 0xFFu) << (8 * j);
        p.sfb |= (sfb[j] & 0xFFu) << (8 * j);
      }
    }
    p.c = c;
    p.fmt_a = fmt_a;
    p.fmt_b = fmt_b;
  }

  void run(size_t n, const uint8_t* a, const uint8_t* b, const uint32_t* sfa, const uint32_t* sfb,
           const uint32_t* c, uint32_t* d, const uint8_t* fa = nullptr, const uint8_t* fb = nullptr) {
    const size_t K = static_cast<size_t>(k()), S = static_cast<size_t>(nsc());
    size_t next_in = 0, next_out = 0;
    uint64_t first_in = 0, idle = 0, hold = 0;
    Packed p;
    bool packed = false;
    while (next_out < n) {
      if (reset_every && cycles % reset_every == reset_every - 1 && next_in > next_out) {
        // Reset with work in flight: it is lost, and sent again from the first missing result.
        m->drive(false, nullptr, false);
        m->set_reset(true);
        tick();
        m->set_reset(false);
        next_in = next_out;
        packed = false;
        continue;
      }
      const bool bubble = stall_seed && (xs32(rng) & 3u) == 0;  // 1/4 of cycles without input
      const bool in_valid = next_in < n && !bubble;
      if (in_valid && !packed) {
        pack(a + next_in * K, b + next_in * K, sfa + next_in * S, sfb + next_in * S, c[next_in], p);
        if (fa) p.fmt_a = fa[next_in] & 7u, p.fmt_b = fb[next_in] & 7u;  // per-instruction formats
        packed = true;
      }
      bool out_ready = !(stall_seed && (xs32(rng) % 3u) == 0);  // 1/3 of cycles stalled
      if (hold) {
        out_ready = false;
        --hold;
      }
      m->drive(in_valid, in_valid ? &p : nullptr, out_ready);
      m->eval_low();
      const bool fire_in = in_valid && m->in_ready();
      if (m->out_valid() && out_ready) {
        d[next_out] = m->d();
        if (next_out == 0) last_latency = static_cast<int>(cycles - first_in);
        ++next_out;
        idle = 0;
        if (stall_hold && next_out % 64 == 0) hold = stall_hold;
      }
      m->eval_high();
      if (fire_in) {
        if (next_in == 0) first_in = cycles;
        ++next_in;
        packed = false;
      }
      ++cycles;
      check_assertions();
      if (++idle > 10000) throw std::runtime_error("rtl driver: no output for 10000 cycles");
    }
    m->drive(false, nullptr, false);
  }
};

Driver::Driver(Unit u, DriverOptions opt) : impl_(std::make_unique<Impl>()) {
  impl_->info = &unit_info(u);
  impl_->m = make_model(u, opt.trace_path);
  impl_->stall_seed = opt.stall_seed;
  impl_->stall_hold = opt.stall_hold;
  impl_->reset_every = opt.reset_every;
  impl_->rng = opt.stall_seed ? opt.stall_seed : 1u;
  // Reset for two cycles.
  impl_->m->set_reset(true);
  impl_->m->drive(false, nullptr, false);
  impl_->tick();
  impl_->tick();
  impl_->m->set_reset(false);
  impl_->tick();
}

Driver::Driver(const MmaConfig& cfg, DriverOptions opt)
    : Driver([&] {
        const auto u = unit_for(cfg);
        if (!u) throw std::invalid_argument("rtl driver: no RTL unit computes this kind/model configuration");
        return *u;
      }(),
             std::move(opt)) {
  if (impl_->info->unit == Unit::BsDotK32) set_formats(*cfg.elem_a, *cfg.elem_b);
}

Driver::~Driver() = default;

const UnitInfo& Driver::info() const { return *impl_->info; }
int Driver::k() const { return impl_->k(); }
int Driver::scales_per_op() const { return impl_->nsc(); }
uint64_t Driver::cycles() const { return impl_->cycles; }
int Driver::last_latency() const { return impl_->last_latency; }

void Driver::set_formats(const ElemFormat& a, const ElemFormat& b) {
  if (impl_->info->unit != Unit::BsDotK32) return;
  const int fa = fmt_code(a), fb = fmt_code(b);
  if (fa < 0 || fb < 0) throw std::invalid_argument("rtl driver: element format not in kind mxf8f6f4");
  impl_->fmt_a = static_cast<uint8_t>(fa);
  impl_->fmt_b = static_cast<uint8_t>(fb);
}

uint32_t Driver::dot(const uint8_t* a, const uint8_t* b, const uint32_t* sfa, const uint32_t* sfb, uint32_t c) {
  uint32_t d = 0;
  impl_->run(1, a, b, sfa, sfb, &c, &d);
  return d;
}

void Driver::run(size_t n, const uint8_t* a, const uint8_t* b, const uint32_t* sfa, const uint32_t* sfb,
                 const uint32_t* c, uint32_t* d) {
  impl_->run(n, a, b, sfa, sfb, c, d);
}

void Driver::run_formats(size_t n, const uint8_t* a, const uint8_t* b, const uint32_t* sfa, const uint32_t* sfb,
                         const uint32_t* c, const uint8_t* fmt_a, const uint8_t* fmt_b, uint32_t* d) {
  if (impl_->info->unit != Unit::BsDotK32) throw std::invalid_argument("rtl driver: run_formats is for bs_dot_k32");
  impl_->run(n, a, b, sfa, sfb, c, d, fmt_a, fmt_b);
}

std::vector<float> Driver::gemm(size_t M, size_t N, size_t K, std::span<const uint8_t> a,
                                std::span<const uint32_t> sa, std::span<const uint8_t> b,
                                std::span<const uint32_t> sb, std::span<const float> c, float alpha) {
  const size_t ki = static_cast<size_t>(k()), S = static_cast<size_t>(scales_per_op());
  const size_t blk = static_cast<size_t>(info().block);
  if (K == 0 || K % ki != 0) throw std::invalid_argument("rtl gemm: K must be a positive multiple of the instruction K");
  if (info().model == Model::Exact && K != ki) {
    throw std::invalid_argument("rtl gemm: the exact model rounds once over K; the nvfp4_pe64 unit covers K = 64 only");
  }
  const size_t nblk = K / blk;
  if (a.size() != M * K || b.size() != N * K || sa.size() != M * nblk || sb.size() != N * nblk ||
      (!c.empty() && c.size() != M * N)) {
    throw std::invalid_argument("rtl gemm: operand sizes do not match M, N, K");
  }
  const size_t n = M * N;
  std::vector<uint32_t> acc(n, 0u), out(n);
  for (size_t i = 0; i < n && !c.empty(); ++i) acc[i] = std::bit_cast<uint32_t>(c[i]);
  std::vector<uint8_t> ba(n * ki), bb(n * ki);
  std::vector<uint32_t> bsa(n * S), bsb(n * S);
  for (size_t t = 0; t < K / ki; ++t) {  // instruction t of every output, D fed back as C
    for (size_t i = 0; i < M; ++i) {
      for (size_t j = 0; j < N; ++j) {
        const size_t o = i * N + j;
        std::copy_n(a.data() + i * K + t * ki, ki, ba.data() + o * ki);
        std::copy_n(b.data() + j * K + t * ki, ki, bb.data() + o * ki);
        std::copy_n(sa.data() + i * nblk + t * S, S, bsa.data() + o * S);
        std::copy_n(sb.data() + j * nblk + t * S, S, bsb.data() + o * S);
      }
    }
    run(n, ba.data(), bb.data(), bsa.data(), bsb.data(), acc.data(), out.data());
    acc.swap(out);
  }
  std::vector<float> d(n);
  for (size_t i = 0; i < n; ++i) {
    const float r = alpha * std::bit_cast<float>(acc[i]);  // the FP32 epilogue, as fp4sim::gemm
    d[i] = std::isnan(r) ? std::bit_cast<float>(0x7FFFFFFFu) : r;
  }
  return d;
}

}  // namespace fp4sim::rtl
