// NVFP4 on the same 64-length PE as hif4_pe (the comparison point of the HiF4 paper): four exact
// 16-element E2M1 group sums, four UE4M3 x UE4M3 scale products and their application, the four
// scaled terms summed exactly and added to the FP32 accumulator with one round-to-nearest-even:
//   D = RN(C + sum over g of S_g * scaleA_g * scaleB_g)
// bit-exact with fp4sim's golden `exact` model on one K=64 mxf4nvf4 instruction (UE4M3, block 16).
// Same throughput, ports and pipeline shell as hif4_pe; sfa_i / sfb_i hold four UE4M3 codes,
// scale g in bits 8g+7:8g.
//
// Front end: group sums and the exact fixed-point sum of the scaled terms (nvfp4_scale); the mid
// register holds that term and C. Back end (BackEnd, fp4sim_dp_pkg::Be*): today's adder that
// normalizes both operands (BeNormalize), or C shifted into the term's frame and one normalization
// (BeFixed); the two give the same bits (docs/area.md compares their cost).
module nvfp4_pe64 #(
  parameter int unsigned PipeDepth = 3,
  parameter int unsigned BackEnd   = fp4sim_dp_pkg::BeNormalize
) (
  input  logic         clk_i,
  input  logic         rst_ni,
  input  logic         in_valid_i,
  output logic         in_ready_o,
  input  logic [255:0] a_i,    // 64 E2M1 codes, element k in bits 4k+3:4k
  input  logic [255:0] b_i,
  input  logic [31:0]  sfa_i,  // four UE4M3 scale codes
  input  logic [31:0]  sfb_i,
  input  logic [31:0]  c_i,
  output logic         out_valid_o,
  input  logic         out_ready_i,
  output logic [31:0]  d_o
);

  localparam int unsigned TermW   = 49;   // nvfp4_scale: |T| < 2^49 units of 2^-20
  localparam integer      TermLsb = -20;

  typedef struct packed {
    logic [255:0] a;
    logic [255:0] b;
    logic [31:0]  sfa;
    logic [31:0]  sfb;
    logic [31:0]  c;
  } in_t;

  typedef struct packed {
    logic             t_neg;
    logic [TermW-1:0] t_mag;
    logic [31:0]      c;
    logic [1:0]       special;  // fp4sim_dp_pkg::special_e (yosys 0.23: no package types in structs)
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
  logic [4*13-1:0] sums;
  logic [3:0]      all_zero, all_neg;
  logic            scale_nan;

  for (genvar g = 0; g < 4; g++) begin : g_group
    fp4_dot16 u_dot (
      .a_i        (fe.a[g*64 +: 64]),
      .b_i        (fe.b[g*64 +: 64]),
      .sum_o      (sums[g*13 +: 13]),
      .all_zero_o (all_zero[g]),
      .all_neg_o  (all_neg[g])
    );
  end

  nvfp4_scale u_scale (
    .sum_i      (sums),
    .all_zero_i (all_zero),
    .all_neg_i  (all_neg),
    .sfa_i      (fe.sfa),
    .sfb_i      (fe.sfb),
    .t_neg_o    (mid_d.t_neg),
    .t_mag_o    (mid_d.t_mag),
    .nan_o      (scale_nan)
  );

  assign mid_d.c = fe.c;

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

  if (BackEnd == fp4sim_dp_pkg::BeFixed) begin : g_fixed
    fp4sim_fix_add_rne #(
      .TermW   (TermW),
      .TermLsb (TermLsb)
    ) u_add (
      .c_i     (be.c),
      .t_neg_i (be.t_neg),
      .t_mag_i (be.t_mag),
      .d_o     (d_fin)
    );
  end else begin : g_normalize
    logic [TermW-1:0] big, sml;
    logic [13:0]      big_lead;
    logic [7:0]       align;
    logic             big_neg, eff_sub, zero, zero_neg;

    fp4sim_fp32_add_prep #(
      .TermW (TermW),
      .ExpW  (8)
    ) u_prep (
      .c_i        (be.c),
      .t_neg_i    (be.t_neg),
      .t_mag_i    (be.t_mag),
      .t_exp_i    (8'(TermLsb)),
      .big_o      (big),
      .sml_o      (sml),
      .big_lead_o (big_lead),
      .dist_o     (align),
      .big_neg_o  (big_neg),
      .eff_sub_o  (eff_sub),
      .zero_o     (zero),
      .zero_neg_o (zero_neg)
    );

    fp4sim_fp32_add_round #(
      .W (TermW)
    ) u_round (
      .big_i      (big),
      .sml_i      (sml),
      .big_lead_i (big_lead),
      .dist_i     (align),
      .big_neg_i  (big_neg),
      .eff_sub_i  (eff_sub),
      .zero_i     (zero),
      .zero_neg_i (zero_neg),
      .d_o        (d_fin)
    );
  end

  fp4sim_special_apply u_apply (
    .special_i (be.special),
    .d_i       (d_fin),
    .d_o       (d)
  );

endmodule
