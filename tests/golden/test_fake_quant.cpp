// fake_quantize against dequantize(quantize(.)) bit for bit: every format, rounding and option,
// both blocked axes, every kernel level, any thread count; and the two seeds kept apart.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "fp4sim/hadamard.hpp"
#include "fp4sim/quant.hpp"

namespace fp4sim {
namespace {

std::vector<QuantSimd> levels() {
  std::vector<QuantSimd> v;
  const QuantSimd was = quant_simd_level();
  for (QuantSimd l : {QuantSimd::Portable, QuantSimd::Avx2, QuantSimd::Avx512}) {
    set_quant_simd_level(l);
    if (quant_simd_level() == l) v.push_back(l);
  }
  set_quant_simd_level(was);
  return v;
}

std::vector<float> transpose(const std::vector<float>& x, size_t rows, size_t cols) {
  std::vector<float> t(x.size());
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) t[j * rows + i] = x[i * cols + j];
  return t;
}

// The definition: dequantize(quantize(.)), on the transposed tensor for BlockAxis::First.
std::vector<float> reference(BlockFormat f, const std::vector<float>& x, size_t rows, size_t cols,
                             const QuantOptions& opt, BlockAxis axis) {
  if (axis == BlockAxis::Last) return dequantize(quantize(f, x, rows, cols, opt));
  return transpose(dequantize(quantize(f, transpose(x, rows, cols), cols, rows, opt)), cols, rows);
}

std::vector<float> fake(BlockFormat f, const std::vector<float>& x, size_t rows, size_t cols, const QuantOptions& opt,
                        BlockAxis axis) {
  std::vector<float> out(x.size(), -7.0f);
  fake_quantize(f, x.data(), rows, cols, opt, out.data(), axis);
  return out;
}

// Index of the first value whose bits differ (NaN payloads included), or -1.
long first_mismatch(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i])) return static_cast<long>(i);
  return -1;
}

