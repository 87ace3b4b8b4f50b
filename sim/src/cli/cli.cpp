#include "cli/cli.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "fp4sim/format.hpp"
#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/crc32.hpp"
#ifdef FP4SIM_HAVE_MODELS
#include "fp4sim/io/manifest.hpp"
#endif

namespace fp4sim::cli {
namespace po = boost::program_options;

namespace {

constexpr const char* kStray = "fp4sim-stray-word";

// boost's messages ("the option '--out' is required but missing") in the one style "NAME: reason".
[[noreturn]] void rethrow_boost(const po::error& e, const Invocation& inv) {
  const std::string help = " (see fp4sim " + inv.name + " --help)";
  if (const auto* x = dynamic_cast<const po::required_option*>(&e))
    throw UsageError(option_text(x->get_option_name()) + ": missing; this option is required" + help);
  if (const auto* x = dynamic_cast<const po::unknown_option*>(&e))
    throw UsageError(x->get_option_name() + ": unknown option" + help);
  if (const auto* x = dynamic_cast<const po::multiple_occurrences*>(&e))
    throw UsageError(option_text(x->get_option_name()) + ": given more than once");
  if (const auto* x = dynamic_cast<const po::ambiguous_option*>(&e))
    throw UsageError(x->get_option_name() + ": ambiguous option" + help);
  if (const auto* x = dynamic_cast<const po::invalid_command_line_syntax*>(&e)) {
    const std::string name = x->get_option_name().empty() ? std::string("command line") : x->get_option_name();
    switch (x->kind()) {
      case po::invalid_command_line_syntax::missing_parameter: throw UsageError(name + ": needs a value");
      case po::invalid_command_line_syntax::extra_parameter: throw UsageError(name + ": takes no value");
      default: break;
    }
  }
  if (const auto* x = dynamic_cast<const po::error_with_option_name*>(&e)) {
    if (!x->get_option_name().empty()) {
      // e.what() repeats the name inside a sentence; keep the sentence, lead with the name.
      throw UsageError(x->get_option_name() + ": " + e.what());
    }
  }
  throw UsageError(std::string(inv.name) + ": " + e.what());
}

bool writes_outputs(const po::options_description& od) {
  return od.find_nothrow("out", false) || od.find_nothrow("json", false) || od.find_nothrow("force", false);
}

}  // namespace

std::string npy_dtype_hint(std::string_view message, std::string_view expected) {
  std::string m(message);
  const std::string all = "(supported: <f4, |u1, <u2, <u4)";
  const size_t at = m.find(all);
  if (at != std::string::npos) m.replace(at, all.size(), "(expected " + std::string(expected) + ")");
  return m;
}

std::string option_text(std::string_view option) {
  while (!option.empty() && option.front() == '-') option.remove_prefix(1);
  return "--" + std::string(option);
}

void warn(std::string_view message) { std::cerr << "fp4sim: warning: " << message << "\n"; }

bool parse_options(const Invocation& inv, std::string_view usage_line,
                   po::options_description& options, po::variables_map& vm) {
  const bool outputs = writes_outputs(options) && !options.find_nothrow("durable", false);
  if (outputs)
    options.add_options()("durable", po::bool_switch(),
                          "fsync outputs and their folder before exiting (default: atomic rename only; docs/cli.md)");
  options.add_options()("help,h", "show this help and exit");
  const po::options_description& all = options;
  // Stray words are collected (not shown in --help) so that the message can name them.
  po::options_description hidden;
  hidden.add_options()(kStray, po::value<std::vector<std::string>>());
  po::options_description parse_with;
  parse_with.add(options).add(hidden);
  try {
    // No prefix guessing: "--form" must not silently mean "--format" in scripts.
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::positional_options_description stray;
    stray.add(kStray, -1);
    po::store(po::command_line_parser(inv.args).options(parse_with).positional(stray).style(style).run(), vm);
    if (vm.count("help")) {
      std::cout << "Usage: fp4sim " << usage_line << "\n\n" << inv.summary << "\n\n" << all;
      return false;
    }
    if (vm.count(kStray)) {
      const std::string word = vm[kStray].as<std::vector<std::string>>().front();
      throw UsageError("'" + word + "': unexpected argument (options start with --; see fp4sim " + inv.name +
                       " --help)");
    }
    po::notify(vm);
  } catch (const po::error& e) {
    rethrow_boost(e, inv);
  }
  if (outputs && vm.count("durable") && vm["durable"].as<bool>()) io::set_durable(true);
  return true;
}

uint64_t parse_uint(std::string_view option_in, std::string_view text, uint64_t min, uint64_t max) {
  const std::string option = option_text(option_in).substr(2);
  std::string_view digits = text;
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    digits.remove_prefix(2);
    base = 16;
  }
  uint64_t v = 0;
  const char* end = digits.data() + digits.size();
  auto [p, ec] = std::from_chars(digits.data(), end, v, base);
  if (digits.empty() || ec == std::errc::invalid_argument || p != end)
    throw UsageError("--" + std::string(option) + ": '" + std::string(text) +
                     "' is not a non-negative integer");
  if (ec == std::errc::result_out_of_range || v < min || v > max)
    throw UsageError("--" + std::string(option) + ": " + std::string(text) + " is out of range [" +
                     std::to_string(min) + ", " + std::to_string(max) + "]");
  return v;
}

