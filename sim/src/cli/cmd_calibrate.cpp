// fp4sim calibrate: runs public measured GEMM kernel results (models/calibration/kernels.csv, built
// in; --data FILE for another table) through the models in timing-only mode, one job per point as
// `fp4sim whatif` runs one shape, and prints model time vs measured time with the signed error per
// point, then mean and max |error| per engine (docs/models.md, "Calibration").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli.hpp"
#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/manifest.hpp"
#include "fp4sim/linear.hpp"
#ifdef FP4SIM_HAVE_MODELS
#include "fp4sim/models/models.hpp"
#include "fp4sim_calibration_csv.hpp"  // kCalibrationCsv: models/calibration/kernels.csv (sim/CMakeLists.txt)
#endif

namespace fp4sim::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr const char* kUsage =
    "calibrate [--engine tensor-core|cube|both] [--data FILE.csv] [--timing analytic|cycle]\n"
    "           [--param KEY=VALUE ...] [--config FILE.json] [--harness METHOD=NS ...] [--max-mean-error PCT]\n"
    "           [--max-error PCT] [--json OUT] [--force]";

#ifdef FP4SIM_HAVE_MODELS
namespace fm = fp4sim::models;
using fm::EngineKind;

// A chip a point names: the engine whose default parameters model it (their clock_mhz and the
// sustained clocks turn the model's cycles into time: docs/models.md, "Parameters, defaults and sources").
struct Chip {
  std::string_view name;
  EngineKind engine;
};
constexpr Chip kChips[] = {
    {"B200", EngineKind::TensorCore},
    {"910B2", EngineKind::Cube},
};

std::string chip_list() {
  std::string s;
  for (const Chip& c : kChips) s += (s.empty() ? "" : ", ") + std::string(c.name);
  return s;
}

// One row of the table, as read.
struct Point {
  size_t line = 0;
  std::string id, chip, format, kernel, unit, out_dtype, source, conditions, timing, kernel_params;
  uint64_t m = 0, n = 0, k = 0;
  uint64_t extra_kernels = 0;  // kernels the timed region launches besides the GEMM (the benchmark's own)
  std::string role = "check";  // check, fitted or bound (kRoles)
  double measured = 0;  // in `unit`
  const Chip* c = nullptr;
  double measured_us() const {
    return unit == "us" ? measured
                        : 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / (measured * 1e6);
  }
};

// What the model runs for a measured format on a chip (models/calibration/README.md). nullopt: the
// model has no such datapath; the row says so.
struct Proxy {
  BlockFormat format;
  bool fp16_cube = false;  // the cube's FP16-equivalent: pe_k 16, operand bytes scaled by 9/32
  std::string what;        // for the table
};
// How a benchmark timed the kernel, and what that adds to the kernel's own time (launch_ns covers
// the kernel itself: launch to the last store, as a profiler's kernel duration shows it). The
// graph default is fitted (docs/models.md, "Calibration"); --harness METHOD=NS sets one.
struct Harness {
  std::string_view method;
  double ns;
};
constexpr Harness kHarnesses[] = {
    {"kernel", 0},     // a profiler's kernel duration (CUPTI, nsys): nothing but the kernel
    {"graph", 1250},   // CUDA graph replays timed by CUDA events, per launch: the gap between graph nodes
};
// What a point is for. fitted and check points are scored (mean and max |error|); a bound is a
// kernel the model cannot name (a closed engine's untuned default), for which the mapper's best
// mapping, a tuned kernel, may be faster by any amount but not slower by more than --max-error.
constexpr std::string_view kRoles[] = {"check", "fitted", "bound"};
bool scored(const std::string& role) { return role != "bound"; }

// Only a method that times a region (not one kernel's duration) sees the other kernels in it.
bool times_region(std::string_view method) { return method == "graph"; }

// One more kernel in the timed region, in ns: the method's per-launch time, and the kernel itself,
// a scalar op (the benchmark's own arithmetic on 0-dim tensors): its launch and prologue, then one
// dependent L2 round trip for its load and one for its store.
double extra_kernel_ns(const fm::Params& p, double harness_ns) {
  return harness_ns + static_cast<double>(p.launch_ns) +
         2.0 * static_cast<double>(p.l2_latency) * 1000.0 / static_cast<double>(p.clock_mhz);
}

