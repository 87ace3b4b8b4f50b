/* A C model of the outside unit examples/sv_dpi/dot32_e2m1.sv: an MXF8F6F4-style dot unit for
 * E2M1 elements, K = 32, one UE8M0 scale per operand (block 32), FP32 C in and D out, Blackwell
 * numerics (SPEC section 4). plant_bug != 0 is the unit's planted bug: C aligned with one
 * fractional bit less. Plain C99. */
#ifndef DOT32_E2M1_MODEL_H
#define DOT32_E2M1_MODEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* a[k], b[k]: E2M1 codes (4 bits, sign in bit 3); sa, sb: UE8M0 codes (0xFF = NaN); c: FP32 bits.
 * Returns D's FP32 bits. */
uint32_t dot32_e2m1(const uint8_t a[32], const uint8_t b[32], uint8_t sa, uint8_t sb, uint32_t c, int plant_bug);

/* The one configuration word (docs/line-vectors.md) the unit computes: mxf8f6f4, blackwell,
 * E2M1 x E2M1, UE8M0, block 32. */
#define DOT32_E2M1_CONFIG 0x22000020u

#ifdef __cplusplus
}
#endif

#endif