bool parse_on_off(std::string_view option, std::string_view text) {
  if (text == "on") return true;
  if (text == "off") return false;
  throw UsageError(option_text(option) + ": expected 'on' or 'off', got '" +
                   std::string(text) + "'");
}

std::string get_or(const po::variables_map& vm, const char* name, std::string fallback) {
  return vm.count(name) ? vm[name].as<std::string>() : fallback;
}

namespace {

// A float32 .npy regular file read with its data going straight into `t.values` (no second copy of
// 16 MB, no page faults for it), the CRC-32 computed on the way. False: not that case (a pipe, a
// small file, another dtype, a header beyond the first 64 KiB), the caller reads the whole file.
bool read_f32_direct(const std::filesystem::path& path, FloatTensor& t) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // the whole-file path reports the error
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (1 << 20)) return false;
  const size_t size = static_cast<size_t>(st.st_size);
  std::vector<uint8_t> head(size_t{1} << 16);
  auto read_at = [&](uint8_t* dst, size_t n, size_t off) {
    size_t done = 0;
    while (done < n) {
      const ssize_t r = ::pread(fd, dst + done, n - done, static_cast<off_t>(off + done));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      done += static_cast<size_t>(r);
    }
    return true;
  };
  if (!read_at(head.data(), head.size(), 0)) return false;
  const size_t end = io::npy_header_end(head);
  if (end == 0 || end > head.size()) return false;
  head.resize(end);
  io::NpyHeader h;
  try {
    h = io::parse_npy_header(head, size, path.string());
  } catch (const io::NpyError& e) {
    throw io::NpyError(npy_dtype_hint(e.what(), "float32 '<f4' or uint16 '<u2' (BF16 bits)"));
  }
  if (h.dtype != io::DType::F32) return false;
  t.values.resize(h.data_bytes / sizeof(float));
  if (!read_at(reinterpret_cast<uint8_t*>(t.values.data()), h.data_bytes, h.data_offset)) return false;
  t.array.dtype = h.dtype;
  t.array.shape = h.shape;
  t.file_size = size;
  t.file_crc32 = io::crc32(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(t.values.data()), h.data_bytes),
                           io::crc32(head));
  return true;
}

}  // namespace

