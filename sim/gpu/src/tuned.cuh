// The tuned kernels of the CUDA module (device_tuned.cu), called by device.cu when the caller asks
// for QuantKernel::Tuned / GemmKernel::Tuned. Internal; CUDA only.
#pragma once

#include "detail.hpp"

namespace fp4sim::gpu::detail {

// Device buffers as launch_quantize's; not for 2D (device.cu runs Direct for it).
void launch_quantize_tuned(const QuantJob& j, const float* dx, unsigned* damax, uint8_t* dcodes, uint8_t* dscales,
                           uint32_t* dwords);
// p holds device pointers, p.qa / p.qb set when hd::needs_q(p). False when no tuned kernel fits
// p (the caller runs the simple one).
bool launch_gemm_tuned(const hd::GemmParams& p, uint32_t* dd);

}  // namespace fp4sim::gpu::detail
