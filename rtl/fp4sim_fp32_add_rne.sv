// d = RN-even( c + (-1)^t_neg * t_mag * 2^t_exp ): a finite FP32 value plus an exact wide term,
// rounded once to FP32 (subnormals kept, overflow to +-Inf). The caller handles NaN / Inf in c.
// Zero signs follow IEEE addition under RN: (-0) + (-0) = -0, any other exact zero sum is +0.
//
// Single-path adder: both operands are normalized into a W-bit significand frame (W >= 24), the
// smaller one is aligned with three extra bits (guard, round, sticky), added or subtracted, the sum
// is normalized and rounded at the FP32 grid of its exponent. With d <= 1 the alignment is exact;
// with d >= 2 at most one leading bit cancels, so the jammed sticky bit stays below the round bit.
module fp4sim_fp32_add_rne #(
  parameter int unsigned TermW = 24,  // bits of t_mag_i
  parameter int unsigned ExpW  = 12   // width of the signed t_exp_i
) (
  input  logic [31:0]            c_i,
  input  logic                   t_neg_i,  // sign of the term, also when t_mag_i == 0
  input  logic [TermW-1:0]       t_mag_i,
  input  logic [ExpW-1:0]        t_exp_i,  // signed exponent of t_mag_i's least significant bit
  output logic [31:0]            d_o
);

  localparam int unsigned W  = TermW > 24 ? TermW : 24;  // significand frame
  localparam int unsigned AW = W + 3;                    // aligned: significand, guard, round, sticky
  localparam int unsigned SW = W + 4;                    // sum with carry
  localparam int unsigned EW = 14;                       // internal signed exponents

  // ---- unpack and normalize both operands (leading one at bit W-1)
  logic                 c_neg, c_zero, t_zero;
  logic [23:0]          c_mag;
  logic signed [EW-1:0] c_lsb, c_lead, t_lead;
  logic [7:0]           c_lz, t_lz;
  logic [W-1:0]         c_norm, t_norm;

  assign c_neg  = c_i[31];
  assign c_mag  = {c_i[30:23] != 8'd0, c_i[22:0]};
  assign c_lsb  = (c_i[30:23] == 8'd0) ? EW'(-149) : EW'($signed({1'b0, c_i[30:23]})) - EW'(150);
  assign c_zero = (c_mag == 24'd0);
  assign t_zero = (t_mag_i == '0);

  fp4sim_lzc #(.Width(24))    u_lzc_c (.x_i(c_mag),   .lz_o(c_lz));
  fp4sim_lzc #(.Width(TermW)) u_lzc_t (.x_i(t_mag_i), .lz_o(t_lz));

  assign c_norm = W'(c_mag) << (c_lz + 8'(W - 24));
  assign t_norm = W'(t_mag_i) << (t_lz + 8'(W - TermW));
  assign c_lead = c_lsb + EW'(23) - EW'(c_lz);
  assign t_lead = EW'($signed(t_exp_i)) + EW'(TermW - 1) - EW'(t_lz);

  // ---- order by magnitude: big >= small, so the difference is never negative
  logic                 t_big;
  logic [W-1:0]         big_norm, sml_norm;
  logic signed [EW-1:0] big_lead, sml_lead;
  logic                 big_neg, eff_sub;

  assign t_big    = c_zero | (~t_zero & ((t_lead > c_lead) | ((t_lead == c_lead) & (t_norm >= c_norm))));
  assign big_norm = t_big ? t_norm : c_norm;
  assign sml_norm = t_big ? c_norm : t_norm;
  assign big_lead = t_big ? t_lead : c_lead;
  assign sml_lead = t_big ? c_lead : t_lead;
  assign big_neg  = t_big ? t_neg_i : c_neg;
  assign eff_sub  = t_neg_i ^ c_neg;

  // ---- align the small operand; bits shifted out are jammed into bit 0
  logic [EW-1:0] ediff;
  logic [7:0]    dsat;
  logic [AW-1:0] a_al, b_full, b_sh, b_lost;
  logic          b_sticky;
  logic [SW-1:0] sum;

  assign ediff    = EW'(big_lead - sml_lead);
  assign dsat     = (ediff > EW'(AW)) ? 8'(AW) : ediff[7:0];
  assign a_al     = {big_norm, 3'b000};
  assign b_full   = {sml_norm, 3'b000};
  assign b_sh     = b_full >> dsat;
  assign b_lost   = b_full & ~({AW{1'b1}} << dsat);
  assign b_sticky = |b_lost;
  assign sum      = eff_sub ? (SW'(a_al) - SW'({b_sh[AW-1:1], b_sh[0] | b_sticky}))
                            : (SW'(a_al) + SW'({b_sh[AW-1:1], b_sh[0] | b_sticky}));

  // ---- normalize and round to the FP32 grid of the result's exponent
  logic [7:0]           s_lead;  // index of the leading one of sum
  logic signed [EW-1:0] e_lead, e_res, j_lsb;
  logic [7:0]           rsh, lsh;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [SW:0]          sum_x;     // only bit 0 is read
  logic [SW-1:0]        m_r;       // only the low 25 bits are read
  /* verilator lint_on UNUSEDSIGNAL */
  logic [SW-1:0]        lostmask;
  logic [24:0]          m_pre, m_rnd;
  logic                 rbit, sticky, inc;
  logic [EW-1:0]        e_bias;
  logic [EW+23:0]       bits;  // bits 30:0 are the result, higher bits flag overflow

  logic [7:0] s_lz;
  fp4sim_lzc #(.Width(SW)) u_lzc_s (.x_i(sum), .lz_o(s_lz));
  assign s_lead = 8'(SW - 1) - s_lz;  // only used when sum != 0

  // Bit j of sum has exponent big_lead + j - (W + 2).
  assign e_lead = big_lead + EW'(s_lead) - EW'(W + 2);
  assign e_res  = (e_lead < EW'(-126)) ? EW'(-126) : e_lead;  // subnormals share exponent -126
  assign j_lsb  = e_res - EW'(23) - big_lead + EW'(W + 2);       // index of the result's last place
  assign rsh    = (j_lsb <= 0) ? 8'd0 : ((j_lsb > EW'(SW + 1)) ? 8'(SW + 1) : j_lsb[7:0]);
  assign lsh    = (j_lsb < 0) ? 8'(-j_lsb) : 8'd0;
  assign m_r    = sum >> rsh;
  assign sum_x  = {sum, 1'b0} >> rsh;  // bit 0 = the round bit sum[rsh-1]
  assign rbit   = (rsh != 8'd0) & sum_x[0];
  assign lostmask = (rsh > 8'd1) ? ~({SW{1'b1}} << (rsh - 8'd1)) : '0;
  assign sticky = |(sum & lostmask);
  assign m_pre  = (lsh != 8'd0) ? 25'(sum << lsh) : 25'(m_r);
  assign inc    = rbit & (sticky | m_pre[0]);
  assign m_rnd  = m_pre + 25'(inc);
  // Biased exponent - 1 plus the significand: the hidden bit and a rounding carry add themselves in.
  assign e_bias = e_res + EW'(126);
  assign bits   = ({24'd0, e_bias} << 23) + (EW+24)'(m_rnd);

  always_comb begin
    if (c_zero && t_zero) begin
      d_o = {c_neg & t_neg_i, 31'd0};
    end else if (sum == '0) begin
      d_o = 32'd0;  // exact cancellation: +0 under RN
    end else if (bits >= (EW+24)'(32'h7F80_0000)) begin
      d_o = {big_neg, 31'h7F80_0000};
    end else begin
      d_o = {big_neg, bits[30:0]};
    end
  end

endmodule
