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
