// fp4sim study: a model-scale study (docs/scale-out.md). Every linear layer of a named transformer
// shape (Llama-like: q, k, v, o projections, the gated MLP's gate / up / down, and the LM head) at a
// token count, on both engines and every format each engine runs: the layer's GEMM (M = tokens,
// N = output features, K = input features) on the models in timing-only mode (cycles, utilization,
// mapping), and the format's error against FP64 on a sample of the layer (sample-m tokens x sample-n
// outputs of LLM-like data over the whole K, quantized and multiplied by the golden library). One CSV
// row per engine x format x layer, in that order; the configurations are sharded over MPI ranks and
// the CSV is byte-identical for any rank count.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "fp4sim/io/crc32.hpp"
#include "fp4sim/io/manifest.hpp"
#include "fp4sim/linear.hpp"
#include "fp4sim/synth.hpp"
#include "scaleout/scaleout.hpp"
#ifdef FP4SIM_HAVE_MODELS
#include "fp4sim/models/models.hpp"
#endif

namespace fp4sim::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr const char* kUsage =
    "study [--model NAME] [--tokens T] [--engine tensor-core|cube|both] [--format F ...]\n"
    "           [--timing analytic|cycle] [--sample-m M] [--sample-n N] [--seed S]\n"
    "           [--param KEY=VALUE ...] [--config FILE.json] [--out FILE.csv] [--resume] [--shard-size N]\n"
    "           [--force] [--durable]";

// A decoder-only transformer's shape (Llama family: grouped-query attention, gated MLP, untied LM head).
struct ModelShape {
  const char* name;
  const char* what;
  uint64_t hidden, layers, heads, kv_heads, head_dim, ffn, vocab;
};
constexpr ModelShape kModels[] = {
    {"llama-8b", "Llama-3-8B-like", 4096, 32, 32, 8, 128, 14336, 128256},
    {"llama-70b", "Llama-3-70B-like", 8192, 80, 64, 8, 128, 28672, 128256},
    {"tiny", "a small test shape", 256, 2, 4, 2, 64, 512, 1024},
};

struct Linear {
  std::string name;
  uint64_t n, k, instances;  // output features, input features, occurrences in the model
};

[[maybe_unused]] std::vector<Linear> linears(const ModelShape& m) {
  const uint64_t q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  return {{"q_proj", q, m.hidden, m.layers},      {"k_proj", kv, m.hidden, m.layers},
          {"v_proj", kv, m.hidden, m.layers},     {"o_proj", m.hidden, q, m.layers},
          {"gate_proj", m.ffn, m.hidden, m.layers}, {"up_proj", m.ffn, m.hidden, m.layers},
          {"down_proj", m.hidden, m.ffn, m.layers}, {"lm_head", m.vocab, m.hidden, 1}};
}

std::string model_list() {
  std::string s;
  for (const ModelShape& m : kModels) s += (s.empty() ? "" : ", ") + std::string(m.name);
  return s;
}

[[maybe_unused]] double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

#ifdef FP4SIM_HAVE_MODELS
namespace fm = fp4sim::models;

const std::vector<BlockFormat>& engine_formats(fm::EngineKind e) {
  static const std::vector<BlockFormat> tc = {BlockFormat::Nvfp4,     BlockFormat::Mxfp4,     BlockFormat::Mxfp8E4M3,
                                              BlockFormat::Mxfp8E5M2, BlockFormat::Mxfp6E2M3, BlockFormat::Mxfp6E3M2};
  static const std::vector<BlockFormat> cube = {BlockFormat::Hif4, BlockFormat::Nvfp4, BlockFormat::Mxfp4};
  return e == fm::EngineKind::Cube ? cube : tc;
}

struct Config {
  fm::EngineKind engine;
  BlockFormat format;
  size_t layer;  // index into the linears
};

std::string num(const char* fmt, double v) { return std::isfinite(v) ? fmt_num(fmt, v) : std::string(); }

// RFC 4180: a cell holding a comma, quote or line break is quoted, its quotes doubled.
std::string csv_cell_text(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}
#endif

}  // namespace

