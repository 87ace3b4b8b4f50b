// Quantized GEMMs on float operands and the three GEMMs of one linear layer under a training
// recipe (NVFP4 / MXFP4 / HiF4 / BF16), each measured against an FP64 reference.
// Details, sources and choices: docs/cli.md (`fp4sim gemm`, `fp4sim linear`).
//
// Shapes follow the MMA convention of mma.hpp: every GEMM is D[M,N] = A[M,K] . B[N,K]^T with both
// operands K-major, and block formats quantize along the last axis. A real recipe quantizes each
// operand along the reduction dimension of the GEMM that consumes it, so for a layer with
// X [tokens, in], W [out, in], dY [tokens, out]:
//   Fprop  Y  = X . W^T      A = X    [tokens, in]    B = W    [out, in]      reduce over in
//   Dgrad  dX = dY . W       A = dY   [tokens, out]   B = W^T  [in, out]      reduce over out
//   Wgrad  dW = dY^T . X     A = dY^T [out, tokens]   B = X^T  [in, tokens]   reduce over tokens
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fp4sim/mma.hpp"
#include "fp4sim/quant.hpp"

namespace fp4sim {

// ---- FP64 reference and error metrics ----

// D = C + A . B^T in double, products summed in k order (C empty = 0). Rows over `threads`.
std::vector<double> reference_gemm_f64(std::span<const float> a, std::span<const float> b,
                                       std::span<const float> c, size_t M, size_t N, size_t K,
                                       unsigned threads = 0);

// Error of d against ref (same size), in double. e = d - ref.
//   rel_err  = sqrt(sum e^2 / sum ref^2)      (0 when both sums are 0; +inf when only ref's is)
//   qsnr_db  = 10 log10(sum ref^2 / sum e^2)  (+inf when sum e^2 = 0)
//   max_abs  = max |e|
//   bias     = sum e / sum |ref|              (signed: systematic over- or under-estimation)
// An element with non-finite d and finite ref makes rel_err / max_abs +inf and qsnr_db -inf
// (counted in n_nonfinite); elements with non-finite ref are skipped (n_skipped).
struct GemmError {
  double rel_err = 0, qsnr_db = 0, max_abs = 0, bias = 0;
  size_t n = 0, n_nonfinite = 0, n_skipped = 0;
};
GemmError gemm_error(std::span<const float> d, std::span<const double> ref);

// ---- Quantized GEMM ----

// The MMA configuration a block format runs on: nvfp4 -> mxf4nvf4 (UE4M3, block 16); mxfp4 ->
// mxf4 (UE8M0, 32); mxfp6-* / mxfp8-* -> mxf8f6f4 with that element type on both sides; hif4 ->
// hif4. cfg.model = the kind's hardware model.
MmaConfig mma_config_for(BlockFormat f);

// Transpose of a row-major [rows, cols] matrix.
std::vector<float> transpose(std::span<const float> x, size_t rows, size_t cols);

struct QuantizedGemm {
  Quantized a, b;       // the operands as the MMA consumes them
  MmaConfig cfg;
  Model model = Model::Blackwell;
  float alpha = 1.0f;   // NVFP4: RN(S_dec_A * S_dec_B) (the global scales, CUTLASS's epilogue alpha)
  std::vector<float> acc;  // [M,N] the MMA result with C = +0 (before the epilogue)
  std::vector<float> d;    // [M,N] epilogue: fma(alpha, acc, C) in FP32, one rounding (C empty: RN(alpha*acc))
};

// Quantizes A [M,K] and B [N,K] along K with format f (options per operand), runs `model` (nullopt
// = the kind's hardware model) with C = 0 and applies the epilogue D = fma(alpha, acc, C) (CUTLASS
// LinearCombination with beta = 1: one FP32 rounding; NaN canonical 0x7FFFFFFF). C may be empty.
// Throws std::invalid_argument on sizes that do not match, K not a multiple of the block / the
// instruction K of the model / the RHT size, or a model that cannot run the format's kind.
QuantizedGemm quantized_gemm(BlockFormat f, std::span<const float> a, const QuantOptions& oa,
                             std::span<const float> b, const QuantOptions& ob, std::span<const float> c,
                             size_t M, size_t N, size_t K, std::optional<Model> model = std::nullopt,
                             unsigned threads = 0);

// BF16 GEMM: A and B rounded to BF16 (RNE), products summed exactly with C and rounded once to FP32
// (Model::Exact), or a sequential FP32 FMA chain from C over k (Model::Fp32Seq). Others throw.
std::vector<float> bf16_gemm(std::span<const float> a, std::span<const float> b, std::span<const float> c,
                             size_t M, size_t N, size_t K, Model model = Model::Exact, unsigned threads = 0);

// ---- Linear-layer recipes ----

enum class RecipeFormat : uint8_t { Nvfp4, Mxfp4, Hif4, Bf16 };
std::string_view recipe_format_name(RecipeFormat f);  // "nvfp4", "mxfp4", "hif4", "bf16"

struct LinearRecipe {
  std::string name;                 // preset name, or a label for an ablation row
  RecipeFormat format = RecipeFormat::Nvfp4;
  bool pts = true;                  // nvfp4: per-tensor FP32 scale on every operand
  bool two_d_weights = false;       // nvfp4: 16x16 tile scales for W (Fprop) and W^T (Dgrad)
  bool sr_gradients = false;        // SR for dY (Dgrad) and dY^T (Wgrad); everything else RNE
  int rht_wgrad = 0;                // RHT size on both Wgrad operands (along tokens); 0 = off
  ScaleRule scale_rule = ScaleRule::Floor;  // mxfp4 scale rule
  Convention convention = Convention::Te;   // whose quantizer every operand follows (quant.hpp)
  std::optional<Model> model;       // nullopt = the kind's hardware model (bf16: exact)
  uint64_t seed = 0;                // SR bits and seeded RHT signs (sizes other than 16)
};

// Presets (SPEC §2, issue 3):
//   nvfp4-paper  NVFP4, PTS, 2D weights, SR on gradients, RHT-16 on the Wgrad operands
//   hif4-paper   HiF4, RHT-64 on the Wgrad operands, RNE everywhere
//   mxfp4-paper  MXFP4, ceil scales, SR on gradients, RHT-64 on the Wgrad operands (size: fp4sim choice)
//   bf16         BF16 operands, FP32 accumulation
std::span<const std::string_view> linear_recipe_names();
bool linear_recipe(std::string_view name, LinearRecipe& out);

// Throws std::invalid_argument when a stabilizer does not apply to the format (pts / 2d outside
// nvfp4, scale rule ceil outside mxfp4, anything but the model on bf16) or the RHT size is not a
// power of two >= 2.
void validate_recipe(const LinearRecipe& r);

// The block format of a 4-bit recipe (throws std::invalid_argument for bf16).
BlockFormat recipe_block_format(RecipeFormat f);

// Quantization options of the six GEMM operands of a 4-bit recipe, [gemm] = {A, B} in the order
// of the header comment: RNE everywhere except dY with sr_gradients (SR, streams below); nvfp4 PTS
// on every operand; 2D tiles for W and W^T; the Wgrad RHT (same signs) on dY^T and X^T; the MX
// scale rule on every operand; seed = recipe seed (SR key and seeded RHT signs).
std::array<std::pair<QuantOptions, QuantOptions>, 3> linear_operand_options(const LinearRecipe& r);

// Philox streams of the SR bits (distinct per operand so that the two quantizations of dY draw
// independent bits).
inline constexpr uint32_t kDgradSrStream = 1;
inline constexpr uint32_t kWgradSrStream = 2;

struct LinearInputs {
  size_t m = 0, n = 0, k = 0;   // tokens, out features, in features
  std::vector<float> x;         // [m, k]
  std::vector<float> w;         // [n, k]
  std::vector<float> dy;        // [m, n]
};
// x = llm_activations(m, k, seed), w = llm_weights(n, k, seed), dy = llm_gradients(m, n, seed)
// (synth.hpp defaults: 1/128 outlier channels x50, weight stddev 0.02, gradient scale 1e-4).
LinearInputs synth_linear_inputs(size_t m, size_t n, size_t k, uint64_t seed);

enum LinearGemmId : uint8_t { kFprop = 0, kDgrad = 1, kWgrad = 2 };
std::string_view linear_gemm_name(LinearGemmId g);  // "fprop", "dgrad", "wgrad"

// The three FP64 references (independent of the recipe; compute once for an ablation table).
struct LinearReference {
  std::array<std::vector<double>, 3> d;  // fprop [m,n], dgrad [m,k], wgrad [n,k]
};
LinearReference linear_reference(const LinearInputs& in, unsigned threads = 0);

struct LinearGemmResult {
  size_t M = 0, N = 0, K = 0;  // output [M,N], reduction K
  float alpha = 1.0f;
  std::vector<float> d;
  GemmError err;
};
struct LinearResult {
  LinearRecipe recipe;
  Model model = Model::Blackwell;  // the model that ran
  std::array<LinearGemmResult, 3> gemm;
};

// Throws std::invalid_argument from validate_recipe, or when a reduction dimension (k for Fprop,
// n for Dgrad, m for Wgrad) is not a multiple of the instruction K / block / RHT size.
LinearResult run_linear(const LinearRecipe& r, const LinearInputs& in, const LinearReference& ref,
                        unsigned threads = 0);

// The ablation table: each paper recipe, then that recipe with one stabilizer switched (NVFP4
// without PTS / 2D / SR / RHT and with none of them; HiF4 with SR, without RHT, with RHT-16; MXFP4
// with floor scales, without SR, without RHT), and BF16 first. Every row carries `seed`.
std::vector<LinearRecipe> ablation_recipes(uint64_t seed = 0);

}  // namespace fp4sim
