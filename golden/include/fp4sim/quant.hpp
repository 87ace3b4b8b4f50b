// Block quantizers: NVFP4, MX (FP4/FP6/FP8), HiF4 — SPEC §2.
//
// A tensor is viewed as [rows, cols] with cols = the last axis (blocks run along it) and
// rows = the product of the other axes. Codes are one element code per value (unpacked);
// see layout.hpp for nibble packing and the tensor-core scale atom.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "fp4sim/format.hpp"

namespace fp4sim {

enum class BlockFormat : uint8_t { Nvfp4, Mxfp4, Mxfp6E2M3, Mxfp6E3M2, Mxfp8E4M3, Mxfp8E5M2, Hif4 };

// One row per block format: the data every layer (golden, rtl, models, gpu) agrees on.
struct BlockFormatInfo {
  BlockFormat id;
  std::string_view name;     // CLI / manifest name: "nvfp4", "mxfp4", ..., "hif4"
  const ElemFormat* elem;
  const ElemFormat* scale;   // block scale type (HiF4: the E6M2 byte of the 32-bit scale word)
  int block;                 // elements per block scale
  int emax_elem;             // floor(log2(max element)), the OCP MX "emax_elem"
  bool scale_word32;         // HiF4: one uint32 scale word per block
};

const BlockFormatInfo& info(BlockFormat f);

// The element rounding a format actually applies for a requested mode. HiF4's reference
// (To_HiFX) rounds half *up* on the magnitude, i.e. rna; fp4sim treats a request for rne as a
// request for that nearest rounding (so default options reproduce the reference) and reports rna.
// HiF4 has no rz mode: quantize() rejects it.
Rounding effective_rounding(BlockFormat f, Rounding requested);
std::span<const BlockFormatInfo> all_block_formats();
// Parses a CLI name; returns false if unknown.
bool parse_block_format(std::string_view name, BlockFormat& out);

enum class ScaleRule : uint8_t { Floor, Ceil };
std::string_view scale_rule_name(ScaleRule r);
bool parse_scale_rule(std::string_view s, ScaleRule& out);

// Whose quantizer the codes must match (docs/formats.md, "Conventions"): the whole set of choices a
// library's kernel makes that the formats leave open (operation order of the scale, clamps, the
// scale of an all-zero block, the sign of zero, TE's MXFP8 flush). Te is the default.
enum class Convention : uint8_t { Te, Torchao, Modelopt };
std::string_view convention_name(Convention c);  // "te", "torchao", "modelopt"
bool parse_convention(std::string_view s, Convention& out);

struct QuantOptions;

// The choices of one library's quantizer, as data (golden/src/quant_convention.cpp holds the
// rows; docs/formats.md "Conventions" cites the source line of each). All arithmetic FP32 RN.
struct ConventionInfo {
  Convention id;
  std::string_view name;
  uint32_t formats;             // bit (1 << BlockFormat) per format the library quantizes
  bool amax_ignores_nan;        // TE: fmaxf amax; torch.amax / torch.max propagate NaN
  // NVFP4 tensor scale: TE S_dec = 1 / (2688 / amax); torchao, ModelOpt S_dec = amax / 2688.
  enum class TensorScale : uint8_t { EncodeThenReciprocal, AmaxOver2688 } tensor_scale;
  // NVFP4 block scale before the E4M3 cast: TE amax * (S_enc * RN(1/6)); torchao
  // (amax / 6) / S_dec; ModelOpt amax / (6 * S_dec).
  enum class BlockScale : uint8_t { TeProduct, SixthThenDivide, DivideBySixDec } block_scale;
  float zero_block_scale;       // replaces a block scale of exactly 0 (ModelOpt 1.0); 0 = none
  float min_block_scale;        // clamp before the cast (torchao 2^-6, ModelOpt 2^-9); 0 = none
  // NVFP4 element scaling: TE x * min(1 / (s * S_dec), FLT_MAX); torchao x * ((1 / S_dec) / s);
  // ModelOpt x / (s * S_dec).
  enum class ElemScale : uint8_t { TeReciprocal, ReciprocalOfDecThenDivide, Divide } elem_scale;
  bool sign_from_bit;           // code sign = the FP32 sign bit (so -0.0 -> -0); else x < 0
  bool dequant_scale_first;     // dequant q * (s * S_dec) instead of (q * s) * S_dec
  bool decode_neg_zero_positive;  // the library decodes the E2M1 code 0x8 as +0.0
  // MX block scale: Exact = fp4sim's floor / ceil (SPEC 2.1); Torchao = torchao's FLOOR (FP32
  // exponent field, divisor at least 2^-126) and RCEIL (ceil(log2(RN(amax / max))), code 0
  // scales by 1); CeilLog2 = ModelOpt's ceil(log2(RN(amax / max))) clamped to [-127, 127].
  enum class MxScale : uint8_t { Exact, Torchao, CeilLog2 } mx_scale;
  bool mxfp4_ties_down;         // ModelOpt MXFP4: a tie goes to the smaller magnitude
  bool mxfp4_zero_negative;     // ModelOpt MXFP4: every element that is not > 0 gets the sign bit
};
const ConventionInfo& convention_info(Convention c);
// Throws std::invalid_argument (one line) when the convention's library does not quantize f or
// does not have the requested option (rounding other than rne, 2D scaling).
void check_convention(Convention c, BlockFormat f, const QuantOptions& opt);

struct QuantOptions {
  Rounding rounding = Rounding::Rne;
  // The two random sources are separate: seed keys the SR bits only, rht_seed the RHT signs only
  // (give the operands of one GEMM the same rht_seed, or their product is not the rotated one).
  uint64_t seed = 0;          // Sr: Philox key (SPEC §3)
  uint32_t stream = 0;        // Sr: Philox stream (counter word 2)
  ScaleRule scale_rule = ScaleRule::Floor;  // MX only
  Convention convention = Convention::Te;   // whose quantizer (NVFP4, MX) the codes match
  bool pts = true;            // NVFP4 per-tensor scale
  bool two_d = false;         // NVFP4 16x16 tile scaling (one amax per tile)
  int rht = 0;                // random Hadamard size applied along the last axis first; 0 = off
  bool rht_bf16 = false;      // round the RHT output to BF16 (as TE does)
  uint64_t rht_seed = 0;      // sign seed for RHT sizes other than 16 (or when rht_seeded)
  bool rht_seeded = false;    // use seeded signs even for N = 16
  // Worker threads for quantize() (0 = hardware concurrency). Rows are split into fixed-size
  // chunks whose bits do not depend on who computes them: the result is the same for any value.
  unsigned threads = 1;
};

// Scratch memory that quantize() keeps between calls on the same Quantized: NVFP4 holds its block
// maxima there, and with the RHT the transformed tensor (fresh memory costs a page fault per page,
// more than the transform itself). Copies start empty, so two objects never share it.
class QuantWorkspace {
 public:
  QuantWorkspace() = default;
  QuantWorkspace(const QuantWorkspace&) {}
  QuantWorkspace& operator=(const QuantWorkspace&) { return *this; }
  QuantWorkspace(QuantWorkspace&&) noexcept = default;
  QuantWorkspace& operator=(QuantWorkspace&&) noexcept = default;
  // At least `bytes` bytes of slot 0 or 1, uninitialized, 2 MiB-aligned and advised onto huge
  // pages (Linux) when large; kept until a larger request or release().
  void* get(int slot, size_t bytes);
  void release() { buf_[0].reset(), buf_[1].reset(), size_[0] = size_[1] = 0; }

