// Native Blackwell block-scaled MMA instructions, for kernel teams with such GPUs.
// Compiled to SASS for sm_100a (tcgen05.mma ... block_scale) and sm_120a (mma.sync ... block_scale)
// so that ptxas checks the encodings; NOT run here (no Blackwell GPU was available, docs/gpu.md).
// Each wrapper issues one instruction; operand layouts follow the PTX ISA (fragment layouts for
// mma.sync, shared-memory matrix descriptors and tensor-memory addresses for tcgen05).
#include <cstdint>

namespace fp4sim::gpu::native {

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 1200) && defined(__CUDA_ARCH_FEAT_SM120_ALL)
// sm_120a: one warp, m16n8k64, E2M1 x E2M1, UE4M3 scale per 16 (NVFP4) — kind::mxf4nvf4, scale_vec::4X.
__device__ __forceinline__ void mma_nvf4_m16n8k64(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                                                  const float (&c)[4], uint32_t sfa, uint32_t sfb) {
  asm volatile(
      "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13}, %14, {0, 0}, %15, {0, 0};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
        "f"(c[3]), "r"(sfa), "r"(sfb));
}
// sm_120a: kind::mxf4 (UE8M0 scale per 32, scale_vec::2X).
__device__ __forceinline__ void mma_mxf4_m16n8k64(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                                                  const float (&c)[4], uint32_t sfa, uint32_t sfb) {
  asm volatile(
      "mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13}, %14, {0, 0}, %15, {0, 0};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
        "f"(c[3]), "r"(sfa), "r"(sfb));
}
#endif

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 1000) && (__CUDA_ARCH__ < 1200) && defined(__CUDA_ARCH_FEAT_SM100_ALL)
// sm_100a: one tcgen05.mma of kind::mxf4nvf4 with block scales held in tensor memory.
__device__ __forceinline__ void tcgen05_mma_nvf4(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                                                 uint32_t sfa_tmem, uint32_t sfb_tmem, bool accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
      "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X [%0], %1, %2, %3, [%4], [%5], p;\n}\n"
      :
      : "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(sfa_tmem), "r"(sfb_tmem), "r"(accumulate ? 1 : 0));
}
#endif

// Probe kernels: one instruction each, so that the instruction reaches ptxas.
__global__ void probe_mma_sync_block_scale(const uint32_t* in, float* out) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 1200) && defined(__CUDA_ARCH_FEAT_SM120_ALL)
  const uint32_t a[4] = {in[0], in[1], in[2], in[3]};
  const uint32_t b[2] = {in[4], in[5]};
  const float c[4] = {0.f, 0.f, 0.f, 0.f};
  float d[4], e[4];
  mma_nvf4_m16n8k64(d, a, b, c, in[6], in[7]);
  mma_mxf4_m16n8k64(e, a, b, d, in[8], in[9]);
  for (int i = 0; i < 4; ++i) out[threadIdx.x * 4 + i] = e[i];
#else
  (void)in;
  (void)out;
#endif
}

__global__ void probe_tcgen05_block_scale(const uint64_t* desc, const uint32_t* tmem) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 1000) && (__CUDA_ARCH__ < 1200) && defined(__CUDA_ARCH_FEAT_SM100_ALL)
  if (threadIdx.x == 0) tcgen05_mma_nvf4(tmem[0], desc[0], desc[1], tmem[1], tmem[2], tmem[3], tmem[4] != 0);
#else
  (void)desc;
  (void)tmem;
#endif
}

}  // namespace fp4sim::gpu::native
