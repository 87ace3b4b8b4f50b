// The tuned kernels of the CUDA module (QuantKernel::Tuned, GemmKernel::Tuned; docs/gpu.md).
// Same arithmetic as the simple kernels: every value comes from the __host__ __device__ functions
// of quant_hd.hpp / tuned_hd.hpp / mma_hd.hpp (checked on the CPU against golden); what changes is
// how work is laid out on the GPU.
//
// Quantizers: a warp walks "tiles" of 512 elements (grid-stride): 4 steps of 128, one float4 per
// lane and step (every load a fully used 512-byte warp access). A block is 4 (NVFP4), 8 (MX) or 16
// (HiF4) neighbouring lanes: its amax and HiF4 level bits are combined with xor shuffles, codes
// leave as one 4-byte store per lane. SR: lane l draws the Philox block (tile / 16 + l), once per
// 16 elements as SPEC §3 lays them out, and each step hands the words to the lanes that need them
// by shuffles. RHT-16: a 16-tile is one quad of lanes; each lane gathers the tile by shuffles and
// computes its 4 outputs (tuned_hd.hpp's fast exact path) in registers, no rotated copy in memory.
// NVFP4 without PTS needs no amax before quantizing: the kernel reduces the block amaxes it has
// anyway into the tensor amax (reported in Quantized::amax); with PTS an amax pass runs first (with
// RHT it rotates too, and the quantizer rotates again: recomputing beats a write + read of a copy).
//
// GEMM emulation: 64 x 64 output tiles per CTA, K in slabs through shared memory.
//   grouped Blackwell kinds (mxf4, mxf4nvf4) and ascend-hif4: 8 warps of 16 x 32 outputs; the exact
//     integer group sums come from mma.sync.m16n8k16 s8.s8.s32 on the int8 q values (|q| <= 28, at
//     most 64 products: far inside s32, so the tensor core's sum is the exact sum); the scale and
//     alignment steps are mma_core.hpp's bw_grouped_step / mma_hd.hpp's ascend_group_add;
//   fused Blackwell (mxf8f6f4), fp32-seq and exact: 16 x 16 threads, one output each, elements
//     decoded (or, for fp32-seq, dequantized) once per slab into shared memory instead of once per
//     output; each thread then runs the model's step functions on its row and column.
// One kernel instance per model (and HiF4 or not): the model switch is resolved at compile time.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "cuda_util.cuh"
#include "fp4sim/gpu/tuned_hd.hpp"
#include "tuned.cuh"

