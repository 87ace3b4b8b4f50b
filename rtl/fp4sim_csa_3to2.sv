// A row of 3:2 counters (full adders without a carry chain): x + y + z = sum_o + carry_o mod 2^W,
// sum_o the bitwise parity, carry_o the bitwise majority one place up. Combinational;
// scripts/formal.sh proves the identity for the widths the units use (proof csa_3to2_*).
module fp4sim_csa_3to2 #(
  parameter int unsigned W = 50
) (
  input  logic [W-1:0] x_i,
  input  logic [W-1:0] y_i,
  input  logic [W-1:0] z_i,
  output logic [W-1:0] sum_o,
  output logic [W-1:0] carry_o
);

  assign sum_o   = x_i ^ y_i ^ z_i;
  assign carry_o = ((x_i & y_i) | (x_i & z_i) | (y_i & z_i)) << 1;

endmodule
