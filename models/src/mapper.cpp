// The mapper (which tilings fit the buffers, ranked by the analytic estimate), the analytic timing
// mode, and run(): analytic mode returns the best estimate; cycle mode simulates the best few
// mappings structurally and keeps the fastest (docs/models.md "Mapper"). No SystemC here.
#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

#include "model.hpp"

namespace fp4sim::models::detail {

uint64_t Shape::operand_bytes(uint64_t rows, uint64_t k) const {
  return static_cast<uint64_t>(std::ceil(static_cast<double>(rows * k) * eb)) + rows * ceil_div(k, block) * sb;
}
uint64_t Shape::out_bytes(uint64_t rows, uint64_t cols) const {
  if (!out_block) return rows * cols * d_bytes;
  return static_cast<uint64_t>(std::ceil(static_cast<double>(rows * cols) * out_eb)) + rows * (cols / out_block) * out_sb;
}

uint64_t Shape::smem_stage(const Params& p, uint64_t rows, uint64_t cols) const {
  // The cube's FixPipe converts and writes D straight out; the quantize unit stages its own codes.
  if (engine != EngineKind::TensorCore || out_block) return 0;
  return ceil_div(out_bytes(rows, cols), static_cast<uint64_t>(p.smem_read_bytes_per_cycle));
}

namespace {
[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }
}  // namespace

Shape make_shape(Params& p, const Workload& w) {
  const std::string en(engine_name(p.engine));
  if (!w.cfg.kind) bad("models: workload has no MMA kind");
  validate_mma_config(w.cfg, w.model);
  if (w.model == Model::Exact)
    bad("models: the exact model rounds once over the whole K; the engines round per instruction / group");
  if (w.M == 0 || w.N == 0 || w.K == 0) bad("models: empty GEMM");
  Shape s;
  s.engine = p.engine;
  s.M = w.M, s.N = w.N, s.K = w.K;
  s.kin = static_cast<size_t>(w.cfg.kind->k);
  s.block = static_cast<size_t>(w.cfg.block);
  s.eb = element_bytes(w.cfg);
  s.sb = static_cast<size_t>(scale_bytes(w.cfg));
  s.has_c = !w.c.empty();
  s.timing_only = w.timing_only;
  if (w.K % s.kin) bad("models: K must be a multiple of the instruction K (" + std::to_string(s.kin) + ")");
  if (p.engine == EngineKind::Cube && w.cfg.kind->id == MmaKindId::Mxf8f6f4)
    bad("cube: kinds hif4, mxf4, mxf4nvf4 only");
  if (p.engine == EngineKind::TensorCore && w.cfg.kind->id == MmaKindId::Hif4)
    bad("tensor-core: kinds mxf4, mxf4nvf4, mxf8f6f4 only (HiF4 runs on the cube)");
  // Every numeric key must be set (a Params built by hand, not from default_params, is caught here).
  for (const ParamDesc& d : param_table(p.engine)) {
    if (!d.choices.empty()) continue;
    const int64_t v = std::stoll(get_param(p, d.key));
    if (v < d.min || v > d.max)
      bad("model parameter '" + std::string(d.key) + "' = " + std::to_string(v) + " is out of range (" +
          std::to_string(d.min) + " to " + std::to_string(d.max) + ")");
  }
  if (p.hbm_channels % p.dies)
    bad("model parameter 'hbm_channels' = " + std::to_string(p.hbm_channels) + " is not a multiple of 'dies' = " +
        std::to_string(p.dies) + " (each die has its own HBM stacks)");
  if (p.engine == EngineKind::TensorCore && p.cluster_sms == 0 && p.cluster_m)
    bad("model parameter 'cluster_m' needs 'cluster_sms' set (0: the mapper chooses both)");
  if (p.engine == EngineKind::TensorCore && p.cluster_m > 1 && p.cluster_sms % p.cluster_m)
    bad("model parameter 'cluster_m' = " + std::to_string(p.cluster_m) + " does not divide 'cluster_sms' = " +
        std::to_string(p.cluster_sms));
  if (!p.pipeline_depth) p.pipeline_depth = rtl_pipeline_depth(p.engine, w.cfg);
  if (p.engine == EngineKind::TensorCore && p.cta_group == 2) {
    pair_cores(p);
    s.mma_m = 256;
  }
  // The job runs at the sustained clock of its operand kind; every per-cycle parameter is stated at
  // clock_mhz. On-chip rates and latencies scale with the clock; HBM's bytes per second and its
  // latency in nanoseconds do not, so per cycle of the slower clock HBM delivers more bytes and
  // answers in fewer cycles.
  const int64_t f = s.eb < 1.0 ? p.clock_fp4_mhz : p.clock_fp8_mhz;
  s.clock_mhz = static_cast<double>(f);
  if (f != p.clock_mhz) {
    p.dram_bytes_per_cycle = std::max<int64_t>(1, (p.dram_bytes_per_cycle * p.clock_mhz + f / 2) / f);
    p.dram_latency = (p.dram_latency * f + p.clock_mhz / 2) / p.clock_mhz;
  }
  s.launch = static_cast<uint64_t>((p.launch_ns * f + 999) / 1000);
  s.d_bytes = static_cast<uint64_t>(out_dtype_bytes(p.out_dtype));
  s.gran = s.kin;
  if (p.engine == EngineKind::Cube) {
    const size_t pek = static_cast<size_t>(p.pe_k);
    if (pek % s.kin && s.kin % pek) bad("cube: pe_k and the instruction K must divide one another");
    s.gran = std::max(pek, s.kin);
    // Delayed HiF4 rounding: K steps stay whole rounding groups so that golden's rounding points hold.
    if (w.model == Model::AscendHif4 && w.cfg.hif4_round_groups != 1) {
      const size_t G = w.cfg.hif4_round_groups == 0 ? w.K / 64 : static_cast<size_t>(w.cfg.hif4_round_groups);
      s.gran = std::max(s.gran, 64 * G);
      if (s.gran % pek) bad("cube: rounding group not a multiple of pe_k");
    }
  }
  if (p.out_format != OutFormat::None) {
    s.out_block = p.out_format == OutFormat::Nvfp4 ? 16 : p.out_format == OutFormat::Mxfp8 ? 32 : 64;
    s.out_eb = p.out_format == OutFormat::Mxfp8 ? 1.0 : 0.5;
    s.out_sb = p.out_format == OutFormat::Hif4 ? 4 : 1;
    if (w.N % s.out_block)
      bad("models: the output quantize unit needs N a multiple of its block (" + std::to_string(s.out_block) + ")");
  }
  if (w.timing_only) return s;
  const size_t nblk = w.K / s.block;
  if (w.a.size() != w.M * w.K || w.b.size() != w.N * w.K || w.sa.size() != w.M * nblk || w.sb.size() != w.N * nblk ||
      (!w.c.empty() && w.c.size() != w.M * w.N))
    bad("models: operand sizes do not match M, N, K");
  return s;
}

void pair_cores(Params& p) {
  if (p.cores < 2) bad("tensor-core: cta_group=2 needs at least 2 cores (a pair)");
  // cluster_sms 1: the pair is the cluster.
  if (p.cluster_sms > 1 && p.cluster_sms % 2)
    bad("tensor-core: cta_group=2 needs cluster_sms 1 or even (a pair runs inside one cluster)");
  if (p.tile_m && p.tile_m != 256) bad("tensor-core: cta_group=2 runs tile_m=256 (the pair's instruction M)");
  p.cores /= 2;
  if (p.cluster_m && p.cluster_m % 2)
    bad("tensor-core: cta_group=2 needs cluster_m 0 or even (the pair lies along M)");
  if (p.cluster_sms) p.cluster_sms = std::max<int64_t>(1, p.cluster_sms / 2);  // 0: the mapper's
  p.cluster_m = std::max<int64_t>(1, p.cluster_m / 2);
  for (int64_t* v : {&p.dot_lanes, &p.core_load_bytes_per_cycle, &p.core_store_bytes_per_cycle, &p.smem_bytes,
                     &p.smem_read_bytes_per_cycle, &p.tmem_cp_bytes_per_cycle, &p.tmem_ld_bytes_per_cycle})
    *v *= 2;
}

void stats_in_sms(Stats& st, int64_t sms) {
  const uint64_t pairs = static_cast<uint64_t>(st.cores);
  const uint64_t odd = static_cast<uint64_t>(sms) - 2 * pairs;  // an SM without a partner idles
  st.compute_cycles *= 2;
  for (auto& [cause, v] : st.stalls) v = 2 * v + (cause == "no_tile" ? odd * st.cycles : 0);
  st.peak_macs_per_cycle *= static_cast<double>(sms) / static_cast<double>(2 * pairs);
  st.compute_roofline_cycles = static_cast<double>(st.macs) / st.peak_macs_per_cycle;
  st.cores = sms;
  st.mapping.cores *= 2;
  st.mapping.cluster_sms *= 2, st.mapping.cluster_m *= 2;
}

int64_t gpc_clusters(const Params& p, int64_t c) {
  if (p.gpcs <= 0) return p.cores / c;
  // The chip's SMs lie in TPCs of two (a pair is one TPC), spread as evenly as the TPCs allow over
  // the GPCs (B200: 74 TPCs in 8 GPCs of 10 TPCs, six of them with one TPC fused off).
  const int64_t per_tpc = p.cta_group == 2 ? 1 : 2;
  const int64_t tpcs = p.cores / per_tpc, odd = p.cores % per_tpc;
  int64_t n = 0;
  for (int64_t i = 0; i < p.gpcs; ++i)
    n += ((tpcs / p.gpcs + (i < tpcs % p.gpcs ? 1 : 0)) * per_tpc + (i == 0 ? odd : 0)) / c;
  return n;
}

int64_t grid_of(const Params& p, const Shape& s, const Mapping& m) {
  const int64_t g = m.cores ? m.cores : p.cores;
  if (p.engine != EngineKind::TensorCore || m.cluster_sms <= 1) return g;
  const int64_t c = m.cluster_sms;
  int64_t clusters = std::min(g / c, gpc_clusters(p, c));
  if (p.max_clusters > 0) clusters = std::min(clusters, p.max_clusters);
  if (clusters == 0) return g;  // `fits` rejects the mapping
  const int64_t cm = std::max<int64_t>(1, m.cluster_m);
  const int64_t tm = static_cast<int64_t>(ceil_div(s.M, static_cast<size_t>(m.tile_m)));
  return clusters * c * tm / (ceil_div(tm, cm) * cm);
}

Tile Geometry::tile(const Shape& s, const Mapping& m, size_t i) const {
  const size_t mt = m.raster == Raster::AlongM ? i % tiles_m : i / tiles_n;
  const size_t nt = m.raster == Raster::AlongM ? i / tiles_m : i % tiles_n;
  Tile t;
  t.mb = static_cast<uint32_t>(mt);
  t.r0 = mt * static_cast<size_t>(m.tile_m);
  t.rows = std::min(static_cast<size_t>(m.tile_m), s.M - t.r0);
  t.c0 = nt * static_cast<size_t>(m.tile_n);
  t.cols = std::min(static_cast<size_t>(m.tile_n), s.N - t.c0);
  t.index = i;
  t.ks1 = ksteps;
  return t;
}

Tile Geometry::unit(const Shape& s, const Mapping& m, size_t i) const {
  if (splits == 1) return tile(s, m, i);
  const size_t first = tiles() * (splits - 1);  // the partial parts come first
  const size_t part = i < first ? i % (splits - 1) : splits - 1;
  Tile t = tile(s, m, i < first ? i / (splits - 1) : i - first);
  // Part p of S runs K steps [p * ksteps / S, (p + 1) * ksteps / S): sizes differ by one at most.
  t.split = static_cast<uint32_t>(part), t.splits = static_cast<uint32_t>(splits);
  t.ks0 = part * ksteps / splits, t.ks1 = (part + 1) * ksteps / splits;
  return t;
}

// Whether a mapping fits (the mapper tries hundreds: no exceptions here); `why` says what does not.
bool fits(const Params& p, const Shape& s, const Mapping& m, Geometry& g, std::string* why) {
#define FP4SIM_NEED(ok, what)                                                                     \
  if (!(ok)) {                                                                                    \
    if (why) *why = std::string(engine_name(p.engine)) + ": mapping " + m.str() + ": " + (what); \
    return false;                                                                                 \
  }
  FP4SIM_NEED(m.tile_m > 0 && m.tile_n > 0 && m.tile_k > 0, "tile sizes must be positive");
  FP4SIM_NEED(!m.swap_ab || (p.engine == EngineKind::TensorCore && !s.out_block),
              "swap_ab needs the tensor core without an output quantize unit (its blocks run along N)");
  FP4SIM_NEED(m.cores >= 0 && m.cores <= p.cores, "the mapping's cores exceed the chip's");
  FP4SIM_NEED(m.cluster_sms >= 1 && m.cluster_m >= 1 && m.cluster_sms % m.cluster_m == 0,
              "the cluster's cores along M must divide its cores");
  FP4SIM_NEED(p.engine != EngineKind::TensorCore || m.cluster_sms <= (m.cores ? m.cores : p.cores),
              "cluster_sms exceeds the cores the kernel runs on");
  FP4SIM_NEED(p.engine != EngineKind::TensorCore || m.cluster_sms <= 1 || gpc_clusters(p, m.cluster_sms) > 0,
              "cluster_sms exceeds the SMs of a GPC (cores / gpcs)");
  FP4SIM_NEED(m.tile_k % static_cast<int64_t>(s.gran) == 0, "tile_k must be a multiple of " + std::to_string(s.gran));
  if (s.out_block) FP4SIM_NEED(m.tile_n % static_cast<int64_t>(s.out_block) == 0, "tile_n must be a multiple of the output block");
  g.tiles_m = ceil_div(s.M, static_cast<size_t>(m.tile_m));
  g.tiles_n = ceil_div(s.N, static_cast<size_t>(m.tile_n));
  g.ksteps = ceil_div(s.K, static_cast<size_t>(m.tile_k));
  FP4SIM_NEED(m.split_k >= 1, "split_k must be at least 1");
  if (m.split_k > 1) {
    FP4SIM_NEED(p.engine == EngineKind::TensorCore, "split_k > 1 runs on the tensor core only");
    FP4SIM_NEED(!s.out_block, "split_k > 1 needs out_format=none (a quantize unit needs the whole sum)");
    FP4SIM_NEED(static_cast<size_t>(m.split_k) <= g.ksteps,
                "split_k " + std::to_string(m.split_k) + " exceeds the " + std::to_string(g.ksteps) + " K steps of tile_k");
  }
  g.splits = static_cast<size_t>(m.split_k);
  g.mcast_a = g.mcast_b = 1;
  if (p.engine == EngineKind::TensorCore && m.cluster_sms > 1) {
    const size_t c = static_cast<size_t>(m.cluster_sms), cm = static_cast<size_t>(std::max<int64_t>(1, m.cluster_m));
    g.mcast_a = std::min(c / cm, g.tiles_n);
    g.mcast_b = std::min(cm, g.tiles_m);
  }
  const uint64_t kt = static_cast<uint64_t>(m.tile_k);
  if (p.engine == EngineKind::TensorCore) {
    FP4SIM_NEED(m.tile_m == static_cast<int64_t>(s.mma_m),
                "tile_m must be " + std::to_string(s.mma_m) + " (the instruction M)");
    FP4SIM_NEED(m.tile_n % 8 == 0 && m.tile_n <= 256, "tile_n must be 8..256, a multiple of 8 (the instruction N)");
    FP4SIM_NEED(m.stages >= 1, "at least one SMEM stage");
    const uint64_t stage = s.operand_bytes(s.mma_m, kt) + s.operand_bytes(static_cast<uint64_t>(m.tile_n), kt);
    FP4SIM_NEED(stage * static_cast<uint64_t>(m.stages) <= static_cast<uint64_t>(p.smem_bytes),
         std::to_string(m.stages) + " stages of " + std::to_string(stage) + " B exceed smem_bytes");
    // TMEM: two scale-factor slots (SFA one column group, SFB one per 128 rows of B; four 8-bit
    // codes or one HiF4 word per 32-bit cell), then accumulators of tile_n columns.
    const uint64_t per_cell = s.sb == 4 ? 1 : 4;
    g.sf_cols = ceil_div(kt / s.block, per_cell) * (1 + ceil_div(static_cast<uint64_t>(m.tile_n), 128));
    const int64_t left = p.tmem_columns - 2 * static_cast<int64_t>(g.sf_cols);
    g.nacc = left > 0 ? std::min<size_t>(2, static_cast<size_t>(left / m.tile_n)) : 0;
    FP4SIM_NEED(g.nacc >= 1, "TMEM too small for the scale slots and one accumulator");
    g.chunks = g.ksteps;
    g.steps_per_chunk = 1;
  } else {
    FP4SIM_NEED(m.tile_m % p.rows == 0 && m.tile_n % p.cols == 0, "tile_m / tile_n must be multiples of the PE grid");
    FP4SIM_NEED(m.l1_k > 0 && m.l1_k % m.tile_k == 0, "l1_k must be a multiple of tile_k");
    const uint64_t m0 = static_cast<uint64_t>(m.tile_m), n0 = static_cast<uint64_t>(m.tile_n);
    FP4SIM_NEED(m0 * n0 * 4 * 2 <= static_cast<uint64_t>(p.l0c_bytes), "two FP32 output tiles exceed l0c_bytes");
    const uint64_t ea = static_cast<uint64_t>(std::ceil(static_cast<double>(m0 * kt) * s.eb));
    const uint64_t ebb = static_cast<uint64_t>(std::ceil(static_cast<double>(n0 * kt) * s.eb));
    FP4SIM_NEED(2 * ea <= static_cast<uint64_t>(p.l0a_bytes), "two A steps exceed l0a_bytes");
    FP4SIM_NEED(2 * ebb <= static_cast<uint64_t>(p.l0b_bytes), "two B steps exceed l0b_bytes");
    FP4SIM_NEED(2 * std::max(m0, n0) * (kt / s.block) * s.sb <= static_cast<uint64_t>(p.scale_buffer_bytes),
         "two steps' block scales exceed scale_buffer_bytes");
    const uint64_t l1k = std::min<uint64_t>(static_cast<uint64_t>(m.l1_k), round_up(s.K, kt));
    FP4SIM_NEED(2 * (s.operand_bytes(m0, l1k) + s.operand_bytes(n0, l1k)) <= static_cast<uint64_t>(p.l1_bytes),
         "two L1 chunks of A and B exceed l1_bytes");
    g.chunks = ceil_div(s.K, static_cast<size_t>(l1k));
    g.steps_per_chunk = static_cast<size_t>(l1k / kt);
  }
  return true;
#undef FP4SIM_NEED
}

Geometry geometry(const Params& p, const Shape& s, const Mapping& m) {
  Geometry g;
  std::string why;
  if (!fits(p, s, m, g, &why)) bad(why);
  return g;
}

namespace {

std::vector<int64_t> pow2_multiples(int64_t base, int64_t limit, int64_t pinned) {
  if (pinned) return {pinned};
  std::vector<int64_t> v;
  for (int64_t x = base; x <= std::max(base, limit); x *= 2) v.push_back(x);
  if (limit > base && std::find(v.begin(), v.end(), limit) == v.end() && limit % base == 0) v.push_back(limit);
  return v;
}

}  // namespace

std::vector<Mapping> candidates(const Params& p, const Shape& s) {
  std::vector<Mapping> out;
  std::string first_error;
  const std::vector<Raster> rasters = p.raster == Raster::Auto ? std::vector<Raster>{Raster::AlongN, Raster::AlongM}
                                                               : std::vector<Raster>{p.raster};
  auto try_add = [&](const Mapping& m) {
    const Shape sh = for_mapping(s, m);
    // The raster order only matters when there are tiles along both M and N.
    if (m.raster == Raster::AlongM && p.raster == Raster::Auto &&
        (ceil_div(sh.M, static_cast<uint64_t>(m.tile_m)) == 1 || ceil_div(sh.N, static_cast<uint64_t>(m.tile_n)) == 1))
      return;
    // The cluster: pinned, or the mapper's (none, or two cores sharing A along N or B along M).
    std::vector<std::pair<int64_t, int64_t>> clusters{{std::max<int64_t>(1, p.cluster_sms), std::max<int64_t>(1, p.cluster_m)}};
    if (p.engine == EngineKind::TensorCore && p.cluster_sms == 0) clusters = {{1, 1}, {2, 1}, {2, 2}};
    for (const auto& [c, cm] : clusters) {
      Mapping mc = m;
      mc.cluster_sms = c, mc.cluster_m = cm;
      Geometry g;
      if (fits(p, sh, mc, g, first_error.empty() ? &first_error : nullptr)) out.push_back(mc);
    }
  };
  const int64_t K = static_cast<int64_t>(s.K), gran = static_cast<int64_t>(s.gran);
  if (p.engine == EngineKind::TensorCore) {
    // Both roles of A and B (swap_ab: the kernel computes D^T = B . A^T) unless pinned; a quantize
    // unit's blocks run along N of D, so it keeps the roles.
    std::vector<bool> swaps;
    if (p.swap_ab != SwapAb::On) swaps.push_back(false);
    if (p.swap_ab != SwapAb::Off && !s.out_block) swaps.push_back(true);
    if (swaps.empty()) bad("tensor-core: swap_ab=on needs out_format=none (the quantize unit's blocks run along N)");
    for (bool swap : swaps) {
    const Shape sh = for_mapping(s, Mapping{0, 0, 0, 0, 0, Raster::AlongN, 0, swap});
    const int64_t nmax = std::min<int64_t>(256, static_cast<int64_t>(round_up(sh.N, 8)));
    std::vector<int64_t> ns = pow2_multiples(8, nmax, p.tile_n);
    const int64_t kmax = std::min<int64_t>(512, K);
    for (int64_t n : ns)
      for (int64_t kt : pow2_multiples(gran, kmax, p.tile_k))
        for (Raster r : rasters) {
          Mapping m{p.tile_m ? p.tile_m : static_cast<int64_t>(s.mma_m), n, kt, 0, 0, r, 0, swap};
          if (p.stages) {
            m.stages = p.stages;
          } else {  // as many stages as fit, up to 8 (more prefetch never hurts)
            const uint64_t stage = s.operand_bytes(s.mma_m, static_cast<uint64_t>(kt)) +
                                   s.operand_bytes(static_cast<uint64_t>(n), static_cast<uint64_t>(kt));
            m.stages = std::min<int64_t>(8, static_cast<int64_t>(static_cast<uint64_t>(p.smem_bytes) / stage));
            m.stages = std::max<int64_t>(m.stages, 1);
          }
          m.split_k = p.split_k ? p.split_k : 1;
          try_add(m);
          // Split-K where the tiles leave cores idle: 2, 4, ... parts per tile up to two units
          // per core. Only for timing-only work (the partial sums change D's FP32 order) or pinned.
          if (p.split_k == 0 && s.timing_only) {
            const uint64_t tiles = ceil_div(sh.M, static_cast<uint64_t>(m.tile_m)) * ceil_div(sh.N, static_cast<uint64_t>(n)),
                           ksteps = ceil_div(sh.K, static_cast<uint64_t>(kt)), grid = static_cast<uint64_t>(grid_of(p, sh, m));
            for (uint64_t parts = 2; tiles < grid && parts <= ksteps && tiles * parts <= 2 * grid; parts *= 2) {
              Mapping ms = m;
              ms.split_k = static_cast<int64_t>(parts);
              try_add(ms);
            }
          }
        }
    }
  } else {
    const int64_t mmax = std::min<int64_t>(512, static_cast<int64_t>(round_up(s.M, static_cast<uint64_t>(p.rows))));
    const int64_t nmax = std::min<int64_t>(1024, static_cast<int64_t>(round_up(s.N, static_cast<uint64_t>(p.cols))));
    const int64_t kmax = std::min<int64_t>(4096, static_cast<int64_t>(round_up(s.K, static_cast<uint64_t>(gran))));
    for (int64_t m0 : pow2_multiples(p.rows, mmax, p.tile_m))
      for (int64_t n0 : pow2_multiples(p.cols, nmax, p.tile_n))
        for (int64_t k0 : pow2_multiples(gran, kmax, p.tile_k)) {
          const int64_t kfull = static_cast<int64_t>(round_up(s.K, static_cast<uint64_t>(k0)));
          std::vector<int64_t> l1s = p.l1_k ? std::vector<int64_t>{p.l1_k} : pow2_multiples(k0, kfull, 0);
          for (int64_t l1k : l1s)
            for (Raster r : rasters) try_add(Mapping{m0, n0, k0, l1k, 0, r});
        }
  }
  if (out.empty())
    bad(first_error.empty() ? std::string(engine_name(p.engine)) + ": no mapping fits the buffers" : first_error);
  return out;
}

uint64_t compulsory_bytes(const Shape& s) {
  return s.operand_bytes(s.M, s.K) + s.operand_bytes(s.N, s.K) + (s.has_c ? s.M * s.N * 4 : 0) +
         s.out_bytes(s.M, s.N);
}

void fill_rooflines(const Params& p, const Shape& s, Stats& st) {
  const double peak = p.engine == EngineKind::TensorCore
                          ? static_cast<double>(p.dot_lanes) * static_cast<double>(s.kin)
                          : static_cast<double>(p.rows * p.cols * p.pe_k);
  st.peak_macs_per_cycle = peak * static_cast<double>(p.cores);
  st.cores = p.cores;
  st.macs = static_cast<uint64_t>(s.M) * s.N * s.K;
  st.compute_roofline_cycles = static_cast<double>(st.macs) / st.peak_macs_per_cycle;
  st.memory_roofline_cycles = static_cast<double>(compulsory_bytes(s)) / static_cast<double>(p.dram_bytes_per_cycle);
}

// ---------------------------------------------------------------------------------------------
// Analytic mode: per-tile closed forms, waves over the cores, and the chip's bandwidth bounds.

namespace {

// HBM's bandwidth as the estimate sees it: the peak, or what the MSHRs keep in flight (Little's law:
// every die's l2_mshrs 4 KiB misses per miss latency, dram_latency + one transfer at a die's share).
double hbm_bandwidth(const Params& p) {
  const double dies = static_cast<double>(p.dies), die_dram = static_cast<double>(p.dram_bytes_per_cycle) / dies,
               req_bytes = 4096.0;
  return std::min(static_cast<double>(p.dram_bytes_per_cycle),
                  dies * static_cast<double>(p.l2_mshrs) * req_bytes / (static_cast<double>(p.dram_latency) + req_bytes / die_dram));
}

// Split-K as the estimate sees it: the units of the split kernel are the tiles of an equivalent
// problem with S times the tiles along one dimension and the longest part's K, without C (each
// unit loads its own A and B slices, as a part does); then the last parts' fixup: each loads the
// S - 1 partial tiles (and C) of its tile over its link after one HBM and L2 latency, in as many
// rounds as there are last parts per core. The dimension multiplied is the larger operand's, so
// that its S slices are distinct bytes in the equivalent as they are in the parts (a skinny
// kernel streams the large operand: shared, its slices would hit L2). The equivalent shares one
// K slice of the other operand among the parts where they read all of it: HBM's bound is taken
// again over the real bytes (the equivalent's, that operand's other slices, the partials stored
// and loaded, C).
Stats analytic_split(const Params& p, const Shape& s0, const Mapping& m) {
  const Shape s = for_mapping(s0, m);
  const Geometry g = geometry(p, s, m);
  const uint64_t S = static_cast<uint64_t>(m.split_k), n0 = static_cast<uint64_t>(m.tile_n),
                 m0 = static_cast<uint64_t>(m.tile_m);
  Shape e = s0;
  e.has_c = false;
  const bool along_m = s.operand_bytes(s.M, s.K) > s.operand_bytes(s.N, s.K);  // the kernel's A is larger
  if (along_m) (m.swap_ab ? e.N : e.M) = round_up(s.M, m0) * S;
  else (m.swap_ab ? e.M : e.N) = round_up(s.N, n0) * S;
  e.K = std::min<uint64_t>(s.K, ceil_div(g.ksteps, S) * static_cast<uint64_t>(m.tile_k));
  Mapping me = m;
  me.split_k = 1;
  Stats st = analytic(p, e, me);
  const uint64_t rows = std::min<uint64_t>(static_cast<uint64_t>(m.tile_m), s.M), cols = std::min<uint64_t>(n0, s.N);
  const uint64_t tiles = g.tiles(), active = std::min<uint64_t>(tiles, static_cast<uint64_t>(grid_of(p, s, m)));
  const double part_tile = static_cast<double>(rows * cols * 4), partials = static_cast<double>((S - 1) * tiles) * part_tile;
  const double c_tile = s.has_c ? part_tile : 0.0, c_all = static_cast<double>(tiles) * c_tile;
  const double per_sum = (static_cast<double>(S - 1) * part_tile + c_tile) / static_cast<double>(p.core_load_bytes_per_cycle);
  const double sums = static_cast<double>(ceil_div(tiles, active)) * per_sum +
                      static_cast<double>(p.dram_latency + p.l2_latency);
  const uint64_t shared = along_m ? s.N : s.M;  // rows of the operand the equivalent shares
  const double shared_more = static_cast<double>(s.operand_bytes(shared, s.K)) - static_cast<double>(s.operand_bytes(shared, e.K));
  const double hbm_bytes = static_cast<double>(st.bytes_of("dram_read")) + shared_more + 2.0 * partials + c_all +
                           static_cast<double>(s.out_bytes(s.M, s.N));
  const double hbm = hbm_bytes / hbm_bandwidth(p) + static_cast<double>(p.dram_latency + s.launch);
  const uint64_t extra = static_cast<uint64_t>(
      std::ceil(std::max(sums, hbm - static_cast<double>(st.cycles))));  // the fixup, or what HBM adds
  st.cycles += extra;
  st.mapping = m;
  st.tiles = tiles;
  st.instructions = tiles * (s.K / s.kin);  // every tile's K chain, whatever the parts
  fill_rooflines(p, s0, st);
  // The added cycles: every core of the chip waits (the last parts on the partials, the rest idle).
  for (auto& [k, v] : st.stalls)
    if (k == "operand_load") v += extra * static_cast<uint64_t>(p.cores);
  const uint64_t pb = static_cast<uint64_t>(partials), cb = static_cast<uint64_t>(c_all);
  for (auto& [k, v] : st.bytes) {
    if (k == "dram_write" || k == "l2_write" || k == "global_store") v = s.out_bytes(s.M, s.N) + pb;  // D once, the partials
    else if (k == "dram_read") v += pb + cb + static_cast<uint64_t>(shared_more);
    else if (k == "l2_read" || k == "smem_write") v += pb + cb;
  }
  return st;
}

}  // namespace

Stats analytic(const Params& p, const Shape& s0, const Mapping& m) {
  if (m.split_k > 1) return analytic_split(p, s0, m);
  const Shape s = for_mapping(s0, m);
  const Geometry g = geometry(p, s, m);
  Stats st;
  st.timing = Timing::Analytic;
  st.mapping = m;
  fill_rooflines(p, s, st);
  const bool tc = p.engine == EngineKind::TensorCore;
  const uint64_t tiles = g.tiles(), P = static_cast<uint64_t>(grid_of(p, s, m));
  const uint64_t active = std::min(P, tiles);
  const uint64_t depth = static_cast<uint64_t>(p.pipeline_depth);
  const uint64_t m0 = static_cast<uint64_t>(m.tile_m), n0 = static_cast<uint64_t>(m.tile_n),
                 kt = static_cast<uint64_t>(m.tile_k);
  // Operand bytes one core loads for a full tile (real rows only: TMA / MTE2 skip rows past M).
  const uint64_t rows = std::min<uint64_t>(m0, s.M), cols = std::min<uint64_t>(n0, s.N);
  const bool a_resident = !tc && g.chunks == 1 && m.raster == Raster::AlongN;
  const uint64_t a_tile = s.operand_bytes(rows, s.K), b_tile = s.operand_bytes(cols, s.K);
  // A stays in L1 across tiles of the same m block (cube, whole K in one chunk, raster along N).
  const uint64_t tiles_per_core = ceil_div(tiles, P);
  const double a_loads = a_resident ? static_cast<double>(std::min<uint64_t>(tiles_per_core, g.tiles_m + tiles_per_core / g.tiles_n))
                                    : static_cast<double>(tiles_per_core);
  const uint64_t c_tile = s.has_c ? rows * cols * 4 : 0;
  // A is loaded once per tile (at most: never more A loads than tiles), or once per m block a core
  // visits when it stays resident.
  const double a_total = a_resident ? std::min(static_cast<double>(tiles), a_loads * static_cast<double>(active))
                                    : static_cast<double>(tiles);
  // Bytes the cores receive, and what L2 reads for them: with TMA multicast a cluster's cores that
  // share A (B) read 1 / mcast of it each and receive the rest from their peers.
  const double delivered = static_cast<double>(tiles) * static_cast<double>(b_tile + c_tile) + a_total * static_cast<double>(a_tile);
  const double l2_read = static_cast<double>(tiles) * (static_cast<double>(b_tile) / static_cast<double>(g.mcast_b) +
                                                       static_cast<double>(c_tile)) +
                         a_total * static_cast<double>(a_tile) / static_cast<double>(g.mcast_a);
  const uint64_t a_all = s.operand_bytes(s.M, s.K), b_all = s.operand_bytes(s.N, s.K);
  double dram_read = static_cast<double>(a_all + b_all + (s.has_c ? s.M * s.N * 4 : 0));
  // The raster walks the streamed operand (B along N, A along M) once per band of the other; it is
  // read from HBM again per band only when it does not fit in L2 next to the band being worked on.
  const bool along_n = m.raster == Raster::AlongN;
  const uint64_t streamed = along_n ? b_all : a_all;
  const uint64_t band = along_n ? s.operand_bytes(rows, s.K) : s.operand_bytes(cols, s.K);
  if (m.l2_no_allocate || streamed + band > static_cast<uint64_t>(p.l2_bytes))
    dram_read += static_cast<double>(streamed) * static_cast<double>((along_n ? g.tiles_m : g.tiles_n) - 1);
  const double out = static_cast<double>(s.out_bytes(s.M, s.N));
  // Dies: the keys spread the bytes evenly, so (dies - 1) / dies of them are far for a die's cores;
  // a die keeps a near copy of far bytes it reads, so each die with active cores pulls its far share
  // of the HBM bytes over the links once (at most its far share of the L2 reads); D's far share
  // crosses once. HBM misses in flight are bounded by the MSHRs of every die (Little's law: a die's
  // MSHRs x 4 KiB per miss latency).
  const double dies = static_cast<double>(p.dies), far = (dies - 1.0) / dies;
  const double pulling = std::min(dies, static_cast<double>(active));  // dies with active cores: links in use
  const double link_bw = pulling * static_cast<double>(p.die_link_bytes_per_cycle);
  const double link_read = std::min(l2_read * far, pulling * far * dram_read);
  const double dram_bw = hbm_bandwidth(p);
  // A core's load bandwidth when `share` cores load together: its link, its share of L2, of the
  // die-to-die links, and of HBM scaled by the L2 reuse.
  const auto bw_of = [&](double share) {
    return std::min({static_cast<double>(p.core_load_bytes_per_cycle),
                     static_cast<double>(p.l2_bytes_per_cycle) / share * (delivered / l2_read),
                     link_read > 0 ? link_bw / share * (delivered / link_read) : HUGE_VAL,
                     dram_bw / share * (delivered / std::max(1.0, dram_read))});
  };
  const double bw = bw_of(static_cast<double>(active));
  // One load job (an SMEM stage / an L1 chunk) and the latency it sees: L2, plus HBM for the share
  // of the bytes that miss.
  const uint64_t first = tc ? s.operand_bytes(rows, kt) + s.operand_bytes(cols, kt)
                            : s.operand_bytes(rows, std::min<uint64_t>(kt * g.steps_per_chunk, s.K)) +
                                  s.operand_bytes(cols, std::min<uint64_t>(kt * g.steps_per_chunk, s.K));
  // Cores working at the same time on tiles that share a slab all wait for its first fill: a load
  // job sees HBM latency unless its bytes were fetched by an earlier wave.
  // A step is done when its last request is: with dies, nearly every step has far bytes, so its
  // latency is a far one (two crossings), not the far share of it.
  const double lat = static_cast<double>(p.l2_latency) + (far > 0 ? 2.0 : 0.0) * static_cast<double>(p.die_link_latency) +
                     static_cast<double>(p.dram_latency) *
                         std::min(1.0, dram_read * static_cast<double>(active) / std::max(1.0, delivered));
  // Per full tile: main loop (steady state of the K steps), epilogue.
  // The main loop in steps: an SMEM stage (tensor core) / an L1 chunk (cube). A step's transfer over
  // the core's share of bandwidth, its consumption by the datapath, and the slots that keep steps in
  // flight (Little's law: a slot is held from its loads' issue through the memory latency, the
  // transfer and the consumption).
  double xfer_bytes = 0, consume = 0, slots = 0, steps = 0, compute = 0;
  uint64_t instr = 0;
  if (tc) {
    // The instruction's rows (128, a pair's 256) whatever M is, and N padded to its multiple of 8.
    const uint64_t per_instr = ceil_div(s.mma_m * round_up(cols, 8), static_cast<uint64_t>(p.dot_lanes));
    const uint64_t read = ceil_div(static_cast<uint64_t>(std::ceil(static_cast<double>((s.mma_m + cols) * s.kin) * s.eb)),
                                   static_cast<uint64_t>(p.smem_read_bytes_per_cycle));
    const double cp = static_cast<double>(ceil_div((rows + cols) * (kt / s.block) * s.sb,
                                                   static_cast<uint64_t>(p.tmem_cp_bytes_per_cycle)));
    instr = s.K / s.kin;
    compute = static_cast<double>(instr * per_instr);
    consume = std::max(static_cast<double>(kt / s.kin) * static_cast<double>(std::max({per_instr, read, depth})), cp);
    xfer_bytes = static_cast<double>(first);
    slots = static_cast<double>(m.stages);
    steps = static_cast<double>(g.ksteps);
  } else {
    const uint64_t R = static_cast<uint64_t>(p.rows), C = static_cast<uint64_t>(p.cols);
    const uint64_t per_step = ceil_div(rows, R) * ceil_div(cols, C) * ceil_div(kt, static_cast<uint64_t>(p.pe_k));
    const uint64_t mte1 = ceil_div(std::max(s.operand_bytes(rows, kt), s.operand_bytes(cols, kt)),
                                   static_cast<uint64_t>(p.mte1_bytes_per_cycle));
    instr = g.ksteps;
    compute = static_cast<double>(ceil_div(rows, R) * ceil_div(cols, C) * ceil_div(s.K, static_cast<uint64_t>(p.pe_k)));
    consume = static_cast<double>(g.steps_per_chunk) * static_cast<double>(std::max({per_step, depth, mte1}));
    const uint64_t l1k = std::min<uint64_t>(kt * g.steps_per_chunk, s.K);
    const double a_bytes = a_resident ? a_loads / static_cast<double>(tiles_per_core) * static_cast<double>(a_tile)
                                      : static_cast<double>(s.operand_bytes(rows, l1k));
    xfer_bytes = static_cast<double>(s.operand_bytes(cols, l1k)) + a_bytes;
    slots = 2;
    steps = static_cast<double>(g.chunks);
  }
  // A step's pace with `share` cores loading: its transfer, its consumption, or the slots' latency
  // hiding (Little's law).
  const auto step_of = [&](double share) {
    const double xfer = xfer_bytes / bw_of(share);
    return std::max({xfer, consume, (lat + xfer + consume) / slots});
  };
  const double step = step_of(static_cast<double>(active));
  const double mainloop = steps * step;
  const uint64_t out_tile = s.out_bytes(rows, cols);
  const double drain = static_cast<double>(
      tc ? ceil_div(rows * cols * 4, static_cast<uint64_t>(p.tmem_ld_bytes_per_cycle))
         : ceil_div(rows * cols * 4, static_cast<uint64_t>(p.fixpipe_bytes_per_cycle)));
  const double quant = s.out_block ? static_cast<double>(ceil_div(rows * cols, static_cast<uint64_t>(p.quant_elems_per_cycle))) : 0.0;
  const double store = static_cast<double>(ceil_div(out_tile, static_cast<uint64_t>(p.core_store_bytes_per_cycle)));
  const double stage = static_cast<double>(s.smem_stage(p, rows, cols));
  const double epilogue = std::max({drain, quant, stage, store});
  const bool overlap = tc ? g.nacc >= 2 : true;  // a second accumulator lets the epilogue overlap
  const auto period_of = [&](double main) { return overlap ? std::max(main, epilogue) : main + epilogue; };
  const double period = period_of(mainloop);
  // Waves: every core busy in the full ones; the last, partial wave has fewer cores loading, each
  // with a larger share of the bandwidth.
  const uint64_t rem = tiles % active;
  const double last_period = rem ? period_of(steps * step_of(static_cast<double>(rem))) : period;
  // Start-up: the first step's latency and transfer; then the steps; end: the last step's
  // consumption, the pipeline, drain, quantize and store of the last tile.
  const double startup = lat + static_cast<double>(first) / bw;
  const double tail = static_cast<double>(depth) + drain + quant + stage + store + static_cast<double>(p.l2_latency);
  const double core_time =
      startup + static_cast<double>(tiles_per_core - 1) * period + last_period - step + consume + tail;
  const bool load_bound = step > consume * 1.001;
  const double dram_time = (dram_read + out) / dram_bw + static_cast<double>(p.dram_latency);
  const double l2_time = (l2_read + out) / static_cast<double>(p.l2_bytes_per_cycle) + static_cast<double>(p.l2_latency);
  const double link_bytes = link_read + out * far;
  const double link_time = far > 0 ? link_bytes / link_bw + static_cast<double>(p.die_link_latency) : 0.0;
  // The launch and prologue come before the first load, serially.
  st.cycles = static_cast<uint64_t>(std::ceil(std::max({core_time, dram_time, l2_time, link_time}))) + s.launch;
  st.clock_mhz = s.clock_mhz;
  st.launch_cycles = s.launch;
  st.tiles = tiles;
  st.instructions = tiles * instr;
  // compute_cycles: tiles x compute per tile (partial tiles counted as full: the estimate's grain).
  st.compute_cycles = std::min<uint64_t>(static_cast<uint64_t>(static_cast<double>(tiles) * compute), st.cycles * P);
  // Idle core-cycles: cores without a tile, the wave tail, and the rest charged to what bounds a tile.
  const uint64_t chip = static_cast<uint64_t>(p.cores);  // cores outside the grid idle too
  const uint64_t total = st.cycles * chip;
  // No core has a tile during the launch.
  const uint64_t no_tile = (chip - active) * st.cycles + active * s.launch;
  const uint64_t tail_cycles = static_cast<uint64_t>(
      static_cast<double>(active * tiles_per_core - tiles) * period);
  uint64_t rest = total - std::min(total, st.compute_cycles + no_tile);
  const uint64_t tail_c = std::min(rest, tail_cycles);
  rest -= tail_c;
  std::vector<std::pair<std::string, uint64_t>> stalls;
  for (std::string_view c : stall_causes(p.engine)) stalls.emplace_back(std::string(c), 0);
  auto add = [&](std::string_view c, uint64_t v) {
    for (auto& [k, x] : stalls)
      if (k == c) x += v;
  };
  add("no_tile", no_tile);
  add("tail", tail_c);
  const bool mem_bound = load_bound || dram_time >= core_time || l2_time >= core_time || link_time >= core_time;
  // The rest: waiting for operands when a bandwidth or latency bound sets the pace, else the
  // per-core start-up and drain around the main loop.
  add(mem_bound ? (tc ? "operand_load" : "l1_load") : "tail", rest);
  st.stalls = std::move(stalls);
  st.bytes.clear();
  for (std::string_view l : byte_levels(p.engine)) {
    double v = 0;
    if (l == "dram_read") v = dram_read;
    else if (l == "dram_write" || l == "l2_write" || l == "global_store") v = out;
    else if (l == "l2_read") v = l2_read;
    else if (l == "smem_write" || l == "l1_write") v = delivered;
    else if (l == "die_link") v = link_bytes;
    st.bytes.emplace_back(std::string(l), static_cast<uint64_t>(v));
  }
  return st;
}

// Runs `f` on the problem the mapping's kernel computes. Under swap_ab that is D^T = B . A^T: A and
// B (codes and scales) swap roles, C is transposed in and D transposed back (the same products in
// the same K order: bit-identical D; the datapath hook sees the swapped steps).
void with_roles(const Shape& s, const Mapping& m, const Workload& w, Result& r,
                const std::function<void(const Shape&, const Workload&, Result&)>& f) {
  if (!m.swap_ab) return f(s, w, r);
  Workload t = w;
  std::swap(t.M, t.N);
  std::swap(t.a, t.b);
  std::swap(t.sa, t.sb);
  std::vector<float> ct;
  if (!w.c.empty()) {
    ct.resize(w.c.size());
    for (size_t i = 0; i < s.M; ++i)
      for (size_t j = 0; j < s.N; ++j) ct[j * s.M + i] = w.c[i * s.N + j];
    t.c = ct;
  }
  Result rt;
  rt.d.assign(s.M * s.N, 0.0f);
  f(for_mapping(s, m), t, rt);
  for (size_t i = 0; i < s.M; ++i)
    for (size_t j = 0; j < s.N; ++j) r.d[i * s.N + j] = rt.d[j * s.M + i];
}

namespace {

// Orders mappings by their estimate; ties: fewer bytes from HBM, then the candidate order.
std::vector<MapChoice> rank(const Params& p, const Shape& s, const std::vector<Mapping>& also = {}) {
  std::vector<MapChoice> v;
  for (const Mapping& m : candidates(p, s)) v.push_back({m, analytic(p, s, m)});
  Geometry g;
  for (const Mapping& m : also)
    if (fits(p, for_mapping(s, m), m, g, nullptr)) v.push_back({m, analytic(p, s, m)});
  std::stable_sort(v.begin(), v.end(), [](const MapChoice& a, const MapChoice& b) {
    if (a.estimate.cycles != b.estimate.cycles) return a.estimate.cycles < b.estimate.cycles;
    // Ties (e.g. everything at the memory roofline): less traffic, then larger tiles.
    if (a.estimate.bytes_of("dram_read") != b.estimate.bytes_of("dram_read"))
      return a.estimate.bytes_of("dram_read") < b.estimate.bytes_of("dram_read");
    if (a.estimate.bytes_of("l2_read") != b.estimate.bytes_of("l2_read"))
      return a.estimate.bytes_of("l2_read") < b.estimate.bytes_of("l2_read");
    return a.mapping.tile_m * a.mapping.tile_n > b.mapping.tile_m * b.mapping.tile_n;
  });
  return v;
}

}  // namespace
}  // namespace fp4sim::models::detail