int cmd_study(const Invocation& inv) {
  po::options_description od("Options");
  od.add_options()
      ("model", po::value<std::string>()->value_name("NAME"), ("transformer shape (default llama-8b): " + model_list()).c_str())
      ("tokens", po::value<std::string>()->value_name("T"), "tokens in flight = every GEMM's M (default 2048)")
      ("engine", po::value<std::string>()->value_name("E"), "tensor-core, cube or both (default both)")
      ("format", po::value<std::vector<std::string>>()->value_name("F"),
       "block formats (repeatable or comma-separated); default every format of each engine: tensor core nvfp4, "
       "mxfp4, mxfp8-e4m3, mxfp8-e5m2, mxfp6-e2m3, mxfp6-e3m2; cube hif4, nvfp4, mxfp4")
      ("timing", po::value<std::string>()->value_name("T"), "analytic (default) or cycle")
      ("sample-m", po::value<std::string>()->value_name("M"), "tokens of the error sample (default 32, at most --tokens)")
      ("sample-n", po::value<std::string>()->value_name("N"), "output features of the error sample (default 128)")
      ("seed", po::value<std::string>()->value_name("S"), "seed of the sample's synthetic LLM-like data (default 0)")
      ("out", po::value<std::string>()->value_name("FILE"), "CSV file (default out/study.csv)")
      ("resume", "continue an interrupted run from FILE.partial (only its missing shards run)")
      ("force", po::bool_switch(), "replace FILE if it already exists")
      ("shard-size", po::value<std::string>()->value_name("N"), "configurations per shard (default 1)");
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
  const std::string mname = get_or(vm, "model", "llama-8b");
  const ModelShape* shape = nullptr;
  for (const ModelShape& m : kModels)
    if (mname == m.name) shape = &m;
  if (!shape) throw UsageError("--model: unknown model '" + mname + "' (expected one of: " + model_list() + ")");
  const uint64_t tokens = vm.count("tokens") ? parse_uint("tokens", vm["tokens"].as<std::string>(), 1, 1u << 20) : 2048;
  const uint64_t sample_m = std::min<uint64_t>(
      tokens, vm.count("sample-m") ? parse_uint("sample-m", vm["sample-m"].as<std::string>(), 1, 4096) : 32);
  const uint64_t sample_n_opt = vm.count("sample-n") ? parse_uint("sample-n", vm["sample-n"].as<std::string>(), 1, 1u << 16) : 128;
  const uint64_t seed = vm.count("seed") ? parse_uint("seed", vm["seed"].as<std::string>(), 0, UINT64_MAX) : 0;
  const size_t shard_size =
      vm.count("shard-size") ? static_cast<size_t>(parse_uint("shard-size", vm["shard-size"].as<std::string>(), 1, 1u << 20)) : 1;
  const std::string engine = get_or(vm, "engine", "both");
  if (engine != "tensor-core" && engine != "cube" && engine != "both")
    throw UsageError("--engine must be tensor-core, cube or both");
  const fs::path out = get_or(vm, "out", "out/study.csv");
  if (out.filename().empty()) throw UsageError("--out: '" + out.string() + "' is not a file name");
#ifndef FP4SIM_HAVE_MODELS
  (void)tokens, (void)sample_m, (void)sample_n_opt, (void)seed, (void)shard_size;
  throw std::runtime_error("fp4sim was built without the SystemC models (configure with FP4SIM_SYSTEMC=ON)");
#else
  std::vector<fm::EngineKind> engines;
  if (engine != "cube") engines.push_back(fm::EngineKind::TensorCore);
  if (engine != "tensor-core") engines.push_back(fm::EngineKind::Cube);
  fm::Timing timing = fm::Timing::Analytic;
  if (vm.count("timing") && !fm::parse_timing(vm["timing"].as<std::string>(), timing))
    throw UsageError("--timing: expected analytic or cycle, got '" + vm["timing"].as<std::string>() + "'");
  std::vector<BlockFormat> want;
  if (vm.count("format"))
    for (const std::string& arg : vm["format"].as<std::vector<std::string>>()) {
      std::stringstream ss(arg);
      for (std::string name; std::getline(ss, name, ',');) {
        BlockFormat f;
        if (!parse_block_format(name, f)) throw UsageError("--format: unknown format '" + name + "'");
        bool runs = false;
        for (fm::EngineKind e : engines)
          runs = runs || std::find(engine_formats(e).begin(), engine_formats(e).end(), f) != engine_formats(e).end();
        if (!runs) throw UsageError("--format: " + engine + " does not run " + name);
        if (std::find(want.begin(), want.end(), f) == want.end()) want.push_back(f);
      }
    }
  const std::vector<fm::Params> params = model_params(engines, model_param_settings(vm));
  const std::vector<Linear> layers = linears(*shape);
  std::vector<Config> configs;
  for (size_t e = 0; e < engines.size(); ++e)
    for (BlockFormat f : engine_formats(engines[e]))
      if (want.empty() || std::find(want.begin(), want.end(), f) != want.end())
        for (size_t l = 0; l < layers.size(); ++l) configs.push_back({engines[e], f, l});
  for (size_t e = 0; e < engines.size(); ++e) fm::reserve_cores(engines[e], params[e].cores);
  const auto params_of = [&](fm::EngineKind e) -> const fm::Params& {
    return params[engines.size() == 2 && e == fm::EngineKind::Cube ? 1 : 0];
  };

  const std::string header =
      "model,tokens,engine,format,layer,instances,m,n,k,timing,map_tile_m,map_tile_n,map_tile_k,map_l1_k,map_stages,"
      "map_raster,cycles,macs_per_cycle,utilization,compute_roofline_cycles,memory_roofline_cycles,"
      "cycles_all_instances,sample_m,sample_n,rel_err,qsnr_db,max_abs_err,bias,error\n";
  const scaleout::World& world = scaleout::World::get();
  const auto t0 = std::chrono::steady_clock::now();
  auto last_print = t0;
  size_t done = 0;
  uint32_t crc = 0;
  for (const Config& c : configs) {
    std::string line = std::string(fm::engine_name(c.engine)) + " " + std::string(info(c.format).name) + " " + layers[c.layer].name;
    for (const fm::ParamDesc& d : fm::param_table(c.engine)) {
      line += ' ';  // (not " " + ...: GCC 12 warns -Wrestrict on that)
      line += fm::get_param(params_of(c.engine), d.key);
    }
    crc = io::crc32(line + "\n", crc);
  }
  scaleout::RowJobSpec job;
  job.label = "study";
  job.out = out;
  job.header = header;
  job.items = configs.size();
  job.shard_size = shard_size;
  job.resume = vm.count("resume") > 0;
  // Most of a configuration's time is the error sample, which grows with K (the timing-only run is
  // cheap in analytic mode; with cycle timing the GEMM's size dominates).
  for (const Config& c : configs) {
    const Linear& L = layers[c.layer];
    job.item_cost.push_back(timing == fm::Timing::Cycle ? static_cast<double>(tokens * L.n * L.k)
                                                        : static_cast<double>(L.k) + 1024.0);
  }
  job.plan = "fp4sim study\nversion " + std::string(io::tool_version()) + "\nmodel " + shape->name + "\ntokens " +
             std::to_string(tokens) + "\ntiming " + std::string(fm::timing_name(timing)) + "\nsample " +
             std::to_string(sample_m) + "x" + std::to_string(sample_n_opt) + " seed " + std::to_string(seed) +
             "\nconfigurations " + std::to_string(configs.size()) + " crc32 " + io::crc32_hex(crc) + "\nshard-size " +
             std::to_string(shard_size) + "\n";
  job.prepare = [&] {
    // The output policy's checks (the CSV itself is written atomically by run_row_job): an existing
    // FILE needs --force, a folder the user named must exist (the default out/ is created).
    io::OutputSet check(vm["force"].as<bool>());
    check.add_file(out, !vm.count("out"));
    if (!vm.count("out") && out.has_parent_path()) fs::create_directories(out.parent_path());
  };
  job.run = [&](size_t i) {
    const Config& c = configs[i];
    const Linear& L = layers[c.layer];
    const fm::Params& p = params_of(c.engine);
    fm::Workload w;
    w.cfg = mma_config_for(c.format);
    w.model = w.cfg.model;
    w.M = tokens;
    w.N = L.n;
    w.K = L.k;
    w.timing_only = true;
    fm::RunOptions o;
    o.timing = timing;
    std::ostringstream row;
    row << shape->name << "," << tokens << "," << fm::engine_name(c.engine) << "," << info(c.format).name << "," << L.name
        << "," << L.instances << "," << tokens << "," << L.n << "," << L.k << "," << fm::timing_name(timing);
    std::string error, extra;
    try {
      const fm::Stats s = fm::run(p, w, o).stats;
      const fm::Mapping& m = s.mapping;
      const bool cube = c.engine == fm::EngineKind::Cube;
      row << "," << m.tile_m << "," << m.tile_n << "," << m.tile_k << "," << (cube ? std::to_string(m.l1_k) : "") << ","
          << (cube ? "" : std::to_string(m.stages)) << "," << fm::raster_name(m.raster) << "," << s.cycles << ","
          << fmt_num("%.2f", s.macs_per_cycle()) << "," << fmt_num("%.4f", s.utilization()) << ","
          << fmt_num("%.1f", s.compute_roofline_cycles) << "," << fmt_num("%.1f", s.memory_roofline_cycles) << ","
          << s.cycles * L.instances;
      // Summary inputs for rank 0: ran, cycles x instances, MACs x instances, chip peak (x 1000).
      scaleout::put(extra, uint64_t{1});
      scaleout::put(extra, s.cycles * L.instances);
      scaleout::put(extra, s.macs * L.instances);
      scaleout::put(extra, static_cast<uint64_t>(std::llround(s.peak_macs_per_cycle * 1000)));
    } catch (const std::invalid_argument& e) {
      error = e.what();
      row << std::string(12, ',');
      scaleout::put(extra, uint64_t{0});
    }
    // The error vs FP64 on a sample of the layer: the same for both engines (same format, same numerics).
    const uint64_t sn = std::min(sample_n_opt, L.n);
    const uint64_t lseed = seed ^ (0x9E3779B97F4A7C15ull * (c.layer + 1));
    const std::vector<float> x = llm_activations(sample_m, L.k, lseed);
    const std::vector<float> wt = llm_weights(sn, L.k, lseed);
    const QuantizedGemm q = quantized_gemm(c.format, x, {}, wt, {}, {}, sample_m, sn, L.k, std::nullopt, 1);
    const GemmError ge = gemm_error(q.d, reference_gemm_f64(x, wt, {}, sample_m, sn, L.k, 1));
    row << "," << sample_m << "," << sn << "," << num("%.4e", ge.rel_err) << "," << num("%.2f", ge.qsnr_db) << ","
        << num("%.4e", ge.max_abs) << "," << num("%.3e", ge.bias) << "," << csv_cell_text(error) << "\n";
    scaleout::put(extra, std::string(num("%.4e", ge.rel_err)));
    ++done;
    if (world.root() && seconds_since(last_print) >= 1.0) {
      last_print = std::chrono::steady_clock::now();
      std::fprintf(stderr, "study: %s%zu configurations done, %.0f s\n", world.size() > 1 ? "rank 0: " : "", done,
                   seconds_since(t0));
    }
    return scaleout::RowItem{row.str(), error, extra};
  };
  const scaleout::RowJobOutcome res = scaleout::run_row_job(job);

  // ---- summary (rank 0): the whole forward pass (every linear layer, every instance) per engine x format ----
  if (world.root()) {
    struct Total {
      std::string engine, format;
      uint64_t cycles = 0, macs = 0, peak_milli = 0, failed = 0;
      double err_min = INFINITY, err_max = -INFINITY;
    };
    std::vector<Total> totals;
    for (size_t i = 0; i < configs.size(); ++i) {
      const std::string e(fm::engine_name(configs[i].engine)), f(info(configs[i].format).name);
      if (totals.empty() || totals.back().engine != e || totals.back().format != f) totals.push_back({e, f});
      Total& t = totals.back();
      scaleout::Reader rd(res.extras[i]);
      if (rd.u64()) {
        t.cycles += rd.u64();
        t.macs += rd.u64();
        t.peak_milli = rd.u64();
      } else {
        ++t.failed;
      }
      const std::string err(rd.str());
      if (!err.empty()) {
        const double v = std::strtod(err.c_str(), nullptr);
        t.err_min = std::min(t.err_min, v);
        t.err_max = std::max(t.err_max, v);
      }
    }
    uint64_t n_layers = 0;
    for (const Linear& L : layers) n_layers += L.instances;
    std::vector<std::vector<std::string>> table;
    for (const Total& t : totals) {
      const double mpc = t.cycles ? static_cast<double>(t.macs) / static_cast<double>(t.cycles) : 0.0;
      const double peak = static_cast<double>(t.peak_milli) / 1000.0;
      table.push_back({t.engine, t.format, t.failed ? "-" : std::to_string(t.cycles), t.failed ? "-" : fmt_num("%.0f", mpc),
                       t.failed || peak <= 0 ? "-" : fmt_num("%.1f%%", 100.0 * mpc / peak),
                       fmt_num("%.3e", t.err_min) + " .. " + fmt_num("%.3e", t.err_max)});
    }
    std::cout << "fp4sim study: " << shape->name << " (" << shape->what << "), " << tokens << " tokens: " << n_layers
              << " linear layers (" << layers.size() << " shapes), " << fm::timing_name(timing)
              << " timing; error vs FP64 on " << sample_m << "-token samples\n\n";
    print_table(std::cout, {"engine", "format", "forward cycles", "MACs/cycle", "util", "rel err (layers min .. max)"},
                table, 2);
    std::cout << "\n";
  }
  if (world.root())
    std::cout << "wrote " << configs.size() << " configurations to " << out.string() << " (" << fmt_num("%.1f", seconds_since(t0))
              << " s, " << fm::timing_name(timing) << " timing)\n";
  if (res.failed)
    throw std::runtime_error("study: " + std::to_string(res.failed) + " of " + std::to_string(configs.size()) +
                             " configurations failed: " + res.first_error);
  return kExitOk;
#endif
}

}  // namespace fp4sim::cli
