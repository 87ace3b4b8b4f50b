// Golden vector suites (docs/vectors.md): self-describing MMA / GEMM test cases on disk, and the
// replay machinery that re-checks them bit for bit on a target (golden today; RTL, SystemC and GPU
// drivers plug in through ReplayTarget).
//
// A suite directory holds manifest.json and cases/<id>/*.npy. Every case is one GEMM
//   D[M,N] = alpha * acc,   acc = C + A[M,K] . B[N,K]^T   (the MMA's accumulator input C)
// with both operands K-major, given as element codes (unpacked, and packed two per byte for 4-bit
// elements), block scales (row-major, and in the 128x4 tensor-core atom layout for 8-bit scales),
// the float inputs the codes were quantized from when there are any, C, and the expected D of every
// applicable model. The manifest records formats, options, seed, shapes, dtypes, nibble order,
// scale layouts and the CRC-32 of every file; a reader never uses a file that fails its check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fp4sim/io/manifest.hpp"
#include "fp4sim/mma.hpp"
#include "fp4sim/quant.hpp"

namespace fp4sim::vectors {

// Bump when the suite layout changes meaning (readers refuse other values).
inline constexpr int kSuiteSchema = 1;

enum class Suite : uint8_t { Smoke, Corners, Random, Llm, Quant };
std::string_view suite_name(Suite s);  // "smoke", "corners", "random", "llm", "quant"
bool parse_suite(std::string_view name, Suite& out);

struct SuiteOptions {
  uint64_t seed = 0;
  // random: M = N = size (default 16, 1..1024). llm: tokens (default 128, a multiple of 64, at most
  // 4096). smoke, corners and quant have fixed shapes and refuse a size.
  size_t size = 0;
  unsigned threads = 0;  // for the expected outputs (0 = all cores); never changes a bit
  // quant: whose quantizer the float cases follow (quant.hpp); the cases the library cannot
  // quantize (format, SR, 2D, ModelOpt's MX floor rule) are left out. Other suites take only Te.
  Convention convention = Convention::Te;
  // Called by build_suite after each case's expected outputs (cases done, cases in all); optional.
  std::function<void(size_t done, size_t total)> progress;
};

// Throws std::invalid_argument for a size the suite does not take, or a convention other than Te
// outside the quant suite.
void validate_suite_options(Suite s, const SuiteOptions& o);

struct Operand {
  std::vector<uint8_t> codes;    // [rows, K] element codes, one per byte
  std::vector<uint32_t> scales;  // [rows, K/block]: 8-bit scale codes in the low byte, HiF4 words whole
  std::vector<float> input;      // [rows, K] the float values quantized into codes; empty if none
  io::Json quant;                // how input was quantized (null when the case is made of codes)
};

struct VectorCase {
  std::string id;           // "0007-mxf4nvf4-ue4m3-b16-nan_scale"; the directory cases/<id>
  std::string cls;          // case class ("nan_scale", "random", "llm-fprop", ...)
  std::string description;  // one sentence
  std::vector<std::string> row_notes, col_notes;  // optional: what row m of A / row n of B stands for
  MmaConfig cfg;            // kind, element types, scale type, block (cfg.model unused)
  size_t M = 0, N = 0, K = 0;
  Operand a, b;             // a: [M, K], b: [N, K]
  std::vector<float> c;     // [M, N]
  float alpha = 1.0f;       // the FP32 epilogue scale (NVFP4: S_dec_A * S_dec_B)
  std::vector<Model> models;                 // models with an expected output
  std::vector<std::vector<float>> expected;  // expected[i]: D [M, N] of models[i]
  // steps[i]: for a chained model (chained_model) and K > the instruction K, the accumulator after
  // each instruction, [S, M, N] with S = K / instruction K (D of instruction s is C of s + 1), before
  // the alpha epilogue, NaN as 0x7FFFFFFF; empty otherwise. Written as d_<model>_steps.npy.
  std::vector<std::vector<float>> steps;
};

// Models whose K loop is a chain of instructions with an FP32 accumulator between them: blackwell,
// ascend-hif4, fp32-seq (exact rounds once over the whole K).
bool chained_model(Model m);

// The per-instruction accumulators of `model` for case v ([S, M, N], S = K / instruction K), computed
// by golden gemm over one instruction's K columns at a time with the previous result as C.
std::vector<float> instruction_steps(const VectorCase& v, Model model, unsigned threads);

// The models a configuration has expected outputs for: its hardware model, exact, fp32-seq.
std::vector<Model> applicable_models(const MmaConfig& cfg);

// "mxf4", "mxf4nvf4-ue4m3-b16", "mxf8f6f4-e4m3", "mxf8f6f4-e2m1xe4m3", "hif4": names a configuration.
std::string config_tag(const MmaConfig& cfg);

// Builds a suite's cases with every expected output computed by the golden models (fp4sim::gemm).
// Deterministic: same suite, seed and size give the same cases on every machine.
std::vector<VectorCase> build_suite(Suite s, const SuiteOptions& o);

// A case made of float operands the caller has already quantized (qa = quantize(f, a, M, K, oa), qb
// likewise from b): codes, scales, inputs and quantize options of both operands, C = +0, alpha = the
// NVFP4 global scales' product (1 otherwise). No id and no expected outputs yet.
VectorCase quantized_case(BlockFormat f, std::vector<float> a, const QuantOptions& oa, const Quantized& qa,
                          std::vector<float> b, const QuantOptions& ob, const Quantized& qb, std::string cls,
                          std::string description);

// Sets v.models to `models` (empty: applicable_models(v.cfg)) and v.expected to golden gemm's D for
// each of them; v.steps to instruction_steps for the chained models when K > the instruction K (and
// checks that RN(alpha * last step) is the expected D).
void fill_expected(VectorCase& v, unsigned threads, std::vector<Model> models = {});

// A suite of one case made from the caller's own tensors (`fp4sim vectors --from`): A [M, K] and B
// [N, K] float32 (BF16 values widened), each quantized to f with opt, C = +0, expected D of every
// applicable model (and the steps of the chained ones), id "0000-<config>-from". Without b (empty),
// B = A (N = M). Throws std::invalid_argument for an empty operand, a size that is not M x K / N x K,
// or K not a multiple of the block, the RHT size or the instruction K.
std::vector<VectorCase> build_from_tensors(BlockFormat f, std::vector<float> a, size_t M, size_t K,
                                           std::vector<float> b, size_t N, const QuantOptions& opt,
                                           unsigned threads = 0);

// Names every case "NNNN-<config_tag>-<class>" by its position.
void number_cases(std::vector<VectorCase>& cases);

// Writes cases into DIR: staged in DIR.tmp-XXXXXX, renamed into place at the end (force = replace
// an existing DIR atomically). Throws io::IoError when DIR exists without force or the write fails.
void write_suite(const std::filesystem::path& dir, Suite s, const SuiteOptions& o,
                 const std::vector<VectorCase>& cases, const std::vector<std::string>& argv, bool force);
// The same for cases from anywhere: `origin` is an object whose fields ("command", "suite", "seed",
// "size", and any others) go into the manifest; readers rely only on the cases and files.
void write_cases(const std::filesystem::path& dir, const io::Json& origin, const std::vector<VectorCase>& cases,
                 const std::vector<std::string>& argv, bool force);
// The same into an existing empty directory that the caller stages and commits (io::OutputSet).
void write_suite_into(const std::filesystem::path& dir, Suite s, const SuiteOptions& o,
                      const std::vector<VectorCase>& cases, const std::vector<std::string>& argv);
void write_cases_into(const std::filesystem::path& dir, const io::Json& origin, const std::vector<VectorCase>& cases,
                      const std::vector<std::string>& argv);

// ---- Reading ----

// One case as read back. problems non-empty => the case must not be used (each problem is one
// line naming the file: missing, truncated, CRC mismatch, wrong dtype / shape, inconsistent forms).
struct LoadedCase {
  std::string id, cls;
  std::vector<std::string> problems;
  VectorCase data;
};

class SuiteReader {
 public:
  // Reads DIR/manifest.json. Throws io::IoError (naming the file) when it is missing, not JSON, or
  // not a suite manifest of schema kSuiteSchema.
  explicit SuiteReader(std::filesystem::path dir);
  const io::Json& manifest() const { return manifest_; }
  const std::filesystem::path& dir() const { return dir_; }
  size_t size() const;
  // Loads case i: reads each file once, checks size, CRC-32, .npy header, dtype and shape against
  // the manifest and the case's dimensions, and the redundant forms against each other (packed vs
  // codes, atom vs row-major scales).
  LoadedCase load(size_t i) const;