namespace fp4sim::gpu::detail {
namespace {

constexpr unsigned kFull = 0xFFFFFFFFu;
constexpr size_t kTile = hd::kTileElems;  // elements per warp and tile: 32 lanes x 4 steps x float4
constexpr unsigned kQuantThreads = 256;

unsigned sm_count() {
  static int n = 0;
  if (n == 0) {
    int dev = 0;
    check(cudaGetDevice(&dev), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev), "multiprocessor count");
  }
  return static_cast<unsigned>(std::max(n, 1));
}

// Enough warps for one tile each, at most 8 CTAs per SM (grid-stride beyond that).
unsigned quant_grid(size_t n) {
  const size_t tiles = (n + kTile - 1) / kTile;
  const size_t ctas = (tiles + kQuantThreads / 32 - 1) / (kQuantThreads / 32);
  return static_cast<unsigned>(std::max<size_t>(1, std::min<size_t>(ctas, size_t{sm_count()} * 8)));
}

struct Lane {
  unsigned lane;
  size_t first_tile, tile_stride;  // in elements
};
__device__ __forceinline__ Lane lane_info() {
  const size_t gtid = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t nthreads = static_cast<size_t>(gridDim.x) * blockDim.x;
  return {threadIdx.x & 31u, gtid / 32 * kTile, nthreads / 32 * kTile};
}

__device__ __forceinline__ bool load4(const float* x, size_t e, size_t n, float (&v)[4]) {
  if (e >= n) {  // n is a multiple of 16: a block (and an RHT tile) is all in or all out
    v[0] = v[1] = v[2] = v[3] = 0.0f;
    return false;
  }
  const float4 f = __ldg(reinterpret_cast<const float4*>(x + e));  // 16-byte aligned: e % 4 == 0
  v[0] = f.x;
  v[1] = f.y;
  v[2] = f.z;
  v[3] = f.w;
  return true;
}

// The loads of a tile's 4 steps, issued before any of them is used, so
// that each lane keeps 64 bytes in flight.
template <class A>
__device__ __forceinline__ void load_tile(const A& a, size_t tile, unsigned lane, float (&xv)[4][4], bool (&ok)[4]) {
#pragma unroll
  for (int it = 0; it < 4; ++it) ok[it] = load4(a.x, tile + hd::tile_offset(it, lane), a.n, xv[it]);
}

// SR words of a tile: lane l holds the Philox block (tile / 16 + l).
struct SrWords {
  uint32_t w[4];
};
__device__ __forceinline__ SrWords draw(uint64_t seed, uint32_t stream, size_t tile, unsigned lane) {
  const auto b = fp4sim::philox_block(seed, stream, tile / 16 + lane);
  return {{b[0], b[1], b[2], b[3]}};
}
// The word of this lane's 4 elements in step `it`: Philox block it * 8 + lane / 4 of the tile,
// word lane % 4 (elements it * 128 + 4 * lane .. + 3).
__device__ __forceinline__ uint32_t sr_pick(const SrWords& s, int it, unsigned lane) {
  const int src = hd::sr_src_lane(it, lane);
  const uint32_t w0 = __shfl_sync(kFull, s.w[0], src), w1 = __shfl_sync(kFull, s.w[1], src);
  const uint32_t w2 = __shfl_sync(kFull, s.w[2], src), w3 = __shfl_sync(kFull, s.w[3], src);
  const int q = hd::sr_word_index(lane);
  return q == 0 ? w0 : (q == 1 ? w1 : (q == 2 ? w2 : w3));
}

// RHT-16 of the quad's tile in place: v becomes this lane's 4 outputs.
__device__ __forceinline__ void rht_quad(float (&v)[4], unsigned lane, uint32_t mask, bool bf16) {
  float t[16];
  const int q0 = static_cast<int>(lane & ~3u);
#pragma unroll
  for (int s = 0; s < 4; ++s)
#pragma unroll
    for (int k = 0; k < 4; ++k) t[4 * s + k] = __shfl_sync(kFull, v[k], q0 + s);
  hd::rht16_outputs4(t, mask, static_cast<int>(lane & 3u), bf16, v);
}

template <unsigned Width>
__device__ __forceinline__ uint32_t group_max(uint32_t v) {
#pragma unroll
  for (unsigned o = 1; o < Width; o <<= 1) v = max(v, __shfl_xor_sync(kFull, v, o));
  return v;
}
template <unsigned Width>
__device__ __forceinline__ uint32_t group_or(uint32_t v) {
#pragma unroll
  for (unsigned o = 1; o < Width; o <<= 1) v |= __shfl_xor_sync(kFull, v, o);
  return v;
}

__device__ __forceinline__ void warp_amax_to(uint32_t m, unsigned lane, unsigned* out) {
  m = group_max<32>(m);
  if (lane == 0 && m != 0) atomicMax(out, m);  // finite magnitudes order like their bits
}

struct QArgs {
  const float* x;
  size_t n;
  int rnd, rule;
  uint64_t seed;
  uint32_t stream;
  uint32_t rht_mask;
  bool rht_bf16;
  bool pts;
  hd::Elem elem;
};

// Tensor amax (NVFP4 with PTS), of the rotated values with RHT.
template <bool Rht>
__global__ void __launch_bounds__(kQuantThreads) kt_amax(QArgs a, unsigned* out) {
  const Lane L = lane_info();
  uint32_t m = 0;
  for (size_t tile = L.first_tile; tile < a.n; tile += L.tile_stride) {
    float xv[4][4];
    bool ok[4];
    load_tile(a, tile, L.lane, xv, ok);
#pragma unroll
    for (int it = 0; it < 4; ++it) {
      float(&v)[4] = xv[it];
      if constexpr (Rht) rht_quad(v, L.lane, a.rht_mask, a.rht_bf16);
      if (ok[it]) m = max(m, hd::amax4_ignore_nan(v));
    }
  }
  warp_amax_to(m, L.lane, out);
}

// NVFP4 1x16. amax_in: the tensor amax (PTS); without PTS, amax_out collects it.
template <bool Rht, bool Sr>
__global__ void __launch_bounds__(kQuantThreads) kt_nvfp4(QArgs a, const unsigned* amax_in, unsigned* amax_out,
                                                          uint8_t* codes, uint8_t* scales) {
  const Lane L = lane_info();
  const hd::Nvfp4Scale ts = a.pts ? hd::nvfp4_tensor_scale(hd::u2f(*amax_in), true) : hd::Nvfp4Scale{1.0f, 1.0f};
  uint32_t m = 0;
  for (size_t tile = L.first_tile; tile < a.n; tile += L.tile_stride) {
    SrWords sr{};
    if constexpr (Sr) sr = draw(a.seed, a.stream, tile, L.lane);
    float xv[4][4];
    bool ok[4];
    load_tile(a, tile, L.lane, xv, ok);
#pragma unroll
    for (int it = 0; it < 4; ++it) {
      const size_t e = tile + hd::tile_offset(it, L.lane);
      float(&v)[4] = xv[it];
      if constexpr (Rht) rht_quad(v, L.lane, a.rht_mask, a.rht_bf16);
      const uint32_t bam = group_max<4>(hd::amax4_ignore_nan(v));
      const uint8_t sc = hd::nvfp4_scale_code(hd::u2f(bam), ts);
      const float inv = hd::nvfp4_inverse(sc, ts);
      uint32_t rb = 0;
      if constexpr (Sr) rb = sr_pick(sr, it, L.lane);
      const uint32_t c4 = hd::nvfp4_codes4(v, inv, a.rnd, rb);
      if (ok[it]) {
        *reinterpret_cast<uint32_t*>(codes + e) = c4;
        if ((L.lane & 3u) == 0) scales[e / 16] = sc;
        m = max(m, bam);
      }
    }
  }
  if (amax_out) warp_amax_to(m, L.lane, amax_out);
}

// MX 1x32: 8 lanes per block.
template <bool Rht, bool Sr>
__global__ void __launch_bounds__(kQuantThreads) kt_mx(QArgs a, uint8_t* codes, uint8_t* scales) {
  const Lane L = lane_info();
  for (size_t tile = L.first_tile; tile < a.n; tile += L.tile_stride) {
    SrWords sr{};
    if constexpr (Sr) sr = draw(a.seed, a.stream, tile, L.lane);
    float xv[4][4];
    bool ok[4];
    load_tile(a, tile, L.lane, xv, ok);
#pragma unroll
    for (int it = 0; it < 4; ++it) {
      const size_t e = tile + hd::tile_offset(it, L.lane);
      float(&v)[4] = xv[it];
      if constexpr (Rht) rht_quad(v, L.lane, a.rht_mask, a.rht_bf16);
      const hd::MxScale s = hd::mx_scale(a.elem, group_max<8>(hd::magmax4(v)), a.rule);
      uint32_t rb = 0;
      if constexpr (Sr) rb = sr_pick(sr, it, L.lane);
      const uint32_t c4 = hd::mx_codes4(a.elem, v, s, a.rnd, rb);
      if (ok[it]) {
        *reinterpret_cast<uint32_t*>(codes + e) = c4;
        if ((L.lane & 7u) == 0) scales[e / 32] = s.code;
      }
    }
  }
}

// HiF4 1x64: 16 lanes per block; lane j of the block holds group j (its 4 elements).
template <bool Rht, bool Sr>
__global__ void __launch_bounds__(kQuantThreads) kt_hif4(QArgs a, uint8_t* codes, uint32_t* words) {
  const Lane L = lane_info();
  const int j = static_cast<int>(L.lane & 15u);
  for (size_t tile = L.first_tile; tile < a.n; tile += L.tile_stride) {
    SrWords sr{};
    if constexpr (Sr) sr = draw(a.seed, a.stream, tile, L.lane);
    float xv[4][4];
    bool ok[4];
    load_tile(a, tile, L.lane, xv, ok);
#pragma unroll
    for (int it = 0; it < 4; ++it) {
      const size_t e = tile + hd::tile_offset(it, L.lane);
      float(&v)[4] = xv[it];
      if constexpr (Rht) rht_quad(v, L.lane, a.rht_mask, a.rht_bf16);
      const uint32_t v_self = hd::magmax4(v);
      const uint32_t v_pair = __shfl_xor_sync(kFull, v_self, 1);
      const hd::Hif4Consts hc = hd::hif4_consts(group_max<16>(v_self));
      uint32_t rb = 0;
      if constexpr (Sr) rb = sr_pick(sr, it, L.lane);
      uint8_t c[4];
      const uint32_t part = group_or<16>(hd::hif4_group(hc, j, v_self, v_pair, v, a.rnd, rb, c));
      if (ok[it]) {
        *reinterpret_cast<uint32_t*>(codes + e) =
            uint32_t{c[0]} | (uint32_t{c[1]} << 8) | (uint32_t{c[2]} << 16) | (uint32_t{c[3]} << 24);
        if (j == 0) words[e / 64] = part | (hc.nan ? 0xFFu : hc.e6);
      }
    }
  }
}

template <bool Rht, bool Sr>
void run_quant(const QuantJob& j, const QArgs& a, unsigned* damax, uint8_t* dcodes, uint8_t* dscales,
               uint32_t* dwords) {
  const unsigned grid = quant_grid(a.n);
  switch (j.f) {
    case BlockFormat::Nvfp4:
      check(cudaMemsetAsync(damax, 0, sizeof(unsigned)), "memset");
      if (j.pts) {
        kt_amax<Rht><<<grid, kQuantThreads>>>(a, damax);
        kt_nvfp4<Rht, Sr><<<grid, kQuantThreads>>>(a, damax, nullptr, dcodes, dscales);
      } else {
        kt_nvfp4<Rht, Sr><<<grid, kQuantThreads>>>(a, nullptr, damax, dcodes, dscales);
      }
      break;
    case BlockFormat::Hif4:
      kt_hif4<Rht, Sr><<<grid, kQuantThreads>>>(a, dcodes, dwords);
      break;
    default:
      kt_mx<Rht, Sr><<<grid, kQuantThreads>>>(a, dcodes, dscales);
      break;
  }
}

// ---- GEMM emulation ----

constexpr int kSlab = 64;  // K elements per shared-memory slab (a multiple of every k and block)

// mma.sync m16n8k16, s8 x s8 -> s32, D = A . B (C = 0). Fragments (PTX ISA, "Matrix Fragments for
// mma.m16n8k16" with .s8): g = lane / 4, t = lane % 4; a0 = A[g][4t .. 4t+3], a1 = A[g+8][...];
// b0 = B[k = 4t .. 4t+3][n = g]; d0, d1 = D[g][2t, 2t+1], d2, d3 = D[g+8][2t, 2t+1].
__device__ __forceinline__ void mma_s8_16816(int32_t (&d)[4], uint32_t a0, uint32_t a1, uint32_t b0) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%7,%7,%7};\n"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a0), "r"(a1), "r"(b0), "r"(0));
}

