// Model parameters as data: defaults with their sources (docs/models.md), one table of keys per
// engine, text setters with one-line errors naming the key. No SystemC here.
#include <algorithm>
#include <charconv>
#include <sstream>
#include <stdexcept>
#include <string>

#include "fp4sim/models/models.hpp"
#include "fp4sim/models/unit_latency.hpp"

namespace fp4sim::models {

std::string_view engine_name(EngineKind e) { return e == EngineKind::TensorCore ? "tensor-core" : "cube"; }
std::string_view timing_name(Timing t) { return t == Timing::Cycle ? "cycle" : "analytic"; }
bool parse_timing(std::string_view s, Timing& out) {
  if (s == "cycle") return out = Timing::Cycle, true;
  if (s == "analytic") return out = Timing::Analytic, true;
  return false;
}

namespace {

constexpr std::string_view kOutFormats[] = {"none", "nvfp4", "mxfp8", "hif4"};
constexpr std::string_view kRasters[] = {"auto", "n", "m"};
constexpr std::string_view kOutDtypes[] = {"fp32", "bf16", "fp16", "fp8"};
constexpr std::string_view kSwaps[] = {"auto", "off", "on"};
constexpr std::string_view kPages[] = {"open", "closed"};

// One key: where it lives in Params, its unit, range and help. `tc` / `cube`: which engines have it.
struct Key {
  std::string_view key, unit, help;
  int64_t Params::*field;  // numeric keys
  int64_t min, max;
  bool tc, cube;
  int enum_id;  // 0 numeric, 1 out_format, 2 raster, 3 out_dtype, 4 swap_ab, 5 hbm_page_policy
};

constexpr int64_t kMaxI = int64_t{1} << 40;

// The order here is the CSV column order.
constexpr Key kKeys[] = {
    {"cores", "cores", "SMs / AI cores running the layer together", &Params::cores, 1, 4096, true, true, 0},
    {"dram_bytes_per_cycle", "B/cycle", "HBM bandwidth of the chip", &Params::dram_bytes_per_cycle, 1, kMaxI, true,
     true, 0},
    {"dram_latency", "cycles", "HBM request-to-data latency", &Params::dram_latency, 0, 1 << 20, true, true, 0},
    {"l2_bytes", "B", "L2 capacity", &Params::l2_bytes, 0, kMaxI, true, true, 0},
    {"l2_bytes_per_cycle", "B/cycle", "L2 bandwidth of the chip (all cores)", &Params::l2_bytes_per_cycle, 1, kMaxI,
     true, true, 0},
    {"l2_latency", "cycles", "L2 hit latency", &Params::l2_latency, 0, 1 << 20, true, true, 0},
    {"dies", "dies", "dies the cores, the L2 and HBM are split over (requests homed on another die cross the link)",
     &Params::dies, 1, 8, true, true, 0},
    {"die_link_bytes_per_cycle", "B/cycle", "die-to-die link, one die's outgoing direction",
     &Params::die_link_bytes_per_cycle, 1, kMaxI, true, true, 0},
    {"die_link_latency", "cycles", "die-to-die link, one crossing", &Params::die_link_latency, 0, 1 << 20, true, true, 0},
    {"die_link_queue", "requests", "requests one die may have in flight to another die (link credits)",
     &Params::die_link_queue, 1, 1 << 20, true, true, 0},
    {"l2_mshrs", "misses", "L2 misses in flight per die (MSHRs)", &Params::l2_mshrs, 1, 1 << 20, true, true, 0},
    {"dram_queue", "requests", "L2 -> HBM request queue per die", &Params::dram_queue, 1, 1 << 20, true, true, 0},
    {"hbm_channels", "channels", "HBM pseudo-channels of the chip (0 = an ideal port: bandwidth and latency only)",
     &Params::hbm_channels, 0, 1 << 16, true, true, 0},
    {"hbm_banks", "banks", "banks per HBM pseudo-channel", &Params::hbm_banks, 1, 1024, true, true, 0},
    {"hbm_page_bytes", "B", "HBM row buffer (page) per pseudo-channel", &Params::hbm_page_bytes, 32, 1 << 20, true,
     true, 0},
    {"hbm_interleave_bytes", "B", "bytes per pseudo-channel before the address moves to another",
     &Params::hbm_interleave_bytes, 32, 1 << 20, true, true, 0},
    {"hbm_t_rcd_ns", "ns", "HBM activate to column access (tRCD)", &Params::hbm_t_rcd_ns, 0, 100000, true, true, 0},
    {"hbm_t_rp_ns", "ns", "HBM precharge (tRP)", &Params::hbm_t_rp_ns, 0, 100000, true, true, 0},
    {"hbm_t_ras_ns", "ns", "HBM activate to precharge, least (tRAS)", &Params::hbm_t_ras_ns, 0, 100000, true, true, 0},
    {"hbm_t_faw_ns", "ns", "HBM window of four activates per pseudo-channel (tFAW)", &Params::hbm_t_faw_ns, 0, 100000,
     true, true, 0},
    {"hbm_t_turnaround_ns", "ns", "HBM bus turnaround between reads and writes", &Params::hbm_t_turnaround_ns, 0,
     100000, true, true, 0},
    {"hbm_page_policy", "", "HBM page policy: open (rows stay open) or closed (precharge after each access)", nullptr,
     0, 0, true, true, 5},
    {"core_load_bytes_per_cycle", "B/cycle", "one core's load link (TMA / MTE2)", &Params::core_load_bytes_per_cycle,
     1, kMaxI, true, true, 0},
    {"core_store_bytes_per_cycle", "B/cycle", "one core's store link", &Params::core_store_bytes_per_cycle, 1, kMaxI,
     true, true, 0},
    {"dot_lanes", "units", "dot-product units per SM (one K_instr dot product per cycle each)", &Params::dot_lanes, 1,
     1 << 16, true, false, 0},
    {"rows", "PEs", "PE grid rows", &Params::rows, 1, 1024, false, true, 0},
    {"cols", "PEs", "PE grid columns", &Params::cols, 1, 1024, false, true, 0},
    {"pe_k", "elements", "elements per PE dot product per cycle", &Params::pe_k, 1, 4096, false, true, 0},
    {"pipeline_depth", "cycles", "operand read to accumulator write (0 = the RTL unit's measured latency)",
     &Params::pipeline_depth, 0, 4096, true, true, 0},
    {"smem_bytes", "B", "shared memory for operand stages", &Params::smem_bytes, 1, kMaxI, true, false, 0},
    {"smem_read_bytes_per_cycle", "B/cycle", "SMEM operand read port of the MMA", &Params::smem_read_bytes_per_cycle,
     1, kMaxI, true, false, 0},
    {"tmem_columns", "columns", "TMEM 32-bit columns per lane (128 lanes)", &Params::tmem_columns, 32, 1 << 16, true,
     false, 0},
    {"tmem_cp_bytes_per_cycle", "B/cycle", "tcgen05.cp SMEM -> TMEM", &Params::tmem_cp_bytes_per_cycle, 1, kMaxI,
     true, false, 0},
    {"tmem_ld_bytes_per_cycle", "B/cycle", "tcgen05.ld TMEM -> registers", &Params::tmem_ld_bytes_per_cycle, 1, kMaxI,
     true, false, 0},
    {"l1_bytes", "B", "L1 buffer", &Params::l1_bytes, 1, kMaxI, false, true, 0},
    {"l0a_bytes", "B", "L0A (double-buffered)", &Params::l0a_bytes, 1, kMaxI, false, true, 0},
    {"l0b_bytes", "B", "L0B (double-buffered)", &Params::l0b_bytes, 1, kMaxI, false, true, 0},
    {"l0c_bytes", "B", "L0C FP32 accumulators (double-buffered)", &Params::l0c_bytes, 1, kMaxI, false, true, 0},
    {"scale_buffer_bytes", "B", "block-scale buffer per operand", &Params::scale_buffer_bytes, 1, kMaxI, false, true,
     0},
    {"mte1_bytes_per_cycle", "B/cycle", "MTE1 L1 -> L0A and L1 -> L0B, each", &Params::mte1_bytes_per_cycle, 1, kMaxI,
     false, true, 0},
    {"fixpipe_bytes_per_cycle", "B/cycle", "FixPipe L0C read", &Params::fixpipe_bytes_per_cycle, 1, kMaxI, false,
     true, 0},
    {"out_format", "", "output quantize unit: none, nvfp4, mxfp8, hif4", nullptr, 0, 0, true, true, 1},
    {"quant_elems_per_cycle", "elements/cycle", "quantize unit throughput", &Params::quant_elems_per_cycle, 1, kMaxI,
     true, true, 0},
    {"tile_m", "rows", "output tile rows (0 = mapper)", &Params::tile_m, 0, 1 << 20, true, true, 0},
    {"tile_n", "columns", "output tile columns (0 = mapper)", &Params::tile_n, 0, 1 << 20, true, true, 0},
    {"tile_k", "elements", "K per SMEM stage / per L0 step (0 = mapper)", &Params::tile_k, 0, 1 << 24, true, true, 0},
    {"l1_k", "elements", "K per L1 chunk (0 = mapper)", &Params::l1_k, 0, 1 << 24, false, true, 0},
    {"stages", "stages", "SMEM stages (0 = mapper)", &Params::stages, 0, 64, true, false, 0},
    {"raster", "", "tile order: auto, n (along N first), m (along M first)", nullptr, 0, 0, true, true, 2},
    {"mapper_candidates", "mappings", "cycle mode: mappings the mapper simulates at least (1 = the best estimate only)", &Params::mapper_candidates, 1,
     64, true, true, 0},
    // The kernel around the datapath (docs/models.md "What real kernels do").
    {"clock_mhz", "MHz", "clock the per-cycle parameters are stated at", &Params::clock_mhz, 1, 100000, true, true, 0},
    {"clock_fp4_mhz", "MHz", "sustained clock under the power limit, 4-bit operand kinds", &Params::clock_fp4_mhz, 1,
     100000, true, true, 0},
    {"clock_fp8_mhz", "MHz", "sustained clock under the power limit, other operand kinds", &Params::clock_fp8_mhz, 1,
     100000, true, true, 0},
    {"launch_ns", "ns", "per-kernel launch and prologue before the first load", &Params::launch_ns, 0, 1000000000, true,
     true, 0},
    {"out_dtype", "", "D's stored type without a quantize unit: fp32, bf16, fp16, fp8", nullptr, 0, 0, true, true, 3},
    {"swap_ab", "", "compute D^T = B . A^T: auto (mapper), off, on", nullptr, 0, 0, true, false, 4},
    {"split_k", "parts", "K split over this many units per tile, the last summing them (0 = mapper, timing-only work; 1 = none)",
     &Params::split_k, 0, 256, true, false, 0},
    {"cluster_sms", "SMs", "SMs per thread-block cluster, whole clusters only (0 = mapper: none or 2 along N / M; 1 = none)",
     &Params::cluster_sms, 0, 16, true, false, 0},
    {"cluster_m", "SMs", "SMs of a cluster along M (0 = one SM or the pair); tiles of M it lacks idle their SMs",
     &Params::cluster_m, 0, 16, true, false, 0},
    {"gpcs", "GPCs", "GPCs the SMs are spread over; a cluster runs inside one (0 = no limit)", &Params::gpcs, 0, 4096,
     true, false, 0},
    {"max_clusters", "clusters", "clusters at once, as cudaOccupancyMaxActiveClusters reports (0 = what the GPCs hold)",
     &Params::max_clusters, 0, 1 << 20, true, false, 0},
    {"cta_group", "SMs", "SMs per MMA: 1, or 2 (a cta_group::2 pair: 256-row instruction, B split over the pair)",
     &Params::cta_group, 1, 2, true, false, 0},
};

bool applies(const Key& k, EngineKind e) { return e == EngineKind::TensorCore ? k.tc : k.cube; }

const Key* find_key(std::string_view key) {
  for (const Key& k : kKeys)
    if (k.key == key) return &k;
  return nullptr;
}

std::vector<ParamDesc> make_table(EngineKind e) {
  std::vector<ParamDesc> t;
  for (const Key& k : kKeys) {
    if (!applies(k, e)) continue;
    ParamDesc d{k.key, k.unit, k.help, k.min, k.max, {}};
    if (k.enum_id == 1) d.choices.assign(std::begin(kOutFormats), std::end(kOutFormats));
    if (k.enum_id == 2) d.choices.assign(std::begin(kRasters), std::end(kRasters));
    if (k.enum_id == 3) d.choices.assign(std::begin(kOutDtypes), std::end(kOutDtypes));
    if (k.enum_id == 4) d.choices.assign(std::begin(kSwaps), std::end(kSwaps));
    if (k.enum_id == 5) d.choices.assign(std::begin(kPages), std::end(kPages));
    t.push_back(std::move(d));
  }
  return t;
}

}  // namespace

Params default_params(EngineKind e) {
  Params p;
  p.engine = e;
  p.out_format = OutFormat::None;
  p.raster = Raster::Auto;
  p.mapper_candidates = 8;
  // The kernel around the datapath (docs/models.md "What real kernels do"; the fitted values and the
  // points they were fitted on: "Calibration").
  p.out_dtype = OutDtype::Bf16;  // what the public GEMMs of kernels.csv store
  p.swap_ab = SwapAb::Auto;
  p.cluster_sms = 1;  // the mapper's kernel: one-SM CTAs, no cluster
  p.cta_group = 1;
  // HBM organization and timing: JEDEC HBM3 pseudo-channels (32 per stack, 1 KiB pages, 4 bank
  // groups of 4 banks per stack ID) and the timings of Ramulator 2's HBM3 preset, in ns (docs/models.md
  // "HBM"); the interleave is an fp4sim choice.
  p.hbm_page_bytes = 1024;
  p.hbm_interleave_bytes = 256;
  p.hbm_t_rcd_ns = 7;
  p.hbm_t_rp_ns = 7;
  p.hbm_t_ras_ns = 17;
  p.hbm_t_faw_ns = 15;
  p.hbm_t_turnaround_ns = 10;
  p.hbm_page_policy = HbmPage::Open;
  if (e == EngineKind::TensorCore) {
    p.hbm_channels = 256;  // 8 HBM3e stacks x 32 pseudo-channels
    p.hbm_banks = 32;      // 8-high stacks: two stack IDs of 16 banks
    p.clock_mhz = 1856;      // the tensor clock the dense FP4 peak implies
    p.clock_fp4_mhz = 1050;  // fitted: sustained NVFP4 / MXFP4 rate of the CUTLASS GEMMs
    p.clock_fp8_mhz = 1300;  // fitted: sustained MXFP8 rate
    p.launch_ns = 750;       // fitted: launch + prologue as a profiler's kernel duration shows it
  } else {
    p.clock_mhz = 1800;      // cube_freq of CANN's Ascend910B2.ini
    p.clock_fp4_mhz = 1800;  // no sign of a lower sustained clock (0.89 of the FP16 peak measured)
    p.clock_fp8_mhz = 1800;
    p.launch_ns = 10000;     // fitted: torch_npu matmul's fixed cost (1024^3 point)
    p.hbm_channels = 64;     // 4 HBM2e stacks x 16 pseudo-channels
    p.hbm_banks = 16;        // 4 bank groups of 4, one stack ID
  }
  if (e == EngineKind::TensorCore) {
    // B200-class (HGX B200), clock 1.856 GHz (the tensor clock the dense FP4 peak implies).
    p.cores = 148;
    p.gpcs = 8;                     // 8 GPCs of 10 TPCs (20 SMs), 74 of the 80 TPCs enabled
    p.dram_bytes_per_cycle = 4133;  // 7.67 TB/s / 1.856 GHz
    p.dram_latency = 860;           // pointer-chase DRAM latency
    p.l2_bytes = 126500000;         // 126.5 MB
    p.l2_bytes_per_cycle = 16384;   // estimate (not published)
    p.l2_latency = 280;           // near die: 150 ns by pointer chase at 1.856 GHz
    p.dies = 2;                   // one L2 partition and four HBM stacks per die, 74 SMs each
    p.die_link_bytes_per_cycle = 2694;  // NV-HBI 10 TB/s both directions: 5 TB/s / 1.856 GHz
    p.die_link_latency = 150;     // a far access adds about 300 cycles (SemiAnalysis): 150 each way
    p.die_link_queue = 512;       // estimate (2 MiB of 4 KiB requests in flight per direction)
    p.l2_mshrs = 768;             // estimate: 1.75 x a die's HBM bytes in flight, 2066 x 860 / 4 KiB = 434
    p.dram_queue = 448;           // estimate: one HBM latency of 4 KiB requests per die (434)
    p.core_load_bytes_per_cycle = 128;   // estimate (not published)
    p.core_store_bytes_per_cycle = 128;  // estimate
    p.dot_lanes = 256;  // 256 x 64 = 16384 FP4 MAC/cycle/SM = 9 PFLOPS dense / 148 SMs / 1.856 GHz
    p.pipeline_depth = 0;  // the RTL unit's latency (rtl_pipeline_depth)
    p.smem_bytes = 228 * 1024;
    p.smem_read_bytes_per_cycle = 128;  // SS MMAs of N < 128 are SMEM-bound at about 128 B/cycle (SemiAnalysis)
    p.tmem_columns = 512;
    p.tmem_cp_bytes_per_cycle = 128;  // estimate
    p.tmem_ld_bytes_per_cycle = 512;  // estimate: 32 lanes x 32 bit x 4 sub-partitions
    p.quant_elems_per_cycle = 64;     // estimate
  } else {
    // 910B2-class (Atlas A2): 24 AI cores at 1.8 GHz, CANN SoC ini figures.
    p.cores = 24;
    p.dram_bytes_per_cycle = 889;  // 1.6 TB/s / 1.8 GHz (third-party figure)
    p.dram_latency = 600;          // estimate
    p.l2_bytes = 192 * 1024 * 1024;
    p.l2_bytes_per_cycle = 2640;  // 24 cores x 110 B/cycle L2 read rate
    p.l2_latency = 250;           // estimate
    p.dies = 1;                   // one die (the cube chip's L2 is one pool)
    p.die_link_bytes_per_cycle = 2640;  // (no link with one die)
    p.die_link_latency = 0;
    p.die_link_queue = 512;
    p.l2_mshrs = 256;             // estimate: 2 x HBM bytes in flight, 889 x 600 / 4 KiB = 130
    p.dram_queue = 128;           // estimate: one HBM latency of 4 KiB requests (130)
    p.core_load_bytes_per_cycle = 110;   // L2 read rate per core
    p.core_store_bytes_per_cycle = 86;   // L2 write rate per core
    p.rows = p.cols = 16;
    p.pe_k = 64;  // 16 x 16 x 64 = 16384 MAC/cycle: the INT4 cube rate (16 x 64 x 16)
    p.pipeline_depth = 0;
    p.l1_bytes = 512 * 1024;
    p.l0a_bytes = 64 * 1024;
    p.l0b_bytes = 64 * 1024;
    p.l0c_bytes = 128 * 1024;
    p.scale_buffer_bytes = 8 * 1024;  // fp4sim choice (HiF4 needs a scale word per 64 elements)
    p.mte1_bytes_per_cycle = 256;     // L1 -> L0B rate (L0A's is 512)
    p.fixpipe_bytes_per_cycle = 128;  // estimate
    p.quant_elems_per_cycle = 64;     // estimate
  }
  return p;
}

int64_t rtl_pipeline_depth(EngineKind e, const MmaConfig& cfg) {
  // The unit rtl::unit_for picks for the configuration (rtl/driver); its depth is measured on the
  // Verilated model by tests/rtl/test_unit_latency.cpp.
  const bool ue8m0 = cfg.scale == &kUE8M0;
  switch (cfg.kind->id) {
    case MmaKindId::Hif4: return kLatencyHif4Pe;
    case MmaKindId::Mxf8f6f4: return kLatencyBsDotK32;
    case MmaKindId::Mxf4: return kLatencyBsDotK64Ue8m0B32;
    case MmaKindId::Mxf4Nvf4:
      if (e == EngineKind::Cube && !ue8m0 && cfg.block == 16) return kLatencyNvfp4Pe64;
      if (ue8m0) return cfg.block == 16 ? kLatencyBsDotK64Ue8m0B16 : kLatencyBsDotK64Ue8m0B32;
      return cfg.block == 16 ? kLatencyBsDotK64Ue4m3B16 : kLatencyBsDotK64Ue4m3B32;
  }
  return 1;
}

const std::vector<ParamDesc>& param_table(EngineKind e) {
  static const std::vector<ParamDesc> tc = make_table(EngineKind::TensorCore), cube = make_table(EngineKind::Cube);
  return e == EngineKind::TensorCore ? tc : cube;
}

void set_param(Params& p, std::string_view key, std::string_view value) {
  const Key* k = find_key(key);
  const std::string ks(key), vs(value);
  if (!k) throw std::invalid_argument("unknown model parameter '" + ks + "'");
  if (!applies(*k, p.engine))
    throw std::invalid_argument("model parameter '" + ks + "' does not apply to the " +
                                std::string(engine_name(p.engine)));
  if (k->enum_id) {
    const std::string_view* lists[][2] = {{nullptr, nullptr},
                                           {std::begin(kOutFormats), std::end(kOutFormats)},
                                           {std::begin(kRasters), std::end(kRasters)},
                                           {std::begin(kOutDtypes), std::end(kOutDtypes)},
                                           {std::begin(kSwaps), std::end(kSwaps)},
                                           {std::begin(kPages), std::end(kPages)}};
    const std::string_view* b = lists[k->enum_id][0];
    const std::string_view* e = lists[k->enum_id][1];
    const auto* it = std::find(b, e, value);
    if (it == e) {
      std::string list;
      for (auto* c = b; c != e; ++c) list += (list.empty() ? "" : ", ") + std::string(*c);
      throw std::invalid_argument("bad value '" + vs + "' for model parameter '" + ks + "' (one of " + list + ")");
    }
    if (k->enum_id == 1) p.out_format = static_cast<OutFormat>(it - b);
    else if (k->enum_id == 2) p.raster = static_cast<Raster>(it - b);
    else if (k->enum_id == 3) p.out_dtype = static_cast<OutDtype>(it - b);
    else if (k->enum_id == 4) p.swap_ab = static_cast<SwapAb>(it - b);
    else p.hbm_page_policy = static_cast<HbmPage>(it - b);
    return;
  }
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || ptr != value.data() + value.size() || value.empty())
    throw std::invalid_argument("bad value '" + vs + "' for model parameter '" + ks + "' (an integer)");
  if (v < k->min || v > k->max)
    throw std::invalid_argument("bad value '" + vs + "' for model parameter '" + ks + "' (" + std::to_string(k->min) +
                                " to " + std::to_string(k->max) + ")");
  p.*(k->field) = v;
}

