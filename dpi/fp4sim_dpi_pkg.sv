// fp4sim_dpi_pkg: fp4sim's golden numerics for a SystemVerilog testbench, imported through DPI-C
// from libfp4sim_dpi (dpi/include/fp4sim_dpi.h is the C side; docs/dpi.md the manual).
// Plain IEEE 1800 DPI: scalar arguments are int / int unsigned / longint unsigned / real / string,
// arrays are fixed-size unpacked arrays of byte unsigned / int unsigned, which every simulator
// passes to C as plain pointers (no svdpi.h needed on the C side). Arrays are sized for the largest
// kind (K = 64, 4 scales); a call reads only the first K / K-over-block entries.
package fp4sim_dpi_pkg;
  // A testbench uses a few of these names; Verilator's -Wall would list the rest.
  /* verilator lint_off UNUSEDPARAM */

  // Element and scale types
  localparam int FP4SIM_E2M1  = 0;
  localparam int FP4SIM_E2M3  = 1;
  localparam int FP4SIM_E3M2  = 2;
  localparam int FP4SIM_E4M3  = 3;
  localparam int FP4SIM_E5M2  = 4;
  localparam int FP4SIM_UE4M3 = 5;
  localparam int FP4SIM_UE8M0 = 6;
  localparam int FP4SIM_E6M2  = 7;
  localparam int FP4SIM_S1P2  = 8;
  localparam int FP4SIM_BF16  = 9;
  localparam int FP4SIM_TYPE_DEFAULT = -1;

  // MMA kinds
  localparam int FP4SIM_MXF4     = 0;
  localparam int FP4SIM_MXF4NVF4 = 1;
  localparam int FP4SIM_MXF8F6F4 = 2;
  localparam int FP4SIM_HIF4     = 3;

  // Numerics models
  localparam int FP4SIM_EXACT         = 0;
  localparam int FP4SIM_FP32_SEQ      = 1;
  localparam int FP4SIM_BLACKWELL     = 2;
  localparam int FP4SIM_ASCEND_HIF4   = 3;
  localparam int FP4SIM_MODEL_DEFAULT = -1;

  // Block formats
  localparam int FP4SIM_NVFP4      = 0;
  localparam int FP4SIM_MXFP4      = 1;
  localparam int FP4SIM_MXFP6_E2M3 = 2;
  localparam int FP4SIM_MXFP6_E3M2 = 3;
  localparam int FP4SIM_MXFP8_E4M3 = 4;
  localparam int FP4SIM_MXFP8_E5M2 = 5;
  localparam int FP4SIM_HIF4_BLOCK = 6;

  // Rounding, MX scale rule, quantizer convention
  localparam int FP4SIM_RNE = 0;
  localparam int FP4SIM_RNA = 1;
  localparam int FP4SIM_RZ  = 2;
  localparam int FP4SIM_SR  = 3;
  localparam int FP4SIM_SCALE_FLOOR = 0;
  localparam int FP4SIM_SCALE_CEIL  = 1;
  localparam int FP4SIM_CONV_TE       = 0;
  localparam int FP4SIM_CONV_TORCHAO  = 1;
  localparam int FP4SIM_CONV_MODELOPT = 2;

  // Exception flags (SoftFloat / TestFloat bit order)
  localparam int FP4SIM_FLAG_INEXACT   = 1;
  localparam int FP4SIM_FLAG_UNDERFLOW = 2;
  localparam int FP4SIM_FLAG_OVERFLOW  = 4;
  localparam int FP4SIM_FLAG_INVALID   = 16;

  // Return status
  localparam int FP4SIM_OK    = 0;
  localparam int FP4SIM_ERROR = -1;

  localparam int FP4SIM_MAX_K      = 64;
  localparam int FP4SIM_MAX_SCALES = 4;
  localparam int FP4SIM_MAX_BLOCK  = 64;

  /* verilator lint_on UNUSEDPARAM */

  import "DPI-C" function string fp4sim_dpi_version();
  import "DPI-C" function string fp4sim_dpi_last_error();

  import "DPI-C" function int fp4sim_dpi_type_id(input string name);
  import "DPI-C" function string fp4sim_dpi_type_name(input int type_id);
  import "DPI-C" function int fp4sim_dpi_type_bits(input int type_id);
  import "DPI-C" function int fp4sim_dpi_kind_id(input string name);
  import "DPI-C" function int fp4sim_dpi_kind_k(input int kind);
  import "DPI-C" function int fp4sim_dpi_model_id(input string name);
  import "DPI-C" function int fp4sim_dpi_block_format_id(input string name);
  import "DPI-C" function int fp4sim_dpi_block_size(input int format);

  import "DPI-C" function int fp4sim_dpi_decode(input int type_id, input int unsigned code,
                                                output int unsigned f32_bits);
  import "DPI-C" function int fp4sim_dpi_decode_real(input int type_id, input int unsigned code,
                                                     output real value);
  import "DPI-C" function int fp4sim_dpi_encode(input int type_id, input int unsigned f32_bits,
                                                input int rounding, input int saturate,
                                                input int unsigned rbyte, output int unsigned code);
  import "DPI-C" function int fp4sim_dpi_encode_real(input int type_id, input real value,
                                                     input int rounding, input int saturate,
                                                     input int unsigned rbyte, output int unsigned code);

  import "DPI-C" function int fp4sim_dpi_quantize_block(
      input int format, input int unsigned x_f32[FP4SIM_MAX_BLOCK], input int rounding,
      input int scale_rule, input int convention, input int pts, input longint unsigned seed,
      input int unsigned stream, output byte unsigned codes[FP4SIM_MAX_BLOCK],
      output int unsigned scale, output int unsigned global_scale_f32);

  import "DPI-C" function int fp4sim_dpi_mma(
      input int kind, input int model, input int type_a, input int type_b, input int scale_type,
      input int block, input byte unsigned a[FP4SIM_MAX_K], input byte unsigned b[FP4SIM_MAX_K],
      input int unsigned sfa[FP4SIM_MAX_SCALES], input int unsigned sfb[FP4SIM_MAX_SCALES],
      input int unsigned c_f32, output int unsigned d_f32, output int flags);

  // The same with the preset's parameters changed, e.g. "frac_bits=25,term_round=rne" (docs/numerics.md).
  import "DPI-C" function int fp4sim_dpi_mma_numerics(
      input int kind, input int model, input string numerics, input int type_a, input int type_b,
      input int scale_type, input int block, input byte unsigned a[FP4SIM_MAX_K],
      input byte unsigned b[FP4SIM_MAX_K], input int unsigned sfa[FP4SIM_MAX_SCALES],
      input int unsigned sfb[FP4SIM_MAX_SCALES], input int unsigned c_f32, output int unsigned d_f32,
      output int flags);

endpackage