// Grouped Blackwell (Hif4 = false: k = 64, groups of 16, bw_grouped_step per instruction) and
// ascend-hif4 (Hif4 = true: a group of 64 per step, ascend_group_add). 256 threads: warp w covers
// rows 16 (w % 4) .. +15 and columns 32 (w / 4) .. +31 of the CTA's 64 x 64 tile.
constexpr int kMmaTile = 64;
constexpr int kQStride = kSlab + 16;  // bytes per smem row: 16-byte aligned, conflict-free fragments

// The grouped Blackwell kinds' shape at compile time (k = 64, groups of 16, Block elements per
// scale), so that bw_grouped_step's per-group arrays live in registers; the rest from p.
template <int Block>
struct GroupedKind {
  static constexpr int k = 64, group = 16, block = Block;
  int frac_bits, mb_s;
};

template <bool Hif4, int Block>
__global__ void __launch_bounds__(256) kt_gemm_mma(hd::GemmParams p, uint32_t* d) {
  __shared__ alignas(16) int8_t qa[kMmaTile * kQStride];
  __shared__ alignas(16) int8_t qb[kMmaTile * kQStride];
  __shared__ uint32_t wsa[kMmaTile][4], wsb[kMmaTile][4];  // the slab's scale codes / words
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int wm = (warp & 3) * 16, wn = (warp >> 2) * 32;
  const size_t m0 = static_cast<size_t>(blockIdx.y) * kMmaTile, n0 = static_cast<size_t>(blockIdx.x) * kMmaTile;
  const size_t nblk = p.K / static_cast<size_t>(p.block);
  constexpr int spi = kSlab / Block;  // scales per slab (and per Blackwell instruction: k = 64)

  // This thread's 16 outputs: (n-tile nt, register r) -> row wm + g + 8 (r / 2), col wn + 8 nt + 2t + r % 2.
  uint32_t cbits[4][4];
  float acc[4][4];
  bool nan[4][4];
#pragma unroll
  for (int nt = 0; nt < 4; ++nt)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const size_t i = m0 + static_cast<size_t>(wm + g + 8 * (r >> 1));
      const size_t j = n0 + static_cast<size_t>(wn + 8 * nt + 2 * t + (r & 1));
      cbits[nt][r] = (p.c && i < p.M && j < p.N) ? hd::f2u(p.c[i * p.N + j]) : 0u;
      acc[nt][r] = hd::u2f(cbits[nt][r]);
      nan[nt][r] = is_nan_bits(cbits[nt][r]);
    }

  for (size_t k0 = 0; k0 < p.K; k0 += kSlab) {
    __syncthreads();  // the previous slab is consumed
    {  // 64 rows x 64 bytes of q per operand: one 16-byte load per thread each; zeros past M / N
      const int row = tid >> 2, col = (tid & 3) * 16;
      const size_t ia = m0 + static_cast<size_t>(row), jb = n0 + static_cast<size_t>(row);
      uint4 va{0, 0, 0, 0}, vb{0, 0, 0, 0};
      if (ia < p.M) va = *reinterpret_cast<const uint4*>(p.qa + ia * p.K + k0 + static_cast<size_t>(col));
      if (jb < p.N) vb = *reinterpret_cast<const uint4*>(p.qb + jb * p.K + k0 + static_cast<size_t>(col));
      *reinterpret_cast<uint4*>(qa + row * kQStride + col) = va;
      *reinterpret_cast<uint4*>(qb + row * kQStride + col) = vb;
      if ((tid & 3) < spi) {
        const size_t s = k0 / static_cast<size_t>(p.block) + static_cast<size_t>(tid & 3);
        wsa[row][tid & 3] = ia < p.M ? p.sa[ia * nblk + s] : 0u;
        wsb[row][tid & 3] = jb < p.N ? p.sb[jb * nblk + s] : 0u;
      }
    }
    __syncthreads();
    // Group sums: s[q][nt][r], q = the 16-element chunk of the slab.
    int32_t s[4][4][4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const uint32_t a0 = *reinterpret_cast<const uint32_t*>(qa + (wm + g) * kQStride + 16 * q + 4 * t);
      const uint32_t a1 = *reinterpret_cast<const uint32_t*>(qa + (wm + g + 8) * kQStride + 16 * q + 4 * t);
#pragma unroll
      for (int nt = 0; nt < 4; ++nt) {
        const uint32_t b0 = *reinterpret_cast<const uint32_t*>(qb + (wn + 8 * nt + g) * kQStride + 16 * q + 4 * t);
        mma_s8_16816(s[q][nt], a0, a1, b0);
      }
    }
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int ri = wm + g + 8 * (r >> 1), cj = wn + 8 * nt + 2 * t + (r & 1);
        if constexpr (Hif4) {  // one group of 64 per slab
          const uint32_t wa = wsa[ri][0], wb = wsb[cj][0];
          nan[nt][r] = nan[nt][r] || hd::hif4_word_nan(wa) || hd::hif4_word_nan(wb);
          const int32_t sum = s[0][nt][r] + s[1][nt][r] + s[2][nt][r] + s[3][nt][r];  // exact (|sum| < 2^16)
          acc[nt][r] = hd::ascend_group_add(p, acc[nt][r], sum, wa, wb);
        } else {  // one Blackwell instruction (k = 64) per slab: 4 groups of 16
          hd::Dy da[spi], db[spi];
#pragma unroll
          for (int si = 0; si < spi; ++si) {
            da[si] = hd::decode_dy(p.sc, wsa[ri][si] & 0xFFu);
            db[si] = hd::decode_dy(p.sc, wsb[cj][si] & 0xFFu);
          }
          const int32_t s4[4] = {s[0][nt][r], s[1][nt][r], s[2][nt][r], s[3][nt][r]};
          cbits[nt][r] = bw_grouped_step(GroupedKind<Block>{p.frac_bits, p.mb_s}, s4, da, db, cbits[nt][r]);
        }
      }
  }
