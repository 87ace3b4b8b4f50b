// Cycle-level SystemC models of two block-scaled matrix engines on a chip of many cores that share
// an L2 and HBM (docs/models.md):
//   TensorCore  Blackwell-style SM: TMA load engine -> SMEM stage ring -> MMA issuer (tcgen05.cp of
//               the scale factors into TMEM, tcgen05.mma, commit) -> MMA pipeline with accumulators
//               in TMEM -> epilogue (tcgen05.ld) -> optional quantize unit -> store.
//   Cube        Ascend-style AI core: MTE2 (global -> L1) -> L1 -> MTE1 (L1 -> L0A / L0B) -> PE array
//               (rows x cols PEs, pe_k elements each) accumulating in L0C -> FixPipe -> optional
//               quantize unit -> store.
// Both: a tile scheduler hands output tiles to `cores` cores; loads and stores go through one L2
// (capacity, bandwidth, latency) and HBM (bandwidth, latency) shared by all cores.
//
// Two timing modes (Timing): `cycle`, the structural model (one sc_module per unit, bounded channels,
// every wait a whole number of clock cycles; the cycle count is what the simulation reaches), and
// `analytic`, a closed-form per-tile estimate of the same mapping for large sweeps, cross-checked
// against the cycle model in the tests. The arithmetic is the golden library's in both modes (each
// instruction / K step calls the Workload's datapath hook on the operands held in the modeled
// buffers, chained through the modeled accumulator memory; without a hook golden gemm runs each
// tensor-core SMEM stage in one call, the same chain), so D is bit-identical to golden gemm.
//
// SystemC-free header: the command line uses the models without SystemC headers. One elaboration per
// process (SystemC's rule): both engines' modules are elaborated on the first job with enough core
// slots for `reserve_cores()` (default: the defaults' core counts); every job is one more sc_start()
// on the same modules. Not thread-safe: call from one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
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
  Model model = Model::Blackwell;  // numerics of the datapath (Blackwell or AscendHif4; Fp32Seq runs
                                   // too: the datapath is golden's)
  size_t M = 0, N = 0, K = 0;
  std::span<const uint8_t> a, b;
  std::span<const uint32_t> sa, sb;
  std::span<const float> c;  // [M,N] or empty (= +0)
  // Timing only: skip the datapath (D stays +0). What-if sweeps use it: the schedule does not
  // depend on the values. Operand spans may then be empty.
  bool timing_only = false;
  // Empty: golden gemm computes every step (on `threads` host threads). Otherwise this does: each
  // tensor-core instruction (128 x N x K_instr) / each cube K step (m0 x n0 x k0), with C read from
  // the modeled accumulator memory and D written back there.
  Datapath datapath;
  unsigned threads = 0;  // host threads for golden gemm steps (0 = all)
};

enum class EngineKind : uint8_t { TensorCore, Cube };
enum class Timing : uint8_t { Cycle, Analytic };
std::string_view engine_name(EngineKind e);  // "tensor-core", "cube"
std::string_view timing_name(Timing t);      // "cycle", "analytic"
bool parse_timing(std::string_view s, Timing& out);

// Format the optional output quantize unit encodes D to (each with golden's rule; no per-tensor
// scale: the unit sees one tile at a time, so NVFP4 runs with PTS off, docs/models.md).
enum class OutFormat : uint8_t { None, Nvfp4, Mxfp8, Hif4 };

// Order in which the tile scheduler hands out output tiles: `n` = along N first (consecutive tiles
// share the A rows), `m` = along M first (consecutive tiles share the B rows).
enum class Raster : uint8_t { Auto, AlongN, AlongM };
// D as the epilogue stores it when no quantize unit runs (registers -> SMEM -> TMA store).
enum class OutDtype : uint8_t { Fp32, Bf16, Fp16, Fp8 };
enum class SwapAb : uint8_t { Auto, Off, On };
// HBM page policy: keep a row open after an access (hits on it are cheap, another row conflicts) or
// precharge after every access (each access activates).
enum class HbmPage : uint8_t { Open, Closed };
std::string_view out_dtype_name(OutDtype d);
int out_dtype_bytes(OutDtype d);
std::string_view raster_name(Raster r);  // "auto", "n", "m" (set_param's choices)

