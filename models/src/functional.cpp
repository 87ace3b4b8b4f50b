// Functional pieces shared by both timing modes: one engine step through the datapath, the output
// quantize unit's arithmetic, and the whole job without timing (analytic mode). Splitting K into
// instructions / K steps that pass the FP32 accumulator along gives golden gemm's bits (Blackwell
// feeds D back as C per instruction, AscendHif4 rounds once per 64-group, Fp32Seq is one FMA chain),
// which the tests check element by element. No SystemC here.
#include <algorithm>
#include <stdexcept>

#include "fp4sim/quant.hpp"
#include "model.hpp"

namespace fp4sim::models::detail {

std::vector<float> run_step(const Workload& w, const StepOrigin& at, size_t M, size_t N, size_t K,
                            std::span<const uint8_t> a, std::span<const uint32_t> sa, std::span<const uint8_t> b,
                            std::span<const uint32_t> sb, std::span<const float> c) {
  MmaConfig cfg = w.cfg;
  cfg.model = w.model;
  if (w.datapath) {
    std::vector<float> d = w.datapath(cfg, at, M, N, K, a, sa, b, sb, c);
    if (d.size() != M * N) throw std::runtime_error("models: the datapath returned the wrong number of outputs");
    return d;
  }
  return gemm(cfg, w.model, M, N, K, a, sa, b, sb, c, 1.0f, w.threads);
}

namespace {
BlockFormat out_block_format(OutFormat f) {
  switch (f) {
    case OutFormat::Nvfp4: return BlockFormat::Nvfp4;
    case OutFormat::Mxfp8: return BlockFormat::Mxfp8E4M3;
    case OutFormat::Hif4: return BlockFormat::Hif4;
    case OutFormat::None: break;
  }
  throw std::logic_error("models: no output format");
}
}  // namespace

void init_quantized_output(const Params& p, const Shape& s, Result& r) {
  if (!s.out_block) return;
  (void)p;
  r.q_codes.assign(s.M * s.N, 0);
  r.q_scales.assign(s.M * (s.N / s.out_block), 0);
}

void quantize_tile(const Params& p, const Shape& s, const Tile& t, const float* d_tile, Result& r) {
  QuantOptions opt;
  opt.pts = false;  // one tile at a time: no tensor amax (docs/models.md)
  const BlockFormat f = out_block_format(p.out_format);
  const Quantized q = quantize(f, std::span<const float>(d_tile, t.rows * t.cols), t.rows, t.cols, opt);
  const size_t nb = s.N / s.out_block, tb = t.cols / s.out_block;
  for (size_t i = 0; i < t.rows; ++i) {
    std::copy_n(q.codes.data() + i * t.cols, t.cols, r.q_codes.data() + (t.r0 + i) * s.N + t.c0);
    for (size_t j = 0; j < tb; ++j)
      r.q_scales[(t.r0 + i) * nb + t.c0 / s.out_block + j] =
          f == BlockFormat::Hif4 ? q.scale_words[i * tb + j] : q.scales[i * tb + j];
  }
}

void run_functional(const Params& p, const Shape& s, const Mapping& m, const Workload& w, Result& r,
                    const Progress& progress) {
  const Geometry g = geometry(p, s, m);
  const size_t nblk = s.K / s.block;
  // Instruction (tensor core) or K step (cube) size along K.
  const size_t step_k = p.engine == EngineKind::TensorCore ? s.kin : static_cast<size_t>(m.tile_k);
  std::vector<uint8_t> a, b;
  std::vector<uint32_t> sa, sb;
  std::vector<float> acc;
  for (size_t i = 0; i < g.tiles(); ++i) {
    const Tile t = g.tile(s, m, i);
    acc.assign(t.rows * t.cols, 0.0f);
    if (s.has_c)
      for (size_t rr = 0; rr < t.rows; ++rr)
        std::copy_n(w.c.data() + (t.r0 + rr) * s.N + t.c0, t.cols, acc.data() + rr * t.cols);
    for (size_t k0 = 0; k0 < s.K; k0 += step_k) {
      const size_t kk = std::min(step_k, s.K - k0), nb = kk / s.block;
      a.resize(t.rows * kk), b.resize(t.cols * kk), sa.resize(t.rows * nb), sb.resize(t.cols * nb);
      copy_block(w.a, s.K, t.r0, t.rows, k0, kk, a.data());
      copy_block(w.b, s.K, t.c0, t.cols, k0, kk, b.data());
      copy_block(w.sa, nblk, t.r0, t.rows, k0 / s.block, nb, sa.data());
      copy_block(w.sb, nblk, t.c0, t.cols, k0 / s.block, nb, sb.data());
      acc = run_step(w, {t.r0, t.c0, k0}, t.rows, t.cols, kk, a, sa, b, sb, acc);
    }
    for (size_t rr = 0; rr < t.rows; ++rr)
      std::copy_n(acc.data() + rr * t.cols, t.cols, r.d.data() + (t.r0 + rr) * s.N + t.c0);
    if (s.out_block) quantize_tile(p, s, t, acc.data(), r);
    if (progress) progress(static_cast<double>(i + 1) / static_cast<double>(g.tiles()));
  }
}

}  // namespace fp4sim::models::detail
