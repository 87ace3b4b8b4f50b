// The units' latencies in fp4sim/models/unit_latency.hpp (which the SystemC models and the RTL
// driver take their pipeline depths from) measured on the Verilated models themselves, cycle by
// cycle, without the driver: reset, one instruction with real operands, count the clock cycles from
// the cycle it is accepted (in_valid_i && in_ready_o) to the cycle out_valid_o is set, and check d_o
// there against the golden mma_dot. Then 16 instructions back to back: accepted on 16 consecutive
// cycles and out on 16 consecutive cycles, in order (fully pipelined, one instruction per cycle).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "fp4sim/models/unit_latency.hpp"
#include "rtl_check.hpp"
#include "verilated.h"
#include "Vbs_dot_k32.h"
#include "Vbs_dot_k64_ue4m3_b16.h"
#include "Vbs_dot_k64_ue4m3_b32.h"
#include "Vbs_dot_k64_ue8m0_b16.h"
#include "Vbs_dot_k64_ue8m0_b32.h"
#include "Vhif4_pe.h"
#include "Vnvfp4_pe64.h"

namespace {

namespace lat = fp4sim::models;
using fp4sim::rtl::Unit;
using rtlcheck::Rng;

// One instruction: operands with mma_dot's conventions and the golden result.
struct Instr {
  std::array<uint8_t, 64> a{}, b{};  // bs_dot_k32 uses the first 32 (8-bit codes)
  std::array<uint32_t, 4> sfa{}, sfb{};
  uint32_t c = 0, d = 0;
};

Instr make_instr(Unit u, const fp4sim::MmaConfig& cfg, Rng& rng) {
  // Codes of finite values only (no NaN, no Inf): a result that means something.
  auto finite_code = [&rng](const fp4sim::ElemFormat& f, int lo, int hi) {
    for (;;) {
      const auto x = static_cast<uint32_t>(rng.range(lo, hi));
      if (std::isfinite(fp4sim::decode(f, x))) return x;
    }
  };
  Instr in;
  const int emax = (1 << cfg.elem_a->bits) - 1;
  for (auto& x : in.a) x = static_cast<uint8_t>(finite_code(*cfg.elem_a, 0, emax));
  for (auto& x : in.b) x = static_cast<uint8_t>(finite_code(*cfg.elem_b, 0, emax));
  // Scales within 2^+-3 or so of 1 (code bias << mbits), so the products matter next to C; the
  // HiF4 scale words keep random micro-exponents above their E6M2 byte.
  const fp4sim::ElemFormat& sf = *cfg.scale;
  const int one = sf.bias << sf.mbits, lo = one - (3 << sf.mbits), hi = one + (3 << sf.mbits);
  const uint32_t hi_bits = u == Unit::Hif4Pe ? 0xFFFFFF00u : 0u;
  for (auto& x : in.sfa) x = (rng.u32() & hi_bits) | finite_code(sf, lo, hi);
  for (auto& x : in.sfb) x = (rng.u32() & hi_bits) | finite_code(sf, lo, hi);
  in.c = rtlcheck::fb(static_cast<float>(rng.range(-1000, 1000)) / 8.0f);
  in.d = fp4sim::mma_dot(cfg, in.a.data(), in.b.data(), in.sfa.data(), in.sfb.data(), in.c);
  return in;
}

// Drives a Verilated top V directly (ports clk_i, rst_ni, in_valid_i / in_ready_o, a_i, b_i, sfa_i,
// sfb_i, c_i [, fmt_a_i, fmt_b_i], out_valid_o / out_ready_i, d_o).
template <class V>
class Bench {
 public:
  explicit Bench(Unit u)
      : u_(u), ctx_(std::make_unique<VerilatedContext>()), m_(std::make_unique<V>(ctx_.get(), "dut")) {
    ctx_->fatalOnError(false);  // a failed SVA check flags the context; ~Bench's caller checks it
    m_->clk_i = 0;
    m_->in_valid_i = 0;
    m_->out_ready_i = 1;  // never back-pressure: the latency is the bare pipeline depth
    m_->rst_ni = 0;
    for (int i = 0; i < 2; ++i) cycle_low(), cycle_high();
    m_->rst_ni = 1;
    cycle_low();
    cycle_high();
  }
  ~Bench() {
    // As the driver does (rtl_driver.cpp, release_model): destroy the model with its own context
    // current, and leave no pointer to the deleted context behind.
    Verilated::threadContextp(ctx_.get());
    m_->final();
    m_.reset();
    ctx_.reset();
    Verilated::threadContextp(nullptr);
    Verilated::lastContextp(nullptr);
  }

