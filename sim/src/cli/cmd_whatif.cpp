// fp4sim whatif: runs the models in timing-only mode (the schedule does not depend on values) over
// one GEMM shape at the parameters given (--param, --config) or over the cartesian product of
// --sweep KEY=V1,V2,... and writes a CSV, one row per engine x format x configuration, one named
// column per parameter, statistic, stall cause and byte level (docs/whatif.md).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "cli/cli.hpp"
#include "cli/energy_table.hpp"
#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/crc32.hpp"
#include "fp4sim/io/manifest.hpp"
#include "fp4sim/linear.hpp"
#include "scaleout/scaleout.hpp"
#ifdef FP4SIM_HAVE_MODELS
#include "fp4sim/models/models.hpp"
#include "fp4sim_area_json.hpp"  // kAreaJson: rtl/area.json (sim/CMakeLists.txt)

#include <nlohmann/json.hpp>
#endif

namespace fp4sim::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr const char* kUsage =
    "whatif [--engine tensor-core|cube|both] [--m M --n N --k K] [--format F ...]\n"
    "           [--sweep KEY=V1,V2,... ...] [--param KEY=VALUE ...] [--config FILE.json]\n"
    "           [--timing analytic|cycle] [--out FILE.csv] [--resume] [--shard-size N]\n"
    "           [--force] [--durable]";

#ifdef FP4SIM_HAVE_MODELS
namespace fm = fp4sim::models;
using fm::EngineKind;

// Area and clock of one dot-product unit from rtl/area.json (scripts/area.sh --json: the unit
// flattened and mapped to the OSU 0.18 um standard cells, every pipeline stage timed with OpenSTA;
// embedded at build time by sim/CMakeLists.txt, proven current by CTest area_json_current). Each
// engine / format runs on one unit (kUnitOf); the cube has no MXFP4 PE in rtl/, so its MXFP4 rows
// use bs_dot_k64_ue8m0_b32 too. Formats without a unit (the tensor core's MXFP8 / MXFP6: bs_dot_k32
// is reported as skipped) get empty area and clock cells.
//
// A tensor-core lane is one whole 64-element unit. A cube PE of pe_k elements keeps its back end and
// scales the element array by pe_k / 64 (a PE narrower than the 64-element group accumulates the
// group over 64 / pe_k cycles and still has one back end; wider PEs have pe_k / 64 of them). The
// element array is the unit's lane products and integer tree synthesized alone ("elem_area_um2":
// hif4_dot64, or 4 x fp4_dot16) plus the input register's 512 element bits (their share of its
// flops and of the enable logic in front of them, stage "in -> u_in"); the partial-sum register
// that a narrower PE needs (17 to 52 flops) is not counted. The clock is the unit's
// fmax_mhz (its longest stage) whatever pe_k.
struct UnitOf {
  EngineKind engine;
  BlockFormat format;
  const char* unit;
};
constexpr UnitOf kUnitOf[] = {
    {EngineKind::TensorCore, BlockFormat::Nvfp4, "bs_dot_k64_ue4m3_b16"},
    {EngineKind::TensorCore, BlockFormat::Mxfp4, "bs_dot_k64_ue8m0_b32"},
    {EngineKind::Cube, BlockFormat::Hif4, "hif4_pe"},
    {EngineKind::Cube, BlockFormat::Nvfp4, "nvfp4_pe64"},
    {EngineKind::Cube, BlockFormat::Mxfp4, "bs_dot_k64_ue8m0_b32"},
};
constexpr double kElemInputBits = 512;  // the input register's element bits: 2 x 64 x 4

struct UnitArea {
  std::string unit;
  double area_um2 = 0, fmax_mhz = 0;
  double elem_um2 = -1;  // element array (see above); < 0 when the JSON does not have it
};

