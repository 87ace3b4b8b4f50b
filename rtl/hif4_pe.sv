// Ascend-style HiF4 PE: one 64-element HiF4 dot product per cycle (two 256-bit operands, two
// 32-bit scale words) accumulated into FP32:
//   D = RN(C + (sum of 64 S1P2 x S1P2 products with micro-exponent shifts) * E6M2_A * E6M2_B)
// bit-exact with fp4sim's golden `ascend-hif4` model (one RN per 64-element group). A longer K is
// the chain D -> C of successive groups, which is what the golden GEMM computes.
//
// Pipeline (valid/ready, registered output), PipeDepth = latency in cycles:
//   1: output register only; 2: + register after the integer dot product; 3: + input register;
//   > 3: further output stages.
module hif4_pe #(
  parameter int unsigned PipeDepth = 3
) (
  input  logic         clk_i,
  input  logic         rst_ni,
  input  logic         in_valid_i,
  output logic         in_ready_o,
  input  logic [255:0] a_i,    // 64 S1P2 codes, element k in bits 4k+3:4k
  input  logic [255:0] b_i,
  input  logic [31:0]  sfa_i,  // HiF4 scale word: E6M2 [7:0], E1_8 [15:8], E1_16 [31:16]
  input  logic [31:0]  sfb_i,
  input  logic [31:0]  c_i,    // FP32 accumulator in
  output logic         out_valid_o,
  input  logic         out_ready_i,
  output logic [31:0]  d_o     // FP32 accumulator out
);

  localparam int unsigned InW  = 512 + 64 + 32;
  localparam int unsigned MidW = 17 + 16 + 32;

  logic           s0_valid, s0_ready;
  logic [InW-1:0] s0_data;

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

  logic [255:0] a, b;
  logic [31:0]  sfa, sfb, c;
  assign {a, b, sfa, sfb, c} = s0_data;

  logic [16:0]  sum;

  hif4_dot64 u_dot (
    .a_i   (a),
    .b_i   (b),
    .lva_i (sfa[31:8]),
    .lvb_i (sfb[31:8]),
    .sum_o (sum)
  );

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
    .data_i  ({sum, sfa[7:0], sfb[7:0], c}),
    .valid_o (s1_valid),
    .ready_i (s1_ready),
    .data_o  (s1_data)
  );

  logic [31:0] d;

  hif4_combine u_comb (
    .sum_i (s1_data[MidW-1 -: 17]),
    .sea_i (s1_data[47:40]),
    .seb_i (s1_data[39:32]),
    .c_i   (s1_data[31:0]),
    .d_o   (d)
  );

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
