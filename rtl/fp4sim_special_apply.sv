// Applies the special-value outcome (fp4sim_special) to the datapath's FP32 result: canonical NaN
// 0x7FFFFFFF (golden's and MMA-Sim's), +-Inf, or the result itself. Combinational.
module fp4sim_special_apply (
  input  logic [1:0]  special_i,  // fp4sim_dp_pkg::special_e
  input  logic [31:0] d_i,        // the datapath's result, used when finite
  output logic [31:0] d_o
);

  always_comb begin
    unique case (special_i)
      fp4sim_dp_pkg::SpNan:    d_o = 32'h7FFF_FFFF;
      fp4sim_dp_pkg::SpPosInf: d_o = 32'h7F80_0000;
      fp4sim_dp_pkg::SpNegInf: d_o = 32'hFF80_0000;
      default:                 d_o = d_i;
    endcase
  end

endmodule