std::string harness_list() {
  std::string s;
  for (const Harness& h : kHarnesses) s += (s.empty() ? "" : ", ") + std::string(h.method);
  return s;
}

std::optional<Proxy> proxy_for(const Point& p) {
  if (p.c->engine == EngineKind::TensorCore) {
    if (p.format == "nvfp4") return Proxy{BlockFormat::Nvfp4, false, "nvfp4"};
    if (p.format == "mxfp4") return Proxy{BlockFormat::Mxfp4, false, "mxfp4"};
    if (p.format == "mxfp8") return Proxy{BlockFormat::Mxfp8E4M3, false, "mxfp8-e4m3"};
    return std::nullopt;
  }
  if (p.format == "fp16" || p.format == "bf16") return Proxy{BlockFormat::Hif4, true, "hif4 as fp16"};
  if (p.format == "hif4") return Proxy{BlockFormat::Hif4, false, "hif4"};
  if (p.format == "nvfp4") return Proxy{BlockFormat::Nvfp4, false, "nvfp4"};
  if (p.format == "mxfp4") return Proxy{BlockFormat::Mxfp4, false, "mxfp4"};
  return std::nullopt;
}

// The FP16-equivalent cube: the FP16 MAC rate (16 x 16 x 16) and, for every operand path and buffer,
// the bytes an FP16 element takes over those a HiF4 element takes: 2 / (0.5 + 4/64) = 32/9. Scaling
// those parameters by 9/32 makes the HiF4 datapath move and hold as many elements per cycle as FP16.
// The FP32 accumulator side (L0C, FixPipe, the store link) is the same in both and stays.
void apply_fp16_cube(fm::Params& p) {
  p.pe_k = 16;
  for (int64_t* v : {&p.dram_bytes_per_cycle, &p.l2_bytes, &p.l2_bytes_per_cycle, &p.core_load_bytes_per_cycle,
                     &p.l1_bytes, &p.l0a_bytes, &p.l0b_bytes, &p.mte1_bytes_per_cycle, &p.scale_buffer_bytes})
    *v = std::max<int64_t>(1, *v * 9 / 32);
}

// A point's kernel_params: space-separated KEY=VALUE model parameters that pin what the measured
// kernel fixes in its source (its tile shape, cluster), applied over the run's parameters.
void apply_kernel_params(fm::Params& p, const std::string& text) {
  std::istringstream in(text);
  for (std::string kv; in >> kv;) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw std::invalid_argument("expected KEY=VALUE, got '" + kv + "'");
    fm::set_param(p, kv.substr(0, eq), kv.substr(eq + 1));
  }
}

// RFC 4180 fields of one line (quotes allowed, doubled quotes inside them). Throws on an unclosed quote.
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
      else if (ch == '"') quoted = false;
      else out.back() += ch;
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      out.emplace_back();
    } else {
      out.back() += ch;
    }
  }
  if (quoted) throw std::runtime_error("unclosed quote");
  return out;
}

double parse_positive(const std::string& where, const std::string& col, const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || !std::isfinite(v) || v <= 0)
    throw std::runtime_error(where + ": " + col + " is not a positive number: '" + text + "'");
  return v;
}

uint64_t parse_dim(const std::string& where, const std::string& col, const std::string& text) {
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  if (!digits || text.size() > 9 || std::stoull(text) == 0)
    throw std::runtime_error(where + ": " + col + " is not a positive integer below 10^9: '" + text + "'");
  return std::stoull(text);
}

