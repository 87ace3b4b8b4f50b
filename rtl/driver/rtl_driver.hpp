// C++ driver for the Verilated RTL datapaths (rtl/*.sv): feeds instructions through a unit's
// valid/ready pipeline and returns the FP32 results, with the same operand conventions as the
// golden fp4sim::mma_dot / fp4sim::gemm, so that tests, benchmarks and `fp4sim replay --target rtl`
// can swap the golden model for the RTL.
//
// Units (one Verilated model each, all in the library fp4sim_rtl_models):
//   bs_dot_k64_{ue4m3,ue8m0}_{b16,b32}  Blackwell K=64 FP4 slice      golden: blackwell, mxf4nvf4 / mxf4
//   bs_dot_k32                          Blackwell K=32 FP8/FP6/FP4     golden: blackwell, mxf8f6f4
//   hif4_pe                             HiF4 64-length PE              golden: ascend-hif4, hif4
//   nvfp4_pe64                          NVFP4 64-length PE             golden: exact, mxf4nvf4 ue4m3/16
// The Verilated models hide behind a pimpl: including this header needs no Verilator headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fp4sim/format.hpp"
#include "fp4sim/mma.hpp"

namespace fp4sim::rtl {

enum class Unit : uint8_t {
  BsDotK64Ue4m3B16,
  BsDotK64Ue8m0B32,
  BsDotK64Ue8m0B16,
  BsDotK64Ue4m3B32,
  BsDotK32,
  Hif4Pe,
  Nvfp4Pe64,
};

struct UnitInfo {
  Unit unit;
  std::string_view name;    // "bs_dot_k64_ue4m3_b16", ... (also the Verilated class name after "V")
  std::string_view module;  // SystemVerilog top module
  int pipe_depth;           // latency in cycles (the PipeDepth parameter it was verilated with)
  MmaKindId kind;           // golden kind and model the unit is bit-exact with
  Model model;
  const ElemFormat* scale;  // scale format
  int block;                // elements per scale
};

std::span<const UnitInfo> all_units();
const UnitInfo& unit_info(Unit u);
bool parse_unit(std::string_view name, Unit& out);

// The unit that computes cfg (kind, element and scale formats, block) under cfg.model, if any.
std::optional<Unit> unit_for(const MmaConfig& cfg);

// The golden configuration a unit is bit-exact with (cfg.model set). elem_a / elem_b select the
// element formats of bs_dot_k32 (default E4M3); the other units ignore them.
MmaConfig golden_config(Unit u, const ElemFormat* elem_a = nullptr, const ElemFormat* elem_b = nullptr);

// True if the library was built with FP4SIM_RTL_TRACE (Verilator --trace-fst).
bool trace_supported();

// True if the units' models were verilated with their SVA checks (CMake option FP4SIM_RTL_ASSERT,
// default OFF: --assert +define+FP4SIM_SVA). A failed check makes the Driver throw
// std::runtime_error.
bool assertions_enabled();

struct DriverOptions {
  // Non-empty: write an FST waveform of everything this driver simulates (needs trace_supported();
  // otherwise the constructor throws std::runtime_error).
  std::string trace_path;
  // Non-zero: pseudo-random input bubbles and output back-pressure from this seed, to exercise the
  // valid/ready handshake (results must not change).
  uint32_t stall_seed = 0;
  // Non-zero: after every 64 results, hold the output's ready low for this many cycles (long
  // back-pressure: the pipeline fills and the input stalls; results must not change).
  uint32_t stall_hold = 0;
  // Non-zero: assert reset for one cycle every reset_every cycles while instructions are in flight.
  // The instructions accepted but not yet out are lost with it and the driver sends them again, so
  // results must not change (a unit that emits anything stale after reset fails the comparison).
  uint32_t reset_every = 0;
};

class Driver {
 public:
  explicit Driver(Unit u, DriverOptions opt = {});
  // Picks the unit with unit_for(cfg) and sets bs_dot_k32's element formats from cfg; throws
  // std::invalid_argument if no unit computes cfg.
  explicit Driver(const MmaConfig& cfg, DriverOptions opt = {});
  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  const UnitInfo& info() const;
  int k() const;             // instruction K: 64, or 32 for bs_dot_k32
  int scales_per_op() const; // scale codes per operand and instruction (K / block)

  // Element formats of bs_dot_k32 (fmt_a_i / fmt_b_i; default E4M3 x E4M3); a no-op for the other
  // units. Throws std::invalid_argument for a format kind mxf8f6f4 does not have.
  void set_formats(const ElemFormat& a, const ElemFormat& b);

  // One instruction, with mma_dot's conventions: k() element codes per operand (one per byte),
  // scales_per_op() scale codes per operand (uint32: 8-bit codes in the low byte, HiF4 words
  // whole), C as FP32 bits. Returns D as FP32 bits.
  uint32_t dot(const uint8_t* a, const uint8_t* b, const uint32_t* sfa, const uint32_t* sfb, uint32_t c);

  // bs_dot_k32 only: like run(), but instruction i drives the raw 3-bit format codes fmt_a[i] /
  // fmt_b[i] (fp4sim_pkg::Fmt*; the unused codes 5..7 included), so the format can change every
  // cycle. Throws std::invalid_argument for the other units.
  void run_formats(size_t n, const uint8_t* a, const uint8_t* b, const uint32_t* sfa, const uint32_t* sfb,
                   const uint32_t* c, const uint8_t* fmt_a, const uint8_t* fmt_b, uint32_t* d);

  // n instructions streamed back to back: instruction i reads a + i*k(), b + i*k(),
  // sfa + i*scales_per_op(), sfb + i*scales_per_op(), c[i] and writes d[i].
  void run(size_t n, const uint8_t* a, const uint8_t* b, const uint32_t* sfa, const uint32_t* sfb,
           const uint32_t* c, uint32_t* d);

  // GEMM with fp4sim::gemm's conventions (A [M,K], B [N,K], SA [M,K/block], SB [N,K/block],
  // C [M,N] or empty, D = alpha * acc in FP32): instructions are chained along K, D fed back as C
  // (Blackwell; ascend-hif4 with one rounding per 64-group, its default). nvfp4_pe64 (model exact,
  // one rounding for the whole K) only for K = 64. Throws std::invalid_argument on bad shapes.
  std::vector<float> gemm(size_t M, size_t N, size_t K, std::span<const uint8_t> a,
                          std::span<const uint32_t> sa, std::span<const uint8_t> b,
                          std::span<const uint32_t> sb, std::span<const float> c, float alpha = 1.0f);

  uint64_t cycles() const;   // clock cycles simulated since construction (reset included)
  int last_latency() const;  // cycles from accepting the last run's first instruction to its result

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fp4sim::rtl
