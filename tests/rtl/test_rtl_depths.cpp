// Every unit at every PipeDepth 1..5, bit for bit against golden. One Verilated model per unit
// (Vdepths_<unit>, top tests/rtl/fp4sim_depth_set.sv) holds the unit at depths 1..5 side by side,
// lane n = PipeDepth n+1, each lane with its own ports; the harness below drives all five lanes in
// the same cycles with independent handshakes, without the driver (which knows one depth per unit).
//   LatencyIsPipeDepth  an idle unit returns an instruction after exactly PipeDepth cycles; 16
//                       back to back are accepted and returned on consecutive cycles, in order
//   HoldsPipeDepth      with the output stalled a lane takes exactly PipeDepth instructions (one per
//                       stage) and then stalls its input; nothing is lost when it drains
//   RandomStalls        random operands (bs_dot_k32: formats switching every instruction) under
//                       random bubbles, back-pressure, long holds and resets in mid-stream; at most
//                       PipeDepth in flight, no output without an instruction in flight
// Every result is checked against fp4sim::mma_dot; in the assertion build the SVA checks of the
// pipeline stages run too and any failure fails the test.
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "rtl_check.hpp"
#include "verilated.h"
#include "Vdepths_bs_dot_k32.h"
#include "Vdepths_bs_dot_k64_ue4m3_b16.h"
#include "Vdepths_bs_dot_k64_ue4m3_b32.h"
#include "Vdepths_bs_dot_k64_ue8m0_b16.h"
#include "Vdepths_bs_dot_k64_ue8m0_b32.h"
#include "Vdepths_hif4_pe.h"
#include "Vdepths_nvfp4_pe64.h"
#include "Vdepths_nvfp4_pe64_fixed.h"

namespace {

using fp4sim::rtl::Unit;
using rtlcheck::Case;
using rtlcheck::Rng;

constexpr int kLanes = 5;  // lane n: PipeDepth n + 1 (fp4sim_depth_set NumDepths)

const fp4sim::ElemFormat* const kK32Fmts[5] = {&fp4sim::kE4M3, &fp4sim::kE5M2, &fp4sim::kE2M3, &fp4sim::kE3M2,
                                               &fp4sim::kE2M1};

// One instruction and its golden result; fmt_a / fmt_b are bs_dot_k32's raw format codes (5..7
// are unused codes, which the unit decodes as E4M3).
struct Instr {
  Case c;
  uint8_t fmt_a = 0, fmt_b = 0;
  uint32_t d = 0;
};

Instr make_instr(Unit u, Rng& rng) {
  Instr in;
  const bool k32 = u == Unit::BsDotK32, hif4 = u == Unit::Hif4Pe;
  for (int k = 0; k < 64; ++k) {
    in.c.a[static_cast<size_t>(k)] = static_cast<uint8_t>(rng.below(k32 ? 256 : 16));
    in.c.b[static_cast<size_t>(k)] = static_cast<uint8_t>(rng.below(k32 ? 256 : 16));
  }
  for (int j = 0; j < 4; ++j) {
    // Scales near 1 mostly (the products meet C), any code now and then (specials included).
    const bool any = rng.chance(1, 16);
    in.c.sfa[static_cast<size_t>(j)] = hif4 ? rng.u32() : any ? rng.below(256) : static_cast<uint32_t>(rng.range(100, 150));
    in.c.sfb[static_cast<size_t>(j)] = hif4 ? rng.u32() : any ? rng.below(256) : static_cast<uint32_t>(rng.range(100, 150));
  }
  in.c.c = rng.c_bits(0);
  const fp4sim::ElemFormat* fa = nullptr;
  const fp4sim::ElemFormat* fb = nullptr;
  if (k32) {
    in.fmt_a = static_cast<uint8_t>(rng.below(8));
    in.fmt_b = static_cast<uint8_t>(rng.below(8));
    fa = in.fmt_a < 5 ? kK32Fmts[in.fmt_a] : &fp4sim::kE4M3;
    fb = in.fmt_b < 5 ? kK32Fmts[in.fmt_b] : &fp4sim::kE4M3;
  }
  const auto cfg = fp4sim::rtl::golden_config(u, fa, fb);
  in.d = fp4sim::mma_dot(cfg, in.c.a.data(), in.c.b.data(), in.c.sfa.data(), in.c.sfb.data(), in.c.c);
  return in;
}

// The five lanes of one Verilated depth set, behind an interface so the tests are not templates.
class Lanes {
 public:
  virtual ~Lanes() = default;
  // Lane n's inputs for this cycle: an instruction (nullptr: garbage operands) and the handshake.
  virtual void drive(int n, bool in_valid, const Instr* in, bool out_ready) = 0;
  virtual void eval_low() = 0;   // clk = 0: in_ready_o, out_valid_o, d_o settle for this cycle
  virtual void eval_high() = 0;  // rising edge
  virtual bool in_ready(int n) const = 0;
  virtual bool out_valid(int n) const = 0;
  virtual uint32_t d(int n) const = 0;
  virtual void set_reset(bool active) = 0;
  virtual bool assertion_failed() const = 0;