// Every parameter of one engine and its chip. Settable by key (set_param), listed with ranges and
// units by param_table(); docs/models.md lists the defaults and their sources. Mapping keys at 0 /
// "auto" let the mapper choose; any other value pins that part of the mapping.
struct Params {
  EngineKind engine = EngineKind::TensorCore;
  // ---- chip: cores and the shared memory system ----
  int64_t cores = 0;                  // SMs / AI cores running the layer together
  int64_t dram_bytes_per_cycle = 0;   // HBM bandwidth of the chip
  int64_t dram_latency = 0;           // cycles from request to first data, HBM
  int64_t l2_bytes = 0;               // L2 capacity (LRU over loaded tiles' slabs)
  int64_t l2_bytes_per_cycle = 0;     // L2 bandwidth of the chip (all cores together)
  int64_t l2_latency = 0;             // cycles from request to data, L2 hit
  // The L2 split per die (B200: two dies joined by NV-HBI): each request's bytes live on one die
  // (by their key), the cores are split between the dies, and a request homed on the other die
  // crosses the die-to-die link. l2_bytes, l2_bytes_per_cycle and dram_bytes_per_cycle are the chip's,
  // shared equally by the dies.
  int64_t dies = 1;
  int64_t die_link_bytes_per_cycle = 0;  // one die's outgoing link (one direction)
  int64_t die_link_latency = 0;          // cycles one crossing adds
  int64_t die_link_queue = 0;            // requests one die may have in flight to another (credits)
  // Finite queues in front of HBM: misses in flight per die's L2 (MSHRs; merged misses share one)
  // and the L2 -> HBM request queue of each die.
  int64_t l2_mshrs = 0;
  int64_t dram_queue = 0;
  // HBM as pseudo-channels of banks with row buffers (docs/models.md "HBM"), split equally over the
  // dies; hbm_channels = 0: an ideal port of dram_bytes_per_cycle and dram_latency alone. The
  // timings are nanoseconds (HBM keeps them whatever the SM clock).
  int64_t hbm_channels = 0;          // pseudo-channels of the chip
  int64_t hbm_banks = 0;             // banks per pseudo-channel
  int64_t hbm_page_bytes = 0;        // row buffer of one pseudo-channel
  int64_t hbm_interleave_bytes = 0;  // bytes per pseudo-channel before the address moves on
  int64_t hbm_t_rcd_ns = 0, hbm_t_rp_ns = 0, hbm_t_ras_ns = 0, hbm_t_faw_ns = 0, hbm_t_turnaround_ns = 0;
  HbmPage hbm_page_policy = HbmPage::Open;
  int64_t core_load_bytes_per_cycle = 0;   // one core's load link (TMA / MTE2 into SMEM / L1)
  int64_t core_store_bytes_per_cycle = 0;  // one core's store link
  // ---- datapath ----
  int64_t dot_lanes = 0;       // tensor core: dot-product units (each one K_instr dot product per cycle)
  int64_t rows = 0, cols = 0;  // cube: PE grid
  int64_t pe_k = 0;            // cube: elements per PE dot product per cycle
  int64_t pipeline_depth = 0;  // cycles from operand read to accumulator write (the RTL unit's latency)
  // ---- on-core memories and their ports ----
  int64_t smem_bytes = 0;                 // tensor core: shared memory for operand stages
  int64_t smem_read_bytes_per_cycle = 0;  // tensor core: MMA operand read port
  int64_t tmem_columns = 0;               // tensor core: TMEM = 128 lanes x columns x 32 bit
  int64_t tmem_cp_bytes_per_cycle = 0;    // tensor core: tcgen05.cp SMEM -> TMEM (scale factors)
  int64_t tmem_ld_bytes_per_cycle = 0;    // tensor core: tcgen05.ld TMEM -> registers (epilogue)
  int64_t l1_bytes = 0;                   // cube: L1 buffer
  int64_t l0a_bytes = 0, l0b_bytes = 0;   // cube: operand buffers (double-buffered)
  int64_t l0c_bytes = 0;                  // cube: FP32 accumulators (double-buffered)
  int64_t scale_buffer_bytes = 0;         // cube: per operand, block scales beside L0A / L0B
  int64_t mte1_bytes_per_cycle = 0;       // cube: L1 -> L0A and L1 -> L0B, each
  int64_t fixpipe_bytes_per_cycle = 0;    // cube: L0C -> FixPipe
  // ---- output quantize unit ----
  OutFormat out_format = OutFormat::None;
  int64_t quant_elems_per_cycle = 0;      // amax + scale + encode throughput
  // ---- mapping (0 / Auto: chosen by the mapper) ----
  int64_t tile_m = 0;     // output tile rows (tensor core: 128, the instruction M)
  int64_t tile_n = 0;     // output tile columns (tensor core: the instruction N, 8..256 step 8)
  int64_t tile_k = 0;     // K per SMEM stage (tensor core) / per L0 step (cube)
  int64_t l1_k = 0;       // cube: K per L1 chunk (a multiple of tile_k)
  int64_t stages = 0;     // tensor core: SMEM stages
  Raster raster = Raster::Auto;
  int64_t mapper_candidates = 0;  // cycle mode: best analytic mappings simulated by the mapper
  // ---- the kernel around the datapath (docs/models.md "What real kernels do") ----
  int64_t clock_mhz = 0;        // clock the per-cycle parameters are stated at
  int64_t clock_fp4_mhz = 0;    // sustained clock under the power limit, 4-bit operand kinds
  int64_t clock_fp8_mhz = 0;    // sustained clock under the power limit, other kinds
  int64_t launch_ns = 0;        // per-kernel launch + prologue before the first load
  OutDtype out_dtype = OutDtype::Fp32;  // D's stored type (no quantize unit)
  SwapAb swap_ab = SwapAb::Auto;        // tensor core: whether the mapper may / must swap A and B
  // Tensor core: split-K, the K steps of each output tile in this many parts, each part a unit of
  // work, the last one adding the others' FP32 partial tiles (docs/models.md "Split-K"). 0: the
  // mapper's choice (offered for timing-only work only: the sums change D's FP32 order); 1: none.
  int64_t split_k = 0;
  // Tensor core: SMs per thread-block cluster (cta_group::2 pairs and TMA-multicast groups run as
  // clusters). A cluster launches only whole, inside one GPC (gpcs). 1: none (the mapper's kernel);
  // 0: the mapper's choice, none or two SMs (two pairs) along N or along M, as an autotuner picks.
  int64_t cluster_sms = 1;
  // Tensor core: SMs of a cluster along M (CUTLASS's cluster shape M; the rest lie along N); 0: one
  // SM, or the pair. A cluster covers cluster_m / (SMs per MMA) tiles of M: where M has fewer tiles
  // (decode), the cluster's cores for the missing ones idle.
  int64_t cluster_m = 0;
  // Tensor core: GPCs the chip's SMs are spread over (in TPCs of two, as evenly as they divide); a
  // cluster runs inside one GPC, so no more clusters run at once than the GPCs hold. 0: no limit.
  int64_t gpcs = 0;
  // Tensor core: clusters that run at once when a part holds fewer than its GPCs spread evenly
  // would (which TPCs are fused off differs from part to part): what cudaOccupancyMaxActiveClusters
  // reports for the kernel's cluster size. 0: what the GPCs hold.
  int64_t max_clusters = 0;
  // Tensor core: CTAs per MMA (tcgen05 cta_group). 2: a pair of SMs of one cluster runs each
  // 256-row MMA, each SM holding its 128 rows of A and of D and loading half of B (the pair's MMA
  // reads B from both SMs' SMEM). The models run a pair as one core of twice the SM's datapath,
  // ports and SMEM with a 256-row instruction; statistics count SMs (docs/models.md). cluster_sms
  // is then 1 (each pair alone) or even.
  int64_t cta_group = 1;
};

