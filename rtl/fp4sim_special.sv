// The special-value outcome of an instruction, shared by every unit: decided from the operands
// before the datapath result exists (golden and MMA-Sim form it from the operands first), carried
// down the pipeline as a fp4sim_dp_pkg::special_e, and applied to the datapath's FP32 result at the
// end by fp4sim_special_apply. The caller classifies its other operands: any NaN or invalid
// operation (Inf * 0) is nan_i; pinf_i / ninf_i say an infinite term of that sign enters the sum.
// C is classified here. Infinite terms of both signs are Inf - Inf: NaN. Combinational.
module fp4sim_special (
  input  logic [31:0] c_i,     // the FP32 addend (+0 where the unit has none)
  input  logic        nan_i,
  input  logic        pinf_i,
  input  logic        ninf_i,
  output logic [1:0]  special_o  // fp4sim_dp_pkg::special_e
);

  logic c_inf, nan, pinf, ninf;

  always_comb begin
    c_inf = (c_i[30:23] == 8'hFF) && (c_i[22:0] == 23'd0);
    nan   = nan_i || ((c_i[30:23] == 8'hFF) && (c_i[22:0] != 23'd0));
    pinf  = pinf_i || (c_inf && !c_i[31]);
    ninf  = ninf_i || (c_inf && c_i[31]);
    if (nan || (pinf && ninf)) begin
      special_o = fp4sim_dp_pkg::SpNan;
    end else if (pinf) begin
      special_o = fp4sim_dp_pkg::SpPosInf;
    end else if (ninf) begin
      special_o = fp4sim_dp_pkg::SpNegInf;
    end else begin
      special_o = fp4sim_dp_pkg::SpFinite;
    end
  end

endmodule
