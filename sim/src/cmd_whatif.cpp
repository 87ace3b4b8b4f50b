// fp4sim whatif: sweeps model parameters over one GEMM shape in timing-only mode (the schedule does
// not depend on values) and writes a CSV, one row per configuration (docs/whatif.md).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli.hpp"
#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/linear.hpp"
#ifdef FP4SIM_HAVE_MODELS
#include "fp4sim/models/models.hpp"
#endif

namespace fp4sim::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr const char* kUsage = "whatif [--engine tensor-core|cube|both] [--m M --n N --k K] [--out FILE.csv]";

#ifdef FP4SIM_HAVE_MODELS
namespace fm = fp4sim::models;

// Area of one dot-product unit from the yosys reports of docs/area.md (generic-gate synthesis of
// rtl/*.sv, hierarchy kept): the gate transistors of the element array (the per-lane products and
// their integer tree: hif4_dot64 / 4 x fp4_dot16), of everything else (scale path, alignment, FP32
// accumulate), and the flops (24 transistors each; 512 of them are the input register's element
// bits). A tensor-core lane is one whole 64-element unit. A cube PE of pe_k elements keeps its back
// end and scales the element array and the element-input flops by pe_k / 64 (a PE narrower than the
// 64-element group accumulates the group over 64 / pe_k cycles and still has one back end; wider
// PEs have pe_k / 64 of them); the partial-sum register that a narrower PE needs (17 to 52 flops) is
// not counted. The cube has no MXFP4 PE in rtl/, so its MXFP4 rows use bs_dot_k64_ue8m0_b32.
struct UnitArea {
  const char* engine;
  BlockFormat format;
  const char* unit;
  double elem_gates, gates, flops;  // yosys: element-array gate transistors, all gate transistors, flops
};
constexpr double kFlopTransistors = 24, kElemInputFlops = 512;
constexpr UnitArea kArea[] = {
    {"tensor-core", BlockFormat::Nvfp4, "bs_dot_k64_ue4m3_b16", 58640, 122992, 791},
    {"tensor-core", BlockFormat::Mxfp4, "bs_dot_k64_ue8m0_b32", 58640, 100448, 727},
    {"cube", BlockFormat::Hif4, "hif4_pe", 74112, 105102, 708},
    {"cube", BlockFormat::Nvfp4, "nvfp4_pe64", 58648, 142944, 799},
    {"cube", BlockFormat::Mxfp4, "bs_dot_k64_ue8m0_b32", 58640, 100448, 727},
};

const UnitArea& area_of(const std::string& engine, BlockFormat f) {
  for (const UnitArea& a : kArea)
    if (engine == a.engine && f == a.format) return a;
  throw std::logic_error("whatif: no area entry for " + engine);
}

// Transistors of one unit that takes pe_k elements per cycle (64: the synthesized unit, exactly its
// yosys total).
double unit_transistors(const UnitArea& a, int pe_k) {
  const double f = pe_k / 64.0, backs = std::max(1.0, f);
  return a.elem_gates * f + (a.gates - a.elem_gates) * backs +
         kFlopTransistors * (kElemInputFlops * f + (a.flops - kElemInputFlops) * backs);
}

// units: dot-product units in the configuration (dot lanes, or grid PEs), each pe_k elements wide.
std::string csv_row(const std::string& engine, BlockFormat f, const std::string& params, double units, int pe_k,
                    const fm::Stats& s) {
  const UnitArea& a = area_of(engine, f);
  const double mtr = units * unit_transistors(a, pe_k) / 1e6;
  std::ostringstream o;
  o << engine << "," << info(f).name << "," << params << "," << s.cycles << "," << s.compute_cycles << ","
    << fmt_num("%.2f", s.macs_per_cycle()) << "," << fmt_num("%.4f", s.utilization()) << "," << a.unit << ","
    << fmt_num("%.2f", mtr) << "," << fmt_num("%.3f", s.macs_per_cycle() / mtr);
  for (const auto& [k, v] : s.stalls) o << "," << k << "=" << v;
  return o.str();
}
#endif

}  // namespace

