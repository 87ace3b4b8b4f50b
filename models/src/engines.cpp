// Functional datapath + per-instruction timing of the tensor-core and cube models (docs/models.md).
//
// Functional: every instruction / tile step calls golden gemm on the operands held in the modeled
// buffers, with C read from the modeled accumulator memory and D written back to it. Golden gemm
// chains instructions along K by feeding D back as C (Blackwell), keeps one FP32 accumulator with one
// RN per 64-group (AscendHif4) or one FMA chain (Fp32Seq): in each case splitting K into steps that
// pass the FP32 accumulator along gives the same bits as one call over the whole K.
//
// Timing: a scoreboard of when each resource (load engine, buffer stage, datapath, accumulator
// buffer, store path) becomes free. The datapath's idle time before each instruction is charged to
// the constraint that released it last, so  cycles = compute cycles + sum of stall causes  exactly.
#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

#include "engine.hpp"

namespace fp4sim::models {

uint64_t Stats::stall(const std::string& cause) const {
  for (const auto& [k, v] : stalls)
    if (k == cause) return v;
  return 0;
}
uint64_t Stats::bytes_of(const std::string& buffer) const {
  for (const auto& [k, v] : bytes)
    if (k == buffer) return v;
  return 0;
}

double element_bytes(const MmaConfig& cfg) {
  // mxf8f6f4 operands occupy one byte per element in shared memory whatever their width.
  return cfg.kind->id == MmaKindId::Mxf8f6f4 ? 1.0 : 0.5;
}
int scale_bytes(const MmaConfig& cfg) { return cfg.kind->scale_word32 ? 4 : 1; }

namespace detail {
namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
uint64_t bytes_for(uint64_t elems, double eb) { return static_cast<uint64_t>(std::ceil(static_cast<double>(elems) * eb)); }

void check_workload(const Workload& w) {
  if (!w.cfg.kind) throw std::invalid_argument("models: workload has no MMA kind");
  validate_mma_config(w.cfg, w.model);
  if (w.model == Model::Exact)
    throw std::invalid_argument(
        "models: the exact model rounds once over the whole K; the engines round per instruction / group");
  const size_t block = static_cast<size_t>(w.cfg.block);
  if (w.M == 0 || w.N == 0 || w.K == 0) throw std::invalid_argument("models: empty GEMM");
  if (w.K % static_cast<size_t>(w.cfg.kind->k) != 0)
    throw std::invalid_argument("models: K must be a multiple of the instruction K (" +
                                std::to_string(w.cfg.kind->k) + ")");
  const size_t nblk = w.K / block;
  if (w.timing_only) return;
  if (w.a.size() != w.M * w.K || w.b.size() != w.N * w.K || w.sa.size() != w.M * nblk ||
      w.sb.size() != w.N * nblk || (!w.c.empty() && w.c.size() != w.M * w.N))
    throw std::invalid_argument("models: operand sizes do not match M, N, K");
}

// Which constraint released the datapath last (ties: the first listed).
// One engine step's arithmetic: the workload's datapath if it has one, else golden gemm.
std::vector<float> datapath(const Workload& w, unsigned threads, const StepOrigin& at, size_t M, size_t N, size_t K,
                            std::span<const uint8_t> a, std::span<const uint32_t> sa, std::span<const uint8_t> b,
                            std::span<const uint32_t> sb, std::span<const float> c) {
  MmaConfig cfg = w.cfg;
  cfg.model = w.model;
  if (w.datapath) {
    std::vector<float> d = w.datapath(cfg, at, M, N, K, a, sa, b, sb, c);
    if (d.size() != M * N) throw std::runtime_error("models: the datapath returned the wrong number of outputs");
    return d;
  }
  return gemm(cfg, w.model, M, N, K, a, sa, b, sb, c, 1.0f, threads);
}

struct Gate {
  uint64_t t = 0;
  int cause = -1;
  void at_least(uint64_t v, int c) {
    if (v > t) {
      t = v;
      cause = c;
    }
  }
};

// Copies rows [r0, r0+rows) x columns [k0, k0+kk) of a [*, K] matrix into dst (rows x kk).
template <class T>
void copy_block(std::span<const T> src, size_t K, size_t r0, size_t rows, size_t k0, size_t kk, T* dst) {
  for (size_t r = 0; r < rows; ++r) std::copy_n(src.data() + (r0 + r) * K + k0, kk, dst + r * kk);
}

// ---------------------------------------------------------------------------------------------
// Tensor core

class TensorCoreEngine final : public Engine {
 public:
  TensorCoreEngine(const TensorCoreParams& p, const Workload& w) : p_(p), w_(w) {
    check_workload(w);
    if (w.cfg.kind->id == MmaKindId::Hif4)
      throw std::invalid_argument("tensor core: kinds mxf4, mxf4nvf4, mxf8f6f4 only (hif4 runs on the cube)");
    if (w.model != Model::Blackwell && w.model != Model::Fp32Seq)
      throw std::invalid_argument("tensor core: numerics model must be blackwell or fp32-seq");
    if (p.tmem_lanes != 128) throw std::invalid_argument("tensor core: tmem_lanes must be 128 (instruction M)");
    if (p.tile_n < 8 || p.tile_n > 256 || p.tile_n % 8 != 0)
      throw std::invalid_argument("tensor core: tile_n must be 8..256 in steps of 8");
    if (w.N % 8 != 0) throw std::invalid_argument("tensor core: N must be a multiple of 8");
    if (p.dot_lanes < 1 || p.pipeline_depth < 0 || p.smem_read_bytes_per_cycle < 1 ||
        p.load_bytes_per_cycle < 1 || p.store_bytes_per_cycle < 1 || p.max_stages < 1 || p.tmem_columns < 1)
      throw std::invalid_argument("tensor core: parameters must be positive");
    kin_ = static_cast<size_t>(w.cfg.kind->k);
    spi_ = kin_ / static_cast<size_t>(w.cfg.block);
    ntile_ = std::min(static_cast<size_t>(p.tile_n), w.N);
    tiles_m_ = ceil_div(w.M, 128);
    tiles_n_ = ceil_div(w.N, ntile_);
    ksteps_ = w.K / kin_;
    eb_ = element_bytes(w.cfg);
    // TMEM: two scale-factor stages (SFA one column, SFB one column per 128 rows of B), then the
    // accumulator buffers (one FP32 column per N), double-buffered when they fit.
    sf_cols_ = 2 * (1 + ceil_div(ntile_, 128));
    const size_t cols = static_cast<size_t>(p.tmem_columns);
    if (cols < sf_cols_ + ntile_)
      throw std::invalid_argument("tensor core: TMEM too small for the scale factors and one accumulator");
    nacc_ = std::min<size_t>(2, (cols - sf_cols_) / ntile_);
    const uint64_t stage_bytes = bytes_for(128 * kin_, eb_) + bytes_for(ntile_ * kin_, eb_) + (128 + ntile_) * spi_;
    stages_ = std::min<uint64_t>(static_cast<uint64_t>(p.max_stages), p.smem_bytes / stage_bytes);
    if (stages_ < 1) throw std::invalid_argument("tensor core: SMEM too small for one operand stage");
    smem_a_.assign(stages_, std::vector<uint8_t>(128 * kin_));
    smem_b_.assign(stages_, std::vector<uint8_t>(ntile_ * kin_));
    tmem_.assign(128 * cols, 0u);
    stage_free_.assign(stages_, 0);
    acc_free_.assign(nacc_, 0);
    d_.assign(w.M * w.N, 0.0f);
    sa_.resize(128 * spi_);
    sb_.resize(ntile_ * spi_);
    cbuf_.resize(128 * ntile_);
  }

