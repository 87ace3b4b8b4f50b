// energy_stream: operand streams for scripts/energy.py. Float operands of one data distribution,
// quantized by golden into the unit's format, one instruction per row, with golden's result of each
// instruction (mma_dot under the model the unit is bit-exact with), so that the gate-level
// simulation that counts the toggles is also checked against golden.
//
// Usage: energy_stream UNIT DIST N SEED OUT
//   UNIT  hif4_pe | nvfp4_pe64 | bs_dot_k64_ue4m3_b16 | bs_dot_k64_ue8m0_b32 | bs_dot_k32 | nvfp4_pts_mul
//   DIST  llm      A = llm_activations (outlier channels 1/128 x50) over 4096 channels, B = llm_weights
//         gaussian A, B standard normal
//         outlier  A = llm_activations with outlier channels 1/8 x100, B = llm_weights
//         sparse   A, B standard normal with each element zero with probability 1/2
//         zeros    A, B all zero
// OUT: one JSON header line {"n","k","s"} then little-endian arrays: a codes uint8[N*K], b codes
// uint8[N*K], sfa uint32[N*S], sfb uint32[N*S], c uint32[N], d uint32[N] (golden's D).
// For nvfp4_pts_mul (K = 1, S = 0): a/b are empty, c holds FP32 accumulators (llm: the FP32 dot of an
// instruction's dequantized operands; gaussian etc. likewise) and d = c * alpha with alpha in sfa[0].
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fp4sim/format.hpp"
#include "fp4sim/mma.hpp"
#include "fp4sim/quant.hpp"
#include "fp4sim/synth.hpp"

using namespace fp4sim;