FloatTensor load_float_tensor(const std::filesystem::path& path) {
  FloatTensor t;
  if (!read_f32_direct(path, t)) {
    t = FloatTensor{};
    try {
      t.file_bytes = io::read_file(path);
    } catch (const io::IoError& e) {
      throw io::NpyError(e.what());
    }
    io::NpyView v;
    try {
      v = io::parse_npy_view(t.file_bytes, path.string());
    } catch (const io::NpyError& e) {
      // The reader lists every dtype it can parse; name only those this input may have.
      throw io::NpyError(npy_dtype_hint(e.what(), "float32 '<f4' or uint16 '<u2' (BF16 bits)"));
    }
    t.array.dtype = v.dtype;
    t.array.shape = v.shape;  // the data is in `values` only (one copy of the file's data)
    if (v.dtype == io::DType::F32) {
      t.values.resize(v.data.size() / sizeof(float));
      if (!v.data.empty()) std::memcpy(t.values.data(), v.data.data(), v.data.size());
    } else if (v.dtype == io::DType::U16) {
      t.values.resize(v.data.size() / 2);
      for (size_t i = 0; i < t.values.size(); ++i) {
        uint16_t b;
        std::memcpy(&b, v.data.data() + 2 * i, 2);
        t.values[i] = bf16_to_float(b);
      }
    } else {
      throw std::runtime_error(path.string() + ": input dtype is " +
                               std::string(io::dtype_name(t.array.dtype)) +
                               "; expected float32 or uint16 (BF16 bits)");
    }
    // The file's bytes are not needed any more: freed here, the memory serves the outputs (main()
    // keeps large blocks in the heap).
    t.file_size = t.file_bytes.size();
    t.file_crc32 = io::crc32(t.file_bytes);
    std::vector<uint8_t>().swap(t.file_bytes);
  }
  // One pass over the bit patterns (exponent all ones): cheap next to any quantization.
  size_t nan = 0, inf = 0;
  for (float x : t.values) {
    const uint32_t b = std::bit_cast<uint32_t>(x);
    if ((b & 0x7F800000u) == 0x7F800000u) ((b & 0x007FFFFFu) ? nan : inf)++;
  }
  t.n_nan = nan;
  t.n_inf = inf;
  if (nan || inf)
    warn(path.string() + ": " + std::to_string(nan) + " NaN and " + std::to_string(inf) + " Inf of " +
         std::to_string(t.values.size()) + " values; quantized as the formats define them (docs/cli.md)");
  return t;
}

void add_quant_options(po::options_description& od) {
  od.add_options()
      ("rounding", po::value<std::string>()->value_name("MODE"),
       "element rounding: rne (default), rna, rz, sr")
      ("seed", po::value<std::string>()->value_name("S"),
       "64-bit seed for sr bits and RHT signs (default 0)")
      ("stream", po::value<std::string>()->value_name("N"), "32-bit Philox stream for sr (default 0)")
      ("scale-rule", po::value<std::string>()->value_name("RULE"),
       "MX scale rule: floor (OCP, default) or rceil (truncation-free; ceil is an alias)")
      ("pts", po::value<std::string>()->value_name("on|off"), "nvfp4 per-tensor FP32 scale (default on)")
      ("2d", po::bool_switch(), "nvfp4: one scale per 16x16 tile")
      ("rht", po::value<std::string>()->value_name("N"),
       "random Hadamard transform of size N (power of two) along the last axis first; 0 = off")
      ("rht-bf16", po::bool_switch(), "round the RHT output to BF16 (as TransformerEngine does)")
      ("convention", po::value<std::string>()->value_name("LIB"),
       "whose quantizer the codes match: te (TransformerEngine, default), torchao, modelopt "
       "(docs/formats.md, Conventions)");
}