namespace fp4sim::models {

namespace {
bool is_pair(const Params& p) { return p.engine == EngineKind::TensorCore && p.cta_group == 2; }
}  // namespace

std::vector<MapChoice> rank_mappings(const Params& p0, const Workload& w) {
  Params p = p0;
  const detail::Shape s = detail::make_shape(p, w);
  std::vector<MapChoice> v = detail::rank(p, s);
  if (is_pair(p0))
    for (MapChoice& c : v) {
      detail::stats_in_sms(c.estimate, p0.cores);
      c.mapping = c.estimate.mapping;
    }
  return v;
}

namespace {
Result run_in_cores(const Params& p, const detail::Shape& s, const Workload& w, const RunOptions& o);
}  // namespace

Result run(const Params& p0, const Workload& w, const RunOptions& o) {
  Params p = p0;
  const detail::Shape s = detail::make_shape(p, w);
  if (!is_pair(p0)) return run_in_cores(p, s, w, o);
  // A pair is one core of the model: grids of the extra candidates in pairs, the statistics in SMs.
  RunOptions po = o;
  for (Mapping& m : po.also) {
    m.cores /= 2;
    m.cluster_sms = std::max<int64_t>(1, m.cluster_sms / 2), m.cluster_m = std::max<int64_t>(1, m.cluster_m / 2);
  }
  Result r = run_in_cores(p, s, w, po);
  detail::stats_in_sms(r.stats, p0.cores);
  return r;
}

namespace {
Result run_in_cores(const Params& p, const detail::Shape& s, const Workload& w, const RunOptions& o) {
  const std::vector<MapChoice> ranked = detail::rank(p, s, o.also);
  Result r;
  if (!w.timing_only) {
    r.d.assign(s.M * s.N, 0.0f);
    detail::init_quantized_output(s, r);
  }
  if (o.timing == Timing::Analytic) {
    r.stats = ranked.front().estimate;
    r.stats.mappings_evaluated = ranked.size();
    if (!w.timing_only)
      detail::with_roles(s, ranked.front().mapping, w, r, [&](const detail::Shape& sh, const Workload& wm, Result& rm) {
        detail::run_functional(p, sh, ranked.front().mapping, wm, rm, o.progress);
      });
    return r;
  }
  // Cycle mode: simulate a few mappings (timing only) and keep the fastest, then run that one with
  // the datapath. First the best analytic mapping of each of the best tile shapes (up to half of
  // `mapper_candidates`: the shapes differ most in what the estimate misses, latency hiding and
  // contention), then every mapping the estimate cannot tell from the best (within 2 %, up to four
  // times `mapper_candidates`), then the next best estimates up to `mapper_candidates`.
  const size_t want = static_cast<size_t>(p.mapper_candidates);
  std::vector<size_t> pick;
  auto picked = [&](size_t i) { return std::find(pick.begin(), pick.end(), i) != pick.end(); };
  for (size_t i = 0; i < ranked.size() && pick.size() < (want + 1) / 2; ++i) {
    const Mapping& m = ranked[i].mapping;
    const bool seen = std::any_of(pick.begin(), pick.end(), [&](size_t j) {
      return ranked[j].mapping.tile_m == m.tile_m && ranked[j].mapping.tile_n == m.tile_n;
    });
    if (!seen) pick.push_back(i);
  }
  const double near = 1.02 * static_cast<double>(ranked.front().estimate.cycles);
  for (size_t i = 0; i < ranked.size() && want > 1 && pick.size() < 4 * want; ++i)
    if (static_cast<double>(ranked[i].estimate.cycles) <= near && !picked(i)) pick.push_back(i);
  for (size_t i = 0; i < ranked.size() && pick.size() < want; ++i)
    if (!picked(i)) pick.push_back(i);
  // The extra candidates are always simulated (the estimate may rank them low).
  for (size_t i = 0; i < ranked.size(); ++i)
    if (!picked(i) && std::any_of(o.also.begin(), o.also.end(), [&](const Mapping& m) {
          return m.str() == ranked[i].mapping.str();
        }))
      pick.push_back(i);
  std::sort(pick.begin(), pick.end());
  const size_t n = pick.size();
  size_t best = pick.front();
  Stats best_stats;
  // A long job (every candidate at least kLongWaves waves of tiles over its cores) is ranked by its
  // first kRankWaves waves, extrapolated linearly to all its tiles ("ranking by the first waves":
  // the estimate only picks the mapping, whose full simulation is the result).
  constexpr uint64_t kRankWaves = 4, kLongWaves = 16;
  bool by_waves = n > 1;
  for (size_t i : pick) {
    const Mapping& m = ranked[i].mapping;
    const detail::Shape sh = detail::for_mapping(s, m);
    by_waves = by_waves && detail::geometry(p, sh, m).tiles() >= kLongWaves * static_cast<uint64_t>(detail::grid_of(p, sh, m));
  }
  // Progress over every simulation of the run: the candidates, then the chosen one in full (with its
  // datapath, or after a ranking by the first waves).
  const size_t sims = n > 1 ? n + (by_waves || !w.timing_only ? 1 : 0) : 1;
  const auto part = [&](size_t k) -> Progress {
    if (!o.progress) return {};
    return [&o, k, sims](double f) { o.progress((static_cast<double>(k) + f) / static_cast<double>(sims)); };
  };
  bool best_is_full = false;
  if (n > 1) {
    Workload tw = w;
    tw.timing_only = true;
    tw.datapath = nullptr;
    double best_cycles = 0;
    for (size_t k = 0; k < n; ++k) {
      const Mapping& m = ranked[pick[k]].mapping;
      const detail::Shape sh = detail::for_mapping(s, m);
      const uint64_t tiles = detail::geometry(p, sh, m).tiles();
      const uint64_t limit = by_waves ? kRankWaves * static_cast<uint64_t>(detail::grid_of(p, sh, m)) : 0;
      Stats st = detail::run_cycle(p, sh, m, tw, nullptr, part(k), limit);
      const double c = by_waves ? static_cast<double>(st.cycles) * static_cast<double>(tiles) / static_cast<double>(limit)
                                : static_cast<double>(st.cycles);
      if (k == 0 || c < best_cycles) best = pick[k], best_cycles = c, best_stats = std::move(st);
    }
    best_is_full = !by_waves;
  }
  if (!best_is_full || !w.timing_only) {
    const Mapping& m = ranked[best].mapping;
    if (w.timing_only)
      best_stats = detail::run_cycle(p, detail::for_mapping(s, m), m, w, nullptr, part(sims - 1));
    else
      detail::with_roles(s, m, w, r, [&](const detail::Shape& sh, const Workload& wm, Result& rm) {
        best_stats = detail::run_cycle(p, sh, m, wm, &rm, part(sims - 1));
      });
  }
  r.stats = std::move(best_stats);
  r.stats.mappings_evaluated = n;
  return r;
}
}  // namespace

}  // namespace fp4sim::models
