// An outside unit to check against fp4sim: a hand-written MXF8F6F4-style dot unit for E2M1
// elements, K = 32, one UE8M0 scale per operand (block 32), FP32 C in and D out, Blackwell numerics
// (SPEC section 4): the 32 products and C aligned to the largest exponent, each truncated to 25
// fractional bits below it, summed exactly, then truncated (RZ) to FP32. Combinational.
// PLANT_BUG = 1 is the variant the example must catch: C is aligned with one fractional bit less.
module dot32_e2m1 #(
    parameter bit PLANT_BUG = 1'b0
) (
    input  logic [127:0] a,   // element k = a[4k +: 4], E2M1 (sign, 2 exponent bits, 1 mantissa bit)
    input  logic [127:0] b,
    input  logic [7:0]   sa,  // UE8M0: 2^(sa - 127), 0xFF = NaN
    input  logic [7:0]   sb,
    input  logic [31:0]  c,
    output logic [31:0]  d
);

  // E2M1 as significand m (1 mantissa bit: value = m * 2^(e - 1)) and exponent e; a zero takes the
  // exponent -126, as MMA-Sim's decode gives it (it still takes part in the alignment).
  function automatic void e2m1(input logic [2:0] code, output int m, output int e);  // magnitude bits
    if (code == 3'd0) begin
      m = 0;
      e = -126;
    end else if (code[2:1] == 2'd0) begin
      m = 1;
      e = 0;
    end else begin
      m = 2 + int'(code[0]);
      e = int'(code[2:1]) - 1;
    end
  endfunction

  // trunc(v * 2^s) of a magnitude.
  function automatic logic [63:0] shift_mag(input logic [63:0] v, input int s);
    if (s >= 0) shift_mag = v << s;
    else if (s <= -64) shift_mag = 64'd0;
    else shift_mag = v >> (-s);
  endfunction

  function automatic logic [31:0] dot(input logic [127:0] av, input logic [127:0] bv,
                                      input logic [7:0] sav, input logic [7:0] sbv,
                                      input logic [31:0] cv);
    int ma[32], ea[32], mb[32], eb[32];
    int ec, es, max_e, lsb, ek, top, er, sh;
    logic [63:0] mag, t_mag, m;
    logic signed [63:0] t;
    logic neg;
    logic [31:0] bits;
    if (sav == 8'hFF || sbv == 8'hFF || (cv[30:23] == 8'hFF && cv[22:0] != 23'd0)) return 32'h7FFF_FFFF;
    if (cv[30:23] == 8'hFF) return cv;  // +-Inf C: no element is infinite, so D = C
    ec = (cv[30:23] == 8'd0) ? -126 : int'(cv[30:23]) - 127;
    es = int'(sav) + int'(sbv) - 254;
    max_e = ec;
    for (int k = 0; k < 32; k++) begin
      e2m1(av[4*k+:3], ma[k], ea[k]);
      e2m1(bv[4*k+:3], mb[k], eb[k]);
      ek = ea[k] + eb[k] + es;
      if (ek > max_e) max_e = ek;
    end
    lsb = max_e - 25;
    // C = (hidden bit . 23 bits) * 2^(ec - 23), aligned to the grid 2^lsb.
    mag = {40'd0, cv[30:23] != 8'd0, cv[22:0]};
    if (PLANT_BUG) t_mag = shift_mag(mag, ec - 23 - lsb - 1) << 1;
    else t_mag = shift_mag(mag, ec - 23 - lsb);
    t = cv[31] ? -$signed(t_mag) : $signed(t_mag);
    for (int k = 0; k < 32; k++) begin
      // product (ma * mb) * 2^(ea + eb + es - 2); |t| stays below 2^35
      t_mag = shift_mag(64'(ma[k] * mb[k]), ea[k] + eb[k] + es - 2 - lsb);
      t = (av[4*k+3] ^ bv[4*k+3]) ? t - $signed(t_mag) : t + $signed(t_mag);
    end
    if (t == 0) return 32'd0;  // an exact zero is +0
    neg = t < 0;
    mag = neg ? 64'(-t) : 64'(t);
    top = 0;
    for (int i = 0; i < 64; i++) if (mag[i]) top = i;
    er = top + lsb;  // exponent of the leading bit
    if (er >= 128) return {neg, 8'hFF, 23'd0};
    if (er < -126) er = -126;  // subnormal: the smallest normal's exponent, no hidden bit
    sh = er - 23 - lsb;
    m = shift_mag(mag, -sh);  // toward zero
    if (m == 64'd0) return 32'd0;
    bits = 32'(er + 126) << 23;
    bits = bits + m[31:0];  // the hidden bit adds the 1 that er + 126 lacks
    return {neg, bits[30:0]};
  endfunction

  always_comb d = dot(a, b, sa, sb, c);

endmodule
