// NVFP4 on the same 64-length PE as hif4_pe (the comparison point of the HiF4 paper): four exact
// 16-element E2M1 group sums, four UE4M3 x UE4M3 scale products and their application, the four
// scaled terms summed exactly and added to the FP32 accumulator with one round-to-nearest-even:
//   D = RN(C + sum over g of S_g * scaleA_g * scaleB_g)
// bit-exact with fp4sim's golden `exact` model on one K=64 mxf4nvf4 instruction (UE4M3, block 16).
// Same throughput, ports and pipeline as hif4_pe (PipeDepth: see there); sfa_i / sfb_i hold four
// UE4M3 codes, scale g in bits 8g+7:8g.
module nvfp4_pe64 #(
  parameter int unsigned PipeDepth = 3
) (
  input  logic         clk_i,
  input  logic         rst_ni,
  input  logic         in_valid_i,
  output logic         in_ready_o,
  input  logic [255:0] a_i,    // 64 E2M1 codes, element k in bits 4k+3:4k
  input  logic [255:0] b_i,
  input  logic [31:0]  sfa_i,  // four UE4M3 scale codes
  input  logic [31:0]  sfb_i,
  input  logic [31:0]  c_i,
  output logic         out_valid_o,
  input  logic         out_ready_i,
  output logic [31:0]  d_o
);

  localparam int unsigned InW  = 512 + 64 + 32;
  localparam int unsigned MidW = 4 * 13 + 8 + 64 + 32;

  logic           s0_valid, s0_ready;
  logic [InW-1:0] s0_data;

  fp4sim_pipe_reg #(
    .Width  (InW),
    .Bypass (PipeDepth < 3)
  ) u_in (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (in_valid_i),
    .ready_o (in_ready_o),
    .data_i  ({a_i, b_i, sfa_i, sfb_i, c_i}),
    .valid_o (s0_valid),
    .ready_i (s0_ready),
    .data_o  (s0_data)
  );

  logic [255:0] a, b;
  logic [31:0]  sfa, sfb, c;
  assign {a, b, sfa, sfb, c} = s0_data;

  logic [4*13-1:0] sums;
  logic [3:0]      all_zero, all_neg;

  for (genvar g = 0; g < 4; g++) begin : g_group
    fp4_dot16 u_dot (
      .a_i        (a[g*64 +: 64]),
      .b_i        (b[g*64 +: 64]),
      .sum_o      (sums[g*13 +: 13]),
      .all_zero_o (all_zero[g]),
      .all_neg_o  (all_neg[g])
    );
  end

  logic            s1_valid, s1_ready;
  logic [MidW-1:0] s1_data;

  fp4sim_pipe_reg #(
    .Width  (MidW),
    .Bypass (PipeDepth < 2)
  ) u_mid (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (s0_valid),
    .ready_o (s0_ready),
    .data_i  ({sums, all_zero, all_neg, sfa, sfb, c}),
    .valid_o (s1_valid),
    .ready_i (s1_ready),
    .data_o  (s1_data)
  );

  logic [31:0] d;

  nvfp4_combine u_comb (
    .sum_i      (s1_data[MidW-1 -: 52]),
    .all_zero_i (s1_data[103:100]),
    .all_neg_i  (s1_data[99:96]),
    .sfa_i      (s1_data[95:64]),
    .sfb_i      (s1_data[63:32]),
    .c_i        (s1_data[31:0]),
    .d_o        (d)
  );

  fp4sim_pipe_chain #(
    .Width (32),
    .Depth ((PipeDepth >= 3) ? PipeDepth - 2 : 1)
  ) u_out (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (s1_valid),
    .ready_o (s1_ready),
    .data_i  (d),
    .valid_o (out_valid_o),
    .ready_i (out_ready_i),
    .data_o  (d_o)
  );

endmodule
