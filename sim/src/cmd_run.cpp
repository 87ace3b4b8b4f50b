// fp4sim run: the main job (docs/models.md). An LLM-like linear layer Y = X . W^T is quantized by
// the golden library, run on the SystemC tensor-core model (NVFP4, MXFP4) and cube model (HiF4,
// and NVFP4 / MXFP4 on the same grid), every output checked bit for bit against golden gemm, and
// summarized: bit-exact counts, cycles, MACs/cycle, utilization, the top stall cause, error vs FP64.
// Writes OUT/report.json and OUT/report.md.
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
#include "fp4sim/linear.hpp"
#include "fp4sim/synth.hpp"
#ifdef FP4SIM_HAVE_MODELS
#include "fp4sim/models/models.hpp"
#endif

namespace fp4sim::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr const char* kUsage = "run [--m M --n N --k K] [--seed S] [--out DIR] [--threads T] [--quick]";

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
};

std::vector<uint32_t> widen(const Quantized& q) {
  if (info(q.format).scale_word32) return q.scale_words;
  return std::vector<uint32_t>(q.scales.begin(), q.scales.end());
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

io::Json num(double v) { return std::isfinite(v) ? io::Json(v) : io::Json(nullptr); }
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
      ("quick", "a small layer (128 x 256 x 512) for smoke tests");
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
#ifndef FP4SIM_HAVE_MODELS
  (void)M, (void)N, (void)K, (void)seed, (void)threads;
  throw std::runtime_error("fp4sim was built without the SystemC models (configure with FP4SIM_SYSTEMC=ON)");
#else
  fs::create_directories(out);
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
    rows.push_back(std::move(r));
  }

  // ---- table ----
  std::vector<std::vector<std::string>> table;
  bool all_exact = true;
  for (const Row& r : rows) {
    all_exact = all_exact && r.mismatches == 0;
    table.push_back({r.engine, r.format, r.mismatches == 0 ? "yes" : "NO",
                     std::to_string(r.total - r.mismatches) + "/" + std::to_string(r.total),
                     std::to_string(r.stats.cycles), fmt_num("%.0f", r.stats.macs_per_cycle()),
                     fmt_num("%.1f%%", 100 * r.stats.utilization()), r.top_stall, fmt_num("%.3e", r.err.rel_err),
                     fmt_num("%.2f", r.err.qsnr_db), fmt_num("%.2f", r.model_s / r.golden_s)});
  }
  const std::vector<std::string> head = {"engine", "format", "bit-exact", "equal/total", "cycles", "MACs/cycle",
                                         "util", "top stall", "rel err", "QSNR dB", "time/golden"};
  std::cout << "\n";
  print_table(std::cout, head, table, 4);
  std::cout << "\n" << (all_exact ? "All outputs bit-identical to golden gemm." : "MISMATCH against golden gemm!")
            << "  (" << fmt_num("%.1f", seconds_since(t_all)) << " s)\n";

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
  }
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
  io::write_file_atomic(out / "report.md", md.str());
  std::cerr << "wrote " << (out / "report.json").string() << ", " << (out / "report.md").string() << "\n";
  return all_exact ? kExitOk : kExitRuntime;
#endif
}

}  // namespace fp4sim::cli

#ifdef FP4SIM_HAVE_MODELS
// libsystemc's main() is not used (fp4sim has its own), but the shared library still refers to
// sc_main, so the executable must define one.
extern "C" int sc_main(int, char**) { return 1; }
#endif
