// fp4sim_gpu without CUDA: the Host backend works, the Device backend reports why it cannot.
#include <stdexcept>

#include "detail.hpp"

namespace fp4sim::gpu {

bool built_with_cuda() { return false; }
bool gpu_module_ok(std::string& why) {
  why.clear();
  return true;  // no module expected
}

namespace detail {
namespace {
[[noreturn]] void no_cuda() {
  throw std::runtime_error("fp4sim was built without CUDA (FP4SIM_CUDA off or nvcc not found)");
}
}  // namespace

bool device_query(std::string& why) {
  why = "fp4sim was built without CUDA (FP4SIM_CUDA off or nvcc not found)";
  return false;
}
void device_gemm(const hd::GemmParams&, GemmKernel, uint32_t*) { no_cuda(); }
void device_quantize(const QuantJob&, const float*, Quantized&) { no_cuda(); }
BenchResult bench_quantize(const QuantJob&, int) { no_cuda(); }
BenchResult bench_copy(size_t, int) { no_cuda(); }
BenchResult bench_gemm(hd::GemmParams, GemmKernel, uint32_t, int) { no_cuda(); }

}  // namespace detail
}  // namespace fp4sim::gpu