  void tick() {
    eval_low();
    eval_high();
  }
  void reset() {
    for (int n = 0; n < kLanes; ++n) drive(n, false, nullptr, false);
    set_reset(true);
    tick();
    tick();
    set_reset(false);
    tick();
  }
};

template <class V>
class VLanes final : public Lanes {
 public:
  explicit VLanes(Unit u) : u_(u), ctx_(std::make_unique<VerilatedContext>()) {
    ctx_->randReset(2);  // random initial state (--x-initial unique): reset alone must define it
    ctx_->randSeed(0xDE97);
    ctx_->fatalOnError(false);  // a failed SVA check flags the context (assertion_failed())
    Verilated::threadContextp(ctx_.get());  // the model registers its scopes there
    m_ = std::make_unique<V>(ctx_.get(), "dut");
    m_->clk_i = 0;
    m_->rst_ni = 1;
    m_->in_valid_i = 0;
    m_->out_ready_i = 0;
  }
  ~VLanes() override {
    // As the driver does (rtl_driver.cpp, release_model): destroy the model with its own context
    // current, and leave no pointer to the deleted context behind.
    Verilated::threadContextp(ctx_.get());
    m_->final();
    m_.reset();
    ctx_.reset();
    Verilated::threadContextp(nullptr);
    Verilated::lastContextp(nullptr);
  }

  void drive(int n, bool in_valid, const Instr* in, bool out_ready) override {
    const auto bit = static_cast<uint32_t>(1u << n);
    m_->in_valid_i = static_cast<uint8_t>(in_valid ? (m_->in_valid_i | bit) : (m_->in_valid_i & ~bit));
    m_->out_ready_i = static_cast<uint8_t>(out_ready ? (m_->out_ready_i | bit) : (m_->out_ready_i & ~bit));
    const bool k32 = u_ == Unit::BsDotK32;
    for (int w = 0; w < 8; ++w) {
      uint32_t a = 0xDEADBEEFu, b = 0x5A5A5A5Au;  // no instruction: garbage, never a result
      if (in) {
        a = b = 0;
        for (int j = 0; j < (k32 ? 4 : 8); ++j) {
          const auto e = static_cast<size_t>(k32 ? 4 * w + j : 8 * w + j);
          const uint32_t mask = k32 ? 0xFFu : 0xFu;
          a |= (in->c.a[e] & mask) << (k32 ? 8 * j : 4 * j);
          b |= (in->c.b[e] & mask) << (k32 ? 8 * j : 4 * j);
        }
      }
      m_->a_i[static_cast<size_t>(8 * n + w)] = a;
      m_->b_i[static_cast<size_t>(8 * n + w)] = b;
    }
    uint32_t sfa = 0xA5A5A5A5u, sfb = 0x3C3C3C3Cu, c = 0x7FC01234u;
    if (in) {
      if (u_ == Unit::Hif4Pe) {
        sfa = in->c.sfa[0];
        sfb = in->c.sfb[0];
      } else {  // 8-bit codes, scale j in bits 8j+7:8j (the lane reads as many as its unit has)
        sfa = sfb = 0;
        for (int j = 0; j < 4; ++j) {
          sfa |= (in->c.sfa[static_cast<size_t>(j)] & 0xFFu) << (8 * j);
          sfb |= (in->c.sfb[static_cast<size_t>(j)] & 0xFFu) << (8 * j);
        }
      }
      c = in->c.c;
      const auto mask = static_cast<uint32_t>(7u << (3 * n));
      m_->fmt_a_i = static_cast<uint16_t>((m_->fmt_a_i & ~mask) | (static_cast<uint32_t>(in->fmt_a) << (3 * n)));
      m_->fmt_b_i = static_cast<uint16_t>((m_->fmt_b_i & ~mask) | (static_cast<uint32_t>(in->fmt_b) << (3 * n)));
    }
    m_->sfa_i[static_cast<size_t>(n)] = sfa;
    m_->sfb_i[static_cast<size_t>(n)] = sfb;
    m_->c_i[static_cast<size_t>(n)] = c;
  }
  void eval_low() override {
    m_->clk_i = 0;
    eval();
  }
  void eval_high() override {
    m_->clk_i = 1;
    eval();
  }
  bool in_ready(int n) const override { return (m_->in_ready_o >> n) & 1u; }
  bool out_valid(int n) const override { return (m_->out_valid_o >> n) & 1u; }
  uint32_t d(int n) const override { return m_->d_o[static_cast<size_t>(n)]; }
  void set_reset(bool active) override { m_->rst_ni = active ? 0 : 1; }
  bool assertion_failed() const override { return ctx_->gotError(); }

