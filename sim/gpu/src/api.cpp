// Backend-neutral part of fp4sim_gpu: argument checks, parameter packing, and the Host backend
// (the kernels' __host__ __device__ functions run in plain loops on the CPU).
#include <cmath>
#include <stdexcept>
#include <string>

#include "detail.hpp"
#include "fp4sim/gpu/tuned_hd.hpp"
#include "fp4sim/hadamard.hpp"

namespace fp4sim::gpu {

namespace {

hd::Fmt fmt_of(const ElemFormat& f) {
  return hd::Fmt{f.bits, f.ebits, f.mbits, f.bias, f.is_signed, f.has_subnormals, static_cast<uint8_t>(f.special)};
}

hd::Elem elem_of(const BlockFormatInfo& fi) {
  const ElemFormat& f = *fi.elem;
  return hd::Elem{f.mbits, f.bias, f.max_code(), f.sign_bit(), fi.emax_elem, decode(f, f.max_code())};
}

detail::QuantJob make_job(BlockFormat f, size_t rows, size_t cols, const QuantOptions& opt, QuantKernel kernel) {
  const std::string why = cannot_quantize(f, opt);
  if (!why.empty()) throw std::invalid_argument("gpu quantize: " + why);
  detail::QuantJob j{};
  j.f = f;
  j.rows = rows;
  j.cols = cols;
  j.rnd = static_cast<int>(effective_rounding(f, opt.rounding));
  j.rule = static_cast<int>(opt.scale_rule);
  j.seed = opt.seed;
  j.stream = opt.stream;
  j.pts = opt.pts;
  j.two_d = opt.two_d;
  j.rht = opt.rht;
  j.rht_bf16 = opt.rht_bf16;
  if (opt.rht != 0) {
    const std::vector<int8_t> s = rht_signs(opt.rht, opt.rht_seeded || opt.rht != 16, opt.rht_seed);
    for (int i = 0; i < 16; ++i) j.rht_mask |= (s[static_cast<size_t>(i)] < 0 ? 1u : 0u) << i;
  }
  j.elem = elem_of(info(f));
  j.kernel = kernel;
  j.block = info(f).block;
  j.scale_word32 = info(f).scale_word32;
  return j;
}

void host_quantize(const detail::QuantJob& j, const float* x_in, Quantized& q) {
  const size_t n = j.rows * j.cols;
  std::vector<float> rotated;
  const float* x = x_in;
  if (j.rht) {
    rotated.resize(n);
    for (size_t t = 0; t < n / 16; ++t)
      for (int o = 0; o < 16; ++o) rotated[t * 16 + static_cast<size_t>(o)] = hd::rht16_output(x_in + t * 16, j.rht_mask, o, j.rht_bf16);
    x = rotated.data();
  }
  switch (j.f) {
    case BlockFormat::Nvfp4: {
      uint32_t am = 0;
      for (size_t i = 0; i < n; ++i) am = std::max(am, hd::abs_bits_ignore_nan(x[i]));
      q.amax = hd::u2f(am);
      const hd::Nvfp4Scale ts = hd::nvfp4_tensor_scale(q.amax, j.pts);
      q.global_scale = ts.s_dec;
      if (!j.two_d) {
        for (size_t b = 0; b < n / 16; ++b)
          hd::nvfp4_block(x + b * 16, ts, j.rnd, j.seed, j.stream, b * 16, q.codes.data() + b * 16, q.scales.data() + b);
      } else {
        for (size_t r0 = 0; r0 < j.rows; r0 += 16)
          for (size_t jb = 0; jb < j.cols / 16; ++jb)
            hd::nvfp4_tile2d(x, j.rows, j.cols, r0, jb, ts, j.rnd, j.seed, j.stream, q.codes.data(), q.scales.data());
      }
      break;
    }
    case BlockFormat::Hif4:
      for (size_t b = 0; b < n / 64; ++b)
        hd::hif4_block(x + b * 64, j.rnd, j.seed, j.stream, b * 64, q.codes.data() + b * 64, q.scale_words.data() + b);
      break;
    default:
      for (size_t b = 0; b < n / 32; ++b)
        hd::mx_block(j.elem, x + b * 32, j.rnd, j.rule, j.seed, j.stream, b * 32, q.codes.data() + b * 32, q.scales.data() + b);
      break;
  }
}

// QuantKernel::Tuned on the host: the tuned kernels' lane functions (tuned_hd.hpp), combined per
// block in plain loops where the kernel combines lanes with shuffles. A lane = 4 elements from
// flat index e (a multiple of 4); with RHT its values are the rotated ones, computed per lane.
void host_quantize_tuned(const detail::QuantJob& j, const float* x, Quantized& q) {
  const size_t n = j.rows * j.cols;
  auto lane = [&](size_t e, float* v) {
    if (j.rht) {
      hd::rht16_outputs4(x + (e & ~size_t{15}), j.rht_mask, static_cast<int>((e >> 2) & 3u), j.rht_bf16, v);
    } else {
      for (int i = 0; i < 4; ++i) v[i] = x[e + static_cast<size_t>(i)];
    }
  };
  auto rb4 = [&](size_t e) { return j.rnd == hd::kSr ? hd::sr_word4(j.seed, j.stream, e) : 0u; };
  auto put4 = [&](size_t e, uint32_t c4) {
    for (int i = 0; i < 4; ++i) q.codes[e + static_cast<size_t>(i)] = hd::byte_of(c4, i);
  };
  const int lanes = j.block / 4;
  float v[16][4];
  switch (j.f) {
    case BlockFormat::Nvfp4: {
      uint32_t am = 0;  // the amax pass (with PTS) or the quantizer's own block maxima (without)
      for (size_t e = 0; e < n; e += 4) {
        lane(e, v[0]);
        am = std::max(am, hd::amax4_ignore_nan(v[0]));
      }
      q.amax = hd::u2f(am);
      const hd::Nvfp4Scale ts = hd::nvfp4_tensor_scale(q.amax, j.pts);
      q.global_scale = ts.s_dec;
      for (size_t b = 0; b < n / 16; ++b) {
        uint32_t bam = 0;
        for (int l = 0; l < 4; ++l) {
          lane(b * 16 + 4u * static_cast<size_t>(l), v[l]);
          bam = std::max(bam, hd::amax4_ignore_nan(v[l]));
        }
        const uint8_t code = hd::nvfp4_scale_code(hd::u2f(bam), ts);
        q.scales[b] = code;
        const float inv = hd::nvfp4_inverse(code, ts);
        for (int l = 0; l < 4; ++l) {
          const size_t e = b * 16 + 4u * static_cast<size_t>(l);
          put4(e, hd::nvfp4_codes4(v[l], inv, j.rnd, rb4(e)));
        }
      }
      break;
    }
    case BlockFormat::Hif4:
      for (size_t b = 0; b < n / 64; ++b) {
        uint32_t v16[16], vmax = 0;
        for (int l = 0; l < 16; ++l) {
          lane(b * 64 + 4u * static_cast<size_t>(l), v[l]);
          v16[l] = hd::magmax4(v[l]);
          vmax = std::max(vmax, v16[l]);
        }
        const hd::Hif4Consts hc = hd::hif4_consts(vmax);
        uint32_t w = hc.nan ? 0xFFu : hc.e6;
        for (int l = 0; l < 16; ++l) {
          const size_t e = b * 64 + 4u * static_cast<size_t>(l);
          w |= hd::hif4_group(hc, l, v16[l], v16[l ^ 1], v[l], j.rnd, rb4(e), q.codes.data() + e);
        }
        q.scale_words[b] = w;
      }
      break;
    default:
      for (size_t b = 0; b < n / 32; ++b) {
        uint32_t am = 0;
        for (int l = 0; l < lanes; ++l) {
          lane(b * 32 + 4u * static_cast<size_t>(l), v[l]);
          am = std::max(am, hd::magmax4(v[l]));
        }
        const hd::MxScale sc = hd::mx_scale(j.elem, am, j.rule);
        q.scales[b] = sc.code;
        for (int l = 0; l < lanes; ++l) {
          const size_t e = b * 32 + 4u * static_cast<size_t>(l);
          put4(e, hd::mx_codes4(j.elem, v[l], sc, j.rnd, rb4(e)));
        }
      }
      break;
  }
}

hd::GemmParams make_params(const MmaConfig& cfg, Model model, size_t M, size_t N, size_t K) {
  const std::string why = cannot_run(cfg, model);
  if (!why.empty()) throw std::invalid_argument("gpu gemm: " + why);
  hd::GemmParams p{};
  p.model = static_cast<int>(model);
  p.k = cfg.kind->k;
  p.group = cfg.kind->group;
  p.block = cfg.block;
  p.frac_bits = cfg.kind->frac_bits;
  p.hif4 = cfg.kind->scale_word32;
  p.ea = fmt_of(*cfg.elem_a);
  p.eb = fmt_of(*cfg.elem_b);
  p.sc = fmt_of(*cfg.scale);
  p.mb_a = cfg.elem_a->mbits;
  p.mb_b = cfg.elem_b->mbits;
  p.mb_s = cfg.scale->mbits;
  p.M = M;
  p.N = N;
  p.K = K;
  p.alpha = 1.0f;
  return p;
}

}  // namespace

bool gpu_available(std::string& why) { return detail::device_query(why); }

std::string cannot_run(const MmaConfig& cfg, Model model) {
  try {
    validate_mma_config(cfg, model);
  } catch (const std::exception& e) {
    return e.what();
  }
  if (model == Model::AscendHif4 && cfg.hif4_round_groups != 1)
    return "ascend-hif4 on the GPU rounds once per group (hif4_round_groups = 1) only";
  return {};
}

std::string cannot_quantize(BlockFormat f, const QuantOptions& opt) {
  if (opt.rht != 0 && opt.rht != 16) return "the GPU RHT supports size 16 only, got " + std::to_string(opt.rht);
  if (f == BlockFormat::Hif4 && opt.rounding == Rounding::Rz) return "hif4 has no rz rounding";
  if (opt.two_d && f != BlockFormat::Nvfp4) return "2D 16x16 scaling is defined for nvfp4 only";
  return {};
}

std::vector<uint32_t> gemm(Backend be, const MmaConfig& cfg, Model model, size_t M, size_t N, size_t K,
                           std::span<const uint8_t> a, std::span<const uint32_t> sa, std::span<const uint8_t> b,
                           std::span<const uint32_t> sb, std::span<const float> c, float alpha, GemmKernel kernel) {
  hd::GemmParams p = make_params(cfg, model, M, N, K);
  const size_t step = (model == Model::Blackwell || model == Model::AscendHif4) ? static_cast<size_t>(p.k)
                                                                                : static_cast<size_t>(p.block);
  if (K == 0 || K % step != 0) throw std::invalid_argument("gpu gemm: K must be a positive multiple of " + std::to_string(step));
  const size_t nblk = K / static_cast<size_t>(p.block);
  if (a.size() != M * K || b.size() != N * K || sa.size() != M * nblk || sb.size() != N * nblk ||
      (!c.empty() && c.size() != M * N)) {
    throw std::invalid_argument("gpu gemm: operand sizes do not match M, N, K");
  }
  p.a = a.data();
  p.b = b.data();
  p.sa = sa.data();
  p.sb = sb.data();
  p.c = c.empty() ? nullptr : c.data();
  p.alpha = alpha;
  std::vector<uint32_t> d(M * N);
  if (M * N == 0) return d;
  if (be == Backend::Device) {
    detail::device_gemm(p, kernel, d.data());
    return d;
  }
  std::vector<int8_t> qa, qb;
  if (hd::needs_q(p)) {
    qa.resize(M * K);
    qb.resize(N * K);
    for (size_t i = 0; i < M * K; ++i) qa[i] = hd::prep_q(p, true, i);
    for (size_t i = 0; i < N * K; ++i) qb[i] = hd::prep_q(p, false, i);
    p.qa = qa.data();
    p.qb = qb.data();
  }
  for (size_t i = 0; i < M; ++i)
    for (size_t j = 0; j < N; ++j) d[i * N + j] = hd::gemm_element(p, i, j);
  return d;
}

Quantized quantize(Backend be, BlockFormat f, std::span<const float> x, size_t rows, size_t cols,
                   const QuantOptions& opt, QuantKernel kernel) {
  const BlockFormatInfo& fi = info(f);
  if (x.size() != rows * cols || cols == 0 || cols % static_cast<size_t>(fi.block) != 0 ||
      (opt.rht != 0 && cols % static_cast<size_t>(opt.rht) != 0)) {
    throw std::invalid_argument("gpu quantize: shape does not fit the block / RHT size");
  }
  const detail::QuantJob j = make_job(f, rows, cols, opt, kernel);
  Quantized q;
  q.format = f;
  q.rows = rows;
  q.cols = cols;
  q.codes.assign(rows * cols, 0);
  const size_t nb = rows * cols / static_cast<size_t>(fi.block);
  if (fi.scale_word32) q.scale_words.assign(nb, 0);
  else q.scales.assign(nb, 0);
  if (be == Backend::Device) detail::device_quantize(j, x.data(), q);
  else if (kernel == QuantKernel::Tuned && !opt.two_d) host_quantize_tuned(j, x.data(), q);
  else host_quantize(j, x.data(), q);
  return q;
}

BenchResult bench_quantize(BlockFormat f, size_t rows, size_t cols, const QuantOptions& opt, int iters,
                           QuantKernel kernel) {
  return detail::bench_quantize(make_job(f, rows, cols, opt, kernel), iters);
}
BenchResult bench_copy(size_t n_bytes, int iters) { return detail::bench_copy(n_bytes, iters); }
uint32_t unit_scale_code(const MmaConfig& cfg) {
  // HiF4's scale word: the E6M2 byte in bits 0-7, level bits (8-23) zero = no extra exponent.
  return encode(*cfg.scale, 1.0, Rounding::Rne, true);
}
BenchResult bench_gemm(const MmaConfig& cfg, Model model, size_t M, size_t N, size_t K, int iters,
                       GemmKernel kernel) {
  return detail::bench_gemm(make_params(cfg, model, M, N, K), kernel, unit_scale_code(cfg), iters);
}

}  // namespace fp4sim::gpu
