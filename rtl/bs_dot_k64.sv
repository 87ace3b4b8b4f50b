// Blackwell-style K=64 FP4 instruction slice (kind mxf4 / mxf4nvf4, one output element):
//   D = C + sum over 4 groups of (exact 16-product E2M1 sum) * scaleA * scaleB,
// aligned with 35 fraction bits and truncated to FP32 — bit-exact with fp4sim's golden
// `blackwell` model (MMA-Sim nv_fused_dot_add_with_block_scale).
//
// Pipeline (valid/ready, registered output), PipeDepth = latency in cycles:
//   1: output register only; 2: + register after the group sums; 3: + input register;
//   > 3: further output stages (for retiming).
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

  localparam int unsigned SfW  = 64 / Block * 8;
  localparam int unsigned InW  = 512 + 2 * SfW + 32;
  localparam int unsigned MidW = 4 * 13 + 2 * SfW + 32;

  // ---- optional input register
  logic            s0_valid, s0_ready;
  logic [InW-1:0]  s0_data;

  fp4sim_pipe_reg #(
    .Width  (InW),
    .Bypass (PipeDepth < 3)
  ) u_in (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (in_valid_i),
    .ready_o (in_ready_o),
    .data_i  ({a_i, b_i, sfa_i, sfb_i, c_i}),
    .valid_o (s0_valid),
    .ready_i (s0_ready),
    .data_o  (s0_data)
  );

  logic [255:0]   a, b;
  logic [SfW-1:0] sfa, sfb;
  logic [31:0]    c;
  assign {a, b, sfa, sfb, c} = s0_data;

  // ---- front end: four exact 16-product group sums
  logic [4*13-1:0] sums;

  for (genvar g = 0; g < 4; g++) begin : g_group
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused_zero, unused_neg;  // the zero-sign flags matter only to nvfp4_pe64
    /* verilator lint_on UNUSEDSIGNAL */
    fp4_dot16 u_dot (
      .a_i        (a[g*64 +: 64]),
      .b_i        (b[g*64 +: 64]),
      .sum_o      (sums[g*13 +: 13]),
      .all_zero_o (unused_zero),
      .all_neg_o  (unused_neg)
    );
  end

  // ---- optional register after the group sums
  logic            s1_valid, s1_ready;
  logic [MidW-1:0] s1_data;

  fp4sim_pipe_reg #(
    .Width  (MidW),
    .Bypass (PipeDepth < 2)
  ) u_mid (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (s0_valid),
    .ready_o (s0_ready),
    .data_i  ({sums, sfa, sfb, c}),
    .valid_o (s1_valid),
    .ready_i (s1_ready),
    .data_o  (s1_data)
  );

  // ---- back end: scales, alignment, truncation to FP32
  logic [31:0] d;

  bs_k64_combine #(
    .ScaleFmt (ScaleFmt),
    .Block    (Block)
  ) u_comb (
    .sum_i (s1_data[MidW-1 -: 4*13]),
    .sfa_i (s1_data[32 + SfW +: SfW]),
    .sfb_i (s1_data[32 +: SfW]),
    .c_i   (s1_data[31:0]),
    .d_o   (d)
  );

  // ---- output register(s)
  fp4sim_pipe_chain #(
    .Width (32),
    .Depth ((PipeDepth >= 3) ? PipeDepth - 2 : 1)
  ) u_out (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (s1_valid),
    .ready_o (s1_ready),
    .data_i  (d),
    .valid_o (out_valid_o),
    .ready_i (out_ready_i),
    .data_o  (d_o)
  );

endmodule
