// bs_k64_scale's front: decodes the block scales, forms each group's exponent exp(sA) + exp(sB)
// (counted even when every product of the group is zero: a zero UE4M3 scale counts as -126), finds
// the largest exponent among them and C's, and gives each group term its alignment distance and
// scale significands (for bs_k64_term) and C its term on the grid 2^(max_e - 35), truncated toward
// zero, in ones' complement when negative. NaN in any scale sets nan_o. Combinational;
// scripts/formal.sh proves it against golden bw_grouped_step (proof k64_align_*).
module bs_k64_align #(
  parameter int unsigned ScaleFmt = 0,   // 0: UE4M3 (sign bit ignored), 1: UE8M0
  parameter int unsigned Block    = 16   // elements per scale: 16 or 32
) (
  input  logic [3:0]            neg_i,    // the four group sums' signs
  input  logic [64/Block*8-1:0] sfa_i,
  input  logic [64/Block*8-1:0] sfb_i,
  input  logic [31:0]           c_i,      // finite (the caller routes NaN / Inf C around)
  output logic [4*4-1:0]        sig_a_o,  // per group: the scales' integer significands
  output logic [4*4-1:0]        sig_b_o,
  output logic [4*6-1:0]        sh_o,     // per group: max_e - e_g, 63 for 63 or more
  output logic [(58-((ScaleFmt == 0) ? 8 : 2))-1:0] t_c_o,
  output logic [2:0]            ncnt_o,   // negative terms among the four groups and C
  output logic [11:0]           max_e_o,  // signed
  output logic                  nan_o
);

  localparam int unsigned NumSc = 64 / Block;
  localparam int unsigned Frac  = 35;
  localparam int unsigned Off   = (ScaleFmt == 0) ? 8 : 2;  // 2 + 2 * mbits(scale)
  localparam int unsigned TW    = 58 - Off;
  localparam int unsigned CW    = 24 + Frac - 23;           // aligned C (C's LSB is 2^(ec-23))
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

  // ---- C
  logic signed [EW-1:0] c_e;
  logic [23:0]          c_sig;
  assign c_e   = (c_i[30:23] == 8'd0) ? EW'(-126) : EW'($signed({1'b0, c_i[30:23]})) - EW'(127);
  assign c_sig = {c_i[30:23] != 8'd0, c_i[22:0]};

  // ---- the largest exponent, then each term's distance from it (one block-32 scale serves two
  // groups). Distances >= 63 shift every bit out (every term is narrower than 63 bits).
  logic [4*EW-1:0]      g_e;
  logic signed [EW-1:0] max_e;
  logic [5:0]           shc;

  always_comb begin
    for (int g = 0; g < 4; g++) begin
      g_e[g*EW +: EW]  = exp_ab[(g*16/Block)*EW +: EW];
      sig_a_o[g*4 +: 4] = sig_a[(g*16/Block)*4 +: 4];
      sig_b_o[g*4 +: 4] = sig_b[(g*16/Block)*4 +: 4];
    end
    max_e = c_e;
    for (int g = 0; g < 4; g++) begin
      if ($signed(g_e[g*EW +: EW]) > max_e) max_e = $signed(g_e[g*EW +: EW]);
    end
    for (int g = 0; g < 4; g++) begin
      sh_o[g*6 +: 6] = (max_e - $signed(g_e[g*EW +: EW]) > EW'(62)) ? 6'd63
                                                                     : 6'(max_e - $signed(g_e[g*EW +: EW]));
    end
    shc     = (max_e - c_e > EW'(62)) ? 6'd63 : 6'(max_e - c_e);
    t_c_o   = TW'(CW'({c_sig, {(Frac - 23){1'b0}}} >> shc)) ^ {TW{c_i[31]}};
    ncnt_o  = 3'(neg_i[0]) + 3'(neg_i[1]) + 3'(neg_i[2]) + 3'(neg_i[3]) + 3'(c_i[31]);
    max_e_o = max_e;
  end

endmodule
