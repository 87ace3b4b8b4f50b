// fp4sim replay: re-check a vector suite bit for bit on a target, case by case.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "cli/cli.hpp"
#include "fp4sim/io/replay_external.hpp"
#include "fp4sim/io/vectors.hpp"
#include "fp4sim/mma.hpp"
#if FP4SIM_HAVE_RTL
#include "rtl_driver.hpp"
#endif
#if FP4SIM_HAVE_GPU
#include "fp4sim/gpu/gpu.hpp"
#endif

namespace fp4sim::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr const char* kUsage =
    "replay DIR --target NAME|exec:CMD|plugin:PATH.so [--quiet] [--threads T] [--timeout S]   (or --dir DIR)";

// The replay targets. A new device plugs in as one row: a ReplayTarget (vectors.hpp), or a
// single-instruction dot product wrapped by vectors::make_dot_target.
struct TargetEntry {
  std::string_view name;
  std::string_view help;
  std::unique_ptr<vectors::ReplayTarget> (*make)(unsigned threads);
};

#if FP4SIM_HAVE_RTL
// The Verilated datapaths: one Driver per unit, chosen by the case's configuration; instructions
// are chained along K by the single-instruction adapter, as the hardware chains them.
std::unique_ptr<vectors::ReplayTarget> make_rtl_target() {
  auto drivers = std::make_shared<std::map<rtl::Unit, std::unique_ptr<rtl::Driver>>>();
  return vectors::make_dot_target(
      "rtl", {Model::Blackwell, Model::AscendHif4},
      [drivers](const MmaConfig& cfg, const uint8_t* a, const uint8_t* b, const uint32_t* sa, const uint32_t* sb,
                uint32_t c) {
        const rtl::Unit u = *rtl::unit_for(cfg);
        auto& d = (*drivers)[u];
        if (!d) d = std::make_unique<rtl::Driver>(u);
        d->set_formats(*cfg.elem_a, *cfg.elem_b);
        return d->dot(a, b, sa, sb, c);
      },
      [](const MmaConfig& cfg) {
        return rtl::unit_for(cfg) ? std::string() : std::string("no RTL unit computes ") + std::string(cfg.kind->name) +
                                                        " under model " + std::string(model_name(cfg.model));
      });
}
#endif

#if FP4SIM_HAVE_GPU
// The GPU kernels (Device) or the same __host__ __device__ arithmetic run on the CPU (Host).
class GpuTarget : public vectors::ReplayTarget {
 public:
  explicit GpuTarget(gpu::Backend be) : be_(be) {}
  std::string name() const override { return be_ == gpu::Backend::Device ? "gpu" : "gpu-host"; }
  std::string cannot_run(const vectors::VectorCase& c, Model m) const override {
    std::string why;
    if (be_ == gpu::Backend::Device && !gpu::gpu_available(why)) return "no GPU: " + why;
    return gpu::cannot_run(c.cfg, m);
  }
  std::vector<uint32_t> run(const vectors::VectorCase& c, Model m) override {
    return gpu::gemm(be_, c.cfg, m, c.M, c.N, c.K, c.a.codes, c.a.scales, c.b.codes, c.b.scales, c.c, c.alpha);
  }

 private:
  gpu::Backend be_;
};
#endif

const TargetEntry kTargets[] = {
    {"golden", "fp4sim's golden models (fp4sim::gemm), every model",
     [](unsigned threads) { return vectors::make_golden_target(threads); }},
    {"golden-dot", "fp4sim::mma_dot one instruction at a time through the single-instruction adapter",
     [](unsigned) {
       return vectors::make_dot_target("golden-dot", {Model::Blackwell, Model::AscendHif4, Model::Fp32Seq, Model::Exact},
                                       [](const MmaConfig& cfg, const uint8_t* a, const uint8_t* b, const uint32_t* sa,
                                          const uint32_t* sb, uint32_t c) { return mma_dot(cfg, a, b, sa, sb, c); });
     }},
#if FP4SIM_HAVE_RTL
    {"rtl", "the Verilated RTL datapaths (bs_dot_k64, bs_dot_k32, hif4_pe), one instruction at a time",
     [](unsigned) { return make_rtl_target(); }},
#endif
#if FP4SIM_HAVE_GPU
    {"gpu", "the CUDA kernels on the GPU (skipped with a reason when there is none)",
     [](unsigned) -> std::unique_ptr<vectors::ReplayTarget> { return std::make_unique<GpuTarget>(gpu::Backend::Device); }},
    {"gpu-host", "the CUDA kernels' __host__ __device__ arithmetic run on the CPU",
     [](unsigned) -> std::unique_ptr<vectors::ReplayTarget> { return std::make_unique<GpuTarget>(gpu::Backend::Host); }},
#endif
};

std::string target_list() {
  std::string s;
  for (const TargetEntry& t : kTargets) s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s + ", exec:CMD, plugin:PATH.so";
}

// exec:CMD / plugin:PATH (docs/replay-targets.md): an outside single-instruction model; nullptr for
// other names.
std::unique_ptr<dut::ExternalTarget> make_external_target(const std::string& tname, double timeout_s) {
  try {
    if (tname.rfind("exec:", 0) == 0) {
      auto model = dut::make_exec_model(tname.substr(5), timeout_s);
      std::string name = model->name();
      return std::make_unique<dut::ExternalTarget>(std::move(name), std::move(model));
    }
    if (tname.rfind("plugin:", 0) == 0) {
      auto model = dut::make_plugin_model(tname.substr(7));
      std::string name = model->name();
      return std::make_unique<dut::ExternalTarget>(std::move(name), std::move(model));
    }
  } catch (const dut::ExternalError& e) {
    throw std::runtime_error(std::string("replay: ") + e.what());
  }
  return nullptr;
}

}  // namespace