// N(0, 1) scaled per 16 values by 2^[-140, 100], with zeros, subnormals, a zero block and, when
// specials, NaN and Inf sprinkled in: scales from the bottom to the top of every format.
std::vector<float> test_input(size_t n, uint32_t seed, bool specials) {
  std::mt19937 g(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::uniform_int_distribution<int> e(-140, 100), pick(0, 999);
  std::vector<float> x(n);
  for (size_t i = 0; i < n; i += 16) {
    const int k = e(g);
    for (size_t j = i; j < std::min(n, i + 16); ++j) x[j] = std::ldexp(nd(g), k % 3 == 0 ? k / 8 : k);
  }
  for (size_t i = 64; i < std::min<size_t>(n, 128); ++i) x[i] = 0.0f;  // an all-zero block
  for (size_t i = 0; i < n; ++i) {
    const int p = pick(g);
    if (p == 0) x[i] = -0.0f;
    else if (p == 1) x[i] = std::numeric_limits<float>::denorm_min() * 3.0f;
    else if (specials && p == 2) x[i] = std::numeric_limits<float>::quiet_NaN();
    else if (specials && p == 3) x[i] = -std::numeric_limits<float>::infinity();
  }
  return x;
}

struct Case {
  std::string name;
  BlockFormat f;
  QuantOptions opt;
};

// Every format with every rounding it has and every option quantize() takes with the TE convention.
std::vector<Case> cases() {
  std::vector<Case> v;
  for (const BlockFormatInfo& fi : all_block_formats()) {
    const std::string n(fi.name);
    std::vector<Rounding> rs{Rounding::Rne, Rounding::Sr};
    if (fi.id != BlockFormat::Hif4) rs.push_back(Rounding::Rz);
    for (Rounding r : rs) {
      QuantOptions o;
      o.rounding = r;
      o.seed = 0x1234567890ULL;
      o.stream = 3;
      const std::string rn = r == Rounding::Rne ? "rne" : r == Rounding::Sr ? "sr" : "rz";
      v.push_back({n + "/" + rn, fi.id, o});
      QuantOptions h = o;
      h.rht = 16;  // TE's fixed signs
      v.push_back({n + "/" + rn + "/rht16", fi.id, h});
      h.rht = 32;  // seeded signs, BF16 output
      h.rht_seed = 99;
      h.rht_bf16 = true;
      v.push_back({n + "/" + rn + "/rht32-bf16", fi.id, h});
      h.rht = 64;
      v.push_back({n + "/" + rn + "/rht64-bf16", fi.id, h});
      h.rht_bf16 = false;
      h.rht_seed = 7;
      v.push_back({n + "/" + rn + "/rht64", fi.id, h});
      if (fi.id == BlockFormat::Nvfp4) {
        QuantOptions p = o;
        p.pts = false;
        v.push_back({n + "/" + rn + "/no-pts", fi.id, p});
        p = o;
        p.two_d = true;
        v.push_back({n + "/" + rn + "/2d", fi.id, p});
        p.rht = 16;
        p.rht_seeded = true;
        p.rht_seed = 5;
        v.push_back({n + "/" + rn + "/2d-rht16-seeded", fi.id, p});
        p.rht = 64;
        v.push_back({n + "/" + rn + "/2d-rht64", fi.id, p});
      } else if (fi.id != BlockFormat::Hif4) {
        QuantOptions c = o;
        c.scale_rule = ScaleRule::Ceil;
        v.push_back({n + "/" + rn + "/rceil", fi.id, c});
      }
    }
  }
  return v;
}

// Shapes: 192 is a multiple of every block and RHT size; 208 rows leave a partial chunk and a
// partial 2D tile along the last axis.
TEST(FakeQuant, EqualsDequantizeOfQuantizeEveryFormatOptionAxisLevel) {
  const std::vector<float> x = test_input(208 * 192, 7, true);
  for (QuantSimd l : levels()) {
    const QuantSimd was = set_quant_simd_level(l);
    for (const Case& c : cases()) {
      for (BlockAxis axis : {BlockAxis::Last, BlockAxis::First}) {
        const size_t rows = axis == BlockAxis::First ? 192 : 208;
        const std::vector<float> xs(x.begin(), x.begin() + static_cast<long>(rows * 192));
        const std::vector<float> want = reference(c.f, xs, rows, 192, c.opt, axis);
        const long bad = first_mismatch(fake(c.f, xs, rows, 192, c.opt, axis), want);
        EXPECT_EQ(bad, -1) << c.name << " axis " << (axis == BlockAxis::First ? "first" : "last") << " level "
                           << static_cast<int>(l) << " at " << bad;
      }
    }
    set_quant_simd_level(was);
  }
}

// Exhaustive over BF16 inputs: all 65536 patterns (NaN and Inf included) as one tensor, in a few
// orders so that every pattern meets different block neighbours.
TEST(FakeQuant, EveryBf16PatternEveryFormat) {
  std::vector<float> x(65536);
  for (uint32_t p = 0; p < 65536; ++p) x[p] = std::bit_cast<float>(p << 16);
  std::vector<float> shuffled = x;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(3));
  for (const std::vector<float>* in : {&x, &shuffled}) {
    for (const BlockFormatInfo& fi : all_block_formats()) {
      for (Rounding r : {Rounding::Rne, Rounding::Sr, Rounding::Rz}) {
        if (fi.id == BlockFormat::Hif4 && r == Rounding::Rz) continue;
        QuantOptions o;
        o.rounding = r;
        o.seed = 11;
        for (BlockAxis axis : {BlockAxis::Last, BlockAxis::First}) {
          EXPECT_EQ(first_mismatch(fake(fi.id, *in, 256, 256, o, axis), reference(fi.id, *in, 256, 256, o, axis)), -1)
              << fi.name << " rounding " << static_cast<int>(r);
        }
      }
    }
  }
}

// Fixed chunks: the bits do not depend on the thread count (SR + RHT, both axes, large enough for
// many chunks per thread).
TEST(FakeQuant, SameBitsForAnyThreadCount) {
  const size_t rows = 512, cols = 640;
  const std::vector<float> x = test_input(rows * cols, 21, false);
  for (const BlockFormatInfo& fi : all_block_formats()) {
    QuantOptions o;
    o.rounding = Rounding::Sr;
    o.seed = 77;
    o.rht = 64;
    o.rht_seed = 8;
    for (BlockAxis axis : {BlockAxis::Last, BlockAxis::First}) {
      o.threads = 1;
      const std::vector<float> one = fake(fi.id, x, rows, cols, o, axis);
      EXPECT_EQ(first_mismatch(one, reference(fi.id, x, rows, cols, o, axis)), -1) << fi.name;
      for (unsigned t : {2u, 3u, 8u, 0u}) {
        o.threads = t;
        EXPECT_EQ(first_mismatch(fake(fi.id, x, rows, cols, o, axis), one), -1) << fi.name << " threads " << t;
      }
    }
  }
}

