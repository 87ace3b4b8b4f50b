// Deterministic "LLM-like" test tensors from a seed, the same bits on every machine and for any
// thread count: every element is a pure function of (seed, element index) through Philox4x32-10
// (philox.hpp), evaluated in double with fp4sim's own log / sin / cos (below; no libm, whose last
// bits vary between implementations), then rounded once to float.
//
// Building blocks (k = element index r * cols + c, block = philox_block(seed, stream, .)):
//   U(hi, lo)            = uniform_open01: ((64-bit hi:lo >> 12) + 1/2) * 2^-52, in (0, 1)
//   standard_normal(k)   Box-Muller on block k/2 = (w0, w1, w2, w3): u1 = U(w0, w1), u2 = U(w2, w3),
//                        rad = sqrt(-2 ln u1); k even -> rad cos(2 pi u2), k odd -> rad sin(2 pi u2)
// Tensors (row-major [rows, cols]):
//   llm_activations: x = float(z_k * (c is an outlier channel ? outlier_scale : 1)), z on stream
//       kActStream. Outlier channels: the round(cols * fraction) columns (at least 1 when
//       fraction > 0) with the smallest 64-bit key (w0:w1 of philox_block(seed, kOutlierStream, c)),
//       ties broken by the lower column.
//   llm_weights:     x = float(stddev * z_k), z on stream kWeightStream.
//   llm_gradients:   x = float(scale * t_k), t_k a Student-t with 4 degrees of freedom:
//       t = z_k / sqrt(chi2 / 4), z on kGradStream, chi2 = -2 (ln U(w0, w1) + ln U(w2, w3)) from
//       philox_block(seed, kGradChiStream, k) (a chi-square with 4 dof is a sum of two exponentials
//       of mean 2). Var(t) = 2, kurtosis infinite: a heavy tail on a Gaussian core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fp4sim {

// Philox counter word 2 of each generator (ASCII tags).
inline constexpr uint32_t kActStream = 0x41435431u;      // "ACT1"
inline constexpr uint32_t kOutlierStream = 0x4F55544Cu;  // "OUTL"
inline constexpr uint32_t kWeightStream = 0x57474854u;   // "WGHT"
inline constexpr uint32_t kGradStream = 0x47524144u;     // "GRAD"
inline constexpr uint32_t kGradChiStream = 0x47434849u;  // "GCHI"

// Natural log of a positive finite normal double: x = m 2^e with m in [sqrt(1/2), sqrt(2)),
// ln m = 2 atanh(s), s = (m - 1)/(m + 1), by its series through s^23 (|s| <= 0.1716), plus
// e ln 2 with ln 2 split in two (fdlibm's ln2_hi / ln2_lo). Accurate to a few ulps; bit-identical
// on every IEEE-754 machine that does not contract FP operations.
double synth_log(double x);

// sin and cos of 2 pi u for u in [0, 1) with at most 53 significant bits: 4u is split exactly into
// a quadrant and a fraction f in [0, 1); f > 1/2 is reflected to 1 - f (exact) so the polynomial
// argument is theta = g * RN(pi/2) with g in [0, 1/2]; Taylor series through theta^19 (sin) and
// theta^20 (cos). Accurate to a few ulps, deterministic like synth_log.
void synth_sincos_2pi(double u, double& s, double& c);

// The k-th standard normal of a stream (Box-Muller, above).
double standard_normal(uint64_t seed, uint32_t stream, uint64_t k);

// Outlier channel indices, ascending. Throws std::invalid_argument unless 0 <= fraction <= 1.
std::vector<size_t> outlier_channels(size_t cols, uint64_t seed, double fraction);

// Throw std::invalid_argument on a fraction outside [0, 1], a negative stddev / scale, or any
// |scale| above 1e20 (so that no value can overflow float).
std::vector<float> llm_activations(size_t rows, size_t cols, uint64_t seed,
                                   double outlier_channel_fraction = 1.0 / 128.0, double outlier_scale = 50.0);
std::vector<float> llm_weights(size_t rows, size_t cols, uint64_t seed, double stddev = 0.02);
std::vector<float> llm_gradients(size_t rows, size_t cols, uint64_t seed, double scale = 1e-4);

}  // namespace fp4sim
