#include "cli.hpp"

#include <charconv>
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

}  // namespace fp4sim::cli