int cmd_replay(const Invocation& inv) {
  // DIR may come first as a positional argument (the option parser takes no positionals).
  Invocation rest = inv;
  std::string dir_arg;
  if (!rest.args.empty() && !rest.args[0].empty() && rest.args[0][0] != '-') {
    dir_arg = rest.args[0];
    rest.args.erase(rest.args.begin());
  }
  std::string target_help = "replay target: ";
  for (const TargetEntry& t : kTargets) target_help += std::string(t.name) + " (" + std::string(t.help) + "); ";
  po::options_description od("Options");
  od.add_options()
      ("dir", po::value<std::string>()->value_name("DIR"), "suite directory (instead of the leading DIR)")
      ("target", po::value<std::string>()->required()->value_name("NAME"), target_help.c_str())
      ("quiet", po::bool_switch(), "print only cases that did not pass, and the summary")
      ("threads", po::value<std::string>()->value_name("T"), "worker threads (default 0 = all cores)")
      ("timeout", po::value<std::string>()->value_name("S"),
       "exec: targets: the longest wait in seconds for the model's next answer line (default 60)");
  po::variables_map vm;
  if (!parse_options(rest, kUsage, od, vm)) return kExitOk;
  if (!dir_arg.empty() && vm.count("dir")) throw UsageError("give the suite directory once (DIR or --dir)");
  if (dir_arg.empty() && !vm.count("dir")) throw UsageError("no suite directory given (replay DIR --target NAME)");
  const fs::path dir = dir_arg.empty() ? fs::path(vm["dir"].as<std::string>()) : fs::path(dir_arg);
  const std::string tname = vm["target"].as<std::string>();
  const TargetEntry* entry = nullptr;
  for (const TargetEntry& t : kTargets)
    if (t.name == tname) entry = &t;
  const bool external = tname.rfind("exec:", 0) == 0 || tname.rfind("plugin:", 0) == 0;
  if (!entry && !external)
    throw UsageError("--target: unknown target '" + tname + "' (expected one of: " + target_list() + ")");
  const unsigned threads =
      vm.count("threads") ? static_cast<unsigned>(parse_uint("threads", vm["threads"].as<std::string>(), 0, 1024)) : 0;
  const double timeout_s =
      vm.count("timeout") ? static_cast<double>(parse_uint("timeout", vm["timeout"].as<std::string>(), 1, 86400)) : 60.0;
  if (vm.count("timeout") && tname.rfind("exec:", 0) != 0) throw UsageError("--timeout applies to exec: targets only");
  const bool quiet = vm["quiet"].as<bool>();

  const vectors::SuiteReader reader(dir);  // throws IoError naming manifest.json
  std::unique_ptr<dut::ExternalTarget> ext = external ? make_external_target(tname, timeout_s) : nullptr;
  std::unique_ptr<vectors::ReplayTarget> target = ext ? std::move(ext) : entry->make(threads);
  auto* outside = dynamic_cast<dut::ExternalTarget*>(target.get());
  // Skipped cases are summed up by reason at the end: a target that cannot run (no GPU) has one reason
  // for every case, printed once.
  std::vector<std::pair<std::string, size_t>> skip_reasons;
  auto on_case = [&](const vectors::CaseReport& r) {
    // An outside model that died or spoke out of turn cannot be asked the next case: stop here.
    if (outside && !outside->fatal().empty()) throw std::runtime_error("replay: " + outside->fatal());
    if (r.status == vectors::CaseReport::Skipped) {
      std::vector<std::string> seen;
      for (const vectors::ModelCheck& c : r.checks) {
        if (c.skipped.empty() || std::find(seen.begin(), seen.end(), c.skipped) != seen.end()) continue;
        seen.push_back(c.skipped);
        auto it = std::find_if(skip_reasons.begin(), skip_reasons.end(), [&](const auto& p) { return p.first == c.skipped; });
        if (it == skip_reasons.end()) skip_reasons.emplace_back(c.skipped, 1);
        else ++it->second;
      }
      return;
    }
    if (quiet && r.status == vectors::CaseReport::Pass) return;
    for (const std::string& l : vectors::format_case_report(r)) std::cout << l << "\n";
    if (outside)
      for (const vectors::ModelCheck& c : r.checks)
        if (c.mismatches)
          for (const std::string& l : outside->explain(r.id, c.model))
            std::cout << "      " << model_name(c.model) << ": " << l << "\n";
    std::cout.flush();
  };
  vectors::ReplayReport rep;
  try {
    rep = vectors::replay_suite(reader, *target, on_case);
  } catch (const dut::ExternalError& e) {  // from cannot_run's first question of a configuration
    throw std::runtime_error(std::string("replay: ") + e.what());
  }
  for (const auto& [why, n] : skip_reasons)
    std::cout << "SKIP  " << n << (n == 1 ? " case: " : " cases: ") << why << "\n";
  std::cout << "replay " << dir.string() << " on " << target->name() << ": " << rep.cases.size() << " cases, "
            << rep.pass << " pass, " << rep.fail << " fail, " << rep.error << " error, " << rep.skipped
            << " skipped; " << rep.comparisons << " D arrays compared bit for bit\n";
  std::cout.flush();
  if (!rep.ok()) {
    if (rep.fail || rep.error)
      throw std::runtime_error("replay: " + std::to_string(rep.fail) + " case(s) failed, " + std::to_string(rep.error) +
                               " case(s) could not be checked");
    throw std::runtime_error("replay: target " + target->name() + " compared nothing (every case skipped)");
  }
  return kExitOk;
}

}  // namespace fp4sim::cli
