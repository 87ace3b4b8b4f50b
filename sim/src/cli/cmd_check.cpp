// fp4sim check: compare outputs that another kernel produced (D arrays, quantized codes and scales)
// with a vector suite's expected ones, bit for bit (check.hpp, docs/vectors.md).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/cli.hpp"
#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/check.hpp"
#include "fp4sim/io/lines.hpp"
#include "fp4sim/io/manifest.hpp"

namespace fp4sim::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr const char* kUsage =
    "check SUITE --results DIR [--json REPORT] [--force] [--durable] [--allow-missing] [--quiet]   (or --suite SUITE)\n"
    "       fp4sim check --lines FILE --results RESULTS_FILE";

std::string read_text(const fs::path& p, const char* what) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) throw std::runtime_error(p.string() + ": " + what + " is not a readable file");
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (!in && !in.eof()) throw std::runtime_error(p.string() + ": cannot read the " + std::string(what));
  return ss.str();
}

// check --lines: a DUT's result lines against a line-vector file (docs/line-vectors.md).
int check_lines(const po::variables_map& vm) {
  for (const char* o : {"suite", "json"})
    if (vm.count(o)) throw UsageError(std::string("--") + o + ": not with --lines");
  for (const char* o : {"force", "allow-missing", "quiet"})
    if (vm[o].as<bool>()) throw UsageError(std::string("--") + o + ": not with --lines");
  const fs::path lp = vm["lines"].as<std::string>(), rp = vm["results"].as<std::string>();
  const lines::LineFile lf = lines::parse_lines(read_text(lp, "lines file"), lp.string());
  const std::vector<lines::ResultLine> res = lines::parse_results(read_text(rp, "results file"), rp.string());
  const lines::LinesCheck c = lines::check_lines(lf, res, rp.string());
  for (const std::string& l : c.report) std::cout << l << "\n";
  std::cout << "check " << lp.string() << " against " << rp.string() << ": " << c.compared << " instructions, "
            << c.compared - c.differing << " equal, " << c.differing << " differ\n";
  std::cout.flush();
  if (c.differing)
    throw std::runtime_error("check: " + std::to_string(c.differing) + " instruction(s) differ, the first on line " +
                             std::to_string(res[*c.first].line) + " of " + rp.string());
  return kExitOk;
}

}  // namespace

int cmd_check(const Invocation& inv) {
  // SUITE may come first as a positional argument (the option parser takes no positionals).
  Invocation rest = inv;
  std::string suite_arg;
  if (!rest.args.empty() && !rest.args[0].empty() && rest.args[0][0] != '-') {
    suite_arg = rest.args[0];
    rest.args.erase(rest.args.begin());
  }
  po::options_description od("Options");
  od.add_options()
      ("suite", po::value<std::string>()->value_name("SUITE"), "suite directory (instead of the leading SUITE)")
      ("results", po::value<std::string>()->required()->value_name("DIR"),
       "your outputs, in the suite's layout: DIR/cases/<id>/d_<model>.npy, <a|b>_codes.npy, ... (docs/vectors.md); "
       "with --lines a file of result lines")
      ("lines", po::value<std::string>()->value_name("FILE"),
       "instead of a suite: a line-vector file (fp4sim vectors --lines); RESULTS holds one "
       "'<D hex> [<flags hex>]' line per instruction")
      ("json", po::value<std::string>()->value_name("REPORT"),
       "also write the report as JSON to REPORT (written whatever the outcome; its folder must exist)")
      ("force", po::bool_switch(), "replace REPORT if it already exists")
      ("allow-missing", po::bool_switch(),
       "a case with no result file does not fail the check (default: it does; at least one file must be compared)")
      ("quiet", po::bool_switch(), "print only cases that are not equal, and the summary");
  po::variables_map vm;
  if (!parse_options(rest, kUsage, od, vm)) return kExitOk;
  if (vm.count("lines")) {
    if (!suite_arg.empty()) throw UsageError("give either SUITE or --lines FILE, not both");
    return check_lines(vm);
  }
  if (!suite_arg.empty() && vm.count("suite")) throw UsageError("give the suite directory once (SUITE or --suite)");
  if (suite_arg.empty() && !vm.count("suite")) throw UsageError("no suite directory given (check SUITE --results DIR)");
  const fs::path suite = suite_arg.empty() ? fs::path(vm["suite"].as<std::string>()) : fs::path(suite_arg);
  const fs::path results = vm["results"].as<std::string>();
  if (results.empty()) throw UsageError("--results: empty directory name");
  const bool force = vm["force"].as<bool>(), allow_missing = vm["allow-missing"].as<bool>(),
             quiet = vm["quiet"].as<bool>();

  // The report is declared under the output policy before any work (an existing REPORT needs --force,
  // a missing folder is an error) and written whatever the outcome: CI wants it most on failure.
  Outputs outs(force);
  const bool want_json = vm.count("json") > 0;
  const size_t json_h = want_json ? outs.file("json", vm["json"].as<std::string>()) : 0;
  if (force && !want_json) throw UsageError("--force: only applies to --json REPORT");

  const vectors::CheckReport rep = vectors::check_suite(suite, results);
  for (const vectors::CaseCheck& c : rep.cases) {
    if (quiet && c.status == vectors::CaseCheck::Equal) continue;
    for (const std::string& l : vectors::format_case_check(c)) std::cout << l << "\n";
  }
  constexpr size_t kShowUnexpected = 10;
  for (size_t i = 0; i < rep.unexpected.size() && i < kShowUnexpected; ++i)
    std::cout << "note: " << (results / rep.unexpected[i]).string() << " is no file of the suite (ignored)\n";
  if (rep.unexpected.size() > kShowUnexpected)
    std::cout << "note: ... and " << rep.unexpected.size() - kShowUnexpected << " more files the suite does not have\n";
  std::cout << "check " << suite.string() << " against " << results.string() << ": " << rep.cases.size() << " cases, "
            << rep.equal << " equal, " << rep.differ << " differ, " << rep.missing << " missing, " << rep.error
            << " error; " << rep.files_compared << " result files compared bit for bit\n";
  std::cout.flush();

  const bool passed = allow_missing ? vectors::all_present_equal(rep) : vectors::all_equal(rep);
  if (want_json) {
    io::Json j = io::Json::parse(vectors::check_report_json(rep));
    j["command_line"] = inv.argv;
    j["allow_missing"] = allow_missing;
    j["passed"] = passed;
    outs.set().write(json_h, j.dump(2) + "\n");
    outs.commit();
  }
  if (!passed) {
    std::string why;
    auto add = [&](size_t n, const char* what) {
      if (n) why += (why.empty() ? "" : ", ") + std::to_string(n) + " case(s) " + what;
    };
    add(rep.differ, "differ");
    add(allow_missing ? 0 : rep.missing, "missing");
    add(rep.error, "could not be checked");
    if (why.empty()) why = "no result file found under " + results.string();
    throw std::runtime_error("check: " + why);
  }
  return kExitOk;
}

}  // namespace fp4sim::cli
