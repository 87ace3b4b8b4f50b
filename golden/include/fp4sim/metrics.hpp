// Quantization quality metrics, computed in double (compensated sums, so the result does not
// depend on how long the tensor is in any visible way).
//
// Over the n elements with finite x and finite dq (e = dq - x):
//   mse            = sum e^2 / n
//   qsnr_db        = 10 log10(sum x^2 / sum e^2)   (+inf when sum e^2 == 0)
//   bias           = sum e / n                      (mean of dq - x)
//   frac_zero      = #{x != 0 and dq == 0} / #{x != 0}             (0 when no x != 0)
//   frac_saturated = #{|code| == elem.max_code() and |x| > |dq|} / n   (clipped at the top code)
// Elements with non-finite x are skipped and counted in n_nonfinite_x; elements with finite x but
// non-finite dq (a NaN block scale) are skipped and counted in n_nonfinite_dq. With no usable
// element, mse, bias and qsnr_db are NaN and the fractions 0.
// x, dq and q must describe the same values in the same order (e.g. after an RHT, x is the
// rotated tensor). |code| is the code without its sign bit (elem.mag_mask()).
#pragma once

#include <cstddef>
#include <span>

#include "fp4sim/quant.hpp"

namespace fp4sim {

struct Quality {
  double mse = 0, qsnr_db = 0, bias = 0, frac_zero = 0, frac_saturated = 0;
  size_t n = 0;               // elements in the sums
  size_t n_nonfinite_x = 0;   // skipped: x is Inf or NaN
  size_t n_nonfinite_dq = 0;  // skipped: x finite, dq Inf or NaN
};

// Throws std::invalid_argument when the sizes of x, dq and q.codes differ.
Quality quality(std::span<const float> x, std::span<const float> dq, const Quantized& q);

// Without the codes: frac_saturated is NaN (unknown).
Quality quality(std::span<const float> x, std::span<const float> dq);

}  // namespace fp4sim