 private:
  void eval() {
    Verilated::threadContextp(ctx_.get());  // where the generated code reports a failed check
    m_->eval();
  }
  Unit u_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<V> m_;
};

struct DepthUnit {
  const char* name;
  Unit unit;
  std::unique_ptr<Lanes> (*make)(Unit);
};

template <class V>
std::unique_ptr<Lanes> make_lanes(Unit u) {
  return std::make_unique<VLanes<V>>(u);
}

const DepthUnit kDepthUnits[] = {
    {"bs_dot_k64_ue4m3_b16", Unit::BsDotK64Ue4m3B16, &make_lanes<Vdepths_bs_dot_k64_ue4m3_b16>},
    {"bs_dot_k64_ue8m0_b32", Unit::BsDotK64Ue8m0B32, &make_lanes<Vdepths_bs_dot_k64_ue8m0_b32>},
    {"bs_dot_k64_ue8m0_b16", Unit::BsDotK64Ue8m0B16, &make_lanes<Vdepths_bs_dot_k64_ue8m0_b16>},
    {"bs_dot_k64_ue4m3_b32", Unit::BsDotK64Ue4m3B32, &make_lanes<Vdepths_bs_dot_k64_ue4m3_b32>},
    {"bs_dot_k32", Unit::BsDotK32, &make_lanes<Vdepths_bs_dot_k32>},
    {"hif4_pe", Unit::Hif4Pe, &make_lanes<Vdepths_hif4_pe>},
    {"nvfp4_pe64", Unit::Nvfp4Pe64, &make_lanes<Vdepths_nvfp4_pe64>},
    {"nvfp4_pe64_fixed", Unit::Nvfp4Pe64, &make_lanes<Vdepths_nvfp4_pe64_fixed>},  // BackEnd = BeFixed
};

class RtlDepths : public ::testing::TestWithParam<DepthUnit> {
 protected:
  void SetUp() override {
    lanes_ = GetParam().make(GetParam().unit);
    lanes_->reset();
  }
  void TearDown() override {
    EXPECT_FALSE(lanes_->assertion_failed()) << GetParam().name << ": an SVA check failed (message above)";
  }
  std::string lane_name(int n) const { return std::string(GetParam().name) + " PipeDepth " + std::to_string(n + 1); }

