// Leading-zero count by binary search: stage s tests whether the top 2^(Steps-1-s) bits are zero
// and, if so, shifts them out. Steps = clog2(Width) compare-and-shift stages (a log-depth priority
// encoder) instead of a Width-long priority chain; Verilator runs it without data-dependent loops.
// lz_o = Width for x_i == 0.
module fp4sim_lzc #(
  parameter int unsigned Width = 32  // >= 2
) (
  input  logic [Width-1:0] x_i,
  output logic [7:0]       lz_o
);

  localparam int unsigned Steps = $clog2(Width);

  // v[s] = x_i shifted left by the counts found in stages < s (split for Verilator: the stages
  // read each other's slices, which is not a combinational loop).
  /* verilator lint_off UNUSEDSIGNAL */
  logic [Steps*Width-1:0] v /* verilator split_var */;  // the last stage reads only its top bit
  /* verilator lint_on UNUSEDSIGNAL */
  logic [Steps-1:0]       cnt /* verilator split_var */;

  assign v[Width-1:0] = x_i;

  for (genvar s = 0; s < Steps; s++) begin : g_step
    localparam int unsigned Sh = 1 << (Steps - 1 - s);
    assign cnt[Steps-1-s] = (v[s*Width + Width - 1 -: Sh] == '0);
    if (s + 1 < Steps) begin : g_shift
      assign v[(s+1)*Width +: Width] = cnt[Steps-1-s] ? (v[s*Width +: Width] << Sh) : v[s*Width +: Width];
    end
  end

  assign lz_o = (x_i == '0) ? 8'(Width) : 8'(cnt);

endmodule