QuantOptions parse_quant_options(const po::variables_map& vm, BlockFormat f) {
  const BlockFormatInfo& fi = info(f);
  const bool mx = f != BlockFormat::Nvfp4 && f != BlockFormat::Hif4;
  QuantOptions o;
  const std::string rnd = get_or(vm, "rounding", "rne");
  if (!parse_rounding(rnd, o.rounding))
    throw UsageError("--rounding: unknown mode '" + rnd + "' (expected rne, rna, rz or sr)");
  if (f == BlockFormat::Hif4 && o.rounding == Rounding::Rz)
    throw UsageError("--rounding rz: hif4 rounds half-up (rna, also selected by rne) or with sr");
  if (vm.count("seed")) o.seed = parse_uint("seed", vm["seed"].as<std::string>(), 0, UINT64_MAX);
  if (vm.count("stream"))
    o.stream = static_cast<uint32_t>(parse_uint("stream", vm["stream"].as<std::string>(), 0, UINT32_MAX));
  if (vm.count("scale-rule")) {
    const std::string sr = vm["scale-rule"].as<std::string>();
    if (!parse_scale_rule(sr, o.scale_rule))
      throw UsageError("--scale-rule: unknown rule '" + sr + "' (expected floor or rceil)");
    if (!mx) throw UsageError("--scale-rule applies to MX formats only, not " + std::string(fi.name));
  }
  if (vm.count("pts")) {
    o.pts = parse_on_off("pts", vm["pts"].as<std::string>());
    if (f != BlockFormat::Nvfp4) throw UsageError("--pts applies to nvfp4 only, not " + std::string(fi.name));
  }
  o.two_d = vm.count("2d") && vm["2d"].as<bool>();
  if (o.two_d && f != BlockFormat::Nvfp4)
    throw UsageError("--2d (16x16 tile scaling) applies to nvfp4 only, not " + std::string(fi.name));
  if (vm.count("rht")) {
    const std::string r = vm["rht"].as<std::string>();
    const uint64_t n = parse_uint("rht", r, 0, 1u << 30);
    if (n != 0 && (n < 2 || !std::has_single_bit(n)))
      throw UsageError("--rht: size must be a power of two >= 2 (or 0 = off), got " + r);
    o.rht = static_cast<int>(n);
  }
  o.rht_bf16 = vm.count("rht-bf16") && vm["rht-bf16"].as<bool>();
  if (o.rht_bf16 && o.rht == 0) throw UsageError("--rht-bf16 needs --rht N");
  o.rht_seed = o.seed;  // one seed for SR bits and RHT signs, as in `fp4sim quantize`
  if (vm.count("convention")) {
    const std::string c = vm["convention"].as<std::string>();
    if (!parse_convention(c, o.convention))
      throw UsageError("--convention: unknown library '" + c + "' (expected te, torchao or modelopt)");
    try {
      check_convention(o.convention, f, o);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--convention ") + c + ": " + e.what());
    }
  }
  return o;
}

void check_output_parent(const std::filesystem::path& file) {
  if (file.filename().empty()) throw UsageError("'" + file.string() + "' is not a file name");
  const std::filesystem::path dir = file.parent_path().empty() ? std::filesystem::path(".") : file.parent_path();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw io::IoError(file.string() + ": parent directory does not exist");
}

size_t Outputs::file(std::string_view option, const std::filesystem::path& p, bool is_default) {
  if (p.empty()) throw UsageError(option_text(option) + ": empty file name");
  return set_.add_file(p, is_default);
}

size_t Outputs::dir(std::string_view option, const std::filesystem::path& p, bool is_default) {
  if (p.empty()) throw UsageError(option_text(option) + ": empty directory name");
  return set_.add_dir(p, is_default);
}

std::string fmt_num(const char* printf_format, double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, printf_format, v);
  return buf;
}

void print_table(std::ostream& os, const std::vector<std::string>& head,
                 const std::vector<std::vector<std::string>>& rows, size_t text_cols) {
  std::vector<size_t> w(head.size());
  for (size_t c = 0; c < head.size(); ++c) w[c] = head[c].size();
  // A row with fewer cells than the header (a note such as "skipped: ...") is printed as text and
  // does not widen the columns.
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size() && row.size() == head.size(); ++c) w[c] = std::max(w[c], row[c].size());
  auto line = [&](const std::vector<std::string>& row) {
    std::string s;
    for (size_t c = 0; c < row.size(); ++c) {
      const size_t pad = c < w.size() && row[c].size() < w[c] ? w[c] - row[c].size() : 0;
      if (c) s += "  ";
      if (c < text_cols || row.size() != head.size()) s += row[c] + (c + 1 < row.size() ? std::string(pad, ' ') : "");
      else s += std::string(pad, ' ') + row[c];
    }
    os << s << "\n";
  };
  line(head);
  size_t total = 0;
  for (size_t c = 0; c < w.size(); ++c) total += w[c] + (c ? 2 : 0);
  os << std::string(total, '-') << "\n";
  for (const auto& row : rows) line(row);
}

