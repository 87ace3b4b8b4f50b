// The pipeline shell every datapath unit shares: input register, front end, mid register, back end,
// output chain. The unit's own logic is two combinational blocks wired outside the shell:
//   in_data_i -> [u_in] -> fe_o -> (front end) -> fe_i -> [u_mid] -> be_o -> (back end) -> be_i
//     -> [u_out: PipeDepth - 2 stages, at least 1] -> out_data_o
// PipeDepth = latency in cycles: 1: output register only; 2: + mid register; 3: + input register;
// > 3: further output stages (which synthesis may retime). Each unit places its mid register where
// the front- and back-end delays balance (docs/area.md, "Stage delays").
module fp4sim_pe_shell #(
  parameter int unsigned InW       = 1,
  parameter int unsigned MidW      = 1,
  parameter int unsigned OutW      = 32,
  parameter int unsigned PipeDepth = 3
) (
  input  logic            clk_i,
  input  logic            rst_ni,
  input  logic            in_valid_i,
  output logic            in_ready_o,
  input  logic [InW-1:0]  in_data_i,
  output logic [InW-1:0]  fe_o,   // to the front end
  input  logic [MidW-1:0] fe_i,   // from the front end
  output logic [MidW-1:0] be_o,   // to the back end
  input  logic [OutW-1:0] be_i,   // from the back end
  output logic            out_valid_o,
  input  logic            out_ready_i,
  output logic [OutW-1:0] out_data_o
);

  logic s0_valid, s0_ready, s1_valid, s1_ready;

  fp4sim_pipe_reg #(
    .Width  (InW),
    .Bypass (PipeDepth < 3)
  ) u_in (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (in_valid_i),
    .ready_o (in_ready_o),
    .data_i  (in_data_i),
    .valid_o (s0_valid),
    .ready_i (s0_ready),
    .data_o  (fe_o)
  );

  fp4sim_pipe_reg #(
    .Width  (MidW),
    .Bypass (PipeDepth < 2)
  ) u_mid (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (s0_valid),
    .ready_o (s0_ready),
    .data_i  (fe_i),
    .valid_o (s1_valid),
    .ready_i (s1_ready),
    .data_o  (be_o)
  );

  fp4sim_pipe_chain #(
    .Width (OutW),
    .Depth ((PipeDepth >= 3) ? PipeDepth - 2 : 1)
  ) u_out (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (s1_valid),
    .ready_o (s1_ready),
    .data_i  (be_i),
    .valid_o (out_valid_o),
    .ready_i (out_ready_i),
    .data_o  (out_data_o)
  );

endmodule
