// bs_k64_scale's group term: the exact group value N = sum * mA * mB (sum = the group's 16
// products (2a)(2b), mA / mB the scales' integer significands) put on the instruction's grid: shifted
// left by Lsh when the group holds the largest exponent, sh_i places right of that otherwise,
// truncating toward zero, in ones' complement when negative (the caller adds the +1).
// Combinational; scripts/formal.sh proves it equal to golden's shift_trunc (proof k64_term_*).
module bs_k64_term #(
  parameter int unsigned Lsh = 27,  // Frac - Off: 35 - 8 (UE4M3) or 35 - 2 (UE8M0)
  parameter int unsigned TW  = 50   // the width of the five-term sum
) (
  input  logic [12:0]   sum_i,    // signed, |sum| <= 2304 (fp4_dot16)
  input  logic [3:0]    sig_a_i,
  input  logic [3:0]    sig_b_i,
  input  logic [5:0]    sh_i,     // max_e - e_g, 63 for 63 or more (every bit shifted out)
  output logic [TW-1:0] t_o
);

  localparam int unsigned NW = 20;        // |N| <= 2304 * 15 * 15 < 2^20
  localparam int unsigned XW = NW + Lsh;  // < 63: a shift by 63 clears every bit

  logic [11:0]   s_mag;
  logic [7:0]    sprod;
  logic [NW-1:0] n_mag;

  always_comb begin
    s_mag = sum_i[12] ? 12'(-sum_i) : sum_i[11:0];
    sprod = 8'(sig_a_i) * 8'(sig_b_i);
    n_mag = NW'(s_mag) * NW'(sprod);
    t_o   = TW'(XW'({n_mag, {Lsh{1'b0}}} >> sh_i)) ^ {TW{sum_i[12]}};
  end

endmodule
