// Runs the real fp4sim binary (FP4SIM_CLI) as a user would, in a scratch directory, for the CLI
// tests: exit code, stdout and stderr of each run.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

namespace fp4sim::test {

struct Result {
  int code = -1;
  std::string out, err;
  size_t err_lines() const { return static_cast<size_t>(std::count(err.begin(), err.end(), '\n')); }
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// A scratch directory named after `tag`; run() executes `fp4sim ARGS` inside it (ARGS pasted into
// a shell line).
class Dir {
 public:
  explicit Dir(const std::string& tag = "cli") {
    static std::atomic<int> n{0};
    root_ = std::filesystem::temp_directory_path() /
            ("fp4sim_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "w");
  }
  ~Dir() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  Dir(const Dir&) = delete;
  Dir& operator=(const Dir&) = delete;
  std::filesystem::path operator/(const std::string& name) const { return root_ / "w" / name; }
  // The directory the binary runs in (captured stdout / stderr live beside it, never inside).
  std::filesystem::path work() const { return root_ / "w"; }
  std::set<std::string> entries(const std::filesystem::path& dir) const {
    std::set<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir)) names.insert(e.path().filename().string());
    return names;
  }
  std::set<std::string> entries() const { return entries(work()); }
  // Starts `fp4sim ARGS...` in the work directory (no shell; stdout and stderr to files beside it)
  // and returns its pid, for tests that signal a running command.
  pid_t spawn(const std::vector<std::string>& args) const {
    const std::string o = (root_ / "stdout").string(), e = (root_ / "stderr").string(), w = (root_ / "w").string();
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (::chdir(w.c_str()) != 0) ::_exit(127);
      std::FILE* fo = std::freopen(o.c_str(), "w", stdout);
      std::FILE* fe = std::freopen(e.c_str(), "w", stderr);
      if (!fo || !fe) ::_exit(127);
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(FP4SIM_CLI));
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(FP4SIM_CLI, argv.data());
      ::_exit(127);
    }
    return pid;
  }
  std::string stderr_text() const { return slurp(root_ / "stderr"); }
  // `[env ENV] fp4sim ARGS` through the shell: a process killed by a signal reports 128 + the
  // signal, as a shell does.
  Result run(const std::string& args, const std::string& env = "") const {
    const std::filesystem::path o = root_ / "stdout", e = root_ / "stderr";
    const std::string cmd = "cd '" + (root_ / "w").string() + "' && " + (env.empty() ? "" : "env " + env + " ") +
                            "'" FP4SIM_CLI "' " + args + " >'" + o.string() + "' 2>'" + e.string() + "'";
    const int st = std::system(cmd.c_str());
    Result r;
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = slurp(o);
    r.err = slurp(e);
    return r;
  }

 private:
  std::filesystem::path root_;
};

// The contract for every failure: the exit code, one line on stderr with the prefix, no stdout.
inline void expect_failure(const Result& r, int code, const std::string& needle) {
  EXPECT_EQ(r.code, code) << r.err;
  EXPECT_EQ(r.err_lines(), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("fp4sim: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "missing '" << needle << "' in: " << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

// Whether this fp4sim was built with the SystemC models (FP4SIM_SYSTEMC): `run --help` then lists
// the model parameters. Tests of run / whatif skip without them (GTEST_SKIP with the reason).
inline bool models_built() {
  static const bool built = [] {
    Dir d("probe");
    return d.run("run --help").out.find("Model parameters") != std::string::npos;
  }();
  return built;
}

}  // namespace fp4sim::test

// At the top of a test that runs `fp4sim run` or `fp4sim whatif` on the models.
#define FP4SIM_REQUIRE_MODELS()                                                                  \
  do {                                                                                           \
    if (!::fp4sim::test::models_built())                                                         \
      GTEST_SKIP() << "fp4sim was built without the SystemC models (FP4SIM_SYSTEMC=OFF)";        \
  } while (0)
