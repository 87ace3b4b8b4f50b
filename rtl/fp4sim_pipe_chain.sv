// Depth valid/ready pipeline stages in series (Depth >= 1): the output end of every unit, where the
// stages beyond the datapath's natural cut points add latency that synthesis may retime.
module fp4sim_pipe_chain #(
  parameter int unsigned Width = 1,
  parameter int unsigned Depth = 1
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             valid_i,
  output logic             ready_o,
  input  logic [Width-1:0] data_i,
  output logic             valid_o,
  input  logic             ready_i,
  output logic [Width-1:0] data_o
);

  // Node n sits in front of stage n; node Depth is the output.
  logic [Depth:0]           valid;
  logic [Depth:0]           ready;
  logic [(Depth+1)*Width-1:0] data;

  assign valid[0]          = valid_i;
  assign ready_o           = ready[0];
  assign data[0 +: Width]  = data_i;
  assign valid_o           = valid[Depth];
  assign ready[Depth]      = ready_i;
  assign data_o            = data[Depth*Width +: Width];

`ifdef FORMAL
  // Properties of the pipeline shell (scripts/formal.sh proves them by k-induction with
  // yosys-smtbmc). The formal top numbers the transactions in arrival order (the assumption on
  // data_i); f_cnt[n] counts the transfers across node n. Then each stage holds at most one
  // transaction, is valid exactly when it holds one, and holds the oldest not yet passed on: so
  // nothing is lost or duplicated, order is kept, and the chain holds at most Depth.
  logic [Width-1:0] f_cnt [Depth+1];
  for (genvar n = 0; n <= Depth; n++) begin : g_fcnt
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) f_cnt[n] <= '0;
      else if (valid[n] && ready[n]) f_cnt[n] <= f_cnt[n] + 1'b1;
    end
  end
  always_comb begin
    if (rst_ni) begin
      assume (!valid_i || data_i == f_cnt[0]);
      for (int s = 0; s < Depth; s++) begin
        assert (Width'(f_cnt[s] - f_cnt[s+1]) <= 1);
        assert (valid[s+1] == (f_cnt[s] != f_cnt[s+1]));
        if (valid[s+1]) assert (data[(s+1)*Width +: Width] == f_cnt[s+1]);
      end
    end
  end
  // Under back-pressure the output holds: valid and data stay until taken.
  logic             f_past, f_stalled;
  logic [Width-1:0] f_data;
  initial f_past = 1'b0;
  always_ff @(posedge clk_i) begin
    f_past    <= rst_ni;
    f_stalled <= valid_o && !ready_i;
    f_data    <= data_o;
  end
  always_comb begin
    if (f_past && rst_ni && f_stalled) begin
      assert (valid_o);
      assert (data_o == f_data);
    end
  end
`endif

`ifdef FP4SIM_SVA
  // Simulation scoreboard (Verilated build with --assert and +define+FP4SIM_SVA; yosys never sees
  // it): a shadow FIFO of every transfer in. The chain may hold at most Depth, and what comes out
  // must be the oldest transfer not yet out: no loss, no duplicate, order kept, also across the
  // stages' wiring, which the per-stage checks in fp4sim_pipe_reg do not see.
  logic [Depth*Width-1:0] sva_q;  // entry i in bits i*Width +: Width, the oldest at 0
  int unsigned            sva_occ;
  logic                   sva_push, sva_pop;
  assign sva_push = valid_i && ready_o;
  assign sva_pop  = valid_o && ready_i;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      sva_occ <= 0;
    end else begin
      if (sva_pop) begin
        sva_q <= sva_q >> Width;
      end
      // Written after the shift, so it wins where both write the same entry.
      if (sva_push && sva_occ - 32'(sva_pop) < Depth) begin
        sva_q[(sva_occ - 32'(sva_pop))*Width +: Width] <= data_i;
      end
      sva_occ <= sva_occ + 32'(sva_push) - 32'(sva_pop);
    end
  end
  // rst_ni is both the async reset and the checks' disable (see fp4sim_pipe_reg).
  /* verilator lint_off SYNCASYNCNET */
  a_occupancy: assert property (@(posedge clk_i) disable iff (!rst_ni) sva_occ <= Depth);
  a_in_order: assert property (@(posedge clk_i) disable iff (!rst_ni)
      valid_o |-> sva_occ != 0 && data_o == sva_q[0 +: Width]);
  /* verilator lint_on SYNCASYNCNET */
`endif

  for (genvar s = 0; s < Depth; s++) begin : g_stage
    fp4sim_pipe_reg #(
      .Width (Width)
    ) u_reg (
      .clk_i   (clk_i),
      .rst_ni  (rst_ni),
      .valid_i (valid[s]),
      .ready_o (ready[s]),
      .data_i  (data[s*Width +: Width]),
      .valid_o (valid[s+1]),
      .ready_i (ready[s+1]),
      .data_o  (data[(s+1)*Width +: Width])
    );
  end

endmodule
