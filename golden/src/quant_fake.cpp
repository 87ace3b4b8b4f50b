// fake_quantize: quantize -> dequantize into float32, chunk by chunk, with the codes and scales of a
// chunk kept in per-thread buffers that stay in cache. The quantizing is quantize()'s own kernels
// on the same chunks of the same (possibly rotated) values with the same flat indices, so the
// codes are quantize()'s; the dequantization below repeats dequantize()'s arithmetic in float.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "fp4sim/hadamard.hpp"
#include "fp4sim/quant.hpp"
#include "quant_fake_kernels.hpp"
#include "quant_internal.hpp"

namespace fp4sim {

using namespace quant_detail;

namespace {

// dequantize()'s arithmetic, in float where it computes in double: an MX value q * 2^e and a HiF4
// value q * s * 2^level are exact in double and within float's normal or subnormal range, so
// rounding the double once equals the one float product (HiF4's s * 2^level is itself exact).
// NVFP4 (TE) is q * s * S_dec in FP32 left to right in both. A NaN scale gives its block NaN.
// stream: the AVX-512 kernel writes with streaming stores (see fake_quantize).
void dequant_blocks(const BlockFormatInfo& fi, const uint8_t* codes, const uint8_t* scales, const uint32_t* words,
                    size_t nb, float gs, float* out, bool stream = false) {
#if defined(__x86_64__)
  if (quant_simd_level() == QuantSimd::Avx512) {
    dequant_blocks_avx512(fi, codes, scales, words, nb, gs, out, stream);
    return;
  }
#else
  (void)stream;
#endif
  const float* et = decode_table(*fi.elem).v.data();
  const float* st = decode_table(*fi.scale).v.data();
  const size_t B = static_cast<size_t>(fi.block);
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  for (size_t b = 0; b < nb; ++b) {
    const uint8_t* cb = codes + b * B;
    float* ob = out + b * B;
    const float s = st[fi.scale_word32 ? words[b] & 0xFFu : scales[b]];
    if (s != s) {
      std::fill(ob, ob + B, qnan);
    } else if (fi.id == BlockFormat::Nvfp4) {
      for (size_t i = 0; i < B; ++i) ob[i] = et[cb[i]] * s * gs;
    } else if (fi.scale_word32) {
      float m[16];  // s * 2^level per group of four
      for (int g = 0; g < 16; ++g) m[g] = s * static_cast<float>(1 << hif4_level(words[b], 4 * g));
      for (size_t i = 0; i < B; ++i) ob[i] = et[cb[i]] * m[i / 4];
    } else {
      for (size_t i = 0; i < B; ++i) ob[i] = et[cb[i]] * s;
    }
  }
}

// Streaming stores are weakly ordered: each chunk fences its own before the threads join.
void fence(bool stream) {
#if defined(__x86_64__)
  if (stream) _mm_sfence();
#else
  (void)stream;
#endif
}

// One worker's buffers, kept between calls (fresh pages cost more than the work on them).
struct Scratch {
  std::vector<float> in, rot, deq;
  std::vector<uint8_t> codes, scales;
  std::vector<uint32_t> words;
  std::vector<uint64_t> starts;
};
Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

template <typename T>
T* sized(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

// x [rows, cols] row-major; columns c0 .. c0 + nc as the rows of t (row stride ld >= rows), and
// back. In 16 x 16 tiles: writing t a column at a time would touch nc lines ld floats apart for
// every value, several times slower.
void gather_columns(const float* x, size_t rows, size_t cols, size_t c0, size_t nc, float* t, size_t ld) {
  const bool avx512 = quant_simd_level() == QuantSimd::Avx512;
  for (size_t i0 = 0; i0 < rows; i0 += 16) {
    const size_t ni = std::min<size_t>(16, rows - i0);
    if (ni == 16 && nc % 16 == 0) {
      for (size_t j0 = 0; j0 < nc; j0 += 16) {
#if defined(__x86_64__)
        if (avx512) {
          transpose16_avx512(x + i0 * cols + c0 + j0, cols, t + j0 * ld + i0, ld);
          continue;
        }
#endif
        float tile[16][16];
        for (size_t i = 0; i < 16; ++i) std::memcpy(tile[i], x + (i0 + i) * cols + c0 + j0, 16 * sizeof(float));
        for (size_t j = 0; j < 16; ++j)
          for (size_t i = 0; i < 16; ++i) t[(j0 + j) * ld + i0 + i] = tile[i][j];
      }
      continue;
    }
    for (size_t i = i0; i < i0 + ni; ++i)
      for (size_t j = 0; j < nc; ++j) t[j * ld + i] = x[i * cols + c0 + j];
  }
}
void scatter_columns(const float* t, size_t ld, size_t rows, size_t cols, size_t c0, size_t nc, float* x) {
  const bool avx512 = quant_simd_level() == QuantSimd::Avx512;
  for (size_t i0 = 0; i0 < rows; i0 += 16) {
    const size_t ni = std::min<size_t>(16, rows - i0);
    if (ni == 16 && nc % 16 == 0) {
      for (size_t j0 = 0; j0 < nc; j0 += 16) {
#if defined(__x86_64__)
        if (avx512) {
          transpose16_avx512(t + j0 * ld + i0, ld, x + i0 * cols + c0 + j0, cols);
          continue;
        }
#endif
        float tile[16][16];
        for (size_t j = 0; j < 16; ++j)
          for (size_t i = 0; i < 16; ++i) tile[i][j] = t[(j0 + j) * ld + i0 + i];
        for (size_t i = 0; i < 16; ++i) std::memcpy(x + (i0 + i) * cols + c0 + j0, tile[i], 16 * sizeof(float));
      }
      continue;
    }
    for (size_t i = i0; i < i0 + ni; ++i)
      for (size_t j = 0; j < nc; ++j) x[i * cols + c0 + j] = t[j * ld + i];
  }
}

// The other conventions run quantize() + dequantize() on the portable path: no fused kernel.
void fake_quantize_unfused(BlockFormat f, const float* x, size_t rows, size_t cols, const QuantOptions& opt,
                           float* out, bool first) {
  const size_t n = rows * cols;
  std::vector<float> t(x, x + n);
  if (first) gather_columns(x, rows, cols, 0, cols, t.data(), rows);
  const std::vector<float> d = dequantize(quantize(f, t, first ? cols : rows, first ? rows : cols, opt));
  if (first) scatter_columns(d.data(), rows, rows, cols, 0, cols, out);
  else std::memcpy(out, d.data(), n * sizeof(float));
}

// Along the first axis with the fused kernels: bands of H rows of x (H = the block B, or the RHT
// size where that is larger), each block being B consecutive rows of one column, so that a band
// holds whole blocks and RHT tiles and x and out are read and written a band at a time instead of
// a few columns at a time down the whole tensor (whose rows lie a page or more apart). The kernels
// work on a band in x's layout, sixteen columns (sixteen blocks, one per lane) at a time, the RHT
// down the columns too. NVFP4 2D (16 x 16 tiles, one scale each) instead brings up to `span`
// columns through 16 x 16 transposes into view layout (column c at t + c * H), runs its kernel
// there (in place, view row c's SR bytes from flat index c * rows + i0) and transposes back. RHT of
// 16 or 64 points only (their tiles then lie inside a column of the band): the caller keeps the
// chunk path for other sizes.
void fake_first_bands(BlockFormat f, const float* x, size_t rows, size_t cols, const QuantOptions& opt, float* out,
                      unsigned threads, const std::vector<int8_t>& signs) {
  const BlockFormatInfo& fi = info(f);
  const size_t H = std::max(static_cast<size_t>(fi.block), static_cast<size_t>(opt.rht));
  const size_t n_bands = rows / H;
  const Rht rh{signs.data(), opt.rht, opt.rht_bf16};
  const Rht* rht = opt.rht != 0 ? &rh : nullptr;
  if (f != BlockFormat::Nvfp4) {
    parallel_chunks(n_bands, threads, [&](size_t band, std::vector<float>&) {
      if (f == BlockFormat::Hif4) fake_hif4_band_avx512(x, rows, cols, band * H, opt, rht, out);
      else fake_mx_band_avx512(fi, x, rows, cols, band * H, opt, rht, out);
    });
    return;
  }
  const float* src = x;
  float amax = 0.0f;
  if (rht != nullptr) {  // pass 1: the rotated values into out, and their amax
    std::vector<float> band_amax(n_bands, 0.0f);
    parallel_chunks(n_bands, threads, [&](size_t band, std::vector<float>&) {
      band_amax[band] = rht_band_amax_avx512(x, cols, band * H, rh, out);
    });
    amax = *std::max_element(band_amax.begin(), band_amax.end());
    src = out;
  } else if (opt.pts) {  // a max of the same values in any order: x's flat chunks of 64 Ki (no PTS: unused)
    const size_t n = rows * cols, per = size_t{1} << 16;
    std::vector<float> flat_amax((n + per - 1) / per, 0.0f);
    parallel_chunks(flat_amax.size(), threads, [&](size_t c, std::vector<float>&) {
      flat_amax[c] = tensor_amax(x + c * per, std::min(n, (c + 1) * per) - c * per);
    });
    amax = *std::max_element(flat_amax.begin(), flat_amax.end());
  }
  const Nvfp4TensorScale ts = nvfp4_tensor_scale(amax, opt.pts);
  if (!opt.two_d) {
    parallel_chunks(n_bands, threads, [&](size_t band, std::vector<float>&) {
      fake_nvfp4_band_avx512(src, rows, cols, band * H, H, ts, opt, out);
    });
    return;
  }
  const size_t span = std::min<size_t>(cols, 4096 / H);  // 16 KiB of values: in L1 with the kernel's own
  parallel_chunks(n_bands, threads, [&](size_t band, std::vector<float>&) {
    Scratch& s = scratch();
    float* t = sized(s.in, span * H);
    uint64_t* starts = sized(s.starts, span);
    const size_t i0 = band * H;
    for (size_t c0 = 0; c0 < cols; c0 += span) {
      const size_t nc = std::min(span, cols - c0);
      for (size_t j0 = 0; j0 < nc; j0 += 16)
        for (size_t k = 0; k < H; k += 16)
          transpose16_avx512(src + (i0 + k) * cols + c0 + j0, cols, t + j0 * H + k, H);
      for (size_t j = 0; j < nc; ++j) starts[j] = (c0 + j) * rows + i0;
      fake_nvfp4_2d_avx512(t, nc, H, ts, opt, 0, starts, t, false);  // tiles: 16 columns of the band
      for (size_t j0 = 0; j0 < nc; j0 += 16)
        for (size_t k = 0; k < H; k += 16)
          transpose16_avx512(t + j0 * H + k, H, out + (i0 + k) * cols + c0 + j0, cols);
    }
  });
}

}  // namespace

void fake_quantize(BlockFormat f, const float* x, size_t rows, size_t cols, const QuantOptions& opt, float* out,
                   BlockAxis axis) {
  const BlockFormatInfo& fi = info(f);
  const bool first = axis == BlockAxis::First;
  // The quantized view [R, C]: blocks along C (the transposed tensor for BlockAxis::First).
  const size_t R = first ? cols : rows, C = first ? rows : cols;
  const size_t B = static_cast<size_t>(fi.block);
  if (first && rows != 0 && cols != 0 && rows % B != 0) {
    throw std::invalid_argument(std::string(fi.name) + " needs the blocked (first) axis to be a multiple of " +
                                std::to_string(B) + ", got " + std::to_string(rows));
  }
  if (first && opt.rht != 0 && rows % static_cast<size_t>(std::max(opt.rht, 1)) != 0) {
    throw std::invalid_argument("RHT size " + std::to_string(opt.rht) + " does not divide the blocked (first) axis " +
                                std::to_string(rows));
  }
  check_shape(fi, R * C, R, C, opt);
  if (R == 0) return;
  if (opt.convention != Convention::Te) {
    check_convention(opt.convention, f, opt);
    fake_quantize_unfused(f, x, rows, cols, opt, out, first);
    return;
  }

  // Chunks of whole view rows, a multiple of 16 (2D tiles never straddle two), about 8 Ki values
  // so that a chunk's input, codes and output stay in L2. Along the first axis a chunk is 16 to 256
  // columns of x, about 64 Ki values: each row of x (another page when rows are long) gives it
  // several lines, not one.
  const size_t chunk_rows = first ? std::clamp<size_t>((size_t{1} << 16) / C / 16 * 16, 16, 256)
                                  : std::max<size_t>(16, (size_t{1} << 13) / C / 16 * 16);
  const size_t n_chunks = (R + chunk_rows - 1) / chunk_rows;
  const unsigned threads = opt.threads != 0 ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
  // An output larger than quantize()'s "in cache" bound (32 MiB) goes out with streaming stores
  // (along the last axis, where the dequantization writes it directly): ordinary stores would first
  // read every line of out from memory, a third more traffic. Below, out stays in cache for
  // whatever reads it next (the GEMM).
  constexpr size_t kCachedBytes = size_t{32} << 20;
  const bool stream = !first && R * C * sizeof(float) > kCachedBytes;
  // Row stride of the view rows in the chunk buffers along the first axis: padded by 16 floats, so
  // that the transposes' 16 rows are not a power of two apart (4 KiB apart for 1024-row tensors,
  // which the loads and stores then alias on). NVFP4 2D needs its tiles' rows contiguous.
  const size_t ld = first && !opt.two_d ? C + 16 : C;
  // Calls fn(j0, n) over the chunk's view rows: all at once when they are contiguous, else each.
  auto row_groups = [&](size_t nr, auto&& fn) {
    if (ld == C) fn(size_t{0}, nr);
    else
      for (size_t j = 0; j < nr; ++j) fn(j, size_t{1});
  };
  // The fused AVX-512 kernels (quant_fake_avx512.cpp) where quantize() would take the vector
  // kernels they mirror; the other roundings keep codes and scales in the chunk buffers.
  const bool sr_or_rne = opt.rounding == Rounding::Sr || opt.rounding == Rounding::Rne;
  const bool fused = quant_simd_level() == QuantSimd::Avx512 && (f == BlockFormat::Hif4 || sr_or_rne);
  std::vector<int8_t> signs;
  if (opt.rht != 0) rht_signs(opt.rht, opt.rht_seeded || opt.rht != 16, opt.rht_seed, signs);
  // MX and HiF4 take RHT-16 and RHT-64 inside the fused kernels, per group of blocks in L1; other
  // sizes, and NVFP4 (whose first pass needs the rotated values' amax: storing them there and
  // reading them back costs less than a second transform), per chunk first.
  const Rht rh{signs.data(), opt.rht, opt.rht_bf16};
  const bool rht_fused = fused && rht_in_kernel(opt.rht);
  const Rht* in_kernel = rht_fused && f != BlockFormat::Nvfp4 ? &rh : nullptr;
  const bool rht_first = opt.rht != 0 && in_kernel == nullptr;
  if (first && fused && cols % 16 == 0 && (opt.rht == 0 || rht_fused)) {
    fake_first_bands(f, x, rows, cols, opt, out, threads, signs);
    return;
  }

  // The view rows [r0, r0 + nr) of src (laid out as x) in view layout, through the RHT if rht.
  // Row j of the result is at j * ld.
  auto load = [&](const float* src, size_t r0, size_t nr, bool rht, Scratch& s) -> const float* {
    const float* v = src + r0 * C;
    if (first) {
      float* t = sized(s.in, nr * ld);
      gather_columns(src, rows, cols, r0, nr, t, ld);
      v = t;
    }
    if (!rht) return v;
    float* r = sized(s.rot, nr * ld);
    row_groups(nr, [&](size_t j0, size_t n) {
      rht_apply_to(std::span<const float>(v + j0 * ld, n * C), std::span<float>(r + j0 * ld, n * C), C, opt.rht, signs,
                   opt.rht_bf16);
    });
    return r;
  };
  // Where the dequantized view rows go (row j at j * ld): straight into out, or through a buffer
  // along the first axis.
  auto dest = [&](size_t r0, size_t nr, Scratch& s) { return first ? sized(s.deq, nr * ld) : out + r0 * C; };
  auto store = [&](const float* d, size_t r0, size_t nr) {
    if (first) scatter_columns(d, ld, rows, cols, r0, nr, out);
  };
  auto rows_of = [&](size_t c, size_t& r0) {
    r0 = c * chunk_rows;
    return std::min(R, r0 + chunk_rows) - r0;
  };

  if (f == BlockFormat::Nvfp4) {
    // Pass 1: the tensor amax, after the RHT (whose output goes to out, read again by pass 2).
    std::vector<float> chunk_amax(n_chunks, 0.0f);
    const float* src = x;
    if (opt.rht != 0) {
      parallel_chunks(n_chunks, threads, [&](size_t c, std::vector<float>&) {
        Scratch& s = scratch();
        size_t r0;
        const size_t nr = rows_of(c, r0);
        const size_t n = nr * C;
        if (first) {
          const float* v = load(x, r0, nr, true, s);
          float m = 0.0f;
          row_groups(nr, [&](size_t j0, size_t k) { m = std::max(m, tensor_amax(v + j0 * ld, k * C)); });
          chunk_amax[c] = m;
          store(v, r0, nr);
        } else if (rht_fused) {  // straight into out, the amax on the way
          chunk_amax[c] = rht_amax_avx512(x + r0 * C, n, rh, out + r0 * C);
        } else {  // straight into out (x itself when in place: the RHT allows in == out)
          rht_apply_to(std::span<const float>(x + r0 * C, n), std::span<float>(out + r0 * C, n), C, opt.rht, signs,
                       opt.rht_bf16);
          chunk_amax[c] = tensor_amax(out + r0 * C, n);
        }
      });
      src = out;
    } else if (opt.pts) {  // a max of the same values in any order: x's flat chunks (no PTS: unused)
      const size_t n = R * C, per = chunk_rows * C;
      std::vector<float> flat_amax((n + per - 1) / per, 0.0f);
      parallel_chunks(flat_amax.size(), threads, [&](size_t c, std::vector<float>&) {
        flat_amax[c] = tensor_amax(x + c * per, std::min(n, (c + 1) * per) - c * per);
      });
      chunk_amax.swap(flat_amax);
    }
    const float amax = *std::max_element(chunk_amax.begin(), chunk_amax.end());
    const Nvfp4TensorScale ts = nvfp4_tensor_scale(amax, opt.pts);
    parallel_chunks(n_chunks, threads, [&](size_t c, std::vector<float>&) {
      Scratch& s = scratch();
      size_t r0;
      const size_t nr = rows_of(c, r0);
      const size_t n = nr * C;
      const float* v = load(src, r0, nr, false, s);
      float* d = dest(r0, nr, s);
      if (fused) {
        // Streaming stores only into memory not read here: in place (out after the RHT pass, or
        // x == out) they would evict the lines the kernel is about to read.
        const bool fused_stream = stream && v != d;
        row_groups(nr, [&](size_t j0, size_t k) {
          const size_t i0 = r0 * C + j0 * C;
          if (opt.two_d) fake_nvfp4_2d_avx512(v + j0 * ld, k, C, ts, opt, i0, nullptr, d + j0 * ld, fused_stream);
          else fake_nvfp4_1x16_avx512(v + j0 * ld, k * C / 16, ts, opt, i0, d + j0 * ld, fused_stream);
        });
        store(d, r0, nr);
        fence(stream);
        return;
      }
      uint8_t* codes = sized(s.codes, n);
      uint8_t* scales = sized(s.scales, n / 16);
      row_groups(nr, [&](size_t j0, size_t k) {
        const size_t o = j0 * C;
        quantize_nvfp4_rows(v + j0 * ld, k, C, opt, ts, r0 * C + o, nullptr, codes + o, scales + o / 16, false);
        dequant_blocks(fi, codes + o, scales + o / 16, nullptr, k * C / 16, ts.s_dec, d + j0 * ld, stream);
      });
      store(d, r0, nr);
      fence(stream);
    });
    return;
  }
  parallel_chunks(n_chunks, threads, [&](size_t c, std::vector<float>&) {
    Scratch& s = scratch();
    size_t r0;
    const size_t nr = rows_of(c, r0);
    const size_t n = nr * C, nb = n / B;
    const float* v = load(x, r0, nr, rht_first, s);
    float* d = dest(r0, nr, s);
    if (fused) {
      const bool fused_stream = stream && v != d;  // as for NVFP4
      row_groups(nr, [&](size_t j0, size_t k) {
        const size_t kb = k * C / B;
        const size_t i0 = r0 * C + j0 * C;
        const float* vj = v + j0 * ld;
        float* dj = d + j0 * ld;
        if (f == BlockFormat::Hif4) fake_hif4_avx512(vj, kb, opt, i0, in_kernel, dj, fused_stream);
        else fake_mx_avx512(fi, vj, kb, opt, i0, in_kernel, dj, fused_stream);
      });
      store(d, r0, nr);
      fence(stream);
      return;
    }
    uint8_t* codes = sized(s.codes, n);
    uint8_t* scales = sized(s.scales, nb);
    uint32_t* words = sized(s.words, nb);
    row_groups(nr, [&](size_t j0, size_t k) {
      const size_t o = j0 * C, kb = k * C / B;
      if (f == BlockFormat::Hif4) {
        quantize_hif4(v + j0 * ld, kb, opt, codes + o, words + o / B, r0 * C + o);
        dequant_blocks(fi, codes + o, nullptr, words + o / B, kb, 1.0f, d + j0 * ld, stream);
      } else {
        quantize_mx(f, v + j0 * ld, kb, opt, codes + o, scales + o / B, r0 * C + o);
        dequant_blocks(fi, codes + o, scales + o / B, nullptr, kb, 1.0f, d + j0 * ld, stream);
      }
    });
    store(d, r0, nr);
    fence(stream);
  });
}

}  // namespace fp4sim
