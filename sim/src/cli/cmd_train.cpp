// fp4sim train: FP4 training emulation of a small language model (docs/training.md). The trainer is
// Python (torch autograd around golden's fake_quantize and MMA models), so this command hands its
// arguments to `python -m fp4sim.train` in place of itself: one implementation, reached from both
// the command line and Python, with the same options, help text and exit status.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "cli/cli.hpp"

namespace fp4sim::cli {
namespace {

namespace fs = std::filesystem;

// Checks that the package is importable before running it: a missing package is one line and exit
// 2, not a traceback. argv[0] becomes "fp4sim train" so that argparse's usage names the command.
constexpr const char* kLauncher =
    "import importlib.util, runpy, sys\n"
    "if importlib.util.find_spec('fp4sim') is None:\n"
    "    print('fp4sim: error: train: the fp4sim Python package is not importable by ' + sys.executable +\n"
    "          \" (pip install '.[train]'; FP4SIM_PYTHON picks the interpreter)\", file=sys.stderr)\n"
    "    sys.exit(2)\n"
    "sys.argv[0] = 'fp4sim train'\n"
    "runpy.run_module('fp4sim.train', run_name='__main__', alter_sys=True)\n";

// The interpreter: $FP4SIM_PYTHON, else the python3 beside this executable (a venv or wheel install
// puts both in one bin/), else python3 on PATH.
std::string python_interpreter() {
  if (const char* p = std::getenv("FP4SIM_PYTHON"); p && *p) return p;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path beside = self.parent_path() / "python3";
    if (fs::exists(beside, ec) && access(beside.c_str(), X_OK) == 0) return beside.string();
  }
  return "python3";
}

}  // namespace

int cmd_train(const Invocation& inv) {
  const std::string py = python_interpreter();
  std::vector<std::string> words = {py, "-c", kLauncher};
  words.insert(words.end(), inv.args.begin(), inv.args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  execvp(py.c_str(), argv.data());
  // Only reached when the exec failed.
  throw std::runtime_error("train: cannot run " + py + ": " + std::strerror(errno) +
                           " (set FP4SIM_PYTHON to a Python with the fp4sim package and torch)");
}

}  // namespace fp4sim::cli
