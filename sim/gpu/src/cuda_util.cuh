// Helpers shared by the CUDA sources of sim/gpu (device.cu, bench_cublas.cu): error checks that
// throw, an RAII device buffer and the event timer of the benchmarks. Internal; CUDA only.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "fp4sim/gpu/gpu.hpp"

namespace fp4sim::gpu::detail {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
}

// RAII device buffer.
template <class T>
struct Buf {
  T* p = nullptr;
  size_t n = 0;
  explicit Buf(size_t count) : n(count) {
    if (n) check(cudaMalloc(&p, n * sizeof(T)), "cudaMalloc");
  }
  Buf(const T* host, size_t count) : Buf(count) {
    if (n) check(cudaMemcpy(p, host, n * sizeof(T), cudaMemcpyHostToDevice), "copy to device");
  }
  ~Buf() {
    if (p) cudaFree(p);
  }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  void to_host(T* host) const {
    if (n) check(cudaMemcpy(host, p, n * sizeof(T), cudaMemcpyDeviceToHost), "copy to host");
  }
};

struct Event {
  cudaEvent_t e = nullptr;
  Event() { check(cudaEventCreate(&e), "cudaEventCreate"); }
  ~Event() {
    if (e) cudaEventDestroy(e);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

// One warm-up call, then `iters` timed calls of f (each between two events on the default stream);
// the median time. `bytes` is what one call moves (0 for compute benchmarks).
template <class F>
BenchResult time_it(F&& f, int iters, double bytes) {
  Event e0, e1;
  f();  // warm-up
  check(cudaGetLastError(), "warm-up launch");
  check(cudaDeviceSynchronize(), "warm-up");
  std::vector<float> ms;
  for (int i = 0; i < std::max(iters, 1); ++i) {
    check(cudaEventRecord(e0.e), "record");
    f();
    check(cudaEventRecord(e1.e), "record");
    check(cudaEventSynchronize(e1.e), "sync");
    float t = 0;
    check(cudaEventElapsedTime(&t, e0.e, e1.e), "elapsed");
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  BenchResult r;
  r.seconds = ms[ms.size() / 2] * 1e-3;
  r.bytes = bytes;
  return r;
}

}  // namespace fp4sim::gpu::detail