namespace {

struct UnitCfg {
  BlockFormat fmt;
  MmaConfig cfg;
  int k;
};

UnitCfg unit_cfg(const std::string& u) {
  auto mk = [](MmaKindId kind, const ElemFormat* ea, const ElemFormat* sc, int block, Model m) {
    MmaConfig c = make_mma_config(kind, ea, ea, sc, block);
    c.model = m;
    validate_mma_config(c, m);
    return c;
  };
  if (u == "hif4_pe") return {BlockFormat::Hif4, mk(MmaKindId::Hif4, nullptr, &kE6M2, 64, Model::AscendHif4), 64};
  if (u == "nvfp4_pe64") return {BlockFormat::Nvfp4, mk(MmaKindId::Mxf4Nvf4, nullptr, &kUE4M3, 16, Model::Exact), 64};
  if (u == "bs_dot_k64_ue4m3_b16" || u == "nvfp4_pts_mul")
    return {BlockFormat::Nvfp4, mk(MmaKindId::Mxf4Nvf4, nullptr, &kUE4M3, 16, Model::Blackwell), 64};
  if (u == "bs_dot_k64_ue8m0_b32") return {BlockFormat::Mxfp4, mk(MmaKindId::Mxf4, nullptr, &kUE8M0, 32, Model::Blackwell), 64};
  if (u == "bs_dot_k32") return {BlockFormat::Mxfp4, mk(MmaKindId::Mxf8f6f4, &kE2M1, &kUE8M0, 32, Model::Blackwell), 32};
  throw std::invalid_argument("unknown unit '" + u + "'");
}

// [rows, cols] floats of one operand side (0: A, 1: B) of a distribution.
std::vector<float> operand(const std::string& dist, int side, size_t rows, size_t cols, uint64_t seed) {
  std::vector<float> x(rows * cols, 0.0f);
  if (dist == "zeros") return x;
  if (dist == "llm" || dist == "outlier") {
    if (side == 1) return llm_weights(rows, cols, seed);
    return dist == "llm" ? llm_activations(rows, cols, seed) : llm_activations(rows, cols, seed, 1.0 / 8.0, 100.0);
  }
  if (dist != "gaussian" && dist != "sparse") throw std::invalid_argument("unknown distribution '" + dist + "'");
  const uint32_t stream = 0x454E0000u + static_cast<uint32_t>(side);  // "EN" + side
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(standard_normal(seed, stream, i));
  if (dist == "sparse")  // the sign of another normal draw decides: zero with probability 1/2
    for (size_t i = 0; i < x.size(); ++i)
      if (standard_normal(seed, stream + 0x100u, i) < 0.0) x[i] = 0.0f;
  return x;
}

template <class T>
void put(std::ofstream& os, const std::vector<T>& v) {
  os.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc != 6) throw std::invalid_argument("usage: energy_stream UNIT DIST N SEED OUT");
    const std::string unit = argv[1], dist = argv[2];
    const size_t n = std::stoul(argv[3]);
    const uint64_t seed = std::stoull(argv[4]);
    if (n == 0 || n % 64 != 0) throw std::invalid_argument("N must be a positive multiple of 64");
    const UnitCfg u = unit_cfg(unit);
    const bool pts = unit == "nvfp4_pts_mul";
    const int K = u.k;
    // Instructions are consecutive K-slices of 4096-channel rows (the hidden size of a mid-size LLM
    // layer), so that outlier channels recur at fixed lanes as they do in a GEMM's K loop.
    const size_t cols = 4096, per_row = cols / static_cast<size_t>(K);
    const size_t rows = (n + per_row - 1) / per_row;
    const std::vector<float> xa = operand(dist, 0, rows, cols, seed), xb = operand(dist, 1, rows, cols, seed + 1);
    const Quantized qa = quantize(u.fmt, xa, rows, cols), qb = quantize(u.fmt, xb, rows, cols);
    const BlockFormatInfo& fi = info(u.fmt);
    const int S = K / fi.block;
    std::vector<uint8_t> a(n * K), b(n * K);
    std::vector<uint32_t> sa(n * S), sb(n * S), c(n, 0u), d(n);
    for (size_t i = 0; i < n; ++i) {
      const size_t r = i / per_row, col0 = (i % per_row) * K;
      std::memcpy(&a[i * K], &qa.codes[r * cols + col0], K);
      std::memcpy(&b[i * K], &qb.codes[r * cols + col0], K);
      for (int j = 0; j < S; ++j) {
        const size_t blk = r * (cols / fi.block) + col0 / fi.block + j;
        sa[i * S + j] = fi.scale_word32 ? qa.scale_words[blk] : qa.scales[blk];
        sb[i * S + j] = fi.scale_word32 ? qb.scale_words[blk] : qb.scales[blk];
      }
      d[i] = mma_dot(u.cfg, &a[i * K], &b[i * K], &sa[i * S], &sb[i * S], c[i]);
    }
    std::ofstream os(argv[5], std::ios::binary | std::ios::trunc);
    if (!os) throw std::runtime_error(std::string(argv[5]) + ": cannot write");
    if (pts) {
      // The epilogue multiply: D of the K-loop (here one instruction's D) times the per-tensor
      // scale product S_dec(A) * S_dec(B).
      const float alpha = qa.global_scale * qb.global_scale;
      std::vector<uint32_t> acc = d, al(n, std::bit_cast<uint32_t>(alpha)), out(n);
      for (size_t i = 0; i < n; ++i) out[i] = std::bit_cast<uint32_t>(std::bit_cast<float>(acc[i]) * alpha);
      os << "{\"n\": " << n << ", \"k\": 0, \"s\": 1}\n";
      put(os, al), put(os, al), put(os, acc), put(os, out);
    } else {
      os << "{\"n\": " << n << ", \"k\": " << K << ", \"s\": " << S << "}\n";
      put(os, a), put(os, b), put(os, sa), put(os, sb), put(os, c), put(os, d);
    }
    if (!os) throw std::runtime_error(std::string(argv[5]) + ": write failed");
  } catch (const std::exception& e) {
    std::cerr << "energy_stream: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
