/* The C ABI from C: compiled as C99, so it proves fp4sim_dpi.h is a C header. Expected values are
 * derived by hand from the formats (SPEC section 1) and the blackwell rules (SPEC section 4). */
#include <stdio.h>
#include <string.h>

#include "fp4sim_dpi.h"

static int failures = 0;

#define EXPECT(cond)                                                   \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                      \
    }                                                                  \
  } while (0)

/* One mxf8f6f4 instruction with every element zero except a[i], b[i] for the given pairs. */
static int mma_k32(int model, int ta, int tb, const unsigned char* a, const unsigned char* b,
                   unsigned int sa, unsigned int sb, unsigned int c, unsigned int* d, int* flags) {
  unsigned char ea[FP4SIM_DPI_MAX_K], eb[FP4SIM_DPI_MAX_K];
  unsigned int s_a[FP4SIM_DPI_MAX_SCALES] = {0}, s_b[FP4SIM_DPI_MAX_SCALES] = {0};
  memcpy(ea, a, 32);
  memcpy(eb, b, 32);
  s_a[0] = sa;
  s_b[0] = sb;
  return fp4sim_dpi_mma(FP4SIM_DPI_MXF8F6F4, model, ta, tb, FP4SIM_DPI_UE8M0, 32, ea, eb, s_a, s_b, c, d, flags);
}

