// sum_o = a_i + b_i mod 2^Width as a Kogge-Stone parallel-prefix adder: log2(Width) levels of
// generate / propagate combining instead of a ripple carry. yosys maps `+` to a ripple chain that
// abc does not restructure; where a wide carry-propagate add sits on a pipeline stage's critical
// path (bs_k64_sum), the prefix form is what a designer would draw.
module fp4sim_prefix_add #(
  parameter int unsigned Width = 32
) (
  input  logic [Width-1:0] a_i,
  input  logic [Width-1:0] b_i,
  output logic [Width-1:0] sum_o
);

  localparam int unsigned Levels = $clog2(Width);

  // Level l holds, for each bit i, generate / propagate of the bit group (i - 2^l, i].
  logic [(Levels+1)*Width-1:0] g /* verilator split_var */;
  logic [(Levels+1)*Width-1:0] p /* verilator split_var */;

  assign g[Width-1:0] = a_i & b_i;
  assign p[Width-1:0] = a_i ^ b_i;

  for (genvar l = 0; l < Levels; l++) begin : g_level
    localparam int unsigned D = 1 << l;
    for (genvar i = 0; i < Width; i++) begin : g_bit
      if (i >= D) begin : g_comb
        assign g[(l+1)*Width + i] = g[l*Width + i] | (p[l*Width + i] & g[l*Width + i - D]);
        assign p[(l+1)*Width + i] = p[l*Width + i] & p[l*Width + i - D];
      end else begin : g_pass
        assign g[(l+1)*Width + i] = g[l*Width + i];
        assign p[(l+1)*Width + i] = p[l*Width + i];
      end
    end
  end

  // The carry into bit i is the generate of bits (i-1 .. 0).
  assign sum_o = p[Width-1:0] ^ {g[Levels*Width +: Width-1], 1'b0};

endmodule
