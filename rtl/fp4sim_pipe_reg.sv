// One valid/ready pipeline stage (a register slice without a skid buffer): ready propagates
// combinationally backwards, data and valid are registered. Bypass = 1 makes it wires, so a unit
// can place a register at a cut point only when its PipeDepth asks for one.
module fp4sim_pipe_reg #(
  parameter int unsigned Width  = 1,
  parameter bit          Bypass = 1'b0
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

  if (Bypass) begin : g_bypass
    // clk_i / rst_ni are unused here.
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused_clk;
    assign unused_clk = clk_i ^ rst_ni;
    /* verilator lint_on UNUSEDSIGNAL */
    assign valid_o = valid_i;
    assign ready_o = ready_i;
    assign data_o  = data_i;
  end else begin : g_reg
    logic             valid_q;
    logic [Width-1:0] data_q;

    // The stage accepts when it is empty or its content leaves this cycle.
    assign ready_o = ~valid_q | ready_i;

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        valid_q <= 1'b0;
      end else if (ready_o) begin
        valid_q <= valid_i;
      end
    end

    // Data needs no reset: it is only read while valid_q is set.
    always_ff @(posedge clk_i) begin
      if (valid_i && ready_o) begin
        data_q <= data_i;
      end
    end

    assign valid_o = valid_q;
    assign data_o  = data_q;

`ifdef FP4SIM_SVA
    // Handshake checks for simulation only: the Verilated build defines FP4SIM_SVA and runs with
    // --assert; yosys 0.23 (synthesis, -formal) cannot parse concurrent SVA and never sees them.
    // Together a_hold, a_take and a_empty pin down the stage's next state, so a stage that drops,
    // duplicates or overwrites a transaction fails one of them in the cycle it happens.
    // rst_ni is both the flops' async reset and the checks' disable: intended, not a sync/async mix.
    /* verilator lint_off SYNCASYNCNET */
    // Back-pressure: a stalled output keeps its valid and data until it is taken.
    a_hold: assert property (@(posedge clk_i) disable iff (!rst_ni)
        valid_o && !ready_i |=> valid_o && $stable(data_o));
    // A transfer in is what the stage holds next.
    a_take: assert property (@(posedge clk_i) disable iff (!rst_ni)
        valid_i && ready_o |=> valid_o && data_o == $past(data_i));
    // Nothing in while the stage is free (empty or emptying): empty next, nothing appears twice.
    a_empty: assert property (@(posedge clk_i) disable iff (!rst_ni)
        ready_o && !valid_i |=> !valid_o);
    // An empty stage never blocks the one before it.
    a_ready: assert property (@(posedge clk_i) disable iff (!rst_ni) !valid_o |-> ready_o);
    // No X on the handshake out of reset (two-state Verilator cannot fail this; four-state can).
    a_known: assert property (@(posedge clk_i) disable iff (!rst_ni) !$isunknown({valid_o, ready_o}));
    // Reset empties the stage. Not written `!rst_ni |=> ...`: Verilator keeps the antecedent of
    // |=> in a flop that starts random under --x-initial unique, which fails at the first edge.
    logic sva_rst_q = 1'b0;  // rst_ni was low at the last edge
    always_ff @(posedge clk_i) sva_rst_q <= !rst_ni;
    a_reset: assert property (@(posedge clk_i) sva_rst_q |-> !valid_o);
    /* verilator lint_on SYNCASYNCNET */
`endif
  end

endmodule