  // Puts an instruction (or nothing) on the inputs. Without one the data ports get garbage, so that
  // a result cannot come from the inputs combinationally.
  void drive(const Instr* in) {
    m_->in_valid_i = in != nullptr;
    const bool k32 = u_ == Unit::BsDotK32;
    for (int w = 0; w < 8; ++w) {
      uint32_t a = 0xDEADBEEFu, b = 0x5A5A5A5Au;
      if (in) {
        a = b = 0;
        for (int j = 0; j < (k32 ? 4 : 8); ++j) {
          const int e = k32 ? 4 * w + j : 8 * w + j;
          a |= static_cast<uint32_t>(in->a[static_cast<size_t>(e)]) << (k32 ? 8 * j : 4 * j);
          b |= static_cast<uint32_t>(in->b[static_cast<size_t>(e)]) << (k32 ? 8 * j : 4 * j);
        }
      }
      m_->a_i[w] = a;
      m_->b_i[w] = b;
    }
    uint32_t sfa = 0xA5A5A5A5u, sfb = 0x3C3C3C3Cu;
    if (in && u_ == Unit::Hif4Pe) {
      sfa = in->sfa[0];
      sfb = in->sfb[0];
    } else if (in) {
      sfa = sfb = 0;
      const int nsc = static_cast<int>(sizeof(m_->sfa_i));  // one 8-bit code per byte of the port
      for (int j = 0; j < nsc; ++j) {
        sfa |= (in->sfa[static_cast<size_t>(j)] & 0xFFu) << (8 * j);
        sfb |= (in->sfb[static_cast<size_t>(j)] & 0xFFu) << (8 * j);
      }
    }
    m_->sfa_i = static_cast<std::remove_reference_t<decltype(m_->sfa_i)>>(sfa);
    m_->sfb_i = static_cast<std::remove_reference_t<decltype(m_->sfb_i)>>(sfb);
    m_->c_i = in ? in->c : 0x7FC01234u;
    if constexpr (requires(V& v) { v.fmt_a_i; }) {  // bs_dot_k32: E4M3 x E4M3 (fp4sim_pkg::FmtE4M3)
      m_->fmt_a_i = 0;
      m_->fmt_b_i = 0;
    }
  }

  // clk low: the combinational outputs (in_ready_o, out_valid_o, d_o) settle for this cycle.
  void cycle_low() {
    m_->clk_i = 0;
    Verilated::threadContextp(ctx_.get());  // where the generated code reports a failed check
    m_->eval();
  }
  // Rising edge: the end of the cycle.
  void cycle_high() {
    m_->clk_i = 1;
    Verilated::threadContextp(ctx_.get());
    m_->eval();
  }

  bool assertion_failed() const { return ctx_->gotError(); }
  bool in_ready() const { return m_->in_ready_o; }
  bool out_valid() const { return m_->out_valid_o; }
  uint32_t d() const { return m_->d_o; }

