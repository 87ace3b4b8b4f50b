// Blackwell-style K=64 FP4 instruction slice (kind mxf4 / mxf4nvf4, one output element):
//   D = C + sum over 4 groups of (exact 16-product E2M1 sum) * scaleA * scaleB,
// aligned with 35 fraction bits and truncated to FP32 — bit-exact with fp4sim's golden
// `blackwell` model (MMA-Sim nv_fused_dot_add_with_block_scale).
//
// On the shared pipeline shell (fp4sim_pe_shell; PipeDepth = latency, see there). Front end: group
// sums, scale application, largest exponent, the alignment shifts and a carry-save reduction of the
// five terms (bs_k64_scale); back end: the one carry-propagate add and the truncation to FP32
// (bs_k64_sum).
module bs_dot_k64 #(
  parameter int unsigned ScaleFmt  = 0,   // 0: UE4M3 (NVFP4), 1: UE8M0 (MXFP4)
  parameter int unsigned Block     = 16,  // elements per block scale: 16 or 32
  parameter int unsigned PipeDepth = 2
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic                  in_valid_i,
  output logic                  in_ready_o,
  input  logic [255:0]          a_i,    // 64 E2M1 codes, element k in bits 4k+3:4k
  input  logic [255:0]          b_i,
  input  logic [64/Block*8-1:0] sfa_i,  // 64/Block scale codes, scale j in bits 8j+7:8j
  input  logic [64/Block*8-1:0] sfb_i,
  input  logic [31:0]           c_i,    // FP32 bits
  output logic                  out_valid_o,
  input  logic                  out_ready_i,
  output logic [31:0]           d_o     // FP32 bits
);

  localparam int unsigned SfW = 64 / Block * 8;
  localparam int unsigned TW  = 58 - ((ScaleFmt == 0) ? 8 : 2);  // exact sum width (bs_k64_scale)

  typedef struct packed {
    logic [255:0]   a;
    logic [255:0]   b;
    logic [SfW-1:0] sfa;
    logic [SfW-1:0] sfb;
    logic [31:0]    c;
  } in_t;

  // The exact sum of the aligned terms and C in carry-save form, and the special outcome.
  typedef struct packed {
    logic [TW-1:0]   sum;
    logic [TW-1:0]   carry;
    logic [11:0]     max_e;
    logic [1:0]      special;  // fp4sim_dp_pkg::special_e (yosys 0.23: no package types in structs)
  } mid_t;

  in_t  in_d, fe;
  mid_t mid_d, be;
  logic [31:0] d;

  assign in_d = {a_i, b_i, sfa_i, sfb_i, c_i};  // in_t's field order

  fp4sim_pe_shell #(
    .InW       ($bits(in_d)),
    .MidW      ($bits(mid_d)),
    .OutW      (32),
    .PipeDepth (PipeDepth)
  ) u_shell (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (in_valid_i),
    .in_ready_o  (in_ready_o),
    .in_data_i   (in_d),
    .fe_o        (fe),
    .fe_i        (mid_d),
    .be_o        (be),
    .be_i        (d),
    .out_valid_o (out_valid_o),
    .out_ready_i (out_ready_i),
    .out_data_o  (d_o)
  );

  // ---- front end: four exact 16-product group sums, then the scales
  logic [4*13-1:0] sums;
  logic            scale_nan;

  for (genvar g = 0; g < 4; g++) begin : g_group
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused_zero, unused_neg;  // the zero-sign flags matter only to nvfp4_pe64
    /* verilator lint_on UNUSEDSIGNAL */
    fp4_dot16 u_dot (
      .a_i        (fe.a[g*64 +: 64]),
      .b_i        (fe.b[g*64 +: 64]),
      .sum_o      (sums[g*13 +: 13]),
      .all_zero_o (unused_zero),
      .all_neg_o  (unused_neg)
    );
  end

  bs_k64_scale #(
    .ScaleFmt (ScaleFmt),
    .Block    (Block)
  ) u_scale (
    .sum_i   (sums),
    .sfa_i   (fe.sfa),
    .sfb_i   (fe.sfb),
    .c_i      (fe.c),
    .sum_o    (mid_d.sum),
    .carry_o  (mid_d.carry),
    .max_e_o  (mid_d.max_e),
    .nan_o    (scale_nan)
  );

  // NaN in a scale or in C -> canonical NaN (checked first); C = +-Inf -> C (fp4sim's choice,
  // MMA-Sim raises there).
  fp4sim_special u_special (
    .c_i       (fe.c),
    .nan_i     (scale_nan),
    .pinf_i    (1'b0),
    .ninf_i    (1'b0),
    .special_o (mid_d.special)
  );

  // ---- back end: alignment, exact sum, truncation to FP32
  logic [31:0] d_fin;

  bs_k64_sum #(
    .ScaleFmt (ScaleFmt)
  ) u_sum (
    .sum_i    (be.sum),
    .carry_i  (be.carry),
    .max_e_i  (be.max_e),
    .d_o      (d_fin)
  );

  fp4sim_special_apply u_apply (
    .special_i (be.special),
    .d_i       (d_fin),
    .d_o       (d)
  );

endmodule
