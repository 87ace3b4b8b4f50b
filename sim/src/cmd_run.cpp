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
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "cli.hpp"
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
    "           [--rtl [--rtl-sample E] [--rtl-trace FILE.fst]] [--trace FILE.vcd]";

#ifdef FP4SIM_HAVE_MODELS
namespace fm = fp4sim::models;

struct Engine {
  const char* engine;  // "tensor-core" / "cube"
  BlockFormat format;
};

struct Row {
  std::string engine, format;
  size_t mismatches = 0, total = 0;
  fm::Stats stats;
  GemmError err;
  double model_s = 0, golden_s = 0;
  std::string top_stall;
  // RTL in the loop (--rtl): instructions streamed through the Verilated unit vs golden mma_dot.
  std::string rtl_unit;  // empty: no RTL unit computes this configuration (or --rtl not given)
  size_t rtl_checked = 0, rtl_mismatches = 0, rtl_chain_mismatches = 0, rtl_elements = 0;
  uint64_t rtl_cycles = 0;
  double rtl_s = 0;
  std::string rtl_first_mismatch;
  std::string rtl_trace;  // FST written for this configuration, if any
};

// "t.fst" -> "t.tensor-core-nvfp4.fst": one waveform per configuration.
std::string trace_for(const std::string& base, const Row& r) {
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
std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// Scoreboard: the first `sample` output elements (row-major) of the layer, each a chain of K / k
// instructions (C of instruction t+1 = golden D of instruction t, so an RTL error cannot hide behind
// a later one). Every instruction goes through the RTL unit in one back-to-back stream and its
// result is compared bit for bit with golden mma_dot on the same operands; the chain end is also
// compared with golden gemm's output element. Fills the rtl_* fields of r.
void rtl_scoreboard(Row& r, const MmaConfig& cfg, size_t sample, uint64_t N, uint64_t K, const Quantized& qa,
                    const Quantized& qb, const std::vector<uint32_t>& sa, const std::vector<uint32_t>& sb,
                    const std::vector<float>& gold, const std::string& trace_path) {
  const auto unit = rtl::unit_for(cfg);
  if (!unit) return;
  const auto t0 = std::chrono::steady_clock::now();
  rtl::DriverOptions opt;
  opt.trace_path = trace_path;
  rtl::Driver drv(*unit, opt);
  r.rtl_trace = trace_path;
  r.rtl_unit = std::string(drv.info().name);
  const size_t k = static_cast<size_t>(drv.k()), ns = static_cast<size_t>(drv.scales_per_op());
  const size_t spr = K / k * ns;  // scale codes per operand row
  const size_t steps = K / k;
  const size_t elems = std::min<size_t>(sample, gold.size());
  const size_t n = elems * steps;
  std::vector<uint8_t> a(n * k), b(n * k);
  std::vector<uint32_t> fa(n * ns), fb(n * ns), c(n), want(n), got(n);
  for (size_t e = 0; e < elems; ++e) {
    const size_t i = e / N, j = e % N;
    uint32_t acc = 0;  // +0: fp4sim::gemm's empty C
    for (size_t t = 0; t < steps; ++t) {
      const size_t x = e * steps + t;
      std::copy_n(qa.codes.data() + i * K + t * k, k, a.data() + x * k);
      std::copy_n(qb.codes.data() + j * K + t * k, k, b.data() + x * k);
      std::copy_n(sa.data() + i * spr + t * ns, ns, fa.data() + x * ns);
      std::copy_n(sb.data() + j * spr + t * ns, ns, fb.data() + x * ns);
      c[x] = acc;
      acc = want[x] = mma_dot(cfg, a.data() + x * k, b.data() + x * k, fa.data() + x * ns, fb.data() + x * ns, acc);
    }
    if (acc != std::bit_cast<uint32_t>(gold[e])) ++r.rtl_chain_mismatches;
  }
  drv.run(n, a.data(), b.data(), fa.data(), fb.data(), c.data(), got.data());
  for (size_t x = 0; x < n; ++x) {
    if (got[x] == want[x]) continue;
    if (r.rtl_mismatches++ == 0) {
      std::ostringstream o;
      o << "element " << x / steps << " (row " << x / steps / N << ", col " << x / steps % N << "), k-step "
        << x % steps << ": a";
      for (size_t q = 0; q < k; ++q) o << (q ? "," : "=") << std::hex << int{a[x * k + q]};
      o << " sfa";
      for (size_t q = 0; q < ns; ++q) o << (q ? "," : "=") << hex32(fa[x * ns + q]);
      o << " b";
      for (size_t q = 0; q < k; ++q) o << (q ? "," : "=") << std::hex << int{b[x * k + q]};
      o << " sfb";
      for (size_t q = 0; q < ns; ++q) o << (q ? "," : "=") << hex32(fb[x * ns + q]);
      o << " c=" << hex32(c[x]) << " rtl=" << hex32(got[x]) << " golden=" << hex32(want[x]);
      r.rtl_first_mismatch = o.str();
    }
  }
  r.rtl_checked = n;
  r.rtl_elements = elems;
  r.rtl_cycles = drv.cycles();
  r.rtl_s = seconds_since(t0);
}
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
      ("out", po::value<std::string>()->value_name("DIR"), "output directory (default out)")
      ("threads", po::value<std::string>()->value_name("T"), "host threads for the datapaths (0 = all)")
      ("quick", "a small layer (128 x 256 x 512) for smoke tests")
      ("no-vectors", "do not write the layer's vectors to DIR/vectors")
      ("trace", po::value<std::string>()->value_name("FILE.vcd"),
       "SystemC VCD of the models' pins (busy, retired tiles, compute and stall cycles per engine)")
      ("rtl", "RTL in the loop: stream the instructions of the first output elements through the Verilated "
              "unit of each configuration and check every result against golden mma_dot")
      ("rtl-sample", po::value<std::string>()->value_name("E"), "output elements checked with --rtl (default 2048)")
      ("rtl-trace", po::value<std::string>()->value_name("FILE.fst"),
       "with --rtl: FST waveform of the RTL units (one file per unit: FILE.<unit>.fst); needs a build with "
       "FP4SIM_RTL_TRACE=ON");
  po::variables_map vm;
  if (!parse_options(inv, kUsage, od, vm)) return kExitOk;
  const bool quick = vm.count("quick") > 0;
  const uint64_t M = vm.count("m") ? parse_uint("--m", vm["m"].as<std::string>(), 8, 1u << 16) : (quick ? 128 : 512);
  const uint64_t N = vm.count("n") ? parse_uint("--n", vm["n"].as<std::string>(), 16, 1u << 16) : (quick ? 256 : 1024);
  const uint64_t K = vm.count("k") ? parse_uint("--k", vm["k"].as<std::string>(), 64, 1u << 16) : (quick ? 512 : 1024);
  if (M % 8 || N % 16 || K % 64) throw UsageError("--m must be a multiple of 8, --n of 16, --k of 64");
  const uint64_t seed = vm.count("seed") ? parse_uint("--seed", vm["seed"].as<std::string>(), 0, UINT64_MAX) : 0;
  const unsigned threads =
      vm.count("threads") ? static_cast<unsigned>(parse_uint("--threads", vm["threads"].as<std::string>(), 0, 1024)) : 0;
  const fs::path out = get_or(vm, "out", "out");
  const bool use_rtl = vm.count("rtl") > 0;
  const bool write_vectors = vm.count("no-vectors") == 0;
  const std::string trace = get_or(vm, "trace", "");
  const std::string rtl_trace = get_or(vm, "rtl-trace", "");
  if (!rtl_trace.empty() && !use_rtl) throw UsageError("--rtl-trace needs --rtl");
  const size_t rtl_sample =
      vm.count("rtl-sample") ? parse_uint("--rtl-sample", vm["rtl-sample"].as<std::string>(), 1, 1u << 24) : 2048;
#ifndef FP4SIM_HAVE_RTL
  if (use_rtl) throw std::runtime_error("fp4sim was built without the Verilated RTL (--rtl needs Verilator)");
  (void)rtl_sample;
#else
  if (!rtl_trace.empty() && !rtl::trace_supported())
    throw std::runtime_error("--rtl-trace: this fp4sim was built without RTL tracing (configure with -DFP4SIM_RTL_TRACE=ON)");
#endif
#ifndef FP4SIM_HAVE_MODELS
  (void)M, (void)N, (void)K, (void)seed, (void)threads, (void)use_rtl, (void)rtl_sample, (void)write_vectors, (void)trace;
  throw std::runtime_error("fp4sim was built without the SystemC models (configure with FP4SIM_SYSTEMC=ON)");
#else
  fs::create_directories(out);
  if (!trace.empty()) {
    check_output_parent(trace);
    fm::open_trace(trace);
  }
  if (!rtl_trace.empty()) check_output_parent(rtl_trace);
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto t_all = std::chrono::steady_clock::now();

  std::cerr << "fp4sim run: linear layer Y[" << M << "x" << N << "] = X[" << M << "x" << K << "] . W[" << N << "x" << K
            << "]^T, seed " << seed << "\n";
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
    std::cerr << ", simulate" << (tty ? "" : "\n");
    auto progress = [&](double f) {
      if (tty) std::fprintf(stderr, "\r  [%d/%zu] %s: simulate %3.0f%%", idx, std::size(engines), label.c_str(), 100 * f);
    };
    Row r;
    r.engine = e.engine;
    r.format = std::string(info(e.format).name);
    auto t0 = std::chrono::steady_clock::now();
    fm::Result res;
    if (std::string(e.engine) == "cube") {
      fm::CubeParams p;
      p.threads = threads;
      res = fm::run_cube(p, wl, progress);
    } else {
      fm::TensorCoreParams p;
      p.threads = threads;
      res = fm::run_tensor_core(p, wl, progress);
    }
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
      rtl_scoreboard(r, cfg, rtl_sample, N, K, qa, qb, sa, sb, gold, rtl_trace.empty() ? "" : trace_for(rtl_trace, r));
      if (r.rtl_unit.empty())
        std::cerr << "    rtl: no RTL unit computes this configuration\n";
      else
        std::cerr << "    rtl " << r.rtl_unit << ": " << r.rtl_checked - r.rtl_mismatches << "/" << r.rtl_checked
                  << " instructions equal to golden mma_dot, " << r.rtl_elements - r.rtl_chain_mismatches << "/"
                  << r.rtl_elements << " chain ends equal to golden gemm, " << r.rtl_cycles << " cycles, "
                  << fmt_num("%.2f", r.rtl_s) << " s\n";
      if (!r.rtl_first_mismatch.empty()) std::cerr << "    first RTL mismatch: " << r.rtl_first_mismatch << "\n";
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
    vectors::write_cases(out / "vectors", origin, cases, inv.argv, true);
  }

  // ---- table ----
  std::vector<std::vector<std::string>> table;
  bool all_exact = true, rtl_exact = true;
  for (const Row& r : rows) {
    all_exact = all_exact && r.mismatches == 0;
    rtl_exact = rtl_exact && r.rtl_mismatches == 0 && r.rtl_chain_mismatches == 0;
    table.push_back({r.engine, r.format, r.mismatches == 0 ? "yes" : "NO",
                     std::to_string(r.total - r.mismatches) + "/" + std::to_string(r.total),
                     std::to_string(r.stats.cycles), fmt_num("%.0f", r.stats.macs_per_cycle()),
                     fmt_num("%.1f%%", 100 * r.stats.utilization()), r.top_stall, fmt_num("%.3e", r.err.rel_err),
                     fmt_num("%.2f", r.err.qsnr_db), fmt_num("%.2f", r.model_s / r.golden_s)});
    if (use_rtl)
      table.back().push_back(r.rtl_unit.empty() ? "-"
                                                : r.rtl_unit + " " + std::to_string(r.rtl_checked - r.rtl_mismatches) +
                                                      "/" + std::to_string(r.rtl_checked));
  }
  std::vector<std::string> head = {"engine", "format", "bit-exact", "equal/total", "cycles", "MACs/cycle",
                                   "util", "top stall", "rel err", "QSNR dB", "time/golden"};
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
  io::Json j;
  j["tool"] = "fp4sim run";
  j["version"] = std::string(io::tool_version());
  j["argv"] = inv.argv;
  j["layer"] = {{"m", M}, {"n", N}, {"k", K}, {"seed", seed}, {"x", "llm_activations"}, {"w", "llm_weights"}};
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
                  {"sim_time_ps", r.stats.sim_time_ps}};
    for (const auto& [k, v] : r.stats.stalls) s["stalls"][k] = v;
    for (const auto& [k, v] : r.stats.bytes) s["bytes"][k] = v;
    j["runs"].push_back({{"engine", r.engine},
                         {"format", r.format},
                         {"bit_exact", r.mismatches == 0},
                         {"mismatches", r.mismatches},
                         {"elements", r.total},
                         {"stats", s},
                         {"error_vs_fp64",
                          {{"rel_err", num(r.err.rel_err)}, {"qsnr_db", num(r.err.qsnr_db)},
                           {"max_abs", num(r.err.max_abs)}, {"bias", num(r.err.bias)}}},
                         {"model_seconds", r.model_s},
                         {"golden_seconds", r.golden_s}});
    if (use_rtl) {
      io::Json& jr = j["runs"].back();
      if (r.rtl_unit.empty()) {
        jr["rtl"] = nullptr;
      } else {
        jr["rtl"] = {{"unit", r.rtl_unit},
                     {"elements", r.rtl_elements},
                     {"instructions_checked", r.rtl_checked},
                     {"instruction_mismatches", r.rtl_mismatches},
                     {"chain_mismatches_vs_gemm", r.rtl_chain_mismatches},
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
  io::write_file_atomic(out / "report.json", j.dump(2) + "\n");
  std::ostringstream md;
  md << "# fp4sim run\n\nLinear layer Y = X . W^T, X [" << M << " x " << K << "] (llm_activations), W [" << N << " x "
     << K << "] (llm_weights), seed " << seed << ".\n\n|";
  for (const auto& h : head) md << " " << h << " |";
  md << "\n|";
  for (size_t i = 0; i < head.size(); ++i) md << "---|";
  md << "\n";
  for (const auto& row : table) {
    md << "|";
    for (const auto& c : row) md << " " << c << " |";
    md << "\n";
  }
  md << "\n" << (all_exact ? "All outputs bit-identical to golden gemm." : "MISMATCH against golden gemm.") << "\n";
  if (use_rtl) {
    md << "\nRTL in the loop: the instructions of the first " << rtl_sample
       << " output elements (row-major), streamed through the Verilated unit, each result compared with golden "
          "mma_dot: "
       << (rtl_exact ? "all bit-identical." : "MISMATCH.") << "\n";
    for (const Row& r : rows)
      if (!r.rtl_first_mismatch.empty())
        md << "\n- " << r.engine << " " << r.format << " first mismatch: `" << r.rtl_first_mismatch << "`\n";
  }
  io::write_file_atomic(out / "report.md", md.str());
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