  std::unique_ptr<Lanes> lanes_;
};

// All lanes take one instruction in cycle 0 (output never stalled); lane n's result must appear in
// cycle n + 1 and only then. Then 16 back to back: taken in cycles 0..15, out in order in cycles
// n+1 .. n+16.
TEST_P(RtlDepths, LatencyIsPipeDepth) {
  const Unit u = GetParam().unit;
  Rng rng(0xDE1 + static_cast<uint64_t>(u));
  Lanes& l = *lanes_;
  for (int t = 0; t < 3; ++t) {  // idle after reset: nothing comes out
    for (int n = 0; n < kLanes; ++n) l.drive(n, false, nullptr, true);
    l.eval_low();
    for (int n = 0; n < kLanes; ++n) EXPECT_FALSE(l.out_valid(n)) << lane_name(n) << ": output after reset";
    l.eval_high();
  }
  for (int rep = 0; rep < 2; ++rep) {
    const int burst = rep == 0 ? 1 : 16;
    std::vector<Instr> ins;
    for (int i = 0; i < burst; ++i) ins.push_back(make_instr(u, rng));
    std::array<std::vector<int>, kLanes> when;
    std::array<std::vector<uint32_t>, kLanes> got;
    for (int t = 0; t < burst + kLanes + 4; ++t) {
      for (int n = 0; n < kLanes; ++n) l.drive(n, t < burst, t < burst ? &ins[static_cast<size_t>(t)] : nullptr, true);
      l.eval_low();
      for (int n = 0; n < kLanes; ++n) {
        if (t < burst) {
          EXPECT_TRUE(l.in_ready(n)) << lane_name(n) << ": input stalled in cycle " << t;
        }
        if (l.out_valid(n)) {
          when[static_cast<size_t>(n)].push_back(t);
          got[static_cast<size_t>(n)].push_back(l.d(n));
        }
      }
      l.eval_high();
    }
    for (int n = 0; n < kLanes; ++n) {
      const auto& w = when[static_cast<size_t>(n)];
      ASSERT_EQ(w.size(), static_cast<size_t>(burst)) << lane_name(n) << ": results of a burst of " << burst;
      for (int i = 0; i < burst; ++i) {
        EXPECT_EQ(w[static_cast<size_t>(i)], n + 1 + i) << lane_name(n) << ": result " << i << " (latency "
                                                        << w[0] << ", expected PipeDepth " << n + 1 << ")";
        EXPECT_EQ(got[static_cast<size_t>(n)][static_cast<size_t>(i)], ins[static_cast<size_t>(i)].d)
            << lane_name(n) << ": result " << i << " wrong or out of order";
      }
    }
  }
}

// Output stalled, input offered every cycle: lane n must take exactly n + 1 instructions (one per
// stage; fewer would waste a stage, more would overwrite one) and keep in_ready_o low while full.
// Then the output opens and everything drains, in order and equal to golden.
TEST_P(RtlDepths, HoldsPipeDepth) {
  const Unit u = GetParam().unit;
  Rng rng(0xF111 + static_cast<uint64_t>(u));
  Lanes& l = *lanes_;
  std::vector<Instr> ins;
  for (int i = 0; i < 2 * kLanes; ++i) ins.push_back(make_instr(u, rng));
  std::array<size_t, kLanes> taken{}, out{};
  for (int t = 0; t < 40; ++t) {
    const bool open = t >= 20;
    for (int n = 0; n < kLanes; ++n) {
      const size_t i = taken[static_cast<size_t>(n)];
      l.drive(n, i < ins.size(), i < ins.size() ? &ins[i] : nullptr, open);
    }
    l.eval_low();
    std::array<bool, kLanes> fire{};
    for (int n = 0; n < kLanes; ++n) {
      const auto k = static_cast<size_t>(n);
      fire[k] = taken[k] < ins.size() && l.in_ready(n);
      if (l.out_valid(n) && open) {
        ASSERT_LT(out[k], taken[k]) << lane_name(n) << ": output with nothing in flight";
        EXPECT_EQ(l.d(n), ins[out[k]].d) << lane_name(n) << ": result " << out[k];
        ++out[k];
      }
    }
    l.eval_high();
    for (int n = 0; n < kLanes; ++n) taken[static_cast<size_t>(n)] += fire[static_cast<size_t>(n)];
    if (t == 19) {  // stalled long enough to fill any lane
      for (int n = 0; n < kLanes; ++n) {
        EXPECT_EQ(taken[static_cast<size_t>(n)], static_cast<size_t>(n + 1))
            << lane_name(n) << ": instructions held with the output stalled";
      }
    }
  }
  for (int n = 0; n < kLanes; ++n) {
    EXPECT_EQ(out[static_cast<size_t>(n)], ins.size()) << lane_name(n) << ": results after draining";
  }
}

// Random operands through all lanes at once, each lane with its own bubbles (1/4 of cycles),
// back-pressure (1/3), holds of 50..200 cycles after every 200 results and a shared reset every
// 1009 cycles (instructions in flight are lost and sent again, so a stale result after reset shows
// as a mismatch). Cases per lane: FP4SIM_RTL_RANDOM / 5 (default 20 000).
TEST_P(RtlDepths, RandomStalls) {
  const Unit u = GetParam().unit;
  const size_t count = std::max<size_t>(1000, rtlcheck::random_count() / 5);
  Rng rng(rtlcheck::seed_base() * 7919 + static_cast<uint64_t>(u));
  std::vector<Instr> ins;
  ins.reserve(count);
  for (size_t i = 0; i < count; ++i) ins.push_back(make_instr(u, rng));

  Lanes& l = *lanes_;
  struct LaneState {
    size_t next_in = 0, next_out = 0, mismatches = 0;
    uint32_t hold = 0;
    Rng rng{0};
  };
  std::array<LaneState, kLanes> s;
  for (int n = 0; n < kLanes; ++n) s[static_cast<size_t>(n)].rng = Rng(rng.u32() + static_cast<uint64_t>(n));
  auto done = [&] {
    for (const auto& x : s) {
      if (x.next_out < count) return false;
    }
    return true;
  };
  uint64_t cycle = 0, resets = 0;
  const uint64_t limit = 40 * count + 10000;
  while (!done() && cycle < limit) {
    ++cycle;
    if (cycle % 1009 == 0) {  // reset with work in flight: each lane resends from its first missing result
      l.reset();
      for (auto& x : s) x.next_in = x.next_out;
      ++resets;
      continue;
    }
    std::array<bool, kLanes> valid{}, ready{}, fire{};
    for (int n = 0; n < kLanes; ++n) {
      auto& x = s[static_cast<size_t>(n)];
      valid[static_cast<size_t>(n)] = x.next_in < count && !x.rng.chance(1, 4);
      ready[static_cast<size_t>(n)] = x.hold == 0 && !x.rng.chance(1, 3);
      if (x.hold) --x.hold;
      l.drive(n, valid[static_cast<size_t>(n)], valid[static_cast<size_t>(n)] ? &ins[x.next_in] : nullptr,
              ready[static_cast<size_t>(n)]);
    }
    l.eval_low();
    for (int n = 0; n < kLanes; ++n) {
      const auto k = static_cast<size_t>(n);
      auto& x = s[k];
      fire[k] = valid[k] && l.in_ready(n);
      if (l.out_valid(n) && ready[k]) {
        ASSERT_LT(x.next_out, x.next_in) << lane_name(n) << ": output with nothing in flight, cycle " << cycle;
        const uint32_t got = l.d(n), want = ins[x.next_out].d;
        if (got != want && ++x.mismatches <= 5) {
          ADD_FAILURE() << lane_name(n) << ": instruction " << x.next_out << " gave " << std::hex << got
                        << ", golden " << want;
        }
        if (++x.next_out % 200 == 0) x.hold = 50 + x.rng.below(151);
      }
    }
    l.eval_high();
    for (int n = 0; n < kLanes; ++n) {
      auto& x = s[static_cast<size_t>(n)];
      x.next_in += fire[static_cast<size_t>(n)];
      ASSERT_LE(x.next_in - x.next_out, static_cast<size_t>(n + 1)) << lane_name(n) << ": more in flight than stages";
    }
    ASSERT_FALSE(l.assertion_failed()) << GetParam().name << ": an SVA check failed in cycle " << cycle
                                       << " (message above)";
  }
  for (int n = 0; n < kLanes; ++n) {
    const auto& x = s[static_cast<size_t>(n)];
    EXPECT_EQ(x.next_out, count) << lane_name(n) << ": results (stopped after " << cycle << " cycles)";
    EXPECT_EQ(x.mismatches, 0u) << lane_name(n);
  }
  EXPECT_GT(resets, 0u);
  std::printf("[ rtl      ] %s: PipeDepth 1..%d, %zu cases each checked against golden, %llu cycles, %llu resets\n",
              GetParam().name, kLanes, count, static_cast<unsigned long long>(cycle),
              static_cast<unsigned long long>(resets));
}

INSTANTIATE_TEST_SUITE_P(Units, RtlDepths, ::testing::ValuesIn(kDepthUnits),
                         [](const ::testing::TestParamInfo<DepthUnit>& i) { return std::string(i.param.name); });

}  // namespace
