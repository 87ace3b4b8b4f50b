/* fp4sim_dpi.h - the C ABI of libfp4sim_dpi: fp4sim's golden numerics for outside RTL, called from
 * a SystemVerilog testbench through DPI-C (fp4sim_dpi_pkg.sv imports every function below) or from
 * any C / C++ program. Plain C: no fp4sim C++ header is needed to use it. docs/dpi.md.
 *
 * Conventions: every function that can fail returns FP4SIM_DPI_OK (0) or FP4SIM_DPI_ERROR (-1);
 * on an error, fp4sim_dpi_last_error() gives a one-line message (per thread) and no output was
 * written. FP32 values travel as their IEEE-754 bits (unsigned int), codes as unsigned integers
 * (one element code per byte, 8-bit scale codes or HiF4 32-bit scale words per unsigned int). */
#ifndef FP4SIM_DPI_H
#define FP4SIM_DPI_H

#if defined(FP4SIM_DPI_BUILD) && defined(__GNUC__)
#define FP4SIM_DPI_API __attribute__((visibility("default")))
#else
#define FP4SIM_DPI_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Element and scale types (SPEC section 1). */
enum {
  FP4SIM_DPI_E2M1 = 0,
  FP4SIM_DPI_E2M3 = 1,
  FP4SIM_DPI_E3M2 = 2,
  FP4SIM_DPI_E4M3 = 3,
  FP4SIM_DPI_E5M2 = 4,
  FP4SIM_DPI_UE4M3 = 5,
  FP4SIM_DPI_UE8M0 = 6,
  FP4SIM_DPI_E6M2 = 7,
  FP4SIM_DPI_S1P2 = 8,
  FP4SIM_DPI_BF16 = 9,
  FP4SIM_DPI_NUM_TYPES = 10,
  FP4SIM_DPI_TYPE_DEFAULT = -1 /* fp4sim_dpi_mma: the kind's default */
};

/* MMA kinds (one row x one column of one instruction). */
enum {
  FP4SIM_DPI_MXF4 = 0,     /* E2M1, UE8M0 per 32, K = 64 */
  FP4SIM_DPI_MXF4NVF4 = 1, /* E2M1, UE4M3 or UE8M0 per 16 or 32, K = 64 */
  FP4SIM_DPI_MXF8F6F4 = 2, /* E4M3 / E5M2 / E2M3 / E3M2 / E2M1 (A and B independent), UE8M0 per 32, K = 32 */
  FP4SIM_DPI_HIF4 = 3,     /* S1P2, one 32-bit scale word per 64, K = 64 */
  FP4SIM_DPI_NUM_KINDS = 4
};

/* Numerics models (SPEC section 4). */
enum {
  FP4SIM_DPI_EXACT = 0,
  FP4SIM_DPI_FP32_SEQ = 1,
  FP4SIM_DPI_BLACKWELL = 2,
  FP4SIM_DPI_ASCEND_HIF4 = 3,
  FP4SIM_DPI_MODEL_DEFAULT = -1 /* the kind's hardware model: blackwell, or ascend-hif4 for hif4 */
};

/* Block formats (SPEC section 2). */
enum {
  FP4SIM_DPI_NVFP4 = 0,
  FP4SIM_DPI_MXFP4 = 1,
  FP4SIM_DPI_MXFP6_E2M3 = 2,
  FP4SIM_DPI_MXFP6_E3M2 = 3,
  FP4SIM_DPI_MXFP8_E4M3 = 4,
  FP4SIM_DPI_MXFP8_E5M2 = 5,
  FP4SIM_DPI_HIF4_BLOCK = 6
};

/* Rounding modes, MX scale rules, quantizer conventions. */
enum { FP4SIM_DPI_RNE = 0, FP4SIM_DPI_RNA = 1, FP4SIM_DPI_RZ = 2, FP4SIM_DPI_SR = 3 };
enum { FP4SIM_DPI_SCALE_FLOOR = 0, FP4SIM_DPI_SCALE_CEIL = 1 };
enum { FP4SIM_DPI_CONV_TE = 0, FP4SIM_DPI_CONV_TORCHAO = 1, FP4SIM_DPI_CONV_MODELOPT = 2 };

/* Exception flags of fp4sim_dpi_mma, in the bit order of Berkeley SoftFloat / TestFloat and
 * RISC-V fflags (bit 3, divide-by-zero, is never raised). Definitions in docs/dpi.md. */
enum {
  FP4SIM_DPI_FLAG_INEXACT = 1,
  FP4SIM_DPI_FLAG_UNDERFLOW = 2,
  FP4SIM_DPI_FLAG_OVERFLOW = 4,
  FP4SIM_DPI_FLAG_INVALID = 16
};

enum { FP4SIM_DPI_OK = 0, FP4SIM_DPI_ERROR = -1 };
enum { FP4SIM_DPI_MAX_K = 64, FP4SIM_DPI_MAX_SCALES = 4, FP4SIM_DPI_MAX_BLOCK = 64 };

