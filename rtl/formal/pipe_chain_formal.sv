// Formal top for fp4sim_pipe_chain (scripts/formal.sh): free inputs, reset in the first cycle.
// The properties live in fp4sim_pipe_chain under `ifdef FORMAL`.
module pipe_chain_formal #(
  parameter int unsigned Width = 4,
  parameter int unsigned Depth = 3
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             valid_i,
  input  logic [Width-1:0] data_i,
  input  logic             ready_i
);
  logic             ready_o, valid_o;
  logic [Width-1:0] data_o;

  initial assume (!rst_ni);

  fp4sim_pipe_chain #(
    .Width (Width),
    .Depth (Depth)
  ) u_dut (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (valid_i),
    .ready_o (ready_o),
    .data_i  (data_i),
    .valid_o (valid_o),
    .ready_i (ready_i),
    .data_o  (data_o)
  );
endmodule