// The seeds are separate: with the RHT on, fake_quantize(x; seed s, rht_seed r) equals the RHT-free
// fake_quantize of x rotated by the signs of r, under SR seed s. So rht_seed reaches only the
// signs and seed only the SR bits; and each of them does change the result.
TEST(FakeQuant, SrSeedAndRhtSeedAreSeparate) {
  const size_t rows = 64, cols = 256;
  const std::vector<float> x = test_input(rows * cols, 5, false);
  for (const BlockFormatInfo& fi : all_block_formats()) {
    std::vector<std::vector<float>> results;
    for (uint64_t s : {1u, 2u}) {
      for (uint64_t r : {10u, 20u}) {
        QuantOptions o;
        o.rounding = Rounding::Sr;
        o.seed = s;
        o.rht = 64;
        o.rht_seed = r;
        const std::vector<float> got = fake(fi.id, x, rows, cols, o, BlockAxis::Last);
        std::vector<float> rot(x.size());
        rht_apply_to(x, rot, cols, 64, rht_signs(64, true, r));
        QuantOptions plain = o;
        plain.rht = 0;
        plain.rht_seed = 12345;  // unused without the RHT
        EXPECT_EQ(first_mismatch(got, fake(fi.id, rot, rows, cols, plain, BlockAxis::Last)), -1)
            << fi.name << " seed " << s << " rht_seed " << r;
        results.push_back(got);
      }
    }
    EXPECT_NE(first_mismatch(results[0], results[1]), -1) << fi.name << ": rht_seed changes nothing";
    EXPECT_NE(first_mismatch(results[0], results[2]), -1) << fi.name << ": seed changes nothing";
  }
}

// Outputs beyond 32 MiB are written with streaming stores (64-byte aligned out, and the
// 16-byte aligned one of a plain allocation): the same bits.
TEST(FakeQuant, LargeOutputsStream) {
  const size_t rows = 2048, cols = 4096 + 64;  // 32.5 MiB
  const std::vector<float> x = test_input(rows * cols, 13, true);
  float* buf = static_cast<float*>(std::aligned_alloc(64, (rows * cols + 16) * sizeof(float)));
  ASSERT_NE(buf, nullptr);
  for (const BlockFormatInfo& fi : all_block_formats()) {
    QuantOptions o;
    o.rounding = Rounding::Sr;
    o.threads = 2;
    const std::vector<float> want = reference(fi.id, x, rows, cols, o, BlockAxis::Last);
    for (size_t shift : {0u, 4u}) {
      float* out = buf + shift;
      fake_quantize(fi.id, x.data(), rows, cols, o, out, BlockAxis::Last);
      EXPECT_EQ(first_mismatch(std::vector<float>(out, out + rows * cols), want), -1) << fi.name << " shift " << shift;
    }
  }
  std::free(buf);
}

// out == x: the same bits as a separate output.
TEST(FakeQuant, InPlace) {
  const size_t rows = 128, cols = 128;
  const std::vector<float> x = test_input(rows * cols, 9, true);
  for (const BlockFormatInfo& fi : all_block_formats()) {
    for (int rht : {0, 16, 64}) {
      QuantOptions o;
      o.rht = rht;
      o.rounding = Rounding::Sr;
      for (BlockAxis axis : {BlockAxis::Last, BlockAxis::First}) {
        std::vector<float> y = x;
        fake_quantize(fi.id, y.data(), rows, cols, o, y.data(), axis);
        EXPECT_EQ(first_mismatch(y, fake(fi.id, x, rows, cols, o, axis)), -1) << fi.name << " rht " << rht;
      }
    }
  }
}

// Other conventions take the unfused path, with the same definition.
TEST(FakeQuant, OtherConventions) {
  const size_t rows = 64, cols = 128;
  const std::vector<float> x = test_input(rows * cols, 4, false);
  for (Convention cv : {Convention::Torchao, Convention::Modelopt}) {
    for (BlockFormat f : {BlockFormat::Nvfp4, BlockFormat::Mxfp4, BlockFormat::Mxfp8E4M3}) {
      QuantOptions o;
      o.convention = cv;
      try {
        check_convention(cv, f, o);
      } catch (const std::invalid_argument&) {
        continue;  // that library has no such quantizer
      }
      for (BlockAxis axis : {BlockAxis::Last, BlockAxis::First}) {
        EXPECT_EQ(first_mismatch(fake(f, x, rows, cols, o, axis), reference(f, x, rows, cols, o, axis)), -1)
            << convention_name(cv) << " " << info(f).name;
      }
    }
  }
}

