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
  end

endmodule