  bool done() const override { return tile_ >= tiles_m_ * tiles_n_; }
  double progress() const override { return static_cast<double>(tile_) / static_cast<double>(tiles_m_ * tiles_n_); }

  uint64_t step() override {
    const size_t mt = tile_ / tiles_n_, nt = tile_ % tiles_n_;
    const size_t r0 = mt * 128, rows = std::min<size_t>(128, w_.M - r0);
    const size_t n0 = nt * ntile_, n = std::min(ntile_, w_.N - n0);
    const size_t acc_col = sf_cols_ + (tile_ % nacc_) * ntile_;
    const size_t cols = static_cast<size_t>(p_.tmem_columns);
    const size_t nblk = w_.K / static_cast<size_t>(w_.cfg.block);
    const uint64_t compute = ceil_div(128 * n, static_cast<uint64_t>(p_.dot_lanes));
    const uint64_t P = static_cast<uint64_t>(p_.pipeline_depth);

    // Accumulator init: C (loaded into TMEM) or +0 (enable_input_d = 0 on the first instruction).
    for (size_t r = 0; r < rows && !w_.timing_only; ++r)
      for (size_t j = 0; j < n; ++j)
        tmem_[r * cols + acc_col + j] = w_.c.empty() ? 0u : std::bit_cast<uint32_t>(w_.c[(r0 + r) * w_.N + n0 + j]);
    uint64_t c_load_cycles = 0;
    if (!w_.c.empty()) {
      by_c_ += rows * n * 4;
      c_load_cycles = ceil_div(rows * n * 4, static_cast<uint64_t>(p_.load_bytes_per_cycle));
    }

    for (size_t k = 0; k < ksteps_; ++k, ++instr_) {
      const size_t s = instr_ % stages_;
      const size_t sf_col = (instr_ % 2) * (1 + ceil_div(ntile_, 128));
      if (!w_.timing_only) {
      // ---- functional: TMA copies the K slice into SMEM, scale factors go to TMEM ----
      copy_block(w_.a, w_.K, r0, rows, k * kin_, kin_, smem_a_[s].data());
      copy_block(w_.b, w_.K, n0, n, k * kin_, kin_, smem_b_[s].data());
      for (size_t r = 0; r < rows; ++r) {
        uint32_t word = 0;  // up to four 8-bit scale codes per 32-bit TMEM cell
        for (size_t q = 0; q < spi_; ++q) word |= (w_.sa[(r0 + r) * nblk + k * spi_ + q] & 0xFFu) << (8 * q);
        tmem_[r * cols + sf_col] = word;
      }
      for (size_t j = 0; j < n; ++j) {
        uint32_t word = 0;
        for (size_t q = 0; q < spi_; ++q) word |= (w_.sb[(n0 + j) * nblk + k * spi_ + q] & 0xFFu) << (8 * q);
        tmem_[(j % 128) * cols + sf_col + 1 + j / 128] = word;
      }
      // ---- functional: the MMA reads SMEM operands, TMEM scales and accumulator ----
      for (size_t r = 0; r < rows; ++r)
        for (size_t q = 0; q < spi_; ++q) sa_[r * spi_ + q] = (tmem_[r * cols + sf_col] >> (8 * q)) & 0xFFu;
      for (size_t j = 0; j < n; ++j)
        for (size_t q = 0; q < spi_; ++q)
          sb_[j * spi_ + q] = (tmem_[(j % 128) * cols + sf_col + 1 + j / 128] >> (8 * q)) & 0xFFu;
      for (size_t r = 0; r < rows; ++r)
        for (size_t j = 0; j < n; ++j) cbuf_[r * n + j] = std::bit_cast<float>(tmem_[r * cols + acc_col + j]);
      const std::vector<float> dd =
          datapath(w_, p_.threads, {r0, n0, k * kin_}, rows, n, kin_, std::span<const uint8_t>(smem_a_[s].data(), rows * kin_),
                   std::span<const uint32_t>(sa_.data(), rows * spi_), std::span<const uint8_t>(smem_b_[s].data(), n * kin_),
                   std::span<const uint32_t>(sb_.data(), n * spi_), std::span<const float>(cbuf_.data(), rows * n));
      for (size_t r = 0; r < rows; ++r)
        for (size_t j = 0; j < n; ++j) tmem_[r * cols + acc_col + j] = std::bit_cast<uint32_t>(dd[r * n + j]);

      }
      // ---- timing ----
      const uint64_t a_bytes = bytes_for(rows * kin_, eb_), b_bytes = bytes_for(n * kin_, eb_);
      const uint64_t sf_bytes = (rows + n) * spi_;
      by_load_ += a_bytes + b_bytes + sf_bytes;
      by_smem_write_ += a_bytes + b_bytes + sf_bytes;
      by_smem_read_ += a_bytes + b_bytes + sf_bytes;  // operands by the MMA, scales by tcgen05.cp
      by_tmem_sf_ += 4 * (rows + 128 * ceil_div(n, 128));  // whole 32-bit cells written
      by_tmem_acc_ += 2 * 4 * 128 * n;                     // accumulator read + write per instruction
      const uint64_t load_start = std::max(load_free_, stage_free_[s]);
      const uint64_t load_end = load_start + (k == 0 ? c_load_cycles : 0) +
                                ceil_div(a_bytes + b_bytes + sf_bytes, static_cast<uint64_t>(p_.load_bytes_per_cycle));
      load_free_ = load_end;
      const uint64_t read = ceil_div(a_bytes + b_bytes, static_cast<uint64_t>(p_.smem_read_bytes_per_cycle));
      Gate g{mma_free_, -1};
      g.at_least(load_end, kLoad);
      if (k == 0) g.at_least(acc_free_[tile_ % nacc_], kAccBusy);
      else g.at_least(prev_start_ + P, kDep);
      if (g.cause >= 0) stall_[g.cause] += g.t - mma_free_;
      const uint64_t busy = std::max(compute, read);
      stall_[kSmem] += busy - compute;
      compute_cycles_ += compute;
      prev_start_ = g.t;
      mma_free_ = g.t + busy;
      stage_free_[s] = mma_free_;
    }
    // ---- epilogue: tcgen05.ld the accumulator, store D ----
    for (size_t r = 0; r < rows && !w_.timing_only; ++r)
      for (size_t j = 0; j < n; ++j)
        d_[(r0 + r) * w_.N + n0 + j] = std::bit_cast<float>(tmem_[r * cols + acc_col + j]);
    by_store_ += rows * n * 4;
    by_tmem_acc_ += 4 * rows * n;
    const uint64_t st_start = std::max(store_free_, mma_free_ + P);
    store_free_ = st_start + ceil_div(rows * n * 4, static_cast<uint64_t>(p_.store_bytes_per_cycle));
    acc_free_[tile_ % nacc_] = store_free_;
    ++tile_;
    return mma_free_;
  }