#pragma unroll
  for (int nt = 0; nt < 4; ++nt)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const size_t i = m0 + static_cast<size_t>(wm + g + 8 * (r >> 1));
      const size_t j = n0 + static_cast<size_t>(wn + 8 * nt + 2 * t + (r & 1));
      if (i >= p.M || j >= p.N) continue;
      const uint32_t res = Hif4 ? (nan[nt][r] ? kNaNBits : hd::f2u(acc[nt][r])) : cbits[nt][r];
      d[i * p.N + j] = hd::gemm_epilogue(p, res);
    }
}

// Fused Blackwell, fp32-seq and exact: 16 x 16 outputs, one per thread; each slab's elements are
// decoded (Dy) or dequantized (fp32-seq) once into shared memory.
constexpr int kSlabTile = 16;

template <int Model>
struct SlabSmem {  // Blackwell fused, exact: decoded elements and scales
  hd::Dy ea[kSlabTile][kSlab], eb[kSlabTile][kSlab];
  hd::Dy sa[kSlabTile][4], sb[kSlabTile][4];
};
template <>
struct SlabSmem<hd::kModelFp32Seq> {  // fp32-seq: dequantized elements (element x scale, FP32 RN)
  float fa[kSlabTile][kSlab], fb[kSlabTile][kSlab];
};

