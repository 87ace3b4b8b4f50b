// Cycle-level SystemC models of two block-scaled matrix engines (docs/models.md):
//   TensorCore  Blackwell-style tcgen05.mma engine: a stream of M=128 x N x K instructions (K = the
//               kind's instruction K), operands staged in a modeled shared memory (SMEM) by a TMA-like
//               load engine, accumulators and scale factors in a modeled tensor memory (TMEM,
//               128 lanes x 512 columns x 32 bit), D fed back as C across K.
//   Cube        Ascend-style cube unit: a rows x cols grid of PEs, each one 64-element dot product
//               per cycle, operand buffers L0A / L0B, FP32 accumulator buffer L0C, scale buffers.
// The arithmetic is the golden library's (fp4sim::gemm on each instruction / tile, chained through
// the modeled accumulator memory), so results are bit-identical to golden gemm by construction and
// checked element by element in the tests. Timing is computed per instruction / per tile with
// temporal decoupling: each SystemC process advances its local time by whole instructions and
// synchronises with the kernel once per quantum, not once per cycle.
//
// This header is SystemC-free so that the command line can use the models without SystemC headers.
// One SystemC elaboration per process: the two modules are elaborated once, on first use, and every
// run() call is one more sc_start() on the same modules (parameters are per job; the modules are
// idle between jobs). Not thread-safe: call from one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fp4sim/mma.hpp"

