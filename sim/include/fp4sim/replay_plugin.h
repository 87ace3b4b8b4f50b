/* fp4sim replay plugin ABI (docs/replay-targets.md): a shared object that `fp4sim replay SUITE
 * --target plugin:PATH.so` loads with dlopen to replay a suite's cases on an outside model of one
 * MMA instruction (a C model, a Verilated unit behind a C wrapper). Plain C (C99), no fp4sim
 * headers needed: a plugin includes this file, or just declares the three functions.
 *
 * One call computes one instruction of one output element, D = A . B + C with the block scales
 * (K = the kind's instruction K: 64 for mxf4 / mxf4nvf4 / hif4, 32 for mxf8f6f4), no alpha. fp4sim
 * chains instructions along K itself (the D of instruction s is the C of instruction s + 1) and
 * applies the epilogue RN(alpha * D) after the last one. Calls come from one thread, one at a time.
 *
 * Operands are exactly the fields of a hex line vector (docs/line-vectors.md):
 *   config  the configuration word: bits 31:28 kind (0 mxf4, 1 mxf4nvf4, 2 mxf8f6f4, 3 hif4),
 *           27:24 model (0 exact, 1 fp32-seq, 2 blackwell, 3 ascend-hif4), 23:20 element A and
 *           19:16 element B (0 e2m1, 1 e2m3, 2 e3m2, 3 e4m3, 4 e5m2, 5 s1p2), 15:12 scale
 *           (0 ue8m0, 1 ue4m3, 2 e6m2 / the HiF4 word), 11:0 block size;
 *   a, b    K element codes each, one per byte (4- and 6-bit codes zero-extended);
 *   sa, sb  K / block scales each: 8-bit codes in the low byte, HiF4 scale words whole;
 *   c       FP32 bits.
 */
#ifndef FP4SIM_REPLAY_PLUGIN_H
#define FP4SIM_REPLAY_PLUGIN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI this header describes. fp4sim refuses a plugin whose fp4sim_replay_abi_version() differs. */
#define FP4SIM_REPLAY_PLUGIN_ABI_VERSION 1u

/* Return FP4SIM_REPLAY_PLUGIN_ABI_VERSION. */
uint32_t fp4sim_replay_abi_version(void);

/* NULL (or "") when the plugin computes configuration `config`; otherwise why not, a static
 * string of one line (the cases of that configuration are reported as skipped with it). */
const char* fp4sim_replay_supports(uint32_t config);

/* Computes one instruction: *d = D's FP32 bits. Returns 0, or non-zero on a failure of the model
 * itself (fp4sim stops with one error line naming the instruction). */
int fp4sim_replay_dot(uint32_t config, const uint8_t* a, const uint8_t* b, const uint32_t* sa, const uint32_t* sb,
                      uint32_t c, uint32_t* d);

/* Optional: a short name for reports (e.g. "dot32_e2m1 C model"); the file name when absent. */
const char* fp4sim_replay_name(void);

#ifdef __cplusplus
}
#endif

#endif /* FP4SIM_REPLAY_PLUGIN_H */
