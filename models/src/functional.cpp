// Functional pieces shared by both timing modes: one engine step through the datapath, the output
// quantize unit's arithmetic, and the whole job without timing (analytic mode). Splitting K into
// instructions / K steps that pass the FP32 accumulator along gives golden gemm's bits (Blackwell
// feeds D back as C per instruction, AscendHif4 rounds once per 64-group, Fp32Seq is one FMA chain),
// which the tests check element by element. No SystemC here.
#include <algorithm>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "fp4sim/quant.hpp"
#include "model.hpp"

namespace fp4sim::models::detail {

namespace {

// A persistent fork-join pool for the engine steps: golden gemm starts its threads per call, which
// costs more than a small step computes; here each step splits its rows over workers that live for
// the whole process and call gemm single-threaded on their rows (same bits: rows are independent).
class StepPool {
 public:
  static StepPool& get(unsigned n) {
    static StepPool pool;
    pool.resize(n);
    return pool;
  }
  // Runs fn(0) ... fn(n-1) in parallel (n <= workers + 1), the caller taking part 0.
  void run(unsigned n, const std::function<void(unsigned)>& fn) {
    if (n <= 1) return fn(0);
    {
      std::lock_guard<std::mutex> l(m_);
      fn_ = &fn, parts_ = n, done_ = 0, ++gen_;
    }
    cv_.notify_all();
    fn(0);
    std::unique_lock<std::mutex> l(m_);
    done_cv_.wait(l, [&] { return done_ == n - 1; });
  }
  ~StepPool() {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }

 private:
  void resize(unsigned n) {
    while (workers_.size() + 1 < n) {
      const unsigned id = static_cast<unsigned>(workers_.size()) + 1;
      workers_.emplace_back([this, id] { loop(id); });
    }
  }
  void loop(unsigned id) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(unsigned)>* fn = nullptr;
      {
        std::unique_lock<std::mutex> l(m_);
        cv_.wait(l, [&] { return stop_ || gen_ != seen; });
        if (stop_) return;
        seen = gen_;
        if (id >= parts_) continue;
        fn = fn_;
      }
      (*fn)(id);
      std::lock_guard<std::mutex> l(m_);
      if (++done_ == parts_ - 1) done_cv_.notify_one();
    }
  }
  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(unsigned)>* fn_ = nullptr;
  unsigned parts_ = 0, done_ = 0;
  uint64_t gen_ = 0;
  bool stop_ = false;
};

}  // namespace

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
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  // A small step runs on the calling thread: the vectorised gemm does a 128 x 32 x 64 instruction
  // in microseconds, less than waking a worker costs (kSmallStep MACs: a few hundred microseconds).
  constexpr size_t kSmallStep = size_t{1} << 22;
  const unsigned n = M * N * K < kSmallStep ? 1u : static_cast<unsigned>(std::min<size_t>(M, w.threads ? w.threads : hw));
  if (n <= 1) return gemm(cfg, w.model, M, N, K, a, sa, b, sb, c, 1.0f, 1);
  std::vector<float> d(M * N);
  const size_t nb = K / static_cast<size_t>(cfg.block);
  StepPool::get(n).run(n, [&](unsigned part) {
    const size_t r0 = M * part / n, r1 = M * (part + 1) / n;
    const std::vector<float> rows =
        gemm(cfg, w.model, r1 - r0, N, K, a.subspan(r0 * K, (r1 - r0) * K), sa.subspan(r0 * nb, (r1 - r0) * nb), b, sb,
             c.empty() ? c : c.subspan(r0 * N, (r1 - r0) * N), 1.0f, 1);
    std::copy(rows.begin(), rows.end(), d.begin() + static_cast<std::ptrdiff_t>(r0 * N));
  });
  return d;
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

void add_partials(const std::vector<std::vector<float>>& partials, const Tile& t, std::vector<float>& acc) {
  for (uint32_t p = 0; p + 1 < t.splits; ++p) {
    const std::vector<float>& v = partials[t.index * (t.splits - 1) + p];
    for (size_t e = 0; e < acc.size(); ++e) acc[e] += v[e];
  }
}

void init_quantized_output(const Shape& s, Result& r) {
  if (!s.out_block) return;
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
  // (Without a datapath hook a tensor-core stage is one gemm call: the same bits, see execute().)
  const size_t step_k = p.engine == EngineKind::TensorCore && w.datapath ? s.kin : static_cast<size_t>(m.tile_k);
  std::vector<uint8_t> a, b;
  std::vector<uint32_t> sa, sb;
  std::vector<float> acc;
  // Split-K: the partial tiles of parts 0 .. S-2, [tile][part], until the tile's last part sums them.
  std::vector<std::vector<float>> partials(g.splits > 1 ? g.tiles() * (g.splits - 1) : 0);
  const size_t kt = static_cast<size_t>(m.tile_k);
  for (size_t i = 0; i < g.units(); ++i) {
    const Tile t = g.unit(s, m, i);
    acc.assign(t.rows * t.cols, 0.0f);
    if (s.has_c && !t.partial())
      for (size_t rr = 0; rr < t.rows; ++rr)
        std::copy_n(w.c.data() + (t.r0 + rr) * s.N + t.c0, t.cols, acc.data() + rr * t.cols);
    const size_t k_end = std::min(s.K, t.ks1 * kt);
    for (size_t k0 = t.ks0 * kt; k0 < k_end; k0 += step_k) {
      const size_t kk = std::min(step_k, s.K - k0), nb = kk / s.block;
      a.resize(t.rows * kk), b.resize(t.cols * kk), sa.resize(t.rows * nb), sb.resize(t.cols * nb);
      copy_block(w.a, s.K, t.r0, t.rows, k0, kk, a.data());
      copy_block(w.b, s.K, t.c0, t.cols, k0, kk, b.data());
      copy_block(w.sa, nblk, t.r0, t.rows, k0 / s.block, nb, sa.data());
      copy_block(w.sb, nblk, t.c0, t.cols, k0 / s.block, nb, sb.data());
      acc = run_step(w, {t.r0, t.c0, k0}, t.rows, t.cols, kk, a, sa, b, sb, acc);
    }
    if (t.sums()) add_partials(partials, t, acc);
    if (t.partial()) {
      partials[t.index * (t.splits - 1) + t.split] = acc;
      continue;
    }
    for (size_t rr = 0; rr < t.rows; ++rr)
      std::copy_n(acc.data() + rr * t.cols, t.cols, r.d.data() + (t.r0 + rr) * s.N + t.c0);
    if (s.out_block) quantize_tile(p, s, t, acc.data(), r);
    if (progress) progress(static_cast<double>(i + 1) / static_cast<double>(g.units()));
  }
}

}  // namespace fp4sim::models::detail