  Result finish() override {
    Result r;
    r.d = std::move(d_);
    Stats& s = r.stats;
    const uint64_t end = std::max(mma_free_, store_free_);
    stall_[kDrain] = end - mma_free_;
    s.cycles = end;
    s.macs = static_cast<uint64_t>(w_.M) * w_.N * w_.K;
    s.instructions = instr_;
    s.compute_cycles = compute_cycles_;
    s.peak_macs_per_cycle = static_cast<double>(p_.dot_lanes) * static_cast<double>(kin_);
    s.stalls = {{"operand_load", stall_[kLoad]},
                {"smem_bandwidth", stall_[kSmem]},
                {"accumulator_dependency", stall_[kDep]},
                {"accumulator_busy", stall_[kAccBusy]},
                {"epilogue_drain", stall_[kDrain]}};
    s.bytes = {{"global_load", by_load_ + by_c_}, {"smem_write", by_smem_write_}, {"smem_read", by_smem_read_},
               {"tmem_scale", by_tmem_sf_},      {"tmem_accumulator", by_tmem_acc_ + by_c_},
               {"global_store", by_store_}};
    return r;
  }

 private:
  enum { kLoad = 0, kSmem, kDep, kAccBusy, kDrain };  // stall_ causes
  TensorCoreParams p_;
  Workload w_;
  size_t kin_ = 0, spi_ = 0, ntile_ = 0, tiles_m_ = 0, tiles_n_ = 0, ksteps_ = 0, sf_cols_ = 0, nacc_ = 0;
  uint64_t stages_ = 0;
  double eb_ = 0;
  std::vector<std::vector<uint8_t>> smem_a_, smem_b_;
  std::vector<uint32_t> tmem_, sa_, sb_;
  std::vector<float> cbuf_, d_;
  std::vector<uint64_t> stage_free_, acc_free_;
  uint64_t load_free_ = 0, mma_free_ = 0, store_free_ = 0, prev_start_ = 0;
  uint64_t by_load_ = 0, by_c_ = 0, by_smem_write_ = 0, by_smem_read_ = 0, by_tmem_sf_ = 0, by_tmem_acc_ = 0,
           by_store_ = 0;
  size_t tile_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Cube

class CubeEngine final : public Engine {
 public:
  CubeEngine(const CubeParams& p, const Workload& w) : p_(p), w_(w) {
    check_workload(w);
    if (w.cfg.kind->id == MmaKindId::Mxf8f6f4)
      throw std::invalid_argument("cube: kinds hif4, mxf4, mxf4nvf4 only");
    if (p.rows < 1 || p.cols < 1 || p.pe_k < 1 || p.pipeline_depth < 0 || p.l0a_load_bytes_per_cycle < 1 ||
        p.l0b_load_bytes_per_cycle < 1 || p.fixpipe_bytes_per_cycle < 1)
      throw std::invalid_argument("cube: parameters must be positive");
    kin_ = static_cast<size_t>(w.cfg.kind->k);
    block_ = static_cast<size_t>(w.cfg.block);
    const size_t pek = static_cast<size_t>(p.pe_k);
    if (pek % kin_ != 0 && kin_ % pek != 0)
      throw std::invalid_argument("cube: pe_k and the instruction K must divide one another");
    // K step granule: whole instructions, whole PE passes, and for AscendHif4 with a delayed
    // rounding point whole rounding groups (so that splitting K keeps golden's rounding points).
    size_t gran = std::max(pek, kin_);
    if (w.model == Model::AscendHif4 && w.cfg.hif4_round_groups != 1) {
      const size_t G = w.cfg.hif4_round_groups == 0 ? w.K / 64 : static_cast<size_t>(w.cfg.hif4_round_groups);
      gran = std::max(gran, 64 * G);
      if (gran % pek != 0) throw std::invalid_argument("cube: rounding group not a multiple of pe_k");
    }
    eb_ = element_bytes(w.cfg);
    sb_bytes_ = static_cast<size_t>(scale_bytes(w.cfg));
    const size_t R = static_cast<size_t>(p.rows), C = static_cast<size_t>(p.cols);
    // Tiles: L0C double-buffered holds m0 x n0 FP32; L0A / L0B double-buffered hold m0 x k0, n0 x k0.
    m0_ = std::min(ceil_div(w.M, R) * R, std::max<size_t>(R, 128 / R * R));
    const size_t half_c = p.l0c_bytes / 2;
    n0_ = std::min(ceil_div(w.N, C) * C, half_c / (4 * m0_) / C * C);
    if (n0_ == 0) throw std::invalid_argument("cube: L0C too small for one output tile");
    auto kfit = [&](size_t buf, size_t rows) {
      const size_t by_elem = static_cast<size_t>(static_cast<double>(buf / 2) / (static_cast<double>(rows) * eb_));
      const size_t by_scale = p.scale_buffer_bytes / 2 / (rows * sb_bytes_) * block_;
      return std::min(by_elem, by_scale) / gran * gran;
    };
    k0_ = std::min({kfit(p.l0a_bytes, m0_), kfit(p.l0b_bytes, n0_), ceil_div(w.K, gran) * gran});
    if (k0_ == 0) throw std::invalid_argument("cube: L0A / L0B / scale buffers too small for one K step");
    tiles_m_ = ceil_div(w.M, m0_);
    tiles_n_ = ceil_div(w.N, n0_);
    ksteps_ = ceil_div(w.K, k0_);
    for (int i = 0; i < 2; ++i) {
      l0a_[i].resize(m0_ * k0_);
      l0b_[i].resize(n0_ * k0_);
      sba_[i].resize(m0_ * k0_ / block_);
      sbb_[i].resize(n0_ * k0_ / block_);
      l0c_[i].resize(m0_ * n0_);
    }
    d_.assign(w.M * w.N, 0.0f);
  }

