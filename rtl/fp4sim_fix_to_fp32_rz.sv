// Blackwell output conversion (MMA-Sim): the exact aligned sum, an integer in units of
// 2^(max_e - Frac), normalized and truncated toward zero to FP32 with subnormals kept.
// A zero result is +0 (also when every nonzero bit is truncated away: MMA-Sim's math.trunc
// returns an integer 0 without a sign); |result| >= 2^128 gives +-Inf.
module fp4sim_fix_to_fp32_rz #(
  parameter int unsigned MagW = 52,  // width of mag_i
  parameter int unsigned Frac = 35,  // fraction bits kept below 2^max_e
  parameter int unsigned ExpW = 12   // width of the signed max_e_i
) (
  input  logic                   neg_i,
  input  logic [MagW-1:0]        mag_i,
  input  logic [ExpW-1:0]        max_e_i,  // signed
  output logic [31:0]            d_o
);

  localparam int unsigned EW = 14;

  logic [7:0]           lead;  // index of the leading one
  logic signed [EW-1:0] e_lead, e_res, sh;
  logic [7:0]           rsh, lsh;
  logic [23:0]          m;
  logic [EW-1:0]        e_bias;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [EW+23:0]       bits;  // bits 30:0 are the result (overflow is decided from e_lead)
  /* verilator lint_on UNUSEDSIGNAL */

  logic [7:0] lz;
  fp4sim_lzc #(.Width(MagW)) u_lzc (.x_i(mag_i), .lz_o(lz));
  assign lead = 8'(MagW - 1) - lz;  // only used when mag_i != 0

  assign e_lead = EW'($signed(max_e_i)) + EW'(lead) - EW'(Frac);  // exponent of the leading one
  assign e_res  = (e_lead < EW'(-126)) ? EW'(-126) : e_lead;
  assign sh     = e_res - EW'($signed(max_e_i)) + EW'(Frac) - EW'(23);  // bits below the result's last place
  assign rsh    = (sh <= 0) ? 8'd0 : ((sh > EW'(MagW)) ? 8'(MagW) : sh[7:0]);
  assign lsh    = (sh < 0) ? 8'(-sh) : 8'd0;
  assign m      = (lsh != 8'd0) ? 24'(mag_i << lsh) : 24'(mag_i >> rsh);
  assign e_bias = e_res + EW'(126);
  assign bits   = ({24'd0, e_bias} << 23) + (EW+24)'(m);

  always_comb begin
    if (m == 24'd0) begin
      d_o = 32'd0;
    end else if (e_lead > EW'(127)) begin
      d_o = {neg_i, 31'h7F80_0000};
    end else begin
      d_o = {neg_i, bits[30:0]};
    end
  end

endmodule