// Every unit of kUnitOf that rtl/area.json reports (a skipped unit is left out).
const std::vector<UnitArea>& area_table() {
  static const std::vector<UnitArea> table = [] {
    std::vector<UnitArea> t;
    const auto fail = [](const std::string& why) {
      return std::runtime_error("whatif: the area data built in from rtl/area.json " + why +
                                " (re-run scripts/area.sh --json rtl/area.json)");
    };
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(kAreaJson);
    } catch (const nlohmann::json::exception& e) {
      throw fail(std::string("is not JSON: ") + e.what());
    }
    for (const UnitOf& m : kUnitOf) {
      if (std::any_of(t.begin(), t.end(), [&](const UnitArea& a) { return a.unit == m.unit; })) continue;
      if (!j.contains(m.unit) || j[m.unit].contains("skipped")) continue;
      const nlohmann::json& u = j[m.unit];
      if (!u.contains("area_um2") || !u["area_um2"].is_number() || !u.contains("fmax_mhz") ||
          !u["fmax_mhz"].is_number() || u["area_um2"].get<double>() <= 0 || u["fmax_mhz"].get<double>() <= 0)
        throw fail(std::string("has no positive area_um2 / fmax_mhz for ") + m.unit);
      UnitArea a{m.unit, u["area_um2"].get<double>(), u["fmax_mhz"].get<double>()};
      const auto num = [](const nlohmann::json& o, const char* obj, const char* key) {
        return o.contains(obj) && o[obj].contains(key) && o[obj][key].is_number() ? o[obj][key].get<double>() : -1.0;
      };
      const double logic = u.contains("elem_area_um2") && u["elem_area_um2"].is_number()
                               ? u["elem_area_um2"].get<double>()
                               : -1.0;
      const double in_logic = num(u, "logic_area_um2_by_stage", "in -> u_in");
      const double in_flops = num(u, "flop_area_um2_by_register", "u_in");
      const double in_bits = num(u, "flops_by_register", "u_in");
      if (logic >= 0 && in_logic >= 0 && in_flops >= 0 && in_bits >= kElemInputBits)
        a.elem_um2 = logic + kElemInputBits / in_bits * (in_flops + in_logic);
      t.push_back(std::move(a));
    }
    return t;
  }();
  return table;
}

const UnitArea* area_of(EngineKind e, BlockFormat f) {
  for (const UnitOf& m : kUnitOf)
    if (e == m.engine && f == m.format)
      for (const UnitArea& a : area_table())
        if (a.unit == m.unit) return &a;
  return nullptr;
}

// um^2 of one unit that takes pe_k elements per cycle (64: the synthesized unit, exactly its
// area_um2); < 0 when the unit's element array is not known and pe_k != 64.
double unit_um2(const UnitArea& a, int64_t pe_k) {
  if (pe_k == 64) return a.area_um2;
  if (a.elem_um2 < 0) return -1;
  const double f = static_cast<double>(pe_k) / 64.0, backs = std::max(1.0, f);
  return a.elem_um2 * f + (a.area_um2 - a.elem_um2) * backs;
}

// The formats each engine runs (the first two / three by default; --format restricts or adds).
const std::vector<BlockFormat>& engine_formats(EngineKind e) {
  static const std::vector<BlockFormat> tc = {BlockFormat::Nvfp4, BlockFormat::Mxfp4, BlockFormat::Mxfp8E4M3,
                                              BlockFormat::Mxfp8E5M2, BlockFormat::Mxfp6E2M3, BlockFormat::Mxfp6E3M2};
  static const std::vector<BlockFormat> cube = {BlockFormat::Hif4, BlockFormat::Nvfp4, BlockFormat::Mxfp4};
  return e == EngineKind::Cube ? cube : tc;
}
size_t default_format_count(EngineKind e) { return e == EngineKind::Cube ? 3 : 2; }

// One --sweep: a parameter key (or m, n, k) and its values as given.
struct Sweep {
  std::string key;
  std::vector<std::string> values;
  bool shape() const { return key == "m" || key == "n" || key == "k"; }
};

struct Config {
  EngineKind engine;
  BlockFormat format;
  fm::Params p;
  uint64_t M, N, K;
};

struct Row {
  Config c;
  std::optional<fm::Stats> stats;
  std::string error;
};

// RFC 4180: a cell holding a comma, quote or line break is quoted, its quotes doubled.
std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

template <class T>
bool contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The union of per-engine column names: the first engine's order, then the others' extras.
template <class F>
std::vector<std::string> union_columns(const std::vector<EngineKind>& engines, F names) {
  std::vector<std::string> out;
  for (EngineKind e : engines)
    for (const auto& n : names(e))
      if (!contains(out, std::string(n))) out.emplace_back(n);
  return out;
}