int main(void) {
  unsigned int u = 0;
  int flags = -1, i;
  unsigned char a[32], b[32];

  /* names */
  EXPECT(fp4sim_dpi_type_id("e2m1") == FP4SIM_DPI_E2M1);
  EXPECT(fp4sim_dpi_type_id("bf16") == FP4SIM_DPI_BF16);
  EXPECT(fp4sim_dpi_type_id("e9m9") == -1 && strstr(fp4sim_dpi_last_error(), "e9m9") != NULL);
  EXPECT(fp4sim_dpi_kind_id("mxf8f6f4") == FP4SIM_DPI_MXF8F6F4);
  EXPECT(fp4sim_dpi_model_id("ascend-hif4") == FP4SIM_DPI_ASCEND_HIF4);
  EXPECT(fp4sim_dpi_block_format_id("nvfp4") == FP4SIM_DPI_NVFP4);
  EXPECT(fp4sim_dpi_kind_k(FP4SIM_DPI_MXF4) == 64 && fp4sim_dpi_kind_k(FP4SIM_DPI_MXF8F6F4) == 32);
  EXPECT(fp4sim_dpi_block_size(FP4SIM_DPI_NVFP4) == 16 && fp4sim_dpi_block_size(FP4SIM_DPI_HIF4_BLOCK) == 64);

  /* decode: E2M1 0111 = 1.1b * 2^2 = 6; 1111 = -6; UE8M0 0x7F = 2^0; 0xFF NaN; E5M2 0x7C = +Inf */
  EXPECT(fp4sim_dpi_decode(FP4SIM_DPI_E2M1, 0x7, &u) == FP4SIM_DPI_OK && u == 0x40C00000u);
  EXPECT(fp4sim_dpi_decode(FP4SIM_DPI_E2M1, 0xF, &u) == FP4SIM_DPI_OK && u == 0xC0C00000u);
  EXPECT(fp4sim_dpi_decode(FP4SIM_DPI_UE8M0, 0x7F, &u) == FP4SIM_DPI_OK && u == 0x3F800000u);
  EXPECT(fp4sim_dpi_decode(FP4SIM_DPI_UE8M0, 0xFF, &u) == FP4SIM_DPI_OK && u == 0x7FC00000u);
  EXPECT(fp4sim_dpi_decode(FP4SIM_DPI_E5M2, 0x7C, &u) == FP4SIM_DPI_OK && u == 0x7F800000u);
  /* E4M3 0x01 = 2^-9 (subnormal: 0.001b * 2^-6) */
  EXPECT(fp4sim_dpi_decode(FP4SIM_DPI_E4M3, 0x01, &u) == FP4SIM_DPI_OK && u == 0x3B000000u);
  /* a code wider than the type is an error, and nothing is written */
  u = 0xABCDu;
  EXPECT(fp4sim_dpi_decode(FP4SIM_DPI_E2M1, 0x10, &u) == FP4SIM_DPI_ERROR && u == 0xABCDu);
  EXPECT(strlen(fp4sim_dpi_last_error()) > 0);
  EXPECT(fp4sim_dpi_decode(42, 0, &u) == FP4SIM_DPI_ERROR);

  /* encode 5.0 to E2M1: a tie between 4 (0110) and 6 (0111); RNE takes the even 4, RNA 6 */
  EXPECT(fp4sim_dpi_encode(FP4SIM_DPI_E2M1, 0x40A00000u, FP4SIM_DPI_RNE, 0, 0, &u) == FP4SIM_DPI_OK && u == 0x6);
  EXPECT(fp4sim_dpi_encode(FP4SIM_DPI_E2M1, 0x40A00000u, FP4SIM_DPI_RNA, 0, 0, &u) == FP4SIM_DPI_OK && u == 0x7);
  EXPECT(fp4sim_dpi_encode_real(FP4SIM_DPI_E2M1, -0.5, FP4SIM_DPI_RNE, 0, 0, &u) == FP4SIM_DPI_OK && u == 0x9);
  EXPECT(fp4sim_dpi_encode(FP4SIM_DPI_E2M1, 0x3F800000u, 7, 0, 0, &u) == FP4SIM_DPI_ERROR);

  /* MXFP4 block quantize, floor scale: amax 6 -> scale 2^(floor(log2 6) - 2) = 1 (code 127); the
   * element 6 -> 0111, 0.5 -> 0001, the rest 0 */
  {
    unsigned int x[FP4SIM_DPI_MAX_BLOCK] = {0}, scale = 0, gs = 0;
    unsigned char codes[FP4SIM_DPI_MAX_BLOCK];
    x[0] = 0x40C00000u; /* 6 */
    x[1] = 0x3F000000u; /* 0.5 */
    EXPECT(fp4sim_dpi_quantize_block(FP4SIM_DPI_MXFP4, x, FP4SIM_DPI_RNE, FP4SIM_DPI_SCALE_FLOOR,
                                     FP4SIM_DPI_CONV_TE, 1, 0, 0, codes, &scale, &gs) == FP4SIM_DPI_OK);
    EXPECT(scale == 127 && codes[0] == 0x7 && codes[1] == 0x1 && codes[2] == 0 && gs == 0x3F800000u);
  }

  memset(a, 0, sizeof a);
  memset(b, 0, sizeof b);
  /* 6 * 6 + 1 = 37 exactly: no flags */
  a[0] = 0x7;
  b[0] = 0x7;
  EXPECT(mma_k32(FP4SIM_DPI_BLACKWELL, FP4SIM_DPI_E2M1, FP4SIM_DPI_E2M1, a, b, 127, 127, 0x3F800000u, &u, &flags) == 0);
  EXPECT(u == 0x42140000u && flags == 0);
  /* 6 * 6 - (2 + 2^-21) = 34 - 2^-21. blackwell: the largest exponent is the product's (4), C is
   * truncated to the grid 2^(4 - 25) = 2^-21 (still exact here), and the sum truncated to FP32
   * (ulp 2^-18 in [32, 64)) gives 34 - 2^-18 = 0x4207FFFF, inexact. exact: RN gives 34, inexact. */
  EXPECT(mma_k32(FP4SIM_DPI_BLACKWELL, FP4SIM_DPI_E2M1, FP4SIM_DPI_E2M1, a, b, 127, 127, 0xC0000002u, &u, &flags) == 0);
  EXPECT(u == 0x4207FFFFu && flags == FP4SIM_DPI_FLAG_INEXACT);
  EXPECT(mma_k32(FP4SIM_DPI_EXACT, FP4SIM_DPI_E2M1, FP4SIM_DPI_E2M1, a, b, 127, 127, 0xC0000002u, &u, &flags) == 0);
  EXPECT(u == 0x42080000u && flags == FP4SIM_DPI_FLAG_INEXACT);
  /* a NaN scale: NaN result, but from a NaN input, so not invalid */
  EXPECT(mma_k32(FP4SIM_DPI_BLACKWELL, FP4SIM_DPI_E2M1, FP4SIM_DPI_E2M1, a, b, 0xFF, 127, 0, &u, &flags) == 0);
  EXPECT(u == 0x7FFFFFFFu && flags == 0);
  /* +Inf * 1 + -Inf (E5M2 0x7C = +Inf, 0x3C = 1): invalid, in both models */
  {
    unsigned char fa[32] = {0}, fb[32] = {0};
    fa[0] = 0x7C;
    fb[0] = 0x3C;
    EXPECT(mma_k32(FP4SIM_DPI_BLACKWELL, FP4SIM_DPI_E5M2, FP4SIM_DPI_E5M2, fa, fb, 127, 127, 0xFF800000u, &u, &flags) == 0);
    EXPECT(u == 0x7FFFFFFFu && flags == FP4SIM_DPI_FLAG_INVALID);
    EXPECT(mma_k32(FP4SIM_DPI_EXACT, FP4SIM_DPI_E5M2, FP4SIM_DPI_E5M2, fa, fb, 127, 127, 0xFF800000u, &u, &flags) == 0);
    EXPECT(u == 0x7FFFFFFFu && flags == FP4SIM_DPI_FLAG_INVALID);
    /* +Inf + -0 stays +Inf: an infinite input, no flags */
    EXPECT(mma_k32(FP4SIM_DPI_EXACT, FP4SIM_DPI_E5M2, FP4SIM_DPI_E5M2, fa, fb, 127, 127, 0x80000000u, &u, &flags) == 0);
    EXPECT(u == 0x7F800000u && flags == 0);
  }
  /* overflow: 32 * 36 * 2^127 * 2^127 >= 2^128, from finite inputs: +Inf, overflow + inexact */
  for (i = 0; i < 32; ++i) a[i] = b[i] = 0x7;
  EXPECT(mma_k32(FP4SIM_DPI_BLACKWELL, FP4SIM_DPI_E2M1, FP4SIM_DPI_E2M1, a, b, 254, 254, 0, &u, &flags) == 0);
  EXPECT(u == 0x7F800000u && flags == (FP4SIM_DPI_FLAG_OVERFLOW | FP4SIM_DPI_FLAG_INEXACT));
  /* underflow: 1 * 0.5 * 2^-127 * 2^-127 = 2^-255, far below FP32's 2^-149: +0, underflow + inexact */
  memset(a, 0, sizeof a);
  memset(b, 0, sizeof b);
  a[0] = 0x2; /* 1.0 */
  b[0] = 0x1; /* 0.5 */
  EXPECT(mma_k32(FP4SIM_DPI_BLACKWELL, FP4SIM_DPI_E2M1, FP4SIM_DPI_E2M1, a, b, 0, 0, 0, &u, &flags) == 0);
  EXPECT(u == 0u && flags == (FP4SIM_DPI_FLAG_UNDERFLOW | FP4SIM_DPI_FLAG_INEXACT));
  /* an exact subnormal: 1 * 1 * 2^-127 * 2^-3 = 2^-130 = 2^19 * 2^-149 -> 0x00080000, exact: no flags */
  b[0] = 0x2;
  EXPECT(mma_k32(FP4SIM_DPI_BLACKWELL, FP4SIM_DPI_E2M1, FP4SIM_DPI_E2M1, a, b, 0, 124, 0, &u, &flags) == 0);
  EXPECT(u == 0x00080000u && flags == 0);
  /* a bad configuration: hif4 under blackwell */
  EXPECT(fp4sim_dpi_mma(FP4SIM_DPI_HIF4, FP4SIM_DPI_BLACKWELL, -1, -1, -1, 0, a, b, &u, &u, 0, &u, &flags) ==
         FP4SIM_DPI_ERROR);
  EXPECT(strstr(fp4sim_dpi_last_error(), "blackwell") != NULL);

  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  else printf("fp4sim_dpi C ABI: all checks passed\n");
  return failures ? 1 : 0;
}