template <int Model>
__global__ void __launch_bounds__(kSlabTile * kSlabTile) kt_gemm_slab(hd::GemmParams p, uint32_t* d) {
  __shared__ SlabSmem<Model> sm;
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int tid = ty * kSlabTile + tx;
  const size_t m0 = static_cast<size_t>(blockIdx.y) * kSlabTile, n0 = static_cast<size_t>(blockIdx.x) * kSlabTile;
  const size_t i = m0 + static_cast<size_t>(ty), j = n0 + static_cast<size_t>(tx);
  const size_t nblk = p.K / static_cast<size_t>(p.block);
  const uint32_t c0 = (p.c && i < p.M && j < p.N) ? hd::f2u(p.c[i * p.N + j]) : 0u;
  uint32_t cbits = c0;                     // Blackwell: the running C; fp32-seq: the FMA chain
  ExactDot<ExactDotSum> dot;               // exact
  const bool c_nan = is_nan_bits(c0);
  if constexpr (Model == hd::kModelExact) dot.start(c0);
  const int off = p.ea.mbits + p.eb.mbits + 2 * p.sc.mbits;

  for (size_t k0 = 0; k0 < p.K; k0 += kSlab) {
    const int ks = static_cast<int>(std::min<size_t>(kSlab, p.K - k0));  // a multiple of k / block
    __syncthreads();
    // stage: 16 rows x ks elements per operand, 4 per thread
    for (int idx = tid; idx < kSlabTile * ks; idx += kSlabTile * kSlabTile) {
      const int row = idx / ks, kk = idx % ks;
      const size_t ia = m0 + static_cast<size_t>(row), jb = n0 + static_cast<size_t>(row);
      const size_t k = k0 + static_cast<size_t>(kk);
      if constexpr (Model == hd::kModelFp32Seq) {
        sm.fa[row][kk] = ia < p.M ? hd::deq_elem(p, true, ia, k) : 0.0f;
        sm.fb[row][kk] = jb < p.N ? hd::deq_elem(p, false, jb, k) : 0.0f;
      } else {
        const size_t bi = k / static_cast<size_t>(p.block);
        sm.ea[row][kk] = ia < p.M ? hd::exact_elem(p, true, ia, k, p.sa[ia * nblk + bi]) : hd::Dy{0, -126, hd::kFinite, 0};
        sm.eb[row][kk] = jb < p.N ? hd::exact_elem(p, false, jb, k, p.sb[jb * nblk + bi]) : hd::Dy{0, -126, hd::kFinite, 0};
        if (kk % p.block == 0) {
          const int s = kk / p.block;
          sm.sa[row][s] = hd::decode_dy(p.sc, ia < p.M ? p.sa[ia * nblk + bi] & 0xFFu : 0u);
          sm.sb[row][s] = hd::decode_dy(p.sc, jb < p.N ? p.sb[jb * nblk + bi] & 0xFFu : 0u);
        }
      }
    }
    __syncthreads();
    if constexpr (Model == hd::kModelFp32Seq) {
      float a = hd::u2f(cbits);
      for (int kk = 0; kk < ks; ++kk) a = fmaf(sm.fa[ty][kk], sm.fb[tx][kk], a);
      cbits = hd::f2u(a);
    } else if constexpr (Model == hd::kModelBlackwell) {  // fused kinds: one scale per instruction
      for (int t0 = 0; t0 < ks; t0 += p.k)
        cbits = bw_fused_step(p, &sm.ea[ty][t0], &sm.eb[tx][t0], sm.sa[ty][t0 / p.block], sm.sb[tx][t0 / p.block], cbits);
    } else {  // exact
      if (!c_nan)
        for (int kk = 0; kk < ks && !dot.nan; ++kk)
          dot.term(sm.ea[ty][kk], sm.eb[tx][kk], sm.sa[ty][kk / p.block], sm.sb[tx][kk / p.block], off);
    }
  }
  if (i >= p.M || j >= p.N) return;
  uint32_t r = cbits;
  if constexpr (Model == hd::kModelExact) r = c_nan ? kNaNBits : dot.finish(c0);
  d[i * p.N + j] = hd::gemm_epilogue(p, r);
}

}  // namespace

