// Blackwell-style K=32 FP8/FP6/FP4 instruction slice (kind mxf8f6f4, one output element):
//   D = C + sum of 32 products a_k * b_k * 2^(exp(sA) + exp(sB)) (UE8M0 scales, block 32),
// one fused sum aligned with 25 fraction bits, truncated to FP32 — bit-exact with fp4sim's golden
// `blackwell` model (MMA-Sim nv_fused_dot_add). Element formats of A and B are selected at run
// time (fmt_a_i, fmt_b_i = fp4sim_pkg::Fmt*), as the instruction's type fields select them.
//
// Pipeline (valid/ready, registered output), PipeDepth = latency in cycles:
//   1: output register only; 2: + register after decode / products / alignment shifts;
//   3: + input register; > 3: further output stages.
module bs_dot_k32 #(
  parameter int unsigned PipeDepth = 2
) (
  input  logic         clk_i,
  input  logic         rst_ni,
  input  logic         in_valid_i,
  output logic         in_ready_o,
  input  logic [255:0] a_i,      // 32 element codes, element k in bits 8k+7:8k
  input  logic [255:0] b_i,
  input  logic [2:0]   fmt_a_i,
  input  logic [2:0]   fmt_b_i,
  input  logic [7:0]   sfa_i,    // UE8M0
  input  logic [7:0]   sfb_i,
  input  logic [31:0]  c_i,
  output logic         out_valid_o,
  input  logic         out_ready_i,
  output logic [31:0]  d_o
);

  localparam int unsigned InW  = 512 + 6 + 16 + 32;
  localparam int unsigned MidW = 32 * 15 + 24 + 1 + 6 + 12 + 2;

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
    .data_i  ({a_i, b_i, fmt_a_i, fmt_b_i, sfa_i, sfb_i, c_i}),
    .valid_o (s0_valid),
    .ready_i (s0_ready),
    .data_o  (s0_data)
  );

  logic [255:0] a, b;
  logic [2:0]   fmt_a, fmt_b;
  logic [7:0]   sfa, sfb;
  logic [31:0]  c;
  assign {a, b, fmt_a, fmt_b, sfa, sfb, c} = s0_data;

  logic [32*8-1:0]   p_mag;
  logic [31:0]       p_neg;
  logic [32*6-1:0]   p_sh;
  logic [23:0]       c_mag;
  logic              c_neg;
  logic [5:0]        c_sh;
  logic [11:0]       max_e;
  logic [1:0]        special;

  bs_k32_front u_front (
    .a_i       (a),
    .b_i       (b),
    .fmt_a_i   (fmt_a),
    .fmt_b_i   (fmt_b),
    .sfa_i     (sfa),
    .sfb_i     (sfb),
    .c_i       (c),
    .p_mag_o   (p_mag),
    .p_neg_o   (p_neg),
    .p_sh_o    (p_sh),
    .c_mag_o   (c_mag),
    .c_neg_o   (c_neg),
    .c_sh_o    (c_sh),
    .max_e_o   (max_e),
    .special_o (special)
  );

  logic            s1_valid, s1_ready;
  logic [MidW-1:0] s1_data;
  logic [32*8-1:0] m_p_mag;
  logic [31:0]     m_p_neg;
  logic [32*6-1:0] m_p_sh;
  logic [23:0]     m_c_mag;
  logic            m_c_neg;
  logic [5:0]      m_c_sh;
  logic [11:0]     m_max_e;
  logic [1:0]      m_special;

  fp4sim_pipe_reg #(
    .Width  (MidW),
    .Bypass (PipeDepth < 2)
  ) u_mid (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (s0_valid),
    .ready_o (s0_ready),
    .data_i  ({p_mag, p_neg, p_sh, c_mag, c_neg, c_sh, max_e, special}),
    .valid_o (s1_valid),
    .ready_i (s1_ready),
    .data_o  (s1_data)
  );

  assign {m_p_mag, m_p_neg, m_p_sh, m_c_mag, m_c_neg, m_c_sh, m_max_e, m_special} = s1_data;

  logic [31:0] d;

  bs_k32_combine u_comb (
    .p_mag_i   (m_p_mag),
    .p_neg_i   (m_p_neg),
    .p_sh_i    (m_p_sh),
    .c_mag_i   (m_c_mag),
    .c_neg_i   (m_c_neg),
    .c_sh_i    (m_c_sh),
    .max_e_i   (m_max_e),
    .special_i (m_special),
    .d_o       (d)
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
