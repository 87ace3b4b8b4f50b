// Stochastic rounding (SPEC §3): unbiasedness over many seeds, and random bits that depend only
// on (seed, stream, element index) — not on how a tensor is split into shards or calls.
//
// Statistics. For a value x between adjacent grid points lo < x < hi (s = hi - lo) the SPEC rule
// q = lo + s * [frac + r/256 >= 1], frac = (x - lo)/s, with r uniform on 0..255 gives q = hi with
// probability p = #{r >= 256(1 - frac)}/256. When frac = k/256 exactly, p = k/256 = frac, so
// E[q] = lo + s*frac = x: no bias at all. q is a two-point variable, so
//   Var q = s^2 p (1 - p) = (hi - x)(x - lo) =: sigma^2,
// and the mean of n independent draws has standard deviation sigma/sqrt(n). The tests pick
// fractions that are multiples of 1/256 and require |mean - x| <= 5 sigma/sqrt(n): a correct
// implementation fails that with probability ~6e-7 per check (and the seeds are fixed, so the
// outcome is deterministic). A biased rule (e.g. RNE, or r/256 replaced by r/255) moves the mean
// by a large multiple of that bound at these n.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "fp4sim/philox.hpp"
#include "fp4sim/quant.hpp"

using namespace fp4sim;