 private:
  Unit u_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<V> m_;
};

constexpr int kTimeout = 64;  // cycles without a result before giving up

// Measures the latency of unit u (Verilated top V) and checks its throughput; returns the latency
// in cycles, or -1 if no result came.
template <class V>
int measure(Unit u) {
  const auto& ui = fp4sim::rtl::unit_info(u);
  const auto cfg = fp4sim::rtl::golden_config(u);
  Rng rng(0x1A7E + static_cast<uint64_t>(u));
  Bench<V> tb(u);

  // Idle after reset: nothing comes out.
  for (int i = 0; i < 4; ++i) {
    tb.drive(nullptr);
    tb.cycle_low();
    EXPECT_FALSE(tb.out_valid()) << ui.name << ": out_valid_o after reset with no input";
    tb.cycle_high();
  }

  // One instruction, accepted in cycle 0; the result is due in cycle latency.
  const Instr one = make_instr(u, cfg, rng);
  EXPECT_TRUE(std::isfinite(rtlcheck::bf(one.d))) << ui.name << ": test operands give a non-finite result";
  tb.drive(&one);
  tb.cycle_low();
  EXPECT_TRUE(tb.in_ready()) << ui.name << ": not ready for the first instruction";
  EXPECT_FALSE(tb.out_valid()) << ui.name << ": combinational path from in_valid_i to out_valid_o";
  tb.cycle_high();
  tb.drive(nullptr);
  int latency = -1;
  for (int t = 1; t <= kTimeout && latency < 0; ++t) {
    tb.cycle_low();
    if (tb.out_valid()) {
      latency = t;
      EXPECT_EQ(tb.d(), one.d) << ui.name << ": wrong result at the output";
    }
    tb.cycle_high();
  }
  if (latency < 0) {
    ADD_FAILURE() << ui.name << ": no out_valid_o within " << kTimeout << " cycles";
    return -1;
  }
  // Exactly one result: out_valid_o drops in the next cycle and stays low.
  for (int i = 0; i < 4; ++i) {
    tb.cycle_low();
    EXPECT_FALSE(tb.out_valid()) << ui.name << ": out_valid_o held " << i + 1 << " cycle(s) past the result";
    tb.cycle_high();
  }

  // Back to back: n instructions in cycles 0..n-1 must come out in cycles latency..latency+n-1.
  constexpr int n = 16;
  std::vector<Instr> burst;
  for (int i = 0; i < n; ++i) burst.push_back(make_instr(u, cfg, rng));
  std::vector<int> out_cycle;
  std::vector<uint32_t> out_d;
  for (int t = 0; t < n + latency + 8; ++t) {
    tb.drive(t < n ? &burst[static_cast<size_t>(t)] : nullptr);
    tb.cycle_low();
    if (t < n) {
      EXPECT_TRUE(tb.in_ready()) << ui.name << ": input stalled in cycle " << t << " of a burst";
    }
    if (tb.out_valid()) {
      out_cycle.push_back(t);
      out_d.push_back(tb.d());
    }
    tb.cycle_high();
  }
  EXPECT_EQ(out_cycle.size(), static_cast<size_t>(n)) << ui.name;
  for (size_t i = 0; i < out_cycle.size() && i < static_cast<size_t>(n); ++i) {
    EXPECT_EQ(out_cycle[i], latency + static_cast<int>(i)) << ui.name << ": result " << i << " not back to back";
    EXPECT_EQ(out_d[i], burst[i].d) << ui.name << ": result " << i << " wrong or out of order";
  }
  EXPECT_FALSE(tb.assertion_failed()) << ui.name << ": an SVA check failed (message above)";
  return latency;
}

TEST(UnitLatency, BsDotK64Ue4m3B16) {
  EXPECT_EQ(measure<Vbs_dot_k64_ue4m3_b16>(Unit::BsDotK64Ue4m3B16), lat::kLatencyBsDotK64Ue4m3B16);
}
TEST(UnitLatency, BsDotK64Ue8m0B32) {
  EXPECT_EQ(measure<Vbs_dot_k64_ue8m0_b32>(Unit::BsDotK64Ue8m0B32), lat::kLatencyBsDotK64Ue8m0B32);
}
TEST(UnitLatency, BsDotK64Ue8m0B16) {
  EXPECT_EQ(measure<Vbs_dot_k64_ue8m0_b16>(Unit::BsDotK64Ue8m0B16), lat::kLatencyBsDotK64Ue8m0B16);
}
TEST(UnitLatency, BsDotK64Ue4m3B32) {
  EXPECT_EQ(measure<Vbs_dot_k64_ue4m3_b32>(Unit::BsDotK64Ue4m3B32), lat::kLatencyBsDotK64Ue4m3B32);
}
TEST(UnitLatency, BsDotK32) { EXPECT_EQ(measure<Vbs_dot_k32>(Unit::BsDotK32), lat::kLatencyBsDotK32); }
TEST(UnitLatency, Hif4Pe) { EXPECT_EQ(measure<Vhif4_pe>(Unit::Hif4Pe), lat::kLatencyHif4Pe); }
TEST(UnitLatency, Nvfp4Pe64) { EXPECT_EQ(measure<Vnvfp4_pe64>(Unit::Nvfp4Pe64), lat::kLatencyNvfp4Pe64); }

// unit_latency() knows every unit under the driver's name, agrees with the driver's pipe_depth, and
// rejects other names.
TEST(UnitLatency, ByNameCoversEveryDriverUnit) {
  for (const auto& ui : fp4sim::rtl::all_units()) {
    EXPECT_EQ(lat::unit_latency(ui.name), ui.pipe_depth) << ui.name;
  }
  static_assert(lat::unit_latency("hif4_pe") == lat::kLatencyHif4Pe);
  EXPECT_THROW((void)lat::unit_latency("bs_dot_k64"), std::invalid_argument);
  EXPECT_THROW((void)lat::unit_latency(""), std::invalid_argument);
}

}  // namespace