 private:
  std::filesystem::path dir_;
  io::Json manifest_;
};

// ---- Replay ----

// A device or model that computes cases. name() appears in reports.
class ReplayTarget {
 public:
  virtual ~ReplayTarget() = default;
  virtual std::string name() const = 0;
  // Empty when the target can compute `model` for case c; otherwise why not (the check is skipped
  // and reported as such, never counted as a pass).
  virtual std::string cannot_run(const VectorCase& c, Model model) const = 0;
  // D [M, N] as FP32 bit patterns.
  virtual std::vector<uint32_t> run(const VectorCase& c, Model model) = 0;
};

// fp4sim::gemm, every model.
std::unique_ptr<ReplayTarget> make_golden_target(unsigned threads = 0);

// One output element of one MMA instruction, the signature of fp4sim::mma_dot: K = cfg.kind->k
// codes per operand, K / cfg.block scales per operand, C as FP32 bits, model cfg.model.
using DotFn = std::function<uint32_t(const MmaConfig& cfg, const uint8_t* a, const uint8_t* b,
                                     const uint32_t* sfa, const uint32_t* sfb, uint32_t c_bits)>;

// A target built from a single-instruction unit (how an RTL or SystemC dot-product plugs in): run()
// chains instructions along K (D of one is C of the next, as the hardware and fp4sim::gemm chain
// them) and applies the epilogue RN(alpha * acc) with NaN made canonical. It offers the models in
// `models`; `exact` only for cases of a single instruction (gemm rounds it once over the whole K).
// `supports` (optional) returns why a configuration cannot run, or "".
// Why a single-instruction target cannot run case c under model m (empty: it can): the kind
// configuration under m, K a multiple of the instruction K, and exact only on one instruction.
// make_dot_target's and the outside models' (exec:, plugin:) targets share it.
std::string instruction_cannot_run(const VectorCase& c, Model m);

std::unique_ptr<ReplayTarget> make_dot_target(std::string name, std::vector<Model> models, DotFn dot,
                                              std::function<std::string(const MmaConfig&)> supports = {});

struct ModelCheck {
  Model model = Model::Exact;
  std::string skipped;      // non-empty: not run, and why
  size_t mismatches = 0;    // outputs whose bits differ
  size_t first = 0;         // index (row-major) of the first mismatch
  uint32_t want = 0, got = 0;
};

struct CaseReport {
  enum Status : uint8_t { Pass, Fail, Error, Skipped };
  std::string id, cls;
  Status status = Pass;
  size_t M = 0, N = 0, K = 0;
  std::vector<std::string> problems;  // Error: the file problems, or what the target threw
  std::vector<ModelCheck> checks;
};

struct ReplayReport {
  std::vector<CaseReport> cases;
  size_t pass = 0, fail = 0, error = 0, skipped = 0;
  size_t comparisons = 0;  // model outputs compared (each M x N)
  // All cases passed or were skipped, none failed or errored, and at least one output was compared.
  bool ok() const { return fail == 0 && error == 0 && comparisons > 0; }
};

// Replays every case of the suite in `reader` on `target`; on_case (optional) sees each report as
// it completes.
ReplayReport replay_suite(const SuiteReader& reader, ReplayTarget& target,
                          const std::function<void(const CaseReport&)>& on_case = {});

// "PASS 0003-mxf4-nan_scale 3x2x64 blackwell exact fp32-seq" and, for failures, the details
// (one line per problem or mismatching model).
std::vector<std::string> format_case_report(const CaseReport& r);

}  // namespace fp4sim::vectors