// Directed blocks for the fused kernels' corners, 64 values each (one HiF4 block, two MX, four
// NVFP4): exact ties of every element grid (scaled values k/8 and k/16 of the block's maximum);
// maxima whose scales are subnormal or clamped (MX 2^-127, UE4M3 subnormal codes, HiF4's 2^-48);
// FP32 subnormal inputs; one NaN or Inf in an otherwise normal block; all +0, all -0, and tiny
// negatives that round to -0; the top of FP32 (scale saturation).
std::vector<float> corner_blocks() {
  std::vector<float> x;
  auto block = [&](auto&& value) {
    for (int i = 0; i < 64; ++i) x.push_back(value(i));
  };
  for (float top : {6.0f, 448.0f, 57344.0f, 7.5f, 1.0f, 3.0f}) {
    block([&](int i) { return (i % 2 ? -1.0f : 1.0f) * top * static_cast<float>(i % 16 == 0 ? 16 : i % 16) / 16.0f; });
    block([&](int i) { return (i % 3 ? 1.0f : -1.0f) * top * static_cast<float>(i % 8 == 0 ? 8 : i % 8) / 8.0f; });
    block([&](int i) { return top * (0.25f + 0.125f * static_cast<float>(i % 12)) * (i % 5 == 0 ? -1.0f : 1.0f); });
  }
  for (int e : {-149, -140, -130, -127, -126, -120, -60, -50, -48, -40, -20, -9, -6, 0, 15, 16, 100, 127}) {
    block([&](int i) { return std::ldexp(1.0f + static_cast<float>(i % 7) / 8.0f, e) * (i % 4 == 1 ? -1.0f : 1.0f); });
    block([&](int i) { return i == 5 ? std::ldexp(1.5f, e) : std::ldexp(static_cast<float>(i % 4), e - 3); });
  }
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  block([&](int i) { return i == 17 ? nan : static_cast<float>(i) - 30.0f; });
  block([&](int i) { return i == 40 ? -inf : static_cast<float>(i) * 0.1f; });
  block([&](int i) { return i == 3 ? inf : (i == 50 ? nan : 1.0f); });
  block([&](int) { return 0.0f; });
  block([&](int) { return -0.0f; });
  block([&](int i) { return i == 0 ? 100.0f : -std::numeric_limits<float>::denorm_min() * static_cast<float>(i); });
  block([&](int i) { return i % 2 ? -0.0f : std::numeric_limits<float>::max() * (i % 3 ? 1.0f : -1.0f); });
  block([&](int i) { return i == 9 ? -1e-30f : 0.0f; });
  // Maxima equal to the largest element of MXFP6 E3M2 times a power of two (the ceil rule keeps
  // the exponent), normal and FP32-subnormal.
  block([&](int i) { return (i % 2 ? -28.0f : 14.5f) * std::ldexp(1.0f, i % 3 == 0 ? -3 : 5); });
  block([&](int i) { return (i % 2 ? -28.0f : 3.0f) * std::ldexp(1.0f, -135); });
  return x;  // 64 blocks: along the first axis, 64 columns (the fused kernels want multiples of 16)
}

TEST(FakeQuant, DirectedCornerBlocks) {
  std::vector<float> x = corner_blocks();
  const size_t cols = 64, rows = x.size() / cols;
  ASSERT_EQ(rows % 16, 0u);  // along the first axis: the fused kernels (column groups of 16), not the chunk path
  for (QuantSimd l : levels()) {
    const QuantSimd was = set_quant_simd_level(l);
    for (const Case& c : cases()) {
      if (c.opt.rht != 0) continue;  // the RHT would mix the directed values
      EXPECT_EQ(first_mismatch(fake(c.f, x, rows, cols, c.opt, BlockAxis::Last),
                               reference(c.f, x, rows, cols, c.opt, BlockAxis::Last)),
                -1)
          << c.name << " level " << static_cast<int>(l);
      // Along the first axis: the same blocks as columns (64 rows).
      const std::vector<float> t = transpose(x, rows, cols);
      EXPECT_EQ(first_mismatch(fake(c.f, t, cols, rows, c.opt, BlockAxis::First),
                               reference(c.f, t, cols, rows, c.opt, BlockAxis::First)),
                -1)
          << c.name << " first axis level " << static_cast<int>(l);
    }
    set_quant_simd_level(was);
  }
}

