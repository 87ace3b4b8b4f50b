// fp4sim regress: seeded random differential checks of every implementation against golden
// (docs/scale-out.md). A unit is one implementation: a Verilated RTL datapath, a SystemC engine
// model, or the GPU kernels' host arithmetic. Case i of a unit is a pure function of (seed, unit, i):
//   RTL unit      case i = instruction i: one dot product (K = 64, or 32 for bs_dot_k32 with the
//                 element formats drawn per case), compared with golden mma_dot;
//   models unit   case i = output i of GEMM floor(i / 256): GEMM g (256 outputs, K and the format
//                 drawn from (seed, unit, g)) runs on the structural SystemC model, D compared with
//                 golden gemm;
//   gpu-host      case i = output i of GEMM floor(i / 64), every MMA kind configuration and every
//                 model the kernels offer, compared with golden gemm.
// The random words come from Philox4x32-10 with key = seed and counter = (word block, i, unit tag),
// so any shard of any unit can be computed anywhere, in any order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fp4sim/io/vectors.hpp"

namespace fp4sim::regress {

enum class Family : uint8_t { Rtl, Models, GpuHost };

struct UnitDef {
  std::string name;        // "bs_dot_k64_ue4m3_b16", ..., "tensor-core", "cube", "gpu-host"
  Family family;
  uint8_t id;              // rtl::Unit (Rtl) or models::EngineKind (Models)
  uint64_t group;          // outputs per generated case: 1 (an instruction) or a GEMM's outputs
  double cost;             // estimated seconds per output on one core (shard assignment only)
  std::string checks;      // what is compared, for the summary: "blackwell mxf4nvf4 ue4m3/16"
  std::string missing;     // non-empty: this build cannot run the unit, and why
};

// Every unit fp4sim knows, in the fixed order of the summary (RTL units, models, gpu-host).
const std::vector<UnitDef>& all_units();
// FNV-1a of the unit's name: the Philox counter word that separates units.
uint32_t unit_tag(const UnitDef& u);

// Outcome of one range of cases. `list` holds the first mismatching cases (at most kMaxListed).
struct Mismatch {
  uint64_t group = 0;           // case group: instruction index (RTL) or GEMM index
  uint64_t outputs = 0;         // outputs of the group that differ
  uint64_t first = 0;           // index (row-major) of the first differing output within the group
  uint32_t golden = 0, device = 0;
};
struct RangeResult {
  uint64_t checked = 0, mismatching_outputs = 0, mismatching_groups = 0;
  std::vector<Mismatch> list;
};
inline constexpr size_t kMaxListed = 64;

std::string encode(const RangeResult& r);
RangeResult decode(const std::string& s);

// Checks cases [begin, end) of unit u (begin and end multiples of u.group). `faults`: output
// indices whose device result gets bit 0 flipped before the comparison (the checker's self-test).
// Not thread-safe across Runners for models units (SystemC); RTL and gpu-host units are.
class Runner {
 public:
  Runner();
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;
  RangeResult run(const UnitDef& u, uint64_t seed, uint64_t begin, uint64_t end, const std::vector<uint64_t>& faults);

 private:
  struct Impl;
  Impl* impl_;
};

// Models units: the core slots their GEMMs use (call before the first models job of the process).
void reserve_model_cores();

// Case group g of unit u as a replayable vector case (class "regress-<unit>"), expected D = golden
// gemm's; `device` describes what the device gave (for the description).
vectors::VectorCase vector_case(const UnitDef& u, uint64_t seed, const Mismatch& m);

}  // namespace fp4sim::regress
