// fp4sim vectors: write a golden vector suite (cases + expected outputs of every model + manifest).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

#include "cli/cli.hpp"
#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/lines.hpp"
#include "fp4sim/io/vectors.hpp"

namespace fp4sim::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr const char* kUsage =
    "vectors --suite smoke|corners|random|llm|quant --out DIR [--seed S] [--size N] [--threads T]\n"
    "               [--convention te|torchao|modelopt] [--progress] [--force] [--durable]\n"
    "       fp4sim vectors --from A.npy [--b B.npy] --format F [quantize options] --out DIR [--force]\n"
    "       fp4sim vectors (--suite NAME | --from A.npy ...) --lines hex|testfloat|jsonl [--model exact|fp32-seq]\n"
    "               [--only CONFIG] --out FILE";

// A [rows, K] float tensor from --from / --b (float32, or uint16 BF16 bits).
std::vector<float> load_operand(const std::string& opt, const fs::path& p, size_t& rows, size_t& K) {
  FloatTensor t = load_float_tensor(p);
  if (t.array.shape.size() != 2 || t.array.shape[0] == 0 || t.array.shape[1] == 0)
    throw std::runtime_error(p.string() + ": --" + opt + " needs a 2-D array [rows, K], got shape " +
                             io::shape_string(t.array.shape));
  rows = t.array.shape[0];
  K = t.array.shape[1];
  return std::move(t.values);
}

// --lines: the parsed line format, or nullopt; --model needs --lines.
std::optional<lines::LineFormat> lines_format(const po::variables_map& vm) {
  if (!vm.count("lines")) {
    for (const char* o : {"model", "only", "numerics"})
      if (vm.count(o)) throw UsageError(std::string("--") + o + ": only with --lines");
    return std::nullopt;
  }
  lines::LineFormat f{};
  const std::string s = vm["lines"].as<std::string>();
  if (!lines::parse_line_format(s, f))
    throw UsageError("--lines: unknown line format '" + s + "' (expected hex, testfloat or jsonl)");
  if (vm.count("model")) {
    const std::string m = vm["model"].as<std::string>();
    if (m != "exact" && m != "fp32-seq")
      throw UsageError("--model: '" + m + "' (expected exact or fp32-seq; default: each case's hardware model)");
  }
  return f;
}

