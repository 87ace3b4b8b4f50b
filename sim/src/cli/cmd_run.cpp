// fp4sim run: the main job (docs/models.md). An LLM-like linear layer Y = X . W^T is quantized by
// the golden library, run on the SystemC tensor-core model (NVFP4, MXFP4) and cube model (HiF4,
// and NVFP4 / MXFP4 on the same grid), every output checked bit for bit against golden gemm, and
// summarized: bit-exact counts, cycles, MACs/cycle, utilization, the top stall cause, error vs FP64.
// Writes OUT/report.json, OUT/report.md and the layer's vectors as a replayable suite in OUT/vectors
// (one case per block format: codes, scales, float inputs, the hardware model's expected D).
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "cli/cli.hpp"
#include "cli/energy_table.hpp"
#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/manifest.hpp"
#include "fp4sim/io/vectors.hpp"
#include "fp4sim/linear.hpp"
#include "fp4sim/synth.hpp"
#ifdef FP4SIM_HAVE_MODELS
#include "fp4sim/models/models.hpp"
#endif
#ifdef FP4SIM_HAVE_RTL
#include "rtl_driver.hpp"
#endif

namespace fp4sim::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr const char* kUsage =
    "run [--m M --n N --k K] [--seed S] [--out DIR] [--threads T] [--quick] [--no-vectors]\n"
    "           [--timing cycle|analytic] [--param KEY=VALUE ...] [--config FILE.json]\n"
    "           [--rtl [--rtl-trace FILE.fst] [--rtl-fault I]] [--trace FILE.vcd] [--force] [--durable]";

#ifdef FP4SIM_HAVE_MODELS
namespace fm = fp4sim::models;

struct Engine {
  const char* engine;  // "tensor-core" / "cube"
  BlockFormat format;
};

struct Row {
  std::string engine, format;
  const fm::Params* params = nullptr;  // the engine's parameters (defaults <- --config <- --param)
  size_t mismatches = 0, total = 0;
  fm::Stats stats;
  GemmError err;
  double model_s = 0, golden_s = 0;
  std::string top_stall;
  // RTL in the loop (--rtl): the Verilated unit is the engine's datapath; every instruction checked.
  std::string rtl_unit;  // empty: no RTL unit computes this configuration (or --rtl not given)
  size_t rtl_checked = 0, rtl_mismatches = 0;
  uint64_t rtl_cycles = 0;
  double rtl_s = 0;
  std::string rtl_first_mismatch;
  std::string rtl_trace;  // FST written for this configuration, if any
  const UnitEnergy* energy = nullptr;  // the unit's energy per MAC (rtl/energy.json); nullptr: none
};

// "t.fst" -> "t.tensor-core-nvfp4.fst": one waveform per configuration.
[[maybe_unused]] std::string trace_for(const std::string& base, const Row& r) {  // --rtl-trace (FP4SIM_HAVE_RTL)
  std::string stem = base;
  if (stem.size() > 4 && stem.compare(stem.size() - 4, 4, ".fst") == 0) stem.resize(stem.size() - 4);
  return stem + "." + r.engine + "-" + r.format + ".fst";
}

