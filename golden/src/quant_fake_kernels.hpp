// Fused fake-quantization kernels (quant_fake_avx512.cpp), called by fake_quantize where
// quant_simd_level() is Avx512: n_blocks consecutive blocks of x (the first at flat index
// first_index, the SR counter; or block b at flat index starts[b] where starts is not null)
// quantized and dequantized into out, dequantize(quantize(.)) bit for bit, with every block's
// codes and scale kept in registers. TE convention;
// rounding Rne or Sr (HiF4: anything but Sr is its nearest rounding). rht (MX, HiF4): RHT-16
// applied to each group of sixteen blocks first (rht_apply_to's bits), or null. stream: streaming
// stores where out allows them (the caller fences).
#pragma once

#include <cstddef>
#include <cstdint>

#include "fp4sim/quant.hpp"

namespace fp4sim::quant_detail {

struct Rht16 {
  const int8_t* signs;  // 16 entries, +1 or -1
  bool bf16;            // round the rotated values to BF16
};

void fake_nvfp4_1x16_avx512(const float* x, size_t n_blocks, Nvfp4TensorScale ts, const QuantOptions& opt,
                            uint64_t first_index, const uint64_t* starts, float* out, bool stream);
// NVFP4 2D: x [rows, cols] from the first row of a 16-row tile band; row r's SR index starts at
// first_index + r * cols, or at starts[r].
void fake_nvfp4_2d_avx512(const float* x, size_t rows, size_t cols, Nvfp4TensorScale ts, const QuantOptions& opt,
                          uint64_t first_index, const uint64_t* starts, float* out, bool stream);
void fake_mx_avx512(const BlockFormatInfo& fi, const float* x, size_t n_blocks, const QuantOptions& opt,
                    uint64_t first_index, const uint64_t* starts, const Rht16* rht, float* out, bool stream);
void fake_hif4_avx512(const float* x, size_t n_blocks, const QuantOptions& opt, uint64_t first_index,
                      const uint64_t* starts, const Rht16* rht, float* out, bool stream);
// out = RHT-16(x[0, n)) (rht_apply_to's bits; n a multiple of 16, out == x allowed); returns the
// NaN-ignoring amax of out (NVFP4's first pass).
float rht16_amax_avx512(const float* x, size_t n, const Rht16& rht, float* out);

}  // namespace fp4sim::quant_detail
