// The steps of SPEC §2 for one element or one block scale, written out: what `fp4sim check` reports
// for a differing quantizer output, and what the `quant` vector suite uses to verify that its tie
// rows are ties. Computed from the spec's formulas (golden's public NVFP4 scale functions, decode /
// encode and the Philox bytes), independently of the block kernels of golden/src/quant.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fp4sim/io/manifest.hpp"
#include "fp4sim/quant.hpp"

namespace fp4sim::vectors {

// The values a block quantizer sees: x after the RHT when opt.rht > 0 (rounded to BF16 when
// opt.rht_bf16), x itself otherwise.
std::vector<float> quantizer_view(std::span<const float> x, size_t cols, const QuantOptions& opt);

struct ElementSteps {
  float input = 0.0f;       // the value the element quantizer sees (after the RHT, if any)
  double scaled = 0.0;      // value before rounding onto the element grid: NVFP4 RN(x * inv_b) (FP32),
                            // MX x / 2^e, HiF4 4|x| * REC * 2^-level (exact); NaN for non-finite input
  double lower = 0.0, upper = 0.0;  // neighbouring grid magnitudes around |scaled| (equal when on the grid
                                    // or saturating)
  uint32_t lower_code = 0, upper_code = 0;  // their magnitude codes
  bool tie = false;         // |scaled| is exactly the midpoint of lower and upper
  uint32_t code = 0;        // the element code the steps give (sign included)
  uint32_t scale = 0;       // the block's scale code (HiF4: the whole word)
  std::string rule;         // the rule that decides the code ("tie -> even", "saturate at +-6", ...)
  std::vector<std::pair<std::string, std::string>> fields;  // every intermediate, for reports
};

struct ScaleSteps {
  uint32_t code = 0;  // the scale code (HiF4: the whole word)
  std::vector<std::pair<std::string, std::string>> fields;
};

// Element (r, c) / block scale (r, j) of x [rows, cols] quantized to f with opt.
ElementSteps explain_element(BlockFormat f, const QuantOptions& opt, std::span<const float> x, size_t rows,
                             size_t cols, size_t r, size_t c);
ScaleSteps explain_scale(BlockFormat f, const QuantOptions& opt, std::span<const float> x, size_t rows,
                         size_t cols, size_t r, size_t j);

// The three other operation orders kernels write for the NVFP4 block scale code (SPEC §2.2 step 2 is
// TE's RN(amax * RN(S_enc * RN(1/6)))): RN(RN(amax / 6) * S_enc), torchao's RN(RN(amax / 6) / S_dec),
// and TE's order with S_dec = RN(amax_tensor / 2688) in place of 1 / S_enc (S_enc = RN(1 / S_dec)).
struct Nvfp4ScaleOrders {
  float sdec_te = 0.0f, sdec_div6_mul = 0.0f, sdec_div6_div = 0.0f, sdec_amax2688 = 0.0f;  // before UE4M3
  uint8_t te = 0, div6_mul = 0, div6_div = 0, amax2688 = 0;                                // UE4M3 codes
};
Nvfp4ScaleOrders nvfp4_scale_orders(float block_amax, float amax_tensor);

// UE4M3 code of a non-negative float, RN, saturating at 448 (NaN -> 0x7F): plain FP32 arithmetic.
uint8_t ue4m3_rn(float v);

// QuantOptions and format from a suite's `quant` object (quant_json); throws std::invalid_argument.
QuantOptions quant_options_from_json(const io::Json& q, BlockFormat& f);

// "0x3fc00000 (1.5)"
std::string float_hex(float v);

}  // namespace fp4sim::vectors
