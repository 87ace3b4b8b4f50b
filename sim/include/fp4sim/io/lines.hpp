// Line vectors (docs/line-vectors.md): a suite's cases as one MMA instruction per text line, for a
// testbench that reads vectors with `$fscanf` / `$readmemh` instead of .npy files, and the check of
// a DUT's result lines against them.
//
// Every line is one instruction D = A . B + C of one output element (K = the kind's instruction K,
// no alpha): a chained case of S instructions gives S lines, the C of instruction s being the
// expected D of instruction s - 1 (the steps files, d_<model>_steps.npy). The FP32 epilogue
// RN(alpha * D) after the last instruction is no line: alpha travels as a field (hex, jsonl) and
// jsonl also gives the final D.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fp4sim/io/vectors.hpp"
#include "fp4sim/mma.hpp"

namespace fp4sim::lines {

enum class LineFormat : uint8_t { Hex, TestFloat, Jsonl };
std::string_view line_format_name(LineFormat f);  // "hex", "testfloat", "jsonl"
bool parse_line_format(std::string_view s, LineFormat& out);

// Exception flags, bit for bit as Berkeley SoftFloat / TestFloat number them.
enum : uint8_t { kFlagInexact = kMmaInexact, kFlagUnderflow = kMmaUnderflow, kFlagOverflow = kMmaOverflow, kFlagInvalid = kMmaInvalid };

// The flags of one instruction's result d (FP32 bits) for its operands: golden's mma_flags (mma.hpp).
uint8_t instruction_flags(const MmaConfig& cfg, const uint8_t* a, const uint8_t* b, const uint32_t* sa,
                          const uint32_t* sb, uint32_t c, uint32_t d);

// The configuration of an instruction as one 32-bit word: bits 31:28 kind (0 mxf4, 1 mxf4nvf4,
// 2 mxf8f6f4, 3 hif4), 27:24 model (0 exact, 1 fp32-seq, 2 blackwell, 3 ascend-hif4), 23:20
// element A and 19:16 element B (0 e2m1, 1 e2m3, 2 e3m2, 3 e4m3, 4 e5m2, 5 s1p2), 15:12 scale
// (0 ue8m0, 1 ue4m3, 2 e6m2), 11:0 block size. Printed in hex it reads 12001010 = mxf4nvf4,
// blackwell, e2m1 x e2m1, ue4m3 / 16.
uint32_t config_word(const MmaConfig& cfg);

// Hex digits (an optional 0x) to out; false unless every character is a hex digit and the value fits
// in `bits` (leading zeros allowed). The line readers' and the replay targets' one hex parser.
bool parse_hex(std::string_view s, uint64_t& out, int bits);
// Throws std::invalid_argument for a word that names no valid configuration.
MmaConfig config_from_word(uint32_t w);

struct Instruction {
  std::string case_id;  // the suite's case id ("0007-mxf4-k_chaining")
  size_t index = 0;     // s: 0 .. count - 1
  size_t count = 1;     // S = K / instruction K
  size_t m = 0, n = 0;  // the output element D[m, n] of the case
  MmaConfig cfg;        // cfg.model = the model whose result d is
  std::vector<uint8_t> a, b;     // cfg.kind->k codes each
  std::vector<uint32_t> sa, sb;  // k / block scales each (8-bit codes in the low byte, HiF4 words whole)
  uint32_t c = 0, d = 0;         // FP32 bits: C in, the expected D (canonical NaN 0x7FFFFFFF)
  uint8_t flags = 0;
  uint32_t alpha = 0x3F800000u;  // the case's epilogue scale
  bool last() const { return index + 1 == count; }
};

// The instructions of case v under model `model` (every output element [m, n] in row-major order,
// its instructions in K order), d computed with fp4sim::mma_dot and checked against the case's steps
// (when it has them) and against its expected D through the epilogue. Throws std::runtime_error if
// they disagree, std::invalid_argument when the model does not chain instructions over this case's
// K (exact with K > instruction K) or does not apply to the case's kind.
// With numerics (Model::Custom), each instruction is mma_dot under those parameters instead.
std::vector<Instruction> case_instructions(const vectors::VectorCase& v, Model model,
                                           const Numerics* numerics = nullptr);

// RN(alpha * d) in FP32, NaN canonical: the epilogue after a chain's last instruction.
uint32_t epilogue(uint32_t alpha, uint32_t d);

// The header (hex: one comment line; testfloat: none; jsonl: none) and one line without '\n'.
std::string format_header(LineFormat f, std::string_view description);
std::string format_line(const Instruction& ins, LineFormat f);

// Parses a line-vector file's text (any of the three formats, told apart by the first line: a "//"
// header = hex, '{' = jsonl, else testfloat). Testfloat lines carry no case id: they are named
// "line N". Throws std::runtime_error "NAME:LINE: ..." on the first malformed line.
struct LineFile {
  LineFormat format = LineFormat::Hex;
  std::vector<Instruction> instructions;
  std::vector<size_t> line_numbers;  // 1-based line of each instruction in the file
};
LineFile parse_lines(std::string_view text, std::string_view name);

// A DUT's result lines: `<D hex> [<flags hex>]` (hex digits, optional 0x) or jsonl objects with "d"
// (hex string or number of bits) and optional "flags". Blank lines and comment lines ("//" or '#') are skipped.
struct ResultLine {
  uint32_t d = 0;
  std::optional<uint8_t> flags;
  size_t line = 0;
};
std::vector<ResultLine> parse_results(std::string_view text, std::string_view name);


struct LinesCheck {
  size_t compared = 0, differing = 0;
  std::optional<size_t> first;  // index of the first differing instruction
  std::vector<std::string> report;  // the first difference explained, one line each
};
// Compares results with lines bit for bit (D, and flags where a result line gives them). Throws
// std::runtime_error naming the file and line when the counts differ.
LinesCheck check_lines(const LineFile& lines, const std::vector<ResultLine>& results, std::string_view results_name);

}  // namespace fp4sim::lines