std::string get_param(const Params& p, std::string_view key) {
  const Key* k = find_key(key);
  if (!k || !applies(*k, p.engine))
    throw std::invalid_argument("model parameter '" + std::string(key) + "' does not apply to the " +
                                std::string(engine_name(p.engine)));
  if (k->enum_id == 1) return std::string(kOutFormats[static_cast<int>(p.out_format)]);
  if (k->enum_id == 2) return std::string(kRasters[static_cast<int>(p.raster)]);
  if (k->enum_id == 3) return std::string(kOutDtypes[static_cast<int>(p.out_dtype)]);
  if (k->enum_id == 4) return std::string(kSwaps[static_cast<int>(p.swap_ab)]);
  if (k->enum_id == 5) return std::string(kPages[static_cast<int>(p.hbm_page_policy)]);
  return std::to_string(p.*(k->field));
}

std::string_view raster_name(Raster r) { return kRasters[static_cast<int>(r)]; }
std::string_view out_dtype_name(OutDtype d) { return kOutDtypes[static_cast<int>(d)]; }
int out_dtype_bytes(OutDtype d) { return d == OutDtype::Fp32 ? 4 : d == OutDtype::Fp8 ? 1 : 2; }

std::string Mapping::str() const {
  std::ostringstream o;
  o << "tile_m=" << tile_m << " tile_n=" << tile_n << " tile_k=" << tile_k;
  if (l1_k) o << " l1_k=" << l1_k;
  if (stages) o << " stages=" << stages;
  o << " raster=" << kRasters[static_cast<int>(raster)];
  if (cores) o << " cores=" << cores;
  if (swap_ab) o << " swap_ab";
  if (l2_no_allocate) o << " l2_no_allocate";
  if (split_k > 1) o << " split_k=" << split_k;
  if (cluster_sms > 1) o << " cluster_sms=" << cluster_sms << " cluster_m=" << cluster_m;
  return o.str();
}

