// fp4sim quality: one LLM-like tensor through every block format, one table of error metrics.
// What scripts/run.sh runs by default.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <sstream>

#include "cli/cli.hpp"
#include "fp4sim/hadamard.hpp"
#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/manifest.hpp"
#include "fp4sim/metrics.hpp"
#include "fp4sim/quant.hpp"
#include "fp4sim/synth.hpp"

namespace fp4sim::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr const char* kUsage =
    "quality [--rows R --cols C --seed S] [--input X.npy] [--json FILE [--force] [--durable]]";

constexpr size_t kDefaultRows = 1024, kDefaultCols = 4096;
// Largest tensor accepted (elements): several float copies are alive at once.
constexpr uint64_t kMaxElements = uint64_t{1} << 28;

struct Config {
  BlockFormat format;
  const char* options;  // shown in the table
  QuantOptions opt;
};

QuantOptions with(void (*set)(QuantOptions&)) {
  QuantOptions o;
  set(o);
  return o;
}

// The comparison the HiF4 and NVFP4 papers draw, all with RNE element rounding.
std::vector<Config> configs() {
  return {
      {BlockFormat::Nvfp4, "PTS, 1x16", {}},
      {BlockFormat::Nvfp4, "PTS, 2D 16x16", with([](QuantOptions& o) { o.two_d = true; })},
      {BlockFormat::Nvfp4, "PTS, RHT16 (TE signs)", with([](QuantOptions& o) { o.rht = 16; })},
      {BlockFormat::Mxfp4, "scale floor", {}},
      {BlockFormat::Mxfp4, "scale rceil", with([](QuantOptions& o) { o.scale_rule = ScaleRule::Ceil; })},
      {BlockFormat::Mxfp6E2M3, "scale floor", {}},
      {BlockFormat::Mxfp6E3M2, "scale floor", {}},
      {BlockFormat::Mxfp8E4M3, "scale floor", {}},
      {BlockFormat::Mxfp8E5M2, "scale floor", {}},
      {BlockFormat::Hif4, "", {}},
      {BlockFormat::Hif4, "RHT64 (seed 0)", with([](QuantOptions& o) { o.rht = 64; })},
  };
}

double bits_per_value(const BlockFormatInfo& fi) {
  return fi.elem->bits + (fi.scale_word32 ? 32.0 : 8.0) / fi.block;
}

struct Row {
  std::string format, options;
  double bits = 0;
  Quality q;
  double ms = 0;
  std::string skipped;  // non-empty: why this configuration could not run on the tensor
};

void print_table(std::ostream& os, const std::vector<Row>& rows) {
  const std::vector<std::string> head = {"format", "options", "bits/val", "MSE", "QSNR dB",
                                         "bias", "zero %", "sat %", "time ms"};
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows) {
    if (!r.skipped.empty()) {
      cells.push_back({r.format, r.options, fmt_num("%.2f", r.bits), "skipped: " + r.skipped});
      continue;
    }
    cells.push_back({r.format, r.options, fmt_num("%.2f", r.bits), fmt_num("%.4e", r.q.mse),
                     fmt_num("%.2f", r.q.qsnr_db), fmt_num("%+.3e", r.q.bias),
                     fmt_num("%.3f", 100.0 * r.q.frac_zero), fmt_num("%.4f", 100.0 * r.q.frac_saturated),
                     fmt_num("%.1f", r.ms)});
  }
  cli::print_table(os, head, cells, 2);  // format and options left-aligned
}

io::Json num(double v) {
  // JSON has no NaN / Inf: those become null.
  return std::isfinite(v) ? io::Json(v) : io::Json(nullptr);
}

}  // namespace