std::vector<uint32_t> widen(const Quantized& q) {
  if (info(q.format).scale_word32) return q.scale_words;
  return std::vector<uint32_t>(q.scales.begin(), q.scales.end());
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

io::Json num(double v) { return std::isfinite(v) ? io::Json(v) : io::Json(nullptr); }

#ifdef FP4SIM_HAVE_RTL
using io::hex32;

// RTL in the loop: the engine's datapath. Every step's outputs are computed by the Verilated unit one
// instruction at a time along K (C of instruction t+1 = the RTL's D of instruction t, as the hardware
// chains them), all outputs of the step streamed back to back per instruction. A scoreboard at the
// unit's interface compares every result bit for bit with golden mma_dot on the same operands (C
// included), so an error is caught at the instruction that makes it; the engine's final D is then
// compared with golden gemm like any other run.
class RtlDatapath {
 public:
  // fault: index (in issue order) of one instruction whose RTL result gets bit 0 flipped before the
  // scoreboard sees it (--rtl-fault, the checker's self-test); SIZE_MAX = none.
  RtlDatapath(rtl::Unit unit, const std::string& trace_path, size_t fault)
      : drv_(unit, options(trace_path)), fault_(fault) {}
  std::string unit() const { return std::string(drv_.info().name); }
  uint64_t cycles() const { return drv_.cycles(); }
  size_t checked = 0, mismatches = 0;
  std::string first_mismatch;
  double seconds = 0;

  std::vector<float> operator()(const MmaConfig& cfg, const fm::StepOrigin& at, size_t M, size_t N, size_t K,
                                std::span<const uint8_t> a, std::span<const uint32_t> sa, std::span<const uint8_t> b,
                                std::span<const uint32_t> sb, std::span<const float> c) {
    const auto t0 = std::chrono::steady_clock::now();
    const size_t k = static_cast<size_t>(drv_.k()), ns = static_cast<size_t>(drv_.scales_per_op());
    const size_t steps = K / k, spr = steps * ns, n = M * N;
    a_.resize(n * k);
    b_.resize(n * k);
    fa_.resize(n * ns);
    fb_.resize(n * ns);
    acc_.resize(n);
    d_.resize(n);
    for (size_t e = 0; e < n; ++e) acc_[e] = std::bit_cast<uint32_t>(c[e]);
    for (size_t t = 0; t < steps; ++t) {
      for (size_t e = 0; e < n; ++e) {
        const size_t i = e / N, j = e % N;
        std::copy_n(a.data() + i * K + t * k, k, a_.data() + e * k);
        std::copy_n(b.data() + j * K + t * k, k, b_.data() + e * k);
        std::copy_n(sa.data() + i * spr + t * ns, ns, fa_.data() + e * ns);
        std::copy_n(sb.data() + j * spr + t * ns, ns, fb_.data() + e * ns);
      }
      drv_.run(n, a_.data(), b_.data(), fa_.data(), fb_.data(), acc_.data(), d_.data());
      if (fault_ >= checked && fault_ - checked < n) d_[fault_ - checked] ^= 1u;
      for (size_t e = 0; e < n; ++e) {
        const uint32_t want =
            mma_dot(cfg, a_.data() + e * k, b_.data() + e * k, fa_.data() + e * ns, fb_.data() + e * ns, acc_[e]);
        if (d_[e] != want && mismatches++ == 0) first_mismatch = describe(at, e, N, t, k, ns, want);
      }
      checked += n;
      std::swap(acc_, d_);  // the RTL's D is the next instruction's C
    }
    std::vector<float> out(n);
    for (size_t e = 0; e < n; ++e) out[e] = std::bit_cast<float>(acc_[e]);
    seconds += seconds_since(t0);
    return out;
  }

 private:
  static rtl::DriverOptions options(const std::string& trace_path) {
    rtl::DriverOptions o;
    o.trace_path = trace_path;
    return o;
  }
  // The output (layer row, layer column), the instruction's K offset, and every operand bit.
  std::string describe(const fm::StepOrigin& at, size_t e, size_t N, size_t t, size_t k, size_t ns,
                       uint32_t want) const {
    std::ostringstream o;
    o << "output (row " << at.row + e / N << ", col " << at.col + e % N << "), instruction at k = " << at.k + t * k
      << ": a";
    for (size_t q = 0; q < k; ++q) o << (q ? "," : "=") << std::hex << int{a_[e * k + q]};
    o << " sfa";
    for (size_t q = 0; q < ns; ++q) o << (q ? "," : "=") << hex32(fa_[e * ns + q]);
    o << " b";
    for (size_t q = 0; q < k; ++q) o << (q ? "," : "=") << std::hex << int{b_[e * k + q]};
    o << " sfb";
    for (size_t q = 0; q < ns; ++q) o << (q ? "," : "=") << hex32(fb_[e * ns + q]);
    o << " c=" << hex32(acc_[e]) << " rtl=" << hex32(d_[e]) << " golden=" << hex32(want);
    return o.str();
  }

  rtl::Driver drv_;
  size_t fault_;
  std::vector<uint8_t> a_, b_;
  std::vector<uint32_t> fa_, fb_, acc_, d_;
};
#endif
#endif

}  // namespace

