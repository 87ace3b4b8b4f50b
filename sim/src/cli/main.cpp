// fp4sim: command-line front end. Subcommands are rows of kCommands; adding one = a cmd_*.cpp
// file, a declaration in cli.hpp and a row here.
#include <malloc.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli.hpp"
#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/manifest.hpp"
#include "scaleout/scaleout.hpp"

namespace {

using fp4sim::cli::Invocation;

struct Command {
  std::string_view name;
  std::string_view help;  // one line, shown by `fp4sim --help`
  fp4sim::cli::CommandFn fn;
};

constexpr Command kCommands[] = {
    {"quantize", "quantize a .npy tensor into a block format; write codes, scales, dequant + manifest",
     fp4sim::cli::cmd_quantize},
    {"quality", "quantize an LLM-like tensor in every format and print a quality table",
     fp4sim::cli::cmd_quality},
    {"mma", "run an MMA numerics model on element and scale codes (SPEC 5); write D.npy", fp4sim::cli::cmd_mma},
    {"gemm", "quantize float operands, run a numerics model, report error vs FP64", fp4sim::cli::cmd_gemm},
    {"linear", "one linear layer's Fprop/Dgrad/Wgrad under a training recipe; --ablation table",
     fp4sim::cli::cmd_linear},
    {"vectors", "write a golden vector suite (smoke, corners, random, llm)", fp4sim::cli::cmd_vectors},
    {"replay", "re-check a vector suite bit for bit on a target (golden, ...)", fp4sim::cli::cmd_replay},
    {"check", "compare your kernel's outputs (D, quantized codes/scales) with a vector suite's, bit for bit", fp4sim::cli::cmd_check},
    {"run", "LLM-like linear layer on the SystemC tensor-core and cube models, checked vs golden", fp4sim::cli::cmd_run},
    {"whatif", "sweep model parameters (timing only); write one CSV row per configuration", fp4sim::cli::cmd_whatif},
    {"calibrate", "run public measured GEMM kernel results through the models; model vs measured per point",
     fp4sim::cli::cmd_calibrate},
    {"regress", "seeded random checks of RTL, SystemC models and GPU-host arithmetic vs golden (MPI-sharded)",
     fp4sim::cli::cmd_regress},
    {"study", "every linear layer of a transformer shape on both engines and every format (MPI-sharded)",
     fp4sim::cli::cmd_study},
    {"train", "FP4 training emulation of a small language model under a recipe; --study grids (Python, torch)",
     fp4sim::cli::cmd_train},
};

const Command* find_command(std::string_view name) {
  for (const Command& c : kCommands)
    if (c.name == name) return &c;
  return nullptr;
}

void print_overview(std::ostream& os) {
  os << "fp4sim " << fp4sim::io::tool_version()
     << " - bit-exact simulator for 4-bit block-scaled formats (NVFP4, MXFP4/6/8, HiF4)\n\n"
        "Usage: fp4sim COMMAND [OPTIONS]\n"
        "       fp4sim help COMMAND | fp4sim COMMAND --help\n"
        "       fp4sim --version\n\nCommands:\n";
  size_t width = 0;
  for (const Command& c : kCommands) width = std::max(width, c.name.size());
  for (const Command& c : kCommands)
    os << "  " << c.name << std::string(width - c.name.size() + 2, ' ') << c.help << "\n";
  os << "\nExit status: 0 success, 1 runtime error, 2 usage error. Errors are one line on stderr.\n";
}

// Errors must stay one line (callers grep stderr): fold any line breaks from nested messages.
std::string one_line(std::string_view msg) {
  std::string out;
  for (char c : msg) out += (c == '\n' || c == '\r') ? ' ' : c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// std::filesystem's own text ("filesystem error: cannot create directories: Permission denied
// [a/b]") in the one style "PATH: what: reason".
std::string fs_message(const std::filesystem::filesystem_error& e) {
  std::string what = e.what();
  const std::string prefix = "filesystem error: ";
  if (what.rfind(prefix, 0) == 0) what.erase(0, prefix.size());
  const size_t colon = what.find(": ");
  std::string op = colon == std::string::npos ? what : what.substr(0, colon);
  const std::string path = e.path1().empty() ? std::string("file system") : e.path1().string();
  return path + ": " + op + ": " + e.code().message();
}

int report(std::string_view msg, int code) {
  // Under mpirun / srun every rank fails the same way (scale-out commands hand rank-local errors to
  // rank 0): one line from rank 0, not one per rank.
  if (fp4sim::scaleout::launcher_rank() == 0) std::cerr << "fp4sim: error: " << one_line(msg) << "\n";
  return code;
}

}  // namespace

// Page faults dominate a large command's system time (in a VM about 3 us each: 11,000 for a 16 MB
// quantize, more than the quantizing). Grow the heap once by 256 MiB of address space — reserved,
// not resident — and advise it onto transparent huge pages, so that the command's buffers fault in
// 2 MiB at a time. Advice only: without THP nothing changes but speed.
void reserve_huge_page_heap() {
#if defined(__linux__)
  constexpr size_t kHuge = size_t{2} << 20, kReserve = size_t{256} << 20;
  const auto brk0 = reinterpret_cast<uintptr_t>(sbrk(0));
  mallopt(M_TOP_PAD, static_cast<int>(kReserve));
  void* volatile p = malloc(kHuge);  // below the mmap threshold: the heap grows by it plus the pad
  free(p);                           // (volatile: the compiler may not drop the pair)
  mallopt(M_TOP_PAD, 128 << 10);  // glibc's default again for any later growth
  const auto brk1 = reinterpret_cast<uintptr_t>(sbrk(0));
  const uintptr_t lo = (brk0 + kHuge - 1) / kHuge * kHuge, hi = brk1 / kHuge * kHuge;
  if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
#endif
}

int main(int argc, char** argv) {
  using namespace fp4sim::cli;
  // Blocks up to 32 MB come from the heap and stay there when freed, so that a command's later
  // buffers reuse pages already faulted in (glibc would map and unmap each one: a 16 MB tensor
  // costs 4,096 page faults every time).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  reserve_huge_page_heap();
  std::vector<std::string> args(argv, argv + argc);
  try {
    if (argc < 2) throw UsageError("no command given (see fp4sim --help)");
    std::string_view first = args[1];
    if (first == "--help" || first == "-h" || (first == "help" && argc == 2)) {
      print_overview(std::cout);
      return kExitOk;
    }
    if (first == "--version") {
      std::cout << "fp4sim " << fp4sim::io::tool_version() << "\n";
      return kExitOk;
    }
    // Outputs in progress are removed on SIGINT / SIGTERM / SIGHUP (docs/cli.md "Outputs").
    fp4sim::io::install_signal_cleanup();
    Invocation inv;
    inv.argv = args;
    if (first == "help") {
      if (argc != 3) throw UsageError("usage: fp4sim help COMMAND");
      const Command* c = find_command(args[2]);
      if (!c) throw UsageError("unknown command '" + args[2] + "' (see fp4sim --help)");
      inv.name = std::string(c->name);
      inv.summary = std::string(c->help);
      inv.args = {"--help"};
      return c->fn(inv);
    }
    const Command* c = find_command(first);
    if (!c) throw UsageError("unknown command '" + std::string(first) + "' (see fp4sim --help)");
    inv.name = std::string(c->name);
    inv.summary = std::string(c->help);
    inv.args.assign(args.begin() + 2, args.end());
    return c->fn(inv);
  } catch (const UsageError& e) {
    return report(e.what(), kExitUsage);
  } catch (const std::filesystem::filesystem_error& e) {
    return report(fs_message(e), kExitRuntime);
  } catch (const std::bad_alloc&) {
    return report("out of memory", kExitRuntime);
  } catch (const std::exception& e) {
    return report(e.what(), kExitRuntime);
  }
}
