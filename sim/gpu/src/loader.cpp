// Device backend of fp4sim_gpu in a CUDA build: loads the CUDA module (libfp4sim_gpu_cuda.so,
// module.hpp) with dlopen on first use and forwards to it. Programs link this, not the CUDA
// runtime: `fp4sim --version` or a CPU-only command never maps libcudart (issue 13).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

#include "module.hpp"

namespace fp4sim::gpu {

bool built_with_cuda() { return true; }

namespace detail {
namespace {

struct Loaded {
  const ModuleApi* api = nullptr;
  std::string module_error;  // why the module is not there (empty when loaded)
  bool device = false;       // a device answered
  std::string why;           // device name, or the one reason the Device backend cannot run
};

std::string exe_dir() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  std::string p(buf, static_cast<size_t>(n));
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? std::string() : p.substr(0, slash);
}

// Tries one path; on failure appends "path: dlerror" to `tried`.
const ModuleApi* try_open(const std::string& path, std::string& tried) {
  // RTLD_LOCAL: the module's symbols (and CUDA's) stay out of the program's namespace.
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    tried += (tried.empty() ? "" : "; ") + std::string(e ? e : path + ": dlopen failed");
    return nullptr;
  }
  using Entry = const ModuleApi* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(h, kModuleEntry));
  const ModuleApi* api = entry ? entry() : nullptr;
  if (!api || api->abi != kModuleAbi || api->sizeof_gemm_params != sizeof(hd::GemmParams) ||
      api->sizeof_quant_job != sizeof(QuantJob)) {
    tried += (tried.empty() ? "" : "; ") + path + ": not a module of this build (stale? rebuild it)";
    dlclose(h);
    return nullptr;
  }
  return api;  // never dlclose'd: CUDA state lives in it until exit
}

const Loaded& loaded() {
  static Loaded l;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string tried;
    if (const char* env = std::getenv("FP4SIM_GPU_MODULE"); env && *env) {
      l.api = try_open(env, tried);  // an explicit choice: no fallback behind it
    } else {
      const std::string dir = exe_dir();
      if (!dir.empty()) l.api = try_open(dir + "/" + kModuleFile, tried);
#ifdef FP4SIM_GPU_MODULE_BUILD_DIR
      if (!l.api && dir != FP4SIM_GPU_MODULE_BUILD_DIR)
        l.api = try_open(std::string(FP4SIM_GPU_MODULE_BUILD_DIR) + "/" + kModuleFile, tried);
#endif
    }
    if (!l.api) {
      l.module_error = "the CUDA module " + std::string(kModuleFile) + " could not be loaded (" + tried +
                       "; set FP4SIM_GPU_MODULE to its path)";
      l.why = l.module_error;
      return;
    }
    try {
      l.device = l.api->query(l.why);
    } catch (const std::exception& e) {
      l.device = false;
      l.why = std::string("no usable CUDA device: ") + e.what();
    }
  });
  return l;
}

const ModuleApi& api() {
  const Loaded& l = loaded();
  if (!l.api) throw std::runtime_error(l.module_error);
  if (!l.device) throw std::runtime_error(l.why);
  return *l.api;
}

}  // namespace

bool device_query(std::string& why) {
  const Loaded& l = loaded();
  why = l.why;
  return l.device;
}
void device_gemm(const hd::GemmParams& p, GemmKernel kernel, uint32_t* out) { api().gemm(p, kernel, out); }
void device_quantize(const QuantJob& job, const float* x, Quantized& q) { api().quantize(job, x, q); }
BenchResult bench_quantize(const QuantJob& job, int iters) { return api().bench_quantize(job, iters); }
BenchResult bench_copy(size_t n_bytes, int iters) { return api().bench_copy(n_bytes, iters); }
BenchResult bench_gemm(hd::GemmParams p, GemmKernel kernel, uint32_t unit_scale, int iters) {
  return api().bench_gemm(p, kernel, unit_scale, iters);
}

}  // namespace detail

bool gpu_module_ok(std::string& why) {
  const detail::Loaded& l = detail::loaded();
  why = l.module_error;
  return l.api != nullptr;
}

}  // namespace fp4sim::gpu