int cmd_run(const Invocation& inv) {
  po::options_description od("Options");
  od.add_options()
      ("m", po::value<std::string>()->value_name("M"), "tokens (rows of X), multiple of 8; default 512")
      ("n", po::value<std::string>()->value_name("N"), "output features (rows of W), multiple of 16; default 1024")
      ("k", po::value<std::string>()->value_name("K"), "input features, multiple of 64; default 1024")
      ("seed", po::value<std::string>()->value_name("S"), "synthetic data seed (default 0)")
      ("out", po::value<std::string>()->value_name("DIR"),
       "output directory (default out; created atomically at the end, its parent must exist)")
      ("force", po::bool_switch(), "replace DIR (and FILE.vcd) if they already exist")
      ("threads", po::value<std::string>()->value_name("T"), "host threads for the datapaths (0 = all)")
      ("quick", "a small layer (128 x 256 x 512) for smoke tests")
      ("no-vectors", "do not write the layer's vectors to DIR/vectors")
      ("timing", po::value<std::string>()->value_name("T"),
       "cycle (default): the structural SystemC model; analytic: the closed-form per-tile estimate")
      ("trace", po::value<std::string>()->value_name("FILE.vcd"),
       "VCD of the models' channels (valid / ready / occupancy per cycle) and datapaths; needs --timing cycle")
      ("rtl", "RTL in the loop: the Verilated unit of each configuration computes every instruction of the "
              "engine's datapath, each result checked against golden mma_dot")
      ("rtl-fault", po::value<std::string>()->value_name("I"),
       "with --rtl: flip bit 0 of the RTL's result of instruction I of each configuration before the scoreboard "
       "checks it (shows that a wrong result is caught and reported; the run exits 1)")
      ("rtl-trace", po::value<std::string>()->value_name("FILE.fst"),
       "with --rtl: FST waveform of the RTL units (one file per unit: FILE.<unit>.fst); needs a build with "
       "FP4SIM_RTL_TRACE=ON");
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
  const bool quick = vm.count("quick") > 0;
  const uint64_t M = vm.count("m") ? parse_uint("m", vm["m"].as<std::string>(), 8, 1u << 16) : (quick ? 128 : 512);
  const uint64_t N = vm.count("n") ? parse_uint("n", vm["n"].as<std::string>(), 16, 1u << 16) : (quick ? 256 : 1024);
  const uint64_t K = vm.count("k") ? parse_uint("k", vm["k"].as<std::string>(), 64, 1u << 16) : (quick ? 512 : 1024);
  if (M % 8 || N % 16 || K % 64) throw UsageError("--m must be a multiple of 8, --n of 16, --k of 64");
  const uint64_t seed = vm.count("seed") ? parse_uint("seed", vm["seed"].as<std::string>(), 0, UINT64_MAX) : 0;
  const unsigned threads =
      vm.count("threads") ? static_cast<unsigned>(parse_uint("threads", vm["threads"].as<std::string>(), 0, 1024)) : 0;
  const fs::path out = get_or(vm, "out", "out");
  const bool use_rtl = vm.count("rtl") > 0;
  const bool write_vectors = vm.count("no-vectors") == 0;
  std::string trace = get_or(vm, "trace", "");
  // The models append ".vcd" unless the name ends so: the output policy checks the real name.
  if (!trace.empty() && (trace.size() < 4 || trace.compare(trace.size() - 4, 4, ".vcd") != 0)) trace += ".vcd";
  const std::string rtl_trace = get_or(vm, "rtl-trace", "");
  if (!rtl_trace.empty() && !use_rtl) throw UsageError("--rtl-trace needs --rtl");
  if (vm.count("rtl-fault") && !use_rtl) throw UsageError("--rtl-fault needs --rtl");
  const size_t rtl_fault = vm.count("rtl-fault") ? static_cast<size_t>(parse_uint(
                                                        "rtl-fault", vm["rtl-fault"].as<std::string>(), 0, UINT32_MAX))
                                                  : SIZE_MAX;
#ifndef FP4SIM_HAVE_RTL
  if (use_rtl) throw std::runtime_error("fp4sim was built without the Verilated RTL (--rtl needs Verilator)");
  (void)rtl_fault;
#else
  if (!rtl_trace.empty() && !rtl::trace_supported())
    throw std::runtime_error("--rtl-trace: this fp4sim was built without RTL tracing (configure with -DFP4SIM_RTL_TRACE=ON)");
#endif
#ifndef FP4SIM_HAVE_MODELS
  (void)M, (void)N, (void)K, (void)seed, (void)threads, (void)use_rtl, (void)rtl_fault, (void)write_vectors, (void)trace,
      (void)out;
  throw std::runtime_error("fp4sim was built without the SystemC models (configure with FP4SIM_SYSTEMC=ON)");
#else
  fm::Timing timing = fm::Timing::Cycle;
  if (vm.count("timing") && !fm::parse_timing(vm["timing"].as<std::string>(), timing))
    throw UsageError("--timing: expected cycle or analytic, got '" + vm["timing"].as<std::string>() + "'");
  if (!trace.empty() && timing != fm::Timing::Cycle)
    throw UsageError("--trace needs --timing cycle (the analytic mode simulates no channels)");
  // Both engines' parameters: defaults <- --config <- --param; a key of one engine applies to it only.
  const std::vector<fm::Params> params =
      model_params({fm::EngineKind::TensorCore, fm::EngineKind::Cube}, model_param_settings(vm));
  // The outputs, checked before any work: DIR (report.json, report.md, vectors/) and the VCD, staged
  // and committed together at the end; a VCD named inside DIR is part of DIR.
  Outputs outs(vm["force"].as<bool>());
  const size_t out_h = outs.dir("out", out, !vm.count("out"));
  fs::path trace_stage;
  if (!trace.empty()) {
    if (const auto in_out = outs.set().staged_location(trace)) {
      if (in_out->parent_path() != outs.set().dir_stage(out_h))
        throw io::IoError(trace + ": a trace inside --out DIR must be directly in DIR");
      trace_stage = *in_out;
    } else {
      trace_stage = outs.set().file_stage(outs.file("trace", trace), ".vcd");
    }
  }
  // The models write the VCD under its name + ".partial.vcd" until close_trace() renames it.
  io::TempRegistration trace_partial;
  if (!trace.empty())
    trace_partial = io::TempRegistration(trace_stage.string() + ".partial.vcd");
  if (!rtl_trace.empty()) check_output_parent(rtl_trace);
  for (const fm::Params& p : params) fm::reserve_cores(p.engine, p.cores);
  const fs::path stage = outs.set().dir_stage(out_h);
  if (!trace.empty()) fm::open_trace(trace_stage.string());
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto t_all = std::chrono::steady_clock::now();

  std::cerr << "fp4sim run: linear layer Y[" << M << "x" << N << "] = X[" << M << "x" << K << "] . W[" << N << "x" << K
            << "]^T, seed " << seed << ", " << fm::timing_name(timing) << " timing\n";
  const std::vector<float> x = llm_activations(M, K, seed);
  const std::vector<float> w = llm_weights(N, K, seed);
  std::cerr << "  FP64 reference...\n";
  const std::vector<double> ref = reference_gemm_f64(x, w, {}, M, N, K, threads);

  const Engine engines[] = {{"tensor-core", BlockFormat::Nvfp4}, {"tensor-core", BlockFormat::Mxfp4},
                            {"cube", BlockFormat::Hif4},         {"cube", BlockFormat::Nvfp4},
                            {"cube", BlockFormat::Mxfp4}};
  std::vector<Row> rows;
  std::vector<vectors::VectorCase> cases;  // the layer's vectors: one case per block format
  int idx = 0;
  for (const Engine& e : engines) {
    ++idx;
    const std::string label = std::string(e.engine) + " " + std::string(info(e.format).name);
    std::cerr << "  [" << idx << "/" << std::size(engines) << "] " << label << ": quantize";
    const Quantized qa = quantize(e.format, x, M, K);
    const Quantized qb = quantize(e.format, w, N, K);
    const std::vector<uint32_t> sa = widen(qa), sb = widen(qb);
    const MmaConfig cfg = mma_config_for(e.format);
    fm::Workload wl;
    wl.cfg = cfg;
    wl.model = cfg.model;
    wl.M = M;
    wl.N = N;
    wl.K = K;
    wl.a = qa.codes;
    wl.b = qb.codes;
    wl.sa = sa;
    wl.sb = sb;
    wl.threads = threads;
    std::cerr << ", simulate" << (tty ? "" : "\n");
    auto progress = [&](double f) {
      if (tty) std::fprintf(stderr, "\r  [%d/%zu] %s: simulate %3.0f%%", idx, std::size(engines), label.c_str(), 100 * f);
    };
    Row r;
    r.engine = e.engine;
    r.format = std::string(info(e.format).name);
    if (const char* u = unit_of(e.engine, e.format)) r.energy = energy_of(u);
    r.params = &params[std::string(e.engine) == "cube" ? 1 : 0];
#ifdef FP4SIM_HAVE_RTL
    std::shared_ptr<RtlDatapath> rtl_dp;  // shared: fm::Datapath is a copyable std::function
    if (use_rtl) {
      if (const auto unit = rtl::unit_for(cfg)) {
        r.rtl_trace = rtl_trace.empty() ? "" : trace_for(rtl_trace, r);
        rtl_dp = std::make_shared<RtlDatapath>(*unit, r.rtl_trace, rtl_fault);
        r.rtl_unit = rtl_dp->unit();
        wl.datapath = [rtl_dp](auto&&... step) { return (*rtl_dp)(step...); };
      }
    }
#endif
    auto t0 = std::chrono::steady_clock::now();
    fm::RunOptions ro;
    ro.timing = timing;
    ro.progress = progress;
    fm::Result res = fm::run(*r.params, wl, ro);
    r.model_s = seconds_since(t0);
    if (tty) std::cerr << "\n";
    t0 = std::chrono::steady_clock::now();
    const std::vector<float> gold = gemm(cfg, cfg.model, M, N, K, qa.codes, sa, qb.codes, sb, {}, 1.0f, threads);
    r.golden_s = seconds_since(t0);
    r.total = gold.size();
    for (size_t i = 0; i < gold.size(); ++i)
      if (std::bit_cast<uint32_t>(gold[i]) != std::bit_cast<uint32_t>(res.d[i])) ++r.mismatches;
    // Epilogue as quantized_gemm: D = alpha * acc, alpha = the product of the NVFP4 global scales.
    const float alpha = qa.global_scale * qb.global_scale;
    std::vector<float> d(res.d.size());
    for (size_t i = 0; i < d.size(); ++i) d[i] = alpha * res.d[i];
    r.err = gemm_error(d, ref);
    uint64_t worst = 0;
    r.top_stall = "-";
    for (const auto& [cause, cyc] : res.stats.stalls)
      if (cyc > worst) worst = cyc, r.top_stall = cause;
    r.stats = std::move(res.stats);
#ifdef FP4SIM_HAVE_RTL
    if (use_rtl) {
      if (!rtl_dp) {
        std::cerr << "    rtl: no RTL unit computes this configuration\n";
      } else {
        r.rtl_checked = rtl_dp->checked;
        r.rtl_mismatches = rtl_dp->mismatches;
        r.rtl_first_mismatch = rtl_dp->first_mismatch;
        r.rtl_cycles = rtl_dp->cycles();
        r.rtl_s = rtl_dp->seconds;
        wl.datapath = nullptr;
        rtl_dp.reset();  // the last owner: closes (and renames) its trace
        std::cerr << "    rtl " << r.rtl_unit << ": " << r.rtl_checked - r.rtl_mismatches << "/" << r.rtl_checked
                  << " instructions equal to golden mma_dot, " << r.rtl_cycles << " cycles, "
                  << fmt_num("%.2f", r.rtl_s) << " s of RTL\n";
        if (!r.rtl_first_mismatch.empty()) std::cerr << "    first RTL mismatch: " << r.rtl_first_mismatch << "\n";
      }
    }
#endif
    const bool have_case = std::any_of(cases.begin(), cases.end(), [&](const vectors::VectorCase& v) {
      return v.cfg.kind == cfg.kind && v.cfg.scale == cfg.scale && v.cfg.block == cfg.block;
    });
    if (write_vectors && !have_case) {
      vectors::VectorCase v = vectors::quantized_case(
          e.format, x, {}, qa, w, {}, qb, "layer",
          "fp4sim run's linear layer: llm_activations x llm_weights, seed " + std::to_string(seed) + ", quantized to " +
              r.format + " (default options)");
      if (v.alpha == 1.0f) {  // D = acc: what was just checked
        v.models = {cfg.model};
        v.expected = {gold};
      } else {
        vectors::fill_expected(v, threads, {cfg.model});
      }
      cases.push_back(std::move(v));
    }
    rows.push_back(std::move(r));
  }
  fm::close_trace();
  if (write_vectors) {
    vectors::number_cases(cases);
    const io::Json origin = {{"command", "run"}, {"suite", "run-layer"}, {"seed", seed}, {"size", nullptr},
                             {"layer", {{"m", M}, {"n", N}, {"k", K}}}};
    fs::create_directory(stage / "vectors");
    vectors::write_cases_into(stage / "vectors", origin, cases, inv.argv);
  }

  // ---- table ----
  std::vector<std::vector<std::string>> table;
  bool all_exact = true, rtl_exact = true;
  for (const Row& r : rows) {
    all_exact = all_exact && r.mismatches == 0;
    rtl_exact = rtl_exact && r.rtl_mismatches == 0;
    table.push_back({r.engine, r.format, r.mismatches == 0 ? "yes" : "NO",
                     std::to_string(r.total - r.mismatches) + "/" + std::to_string(r.total),
                     std::to_string(r.stats.cycles), fmt_num("%.0f", r.stats.macs_per_cycle()),
                     fmt_num("%.1f%%", 100 * r.stats.utilization()), r.top_stall, fmt_num("%.3e", r.err.rel_err),
                     fmt_num("%.2f", r.err.qsnr_db), r.rtl_unit.empty() ? fmt_num("%.2f", r.model_s / r.golden_s) : "-",  // RTL datapath: no ratio
                     r.energy ? fmt_num("%.4g", static_cast<double>(r.stats.macs) * r.energy->pj_per_mac / 1e6) : "-",
                     r.energy ? fmt_num("%.3f", r.energy->pj_per_mac) : "-",
                     r.energy ? fmt_num("%.4f", r.energy->tops_per_w) : "-"});
    if (use_rtl)
      table.back().push_back(r.rtl_unit.empty() ? "-"
                                                : r.rtl_unit + " " + std::to_string(r.rtl_checked - r.rtl_mismatches) +
                                                      "/" + std::to_string(r.rtl_checked));
  }
  std::vector<std::string> head = {"engine", "format", "bit-exact", "equal/total", "cycles", "MACs/cycle",
                                   "util", "top stall", "rel err", "QSNR dB", "time/golden", "energy uJ", "pJ/MAC",
                                   "TOPS/W"};
  if (use_rtl) head.push_back("RTL equal/checked");
  std::cout << "\n";
  print_table(std::cout, head, table, 4);
  std::cout << "\n" << (all_exact ? "All outputs bit-identical to golden gemm." : "MISMATCH against golden gemm!")
            << "  (" << fmt_num("%.1f", seconds_since(t_all)) << " s)\n";
  if (use_rtl)
    std::cout << (rtl_exact ? "Every RTL instruction result bit-identical to golden mma_dot."
                            : "RTL MISMATCH against golden mma_dot!")
              << "\n";

  // ---- report.json / report.md ----
  io::Json j = io::report_header(inv.name, inv.argv);
  j["layer"] = {{"m", M}, {"n", N}, {"k", K}, {"seed", seed}, {"x", "llm_activations"}, {"w", "llm_weights"}};
  j["timing"] = fm::timing_name(timing);
  j["all_bit_exact"] = all_exact;
  j["runs"] = io::Json::array();
  for (const Row& r : rows) {
    io::Json s = {{"cycles", r.stats.cycles},
                  {"compute_cycles", r.stats.compute_cycles},
                  {"instructions", r.stats.instructions},
                  {"macs", r.stats.macs},
                  {"macs_per_cycle", num(r.stats.macs_per_cycle())},
                  {"peak_macs_per_cycle", num(r.stats.peak_macs_per_cycle)},
                  {"utilization", num(r.stats.utilization())},
                  {"sim_time_ps", r.stats.sim_time_ps},
                  {"tiles", r.stats.tiles},
                  {"cores", r.stats.cores},
                  {"compute_roofline_cycles", num(r.stats.compute_roofline_cycles)},
                  {"memory_roofline_cycles", num(r.stats.memory_roofline_cycles)},
                  {"mappings_evaluated", r.stats.mappings_evaluated}};
    for (const auto& [k, v] : r.stats.stalls) s["stalls"][k] = v;
    for (const auto& [k, v] : r.stats.bytes) s["bytes"][k] = v;
    io::Json jparams = io::Json::object();
    for (const fm::ParamDesc& d : fm::param_table(r.params->engine))
      jparams[std::string(d.key)] = fm::get_param(*r.params, d.key);
    const fm::Mapping& m = r.stats.mapping;
    const io::Json mapping = {{"tile_m", m.tile_m}, {"tile_n", m.tile_n},   {"tile_k", m.tile_k},
                              {"l1_k", m.l1_k},     {"stages", m.stages},   {"raster", models::raster_name(m.raster)},
                              {"str", m.str()}};
    j["runs"].push_back({{"engine", r.engine},
                         {"format", r.format},
                         {"timing", fm::timing_name(r.stats.timing)},
                         {"params", jparams},
                         {"mapping", mapping},
                         {"bit_exact", r.mismatches == 0},
                         {"mismatches", r.mismatches},
                         {"elements", r.total},
                         {"stats", s},
                         {"error_vs_fp64",
                          {{"rel_err", num(r.err.rel_err)}, {"qsnr_db", num(r.err.qsnr_db)},
                           {"max_abs", num(r.err.max_abs)}, {"bias", num(r.err.bias)}}},
                         {"energy", r.energy ? io::Json{{"unit", r.energy->unit},
                                                        {"distribution", energy_dist()},
                                                        {"energy_pj", num(static_cast<double>(r.stats.macs) * r.energy->pj_per_mac)},
                                                        {"pj_per_mac", num(r.energy->pj_per_mac)},
                                                        {"tops_per_w", num(r.energy->tops_per_w)}}
                                             : io::Json()},
                         {"model_seconds", r.model_s},
                         {"golden_seconds", r.golden_s}});
    if (use_rtl) {
      io::Json& jr = j["runs"].back();
      if (r.rtl_unit.empty()) {
        jr["rtl"] = nullptr;
      } else {
        jr["rtl"] = {{"unit", r.rtl_unit},
                     {"instructions_checked", r.rtl_checked},
                     {"instruction_mismatches", r.rtl_mismatches},
                     {"cycles", r.rtl_cycles},
                     {"seconds", r.rtl_s}};
        if (!r.rtl_first_mismatch.empty()) jr["rtl"]["first_mismatch"] = r.rtl_first_mismatch;
        if (!r.rtl_trace.empty()) jr["rtl"]["trace"] = r.rtl_trace;
      }
    }
  }
  if (use_rtl) j["rtl_bit_exact"] = rtl_exact;
  j["vectors"] = write_vectors ? io::Json("vectors") : io::Json(nullptr);
  j["trace"] = trace.empty() ? io::Json(nullptr) : io::Json(trace);
  io::write_file_atomic(stage / "report.json", j.dump(2) + "\n");
  std::ostringstream md;
  md << "# fp4sim run\n\nLinear layer Y = X . W^T, X [" << M << " x " << K << "] (llm_activations), W [" << N << " x "
     << K << "] (llm_weights), seed " << seed << ".\n\nTiming: " << fm::timing_name(timing)
     << (timing == fm::Timing::Cycle ? " (the structural SystemC model: cycles as the simulation reaches them)"
                                     : " (the analytic per-tile estimate of the same mapping)")
     << ". Parameters: defaults (docs/models.md)" << (vm.count("param") || vm.count("config") ? " with --config / --param" : "")
     << "; report.json lists every one per run.\n\n|";
  for (const auto& h : head) md << " " << h << " |";
  md << "\n|";
  for (size_t i = 0; i < head.size(); ++i) md << "---|";
  md << "\n";
  for (const auto& row : table) {
    md << "|";
    for (const auto& c : row) md << " " << c << " |";
    md << "\n";
  }
  md << "\nColumns: **engine**, **format**: the model and block format of the row; **bit-exact**: every output of "
        "the model equal to golden gemm, bit for bit; **equal/total**: outputs equal / outputs; **cycles**: simulated "
        "cycles of the whole layer; **MACs/cycle**: multiply-accumulates per cycle; **util**: MACs/cycle over the "
        "engine's peak; **top stall**: the stall cause with the most cycles; **rel err**, **QSNR dB**: error of D "
        "against the FP64 product of the unquantized X and W; **time/golden**: wall time of the model over that of "
        "golden gemm (\"-\" when the RTL computed the datapath); **energy uJ**, **pJ/MAC**, **TOPS/W**: the layer's "
        "MACs at the energy per MAC of the dot-product unit that runs the format (rtl/energy.json: gate-level "
        "toggles of the mapped netlist on \"" << energy_dist() << "\" operands, OSU 0.18 um at 1.8 V; the datapath "
        "alone, no memory or data movement; docs/area.md \"Energy\")"
     << (use_rtl ? "; **RTL equal/checked**: instructions whose RTL result equals golden mma_dot / instructions checked"
                 : "")
     << ".\n";
  md << "\n" << (all_exact ? "All outputs bit-identical to golden gemm." : "MISMATCH against golden gemm.") << "\n";
  if (use_rtl) {
    md << "\nRTL in the loop: the Verilated unit computed every instruction of each engine's datapath (its D "
          "chained as the next C), each result compared with golden mma_dot on the same operands: "
       << (rtl_exact ? "all bit-identical." : "MISMATCH.") << "\n";
    for (const Row& r : rows)
      if (!r.rtl_first_mismatch.empty())
        md << "\n- " << r.engine << " " << r.format << " first mismatch: `" << r.rtl_first_mismatch << "`\n";
  }
  io::write_file_atomic(stage / "report.md", md.str());
  outs.commit();
  std::cerr << "wrote " << (out / "report.json").string() << ", " << (out / "report.md").string();
  if (write_vectors)
    std::cerr << ", " << (out / "vectors").string() << " (replay: fp4sim replay " << (out / "vectors").string()
              << " --target golden|rtl|gpu-host)";
  if (!trace.empty()) std::cerr << ", " << trace;
  std::cerr << "\n";
  return all_exact && rtl_exact ? kExitOk : kExitRuntime;
#endif
}

}  // namespace fp4sim::cli

#ifdef FP4SIM_HAVE_MODELS
// libsystemc's main() is not used (fp4sim has its own), but the shared library still refers to
// sc_main, so the executable must define one.
extern "C" int sc_main(int, char**) { return 1; }
#endif
