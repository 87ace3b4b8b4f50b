// The `quant` vector suite (docs/vectors.md#the-quant-suite): float-sourced GEMM cases whose A holds
// what a quantizer gets wrong — exact element ties, NVFP4 block-scale ties, signed zeros, NaN / Inf,
// zero and subnormal blocks, values just below powers of two, extreme per-tensor scales — under the
// options kernels implement (scale rules, SR, RHT, 2D). Every tie row is verified here against the
// SPEC steps (quant_explain.hpp) before it is written.
#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "fp4sim/io/quant_explain.hpp"
#include "fp4sim/io/vectors.hpp"
#include "fp4sim/synth.hpp"
#include "vectors/vectors_internal.hpp"

namespace fp4sim::vectors {

namespace {

float bf16(float x) { return bf16_to_float(float_to_bf16_rne(x)); }

std::string g(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

// One case under construction: rows of A with their notes; K fixed.
struct QCase {
  BlockFormat f;
  size_t K;
  QuantOptions o;
  std::vector<float> a;
  std::vector<std::string> notes;
  void row(std::vector<float> r, std::string note) {
    if (r.size() != K) throw std::logic_error("quant suite: row of " + std::to_string(r.size()) + " values, K = " + std::to_string(K));
    a.insert(a.end(), r.begin(), r.end());
    notes.push_back(std::move(note));
  }
  size_t rows() const { return notes.size(); }
};

// B: a simple tensor quantized with A's options: 1 everywhere, and a small ramp of BF16 values.
std::vector<float> simple_b(size_t K) {
  std::vector<float> b(2 * K, 1.0f);
  for (size_t k = 0; k < K; ++k) b[K + k] = static_cast<float>(static_cast<int>((k * 7) % 13) - 6) * 0.25f;
  return b;
}

// The rows are built (and their ties verified) under TE's convention; the case quantizes them under
// `conv`, and is left out (nullopt) when that library lacks the format or an option of the case.
std::optional<VectorCase> finish(QCase& q, Convention conv, std::string cls, std::string desc) {
  if (q.rows() == 0 || q.rows() > 64 || q.K > 256) throw std::logic_error("quant suite: case too large");
  QuantOptions o = q.o;
  o.convention = conv;
  try {
    check_convention(conv, q.f, o);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  const std::vector<float> b = simple_b(q.K);
  const Quantized qa = quantize(q.f, q.a, q.rows(), q.K, o);
  const Quantized qb = quantize(q.f, b, 2, q.K, o);
  // torchao's and ModelOpt's S_dec = amax / 2688 is NaN / Inf for a tensor holding NaN / Inf, and
  // the manifest's alpha is a JSON number: such cases are left out (TE's S_enc clamp keeps them finite).
  if (!std::isfinite(qa.global_scale) || !std::isfinite(qb.global_scale)) {
    if (conv == Convention::Te) throw std::logic_error("quant suite: a TE global scale is not finite");
    return std::nullopt;
  }
  if (conv != Convention::Te) desc += " (" + std::string(convention_name(conv)) + "'s quantizer)";
  VectorCase v = quantized_case(q.f, q.a, o, qa, b, o, qb, std::move(cls), std::move(desc));
  v.row_notes = q.notes;
  v.col_notes = {"B = 1 everywhere", "B = a ramp of multiples of 0.25 in [-1.5, 1.5]"};
  return v;
}

// Magnitude grid of an element format (HiF4: the integers c = 0..7 of 4|x|*REC*2^-level).
std::vector<double> elem_grid(BlockFormat f) {
  std::vector<double> gr;
  if (f == BlockFormat::Hif4) {
    for (int c = 0; c < 8; ++c) gr.push_back(c);
    return gr;
  }
  const ElemFormat& e = *info(f).elem;
  for (uint32_t c = 0; c <= e.mag_mask(); ++c) {
    const double v = decode(e, c);
    if (std::isfinite(v)) gr.push_back(v);
  }
  std::sort(gr.begin(), gr.end());
  return gr;
}

// The midpoints that matter: all of them for 4- and 6-bit grids; for FP8, the subnormal ones, two per
// binade (one rounding down to even, one up) and the one between the two largest codes.
std::vector<double> tie_targets(BlockFormat f) {
  const std::vector<double> gr = elem_grid(f);
  const ElemFormat& e = f == BlockFormat::Hif4 ? kS1P2 : *info(f).elem;
  const size_t per_binade = size_t{1} << e.mbits;
  std::vector<double> t;
  for (size_t i = 0; i + 1 < gr.size(); ++i) {
    const bool keep = gr.size() <= 40 || i < per_binade || i % per_binade < 2 || i + 2 == gr.size();
    if (keep) t.push_back((gr[i] + gr[i + 1]) / 2);
  }
  return t;
}

// Verifies element c of row r: its scaled value must be exactly `want` (the SPEC steps).
void verify_scaled(const QCase& q, size_t r, size_t c, double want, bool tie) {
  const ElementSteps s = explain_element(q.f, q.o, q.a, q.rows(), q.K, r, c);
  if (s.scaled != std::fabs(want) && s.scaled != want)
    throw std::logic_error("quant suite: " + std::string(info(q.f).name) + " row " + std::to_string(r) + " col " +
                           std::to_string(c) + ": scaled value " + g(s.scaled) + ", constructed " + g(want));
  if (s.tie != tie) throw std::logic_error("quant suite: tie flag of a constructed value is wrong");
}

// Finds an FP32 x with RN(x * inv) == t (NVFP4's scaled value); 0 when there is none nearby.
float nvfp4_preimage(double t, float inv) {
  const float x0 = static_cast<float>(t / static_cast<double>(inv));
  float x = x0;
  for (int i = 0; i < 8; ++i) x = std::nextafter(x, 0.0f);
  for (int i = 0; i < 17; ++i, x = std::nextafter(x, FLT_MAX))
    if (static_cast<double>(x * inv) == t) return x;
  return 0.0f;
}

// --- the case contents ---

// Gaussian activations (outlier channels included) and weights, rounded to BF16.
void rows_bf16(QCase& q, uint64_t seed, size_t n) {
  const std::vector<float> act = llm_activations(n, q.K, seed), w = llm_weights(n, q.K, seed, 0.5);
  for (size_t r = 0; r < n; ++r) {
    std::vector<float> row(q.K);
    const bool weights = r % 4 == 3;
    for (size_t k = 0; k < q.K; ++k) row[k] = bf16(weights ? w[r * q.K + k] : act[r * q.K + k]);
    q.row(row, weights ? "BF16 Gaussian weights" : "BF16 activations (Gaussian, outlier channels)");
  }
}

// Exact element ties (both signs, every binade of the grid, subnormal grid points and the top
// midpoint), and one FP32 ulp of the input either side of each. Per block: one anchor that fixes the
// scale, then tie values.
void rows_ties(QCase& q) {
  const BlockFormatInfo& fi = info(q.f);
  const size_t B = static_cast<size_t>(fi.block), nblk = q.K / B;
  const std::vector<double> targets = tie_targets(q.f);
  const std::vector<double> gr = elem_grid(q.f);
  // Scale parameters per block of a row: MX exponents, HiF4 powers of two, NVFP4 block amaxes.
  const int mx_e[4] = {0, -4, 5, -60};
  const float nv_amax[4] = {6.0f, 6.75f, 3.25f, 0.046875f};  // NVFP4 with tensor amax 2688: S_enc = 1
  struct Slot {
    size_t r, c;
    double scaled;
    bool tie;
  };
  std::vector<Slot> slots;
  const char* variant_name[3] = {"exact ties", "ties minus one FP32 ulp of the input", "ties plus one FP32 ulp of the input"};
  for (int variant = 0; variant < 3; ++variant) {
    // Each value: (target, sign); fill blocks slot by slot, new rows as needed.
    std::vector<std::pair<double, int>> vals;
    for (int sgn : {1, -1})
      for (double t : targets) vals.emplace_back(t, sgn);
    size_t vi = 0;
    while (vi < vals.size()) {
      std::vector<float> row(q.K, 0.0f);
      const size_t r = q.rows();
      std::vector<Slot> row_slots;
      for (size_t j = 0; j < nblk; ++j) {
        const size_t b0 = j * B;
        float inv = 1.0f;
        double to_x = 1.0;  // x = scaled * to_x for MX / HiF4
        if (q.f == BlockFormat::Nvfp4) {
          row[b0] = nv_amax[j % 4];
          const Nvfp4TensorScale ts = nvfp4_tensor_scale(2688.0f, true);
          inv = nvfp4_block_inverse(nvfp4_block_scale_code(nv_amax[j % 4], ts), ts);
        } else if (q.f == BlockFormat::Hif4) {
          const int e = mx_e[j % 4] / 4;
          row[b0] = std::ldexp(7.0f, e);  // SF = BF16(7 * 2^e * BF16(1/7)) = 2^e: REC = 2^-e
          to_x = std::ldexp(0.25, e);     // level 0: 4|x| * 2^-e = c
        } else {
          const int e = mx_e[j % 4];
          row[b0] = static_cast<float>(std::ldexp(gr.back(), e));  // amax = max_elem * 2^e, floor and ceil alike
          to_x = std::ldexp(1.0, e);
        }
        // HiF4: the anchor's 8-group carries level bits; tie values start at the next 8-group.
        for (size_t k = b0 + (q.f == BlockFormat::Hif4 ? 8 : 1); k < b0 + B && vi < vals.size(); ++k) {
          const auto [t, sgn] = vals[vi];
          float x;
          if (q.f == BlockFormat::Nvfp4) {
            // The scaled value RN(x * inv) itself one FP32 ulp either side of the tie.
            const float tv = variant == 0 ? static_cast<float>(t)
                                          : std::nextafter(static_cast<float>(t), variant == 1 ? 0.0f : FLT_MAX);
            x = nvfp4_preimage(tv, inv);
            if (x == 0.0f || x > row[b0]) break;  // no FP32 input lands there with this scale: next block
          } else {
            x = static_cast<float>(t * to_x);
            if (variant == 1) x = std::nextafter(x, 0.0f);
            if (variant == 2) x = std::nextafter(x, FLT_MAX);
          }
          const float xs = sgn < 0 ? -x : x;
          row[k] = xs;
          double scaled = q.f == BlockFormat::Nvfp4 ? static_cast<double>(xs * inv)
                          : q.f == BlockFormat::Hif4 ? 4.0 * std::fabs(static_cast<double>(xs)) / (4.0 * to_x)
                                                     : static_cast<double>(xs) / to_x;
          row_slots.push_back({r, k, scaled, variant == 0});
          ++vi;
        }
      }
      if (row_slots.empty()) throw std::logic_error("quant suite: no tie fits a block");
      char note[160];
      std::snprintf(note, sizeof note, "%s of the %s grid (values %zu..%zu of %zu; each block: anchor = block amax first)",
                    variant_name[variant], q.f == BlockFormat::Hif4 ? "S1P2 c" : fi.elem->name.data(),
                    vi - row_slots.size(), vi - 1, vals.size());
      q.row(row, note);
      slots.insert(slots.end(), row_slots.begin(), row_slots.end());
    }
  }
  if (q.f == BlockFormat::Nvfp4) {
    std::vector<float> row(q.K, 0.0f);
    row[0] = 2688.0f;
    q.row(row, "tensor amax 2688 (S_enc = S_dec = 1), then zeros");
  }
  for (const Slot& s : slots) verify_scaled(q, s.r, s.c, s.scaled, s.tie);
}

// Signed zeros, zero blocks, NaN (Inf separately: it moves NVFP4's tensor scale).
void rows_specials(QCase& q, bool inf) {
  const size_t B = static_cast<size_t>(info(q.f).block), nblk = q.K / B;
  const float nan = std::numeric_limits<float>::quiet_NaN(), pinf = std::numeric_limits<float>::infinity();
  auto normal_block = [&](std::vector<float>& row, size_t j) {
    for (size_t k = 0; k < B; ++k) row[j * B + k] = bf16(0.75f * static_cast<float>(static_cast<int>(k % 9) - 4) + 0.125f);
  };
  if (!inf) {
    std::vector<float> row(q.K);
    for (size_t j = 0; j < nblk; ++j) normal_block(row, j);
    for (size_t k = 1; k < q.K; k += 5) row[k] = -0.0f;
    for (size_t k = 3; k < q.K; k += 7) row[k] = -0.001f;  // rounds to 0 -> -0 code
    q.row(row, "values with -0.0 inputs (every 5th) and tiny negatives that round to 0 (every 7th)");
    row.assign(q.K, 0.0f);
    for (size_t j = 0; j < nblk; ++j) {
      if (j % 2) std::fill(row.begin() + static_cast<long>(j * B), row.begin() + static_cast<long>((j + 1) * B), -0.0f);
    }
    q.row(row, "all-zero blocks: +0 (even blocks), -0 (odd blocks)");
    row.assign(q.K, 0.0f);
    for (size_t j = 0; j < nblk; ++j) normal_block(row, j);
    row[2] = nan;
    if (nblk > 1) row[B] = -nan;
    q.row(row, "a NaN in block 0 (element 2) and a -NaN in block 1 (element 0)");
    row.assign(q.K, -0.0f);
    row[0] = nan;
    q.row(row, "NaN among -0.0");
  } else {
    std::vector<float> row(q.K);
    for (size_t j = 0; j < nblk; ++j) normal_block(row, j);
    row[1] = pinf;
    if (nblk > 1) row[B + 2] = -pinf;
    q.row(row, "+Inf in block 0 (element 1), -Inf in block 1 (element 2)");
    for (size_t j = 0; j < nblk; ++j) normal_block(row, j);
    row[0] = nan;
    row[1] = pinf;
    q.row(row, "NaN and +Inf in block 0");
    for (size_t j = 0; j < nblk; ++j) normal_block(row, j);
    q.row(row, "finite values only (beside rows with Inf)");
  }
}

// Tiny values: FP32 subnormal inputs, UE4M3 subnormal / zero block scales, MX exponents clamped at
// 2^-127, blocks whose codes flush to zero.
void rows_tiny(QCase& q) {
  const size_t B = static_cast<size_t>(info(q.f).block), nblk = q.K / B;
  auto fill = [&](std::vector<float>& row, size_t j, float amax) {
    for (size_t k = 0; k < B; ++k)
      row[j * B + k] = amax * static_cast<float>(static_cast<int>((k * 5) % 11) - 5) / 5.0f;
    row[j * B] = amax;
  };
  std::vector<float> row(q.K);
  for (size_t j = 0; j < nblk; ++j) fill(row, j, 1.0f);
  q.row(row, "unit-scale blocks (tensor amax 1: NVFP4 S_enc = 2688)");
  const float tiny[] = {0x1p-140f, 0x1.8p-147f, 0x1p-149f, 0x1p-126f, 0x1p-20f, 0x1p-16f, 0x1.4p-12f, 0x1p-30f};
  for (size_t t = 0; t < std::size(tiny); t += nblk) {
    std::string note = "block amaxes";
    for (size_t j = 0; j < nblk; ++j) {
      fill(row, j, tiny[(t + j) % std::size(tiny)]);
      note.append(" ").append(g(tiny[(t + j) % std::size(tiny)]));
    }
    q.row(row, note + " (FP32 subnormals; NVFP4: UE4M3 subnormal and zero scales; MX: exponent clamped at 2^-127; "
                      "codes flushing to zero)");
  }
  // One large anchor among tiny values: the small elements of the block flush to zero.
  for (size_t j = 0; j < nblk; ++j) fill(row, j, 0x1p-100f);
  for (size_t j = 0; j < nblk; ++j) row[j * B] = 0.5f;
  q.row(row, "blocks of 2^-100-sized values with one 0.5: the small elements flush to zero");
}

// Values a few ulps below a power of two (a float32 log2 rounds them up to the power), and near FLT_MAX.
void rows_pow2(QCase& q, bool near_max) {
  const size_t B = static_cast<size_t>(info(q.f).block), nblk = q.K / B;
  std::vector<float> row(q.K);
  for (int ulps : {1, 2, 3}) {
    for (size_t j = 0; j < nblk; ++j) {
      float p = std::ldexp(1.0f, static_cast<int>(j) * 3 - 2);
      for (int u = 0; u < ulps; ++u) p = std::nextafter(p, 0.0f);
      for (size_t k = 0; k < B; ++k) row[j * B + k] = p * static_cast<float>((k % 8) + 1) / 8.0f;
      row[j * B + 3] = -p;
    }
    q.row(row, "block j: amax " + std::to_string(ulps) + " FP32 ulp(s) below 2^(3j-2), one element negative");
  }
  if (near_max) {
    const float m = FLT_MAX;
    for (size_t j = 0; j < nblk; ++j)
      for (size_t k = 0; k < B; ++k) row[j * B + k] = (k % 2 ? -m : m) * static_cast<float>((k % 4) + 1) / 4.0f;
    q.row(row, "values up to +-FLT_MAX");
    for (size_t j = 0; j < nblk; ++j)
      for (size_t k = 0; k < B; ++k) row[j * B + k] = std::nextafter(0x1p127f, 0.0f) * static_cast<float>((k % 3) + 1) / 3.0f;
    q.row(row, "block amax one ulp below 2^127");
  }
}

// NVFP4 block-scale ties: block amaxes whose TE scale RN(amax * RN(S_enc * RN(1/6))) is exactly a
// UE4M3 midpoint while another order kernels write gives another code (searched, verified).
void rows_scale_ties(QCase& q, float T) {
  const Nvfp4TensorScale ts = nvfp4_tensor_scale(T, true);
  const float m = ts.s_enc * (1.0f / 6.0f);
  std::vector<double> ue;
  for (uint32_t c = 0; c <= 0x7E; ++c) ue.push_back(decode(kUE4M3, c));
  struct Hit {
    float amax;
    Nvfp4ScaleOrders o;
    double mid;
  };
  std::vector<Hit> hits;
  int cover[3][2] = {};  // [order][subnormal scale]
  for (size_t i = 0; i + 1 < ue.size(); ++i) {
    const double mid = (ue[i] + ue[i + 1]) / 2;
    const bool sub = ue[i + 1] <= 0x1p-6;
    float a = static_cast<float>(mid / static_cast<double>(m));
    for (int s = 0; s < 8; ++s) a = std::nextafter(a, 0.0f);
    for (int s = 0; s < 17; ++s, a = std::nextafter(a, FLT_MAX)) {
      if (static_cast<double>(a * m) != mid || a > T) continue;
      const Nvfp4ScaleOrders o = nvfp4_scale_orders(a, T);
      const bool d[3] = {o.div6_mul != o.te, o.div6_div != o.te, o.amax2688 != o.te};
      bool useful = false;
      for (int k = 0; k < 3; ++k) useful |= d[k] && cover[k][sub] < 3;
      if (!useful) continue;
      for (int k = 0; k < 3; ++k) cover[k][sub] += d[k];
      hits.push_back({a, o, mid});
      break;
    }
  }
  const size_t B = 16, nblk = q.K / B;
  std::vector<float> row(q.K, 0.0f);
  row[0] = T;
  q.row(row, "tensor amax " + g(T) + " (S_enc = " + g(ts.s_enc) + ")");
  for (size_t h = 0; h < hits.size(); h += nblk) {
    std::fill(row.begin(), row.end(), 0.0f);
    std::string note = "block-scale ties (TE / amax/6*S_enc / (amax/6)/S_dec / S_dec=amax/2688 codes):";
    for (size_t j = 0; j < nblk && h + j < hits.size(); ++j) {
      const Hit& x = hits[h + j];
      for (size_t k = 0; k < B; ++k)
        row[j * B + k] = x.amax * static_cast<float>(static_cast<int>((k * 3) % 7) - 3) / 4.0f;
      row[j * B + 5] = -x.amax;
      char buf[96];
      std::snprintf(buf, sizeof buf, " amax %s: %02x/%02x/%02x/%02x;", g(x.amax).c_str(), x.o.te, x.o.div6_mul,
                    x.o.div6_div, x.o.amax2688);
      note += buf;
    }
    q.row(row, note);
    if (q.rows() >= 40) break;
  }
  // Verify with plain FP32 arithmetic: each block's TE value is a midpoint, some other order differs.
  for (size_t r = 1; r < q.rows(); ++r)
    for (size_t j = 0; j < nblk; ++j) {
      float amax = 0.0f;
      for (size_t k = 0; k < B; ++k) amax = std::max(amax, std::fabs(q.a[r * q.K + j * B + k]));
      if (amax == 0.0f) continue;
      const double v = static_cast<double>(amax * m);
      const uint32_t lo = encode(kUE4M3, v, Rounding::Rz, true);
      if (lo >= 0x7E || v - decode(kUE4M3, lo) != decode(kUE4M3, lo + 1) - v)
        throw std::logic_error("quant suite: a scale-tie block is not a UE4M3 midpoint");
      const Nvfp4ScaleOrders o = nvfp4_scale_orders(amax, T);
      if (o.div6_mul == o.te && o.div6_div == o.te && o.amax2688 == o.te)
        throw std::logic_error("quant suite: a scale-tie block does not separate the orders");
    }
}

}  // namespace

std::vector<VectorCase> quant_suite_cases(uint64_t seed, Convention conv) {
  std::vector<VectorCase> out;
  auto add = [&out](std::optional<VectorCase> v) {
    if (v) out.push_back(std::move(*v));
  };
  for (const BlockFormatInfo& fi : all_block_formats()) {
    const BlockFormat f = fi.id;
    const std::string fname(fi.name);
    const bool mx = f != BlockFormat::Nvfp4 && f != BlockFormat::Hif4;
    const size_t K = 128;
    auto make = [&](QuantOptions o) { return QCase{f, K, o, {}, {}}; };
    {
      QCase q = make({});
      rows_bf16(q, seed, 16);
      add(finish(q, conv, "quant-bf16", fname + ": BF16-valued activations (outlier channels) and weights"));
    }
    {
      QCase q = make({});
      rows_ties(q);
      add(finish(q, conv, "quant-ties", fname + ": exact element ties at every binade, both signs, and one "
                                                    "FP32 ulp either side (verified against the SPEC steps)"));
    }
    {
      QCase q = make({});
      rows_specials(q, false);
      add(finish(q, conv, "quant-zeros-nan", fname + ": -0 inputs, negatives rounding to -0, +0 / -0 blocks, NaN"));
    }
    {
      QCase q = make({});
      rows_specials(q, true);
      add(finish(q, conv, "quant-inf", fname + ": +-Inf and NaN inputs in blocks"));
    }
    {
      QCase q = make({});
      std::vector<float> z(K, 0.0f);
      q.row(z, "+0 everywhere");
      std::fill(z.begin(), z.end(), -0.0f);
      q.row(z, "-0 everywhere (all-zero tensor: NVFP4 amax = 0 -> S_enc = 1)");
      std::optional<VectorCase> v =
          finish(q, conv, "quant-zero-tensor", fname + ": an all-zero tensor, nonzero C (D = alpha * C)");
      // Every product is zero, so D = RN(alpha * C) shows alpha = S_dec_A * S_dec_B: the one place
      // an all-zero NVFP4 tensor's S_dec (1, from S_enc = 1) is visible in D.
      if (v) v->c = {1.5f, -0.375f, 0x1.8p-20f, -0x1p100f};
      add(std::move(v));
    }
    {
      QCase q = make({});
      rows_tiny(q);
      add(finish(q, conv, "quant-tiny", fname + ": FP32 subnormal inputs, subnormal / zero / clamped block scales"));
    }
    {
      QCase q = make({});
      rows_pow2(q, mx || f == BlockFormat::Hif4);
      add(finish(q, conv, "quant-pow2", fname + ": block amaxes a few ulps below powers of two" +
                                                (mx || f == BlockFormat::Hif4 ? std::string(", values near FLT_MAX") : "")));
    }
    {
      QuantOptions o;
      o.rounding = Rounding::Sr;
      o.seed = seed ^ 0x5EED0001ull;
      o.stream = 3;
      QCase q = make(o);
      rows_bf16(q, seed + 1, 8);
      add(finish(q, conv, "quant-sr", fname + ": stochastic rounding, seed " + std::to_string(o.seed) + ", stream 3"));
    }
    if (mx) {
      QuantOptions o;
      o.scale_rule = ScaleRule::Ceil;
      QCase q = make(o);
      rows_bf16(q, seed + 2, 8);
      rows_pow2(q, true);
      add(finish(q, conv, "quant-ceil", fname + ": scale rule ceil (RCEIL) on BF16 values, powers of two and FLT_MAX"));
    }
    if (f == BlockFormat::Nvfp4) {
      for (float T : {1.0f, 0.7f}) {
        QCase q = make({});
        rows_scale_ties(q, T);
        add(finish(q, conv, "quant-scale-ties", "nvfp4: block amaxes whose UE4M3 scale is a tie in TE's order and "
                                                    "another code in other orders, tensor amax " + g(T)));
      }
      {
        QCase q = make({});
        std::vector<float> r(K);
        for (size_t k = 0; k < K; ++k) r[k] = static_cast<float>(static_cast<int>(k % 13) - 6) * 1.5e-38f;
        r[7] = 1e-37f;
        q.row(r, "tensor amax 1e-37: 2688 / amax overflows, S_enc = FLT_MAX");
        for (size_t k = 0; k < K; ++k) r[k] = static_cast<float>(static_cast<int>(k % 5) - 2) * 0x1p-140f;
        q.row(r, "FP32 subnormal values beside it");
        add(finish(q, conv, "quant-pts-tiny", "nvfp4: tensor amax so small that the per-tensor scale clamps at FLT_MAX"));
      }
      {
        QCase q = make({});
        std::vector<float> r(K);
        for (size_t k = 0; k < K; ++k) r[k] = (k % 2 ? -1.0f : 1.0f) * FLT_MAX / static_cast<float>(1 + k % 7);
        q.row(r, "values up to FLT_MAX (tensor amax FLT_MAX)");
        for (size_t k = 0; k < K; ++k) r[k] = static_cast<float>(k % 9) * 1e30f;
        q.row(r, "values up to 8e30: their blocks get small scales");
        add(finish(q, conv, "quant-pts-huge", "nvfp4: tensor amax near FLT_MAX"));
      }
      {
        QuantOptions o;
        o.pts = false;
        QCase q = make(o);
        rows_bf16(q, seed + 3, 8);
        rows_tiny(q);
        add(finish(q, conv, "quant-pts-off", "nvfp4: per-tensor scale off (S_enc = S_dec = 1)"));
      }
      {
        QuantOptions o;
        o.rounding = Rounding::Sr;
        o.seed = seed ^ 0xABCDEF12345ull;
        o.stream = 0x10001;
        QCase q = make(o);
        rows_bf16(q, seed + 4, 8);
        rows_ties(q);
        add(finish(q, conv, "quant-sr", "nvfp4: stochastic rounding on BF16 values and ties, seed " +
                                                std::to_string(o.seed) + ", stream 65537"));
      }
      {
        QuantOptions o;
        o.rht = 16;
        o.rht_bf16 = true;
        QCase q = make(o);
        rows_bf16(q, seed + 5, 8);
        add(finish(q, conv, "quant-rht", "nvfp4: RHT 16 with TE's default signs, output rounded to BF16"));
      }
      {
        QuantOptions o;
        o.rht = 16;
        o.rht_seeded = true;
        o.rht_seed = seed ^ 0x9E3779B97F4A7C15ull;
        o.rounding = Rounding::Sr;
        o.seed = seed + 7;
        QCase q = make(o);
        rows_bf16(q, seed + 6, 8);
        add(finish(q, conv, "quant-rht", "nvfp4: RHT 16 with seeded signs, FP32 output, SR"));
      }
      {
        QuantOptions o;
        o.two_d = true;
        QCase q{f, 64, o, {}, {}};
        const std::vector<float> act = llm_activations(24, 64, seed + 8);
        for (size_t r = 0; r < 24; ++r) {
          std::vector<float> row(act.begin() + static_cast<long>(r * 64), act.begin() + static_cast<long>((r + 1) * 64));
          for (float& x : row) x = bf16(x);
          std::string note = "BF16 activations";
          if (r == 5) {
            row[17] = 40.0f;  // tile (0, 1): amax in row 5, not the tile's first row
            note += "; element 17 = 40 (amax of tile (0, 1), in its 6th row)";
          }
          if (r >= 16) note += " (second row tile: 8 rows, 24 is not a multiple of 16)";
          q.row(row, note);
        }
        add(finish(q, conv, "quant-2d", "nvfp4: 16x16 tile scaling, 24 rows"));
      }
    }
    if (f == BlockFormat::Mxfp4) {
      QuantOptions o;
      o.rht = 16;
      o.rht_bf16 = true;
      QCase q = make(o);
      rows_bf16(q, seed + 9, 8);
      add(finish(q, conv, "quant-rht", "mxfp4: RHT 16 with TE's default signs, BF16 output"));
    }
    if (f == BlockFormat::Hif4) {
      for (bool b16 : {false, true}) {
        QuantOptions o;
        o.rht = 64;
        o.rht_seed = seed ^ 0x64;
        o.rht_bf16 = b16;
        QCase q = make(o);
        rows_bf16(q, seed + 10, 8);
        add(finish(q, conv, "quant-rht", std::string("hif4: RHT 64, seeded signs, ") + (b16 ? "BF16" : "FP32") + " output"));
      }
    }
  }
  return out;
}

}  // namespace fp4sim::vectors
