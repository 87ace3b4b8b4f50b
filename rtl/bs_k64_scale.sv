// Blackwell K=64 FP4 slice, scale application (MMA-Sim nv_fused_dot_add_with_block_scale, first
// half; the second is bs_k64_sum): applies the block scales to the four exact group sums as
// integers N_g with exponents, finds the largest exponent among them and C, and each operand's
// alignment distance to it. Combinational.
//   group term g: s * sig(sA) * sig(sB) * 2^(exp(sA) + exp(sB)), s = sum_i[g] / 4; the exponent
//   counts even when every product of the group is zero (a zero UE4M3 scale counts as -126).
//   NaN in any scale sets nan_o.
module bs_k64_scale #(
  parameter int unsigned ScaleFmt = 0,   // 0: UE4M3 (sign bit ignored), 1: UE8M0
  parameter int unsigned Block    = 16   // elements per scale: 16 or 32
) (
  input  logic [4*13-1:0]       sum_i,  // four signed group sums of (2a)(2b)
  input  logic [64/Block*8-1:0] sfa_i,  // scale codes, scale j covers elements j*Block ..
  input  logic [64/Block*8-1:0] sfb_i,
  input  logic [7:0]            c_exp_i,  // C's biased exponent field
  output logic [4*20-1:0]       n_mag_o,  // |N_g| = |sum| * mA * mB <= 2304 * 15 * 15 < 2^20
  output logic [3:0]            n_neg_o,
  output logic [4*6-1:0]        g_sh_o,   // max_e - e_g, saturated at 63
  output logic [5:0]            c_sh_o,   // max_e - e_C, saturated at 63
  output logic [11:0]           max_e_o,  // signed
  output logic                  nan_o
);

  localparam int unsigned NumSc = 64 / Block;
  localparam int unsigned NW    = 20;
  localparam int unsigned EW    = 12;

  // ---- scale decode (lookup tables of fp4sim_pkg). One dec_t per loop step, fields kept in flat
  // vectors: yosys 0.23 mis-reads member selects on arrays of structs.
  /* verilator lint_off UNUSEDSIGNAL */
  fp4sim_pkg::dec_t      da, db;  // scales: only nan, exp and sig are read
  /* verilator lint_on UNUSEDSIGNAL */
  logic [NumSc*4-1:0]    sig_a, sig_b;
  logic [NumSc*EW-1:0]   exp_ab;  // exp(sA) + exp(sB)

  always_comb begin
    nan_o = 1'b0;
    for (int j = 0; j < NumSc; j++) begin
      if (ScaleFmt == 0) begin
        da = fp4sim_pkg::DecUe4m3[{sfa_i[j*8 +: 7], 4'd0} +: 16];
        db = fp4sim_pkg::DecUe4m3[{sfb_i[j*8 +: 7], 4'd0} +: 16];
      end else begin
        da = fp4sim_pkg::DecUe8m0[{sfa_i[j*8 +: 8], 4'd0} +: 16];
        db = fp4sim_pkg::DecUe8m0[{sfb_i[j*8 +: 8], 4'd0} +: 16];
      end
      nan_o               = nan_o | da.nan | db.nan;
      sig_a[j*4 +: 4]     = da.sig;
      sig_b[j*4 +: 4]     = db.sig;
      exp_ab[j*EW +: EW]  = EW'($signed(da.exp)) + EW'($signed(db.exp));
    end
  end

  // ---- C's exponent (its significand goes to the back end as it is)
  logic signed [EW-1:0] c_e;
  assign c_e = (c_exp_i == 8'd0) ? EW'(-126) : EW'($signed({1'b0, c_exp_i})) - EW'(127);

  // ---- group terms: integer N_g and exponent e_g, then the largest exponent
  logic [4*EW-1:0]      g_e;
  logic [11:0]          s_mag;
  logic [7:0]           sprod;
  logic signed [EW-1:0] max_e;

  always_comb begin
    for (int g = 0; g < 4; g++) begin
      // One block-32 scale serves two groups.
      n_neg_o[g]           = sum_i[g*13+12];
      s_mag                = sum_i[g*13+12] ? 12'(-sum_i[g*13 +: 13]) : sum_i[g*13 +: 12];
      sprod                = 8'(sig_a[(g*16/Block)*4 +: 4]) * 8'(sig_b[(g*16/Block)*4 +: 4]);
      n_mag_o[g*NW +: NW]  = NW'(s_mag) * NW'(sprod);
      g_e[g*EW +: EW]      = exp_ab[(g*16/Block)*EW +: EW];
    end
    max_e = c_e;
    for (int g = 0; g < 4; g++) begin
      if ($signed(g_e[g*EW +: EW]) > max_e) max_e = $signed(g_e[g*EW +: EW]);
    end
    // Distances >= 63 shift every bit out (the aligned terms are narrower than 63 bits).
    for (int g = 0; g < 4; g++) begin
      g_sh_o[g*6 +: 6] = (max_e - $signed(g_e[g*EW +: EW]) > EW'(62)) ? 6'd63
                                                                      : 6'(max_e - $signed(g_e[g*EW +: EW]));
    end
    c_sh_o  = (max_e - c_e > EW'(62)) ? 6'd63 : 6'(max_e - c_e);
    max_e_o = max_e;
  end

endmodule
