// fp4sim vectors: write a golden vector suite (cases + expected outputs of every model + manifest).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include "cli.hpp"
#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/vectors.hpp"

namespace fp4sim::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr const char* kUsage =
    "vectors --suite smoke|corners|random|llm --out DIR [--seed S] [--size N] [--threads T]\n"
    "               [--progress] [--force] [--durable]";

}  // namespace

int cmd_vectors(const Invocation& inv) {
  po::options_description od("Options");
  od.add_options()
      ("suite", po::value<std::string>()->required()->value_name("NAME"),
       "smoke (seconds), corners (every corner class per kind), random (seeded codes), llm (LLM-like GEMMs)")
      ("out", po::value<std::string>()->required()->value_name("DIR"),
       "suite directory (created atomically; its parent must exist)")
      ("seed", po::value<std::string>()->value_name("S"), "64-bit seed (random, llm, smoke; default 0)")
      ("size", po::value<std::string>()->value_name("N"),
       "random: M = N (default 16, at most 1024); llm: tokens, a multiple of 64 (default 128)")
      ("force", po::bool_switch(), "replace DIR if it already exists")
      ("threads", po::value<std::string>()->value_name("T"), "worker threads (default 0 = all cores)")
      ("progress", po::bool_switch(), "progress on stderr (default: only when stderr is a terminal)");
  po::variables_map vm;
  if (!parse_options(inv, kUsage, od, vm)) return kExitOk;

  vectors::Suite suite{};
  const std::string name = vm["suite"].as<std::string>();
  if (!vectors::parse_suite(name, suite))
    throw UsageError("--suite: unknown suite '" + name + "' (expected smoke, corners, random or llm)");
  vectors::SuiteOptions o;
  if (vm.count("seed")) {
    if (suite == vectors::Suite::Corners) throw UsageError("--seed: the corners suite is not random");
    o.seed = parse_uint("seed", vm["seed"].as<std::string>(), 0, UINT64_MAX);
  }
  if (vm.count("size")) o.size = parse_uint("size", vm["size"].as<std::string>(), 1, 1u << 20);
  if (vm.count("threads")) o.threads = static_cast<unsigned>(parse_uint("threads", vm["threads"].as<std::string>(), 0, 1024));
  try {
    vectors::validate_suite_options(suite, o);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--size: ") + e.what());
  }
  const fs::path out = vm["out"].as<std::string>();
  const bool force = vm["force"].as<bool>();
  Outputs outs(force);
  const size_t out_h = outs.dir("out", out);
  const fs::path stage = outs.set().dir_stage(out_h);  // staged from the start: a signal removes it

  // Progress: a rewritten line on a terminal, one line per 10 % with --progress into a file.
  const bool tty = isatty(STDERR_FILENO) != 0;
  if (tty || vm["progress"].as<bool>()) {
    const auto t0 = std::chrono::steady_clock::now();
    o.progress = [tty, t0, last = -1](size_t done, size_t total) mutable {
      const int pct = static_cast<int>(100 * done / total);
      if (!tty && pct / 10 == last / 10 && done != total) return;
      if (pct == last) return;
      last = pct;
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "%svectors: %zu of %zu cases (%d%%), %.0f s%s", tty ? "\r" : "", done, total, pct, s,
                   tty && done != total ? "" : "\n");
    };
  }
  const std::vector<vectors::VectorCase> cases = vectors::build_suite(suite, o);
  vectors::write_suite_into(stage, suite, o, cases, inv.argv);
  outs.commit();

  std::map<std::string, size_t> per_class;
  size_t arrays = 0, values = 0;
  for (const auto& c : cases) {
    ++per_class[c.cls];
    arrays += c.models.size();
    values += c.M * c.N * c.models.size();
  }
  // Counted as replay and check count them: D arrays (one per case and model), then their values.
  std::cout << out.string() << ": suite " << name << ", " << cases.size() << " cases, " << arrays
            << " expected D arrays (" << values << " values); classes:";
  for (const auto& [cls, n] : per_class) std::cout << " " << cls << " (" << n << ")";
  std::cout << "\n";
  return kExitOk;
}

}  // namespace fp4sim::cli