#ifdef FP4SIM_HAVE_MODELS
namespace fm = fp4sim::models;

void add_model_param_options(po::options_description& od) {
  od.add_options()
      ("param", po::value<std::vector<std::string>>()->value_name("KEY=VALUE"),
       "set a model parameter (repeatable; applied after --config); the keys are listed below")
      ("config", po::value<std::string>()->value_name("FILE.json"),
       "model parameters from a JSON object {key: number|string, ...}, optionally with \"tensor-core\" and "
       "\"cube\" sections for one engine");
}

namespace {

// A JSON value as set_param's text: integers as digits, strings as is.
std::string json_param_text(const io::Json& v, const std::string& where, const std::string& key) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number_float()) return v.dump();  // set_param rejects it (integers only), naming the key
  throw UsageError(where + ": '" + key + "' must be a number or a string, got " + v.dump());
}

}  // namespace

std::vector<ParamSetting> model_param_settings(const po::variables_map& vm) {
  std::vector<ParamSetting> out;
  if (vm.count("config")) {
    const std::string path = vm["config"].as<std::string>();
    const std::vector<uint8_t> bytes = io::read_file(path);
    io::Json j;
    try {
      j = io::Json::parse(bytes.begin(), bytes.end());
    } catch (const io::Json::exception& e) {
      throw io::IoError(path + ": not valid JSON (" + e.what() + ")");
    }
    if (!j.is_object()) throw UsageError(path + ": expected a JSON object of parameters, got " + std::string(j.type_name()));
    for (const auto& [key, v] : j.items()) {
      if (!v.is_object()) {
        out.push_back({key, json_param_text(v, path, key), path});
        continue;
      }
      fm::EngineKind e;
      if (key == fm::engine_name(fm::EngineKind::TensorCore)) e = fm::EngineKind::TensorCore;
      else if (key == fm::engine_name(fm::EngineKind::Cube)) e = fm::EngineKind::Cube;
      else throw UsageError(path + ": section '" + key + "' is not an engine (expected tensor-core or cube)");
      const std::string where = path + ": " + key;
      for (const auto& [k, sv] : v.items()) {
        if (sv.is_object()) throw UsageError(where + ": '" + k + "' must be a number or a string, got an object");
        out.push_back({k, json_param_text(sv, where, k), where, true, e});
      }
    }
  }
  if (vm.count("param"))
    for (const std::string& kv : vm["param"].as<std::vector<std::string>>()) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0)
        throw UsageError("--param: expected KEY=VALUE, got '" + kv + "'");
      out.push_back({kv.substr(0, eq), kv.substr(eq + 1), "--param"});
    }
  return out;
}

bool param_applies(fm::EngineKind e, std::string_view key) {
  const auto& t = fm::param_table(e);
  return std::any_of(t.begin(), t.end(), [&](const fm::ParamDesc& d) { return d.key == key; });
}

void set_model_param(fm::Params& p, std::string_view key, std::string_view value, std::string_view origin) {
  try {
    fm::set_param(p, key, value);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string(origin) + ": " + e.what());
  }
}