namespace {

struct Probe {
  double lo, hi, x;  // neighbours and the probed value, in dequantized units
};

// Probes at fractions k/256 of the step between lo and hi.
void add_probes(std::vector<Probe>& p, double lo, double hi) {
  for (int k : {1, 37, 128, 200, 255}) p.push_back({lo, hi, lo + (hi - lo) * k / 256.0});
}

// Quantizes `block` (one block, probes placed in slots 1..) for seeds 0..n_seeds-1 and checks
// each probe's mean against the 5-sigma bound; every draw must be lo or hi.
void check_unbiased(BlockFormat f, std::vector<float> block, const std::vector<Probe>& probes, QuantOptions opt,
                    int n_seeds) {
  const size_t B = block.size();
  ASSERT_LE(probes.size() + 1, B);
  std::vector<size_t> slot(probes.size());
  for (size_t i = 0; i < probes.size(); ++i) {
    slot[i] = 1 + i;
    block[slot[i]] = static_cast<float>(probes[i].x);
    ASSERT_EQ(static_cast<double>(block[slot[i]]), probes[i].x);  // probe exactly representable
  }
  std::vector<double> sum(probes.size(), 0.0);
  opt.rounding = Rounding::Sr;
  for (int s = 0; s < n_seeds; ++s) {
    opt.seed = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(s + 1);
    const std::vector<float> d = dequantize(quantize(f, block, 1, B, opt));
    for (size_t i = 0; i < probes.size(); ++i) {
      const double v = static_cast<double>(d[slot[i]]);
      ASSERT_TRUE(v == probes[i].lo || v == probes[i].hi)
          << info(f).name << " x " << probes[i].x << " gave " << v << " not " << probes[i].lo << "/" << probes[i].hi;
      sum[i] += v;
    }
  }
  for (size_t i = 0; i < probes.size(); ++i) {
    const Probe& p = probes[i];
    const double mean = sum[i] / n_seeds;
    const double sigma = std::sqrt((p.hi - p.x) * (p.x - p.lo));
    const double bound = 5.0 * sigma / std::sqrt(static_cast<double>(n_seeds));
    EXPECT_LE(std::fabs(mean - p.x), bound) << info(f).name << " x " << p.x << " (" << p.lo << ", " << p.hi
                                              << ") mean " << mean;
  }
}

constexpr int kSeeds = 6000;

TEST(StochasticRounding, Nvfp4Unbiased) {
  // PTS off, block amax 6: scale 1.0 and inverse 1, so x is rounded on the E2M1 grid as is.
  std::vector<float> b(16, 0.0f);
  b[0] = 6.0f;
  std::vector<Probe> p;
  add_probes(p, 0.0, 0.5);
  add_probes(p, 2.0, 3.0);
  add_probes(p, 4.0, 6.0);
  for (Probe& q : p) {
    if (q.x > 5.0) q = {-q.hi, -q.lo, -q.x};  // some negatives: the rule works on |x|
  }
  p.resize(15);
  QuantOptions opt;
  opt.pts = false;
  check_unbiased(BlockFormat::Nvfp4, b, p, opt, kSeeds);
}

TEST(StochasticRounding, MxUnbiased) {
  {  // MXFP4, amax 6 -> scale 2^0
    std::vector<float> b(32, 0.0f);
    b[0] = 6.0f;
    std::vector<Probe> p;
    add_probes(p, 0.0, 0.5);
    add_probes(p, 1.0, 1.5);
    add_probes(p, 3.0, 4.0);
    add_probes(p, -6.0, -4.0);
    add_probes(p, -0.5, 0.0);
    add_probes(p, 1.5, 2.0);
    p.resize(31);
    check_unbiased(BlockFormat::Mxfp4, b, p, QuantOptions{}, kSeeds);
  }
  {  // MXFP8 E4M3, amax 448 -> scale 2^0: subnormal, normal and top-binade steps
    std::vector<float> b(32, 0.0f);
    b[0] = 448.0f;
    std::vector<Probe> p;
    add_probes(p, 0.0, 0x1p-9);
    add_probes(p, 10.0, 11.0);
    add_probes(p, 192.0, 208.0);
    add_probes(p, -416.0, -384.0);
    add_probes(p, 0.25, 0.28125);
    add_probes(p, 1.875, 2.0);
    p.resize(31);
    check_unbiased(BlockFormat::Mxfp8E4M3, b, p, QuantOptions{}, kSeeds);
  }
  {  // MXFP6 E3M2 under the ceil rule: amax 28 -> scale 2^0 (28 <= 28 * 2^0)
    std::vector<float> b(32, 0.0f);
    b[0] = 28.0f;
    std::vector<Probe> p;
    add_probes(p, 0.0, 0.0625);
    add_probes(p, 5.0, 6.0);
    add_probes(p, 24.0, 28.0);
    add_probes(p, -0.75, -0.625);
    QuantOptions opt;
    opt.scale_rule = ScaleRule::Ceil;
    check_unbiased(BlockFormat::Mxfp6E3M2, b, p, opt, kSeeds);
  }
}

TEST(StochasticRounding, Hif4Unbiased) {
  // x[0] = 7: E6M2 = 1, REC = 1. Probes stay below 2 so groups 1..7 keep level 0 and the grid is
  // c/4; c = floor(4|x| + r/256).
  std::vector<float> b(64, 0.0f);
  b[0] = 7.0f;
  std::vector<Probe> p;
  for (int c = 0; c < 7; ++c) add_probes(p, c / 4.0, (c + 1) / 4.0);
  for (size_t i = 0; i < p.size(); i += 3) p[i] = {-p[i].hi, -p[i].lo, -p[i].x};
  // Slots 1..7 are group 0 (level 2): keep probes out of it.
  std::vector<Probe> placed(7, Probe{0.0, 0.0, 0.0});
  placed.insert(placed.end(), p.begin(), p.end());
  placed.resize(63);
  // check_unbiased fills slots 1..; the zero probes in group 0 stay exactly 0.
  check_unbiased(BlockFormat::Hif4, b, placed, QuantOptions{}, kSeeds);
  const Quantized q = quantize(BlockFormat::Hif4, b, 1, 64);
  EXPECT_EQ(q.scale_words[0] & 0xFFu, 0xC0u);
}

// Same (seed, stream, index) -> same bits, however the tensor is cut into kernel calls.
TEST(StochasticRounding, ShardInvariantMx) {
  std::mt19937_64 rng(8);
  for (BlockFormat f : {BlockFormat::Mxfp4, BlockFormat::Mxfp6E2M3, BlockFormat::Mxfp8E5M2}) {
    const size_t rows = 6, cols = 96, nb = rows * cols / 32;
    std::vector<float> x(rows * cols);
    for (float& v : x) v = static_cast<float>((static_cast<double>(rng() >> 11) * 0x1p-53 - 0.5) * 37.0);
    QuantOptions opt;
    opt.rounding = Rounding::Sr;
    opt.seed = 0xFEEDull;
    opt.stream = 5;
    const Quantized whole = quantize(f, x, rows, cols, opt);
    // (a) two halves; (b) one call per row; (c) one call per block, last block first.
    std::vector<uint8_t> ca(x.size()), sa(nb), cb(x.size()), sb(nb), cc(x.size()), sc(nb);
    const size_t h = nb / 2;
    quantize_mx(f, x.data(), h, opt, ca.data(), sa.data(), 0);
    quantize_mx(f, x.data() + h * 32, nb - h, opt, ca.data() + h * 32, sa.data() + h, h * 32);
    for (size_t r = 0; r < rows; ++r)
      quantize_mx(f, x.data() + r * cols, cols / 32, opt, cb.data() + r * cols, sb.data() + r * cols / 32, r * cols);
    for (size_t b = nb; b-- > 0;) quantize_mx(f, x.data() + b * 32, 1, opt, cc.data() + b * 32, sc.data() + b, b * 32);
    EXPECT_EQ(whole.codes, ca);
    EXPECT_EQ(whole.codes, cb);
    EXPECT_EQ(whole.codes, cc);
    EXPECT_EQ(whole.scales, sa);
    EXPECT_EQ(whole.scales, sb);
    EXPECT_EQ(whole.scales, sc);
    // A shard that claims the wrong first index gets different bits (the index matters).
    std::vector<uint8_t> cw(x.size()), sw(nb);
    quantize_mx(f, x.data(), nb, opt, cw.data(), sw.data(), 1);
    EXPECT_NE(whole.codes, cw);
    // Another stream or seed: different bits.
    QuantOptions o2 = opt;
    o2.stream = 6;
    EXPECT_NE(quantize(f, x, rows, cols, o2).codes, whole.codes);
    o2 = opt;
    o2.seed = opt.seed + 1;
    EXPECT_NE(quantize(f, x, rows, cols, o2).codes, whole.codes);
    // Repeatable.
    EXPECT_EQ(quantize(f, x, rows, cols, opt).codes, whole.codes);
  }
}

TEST(StochasticRounding, ShardInvariantHif4) {
  std::mt19937_64 rng(9);
  const size_t rows = 4, cols = 192, nb = rows * cols / 64;
  std::vector<float> x(rows * cols);
  for (float& v : x) v = static_cast<float>((static_cast<double>(rng() >> 11) * 0x1p-53 - 0.5) * 3.0);
  QuantOptions opt;
  opt.rounding = Rounding::Sr;
  opt.seed = 0xABCDEF;
  opt.stream = 1;
  const Quantized whole = quantize(BlockFormat::Hif4, x, rows, cols, opt);
  std::vector<uint8_t> ca(x.size()), cb(x.size());
  std::vector<uint32_t> wa(nb), wb(nb);
  const size_t h = 5;
  quantize_hif4(x.data(), h, opt, ca.data(), wa.data(), 0);
  quantize_hif4(x.data() + h * 64, nb - h, opt, ca.data() + h * 64, wa.data() + h, h * 64);
  for (size_t b = nb; b-- > 0;) quantize_hif4(x.data() + b * 64, 1, opt, cb.data() + b * 64, wb.data() + b, b * 64);
  EXPECT_EQ(whole.codes, ca);
  EXPECT_EQ(whole.codes, cb);
  EXPECT_EQ(whole.scale_words, wa);
  EXPECT_EQ(whole.scale_words, wb);
  std::vector<uint8_t> cw(x.size());
  std::vector<uint32_t> ww(nb);
  quantize_hif4(x.data(), nb, opt, cw.data(), ww.data(), 64);
  EXPECT_NE(whole.codes, cw);
  QuantOptions o2 = opt;
  o2.stream = 2;
  EXPECT_NE(quantize(BlockFormat::Hif4, x, rows, cols, o2).codes, whole.codes);
}

// NVFP4 has no exposed kernel; its element i of a [rows, cols] tensor must draw sr_byte(seed,
// stream, row*cols + col). Check that directly on a block with scale 1 where each element's
// rounding direction reveals its byte: x = 2 + k/256 rounds up iff k + r >= 256.
TEST(StochasticRounding, Nvfp4UsesFlatElementIndex) {
  const size_t rows = 3, cols = 32;
  std::vector<float> x(rows * cols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i % 16 == 0) ? 6.0f : 2.0f + static_cast<float>(i % 256) / 256.0f;
  QuantOptions opt;
  opt.pts = false;
  opt.rounding = Rounding::Sr;
  opt.seed = 31337;
  opt.stream = 12;
  const Quantized q = quantize(BlockFormat::Nvfp4, x, rows, cols, opt);
  for (size_t i = 0; i < x.size(); ++i) {
    if (i % 16 == 0) continue;
    const unsigned k = static_cast<unsigned>(i % 256);
    const unsigned r = sr_byte(opt.seed, opt.stream, i);
    EXPECT_EQ(q.codes[i], k + r >= 256 ? 5u : 4u) << "element " << i << " r " << r;  // 3 or 2
  }
}

}  // namespace