Params default_params(EngineKind e);  // a B200-class SM / a 910-class AI core (docs/models.md)
// pipeline_depth = 0 means this: the latency of the RTL unit that computes the configuration
// (rtl::unit_for), measured on the Verilated model by tests/rtl/test_unit_latency.cpp.
int64_t rtl_pipeline_depth(EngineKind e, const MmaConfig& cfg);

// One settable parameter. Numeric keys take integers in [min, max]; enum keys one of `choices`.
struct ParamDesc {
  std::string_view key, unit, help;
  int64_t min = 0, max = 0;
  std::vector<std::string_view> choices;  // non-empty for enum keys
};
// Keys that apply to an engine, in CSV column order.
const std::vector<ParamDesc>& param_table(EngineKind e);
// Sets p's parameter `key` from text. Throws std::invalid_argument with a one-line message naming
// the key (unknown key, key of the other engine, not a number, out of range, not a choice).
void set_param(Params& p, std::string_view key, std::string_view value);
std::string get_param(const Params& p, std::string_view key);

// The mapping a run used (all parts resolved).
struct Mapping {
  int64_t tile_m = 0, tile_n = 0, tile_k = 0, l1_k = 0, stages = 0;
  Raster raster = Raster::AlongN;
  // Cores the kernel runs on (its grid; 0: every core of the chip). The mapper's own candidates use
  // every core; a candidate passed in RunOptions::also may use fewer (a smaller chip's best mapping).
  int64_t cores = 0;
  // Tensor core: the kernel computes D^T = B . A^T (A and B swap roles, so that a large N fills the
  // instruction's 128 rows when M is small); D is stored transposed back.
  bool swap_ab = false;
  // Loads carry an L2 no-allocate hint (TMA's .L2::cache_hint with an evict-first / no-allocate
  // policy): fills pass through the L2 without staying, so the chip's L2 behaves as none. A kernel
  // uses it when keeping lines would only evict what it reuses; whatif offers it when L2 grows from
  // zero, so that more L2 is never slower than none.
  bool l2_no_allocate = false;
  // Tensor core: split-K parts per tile (1: none). Parts 0 .. S-2 of every tile are handed out first
  // and store FP32 partial tiles; part S-1 runs its K steps from C, then loads them with its last
  // step and adds them in part order (the fixup).
  int64_t split_k = 1;
  // Tensor core: the kernel's cluster, in its cores (SMs, or pairs with cta_group 2 inside the
  // models; SMs in the statistics), and the cluster's cores along M.
  int64_t cluster_sms = 1, cluster_m = 1;
  std::string str() const;  // "tile_m=128 tile_n=64 tile_k=256 stages=4 raster=n" (+ " cores=N", " swap_ab", " l2_no_allocate", " split_k=S")
};