// The table: '#' lines are comments, the first other line is the header (columns in any order,
// extra ones ignored), then one point per line. Every error names the file and line.
std::vector<Point> parse_table(const std::string& text, const std::string& name) {
  constexpr std::string_view kRequired[] = {"id", "chip", "format", "m", "n", "k", "measured", "unit"};
  constexpr std::string_view kOptional[] = {"kernel", "out_dtype", "source", "conditions", "timing", "kernel_params",
                                            "extra_kernels", "role"};
  std::vector<Point> points;
  std::vector<std::string> head;
  std::istringstream in(text);
  size_t lineno = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const std::string where = "calibrate: " + name + " line " + std::to_string(lineno);
    std::vector<std::string> f;
    try {
      f = split_csv(line);
    } catch (const std::exception& e) {
      throw std::runtime_error(where + ": " + e.what());
    }
    if (head.empty()) {
      head = f;
      for (std::string_view r : kRequired)
        if (std::find(head.begin(), head.end(), r) == head.end())
          throw std::runtime_error(where + ": the header has no column '" + std::string(r) + "'");
      continue;
    }
    if (f.size() != head.size())
      throw std::runtime_error(where + ": " + std::to_string(f.size()) + " fields, the header has " +
                               std::to_string(head.size()));
    const auto col = [&](std::string_view c) -> std::string {
      const auto it = std::find(head.begin(), head.end(), c);
      return it == head.end() ? std::string() : f[static_cast<size_t>(it - head.begin())];
    };
    Point p;
    p.line = lineno;
    p.id = col("id");
    p.chip = col("chip");
    p.format = col("format");
    p.unit = col("unit");
    if (p.id.empty()) throw std::runtime_error(where + ": empty id");
    for (const Point& o : points)
      if (o.id == p.id) throw std::runtime_error(where + ": id '" + p.id + "' repeats line " + std::to_string(o.line));
    for (const Chip& c : kChips)
      if (c.name == p.chip) p.c = &c;
    if (!p.c) throw std::runtime_error(where + ": unknown chip '" + p.chip + "' (one of " + chip_list() + ")");
    if (p.format.empty()) throw std::runtime_error(where + ": empty format");
    p.m = parse_dim(where, "m", col("m"));
    p.n = parse_dim(where, "n", col("n"));
    p.k = parse_dim(where, "k", col("k"));
    p.measured = parse_positive(where, "measured", col("measured"));
    if (p.unit != "us" && p.unit != "tflops")
      throw std::runtime_error(where + ": unit must be us or tflops, got '" + p.unit + "'");
    for (std::string_view o : kOptional) {
      const std::string v = col(o);
      if (o == "kernel") p.kernel = v;
      else if (o == "out_dtype") {
        if (!v.empty() && v != "fp32" && v != "bf16" && v != "fp16" && v != "fp8")
          throw std::runtime_error(where + ": out_dtype must be empty, fp32, bf16, fp16 or fp8, got '" + v + "'");
        p.out_dtype = v;
      }
      else if (o == "source") p.source = v;
      else if (o == "timing") {
        if (!v.empty() && std::none_of(std::begin(kHarnesses), std::end(kHarnesses),
                                       [&](const Harness& h) { return h.method == v; }))
          throw std::runtime_error(where + ": timing must be empty or one of " + harness_list() + ", got '" + v + "'");
        p.timing = v;
      }
      else if (o == "role") {
        if (!v.empty() && std::find(std::begin(kRoles), std::end(kRoles), v) == std::end(kRoles))
          throw std::runtime_error(where + ": role must be empty, check, fitted or bound, got '" + v + "'");
        if (!v.empty()) p.role = v;
      }
      else if (o == "extra_kernels") {
        const bool digits = !v.empty() && v.size() <= 2 && std::all_of(v.begin(), v.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
        if (!v.empty() && !digits)
          throw std::runtime_error(where + ": extra_kernels must be empty or an integer from 0 to 99, got '" + v + "'");
        if (digits) p.extra_kernels = std::stoull(v);
      }
      else if (o == "kernel_params") {
        p.kernel_params = v;
        fm::Params probe = fm::default_params(p.c->engine);
        try {
          apply_kernel_params(probe, v);
        } catch (const std::exception& e) {
          throw std::runtime_error(where + ": kernel_params: " + e.what());
        }
      }
      else p.conditions = v;
    }
    if (p.extra_kernels > 0 && !times_region(p.timing))
      throw std::runtime_error(where + ": extra_kernels needs a timing method that times a region (graph), got '" +
                               p.timing + "'");
    points.push_back(std::move(p));
  }
  if (head.empty()) throw std::runtime_error("calibrate: " + name + ": no header line");
  if (points.empty()) throw std::runtime_error("calibrate: " + name + ": no points");
  return points;
}

