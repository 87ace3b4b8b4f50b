// fp4sim regress: seeded random differential checks of the RTL units, the SystemC models and the GPU
// kernels' host arithmetic against golden, sharded over MPI ranks and threads (docs/scale-out.md).
// Writes OUT/summary.txt (what stdout shows), OUT/report.json and, when anything mismatched,
// OUT/mismatches: the mismatching cases as a vector suite (fp4sim replay OUT/mismatches --target ...).
// The outputs depend only on the options that define the cases, never on ranks, threads or resumes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli.hpp"
#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/manifest.hpp"
#include "fp4sim/io/vectors.hpp"
#include "scaleout/regress.hpp"
#include "scaleout/scaleout.hpp"

namespace fp4sim::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;
using regress::Family;
using regress::UnitDef;

constexpr const char* kUsage =
    "regress [--cases N] [--seed S] [--units U,...] [--out DIR] [--force | --resume]\n"
    "           [--shard-size N] [--threads T] [--max-vectors V] [--inject-fault I,...]";

constexpr uint64_t kShardQuantum = 256;  // shard sizes are multiples of every unit's case group

struct Shard {
  size_t unit;  // index into the selected units
  uint64_t begin, end;
};

std::string family_name(Family f) {
  return f == Family::Rtl ? "rtl" : f == Family::Models ? "models" : "gpu-host";
}

// --units: names and groups (rtl, models, gpu-host, all), comma-separated and repeatable; returned in
// the fixed order of regress::all_units(), each once. A group takes the units this build has (none
// is fine if other units remain); a unit named alone must be there.
std::vector<const UnitDef*> select_units(const std::vector<std::string>& args) {
  const auto& all = regress::all_units();
  std::vector<char> want(all.size(), 0);
  std::string names, missing_why;
  for (const UnitDef& u : all) names += (names.empty() ? "" : ", ") + u.name;
  for (const std::string& arg : args) {
    std::stringstream ss(arg);
    for (std::string name; std::getline(ss, name, ',');) {
      bool hit = false, any_here = false;
      std::string why;
      for (size_t i = 0; i < all.size(); ++i) {
        const bool group = name == "all" || name == family_name(all[i].family);
        if (name != all[i].name && !group) continue;
        hit = true;
        // A group takes the units this build has; a unit named alone must be there.
        if (!all[i].missing.empty()) {
          if (!group) throw std::runtime_error("--units: unit " + all[i].name + " cannot run: " + all[i].missing);
          why = all[i].missing;
          continue;
        }
        want[i] = 1;
        any_here = true;
      }
      if (!hit)
        throw UsageError("--units: unknown unit '" + name + "' (expected rtl, models, gpu-host, all or one of: " + names + ")");
      if (!any_here) missing_why = "'" + name + "': " + why;
    }
  }
  std::vector<const UnitDef*> out;
  for (size_t i = 0; i < all.size(); ++i)
    if (want[i]) out.push_back(&all[i]);
  if (out.empty()) throw std::runtime_error("--units: no unit can run (" + missing_why + ")");
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

}  // namespace

