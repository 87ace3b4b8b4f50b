// Decoder proofs (scripts/formal.sh): every RTL decoder the units use, read exactly as the unit
// reads it, against the reference decoder that rtl/formal/gen_decode_ref.cpp writes from golden's
// decode (decode_ref.sv in the formal output folder). Each check's ok_o must be 1 for every input
// (yosys sat). Fields the datapath does not read for a code (care mask 0) are not compared.

// bs_k32_front's element decoder, the module itself, for every format code and element code.
module chk_k32_dec (
  input  logic [2:0] fmt_i,
  input  logic [7:0] code_i,
  output logic       ok_o
);
  logic [12:0] dec, want, care;
  bs_k32_dec u_dut (
    .fmt_i  (fmt_i),
    .code_i (code_i),
    .dec_o  (dec)
  );
  ref_k32_dec u_ref (
    .fmt_i  (fmt_i),
    .code_i (code_i),
    .dec_o  (want),
    .care_o (care)
  );
  assign ok_o = ((dec ^ want) & care) == '0;
endmodule

// bs_k32_front's UE8M0 scale decoder (fp4sim_pkg::dec_ue8m0).
module chk_dec_ue8m0_fn (
  input  logic [7:0] code_i,
  output logic       ok_o
);
  logic [15:0] dec, want, care;
  assign dec = fp4sim_pkg::dec_ue8m0(code_i);
  ref_dec_ue8m0 u_ref (
    .code_i (code_i),
    .dec_o  (want),
    .care_o (care)
  );
  assign ok_o = ((dec ^ want) & care) == '0;
endmodule

// A generic table read as the units read it: DecUe8m0 (bs_k64_scale), DecUe4m3 with code[6:0]
// (bs_k64_scale, nvfp4_scale: bit 7 ignored), DecE6m2 (hif4_scale), and the element tables of the
// package (DecE4m3, DecE5m2: 8-bit codes; DecE2m3, DecE3m2: code[5:0]; DecE2m1: code[3:0]).
module chk_dec_table #(
  parameter int unsigned Fmt = 0  // 0 UE8M0, 1 UE4M3, 2 E6M2, 3 E4M3, 4 E5M2, 5 E2M3, 6 E3M2, 7 E2M1
) (
  input  logic [7:0] code_i,
  output logic       ok_o
);
  logic [15:0] dec, want, care;
  if (Fmt == 0) begin : g_ue8m0
    assign dec = fp4sim_pkg::DecUe8m0[{code_i, 4'd0} +: 16];
    ref_dec_ue8m0 u_ref (.code_i (code_i), .dec_o (want), .care_o (care));
  end else if (Fmt == 1) begin : g_ue4m3
    assign dec = fp4sim_pkg::DecUe4m3[{code_i[6:0], 4'd0} +: 16];
    ref_dec_ue4m3 u_ref (.code_i (code_i), .dec_o (want), .care_o (care));
  end else if (Fmt == 2) begin : g_e6m2
    assign dec = fp4sim_pkg::DecE6m2[{code_i, 4'd0} +: 16];
    ref_dec_e6m2 u_ref (.code_i (code_i), .dec_o (want), .care_o (care));
  end else if (Fmt == 3) begin : g_e4m3
    assign dec = fp4sim_pkg::DecE4m3[{code_i, 4'd0} +: 16];
    ref_dec_e4m3 u_ref (.code_i (code_i), .dec_o (want), .care_o (care));
  end else if (Fmt == 4) begin : g_e5m2
    assign dec = fp4sim_pkg::DecE5m2[{code_i, 4'd0} +: 16];
    ref_dec_e5m2 u_ref (.code_i (code_i), .dec_o (want), .care_o (care));
  end else if (Fmt == 5) begin : g_e2m3
    assign dec = fp4sim_pkg::DecE2m3[{code_i[5:0], 4'd0} +: 16];
    ref_dec_e2m3 u_ref (.code_i (code_i), .dec_o (want), .care_o (care));
  end else if (Fmt == 6) begin : g_e3m2
    assign dec = fp4sim_pkg::DecE3m2[{code_i[5:0], 4'd0} +: 16];
    ref_dec_e3m2 u_ref (.code_i (code_i), .dec_o (want), .care_o (care));
  end else begin : g_e2m1
    assign dec = fp4sim_pkg::DecE2m1[{code_i[3:0], 4'd0} +: 16];
    ref_dec_e2m1 u_ref (.code_i (code_i), .dec_o (want), .care_o (care));
  end
  assign ok_o = ((dec ^ want) & care) == '0;
endmodule

// fp4_dot16's E2M1 lane decode: 2|x| = sig2 << sh from E2m1SigSh[code[2:0]], sign code[3].
module chk_e2m1_sigsh (
  input  logic [3:0] code_i,
  output logic       ok_o
);
  logic [3:0] t;
  logic [5:0] mag, val, want;
  assign t    = fp4sim_pkg::E2m1SigSh[{code_i[2:0], 2'd0} +: 4];
  assign mag  = 6'(t[1:0]) << t[3:2];
  assign val  = code_i[3] ? -mag : mag;
  ref_e2m1_x2 u_ref (
    .code_i (code_i),
    .val_o  (want)
  );
  assign ok_o = val == want;
endmodule

// hif4_dot64's S1P2 lane decode: 4|x| from S1p2Mag[code[2:0]] (3 of 4 bits), sign code[3].
module chk_s1p2_mag (
  input  logic [3:0] code_i,
  output logic       ok_o
);
  logic [5:0] mag, val, want;
  assign mag  = 6'(fp4sim_pkg::S1p2Mag[{code_i[2:0], 2'd0} +: 3]);
  assign val  = code_i[3] ? -mag : mag;
  ref_s1p2_x4 u_ref (
    .code_i (code_i),
    .val_o  (want)
  );
  assign ok_o = val == want;
endmodule