int cmd_quality(const Invocation& inv) {
  po::options_description od("Options");
  od.add_options()
      ("rows", po::value<std::string>()->value_name("R"), "rows of the synthetic tensor (default 1024)")
      ("cols", po::value<std::string>()->value_name("C"),
       "columns (channels) of the synthetic tensor, the block axis (default 4096)")
      ("seed", po::value<std::string>()->value_name("S"), "seed of the synthetic tensor (default 0)")
      ("input", po::value<std::string>()->value_name("X.npy"),
       "use this tensor instead (float32 or uint16 BF16 bits; last axis = block axis)")
      ("json", po::value<std::string>()->value_name("FILE"), "also write the results as JSON (atomically)")
      ("force", po::bool_switch(), "replace FILE if it already exists");
  po::variables_map vm;
  if (!parse_options(inv, kUsage, od, vm)) return kExitOk;

  const bool from_file = vm.count("input") != 0;
  if (from_file && (vm.count("rows") || vm.count("cols") || vm.count("seed")))
    throw UsageError("--input cannot be combined with --rows, --cols or --seed");
  size_t rows = kDefaultRows, cols = kDefaultCols;
  uint64_t seed = 0;
  if (vm.count("rows")) rows = parse_uint("rows", vm["rows"].as<std::string>(), 1, kMaxElements);
  if (vm.count("cols")) cols = parse_uint("cols", vm["cols"].as<std::string>(), 1, kMaxElements);
  if (vm.count("seed")) seed = parse_uint("seed", vm["seed"].as<std::string>(), 0, UINT64_MAX);
  if (static_cast<uint64_t>(rows) * cols > kMaxElements)
    throw UsageError("--rows x --cols = " + std::to_string(static_cast<uint64_t>(rows) * cols) +
                     " elements exceeds the limit " + std::to_string(kMaxElements));
  const fs::path json_path = vm.count("json") ? fs::path(vm["json"].as<std::string>()) : fs::path();
  // Fail before the work, not after it.
  if (vm["force"].as<bool>() && !vm.count("json")) throw UsageError("--force: only applies to --json FILE");
  Outputs outs(vm["force"].as<bool>());
  const size_t json_h = vm.count("json") ? outs.file("json", json_path) : 0;

  std::vector<float> x;
  io::Json tensor;
  if (from_file) {
    const fs::path in = vm["input"].as<std::string>();
    FloatTensor t = load_float_tensor(in);
    if (t.array.shape.empty() || t.array.size() == 0)
      throw std::runtime_error(in.string() + ": need a non-empty array of rank >= 1");
    if (t.array.size() > kMaxElements)
      throw std::runtime_error(in.string() + ": " + std::to_string(t.array.size()) +
                               " elements exceeds the limit " + std::to_string(kMaxElements));
    cols = t.array.shape.back();
    rows = t.array.size() / cols;
    x = std::move(t.values);
    tensor = {{"source", in.string()}, {"shape", t.array.shape}, {"dtype", io::dtype_name(t.array.dtype)}};
  } else {
    x = llm_activations(rows, cols, seed);
    tensor = {{"source", "llm_activations"},
              {"shape", {rows, cols}},
              {"seed", seed},
              {"outlier_channel_fraction", 1.0 / 128.0},
              {"outlier_scale", 50.0}};
  }
  tensor["rows"] = rows;
  tensor["cols"] = cols;

  std::vector<Row> results;
  for (const Config& c : configs()) {
    const BlockFormatInfo& fi = info(c.format);
    Row r{std::string(fi.name), c.options, bits_per_value(fi), {}, 0, {}};
    const size_t need = static_cast<size_t>(std::max(fi.block, c.opt.rht));
    if (cols % need != 0) {
      r.skipped = "last axis " + std::to_string(cols) + " is not a multiple of " + std::to_string(need);
      results.push_back(r);
      continue;
    }
    try {
      const auto t0 = std::chrono::steady_clock::now();
      const Quantized q = quantize(c.format, x, rows, cols, c.opt);
      const auto t1 = std::chrono::steady_clock::now();
      r.ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
      const std::vector<float> dq = dequantize(q);
      if (c.opt.rht != 0) {
        // The codes describe the rotated tensor: measure against exactly what the quantizer saw.
        std::vector<float> xr = x;
        const std::vector<int8_t> signs =
            rht_signs(c.opt.rht, c.opt.rht_seeded || c.opt.rht != 16, c.opt.rht_seed);
        rht_apply(xr, cols, c.opt.rht, signs, c.opt.rht_bf16);
        r.q = quality(xr, dq, q);
      } else {
        r.q = quality(x, dq, q);
      }
    } catch (const std::invalid_argument& e) {
      r.skipped = e.what();
    }
    results.push_back(r);
  }

  if (!json_path.empty()) {
    io::Json j = io::report_header(inv.name, inv.argv);
    j["tensor"] = tensor;
    j["results"] = io::Json::array();
    for (const Row& r : results) {
      io::Json e = {{"format", r.format}, {"options", r.options}, {"bits_per_value", r.bits}};
      if (!r.skipped.empty()) {
        e["skipped"] = r.skipped;
      } else {
        e["mse"] = num(r.q.mse);
        e["qsnr_db"] = num(r.q.qsnr_db);
        e["bias"] = num(r.q.bias);
        e["frac_zero"] = num(r.q.frac_zero);
        e["frac_saturated"] = num(r.q.frac_saturated);
        e["n"] = r.q.n;
        e["n_nonfinite_x"] = r.q.n_nonfinite_x;
        e["n_nonfinite_dq"] = r.q.n_nonfinite_dq;
        e["time_ms"] = r.ms;
      }
      j["results"].push_back(e);
    }
    outs.set().write(json_h, j.dump(2) + "\n");
    outs.commit();
  }
  // Printed last, so a failure above leaves stdout empty (errors are one stderr line).
  std::cout << "tensor: " << (from_file ? tensor["source"].get<std::string>() : "llm_activations")
            << " " << rows << "x" << cols;
  if (!from_file) std::cout << " seed " << seed << " (outlier channels 1/128, scale 50)";
  std::cout << "; blocks along the last axis; element rounding rne\n"
               "MSE/QSNR/bias over finite elements; RHT rows are measured in the rotated domain\n\n";
  print_table(std::cout, results);

  return kExitOk;
}

}  // namespace fp4sim::cli