uint64_t Stats::stall(const std::string& cause) const {
  for (const auto& [k, v] : stalls)
    if (k == cause) return v;
  return 0;
}
uint64_t Stats::bytes_of(const std::string& level) const {
  for (const auto& [k, v] : bytes)
    if (k == level) return v;
  return 0;
}

const std::vector<std::string_view>& stall_causes(EngineKind e) {
  static const std::vector<std::string_view> tc = {"operand_load", "scale_copy", "smem_bandwidth",
                                                   "accumulator_dependency", "accumulator_busy", "no_tile", "tail"};
  static const std::vector<std::string_view> cube = {"l1_load", "l0_load", "accumulator_dependency", "l0c_busy",
                                                     "no_tile", "tail"};
  return e == EngineKind::TensorCore ? tc : cube;
}

const std::vector<std::string_view>& byte_levels(EngineKind e) {
  static const std::vector<std::string_view> tc = {"dram_read", "dram_write", "dram_row_open", "l2_read", "l2_write", "die_link",
                                                   "smem_write", "smem_read", "tmem_scale", "tmem_accumulator",
                                                   "global_store"};
  static const std::vector<std::string_view> cube = {"dram_read", "dram_write", "dram_row_open", "l2_read", "l2_write", "die_link", "l1_write",
                                                     "l0a", "l0b", "l0c", "global_store"};
  return e == EngineKind::TensorCore ? tc : cube;
}

double element_bytes(const MmaConfig& cfg) {
  // mxf8f6f4 operands occupy one byte per element in shared memory whatever their width.
  return cfg.kind->id == MmaKindId::Mxf8f6f4 ? 1.0 : 0.5;
}
int scale_bytes(const MmaConfig& cfg) { return cfg.kind->scale_word32 ? 4 : 1; }

}  // namespace fp4sim::models