// A GEMM dimension ('m', 'n' or 'k') from --m / --n / --k (opt "m") or a --sweep value (opt "sweep m").
uint64_t parse_dim(char dim, const std::string& opt, const std::string& text) {
  const uint64_t v = parse_uint(opt, text, 1, 1u << 20);
  if (dim == 'n' && v % 16) throw UsageError("--" + opt + ": N must be a multiple of 16, got " + text);
  if (dim == 'k' && v % 64) throw UsageError("--" + opt + ": K must be a multiple of 64, got " + text);
  return v;
}

// Whether b is a with more of one resource (cores, dot_lanes, a capacity in B, a bandwidth in
// B/cycle, MSHRs or queue slots) and everything else the same: then a's mapping is a candidate for b too (more of a
// resource is never slower: the mapper can still run a's schedule, on a's cores).
bool more_of_one_resource(const Config& a, const Config& b) {
  if (a.engine != b.engine || a.format != b.format || a.M != b.M || a.N != b.N || a.K != b.K) return false;
  int grew = 0;
  for (const fm::ParamDesc& d : fm::param_table(a.engine)) {
    const std::string va = fm::get_param(a.p, d.key), vb = fm::get_param(b.p, d.key);
    if (va == vb) continue;
    const bool resource = d.key == "cores" || d.key == "dot_lanes" || d.unit == "B" || d.unit == "B/cycle" ||
                          d.unit == "misses" || d.unit == "requests";
    if (!resource || !d.choices.empty() || std::stoll(vb) < std::stoll(va)) return false;
    ++grew;
  }
  return grew == 1;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
#endif

}  // namespace