struct Stats {
  uint64_t cycles = 0;          // layer time: first request to the last byte of D stored
  uint64_t macs = 0;            // M * N * K useful multiply-accumulates
  uint64_t instructions = 0;    // MMA instructions (tensor core) / K steps (cube), all cores
  uint64_t tiles = 0;           // output tiles
  int64_t cores = 0;            // cores of the chip (some may get no tile)
  uint64_t compute_cycles = 0;  // datapath busy cycles summed over cores;
                                // cores * cycles = compute_cycles + sum(stalls)
  double peak_macs_per_cycle = 0;  // of the chip (all cores)
  std::vector<std::pair<std::string, uint64_t>> stalls;  // datapath idle cycles by cause, all cores
  std::vector<std::pair<std::string, uint64_t>> bytes;   // bytes moved per level / path
  Mapping mapping;
  uint64_t mappings_evaluated = 0;  // candidates the mapper simulated (cycle) or estimated (analytic)
  Timing timing = Timing::Cycle;
  uint64_t sim_time_ps = 0;     // cycle mode: SystemC time of the job (= (cycles - launch_cycles) * clock period)
  double clock_mhz = 0;         // the clock `cycles` run at (sustained, for the job's operand kind)
  uint64_t launch_cycles = 0;   // of `cycles`: the kernel's launch + prologue (launch_ns at clock_mhz)
  double time_us() const { return clock_mhz > 0 ? static_cast<double>(cycles) / clock_mhz : 0.0; }
  double compute_roofline_cycles = 0;  // MACs / chip peak
  double memory_roofline_cycles = 0;   // compulsory HBM bytes (A, B, scales, C, D once) / HBM bandwidth
  double macs_per_cycle() const { return cycles ? static_cast<double>(macs) / static_cast<double>(cycles) : 0.0; }
  double utilization() const { return peak_macs_per_cycle > 0 ? macs_per_cycle() / peak_macs_per_cycle : 0.0; }
  uint64_t stall(const std::string& cause) const;
  uint64_t bytes_of(const std::string& level) const;
};
// Stall causes and byte levels of an engine, in the order Stats lists them (CSV columns).
const std::vector<std::string_view>& stall_causes(EngineKind e);
const std::vector<std::string_view>& byte_levels(EngineKind e);

