#include "cli.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "fp4sim/format.hpp"
#include "fp4sim/io/atomic_file.hpp"

namespace fp4sim::cli {
namespace po = boost::program_options;

bool parse_options(const Invocation& inv, std::string_view usage_line,
                   po::options_description& options, po::variables_map& vm) {
  options.add_options()("help,h", "show this help and exit");
  const po::options_description& all = options;
  try {
    // No prefix guessing: "--form" must not silently mean "--format" in scripts.
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    // An empty positional description makes boost reject stray words instead of dropping them.
    const po::positional_options_description no_positionals;
    po::store(po::command_line_parser(inv.args).options(all).positional(no_positionals).style(style).run(),
              vm);
    if (vm.count("help")) {
      std::cout << "Usage: fp4sim " << usage_line << "\n\n" << inv.summary << "\n\n" << all;
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return true;
}

uint64_t parse_uint(std::string_view option, std::string_view text, uint64_t min, uint64_t max) {
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
  throw UsageError("--" + std::string(option) + ": expected 'on' or 'off', got '" +
                   std::string(text) + "'");
}

std::string get_or(const po::variables_map& vm, const char* name, std::string fallback) {
  return vm.count(name) ? vm[name].as<std::string>() : fallback;
}

FloatTensor load_float_tensor(const std::filesystem::path& path) {
  FloatTensor t;
  try {
    t.file_bytes = io::read_file(path);
  } catch (const io::IoError& e) {
    throw io::NpyError(e.what());
  }
  t.array = io::parse_npy(t.file_bytes, path.string());
  if (t.array.dtype == io::DType::F32) {
    t.values = t.array.values<float>();
  } else if (t.array.dtype == io::DType::U16) {
    const std::vector<uint16_t> bits = t.array.values<uint16_t>();
    t.values.resize(bits.size());
    for (size_t i = 0; i < bits.size(); ++i) t.values[i] = bf16_to_float(bits[i]);
  } else {
    throw std::runtime_error(path.string() + ": input dtype is " +
                             std::string(io::dtype_name(t.array.dtype)) +
                             "; expected float32 or uint16 (BF16 bits)");
  }
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
       "MX scale rule: floor (OCP, default) or ceil")
      ("pts", po::value<std::string>()->value_name("on|off"), "nvfp4 per-tensor FP32 scale (default on)")
      ("2d", po::bool_switch(), "nvfp4: one scale per 16x16 tile")
      ("rht", po::value<std::string>()->value_name("N"),
       "random Hadamard transform of size N (power of two) along the last axis first; 0 = off")
      ("rht-bf16", po::bool_switch(), "round the RHT output to BF16 (as TransformerEngine does)");
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
      throw UsageError("--scale-rule: unknown rule '" + sr + "' (expected floor or ceil)");
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
  return o;
}

void check_output_parent(const std::filesystem::path& file) {
  if (file.filename().empty()) throw UsageError("'" + file.string() + "' is not a file name");
  const std::filesystem::path dir = file.parent_path().empty() ? std::filesystem::path(".") : file.parent_path();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw io::IoError(file.string() + ": parent directory does not exist");
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

}  // namespace fp4sim::cli