int cmd_regress(const Invocation& inv) {
  po::options_description od("Options");
  od.add_options()
      ("cases", po::value<std::string>()->value_name("N"),
       "cases (checked outputs) per unit, default 10000; GEMM units round up to whole GEMMs (256 / 64 outputs)")
      ("seed", po::value<std::string>()->value_name("S"), "64-bit seed (default 0); case i = f(seed, unit, i)")
      ("units", po::value<std::vector<std::string>>()->value_name("U,..."),
       "units to check (repeatable or comma-separated): RTL unit names, tensor-core, cube, gpu-host, or the groups "
       "rtl, models, gpu-host, all (default: every unit this build has)")
      ("out", po::value<std::string>()->value_name("DIR"), "output directory (default out/regress)")
      ("force", "replace DIR if it exists and discard an interrupted run's DIR.partial")
      ("resume", "continue an interrupted run from DIR.partial: only the missing shards run")
      ("shard-size", po::value<std::string>()->value_name("N"),
       "cases per shard, rounded up to a multiple of 256 (default max(4096, cases / 1024))")
      ("threads", po::value<std::string>()->value_name("T"), "worker threads per rank (default 1; 0 = all cores)")
      ("max-vectors", po::value<std::string>()->value_name("V"),
       "mismatching cases written to DIR/mismatches per unit (default 16; every mismatch is counted)")
      ("inject-fault", po::value<std::string>()->value_name("I,..."),
       "flip bit 0 of the device's result for case I of every unit before the comparison (the checker's self-test)");
  po::variables_map vm;
  if (!parse_options(inv, kUsage, od, vm)) return kExitOk;

  const uint64_t cases = vm.count("cases") ? parse_uint("cases", vm["cases"].as<std::string>(), 1, 1ull << 40) : 10000;
  const uint64_t seed = vm.count("seed") ? parse_uint("seed", vm["seed"].as<std::string>(), 0, UINT64_MAX) : 0;
  const bool force = vm.count("force") > 0, resume = vm.count("resume") > 0;
  if (force && resume) throw UsageError("--force and --resume cannot be combined");
  const fs::path out = get_or(vm, "out", "out/regress");
  if (out.empty() || out.filename() == "." || out.filename() == "..")
    throw UsageError("--out: '" + out.string() + "' is not a directory name");
  const uint64_t max_vectors =
      vm.count("max-vectors") ? parse_uint("max-vectors", vm["max-vectors"].as<std::string>(), 0, regress::kMaxListed) : 16;
  unsigned threads = vm.count("threads") ? static_cast<unsigned>(parse_uint("threads", vm["threads"].as<std::string>(), 0, 256)) : 1;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<uint64_t> faults;
  if (vm.count("inject-fault")) {
    std::stringstream ss(vm["inject-fault"].as<std::string>());
    for (std::string f; std::getline(ss, f, ',');) faults.push_back(parse_uint("inject-fault", f, 0, (1ull << 40) - 1));
    std::sort(faults.begin(), faults.end());
    faults.erase(std::unique(faults.begin(), faults.end()), faults.end());
  }
  const std::vector<const UnitDef*> units =
      select_units(vm.count("units") ? vm["units"].as<std::vector<std::string>>() : std::vector<std::string>{"all"});
  uint64_t shard_size = std::max<uint64_t>(4096, (cases + 1023) / 1024);
  if (vm.count("shard-size")) shard_size = parse_uint("shard-size", vm["shard-size"].as<std::string>(), 1, 1ull << 40);
  shard_size = (shard_size + kShardQuantum - 1) / kShardQuantum * kShardQuantum;

  // The shards: every unit's cases in order, cut every shard_size.
  uint64_t n_shards = 0;
  for (const UnitDef* u : units) n_shards += ((cases + u->group - 1) / u->group * u->group + shard_size - 1) / shard_size;
  if (n_shards > 1000000)
    throw UsageError("--shard-size: " + std::to_string(n_shards) +
                     " shards (at most 1000000: each is a file and a message); use a larger --shard-size");
  std::vector<Shard> shards;
  std::vector<double> cost;
  std::vector<uint64_t> unit_cases;
  for (size_t u = 0; u < units.size(); ++u) {
    const uint64_t n = (cases + units[u]->group - 1) / units[u]->group * units[u]->group;
    unit_cases.push_back(n);
    for (uint64_t b = 0; b < n; b += shard_size) {
      shards.push_back({u, b, std::min(n, b + shard_size)});
      cost.push_back(static_cast<double>(shards.back().end - b) * units[u]->cost);
    }
  }
  std::vector<std::string> unit_names, fault_text;
  for (const UnitDef* u : units) unit_names.push_back(u->name);
  for (uint64_t f : faults) fault_text.push_back(std::to_string(f));
  // Everything the shard results depend on (checked on --resume), and the command line that
  // reproduces them (recorded in the mismatch suite's manifest instead of argv, which --resume,
  // --threads and --out change).
  const std::string plan = "fp4sim regress\nversion " + std::string(io::tool_version()) + "\nseed " + std::to_string(seed) +
                           "\ncases " + std::to_string(cases) + "\nunits " + join(unit_names, ",") + "\nshard-size " +
                           std::to_string(shard_size) + "\ninject-fault " + join(fault_text, ",") + "\n";
  std::vector<std::string> canonical = {"fp4sim", "regress", "--cases", std::to_string(cases), "--seed", std::to_string(seed),
                                        "--units", join(unit_names, ",")};
  if (!faults.empty()) canonical.insert(canonical.end(), {"--inject-fault", join(fault_text, ",")});

  const scaleout::World& world = scaleout::World::get();
  if (std::any_of(units.begin(), units.end(), [](const UnitDef* u) { return u->family == Family::Models; }))
    regress::reserve_model_cores();
  const auto t0 = std::chrono::steady_clock::now();

  std::vector<std::unique_ptr<regress::Runner>> runners;
  for (unsigned w = 0; w < threads; ++w) runners.push_back(std::make_unique<regress::Runner>());
  scaleout::JobSpec spec;
  spec.label = "regress";
  spec.partial = scaleout::partial_path(out);
  spec.plan = plan;
  spec.cost = cost;
  spec.resume = resume;
  spec.replace_stale = force;
  spec.threads = threads;
  spec.prepare = [&] {
    std::error_code ec;
    if (fs::exists(out, ec)) {
      if (!fs::is_directory(out)) throw io::IoError(out.string() + ": exists and is not a directory");
      if (!force)
        throw io::IoError(out.string() + (resume ? ": the run is already complete (use --force to run it again)"
                                                 : ": already exists (use --force to replace it)"));
    }
    // A folder the user named must exist; the default out/ is created.
    io::OutputSet check(true);
    check.add_dir(out, !vm.count("out"));
    if (!vm.count("out") && out.has_parent_path()) fs::create_directories(out.parent_path());
  };
  spec.run = [&](size_t s, unsigned w) {
    const Shard& sh = shards[s];
    return regress::encode(runners[w]->run(*units[sh.unit], seed, sh.begin, sh.end, faults));
  };
  spec.started = [&](size_t) {
    if (world.root())
      std::fprintf(stderr, "fp4sim regress: seed %llu, %llu cases per unit, %zu units, %zu shards of <= %llu cases, %d rank(s) x %u thread(s)\n",
                   static_cast<unsigned long long>(seed), static_cast<unsigned long long>(cases), units.size(),
                   shards.size(), static_cast<unsigned long long>(shard_size), world.size(), threads);
  };
  spec.main_thread_only = [&](size_t s) { return units[shards[s].unit]->family == Family::Models; };
  auto last = t0;
  spec.progress = [&](size_t done, size_t of) {
    if (!world.root() || seconds_since(last) < 2.0) return;
    last = std::chrono::steady_clock::now();
    std::fprintf(stderr, "regress: rank 0: %zu of %zu shards (%.0f%%), %.0f s\n", done, of,
                 100.0 * static_cast<double>(done) / static_cast<double>(std::max<size_t>(of, 1)), seconds_since(t0));
  };
  const scaleout::JobOutcome job = scaleout::run_job(spec);
  const scaleout::JobTiming timing = scaleout::last_timing();

  // ---- merge (rank 0): totals per unit, the mismatching cases as a suite, the report ----
  const auto t_merge = std::chrono::steady_clock::now();
  const std::string verdict = scaleout::on_root([&]() -> std::string {
    std::vector<regress::RangeResult> per(units.size());
    for (size_t s = 0; s < shards.size(); ++s) {
      const regress::RangeResult r = regress::decode(job.results[s]);
      regress::RangeResult& t = per[shards[s].unit];
      t.checked += r.checked;
      t.mismatching_outputs += r.mismatching_outputs;
      t.mismatching_groups += r.mismatching_groups;
      for (const regress::Mismatch& m : r.list)
        if (t.list.size() < regress::kMaxListed) t.list.push_back(m);
    }
    uint64_t total = 0, bad = 0, bad_groups = 0;
    std::vector<std::vector<std::string>> table;
    io::Json junits = io::Json::array();
    std::vector<vectors::VectorCase> vcases;
    for (size_t u = 0; u < units.size(); ++u) {
      const regress::RangeResult& t = per[u];
      if (t.checked != unit_cases[u])
        throw std::runtime_error("internal error: unit " + units[u]->name + " checked " + std::to_string(t.checked) +
                                 " of " + std::to_string(unit_cases[u]) + " cases");
      total += t.checked;
      bad += t.mismatching_outputs;
      bad_groups += t.mismatching_groups;
      table.push_back({units[u]->name, family_name(units[u]->family), units[u]->checks, std::to_string(t.checked),
                       std::to_string(t.mismatching_outputs)});
      io::Json first = io::Json::array();
      for (const regress::Mismatch& m : t.list)
        first.push_back({{"group", m.group}, {"outputs", m.outputs}, {"first_output", m.first},
                         {"golden", io::hex32(m.golden)}, {"device", io::hex32(m.device)}});
      junits.push_back({{"unit", units[u]->name}, {"family", family_name(units[u]->family)}, {"checks", units[u]->checks},
                        {"case_group", units[u]->group}, {"cases", t.checked},
                        {"mismatching_outputs", t.mismatching_outputs}, {"mismatching_groups", t.mismatching_groups},
                        {"first_mismatches", first}});
      for (size_t i = 0; i < t.list.size() && i < max_vectors; ++i)
        vcases.push_back(regress::vector_case(*units[u], seed, t.list[i]));
    }
    table.push_back({"total", "", "", std::to_string(total), std::to_string(bad)});
    std::ostringstream sum;
    sum << "fp4sim regress: seed " << seed << ", " << cases << " cases per unit, " << units.size() << " units\n\n";
    print_table(sum, {"unit", "family", "checked against golden", "cases", "mismatches"}, table, 3);
    if (bad == 0) {
      sum << "\nAll " << total << " outputs bit-identical to golden.\n";
    } else {
      // (No path here: the summary is an output, the same wherever --out puts it.)
      sum << "\nMISMATCH: " << bad << " of " << total << " outputs (in " << bad_groups
          << " case groups) differ from golden; " << vcases.size()
          << " case(s) in the output's mismatches/ suite (fp4sim replay DIR/mismatches --target golden|rtl|gpu-host)\n";
    }
    io::Json rep = io::report_header("regress", canonical);
    rep["seed"] = seed;
    rep["cases_per_unit"] = cases;
    rep["injected_faults"] = faults;
    rep["units"] = junits;
    rep["outputs_checked"] = total;
    rep["mismatching_outputs"] = bad;
    rep["all_bit_exact"] = bad == 0;
    rep["mismatches"] = vcases.empty() ? io::Json(nullptr) : io::Json("mismatches");
    io::StagingDir stage(out);
    io::write_file_atomic(stage.path() / "summary.txt", sum.str());
    io::write_file_atomic(stage.path() / "report.json", rep.dump(2) + "\n");
    if (!vcases.empty()) {
      vectors::number_cases(vcases);
      const io::Json origin = {{"command", "regress"}, {"suite", "regress-mismatches"}, {"seed", seed}, {"size", nullptr}};
      vectors::write_cases(stage.path() / "mismatches", origin, vcases, canonical, false);
    }
    stage.commit(force);
    scaleout::finish_job(spec);
    std::cout << sum.str();
    std::cout.flush();
    return bad == 0 ? std::string()
                    : "regress: " + std::to_string(bad) + " of " + std::to_string(total) +
                          " outputs differ from golden (cases in " + (out / "mismatches").string() + ")";
  });
  if (world.root()) {
    std::string per_rank;
    for (size_t r = 0; r < timing.rank_compute_s.size(); ++r)
      per_rank += (r ? "," : "") + fmt_num("%.3f", timing.rank_compute_s[r]) + "/" +
                  fmt_num("%.3f", timing.rank_compute_cpu_s[r]) + "/" + std::to_string(timing.rank_shards[r]);
    std::fprintf(stderr,
                 "regress: timing ranks=%d threads=%u shards=%zu reused=%zu prepare_s=%.3f compute_s/cpu_s/shards=%s "
                 "wait_s=%.3f gather_bytes=%zu gather_s=%.6f merge_s=%.3f wall_s=%.3f\n",
                 world.size(), threads, job.shards, job.reused, timing.prepare_s, per_rank.c_str(), timing.wait_s,
                 timing.gathered_bytes, timing.gather_s, seconds_since(t_merge), seconds_since(t0));
  }
  if (!verdict.empty()) throw std::runtime_error(verdict);
  return kExitOk;
}

}  // namespace fp4sim::cli