struct Result {
  std::vector<float> d;  // [M,N] FP32
  // With an output quantize unit: D encoded by it, as golden quantize(out_format, D, pts off) gives.
  std::vector<uint8_t> q_codes;       // [M,N] element codes
  std::vector<uint32_t> q_scales;     // [M, N/block] scale codes (HiF4: words)
  Stats stats;
};

// Progress callback: fraction of the job's output tiles done, in [0, 1].
using Progress = std::function<void(double)>;

struct RunOptions {
  Timing timing = Timing::Cycle;
  Progress progress;
  // More candidates for the mapper (skipped when they do not fit): whatif passes the mapping chosen
  // for the same configuration with less of one resource, so that more of it is never slower.
  std::vector<Mapping> also;
};

// Element storage bytes per element of a kind in the modeled memories: FP4 kinds packed two per
// byte; mxf8f6f4 one byte per element (FP6/FP4 padded to a byte, as tcgen05 f8f6f4 operands are).
double element_bytes(const MmaConfig& cfg);
// Scale bytes per block (4 for a HiF4 word, else 1).
int scale_bytes(const MmaConfig& cfg);

// Runs the workload. Throws std::invalid_argument for what the model cannot run (K not a multiple
// of the instruction K, bad parameters, operand sizes, a pinned mapping that does not fit, buffers
// too small for any mapping), with a one-line message.
Result run(const Params& p, const Workload& w, const RunOptions& o = {});

// The mapper alone: the mapping run() would use in analytic mode and its estimate.
struct MapChoice {
  Mapping mapping;
  Stats estimate;  // analytic
};
std::vector<MapChoice> rank_mappings(const Params& p, const Workload& w);  // best first; throws as run()

// Core slots to elaborate for an engine (must come before the first job; later jobs with more
// cores throw std::invalid_argument). Default: the default core count.
void reserve_cores(EngineKind e, int64_t cores);

// Clock period in SystemC time (1 ns: cycles are what the stats report; clock_ghz only converts).
inline constexpr uint64_t kClockPs = 1000;

// SystemC time now (ps): lets a test check that the kernel's clock moved by the cycles reported.
uint64_t sim_time_ps();
// Number of sc_start() calls so far in this process (one elaboration, several jobs).
uint64_t sim_starts();

// VCD trace of every channel of core 0 of both engines and of the memory system: per cycle valid
// (occupancy > 0), ready (occupancy < capacity) and occupancy, plus each datapath's busy flag, for
// every cycle-mode job run after the call (time continues across jobs; one time unit = one cycle).
// Must be called before the first job (SystemC adds no traces once simulation has started): throws
// std::logic_error otherwise, std::runtime_error if the file cannot be created. ".vcd" is appended
// unless the path ends so; written under a temporary name and renamed by close_trace().
void open_trace(const std::string& path);
void close_trace();

}  // namespace fp4sim::models