// Writes the cases as line vectors into the file output `h` (one instruction per line) and says
// how many lines and which cases were left out.
int write_lines(Outputs& outs, size_t h, const fs::path& out, lines::LineFormat f, const po::variables_map& vm,
                const std::vector<vectors::VectorCase>& cases, const std::string& what) {
  std::optional<Model> model;
  if (vm.count("model")) {
    Model m{};
    parse_model(vm["model"].as<std::string>(), m);
    model = m;
  }
  // --numerics: each case's model (its preset) with the designer's parameters changed.
  const std::string spec = vm.count("numerics") ? vm["numerics"].as<std::string>() : std::string();
  auto numerics_of = [&](const vectors::VectorCase& v, Model m) -> std::optional<Numerics> {
    if (spec.empty()) return std::nullopt;
    MmaConfig cfg = v.cfg;
    apply_numerics(vm, cfg, m);
    return cfg.numerics;
  };
  // Streamed into the staged file (an llm suite gives millions of lines); renamed at commit.
  const fs::path stage = outs.set().file_stage(h);
  std::ofstream os(stage, std::ios::binary | std::ios::trunc);
  if (!os) throw std::runtime_error(out.string() + ": cannot write the lines file");
  const std::string head = lines::format_header(
      f, what + ", model " + (model ? std::string(model_name(*model)) : "hardware") +
             (spec.empty() ? std::string() : " with numerics " + spec));
  if (!head.empty()) os << head << "\n";
  // --only: the cases of one configuration, so that a unit of that configuration has a result for
  // every line (check --lines pairs results with lines one to one).
  const std::optional<std::string> only = vm.count("only") ? std::optional(vm["only"].as<std::string>()) : std::nullopt;
  std::vector<std::string> tags;  // the suite's configurations, for the error of an --only none has
  size_t n_lines = 0, n_cases = 0, left_out = 0, other_config = 0;
  for (const vectors::VectorCase& v : cases) {
    const std::string tag = vectors::config_tag(v.cfg);
    if (only && tag != *only) {
      if (std::find(tags.begin(), tags.end(), tag) == tags.end()) tags.push_back(tag);
      ++other_config;
      continue;
    }
    const Model m = model ? *model : v.cfg.kind->hardware_model;
    // exact rounds once over the whole K: a case of several instructions has no per-instruction chain.
    if (static_cast<size_t>(v.cfg.kind->k) < v.K && !vectors::chained_model(m)) {
      ++left_out;
      continue;
    }
    const std::optional<Numerics> n = numerics_of(v, m);
    for (const lines::Instruction& ins : lines::case_instructions(v, m, n ? &*n : nullptr)) {
      os << lines::format_line(ins, f) << "\n";
      ++n_lines;
    }
    ++n_cases;
  }
  if (only && n_cases + left_out == 0) {
    std::string list;
    for (const std::string& t : tags) list += (list.empty() ? "" : ", ") + t;
    throw std::runtime_error("vectors: --only " + *only + ": no case of " + what + " has that configuration (it has " +
                             list + ")");
  }
  if (n_lines == 0) throw std::runtime_error("vectors: no case of " + what + " is a single instruction under --model exact");
  os.close();
  if (!os) throw std::runtime_error(out.string() + ": write failed");
  outs.commit();
  std::cout << out.string() << ": " << n_lines << " " << lines::line_format_name(f) << " instruction lines from " << n_cases
            << " cases of " << what;
  if (only) std::cout << " (only " << *only << "; " << other_config << " cases of other configurations left out)";
  if (left_out) std::cout << " (" << left_out << " cases of several instructions left out: exact has no instruction chain)";
  std::cout << "\n";
  return kExitOk;
}

}  // namespace

namespace {

int vectors_from(const Invocation& inv, const po::variables_map& vm) {
  if (!vm.count("format")) throw UsageError("--from needs --format F");
  if (vm.count("size")) throw UsageError("--size: not with --from (the shapes are the tensors')");
  BlockFormat f{};
  const std::string fname = vm["format"].as<std::string>();
  if (!parse_block_format(fname, f)) throw UsageError("--format: unknown format '" + fname + "'");
  const QuantOptions o = parse_quant_options(vm, f);
  const unsigned threads =
      vm.count("threads") ? static_cast<unsigned>(parse_uint("threads", vm["threads"].as<std::string>(), 0, 1024)) : 0;
  const fs::path out = vm["out"].as<std::string>();
  const std::optional<lines::LineFormat> lf = lines_format(vm);
  Outputs outs(vm["force"].as<bool>());
  const size_t out_h = lf ? outs.file("out", out) : outs.dir("out", out);
  const std::string a_path = vm["from"].as<std::string>();
  size_t M = 0, K = 0, N = 0, Kb = 0;
  std::vector<float> a = load_operand("from", a_path, M, K), b;
  if (vm.count("b")) {
    b = load_operand("b", vm["b"].as<std::string>(), N, Kb);
    if (Kb != K)
      throw std::runtime_error(vm["b"].as<std::string>() + ": K = " + std::to_string(Kb) + ", A has K = " + std::to_string(K));
  }
  std::vector<vectors::VectorCase> cases;
  try {
    cases = vectors::build_from_tensors(f, std::move(a), M, K, std::move(b), N, o, threads);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(a_path + ": " + e.what());
  }
  if (lf) return write_lines(outs, out_h, out, *lf, vm, cases, a_path);
  const fs::path stage = outs.set().dir_stage(out_h);
  io::Json origin = {{"command", "vectors"}, {"suite", "from"}, {"seed", o.seed}, {"size", nullptr},
                     {"from", {{"a", a_path}, {"b", vm.count("b") ? io::Json(vm["b"].as<std::string>()) : io::Json(nullptr)}}}};
  vectors::write_cases_into(stage, origin, cases, inv.argv);
  outs.commit();
  const vectors::VectorCase& c = cases[0];
  std::cout << out.string() << ": 1 case from " << a_path << " (" << c.M << "x" << c.N << "x" << c.K << ", " << fname
            << "), " << c.models.size() << " expected D arrays\n";
  return kExitOk;
}

}  // namespace

