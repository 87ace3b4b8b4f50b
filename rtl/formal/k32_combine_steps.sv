// bs_k32_combine lane by lane (scripts/formal.sh, proofs k32_combine_*): the module as C's term, 32
// lane steps and its conversion, each step proven to add golden's truncated term. Like
// nvfp4_scale_steps.sv: the step modules hold bs_k32_combine's loop body with the same expressions
// in the same order, so (chain) proves the module equal to them by merging the flattened netlists,
// and (step), (cterm) prove each piece against golden's shift_trunc for every input.

// One lane of bs_k32_combine's sum: total + the lane's aligned term in two's complement.
module k32_combine_step (
  input  logic [38:0] total_i,
  input  logic [7:0]  p_mag_i,
  input  logic        p_neg_i,
  input  logic [5:0]  p_sh_i,
  output logic [38:0] total_o
);
  logic [30:0] x_mag;
  always_comb begin
    x_mag   = {p_mag_i, 23'd0} >> p_sh_i;
    total_o = total_i + (39'(x_mag) ^ {39{p_neg_i}}) + 39'(p_neg_i);
  end
endmodule

// bs_k32_combine rebuilt from C's term, 32 steps and the same conversion and special outcome.
module k32_combine_chain (
  input  logic [32*8-1:0] p_mag_i,
  input  logic [31:0]     p_neg_i,
  input  logic [32*6-1:0] p_sh_i,
  input  logic [23:0]     c_mag_i,
  input  logic            c_neg_i,
  input  logic [5:0]      c_sh_i,
  input  logic [11:0]     max_e_i,
  input  logic [1:0]      special_i,
  output logic [31:0]     d_o
);
  logic [25:0]        xc_mag;
  logic [33*39-1:0]   tot;
  logic signed [38:0] total;
  logic               t_neg;
  logic [37:0]        t_mag;
  logic [31:0]        d_fin;
  always_comb begin
    xc_mag       = {c_mag_i, 2'b00} >> c_sh_i;
    tot[0 +: 39] = (39'(xc_mag) ^ {39{c_neg_i}}) + 39'(c_neg_i);
  end
  for (genvar k = 0; k < 32; k++) begin : g_step
    k32_combine_step u_step (.total_i(tot[k*39 +: 39]), .p_mag_i(p_mag_i[k*8 +: 8]),
      .p_neg_i(p_neg_i[k]), .p_sh_i(p_sh_i[k*6 +: 6]), .total_o(tot[(k+1)*39 +: 39]));
  end
  always_comb begin
    total = tot[32*39 +: 39];
    t_neg = total[38];
    t_mag = t_neg ? 38'(-total) : 38'(total);
  end
  fp4sim_fix_to_fp32_rz #(.MagW(38), .Frac(25), .ExpW(12)) u_rz (.neg_i(t_neg), .mag_i(t_mag),
    .max_e_i(max_e_i), .d_o(d_fin));
  fp4sim_special_apply u_apply (.special_i(special_i), .d_i(d_fin), .d_o(d_o));
endmodule

// (chain) bs_k32_combine == k32_combine_chain, every input.
module chk_k32_combine_chain (
  input  logic [32*8-1:0] p_mag_i,
  input  logic [31:0]     p_neg_i,
  input  logic [32*6-1:0] p_sh_i,
  input  logic [23:0]     c_mag_i,
  input  logic            c_neg_i,
  input  logic [5:0]      c_sh_i,
  input  logic [11:0]     max_e_i,
  input  logic [1:0]      special_i,
  output logic            ok_o
);
  logic [31:0] d_dut, d_chain;
  bs_k32_combine u_dut (.p_mag_i, .p_neg_i, .p_sh_i, .c_mag_i, .c_neg_i, .c_sh_i, .max_e_i,
    .special_i, .d_o(d_dut));
  k32_combine_chain u_chain (.p_mag_i, .p_neg_i, .p_sh_i, .c_mag_i, .c_neg_i, .c_sh_i, .max_e_i,
    .special_i, .d_o(d_chain));
  assign ok_o = (d_dut == d_chain);
endmodule

// (step) every running total, lane product, sign and distance: the step adds golden's
// shift_trunc((-1)^neg * p_mag, 23 - p_sh) mod 2^39, and that term is below 2^31 in magnitude.
module chk_k32_combine_step (
  input  logic [38:0] total_i,
  input  logic [7:0]  p_mag_i,
  input  logic        p_neg_i,
  input  logic [5:0]  p_sh_i,
  output logic        ok_o
);
  logic [38:0]        tot;
  logic signed [63:0] v, t;
  k32_combine_step u_dut (.total_i, .p_mag_i, .p_neg_i, .p_sh_i, .total_o(tot));
  always_comb begin
    v    = $signed({56'd0, p_mag_i});
    if (p_neg_i) v = -v;
    t    = ref_golden_pkg::shift_trunc(v, 23 - $signed({26'd0, p_sh_i}));
    ok_o = (tot == 39'(total_i + 39'(t))) && (t < 64'sh8000_0000) && (t > -64'sh8000_0000);
  end
endmodule

// (cterm) C's term: shift_trunc((-1)^c_neg * c_mag, 2 - c_sh) as bs_k32_combine forms it, below
// 2^26 in magnitude.
module chk_k32_combine_cterm (
  input  logic [23:0] c_mag_i,
  input  logic        c_neg_i,
  input  logic [5:0]  c_sh_i,
  output logic        ok_o
);
  logic [25:0]        xc_mag;
  logic [38:0]        tot;
  logic signed [63:0] v, t;
  always_comb begin
    // bs_k32_combine's first two lines (the chain proof ties them to the module)
    xc_mag = {c_mag_i, 2'b00} >> c_sh_i;
    tot    = (39'(xc_mag) ^ {39{c_neg_i}}) + 39'(c_neg_i);
    v      = $signed({40'd0, c_mag_i});
    if (c_neg_i) v = -v;
    t      = ref_golden_pkg::shift_trunc(v, 2 - $signed({26'd0, c_sh_i}));
    ok_o   = (tot == 39'(t)) && (t < 64'sh400_0000) && (t > -64'sh400_0000);
  end
endmodule
