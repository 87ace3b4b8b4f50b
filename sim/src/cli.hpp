// Shared pieces of the fp4sim command line: the command signature, the two error kinds and
// option helpers. Each subcommand lives in its own cmd_*.cpp and is registered in main.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>

#include "fp4sim/io/npy.hpp"
#include "fp4sim/quant.hpp"

namespace fp4sim::cli {

// A mistake on the command line (unknown option, bad value, conflicting options): exit 2.
// Everything else thrown out of a command (files, data, numerics) is a runtime error: exit 1.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;
inline constexpr int kExitUsage = 2;

struct Invocation {
  std::string name;               // the subcommand, e.g. "quantize"
  std::string summary;            // its one-line help from the command table
  std::vector<std::string> args;  // the arguments after the subcommand
  std::vector<std::string> argv;  // the whole command line, recorded in manifests
};

using CommandFn = int (*)(const Invocation&);

// Parses inv.args against `options` (to which it adds --help/-h): no positional arguments, no abbreviated
// option names, each option at most once. Returns false after printing the help text to stdout
// when --help was given. Throws UsageError for everything boost rejects, and for a missing
// required option.
bool parse_options(const Invocation& inv, std::string_view usage_line,
                   boost::program_options::options_description& options,
                   boost::program_options::variables_map& vm);

// Decimal or 0x-hex unsigned integer in [min, max]; anything else (sign, junk, overflow) is a
// UsageError naming the option. (boost's lexical_cast would accept "-1" as 2^64-1.)
uint64_t parse_uint(std::string_view option, std::string_view text, uint64_t min, uint64_t max);
bool parse_on_off(std::string_view option, std::string_view text);

// Optional string option value, or `fallback` when absent.
std::string get_or(const boost::program_options::variables_map& vm, const char* name,
                   std::string fallback);

// A tensor input file: float32 as is, uint16 read as BF16 bit patterns (widened exactly).
struct FloatTensor {
  std::vector<uint8_t> file_bytes;  // the whole file, for the manifest's CRC
  io::NpyArray array;               // as stored
  std::vector<float> values;        // row-major, array.size() values
};
// Throws NpyError / runtime_error naming the file: unreadable, not .npy, other dtype.
FloatTensor load_float_tensor(const std::filesystem::path& path);

// The quantize options (--rounding --seed --stream --scale-rule --pts --2d --rht --rht-bf16) for
// commands that quantize float operands (gemm). parse_quant_options applies the same rules as
// `fp4sim quantize`: unknown values and options without effect on format f are UsageErrors.
void add_quant_options(boost::program_options::options_description& od);
QuantOptions parse_quant_options(const boost::program_options::variables_map& vm, BlockFormat f);

// Throws io::IoError unless the directory that will hold `file` exists (checked before any work,
// so a run never computes for minutes and then fails to write).
void check_output_parent(const std::filesystem::path& file);

// A plain text table: the first `text_cols` columns left-aligned, the others right-aligned, a rule
// under the header. fmt_num prints "nan" / "inf" / "-inf" for non-finite values.
void print_table(std::ostream& os, const std::vector<std::string>& head,
                 const std::vector<std::vector<std::string>>& rows, size_t text_cols);
std::string fmt_num(const char* printf_format, double v);

// The subcommands.
int cmd_quantize(const Invocation& inv);
int cmd_quality(const Invocation& inv);
int cmd_mma(const Invocation& inv);
int cmd_gemm(const Invocation& inv);
int cmd_linear(const Invocation& inv);
int cmd_vectors(const Invocation& inv);
int cmd_replay(const Invocation& inv);
int cmd_run(const Invocation& inv);
int cmd_whatif(const Invocation& inv);

}  // namespace fp4sim::cli
