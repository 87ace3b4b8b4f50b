// Blackwell K=64 FP4 slice, scale application and alignment (MMA-Sim
// nv_fused_dot_add_with_block_scale, first half; the second is bs_k64_sum): applies the block scales
// to the four exact group sums as integers N_g with exponents, finds the largest exponent among
// them and C, shifts each term and C to the grid 2^(max_e - 35), truncating toward zero, and
// compresses the five signed terms to two in carry-save form (three levels of 3:2 counters, no
// carry chain): the register after this block holds sum + carry, bs_k64_sum adds them.
// Combinational.
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
  input  logic [31:0]           c_i,
  // The exact sum of the five aligned terms (TW = 20 + 35 - Off + 3 bits, two's complement, Off:
  // see below) as sum_o + carry_o mod 2^TW.
  output logic [(58-((ScaleFmt == 0) ? 8 : 2))-1:0] sum_o,
  output logic [(58-((ScaleFmt == 0) ? 8 : 2))-1:0] carry_o,
  output logic [11:0]           max_e_o,  // signed
  output logic                  nan_o
);

  localparam int unsigned NumSc = 64 / Block;
  localparam int unsigned Frac  = 35;
  // Group term = N * 2^(eA + eB - Off) with N = sum * mA * mB (mA, mB integer significands).
  localparam int unsigned Off   = (ScaleFmt == 0) ? 8 : 2;  // 2 + 2 * mbits(scale)
  localparam int unsigned Lsh   = Frac - Off;               // N's shift when e_g == max_e
  localparam int unsigned NW    = 20;                       // |N| <= 2304 * 15 * 15 < 2^20
  localparam int unsigned XW    = NW + Lsh;                 // aligned group term
  localparam int unsigned CW    = 24 + Frac - 23;           // aligned C (C's LSB is 2^(ec-23))
  localparam int unsigned TW    = XW + 3;                   // signed sum of four terms and C
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

  // ---- group terms: integer N_g and exponent e_g, then the largest exponent
  logic [4*EW-1:0]      g_e;
  logic [4*NW-1:0]      n_mag;
  logic [11:0]          s_mag;
  logic [7:0]           sprod;
  logic [5:0]           sh;
  logic signed [EW-1:0] max_e;
  logic [3:0]           n_neg;
  logic [5*TW-1:0]      t;     // the five terms in two's complement, less their +1 carry-ins
  logic [2:0]           ncnt;  // the carry-ins: how many terms are negative
  logic [TW-1:0]        s1, c1, s2, c2, s3, c3;

  always_comb begin
    for (int g = 0; g < 4; g++) begin
      // One block-32 scale serves two groups.
      n_neg[g]             = sum_i[g*13+12];
      s_mag                = sum_i[g*13+12] ? 12'(-sum_i[g*13 +: 13]) : sum_i[g*13 +: 12];
      sprod                = 8'(sig_a[(g*16/Block)*4 +: 4]) * 8'(sig_b[(g*16/Block)*4 +: 4]);
      n_mag[g*NW +: NW]    = NW'(s_mag) * NW'(sprod);
      g_e[g*EW +: EW]      = exp_ab[(g*16/Block)*EW +: EW];
    end
    max_e = c_e;
    for (int g = 0; g < 4; g++) begin
      if ($signed(g_e[g*EW +: EW]) > max_e) max_e = $signed(g_e[g*EW +: EW]);
    end
    // Distances >= 63 shift every bit out (XW < 63). Negative terms are inverted here and their
    // +1 collected in ncnt, which enters the counter tree as a sixth operand.
    for (int g = 0; g < 4; g++) begin
      sh = (max_e - $signed(g_e[g*EW +: EW]) > EW'(62)) ? 6'd63 : 6'(max_e - $signed(g_e[g*EW +: EW]));
      t[g*TW +: TW] = TW'(XW'({n_mag[g*NW +: NW], {Lsh{1'b0}}} >> sh)) ^ {TW{n_neg[g]}};
    end
    sh            = (max_e - c_e > EW'(62)) ? 6'd63 : 6'(max_e - c_e);
    t[4*TW +: TW] = TW'(CW'({c_sig, {(Frac - 23){1'b0}}} >> sh)) ^ {TW{c_i[31]}};
    ncnt          = 3'(n_neg[0]) + 3'(n_neg[1]) + 3'(n_neg[2]) + 3'(n_neg[3]) + 3'(c_i[31]);
    // 3:2 counters: x + y + z = (x ^ y ^ z) + 2 * maj(x, y, z), all mod 2^TW.
    s1      = t[0*TW +: TW] ^ t[1*TW +: TW] ^ t[2*TW +: TW];
    c1      = ((t[0*TW +: TW] & t[1*TW +: TW]) | (t[0*TW +: TW] & t[2*TW +: TW]) |
               (t[1*TW +: TW] & t[2*TW +: TW])) << 1;
    s2      = t[3*TW +: TW] ^ t[4*TW +: TW] ^ TW'(ncnt);
    c2      = ((t[3*TW +: TW] & t[4*TW +: TW]) | (t[3*TW +: TW] & TW'(ncnt)) |
               (t[4*TW +: TW] & TW'(ncnt))) << 1;
    s3      = s1 ^ c1 ^ s2;
    c3      = ((s1 & c1) | (s1 & s2) | (c1 & s2)) << 1;
    sum_o   = s3 ^ c3 ^ c2;
    carry_o = ((s3 & c3) | (s3 & c2) | (c3 & c2)) << 1;
    max_e_o = max_e;
  end

endmodule
