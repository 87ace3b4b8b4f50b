// __host__ __device__ lane functions of the tuned quantizer kernels (sim/gpu/src/device_tuned.cu):
// a lane holds 4 consecutive elements (one float4) of a block. The kernels combine lanes with warp
// shuffles; the Host backend's QuantKernel::Tuned combines them in plain loops (api.cpp), so the
// CPU tests (tests/gpu/test_gpu_hd.cpp) check every function here against golden bit for bit.
// The element arithmetic is quant_hd.hpp's, unchanged; what is new here is how it is split by lane
// and the RHT-16 fast path below.
#pragma once

#include "fp4sim/gpu/quant_hd.hpp"

namespace fp4sim::gpu::hd {

// Largest |x| of a lane's 4 elements as FP32 bits, NaN ignored (NVFP4's block / tensor amax).
FP4SIM_HD uint32_t amax4_ignore_nan(const float* x) {
  return hmax(hmax(abs_bits_ignore_nan(x[0]), abs_bits_ignore_nan(x[1])),
              hmax(abs_bits_ignore_nan(x[2]), abs_bits_ignore_nan(x[3])));
}

// Largest magnitude bits of 4 elements, NaN / Inf included (MX and HiF4 blocks).
FP4SIM_HD uint32_t magmax4(const float* x) {
  return hmax(hmax(f2u(x[0]) & 0x7FFFFFFFu, f2u(x[1]) & 0x7FFFFFFFu), hmax(f2u(x[2]) & 0x7FFFFFFFu, f2u(x[3]) & 0x7FFFFFFFu));
}

FP4SIM_HD uint8_t byte_of(uint32_t w, int i) { return static_cast<uint8_t>(w >> (8 * i)); }

// The tuned kernels' warp layout: a warp walks tiles of 512 elements in 4 steps of 128; in step
// `it`, lane l holds elements tile + tile_offset(it, l) .. + 3. For SR, lane l of the warp draws
// the Philox block (tile / 16 + l); the 4 SR bytes of a lane's elements are word sr_word_index(l)
// of the block drawn by lane sr_src_lane(it, l). (Checked on the host against sr_word4.)
constexpr int kTileElems = 512;
FP4SIM_HD size_t tile_offset(int it, unsigned lane) { return static_cast<size_t>(it) * 128 + 4u * lane; }
FP4SIM_HD int sr_src_lane(int it, unsigned lane) { return it * 8 + static_cast<int>(lane >> 2); }
FP4SIM_HD int sr_word_index(unsigned lane) { return static_cast<int>(lane & 3u); }

// 4 NVFP4 codes, packed little-endian (element i in byte i), given the block's inverse scale;
// rb4 = the 4 SR bytes (sr_word4), used if rnd = kSr.
FP4SIM_HD uint32_t nvfp4_codes4(const float* x, float inv, int rnd, uint32_t rb4) {
  uint32_t c = 0;
  for (int i = 0; i < 4; ++i) c |= static_cast<uint32_t>(nvfp4_elem(x[i], inv, rnd, byte_of(rb4, i))) << (8 * i);
  return c;
}

// 4 MX codes, packed, given the block's scale.
FP4SIM_HD uint32_t mx_codes4(const Elem& f, const float* x, const MxScale& s, int rnd, uint32_t rb4) {
  uint32_t c = 0;
  for (int i = 0; i < 4; ++i) c |= static_cast<uint32_t>(mx_elem(f, x[i], s, rnd, byte_of(rb4, i))) << (8 * i);
  return c;
}

// ---- RHT-16 with a fast exact path ----
// Output j of a 16-tile is RN_fp32(2^-2 * sum_i +-x_i) (SPEC §2.4; rht16_output sums exactly in a
// 10-limb fixed-point accumulator). When the tile is finite and its nonzero terms' exponents span
// at most 25 binades, the same sum is exact in double: with E' = max(biased exponent, 1), every
// term is a multiple of 2^(E'min - 150) and below 2^(E'max - 126), so every partial sum of 16 terms
// is a multiple of 2^(E'min - 150) below 2^(E'max - 122): at most (E'max - E'min) + 28 <= 53
// significant bits. The product by 2^-2 is exact in double (far from its range ends) and the one
// conversion to float rounds it RN-even with FP32 subnormals and overflow, as round_to_fp32 does.
// An exact zero: IEEE RN sums give +0 when started from +0 (x + -x = +0, +0 + -0 = +0), as the
// fixed-point sum does. Otherwise (NaN / Inf, or a wider spread) the exact accumulator runs.
FP4SIM_HD bool rht16_fast_ok(const float* x) {
  uint32_t emax = 0, emin = 255;
  for (int i = 0; i < 16; ++i) {
    const uint32_t ab = f2u(x[i]) & 0x7FFFFFFFu;
    if (ab == 0) continue;
    const uint32_t e = hmax(ab >> 23, 1u);  // 255 for NaN / Inf: rejected below
    emax = hmax(emax, e);
    emin = hmin(emin, e);
  }
  return emax < 255 && (emax == 0 || emax - emin <= 25);
}

FP4SIM_HD float rht16_output_fast(const float* x, uint32_t sign_mask, int j, bool to_bf16) {
  double s = 0.0;
  for (int i = 0; i < 16; ++i) {
    const uint32_t xb = f2u(x[i]);
    const bool flip = (((sign_mask >> i) & 1u) ^ (popc(static_cast<uint32_t>(i & j)) & 1u)) != 0;
    const double t = static_cast<double>(u2f(xb & 0x7FFFFFFFu));
    s = (((xb >> 31) != 0) != flip) ? s - t : s + t;  // exact (see above)
  }
  const float y = static_cast<float>(s * 0.25);  // the one rounding
  return to_bf16 ? bf16_round(y) : y;
}

// Outputs 4q .. 4q + 3 of a 16-tile x[0..15] (q = the lane's place in its quad).
FP4SIM_HD void rht16_outputs4(const float* x, uint32_t sign_mask, int q, bool to_bf16, float* y) {
  const bool fast = rht16_fast_ok(x);
  for (int o = 0; o < 4; ++o)
    y[o] = fast ? rht16_output_fast(x, sign_mask, 4 * q + o, to_bf16) : rht16_output(x, sign_mask, 4 * q + o, to_bf16);
}

}  // namespace fp4sim::gpu::hd
