// Bit-accurate dot-product / MMA / GEMM numerics models — SPEC §4, details in docs/numerics.md.
//
// Every model consumes element codes and scale codes and returns FP32 bits:
//   Exact       exact sum of all products plus C, one round-to-nearest-even to FP32.
//   Fp32Seq     CUTLASS host reference: dequantize each element to FP32 (element x scale, RN), then
//               sequential FP32 FMA over k in order, starting from C.
//   Blackwell   NVIDIA tcgen05 / mma.sync block_scale as MMA-Sim models it (grouped or fused sums,
//               alignment to the largest exponent with 35 / 25 fractional bits, truncation to FP32).
//   AscendHif4  fp4sim's documented HiF4 cube model: exact 64-element group sums, one FP32 RN per
//               group (the rounding point is a parameter for what-if studies).
//   Custom      a datapath described by parameters (Numerics, below): the four models above are
//               presets of it (preset_numerics), so a variant is a changed parameter, not new code.
// An MMA "kind" is data (one row of a table): element formats, scale format, block, instruction K,
// group size and alignment fraction bits. Adding a kind = adding a row.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fp4sim/exact.hpp"
#include "fp4sim/format.hpp"

namespace fp4sim {

enum class Model : uint8_t { Exact, Fp32Seq, Blackwell, AscendHif4, Custom };
// "exact", "fp32-seq", "blackwell", "ascend-hif4", "custom". parse_model takes the four presets
// only: a custom model is a preset plus parameters (parse_numerics).
std::string_view model_name(Model m);
bool parse_model(std::string_view s, Model& out);

// An MMA datapath's numerics as parameters (docs/numerics.md, "Numerics a designer can set").
// One instruction of `k` products: decode every element and scale exactly; form each product
// (optionally from FP32-dequantized operands, optionally rounded to FP32); sum `group` consecutive
// products exactly into one term; then either
//   window  align every term (and C, with c = window) to the largest alignment exponent, keep
//           frac_bits bits below it (each term cut by term_round), add exactly, convert the sum to
//           FP32 by out_round (c = after: then add C with one FP32 RN), or
//   fp32    add the terms to an FP32 accumulator that starts at C, one RN per `round_every` terms.
// D of one instruction is C of the next along K. Specials follow IEEE arithmetic on the exact
// operands (NaN in, Inf * 0 and +Inf + -Inf give NaN; an Inf operand gives Inf); NaN results are
// the canonical 0x7FFFFFFF.
struct Numerics {
  enum class Dequant : uint8_t { Exact, Fp32 };    // element x scale exact, or RN to FP32 first
  enum class Products : uint8_t { Exact, Fp32 };   // each product exact, or RN to FP32
  enum class Accumulate : uint8_t { Window, Fp32 };
  enum class Align : uint8_t { Scale, Product };   // a term's alignment exponent: its block scales'
                                                   // exponents, or its largest product's exponent
  enum class Round : uint8_t { Rz, Rne };
  enum class CPlace : uint8_t { Window, After };   // window: C is one more aligned term
  enum class SignedZero : uint8_t { Ieee, Plus };  // an exact zero sum: IEEE's rule, or always +0
  int k = 0;      // products per instruction; 0 = the whole K is one instruction
  int group = 1;  // products summed exactly into one term (a group > 1 is an integer tree: its zero is +0)
  Dequant dequant = Dequant::Exact;
  Products products = Products::Exact;
  Accumulate accumulate = Accumulate::Window;
  int frac_bits = 0;  // window: bits kept below the largest alignment exponent, 1..64; 0 = unbounded
  Align align = Align::Product;
  Round term_round = Round::Rz;   // window: how each term (and C) is cut to frac_bits
  Round out_round = Round::Rne;   // window: the exact window sum to FP32
  CPlace c = CPlace::Window;
  int round_every = 1;            // fp32: terms summed exactly per RN add; 0 = all of the instruction
  bool flush_subnormals = false;  // every FP32 C, product, accumulator and D that is subnormal -> +-0
  SignedZero signed_zero = SignedZero::Ieee;
  bool operator==(const Numerics&) const = default;
};

enum class MmaKindId : uint8_t { Mxf4, Mxf4Nvf4, Mxf8f6f4, Hif4 };

// One row per MMA kind.
struct MmaKind {
  MmaKindId id;
  std::string_view name;  // "mxf4", "mxf4nvf4", "mxf8f6f4", "hif4"
  int k;                  // instruction K (products per output element per instruction)
  // Blackwell: products summed exactly before the block scales are applied. group < k: each group
  // sum is multiplied by its scales and becomes one aligned term (mxf4 / mxf4nvf4, 16); group == k:
  // one fused sum where the scales only add exponents (mxf8f6f4). HiF4: the 64-element group.
  int group;
  int frac_bits;  // Blackwell: fractional bits kept below the largest exponent (35 / 25); 0 = n/a
  std::array<const ElemFormat*, 5> elems;   // allowed element formats (nullptr-padded), [0] default
  std::array<const ElemFormat*, 2> scales;  // allowed scale formats (nullptr-padded), [0] default
  std::array<int, 2> blocks;                // allowed block sizes (0-padded), [0] default
  bool scale_word32;                        // HiF4: scale = 32-bit word (E6M2 + level bits)
  Model hardware_model;                     // the model of the hardware that runs this kind
};

const MmaKind& mma_kind(MmaKindId id);
std::span<const MmaKind> all_mma_kinds();
bool parse_mma_kind(std::string_view name, MmaKindId& out);

struct MmaConfig {
  const MmaKind* kind = nullptr;
  const ElemFormat* elem_a = nullptr;
  const ElemFormat* elem_b = nullptr;
  const ElemFormat* scale = nullptr;
  int block = 0;
  Model model = Model::Blackwell;  // used by mma_dot (gemm takes the model as an argument)
  // AscendHif4 only: the exact group terms are added to the FP32 accumulator with one RN every
  // this many 64-element groups (1 = every group, the documented default); 0 = once at the end.
  int hif4_round_groups = 1;
  // Model::Custom only: the datapath's parameters (validate_mma_config checks them).
  Numerics numerics{};
};

// A preset model as parameters for this configuration's kind: Custom with preset_numerics(cfg, m)
// gives the bits of model m (blackwell: the kind's K, group and frac_bits; ascend-hif4:
// round_every = cfg.hif4_round_groups). Throws std::invalid_argument if m cannot run the kind.
Numerics preset_numerics(const MmaConfig& cfg, Model m);
// Applies "key=value,key=value" to n (keys and values as format_numerics writes them, e.g.
// "frac_bits=25,term_round=rne"); throws std::invalid_argument naming the bad key or value.
void parse_numerics(std::string_view spec, Numerics& n);
// Every parameter as "k=64,group=16,dequant=exact,...": parse_numerics of it gives n back.
std::string format_numerics(const Numerics& n);

// A config with the kind's defaults for every argument left null / 0 (model: the kind's hardware
// model). Throws std::invalid_argument if an argument is not allowed for the kind.
MmaConfig make_mma_config(MmaKindId kind, const ElemFormat* elem_a = nullptr,
                          const ElemFormat* elem_b = nullptr, const ElemFormat* scale = nullptr,
                          int block = 0);
// Throws std::invalid_argument unless cfg is a valid kind configuration and `model` can run it
// (Blackwell: not hif4; AscendHif4: hif4 only; Exact / Fp32Seq: every kind; Custom: every kind,
// with valid cfg.numerics).
void validate_mma_config(const MmaConfig& cfg, Model model);

// One output element of one instruction with model cfg.model: K = cfg.kind->k element codes per
// operand (unpacked, one code per byte), K / cfg.block scale codes per operand (uint32 so HiF4 words
// fit; 8-bit scale codes in the low byte), C as FP32 bits. Returns D as FP32 bits.
uint32_t mma_dot(const MmaConfig& cfg, const uint8_t* a_codes, const uint8_t* b_codes,
                 const uint32_t* sfa, const uint32_t* sfb, uint32_t c_bits);

// IEEE-style exception flags of one instruction's result, SoftFloat's bit values (what TestFloat
// lines and RISC-V fflags carry), judged against the exact value of C + sum of products:
//   invalid   D is NaN and no element, scale or C is NaN (Inf - Inf, Inf * 0);
//   overflow  D is +-Inf and no operand is Inf or NaN (inexact is set with it);
//   inexact   every operand and D finite, D != the exact value;
//   underflow inexact, and the exact value is nonzero with magnitude below 2^-126 (tininess detected
//             before rounding, on the exact value; raised only with inexact, IEEE's default).
// A NaN or Inf operand that D passes on raises nothing. docs/numerics.md, "Exception flags".
enum MmaFlag : uint8_t { kMmaInexact = 0x01, kMmaUnderflow = 0x02, kMmaOverflow = 0x04, kMmaInvalid = 0x10 };
uint8_t mma_flags(const MmaConfig& cfg, const uint8_t* a_codes, const uint8_t* b_codes, const uint32_t* sfa,
                  const uint32_t* sfb, uint32_t c_bits, uint32_t d_bits);
// The same over K products (K a multiple of the block; K / block scales per operand): the flags of a
// GEMM output's accumulator — D before the alpha epilogue, whatever chain of instructions made it —
// against the exact value of C + the whole dot product.
uint8_t mma_flags_k(const MmaConfig& cfg, size_t K, const uint8_t* a_codes, const uint8_t* b_codes,
                    const uint32_t* sfa, const uint32_t* sfb, uint32_t c_bits, uint32_t d_bits);

// Whole GEMM D[M,N] = alpha * acc, acc = C + A[M,K] . B[N,K]^T (both operands K-major, one code per
// byte; SA [M, K/block], SB [N, K/block]; C [M,N] FP32, empty = all +0).
//  - Blackwell: instructions chained along K in order, D of one fed back as C of the next.
//  - AscendHif4: one FP32 accumulator along the whole K, rounded per cfg.hif4_round_groups.
//  - Exact: one rounding for the whole K. Fp32Seq: one FMA chain over the whole K.
//  - Custom: instructions of cfg.numerics.k chained along K (k = 0: one instruction).
// alpha is applied in an FP32 epilogue, one RN (D = alpha * acc, as CUTLASS's epilogue computes it).
// K must be a multiple of the instruction K (Blackwell, AscendHif4, Custom with k > 0) or of the
// block (Exact, Fp32Seq; Custom with k = 0: of the block and the group). Rows are spread over `threads` std::threads (0 = hardware concurrency); every output
// is computed independently, so the bits do not depend on the thread count.
// NaN results are the canonical 0x7FFFFFFF for every model.
std::vector<float> gemm(const MmaConfig& cfg, Model model, size_t M, size_t N, size_t K,
                        std::span<const uint8_t> a, std::span<const uint32_t> sa,
                        std::span<const uint8_t> b, std::span<const uint32_t> sb,
                        std::span<const float> c, float alpha = 1.0f, unsigned threads = 0);
// Same with 8-bit scale codes (every kind but hif4).
std::vector<float> gemm(const MmaConfig& cfg, Model model, size_t M, size_t N, size_t K,
                        std::span<const uint8_t> a, std::span<const uint8_t> sa,
                        std::span<const uint8_t> b, std::span<const uint8_t> sb,
                        std::span<const float> c, float alpha = 1.0f, unsigned threads = 0);

// ---- building blocks, exposed for the tests ----

// The generic GEMM: the same contract and bits as gemm(), computed by the straightforward
// per-output models (decoded structs, instruction cores of mma_core.hpp, the checked exact
// accumulator). gemm() runs vectorized paths (golden/src/mma_fast.cpp) where the CPU has AVX2 and
// FMA; the tests compare the two bit for bit.
std::vector<float> gemm_reference(const MmaConfig& cfg, Model model, size_t M, size_t N, size_t K,
                                  std::span<const uint8_t> a, std::span<const uint32_t> sa,
                                  std::span<const uint8_t> b, std::span<const uint32_t> sb,
                                  std::span<const float> c, float alpha = 1.0f, unsigned threads = 0);

// Exact fixed-point "superaccumulator" for sums of m * 2^e (|m| < 2^32, -352 <= e, e + 32 <= 416):
// exact.hpp's ExactDotSum (the same code the CUDA kernels run) with a range check and periodic
// normalization, so that any number of adds is safe.
class ExactAccumulator {
 public:
  static constexpr int kLsbExp = ExactDotSum::kLsb;
  static constexpr int kDigits = ExactDotSum::kDigits;  // covers 2^-352 .. 2^416
  void clear();
  void add(int64_t m, int e);         // += m * 2^e; throws std::out_of_range outside the range
  void add_float(float x);            // += x (finite)
  void add_mag(uint32_t ab, bool neg);  // += (neg ? -1 : 1) * |x|, x finite, given by its magnitude bits
  int sign();                         // -1, 0, +1
  // The value rounded to FP32 bits: RN-even (rn = true) or toward zero; a zero value gives +0.
  uint32_t round_fp32(bool rn);

 private:
  ExactDotSum sum_{};
  uint32_t pending_ = 0;  // adds since the last normalize
};

// round_to_fp32 (exact.hpp): (-1)^neg * mag * 2^e0 (+ sticky tail) to FP32 bits, RN-even or toward
// zero, with subnormals and overflow to +-Inf.

}  // namespace fp4sim