int cmd_whatif(const Invocation& inv) {
  po::options_description od("Options");
  od.add_options()
      ("engine", po::value<std::string>()->value_name("E"), "tensor-core, cube or both (default both)")
      ("m", po::value<std::string>()->value_name("M"), "GEMM M, >= 1 (default 512)")
      ("n", po::value<std::string>()->value_name("N"), "GEMM N, multiple of 16 (default 1024)")
      ("k", po::value<std::string>()->value_name("K"), "GEMM K, multiple of 64 (default 1024)")
      ("format", po::value<std::vector<std::string>>()->value_name("F"),
       "block formats to run (repeatable or comma-separated); default tensor core nvfp4, mxfp4 (also: "
       "mxfp8-e4m3, mxfp8-e5m2, mxfp6-e2m3, mxfp6-e3m2), cube hif4, nvfp4, mxfp4")
      ("sweep", po::value<std::vector<std::string>>()->value_name("KEY=V1,V2,..."),
       "sweep a parameter (or m, n, k) over values (repeatable: cartesian product in the order given, last key "
       "fastest)")
      ("timing", po::value<std::string>()->value_name("T"), "analytic (default) or cycle")
      ("out", po::value<std::string>()->value_name("FILE"), "CSV file (default out/whatif.csv)")
      ("resume", "continue an interrupted run from FILE.partial (only its missing shards run)")
      ("force", po::bool_switch(), "replace FILE if it already exists")
      ("shard-size", po::value<std::string>()->value_name("N"),
       "configurations per shard (default 64 analytic, 1 cycle); under mpirun / srun the shards are spread over "
       "the ranks");
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
  const fs::path out = get_or(vm, "out", "out/whatif.csv");
  const size_t shard_size =
      vm.count("shard-size") ? static_cast<size_t>(parse_uint("shard-size", vm["shard-size"].as<std::string>(), 1, 1u << 30)) : 0;
#ifndef FP4SIM_HAVE_MODELS
  (void)out, (void)shard_size;
  throw std::runtime_error("fp4sim was built without the SystemC models (configure with FP4SIM_SYSTEMC=ON)");
#else
  std::vector<EngineKind> engines;
  if (engine != "cube") engines.push_back(EngineKind::TensorCore);
  if (engine != "tensor-core") engines.push_back(EngineKind::Cube);

  fm::Timing timing = fm::Timing::Analytic;
  if (vm.count("timing") && !fm::parse_timing(vm["timing"].as<std::string>(), timing))
    throw UsageError("--timing: expected analytic or cycle, got '" + vm["timing"].as<std::string>() + "'");

  // Formats: --format restricts each engine to the listed ones it runs; one that no selected engine
  // runs is an error.
  std::vector<std::vector<BlockFormat>> formats(engines.size());
  if (vm.count("format")) {
    std::vector<BlockFormat> want;
    for (const std::string& arg : vm["format"].as<std::vector<std::string>>()) {
      std::stringstream ss(arg);
      for (std::string name; std::getline(ss, name, ',');) {
        BlockFormat f;
        if (!parse_block_format(name, f)) throw UsageError("--format: unknown format '" + name + "'");
        bool runs = false;
        for (EngineKind e : engines) runs = runs || contains(engine_formats(e), f);
        if (!runs) throw UsageError("--format: " + engine + " does not run " + name);
        if (!contains(want, f)) want.push_back(f);
      }
    }
    for (size_t i = 0; i < engines.size(); ++i)
      for (BlockFormat f : engine_formats(engines[i]))
        if (contains(want, f)) formats[i].push_back(f);
  } else {
    for (size_t i = 0; i < engines.size(); ++i) {
      const auto& all = engine_formats(engines[i]);
      formats[i].assign(all.begin(), all.begin() + static_cast<ptrdiff_t>(default_format_count(engines[i])));
    }
  }

  // Parameters: defaults <- --config <- --param (checked here: usage errors come before any work).
  const std::vector<ParamSetting> settings = model_param_settings(vm);
  const std::vector<fm::Params> base = model_params(engines, settings);

  // Sweeps: every value checked against each selected engine the key applies to.
  std::vector<Sweep> sweeps;
  if (vm.count("sweep"))
    for (const std::string& arg : vm["sweep"].as<std::vector<std::string>>()) {
      const size_t eq = arg.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
        throw UsageError("--sweep: expected KEY=V1,V2,..., got '" + arg + "'");
      Sweep s{arg.substr(0, eq), {}};
      std::stringstream ss(arg.substr(eq + 1));
      for (std::string v; std::getline(ss, v, ',');) {
        if (v.empty()) throw UsageError("--sweep " + s.key + ": empty value in '" + arg + "'");
        s.values.push_back(v);
      }
      for (const Sweep& o : sweeps)
        if (o.key == s.key) throw UsageError("--sweep: '" + s.key + "' is swept twice");
      if (s.shape()) {
        if (vm.count(s.key)) throw UsageError("--" + s.key + " and --sweep " + s.key + " cannot be combined");
        for (const std::string& v : s.values) parse_dim(s.key[0], "sweep " + s.key, v);
      } else {
        bool applies = false;
        for (size_t i = 0; i < engines.size(); ++i)
          if (param_applies(engines[i], s.key)) {
            applies = true;
            for (const std::string& v : s.values) {
              fm::Params scratch = base[i];
              set_model_param(scratch, s.key, v, "--sweep");
            }
          }
        if (!applies) {
          fm::Params scratch = base[0];
          set_model_param(scratch, s.key, s.values[0], "--sweep");  // set_param's message names the key
          throw UsageError("--sweep: '" + s.key + "' is not a parameter of " + engine);
        }
      }
      sweeps.push_back(std::move(s));
    }
  const uint64_t M = vm.count("m") ? parse_dim('m', "m", vm["m"].as<std::string>()) : 512;
  const uint64_t N = vm.count("n") ? parse_dim('n', "n", vm["n"].as<std::string>()) : 1024;
  const uint64_t K = vm.count("k") ? parse_dim('k', "k", vm["k"].as<std::string>()) : 1024;
  if (out.filename().empty()) throw UsageError("--out: '" + out.string() + "' is not a file name");

  // Every configuration, in CSV order: engine, format, then the sweep points (the sweeps that apply
  // to the engine; last key fastest).
  std::vector<Config> configs;
  for (size_t i = 0; i < engines.size(); ++i) {
    std::vector<const Sweep*> dims;
    for (const Sweep& s : sweeps)
      if (s.shape() || param_applies(engines[i], s.key)) dims.push_back(&s);
    for (BlockFormat f : formats[i]) {
      std::vector<size_t> at(dims.size(), 0);
      for (bool more = true; more;) {
        Config c{engines[i], f, base[i], M, N, K};
        for (size_t d = 0; d < dims.size(); ++d) {
          const std::string& v = dims[d]->values[at[d]];
          if (dims[d]->key == "m") c.M = parse_dim('m', "sweep m", v);
          else if (dims[d]->key == "n") c.N = parse_dim('n', "sweep n", v);
          else if (dims[d]->key == "k") c.K = parse_dim('k', "sweep k", v);
          else set_model_param(c.p, dims[d]->key, v, "--sweep");
        }
        configs.push_back(std::move(c));
        more = false;
        for (size_t d = dims.size(); d-- > 0;) {
          if (++at[d] < dims[d]->values.size()) {
            more = true;
            break;
          }
          at[d] = 0;
        }
      }
    }
  }
  if (configs.empty()) throw UsageError("--format: " + engine + " runs none of the formats given");

  area_table();  // the built-in area and energy data parse (or fail) before any work
  energy_of("");

  // Core slots for the largest chip of the sweep, before the first job.
  for (EngineKind e : engines) {
    int64_t cores = 0;
    for (const Config& c : configs)
      if (c.engine == e) cores = std::max(cores, c.p.cores);
    if (cores > 0) fm::reserve_cores(e, cores);
  }

  // ---- CSV columns ----
  const std::vector<std::string> pcols =
      union_columns(engines, [](EngineKind e) {
        std::vector<std::string_view> keys;
        for (const fm::ParamDesc& d : fm::param_table(e)) keys.push_back(d.key);
        return keys;
      });
  const std::vector<std::string> scols = union_columns(engines, [](EngineKind e) { return fm::stall_causes(e); });
  const std::vector<std::string> bcols = union_columns(engines, [](EngineKind e) { return fm::byte_levels(e); });
  std::ostringstream head;
  for (const std::string& k : pcols) head << k << ",";
  head << "engine,format,m,n,k,timing,map_tile_m,map_tile_n,map_tile_k,map_l1_k,map_stages,map_raster,map_split_k,map_cluster_sms,map_cluster_m,"
          "cycles,compute_cycles,instructions,tiles,macs_per_cycle,utilization,compute_roofline_cycles,"
          "memory_roofline_cycles,mappings_evaluated,area_unit,area_mm2,fmax_mhz,time_us,macs_per_s_per_mm2,"
          "energy_pj,pj_per_mac,tops_per_w";
  for (const std::string& s : scols) head << ",stall_" << s;
  for (const std::string& b : bcols) head << ",bytes_" << b;
  head << ",error\n";
  const auto csv_row = [&](const Row& r) {
    std::ostringstream csv;
    const Config& c = r.c;
    const bool cube = c.engine == EngineKind::Cube;
    for (const std::string& k : pcols)
      csv << (param_applies(c.engine, k) ? csv_cell(fm::get_param(c.p, k)) : "") << ",";
    csv << fm::engine_name(c.engine) << "," << info(c.format).name << "," << c.M << "," << c.N << "," << c.K << ","
        << fm::timing_name(timing);
    const UnitArea* area = area_of(c.engine, c.format);
    if (r.stats) {
      const fm::Stats& s = *r.stats;
      const fm::Mapping& m = s.mapping;
      csv << "," << m.tile_m << "," << m.tile_n << "," << m.tile_k << "," << (cube ? std::to_string(m.l1_k) : "")
          << "," << (cube ? "" : std::to_string(m.stages)) << "," << models::raster_name(m.raster) << ","
          << (cube ? "" : std::to_string(m.split_k)) << "," << (cube ? "" : std::to_string(m.cluster_sms)) << ","
          << (cube ? "" : std::to_string(m.cluster_m)) << "," << s.cycles << "," << s.compute_cycles << "," << s.instructions << "," << s.tiles << "," << fmt_num("%.2f", s.macs_per_cycle())
          << "," << fmt_num("%.4f", s.utilization()) << "," << fmt_num("%.1f", s.compute_roofline_cycles) << ","
          << fmt_num("%.1f", s.memory_roofline_cycles) << "," << s.mappings_evaluated;
    } else {
      csv << std::string(18, ',');
    }
    if (area) {
      // Dot-product units of the chip: tensor-core lanes / cube PEs, times the cores.
      const double units = static_cast<double>(cube ? c.p.rows * c.p.cols : c.p.dot_lanes) * static_cast<double>(c.p.cores);
      const double um2 = unit_um2(*area, cube ? c.p.pe_k : 64);
      const double mm2 = units * um2 / 1e6;
      csv << "," << area->unit << "," << (um2 > 0 ? fmt_num("%.4f", mm2) : "") << ","
          << fmt_num("%.1f", area->fmax_mhz) << ","
          << (r.stats ? fmt_num("%.3f", static_cast<double>(r.stats->cycles) / area->fmax_mhz) : "") << ","
          << (r.stats && um2 > 0 ? fmt_num("%.5g", r.stats->macs_per_cycle() * area->fmax_mhz * 1e6 / mm2) : "");
    } else {
      csv << ",,,,,";
    }
    // Energy (rtl/energy.json, its default data distribution): the GEMM's M*N*K MACs at the unit's
    // pJ per MAC, the datapath alone (no memory or data movement), any pe_k.
    const char* eunit = unit_of(fm::engine_name(c.engine), c.format);
    const UnitEnergy* en = eunit ? energy_of(eunit) : nullptr;
    if (en) {
      const double macs = static_cast<double>(c.M) * static_cast<double>(c.N) * static_cast<double>(c.K);
      csv << "," << (r.stats ? fmt_num("%.6g", macs * en->pj_per_mac) : "") << "," << fmt_num("%.4f", en->pj_per_mac) << ","
          << fmt_num("%.4f", en->tops_per_w);
    } else {
      csv << ",,,";
    }
    const auto& causes = fm::stall_causes(c.engine);
    for (const std::string& s : scols)
      csv << "," << (r.stats && contains(causes, std::string_view(s)) ? std::to_string(r.stats->stall(s)) : "");
    const auto& levels = fm::byte_levels(c.engine);
    for (const std::string& b : bcols)
      csv << "," << (r.stats && contains(levels, std::string_view(b)) ? std::to_string(r.stats->bytes_of(b)) : "");
    csv << "," << csv_cell(r.error) << "\n";
    return csv.str();
  };

  // ---- the configurations, sharded over MPI ranks (docs/scale-out.md); one CSV in configuration order ----
  const scaleout::World& world = scaleout::World::get();
  size_t failed = 0, done = 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto last_print = t0;
  // Progress on stderr (never stdout), also from inside one long configuration (the model reports
  // each candidate simulation): about once a second on a terminal, every 10 s into a log.
  const double print_every = isatty(STDERR_FILENO) ? 1.0 : 10.0;
  auto maybe_print = [&](size_t n_done, double frac_of_current) {
    const auto now = std::chrono::steady_clock::now();
    if (!world.root() || std::chrono::duration<double>(now - last_print).count() < print_every) return;
    last_print = now;
    std::fprintf(stderr, "whatif: %s%zu of %zu configurations done (%.0f%%), %zu failed, %.0f s\n",
                 world.size() > 1 ? "rank 0: " : "", n_done, configs.size(),
                 100.0 * (static_cast<double>(n_done) + frac_of_current) / static_cast<double>(configs.size()), failed,
                 seconds_since(t0));
  };
  // What the rows depend on, checked by --resume: every configuration's engine, format, shape and
  // parameters, the timing mode and the sharding.
  uint32_t configs_crc = 0;
  for (const Config& c : configs) {
    std::string line = std::string(fm::engine_name(c.engine)) + " " + std::string(info(c.format).name) + " " +
                       std::to_string(c.M) + " " + std::to_string(c.N) + " " + std::to_string(c.K);
    for (const fm::ParamDesc& d : fm::param_table(c.engine)) {
      line += ' ';  // (not " " + ...: GCC 12 warns -Wrestrict on that)
      line += fm::get_param(c.p, d.key);
    }
    configs_crc = io::crc32(line + "\n", configs_crc);
  }
  scaleout::RowJobSpec job;
  job.label = "whatif";
  job.out = out;
  job.header = head.str();
  job.items = configs.size();
  job.shard_size = shard_size ? shard_size : (timing == fm::Timing::Analytic ? 64 : 1);
  job.resume = vm.count("resume") > 0;
  job.plan = "fp4sim whatif\nversion " + std::string(io::tool_version()) + "\ntiming " +
             std::string(fm::timing_name(timing)) + "\nconfigurations " + std::to_string(configs.size()) + " crc32 " +
             io::crc32_hex(configs_crc) + "\ncolumns crc32 " + io::crc32_hex(io::crc32(job.header)) + "\nshard-size " +
             std::to_string(job.shard_size) + "\n";
  job.prepare = [&] {
    // The output policy's checks (the CSV itself is written atomically by run_row_job): an existing
    // FILE needs --force, a folder the user named must exist (the default out/ is created).
    io::OutputSet check(vm["force"].as<bool>());
    check.add_file(out, !vm.count("out"));
    if (!vm.count("out") && out.has_parent_path()) fs::create_directories(out.parent_path());
  };
  std::optional<size_t> fault_at;
  if (const char* f = std::getenv("FP4SIM_WHATIF_FAULT"))
    fault_at = static_cast<size_t>(parse_uint("FP4SIM_WHATIF_FAULT", f, 0, configs.size() - 1));
  // The mapping each configuration chose (tried: it ran in this process, or was re-run here).
  // A configuration with more of one resource than the one before it is also offered that one's
  // choice. So that the choice never depends on which process or shard ran the previous row (same
  // bits for any rank count, shard size or resume), a row whose predecessor ran elsewhere first
  // re-runs the chain of predecessors that offer to each other, here.
  std::vector<std::optional<fm::Mapping>> chosen(configs.size());
  std::vector<char> tried(configs.size(), 0);
  const auto options_for = [&](size_t i, std::function<void(double)> progress) {
    fm::RunOptions o;
    o.timing = timing;
    o.progress = std::move(progress);
    if (i > 0 && chosen[i - 1] && more_of_one_resource(configs[i - 1], configs[i])) {
      fm::Mapping prev = *chosen[i - 1];
      if (!prev.cores) prev.cores = configs[i - 1].p.cores;
      // From no L2 to some: the same kernel with loads that do not allocate in L2 runs as before.
      if (configs[i - 1].p.l2_bytes == 0 && configs[i].p.l2_bytes > 0) prev.l2_no_allocate = true;
      o.also.push_back(prev);
    }
    return o;
  };
  const auto workload_for = [&](const Config& c) {
    fm::Workload w;
    w.cfg = mma_config_for(c.format);
    w.model = w.cfg.model;
    w.M = c.M;
    w.N = c.N;
    w.K = c.K;
    w.timing_only = true;
    return w;
  };
  const auto settle = [&](size_t j) {  // chosen[j] as a run of every row in order would leave it
    if (tried[j]) return;
    size_t s = j;
    while (s > 0 && !tried[s - 1] && more_of_one_resource(configs[s - 1], configs[s])) --s;
    for (size_t k = s; k <= j; ++k) {
      tried[k] = 1;
      if (fault_at && *fault_at == k) continue;  // that row fails wherever it runs
      try {
        chosen[k] = fm::run(configs[k].p, workload_for(configs[k]), options_for(k, [](double) {})).stats.mapping;
      } catch (const std::exception&) {  // that row's own run reports it
      }
    }
  };
  job.run = [&](size_t i) {
    const Config& c = configs[i];
    if (i > 0 && more_of_one_resource(configs[i - 1], c)) settle(i - 1);
    const fm::Workload w = workload_for(c);
    // Test hook (docs/whatif.md): configuration FP4SIM_WHATIF_FAULT fails inside the model, from the
    // progress callback that a cycle simulation calls from its store unit (analytic: after the run).
    const bool fault = fault_at && *fault_at == i;
    bool faulted = false;
    const auto inject = [&] {
      faulted = true;
      throw std::runtime_error("whatif: fault injected at configuration " + std::to_string(i) + " (FP4SIM_WHATIF_FAULT)");
    };
    const fm::RunOptions o = options_for(i, [&](double f) {
      if (fault && !faulted) inject();
      maybe_print(done, f);
    });
    tried[i] = 1;
    Row r{c, std::nullopt, {}};
    // Any error of one configuration (a mapping that does not fit, a runtime error inside the
    // simulation) becomes its row's error; the model unwinds a failed job, so the next rows run.
    try {
      r.stats = fm::run(c.p, w, o).stats;
      if (fault && !faulted) inject();
      chosen[i] = r.stats->mapping;
    } catch (const std::exception& e) {
      r.stats.reset();
      r.error = e.what();
      ++failed;
    }
    maybe_print(++done, 0.0);
    return scaleout::RowItem{csv_row(r), r.error, ""};
  };
  const scaleout::RowJobOutcome res = scaleout::run_row_job(job);
  if (world.root())
    std::cout << "wrote " << configs.size() << " configurations to " << out.string() << " ("
              << fmt_num("%.1f", seconds_since(t0)) << " s, " << fm::timing_name(timing) << " timing)\n";
  if (res.failed)
    throw std::runtime_error("whatif: " + std::to_string(res.failed) + " of " + std::to_string(configs.size()) +
                             " configurations failed: " + res.first_error);
  return kExitOk;
#endif
}

}  // namespace fp4sim::cli
