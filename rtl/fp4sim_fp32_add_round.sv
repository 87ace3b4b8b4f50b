// Second half of the single-path FP32 adder (first half: fp4sim_fp32_add_prep): the smaller
// operand is aligned with three extra bits (guard, round, sticky; bits shifted out are jammed into
// the sticky), added or subtracted, and the sum normalized and rounded to nearest-even at the FP32
// grid of its exponent (subnormals kept, overflow to +-Inf). With distance <= 1 the alignment is
// exact; with distance >= 2 at most one leading bit cancels, so the jammed sticky stays below the
// round bit. Zero signs follow IEEE addition under RN: (-0) + (-0) = -0, any other exact zero is +0.
module fp4sim_fp32_add_round #(
  parameter int unsigned W = 24  // significand frame of fp4sim_fp32_add_prep
) (
  input  logic [W-1:0]  big_i,
  input  logic [W-1:0]  sml_i,
  input  logic [13:0]   big_lead_i,  // signed
  input  logic [7:0]    dist_i,
  input  logic          big_neg_i,
  input  logic          eff_sub_i,
  input  logic          zero_i,
  input  logic          zero_neg_i,
  output logic [31:0]   d_o
);

  localparam int unsigned AW = W + 3;  // significand, guard, round, sticky
  localparam int unsigned SW = W + 4;  // sum with carry
  localparam int unsigned EW = 14;

  logic signed [EW-1:0] big_lead;
  logic [AW-1:0]        a_al, b_full, b_sh, b_lost;
  logic                 b_sticky;
  logic [SW-1:0]        sum;

  assign big_lead = $signed(big_lead_i);
  assign a_al     = {big_i, 3'b000};
  assign b_full   = {sml_i, 3'b000};
  assign b_sh     = b_full >> dist_i;
  assign b_lost   = b_full & ~({AW{1'b1}} << dist_i);
  assign b_sticky = |b_lost;
  assign sum      = eff_sub_i ? (SW'(a_al) - SW'({b_sh[AW-1:1], b_sh[0] | b_sticky}))
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
    if (zero_i) begin
      d_o = {zero_neg_i, 31'd0};
    end else if (sum == '0) begin
      d_o = 32'd0;  // exact cancellation: +0 under RN
    end else if (bits >= (EW+24)'(32'h7F80_0000)) begin
      d_o = {big_neg_i, 31'h7F80_0000};
    end else begin
      d_o = {big_neg_i, bits[30:0]};
    end
  end

endmodule