// The fused kernels work on groups of sixteen blocks and the chunks on groups of rows: rows of 1,
// 3, 5 and 17 blocks leave partial groups at every row and chunk end, so the SR bytes of every
// element must come from its own flat index there too, on any thread count.
TEST(FakeQuant, SrBitsAtGroupChunkAndThreadBoundaries) {
  for (const BlockFormatInfo& fi : all_block_formats()) {
    for (size_t blocks_per_row : {1u, 3u, 5u, 17u, 0u}) {
      // 0: NVFP4 2D with 17 tiles per row (the other formats skip it)
      if (blocks_per_row == 0 && fi.id != BlockFormat::Nvfp4) continue;
      const size_t cols = (blocks_per_row == 0 ? 17 : blocks_per_row) * static_cast<size_t>(fi.block), rows = 1040;
      const std::vector<float> x = test_input(rows * cols, 31, false);
      QuantOptions o;
      o.rounding = Rounding::Sr;
      o.seed = 0xABCDEF;
      o.stream = 9;
      o.two_d = blocks_per_row == 0;
      const std::vector<float> want = reference(fi.id, x, rows, cols, o, BlockAxis::Last);
      for (unsigned t : {1u, 3u}) {
        o.threads = t;
        EXPECT_EQ(first_mismatch(fake(fi.id, x, rows, cols, o, BlockAxis::Last), want), -1)
            << fi.name << " cols " << cols << " threads " << t;
      }
      // Along the first axis the view rows are the columns: 1040 of them, so the blocked axis is cols.
      const std::vector<float> t = transpose(x, rows, cols);
      o.threads = 3;
      EXPECT_EQ(first_mismatch(fake(fi.id, t, cols, rows, o, BlockAxis::First), transpose(want, rows, cols)), -1)
          << fi.name << " first axis cols " << cols;
    }
  }
}

// RHT-16 inside the fused kernels: groups whose exponent spread certifies exact double sums take
// the in-register transform, the others rht_apply_to. N(0, 1) rows pass; rows with one value 2^-40
// (a spread beyond 25 bits), an Inf or a NaN fail, in groups of their own and beside passing ones.
TEST(FakeQuant, Rht16CertifiedAndFallbackGroups) {
  const size_t rows = 96, cols = 1024;
  std::mt19937 g(17);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(rows * cols);
  for (float& v : x) v = nd(g);
  for (size_t r = 0; r < rows; r += 5) x[r * cols + (r * 37) % cols] = std::ldexp(1.0f, -40);
  x[7 * cols + 100] = std::numeric_limits<float>::infinity();
  x[11 * cols + 900] = std::numeric_limits<float>::quiet_NaN();
  for (size_t i = 20 * cols; i < 21 * cols; ++i) x[i] = 0.0f;  // all zero: certified, +0.0 sums
  for (const BlockFormatInfo& fi : all_block_formats()) {
    for (Rounding r : {Rounding::Rne, Rounding::Sr}) {
      for (int variant = 0; variant < 3; ++variant) {
        QuantOptions o;
        o.rounding = r;
        o.seed = 3;
        o.rht = 16;
        o.rht_bf16 = variant == 1;
        o.rht_seeded = variant == 2;
        o.rht_seed = 44;
        o.threads = 2;
        for (BlockAxis axis : {BlockAxis::Last, BlockAxis::First}) {
          const size_t rr = axis == BlockAxis::First ? cols : rows, cc = axis == BlockAxis::First ? rows : cols;
          const std::vector<float> xs = axis == BlockAxis::First ? transpose(x, rows, cols) : x;
          EXPECT_EQ(first_mismatch(fake(fi.id, xs, rr, cc, o, axis), reference(fi.id, xs, rr, cc, o, axis)), -1)
              << fi.name << " rounding " << static_cast<int>(r) << " variant " << variant;
        }
      }
    }
  }
}

