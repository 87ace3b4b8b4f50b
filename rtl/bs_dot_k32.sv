// Blackwell-style K=32 FP8/FP6/FP4 instruction slice (kind mxf8f6f4, one output element):
//   D = C + sum of 32 products a_k * b_k * 2^(exp(sA) + exp(sB)) (UE8M0 scales, block 32),
// one fused sum aligned with 25 fraction bits, truncated to FP32 — bit-exact with fp4sim's golden
// `blackwell` model (MMA-Sim nv_fused_dot_add). Element formats of A and B are selected at run
// time (fmt_a_i, fmt_b_i = fp4sim_pkg::Fmt*), as the instruction's type fields select them.
//
// On the shared pipeline shell (fp4sim_pe_shell; PipeDepth = latency, see there). Front end:
// element decode, products, largest exponent and alignment shifts (bs_k32_front); back end: the
// aligned sum and its conversion to FP32 (bs_k32_combine).
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

  typedef struct packed {
    logic [255:0] a;
    logic [255:0] b;
    logic [2:0]   fmt_a;
    logic [2:0]   fmt_b;
    logic [7:0]   sfa;
    logic [7:0]   sfb;
    logic [31:0]  c;
  } in_t;

  // Lane products with their alignment shifts, C, the largest exponent and the special outcome.
  typedef struct packed {
    logic [32*8-1:0] p_mag;
    logic [31:0]     p_neg;
    logic [32*6-1:0] p_sh;
    logic [23:0]     c_mag;
    logic            c_neg;
    logic [5:0]      c_sh;
    logic [11:0]     max_e;
    logic [1:0]      special;  // fp4sim_dp_pkg::special_e (yosys 0.23: no package types in structs)
  } mid_t;

  in_t  in_d, fe;
  mid_t mid_d, be;
  logic [31:0] d;

  assign in_d = {a_i, b_i, fmt_a_i, fmt_b_i, sfa_i, sfb_i, c_i};  // in_t's field order

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

  bs_k32_front u_front (
    .a_i       (fe.a),
    .b_i       (fe.b),
    .fmt_a_i   (fe.fmt_a),
    .fmt_b_i   (fe.fmt_b),
    .sfa_i     (fe.sfa),
    .sfb_i     (fe.sfb),
    .c_i       (fe.c),
    .p_mag_o   (mid_d.p_mag),
    .p_neg_o   (mid_d.p_neg),
    .p_sh_o    (mid_d.p_sh),
    .c_mag_o   (mid_d.c_mag),
    .c_neg_o   (mid_d.c_neg),
    .c_sh_o    (mid_d.c_sh),
    .max_e_o   (mid_d.max_e),
    .special_o (mid_d.special)
  );

  bs_k32_combine u_comb (
    .p_mag_i   (be.p_mag),
    .p_neg_i   (be.p_neg),
    .p_sh_i    (be.p_sh),
    .c_mag_i   (be.c_mag),
    .c_neg_i   (be.c_neg),
    .c_sh_i    (be.c_sh),
    .max_e_i   (be.max_e),
    .special_i (be.special),
    .d_o       (d)
  );

endmodule
