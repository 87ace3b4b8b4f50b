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

#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/npy.hpp"
#include "fp4sim/mma.hpp"
#include "fp4sim/quant.hpp"
#ifdef FP4SIM_HAVE_MODELS
#include "fp4sim/models/models.hpp"
#endif

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

// Parses inv.args against `options` (to which it adds --help/-h, and --durable when the command writes
// outputs, i.e. has --out, --json or --force): no positional arguments, no abbreviated option names,
// each option at most once. Returns false after printing the help text to stdout when --help was
// given. Throws UsageError "NAME: reason" (NAME = the option or the stray word) for everything boost
// rejects, and for a missing required option. Applies --durable (io::set_durable).
bool parse_options(const Invocation& inv, std::string_view usage_line,
                   boost::program_options::options_description& options,
                   boost::program_options::variables_map& vm);

// "--name" for an option name given with or without its dashes: messages name options one way.
std::string option_text(std::string_view option);

// An .npy reader message with its list of every readable dtype replaced by `expected`, the dtypes
// that the option takes (the reader's list would name dtypes the command then refuses).
std::string npy_dtype_hint(std::string_view message, std::string_view expected);

// "fp4sim: warning: MESSAGE" on stderr (one line; rank 0 only under mpirun).
void warn(std::string_view message);

// Decimal or 0x-hex unsigned integer in [min, max]; anything else (sign, junk, overflow) is a
// UsageError naming the option. (boost's lexical_cast would accept "-1" as 2^64-1.)
uint64_t parse_uint(std::string_view option, std::string_view text, uint64_t min, uint64_t max);
bool parse_on_off(std::string_view option, std::string_view text);

// Optional string option value, or `fallback` when absent.
std::string get_or(const boost::program_options::variables_map& vm, const char* name,
                   std::string fallback);

// A tensor input file: float32 as is, uint16 read as BF16 bit patterns (widened exactly).
struct FloatTensor {
  std::vector<uint8_t> file_bytes;  // empty: released once read (its size and CRC-32 are below)
  size_t file_size = 0;             // bytes of the whole file, for the manifest
  uint32_t file_crc32 = 0;          // CRC-32 of the whole file
  io::NpyArray array;               // dtype and shape as stored (data left empty: see values)
  std::vector<float> values;        // row-major, array.size() values
  size_t n_nan = 0, n_inf = 0;      // non-finite values among them
};
// Throws NpyError / runtime_error naming the file: unreadable, not .npy, other dtype. NaN and Inf
// inputs are quantized as the formats define them (SPEC), with one warning on stderr that counts them
// (docs/cli.md "Non-finite inputs").
FloatTensor load_float_tensor(const std::filesystem::path& path);

// The quantize options (--rounding --seed --stream --scale-rule --pts --2d --rht --rht-bf16) for
// commands that quantize float operands (gemm). parse_quant_options applies the same rules as
// `fp4sim quantize`: unknown values and options without effect on format f are UsageErrors.
void add_quant_options(boost::program_options::options_description& od);
QuantOptions parse_quant_options(const boost::program_options::variables_map& vm, BlockFormat f);

// --numerics K=V,... (fp4sim mma, vectors --lines): golden numerics a designer sets, the preset
// model with some parameters changed (mma.hpp's Numerics, docs/numerics.md). apply_numerics gives
// Model::Custom with cfg.numerics = preset_numerics(cfg, preset) changed by the option, or `preset`
// itself when the option is absent; a bad spec is a UsageError naming the key.
void add_numerics_option(boost::program_options::options_description& od);
Model apply_numerics(const boost::program_options::variables_map& vm, MmaConfig& cfg, Model preset);

// Throws io::IoError unless the directory that will hold `file` exists (checked before any work,
// so a run never computes for minutes and then fails to write).
void check_output_parent(const std::filesystem::path& file);

// The outputs of a command under the one output policy (io::OutputSet, docs/cli.md "Outputs"):
// declared and checked before any work, committed together at the end, removed on failure or signal.
// `option` names the option in usage messages ("--out"); an empty path is a UsageError.
class Outputs {
 public:
  explicit Outputs(bool force) : set_(force) {}
  size_t file(std::string_view option, const std::filesystem::path& p, bool is_default = false);
  size_t dir(std::string_view option, const std::filesystem::path& p, bool is_default = false);
  io::OutputSet& set() { return set_; }
  void commit() { set_.commit(); }

 private:
  io::OutputSet set_;
};

// A plain text table: the first `text_cols` columns left-aligned, the others right-aligned, a rule
// under the header. fmt_num prints "nan" / "inf" / "-inf" for non-finite values.
void print_table(std::ostream& os, const std::vector<std::string>& head,
                 const std::vector<std::vector<std::string>>& rows, size_t text_cols);
std::string fmt_num(const char* printf_format, double v);

#ifdef FP4SIM_HAVE_MODELS
// The models' parameters on the command line (fp4sim run, fp4sim whatif; docs/cli.md):
// --config FILE.json (a JSON object key -> number or string, optionally with "tensor-core" / "cube"
// sections for one engine) and --param KEY=VALUE (repeatable), applied in that order onto
// models::default_params with models::set_param.
void add_model_param_options(boost::program_options::options_description& od);

// One setting, in the order it is applied.
struct ParamSetting {
  std::string key, value;
  std::string origin;  // where it came from, for messages: "--param", "FILE.json", "FILE.json: cube"
  bool one_engine = false;  // from a config file's engine section: applies to `engine` only
  models::EngineKind engine = models::EngineKind::TensorCore;
};
// The settings of --config (file order) then --param (command-line order). Malformed items (no '=',
// a section that is not an engine, a value that is not a number or a string) are UsageErrors; an
// unreadable file or one that is not JSON is an io::IoError.
std::vector<ParamSetting> model_param_settings(const boost::program_options::variables_map& vm);

// Whether `key` is in models::param_table(e).
bool param_applies(models::EngineKind e, std::string_view key);

// models::set_param with its std::invalid_argument (unknown key, bad value) turned into a UsageError
// "ORIGIN: message".
void set_model_param(models::Params& p, std::string_view key, std::string_view value, std::string_view origin);

// default_params(e) for each of `engines`, each setting applied to those it applies to. A setting
// that applies to none of them (or whose value one of them rejects) is a UsageError naming the key.
// A config section of an engine not in `engines` is still checked against that engine.
std::vector<models::Params> model_params(const std::vector<models::EngineKind>& engines,
                                         const std::vector<ParamSetting>& settings);

// The parameter keys of both engines (tensor-core keys first, then the cube's), each with its
// default per engine ("-" where it does not apply), range or choices, unit and meaning: the tail of
// `fp4sim run --help` and `fp4sim whatif --help`.
void print_model_params(std::ostream& os);
#endif

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
int cmd_regress(const Invocation& inv);
int cmd_study(const Invocation& inv);
int cmd_check(const Invocation& inv);  // cmd_check.cpp (issue 15)
int cmd_calibrate(const Invocation& inv);
int cmd_train(const Invocation& inv);  // cmd_train.cpp: runs python -m fp4sim.train

}  // namespace fp4sim::cli