// RHT-64 inside the fused kernels, and (along the first axis) on bands of 64 rows, two MX blocks
// per column: groups certified for exact double sums (spread <= 23 bits) take the in-register
// transform, the others rht_apply_to. N(0, 1) values (magnitudes up to 2^2) with one value of
// 2^-20 per row sit inside the bound; 2^-22 and 2^-40 lie beyond it, as do Inf and NaN; a zero row
// is certified (+0.0 sums). Rows of 1, 3 and 5 tiles leave partial groups of blocks and column
// spans; SR, BF16 output, two sign seeds and 1-3 threads, against dequantize(quantize(.)).
TEST(FakeQuant, Rht64CertifiedAndFallbackGroupsBothAxes) {
  for (size_t tiles : {1u, 3u, 5u, 16u}) {
    const size_t cols = 64 * tiles, rows = 208;  // along the first axis: column spans of 64, 64, 64 and 16
    std::mt19937 g(static_cast<uint32_t>(23 + tiles));
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> x(rows * cols);
    for (float& v : x) v = nd(g);
    for (size_t r = 0; r < rows; r += 3) x[r * cols + (r * 37) % cols] = std::ldexp(1.0f, r % 2 ? -22 : -20);
    for (size_t r = 1; r < rows; r += 7) x[r * cols + (r * 11) % cols] = std::ldexp(-1.0f, -40);
    x[7 * cols + 5] = std::numeric_limits<float>::infinity();
    x[11 * cols + cols - 1] = std::numeric_limits<float>::quiet_NaN();
    for (size_t i = 20 * cols; i < 21 * cols; ++i) x[i] = 0.0f;
    for (const BlockFormatInfo& fi : all_block_formats()) {
      for (Rounding r : {Rounding::Rne, Rounding::Sr}) {
        for (int variant = 0; variant < 3; ++variant) {
          QuantOptions o;
          o.rounding = r;
          o.seed = 3;
          o.stream = 2;
          o.rht = 64;
          o.rht_bf16 = variant == 1;
          o.rht_seed = variant == 2 ? 44 : 0;
          o.threads = 1 + static_cast<unsigned>(variant);
          for (BlockAxis axis : {BlockAxis::Last, BlockAxis::First}) {
            const size_t rr = axis == BlockAxis::First ? cols : rows, cc = axis == BlockAxis::First ? rows : cols;
            const std::vector<float> xs = axis == BlockAxis::First ? transpose(x, rows, cols) : x;
            EXPECT_EQ(first_mismatch(fake(fi.id, xs, rr, cc, o, axis), reference(fi.id, xs, rr, cc, o, axis)), -1)
                << fi.name << " tiles " << tiles << " rounding " << static_cast<int>(r) << " variant " << variant
                << " axis " << (axis == BlockAxis::First ? "first" : "last");
          }
        }
      }
    }
  }
}

TEST(FakeQuant, RejectsShapesQuantizeRejects) {
  std::vector<float> x(48 * 32), out(x.size());
  QuantOptions o;
  // 48 rows are not a multiple of MXFP4's 32 along the first axis; 32 columns are.
  EXPECT_THROW(fake_quantize(BlockFormat::Mxfp4, x.data(), 48, 32, o, out.data(), BlockAxis::First),
               std::invalid_argument);
  EXPECT_NO_THROW(fake_quantize(BlockFormat::Mxfp4, x.data(), 48, 32, o, out.data(), BlockAxis::Last));
  EXPECT_THROW(fake_quantize(BlockFormat::Hif4, x.data(), 48, 32, o, out.data(), BlockAxis::Last),
               std::invalid_argument);
  o.rht = 64;  // does not divide 48 (first axis) nor 32 (last)
  EXPECT_THROW(fake_quantize(BlockFormat::Nvfp4, x.data(), 48, 32, o, out.data(), BlockAxis::First),
               std::invalid_argument);
  EXPECT_THROW(fake_quantize(BlockFormat::Nvfp4, x.data(), 48, 32, o, out.data(), BlockAxis::Last),
               std::invalid_argument);
  o.rht = 0;
  o.rounding = Rounding::Rz;
  EXPECT_THROW(fake_quantize(BlockFormat::Hif4, x.data(), 64, 64, o, out.data(), BlockAxis::Last),
               std::invalid_argument);
}

}  // namespace
}  // namespace fp4sim