struct Outcome {
  const Point* p;
  std::string model_format;  // what the model ran ("" when unsupported)
  std::optional<double> model_us;
  std::string note;  // "not supported by the model" / the model's error / the mapping
  double harness_us = 0;  // of model_us: what the point's timing method adds
  double error_pct() const { return (*model_us - p->measured_us()) / p->measured_us() * 100.0; }
};

// mean / max |error| over the scored points run (fitted and checks), the checks alone, and the
// bounds: how many were run and the most the model is slower than one (its error, signed).
struct Summary {
  size_t run = 0, unsupported = 0, failed = 0;
  size_t scored = 0, fitted = 0, checks = 0, bounds = 0;
  double mean_abs = 0, max_abs = 0, check_mean = 0, check_max = 0, bound_max = -HUGE_VAL;
  std::string max_id, bound_id;
};
// bounds_scored: count the bounds as scored points too (the summary's "with the bounds" figures).
Summary summarize(const std::vector<Outcome>& rows, std::optional<EngineKind> engine, bool bounds_scored = false) {
  Summary s;
  double sum = 0, check_sum = 0;
  for (const Outcome& o : rows) {
    if (engine && o.p->c->engine != *engine) continue;
    if (o.model_format.empty()) {
      ++s.unsupported;
    } else if (!o.model_us) {
      ++s.failed;
    } else {
      ++s.run;
      const double e = o.error_pct(), a = std::fabs(e);
      if (!bounds_scored && !scored(o.p->role)) {
        ++s.bounds;
        if (e >= s.bound_max) s.bound_max = e, s.bound_id = o.p->id;
        continue;
      }
      ++s.scored;
      sum += a;
      if (a >= s.max_abs) s.max_abs = a, s.max_id = o.p->id;
      if (o.p->role == "fitted") {
        ++s.fitted;
      } else {
        ++s.checks;
        check_sum += a;
        s.check_max = std::max(s.check_max, a);
      }
    }
  }
  s.mean_abs = s.scored ? sum / static_cast<double>(s.scored) : 0.0;
  s.check_mean = s.checks ? check_sum / static_cast<double>(s.checks) : 0.0;
  return s;
}
#endif

}  // namespace

