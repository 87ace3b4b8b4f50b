// Uses the installed golden library the way a kernel test would: quantize a small tensor to MXFP4,
// check the codes, scales, packing, scale atom and dequantized values against values worked out by
// hand from the format's definition (OCP MX: scale = 2^(floor(log2 amax) - 2), E2M1 elements), run
// one GEMM through the exact model, and, given a suite directory, replay every case of it with
// golden's hardware model through the header-only suite reader. Exit 0 only if everything matched.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <fp4sim/layout.hpp>
#include <fp4sim/mma.hpp>
#include <fp4sim/quant.hpp>
#if FP4SIM_CONSUMER_SUITE_READER
#include <fp4sim/suite_reader.hpp>
#endif

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("FAIL  %s\n", what.c_str());
    ++failures;
  }
}

// E2M1 magnitudes by code 0..7; code | 8 is the negative.
constexpr float kE2M1[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

#if FP4SIM_CONSUMER_SUITE_READER
const fp4sim::ElemFormat* by_name(const fp4sim::MmaKind& k, const std::string& name) {
  for (const fp4sim::ElemFormat* f : k.elems)
    if (f && f->name == name) return f;
  for (const fp4sim::ElemFormat* f : k.scales)
    if (f && f->name == name) return f;
  throw std::runtime_error("unknown type " + name);
}

// Every case of the suite, golden's hardware model against the expected D bits.
void replay(const std::string& dir) {
  const fp4sim::suite::Suite s(dir);
  size_t equal = 0;
  for (size_t i = 0; i < s.cases().size(); ++i) {
    const fp4sim::suite::CaseData d = s.load_case(i);
    const fp4sim::suite::CaseInfo& c = *d.info;
    fp4sim::MmaKindId kid{};
    fp4sim::parse_mma_kind(c.kind, kid);
    const fp4sim::MmaKind& kind = fp4sim::mma_kind(kid);
    const fp4sim::MmaConfig cfg = fp4sim::make_mma_config(kid, by_name(kind, c.elem_a), by_name(kind, c.elem_b),
                                                          by_name(kind, c.scale_type), c.block);
    const std::string model(fp4sim::model_name(kind.hardware_model));
    const std::vector<float> got = fp4sim::gemm(cfg, kind.hardware_model, c.M, c.N, c.K, d.a.codes, d.a.scales,
                                                d.b.codes, d.b.scales, d.c, d.alpha, 1);
    for (const auto& [m, bits] : d.expected) {
      if (m != model) continue;
      bool same = bits.size() == got.size();
      for (size_t j = 0; same && j < got.size(); ++j) {
        uint32_t g;
        std::memcpy(&g, &got[j], 4);
        same = g == bits[j];
      }
      expect(same, "suite case " + c.id + " (" + model + ")");
      equal += same;
    }
  }
  std::printf("suite %s: %zu of %zu cases bit-identical with the %s\n", dir.c_str(), equal, s.cases().size(),
              "kind's hardware model");
}
#endif

}  // namespace

int main(int argc, char** argv) {
  // Two rows of 32 (one MXFP4 block each): row r holds the E2M1 grid times 2^(3 - 5r), both signs.
  const size_t rows = 2, cols = 32;
  std::vector<float> x(rows * cols);
  std::vector<uint8_t> want_codes(rows * cols);
  for (size_t r = 0; r < rows; ++r)
    for (size_t i = 0; i < cols; ++i) {
      const uint8_t code = static_cast<uint8_t>(i % 16);
      want_codes[r * cols + i] = code;
      const float mag = kE2M1[code & 7] * std::ldexp(1.0f, 3 - 5 * static_cast<int>(r));
      x[r * cols + i] = (code & 8) ? -mag : mag;
    }
  const fp4sim::Quantized q = fp4sim::quantize(fp4sim::BlockFormat::Mxfp4, x, rows, cols);

  // amax = 6 * 2^k -> floor(log2) = k + 2, minus emax_elem 2: scale 2^k, UE8M0 code 127 + k.
  expect(q.scales.size() == 2 && q.scales[0] == 127 + 3 && q.scales[1] == 127 - 2, "UE8M0 scale codes");
  size_t same_codes = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    // -0 (code 8) quantizes to +0: the sign bit is set only for v < 0 (docs/formats.md).
    const uint8_t want = want_codes[i] == 8 ? 0 : want_codes[i];
    same_codes += q.codes[i] == want;
  }
  expect(same_codes == x.size(), "element codes (" + std::to_string(same_codes) + " of 64)");
  const std::vector<float> dq = fp4sim::dequantize(q);
  expect(dq == x, "dequantized values equal the (exactly representable) input");

  const std::vector<uint8_t> packed = fp4sim::pack_nibbles_rows(q.codes, rows, cols);
  expect(packed.size() == 32 && packed[1] == ((q.codes[3] << 4) | q.codes[2]), "nibble order: low nibble = even element");
  const std::vector<uint8_t> atom = fp4sim::scales_to_atom(q.scales, rows, 1);
  expect(atom.size() == 512 && atom[0] == q.scales[0] && atom[16] == q.scales[1], "128x4 scale atom: row 1 at byte 16");

  // D = A . B^T through the exact model: A = q (2 x 32), B = one row with 1.0 (E2M1 code 2) where
  // A's elements are positive and 0 elsewhere, unit scale: D[r] = the sum of row r's positive values.
  const fp4sim::MmaConfig cfg = fp4sim::make_mma_config(fp4sim::MmaKindId::Mxf8f6f4, &fp4sim::kE2M1, &fp4sim::kE2M1);
  std::vector<uint8_t> b(cols);
  for (size_t i = 0; i < cols; ++i) b[i] = i % 16 < 8 ? 2 : 0;
  const std::vector<uint8_t> unit = {127};
  const std::vector<float> d = fp4sim::gemm(cfg, fp4sim::Model::Exact, rows, 1, cols, q.codes, q.scales, b, unit, {});
  for (size_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (size_t i = 0; i < cols; ++i) sum += i % 16 < 8 ? x[r * cols + i] : 0.0;
    expect(d[r] == static_cast<float>(sum) && sum > 0, "exact-model dot product of row " + std::to_string(r));
  }
  std::printf("mxfp4 %zux%zu: scales 2^%d and 2^%d, %zu codes, D = %g and %g\n", rows, cols, q.scales[0] - 127,
              q.scales[1] - 127, same_codes, static_cast<double>(d[0]), static_cast<double>(d[1]));

  if (argc > 1) {
#if FP4SIM_CONSUMER_SUITE_READER
    try {
      replay(argv[1]);
    } catch (const std::exception& e) {
      std::printf("FAIL  %s\n", e.what());
      ++failures;
    }
#else
    std::printf("FAIL  this fp4sim install has no suite reader\n");
    ++failures;
#endif
  }
  std::printf("%s\n", failures ? "consumer: FAILED" : "consumer: all checks passed");
  return failures ? 1 : 0;
}