int cmd_whatif(const Invocation& inv) {
  po::options_description od("Options");
  od.add_options()
      ("engine", po::value<std::string>()->value_name("E"), "tensor-core, cube or both (default both)")
      ("m", po::value<std::string>()->value_name("M"), "GEMM M (default 512)")
      ("n", po::value<std::string>()->value_name("N"), "GEMM N, multiple of 16 (default 1024)")
      ("k", po::value<std::string>()->value_name("K"), "GEMM K, multiple of 64 (default 1024)")
      ("out", po::value<std::string>()->value_name("FILE"), "CSV file (default out/whatif.csv)");
  po::variables_map vm;
  if (!parse_options(inv, kUsage, od, vm)) return kExitOk;
  const std::string engine = get_or(vm, "engine", "both");
  if (engine != "tensor-core" && engine != "cube" && engine != "both")
    throw UsageError("--engine must be tensor-core, cube or both");
  const uint64_t M = vm.count("m") ? parse_uint("--m", vm["m"].as<std::string>(), 8, 1u << 20) : 512;
  const uint64_t N = vm.count("n") ? parse_uint("--n", vm["n"].as<std::string>(), 16, 1u << 20) : 1024;
  const uint64_t K = vm.count("k") ? parse_uint("--k", vm["k"].as<std::string>(), 64, 1u << 20) : 1024;
  if (N % 16 || K % 64) throw UsageError("--n must be a multiple of 16 and --k of 64");
  const fs::path out = get_or(vm, "out", "out/whatif.csv");
#ifndef FP4SIM_HAVE_MODELS
  (void)M, (void)N, (void)K, (void)out;
  throw std::runtime_error("fp4sim was built without the SystemC models (configure with FP4SIM_SYSTEMC=ON)");
#else
  if (out.has_parent_path()) fs::create_directories(out.parent_path());
  std::ostringstream csv;
  csv << "engine,format,p1,p2,p3,p4,cycles,compute_cycles,macs_per_cycle,utilization,area_unit,mtransistors,"
         "macs_per_cycle_per_mtr,stall1,stall2,stall3,stall4,stall5\n";
  size_t nrows = 0;
  auto workload = [&](BlockFormat f) {
    fm::Workload w;
    w.cfg = mma_config_for(f);
    w.model = w.cfg.model;
    w.M = M;
    w.N = N;
    w.K = K;
    w.timing_only = true;
    return w;
  };
  if (engine != "cube") {
    for (BlockFormat f : {BlockFormat::Nvfp4, BlockFormat::Mxfp4})
      for (int lanes : {128, 256, 512})
        for (int tile_n : {64, 128, 256})
          for (int load : {64, 128, 256})
            for (int depth : {8, 32}) {
              fm::TensorCoreParams p;
              p.dot_lanes = lanes;
              p.tile_n = tile_n;
              p.load_bytes_per_cycle = load;
              p.pipeline_depth = depth;
              const fm::Result r = fm::run_tensor_core(p, workload(f));
              csv << csv_row("tensor-core", f,
                             "dot_lanes=" + std::to_string(lanes) + ",tile_n=" + std::to_string(tile_n) +
                                 ",load_Bpc=" + std::to_string(load) + ",pipeline=" + std::to_string(depth),
                             lanes, 64, r.stats)
                  << "\n";
              ++nrows;
            }
  }
  if (engine != "tensor-core") {
    for (BlockFormat f : {BlockFormat::Hif4, BlockFormat::Nvfp4, BlockFormat::Mxfp4})
      for (int grid : {8, 16, 32})
        for (size_t l0 : {32u * 1024, 64u * 1024, 128u * 1024})
          for (int bw : {64, 128, 256})
            for (int pek : {16, 32, 64}) {
              fm::CubeParams p;
              p.rows = p.cols = grid;
              p.l0a_bytes = p.l0b_bytes = l0;
              p.l0a_load_bytes_per_cycle = p.l0b_load_bytes_per_cycle = bw;
              p.pe_k = pek;
              const fm::Result r = fm::run_cube(p, workload(f));
              csv << csv_row("cube", f,
                             "grid=" + std::to_string(grid) + ",l0ab_KiB=" + std::to_string(l0 / 1024) +
                                 ",load_Bpc=" + std::to_string(bw) + ",pe_k=" + std::to_string(pek),
                             double(grid) * grid, pek, r.stats)
                  << "\n";
              ++nrows;
            }
  }
  io::write_file_atomic(out, csv.str());
  std::cout << "wrote " << nrows << " configurations to " << out.string() << "\n";
  return kExitOk;
#endif
}

}  // namespace fp4sim::cli
