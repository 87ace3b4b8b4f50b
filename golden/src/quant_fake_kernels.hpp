// Fused fake-quantization kernels (quant_fake_avx512.cpp), called by fake_quantize where
// quant_simd_level() is Avx512: n_blocks consecutive blocks of x (the first at flat index
// first_index, the SR counter) quantized and dequantized into out, dequantize(quantize(.)) bit for bit, with every block's
// codes and scale kept in registers. TE convention;
// rounding Rne or Sr (HiF4: anything but Sr is its nearest rounding). rht (MX, HiF4): the RHT
// (16 or 64 points) applied to each group of sixteen blocks first (rht_apply_to's bits), or null;
// the blocks' values must hold whole tiles. stream: streaming stores where out allows them (the
// caller fences).
#pragma once

#include <cstddef>
#include <cstdint>

#include "fp4sim/quant.hpp"

namespace fp4sim::quant_detail {

// The RHT sizes with an in-register transform here.
inline bool rht_in_kernel(int n) { return n == 16 || n == 64; }

struct Rht {
  const int8_t* signs;  // n entries, +1 or -1
  int n;                // 16 or 64
  bool bf16;            // round the rotated values to BF16
};

void fake_nvfp4_1x16_avx512(const float* x, size_t n_blocks, Nvfp4TensorScale ts, const QuantOptions& opt,
                            uint64_t first_index, float* out, bool stream);
// NVFP4 2D: x [rows, cols] from the first row of a 16-row tile band; row r's SR index starts at
// first_index + r * cols, or at starts[r].
void fake_nvfp4_2d_avx512(const float* x, size_t rows, size_t cols, Nvfp4TensorScale ts, const QuantOptions& opt,
                          uint64_t first_index, const uint64_t* starts, float* out, bool stream);
void fake_mx_avx512(const BlockFormatInfo& fi, const float* x, size_t n_blocks, const QuantOptions& opt,
                    uint64_t first_index, const Rht* rht, float* out, bool stream);
void fake_hif4_avx512(const float* x, size_t n_blocks, const QuantOptions& opt, uint64_t first_index,
                      const Rht* rht, float* out, bool stream);
// MX along the first axis of x [rows, cols] (cols a multiple of 16), the band of H rows from row
// i0 (H = 32, or rht->n where larger): every block runs down a column, the SR bytes of column c's
// block at view row i0 + 32 q from flat index c * rows + i0 + 32 q, as fake_mx on the transposed
// view gives; x == out allowed. rht: 16 or 64 points down the columns, or null.
void fake_mx_band_avx512(const BlockFormatInfo& fi, const float* x, size_t rows, size_t cols, size_t i0,
                         const QuantOptions& opt, const Rht* rht, float* out);
// HiF4 the same way, bands of 64 rows (rht: 16 or 64 points down the columns, or null).
void fake_hif4_band_avx512(const float* x, size_t rows, size_t cols, size_t i0, const QuantOptions& opt,
                           const Rht* rht, float* out);
// NVFP4 1x16 the same way, bands of H rows (16, or the RHT size) from the tensor scale ts; x ==
// out allowed. rht_band_amax_avx512: NVFP4's first pass, out = the RHT (rht.n rows, down the
// columns) of the band from row i0, returning the NaN-ignoring amax of those values.
void fake_nvfp4_band_avx512(const float* x, size_t rows, size_t cols, size_t i0, size_t H, Nvfp4TensorScale ts,
                            const QuantOptions& opt, float* out);
float rht_band_amax_avx512(const float* x, size_t cols, size_t i0, const Rht& rht, float* out);
// out = RHT(x[0, n)) (rht_apply_to's bits; n a multiple of rht.n, out == x allowed); returns the
// NaN-ignoring amax of out (NVFP4's first pass).
float rht_amax_avx512(const float* x, size_t n, const Rht& rht, float* out);

}  // namespace fp4sim::quant_detail