std::vector<fm::Params> model_params(const std::vector<fm::EngineKind>& engines,
                                     const std::vector<ParamSetting>& settings) {
  std::vector<fm::Params> ps;
  for (fm::EngineKind e : engines) ps.push_back(fm::default_params(e));
  for (const ParamSetting& s : settings) {
    if (s.one_engine) {
      const auto it = std::find(engines.begin(), engines.end(), s.engine);
      if (it != engines.end()) {
        set_model_param(ps[static_cast<size_t>(it - engines.begin())], s.key, s.value, s.origin);
      } else {
        fm::Params scratch = fm::default_params(s.engine);  // checked, not used
        set_model_param(scratch, s.key, s.value, s.origin);
      }
      continue;
    }
    bool applied = false;
    for (size_t i = 0; i < engines.size(); ++i)
      if (param_applies(engines[i], s.key)) {
        set_model_param(ps[i], s.key, s.value, s.origin);
        applied = true;
      }
    if (!applied) {
      // set_param's own message (unknown key / key of the other engine) names the key.
      fm::Params scratch = ps.empty() ? fm::default_params(fm::EngineKind::TensorCore) : ps[0];
      set_model_param(scratch, s.key, s.value, s.origin);
      std::string names;
      for (fm::EngineKind e : engines) names += (names.empty() ? "" : " or ") + std::string(fm::engine_name(e));
      throw UsageError(s.origin + ": '" + s.key + "' is not a parameter of " + names);
    }
  }
  return ps;
}

void print_model_params(std::ostream& os) {
  const fm::EngineKind engines[] = {fm::EngineKind::TensorCore, fm::EngineKind::Cube};
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string_view> seen;
  for (fm::EngineKind e : engines)
    for (const fm::ParamDesc& d : fm::param_table(e)) {
      if (std::find(seen.begin(), seen.end(), d.key) != seen.end()) continue;
      seen.push_back(d.key);
      std::vector<std::string> row = {std::string(d.key)};
      for (fm::EngineKind x : engines)
        row.push_back(param_applies(x, d.key) ? fm::get_param(fm::default_params(x), d.key) : "-");
      std::string range;
      if (!d.choices.empty()) {
        for (std::string_view c : d.choices) {
          if (!range.empty()) range += '|';
          range += c;
        }
      } else {
        range = std::to_string(d.min) + ".." + std::to_string(d.max);
      }
      row.push_back(range);
      row.push_back(std::string(d.unit));
      row.push_back(std::string(d.help));
      rows.push_back(std::move(row));
    }
  os << "\nModel parameters (--param KEY=VALUE, --config FILE.json, whatif --sweep KEY=V1,V2,...; defaults and "
        "sources in docs/models.md;\n'-': not a parameter of that engine):\n";
  const std::vector<std::string> head = {"key", "tensor-core", "cube", "range", "unit", "meaning"};
  std::vector<size_t> w(head.size());
  for (size_t c = 0; c < head.size(); ++c) {
    w[c] = head[c].size();
    for (const auto& r : rows) w[c] = std::max(w[c], r[c].size());
  }
  auto line = [&](const std::vector<std::string>& r) {
    std::string l = " ";
    for (size_t c = 0; c < r.size(); ++c) {
      const std::string pad(w[c] - r[c].size(), ' ');
      l += " " + ((c == 1 || c == 2) ? pad + r[c] : (c + 1 < r.size() ? r[c] + pad : r[c])) + " ";
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    os << l << "\n";
  };
  line(head);
  for (const auto& r : rows) line(r);
}
#endif

void add_numerics_option(po::options_description& od) {
  od.add_options()("numerics", po::value<std::string>()->value_name("K=V,..."),
                   "golden numerics changed from --model's preset, e.g. frac_bits=25,term_round=rne (keys: k, "
                   "group, dequant, products, accumulate, frac_bits, align, term_round, out_round, c, round_every, "
                   "flush_subnormals, signed_zero; docs/numerics.md)");
}

Model apply_numerics(const po::variables_map& vm, MmaConfig& cfg, Model preset) {
  if (!vm.count("numerics")) return preset;
  try {
    cfg.numerics = preset_numerics(cfg, preset);
    parse_numerics(vm["numerics"].as<std::string>(), cfg.numerics);
    validate_mma_config(cfg, Model::Custom);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--numerics: ") + e.what());
  }
  cfg.model = Model::Custom;
  return Model::Custom;
}

}  // namespace fp4sim::cli
