// Internal: what both timing modes share: the validated problem (Shape), the tile geometry and the
// bytes of a mapping, the mapper's candidates and the analytic estimate. No SystemC here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "fp4sim/models/models.hpp"

namespace fp4sim::models::detail {

inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
inline uint64_t round_up(uint64_t a, uint64_t b) { return ceil_div(a, b) * b; }

// The workload as the models see it (validated).
struct Shape {
  EngineKind engine = EngineKind::TensorCore;
  size_t M = 0, N = 0, K = 0;
  size_t kin = 0;    // instruction K
  size_t block = 0;  // elements per block scale
  size_t gran = 0;   // K granule of a step (instruction K, PE K, HiF4 rounding group)
  double eb = 0;     // element bytes
  size_t sb = 0;     // scale bytes per block
  bool has_c = false;
  size_t out_block = 0;    // output quantize unit's block (0: no unit)
  double out_eb = 0;       // output element bytes (4: FP32 D)
  size_t out_sb = 0;       // output scale bytes per block
  uint64_t d_bytes = 4;    // bytes of one D element without a quantize unit (out_dtype)
  double clock_mhz = 0;    // the sustained clock of this job's operand kind: the cycles' unit
  bool timing_only = false;  // the workload's D is not computed (split-K may be offered)
  uint64_t launch = 0;     // launch + prologue cycles (launch_ns at clock_mhz)
  uint64_t mma_m = 128;    // tensor core: the instruction's rows (256 for a cta_group::2 pair)
  // Tensor core: the epilogue's registers -> SMEM staging of one tile before the TMA store.
  uint64_t smem_stage(const Params& p, uint64_t rows, uint64_t cols) const;
  // Bytes of `rows` x `k` operand elements and their scales.
  uint64_t operand_bytes(uint64_t rows, uint64_t k) const;
  uint64_t out_bytes(uint64_t rows, uint64_t cols) const;  // D as stored (FP32 or quantized)
};

// The problem a mapping's kernel computes: D^T = B . A^T (M and N swapped) under swap_ab.
inline Shape for_mapping(const Shape& s, const Mapping& m) {
  Shape t = s;
  if (m.swap_ab) std::swap(t.M, t.N);
  return t;
}

// Validates the workload and the parameters (std::invalid_argument, one line) and resolves the
// parameters' automatic values (pipeline depth from the RTL unit). With cta_group = 2 the cores of p
// become pairs (pair_cores below).
Shape make_shape(Params& p, const Workload& w);

// cta_group::2: a pair of SMs runs one 256-row MMA; each SM holds its 128 rows of A and D in its
// SMEM and TMEM and loads half of B, which the pair's MMA reads from both SMs. The models run the pair
// as one core with twice an SM's dot lanes, load / store links, SMEM and its ports, and a 256-row
// instruction: per SM that is the same MMA time (128 rows each), A of its own rows, B halved.
// Clusters count pairs (cluster_sms 1, the pair alone, or even). Throws std::invalid_argument otherwise.
void pair_cores(Params& p);
// Statistics of a pair run back in SMs: cores, core-cycles (compute, stalls; an odd SM out idles),
// peak and a mapping's grid. `sms` is the chip's SM count.
void stats_in_sms(Stats& st, int64_t sms);

// One tile's extent.
struct Tile {
  size_t r0 = 0, rows = 0, c0 = 0, cols = 0;
  uint32_t mb = 0;  // m block index (A rows reuse key)
  size_t index = 0;  // the output tile's index in raster order
  // Split-K: this unit runs K steps [ks0, ks1) of tile_k; part `split` of `splits` (the last sums).
  size_t ks0 = 0, ks1 = 0;
  uint32_t split = 0, splits = 1;
  bool partial() const { return split + 1 < splits; }  // stores an FP32 partial tile, not D
  bool sums() const { return splits > 1 && !partial(); }
};

struct Geometry {
  size_t tiles_m = 0, tiles_n = 0, ksteps = 0, chunks = 0, steps_per_chunk = 0;
  size_t splits = 1;  // split-K parts per tile
  // Tensor core, TMA multicast in a cluster: the cores that share a tile's A (the cluster's cores
  // along N with tiles) and its B (along M) each load 1 / mcast of it from L2 and receive the rest
  // from their peers' loads (docs/models.md "TMA multicast").
  size_t mcast_a = 1, mcast_b = 1;
  size_t tiles() const { return tiles_m * tiles_n; }
  Tile tile(const Shape& s, const Mapping& m, size_t i) const;  // i-th tile in raster order, all of K
  // Units of work in the order the scheduler hands them out: without split-K the tiles; with it
  // every tile's parts 0 .. S-2 (tile by tile), then every tile's last part.
  size_t units() const { return tiles() * splits; }
  Tile unit(const Shape& s, const Mapping& m, size_t i) const;
  size_t nacc = 0;       // tensor core: accumulator slots in TMEM
  size_t sf_cols = 0;    // tensor core: TMEM columns of one scale-factor slot
};
// Throws std::invalid_argument if the mapping does not fit the buffers.
Geometry geometry(const Params& p, const Shape& s, const Mapping& m);
bool fits(const Params& p, const Shape& s, const Mapping& m, Geometry& g, std::string* why);

// Every mapping that fits, honouring the pinned parts of p (throws if none does).
std::vector<Mapping> candidates(const Params& p, const Shape& s);

// Cores a mapping runs at once: its grid in whole clusters (a cluster launches only whole; `fits`
// rejects a cluster larger than the grid or than a GPC). A cluster runs inside one GPC, so with
// `gpcs` set no more clusters run than the GPCs hold (148 SMs in 8 GPCs hold 8 clusters of 16, not
// 9), nor more than max_clusters when set. A cluster of cluster_m cores along M covers cluster_m
// tiles of M: where M has fewer (a decode GEMM), or M's last cluster row is padded, that share of
// its cores idles, so the grid counts only the cores with tiles. `s` is the problem the mapping's
// kernel computes.
int64_t grid_of(const Params& p, const Shape& s, const Mapping& m);
// Clusters of c cores the chip's GPCs hold (p.gpcs = 0: no GPC limit).
int64_t gpc_clusters(const Params& p, int64_t c);

// The analytic (closed-form, per tile) estimate of one mapping.
Stats analytic(const Params& p, const Shape& s, const Mapping& m);

// Compulsory HBM bytes (A, B, scales, C once; D stored once).
uint64_t compulsory_bytes(const Shape& s);
void fill_rooflines(const Params& p, const Shape& s, Stats& st);

// Functional pieces shared by the modes (functional.cpp).
std::vector<float> run_step(const Workload& w, const StepOrigin& at, size_t M, size_t N, size_t K,
                            std::span<const uint8_t> a, std::span<const uint32_t> sa, std::span<const uint8_t> b,
                            std::span<const uint32_t> sb, std::span<const float> c);
// Copies rows [r0, r0+rows) x cols [c0, c0+cols) of a row-major [*, ld] matrix to dst (rows x cols).
template <class T>
void copy_block(std::span<const T> src, size_t ld, size_t r0, size_t rows, size_t c0, size_t cols, T* dst) {
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) dst[r * cols + c] = src[(r0 + r) * ld + c0 + c];
}
// The output quantize unit's arithmetic on one tile of D ([rows, cols], cols a multiple of the
// out block): golden quantize with PTS off, written into the result's q_codes / q_scales.
void quantize_tile(const Params& p, const Shape& s, const Tile& t, const float* d_tile, Result& r);
void init_quantized_output(const Shape& s, Result& r);
// Split-K fixup: the last part of tile t, its own K steps done (from C, or +0), adds the partial
// tiles of parts 0 .. S-2 in FP32, in part order (`partials` [tile][part], each rows x cols).
void add_partials(const std::vector<std::vector<float>>& partials, const Tile& t, std::vector<float>& acc);
// The whole functional job without timing (analytic mode): every step through the datapath in the
// same order and blocking as the cycle model, so the hook sees the same calls.
void run_functional(const Params& p, const Shape& s, const Mapping& m, const Workload& w, Result& r,
                    const Progress& progress);

// Runs f on the problem the mapping's kernel computes (swap_ab: A and B swapped, D transposed back).
void with_roles(const Shape& s, const Mapping& m, const Workload& w, Result& r,
                const std::function<void(const Shape&, const Workload&, Result&)>& f);

// The structural SystemC model (sc_models.cpp). tile_limit > 0: only the first tile_limit tiles
// (timing only; the mapper's ranking of large jobs by their first waves): Stats::cycles is the time
// they take, the other statistics are partial.
Stats run_cycle(const Params& p, const Shape& s, const Mapping& m, const Workload& w, Result* r,
                const Progress& progress, uint64_t tile_limit = 0);

}  // namespace fp4sim::models::detail
