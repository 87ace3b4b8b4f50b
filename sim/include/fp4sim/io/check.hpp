// Checking outputs that someone else's kernel produced against a golden vector suite
// (`fp4sim check SUITE --results DIR`, docs/vectors.md#checking-your-kernels-outputs).
//
// DIR mirrors the suite's layout. The *expected outputs* of a case are its d_<model>.npy files, the
// per-instruction accumulators d_<model>_steps.npy of chained cases (manifest "expected_steps"), and,
// for operands quantized from floats (source "float"), the quantizer's outputs: <x>_codes.npy,
// <x>_packed.npy, <x>_scales.npy, <x>_scales_atom.npy. Every one of them found under DIR (same
// relative path) is compared bit for bit with the suite's; the other files under DIR (inputs, C,
// manifests) are ignored. A case with none of its expected outputs under DIR is Missing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fp4sim::vectors {

// One expected-output file of one case.
struct FileCheck {
  enum Status : uint8_t { Equal, Differ, Missing, Error };
  std::string path;    // relative to the suite (and to the results): "cases/<id>/d_blackwell.npy"
  std::string output;  // what it holds: "d_blackwell", "a_codes", "b_scales_atom", ...
  Status status = Missing;
  std::string problem;  // Error: one line naming the file (unreadable, not .npy, wrong dtype or shape)
  std::string dtype;    // the expected dtype ("float32", "uint8", "uint32") ...
  std::vector<size_t> shape;  // ... and shape
  size_t elements = 0;   // compared (Equal / Differ)
  size_t differing = 0;  // elements whose bits differ
  // The first differing element (Differ only), in row-major order.
  size_t index = 0;             // flat index
  size_t row = 0, col = 0;      // its position ([M, N] for D, [rows, K] codes, [rows, K/block] scales)
  bool padding = false;         // scales_atom: a zero-padding byte of the atom (row/col are past the matrix)
  // d_<model>_steps ([S, M, N]): the first differing instruction s (row/col are then m, n).
  std::optional<size_t> instruction;
  uint32_t expected_bits = 0, got_bits = 0;
  std::optional<uint64_t> ulp;  // float32 outputs: distance in units in the last place (none if a NaN)
  // What produced the element, where the suite has it: (name, value) such as
  // ("C[1, 1]", "0x3f800000 (1)"), ("A row 1 codes", "0a 03 ..."), ("input[2, 17]", "0x3fc00000 (1.5)").
  std::vector<std::pair<std::string, std::string>> inputs;
};

struct CaseCheck {
  enum Status : uint8_t { Equal, Differ, Missing, Error };
  std::string id, cls;
  size_t M = 0, N = 0, K = 0;
  // Equal: every output found equal. Differ: at least one differs. Missing: no output found.
  // Error: the suite's own case is damaged, or a result file is unusable (then `problems` / the file's
  // `problem` say which); Error wins over Differ.
  Status status = Missing;
  std::vector<std::string> problems;  // the suite's own problems (the case's data is then not used)
  std::vector<FileCheck> files;       // every expected output of the case, found or not
};

struct CheckReport {
  std::string suite, results;  // the directories as given
  std::vector<CaseCheck> cases;
  size_t equal = 0, differ = 0, missing = 0, error = 0;  // cases by status
  size_t files_compared = 0;                             // result files compared (Equal + Differ)
  // .npy files under results/cases that are no file of the suite (a misspelt case or model name).
  std::vector<std::string> unexpected;
};

// Compares every expected output found under `results` with the suite's. Throws io::IoError when the
// suite's manifest is unusable (as SuiteReader does) or `results` is not a directory; everything else
// (damaged suite cases, unusable result files) is reported per case.
CheckReport check_suite(const std::filesystem::path& suite, const std::filesystem::path& results);

// The report as JSON (an object; pretty-printed, ending in a newline): summary counts, "all_equal",
// then one object per case with its files and the first difference of each. Layout: docs/vectors.md.
std::string check_report_json(const CheckReport& r);

// True when every case is Equal: nothing differs, nothing is missing, nothing is damaged, and at
// least one file was compared.
bool all_equal(const CheckReport& r);

// Like all_equal, but Missing cases do not fail (at least one file must still be compared).
bool all_present_equal(const CheckReport& r);

// The human-readable lines of one case: "EQUAL   <id>  MxNxK  d_blackwell d_exact ..." and, for
// anything else, one indented line per problem, difference (with inputs) or missing output.
std::vector<std::string> format_case_check(const CaseCheck& c);

std::string_view status_name(CaseCheck::Status s);  // "equal", "differ", "missing", "error"
std::string_view status_name(FileCheck::Status s);

// Distance between two FP32 values in units in the last place: the bit patterns mapped onto one
// ordered integer line (negative values mirrored), so +0 and -0 are 0 apart and FLT_MAX to +Inf is
// 1; none when either is NaN. `fp4sim check` and `check --lines` report it.
std::optional<uint64_t> ulp_distance(uint32_t a, uint32_t b);

}  // namespace fp4sim::vectors
