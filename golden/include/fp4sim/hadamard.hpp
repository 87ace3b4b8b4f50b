// Random Hadamard transform (RHT), SPEC §2.4.
//
// Along the last axis, in consecutive tiles of N values (N a power of two >= 2):
//   forward  x'[j] = sum_i x[i] * d[i] * H[i][j] / sqrt(N)      (x' = x_tile · (D · H_N / sqrt(N)))
//   inverse  x[i]  = d[i] * sum_j H[i][j] * x'[j] / sqrt(N)     (the transpose; D·H/sqrt(N) is orthogonal)
// H_N in Sylvester order, H[i][j] = (-1)^popcount(i & j); D = diag(signs), signs[i] = +-1.
// This is TransformerEngine's `x @ (diag(signs) @ H16 / 4)` (nvfp4_tensor.py get_rht_matrix).
//
// Numerics (fp4sim choice): every output is the exact value of the sum divided by sqrt(N), rounded
// ONCE to FP32 with round-to-nearest-even (subnormals kept, overflow -> +-Inf), independent of
// summation order; optionally then rounded (RNE) to BF16 and returned as float, as TE does.
// For N = 4^k, 1/sqrt(N) = 2^-k is exact. For N = 2*4^k the result S/(2^k*sqrt(2)) is irrational
// (S != 0), so it is never a rounding tie; the float is chosen by exact integer comparisons
// (S^2 against 2*midpoint^2*4^k). An exact-zero sum gives +0.0. A tile holding Inf/NaN follows
// IEEE: NaN if it holds a NaN or if an output sums +Inf and -Inf, else +-Inf.
// Paths (same bits; docs/rng_and_transforms.md has the exactness arguments):
//  - vector (rht_apply*, RhtPath::Auto): AVX-512 for N >= 16, else AVX2 (with FMA) for N >= 4.
//    Tiles whose exponent spread certifies an exact double sum (largest - smallest nonzero
//    exponent <= 29 - log2 N, no Inf/NaN) run a vector double FWHT and one cvtpd2ps; other tiles,
//    N = 2, and machines without AVX2 take the reference path.
//  - reference: scalar; a double FWHT when the tile's exact bit spread allows it, else a
//    multi-word integer FWHT (the implementation before the vector path).
//  - exact: the multi-word integer FWHT only.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace fp4sim {

// TE's fixed 16-entry sign vector [1,1,1,-1,1,-1,-1,-1,-1,-1,-1,1,-1,1,-1,-1] as a mask: bit i set
// <=> signs[i] = -1 (TE get_sign_from_vector / get_wgrad_sign_vector).
inline constexpr uint16_t kTeRhtSignMask = 0xD7E8;

// Philox stream of the seeded signs: sign i = -1 iff bit 0 of sr_byte(seed, kRhtSignStream, i) is 1.
// ("RHT1"; distinct from the SR streams callers use, which start at 0.)
inline constexpr uint32_t kRhtSignStream = 0x52485431u;

// True for powers of two >= 2 (the supported RHT sizes).
bool is_rht_size(long long n);

// H_N[i][j] in Sylvester order.
inline int hadamard_entry(uint32_t i, uint32_t j) { return (std::popcount(i & j) & 1) ? -1 : 1; }

// Signs for an N-point RHT: TE's mask when n == 16 and !seeded, otherwise derived from `seed`
// (sign i from byte i of Philox stream kRhtSignStream, so the first n signs do not depend on n).
// Throws std::invalid_argument if n is not a power of two >= 2.
void rht_signs(int n, bool seeded, uint64_t seed, std::vector<int8_t>& out);
std::vector<int8_t> rht_signs(int n, bool seeded = false, uint64_t seed = 0);

// In-place forward / inverse RHT of a row-major [x.size()/cols, cols] tensor, tiles along the rows.
// Throws std::invalid_argument unless n is a power of two >= 2, cols % n == 0, x.size() % cols == 0
// (cols > 0 when x is non-empty) and signs holds n entries each +1 or -1.
void rht_apply(std::span<float> x, size_t cols, int n, std::span<const int8_t> signs, bool to_bf16 = false);
void rht_apply_inverse(std::span<float> x, size_t cols, int n, std::span<const int8_t> signs,
                       bool to_bf16 = false);

// Out of place (in == out allowed, partial overlap rejected): out = RHT(in), the same bits as
// rht_apply / rht_apply_inverse on a copy. Saves the caller a copy pass.
void rht_apply_to(std::span<const float> in, std::span<float> out, size_t cols, int n, std::span<const int8_t> signs,
                  bool to_bf16 = false, bool inverse = false);

// Every path by name, for tests and cross-checks. Auto is what rht_apply uses; Avx512 / Avx2 force
// that kernel (Avx512 uses AVX2 for N = 4, 8; both use the reference path for N = 2 and for the
// tiles they cannot certify). Returns false, writing nothing, when this CPU lacks the requested
// instructions. Throws like rht_apply_to on bad arguments.
enum class RhtPath { Auto, Avx512, Avx2, Reference, Exact };
bool rht_apply_path(std::span<const float> in, std::span<float> out, size_t cols, int n, std::span<const int8_t> signs,
                    bool to_bf16, bool inverse, RhtPath path);

// Same results through the scalar reference path (the pre-vector implementation): for the tests
// and for cross-checks.
void rht_apply_reference(std::span<float> x, size_t cols, int n, std::span<const int8_t> signs, bool to_bf16,
                         bool inverse);

// Same results through the exact multi-word path only (no double fast path): for the tests and
// for anyone who wants to cross-check the fast path.
void rht_apply_exact(std::span<float> x, size_t cols, int n, std::span<const int8_t> signs, bool to_bf16,
                     bool inverse);

}  // namespace fp4sim
