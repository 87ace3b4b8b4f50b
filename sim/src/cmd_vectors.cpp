// fp4sim vectors: write a golden vector suite (cases + expected outputs of every model + manifest).
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
    "vectors --suite smoke|corners|random|llm --out DIR [--seed S] [--size N] [--force] [--threads T]";

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
      ("threads", po::value<std::string>()->value_name("T"), "worker threads (default 0 = all cores)");
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
  if (out.empty()) throw UsageError("--out: empty directory name");
  const bool force = vm["force"].as<bool>();
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(out, ec);
  if (fs::exists(st) && !force) throw io::IoError(out.string() + ": already exists (use --force to replace it)");
  if (fs::exists(st) && !fs::is_directory(st))
    throw io::IoError(out.string() + ": exists and is not a directory; not replacing it");

  const std::vector<vectors::VectorCase> cases = vectors::build_suite(suite, o);
  vectors::write_suite(out, suite, o, cases, inv.argv, force);

  std::map<std::string, size_t> per_class;
  size_t outputs = 0;
  for (const auto& c : cases) {
    ++per_class[c.cls];
    outputs += c.M * c.N * c.models.size();
  }
  std::cout << out.string() << ": suite " << name << ", " << cases.size() << " cases, " << outputs
            << " expected outputs; classes:";
  for (const auto& [cls, n] : per_class) std::cout << " " << cls << " (" << n << ")";
  std::cout << "\n";
  return kExitOk;
}

}  // namespace fp4sim::cli
