// First half of the single-path FP32 adder d = RN-even(c + (-1)^t_neg * t_mag * 2^t_exp) (a finite
// FP32 value plus an exact wide term; the second half is fp4sim_fp32_add_round): both operands are
// unpacked and normalized into a W-bit significand frame (W = max(TermW, 24)), ordered by
// magnitude (big >= small, so the difference is never negative), and the alignment distance is
// computed. The split is where a pipeline register can sit: two leading-zero counts and two
// normalizing shifters here, alignment / add / normalize / round there.
module fp4sim_fp32_add_prep #(
  parameter int unsigned TermW = 24,  // bits of t_mag_i
  parameter int unsigned ExpW  = 12   // width of the signed t_exp_i
) (
  input  logic [31:0]                             c_i,
  input  logic                                    t_neg_i,  // sign of the term, also when t_mag_i == 0
  input  logic [TermW-1:0]                        t_mag_i,
  input  logic [ExpW-1:0]                         t_exp_i,  // signed exponent of t_mag_i's LSB
  output logic [((TermW > 24) ? TermW : 24)-1:0]  big_o,    // normalized: leading one at the top
  output logic [((TermW > 24) ? TermW : 24)-1:0]  sml_o,
  output logic [13:0]                             big_lead_o,  // signed exponent of big_o's top bit
  output logic [7:0]                              dist_o,   // alignment distance, saturated at W + 3
  output logic                                    big_neg_o,
  output logic                                    eff_sub_o,
  output logic                                    zero_o,   // c and the term are both zero
  output logic                                    zero_neg_o  // the sign of that zero sum: -0 + -0
);

  localparam int unsigned W  = TermW > 24 ? TermW : 24;  // significand frame
  localparam int unsigned AW = W + 3;                    // aligned: significand, guard, round, sticky
  localparam int unsigned EW = 14;                       // internal signed exponents

  logic                 c_neg, c_zero, t_zero;
  logic [23:0]          c_mag;
  logic signed [EW-1:0] c_lsb, c_lead, t_lead;
  logic [7:0]           c_lz, t_lz;
  logic [W-1:0]         c_norm, t_norm;

  assign c_neg  = c_i[31];
  assign c_mag  = {c_i[30:23] != 8'd0, c_i[22:0]};
  assign c_lsb  = (c_i[30:23] == 8'd0) ? EW'(-149) : EW'($signed({1'b0, c_i[30:23]})) - EW'(150);
  assign c_zero = (c_mag == 24'd0);
  assign t_zero = (t_mag_i == '0);

  fp4sim_lzc #(.Width(24))    u_lzc_c (.x_i(c_mag),   .lz_o(c_lz));
  fp4sim_lzc #(.Width(TermW)) u_lzc_t (.x_i(t_mag_i), .lz_o(t_lz));

  assign c_norm = W'(c_mag) << (c_lz + 8'(W - 24));
  assign t_norm = W'(t_mag_i) << (t_lz + 8'(W - TermW));
  assign c_lead = c_lsb + EW'(23) - EW'(c_lz);
  assign t_lead = EW'($signed(t_exp_i)) + EW'(TermW - 1) - EW'(t_lz);

  logic                 t_big;
  logic signed [EW-1:0] sml_lead;
  logic [EW-1:0]        ediff;

  assign t_big      = c_zero | (~t_zero & ((t_lead > c_lead) | ((t_lead == c_lead) & (t_norm >= c_norm))));
  assign big_o      = t_big ? t_norm : c_norm;
  assign sml_o      = t_big ? c_norm : t_norm;
  assign big_lead_o = t_big ? t_lead : c_lead;
  assign sml_lead   = t_big ? c_lead : t_lead;
  assign big_neg_o  = t_big ? t_neg_i : c_neg;
  assign eff_sub_o  = t_neg_i ^ c_neg;
  assign ediff      = EW'($signed(big_lead_o) - sml_lead);
  assign dist_o     = (ediff > EW'(AW)) ? 8'(AW) : ediff[7:0];
  assign zero_o     = c_zero & t_zero;
  assign zero_neg_o = c_neg & t_neg_i;

endmodule