void launch_quantize_tuned(const QuantJob& j, const float* dx, unsigned* damax, uint8_t* dcodes, uint8_t* dscales,
                           uint32_t* dwords) {
  QArgs a{dx, j.rows * j.cols, j.rnd, j.rule, j.seed, j.stream, j.rht_mask, j.rht_bf16, j.pts, j.elem};
  const bool sr = j.rnd == hd::kSr;
  if (j.rht) {
    if (sr) run_quant<true, true>(j, a, damax, dcodes, dscales, dwords);
    else run_quant<true, false>(j, a, damax, dcodes, dscales, dwords);
  } else {
    if (sr) run_quant<false, true>(j, a, damax, dcodes, dscales, dwords);
    else run_quant<false, false>(j, a, damax, dcodes, dscales, dwords);
  }
  check(cudaGetLastError(), "tuned quantize kernel launch");
}

bool launch_gemm_tuned(const hd::GemmParams& p, uint32_t* dd) {
  const dim3 mma_grid(static_cast<unsigned>((p.N + kMmaTile - 1) / kMmaTile),
                      static_cast<unsigned>((p.M + kMmaTile - 1) / kMmaTile));
  const dim3 slab_grid(static_cast<unsigned>((p.N + kSlabTile - 1) / kSlabTile),
                       static_cast<unsigned>((p.M + kSlabTile - 1) / kSlabTile));
  const dim3 slab_block(kSlabTile, kSlabTile);
  // the kernels' compile-time shapes; anything else (a kind table change) takes the slab kernel
  const bool grouped = p.model == hd::kModelBlackwell && p.group == 16 && p.k == 64 && (p.block == 16 || p.block == 32);
  if (p.model == hd::kModelAscendHif4 && p.group == 64 && p.block == 64 && p.k == 64) {
    kt_gemm_mma<true, 64><<<mma_grid, 256>>>(p, dd);
  } else if (grouped && p.block == 16) {
    kt_gemm_mma<false, 16><<<mma_grid, 256>>>(p, dd);
  } else if (grouped) {
    kt_gemm_mma<false, 32><<<mma_grid, 256>>>(p, dd);
  } else if (p.model == hd::kModelFp32Seq) {
    kt_gemm_slab<hd::kModelFp32Seq><<<slab_grid, slab_block>>>(p, dd);
  } else if (p.model == hd::kModelBlackwell && p.group >= p.k) {
    kt_gemm_slab<hd::kModelBlackwell><<<slab_grid, slab_block>>>(p, dd);
  } else if (p.model == hd::kModelExact) {
    kt_gemm_slab<hd::kModelExact><<<slab_grid, slab_block>>>(p, dd);
  } else {
    return false;  // no tuned kernel for this shape: the caller runs the simple one
  }
  check(cudaGetLastError(), "tuned gemm kernel launch");
  return true;
}

}  // namespace fp4sim::gpu::detail
