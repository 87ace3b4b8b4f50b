// NVFP4's per-tensor-scale multiply: D = RN(alpha * acc) in FP32 with one round-to-nearest-even,
// alpha = RN(S_dec_A * S_dec_B) (golden's GEMM epilogue, CUTLASS's alpha; golden/src/mma.cpp).
// HiF4 needs no such step: its scales carry the whole dynamic range. This unit is what the HiF4
// paper charges to NVFP4 on top of the PE (docs/area.md "Per-tensor scale"); in a GEMM it runs
// once per output element after the K loop, i.e. one per output lane of the epilogue.
// NaN in either operand or Inf * 0 -> 0x7FFFFFFF; subnormals are kept, overflow gives +-Inf.
//
// On the shared pipeline shell: front end = unpack and the 24 x 24 significand multiplier; back end
// = normalize and round (fp4sim_fp32_add_round with the product as its only operand).
module nvfp4_pts_mul #(
  parameter int unsigned PipeDepth = 3
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        in_valid_i,
  output logic        in_ready_o,
  input  logic [31:0] acc_i,    // FP32 accumulator
  input  logic [31:0] alpha_i,  // FP32 per-tensor scale
  output logic        out_valid_o,
  input  logic        out_ready_i,
  output logic [31:0] d_o
);

  typedef struct packed {
    logic [31:0] acc;
    logic [31:0] alpha;
  } in_t;

  typedef struct packed {
    logic [47:0] prod;      // exact significand product
    logic [13:0] top_exp;   // signed exponent of prod's bit 47
    logic        neg;
    logic [1:0]  special;   // fp4sim_dp_pkg::special_e (yosys 0.23: no package types in structs)
  } mid_t;

  in_t  in_d, fe;
  mid_t mid_d, be;
  logic [31:0] d;

  assign in_d = {acc_i, alpha_i};  // in_t's field order

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
  logic [23:0] ma, mb;
  logic [13:0] la, lb;  // signed LSB exponents
  logic        a_nan, b_nan, a_inf, b_inf, a_zero, b_zero, neg;

  always_comb begin
    ma     = {fe.acc[30:23] != 8'd0, fe.acc[22:0]};
    mb     = {fe.alpha[30:23] != 8'd0, fe.alpha[22:0]};
    la     = (fe.acc[30:23] == 8'd0) ? 14'(-149) : 14'({1'b0, fe.acc[30:23]}) - 14'd150;
    lb     = (fe.alpha[30:23] == 8'd0) ? 14'(-149) : 14'({1'b0, fe.alpha[30:23]}) - 14'd150;
    a_nan  = (fe.acc[30:23] == 8'hFF) & (fe.acc[22:0] != 23'd0);
    b_nan  = (fe.alpha[30:23] == 8'hFF) & (fe.alpha[22:0] != 23'd0);
    a_inf  = (fe.acc[30:23] == 8'hFF) & (fe.acc[22:0] == 23'd0);
    b_inf  = (fe.alpha[30:23] == 8'hFF) & (fe.alpha[22:0] == 23'd0);
    a_zero = (ma == 24'd0);
    b_zero = (mb == 24'd0);
    mid_d.prod    = 48'(ma) * 48'(mb);  // the one 24 x 24 multiplier
    mid_d.top_exp = la + lb + 14'd47;
    neg           = fe.acc[31] ^ fe.alpha[31];
    mid_d.neg     = neg;
  end

  // NaN in, or Inf * 0 -> canonical NaN; Inf * finite nonzero -> Inf of the product's sign.
  fp4sim_special u_special (
    .c_i       (32'd0),  // a product only: no addend
    .nan_i     (a_nan | b_nan | (a_inf & b_zero) | (b_inf & a_zero)),
    .pinf_i    ((a_inf | b_inf) & ~neg),
    .ninf_i    ((a_inf | b_inf) & neg),
    .special_o (mid_d.special)
  );

  // ---- back end: the product is the adder's only operand (nothing to align, no cancellation)
  logic [31:0] d_fin;

  fp4sim_fp32_add_round #(
    .W (48)
  ) u_round (
    .big_i      (be.prod),
    .sml_i      ('0),
    .big_lead_i (be.top_exp),
    .dist_i     (8'd51),
    .big_neg_i  (be.neg),
    .eff_sub_i  (1'b0),
    .zero_i     (be.prod == '0),
    .zero_neg_i (be.neg),
    .d_o        (d_fin)
  );

  fp4sim_special_apply u_apply (
    .special_i (be.special),
    .d_i       (d_fin),
    .d_o       (d)
  );

endmodule