namespace fp4sim::models {

// The arithmetic of one engine step: D[M,N] = C + A[M,K] . B[N,K]^T with the contract of
// fp4sim::gemm (alpha = 1, cfg.model set, K a multiple of the instruction K; C never empty here).
// Golden gemm by default; RTL in the loop plugs a Verilated unit in here (fp4sim run --rtl).
// `at` says where the step's block lies in the workload (first row of A, first row of B, first K
// element), so that a checker can name the outputs it reports.
struct StepOrigin {
  size_t row = 0, col = 0, k = 0;
};
using Datapath = std::function<std::vector<float>(const MmaConfig& cfg, const StepOrigin& at, size_t M, size_t N,
                                                  size_t K, std::span<const uint8_t> a, std::span<const uint32_t> sa,
                                                  std::span<const uint8_t> b, std::span<const uint32_t> sb,
                                                  std::span<const float> c)>;

// One GEMM D[M,N] = C + A[M,K] . B[N,K]^T on element codes (both operands K-major, one code per
// byte) and scale codes (uint32; 8-bit codes in the low byte, HiF4 words as is), as golden gemm.
struct Workload {
  MmaConfig cfg;
  Model model = Model::Blackwell;  // numerics of the datapath (Blackwell or AscendHif4; Exact and
                                   // Fp32Seq run too: the datapath is golden's)
  size_t M = 0, N = 0, K = 0;
  std::span<const uint8_t> a, b;
  std::span<const uint32_t> sa, sb;
  std::span<const float> c;  // [M,N] or empty (= +0)
  // Timing only: skip the datapath (D stays +0). What-if sweeps use it: the schedule does not
  // depend on the values. Operand spans may then be empty.
  bool timing_only = false;
  // Empty: golden gemm computes every step (on the engine's `threads`). Otherwise this does: each
  // tensor-core instruction (128 x N x K_instr) / each cube K step (m0 x n0 x k0), with C read from
  // the modeled accumulator memory and D written back there.
  Datapath datapath;
};

struct Stats {
  uint64_t cycles = 0;
  uint64_t macs = 0;          // M * N * K useful multiply-accumulates
  uint64_t instructions = 0;  // MMA instructions (tensor core) / tile steps (cube)
  uint64_t compute_cycles = 0;  // cycles the datapath computed; cycles = compute_cycles + sum(stalls)
  double peak_macs_per_cycle = 0;
  std::vector<std::pair<std::string, uint64_t>> stalls;  // cycles the datapath waited, by cause
  std::vector<std::pair<std::string, uint64_t>> bytes;   // bytes moved, by buffer / path
  uint64_t sim_time_ps = 0;   // SystemC time the job took (= cycles * clock period)
  double macs_per_cycle() const { return cycles ? static_cast<double>(macs) / static_cast<double>(cycles) : 0.0; }
  double utilization() const { return peak_macs_per_cycle > 0 ? macs_per_cycle() / peak_macs_per_cycle : 0.0; }
  uint64_t stall(const std::string& cause) const;
  uint64_t bytes_of(const std::string& buffer) const;
};

struct Result {
  std::vector<float> d;  // [M,N] FP32
  Stats stats;
};

// Progress callback: fraction of the job's instructions done, in [0, 1].
using Progress = std::function<void(double)>;

struct TensorCoreParams {
  int dot_lanes = 256;          // dot-product units; each = one instruction-K dot product per cycle
  int pipeline_depth = 16;      // cycles from operand read to accumulator write-back
  int smem_read_bytes_per_cycle = 256;  // MMA operand read port of SMEM
  int load_bytes_per_cycle = 128;       // TMA load engine: global memory -> SMEM
  int store_bytes_per_cycle = 512;      // epilogue: TMEM -> registers -> global memory
  size_t smem_bytes = 228 * 1024;       // shared memory capacity (operand stages)
  int tmem_lanes = 128;                 // must be 128 (= instruction M)
  int tmem_columns = 512;               // 32-bit columns per lane
  int tile_n = 256;                     // instruction N: 8..256, step 8 (clipped to the problem)
  int max_stages = 4;                   // SMEM pipeline stages (fewer if they do not fit)
  unsigned threads = 0;                 // host threads for the functional datapath (0 = all)
};

struct CubeParams {
  int rows = 16, cols = 16;            // PE grid: output tile per cycle
  int pe_k = 64;                       // elements per PE dot product per cycle
  int pipeline_depth = 8;              // PE pipeline (accumulator dependency)
  size_t l0a_bytes = 64 * 1024, l0b_bytes = 64 * 1024;  // operand buffers (double-buffered)
  size_t l0c_bytes = 256 * 1024;       // FP32 accumulators (double-buffered)
  size_t scale_buffer_bytes = 8 * 1024;  // per operand, for the block scales of a tile
  int l0a_load_bytes_per_cycle = 256;  // load engine into L0A (elements + scales)
  int l0b_load_bytes_per_cycle = 128;  // load engine into L0B
  int fixpipe_bytes_per_cycle = 128;   // L0C -> global memory
  unsigned threads = 0;
};

// Element storage bytes per element of a kind in the modeled memories: FP4 kinds packed two per
// byte; mxf8f6f4 one byte per element (FP6/FP4 padded to a byte, as tcgen05 f8f6f4 operands are).
double element_bytes(const MmaConfig& cfg);
// Scale bytes per block (4 for a HiF4 word, else 1).
int scale_bytes(const MmaConfig& cfg);

// Runs the workload on a model. Throws std::invalid_argument for shapes the model cannot run
// (K not a multiple of the instruction K, M or N not a multiple of 8 / the grid, bad parameters,
// operand sizes) or parameters whose buffers cannot hold one instruction / tile.
Result run_tensor_core(const TensorCoreParams& p, const Workload& w, const Progress& progress = {});
Result run_cube(const CubeParams& p, const Workload& w, const Progress& progress = {});

// Clock period of both models in SystemC time (1 ns: 1 GHz; cycles are what the stats report).
inline constexpr uint64_t kClockPs = 1000;

// SystemC time now (ps): lets a test check that the kernel's clock moved by the cycles reported.
uint64_t sim_time_ps();
// Number of sc_start() calls so far in this process (one elaboration, several jobs).
uint64_t sim_starts();

// VCD trace of both engines' pins (busy, retired tiles, instructions, compute_cycles, stall_cycles;
// signals "tensor_core.*" and "cube.*", one time unit = one cycle) for every job run after the call.
// The values change at tile boundaries (the temporal-decoupling quantum), not every cycle. Must be
// called before the first job of the process (SystemC adds no traces once simulation has started):
// throws std::logic_error otherwise, std::runtime_error if the file cannot be created. ".vcd" is
// appended unless the path ends so. The file is written under a temporary name and renamed into
// place by close_trace().
void open_trace(const std::string& path);
void close_trace();

}  // namespace fp4sim::models