int cmd_calibrate(const Invocation& inv) {
  po::options_description od("Options");
  od.add_options()
      ("engine", po::value<std::string>()->value_name("E"), "tensor-core, cube or both (default both): the points of "
       "chips modeled by that engine")
      ("data", po::value<std::string>()->value_name("FILE"),
       "table of measured points (default: models/calibration/kernels.csv, built in)")
      ("timing", po::value<std::string>()->value_name("T"), "analytic (default) or cycle")
      ("harness", po::value<std::vector<std::string>>()->value_name("METHOD=NS")->composing(),
       "what a timing method adds to the kernel's time, in ns (repeatable; methods: kernel, graph; "
       "defaults 0, 1250)")
      ("max-mean-error", po::value<std::string>()->value_name("PCT"),
       "exit 1 when the mean |error| of the scored points (fitted and checks) exceeds PCT percent")
      ("max-error", po::value<std::string>()->value_name("PCT"),
       "exit 1 when a scored point's |error| exceeds PCT percent, or the model is slower than a bound point by "
       "more than PCT percent")
      ("json", po::value<std::string>()->value_name("OUT"), "also write every point and the summary as JSON")
      ("force", po::bool_switch(), "replace OUT if it already exists");
#ifdef FP4SIM_HAVE_MODELS
  add_model_param_options(od);
#endif
  po::variables_map vm;
  if (!parse_options(inv, kUsage, od, vm)) {
#ifdef FP4SIM_HAVE_MODELS
    print_model_params(std::cout);
#endif
    return kExitOk;
  }
  const std::string engine = get_or(vm, "engine", "both");
  if (engine != "tensor-core" && engine != "cube" && engine != "both")
    throw UsageError("--engine must be tensor-core, cube or both");
  const auto percentage = [&](const char* opt) -> std::optional<double> {
    if (!vm.count(opt)) return std::nullopt;
    const std::string t = vm[opt].as<std::string>();
    size_t used = 0;
    double v = -1;
    try {
      v = std::stod(t, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != t.size() || !std::isfinite(v) || v < 0)
      throw UsageError(std::string("--") + opt + ": expected a percentage >= 0, got '" + t + "'");
    return v;
  };
  const std::optional<double> max_mean = percentage("max-mean-error"), max_error = percentage("max-error");
  if (vm["force"].as<bool>() && !vm.count("json")) throw UsageError("--force: only applies to --json OUT");
  std::vector<std::pair<std::string, double>> harness_ns;
#ifdef FP4SIM_HAVE_MODELS
  for (const Harness& h : kHarnesses) harness_ns.emplace_back(std::string(h.method), h.ns);
  if (vm.count("harness"))
    for (const std::string& t : vm["harness"].as<std::vector<std::string>>()) {
      const size_t eq = t.find('=');
      const std::string key = eq == std::string::npos ? t : t.substr(0, eq);
      const auto it = std::find_if(harness_ns.begin(), harness_ns.end(), [&](const auto& h) { return h.first == key; });
      if (it == harness_ns.end()) throw UsageError("--harness: unknown timing method '" + key + "' (one of " + harness_list() + ")");
      const std::string v = eq == std::string::npos ? "" : t.substr(eq + 1);
      size_t used = 0;
      double ns = -1;
      try {
        ns = std::stod(v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (v.empty() || used != v.size() || !std::isfinite(ns) || ns < 0)
        throw UsageError("--harness: expected METHOD=NS with NS >= 0, got '" + t + "'");
      it->second = ns;
    }
#endif
#ifndef FP4SIM_HAVE_MODELS
  (void)max_mean;
  (void)max_error;
  throw std::runtime_error("fp4sim was built without the SystemC models (configure with FP4SIM_SYSTEMC=ON)");
#else
  fm::Timing timing = fm::Timing::Analytic;
  if (vm.count("timing") && !fm::parse_timing(vm["timing"].as<std::string>(), timing))
    throw UsageError("--timing: expected analytic or cycle, got '" + vm["timing"].as<std::string>() + "'");

  // Parameters: each engine's defaults <- calibrate's own <- --config <- --param (usage errors
  // before any work). Calibrate's own: a point whose kernel_params do not pin the kernel measures a
  // library's heuristic or autotuned choice, so the mapper chooses its cluster too (cluster_sms 0);
  // the pinned points state theirs.
  const std::vector<EngineKind> both = {EngineKind::TensorCore, EngineKind::Cube};
  std::vector<ParamSetting> settings{{"cluster_sms", "0", "calibrate", true, EngineKind::TensorCore}};
  for (ParamSetting& s : model_param_settings(vm)) settings.push_back(std::move(s));
  const std::vector<fm::Params> base = model_params(both, settings);

  // The table: built in, or --data.
  std::string text = kCalibrationCsv, name = "built-in kernels.csv";
  if (vm.count("data")) {
    name = vm["data"].as<std::string>();
    const std::vector<uint8_t> bytes = io::read_file(name);
    text.assign(bytes.begin(), bytes.end());
  }
  const std::vector<Point> all = parse_table(text, name);
  std::vector<const Point*> points;
  for (const Point& p : all)
    if (engine == "both" || fm::engine_name(p.c->engine) == engine) points.push_back(&p);
  if (points.empty()) throw std::runtime_error("calibrate: " + name + " has no point for " + engine);

  Outputs outs(vm["force"].as<bool>());
  const bool want_json = vm.count("json") > 0;  // (handle 0 is a valid handle)
  const size_t json_h = want_json ? outs.file("json", vm["json"].as<std::string>()) : 0;

  for (const fm::Params& p : base) fm::reserve_cores(p.engine, p.cores);

  std::vector<Outcome> rows;
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& pt = *points[i];
    Outcome o{&pt, "", std::nullopt, ""};
    const std::optional<Proxy> proxy = proxy_for(pt);
    if (!proxy) {
      o.note = "not supported by the model (" + std::string(fm::engine_name(pt.c->engine)) + " has no " + pt.format + ")";
      rows.push_back(std::move(o));
      continue;
    }
    o.model_format = proxy->what;
    fm::Params prm = base[pt.c->engine == EngineKind::TensorCore ? 0 : 1];
    if (proxy->fp16_cube) apply_fp16_cube(prm);
    // The point's output type when it states one (else the parameters' out_dtype).
    if (!pt.out_dtype.empty()) fm::set_param(prm, "out_dtype", pt.out_dtype);
    apply_kernel_params(prm, pt.kernel_params);  // validated when the table was read
    fm::Workload w;
    w.cfg = mma_config_for(proxy->format);
    w.model = w.cfg.model;
    w.M = pt.m;
    w.N = pt.n;
    w.K = pt.k;
    w.timing_only = true;
    fm::RunOptions ro;
    ro.timing = timing;
    if (timing == fm::Timing::Cycle)
      std::fprintf(stderr, "calibrate: point %zu of %zu (%s, %llu x %llu x %llu)\n", i + 1, points.size(),
                   pt.id.c_str(), static_cast<unsigned long long>(pt.m), static_cast<unsigned long long>(pt.n),
                   static_cast<unsigned long long>(pt.k));
    try {
      const fm::Stats s = fm::run(prm, w, ro).stats;
      // At the sustained clock of the point's operand kind, plus what the benchmark's timing method adds.
      double add_ns = 0;
      for (const auto& [m, ns] : harness_ns)
        if (m == pt.timing) add_ns = ns;
      add_ns += static_cast<double>(pt.extra_kernels) * extra_kernel_ns(prm, add_ns);
      o.model_us = s.time_us() + add_ns / 1000.0;
      o.harness_us = add_ns / 1000.0;
      o.note = s.mapping.str();
      if (prm.engine == EngineKind::TensorCore && prm.cta_group > 1) o.note += " cta_group=" + std::to_string(prm.cta_group);
    } catch (const std::exception& e) {
      // One point the model cannot run (a shape it rejects, a runtime failure) is a row, not the end.
      o.note = std::string("model error: ") + e.what();
    }
    rows.push_back(std::move(o));
  }

  // ---- output ----
  std::vector<std::optional<EngineKind>> groups;
  for (EngineKind e : both)
    if (std::any_of(points.begin(), points.end(), [&](const Point* p) { return p->c->engine == e; })) groups.push_back(e);
  const Summary total = summarize(rows, std::nullopt);
  if (want_json) {
    io::Json j;
    j["tool"] = "fp4sim calibrate";
    j["version"] = std::string(io::tool_version());
    j["data"] = name;
    j["timing"] = std::string(fm::timing_name(timing));
    j["points"] = io::Json::array();
    for (const Outcome& o : rows) {
      io::Json e;
      e["id"] = o.p->id;
      e["role"] = o.p->role;
      e["chip"] = o.p->chip;
      e["engine"] = std::string(fm::engine_name(o.p->c->engine));
      e["format"] = o.p->format;
      e["model_format"] = o.model_format;
      e["m"] = o.p->m;
      e["n"] = o.p->n;
      e["k"] = o.p->k;
      e["measured_us"] = o.p->measured_us();
      e["model_us"] = o.model_us ? io::Json(*o.model_us) : io::Json(nullptr);
      e["error_pct"] = o.model_us ? io::Json(o.error_pct()) : io::Json(nullptr);
      e["timing_method"] = o.p->timing;
      e["harness_us"] = o.harness_us;
      e["extra_kernels"] = o.p->extra_kernels;
      e["note"] = o.note;
      e["source"] = o.p->source;
      j["points"].push_back(e);
    }
    const auto sum_json = [](const Summary& s) {
      io::Json e;
      e["run"] = s.run;
      e["unsupported"] = s.unsupported;
      e["failed"] = s.failed;
      e["fitted"] = s.fitted;
      e["checks"] = s.checks;
      e["bounds"] = s.bounds;
      e["mean_abs_error_pct"] = s.mean_abs;
      e["max_abs_error_pct"] = s.max_abs;
      e["max_id"] = s.max_id;
      e["check_mean_abs_error_pct"] = s.check_mean;
      e["check_max_abs_error_pct"] = s.check_max;
      e["bound_max_error_pct"] = s.bounds ? io::Json(s.bound_max) : io::Json(nullptr);
      e["bound_max_id"] = s.bound_id;
      return e;
    };
    j["summary"]["all"] = sum_json(total);
    for (const auto& g : groups) j["summary"][std::string(fm::engine_name(*g))] = sum_json(summarize(rows, g));
    outs.set().write(json_h, j.dump(2) + "\n");
    outs.commit();
  }

  std::vector<std::vector<std::string>> cells;
  for (const Outcome& o : rows)
    cells.push_back({o.p->id, o.p->chip, o.p->format, o.model_format.empty() ? "-" : o.model_format,
                     std::to_string(o.p->m), std::to_string(o.p->n), std::to_string(o.p->k),
                     o.model_us ? fmt_num("%.2f", *o.model_us) : "-", fmt_num("%.2f", o.p->measured_us()),
                     o.model_us ? fmt_num("%+.1f", o.error_pct()) : "-", o.p->role,
                     (o.p->timing.empty() ? std::string()
                                          : o.p->timing +
                                                (o.p->extra_kernels ? " and " + std::to_string(o.p->extra_kernels) + " more kernels" : "") +
                                                " +" + fmt_num("%.2f", o.harness_us) + " us; ") +
                         o.note});
  std::cout << "fp4sim calibrate: " << name << ", " << fm::timing_name(timing) << " timing\n";
  print_table(std::cout, {"id", "chip", "format", "model", "m", "n", "k", "model_us", "measured_us", "error_%", "role", "note"},
              cells, 4);
  for (const auto& g : groups) {
    const Summary s = summarize(rows, g);
    std::cout << fm::engine_name(*g) << ": " << s.run << " points run, " << s.unsupported << " not supported, "
              << s.failed << " failed; " << s.scored << " scored (" << s.fitted << " fitted, " << s.checks
              << " checks): mean |error| " << fmt_num("%.1f", s.mean_abs) << " %, max |error| "
              << fmt_num("%.1f", s.max_abs) << " % (" << (s.max_id.empty() ? "-" : s.max_id) << "); checks "
              << fmt_num("%.1f", s.check_mean) << " % / " << fmt_num("%.1f", s.check_max) << " %";
    if (s.bounds)
      std::cout << "; " << s.bounds << " bounds, the model at most " << fmt_num("%+.1f", s.bound_max) << " % ("
                << s.bound_id << ")";
    std::cout << "\n";
  }
  std::cout << "all: " << total.run << " points run, " << total.scored << " scored; mean |error| "
            << fmt_num("%.1f", total.mean_abs) << " %, max |error| " << fmt_num("%.1f", total.max_abs) << " %";
  if (total.bounds) {
    // The same figures with the bounds scored as points, so that the table's choice shows.
    const Summary with = summarize(rows, std::nullopt, true);
    std::cout << "; with the " << total.bounds << " bounds scored too: " << fmt_num("%.1f", with.mean_abs) << " %, "
              << fmt_num("%.1f", with.max_abs) << " %";
  }
  std::cout << "\n";
  if (total.failed)
    throw std::runtime_error("calibrate: " + std::to_string(total.failed) + " of " + std::to_string(rows.size()) +
                             " points failed in the model (see the table)");
  if (max_mean && total.mean_abs > *max_mean)
    throw std::runtime_error("calibrate: mean |error| " + fmt_num("%.2f", total.mean_abs) +
                             " % exceeds --max-mean-error " + fmt_num("%.2f", *max_mean) + " %");
  if (max_error) {
    // The first offender in table order: a scored point off by more, or a bound the model exceeds.
    for (const Outcome& o : rows) {
      if (!o.model_us) continue;
      const double e = o.error_pct();
      if (scored(o.p->role) ? std::fabs(e) > *max_error : e > *max_error)
        throw std::runtime_error("calibrate: " + o.p->id + " (" + o.p->role + ") is off by " + fmt_num("%+.1f", e) +
                                 " %, beyond --max-error " + fmt_num("%.2f", *max_error) + " %");
    }
  }
  return kExitOk;
#endif
}

}  // namespace fp4sim::cli
