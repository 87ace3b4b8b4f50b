// Ascend-style HiF4 PE: one 64-element HiF4 dot product per cycle (two 256-bit operands, two
// 32-bit scale words) accumulated into FP32:
//   D = RN(C + (sum of 64 S1P2 x S1P2 products with micro-exponent shifts) * E6M2_A * E6M2_B)
// bit-exact with fp4sim's golden `ascend-hif4` model (one RN per 64-element group). A longer K is
// the chain D -> C of successive groups, which is what the golden GEMM computes.
//
// On the shared pipeline shell (fp4sim_pe_shell; PipeDepth = latency, see there). The mid register
// sits inside the FP32 adder, after the operands are normalized and ordered: front end = element
// array, scale application, adder prep; back end = alignment, add, normalize, round (docs/area.md
// "Stage delays": the cut that balances the two).
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

  localparam int unsigned TermW = 22;  // |S * sigA * sigB| < 2^22 (hif4_scale)
  localparam int unsigned AddW  = 24;  // adder frame: max(TermW, 24)

  typedef struct packed {
    logic [255:0] a;
    logic [255:0] b;
    logic [31:0]  sfa;
    logic [31:0]  sfb;
    logic [31:0]  c;
  } in_t;

  // The adder's state after normalizing and ordering the operands, and the special outcome.
  typedef struct packed {
    logic [AddW-1:0]          big;
    logic [AddW-1:0]          sml;
    logic [13:0]              big_lead;
    logic [7:0]               align;
    logic                     big_neg;
    logic                     eff_sub;
    logic                     zero;
    logic                     zero_neg;
    logic [1:0]               special;  // fp4sim_dp_pkg::special_e (yosys 0.23: no package types in structs)
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

  // ---- front end
  logic [16:0]      sum;
  logic             t_neg, scale_nan;
  logic [TermW-1:0] t_mag;
  logic [9:0]       t_exp;

  hif4_dot64 u_dot (
    .a_i   (fe.a),
    .b_i   (fe.b),
    .lva_i (fe.sfa[31:8]),
    .lvb_i (fe.sfb[31:8]),
    .sum_o (sum)
  );

  hif4_scale u_scale (
    .sum_i   (sum),
    .sea_i   (fe.sfa[7:0]),
    .seb_i   (fe.sfb[7:0]),
    .t_neg_o (t_neg),
    .t_mag_o (t_mag),
    .t_exp_o (t_exp),
    .nan_o   (scale_nan)
  );

  fp4sim_fp32_add_prep #(
    .TermW (TermW),
    .ExpW  (10)
  ) u_prep (
    .c_i        (fe.c),
    .t_neg_i    (t_neg),
    .t_mag_i    (t_mag),
    .t_exp_i    (t_exp),
    .big_o      (mid_d.big),
    .sml_o      (mid_d.sml),
    .big_lead_o (mid_d.big_lead),
    .dist_o     (mid_d.align),
    .big_neg_o  (mid_d.big_neg),
    .eff_sub_o  (mid_d.eff_sub),
    .zero_o     (mid_d.zero),
    .zero_neg_o (mid_d.zero_neg)
  );

  // NaN in a scale or in C -> canonical NaN; C = +-Inf -> C.
  fp4sim_special u_special (
    .c_i       (fe.c),
    .nan_i     (scale_nan),
    .pinf_i    (1'b0),
    .ninf_i    (1'b0),
    .special_o (mid_d.special)
  );

  // ---- back end
  logic [31:0] d_fin;

  fp4sim_fp32_add_round #(
    .W (AddW)
  ) u_round (
    .big_i      (be.big),
    .sml_i      (be.sml),
    .big_lead_i (be.big_lead),
    .dist_i     (be.align),
    .big_neg_i  (be.big_neg),
    .eff_sub_i  (be.eff_sub),
    .zero_i     (be.zero),
    .zero_neg_i (be.zero_neg),
    .d_o        (d_fin)
  );

  fp4sim_special_apply u_apply (
    .special_i (be.special),
    .d_i       (d_fin),
    .d_o       (d)
  );

endmodule
