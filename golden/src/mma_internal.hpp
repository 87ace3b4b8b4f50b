// Private to golden/src: what the generic MMA models (mma.cpp) and the vectorized GEMM paths
// (mma_fast.cpp) share — the decoded-code struct, the per-configuration context and the generic
// single-output dot product the fast paths fall back to for rare special cases.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "fp4sim/mma.hpp"

namespace fp4sim::mma_detail {

// Value = m * 2^(e - mbits(format)). e is the exponent MMA-Sim's extract_significand_exponent gives:
// unbiased, the format's minimum for subnormals, and -126 for a zero (SPEC §4 "details").
struct Dy {
  int32_t m = 0;  // signed integer significand (hidden bit included)
  int16_t e = -126;
  uint8_t cls = kClassFinite;
  uint8_t neg = 0;  // sign, also for zeros and infinities
};

// The 256-entry decode table of one format of the kinds table (built once).
const std::array<Dy, 256>& dy_table(const ElemFormat& f);

// Everything a model needs about one kind configuration, resolved once.
struct Ctx {
  const MmaKind* kind;
  Model model;
  int block;
  int k;      // instruction K
  int group;  // Blackwell group / HiF4 group
  int frac_bits;
  int mb_a, mb_b, mb_s;    // mantissa bits of the element and scale formats
  uint8_t mask_a, mask_b;  // code bits of the element formats (higher bits are ignored)
  bool hif4;
  int hif4_round_groups;
  Numerics numerics;  // Model::Custom
  const std::array<Dy, 256>* dy_a;
  const std::array<Dy, 256>* dy_b;
  const std::array<Dy, 256>* dy_s;
  const DecodeTable* f_a;  // float decode tables (Fp32Seq, Blackwell grouped kinds)
  const DecodeTable* f_b;
  const DecodeTable* f_s;
};

Ctx make_ctx(const MmaConfig& cfg, Model model);

// Throws std::invalid_argument unless n is a valid parameter set for scale blocks of `block`.
void validate_numerics(const Numerics& n, int block);

// Model::Custom (mma_numerics.cpp) on one output: decoded elements and scales of both rows (da / db:
// the FP32-dequantized elements, read only with dequant = fp32), K products, C bits.
uint32_t dot_custom(const Ctx& c, const Dy* ea, const Dy* eb, const float* da, const float* db, const Dy* sa,
                    const Dy* sb, size_t K, uint32_t cbits);

// The generic model on one output: rows a (K codes, K / block scales) and b, C bits; the result
// before the alpha epilogue (NaN canonical). The fast paths call it for outputs they do not take.
uint32_t generic_dot(const Ctx& c, const uint8_t* a, const uint32_t* sa, const uint8_t* b,
                     const uint32_t* sb, size_t K, uint32_t cbits);

// The vectorized GEMM (mma_fast.cpp): fills d[M*N] and returns true, or returns false where it
// has no fast path (no AVX2 + FMA on this CPU, AscendHif4 with hif4_round_groups != 1). Inputs
// are already validated; c may be null (all +0).
bool gemm_fast(const Ctx& c, size_t M, size_t N, size_t K, const uint8_t* a, const uint32_t* sa,
               const uint8_t* b, const uint32_t* sb, const float* cm, float alpha, unsigned threads,
               float* d);

// Rows [0, M) spread over `threads` std::threads (0 = hardware concurrency), fn(r0, r1).
template <class F>
void for_rows(size_t M, unsigned threads, F&& fn);

}  // namespace fp4sim::mma_detail

#include <algorithm>
#include <thread>
#include <vector>

namespace fp4sim::mma_detail {

template <class F>
void for_rows(size_t M, unsigned threads, F&& fn) {
  size_t nt = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  nt = std::min(nt, std::max<size_t>(M, 1));
  if (nt <= 1) {
    fn(size_t{0}, M);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(nt);
  for (size_t t = 0; t < nt; ++t) pool.emplace_back([&fn, M, t, nt] { fn(M * t / nt, M * (t + 1) / nt); });
  for (auto& th : pool) th.join();
}

}  // namespace fp4sim::mma_detail
