// Pieces of the block quantizers shared by quant.cpp (portable and AVX2 kernels) and
// quant_avx512.cpp (AVX-512 kernels): bit-level helpers, the NVFP4 scale chain, the MX shared
// exponent and the HiF4 per-code tables. Internal to the golden library.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "fp4sim/quant.hpp"

namespace fp4sim::quant_detail {

#define FP4SIM_INLINE [[gnu::always_inline]] inline

inline constexpr uint8_t kUE8M0Bias = 127;
inline constexpr uint8_t kScaleNaN = 0xFF;
inline constexpr uint32_t kExpMask = 0x7F800000u;

inline uint32_t f2u(float f) { return std::bit_cast<uint32_t>(f); }
inline float u2f(uint32_t u) { return std::bit_cast<float>(u); }

// Shared exponent of an MX block with finite amax > 0 under the chosen rule, clamped to UE8M0 range.
FP4SIM_INLINE int mx_shared_exp(const BlockFormatInfo& fi, float amax, ScaleRule rule) {
  const uint32_t u = f2u(amax);
  // floor(log2(amax)) from the bits (ilogb for FP32 subnormals): no log2() misrounding.
  int e = (u >= 0x00800000u ? static_cast<int>(u >> 23) - 127 : std::ilogb(amax)) - fi.emax_elem;
  if (rule == ScaleRule::Ceil) {
    // smallest e with max_elem * 2^e >= amax; max_elem < 2^(emax_elem+1), so it is e or e+1.
    const double max_elem = decode(*fi.elem, fi.elem->max_code());
    if (std::ldexp(max_elem, e) < static_cast<double>(amax)) ++e;
  }
  return std::clamp(e, -127, 127);
}

// 2^-e as a float for a UE8M0 exponent e in [-127, 127] (2^-127 is an FP32 subnormal).
FP4SIM_INLINE float pow2_neg(int e) {
  return e == 127 ? u2f(0x00400000u) : u2f(static_cast<uint32_t>(127 - e) << 23);
}

// Constants of one element format for the vector encoders (small_codes_8 / small_codes_16).
struct SmallFmtConst {
  uint32_t min_normal;  // FP32 bits of 2^emin: below it the format's grid is uniform (subnormals)
  float sub_scale;      // 2^(mbits - emin) (RNE) or 2^(mbits - emin + 8) (SR): |v| in grid steps
  int shift;            // 23 - mbits: FP32 mantissa bits dropped
  uint32_t exp_adj;     // (127 - bias) << mbits: (FP32 exponent, mantissa) -> the format's fields
  uint32_t max_code, sign_bit;
};

inline SmallFmtConst small_fmt_const(const ElemFormat& f, bool sr) {
  const int emin = f.emin();
  return {static_cast<uint32_t>(127 + emin) << 23, std::ldexp(1.0f, f.mbits - emin + (sr ? 8 : 0)), 23 - f.mbits,
          static_cast<uint32_t>(127 - f.bias) << f.mbits, f.max_code(), f.sign_bit()};
}

// Value of a UE4M3 code produced by the NVFP4 scale chain (0x00..0x7E), from its fields.
FP4SIM_INLINE float ue4m3_value(uint32_t c) {
  const uint32_t e = c >> 3, m = c & 7u;
  const float sub = static_cast<float>(m) * 0x1p-9f;
  const float norm = u2f(((e + 120u) << 23) | (m << 20));
  return e == 0 ? sub : norm;
}

// 1 / (scale * S_dec) in FP32 as TE computes it; 1/0 = +Inf becomes FLT_MAX.
FP4SIM_INLINE float nvfp4_inverse(uint32_t scale_code, const Nvfp4TensorScale& ts) {
  const float s = ue4m3_value(scale_code) * ts.s_dec;
  return std::min(1.0f / s, FLT_MAX);
}

// ---------------------------------------------------------------------------------------------
// HiF4 (SPEC §2.3)

inline constexpr double kBf16OneSeventh = 0.142578125;  // BF16(1/7) = 73/512

// RNE of a positive normal double to `bits` significant bits, on the bit pattern.
FP4SIM_INLINE double round_sig_bits(double v, int bits) {
  const int drop = 52 - (bits - 1);
  uint64_t u = std::bit_cast<uint64_t>(v);
  u += ((uint64_t{1} << (drop - 1)) - 1) + ((u >> drop) & 1u);
  return std::bit_cast<double>(u & ~((uint64_t{1} << drop) - 1));
}

// E6M2 code of Vmax (finite, > 0): SF = BF16(Vmax * 73/512) — the product is exact in double —
// clamped to [2^-48, 49152] and rounded to 3 significant bits, ties to even.
FP4SIM_INLINE uint8_t hif4_e6m2_code(float vmax) {
  double sf = round_sig_bits(static_cast<double>(vmax) * kBf16OneSeventh, 8);
  sf = std::clamp(sf, 0x1p-48, 49152.0);
  const uint64_t u = std::bit_cast<uint64_t>(round_sig_bits(sf, 3));
  const int e = static_cast<int>(u >> 52) - 1023;  // rounding may carry into the next binade
  return static_cast<uint8_t>(((e + 48) << 2) | static_cast<int>((u >> 50) & 3u));
}

// Per E6M2 code: REC = BF16(1 / E6M2), the level thresholds and REC's integer form.
// t2 (t4) = the smallest float f with f * REC >= 2 (>= 4), so that a group max v (an FP32 value)
// passes "v * REC >= 2" iff bits(v) >= t2 (finite non-negative floats order like their bit
// patterns); f * REC is exact in double. REC = mr * 2^(er - 7) with mr its 8 significant bits;
// base = 147 - er is the shift base of the integer element encoders (hif4_codes_8 / _16).
struct Hif4RecTable {
  std::array<double, 256> rec{};
  std::array<uint32_t, 256> t2{}, t4{}, mr{};
  std::array<int32_t, 256> base{};
  static uint32_t smallest_reaching(double rec, double target) {
    float f = static_cast<float>(target / rec);
    while (static_cast<double>(f) * rec < target) f = std::nextafter(f, INFINITY);
    while (f > 0.0f && static_cast<double>(std::nextafter(f, 0.0f)) * rec >= target) f = std::nextafter(f, 0.0f);
    return f2u(f);
  }
  Hif4RecTable() {
    for (uint32_t c = 0; c < 255; ++c) {
      // 1/(1 + m/4) is a repeating binary fraction for m != 0, so rounding its double to 8 bits
      // is a single rounding of the exact quotient.
      rec[c] = round_sig_bits(1.0 / decode(kE6M2, c), 8);
      t2[c] = smallest_reaching(rec[c], 2.0);
      t4[c] = smallest_reaching(rec[c], 4.0);
      const auto ru = std::bit_cast<uint64_t>(rec[c]);
      mr[c] = 0x80u | static_cast<uint32_t>((ru >> 45) & 0x7Fu);
      base[c] = 147 - (static_cast<int32_t>((ru >> 52) & 0x7FF) - 1023);
    }
  }
};
const Hif4RecTable& hif4_recs();

// E2M1 RNE codes by table lookup (AVX-512 store_e2m1_64, AVX2 e2m1_rne_32_avx2). The code is
// the count of the seven thresholds e2m1_rne_mag (quant.cpp) compares |v|'s FP32 pattern with,
// and every threshold has at most two mantissa bits, i.e. is a multiple of 2^21: "pattern >= t"
// is constant on each cell of 2^21 patterns. Cell c = (pattern >> 21) - 496 (cell 4 starts at
// 0.25, cell 24 at 8), 0 below, 63 above (Inf, NaN and large values: 7). count[c] = thresholds
// starting at or below cell c; a pattern exactly on a ">" threshold (0.25, 1.25, 2.5, 5: the tie
// goes to the lower, even code) gives one back: tie[c] where the cell starts with one and the
// pattern's low 21 bits are zero.
struct E2m1Cells {
  alignas(64) uint8_t count[64]{}, tie[64]{};
  constexpr E2m1Cells() {
    struct Threshold {
      float t;
      bool strict;  // ">": a tie rounds down to the even code
    };
    constexpr Threshold kThresholds[] = {{0.25f, true}, {0.75f, false}, {1.25f, true}, {1.75f, false},
                                         {2.5f, true},  {3.5f, false},  {5.0f, true}};
    for (const Threshold& th : kThresholds) {
      const uint32_t c = (std::bit_cast<uint32_t>(th.t) >> 21) - 496;
      for (uint32_t k = c; k < 64; ++k) ++count[k];
      if (th.strict) tie[c] = 1;
    }
  }
};
inline constexpr E2m1Cells kE2m1Cells;

// Every vector quantizer loop asks for its input kPrefetchAhead floats (4 KiB) ahead of p, `bytes`
// of it per step (what one step consumes), while that stays within the n_left floats the kernel
// was given. The hardware prefetchers alone ran too little ahead: with the prefetch, NVFP4's
// second pass beyond the caches comes close to its memory bound, and MXFP4 (AVX-512, one core)
// goes from 56 % to 95 % of memcpy (docs/performance.md, "How the quantizers reach memory speed").
// No output bit changes.
inline constexpr size_t kPrefetchAhead = 1024;
FP4SIM_INLINE void prefetch_ahead(const float* p, size_t n_left, size_t bytes) {
  if (n_left < kPrefetchAhead + bytes / sizeof(float)) return;
  const char* q = reinterpret_cast<const char*>(p + kPrefetchAhead);
  for (size_t l = 0; l < bytes; l += 64) __builtin_prefetch(q + l, 0, 3);
}

// Conventions other than TE (quant_convention.cpp), portable scalar code: NVFP4 or MX over the
// whole [rows, cols] tensor x into q (sized by the caller); opt.convention != Te, checked.
void quantize_convention(BlockFormat f, const float* x, size_t rows, size_t cols, const QuantOptions& opt,
                         Quantized& q);

// ---------------------------------------------------------------------------------------------
// AVX-512 kernels (quant_avx512.cpp), called only where cpu_has_avx512() holds. Same arguments
// and the same bits as the AVX2 kernels of quant.cpp.

bool cpu_has_avx512();
void mx_blocks_avx512(const BlockFormatInfo& fi, const float* x, size_t n_blocks, const QuantOptions& opt,
                      uint8_t* codes, uint8_t* scales, uint64_t first_index);
// NVFP4 1x16, RNE or SR: bmax = the blocks' maxima from nvfp4_block_maxima_avx512 (or null);
// stream: write codes and scales with non-temporal stores (outputs larger than the caches).
void nvfp4_1x16_avx512(const float* x, size_t n_blocks, Nvfp4TensorScale ts, const QuantOptions& opt,
                       uint64_t first_index, const uint32_t* bmax, uint8_t* codes, uint8_t* scales, bool stream);
// The NaN-ignoring (Inf-keeping) max |x| of n values: NVFP4's tensor amax.
float tensor_amax_avx512(const float* x, size_t n);
// The NaN-ignoring amax pattern of each 16-value block into out; returns their max.
float nvfp4_block_maxima_avx512(const float* x, size_t n_blocks, uint32_t* out);
// fake_quantize's dequantization (quant_fake.cpp's dequant_blocks on sixteen lanes); stream:
// streaming stores where out is 16-byte aligned (the caller fences).
void dequant_blocks_avx512(const BlockFormatInfo& fi, const uint8_t* codes, const uint8_t* scales,
                           const uint32_t* words, size_t nb, float gs, float* out, bool stream);
// dst[j * ds + i] = src[i * ss + j], i, j < 16.
void transpose16_avx512(const float* src, size_t ss, float* dst, size_t ds);
void quantize_hif4_avx512(const float* x, size_t n_blocks, const QuantOptions& opt, uint8_t* codes, uint32_t* words,
                          uint64_t first_index);

// ---------------------------------------------------------------------------------------------
// Shared by quantize() and fake_quantize() (quant_fake.cpp).

// body(c, scratch) for c < n_chunks on up to `threads` threads (the caller's included), chunks
// handed out in order from a shared counter; scratch is the worker's own buffer (the RHT output of
// a chunk). Which thread runs a chunk never changes what it computes.
template <typename F>
void parallel_chunks(size_t n_chunks, unsigned threads, F&& body) {
  const size_t nt = std::min<size_t>(threads, n_chunks);
  if (nt <= 1) {
    std::vector<float> scratch;
    for (size_t c = 0; c < n_chunks; ++c) body(c, scratch);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr err;
  std::mutex mu;
  auto worker = [&] {
    try {
      std::vector<float> scratch;
      for (size_t c; (c = next.fetch_add(1)) < n_chunks;) body(c, scratch);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mu);
      if (!err) err = std::current_exception();
      next = n_chunks;
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(nt - 1);
  for (size_t t = 1; t < nt; ++t) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {  // no more threads to be had: the started ones finish the work
      break;
    }
  }
  worker();
  for (auto& t : pool) t.join();
  if (err) std::rethrow_exception(err);
}

// Tensor amax (NaN ignored, Inf kept) of n values, on the best kernel the CPU has.
float tensor_amax(const float* x, size_t n);
// NVFP4 rows [0, rows) of a chunk whose first element has flat index first_index (quant.cpp).
void quantize_nvfp4_rows(const float* x, size_t rows, size_t cols, const QuantOptions& opt, Nvfp4TensorScale ts,
                         uint64_t first_index, const uint32_t* bmax, uint8_t* codes, uint8_t* scales, bool stream);
// The argument checks of quantize() (one-line std::invalid_argument).
void check_shape(const BlockFormatInfo& fi, size_t xsize, size_t rows, size_t cols, const QuantOptions& opt);

}  // namespace fp4sim::quant_detail