 private:
  struct Free {
    void operator()(void* p) const noexcept;
  };
  std::unique_ptr<void, Free> buf_[2];
  size_t size_[2] = {0, 0};
};

struct Quantized {
  BlockFormat format = BlockFormat::Nvfp4;
  size_t rows = 0, cols = 0;
  std::vector<uint8_t> codes;         // rows * cols element codes
  std::vector<uint8_t> scales;        // rows * cols/block scale codes (8-bit scale formats)
  std::vector<uint32_t> scale_words;  // rows * cols/64 HiF4 scale words
  float global_scale = 1.0f;          // NVFP4 S_dec (1 when PTS is off)
  float amax = 0.0f;                  // NVFP4 tensor amax (after RHT) that produced S_enc
  Convention convention = Convention::Te;  // whose dequantization dequantize() follows
  QuantWorkspace workspace;           // scratch of the reusing quantize() overload, not a result
  size_t num_blocks() const { return rows * (cols / static_cast<size_t>(info(format).block)); }
};

// Quantizes x ([rows, cols], row-major). Throws std::invalid_argument when cols is not a multiple
// of the block (or of the RHT size) or x.size() != rows * cols.
Quantized quantize(BlockFormat f, std::span<const float> x, size_t rows, size_t cols,
                   const QuantOptions& opt = {});
// Same, reusing out's buffers and workspace (no reallocation when the shape repeats) for hot loops.
void quantize(BlockFormat f, std::span<const float> x, size_t rows, size_t cols, const QuantOptions& opt,
              Quantized& out);

// For the tests and benchmarks: which kernels quantize() and the kernels below take. Every level
// gives the same bits; a level the CPU lacks falls back to the best one below it. The default is
// the best the CPU has, capped by the environment variable FP4SIM_QUANT_SIMD=portable|avx2|avx512
// (read once at load; the cap holds for set_quant_simd_level too). Not to be called while another
// thread quantizes.
enum class QuantSimd : uint8_t { Portable, Avx2, Avx512 };
QuantSimd set_quant_simd_level(QuantSimd level);  // returns the previous level
QuantSimd quant_simd_level();                     // the level in use now
// on = false: Portable; on = true: the best the CPU has. Returns whether a vector level was on.
bool set_quant_simd(bool on);

// Values the codes stand for, float32, [rows, cols]. A NaN scale gives NaN for its block.
std::vector<float> dequantize(const Quantized& q);

// Which axis of a row-major [rows, cols] tensor the blocks run along: Last (consecutive values of
// a row: Fprop operands) or First (consecutive rows of one column: what Dgrad and Wgrad need).
enum class BlockAxis : uint8_t { Last, First };

// Fused fake quantization: out = dequantize(quantize(f, x, rows, cols, opt)) bit for bit, without
// handing codes or scales to the caller (on AVX-512 with the TE convention they never leave the
// registers: each block is quantized and decoded in place; elsewhere they pass through per-thread,
// cache-sized chunks). For
// BlockAxis::First it is the transpose of that result on the transposed tensor [cols, rows]: the
// blocks, the RHT, 2D tiles and the SR counter (the flat index) are those of the transposed tensor,
// which is never built. out may be x itself (in place) but must not overlap it otherwise.
// Threads as quantize(): fixed chunks, the same bits for any opt.threads. Throws
// std::invalid_argument (one line) on the inputs quantize() rejects, for the blocked axis.
void fake_quantize(BlockFormat f, const float* x, size_t rows, size_t cols, const QuantOptions& opt, float* out,
                   BlockAxis axis = BlockAxis::Last);

// Decoded scale of one block as the MMA sees it (HiF4: the E6M2 level-1 scale only).
double block_scale_value(const Quantized& q, size_t block_index);

// The per-format kernels, exposed for the tests and the benchmark.
void quantize_mx(BlockFormat f, const float* x, size_t n_blocks, const QuantOptions& opt,
                 uint8_t* codes, uint8_t* scales, uint64_t first_index);
void quantize_hif4(const float* x, size_t n_blocks, const QuantOptions& opt, uint8_t* codes,
                   uint32_t* words, uint64_t first_index);

// NVFP4 pieces (SPEC §2.2), all FP32 round-to-nearest as TransformerEngine computes them.
struct Nvfp4TensorScale {
  float s_enc = 1.0f;
  float s_dec = 1.0f;
};
Nvfp4TensorScale nvfp4_tensor_scale(float amax_tensor, bool pts);
uint8_t nvfp4_block_scale_code(float block_amax, const Nvfp4TensorScale& ts);
float nvfp4_block_inverse(uint8_t scale_code, const Nvfp4TensorScale& ts);

// HiF4 scale word helpers (SPEC §2.3).
inline uint8_t hif4_e6m2(uint32_t w) { return static_cast<uint8_t>(w & 0xFF); }
inline int hif4_level(uint32_t w, int q) {  // 0..2 extra binary exponent for element q of 64
  return static_cast<int>((w >> (8 + q / 8)) & 1u) + static_cast<int>((w >> (16 + q / 4)) & 1u);
}

}  // namespace fp4sim