  bool done() const override { return tile_ >= tiles_m_ * tiles_n_; }
  double progress() const override { return static_cast<double>(tile_) / static_cast<double>(tiles_m_ * tiles_n_); }

  uint64_t step() override {
    const size_t mt = tile_ / tiles_n_, nt = tile_ % tiles_n_;
    const size_t r0 = mt * m0_, rows = std::min(m0_, w_.M - r0);
    const size_t n0 = nt * n0_, n = std::min(n0_, w_.N - n0);
    const size_t cb = tile_ % 2;
    const size_t nblk = w_.K / block_;
    const uint64_t R = static_cast<uint64_t>(p_.rows), C = static_cast<uint64_t>(p_.cols);
    const uint64_t P = static_cast<uint64_t>(p_.pipeline_depth);
    std::vector<float>& acc = l0c_[cb];
    for (size_t r = 0; r < rows && !w_.timing_only; ++r)
      for (size_t j = 0; j < n; ++j) acc[r * n + j] = w_.c.empty() ? 0.0f : w_.c[(r0 + r) * w_.N + n0 + j];
    if (!w_.c.empty()) by_c_ += rows * n * 4;

    for (size_t kt = 0; kt < ksteps_; ++kt, ++instr_) {
      const size_t k0 = kt * k0_, kk = std::min(k0_, w_.K - k0);
      const size_t ab = instr_ % 2;  // L0A / L0B ping-pong half
      const size_t kb0 = k0 / block_, nb = kk / block_;
      if (!w_.timing_only) {
      copy_block(w_.a, w_.K, r0, rows, k0, kk, l0a_[ab].data());
      copy_block(w_.b, w_.K, n0, n, k0, kk, l0b_[ab].data());
      copy_block(w_.sa, nblk, r0, rows, kb0, nb, sba_[ab].data());
      copy_block(w_.sb, nblk, n0, n, kb0, nb, sbb_[ab].data());
      const std::vector<float> dd =
          datapath(w_, p_.threads, {r0, n0, k0}, rows, n, kk, std::span<const uint8_t>(l0a_[ab].data(), rows * kk),
                   std::span<const uint32_t>(sba_[ab].data(), rows * nb), std::span<const uint8_t>(l0b_[ab].data(), n * kk),
                   std::span<const uint32_t>(sbb_[ab].data(), n * nb), std::span<const float>(acc.data(), rows * n));
      std::copy(dd.begin(), dd.end(), acc.begin());

      }
      // ---- timing ----
      const uint64_t a_bytes = bytes_for(rows * kk, eb_) + rows * nb * sb_bytes_;
      const uint64_t b_bytes = bytes_for(n * kk, eb_) + n * nb * sb_bytes_;
      by_l0a_ += bytes_for(rows * kk, eb_);
      by_l0b_ += bytes_for(n * kk, eb_);
      by_sca_ += rows * nb * sb_bytes_;
      by_scb_ += n * nb * sb_bytes_;
      const uint64_t a_start = std::max(a_free_, l0a_free_[ab]);
      a_free_ = a_start + ceil_div(a_bytes, static_cast<uint64_t>(p_.l0a_load_bytes_per_cycle));
      const uint64_t b_start = std::max(b_free_, l0b_free_[ab]);
      b_free_ = b_start + ceil_div(b_bytes, static_cast<uint64_t>(p_.l0b_load_bytes_per_cycle));
      Gate g{cube_free_, -1};
      g.at_least(a_free_, kL0a);
      g.at_least(b_free_, kL0b);
      if (kt == 0) g.at_least(l0c_free_[cb], kL0c);
      else g.at_least(prev_start_ + P, kDep);
      if (g.cause >= 0) stall_[g.cause] += g.t - cube_free_;
      const uint64_t compute = ceil_div(rows, R) * ceil_div(n, C) * ceil_div(kk, static_cast<uint64_t>(p_.pe_k));
      compute_cycles_ += compute;
      by_l0c_ += 2 * 4 * rows * n;  // accumulator read-modify-write per K step
      prev_start_ = g.t;
      cube_free_ = g.t + compute;
      l0a_free_[ab] = l0b_free_[ab] = cube_free_;
    }
    for (size_t r = 0; r < rows && !w_.timing_only; ++r)
      for (size_t j = 0; j < n; ++j) d_[(r0 + r) * w_.N + n0 + j] = acc[r * n + j];
    by_out_ += rows * n * 4;
    const uint64_t fp_start = std::max(fix_free_, cube_free_ + P);
    fix_free_ = fp_start + ceil_div(rows * n * 4, static_cast<uint64_t>(p_.fixpipe_bytes_per_cycle));
    l0c_free_[cb] = fix_free_;
    ++tile_;
    return cube_free_;
  }