FP4SIM_DPI_API const char* fp4sim_dpi_version(void);
/* The message of this thread's last failed call ("" if none). */
FP4SIM_DPI_API const char* fp4sim_dpi_last_error(void);

/* Names as fp4sim's command line spells them ("e2m1", "mxf8f6f4", "blackwell", "nvfp4", ...);
 * -1 for an unknown name (and last_error set). type_name: NULL for an unknown id. */
FP4SIM_DPI_API int fp4sim_dpi_type_id(const char* name);
FP4SIM_DPI_API const char* fp4sim_dpi_type_name(int type);
FP4SIM_DPI_API int fp4sim_dpi_type_bits(int type); /* storage bits; -1 for an unknown id */
FP4SIM_DPI_API int fp4sim_dpi_kind_id(const char* name);
FP4SIM_DPI_API int fp4sim_dpi_kind_k(int kind); /* instruction K; -1 for an unknown id */
FP4SIM_DPI_API int fp4sim_dpi_model_id(const char* name);
FP4SIM_DPI_API int fp4sim_dpi_block_format_id(const char* name);
FP4SIM_DPI_API int fp4sim_dpi_block_size(int format); /* elements per block; -1 for an unknown id */

/* Value of a code as FP32 bits (every value of every type is an FP32 value; NaN codes give the quiet
 * NaN 0x7FC00000, Inf codes +-Inf). Bits above the type's width are an error. */
FP4SIM_DPI_API int fp4sim_dpi_decode(int type, unsigned int code, unsigned int* f32_bits);
FP4SIM_DPI_API int fp4sim_dpi_decode_real(int type, unsigned int code, double* value);

/* Encodes a value (FP32 bits, or a double) under rounding (FP4SIM_DPI_RNE ...), saturating or not;
 * rbyte is the random byte of stochastic rounding (ignored otherwise). Rules: docs/formats.md. */
FP4SIM_DPI_API int fp4sim_dpi_encode(int type, unsigned int f32_bits, int rounding, int saturate,
                                     unsigned int rbyte, unsigned int* code);
FP4SIM_DPI_API int fp4sim_dpi_encode_real(int type, double value, int rounding, int saturate,
                                          unsigned int rbyte, unsigned int* code);

/* Quantizes one block, as fp4sim's quantize() quantizes a [1, block] tensor: x holds
 * fp4sim_dpi_block_size(format) FP32 values (bits). Writes that many element codes, the block's scale
 * (8-bit code, or the HiF4 32-bit word) and the NVFP4 per-tensor decode scale S_dec as FP32 bits
 * (1.0 for the other formats and when pts = 0). seed / stream: stochastic rounding's Philox key and
 * stream (SPEC section 3). */
FP4SIM_DPI_API int fp4sim_dpi_quantize_block(int format, const unsigned int* x_f32, int rounding,
                                             int scale_rule, int convention, int pts,
                                             unsigned long long seed, unsigned int stream,
                                             unsigned char* codes, unsigned int* scale,
                                             unsigned int* global_scale_f32);

/* One instruction of an MMA kind for one row of A and one column of B: D = A.B + C under a model.
 * a, b: K = fp4sim_dpi_kind_k(kind) element codes each; sfa, sfb: K / block scale codes (or HiF4
 * words) each; c: FP32 bits. type_a / type_b / scale_type = FP4SIM_DPI_TYPE_DEFAULT and block = 0
 * take the kind's defaults. Writes D's FP32 bits (NaN results are 0x7FFFFFFF) and the exception
 * flags (FP4SIM_DPI_FLAG_*) measured against the exact value of C + the sum of the products. */
FP4SIM_DPI_API int fp4sim_dpi_mma(int kind, int model, int type_a, int type_b, int scale_type,
                                  int block, const unsigned char* a, const unsigned char* b,
                                  const unsigned int* sfa, const unsigned int* sfb,
                                  unsigned int c_f32, unsigned int* d_f32, int* flags);

/* fp4sim_dpi_mma with golden numerics a designer sets: the preset `model` (as above) with the
 * parameters of `numerics` changed, "key=value,..." as docs/numerics.md ("Numerics a designer can
 * set") lists them, e.g. "frac_bits=25,term_round=rne" for a 25-bit window rounding to nearest.
 * NULL or "" runs the preset itself. The flags are measured against the exact value as above. */
FP4SIM_DPI_API int fp4sim_dpi_mma_numerics(int kind, int model, const char* numerics, int type_a,
                                           int type_b, int scale_type, int block,
                                           const unsigned char* a, const unsigned char* b,
                                           const unsigned int* sfa, const unsigned int* sfb,
                                           unsigned int c_f32, unsigned int* d_f32, int* flags);

#ifdef __cplusplus
}
#endif

#endif /* FP4SIM_DPI_H */