int cmd_vectors(const Invocation& inv) {
  po::options_description od("Options");
  od.add_options()
      ("suite", po::value<std::string>()->value_name("NAME"),
       "smoke (seconds), corners (every corner class per kind), random (seeded codes), llm (LLM-like GEMMs), "
       "quant (quantizer ties, scale ties, specials, options)")
      ("from", po::value<std::string>()->value_name("A.npy"),
       "instead of --suite: one GEMM case from your own A [M, K] (float32 or uint16 BF16 bits)")
      ("b", po::value<std::string>()->value_name("B.npy"), "with --from: B [N, K] (default: B = A)")
      ("format", po::value<std::string>()->value_name("F"), "with --from: the block format both operands are quantized to")
      ("out", po::value<std::string>()->required()->value_name("DIR"),
       "suite directory (created atomically; its parent must exist); with --lines the lines file")
      ("lines", po::value<std::string>()->value_name("hex|testfloat|jsonl"),
       "write one MMA instruction per line into the file --out instead of a suite directory (docs/line-vectors.md)")
      ("model", po::value<std::string>()->value_name("exact|fp32-seq"),
       "with --lines: the model of the expected D (default: each case's hardware model; exact: single-instruction cases only)")
      ("only", po::value<std::string>()->value_name("CONFIG"),
       "with --lines: only the cases of one configuration, named as in case ids (mxf4, mxf4nvf4-ue4m3-b16, "
       "mxf8f6f4-e2m1, mxf8f6f4-e4m3xe5m2, hif4)")
      ("size", po::value<std::string>()->value_name("N"),
       "random: M = N (default 16, at most 1024); llm: tokens, a multiple of 64 (default 128)")
      ("force", po::bool_switch(), "replace DIR if it already exists")
      ("threads", po::value<std::string>()->value_name("T"), "worker threads (default 0 = all cores)")
      ("progress", po::bool_switch(), "progress on stderr (default: only when stderr is a terminal)");
  // --seed: the suite's seed, or with --from the SR / RHT seed of the quantize options.
  add_quant_options(od);
  add_numerics_option(od);  // with --lines
  po::variables_map vm;
  if (!parse_options(inv, kUsage, od, vm)) return kExitOk;
  if (vm.count("from") == vm.count("suite")) throw UsageError("give exactly one of --suite NAME and --from A.npy");
  if (vm.count("from")) return vectors_from(inv, vm);
  for (const char* o : {"b", "format", "rounding", "stream", "scale-rule", "pts", "rht"})
    if (vm.count(o)) throw UsageError(std::string("--") + o + ": only with --from");
  for (const char* o : {"2d", "rht-bf16"})
    if (vm[o].as<bool>()) throw UsageError(std::string("--") + o + ": only with --from");

  vectors::Suite suite{};
  const std::string name = vm["suite"].as<std::string>();
  if (!vectors::parse_suite(name, suite))
    throw UsageError("--suite: unknown suite '" + name + "' (expected smoke, corners, random, llm or quant)");
  vectors::SuiteOptions o;
  if (vm.count("convention")) {
    const std::string c = vm["convention"].as<std::string>();
    if (!parse_convention(c, o.convention))
      throw UsageError("--convention: unknown library '" + c + "' (expected te, torchao or modelopt)");
    if (o.convention != Convention::Te && suite != vectors::Suite::Quant)
      throw UsageError("--convention " + c + ": only the quant suite (and --from) take a library's quantizer; suite " +
                       name + " is made of codes");
  }
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
  const std::optional<lines::LineFormat> lf = lines_format(vm);
  Outputs outs(force);
  const size_t out_h = lf ? outs.file("out", out) : outs.dir("out", out);
  // A suite directory is staged from the start: a signal during the build removes it.
  const fs::path stage = lf ? fs::path() : outs.set().dir_stage(out_h);

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
  if (lf) return write_lines(outs, out_h, out, *lf, vm, cases, "suite " + name);
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