  Result finish() override {
    Result r;
    r.d = std::move(d_);
    Stats& s = r.stats;
    const uint64_t end = std::max(cube_free_, fix_free_);
    stall_[kDrain] = end - cube_free_;
    s.cycles = end;
    s.macs = static_cast<uint64_t>(w_.M) * w_.N * w_.K;
    s.instructions = instr_;
    s.compute_cycles = compute_cycles_;
    s.peak_macs_per_cycle = static_cast<double>(p_.rows) * p_.cols * p_.pe_k;
    s.stalls = {{"l0a_load", stall_[kL0a]},
                {"l0b_load", stall_[kL0b]},
                {"accumulator_dependency", stall_[kDep]},
                {"l0c_busy", stall_[kL0c]},
                {"fixpipe_drain", stall_[kDrain]}};
    s.bytes = {{"l0a", by_l0a_},       {"l0b", by_l0b_}, {"scale_a", by_sca_},
               {"scale_b", by_scb_},   {"l0c", by_l0c_ + by_c_}, {"global_store", by_out_}};
    return r;
  }

  size_t m0() const { return m0_; }

 private:
  enum { kL0a = 0, kL0b, kDep, kL0c, kDrain };  // stall_ causes
  CubeParams p_;
  Workload w_;
  size_t kin_ = 0, block_ = 0, sb_bytes_ = 0, m0_ = 0, n0_ = 0, k0_ = 0, tiles_m_ = 0, tiles_n_ = 0, ksteps_ = 0;
  double eb_ = 0;
  std::vector<uint8_t> l0a_[2], l0b_[2];
  std::vector<uint32_t> sba_[2], sbb_[2];
  std::vector<float> l0c_[2], d_;
  uint64_t l0a_free_[2] = {}, l0b_free_[2] = {}, l0c_free_[2] = {};
  uint64_t a_free_ = 0, b_free_ = 0, cube_free_ = 0, fix_free_ = 0, prev_start_ = 0;
  uint64_t by_l0a_ = 0, by_l0b_ = 0, by_sca_ = 0, by_scb_ = 0, by_l0c_ = 0, by_c_ = 0, by_out_ = 0;
  size_t tile_ = 0;
};

}  // namespace

std::unique_ptr<Engine> make_tensor_core(const TensorCoreParams& p, const Workload& w) {
  return std::make_unique<TensorCoreEngine>(p, w);
}
std::unique_ptr<Engine> make_cube(const CubeParams& p, const Workload& w) { return std::make_unique<CubeEngine>(p, w); }

}  // namespace detail
}  // namespace fp4sim::models
